"""A build's routed fabric as arrays, for analysis: leaves, spines, and the capacity between them.

Read from the build directory only (a verified build, its topology.json parsed through the
checked model of `fabricgen.build.build_dir`, its links consistent with its nodes and every speed
positive), so the fabric analysed is the one that was built and cabled, not the intent's idea of
it. cabling.csv is not read: parsing it to cross-check would cost the 32,768-GPU analysis 1.7 s
of CPU and 250 MB, and no number here comes from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fabricgen.basics.errors import AnalysisError, Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import printable
from fabricgen.build.build_dir import BuildFiles


@dataclass(frozen=True)
class Fabric:
    """A 2-tier leaf-spine fabric. Arrays are indexed by leaf (rows) and spine (columns)."""

    network: str
    leaves: tuple[str, ...]
    spines: tuple[str, ...]
    leaf_rail: np.ndarray  # [leaf] rail number (0 when the fabric is not rail-optimized)
    leaf_unit: np.ndarray  # [leaf] scalable unit
    links: np.ndarray  # [leaf, spine] parallel links
    capacity_gbps: np.ndarray  # [leaf, spine] their summed speed
    downlink_gbps: np.ndarray  # [leaf] host-facing capacity in use (cabled server ports)
    link_gbps: float  # the leaf-spine link speed (the most common one)
    # [node, gpu, plane] the leaf of each GPU NIC port (GPU nodes in name order, GPUs by port name);
    # plane has one entry unless a NIC has a port on each of several planes (ConnectX-8 as 2 x 400G)
    nic_leaf: np.ndarray
    nic_gbps: float  # the GPU NICs' speed (the most common one)
    # every tier, for the path model (analysis/clos.py): switches leaves first, then spines, cores
    cores: tuple[str, ...] = ()
    cables: tuple[tuple[str, str, str, float], ...] = ()  # (key, a, b, Gbps) of every switch-to-switch link
    peer_cables: tuple[tuple[str, str, str, float], ...] = ()  # (key, a, b, Gbps) of a spine-free pair's peer links (not in `cables`)

    @property
    def switches(self) -> tuple[str, ...]:
        return self.leaves + self.spines + self.cores

    @property
    def uplink_gbps(self) -> np.ndarray:
        """[leaf] capacity towards the spines."""
        return self.capacity_gbps.sum(axis=1)


def read_fabric(build_dir: Path, network: str = "backend") -> Fabric:
    """The routed `network` of the build in `build_dir`. Raises AnalysisError when the directory is
    not a verified build, its topology.json is malformed (each problem names the field), or the
    network has no leaves. Spines may be missing (rail-only: each rail one switch) and cores
    present (3 tiers)."""
    build = BuildFiles(build_dir, AnalysisError, keep=lambda path: path == "topology.json")
    topology = build.topology()
    nodes = {node.id: node for node in topology.nodes if node.network == network}
    leaves = tuple(name for name, node in nodes.items() if node.role == "leaf")
    spines = tuple(name for name, node in nodes.items() if node.role == "spine")
    cores = tuple(name for name, node in nodes.items() if node.role == "core")
    if not leaves:
        known = sorted(topology.graph.fabrics)
        raise AnalysisError(
            Problem(
                f"the build has no routed {printable(network)} fabric (no leaves)",
                hint=f"choose one of: {', '.join(known)}" if known else "build an intent with a backend fabric",
                file=str(build_dir / "topology.json"),
            )
        )
    leaf_index = {name: i for i, name in enumerate(leaves)}
    spine_index = {name: j for j, name in enumerate(spines)}
    links = np.zeros((len(leaves), len(spines)), dtype=np.int64)
    capacity = np.zeros((len(leaves), len(spines)))
    downlinks = np.zeros(len(leaves))
    speeds: dict[float, int] = {}
    nic_speeds: dict[float, int] = {}
    gpu_nics: dict[str, dict[str, int]] = {}  # node -> its NIC port -> leaf
    leaf_plane = {name: nodes[name].plane or 0 for name in leaves}
    switch_set = set(leaves) | set(spines) | set(cores)
    cables = []
    peer_cables = []
    for link in topology.links:
        if link.network != network:
            continue
        ends = (link.source, link.target)
        speed = float(link.speed_gbps)
        if link.kind == "fabric" and link.source in switch_set and link.target in switch_set:
            cables.append((link.key, link.source, link.target, speed))
        elif link.kind == "peer" and link.source in leaf_index and link.target in leaf_index:
            peer_cables.append((link.key, link.source, link.target, speed))
        if link.kind == "fabric":
            leaf, spine = ends if ends[0] in leaf_index else ends[::-1]
            if leaf not in leaf_index or spine not in spine_index:
                continue  # a spine-core link: in `cables` only
            links[leaf_index[leaf], spine_index[spine]] += 1
            capacity[leaf_index[leaf], spine_index[spine]] += speed
            speeds[speed] = speeds.get(speed, 0) + 1
        elif link.kind == "host":
            host_leaf = next((end for end in ends if end in leaf_index), None)
            if host_leaf is not None:
                downlinks[leaf_index[host_leaf]] += speed
                server, port = (link.source, link.source_port) if link.target == host_leaf else (link.target, link.target_port)
                if server in nodes and nodes[server].role == "gpu-node":
                    gpu_nics.setdefault(server, {})[port] = leaf_index[host_leaf]
                    nic_speeds[speed] = nic_speeds.get(speed, 0) + 1
    return Fabric(
        network=network,
        leaves=leaves,
        spines=spines,
        leaf_rail=np.array([nodes[name].rail or 0 for name in leaves]),
        leaf_unit=np.array([nodes[name].scalable_unit or 0 for name in leaves]),
        links=links,
        capacity_gbps=capacity,
        downlink_gbps=downlinks,
        link_gbps=max(speeds, key=speeds.__getitem__) if speeds else 0.0,
        nic_leaf=_nic_leaf(gpu_nics, _gpus_per_node(topology.graph.backend if network == "backend" else {}), np.array([leaf_plane[name] for name in leaves])),
        nic_gbps=max(nic_speeds, key=nic_speeds.__getitem__) if nic_speeds else 0.0,
        cores=cores,
        cables=tuple(cables),
        peer_cables=tuple(peer_cables),
    )


def _gpus_per_node(summary: dict) -> int | None:
    """GPUs per node from the fabric's summary in topology.json (gpus / nodes), None when absent."""
    gpus, nodes = summary.get("gpus"), summary.get("nodes")
    if isinstance(gpus, int) and isinstance(nodes, int) and nodes > 0 and gpus % nodes == 0:
        return gpus // nodes
    return None


def _nic_leaf(gpu_nics: dict[str, dict[str, int]], gpus_per_node: int | None, leaf_plane: np.ndarray) -> np.ndarray:
    """[node, gpu, plane]. A GPU is one endpoint: with multi-port NICs (a node cabling more ports
    than it has GPUs, e.g. DGX-B300: 8 ConnectX-8 x 2 ports, port p of each NIC on plane p) the
    ports are ordered by their leaf's plane, then by name, so GPU r's ports are the r-th port of
    every plane. Otherwise the GPUs are the ports in name order (nic1..nic8), one plane."""
    if not gpu_nics:
        return np.zeros((0, 0, 1), dtype=np.int64)
    ports = max(len(p) for p in gpu_nics.values())
    per_gpu = ports // gpus_per_node if gpus_per_node and ports > gpus_per_node and ports % gpus_per_node == 0 else 1
    rows = []
    for _, cabled in sorted(gpu_nics.items(), key=lambda item: natural_key(item[0])):
        if len(cabled) != ports:
            continue
        if per_gpu == 1:
            rows.append([[cabled[p]] for p in sorted(cabled, key=natural_key)])
            continue
        order = sorted(cabled, key=lambda p: (int(leaf_plane[cabled[p]]), natural_key(p)))
        rows.append(np.array([cabled[p] for p in order]).reshape(per_gpu, ports // per_gpu).T.tolist())
    return np.array(rows, dtype=np.int64).reshape(len(rows), ports // per_gpu, per_gpu)
