"""`fabricgen testplan check` on a switch acceptance plan: each results file (what the plan's
trex/run_trials.py writes, one per trial) matched to its switch, group, frame size and load, and
judged against the plan's criteria.

A results file is JSON: {"fabricgen_trial": {fabric, switch, group, frame_bytes, load_percent,
duration_s, tester_ports}, "stats": ...} where "stats" is TRex's STLClient.get_stats() after the
trial (github:cisco-system-traffic-generator/trex-core, scripts/automation/trex_control_plane/
interactive/trex/stl/trex_stl_client.py get_stats, trex/common/stats/trex_port_stats.py to_dict:
per port id "opackets" and "ipackets"; trex/stl/trex_stl_stats.py: "latency" per pg_id with
"latency": {"average", "total_max", "total_min", "jitter"} in microseconds). Read as hostile input:
a regular file only (opened without blocking), bounded size, strict JSON (no NaN or Infinity),
every value used checked for type and range; nothing read is echoed raw (names are checked
against the plan, numbers printed by this code).

Judged per trial (RFC 2544 section 26.1, throughput; RFC 2889 full mesh):
- each tester port offered its share: opackets / duration at least the planned rate less the plan's
  tolerance (rate_tolerance_ppm of line rate);
- zero loss: the group's ports received exactly the frames they sent (fewer is loss; more is a
  frame the switch sent or duplicated, which would hide a loss just as large);
- latency and jitter, when the plan sets bounds (--max-latency-us, --max-jitter-us): the largest
  total_max and jitter of any port's latency stream.
A port that sent more frames than its line rate allows in the trial's duration is impossible (a
file of another group or speed, or an edited one): exit 2, never judged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabricgen.basics.errors import Problem
from fabricgen.basics.files import UnreadableFile, read_regular_file
from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import Hostname, Token
from fabricgen.build.build_dir import BuildFiles
from fabricgen.testplan.plan import TestplanError
from fabricgen.testplan.switches.model import MAX_DURATION_S, MAX_MESH_PORTS, FrameBytes, LoadPercent, MeshGroup, SwitchPlan
from fabricgen.testplan.switches.rates import least_passing_fps, line_fps, load_fraction

MAX_RESULT_BYTES = 32 << 20  # get_stats() of 512 ports with 128 latency streams is well under 1 MB
MAX_RESULT_FILES = 100_000
MAX_COUNT = 2**63 - 1
MAX_MICROSECONDS = 1e9
RESULTS_DIR = "results"
PLAN_FILE = "switch-plan.json"


class _ResultsRecord(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Micro = Annotated[float, Field(ge=0, le=MAX_MICROSECONDS)]


class TrialHeader(_ResultsRecord):
    fabric: Hostname
    switch: Hostname
    group: Token
    frame_bytes: FrameBytes
    load_percent: LoadPercent
    duration_s: Annotated[int, Field(ge=1, le=MAX_DURATION_S)]
    tester_ports: Annotated[int, Field(ge=2, le=MAX_MESH_PORTS)]


class PortCounters(_ResultsRecord):
    opackets: Count
    ipackets: Count


class LatencyFigures(_ResultsRecord):
    average: Micro
    total_max: Micro
    jitter: Micro


class LatencyStream(_ResultsRecord):
    latency: LatencyFigures


class TrialFile(_ResultsRecord):
    fabricgen_trial: TrialHeader
    stats: dict[str, object]


@dataclass
class TrialOutcome:
    file: str
    switch: str
    model: str
    group: str
    speed_gbps: int
    frame_bytes: int
    load_percent: str
    sent: int
    received: int
    slowest_port: str  # "tester port 3 (Ethernet1/4)"
    slowest_fps: str  # frames/s, one decimal
    required_fps: str  # the planned rate, one decimal (the least passing one is rate_tolerance_ppm under it)
    latency_max_us: float | None
    latency_average_us: float | None
    jitter_us: float | None
    passed: bool
    reasons: list[str] = field(default_factory=list)


@dataclass
class SwitchCheckResult:
    fabric: str
    trials: list[TrialOutcome] = field(default_factory=list)
    not_measured: list[str] = field(default_factory=list)  # "switch group frame-size load"

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.trials)


def read_switch_plan(plan_dir: Path) -> SwitchPlan:
    """switch-plan.json of a plan directory, verified against its manifest.json."""
    files = BuildFiles(plan_dir, TestplanError, keep=lambda path: path == PLAN_FILE, workspaces=(RESULTS_DIR,))
    if not files.has(PLAN_FILE):
        raise TestplanError(Problem("not a switch acceptance plan: its manifest.json lists no switch-plan.json", file=str(plan_dir)))
    return files.parse(PLAN_FILE, SwitchPlan)


def check_switch_results(plan_dir: Path, files: list[Path]) -> SwitchCheckResult:
    """Every file read, matched and judged; TestplanError naming every bad one, so no verdict is
    given on half the input."""
    plan = read_switch_plan(plan_dir)
    if len(files) > MAX_RESULT_FILES:
        raise TestplanError(Problem(f"{len(files):,} results files; at most {MAX_RESULT_FILES:,}", hint="check a part of them at a time"))
    switches = {s.name: s for s in plan.switches}
    problems: list[Problem] = []
    judged: list[TrialOutcome] = []
    seen: dict[tuple[str, str, int, str], str] = {}
    for path in files:
        name = str(path)
        try:
            header, stats = _read_trial(path)
            switch = switches.get(header.switch)
            group = next((g for g in switch.groups if g.id == header.group), None) if switch else None
            problem = _mismatch(plan, header, switch is not None, group)
            if problem:
                raise _Bad(
                    Problem(
                        problem, hint="check the plan directory and the file: run_trials.py of this plan writes them", file=name, field=("fabricgen_trial",)
                    )
                )
            assert switch is not None and group is not None
            key = (header.switch, header.group, header.frame_bytes, header.load_percent)
            if key in seen:
                raise _Bad(Problem(f"the same trial as {seen[key]}", hint="give each trial once", file=name))
            seen[key] = name
            # judged as read, so no file's counters stay in memory; printed only when every file was good
            judged.append(_judge(plan, name, header, stats, group, switch.model))
        except _Bad as bad:
            problems.append(bad.problem)
    if problems:
        raise TestplanError(problems)
    result = SwitchCheckResult(plan.fabric, trials=judged)
    result.not_measured = [
        f"{s.name} {g.id} {size}B {load}%"
        for s in plan.switches
        for g in s.groups
        for size in plan.frame_sizes
        for load in plan.loads
        if (s.name, g.id, size, load) not in seen
    ]
    return result


class _Bad(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _read_trial(path: Path) -> tuple[TrialHeader, dict[str, object]]:
    name = str(path)
    try:
        data = read_regular_file(path, MAX_RESULT_BYTES)
    except UnreadableFile as exc:
        raise _Bad(
            Problem(exc.reason, hint="name the JSON file the plan's run_trials.py wrote (results/<switch>/<group>/<size>B-<load>.json)", file=name)
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Bad(Problem(f"not UTF-8 text (byte {exc.start})", file=name)) from None
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _Bad(
            Problem(f"not JSON: {exc.msg} (column {exc.colno})", hint="a results file of run_trials.py is one JSON document", file=name, line=exc.lineno)
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise _Bad(Problem(f"not JSON run_trials.py writes: {reason}", file=name)) from None
    try:
        trial = TrialFile.model_validate(document)
    except ValidationError as exc:
        raise _Bad(_validation_problem(exc, name, ())) from None
    return trial.fabricgen_trial, trial.stats


def _validation_problem(exc: ValidationError, file: str, prefix: tuple[str | int, ...]) -> Problem:
    """The first error of `exc`, located by its field path; the message is pydantic's own words
    about the type or range, never the value read."""
    error = exc.errors(include_input=False, include_url=False)[0]
    return Problem(error["msg"], hint="a results file of the plan's run_trials.py", file=file, field=(*prefix, *error["loc"]))


def _mismatch(plan: SwitchPlan, header: TrialHeader, has_switch: bool, group: MeshGroup | None) -> str | None:
    if header.fabric != plan.fabric:
        return f"a trial of fabric {header.fabric}, not of this plan's fabric {plan.fabric}"
    if not has_switch:
        return f"switch {header.switch} is not in this plan"
    if group is None:
        return f"{header.switch} has no group {header.group} in this plan"
    if header.frame_bytes not in plan.frame_sizes:
        return f"frame size {header.frame_bytes} is not one of the plan's"
    if header.load_percent not in plan.loads:
        return f"load {header.load_percent} % is not one of the plan's"
    if header.tester_ports != len(group.ports):
        return f"{header.tester_ports} tester ports; group {group.id} of {header.switch} has {len(group.ports)}"
    if header.duration_s != plan.duration_s:
        return f"a trial of {header.duration_s} s; the plan's last {plan.duration_s} s"
    return None


def _counters(name: str, stats: dict[str, object], port: int) -> PortCounters:
    entry = stats.get(str(port))
    if entry is None:
        raise _Bad(Problem(f"no counters for tester port {port}", hint="a results file of the plan's run_trials.py", file=name, field=("stats", str(port))))
    try:
        return PortCounters.model_validate(entry)
    except ValidationError as exc:
        raise _Bad(_validation_problem(exc, name, ("stats", str(port)))) from None


def _latency(name: str, stats: dict[str, object], ports: int) -> list[LatencyFigures]:
    """Each port's latency stream (pg_id = tester port), as far as the file has them."""
    table = stats.get("latency")
    if table is None:
        return []
    if not isinstance(table, dict):
        raise _Bad(Problem("not an object", hint="TRex's get_stats() latency table", file=name, field=("stats", "latency")))
    found = []
    for port in range(ports):
        entry = table.get(str(port))
        if entry is None:
            continue
        try:
            found.append(LatencyStream.model_validate(entry).latency)
        except ValidationError as exc:
            raise _Bad(_validation_problem(exc, name, ("stats", "latency", str(port)))) from None
    return found


def _judge(plan: SwitchPlan, name: str, header: TrialHeader, stats: dict[str, object], group: MeshGroup, model: str) -> TrialOutcome:
    ports = len(group.ports)
    counters = [_counters(name, stats, port) for port in range(ports)]
    duration = header.duration_s
    line = line_fps(group.speed_gbps, header.frame_bytes)
    planned = line * load_fraction(header.load_percent)
    least = least_passing_fps(group.speed_gbps, header.frame_bytes, header.load_percent, plan.rate_tolerance_ppm)
    ceiling = line * duration * Fraction(1_000_100, 10**6)  # line rate plus 100 ppm (IEEE 802.3 clock tolerance)
    for port, count in enumerate(counters):
        if count.opackets > ceiling:
            raise _Bad(
                Problem(
                    f"tester port {port} sent {count.opackets:,} frames in {duration} s: more than {group.speed_gbps}G carries at "
                    f"{header.frame_bytes} bytes; impossible, not a measurement of group {group.id}",
                    hint="check the file belongs to this switch and group",
                    file=name,
                    field=("stats", str(port), "opackets"),
                )
            )
    reasons = []
    rates = [Fraction(count.opackets, duration) for count in counters]
    slowest = min(range(ports), key=lambda port: rates[port])
    for port, rate in enumerate(rates):
        if rate < least:
            reasons.append(
                f"tester port {port} ({group.ports[port]}) offered {float(rate):,.1f} frames/s; {header.load_percent} % of line rate is "
                f"{float(planned):,.1f} ({float(rate / line * 100):.4f} % offered)"
            )
    sent = sum(count.opackets for count in counters)
    received = sum(count.ipackets for count in counters)
    if received < sent:
        reasons.append(f"lost {sent - received:,} of {sent:,} frames ({(sent - received) / sent * 1e6:.3f} ppm); zero loss required")
    elif received > sent:
        reasons.append(
            f"received {received - sent:,} frames more than the {sent:,} sent: frames the switch sent itself (LLDP, CDP ...) or duplicated, "
            "which would hide as many lost ones; turn those protocols off on the ports under test"
        )
    latency = _latency(name, stats, ports)
    worst_max = max((f.total_max for f in latency), default=None)
    worst_jitter = max((f.jitter for f in latency), default=None)
    worst_average = max((f.average for f in latency), default=None)
    if plan.max_latency_us is not None:
        if worst_max is None:
            reasons.append("no latency figures in the file; the plan bounds latency")
        elif worst_max > plan.max_latency_us:
            reasons.append(f"maximum latency {worst_max:,.2f} µs; at most {plan.max_latency_us:g} µs required")
    if plan.max_jitter_us is not None:
        if worst_jitter is None:
            reasons.append("no jitter figures in the file; the plan bounds jitter")
        elif worst_jitter > plan.max_jitter_us:
            reasons.append(f"jitter {worst_jitter:,.2f} µs; at most {plan.max_jitter_us:g} µs required")
    return TrialOutcome(
        file=name,
        switch=header.switch,
        model=model,
        group=group.id,
        speed_gbps=group.speed_gbps,
        frame_bytes=header.frame_bytes,
        load_percent=header.load_percent,
        sent=sent,
        received=received,
        slowest_port=f"tester port {slowest} ({group.ports[slowest]})",
        slowest_fps=f"{float(rates[slowest]):.1f}",
        required_fps=f"{float(planned):.1f}",
        latency_max_us=worst_max,
        latency_average_us=worst_average,
        jitter_us=worst_jitter,
        passed=not reasons,
        reasons=reasons,
    )


class SwitchCheckJson(JsonOutputModel):
    """`fabricgen testplan check --json` on a switch acceptance plan: every trial judged."""

    fabric: str
    passed: bool  # every measured trial met the plan (the exit code is 0)
    trials: list[TrialOutcome]
    not_measured: list[str]  # planned trials with no results file: "switch group size load%"


def as_json(result: SwitchCheckResult) -> str:
    document = SwitchCheckJson(fabric=result.fabric, passed=result.passed, trials=result.trials, not_measured=result.not_measured)
    return json.dumps(document.model_dump(mode="json"), indent=1) + "\n"


def as_markdown(result: SwitchCheckResult) -> str:
    verdict = "all measured trials met the plan" if result.passed else "BELOW THE PLAN"
    lines = [f"# Switch acceptance results: {result.fabric}", "", f"Verdict: {verdict}", ""]
    short = [t for t in result.trials if not t.passed]
    for t in sorted(short, key=lambda t: (natural_key(t.switch), t.group, t.frame_bytes, t.load_percent)):
        lines.append(f"- SHORT {t.switch} ({t.model}) group {t.group}, {t.frame_bytes}-byte frames at {t.load_percent} %: {'; '.join(t.reasons)}")
    if short:
        lines.append("")
    if result.trials:
        lines += [
            "| switch | group | frame bytes | load % | slowest port frames/s | planned frames/s | sent | received | max latency µs | jitter µs | result |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for t in sorted(result.trials, key=lambda t: (t.passed, natural_key(t.switch), t.group, t.frame_bytes, float(t.load_percent))):
            lines.append(
                f"| {t.switch} | {t.group} | {t.frame_bytes} | {t.load_percent} | {t.slowest_fps} | {t.required_fps} | {t.sent:,} | {t.received:,} | "
                f"{_micro(t.latency_max_us)} | {_micro(t.jitter_us)} | {'ok' if t.passed else 'SHORT'} |"
            )
        lines.append("")
    if result.not_measured:
        shown = ", ".join(result.not_measured[:30]) + (f" and {len(result.not_measured) - 30:,} more" if len(result.not_measured) > 30 else "")
        lines += [f"Not measured (no results file): {shown}", ""]
    return "\n".join(lines)


def _micro(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"
