"""The `fabricgen` command line: one module per command or command group.

The modules import the compiler, the drivers and the analysis only inside their commands, so
`fabricgen --version`, `--help` and shell completion load little more than typer.
"""

from __future__ import annotations

import sys

import typer

from fabricgen.cli import (
    analyze,
    bom,
    build,
    devices,
    diff,
    export,
    init,
    lab,
    schema,
    secrets,
    testplan,
)
from fabricgen.cli.common import out
from fabricgen.version import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile an AI-cluster intent (YAML) into switch configs, a cabling plan and a bill of materials.",
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"fabricgen {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool | None = typer.Option(None, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """fabricgen: AI-cluster intent -> validated fabric -> NX-OS and SONiC configs, cabling plan, BOM."""


app.command("init")(init.init_command)
app.command("build")(build.build_command)
app.command("validate")(build.validate_command)
app.command("schema")(schema.schema_command)
app.command("releases")(build.releases_command)
app.add_typer(bom.app, name="bom")
app.add_typer(secrets.app, name="secrets")
app.command("diff")(diff.diff_command)
app.add_typer(lab.app, name="lab")
app.command("analyze")(analyze.analyze_command)
app.command("push")(devices.push_command)
app.command("verify")(devices.verify_command)
app.add_typer(testplan.app, name="testplan")
app.add_typer(export.app, name="export")


def main() -> None:
    app(prog_name="fabricgen")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
