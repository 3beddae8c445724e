"""Collective traffic for the load-balancing simulation (analysis/clos.py): pure, vectorised
(no I/O).

`make_traffic` builds the flows of one or more concurrent jobs (all-to-all, ring all-reduce,
permutation, shift; rail or cross-rail scope) between GPUs g = node * rails + rail of any fabric
that says how many `nodes` and `rails` (GPUs per node) it has. Also here: the CRC-32 of a RoCEv2
5-tuple (vectorised zlib.crc32) the ECMP hash starts from, and the confidence intervals over seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


class SizedFabric(Protocol):
    """What traffic needs of a fabric: its GPU nodes and GPUs per node (clos.Clos has both)."""

    @property
    def nodes(self) -> int: ...

    @property
    def rails(self) -> int: ...


PATTERNS = ("all-to-all", "ring", "permutation", "shift")
SCOPES = ("cross-rail", "rail")
PLACEMENTS = ("contiguous", "scattered")
MODES = ("ecmp", "flowlet", "spray")
HASHES = ("crc32", "random")

ROCEV2_PORT = 4791
UDP = 17


@dataclass(frozen=True)
class Traffic:
    """Flows: source and destination NIC, bytes, RoCEv2 UDP source port, job index."""

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    sport: np.ndarray
    job: np.ndarray
    jobs: int


@dataclass(frozen=True)
class Estimate:
    """Mean over seeds with a 95 % confidence interval (Student t)."""

    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Summary:
    mode: str
    metrics: dict[str, Estimate] = field(default_factory=dict)


# ---------------------------------------------------------------- traffic


def place_jobs(nodes: int, jobs: int, placement: str, rng: np.random.Generator) -> list[np.ndarray]:
    """Split the nodes into `jobs` equal jobs (nodes // jobs each, the rest idle): consecutive
    blocks, or a seeded random permutation cut into blocks (each job's nodes sorted)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; expected one of {PLACEMENTS}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs > nodes:
        raise ValueError(f"{jobs} jobs do not fit on {nodes} nodes (one node per job at least)")
    per_job = nodes // jobs
    order = np.arange(nodes) if placement == "contiguous" else rng.permutation(nodes)
    return [np.sort(order[j * per_job : (j + 1) * per_job]) for j in range(jobs)]


def _job_pairs(job_nodes: np.ndarray, rails: int, pattern: str, scope: str, message: float, rng=None):
    """(src gpu, dst gpu, bytes per pair) for one job. Same-node pairs use NVLink: left out."""
    n = len(job_nodes)
    if pattern == "all-to-all":
        # message = bytes every GPU sends to every peer GPU on another node
        gpus = (job_nodes[:, None] * rails + np.arange(rails)[None, :]).ravel()
        src_grid, dst_grid = np.meshgrid(gpus, gpus, indexing="ij")
        src, dst = src_grid.ravel(), dst_grid.ravel()
        keep = (src // rails) != (dst // rails)
        if scope == "rail":
            keep &= (src % rails) == (dst % rails)
        return src[keep], dst[keep], float(message)
    if pattern in ("permutation", "shift"):
        return _one_way(job_nodes, rails, pattern, scope, message, rng)
    # Ring all-reduce of a `message`-byte buffer over the job's n nodes: 2(n-1) steps of
    # message/n each, always to the same successor; folded into one transfer of 2(n-1)/n *
    # message per GPU (the per-step link loads are proportional, so drain times add up exactly).
    node_i = np.repeat(np.arange(n), rails)
    rail = np.tile(np.arange(rails), n)
    nxt = (node_i + 1) % n
    # rail: ring r stays on rail r; cross-rail: each hop also moves to the next rail
    dst_rail = rail if scope == "rail" else (rail + 1) % rails
    src = job_nodes[node_i] * rails + rail
    dst = job_nodes[nxt] * rails + dst_rail
    return src, dst, 2.0 * (n - 1) / n * message


def _one_way(job_nodes: np.ndarray, rails: int, pattern: str, scope: str, message: float, rng):
    """Every GPU sends `message` bytes to exactly one GPU on another node, and every GPU receives
    from exactly one. permutation: the job's nodes in a seeded random cycle (node i sends to the
    next one), and with cross-rail scope each node's GPUs to a seeded random permutation of the
    rails; shift: node i sends to node i + n/2 (the farthest, across the job's halves), rail r
    to rail r (rail scope) or r + 1 (cross-rail)."""
    n = len(job_nodes)
    if pattern == "permutation":
        cycle = rng.permutation(n)
        successor = np.empty(n, dtype=np.int64)
        successor[cycle] = np.roll(cycle, -1)
        dst_rail = np.tile(np.arange(rails), (n, 1)) if scope == "rail" else rng.permuted(np.tile(np.arange(rails), (n, 1)), axis=1)
    else:
        successor = (np.arange(n) + max(1, n // 2)) % n
        dst_rail = (np.arange(rails)[None, :] + (0 if scope == "rail" else 1)) % rails + np.zeros((n, 1), dtype=np.int64)
    src = (job_nodes[:, None] * rails + np.arange(rails)[None, :]).ravel()
    dst = (job_nodes[successor][:, None] * rails + dst_rail).ravel()
    return src, dst, float(message)


def traffic_size(nodes: int, rails: int, pattern: str, scope: str, jobs: int, flows_per_pair: int) -> tuple[int, int]:
    """(flows, grid) of `make_traffic` on `nodes` nodes of `rails` GPUs, without building it:
    the flows of every job, and the cells of one job's GPU-pair grid that all-to-all builds
    before keeping the pairs that cross nodes (0 for a ring). Plain integers, so a caller can
    see what a traffic matrix will cost before numpy is asked for it."""
    per_job = nodes // jobs if jobs >= 1 else 0
    if per_job < 2:
        return 0, 0
    if pattern == "all-to-all":
        peers = rails if scope == "rail" else rails * rails
        return jobs * per_job * (per_job - 1) * peers * flows_per_pair, (per_job * rails) ** 2
    return jobs * per_job * rails * flows_per_pair, 0  # ring, permutation, shift: one peer per GPU


def make_traffic(
    fabric: SizedFabric,
    pattern: str,
    *,
    scope: str = "cross-rail",
    jobs: int = 1,
    placement: str = "contiguous",
    message_bytes: float = 1 << 20,
    flows_per_pair: int = 1,
    seed: int = 0,
) -> Traffic:
    """Flows of `jobs` concurrent jobs running `pattern` ("all-to-all" or "ring" all-reduce),
    `scope` "rail" (peers on the same rail) or "cross-rail". A GPU pair's bytes are split over
    `flows_per_pair` flows (QPs), each with a seeded random UDP source port in 49152..65535."""
    if pattern not in PATTERNS:
        raise ValueError(f"unknown traffic pattern {pattern!r}; expected one of {PATTERNS}")
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; expected one of {SCOPES}")
    if flows_per_pair < 1:
        raise ValueError(f"flows per GPU pair must be >= 1, got {flows_per_pair}")
    if message_bytes <= 0:
        raise ValueError(f"message size must be > 0, got {message_bytes}")
    if jobs > fabric.nodes * fabric.rails:
        raise ValueError(f"{jobs} jobs but only {fabric.nodes * fabric.rails} GPUs")
    rng = np.random.default_rng(seed)
    placed = place_jobs(fabric.nodes, jobs, placement, rng)
    if len(placed[0]) < 2:
        raise ValueError(f"{jobs} jobs on {fabric.nodes} nodes leave {len(placed[0])} node per job; a job needs at least 2 nodes to use the network")
    parts = [_job_pairs(nodes, fabric.rails, pattern, scope, message_bytes, rng) for nodes in placed]
    src = np.concatenate([np.repeat(p[0], flows_per_pair) for p in parts])
    dst = np.concatenate([np.repeat(p[1], flows_per_pair) for p in parts])
    nbytes = np.concatenate([np.full(len(p[0]) * flows_per_pair, p[2] / flows_per_pair) for p in parts])
    job = np.concatenate([np.full(len(p[0]) * flows_per_pair, j) for j, p in enumerate(parts)])
    sport = rng.integers(49152, 65536, size=len(src))
    return Traffic(src=src, dst=dst, nbytes=nbytes, sport=sport, job=job, jobs=jobs)


# ---------------------------------------------------------------- hashing


def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0xEDB88320), table >> 1)
    return table.astype(np.uint32)


_CRC_TABLE = _crc_table()


def crc32_tuples(switch_seed, src_ip, dst_ip, sport, dport: int = ROCEV2_PORT) -> np.ndarray:
    """CRC-32 (zlib's) of the packed big-endian bytes seed(4) src(4) dst(4) proto(1) sport(2)
    dport(2), vectorised over flows; equal to zlib.crc32 of the same 17 bytes."""
    n = len(src_ip)
    cols = [
        (np.broadcast_to(np.asarray(switch_seed, dtype=np.uint64), (n,)), 4),
        (np.asarray(src_ip, dtype=np.uint64), 4),
        (np.asarray(dst_ip, dtype=np.uint64), 4),
        (np.full(n, UDP, dtype=np.uint64), 1),
        (np.asarray(sport, dtype=np.uint64), 2),
        (np.full(n, dport, dtype=np.uint64), 2),
    ]
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    for values, width in cols:
        for shift in range(8 * (width - 1), -1, -8):
            byte = ((values >> np.uint64(shift)) & np.uint64(0xFF)).astype(np.uint32)
            crc = _CRC_TABLE[(crc ^ byte) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
    return crc ^ np.uint32(0xFFFFFFFF)


# ---------------------------------------------------------------- many seeds

_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228}  # fmt: skip


def t975(df: int) -> float:
    """Two-sided 95 % Student t quantile: table to 10 degrees of freedom, then the
    Cornish-Fisher expansion (error < 0.002)."""
    if df in _T975:
        return _T975[df]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def estimate(values) -> Estimate:
    """Mean and 95 % Student-t confidence interval of per-seed values."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if len(v) < 2:
        return Estimate(mean, mean, mean, len(v))
    half = t975(len(v) - 1) * float(v.std(ddof=1)) / np.sqrt(len(v))
    return Estimate(mean, mean - half, mean + half, len(v))
