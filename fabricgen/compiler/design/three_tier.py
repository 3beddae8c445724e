"""Sizing a rail-optimized 3-tier backend: scalable units grouped into pods, pod spines, a core.

Rules (shared/DOMAIN.md §3, the DGX SuperPOD layout):
- leaves are sized as in 2 tiers: one per rail per scalable unit, uplinks by the leaf ratio;
- a pod is as many scalable units as one layer of spines can take: every leaf has one link to
  every spine of its pod, so a pod has as many spines as a leaf has uplinks, and as many leaves as
  a spine has downlinks (by the spine ratio);
- the core is organised in groups: spine k of every pod connects to the cores of group k only, so
  every group sees every pod; a group has the fewest cores whose ports take every pod's links,
  each spine spreading its uplinks evenly over its group's cores.

At 1:1 every tier carries as many cables as there are GPUs. `size_three_tier` is pure; it raises
DesignError saying what would fit when the radix cannot hold the cluster even at 3 tiers.
"""

from __future__ import annotations

import math
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
    leaf_uplinks: int  # one to each spine of the pod
    pod_sus: int  # scalable units in a full pod
    pods: int
    pod_spines: int
    spines: int
    spine_downlinks: int  # ports towards the pod's leaves (one per leaf of a full pod)
    spine_uplinks: int  # ports towards the spine's group of cores
    group_cores: int  # cores in each group (one group per spine position in a pod)
    cores: int
    links_per_spine_per_core: int

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
) -> ThreeTierSizing:
    """The 3-tier fabric for `nodes` GPU nodes of `rails` backend NICs, in units of `su_nodes`;
    pods of `pod_sus` units, or as many as a spine takes; `cores` (pinned for planned growth) or
    the fewest that fit."""
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
    # one link from every leaf to every pod spine; a spine's downlinks bound the pod's leaves
    spine_down = math.floor(spine_ports * spine_ratio / (spine_ratio + 1))
    most_sus = spine_down // rails
    if most_sus < 1:
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
        raise DesignError(
            Problem(
                f"a pod of {pod_sus} scalable units has {pod_sus * rails} leaves, but a spine with {spine_ports} ports "
                f"at {format_ratio(spine_ratio)} takes {spine_down}",
                hint=f"use pod_gpus: {most_sus * su_nodes * gpus_per_node} or less ({most_sus} scalable units), or a more oversubscribed spine ratio",
                field=("backend", "pod_gpus"),
            )
        )
    spine_up = math.ceil(pod_sus * rails / spine_ratio)  # for the leaves a full pod has
    if pod_sus * rails + spine_up > spine_ports:
        raise DesignError(
            Problem(
                f"a spine needs {pod_sus * rails} downlinks and {spine_up} uplinks at {format_ratio(spine_ratio)}, but has {spine_ports} ports",
                hint=f"use pods of at most {max(1, pod_sus - 1)} scalable units, or a more oversubscribed spine ratio",
                field=("backend", "spine_ratio"),
            )
        )
    su_count = math.ceil(nodes / su_nodes)
    pods = math.ceil(su_count / pod_sus)
    spines_per_pod = leaf_up
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
        spine_downlinks=pod_sus * rails,
        spine_uplinks=spine_up,
        group_cores=group,
        cores=spines_per_pod * group,
        links_per_spine_per_core=spine_up // group,
    )
