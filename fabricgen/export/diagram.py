"""Diagrams of a build: Graphviz (.dot), D2 (.d2) and Mermaid (.mmd) per network, rack elevations (SVG).

`render_diagram(build) -> {path: text}`
- per network with cables (backend, frontend, storage, oob): `<network>.dot|.d2|.mmd`. Devices
  are ranked by tier, top down: cores, spines, leaves (OOB switches), then servers; the links
  between two devices are one line labelled with their count; a link to a leaf that serves a rail
  is drawn in that rail's colour, and a legend names the colours.
- a network of more than `MAX_DEVICES` devices is drawn per unit instead (its pods, spines
  included, in a 3-tier fabric, else its scalable units): `<network>-overview.*` with the switches
  above the units and one box per unit (its spine, leaf and server counts; its uplinks counted per
  switch above; cores with a core group as one box per group), and `<network>-<unit>.*` with one unit's devices and the switches they reach. A 4,096-GPU
  superpod (3 tiers) becomes an overview of 4 pods and 32 core groups plus one drawing per pod.
- with a layout (topology.json's `rack` and `ru` per device): `elevations/<row>.svg`, the racks of
  one row side by side, every device at its rack units (heights from fabricgen's built-in catalog,
  1 RU for models it does not hold), coloured by role; devices with a rack and no RU (PDUs) in a
  strip beside their rack. Each device's name, model and units are its <title> (a tooltip).

Syntax followed: Graphviz's DOT language (graphviz.org/doc/info/lang.html: quoted IDs with \\"
escapes, `rank=same` subgraphs), D2's (d2lang.com: quoted keys, containers, `style.stroke`),
Mermaid's flowchart (mermaid.js.org/syntax/flowchart.html: `id["label"]`, `subgraph`, `linkStyle`,
labels escaped as `#quot;`). Every name has passed the build's trust checks; rack names (free text)
are escaped for each syntax and for XML.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from xml.sax.saxutils import escape as xml_escape

from fabricgen import __version__
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import CableRow, TopologyNode
from fabricgen.compiler.design.graph import Role
from fabricgen.export.source import ExportBuild

MAX_DEVICES = 200  # above this a network is drawn per unit
# Colour-blind-safe qualitative palette (Okabe and Ito), then four more; rails past 12 repeat.
RAIL_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999933", "#882255", "#44AA99", "#332288")
TIERS = (("core", (Role.CORE,)), ("spine", (Role.SPINE,)), ("leaf", (Role.LEAF, Role.OOB_SWITCH)), ("server", ()))
ROLE_FILL = {
    "gpu-node": "#c8e6c9", "storage-node": "#d7ccc8", "management-node": "#cfd8dc", "leaf": "#bbdefb", "spine": "#c5cae9",
    "core": "#e1bee7", "oob-switch": "#ffe0b2", "console-server": "#fff9c4", "pdu": "#eeeeee",
}  # fmt: skip
RACK_UNIT_PX = 14
RACK_WIDTH_PX = 200


@dataclass(frozen=True)
class Edge:
    a: str
    b: str
    count: int
    rail: int | None  # the rail of the leaf end, for a server link


@dataclass
class Drawing:
    """One diagram: devices per tier, edges, and the units drawn as boxes (overview)."""

    title: str
    tiers: dict[str, list[tuple[str, str, str]]]  # tier -> [(id, label, fill colour)]
    edges: list[Edge]


def tier_of(node: TopologyNode) -> str:
    for tier, roles in TIERS:
        if node.role in roles:
            return tier
    return "server"


def unit_of(node: TopologyNode) -> int | None:
    return node.pod if node.pod is not None else node.scalable_unit


def render_diagram(build: ExportBuild) -> dict[str, str]:
    files: dict[str, str] = {}
    for network in ("backend", "frontend", "storage", "oob"):
        cables = [row for row in build.cables if row.network == network and row.a_device in build.nodes and row.b_device in build.nodes]
        if not cables:
            continue
        for name, drawing in drawings(build, network, cables).items():
            files[f"{name}.dot"] = to_dot(drawing)
            files[f"{name}.d2"] = to_d2(drawing)
            files[f"{name}.mmd"] = to_mermaid(drawing)
    files.update(elevations(build))
    return files


def drawings(build: ExportBuild, network: str, cables: list[CableRow]) -> dict[str, Drawing]:
    pairs: dict[tuple[str, str], int] = defaultdict(int)
    for row in cables:
        a, b = sorted((row.a_device, row.b_device), key=natural_key)
        pairs[a, b] += 1
    devices = sorted({d for pair in pairs for d in pair}, key=natural_key)
    nodes = build.nodes
    if len(devices) <= MAX_DEVICES:
        return {network: _drawing(f"{build.name} {network}", nodes, devices, pairs)}
    # per unit: a switch belongs to its pod / scalable unit, a server to its first leaf's (a GPU
    # node's scalable unit is not its pod's number), else to its own scalable unit
    unit: dict[str, int | None] = {d: None if tier_of(nodes[d]) == "server" else unit_of(nodes[d]) for d in devices}
    for a, b in sorted(pairs, key=natural_key):
        for x, y in ((a, b), (b, a)):
            if unit[x] is None and tier_of(nodes[x]) == "server" and tier_of(nodes[y]) == "leaf":
                unit[x] = unit[y]
    for d in devices:
        if unit[d] is None and tier_of(nodes[d]) == "server":
            unit[d] = nodes[d].scalable_unit

    # the devices drawn inside a unit, with their unit: cores stand above every unit; a 3-tier pod holds its spines
    inside: dict[str, int] = {d: u for d in devices if (u := unit[d]) is not None and tier_of(nodes[d]) != "core"}
    units = sorted(set(inside.values()))
    unit_name = _unit_namer(nodes)
    members: dict[int, list[str]] = defaultdict(list)
    for d in devices:  # in natural order, as the drawing lists them
        if d in inside:
            members[inside[d]].append(d)
    # each unit's drawing: its members, every cable with an end among them, and the devices those reach
    cabled: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
    for pair, n in pairs.items():
        for u in {inside[d] for d in pair if d in inside}:
            cabled[u][pair] = n
    result = {}
    for u in units:
        drawn = set(members[u]).union(*cabled[u])
        result[f"{network}-{unit_name(u)}"] = _drawing(f"{build.name} {network} {unit_name(u)}", nodes, sorted(drawn, key=natural_key), cabled[u])
    # the overview: switches above the units, each unit one box
    box = {u: f"unit-{unit_name(u)}" for u in units}

    def core_box(d: str) -> str | None:  # cores drawn by their core group, when they have one
        group = nodes[d].core_group
        return f"core-group{group:02d}" if tier_of(nodes[d]) == "core" and group is not None else None

    grouped: dict[tuple[str, str], int] = defaultdict(int)
    for (a, b), n in pairs.items():
        ends = [box[inside[x]] if x in inside else core_box(x) or x for x in (a, b)]
        if ends[0] != ends[1]:
            first, second = sorted(ends, key=natural_key)
            grouped[first, second] += n
    tiers: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for d in devices:
        if d not in inside and core_box(d) is None:
            tiers[tier_of(nodes[d])].append((d, d, _fill(nodes[d])))
    cores: dict[str, int] = defaultdict(int)
    for d in devices:
        if group := core_box(d):
            cores[group] += 1
    for name, n in sorted(cores.items()):
        tiers["core"].append((name, f"core group {name.removeprefix('core-group')}: {n} cores", ROLE_FILL["core"]))
    for u in units:
        counts = Counter(tier_of(nodes[d]) for d in members[u])
        label = ", ".join(f"{counts[tier]} {tier}s" if tier != "leaf" else f"{counts[tier]} leaves" for tier in ("spine", "leaf", "server") if counts[tier])
        tiers["leaf"].append((box[u], f"{unit_name(u)}: {label}", ROLE_FILL["leaf"]))
    edges = [Edge(a, b, n, None) for (a, b), n in sorted(grouped.items(), key=lambda item: natural_key(item[0]))]
    result[f"{network}-overview"] = Drawing(f"{build.name} {network} overview", dict(tiers), edges)
    return result


def _unit_namer(nodes: dict[str, TopologyNode]) -> Callable[[int], str]:
    """A unit's name: pods where the fabric has them, else scalable units (looked up once)."""
    prefix = "pod" if any(n.pod is not None for n in nodes.values()) else "su"
    return lambda unit: f"{prefix}{unit:02d}"


def _drawing(title: str, nodes: dict[str, TopologyNode], devices: list[str], pairs: dict[tuple[str, str], int]) -> Drawing:
    tiers: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for d in devices:
        tiers[tier_of(nodes[d])].append((d, d, _fill(nodes[d])))
    edges = []
    for (a, b), n in sorted(pairs.items(), key=lambda item: natural_key(item[0])):
        rail = None
        ends = {tier_of(nodes[a]), tier_of(nodes[b])}
        if ends == {"server", "leaf"}:
            leaf = a if tier_of(nodes[a]) == "leaf" else b
            rail = nodes[leaf].rail
        edges.append(Edge(a, b, n, rail))
    return Drawing(title, dict(tiers), edges)


def rail_color(rail: int) -> str:
    return RAIL_COLORS[(rail - 1) % len(RAIL_COLORS)]


def _rails(drawing: Drawing) -> list[int]:
    return sorted({e.rail for e in drawing.edges if e.rail is not None})


# --- Graphviz ------------------------------------------------------------------------------------


def _dq(text: str) -> str:
    """A DOT double-quoted ID."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(drawing: Drawing) -> str:
    lines = [
        f"// {drawing.title}: written by fabricgen {__version__} (fabricgen export diagram); render with: dot -Tsvg FILE -o FILE.svg",
        f"graph {_dq(drawing.title)} {{",
        "  rankdir=TB; newrank=true; splines=true; nodesep=0.2; ranksep=1.2;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8, color="#777777"];',
    ]
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"  subgraph {_dq('tier_' + tier)} {{ rank=same;")
        for node_id, label, fill in members:
            lines.append(f"    {_dq(node_id)} [label={_dq(label)}, fillcolor={_dq(fill)}];")
        lines.append("  }")
    for e in drawing.edges:
        attributes = [f"label={_dq(str(e.count))}"] if e.count > 1 else []
        if e.rail is not None:
            attributes += [f"color={_dq(rail_color(e.rail))}", "penwidth=2"]
        lines.append(f"  {_dq(e.a)} -- {_dq(e.b)}" + (f" [{', '.join(attributes)}]" if attributes else "") + ";")
    rails = _rails(drawing)
    if rails:
        lines.append(f'  subgraph {_dq("cluster_legend")} {{ label={_dq("rails")}; fontname="Helvetica"; fontsize=10;')
        for rail in rails:
            lines.append(f'    {_dq(f"legend_rail{rail}")} [label={_dq(f"rail {rail}")}, fillcolor={_dq(rail_color(rail))}, fontcolor="white"];')
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _fill(node: TopologyNode) -> str:
    return ROLE_FILL.get(node.role.value, "#eeeeee")


# --- D2 ------------------------------------------------------------------------------------------


def _d2q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_d2(drawing: Drawing) -> str:
    lines = [f"# {drawing.title}: written by fabricgen {__version__} (fabricgen export diagram); render with: d2 FILE FILE.svg", "direction: down"]
    where: dict[str, str] = {}
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"{tier}s: {{")
        for node_id, label, fill in members:
            lines.append(f"  {_d2q(node_id)}: {_d2q(label)} {{ style.fill: {_d2q(fill)} }}")
            where[node_id] = f"{tier}s.{_d2q(node_id)}"
        lines.append("}")
    for e in drawing.edges:
        label = f": {_d2q(str(e.count))}" if e.count > 1 else ""
        style = f" {{ style.stroke: {_d2q(rail_color(e.rail))}; style.stroke-width: 2 }}" if e.rail is not None else ""
        lines.append(f"{where[e.a]} -- {where[e.b]}{label}{style}")
    rails = _rails(drawing)
    if rails:
        lines.append("legend: rails {")
        for rail in rails:
            lines.append(f"  rail{rail}: {_d2q(f'rail {rail}')} {{ style.fill: {_d2q(rail_color(rail))}; style.font-color: white }}")
        lines.append("}")
    return "\n".join(lines) + "\n"


# --- Mermaid -------------------------------------------------------------------------------------


def _mermaid_id(node_id: str) -> str:
    return "n_" + re.sub(r"[^A-Za-z0-9_]", "_", node_id)


def _mermaid_label(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'


def to_mermaid(drawing: Drawing) -> str:
    lines = [f"%% {drawing.title}: written by fabricgen {__version__} (fabricgen export diagram)", "flowchart TB"]
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"  subgraph tier_{tier}[{_mermaid_label(tier + 's')}]")
        lines += [f"    {_mermaid_id(node_id)}[{_mermaid_label(label)}]" for node_id, label, _ in members]
        lines.append("  end")
    styles = []
    for index, e in enumerate(drawing.edges):
        label = f"|{_mermaid_label(str(e.count))}|" if e.count > 1 else ""
        lines.append(f"  {_mermaid_id(e.a)} ---{label} {_mermaid_id(e.b)}")
        if e.rail is not None:
            styles.append(f"  linkStyle {index} stroke:{rail_color(e.rail)},stroke-width:2px")
    rails = _rails(drawing)
    if rails:
        lines.append(f"  subgraph legend[{_mermaid_label('rails')}]")
        for rail in rails:
            lines.append(f"    legend_rail{rail}[{_mermaid_label(f'rail {rail}')}]")
            styles.append(f"  style legend_rail{rail} fill:{rail_color(rail)},color:#fff")
        lines.append("  end")
    return "\n".join(lines + styles) + "\n"


# --- rack elevations -----------------------------------------------------------------------------


def elevations(build: ExportBuild) -> dict[str, str]:
    """`elevations/<row>.svg` per row of racks, when devices have rack positions."""
    from fabricgen.catalog import load_catalog

    racks: dict[str, list[TopologyNode]] = defaultdict(list)
    for n in build.topology.nodes:
        if n.rack:
            racks[n.rack].append(n)
    if not racks:
        return {}
    catalog = load_catalog()

    def height(model: str) -> int:
        for section in (catalog.switches, catalog.nodes, catalog.console_servers):
            if model in section:
                return section[model].rack_units
        return 1

    rows: dict[str, list[str]] = defaultdict(list)
    for rack in racks:
        match = re.fullmatch(r"R(\d+)-\d+", rack)
        rows[f"row{int(match.group(1)):02d}" if match else "racks"].append(rack)
    files = {}
    for row, names in rows.items():
        files[f"elevations/{row}.svg"] = _row_svg(build.name, row, sorted(names, key=natural_key), racks, height)
    return files


def _row_svg(fabric: str, row: str, names: list[str], racks: dict[str, list[TopologyNode]], height) -> str:
    units = max([42] + [n.ru + height(n.model) - 1 for name in names for n in racks[name] if n.ru])
    gap, top = 40, 50
    width = len(names) * (RACK_WIDTH_PX + gap) + gap
    total = top + units * RACK_UNIT_PX + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" viewBox="0 0 {width} {total}" font-family="Helvetica, Arial, sans-serif">',
        # the fabric's name stays out of the comment: a hostname may hold "--", which ends no XML comment legally
        f"<!-- rack elevations written by fabricgen {__version__}; rack height {units} RU (the build does not record it: 42, or the highest device) -->",
        f'<text x="{gap}" y="24" font-size="16">{xml_escape(fabric)}: {row}</text>',
    ]
    for index, name in enumerate(names):
        x = gap + index * (RACK_WIDTH_PX + gap)
        out.append(f'<text x="{x}" y="{top - 8}" font-size="12">{xml_escape(name)}</text>')
        out.append(f'<rect x="{x}" y="{top}" width="{RACK_WIDTH_PX}" height="{units * RACK_UNIT_PX}" fill="#fafafa" stroke="#333"/>')
        zero_u = sorted((n for n in racks[name] if not n.ru), key=lambda n: natural_key(n.id))
        for slot, n in enumerate(zero_u):  # PDUs and other 0U devices: a strip beside the rack
            strip = units * RACK_UNIT_PX // max(len(zero_u), 1)
            out.append(
                f'<rect x="{x + RACK_WIDTH_PX + 4}" y="{top + slot * strip}" width="10" height="{strip - 2}" fill="{ROLE_FILL.get(n.role.value, "#eeeeee")}" stroke="#555">'
                f"<title>{xml_escape(n.id)}: {xml_escape(n.model)}, 0U</title></rect>"
            )
        for n in sorted((n for n in racks[name] if n.ru), key=lambda n: (n.ru, natural_key(n.id))):
            h = height(n.model)
            y = top + (units - (n.ru + h - 1)) * RACK_UNIT_PX  # RU 1 at the bottom
            fill = ROLE_FILL.get(n.role.value, "#eeeeee")
            out.append(
                f'<rect x="{x + 2}" y="{y + 1}" width="{RACK_WIDTH_PX - 4}" height="{h * RACK_UNIT_PX - 2}" fill="{fill}" stroke="#555">'
                f"<title>{xml_escape(n.id)}: {xml_escape(n.model)}, RU {n.ru}{'-' + str(n.ru + h - 1) if h > 1 else ''}</title></rect>"
            )
            out.append(
                f'<text x="{x + 6}" y="{y + min(h * RACK_UNIT_PX, 2 * RACK_UNIT_PX) - 4}" font-size="10">{xml_escape(n.id)} ({xml_escape(n.model)})</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"
