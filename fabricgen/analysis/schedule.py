"""When a collective's flows run: all at once (the fluid limit), or in NCCL's point-to-point rounds.

In: a `clos.Clos`, one seed's `loadbalance.Traffic` and the schedule's parameters. Out: one
`clos.PathResult` per mode, whose completion times count from the start of the collective.

`fluid` runs every flow of the collective at once: a link's load is the whole collective's bytes,
so many small collisions average out. `nccl` runs an all-to-all as NCCL does (ncclGroup of
ncclSend/ncclRecv): in rounds, one peer node at a time. NCCL's p2p schedule (2.23 to 2.29:
src/init.cc `p2pSchedule`) orders a rank's peers by node delta, then by local delta, and puts
NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8, src/include/device.h) rounds in one batch (2.19 to 2.21:
src/enqueue.cc fuses NCCL_MAX_WORK_ELEMENTS_P2P / 2 = 8 send/recv a round, in blocks aligned on node
boundaries): with 8 GPUs per node a GPU sends to the 8 GPUs of node n + d at once, then moves on. In a round every
leaf's NICs send to only 7 or 8 other leaves, a few flows per uplink: ECMP's collisions are those of
few balls in few bins, and the collective waits for each round's slowest flow.

A GPU moves to its next round when its own sends and receives of the round are done (no global
barrier); the collective ends with its slowest GPU. Each round also pays a fixed latency, so small
messages are latency bound and every mode's ratio tends to 1.

Message size also sets how many bursts a flow has in flowlet mode: NCCL moves a connection's data in
chunks of NCCL_P2P_NET_CHUNKSIZE (128 KiB, src/init.cc), and a flow of one chunk has no gap inside
it at which a flowlet could move: it stays on its ECMP path.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from fabricgen.analysis import clos as paths
from fabricgen.analysis.clos import Clos, FlowletModel, PathResult
from fabricgen.analysis.loadbalance import Traffic

SCHEDULES = ("fluid", "nccl")
# NCCL_P2P_NET_CHUNKSIZE's default: the unit a network connection moves (NCCL src/init.cc, 2.19 to now)
P2P_NET_CHUNK_BYTES = 128 * 1024
# A round's fixed cost: NCCL's own tuning model's latency of one network step with the Simple
# protocol (src/graph/tuning.cc hwLat[NET][Ring][Simple], 14 us in NCCL 2.19-2.23)
ROUND_LATENCY_S = 14e-6


def bursts(flowlet: FlowletModel, bytes_per_flow: float) -> FlowletModel:
    """The flowlet model with at most as many bursts as the flow has chunks: a flow of one chunk
    cannot move (no idle gap inside it), more chunks give more chances, up to `flowlet.flowlets`."""
    chunks = max(1, math.ceil(bytes_per_flow / P2P_NET_CHUNK_BYTES))
    return replace(flowlet, flowlets=min(flowlet.flowlets, chunks))


def rounds(traffic: Traffic, rails: int) -> np.ndarray:
    """[flow] the NCCL round of each all-to-all flow: the node delta from its source's node to its
    destination's within their job, 1 .. nodes - 1 (the order NCCL takes them in does not change
    the sum of their times)."""
    src_node, dst_node = traffic.src // rails, traffic.dst // rails
    nodes = int(max(src_node.max(initial=0), dst_node.max(initial=0))) + 1
    keys = np.unique(np.concatenate((traffic.job * nodes + src_node, traffic.job * nodes + dst_node)))
    job_of_key = keys // nodes
    first = np.searchsorted(job_of_key, np.arange(traffic.jobs))
    position = np.arange(len(keys)) - first[job_of_key]  # a node's place among its job's nodes
    size = np.bincount(job_of_key, minlength=traffic.jobs)
    src_pos = position[np.searchsorted(keys, traffic.job * nodes + src_node)]
    dst_pos = position[np.searchsorted(keys, traffic.job * nodes + dst_node)]
    return (dst_pos - src_pos) % np.maximum(size[traffic.job], 1)


def simulate(
    clos: Clos,
    traffic: Traffic,
    modes: tuple[str, ...],
    *,
    schedule: str = "fluid",
    pattern: str = "all-to-all",
    hash: str = "crc32",
    flowlet: FlowletModel | None = None,
    load: float = 1.0,
    seed: int = 0,
) -> dict[str, PathResult]:
    """Every mode of `modes` on `traffic` under `schedule` ("fluid" or "nccl")."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; expected one of {SCHEDULES}")
    per_flow = float(traffic.nbytes.max(initial=0.0)) / clos.planes
    model = bursts(flowlet or FlowletModel(), per_flow)
    if schedule == "fluid":
        return paths.simulate_modes(clos, traffic, modes, hash=hash, flowlet=model, load=load, seed=seed)
    which = rounds(traffic, clos.rails) if pattern == "all-to-all" else np.zeros(len(traffic.src), dtype=np.int64)
    return _in_rounds(clos, traffic, which, modes, hash=hash, flowlet=model, load=load, seed=seed)


def _in_rounds(clos: Clos, traffic: Traffic, which: np.ndarray, modes, *, hash, flowlet, load, seed) -> dict[str, PathResult]:
    """Each round simulated alone (its own ECMP hashes: new peers, new 5-tuples), then put end to
    end per GPU: a flow ends at its source's start of the round plus the round's latency plus its
    own time; a GPU's round lasts until its last send or receive of the round has ended."""
    gpus = len(clos.leaf_of_nic) // clos.planes
    alive = clos.nic_alive.reshape(-1, clos.planes)
    kept = (alive[traffic.src] & alive[traffic.dst]).any(axis=1)  # a GPU flow with a live port pair at both ends
    if not kept.all():
        traffic = Traffic(traffic.src[kept], traffic.dst[kept], traffic.nbytes[kept], traffic.sport[kept], traffic.job[kept], traffic.jobs)
        which = which[kept]
    order = np.argsort(which, kind="stable")
    cuts = np.flatnonzero(np.diff(which[order])) + 1
    start = {mode: np.zeros(gpus) for mode in modes}
    ideal_start = np.zeros(gpus)
    fct = {mode: np.zeros(len(which)) for mode in modes}
    ideal = np.zeros(len(which))
    loads = {mode: np.zeros(len(clos.tail)) for mode in modes}
    drains = dict.fromkeys(modes, 0.0)
    nic_drain = 0.0
    found: dict[str, PathResult] = {}
    for number, part in enumerate(np.split(order, cuts)):
        flows = Traffic(traffic.src[part], traffic.dst[part], traffic.nbytes[part], traffic.sport[part], traffic.job[part], traffic.jobs)
        results = paths.simulate_modes(clos, flows, modes, hash=hash, flowlet=flowlet, load=load, seed=seed * 1_000_003 + number)
        first = next(iter(results.values()))
        round_ideal = first.ideal_fct_s + ROUND_LATENCY_S
        ideal[part] = ideal_start[flows.src] + round_ideal
        ideal_start = _next_start(ideal_start, flows, round_ideal)
        nic_drain += first.nic_drain_s + ROUND_LATENCY_S
        for mode, result in results.items():
            took = result.fct_s + ROUND_LATENCY_S
            fct[mode][part] = start[mode][flows.src] + took
            start[mode] = _next_start(start[mode], flows, took)
            loads[mode] += result.edge_bytes
            drains[mode] += result.drain_s + ROUND_LATENCY_S
            found[mode] = result
    out = {}
    for mode, last in found.items():
        measured = paths.measure(clos, mode, loads[mode], fct[mode], ideal, traffic.job, traffic.jobs, nic_drain)
        out[mode] = replace(measured, drain_s=drains[mode], edge_gbps=last.edge_gbps)
    return out


def _next_start(start: np.ndarray, flows: Traffic, took: np.ndarray) -> np.ndarray:
    """Each GPU's start of its next round: this round's start plus its slowest send or receive."""
    busy = np.zeros_like(start)
    np.maximum.at(busy, flows.src, took)
    np.maximum.at(busy, flows.dst, took)
    return start + busy
