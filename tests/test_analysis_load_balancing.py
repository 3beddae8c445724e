"""Load balancing under collective traffic, on the path model (analysis/clos.py): the hash is
zlib's CRC-32 and independent per switch (no polarisation), spraying is perfect on a non-blocking
fabric, static ECMP collides like balls into bins, runs are reproducible by seed, failed links
carry nothing, a GPU of a multi-plane NIC is one endpoint, and bad input is a clear error.

Ported from the tests of the former 2-tier simulator (`loadbalance.simulate`, `LeafSpine`), which
`analyze` no longer used."""

from __future__ import annotations

import random
import struct
import zlib

import numpy as np
import pytest

from fabricgen.analysis import clos as paths
from fabricgen.analysis.balancing import compare
from fabricgen.analysis.clos import Clos
from fabricgen.analysis.limits import TrafficOptions
from fabricgen.analysis.loadbalance import Traffic, crc32_tuples, make_traffic
from tests.test_analysis_paths import synthetic


def node_per_leaf(nodes: int = 4, rails: int = 8, spines: int = 4, links: int = 2, planes: int = 1) -> Clos:
    """Every node's NIC ports on its own leaf; spines x links uplinks per leaf (rails x planes of
    them: 1:1)."""
    leaves = [f"l{i}" for i in range(nodes)]
    tops = [f"s{j}" for j in range(spines)]
    cables = [(leaf, spine) for leaf in leaves for spine in tops for _ in range(links)]
    model = synthetic(leaves + tops, [0] * nodes + [1] * spines, cables, np.repeat(np.arange(nodes), rails * planes), rails)
    if planes == 1:
        return model
    return Clos(
        model.names,
        model.tiers,
        model.leaves,
        model.tail,
        model.head,
        model.gbps,
        model.cables,
        model.leaf_of_nic,
        rails,
        model.host_gbps,
        model.alive,
        model.nic_alive,
        planes,
    )


def two_leaves(width: int = 32) -> Clos:
    """Leaf 0 holds GPUs 0..width-1 (one per node), leaf 1 the next width; `width` spines."""
    leaves, tops = ["l0", "l1"], [f"s{j}" for j in range(width)]
    cables = [(leaf, spine) for leaf in leaves for spine in tops]
    return synthetic(leaves + tops, [0, 0] + [1] * width, cables, np.repeat([0, 1], width), 1, gbps=100.0)


def one_way(width: int = 32) -> Traffic:
    """GPU i on leaf 0 sends one flow to GPU width + i on leaf 1."""
    src = np.arange(width)
    return Traffic(src=src, dst=src + width, nbytes=np.full(width, 1e6), sport=49152 + src, job=np.zeros(width, dtype=np.int64), jobs=1)


def expected_max_bin(balls: int, bins: int, trials: int = 20000) -> float:
    """E[max bin count] for balls thrown uniformly into bins: plain Monte Carlo, python's random."""
    rnd = random.Random(12345)
    total = 0
    for _ in range(trials):
        counts = [0] * bins
        for _ in range(balls):
            counts[rnd.randrange(bins)] += 1
        total += max(counts)
    return total / trials


def test_crc32_matches_zlib():
    src = np.array([0x0A000001, 0x0A0000FF, 0x0A012345])
    dst = np.array([0x0A000002, 0x0A000010, 0x0A000000])
    sport = np.array([49152, 50000, 65535])
    got = crc32_tuples(7, src, dst, sport)
    for i in range(3):
        assert int(got[i]) == zlib.crc32(struct.pack(">IIIBHH", 7, int(src[i]), int(dst[i]), 17, int(sport[i]), 4791))


def test_switch_hashes_are_deterministic_and_independent_per_switch():
    rng = np.random.default_rng(1)
    n = 64_000
    src, dst = 0x0A000000 + rng.integers(0, 4096, n), 0x0A000000 + rng.integers(0, 4096, n)
    sport = rng.integers(49152, 65536, n)
    first = paths.switch_hash(np.full(n, 3), src, dst, sport)
    assert np.array_equal(first, paths.switch_hash(np.full(n, 3), src, dst, sport))  # the same flow, the same link
    # two switches choosing among 4 next hops: every pair of choices equally likely (1/16 each)
    second = paths.switch_hash(np.full(n, 4), src, dst, sport)
    joint = np.bincount((first % 4) * 4 + second % 4, minlength=16) / n
    assert np.all(np.abs(joint - 1 / 16) < 0.1 / 16), joint
    # what the model did before: the seed inside the linear CRC-32 ties the two choices together
    # (one switch's choice fixes the other's: 4 of the 16 pairs only), the polarisation it fixes
    linear = [crc32_tuples(seed, src, dst, sport) % 4 for seed in (4, 5)]
    assert np.count_nonzero(np.bincount(linear[0] * 4 + linear[1], minlength=16)) == 4


@pytest.mark.parametrize("pattern", ["all-to-all", "ring", "permutation"])
def test_spraying_on_a_non_blocking_fabric_is_perfect(pattern):
    fabric = node_per_leaf()
    traffic = make_traffic(fabric, pattern, scope="cross-rail", seed=3)
    r = paths.simulate(fabric, traffic, "spray")
    assert np.allclose(r.jain_per_leaf, 1.0) and r.max_load_ratio == pytest.approx(1.0)
    assert np.allclose(r.stretch, 1.0) and np.allclose(r.jct_ratio, 1.0)
    # every byte that leaves a leaf crosses exactly one uplink and one downlink
    cross = fabric.leaf_of_nic[traffic.src] != fabric.leaf_of_nic[traffic.dst]
    assert r.edge_bytes[r.uplink].sum() == pytest.approx(traffic.nbytes[cross].sum())
    assert r.edge_bytes[~r.uplink].sum() == pytest.approx(traffic.nbytes[cross].sum())


@pytest.mark.parametrize("hash", ["random", "crc32"])
def test_static_ecmp_collides_like_balls_into_bins(hash):
    """32 equal flows hashed uniformly onto 32 uplinks (then each spine's one link down): the
    worst link carries the fullest bin, so max load / ideal = worst stretch = the max bin count.
    Mean over 300 seeds vs an independent Monte Carlo: the max-bin count's standard deviation is
    about 0.75, the mean's standard error about 0.045; 0.25 is 5 of them. The CRC-32 hash with
    per-switch seeds collides as an ideal hash does."""
    fabric = two_leaves()
    results = []
    for seed in range(300):
        flows = one_way()
        flows = Traffic(flows.src, flows.dst, flows.nbytes, np.random.default_rng(seed).integers(49152, 65536, 32), flows.job, 1)
        results.append(paths.simulate(fabric, flows, "ecmp", hash=hash, seed=seed))
    expected = expected_max_bin(32, 32)
    assert 3.3 < expected < 3.8  # sanity of the independent estimate
    assert all(r.max_load_ratio > 1 and r.stretch.max() > 1 for r in results)
    assert np.mean([r.max_load_ratio for r in results]) == pytest.approx(expected, abs=0.25)
    assert np.mean([r.stretch.max() for r in results]) == pytest.approx(expected, abs=0.25)
    spray = paths.simulate(fabric, one_way(), "spray")
    assert spray.max_load_ratio == pytest.approx(1.0) and spray.stretch.max() == pytest.approx(1.0)


def test_same_seed_same_results_other_seed_other_ecmp():
    fabric = node_per_leaf(nodes=8)
    options = {"pattern": "all-to-all", "scope": "rail", "jobs": 2, "placement": "scattered"}

    def run(seed: int, mode: str):
        return paths.simulate(fabric, make_traffic(fabric, seed=seed, **options), mode, seed=seed)

    for mode in paths.MODES:
        a, b = run(11, mode), run(11, mode)
        assert np.array_equal(a.edge_bytes, b.edge_bytes) and np.array_equal(a.fct_s, b.fct_s)
    assert not np.array_equal(run(11, "ecmp").edge_bytes, run(12, "ecmp").edge_bytes)


def test_a_failed_cable_carries_nothing_and_spraying_stays_fair():
    fabric = node_per_leaf()
    failed = fabric.failed(set(), {fabric.cables[2]})  # l0 - s1, its first of 2 links
    traffic = make_traffic(failed, "all-to-all", scope="cross-rail", seed=1)
    for mode in paths.MODES:
        r = paths.simulate(failed, traffic, mode, seed=1)
        assert r.edge_bytes[4] == 0 and r.edge_bytes[5] == 0, mode  # cable 2, both directions
        assert r.edge_bytes.sum() > 0
    spray = paths.simulate(failed, traffic, "spray")
    live = spray.uplink & (spray.tail == 0)
    assert np.allclose(spray.edge_bytes[live], spray.edge_bytes[live].mean())  # l0 spreads over its 7 live uplinks


def test_stretch_is_at_least_one_and_jct_is_the_slowest_flow():
    fabric = node_per_leaf(nodes=8, spines=2, links=1)  # 8 NICs over 2 uplinks: 4:1
    traffic = make_traffic(fabric, "all-to-all", jobs=2, seed=5)
    for mode in paths.MODES:
        r = paths.simulate(fabric, traffic, mode, seed=5)
        assert r.stretch.min() >= 1 - 1e-12
        for job in range(2):
            mine = r.job == job
            assert r.jct_ratio[job] == pytest.approx(r.fct_s[mine].max() / r.ideal_fct_s[mine].max())
        assert r.stretch.max() == pytest.approx(4.0) if mode == "spray" else r.stretch.max() >= 4 - 1e-9


def test_a_gpu_of_a_two_plane_nic_is_one_endpoint_and_splits_its_flow_over_both_planes():
    # 4 nodes of 8 GPUs, each NIC 2 ports (16 ports a node): 32 GPUs, not 64
    fabric = node_per_leaf(nodes=4, rails=8, spines=4, links=4, planes=2)
    assert (fabric.nodes, fabric.gpus, len(fabric.leaf_of_nic)) == (4, 32, 64)
    traffic = make_traffic(fabric, "all-to-all", scope="cross-rail")
    assert len(traffic.src) == 4 * 3 * 64 and traffic.src.max() < 32  # GPU pairs on other nodes
    ports, _ = paths.on_ports(fabric, traffic)
    assert len(ports.src) == 2 * len(traffic.src) and np.array_equal(ports.src % 2, ports.dst % 2)  # port p to port p
    assert ports.nbytes.sum() == pytest.approx(traffic.nbytes.sum())
    r = paths.simulate(fabric, traffic, "spray")
    assert len(r.fct_s) == len(traffic.src)  # one completion time per GPU flow
    # the ideal: a GPU sends over both ports at once, so twice a port's rate
    sent = traffic.nbytes[traffic.src == 0].sum()
    assert r.ideal_fct_s.max() == pytest.approx(sent / (2 * 400e9 / 8))
    assert np.allclose(r.jct_ratio, 1.0)


def test_compare_gives_confidence_intervals():
    fabric = node_per_leaf(nodes=8)
    summary = compare(fabric, TrafficOptions(pattern="all-to-all", scope="rail", jobs=2), range(6))
    est = summary["ecmp"].metrics["max_load_ratio"]
    assert est.n == 6 and est.low <= est.mean <= est.high
    spray = summary["spray"].metrics["jain"]
    assert spray.mean == pytest.approx(1.0) and spray.high - spray.low == pytest.approx(0.0)


def test_ring_bytes_per_gpu():
    traffic = make_traffic(node_per_leaf(nodes=4), "ring", scope="rail", message_bytes=1000.0)
    assert len(traffic.src) == 32
    assert np.allclose(traffic.nbytes, 2 * 3 / 4 * 1000.0)
    assert np.all(traffic.src % 8 == traffic.dst % 8)


@pytest.mark.parametrize(("call", "message"), [
    (lambda f: make_traffic(f, "broadcast"), "unknown traffic pattern 'broadcast'"),
    (lambda f: make_traffic(f, "ring", jobs=5), "5 jobs do not fit on 4 nodes"),
    (lambda f: make_traffic(f, "ring", jobs=33), "33 jobs but only 32 GPUs"),
    (lambda f: make_traffic(f, "ring", jobs=4), "a job needs at least 2 nodes"),
    (lambda f: make_traffic(f, "ring", flows_per_pair=0), "flows per GPU pair must be >= 1"),
    (lambda f: make_traffic(f, "ring", placement="random"), "unknown placement"),
    (lambda f: paths.simulate(f, make_traffic(f, "ring"), "wcmp"), "unknown load-balancing mode"),
    (lambda f: paths.simulate(f, make_traffic(f, "ring"), "ecmp", hash="md5"), "unknown hash"),
    (lambda f: paths.simulate(f, make_traffic(f, "ring"), "ecmp", load=0), "offered load must be in"),
])  # fmt: skip
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(node_per_leaf())


def test_bad_fabric_is_a_clear_error():
    with pytest.raises(ValueError, match="not a positive multiple of rails=8 x planes=1"):
        synthetic(["l0", "s0"], [0, 1], [("l0", "s0")], np.zeros(12, dtype=int), 8)
