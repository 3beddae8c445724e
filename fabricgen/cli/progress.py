"""Progress of a long command, phase by phase, on stderr (stdout stays the command's result).

On a terminal: one live line (spinner, phase, phases done, elapsed time) that disappears when the
command ends. Elsewhere (CI logs, a pipe): one plain line as each phase starts, with the time since
the command started, so a log shows what is running and how long each step took:

    [   0.0 s] build: intent
    [   0.1 s] build: design
    ...
    [  30.1 s] build: done

With `quiet`, nothing. Rich is imported only when a terminal shows it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Self

from fabricgen.basics.trust import printable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class Phases:
    """`with Phases("build", order=PHASES) as progress:` then `progress.start(name)` as each phase
    begins, or `progress.finished(name, seconds)` as one ends (the pipeline's callback: the next
    phase of `order` starts), or `with progress.phase(name):` around one."""

    def __init__(self, command: str, *, quiet: bool = False, order: Sequence[str] = ()):
        self.command = command
        self.quiet = quiet
        self.order = list(order)
        self.started = time.perf_counter()
        self._bar: tuple[Progress, TaskID] | None = None  # the live display and its one task, on a terminal
        self._done = 0

    def __enter__(self) -> Self:
        if self.quiet:
            return self
        from rich.console import Console

        console = Console(stderr=True, highlight=False)
        if console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            columns = [SpinnerColumn(), TextColumn("{task.description}")]
            if self.order:
                columns += [BarColumn(bar_width=20), MofNCompleteColumn()]
            # stdout stays the result's (a JSON document may be written while the display is up);
            # stderr goes through the display, so a problem prints above it
            bar = Progress(*columns, TimeElapsedColumn(), console=console, transient=True, redirect_stdout=False)
            bar.start()
            self._bar = bar, bar.add_task(self.command, total=len(self.order) or None)
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None
        elif not self.quiet and kind is None:
            self._line("done")

    def start(self, phase: str, detail: str = "") -> None:
        """`phase` begins (`detail`: what it works on, e.g. '8 devices')."""
        if phase in self.order:
            self._done = self.order.index(phase)
        text = phase + (f" ({detail})" if detail else "")
        if self.quiet:
            return
        if self._bar is not None:
            from rich.markup import escape  # a file name in brackets is no style

            bar, task = self._bar
            bar.update(task, description=escape(f"{self.command}: {printable(text)}"), completed=self._done)
        else:
            self._line(text)

    def finished(self, phase: str, seconds: float) -> None:
        """`phase` ended (after `seconds`): the next phase of the order starts, if there is one."""
        if phase in self.order and self.order.index(phase) + 1 < len(self.order):
            self.start(self.order[self.order.index(phase) + 1])
        elif self._bar is not None and phase in self.order:
            bar, task = self._bar
            bar.update(task, completed=len(self.order))

    @contextmanager
    def phase(self, name: str, detail: str = "") -> Iterator[None]:
        self.start(name, detail)
        yield
        if name in self.order:
            self._done = self.order.index(name) + 1
            if self._bar is not None:
                bar, task = self._bar
                bar.update(task, completed=self._done)

    def _line(self, text: str) -> None:
        sys.stderr.write(f"[{time.perf_counter() - self.started:7.1f} s] {self.command}: {printable(text)}\n")
        sys.stderr.flush()
