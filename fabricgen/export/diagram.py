"""Diagrams of a build: Graphviz (.dot), D2 (.d2) and Mermaid (.mmd) per network, rack elevations (SVG).

`render_diagram(build, views=()) -> {path: text}`; `views` are the `--view` values:
- `full`: every device of a network and every pair of cabled devices as one line.
- `summary`: the network in groups, at any size: the switches of a tier drawn one by one while a
  tier holds few (`SUMMARY_SINGLES`: 2 spines or cores, 16 leaves), else grouped (spines by pod and
  plane, cores by core group, leaves by unit and rails, then by unit, then by rails); servers
  always as one box per unit and role ("su01: 32 GPU nodes × 8 links"). A line between two groups
  carries their cables counted per speed ("32 × 400G").
- `auto` (no view given): `full` while no tier of the network's full drawing holds more than
  `FULL_VIEW_MAX_PER_TIER` devices, else `summary`. Either is written as `<network>.*`.
- `unit:N` / `unit:all`: a unit's devices (its pod in a 3-tier fabric, else its scalable unit), every
  cable with an end among them and the devices those reach: `<network>-su01.*` (or `-pod01`).
- `rail:N` / `rail:all`: the leaves that serve rail N, every cable with an end on them and the
  devices those reach: `<network>-rail1.*`.

Tiers are drawn top down (cores, spines, leaves and OOB switches, servers); within a tier devices
stand in natural order (gpu2 before gpu10; switches by pod, plane, unit, then index). A line to a leaf
that serves rails is drawn in the colour of its rails and a legend names every colour by its rails
("rails 1-4" for a leaf serving four). The writers (`diagram_formats`) keep that order in the
layout where the tool allows it (Graphviz); the rack elevations are `diagram_elevation`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from fabricgen.basics.errors import Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import CableRow, TopologyNode
from fabricgen.compiler.design.graph import SERVER_ROLES, Role
from fabricgen.export.diagram_elevation import elevations
from fabricgen.export.diagram_formats import to_d2, to_dot, to_mermaid
from fabricgen.export.diagram_model import ROLE_FILL, ROLE_NAMES, ROLE_ORDER, TIERS, Box, Drawing, Edge, rails_text
from fabricgen.export.source import ExportBuild, ExportError

FULL_VIEW_MAX_PER_TIER = 16  # a row of 16 boxes is about a page wide: beyond it, `auto` draws the summary
# the summary's boxes per tier: one a device while the tier holds at most SUMMARY_SINGLES (a full
# mesh of 4 spines and 8 leaves is 32 lines), else the finest grouping of at most SUMMARY_MAX_BOXES
SUMMARY_SINGLES = {"core": 2, "spine": 2, "leaf": 16}
SUMMARY_MAX_BOXES = {"core": 4, "spine": 4, "leaf": 16, "server": 16}
OOB_TIERS = {Role.MANAGEMENT_CORE: "core", Role.OOB_SWITCH: "spine", Role.CONSOLE_SERVER: "leaf"}
VIEW = re.compile(r"(auto|full|summary)|(unit|rail):([0-9]{1,5}|all)")
NETWORKS = ("backend", "frontend", "storage", "oob")


def tier_of(node: TopologyNode, network: str) -> str:
    """A device's tier in a network's drawing. In the OOB network every fabric switch and server is
    an endpoint: the management core above the OOB switches, console servers below them, then the rest."""
    if network == "oob":
        return OOB_TIERS.get(node.role, "server")
    for tier, roles in TIERS:
        if node.role in roles:
            return tier
    return "server"


def unit_of(node: TopologyNode) -> int | None:
    return node.pod if node.pod is not None else node.scalable_unit


def rails_of(node: TopologyNode) -> tuple[int, ...] | None:
    """The rails a leaf serves (None for a switch serving none)."""
    if node.rails:
        return tuple(sorted(node.rails))
    return (node.rail,) if node.rail is not None else None


def device_order(node: TopologyNode) -> tuple:
    """Left to right within a tier: by role, then servers by name, switches by pod, plane, unit, index, then name."""
    if node.role in SERVER_ROLES:
        return (ROLE_ORDER[node.role], 0, 0, 0, 0, natural_key(node.id))
    return (ROLE_ORDER[node.role], node.pod or 0, node.plane or 0, node.scalable_unit or 0, node.index, natural_key(node.id))


def speeds_label(speeds: Counter[str]) -> str:
    """'32 × 400G', or '4 × 400G + 2 × 100G' with mixed speeds (fastest first)."""
    return " + ".join(f"{n} × {speed}" for speed, n in sorted(speeds.items(), key=lambda item: (-_gbps(item[0]), item[0])))


def _gbps(speed: str) -> float:
    match = re.fullmatch(r"([0-9.]+)([GM]?)", speed)
    if not match:
        return 0.0
    return float(match.group(1)) / (1000 if match.group(2) == "M" else 1)


# --- which views ---------------------------------------------------------------------------------


def parse_views(views: Iterable[str]) -> tuple[str, set[int] | None, set[int] | None]:
    """The `--view` values as (main view or '', units, rails): a set of numbers, None for all, an empty set for none."""
    main, units, rails = "", set[int](), set[int]()
    all_units = all_rails = False
    problems = []
    for value in views:
        match = VIEW.fullmatch(value)
        if not match:
            problems.append(Problem(f"unknown view {value!r}", hint="give full, summary, auto, unit:N, unit:all, rail:N or rail:all", field=("--view",)))
        elif match.group(1):
            if main and main != match.group(1):
                problems.append(
                    Problem(f"views {main} and {match.group(1)} both draw <network>.*", hint="give one of full, summary and auto", field=("--view",))
                )
            main = match.group(1)
        elif match.group(3) == "all":
            all_units, all_rails = all_units or match.group(2) == "unit", all_rails or match.group(2) == "rail"
        else:
            (units if match.group(2) == "unit" else rails).add(int(match.group(3)))
    if problems:
        raise ExportError(problems)
    if not main and not units and not rails and not all_units and not all_rails:
        main = "auto"
    return main, None if all_units else units, None if all_rails else rails


def render_diagram(build: ExportBuild, views: Sequence[str] = ()) -> dict[str, str]:
    """Every drawing the views ask for, in each format, and the rack elevations."""
    main, units, rails = parse_views(views)
    drawn: dict[str, Drawing] = {}
    seen_units: set[int] = set()
    seen_rails: set[int] = set()
    for network in NETWORKS:
        cables = [row for row in build.cables if row.network == network and row.a_device in build.nodes and row.b_device in build.nodes]
        if not cables:
            continue
        fabric = Fabric(build, network, cables)
        if main:
            drawn[network] = fabric.main_view(main)
        seen_units |= set(fabric.units)
        seen_rails |= set(fabric.rail_leaves)
        for u in sorted(fabric.units) if units is None else sorted(units & set(fabric.units)):
            drawn[f"{network}-{fabric.unit_name(u)}"] = fabric.unit_view(u)
        for r in sorted(fabric.rail_leaves) if rails is None else sorted(rails & set(fabric.rail_leaves)):
            drawn[f"{network}-rail{r}"] = fabric.rail_view(r)
    problems = []
    if units and units - seen_units:
        problems.append(
            Problem(
                f"no network has unit {', '.join(map(str, sorted(units - seen_units)))}", hint=f"units in this build: {_numbers(seen_units)}", field=("--view",)
            )
        )
    if rails and rails - seen_rails:
        problems.append(
            Problem(
                f"no leaf serves rail {', '.join(map(str, sorted(rails - seen_rails)))}", hint=f"rails in this build: {_numbers(seen_rails)}", field=("--view",)
            )
        )
    if problems:
        raise ExportError(problems)
    files: dict[str, str] = {}
    for name, drawing in drawn.items():
        files[f"{name}.dot"] = to_dot(drawing)
        files[f"{name}.d2"] = to_d2(drawing)
        files[f"{name}.mmd"] = to_mermaid(drawing)
    files.update(elevations(build))
    return files


def _numbers(values: set[int]) -> str:
    return ", ".join(map(str, sorted(values))) or "none"


# --- one network ---------------------------------------------------------------------------------


class Fabric:
    """One network's devices and cables, and the drawings of it."""

    def __init__(self, build: ExportBuild, network: str, cables: list[CableRow]):
        self.title = f"{build.name} {network}"
        self.network = network
        self.nodes = nodes = build.nodes
        self.cables = cables
        self.pairs: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.links: Counter[str] = Counter()  # cables per device
        name_key = cache(natural_key)  # once a device, not once a cable
        for row in cables:
            self.links.update((row.a_device, row.b_device))
            a, b = sorted((row.a_device, row.b_device), key=name_key)
            self.pairs[a, b][row.speed] += 1
        self.pairs_of: dict[str, list[tuple[str, str]]] = defaultdict(list)  # the pairs of cabled devices each device is in
        for pair in self.pairs:
            for d in pair:
                self.pairs_of[d].append(pair)
        self.devices = sorted(self.pairs_of, key=lambda d: device_order(nodes[d]))
        self.rank = {d: index for index, d in enumerate(self.devices)}  # drawing order
        self.tier = tier = {d: tier_of(nodes[d], network) for d in self.devices}
        # a switch belongs to its pod / scalable unit; a server to its first leaf's (a GPU node's
        # scalable unit is not its pod's number), else to its own scalable unit
        unit: dict[str, int | None] = {d: None if nodes[d].role in SERVER_ROLES else unit_of(nodes[d]) for d in self.devices}
        leaf_of: dict[str, str] = {}
        for a, b in sorted(self.pairs, key=lambda pair: (self.rank[pair[0]], self.rank[pair[1]])):
            for x, y in ((a, b), (b, a)):
                if nodes[x].role in SERVER_ROLES and tier[y] == "leaf" and x not in leaf_of:
                    leaf_of[x] = y
                    unit[x] = unit[y]
        for d in self.devices:
            if unit[d] is None and nodes[d].role in SERVER_ROLES:
                unit[d] = nodes[d].scalable_unit
        # the devices drawn inside a unit: cores stand above every unit; a 3-tier pod holds its spines
        self.inside = {d: u for d in self.devices if (u := unit[d]) is not None and tier[d] != "core"}
        self.units = sorted(set(self.inside.values()))
        self.unit_name = _unit_namer(nodes)
        self.rail_leaves: dict[int, set[str]] = defaultdict(set)
        for d in self.devices:
            if tier[d] == "leaf" and (rails := rails_of(nodes[d])):
                for r in rails:
                    self.rail_leaves[r].add(d)

    # the views

    def main_view(self, view: str) -> Drawing:
        if view == "summary":
            return self.summary("summary view (--view full draws every device)")
        widest = max(Counter(self.tier.values()).values())
        if view == "full":
            return self.detail(self.title, self.devices, self.pairs, "full view")
        if widest > FULL_VIEW_MAX_PER_TIER:
            return self.summary(f"summary view: a tier of {widest} devices is over {FULL_VIEW_MAX_PER_TIER} (--view full draws every device)")
        return self.detail(self.title, self.devices, self.pairs, f"full view: no tier over {FULL_VIEW_MAX_PER_TIER} devices")

    def unit_view(self, unit: int) -> Drawing:
        members = {d for d, u in self.inside.items() if u == unit}
        return self._around(members, f"{self.title} {self.unit_name(unit)}", f"unit view: {self.unit_name(unit)}")

    def rail_view(self, rail: int) -> Drawing:
        return self._around(self.rail_leaves[rail], f"{self.title} rail {rail}", f"rail view: the leaves serving rail {rail}")

    def _around(self, members: set[str], title: str, view: str) -> Drawing:
        pairs = {pair: self.pairs[pair] for d in members for pair in self.pairs_of[d]}
        drawn = members.union(*pairs)
        return self.detail(title, [d for d in self.devices if d in drawn], pairs, view)

    # full detail

    def detail(self, title: str, devices: list[str], pairs: dict[tuple[str, str], Counter[str]], view: str) -> Drawing:
        nodes = self.nodes
        tiers: dict[str, list[Box]] = defaultdict(list)
        for d in devices:  # already in drawing order
            rails = rails_of(nodes[d]) if self.tier[d] == "leaf" else None
            tiers[self.tier[d]].append(Box(d, d + (f"\n{rails_text(rails)}" if rails else ""), _fill(nodes[d])))
        edges = []
        for (a, b), speeds in sorted(pairs.items(), key=lambda item: self._edge_order(item[0])):
            count = sum(speeds.values())
            edges.append(Edge(a, b, speeds_label(speeds) if count > 1 else "", self._server_leaf_rails(a, b)))
        return Drawing(title, view, dict(tiers), edges, _legend(edges), self._tier_names(devices))

    def _tier_names(self, devices: list[str]) -> dict[str, str]:
        roles: dict[str, set[Role]] = defaultdict(set)
        for d in devices:
            roles[self.tier[d]].add(self.nodes[d].role)
        return {tier: ", ".join(ROLE_NAMES.get(r, (r, r))[1] for r in sorted(held, key=ROLE_ORDER.__getitem__)) for tier, held in roles.items()}

    def _edge_order(self, pair: tuple[str, str]) -> tuple[int, int]:
        return self.rank[pair[0]], self.rank[pair[1]]

    def _server_leaf_rails(self, a: str, b: str) -> tuple[int, ...] | None:
        tiers = {self.tier[a]: a, self.tier[b]: b}
        if set(tiers) == {"server", "leaf"}:
            return rails_of(self.nodes[tiers["leaf"]])
        return None

    # the summary

    def summary(self, view: str) -> Drawing:
        nodes = self.nodes
        by_tier: dict[str, list[str]] = defaultdict(list)
        for d in self.devices:
            by_tier[self.tier[d]].append(d)
        group: dict[str, str] = {}  # device -> box id
        tiers: dict[str, list[Box]] = {}
        box_rails: dict[str, tuple[int, ...] | None] = {}
        for tier, _ in TIERS:
            if not by_tier[tier]:
                continue
            tiers[tier] = []
            for key, members in self._grouped(tier, by_tier[tier]):
                first = nodes[members[0]]
                if key[0] == "device":
                    box_id = members[0]
                    rails = rails_of(first) if tier == "leaf" else None
                    label = members[0] + (f"\n{rails_text(rails)}" if rails else "")
                else:
                    box_id = "group-" + "-".join(str(part) for part in (tier, *key))
                    rails = rails_of(first) if "rails" in key else None
                    label = self._group_label(key, members)
                box_rails[box_id] = rails
                tiers[tier].append(Box(box_id, label, _fill(first)))
                group.update(dict.fromkeys(members, box_id))
        place = {box.id: (row, column) for row, boxes in enumerate(tiers.values()) for column, box in enumerate(boxes)}
        servers = {box.id for box in tiers.get("server", [])}
        lines: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for (a, b), speeds in self.pairs.items():
            ga, gb = sorted((group[a], group[b]), key=place.__getitem__)
            if ga != gb:  # cables within one group (peer links of the leaves of one group) are not drawn
                lines[ga, gb].update(speeds)
        edges = []
        for (a, b), speeds in sorted(lines.items(), key=lambda item: (place[item[0][0]], place[item[0][1]])):
            edges.append(Edge(a, b, speeds_label(speeds), box_rails[a] if b in servers else None))
        return Drawing(self.title, view, tiers, edges, _legend(edges), self._tier_names(self.devices))

    def _grouped(self, tier: str, devices: list[str]) -> list[tuple[tuple, list[str]]]:
        """The finest grouping of a tier's devices (in drawing order, each group led by its first)
        that keeps the tier within its box budget; the key names what the group shares."""
        nodes = self.nodes

        def role(d: str) -> tuple:
            return ("role", nodes[d].role.value)

        def unit(d: str) -> tuple:
            return ("unit", self.inside.get(d) or 0)

        def rails(d: str) -> tuple:
            return ("rails", *(rails_of(nodes[d]) or ()))

        keys: list[Callable[[str], tuple]] = []
        if tier == "server":
            keys.append(lambda d: (*unit(d), *role(d)))
        elif len(devices) <= SUMMARY_SINGLES[tier]:
            keys.append(lambda d: ("device", d))
        if tier == "core":
            keys.append(lambda d: ("core-group", nodes[d].core_group or 0))
        elif tier == "spine":
            keys += [lambda d: ("pod", nodes[d].pod or 0, "plane", nodes[d].plane or 0), lambda d: ("pod", nodes[d].pod or 0)]
        elif tier == "leaf":
            keys += [lambda d: (*role(d), *unit(d), *rails(d)), lambda d: (*role(d), *unit(d)), lambda d: (*role(d), *rails(d))]
        keys.append(role)
        for key in keys:
            groups: dict[tuple, list[str]] = defaultdict(list)
            for d in devices:
                groups[key(d)].append(d)
            if len(groups) <= SUMMARY_MAX_BOXES[tier]:
                break
        return list(groups.items())

    def _group_label(self, key: tuple, members: list[str]) -> str:
        """'su01, rail 1: 2 leaves' / 'su01: 32 GPU nodes × 8 links', then the first and last names."""
        nodes = self.nodes
        parts = dict(zip(key[::2], key[1::2], strict=False))  # the key's (name, value) pairs; rails are cut to the first
        scope = []
        if parts.get("pod"):
            scope.append(f"pod{parts['pod']:02d}")
        if parts.get("plane"):
            scope.append(f"plane {parts['plane']}")
        if parts.get("unit"):
            scope.append(self.unit_name(parts["unit"]))
        if parts.get("core-group"):
            scope.append(f"core group {parts['core-group']}")
        served = sorted({r for d in members for r in rails_of(nodes[d]) or ()}) if self.tier[members[0]] == "leaf" else []
        if served:
            scope.append(rails_text(served))
        role = nodes[members[0]].role.value
        one, many = ROLE_NAMES.get(role, (role, role + "s"))
        what = f"{len(members)} {one if len(members) == 1 else many}"
        if self.tier[members[0]] == "server":
            low, high = min(self.links[d] for d in members), max(self.links[d] for d in members)
            what += f" × {low if low == high else f'{low}-{high}'} link{'s' if high > 1 else ''}"
        names = members[0] if len(members) == 1 else f"{members[0]}, {members[1]}" if len(members) == 2 else f"{members[0]} … {members[-1]}"
        return (", ".join(scope) + ": " if scope else "") + what + "\n" + names


def _legend(edges: list[Edge]) -> list[tuple[int, ...]]:
    return sorted({e.rails for e in edges if e.rails is not None})


def _unit_namer(nodes: dict[str, TopologyNode]) -> Callable[[int], str]:
    """A unit's name: pods where the fabric has them, else scalable units (looked up once)."""
    prefix = "pod" if any(n.pod is not None for n in nodes.values()) else "su"
    return lambda unit: f"{prefix}{unit:02d}"


def _fill(node: TopologyNode) -> str:
    return ROLE_FILL.get(node.role.value, "#eeeeee")
