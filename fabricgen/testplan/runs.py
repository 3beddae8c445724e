"""NCCL and RCCL collective runs (nccl-tests / rccl-tests `all_reduce_perf`, `alltoall_perf`) per
scalable unit and for the whole cluster, with the bus bandwidth the network bounds them to.

Bus bandwidth model (github:NVIDIA/nccl-tests doc/PERFORMANCE.md): nccl-tests prints algbw = S / t
and busbw = algbw x 2(n-1)/n for all-reduce, algbw x (n-1)/n for all-to-all, n ranks; busbw is
meant to be compared with the hardware's bottleneck link bandwidth. The network's bound here,
with g GPUs per node sharing the node's backend NICs (each GPU's share r = the node's NIC line
rate / g, in GB/s = Gb/s / 8, as nccl-tests prints GB/s):

- all-reduce (ring): NCCL runs several rings (channels), each crossing every node boundary
  through one NIC, and spreads them over the node's NICs. A ring carries 2(n-1)/n of its share of
  the data over each of its links, so with the rings spread evenly each NIC carries 2(n-1)/n x
  S / NICs, and busbw <= the node's NIC line rate in all = g x r. (The Cisco AI-cluster
  whitepaper measured 390 GB/s on 8 x 400G per node: 97.5 % of this bound.)
- all-to-all: each rank sends (n-g)/n of its S bytes to ranks of other nodes, all of it over the
  network at r (PXN may route it through a peer GPU's NIC, which is the same total), so
  busbw = S/t x (n-1)/n <= r x (n-1)/(n-g). Static ECMP hashes these few large flows unevenly,
  which the separate --alltoall-efficiency accounts for (the whitepaper measured 36.66 GB/s of
  50 under ECMP, 73 %).

The threshold is the bound x efficiency; `check` compares the peak busbw of a run with it."""

from __future__ import annotations

import shlex
from collections import defaultdict

from fabricgen.basics.sorting import natural_key
from fabricgen.testplan.backend import Backend
from fabricgen.testplan.model import Collective, Library, Qos, Run

TESTS: tuple[Collective, ...] = ("all_reduce", "alltoall")
LIBRARIES: tuple[Library, ...] = ("nccl", "rccl")
# -b/-e: message sizes from 1 GiB to 16 GiB, doubling (-f 2): large messages, where busbw reaches
# the link bound; -g 1: one GPU per process (one MPI rank per GPU); -c 1: check results
# (github:NVIDIA/nccl-tests README.md, "Arguments")
TEST_ARGS = ("-b", "1G", "-e", "16G", "-f", "2", "-g", "1", "-c", "1")


def plan_runs(backend: Backend, qos: Qos, efficiency: float, alltoall_efficiency: float) -> list[Run]:
    """Per scalable unit (when there are several) and for the cluster: all-reduce and all-to-all,
    under NCCL and under RCCL (which reads the same NCCL_* variables)."""
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
    for scope, members in scopes:
        for library in LIBRARIES:
            for test in TESTS:
                runs.append(_run(backend, scope, members, library, test, efficiency if test == "all_reduce" else alltoall_efficiency))
    return runs


def _run(backend: Backend, scope: str, nodes: list[str], library: Library, test: Collective, efficiency: float) -> Run:
    g = backend.gpus_per_node
    n = len(nodes) * g
    nics = min(len(backend.nics_of_node[node]) for node in nodes)
    nic_gbps = float(min(nic.speed_gbps for node in nodes for nic in backend.nics_of_node[node]))
    node_gbytes = nics * nic_gbps / 8  # GB/s, as nccl-tests reports
    if test == "all_reduce":
        bound = node_gbytes
    else:
        bound = node_gbytes / g * (n - 1) / (n - g)
    run_id = f"{library}-{test}-{scope}"
    hostfile = f"hostfiles/{scope}.txt"
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
