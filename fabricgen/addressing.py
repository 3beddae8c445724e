"""Deterministic address and ASN allocation (netaddr for the pool arithmetic).

Layout, chosen so that growing the fabric (another scalable unit, more nodes in the last one)
keeps every existing address:
- loopbacks: leaves from the first half of the pool, spines from the third quarter (the last
  quarter stays free for a third tier); one /32 each, by index;
- GPU NICs: one block per leaf, by leaf index, sized for a full unit. `p2p`: a /31 per NIC, leaf
  on the even address (the NIC's gateway), NIC on the odd one; `subnet`: one subnet per leaf with
  the gateway on the first host address. Each block is what the leaf advertises (aggregated);
- fabric links: one block per leaf, by leaf index; a /31 per uplink, spine even, leaf odd;
- ASNs (RFC 7938): one ASN shared by the spines, then one per leaf in leaf order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from netaddr import IPAddress, IPNetwork

from fabricgen.design.graph import Device, Fabric, LinkKind, Port, Role
from fabricgen.design.sizing import BackendSizing
from fabricgen.errors import Problem
from fabricgen.intent.model import Intent

ASN_RANGES = {
    "private-2byte": (64512, 65534),
    "private-4byte": (4200000000, 4294967294),
}


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True)
class _Layout:
    """Where each kind of address comes from, derived from the pools and the sizing alone."""

    leaf_loopbacks: IPNetwork
    spine_loopbacks: IPNetwork
    nic_block_size: int
    link_block_size: int


def _layout(sizing: BackendSizing, intent: Intent) -> _Layout:
    loopbacks = IPNetwork(str(intent.backend.pools.loopbacks))
    return _Layout(
        leaf_loopbacks=next(loopbacks.subnet(loopbacks.prefixlen + 1)) if loopbacks.prefixlen < 32 else loopbacks,
        spine_loopbacks=list(loopbacks.subnet(loopbacks.prefixlen + 2))[2] if loopbacks.prefixlen < 31 else loopbacks,
        nic_block_size=_block_size(sizing.leaf_downlinks, intent.backend.nic_addressing),
        link_block_size=1 << math.ceil(math.log2(2 * sizing.leaf_uplinks)),
    )


def address_plan_problems(sizing: BackendSizing, intent: Intent) -> list[Problem]:
    """Pools too small and ASNs out of range, known from the sizing before any graph exists."""
    pools = intent.backend.pools
    layout = _layout(sizing, intent)
    loopbacks, nics, links = (IPNetwork(str(p)) for p in (pools.loopbacks, pools.gpu_nics, pools.fabric_links))
    leaves = sizing.leaves
    return [
        *_fits("loopbacks", loopbacks, layout.leaf_loopbacks, leaves + 1, "leaf loopbacks (the first half of the pool)"),
        *_fits("loopbacks", loopbacks, layout.spine_loopbacks, sizing.spines + 1, "spine loopbacks (the third quarter of the pool)"),
        *_fits("gpu_nics", nics, nics, leaves * layout.nic_block_size, f"{leaves} leaves x {layout.nic_block_size} addresses"),
        *_fits("fabric_links", links, links, leaves * layout.link_block_size, f"{leaves} leaves x {sizing.leaf_uplinks} /31 uplinks"),
        *_asn_problems(intent, sizing.leaves),
    ]


def allocate_addresses(fabric: Fabric, sizing: BackendSizing, intent: Intent) -> AddressPlan:
    """Every address and ASN. The design phase has already run `address_plan_problems`, so the
    pools fit and the ASNs are in range."""
    backend = intent.backend
    pools = backend.pools
    leaves = list(fabric.by_role(Role.LEAF))
    spines = list(fabric.by_role(Role.SPINE))
    plan = AddressPlan()
    layout = _layout(sizing, intent)
    leaf_loopbacks, spine_loopbacks = layout.leaf_loopbacks, layout.spine_loopbacks
    nic_block_size, link_block_size = layout.nic_block_size, layout.link_block_size

    for offset, leaf in enumerate(leaves, start=1):
        plan.loopbacks[leaf.name] = _ip(leaf_loopbacks.first + offset)
    for offset, spine in enumerate(spines, start=1):
        plan.loopbacks[spine.name] = _ip(spine_loopbacks.first + offset)

    nic_base = IPNetwork(str(pools.gpu_nics)).first
    link_base = IPNetwork(str(pools.fabric_links)).first
    block_prefix = 32 - int(math.log2(nic_block_size))
    for position, leaf in enumerate(leaves):
        block = nic_base + position * nic_block_size
        plan.nic_blocks[leaf.name] = f"{_ip(block)}/{block_prefix}"
        # downlinks were taken in node order, so a port's rank is its node's place in the unit
        host_ports = sorted((p for p in leaf.ports.values() if p.link and p.link.kind is LinkKind.HOST), key=_port_order)
        if backend.nic_addressing == "p2p":
            for rank, port in enumerate(host_ports):
                pair = block + 2 * rank
                nic = port.link.other(port)  # type: ignore[union-attr]
                plan.interfaces[port] = InterfaceAddress(_ip(pair), 31, _ip(pair + 1))
                plan.interfaces[nic] = InterfaceAddress(_ip(pair + 1), 31, _ip(pair))
                plan.gateways[nic] = _ip(pair)
        else:
            gateway = _ip(block + 1)
            plan.nic_subnet_gateways[leaf.name] = InterfaceAddress(gateway, block_prefix)
            for rank, port in enumerate(host_ports):
                nic = port.link.other(port)  # type: ignore[union-attr]
                plan.interfaces[nic] = InterfaceAddress(_ip(block + 2 + rank), block_prefix)
                plan.gateways[nic] = gateway

        uplinks = sorted((p for p in leaf.ports.values() if p.link and p.link.kind is LinkKind.FABRIC), key=_port_order)
        link_block = link_base + position * link_block_size
        for number, port in enumerate(uplinks):
            pair = link_block + 2 * number
            spine_port = port.link.other(port)  # type: ignore[union-attr]
            plan.interfaces[spine_port] = InterfaceAddress(_ip(pair), 31, _ip(pair + 1))
            plan.interfaces[port] = InterfaceAddress(_ip(pair + 1), 31, _ip(pair))

    plan.asns = _allocate_asns(intent, spines, leaves)
    return plan


def _block_size(downlinks: int, mode: str) -> int:
    if mode == "p2p":
        return 1 << math.ceil(math.log2(2 * downlinks))
    return 1 << math.ceil(math.log2(downlinks + 3))  # network, gateway, broadcast


def _port_order(port: Port) -> tuple[int, int]:
    return (port.cage, port.sub)


def _ip(value: int) -> str:
    return str(IPAddress(value, 4))


def _fits(pool_name: str, pool: IPNetwork, region: IPNetwork, needed: int, what: str) -> list[Problem]:
    if needed <= region.size:
        return []
    # the smallest pool that would do, keeping the same split
    scale = pool.size // region.size
    prefix = 32 - math.ceil(math.log2(needed * scale))
    return [
        Problem(
            f"pool {pool} is too small: {what} need {needed:,} addresses, it has room for {region.size:,}",
            hint=f"use a /{prefix} or larger",
            field=("backend", "pools", pool_name),
        )
    ]


def _asn_firsts(intent: Intent) -> tuple[int, int]:
    plan = intent.backend.asn
    spine_asn = plan.spine if plan.spine is not None else ASN_RANGES[plan.scheme][0]
    return spine_asn, plan.leaf_first if plan.leaf_first is not None else spine_asn + 1


def _asn_problems(intent: Intent, leaves: int) -> list[Problem]:
    plan = intent.backend.asn
    low, high = ASN_RANGES[plan.scheme]
    spine_asn, leaf_first = _asn_firsts(intent)
    leaf_last = leaf_first + leaves - 1
    problems = []
    if not low <= spine_asn <= high:
        problems.append(Problem(f"spine ASN {spine_asn} is outside the {plan.scheme} range {low}-{high}", field=("backend", "asn", "spine")))
    if not (low <= leaf_first and leaf_last <= high):
        other = "private-4byte" if plan.scheme == "private-2byte" else "a lower leaf_first"
        problems.append(
            Problem(
                f"{leaves} leaf ASNs from {leaf_first} end at {leaf_last}, outside the {plan.scheme} range {low}-{high}",
                hint=f"use scheme: {other}" if plan.scheme == "private-2byte" else f"start leaves at {low + 1} or lower",
                field=("backend", "asn", "leaf_first" if plan.leaf_first is not None else "scheme"),
            )
        )
    if leaf_first <= spine_asn <= leaf_last:
        problems.append(
            Problem(f"the spine ASN {spine_asn} falls inside the leaf ASNs {leaf_first}-{leaf_last}", hint="move one of them", field=("backend", "asn"))
        )
    return problems


def _allocate_asns(intent: Intent, spines: list[Device], leaves: list[Device]) -> dict[str, int]:
    spine_asn, leaf_first = _asn_firsts(intent)
    asns = {spine.name: spine_asn for spine in spines}
    asns.update({leaf.name: leaf_first + i for i, leaf in enumerate(leaves)})
    return asns
