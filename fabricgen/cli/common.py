"""What every command shares: the console, the exit codes, the error gate and the common options.

Nothing here imports the compiler: `fabricgen --version` and `--help` load only this and typer.

Streams: a command's result goes to stdout (text, or one JSON document with `--json`); progress,
warnings and problems go to stderr, so `fabricgen build x.yaml --json | jq` always reads JSON.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from fabricgen.basics.errors import FabricgenError
from fabricgen.basics.user_paths import INPUT_DIRECTORY, PathError, Role, path_problems

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_INPUT = 2
CATALOG_DIR_HELP = "A directory the intent's catalog files may also come from (repeatable); by default they must lie in the intent's own directory."


def checked(role: Role) -> Callable[..., Any]:
    """The typer callback of a path option or argument: its value (one path, or each of a list)
    checked by `fabricgen.basics.user_paths` as `role` says, while the command line is read, before the
    command runs. A refusal names the option (`--output`) or argument (`BUILD_DIR`) and is printed
    as every problem is (`refuse`: exit 2, and the error document when the command line asks for
    JSON)."""

    def check_path_argument(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None:
            return None
        where = param.opts[0] if param.param_type_name == "option" else (param.name or "path").upper()
        paths = value if isinstance(value, (list, tuple)) else [value]
        problems = [problem for path in paths for problem in path_problems(path, role, where)]
        if problems:
            refuse(PathError(problems), problem_format(ctx.find_root().meta.get("fabricgen.arguments", ())))
        return value

    check_path_argument.role = role  # type: ignore[attr-defined]  # tests/test_cli_paths.py finds every checked argument by it
    return check_path_argument


BUILD_DIR_ARG = typer.Argument(..., help="A build directory written by `fabricgen build`.", callback=checked(INPUT_DIRECTORY))
TIMEOUT_OPTION = typer.Option(120.0, "--timeout", help="Seconds to wait for the control plane to converge.")
QUIET_OPTION = typer.Option(False, "--quiet", "-q", help="No progress on stderr.")


class Network(str, Enum):
    """The routed fabrics a build can hold."""

    backend = "backend"
    frontend = "frontend"
    storage = "storage"


NETWORK_CHOICE_OPTION = typer.Option(Network.backend, "--network", help="Which routed fabric of the build.")
# the same option as a free string (`network: str`), as commands written before the choices have it


class OutputFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


class ProblemFormat(str, Enum):
    """How `validate` and `build` report: text, one JSON document, or GitHub Actions annotations."""

    text = "text"
    json = "json"
    github = "github"


def json_option(shape: str) -> Any:
    """`--json`: the result as one JSON document on stdout; `shape` names its documented model.
    Any, as typer.Option declares it: the default of a parameter typed as the option's value."""
    return typer.Option(False, "--json", help=f"Print the result as one JSON document on stdout (shape: {shape}); progress and problems stay on stderr.")


def problem_format(args: Iterable[str]) -> ProblemFormat:
    """How the command line `args` asks for problems to be reported, read before its options are
    parsed: --json, --format json / --format=json, --format github / --format=github, else text."""
    args = list(args or ())
    if "--json" in args:
        return ProblemFormat.json
    for a, b in itertools.pairwise(["", *args]):
        if b in ("--format=json", "--format=github") or (a == "--format" and b in ("json", "github")):
            return ProblemFormat(b.removeprefix("--format="))
    return ProblemFormat.text


def asks_for_json(args: Iterable[str]) -> bool:
    """Whether a command line asks for JSON: --json, --format json or --format=json."""
    return problem_format(args) is ProblemFormat.json


def run_or_exit(action, problems: ProblemFormat | str = ProblemFormat.text):
    """The action's result; a FabricgenError printed as fabricgen prints problems (one a line, on
    stderr) and exit 2, an interrupt exit 130. `problems` json: also the error document on stdout;
    github: also one `::error` workflow command per problem on stdout."""
    try:
        return action()
    except FabricgenError as exc:
        refuse(exc, problems)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        raise typer.Exit(130) from None


def refuse(exc: FabricgenError, problems: ProblemFormat | str = ProblemFormat.text):
    """Report `exc` (see `run_or_exit`) and exit 2."""
    # plain text, never wrapped: one problem per line stays greppable as file:line: field
    sys.stderr.write(exc.report() + "\n")
    if problems == ProblemFormat.json:
        print_json(exc.json_document())
    elif problems == ProblemFormat.github:
        sys.stdout.write(exc.github_annotations())
    raise typer.Exit(EXIT_INPUT) from None


def print_json(document) -> None:
    """One JSON document on stdout: a pydantic model (its documented shape) or plain data."""
    if hasattr(document, "model_dump"):
        document = document.model_dump(mode="json")
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_report(path: Path, data: bytes) -> None:
    """Write a report file a command was asked for (--report, --json-report FILE) atomically, its
    directory created first; exit 2 when it cannot be written."""
    from fabricgen.build.output import write_file_atomic

    def write() -> None:
        _make_directory(path.parent)
        write_file_atomic(path, data)

    run_or_exit(write)


def _make_directory(directory: Path) -> None:
    """`mkdir -p directory`, or OutputError saying why not."""
    from fabricgen.basics.errors import OutputError, Problem

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(Problem(f"cannot create the directory: {exc.strerror}", file=str(directory), hint="choose a path you can write")) from None
