"""Load balancing of the built fabric under collective traffic: the build's fabric handed to the
simulation in loadbalance.py, every mode compared over many seeds, and the sweep of JCT against
the number of concurrent jobs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabricgen.analysis import loadbalance
from fabricgen.analysis.fabric import Fabric
from fabricgen.analysis.limits import check_cost, option_problems
from fabricgen.analysis.loadbalance import LeafSpine, ModeResult, Summary
from fabricgen.errors import AnalysisError, Problem, raise_if


@dataclass(frozen=True)
class TrafficOptions:
    pattern: str = "all-to-all"
    scope: str = "rail"  # rail-optimized collectives stay on their rail; cross-rail moves every hop
    jobs: int = 1
    placement: str = "contiguous"
    message_bytes: int = 1 << 20  # per GPU pair (all-to-all) or per GPU (ring)
    flows_per_pair: int = 1  # RoCE queue pairs, each with its own UDP source port
    modes: tuple[str, ...] = loadbalance.MODES
    hash: str = "crc32"
    flowlets: int = 4
    seeds: int = 10
    sweep_seeds: int = 3  # per point of the JCT-vs-jobs sweep

    def check(self) -> None:
        """Raise AnalysisError naming every option that is not one of its choices or is out of bounds."""
        raise_if(option_problems(None, None, self), AnalysisError)

    def traffic(self, jobs: int | None = None) -> dict:
        return {"pattern": self.pattern, "scope": self.scope, "jobs": jobs or self.jobs, "placement": self.placement,
                "message_bytes": self.message_bytes, "flows_per_pair": self.flows_per_pair}


@dataclass
class Balancing:
    fabric: LeafSpine
    options: TrafficOptions
    summaries: dict[str, Summary]
    samples: dict[str, ModeResult]  # seed 0's run of each mode, for the plots
    sweep: dict[int, dict[str, Summary]] = field(default_factory=dict)  # jobs -> mode -> summary
    crosses_fabric: bool = True


def leaf_spine(fabric: Fabric) -> LeafSpine:
    """The build's fabric as the simulation's uniform leaf-spine model."""
    if fabric.nic_leaf.size == 0:
        raise AnalysisError(Problem(f"the {fabric.network} fabric has no GPU nodes to send traffic", hint="analyse the backend fabric"))
    parallel = set(fabric.links.ravel().tolist())
    if len(parallel) != 1 or 0 in parallel:
        raise AnalysisError(Problem(
            f"leaves and spines are joined by unequal numbers of links ({sorted(parallel)})",
            hint="the load-balancing model needs every leaf cabled alike to every spine (capacity and failures still apply)",
        ))
    return LeafSpine(
        leaves=len(fabric.leaves), spines=len(fabric.spines), links=parallel.pop(),
        uplink_gbps=fabric.link_gbps, host_gbps=fabric.nic_gbps,
        leaf_of_nic=fabric.nic_leaf.ravel(), rails=fabric.nic_leaf.shape[1],
    )


def plan(fabric: Fabric, options: TrafficOptions, sweep: bool = True, budget: int | None = None) -> LeafSpine:
    """The build's fabric as the simulation's model, once `options` are known to suit it and the
    simulation to fit in memory (`budget` bytes, default: what the machine has free) and in the
    work limit; AnalysisError otherwise. Cheap: sizes only, nothing simulated."""
    options.check()
    model = leaf_spine(fabric)
    if model.nodes // options.jobs < 2:
        raise AnalysisError(Problem(
            f"--jobs {options.jobs}: the fabric has {model.nodes} GPU nodes ({len(model.leaf_of_nic)} GPUs), and every job needs at least 2 nodes",
            hint=f"use --jobs {max(1, model.nodes // 2)} or fewer",
        ))
    check_cost(model, options, sweep, budget)
    return model


def analyse(fabric: Fabric, options: TrafficOptions, sweep: bool = True, budget: int | None = None) -> Balancing:
    """Every mode over options.seeds seeds; with `sweep`, JCT against 1, 2, 4 ... concurrent jobs.
    Refused up front (AnalysisError) when the options do not suit the fabric or would not fit."""
    model = plan(fabric, options, sweep, budget)
    traffic = loadbalance.make_traffic(model, seed=0, **options.traffic())
    if not (model.leaf_of_nic[traffic.src] != model.leaf_of_nic[traffic.dst]).any():
        return Balancing(model, options, {}, {}, {}, crosses_fabric=False)
    samples: dict[str, ModeResult] = {}  # seed 0's runs, kept by compare for the plots
    summaries = loadbalance.compare(model, options.modes, range(options.seeds), hash=options.hash, flowlets=options.flowlets, keep=samples, **options.traffic())
    points = {}
    jobs = 1
    while sweep and model.nodes // jobs >= 2:
        points[jobs] = loadbalance.compare(model, options.modes, range(options.sweep_seeds), hash=options.hash, flowlets=options.flowlets, **options.traffic(jobs))
        jobs *= 2
    return Balancing(model, options, summaries, samples, points)


def uplink_load_ratios(result: ModeResult) -> np.ndarray:
    """Each live uplink's bytes over its leaf's mean, for leaves that send across the fabric."""
    loads = result.uplink_bytes.reshape(result.uplink_bytes.shape[0], -1)
    live = result.link_gbps.reshape(loads.shape) > 0
    ratios = []
    for leaf in range(loads.shape[0]):
        carried = loads[leaf][live[leaf]]
        if carried.sum() > 0:
            ratios.append(carried / carried.mean())
    return np.concatenate(ratios) if ratios else np.zeros(0)
