"""`fabricgen catalog list` and `catalog show MODEL`: what the hardware catalog holds."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from fabricgen.basics.user_paths import INPUT_FILE
from fabricgen.cli.common import ProblemFormat, checked, json_option, out, print_json, run_or_exit

app = typer.Typer(no_args_is_help=True, help="What the hardware catalog holds: its models and where each is defined.", rich_markup_mode=None)


class Kind(str, Enum):
    """The catalog's PID-keyed sections (fabricgen.catalog.listing.KINDS; a test keeps them equal),
    spelled out so `--help` loads no catalog."""

    switches = "switches"
    transceivers = "transceivers"
    cables = "cables"
    nodes = "nodes"
    console_servers = "console_servers"
    modules = "modules"
    appliances = "appliances"


CATALOG_FILES_OPTION = typer.Option(
    [], "--catalog", metavar="FILE", help="A catalog file of your own, added to the built-in ones (repeatable).", callback=checked(INPUT_FILE)
)


@app.command("list")
def list_command(
    kinds: list[Kind] = typer.Option([], "--kind", help="Only entries of this kind (repeatable; default: every kind)."),
    user_files: list[Path] = CATALOG_FILES_OPTION,
    as_json: bool = json_option("fabricgen/catalog/listing.py CatalogListing"),
) -> None:
    """A table of the catalog's models: PID, kind, key facts (ports at each speed for a switch, GPUs
    and NICs for a node, ...), description and the file that defines it."""
    from fabricgen.catalog import load_catalog
    from fabricgen.catalog.listing import KINDS, catalog_files, listing

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    catalog = run_or_exit(lambda: load_catalog(user_files), problems)
    chosen = [kind.value for kind in kinds] or list(KINDS)
    found = listing(catalog, catalog_files(user_files), [kind for kind in KINDS if kind in chosen])
    if as_json:
        print_json(found)
        return
    table = Table("PID", "kind", "facts", "description", "defined in", box=None, header_style="bold")
    for row in found.entries:
        table.add_row(row.pid, row.kind, row.facts, row.description, f"{row.source.file}:{row.source.line}")
    # off a terminal, let the table take its natural width: wrapped cells would break grep
    (out if out.is_terminal else Console(highlight=False, width=10_000, markup=False)).print(table)


@app.command("show")
def show_command(
    model: str = typer.Argument(..., metavar="MODEL", help="The PID of a switch, node, transceiver, cable, ... e.g. N9K-C9364D-GX2A."),
    user_files: list[Path] = CATALOG_FILES_OPTION,
    as_json: bool = json_option("fabricgen/catalog/listing.py CatalogEntry"),
) -> None:
    """One catalog entry in full (YAML, every field with its value, defaults included), and the file
    and line that define it: a built-in file or one of yours. An unknown MODEL exits 2 with the
    model it most likely means."""
    import yaml

    from fabricgen.basics.trust import printable
    from fabricgen.catalog import load_catalog
    from fabricgen.catalog.listing import catalog_files, entry

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    catalog = run_or_exit(lambda: load_catalog(user_files), problems)
    found = run_or_exit(lambda: entry(catalog, catalog_files(user_files), model), problems)
    if as_json:
        print_json(found)
        return
    origin = "built-in" if found.source.builtin else "your file"
    sys.stdout.write(f"# {found.pid} ({found.kind}), {origin} {printable(found.source.file)}:{found.source.line}\n")
    sys.stdout.write(yaml.safe_dump({found.pid: found.entry}, sort_keys=False, allow_unicode=True, width=120))
