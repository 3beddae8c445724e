"""Sizing a rail-optimized 3-tier backend: scalable units grouped into pods, pod spines, a core.

Rules (shared/DOMAIN.md §3, the DGX SuperPOD layout):
- leaves are sized as in 2 tiers: one per rail per scalable unit, uplinks by the leaf ratio;
- a pod is as many scalable units as one layer of spines can take: every leaf has the same number
  of links (`links_per_spine`, 1 unless asked or derived) to every spine of its pod, so a pod has
  a leaf's uplinks / links_per_spine spines, and as many leaves as a spine's downlinks (by the
  spine ratio) take at links_per_spine each;
- a chassis spine (hundreds of ports) takes several links from each leaf, as many as make the
  fewest spines (`fewest_spines_links`): few, full chassis instead of one near-empty spine per
  leaf uplink;
- the core is organised in groups: spine k of every pod connects to the cores of group k only, so
  every group sees every pod; a group has the fewest cores whose ports take every pod's links,
  each spine spreading its uplinks evenly over its group's cores.

At 1:1 every tier carries as many cables as there are GPUs. `size_three_tier` is pure; it raises
DesignError saying what would fit when the radix cannot hold the cluster even at 3 tiers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from fabricgen.basics.errors import DesignError, Problem
from fabricgen.basics.units import format_ratio


@dataclass(frozen=True)
class ThreeTierSizing:
    nodes: int
    rails: int
    su_nodes: int
    su_count: int
    leaves: int
    leaf_downlinks: int
    leaf_uplinks: int  # links_per_spine to each spine of the pod
    pod_sus: int  # scalable units in a full pod
    pods: int
    pod_spines: int
    spines: int
    spine_downlinks: int  # ports towards the pod's leaves (links_per_spine per leaf of a full pod)
    spine_uplinks: int  # ports towards the spine's group of cores
    group_cores: int  # cores in each group (one group per spine position in a pod)
    cores: int
    links_per_spine_per_core: int
    links_per_spine: int = 1  # from each leaf to each spine of its pod

    @property
    def leaf_spine_links(self) -> int:
        return self.leaves * self.leaf_uplinks

    @property
    def spine_core_links(self) -> int:
        return self.spines * self.spine_uplinks


def size_three_tier(
    nodes: int,
    rails: int,
    su_nodes: int,
    leaf_ports: int,
    spine_ports: int,
    core_ports: int,
    leaf_ratio: Fraction = Fraction(1),
    spine_ratio: Fraction = Fraction(1),
    pod_sus: int | None = None,
    gpus_per_node: int = 1,
    cores: int | None = None,
    rails_per_leaf: int = 1,
    links_per_spine: int = 1,
) -> ThreeTierSizing:
    """The 3-tier fabric for `nodes` GPU nodes of `rails` backend NICs, in units of `su_nodes`;
    pods of `pod_sus` units, or as many as a spine takes; `cores` (pinned for planned growth) or
    the fewest that fit; `links_per_spine` parallel links from each leaf to each spine of its pod
    (it must divide the leaf's uplinks)."""
    leaf_down = su_nodes * rails_per_leaf  # `rails` counts a unit's leaves; each serves rails_per_leaf rails
    leaf_up = math.ceil(leaf_down / leaf_ratio)
    if leaf_down + leaf_up > leaf_ports:
        raise DesignError(
            Problem(
                f"a leaf needs {leaf_down} downlinks and {leaf_up} uplinks at {format_ratio(leaf_ratio)}, but has {leaf_ports} ports",
                hint=f"use scalable units of at most {math.floor(leaf_ports * leaf_ratio / (leaf_ratio + 1))} nodes, or a more oversubscribed ratio",
                field=("backend", "ratio"),
            )
        )
    if leaf_up % links_per_spine:
        divisors = ", ".join(str(n) for n in range(1, leaf_up + 1) if leaf_up % n == 0)
        raise DesignError(
            Problem(
                f"links_per_spine: {links_per_spine} does not divide a leaf's {leaf_up} uplinks, so they cannot spread evenly over the pod's spines",
                hint=f"use one of {divisors}, or remove links_per_spine",
                field=("backend", "links_per_spine"),
            )
        )
    # links_per_spine from every leaf to every pod spine; a spine's downlinks bound the pod's leaves
    spine_down = math.floor(spine_ports * spine_ratio / (spine_ratio + 1))
    most_sus = spine_down // (rails * links_per_spine)
    if most_sus < 1:
        if links_per_spine > 1:
            raise DesignError(
                Problem(
                    f"a spine with {spine_ports} ports at {format_ratio(spine_ratio)} takes {spine_down} leaf links, fewer than "
                    f"the {rails} leaves of one scalable unit x {links_per_spine} links each",
                    hint=f"use links_per_spine: {max(1, spine_down // rails)} or less, or spines with more ports",
                    field=("backend", "links_per_spine"),
                )
            )
        raise DesignError(
            Problem(
                f"a spine with {spine_ports} ports at {format_ratio(spine_ratio)} takes {spine_down} leaves, fewer than the {rails} rails of one scalable unit",
                hint=f"use spines with more ports, or a spine ratio of at least {format_ratio(Fraction(rails, spine_ports - rails)) if spine_ports > rails else 'more oversubscribed'}",
                field=("backend", "spine_ratio"),
            )
        )
    if pod_sus is None:
        pod_sus = most_sus
    elif pod_sus > most_sus:
        per_leaf = f" at {links_per_spine} links each" if links_per_spine > 1 else ""
        raise DesignError(
            Problem(
                f"a pod of {pod_sus} scalable units has {pod_sus * rails} leaves, but a spine with {spine_ports} ports "
                f"at {format_ratio(spine_ratio)} takes {spine_down // links_per_spine}{per_leaf}",
                hint=f"use pod_gpus: {most_sus * su_nodes * gpus_per_node} or less ({most_sus} scalable units), or a more oversubscribed spine ratio",
                field=("backend", "pod_gpus"),
            )
        )
    pod_downlinks = pod_sus * rails * links_per_spine  # for the leaves a full pod has
    spine_up = math.ceil(pod_downlinks / spine_ratio)
    if pod_downlinks + spine_up > spine_ports:
        raise DesignError(
            Problem(
                f"a spine needs {pod_downlinks} downlinks and {spine_up} uplinks at {format_ratio(spine_ratio)}, but has {spine_ports} ports",
                hint=f"use pods of at most {max(1, pod_sus - 1)} scalable units, or a more oversubscribed spine ratio",
                field=("backend", "spine_ratio"),
            )
        )
    su_count = math.ceil(nodes / su_nodes)
    pods = math.ceil(su_count / pod_sus)
    spines_per_pod = leaf_up // links_per_spine
    # the fewest cores per group that divide a spine's uplinks evenly and take every pod's links
    groups = [g for g in range(1, spine_up + 1) if spine_up % g == 0 and pods * (spine_up // g) <= core_ports]
    if cores is not None and groups:
        fitting = [g * spines_per_pod for g in groups]
        if cores not in fitting:
            raise DesignError(
                Problem(
                    f"{cores} cores cannot take {pods} pods x {spines_per_pod} spines x {spine_up} uplinks evenly "
                    f"(spine k of every pod links to group k of the {spines_per_pod} groups)",
                    hint=f"use one of {', '.join(str(n) for n in fitting)}, or remove the count",
                    field=("backend", "core", "count"),
                )
            )
        groups = [cores // spines_per_pod]
    group = groups[0] if groups else None
    if group is None:
        # at most one link from each pod's spine to each core of its group: core_ports pods
        most_nodes = core_ports * pod_sus * su_nodes
        raise DesignError(
            Problem(
                f"{pods} pods of {pod_sus} scalable units do not fit 3 tiers: a core has {core_ports} ports, so at most {core_ports} pods",
                hint=(
                    f"3 tiers of these switches reach {most_nodes:,} nodes ({most_nodes * rails:,} GPU NICs); "
                    "use switches with more ports, or more oversubscribed ratios"
                ),
                field=("gpus",),
            )
        )
    leaves = su_count * rails
    return ThreeTierSizing(
        nodes=nodes,
        rails=rails,
        su_nodes=su_nodes,
        su_count=su_count,
        leaves=leaves,
        leaf_downlinks=leaf_down,
        leaf_uplinks=leaf_up,
        pod_sus=pod_sus,
        pods=pods,
        pod_spines=spines_per_pod,
        spines=pods * spines_per_pod,
        spine_downlinks=pod_downlinks,
        spine_uplinks=spine_up,
        group_cores=group,
        cores=spines_per_pod * group,
        links_per_spine_per_core=spine_up // group,
        links_per_spine=links_per_spine,
    )


MIN_POD_SPINES = 2  # a derived links_per_spine leaves every leaf at least two spines (redundancy)


def fewest_spines_links(leaf_uplinks: int, size: Callable[[int], ThreeTierSizing], spine_paths: int, pinned_spines: int | None = None) -> int:
    """The links_per_spine a chassis spine is given when the intent names none: among the numbers
    that divide a leaf's `leaf_uplinks` and leave it at least MIN_POD_SPINES spines, the one whose
    fabric (`size(links_per_spine)`, a size_three_tier call) has `pinned_spines` spines when the
    intent pins them (the chassis bought), else the fewest spines; then the fewest pods (fewer
    core links), then the fewest parallel links (more spines to fail over to);
    a spine's uplinks to the core are one equal-cost set, so a fabric whose spines have more than
    `spine_paths` (the model's max_ecmp_paths) is not a candidate. 1 when none fits better. Each
    candidate is sized once: a leaf has at most a few hundred uplinks."""
    best: tuple[tuple[bool, int, int, int], int] | None = None
    for links in range(1, leaf_uplinks + 1):
        if leaf_uplinks % links or (links > 1 and leaf_uplinks // links < MIN_POD_SPINES):
            continue
        try:
            s = size(links)
        except DesignError:
            continue
        if s.spine_uplinks > spine_paths:
            continue
        key = (pinned_spines is not None and s.spines != pinned_spines, s.spines, s.pods, links)
        if best is None or key < best[0]:
            best = (key, links)
    return best[1] if best is not None else 1
