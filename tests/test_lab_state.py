"""The lab's state file is hostile input (issue 30): every name and path `lab down` acts on is
derived from the build directory's lab id, and a state file this lab did not write is refused
(exit 2, naming the file and how to clean up by hand) with nothing deleted.

The state root is a directory of each test's own ($FABRICGEN_LAB_STATE); the tests that run
`lab down` or make a namespace need root (as `lab down` does), but boot no lab.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fabricgen.basics.errors import LabError
from fabricgen.basics.version import __version__
from fabricgen.lab import runtime
from fabricgen.lab.plan import lab_id_of, read_plan
from fabricgen.lab.state import load_state, manifest_hash, running_lab
from tests import cli_runner

STATE_ENV = "FABRICGEN_LAB_STATE"
FRR_RUN = Path("/var/run/frr")
LLDPD_RUN = Path("/run/fabricgen-lldpd")
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("vtysh") is None or not Path("/usr/lib/frr/bgpd").exists() or not runtime.LLDPD.exists(),
    reason="lab down needs root, iproute2, Debian's frr and lldpd",
)


@pytest.fixture
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The lab's state root for this test, three levels down so that `../../../tmp/x` from it
    still lands inside the test's directory."""
    root = tmp_path / "a" / "b" / "c"
    root.mkdir(parents=True)
    monkeypatch.setenv(STATE_ENV, str(root))
    return root


def state_document(build_dir: Path, /, **changes: object) -> dict:
    """A state file as `lab up` writes it for `build_dir` (a lab up, nothing failed), with `changes`."""
    lab_id = lab_id_of(build_dir)
    document = {
        "build_dir": str(build_dir.resolve()),
        "lab_id": lab_id,
        "network": "backend",
        "manifest_sha256": "0" * 64,
        "fabricgen_version": __version__,
        "phase": "up",
        "namespaces": [f"fg{lab_id}-leaf1", f"fg{lab_id}-node1"],
        "interfaces": {"leaf1": {"Ethernet0": "Ethernet0"}, "node1": {"nic1": "nic1"}},
        "failures": [],
        "notes": [],
        "keys_given": [],
        "keys_generated": ["bgp-backend"],
        "started": 1_700_000_000.0,
        "up_seconds": 2.5,
        "loaded_at": 1_700_000_002.0,
    }
    document.update(changes)
    return document


def write_state(root: Path, build_dir: Path, document: dict | str | bytes) -> Path:
    """`document` as the state file of `build_dir`'s lab under `root`."""
    path = root / lab_id_of(build_dir) / "state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = document if isinstance(document, str | bytes) else json.dumps(document)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def fabricgen(*args: str | Path) -> cli_runner.Completed:
    return cli_runner.fabricgen(*args, env=dict(os.environ))


def namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout.split())


def assert_refused(result: cli_runner.Completed, state_file: Path) -> None:
    """Exit 2 naming the state file and how to remove the lab by hand, no traceback."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert str(state_file) in result.stderr and "Traceback" not in result.stderr
    assert "by hand" in result.stderr and f"fg{state_file.parent.name}-" in result.stderr, result.stderr


@pytest.fixture
def other_lab(tmp_path: Path, state_root: Path):
    """Another lab on this machine, as much of it as `down` could reach: its namespace, FRR run
    directory, lldpd config, state file and key directory. Removed after the test."""
    other = tmp_path / "other-build"
    lab_id = lab_id_of(other)
    namespace = f"fg{lab_id}-leaf1"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    frr = FRR_RUN / namespace
    lldpd = LLDPD_RUN / f"{namespace}.conf"
    try:
        frr.mkdir(parents=True)
        LLDPD_RUN.mkdir(parents=True, exist_ok=True)
        lldpd.write_text("configure system hostname leaf1\n")
        state = write_state(state_root, other, state_document(other, namespaces=[namespace]))
        (state.parent / "keys").mkdir()
        (state.parent / "keys" / "secrets.yaml").write_text("bgp-backend: other-labs-key\n")
        everything = [frr, lldpd, state, state.parent / "keys" / "secrets.yaml"]
        yield lab_id, namespace, everything
    finally:
        subprocess.run(["ip", "netns", "delete", namespace], check=False)
        shutil.rmtree(frr, ignore_errors=True)
        lldpd.unlink(missing_ok=True)


# --- lab down: a forged state file deletes nothing ---------------------------------------------------


@needs_root
@pytest.mark.parametrize("forged", ["../../../tmp/x", "absolute"])
def test_a_forged_lab_id_deletes_nothing_outside_the_state_directory(tmp_path: Path, state_root: Path, forged: str):
    """The acceptance case of issue 30: `down` removed the state file and key directory the
    file's own `lab_id` pointed to (here the test's tmp/x, outside the state root)."""
    victim = tmp_path / "tmp" / "x"
    lab_id = forged if forged != "absolute" else str(victim)
    assert (state_root / lab_id).resolve() == victim
    (victim / "keys").mkdir(parents=True)
    kept = [victim / "state.json", victim / "keys" / "secrets.yaml", victim / "lock"]
    for path in kept:
        path.write_text("someone else's\n")
    build_dir = tmp_path / "build"
    state = write_state(state_root, build_dir, state_document(build_dir, lab_id=lab_id, keys_dir=str(state_root / lab_id / "keys")))

    result = fabricgen("lab", "down", build_dir)
    assert [path for path in kept if not path.exists()] == []
    assert_refused(result, state)
    assert all(path.read_text() == "someone else's\n" for path in kept)
    assert state.exists()  # nothing of its own lab deleted either: the user decides


@needs_root
@pytest.mark.parametrize("how", ["its lab_id", "its namespaces"])
def test_a_state_file_naming_another_lab_does_not_remove_that_lab(tmp_path: Path, state_root: Path, other_lab, how: str):
    """A state file that carries another lab's id (or names its namespaces under this lab's
    id) is refused; the other lab's namespace, FRR directory, lldpd file, state and keys stay."""
    other_id, namespace, everything = other_lab
    build_dir = tmp_path / "build"
    if how == "its lab_id":
        forged = state_document(
            build_dir, lab_id=other_id, namespaces=[namespace], frr_dirs=[str(FRR_RUN / namespace)], keys_dir=str(state_root / other_id / "keys")
        )
    else:
        forged = state_document(build_dir, namespaces=[namespace])
    state = write_state(state_root, build_dir, forged)

    result = fabricgen("lab", "down", build_dir)
    assert namespace in namespaces()
    assert [path for path in everything if not path.exists()] == []
    assert_refused(result, state)


@needs_root
def test_down_removes_what_the_lab_id_names_whatever_the_build_became(tmp_path: Path, state_root: Path):
    """The build was rebuilt (another manifest) or deleted since `up`: `down` still removes the
    lab's own namespace and the FRR directory derived from it (the file names no directory)."""
    build_dir = tmp_path / "gone"  # never built: a deleted build directory
    lab_id = lab_id_of(build_dir)
    namespace = f"fg{lab_id}-leaf1"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    frr = FRR_RUN / namespace
    try:
        frr.mkdir(parents=True)
        write_state(state_root, build_dir, state_document(build_dir, namespaces=[namespace]))
        result = fabricgen("lab", "down", build_dir)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "removed" in result.stdout
        assert namespace not in namespaces() and not frr.exists() and not (state_root / lab_id).exists()
    finally:
        subprocess.run(["ip", "netns", "delete", namespace], check=False, capture_output=True)
        shutil.rmtree(frr, ignore_errors=True)


# --- the state file is read like a build directory: refused unless this lab wrote it ----------------

MAX_STATE_BYTES = 16 << 20

NOT_THIS_LABS = {
    "another build's path": {"build_dir": "/srv/builds/other"},
    "a namespace list as a string": {"namespaces": "fgabcdef-leaf1"},
    "a namespace that climbs out": {"namespaces": ["fg{id}-../../../tmp/x"]},
    "a number as text": {"started": "yesterday"},
    "NaN seconds": {"up_seconds": float("nan")},
    "a phase it never writes": {"phase": "deleting"},
    "a network the lab has not": {"network": "../etc"},
    "a manifest hash that is none": {"manifest_sha256": "../manifest"},
    "a failure naming a path": {"failures": [{"kind": "device", "device": "../../tmp/x", "at": 1.0}]},
    "a failure of an unknown kind": {"failures": [{"kind": "reboot", "device": "leaf1", "at": 1.0}]},
    "a note with an escape sequence": {"notes": ["\x1b]0;owned\x07"]},
    "a field this lab does not write": {"keys_dir": "/etc"},
    "a field no lab writes": {"owner": "root"},
    "a secret that is not a secret name": {"keys_generated": ["../x"]},
    "an endpoint naming a path": {"management": True, "endpoints": [{"device": "../../tmp/x", "port": 40000}]},
    "an endpoint port out of range": {"management": True, "endpoints": [{"device": "leaf1", "port": 70000}]},
    "an endpoint port as text": {"management": True, "endpoints": [{"device": "leaf1", "port": "22"}]},
}


@pytest.mark.parametrize("changes", NOT_THIS_LABS.values(), ids=NOT_THIS_LABS.keys())
def test_a_state_file_not_written_by_this_lab_is_refused_and_kept(tmp_path: Path, state_root: Path, changes: dict):
    build_dir = tmp_path / "build"
    lab_id = lab_id_of(build_dir)
    document = state_document(build_dir, **json.loads(json.dumps(changes).replace("{id}", lab_id)))
    path = write_state(state_root, build_dir, document)
    with pytest.raises(LabError) as refused:
        load_state(build_dir)
    (problem,) = refused.value.problems
    assert problem.file == str(path) and "by hand" in (problem.hint or "") and f"fg{lab_id}-" in (problem.hint or "")
    assert "\x1b" not in refused.value.report()
    assert path.exists()


def test_an_oversized_state_file_is_refused_before_it_is_parsed(tmp_path: Path, state_root: Path):
    build_dir = tmp_path / "build"
    document = json.dumps(state_document(build_dir, notes=["x" * 200] * (MAX_STATE_BYTES // 200 + 1)))
    path = write_state(state_root, build_dir, document)
    with pytest.raises(LabError, match="larger than") as refused:
        load_state(build_dir)
    assert refused.value.problems[0].file == str(path)


def test_a_symlink_a_fifo_or_a_file_others_may_write_is_refused_without_blocking(tmp_path: Path, state_root: Path):
    build_dir = tmp_path / "build"
    path = state_root / lab_id_of(build_dir) / "state.json"
    path.parent.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(state_document(build_dir)))

    path.symlink_to(elsewhere)
    with pytest.raises(LabError, match="symbolic link"):
        load_state(build_dir)
    path.unlink()

    os.mkfifo(path)
    held = os.open(path, os.O_RDWR | os.O_NONBLOCK)  # a writer that never writes: a blocking read waits forever
    try:
        with pytest.raises(LabError, match="not a regular file"):
            load_state(build_dir)
    finally:
        os.close(held)
    path.unlink()

    path.mkdir()  # found by the fuzzer: os.fdopen of a directory raised IsADirectoryError (a traceback)
    with pytest.raises(LabError, match="not a regular file"):
        load_state(build_dir)
    path.rmdir()

    path.write_text(json.dumps(state_document(build_dir)))
    path.chmod(0o666)
    with pytest.raises(LabError, match="others may write"):
        load_state(build_dir)


def test_a_state_directory_that_is_a_symlink_is_refused(tmp_path: Path, state_root: Path):
    build_dir = tmp_path / "build"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "state.json").write_text(json.dumps(state_document(build_dir)))
    (state_root / lab_id_of(build_dir)).symlink_to(elsewhere)
    with pytest.raises(LabError, match="symbolic link"):
        load_state(build_dir)
    assert (elsewhere / "state.json").exists()


def test_the_state_a_lab_writes_reads_back(tmp_path: Path, state_root: Path):
    """What `up` saves is what every later command loads: a private file in a private directory."""
    build_dir = tmp_path / "build"
    write_state(state_root, build_dir, state_document(build_dir))
    state = load_state(build_dir)
    assert state is not None and state.namespaces == [f"fg{lab_id_of(build_dir)}-leaf1", f"fg{lab_id_of(build_dir)}-node1"]
    state.notes.append("a note")
    state.save()
    again = load_state(build_dir)
    assert again == state
    assert (state_root / lab_id_of(build_dir) / "state.json").stat().st_mode & 0o777 == 0o600
    assert load_state(tmp_path / "no-lab") is None


# --- a running lab's state names only what its build's plan has ------------------------------------


def test_a_running_labs_state_names_only_devices_and_cables_of_its_build(lab_build: Path, state_root: Path):
    """verify, fail and restore act on the plan's namespaces and on failures of the plan's
    cables and devices; a state file naming others is refused naming the file."""
    plan = read_plan(lab_build)
    manifest = manifest_hash(lab_build)
    own = [plan.namespace(device) for device in (*plan.switches, *plan.nodes)]
    interfaces = {device: {port.port: port.ifname for port in plan.ports_of(device)} for device in (*plan.switches, *plan.nodes)}
    cases = {
        "a device the build has not": state_document(
            lab_build, manifest_sha256=manifest, namespaces=own, interfaces=interfaces, failures=[{"kind": "device", "device": "ghost", "at": 1.0}]
        ),
        "a cable the build has not": state_document(
            lab_build, manifest_sha256=manifest, namespaces=own, interfaces=interfaces, failures=[{"kind": "link", "cable": "C9999", "how": "down", "at": 1.0}]
        ),
        "a namespace the build has not": state_document(
            lab_build, manifest_sha256=manifest, namespaces=[*own, f"fg{plan.lab_id}-ghost"], interfaces=interfaces
        ),
        "a management endpoint of a switch the build has not": state_document(
            lab_build, manifest_sha256=manifest, namespaces=own, interfaces=interfaces, management=True, endpoints=[{"device": "ghost", "port": 40000}]
        ),
    }
    for name, document in cases.items():
        path = write_state(state_root, lab_build, document)
        result = fabricgen("lab", "restore", lab_build)
        assert result.returncode == 2, (name, result.stdout + result.stderr)
        assert str(path) in result.stderr and ("ghost" in result.stderr or "C9999" in result.stderr), (name, result.stderr)
    # the same state with only the build's names is a lab that is up
    write_state(state_root, lab_build, state_document(lab_build, manifest_sha256=manifest, namespaces=own, interfaces=interfaces))
    state, _ = running_lab(lab_build)
    assert state.namespaces == own


def test_no_lab_up_names_the_build_as_the_problem_s_file(tmp_path: Path, state_root: Path):
    """Found by the paths fuzz campaign: the build was named only inside the message."""
    with pytest.raises(LabError) as caught:
        running_lab(tmp_path / "build")
    (problem,) = caught.value.problems
    assert problem.file == str(tmp_path / "build") and problem.message == "no lab is up for this build"
