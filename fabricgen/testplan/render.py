"""The plan directory: testplan.json (what `check` reads back), testplan.md, nodes/<node>.sh (each
node's perftest servers and clients), runs/<run-id>.sh with hostfiles/<scope>.txt (NCCL/RCCL),
rank-env.sh (a rank's NCCL_* settings from its own NICs), fabricgen-output.json (a test plan of
this fabric: `fabricgen.build.output.marker`, so a later plan of another fabric never replaces it) and a
manifest.json of them all.

The text of each is a template under templates/testplan/ (rendered through the one environment);
here only what the templates read: which pairs a node runs in which round, the shell names of its
ports, the counts and values."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from fabricgen.basics import version
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import Manifest
from fabricgen.build.output import marker
from fabricgen.render.environment import environment
from fabricgen.render.hosts import shell_names
from fabricgen.reports.manifest import render_manifest
from fabricgen.testplan.model import RESULTS_DIR, Endpoint, Pair, Run, TestPlan
from fabricgen.testplan.runs import TEST_ARGS

PERFTEST_SIZE = 1 << 20  # bytes per message: large enough for line rate
PERFTEST_SECONDS = 10  # -D: each pair runs this long


def render_plan(plan: TestPlan, intent: Manifest) -> dict[str, bytes]:
    """Every file of the plan directory, manifest.json included: the text from the templates
    under templates/testplan/, the data they read from here."""
    env = environment()
    files: dict[str, str] = {"testplan.json": plan.model_dump_json(indent=1) + "\n", "testplan.md": markdown(plan), "rank-env.sh": rank_env(plan)}
    by_node: dict[str, list[tuple[Pair, str]]] = defaultdict(list)
    for pair in plan.pairs:
        by_node[pair.server.node].append((pair, "server"))
        by_node[pair.client.node].append((pair, "client"))
    round_count = max((p.round for p in plan.pairs), default=0)
    for node, roles in by_node.items():
        files[f"nodes/{node}.sh"] = node_script(plan, node, roles, round_count)
    scopes: dict[str, list[str]] = {}
    for run in plan.runs:
        scopes.setdefault(run.scope, run.nodes)
        files[f"runs/{run.id}.sh"] = run_script(plan, run)
    hostfile = env.get_template("testplan/hostfile.txt.j2")
    for scope, nodes in scopes.items():
        per_node = next(r.gpus_per_node for r in plan.runs if r.scope == scope)
        files[f"hostfiles/{scope}.txt"] = hostfile.render(nodes=nodes, slots=per_node)
    data = {path: text.encode() for path, text in files.items()}
    data.update(marker("testplan", plan.fabric))
    data.update({path: text.encode() for path, text in render_manifest(intent.intent.file, intent.intent.sha256, {}, data, {}).items()})
    return data


class PairSide(NamedTuple):
    """One line of a node's round in nodes/<node>.sh: its side of a pair (templates/testplan/node.sh.j2)."""

    pair: str  # the pair's id
    role: str  # server or client
    end: Endpoint  # this node's NIC
    peer: Endpoint  # the other node's
    stem: str  # the shell name of this NIC's port: $<stem>_NETDEV, $<stem>_RDMA
    tcp_port: int
    qps: int


def node_script(plan: TestPlan, node: str, roles: list[tuple[Pair, str]], round_count: int) -> str:
    """nodes/<node>.sh: the node's perftest servers and clients, round by round; in a round the
    servers first, then a wait (SERVER_WAIT) before the clients."""
    ports = sorted({(p.server if role == "server" else p.client).port for p, role in roles}, key=natural_key)
    names = shell_names([_Port(port) for port in ports])  # type: ignore[misc]  # reads only .port; render/hosts.py types it HostNic
    by_round: dict[int, list[tuple[Pair, str]]] = defaultdict(list)
    for pair, role in roles:
        by_round[pair.round].append((pair, role))
    rounds: list[tuple[int, list[PairSide | None]]] = []
    for number in sorted(by_round):
        entries = sorted(by_round[number], key=lambda e: (e[1] != "server", e[0].id))
        steps: list[PairSide | None] = []
        for i, (pair, role) in enumerate(entries):
            if role == "client" and (i == 0 or entries[i - 1][1] == "server"):
                steps.append(None)  # before the first client: the servers must be listening
            end, peer = (pair.server, pair.client) if role == "server" else (pair.client, pair.server)
            steps.append(PairSide(pair.id, role, end, peer, names[end.port], pair.tcp_port, pair.qps))
        rounds.append((number, steps))
    return (
        environment()
        .get_template("testplan/node.sh.j2")
        .render(
            node=node,
            fabric=plan.fabric,
            version=version.RELEASE,
            qos=plan.qos,
            service_level=plan.qos.lossless_priority or 0,
            round_count=round_count,
            results_dir=RESULTS_DIR,
            seconds=PERFTEST_SECONDS,
            message_bytes=PERFTEST_SIZE,
            ports=[(names[port], port) for port in ports],
            rounds=rounds,
        )
    )


class _Port:
    def __init__(self, port: str):
        self.port = port


def rank_env(plan: TestPlan) -> str:
    """Run by mpirun as each rank: the NCCL_* settings from this node's own backend NICs, then the
    test binary. NCCL reads these names, and RCCL reads the same ones (RCCL is NCCL's port to ROCm;
    its environment variable reference lists the NCCL_* names)."""
    ports = list(dict.fromkeys(port for run in plan.runs for port in run.ports))
    names = shell_names([_Port(port) for port in ports])  # type: ignore[misc]  # reads only .port; render/hosts.py types it HostNic
    return (
        environment()
        .get_template("testplan/rank-env.sh.j2")
        .render(
            fabric=plan.fabric,
            version=version.RELEASE,
            qos=plan.qos,
            service_level=plan.qos.lossless_priority or 0,
            ports=[(names[port], port) for port in ports],
        )
    )


def run_script(plan: TestPlan, run: Run) -> str:
    """runs/<run-id>.sh: the run's mpirun command line, its output tee'd to results/<run-id>.txt."""
    return (
        environment()
        .get_template("testplan/run.sh.j2")
        .render(run=run, binary=f"{run.test}_perf", version=version.RELEASE, results_dir=RESULTS_DIR, test_args=TEST_ARGS)
    )


def markdown(plan: TestPlan) -> str:
    """testplan.md: the settings the tests use, the pairs and the runs with their expectations."""
    return (
        environment()
        .get_template("testplan/testplan.md.j2")
        .render(
            plan=plan,
            version=version.RELEASE,
            service_level=plan.qos.lossless_priority or 0,
            round_count=max((p.round for p in plan.pairs), default=0),
            fabric_rounds=sorted({p.round for p in plan.pairs if p.kind == "fabric"}),
            nic_rounds=sorted({p.round for p in plan.pairs if p.kind == "nic"}),
            covered=len({c for p in plan.pairs for c in p.links}),
        )
    )
