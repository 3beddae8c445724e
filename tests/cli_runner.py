"""fabricgen's command line run inside the test process, answering like `subprocess.run` would.

Starting `python -m fabricgen` costs an interpreter and the compiler's imports (about 0.6 s of CPU
each time); most command-line tests are about what a command prints, exits with and writes, which
the same code does in this process. `fabricgen(...)` runs `fabricgen.cli.app` through typer's
CliRunner and returns the exit code, stdout and stderr separately.

An exception that escapes the command (a user would see a traceback) is raised here instead of
being swallowed by the runner, so `"Traceback" not in result.stderr` keeps its meaning: such a run
fails the test.

Keep a subprocess where the process is the subject: a signal or a kill, memory limits, hash
randomisation, the console script or `python -m fabricgen` itself, parallel builds (`--jobs`
forks), and the end-to-end secrets and lab runs that check what any process's command line holds.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner


@dataclass(frozen=True)
class Completed:
    """What a finished command left: like subprocess.CompletedProcess, text mode."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def fabricgen(*args: str | Path, env: Mapping[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None) -> Completed:
    """`fabricgen ARGS` in this process. `env` is the command's whole environment, as for
    subprocess.run (None: this process's); `cwd` the directory it runs in; `stdin` what it reads
    (nothing by default, and never a terminal)."""
    from fabricgen.cli import app

    argv = tuple(str(arg) for arg in args)
    overrides: dict[str, str | None] | None = None
    if env is not None:
        overrides = {name: None for name in os.environ if name not in env}
        overrides.update(env)
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(app, list(argv), input=stdin, env=overrides, catch_exceptions=True, prog_name="fabricgen")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"`fabricgen {' '.join(argv)}` raised {type(result.exception).__name__} (a user would see a traceback)") from result.exception
    return Completed(argv, result.exit_code, result.stdout, result.stderr)
