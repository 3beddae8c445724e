"""The Cisco whitepaper's load-balancing test (Figure 17) as the path model sees it, and what the
model gives for it: the calibration docs/commands/analyze.md reports and a test pins.

The setup, from seed 000 ("Cisco Nexus 9000 Series Switches for AI Clusters", "Performance of
load-balancing schemes"): NCCL's alltoall bus bandwidth on leaves with 8 downlinks and 8 uplinks of
400 GE each (non-blocking 1:1), N9K-C9364D-GX2A leaves and spines, DGX H100 nodes of 8 GPUs, each
GPU's 400 GE NIC on its rail's leaf (rail-optimized). 8 downlinks per rail leaf are 8 nodes, 64
GPUs; the paper's 256-GPU unit has 4 spines, so 8 uplinks are 2 to each. Published: ECMP 36.66,
DLB flowlet 43.48, DLB per-packet 50.39 GB/s. Bus bandwidth is bytes over time, so a ratio of
bandwidths is the inverse ratio of completion times.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricgen.analysis.balancing import compare
from fabricgen.analysis.clos import Clos
from fabricgen.analysis.limits import TrafficOptions

PUBLISHED_GBYTES_S = {"ecmp": 36.66, "flowlet": 43.48, "spray": 50.39}
NODES, RAILS, SPINES, LINKS_PER_SPINE, GBPS = 8, 8, 4, 2, 400.0
# NCCL 2.19-2.28 (covering the paper's DGX OS 6.1 / CUDA 12.6 era): 2 channels per network peer
# (2.19: NCCL_NCHANNELS_PER_NET_PEER 2; from 2.20: max(NICs near the GPU, 2), src/graph/paths.cc),
# one connection per channel and
# NCCL_IB_QPS_PER_CONNECTION 1 (src/transport/net_ib), so 2 queue pairs, 2 UDP source ports, per peer
QUEUE_PAIRS_PER_PEER = 2


def figure17() -> Clos:
    """8 rail leaves (8 downlinks, 2 uplinks to each of 4 spines), 8 nodes of 8 GPUs at 400G."""
    leaves = [f"leaf{r + 1}" for r in range(RAILS)]
    spines = [f"spine{s + 1}" for s in range(SPINES)]
    ends = np.array([(leaf, RAILS + s) for leaf in range(RAILS) for s in range(SPINES) for _ in range(LINKS_PER_SPINE)], dtype=np.int64)
    tail = np.column_stack((ends[:, 0], ends[:, 1])).ravel()
    head = np.column_stack((ends[:, 1], ends[:, 0])).ravel()
    nic_leaf = np.tile(np.arange(RAILS), NODES)  # port node * rails + rail is on its rail's leaf
    return Clos(
        names=tuple(leaves + spines),
        tiers=np.array([0] * RAILS + [1] * SPINES),
        leaves=RAILS,
        tail=tail,
        head=head,
        gbps=np.full(len(tail), GBPS),
        cables=tuple(f"F17-{i}" for i in range(len(ends))),
        leaf_of_nic=nic_leaf,
        rails=RAILS,
        host_gbps=GBPS,
        alive=np.ones(len(tail), dtype=bool),
        nic_alive=np.ones(len(nic_leaf), dtype=bool),
    )


@dataclass(frozen=True)
class Calibration:
    schedule: str
    jct: dict[str, float]  # mode -> the collective's completion time / ideal, mean over seeds

    def gain(self, mode: str) -> float:
        """Bandwidth of `mode` over ECMP's: ECMP's completion time over the mode's."""
        return self.jct["ecmp"] / self.jct[mode]

    @staticmethod
    def published(mode: str) -> float:
        return PUBLISHED_GBYTES_S[mode] / PUBLISHED_GBYTES_S["ecmp"]


def calibrate(schedule: str = "nccl", seeds: int = 20, message_bytes: int = 1 << 20, load: float = 1.0, queue_pairs: int = QUEUE_PAIRS_PER_PEER) -> Calibration:
    """Cross-rail all-to-all (NCCL's alltoall without PXN: every GPU to every GPU of the other
    nodes, directly over the fabric) on `figure17()`, every mode, mean over `seeds`."""
    options = TrafficOptions(
        pattern="all-to-all", scope="cross-rail", schedule=schedule, message_bytes=message_bytes, flows_per_pair=queue_pairs, load=load, seeds=seeds
    )
    found = compare(figure17(), options, range(seeds))
    return Calibration(schedule, {mode: summary.metrics["jct_ratio_worst"].mean for mode, summary in found.items()})
