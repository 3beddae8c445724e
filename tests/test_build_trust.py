"""Build directories are hostile until checked: what the hostile tester of issue 16 did to them.

Each test edits a real build the way an attacker (or a careless hand) would, and usually updates
manifest.json to match: a sha256 is a checksum, not a trust boundary. Then the command must refuse
with exit 2 naming the file, and do nothing (no namespace, no deletion, no "no changes").
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from fabricgen.analysis.fabric import read_fabric
from fabricgen.basics.errors import AnalysisError, DiffError, LabError, OutputError, PushError
from fabricgen.basics.version import __version__
from fabricgen.build import build_dir, output
from fabricgen.build.build_dir import BomRow, BuildFiles, read_rows
from fabricgen.compiler.pipeline import build, compile_intent
from fabricgen.diff import diff_builds
from fabricgen.diff.render import render_markdown, render_text
from fabricgen.lab.plan import lab_id_of, read_plan
from fabricgen.push.inventory import read_targets
from fabricgen.reports import bom
from tests import cli_runner
from tests.conftest import INTENTS, REPO

LAB_INTENT = REPO / "tests" / "lab" / "two-units.yaml"
HOSTILE_NAME = "gpu0001\nnetns add fgpwned\nnetns exec fgpwned touch /tmp/fabricgen-pwned"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/lab/two-units.yaml built once; tests copy it before editing."""
    destination = tmp_path_factory.mktemp("trust") / "two-units"
    build(LAB_INTENT, destination)
    return destination


@pytest.fixture
def copy(pristine: Path, tmp_path: Path) -> Path:
    destination = tmp_path / "two-units"
    shutil.copytree(pristine, destination)
    return destination


def rehash(directory: Path) -> None:
    """Update manifest.json to the files as they are now: what an attacker who edits a build does."""
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["files"] = {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != "manifest.json"
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2))


def edit_csv(path: Path, row: int, column: str, value: str) -> None:
    """Set one cell (row 0 = first data row), written back as proper CSV (quoted as needed)."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    rows[row][column] = value
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue())


def fabricgen(*args: str) -> cli_runner.Completed:
    return cli_runner.fabricgen(*args)


def namespaces() -> set[str]:
    return set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout.split())


# --- 1. the lab: nothing from a build reaches a root command unchecked -------------------------------


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("vtysh") is None or not Path("/usr/lib/frr/bgpd").exists(),
    reason="lab up needs root, iproute2 and Debian's frr",
)
def test_lab_up_with_a_newline_in_a_cabled_device_name_exits_2_and_creates_no_namespace(copy: Path):
    """The root command execution: a device name with a newline went into `ip -batch -`."""
    edit_csv(copy / "cabling.csv", 0, "a_device", HOSTILE_NAME)
    rehash(copy)

    def ours() -> set[str]:
        # this build's lab namespaces and the one the injected command would add; other tests'
        # labs may come and go meanwhile (the suite runs on two workers)
        return {name for name in namespaces() if name.startswith(f"fg{lab_id_of(copy)}-") or name == "fgpwned"}

    assert not ours()
    try:
        result = fabricgen("lab", "up", str(copy))
        assert result.returncode == 2, result.stdout + result.stderr
        assert "cabling.csv:2: a_device: 'gpu0001\\nnetns add fgpwned" in result.stderr and "is not a valid name" in result.stderr
        assert "Traceback" not in result.stderr
        assert not ours()
        assert not Path("/tmp/fabricgen-pwned").exists()
    finally:
        for name in ours():  # only what this test may have created
            subprocess.run(["ip", "netns", "delete", name], check=False)
        fabricgen("lab", "down", str(copy))


def _set_topology_node_id(directory: Path) -> None:
    text = (directory / "topology.json").read_text()
    (directory / "topology.json").write_text(text.replace('"id": "be-spine01"', '"id": "be-spine01\\nnetns add x"', 1))


def _set_overlay_free_text(directory: Path) -> None:
    # the lab derives the kernel's names from the cabling plan; a hostile port name must be refused there
    edit_csv(directory / "cabling.csv", 3, "b_port", "Ethernet0 type veth peer name x")


def _set_address(directory: Path) -> None:
    rows = (directory / "ip-plan.csv").read_text().splitlines()
    index = next(i for i, row in enumerate(rows) if ",fabric," in row)
    edit_csv(directory / "ip-plan.csv", index - 1, "address", "10.0.0.1/31 dev lo\naddress add 1.2.3.4/32")


def _set_netplan_route(directory: Path) -> None:
    path = directory / "hosts" / "gpu0001" / "netplan.yaml"
    path.write_text(path.read_text().replace("- to: 10.4.0.0/31", '- to: "10.4.0.0/31 dev lo"', 1))


def _set_netplan_mtu(directory: Path) -> None:
    path = directory / "hosts" / "gpu0001" / "netplan.yaml"
    path.write_text(path.read_text().replace("mtu: 9000", 'mtu: "9000\\nnetns add x"', 1))


def _set_netplan_alias_bomb(directory: Path) -> None:
    # nine levels of ten aliases: a billion items for whatever walks the parsed data
    path = directory / "hosts" / "gpu0001" / "netplan.yaml"
    bomb = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    path.write_text(path.read_text() + bomb)


def _set_frr_shell(directory: Path) -> None:
    path = next((directory / "configs").glob("*/frr.conf"))
    path.write_text(path.read_text() + "end\nstart-shell bash -c 'touch /tmp/x'\n")


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda d: edit_csv(d / "cabling.csv", 0, "a_device", HOSTILE_NAME), "cabling.csv:2: a_device"),
        (_set_overlay_free_text, "cabling.csv:5: b_port"),
        (_set_topology_node_id, "topology.json: nodes[0].id"),
        (_set_address, "ip-plan.csv"),
        (_set_netplan_route, "netplan.yaml: network.ethernets.nic1.routes"),
        (_set_netplan_mtu, "netplan.yaml: network.ethernets.nic1.mtu"),
        (_set_netplan_alias_bomb, "the build file expands to more than 20,000 YAML nodes"),
        (_set_frr_shell, "frr.conf"),
    ],
    ids=[
        "device-name-newline",
        "port-name-spaces",
        "topology-id-newline",
        "address-with-command",
        "netplan-route",
        "netplan-mtu",
        "netplan-alias-bomb",
        "frr-start-shell",
    ],
)
def test_the_lab_plan_refuses_every_hostile_value_naming_file_and_field(copy: Path, edit, where: str):
    edit(copy)
    rehash(copy)
    with pytest.raises(LabError) as caught:
        read_plan(copy)
    report = caught.value.report()
    assert where in report, report
    assert "\n" not in report.split("\n", 1)[1].replace("\n  ", "")  # one escaped line per problem


def test_the_frr_check_names_the_line(copy: Path):
    path = next((copy / "configs").glob("*/frr.conf"))
    lines = path.read_text().count("\n")
    path.write_text(path.read_text() + "do write memory\n")
    rehash(copy)
    with pytest.raises(LabError) as caught:
        read_plan(copy)
    assert f"frr.conf:{lines + 1}: 'do' is not a command" in caught.value.report()


# --- 2. the manifest is checked, and so is everything it lists ---------------------------------------


def test_diff_of_a_hand_edited_config_with_the_manifest_left_alone_is_an_error_not_no_changes(pristine: Path, tmp_path: Path):
    edited = tmp_path / "edited"
    shutil.copytree(pristine, edited)
    config = next((edited / "configs").glob("*.cfg"))
    config.write_text(config.read_text().replace("router bgp", "router bgp 65000 ! edited", 1))
    with pytest.raises(DiffError) as caught:
        diff_builds(str(pristine), str(edited))
    report = caught.value.report()
    assert "new side" in report and f"{config.name}: differs from what the build wrote" in report


def test_missing_extra_and_edited_files_are_all_named_in_one_error(copy: Path):
    (copy / "topology.json").unlink()
    (copy / "notes.txt").write_text("mine")
    (copy / ".git").mkdir()
    (copy / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (copy / "configs" / "evil.cfg").symlink_to("/etc/passwd")
    frr = next((copy / "configs").glob("*/frr.conf"))
    frr.write_text(frr.read_text() + "! hand edit\n")
    with pytest.raises(LabError) as caught:
        BuildFiles(copy, LabError)
    messages = [p.format() for p in caught.value.problems]
    assert any("topology.json: missing" in m for m in messages)
    assert any("notes.txt: not part of the build" in m for m in messages)
    assert any(".git/: not part of the build" in m for m in messages)
    assert any("evil.cfg (a symbolic link): not part of the build" in m for m in messages)
    assert any("frr.conf: differs from what the build wrote" in m for m in messages)
    assert len(messages) == 5


def test_diff_analyze_push_and_lab_all_refuse_a_deleted_topology(copy: Path):
    (copy / "topology.json").unlink()
    for call, error in (
        (lambda: diff_builds(str(copy), str(copy)), DiffError),
        (lambda: read_fabric(copy), AnalysisError),
        (lambda: read_targets(copy), PushError),
        (lambda: read_plan(copy), LabError),
    ):
        with pytest.raises(error, match=r"topology\.json: missing"):
            call()


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (
            '{"fabricgen_version": "'
            + __version__
            + '", "intent": {"file": "x.yaml", "sha256": "'
            + "0" * 64
            + '"}, "files": {"../../etc/passwd": "'
            + "0" * 64
            + '"}}',
            "is not a plain relative file name",
        ),
        (
            '{"fabricgen_version": "' + __version__ + '", "intent": {"file": "x.yaml", "sha256": "' + "0" * 64 + '"}, "files": {"bom.csv": "; rm -rf /"}}',
            "String should match pattern",
        ),
        (
            '{"fabricgen_version": "' + __version__ + '", "intent": {"file": "x\\u001b[2J.yaml", "sha256": "' + "0" * 64 + '"}, "files": {}}',
            "control character",
        ),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
        ('{"fabricgen_version": "' + __version__ + '", "files": []}', "intent: Field required"),
    ],
    ids=["path-escape", "sha-not-hex", "escape-in-intent-name", "deep-nesting", "wrong-shape"],
)
def test_a_malformed_manifest_is_a_clear_error(copy: Path, manifest: str, expected: str):
    (copy / "manifest.json").write_text(manifest)
    with pytest.raises(DiffError) as caught:
        BuildFiles(copy, DiffError)
    assert expected in caught.value.report()


def test_a_manifest_larger_than_the_bound_is_refused_without_parsing(copy: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(build_dir, "MAX_MANIFEST_BYTES", 1000)
    with pytest.raises(LabError, match="larger than"):
        BuildFiles(copy, LabError)


def test_each_file_is_read_once_when_a_command_uses_it(copy: Path, monkeypatch: pytest.MonkeyPatch):
    reads: list[str] = []
    real = BuildFiles._read

    def counted(self, path):
        reads.append(path)
        return real(self, path)

    monkeypatch.setattr(BuildFiles, "_read", counted)
    read_plan(copy)
    assert len(reads) == len(set(reads)) == len(json.loads((copy / "manifest.json").read_text())["files"])


def test_bom_csv_reads_back_as_the_very_rows_the_report_wrote(write_intent):
    # one model of a bom.csv row: the report builds its rows as it, every command reads them back as it
    compiled = compile_intent(write_intent("gpus: 256\noob: {}\nlayout: {}\nbom: {spares_percent: 5}\n")).compiled
    written = bom.bom_rows(compiled)
    assert any(row.length_m is not None for row in written) and any(row.alternatives for row in written)
    assert read_rows(bom.render_bom(compiled)["bom.csv"], BomRow, "bom.csv", DiffError) == written


@pytest.mark.parametrize(
    "field, value",
    [("quantity", True), ("quantity", 12.0), ("quantity", -1), ("quantity", 10**12), ("length_m", float("inf")), ("length_m", -2.0), ("length_m", True)],
)
def test_a_bom_row_takes_exact_numbers(field, value):
    row = {"section": "Backend network", "pid": "QDD-400G-DR4-S", "description": "400G DR4", "quantity": 12, "length_m": 3.0}
    BomRow(**row)
    with pytest.raises(ValidationError):
        BomRow(**{**row, field: value})


@pytest.mark.parametrize(
    "column, cell",
    [
        ("quantity", "12.0"),
        ("quantity", "-1"),
        ("quantity", "1e3"),
        ("quantity", " 12"),
        ("quantity", "1" * 13),
        ("length_m", "inf"),
        ("length_m", "-2"),
        ("length_m", "nan"),
    ],
)
def test_a_bom_cell_the_report_would_not_write_is_refused_by_row_and_column(column, cell):
    cells = {
        "section": "Backend network",
        "pid": "QDD-400G-DR4-S",
        "description": "400G DR4",
        "quantity": "12",
        "length_m": "3",
        "basis": "",
        "alternatives": "",
    }
    text = ",".join(bom.COLUMNS) + "\n" + ",".join({**cells, column: cell}.values()) + "\n"
    with pytest.raises(DiffError) as caught:
        read_rows(text, BomRow, "bom.csv", DiffError)
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (2, (column,))


def test_a_csv_with_other_columns_is_refused_naming_the_header(copy: Path):
    text = (copy / "cabling.csv").read_text()
    (copy / "cabling.csv").write_text(text.replace("cable_id,", "cable_id,extra,", 1))
    rehash(copy)
    with pytest.raises(LabError, match=r"cabling.csv:1: the header is"):
        read_plan(copy)


# --- 3. build -o deletes only what is ours ---------------------------------------------------------------


def test_build_refuses_a_build_directory_holding_a_git_repository_and_a_users_file(pristine: Path, tmp_path: Path):
    destination = tmp_path / "out"
    shutil.copytree(pristine, destination)
    (destination / ".git").mkdir()
    (destination / ".git" / "config").write_text("[core]\n")
    (destination / "my-notes.md").write_text("years of work")
    before = sorted(str(p.relative_to(destination)) for p in destination.rglob("*"))
    with pytest.raises(OutputError) as caught:
        build(LAB_INTENT, destination)
    message = caught.value.problems[0].message
    assert ".git/" in message and "my-notes.md" in message
    assert sorted(str(p.relative_to(destination)) for p in destination.rglob("*")) == before
    assert (destination / "my-notes.md").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left either


def test_a_build_of_another_version_is_still_ours_to_replace(pristine: Path, tmp_path: Path):
    destination = tmp_path / "out"
    shutil.copytree(pristine, destination)
    manifest = json.loads((destination / "manifest.json").read_text())
    manifest["fabricgen_version"] = "0.0.1"
    (destination / "manifest.json").write_text(json.dumps(manifest))
    build(LAB_INTENT, destination)
    assert json.loads((destination / "manifest.json").read_text())["fabricgen_version"] != "0.0.1"


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_staging_left_by_dead_builds_is_removed_and_nothing_else(tmp_path: Path):
    dead = _dead_pid()
    stale = [tmp_path / f".out.{dead}-abcdefgh.partial", tmp_path / f".out.{dead}-ijklmnop.old"]
    live = tmp_path / f".out.{os.getpid()}-qrstuvwx.partial"  # a build of this very process
    other_name = tmp_path / f".other.{dead}-abcdefgh.partial"  # another destination's
    near_miss = tmp_path / f".out.{dead}-abc.partial"  # not our exact pattern
    for directory in (*stale, live, other_name, near_miss):
        (directory / "configs").mkdir(parents=True)
        (directory / "configs" / "x.cfg").write_bytes(b"x" * 1000)
    # a build still running in another PID namespace: its pid looks dead here, but it holds the lock
    locked = tmp_path / f".out.{dead}-lockedzz.partial"
    locked.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl, os, sys, time; fd = os.open({str(locked)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        build(LAB_INTENT, tmp_path / "out")
        left = sorted(p.name for p in tmp_path.iterdir())
    finally:
        holder.kill()
        holder.wait()
    assert left == sorted(["out", live.name, other_name.name, near_miss.name, locked.name])


def test_a_build_killed_while_writing_leaves_staging_that_the_next_build_removes(tmp_path: Path):
    """kill -9 in the write path: the previous build stays whole, the next build cleans up."""
    destination = tmp_path / "out"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    previous = (destination / "manifest.json").read_bytes()
    for _attempt in range(5):
        process = subprocess.Popen(
            [sys.executable, "-m", "fabricgen", "build", str(REPO / "bench" / "intents" / "bench-2048.yaml"), "-o", str(destination)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if any(p.name.endswith(".partial") for p in tmp_path.iterdir()):
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
        process.wait()
        if process.returncode == -signal.SIGKILL:
            break
    else:
        pytest.skip("the build finished before a staging directory was seen")
    assert (destination / "manifest.json").read_bytes() == previous  # killed before the swap: untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")], "the killed build left its staging directory"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_write_build_refuses_unsafe_paths_through_the_trust_rule(tmp_path: Path):
    for path in ("configs/a\nb.cfg", "configs/../../x", ".hidden"):
        with pytest.raises(OutputError):
            output.write_build({path: b"x"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- 4. analyze, push and diff read through the same models -------------------------------------------


def test_analyze_on_a_structurally_wrong_topology_is_a_clear_error(copy: Path):
    topology = json.loads((copy / "topology.json").read_text())
    topology["links"][0]["speed_gbps"] = "fast"
    del topology["links"][1]["source"]
    (copy / "topology.json").write_text(json.dumps(topology))
    rehash(copy)
    result = fabricgen("analyze", str(copy))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "topology.json: links[0].speed_gbps" in result.stderr and "topology.json: links[1].source: Field required" in result.stderr


def test_push_refuses_a_hostile_switch_name(copy: Path):
    _set_topology_node_id(copy)
    rehash(copy)
    with pytest.raises(PushError, match=r"nodes\[0\]\.id"):
        read_targets(copy)


def test_diff_output_cannot_carry_terminal_escapes_or_close_its_markdown_fence(pristine: Path, tmp_path: Path):
    edited = tmp_path / "edited"
    shutil.copytree(pristine, edited)
    config = next((edited / "configs").glob("*.cfg"))
    config.write_text(config.read_text() + "\x1b[2J\x1b]0;owned\x07\n```\n<script>x</script>\n")
    rehash(edited)
    result = diff_builds(str(pristine), str(edited))
    text = "\n".join(line for line, _ in render_text(result))
    assert "\x1b" not in text and "\\x1b[2J" in text
    markdown = render_markdown(result)
    assert "\x1b" not in markdown and "````diff" in markdown and "\n````\n" in markdown


def test_push_hands_the_drivers_the_verified_bytes_not_the_build_file(copy: Path, tmp_path: Path):
    """Checking a file and a driver reading it later are two moments: with a staging directory the
    drivers get a private copy of the bytes that were checked, so an edit in between reaches no
    switch. (No switch is contacted here: read_targets only prepares the rollout.)"""
    staging = tmp_path / "staging"
    staging.mkdir()
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("defaults: {host: 127.0.0.1}\n")
    targets = {t.name: t for t in read_targets(copy, "be-spine01,be-su01-leaf1", inventory, staging=staging)}
    spine, leaf = targets["be-spine01"], targets["be-su01-leaf1"]
    checked = {
        "spine": (copy / "configs" / "be-spine01.cfg").read_bytes(),
        "frr": (copy / "configs" / "be-su01-leaf1" / "frr.conf").read_bytes(),
        "config_db": (copy / "configs" / "be-su01-leaf1" / "config_db.json").read_bytes(),
    }
    for path in (copy / "configs" / "be-spine01.cfg", copy / "configs" / "be-su01-leaf1" / "frr.conf", copy / "configs" / "be-su01-leaf1" / "config_db.json"):
        path.write_text("username evil password 0 x role network-admin\n")
    assert spine.config.is_relative_to(staging) and leaf.config.is_relative_to(staging)
    assert spine.config.read_bytes() == checked["spine"]
    assert (leaf.config / "frr.conf").read_bytes() == checked["frr"]
    assert (leaf.config / "config_db.json").read_bytes() == checked["config_db"]


def test_push_refuses_a_config_that_is_not_utf8_even_with_the_manifest_updated(copy: Path, tmp_path: Path):
    # found by `make fuzz`: an invalid UTF-8 sequence in a leaf's frr.conf, manifest re-signed
    frr = copy / "configs" / "be-su01-leaf1" / "frr.conf"
    frr.write_bytes(frr.read_bytes() + b"\xf4\x90\x80\x80\n")
    rehash(copy)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("defaults: {host: 127.0.0.1}\n")
    with pytest.raises(PushError) as caught:
        read_targets(copy, "be-su01-leaf1", inventory, staging=tmp_path)
    assert caught.value.problems[0].file == str(frr) and "not UTF-8" in caught.value.problems[0].message


# --- 5. an edited build never crashes a command: the reports agree with each other and the model ----------


def _edit_topology(directory: Path, edit) -> None:
    topology = json.loads((directory / "topology.json").read_text())
    edit(topology)
    (directory / "topology.json").write_text(json.dumps(topology))


def _first(topology: dict, role: str) -> dict:
    return next(node for node in topology["nodes"] if node["role"] == role)


def _node_index(directory: Path, name: str) -> int:
    return [node["id"] for node in json.loads((directory / "topology.json").read_text())["nodes"]].index(name)


def _fabric_row(directory: Path) -> int:
    return next(i for i, row in enumerate(csv.DictReader(io.StringIO((directory / "cabling.csv").read_text()))) if row["kind"] == "fabric")


EDITED_BUILDS = {
    # cabling.csv says the leaf's uplink goes to the other spine; topology.json keeps the link as built
    "cable-moved": (lambda d: edit_csv(d / "cabling.csv", _fabric_row(d), "b_device", "be-spine02"), lambda d: f"cabling.csv:{_fabric_row(d) + 2}: b_device"),
    "cable-speed-0": (lambda d: edit_csv(d / "cabling.csv", 0, "speed", "0G"), lambda d: "cabling.csv:2: speed"),
    "link-speed-0": (lambda d: _edit_topology(d, lambda t: [link.update(speed_gbps=0) for link in t["links"]]), lambda d: "topology.json: links[0].speed_gbps"),
    "leaf-network": (
        lambda d: _edit_topology(d, lambda t: _first(t, "leaf").update(network="frontend")),
        lambda d: f"topology.json: nodes[{_node_index(d, 'be-su01-leaf1')}].network",
    ),
    "qos-not-numbers": (
        lambda d: _edit_topology(d, lambda t: _first(t, "leaf")["qos"].update(roce_dscp=["x"])),
        lambda d: f"topology.json: nodes[{_node_index(d, 'be-su01-leaf1')}].qos",
    ),
    "summary-gpus": (
        lambda d: _edit_topology(d, lambda t: t["graph"]["backend"].update(gpus=10**30)),
        lambda d: "topology.json: graph.backend.gpus: gpus is 1000000000000000000000000000000; expected a count 1 to 262,144",
    ),
    "qos-out-of-range": (
        lambda d: _edit_topology(d, lambda t: _first(t, "leaf")["qos"].update(roce_dscp=[999], lossless_priority=99)),
        lambda d: f"topology.json: nodes[{_node_index(d, 'be-su01-leaf1')}].qos",
    ),
}


@pytest.mark.parametrize(
    ("command", "edit"),
    [
        (command, edit)
        for command in ("export containerlab", "testplan", "analyze")
        for edit in EDITED_BUILDS
        if not (command == "analyze" and edit.startswith("cable-"))  # analyze reads topology.json only
    ],
)
def test_an_edited_build_with_its_manifest_updated_is_exit_2_naming_the_place(copy: Path, tmp_path: Path, command: str, edit: str):
    """export containerlab (a KeyError), testplan (a ValidationError, a ValueError) and analyze
    (zero speeds: a ValueError) crashed on these; the reader now refuses them for every command."""
    change, where = EDITED_BUILDS[edit]
    change(copy)
    rehash(copy)
    options = [] if command == "analyze" else ["-o", str(tmp_path / "out")]
    result = fabricgen(*command.split(), str(copy), *options)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert where(copy) in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def _set_netplan_mtu_low(directory: Path) -> None:
    path = directory / "hosts" / "gpu0001" / "netplan.yaml"
    path.write_text(path.read_text().replace("mtu: 9000", "mtu: 100", 1))


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (_set_netplan_mtu_low, "netplan.yaml: network.ethernets.nic1.mtu: Input should be greater than or equal to 1280"),
        (lambda d: _edit_topology(d, lambda t: t["graph"]["backend"].update(gpus=72, nodes=1)), "topology.json: graph.backend.gpus: 72 GPUs per node"),
    ],
    ids=["netplan-mtu-100", "72-gpus-per-node"],
)
def test_testplan_refuses_what_its_plan_cannot_hold_naming_the_place(copy: Path, tmp_path: Path, edit, where: str):
    """Both were a ValidationError of testplan.json's models (a traceback)."""
    edit(copy)
    rehash(copy)
    result = fabricgen("testplan", str(copy), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert where in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def _cabling_lines(directory: Path) -> list[str]:
    return (directory / "cabling.csv").read_text().splitlines()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: (d / "cabling.csv").write_text("\n".join(_cabling_lines(d)[:-1]) + "\n"), "topology.json: links[63]: BE-S00032 is not in cabling.csv"),
        (
            lambda d: (d / "cabling.csv").write_text("\n".join([*_cabling_lines(d), _cabling_lines(d)[5]]) + "\n"),
            "cabling.csv:66: cable_id: BE-00005 is listed twice (first on line 6)",
        ),
        (lambda d: edit_csv(d / "cabling.csv", 3, "cable_id", "BE-99999"), "cabling.csv:5: cable_id: BE-99999 is not a link of topology.json"),
        (lambda d: edit_csv(d / "cabling.csv", 3, "a_port", "nic7"), "cabling.csv:5: a_port: 'nic7'; topology.json's link BE-00004 ends at gpu0001 nic4"),
        (lambda d: edit_csv(d / "cabling.csv", 3, "kind", "fabric"), "cabling.csv:5: kind: 'fabric'; topology.json's link BE-00004 is host"),
        (lambda d: _edit_topology(d, lambda t: t["links"].append(dict(t["links"][0]))), "topology.json: links[64].key: BE-00001 is the key of links[0] too"),
        (
            lambda d: _edit_topology(d, lambda t: t["links"][2].update(target="be-nowhere")),
            "topology.json: links[2].target: 'be-nowhere' is not a node of topology.json",
        ),
        (lambda d: _edit_topology(d, lambda t: t["nodes"].append(dict(t["nodes"][0]))), "topology.json: nodes[22].id: be-spine01 is the id of nodes[0] too"),
    ],
    ids=["cable-missing", "cable-twice", "cable-unknown", "end-differs", "kind-differs", "link-twice", "link-to-nowhere", "node-twice"],
)
def test_cabling_csv_and_topology_json_are_checked_against_each_other(copy: Path, edit, expected: str):
    edit(copy)
    rehash(copy)
    with pytest.raises(LabError) as caught:
        files = BuildFiles(copy, LabError)
        files.topology()
        files.cabling()
    assert expected in caught.value.report(), caught.value.report()
