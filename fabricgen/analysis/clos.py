"""Load balancing over a routed Clos of any depth (leaf-spine, leaf-spine-core, planes, rail-only):
a pure, vectorised fluid model (no I/O).

In: a `Clos` (switches, directed switch-to-switch links with their speeds and state, the leaf of
every GPU NIC) and a `loadbalance.Traffic`. Out: `simulate` gives one `PathResult` per mode.

Routing is BGP's in a Clos: every switch forwards towards a destination leaf over its live links
whose far end is one hop closer (shortest paths over the live links; in a Clos these are the
valley-free paths: up to the lowest common tier, then down). ECMP, flowlet and spraying choose
among exactly those next hops, at every switch on the way (leaf -> spine -> leaf, or
leaf -> spine -> core -> spine -> leaf). Every step is a numpy operation over all flows that are at
the same hop, grouped by (switch, destination leaf); nothing loops over devices.

A flow whose source leaf cannot reach its destination leaf at all (planes, rail-only: rails that
share no switch) is carried PXN-style: the source node moves the data over its scale-up domain
(NVLink) to its own NIC on the destination's rail, and the network carries it on the destination's
rail. Traffic within a node never enters the network.

Flowlet (dynamic load balancing): a flow is `flowlets` bursts separated by idle gaps. Its first
burst follows the ECMP hash. A later burst may move only when its gap exceeded the flowlet timeout
(`--flowlet-gap-us`); the gaps are exponential with mean `idle_gap_us`, so a burst moves with
probability exp(-timeout / mean gap). A moving burst takes, at each switch, a next hop from the best
quality band of a stale load view: the link loads as they were when the round started (DLB samples
port load periodically, so bursts that move in the same interval do not see each other), quantised
into `bands` bands of the busiest link's load. Time is cut into the bursts' rounds: a round lasts as
long as its slowest resource, a flow's completion time is the sum of its bursts' bottlenecks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabricgen.analysis.loadbalance import HASHES, MODES, Traffic, crc32_tuples

UNREACHABLE = np.iinfo(np.int32).max // 2
_IP_BASE = 0x0A000000  # NIC g has the synthetic address 10.0.0.0 + g


@dataclass(frozen=True)
class FlowletModel:
    """The flowlet mode's parameters (see the module docstring). `updates` was chosen on the
    whitepaper's 256-GPU fabric; the whole model is checked against the whitepaper's Figure 17 in
    calibration.py (docs/commands/analyze.md, "Calibration against the whitepaper")."""

    flowlets: int = 4  # bursts per flow
    gap_us: float = 500.0  # the flowlet timeout (NX-OS `flowlet-aging`, fabricgen's intent default)
    idle_gap_us: float = 500.0  # mean idle gap between a flow's bursts
    bands: int = 8  # quality bands of the stale load view
    updates: int = 64  # load samples per burst round: the view a moving burst sees is that stale

    @property
    def move_probability(self) -> float:
        return float(np.exp(-self.gap_us / self.idle_gap_us))


@dataclass(frozen=True)
class Clos:
    """A routed fabric as arrays. Switches are indexed leaves first; every cable is two directed
    edges, 2c (tail -> head as listed) and 2c + 1 (back). `alive[e]` False for a failed edge."""

    names: tuple[str, ...]
    tiers: np.ndarray  # [switch] 0 leaf, 1 spine, 2 core
    leaves: int
    tail: np.ndarray  # [edge]
    head: np.ndarray  # [edge]
    gbps: np.ndarray  # [edge]
    cables: tuple[str, ...]  # [cable] its key in topology.json / cable id in cabling.csv
    leaf_of_nic: np.ndarray  # [port] of a GPU NIC, port = (node * rails + rail) * planes + plane
    rails: int  # GPUs per node: a GPU is one endpoint, g = node * rails + rail
    host_gbps: float  # one NIC port's speed
    alive: np.ndarray  # [edge] bool
    nic_alive: np.ndarray  # [port] bool: False when its leaf failed
    planes: int = 1  # ports per GPU NIC, port p on plane p; a GPU's traffic splits evenly over them
    out: np.ndarray = field(init=False, repr=False)  # [switch, degree] edge ids, -1 padded
    dist: np.ndarray = field(init=False, repr=False)  # [switch, leaf] hops over live edges

    def __post_init__(self) -> None:
        if self.rails < 1 or self.planes < 1 or len(self.leaf_of_nic) == 0 or len(self.leaf_of_nic) % self.ports_per_node:
            raise ValueError(f"fabric: {len(self.leaf_of_nic)} GPU NIC ports is not a positive multiple of rails={self.rails} x planes={self.planes}")
        if self.host_gbps <= 0:
            raise ValueError("fabric: host_gbps must be > 0")
        switches = len(self.names)
        order = np.argsort(self.tail, kind="stable")
        degree = np.bincount(self.tail, minlength=switches)
        width = int(degree.max()) if len(self.tail) else 0
        out = np.full((switches, max(width, 1)), -1, dtype=np.int64)
        if len(self.tail):
            start = np.cumsum(degree) - degree
            slot = np.arange(len(order)) - np.repeat(start, degree)
            out[self.tail[order], slot] = order
        object.__setattr__(self, "out", out)
        object.__setattr__(self, "dist", _distances(switches, self.leaves, self.tail[self.alive], self.head[self.alive]))

    def next_hops(self) -> tuple[np.ndarray, np.ndarray]:
        """(groups, sizes) for every (switch, destination leaf) key, switch * leaves + leaf: the
        live next-hop edges one hop closer, packed first in each row, and how many there are
        (`_groups` over every key, made once per fabric and kept: the routes do not change between
        flows, modes or seeds)."""
        table = getattr(self, "_next_hops", None)
        if table is None:
            keys = np.arange(len(self.names) * self.leaves if len(self.tail) else 0)  # no cable: no next hop
            chunk = max(1, (1 << 22) // self.out.shape[1])  # bounds the temporaries of _groups
            parts = [_groups(self, keys[i : i + chunk] // self.leaves, keys[i : i + chunk] % self.leaves) for i in range(0, len(keys), chunk)]
            table = (
                (np.concatenate([g for g, _ in parts]), np.concatenate([z for _, z in parts]))
                if parts
                else (np.zeros((0, self.out.shape[1]), dtype=np.int64), np.zeros(0, dtype=np.int64))
            )
            object.__setattr__(self, "_next_hops", table)
        return table

    @property
    def ports_per_node(self) -> int:
        return self.rails * self.planes

    @property
    def nodes(self) -> int:
        return len(self.leaf_of_nic) // self.ports_per_node

    @property
    def gpus(self) -> int:
        return len(self.leaf_of_nic) // self.planes

    def gpu_leaves(self) -> np.ndarray:
        """[gpu, plane] the leaf of each of a GPU's NIC ports."""
        return self.leaf_of_nic.reshape(-1, self.planes)

    @property
    def spines(self) -> int:
        """Switches above the leaves (spines and cores)."""
        return len(self.names) - self.leaves

    def failed(self, devices: set[str], cables: set[str]) -> Clos:
        """This fabric with `devices` (switches) and `cables` (fabric link keys) down."""
        index = {name: i for i, name in enumerate(self.names)}
        down = np.zeros(len(self.names), dtype=bool)
        down[[index[d] for d in devices]] = True
        cable_index = {key: i for i, key in enumerate(self.cables)}
        cut = np.zeros(len(self.cables), dtype=bool)
        cut[[cable_index[c] for c in cables]] = True
        alive = self.alive & ~down[self.tail] & ~down[self.head] & ~np.repeat(cut, 2)
        nic_alive = self.nic_alive & ~down[self.leaf_of_nic]
        return Clos(
            self.names,
            self.tiers,
            self.leaves,
            self.tail,
            self.head,
            self.gbps,
            self.cables,
            self.leaf_of_nic,
            self.rails,
            self.host_gbps,
            alive,
            nic_alive,
            self.planes,
        )


def _distances(switches: int, leaves: int, tail: np.ndarray, head: np.ndarray) -> np.ndarray:
    """[switch, leaf] hops to each leaf over the given edges: a breadth-first search towards every
    leaf at once (one boolean matrix product per hop)."""
    dist = np.full((switches, leaves), UNREACHABLE, dtype=np.int32)
    dist[np.arange(leaves), np.arange(leaves)] = 0
    adjacency = np.zeros((switches, switches), dtype=np.float32)
    adjacency[tail, head] = 1.0
    frontier = dist == 0
    for hops in range(1, switches + 1):
        reached = (adjacency @ frontier.astype(np.float32)) > 0
        new = reached & (dist == UNREACHABLE)
        if not new.any():
            break
        dist[new] = hops
        frontier = new
    return dist


@dataclass(frozen=True)
class PathResult:
    """One mode, one seed. Loads in bytes per directed edge."""

    mode: str
    edge_bytes: np.ndarray  # [edge]
    edge_gbps: np.ndarray  # [edge], 0 where failed
    tail: np.ndarray  # [edge] the switch it leaves
    uplink: np.ndarray  # [edge] bool: a live edge up a tier (leaf->spine, spine->core)
    max_load_ratio: float  # the busiest uplink / its switch's mean uplink load, worst switch
    jain_per_leaf: np.ndarray  # Jain's index over each leaf's live uplinks; nan without load
    jain: float
    fct_s: np.ndarray
    ideal_fct_s: np.ndarray
    job: np.ndarray
    jobs: int
    drain_s: float  # the busiest resource's time (links and NICs): the traffic's makespan
    nic_drain_s: float  # the busiest NIC's time at the offered load

    @property
    def stretch(self) -> np.ndarray:
        return self.fct_s / self.ideal_fct_s

    @property
    def jct_ratio(self) -> np.ndarray:
        jct, ideal = np.zeros(self.jobs), np.zeros(self.jobs)
        np.maximum.at(jct, self.job, self.fct_s)
        np.maximum.at(ideal, self.job, self.ideal_fct_s)
        return np.divide(jct, ideal, out=np.ones(self.jobs), where=ideal > 0)


def on_ports(clos: Clos, traffic: Traffic) -> tuple[Traffic, np.ndarray]:
    """GPU flows as NIC-port flows, and each port flow's GPU flow: with multi-plane NICs a GPU's
    flow splits evenly over its NIC's ports, port p to the destination's port p (the same plane;
    each a queue pair of its own, on the same UDP source port). One plane: the flows as they are."""
    if clos.planes == 1:
        return traffic, np.arange(len(traffic.src))
    p = clos.planes
    plane = np.tile(np.arange(p), len(traffic.src))
    ports = Traffic(
        src=np.repeat(traffic.src * p, p) + plane,
        dst=np.repeat(traffic.dst * p, p) + plane,
        nbytes=np.repeat(traffic.nbytes / p, p),
        sport=np.repeat(traffic.sport, p),
        job=np.repeat(traffic.job, p),
        jobs=traffic.jobs,
    )
    return ports, np.repeat(np.arange(len(traffic.src)), p)


def carried(clos: Clos, traffic: Traffic) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(src port, dst port, bytes, job, kept) of the port flows (`on_ports`) the network carries:
    flows whose port or leaf is down are lost (`kept` False); a flow whose source leaf cannot reach
    the destination's leaf moves, PXN-style, to its node's port on the destination's rail and plane."""
    keep = clos.nic_alive[traffic.src] & clos.nic_alive[traffic.dst]
    src, dst = traffic.src[keep], traffic.dst[keep]
    a, b = clos.leaf_of_nic[src], clos.leaf_of_nic[dst]
    pxn = clos.dist[a, b] >= UNREACHABLE
    per_node = clos.ports_per_node
    src = np.where(pxn, (src // per_node) * per_node + dst % per_node, src)
    return src, dst, traffic.nbytes[keep], traffic.job[keep], keep


def simulate(
    clos: Clos, traffic: Traffic, mode: str, *, hash: str = "crc32", flowlet: FlowletModel = FlowletModel(), load: float = 1.0, seed: int = 0
) -> PathResult:
    """Balance `traffic` on `clos` with `mode` ("ecmp", "flowlet", "spray") at `load` (the
    fraction of NIC line rate the GPUs offer) and measure it."""
    return simulate_modes(clos, traffic, (mode,), hash=hash, flowlet=flowlet, load=load, seed=seed)[mode]


def simulate_modes(
    clos: Clos, traffic: Traffic, modes: tuple[str, ...], *, hash: str = "crc32", flowlet: FlowletModel = FlowletModel(), load: float = 1.0, seed: int = 0
) -> dict[str, PathResult]:
    """`simulate` of every mode in `modes` on the same traffic, each exactly as `simulate` alone
    would give it (every mode draws from its own generator seeded with `seed`), sharing the work
    they have in common: the port flows, what the network carries, the ideal times, and the ECMP
    paths that flowlet's first burst follows (with the generator's state after them)."""
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"unknown load-balancing mode {mode!r}; expected one of {MODES}")
    if hash not in HASHES:
        raise ValueError(f"unknown hash {hash!r}; expected one of {HASHES}")
    if not 0 < load <= 1:
        raise ValueError(f"offered load must be in (0, 1], got {load}")
    traffic, parent = on_ports(clos, traffic)
    src, dst, nbytes, job, kept = carried(clos, traffic)
    a, b = clos.leaf_of_nic[src], clos.leaf_of_nic[dst]
    local = src // clos.ports_per_node == dst // clos.ports_per_node  # same node after PXN: NVLink
    cross = (a != b) & ~local
    if np.any(clos.dist[a[cross], b[cross]] >= UNREACHABLE):
        bad = np.flatnonzero(cross & (clos.dist[a, b] >= UNREACHABLE))[0]
        raise ValueError(f"{clos.names[a[bad]]} has no live path to {clos.names[b[bad]]}")
    capacity = np.where(clos.alive, clos.gbps, 0.0) * 1e9 / 8  # bytes/s per edge
    nic_bps = clos.host_gbps * 1e9 / 8 * load
    nics = len(clos.leaf_of_nic)
    sent = np.where(local, 0.0, nbytes)
    tx = np.bincount(src, weights=sent, minlength=nics) / nic_bps
    rx = np.bincount(dst, weights=sent, minlength=nics) / nic_bps
    ideal = np.maximum(tx[src], rx[dst])
    ideal = np.where(ideal > 0, ideal, 1e-30)  # a flow within a node: instant, stretch 1
    ca, cb, cbytes = a[cross], b[cross], nbytes[cross]
    ideal_cross = ideal[cross]
    first = np.flatnonzero(np.r_[True, parent[kept][1:] != parent[kept][:-1]]) if clos.planes > 1 and len(ideal) else None
    nic_drain = max(tx.max(initial=0), rx.max(initial=0))
    ecmp_hops = None  # (hops, the generator's state after them): made once for ecmp and flowlet
    results = {}
    for mode in modes:
        rng = np.random.default_rng(seed)
        fct = ideal.copy()
        if mode == "spray":
            edge_bytes, worst = _spray(clos, ca, cb, cbytes, capacity)
            fct[cross] = np.maximum(ideal_cross, worst)
        else:
            if ecmp_hops is None:
                hops = _ecmp(clos, ca, cb, src[cross], dst[cross], traffic.sport[kept][cross], hash, rng)
                ecmp_hops = (hops, rng.bit_generator.state)
            hops = ecmp_hops[0]
            rng.bit_generator.state = ecmp_hops[1]
            if mode == "ecmp":
                edge_bytes = _bytes_on(hops, cbytes, len(clos.tail))
                drain = np.divide(edge_bytes, capacity, out=np.zeros_like(edge_bytes), where=capacity > 0)
                fct[cross] = np.maximum(ideal_cross, _path_max(hops, drain))
            else:
                edge_bytes, times = _flowlet(clos, ca, cb, cbytes, hops, capacity, ideal_cross, flowlet, rng)
                fct[cross] = times
        mode_ideal, mode_job = ideal, job
        if first is not None:  # a GPU flow ends with its slowest port flow
            fct, mode_ideal, mode_job = np.maximum.reduceat(fct, first), np.maximum.reduceat(ideal, first), job[first]
        results[mode] = _measure(clos, mode, edge_bytes, capacity, fct, mode_ideal, mode_job, traffic.jobs, nic_drain)
    return results


def _groups(clos: Clos, cur: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For (switch, destination leaf) keys: the live next-hop edges one hop closer, packed first in
    each row, and how many there are."""
    cand = clos.out[cur]
    edge = np.maximum(cand, 0)
    closer = clos.dist[clos.head[edge], dst[:, None]] == (clos.dist[cur, dst] - 1)[:, None]
    ok = (cand >= 0) & clos.alive[edge] & closer
    order = np.argsort(~ok, axis=1, kind="stable")
    return np.take_along_axis(cand, order, axis=1), ok.sum(axis=1)


def _hops(clos: Clos, a: np.ndarray, b: np.ndarray, choose) -> np.ndarray:
    """[hop, flow] edge taken at each hop (-1 once arrived): from the leaves `a` to the leaves `b`,
    `choose(at, groups, sizes, key, cur)` picking the column of each flow's group `groups[key]`
    (`Clos.next_hops`) at switch `cur`."""
    groups, sizes = clos.next_hops()
    cur = a.copy()
    steps = []
    while True:
        moving = np.flatnonzero(cur != b)
        if moving.size == 0:
            break
        key = cur[moving] * clos.leaves + b[moving]
        column = choose(moving, groups, sizes, key, cur[moving])
        edge = groups[key, column]
        step = np.full(len(a), -1, dtype=np.int64)
        step[moving] = edge
        steps.append(step)
        cur[moving] = clos.head[edge]
    return np.array(steps, dtype=np.int64).reshape(len(steps), len(a))


def mix32(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser (fmix32, public domain): a bijective, non-linear mix in which
    every output bit depends on every input bit."""
    x = np.asarray(x, dtype=np.uint64) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85EBCA6B)) & np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xC2B2AE35)) & np.uint64(0xFFFFFFFF)
    return x ^ (x >> np.uint64(16))


def switch_hash(switch: np.ndarray, src_ip: np.ndarray, dst_ip: np.ndarray, sport: np.ndarray) -> np.ndarray:
    """A switch's ECMP hash of a RoCEv2 flow: CRC-32 of the 5-tuple, mixed non-linearly with the
    switch's own seed. CRC-32 is linear (affine over GF(2)): with the seed inside the CRC or XORed
    after it, two switches' hashes differ by a constant, so their low bits - the ones `% group`
    keeps for a power-of-two group - pick the same member everywhere: every flow a leaf sent to
    one spine then takes the same core (polarisation; 3.3x ideal on a 3-tier 4,096-GPU fabric).
    Real switches break that with a per-switch seed and bit rotation (NX-OS `ip load-sharing ...
    rotate N universal-id ID`, Cisco Nexus 3000/9000 NX-API REST SDK 9.3(x), "Configuring Universal
    Id to Randomize Hash Functions for Load Balancing"; SONiC `hash_offset`, Dell Enterprise SONiC
    ecmp_load_share). The model assumes every switch has such a seed: its choices are independent
    of the previous hop's."""
    return _seeded(switch, crc32_tuples(0, src_ip, dst_ip, sport).astype(np.uint64))


def _seeded(switch: np.ndarray, crc: np.ndarray) -> np.ndarray:
    """`switch_hash` from the flows' CRC-32 (the same at every switch, so computed once per flow)."""
    seed = mix32((np.asarray(switch, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B1))
    return mix32(crc ^ seed)


def _ecmp(clos, a, b, src, dst, sport, hash, rng) -> np.ndarray:
    crc = crc32_tuples(0, src + _IP_BASE, dst + _IP_BASE, sport).astype(np.uint64) if hash == "crc32" else None

    def choose(moving, groups, sizes, key, cur):
        if hash == "random":
            h = rng.integers(0, 1 << 32, size=len(moving), dtype=np.uint64)
        else:  # one seed per switch, mixed non-linearly: no polarisation (switch_hash)
            h = _seeded(cur, crc[moving])
        return (h % sizes[key].astype(np.uint64)).astype(np.int64)

    return _hops(clos, a, b, choose)


def _bytes_on(hops: np.ndarray, nbytes: np.ndarray, edges: int) -> np.ndarray:
    used = hops >= 0
    return np.bincount(hops[used], weights=np.broadcast_to(nbytes, hops.shape)[used], minlength=edges).astype(float)


def _path_max(hops: np.ndarray, per_edge: np.ndarray) -> np.ndarray:
    if hops.shape[0] == 0:
        return np.zeros(hops.shape[1])
    return np.where(hops >= 0, per_edge[np.maximum(hops, 0)], 0.0).max(axis=0)


def _flowlet(clos, a, b, nbytes, first, capacity, ideal, model: FlowletModel, rng):
    """Bursts in rounds: round 0 on the ECMP paths `first`; in each later round a burst whose gap
    exceeded the timeout re-chooses every hop from the best band of the previous round's loads.

    The load view is kept up to date as bursts move rather than recounted: when every burst has
    the same bytes (every traffic `make_traffic` builds), as a count of bursts per edge read through
    `sums[k]`, the sum of k bursts' bytes added one at a time - the very float `np.bincount` gives
    (it adds a flow's bytes to its edge in turn, and equal addends make the order irrelevant)."""
    part = nbytes / model.flowlets
    edges = len(clos.tail)
    equal = len(part) > 0 and bool(np.all(part == part[0]))
    sums = np.cumsum(np.r_[0.0, np.full(len(part), part[0])]) if equal else None

    def loads(hops, counts):
        return sums[counts] if equal else _bytes_on(hops, part, edges)

    hops = first
    counts = np.bincount(hops[hops >= 0], minlength=edges) if equal else None
    total = np.zeros(edges)
    times = np.zeros(len(a))
    for burst in range(model.flowlets):
        if burst:
            # the bursts that move, each in one of `updates` sampling intervals of the round: a
            # burst sees the loads as sampled at the start of its interval
            movers = np.flatnonzero(rng.random(len(a)) < model.move_probability)
            interval = rng.integers(0, model.updates, size=len(movers))
            hops = hops.copy()
            for step in range(model.updates):
                group = movers[interval == step]
                if not group.size:
                    continue
                view = loads(hops, counts)
                quantum = max(view.max(), 1.0) / model.bands

                def choose(moving, groups, sizes, key, cur, view=view, quantum=quantum):
                    size = sizes[key]
                    draw = rng.random((len(key), groups.shape[1]))  # as many draws as the groups' width
                    width = int(size.max())  # columns past every group's size are never chosen
                    cand = groups[key, :width]
                    band = np.floor(view[np.maximum(cand, 0)] / quantum)
                    band[np.arange(width)[None, :] >= size[:, None]] = np.inf
                    best = band.min(axis=1, keepdims=True)
                    return np.where(band <= best, draw[:, :width], -1.0).argmax(axis=1)

                moved = _hops(clos, a[group], b[group], choose)
                if counts is not None:  # kept when every burst has the same bytes
                    old = hops[:, group]
                    counts -= np.bincount(old[old >= 0], minlength=edges)
                    counts += np.bincount(moved[moved >= 0], minlength=edges)
                hops[:, group] = -1
                hops[: moved.shape[0], group] = moved
        load = loads(hops, counts)
        total += load
        drain = np.divide(load, capacity, out=np.zeros_like(load), where=capacity > 0)
        times += np.maximum(ideal / model.flowlets, _path_max(hops, drain))
    return total, times


def _spray(clos, a, b, nbytes, capacity) -> tuple[np.ndarray, np.ndarray]:
    """The fluid limit of spraying: at every switch the bytes towards a leaf split evenly over its
    next hops. Returns the edge loads and, per flow, the busiest link its bytes can cross."""
    L = clos.leaves
    edge_bytes = np.zeros(len(clos.tail))
    keys, inv = np.unique(a * L + b, return_inverse=True)
    mass = np.bincount(inv, weights=nbytes)
    levels = []  # per hop: (keys, groups, sizes)
    while keys.size:
        cur, dst = keys // L, keys % L
        groups, sizes = _groups(clos, cur, dst)
        levels.append((keys, groups, sizes))
        valid = np.arange(groups.shape[1])[None, :] < sizes[:, None]
        share = np.where(valid, (mass / np.maximum(sizes, 1))[:, None], 0.0)
        edges = groups[valid]
        np.add.at(edge_bytes, edges, share[valid])
        nxt = clos.head[edges] * L + np.repeat(dst, sizes)
        going = clos.head[edges] != np.repeat(dst, sizes)
        keys, where = np.unique(nxt[going], return_inverse=True)
        mass = np.bincount(where, weights=share[valid][going], minlength=len(keys))
    drain = np.divide(edge_bytes, capacity, out=np.zeros_like(edge_bytes), where=capacity > 0)
    # backwards: the worst drain from each (switch, destination) on, over every next hop
    worst_next = (np.zeros(0, dtype=np.int64), np.zeros(0))
    for keys, groups, sizes in reversed(levels):
        valid = np.arange(groups.shape[1])[None, :] < sizes[:, None]
        edge = np.maximum(groups, 0)
        after = clos.head[edge] * L + (keys % L)[:, None]
        later = np.zeros(after.shape)
        if worst_next[0].size:
            pos = np.clip(np.searchsorted(worst_next[0], after), 0, worst_next[0].size - 1)
            found = worst_next[0][pos] == after
            later = np.where(found, worst_next[1][pos], 0.0)
        worst = np.where(valid, np.maximum(drain[edge], later), 0.0).max(axis=1)
        worst_next = (keys, worst)
    first_keys, first_worst = worst_next
    pos = np.searchsorted(first_keys, a * L + b)
    return edge_bytes, first_worst[pos] if len(a) else np.zeros(0)


def measure(clos: Clos, mode: str, edge_bytes: np.ndarray, fct: np.ndarray, ideal: np.ndarray, job: np.ndarray, jobs: int, nic_drain: float) -> PathResult:
    """A mode's result from its edge loads and its flows' completion and ideal times (one run, or
    runs put end to end by schedule.py)."""
    return _measure(clos, mode, edge_bytes, np.where(clos.alive, clos.gbps, 0.0) * 1e9 / 8, fct, ideal, job, jobs, nic_drain)


def _measure(clos, mode, edge_bytes, capacity, fct, ideal, job, jobs, nic_drain) -> PathResult:
    up = clos.alive & (clos.tiers[clos.head] > clos.tiers[clos.tail])
    switches = len(clos.names)
    count = np.bincount(clos.tail[up], minlength=switches)
    total = np.bincount(clos.tail[up], weights=edge_bytes[up], minlength=switches)
    square = np.bincount(clos.tail[up], weights=edge_bytes[up] ** 2, minlength=switches)
    busiest = np.zeros(switches)
    np.maximum.at(busiest, clos.tail[up], edge_bytes[up])
    loaded = total > 0
    jain = np.full(switches, np.nan)
    jain[loaded] = total[loaded] ** 2 / (count[loaded] * square[loaded])
    ratio = busiest[loaded] / (total[loaded] / count[loaded])
    drain = np.divide(edge_bytes, capacity, out=np.zeros_like(edge_bytes), where=capacity > 0)
    leaf_jain = jain[: clos.leaves]
    return PathResult(
        mode=mode,
        edge_bytes=edge_bytes,
        edge_gbps=np.where(clos.alive, clos.gbps, 0.0),
        tail=clos.tail,
        uplink=up,
        max_load_ratio=float(ratio.max()) if ratio.size else 1.0,
        jain_per_leaf=leaf_jain,
        jain=float(np.nanmean(leaf_jain)) if np.isfinite(leaf_jain).any() else float("nan"),
        fct_s=fct,
        ideal_fct_s=ideal,
        job=job,
        jobs=jobs,
        drain_s=float(max(drain.max(initial=0.0), nic_drain)),
        nic_drain_s=float(nic_drain),
    )
