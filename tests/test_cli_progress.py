"""Progress on stderr, phase by phase: plain lines off a terminal (CI logs), a live display on one,
nothing with --quiet; stdout keeps only the result."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import PHASES, build, compile_intent
from tests.conftest import INTENTS

runner = CliRunner()
SMALL = "name: small\ngpus: 64\n"
LINE = re.compile(r"^\[ *[0-9]+\.[0-9] s\] ([a-z ]+): (.+)$")


def phase_lines(stderr: str, command: str) -> list[str]:
    """The phases a command's plain progress named, in order."""
    found = [LINE.match(line) for line in stderr.splitlines()]
    return [m.group(2) for m in found if m is not None and m.group(1) == command]


def test_the_pipeline_calls_back_once_per_phase_in_order(write_intent, tmp_path):
    heard: list[tuple[str, float]] = []
    build(write_intent(SMALL), tmp_path / "b", on_phase=lambda name, seconds: heard.append((name, seconds)))
    assert [name for name, _ in heard] == list(PHASES)
    assert all(seconds >= 0 for _, seconds in heard)
    heard.clear()
    compile_intent(write_intent(SMALL), render=False, on_phase=lambda name, seconds: heard.append((name, seconds)))
    assert [name for name, _ in heard] == list(PHASES[: PHASES.index("device configs") + 1])


def test_build_names_each_phase_on_stderr_off_a_terminal(write_intent, tmp_path):
    result = runner.invoke(app, ["build", str(write_intent(SMALL)), "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert phase_lines(result.stderr, "build") == [*PHASES, "done"]
    assert "[" not in result.stdout.split("\n")[0] and not LINE.search(result.stdout)  # stdout: the summary only
    assert "64 GPUs" in result.stdout


def test_quiet_prints_no_progress(write_intent, tmp_path):
    result = runner.invoke(app, ["build", str(write_intent(SMALL)), "-o", str(tmp_path / "b"), "--quiet"])
    assert result.exit_code == 0 and result.stderr == "" and result.stdout.strip() == str(tmp_path / "b")
    result = runner.invoke(app, ["validate", str(write_intent(SMALL)), "-q"])
    assert result.exit_code == 0 and result.stderr == ""


def test_validate_stops_its_progress_at_the_config_checks(write_intent):
    result = runner.invoke(app, ["validate", str(write_intent(SMALL))])
    assert result.exit_code == 0, result.output
    assert phase_lines(result.stderr, "validate") == [*PHASES[: PHASES.index("device configs") + 1], "done"]


def test_a_refused_build_ends_its_progress_without_done(write_intent, tmp_path):
    result = runner.invoke(app, ["build", str(write_intent("gpus: 256\nbackend:\n  mtu: jumbo\n")), "-o", str(tmp_path / "b")])
    assert result.exit_code == 2
    assert phase_lines(result.stderr, "build") == ["intent"]
    assert "intent: 1 problem" in result.stderr


def test_on_a_terminal_progress_is_a_live_display_not_lines(write_intent, tmp_path):
    # rich treats the stream as a terminal with TTY_COMPATIBLE=1 (FORCE_COLOR does too)
    result = runner.invoke(app, ["build", str(write_intent(SMALL)), "-o", str(tmp_path / "b")], env={"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert result.exit_code == 0, result.output
    assert phase_lines(result.stderr, "build") == []
    assert "build:" in result.stderr  # the live line (a spinner, the phase, the bar), then erased
    assert "\x1b[" in result.stderr


def test_diff_names_its_steps(tmp_path):
    intent = str(INTENTS / "cisco-256-gpu.yaml")
    result = runner.invoke(app, ["diff", intent, intent])
    assert result.exit_code == 0, result.output
    assert phase_lines(result.stderr, "diff") == ["old side", "new side", "compare", "done"]


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    destination = tmp_path_factory.mktemp("progress") / "small"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    return destination


def test_analyze_names_its_phases(small_build):
    result = runner.invoke(app, ["analyze", str(small_build), "--scope", "cross-rail", "--seeds", "1", "--no-sweep"])
    assert result.exit_code == 0, result.output
    phases = phase_lines(result.stderr, "analyze")
    assert phases[:3] == ["read build", "capacity (8 leaves, 4 spines)", "single failures"]
    assert phases[3].startswith("load balancing (ecmp, flowlet, spray x 1 seeds") and phases[-1] == "done"
    quiet = runner.invoke(app, ["analyze", str(small_build), "--no-traffic", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.slow
def test_analyze_prints_no_library_warning(small_build, tmp_path):
    # a fresh process (matplotlib warns when it is first imported) whose matplotlib config
    # directory cannot be made: matplotlib logs two warnings and builds its font cache, numpy
    # runs the statistics; nothing of theirs reaches stderr
    (tmp_path / "file").write_text("")
    environment = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "file" / "mpl")}
    result = subprocess.run(
        [sys.executable, "-m", "fabricgen", "analyze", str(small_build), "--scope", "cross-rail", "--seeds", "2", "--report", str(tmp_path / "r" / "a.md"), "-q"],
        capture_output=True, text=True, env=environment, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert (tmp_path / "r" / "a-link-load.png").exists()


def test_lab_steps_reach_the_progress(monkeypatch, tmp_path):
    # the lab needs root and FRR: its session is replaced by one that reports steps as the real
    # one does, so the wiring from the command to the progress is what is tested here
    from fabricgen.lab import session
    from fabricgen.lab.verify import Check, Verification

    def check(build_dir, timeout, progress):
        for step in ("convergence", "BGP, BFD, ECMP", "LLDP", "traffic"):
            progress(step)
        return Verification([Check("BGP", ("device",), [("leaf1",)], True, "1/1", 0.1, [True])], True, None)

    monkeypatch.setattr(session, "check", check)
    result = runner.invoke(app, ["lab", "verify", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert phase_lines(result.stderr, "lab verify") == ["convergence", "BGP, BFD, ECMP", "LLDP", "traffic", "done"]
    assert "verify: PASS" in result.stdout


def test_on_a_terminal_a_refusal_with_json_still_goes_to_stdout(write_intent, tmp_path):
    # the live display must not take stdout over while it runs: the error document is written
    # while it is up, and `| jq` reads stdout
    intent = write_intent("gpus: 256\nbackend:\n  mtu: jumbo\n")
    result = runner.invoke(app, ["build", str(intent), "-o", str(tmp_path / "b"), "--json"], env={"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert result.exit_code == 2
    assert result.stdout.lstrip().startswith("{") and '"phase": "intent"' in result.stdout
    assert "intent: 1 problem" in result.stderr
