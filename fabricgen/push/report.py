"""How `fabricgen push` shows a rollout: each device's diff, then one result table; or, for
`push --json`, the rollout as one document (`PushJson`).

Diffs and messages come from the devices: every piece of them is escaped (`trust.printable`: no
control character reaches the terminal) and shown as plain text (no rich markup), so a device
cannot move the cursor, recolour or hide lines of the report.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.trust import printable
from fabricgen.push.rollout import Outcome, Rollout

_STYLE = {
    Outcome.unchanged: "dim",
    Outcome.would_change: "yellow",
    Outcome.committed: "green",
    Outcome.rolled_back: "bold red",
    Outcome.failed: "bold red",
    Outcome.not_attempted: "red",
}


def print_diffs(console: Console, rollout: Rollout) -> None:
    for result in rollout.results:
        if result.diff.strip():
            console.rule(_plain(f"{result.target.name} ({result.target.nos}, {result.target.host})"))
            diff = "\n".join(printable(line) for line in result.diff.rstrip("\n").splitlines())
            if console.is_terminal:
                console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
            else:
                console.print(diff, markup=False, highlight=False)


def result_table(rollout: Rollout) -> Table:
    table = Table(title="push " + ("--commit" if rollout.committed else "dry run"), header_style="bold")
    for column in ("device", "role", "NOS", "address", "stage", "result", "diff lines", "seconds", "detail"):
        table.add_column(column, justify="right" if column in ("diff lines", "seconds") else "left")
    for result in rollout.results:
        target = result.target
        table.add_row(
            _plain(target.name),
            _plain(target.role),
            _plain(target.nos),
            _plain(target.host),
            result.stage,
            f"[{_STYLE[result.outcome]}]{result.outcome.value}[/]",
            str(_changed_lines(result.diff)) if result.diff else "",
            f"{result.seconds:.1f}" if result.stage else "",
            _plain(result.message),
        )
    return table


def summary(rollout: Rollout) -> str:
    counts = Counter(result.outcome for result in rollout.results)
    text = ", ".join(f"{count:,} {outcome.value}" for outcome, count in sorted(counts.items(), key=lambda item: list(Outcome).index(item[0])))
    if not rollout.committed:
        return f"dry run of {len(rollout.results):,} device(s): {text}; nothing was changed (add --commit to apply)"
    return f"commit of {len(rollout.results):,} device(s): {text}" + (f"; stopped: {rollout.stopped}" if rollout.stopped else "")


def _plain(text: str) -> str:
    """`text` for a rich table cell or rule: control characters escaped, [markup] shown as typed."""
    return escape(printable(text))


def _changed_lines(diff: str) -> int:
    """Added and removed lines of a unified diff (or of a NOS's own +/- listing)."""
    return sum(1 for line in diff.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))


# --- JSON (`push --json`) ---------------------------------------------------------------------------


class DeviceJson(JsonOutputModel):
    device: str
    role: str
    network: str
    nos: str
    host: str
    stage: str  # preflight, canary, batch N; empty when not attempted
    outcome: str  # unchanged, would change, committed, rolled back, failed, not attempted
    ok: bool
    seconds: float
    diff_lines: int  # added and removed lines of its diff
    diff: str  # the device's diff against the build, secrets masked
    message: str


class PushJson(JsonOutputModel):
    """`fabricgen push --json`: the rollout, device by device in build order."""

    committed: bool  # --commit was asked (otherwise a dry run: nothing changed)
    ok: bool  # every device succeeded (the exit code is 0)
    stopped: str  # why the rollout stopped early; empty when it did not
    counts: dict[str, int]  # per outcome
    devices: list[DeviceJson]


def push_json(rollout: Rollout) -> PushJson:
    """The rollout as data; every string from a device escaped as on the terminal (`printable`),
    line by line for a diff so it keeps its lines."""
    counts = Counter(result.outcome.value for result in rollout.results)
    return PushJson(
        committed=rollout.committed,
        ok=rollout.ok,
        stopped=printable(rollout.stopped),
        counts={outcome.value: counts[outcome.value] for outcome in Outcome if counts[outcome.value]},
        devices=[
            DeviceJson(
                device=printable(r.target.name),
                role=printable(r.target.role),
                network=printable(r.target.network),
                nos=printable(r.target.nos),
                host=printable(r.target.host),
                stage=r.stage,
                outcome=r.outcome.value,
                ok=r.ok,
                seconds=round(r.seconds, 2),
                diff_lines=_changed_lines(r.diff),
                diff="".join(printable(line) + "\n" for line in r.diff.splitlines()),
                message=printable(r.message),
            )
            for r in rollout.results
        ],
    )
