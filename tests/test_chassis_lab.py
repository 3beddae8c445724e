"""A 3-tier fabric of chassis spines and cores booted in the lab (root, FRR: tests/test_lab.py's
needs_lab): tests/lab/chassis-spines.yaml, four DGX nodes in two pods, an EOS leaf per unit with 8
parallel links to each of its pod's two DCS-7812R4 spines. Every session comes up, each leaf
routes over all 16 links (2 spines x 8), and losing one link or one spine takes away exactly its
share."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import _lab_build
from tests.test_lab import fabricgen, leftovers, needs_lab


@needs_lab
def test_chassis_spines_with_parallel_links_boot_and_verify_through_failures(tmp_path_factory, tmp_path: Path):
    build_dir = _lab_build(tmp_path_factory, "chassis-spines")
    report = tmp_path / "lab.md"
    try:
        result = fabricgen("lab", "run", str(build_dir), "--report", str(report))
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []
    text = report.read_text()
    # 2 leaves + 4 spines + 2 cores; 32 host links, 2 x 16 leaf-spine links, 4 x 8 spine-core links
    assert "8 switches, 4 GPU nodes, 96 links" in text and "result: **PASS**" in text
    rounds = {part.split("\n", 1)[0]: part for part in text.split("\n## ")[1:]}
    for name, part in rounds.items():
        assert "FAIL" not in part and "NOT converged" not in part, name
    up = rounds["after up"]
    # 64 sessions, one per fabric link, counted at both ends; a leaf's ECMP width is 2 spines x 8 links
    assert "128/128 expected sessions Established" in up and "192/192 cable ends see the planned neighbour" in up
    assert "| be-su01-leaf1 | leaf | 1 | 16 | - |" in up and "| be-spine01 | spine | 2 | 8 | - |" in up
    silent = next(part for name, part in rounds.items() if name.startswith("be-su01-leaf1:") and name.endswith("failed silently"))
    assert "| be-su01-leaf1 | leaf | 1 | 15 | - |" in silent  # one of the 16 parallel links gone
    spine_down = rounds["be-spine01 down"]
    assert "| be-su01-leaf1 | leaf | 1 | 8 | - |" in spine_down  # the other spine's 8 links carry on
