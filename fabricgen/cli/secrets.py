"""`fabricgen secrets`: which secrets a build refers to, and the configs with their values filled in.

`secrets list BUILD_DIR` reads a verified build (fabricgen.build.build_dir.BuildFiles): the secret names
topology.json lists per switch, checked against the placeholders its config files really hold (a
placeholder the topology does not list is an error), what each is used for (read back from the
config line or config_db field), its environment variable, and whether a value is available now.
It never prints a value. Each value available is checked against every field it goes into on
each switch's release (the slots, `fabricgen.build.secrets.slots()`: an SNMPv3 key with `:` or `@` on SONiC, a
TACACS+ key with `#`), an exit 2 naming the secret, the field and the rule.

`secrets render BUILD_DIR --out DIR` is for people who load configs another way than `push`: the
selected switches' configs with every placeholder replaced, in a private directory (0700, files
0600, each written atomically). Every secret must have a value, and fit every field it goes into, before anything is written. The
directory's MARKER lists each file written with its SHA-256: a later render into the same
directory replaces or removes only files whose bytes are still those, and refuses a directory
whose marker fabricgen did not write (a marker without them, naming other paths) or whose files
were changed since.

Every message these commands print goes through `Secrets.mask`, with every value from the
environment and the secrets file: a value that comes back inside an exception is shown as its
placeholder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.table import Table

from fabricgen.basics.errors import FabricgenError, Problem, PushError, SecretsError, raise_if
from fabricgen.basics.trust import printable
from fabricgen.basics.user_paths import INPUT_DIRECTORY, INPUT_FILE, OUTPUT_DIRECTORY
from fabricgen.build.secrets import (
    ENV_PREFIX,
    FILE_ENV,
    SECRET_NAME,
    Secrets,
    Slot,
    env_name,
    load_secrets,
    names_in,
    placements,
    value_problems,
)
from fabricgen.cli.common import EXIT_INPUT, checked, out

if TYPE_CHECKING:
    from fabricgen.build.build_dir import BuildFiles

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="The secrets a build refers to by name (BGP, TACACS+, RADIUS, NTP and SNMPv3 keys, password hashes): list them, or write configs with their values.",
)

EXIT_MISSING = 1
MARKER = ".fabricgen-secrets-render"  # in a directory `secrets render` wrote: the files it holds, with their SHA-256
WARNING = (
    "warning: {out} holds {count} switch config files with secrets in clear text. Keep it private "
    "(the directory is 0700, its files 0600), never commit, copy or share it, and delete it once the configs are loaded."
)

BUILD_DIR_ARG = typer.Argument(..., help="A build directory written by `fabricgen build`.", callback=checked(INPUT_DIRECTORY))
SECRETS_FILE_OPTION = typer.Option(
    None,
    "--secrets",
    metavar="FILE",
    help=f"YAML file of `name: value` lines, mode 0600, yours (default: ${FILE_ENV}). ${ENV_PREFIX}<NAME> variables win over it.",
    callback=checked(INPUT_FILE),
)


# --- what a build refers to ----------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """One secret name of a build."""

    name: str
    switches: tuple[str, ...]  # whose config files hold its placeholder
    uses: tuple[str, ...]  # what those lines use it for (BGP session key, TACACS+ key, ...)
    listed: tuple[str, ...]  # whose topology.json node lists it

    @property
    def env(self) -> str:
        return env_name(self.name)


@dataclass(frozen=True)
class BuildSecrets:
    build: BuildFiles
    configs: dict[str, list[str]]  # switch -> its config files (configs/...), in build order
    switches: list[dict]  # topology nodes with config files: id, role, network
    references: dict[str, Reference]  # by name, sorted
    slots: dict[str, list[tuple[str, Slot, str | None, str]]]  # switch -> (secret, slot, release, switch) per placeholder

    def used(self) -> list[str]:
        """The names some config file holds a placeholder of."""
        return [name for name, reference in self.references.items() if reference.switches]


def config_device(path: str) -> str | None:
    """configs/<dev>.cfg and configs/<dev>/<file> -> dev."""
    parts = path.split("/")
    if parts[0] != "configs" or len(parts) not in (2, 3):
        return None
    return parts[1].rsplit(".", 1)[0] if len(parts) == 2 else parts[1]


def read_build_secrets(build_dir: Path) -> BuildSecrets:
    """Every secret name BUILD_DIR refers to, from topology.json and the placeholders in its
    configs. SecretsError when the build cannot be read, or a config holds a placeholder its
    switch's topology node does not list (the build is not what fabricgen wrote)."""
    from fabricgen.build.build_dir import (  # here: reading a build loads the catalog models
        REBUILD,
        BuildFiles,
    )

    build = BuildFiles(build_dir, SecretsError, keep=lambda path: path.startswith("configs/") or path == "topology.json")
    nodes = {node.id: node for node in build.topology().nodes}
    configs: dict[str, list[str]] = defaultdict(list)
    problems = []
    for path in sorted(build.hashes):
        device = config_device(path)
        if device is None:
            continue
        if device not in nodes:
            problems.append(Problem(f"a config of {device!r}, which topology.json does not list", hint=REBUILD, file=str(build.root / path)))
            continue
        configs[device].append(path)
    used: dict[str, set[str]] = defaultdict(set)
    uses: dict[str, set[str]] = defaultdict(set)
    slots: dict[str, list[tuple[str, Slot, str | None, str]]] = defaultdict(list)
    for device, paths in configs.items():
        listed = set(nodes[device].secrets)
        for path in paths:
            found, stray = placements(path, build.text(path), nodes[device].nos)
            problems += [
                Problem(f"holds a secret placeholder where no secret goes ({where})", hint=REBUILD, file=str(build.root / path), device=device)
                for where in stray
            ]
            for placement in found:
                name, use = placement.name, placement.slot.use
                slots[device].append((name, placement.slot, nodes[device].nos_release, device))
                used[name].add(device)
                uses[name].add(use)
                if name not in listed:
                    problems.append(
                        Problem(
                            f"refers to secret {name!r}, which topology.json does not list for {device}",
                            hint=REBUILD,
                            file=str(build.root / path),
                            device=device,
                        )
                    )
    raise_if(problems, SecretsError)
    order = {node_id: index for index, node_id in enumerate(nodes)}
    listed_by: dict[str, list[str]] = defaultdict(list)
    for node in nodes.values():
        for name in node.secrets:
            listed_by[name].append(node.id)
    references = {
        name: Reference(name, tuple(sorted(used.get(name, ()), key=order.__getitem__)), tuple(sorted(uses.get(name, ()))), tuple(listed_by.get(name, ())))
        for name in sorted(used.keys() | listed_by.keys())
    }
    switches = [{"id": n.id, "role": n.role.value, "network": n.network.value} for n in nodes.values() if n.id in configs]
    return BuildSecrets(build, dict(configs), switches, references, dict(slots))


def missing_problems(names: list[str], secrets: Secrets) -> list[Problem]:
    return [
        Problem(f"secret {name!r} has no value", hint=f"set ${env_name(name)}, or add `{name}: <value>` to the secrets file (--secrets FILE or ${FILE_ENV})")
        for name in names
        if name not in secrets.values
    ]


# --- masking -------------------------------------------------------------------------------------


class Masker:
    """Every value this process may know: the environment's FABRICGEN_SECRET_* variables from the
    start, the secrets file's values once they are read."""

    def __init__(self, environ: Mapping[str, str]):
        known = {}
        for key, value in environ.items():
            if key.startswith(ENV_PREFIX) and value:
                name = key[len(ENV_PREFIX) :].lower().replace("_", "-")
                known[name if SECRET_NAME.fullmatch(name) else "unnamed"] = value
        self.secrets = [Secrets(known)]

    def add(self, secrets: Secrets) -> None:
        self.secrets.append(secrets)

    def __call__(self, text: str) -> str:
        for secrets in reversed(self.secrets):
            text = secrets.mask(text)
        return text


T = TypeVar("T")


def _run(action: Callable[[], T], mask: Masker) -> T:
    """The action, with every error masked and printed as fabricgen prints errors: one problem a
    line, exit 2. An unexpected exception too (its text may hold what a library read)."""
    try:
        return action()
    except FabricgenError as exc:
        sys.stderr.write(mask(exc.report()) + "\n")
        raise typer.Exit(EXIT_INPUT) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise typer.Exit(130) from None
    except Exception as exc:  # noqa: BLE001 - shown masked instead of a traceback that could quote a value
        sys.stderr.write(mask(f"secrets: unexpected error: {type(exc).__name__}: {printable(exc)}") + "\n")
        raise typer.Exit(EXIT_INPUT) from None


# --- secrets list --------------------------------------------------------------------------------


@app.command("list")
def list_command(
    build_dir: Path = BUILD_DIR_ARG,
    secrets_file: Path | None = SECRETS_FILE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Every secret BUILD_DIR's configs refer to: how many switches use it and for what, its
    environment variable, and whether a value is available now (never the value).

    Exit 0 when every secret a config uses has a value, 1 when some have none (named), 2 on bad
    input (not a build, a config with a placeholder topology.json does not list, an unsafe secrets
    file or a value that the field it goes into refuses on that switch's release)."""
    mask = Masker(os.environ)

    def survey() -> tuple[BuildSecrets, Secrets]:
        found = read_build_secrets(build_dir)
        secrets = load_secrets(found.references, secrets_file, os.environ)
        mask.add(secrets)
        raise_if(value_problems((use for uses in found.slots.values() for use in uses), secrets), SecretsError)
        return found, secrets

    found, secrets = _run(survey, mask)
    rows = []
    for reference in found.references.values():
        available = reference.name in secrets.values
        source = ("environment" if reference.env in os.environ else "secrets file") if available else None
        rows.append((reference, available, source))
    missing = [reference.name for reference, available, _ in rows if reference.switches and not available]
    if as_json:
        document = {
            "build": str(build_dir),
            "secrets": [
                {
                    "name": r.name,
                    "env": r.env,
                    "switches": len(r.switches),
                    "uses": list(r.uses),
                    "listed_switches": len(r.listed),
                    "available": available,
                    "source": source,
                }
                for r, available, source in rows
            ],
            "missing": missing,
        }
        sys.stdout.write(mask(json.dumps(document, indent=2)) + "\n")
        raise typer.Exit(EXIT_MISSING if missing else 0)
    header = ("secret", "environment variable", "switches", "used for", "value")
    cells = [
        (r.name, r.env, _switches(r), ", ".join(r.uses) or "no config line (only listed in topology.json)", f"yes ({source})" if available else "no")
        for r, available, source in rows
    ]
    if out.is_terminal:
        table = Table(title=f"secrets of {build_dir}", header_style="bold")
        for column in header:
            table.add_column(column, justify="right" if column == "switches" else "left")
        for row in cells:
            table.add_row(*row)
        out.print(table)
    else:
        widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header) - 1)]
        for row in [header, *cells]:
            sys.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1] + "\n")
    if not rows:
        summary = "the build refers to no secret"
    elif missing:
        summary = f"{len(missing)} of {len(found.used())} secrets have no value: " + ", ".join(f"{name} (${env_name(name)})" for name in missing)
    else:
        summary = f"{len(rows)} secret{'s' if len(rows) != 1 else ''}, {len(found.used())} used by the configs; each of those has a value"
    sys.stdout.write(mask(summary) + "\n")
    raise typer.Exit(EXIT_MISSING if missing else 0)


def _switches(reference: Reference) -> str:
    return f"{len(reference.switches):,}" if reference.switches else f"0 (listed for {len(reference.listed):,})"


# --- secrets render ------------------------------------------------------------------------------


RENDER_OUT_OPTION = typer.Option(
    ...,
    "--out",
    metavar="DIR",
    help="A new or empty directory outside the build (or one an earlier `secrets render` wrote); created 0700.",
    callback=checked(OUTPUT_DIRECTORY),
)


@app.command("render")
def render_command(
    build_dir: Path = BUILD_DIR_ARG,
    destination: Path = RENDER_OUT_OPTION,
    secrets_file: Path | None = SECRETS_FILE_OPTION,
    devices: str | None = typer.Option(
        None,
        "--devices",
        help="Comma-separated switch names, patterns (be-su01-*), roles (leaf, spine) or networks (backend, oob), as for `push`. Default: every switch.",
    ),
) -> None:
    """Write BUILD_DIR's switch configs (configs/: NX-OS .cfg, SONiC config_db.json + frr.conf)
    with every secret placeholder replaced by its value, into DIR: for loading them another way
    than `fabricgen push`.

    The files hold secrets in clear text: DIR is 0700, each file 0600, written atomically. Every
    secret must have a value ($FABRICGEN_SECRET_<NAME> or the secrets file) before anything is
    written. Exit 0 when written, 2 on bad input (nothing written)."""
    mask = Masker(os.environ)

    def render() -> int:
        files = fill_configs(build_dir, devices, secrets_file, os.environ, mask)
        write_private(destination, build_dir, files)
        return len(files)

    count = _run(render, mask)
    sys.stderr.write(WARNING.format(out=printable(destination), count=count) + "\n")
    out.print(f"wrote {count:,} config files to {printable(destination)}", markup=False)


def fill_configs(build_dir: Path, selection: str | None, secrets_file: Path | None, environ: Mapping[str, str], mask: Masker | None = None) -> dict[str, bytes]:
    """The selected switches' config files (build path -> bytes) with every placeholder filled;
    SecretsError naming every secret without a value (and its variable) before any is filled."""
    from fabricgen.push.inventory import (
        select_devices,  # `push --devices`' selection, the same words
    )

    found = read_build_secrets(build_dir)
    try:
        chosen = select_devices(found.switches, selection, build_dir)
    except PushError as exc:
        raise SecretsError(exc.problems) from None
    paths = [path for node in chosen for path in found.configs[node["id"]]]
    texts = {path: found.build.text(path) for path in paths}
    names = sorted(set().union(*(names_in(text) for text in texts.values())))
    secrets = load_secrets(names, secrets_file, environ)
    if mask is not None:
        mask.add(secrets)
    raise_if(missing_problems(names, secrets) + value_problems((use for node in chosen for use in found.slots.get(node["id"], ())), secrets), SecretsError)
    files = {}
    problems = []
    for path, text in texts.items():
        filled = secrets.fill(text, in_json=path.endswith(".json"))
        if path.endswith(".json"):
            try:
                json.loads(filled)
            except ValueError:
                from fabricgen.build.build_dir import REBUILD

                problems.append(Problem("is not JSON once its secrets are filled in", hint=REBUILD, file=str(found.build.root / path)))
        files[path] = filled.encode("utf-8")
    raise_if(problems, SecretsError)
    return files


def write_private(destination: Path, build_dir: Path, files: Mapping[str, bytes]) -> None:
    """`files` (relative path -> bytes) into `destination`, which must be outside the build and
    new, empty or holding only what an earlier `secrets render` wrote there (listed in its
    MARKER file; files of that render not written now are removed: they hold old secrets).
    Directories 0700, files 0600 from their creation, each written to a temporary file and renamed."""
    earlier = _check_destination(destination, build_dir)
    try:
        destination.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(destination, 0o700)
        made = {destination}
        for relative, data in sorted(files.items()):
            target = destination / relative
            for directory in reversed(target.relative_to(destination).parents[:-1]):
                path = destination / directory
                if path not in made:
                    path.mkdir(mode=0o700, exist_ok=True)
                    os.chmod(path, 0o700, follow_symlinks=False)
                    made.add(path)
            _write_file_private(target, data)
        hashes = {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}
        listing = {"written_by": "fabricgen secrets render", "build": str(build_dir.resolve()), "files": hashes}
        _write_file_private(destination / MARKER, (json.dumps(listing, indent=2) + "\n").encode())
        for stale in sorted(earlier - set(files)):
            (destination / stale).unlink(missing_ok=True)
    except OSError as exc:
        raise SecretsError(Problem(f"cannot write {destination}: {exc.strerror or type(exc).__name__}", hint="choose a directory you can write")) from None


def _write_file_private(target: Path, data: bytes) -> None:
    """mkstemp creates the temporary file 0600 (O_EXCL), so the data is never readable by others."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _check_destination(destination: Path, build_dir: Path) -> set[str]:
    """SecretsError unless `destination` may be written; the files an earlier render left there
    (each still holding the bytes it wrote: nothing else is ever replaced or removed)."""
    shown = str(destination)
    target = destination.resolve()
    build = build_dir.resolve()
    if target == build or build in target.parents:
        raise SecretsError(
            Problem(
                f"{shown} is inside the build directory {build_dir}",
                hint="name a directory outside it: a build holds placeholders only, and `diff` and `push` refuse files they did not write",
            )
        )
    if target in build.parents:
        raise SecretsError(Problem(f"{shown} holds the build directory {build_dir}", hint="name a new directory of its own"))
    try:
        info = os.lstat(destination)
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise SecretsError(Problem(f"cannot read {shown}: {exc.strerror}")) from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise SecretsError(Problem(f"{shown} exists and is not a directory (or is a symbolic link)", hint="name a new directory"))
    if info.st_uid != os.geteuid():
        raise SecretsError(Problem(f"{shown} belongs to another user", hint="name a directory of your own"))
    entries = os.listdir(destination)
    if not entries:
        return set()
    listed = _earlier_render(destination)
    if listed is None:
        raise SecretsError(
            Problem(
                f"{shown} is not empty and was not written by `fabricgen secrets render` ({len(entries)} entries)",
                hint="name a new or empty directory; fabricgen replaces only what it wrote there",
            )
        )
    allowed_dirs = {str(parent) for p in listed for parent in Path(p).parents}
    foreign, changed = [], []
    for root, directories, names in os.walk(destination):
        relative_root = Path(root).relative_to(destination)
        for name in directories:
            relative = str(relative_root / name)
            if os.path.islink(Path(root) / name) or relative not in allowed_dirs:
                foreign.append(relative + "/")
        directories[:] = [d for d in directories if str(relative_root / d) in allowed_dirs and not os.path.islink(Path(root) / d)]
        for name in names:
            relative = str(relative_root / name) if str(relative_root) != "." else name
            if relative == MARKER:
                continue
            if relative not in listed:
                foreign.append(relative)
            elif _sha256_of(Path(root) / name) != listed[relative]:
                changed.append(relative)  # not a regular file, or not the bytes the render wrote
    if foreign or changed:
        what = [f"not written by it: {', '.join(printable(f) for f in sorted(foreign)[:10])}"] if foreign else []
        what += [f"changed since it wrote them: {', '.join(printable(f) for f in sorted(changed)[:10])}"] if changed else []
        raise SecretsError(
            Problem(
                f"{shown} holds what `fabricgen secrets render` did not write there ({'; '.join(what)})",
                hint="name a new or empty directory; fabricgen replaces only what it wrote there, byte for byte",
            )
        )
    return set(listed)


def _sha256_of(path: Path) -> str | None:
    """The SHA-256 of a regular file, read without following a link; None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


_RENDERED = re.compile(r"configs/[^/]+(/[^/]+)?")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _earlier_render(destination: Path) -> dict[str, str] | None:
    """The files an earlier render listed in its MARKER, with the SHA-256 of what it wrote; None
    when there is no marker in the form `write_private` writes (a config path as the build names
    it, one level or two under configs/, each with its hash): a marker fabricgen did not write is
    never trusted to name what may be replaced or removed."""
    try:
        fd = os.open(destination / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_size > 16 << 20:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            document = json.loads(handle.read())
    except ValueError:
        return None
    finally:
        os.close(fd)
    if not isinstance(document, dict) or document.get("written_by") != "fabricgen secrets render":
        return None
    files = document.get("files")
    if not isinstance(files, dict):
        return None
    for path, digest in files.items():
        if not (isinstance(path, str) and _RENDERED.fullmatch(path) and config_device(path) and ".." not in path.split("/")):
            return None
        if not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            return None
    return dict(files)
