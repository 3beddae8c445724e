"""Writing builds: deterministic, atomic, never replacing a directory that is not ours."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fabricgen import output
from fabricgen.errors import FabricgenError, OutputError
from fabricgen.pipeline import build
from tests.conftest import INTENTS


def tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_two_builds_are_byte_identical(tmp_path):
    build(INTENTS / "cisco-512-gpu.yaml", tmp_path / "one")
    build(INTENTS / "cisco-512-gpu.yaml", tmp_path / "two")
    one, two = tree(tmp_path / "one"), tree(tmp_path / "two")
    assert one == two and len(one) > 20


def test_the_same_intent_from_another_directory_builds_the_same(tmp_path):
    copy = tmp_path / "elsewhere" / "cisco-256-gpu.yaml"
    copy.parent.mkdir()
    shutil.copy(INTENTS / "cisco-256-gpu.yaml", copy)
    build(INTENTS / "cisco-256-gpu.yaml", tmp_path / "a")
    build(copy, tmp_path / "b")
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_rebuild_replaces_the_previous_build_completely(tmp_path, write_intent):
    destination = tmp_path / "out"
    build(INTENTS / "cisco-512-gpu.yaml", destination)
    assert (destination / "configs" / "be-su02-leaf8.cfg").exists()
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    assert not (destination / "configs" / "be-su02-leaf8.cfg").exists()  # nothing stale left behind
    assert set(os.listdir(tmp_path)) == {"out"}  # no staging or old directories left


def test_a_failed_write_leaves_the_previous_build_untouched(tmp_path, monkeypatch):
    destination = tmp_path / "out"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    before = tree(destination)
    real_open = open
    written = []

    def failing_open(path, mode="r", *args, **kwargs):
        if "w" in mode and ".partial" in str(path):
            written.append(path)
            if len(written) > 5:
                raise OSError(28, "No space left on device")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OutputError) as caught:
        build(INTENTS / "cisco-512-gpu.yaml", destination)
    monkeypatch.undo()
    assert "No space left" in caught.value.problems[0].message
    assert tree(destination) == before
    assert set(os.listdir(tmp_path)) == {"out"}


def test_bad_input_writes_nothing(tmp_path, write_intent):
    destination = tmp_path / "out"
    with pytest.raises(FabricgenError):
        build(write_intent("gpus: 4096\nbackend: {tiers: 2}\n"), destination)
    assert not destination.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["test-fabric.yaml"]


def test_refuses_to_replace_a_directory_that_is_not_a_build(tmp_path):
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError) as caught:
        build(INTENTS / "cisco-256-gpu.yaml", precious)
    assert "only replaces its own builds" in caught.value.problems[0].hint
    assert (precious / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_empty_directory_is_fine(tmp_path):
    (tmp_path / "out").mkdir()
    build(INTENTS / "cisco-256-gpu.yaml", tmp_path / "out")
    assert (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.parametrize("path", ["../evil.cfg", "/etc/passwd", "configs/../../x", "configs/.hidden", "a b.cfg", ""])
def test_only_plain_relative_paths_reach_the_disk(tmp_path, path):
    with pytest.raises(OutputError):
        output.write_build({path: b"x"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_swap_without_renameat2_falls_back_to_two_renames(tmp_path, monkeypatch):
    destination = tmp_path / "out"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    build(INTENTS / "cisco-512-gpu.yaml", destination)
    assert (destination / "configs" / "be-su02-leaf8.cfg").exists()
    assert set(os.listdir(tmp_path)) == {"out"}


def test_a_symlink_to_a_build_replaces_the_build_it_points_to(tmp_path):
    build(INTENTS / "cisco-256-gpu.yaml", tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    build(INTENTS / "cisco-512-gpu.yaml", tmp_path / "link")
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "real" / "configs" / "be-su02-leaf8.cfg").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_build_directory_permissions_follow_the_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        build(INTENTS / "cisco-256-gpu.yaml", tmp_path / "out")
    finally:
        os.umask(previous)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "bom.csv").stat().st_mode & 0o777 == 0o644


@pytest.mark.slow
def test_builds_do_not_depend_on_hash_randomisation(tmp_path):
    import subprocess
    import sys

    for seed in ("0", "12345"):
        subprocess.run(
            [sys.executable, "-m", "fabricgen", "build", str(INTENTS / "cisco-512-gpu.yaml"), "-o", str(tmp_path / seed), "-q"],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=120,
        )
    assert tree(tmp_path / "0") == tree(tmp_path / "12345")


def test_a_file_written_without_replace_never_replaces_one(tmp_path):
    """`fabricgen init` without --force: an existing file (even one that appeared after the
    command looked) is kept and refused, and no staging file is left behind."""
    path = tmp_path / "intent.yaml"
    output.write_file_atomic(path, b"first\n", replace=False)
    with pytest.raises(OutputError, match="already exists"):
        output.write_file_atomic(path, b"second\n", replace=False)
    assert path.read_bytes() == b"first\n"
    output.write_file_atomic(path, b"third\n")
    assert path.read_bytes() == b"third\n" and [p.name for p in tmp_path.iterdir()] == ["intent.yaml"]
