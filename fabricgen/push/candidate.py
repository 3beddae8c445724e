"""What `fabricgen push` hands each driver, and what it refuses before contacting any device.

- Secrets: the build writes `<<secret=NAME>>` where a key goes. `read_secrets` collects the names
  every selected config uses (from the verified staged copies) and loads their values
  (`FABRICGEN_SECRET_<NAME>`, `--secrets FILE`); one missing is a refusal naming the secret, its
  environment variable and the devices that need it, and so is a value the field it goes into
  refuses on that switch's release (fabricgen.build.secrets.SLOTS: an SNMPv3 key with `:` on SONiC). `candidate` fills them in, in memory only:
  the text goes to the driver as `load_*_candidate(config=...)`, never to a file or a command line;
  its form is the NOS's (PUSH.candidate: the config's text, or SONiC's one JSON of config_db and FRR).
- Completeness: `--commit` replaces a switch's whole config, so a config without a way back in
  (management VRF and address, a login, SSH, the boot image) would lock everyone out.
  `check_complete` refuses such a build, naming what each switch lacks (PUSH.replace_must_keep).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from fabricgen.basics.errors import Problem, PushError, raise_if
from fabricgen.build.secrets import Secrets, env_name, load_secrets, names_in, placements, value_problems
from fabricgen.nos.interface import plugin
from fabricgen.push.inventory import Target


def config_files(target: Target) -> dict[str, str]:
    """The target's staged config files as text, by file name: its one file, or each of its NOS's
    config files in its folder."""
    files = plugin(target.nos).config_files(target.name)
    if len(files) == 1:
        return {target.config.name: target.config.read_text()}
    return {name: (target.config / name).read_text() for name in (PurePosixPath(path).name for path in files)}


def read_secrets(targets: list[Target], secrets_file: Path | None = None, environ: Mapping[str, str] = os.environ) -> Secrets:
    """The values of every secret the targets' configs refer to; PushError naming each missing one
    and each value a field it goes into refuses, before any device is contacted."""
    users: dict[str, list[str]] = {}
    slots = []
    for target in targets:
        for file_name, text in config_files(target).items():
            for name in names_in(text):
                users.setdefault(name, []).append(target.name)
            slots += [(p.name, p.slot, target.nos_release, target.name) for p in placements(file_name, text, target.nos)[0]]
    secrets = load_secrets(users, secrets_file, environ)
    problems = value_problems(slots, secrets)
    for name in sorted(set(users) - set(secrets.values)):
        devices = sorted(set(users[name]))
        shown = ", ".join(devices[:3]) + (f" and {len(devices) - 3} more" if len(devices) > 3 else "")
        problems.append(
            Problem(
                f"secret {name!r} has no value; the configs of {shown} use it",
                hint=f"export {env_name(name)}=... or add `{name}: ...` to the secrets file (--secrets FILE, mode 0600)",
                device=devices[0],
            )
        )
    raise_if(problems, PushError)
    return secrets


def candidate(target: Target, secrets: Secrets) -> str:
    """The config to load, secrets filled in (in memory), in the form its driver takes."""
    return plugin(target.nos).PUSH.candidate.load()(config_files(target), secrets)


# --- completeness ------------------------------------------------------------------------------


def check_complete(targets: list[Target]) -> None:
    """PushError, one line per incomplete switch naming what its config lacks for a replace."""
    problems = []
    for target in targets:
        missing = missing_parts(target)
        if missing:
            problems.append(
                Problem(
                    f"its config is not complete enough to replace the running one; missing: {'; '.join(missing)}",
                    device=target.name,
                    hint="add a `management` section (and an oob network) to the intent and rebuild, or push with --merge (adds, removes nothing)",
                )
            )
    raise_if(problems, PushError)


def missing_parts(target: Target) -> list[str]:
    """What the target's config lacks that a replace must keep (its NOS's rules: a way back in)."""
    return plugin(target.nos).PUSH.replace_must_keep.load()(config_files(target), target.boot_image)
