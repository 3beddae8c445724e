"""`fabricgen build`, `validate` and `releases`: compile an intent, check it, list the releases."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabricgen.cli.common import CATALOG_DIR_HELP, out, run_or_exit

if TYPE_CHECKING:
    from fabricgen.pipeline import Build


def build_command(
    intent: Path = typer.Argument(..., help="The intent YAML file, e.g. intents/cisco-256-gpu.yaml."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Build directory (default: output/<fabric name>). Replaced atomically; only an earlier build is ever replaced."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the destination."),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=0, help="Render the devices on this many processes (0: one per available CPU). The files are the same for any value."
    ),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """Compile INTENT and write every config and report, all or nothing.

    Writes configs/ (NX-OS <device>.cfg, SONiC <device>/config_db.json + frr.conf), hosts/ (per
    server: nic-qos.sh or nic-qos.txt, netplan.yaml), cabling.csv/.md, bom.csv/.md, ip-plan.csv,
    topology.json, summary.md and manifest.json.
    """
    from fabricgen.pipeline import build

    started = time.perf_counter()
    result, destination = run_or_exit(lambda: build(intent, output, jobs, catalog_dirs))
    if quiet:
        out.print(str(destination))
        return
    _print_summary(result)
    total_bytes = sum(len(data) for data in result.files.values())
    out.print(f"wrote {len(result.files)} files ({total_bytes / 1e6:.1f} MB) to {destination} in {time.perf_counter() - started:.2f} s")


def validate_command(
    intent: Path = typer.Argument(..., help="The intent YAML file."),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """Run every check on INTENT (schema, catalog, design, addressing, fabric invariants); write nothing."""
    from fabricgen.pipeline import compile_intent

    result = run_or_exit(lambda: compile_intent(intent, render=False, catalog_dirs=catalog_dirs))
    _print_summary(result)
    out.print(f"{intent}: valid")


def _print_summary(result: Build) -> None:
    from rich.table import Table

    from fabricgen.units import format_ratio

    s = result.sizing
    table = Table(title=f"{result.loaded.intent.name}", show_header=True, header_style="bold")
    for column in ("network", "role", "model", "NOS", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for (network, role, model, nos), count in result.fabric.inventory():
        table.add_row(network, role, model, nos, f"{count:,}")
    out.print(table)
    out.print(
        f"{s.gpus:,} GPUs, {s.su_count} scalable unit(s) of {s.su_nodes} nodes, {len(result.fabric.links):,} links; "
        + (
            f"leaf {s.leaf_downlinks} down, no uplinks (rail-only: no spine tier)"
            if s.spineless
            else f"leaf {s.leaf_downlinks} down / {s.leaf_uplinks} up ({format_ratio(s.built_ratio)}), "
            + (
                f"{s.links_per_spine} link(s) to each of {s.pod_spines} spines of its pod; {s.pods} pods, {s.spines:,} spines, "
                f"{s.cores:,} cores; spine {s.spine_downlinks} down / {s.spine_uplinks} up ({format_ratio(s.spine_built_ratio)})"
                if s.tiers == 3
                else f"{s.links_per_spine} link(s) to each of {s.spines} spines"
            )
        )
        + (f"; {s.planes} planes" if s.planes > 1 else "")
    )
    for network, plan in result.compiled.plans.items():
        if network.value != "backend":
            out.print(
                f"{network.value}: {plan.leaves} leaves, {plan.spines} spines; leaf {plan.leaf_downlinks} server ports / "
                f"{plan.leaf_uplinks} up ({format_ratio(plan.built_ratio)})"
            )
    if result.compiled.oob is not None:
        o = result.compiled.oob
        out.print(
            f"oob: {o.switches} OOB switches for {o.management_ports} management ports; {o.console_servers} console servers for {o.console_ports} consoles"
        )
    for note in result.compiled.notes:
        out.print(f"note: {note}")


def releases_command(
    intent: Path | None = typer.Argument(None, help="An intent: its own catalog files are added (vendor SONiC flavours, models)."),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """The NOS releases fabricgen writes configs for, and from which release each feature it renders
    exists (the catalog's feature matrix), as Markdown tables with their sources."""
    from fabricgen.catalog import load_catalog
    from fabricgen.catalog.releases import support_table
    from fabricgen.intent import load_intent

    catalog = run_or_exit(lambda: load_intent(intent, catalog_dirs).catalog if intent else load_catalog())
    sys.stdout.write(support_table(catalog))
