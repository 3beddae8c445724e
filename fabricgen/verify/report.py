"""`fabricgen verify`'s output: a rich table, Markdown and JSON of the same findings."""

from __future__ import annotations

import json
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, TextColumn
from rich.table import Table

from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.trust import printable
from fabricgen.verify.collect import Observation
from fabricgen.verify.findings import ERROR, INFO, WARNING, Finding

CHECKS = ("reach", "answers", "cabling", "ports", "routing", "lossless", "drift")
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


@dataclass(frozen=True)
class Verification:
    build_dir: str
    findings: list[Finding]
    observations: list[Observation]
    notes: list[str]
    interval: float

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    def sorted(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (CHECKS.index(f.check) if f.check in CHECKS else 99, SEVERITY_ORDER[f.severity], f.device, f.port))

    def counts(self) -> Counter:
        return Counter(f.severity for f in self.findings)


def summary(result: Verification) -> str:
    counts = result.counts()
    reached = sum(o.reached for o in result.observations)
    verdict = "everything matches the build" if result.ok and not result.findings else ("no errors" if result.ok else "the fabric differs from the build")
    return (
        f"{reached:,}/{len(result.observations):,} devices reached; {counts[ERROR]:,} error(s), {counts[WARNING]:,} warning(s), "
        f"{counts[INFO]:,} note(s): {verdict}"
    )


def table(result: Verification) -> Table:
    grid = Table(title="fabricgen verify", show_header=True, header_style="bold")
    for column in ("check", "severity", "device", "port", "finding", "planned", "found"):
        grid.add_column(column, overflow="fold")
    styles = {ERROR: "red", WARNING: "yellow", INFO: "cyan"}
    for f in result.sorted():
        grid.add_row(*(_rich(text) for text in (f.check, f.severity, f.device, f.port, f.message, f.planned, f.found)), style=styles[f.severity])
    return grid


# A finding carries what devices answered (LLDP names and ports, peer addresses, config lines,
# driver errors): each medium escapes it as it prints it, JSON included (json.dumps alone would
# keep an ESC or a newline as \u001b, \n: a consumer printing the value gets them back).
def _rich(text: str) -> str:
    """For a rich cell: control characters escaped, [markup] shown as the device sent it."""
    return escape(printable(text))


def plain_lines(result: Verification) -> list[str]:
    return [printable(f"{f.severity.upper()} {f.check} {f.device}{' ' + f.port if f.port else ''}: {f.message}") for f in result.sorted()]


def _cell(text: str) -> str:
    """For a Markdown table cell: on one line, control characters escaped, pipes too."""
    return printable(text.replace("\n", " ")).replace("|", "\\|")


def render_markdown(result: Verification) -> str:
    lines = [f"# fabricgen verify: {printable(result.build_dir)}", "", summary(result), ""]
    if result.notes:
        lines += [f"- {printable(note)}" for note in result.notes] + [""]
    for check in CHECKS:
        rows = [f for f in result.sorted() if f.check == check]
        lines.append(f"## {check}")
        lines.append("")
        if not rows:
            lines += ["Nothing to report.", ""]
            continue
        lines += ["| severity | device | port | finding | planned | found |", "| --- | --- | --- | --- | --- | --- |"]
        lines += [f"| {f.severity} | {_cell(f.device)} | {_cell(f.port)} | {_cell(f.message)} | {_cell(f.planned)} | {_cell(f.found)} |" for f in rows]
        lines.append("")
    devices = ["| device | reached | seconds | not reported by its driver |", "| --- | --- | --- | --- |"]
    devices += [
        f"| {_cell(o.target.name)} | {'yes' if o.reached else 'no'} | {o.seconds:.1f} | {_cell(', '.join(sorted(o.missing))) or '-'} |"
        for o in result.observations
    ]
    return "\n".join(lines + ["## devices", ""] + devices) + "\n"


class FindingJson(JsonOutputModel):
    check: str  # reach, answers, cabling, ports, routing, lossless, drift
    severity: str  # error, warning, info
    device: str
    port: str
    message: str
    planned: str
    found: str
    detail: dict  # check-specific data (a drift finding: the device's full config diff)


class DeviceJson(JsonOutputModel):
    reached: bool
    error: str  # why it was not reached
    seconds: float
    not_reported: list[str]  # getters its driver does not implement
    getter_errors: dict[str, str]  # getter -> what went wrong


class VerifyJson(JsonOutputModel):
    """`fabricgen verify --json` (and --json-report FILE): the findings, worst check first. Every
    string (keys included) is printable: control and format characters are escaped as `\x1b`."""

    build_dir: str
    ok: bool  # no error (the exit code is 0)
    interval_seconds: float  # between the two counter samples
    counts: dict[str, int]  # error, warning, info
    notes: list[str]
    findings: list[FindingJson]
    devices: dict[str, DeviceJson]


def render_json(result: Verification) -> str:
    """The findings as `VerifyJson`."""
    counts = result.counts()
    document = {
        "build_dir": result.build_dir,
        "ok": result.ok,
        "interval_seconds": result.interval,
        "counts": {ERROR: counts[ERROR], WARNING: counts[WARNING], INFO: counts[INFO]},
        "notes": result.notes,
        "findings": [f.as_dict() for f in result.sorted()],
        "devices": {
            o.target.name: {
                "reached": o.reached,
                "error": o.error,
                "seconds": round(o.seconds, 2),
                "not_reported": sorted(o.missing),
                "getter_errors": o.errors,
            }
            for o in result.observations
        },
    }
    return json.dumps(_escaped(VerifyJson.model_validate(document).model_dump(mode="json")), indent=2, sort_keys=False) + "\n"


def _escaped(value: object) -> object:
    """A JSON document with every string, keys included, passed through `printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(key): _escaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value


@contextmanager
def progress(console: Console, devices: int, quiet: bool = False):
    """A live bar on a terminal; one plain line per device read otherwise (CI logs); nothing when quiet."""
    if quiet:
        yield lambda _o: None
        return
    if console.is_terminal:
        with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[last]}"), console=console, transient=True, redirect_stdout=False) as bar:
            task = bar.add_task("reading", total=devices, last="")
            yield lambda o: bar.update(task, advance=1, last=f"{o.target.name}: {'read' if o.reached else 'not reached'}")
        return
    done = 0

    def line(o: Observation) -> None:
        nonlocal done
        done += 1
        console.print(f"[{done:,}/{devices:,}] {o.target.name}: {'read' if o.reached else 'not reached'} ({o.seconds:.1f} s)", markup=False)

    yield line
