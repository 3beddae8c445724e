"""What every command shares: the console, the exit codes, the error gate and the common options.

Nothing here imports the compiler: `fabricgen --version` and `--help` load only this and typer.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from fabricgen.errors import FabricgenError

out = Console(highlight=False, soft_wrap=True)

EXIT_INPUT = 2
CATALOG_DIR_HELP = "A directory the intent's catalog files may also come from (repeatable); by default they must lie in the intent's own directory."
BUILD_DIR_ARG = typer.Argument(..., help="A build directory written by `fabricgen build`.")
TIMEOUT_OPTION = typer.Option(120.0, "--timeout", help="Seconds to wait for the control plane to converge.")
NETWORK_OPTION = typer.Option("backend", "--network", help="Which routed fabric of the build: backend, frontend or storage.")


class OutputFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


def run_or_exit(action):
    """The action's result; a FabricgenError printed as fabricgen prints problems (one a line) and
    exit 2, an interrupt exit 130."""
    try:
        return action()
    except FabricgenError as exc:
        # plain text, never wrapped: one problem per line stays greppable as file:line: field
        sys.stderr.write(exc.report() + "\n")
        raise typer.Exit(EXIT_INPUT) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        raise typer.Exit(130) from None


def write_report(path: Path, data: bytes) -> None:
    """Write a report file a command was asked for (--report, --json FILE) atomically; exit 2 when
    it cannot be written."""
    from fabricgen.output import write_file_atomic

    run_or_exit(lambda: write_file_atomic(path, data))
