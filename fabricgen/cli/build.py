"""`fabricgen build`, `validate` and `releases`: compile an intent, check it, list the releases."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabricgen.basics.trust import printable
from fabricgen.basics.user_paths import INPUT_DIRECTORY, INPUT_FILE, OUTPUT_DIRECTORY
from fabricgen.cli.common import (
    CATALOG_DIR_HELP,
    ProblemFormat,
    checked,
    json_option,
    out,
    print_json,
    run_or_exit,
)
from fabricgen.cli.progress import Phases

if TYPE_CHECKING:
    from fabricgen.compiler.pipeline import Build

INTENT_ARG = typer.Argument(..., help="The intent YAML file, e.g. intents/cisco-256-gpu.yaml.", callback=checked(INPUT_FILE))
OUTPUT_OPTION = typer.Option(
    None,
    "--output",
    "-o",
    help="Build directory (default: output/<fabric name>). Replaced atomically; only an earlier build is ever replaced.",
    callback=checked(OUTPUT_DIRECTORY),
)
CATALOG_DIRS_OPTION = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP, callback=checked(INPUT_DIRECTORY))
FORMAT_OPTION = typer.Option(
    ProblemFormat.text,
    "--format",
    help="text; json (as --json); github: problems also as GitHub Actions annotations (::error file=...,line=...) on stdout, one per problem, and the notes as ::warning.",
)
JSON_OPTION = json_option("fabricgen/reports/build_summary.py BuildSummary; problems: fabricgen/basics/errors.py ErrorDocument")


def build_command(
    intent: Path = INTENT_ARG,
    output: Path | None = OUTPUT_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the destination (no summary, no progress)."),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=0, help="Render the devices on this many processes (0: one per available CPU). The files are the same for any value."
    ),
    catalog_dirs: list[Path] = CATALOG_DIRS_OPTION,
    output_format: ProblemFormat = FORMAT_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Compile INTENT and write every config and report, all or nothing.

    Writes configs/ (NX-OS <device>.cfg, SONiC <device>/config_db.json + frr.conf), hosts/ (per
    server: nic-qos.sh or nic-qos.txt, netplan.yaml), cabling.csv/.md, bom.csv/.md, ip-plan.csv,
    topology.json, summary.md and manifest.json.
    """
    from fabricgen.compiler.pipeline import PHASES, build

    problems = ProblemFormat.json if as_json else output_format
    started = time.perf_counter()
    with Phases("build", quiet=quiet, order=PHASES) as progress:
        progress.start(PHASES[0])
        result, destination = run_or_exit(lambda: build(intent, output, jobs, catalog_dirs, on_phase=progress.finished), problems)
    if problems is ProblemFormat.json:
        from fabricgen.reports.build_summary import build_summary

        print_json(build_summary(result, intent, destination))
        return
    if problems is ProblemFormat.github:
        sys.stdout.write(note_annotations(result, intent))
    if quiet:
        out.print(str(destination), markup=False)
    else:
        _print_summary(result)
        total_bytes = sum(len(data) for data in result.files.values())
        out.print(
            f"wrote {len(result.files):,} files ({total_bytes / 1e6:,.1f} MB) to {printable(destination)} in {time.perf_counter() - started:.2f} s",
            markup=False,
        )


def validate_command(
    intent: Path = INTENT_ARG,
    catalog_dirs: list[Path] = CATALOG_DIRS_OPTION,
    output_format: ProblemFormat = FORMAT_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
) -> None:
    """Run every check on INTENT (schema, catalog, design, addressing, fabric invariants); write nothing."""
    from fabricgen.compiler.pipeline import PHASES, compile_intent

    problems = ProblemFormat.json if as_json else output_format
    checked = PHASES[: PHASES.index("device configs") + 1]
    with Phases("validate", quiet=quiet, order=checked) as progress:
        progress.start(checked[0])
        result = run_or_exit(lambda: compile_intent(intent, render=False, catalog_dirs=catalog_dirs, on_phase=progress.finished), problems)
    if problems is ProblemFormat.json:
        from fabricgen.reports.build_summary import build_summary

        print_json(build_summary(result, intent))
        return
    if problems is ProblemFormat.github:
        sys.stdout.write(note_annotations(result, intent))
    _print_summary(result)
    out.print(f"{printable(intent)}: valid", markup=False)


def note_annotations(result: Build, intent: Path) -> str:
    """The build's notes as GitHub Actions `::warning` workflow commands, one a line, on the intent
    file: at the line of the intent's top-level key a note begins with (`backend: 12 leaves ...`,
    `oob: ...`), else on the file as a whole (no line). Escaped by `github_command`: a note can
    carry names from the intent."""
    from fabricgen.basics.errors import github_command

    source = result.loaded.source
    keys = source.data if isinstance(source.data, dict) else {}
    lines = []
    for note in result.compiled.notes:
        first = NOTE_SECTION.match(note)
        line = source.line_of((first.group(1),)) if first and first.group(1) in keys else None
        lines.append(github_command("warning", note, file=str(intent), line=line, title="fabricgen note") + "\n")
    return "".join(lines)


NOTE_SECTION = re.compile(r"([a-z_]+)[: ]")  # the word a note begins with: an intent section where it is one


def _print_summary(result: Build) -> None:
    from rich.table import Table

    from fabricgen.basics.units import format_ratio

    s = result.sizing
    table = Table(title=f"{result.loaded.intent.name}", show_header=True, header_style="bold")
    for column in ("network", "role", "model", "NOS", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for (network, role, model, nos), count in result.fabric.inventory():
        table.add_row(network, role, model, nos, f"{count:,}")
    out.print(table)
    out.print(
        f"{s.gpus:,} GPUs, {s.su_count:,} scalable unit(s) of {s.su_nodes:,} nodes, {len(result.fabric.links):,} links; "
        + (
            f"leaf {s.leaf_downlinks} down, no uplinks ({s.design}: no spine tier)" + (f", {s.peer_links} peer links between the pair" if s.peer_links else "")
            if s.spineless
            else f"leaf {s.leaf_downlinks} down / {s.leaf_uplinks} up ({format_ratio(s.built_ratio)}), "
            + (
                f"{s.links_per_spine} link(s) to each of {s.pod_spines:,} spines of its pod; {s.pods:,} pods, {s.spines:,} spines, "
                f"{s.cores:,} cores; spine {s.spine_downlinks} down / {s.spine_uplinks} up ({format_ratio(s.spine_built_ratio)})"
                if s.tiers == 3 and s.spine_built_ratio is not None  # 3-tier sizing always sets the ratio
                else f"{s.links_per_spine} link(s) to each of {s.spines:,} spines"
            )
        )
        + (f"; {s.planes} planes" if s.planes > 1 else ""),
        markup=False,
    )
    for network, plan in result.compiled.plans.items():
        if network.value != "backend":
            out.print(
                f"{network.value}: {plan.leaves:,} leaves, {plan.spines:,} spines; leaf {plan.leaf_downlinks} server ports / "
                f"{plan.leaf_uplinks} up ({format_ratio(plan.built_ratio)})"
                + (f", {plan.peer_links} peer links between the collapsed pair" if plan.peer_links else ""),
                markup=False,
            )
    if result.compiled.oob is not None:
        o = result.compiled.oob
        out.print(
            f"oob: {o.switches:,} OOB switches for {o.management_ports:,} management ports; "
            f"{o.console_servers:,} console servers for {o.console_ports:,} consoles",
            markup=False,
        )
    for note in result.compiled.notes:
        out.print(f"note: {note}", markup=False)


RELEASES_INTENT_ARG = typer.Argument(None, help="An intent: its own catalog files are added (vendor SONiC flavours, models).", callback=checked(INPUT_FILE))


def releases_command(
    intent: Path | None = RELEASES_INTENT_ARG,
    catalog_dirs: list[Path] = CATALOG_DIRS_OPTION,
    as_json: bool = json_option("fabricgen/catalog/releases.py ReleaseSupport; instead of the Markdown tables"),
) -> None:
    """The NOS releases fabricgen writes configs for, and from which release each feature it renders
    exists (the catalog's feature matrix), as Markdown tables with their sources."""
    from fabricgen.catalog import load_catalog
    from fabricgen.catalog.releases import support_document, support_table
    from fabricgen.intent import load_intent

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    catalog = run_or_exit(lambda: load_intent(intent, catalog_dirs).catalog if intent else load_catalog(), problems)
    if as_json:
        print_json(support_document(catalog))
    else:
        sys.stdout.write(support_table(catalog))
