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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import netaddr

from fabricgen.basics.errors import Problem, PushError, raise_if
from fabricgen.basics.trust import check_host, check_hostname, check_text, check_token, printable
from fabricgen.basics.yaml_source import load_yaml
from fabricgen.build.build_dir import BuildFiles
from fabricgen.nos.interface import OptionKind, PushParts, plugin, plugins


def driver_parts() -> dict[str, PushParts]:
    """NAPALM driver name -> the push parts of the NOS it drives (its PUSH), for every NOS."""
    return {package.PUSH.napalm_driver: package.PUSH for package in plugins().values()}


# fabricgen's NOS name -> the NAPALM driver that manages it (its PUSH part's napalm_driver; the
# exports' inventories name the same drivers)
DRIVERS = {name: package.PUSH.napalm_driver for name, package in plugins().items()}
MAX_INVENTORY_BYTES = 8 << 20  # a host and a few options for each of some 10,000 switches, with room
INVENTORY_KEYS = {"host", "driver", "optional_args", "unavailable"}
MAX_UNAVAILABLE = 500  # characters of `unavailable`: why this inventory cannot reach a switch (a lab's NX-OS twin)
# Credentials come from the environment or a prompt; an inventory that carries them is refused
# rather than silently used, so they never end up in a repository next to the intents.
SECRET_WORDS = ("password", "secret", "passphrase", "token")

_NEIGHBOR = re.compile(r"^\s+neighbor\s+(\S+)")
OptionCheck = Callable[[object], None]  # raises ValueError saying what is wrong with an optional_args value


@dataclass(frozen=True, slots=True)
class Target:
    """One switch to push to."""

    name: str
    role: str
    network: str
    nos: str
    host: str
    driver: str
    config: Path  # its one config file (configs/<name>.cfg), or the folder of its several (SONiC: configs/<name>/)
    expected_peers: tuple[str, ...]  # BGP neighbor addresses the pushed config declares
    optional_args: dict = field(default_factory=dict, hash=False)
    boot_image: str | None = None  # the NOS image the intent pins (topology.json `boot_image`)
    nos_release: str | None = None  # the release its config is written for (topology.json): which rules its secrets meet


def read_targets(build_dir: Path, selection: str | None = None, inventory_file: Path | None = None, staging: Path | None = None) -> list[Target]:
    """The selected switches of BUILD_DIR, in build order (spines before leaves, as topology.json
    lists them). Raises PushError listing every problem before anything is contacted.

    staging: a private directory (the caller's, removed after the push) that receives the verified
    bytes of each config; the drivers then read those, so a build file edited after it was checked
    never reaches a switch. Without it the drivers read the build directory itself."""
    build = BuildFiles(build_dir, PushError)
    # checked names and enums (fabricgen.build.build_dir), as plain dicts for the selection below
    switches = [node.model_dump(mode="json", exclude_none=True, exclude={"qos"}) for node in build.topology().nodes if node.nos in DRIVERS]
    chosen = select_devices(switches, selection, build_dir)
    checks = driver_checks()
    overrides = _read_inventory(inventory_file, {node["id"]: node["nos"] for node in switches}, checks) if inventory_file else {}
    defaults = overrides.pop(None, {})
    management = {row.device: row.address.split("/")[0] for row in build.ip_plan() if row.kind == "management"}

    targets, problems = [], []
    for node in chosen:
        name = node["id"]
        own = overrides.get(name, {})
        if own.get("unavailable"):  # the inventory's word that it cannot reach this switch, and why
            problems.append(Problem(f"this inventory cannot reach it: {own['unavailable']}", hint="leave it out with --devices", device=name))
            continue
        settings = {**defaults, **own}
        host = settings.get("host") or management.get(name)
        if not host:
            problems.append(
                Problem(
                    "no management address: the build has no management plan for it and the inventory does not name it",
                    hint="add an oob section to the intent, or give --inventory FILE with `devices: {NAME: {host: ADDRESS}}`",
                    device=name,
                )
            )
            continue
        config, config_text = _config(build, name, node["nos"], staging)
        driver = settings.get("driver") or DRIVERS[node["nos"]]
        targets.append(
            Target(
                name=name,
                role=node["role"],
                network=node["network"],
                nos=node["nos"],
                host=str(host),
                driver=driver,
                config=config,
                expected_peers=bgp_neighbors(config_text),
                optional_args=driver_options(defaults, own, checks.get(driver, {})),
                boot_image=node.get("boot_image"),
                nos_release=node.get("nos_release"),
            )
        )
    raise_if(problems, PushError)
    return targets


def bgp_neighbors(config: str) -> tuple[str, ...]:
    """The neighbor addresses of every `router bgp` block, in NX-OS, EOS or FRR syntax: each puts
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


def _config(build: BuildFiles, name: str, nos: str, staging: Path | None) -> tuple[Path, str]:
    """The path handed to the driver (the switch's one config file, or the folder of its several:
    its NOS's config_files) and the routing config the expected neighbors are read from (the
    last file: the config itself, or SONiC's frr.conf); reading through BuildFiles checks each
    file against the manifest before it is pushed, and with `staging` the checked bytes are what
    the driver gets."""
    files = plugin(nos).config_files(name)
    contents = {path: build.bytes(path) for path in files}
    root = build.root if staging is None else staging
    if staging is not None:
        for path, data in contents.items():
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    try:
        routing = contents[files[-1]].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PushError(
            Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", hint="rebuild the directory with `fabricgen build`", file=str(build.root / files[-1]))
        ) from None
    return (root / files[0] if len(files) == 1 else (root / files[0]).parent), routing


def select_devices(switches: list[dict], selection: str | None, build_dir: Path) -> list[dict]:
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
            problems.append(
                Problem(
                    f"--devices {token!r} matches no switch in the build",
                    hint=f"use a switch name or pattern (e.g. {switches[0]['id'] if switches else 'leaf*'}), a role ({', '.join(sorted(roles))}) or a network ({', '.join(sorted(networks))})",
                    file=str(build_dir / "topology.json"),
                )
            )
        chosen |= matched
    raise_if(problems, PushError)
    return [node for node in switches if node["id"] in chosen]


def _read_inventory(path: Path, known: dict[str, str], checks: dict[str, dict[str, OptionCheck]]) -> dict[str | None, dict]:
    """The inventory file: per-device settings, plus `defaults` under the key None. `known` maps
    the build's switches to their NOS, `checks` is `driver_checks()`. Every value is checked here
    (see `_settings`); every problem is raised together, with its file, line and field.

        defaults: {optional_args: {transport: https, port: 443}}
        devices:
          be-spine01: {host: 192.0.2.11}
          be-su01-leaf1: {host: 192.0.2.21, driver: sonic, optional_args: {port: 2222}}
    """
    document, problems = load_yaml(path, "inventory", MAX_INVENTORY_BYTES)
    raise_if(problems, PushError)
    where = str(path)

    def problem(message: str, field: tuple = (), hint: str = "") -> Problem:
        return Problem(message, hint=hint, field=field, file=where, line=document.line_of(field))

    data = document.data
    if not isinstance(data, dict) or not set(data) <= {"defaults", "devices"}:
        raise PushError(problem("expected a mapping with `devices` (and optionally `defaults`)", hint="see `fabricgen push --help`"))
    defaults = data.get("defaults") or {}
    default_driver = defaults.get("driver") if isinstance(defaults, dict) and isinstance(defaults.get("driver"), str) else None
    settings: dict[str | None, dict] = {None: _settings(defaults, ("defaults",), None, checks, problem, problems)}
    devices = data.get("devices") or {}
    if not isinstance(devices, dict):
        problems.append(problem("must map device names to settings", ("devices",)))
        devices = {}
    for name, entry in devices.items():
        field = ("devices", name)
        try:
            check_hostname(str(name))
        except ValueError as exc:
            problems.append(problem(f"{exc}; a device name", field))
            continue
        if name not in known:
            problems.append(problem(f"{name!r} is not a switch of this build", field, hint="check the name against the build's configs/ directory"))
            continue
        own_driver = entry.get("driver") if isinstance(entry, dict) and isinstance(entry.get("driver"), str) else None
        driver = own_driver or default_driver or DRIVERS[known[name]]
        settings[name] = _settings(entry or {}, field, driver, checks, problem, problems)
    raise_if(problems, PushError)
    return settings


def _settings(entry, path: tuple, driver, supported: dict[str, dict[str, OptionCheck]], problem, problems: list[Problem]) -> dict:
    """One device's (or the defaults') host, driver and optional_args, each checked: `host` an IP
    address or DNS name, `driver` a supported one, `optional_args` only keys `driver` reads (any
    supported driver's for the defaults), each value of its type, one bounded line of text."""
    if not isinstance(entry, dict):
        problems.append(problem("must be a mapping of host, driver, optional_args", path))
        return {}
    for key in entry:
        if key not in INVENTORY_KEYS:
            problems.append(problem(f"unknown key {key!r}", (*path, key), hint=f"use {', '.join(sorted(INVENTORY_KEYS))}"))
    if "unavailable" in entry:
        why = entry["unavailable"]
        try:
            if not isinstance(why, str) or not why:
                raise ValueError(f"{printable(repr(why))[:40]} is no text")
            check_text(why, MAX_UNAVAILABLE)
        except ValueError as exc:
            problems.append(problem(f"{exc}; `unavailable` is one line saying why the switch cannot be reached", (*path, "unavailable")))
    host = entry.get("host")
    if host is not None:
        try:
            check_host(host if isinstance(host, str) else repr(host))
        except ValueError as exc:
            problems.append(problem(str(exc), (*path, "host")))
    if "driver" in entry and (not isinstance(entry["driver"], str) or entry["driver"] not in supported):
        problems.append(
            problem(
                f"{entry['driver']!r} is not a supported driver",
                (*path, "driver"),
                hint=f"use {', '.join(supported)} (or leave it out: the NOS's own driver)",
            )
        )
        driver = None
    options = entry.get("optional_args") or {}
    if not isinstance(options, dict):
        problems.append(problem("must be a mapping", (*path, "optional_args")))
        return {}
    if len(options) > MAX_OPTIONAL_ARGS:
        problems.append(problem(f"{len(options)} keys; at most {MAX_OPTIONAL_ARGS}", (*path, "optional_args")))
        return {}
    readers = {driver: supported[driver]} if driver in supported else supported
    for key, value in options.items():
        field = (*path, "optional_args", key)
        message, hint = _option_problem(str(key), value, readers)
        if message:
            problems.append(problem(message, field, hint))
    return dict(entry)


def _option_problem(key: str, value, readers: dict[str, dict[str, OptionCheck]]) -> tuple[str, str]:
    """What is wrong with one optional_args entry for drivers `readers` ("" when nothing)."""
    if any(word in key.lower() for word in SECRET_WORDS):
        return (
            f"{key!r} looks like a credential; the inventory must not hold secrets",
            "remove it and set FABRICGEN_USERNAME / FABRICGEN_PASSWORD in the environment (or answer the prompt)",
        )
    if key in HOST_KEY_OPTIONS:
        return (f"{key!r}: host key checking is not set in the inventory", "use fabricgen push --known-hosts FILE, --trust-on-first-use or --insecure")
    checks = [options[key] for options in readers.values() if key in options]
    if not checks:
        known = sorted({name for options in readers.values() for name in options})
        return f"unknown option {key!r} (NAPALM would silently ignore it)", f"use {', '.join(known)}"
    try:
        checks[0](value)
    except ValueError as exc:
        return str(exc), ""
    return "", ""


def _port(value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ValueError(f"{printable(repr(value))[:40]} is not a TCP port (1-65535)")


def _flag(value) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{printable(repr(value))[:40]} is not true or false")


def _path(value) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{printable(repr(value))[:40]} is not a file path")
    check_text(value, MAX_PATH)


def _container(value) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{printable(repr(value))[:40]} is not a container name")
    if value:  # "" means FRR runs on the host
        check_token(value)


def _transport(value) -> None:
    if value not in ("https", "http"):
        raise ValueError(f"{printable(repr(value))[:40]} is not https or http")


def _verify(value) -> None:
    if not isinstance(value, bool):
        _path(value)  # a CA bundle


# How each kind of optional_args value a NOS's PUSH.driver_options names is checked.
OPTION_CHECKS: dict[OptionKind, OptionCheck] = {
    "port": _port,
    "flag": _flag,
    "path": _path,
    "container": _container,
    "transport": _transport,
    "tls_verify": _verify,
}
# NAPALM's MockDriver: answers from fixture files, contacts nothing
MOCK_OPTIONS: dict[str, OptionCheck] = {"path": _path, "fail_on_open": _flag}


def driver_checks() -> dict[str, dict[str, OptionCheck]]:
    """The optional_args each driver reads (its NOS's PUSH.driver_options, then NAPALM's mock), and
    how each value is checked. A key the device's driver does not read is refused, not passed on:
    NAPALM drops unknown keys silently, so a misspelt `ssl_verfy` would otherwise vanish. Host key
    checking is the command's (HOST_KEY_OPTIONS)."""
    checks = {driver: {key: OPTION_CHECKS[kind] for key, kind in parts.driver_options.items()} for driver, parts in driver_parts().items()}
    return {**checks, "mock": MOCK_OPTIONS}


HOST_KEY_OPTIONS = ("host_keys", "known_hosts", "ssh_strict")
MAX_OPTIONAL_ARGS = 32
MAX_PATH = 1024


def driver_options(defaults: dict, own: dict, readable: Mapping[str, OptionCheck]) -> dict:
    """A device's optional_args: the defaults' ones its driver reads (`readable`: a transport for
    all, while `frr_container` means nothing to an NX-OS switch), then its own on top."""
    inherited = {key: value for key, value in (defaults.get("optional_args") or {}).items() if key in readable}
    return {**inherited, **(own.get("optional_args") or {})}
