"""A `Drawing` as Graphviz DOT, D2 and a Mermaid flowchart.

Syntax followed: Graphviz's DOT language (graphviz.org/doc/info/lang.html: quoted IDs with \\"
escapes, `\\n` in a label for a line break, HTML-like labels for the legend,
graphviz.org/doc/info/shapes.html#html), D2's (d2lang.com: quoted keys, containers, `style.stroke`),
Mermaid's flowchart (mermaid.js.org/syntax/flowchart.html: `id["label"]`, `subgraph`, `linkStyle`,
labels escaped as `#quot;`, `<br>` for a line break). Every name has passed the build's trust
checks; labels are escaped for each syntax all the same.

Left-to-right order in Graphviz: dot orders the nodes of a rank to avoid edge crossings
(graphviz.org/docs/layouts/dot/), which shuffled gpu0001..gpu0032. Each tier is a `rank=same`
subgraph (graphviz.org/docs/attrs/rank/) whose boxes are chained in drawing order by invisible
edges (`style=invis`, graphviz.org/docs/attr-types/style/): dot draws an edge between two nodes of
one rank (a flat edge) tail left of head, so the chain holds the order. That is Graphviz 2.43's
behaviour (Debian's), not a documented promise: tests/test_export_diagram.py reads the positions
back from `dot -Tplain`. D2 (dagre) and Mermaid have no such constraint: their files list the boxes
in the same order. Mermaid's legend is a subgraph of its own `direction LR`, chained by invisible
links (`~~~`, mermaid.js.org/syntax/flowchart.html).
"""

from __future__ import annotations

import re

from fabricgen import __version__
from fabricgen.export.diagram_model import TIERS, Drawing, rail_color, rails_text

# --- Graphviz ------------------------------------------------------------------------------------


def _dq(text: str) -> str:
    """A DOT double-quoted ID; a newline becomes dot's `\\n` line break."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def to_dot(drawing: Drawing) -> str:
    lines = [
        f"// {drawing.title}: {drawing.view}",
        f"// written by fabricgen {__version__} (fabricgen export diagram); render with: dot -Tsvg FILE -o FILE.svg",
        f"graph {_dq(drawing.title)} {{",
        "  rankdir=TB; newrank=true; splines=true; nodesep=0.25; ranksep=1.2;",
        '  fontname="Helvetica"; fontsize=10;',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9, color="#777777"];',
    ]
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"  subgraph {_dq('tier_' + tier)} {{ rank=same;")
        for box in members:
            lines.append(f"    {_dq(box.id)} [label={_dq(box.label)}, fillcolor={_dq(box.fill)}];")
        if len(members) > 1:  # the order, left to right: see the module's docstring
            lines.append("    " + " -- ".join(_dq(box.id) for box in members) + " [style=invis];")
        lines.append("  }")
    for e in drawing.edges:
        attributes = [f"label={_dq(e.label)}"] if e.label else []
        if e.rails is not None:
            attributes += [f"color={_dq(rail_color(e.rails))}", "penwidth=2"]
        lines.append(f"  {_dq(e.a)} -- {_dq(e.b)}" + (f" [{', '.join(attributes)}]" if attributes else "") + ";")
    if drawing.rails:  # the legend: a table as the graph's label, below the drawing, outside the layout
        cells = "".join(f'<td bgcolor="{rail_color(rails)}"><font color="white">{_html(rails_text(rails))}</font></td>' for rails in drawing.rails)
        lines.append(f'  labelloc=b; label=<<table border="0" cellspacing="4" cellpadding="4"><tr><td>leaves serving</td>{cells}</tr></table>>;')
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- D2 ------------------------------------------------------------------------------------------


def _d2q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_d2(drawing: Drawing) -> str:
    lines = [
        f"# {drawing.title}: {drawing.view}",
        f"# written by fabricgen {__version__} (fabricgen export diagram); render with: d2 FILE FILE.svg",
        "direction: down",
    ]
    where: dict[str, str] = {}
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"tier_{tier}: {_d2q(drawing.names.get(tier, tier))} {{")
        for box in members:
            lines.append(f"  {_d2q(box.id)}: {_d2q(box.label)} {{ style.fill: {_d2q(box.fill)} }}")
            where[box.id] = f"tier_{tier}.{_d2q(box.id)}"
        lines.append("}")
    for e in drawing.edges:
        label = f": {_d2q(e.label)}" if e.label else ""
        style = f" {{ style.stroke: {_d2q(rail_color(e.rails))}; style.stroke-width: 2 }}" if e.rails is not None else ""
        lines.append(f"{where[e.a]} -- {where[e.b]}{label}{style}")
    if drawing.rails:
        lines.append('legend: "leaves serving" {')
        for rails in drawing.rails:
            lines.append(f"  rails{rails[0]}: {_d2q(rails_text(rails))} {{ style.fill: {_d2q(rail_color(rails))}; style.font-color: white }}")
        lines.append("}")
    return "\n".join(lines) + "\n"


# --- Mermaid -------------------------------------------------------------------------------------


def _mermaid_id(node_id: str) -> str:
    return "n_" + re.sub(r"[^A-Za-z0-9_]", "_", node_id)


def _mermaid_label(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("\n", "<br>") + '"'


def to_mermaid(drawing: Drawing) -> str:
    lines = [
        f"%% {drawing.title}: {drawing.view}",
        f"%% written by fabricgen {__version__} (fabricgen export diagram)",
        "flowchart TB",
    ]
    for tier, _ in TIERS:
        members = drawing.tiers.get(tier, [])
        if not members:
            continue
        lines.append(f"  subgraph tier_{tier}[{_mermaid_label(drawing.names.get(tier, tier))}]")
        lines += [f"    {_mermaid_id(box.id)}[{_mermaid_label(box.label)}]" for box in members]
        lines.append("  end")
    styles = []
    for index, e in enumerate(drawing.edges):
        label = f"|{_mermaid_label(e.label)}|" if e.label else ""
        lines.append(f"  {_mermaid_id(e.a)} ---{label} {_mermaid_id(e.b)}")
        if e.rails is not None:
            styles.append(f"  linkStyle {index} stroke:{rail_color(e.rails)},stroke-width:2px")
    fills: dict[str, list[str]] = {}
    for tier, _ in TIERS:
        for box in drawing.tiers.get(tier, []):
            fills.setdefault(box.fill, []).append(_mermaid_id(box.id))
    for index, (fill, ids) in enumerate(fills.items()):  # a class per role colour (mermaid.js.org/syntax/flowchart.html#classes)
        styles += [f"  classDef fill{index} fill:{fill}", f"  class {','.join(ids)} fill{index}"]
    if drawing.rails:  # left to right in order: a subgraph of its own direction, chained by invisible links (~~~)
        lines += [f"  subgraph legend[{_mermaid_label('leaves serving')}]", "    direction LR"]
        for rails in drawing.rails:
            lines.append(f"    legend_rails{rails[0]}[{_mermaid_label(rails_text(rails))}]")
            styles.append(f"  style legend_rails{rails[0]} fill:{rail_color(rails)},color:#fff")
        if len(drawing.rails) > 1:
            lines.append("    " + " ~~~ ".join(f"legend_rails{rails[0]}" for rails in drawing.rails))
        lines.append("  end")
    return "\n".join(lines + styles) + "\n"
