"""NCCL or RCCL collective runs (nccl-tests / rccl-tests `all_reduce_perf`, `alltoall_perf`) per
scalable unit and for the whole cluster, with the bus bandwidth the network bounds them to.

Library: the GPU node model's `gpu_vendor` in the catalog: NCCL (nccl-tests) on NVIDIA, RCCL
(rccl-tests) on AMD; both when the catalog does not say (a node model of a catalog of its own).

Bus bandwidth model (github:NVIDIA/nccl-tests doc/PERFORMANCE.md): nccl-tests prints algbw = S / t
and busbw = algbw x 2(n-1)/n for all-reduce, algbw x (n-1)/n for all-to-all, n ranks; busbw is
meant to be compared with the hardware's bottleneck link bandwidth. The NICs' bound, with g GPUs
per node sharing the node's backend NICs (each GPU's share r = the node's NIC line rate / g, in
GB/s = Gb/s / 8, as nccl-tests prints GB/s):

- all-reduce (ring): NCCL runs several rings (channels), each crossing every node boundary
  through one NIC, and spreads them over the node's NICs. A ring carries 2(n-1)/n of its share of
  the data over each of its links, so with the rings spread evenly each NIC carries 2(n-1)/n x
  S / NICs, and busbw <= the node's NIC line rate in all = g x r. (The Cisco AI-cluster
  whitepaper measured 390 GB/s on 8 x 400G per node: 97.5 % of this bound.)
- all-to-all: each rank sends (n-g)/n of its S bytes to ranks of other nodes, all of it over the
  network at r, so busbw = S/t x (n-1)/n <= r x (n-1)/(n-g).

The leaves: a run whose traffic leaves a leaf shares that leaf's uplinks (fabric links, or peer
links without spines). For each leaf, the NICs of the run's nodes behind it send at line rate a
share of their traffic to NICs behind other leaves:
- all-to-all: every remote rank equally, each through its own NIC (no PXN), so a NIC of node A
  sends off the leaf (remote NICs not behind its leaf) / (remote NICs);
- all-reduce: rings are rail-aligned (a ring leaves a node through NIC i and enters the next
  node, in the hostfile's order, through its NIC i), so a NIC sends off the leaf only when the
  next node's NIC i is behind another leaf.
The leaf's uplinks carry at most their line rate: the run's bound is the NICs' bound times
min(1, uplink rate / rate sent off the leaf) of the busiest leaf (`leaf_factor`). Seed 003's
leaves (16 x 400G down, 2 x 400G up: 8:1) send half their all-to-all off the leaf (the other
node's rails 1-4 are behind the same leaf), so all-to-all is bound to 1/4 of the NICs' bound,
the 4x slowdown `fabricgen analyze` gives; its all-reduce stays behind each leaf (factor 1). A
leaf without uplinks (rail-only) is left out: what leaves its rail crosses the node's scale-up
domain, not the network.

Thresholds: the bound x --efficiency (0.9) for all-reduce, x --alltoall-efficiency for all-to-all.
The all-to-all default, 0.6, is calibrated on the Cisco AI-cluster whitepaper's NCCL all-to-all
under ECMP: 8 nodes of 8 x 400G, 8 up / 8 down per leaf, 36.66 GB/s busbw. The bound of that
shape is 50 x 63/56 = 56.25 GB/s, so ECMP reached 36.66 / 56.25 = 65.2 % of it (73 % is of the
NIC's 50 GB/s line rate, not of the bound). 0.6 puts the threshold at 33.75 GB/s, 8 % under the
published ECMP figure for run-to-run variance. A fabric that balances better can ask for more:
the same paper measured 43.48 GB/s with flowlet DLB (77.3 % of the bound) and 50.39 GB/s with
per-packet spraying (89.6 %)."""

from __future__ import annotations

import shlex
from collections import defaultdict
from dataclasses import dataclass, field

from fabricgen.basics.sorting import natural_key
from fabricgen.testplan.backend import Backend
from fabricgen.testplan.model import Collective, Library, Qos, Run

TESTS: tuple[Collective, ...] = ("all_reduce", "alltoall")
LIBRARY_OF_VENDOR: dict[str | None, tuple[Library, ...]] = {"nvidia": ("nccl",), "amd": ("rccl",), None: ("nccl", "rccl")}
ALLTOALL_EFFICIENCY = 0.6  # see the module docstring: 36.66 / 56.25 = 0.652 under ECMP, less a margin
# -b/-e: message sizes from 1 GiB to 16 GiB, doubling (-f 2): large messages, where busbw reaches
# the link bound; -g 1: one GPU per process (one MPI rank per GPU); -c 1: check results
# (github:NVIDIA/nccl-tests README.md, "Arguments"; rccl-tests takes the same)
TEST_ARGS = ("-b", "1G", "-e", "16G", "-f", "2", "-g", "1", "-c", "1")


@dataclass
class PlannedRuns:
    runs: list[Run]
    alltoall_efficiency: float
    notes: list[str] = field(default_factory=list)


def plan_runs(backend: Backend, qos: Qos, efficiency: float, alltoall_efficiency: float | None = None) -> PlannedRuns:
    """Per scalable unit (when there are several) and for the cluster: all-reduce and all-to-all,
    under the library of the nodes' GPU vendor (both when it is not known)."""
    alltoall = ALLTOALL_EFFICIENCY if alltoall_efficiency is None else alltoall_efficiency
    nodes = sorted(backend.nics_of_node, key=natural_key)
    by_unit: dict[int, list[str]] = defaultdict(list)
    for node in nodes:
        unit = backend.scalable_unit.get(backend.nics_of_node[node][0].leaf)
        if unit is not None:
            by_unit[unit].append(node)
    scopes: list[tuple[str, list[str]]] = []
    if len(by_unit) > 1:
        scopes += [(f"su{unit:02d}", members) for unit, members in sorted(by_unit.items()) if len(members) > 1]
    if len(nodes) > 1:
        scopes.append(("cluster", nodes))
    runs = []
    notes = []
    for scope, members in scopes:
        for test in TESTS:
            factor = leaf_factor(backend, members, test)
            if factor < 1:
                notes.append(f"{test} on {scope}: the busiest leaf's uplinks carry {factor:.0%} of what its NICs send off the leaf: the bound is scaled to it")
            for library in LIBRARY_OF_VENDOR[backend.gpu_vendor]:
                runs.append(_run(backend, scope, members, library, test, efficiency if test == "all_reduce" else alltoall, factor))
    if backend.gpu_vendor is None:
        notes.append("the catalog names no GPU vendor for the nodes' model: both NCCL and RCCL runs are planned; run the one of your GPUs")
    return PlannedRuns(runs, alltoall, notes)


def leaf_factor(backend: Backend, nodes: list[str], test: Collective) -> float:
    """The share of the NICs' bound the busiest leaf's uplinks let `test` reach on `nodes` (see
    the module docstring); 1 when no leaf is short. Linear in the nodes' NICs."""
    nics = {node: backend.nics_of_node[node] for node in nodes}
    sent: dict[str, float] = defaultdict(float)  # leaf -> Gb/s its NICs send off it at line rate
    if test == "alltoall":
        total = sum(len(n) for n in nics.values())
        behind: dict[str, int] = defaultdict(int)
        for node_nics in nics.values():
            for nic in node_nics:
                behind[nic.leaf] += 1
        for node_nics in nics.values():
            own: dict[str, int] = defaultdict(int)
            for nic in node_nics:
                own[nic.leaf] += 1
            remote = total - len(node_nics)
            for nic in node_nics:
                if remote:
                    sent[nic.leaf] += nic.speed_gbps * (remote - (behind[nic.leaf] - own[nic.leaf])) / remote
    else:
        rails = min(len(n) for n in nics.values())
        for i, node in enumerate(nodes):
            following = nodes[(i + 1) % len(nodes)]
            for rail in range(rails):
                here, there = nics[node][rail], nics[following][rail]
                if here.leaf != there.leaf:
                    sent[here.leaf] += here.speed_gbps
    factor = 1.0
    for leaf, gbps in sent.items():
        uplinks = backend.uplink_gbps.get(leaf, 0)
        if uplinks and gbps > uplinks:
            factor = min(factor, uplinks / gbps)
    return factor


def _run(backend: Backend, scope: str, nodes: list[str], library: Library, test: Collective, efficiency: float, factor: float) -> Run:
    g = backend.gpus_per_node
    n = len(nodes) * g
    nics = min(len(backend.nics_of_node[node]) for node in nodes)
    nic_gbps = float(min(nic.speed_gbps for node in nodes for nic in backend.nics_of_node[node]))
    node_gbytes = nics * nic_gbps / 8  # GB/s, as nccl-tests reports
    if test == "all_reduce":
        nic_bound = node_gbytes
    else:
        nic_bound = node_gbytes / g * (n - 1) / (n - g)
    run_id = f"{library}-{test}-{scope}"
    hostfile = f"hostfiles/{scope}.txt"
    bound = nic_bound * factor
    return Run(
        id=run_id,
        library=library,
        test=test,
        scope=scope,
        nodes=nodes,
        ranks=n,
        gpus_per_node=g,
        nic_gbps=nic_gbps,
        ports=[nic.port for nic in backend.nics_of_node[nodes[0]]],
        nic_bound_busbw=round(nic_bound, 2),
        leaf_factor=round(factor, 4),
        bound_busbw=round(bound, 2),
        threshold_busbw=round(bound * efficiency, 2),
        hostfile=hostfile,
        command=shlex.join(mpirun(n, g, hostfile, f"{test}_perf")),
    )


def mpirun(ranks: int, per_node: int, hostfile: str, binary: str) -> list[str]:
    """Open MPI's mpirun: one rank per GPU, `per_node` on each host of the hostfile
    (--map-by ppr:N:node, Open MPI mpirun(1)), each rank started through rank-env.sh, which sets
    the NCCL_* variables from the node's own NICs before it runs the test binary."""
    return [
        "mpirun",
        "-np",
        str(ranks),
        "--hostfile",
        hostfile,
        "--map-by",
        f"ppr:{per_node}:node",
        "-x",
        "PLAN_DIR",
        "bash",
        "rank-env.sh",
        binary,
        *TEST_ARGS,
    ]
