"""`fabricgen analyze` output: the capacity and failure findings as Markdown (also printed)."""

from __future__ import annotations

from collections import Counter

from fabricgen.analysis.capacity import Capacity, FailureImpact
from fabricgen.analysis.fabric import Fabric


def _tbps(gbps: float) -> str:
    return f"{gbps / 1000:,.1f} Tb/s"


def markdown(fabric: Fabric, found: Capacity, failures: list[FailureImpact], shown: int) -> str:
    ratios = Counter(round(value, 3) for value in found.oversubscription.values())
    lines = [
        f"# Fabric analysis: {fabric.network}",
        "",
        f"{len(fabric.leaves)} leaves, {len(fabric.spines)} spines, {int(fabric.links.sum()):,} leaf-spine links of {fabric.link_gbps:g}G.",
        "",
        "## Capacity",
        "",
        "| measure | value |",
        "|---|---|",
        f"| leaf tier: every leaf's uplinks | {_tbps(found.leaf_uplink_gbps)} |",
        f"| spine tier: every spine's leaf-facing ports | {_tbps(found.spine_gbps)} |",
        f"| bisection (max-flow, first half of the leaves by unit to the second) | {_tbps(found.bisection_gbps)} |",
        f"| least leaf-to-leaf capacity ({found.min_pair[0]} to {found.min_pair[1]}) | {_tbps(found.min_pair_gbps)} |",
        f"| least ECMP width between two leaves | {found.min_ecmp_width} links over {found.min_spine_width} spines |",
        "",
        "Oversubscription built (server-facing : spine-facing capacity per leaf): "
        + ", ".join(f"{ratio:g}:1 on {count} leaves" for ratio, count in sorted(ratios.items())) + ".",
        "",
    ]
    if found.groups:
        lines += ["| between | max-flow | servers can offer | |", "|---|---|---|---|"]
        for group in found.groups:
            verdict = "enough" if group.gbps >= group.demand_gbps else f"short by {_tbps(group.demand_gbps - group.gbps)}"
            lines.append(f"| {group.name} | {_tbps(group.gbps)} | {_tbps(group.demand_gbps)} | {verdict} |")
        lines.append("")
    lines += ["## Single failures", ""]
    if not failures:
        lines += ["One leaf: no fabric links to fail.", ""]
        return "\n".join(lines) + "\n"
    worst = failures[0]
    lines += [
        f"Worst single failure: {worst.kind} {worst.name}. It leaves {_tbps(worst.min_pair_gbps)} between "
        f"{worst.worst_pair[0]} and {worst.worst_pair[1]} ({worst.capacity_left:.0%} of the intact "
        f"{_tbps(found.min_pair_gbps)}, a cut of {1 - worst.capacity_left:.0%}); ECMP width {found.min_ecmp_width} → "
        f"{worst.min_ecmp_width} links, spines {found.min_spine_width} → {worst.min_spine_width}.",
        "",
        f"The {min(shown, len(failures))} worst of {len(failures):,} single failures (every spine, leaf and leaf-spine link):",
        "",
        "| failure | least leaf-to-leaf capacity left | of intact | between | ECMP width (links / spines) |",
        "|---|---|---|---|---|",
    ]
    for impact in failures[:shown]:
        lines.append(
            f"| {impact.kind} {impact.name} | {_tbps(impact.min_pair_gbps)} | {impact.capacity_left:.1%} | "
            f"{impact.worst_pair[0]} – {impact.worst_pair[1]} | {impact.min_ecmp_width} / {impact.min_spine_width} |"
        )
    return "\n".join(lines) + "\n"
