"""What the lab builds, read from a build directory and nothing else.

A pure function of the build's files: the cabling plan is the only source of wiring, the IP plan of
addresses, the switches' frr.conf (SONiC) or routing twin (other NOSes) of routing, each GPU
node's netplan.yaml of its addresses and routes, topology.json of roles and the planned ECMP
width. Nothing here touches the system; `fabricgen.lab.runtime` does that.

Everything here ends up in commands run as root (`ip -batch`, namespace names, `vtysh -f`), so every
value is read through a checked model (`fabricgen.build.build_dir`, and the lab's own files below): device
names are hostnames, kernel interface names are derived and sanitised, addresses parse as addresses,
VLANs, VNIs, tables and MTUs are integers in range, and an FRR config is plain configuration lines.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import netaddr
from pydantic import BaseModel, ConfigDict, Field

from fabricgen.basics.errors import LabError, Problem
from fabricgen.basics.models import FileModel
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import Text, has_invisible, printable, quoted
from fabricgen.build.build_dir import Address, AddressRow, BuildFiles, InterfaceAddress, Name, Port, TopologyNode
from fabricgen.compiler.design.graph import Network
from fabricgen.render.twin import HOST_TWIN_DIR, OVERLAY_FILE, TWIN_DIR

ROUTED_KINDS = ("fabric", "peer")  # the cable kinds between two switches that carry a BGP session

IFNAME_LIMIT = 15  # IFNAMSIZ - 1
SWITCH_ROLES = ("leaf", "spine", "core")
MAX_FRR_LINE = 512
# The first words an FRR config of a build may have on its top level, and words no line may start
# with: vtysh runs the file as root, and these leave configuration mode or reach a shell or a file.
FRR_TOP_LEVEL = {
    "!",
    "frr",
    "hostname",
    "log",
    "service",
    "router",
    "bfd",
    "route-map",
    "ip",
    "ipv6",
    "vrf",
    "exit-vrf",
    "exit",
    "interface",
    "bgp",
    "no",
    "agentx",
}
FRR_FORBIDDEN = {"do", "end", "start-shell", "shell", "write", "copy", "configure", "enable", "disable", "quit", "exit-vtysh", "terminal", "run"}


class OverlaySegment(FileModel):
    name: Text
    vlan: Annotated[int, Field(ge=1, le=4094)]
    vni: Annotated[int, Field(ge=1, le=16_777_215)]
    vrf: Text | None = None
    gateway: InterfaceAddress
    members: list[Port]


class OverlayVrf(FileModel):
    name: Text
    l3_vni: Annotated[int, Field(ge=1, le=16_777_215)]
    l3_vlan: Annotated[int, Field(ge=1, le=4094)]


class LeafOverlay(FileModel):
    """lab/overlay.json: what a VTEP leaf needs that neither the IP plan nor frr.conf says."""

    vtep: Address
    anycast_gateway_mac: Annotated[str, Field(pattern=r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")]
    segments: list[OverlaySegment] = Field([])
    vrfs: list[OverlayVrf] = Field([])


Table = Annotated[int, Field(ge=1, le=4_294_967_295)]


class NetplanRoute(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)  # keys the lab does not use are not read

    to: Literal["default"] | InterfaceAddress
    via: Address | None = None
    table: Table | None = None
    metric: Annotated[int, Field(ge=0, le=4_294_967_295)] | None = None
    scope: Literal["link", "host", "global"] | None = None


class NetplanRule(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    source: Annotated[InterfaceAddress | Address, Field(alias="from")]
    table: Table
    priority: Annotated[int, Field(ge=0, le=4_294_967_295)]


class NetplanEthernet(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    addresses: list[InterfaceAddress] = []
    mtu: Annotated[int, Field(ge=68, le=65_535)] | None = None
    routes: list[NetplanRoute] = []
    routing_policy: Annotated[list[NetplanRule], Field(alias="routing-policy")] = []


class NetplanNetwork(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    ethernets: dict[Port, NetplanEthernet] = {}


class Netplan(BaseModel):
    """hosts/<node>/netplan.yaml, the parts the lab applies."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    network: NetplanNetwork


def check_frr_conf(text: str, source: str) -> list[Problem]:
    """Problems with an FRR config the lab would load with `vtysh -f` (as root): a line with a
    control character, an overlong line, a top-level command the build never writes, or a word
    that leaves configuration mode."""
    problems = []
    for number, line in enumerate(text.split("\n"), start=1):
        words = line.split()
        if not words:
            continue
        if has_invisible(line) or len(line) > MAX_FRR_LINE:
            problems.append(Problem("not a plain configuration line (a control character, or longer than 512 characters)", file=source, line=number))
        elif words[0] in FRR_FORBIDDEN or (not line[0].isspace() and words[0] not in FRR_TOP_LEVEL):
            problems.append(Problem(f"{quoted(words[0], 40)} is not a command a fabricgen FRR config has at this place", file=source, line=number))
    return problems


@dataclass(frozen=True, slots=True)
class LabPort:
    device: str
    port: str  # the name the build gives it (Ethernet1/33, Ethernet8, nic1)
    ifname: str  # the kernel's name for it inside the device's namespace
    address: str | None  # interface address with prefix length, from the IP plan


@dataclass(frozen=True, slots=True)
class LabLink:
    cable: str
    kind: str  # host | fabric
    a: LabPort
    b: LabPort

    def end(self, device: str) -> LabPort:
        return self.a if self.a.device == device else self.b

    def other(self, device: str) -> LabPort:
        return self.b if self.a.device == device else self.a


@dataclass(frozen=True, slots=True)
class Segment:
    """A leaf's layer-2 server segment: a bridge with the server ports, the gateway address and,
    under EVPN, a VXLAN device for its VNI."""

    name: str  # the build's SVI name (Vlan1001)
    vlan: int
    gateway: str  # address/prefix on the bridge
    members: tuple[str, ...]  # the build's port names
    vni: int | None = None


@dataclass(frozen=True, slots=True)
class LabSwitch:
    name: str
    role: str  # leaf | spine | core
    frr_source: str  # path inside the build directory
    frr_conf: str
    loopbacks: tuple[str, ...]  # address/32 on lo (Loopback0, the VTEP)
    vtep: str | None
    segments: tuple[Segment, ...]
    l3_vnis: tuple[int, ...]
    bfd_detect_ms: int | None  # multiplier x receive interval, None without BFD
    asn: int | None = None  # topology.json's, else the config's `router bgp`
    allowas_in: int = 0  # how often a route may carry the switch's own ASN (leaf ASNs reused per pod)
    maximum_paths: int = 1  # the config's ECMP cap
    pod: int | None = None  # 3 tiers: leaves' and spines' pod
    plane: int | None = None  # planes: the group of rails the switch serves
    rails: tuple[int, ...] = ()  # a leaf's rails (topology.json `rails`, else its one `rail`)


@dataclass(frozen=True, slots=True)
class Route:
    to: str
    via: str | None
    dev: str  # kernel name
    table: int | None
    metric: int | None
    scope: str | None


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    table: int
    priority: int


@dataclass(frozen=True, slots=True)
class LabNic:
    port: str
    ifname: str
    address: str  # with prefix length
    mtu: int | None
    leaf: str
    leaf_port: str
    rail: int  # the NIC's position among the node's ports on this network (1-based)


@dataclass(frozen=True, slots=True)
class LabNode:
    name: str
    scalable_unit: int | None
    nics: tuple[LabNic, ...]
    routes: tuple[Route, ...]
    rules: tuple[Rule, ...]
    role: str = "gpu-node"  # gpu-node | storage-node | management-node


@dataclass(frozen=True, slots=True)
class Session:
    """A BGP session the build says must exist: one per routed cable between two switches."""

    device: str
    address: str
    peer_device: str
    peer_address: str
    cable: str
    keyed: bool = False  # the device's config gives this session a TCP-MD5 key (`neighbor ... password`)


@dataclass(frozen=True, slots=True)
class Probe:
    """Traffic from one GPU NIC to another and the devices its path must cross."""

    kind: str  # "same rail, other unit" | "same rail, other node" | "other rail" | "other plane"
    source: str
    source_nic: str
    source_address: str
    target: str
    target_nic: str
    target_address: str
    path: tuple[str, ...]  # expected hop roles after the source: leaf, spine, (core, spine,) leaf, node
    unchecked: str = ""  # why the lab cannot carry this probe (the kernel lacks VRF), else ""
    reach: bool = True  # False: no fabric path joins the two leaves (planes, rail-only): must not arrive


@dataclass
class LabPlan:
    build_dir: Path
    lab_id: str
    network: str
    fabric: str
    switches: dict[str, LabSwitch]
    nodes: dict[str, LabNode]
    links: list[LabLink]
    sessions: list[Session]
    host_blocks: dict[str, tuple[str, ...]]  # leaf -> the prefixes every other leaf must route
    uplinks: dict[str, list[LabLink]]  # leaf -> its fabric links (and a spine-free pair's peer links)
    address_owner: dict[str, str]  # address (no prefix) -> device
    probes: list[Probe]
    design: str | None = None  # topology.json's graph.fabrics[network].design, when the build says
    component: dict[str, int] = field(default_factory=dict)  # switch -> its island of routed fabric links

    def namespace(self, device: str) -> str:
        return namespace_name(self.lab_id, device)

    def ports_of(self, device: str) -> list[LabPort]:
        return [link.end(device) for link in self._links_of[device]]

    def links_of(self, device: str) -> list[LabLink]:
        return self._links_of[device]

    def __post_init__(self) -> None:
        self._links_of = links_by_device(self.links)

    def port(self, device: str, name: str) -> tuple[LabLink, LabPort] | None:
        for link in self._links_of.get(device, ()):
            end = link.end(device)
            if end.port == name or end.ifname == name:
                return link, end
        return None


def links_by_device(links: list[LabLink]) -> dict[str, list[LabLink]]:
    index: dict[str, list[LabLink]] = defaultdict(list)
    for link in links:
        index[link.a.device].append(link)
        index[link.b.device].append(link)
    return index


LAB_ID = re.compile(r"[0-9a-f]{6}")  # what lab_id_of gives, the only lab ids there are


def lab_id_of(build_dir: Path) -> str:
    """A short, stable name for the lab of one build directory (its resolved path's hash)."""
    return hashlib.sha256(str(build_dir.resolve()).encode()).hexdigest()[:6]


def namespace_name(lab_id: str, device: str) -> str:
    return f"fg{lab_id}-{device}"


def kernel_names(ports: list[str]) -> dict[str, str]:
    """Build port names -> kernel interface names within one device: kept when the kernel
    accepts them (Ethernet8, nic1), else shortened (Ethernet1/33 -> eth1-33), else numbered."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for port in ports:
        name = port
        if not is_kernel_name(name):
            prefix = re.match(r"[A-Za-z]*", port).group(0)[:3].lower() or "p"  # type: ignore[union-attr]
            name = prefix + "-".join(re.findall(r"\d+", port))
        if not is_kernel_name(name) or name in taken:
            name = f"p{len(names) + 1}"
        names[port] = name
        taken.add(name)
    return names


def is_kernel_name(name: str) -> bool:
    """A name the kernel takes for an interface and `ip -batch` reads as one word."""
    return 0 < len(name) <= IFNAME_LIMIT and re.fullmatch(r"[A-Za-z0-9_.-]+", name) is not None and name not in (".", "..")


def read_plan(build_dir: Path, network: str = "backend") -> LabPlan:
    """The lab of `network` in `build_dir`. Raises LabError naming every file or field that is
    missing, damaged, malformed or from another fabricgen version."""
    return plan_of(BuildFiles(build_dir, LabError), network)


def plan_of(build: BuildFiles, network: str) -> LabPlan:
    """The lab of `network` in a build already opened (verified against its manifest): a problem
    in the build's files is the opener's error class, one of the lab's own is a LabError."""
    build_dir = build.root
    topology = build.topology()
    if network not in topology.graph.fabrics:
        known = ", ".join(sorted(topology.graph.fabrics))
        raise LabError(Problem(f"the build has no {printable(network)} fabric", hint=f"choose one of: {known}", file=str(build_dir / "topology.json")))
    roles = {n.id: n for n in topology.nodes}
    cables = [row for row in build.cabling() if row.network == network and row.kind in ("host", "fabric", "peer")]
    addresses = [row for row in build.ip_plan() if row.network == network]
    by_port = {(row.device, row.interface): row for row in addresses}
    overlay = build.parse(OVERLAY_FILE, dict[Name, LeafOverlay]) if build.has(OVERLAY_FILE) else {}
    unknown = sorted(({row.a_device for row in cables} | {row.b_device for row in cables}) - roles.keys())
    if unknown:
        raise LabError(
            Problem(
                f"cabled devices topology.json does not list: {', '.join(unknown[:5])}",
                hint="rebuild the directory: it is inconsistent",
                file=str(build_dir / "cabling.csv"),
            )
        )

    switch_names = sorted({n for n, node in roles.items() if node.network == network and node.role in SWITCH_ROLES})
    node_names = sorted({r.a_device for r in cables if r.kind == "host"})
    ports_by_device: dict[str, list[str]] = defaultdict(list)
    for row in cables:
        ports_by_device[row.a_device].append(row.a_port)
        ports_by_device[row.b_device].append(row.b_port)
    ifnames = {device: kernel_names(ports) for device, ports in ports_by_device.items()}

    links = []
    for row in cables:
        a = (row.a_device, row.a_port)
        b = (row.b_device, row.b_port)
        links.append(
            LabLink(
                row.cable_id,
                row.kind,
                LabPort(*a, ifnames[a[0]][a[1]], _address(by_port.get(a))),
                LabPort(*b, ifnames[b[0]][b[1]], _address(by_port.get(b))),
            )
        )

    # per-device indexes, so each device below reads only its own rows (linear in the build)
    links_of = links_by_device(links)
    rows_of: dict[str, list[AddressRow]] = defaultdict(list)
    for address_row in addresses:
        rows_of[address_row.device].append(address_row)

    switches = {}
    keyed_peers: dict[str, set[str]] = {}
    problems: list[Problem] = []
    for name in switch_names:
        node = roles[name]
        source = f"configs/{name}/frr.conf" if build.has(f"configs/{name}/frr.conf") else f"{TWIN_DIR}/{name}.conf"
        conf = build.text(source)
        problems += check_frr_conf(conf, str(build_dir / source))
        keyed_peers[name] = _keyed_peers(conf)
        loopbacks = tuple(r.address for r in rows_of[name] if r.kind in ("loopback", "vtep"))
        vtep = next((r.address.split("/")[0] for r in rows_of[name] if r.kind == "vtep"), None)
        leaf_overlay = overlay.get(name)
        switches[name] = LabSwitch(
            name,
            node.role.value,
            source,
            conf,
            loopbacks,
            vtep,
            _segments(name, rows_of[name], leaf_overlay, by_port, links_of[name]),
            tuple(v.l3_vni for v in leaf_overlay.vrfs) if leaf_overlay else (),
            _bfd_detect_ms(conf),
            node.asn or _asn(conf),
            _allowas_in(conf),
            _maximum_paths(conf),
            node.pod,
            node.plane,
            _rails(node),
        )
    if problems:
        raise LabError(problems[:50])

    nodes = {name: _node(build, name, roles[name], links_of[name], ifnames[name]) for name in node_names}
    sessions = []
    for link in links:
        if link.kind in ROUTED_KINDS and link.a.device in switches and link.b.device in switches and link.a.address and link.b.address:
            a_address, b_address = link.a.address.split("/")[0], link.b.address.split("/")[0]
            for near, near_address, far, far_address in ((link.a, a_address, link.b, b_address), (link.b, b_address, link.a, a_address)):
                sessions.append(Session(near.device, near_address, far.device, far_address, link.cable, far_address in keyed_peers[near.device]))

    uplinks = {name: [l for l in links_of[name] if l.kind in ROUTED_KINDS] for name, s in switches.items() if s.role == "leaf"}
    host_blocks: dict[str, tuple[str, ...]] = {}
    for name, switch in switches.items():
        if switch.role != "leaf":
            continue
        if switch.vtep:
            host_blocks[name] = (f"{switch.vtep}/32",)
        else:
            server = [link.end(name).address for link in links_of[name] if link.kind == "host" and link.end(name).address]
            server += [s.gateway for s in switch.segments]
            host_blocks[name] = _announced(switch.frr_conf, [netaddr.IPNetwork(a).cidr for a in server], str(build_dir / switch.frr_source))

    owner = {r.address.split("/")[0]: r.device for r in addresses if r.address}
    design = topology.graph.fabrics[Network(network)].get("design")  # a Network: `network in fabrics` above
    plan = LabPlan(
        build_dir,
        lab_id_of(build_dir),
        network,
        topology.graph.name,
        switches,
        nodes,
        links,
        sessions,
        host_blocks,
        uplinks,
        owner,
        [],
        design if isinstance(design, str) else None,
        _components(switches, links),
    )
    plan.probes = _probes(plan, roles)
    return plan


def _rails(node: TopologyNode) -> tuple[int, ...]:
    """The rails a leaf serves: topology.json's `rails` when the build writes it (leaves with several
    rails), else its one `rail`."""
    if node.rails:
        return tuple(node.rails)
    return (node.rail,) if node.rail is not None else ()


def _components(switches: dict[str, LabSwitch], links: list[LabLink]) -> dict[str, int]:
    """switch -> the number of its island: the switches joined by addressed fabric links (union-find,
    linear). Two leaves in different islands (separate planes, rail-only rails) have no path at all."""
    parent = {name: name for name in switches}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for link in links:
        if link.kind in ROUTED_KINDS and link.a.device in parent and link.b.device in parent and link.a.address and link.b.address:
            parent[root(link.a.device)] = root(link.b.device)
    numbers: dict[str, int] = {}
    return {name: numbers.setdefault(root(name), len(numbers) + 1) for name in sorted(switches, key=natural_key)}


def _address(row: AddressRow | None) -> str | None:
    return row.address if row and row.address and row.kind in ("fabric", "peer", "host", "nic") else None


def _announced(conf: str, server: list[netaddr.IPNetwork], source: str = "frr.conf") -> tuple[str, ...]:
    """The prefixes a leaf's server subnets reach the fabric as: each `aggregate-address P
    summary-only` of its config that covers some of them (a frontend leaf with 28 server /31s
    announces its /26, not the /27, /28 and /29 they merge into), the rest merged. A plain `aggregate-address` (no
    summary-only) is announced beside the subnets it covers. A prefix that is not one is refused,
    naming `source`."""
    blocks, rest = [], list(server)
    for prefix, summary_only in re.findall(r"^\s*aggregate-address (\S+)( summary-only)?\s*$", conf, re.MULTILINE):
        try:
            aggregate = netaddr.IPNetwork(prefix)
        except (netaddr.AddrFormatError, ValueError):
            raise LabError(Problem(f"aggregate-address {quoted(prefix, 50)} is not an IP prefix", file=source)) from None
        covered = [subnet for subnet in rest if subnet in aggregate]
        if covered:
            blocks.append(aggregate.cidr)
            if summary_only:
                rest = [subnet for subnet in rest if subnet not in aggregate]
    return tuple(str(c) for c in sorted({*blocks, *netaddr.cidr_merge(rest)}))


def _bfd_detect_ms(conf: str) -> int | None:
    multiplier = re.search(r"^\s*detect-multiplier (\d+)", conf, re.MULTILINE)
    receive = re.search(r"^\s*receive-interval (\d+)", conf, re.MULTILINE)
    if not (multiplier and receive and re.search(r"^\s*neighbor \S+ bfd", conf, re.MULTILINE)):
        return None
    return int(multiplier.group(1)) * int(receive.group(1))


def _keyed_peers(conf: str) -> set[str]:
    """The neighbour addresses a config gives a TCP-MD5 key: its own `neighbor ADDR password`, or
    its peer-group's (FRR: a member inherits the group's password)."""
    keyed = set(re.findall(r"^\s*neighbor (\S+) password \S", conf, re.MULTILINE))
    members = re.findall(r"^\s*neighbor (\S+) peer-group (\S+)\s*$", conf, re.MULTILINE)
    return {address for address, group in members if group in keyed} | keyed


def _asn(conf: str) -> int | None:
    found = re.search(r"^router bgp (\d+)\s*$", conf, re.MULTILINE)
    return int(found.group(1)) if found else None


def _allowas_in(conf: str) -> int:
    """`neighbor X allowas-in [N]` (N defaults to 3, as in FRR); the build sets it on every fabric
    neighbour of a leaf or on none."""
    counts = [int(n or 3) for n in re.findall(r"^\s*neighbor \S+ allowas-in(?: (\d+))?\s*$", conf, re.MULTILINE)]
    return max(counts, default=0)


def _maximum_paths(conf: str) -> int:
    found = re.search(r"^\s*maximum-paths (\d+)", conf, re.MULTILINE)
    return int(found.group(1)) if found else 1


def _segments(name: str, rows: list[AddressRow], overlay: LeafOverlay | None, by_port: dict, links: list[LabLink]) -> tuple[Segment, ...]:
    """A leaf's server segments from its own IP-plan rows and links: its gateway SVIs (shared NIC
    subnet) or EVPN segments, each with the server ports whose NIC sits in its subnet."""
    svis = [r for r in rows if r.kind in ("gateway", "anycast-gateway")]
    if not svis:
        return ()
    declared = {s.vlan: s for s in (overlay.segments if overlay else ())}
    segments = []
    for svi in svis:
        subnet = netaddr.IPNetwork(svi.address)
        vlan = int(re.sub(r"\D", "", svi.interface)[:4] or 0)
        if vlan in declared:
            segments.append(Segment(svi.interface, vlan, svi.address, tuple(declared[vlan].members), declared[vlan].vni))
            continue
        members = []
        for link in links:
            if link.kind != "host":
                continue
            nic = by_port.get((link.other(name).device, link.other(name).port))
            if nic and nic.address and netaddr.IPAddress(nic.address.split("/")[0]) in subnet:
                members.append(link.end(name).port)
        segments.append(Segment(svi.interface, vlan, svi.address, tuple(members)))
    return tuple(segments)


def _node(build: BuildFiles, name: str, topology_node: TopologyNode, links: list[LabLink], ifnames: dict[str, str]) -> LabNode:
    netplan_path = f"hosts/{name}/netplan.yaml"
    if not build.has(netplan_path) and build.has(f"{HOST_TWIN_DIR}/{name}/netplan.yaml"):
        netplan_path = f"{HOST_TWIN_DIR}/{name}/netplan.yaml"  # an appliance: its lab twin
    ethernets = build.parse(netplan_path, Netplan).network.ethernets
    nics, routes, rules = [], [], []
    wired = sorted((link for link in links if link.kind == "host" and link.a.device == name), key=lambda l: natural_key(l.a.port))
    for rail, link in enumerate(wired, start=1):
        settings = ethernets.get(link.a.port)
        if settings is None or not settings.addresses:
            raise LabError(
                Problem(
                    f"{link.a.port} is cabled ({link.cable}) but has no address",
                    hint="rebuild: the build directory is inconsistent",
                    file=str(build.root / netplan_path),
                )
            )
        dev = ifnames[link.a.port]
        nics.append(LabNic(link.a.port, dev, settings.addresses[0], settings.mtu, link.b.device, link.b.port, rail))
        for r in settings.routes:
            routes.append(Route(r.to, r.via, dev, r.table, r.metric, r.scope))
        for r in settings.routing_policy:
            rules.append(Rule(r.source, r.table, r.priority))
    return LabNode(name, topology_node.scalable_unit, tuple(nics), tuple(routes), tuple(rules), topology_node.role.value)


def _probes(plan: LabPlan, roles: dict[str, TopologyNode]) -> list[Probe]:
    """Two probes per GPU NIC: the same rail on a node of the next scalable unit (the node in the
    same position), and the next rail of its plane on the next node. Each names the devices its
    path crosses: up to a spine and down again within a pod, through a core between pods. With
    planes, one more per node: its first NIC to a NIC of another plane on the next node, which must
    not arrive (planes are separate fabrics). A probe between leaves no fabric link joins (rail-only
    rails, planes) expects no answer either: the lab has no scale-up domain to carry it."""
    nodes = sorted(plan.nodes.values(), key=lambda n: natural_key(n.name))
    order = {node.name: i for i, node in enumerate(nodes)}
    units: dict[int | None, list[LabNode]] = defaultdict(list)
    for node in nodes:
        units[node.scalable_unit].append(node)
    unit_keys = sorted(units, key=lambda k: (k is None, k or 0))
    position = {node.name: i for members in units.values() for i, node in enumerate(members)}
    segment_of: dict[tuple[str, str], Segment | None] = {}  # leaf, address -> the EVPN segment it sits in
    spine_free = not any(switch.role == "spine" for switch in plan.switches.values())
    probes = []
    for node in nodes:
        next_node = nodes[(order[node.name] + 1) % len(nodes)]
        next_unit = units[unit_keys[(unit_keys.index(node.scalable_unit) + 1) % len(unit_keys)]]
        same_rail_peer, same_rail_kind = next_unit[position[node.name] % len(next_unit)], "same rail, other unit"
        if same_rail_peer is node or same_rail_peer.scalable_unit == node.scalable_unit:
            same_rail_peer, same_rail_kind = next_node, "same rail, other node"
        for nic in node.nics:
            targets = [(same_rail_kind, same_rail_peer, nic.rail)]
            # planes are separate fabrics: the other rail is the next one in the NIC's own plane
            plane_rails = [n.rail for n in node.nics if plan.switches[n.leaf].plane == plan.switches[nic.leaf].plane]
            if len(plane_rails) > 1:
                targets.append(("other rail", next_node, plane_rails[(plane_rails.index(nic.rail) + 1) % len(plane_rails)]))
            if nic is node.nics[0]:
                other_plane = [n.rail for n in next_node.nics if plan.switches[n.leaf].plane != plan.switches[nic.leaf].plane]
                if other_plane and next_node is not node:
                    targets.append(("other plane", next_node, other_plane[0]))
            for kind, peer, rail in targets:
                if peer is node or rail > len(peer.nics):
                    continue
                target = peer.nics[rail - 1]
                path, unchecked = _routed_path(plan.switches[nic.leaf], plan.switches[target.leaf], spine_free), ""
                reach = plan.component.get(nic.leaf) == plan.component.get(target.leaf) or nic.leaf == target.leaf
                if not reach:
                    path = ()
                source_segment = _segment(plan, nic, segment_of)
                if source_segment is not None and source_segment.vni is not None:
                    target_segment = _segment(plan, target, segment_of)
                    if target_segment is not None and target_segment.vni == source_segment.vni:
                        path = ("node",)  # one layer-2 segment, bridged over VXLAN: no routed hop
                    else:
                        unchecked = "routed in the tenant VRF (L3 VNI), which the lab does not build"
                probes.append(Probe(kind, node.name, nic.port, _host(nic.address), peer.name, target.port, _host(target.address), path, unchecked, reach))
    return probes


def _routed_path(source: LabSwitch, target: LabSwitch, spine_free: bool = False) -> tuple[str, ...]:
    """The roles a routed packet crosses after its source NIC, from leaf to leaf and then to the
    target node (`spine_free`: no spine tier, two leaves are joined by peer links)."""
    if source.name == target.name:
        return ("leaf", "node")
    if spine_free:  # a spine-free pair: straight over a peer link
        return ("leaf", "leaf", "node")
    if source.pod != target.pod:
        return ("leaf", "spine", "core", "spine", "leaf", "node")
    return ("leaf", "spine", "leaf", "node")


def _segment(plan: LabPlan, nic: LabNic, cache: dict[tuple[str, str], Segment | None]) -> Segment | None:
    key = (nic.leaf, nic.address)
    if key not in cache:
        address = netaddr.IPAddress(_host(nic.address))
        cache[key] = next((s for s in plan.switches[nic.leaf].segments if address in netaddr.IPNetwork(s.gateway)), None)
    return cache[key]


def _host(address: str) -> str:
    return address.split("/")[0]
