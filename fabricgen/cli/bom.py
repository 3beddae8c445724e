"""`fabricgen bom compare`: a build's bill of materials against a reference list."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from fabricgen.basics.user_paths import INPUT_DIRECTORY, INPUT_FILE
from fabricgen.cli.common import (
    OutputFormat,
    ProblemFormat,
    checked,
    json_option,
    out,
    run_or_exit,
)

app = typer.Typer(no_args_is_help=True, help="Work with a build's bill of materials.", rich_markup_mode=None)


BUILD_DIR_ARG = typer.Argument(..., help="A build directory holding bom.csv, e.g. output/cisco-256-gpu.", callback=checked(INPUT_DIRECTORY))
REFERENCE_ARG = typer.Argument(..., help="The reference CSV: a header row with pid and quantity, optionally section.", callback=checked(INPUT_FILE))
FORMAT_OPTION = typer.Option(OutputFormat.text, "--format", help="text (a table), markdown (for a PR comment) or json.")


@app.command("compare")
def bom_compare_command(
    build_dir: Path = BUILD_DIR_ARG,
    reference: Path = REFERENCE_ARG,
    output_format: OutputFormat = FORMAT_OPTION,
    as_json: bool = json_option("as --format json"),
) -> None:
    """Compare BUILD_DIR/bom.csv with REFERENCE (a vendor quote, a published design), part by part.

    Prints each part's delta (build - reference) and its cause. Exit 0 when equal, 1 when they differ,
    2 on bad input.
    """
    from fabricgen.reports.bom_compare import (
        bom_table,
        compare_bom,
        render_json,
        render_markdown,
    )

    output_format = OutputFormat.json if as_json else output_format
    result = run_or_exit(lambda: compare_bom(build_dir, reference), ProblemFormat.json if output_format is OutputFormat.json else ProblemFormat.text)
    if output_format is OutputFormat.markdown:
        sys.stdout.write(render_markdown(result))
    elif output_format is OutputFormat.json:
        sys.stdout.write(render_json(result))
    else:
        # off a terminal, let the table take its natural width: wrapped cells would break grep
        wide = out if out.is_terminal else Console(highlight=False, width=10_000)
        wide.print(bom_table(result))
        for note in result.notes():
            out.print(f"note: {note}", markup=False)
        out.print(result.summary())
    raise typer.Exit(0 if result.equal else 1)
