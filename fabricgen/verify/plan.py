"""What `fabricgen verify` expects to find on the live fabric, read from the build only.

Everything comes through fabricgen.build.build_dir (verified against manifest.json): cabling.csv gives
every cable with both ends' device, port, rack and RU and its speed; ip-plan.csv the link
addresses, hence each planned BGP session's port and subnet; topology.json the roles and each
switch's lossless priority; the configs, as each NOS's VERIFY part reads them, the MTU of every
port and the text the running config is compared with, and the BGP neighbors each switch
declares (push's own reading). The ECMP widths
a switch should hold towards every other leaf come from the lab's routing model (lab/routing.py:
what eBGP converges to on this build's fabric), so verify and `lab verify` expect the same.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import netaddr

from fabricgen.basics.errors import FabricgenError
from fabricgen.build.build_dir import BuildFiles
from fabricgen.compiler.design.graph import Role
from fabricgen.nos.interface import plugin
from fabricgen.push.inventory import Target

_SPEED = re.compile(r"^(\d+)G$")


@dataclass(frozen=True, slots=True)
class End:
    device: str
    port: str
    rack: str = ""
    ru: str = ""
    optic: str = ""  # the transceiver PID the plan puts in this port ("" for a DAC/AOC or a NIC)

    def __str__(self) -> str:
        return f"{self.device} {self.port}"

    @property
    def place(self) -> str:
        """Rack and RU, as the cabling plan gives them ("" without a layout)."""
        return f"{self.rack} RU{self.ru}" if self.rack and self.ru else self.rack

    def as_dict(self) -> dict:
        return {"device": self.device, "port": self.port, "rack": self.rack, "ru": self.ru}


@dataclass(frozen=True, slots=True)
class Cable:
    id: str
    network: str
    kind: str  # host, fabric, management
    a: End
    b: End
    speed_gbps: int | None

    def other(self, end: tuple[str, str]) -> End:
        return self.b if (self.a.device, self.a.port) == end else self.a

    def end(self, end: tuple[str, str]) -> End:
        return self.a if (self.a.device, self.a.port) == end else self.b


@dataclass(frozen=True, slots=True)
class PlannedSession:
    device: str
    peer: str  # the peer's address
    port: str = ""  # the local port of the link the session runs over ("" for a loopback session)
    subnet: str = ""  # the link's subnet (10.8.0.0/31)
    peer_device: str = ""
    peer_port: str = ""


@dataclass
class Plan:
    """Every expectation `verify` checks, by device."""

    targets: list[Target]
    roles: dict[str, Role]  # every device of the build -> its role
    cables: list[Cable]
    by_end: dict[tuple[str, str], Cable]  # (device, port) -> its planned cable
    sessions: dict[str, dict[str, PlannedSession]]  # device -> peer address -> session
    mtu: dict[tuple[str, str], int]  # (device, port) -> the MTU its config sets
    lossless: dict[str, set[int]]  # device -> its lossless (PFC) priorities
    widths: dict[str, dict[str, int]]  # device -> prefix -> planned ECMP width (planned_widths)
    configs: dict[str, str]  # device -> the build's config (secret placeholders kept)
    notes: list[str] = field(default_factory=list)  # what the plan could not provide

    @property
    def polled(self) -> set[str]:
        return {target.name for target in self.targets}

    def ports_of(self, device: str) -> list[tuple[str, Cable]]:
        """(port, cable) of every planned port of `device`, in cabling order."""
        return self._ports.get(device, [])

    def __post_init__(self) -> None:
        ports: dict[str, list[tuple[str, Cable]]] = defaultdict(list)
        for cable in self.cables:
            for end in (cable.a, cable.b):
                ports[end.device].append((end.port, cable))
        self._ports = dict(ports)


def read_plan(build: BuildFiles, targets: list[Target], error: type[FabricgenError]) -> Plan:
    """The expectations for `targets` (push's reading of the same build directory)."""
    topology = build.topology()
    roles = {node.id: node.role for node in topology.nodes}
    polled = {target.name for target in targets}
    cables = []
    for row in build.cabling():
        if row.a_device not in polled and row.b_device not in polled:
            continue  # nothing of it can be observed
        speed = _SPEED.match(row.speed)
        cables.append(
            Cable(
                row.cable_id,
                row.network,
                row.kind,
                End(row.a_device, row.a_port, row.a_rack, row.a_ru, row.a_optic),
                End(row.b_device, row.b_port, row.b_rack, row.b_ru, row.b_optic),
                int(speed.group(1)) if speed else None,
            )
        )
    by_end = {(end.device, end.port): cable for cable in cables for end in (cable.a, cable.b)}

    links: dict[tuple[str, str], tuple[str, str, str, str]] = {}  # (device, peer address) -> (port, subnet, peer device, peer port)
    for address_row in build.ip_plan():
        if address_row.device in polled and address_row.peer_address:
            links[(address_row.device, address_row.peer_address)] = (
                address_row.interface,
                str(netaddr.IPNetwork(address_row.address).cidr),
                address_row.peer_device,
                address_row.peer_interface,
            )
    sessions: dict[str, dict[str, PlannedSession]] = {}
    for target in targets:
        sessions[target.name] = {peer: PlannedSession(target.name, peer, *links.get((target.name, peer), ("", "", "", ""))) for peer in target.expected_peers}

    configs, mtu = {}, {}
    for target in targets:
        package = plugin(target.nos)
        files = {PurePosixPath(path).name: build.text(path) for path in package.config_files(target.name)}
        configs[target.name] = package.VERIFY.running_config.load()(files)
        mtu.update({(target.name, port): value for port, value in package.VERIFY.port_mtus.load()(files).items()})

    lossless = {}
    for node in topology.nodes:
        priority = (node.qos or {}).get("lossless_priority") if isinstance(node.qos, dict) else None
        if node.id in polled and isinstance(priority, int):
            lossless[node.id] = {priority}

    return Plan(targets, roles, cables, by_end, sessions, mtu, lossless, {}, configs)


def planned_widths(build: BuildFiles, polled: set[str], notes: list[str]) -> dict[str, dict[str, int]]:
    """switch -> prefix -> next hops, for the prefixes every other leaf of the backend announces,
    as the lab's routing model converges them with every link up. It models every leaf of the
    fabric, so `verify_fabric` asks for it only when a device reported its table."""
    from fabricgen.basics.errors import LabError
    from fabricgen.lab.plan import read_plan as read_lab_plan
    from fabricgen.lab.routing import ecmp_widths

    if "backend" not in build.topology().graph.fabrics:
        return {}
    try:
        lab = read_lab_plan(build.root, "backend")
    except LabError as exc:
        notes.append(f"no planned ECMP widths: the build's backend routing could not be modelled ({exc.problems[0].message})")
        return {}
    widths: dict[str, dict[str, int]] = {}
    for name, by_origin in ecmp_widths(lab, set(), set()).items():
        if name in polled:
            widths[name] = {prefix: width for origin, width in by_origin.items() for prefix in lab.host_blocks.get(origin, ())}
    return widths
