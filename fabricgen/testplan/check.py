"""`fabricgen testplan check`: each results file matched to its pair or run of the plan (by the
name the plan's scripts give it, results/<id>.txt, else by its content), compared with the
plan's thresholds; what falls short is named: the pair's nodes, NICs, rails and cables, the
fabric links the short pairs share, each run's peak and average bus bandwidth as printed.

A value no hardware of the plan can reach is refused as impossible (exit 2, its file, line and
value), never judged "ok": it is a broken clock (perftest warns of conflicting CPU frequencies),
a run of something else (a bidirectional -b run adds both directions) or an edited file.
- perftest: a BW peak or BW average above the pair's line rate, the speed of the slower of its two
  NICs. The payload of one direction never reaches it (headers take their share).
- nccl-tests / rccl-tests: a bus bandwidth (a row's busbw, or `# Avg bus bandwidth`) above what
  the nodes' backend NICs can carry with any algorithm (`busbw_limit`). The GPUs of a node share
  its NVLink domain, and between nodes only the backend NICs carry data (the plan's runs name
  them in NCCL_IB_HCA). all-to-all: the plan's bound is that limit (a node's data for other nodes
  leaves through its NICs, however it is routed). all-reduce: without reduction in the network
  (these Ethernet fabrics have none), a participant sends at least 2(N-1)/N of the data
  (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms", 2009), N the nodes, which is
  N(n-1)/(n(N-1)) times the plan's ring bound (n ranks): 1.875 for 2 nodes of 8 GPUs, 1.03 for 32.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.basics.errors import Problem
from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import BuildFiles
from fabricgen.testplan.model import RESULTS_DIR, Endpoint, Pair, Run, TestPlan
from fabricgen.testplan.plan import TestplanError
from fabricgen.testplan.results import (
    NcclResult,
    PerftestResult,
    Reading,
    ResultProblem,
    read_result,
)

MAX_RESULT_FILES = 100_000
PRINTED = 0.01  # GB/s: nccl-tests prints busbw with two decimals, the plan rounds its bounds to two


@dataclass
class PairOutcome:
    pair: str
    kind: str  # fabric (between two leaves, across fabric links) or nic (two NICs behind one leaf)
    file: str
    test: str  # ib_write_bw or ib_send_bw (from the name; write unless -send)
    server: str  # node port (leaf, rail)
    client: str
    unit: str
    peak: str
    average: str
    average_gbps: float
    threshold_gbps: float
    passed: bool
    cables: list[str]  # the two NICs' cables
    links: list[str]  # the fabric links on the pair's routed paths


@dataclass
class RunOutcome:
    run: str
    file: str
    nodes: list[str]
    peak_busbw: str
    peak_size: str
    avg_busbw: str | None
    out_of_bounds: str | None
    wrong_rows: int
    threshold_busbw: float
    bound_busbw: float
    passed: bool
    reasons: list[str]


@dataclass
class CheckResult:
    fabric: str
    pairs: list[PairOutcome] = field(default_factory=list)
    runs: list[RunOutcome] = field(default_factory=list)
    suspects: list[dict] = field(default_factory=list)  # fabric links crossed by short pairs only
    suspect_nics: list[dict] = field(default_factory=list)  # NICs short with two or more partners and good with none
    not_measured: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(p.passed for p in self.pairs) and all(r.passed for r in self.runs)


def read_plan(plan_dir: Path) -> TestPlan:
    """testplan.json of a plan directory, verified against the directory's manifest.json."""
    return BuildFiles(plan_dir, TestplanError, keep=lambda path: path == "testplan.json", workspaces=(RESULTS_DIR,)).parse("testplan.json", TestPlan)


def check_results(plan_dir: Path, files: list[Path]) -> CheckResult:
    """Every file parsed and matched (TestplanError with every unreadable or unmatched file, so
    nothing is judged on half the input), then judged."""
    plan = read_plan(plan_dir)
    if len(files) > MAX_RESULT_FILES:
        raise TestplanError(Problem(f"{len(files)} results files; at most {MAX_RESULT_FILES}", hint="check a part of them at a time"))
    pairs = {p.id: p for p in plan.pairs}
    runs = {r.id: r for r in plan.runs}
    problems: list[Problem] = []
    matched: list[tuple[Path, PerftestResult | NcclResult, Pair | Run]] = []
    for path in files:
        try:
            result = read_result(path)
        except ResultProblem as exc:
            problems.append(exc.problem)
            continue
        entry = _by_name(path, pairs, runs) or _by_content(result, plan)
        if entry is None:
            problems.append(
                Problem(
                    "cannot tell which pair or run of the plan this output belongs to",
                    hint="name it results/<pair-id>.txt or results/<run-id>.txt as the plan's scripts do",
                    file=str(path),
                )
            )
        elif isinstance(entry, Pair) != isinstance(result, PerftestResult):
            kind = "perftest" if isinstance(result, PerftestResult) else "nccl-tests"
            problems.append(Problem(f"{kind} output, but its name is that of {entry.id}", hint="check the file's name", file=str(path)))
        else:
            impossible = _impossible(result, entry)
            if impossible is not None:
                problems.append(impossible)
            else:
                matched.append((path, result, entry))
    if problems:
        raise TestplanError(problems)
    outcome = CheckResult(plan.fabric)
    seen = set()
    for path, result, entry in matched:
        seen.add(entry.id)
        if isinstance(entry, Pair):
            outcome.pairs.append(_judge_pair(path, result, entry))  # type: ignore[arg-type]
        else:
            outcome.runs.append(_judge_run(path, result, entry))  # type: ignore[arg-type]
    outcome.not_measured = [i for i in (*pairs, *runs) if i not in seen]
    outcome.suspects = _suspects(plan, outcome.pairs)
    outcome.suspect_nics = _suspect_nics(plan, outcome.pairs)
    return outcome


def check_reports(reports: dict[str, Path | None], results: list[Path]) -> None:
    """TestplanError when a report (option -> file, None when not asked for) would be written over
    a results file it is made from, or two reports over one file. (Where a report may go at all,
    outside every plan and build directory, is its option's check: fabricgen.basics.user_paths.)"""
    problems = []
    inputs = {os.path.realpath(path) for path in results}
    seen: dict[str, str] = {}
    for option, report in reports.items():
        if report is None:
            continue
        real = os.path.realpath(report)
        if real in inputs:
            problems.append(Problem("is one of the results files it checks", hint="write the report to another file", file=str(report), field=(option,)))
        elif real in seen:
            problems.append(Problem(f"is the file {seen[real]} names too", hint="give each report a file of its own", file=str(report), field=(option,)))
        seen[real] = option
    if problems:
        raise TestplanError(problems)


def busbw_limit(run: Run) -> float:
    """The largest bus bandwidth (GB/s) the run's nodes' backend NICs can carry with any algorithm
    (see the module's docstring): above it, a result is impossible. The NICs' bound, not the
    leaf-scaled one: traffic sent through a peer GPU's NIC (PXN) may stay behind its leaf."""
    nodes, ranks = len(run.nodes), run.ranks
    if run.test == "alltoall" or nodes < 2 or ranks < 2:
        return run.nic_bound_busbw + PRINTED
    return run.nic_bound_busbw * nodes * (ranks - 1) / (ranks * (nodes - 1)) + PRINTED


def _impossible(result: PerftestResult | NcclResult, entry: Pair | Run) -> Problem | None:
    """A problem naming the file, line and value when `result` holds a figure no hardware of
    `entry` can reach; None when every figure can be."""
    fastest: Reading = result.fastest
    if isinstance(result, PerftestResult) and isinstance(entry, Pair):
        line_rate = min(entry.server.speed_gbps, entry.client.speed_gbps)
        if fastest.value <= line_rate * (1 + 1e-9):
            return None
        shown = f"{fastest.text} {result.unit}" + (f" ({fastest.value:,.2f} Gb/s)" if result.unit != "Gb/sec" else "")
        return Problem(
            f"{fastest.column} {shown} is above the line rate of {entry.id}'s NICs, {line_rate:,} Gb/s: impossible, not a measurement",
            hint="rerun the pair with the plan's script (a bidirectional -b run adds both directions; perftest warns when it misreads the CPU clock)",
            file=result.path,
            line=fastest.line,
        )
    if isinstance(result, NcclResult) and isinstance(entry, Run):
        limit = busbw_limit(entry)
        if fastest.value <= limit:
            return None
        return Problem(
            f"{fastest.column} {fastest.text} GB/s is above what the {len(entry.nodes):,} nodes' backend NICs can carry for {entry.test} "
            f"({limit - PRINTED:,.2f} GB/s): impossible, not a measurement",
            hint="rerun the run with the plan's script (runs/<run-id>.sh) and check its output",
            file=result.path,
            line=fastest.line,
        )
    return None


_SUFFIX = re.compile(r"(\.server)?(\.txt|\.log|\.out)?$")


def _by_name(path: Path, pairs: dict[str, Pair], runs: dict[str, Run]) -> Pair | Run | None:
    stem = _SUFFIX.sub("", path.name)
    stem = _SUFFIX.sub("", stem)
    stem = stem.removesuffix("-send")
    return pairs.get(stem) or runs.get(stem)


def _by_content(result: PerftestResult | NcclResult, plan: TestPlan) -> Pair | Run | None:
    """A perftest output by the addresses of the GIDs it printed (both ends of one pair); an
    nccl-tests output by its ranks' hosts, its collective (a reduction op: all-reduce) and its
    library (rccl-tests says so in its header)."""
    if isinstance(result, PerftestResult):
        # the BW table is the client's (ib_write_bw's server prints none): its local GID is the
        # client's, which tells a pair from its reverse
        pairs = [p for p in plan.pairs if {p.server.address, p.client.address} <= result.addresses]
        if len(pairs) > 1:
            pairs = [p for p in pairs if (p.client.address, p.server.address) == (result.local, result.remote)]
        return pairs[0] if len(pairs) == 1 else None
    test = "all_reduce" if result.reduction else "alltoall"
    runs = [r for r in plan.runs if set(r.nodes) == result.hosts and r.test == test and r.library == (result.library or "nccl")]
    return runs[0] if len(runs) == 1 else None


def where(end: Endpoint) -> str:
    """A NIC as a technician finds it: node and port, its cable, the leaf port, rail, rack and RU."""
    place = f", rack {end.rack}" if end.rack else ""
    place += f" RU {end.ru}" if end.ru else ""
    return f"{end.node} {end.port} (cable {end.cable} to {end.leaf} {end.leaf_port}, rail {end.rail}{place})"


def _judge_pair(path: Path, result: PerftestResult, pair: Pair) -> PairOutcome:
    return PairOutcome(
        pair=pair.id,
        kind=pair.kind,
        file=str(path),
        test="ib_send_bw" if "-send" in path.name else "ib_write_bw",
        server=where(pair.server),
        client=where(pair.client),
        unit=result.unit,
        peak=result.peak,
        average=result.average,
        average_gbps=round(result.average_gbps, 2),
        threshold_gbps=pair.threshold_gbps,
        passed=result.average_gbps >= pair.threshold_gbps,
        cables=[pair.server.cable, pair.client.cable],
        links=list(pair.links),
    )


def _judge_run(path: Path, result: NcclResult, run: Run) -> RunOutcome:
    reasons = []
    if float(result.peak_busbw) < run.threshold_busbw:
        reasons.append(f"peak busbw {result.peak_busbw} GB/s is below the threshold {run.threshold_busbw:g} GB/s (bound {run.bound_busbw:g})")
    if result.out_of_bounds not in (None, "0"):
        reasons.append(f"{result.out_of_bounds} out-of-bounds values (wrong results)")
    if result.wrong:
        reasons.append(f"{result.wrong} rows with #wrong results")
    return RunOutcome(
        run.id,
        str(path),
        list(run.nodes),
        result.peak_busbw,
        result.peak_size,
        result.avg_busbw,
        result.out_of_bounds,
        result.wrong,
        run.threshold_busbw,
        run.bound_busbw,
        not reasons,
        reasons,
    )


def _suspects(plan: TestPlan, pairs: list[PairOutcome]) -> list[dict]:
    """Fabric links crossed by two or more short pairs and by no pair that met its threshold."""
    short = Counter(link for p in pairs if not p.passed for link in p.links)
    good = {link for p in pairs if p.passed for link in p.links}
    ends = {link.cable: link for link in plan.links}
    found = []
    for cable, count in sorted(short.items(), key=lambda item: (-item[1], natural_key(item[0]))):
        if count >= 2 and cable not in good and cable in ends:
            link = ends[cable]
            found.append({"cable": cable, "short_pairs": count, "a": f"{link.a_device} {link.a_port}", "b": f"{link.b_device} {link.b_port}"})
    return found


def _suspect_nics(plan: TestPlan, pairs: list[PairOutcome]) -> list[dict]:
    """NICs (with their cable and leaf port) short with two or more partners and met their
    threshold with none: the NIC, its optic, cable or leaf port, not the partners. Which way the
    data went says which half: short as client (it sends: ib_write_bw writes from the client to
    the server) points at its transmit side, short as server at its receive side."""
    planned = {p.id: p for p in plan.pairs}
    short: dict[str, dict] = {}
    good: set[str] = set()
    for outcome in pairs:
        pair = planned[outcome.pair]
        for end, other, role in ((pair.server, pair.client, "receives"), (pair.client, pair.server, "sends")):
            if outcome.passed:
                good.add(end.cable)
                continue
            entry = short.setdefault(end.cable, {"nic": where(end), "cable": end.cable, "partners": set(), "sends": 0, "receives": 0})
            entry["partners"].add(other.cable)
            entry[role] += 1
    found = []
    for cable, entry in sorted(short.items(), key=lambda item: natural_key(item[0])):
        if len(entry["partners"]) >= 2 and cable not in good:
            found.append({**entry, "partners": len(entry["partners"])})
    return found


class CheckJson(JsonOutputModel):
    """`fabricgen testplan check --json` (and --json-report FILE): every pair and run judged."""

    fabric: str
    passed: bool  # every measured result met the plan (the exit code is 0)
    pairs: list[PairOutcome]
    runs: list[RunOutcome]
    suspect_links: list[dict]  # fabric links that only short pairs cross
    suspect_nics: list[dict]  # NICs short with two or more partners and good with none
    not_measured: list[str]  # planned pairs and runs with no result file


def as_json(result: CheckResult) -> str:
    document = CheckJson(
        fabric=result.fabric,
        passed=result.passed,
        pairs=result.pairs,
        runs=result.runs,
        suspect_links=result.suspects,
        suspect_nics=result.suspect_nics,
        not_measured=result.not_measured,
    )
    return json.dumps(document.model_dump(mode="json"), indent=1) + "\n"


def as_markdown(result: CheckResult) -> str:
    lines = [f"# Acceptance test results: {result.fabric}", "", f"Verdict: {'all measured results met the plan' if result.passed else 'BELOW THE PLAN'}", ""]
    if result.pairs:
        lines += ["## perftest pairs", "", "| pair | test | server | client | peak | average | threshold Gb/s | result |", "|---|---|---|---|---|---|---|---|"]
        for p in sorted(result.pairs, key=lambda p: (p.passed, p.pair)):
            lines.append(
                f"| {p.pair} | {p.test} | {p.server} | {p.client} | {p.peak} {p.unit} | {p.average} {p.unit} | {p.threshold_gbps:g} | {'ok' if p.passed else 'SHORT'} |"
            )
        for p in result.pairs:
            if not p.passed:
                lines.append(
                    f"\n{p.pair} is short: {p.average_gbps:g} Gb/s of {p.threshold_gbps:g} from {p.client} to {p.server}; "
                    f"fabric links on its paths: {', '.join(p.links) or 'none (both NICs behind one leaf)'}"
                )
        lines.append("")
    if result.suspect_nics:
        lines += [
            "## NICs short with every partner",
            "",
            "Short with two or more partners and good with none: the NIC, its optic, its cable or its leaf port, not the partners.",
            "",
            "| NIC | short partners | short sending | short receiving |",
            "|---|---|---|---|",
        ]
        lines += [f"| {n['nic']} | {n['partners']} | {n['sends']} | {n['receives']} |" for n in result.suspect_nics]
        lines.append("")
    if result.suspects:
        lines += ["## Links shared by short pairs only", "", "| cable | short pairs | end A | end B |", "|---|---|---|---|"]
        lines += [f"| {s['cable']} | {s['short_pairs']} | {s['a']} | {s['b']} |" for s in result.suspects]
        lines.append("")
    if result.runs:
        lines += [
            "## Collective runs",
            "",
            "| run | nodes | peak busbw GB/s | at bytes | # Avg bus bandwidth | threshold GB/s | result |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in sorted(result.runs, key=lambda r: (r.passed, r.run)):
            nodes = ", ".join(r.nodes) if len(r.nodes) <= 8 else f"{', '.join(r.nodes[:8])} and {len(r.nodes) - 8} more"
            lines.append(
                f"| {r.run} | {nodes} | {r.peak_busbw} | {r.peak_size} | {r.avg_busbw or 'not printed'} | {r.threshold_busbw:g} | {'ok' if r.passed else 'SHORT: ' + '; '.join(r.reasons)} |"
            )
        lines.append("")
    if result.not_measured:
        shown = ", ".join(result.not_measured[:30]) + (f" and {len(result.not_measured) - 30} more" if len(result.not_measured) > 30 else "")
        lines += [f"Not measured (no results file): {shown}", ""]
    return "\n".join(lines)
