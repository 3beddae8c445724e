"""Lab results as terminal tables (rich) and as one Markdown report."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from fabricgen.lab.plan import LabPlan
from fabricgen.lab.session import FailureReport, RunReport, UpReport
from fabricgen.lab.verify import Check, Verification

MAX_ROWS = 24  # per table on a terminal; the Markdown report has every row


def _mark(passed: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "not checked"}[passed]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def up_lines(report: UpReport) -> list[str]:
    p = report.plan
    lines = [
        (
            f"lab {p.lab_id} up: {p.network} of {p.fabric}: {len(p.switches)} switches, {servers(p)}, "
            f"{len(p.links)} links (veth pairs) in {report.seconds:.2f} s"
        ),
        f"FRR: {report.frr_daemons} daemons, {report.frr_rss_mib:.0f} MiB resident; lldpd: {report.lldpd_processes} processes, {report.lldpd_rss_mib:.0f} MiB",
    ]
    if p.design and p.design != "rail-optimized":  # topology.json's graph.fabrics[network].design; the default goes unsaid
        lines.append(f"design: {p.design}")
    shared = sorted({s.rails for s in p.switches.values() if s.role == "leaf" and len(s.rails) > 1})
    if shared:  # leaves that serve several rails (topology.json `rails`)
        lines.append(f"leaves serving several rails: {'; '.join('rails ' + ', '.join(map(str, rails)) for rails in shared)}")
    if report.keys_given:
        lines.append(f"keys: {', '.join(report.keys_given)} from the environment or the secrets file")
    if report.keys_generated:
        lines.append(
            f"keys: {', '.join(report.keys_generated)} generated for this lab (no value in the environment or a secrets file), "
            f"the same on every switch; kept in {report.keys_dir} (root only) until lab down"
        )
    if report.converged:
        lines.append(f"converged {_seconds(report.convergence_seconds)} after the configs were loaded")
    else:
        lines.append("not converged yet: run `fabricgen lab verify` to see what is missing")
    lines += [f"note: {n}" for n in report.notes]
    return lines


def servers(plan: LabPlan) -> str:
    """The servers, as "4 GPU nodes" or, with other servers, "44 servers (32 GPU nodes, 4 storage nodes, 8 management nodes)"."""
    counts = Counter(node.role for node in plan.nodes.values())
    if set(counts) <= {"gpu-node"}:
        return f"{len(plan.nodes)} GPU nodes"
    parts = [
        f"{counts[role]} {role.replace('-', ' ').replace('gpu', 'GPU')}{'s' if counts[role] != 1 else ''}"
        for role in ("gpu-node", "storage-node", "management-node")
        if counts[role]
    ]
    return f"{len(plan.nodes)} servers ({', '.join(parts)})"


def convergence_line(v: Verification) -> str:
    if not v.converged:
        return "control plane: NOT converged within the timeout"
    if v.convergence_seconds is None:
        return "control plane: converged (already at the first look)"
    return f"control plane: converged {v.convergence_seconds:.2f} s after the last change"


def failure_line(f: FailureReport) -> str:
    verb = "failed" if f.action == "fail" else "restored"
    if not f.converged:
        return f"{verb} {f.what}: NOT converged within the timeout"
    timing = f"converged in {_seconds(f.convergence_seconds) if f.convergence_seconds is not None else 'under one look'}"
    if f.bfd_detect_ms:
        timing += f" (BFD detection time {f.bfd_detect_ms} ms)"
    return f"{verb} {f.what}: {timing}"


def print_verification(console: Console, v: Verification) -> None:
    console.print(convergence_line(v))
    for check in v.checks:
        table = Table(title=f"{check.name}: {_mark(check.passed)}, {check.summary} ({check.seconds:.2f} s)", title_justify="left")
        for column in check.columns:
            table.add_column(column)
        rows = _rows_to_show(check)
        for row in rows:
            table.add_row(*(str(cell) for cell in row))
        if len(rows) < len(check.rows):
            table.caption = f"{len(check.rows) - len(rows)} more passing rows not shown"
        console.print(table)
    for note in v.notes:
        console.print(f"note: {note}")
    console.print(f"verify: {'PASS' if v.passed else 'FAIL'}")


def _rows_to_show(check: Check) -> list[tuple]:
    """Failing rows first, then as many others as fit."""
    if len(check.rows) <= MAX_ROWS:
        return check.rows
    bad = [row for row, ok in zip(check.rows, check.row_ok, strict=True) if not ok]
    good = [row for row, ok in zip(check.rows, check.row_ok, strict=True) if ok]
    return (bad + good)[:MAX_ROWS]


def markdown(report: RunReport) -> str:
    lines = [f"# fabricgen lab run: {report.up.plan.fabric} ({report.up.plan.network})", ""]
    lines += [f"- {line}" for line in up_lines(report.up)]
    lines.append(f"- result: **{'PASS' if report.passed else 'FAIL'}**")
    for name, v, failure in report.rounds:
        lines += ["", f"## {name}", ""]
        if failure is not None:
            lines += [f"- {failure_line(failure)}"]
        lines += [f"- {convergence_line(v)}", ""]
        for check in v.checks:
            lines += [f"### {check.name}: {_mark(check.passed)}", "", f"{check.summary} ({check.seconds:.2f} s)", ""]
            lines.append("| " + " | ".join(check.columns) + " |")
            lines.append("|" + "---|" * len(check.columns))
            lines += ["| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in check.rows]
            lines.append("")
        lines += [f"- note: {n}" for n in v.notes]
    return "\n".join(lines) + "\n"
