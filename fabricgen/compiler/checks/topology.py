"""The fabric's shape: leaf oversubscription as designed, rails aligned, every leaf wired to
every spine of its plane (or pod), peer links only between the two leaves of a spine-free pair.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from fractions import Fraction
from operator import attrgetter
from typing import NamedTuple

from fabricgen.basics.errors import Problem
from fabricgen.basics.units import format_ratio
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import Device, Link, LinkKind, Network, Role


def leaf_ratio_holds(c: Compiled, tiers: dict[Device, _TierPorts] | None = None) -> Iterable[Problem]:
    """Downlink:uplink bandwidth as built at every leaf, and (3 tiers) at every spine."""
    tiers = tier_ports(c) if tiers is None else tiers
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


def peer_links_join_the_pair(c: Compiled) -> Iterable[Problem]:
    """Peer links only in a spine-free fabric built as a pair (its plan's `peer_links`), each
    joining that network's two leaves, and exactly `peer_links` of them. They count in no ratio:
    a spine-free leaf has none to hold, and a peer link is neither a downlink nor an uplink."""
    peer = LinkKind.PEER  # bound once: a member lookup on an Enum class costs 70 ns
    found: Counter[Network] = Counter()
    for link in c.fabric.links:
        if link.kind is not peer:
            continue
        a, b = link.a.device, link.b.device
        plan = c.plans.get(link.network)
        if plan is None or not plan.peer_links:
            yield Problem(f"peer link {link.id} in a {link.network} fabric that is no spine-free pair", device=a.name, port=link.a.name)
        elif a.role is not Role.LEAF or b.role is not Role.LEAF or a is b or a.network is not link.network or b.network is not link.network:
            yield Problem(f"peer link {link.id} joins {a.name} to {b.name}; it may only join the two leaves of the pair", device=a.name, port=link.a.name)
        found[link.network] += 1
    for network, plan in c.plans.items():
        if plan.peer_links and found[network] != plan.peer_links:
            yield Problem(
                f"the {network} pair's leaves are joined by {found[network]} peer link{'s' if found[network] != 1 else ''}, expected {plan.peer_links}"
            )


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


def tier_ports(c: Compiled) -> dict[Device, _TierPorts]:
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
    tiers = tier_ports(c) if tiers is None else tiers
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
