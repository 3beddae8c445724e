"""Writing builds: deterministic, atomic, never replacing a directory that is not ours."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from fabricgen.basics.errors import FabricgenError, OutputError
from fabricgen.build import output
from fabricgen.compiler.pipeline import build
from tests.cli_runner import fabricgen
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
    with pytest.raises(OutputError, match="already exists") as caught:
        output.write_file_atomic(path, b"second\n", replace=False)
    assert caught.value.problems[0].file == str(path)  # located: --json and --format github point at it
    assert path.read_bytes() == b"first\n"
    output.write_file_atomic(path, b"third\n")
    assert path.read_bytes() == b"third\n" and [p.name for p in tmp_path.iterdir()] == ["intent.yaml"]


# --- output ownership: an export, a plan and a build never replace one another (issue 30, item 3) ---

TINY = INTENTS.parent / "tests" / "golden" / "tiny-nxos.yaml"
TINY_SONIC = INTENTS.parent / "tests" / "golden" / "tiny-sonic.yaml"


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory) -> dict[str, Path]:
    """Two fabrics, built once: tiny-nxos and tiny-sonic."""
    base = tmp_path_factory.mktemp("two-builds")
    return {"nxos": build(TINY, base / "nxos")[1], "sonic": build(TINY_SONIC, base / "sonic")[1]}


def copied(source: Path, destination: Path) -> Path:
    shutil.copytree(source, destination, symlinks=True)
    return destination


def refused(*args: object, cwd: Path | None = None) -> str:
    """`fabricgen ARGS` must be refused: exit 2, no traceback. Returns stderr."""
    result = fabricgen(*map(str, args), cwd=cwd)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def accepted(*args: object) -> None:
    result = fabricgen(*map(str, args))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("command", [("export", "nornir"), ("export", "batfish"), ("testplan",)], ids=" ".join)
def test_export_and_testplan_over_another_build_are_refused_and_the_build_is_intact(two_builds, tmp_path, command):
    victim = copied(two_builds["sonic"], tmp_path / "other-fabric")
    before = tree(victim)
    message = refused(*command, two_builds["nxos"], "-o", victim)
    assert "holds the build of intent" in message and "nothing was deleted" in message, message
    assert tree(victim) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-fabric"]  # no staging directory left


def test_an_export_never_replaces_a_plan_another_format_or_another_fabric(two_builds, tmp_path):
    accepted("testplan", two_builds["nxos"], "-o", tmp_path / "plan")
    accepted("export", "nornir", two_builds["nxos"], "-o", tmp_path / "nornir")
    accepted("export", "nornir", two_builds["sonic"], "-o", tmp_path / "sonic-nornir")
    plans, nornir, sonic = tree(tmp_path / "plan"), tree(tmp_path / "nornir"), tree(tmp_path / "sonic-nornir")
    assert "the test plan of fabric 'tiny-nxos'" in refused("export", "nornir", two_builds["nxos"], "-o", tmp_path / "plan")
    assert "the nornir export of fabric 'tiny-nxos'" in refused("export", "ansible", two_builds["nxos"], "-o", tmp_path / "nornir")
    assert "the nornir export of fabric 'tiny-sonic'" in refused("export", "nornir", two_builds["nxos"], "-o", tmp_path / "sonic-nornir")
    assert "the nornir export of fabric 'tiny-nxos'" in refused("testplan", two_builds["nxos"], "-o", tmp_path / "nornir")
    assert "the test plan of fabric 'tiny-nxos'" in refused("testplan", two_builds["sonic"], "-o", tmp_path / "plan")
    assert (tree(tmp_path / "plan"), tree(tmp_path / "nornir"), tree(tmp_path / "sonic-nornir")) == (plans, nornir, sonic)


def test_an_export_and_a_plan_replace_their_own_earlier_output(two_builds, tmp_path):
    accepted("export", "nornir", two_builds["nxos"], "-o", tmp_path / "nornir")
    accepted("testplan", two_builds["nxos"], "-o", tmp_path / "plan")
    (tmp_path / "nornir" / "hosts.yaml").unlink()  # an incomplete earlier export is still ours: every entry is listed
    accepted("export", "nornir", two_builds["nxos"], "-o", tmp_path / "nornir")
    accepted("testplan", two_builds["nxos"], "-o", tmp_path / "plan")
    assert (tmp_path / "nornir" / "hosts.yaml").is_file()
    assert json.loads((tmp_path / "plan" / output.MARKER).read_text()) == {"fabric": "tiny-nxos", "kind": "testplan"}
    assert json.loads((tmp_path / "nornir" / output.MARKER).read_text()) == {"fabric": "tiny-nxos", "format": "nornir", "kind": "export"}


def test_a_build_never_replaces_an_export_or_a_plan(two_builds, tmp_path):
    accepted("export", "nornir", two_builds["nxos"], "-o", tmp_path / "nornir")
    accepted("testplan", two_builds["nxos"], "-o", tmp_path / "plan")
    for directory, what in ((tmp_path / "nornir", "the nornir export"), (tmp_path / "plan", "the test plan")):
        before = tree(directory)
        with pytest.raises(OutputError, match=what):
            build(TINY, directory)
        assert tree(directory) == before


def test_an_edited_marker_is_refused_and_nothing_deleted(two_builds, tmp_path):
    """The marker is read back as hostile input: one that is not what manifest.json lists (here
    one claiming to be another fabric's export, so that an export would replace it) is refused."""
    accepted("export", "nornir", two_builds["sonic"], "-o", tmp_path / "nornir")
    forged = tmp_path / "nornir" / output.MARKER
    forged.write_text('{"fabric": "tiny-nxos", "format": "nornir", "kind": "export"}\n')
    before = tree(tmp_path / "nornir")
    message = refused("export", "nornir", two_builds["nxos"], "-o", tmp_path / "nornir")
    assert output.MARKER in message and "sha256" in message
    assert tree(tmp_path / "nornir") == before


@pytest.mark.parametrize("inside", ["build", "plan", "export"])
def test_nothing_is_written_inside_a_directory_fabricgen_wrote(two_builds, tmp_path, inside):
    directories = {
        "build": copied(two_builds["nxos"], tmp_path / "build"),
        "plan": tmp_path / "plan",
        "export": tmp_path / "export",
    }
    accepted("testplan", directories["build"], "-o", directories["plan"])
    accepted("export", "ansible", directories["build"], "-o", directories["export"])
    target = directories[inside]
    before = tree(target)
    for args in (
        ("build", TINY, "-o", target / "sub"),
        ("export", "nornir", directories["build"], "-o", target / "sub" / "nornir"),
        ("testplan", directories["build"], "-o", target / "plan"),
        ("schema", "-o", target / "schema.json"),
        ("init", "--gpus", "16", "--no-interactive", "-o", target / "x.yaml"),
        ("analyze", directories["build"], "--no-traffic", "--report", target / "analysis.md"),
    ):
        message = refused(*args)
        assert "writing there would overwrite the" in message, message
    assert tree(target) == before


def test_a_fifo_named_manifest_json_above_an_output_is_never_opened(tmp_path):
    """Looking for a directory fabricgen wrote above an output opens manifest.json only when it
    is a regular file: a FIFO planted there (in a shared /tmp) would block the open for ever."""
    os.mkfifo(tmp_path / "manifest.json")
    done = threading.Event()
    results = []

    def write_schema() -> None:
        results.append(fabricgen("schema", "-o", tmp_path / "schema.json"))
        done.set()

    worker = threading.Thread(target=write_schema, daemon=True)
    worker.start()
    if not done.wait(120):  # only a failing run waits: it is stuck in open(); a writer releases it
        os.close(os.open(tmp_path / "manifest.json", os.O_WRONLY | os.O_NONBLOCK))
        worker.join()
        pytest.fail("the FIFO manifest.json was opened and waited on")
    assert results[0].returncode == 0 and (tmp_path / "schema.json").is_file()
