"""The fabric graph: devices with ports, and links between ports.

Plain slotted dataclasses, built once by the design stage and then only read. A link's `a` end is
the lower tier (GPU node, or leaf for a leaf-spine link), its `b` end the upper tier; a peer link
(between the two leaves of a spine-free pair) runs from the first leaf to the second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from fabricgen.catalog.model import SwitchModel


class Role(StrEnum):
    GPU_NODE = "gpu-node"
    STORAGE_NODE = "storage-node"
    MANAGEMENT_NODE = "management-node"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"  # super-spine: the third tier, joining the pods of a 3-tier fabric
    OOB_SWITCH = "oob-switch"
    CONSOLE_SERVER = "console-server"
    PDU = "pdu"
    MANAGEMENT_CORE = "management-core"  # outside the build: where OOB uplinks end


SERVER_ROLES = frozenset({Role.GPU_NODE, Role.STORAGE_NODE, Role.MANAGEMENT_NODE})
FABRIC_ROLES = (Role.LEAF, Role.SPINE, Role.CORE)  # the routed tiers of a leaf/spine fabric, bottom up


class Network(StrEnum):
    BACKEND = "backend"
    FRONTEND = "frontend"
    STORAGE = "storage"
    OOB = "oob"


class LinkKind(StrEnum):
    HOST = "host"  # server port to leaf
    FABRIC = "fabric"  # leaf to spine, or spine to core
    PEER = "peer"  # leaf to leaf: the routed links between the two switches of a spine-free pair
    MANAGEMENT = "management"  # copper management port (mgmt0, BMC, PDU...) to an OOB switch
    CONSOLE = "console"  # serial console port to a console server line
    UPLINK = "uplink"  # OOB switch to the management core


@dataclass(slots=True, eq=False)
class Port:
    device: Device
    name: str  # as the device's OS calls it
    cage: int  # front-panel cage number (for nodes: the NIC port number)
    sub: int  # breakout sub-port, 1-based; 0 when the cage is not broken out
    speed_gbps: int
    optic: str | None = None  # transceiver PID in this port's cage, when the switch end needs one
    link: Link | None = None
    front_panel: bool = True  # False for mgmt0 and the console port, which are not data cages

    @property
    def label(self) -> str:
        return f"{self.device.name} {self.name}"

    def __repr__(self) -> str:  # the graph is cyclic: never print neighbours
        return f"<Port {self.label} {self.speed_gbps}G>"


@dataclass(slots=True, eq=False)
class Device:
    name: str
    role: Role
    network: Network
    model: str  # catalog PID
    nos: str | None  # None for servers
    index: int  # 1-based within its role
    su: int | None = None  # scalable unit, 1-based
    rail: int | None = None  # leaves: the rail they serve
    pod: int | None = None  # 3 tiers: leaves and spines, 1-based
    plane: int | None = None  # backend leaves, spines and cores: the plane (group of rails) they belong to
    core_group: int | None = None  # 3 tiers: a spine's position in its pod = the group of cores it links to
    ports: dict[str, Port] = field(default_factory=dict)
    rack: str | None = None  # rack name and lowest rack unit, when the intent has a layout
    ru: int | None = None
    rails: tuple[int, ...] = ()  # backend leaves: every rail they serve (rail is the first); rails_per_leaf > 1 or top-of-rack

    @property
    def is_switch(self) -> bool:
        return self.nos is not None

    def __repr__(self) -> str:
        return f"<Device {self.name} {self.role.value} {self.model}>"


@dataclass(slots=True, eq=False)
class Link:
    id: str  # the cable id printed on the label
    network: Network
    kind: LinkKind
    a: Port
    b: Port
    cable: str | None  # cable PID; None when the optic has the cable built in (DAC/AOC)
    length_m: float | None = None  # standard length ordered, when the intent has a layout

    @property
    def speed_gbps(self) -> int:
        return self.a.speed_gbps

    def other(self, port: Port) -> Port:
        return self.b if port is self.a else self.a

    def __repr__(self) -> str:
        return f"<Link {self.id} {self.a.label} -- {self.b.label}>"


def _cable_ids(prefix: str, count: int) -> Iterator[str]:
    """A series' cable ids: prefix + 1 ... count, zero-padded to at least five digits, formatted
    in C (e.g. "BE-S{:05d}".format over 1, 2, ...)."""
    return map(f"{prefix}{{:0{max(5, len(str(count)))}d}}".format, range(1, count + 1))


@dataclass
class Fabric:
    name: str
    devices: dict[str, Device] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)

    def add_device(self, device: Device) -> Device:
        if device.name in self.devices:
            raise DuplicateDeviceName(device.name)
        self.devices[device.name] = device
        return device

    def connect(self, link: Link) -> Link:
        """Wire both ports to the link and register them on their devices: a device's `ports`
        holds exactly its cabled ports (ports reserved for growth stay out)."""
        a, b = link.a, link.b
        a.link = b.link = link
        a.device.ports[a.name] = a
        b.device.ports[b.name] = b
        self.links.append(link)
        return link

    def connect_numbered(self, prefix: str, network: Network, links: list[tuple[LinkKind, Port, Port, str | None]]) -> None:
        """Connect (kind, a, b, cable PID) in order with cable ids prefix + a zero-padded number
        (at least five digits), the label printed on each cable. Each tier is numbered on its own,
        so growing one tier never renumbers another: links to a leaf `BE-00001`..., leaf to spine
        `BE-S00001`..., spine to core `BE-C00001`..., a collapsed pair's peer links `FE-P00001`...
        (the builders add each tier in an order that
        only appends when the cluster grows)."""
        fabric, peer = LinkKind.FABRIC, LinkKind.PEER  # bound once: a member lookup on an Enum class costs 70 ns
        keys = [_SERIES.get(b.device.role, "") if kind is fabric else "P" if kind is peer else "" for kind, _, b, _ in links]
        series = Counter(keys)
        next_id = {key: _cable_ids(f"{prefix}{key}", count).__next__ for key, count in series.items()}
        connect = self.connect
        for (kind, a, b, cable), key in zip(links, keys, strict=True):
            connect(Link(next_id[key](), network, kind, a, b, cable))

    def connect_series(self, prefix: str, network: Network, kind: LinkKind, links: list[tuple[Port, Port, str | None]]) -> None:
        """Connect (a, b, cable PID) in order, all of one kind and one cable-id series: ids prefix +
        a number from 1, zero-padded to at least five digits, as `connect_numbered` numbers a series
        (a builder that knows its tiers apart skips the per-link series key)."""
        connect = self.connect
        for cable_id, (a, b, cable) in zip(_cable_ids(prefix, len(links)), links, strict=True):
            connect(Link(cable_id, network, kind, a, b, cable))

    def by_role(self, role: Role, network: Network | None = None) -> Iterator[Device]:
        return (d for d in self.devices.values() if d.role is role and (network is None or d.network is network))

    def switches(self) -> Iterator[Device]:
        return (d for d in self.devices.values() if d.is_switch)

    def inventory(self) -> list[tuple[tuple[str, str, str, str], int]]:
        """((network, role, model, NOS or '-'), count) in network order: what the summary and the
        CLI list. Devices outside the build (the management core) are left out."""
        order = {network: i for i, network in enumerate(Network)}
        counts = Counter((d.network, d.role.value, d.model, d.nos or "-") for d in self.devices.values() if d.role is not Role.MANAGEMENT_CORE)
        return [
            ((n.value, role, model, nos), count) for (n, role, model, nos), count in sorted(counts.items(), key=lambda item: (order[item[0][0]], item[0][1:]))
        ]


_SERIES = {Role.SPINE: "S", Role.CORE: "C"}  # a fabric link's cable-id series, by its upper end


class DuplicateDeviceName(Exception):
    """Two devices got the same name (a naming pattern without a distinguishing field)."""


class OutOfPorts(Exception):
    def __init__(self, device: str, speed: int, wanted: int, available: int):
        super().__init__(f"{device} needs {wanted} more {speed}G ports, has {available} left")
        self.device, self.speed, self.wanted, self.available = device, speed, wanted, available


class PortAllocator:
    """Hands out a switch's ports of one speed in front-panel order: cages of that native speed
    first, then sub-ports of faster cages broken out. A cage serves one mode only: once broken out
    at one speed it is not also used natively or at another speed. Names follow the catalog."""

    def __init__(self, device: Device, model: SwitchModel):
        self.device = device
        self.model = model
        self._cage_mode: dict[int, int] = {}  # cage -> speed it was claimed for
        self._cursor: dict[int, int] = {}  # speed -> how far into its order ports were taken

    def _candidates_for(self, speed: int) -> list[tuple[int, int, str]]:
        """(cage, sub, name) in the order ports of `speed` are handed out, made once per model and
        NOS (the model keeps it: thousands of switches of one model take from it)."""
        nos = self.device.nos
        orders = self.model.allocation_orders
        found = orders.get((nos, speed))  # type: ignore[arg-type]
        if found is None:
            places: list[tuple[int, int]] = []
            for group in self.model.port_groups:  # native cages first
                if group.speed == speed:
                    places += [(cage, 0) for cage in range(group.first, group.first + group.count)]
            for group in self.model.port_groups:  # then faster cages broken out
                fanout = group.fanout_at(speed)
                if group.speed == speed or not fanout:
                    continue
                for cage in range(group.first, group.first + group.count):
                    places += [(cage, sub) for sub in range(1, fanout + 1)]
            found = orders[(nos, speed)] = [(cage, sub, self.model.name_of(nos, cage, sub, speed)) for cage, sub in places]  # type: ignore[arg-type,index]
        return found

    def take(self, speed: int, count: int) -> list[Port]:
        candidates = self._candidates_for(speed)
        device, cage_mode = self.device, self._cage_mode
        ports: list[Port] = []
        cursor = self._cursor.get(speed, 0)
        while len(ports) < count and cursor < len(candidates):
            cage, sub, name = candidates[cursor]
            cursor += 1
            if cage_mode.setdefault(cage, speed) != speed:
                continue  # claimed at another speed
            ports.append(Port(device, name, cage, sub, speed))
        self._cursor[speed] = cursor
        if len(ports) < count:
            raise OutOfPorts(self.device.name, speed, count, len(ports))
        return ports
