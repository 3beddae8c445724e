"""`fabricgen analyze`: capacity and single failures of a built fabric.

Expected figures come from the intents (port counts x 400G) and from networkx's max-flow on the
valley-free graph, never from the module's own closed form."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from fabricgen.analysis.capacity import (
    capacity,
    ecmp_width,
    group_flow,
    pair_capacity,
    single_failures,
    worst_for_capacity,
)
from fabricgen.analysis.fabric import read_fabric
from fabricgen.basics.errors import AnalysisError
from fabricgen.compiler.pipeline import build
from tests import cli_runner

INTENTS = Path(__file__).resolve().parents[1] / "intents"


@pytest.fixture(scope="module")
def whitepaper_256(tmp_path_factory) -> Path:
    """The whitepaper's 256-GPU cluster: 8 leaves, 4 spines, 8 links of 400G per leaf and spine."""
    destination = tmp_path_factory.mktemp("analyze") / "256"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    return destination


def networkx_pair_flow(capacity_gbps: np.ndarray, a: int, b: int) -> float:
    """Leaf a to leaf b as a plain max-flow: up edges a->spine, down edges spine->b."""
    graph = nx.DiGraph()
    for spine, gbps in enumerate(capacity_gbps[a]):
        graph.add_edge("a", spine, capacity=gbps)
    for spine, gbps in enumerate(capacity_gbps[b]):
        graph.add_edge(spine, "b", capacity=gbps)
    return nx.maximum_flow_value(graph, "a", "b")


def test_the_fabric_read_from_the_build_is_the_whitepapers(whitepaper_256):
    fabric = read_fabric(whitepaper_256)
    assert (len(fabric.leaves), len(fabric.spines)) == (8, 4)
    assert (fabric.links == 8).all() and (fabric.capacity_gbps == 8 * 400).all()
    assert (fabric.downlink_gbps == 32 * 400).all()  # 32 GPU NICs per leaf
    assert sorted(fabric.leaf_rail.tolist()) == list(range(1, 9))


def test_capacity_of_the_whitepaper_fabric(whitepaper_256):
    found = capacity(read_fabric(whitepaper_256))
    assert found.leaf_uplink_gbps == 8 * 32 * 400
    assert found.min_pair_gbps == 32 * 400  # a leaf's 32 uplinks, every spine reaching every leaf
    assert found.bisection_gbps == 4 * 32 * 400  # four leaves' uplinks to the other four
    assert (found.min_ecmp_width, found.min_spine_width) == (32, 4)
    assert set(found.oversubscription.values()) == {1.0}  # built 1:1
    assert {g.name: g.gbps for g in found.groups}["rail 1 -> rail 2"] == 32 * 400


def test_pair_capacity_is_networkxs_max_flow_also_after_failures():
    rng = np.random.default_rng(7)
    links = rng.integers(0, 4, size=(6, 5))  # uneven, some leaves without a link to some spines
    capacity_gbps = links * 400.0
    pairs = pair_capacity(capacity_gbps)
    for a in range(6):
        for b in range(6):
            if a != b:
                assert pairs[a, b] == pytest.approx(networkx_pair_flow(capacity_gbps, a, b))
    width = ecmp_width(links)
    assert width[0, 1] == sum(links[0, s] for s in range(5) if links[1, s] > 0)


def test_losing_one_spine_of_four_cuts_a_quarter_and_one_spine_of_ecmp(whitepaper_256, tmp_path):
    fabric = read_fabric(whitepaper_256)
    spines = [impact for impact in single_failures(fabric) if impact.kind == "spine"]
    assert len(spines) == 4
    for impact in spines:
        assert impact.capacity_left == pytest.approx(0.75)
        assert impact.min_pair_gbps == 24 * 400
        assert (impact.min_ecmp_width, impact.min_spine_width) == (24, 3)  # 8 links = one spine fewer
    worst = worst_for_capacity(single_failures(fabric))
    assert worst is not None and worst.kind == "spine"  # for capacity, a spine costs more than a single link or leaf

    result = analyze(str(whitepaper_256), "--report", str(tmp_path / "a.md"))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "a.md").read_text()
    assert "Worst single failure: spine be-spine01" in report
    assert "75% of the intact 12.8 Tb/s, a cut of 25%); ECMP width 32 → 24 links, spines 4 → 3" in report


def test_a_link_failure_only_touches_its_leaf(whitepaper_256):
    fabric = read_fabric(whitepaper_256)
    links = [impact for impact in single_failures(fabric) if impact.kind == "link"]
    assert len(links) == 8 * 4  # one per leaf-spine bundle (each is one of 8 parallel links)
    for impact in links:
        assert impact.min_pair_gbps == 31 * 400 and impact.min_ecmp_width == 31 and impact.min_spine_width == 4
        assert impact.name.split(" -- ")[0] in impact.worst_pair


def test_oversubscription_is_what_was_built(tmp_path):
    intent = tmp_path / "two-to-one.yaml"
    intent.write_text('name: two-to-one\ngpus: 128\nbackend:\n  scalable_unit_gpus: 64\n  ratio: "2:1"\n')
    build(intent, tmp_path / "build")
    fabric = read_fabric(tmp_path / "build")
    found = capacity(fabric)
    topology = json.loads((tmp_path / "build" / "topology.json").read_text())["graph"]["fabrics"]["backend"]
    expected = topology["leaf_downlinks"] / topology["leaf_uplinks"]  # same-speed ports
    assert set(found.oversubscription.values()) == {expected} and expected >= 2
    unit = {g.name: g for g in found.groups}["unit 1 -> unit 2"]
    assert unit.gbps == group_flow(fabric, fabric.leaf_unit == 1, fabric.leaf_unit == 2)
    assert unit.gbps < unit.demand_gbps  # 2:1: the units' servers can offer more than the spines carry


def test_bad_input_is_a_clear_error(whitepaper_256, tmp_path):
    with pytest.raises(AnalysisError, match="no routed storage fabric"):
        read_fabric(whitepaper_256, "storage")
    other = tmp_path / "other"
    subprocess.run(["cp", "-a", str(whitepaper_256), str(other)], check=True)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["fabricgen_version"] = "0.0.1"
    (other / "manifest.json").write_text(json.dumps(manifest))
    result = analyze(str(other))
    assert result.returncode == 2 and "built by fabricgen 0.0.1" in result.stderr and "Traceback" not in result.stderr


def analyze(*args: str) -> cli_runner.Completed:
    return cli_runner.fabricgen("analyze", *args)


def analyze_process(*args: str) -> subprocess.CompletedProcess:
    """`fabricgen analyze` as a process of its own: its own hash seed, its own matplotlib."""
    return subprocess.run([sys.executable, "-m", "fabricgen", "analyze", *args], capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.slow
def test_load_balancing_report_with_figures_is_deterministic(whitepaper_256, tmp_path):
    args = [str(whitepaper_256), "--scope", "cross-rail", "--seeds", "3", "--no-traffic"]
    assert "Load balancing" not in analyze(*args).stdout  # --no-traffic: capacity and failures only
    args = args[:-1]
    first, second = tmp_path / "one" / "a.md", tmp_path / "two" / "a.md"
    for report in (first, second):  # two processes: nothing may depend on hash randomisation
        report.parent.mkdir()
        result = analyze_process(*args, "--report", str(report))
        assert result.returncode == 0, result.stderr
    text = first.read_text()
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith(("| ecmp", "| flowlet", "| spray"))}
    assert rows["spray"].count("1.000") == 6  # every metric ideal when sprayed (the table's first rows)
    ecmp_max_load = float(rows["ecmp"].split(" | ")[1].split()[0])
    assert ecmp_max_load > 1.05  # hashing collides
    figures = sorted(path.name for path in first.parent.iterdir() if path != first)
    assert figures == [f"a-{name}.{kind}" for name in ("fct-stretch", "jct-vs-jobs", "link-load") for kind in ("png", "svg")]
    assert all((first.parent / name).read_bytes() == (second.parent / name).read_bytes() for name in figures + ["a.md"])
    assert (first.parent / "a-link-load.png").read_bytes().startswith(b"\x89PNG")
    assert "![JCT vs concurrent jobs](a-jct-vs-jobs.png)" in text


def test_traffic_that_never_leaves_a_leaf_is_said_so(whitepaper_256):
    result = analyze(str(whitepaper_256))  # one scalable unit, rail-local: every flow stays on its leaf
    assert result.returncode == 0, result.stderr
    assert "Each rail's GPUs here are on one leaf: 100.0% of the flows stay within a leaf; no flow crosses from one leaf to another" in result.stdout
    assert "Try `--scope cross-rail`" in result.stdout  # the fabric has spines: cross-rail traffic would use them


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pattern", "butterfly"], "Invalid value for '--pattern'"),
        (["--modes", "ecmp,magic"], "Invalid value for '--modes': 'magic': choose one or more of ecmp, flowlet, spray"),
        (["--concurrent-jobs", "100"], "every job needs at least 2 nodes"),
        (["--flows-per-pair", "0"], "--flows-per-pair must be at least 1"),
    ],
)
def test_bad_traffic_options_are_clear_errors(whitepaper_256, args, message):
    result = analyze(str(whitepaper_256), *args)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_frontend_gets_capacity_and_failures_but_no_collectives(whitepaper_256):
    result = analyze(str(whitepaper_256), "--network", "frontend", "--worst", "2")
    assert result.returncode == 0, result.stderr
    assert "# Fabric analysis: frontend" in result.stdout and "Worst single failure" in result.stdout
    assert "The frontend fabric has no GPU nodes; collective traffic is analysed on the backend." in result.stdout
