"""Capacity of a built fabric, and what single failures leave of it.

Traffic between leaves follows the routing: up to a spine, down to a leaf (BGP in a Clos never
turns back up at a leaf). So capacities are max-flows over the *valley-free* graph: each leaf
appears twice, as a sender (edges up to its spines) and as a receiver (edges down from them).
Group capacities (rail to rail, scalable unit to unit, one half of the leaves to the other) are
max-flows computed by networkx (`networkx.maximum_flow_value`, preflow-push). Between two single
leaves the same max-flow has a closed form, sum over spines of min(up, down), evaluated for every
pair at once with numpy; a test checks it against networkx.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import pairwise

import networkx as nx
import numpy as np

from fabricgen.analysis.fabric import Fabric

ROWS_PER_CHUNK = 256  # leaf rows per block of the pairwise minimum: bounds memory at large leaf counts


def pair_capacity(capacity: np.ndarray) -> np.ndarray:
    """[leaf, leaf] Gbps one leaf can send another: sum over spines of min(up, down)."""
    leaves = capacity.shape[0]
    result = np.empty((leaves, leaves))
    for start in range(0, leaves, ROWS_PER_CHUNK):
        block = capacity[start : start + ROWS_PER_CHUNK, None, :]
        result[start : start + ROWS_PER_CHUNK] = np.minimum(block, capacity[None, :, :]).sum(axis=2)
    np.fill_diagonal(result, np.inf)  # a leaf to itself crosses no fabric link
    return result


def ecmp_width(links: np.ndarray, per_spine: bool = False) -> np.ndarray:
    """[leaf, leaf] equal-cost next hops from one leaf towards another: its uplinks to every spine
    that still reaches the destination (each parallel link is its own BGP next hop), or with
    per_spine the number of such spines."""
    reaches = (links > 0).astype(np.int64)
    width = (reaches if per_spine else links) @ reaches.T
    np.fill_diagonal(width, np.iinfo(np.int64).max)
    return width


def group_flow(fabric: Fabric, senders: np.ndarray, receivers: np.ndarray, capacity: np.ndarray | None = None) -> float:
    """Max-flow in Gbps from the leaves `senders` (boolean mask) to `receivers`, valley-free."""
    capacity = fabric.capacity_gbps if capacity is None else capacity
    graph = nx.DiGraph()
    for leaf in np.flatnonzero(senders):
        graph.add_edge("source", ("up", leaf))  # no capacity attribute: unbounded
        for spine in np.flatnonzero(capacity[leaf]):
            graph.add_edge(("up", leaf), ("spine", spine), capacity=capacity[leaf, spine])
    for leaf in np.flatnonzero(receivers):
        graph.add_edge(("down", leaf), "sink")
        for spine in np.flatnonzero(capacity[leaf]):
            graph.add_edge(("spine", spine), ("down", leaf), capacity=capacity[leaf, spine])
    if "source" not in graph or "sink" not in graph:
        return 0.0
    return float(nx.maximum_flow_value(graph, "source", "sink"))


@dataclass(frozen=True)
class GroupFlow:
    name: str  # "rail 1 -> rail 2"
    gbps: float
    demand_gbps: float  # what the senders' servers can offer (their leaves' cabled server ports)


@dataclass(frozen=True)
class Capacity:
    leaf_uplink_gbps: float  # every leaf's uplinks together (the leaf tier's capacity)
    spine_gbps: float  # every spine's leaf-facing ports together
    bisection_gbps: float  # max-flow from the first half of the leaves (by unit) to the second
    oversubscription: dict[str, float]  # leaf -> server-facing / spine-facing capacity
    min_pair_gbps: float
    min_pair: tuple[str, str]
    min_ecmp_width: int
    min_spine_width: int
    groups: list[GroupFlow]


def capacity(fabric: Fabric) -> Capacity:
    pairs = pair_capacity(fabric.capacity_gbps)
    widths = ecmp_width(fabric.links)
    a, b = np.unravel_index(np.argmin(pairs), pairs.shape)
    order = np.lexsort((np.arange(len(fabric.leaves)), fabric.leaf_unit))
    first_half = np.zeros(len(fabric.leaves), dtype=bool)
    first_half[order[: len(order) // 2]] = True
    uplinks = fabric.uplink_gbps
    return Capacity(
        leaf_uplink_gbps=float(uplinks.sum()),
        spine_gbps=float(fabric.capacity_gbps.sum()),
        bisection_gbps=group_flow(fabric, first_half, ~first_half),
        oversubscription={leaf: float(down / up) if up else float("inf") for leaf, down, up in zip(fabric.leaves, fabric.downlink_gbps, uplinks, strict=True)},
        min_pair_gbps=float(pairs[a, b]),
        min_pair=(fabric.leaves[a], fabric.leaves[b]),
        min_ecmp_width=int(widths.min()) if len(fabric.leaves) > 1 else 0,
        min_spine_width=int(ecmp_width(fabric.links, per_spine=True).min()) if len(fabric.leaves) > 1 else 0,
        groups=_groups(fabric),
    )


def _groups(fabric: Fabric) -> list[GroupFlow]:
    """Max-flow between neighbouring rails and neighbouring scalable units (pods come with 3 tiers)."""
    found = []
    for label, values in (("rail", fabric.leaf_rail), ("unit", fabric.leaf_unit)):
        distinct = sorted(set(values.tolist()) - {0})
        for first, second in pairwise(distinct):
            senders, receivers = values == first, values == second
            found.append(GroupFlow(f"{label} {first} -> {label} {second}", group_flow(fabric, senders, receivers), float(fabric.downlink_gbps[senders].sum())))
    return found


@dataclass(frozen=True)
class FailureImpact:
    kind: str  # "spine", "leaf", "link"
    name: str  # the device, or "leaf -- spine (1 of 8 links)"
    min_pair_gbps: float  # the least capacity left between two surviving leaves
    worst_pair: tuple[str, str]
    min_ecmp_width: int  # the least ECMP width (links) left between two surviving leaves
    min_spine_width: int  # the least number of spines still joining two surviving leaves
    capacity_left: float  # min_pair_gbps / the intact fabric's
    # what loses its way into the fabric: a leaf's GPU NIC ports go with it, whatever the spines
    stranded_nics: int = 0  # GPU NIC ports whose leaf (or link to it) is down
    stranded_gpus: int = 0  # GPUs left with no backend port (a GPU with a port on another plane keeps that)
    stranded_nodes: int = 0  # GPU nodes with a stranded port
    # what a job over every GPU feels (JobBound): inf when it loses GPUs and stops, else its
    # cross-rail all-to-all's time under ideal balancing, failed / intact (>= 1)
    job_slowdown: float = 1.0

    @property
    def stops_a_job(self) -> bool:
        return self.stranded_gpus > 0


def single_failures(fabric: Fabric, worst: int | None = None) -> list[FailureImpact]:
    """Every single spine, leaf and leaf-spine link failure, and one for a GPU NIC's link to its
    leaf (all alike), worst first: least capacity left, then least ECMP width, then most GPUs and
    NICs stranded. A leaf failure is scored over the surviving leaves, and says what it strands
    (its GPU NICs, their GPUs and nodes).

    A link or leaf failure only touches the pairs of one leaf, so those are recomputed from the
    intact pair matrices in O(leaves x spines) each; only a spine failure recomputes every pair."""
    if len(fabric.leaves) < 2:
        return []
    pairs, widths = pair_capacity(fabric.capacity_gbps), ecmp_width(fabric.links)
    spine_widths = ecmp_width(fabric.links, per_spine=True)
    intact, intact_width, intact_spines = float(pairs.min()), int(widths.min()), int(spine_widths.min())
    intact_pair = _min_pair(fabric, pairs)
    bound = job_bound(fabric)
    impacts = []
    for spine, name in enumerate(fabric.spines):
        capacity, links = fabric.capacity_gbps.copy(), fabric.links.copy()
        capacity[:, spine], links[:, spine] = 0, 0
        scored = _scored(fabric, "spine", name, intact, pair_capacity(capacity), ecmp_width(links), ecmp_width(links, per_spine=True))
        impacts.append(replace(scored, job_slowdown=bound.spine(fabric.capacity_gbps[:, spine])))
    stranded = stranded_by_leaf(fabric)
    for leaf, name in enumerate(fabric.leaves):
        alive = np.arange(len(fabric.leaves)) != leaf
        scored = _scored(fabric, "leaf", name, intact, pairs[np.ix_(alive, alive)], widths[np.ix_(alive, alive)], spine_widths[np.ix_(alive, alive)], alive)
        nics, gpus = int(stranded[0][leaf]), int(stranded[1][leaf])
        feels = math.inf if gpus else (bound.fewer_ports if nics else 1.0)
        impacts.append(replace(scored, stranded_nics=nics, stranded_gpus=gpus, stranded_nodes=int(stranded[2][leaf]), job_slowdown=feels))
    if fabric.nic_leaf.size:
        # every GPU NIC port hangs off its leaf by one link: one row stands for them all
        one_port = fabric.nic_leaf.shape[2] == 1
        name = f"any one of the {fabric.nic_leaf.size:,} GPU NIC links to their leaves"
        feels = math.inf if one_port else bound.fewer_ports
        impacts.append(FailureImpact("nic-link", name, intact, intact_pair, intact_width, intact_spines, 1.0, 1, int(one_port), 1, feels))
    for leaf, spine in zip(*np.nonzero(fabric.links), strict=True):
        row = fabric.capacity_gbps[leaf].copy()
        row_links = fabric.links[leaf].copy()
        row[spine] -= row[spine] / row_links[spine]
        row_links[spine] -= 1
        others = np.arange(len(fabric.leaves)) != leaf
        row_pairs = np.minimum(row[None, :], fabric.capacity_gbps[others]).sum(axis=1)
        row_widths = (fabric.links[others] > 0).astype(np.int64) @ row_links
        row_spines = (fabric.links[others] > 0).astype(np.int64) @ (row_links > 0)
        # the other pairs are unchanged and this leaf's can only shrink, so the new minimum is the
        # smaller of the intact one and this leaf's new row
        low = int(np.argmin(row_pairs))
        partner = fabric.leaves[np.flatnonzero(others)[low]]
        worst_pair = (fabric.leaves[leaf], partner) if row_pairs[low] <= intact else intact_pair
        label = f"{fabric.leaves[leaf]} -- {fabric.spines[spine]} (1 of {fabric.links[leaf, spine]} links)"
        least = min(intact, float(row_pairs[low]))
        impacts.append(
            FailureImpact(
                "link",
                label,
                least,
                worst_pair,
                min(intact_width, int(row_widths.min())),
                min(intact_spines, int(row_spines.min())),
                least / intact if intact else 0.0,
                job_slowdown=bound.link(leaf, spine),
            )
        )
    impacts.sort(key=lambda i: (-i.stranded_gpus, -i.job_slowdown, -i.stranded_nics, *_capacity_key(i)))
    return impacts[:worst] if worst else impacts


def _capacity_key(impact: FailureImpact) -> tuple:
    return (impact.min_pair_gbps, impact.min_ecmp_width, -impact.stranded_gpus, -impact.stranded_nics, impact.kind, impact.name)


def worst_for_capacity(failures: list[FailureImpact]) -> FailureImpact | None:
    """The failure that leaves the least leaf-to-leaf capacity (then ECMP width): what
    `--max-failure-cut` reads; None without failures."""
    return min(failures, key=_capacity_key, default=None)


def leaf_demand_gbps(fabric: Fabric) -> np.ndarray:
    """[leaf] the Gbps its GPU NIC ports send to other leaves in an all-to-all over every GPU, every
    port at line rate: a port sends evenly to the ports of its plane on every other node, and those
    on its own leaf never cross a fabric link. One pass over the NIC ports."""
    leaves = len(fabric.leaves)
    nic_leaf = fabric.nic_leaf
    if not nic_leaf.size or nic_leaf.shape[0] < 2:
        return np.zeros(leaves)
    nodes, rails = nic_leaf.shape[0], nic_leaf.shape[1]
    port_leaf = nic_leaf.ravel()
    node_of_port = np.repeat(np.arange(nodes), rails * nic_leaf.shape[2])
    _, where, per_node_leaf = np.unique(node_of_port * leaves + port_leaf, return_inverse=True, return_counts=True)
    same_leaf_peers = np.bincount(port_leaf, minlength=leaves)[port_leaf] - per_node_leaf[where]  # on its leaf, other nodes
    crossing = 1.0 - same_leaf_peers / ((nodes - 1) * rails)
    return np.bincount(port_leaf, weights=crossing, minlength=leaves) * fabric.nic_gbps


@dataclass(frozen=True)
class JobBound:
    """What a job over every GPU feels of a failure that strands no GPU (a failure that strands
    GPUs stops it: a collective needs every member, NCCL aborts the communicator and the job
    restarts without them). It runs at its slowest member: a GPU left with fewer NIC ports (a
    plane's leaf or port down) sends at planes - 1 of its planes' rate; a spine or link down leaves
    a leaf fewer uplinks for the bytes it sends across the fabric (`leaf_demand_gbps`), and the
    all-to-all takes max(1, demand / uplinks) of its NICs' time at the worst leaf, over the intact
    fabric's. A lower bound: ideal balancing (spraying) over what is left; ECMP adds collisions."""

    demand: list[float]  # [leaf] Gbps it sends to other leaves
    uplinks: list[float]  # [leaf] Gbps of its uplinks
    per_link: np.ndarray  # [leaf, spine] Gbps of one of their links
    intact: float  # max(1, the worst leaf's demand / uplinks), intact
    best: float  # the worst leaf's demand / uplinks
    second: float  # the next worst leaf's
    fewer_ports: float  # planes / (planes - 1): a GPU that lost a port of its NIC

    def spine(self, capacity: np.ndarray) -> float:
        """A spine down: `capacity` is its [leaf] column."""
        if math.isinf(self.intact):  # a leaf with GPU traffic and no uplink: nothing left to lose
            return 1.0
        worst = max((d / (u - c) if u > c else math.inf) if d else 0.0 for d, u, c in zip(self.demand, self.uplinks, capacity.tolist(), strict=True))
        return max(1.0, worst) / self.intact

    def link(self, leaf: int, spine: int) -> float:
        """One of the links between `leaf` and `spine` down."""
        if math.isinf(self.intact):
            return 1.0
        left = self.uplinks[leaf] - float(self.per_link[leaf, spine])
        own = (self.demand[leaf] / left if left > 0 else math.inf) if self.demand[leaf] else 0.0
        need = self.demand[leaf] / self.uplinks[leaf] if self.uplinks[leaf] else 0.0
        others = self.second if need == self.best else self.best
        return max(1.0, own, others) / self.intact


def job_bound(fabric: Fabric) -> JobBound:
    demand = leaf_demand_gbps(fabric)
    uplinks = fabric.uplink_gbps.astype(float)
    need = np.divide(demand, uplinks, out=np.where(demand > 0, np.inf, 0.0), where=uplinks > 0)
    best, second = (sorted(need.tolist(), reverse=True) + [0.0, 0.0])[:2]
    planes = fabric.nic_leaf.shape[2] if fabric.nic_leaf.size else 1
    per_link = np.divide(fabric.capacity_gbps, fabric.links, out=np.zeros(fabric.capacity_gbps.shape), where=fabric.links > 0)
    return JobBound(demand.tolist(), uplinks.tolist(), per_link, max(1.0, best), best, second, planes / (planes - 1) if planes > 1 else 1.0)


def most_feared(failures: list[FailureImpact]) -> FailureImpact | None:
    """The failure a team should fear most: the one that stops a job over the most GPUs, else the
    one that slows it most (the first of `single_failures`' order); None without failures."""
    return failures[0] if failures else None


def stranded_by_leaf(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[leaf] what each leaf's failure strands: its GPU NIC ports, the GPUs with no port on
    another leaf, the GPU nodes with a port on it; one pass over the NIC ports."""
    leaves = len(fabric.leaves)
    nic_leaf = fabric.nic_leaf
    if not nic_leaf.size:
        empty = np.zeros(leaves, dtype=np.int64)
        return empty, empty, empty
    ports = np.bincount(nic_leaf.ravel(), minlength=leaves)
    single_homed = (nic_leaf == nic_leaf[..., :1]).all(axis=2)  # [node, gpu]: every port of the GPU on one leaf
    gpus = np.bincount(nic_leaf[..., 0][single_homed], minlength=leaves)
    node_of_port = np.repeat(np.arange(nic_leaf.shape[0]), nic_leaf.shape[1] * nic_leaf.shape[2])
    node_leaf = np.unique(node_of_port * leaves + nic_leaf.ravel())
    nodes = np.bincount(node_leaf % leaves, minlength=leaves)
    return ports, gpus, nodes


def most_stranding(failures: list[FailureImpact]) -> FailureImpact | None:
    """The failure that strands the most GPUs (then NIC ports), the first listed among equals;
    None when none strands anything."""
    worst = max(failures, key=lambda i: (i.stranded_gpus, i.stranded_nics), default=None)
    return worst if worst is not None and worst.stranded_nics else None


def _min_pair(fabric: Fabric, pairs: np.ndarray, alive: np.ndarray | None = None) -> tuple[str, str]:
    names = [n for n, up in zip(fabric.leaves, alive, strict=True) if up] if alive is not None else list(fabric.leaves)
    a, b = np.unravel_index(np.argmin(pairs), pairs.shape)
    return names[a], names[b]


def _scored(
    fabric: Fabric, kind: str, name: str, intact: float, pairs: np.ndarray, widths: np.ndarray, spines: np.ndarray, alive: np.ndarray | None = None
) -> FailureImpact:
    if pairs.shape[0] < 2:
        return FailureImpact(kind, name, 0.0, ("", ""), 0, 0, 0.0)
    least = float(pairs.min())
    return FailureImpact(kind, name, least, _min_pair(fabric, pairs, alive), int(widths.min()), int(spines.min()), least / intact if intact else 0.0)
