"""What eBGP converges to on the lab's live fabric, worked out without running it.

A small path-vector simulation over the switches and fabric links that are still up: each leaf
originates its server prefixes; a switch accepts a neighbour's best path unless its own ASN is
already in it (more often than its allowas-in allows), prefers the shortest AS path, and installs as
ECMP every live link to a neighbour whose path is that short, up to its maximum-paths (the build
sets `bestpath as-path multipath-relax`, so neighbours in different ASNs count alike). Shared ASNs
(all spines of a 2-tier fabric, a pod's spines, the cores) are what keep paths valley-free, so this
holds for 2 and 3 tiers and under any set of failed links and switches.
"""

from __future__ import annotations

from fabricgen.lab.plan import ROUTED_KINDS, LabLink, LabPlan


def ecmp_widths(plan: LabPlan, failed_cables: set[str], failed_devices: set[str]) -> dict[str, dict[str, int]]:
    """live switch -> originating leaf -> how many next hops its FIB holds towards that leaf's
    prefixes once BGP has converged (0: no route). A leaf has no entry for itself."""
    live = [name for name in plan.switches if name not in failed_devices]
    neighbours: dict[str, list[str]] = {name: [] for name in live}  # one entry per live link: the far switch
    for link in plan.links:
        if _routed(plan, link) and link.cable not in failed_cables and not {link.a.device, link.b.device} & failed_devices:
            neighbours[link.a.device].append(link.b.device)
            neighbours[link.b.device].append(link.a.device)
    widths: dict[str, dict[str, int]] = {name: {} for name in live}
    for origin in plan.host_blocks:  # a failed leaf too: every live switch must have lost its prefixes
        for name, (_path, links) in _converge(plan, origin, live, neighbours).items():
            if name != origin:
                widths[name][origin] = min(links, plan.switches[name].maximum_paths)
        for name in live:
            if name != origin:
                widths[name].setdefault(origin, 0)
    return widths


def _routed(plan: LabPlan, link: LabLink) -> bool:
    return link.kind in ROUTED_KINDS and link.a.device in plan.switches and link.b.device in plan.switches and bool(link.a.address and link.b.address)


def _converge(plan: LabPlan, origin: str, live: list[str], neighbours: dict[str, list[str]]) -> dict[str, tuple[tuple, int]]:
    """switch -> (the AS path it advertises before prepending its own ASN, how many links carry
    a best path) for the prefixes `origin` announces. Rounds of every switch reading its
    neighbours' previous best paths, until nothing changes (BGP's stable state here: every switch
    prefers the shortest path and rejects loops, which has one solution)."""
    asn = {name: plan.switches[name].asn or f"unnumbered {name}" for name in live}  # no ASN: shares none
    routes: dict[str, tuple[tuple, int]] = {origin: ((), 0)}
    for _round in range(len(live) + 1):
        updated: dict[str, tuple[tuple, int]] = {origin: ((), 0)}
        for name in live:
            if name == origin:
                continue  # its own announcement (an aggregate or network) wins over anything learned
            own, allowed = asn[name], plan.switches[name].allowas_in
            offers = [(asn[far], *routes[far][0]) for far in neighbours[name] if far in routes]
            offers = [path for path in offers if path.count(own) <= allowed]
            if offers:
                shortest = min(len(path) for path in offers)
                best = [path for path in offers if len(path) == shortest]
                updated[name] = (min(best, key=str), len(best))  # FRR advertises one of them: which one matters not here
        if updated == routes:
            break
        routes = updated
    return routes
