"""--format github: one GitHub Actions `::error` workflow command per problem on stdout, escaped
as GitHub's own toolkit escapes them (actions/toolkit packages/core/src/command.ts: in the message
% CR LF as %25 %0D %0A; in a property also : and , as %3A %2C); the exit code stays 2. A build's
notes: one `::warning` each, escaped the same way."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from fabricgen.basics.errors import IntentError, Problem
from fabricgen.cli import app

runner = CliRunner()
COMMAND = re.compile(r"^::error (?P<properties>[^:]*)::(?P<message>.*)$")


def unescape(text: str) -> str:
    """What the runner reads back (the inverse of the toolkit's escaping)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse(line: str) -> tuple[dict[str, str], str]:
    match = COMMAND.match(line)
    assert match is not None, line
    properties = dict(part.split("=", 1) for part in match.group("properties").split(","))
    return {key: unescape(value) for key, value in properties.items()}, unescape(match.group("message"))


@pytest.mark.parametrize("command", ["validate", "build"])
def test_one_annotation_per_problem_at_its_file_and_line(write_intent, tmp_path, command):
    intent = write_intent("gpus: lots\nbackend:\n  mtu: 99999\n  colour: blue\n")
    args = [command, str(intent), "--format", "github"] + (["-o", str(tmp_path / "b")] if command == "build" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all(line.startswith("::error ") for line in lines)
    parsed = [parse(line) for line in lines]
    assert [(p["file"], p["line"], p["title"]) for p, _ in parsed] == [
        (str(intent), "1", "fabricgen intent"),
        (str(intent), "3", "fabricgen intent"),
        (str(intent), "4", "fabricgen intent"),
    ]
    assert [message for _, message in parsed] == [
        "gpus: Input should be a valid integer (got 'lots')",
        "backend.mtu: Input should be less than or equal to 9216 (got 99999)",
        "backend.colour: unknown key 'colour' (fix: did you mean 'core'?)",
    ]
    assert "intent: 3 problems" in result.stderr  # the text report still goes to stderr


def test_properties_and_message_are_escaped():
    problem = Problem("a 100% wrong value,\r\nsplit: here", hint="use 50%", field=("backend", "mtu"), file="dir,x/a:b%.yaml", line=7)
    line = IntentError(problem).github_annotations()
    assert line.count("\n") == 1 and line.endswith("\n")
    properties, message = parse(line.rstrip("\n"))
    # printable() first writes CR and LF as \r and \n (the message stays one line), then the
    # toolkit's escaping makes : and , in the file name no separators
    assert properties == {"file": "dir,x/a:b%.yaml", "line": "7", "title": "fabricgen intent"}
    assert message == "backend.mtu: a 100% wrong value,\\r\\nsplit: here (fix: use 50%)"
    assert "file=dir%2Cx/a%3Ab%25.yaml," in line and "100%25 wrong" in line


def test_the_escapes_follow_the_toolkit():
    from fabricgen.basics.errors import _github_data, _github_property

    assert _github_data("50% a:b,c\r\n") == "50%25 a:b,c%0D%0A"
    assert _github_property("50% a:b,c\r\n") == "50%25 a%3Ab%2Cc%0D%0A"


def test_a_valid_intent_prints_no_annotation(write_intent):
    result = runner.invoke(app, ["validate", str(write_intent("gpus: 64\n")), "--format", "github"])
    assert result.exit_code == 0 and "::error" not in result.stdout and "valid" in result.stdout


WARNING = re.compile(r"^::warning (?P<properties>[^:]*)::(?P<message>.*)$")


def parse_warning(line: str) -> tuple[dict[str, str], str]:
    match = WARNING.match(line)
    assert match is not None, line
    properties = dict(part.split("=", 1) for part in match.group("properties").split(","))
    return {key: unescape(value) for key, value in properties.items()}, unescape(match.group("message"))


@pytest.mark.parametrize("command", ["validate", "build"])
def test_notes_are_warnings_on_the_intent(write_intent, tmp_path, command):
    # 64 GPUs fill less than one scalable unit: a note, and an exit code of 0
    intent = write_intent("gpus: 64\n")
    args = [command, str(intent), "--format", "github"] + (["-o", str(tmp_path / "b")] if command == "build" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert warnings and all(line.startswith("::warning ") for line in warnings)
    parsed = [parse_warning(line) for line in warnings]
    assert all(properties == {"file": str(intent), "title": "fabricgen note"} for properties, _ in parsed)
    assert any(message.startswith("8 nodes fill less than one 32-node scalable unit") for _, message in parsed)
    # the text summary still lists them, and --format text prints no workflow command
    assert result.stdout.count("note: ") == len(warnings)
    plain = runner.invoke(app, [command, str(intent)] + (["-o", str(tmp_path / "c")] if command == "build" else []))
    assert "::warning" not in plain.stdout


def test_a_note_is_one_escaped_warning_at_its_sections_line(write_intent):
    """Notes can carry names from the intent and its catalog: each is one workflow command, read
    back by the runner as the note (its control characters written as escapes, as everywhere)."""
    from dataclasses import replace

    from fabricgen.basics.trust import printable
    from fabricgen.cli.build import note_annotations
    from fabricgen.compiler.pipeline import compile_intent

    intent = write_intent("name: notes\ngpus: 64\nbackend:\n  mtu: 9000\n")
    result = compile_intent(intent, render=False)
    hostile = (
        "backend: 100% of x,y\nmore::error file=a,line=1::pwned\r%0A",
        "no section here ::warning::x",
        "oob: not in this intent",
    )
    result = replace(result, compiled=replace(result.compiled, notes=hostile))
    text = note_annotations(result, intent)
    lines = text.splitlines()
    assert len(lines) == len(hostile) and text.endswith("\n") and "\r" not in text
    parsed = [parse_warning(line) for line in lines]
    assert [message for _, message in parsed] == [printable(note) for note in hostile]
    assert [properties.get("line") for properties, _ in parsed] == ["3", None, None]  # backend: line 3; no oob key
    assert all(properties["file"] == str(intent) and properties["title"] == "fabricgen note" for properties, _ in parsed)
    # the note's own "::" stays in the message (the runner reads the message after the second "::")
    assert lines[0].startswith("::warning file=") and "100%25 of x,y\\nmore::error file=a,line=1::pwned\\r%250A" in lines[0]
