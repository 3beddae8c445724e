"""fabricgen diff: real builds of tiny fabrics with one known change each.

The expected numbers come from the change itself, not from the tool: tiny-nxos is 2 DGX nodes,
8 rail leaves (2 host ports each, one link to each spine) and 2 spines sharing ASN 64512."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fabricgen.compiler.pipeline import build
from fabricgen.diff import diff_builds
from fabricgen.diff.compare import frr_bgp
from fabricgen.diff.render import render_markdown
from tests import cli_runner
from tests.conftest import REPO

TINY_NXOS = (REPO / "tests" / "golden" / "tiny-nxos.yaml").read_text()
TINY_SONIC = (REPO / "tests" / "golden" / "tiny-sonic.yaml").read_text()
LEAVES = [f"be-su01-leaf{rail}" for rail in range(1, 9)]
SPINES = ["be-spine01", "be-spine02"]
SPINE_ASN = "64512"


def _build(directory: Path, name: str, text: str) -> Path:
    intent = directory / f"{name}.yaml"
    intent.write_text(text)
    _, destination = build(intent, directory / f"{name}-build")
    return destination


def _cli(*args: str, cwd: Path | None = None) -> cli_runner.Completed:
    return cli_runner.fabricgen("diff", *args, cwd=cwd)


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    """tiny-nxos as is, with a third spine, with another ECN minimum; tiny-sonic as is and with
    another fabric-link pool."""
    directory = tmp_path_factory.mktemp("diff-builds")
    return {
        "base": _build(directory, "base", TINY_NXOS),
        "spine": _build(directory, "spine", TINY_NXOS.replace("backend:\n", "backend:\n  spine: {count: 3}\n")),
        "ecn": _build(
            directory,
            "ecn",
            TINY_NXOS.replace("backend:\n", "backend:\n  qos:\n    ecn:\n      400G: {min_kbytes: 800, max_kbytes: 3000, drop_probability: 7}\n", 1),
        ),
        "sonic": _build(directory, "sonic", TINY_SONIC),
        "sonic-pool": _build(directory, "sonic-pool", TINY_SONIC.replace("backend:\n", "backend:\n  pools: {fabric_links: 10.16.0.0/13}\n")),
    }


def test_a_spine_added_shows_as_a_device_its_cables_its_sessions_and_its_parts(builds):
    result = diff_builds(str(builds["base"]), str(builds["spine"]))
    assert result.changed
    assert [(d.name, d.status) for d in result.devices] == [("be-spine03", "added")]
    # one new link from each of the 8 leaves to the new spine, nothing else moves
    added = result.cabling.added
    assert len(added) == 8 and not result.cabling.removed and not result.cabling.recabled
    ends = [sorted((c.a.split(":")[0], c.b.split(":")[0])) for c in added]
    assert sorted(leaf for spine, leaf in ends if spine == "be-spine03") == LEAVES
    # BGP (the NX-OS routing twins): every leaf gains exactly one neighbor, the new spine in the spines' ASN
    by_device = {change.device: change for change in result.bgp}
    for leaf in LEAVES:
        assert [(n.remote_as, n.description.split()[0]) for n in by_device[leaf].added] == [(SPINE_ASN, "be-spine03")], leaf
        assert not by_device[leaf].removed
        # a renumbered link is the same neighbor with a new address, never another remote-as
        assert all(old.remote_as == new.remote_as == SPINE_ASN for old, new in by_device[leaf].changed)
    assert sorted(n.description.split()[0] for n in by_device["be-spine03"].added) == LEAVES
    # BOM: one more switch, two optics and one cable per new link
    assert {(b.pid, b.delta) for b in result.bom} == {("N9K-C9364D-GX2A", 1), ("QDD-400G-DR4-S", 16), ("CB-M12-M12-SMF", 8)}
    [spine_file] = result.device_files["be-spine03"]
    assert (spine_file.path, spine_file.status) == ("configs/be-spine03.cfg", "added")
    assert spine_file.diff.startswith("--- /dev/null\n+++ b/configs/be-spine03.cfg\n")
    assert "hostname be-spine03" in spine_file.diff


def test_an_ecn_change_is_a_qos_change_on_every_switch_and_nothing_else(builds):
    result = diff_builds(str(builds["base"]), str(builds["ecn"]))
    counts = result.counts()
    assert counts["devices"] == {"added": 0, "removed": 0, "changed": 0}
    assert counts["cables"] == {"added": 0, "removed": 0, "recabled_ports": 0, "changed": 0}
    assert counts["bgp_neighbors"]["devices"] == 0 and not result.addresses and not result.bom
    [change] = result.qos
    assert (change.value, change.old, change.new) == ("ecn.400G.min_kbytes", 950, 800)
    assert sorted(change.switches) == sorted(SPINES + LEAVES)
    # the switch configs carry it; the GPU nodes' files do not change
    assert sorted(result.device_files) == sorted(SPINES + LEAVES)
    for device, files in result.device_files.items():
        [config] = files
        assert config.path == f"configs/{device}.cfg"
        removed = [line for line in config.diff.splitlines() if line.startswith("-    random")]
        added = [line for line in config.diff.splitlines() if line.startswith("+    random")]
        assert removed and all("minimum-threshold 950 kbytes" in line for line in removed), device
        assert added and all("minimum-threshold 800 kbytes" in line for line in added), device
    text = render_markdown(result)
    assert "ecn.400G.min_kbytes" in text and "950 → 800" in text


def test_a_fabric_link_pool_change_renumbers_every_link_end_and_session(builds):
    result = diff_builds(str(builds["sonic"]), str(builds["sonic-pool"]))
    # 8 leaves x 2 spines = 16 links, both ends addressed
    assert len(result.addresses) == 32
    assert {a.status for a in result.addresses} == {"changed"} and {a.key[3] for a in result.addresses} == {"fabric"}
    for change in result.addresses:
        assert change.old["address"].startswith("10.8.") and change.new["address"].startswith("10.16."), change.key
    # SONiC frr.conf: each leaf has 2 neighbors, each spine 8; all renumbered, none added or removed
    counts = result.counts()["bgp_neighbors"]
    assert counts == {"added": 0, "removed": 0, "changed": 32, "devices": 10}
    assert not result.devices and not result.cabling.added and not result.bom and not result.qos


def test_identical_builds_are_no_change_and_exit_0(builds, tmp_path, monkeypatch):
    again = _build(tmp_path, "again", TINY_NXOS)
    result = _cli(str(builds["base"]), str(again))
    assert result.returncode == 0, result.stderr
    assert "no changes" in result.stdout
    # an intent file against its own build: built on the fly, still no change; the temp build is
    # gone (a temporary directory of its own: other diffs on the machine make and remove theirs in /tmp)
    intent = tmp_path / "again.yaml"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    result = _cli(str(intent), str(again), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["changed"] is False
    assert list(scratch.iterdir()) == []


def test_changes_exit_1_and_json_holds_the_same_counts(builds):
    result = _cli(str(builds["base"]), str(builds["spine"]), "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["counts"]["devices"]["added"] == 1 and document["counts"]["cables"]["added"] == 8
    assert document["counts"]["bgp_neighbors"]["added"] == 16  # 8 on the leaves, 8 on the new spine
    assert len(document["cables"]["added"]) == 8
    assert sum(len(c["added"]) for c in document["bgp"]) == 16
    assert document["files"]["devices"]["be-spine03"][0]["status"] == "added"
    text = _cli(str(builds["base"]), str(builds["spine"]))
    assert text.returncode == 1 and "be-spine03" in text.stdout and "\x1b[" not in text.stdout  # plain off a terminal


def test_markdown_is_capped_and_says_what_it_left_out(builds):
    full = _cli(str(builds["base"]), str(builds["spine"]), "--format", "markdown")
    assert full.returncode == 1
    assert "<details><summary><code>be-spine03</code>" in full.stdout and "```diff" in full.stdout
    assert "Left out" not in full.stdout
    capped = _cli(str(builds["base"]), str(builds["spine"]), "--format", "markdown", "--max-bytes", "6000")
    assert capped.returncode == 1
    assert len(capped.stdout.encode()) <= 6000 < len(full.stdout.encode())
    assert "Left out to stay under 6,000 bytes" in capped.stdout
    # the semantic tables come first: the BOM delta survives the cap
    assert "| N9K-C9364D-GX2A |" in capped.stdout and "| +1 |" in capped.stdout


def test_bad_sides_exit_2_naming_the_side(builds, tmp_path):
    missing = _cli(str(tmp_path / "nope"), str(builds["base"]))
    assert missing.returncode == 2 and "old side" in missing.stderr and "nope" in missing.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    not_build = _cli(str(builds["base"]), str(empty))
    assert not_build.returncode == 2 and "new side" in not_build.stderr and "no manifest.json" in not_build.stderr

    tampered = tmp_path / "tampered"
    shutil.copytree(builds["base"], tampered)
    config = tampered / "configs" / "be-su01-leaf1.cfg"
    config.write_text(config.read_text().replace("950 kbytes", "700 kbytes"))
    sha = _cli(str(tampered), str(builds["ecn"]))
    assert sha.returncode == 2 and "old side" in sha.stderr and "be-su01-leaf1.cfg: differs from what the build wrote" in sha.stderr

    other = tmp_path / "other-version"
    shutil.copytree(builds["base"], other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["fabricgen_version"] = "0.0.1"
    (other / "manifest.json").write_text(json.dumps(manifest))
    version = _cli(str(builds["base"]), str(other))
    assert version.returncode == 2 and "new side" in version.stderr and "built by fabricgen 0.0.1" in version.stderr

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ngpus: 16\nbackend:\n  leaf: {model: NO-SUCH-SWITCH}\n")
    failed = _cli(str(builds["base"]), str(bad))
    assert failed.returncode == 2 and "new side" in failed.stderr and "does not build" in failed.stderr
    assert "NO-SUCH-SWITCH" in failed.stderr  # the compiler's own report follows
    for result in (missing, not_build, sha, version, failed):
        assert "Traceback" not in result.stderr


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git repository with intents/tiny.yaml (tiny-nxos) committed, then given a third spine."""
    repo = tmp_path / "repo"
    (repo / "intents").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "intents" / "tiny.yaml").write_text(TINY_NXOS)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "tiny")
    (repo / "intents" / "tiny.yaml").write_text(TINY_NXOS.replace("backend:\n", "backend:\n  spine: {count: 3}\n"))
    return repo


def test_intent_at_a_git_revision_against_the_working_tree(repo):
    result = _cli("intents/tiny.yaml@HEAD", "intents/tiny.yaml", "--format", "json", cwd=repo)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["counts"]["devices"]["added"] == 1 and document["counts"]["cables"]["added"] == 8
    # from a subdirectory, the path is relative to where the user stands
    same = _cli("tiny.yaml@HEAD", "tiny.yaml", "--format", "json", cwd=repo / "intents")
    assert json.loads(same.stdout)["counts"] == document["counts"]

    unknown = _cli("intents/tiny.yaml@no-such-branch", "intents/tiny.yaml", cwd=repo)
    assert unknown.returncode == 2 and "old side" in unknown.stderr and "unknown git revision 'no-such-branch'" in unknown.stderr


def test_an_intent_new_in_the_change_is_an_empty_side(repo):
    (repo / "intents" / "new.yaml").write_text(TINY_NXOS.replace("name: tiny-nxos", "name: new"))
    result = _cli("intents/new.yaml@HEAD", "intents/new.yaml", "--format", "json", cwd=repo)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["old"]["empty"] is True
    assert any("does not exist at HEAD" in note for note in document["notes"])
    assert document["counts"]["devices"]["added"] == 12  # 10 switches and 2 GPU nodes
    assert document["counts"]["files"]["removed"] == 0


def _script(repo: Path, comment: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ["bash", str(REPO / "scripts" / "intent-diff.sh"), "HEAD", str(comment)]
    return subprocess.run(command, check=False, cwd=repo, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # scripts/intent-diff.sh runs fabricgen as processes, 4 times
def test_the_ci_script_writes_one_comment_and_fails_only_on_errors(repo, tmp_path):
    comment = tmp_path / "comment.md"
    changed = _script(repo, comment)
    assert changed.returncode == 0, changed.stderr  # diff's exit 1 (changes) is not a failure
    text = comment.read_text()
    assert text.startswith("<!-- fabricgen-intent-diff -->")
    assert "intents/tiny.yaml" in text and "be-spine03" in text and "| N9K-C9364D-GX2A |" in text

    _git(repo, "commit", "-qam", "third spine")
    same = _script(repo, comment)
    assert same.returncode == 0 and "`intents/tiny.yaml`: no change" in comment.read_text()

    (repo / "intents" / "tiny.yaml").write_text("name: tiny\ngpus: 16\nbackend:\n  leaf: {model: NO-SUCH-SWITCH}\n")
    broken = _script(repo, comment)
    assert broken.returncode == 2
    assert "new side intents/tiny.yaml: the intent does not build" in comment.read_text() and "NO-SUCH-SWITCH" in comment.read_text()

    # the report quotes the intent's keys: a run of backticks in one cannot close the comment's
    # code block and turn the rest of the report into markdown
    (repo / "intents" / "tiny.yaml").write_text('name: tiny\ngpus: 16\n"x````\\n# Approved [click](https://example.com)": 1\n')
    hostile = _script(repo, comment)
    assert hostile.returncode == 2
    block = comment.read_text().split("fabricgen diff failed (exit 2)\n\n", 1)[1]
    fence, rest = block.split("\n", 1)
    assert fence == "`````" and "x````" in rest.split("\n" + fence + "\n")[0]


def test_frr_neighbors_take_their_peer_groups_remote_as():
    text = (
        "router bgp 65001\n neighbor SPINES peer-group\n neighbor SPINES remote-as 65000\n"
        " neighbor 10.0.0.1 peer-group SPINES\n neighbor 10.0.0.3 remote-as 65009\n neighbor 10.0.0.3 description x y\n"
        " neighbor Ethernet0 interface peer-group SPINES\nexit\n"
        "router bgp 65001 vrf Vrf-ai\n neighbor 10.9.9.9 remote-as 1\nexit\n"
    )
    asn, neighbors = frr_bgp(text)
    assert asn == "65001"
    assert {n.address: n.remote_as for n in neighbors.values()} == {"10.0.0.1": "65000", "10.0.0.3": "65009", "Ethernet0": "65000"}
    assert neighbors["10.0.0.3"].description == "x y"


def test_a_catalog_outside_the_intents_directory_needs_catalog_dir_on_both_sides(repo):
    # intents/tiny.yaml names ../hardware/extra.yaml: outside its directory, so refused unless
    # --catalog-dir names hardware/; on the @HEAD side that directory comes from HEAD's tree
    (repo / "hardware").mkdir()
    (repo / "hardware" / "extra.yaml").write_text("cables:\n  MY-PATCH:\n    description: a patch cable\n    media: copper\n    connector: RJ45\n")
    intent = repo / "intents" / "tiny.yaml"
    intent.write_text(TINY_NXOS + "catalog: [../hardware/extra.yaml]\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "own hardware")
    intent.write_text(TINY_NXOS.replace("backend:\n", "backend:\n  spine: {count: 3}\n") + "catalog: [../hardware/extra.yaml]\n")

    refused = _cli("intents/tiny.yaml@HEAD", "intents/tiny.yaml", cwd=repo)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "old side intents/tiny.yaml@HEAD" in refused.stderr and "--catalog-dir" in refused.stderr

    allowed = _cli("intents/tiny.yaml@HEAD", "intents/tiny.yaml", "--catalog-dir", "hardware", "--format", "json", cwd=repo)
    assert allowed.returncode == 1, allowed.stderr
    assert json.loads(allowed.stdout)["counts"]["devices"]["added"] == 1


def test_an_nxos_to_eos_change_shows_by_device(tmp_path):
    """cisco-256-gpu with its backend moved from NX-OS to EOS (the same switches on
    DCS-7060DX5-64S): every backend leaf and spine is a device whose model and NOS changed, each
    with its own config diff; the frontend, the OOB switches and the cabling plan's ends stay."""
    import yaml

    doc = yaml.safe_load((REPO / "intents" / "cisco-256-gpu.yaml").read_text())
    old = _build(tmp_path, "nxos", yaml.safe_dump(doc, sort_keys=False))
    doc["backend"]["leaf"] = {"model": "DCS-7060DX5-64S", "nos": "eos"}
    doc["backend"]["spine"] = {"model": "DCS-7060DX5-64S", "nos": "eos"}
    new = _build(tmp_path, "eos", yaml.safe_dump(doc, sort_keys=False))
    result = _cli(str(old), str(new), "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    backend = {d["device"]: d for d in document["devices"] if d["device"].startswith("be-")}
    topology = json.loads((new / "topology.json").read_text())
    switches = {n["id"] for n in topology["nodes"] if n["id"].startswith("be-") and n.get("nos") == "eos"}
    assert switches and set(backend) == switches  # every backend switch, and only they
    for name, device in backend.items():
        assert device["status"] == "changed"
        changes = {c["attribute"]: (c["old"], c["new"]) for c in device["changes"]}
        assert changes["nos"] == ("nxos", "eos") and changes["model"][1] == "DCS-7060DX5-64S", name
    files = document["files"]["devices"]
    assert switches <= set(files)  # each switch's config diff is under its own name
    assert all(any(f["path"] == f"configs/{name}.cfg" and f["status"] == "changed" for f in files[name]) for name in switches)
    assert not [d for d in document["devices"] if not d["device"].startswith("be-")]  # frontend and OOB untouched
    text = _cli(str(old), str(new))
    assert "be-su01-leaf1" in text.stdout and "nxos -> eos" in text.stdout.replace("→", "->")
