"""`fabricgen diff`: settings named in the summary (an MTU change is one line there, not thousands
of diff lines to read) and --stat, the changed lines per file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from fabricgen.diff.compare import FileDiff, setting_changes, unified_diff
from tests.conftest import INTENTS

runner = CliRunner()
BASE = (INTENTS / "cisco-256-gpu.yaml").read_text()
SMALL_SONIC = "name: {name}\ngpus: 64\nbackend:\n  leaf: {{nos: sonic}}\n  spine: {{nos: sonic}}\n"


def _build(directory: Path, name: str, text: str) -> Path:
    intent = directory / f"{name}.yaml"
    intent.write_text(text)
    return build(intent, directory / name)[1]


@pytest.fixture(scope="module")
def mtu_builds(tmp_path_factory) -> tuple[Path, Path]:
    """The white paper's 256-GPU fabric (NX-OS), and the same with the backend's MTU at 9000."""
    directory = tmp_path_factory.mktemp("mtu")
    changed = BASE.replace('  ratio: "1:1"\n', '  ratio: "1:1"\n  mtu: 9000\n')
    assert changed != BASE
    return _build(directory, "old", BASE), _build(directory, "new", changed)


def test_an_mtu_change_is_named_in_the_summary(mtu_builds):
    old, new = mtu_builds
    result = runner.invoke(app, ["diff", str(old), str(new), "-q"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # the 12 backend switches (4 spines, 8 leaves) change their MTU in the network-qos policy
    # and on every fabric port; nothing else changes
    assert "settings changed: mtu 9216→9000 on 12 devices" in lines[:8]
    settings = lines.index("Settings: 1 change on 12 devices")
    assert lines[settings + 1].split()[:4] == ["mtu", "9216→9000", f"{_changed_mtu_lines(new):,}", "12"]


def _changed_mtu_lines(build_dir: Path) -> int:
    """The lines `mtu 9000` in the new build's backend configs: each replaced one `mtu 9216`."""
    return sum(line.strip() == "mtu 9000" for path in build_dir.glob("configs/be-*.cfg") for line in path.read_text().splitlines())


def test_stat_counts_the_changed_lines_per_file_instead_of_the_diffs(mtu_builds):
    old, new = mtu_builds
    full = runner.invoke(app, ["diff", str(old), str(new), "-q"]).stdout
    stat = runner.invoke(app, ["diff", str(old), str(new), "--stat", "-q"]).stdout
    assert "@@" in full and "@@" not in stat
    assert len(stat.splitlines()) < 40 < len(full.splitlines())
    rows = [line for line in stat.splitlines() if " | " in line]
    assert len(rows) == 12
    per_file = {}
    for row in rows:
        path, count = re.match(r"^ (\S+) +\| +([0-9,]+) [+-]+$", row).groups()
        per_file[path] = int(count.replace(",", ""))
    for path, count in per_file.items():
        changed = sum(line.strip() == "mtu 9000" for line in (new / path).read_text().splitlines())
        assert count == 2 * changed, path  # each changed line: one removed, one added
    total = sum(per_file.values()) // 2
    assert stat.splitlines()[-1] == f" 12 files changed, {total:,} insertions(+), {total:,} deletions(-)"


def test_markdown_stat_and_json_name_the_setting(mtu_builds):
    old, new = mtu_builds
    markdown = runner.invoke(app, ["diff", str(old), str(new), "--format", "markdown", "--stat", "-q"]).stdout
    assert "**settings changed: mtu 9216→9000 on 12 devices**" in markdown
    assert "#### Changed lines per file (12 devices)" in markdown and "<details>" not in markdown
    document = json.loads(runner.invoke(app, ["diff", str(old), str(new), "--json", "-q"]).stdout)
    assert document["counts"]["settings"] == {"changes": 1, "devices": 12}
    (setting,) = document["settings"]
    assert setting["change"] == "mtu 9216→9000" and len(setting["devices"]) == 12
    first = next(iter(document["files"]["devices"].values()))[0]
    assert first["added_lines"] == first["removed_lines"] > 0


def test_a_sonic_mtu_change_in_config_db_is_named(tmp_path):
    old = _build(tmp_path, "old", SMALL_SONIC.format(name="s"))
    new = _build(tmp_path, "new", SMALL_SONIC.format(name="s") + "  mtu: 9100\n")
    result = runner.invoke(app, ["diff", str(old), str(new), "-q"])
    assert result.exit_code == 1
    # config_db.json's PORT rows, "mtu": "9216", read as the same setting as NX-OS's `mtu 9216`
    assert "settings changed: mtu 9216→9100 on 10 devices" in result.stdout


def _diff(path: str, before: str, after: str) -> FileDiff:
    return FileDiff(path, "changed", unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}"))


def test_what_is_a_setting_and_what_is_not():
    before = (
        "interface Ethernet1/1\n  description to leaf1 Ethernet1/33\n  mtu 9216\n  fec rs\n  ip address 10.8.0.0/31\n"
        "  random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes\n"
    )
    after = (
        "interface Ethernet1/1\n  description to leaf2 Ethernet1/34\n  mtu 9000\n  fec none\n  ip address 10.8.0.2/31\n"
        "  random-detect minimum-threshold 200 kbytes maximum-threshold 3000 kbytes\n"
    )
    changes = setting_changes({"leaf1": [_diff("configs/leaf1.cfg", before, after)], "leaf2": [_diff("configs/leaf2.cfg", before, after)]})
    assert [(c.change, c.devices, c.lines) for c in changes] == [
        ("fec rs→none", ("leaf1", "leaf2"), 2),
        ("mtu 9216→9000", ("leaf1", "leaf2"), 2),
        ("random-detect minimum-threshold 150→200 kbytes maximum-threshold 3000 kbytes", ("leaf1", "leaf2"), 2),
    ]  # the peer in a description and an address are the cables' and addresses' sections, not settings


def test_a_line_only_added_is_no_setting_change():
    changes = setting_changes({"leaf1": [_diff("configs/leaf1.cfg", "interface Ethernet1/1\n", "interface Ethernet1/1\n  mtu 9216\n")]})
    assert changes == []


def test_a_renamed_secret_is_a_secret_reference_not_a_setting():
    """`password <<secret=bgp-a>>` -> `<<secret=bgp-b>>` is the Secret references section's
    (secret_references), not also a changed setting."""
    from fabricgen.diff.compare import secret_references

    before = "router bgp 64512\n  neighbor LEAVES password <<secret=bgp-a>>\n  maximum-paths 8\n"
    after = "router bgp 64512\n  neighbor LEAVES password <<secret=bgp-b>>\n  maximum-paths 16\n"
    files = {"spine1": [_diff("configs/spine1.cfg", before, after)]}
    assert [c.change for c in setting_changes(files)] == ["maximum-paths 8→16"]
    assert secret_references(files)
