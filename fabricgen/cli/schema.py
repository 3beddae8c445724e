"""`fabricgen schema`: the intent's JSON Schema (or with --catalog a catalog file's), for editors and
for checking intents and catalogs elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fabricgen.basics.user_paths import output_file
from fabricgen.cli.common import checked, out, write_report


def schema_command(
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        metavar="FILE",
        help="Write the schema to FILE (atomically) instead of printing it.",
        callback=checked(output_file("the schema", "intent.schema.json")),
    ),
    path: bool = typer.Option(False, "--path", help="Print where the installed copy of the schema is, for an editor's yaml.schemas setting."),
    catalog: bool = typer.Option(False, "--catalog", help="The schema of a catalog file (switches, nodes, transceivers, ... and NOS flavours) instead."),
) -> None:
    """Print the JSON Schema (draft 2020-12) of an intent file, or with --catalog of a catalog file.

    Editors with yaml-language-server (VS Code's YAML extension, Neovim, ...) use it for
    completion, hover help and checks as you type; see docs/editor.md. The schema says what each
    field may hold; rules across fields (overlapping pools, catalog models, design settings) are
    checked by `fabricgen validate`. The catalog's likewise: a PID defined twice, a transceiver's
    cable missing, are the loader's to find.
    """
    from fabricgen.basics.trust import printable

    if catalog:
        from fabricgen.catalog.schema import schema_file, schema_text
    else:
        from fabricgen.intent.schema import schema_file, schema_text

    if path:
        out.print(printable(schema_file()), markup=False)
        return
    text = schema_text()
    if output is None:
        sys.stdout.write(text)
    else:
        write_report(output, text.encode())
