"""The `fabricgen` command line."""

from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from fabricgen import __version__
from fabricgen.errors import FabricgenError
from fabricgen.pipeline import Build, build, compile_intent
from fabricgen.reports.bom_compare import bom_table, compare_bom, render_json, render_markdown
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

    Writes configs/ (NX-OS <device>.cfg, SONiC <device>/config_db.json + frr.conf), hosts/ (per
    server: nic-qos.sh or nic-qos.txt, netplan.yaml), cabling.csv/.md, bom.csv/.md, ip-plan.csv,
    topology.json, summary.md and manifest.json.
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
    table = Table(title=f"{result.loaded.intent.name}", show_header=True, header_style="bold")
    for column in ("network", "role", "model", "NOS", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for (network, role, model, nos), count in result.fabric.inventory():
        table.add_row(network, role, model, nos, f"{count:,}")
    out.print(table)
    out.print(
        f"{s.gpus:,} GPUs, {s.su_count} scalable unit(s) of {s.su_nodes} nodes, {len(result.fabric.links):,} links; "
        f"leaf {s.leaf_downlinks} down / {s.leaf_uplinks} up ({format_ratio(s.built_ratio)}), "
        f"{s.links_per_spine} link(s) to each of {s.spines} spines"
    )
    for network, plan in result.compiled.plans.items():
        if network.value != "backend":
            out.print(
                f"{network.value}: {plan.leaves} leaves, {plan.spines} spines; leaf {plan.leaf_downlinks} server ports / "
                f"{plan.leaf_uplinks} up ({format_ratio(plan.built_ratio)})"
            )
    if result.compiled.oob is not None:
        o = result.compiled.oob
        out.print(f"oob: {o.switches} OOB switches for {o.management_ports} management ports; {o.console_servers} console servers for {o.console_ports} consoles")
    for note in result.compiled.notes:
        out.print(f"note: {note}")


bom_app = typer.Typer(no_args_is_help=True, help="Work with a build's bill of materials.", rich_markup_mode=None)
app.add_typer(bom_app, name="bom")


class BomFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


@bom_app.command("compare")
def bom_compare_command(
    build_dir: Path = typer.Argument(..., help="A build directory holding bom.csv, e.g. output/cisco-256-gpu."),
    reference: Path = typer.Argument(..., help="The reference CSV: a header row with pid and quantity, optionally section."),
    output_format: BomFormat = typer.Option(BomFormat.text, "--format", help="text (a table), markdown (for a PR comment) or json."),
) -> None:
    """Compare BUILD_DIR/bom.csv with REFERENCE (a vendor quote, a published design), part by part.

    Prints each part's delta (build - reference) and its cause. Exit 0 when equal, 1 when they differ,
    2 on bad input.
    """
    result = _run(lambda: compare_bom(build_dir, reference))
    if output_format is BomFormat.markdown:
        sys.stdout.write(render_markdown(result))
    elif output_format is BomFormat.json:
        sys.stdout.write(render_json(result))
    else:
        # off a terminal, let the table take its natural width: wrapped cells would break grep
        wide = out if out.is_terminal else Console(highlight=False, width=10_000)
        wide.print(bom_table(result))
        for note in result.notes():
            out.print(f"note: {note}", markup=False)
        out.print(result.summary())
    raise typer.Exit(0 if result.equal else 1)


def main() -> None:
    app(prog_name="fabricgen")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
