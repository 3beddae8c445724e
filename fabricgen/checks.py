"""Invariants of a compiled fabric, checked before anything is rendered.

Each check is a function of the compiled fabric that returns the problems it finds, each naming
the device and port. They are independent of how the design stage built the graph, so they also
catch a broken user catalog or a bug in the builder. All run in time linear in links.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from difflib import get_close_matches
from fractions import Fraction
from functools import partial
from itertools import compress, repeat
from operator import add, and_, attrgetter, is_, itemgetter, le
from typing import NamedTuple

from pydantic import ValidationError

from fabricgen.addressing import InterfaceAddress
from fabricgen.catalog.model import PortGroup
from fabricgen.compiled import Compiled
from fabricgen.design.graph import FABRIC_ROLES, SERVER_ROLES, Device, Link, LinkKind, Network, Port, Role
from fabricgen.errors import FieldPath, Problem
from fabricgen.intent.management import Management
from fabricgen.intent.model import LoadBalancing, Qos, QosOverride
from fabricgen.qos import GENERIC, INTENT, FabricThresholds, effective_qos, pg_reserved_bytes
from fabricgen.render import adapter_notes, load_balancing_gaps, security_gaps, settings_gaps, unrendered_management, watchdog_values
from fabricgen.units import cidr_span, format_ratio, ipv4_ints, network_of

NOS_NAMES = {"nxos": "NX-OS", "sonic": "SONiC", "eos": "EOS"}  # as notes name them


def ports_used_once(c: Compiled) -> Iterable[Problem]:
    # quick pass, in C: when every link end is the port registered under its name on the device of
    # its name, two ends with one (device, port) name are one object, so distinct objects (a set by
    # identity, no name tuples made) mean no port is used twice; names only if that fails
    links = c.fabric.links
    ends = [*map(_a_of, links), *map(_b_of, links)]
    ports_of = {name: device.ports for name, device in c.fabric.devices.items()}
    registered = map(dict.get, map(ports_of.get, map(_device_name_of, ends), repeat({})), map(_name_of, ends))
    if all(map(is_, registered, ends)) and len(set(ends)) == len(ends):  # a set from a list is sized at once
        return
    seen: dict[tuple[str, str], str] = {}
    for link in c.fabric.links:
        for port in (link.a, link.b):
            key = (port.device.name, port.name)
            if key in seen:
                yield Problem(f"port is used by two links, {seen[key]} and {link.id}", device=key[0], port=key[1])
            else:
                seen[key] = link.id


def link_speeds_match(c: Compiled) -> Iterable[Problem]:
    for link in c.fabric.links:
        if link.a.speed_gbps != link.b.speed_gbps:
            yield Problem(
                f"link {link.id} joins {link.a.speed_gbps}G to {link.b.speed_gbps}G at {link.b.label}",
                device=link.a.device.name,
                port=link.a.name,
            )


def switch_ports_exist(c: Compiled, walked: _SwitchPorts | None = None) -> Iterable[Problem]:
    """Every port is a real cage (or breakout sub-port) of the switch model, at a speed the cage
    offers, with no cage used at two speeds and no more ports than the model has."""
    yield from (_switch_ports(c) if walked is None else walked).cage_problems


def one_optic_per_cage(c: Compiled, walked: _SwitchPorts | None = None) -> Iterable[Problem]:
    """Sub-ports of a broken-out cage share one transceiver, so they must want the same one."""
    yield from (_switch_ports(c) if walked is None else walked).optic_problems


class _SwitchPorts(NamedTuple):
    """What switch_ports_exist, one_optic_per_cage and ecn_below_pfc_trigger read off the switches'
    ports, from one walk over them (~900,000 at 131,072 GPUs; run_checks makes it once for all three)."""

    cage_problems: list[Problem]  # switch_ports_exist's, in switch and port order
    optic_problems: list[Problem]  # one_optic_per_cage's, likewise
    speeds: dict[Device, set[int]]  # every switch's data-port speeds (mgmt0 and console left out)


def _switch_ports(c: Compiled) -> _SwitchPorts:
    cage_problems: list[Problem] = []
    optic_problems: list[Problem] = []
    speeds: dict[Device, set[int]] = {}
    # model -> (cage -> its port group, its copper cages, the fanouts asked so far)
    groups_of: dict[str, tuple[dict[int, PortGroup], set[int], dict[tuple[int, int], int]]] = {}
    for device in c.fabric.switches():
        model = c.catalog.switches[device.model]
        if device.model not in groups_of:
            groups = model.cage_groups
            groups_of[device.model] = (groups, {cage for cage, group in groups.items() if group.form_factor == "RJ45"}, {})
        groups, copper, fanouts = groups_of[device.model]  # fanouts: (group's first cage, speed) -> group.fanout_at(speed)
        first_in: dict[int, Port] = {}  # cage -> its first port (not a tuple made per port)
        modes: dict[int, int] = {}
        used: dict[int, int] = {}  # speed -> data ports at it, copper cages left out
        copper_speeds: set[int] = set()  # the speeds of data ports in copper cages, which `used` leaves out
        for port in device.ports.values():
            first = first_in.setdefault(port.cage, port)
            if first.optic != port.optic:
                optic_problems.append(
                    Problem(
                        f"cage {port.cage} would need {first.optic} for {first.name} and {port.optic} for this port; a cage holds one transceiver",
                        hint="use the same transceiver for host and fabric links (backend.optics), or a switch whose host and fabric ports are separate cages",
                        device=device.name,
                        port=port.name,
                    )
                )
            if not port.front_panel:
                continue  # mgmt0 and console are fixed ports, not cages
            if port.cage in copper:
                copper_speeds.add(port.speed_gbps)
            else:
                used[port.speed_gbps] = used.get(port.speed_gbps, 0) + 1
            group = groups.get(port.cage)
            if group is None:
                cage_problems.append(Problem(f"{device.model} has no cage {port.cage}", device=device.name, port=port.name))
                continue
            if port.sub == 0:
                # copper cages negotiate down (a 10GBASE-T port runs a 1G BMC)
                fits = group.speed == port.speed_gbps or (group.form_factor == "RJ45" and port.speed_gbps <= group.speed)
            else:
                fanout = fanouts.get((group.first, port.speed_gbps))
                if fanout is None:
                    fanout = fanouts[(group.first, port.speed_gbps)] = group.fanout_at(port.speed_gbps)
                fits = group.speed != port.speed_gbps and port.sub <= fanout
            if not fits:
                cage_problems.append(
                    Problem(
                        f"cage {port.cage} ({group.form_factor} {group.speed}G) cannot run a {port.speed_gbps}G "
                        f"{'sub-port ' + str(port.sub) if port.sub else 'port'}",
                        device=device.name,
                        port=port.name,
                    )
                )
            if modes.setdefault(port.cage, port.speed_gbps) != port.speed_gbps:
                cage_problems.append(Problem(f"cage {port.cage} is used at {modes[port.cage]}G and {port.speed_gbps}G", device=device.name, port=port.name))
        for speed, count in used.items():
            if count > model.ports_at(speed):
                cage_problems.append(Problem(f"{count} ports at {speed}G, {device.model} has {model.ports_at(speed)}", device=device.name))
        speeds[device] = copper_speeds.union(used)
    return _SwitchPorts(cage_problems, optic_problems, speeds)


def leaf_ratio_holds(c: Compiled, tiers: dict[Device, _TierPorts] | None = None) -> Iterable[Problem]:
    """Downlink:uplink bandwidth as built at every leaf, and (3 tiers) at every spine."""
    tiers = _tier_ports(c) if tiers is None else tiers
    for leaf in c.fabric.by_role(Role.LEAF):
        plan = c.plan_of(leaf.network)
        if plan.spines == 0:  # rail-only, a rail on one leaf: no tier above, so no ratio to hold
            if any(p.link and p.link.kind is LinkKind.FABRIC for p in leaf.ports.values()):
                yield Problem("leaf of a fabric without spines has a fabric link", device=leaf.name)
            continue
        yield from _ratio_at(leaf, tiers[leaf], plan.built_ratio, "leaf")
    for network, plan in c.plans.items():
        if plan.tiers == 3:
            for spine in c.fabric.by_role(Role.SPINE, network):
                yield from _ratio_at(spine, tiers[spine], plan.spine_built_ratio, "spine")  # type: ignore[arg-type]


def _ratio_at(device: Device, ports: _TierPorts, wanted: Fraction, what: str) -> Iterable[Problem]:
    down, up = ports.down_gbps, ports.up_gbps
    if up == 0:
        yield Problem(f"{what} has no uplinks", device=device.name)
    elif Fraction(down, up) > wanted:
        yield Problem(
            f"downlink:uplink is {format_ratio(Fraction(down, up))} ({down}G:{up}G), more than the {format_ratio(wanted)} asked",
            device=device.name,
        )


class _TierPorts(NamedTuple):
    """What leaf_ratio_holds and every_leaf_reaches_every_spine read off a leaf's or spine's ports."""

    uplinks: list[Link]  # the fabric links where it is the lower end `a`
    up_gbps: int  # their bandwidth
    down_gbps: int  # the bandwidth of its downlinks: host links (a spine: fabric links) where it is `b`


def _tier_ports(c: Compiled) -> dict[Device, _TierPorts]:
    """_TierPorts of every leaf, and with 3 tiers of every spine, from one walk over their ports
    (run_checks makes it once for both checks that read it: ~900,000 ports at 131,072 GPUs)."""
    found: dict[Device, _TierPorts] = {}
    fabric = LinkKind.FABRIC  # bound once: a member lookup on an Enum class costs 70 ns, per port here
    for network, plan in c.plans.items():
        walked = [(Role.LEAF, LinkKind.HOST), (Role.SPINE, fabric)] if plan.tiers == 3 else [(Role.LEAF, LinkKind.HOST)]
        for role, down_kind in walked:
            for device in c.fabric.by_role(role, network):
                uplinks: list[Link] = []
                down = up = 0
                for port in device.ports.values():
                    link = port.link
                    if link is None:
                        continue
                    if link.kind is down_kind and link.b is port:
                        down += port.speed_gbps
                    if link.kind is fabric and link.a is port:
                        uplinks.append(link)
                        up += port.speed_gbps
                found[device] = _TierPorts(uplinks, up, down)
    return found


def rails_aligned(c: Compiled) -> Iterable[Problem]:
    host, backend = LinkKind.HOST, Network.BACKEND  # bound once: a member lookup on an Enum class costs 70 ns
    for link in c.fabric.links:
        if link.kind is not host or link.network is not backend:
            continue
        nic, leaf_port = link.a, link.b
        leaf, node = leaf_port.device, nic.device
        served = leaf.rails or (leaf.rail,)
        if nic.cage not in served or leaf.su != node.su:
            on = f"rails {', '.join(map(str, served))}" if len(served) > 1 else f"rail {leaf.rail}"
            yield Problem(
                f"NIC {nic.cage} of {node.name} (unit {node.su}) lands on {leaf.name} (unit {leaf.su}, {on}); it belongs on rail {nic.cage} of unit {node.su}",
                device=leaf.name,
                port=leaf_port.name,
            )


def every_leaf_reaches_every_spine(c: Compiled, tiers: dict[Device, _TierPorts] | None = None) -> Iterable[Problem]:
    """The same number of links from every leaf to every spine of its pod and plane (ECMP width =
    the pod's spine count), and with 3 tiers from every spine to every core of its group; never
    a link outside them; no switch with more equal-cost uplinks than it installs."""
    tiers = _tier_ports(c) if tiers is None else tiers
    for network, plan in c.plans.items():
        uppers: dict[tuple, list[str]] = defaultdict(list)  # (plane, pod or core group) -> the tier above
        for spine in c.fabric.by_role(Role.SPINE, network):
            uppers[("spine", spine.plane, spine.pod)].append(spine.name)
        for core in c.fabric.by_role(Role.CORE, network):
            uppers[("core", core.plane, core.core_group)].append(core.name)
        for leaf in c.fabric.by_role(Role.LEAF, network):
            yield from _mesh(c, leaf, tiers[leaf].uplinks, uppers[("spine", leaf.plane, leaf.pod)], plan.links_per_spine, "spine")
        if plan.tiers == 3:
            for spine in c.fabric.by_role(Role.SPINE, network):
                yield from _mesh(c, spine, tiers[spine].uplinks, uppers[("core", spine.plane, spine.core_group)], plan.links_per_core, "core")


def _mesh(c: Compiled, device: Device, uplinks: list[Link], expected_peers: list[str], expected: int, tier: str) -> Iterable[Problem]:
    per_peer = Counter(map(_upper_device_name, uplinks))  # an uplink's peer is its upper end `b`
    for peer in expected_peers:
        if per_peer.get(peer, 0) != expected:
            yield Problem(
                f"{per_peer.get(peer, 0)} links to {peer}, expected {expected}: ECMP width would be "
                f"{sum(1 for name in expected_peers if per_peer.get(name))} of {len(expected_peers)} {tier}s",
                device=device.name,
            )
    strays = sorted(set(per_peer) - set(expected_peers))
    if strays:
        yield Problem(f"uplinks to {', '.join(strays)}, outside its own {'pod' if tier == 'spine' else 'core group'}", device=device.name)
    model = c.catalog.switches[device.model]
    paths = sum(per_peer.values())
    if paths > model.max_ecmp_paths:
        yield Problem(f"{paths} equal-cost uplinks, {device.model} installs at most {model.max_ecmp_paths}", device=device.name)


_upper_device_name = attrgetter("b.device.name")


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
        if link.kind in (LinkKind.FABRIC, LinkKind.UPLINK) and link.b in plan.interfaces:
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


def management_complete(c: Compiled) -> Iterable[Problem]:
    """With an OOB network: every switch's mgmt0 and console and every server's BMC cabled, and
    every management port addressed."""
    if c.oob is None:
        return
    for device in c.fabric.devices.values():
        if device.is_switch:
            model = c.catalog.switches[device.model]
            for name in (model.management_port[device.nos], model.console_port):  # type: ignore[index]
                if name not in device.ports:
                    yield Problem(f"{name} is not cabled", device=device.name, port=name)
        elif device.role in SERVER_ROLES:
            bmc = c.catalog.nodes[device.model].bmc
            if bmc is not None:
                for n in range(1, bmc.count + 1):
                    if bmc.names.format(n=n) not in device.ports:
                        yield Problem("BMC port is not cabled", device=device.name, port=bmc.names.format(n=n))
    management, addressed = LinkKind.MANAGEMENT, c.addresses.management  # bound once, not per link
    for link in c.fabric.links:
        if link.kind is management and link.a not in addressed:
            yield Problem("management port has no address", device=link.a.device.name, port=link.a.name)


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


def load_balancing_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf and spine can do its fabric's load-balancing mode and hash fields: the catalog
    says what the hardware does under its NOS, the NOS adapter what fabricgen can write. One
    problem per fabric, switch model and NOS (and setting), not one per switch."""
    for plan in c.plans.values():
        lb = plan.spec.load_balancing
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for role in FABRIC_ROLES:
            for device in c.fabric.by_role(role, plan.network):
                groups[(device.model, device.nos)].append(device.name)  # type: ignore[index]
        for (pid, nos), names in sorted(groups.items()):
            model = c.catalog.switches[pid]
            gaps = {gap.field: gap for gap in load_balancing_gaps(nos, lb)}
            affected = f"{len(names)} switch{'es' if len(names) != 1 else ''}: {names[0]}"
            if len(names) > 1:
                affected += f" and {len(names) - 1} more"

            if lb.mode not in model.load_balancing_modes(nos):
                why, hint = f"{pid} on {nos} cannot do {lb.mode} load balancing{_dlb_note(c, pid, nos, lb.mode)}", "use mode: ecmp"
            elif "mode" in gaps:
                why, hint = f"{pid} on {nos}: {gaps['mode'].message}", gaps["mode"].hint
            else:
                why = None
            if why:
                others = _doing(c, lambda m, n, lb=lb: lb.mode in m.load_balancing_modes(n) and "mode" not in _gap_fields(n, lb))
                yield Problem(
                    f"{why} ({affected})",
                    hint=hint + (f", or a switch that does {lb.mode}: {others}" if others else ""),
                    field=(plan.section, "load_balancing", "mode"),
                )

            missing = [f for f in lb.hash_fields if f not in model.hash_fields_on(nos)]
            if missing:
                why, hint = f"{pid} on {nos} cannot hash on {', '.join(missing)}", f"hash on fields it can ({', '.join(model.hash_fields_on(nos))})"
            elif "hash_fields" in gaps:
                why, hint = f"{pid} on {nos}: {gaps['hash_fields'].message}", gaps["hash_fields"].hint
            else:
                why = None
            if why:
                others = _doing(c, lambda m, n, lb=lb: set(lb.hash_fields) <= set(m.hash_fields_on(n)) and "hash_fields" not in _gap_fields(n, lb))
                yield Problem(
                    f"{why} ({affected})",
                    hint=hint + (f", or a switch that can hash on them all: {others}" if others else ""),
                    field=(plan.section, "load_balancing", "hash_fields"),
                )


def _dlb_note(c: Compiled, pid: str, nos: str, mode: str) -> str:
    """Why the feature matrix has DLB in no release for this model (its `why_not`), when it says."""
    flavour = c.catalog.nos_releases.get(nos)
    dlb = flavour.features.get("dlb") if flavour is not None else None
    if mode == "ecmp" or dlb is None or pid not in dlb.why_not:
        return ""
    return f": {dlb.why_not[pid]} ({dlb.source})"


def _gap_fields(nos: str, lb: LoadBalancing) -> set[str]:
    return {gap.field for gap in load_balancing_gaps(nos, lb)}


def _doing(c: Compiled, can: Callable) -> str:
    """Catalog switches, with the NOS, for which `can(model, nos)` holds: "A (nxos), B (sonic)"."""
    return ", ".join(f"{pid} ({nos})" for pid, model in c.catalog.switches.items() for nos in model.nos if can(model, nos))


def security_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf, spine and core's NOS adapter can write its network's BGP security and its
    management section (SONiC: no TCP-AO in FRR, SNMPv3 user names of 4+ characters). One problem
    per network, role and gap, at the intent field that asks for it."""
    for plan in c.plans.values():
        spec = plan.spec
        for role in FABRIC_ROLES:
            devices = list(c.fabric.by_role(role, plan.network))
            if not devices:
                continue
            present = [(path, level) for path, level in c.management_levels(plan.network, role) if level is not None]
            management = Management.effective(level for _, level in present)
            for nos in sorted({d.nos for d in devices if d.nos is not None}):  # all of them: fabric roles are switches
                for gap in security_gaps(nos, spec.bgp_security, management):
                    head, _, rest = gap.field.partition(".")
                    if head == "bgp_security":
                        field = (plan.section, "bgp_security", *rest.split("."))
                    else:
                        sub = rest.split(".")[0]
                        # the innermost level that sets the sub-section is where to change it
                        where = next((path for path, level in reversed(present) if sub in level.model_fields_set), present[0][0])
                        field = (*where, *rest.split("."))
                    names = [d.name for d in devices if d.nos == nos]
                    yield Problem(f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''} ({nos}): {gap.message}", hint=gap.hint, field=field)


def settings_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf, spine and core's NOS adapter can write its network's own settings (EOS: a BFD
    multiplier of 3 or more). One problem per network, NOS and gap."""
    for plan in c.plans.values():
        devices = [d for role in FABRIC_ROLES for d in c.fabric.by_role(role, plan.network)]
        for nos in sorted({d.nos for d in devices if d.nos is not None}):
            for gap in settings_gaps(nos, plan.spec):
                names = [d.name for d in devices if d.nos == nos]
                yield Problem(f"{_names(names)} ({nos}): {gap.message}", hint=gap.hint, field=(plan.section, *gap.field.split(".")))


def _adapter_notes(c: Compiled) -> list[str]:
    """What each NOS adapter says of a network it writes for: left to the switch, or written
    otherwise than asked (EOS: its MTU ceiling, the platform's lossless headroom)."""
    notes = []
    for plan in c.plans.values():
        noses = sorted({d.nos for role in FABRIC_ROLES for d in c.fabric.by_role(role, plan.network) if d.nos is not None})
        notes += [f"{NOS_NAMES.get(nos, nos)} {plan.section} switches: {note}" for nos in noses for note in adapter_notes(nos, plan.spec)]
    return notes


def _switch_groups(c: Compiled) -> dict[tuple[Network, Role, str], list[str]]:
    """Switch names by (network, role, model): what shares one NOS target."""
    groups: dict[tuple[Network, Role, str], list[str]] = defaultdict(list)
    for device in c.fabric.switches():
        groups[(device.network, device.role, device.model)].append(device.name)
    return groups


def _names(names: list[str]) -> str:
    return f"{names[0]}{f' and {len(names) - 1:,} more' if len(names) > 1 else ''}"


def nos_releases_known(c: Compiled) -> Iterable[Problem]:
    """Every switch's target release (the role's nos_release, else the model's) is one a catalog
    flavour of its NOS lists: configs are written for a named release, never a guess."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            c.nos_target(network, role, model)
        except KeyError:
            where, spec = c.role_spec(network, role)
            release = spec.nos_release or c.catalog.default_release(model, spec.nos)
            yield Problem(
                f"{_names(names)} ({model}): {NOS_NAMES[spec.nos]} release {release} is not one fabricgen renders for",
                hint=f"use one of: {', '.join(c.catalog.releases_of(spec.nos))} (or add a flavour in a catalog file)",
                field=(*where, "nos_release"),
            )


def _feature_needs(c: Compiled, network: Network, role: Role, model: str, nos: str) -> list[tuple[str, str, FieldPath]]:
    """What a switch of this role asks of its release: (feature, what for, intent field)."""
    if role is Role.OOB_SWITCH:
        return []
    plan = c.plans[network]
    spec = plan.spec
    needs: list[tuple[str, str, FieldPath]] = []
    if role is Role.LEAF and c.evpn_of(network) is not None:
        needs.append(("evpn-anycast-gateway", "the EVPN anycast gateway of every segment", (plan.section, "routing")))
    lb = spec.load_balancing
    writable = "mode" not in _gap_fields(nos, lb)  # load_balancing_supported reports what is not
    if lb.mode != "ecmp" and writable and lb.mode in c.catalog.switches[model].load_balancing_modes(nos):
        needs.append(("dlb", f"{lb.mode} load balancing", (plan.section, "load_balancing", "mode")))
    if "ipv6-flow-label" in lb.hash_fields:
        needs.append(("ipv6-flow-label-hash", "hashing on the IPv6 flow label", (plan.section, "load_balancing", "hash_fields")))
    if spec.qos.enabled and spec.qos.pfc_watchdog.enabled:
        needs.append(("pfc-watchdog", "the PFC watchdog", (plan.section, "qos", "pfc_watchdog", "enabled")))
    if nos == "sonic":
        # config_db tables and fields that exist from one sonic-buildimage branch on (nos.yaml)
        needs.append(("generic-hash", "the ECMP hash fields (SWITCH_HASH)", (plan.section, "load_balancing", "hash_fields")))
        levels = c.management_levels(network, role)
        management = Management.effective(level for _, level in levels)
        if management is not None:
            where = next(field for field, level in reversed(levels) if level is not None)  # the innermost section
            needs.append(("password-hardening", "the password policy (PASSW_HARDENING)", (*where, "password_policy")))
            if management.access is not None:
                # the idle timeout is left out (with a note) where SSH_SERVER lacks it: nos/sonic/render.py
                needs.append(("ssh-server-policies", "the SSH server policy (SSH_SERVER)", (*where, "access")))
            if management.banner:
                needs.append(("banner-message", "the login banner (BANNER_MESSAGE)", (*where, "banner")))
    return needs


def features_in_release(c: Compiled) -> Iterable[Problem]:
    """Every feature a switch's config uses exists in its target release (the catalog's feature
    matrix). A problem names the minimum release that has it, or the setting to change when no
    release of the flavour does."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        flavour = c.catalog.nos_releases[target.flavour]
        for feature, what, field in _feature_needs(c, network, role, model, target.nos):
            if feature in target.features:
                continue
            since = flavour.features[feature].since_on(model)
            head = f"{_names(names)} ({model}, {NOS_NAMES[target.nos]} {target.release}): {what}"
            source = flavour.features[feature].source
            if since is None:
                yield Problem(
                    f"{head} exists in no {flavour.description} release fabricgen knows ({source})", hint="change this setting for these switches", field=field
                )
            else:
                yield Problem(
                    f"{head} needs {NOS_NAMES[target.nos]} {since} or later ({source})",
                    hint=f"set nos_release: {since}{'' if since == 'master' else ' (or later)'} for this role",
                    field=target.field,
                )


def watchdog_in_range(c: Compiled) -> Iterable[Problem]:
    """Every PFC watchdog number a switch's config carries (the poll interval; on NX-OS the
    multipliers detection and restoration become) lies in the range its target release documents
    (nos.yaml pfc-watchdog `parameters`): the fabric's profile and each switch's override."""
    for (network, role, model), names in _switch_groups(c).items():
        if role is Role.OOB_SWITCH:
            continue
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        if "pfc-watchdog" not in target.features:
            continue  # features_in_release reports it
        plan = c.plans[network]
        spec = plan.spec
        parameters = c.catalog.nos_releases[target.flavour].features["pfc-watchdog"].parameters
        profiles: list[tuple[FieldPath, Qos, list[str]]] = [((plan.section, "qos", "pfc_watchdog"), spec.qos, names)]
        members = set(names) if spec.qos_overrides else set()
        for name, override in spec.qos_overrides.items():
            if override.pfc_watchdog is not None and name in members:
                try:
                    profiles.append(((plan.section, "qos_overrides", name, "pfc_watchdog"), override.apply(spec.qos), [name]))
                except ValidationError:
                    continue  # qos_overrides_name_switches reports it
        for where, qos, affected in profiles:
            if not (qos.enabled and qos.pfc_watchdog.enabled):
                continue
            for parameter, (value, field) in watchdog_values(target.nos, qos.pfc_watchdog).items():
                accepted = parameters[parameter].at(target.release) if parameter in parameters else None
                if accepted is None or accepted.min <= value <= accepted.max:
                    continue
                derived = "" if parameter == "poll-interval" or target.nos != "nxos" else f" gives {parameter} {value}, but"
                yield Problem(
                    f"{_names(affected)} ({model}, {NOS_NAMES[target.nos]} {target.release}): {field} {getattr(qos.pfc_watchdog, field)}"
                    f"{derived} is outside {accepted.min}-{accepted.max} for `{parameters[parameter].syntax}` ({parameters[parameter].source})",
                    hint=f"choose {field} so that {parameter} is {accepted.min}-{accepted.max}",
                    field=(*where, field),
                )


def qos_overrides_name_switches(c: Compiled) -> Iterable[Problem]:
    """Every `qos_overrides` key is a leaf or spine of its own fabric, on a fabric with QoS on, and
    the profile it makes still holds together (e.g. its priorities stay apart)."""
    for network, plan in c.plans.items():
        spec = plan.spec
        if not spec.qos_overrides:
            continue
        switches = [d.name for d in c.fabric.switches() if d.network is network and d.role in FABRIC_ROLES]
        known = set(switches)
        for name in spec.qos_overrides:
            field = (plan.section, "qos_overrides", name)
            if name not in known:
                examples = get_close_matches(name, switches, n=3, cutoff=0) or switches[:3]
                yield Problem(
                    f"{name!r} is not a switch of the {plan.section} fabric",
                    hint=f"name one of its {len(switches)} leaves and spines, e.g. {', '.join(examples)}",
                    field=field,
                )
            elif not spec.qos.enabled:
                yield Problem(
                    f"QoS is off on the {plan.section} fabric, so this override would change nothing",
                    hint=f"set {plan.section}.qos.enabled: true, or remove the override",
                    field=field,
                    device=name,
                )
            else:
                try:
                    effective_qos(spec, name)
                except ValidationError as exc:
                    reasons = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
                    yield Problem(f"with this override the switch's QoS profile is invalid: {reasons}", field=field, device=name)


def ecn_below_pfc_trigger(c: Compiled, walked: _SwitchPorts | None = None) -> Iterable[Problem]:
    """DCQCN acts before PFC: on every switch (after its override), at every port speed it uses,
    ECN min < ECN max < PFC trigger (the pause point), with each value from the intent, else the
    switch model's published data, else the generic default; and the trigger lies above the
    lossless PG's reserved two frames. Switches that share a wrong setting are reported once,
    naming the first of them."""
    groups: dict[tuple, list[str]] = {}
    for network, plan in c.plans.items():
        spec = plan.spec
        if not spec.qos.enabled:
            continue
        thresholds = FabricThresholds(spec.qos)
        for device in c.fabric.switches():
            if device.network is not network or device.role not in FABRIC_ROLES:
                continue
            try:
                qos = effective_qos(spec, device.name)
            except ValidationError:
                continue  # qos_overrides_name_switches reports it
            platform = c.catalog.switches[device.model].qos
            override = spec.qos_overrides.get(device.name)
            for speed in sorted(_front_panel_speeds(device) if walked is None else walked.speeds[device]):
                t = thresholds.at(qos, device.model, platform, speed)
                ecn, trigger = t.ecn, t.pfc_trigger_kbytes
                if ecn.min_kbytes < ecn.max_kbytes < trigger and trigger * 1024 > pg_reserved_bytes(spec.mtu):
                    continue
                field = _threshold_field(plan.section, device.name, override, spec.qos.model_fields_set, speed)
                key = (field, speed, ecn.min_kbytes, ecn.max_kbytes, trigger, spec.mtu, t.ecn_source, t.trigger_source)
                groups.setdefault(key, []).append(device.name)
    for (field, speed, low, high, trigger, mtu, ecn_source, trigger_source), devices in groups.items():
        if not low < high < trigger:
            message = (
                f"at {speed}G ECN marks from {low} KB to {high} KB ({_origin(ecn_source)}) but the PFC trigger is "
                f"{trigger} KB ({_origin(trigger_source)}): PFC would pause senders before ECN slows them"
            )
            hint = f"keep min < max < trigger at {speed}G: lower ecn max_kbytes below {trigger}, or raise pfc_trigger_kbytes above {high}"
        else:
            message = (
                f"at {speed}G the PFC trigger ({trigger} KB) is not above the {pg_reserved_bytes(mtu)} bytes a lossless buffer reserves (two {mtu}-byte frames)"
            )
            hint = f"raise pfc_trigger_kbytes at {speed}G (the defaults scale 4000 KB per 100G)"
        if len(devices) > 1:
            shown = ", ".join(devices[1:4]) + (", ..." if len(devices) > 4 else "")
            message += f"; the same on {len(devices) - 1} more switches ({shown})"
        yield Problem(message, hint=hint, field=field, device=devices[0])


_front_panel, _speed_of = attrgetter("front_panel"), attrgetter("speed_gbps")


def _front_panel_speeds(device) -> set[int]:
    """The speeds a switch's data ports run at (mgmt0 and console left out), collected in C."""
    return set(map(_speed_of, filter(_front_panel, device.ports.values())))


def _origin(source: str) -> str:
    if source in (INTENT, GENERIC):
        return f"from {source}"
    return "the switch model's published value"


def _threshold_field(section: str, switch: str, override: QosOverride | None, qos_fields: set[str], speed: int) -> tuple[str, ...]:
    """Where a wrong ECN/trigger pair comes from: the switch's override if it sets either at this
    speed, else the fabric's ecn (or its pfc_trigger_kbytes when only that was written)."""
    label = f"{speed}G"
    if override is not None:
        for key in ("ecn", "pfc_trigger_kbytes"):
            values = getattr(override, key)
            if values is not None and speed in values:
                return (section, "qos_overrides", switch, key, label)
    key = "pfc_trigger_kbytes" if "pfc_trigger_kbytes" in qos_fields and "ecn" not in qos_fields else "ecn"
    return (section, "qos", key, label)


CHECKS: tuple[Callable[[Compiled], Iterable[Problem]], ...] = (
    ports_used_once,
    link_speeds_match,
    switch_ports_exist,
    one_optic_per_cage,
    leaf_ratio_holds,
    rails_aligned,
    every_leaf_reaches_every_spine,
    addresses_unique,
    asns_as_planned,
    management_complete,
    evpn_numbers_unique,
    load_balancing_supported,
    security_supported,
    settings_supported,
    nos_releases_known,
    features_in_release,
    watchdog_in_range,
    qos_overrides_name_switches,
    ecn_below_pfc_trigger,
)


def run_checks(compiled: Compiled) -> list[Problem]:
    """Every check, every problem (not just the first)."""
    tiers = _tier_ports(compiled)  # one walk over the leaves' and spines' ports for the two checks that read them
    walked = _switch_ports(compiled)  # one walk over every switch's ports for the three that read them
    shared: dict[Callable, Callable[[Compiled], Iterable[Problem]]] = {
        leaf_ratio_holds: partial(leaf_ratio_holds, tiers=tiers),
        every_leaf_reaches_every_spine: partial(every_leaf_reaches_every_spine, tiers=tiers),
        **{check: partial(check, walked=walked) for check in (switch_ports_exist, one_optic_per_cage, ecn_below_pfc_trigger)},
    }
    return [problem for check in CHECKS for problem in shared.get(check, check)(compiled)]


def advisories(c: Compiled) -> list[str]:
    """Things worth a user's attention that are not errors."""
    notes = []
    notes += _platform_qos_gaps(c)
    notes += _unrendered_management(c)
    notes += _unmapped_sonic_platforms(c)
    notes += _adapter_notes(c)
    return notes


def _unmapped_sonic_platforms(c: Compiled) -> list[str]:
    """One note per switch model built for SONiC whose catalog entry has no platform port map:
    its config_db carries generic lanes and no platform or hwsku, so it does not load as is."""
    roles: dict[str, set[str]] = defaultdict(set)
    for device in c.fabric.switches():
        if device.nos == "sonic" and not c.catalog.switches[device.model].platform_mapped:
            roles[device.model].add(f"{device.network.value} {device.role.value}")
    notes = []
    for pid in sorted(roles):
        reason = c.catalog.switches[pid].sonic.unverified
        notes.append(
            f"UNVERIFIED SONiC platform: {pid} ({', '.join(sorted(roles[pid]))} switches) has no SONiC platform port map in the catalog"
            + (f" ({reason})" if reason else "")
            + ": PORT lanes are numbered generically from 0 and DEVICE_METADATA names no platform or hwsku, so config_db.json "
            "will not load as is on the switch; give its catalog entry sonic.platform, hwsku, source and ports from the platform's "
            "port_config.ini (sonic-buildimage device/<vendor>/<platform>/<hwsku>/)"
        )
    return notes


def _unrendered_management(c: Compiled) -> list[str]:
    """One note per NOS and set of settings its adapter does not write, naming the network roles
    that ask for them, so nothing of a management section is dropped silently."""
    groups = sorted({(d.nos, d.network, d.role, d.model) for d in c.fabric.switches() if d.nos})
    by_missing: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for nos, network, role, model in groups:
        management = Management.effective(level for _, level in c.management_levels(network, role))
        try:
            features = frozenset(c.nos_target(network, role, model).features)
        except KeyError:
            continue  # nos_releases_known reports it
        missing = tuple(unrendered_management(nos, management, features)) if management is not None else ()
        if missing and f"{network.value} {role.value}" not in by_missing[(nos, missing)]:
            by_missing[(nos, missing)].append(f"{network.value} {role.value}")
    return [
        f"{NOS_NAMES.get(nos, nos)} {', '.join(where)} switches: not written to their configs (set by hand, or the NOS default stays): {'; '.join(missing)}"
        for (nos, missing), where in by_missing.items()
    ]


def _platform_qos_gaps(c: Compiled) -> list[str]:
    """Where a lossless switch's thresholds fall back to fabricgen's generic defaults (its catalog
    entry publishes none for that speed and the intent writes none), and SONiC headroom without
    the ASIC's MAC/PHY delay: one note per model, naming the speeds."""
    generic: dict[tuple[str, str], set[int]] = defaultdict(set)
    no_delay: set[str] = set()
    for network, plan in c.plans.items():
        spec = plan.spec
        if not spec.qos.enabled:
            continue
        thresholds = FabricThresholds(spec.qos)
        for device in c.fabric.switches():
            if device.network is not network or device.role not in FABRIC_ROLES:
                continue
            try:
                qos = effective_qos(spec, device.name)
            except ValidationError:
                continue
            platform = c.catalog.switches[device.model].qos
            for speed in _front_panel_speeds(device):
                t = thresholds.at(qos, device.model, platform, speed)
                if t.ecn_source == GENERIC:
                    generic[(device.model, "ECN")].add(speed)
                if t.trigger_source == GENERIC:
                    generic[(device.model, "the PFC trigger (pause point)")].add(speed)
            if device.nos == "sonic" and platform.mac_phy_delay_bytes is None:
                no_delay.add(device.model)
    field = {"ECN": "qos.ecn", "the PFC trigger (pause point)": "qos.pfc_trigger_kbytes"}
    notes = [
        f"{model}: {what} at {', '.join(f'{s}G' for s in sorted(speeds))} is fabricgen's generic default (the catalog "
        f"publishes none for this model and speed, and the intent writes none); write {field[what]}, or add the "
        "vendor's value with its source to the catalog"
        for (model, what), speeds in sorted(generic.items())
    ]
    notes += [
        f"{model}: SONiC lossless headroom leaves out the ASIC's MAC/PHY delay (the catalog publishes no "
        "qos.mac_phy_delay_bytes for it); the platform's own buffer tables may ask for more"
        for model in sorted(no_delay)
    ]
    return notes
