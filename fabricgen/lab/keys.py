"""The secrets the lab's FRR configs refer to: their values, and the filled configs FRR reads.

A build's frr.conf (SONiC) and routing twin (other NOSes) hold `<<secret=NAME>>` where a BGP key
goes. The lab fills them like `push` does: values from `FABRICGEN_SECRET_<NAME>`, `--secrets FILE`
or `$FABRICGEN_SECRETS_FILE` (`fabricgen.build.secrets.load_secrets`); a name with no value gets a random
one for this lab, the same on every switch (both ends of a session must agree).

Every value the lab uses is kept in one file, mode 0600, in a directory of the lab's state, mode
0700, beside the filled configs (0600) that `vtysh -f` reads: a restarted switch (`lab restore`)
reloads the same keys, and `lab down` removes the directory. Nothing the lab prints carries a value:
messages go through `Secrets.mask`.
"""

from __future__ import annotations

import contextlib
import os
import secrets as random_source
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from fabricgen.basics.errors import LabError, Problem
from fabricgen.build.secrets import SECRET_NAME, Secrets, check_value, load_secrets, names_in, placements, value_problems
from fabricgen.lab.plan import LabPlan, check_frr_conf

KEYS_FILE = "secrets.yaml"
GENERATED_BYTES = 24  # token_urlsafe(24): 32 characters of [A-Za-z0-9_-], 192 random bits


@dataclass(frozen=True)
class LabKeys:
    secrets: Secrets  # every value the lab's configs use
    generated: tuple[str, ...]  # the names the lab made a value up for (sorted)


def secret_names(plan: LabPlan) -> set[str]:
    """Every secret any switch's FRR config refers to."""
    return {name for switch in plan.switches.values() for name in names_in(switch.frr_conf)}


def lab_keys(plan: LabPlan, directory: Path, secrets_file: Path | None = None, environ: Mapping[str, str] = os.environ) -> LabKeys:
    """The values of every secret the lab's configs refer to: the lab's own file in `directory`
    for the names it holds (a lab keeps its keys), else the environment or the secrets file, else
    random. Writes the lab's file. A LabError names a value FRR or the kernel would refuse."""
    names = secret_names(plan)
    values = {name: value for name, value in read_keys(directory).items() if name in names}
    given = load_secrets(names - values.keys(), secrets_file, environ).values  # a SecretsError names the file or variable
    values.update(given)
    generated = tuple(sorted(names - values.keys()))
    values.update({name: random_source.token_urlsafe(GENERATED_BYTES) for name in generated})
    keys = LabKeys(Secrets(values), generated)
    problems = check_keys(plan, keys.secrets)
    if problems:
        raise LabError(problems)
    write_private(directory / KEYS_FILE, yaml.safe_dump(values, default_flow_style=False))
    return keys


def check_keys(plan: LabPlan, secrets: Secrets) -> list[Problem]:
    """Values the configs cannot carry: a value its FRR slot refuses (fabricgen.build.secrets.FRR_SLOTS: a
    TCP-MD5 key over Linux's 80 bytes), or a filled line that is no longer a plain configuration
    line. Messages name secrets, never values."""
    uses = [(p.name, p.slot, None, switch.name) for switch in plan.switches.values() for p in placements("frr.conf", switch.frr_conf)[0]]
    problems = value_problems(uses, secrets)
    for switch in plan.switches.values():
        for problem in check_frr_conf(secrets.fill(switch.frr_conf), switch.frr_source + " (keys filled in)"):
            problems.append(Problem(secrets.mask(problem.message), file=problem.file, line=problem.line, device=switch.name))
    return problems


def read_keys(directory: Path) -> dict[str, str]:
    """The lab's kept values ({} when it has none yet), from a file only root can read."""
    path = directory / KEYS_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise LabError(Problem(f"cannot read the lab's keys: {exc.strerror}", file=str(path))) from None
    with os.fdopen(fd) as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_uid != os.geteuid():
            raise LabError(Problem("the lab's keys file is not a private file of this user", file=str(path), hint="fabricgen lab down, then up again"))
        data = yaml.safe_load(stream.read())
    if not isinstance(data, dict):
        raise LabError(Problem("the lab's keys file is damaged", file=str(path), hint="fabricgen lab down, then up again"))
    problems = []
    for name, value in data.items():
        if not isinstance(name, str) or not isinstance(value, str) or not SECRET_NAME.fullmatch(name):
            problems.append(Problem("the lab's keys file holds an entry that is not a secret name and value", file=str(path)))
        else:
            problems += check_value(name, value, str(path))
    if problems:
        raise LabError(problems[:1])
    return data


def private_directory(path: Path) -> Path:
    """`path` as a directory only this user can enter (0700), created when missing; a symlink or
    a directory of someone else is refused."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise LabError(Problem("not a directory of this user", file=str(path), hint="remove it; the lab makes its own"))
    os.chmod(path, 0o700)  # mkdir's mode went through the umask
    return path


def write_private(path: Path, text: str) -> None:
    """`text` into `path` (mode 0600 from the first byte: created so, never widened), replacing it whole."""
    temporary = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as stream:
        os.fchmod(stream.fileno(), 0o600)
        stream.write(text)
    os.replace(temporary, path)


def write_filled_configs(plan: LabPlan, keys: LabKeys, directory: Path) -> None:
    """Each switch's FRR config with its keys, `<switch>.conf` (0600) in `directory` (0700)."""
    for name, switch in plan.switches.items():
        write_private(directory / f"{name}.conf", keys.secrets.fill(switch.frr_conf))
