"""`fabricgen analyze` over every design: the path model (3 tiers, rail-only, multi-rail leaves),
flowlet between ECMP and spraying, one-way traffic, a single sending leaf, offered load, failures,
JSON and the CI thresholds.

Synthetic fabrics are built as `Clos` arrays directly, in the shapes topology.json gives (leaves
first, every cable two directed edges, the GPU NICs' leaves from the host links)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from fabricgen.analysis import clos as paths
from fabricgen.analysis.balancing import analyse, clos_of, traffic
from fabricgen.analysis.clos import Clos
from fabricgen.analysis.fabric import read_fabric
from fabricgen.analysis.limits import TrafficOptions
from fabricgen.analysis.loadbalance import make_traffic
from fabricgen.analysis.schema import AnalysisOutput
from fabricgen.compiler.pipeline import build
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def whitepaper_256(tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("paths") / "256"
    build(ROOT / "intents" / "cisco-256-gpu.yaml", destination)
    return destination


@pytest.fixture(scope="module")
def three_tiers(tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("paths") / "three"
    build(ROOT / "tests" / "lab" / "three-tiers.yaml", destination)
    return destination


def synthetic(names, tiers, cables, leaf_of_nic, rails, gbps=400.0) -> Clos:
    index = {n: i for i, n in enumerate(names)}
    ends = np.array([(index[a], index[b]) for a, b in cables], dtype=np.int64).reshape(-1, 2)
    tail = np.column_stack((ends[:, 0], ends[:, 1])).ravel()
    head = np.column_stack((ends[:, 1], ends[:, 0])).ravel()
    nics = np.asarray(leaf_of_nic, dtype=np.int64)
    return Clos(
        tuple(names),
        np.array(tiers),
        tiers.count(0),
        tail,
        head,
        np.full(len(tail), gbps),
        tuple(f"C{i}" for i in range(len(cables))),
        nics,
        rails,
        gbps,
        np.ones(len(tail), dtype=bool),
        np.ones(len(nics), dtype=bool),
    )


def two_pods() -> Clos:
    """2 pods of 2 leaves and 2 spines, every spine to both cores; 8 nodes of 1 NIC, 2 per leaf."""
    leaves = ["l1", "l2", "l3", "l4"]
    spines = ["s1", "s2", "s3", "s4"]
    cores = ["c1", "c2"]
    cables = [(l, s) for l in leaves[:2] for s in spines[:2]] + [(l, s) for l in leaves[2:] for s in spines[2:]]
    cables += [(s, c) for s in spines for c in cores]
    return synthetic(leaves + spines + cores, [0] * 4 + [1] * 4 + [2] * 2, cables, np.repeat(np.arange(4), 2), 1)


def test_three_tiers_route_up_to_the_cores_and_down_again():
    fabric = two_pods()
    assert fabric.dist[fabric.names.index("l1"), 2] == 4  # l1 -> spine -> core -> spine -> l3
    assert fabric.dist[fabric.names.index("l1"), 1] == 2  # same pod: over a spine
    flows = make_traffic(fabric, "all-to-all", scope="rail")
    for mode in paths.MODES:
        result = paths.simulate(fabric, flows, mode, seed=1)
        core_edges = fabric.tiers[fabric.head] == 2
        assert result.edge_bytes[core_edges].sum() > 0, mode  # cross-pod traffic climbs to the cores
        # every cross-pod byte crosses exactly one spine->core edge: 2 pods x 4 GPUs x 4 peers x 1 MiB
        assert result.edge_bytes[core_edges].sum() == pytest.approx(2 * 4 * 4 * (1 << 20)), mode
    spray = paths.simulate(fabric, flows, "spray")
    assert spray.jct_ratio.max() == pytest.approx(1.0)  # 1:1 at every tier, spread evenly


def test_rail_only_without_spines_carries_cross_rail_traffic_pxn_and_never_on_a_fabric_link():
    """Rail-only, each rail one leaf: a GPU's data for another rail crosses its node's NVLink to
    the node's NIC on that rail, then that rail's leaf. No fabric link exists or is needed."""
    fabric = synthetic(["rail1", "rail2"], [0, 0], [], [0, 1] * 4, 2)
    flows = make_traffic(fabric, "all-to-all", scope="cross-rail")
    src, dst, *_ = paths.carried(fabric, flows)
    assert (fabric.leaf_of_nic[src] == fabric.leaf_of_nic[dst]).all()  # every flow on the destination's rail
    assert (dst % 2 == src % 2).all()
    result = paths.simulate(fabric, flows, "ecmp")
    assert result.edge_bytes.size == 0 and result.jct_ratio.max() == pytest.approx(1.0)


def test_rail_only_with_spines_per_rail_reaches_other_rails_only_by_pxn():
    """Each rail a plane of 2 leaves and its own spine: rail 1 cannot reach rail 2's leaves."""
    names = ["r1a", "r1b", "r2a", "r2b", "sp1", "sp2"]
    cables = [("r1a", "sp1"), ("r1b", "sp1"), ("r2a", "sp2"), ("r2b", "sp2")]
    # 4 nodes x 2 rails: nodes 0-1 on the a leaves, nodes 2-3 on the b leaves
    nic = [0, 2, 0, 2, 1, 3, 1, 3]
    fabric = synthetic(names, [0] * 4 + [1] * 2, cables, nic, 2)
    flows = make_traffic(fabric, "all-to-all", scope="cross-rail")
    src, dst, *_ = paths.carried(fabric, flows)
    a, b = fabric.leaf_of_nic[src], fabric.leaf_of_nic[dst]
    assert (fabric.dist[a, b] < paths.UNREACHABLE).all()
    result = paths.simulate(fabric, flows, "spray")
    to_spine2 = fabric.head == names.index("sp2")
    assert result.edge_bytes[to_spine2].sum() > 0  # rail 2's bytes ride rail 2's plane


def test_a_leaf_of_several_rails_keeps_same_rail_traffic_local():
    """2 leaves of 2 rails each (nic1, nic2 -> leaf 1; nic3, nic4 -> leaf 2), one spine."""
    fabric = synthetic(["leaf1", "leaf2", "spine"], [0, 0, 1], [("leaf1", "spine"), ("leaf2", "spine")], [0, 0, 1, 1] * 4, 4)
    rail = make_traffic(fabric, "all-to-all", scope="rail")
    assert paths.simulate(fabric, rail, "ecmp").edge_bytes.sum() == 0  # every rail on one leaf
    cross = make_traffic(fabric, "all-to-all", scope="cross-rail")
    result = paths.simulate(fabric, cross, "ecmp")
    # half the peers of a GPU are on the other leaf: 16 GPUs x 12 remote GPUs x 1/2 x 1 MiB each way
    assert result.edge_bytes.sum() == pytest.approx(2 * 16 * 6 * (1 << 20))


def test_permutation_and_shift_send_to_exactly_one_gpu_on_another_node():
    fabric = two_pods()
    for pattern in ("permutation", "shift"):
        flows = make_traffic(fabric, pattern, scope="rail", seed=3)
        assert sorted(flows.src.tolist()) == list(range(8)) and sorted(flows.dst.tolist()) == list(range(8)), pattern
        assert (flows.src != flows.dst).all(), pattern
    shift = make_traffic(fabric, "shift", scope="rail")
    assert ((shift.dst - shift.src) % 8 == 4).all()


def test_flowlet_lies_strictly_between_ecmp_and_spraying_on_the_whitepaper_cross_rail(whitepaper_256):
    found = analyse(read_fabric(whitepaper_256), TrafficOptions(scope="cross-rail", seeds=3), sweep=False)
    jct = {mode: s.metrics["jct_ratio_worst"].mean for mode, s in found.summaries.items()}
    assert jct["spray"] < jct["flowlet"] < jct["ecmp"], jct
    assert jct["spray"] == pytest.approx(1.0)


def test_flowlet_with_a_timeout_no_gap_exceeds_is_ecmp(whitepaper_256):
    model = clos_of(read_fabric(whitepaper_256))
    flows = traffic(model, TrafficOptions(scope="cross-rail"), 0)
    ecmp = paths.simulate(model, flows, "ecmp", seed=2)
    never = paths.simulate(model, flows, "flowlet", seed=2, flowlet=paths.FlowletModel(gap_us=1e6, idle_gap_us=1e-3))
    assert np.allclose(ecmp.edge_bytes, never.edge_bytes)
    assert never.jct_ratio.max() == pytest.approx(ecmp.jct_ratio.max())


def test_a_single_sending_leaf(whitepaper_256):
    model = clos_of(read_fabric(whitepaper_256))
    flows = traffic(model, TrafficOptions(scope="cross-rail", senders="leaf:be-su01-leaf3"), 0)
    leaf = model.names.index("be-su01-leaf3")
    assert len(flows.src) > 0 and (model.leaf_of_nic[flows.src] == leaf).all()
    result = paths.simulate(model, flows, "spray")
    sending = (model.tail < model.leaves) & (model.tiers[model.head] == 1)
    assert result.edge_bytes[sending & (model.tail != leaf)].sum() == 0


def test_lower_offered_load_never_stretches_more(whitepaper_256):
    model = clos_of(read_fabric(whitepaper_256))
    flows = traffic(model, TrafficOptions(scope="cross-rail"), 0)
    jct = [paths.simulate(model, flows, "ecmp", load=load).jct_ratio.max() for load in (1.0, 0.9, 0.7, 0.5)]
    assert all(a >= b for a, b in itertools.pairwise(jct)), jct
    assert jct[-1] == pytest.approx(1.0)  # half the line rate: the worst ECMP collision fits


def test_failing_one_spine_of_four_cuts_the_expected_share(whitepaper_256):
    """Cross-rail all-to-all: 7 of 8 peers' bytes leave the leaf, over 3 spines instead of 4, so the
    busiest link carries 7/8 x 4/3 of a NIC's time: a cut of 1 - 1 / (7/6)."""
    found = analyse(read_fabric(whitepaper_256), TrafficOptions(scope="cross-rail", seeds=1, modes=("spray",)), sweep=False, devices=("be-spine01",))
    assert found.failure.capacity_cut == pytest.approx(1 - 6 / 7)
    assert found.failure.jct_change["spray"] == pytest.approx(7 / 6)
    fabric = read_fabric(whitepaper_256)
    key = next(key for key, a, b, _ in fabric.cables if "be-spine02" in (a, b))
    one = analyse(fabric, TrafficOptions(scope="cross-rail", seeds=1, modes=("spray",)), sweep=False, cables=(key,))
    # one cable of a leaf's 32: its 31 others carry 7/8 x 32/31 < 1 of a NIC's time, the NICs still bind
    assert one.failure.capacity_cut == 0.0 and one.failure.down == (key,)


def analyze(*args: str) -> cli_runner.Completed:
    return cli_runner.fabricgen("analyze", *args, cwd=ROOT)


def test_json_validates_and_a_threshold_exits_1(whitepaper_256):
    run = analyze(
        str(whitepaper_256), "--scope", "cross-rail", "--seeds", "2", "--no-sweep", "--json", "--fail", "be-spine01", "--max-jct-stretch", "ecmp=1.0001"
    )
    assert run.returncode == 1, run.stderr
    document = AnalysisOutput.model_validate(json.loads(run.stdout))
    assert [m.mode for m in document.modes] == ["ecmp", "flowlet", "spray"]
    assert document.failure.down == ["be-spine01"] and document.failure.capacity_cut == pytest.approx(1 - 6 / 7)
    assert not document.verdict.passed and document.verdict.violations[0].startswith("ecmp:")
    passing = analyze(str(whitepaper_256), "--scope", "cross-rail", "--seeds", "1", "--no-sweep", "--json", "--max-jct-stretch", "3", "--max-failure-cut", "30")
    assert passing.returncode == 0, passing.stderr
    assert AnalysisOutput.model_validate(json.loads(passing.stdout)).verdict.passed
    cut = analyze(str(whitepaper_256), "--no-traffic", "--max-failure-cut", "10")  # one spine of 4: 25 %
    assert cut.returncode == 1 and "above --max-failure-cut 10%" in cut.stdout


def test_three_tier_build_is_analysed(three_tiers):
    # 5 seeds: on so small a fabric one seed's ECMP draw can beat flowlet's (1.21 vs 1.22 at seed 0)
    run = analyze(str(three_tiers), "--seeds", "5", "--no-sweep", "--json", "--scope", "cross-rail")
    assert run.returncode == 0, run.stderr
    document = AnalysisOutput.model_validate(json.loads(run.stdout))
    assert document.fabric.cores > 0 and document.capacity is None
    jct = {m.mode: m.metrics["jct_ratio_worst"].mean for m in document.modes}
    assert jct["spray"] <= jct["flowlet"] <= jct["ecmp"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pattern", "bogus"], "Invalid value for '--pattern': Value error, 'bogus' is not one of"),
        (["--schedule", "mpi"], "Invalid value for '--schedule': Value error, 'mpi' is not one of"),
        (["--senders", "rack:1"], "--senders 'rack:1' is not known"),
        (["--load", "1.5"], "--load must be"),
        (["--max-jct-stretch", "fast"], "--max-jct-stretch: 'fast'"),
        (["--max-failure-cut", "120"], "--max-failure-cut must be"),
    ],
)
def test_bad_choices_exit_2_before_the_build_is_read(tmp_path, args, message):
    run = analyze(str(tmp_path / "no-such-build"), *args)
    assert run.returncode == 2 and message in run.stderr, run.stderr
    assert "no-such-build" not in run.stderr  # refused before the build was looked at


def test_an_unknown_failure_exits_2(whitepaper_256):
    run = analyze(str(whitepaper_256), "--fail", "be-spine99", "--seeds", "1", "--no-sweep")
    assert run.returncode == 2 and "--fail 'be-spine99' is neither" in run.stderr


def test_a_failed_leaf_leaves_the_other_flows_on_their_ecmp_paths():
    """Losing a leaf's flows changes no other flow's 5-tuple, so static ECMP hashes every survivor
    exactly as before: the failed fabric's loads are the intact fabric's loads of the survivors."""
    fabric = two_pods()
    flows = make_traffic(fabric, "all-to-all", scope="rail", flows_per_pair=4, seed=1)
    failed = fabric.failed({"l4"}, set())
    live = failed.nic_alive[flows.src] & failed.nic_alive[flows.dst]
    assert 0 < live.sum() < len(live)
    survivors = paths.Traffic(
        src=flows.src[live], dst=flows.dst[live], nbytes=flows.nbytes[live], sport=flows.sport[live], job=flows.job[live], jobs=flows.jobs
    )
    after = paths.simulate(failed, flows, "ecmp", seed=5)
    before = paths.simulate(fabric, survivors, "ecmp", seed=5)
    assert after.edge_bytes.sum() > 0
    assert np.array_equal(after.edge_bytes, before.edge_bytes)


def test_a_threshold_or_failure_nothing_measures_is_refused_not_passed(whitepaper_256, three_tiers):
    # 3 tiers have no single-failure tables: without --fail the cut would never be checked
    run = analyze(str(three_tiers), "--no-traffic", "--max-failure-cut", "10")
    assert run.returncode == 2 and "--max-failure-cut without --fail" in run.stderr and "--fail DEVICE|CABLE" in run.stderr
    # one scalable unit, rail scope: every flow stays on its leaf, so no failure would be simulated
    run = analyze(str(whitepaper_256), "--seeds", "1", "--no-sweep", "--fail", "be-spine01", "--max-failure-cut", "10")
    assert run.returncode == 2 and "no failure of be-spine01 was simulated" in run.stderr, run.stderr
    # the frontend carries no GPU traffic: --fail would be ignored
    run = analyze(str(whitepaper_256), "--network", "frontend", "--fail", "fe-spine01")
    assert run.returncode == 2 and "--fail simulates GPU traffic" in run.stderr, run.stderr


def test_the_share_above_the_stretch_threshold_follows_the_threshold(whitepaper_256):
    """The share of flows above --stretch-threshold: spraying on the non-blocking whitepaper fabric
    stretches no flow past 1.5; ECMP's share falls as the threshold rises, and is 0 at its own
    worst stretch."""

    def shares(threshold: str) -> dict[str, float]:
        run = analyze(str(whitepaper_256), "--scope", "cross-rail", "--seeds", "1", "--no-sweep", "--json", "--stretch-threshold", threshold)
        assert run.returncode == 0, run.stderr
        document = AnalysisOutput.model_validate(json.loads(run.stdout))
        return {m.mode: (m.metrics["share_above_stretch"].mean, m.metrics["stretch_worst"].mean) for m in document.modes}

    low, high = shares("1.0001"), shares("1.5")
    assert low["ecmp"][0] > 0 and low["ecmp"][0] >= high["ecmp"][0]
    assert high["spray"][0] == 0.0
    at_worst = shares(repr(low["ecmp"][1]))
    assert at_worst["ecmp"][0] == 0.0  # "above": no flow exceeds the worst stretch
