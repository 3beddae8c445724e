"""The NOS-neutral configuration of each server's data NICs: what a host must do so that every NIC
agrees with the leaf port it is cabled to.

`build_host_configs(compiled, configs)` turns the checked fabric into one `HostConfig` per GPU, storage and
management node with an addressed data port. Renderers (fabricgen.render.hosts) only translate
these into a NIC family's commands, an appliance's settings sheet, or netplan.

Per NIC, from the fabric it is cabled to (backend, frontend or storage):
- its address and gateway from the address plan; MTU: the fabric's `host_mtu`;
- QoS: the effective profile of its leaf (the fabric's `qos` with that leaf's `qos_overrides`),
  so the NIC trusts the same DSCP -> priority map as the leaf, has PFC on the same priorities and
  sends CNPs in the same DSCP and priority. With the fabric's QoS off: no PFC and no marking.
- Routing for several NICs on one host (multi-rail): every NIC gets a routing table of its own
  (`TABLE_BASE` of its network + its number on that network) with its connected subnet and its
  route out through its own gateway, and a rule sending traffic *from* its address to that table.
  RDMA always binds a source address, so each rail's traffic leaves by its own leaf. The main
  table serves unbound traffic (ping, ssh): the backend pool via the first backend NIC only (the
  rails are separate planes; nothing unbound should spread over them); on the frontend a default
  route via every frontend port, metrics 100, 200, ... (the first preferred, the next when its
  leaf is down: servers attach to a leaf pair for this); on a separate storage fabric the storage
  pool the same way. Storage ports converged onto the frontend add no main-table route: the
  default route reaches their pool, and traffic bound to their address uses their own table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from fabricgen.basics.units import network_text
from fabricgen.catalog.model import NodeModel
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import SERVER_ROLES, Device, LinkKind, Network, Port, Role
from fabricgen.compiler.device_config import DeviceConfig, QosConfig

PORT_SETS = ("backend", "frontend", "storage")  # a node model's data port sets, in NIC order
_PORT_SET_ORDER = {kind: i for i, kind in enumerate(PORT_SETS)}
TABLE_BASE = {Network.BACKEND: 100, Network.FRONTEND: 200, Network.STORAGE: 300}
METRIC_STEP = 100
RDMA_ROLES = frozenset({Role.GPU_NODE, Role.STORAGE_NODE})  # management nodes get netplan only
_NETWORK_NAMES = {network: network.value for network in Network}  # an enum's .value is a property: slow per NIC


# Not frozen, though nothing changes one once built: a frozen dataclass sets every field through
# object.__setattr__ (23 per NIC here), twice the cost of a plain one, for 131,072 NICs at 131,072 GPUs.
@dataclass(slots=True)
class HostRoute:
    to: str  # a prefix (CIDR) or "default"
    via: str | None  # None: on the link (the NIC's own subnet)
    table: int | None  # None: the main table
    metric: int | None = None


@dataclass(slots=True)
class HostNic:
    """One data port of a server, laid out to be compared field by field with its leaf port."""

    port: str  # the catalog's name (nic1, fe1, e1a); the OS may call it otherwise
    port_set: str  # the node model's port set it belongs to: backend, frontend or storage
    network: str  # the fabric it is cabled to (converged storage ports: frontend)
    nic: str | None  # NIC model from the catalog
    family: str | None  # connectx, broadcom, pollara, ontap; None: unknown
    switch: str  # the leaf it is cabled to
    switch_port: str
    cable: str
    speed_gbps: int
    address: str  # dotted quad
    prefixlen: int
    gateway: str
    mtu: int
    qos: bool  # the leaf runs lossless QoS on this port
    lossless_priorities: tuple[int, ...]  # PFC on these priorities; () with QoS off
    dscp_to_priority: tuple[tuple[int, int], ...]  # (DSCP, priority) the NIC trusts, like the leaf's map
    rdma_dscp: int | None  # DSCP this NIC marks its RDMA traffic with by default
    rdma_priority: int | None
    cnp_dscp: int | None
    cnp_priority: int | None
    lossless_bandwidth_percent: int | None  # the lossless classes' share after strict priority
    table: int  # its own routing table; the rule `from address` has this priority too
    routes: tuple[HostRoute, ...]

    @property
    def cidr(self) -> str:
        return f"{self.address}/{self.prefixlen}"


@dataclass(frozen=True)
class HostConfig:
    hostname: str
    role: Role
    model: str  # catalog PID
    fabric: str  # the intent's name
    rdma: bool  # runs RDMA: its NICs get QoS settings (GPU and storage nodes)
    appliance: bool  # not Linux (ONTAP): a settings sheet instead of a script and netplan
    nics: tuple[HostNic, ...]


def build_host_configs(c: Compiled, configs: dict[str, DeviceConfig]) -> dict[str, HostConfig]:
    """Every server with an addressed data port, in fabric order; linear in links. Each NIC
    takes the lossless profile of the leaf config it is cabled to (overrides included), so the
    host files and the switch configs come from one source."""
    cabled: dict[str, list[Port]] = {}
    for link in c.fabric.links:
        if link.kind is LinkKind.HOST:
            nic = link.a if link.a.device.role in SERVER_ROLES else link.b
            cabled.setdefault(nic.device.name, []).append(nic)
    port_sets: dict[str, dict[str, str]] = {}  # node model -> port name -> port set
    shared = _Shared()
    hosts = {}
    for name, ports in cabled.items():
        device = c.fabric.devices[name]
        if device.model not in port_sets:
            port_sets[device.model] = _port_sets(c.catalog.nodes[device.model])
        config = _host_config(c, device, ports, port_sets[device.model], configs, shared)
        if config.nics:
            hosts[name] = config
    return hosts


def _port_sets(model: NodeModel) -> dict[str, str]:
    return {ports.port_name(n): kind for kind in PORT_SETS if (ports := getattr(model, kind)) is not None for n in range(1, ports.ports + 1)}


class _NicQos(NamedTuple):
    """HostNic's QoS fields, in its order, as one leaf's profile gives them to its NICs of one port set."""

    qos: bool
    lossless_priorities: tuple[int, ...]
    dscp_to_priority: tuple[tuple[int, int], ...]
    rdma_dscp: int | None
    rdma_priority: int | None
    cnp_dscp: int | None
    cnp_priority: int | None
    lossless_bandwidth_percent: int | None


@dataclass
class _Shared:
    """What the NICs of many hosts have in common, worked out once per build: a leaf's QoS as its
    NICs of one port set take it (every NIC of a leaf asks), a network's way out per port set."""

    qos: dict[tuple[str, str], _NicQos] = field(default_factory=dict)  # (leaf, port set) -> HostNic's QoS fields
    way_out: dict[tuple[Network, str], str] = field(default_factory=dict)  # (network, port set) -> route destination


def _nic_qos(qos: QosConfig | None, kind: str) -> _NicQos:
    """A NIC's QoS fields from its leaf's lossless profile (None: the leaf runs no lossless class)."""
    rdma_dscp, rdma_priority = _rdma_marking(qos, kind) if qos is not None else (None, None)
    return _NicQos(
        qos=qos is not None,
        lossless_priorities=qos.lossless_priorities if qos else (),
        dscp_to_priority=tuple(qos.dscp_to_priority.items()) if qos else (),
        rdma_dscp=rdma_dscp,
        rdma_priority=rdma_priority,
        cnp_dscp=qos.cnp_dscp[0] if qos else None,
        cnp_priority=qos.cnp_priority if qos else None,
        lossless_bandwidth_percent=qos.lossless_bandwidth_percent if qos else None,
    )


def _host_config(c: Compiled, device: Device, ports: list[Port], sets: dict[str, str], configs: dict[str, DeviceConfig], shared: _Shared) -> HostConfig:
    model = c.catalog.nodes[device.model]
    addresses, gateways = c.addresses.interfaces, c.addresses.gateways
    addressed = sorted(
        (p for p in ports if p in addresses and p in gateways),
        key=lambda p: (_PORT_SET_ORDER[sets[p.name]], p.cage, p.sub, p.name),
    )
    numbers: dict[Network, int] = {}
    main_routes: dict[Network, int] = {}  # routes already in the main table, per network
    primary = _main_table_sets({sets[p.name] for p in addressed}, {p.link.network for p in addressed})  # type: ignore[union-attr]
    nics = []
    for port in addressed:
        link = port.link
        assert link is not None
        leaf = link.b if port is link.a else link.a  # link.other(port), without a method call per NIC
        network = link.network
        plan = c.plans[network]
        kind = sets[port.name]
        ports_of = getattr(model, kind)
        address = addresses[port]
        gateway = gateways[port]
        numbers[network] = numbers.get(network, 0) + 1
        table = TABLE_BASE[network] + numbers[network]
        subnet = network_text(address.address, address.prefixlen)
        if (network, kind) not in shared.way_out:
            shared.way_out[network, kind] = "default" if kind == "frontend" else str(plan.host_pool)
        way_out = shared.way_out[network, kind]
        routes = [HostRoute(subnet, None, table), HostRoute(way_out, gateway, table)]
        if kind == primary.get(network):  # main table: backend via its first NIC, others via each
            count = main_routes.get(network, 0)
            if network is not Network.BACKEND or count == 0:
                routes.insert(0, HostRoute(way_out, gateway, None, METRIC_STEP * (count + 1)))
                main_routes[network] = count + 1
        qos_key = (leaf.device.name, kind)
        if qos_key not in shared.qos:
            shared.qos[qos_key] = _nic_qos(configs[leaf.device.name].qos, kind)
        # the fields in their declared order, named in the comments: matching 23 keywords cost
        # 1 us a NIC, 0.13 s over the 131,072 NICs at 131,072 GPUs
        nics.append(
            HostNic(
                port.name,
                kind,  # port_set
                _NETWORK_NAMES[network],
                ports_of.nic,
                ports_of.nic_family,  # family
                leaf.device.name,  # switch
                leaf.name,  # switch_port
                link.id,  # cable
                port.speed_gbps,
                address.address,
                address.prefixlen,
                gateway,
                plan.spec.host_mtu,  # mtu
                *shared.qos[qos_key],  # qos ... lossless_bandwidth_percent
                table,
                tuple(routes),
            )
        )
    families = {nic.family for nic in nics}
    return HostConfig(
        hostname=device.name,
        role=device.role,
        model=device.model,
        fabric=c.intent.name,
        rdma=device.role in RDMA_ROLES,
        appliance=families == {"ontap"},
        nics=tuple(nics),
    )


def _main_table_sets(kinds: set[str], networks: set[Network]) -> dict[Network, str]:
    """The port set whose NICs carry a network's main-table route on this host."""
    primary = {Network.BACKEND: "backend", Network.STORAGE: "storage"}
    if Network.FRONTEND in networks:
        # converged storage ports reach the frontend's pool by its default route; a server with
        # only storage ports there (a storage node) routes the pool through them instead
        primary[Network.FRONTEND] = "frontend" if "frontend" in kinds else "storage"
    return primary


def _rdma_marking(qos: QosConfig, kind: str) -> tuple[int, int]:
    """Storage ports mark their RDMA traffic (NVMe or NFS over RDMA) with the storage class
    where the fabric has one; every other port with the RoCE class (the first DSCP listed)."""
    if kind == "storage" and qos.storage_dscp and qos.storage_priority is not None:
        return qos.storage_dscp[0], qos.storage_priority
    return qos.roce_dscp[0], qos.lossless_priority
