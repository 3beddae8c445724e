"""Numbers: every address and subnet once, ASNs as planned, EVPN VNIs, VLANs and route-targets
unique.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import compress, repeat
from operator import add, and_, attrgetter, is_, itemgetter, le

from fabricgen.basics.errors import FieldPath, Problem
from fabricgen.basics.units import cidr_span, ipv4_ints, network_of
from fabricgen.compiler.addressing import InterfaceAddress
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import LinkKind, Network, Role


def addresses_unique(c: Compiled) -> Iterable[Problem]:
    """No address twice, no two subnets overlapping (a leaf's aggregate may contain its own /31s).
    Labels for the problems are made only when there is one: `_addresses_clash` looks first."""
    if _addresses_clash(c):
        yield from _address_problems(c)


def _addresses_clash(c: Compiled) -> bool:
    """Whether `_address_problems` finds anything: the same tests on the same addresses, without
    the labels (formatting one per address cost most of the check: a million at 131,072 GPUs)."""
    plan = c.addresses
    segments = [segment for overlay in (c.evpn or {}).values() for segment in overlay.segments]
    address_of = attrgetter("address")
    addresses = [
        *plan.loopbacks.values(),
        *map(address_of, plan.interfaces.values()),
        *map(address_of, plan.nic_subnet_gateways.values()),
        *map(address_of, plan.management.values()),
        *map(address_of, plan.management_subnets.values()),
        *plan.vteps.values(),
        *(segment.gateway for segment in segments),
    ]
    if len(set(addresses)) != len(addresses):
        return True
    spans = [cidr_span(address) for address in plan.loopbacks.values()]
    spans += [cidr_span(block) for block in plan.nic_blocks.values()]
    spans += [cidr_span(svi.cidr) for svi in plan.management_subnets.values()]
    spans += [cidr_span(vtep) for vtep in plan.vteps.values()]
    spans += [cidr_span(segment.subnet) for segment in segments]
    # the links sorted by kind in C (compress by an `is` test per link, no Python loop): a routed
    # link's subnet by its upper end, and both ends of host links (the leaf's is `b` as built; both,
    # so a graph built otherwise is still checked)
    links = c.fabric.links
    kinds = list(map(_kind_of, links))
    host_links = list(compress(links, map(is_, kinds, repeat(LinkKind.HOST))))
    routed_ends = [
        *map(_b_of, compress(links, map(is_, kinds, repeat(LinkKind.FABRIC)))),
        *map(_b_of, compress(links, map(is_, kinds, repeat(LinkKind.PEER)))),
        *map(_b_of, compress(links, map(is_, kinds, repeat(LinkKind.UPLINK)))),
    ]
    interfaces = plan.interfaces
    spans += _spans([address for address in map(interfaces.get, routed_ends) if address is not None])
    spans.sort()
    reach_end = -1
    for first, last in spans:
        if first <= reach_end:
            return True
        if last > reach_end:
            reach_end = last
    # a leaf's p2p host ports inside its NIC block, as _address_problems checks every such port of the plan
    host_ends = [*map(_a_of, host_links), *map(_b_of, host_links)]
    host_ports = list(filter(interfaces.__contains__, compress(host_ends, map(is_, map(_role_of, host_ends), repeat(Role.LEAF)))))
    leaves = list(map(_device_name_of, host_ports))
    blocks = {leaf: cidr_span(plan.nic_blocks[leaf]) for leaf in dict.fromkeys(leaves)}
    block_of = list(map(blocks.__getitem__, leaves))
    firsts = _firsts(list(map(interfaces.__getitem__, host_ports)))
    return not (all(map(le, map(itemgetter(0), block_of), firsts)) and all(map(le, firsts, map(itemgetter(1), block_of))))


_kind_of, _a_of, _b_of = attrgetter("kind"), attrgetter("a"), attrgetter("b")
_role_of, _device_name_of, _name_of = attrgetter("device.role"), attrgetter("device.name"), attrgetter("name")
_address_of, _prefixlen_of = attrgetter("address"), attrgetter("prefixlen")
_NETWORK_MASKS = [-(1 << (32 - prefixlen)) for prefixlen in range(33)]  # every bit above the host part
_HOST_PARTS = [(1 << (32 - prefixlen)) - 1 for prefixlen in range(33)]  # a subnet's last address less its first


def _firsts(addresses: list[InterfaceAddress], prefixlens: list[int] | None = None) -> list[int]:
    """The first address of each one's subnet, parsed and masked in C (no Python call per address)."""
    prefixlens = list(map(_prefixlen_of, addresses)) if prefixlens is None else prefixlens
    return list(map(and_, ipv4_ints(map(_address_of, addresses)), map(_NETWORK_MASKS.__getitem__, prefixlens)))


def _spans(addresses: list[InterfaceAddress]) -> list[tuple[int, int]]:
    """cidr_span(address.cidr) of each, without making the texts, in C as `_firsts`."""
    prefixlens = list(map(_prefixlen_of, addresses))
    firsts = _firsts(addresses, prefixlens)
    return list(zip(firsts, map(add, firsts, map(_HOST_PARTS.__getitem__, prefixlens)), strict=True))


def _address_problems(c: Compiled) -> Iterable[Problem]:
    plan = c.addresses
    owners: dict[str, str] = {}
    for device, address in plan.loopbacks.items():
        yield from _claim(owners, address, f"{device} Loopback0", device, "Loopback0")
    for port, interface in plan.interfaces.items():
        yield from _claim(owners, interface.address, port.label, port.device.name, port.name)
    for leaf, svi in plan.nic_subnet_gateways.items():
        yield from _claim(owners, svi.address, f"{leaf} gateway", leaf, None)
    for port, interface in plan.management.items():
        yield from _claim(owners, interface.address, f"{port.label} (management)", port.device.name, port.name)
    for switch, svi in plan.management_subnets.items():
        yield from _claim(owners, svi.address, f"{switch} management gateway", switch, None)
    for leaf, vtep in plan.vteps.items():
        yield from _claim(owners, vtep, f"{leaf} VTEP", leaf, "loopback1")
    for overlay in (c.evpn or {}).values():
        for segment in overlay.segments:  # the anycast gateway is one address shared by the segment's leaves
            yield from _claim(owners, segment.gateway, f"anycast gateway of segment {segment.name}", f"segment {segment.name}", None)

    # Subnets: loopback /32s, every link's /31 once, every leaf's NIC block; sorted sweep for overlap.
    subnets: list[tuple[int, int, str, str | None, str | None]] = []
    for device, address in plan.loopbacks.items():
        subnets.append((*cidr_span(address), f"{device} loopback", device, "Loopback0"))
    for leaf, block in plan.nic_blocks.items():
        subnets.append((*cidr_span(block), f"{leaf} GPU block {block}", leaf, None))
    for switch, svi in plan.management_subnets.items():
        subnets.append((*cidr_span(svi.cidr), f"{switch} management subnet {network_of(svi.cidr)}", switch, None))
    for leaf, vtep in plan.vteps.items():
        subnets.append((*cidr_span(vtep), f"{leaf} VTEP", leaf, "loopback1"))
    for overlay in (c.evpn or {}).values():
        for segment in overlay.segments:
            subnets.append((*cidr_span(segment.subnet), f"segment {segment.name} {segment.subnet}", None, None))
    for link in c.fabric.links:
        if link.kind in (LinkKind.FABRIC, LinkKind.PEER, LinkKind.UPLINK) and link.b in plan.interfaces:
            cidr = plan.interfaces[link.b].cidr
            subnets.append((*cidr_span(cidr), f"link {link.id} {network_of(cidr)}", link.b.device.name, link.b.name))
    subnets.sort()
    reach_end, reach_label = -1, ""
    for first, last, label, owner, owner_port in subnets:
        if first <= reach_end:
            yield Problem(f"{label} overlaps {reach_label}", device=owner, port=owner_port)
        if last > reach_end:
            reach_end, reach_label = last, label

    # p2p NIC /31s must sit inside the block their leaf advertises, or the aggregate would lie
    for port, interface in plan.interfaces.items():
        if port.device.role is Role.LEAF and port.link and port.link.kind is LinkKind.HOST:
            first, last = cidr_span(plan.nic_blocks[port.device.name])
            if not first <= cidr_span(interface.cidr)[0] <= last:
                yield Problem(f"{interface.cidr} is outside the leaf's GPU block {plan.nic_blocks[port.device.name]}", device=port.device.name, port=port.name)


def _claim(owners: dict[str, str], address: str, label: str, device: str, port: str | None) -> Iterable[Problem]:
    if address in owners:
        yield Problem(f"address {address} is also on {owners[address]}", device=device, port=port)
    else:
        owners[address] = label


def asns_as_planned(c: Compiled) -> Iterable[Problem]:
    """RFC 7938: the spines (3 tiers: of one pod) share one ASN, the cores share another; every
    leaf has its own (or, reused per pod, its own within its pod), none a spine's or core's."""
    for network, plan in c.plans.items():
        yield from _asns_of(c, network, plan.leaf_asns_per_pod)


def _asns_of(c: Compiled, network: Network, per_pod: bool) -> Iterable[Problem]:
    asns = c.addresses.asns
    upper: dict[int, str] = {}  # ASN -> the spine set or core tier that owns it
    for role in (Role.SPINE, Role.CORE):
        shared: dict[int | None, set[int]] = defaultdict(set)  # pod (None: one set) -> ASNs
        first: dict[int | None, str] = {}
        for device in c.fabric.by_role(role, network):
            shared[device.pod].add(asns[device.name])
            first.setdefault(device.pod, device.name)
        for pod, found in shared.items():
            owner = f"{role.value}s" + (f" of pod {pod}" if pod is not None else "")
            if len(found) > 1:
                yield Problem(f"the {owner} use {len(found)} different ASNs; they share one", device=first[pod])
            for asn in found:
                if asn in upper:
                    yield Problem(f"the {owner} use ASN {asn}, also used by the {upper[asn]}", device=first[pod])
                upper.setdefault(asn, owner)
    by_asn: dict[tuple[int | None, int], list[str]] = defaultdict(list)
    for leaf in c.fabric.by_role(Role.LEAF, network):
        by_asn[(leaf.pod if per_pod else None, asns[leaf.name])].append(leaf.name)
    for (_, asn), leaves in by_asn.items():
        if len(leaves) > 1:
            yield Problem(f"ASN {asn} is shared with {', '.join(leaves[1:])}" + (" in the same pod" if per_pod else ""), device=leaves[0])
        if asn in upper:
            yield Problem(f"ASN {asn} is the {upper[asn]}' ASN", device=leaves[0])


def evpn_numbers_unique(c: Compiled) -> Iterable[Problem]:
    """In each EVPN fabric: every VNI names one segment or one tenant VRF, every VLAN is in range
    and carries one of them, and no route-target is shared by two VNIs (their routes would leak
    into each other)."""
    for overlay in (c.evpn or {}).values():
        section = overlay.section
        vnis: dict[int, str] = {}
        vlans: dict[int, str] = {}
        targets: dict[str, str] = {}
        # (label, VNI, VLAN, route-target, then the intent field of each of the three)
        entries: list[tuple[str, int, int, str, FieldPath, FieldPath, FieldPath]] = [
            (
                f"segment {s.name}",
                s.vni,
                s.vlan,
                s.route_target,
                (section, "evpn", "l2_vni_base"),
                (section, "evpn", "vlan_base"),
                (section, "evpn", "l2_vni_base"),
            )
            for s in overlay.segments
        ]
        for t, spec in zip(overlay.tenants, overlay.settings.tenants, strict=True):
            here = (section, "evpn", "tenants", t.number - 1)
            entries.append(
                (
                    f"tenant {t.name}",
                    t.l3_vni,
                    t.l3_vlan,
                    t.route_target,
                    here + ("l3_vni",) if spec.l3_vni is not None else (section, "evpn", "l3_vni_base"),
                    (section, "evpn", "l3_vlan_base"),
                    here + ("route_target",) if spec.route_target is not None else (section, "evpn", "route_target_asn"),
                )
            )
        for label, vni, vlan, target, vni_field, vlan_field, target_field in entries:
            if vni > 16777214:
                yield Problem(f"{label}: VNI {vni} is above 16777214", hint="lower the VNI base", field=vni_field)
            if vni in vnis:
                yield Problem(
                    f"{label} and {vnis[vni]} both use VNI {vni}", hint="give each segment and tenant its own VNI (keep the bases apart)", field=vni_field
                )
            vnis.setdefault(vni, label)
            if not 2 <= vlan <= 4094:
                yield Problem(f"{label}: VLAN {vlan} is outside 2-4094", hint="lower the VLAN base", field=vlan_field)
            if vlan in vlans:
                yield Problem(f"{label} and {vlans[vlan]} both use VLAN {vlan}", hint="keep vlan_base and l3_vlan_base ranges apart", field=vlan_field)
            vlans.setdefault(vlan, label)
            if target in targets:
                yield Problem(
                    f"{label} and {targets[target]} both use route-target {target}: their routes would be imported into each other",
                    hint="give each VNI its own route-target (the default is route_target_asn:VNI)",
                    field=target_field,
                )
            targets.setdefault(target, label)
