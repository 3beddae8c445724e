"""Sizing a rail-optimized 2-tier backend: scalable units, leaf uplinks and spine count.

Rules (shared/DOMAIN.md §1, §3):
- a scalable unit (SU) has one leaf per rail; NIC i of every node in the SU lands on leaf i;
- every leaf has the same number of uplinks and the same number of links to every spine, so the
  ECMP width at every leaf is the spine count;
- uplinks follow the requested downlink:uplink bandwidth ratio; when the exact count cannot be
  spread evenly, the next count that can is used and the build says so;
- the fewest spines that fit win (then the fewest uplinks), but at least two for redundancy;
- a cluster smaller than one unit gets a unit of its own size, unless the intent names the unit
  size, in which case the leaves reserve the full unit's ports for growth.

`size_backend` raises DesignError for problems that stop sizing and returns the others, so the
design phase can report them together with addressing and cabling problems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabricgen.catalog import Catalog
from fabricgen.design.three_tier import size_three_tier
from fabricgen.errors import DesignError, Problem, raise_if
from fabricgen.intent.model import Intent
from fabricgen.units import format_ratio

MIN_SPINES = 2


@dataclass(frozen=True)
class BackendSizing:
    gpus: int
    nodes: int
    gpus_per_node: int
    rails: int  # backend NIC ports per node
    link_speed_gbps: int
    su_nodes: int  # nodes in a full scalable unit
    su_count: int
    leaves: int
    leaf_downlinks: int  # per leaf of a full SU
    leaf_uplinks: int
    spines: int
    links_per_spine: int  # from each leaf to each spine
    requested_ratio: Fraction
    built_ratio: Fraction
    notes: tuple[str, ...] = ()

    def su_size(self, su: int) -> int:
        """Nodes in scalable unit `su` (1-based); only the last may be partial."""
        if su < self.su_count:
            return self.su_nodes
        return self.nodes - self.su_nodes * (self.su_count - 1)


def size_backend(intent: Intent, catalog: Catalog) -> tuple[BackendSizing, list[Problem]]:
    backend = intent.backend
    node = catalog.nodes[intent.gpu_node]
    assert node.backend is not None
    gpus_per_node, rails, speed = node.gpus, node.backend.count, node.backend.speed
    nodes = intent.nodes if intent.nodes is not None else intent.gpus // gpus_per_node  # type: ignore[operator]
    gpus = nodes * gpus_per_node
    leaf_model, spine_model = catalog.switches[backend.leaf.model], catalog.switches[backend.spine.model]
    leaf_ports, spine_ports = leaf_model.ports_at(speed), spine_model.ports_at(speed)
    ratio = backend.ratio
    notes: list[str] = []

    no_ports = [
        Problem(
            f"{model} has no {speed}G ports (natively or by breakout) for {intent.gpu_node}'s {speed}G NICs",
            hint=f"pick a {role} model with {speed}G ports: {', '.join(_models_with(catalog, speed)) or 'none in the catalog'}",
            field=("backend", role, "model"),
        )
        for role, model, ports in (("leaf", backend.leaf.model, leaf_ports), ("spine", backend.spine.model, spine_ports))
        if ports == 0
    ]
    raise_if(no_ports, DesignError)

    su_nodes = backend.scalable_unit_gpus // gpus_per_node
    explicit_unit = "scalable_unit_gpus" in backend.model_fields_set
    if nodes < su_nodes and not explicit_unit:
        notes.append(
            f"{nodes} nodes fill less than one {su_nodes}-node scalable unit: the unit is sized to {nodes} nodes "
            f"(set scalable_unit_gpus to reserve ports for growth)"
        )
        su_nodes = nodes
    # The most nodes one leaf serves while keeping the ratio: down + down/ratio <= ports.
    max_su_nodes = math.floor(leaf_ports * ratio / (ratio + 1))
    if su_nodes > max_su_nodes:
        field = ("backend", "ratio") if "ratio" in backend.model_fields_set else ("backend", "scalable_unit_gpus")
        needs = f"{su_nodes} downlinks and {math.ceil(su_nodes / ratio)} uplinks per leaf at {format_ratio(ratio)}"
        if max_su_nodes == 0:
            hint = f"at {format_ratio(ratio)} not even one node fits a {leaf_ports}-port leaf; use a less under-subscribed ratio"
        else:
            hint = (
                f"use scalable_unit_gpus: {max_su_nodes * gpus_per_node} or less, a more oversubscribed ratio, "
                f"or a leaf with more {speed}G ports"
            )
        raise DesignError(
            Problem(f"a scalable unit of {su_nodes} nodes needs {needs}, but {backend.leaf.model} has {leaf_ports} {speed}G ports",
                    hint=hint, field=field)
        )
    su_count = math.ceil(nodes / su_nodes)
    if nodes % su_nodes:
        notes.append(
            f"the last scalable unit has {nodes % su_nodes} of {su_nodes} nodes; its leaves keep the full unit's ports and uplinks for growth"
        )
    leaves = su_count * rails

    problems: list[Problem] = []
    if backend.leaf.count is not None and backend.leaf.count != leaves:
        problems.append(
            Problem(
                f"the design needs {leaves} leaves ({su_count} scalable unit{'s' if su_count > 1 else ''} x {rails} rails), "
                f"the intent pins {backend.leaf.count}",
                hint=f"set count: {leaves} or remove it, or change gpus / scalable_unit_gpus",
                field=("backend", "leaf", "count"),
            )
        )

    down = su_nodes
    up_min = math.ceil(down / ratio)
    up_max = leaf_ports - down
    pinned = backend.spine.count
    choice = choose_uplinks(leaves, up_min, up_max, spine_ports, pinned, MIN_SPINES) or (
        None if pinned else choose_uplinks(leaves, up_min, up_max, spine_ports, None, 1)
    )
    if choice is None:
        raise DesignError(
            problems + [_no_two_tier_problem(intent, catalog, leaves, up_min, spine_ports, speed, rails, max_su_nodes, gpus_per_node)]
        )
    uplinks, spines = choice
    built = Fraction(down, uplinks)
    if built != ratio:
        notes.append(
            f"requested {format_ratio(ratio)}, built {format_ratio(built)}: {uplinks} uplinks per leaf "
            f"so they spread evenly over {spines} spines"
        )
    if spines == 1:
        notes.append("one spine: no redundancy between leaves")
    sizing = BackendSizing(
        gpus=gpus,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        rails=rails,
        link_speed_gbps=speed,
        su_nodes=su_nodes,
        su_count=su_count,
        leaves=leaves,
        leaf_downlinks=down,
        leaf_uplinks=uplinks,
        spines=spines,
        links_per_spine=uplinks // spines,
        requested_ratio=ratio,
        built_ratio=built,
        notes=tuple(notes),
    )
    return sizing, problems


def choose_uplinks(
    leaves: int, up_min: int, up_max: int, spine_ports: int, pinned: int | None, min_spines: int
) -> tuple[int, int] | None:
    """(uplinks per leaf, spines): fewest spines, then fewest uplinks, with every leaf linked to
    every spine the same number of times and no spine over its port count."""
    best: tuple[int, int] | None = None
    for uplinks in range(up_min, up_max + 1):
        candidates = [pinned] if pinned else range(max(min_spines, 1), uplinks + 1)
        for spines in candidates:
            if uplinks % spines or leaves * (uplinks // spines) > spine_ports:
                continue
            if best is None or (spines, uplinks) < (best[1], best[0]):
                best = (uplinks, spines)
            break  # more spines at this uplink count only gets worse
    return best


def _no_two_tier_problem(
    intent: Intent, catalog: Catalog, leaves: int, up_min: int, spine_ports: int, speed: int, rails: int, max_su_nodes: int, gpus_per_node: int
) -> Problem:
    backend = intent.backend
    if backend.spine.count is not None:
        return Problem(
            f"{backend.spine.count} spines cannot take {leaves} leaves x {up_min}+ uplinks evenly "
            f"({backend.spine.model} has {spine_ports} {speed}G ports)",
            hint="remove the spine count to let fabricgen choose, or pick a count that divides the leaf uplinks",
            field=("backend", "spine", "count"),
        )
    # With one link from every leaf to every spine a spine takes at most `spine_ports` leaves; the
    # largest unit this leaf allows at this ratio makes the most of them.
    max_units = spine_ports // rails
    max_gpus = max_units * max_su_nodes * gpus_per_node
    biggest_unit = f" with scalable_unit_gpus: {max_su_nodes * gpus_per_node}" if max_su_nodes * gpus_per_node != backend.scalable_unit_gpus else ""
    bigger = [pid for pid in _models_with(catalog, speed) if catalog.switches[pid].ports_at(speed) > spine_ports]
    alternative = f", or spines with more {speed}G ports ({', '.join(bigger)})" if bigger else ""
    return Problem(
        f"{leaves} leaves do not fit a 2-tier fabric: each {backend.spine.model} spine has {spine_ports} {speed}G ports, "
        f"so at most {spine_ports} leaves",
        hint=f"a 3-tier design is needed ({_three_tier_outline(intent, catalog, speed, rails, gpus_per_node, spine_ports)}; fabricgen does not build 3 tiers yet); "
        f"2 tiers reach {max_gpus:,} GPUs{biggest_unit}{alternative}",
        field=("gpus",) if intent.gpus is not None else ("nodes",),
    )


def _three_tier_outline(intent: Intent, catalog: Catalog, speed: int, rails: int, gpus_per_node: int, spine_ports: int) -> str:
    """What 3 tiers (spine model as the core too) would take, for the refusal's hint."""
    backend = intent.backend
    nodes = intent.nodes if intent.nodes is not None else intent.gpus // gpus_per_node  # type: ignore[operator]
    su_nodes = min(nodes, backend.scalable_unit_gpus // gpus_per_node)
    leaf_ports = catalog.switches[backend.leaf.model].ports_at(speed)
    try:
        s = size_three_tier(nodes, rails, su_nodes, leaf_ports, spine_ports, spine_ports, backend.ratio)
    except DesignError as exc:
        return f"even 3 tiers do not fit: {exc.problems[0].message}"
    return f"{s.leaves} leaves, {s.spines} spines in {s.pods} pods, {s.cores} core switches"


def _models_with(catalog: Catalog, speed: int) -> list[str]:
    return sorted(pid for pid, model in catalog.switches.items() if model.ports_at(speed) > 0)
