"""`fabricgen analyze` output: the capacity and failure findings as Markdown (also printed)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from fabricgen.analysis.capacity import Capacity, FailureImpact, most_feared, most_stranding, worst_for_capacity
from fabricgen.analysis.fabric import Fabric
from fabricgen.analysis.schedule import P2P_NET_CHUNK_BYTES, ROUND_LATENCY_S


def _tbps(gbps: float) -> str:
    return f"{gbps / 1000:,.1f} Tb/s"


def paths_markdown(fabric: Fabric) -> str:
    """A fabric the leaf-spine max-flow analysis does not cover (3 tiers, or no spines): its tiers
    and their capacity, and with no spines what each leaf's failure cuts off; the traffic
    simulation covers the rest."""
    tiers = [("leaves", fabric.leaves), ("spines", fabric.spines), ("cores", fabric.cores)]
    gbps = dict.fromkeys(fabric.switches, 0.0)
    for _key, a, b, speed in fabric.cables:
        gbps[a] += speed
        gbps[b] += speed
    lines = [
        f"# Fabric analysis: {fabric.network}",
        "",
        ", ".join(f"{len(names)} {label}" for label, names in tiers) + f", {len(fabric.cables):,} fabric links.",
        "",
        "| tier | switches | fabric-facing capacity |",
        "|---|---|---|",
    ]
    for label, names in tiers:
        if names:
            lines.append(f"| {label} | {len(names)} | {_tbps(sum(gbps[n] for n in names))} |")
    if not fabric.spines:
        return "\n".join(lines + ["", *_spine_free_failures(fabric), ""]) + "\n"
    lines += [
        "",
        (
            "The pairwise max-flow and single-failure tables cover 2-tier leaf-spine fabrics; for this one use the "
            "traffic simulation below, and `--fail DEVICE|CABLE` for a failure."
        ),
        "",
    ]
    return "\n".join(lines) + "\n"


def _spine_free_failures(fabric: Fabric) -> list[str]:
    """A fabric with no tier above its leaves (rail-only, `spine.count: 0`): no path between leaves
    to lose (a pair: its peer links), so a leaf's failure is exactly the GPU NICs it holds, cut
    off with no detour."""
    if fabric.peer_cables:
        return [*_peer_link_paths(fabric), *_leaf_failure_table(fabric)]
    lines = [
        "No spines: every leaf is alone, so nothing in the network reroutes around a failure. A leaf failure cuts off the GPU NIC ports "
        "it holds (their GPUs lose the backend until it is back, or reach it over their node's scale-up domain and another NIC: PXN); "
        "a host cable's failure cuts off its one NIC port.",
        "",
    ]
    return lines + _leaf_failure_table(fabric)


def _peer_link_paths(fabric: Fabric) -> list[str]:
    """A spine-free pair: the peer links every path between its two leaves crosses (ECMP over
    them), what one's failure leaves, and that a leaf's failure still cuts off its NICs."""
    peers = sorted(fabric.peer_cables)
    total = sum(speed for *_, speed in peers)
    most = max(speed for *_, speed in peers)
    return [
        f"No spines: the pair's two leaves are joined by {len(peers)} peer link{'s' if len(peers) != 1 else ''} "
        f"({', '.join(key for key, *_ in peers)}), {_tbps(total)}: every path between NICs on different leaves crosses "
        f"one of them (ECMP over all). A peer link's failure leaves {len(peers) - 1} of {len(peers)} ({_tbps(total - most)}) "
        "and cuts off no NIC; a leaf failure cuts off the GPU NIC ports it holds (their GPUs lose the backend until it is back, or "
        "reach it over their node's scale-up domain and another NIC: PXN); a host cable's failure cuts off its one NIC port.",
        "",
    ]


def _leaf_failure_table(fabric: Fabric) -> list[str]:
    """Per leaf, the GPU NIC ports and nodes its failure cuts off."""
    nic_leaf = fabric.nic_leaf
    lines = [
        "| leaf failed | GPU NIC ports cut off | of all | nodes touched |",
        "|---|---|---|---|",
    ]
    total = nic_leaf.size
    for index, name in enumerate(fabric.leaves):
        held = nic_leaf == index
        ports = int(held.sum())
        nodes = int(held.reshape(held.shape[0], -1).any(axis=1).sum())
        lines.append(f"| {name} | {ports:,} | {ports / total:.1%} | {nodes:,} |")
    return lines


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
        + ", ".join(f"{ratio:g}:1 on {count} leaves" for ratio, count in sorted(ratios.items()))
        + ".",
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
    worst = worst_for_capacity(failures)
    assert worst is not None  # failures is not empty
    lines += [
        (
            f"Worst single failure: {worst.kind} {worst.name}. It leaves {_tbps(worst.min_pair_gbps)} between "
            f"{worst.worst_pair[0]} and {worst.worst_pair[1]} ({worst.capacity_left:.0%} of the intact "
            f"{_tbps(found.min_pair_gbps)}, a cut of {1 - worst.capacity_left:.0%}); ECMP width {found.min_ecmp_width} → "
            f"{worst.min_ecmp_width} links, spines {found.min_spine_width} → {worst.min_spine_width}."
        ),
        "",
        *_stranding_sentences(fabric, failures),
        *_feared_sentences(failures),
        (
            f"The {min(shown, len(failures))} of {len(failures):,} single failures (every spine, leaf and leaf-spine link, and a GPU NIC's link) "
            "a job feels most: those that stop a job over every GPU (most GPUs stranded first), then by how much they slow its "
            "cross-rail all-to-all, then by capacity left:"
        ),
        "",
        "| failure | a job over every GPU | least leaf-to-leaf capacity left | of intact | between | ECMP width (links / spines) | GPU NICs stranded |",
        "|---|---|---|---|---|---|---|",
    ]
    for impact in failures[:shown]:
        lines.append(
            f"| {impact.kind} {impact.name} | {_job_feels(impact)} | {_tbps(impact.min_pair_gbps)} | {impact.capacity_left:.1%} | "
            f"{impact.worst_pair[0]} – {impact.worst_pair[1]} | {impact.min_ecmp_width} / {impact.min_spine_width} | {_stranded(impact)} |"
        )
    return "\n".join(lines) + "\n"


def _job_feels(impact: FailureImpact) -> str:
    """What a job over every GPU feels, as a table cell."""
    if impact.stops_a_job:
        return f"stops ({impact.stranded_gpus:,} GPUs lost)"
    return f"{impact.job_slowdown:.3f}x slower" if impact.job_slowdown > 1 + 1e-9 else "no slowdown"


def _feared_sentences(failures: list[FailureImpact]) -> list[str]:
    """The failure a team should fear most, and why."""
    feared = most_feared(failures)
    if feared is None:
        return []
    if feared.stops_a_job:
        why = (
            f"it strands {feared.stranded_gpus:,} GPUs on {feared.stranded_nodes:,} nodes, so a job using them stops (a collective "
            "needs every member) and restarts without those nodes until it is repaired, whatever capacity the other leaves keep"
        )
    elif feared.stranded_nics:
        why = (
            f"every GPU keeps a port, but {feared.stranded_nodes:,} nodes' GPUs send over fewer planes, and a collective runs at its slowest "
            f"member: {feared.job_slowdown:.2f}x the time"
        )
    elif feared.job_slowdown > 1 + 1e-9:
        why = f"a cross-rail all-to-all over every GPU takes {feared.job_slowdown:.3f}x its time even with ideal balancing (fewer uplinks for the same bytes)"
    else:
        why = "no single failure strands a GPU or slows a job over every GPU under ideal balancing"
    return [f"Failure to fear most: {feared.kind} {feared.name}: {why}.", ""]


def _stranded(impact: FailureImpact) -> str:
    """A failure's stranded GPU NICs as a table cell."""
    if not impact.stranded_nics:
        return "none"
    return f"{impact.stranded_nics:,} NICs, {impact.stranded_gpus:,} GPUs, {impact.stranded_nodes:,} nodes"


def _stranding_sentences(fabric: Fabric, failures: list[FailureImpact]) -> list[str]:
    """What the leaf failure that strands most, and a GPU NIC's link failure, cut off: capacity
    between the leaves that survive says nothing of the GPUs behind the leaf that did not."""
    lines = []
    leaf = most_stranding([impact for impact in failures if impact.kind == "leaf"])
    if leaf is not None:
        index = fabric.leaves.index(leaf.name)
        rail, unit = int(fabric.leaf_rail[index]), int(fabric.leaf_unit[index])
        where = ": " + " of ".join(part for part in (f"rail {rail}" if rail else "", f"unit {unit}" if unit else "") if part) if rail or unit else ""
        lost = (
            f"{leaf.stranded_gpus:,} GPUs on {leaf.stranded_nodes:,} nodes lose their backend path"
            if leaf.stranded_gpus
            else f"every GPU keeps its port on another plane, {leaf.stranded_nodes:,} nodes lose a port"
        )
        lines += [
            (
                f"A leaf failure strands up to {leaf.stranded_nics:,} GPU NICs: {lost} (leaf {leaf.name}{where}); "
                "the capacity figures of a leaf failure are between the leaves that survive."
            ),
            "",
        ]
    nic_link = next((impact for impact in failures if impact.kind == "nic-link"), None)
    if nic_link is not None:
        lines += [
            "A GPU NIC's link to its leaf strands that NIC: 1 GPU loses its backend path."
            if nic_link.stranded_gpus
            else "A GPU NIC port's link to its leaf strands that port: its GPU keeps its port on another plane.",
            "",
        ]
    return lines


METRICS = (
    ("max_load_ratio", "max link load / ideal"),
    ("jain", "Jain's fairness (uplinks)"),
    ("stretch_median", "FCT stretch median"),
    ("stretch_p90", "FCT stretch p90"),
    ("stretch_worst", "FCT stretch worst"),
    ("share_above_stretch", "flows above the stretch threshold"),
    ("jct_ratio_worst", "slowest job's JCT / ideal"),
)


def _estimate(value) -> str:
    if value.mean != value.mean:  # NaN: no flow crossed the fabric in these runs
        return "–"
    if value.n < 2 or value.high == value.low:
        return f"{value.mean:.3f}"
    return f"{value.mean:.3f} [{value.low:.3f}, {value.high:.3f}]"


def _multi_rail_leaves(model) -> bool:
    """Whether some leaf serves NIC ports of more than one rail (or plane) of the nodes."""
    per_node = model.ports_per_node
    position = np.arange(len(model.leaf_of_nic)) % per_node
    served = np.unique(model.leaf_of_nic * per_node + position) // per_node
    return bool((np.bincount(served) > 1).any())


def _pxn_sentence(shares, model) -> str:
    """Where the traffic between rails that share no switch went (rail-only, planes)."""
    return (
        f"{shares.pxn:.1%} of the flows go between rails (or planes) that share no switch: each crosses its node's "
        "scale-up domain (NVLink, PXN) to the node's NIC on the destination's rail and lands on that rail's leaf, "
        "so the network carries it as same-rail traffic" + (" and no fabric link sees a byte of it." if not model.spines else ".")
    )


def _no_fabric_sentence(shares, model, o, peer_links: int = 0) -> str:
    """Why no flow crossed a fabric link, from where the flows went."""
    if shares is None or not shares.flows:
        return "No flow reaches the network (every flow stays within a node), so load balancing plays no part."
    if shares.pxn:
        why = "After PXN the network sees only same-rail traffic, and each rail's GPUs here are on one leaf"
    elif o.scope == "cross-rail":
        why = "Every flow's two NICs are on the same leaf: a leaf here serves every rail a flow goes between"
    else:
        why = "Each rail's GPUs here are on one leaf" + (" (a leaf serves several rails)" if _multi_rail_leaves(model) else "")
    counts = f"{shares.within_leaf:.1%} of the flows stay within a leaf" + (
        f", {shares.within_node:.1%} within their node (NVLink)" if shares.within_node else ""
    )
    text = f"{why}: {counts}; no flow crosses from one leaf to another, so no fabric link carries a byte and load balancing plays no part."
    if not model.spines and peer_links:
        text += (
            f" This fabric has no spines; its pair's {peer_links} peer links would carry traffic between NICs of the two leaves, "
            "which this model moves over the nodes' scale-up domain (PXN) instead: the peer links' load is not simulated."
        )
    elif not model.spines:
        text += " This fabric has no spines: whatever the traffic, the network carries only traffic between NICs of one leaf."
    elif o.scope == "rail":
        text += " Try `--scope cross-rail`, or a fabric of several scalable units."
    return text


def balancing_markdown(balancing, figure_names: dict[str, str]) -> str:
    """The load-balancing section; figure_names maps a figure ("link-load") to its PNG's path."""
    o = balancing.options
    model = balancing.fabric
    lines = [
        "## Load balancing under collective traffic",
        "",
        (
            f"Traffic: {o.pattern} ({o.scope} scope), {o.jobs} job(s) placed {o.placement}, {o.message_bytes:,} bytes per "
            f"{'GPU pair' if o.pattern == 'all-to-all' else 'GPU'}, {o.flows_per_pair} flow(s) per GPU pair; "
            f"{model.leaves} leaves and {model.spines} switches above them, {len(model.tail) // 2:,} fabric links, "
            f"{model.gpus:,} GPUs"
            + (f" ({len(model.leaf_of_nic):,} NIC ports over {model.planes} planes, each GPU's traffic split evenly over them)" if model.planes > 1 else "")
            + f", NIC ports of {model.host_gbps:g}G; senders: {o.senders}; offered load {o.load:.0%} of line rate. "
            f"ECMP hash: {o.hash}; flowlet: {o.flowlets} bursts per flow at most (one per {P2P_NET_CHUNK_BYTES // 1024} KiB chunk), "
            f"timeout {o.flowlet_gap_us:g} us, mean idle gap {o.idle_gap_us:g} us. "
            + (
                f"Schedule: nccl (an all-to-all in NCCL's p2p rounds, one peer node at a time, {ROUND_LATENCY_S * 1e6:g} us of latency per round)."
                if o.schedule == "nccl"
                else "Schedule: fluid (every flow of the collective at once)."
            )
        ),
        "",
    ]
    shares = balancing.paths
    if shares is not None and shares.pxn:
        lines += [_pxn_sentence(shares, model), ""]
    if not balancing.crosses_fabric:
        lines += [_no_fabric_sentence(shares, model, o, balancing.peer_links), ""]
        return "\n".join(lines) + "\n"
    if shares is not None and shares.within_leaf:
        lines += [
            (
                f"{shares.across_leaves:.1%} of the flows cross from one leaf to another; {shares.within_leaf:.1%} have both NICs "
                "on one leaf"
                + (" (a leaf here serves several rails)" if _multi_rail_leaves(model) and o.scope == "cross-rail" else "")
                + " and never use a fabric link, yet count in the FCT and JCT figures below (at their NICs' time)."
            ),
            "",
        ]
    lines += [
        f"Mean over {o.seeds} seeds, with a 95 % confidence interval (Student t); each seed redraws placement, source ports and hashes.",
        "",
        "| mode | " + " | ".join(label for _, label in METRICS) + " |",
        "|---|" + "---|" * len(METRICS),
    ]
    for mode, summary in balancing.summaries.items():
        lines.append(f"| {mode} | " + " | ".join(_estimate(summary.metrics[key]) for key, _ in METRICS) + " |")
    lines.append("")
    if balancing.sweep:
        heading = f"Slowest job's JCT / ideal against the number of concurrent jobs ({o.sweep_seeds} seeds each):"
        lines += [heading, "", "| jobs | " + " | ".join(o.modes) + " |", "|---|" + "---|" * len(o.modes)]
        for jobs, summaries in sorted(balancing.sweep.items()):
            lines.append(f"| {jobs} | " + " | ".join(_estimate(summaries[m].metrics["jct_ratio_worst"]) for m in o.modes) + " |")
        lines.append("")
    if balancing.failure is not None:
        f = balancing.failure
        lines += [
            f"### With {', '.join(f.down)} down",
            "",
            (
                f"The traffic's capacity (its makespan under ideal spraying) is cut by {f.capacity_cut:.1%}; "
                f"{f.flows_lost:.1%} of the flows lose a GPU's leaf and are left out."
            ),
            "",
            "| mode | slowest job's time, failed / intact | " + " | ".join(label for _, label in METRICS) + " |",
            "|---|---|" + "---|" * len(METRICS),
        ]
        for mode, summary in f.summaries.items():
            lines.append(f"| {mode} | {f.jct_change[mode]:.3f} | " + " | ".join(_estimate(summary.metrics[key]) for key, _ in METRICS) + " |")
        lines.append("")
    for name, title in (("link-load", "Uplink load per mode"), ("fct-stretch", "FCT stretch CDF"), ("jct-vs-jobs", "JCT vs concurrent jobs")):
        if name in figure_names:
            lines += [f"![{title}]({figure_names[name]})", ""]
    return "\n".join(lines) + "\n"
