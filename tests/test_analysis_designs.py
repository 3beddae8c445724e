"""`fabricgen analyze` on real builds of the shipped rail designs (issue 19): multi-rail leaves
(small-32-gpu), rail-only without spines (rail-only-1024), two-plane NICs (dual-plane-2048) and
top-of-rack (tor-64-gpu). Each intent is compiled and written in-process once per worker (conftest shipped_build)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from fabricgen.analysis import clos as paths
from fabricgen.analysis.balancing import clos_of, path_shares, traffic
from fabricgen.analysis.fabric import read_fabric
from fabricgen.analysis.limits import TrafficOptions
from fabricgen.analysis.schema import AnalysisOutput
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def builds(shipped_build):
    return shipped_build


def analyze(*args: str) -> cli_runner.Completed:
    return cli_runner.fabricgen("analyze", *args, cwd=ROOT)


def test_rail_only_cross_rail_goes_pxn_and_loads_no_fabric_link(builds):
    build_dir = builds("rail-only-1024")
    model = clos_of(read_fabric(build_dir))
    assert (model.gpus, model.spines, len(model.tail)) == (1024, 0, 0)  # 8 leaves, no spine, no fabric link
    shares = path_shares(model, traffic(model, TrafficOptions(scope="cross-rail"), 0))
    assert shares.pxn == pytest.approx(7 / 8)  # a GPU's peers on the 7 other rails
    assert shares.across_leaves == 0 and shares.within_leaf == pytest.approx(1.0)
    run = analyze(str(build_dir), "--scope", "cross-rail", "--no-sweep", "--seeds", "1")
    assert run.returncode == 0, run.stderr
    assert "87.5% of the flows go between rails (or planes) that share no switch: each crosses its node's scale-up domain (NVLink, PXN)" in run.stdout
    assert "no flow crosses from one leaf to another, so no fabric link carries a byte" in run.stdout
    assert "Try `--scope cross-rail`" not in run.stdout and "never leaves a leaf" not in run.stdout


def test_multi_rail_leaves_keep_rail_traffic_local_and_half_of_cross_rail_traffic(builds):
    build_dir = builds("small-32-gpu")  # rails 1-4 on one leaf, 5-8 on the other, 4 nodes
    rail = analyze(str(build_dir), "--no-sweep", "--seeds", "1")
    assert rail.returncode == 0, rail.stderr
    assert "Each rail's GPUs here are on one leaf (a leaf serves several rails): 100.0% of the flows stay within a leaf" in rail.stdout
    assert "Try `--scope cross-rail`" in rail.stdout  # true here: the leaves have spines
    cross = analyze(str(build_dir), "--no-sweep", "--seeds", "3", "--scope", "cross-rail", "--json")
    assert cross.returncode == 0, cross.stderr
    document = AnalysisOutput.model_validate(json.loads(cross.stdout))
    assert document.crosses_fabric and (document.fabric.gpus, document.fabric.planes) == (32, 1)
    model = clos_of(read_fabric(build_dir))
    shares = path_shares(model, traffic(model, TrafficOptions(scope="cross-rail"), 0))
    assert shares.across_leaves == pytest.approx(0.5) and shares.within_leaf == pytest.approx(0.5)
    text = analyze(str(build_dir), "--no-sweep", "--seeds", "1", "--scope", "cross-rail").stdout
    assert "50.0% of the flows cross from one leaf to another; 50.0% have both NICs on one leaf (a leaf here serves several rails)" in text


def test_dual_plane_counts_each_gpu_once_and_loads_both_planes_evenly(builds):
    build_dir = builds("dual-plane-2048")  # DGX-B300: 8 ConnectX-8 x 2 ports, port p on plane p
    fabric = read_fabric(build_dir)
    assert fabric.nic_leaf.shape == (256, 8, 2)
    model = clos_of(fabric)
    assert (model.nodes, model.gpus, model.rails, model.planes) == (256, 2048, 8, 2)
    # one leaf's GPUs send (rail scope): each GPU's flow splits over its two planes
    options = TrafficOptions(scope="rail", senders="leaf:be-su01-leaf1")
    flows = traffic(model, options, 0)
    assert len(flows.src) == 32 * 255  # the 32 GPUs of nic1 in unit 1, to every other node's GPU 1
    result = paths.simulate(model, flows, "spray")
    assert len(result.fct_s) == len(flows.src)
    plane_of_leaf = np.zeros(model.leaves, dtype=int)
    plane_of_leaf[model.leaf_of_nic[1::2]] = 1  # port 2 of every NIC: plane 2
    up = result.uplink & (result.tail < model.leaves)
    per_plane = np.bincount(plane_of_leaf[result.tail[up]], weights=result.edge_bytes[up], minlength=2)
    assert per_plane[0] > 0 and per_plane[0] == pytest.approx(per_plane[1])
    assert per_plane.sum() == pytest.approx(flows.nbytes.sum() * (1 - 31 / 255))  # bytes to other units leave the leaf


@pytest.mark.slow
def test_dual_plane_cross_rail_is_refused_before_it_runs_naming_what_fits(builds):
    build_dir = builds("dual-plane-2048")
    started = time.monotonic()
    run = analyze(str(build_dir), "--scope", "cross-rail", "--no-sweep", "--flows-per-pair", "2")
    assert run.returncode == 2, run.stdout
    assert time.monotonic() - started < 60  # refused from sizes, not after minutes of work
    assert "8,355,840 flows" in run.stderr  # 256 x 255 nodes x 8 x 8 GPUs x 2 QPs, not 16 x 16
    for fix in ("lower --flows-per-pair to 1", "lower --seeds to", "use --scope rail", "use --senders leaf:", "use --concurrent-jobs"):
        assert fix in run.stderr, fix
    run = analyze(str(build_dir), "--senders", "leaf:be-su01-leaf1", "--no-sweep", "--seeds", "1", "--json")
    assert run.returncode == 0, run.stderr
    document = AnalysisOutput.model_validate(json.loads(run.stdout))
    assert (document.fabric.gpus, document.fabric.gpu_nics, document.fabric.planes) == (2048, 4096, 2)


def test_top_of_rack_cross_rail_uses_the_spines_and_flowlet_sits_between(builds):
    build_dir = builds("tor-64-gpu")  # 2 leaves, odd rails on one and even on the other
    run = analyze(str(build_dir), "--scope", "cross-rail", "--no-sweep", "--seeds", "5", "--json")
    assert run.returncode == 0, run.stderr
    document = AnalysisOutput.model_validate(json.loads(run.stdout))
    assert document.crosses_fabric and document.fabric.gpus == 64
    jct = {m.mode: m.metrics["max_load_ratio"].mean for m in document.modes}
    assert jct["spray"] == pytest.approx(1.0) and jct["spray"] < jct["flowlet"] < jct["ecmp"]
