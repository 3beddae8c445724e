"""The NOS-neutral configuration of each switch: what it must do, not how a NOS spells it.

`build_device_configs(compiled)` turns the checked fabric into one `DeviceConfig` per switch.
Renderers (fabricgen.render) only translate these into NX-OS or SONiC syntax.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

from fabricgen.catalog.model import SwitchModel
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.evpn import EvpnPlan
from fabricgen.compiler.design.graph import Device, LinkKind, Network, Port, Role
from fabricgen.compiler.qos import (
    PAUSE_POLICY_ABOVE_M,
    FabricThresholds,
    LosslessBuffer,
    PausePolicy,
    cable_length_bucket,
    effective_qos,
    ingress_pause_policy,
    lossless_headroom,
)
from fabricgen.intent.management import Management
from fabricgen.intent.model import Bfd, EcnThresholds, LoadBalancing, PfcWatchdog


# Not frozen, though nothing changes one once built: a frozen dataclass sets every field through
# object.__setattr__, twice the cost of a plain one, and there are 655,360 ports at 131,072 GPUs.
@dataclass(slots=True)
class InterfaceConfig:
    name: str
    description: str
    kind: str  # "host" (to a GPU NIC) or "fabric" (to a switch)
    speed_gbps: int
    cage: int
    sub: int  # breakout sub-port, 0 if none
    mtu: int
    address: str | None  # CIDR for a routed port
    access_vlan: int | None  # host port in a VLAN (subnet addressing)
    lossless: bool  # PFC on the lossless priorities, watchdog, ECN
    bfd: bool
    cable_length_m: float | None = None  # the cabling plan's standard length; None without a layout


@dataclass(frozen=True, slots=True)
class Breakout:
    cage: int
    fanout: int
    speed_gbps: int
    port_name: str  # the cage's name unbroken, as the NOS calls it (SONiC keys BREAKOUT_CFG by it)


@dataclass(slots=True)  # not frozen, like InterfaceConfig: one per fabric port
class BgpNeighbor:
    address: str
    remote_asn: int
    description: str
    group: str  # peer group / template name: LEAVES, SPINES or CORES, the tier of the peers


@dataclass(frozen=True, slots=True)
class BgpGroup:
    """The sessions to one tier of peers, and how they are secured."""

    name: str  # LEAVES, SPINES or CORES
    tier: str  # the links' tier: "leaf-spine" or "spine-core"
    password: str | None  # secret name of the session key (TCP-MD5, or TCP-AO with tcp_ao)
    maximum_prefix: int  # the most IPv4 prefixes the plan lets one peer send, plus the margin


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """`permit prefix` (exactly), or `permit prefix le 32` (it and everything inside) with `le`."""

    prefix: str
    le: int | None = None


@dataclass(frozen=True)
class BgpPolicy:
    """RFC 8212: what every eBGP session accepts and announces, nothing implicit.

    accept: the network's own pools (loopbacks, VTEPs, NIC or server addresses), so a peer cannot
    inject a default route or anything outside the fabric. announce: a leaf only what it
    originates (no transit between its spines); a spine or core everything it accepts."""

    accept: tuple[PrefixRule, ...]
    announce: tuple[PrefixRule, ...]


@dataclass(frozen=True)
class BgpConfig:
    asn: int
    router_id: str
    groups: tuple[BgpGroup, ...]
    neighbors: tuple[BgpNeighbor, ...]
    networks: tuple[str, ...]  # announced as is (the loopback)
    redistribute: tuple[str, ...]  # connected subnets inside these prefixes are announced
    aggregates: tuple[str, ...]  # announced instead of their more-specifics (summary-only)
    maximum_paths: int
    bfd: bool
    policy: BgpPolicy
    allowas_in: int = 0  # accept routes carrying our own ASN this often (leaf ASNs reused per pod)
    gtsm: bool = False  # TTL security: every session is one hop
    tcp_ao: bool = False  # the group keys are TCP-AO keys, not TCP-MD5
    maximum_prefix_restart_min: int | None = None  # None: over the maximum only warns

    def secret_names(self) -> set[str]:
        return {group.password for group in self.groups if group.password}


@dataclass(frozen=True)
class Vlan:
    id: int
    name: str
    gateway: str  # CIDR of the leaf's address in it
    members: tuple[str, ...]


@dataclass(frozen=True)
class QosConfig:
    """One switch's effective lossless profile (the fabric's `qos` with the switch's override).

    Besides what the renderers need, it holds what a hop-by-hop consistency check compares with
    the neighbour's: `dscp_to_priority`, `lossless_priorities`, `cnp_priority`, and ECN and PFC
    trigger per port speed."""

    lossless_priority: int  # RoCE data
    roce_dscp: tuple[int, ...]
    cnp_priority: int
    cnp_dscp: tuple[int, ...]
    lossless_bandwidth_percent: int
    ecn: dict[int, EcnThresholds]  # per port speed in use on this switch
    main_speed_gbps: int  # the speed most ports run at (NX-OS system-wide queuing policy)
    pfc_watchdog: PfcWatchdog
    buffers: dict[str, LosslessBuffer]  # per port name: headroom for its speed and (bucketed) cable
    pfc_trigger_kbytes: dict[int, int]  # per port speed in use: lossless ingress occupancy that sends PAUSE
    storage_priority: int | None = None  # a second lossless class (e.g. NVMe over RoCE), if any
    storage_dscp: tuple[int, ...] = ()
    storage_bandwidth_percent: int = 0  # 0 without a storage class
    # per port speed in use: where ecn / pfc_trigger_kbytes came from (the intent, the catalog
    # entry's source, or fabricgen's generic default)
    ecn_source: dict[int, str] = field(default_factory=dict)
    trigger_source: dict[int, str] = field(default_factory=dict)
    # per port name: the explicit ingress pause thresholds the port gets (NX-OS writes them as an
    # input queuing policy): ports whose cable exceeds 100 m, or every port with pause_thresholds: always
    pause_policies: dict[str, PausePolicy] = field(default_factory=dict)
    mac_phy_delay_published: bool = False  # whether the headroom includes the ASIC's MAC/PHY delay

    # cached: every NIC of the leaf and every config check asks (a frozen dataclass's cached_property
    # is set once in the instance dict; dscp_to_priority's dict is shared, read it, never change it)
    @cached_property
    def lossless_priorities(self) -> tuple[int, ...]:
        """Every PFC priority, ascending (as PORT_QOS_MAP and DCBX list them)."""
        return tuple(sorted({self.lossless_priority} | ({self.storage_priority} if self.storage_priority is not None else set())))

    @cached_property
    def dscp_to_priority(self) -> dict[int, int]:
        """Every DSCP this switch classifies, to its priority (traffic class, queue, PFC priority);
        a DSCP not listed goes to priority 0."""
        mapping = dict.fromkeys(self.roce_dscp, self.lossless_priority)
        if self.storage_priority is not None:
            mapping.update(dict.fromkeys(self.storage_dscp, self.storage_priority))
        mapping.update(dict.fromkeys(self.cnp_dscp, self.cnp_priority))
        return dict(sorted(mapping.items()))

    @property
    def default_bandwidth_percent(self) -> int:
        """What queue 0 (everything unclassified) keeps after the lossless classes' shares."""
        return 100 - self.lossless_bandwidth_percent - self.storage_bandwidth_percent


@dataclass(frozen=True)
class EvpnSegmentConfig:
    """An L2 VNI on a leaf: its VLAN, the tenant VRF its anycast gateway sits in, its members."""

    name: str
    vlan: int
    vni: int
    vrf: str
    gateway: str  # anycast gateway CIDR, the same on every leaf of the segment
    route_target: str  # imported and exported
    members: tuple[str, ...]  # access ports


@dataclass(frozen=True)
class EvpnVrfConfig:
    """A tenant VRF: its L3 VNI (symmetric IRB) rides on a VLAN of its own."""

    name: str
    l3_vni: int
    l3_vlan: int
    route_target: str


@dataclass(frozen=True)
class EvpnConfig:
    """VXLAN EVPN on one switch. Leaves are VTEPs; spines only pass EVPN routes on, keeping every
    route-target and the originating VTEP as next hop."""

    vtep: bool
    vtep_address: str | None  # /32 on loopback1 (leaves)
    anycast_gateway_mac: str  # colon-separated
    segments: tuple[EvpnSegmentConfig, ...] = ()
    vrfs: tuple[EvpnVrfConfig, ...] = ()
    host_mtu: int = 9000  # what the segments carry; fabric links need 50 bytes more


@dataclass(frozen=True)
class ManagementConfig:
    """The out-of-band port in the management VRF: what `push` connects to."""

    port: str  # mgmt0 (NX-OS), eth0 (SONiC)
    vrf: str
    address: str  # CIDR
    gateway: str


@dataclass(frozen=True)
class StaticRoute:
    prefix: str
    next_hop: str


@dataclass(frozen=True)
class DeviceConfig:
    hostname: str
    role: Role
    nos: str
    model: str
    asn: int | None  # None: no BGP (OOB switches route statically; a switch with no BGP neighbour)
    loopback: str | None  # address, /32
    mtu: int
    interfaces: tuple[InterfaceConfig, ...]
    breakouts: tuple[Breakout, ...]
    vlans: tuple[Vlan, ...]
    bgp: BgpConfig | None
    bfd: Bfd | None
    qos: QosConfig | None
    hardware: SwitchModel  # the catalog entry: port layout and NOS-specific hardware data
    management: ManagementConfig | None = None
    static_routes: tuple[StaticRoute, ...] = ()
    network: str = "backend"
    load_balancing: LoadBalancing | None = None  # leaves and spines of a leaf/spine fabric
    evpn: EvpnConfig | None = None  # VXLAN EVPN fabrics
    system: Management | None = None  # the intent's management section for this switch; None: none given
    nos_release: str = ""  # the target release (catalog flavour's name for it)
    nos_flavour: str = ""  # the catalog flavour that release belongs to (sonic, broadcom-sonic, ...)
    features: frozenset[str] = frozenset()  # the catalog feature matrix's features that release has on this model
    # the release's documented parameter defaults, "feature.parameter" -> value (releases.yaml
    # `parameters`): a renderer leaves out a line whose value is the default
    nos_defaults: Mapping[str, int] = field(default_factory=dict)

    @property
    def ntp_key(self) -> str | None:
        """The secret name of the NTP key where this switch's release can write one (the feature
        matrix's ntp-authentication: SONiC before 202511 cannot load NTP_KEY); None otherwise."""
        ntp = self.system.ntp if self.system is not None else None
        return ntp.key if ntp is not None and "ntp-authentication" in self.features else None

    def secret_names(self) -> set[str]:
        """Every secret this switch's config refers to (by name)."""
        names = self.bgp.secret_names() if self.bgp else set()
        if self.system is not None:
            names |= self.system.secret_names(with_ntp_key=False)
        return names | ({self.ntp_key} if self.ntp_key else set())


@dataclass
class _Shared:
    """What switches alike have in common, made once per build (frozen values, never changed)."""

    breakouts: dict[tuple, tuple[Breakout, ...]] = field(default_factory=dict)  # (model, NOS, broken-out cages and speeds) ->
    thresholds: dict[Network, FabricThresholds] = field(default_factory=dict)  # per network: its switches' thresholds
    headroom: dict[tuple[int, int, int, int], LosslessBuffer] = field(default_factory=dict)  # (speed, cable bucket, MTU, MAC/PHY delay) ->


_PEER_GROUPS = {Role.LEAF: "LEAVES", Role.SPINE: "SPINES", Role.CORE: "CORES"}
_GROUP_ROLES = {name: role for role, name in _PEER_GROUPS.items()}
_KIND_NAMES = {kind: kind.value for kind in LinkKind}  # an enum's .value is a property: slow per port
# attrgetters run in C: a lambda per port cost 0.1 s over 655,360 ports
_front_panel_order = attrgetter("cage", "sub")
_speed_of = attrgetter("speed_gbps")


def build_device_configs(c: Compiled) -> dict[str, DeviceConfig]:
    configs = {}
    switches = list(c.fabric.switches())
    announced = _announced_prefixes(switches)
    transit = {network: _transit_policy(c, network) for network in announced}  # BGP policies shared per network
    systems: dict = {}  # one management section per (network, role), shared by its switches
    defaults: dict[tuple[str, str], dict[str, int]] = {}  # per (flavour, release), shared likewise
    shared = _Shared()
    for device in switches:
        key = (device.network, device.role)
        if key not in systems:
            systems[key] = Management.effective(level for _, level in c.management_levels(*key))
        target = c.nos_target(device.network, device.role, device.model)
        release = (target.flavour, target.release)
        if release not in defaults:
            defaults[release] = c.catalog.nos_releases[target.flavour].defaults(target.release)
        # the release the config is written for: the same three fields on every kind of switch
        written_for = {"nos_release": target.release, "nos_flavour": target.flavour, "features": target.features, "nos_defaults": defaults[release]}
        if device.role is Role.OOB_SWITCH:
            configs[device.name] = _oob_config(c, device, systems[key], written_for)
        else:
            configs[device.name] = _device_config(c, device, announced[device.network], transit[device.network], systems[key], written_for, shared)
    return configs


def _announced_prefixes(switches: list[Device]) -> dict:
    """Per routed network, how many IPv4 prefixes its fabric carries: every switch's loopback,
    and per leaf its VTEP (EVPN) or its one NIC/server block (an aggregate or the SVI subnet).
    No session can rightly receive more; maximum-prefix is sized from it."""
    counts: dict = {}
    for device in switches:
        if device.role is not Role.OOB_SWITCH:
            counts[device.network] = counts.get(device.network, 0) + 1 + (device.role is Role.LEAF)
    return counts


def _transit_policy(c: Compiled, network: Network) -> BgpPolicy:
    """Every spine's and core's policy in a network, made once: accept the network's pools,
    announce everything accepted. A leaf accepts the same."""
    pools = c.plan_of(network).spec.pools
    vteps = pools.vteps if c.evpn_of(network) is not None else None
    own_pools = [pools.loopbacks, vteps, getattr(pools, "gpu_nics", None) or getattr(pools, "hosts", None)]
    accept = tuple(PrefixRule(str(pool), 32) for pool in own_pools if pool is not None)
    return BgpPolicy(accept=accept, announce=accept)


def _policy(transit: BgpPolicy, device: Device, networks: tuple[str, ...], originated: tuple[str, ...]) -> BgpPolicy:
    """Inbound: the network's pools. Outbound: a leaf its loopback and VTEP (exactly) and its
    NIC block (the aggregate or subnet, `le 32` so the summary's own entry matches)."""
    if device.role is not Role.LEAF:
        return transit
    announce = tuple(PrefixRule(prefix) for prefix in networks) + tuple(PrefixRule(prefix, 32) for prefix in originated)
    return BgpPolicy(accept=transit.accept, announce=announce)


def _management(c: Compiled, device: Device) -> ManagementConfig | None:
    if c.intent.oob is None:
        return None
    name = c.catalog.switches[device.model].management_port[device.nos]  # type: ignore[index]
    port = device.ports.get(name)
    address = c.addresses.management.get(port) if port is not None else None
    if address is None:
        return None
    # NX-OS keeps mgmt0 in its built-in VRF "management"; SONiC's management VRF is fixed too
    return ManagementConfig(name, "management", address.cidr, c.addresses.management_gateways[port])  # type: ignore[index]


def _oob_config(c: Compiled, device: Device, system: Management | None, written_for: dict) -> DeviceConfig:
    """An OOB access switch: every management port in one VLAN behind the switch's gateway, and
    routed uplinks with a default route to the management core (ECMP over all of them)."""
    oob = c.intent.oob
    assert oob is not None
    plan = c.addresses
    model = c.catalog.switches[device.model]
    interfaces, members, routes = [], [], []
    for port in sorted((p for p in device.ports.values() if p.front_panel), key=_front_panel_order):
        link = port.link
        assert link is not None
        peer = link.b if port is link.a else link.a
        uplink = link.kind is LinkKind.UPLINK
        address = plan.interfaces.get(port) if uplink else None
        # positional, as in _device_config: 11,000 ports at 32,768 GPUs
        interfaces.append(
            InterfaceConfig(
                port.name,
                f"{link.id} to {peer.device.name} {peer.name}",  # description
                _KIND_NAMES[link.kind],
                port.speed_gbps,
                port.cage,
                port.sub,
                1500 if not uplink else 9216,  # mtu
                f"{address.address}/{address.prefixlen}" if address else None,  # address: its cidr
                None if uplink else oob.vlan,  # access_vlan
                False,  # lossless
                False,  # bfd
            )
        )
        if uplink and address is not None:
            routes.append(StaticRoute("0.0.0.0/0", address.peer))  # type: ignore[arg-type]
        elif not uplink:
            members.append(port.name)
    gateway = plan.management_subnets[device.name]
    return DeviceConfig(
        hostname=device.name,
        role=device.role,
        nos=device.nos,  # type: ignore[arg-type]
        model=device.model,
        asn=None,
        loopback=None,
        mtu=1500,
        interfaces=tuple(interfaces),
        breakouts=(),
        vlans=(Vlan(oob.vlan, "OOB-MGMT", gateway.cidr, tuple(members)),),
        bgp=None,
        bfd=None,
        qos=None,
        hardware=model,
        management=_management(c, device),
        static_routes=tuple(routes),
        network=device.network.value,
        system=system,
        **written_for,
    )


def _device_config(
    c: Compiled,
    device: Device,
    announced: int,
    transit: BgpPolicy,
    system: Management | None,
    written_for: dict,
    shared: _Shared,
) -> DeviceConfig:
    """A leaf, spine or core. `transit`: its network's spine and core policy (frozen, shared)."""
    fabric_plan = c.plan_of(device.network)
    backend = fabric_plan.spec  # the backend's or a frontend/storage fabric's settings
    plan = c.addresses
    model = c.catalog.switches[device.model]
    subnet_mode = fabric_plan.host_addressing == "subnet"
    overlay = c.evpn_of(device.network)
    ports = sorted((p for p in device.ports.values() if p.front_panel), key=_front_panel_order)
    qos_on = backend.qos.enabled

    interfaces = []
    neighbors = []
    # looked up once per switch, not once per port (128 ports a switch, 5,120 switches at 131,072 GPUs)
    switched_hosts = subnet_mode or overlay is not None  # host ports sit in a VLAN, not routed
    addresses, asns = plan.interfaces, plan.asns
    mtu, bfd_on = backend.mtu, backend.bfd.enabled
    fabric_kind, peer_kind, host_kind = LinkKind.FABRIC, LinkKind.PEER, LinkKind.HOST  # an enum member from its class is a lookup per use
    for port in ports:
        link = port.link
        assert link is not None
        peer = link.b if port is link.a else link.a
        link_kind = link.kind
        peer_device = peer.device
        fabric_link = link_kind is fabric_kind or link_kind is peer_kind  # a pair's peer link is routed like an uplink
        routed = not (switched_hosts and link_kind is host_kind)
        address = addresses.get(port) if routed else None
        access_vlan = None
        if not routed:
            access_vlan = overlay.segment_of[peer].vlan if overlay is not None else backend.subnet_vlan
        # the fields in their declared order, named in the comments: matching twelve keywords
        # cost 0.3 s over 655,360 ports at 131,072 GPUs
        interfaces.append(
            InterfaceConfig(
                port.name,
                f"{link.id} to {peer_device.name} {peer.name}",  # description
                _KIND_NAMES[link_kind],
                port.speed_gbps,
                port.cage,
                port.sub,
                mtu,
                f"{address.address}/{address.prefixlen}" if address else None,  # address: its cidr, without a property call per port
                access_vlan,
                qos_on,  # lossless
                bfd_on and fabric_link,  # bfd
                link.length_m,  # cable_length_m
            )
        )
        if fabric_link:
            # the peer's address as this end's /31 records it: no second lookup in the plan's
            # biggest dict (every routed port and NIC)
            group = _PEER_GROUPS[peer_device.role]
            neighbors.append(BgpNeighbor(address.peer, asns[peer_device.name], f"{peer_device.name} {peer.name}", group))  # type: ignore[union-attr, arg-type]

    vlans: tuple[Vlan, ...] = ()
    redistribute: tuple[str, ...] = ()
    aggregates: tuple[str, ...] = ()
    networks: tuple[str, ...] = (f"{plan.loopbacks[device.name]}/32",)
    evpn = None
    if overlay is not None:
        # servers live in the overlay: the underlay carries only loopbacks and VTEPs
        evpn = _evpn_config(c, device, overlay, interfaces)
        if evpn.vtep_address:
            networks += (f"{evpn.vtep_address}/32",)
    elif device.role is Role.LEAF:
        # the leaf announces its GPU block: one aggregate of the NIC /31s, or the SVI subnet itself
        redistribute = (plan.nic_blocks[device.name],)
        aggregates = () if subnet_mode else redistribute
        if subnet_mode:
            svi = plan.nic_subnet_gateways[device.name]
            members = tuple(i.name for i in interfaces if i.kind == "host")
            vlans = (Vlan(backend.subnet_vlan, "GPU-NICS" if device.network.value == "backend" else "SERVERS", svi.cidr, members),)

    broken_out = tuple(sorted({port.cage: port.speed_gbps for port in ports if port.sub}.items()))
    shape = (device.model, device.nos, broken_out)
    if shape not in shared.breakouts:  # the switches of a model break out alike: one tuple for all of them
        shared.breakouts[shape] = tuple(
            Breakout(
                cage,
                model.group_of(cage).fanout_at(speed),  # type: ignore[union-attr]
                speed,
                model.name_of(device.nos, cage),  # type: ignore[arg-type]
            )
            for cage, speed in broken_out
        )
    breakouts = shared.breakouts[shape]
    loopback = plan.loopbacks[device.name]
    security = backend.bgp_security
    maximum_prefix = -(-announced * (100 + security.maximum_prefix_margin_percent) // 100)
    groups = []
    for name in sorted({n.group for n in neighbors}):
        tier = "spine-core" if {device.role, _GROUP_ROLES[name]} == {Role.SPINE, Role.CORE} else "leaf-spine"
        groups.append(BgpGroup(name, tier, security.key_for(tier), maximum_prefix))
    # the widest equal-cost set towards any prefix: a leaf's uplinks, a spine's links to one leaf
    # or (3 tiers) all its core links, a core's links to one pod's spine
    uplink_paths = {
        Role.LEAF: len(neighbors),
        Role.SPINE: max(fabric_plan.links_per_spine, fabric_plan.spine_uplinks),
        Role.CORE: fabric_plan.links_per_core,
    }[device.role]
    # A switch with no BGP neighbour (a rail-only leaf, a spine-free top-of-rack switch) runs no
    # BGP: a process, route-maps and prefix-lists for sessions that cannot exist are noise a reader
    # must rule out (BFD too: it guards the sessions). EVPN keeps it: its segments live in BGP.
    runs_bgp = bool(neighbors) or evpn is not None
    return DeviceConfig(
        hostname=device.name,
        role=device.role,
        nos=device.nos,  # type: ignore[arg-type]
        model=device.model,
        asn=plan.asns[device.name] if runs_bgp else None,
        loopback=loopback,
        mtu=backend.mtu,
        interfaces=tuple(interfaces),
        breakouts=breakouts,
        vlans=vlans,
        bgp=None
        if not runs_bgp
        else BgpConfig(
            asn=plan.asns[device.name],
            router_id=loopback,
            groups=tuple(groups),
            neighbors=tuple(neighbors),
            networks=networks,
            redistribute=redistribute,
            aggregates=aggregates,
            maximum_paths=max(1, min(uplink_paths, model.max_ecmp_paths)),
            bfd=backend.bfd.enabled,
            policy=_policy(transit, device, networks, redistribute),
            allowas_in=1 if fabric_plan.leaf_asns_per_pod and device.role is Role.LEAF else 0,
            gtsm=security.gtsm,
            tcp_ao=security.tcp_ao,
            maximum_prefix_restart_min=security.maximum_prefix_restart_min,
        ),
        bfd=backend.bfd if runs_bgp else None,  # BFD guards BGP sessions only
        qos=_qos_config(backend, device, ports, model, shared) if qos_on else None,
        hardware=model,
        management=_management(c, device),
        network=device.network.value,
        load_balancing=backend.load_balancing,
        evpn=evpn,
        system=system,
        **written_for,
    )


def _evpn_config(c: Compiled, device: Device, overlay: EvpnPlan, interfaces: list[InterfaceConfig]) -> EvpnConfig:
    settings = overlay.settings
    host_mtu = c.plan_of(device.network).spec.host_mtu
    if device.role is not Role.LEAF:
        return EvpnConfig(vtep=False, vtep_address=None, anycast_gateway_mac=settings.anycast_gateway_mac, host_mtu=host_mtu)
    segments = overlay.leaf_segments(device)
    members: dict[int, list[str]] = {}
    for i in interfaces:
        if i.access_vlan is not None:
            members.setdefault(i.access_vlan, []).append(i.name)
    tenants = {s.tenant.number: s.tenant for s in segments}
    return EvpnConfig(
        vtep=True,
        vtep_address=c.addresses.vteps[device.name],
        anycast_gateway_mac=settings.anycast_gateway_mac,
        segments=tuple(
            EvpnSegmentConfig(
                name=s.name,
                vlan=s.vlan,
                vni=s.vni,
                vrf=s.tenant.vrf,
                gateway=f"{s.gateway}/{s.prefixlen}",
                route_target=s.route_target,
                members=tuple(members.get(s.vlan, ())),
            )
            for s in segments
        ),
        vrfs=tuple(EvpnVrfConfig(name=t.vrf, l3_vni=t.l3_vni, l3_vlan=t.l3_vlan, route_target=t.route_target) for _, t in sorted(tenants.items())),
        host_mtu=host_mtu,
    )


def _qos_config(spec, device: Device, ports: list[Port], model: SwitchModel, shared: _Shared) -> QosConfig:
    """The switch's effective profile; ECN and PFC trigger per speed from the intent, else the
    switch model's published values; headroom per port from its cable in the cabling plan, or the
    profile's `cable_length_m` without a layout, rounded up to a bucket, plus the model's MAC/PHY
    delay where published."""
    qos = effective_qos(spec, device.name)
    platform = model.qos
    speeds = sorted(set(map(_speed_of, ports)))
    if len(speeds) == 1:  # most switches: every port at one speed, nothing to count
        main = speeds[0]
    else:
        counts = Counter(map(_speed_of, ports))  # one pass over the ports, not one per speed
        main = max(speeds, key=lambda s: (counts[s], s))
    delay = platform.mac_phy_delay_bytes.value if platform.mac_phy_delay_bytes is not None else 0
    policies: dict[tuple[int, int], PausePolicy] = {}
    buffers = {}
    pause_policies = {}
    fabric = shared.thresholds.get(device.network)
    if fabric is None:
        fabric = shared.thresholds[device.network] = FabricThresholds(spec.qos)
    thresholds = {s: fabric.at(qos, device.model, platform, s) for s in speeds}
    always = qos.pause_thresholds == "always"
    # (speed, cable length) -> the port's buffer and pause policy (None: none): a handful of pairs
    # per switch, so a port costs one lookup
    per_cable: dict[tuple[int, float], tuple[LosslessBuffer, PausePolicy | None]] = {}
    for port in ports:
        link = port.link
        length = link.length_m if link is not None and link.length_m is not None else qos.cable_length_m
        made = per_cable.get((port.speed_gbps, length))
        if made is None:
            bucket = cable_length_bucket(length)
            alike = (port.speed_gbps, bucket, spec.mtu, delay)  # the build's one buffer object for it
            buffer = shared.headroom.get(alike)
            if buffer is None:
                buffer = shared.headroom[alike] = lossless_headroom(port.speed_gbps, spec.mtu, bucket, delay)
            policy = None
            if always or length > PAUSE_POLICY_ABOVE_M:
                key = (port.speed_gbps, bucket)
                if key not in policies:
                    policies[key] = ingress_pause_policy(buffer, thresholds[port.speed_gbps].pfc_trigger_kbytes)
                policy = policies[key]
            made = per_cable[port.speed_gbps, length] = (buffer, policy)
        buffers[port.name] = made[0]
        if made[1] is not None:
            pause_policies[port.name] = made[1]
    storage = qos.storage_priority is not None
    return QosConfig(
        lossless_priority=qos.lossless_priority,
        roce_dscp=tuple(qos.roce_dscp),
        cnp_priority=qos.cnp_priority,
        cnp_dscp=tuple(qos.cnp_dscp),
        lossless_bandwidth_percent=qos.lossless_bandwidth_percent,
        ecn={s: t.ecn for s, t in thresholds.items()},
        main_speed_gbps=main,
        pfc_watchdog=qos.pfc_watchdog,
        buffers=buffers,
        pfc_trigger_kbytes={s: t.pfc_trigger_kbytes for s, t in thresholds.items()},
        storage_priority=qos.storage_priority,
        storage_dscp=tuple(qos.storage_dscp),
        storage_bandwidth_percent=qos.storage_bandwidth_percent if storage else 0,
        ecn_source={s: t.ecn_source for s, t in thresholds.items()},
        trigger_source={s: t.trigger_source for s, t in thresholds.items()},
        pause_policies=pause_policies,
        mac_phy_delay_published=platform.mac_phy_delay_bytes is not None,
    )
