"""The GPU-side acceptance plan of a build: perftest pairs that cross every fabric link of the
backend under its routing, and NCCL/RCCL runs per scalable unit and for the cluster.

Input is a build directory read through `fabricgen.build.build_dir` (verified, checked models only):
topology.json (roles, scalable units, each switch's lossless QoS profile), cabling.csv (which NIC
meets which leaf port, every leaf-spine and spine-core cable), ip-plan.csv (the NICs' addresses)
and hosts/<node>/netplan.yaml (the host MTU the build gives each NIC).

Routing model (eBGP, RFC 7938, every switch with multipath): between two different leaves the
routed paths are every equal-cost shortest path of the switch graph. Two leaves with spines in
common: one path through each common spine (2 hops). Leaves of different pods of a 3-tier fabric:
leaf -> any of its spines that reaches a core the other leaf's spines also reach -> that core ->
the other leaf's spine -> the other leaf (4 hops). ECMP hashes each flow (for RoCE v2: each QP,
its UDP source port) onto one of those paths.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from fabricgen.basics.errors import FabricgenError, Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import BuildFiles, CableRow
from fabricgen.testplan.backend import Backend, Nic
from fabricgen.testplan.model import Endpoint, Link, Pair, PairKind, Qos, TestPlan
from fabricgen.testplan.runs import plan_runs

MAX_GPUS_PER_NODE = 64  # what testplan.json holds: Run.gpus_per_node, Endpoint.rail (testplan/model.py)
PERFTEST_BASE_PORT = 18515  # perftest's default TCP port for the connection exchange (perftest README, -p)
QPS_PER_PATH = 4  # see `qps_for`
MAX_QPS = 1024
DEFAULT_HOST_MTU = 1500


class TestplanError(FabricgenError):
    """The build cannot be planned (or a plan or results file cannot be read)."""

    phase = "testplan"


# --- the build, as the planner needs it -----------------------------------------------------------


class _NetplanEthernet(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    mtu: Annotated[int, Field(ge=1280, le=9216)] | None = None  # the intent's host_mtu bounds


class _NetplanNetwork(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    ethernets: dict[str, _NetplanEthernet] = {}


class _Netplan(BaseModel):
    """hosts/<node>/netplan.yaml, only the MTU of each interface."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    network: _NetplanNetwork


def read_backend(build: BuildFiles) -> Backend:
    """The backend of a verified build; TestplanError when it has no backend GPU NICs."""
    topology = build.topology()
    graph = topology.graph
    design = str(graph.backend.get("design", "rail-optimized"))
    tiers = graph.backend.get("tiers", 2)
    assert isinstance(tiers, int), "build_dir checks graph.backend.tiers: 1, 2 or 3"
    gpus, nodes = graph.backend.get("gpus"), graph.backend.get("nodes")  # whole numbers when present (build_dir checks)
    gpus_per_node = gpus // nodes if isinstance(gpus, int) and isinstance(nodes, int) else 8
    if gpus_per_node > MAX_GPUS_PER_NODE:
        raise TestplanError(
            Problem(
                f"{gpus_per_node} GPUs per node; a test plan runs at most {MAX_GPUS_PER_NODE} ranks per node",
                hint="plan a build of nodes with fewer GPUs",
                field=("graph", "backend", "gpus"),
                file=str(build.root / "topology.json"),
            )
        )
    switches = {n.id: n for n in topology.nodes if n.network == "backend" and n.role in ("leaf", "spine", "core")}
    gpu_nodes = {n.id for n in topology.nodes if n.role == "gpu-node"}
    backend = Backend(
        name=graph.name,
        design=design,
        tiers=tiers,
        gpus_per_node=gpus_per_node,
        gpu_vendor=_gpu_vendor({str(n.model) for n in topology.nodes if n.role == "gpu-node"}),
        role={name: str(n.role) for name, n in switches.items()},
        scalable_unit={name: n.scalable_unit for name, n in switches.items() if n.scalable_unit is not None},
    )
    leaves = [n for n in switches.values() if n.role == "leaf"]
    backend.qos = next((n.qos for n in leaves if isinstance(n.qos, dict)), None)
    addresses = {(row.device, row.interface): row.address.split("/")[0] for row in build.ip_plan() if row.network == "backend" and row.kind == "nic"}
    rank = {"leaf": 0, "spine": 1, "core": 2}
    host_rows: list[tuple[str, CableRow]] = []
    for row in build.cabling():
        if row.network != "backend":
            continue
        if row.kind == "fabric" and row.a_device in switches and row.b_device in switches:
            lower, upper = sorted((row.a_device, row.b_device), key=lambda d: rank[backend.role[d]])
            backend.up[lower].add(upper)
            backend.down[upper].add(lower)
            backend.cables[lower, upper].append(row.cable_id)
            if backend.role[lower] == "leaf":
                backend.uplink_gbps[lower] += _speed(row.speed)
            backend.links.append(Link(cable=row.cable_id, a_device=row.a_device, a_port=row.a_port, b_device=row.b_device, b_port=row.b_port))
        elif row.kind == "peer" and row.a_device in switches and row.b_device in switches:
            backend.peer_cables[frozenset((row.a_device, row.b_device))].append(row.cable_id)
            for leaf in (row.a_device, row.b_device):
                backend.uplink_gbps[leaf] += _speed(row.speed)
            backend.links.append(Link(cable=row.cable_id, a_device=row.a_device, a_port=row.a_port, b_device=row.b_device, b_port=row.b_port))
        elif row.kind == "host":
            node = row.a_device if row.a_device in gpu_nodes else row.b_device if row.b_device in gpu_nodes else None
            if node is not None:
                host_rows.append((node, row))
    by_node: dict[str, list[CableRow]] = defaultdict(list)
    for node, row in host_rows:
        by_node[node].append(row)
    for node in sorted(by_node, key=natural_key):
        rows = by_node[node]
        ends = sorted(
            (
                (row.a_port, row.b_device, row.b_port, row, row.a_rack, row.a_ru)
                if row.a_device == node
                else (row.b_port, row.a_device, row.a_port, row, row.b_rack, row.b_ru)
                for row in rows
            ),
            key=lambda e: natural_key(e[0]),
        )
        if len(ends) > MAX_GPUS_PER_NODE:
            raise TestplanError(
                Problem(
                    f"{node} has {len(ends)} backend NICs; a test plan numbers at most {MAX_GPUS_PER_NODE} rails per node",
                    hint="plan a build of nodes with fewer backend NICs",
                    file=str(build.root / "cabling.csv"),
                )
            )
        nics = []
        for rail, (port, leaf, leaf_port, row, rack, ru) in enumerate(ends, start=1):
            nic = Nic(node, port, rail, leaf, leaf_port, row.cable_id, _speed(row.speed), addresses.get((node, port)), rack, ru)
            nics.append(nic)
            backend.nics_of_leaf[leaf].append(nic)
        backend.nics_of_node[node] = nics
    if not backend.nics_of_node:
        raise TestplanError(
            Problem(
                "the build has no GPU nodes cabled to a backend fabric: there is nothing for perftest or NCCL to measure",
                hint="plan a build whose intent has a backend (GPU) fabric",
                file=str(build.root / "cabling.csv"),
            )
        )
    return backend


def _gpu_vendor(models: set[str]) -> str | None:
    """The GPU vendor the catalog gives the build's GPU node models (`gpu_vendor`), when they
    agree; None when one is not in the built-in catalog (a build with a catalog of its own) or
    names none."""
    known = _catalog_gpu_vendors()
    vendors = {known.get(m) for m in models}
    return vendors.pop() if len(vendors) == 1 else None


@cache
def _catalog_gpu_vendors() -> dict[str, str | None]:
    """GPU node model -> its gpu_vendor, from the built-in catalog (loaded once per process)."""
    from fabricgen.catalog import load_catalog

    return {name: node.gpu_vendor for name, node in load_catalog().nodes.items()}


def _speed(text: str) -> int:
    """'400G' -> 400 (cabling.csv's speed column)."""
    digits = text.rstrip("Gg")
    return int(digits) if digits.isdigit() else 0


def host_mtu(build: BuildFiles, nics: list[Nic]) -> int:
    """The smallest MTU the build's netplan.yaml gives these NICs (DEFAULT_HOST_MTU where none)."""
    found = []
    for node in sorted({nic.node for nic in nics}):
        path = f"hosts/{node}/netplan.yaml"
        if not build.has(path):
            continue
        ethernets = build.parse(path, _Netplan).network.ethernets
        found += [ethernets[nic.port].mtu for nic in nics if nic.node == node and nic.port in ethernets and ethernets[nic.port].mtu]
    return min(found) if found else DEFAULT_HOST_MTU


def roce_mtu(mtu: int) -> int:
    """The RoCE path MTU a netdev MTU allows: the largest IB MTU after the headers. Linux
    include/rdma/ib_addr.h iboe_get_mtu(): MTU - (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28
    + ICRC 4) = MTU - 96, rounded down to 256/512/1024/2048/4096 (so 4096 needs a host MTU >= 4192)."""
    payload = mtu - 96
    return next((m for m in (4096, 2048, 1024, 512, 256) if payload >= m), 256)


# --- routing ---------------------------------------------------------------------------------------


def routed_links(backend: Backend, a: str, b: str) -> tuple[set[str], int]:
    """Cable ids of every fabric link on an equal-cost path between leaves `a` and `b`, and the
    number of such paths (see the module docstring)."""
    up, cables = backend.up, backend.cables
    if a == b:
        return set(), 0
    peers = backend.peer_cables.get(frozenset((a, b)))
    if peers:  # a spine-free pair: one hop over any of its peer links
        return set(peers), len(peers)
    common = up[a] & up[b]
    links: set[str] = set()
    if common:
        for spine in common:
            links.update(cables[a, spine])
            links.update(cables[b, spine])
        return links, sum(len(cables[a, s]) * len(cables[b, s]) for s in common)
    cores_b = {core for spine in up[b] for core in up[spine]}
    cores = {core for spine in up[a] for core in up[spine] & cores_b}
    paths_a = paths_b = 0
    for leaf in (a, b):
        count = 0
        for spine in up[leaf]:
            reached = up[spine] & cores
            if reached:
                links.update(cables[leaf, spine])
                for core in reached:
                    links.update(cables[spine, core])
                count += len(cables[leaf, spine]) * sum(len(cables[spine, c]) for c in reached)
        paths_a, paths_b = (count, paths_b) if leaf == a else (paths_a, count)
    return links, paths_a * paths_b


def qps_for(backend: Backend, a: str, b: str) -> int:
    """QPs for a pair between leaves `a` and `b`. ECMP hashes each QP (its UDP source port) onto
    ONE path, so a single QP measures a single path: the pair needs at least as many QPs as its
    leaf has uplinks for every uplink to be able to carry one. The hash is not a round robin: with
    k QPs on k uplinks about 1/e of the uplinks get none, so the plan runs QPS_PER_PATH (4) QPs
    per uplink: each uplink then carries one with probability 1 - e^-4 (98 %)."""
    uplinks = max(sum(len(backend.cables[leaf, s]) for s in backend.up[leaf]) for leaf in (a, b))
    uplinks = max(uplinks, len(backend.peer_cables.get(frozenset((a, b)), ())))  # a spine-free pair: its peer links
    return max(1, min(MAX_QPS, QPS_PER_PATH * uplinks))


# --- the plan --------------------------------------------------------------------------------------


def plan_pairs(backend: Backend) -> tuple[list[tuple[str, str]], set[str]]:
    """Leaf pairs whose routed paths together cross every fabric link that any leaf-to-leaf path
    can cross, and the links none can (a spine with a single leaf). Linear in leaves: leaves with
    the same spines are paired in turn (each pair covers both leaves' uplinks); links still
    uncovered (a leaf alone with its spines, spine-core links of a 3-tier fabric) each get a
    pair chosen through the spine's (or core's) other members."""
    leaves = sorted((leaf for leaf in backend.nics_of_leaf if backend.up[leaf]), key=natural_key)
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for leaf in leaves:
        groups[frozenset(backend.up[leaf])].append(leaf)
    pairs: list[tuple[str, str]] = []
    covered: set[str] = set()

    def add(a: str, b: str) -> None:
        pairs.append((a, b))
        covered.update(routed_links(backend, a, b)[0])

    for members in groups.values():
        for i in range(0, len(members) - 1, 2):
            add(members[i], members[i + 1])
        if len(members) % 2 and len(members) > 1:
            add(members[-1], members[0])
    uncovered: set[str] = set()
    for (lower, upper), ids in sorted(backend.cables.items(), key=lambda item: natural_key(item[0])):
        if all(cable in covered for cable in ids):
            continue
        partner = _partner(backend, lower, upper)
        if partner is None:
            uncovered.update(c for c in ids if c not in covered)
            continue
        add(*partner)
        uncovered.update(c for c in ids if c not in covered)
    return pairs, uncovered - covered


def _partner(backend: Backend, lower: str, upper: str) -> tuple[str, str] | None:
    """A leaf pair one of whose routed paths crosses the link lower-upper, or None."""
    has_nics = backend.nics_of_leaf
    if backend.role[lower] == "leaf":  # leaf-spine: another leaf of that spine
        other = next((leaf for leaf in sorted(backend.down[upper], key=natural_key) if leaf != lower and leaf in has_nics), None)
        return (lower, other) if other else None
    # spine-core: a leaf below the spine, and a leaf of another pod below the core
    a = next((leaf for leaf in sorted(backend.down[lower], key=natural_key) if leaf in has_nics), None)
    if a is None:
        return None
    for spine in sorted(backend.down[upper], key=natural_key):
        if spine in backend.up[a]:
            continue
        b = next((leaf for leaf in sorted(backend.down[spine], key=natural_key) if leaf in has_nics and not backend.up[leaf] & backend.up[a]), None)
        if b is not None:
            return a, b
    return None


def _peer_pairs(backend: Backend) -> list[tuple[str, str]]:
    """No spines: a spine-free pair's two leaves, once, across their peer links (the NIC rounds
    test each leaf on its own)."""
    joined = [tuple(sorted(pair, key=natural_key)) for pair in backend.peer_cables]
    return [(a, b) for a, b in sorted(joined, key=lambda pair: natural_key(pair[0])) if a in backend.nics_of_leaf and b in backend.nics_of_leaf]


def _endpoints(backend: Backend, leaf_pairs: list[tuple[str, str]]) -> list[tuple[Nic, Nic]]:
    """A server NIC on the first leaf and a client NIC of another node on the second; each time a
    leaf serves again, the next of its NICs (so no node carries every pair)."""
    turn: dict[str, int] = defaultdict(int)
    chosen = []
    for a, b in leaf_pairs:
        nics_a, nics_b = backend.nics_of_leaf[a], backend.nics_of_leaf[b]
        server = nics_a[turn[a] % len(nics_a)]
        turn[a] += 1
        start = turn[b]
        client = next((nics_b[(start + i) % len(nics_b)] for i in range(len(nics_b)) if nics_b[(start + i) % len(nics_b)].node != server.node), None)
        if client is None:
            continue
        turn[b] = nics_b.index(client) + 1
        chosen.append((server, client))
    return chosen


def nic_pairs(backend: Backend) -> tuple[list[tuple[Nic, Nic]], list[tuple[Nic, Nic]], list[Nic]]:
    """Every GPU NIC with partners of other nodes, for the NIC rounds: (pairs behind one leaf,
    pairs across leaves, NICs with no partner at all). Linear in NICs.

    Behind one leaf a pair tests both NICs, both host cables and both leaf ports without the
    fabric: no uplink, so no ECMP collision makes an innocent pair short. The leaf's NICs, sorted
    by node then rail, are paired i with i + h (h = half of them): a node's NICs are consecutive,
    so while no node owns more than half of the leaf's NICs the two ends are on different nodes
    (and on the same rail when every node has as many NICs there). Then i with the next one's
    partner (i + 1 mod h) + h, a second partner, where that too joins two nodes. An odd count leaves the last
    NIC over: it is paired with the first (another node) in rounds of its own. A node with more
    than half (a top-of-rack leaf of one node, a leaf with one NIC) keeps its excess for pairs
    across leaves, through the fabric."""
    within: list[tuple[Nic, Nic]] = []
    extra: list[tuple[Nic, Nic]] = []
    stranded: list[Nic] = []
    for leaf in sorted(backend.nics_of_leaf, key=natural_key):
        nics = sorted(backend.nics_of_leaf[leaf], key=lambda n: (natural_key(n.node), n.rail))
        count: dict[str, int] = defaultdict(int)
        for nic in nics:
            count[nic.node] += 1
        biggest = max(count, key=lambda node: count[node])
        excess = count[biggest] - (len(nics) - count[biggest])
        if excess > 0:  # the biggest node's last NICs: no partner of another node here
            last = [i for i, nic in enumerate(nics) if nic.node == biggest][-excess:]
            stranded += [nics[i] for i in last]
            dropped = set(last)
            nics = [nic for i, nic in enumerate(nics) if i not in dropped]
        half = len(nics) // 2
        within += [(nics[i], nics[i + half]) for i in range(half)]
        # a second partner for each NIC, so that `check` can tell a bad NIC (short with both its
        # partners) from a bad partner: the second half shifted by one
        second = [(nics[i], nics[(i + 1) % half + half]) for i in range(half)] if half > 1 else []
        if all(a.node != b.node for a, b in second):
            within += second
        if len(nics) % 2:
            extra.append((nics[-1], nics[0]))
    across: list[tuple[Nic, Nic]] = []
    lonely: list[Nic] = []
    stranded.sort(key=lambda n: (natural_key(n.node), n.rail))
    half = len(stranded) // 2
    for i in range(half):
        a, b = stranded[i], stranded[i + half]
        if a.node != b.node and _reachable(backend, a.leaf, b.leaf):
            across.append((a, b))
        else:
            lonely += [a, b]
    if len(stranded) % 2:
        lonely.append(stranded[-1])
    # the rest: a partner of another node on a leaf it can reach (the next leaves in order first)
    leaves = sorted(backend.nics_of_leaf, key=natural_key)
    index = {leaf: i for i, leaf in enumerate(leaves)}
    unpaired = []
    turn: dict[str, int] = defaultdict(int)  # each leaf lends its NICs in turn, so no NIC partners them all
    for nic in lonely:
        partner = None
        for step in range(1, len(leaves)):
            leaf = leaves[(index[nic.leaf] + step) % len(leaves)]
            if not _reachable(backend, nic.leaf, leaf):
                continue
            others = [other for other in backend.nics_of_leaf[leaf] if other.node != nic.node]
            if others:
                partner = others[turn[leaf] % len(others)]
                turn[leaf] += 1
                break
        if partner is None:
            unpaired.append(nic)
        else:
            across.append((nic, partner))
    return within + extra, across, sorted(unpaired, key=lambda n: (natural_key(n.node), n.rail))


def _reachable(backend: Backend, a: str, b: str) -> bool:
    """Leaves `a` and `b` have a routed path between them."""
    return a != b and routed_links(backend, a, b)[1] > 0


class _Rounds:
    """First-fit rounds: a pair goes to the first round where nothing it holds (NICs, and for
    pairs through the fabric its links) is held by another pair. A pair's reverse holds what it
    holds, so it lands in a later round."""

    def __init__(self) -> None:
        self.held: list[set[str]] = []

    def place(self, holds: set[str], after: int = 0) -> int:
        """The 0-based round the pair runs in, from round `after` on."""
        found = next((i for i in range(after, len(self.held)) if not self.held[i] & holds), None)
        if found is None:
            found = max(after, len(self.held))
            while len(self.held) <= found:
                self.held.append(set())
        self.held[found] |= holds
        return found


def build_plan(build: BuildFiles, efficiency: float, alltoall_efficiency: float | None = None) -> TestPlan:
    """The plan (see the module docstring) of a verified build: fabric rounds first (pairs of
    leaves whose paths cross every fabric link, each run both ways), then the NIC rounds (every
    GPU NIC in one pair per round, each pair run both ways)."""
    backend = read_backend(build)
    rail_only = not backend.up
    leaf_pairs, uncovered = (_peer_pairs(backend), set()) if rail_only else plan_pairs(backend)
    fabric = _endpoints(backend, leaf_pairs)
    within, across, unpaired = nic_pairs(backend)
    # the netplan.yaml of the fabric pairs' nodes and of the first node: one intent gives every node
    # its host MTU, and reading every node's file would cost more than the rest of the plan
    first_node = min(backend.nics_of_node, key=natural_key)
    mtu = host_mtu(build, [nic for pair in fabric for nic in pair] + backend.nics_of_node[first_node])
    qos = _qos(backend.qos, mtu)
    pairs: list[Pair] = []
    numbers: dict[str, int] = defaultdict(int)

    def add(kind: PairKind, server: Nic, client: Nic, round_: int, links: set[str], paths: int) -> None:
        speed = min(server.speed_gbps, client.speed_gbps)
        numbers[kind] += 1
        pairs.append(
            Pair(
                id=f"{'pair' if kind == 'fabric' else 'nic'}{numbers[kind]:04d}",
                kind=kind,
                round=round_ + 1,
                server=_endpoint(server),
                client=_endpoint(client),
                tcp_port=PERFTEST_BASE_PORT + server.rail - 1,  # a NIC serves one pair per round: its rail's port is free on its node
                qps=qps_for(backend, server.leaf, client.leaf) if links else 1,
                paths=paths,
                links=sorted(links, key=natural_key),
                expected_gbps=float(speed),
                threshold_gbps=round(speed * efficiency, 2),
            )
        )

    # perftest's ib_write_bw moves data one way, client to server: each pair runs again with the
    # roles swapped, so every cable and link it crosses is crossed in both directions
    rounds = _Rounds()
    routed = [(server, client, *routed_links(backend, server.leaf, client.leaf)) for server, client in fabric]
    for swapped in (False, True):
        for server, client, links, paths in routed:
            a, b = (client, server) if swapped else (server, client)
            add("fabric", a, b, rounds.place(links | {a.cable, b.cable}), links, paths)
    first = len(rounds.held)
    nic_rounds = _Rounds()
    placed = []
    for server, client in [*within, *across]:
        links, paths = routed_links(backend, server.leaf, client.leaf) if server.leaf != client.leaf else (set(), 0)
        forward = nic_rounds.place({server.cable, client.cable})
        backward = nic_rounds.place({server.cable, client.cable}, forward + 1)
        placed.append((server, client, forward, backward, links, paths))
    for server, client, forward, _, links, paths in placed:
        add("nic", server, client, first + forward, links, paths)
    for server, client, _, backward, links, paths in placed:
        add("nic", client, server, first + backward, links, paths)
    notes = []
    if rail_only and backend.peer_cables:
        notes.append(
            "no spines (spine.count: 0), a pair of leaves joined by peer links: the NIC rounds test each leaf on its own, and one pair "
            "between NICs on the two leaves crosses the peer links (4 QPs per link), both ways"
        )
    elif rail_only:
        notes.append(
            "no spines (rail-only, or spine.count: 0): every pair stays behind one leaf, and cross-rail traffic "
            "between leaves goes through each node's scale-up domain, not the network"
        )
    if across:
        notes.append(
            f"{len(across):,} NIC pairs cross the fabric (a leaf where one node holds more than half the NICs has no partner of another node for "
            "the rest): ECMP may put two of them on one uplink, so read a short one beside the fabric pairs of its leaves"
        )
    if unpaired:
        names = ", ".join(f"{n.node} {n.port}" for n in unpaired[:10]) + (f" and {len(unpaired) - 10} more" if len(unpaired) > 10 else "")
        notes.append(f"{len(unpaired):,} NICs have no partner of another node they can reach and are not tested one by one: {names}")
    if not qos.lossless:
        notes.append("the backend runs no lossless class (QoS off): traffic class 0, no PFC priority")
    if uncovered:
        notes.append(f"{len(uncovered)} fabric links lie on no leaf-to-leaf path (a spine or core with a single member): no GPU pair can cross them")
    runs = plan_runs(backend, qos, efficiency, alltoall_efficiency)
    return TestPlan(
        fabric=backend.name,
        gpu_vendor=backend.gpu_vendor,  # type: ignore[arg-type]  # the catalog's Literal
        design=backend.design,
        tiers=backend.tiers,
        spines=sum(1 for r in backend.role.values() if r == "spine"),
        qos=qos,
        efficiency=efficiency,
        alltoall_efficiency=runs.alltoall_efficiency,
        pairs=pairs,
        uncovered=sorted(uncovered, key=natural_key),
        runs=runs.runs,
        links=backend.links,
        notes=notes + runs.notes,
    )


def _endpoint(nic: Nic) -> Endpoint:
    return Endpoint(
        node=nic.node,
        port=nic.port,
        address=nic.address or "",
        rail=nic.rail,
        leaf=nic.leaf,
        leaf_port=nic.leaf_port,
        cable=nic.cable,
        speed_gbps=nic.speed_gbps,
        rack=nic.rack,
        ru=nic.ru,
    )


ECT0 = 0b10  # ECN-capable transport (0), RFC 3168 section 5


def _qos(profile: dict | None, mtu: int) -> Qos:
    """The leaves' lossless profile as the hosts must mark: RDMA in the first RoCE DSCP (as the
    build's nic-qos.sh marks it), TOS byte = DSCP << 2 | ECT(0) (the DSCP field is the TOS byte's
    upper six bits, RFC 2474 section 3; the low two are ECN, RFC 3168 section 5, where 0b10 is ECT(0)).
    ECN-capable because the leaves' WRED marks only ECN-capable packets and drops the others above
    its threshold, which would turn DCQCN's signal into loss; the ConnectX nic-qos.sh the build
    writes sets the same TOS (DSCP x 4 + 2) as the NIC's default."""
    mtu_fit = roce_mtu(mtu)
    if not profile or not profile.get("roce_dscp"):
        return Qos(lossless=False, roce_dscp=None, traffic_class=0, lossless_priority=None, cnp_dscp=None, host_mtu=mtu, roce_mtu=mtu_fit)  # type: ignore[arg-type]
    dscp = int(profile["roce_dscp"][0])
    cnp = profile.get("cnp_dscp") or [None]
    return Qos(
        lossless=True,
        roce_dscp=dscp,
        traffic_class=dscp << 2 | ECT0,
        lossless_priority=int(profile["lossless_priority"]),
        cnp_dscp=cnp[0],
        host_mtu=mtu,
        roce_mtu=mtu_fit,  # type: ignore[arg-type]
    )


def open_build(root: Path) -> BuildFiles:
    """A build directory, verified against its manifest (TestplanError naming what is wrong)."""
    return BuildFiles(root, TestplanError, keep=lambda path: path in ("topology.json", "cabling.csv", "ip-plan.csv"))
