"""`analyze` calibrated on the Cisco whitepaper's load-balancing test (seed 000, Figure 17: NCCL
alltoall, leaves of 8 downlinks and 8 uplinks, ECMP 36.66, DLB flowlet 43.48, DLB per-packet
50.39 GB/s), the effects of message size and offered load, and failures ranked by what a job feels.

The published ratios come from the seed: 50.39 / 36.66 = 1.375 and 43.48 / 36.66 = 1.186. The
model's figures are pinned as docs/commands/analyze.md gives them ("Calibration"), so a change in
the model shows here; a test also says how far they may be from the published ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fabricgen.analysis.calibration import Calibration, calibrate, figure17
from fabricgen.analysis.capacity import single_failures, worst_for_capacity
from fabricgen.analysis.fabric import read_fabric
from fabricgen.analysis.loadbalance import make_traffic
from fabricgen.analysis.schedule import rounds
from fabricgen.analysis.schema import AnalysisOutput
from tests import cli_runner

ROOT = Path(__file__).resolve().parents[1]
SEEDS = 4  # the docs' figures are over these seeds (0-3); deterministic


@pytest.fixture(scope="module")
def nccl() -> Calibration:
    return calibrate("nccl", seeds=SEEDS)


def test_the_published_ratios_are_the_seeds_figures():
    assert Calibration.published("spray") == pytest.approx(50.39 / 36.66) == pytest.approx(1.375, abs=5e-4)
    assert Calibration.published("flowlet") == pytest.approx(43.48 / 36.66) == pytest.approx(1.186, abs=5e-4)


def test_figure17_is_8_rail_leaves_of_8_downlinks_and_8_uplinks():
    model = figure17()
    assert (model.leaves, model.spines, model.nodes, model.gpus) == (8, 4, 8, 64)
    up = (model.tail < model.leaves) & (model.head >= model.leaves)
    assert np.bincount(model.tail[up]).tolist() == [8] * 8  # 8 up
    assert np.bincount(model.leaf_of_nic).tolist() == [8] * 8  # 8 down: one NIC of each node


def test_nccl_rounds_send_to_one_peer_node_at_a_time():
    """An all-to-all's flows fall in nodes - 1 rounds; in round d every GPU sends to the GPUs of
    the node d after its own, all 8 of them (NCCL's batch of 8 p2p rounds)."""
    model = figure17()
    flows = make_traffic(model, "all-to-all", scope="cross-rail")
    which = rounds(flows, model.rails)
    assert sorted(set(which.tolist())) == list(range(1, 8))
    src_node, dst_node = flows.src // 8, flows.dst // 8
    assert ((dst_node - src_node) % 8 == which).all()
    per_gpu = np.bincount(flows.src[which == 3], minlength=64)
    assert (per_gpu == 8).all()


def test_the_model_on_figure17_gives_the_documented_ratios_near_the_published(nccl):
    """docs: NCCL's rounds, 2 queue pairs per peer, 4 seeds: spray / ECMP 1.43, flowlet / ECMP 1.23
    (published 1.375 and 1.186): within 0.06 and 0.05."""
    assert nccl.gain("spray") == pytest.approx(1.4285, abs=0.002)
    assert nccl.gain("flowlet") == pytest.approx(1.2291, abs=0.002)
    assert abs(nccl.gain("spray") - Calibration.published("spray")) < 0.06
    assert abs(nccl.gain("flowlet") - Calibration.published("flowlet")) < 0.05
    assert nccl.jct["spray"] == pytest.approx(1.0)  # spraying reaches the NICs' rate


def test_all_flows_at_once_cannot_reach_the_published_ratios():
    """docs: the fluid schedule averages the collisions of the whole collective: 1.11 and 1.08."""
    fluid = calibrate("fluid", seeds=SEEDS)
    assert fluid.gain("spray") == pytest.approx(1.1094, abs=0.002)
    assert fluid.gain("flowlet") == pytest.approx(1.0775, abs=0.002)


def test_small_messages_are_latency_bound_and_give_flowlet_nothing(nccl):
    """16 KiB per GPU pair: each round's latency dominates, ECMP's collisions matter less; 128 KiB
    (64 KiB per queue pair, within one 128 KiB chunk): no gap inside a flow, so flowlet is ECMP."""
    small = calibrate("nccl", seeds=1, message_bytes=16 << 10)
    one_chunk = calibrate("nccl", seeds=1, message_bytes=128 << 10)
    assert 1.0 < small.gain("spray") < one_chunk.gain("spray") < nccl.gain("spray")
    assert small.gain("flowlet") == pytest.approx(1.0) and one_chunk.gain("flowlet") == pytest.approx(1.0)
    assert nccl.gain("flowlet") > 1.1


def test_offered_load_below_line_rate_makes_collisions_matter_less(nccl):
    loads = [calibrate("nccl", seeds=1, load=load) for load in (0.8, 0.6)]
    assert nccl.gain("spray") > loads[0].gain("spray") > loads[1].gain("spray")
    assert loads[1].gain("spray") == pytest.approx(1.0, abs=0.01)  # at 60 % the worst collision fits


def test_a_leaf_failure_ranks_above_a_spine_failure_on_cisco_256(shipped_build):
    """cisco-256: a rail leaf down strands its unit's 32 GPUs of that rail: a job over them stops.
    A spine of four down: 7/8 of a leaf's bytes leave it, over 3 spines instead of 4, 7/8 x 4/3 =
    7/6 of its NICs' time. One leaf-spine cable of 32: 7/8 x 32/31 < 1, no slowdown."""
    failures = single_failures(read_fabric(shipped_build("cisco-256-gpu")))
    kinds = [impact.kind for impact in failures]
    assert kinds.index("leaf") < kinds.index("spine") < kinds.index("link")
    first = failures[0]
    assert first.kind == "leaf" and first.stops_a_job and first.stranded_gpus == 32
    spine = next(impact for impact in failures if impact.kind == "spine")
    assert spine.job_slowdown == pytest.approx(7 / 6)
    assert all(impact.job_slowdown == 1.0 for impact in failures if impact.kind == "link")
    assert worst_for_capacity(failures).kind == "spine"  # --max-failure-cut still reads capacity


def test_the_report_names_the_failure_to_fear_and_max_failure_cut_reads_capacity(shipped_build, tmp_path):
    build = str(shipped_build("cisco-256-gpu"))
    run = cli_runner.fabricgen("analyze", build, "--no-traffic", "--json", "--max-failure-cut", "20", cwd=ROOT)
    assert run.returncode == 1, run.stderr  # the spine's 25 % cut, as before the ranking changed
    found = AnalysisOutput.model_validate(json.loads(run.stdout)).capacity
    assert found is not None
    assert (found.most_feared_failure, found.most_feared_stops_job, found.worst_single_failure) == ("leaf be-su01-leaf1", True, "spine be-spine01")
    report = tmp_path / "a.md"
    assert cli_runner.fabricgen("analyze", build, "--no-traffic", "--report", str(report), cwd=ROOT).returncode == 0
    text = report.read_text()
    assert "Failure to fear most: leaf be-su01-leaf1: it strands 32 GPUs on 32 nodes, so a job using them stops" in text
    assert "| spine be-spine01 | 1.167x slower |" in text


def test_analyze_runs_nccl_rounds_when_asked(shipped_build, tmp_path):
    report = tmp_path / "a.md"
    # 8 jobs of 4 nodes: 3 rounds each, enough to see the command line reach schedule.py
    args = ("--scope", "cross-rail", "--schedule", "nccl", "--seeds", "1", "--no-sweep", "--modes", "ecmp,spray", "--concurrent-jobs", "8")
    run = cli_runner.fabricgen("analyze", str(shipped_build("cisco-256-gpu")), *args, "--json", "--report", str(report), cwd=ROOT)
    assert run.returncode == 0, run.stderr
    document = AnalysisOutput.model_validate(json.loads(run.stdout))
    assert document.traffic is not None and document.traffic["schedule"] == "nccl"
    jct = {m.mode: m.metrics["jct_ratio_worst"].mean for m in document.modes}
    assert jct["ecmp"] > 1.3 and jct["spray"] == pytest.approx(1.0)  # few flows per uplink in a round
    assert "Schedule: nccl (an all-to-all in NCCL's p2p rounds, one peer node at a time, 14 us of latency per round)." in report.read_text()
