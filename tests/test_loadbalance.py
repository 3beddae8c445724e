"""Load balancing under collective traffic: spraying is perfect on a non-blocking fabric, static
ECMP collides like balls into bins, flowlet DLB sits between, failed links carry nothing, and bad
input is a clear error."""

from __future__ import annotations

import random
import struct
import zlib

import numpy as np
import pytest

from fabricgen.analysis.loadbalance import (
    LeafSpine,
    Traffic,
    compare,
    crc32_tuples,
    make_traffic,
    simulate,
)


def node_per_leaf(
    nodes: int = 4, rails: int = 8, spines: int = 4, links: int = 2, failed=()
):
    """Every node's `rails` NICs on its own leaf; spines * links = rails uplinks per leaf: 1:1."""
    leaf_of_nic = np.repeat(np.arange(nodes), rails)
    return LeafSpine(
        leaves=nodes, spines=spines, links=links, uplink_gbps=400.0, host_gbps=400.0,
        leaf_of_nic=leaf_of_nic, rails=rails, failed=frozenset(failed),
    )  # fmt: skip


def two_leaves(width: int = 32) -> LeafSpine:
    """Leaf 0 holds NICs 0..width-1, leaf 1 the next width; `width` spines, one link each."""
    return LeafSpine(
        leaves=2, spines=width, links=1, uplink_gbps=100.0, host_gbps=100.0,
        leaf_of_nic=np.repeat([0, 1], width), rails=1,
    )  # fmt: skip


def one_way(width: int = 32, nbytes=None) -> Traffic:
    """NIC i on leaf 0 sends one flow to NIC width + i on leaf 1."""
    src = np.arange(width)
    return Traffic(
        src=src, dst=src + width,
        nbytes=np.full(width, 1e6) if nbytes is None else np.asarray(nbytes, dtype=float),
        sport=49152 + src, job=np.zeros(width, dtype=np.int64), jobs=1,
    )  # fmt: skip


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
        packed = struct.pack(
            ">IIIBHH", 7, int(src[i]), int(dst[i]), 17, int(sport[i]), 4791
        )
        assert int(got[i]) == zlib.crc32(packed)


@pytest.mark.parametrize("pattern", ["all-to-all", "ring"])
def test_spraying_on_non_blocking_fabric_is_perfect(pattern):
    fabric = node_per_leaf()
    traffic = make_traffic(fabric, pattern, scope="cross-rail", seed=3)
    r = simulate(fabric, traffic, "spray")
    assert np.all(np.abs(r.jain_per_leaf - 1.0) < 1e-9)
    assert abs(r.jain_all - 1.0) < 1e-9
    assert abs(r.max_load_ratio - 1.0) < 1e-9
    assert np.all(np.abs(r.stretch - 1.0) < 1e-9), r.stretch.max()
    assert np.all(np.abs(r.jct_ratio - 1.0) < 1e-9)
    # every byte that leaves a leaf crosses exactly one uplink and one downlink
    cross = fabric.leaf_of_nic[traffic.src] != fabric.leaf_of_nic[traffic.dst]
    assert r.uplink_bytes.sum() == pytest.approx(traffic.nbytes[cross].sum())
    assert r.downlink_bytes.sum() == pytest.approx(traffic.nbytes[cross].sum())


def test_static_ecmp_collides_like_balls_into_bins():
    """32 equal flows hashed uniformly onto 32 uplinks (and then forced onto the spine's single
    link down): the worst link carries the fullest bin, so max load / ideal = worst stretch = max
    bin count. Mean over 400 seeds vs an independent Monte Carlo: the max-bin count's standard
    deviation is about 0.75, so the mean's standard error is about 0.04; 0.2 is 5 of them."""
    fabric, traffic = two_leaves(), one_way()
    seeds = range(400)
    results = [simulate(fabric, traffic, "ecmp", hash="random", seed=s) for s in seeds]
    expected = expected_max_bin(32, 32)
    assert 3.3 < expected < 3.8  # sanity of the independent estimate
    max_load = np.mean([r.max_load_ratio for r in results])
    worst = np.mean([r.stretch_worst for r in results])
    assert all(r.max_load_ratio > 1 and r.stretch_worst > 1 for r in results)
    assert max_load == pytest.approx(expected, abs=0.2)
    assert worst == pytest.approx(expected, abs=0.2)
    spray = simulate(fabric, traffic, "spray")
    assert spray.max_load_ratio == pytest.approx(1.0)
    assert spray.stretch_worst == pytest.approx(1.0)


def test_crc32_ecmp_also_collides():
    fabric = node_per_leaf(nodes=8)
    traffic = make_traffic(fabric, "ring", scope="cross-rail", seed=0)
    r = simulate(fabric, traffic, "ecmp", hash="crc32", seed=0)
    assert r.max_load_ratio > 1 and r.stretch_worst > 1 and r.jain < 1


@pytest.mark.parametrize("seed", range(5))
def test_flowlet_sits_between_ecmp_and_spraying(seed):
    rnd = random.Random(seed)
    # unequal sizes: greedy least-loaded cannot be perfect
    sizes = [rnd.uniform(1e6, 10e6) for _ in range(32)]
    fabric, traffic = two_leaves(), one_way(nbytes=sizes)
    ecmp = simulate(fabric, traffic, "ecmp", hash="random", seed=seed)
    flowlet = simulate(fabric, traffic, "flowlet", flowlets=4, seed=seed)
    spray = simulate(fabric, traffic, "spray", seed=seed)
    assert spray.max_load_ratio < flowlet.max_load_ratio < ecmp.max_load_ratio
    assert spray.jain > flowlet.jain > ecmp.jain
    assert spray.stretch_worst <= flowlet.stretch_worst < ecmp.stretch_worst


def test_same_seed_same_results_other_seed_other_ecmp():
    fabric = node_per_leaf(nodes=8)
    options = {
        "pattern": "all-to-all",
        "scope": "rail",
        "jobs": 2,
        "placement": "scattered",
    }

    def run(seed: int, mode: str):
        return simulate(
            fabric, make_traffic(fabric, seed=seed, **options), mode, seed=seed
        )

    for mode in ("ecmp", "flowlet", "spray"):
        a, b = run(11, mode), run(11, mode)
        assert np.array_equal(a.uplink_bytes, b.uplink_bytes)
        assert np.array_equal(a.downlink_bytes, b.downlink_bytes)
        assert np.array_equal(a.fct_s, b.fct_s)
    assert not np.array_equal(
        run(11, "ecmp").uplink_bytes, run(12, "ecmp").uplink_bytes
    )


def test_failed_uplink_carries_nothing_and_spraying_stays_fair():
    dead = (0, 1, 0)
    fabric = node_per_leaf(failed=[dead])
    traffic = make_traffic(fabric, "all-to-all", seed=2)
    for mode in ("ecmp", "flowlet", "spray"):
        r = simulate(fabric, traffic, mode, seed=2)
        assert r.link_gbps[dead] == 0
        assert r.uplink_bytes[dead] == 0, mode
        assert r.downlink_bytes[dead] == 0, mode
    spray = simulate(fabric, traffic, "spray")
    assert spray.jain_per_leaf[0] == pytest.approx(1.0, abs=1e-9)
    # leaf 0 lost one of 8 uplinks: each live one carries 8/7 of the no-failure load
    healthy = simulate(node_per_leaf(), traffic, "spray")
    assert spray.uplink_bytes[0, 0, 0] == pytest.approx(
        healthy.uplink_bytes[0, 0, 0] * 8 / 7
    )


def test_stretch_is_at_least_one_and_jct_is_the_slowest_flow():
    fabric = node_per_leaf(nodes=8, spines=2, links=1)  # 4:1 oversubscribed
    traffic = make_traffic(fabric, "all-to-all", jobs=2, seed=5)
    for mode in ("ecmp", "flowlet", "spray"):
        r = simulate(fabric, traffic, mode, seed=5)
        assert r.stretch.min() >= 1 - 1e-12
        for job in range(2):
            mine = traffic.job == job
            assert r.jct_ratio[job] == pytest.approx(
                r.fct_s[mine].max() / r.ideal_fct_s[mine].max()
            )
        if mode == "spray":
            assert r.stretch_worst == pytest.approx(4.0)
        else:
            assert r.stretch_worst >= 4 - 1e-9


def test_ring_bytes_per_gpu():
    fabric = node_per_leaf(nodes=4)
    traffic = make_traffic(fabric, "ring", scope="rail", message_bytes=1000.0)
    assert len(traffic.src) == 32
    assert np.allclose(traffic.nbytes, 2 * 3 / 4 * 1000.0)
    assert np.all(traffic.src % 8 == traffic.dst % 8)


def test_compare_gives_confidence_intervals():
    fabric = node_per_leaf(nodes=8)
    summary = compare(
        fabric, seeds=range(6), pattern="all-to-all", scope="rail", jobs=2
    )
    est = summary["ecmp"].metrics["max_load_ratio"]
    assert est.n == 6 and est.low <= est.mean <= est.high
    spray = summary["spray"].metrics["jain"]
    assert spray.mean == pytest.approx(1.0)
    assert spray.high - spray.low == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: make_traffic(f, "broadcast"), "unknown traffic pattern 'broadcast'"),
        (lambda f: make_traffic(f, "ring", jobs=5), "5 jobs do not fit on 4 nodes"),
        (lambda f: make_traffic(f, "ring", jobs=33), "33 jobs but only 32 GPUs"),
        (lambda f: make_traffic(f, "ring", jobs=4), "a job needs at least 2 nodes"),
        (
            lambda f: make_traffic(f, "ring", flows_per_pair=0),
            "flows per GPU pair must be >= 1",
        ),
        (lambda f: make_traffic(f, "ring", placement="random"), "unknown placement"),
        (
            lambda f: simulate(f, make_traffic(f, "ring"), "wcmp"),
            "unknown load-balancing mode",
        ),
        (
            lambda f: simulate(f, make_traffic(f, "ring"), "ecmp", hash="md5"),
            "unknown hash",
        ),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(node_per_leaf())


def test_bad_fabric_is_a_clear_error():
    with pytest.raises(ValueError, match="not a positive multiple of rails=8"):
        LeafSpine(2, 2, 1, 400.0, 400.0, np.zeros(12, dtype=int), rails=8)
    with pytest.raises(ValueError, match="outside 0..1"):
        LeafSpine(2, 2, 1, 400.0, 400.0, np.full(8, 2), rails=8)
    with pytest.raises(ValueError, match="failed link"):
        LeafSpine(
            2,
            2,
            1,
            400.0,
            400.0,
            np.zeros(8, dtype=int),
            rails=8,
            failed=frozenset({(0, 5, 0)}),
        )


@pytest.mark.parametrize("failed", [(), [(0, 1, 0)]])
def test_flowlet_greedy_levels_equal_flowlets_to_within_one(failed):
    """Greedy least-loaded with equal flowlets: a leaf's live uplinks end within one flowlet of
    each other (without failures the vectorised round-robin path, with one the step loop)."""
    fabric = node_per_leaf(nodes=6, failed=failed)
    traffic = make_traffic(fabric, "all-to-all", message_bytes=8e6, seed=4)
    r = simulate(fabric, traffic, "flowlet", flowlets=3, seed=4)
    flowlet = 8e6 / 3
    live = fabric.alive
    for leaf in range(fabric.leaves):
        loads = r.uplink_bytes[leaf][live[leaf]]
        assert loads.max() - loads.min() <= flowlet * (1 + 1e-9), (leaf, loads)
    assert r.uplink_bytes.sum() == pytest.approx(traffic.nbytes.sum())
