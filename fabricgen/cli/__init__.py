"""The `fabricgen` command line: one module per command or command group.

The modules import the compiler, the drivers and the analysis only inside their commands, so
`fabricgen --version`, `--help` and shell completion load little more than typer.
"""

from __future__ import annotations

import atexit
import gc

import typer
from typer.completion import Shells, install_callback, show_callback
from typer.core import TyperGroup

from fabricgen.basics.version import __version__
from fabricgen.cli import (
    analyze,
    bom,
    build,
    catalog,
    devices,
    diff,
    export,
    init,
    lab,
    schema,
    secrets,
    testplan,
)
from fabricgen.cli.common import asks_for_json, out, print_json


class _Commands(TyperGroup):
    """The command group, which also answers a command-line mistake (an unknown option, a value
    not among an option's choices) with the JSON error document when the command line asks for
    JSON, as every other refusal of a `--json` command is answered; typer then prints its usage
    message on stderr and exits 2 as always."""

    def make_context(self, info_name, args, parent=None, **extra):
        arguments = list(args)
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except Exception as exc:
            _usage_json(exc, arguments)
            raise
        ctx.meta["fabricgen.arguments"] = arguments
        return ctx

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except Exception as exc:
            _usage_json(exc, ctx.meta.get("fabricgen.arguments", ()))
            raise

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, _shell_asked_for(self, ctx, args))


# The shells typer writes completion scripts for (typer's Shells: bash, zsh, fish, powershell, pwsh).
SHELLS = tuple(shell.value for shell in Shells)
COMPLETION_OPTIONS = {"--show-completion": show_callback, "--install-completion": install_callback}


def _shell_asked_for(group: TyperGroup, ctx, args: list[str]) -> list[str]:
    """`args` without the shell named after --show-completion or --install-completion (`zsh` in
    `fabricgen --show-completion zsh`, or `--show-completion=zsh`), which the option's callback
    then hands to typer's own as the shell to write for. typer declares both options as flags
    where shellingham is installed (typer.completion's placeholder functions) and takes the shell
    from the process that started fabricgen, so the word after the flag was otherwise read as a
    command: `--show-completion zsh` printed bash's script from a bash prompt. Only the group's
    own options are looked at (those before the first word that is not an option): the command's
    arguments are never taken."""
    args = list(args)
    for index, word in enumerate(args):
        if not word.startswith("-"):
            break
        option, equals, value = word.partition("=")
        if option not in COMPLETION_OPTIONS:
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        if equals:
            shell = value
        elif following is not None and not following.startswith("-") and following not in group.list_commands(ctx):
            shell = args.pop(index + 1)  # a shell, or a word that is neither a shell nor a command: refused
        else:
            break
        if shell not in SHELLS:
            raise typer.BadParameter(f"{shell!r} is not a shell fabricgen writes completion for: choose one of {', '.join(SHELLS)}", ctx=ctx, param_hint=option)
        args[index] = option
        ctx.meta["fabricgen.shell"] = shell
        break
    for param in group.params:
        for option, callback in COMPLETION_OPTIONS.items():
            # typer wraps the callback it declares (functools.wraps: __wrapped__ is its own)
            if option in getattr(param, "opts", ()) and getattr(param.callback, "__wrapped__", None) is callback:
                param.callback = _for_the_shell_asked(callback)
                param.help = f"{getattr(param, 'help', '').rstrip('.')}; or for the shell named after it: {', '.join(SHELLS)}."  # type: ignore[attr-defined]  # typer's options have one
    return args


def _for_the_shell_asked(callback):
    """typer's completion callback given the shell named on the command line, if one was: a
    string value is the shell it writes for (typer.completion show_callback, install_callback)."""

    def completion_for_shell(ctx, param, value):
        shell = ctx.meta.get("fabricgen.shell")
        return callback(ctx, param, shell if value and shell else value)

    return completion_for_shell


def _usage_json(exc: Exception, arguments) -> None:
    """The usage error `exc` as the JSON error document on stdout, if `arguments` ask for JSON.
    A usage error is told by what click's UsageError carries (exit code 2, its context): typer
    0.29 raises its vendored copy of click's classes, earlier releases click's own, and neither
    is a public name of typer."""
    if getattr(exc, "exit_code", None) != 2 or not hasattr(exc, "ctx") or not hasattr(exc, "format_message") or not asks_for_json(arguments):
        return
    from fabricgen.basics.errors import Problem, error_document

    command = exc.ctx.command_path if exc.ctx is not None else "fabricgen"
    print_json(error_document("usage", [Problem(exc.format_message(), hint=f"see {command} --help").as_json()]))


app = typer.Typer(
    cls=_Commands,
    add_completion=True,
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
app.add_typer(catalog.app, name="catalog")
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
    """The console script and `python -m fabricgen`. When the process ends, its last collection
    would walk whatever a command built (2 s of CPU for a 131,072-GPU build, validate and diff as
    much) to free what the exit frees anyway: the objects are frozen first (atexit runs before
    that collection). Here and not in the commands: an in-process caller (CliRunner, the suite)
    goes on with its collector as it was."""
    atexit.register(gc.freeze)
    app(prog_name="fabricgen")


if __name__ == "__main__":  # pragma: no cover
    main()  # exits itself: the app runs in click's standalone mode, which ends with sys.exit
