"""The bill of materials, laid out like the components table of Cisco's AI-cluster whitepaper.

Backend rows follow from the links: one switch per device, one transceiver per switch cage used
(a breakout optic serves all its sub-ports), one cable per link. GPU-side NIC transceivers are
not listed, as in the whitepaper's table; they ship with the nodes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fabricgen.compiled import Compiled
from fabricgen.design.graph import Role
from fabricgen.render.environment import environment
from fabricgen.reports._csv import csv_text

SECTION_GPU_NODES = "GPU nodes"
SECTION_BACKEND = "Backend network"


@dataclass(frozen=True)
class BomRow:
    section: str
    pid: str
    description: str
    quantity: int


def bom_rows(c: Compiled) -> list[BomRow]:
    rows: list[BomRow] = []
    nodes = Counter(d.model for d in c.fabric.by_role(Role.GPU_NODE))
    rows += [BomRow(SECTION_GPU_NODES, pid, c.catalog.description(pid), n) for pid, n in nodes.items()]

    switches: Counter[str] = Counter()
    optics: Counter[str] = Counter()
    for device in c.fabric.switches():
        switches[device.model] += 1
        # one transceiver per cage: the sub-ports of a broken-out cage share it
        cages = {port.cage: port.optic for port in device.ports.values() if port.optic}
        optics.update(cages.values())
    cables = Counter(link.cable for link in c.fabric.links if link.cable)
    for counter in (switches, optics, cables):
        rows += [BomRow(SECTION_BACKEND, pid, c.catalog.description(pid), n) for pid, n in counter.items()]
    return rows


def render_bom(c: Compiled) -> dict[str, str]:
    rows = bom_rows(c)
    sections: dict[str, list[BomRow]] = {}
    for row in rows:
        sections.setdefault(row.section, []).append(row)
    markdown = environment().get_template("reports/bom.md.j2").render(name=c.intent.name, sections=sections, gpus=c.sizing.gpus)
    text = csv_text(("section", "pid", "description", "quantity"), ((r.section, r.pid, r.description, r.quantity) for r in rows))
    return {"bom.csv": text, "bom.md": markdown}
