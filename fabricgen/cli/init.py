"""`fabricgen init`: write a commented starter intent that builds."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fabricgen.basics.user_paths import output_file
from fabricgen.cli.common import checked, out, run_or_exit
from fabricgen.nos import registry  # the NOS packages only, light: the help names them

# intent.model's MAX_GPUS (a test keeps them equal): the model is not imported before a command runs
MAX_GPUS = 262_144
INTENT_FILE = output_file("the intent", "cluster.yaml")

if TYPE_CHECKING:
    from fabricgen.basics.errors import Problem
    from fabricgen.catalog import Catalog
    from fabricgen.intent.template import Starter


class RoutingChoice(str, Enum):
    ebgp = "ebgp"
    vxlan_evpn = "vxlan-evpn"


class DesignChoice(str, Enum):
    rail_optimized = "rail-optimized"
    rail_only = "rail-only"
    top_of_rack = "top-of-rack"


def init_command(
    gpus: int | None = typer.Option(None, "--gpus", min=1, max=MAX_GPUS, help="Total GPU count, a whole number of GPU nodes."),
    gpu_node: str | None = typer.Option(None, "--gpu-node", metavar="MODEL", help="GPU node model from the catalog (default DGX-H100)."),
    leaf: str | None = typer.Option(
        None,
        "--leaf",
        metavar="MODEL",
        help="Backend leaf switch model (default: N9K-C9364D-GX2A where the NOS runs on it; for a NOS that needs its platform's port map, a model with one).",
    ),
    spine: str | None = typer.Option(None, "--spine", metavar="MODEL", help="Backend spine switch model (default: the leaf's)."),
    nos: str | None = typer.Option(
        None, "--nos", metavar="NOS", help=f"Switch operating system: {', '.join(registry.names())} (default {registry.default_name()})."
    ),
    nos_release: str | None = typer.Option(None, "--nos-release", metavar="RELEASE", help="NOS release, e.g. 10.5(3)F or master (default: the catalog's)."),
    routing: RoutingChoice | None = typer.Option(None, "--routing", help="ebgp (routed) or vxlan-evpn (default ebgp)."),
    design: DesignChoice | None = typer.Option(None, "--design", help="rail-optimized, rail-only or top-of-rack (default rail-optimized)."),
    name: str | None = typer.Option(None, "--name", help="Fabric name (default: the file's name, or cluster-<gpus>-gpu)."),
    output: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="The intent file to write (default <name>.yaml).", callback=checked(INTENT_FILE)
    ),
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists."),
    interactive: bool | None = typer.Option(
        None, "--interactive/--no-interactive", help="Ask for what the options leave out (default: when standard input is a terminal)."
    ),
) -> None:
    """Write a commented intent that builds: GPU count, node and switch models, NOS, routing, design.

    On a terminal, asks for what the options leave out (with the catalog's choices); otherwise
    takes the defaults and needs --gpus. The intent is compiled before it is written: a
    combination that does not build is refused and nothing is written. Then run
    `fabricgen build FILE`.
    """
    from fabricgen.basics.errors import Problem
    from fabricgen.basics.trust import printable
    from fabricgen.basics.user_paths import check_path
    from fabricgen.catalog import load_catalog
    from fabricgen.intent.schema import schema_file
    from fabricgen.intent.template import (
        check_starter,
        render_starter,
        schema_for,
        schema_reference,
    )

    catalog = run_or_exit(load_catalog)
    ask = sys.stdin.isatty() if interactive is None else interactive
    given = {
        "gpus": gpus,
        "gpu_node": gpu_node,
        "leaf": leaf,
        "spine": spine,
        "nos": nos,
        "nos_release": nos_release,
        "routing": routing.value if routing else None,
        "design": design.value if design else None,
    }
    if ask:
        starter, output = _ask(given, name, output, catalog)
    else:
        if gpus is None:
            run_or_exit(lambda: _refuse(Problem("how many GPUs?", hint="give --gpus N, or run fabricgen init on a terminal to be asked")))
        starter = _defaults(given, name, output, catalog)
    if output is None:
        output = Path(f"{starter.name}.yaml")
    run_or_exit(lambda: _refuse(*check_starter(starter, catalog)))
    # the path asked for on the terminal, or the default from the name, as -o is checked
    output = run_or_exit(lambda: check_path(output, INTENT_FILE, "--output"))
    if output.is_dir():
        run_or_exit(lambda: _refuse(Problem("is a directory", file=str(output), hint="name the intent file to write, e.g. -o cluster.yaml")))
    if output.exists() and not force:
        run_or_exit(lambda: _refuse(Problem("already exists", file=str(output), hint="pass --force to replace it, or choose another file with -o")))
    installed = schema_file()
    schema = schema_for(output, installed)
    copy = run_or_exit(lambda: _schema_copy(schema, installed))
    text = render_starter(starter, catalog, schema_reference(output, schema), output.name)
    run_or_exit(lambda: _check_builds(text))
    if copy is not None:
        run_or_exit(lambda: _write_schema(schema, copy))
        out.print(f"wrote {printable(schema)}: the schema the intent's modeline points at (commit it with the intent)", markup=False)
    run_or_exit(lambda: _write(output, text.encode(), force))
    shown = printable(output)  # the user's own path, but still no escape sequence reaches the terminal raw
    out.print(f"wrote {shown}: {starter.gpus:,} GPUs, {starter.design} backend of {starter.leaf} leaves ({starter.nos}, {starter.routing})", markup=False)
    out.print(f"next: fabricgen build {shown}", markup=False)


def _refuse(*problems: Problem) -> None:
    from fabricgen.basics.errors import InitError, raise_if

    raise_if(problems, InitError)


def _defaults(given: dict, name: str | None, output: Path | None, catalog: Catalog) -> Starter:
    from fabricgen.intent.template import DEFAULT_GPU_NODE, Starter, default_switch

    nos = given["nos"] or registry.default_name()
    leaf = given["leaf"] or default_switch(catalog, nos)
    return Starter(
        gpus=given["gpus"],
        name=name or _name_from(output) or _default_name(given["gpus"]),
        gpu_node=given["gpu_node"] or DEFAULT_GPU_NODE,
        leaf=leaf,
        spine=given["spine"] or leaf,
        nos=nos,
        routing=given["routing"] or "ebgp",
        design=given["design"] or "rail-optimized",
        nos_release=given["nos_release"],
    )


def _ask(given: dict, name: str | None, output: Path | None, catalog: Catalog) -> tuple[Starter, Path | None]:
    """Ask, on the terminal, for each choice the options left out; defaults in brackets."""
    from fabricgen.intent.template import (
        DEFAULT_GPU_NODE,
        DESIGNS,
        ROUTINGS,
        Starter,
        default_switch,
        gpu_node_choices,
        switch_choices,
    )

    gpus = given["gpus"] if given["gpus"] is not None else _ask_number("GPUs", 256)
    gpu_node = given["gpu_node"] or _ask_choice("GPU node model", gpu_node_choices(catalog), DEFAULT_GPU_NODE)
    design = given["design"] or _ask_choice("Backend design", DESIGNS, "rail-optimized")
    nos = given["nos"] or _ask_choice("Switch NOS", list(registry.names()), registry.default_name())
    models = switch_choices(catalog, nos)
    leaf = given["leaf"] or _ask_choice("Leaf switch model", models, default_switch(catalog, nos))
    spine = given["spine"] or _ask_choice("Spine switch model", models, leaf)
    routing = given["routing"] or _ask_choice("Routing", ROUTINGS, "ebgp")
    if name is None:
        name = _ask_text("Fabric name", _name_from(output) or _default_name(gpus))
    if output is None:
        output = Path(_ask_text("Write to", f"{name}.yaml"))
    starter = Starter(gpus, name, gpu_node, leaf, spine, nos, routing, design, given["nos_release"])
    return starter, output


def _default_name(gpus: int) -> str:
    from fabricgen.intent.template import default_name

    return default_name(gpus)


def _name_from(output: Path | None) -> str | None:
    """The intent file's name as the fabric name, where it is a valid one (as the loader takes it)."""
    from fabricgen.intent.model import NAME_PATTERN

    if output is not None and NAME_PATTERN.match(output.stem):
        return output.stem
    return None


def _ask_number(text: str, default: int, most: int = MAX_GPUS) -> int:
    def whole(value: str) -> int:
        # ASCII digits only: "²" passes str.isdigit() but int() refuses it (a traceback, not a retry)
        value = value.strip()
        if not (value.isascii() and value.isdigit() and len(value) <= len(str(most))) or not 1 <= int(value) <= most:
            from fabricgen.basics.trust import printable

            raise typer.BadParameter(f"{printable(value)!r} is not a whole number from 1 to {most:,}")
        return int(value)

    return typer.prompt(text, default=str(default), value_proc=whole)


def _ask_choice(text: str, choices: Sequence[str], default: str) -> str:
    def one_of(value: str) -> str:
        value = value.strip()
        if value not in choices:
            raise typer.BadParameter(f"choose one of {', '.join(choices)}")
        return value

    return typer.prompt(f"{text} ({', '.join(choices)})", default=default, value_proc=one_of)


def _ask_text(text: str, default: str) -> str:
    return typer.prompt(text, default=default, value_proc=_stripped)


def _stripped(value: str) -> str:
    return value.strip()


def _check_builds(text: str) -> None:
    """Compile the intent text in memory (every check, no rendering); a problem it finds is
    reported against the option that set the field, or as it is, and nothing is written."""
    from fabricgen.basics.errors import FabricgenError, InitError
    from fabricgen.compiler.pipeline import compile_loaded
    from fabricgen.intent import load_intent_text
    from fabricgen.intent.template import option_of

    try:
        compile_loaded(load_intent_text(text), render=False)
    except FabricgenError as exc:
        raise InitError([_for_init(problem, option_of(problem.field)) for problem in exc.problems]) from None


def _for_init(problem: Problem, option: str | None) -> Problem:
    from dataclasses import replace

    from fabricgen.basics.errors import dotted

    field = dotted(problem.field)
    where = f"{option} ({field})" if option and field else option or field or problem.device or ""
    message = f"{where}: {problem.message}" if where else problem.message
    return replace(problem, message=f"the intent would not build: {message}", field=(), file=None, line=None, device=None, port=None)


def _schema_copy(schema: Path, installed: Path) -> bytes | None:
    """The bytes to write at `schema` (the copy of the installed schema the modeline points at),
    or None when it is the installed file itself or already holds them. Refused: a `.fabricgen`
    or schema file that is a link or not what it should be (a directory, a file in its place), so
    nothing is written through a link or over something else."""
    from fabricgen.basics.errors import InitError, Problem

    if schema == installed.resolve():
        return None
    try:
        data = installed.read_bytes()
    except OSError as exc:
        raise InitError(Problem(f"cannot read the installed intent schema: {exc.strerror}", file=str(installed), hint="reinstall fabricgen")) from None
    for path, kind in ((schema.parent, "a directory"), (schema, "a file")):
        if path.is_symlink() or (path.exists() and not (path.is_dir() if kind == "a directory" else path.is_file())):
            _refuse(
                Problem(
                    f"should be {kind} holding the intent schema, and is not (or is a link)",
                    file=str(path),
                    hint="move it away; init writes the schema there for the modeline",
                )
            )
    if schema.is_file() and schema.read_bytes() == data:
        return None
    return data


def _write_schema(schema: Path, data: bytes) -> None:
    from fabricgen.basics.errors import OutputError, Problem

    try:
        schema.parent.mkdir(exist_ok=True)
    except OSError as exc:
        raise OutputError(Problem(f"cannot create the directory: {exc.strerror}", file=str(schema.parent), hint="choose a path you can write")) from None
    _write(schema, data, True)


def _write(path: Path, data: bytes, force: bool) -> None:
    from fabricgen.build.output import write_file_atomic

    write_file_atomic(path, data, replace=force)
