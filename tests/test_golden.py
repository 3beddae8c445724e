"""Golden files: whole outputs of tiny fabrics, reviewed by eye, so any change shows as a diff.

Regenerate after an intended change with FABRICGEN_UPDATE_GOLDEN=1 and review the git diff.

The release that headers and topology.json name is an input like the intent, pinned here to
GOLDEN_RELEASE: a new tag changes no golden file (test_packaging checks the real one is written).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from fabricgen import version
from fabricgen.pipeline import compile_intent

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_RELEASE = "1.2.3"
CASES = {
    "tiny-nxos": [
        "configs/be-su01-leaf1.cfg",
        "configs/be-spine01.cfg",
        "cabling.csv",
        "bom.csv",
        "ip-plan.csv",
        "summary.md",
        "hosts/gpu0001/nic-qos.sh",
        "hosts/gpu0001/netplan.yaml",
        "topology.json",
    ],
    "tiny-sonic": [
        "configs/be-su01-leaf1/config_db.json",
        "configs/be-su01-leaf1/frr.conf",
        "configs/be-spine02/frr.conf",
        "hosts/gpu0002/netplan.yaml",
    ],
    "tiny-eos": [
        "configs/be-su02-leaf1.cfg",
        "configs/be-spine01.cfg",
    ],
    "tiny-evpn": [
        "configs/be-su02-leaf1/config_db.json",
        "configs/be-su02-leaf1/frr.conf",
        "configs/be-spine01.cfg",
        "ip-plan.csv",
        "hosts/gpu0004/netplan.yaml",
    ],
}


@pytest.mark.parametrize("case, path", [(case, path) for case, paths in CASES.items() for path in paths])
def test_output_matches_the_reviewed_golden_file(case, path, monkeypatch):
    monkeypatch.setattr(version, "RELEASE", GOLDEN_RELEASE)
    build = compile_intent(GOLDEN / f"{case}.yaml")
    actual = build.files[path].decode()
    golden = GOLDEN / case / path
    if os.environ.get("FABRICGEN_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual)
    expected = golden.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(golden), "built"))
        pytest.fail(f"{case} {path} differs from its golden file:\n{diff}")
