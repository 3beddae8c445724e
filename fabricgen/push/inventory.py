"""What `fabricgen push` talks to: one `Target` per selected switch of a build.

Everything comes from the build directory (verified against its manifest, so an edited or partial
build is refused; topology.json and the IP plan parsed through checked models): the switch's NOS and role from topology.json, its management address from the IP plan's
management rows, the config to push from configs/, and the BGP neighbors its config declares (what
verification expects to see Established). An optional inventory file supplies or overrides the
address, NAPALM driver and driver options per device; it never holds credentials.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import netaddr
import yaml

from fabricgen.build_dir import BuildFiles
from fabricgen.errors import Problem, PushError, raise_if

# fabricgen's NOS name -> the NAPALM driver that manages it. "sonic" is fabricgen's own
# (napalm_sonic, registered through the napalm_<name> lookup); "nxos" is NAPALM's NX-API driver.
DRIVERS = {"nxos": "nxos", "sonic": "sonic"}
MAX_INVENTORY_BYTES = 1 << 20
INVENTORY_KEYS = {"host", "driver", "optional_args"}
# Credentials come from the environment or a prompt; an inventory that carries them is refused
# rather than silently used, so they never end up in a repository next to the intents.
SECRET_WORDS = ("password", "secret", "passphrase", "token")

_NEIGHBOR = re.compile(r"^\s+neighbor\s+(\S+)")


@dataclass(frozen=True, slots=True)
class Target:
    """One switch to push to."""

    name: str
    role: str
    network: str
    nos: str
    host: str
    driver: str
    config: Path  # configs/<name>.cfg (NX-OS) or configs/<name>/ (SONiC: config_db.json + frr.conf)
    expected_peers: tuple[str, ...]  # BGP neighbor addresses the pushed config declares
    optional_args: dict = field(default_factory=dict, hash=False)


def read_targets(build_dir: Path, selection: str | None = None, inventory_file: Path | None = None) -> list[Target]:
    """The selected switches of BUILD_DIR, in build order (spines before leaves, as topology.json
    lists them). Raises PushError listing every problem before anything is contacted."""
    build = BuildFiles(build_dir, PushError)
    # checked names and enums (fabricgen.build_dir), as plain dicts for the selection below
    switches = [node.model_dump(mode="json", exclude_none=True, exclude={"qos"}) for node in build.topology().nodes if node.nos in DRIVERS]
    chosen = _select(switches, selection, build_dir)
    overrides = _read_inventory(inventory_file, {node["id"] for node in switches}) if inventory_file else {}
    defaults = overrides.pop(None, {})
    management = {row.device: row.address.split("/")[0] for row in build.ip_plan() if row.kind == "management"}

    targets, problems = [], []
    for node in chosen:
        name = node["id"]
        own = overrides.get(name, {})
        # a device's optional_args add to the defaults' ones (a port here, a transport for all)
        settings = {**defaults, **own, "optional_args": {**(defaults.get("optional_args") or {}), **(own.get("optional_args") or {})}}
        host = settings.get("host") or management.get(name)
        if not host:
            problems.append(Problem(
                "no management address: the build has no management plan for it and the inventory does not name it",
                hint="add an oob section to the intent, or give --inventory FILE with `devices: {NAME: {host: ADDRESS}}`",
                device=name,
            ))
            continue
        config, config_text = _config(build, name, node["nos"])
        targets.append(Target(
            name=name,
            role=node["role"],
            network=node["network"],
            nos=node["nos"],
            host=str(host),
            driver=settings.get("driver") or DRIVERS[node["nos"]],
            config=config,
            expected_peers=bgp_neighbors(config_text),
            optional_args=dict(settings.get("optional_args") or {}),
        ))
    raise_if(problems, PushError)
    return targets


def bgp_neighbors(config: str) -> tuple[str, ...]:
    """The neighbor addresses of every `router bgp` block, in NX-OS or FRR syntax: both put
    `neighbor ADDRESS ...` indented under `router bgp ASN`. Peer-group names are not addresses."""
    found: dict[str, None] = {}
    in_bgp = False
    for line in config.splitlines():
        if line.startswith("router bgp"):
            in_bgp = True
        elif line and not line[0].isspace() and line[0] != "!":
            in_bgp = False
        elif in_bgp and (match := _NEIGHBOR.match(line)) and _is_address(match.group(1)):
            found[match.group(1)] = None
    return tuple(found)


def _is_address(text: str) -> bool:
    try:
        netaddr.IPAddress(text)
    except (netaddr.AddrFormatError, ValueError):
        return False
    return True


def _config(build: BuildFiles, name: str, nos: str) -> tuple[Path, str]:
    """The path handed to the driver and the routing config the expected neighbors are read from;
    reading through BuildFiles checks each file against the manifest before it is pushed."""
    if nos == "sonic":
        build.bytes(f"configs/{name}/config_db.json")
        return build.root / "configs" / name, build.text(f"configs/{name}/frr.conf")
    return build.root / "configs" / f"{name}.cfg", build.text(f"configs/{name}.cfg")


def _select(switches: list[dict], selection: str | None, build_dir: Path) -> list[dict]:
    """`--devices`: comma-separated names, shell patterns (be-su01-*), roles (leaf, spine) or
    networks (backend, frontend, oob); the union, in build order. A token that matches nothing is an
    error: a typo must not silently shrink a rollout."""
    if not selection:
        return switches
    tokens = [token.strip() for token in selection.split(",") if token.strip()]
    roles = {node["role"] for node in switches}
    networks = {node["network"] for node in switches}
    chosen: set[str] = set()
    problems = []
    for token in tokens:
        if token in roles:
            matched = {node["id"] for node in switches if node["role"] == token}
        elif token in networks:
            matched = {node["id"] for node in switches if node["network"] == token}
        else:
            matched = {node["id"] for node in switches if fnmatch.fnmatchcase(node["id"], token)}
        if not matched:
            problems.append(Problem(
                f"--devices {token!r} matches no switch in the build",
                hint=f"use a switch name or pattern (e.g. {switches[0]['id'] if switches else 'leaf*'}), a role ({', '.join(sorted(roles))}) or a network ({', '.join(sorted(networks))})",
                file=str(build_dir / "topology.json"),
            ))
        chosen |= matched
    raise_if(problems, PushError)
    return [node for node in switches if node["id"] in chosen]


def _read_inventory(path: Path, known: set[str]) -> dict[str | None, dict]:
    """The inventory file: per-device settings, plus `defaults` under the key None.

        defaults: {optional_args: {transport: https, port: 443}}
        devices:
          be-spine01: {host: 192.0.2.11}
          be-su01-leaf1: {host: 192.0.2.21, driver: sonic, optional_args: {port: 2222}}
    """
    where = str(path)
    try:
        if path.stat().st_size > MAX_INVENTORY_BYTES:
            raise PushError(Problem(f"larger than {MAX_INVENTORY_BYTES >> 10} KiB: not an inventory", file=where))
        document = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise PushError(Problem(f"cannot read the inventory: {exc.strerror}", file=where)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise PushError(Problem(f"not YAML: {getattr(exc, 'problem', exc)}", file=where, line=mark.line + 1 if mark else None)) from None
    if not isinstance(document, dict) or not set(document) <= {"defaults", "devices"}:
        raise PushError(Problem("expected a mapping with `devices` (and optionally `defaults`)", file=where, hint="see `fabricgen push --help`"))

    problems: list[Problem] = []
    settings: dict[str | None, dict] = {None: _settings(document.get("defaults") or {}, ("defaults",), where, problems)}
    devices = document.get("devices") or {}
    if not isinstance(devices, dict):
        problems.append(Problem("must map device names to settings", field=("devices",), file=where))
        devices = {}
    for name, entry in devices.items():
        if name not in known:
            problems.append(Problem(f"{name!r} is not a switch of this build", field=("devices", str(name)), file=where, hint="check the name against the build's configs/ directory"))
            continue
        settings[name] = _settings(entry or {}, ("devices", name), where, problems)
    raise_if(problems, PushError)
    return settings


def _settings(entry, path: tuple, where: str, problems: list[Problem]) -> dict:
    if not isinstance(entry, dict):
        problems.append(Problem("must be a mapping of host, driver, optional_args", field=path, file=where))
        return {}
    for key in entry:
        if key not in INVENTORY_KEYS:
            problems.append(Problem(f"unknown key {key!r}", field=(*path, key), file=where, hint=f"use {', '.join(sorted(INVENTORY_KEYS))}"))
    options = entry.get("optional_args") or {}
    if not isinstance(options, dict):
        problems.append(Problem("must be a mapping", field=(*path, "optional_args"), file=where))
        return {}
    for key in options:
        if any(word in str(key).lower() for word in SECRET_WORDS):
            problems.append(Problem(
                f"{key!r} looks like a credential; the inventory must not hold secrets",
                field=(*path, "optional_args", key), file=where,
                hint="remove it and set FABRICGEN_USERNAME / FABRICGEN_PASSWORD in the environment (or answer the prompt)",
            ))
    host = entry.get("host")
    if host is not None and not _is_address(str(host)) and not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", str(host)):
        problems.append(Problem(f"{host!r} is neither an IP address nor a host name", field=(*path, "host"), file=where))
    return dict(entry)
