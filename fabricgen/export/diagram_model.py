"""The drawing a diagram export writes in each format: boxes per tier, lines, the rail legend, and
the vocabulary the writers (`diagram_formats`) and the rack elevations (`diagram_elevation`) share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fabricgen.compiler.design.graph import Role

# Colour-blind-safe qualitative palette (Okabe and Ito), then four more; rails past 12 repeat.
RAIL_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999933", "#882255", "#44AA99", "#332288")
TIERS = (("core", (Role.CORE,)), ("spine", (Role.SPINE,)), ("leaf", (Role.LEAF, Role.OOB_SWITCH)), ("server", ()))
ROLE_FILL = {
    "gpu-node": "#c8e6c9", "storage-node": "#d7ccc8", "management-node": "#cfd8dc", "leaf": "#bbdefb", "spine": "#c5cae9",
    "core": "#e1bee7", "oob-switch": "#ffe0b2", "console-server": "#fff9c4", "pdu": "#eeeeee",
}  # fmt: skip
ROLE_NAMES = {  # role: (one, many)
    "gpu-node": ("GPU node", "GPU nodes"), "storage-node": ("storage node", "storage nodes"),
    "management-node": ("management node", "management nodes"), "leaf": ("leaf", "leaves"), "spine": ("spine", "spines"),
    "core": ("core", "cores"), "oob-switch": ("OOB switch", "OOB switches"), "console-server": ("console server", "console servers"),
    "pdu": ("PDU", "PDUs"), "management-core": ("management core", "management cores"),
}  # fmt: skip
ROLE_ORDER = {role: index for index, role in enumerate(Role)}


@dataclass(frozen=True)
class Box:
    id: str
    label: str  # lines joined by "\n"
    fill: str


@dataclass(frozen=True)
class Edge:
    a: str
    b: str
    label: str
    rails: tuple[int, ...] | None  # the rails of the leaf end, for a line between a leaf and servers


@dataclass
class Drawing:
    """One diagram: boxes per tier (in the order drawn, left to right), lines, and what it is."""

    title: str
    view: str  # one line on what is drawn and why, for the file's header
    tiers: dict[str, list[Box]]
    edges: list[Edge]
    rails: list[tuple[int, ...]] = field(default_factory=list)  # the legend: every rail set drawn
    names: dict[str, str] = field(default_factory=dict)  # tier -> what it holds ("spines", "OOB switches")


def rails_text(rails: Sequence[int]) -> str:
    """'rail 1', 'rails 1-4' (a run), 'rails 1, 3, 5, 7'."""
    if len(rails) == 1:
        return f"rail {rails[0]}"
    if list(rails) == list(range(rails[0], rails[-1] + 1)):
        return f"rails {rails[0]}-{rails[-1]}"
    return "rails " + ", ".join(str(r) for r in rails)


def rail_color(rails: Sequence[int]) -> str:
    """The colour of a rail set: its first rail's (the sets of one fabric's leaves are disjoint)."""
    return RAIL_COLORS[(rails[0] - 1) % len(RAIL_COLORS)]
