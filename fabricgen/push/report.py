"""How `fabricgen push` shows a rollout: each device's diff, then one result table."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

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
            console.rule(f"{result.target.name} ({result.target.nos}, {result.target.host})")
            if console.is_terminal:
                console.print(Syntax(result.diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default"))
            else:
                console.print(result.diff.rstrip("\n"), markup=False, highlight=False)


def result_table(rollout: Rollout) -> Table:
    table = Table(title="push " + ("--commit" if rollout.committed else "dry run"), header_style="bold")
    for column in ("device", "role", "NOS", "address", "stage", "result", "diff lines", "seconds", "detail"):
        table.add_column(column, justify="right" if column in ("diff lines", "seconds") else "left")
    for result in rollout.results:
        target = result.target
        table.add_row(
            target.name, target.role, target.nos, target.host, result.stage,
            f"[{_STYLE[result.outcome]}]{result.outcome.value}[/]",
            str(_changed_lines(result.diff)) if result.diff else "",
            f"{result.seconds:.1f}" if result.stage else "",
            result.message,
        )
    return table


def summary(rollout: Rollout) -> str:
    counts = Counter(result.outcome for result in rollout.results)
    text = ", ".join(f"{count} {outcome.value}" for outcome, count in sorted(counts.items(), key=lambda item: list(Outcome).index(item[0])))
    if not rollout.committed:
        return f"dry run of {len(rollout.results)} device(s): {text}; nothing was changed (add --commit to apply)"
    return f"commit of {len(rollout.results)} device(s): {text}" + (f"; stopped: {rollout.stopped}" if rollout.stopped else "")


def _changed_lines(diff: str) -> int:
    """Added and removed lines of a unified diff (or of a NOS's own +/- listing)."""
    return sum(
        1 for line in diff.splitlines()
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    )
