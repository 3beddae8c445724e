"""`fabricgen diff`: what changes between two builds, intents or git revisions of an intent."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fabricgen.basics.user_paths import DIFF_SIDE, INPUT_DIRECTORY
from fabricgen.cli.common import (
    CATALOG_DIR_HELP,
    QUIET_OPTION,
    OutputFormat,
    ProblemFormat,
    checked,
    json_option,
    out,
    run_or_exit,
)
from fabricgen.cli.progress import Phases

DIFF_OLD_ARG = typer.Argument(
    ...,
    help="The old side: a build directory, an intent YAML file, or intent.yaml@REV (a git revision, e.g. @HEAD~1, @origin/main).",
    callback=checked(DIFF_SIDE),
)
DIFF_NEW_ARG = typer.Argument(..., help="The new side, the same kinds as OLD.", callback=checked(DIFF_SIDE))
DIFF_FORMAT_OPTION = typer.Option(OutputFormat.text, "--format", help="text (a terminal), markdown (a PR comment) or json.")
DIFF_MAX_BYTES_OPTION = typer.Option(
    None, "--max-bytes", min=4_000, help="markdown: cap the comment at this many bytes (default: 60,000; GitHub allows 65,536 characters)."
)
CATALOG_DIRS_OPTION = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP, callback=checked(INPUT_DIRECTORY))


def diff_command(
    old: str = DIFF_OLD_ARG,
    new: str = DIFF_NEW_ARG,
    output_format: OutputFormat = DIFF_FORMAT_OPTION,
    max_bytes: int | None = DIFF_MAX_BYTES_OPTION,
    catalog_dirs: list[Path] = CATALOG_DIRS_OPTION,
    stat: bool = typer.Option(False, "--stat", help="text, markdown: the changed lines per file (as `git diff --stat`) instead of the per-device diffs."),
    as_json: bool = json_option("as --format json"),
    quiet: bool = QUIET_OPTION,
) -> None:
    """What changes between OLD and NEW: devices, cables, BGP neighbors, addresses, QoS values,
    settings (an MTU, a speed, a threshold: config lines that differ only in their values) and
    BOM by PID, then a unified diff of every rendered file per device (or, with --stat, the
    changed lines per file).

    An intent side is built into a temporary directory; intent.yaml@REV builds the repository
    tree at REV (an intent that does not exist there is an empty side). Exit 0 when both render
    identical files, 1 when something changed, 2 on error.
    """
    from fabricgen.diff import diff_builds
    from fabricgen.diff import render as diff_render

    output_format = OutputFormat.json if as_json else output_format
    problems = ProblemFormat.json if output_format is OutputFormat.json else ProblemFormat.text
    with Phases("diff", quiet=quiet, order=("old side", "new side", "compare")) as progress:
        result = run_or_exit(lambda: diff_builds(old, new, catalog_dirs, progress.start), problems)
    if output_format is OutputFormat.markdown:
        sys.stdout.write(diff_render.render_markdown(result, max_bytes or diff_render.DEFAULT_MAX_BYTES, stat))
    elif output_format is OutputFormat.json:
        sys.stdout.write(diff_render.render_json(result))
    elif out.is_terminal:
        for line, style in diff_render.render_text(result, stat):
            out.print(line, style=style, markup=False)
    else:
        sys.stdout.write("".join(line + "\n" for line, _ in diff_render.render_text(result, stat)))
    raise typer.Exit(1 if result.changed else 0)
