"""Every path a user gives on the command line is checked before any use (issue 30, item 2):
a name longer than NAME_MAX, a path longer than PATH_MAX, a symbolic-link loop, a file where a
directory must be (`FILE/x.yaml`), a FIFO and a directory where a file is read or written (or a
file where a directory is) are each a located exit 2: one short line naming the option or
argument, no traceback, nothing written.

The shapes below are every path option and argument of every command. A shape whose command
would reach devices or boot a lab if the path were taken names a build directory that does not
exist, so the old code stops at reading the build instead (and the test still fails there: the
message does not name the path's option)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricgen.compiler.pipeline import build
from fabricgen.testplan import write_plan
from tests.cli_runner import fabricgen

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "golden" / "tiny-nxos.yaml"
RESULT = ROOT / "tests" / "data" / "testplan" / "pair0001.txt"
NAME_MAX = 255
PATH_MAX = 4096
SHORT = 600  # characters: a refusal is a line or two, never the path it refuses echoed in full

# what a path argument must name: an existing file or directory to read, a file or directory to
# write, or a diff side (a build directory or an intent file)
FILE_IN, DIR_IN, FILE_OUT, DIR_OUT, SIDE = "file in", "dir in", "file out", "dir out", "side"


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> dict[str, Path]:
    """A built fabric, its test plan, a results file and a reference BOM, outside every test's
    workspace."""
    base = tmp_path_factory.mktemp("paths")
    built = build(TINY, base / "build")[1]
    plan = base / "plan"
    write_plan(built, plan)
    reference = base / "reference.csv"
    reference.write_text("pid,quantity\nN9K-C9364D-GX2A,1\n")
    return {"build": built, "plan": plan, "result": RESULT, "reference": reference, "intent": TINY, "none": base / "no-such-build"}


# name -> (arguments with "{P}" where the path goes and {build} {plan} {result} {reference}
# {intent} {none} for the fixtures, the option or argument the refusal must name, the role)
SHAPES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "build INTENT": (("build", "{P}"), "INTENT", FILE_IN),
    "build -o": (("build", "{intent}", "-o", "{P}"), "--output", DIR_OUT),
    "build --catalog-dir": (("build", "{intent}", "--catalog-dir", "{P}"), "--catalog-dir", DIR_IN),
    "validate INTENT": (("validate", "{P}"), "INTENT", FILE_IN),
    "validate --catalog-dir": (("validate", "{intent}", "--catalog-dir", "{P}"), "--catalog-dir", DIR_IN),
    "releases INTENT": (("releases", "{P}"), "INTENT", FILE_IN),
    "schema -o": (("schema", "-o", "{P}"), "--output", FILE_OUT),
    "catalog list --catalog": (("catalog", "list", "--catalog", "{P}"), "--catalog", FILE_IN),
    "init -o": (("init", "--gpus", "16", "--no-interactive", "-o", "{P}"), "--output", FILE_OUT),
    "bom compare BUILD_DIR": (("bom", "compare", "{P}", "{reference}"), "BUILD_DIR", DIR_IN),
    "bom compare REFERENCE": (("bom", "compare", "{build}", "{P}"), "REFERENCE", FILE_IN),
    "diff OLD": (("diff", "{P}", "{build}"), "OLD", SIDE),
    "diff NEW": (("diff", "{build}", "{P}"), "NEW", SIDE),
    "diff --catalog-dir": (("diff", "{build}", "{build}", "--catalog-dir", "{P}"), "--catalog-dir", DIR_IN),
    "export BUILD_DIR": (("export", "nornir", "{P}"), "BUILD_DIR", DIR_IN),
    "export -o": (("export", "nornir", "{build}", "-o", "{P}"), "--output", DIR_OUT),
    "export containerlab -o": (("export", "containerlab", "{build}", "-o", "{P}"), "--output", DIR_OUT),
    "testplan BUILD_DIR": (("testplan", "{P}"), "BUILD_DIR", DIR_IN),
    "testplan -o": (("testplan", "{build}", "-o", "{P}"), "--output", DIR_OUT),
    "testplan switches -o": (("testplan", "switches", "{build}", "-o", "{P}"), "--output", DIR_OUT),
    "testplan check PLAN_DIR": (("testplan", "check", "{P}", "{result}"), "PLAN_DIR", DIR_IN),
    "testplan check RESULTS": (("testplan", "check", "{plan}", "{P}"), "RESULTS", FILE_IN),
    "testplan check --report": (("testplan", "check", "{plan}", "{result}", "--report", "{P}"), "--report", FILE_OUT),
    "testplan check --json-report": (("testplan", "check", "{plan}", "{result}", "--json-report", "{P}"), "--json-report", FILE_OUT),
    "analyze BUILD_DIR": (("analyze", "{P}", "--no-traffic"), "BUILD_DIR", DIR_IN),
    "analyze --report": (("analyze", "{build}", "--no-traffic", "--report", "{P}"), "--report", FILE_OUT),
    "lab verify BUILD_DIR": (("lab", "verify", "{P}"), "BUILD_DIR", DIR_IN),
    "lab down BUILD_DIR": (("lab", "down", "{P}"), "BUILD_DIR", DIR_IN),
    "lab up --secrets": (("lab", "up", "{none}", "--secrets", "{P}"), "--secrets", FILE_IN),
    "lab run --report": (("lab", "run", "{none}", "--report", "{P}"), "--report", FILE_OUT),
    "push BUILD_DIR": (("push", "{P}"), "BUILD_DIR", DIR_IN),
    "push --inventory": (("push", "{none}", "--inventory", "{P}"), "--inventory", FILE_IN),
    "push --secrets": (("push", "{none}", "--secrets", "{P}"), "--secrets", FILE_IN),
    "push --known-hosts": (("push", "{none}", "--known-hosts", "{P}"), "--known-hosts", FILE_OUT),
    "push --ca-bundle": (("push", "{none}", "--ca-bundle", "{P}"), "--ca-bundle", FILE_IN),
    "verify BUILD_DIR": (("verify", "{P}"), "BUILD_DIR", DIR_IN),
    "verify --inventory": (("verify", "{none}", "--inventory", "{P}"), "--inventory", FILE_IN),
    "verify --report": (("verify", "{none}", "--report", "{P}"), "--report", FILE_OUT),
    "verify --json-report": (("verify", "{none}", "--json-report", "{P}"), "--json-report", FILE_OUT),
    "verify --secrets": (("verify", "{none}", "--secrets", "{P}"), "--secrets", FILE_IN),
    "secrets list BUILD_DIR": (("secrets", "list", "{P}"), "BUILD_DIR", DIR_IN),
    "secrets list --secrets": (("secrets", "list", "{build}", "--secrets", "{P}"), "--secrets", FILE_IN),
    "secrets render BUILD_DIR": (("secrets", "render", "{P}", "--out", "{none}"), "BUILD_DIR", DIR_IN),
    "secrets render --out": (("secrets", "render", "{build}", "--out", "{P}"), "--out", DIR_OUT),
}


def long_name(workspace: Path, role: str) -> str:
    return str(workspace / ("n" * (NAME_MAX + 1)))


def long_path(workspace: Path, role: str) -> str:
    return str(workspace) + ("/" + "d" * 200) * (PATH_MAX // 200 + 1)


def loop(workspace: Path, role: str) -> str:
    (workspace / "loop").symlink_to("loop")
    return str(workspace / "loop")


def file_as_parent(workspace: Path, role: str) -> str:
    (workspace / "FILE").write_text("")
    return str(workspace / "FILE" / "x.yaml")


def fifo(workspace: Path, role: str) -> str:
    os.mkfifo(workspace / "fifo")
    return str(workspace / "fifo")


def wrong_type(workspace: Path, role: str) -> str:
    """A directory where a file is read or written; a regular file where a directory is."""
    if role in (FILE_IN, FILE_OUT):
        (workspace / "dir.yaml").mkdir()
        return str(workspace / "dir.yaml")
    (workspace / "file").write_text("")
    return str(workspace / "file")


DEFECTS: dict[str, Callable[[Path, str], str]] = {
    "long name": long_name,
    "long path": long_path,
    "symlink loop": loop,
    "file as parent": file_as_parent,
    "fifo": fifo,
    "wrong type": wrong_type,
}
CASES = [
    pytest.param(shape, defect, id=f"{shape}: {defect}")
    for shape, (_, _, role) in SHAPES.items()
    for defect in DEFECTS
    if not (role == SIDE and defect == "wrong type")  # a diff side may be a file or a directory
]


def snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    """Every entry under `directory` (not following links): its kind and size."""
    found = {}
    for root, directories, files in os.walk(directory):
        for name in directories + files:
            path = Path(root) / name
            info = path.lstat()
            found[str(path.relative_to(directory))] = (oct(info.st_mode), info.st_size if not path.is_dir() else 0)
    return found


@pytest.mark.parametrize(("shape", "defect"), CASES)
def test_a_bad_path_is_a_short_located_exit_2_and_nothing_is_written(fixtures, tmp_path, shape, defect):
    template, where, role = SHAPES[shape]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    bad = DEFECTS[defect](workspace, role)
    before = {name: snapshot(path) for name, path in (("workspace", workspace), ("build", fixtures["build"]), ("plan", fixtures["plan"]))}
    values = {name: str(path) for name, path in fixtures.items()} | {"P": bad}
    # no credentials and no terminal: nothing could log in to a device
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    result = fabricgen(*(part.format(**values) for part in template), env=environment, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert len(result.stderr) < SHORT, result.stderr
    located = [line for line in result.stderr.splitlines() if line.strip().startswith(f"{where}: ")]
    assert len(located) == 1, result.stderr
    after = {name: snapshot(path) for name, path in (("workspace", workspace), ("build", fixtures["build"]), ("plan", fixtures["plan"]))}
    assert after == before


def _parameters():
    """(command words, the option or argument as a refusal names it, its parameter, the
    command's function) for every parameter of every command."""
    import typer.main

    from fabricgen.cli import app

    def walk(command, words):
        for name, sub in getattr(command, "commands", {}).items():
            if hasattr(sub, "commands"):
                yield from walk(sub, (*words, name))
                continue
            for param in sub.params:
                where = param.opts[0] if param.param_type_name == "option" else param.name.upper()
                yield (*words, name), where, param, sub.callback

    yield from walk(typer.main.get_command(app), ())


def _declaration(param) -> int:
    """The typer.Option or typer.Argument declaration a parameter comes from (typer wraps its
    callback for each command that uses it)."""
    return id(getattr(param.callback, "__wrapped__", param.callback))


def _shape_command(template: tuple[str, ...]) -> tuple[str, ...]:
    words = tuple(itertools.takewhile(lambda part: not part.startswith(("{", "-")), template))
    return (*words, "plan") if words == ("testplan",) else words  # `testplan BUILD_DIR` is the hidden `testplan plan`


def test_every_path_option_and_argument_is_checked_and_tried_here():
    """Every parameter typed as a path (or a diff side) is declared with the checked opener, and
    each of those declarations is tried by a shape above (options shared by several commands, as
    export's -o, are one declaration): a path option added without either fails here."""
    import typing

    parameters = list(_parameters())
    tried = set()
    for template, where, _ in SHAPES.values():
        command = _shape_command(template)
        found = [param for words, name, param, _ in parameters if words == command and name == where]
        assert len(found) == 1, (command, where)
        tried.add(_declaration(found[0]))
    unchecked, untried = [], []
    for words, where, param, function in parameters:
        hint = str(typing.get_type_hints(function).get(param.name, ""))
        if "Path" not in hint and not hasattr(param.callback, "role"):
            continue
        if not hasattr(param.callback, "role"):
            unchecked.append(f"{' '.join(words)} {where}")
        elif _declaration(param) not in tried:
            untried.append(f"{' '.join(words)} {where}")
    assert unchecked == [] and untried == []
    assert len(tried) >= 20


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("\x1b[31m" + "é" * 128, id="an escape sequence and 256 bytes in 129 characters"),
        pytest.param(os.fsdecode(b"\xff" * (NAME_MAX + 1)), id="not UTF-8"),
        pytest.param("a\nb" + "c" * NAME_MAX, id="a line break"),
    ],
)
def test_a_refused_path_is_shown_escaped_on_one_line(fixtures, tmp_path, name):
    result = fabricgen("build", fixtures["intent"], "-o", tmp_path / name, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "\x1b" not in result.stderr and "\udcff" not in result.stderr and "\\" in result.stderr
    located = [line for line in result.stderr.splitlines() if line.strip().startswith("--output: ")]
    assert len(located) == 1 and "NAME_MAX" in located[0], result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_refused_path_answers_json_with_the_error_document(fixtures, tmp_path):
    import json

    result = fabricgen("build", fixtures["intent"], "-o", tmp_path / ("n" * 300), "--json", cwd=tmp_path)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["problems"][0]["field"] == "--output" and "NAME_MAX" in document["problems"][0]["message"]


def test_a_default_destination_too_long_for_its_suffix_is_refused(fixtures, tmp_path):
    """BUILD_DIR-testplan and BUILD_DIR-FORMAT are derived from a build directory whose own name
    fits: the derived name is checked by the same opener."""
    import shutil

    copy = tmp_path / ("b" * 250)
    shutil.copytree(fixtures["build"], copy)
    for command in (("testplan", str(copy)), ("export", "containerlab", str(copy))):
        result = fabricgen(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "NAME_MAX" in result.stderr and len(result.stderr) < SHORT and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [copy.name]


def test_a_refused_path_answers_github_with_an_annotation(fixtures, tmp_path):
    result = fabricgen("validate", tmp_path / ("n" * 300), "--format", "github", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.startswith("::error title=fabricgen arguments::INTENT: a name in the path is 300 bytes long ('nnn"), result.stdout
    assert result.stdout.count("\n") == 1


def test_the_intent_path_asked_for_on_the_terminal_is_checked_as_o_is(tmp_path):
    (tmp_path / "FILE").write_text("")
    answers = "64\n\n\n\n\n\n\n\nFILE/cluster.yaml\n"  # every default, then a path under a file
    result = fabricgen("init", "--interactive", cwd=tmp_path, stdin=answers)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--output: 'FILE' is not a directory" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


@pytest.mark.parametrize("command", [("analyze",), ("push",), ("verify",), ("secrets", "list"), ("testplan",)])
def test_a_build_directory_that_does_not_exist_is_the_problem_s_file(tmp_path, command):
    """Found by the paths fuzz campaign: the refusal named the directory only inside its message,
    so `--json` and `--format github` had no file to point at."""
    missing = tmp_path / "no-such-build"
    result = fabricgen(*command, missing, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"  {missing}: does not exist: a build directory is needed here" in result.stderr, result.stderr
