"""Load balancing on a 2-tier leaf-spine fabric under AI collective traffic: a pure, vectorised
fluid model (no I/O).

In: a `LeafSpine` (leaves, spines, parallel links, speeds, the leaf of every GPU NIC, failed links)
and a `Traffic` (flows built by `make_traffic`). Out: `simulate` gives one `ModeResult` per
balancing mode and seed; `compare` runs many seeds and gives means with 95 % confidence intervals.

Model (see also the README):
- Fluid flows, all starting together. A flow crosses its source NIC, for a cross-leaf flow one
  uplink leaf->spine and one downlink spine->leaf, and its destination NIC.
- Completion time is the *bottleneck drain time*: a resource (NIC or link) carrying B bytes at C
  bytes/s is busy for B/C; a flow finishes when the most loaded resource on its path has drained,
  FCT = max over its resources of B/C. This is exact for byte-proportional fair sharing of a single
  bottleneck and a lower bound otherwise; max-min water-filling is not done (it does not scale to
  the 4 M flows of a 2,048-GPU all-to-all in seconds).
- Ideal FCT = the same with a perfectly balanced, non-blocking fabric, i.e. the drain time of the
  two NICs only: max(bytes sent by src NIC, bytes received by dst NIC) / NIC rate. So stretch =
  FCT / ideal >= 1 exactly. JCT = max FCT over a job's flows; ideal JCT likewise.
- ECMP group of leaf A towards leaf B: the live uplinks (spine, link) whose spine still has a live
  link to B; at the spine, the live parallel links to B.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PATTERNS = ("all-to-all", "ring", "permutation", "shift")
SCOPES = ("cross-rail", "rail")
PLACEMENTS = ("contiguous", "scattered")
MODES = ("ecmp", "flowlet", "spray")
HASHES = ("crc32", "random")

ROCEV2_PORT = 4791
UDP = 17
_IP_BASE = 0x0A000000  # NIC i has the synthetic address 10.0.0.0 + i


@dataclass(frozen=True)
class LeafSpine:
    """A 2-tier leaf-spine fabric as plain data.

    `leaf_of_nic[g]` is the leaf of GPU NIC g (g = node * rails + rail). `failed` holds
    (leaf, spine, link) triples whose capacity is 0 in both directions.
    """

    leaves: int
    spines: int
    links: int
    uplink_gbps: float
    host_gbps: float
    leaf_of_nic: np.ndarray
    rails: int
    failed: frozenset[tuple[int, int, int]] = frozenset()

    def __post_init__(self) -> None:
        for name in ("leaves", "spines", "links", "rails"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"fabric: {name} must be >= 1, got {getattr(self, name)}"
                )
        if self.uplink_gbps <= 0 or self.host_gbps <= 0:
            raise ValueError("fabric: uplink_gbps and host_gbps must be > 0")
        nics = np.asarray(self.leaf_of_nic)
        if nics.ndim != 1 or len(nics) == 0 or len(nics) % self.rails:
            raise ValueError(
                f"fabric: leaf_of_nic has {nics.size} entries, not a positive multiple of "
                f"rails={self.rails}"
            )
        if nics.min() < 0 or nics.max() >= self.leaves:
            raise ValueError(
                f"fabric: leaf_of_nic names a leaf outside 0..{self.leaves - 1}"
            )
        for leaf, spine, link in self.failed:
            if not (
                0 <= leaf < self.leaves
                and 0 <= spine < self.spines
                and 0 <= link < self.links
            ):
                raise ValueError(
                    f"fabric: failed link {(leaf, spine, link)} does not exist"
                )
        object.__setattr__(self, "leaf_of_nic", nics.astype(np.int64))

    @property
    def nodes(self) -> int:
        return len(self.leaf_of_nic) // self.rails

    @property
    def alive(self) -> np.ndarray:
        """Bool [leaf, spine, link]: False for a failed link."""
        alive = np.ones((self.leaves, self.spines, self.links), dtype=bool)
        for leaf, spine, link in self.failed:
            alive[leaf, spine, link] = False
        return alive


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
class ModeResult:
    """One balancing mode, one seed. Loads in bytes, indexed [leaf, spine, link]; the downlink
    array holds the spine->leaf direction of the same cable."""

    mode: str
    uplink_bytes: np.ndarray
    downlink_bytes: np.ndarray
    link_gbps: np.ndarray  # [leaf, spine, link], 0 where failed
    # max link load / mean load of its equal-cost group, in the worst group
    max_load_ratio: float
    # Jain's index over each leaf's live uplinks; nan if the leaf sends nothing cross-leaf
    jain_per_leaf: np.ndarray
    jain: float  # mean over leaves that send cross-leaf traffic
    jain_all: float  # one index over every live uplink of those leaves
    fct_s: np.ndarray
    ideal_fct_s: np.ndarray
    stretch_median: float
    stretch_p90: float
    stretch_worst: float
    jct_ratio: np.ndarray  # per job: JCT / ideal JCT

    @property
    def stretch(self) -> np.ndarray:
        return self.fct_s / self.ideal_fct_s


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


def place_jobs(
    nodes: int, jobs: int, placement: str, rng: np.random.Generator
) -> list[np.ndarray]:
    """Split the nodes into `jobs` equal jobs (nodes // jobs each, the rest idle): consecutive
    blocks, or a seeded random permutation cut into blocks (each job's nodes sorted)."""
    if placement not in PLACEMENTS:
        raise ValueError(
            f"unknown placement {placement!r}; expected one of {PLACEMENTS}"
        )
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    if jobs > nodes:
        raise ValueError(
            f"{jobs} jobs do not fit on {nodes} nodes (one node per job at least)"
        )
    per_job = nodes // jobs
    order = np.arange(nodes) if placement == "contiguous" else rng.permutation(nodes)
    return [np.sort(order[j * per_job : (j + 1) * per_job]) for j in range(jobs)]


def _job_pairs(
    job_nodes: np.ndarray, rails: int, pattern: str, scope: str, message: float, rng=None
):
    """(src gpu, dst gpu, bytes per pair) for one job. Same-node pairs use NVLink: left out."""
    n = len(job_nodes)
    if pattern == "all-to-all":
        # message = bytes every GPU sends to every peer GPU on another node
        gpus = (job_nodes[:, None] * rails + np.arange(rails)[None, :]).ravel()
        src, dst = np.meshgrid(gpus, gpus, indexing="ij")
        src, dst = src.ravel(), dst.ravel()
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
        dst_rail = (np.tile(np.arange(rails), (n, 1)) if scope == "rail"
                    else rng.permuted(np.tile(np.arange(rails), (n, 1)), axis=1))
    else:
        successor = (np.arange(n) + max(1, n // 2)) % n
        dst_rail = (np.arange(rails)[None, :] + (0 if scope == "rail" else 1)) % rails + np.zeros((n, 1), dtype=np.int64)
    src = (job_nodes[:, None] * rails + np.arange(rails)[None, :]).ravel()
    dst = (job_nodes[successor][:, None] * rails + dst_rail).ravel()
    return src, dst, float(message)


def traffic_size(
    nodes: int, rails: int, pattern: str, scope: str, jobs: int, flows_per_pair: int
) -> tuple[int, int]:
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
    fabric: LeafSpine,
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
        raise ValueError(
            f"unknown traffic pattern {pattern!r}; expected one of {PATTERNS}"
        )
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
        raise ValueError(
            f"{jobs} jobs on {fabric.nodes} nodes leave {len(placed[0])} node per job; a job "
            "needs at least 2 nodes to use the network"
        )
    parts = [
        _job_pairs(nodes, fabric.rails, pattern, scope, message_bytes, rng)
        for nodes in placed
    ]
    src = np.concatenate([np.repeat(p[0], flows_per_pair) for p in parts])
    dst = np.concatenate([np.repeat(p[1], flows_per_pair) for p in parts])
    nbytes = np.concatenate(
        [np.full(len(p[0]) * flows_per_pair, p[2] / flows_per_pair) for p in parts]
    )
    job = np.concatenate(
        [np.full(len(p[0]) * flows_per_pair, j) for j, p in enumerate(parts)]
    )
    sport = rng.integers(49152, 65536, size=len(src))
    return Traffic(src=src, dst=dst, nbytes=nbytes, sport=sport, job=job, jobs=jobs)


# ---------------------------------------------------------------- hashing


def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0xEDB88320), table >> 1)
    return table.astype(np.uint32)


_CRC_TABLE = _crc_table()


def crc32_tuples(
    switch_seed, src_ip, dst_ip, sport, dport: int = ROCEV2_PORT
) -> np.ndarray:
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


def _hash(kind: str, switch_seed: np.ndarray, tr: Traffic, sel, rng) -> np.ndarray:
    if kind == "random":
        # an ideal hash: every flow an independent uniform 32-bit value per switch
        return rng.integers(
            0, 1 << 32, size=int(np.count_nonzero(sel)), dtype=np.uint64
        )
    # one seed per switch, so the hash input differs per hop (no polarisation)
    src, dst = tr.src[sel] + _IP_BASE, tr.dst[sel] + _IP_BASE
    return crc32_tuples(switch_seed, src, dst, tr.sport[sel]).astype(np.uint64)


# ---------------------------------------------------------------- simulation


def _groups(fabric: LeafSpine):
    """Padded ECMP groups. Uplink id u = spine * links + link.
    up[A, B, :upsize[A, B]] = live uplinks of A towards B; down[S, B, :downsize[S, B]] = live
    links S->B."""
    alive = fabric.alive  # [leaf, spine, link]
    reach = alive.any(axis=2).T  # [spine, leaf]: spine has a live link to leaf
    mask = alive[:, None, :, :] & reach.T[None, :, :, None]  # [A, B, S, K]
    mask = mask.reshape(fabric.leaves, fabric.leaves, -1)
    up = np.argsort(~mask, axis=-1, kind="stable")
    upsize = mask.sum(axis=-1)
    dmask = alive.transpose(1, 0, 2)  # [S, B, K]
    down = np.argsort(~dmask, axis=-1, kind="stable")
    return mask, up, upsize, dmask, down, dmask.sum(axis=-1)


def _least_loaded(loads, groups, sizes, grp, nbytes, order_key, rng) -> np.ndarray:
    """Greedy: in arrival order, each item goes to the least loaded member of its group (ties at
    random). Item i's group is row grp[i] of the padded `groups` table (sizes[row] members).
    Items of different queues (`order_key`) are independent: one item per queue per step,
    vectorised across queues. loads: [queue, member], modified in place."""
    n = len(nbytes)
    choice = np.empty(n, dtype=np.int64)
    if n == 0:
        return choice
    # arrival order: random, then grouped by queue (a stable sort keeps it random within each)
    arrival = rng.permutation(n)
    key = order_key[arrival]
    if key.max() < 1 << 16:
        key = key.astype(
            np.uint16
        )  # numpy's stable sort is a radix sort on 16-bit keys
    order = arrival[np.argsort(key, kind="stable")]
    keys = order_key[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    counts = np.diff(np.r_[starts, n])
    o_queue, o_grp, o_bytes = order_key[order], grp[order], nbytes[order]
    width = groups.shape[1]
    # no failure: every group is all members in order, so skip the gather and the padding
    identity = np.array_equal(groups[grp[0]], np.arange(width))
    full = identity and bool(np.all(sizes[grp] == width))
    first = np.repeat(starts, counts)
    if full and not loads.any() and np.array_equal(o_bytes, o_bytes[first]):
        # Equal flowlets onto empty links: greedy least-loaded with random ties fills the links
        # in rounds, each round a uniformly random permutation of the members. The same
        # distribution as the loop below, without the loop.
        rank = np.arange(n) - first
        rounds = -(-counts // width)
        round_id = np.repeat(np.cumsum(rounds) - rounds, counts) + rank // width
        perms = np.argsort(rng.random((int(rounds.sum()), width)), axis=1)
        picked = perms[round_id, rank % width]
        flat = np.bincount(
            o_queue * width + picked, weights=o_bytes, minlength=loads.size
        )
        loads += flat.reshape(loads.shape)
        choice[order] = picked
        return choice
    # queues still busy at step t are a prefix once sorted by length
    by_count = np.argsort(-counts, kind="stable")
    starts, counts = starts[by_count], counts[by_count]
    busy = np.searchsorted(-counts, -np.arange(int(counts[0])), side="left")
    cols = np.arange(width)
    picked = np.empty(n, dtype=np.int64)
    for t, k in enumerate(busy):
        pos = starts[:k] + t
        sw = o_queue[pos]
        if full:
            cand = loads[sw]
        else:
            mem = groups[o_grp[pos]]
            cand = loads[sw[:, None], mem]
            cand[cols[None, :] >= sizes[o_grp[pos]][:, None]] = np.inf
        best = cand.min(axis=1, keepdims=True)
        tie = np.where(cand <= best, rng.random(cand.shape), -1.0)
        col = tie.argmax(axis=1)
        pick = col if full else mem[np.arange(k), col]
        picked[pos] = pick
        loads[sw, pick] += o_bytes[pos]
    choice[order] = picked
    return choice


def simulate(
    fabric: LeafSpine,
    traffic: Traffic,
    mode: str,
    *,
    hash: str = "crc32",
    flowlets: int = 4,
    seed: int = 0,
) -> ModeResult:
    """Balance `traffic` on `fabric` with `mode` ("ecmp", "flowlet", "spray") and measure it."""
    if mode not in MODES:
        raise ValueError(
            f"unknown load-balancing mode {mode!r}; expected one of {MODES}"
        )
    if hash not in HASHES:
        raise ValueError(f"unknown hash {hash!r}; expected one of {HASHES}")
    if flowlets < 1:
        raise ValueError(f"flowlets per flow must be >= 1, got {flowlets}")
    rng = np.random.default_rng(seed)
    L, S, K = fabric.leaves, fabric.spines, fabric.links
    alive = fabric.alive
    mask, up, upsize, _, down, downsize = _groups(fabric)
    a = fabric.leaf_of_nic[traffic.src]
    b = fabric.leaf_of_nic[traffic.dst]
    cross = a != b
    if np.any(upsize[a[cross], b[cross]] == 0):
        bad = np.flatnonzero(cross & (upsize[a, b] == 0))[0]
        raise ValueError(
            f"leaf {a[bad]} has no live path to leaf {b[bad]}: every spine cut"
        )
    ca, cb, cbytes = a[cross], b[cross], traffic.nbytes[cross]
    upl = np.zeros((L, S * K))
    dnl = np.zeros((L, S * K))  # [dst leaf, spine * links + link]

    if mode == "spray":
        pair = np.zeros((L, L))
        np.add.at(pair, (ca, cb), cbytes)
        share = np.divide(pair, upsize, out=np.zeros_like(pair), where=upsize > 0)
        upl = np.einsum("ab,abu->au", share, mask)
        nalive = alive.sum(axis=2)  # [leaf, spine]
        at_spine = np.einsum("ab,as,bs->bs", share, nalive, (nalive > 0).astype(float))
        per_link = np.divide(
            at_spine, nalive, out=np.zeros_like(at_spine), where=nalive > 0
        )
        dnl = (per_link[:, :, None] * alive).reshape(L, S * K)
    else:
        if mode == "ecmp":
            h1 = _hash(hash, ca, traffic, cross, rng)
            uplink = up[
                ca, cb, (h1 % upsize[ca, cb].astype(np.uint64)).astype(np.int64)
            ]
            spine = uplink // K
            h2 = _hash(hash, 0x10000 + spine, traffic, cross, rng)
            link = down[
                spine, cb, (h2 % downsize[spine, cb].astype(np.uint64)).astype(np.int64)
            ]
            part_bytes, pa, pb = cbytes, ca, cb
        else:
            fid = np.repeat(np.arange(len(ca)), flowlets)
            pa, pb, part_bytes = ca[fid], cb[fid], cbytes[fid] / flowlets
            uplink = _least_loaded(
                upl,
                up.reshape(L * L, -1),
                upsize.ravel(),
                pa * L + pb,
                part_bytes,
                pa,
                rng,
            )
            upl[:] = 0.0  # recomputed below with bincount, the same numbers
            spine = uplink // K
            if K == 1:  # one link down to the leaf: nothing to choose
                link = np.zeros(len(pa), dtype=np.int64)
            else:
                queue = spine * L + pb
                link = _least_loaded(
                    np.zeros((S * L, K)),
                    down.reshape(S * L, K),
                    downsize.ravel(),
                    queue,
                    part_bytes,
                    queue,
                    rng,
                )
        upl = np.bincount(pa * S * K + uplink, weights=part_bytes, minlength=L * S * K)
        upl = upl.reshape(L, S * K)
        dnl = np.bincount(
            pb * S * K + spine * K + link, weights=part_bytes, minlength=L * S * K
        )
        dnl = dnl.reshape(L, S * K)

    link_gbps = np.where(alive, fabric.uplink_gbps, 0.0)
    cap = link_gbps.reshape(L, S * K) * 1e9 / 8
    up_drain = np.divide(upl, cap, out=np.zeros(upl.shape), where=cap > 0)  # float even when no flow crosses (bincount of nothing is int)
    dn_drain = np.divide(dnl, cap, out=np.zeros(dnl.shape), where=cap > 0)

    nic_bps = fabric.host_gbps * 1e9 / 8
    nics = len(fabric.leaf_of_nic)
    tx = np.bincount(traffic.src, weights=traffic.nbytes, minlength=nics) / nic_bps
    rx = np.bincount(traffic.dst, weights=traffic.nbytes, minlength=nics) / nic_bps
    ideal = np.maximum(tx[traffic.src], rx[traffic.dst])
    fct = ideal.copy()
    if mode == "spray":
        # a sprayed flow drains with the worst link of its (A, B) group, up and down
        up_worst = np.max(np.where(mask, up_drain[:, None, :], 0.0), axis=2)  # [A, B]
        spine_used = mask.reshape(L, L, S, K).any(axis=3)  # [A, B, S]
        dn_by_spine = dn_drain.reshape(L, S, K).max(axis=2)  # [B, S]
        dn_worst = np.max(np.where(spine_used, dn_by_spine[None, :, :], 0.0), axis=2)
        path = np.maximum(up_worst, dn_worst)[ca, cb]
    else:
        part = np.maximum(up_drain[pa, uplink], dn_drain[pb, spine * K + link])
        # a flow's flowlets are consecutive: it ends with its slowest flowlet
        path = part.reshape(len(ca), -1).max(axis=1) if len(ca) else np.zeros(0)
    fct[cross] = np.maximum(fct[cross], path)

    live = alive.reshape(L, S * K)
    jain_leaf, ratio = _balance(upl, live)
    _, ratio_down = _balance(dnl, live)
    sends = ~np.isnan(jain_leaf)
    x = upl[sends][live[sends]]
    jain_all = (
        float(x.sum() ** 2 / (len(x) * (x**2).sum()))
        if x.size and x.sum() > 0
        else float("nan")
    )
    worst_ratio = float(np.nanmax(np.r_[ratio, ratio_down])) if sends.any() else 1.0
    stretch = fct / ideal
    jct = np.zeros(traffic.jobs)
    jct_ideal = np.zeros(traffic.jobs)
    np.maximum.at(jct, traffic.job, fct)
    np.maximum.at(jct_ideal, traffic.job, ideal)
    return ModeResult(
        mode=mode,
        uplink_bytes=upl.reshape(L, S, K),
        downlink_bytes=dnl.reshape(L, S, K),
        link_gbps=link_gbps,
        max_load_ratio=worst_ratio,
        jain_per_leaf=jain_leaf,
        jain=float(np.nanmean(jain_leaf)) if sends.any() else float("nan"),
        jain_all=jain_all,
        fct_s=fct,
        ideal_fct_s=ideal,
        stretch_median=float(np.median(stretch)),
        stretch_p90=float(np.percentile(stretch, 90)),
        stretch_worst=float(stretch.max()),
        jct_ratio=jct / jct_ideal,
    )


def _balance(load: np.ndarray, live: np.ndarray):
    """Per row (a leaf's equal-cost links): Jain's index (sum x)^2 / (n sum x^2) and max / mean
    over the live links; nan for a row without load."""
    x = np.where(live, load, 0.0)
    n = live.sum(axis=1)
    total = x.sum(axis=1)
    sq = (x**2).sum(axis=1)
    ok = total > 0
    jain = np.full(len(x), np.nan)
    ratio = np.full(len(x), np.nan)
    jain[ok] = total[ok] ** 2 / (n[ok] * sq[ok])
    ratio[ok] = x[ok].max(axis=1) / (total[ok] / n[ok])
    return jain, ratio


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


def compare(
    fabric: LeafSpine,
    modes=MODES,
    seeds=range(10),
    *,
    hash: str = "crc32",
    flowlets: int = 4,
    keep: dict[str, ModeResult] | None = None,
    **traffic_options,
) -> dict[str, Summary]:
    """For every mode, `simulate` over `seeds` (the traffic, placement and ports are re-drawn per
    seed too) and summarise max load ratio, Jain, stretch and worst JCT ratio. `keep`, when
    given, receives the first seed's full result per mode (for plots), so it is not run twice."""
    per_mode: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    for seed in seeds:
        tr = make_traffic(fabric, seed=seed, **traffic_options)
        for mode in modes:
            r = simulate(fabric, tr, mode, hash=hash, flowlets=flowlets, seed=seed)
            if keep is not None and mode not in keep:
                keep[mode] = r
            row = {
                "max_load_ratio": r.max_load_ratio,
                "jain": r.jain,
                "stretch_median": r.stretch_median,
                "stretch_p90": r.stretch_p90,
                "stretch_worst": r.stretch_worst,
                "jct_ratio_worst": float(r.jct_ratio.max()),
                "jct_ratio_mean": float(r.jct_ratio.mean()),
            }
            for k, v in row.items():
                per_mode[mode].setdefault(k, []).append(v)
    return {
        m: Summary(m, {k: estimate(v) for k, v in metrics.items()})
        for m, metrics in per_mode.items()
    }
