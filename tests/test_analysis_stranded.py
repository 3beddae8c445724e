"""`fabricgen analyze`: a leaf failure and a GPU NIC's link failure strand GPU NICs, and the
report says how many (issue 32: a rail-optimized leaf's failure was "100% of intact" although the
32 GPUs of its rail in its unit lose their backend path).

Expected counts come from the intents (32 DGX nodes per unit, one leaf per rail; a top-of-rack pair
with odd NICs on one leaf; DGX-B300 with a port on each of two planes), not from the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.analysis.capacity import single_failures
from fabricgen.analysis.fabric import read_fabric
from fabricgen.analysis.schema import AnalysisOutput
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def builds(shipped_build):
    return shipped_build


def analyze(*args: str) -> cli_runner.Completed:
    return cli_runner.fabricgen("analyze", *args, cwd=ROOT)


def by_kind(failures, kind):
    return [impact for impact in failures if impact.kind == kind]


def test_a_rail_leaf_failure_strands_its_units_rail(builds):
    fabric = read_fabric(builds("cisco-256-gpu"))  # 8 rail leaves of 32 DGX nodes, 4 spines
    failures = single_failures(fabric)
    leaves = by_kind(failures, "leaf")
    assert len(leaves) == 8
    for impact in leaves:
        # the 32 nodes' NIC of this leaf's rail: 32 NICs, 32 GPUs, one on each of 32 nodes
        assert (impact.stranded_nics, impact.stranded_gpus, impact.stranded_nodes) == (32, 32, 32), impact
    for impact in by_kind(failures, "spine") + by_kind(failures, "link"):
        assert (impact.stranded_nics, impact.stranded_gpus, impact.stranded_nodes) == (0, 0, 0), impact


def test_a_gpu_nic_link_failure_strands_one_nic(builds):
    failures = single_failures(read_fabric(builds("cisco-256-gpu")))
    (nic_link,) = by_kind(failures, "nic-link")
    assert (nic_link.stranded_nics, nic_link.stranded_gpus, nic_link.stranded_nodes) == (1, 1, 1)
    assert "256" in nic_link.name  # any of the 256 GPU NIC links, each alike


def test_the_report_says_what_a_leaf_failure_strands_not_just_100_percent(builds, tmp_path):
    result = analyze(str(builds("cisco-256-gpu")), "--no-traffic", "--worst", "100", "--report", str(tmp_path / "a.md"))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "a.md").read_text()
    assert "A leaf failure strands up to 32 GPU NICs: 32 GPUs on 32 nodes lose their backend path (leaf be-su01-leaf1: rail 1 of unit 1)" in report, report
    assert "A GPU NIC's link to its leaf strands that NIC: 1 GPU loses its backend path." in report
    row = next(line for line in report.splitlines() if line.startswith("| leaf be-su01-leaf1 |"))
    assert row.endswith("| 32 NICs, 32 GPUs, 32 nodes |"), row
    spine_row = next(line for line in report.splitlines() if line.startswith("| spine be-spine01 |"))
    assert spine_row.endswith("| none |"), spine_row


def test_the_json_names_the_failure_that_strands_most(builds):
    result = analyze(str(builds("cisco-256-gpu")), "--no-traffic", "--json")
    assert result.returncode == 0, result.stderr
    found = AnalysisOutput.model_validate(json.loads(result.stdout)).capacity
    assert found is not None
    assert found.worst_single_failure == "spine be-spine01"  # still the worst for capacity
    assert found.most_stranding_failure == "leaf be-su01-leaf1"
    assert (found.stranded_gpu_nics, found.stranded_gpus, found.stranded_nodes) == (32, 32, 32)


def test_a_top_of_rack_leaf_strands_half_the_nics_of_every_node_of_its_pair(builds):
    fabric = read_fabric(builds("tor-64-gpu"))  # 8 nodes, NICs 1, 3, 5, 7 on the first leaf
    for impact in by_kind(single_failures(fabric), "leaf"):
        assert (impact.stranded_nics, impact.stranded_gpus, impact.stranded_nodes) == (32, 32, 8), impact


def test_a_dual_plane_leaf_strands_ports_but_no_gpu(builds):
    """DGX-B300: each GPU's NIC has a port on each plane; one leaf down leaves every GPU its port
    on the other plane: 32 ports stranded, no GPU cut off, 32 nodes touched."""
    fabric = read_fabric(builds("dual-plane-2048"))
    failures = single_failures(fabric)
    for impact in by_kind(failures, "leaf")[:3]:
        assert (impact.stranded_nics, impact.stranded_gpus, impact.stranded_nodes) == (32, 0, 32), impact
        # no job stops, but a collective runs at its slowest member: a GPU on one port of two, 2x
        assert not impact.stops_a_job and impact.job_slowdown == 2.0
    assert failures[0].kind == "leaf"  # what a job feels most: above every spine's capacity share
    (nic_link,) = by_kind(failures, "nic-link")
    assert (nic_link.stranded_nics, nic_link.stranded_gpus, nic_link.stranded_nodes) == (1, 0, 1)
