"""Deterministic address and ASN allocation (netaddr for the pool arithmetic).

Layout, chosen so that growing the fabric (another scalable unit, more nodes in the last one)
keeps every existing address:
- loopbacks: leaves from the first half of the pool, spines from the third quarter, cores (3
  tiers) from the last quarter; one /32 each, by index;
- GPU NICs: one block per leaf, by leaf index, sized for a full unit. `p2p`: a /31 per NIC, leaf
  on the even address (the NIC's gateway), NIC on the odd one; `subnet`: one subnet per leaf with
  the gateway on the first host address. Each block is what the leaf advertises (aggregated);
- fabric links: one block per leaf, by leaf index; a /31 per uplink, spine even, leaf odd; with 3
  tiers the leaves use the first half of the pool and the spines the second, one block per spine
  by spine index, a /31 per uplink, core even, spine odd;
- ASNs (RFC 7938): one ASN shared by the spines, then one per leaf in leaf order. 3 tiers: one
  shared by the cores, one per pod shared by its spines (room kept for as many pods as the core
  can take), then the leaves: one each, or with `leaves: per-pod` the same ones in every pod, by
  the leaf's place in its pod.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import attrgetter

from netaddr import IPNetwork

from fabricgen.basics.errors import Problem
from fabricgen.basics.units import ipv4_text, ipv4_texts
from fabricgen.compiler.design.evpn import EvpnPlan
from fabricgen.compiler.design.graph import Device, Fabric, LinkKind, Network, Port, Role
from fabricgen.compiler.design.oob import OobPlan
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.intent.model import Backend, HostFabric, Intent

ASN_RANGES = {
    "private-2byte": (64512, 65534),
    "private-4byte": (4200000000, 4294967294),
}


# Not frozen, though nothing changes one once allocated: a frozen dataclass sets every field
# through object.__setattr__, twice the cost of a plain one, for 790,000 addresses at 131,072 GPUs.
@dataclass(slots=True)
class InterfaceAddress:
    address: str  # dotted quad
    prefixlen: int
    peer: str | None = None  # the other end's address on a point-to-point link

    @property
    def cidr(self) -> str:
        return f"{self.address}/{self.prefixlen}"


@dataclass
class AddressPlan:
    loopbacks: dict[str, str] = field(default_factory=dict)  # device -> address (/32)
    interfaces: dict[Port, InterfaceAddress] = field(default_factory=dict)  # routed ports and NICs
    gateways: dict[Port, str] = field(default_factory=dict)  # NIC port -> its gateway
    nic_blocks: dict[str, str] = field(default_factory=dict)  # leaf -> the GPU block it advertises (CIDR)
    nic_subnet_gateways: dict[str, InterfaceAddress] = field(default_factory=dict)  # leaf SVI (subnet mode)
    asns: dict[str, int] = field(default_factory=dict)  # switch -> ASN
    management: dict[Port, InterfaceAddress] = field(default_factory=dict)  # copper management port -> address
    management_gateways: dict[Port, str] = field(default_factory=dict)
    management_subnets: dict[str, InterfaceAddress] = field(default_factory=dict)  # OOB switch -> its gateway (SVI)
    vteps: dict[str, str] = field(default_factory=dict)  # EVPN leaf -> its VTEP address (/32, loopback1)


@dataclass(frozen=True)
class _Layout:
    """Where each kind of address comes from, derived from the pools and the sizing alone."""

    leaf_loopbacks: IPNetwork
    spine_loopbacks: IPNetwork
    core_loopbacks: IPNetwork
    nic_block_size: int
    link_block_size: int
    spine_link_block_size: int  # 3 tiers: a spine's uplinks to the core


def _layout(sizing: LeafSpinePlan) -> _Layout:
    loopbacks = IPNetwork(str(sizing.loopback_pool))
    return _Layout(
        leaf_loopbacks=next(loopbacks.subnet(loopbacks.prefixlen + 1)) if loopbacks.prefixlen < 32 else loopbacks,
        spine_loopbacks=list(loopbacks.subnet(loopbacks.prefixlen + 2))[2] if loopbacks.prefixlen < 31 else loopbacks,
        core_loopbacks=list(loopbacks.subnet(loopbacks.prefixlen + 2))[3] if loopbacks.prefixlen < 31 else loopbacks,
        nic_block_size=_block_size(sizing.leaf_downlinks, sizing.host_addressing),
        # rail-only: no uplinks; a spine-free pair: its peer links, from the first leaf's block
        link_block_size=1 << math.ceil(math.log2(2 * (sizing.leaf_uplinks or sizing.peer_links))) if sizing.leaf_uplinks or sizing.peer_links else 0,
        spine_link_block_size=1 << math.ceil(math.log2(2 * sizing.spine_uplinks)) if sizing.spine_uplinks else 0,
    )


def address_plan_problems(sizing: LeafSpinePlan) -> list[Problem]:
    """Pools too small and ASNs out of range, known from the sizing before any graph exists."""
    layout = _layout(sizing)
    loopbacks, nics, links = (IPNetwork(str(p)) for p in (sizing.loopback_pool, sizing.host_pool, sizing.link_pool))
    leaves = sizing.leaves
    section = sizing.section
    if sizing.host_addressing == "segment":  # EVPN: plan_evpn sizes the segments; VTEPs come from their own pool
        pool = IPNetwork(str(sizing.spec.pools.vteps))
        hosts = _fits(section, "vteps", pool, pool, leaves + 1, f"{leaves:,} leaf VTEPs")
    else:
        hosts = _fits(section, sizing.host_pool_name, nics, nics, leaves * layout.nic_block_size, f"{leaves:,} leaves x {layout.nic_block_size:,} addresses")
    if sizing.tiers == 3:  # leaves in the first half, spines in the second: growth moves neither
        halves = list(links.subnet(links.prefixlen + 1)) if links.prefixlen < 32 else [links, links]
        link_fits = [
            *_fits(
                section,
                "fabric_links",
                links,
                halves[0],
                leaves * layout.link_block_size,
                f"{leaves:,} leaves x {sizing.leaf_uplinks} /31 uplinks (the first half of the pool)",
            ),
            *_fits(
                section,
                "fabric_links",
                links,
                halves[1],
                sizing.spines * layout.spine_link_block_size,
                f"{sizing.spines:,} spines x {sizing.spine_uplinks} /31 uplinks (the second half of the pool)",
            ),
        ]
    else:
        link_fits = _fits(section, "fabric_links", links, links, leaves * layout.link_block_size, f"{leaves:,} leaves x {sizing.leaf_uplinks} /31 uplinks")
    return [
        *_fits(section, "loopbacks", loopbacks, layout.leaf_loopbacks, leaves + 1, "leaf loopbacks (the first half of the pool)"),
        *_fits(section, "loopbacks", loopbacks, layout.spine_loopbacks, sizing.spines + 1, "spine loopbacks (the third quarter of the pool)"),
        *_fits(section, "loopbacks", loopbacks, layout.core_loopbacks, sizing.cores + 1, "core loopbacks (the last quarter of the pool)"),
        *hosts,
        *link_fits,
        *_asn_problems(sizing),
    ]


def allocate_addresses(
    fabric: Fabric, plans: list[LeafSpinePlan], intent: Intent, oob: OobPlan | None, evpn: dict[Network, EvpnPlan] | None = None
) -> AddressPlan:
    """Every address and ASN. The design phase has already checked that pools fit and ASNs are
    in range (`address_plan_problems`, `cluster_pool_problems`, `plan_evpn`)."""
    plan = AddressPlan()
    for sizing in plans:
        _allocate_leaf_spine(plan, fabric, sizing, (evpn or {}).get(sizing.network))
    if oob is not None:
        _allocate_management(plan, fabric, intent, oob)
    return plan


def _allocate_leaf_spine(plan: AddressPlan, fabric: Fabric, sizing: LeafSpinePlan, evpn: EvpnPlan | None) -> None:
    leaves = list(fabric.by_role(Role.LEAF, sizing.network))
    spines = list(fabric.by_role(Role.SPINE, sizing.network))
    cores = list(fabric.by_role(Role.CORE, sizing.network))
    layout = _layout(sizing)
    nic_block_size, link_block_size = layout.nic_block_size, layout.link_block_size

    for region, devices in ((layout.leaf_loopbacks, leaves), (layout.spine_loopbacks, spines), (layout.core_loopbacks, cores)):
        for offset, device in enumerate(devices, start=1):
            plan.loopbacks[device.name] = _ip(region.first + offset)

    nic_base = IPNetwork(str(sizing.host_pool)).first
    link_base = IPNetwork(str(sizing.link_pool)).first
    block_prefix = 32 - int(math.log2(nic_block_size))
    if evpn is not None:
        _allocate_segments(plan, evpn)
        vtep_base = IPNetwork(str(sizing.spec.pools.vteps)).first
        for offset, leaf in enumerate(leaves, start=1):
            plan.vteps[leaf.name] = _ip(vtep_base + offset)
    for position, leaf in enumerate(leaves):
        if evpn is None:  # with EVPN, servers are addressed by their segment (_allocate_segments)
            _allocate_host_block(plan, leaf, nic_base + position * nic_block_size, block_prefix, sizing.host_addressing)
        _allocate_uplinks(plan, leaf, link_base + position * link_block_size)
    spine_link_base = link_base + IPNetwork(str(sizing.link_pool)).size // 2
    for position, spine in enumerate(spines if cores else ()):
        _allocate_uplinks(plan, spine, spine_link_base + position * layout.spine_link_block_size)

    plan.asns.update(_allocate_asns(sizing, cores, spines, leaves))


def _allocate_uplinks(plan: AddressPlan, device: Device, block: int) -> None:
    """A /31 per link towards the tier above (or, a spine-free pair's first leaf, towards the
    second over a peer link), in port order: the upper (or second) end even, this one odd."""
    fabric, peer = LinkKind.FABRIC, LinkKind.PEER  # bound once: a member lookup on an Enum class costs 70 ns, per port here
    uplinks = [p for p in device.ports.values() if (link := p.link) is not None and (link.kind is fabric or link.kind is peer) and link.a is p]
    uplinks.sort(key=_port_order)
    texts = ipv4_texts(block, 2 * len(uplinks))  # each address's text made once
    interfaces = plan.interfaces
    for port, even, odd in zip(uplinks, texts[0::2], texts[1::2], strict=True):
        interfaces[port.link.b] = InterfaceAddress(even, 31, odd)  # type: ignore[union-attr]  # b: the upper end
        interfaces[port] = InterfaceAddress(odd, 31, even)


def _allocate_host_block(plan: AddressPlan, leaf: Device, block: int, prefix: int, mode: str) -> None:
    """A leaf's server block, the aggregate it announces. p2p: a /31 per port, the leaf on the
    even address (the server's gateway); subnet: the gateway (SVI) first, then the servers."""
    plan.nic_blocks[leaf.name] = f"{_ip(block)}/{prefix}"
    # downlinks were taken in node order, so a port's rank is its node's place in the unit
    host = LinkKind.HOST
    host_ports = [p for p in leaf.ports.values() if (link := p.link) is not None and link.kind is host]
    host_ports.sort(key=_port_order)
    interfaces, gateways = plan.interfaces, plan.gateways
    if mode == "p2p":
        texts = ipv4_texts(block, 2 * len(host_ports))
        for port, even, odd in zip(host_ports, texts[0::2], texts[1::2], strict=True):
            link = port.link
            nic = link.b if link.a is port else link.a  # type: ignore[union-attr]  # link.other(port), without the call
            interfaces[port] = InterfaceAddress(even, 31, odd)
            interfaces[nic] = InterfaceAddress(odd, 31, even)
            gateways[nic] = even
    else:
        gateway = _ip(block + 1)
        plan.nic_subnet_gateways[leaf.name] = InterfaceAddress(gateway, prefix)
        for port, address in zip(host_ports, ipv4_texts(block + 2, len(host_ports)), strict=True):
            nic = port.link.other(port)  # type: ignore[union-attr]
            interfaces[nic] = InterfaceAddress(address, prefix)
            gateways[nic] = gateway


def _allocate_segments(plan: AddressPlan, evpn: EvpnPlan) -> None:
    """Each segment's members from its third address on (network, then the anycast gateway)."""
    for segment in evpn.segments:
        members = evpn.members[segment.number]
        for port, address in zip(members, ipv4_texts(IPNetwork(segment.subnet).first + 2, len(members)), strict=True):
            plan.interfaces[port] = InterfaceAddress(address, segment.prefixlen)
            plan.gateways[port] = segment.gateway


def spine_asn_of(plan: LeafSpinePlan) -> int:
    """The spines' ASN (3 tiers: the first pod's)."""
    return _asn_firsts(plan)[1]


def management_block_size(oob: OobPlan) -> int:
    """Addresses per OOB switch subnet: its copper ports, the gateway, network and broadcast."""
    return 1 << math.ceil(math.log2(oob.copper_ports + 3))


def _allocate_management(plan: AddressPlan, fabric: Fabric, intent: Intent, oob: OobPlan) -> None:
    """One subnet per OOB switch, its VLAN interface on the first address; the port cabled to
    its n-th copper port (from 0) gets the subnet's address 2 + n. Uplinks: a /31 each, the core on the even."""
    pools = intent.oob.pools  # type: ignore[union-attr]
    size = management_block_size(oob)
    prefix = 32 - int(math.log2(size))
    base = IPNetwork(str(pools.management)).first
    uplink_base = IPNetwork(str(pools.uplinks)).first
    uplink_number = 0
    position = {cage: rank for rank, cage in enumerate(oob.copper_cages)}
    management, uplink = LinkKind.MANAGEMENT, LinkKind.UPLINK  # bound once: a member lookup on an Enum class costs 70 ns, per port here
    for number, switch in enumerate(fabric.by_role(Role.OOB_SWITCH)):
        block = base + number * size
        gateway = _ip(block + 1)
        access = ipv4_texts(block + 2, len(position))  # the copper ports' addresses, by rank
        plan.management_subnets[switch.name] = InterfaceAddress(gateway, prefix)
        ports = sorted(switch.ports.values(), key=_port_order)
        for port in ports:
            link = port.link
            if link is None or not port.front_panel:
                continue  # its own mgmt0 is addressed by the OOB switch it is cabled to
            if link.kind is management:
                far = link.other(port)
                # by the access port's number, so an address stays with its port when others fill;
                # management links end only on the access (copper) ports design/oob.py took
                rank = position[port.cage]
                plan.management[far] = InterfaceAddress(access[rank], prefix)
                plan.management_gateways[far] = gateway
            elif link.kind is uplink:
                pair = uplink_base + 2 * uplink_number
                uplink_number += 1
                plan.interfaces[link.other(port)] = InterfaceAddress(_ip(pair), 31, _ip(pair + 1))
                plan.interfaces[port] = InterfaceAddress(_ip(pair + 1), 31, _ip(pair))


def cluster_pool_problems(intent: Intent, oob: OobPlan | None) -> list[Problem]:
    """Address pools of different networks never overlap, and the management pools fit."""
    pools: list[tuple[tuple[str, ...], IPNetwork]] = []
    sections: list[tuple[str, Backend | HostFabric]] = [("backend", intent.backend)]
    if intent.frontend is not None:
        sections.append(("frontend", intent.frontend))
    storage = intent.storage_fabric()
    if storage is not None and storage is not intent.frontend:  # frontend.storage: separate
        sections.append(("storage", storage))
    for section, spec in sections:
        for name, value in spec.pools:
            if value is None or (name == "vteps" and spec.routing != "vxlan-evpn"):
                continue  # VTEP pools are only claimed by an EVPN fabric
            pools.append(((section, "pools", name), IPNetwork(str(value))))
    if intent.oob is not None:
        for name, value in intent.oob.pools:
            pools.append((("oob", "pools", name), IPNetwork(str(value))))
    problems = []
    for i, (field_b, b) in enumerate(pools):
        for field_a, a in pools[:i]:
            if field_a[0] != field_b[0] and a.first <= b.last and b.first <= a.last:
                problems.append(
                    Problem(
                        f"pool {b} overlaps {'.'.join(field_a)} ({a}); every network needs its own address space",
                        hint="give this pool a range of its own",
                        field=field_b,
                    )
                )
    if intent.oob is not None and oob is not None:
        management = IPNetwork(str(intent.oob.pools.management))
        size = management_block_size(oob)
        problems += _fits("oob", "management", management, management, oob.switches * size, f"{oob.switches:,} OOB switches x {size} addresses")
        uplinks = IPNetwork(str(intent.oob.pools.uplinks))
        problems += _fits(
            "oob", "uplinks", uplinks, uplinks, 2 * oob.switches * intent.oob.uplinks, f"{oob.switches:,} OOB switches x {intent.oob.uplinks} /31 uplinks"
        )
    return problems


def asn_overlap_problems(plans: list[LeafSpinePlan]) -> list[Problem]:
    """Each fabric's ASNs stay apart from the others', so fabrics can later be joined."""
    ranges = []
    for sizing in plans:
        core_asn, spine_first, leaf_first = _asn_firsts(sizing)
        spine_asns = set(range(spine_first, spine_first + sizing.pods)) | ({core_asn} if core_asn is not None else set())
        ranges.append((sizing.section, spine_asns | set(range(leaf_first, leaf_first + _leaf_asn_count(sizing)))))
    problems = []
    for i, (section, used) in enumerate(ranges):
        for other, other_used in ranges[:i]:
            shared = used & other_used
            if shared:
                problems.append(
                    Problem(
                        f"ASNs {min(shared)}-{max(shared)} are used by both the {other} and the {section} fabric",
                        hint="move this fabric's spine and leaf_first ASNs to a range of their own",
                        field=(section, "asn"),
                    )
                )
    return problems


def _block_size(downlinks: int, mode: str) -> int:
    if mode == "p2p":
        return 1 << math.ceil(math.log2(2 * downlinks))
    return 1 << math.ceil(math.log2(downlinks + 3))  # network, gateway, broadcast


_port_order = attrgetter("cage", "sub")  # a port's (cage, sub): front-panel order


def _ip(value: int) -> str:
    return ipv4_text(value)


def _fits(section: str, pool_name: str, pool: IPNetwork, region: IPNetwork, needed: int, what: str) -> list[Problem]:
    if needed <= region.size:
        return []
    # the smallest pool that would do, keeping the same split
    scale = pool.size // region.size
    prefix = 32 - math.ceil(math.log2(needed * scale))
    return [
        Problem(
            f"pool {pool} is too small: {what} need {needed:,} addresses, it has room for {region.size:,}",
            hint=f"use a /{prefix} or larger",
            field=(section, "pools", pool_name),
        )
    ]


def _asn_firsts(sizing: LeafSpinePlan) -> tuple[int | None, int, int]:
    """(cores' ASN or None with 2 tiers, first pod's spine ASN, first leaf ASN)."""
    plan = sizing.spec.asn
    low = ASN_RANGES[plan.scheme][0]
    core_asn = (plan.core if plan.core is not None else low) if sizing.tiers == 3 else None
    spine_first = plan.spine if plan.spine is not None else (core_asn + 1 if core_asn is not None else low)
    leaf_first = plan.leaf_first if plan.leaf_first is not None else spine_first + max(sizing.pods, sizing.most_pods)
    return core_asn, spine_first, leaf_first


def _leaf_asn_count(sizing: LeafSpinePlan) -> int:
    """Leaf ASNs the plan uses: one per leaf, or one per leaf of the largest pod when reused."""
    return min(sizing.leaves, sizing.pod_leaves) if sizing.leaf_asns_per_pod else sizing.leaves


def _asn_problems(sizing: LeafSpinePlan) -> list[Problem]:
    plan, section = sizing.spec.asn, sizing.section
    low, high = ASN_RANGES[plan.scheme]
    core_asn, spine_first, leaf_first = _asn_firsts(sizing)
    spine_last = spine_first + sizing.pods - 1
    leaf_last = leaf_first + _leaf_asn_count(sizing) - 1
    problems = []
    if core_asn is not None and not low <= core_asn <= high:
        problems.append(Problem(f"core ASN {core_asn} is outside the {plan.scheme} range {low}-{high}", field=(section, "asn", "core")))
    if not (low <= spine_first and spine_last <= high):
        what = f"spine ASN {spine_first}" if sizing.pods == 1 else f"{sizing.pods} pod spine ASNs {spine_first}-{spine_last}"
        problems.append(Problem(f"{what} outside the {plan.scheme} range {low}-{high}", field=(section, "asn", "spine")))
    if not (low <= leaf_first and leaf_last <= high):
        used = sizing.pods + (leaf_last - leaf_first + 1) + (core_asn is not None)
        if plan.scheme == "private-2byte":
            hint = "use scheme: private-4byte"
            if sizing.tiers == 3 and plan.leaves == "unique":
                per_pod = min(sizing.leaves, sizing.pod_leaves)
                hint += f", or leaves: per-pod (every pod reuses the same {per_pod} leaf ASNs, with allowas-in)"
            hint += f"; the fabric needs {used:,} ASNs, the range has {high - low + 1:,}"
        else:
            hint = f"start leaves at {low + 1} or lower"
        what = f"{sizing.leaves:,} leaf ASNs" if not sizing.leaf_asns_per_pod else f"{leaf_last - leaf_first + 1:,} leaf ASNs per pod"
        problems.append(
            Problem(
                f"{what} from {leaf_first} end at {leaf_last}, outside the {plan.scheme} range {low}-{high}",
                hint=hint,
                field=(section, "asn", "leaf_first" if plan.leaf_first is not None else "scheme"),
            )
        )
    tiers = [("the spines' ASN" if sizing.pods == 1 else "the pod spine ASNs", spine_first, spine_last)]
    if core_asn is not None:
        tiers.append(("the cores' ASN", core_asn, core_asn))
    for what, first, last in tiers:
        if first <= leaf_last and leaf_first <= last:
            problems.append(
                Problem(
                    f"{what} {first}{f'-{last}' if last != first else ''} overlap the leaf ASNs {leaf_first}-{leaf_last}",
                    hint="move one of them",
                    field=(section, "asn"),
                )
            )
    if core_asn is not None and spine_first <= core_asn <= spine_last:
        problems.append(
            Problem(f"the cores' ASN {core_asn} is one of the pod spine ASNs {spine_first}-{spine_last}", hint="move one of them", field=(section, "asn"))
        )
    return problems


def _allocate_asns(sizing: LeafSpinePlan, cores: list[Device], spines: list[Device], leaves: list[Device]) -> dict[str, int]:
    core_asn, spine_first, leaf_first = _asn_firsts(sizing)
    asns: dict[str, int] = {}
    if cores:
        assert core_asn is not None  # cores come with 3 tiers, where _asn_firsts gives their ASN
        asns.update({core.name: core_asn for core in cores})
    asns.update({spine.name: spine_first + (spine.pod or 1) - 1 for spine in spines})
    if sizing.leaf_asns_per_pod:
        place: dict[int | None, int] = {}  # pod -> leaves seen so far (a leaf's pod is set in 3 tiers, where pods reuse ASNs)
        for leaf in leaves:
            asns[leaf.name] = leaf_first + place.get(leaf.pod, 0)
            place[leaf.pod] = place.get(leaf.pod, 0) + 1
    else:
        asns.update({leaf.name: leaf_first + i for i, leaf in enumerate(leaves)})
    return asns
