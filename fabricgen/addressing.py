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
from fabricgen.errors import DesignError, Problem, raise_if
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


def allocate_addresses(fabric: Fabric, sizing: BackendSizing, intent: Intent) -> AddressPlan:
    backend = intent.backend
    pools = backend.pools
    leaves = list(fabric.by_role(Role.LEAF))
    spines = list(fabric.by_role(Role.SPINE))
    plan = AddressPlan()

    nic_block_size = _block_size(sizing.leaf_downlinks, backend.nic_addressing)
    link_block_size = 1 << math.ceil(math.log2(2 * sizing.leaf_uplinks))
    loopback_pool = IPNetwork(str(pools.loopbacks))
    leaf_loopbacks = next(loopback_pool.subnet(loopback_pool.prefixlen + 1)) if loopback_pool.prefixlen < 32 else loopback_pool
    spine_loopbacks = (
        list(loopback_pool.subnet(loopback_pool.prefixlen + 2))[2] if loopback_pool.prefixlen < 31 else loopback_pool
    )
    raise_if(
        [
            *_fits("loopbacks", loopback_pool, leaf_loopbacks, len(leaves) + 1, "leaf loopbacks (the first half of the pool)"),
            *_fits("loopbacks", loopback_pool, spine_loopbacks, len(spines) + 1, "spine loopbacks (the third quarter of the pool)"),
            *_fits("gpu_nics", IPNetwork(str(pools.gpu_nics)), IPNetwork(str(pools.gpu_nics)), len(leaves) * nic_block_size,
                   f"{len(leaves)} leaves x {nic_block_size} addresses"),
            *_fits("fabric_links", IPNetwork(str(pools.fabric_links)), IPNetwork(str(pools.fabric_links)),
                   len(leaves) * link_block_size, f"{len(leaves)} leaves x {sizing.leaf_uplinks} /31 uplinks"),
        ],
        DesignError,
    )

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


def _allocate_asns(intent: Intent, spines: list[Device], leaves: list[Device]) -> dict[str, int]:
    plan = intent.backend.asn
    low, high = ASN_RANGES[plan.scheme]
    spine_asn = plan.spine if plan.spine is not None else low
    leaf_first = plan.leaf_first if plan.leaf_first is not None else spine_asn + 1
    leaf_last = leaf_first + len(leaves) - 1
    problems = []
    if not low <= spine_asn <= high:
        problems.append(Problem(f"spine ASN {spine_asn} is outside the {plan.scheme} range {low}-{high}", field=("backend", "asn", "spine")))
    if not (low <= leaf_first and leaf_last <= high):
        other = "private-4byte" if plan.scheme == "private-2byte" else "a lower leaf_first"
        problems.append(
            Problem(
                f"{len(leaves)} leaf ASNs from {leaf_first} end at {leaf_last}, outside the {plan.scheme} range {low}-{high}",
                hint=f"use scheme: {other}" if plan.scheme == "private-2byte" else f"start leaves at {low + 1} or lower",
                field=("backend", "asn", "leaf_first" if plan.leaf_first is not None else "scheme"),
            )
        )
    if leaf_first <= spine_asn <= leaf_last:
        problems.append(
            Problem(f"the spine ASN {spine_asn} falls inside the leaf ASNs {leaf_first}-{leaf_last}", hint="move one of them", field=("backend", "asn"))
        )
    raise_if(problems, DesignError)
    asns = {spine.name: spine_asn for spine in spines}
    asns.update({leaf.name: leaf_first + i for i, leaf in enumerate(leaves)})
    return asns
