"""The `fabricgen` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from fabricgen import __version__
from fabricgen.errors import FabricgenError
from fabricgen.pipeline import Build, build, compile_intent
from fabricgen.units import format_ratio

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile an AI-cluster intent (YAML) into switch configs, a cabling plan and a bill of materials.",
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)

EXIT_INPUT = 2


def _version(value: bool) -> None:
    if value:
        out.print(f"fabricgen {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool | None = typer.Option(None, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """fabricgen: AI-cluster intent -> validated fabric -> NX-OS and SONiC configs, cabling plan, BOM."""


@app.command("build")
def build_command(
    intent: Path = typer.Argument(..., help="The intent YAML file, e.g. intents/cisco-256-gpu.yaml."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Build directory (default: output/<fabric name>). Replaced atomically; only an earlier build is ever replaced."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the destination."),
) -> None:
    """Compile INTENT and write every config and report, all or nothing.

    Writes configs/ (NX-OS <device>.cfg, SONiC <device>/config_db.json + frr.conf), cabling.csv/.md,
    bom.csv/.md, ip-plan.csv, topology.json, summary.md and manifest.json.
    """
    started = time.perf_counter()
    result, destination = _run(lambda: build(intent, output))
    if quiet:
        out.print(str(destination))
        return
    _print_summary(result)
    total_bytes = sum(len(data) for data in result.files.values())
    out.print(
        f"wrote {len(result.files)} files ({total_bytes / 1e6:.1f} MB) to {destination} "
        f"in {time.perf_counter() - started:.2f} s"
    )


@app.command("validate")
def validate_command(intent: Path = typer.Argument(..., help="The intent YAML file.")) -> None:
    """Run every check on INTENT (schema, catalog, design, addressing, fabric invariants); write nothing."""
    result = _run(lambda: compile_intent(intent, render=False))
    _print_summary(result)
    out.print(f"{intent}: valid")


def _run(action):
    try:
        return action()
    except FabricgenError as exc:
        # plain text, never wrapped: one problem per line stays greppable as file:line: field
        sys.stderr.write(exc.report() + "\n")
        raise typer.Exit(EXIT_INPUT) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        raise typer.Exit(130) from None


def _print_summary(result: Build) -> None:
    s = result.sizing
    table = Table(title=f"{result.loaded.intent.name}: backend", show_header=True, header_style="bold")
    for column in ("role", "model", "NOS", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for (role, model, nos), count in result.fabric.inventory():
        table.add_row(role, model, nos, f"{count:,}")
    out.print(table)
    out.print(
        f"{s.gpus:,} GPUs, {s.su_count} scalable unit(s) of {s.su_nodes} nodes, {len(result.fabric.links):,} links; "
        f"leaf {s.leaf_downlinks} down / {s.leaf_uplinks} up ({format_ratio(s.built_ratio)}), "
        f"{s.links_per_spine} link(s) to each of {s.spines} spines"
    )
    for note in result.compiled.notes:
        out.print(f"note: {note}")


def main() -> None:
    app(prog_name="fabricgen")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
