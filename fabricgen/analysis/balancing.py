"""Load balancing of the built fabric under collective traffic: the build's fabric handed to the
path model in clos.py, every mode compared over many seeds, the sweep of JCT against the number of
concurrent jobs, and the same traffic again with devices or links down."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabricgen.analysis import clos as paths
from fabricgen.analysis import loadbalance, schedule
from fabricgen.analysis.clos import Clos, PathResult
from fabricgen.analysis.fabric import Fabric
from fabricgen.analysis.limits import TrafficOptions, check_cost
from fabricgen.analysis.loadbalance import Summary, Traffic, estimate
from fabricgen.basics.errors import AnalysisError, Problem


@dataclass
class Failure:
    """The traffic again with `down` failed: the capacity it cut and each mode's JCT change."""

    down: tuple[str, ...]
    capacity_cut: float  # 1 - intact makespan / failed makespan, spraying (the best any balancing does)
    flows_lost: float  # share of the flows whose GPU's leaf is down
    summaries: dict[str, Summary]
    jct_change: dict[str, float]  # mode -> failed slowest-job time / intact


@dataclass
class Balancing:
    fabric: Clos
    options: TrafficOptions
    summaries: dict[str, Summary]
    samples: dict[str, PathResult]  # seed 0's run of each mode, for the plots
    sweep: dict[int, dict[str, Summary]] = field(default_factory=dict)  # jobs -> mode -> summary
    crosses_fabric: bool = True
    failure: Failure | None = None
    paths: PathShares | None = None  # where seed 0's flows went (PXN, within a leaf, across leaves)
    peer_links: int = 0  # a spine-free pair's peer links, which the path model leaves out


@dataclass(frozen=True)
class PathShares:
    """Shares of seed 0's NIC-port flows: moved PXN-style over the node's scale-up domain to the
    destination's rail, within one node after that (never on the network), within one leaf, and from
    one leaf to another (the only ones load balancing acts on)."""

    flows: int
    pxn: float
    within_node: float
    within_leaf: float
    across_leaves: float


def path_shares(model: Clos, flows: Traffic) -> PathShares:
    ports, _ = paths.on_ports(model, flows)
    src, dst, _, _, kept = paths.carried(model, ports)
    if not len(src):
        return PathShares(0, 0.0, 0.0, 0.0, 0.0)
    per_node = model.ports_per_node
    node = src // per_node == dst // per_node
    leaf = model.leaf_of_nic[src] == model.leaf_of_nic[dst]
    return PathShares(len(src), float(np.mean(src != ports.src[kept])), float(np.mean(node)), float(np.mean(leaf & ~node)), float(np.mean(~leaf & ~node)))


def clos_of(fabric: Fabric) -> Clos:
    """The build's fabric as the path model: every switch and switch-to-switch link, the GPU NICs'
    leaves (from the host links, so a leaf serving several rails is read as it is cabled)."""
    if fabric.nic_leaf.size == 0:
        raise AnalysisError(Problem(f"the {fabric.network} fabric has no GPU nodes to send traffic", hint="analyse the backend fabric"))
    index = {name: i for i, name in enumerate(fabric.switches)}
    tiers = np.array([0] * len(fabric.leaves) + [1] * len(fabric.spines) + [2] * len(fabric.cores), dtype=np.int64)
    ends = np.array([(index[a], index[b]) for _, a, b, _ in fabric.cables], dtype=np.int64).reshape(-1, 2)
    tail = np.column_stack((ends[:, 0], ends[:, 1])).ravel()  # cable c: edges 2c (a->b), 2c+1 (b->a)
    head = np.column_stack((ends[:, 1], ends[:, 0])).ravel()
    gbps = np.repeat(np.array([g for *_, g in fabric.cables], dtype=float), 2)
    nics = fabric.nic_leaf.ravel()  # [node, gpu, plane]: port (node * rails + gpu) * planes + plane
    return Clos(
        names=fabric.switches,
        tiers=tiers,
        leaves=len(fabric.leaves),
        tail=tail,
        head=head,
        gbps=gbps,
        cables=tuple(key for key, *_ in fabric.cables),
        leaf_of_nic=nics,
        rails=fabric.nic_leaf.shape[1],
        host_gbps=fabric.nic_gbps,
        alive=np.ones(len(tail), dtype=bool),
        nic_alive=np.ones(len(nics), dtype=bool),
        planes=fabric.nic_leaf.shape[2],
    )


def sending_leaf(model: Clos, senders: str) -> int | None:
    """The leaf index `--senders leaf:NAME` names (None for all); AnalysisError for an unknown leaf."""
    if senders == "all":
        return None
    name = senders.split(":", 1)[1]
    if name not in model.names[: model.leaves]:
        raise AnalysisError(
            Problem(
                f"--senders {senders}: {name!r} is not a leaf of this fabric",
                hint=f"use one of: {', '.join(model.names[:3])} …" if model.leaves > 3 else f"use one of: {', '.join(model.names[: model.leaves])}",
            )
        )
    return model.names.index(name)


def plan(fabric: Fabric, options: TrafficOptions, sweep: bool = True, budget: int | None = None) -> Clos:
    """The build's fabric as the simulation's model, once `options` are known to suit it and the
    simulation to fit in memory (`budget` bytes, default: what the machine has free) and in the
    work limit; AnalysisError otherwise. Cheap: sizes only, nothing simulated."""
    model = suits(fabric, options)
    check_cost(model, options, sweep, budget)
    return model


def suits(fabric: Fabric, options: TrafficOptions) -> Clos:
    """The fabric as the simulation's model, once `options` are known to suit it (their choices and
    bounds, the sending leaf, enough GPU nodes for the jobs); AnalysisError otherwise. Sizes only."""
    options.check()
    model = clos_of(fabric)
    sending_leaf(model, options.senders)
    if model.nodes // options.jobs < 2:
        raise AnalysisError(
            Problem(
                f"--concurrent-jobs {options.jobs:,}: the fabric has {model.nodes:,} GPU nodes ({model.gpus:,} GPUs), and every job needs at least 2 nodes",
                hint=f"use --concurrent-jobs {max(1, model.nodes // 2)} or fewer",
            )
        )
    return model


def traffic(model: Clos, options: TrafficOptions, seed: int, jobs: int | None = None) -> Traffic:
    """One seed's flows, only those of the sending leaf when `--senders leaf:NAME`."""
    flows = loadbalance.make_traffic(model, seed=seed, **options.traffic(jobs))
    leaf = sending_leaf(model, options.senders)
    if leaf is None:
        return flows
    keep = (model.gpu_leaves()[flows.src] == leaf).any(axis=1)  # GPUs with a NIC port on that leaf
    return Traffic(src=flows.src[keep], dst=flows.dst[keep], nbytes=flows.nbytes[keep], sport=flows.sport[keep], job=flows.job[keep], jobs=flows.jobs)


def scheduled(model: Clos, flows: Traffic, options: TrafficOptions, modes: tuple[str, ...], seed: int) -> dict[str, PathResult]:
    """`modes` on one seed's flows, run as `options.schedule` says (all at once, or NCCL's rounds)."""
    return schedule.simulate(
        model, flows, modes, schedule=options.schedule, pattern=options.pattern, hash=options.hash, flowlet=options.flowlet, load=options.load, seed=seed
    )


def metrics(result: PathResult, threshold: float) -> dict[str, float]:
    stretch = result.stretch
    jct = np.zeros(result.jobs)
    np.maximum.at(jct, result.job, result.fct_s)
    return {
        "max_load_ratio": result.max_load_ratio,
        "jain": result.jain,
        "stretch_median": float(np.median(stretch)) if stretch.size else 1.0,
        "stretch_p90": float(np.percentile(stretch, 90)) if stretch.size else 1.0,
        "stretch_worst": float(stretch.max()) if stretch.size else 1.0,
        "share_above_stretch": float(np.mean(stretch > threshold)) if stretch.size else 0.0,
        "jct_ratio_worst": float(result.jct_ratio.max()),
        "jct_ratio_mean": float(result.jct_ratio.mean()),
        "jct_s": float(jct.max()),
    }


def compare(
    model: Clos, options: TrafficOptions, seeds, jobs: int | None = None, keep: dict[str, PathResult] | None = None, done: dict | None = None
) -> dict[str, Summary]:
    """For every mode, `simulate` over `seeds` (traffic, placement and ports re-drawn per seed)
    and summarise each metric as a mean with a 95 % confidence interval. `done` holds each
    (jobs, seed)'s metrics per mode, filled and read: a seed's traffic depends on the seed and the
    number of jobs alone, so the sweep's point at --jobs reuses the main run's seeds."""
    per_mode: dict[str, dict[str, list[float]]] = {m: {} for m in options.modes}
    for seed in seeds:
        key = (jobs or options.jobs, seed)
        found = None if done is None else done.get(key)
        if found is None:
            flows = traffic(model, options, seed, jobs)
            results = scheduled(model, flows, options, options.modes, seed)
            found = {mode: metrics(result, options.stretch_threshold) for mode, result in results.items()}
            if done is not None:
                done[key] = found
            for mode, result in results.items():
                if keep is not None and mode not in keep:
                    keep[mode] = result
        for mode in options.modes:
            for name, value in found[mode].items():
                per_mode[mode].setdefault(name, []).append(value)
    return {m: Summary(m, {k: estimate(v) for k, v in values.items()}) for m, values in per_mode.items()}


def analyse(
    fabric: Fabric, options: TrafficOptions, sweep: bool = True, budget: int | None = None, devices: tuple[str, ...] = (), cables: tuple[str, ...] = ()
) -> Balancing:
    """Every mode over options.seeds seeds; with `sweep`, JCT against 1, 2, 4 ... concurrent jobs;
    with `devices`/`cables`, the same traffic again with them down. Refused up front
    (AnalysisError) when the options do not suit the fabric or would not fit."""
    model = plan(fabric, options, sweep, budget)
    shares = path_shares(model, traffic(model, options, 0))
    if not shares.across_leaves:
        return Balancing(model, options, {}, {}, {}, crosses_fabric=False, paths=shares, peer_links=len(fabric.peer_cables))
    samples: dict[str, PathResult] = {}
    done: dict = {}
    summaries = compare(model, options, range(options.seeds), keep=samples, done=done)
    points = {}
    jobs = 1
    while sweep and options.senders == "all" and model.nodes // jobs >= 2:
        points[jobs] = compare(model, options, range(options.sweep_seeds), jobs, done=done)
        jobs *= 2
    found = Balancing(model, options, summaries, samples, points, paths=shares)
    if devices or cables:
        found.failure = _failure(model, options, summaries, set(devices), set(cables))
    return found


def _failure(model: Clos, options: TrafficOptions, intact: dict[str, Summary], devices: set[str], cables: set[str]) -> Failure:
    failed = model.failed(devices, cables)
    flows = traffic(model, options, 0)
    ports, _ = paths.on_ports(model, flows)
    lost = 1.0 - float(np.mean(failed.nic_alive[ports.src] & failed.nic_alive[ports.dst])) if len(ports.src) else 0.0
    try:
        before = scheduled(model, flows, options, ("spray",), 0)["spray"]
        after = scheduled(failed, flows, options, ("spray",), 0)["spray"]
        summaries = compare(failed, options, range(options.seeds))
    except ValueError as error:  # a leaf pair with no path left
        raise AnalysisError(Problem(f"with {', '.join(sorted(devices | cables))} down: {error}", hint="fail fewer devices or links")) from None
    cut = 1.0 - before.drain_s / after.drain_s if after.drain_s > 0 else 0.0
    change = {mode: summaries[mode].metrics["jct_s"].mean / intact[mode].metrics["jct_s"].mean for mode in options.modes}
    return Failure(tuple(sorted(devices | cables)), max(0.0, cut), lost, summaries, change)


def uplink_load_ratios(result: PathResult) -> np.ndarray:
    """Each live leaf uplink's bytes over its leaf's mean, for the leaves that send across the fabric."""
    leaves = len(result.jain_per_leaf)
    up = np.flatnonzero(result.uplink & (result.tail < leaves))
    tail, carried = result.tail[up], result.edge_bytes[up]
    total = np.bincount(tail, weights=carried, minlength=leaves)
    count = np.bincount(tail, minlength=leaves)
    sends = total[tail] > 0
    return carried[sends] / (total[tail][sends] / count[tail][sends])
