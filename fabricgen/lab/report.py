"""Lab results as terminal tables (rich), as one Markdown report and as JSON (`VerificationJson`,
`RunJson`: the documented shapes of `lab verify --json` and `lab run --json`)."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.trust import printable
from fabricgen.lab.plan import LabPlan
from fabricgen.lab.session import FailureReport, ManagementReport, RunReport, UpReport
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
            f"lab {p.lab_id} up: {p.network} of {p.fabric}: {len(p.switches):,} switches, {servers(p)}, "
            f"{len(p.links):,} links (veth pairs) in {report.seconds:.2f} s"
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
    if report.management is not None:
        lines += management_lines(report.management)
    return lines


def management_lines(m: ManagementReport) -> list[str]:
    """Where the endpoints listen and which files a push or verify against the lab reads; the
    password file is named, never printed."""
    if not m.endpoints:
        return ["management: no SONiC switch in this lab, so no endpoint (see the notes)"]
    ports = sorted(m.endpoints.values())
    lines = [  # the paths come from $FABRICGEN_LAB_STATE: printable
        f"management: {len(m.endpoints):,} SONiC switch endpoints over SSH on {m.host} (ports {ports[0]}-{ports[-1]}), login {m.username}, "
        f"password in {printable(m.password_file)} (root only, until lab down)",
        f"inventory: {printable(m.inventory)}",
        f"known_hosts: {printable(m.known_hosts)}",
    ]
    if m.refused:
        lines.append(f"management: {len(m.refused):,} switches without an endpoint (their NOS does not run in the lab): {', '.join(m.refused[:8])}")
    return lines


def servers(plan: LabPlan) -> str:
    """The servers, as "4 GPU nodes" or, with other servers, "44 servers (32 GPU nodes, 4 storage nodes, 8 management nodes)"."""
    counts = Counter(node.role for node in plan.nodes.values())
    if set(counts) <= {"gpu-node"}:
        return f"{len(plan.nodes):,} GPU nodes"
    parts = [
        f"{counts[role]} {role.replace('-', ' ').replace('gpu', 'GPU')}{'s' if counts[role] != 1 else ''}"
        for role in ("gpu-node", "storage-node", "management-node")
        if counts[role]
    ]
    return f"{len(plan.nodes):,} servers ({', '.join(parts)})"


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
        for row in rows:  # rows hold what the lab's daemons answered (lldpcli, vtysh): shown as sent, never as markup
            table.add_row(*(escape(printable(str(cell))) for cell in row))
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
            lines += ["| " + " | ".join(printable(str(c)).replace("|", "/") for c in row) + " |" for row in check.rows]
            lines.append("")
        lines += [f"- note: {n}" for n in v.notes]
    return "\n".join(lines) + "\n"


# --- JSON (`lab verify --json`, `lab run --json`) -------------------------------------------------


Cell = str | int | float | None


class CheckJson(JsonOutputModel):
    name: str  # BGP, BFD, ECMP, LLDP, EVPN, traffic
    passed: bool | None  # null: not checked
    summary: str
    seconds: float
    columns: list[str]
    rows: list[list[Cell]]  # every row (the terminal shows the failing ones first, at most MAX_ROWS)
    row_ok: list[bool]  # per row: as planned


class VerificationJson(JsonOutputModel):
    """`fabricgen lab verify --json`."""

    passed: bool
    converged: bool
    convergence_seconds: float | None  # since the last config load or failure; null: converged at the first look
    checks: list[CheckJson]
    notes: list[str]


class UpJson(JsonOutputModel):
    lab_id: str
    network: str
    fabric: str
    switches: int
    servers: int
    links: int  # veth pairs, one per cable
    seconds: float
    converged: bool
    convergence_seconds: float | None
    frr_daemons: int
    frr_rss_mib: float
    lldpd_processes: int
    lldpd_rss_mib: float
    keys_given: list[str]  # secret names filled from the environment or the secrets file
    keys_generated: list[str]  # secret names given a random value for this lab
    notes: list[str]


class FailureJson(JsonOutputModel):
    action: str  # fail, restore
    what: str
    converged: bool
    convergence_seconds: float | None
    bfd_detect_ms: int | None


class RoundJson(JsonOutputModel):
    name: str  # after up, <failure>, <failure>, restored
    failure: FailureJson | None
    verification: VerificationJson


class RunJson(JsonOutputModel):
    """`fabricgen lab run --json`."""

    passed: bool
    up: UpJson
    rounds: list[RoundJson]


def _cell(value: object) -> Cell:
    return value if value is None or isinstance(value, int | float) else printable(value)


def verification_json(v: Verification) -> VerificationJson:
    return VerificationJson(
        passed=v.passed,
        converged=v.converged,
        convergence_seconds=v.convergence_seconds,
        checks=[
            CheckJson(
                name=check.name,
                passed=check.passed,
                summary=printable(check.summary),
                seconds=round(check.seconds, 3),
                columns=list(check.columns),
                rows=[[_cell(cell) for cell in row] for row in check.rows],
                row_ok=list(check.row_ok),
            )
            for check in v.checks
        ],
        notes=[printable(note) for note in v.notes],
    )


def up_json(report: UpReport) -> UpJson:
    p = report.plan
    return UpJson(
        lab_id=p.lab_id,
        network=p.network,
        fabric=p.fabric,
        switches=len(p.switches),
        servers=len(p.nodes),
        links=len(p.links),
        seconds=round(report.seconds, 3),
        converged=report.converged,
        convergence_seconds=report.convergence_seconds,
        frr_daemons=report.frr_daemons,
        frr_rss_mib=round(report.frr_rss_mib, 1),
        lldpd_processes=report.lldpd_processes,
        lldpd_rss_mib=round(report.lldpd_rss_mib, 1),
        keys_given=list(report.keys_given),
        keys_generated=list(report.keys_generated),
        notes=[printable(note) for note in report.notes],
    )


def failure_json(f: FailureReport) -> FailureJson:
    return FailureJson(action=f.action, what=printable(f.what), converged=f.converged, convergence_seconds=f.convergence_seconds, bfd_detect_ms=f.bfd_detect_ms)


def run_json(report: RunReport) -> RunJson:
    return RunJson(
        passed=report.passed,
        up=up_json(report.up),
        rounds=[
            RoundJson(name=printable(name), failure=failure_json(failure) if failure is not None else None, verification=verification_json(v))
            for name, v, failure in report.rounds
        ],
    )
