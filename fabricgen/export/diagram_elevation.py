"""Rack elevations of a build with a layout (topology.json's `rack` and `ru` per device).

`elevations(build) -> {"elevations/<row>.svg": text}`: the racks of one row side by side, every
device at its rack units (RU 1 at the bottom, the unit numbers beside each rack), its height the
catalog's `rack_units` for its model (fabricgen's built-in catalog; 1 RU for a model it does not
hold), coloured by role with a legend of the roles drawn; devices with a rack and no RU (PDUs) in a
strip beside their rack. Each device's name, model and units are its <title> (a tooltip). Rack
names are free text in a build: escaped for XML.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from xml.sax.saxutils import escape as xml_escape

from fabricgen import __version__
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import TopologyNode
from fabricgen.export.diagram_model import ROLE_FILL, ROLE_NAMES, ROLE_ORDER
from fabricgen.export.source import ExportBuild

RACK_UNIT_PX = 14
RACK_WIDTH_PX = 200
NUMBERS_PX = 24  # the column of unit numbers left of a rack
LEGEND_ROW_PX = 20


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
    heights: dict[str, int] = {}
    for section in (catalog.console_servers, catalog.nodes, catalog.switches):
        heights.update((model, entry.rack_units) for model, entry in section.items())
    rows: dict[str, list[str]] = defaultdict(list)
    for rack in racks:
        match = re.fullmatch(r"R(\d+)-\d+", rack)
        rows[f"row{int(match.group(1)):02d}" if match else "racks"].append(rack)
    return {
        f"elevations/{row}.svg": _row_svg(build.name, row, sorted(names, key=natural_key), racks, lambda model: heights.get(model, 1))
        for row, names in rows.items()
    }


def _row_svg(fabric: str, row: str, names: list[str], racks: dict[str, list[TopologyNode]], height: Callable[[str], int]) -> str:
    units = max([42] + [n.ru + height(n.model) - 1 for name in names for n in racks[name] if n.ru])
    gap, top = 40, 50
    pitch = NUMBERS_PX + RACK_WIDTH_PX + gap
    roles = [role.value for role in sorted({n.role for name in names for n in racks[name]}, key=ROLE_ORDER.__getitem__)]
    width = max(len(names) * pitch + gap, gap + 160 * min(len(roles), 6))
    legend_top = top + units * RACK_UNIT_PX + 30
    total = legend_top + LEGEND_ROW_PX * ((len(roles) + 5) // 6) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" viewBox="0 0 {width} {total}" font-family="Helvetica, Arial, sans-serif">',
        # the fabric's name stays out of the comment: a hostname may hold "--", which ends no XML comment legally
        f"<!-- rack elevations written by fabricgen {__version__}; rack height {units} RU (the build does not record it: 42, or the highest device) -->",
        f'<text x="{gap}" y="24" font-size="16">{xml_escape(fabric)}: {row}</text>',
    ]
    for index, name in enumerate(names):
        left = gap + index * pitch
        x = left + NUMBERS_PX
        out.append(f'<text x="{x}" y="{top - 8}" font-size="12">{xml_escape(name)}</text>')
        out.append(f'<rect x="{x}" y="{top}" width="{RACK_WIDTH_PX}" height="{units * RACK_UNIT_PX}" fill="#fafafa" stroke="#333"/>')
        out.append('<g class="rack-units" font-size="8" fill="#666" text-anchor="end">')
        for u in range(1, units + 1):  # RU 1 at the bottom
            y = top + (units - u + 1) * RACK_UNIT_PX - 3
            out.append(f'<text x="{x - 4}" y="{y}">{u}</text>')
        out.append("</g>")
        zero_u = sorted((n for n in racks[name] if not n.ru), key=lambda n: natural_key(n.id))
        for slot, n in enumerate(zero_u):  # PDUs and other 0U devices: a strip beside the rack
            strip = units * RACK_UNIT_PX // max(len(zero_u), 1)
            out.append(
                f'<rect x="{x + RACK_WIDTH_PX + 4}" y="{top + slot * strip}" width="10" height="{strip - 2}" fill="{ROLE_FILL.get(n.role.value, "#eeeeee")}" stroke="#555">'
                f"<title>{xml_escape(n.id)}: {xml_escape(n.model)}, 0U</title></rect>"
            )
        for n in sorted((n for n in racks[name] if n.ru), key=lambda n: (n.ru or 0, natural_key(n.id))):
            ru, h = n.ru or 0, height(n.model)
            y = top + (units - (ru + h - 1)) * RACK_UNIT_PX
            fill = ROLE_FILL.get(n.role.value, "#eeeeee")
            out.append(
                f'<rect x="{x + 2}" y="{y + 1}" width="{RACK_WIDTH_PX - 4}" height="{h * RACK_UNIT_PX - 2}" fill="{fill}" stroke="#555">'
                f"<title>{xml_escape(n.id)}: {xml_escape(n.model)}, RU {ru}{'-' + str(ru + h - 1) if h > 1 else ''}</title></rect>"
            )
            out.append(
                f'<text x="{x + 6}" y="{y + min(h * RACK_UNIT_PX, 2 * RACK_UNIT_PX) - 4}" font-size="10">{xml_escape(n.id)} ({xml_escape(n.model)})</text>'
            )
    out.append('<g class="legend" font-size="11">')
    for index, role in enumerate(roles):
        x = gap + (index % 6) * 160
        y = legend_top + (index // 6) * LEGEND_ROW_PX
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{ROLE_FILL.get(role, "#eeeeee")}" stroke="#555"/>')
        out.append(f'<text x="{x + 18}" y="{y}">{ROLE_NAMES.get(role, (role, role))[1]}</text>')
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
