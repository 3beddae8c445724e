"""Sizing a rail-optimized backend: scalable units, leaf uplinks and spine count, and when 2 tiers
cannot hold the cluster (or the intent asks), pods and a core (design/three_tier.py).

Rules (shared/DOMAIN.md §1, §3):
- a scalable unit (SU) has one leaf per rail; NIC i of every node in the SU lands on leaf i;
- every leaf has the same number of uplinks and the same number of links to every spine, so the
  ECMP width at every leaf is the spine count;
- uplinks follow the requested downlink:uplink bandwidth ratio; when the exact count cannot be
  spread evenly, the next count that can is used and the build says so;
- the fewest spines that fit win (then the fewest uplinks), but at least two for redundancy;
- with planes, each plane is its own fabric for a group of rails: its own spines (and cores);
- a cluster smaller than one unit gets a unit of its own size, unless the intent names the unit
  size, in which case the leaves reserve the full unit's ports for growth.

`size_backend` raises DesignError for problems that stop sizing and returns the others, so the
design phase can report them together with addressing and cabling problems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TypedDict

from fabricgen.basics.errors import DesignError, Problem, raise_if
from fabricgen.basics.units import format_ratio
from fabricgen.catalog import Catalog
from fabricgen.catalog.model import SwitchModel
from fabricgen.compiler.design.graph import Device, Network, OutOfPorts, PortAllocator, Role
from fabricgen.compiler.design.three_tier import ThreeTierSizing, fewest_spines_links, size_three_tier
from fabricgen.intent.model import MAX_GPUS, Backend, Intent

MIN_SPINES = 2


class _Layout(TypedDict):
    """BackendSizing's fields every design shares: how a unit's rails sit on its leaves."""

    design: str
    unit_leaf_rails: tuple[tuple[int, ...], ...]
    node_major: bool


class _Common(_Layout):
    """BackendSizing's fields known before the spines are sized, the same for 2 and 3 tiers."""

    gpus: int
    nodes: int
    gpus_per_node: int
    rails: int
    link_speed_gbps: int
    su_nodes: int
    su_count: int
    leaves: int
    leaf_downlinks: int
    requested_ratio: Fraction
    planes: int


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
    spines: int  # in all pods and planes
    links_per_spine: int  # from each leaf to each spine of its pod and plane
    requested_ratio: Fraction
    built_ratio: Fraction
    notes: tuple[str, ...] = ()
    tiers: int = 2
    planes: int = 1  # independent planes, each a group of rails_per_plane rails
    pod_sus: int = 0  # scalable units in a full pod (2 tiers: one pod of every unit)
    pods: int = 1
    pod_spines: int = 0  # spines in one pod of one plane
    spine_downlinks: int = 0  # 3 tiers: a spine's ports towards a full pod's leaves
    spine_uplinks: int = 0  # 3 tiers: a spine's links to its group of cores
    group_cores: int = 0  # 3 tiers: cores that spine k of every pod (of a plane) links to
    cores: int = 0
    links_per_core: int = 0  # 3 tiers: from a spine to each core of its group
    most_pods: int = 1  # 3 tiers: pods the core can ever take (one link from a spine to each core)
    spine_requested_ratio: Fraction | None = None  # 3 tiers
    spine_built_ratio: Fraction | None = None
    uplink_speed_gbps: int = 0  # leaf-spine links; 0: the NIC speed (link_speed_gbps)
    design: str = "rail-optimized"  # rail-optimized | rail-only | top-of-rack
    unit_leaf_rails: tuple[tuple[int, ...], ...] = ()  # the rails of each leaf of a unit, in downlink order (default: one each)
    node_major: bool = False  # top-of-rack: a leaf's downlinks node by node; else rail by rail
    peer_links: int = 0  # a spine-free pair: routed links between its two leaves, after the downlinks

    @property
    def fabric_speed_gbps(self) -> int:
        """Speed of the leaf-spine (and spine-core) links."""
        return self.uplink_speed_gbps or self.link_speed_gbps

    @property
    def leaf_rails(self) -> tuple[tuple[int, ...], ...]:
        return self.unit_leaf_rails or tuple((rail,) for rail in range(1, self.rails + 1))

    @property
    def leaves_per_su(self) -> int:
        return len(self.leaf_rails)

    @property
    def rails_per_leaf(self) -> int:
        return len(self.leaf_rails[0])

    @property
    def spineless(self) -> bool:
        """rail-only with every rail on one leaf: no tier above the leaves."""
        return self.spines == 0

    def leaf_of_rail(self) -> dict[int, tuple[int, int]]:
        """rail -> (its leaf's place in the unit, its slot on that leaf), both 0-based."""
        return {rail: (k, slot) for k, rails in enumerate(self.leaf_rails) for slot, rail in enumerate(rails)}

    def downlink_of(self, position: int, slot: int) -> int:
        """The leaf downlink (0-based) of the node at `position` in its unit, NIC in `slot` of the
        leaf: rail-major (every node's NIC of the leaf's first rail, then its second rail...) or,
        top-of-rack, node-major (each node's NICs side by side)."""
        if self.node_major:
            return position * self.rails_per_leaf + slot
        return slot * self.su_nodes + position

    def su_size(self, su: int) -> int:
        """Nodes in scalable unit `su` (1-based); only the last may be partial."""
        if su < self.su_count:
            return self.su_nodes
        return self.nodes - self.su_nodes * (self.su_count - 1)

    @property
    def rails_per_plane(self) -> int:
        return self.rails // self.planes

    def pod_of(self, su: int) -> int:
        return (su - 1) // self.pod_sus + 1

    def plane_of(self, rail: int) -> int:
        return (rail - 1) // self.rails_per_plane + 1

    def plane_label(self, plane: int) -> int | None:
        """What a device records as its plane: only fabrics with planes say which one."""
        return plane if self.planes > 1 else None


def size_backend(intent: Intent, catalog: Catalog) -> tuple[BackendSizing, list[Problem]]:
    """The backend's sizing for `intent` on `catalog`'s hardware, with a note for each switch role
    that leaves ports idle and one when growing by a unit would move the spines, and the problems
    that did not stop sizing (DesignError for those that did)."""
    sizing, problems = _size_backend(intent, catalog)
    problems += _three_tier_settings_unused(intent, sizing)
    extra = idle_port_notes(intent, catalog, sizing) + growth_notes(intent, catalog, sizing)
    return (replace(sizing, notes=sizing.notes + tuple(extra)) if extra else sizing), problems


THREE_TIER_SETTINGS = ("core", "spine_ratio", "pod_gpus", "links_per_spine")


def _three_tier_settings_unused(intent: Intent, sizing: BackendSizing) -> list[Problem]:
    """3-tier settings written for a cluster that came out with fewer tiers (tiers left out, and
    2 tiers or no spines fit) would be ignored: refused, so the intent says what is built."""
    written = [name for name in THREE_TIER_SETTINGS if name in intent.backend.model_fields_set]
    if sizing.tiers == 3 or not written:
        return []
    built = "no spine tier" if sizing.spineless else "2 tiers"
    return [
        Problem(
            f"{', '.join(written)} only apply to 3 tiers, but this cluster builds {built} (tiers left out takes the fewest that fit)",
            hint=f"set tiers: 3 to build 3 tiers, or remove {', '.join(written)}",
            field=("backend", written[0]),
        )
    ]


def _size_backend(intent: Intent, catalog: Catalog) -> tuple[BackendSizing, list[Problem]]:
    backend = intent.backend
    node = catalog.nodes[intent.gpu_node]
    assert node.backend is not None
    gpus_per_node, rails, speed = node.gpus, node.backend.ports, node.backend.speed
    # a multi-port NIC (ports_per_nic) puts port p of every NIC on plane p unless planes says otherwise
    planes = backend.planes
    if node.backend.ports_per_nic > 1 and "planes" not in backend.model_fields_set and backend.design == "rail-optimized":
        planes = node.backend.ports_per_nic
    nodes = intent.nodes if intent.nodes is not None else intent.gpus // gpus_per_node  # type: ignore[operator]
    gpus = nodes * gpus_per_node
    leaf_model, spine_model = catalog.switches[backend.leaf.model], catalog.switches[backend.spine.model]
    leaf_ports, spine_ports = leaf_model.ports_at(speed), spine_model.ports_at(speed)
    ratio = backend.ratio
    notes: list[str] = []

    roles = [("leaf", backend.leaf.model, leaf_ports)] + ([("spine", backend.spine.model, spine_ports)] if backend.spine.count != 0 else [])
    if backend.tiers != 2:
        roles.append(("core", backend.core_switch.model, catalog.switches[backend.core_switch.model].ports_at(speed)))
    no_ports = [
        Problem(
            f"{model} has no {speed}G ports (natively or by breakout) for {intent.gpu_node}'s {speed}G NICs",
            hint=f"pick a {role} model with {speed}G ports: {', '.join(_models_with(catalog, speed)) or 'none in the catalog'}",
            field=("backend", role, "model"),
        )
        for role, model, ports in roles
        if ports == 0
    ]
    if rails % planes:
        no_ports.append(
            Problem(
                f"{planes} planes cannot split {intent.gpu_node}'s {rails} rails evenly",
                hint=f"use a number of planes that divides {rails}: {', '.join(str(n) for n in range(1, rails + 1) if rails % n == 0)}",
                field=("backend", "planes"),
            )
        )
    leaf_rails, layout_problems = _rail_layout(intent, rails, planes)
    raise_if(no_ports + layout_problems, DesignError)
    rpl = len(leaf_rails[0])
    layout: _Layout = {"design": backend.design, "unit_leaf_rails": leaf_rails, "node_major": backend.design == "top-of-rack"}

    # The most nodes one leaf serves while keeping the ratio: down + down/ratio <= ports. Uplinks
    # given as bought are checked against the ports the downlinks leave (_uplinks_as_given).
    ratio_nodes = leaf_ratio_nodes(leaf_ports, ratio, rpl)
    max_su_nodes = ratio_nodes if backend.uplinks is None else leaf_ports // rpl
    explicit_unit = backend.scalable_unit_gpus is not None
    # the default unit is what one leaf serves (at least one node: none fitting is refused below)
    su_nodes = backend.scalable_unit_gpus // gpus_per_node if backend.scalable_unit_gpus is not None else max(1, ratio_nodes)
    reserve = su_nodes if explicit_unit else nodes  # a spine-free leaf's downlinks per rail: the unit asked for, or every node
    if backend.spine.count == 0 or (backend.design == "rail-only" and nodes <= reserve <= leaf_ports):
        return _spine_free_leaves(intent, nodes, gpus, gpus_per_node, rails, speed, planes, max(reserve, nodes), leaf_ports, layout, notes)
    if backend.design == "rail-only":
        planes = rails  # each rail is a leaf/spine plane of its own
        notes.append(f"rail-only: a rail's {nodes} nodes need more than one {backend.leaf.model}, so every rail is a leaf/spine plane of its own")
    if nodes < su_nodes and not explicit_unit:
        notes.append(
            f"{nodes} nodes fill less than one {su_nodes}-node scalable unit: the unit is sized to {nodes} nodes "
            f"(set scalable_unit_gpus to reserve ports for growth)"
        )
        su_nodes = nodes
    if su_nodes > max_su_nodes:
        field = ("backend", "ratio") if "ratio" in backend.model_fields_set else ("backend", "scalable_unit_gpus")
        down = su_nodes * rpl
        per_rail = f" ({su_nodes} nodes x {rpl} rails)" if rpl > 1 else ""
        needs = f"{down} downlinks{per_rail} and {math.ceil(down / ratio)} uplinks per leaf at {format_ratio(ratio)}"
        fewer = [n for n in _divisors(rails // planes) if n < rpl and su_nodes * n + math.ceil(su_nodes * n / ratio) <= leaf_ports]
        fewer_hint = f", rails_per_leaf: {fewer[-1]}" if fewer and backend.design == "rail-optimized" else ""
        if max_su_nodes == 0:
            hint = f"at {format_ratio(ratio)} not even one node fits a {leaf_ports}-port leaf{fewer_hint and ' with ' + fewer_hint[2:]}; use a less under-subscribed ratio{fewer_hint}"
        else:
            hint = (
                f"use scalable_unit_gpus: {max_su_nodes * gpus_per_node} or less{fewer_hint}, a more oversubscribed ratio, or a leaf with more {speed}G ports"
            )
        raise DesignError(
            Problem(f"a scalable unit of {su_nodes} nodes needs {needs}, but {backend.leaf.model} has {leaf_ports} {speed}G ports", hint=hint, field=field)
        )
    su_count = math.ceil(nodes / su_nodes)
    if nodes % su_nodes:
        notes.append(f"the last scalable unit has {nodes % su_nodes} of {su_nodes} nodes; its leaves keep the full unit's ports and uplinks for growth")
    leaves = su_count * len(leaf_rails)

    problems: list[Problem] = []
    if backend.leaf.count is not None and backend.leaf.count != leaves:
        per_leaf = f" of {rpl} rails each" if rpl > 1 else ""
        fits = [
            n
            for n in _divisors(rails // planes)
            if su_count * rails // n == backend.leaf.count and su_nodes * n + math.ceil(su_nodes * n / ratio) <= leaf_ports
        ]
        by_rails = (
            f", or rails_per_leaf: {fits[0]} ({fits[0]} rails on each leaf gives {backend.leaf.count} leaves)"
            if fits and backend.design == "rail-optimized"
            else ""
        )
        problems.append(
            Problem(
                f"the design needs {leaves} leaves ({su_count} scalable unit{'s' if su_count > 1 else ''} x {len(leaf_rails)} leaves{per_leaf} "
                f"for {rails} rails), the intent pins {backend.leaf.count}",
                hint=f"set count: {leaves} or remove it, or change gpus / scalable_unit_gpus{by_rails}",
                field=("backend", "leaf", "count"),
            )
        )
    common: _Common = {
        "gpus": gpus,
        "nodes": nodes,
        "gpus_per_node": gpus_per_node,
        "rails": rails,
        "link_speed_gbps": speed,
        "su_nodes": su_nodes,
        "su_count": su_count,
        "leaves": leaves,
        "leaf_downlinks": su_nodes * rpl,
        "requested_ratio": ratio,
        "planes": planes,
        **layout,
    }
    if backend.tiers == 3:
        return _three_tiers(intent, catalog, common, notes, problems)
    if backend.uplinks is not None:
        return _uplinks_as_given(intent, catalog, common, notes, problems)

    plane_leaves = leaves // planes
    down = su_nodes * rpl
    up_min = math.ceil(down / ratio)
    up_max = leaf_ports - down
    pinned = backend.spine.count
    choice = _spread_over_spines(pinned, planes, plane_leaves, up_min, up_max, spine_ports, problems)
    if choice is None:
        if backend.tiers is None and pinned is None:
            notes.append(
                f"{plane_leaves} leaves{' per plane' if planes > 1 else ''} do not fit 2 tiers ({backend.spine.model} takes at most "
                f"{spine_ports} leaves): built 3 tiers (set backend.tiers to choose)"
            )
            return _three_tiers(intent, catalog, common, notes, problems)
        raise DesignError(
            problems + [_no_two_tier_problem(intent, catalog, plane_leaves, up_min, spine_ports, speed, len(leaf_rails) // planes, max_su_nodes, gpus_per_node)]
        )
    uplinks, plane_spines = choice
    built = Fraction(down, uplinks)
    if built != ratio:
        notes.append(
            f"requested {format_ratio(ratio)}, built {format_ratio(built)}: {uplinks} uplinks per leaf so they spread evenly over {plane_spines} spines"
        )
    if plane_spines == 1:
        notes.append("one spine: no redundancy between leaves")
    sizing = BackendSizing(
        **common,
        leaf_uplinks=uplinks,
        spines=plane_spines * planes,
        links_per_spine=uplinks // plane_spines,
        built_ratio=built,
        notes=tuple(notes),
        pod_sus=su_count,
        pod_spines=plane_spines,
    )
    return sizing, problems


def _uplinks_as_given(intent: Intent, catalog: Catalog, common: _Common, notes: list[str], problems: list[Problem]) -> tuple[BackendSizing, list[Problem]]:
    """2 tiers with `backend.uplinks`: each leaf gets `count` uplinks at `speed` (default: as many
    as the ratio needs at that speed), spread evenly over the spines. The built ratio is the
    bandwidth one: downlinks x NIC speed : uplinks x uplink speed."""
    backend = intent.backend
    given = backend.uplinks
    assert given is not None
    nic_speed, planes = common["link_speed_gbps"], common["planes"]
    speed = given.speed or nic_speed
    down = common["leaf_downlinks"]
    plane_leaves = common["leaves"] // planes
    leaf_model, spine_model = catalog.switches[backend.leaf.model], catalog.switches[backend.spine.model]
    field_speed = ("backend", "uplinks", "speed") if given.speed is not None else ("backend", "uplinks")
    wrong: list[Problem] = []
    for role, model in (("leaf", backend.leaf.model), ("spine", backend.spine.model)):
        if not catalog.switches[model].ports_at(speed):
            wrong.append(
                Problem(
                    f"{model} has no {speed}G ports (natively or by breakout) for the {role} end of {speed}G uplinks",
                    hint=f"pick an uplink speed the {role} has ({_speeds_of(catalog.switches[model])}), or a {role} model with {speed}G ports: "
                    f"{', '.join(_models_with(catalog, speed)) or 'none in the catalog'}",
                    field=field_speed if role == "leaf" or given.speed is not None else ("backend", role, "model"),
                )
            )
    raise_if(problems + wrong, DesignError)
    free = free_uplink_ports(leaf_model, backend.leaf.nos, nic_speed, down, speed)
    spine_ports = spine_model.ports_at(speed)
    ratio = backend.ratio
    ratio_given = "ratio" in backend.model_fields_set
    if given.count is not None:
        up_min = up_max = given.count
    else:
        up_min, up_max = math.ceil(Fraction(down * nic_speed, speed) / ratio), free
    if up_min > free:
        raise DesignError(
            problems
            + [
                Problem(
                    f"{backend.leaf.model} leaves {free} {speed}G ports free after {down} {nic_speed}G downlinks; "
                    f"{up_min} {speed}G uplinks per leaf do not fit",
                    hint=f"use count: {free} or less, fewer nodes per leaf (scalable_unit_gpus), or a leaf with more {speed}G ports",
                    field=("backend", "uplinks", "count") if given.count is not None else ("backend", "ratio"),
                )
            ]
        )
    pinned = backend.spine.count
    choice = _spread_over_spines(pinned, planes, plane_leaves, up_min, up_max, spine_ports, problems)
    if choice is None:
        counts = f"{given.count}" if given.count is not None else f"{up_min}-{up_max}"
        if pinned is not None:
            divisors = [n for n in range(1, up_min + 1) if up_min % n == 0 and plane_leaves * (up_min // n) <= spine_ports]
            hint = f"with {up_min} uplinks per leaf pin {' or '.join(str(n * planes) for n in divisors) or 'no count fits'} spines, or remove the count"
            field: tuple[str, ...] = ("backend", "spine", "count")
        else:
            hint = f"use fewer uplinks per leaf, or spines with more {speed}G ports ({spine_model.ports_at(speed)} on {backend.spine.model}); 3 tiers do not take uplinks"
            field = ("backend", "uplinks", "count") if given.count is not None else ("gpus",) if intent.gpus is not None else ("nodes",)
        raise DesignError(
            problems
            + [
                Problem(
                    f"{plane_leaves} leaves{' per plane' if planes > 1 else ''} x {counts} {speed}G uplinks cannot spread evenly over "
                    f"{f'{pinned} spines' if pinned is not None else 'any spine count'} ({backend.spine.model}: {spine_ports} {speed}G ports)",
                    hint=hint,
                    field=field,
                )
            ]
        )
    uplinks, plane_spines = choice
    built = Fraction(down * nic_speed, uplinks * speed)
    if given.count is not None and ratio_given and built != ratio:
        # the count is what was bought; a ratio written beside it is a claim about it, checked
        problems.append(
            Problem(
                f"{uplinks} x {speed}G uplinks per leaf for {down} x {nic_speed}G downlinks give {format_ratio(built)}, not the {format_ratio(ratio)} the intent asks",
                hint=f'remove ratio (the built ratio is reported), or set ratio: "{format_ratio(built)}", or change uplinks.count',
                field=("backend", "ratio"),
            )
        )
    elif given.count is None and built != ratio:
        notes.append(
            f"requested {format_ratio(ratio)}, built {format_ratio(built)}: {uplinks} x {speed}G uplinks per leaf "
            f"so they spread evenly over {plane_spines} spines"
        )
    notes.append(f"uplinks as given: {uplinks} x {speed}G per leaf for {down} x {nic_speed}G downlinks, downlink:uplink bandwidth {format_ratio(built)}")
    if plane_spines == 1:
        notes.append("one spine: no redundancy between leaves")
    return BackendSizing(
        **common,
        leaf_uplinks=uplinks,
        spines=plane_spines * planes,
        links_per_spine=uplinks // plane_spines,
        built_ratio=built,
        notes=tuple(notes),
        pod_sus=common["su_count"],
        pod_spines=plane_spines,
        uplink_speed_gbps=speed,
    ), problems


def free_uplink_ports(model: SwitchModel, nos: str, down_speed: int, downlinks: int, up_speed: int) -> int:
    """Ports at `up_speed` a leaf still has after its downlinks, allocated as the graph does
    (downlinks first, a cage serving one speed only). Raises OutOfPorts when the downlinks do not fit."""
    return _free_ports(model, nos, ((down_speed, downlinks),), up_speed)


def _free_ports(model: SwitchModel, nos: str, taken: tuple[tuple[int, int], ...], speed: int) -> int:
    """Ports at `speed` a switch of `model` still has once `taken` ((speed, count) ...) is
    allocated in that order as the graph does; OutOfPorts when `taken` does not fit."""
    scratch = PortAllocator(Device("scratch", Role.LEAF, Network.BACKEND, "", nos, 0), model)
    for at, count in taken:
        if count:
            scratch.take(at, count)
    free = 0
    try:
        while True:
            scratch.take(speed, 1)
            free += 1
    except OutOfPorts:
        return free


def _speeds_of(model: SwitchModel) -> str:
    speeds = sorted({mode.speed for g in model.port_groups for mode in g.breakout_modes} | {g.speed for g in model.port_groups}, reverse=True)
    return ", ".join(f"{s}G" for s in speeds)


def _three_tiers(intent: Intent, catalog: Catalog, common: _Common, notes: list[str], problems: list[Problem]) -> tuple[BackendSizing, list[Problem]]:
    """Pods of scalable units with their own spines, joined by a core (design/three_tier.py);
    with planes, each plane is such a fabric for its group of rails."""
    backend = intent.backend
    speed, planes = common["link_speed_gbps"], common["planes"]
    ports = {
        role: catalog.switches[switch.model].ports_at(speed)
        for role, switch in (("leaf", backend.leaf), ("spine", backend.spine), ("core", backend.core_switch))
    }
    pod_sus = _pod_units(intent, common, problems)
    pinned_cores = backend.core_switch.count
    if pinned_cores is not None and pinned_cores % planes:
        raise DesignError(
            problems
            + [
                Problem(
                    f"{pinned_cores} cores do not split evenly over {planes} planes",
                    hint=f"pin a multiple of {planes}, or remove the count",
                    field=("backend", "core", "count"),
                )
            ]
        )

    def size(links_per_spine: int) -> ThreeTierSizing:
        return size_three_tier(
            common["nodes"],
            len(common["unit_leaf_rails"]) // planes,
            common["su_nodes"],
            ports["leaf"],
            ports["spine"],
            ports["core"],
            backend.ratio,
            backend.spine_ratio,
            pod_sus,
            common["gpus_per_node"],
            pinned_cores // planes if pinned_cores is not None else None,
            rails_per_leaf=len(common["unit_leaf_rails"][0]),
            links_per_spine=links_per_spine,
        )

    spine_model = catalog.switches[backend.spine.model]
    try:
        links = backend.links_per_spine
        if links is None and spine_model.chassis is not None:  # a fixed spine keeps one link per leaf unless asked
            pinned_spines = backend.spine.count // planes if backend.spine.count is not None else None
            links = fewest_spines_links(size(1).leaf_uplinks, size, spine_model.max_ecmp_paths, pinned_spines)
            notes.append(
                f"{links} parallel link(s) from each leaf to each {backend.spine.model} spine of its pod: the fewest, fullest chassis "
                "(set backend.links_per_spine to choose)"
            )
        s = size(links or 1)
    except DesignError as exc:
        counted = ("gpus",) if intent.gpus is not None else ("nodes",)
        raise DesignError(problems + [replace(p, field=counted) if p.field == ("gpus",) else p for p in exc.problems]) from None
    spines = s.spines * planes  # a pinned core count is used by size_three_tier (it may plan for growth)
    if backend.spine.count is not None and backend.spine.count != spines:
        problems.append(
            Problem(
                f"the design needs {spines} spines ({s.pods} pods{f' x {planes} planes' if planes > 1 else ''}), the intent pins {backend.spine.count}",
                hint=f"set count: {spines} or remove it",
                field=("backend", "spine", "count"),
            )
        )
    built, spine_built = Fraction(s.leaf_downlinks, s.leaf_uplinks), Fraction(s.spine_downlinks, s.spine_uplinks)
    for what, asked, got, how in (
        ("leaf", backend.ratio, built, f"{s.leaf_uplinks} uplinks per leaf, {'one' if s.links_per_spine == 1 else s.links_per_spine} to each spine of its pod"),
        ("spine", backend.spine_ratio, spine_built, f"{s.spine_uplinks} uplinks per spine, spread evenly over {s.group_cores} cores"),
    ):
        if got != asked:
            notes.append(f"{what}s: requested {format_ratio(asked)}, built {format_ratio(got)}: {how}")
    if s.su_count % s.pod_sus:
        notes.append(f"the last pod has {s.su_count % s.pod_sus} of {s.pod_sus} scalable units; its spines keep the full pod's ports and uplinks for growth")
    return BackendSizing(
        **common,
        leaf_uplinks=s.leaf_uplinks,
        spines=s.spines * planes,
        links_per_spine=s.links_per_spine,
        built_ratio=built,
        notes=tuple(notes),
        tiers=3,
        pod_sus=s.pod_sus,
        pods=s.pods,
        pod_spines=s.pod_spines,
        spine_downlinks=s.spine_downlinks,
        spine_uplinks=s.spine_uplinks,
        group_cores=s.group_cores,
        cores=s.cores * planes,
        links_per_core=s.links_per_spine_per_core,
        most_pods=ports["core"],
        spine_requested_ratio=backend.spine_ratio,
        spine_built_ratio=spine_built,
    ), problems


def _rail_layout(intent: Intent, rails: int, planes: int) -> tuple[tuple[tuple[int, ...], ...], list[Problem]]:
    """The rails of each leaf of a unit, in the order its downlinks take them: rail-optimized,
    leaf k serves rails (k-1) x rails_per_leaf + 1 .. k x rails_per_leaf; rail-only one rail a
    leaf; top-of-rack every rail on one leaf, or odd rails on the first of a pair and even on the
    second."""
    backend = intent.backend
    if backend.design == "top-of-rack":
        if backend.tor_attach == "single":
            return (tuple(range(1, rails + 1)),), []
        if rails % 2:
            return ((),), [
                Problem(
                    f"{intent.gpu_node} has {rails} backend ports: a leaf pair needs an even number to alternate them",
                    hint="use tor_attach: single",
                    field=("backend", "tor_attach"),
                )
            ]
        return (tuple(range(1, rails + 1, 2)), tuple(range(2, rails + 1, 2))), []
    rpl = backend.rails_per_leaf
    if (rails // planes) % rpl:
        within = f" of each of the {planes} planes (a leaf serves one plane)" if planes > 1 else ""
        fits = ", ".join(str(n) for n in _divisors(rails // planes))
        return ((),), [
            Problem(
                f"rails_per_leaf: {rpl} does not divide the {rails // planes} rails{within} of {intent.gpu_node}",
                hint=f"use rails_per_leaf: {fits}",
                field=("backend", "rails_per_leaf"),
            )
        ]
    return tuple(tuple(range(k * rpl + 1, (k + 1) * rpl + 1)) for k in range(rails // rpl)), []


def _spine_free_leaves(
    intent: Intent,
    nodes: int,
    gpus: int,
    gpus_per_node: int,
    rails: int,
    speed: int,
    planes: int,
    su_nodes: int,
    leaf_ports: int,
    layout: _Layout,
    notes: list[str],
) -> tuple[BackendSizing, list[Problem]]:
    """One scalable unit and no tier above its leaves: every node on the leaf (or leaf pair) of
    each of its rail groups, every leaf port a downlink. Rail-only with a rail on one leaf (Wang et
    al., arXiv 2307.12169: traffic between rails crosses the nodes' scale-up domain), or any design
    with `spine.count: 0`: a top-of-rack switch or pair, a rail-optimized unit of rails_per_leaf.
    `su_nodes`: the downlinks each leaf keeps per rail (scalable_unit_gpus for growth, else every
    node). Raises DesignError when the nodes do not fit one leaf's ports."""
    backend = intent.backend
    leaf_rails = layout["unit_leaf_rails"]
    leaves, rpl = len(leaf_rails), len(leaf_rails[0])
    peer_links = spine_free_peer_links(backend, leaves)
    most = (leaf_ports - peer_links) // rpl
    if su_nodes > most:
        why = "rail-only with every rail on one leaf" if backend.spine.count is None else "spine.count: 0 puts every node on each leaf of one unit, so"
        reserved = "" if su_nodes == nodes else f" (scalable_unit_gpus reserves {su_nodes})"
        peers = f" and {peer_links} for the peer links" if peer_links else ""
        raise DesignError(
            Problem(
                f"{why} {su_nodes} nodes{reserved} x {rpl} NIC{'s' if rpl > 1 else ''} per leaf need {su_nodes * rpl} ports{peers}, "
                f"but {backend.leaf.model} has {leaf_ports} {speed}G ports: at most {most} nodes ({most * gpus_per_node} GPUs) fit without spines",
                hint=f"build at most {most} nodes, pick a leaf with more {speed}G ports, or remove backend.spine.count to add spines",
                field=("backend", "spine", "count") if backend.spine.count == 0 else ("gpus",) if intent.gpus is not None else ("nodes",),
            )
        )
    problems: list[Problem] = []
    if backend.leaf.count is not None and backend.leaf.count != leaves:
        problems.append(
            Problem(
                f"a fabric with no spines has {leaves} lea{'ves' if leaves > 1 else 'f'} (one unit of {backend.design}), the intent pins {backend.leaf.count}",
                hint=f"set count: {leaves} or remove it",
                field=("backend", "leaf", "count"),
            )
        )
    if backend.spine.count not in (None, 0):  # rail-only that fits its leaves without asking
        problems.append(
            Problem(
                f"rail-only with every rail on one leaf has no spines, the intent pins {backend.spine.count}",
                hint="remove backend.spine.count, or set it to 0",
                field=("backend", "spine", "count"),
            )
        )
    if backend.tiers == 3:
        problems.append(Problem("rail-only with every rail on one leaf has one tier", hint="remove backend.tiers", field=("backend", "tiers")))
    if "peer_links" in backend.model_fields_set and not peer_links:
        problems.append(
            Problem(
                f"a spine-free fabric of {leaves} lea{'ves' if leaves > 1 else 'f'} has no pair to join: peer_links apply to two leaves",
                hint="remove backend.peer_links",
                field=("backend", "peer_links"),
            )
        )
    notes.append(_spine_free_note(intent, nodes, leaf_rails))
    if su_nodes > nodes:
        notes.append(f"each leaf reserves {su_nodes * rpl} downlinks (scalable_unit_gpus) for growth")
    return BackendSizing(
        gpus=gpus,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        rails=rails,
        link_speed_gbps=speed,
        su_nodes=su_nodes,
        su_count=1,
        leaves=leaves,
        leaf_downlinks=su_nodes * rpl,
        leaf_uplinks=0,
        spines=0,
        links_per_spine=0,
        requested_ratio=backend.ratio,
        built_ratio=backend.ratio,
        notes=tuple(notes),
        pod_sus=1,
        pod_spines=0,
        planes=planes if backend.design == "rail-optimized" else 1,
        peer_links=peer_links,
        **layout,
    ), problems


def spine_free_peer_links(backend: Backend, leaves: int) -> int:
    """The routed peer links a spine-free backend of `leaves` leaves gets: a pair (`spine.count: 0`
    with two leaves) is joined by `peer_links` parallel /31 links, one eBGP session each, so NICs
    on different switches reach each other (a routed peer link instead of MLAG/vPC); a single
    switch and rail-only's rails (spine count unset: rails stay apart by design) get none."""
    return backend.peer_links if backend.spine.count == 0 and leaves == 2 else 0


def _spine_free_note(intent: Intent, nodes: int, leaf_rails: tuple[tuple[int, ...], ...]) -> str:
    """What a spine-free backend is and what it cannot carry: a pair is joined by its peer links;
    other leaves are islands, so two NICs on different leaves have no path over the network."""
    backend = intent.backend
    model = backend.leaf.model
    if len(leaf_rails) == 1:
        return (
            f"spine-free: one {model} holds every NIC of all {nodes} nodes and has no BGP neighbour: it runs no BGP and keeps its "
            "host ports, loopback and QoS, its hosts' subnets connected routes"
        )
    tail = (
        "no spines and no link between the leaves, so no BGP sessions between leaves: each leaf runs no BGP and keeps its host ports, "
        "loopback and QoS, its hosts' subnets connected routes"
    )
    if peer_links := spine_free_peer_links(backend, len(leaf_rails)):
        islands = "; ".join(f"rails {', '.join(map(str, rails))} on leaf {k}" for k, rails in enumerate(leaf_rails, start=1))
        pair = "a top-of-rack pair" if backend.design == "top-of-rack" else "a pair of leaves"
        return (
            f"spine-free: {pair}, each {model} holding its rails' NICs of all {nodes} nodes ({islands}); {peer_links} routed peer links "
            "join the two switches, a /31 and an eBGP session each, ECMP over them, so a NIC reaches the NICs on the other switch "
            "over the network (rail-aligned collectives stay on their switch)"
        )
    if len(leaf_rails[0]) == 1:
        layout = f"each rail is one {model} with that NIC of all {nodes} nodes"
    else:
        islands = "; ".join(f"rails {', '.join(map(str, rails))} on leaf {k}" for k, rails in enumerate(leaf_rails, start=1))
        pair = "a top-of-rack pair, " if backend.design == "top-of-rack" else ""
        layout = f"{pair}each leaf holds its rails' NICs of all {nodes} nodes ({islands})"
    return (
        f"spine-free{' rail-only' if backend.design == 'rail-only' else ''}: {layout}; "
        f"{tail}. Traffic between NICs on different leaves has no network path: collectives stay on their rail "
        "(NCCL and RCCL rings and trees pair NIC i with NIC i; PXN moves other traffic over the node's NVLink/xGMI to the NIC of the right rail first)"
    )


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _spread_over_spines(
    pinned: int | None, planes: int, plane_leaves: int, up_min: int, up_max: int, spine_ports: int, problems: list[Problem]
) -> tuple[int, int] | None:
    """choose_uplinks for a plane's leaves: the pinned spine count (split evenly over the planes),
    else the fewest spines, at least two unless only one fits."""
    if pinned is not None and pinned % planes:
        raise DesignError(
            problems
            + [
                Problem(
                    f"{pinned} spines do not split evenly over {planes} planes",
                    hint=f"pin a multiple of {planes}, or remove the count",
                    field=("backend", "spine", "count"),
                )
            ]
        )
    plane_pinned = pinned // planes if pinned else None
    return choose_uplinks(plane_leaves, up_min, up_max, spine_ports, plane_pinned, MIN_SPINES) or (
        None if pinned else choose_uplinks(plane_leaves, up_min, up_max, spine_ports, None, 1)
    )


def choose_uplinks(leaves: int, up_min: int, up_max: int, spine_ports: int, pinned: int | None, min_spines: int) -> tuple[int, int] | None:
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
            f"{backend.spine.count} spines cannot take {leaves} leaves x {up_min}+ uplinks evenly ({backend.spine.model} has {spine_ports} {speed}G ports)",
            hint="remove the spine count to let fabricgen choose, or pick a count that divides the leaf uplinks",
            field=("backend", "spine", "count"),
        )
    # With one link from every leaf to every spine a spine takes at most `spine_ports` leaves; the
    # largest unit this leaf allows at this ratio makes the most of them.
    max_units = spine_ports // rails
    max_gpus = max_units * max_su_nodes * gpus_per_node
    unit_gpus = backend.scalable_unit_gpus
    biggest_unit = f" with scalable_unit_gpus: {max_su_nodes * gpus_per_node}" if unit_gpus is not None and max_su_nodes * gpus_per_node != unit_gpus else ""
    bigger = [pid for pid in _models_with(catalog, speed) if catalog.switches[pid].ports_at(speed) > spine_ports]
    alternative = f", or spines with more {speed}G ports ({', '.join(bigger)})" if bigger else ""
    return Problem(
        f"{leaves} leaves do not fit a 2-tier fabric: each {backend.spine.model} spine has {spine_ports} {speed}G ports, so at most {spine_ports} leaves",
        hint=f"set backend.tiers: 3 (or leave it out) for a 3-tier design ({_three_tier_outline(intent, catalog, speed, rails, gpus_per_node, spine_ports, max_su_nodes)}); "
        f"2 tiers reach {max_gpus:,} GPUs{biggest_unit}{alternative}",
        field=("gpus",) if intent.gpus is not None else ("nodes",),
    )


def _three_tier_outline(intent: Intent, catalog: Catalog, speed: int, rails: int, gpus_per_node: int, spine_ports: int, default_unit: int) -> str:
    """What 3 tiers (spine model as the core too) would take, for the refusal's hint;
    `default_unit`: the nodes of a unit when the intent does not name one."""
    backend = intent.backend
    nodes = intent.nodes if intent.nodes is not None else intent.gpus // gpus_per_node  # type: ignore[operator]
    unit = backend.scalable_unit_gpus // gpus_per_node if backend.scalable_unit_gpus is not None else default_unit
    su_nodes = min(nodes, unit)
    leaf_ports = catalog.switches[backend.leaf.model].ports_at(speed)
    try:
        s = size_three_tier(nodes, rails, su_nodes, leaf_ports, spine_ports, spine_ports, backend.ratio)
    except DesignError as exc:
        return f"even 3 tiers do not fit: {exc.problems[0].message}"
    return f"{s.leaves} leaves, {s.spines} spines in {s.pods} pods, {s.cores} core switches"


def _models_with(catalog: Catalog, speed: int) -> list[str]:
    return sorted(pid for pid, model in catalog.switches.items() if model.ports_at(speed) > 0)


def leaf_ratio_nodes(leaf_ports: int, ratio: Fraction, rails_per_leaf: int) -> int:
    """The most nodes one leaf of `leaf_ports` ports (at the NICs' speed) serves at downlink:uplink
    `ratio` with `rails_per_leaf` NICs of each node on it: down + down / ratio <= ports. The
    default scalable unit: 32 nodes on a 64 x 400G leaf at 1:1, 64 on a 51.2T leaf (128 x 400G)."""
    return math.floor(leaf_ports * ratio / (ratio + 1)) // rails_per_leaf


def _pod_units(intent: Intent, common: _Common, problems: list[Problem]) -> int | None:
    """Scalable units in a pod: pod_gpus over the unit the design uses (the intent's, or the
    default one leaf serves); None when pod_gpus is not given (as many units as a spine takes).
    A pod that is not a whole number of units is refused with the sizes that are."""
    backend = intent.backend
    if backend.pod_gpus is None:
        return None
    unit_gpus = common["su_nodes"] * common["gpus_per_node"]
    if backend.pod_gpus % unit_gpus:
        lower = backend.pod_gpus - backend.pod_gpus % unit_gpus
        sizes = f"{lower:,} or {lower + unit_gpus:,}" if lower else f"{unit_gpus:,}"
        raise DesignError(
            problems
            + [
                Problem(
                    f"pod_gpus: {backend.pod_gpus:,} is not a whole number of the design's scalable units of {unit_gpus:,} GPUs "
                    f"({common['su_nodes']} nodes, as many as one {backend.leaf.model} serves at {format_ratio(backend.ratio)})",
                    hint=f"use pod_gpus: {sizes}, or set scalable_unit_gpus to a unit that divides {backend.pod_gpus:,}",
                    field=("backend", "pod_gpus"),
                )
            ]
        )
    return backend.pod_gpus // unit_gpus


IDLE_SHARE = Fraction(1, 10)  # a switch role leaving more than this share of its ports idle gets a note


def idle_port_notes(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> list[str]:
    """One note per backend switch role (leaf, spine, core) whose switches leave more than
    IDLE_SHARE of their ports idle, with the setting that would use them. Counted on a switch of
    a full unit and pod: a partial last unit or pod keeps its ports for growth, and says so in its
    own note. Not noted: a cluster smaller than one unit (its own note names scalable_unit_gpus;
    its spines are as few as redundancy allows),
    a role whose count the intent pins, rail-only leaves reserving the unit the intent names."""
    backend = intent.backend
    speed, fabric = sizing.link_speed_gbps, sizing.fabric_speed_gbps
    leaf_model = catalog.switches[backend.leaf.model]
    notes: list[str] = []
    default_nodes = leaf_ratio_nodes(leaf_model.ports_at(speed), backend.ratio, sizing.rails_per_leaf)
    explicit_unit = backend.scalable_unit_gpus is not None
    smaller_than_a_unit = _smaller_than_a_unit(intent, catalog, sizing)
    if not (smaller_than_a_unit or (explicit_unit and sizing.spineless)):
        idle, total = idle_ports(leaf_model, backend.leaf.nos, speed, ((speed, sizing.leaf_downlinks), (fabric, sizing.leaf_uplinks)))
        if idle > total * IDLE_SHARE:
            if explicit_unit and sizing.su_nodes < default_nodes and not sizing.spineless:
                use = (
                    f"scalable_unit_gpus: {default_nodes * sizing.gpus_per_node} (or leaving it out) puts {default_nodes} nodes "
                    f"on each leaf at {format_ratio(backend.ratio)}"
                )
            else:
                use = f"a leaf model with fewer {speed}G ports would use them"
            notes.append(f"leaves: {idle} of {total} {speed}G ports idle on each leaf; {use}")
    if smaller_than_a_unit:
        return notes  # the switches are as few as redundancy allows; the unit's note says why they are idle
    if sizing.spines and backend.spine.count is None:
        spine_model = catalog.switches[backend.spine.model]
        if sizing.tiers == 3:
            used = sizing.spine_downlinks + sizing.spine_uplinks
            unit_leaves = sizing.leaves_per_su // sizing.planes
            most_sus = math.floor(spine_model.ports_at(fabric) * backend.spine_ratio / (backend.spine_ratio + 1)) // unit_leaves
            if sizing.pod_sus < most_sus:
                use = f"pod_gpus: {most_sus * sizing.su_nodes * sizing.gpus_per_node} ({most_sus} scalable units) fills them"
            else:
                use = f"a spine model with fewer {fabric}G ports, or another spine_ratio, would use them"
        else:
            used = sizing.leaves // sizing.planes * sizing.links_per_spine
            use = f"a spine model with fewer {fabric}G ports would use them; more GPUs would fill them"
        idle, total = idle_ports(spine_model, backend.spine.nos, fabric, ((fabric, used),))
        if idle > total * IDLE_SHARE:
            notes.append(f"spines: {idle} of {total} {fabric}G ports idle on each spine; {use}")
    if sizing.tiers == 3 and backend.core_switch.count is None:
        core = backend.core_switch
        core_model = catalog.switches[core.model]
        idle, total = idle_ports(core_model, core.nos, fabric, ((fabric, sizing.pods * sizing.links_per_core),))
        if idle > total * IDLE_SHARE:
            notes.append(
                f"cores: {idle} of {total} {fabric}G ports idle on each core ({sizing.pods} pods); a core model with fewer {fabric}G ports "
                f"would use them; more pods would fill them"
            )
    return notes


def idle_ports(model: SwitchModel, nos: str, speed: int, taken: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """(idle, total) ports of `model` at `speed` once `taken` ((speed, count) ...) is allocated as
    the graph does (a cage serving one speed only); none idle if `taken` does not fit."""
    total = model.ports_at(speed)
    try:
        return _free_ports(model, nos, taken, speed), total
    except OutOfPorts:
        return 0, total


def _smaller_than_a_unit(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> bool:
    """Whether the unit was cut to a cluster smaller than the default one (and said so in a note)."""
    backend = intent.backend
    default_nodes = leaf_ratio_nodes(catalog.switches[backend.leaf.model].ports_at(sizing.link_speed_gbps), backend.ratio, sizing.rails_per_leaf)
    return backend.scalable_unit_gpus is None and sizing.su_count == 1 and sizing.su_nodes < default_nodes


def growth_notes(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> list[str]:
    """A note when one more scalable unit would change a 2-tier backend's spine count (or need
    3 tiers): every leaf's uplinks would then move to other spines, so growth would recable the
    whole fabric instead of adding to it. It names the pin that keeps growth additive: the grown
    design's spine count, or the count with one link from each leaf to each spine, which holds
    until the spines' ports are full. Nothing to say with spines pinned, given uplinks, 3 tiers, no
    spines, or a cluster smaller than one unit."""
    backend = intent.backend
    if sizing.tiers != 2 or sizing.spineless or backend.spine.count is not None or backend.uplinks is not None:
        return []
    if _smaller_than_a_unit(intent, catalog, sizing):
        return []
    unit_gpus = sizing.su_nodes * sizing.gpus_per_node
    if sizing.gpus + unit_gpus > MAX_GPUS:
        return []
    more = {"nodes": sizing.nodes + sizing.su_nodes} if intent.nodes is not None else {"gpus": sizing.gpus + unit_gpus}
    try:
        grown: BackendSizing | None = _size_backend(intent.model_copy(update=more), catalog)[0]
    except DesignError:
        grown = None
    if grown is not None and grown.tiers == 2 and grown.spines == sizing.spines:
        return []
    bigger = f"one more scalable unit ({sizing.gpus + unit_gpus:,} GPUs)"
    most_spines = sizing.leaf_uplinks * sizing.planes  # one link from each leaf to each spine
    spine_ports = catalog.switches[backend.spine.model].ports_at(sizing.fabric_speed_gbps)
    reach = spine_ports // (sizing.leaves_per_su // sizing.planes) * unit_gpus
    if grown is not None and grown.tiers == 2:
        what = f"{bigger} takes {grown.spines} spines instead of {sizing.spines}"
        keep = f"to grow by adding leaves only, pin backend.spine.count: {grown.spines} (one more unit)"
        if most_spines > grown.spines:
            keep += f" or {most_spines} (one link from each leaf to each spine: up to {reach:,} GPUs)"
    else:
        what = f"{bigger} {'needs 3 tiers' if grown is not None else 'does not fit these switches in 2 tiers'}"
        if most_spines > sizing.spines:
            keep = f"to grow by adding leaves only, pin backend.spine.count: {most_spines} (one link from each leaf to each spine: up to {reach:,} GPUs in 2 tiers)"
        else:
            keep = "2 tiers of these switches are full: build with backend.tiers: 3 to grow by adding pods"
    return [f"growth: {what}, which moves every leaf's uplinks to other spines (every leaf-spine link recabled); {keep}"]
