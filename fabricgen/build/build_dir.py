"""Reading a directory `fabricgen build` wrote, as hostile input until checked.

A build directory is *verified* when it is opened (`BuildFiles`): its manifest.json parses into
`Manifest` (bounded size, typed fields, plain relative file names), every file the manifest lists
exists and matches its sha256, and nothing else is there (no extra file, directory or symbolic
link). Missing, extra and edited files are all named in one error.

The sha256s are a checksum, not a trust boundary: anyone who can edit a file can update the
manifest too. So the files commands read structurally are parsed through models whose strings
obey `fabricgen.basics.trust` (device names, port names, addresses, enums) and whose numbers are in range
(speeds, QoS priorities and DSCP values): `BuildFiles.topology()`, `.cabling()`, `.ip_plan()` and
`.bom()`. A malformed one is an error naming the file, row and field. The reports are also checked
against each other, in time linear in the links: topology.json's nodes and links are unique, every
link ends at two of its nodes and uses a port no other link uses, a fabric switch's host and fabric
links are on its own network; cabling.csv lists each of topology.json's links once, as topology.json
has it (ends, network, kind, speed, cable); ip-plan.csv names only topology.json's devices.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import ipaddress
import json
import os
import re
import threading
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from operator import add, attrgetter, eq
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, StringConstraints, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from fabricgen.basics.csv_format import spreadsheet_value
from fabricgen.basics.errors import FabricgenError, Problem
from fabricgen.basics.models import FileModel
from fabricgen.basics.trust import (
    BuildPath,
    Text,
    check_hostname,
    check_interface_name,
    check_pid,
    check_port_name,
    check_text,
    check_token,
    printable,
    quoted,
)
from fabricgen.basics.units import MAX_SPEED_GBPS
from fabricgen.basics.version import RELEASE, __version__, release_of
from fabricgen.basics.yaml_source import parse_yaml
from fabricgen.build.secrets import SecretName
from fabricgen.catalog.model import Release
from fabricgen.compiler.design.graph import FABRIC_ROLES, SERVER_ROLES, LinkKind, Network, Role

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 32 << 20  # 13,552 files of a 32,768-GPU build list in 1.4 MB
MAX_READ_BYTES = 256 << 20  # the largest file of a 32,768-GPU build (topology.json) is 28 MB
CACHE_BYTES = 128 << 20  # file contents kept from verification, so a command reads each file once
MAX_BUILD_YAML_NODES = 20_000  # a node's netplan.yaml: a few dozen
MAX_PROBLEMS = 50  # per error: past this, a count of the rest
HASH_WORKERS = min(4, os.cpu_count() or 1)  # reading and sha256 release the GIL
REBUILD = "rebuild the directory with `fabricgen build INTENT -o DIR`; change the intent, not the build"


# --- field types -----------------------------------------------------------------------------------

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Asn = Annotated[int, Field(ge=1, le=4_294_967_295)]
Count = Annotated[int, Field(ge=0, le=100_000_000)]


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
_IPV4_INTERFACE = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}/(?:3[0-2]|[12]?[0-9])")


def _check_address(value: str) -> str:
    """An IP address, no prefix length. IPv4 in its canonical form by a regular expression (a
    build's IP plan holds hundreds of thousands), anything else through `ipaddress`."""
    if _IPV4.fullmatch(value):
        return value
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError(f"{quoted(value)} is not an IP address") from None


def _check_interface_address(value: str) -> str:
    """An IP address with its prefix length (10.0.0.1/31)."""
    if _IPV4_INTERFACE.fullmatch(value):
        return value
    try:
        if "/" not in value:
            raise ValueError
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise ValueError(f"{quoted(value)} is not an address with a prefix length (10.0.0.1/31)") from None


def _check_decimal(value: str) -> str:
    """A non-negative number as the reports write it (3, 2.5)."""
    try:
        if not value or len(value) > 12 or float(value) < 0 or not value.replace(".", "", 1).isdigit():
            raise ValueError
    except ValueError:
        raise ValueError(f"{quoted(value)} is not a number") from None
    return value


def _remembered(check: Callable[[str], str], blank: str | None = None) -> AfterValidator:
    """`check` as a validator that skips values it has accepted before: a report repeats each
    device and port name in thousands of rows, and a regular expression per cell is most of the
    time of reading a 200,000-row IP plan. `blank` (e.g. "" for an empty CSV cell) is accepted
    as it is."""
    accepted: set[str] = set() if blank is None else {blank}

    def validate(value: str) -> str:
        if value in accepted:
            return value
        checked = check(value)
        if checked == value and len(accepted) < 1_000_000:  # a set add is atomic under the GIL
            accepted.add(value)
        return checked

    return AfterValidator(validate)


def _blank_or(check: Callable[[str], str]) -> AfterValidator:
    """A CSV cell that is empty or obeys `check`."""
    return _remembered(check, blank="")


def _check_cable_speed(value: str) -> str:
    """cabling.csv's speed: "serial" (a console cable) or Gb/s as the reports write it (400G)."""
    if value == "serial" or (value.endswith("G") and value[:-1].isdigit() and value[:1] != "0" and int(value[:-1]) <= MAX_SPEED_GBPS):
        return value
    raise ValueError(f"{quoted(value)} is not a link speed: 1G to {MAX_SPEED_GBPS}G, or serial")


def _check_qos_summary(value: object) -> object:
    """A switch's `qos` in topology.json (`fabricgen.reports.topology.qos_summary`): plain data whose
    priorities are 0-7 and DSCP values 0-63, as the test plan and verify read them."""
    value = check_plain_data(value)
    if not isinstance(value, dict):
        raise ValueError("a switch's qos is an object: lossless_priority, roce_dscp, cnp_priority, cnp_dscp, ...")
    for key in ("lossless_priority", "cnp_priority"):
        if not _whole_number_in(value.get(key), 0, 7):
            raise ValueError(f"{key} is {_shown(value.get(key))}; expected a priority 0 to 7")
    for key in ("roce_dscp", "cnp_dscp"):
        codes = value.get(key)
        if not isinstance(codes, list) or len(codes) > 64 or not all(_whole_number_in(code, 0, 63) for code in codes):
            raise ValueError(f"{key} is {_shown(codes)}; expected a list of DSCP values 0 to 63")
    return value


def _shown(value: object) -> str:
    """A JSON value for a message: text quoted, anything else as it reads, cut short."""
    return quoted(value) if isinstance(value, str) else printable(value)[:60]


def _whole_number_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _dash_or_pid(value: str) -> str:
    return value if value == "-" else check_pid(value)  # "-": a device outside the build (management core)


def check_plain_data(value: object, depth: int = 0) -> object:
    """Free-form report data (QoS summaries, sizing): numbers, booleans, null, one-line text,
    lists and objects of them with identifier keys, at most 8 levels deep."""
    if depth > 8:
        raise ValueError("nested more than 8 levels deep")
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return check_text(value)
    if isinstance(value, list):
        return [check_plain_data(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {check_token(key): check_plain_data(item, depth + 1) for key, item in value.items()}
    raise ValueError(f"{type(value).__name__} is not plain data")


Name = Annotated[str, _remembered(check_hostname)]  # trust.Hostname, remembered
Port = Annotated[str, _remembered(check_port_name)]  # trust.PortName, remembered
Token = Annotated[str, _remembered(check_token)]
Address = Annotated[str, AfterValidator(_check_address)]
InterfaceAddress = Annotated[str, AfterValidator(_check_interface_address)]
PlainData = Annotated[object, AfterValidator(check_plain_data)]


# --- manifest.json -----------------------------------------------------------------------------------


class IntentRecord(FileModel):
    file: Text
    sha256: Sha256


class Manifest(FileModel):
    """What built the directory and the sha256 of every other file in it."""

    fabricgen_version: Token
    intent: IntentRecord
    catalog: dict[Text, Sha256] = Field({})
    nos_releases: dict[Token, list[Release]] = Field({}, max_length=8)
    files: dict[BuildPath, Sha256]


# --- topology.json -----------------------------------------------------------------------------------


class TopologyNode(FileModel):
    id: Name
    role: Role
    network: Network
    model: Annotated[str, _remembered(_dash_or_pid)]
    index: Count
    nos: Token | None = None
    nos_release: Release | None = None  # the release its config is written for
    asn: Asn | None = None
    loopback: Address | None = None
    rack: Text | None = None
    ru: Count | None = None
    scalable_unit: Count | None = None
    rail: Count | None = None
    rails: Annotated[list[Count], Field(max_length=64)] | None = None  # backend leaves: every rail they serve (rail is the first)
    pod: Count | None = None
    plane: Count | None = None
    core_group: Count | None = None
    qos: Annotated[object, AfterValidator(_check_qos_summary)] | None = None  # switches with a lossless profile
    boot_image: Token | None = None  # the NOS image the intent pins for this switch
    secrets: list[SecretName] = Field([])  # names of the secrets its config refers to


class TopologyLink(FileModel):
    source: Name
    target: Name
    key: Token
    network: Network
    kind: LinkKind
    source_port: Port
    target_port: Port
    speed_gbps: Annotated[int, Field(ge=0, le=MAX_SPEED_GBPS)]  # 0 for a console cable and only for one (checked with the links)
    cable: Annotated[str, _remembered(check_pid)] | None = None
    length_m: Annotated[float, Field(ge=0)] | None = None


MAX_GPUS = 262_144  # the intent's bound on gpus and nodes
MAX_GPUS_PER_NODE = 1024  # the catalog's bound on a node's GPUs


class TopologyGraph(FileModel):
    name: Name
    fabricgen_version: Token
    backend: dict[Token, PlainData] = Field({})  # sizing facts; the numbers commands read are checked by topology_problems
    fabrics: dict[Network, dict[Token, PlainData]] = Field({})
    notes: list[Annotated[str, AfterValidator(lambda v: check_text(v, 2000))]] = Field([])


class Topology(FileModel):
    directed: Literal[False]
    multigraph: Literal[True]
    graph: TopologyGraph
    nodes: list[TopologyNode]
    links: list[TopologyLink]


# --- cabling.csv and ip-plan.csv -------------------------------------------------------------------


class CableRow(FileModel):
    """One row of cabling.csv; cells are kept as the report wrote them (strings)."""

    cable_id: Token
    network: Network
    kind: LinkKind
    a_device: Name
    a_port: Port
    a_optic: Annotated[str, _blank_or(check_pid)]
    a_rack: Annotated[str, _blank_or(check_text)]
    a_ru: Annotated[str, _blank_or(_check_decimal)]
    b_device: Name
    b_port: Port
    b_optic: Annotated[str, _blank_or(check_pid)]
    b_rack: Annotated[str, _blank_or(check_text)]
    b_ru: Annotated[str, _blank_or(_check_decimal)]
    cable: Annotated[str, _blank_or(check_pid)]
    length_m: Annotated[str, _blank_or(_check_decimal)]
    speed: Annotated[str, _remembered(_check_cable_speed)]


AddressKind = Literal["loopback", "vtep", "gateway", "anycast-gateway", "management-gateway", "management", "nic", "host", "fabric", "peer", "uplink"]


class AddressRow(FileModel):
    """One row of ip-plan.csv."""

    network: Network
    device: Name
    interface: Annotated[str, _remembered(check_interface_name)]
    address: InterfaceAddress
    kind: AddressKind
    gateway: Annotated[str, _blank_or(_check_address)]
    peer_device: Annotated[str, _blank_or(check_hostname)]
    peer_interface: Annotated[str, _blank_or(check_port_name)]
    peer_address: Annotated[str, _blank_or(_check_address)]


def _line(value: str) -> str:
    return check_text(value, 2000)  # a report's free text: one printable line


def _count_cell(value: object) -> object:
    """bom.csv's quantity as a number: a cell must be digits, as the report writes a count (at
    most 12); a number is left to the field's own check (a whole number, not a bool)."""
    if not isinstance(value, str):
        return value
    if value.isdigit() and value.isascii() and len(value) <= 12:
        return int(value)
    raise ValueError(f"{quoted(value)} is not a count")


def _length_cell(value: object) -> object:
    """bom.csv's length_m as a number: an empty cell is no length, any other a decimal as the report
    writes it (3, 2.5); a number is left to the field's own check."""
    if not isinstance(value, str):
        return value
    return float(_check_decimal(value)) if value else None


Length = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]  # metres; strict: an int is a float, a bool is not


class BomRow(FileModel):
    """One row of bom.csv: what the BoM report builds and writes (`fabricgen.reports.bom`, one
    column per field, in this order) and what every command reads back (`BuildFiles.bom`). Read
    from the file, a quantity is a cell of digits and a length a decimal or nothing; built in
    Python, they are the numbers themselves."""

    section: Annotated[str, _remembered(_line)]
    pid: Annotated[str, _remembered(check_pid)]
    description: Annotated[str, _blank_or(_line)]
    quantity: Annotated[int, BeforeValidator(_count_cell), Field(strict=True, ge=0, le=999_999_999_999)]
    length_m: Annotated[Length | None, BeforeValidator(_length_cell)] = None
    basis: Annotated[str, _blank_or(_line)] = ""
    alternatives: Annotated[str, _blank_or(_line)] = ""


_TOPOLOGY = TypeAdapter(Topology)
_MANIFEST = TypeAdapter(Manifest)


# --- the directory -----------------------------------------------------------------------------------


def list_build(root: Path, listed: Collection[str]) -> tuple[dict[str, int], list[str]]:
    """Walk `root` against the relative paths `listed`. Returns (each listed path found as a
    regular file -> its size, every entry that is not part of the build: an unlisted file, a
    directory holding no listed file (named once, with a trailing /, not descended into), a
    symbolic link or a special file). Symbolic links are never followed."""
    directories = {path.rsplit("/", 1)[0] for path in listed if "/" in path}
    directories |= {d.rsplit("/", i)[0] for d in list(directories) for i in range(1, d.count("/") + 1)}
    found: dict[str, int] = {}
    foreign: list[str] = []
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                relative = prefix + entry.name
                if entry.is_symlink():
                    foreign.append(f"{relative} (a symbolic link)")
                elif entry.is_dir(follow_symlinks=False):
                    if relative in directories:
                        pending.append((Path(entry.path), relative + "/"))
                    else:
                        foreign.append(relative + "/")
                elif not entry.is_file(follow_symlinks=False):
                    foreign.append(f"{relative} (not a regular file)")
                elif relative in listed:
                    found[relative] = entry.stat(follow_symlinks=False).st_size
                else:
                    foreign.append(relative)
    return found, sorted(foreign)


def read_manifest(root: Path, error: type[FabricgenError], any_version: bool = False) -> Manifest:
    """`root`/manifest.json as a Manifest; `error` (with every problem) when it is missing, too
    large, not JSON, from another fabricgen version (unless `any_version`) or not of the
    manifest's shape."""
    path = root / MANIFEST
    if not root.is_dir():
        what = "is not a directory" if root.exists() else "does not exist"
        raise error(
            Problem(
                f"{what}: a build directory is needed here", file=str(root), hint="give the directory `fabricgen build` wrote (default output/<fabric name>)"
            )
        )
    try:
        with open(path, "rb", opener=_no_follow) as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise error(
            Problem(
                "no manifest.json: not a fabricgen build directory, or an incomplete one",
                hint="run `fabricgen build INTENT -o DIR` and give DIR",
                file=str(root),
            )
        ) from None
    except OSError as exc:
        raise error(Problem(f"cannot read manifest.json: {exc.strerror}", hint=REBUILD, file=str(path))) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise error(Problem(f"manifest.json is larger than {MAX_MANIFEST_BYTES >> 20} MiB", hint=REBUILD, file=str(path)))
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise error(Problem(f"manifest.json is not JSON ({printable(exc)[:200]})", hint=REBUILD, file=str(path))) from None
    version = document.get("fabricgen_version") if isinstance(document, dict) else None
    # commits of one release write the same files: only another release's build is refused
    if isinstance(version, str) and release_of(version) != RELEASE and not any_version:
        raise error(
            Problem(
                f"built by fabricgen {printable(version)[:60]}, this is fabricgen {__version__} (release {RELEASE})",
                hint="rebuild it with this version: fabricgen build INTENT -o DIR",
                file=str(path),
            )
        )
    try:
        return _MANIFEST.validate_python(document)
    except ValidationError as exc:
        raise error(_problems(exc, str(path))) from None


class BuildFiles:
    """A verified build directory (see the module's docstring); raises `error` (the
    FabricgenError of the command reading it: lab, diff, push, analyze) naming every missing,
    extra or edited file.

    Each file is read and hashed once when the directory is opened; the contents of files that
    `keep(path)` selects stay in memory (up to CACHE_BYTES in all) for the command's first read
    of them. A file read again, or not kept, is read and checked against its sha256 again.
    `workspaces` names top-level directories that are not part of the build and are left alone
    (a test plan's results/, which its own scripts write into)."""

    def __init__(self, root: Path, error: type[FabricgenError], keep: Callable[[str], bool] = lambda path: True, workspaces: Collection[str] = ()):
        self.root = root
        self.error = error
        self.manifest = read_manifest(root, error)
        self.hashes: dict[str, str] = dict(self.manifest.files)
        self._cache: dict[str, bytes] = {}
        self._cache_room = CACHE_BYTES
        self._lock = threading.Lock()
        self._parsed: dict[str, object] = {}
        found, foreign = list_build(root, self.hashes.keys() | {MANIFEST})
        found.pop(MANIFEST, None)
        foreign = [entry for entry in foreign if entry.removesuffix("/") not in workspaces or not entry.endswith("/")]
        problems = [Problem("missing: manifest.json lists it", hint=REBUILD, file=str(root / p)) for p in sorted(self.hashes.keys() - found.keys())]
        problems += [
            Problem("not part of the build: manifest.json does not list it", hint="remove it, or rebuild the directory", file=f"{root}/{p}") for p in foreign
        ]
        too_large = sorted(p for p, size in found.items() if size > MAX_READ_BYTES)
        problems += [Problem(f"larger than {MAX_READ_BYTES >> 20} MiB", hint=REBUILD, file=str(root / p)) for p in too_large]
        for p in too_large:
            del found[p]
        problems += self._verify(found, keep)
        if problems:
            raise self.error(_capped(problems))

    def _verify(self, found: dict[str, int], keep: Callable[[str], bool]) -> list[Problem]:
        """Hash every file in `found`: one problem per file whose contents differ from its sha256.
        The reports come first, so they are the files kept when the cache fills."""
        order = sorted(found, key=lambda p: (p.count("/"), p))

        def check(path: str) -> Problem | None:
            try:
                data = self._read(path)
            except OSError as exc:
                return Problem(f"cannot read it: {exc.strerror}", hint=REBUILD, file=str(self.root / path))
            if hashlib.sha256(data).hexdigest() != self.hashes[path]:
                return Problem("differs from what the build wrote (its sha256 in manifest.json)", hint=REBUILD, file=str(self.root / path))
            if keep(path):
                with self._lock:
                    if len(data) <= self._cache_room:
                        self._cache[path] = data
                        self._cache_room -= len(data)
            return None

        with ThreadPoolExecutor(HASH_WORKERS) as pool:
            return [problem for problem in pool.map(check, order) if problem is not None]

    def _read(self, path: str) -> bytes:
        with open(self.root / path, "rb", opener=_no_follow) as handle:
            data = handle.read(MAX_READ_BYTES + 1)
        if len(data) > MAX_READ_BYTES:
            raise OSError(27, "File too large")
        return data

    def has(self, path: str) -> bool:
        return path in self.hashes

    def bytes(self, path: str) -> bytes:
        """The file's contents, as verified: from the cache the first time, else read and checked
        against the manifest again."""
        if path not in self.hashes:
            raise self.error(
                Problem(
                    f"{path} is not in the build",
                    hint="rebuild the directory: it is incomplete or from another fabricgen version",
                    file=str(self.root / MANIFEST),
                )
            )
        with self._lock:
            cached = self._cache.pop(path, None)
        if cached is not None:
            return cached
        try:
            data = self._read(path)
        except OSError as exc:
            raise self.error(Problem(f"cannot read it: {exc.strerror}", hint=REBUILD, file=str(self.root / path))) from None
        if hashlib.sha256(data).hexdigest() != self.hashes[path]:
            raise self.error(Problem("changed since the build directory was opened (its sha256 in manifest.json)", hint=REBUILD, file=str(self.root / path)))
        return data

    def text(self, path: str) -> str:
        try:
            return self.bytes(path).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", hint=REBUILD, file=str(self.root / path))) from None

    def parse(self, path: str, model: object):
        """The JSON or YAML file `path` as `model` (a pydantic model or type); every problem names
        the file and the field."""
        adapter = _adapter(model)
        try:
            if path.endswith((".yaml", ".yml")):
                # the bounded loader of intents and catalogs: no tags, no alias bombs, bounded depth
                doc, problems = parse_yaml(self.bytes(path), str(self.root / path), "build file", max_nodes=MAX_BUILD_YAML_NODES)
                if problems:
                    raise self.error(_capped(problems))
                return adapter.validate_python(doc.data)
            return adapter.validate_json(self.bytes(path))
        except ValidationError as exc:
            raise self.error(_problems(exc, str(self.root / path))) from None

    def topology(self) -> Topology:
        """topology.json, checked, its nodes and links consistent (`topology_problems`); parsed
        once per BuildFiles."""
        if "topology.json" not in self._parsed:
            file = str(self.root / "topology.json")
            try:
                topology = _TOPOLOGY.validate_json(self.bytes("topology.json"))
            except ValidationError as exc:
                raise self.error(_problems(exc, file)) from None
            problems = topology_problems(topology, file)
            if problems:
                raise self.error(_capped(problems))
            self._parsed["topology.json"] = topology
        return self._parsed["topology.json"]  # type: ignore[return-value]

    def cabling(self) -> list[CableRow]:
        """cabling.csv's rows, checked, and each as topology.json has its link (`cabling_problems`)."""
        if "cabling.csv" not in self._parsed:
            file = str(self.root / "cabling.csv")
            rows, lines = _read_rows(self.text("cabling.csv"), CableRow, file, self.error)
            problems = cabling_problems(rows, lines, self.topology(), file, str(self.root / "topology.json"))
            if problems:
                raise self.error(_capped(problems))
            self._parsed["cabling.csv"] = rows
        return self._parsed["cabling.csv"]  # type: ignore[return-value]

    def ip_plan(self) -> list[AddressRow]:
        """ip-plan.csv's rows, checked, naming only topology.json's devices."""
        if "ip-plan.csv" not in self._parsed:
            file = str(self.root / "ip-plan.csv")
            rows, lines = _read_rows(self.text("ip-plan.csv"), AddressRow, file, self.error)
            problems = address_problems(rows, lines, self.topology(), file)
            if problems:
                raise self.error(_capped(problems))
            self._parsed["ip-plan.csv"] = rows
        return self._parsed["ip-plan.csv"]  # type: ignore[return-value]

    def bom(self) -> list[BomRow]:
        """bom.csv's rows, checked."""
        if "bom.csv" not in self._parsed:
            self._parsed["bom.csv"] = read_rows(self.text("bom.csv"), BomRow, str(self.root / "bom.csv"), self.error)
        return self._parsed["bom.csv"]  # type: ignore[return-value]


# --- the reports against each other --------------------------------------------------------------------


# link kind -> the roles its a end (source) and its b end (target) may have: how fabricgen.compiler.design
# cables a fabric (a server to a leaf; a leaf to a spine or a spine to a core; a leaf to the other
# leaf of its spine-free pair; any device's
# management port to an OOB switch and its console to a console server; an OOB switch to the
# management core)
ANY_ROLE = frozenset(Role)
END_ROLES = {
    LinkKind.HOST: (SERVER_ROLES, frozenset({Role.LEAF})),
    LinkKind.FABRIC: (frozenset({Role.LEAF, Role.SPINE}), frozenset({Role.SPINE, Role.CORE})),
    LinkKind.PEER: (frozenset({Role.LEAF}), frozenset({Role.LEAF})),  # a spine-free pair's two switches
    LinkKind.MANAGEMENT: (ANY_ROLE, frozenset({Role.OOB_SWITCH})),
    LinkKind.CONSOLE: (ANY_ROLE, frozenset({Role.CONSOLE_SERVER})),
    LinkKind.UPLINK: (frozenset({Role.OOB_SWITCH}), frozenset({Role.MANAGEMENT_CORE})),
}
FABRIC_TIERS = frozenset({(Role.LEAF, Role.SPINE), (Role.SPINE, Role.CORE)})  # a fabric link's (a, b) roles


def topology_problems(topology: Topology, file: str) -> list[Problem]:
    """What makes topology.json's nodes and links disagree: a node id or link key used twice, a link
    end that is not a node, a port on two links, an end whose role its link's kind does not join
    (`END_ROLES`), a leaf, spine or core whose host or fabric link is on another network than its
    own, a speed of 0 on a link that is not a console cable (or a console cable with a speed), a
    graph.backend number out of range (`_summary_problems`). A node is named once, at its first
    such link.

    Linear in nodes and links, and mostly in C: a link's faults depend only on its facts (kind,
    speed, network, and each end's role and network), of which a build has a few hundred distinct
    ones; the links are walked in Python only to name the place of a fault found."""
    summary = _summary_problems(topology.graph.backend, file)
    nodes, links = topology.nodes, topology.links
    ends_of = {node.id: (node.role, node.network) for node in nodes}
    sources, targets = [link.source for link in links], [link.target for link in links]
    facts = zip(map(attrgetter("kind", "speed_gbps", "network"), links), map(ends_of.get, sources), map(ends_of.get, targets), strict=True)
    # "device\0port" strings, not tuples: the collector counts containers, not strings
    ports = set(map(add, sources, map("\0".__add__, map(attrgetter("source_port"), links))))
    ports.update(map(add, targets, map("\0".__add__, map(attrgetter("target_port"), links))))
    if (
        len(ends_of) == len(nodes)
        and len(ports) == 2 * len(links)
        and len(set(map(attrgetter("key"), links))) == len(links)
        and not any(_link_faults(*link, source, target) for link, source, target in set(facts))
    ):
        return summary
    return summary + _located_topology_problems(topology, file)


def _summary_problems(summary: dict[str, object], file: str) -> list[Problem]:
    """graph.backend (sizing facts, free-form) where commands read numbers from it: gpus and nodes
    (1 to 262,144, a whole number of GPUs per node, at most 1,024) and tiers (1, 2 or 3)."""
    problems = []
    gpus, nodes, tiers = summary.get("gpus"), summary.get("nodes"), summary.get("tiers")
    for key, value in (("gpus", gpus), ("nodes", nodes)):
        if value is not None and not _whole_number_in(value, 1, MAX_GPUS):
            problems.append(Problem(f"{key} is {_shown(value)}; expected a count 1 to {MAX_GPUS:,}", hint=REBUILD, file=file, field=("graph", "backend", key)))
    if not problems and isinstance(gpus, int) and isinstance(nodes, int) and (gpus % nodes or gpus // nodes > MAX_GPUS_PER_NODE):
        message = f"{gpus:,} GPUs over {nodes:,} nodes; expected a whole number of GPUs per node, at most {MAX_GPUS_PER_NODE:,}"
        problems.append(Problem(message, hint=REBUILD, file=file, field=("graph", "backend", "gpus")))
    if tiers is not None and not _whole_number_in(tiers, 1, 3):
        problems.append(Problem(f"tiers is {_shown(tiers)}; expected 1, 2 or 3", hint=REBUILD, file=file, field=("graph", "backend", "tiers")))
    return problems


def _link_faults(
    kind: LinkKind, speed_gbps: int, network: Network, source: tuple[Role, Network] | None, target: tuple[Role, Network] | None
) -> list[tuple[str, str]]:
    """What is wrong with a link of these facts (`source` and `target`: each end's role and
    network, None when it is not a node), as (where, message): where is "source" or "target" (the
    end is not a node), "source role" / "target role" / "source network" / "target network" (the
    node at that end), or "kind" / "speed_gbps" (the link)."""
    faults = []
    for side, end, roles in (("source", source, END_ROLES[kind][0]), ("target", target, END_ROLES[kind][1])):
        if end is None:
            faults.append((side, "is not a node of topology.json"))
        elif end[0] not in roles:
            faults.append((f"{side} role", f"cannot be the {'a' if side == 'source' else 'b'} end of a {kind} link"))
        elif kind in (LinkKind.HOST, LinkKind.FABRIC, LinkKind.PEER) and end[0] in FABRIC_ROLES and end[1] != network:
            faults.append((f"{side} network", f"is on a {network} {kind} link"))
    if kind is LinkKind.FABRIC and source is not None and target is not None and not faults and (source[0], target[0]) not in FABRIC_TIERS:
        faults.append(("kind", f"a fabric link joins a leaf to a spine or a spine to a core, not a {source[0]} to a {target[0]}"))
    if (speed_gbps == 0) != (kind is LinkKind.CONSOLE):
        expected = "0: a console cable has no speed" if kind is LinkKind.CONSOLE else f"1 to {MAX_SPEED_GBPS} Gb/s"
        faults.append(("speed_gbps", f"{speed_gbps} on a {kind} link; expected {expected}"))
    return faults


def _located_topology_problems(topology: Topology, file: str) -> list[Problem]:
    """`topology_problems`, each named by its node or link."""
    problems: list[Problem] = []

    def problem(message: str, *field: str | int) -> None:
        problems.append(Problem(message, hint=REBUILD, file=file, field=field))

    index_of: dict[str, int] = {}
    for index, node in enumerate(topology.nodes):
        first = index_of.setdefault(node.id, index)
        if first != index:
            problem(f"{node.id} is the id of nodes[{first}] too", "nodes", index, "id")
    ends_of = {node.id: (node.role, node.network) for node in topology.nodes}
    keys: dict[str, int] = {}
    ports: dict[tuple[str, str], int] = {}  # (device, port) -> the link it is on
    node_faults: dict[tuple[int, str], str] = {}  # (node index, "role" | "network") -> the first link showing it
    for index, link in enumerate(topology.links):
        first = keys.setdefault(link.key, index)
        if first != index:
            problem(f"{link.key} is the key of links[{first}] too", "links", index, "key")
        for side, device, port in (("source", link.source, link.source_port), ("target", link.target, link.target_port)):
            other = ports.setdefault((device, port), index)
            if other != index:
                problem(f"{device} {port} is on links[{other}] ({topology.links[other].key}) too", "links", index, f"{side}_port")
        for where, message in _link_faults(link.kind, link.speed_gbps, link.network, ends_of.get(link.source), ends_of.get(link.target)):
            side, _, what = where.partition(" ")
            device = link.source if side == "source" else link.target
            if where in ("source", "target"):
                problem(f"{quoted(device)} {message}", "links", index, where)
            elif what:
                node_faults.setdefault((index_of[device], what), f"{link.key} ({message})")
            else:
                problem(message, "links", index, where)
    for (index, what), example in sorted(node_faults.items()):
        node = topology.nodes[index]
        problem(f"{node.id} is a {node.network} {node.role}, but its link {example}", "nodes", index, what)
    return problems


def cabling_problems(rows: list[CableRow], lines: list[int], topology: Topology, file: str, topology_file: str) -> list[Problem]:
    """Where cabling.csv (`rows`, each on its line) and topology.json (already consistent in
    itself) disagree: a cable listed twice or not a link of topology.json, a row whose ends,
    network, kind, speed or cable differ from its link's, a link with no row. Linear in links."""
    links = topology.links
    # The build writes both in link order: then row i is link i, compared field by field in C.
    # Streamed (map, not lists of tuples): each tuple is freed at once, so the collector is not
    # set off walking the build's million objects.
    speeds = {speed: f"{speed}G" if speed else "serial" for speed in {link.speed_gbps for link in links}}
    link_cables = map({None: ""}.get, map(attrgetter("cable"), links), map(attrgetter("cable"), links))  # None -> "", a PID as it is
    if (
        len(rows) == len(links)
        and all(map(eq, map(attrgetter(*_ROW_FIELDS), rows), map(attrgetter(*_LINK_FIELDS), links)))
        and all(map(eq, map(attrgetter("speed"), rows), map(speeds.__getitem__, map(attrgetter("speed_gbps"), links))))
        and all(map(eq, map(attrgetter("cable"), rows), link_cables))
    ):
        return []
    return _located_cabling_problems(rows, lines, topology, file, topology_file)


# a row's fields and its link's, in the same order
_ROW_FIELDS = ("cable_id", "a_device", "a_port", "b_device", "b_port", "network", "kind")
_LINK_FIELDS = ("key", "source", "source_port", "target", "target_port", "network", "kind")


def _located_cabling_problems(rows: list[CableRow], lines: list[int], topology: Topology, file: str, topology_file: str) -> list[Problem]:
    """`cabling_problems`, each named by its row (or by the link no row lists)."""
    problems: list[Problem] = []
    links = {link.key: link for link in topology.links}  # keys are unique: topology_problems
    seen: dict[str, int] = {}
    speeds: dict[int, str] = {0: "serial"}  # speed_gbps -> as cabling.csv writes it
    for row, line in zip(rows, lines, strict=True):
        first = seen.setdefault(row.cable_id, line)
        link = links.get(row.cable_id)
        if first != line:
            problems.append(Problem(f"{row.cable_id} is listed twice (first on line {first})", hint=REBUILD, file=file, line=line, field=("cable_id",)))
            continue
        if link is None:
            problems.append(Problem(f"{row.cable_id} is not a link of topology.json", hint=REBUILD, file=file, line=line, field=("cable_id",)))
            continue
        speed = speeds.get(link.speed_gbps) or speeds.setdefault(link.speed_gbps, f"{link.speed_gbps}G")
        if (row.a_device, row.a_port, row.b_device, row.b_port, row.network, row.kind, row.speed, row.cable) == (
            link.source, link.source_port, link.target, link.target_port, link.network, link.kind, speed, link.cable or "",
        ):  # fmt: skip
            continue
        source, target = f"ends at {link.source} {link.source_port}", f"ends at {link.target} {link.target_port}"
        for field, value, built, says in (
            ("a_device", row.a_device, link.source, source),
            ("a_port", row.a_port, link.source_port, source),
            ("b_device", row.b_device, link.target, target),
            ("b_port", row.b_port, link.target_port, target),
            ("network", row.network, link.network, f"is {link.network}"),
            ("kind", row.kind, link.kind, f"is {link.kind}"),
            ("speed", row.speed, speed, f"runs at {speed}"),
            ("cable", row.cable, link.cable or "", f"is a {link.cable} cable" if link.cable else "names no cable"),
        ):
            if value != built:
                problems.append(Problem(f"{quoted(value)}; topology.json's link {link.key} {says}", hint=REBUILD, file=file, line=line, field=(field,)))
                break
    if len(seen) != len(links):
        for index, link in enumerate(topology.links):
            if link.key not in seen:
                problems.append(Problem(f"{link.key} is not in cabling.csv", hint=REBUILD, file=topology_file, field=("links", index)))
    return problems


def address_problems(rows: list[AddressRow], lines: list[int], topology: Topology, file: str) -> list[Problem]:
    """ip-plan.csv's rows whose device or peer device topology.json does not list."""
    nodes = {node.id for node in topology.nodes}
    named = set(map(attrgetter("device"), rows)) | set(map(attrgetter("peer_device"), rows))
    if not named - nodes - {""}:
        return []
    problems = []
    for row, line in zip(rows, lines, strict=True):
        for field, device in (("device", row.device), ("peer_device", row.peer_device)):
            if device and device not in nodes:
                problems.append(Problem(f"{quoted(device)} is not a node of topology.json", hint=REBUILD, file=file, line=line, field=(field,)))
    return problems


def read_rows(text: str, model: type[BaseModel], file: str, error: type[FabricgenError]) -> list:
    """A CSV report's rows as `model`s, each cell as it was before the report neutralised it for
    spreadsheets (`spreadsheet_value`). Its header must be exactly the model's fields; a problem
    names the file, the row's line and the column."""
    return _read_rows(text, model, file, error)[0]


def _read_rows(text: str, model: type[BaseModel], file: str, error: type[FabricgenError]) -> tuple[list, list[int]]:
    """`read_rows`, and the line each row starts on."""
    columns = list(model.model_fields)
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header != columns:
        shown = printable(",".join(header or []))[:200]
        raise error(Problem(f"the header is {shown!r}; expected {','.join(columns)}", hint=REBUILD, file=file, line=1))
    rows, lines, problems = [], [], []
    neutralised = "'" in text  # a cell written by spreadsheet_safe (a single scan: most reports hold none)
    try:
        start = reader.line_num + 1  # a quoted cell may span lines: a row is named by its first
        for row in reader:
            if len(row) != len(columns):
                problems.append(Problem(f"{len(row)} cells; expected {len(columns)}", hint=REBUILD, file=file, line=start))
            else:
                if neutralised:
                    row = list(map(spreadsheet_value, row))
                rows.append(dict(zip(columns, row, strict=True)))
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        problems.append(Problem(f"not CSV ({exc})", hint=REBUILD, file=file, line=reader.line_num))
    try:
        parsed = _adapter(list[model]).validate_python(rows)  # type: ignore[valid-type]
    except ValidationError as exc:
        problems += [
            Problem(_message(e), hint=REBUILD, file=file, line=lines[e["loc"][0]], field=tuple(e["loc"][1:]))  # type: ignore[index]
            for e in exc.errors(include_url=False, include_input=False)
        ]
    if problems:
        raise error(_capped(problems))
    return parsed, lines


@functools.cache
def _adapter(model: Any) -> TypeAdapter:
    """One TypeAdapter per model: building one takes milliseconds, and a lab reads a netplan per node."""
    return TypeAdapter(model)


def _problems(exc: ValidationError, file: str) -> list[Problem]:
    return _capped([Problem(_message(e), hint=REBUILD, file=file, field=tuple(e["loc"])) for e in exc.errors(include_url=False, include_input=False)])


def _message(error: ErrorDetails) -> str:
    message = error["msg"]
    return message.removeprefix("Value error, ")


def _capped(problems: list[Problem]) -> list[Problem]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [Problem(f"... and {len(problems) - MAX_PROBLEMS} more problems")]


def _no_follow(path: str, flags: int) -> int:
    """open() that refuses a symbolic link where a build file should be."""
    return os.open(path, flags | os.O_NOFOLLOW)
