"""The command line as a user runs it: exit codes, messages, nothing written on bad input.

`python -m fabricgen` runs as a process of its own here for the version and for parallel builds
(`--jobs` forks workers); every other command runs in this process (tests/cli_runner.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen import __version__
from tests import cli_runner
from tests.conftest import INTENTS, REPO


def fabricgen(*args: str, cwd: Path | None = None) -> cli_runner.Completed:
    return cli_runner.fabricgen(*args, cwd=cwd or REPO)


def fabricgen_process(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], check=False, capture_output=True, text=True, cwd=cwd or REPO, timeout=120)


def test_version():
    result = fabricgen_process("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"fabricgen {__version__}"


@pytest.mark.parametrize("command", [[], ["build"], ["validate"]])
def test_help_on_every_command(command):
    result = fabricgen(*command, "--help")
    assert result.returncode == 0
    assert "Usage:" in result.stdout
    if command:
        assert "INTENT" in result.stdout


def test_build_writes_output_by_fabric_name(tmp_path):
    intent = tmp_path / "intent.yaml"
    intent.write_text("name: lab\ngpus: 64\n")
    result = fabricgen("build", str(intent), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "output" / "lab" / "manifest.json").exists()
    assert "wrote" in result.stdout and "64 GPUs" in result.stdout


def test_build_to_a_chosen_directory(tmp_path):
    result = fabricgen("build", str(INTENTS / "cisco-256-gpu.yaml"), "-o", str(tmp_path / "b"), "--quiet")
    assert result.returncode == 0 and result.stdout.strip() == str(tmp_path / "b")
    assert len(list((tmp_path / "b" / "configs").iterdir())) == 12 + 10 + 4  # backend, frontend, OOB switches


def test_validate_writes_nothing(tmp_path):
    intent = tmp_path / "intent.yaml"
    intent.write_text("gpus: 512\n")
    result = fabricgen("validate", str(intent), cwd=tmp_path)
    assert result.returncode == 0 and "valid" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["intent.yaml"]


# Every class of bad input: exit 2, file:line: field named, a fix offered, no traceback, nothing written.
BAD_INPUTS = {
    "malformed-yaml": ("gpus: 256\nbackend:\n  leaf: {model: X\n", ":3: not valid YAML", "close the bracket"),
    "unknown-key": ("gpus: 256\nbackend:\n  spines: {count: 4}\n", ":3: backend.spines", "did you mean 'spine'"),
    "wrong-type": ("gpus: 256\nbackend:\n  mtu: jumbo\n", ":3: backend.mtu", "integer"),
    "string-for-number": ("gpus: '256'\n", ":1: gpus", "integer"),
    "too-many-gpus-for-2-tiers": (
        "gpus: 4096\nbackend:\n  tiers: 2\n",
        ":1: gpus",
        "set backend.tiers: 3 (or leave it out) for a 3-tier design (128 leaves, 128 spines in 4 pods, 64 core switches)",
    ),
    "too-many-gpus-for-3-tiers": ("gpus: 131072\n", ":1: gpus", "3 tiers of these switches reach 8,192 nodes (65,536 GPU NICs)"),
    "ratio-cannot-hold": ("gpus: 256\nbackend:\n  ratio: '1:3'\n  scalable_unit_gpus: 256\n", ":3: backend.ratio", "scalable_unit_gpus: 128 or less"),
    "pool-too-small": ("gpus: 256\nbackend:\n  pools: {fabric_links: 10.8.0.0/26}\n", ":3: backend.pools.fabric_links", "/23 or larger"),
    "unknown-pid": ("gpus: 256\nbackend:\n  spine: {model: XYZ-SWITCH-1}\n", ":3: backend.spine.model", "use one of"),
    "duplicate-name": ("gpus: 256\nnaming: {spine: spine}\n", ":2: naming.spine", "two devices are named 'spine'"),
    "duplicate-key": ("gpus: 256\ngpus: 512\n", ":2: gpus", "duplicate key"),
    "evpn-route-target": (
        "gpus: 256\nbackend:\n  routing: vxlan-evpn\n  evpn: {route_target_asn: 70000}\n",
        ":4: backend.evpn.route_target_asn",
        "less than or equal to 65535",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input(tmp_path, case):
    text, where, what = BAD_INPUTS[case]
    intent = tmp_path / "intent.yaml"
    intent.write_text(text)
    result = fabricgen("build", str(intent), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert f"{intent}{where}" in result.stderr, result.stderr
    assert what in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["intent.yaml"], "nothing may be written"


def test_every_design_problem_comes_at_once(tmp_path):
    intent = tmp_path / "intent.yaml"
    intent.write_text(
        "gpus: 512\nbackend:\n  leaf: {count: 9}\n  optics: {fabric_links: QSFP-100G-DR-S}\n  pools: {fabric_links: 10.8.0.0/28}\n  asn: {leaf_first: 65534}\n"
    )
    result = fabricgen("build", str(intent), cwd=tmp_path)
    assert result.returncode == 2
    assert "design: 4 problems" in result.stderr
    for fragment in (":3: backend.leaf.count", ":4: backend.optics.fabric_links", ":5: backend.pools.fabric_links", ":6: backend.asn.leaf_first"):
        assert f"{intent}{fragment}" in result.stderr, result.stderr


def test_all_problems_of_a_phase_come_together(tmp_path):
    intent = tmp_path / "intent.yaml"
    intent.write_text("gpus: lots\nbackend:\n  mtu: 99999\n  colour: blue\n")
    result = fabricgen("validate", str(intent))
    assert result.returncode == 2
    assert "intent: 3 problems" in result.stderr
    for fragment in (":1: gpus", ":3: backend.mtu", ":4: backend.colour"):
        assert fragment in result.stderr


def test_missing_intent_file(tmp_path):
    result = fabricgen("build", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "cannot read the intent file" in result.stderr
    assert "Traceback" not in result.stderr


# A small cluster with every kind of rendered file: SONiC and NX-OS switches, EVPN (the lab
# overlay), routing twins, GPU and storage hosts, OOB switches.
JOBS_INTENT = """
name: jobs
gpus: 64
backend:
  scalable_unit_gpus: 32
  routing: vxlan-evpn
  leaf: {nos: sonic, nos_release: master}
  spine: {nos: nxos}
frontend: {}
storage_nodes: {model: AFF-A90, count: 2}
oob: {}
"""


def tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow  # three builds, each a process of its own
def test_build_on_two_processes_writes_the_same_files(write_intent, tmp_path):
    intent = write_intent(JOBS_INTENT)
    for jobs in ("1", "2", "3"):
        result = fabricgen_process("build", str(intent), "-o", str(tmp_path / f"jobs{jobs}"), "--jobs", jobs, "--quiet")
        assert result.returncode == 0, result.stderr
    one = tree(tmp_path / "jobs1")
    assert any(p.endswith("config_db.json") for p in one) and any(p.endswith(".cfg") for p in one)
    assert "lab/overlay.json" in one and any(p.startswith("lab/frr/") for p in one) and any(p.startswith("hosts/") for p in one)
    for jobs in ("2", "3"):
        other = tree(tmp_path / f"jobs{jobs}")
        assert sorted(other) == sorted(one), f"--jobs {jobs} wrote other files"
        assert [p for p in one if one[p] != other[p]] == [], f"--jobs {jobs} wrote other bytes"


def test_negative_jobs_is_refused(tmp_path):
    result = fabricgen("build", str(INTENTS / "cisco-256-gpu.yaml"), "-o", str(tmp_path / "b"), "--jobs", "-1")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "--jobs" in result.stderr and "greater than or equal to 0" in result.stderr
    assert not (tmp_path / "b").exists()
