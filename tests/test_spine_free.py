"""Spine-free fabrics: switches with no tier above them (rail-only leaves, a top-of-rack pair or a
single switch with `spine.count: 0`). Sizing and refusals, the configs of every NOS for a switch
with no BGP neighbour, cabling, BOM and analyze."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from fabricgen.build import build_dir
from fabricgen.compiler.checks.topology import peer_links_join_the_pair
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.pipeline import build, compile_intent
from fabricgen.testplan import write_plan
from tests import cli_runner
from tests.conftest import REPO, build_refused
from tests.test_export import export as export_build
from tests.test_lab import fabricgen as lab_fabricgen
from tests.test_lab import leftovers, needs_lab

RAIL_ONLY = """
name: rail-only-test
gpus: 64
gpu_node: DGX-H100
backend:
  design: rail-only
  leaf: {{model: {model}, nos: {nos}}}
"""
# a 400G leaf model each NOS names ports of
LEAF_OF = {"nxos": "N9364E-SG2-O", "sonic": "N9364E-SG2-O", "eos": "DCS-7060X6-64PE"}


# --- no BGP where there is no neighbour ----------------------------------------------------------


@pytest.mark.parametrize("nos", ["nxos", "eos", "sonic"])
def test_a_leaf_without_neighbours_gets_no_bgp_and_no_route_maps(write_intent, tmp_path, nos):
    """A rail-only leaf has no spine: no BGP process, no prefix-lists or route-maps for sessions
    that cannot exist; it keeps its host ports, loopback and QoS."""
    out = tmp_path / "out"
    build(write_intent(RAIL_ONLY.format(nos=nos, model=LEAF_OF[nos])), out)
    configs = out / "configs"
    leaf = "be-su01-leaf1"
    if nos == "sonic":
        db = json.loads((configs / leaf / "config_db.json").read_text())
        frr = (configs / leaf / "frr.conf").read_text()
        assert "router bgp" not in frr and "route-map" not in frr and "prefix-list" not in frr
        assert "BGP_NEIGHBOR" not in db and "bgp_asn" not in db["DEVICE_METADATA"]["localhost"]
        assert db["LOOPBACK_INTERFACE"] and db["PORT_QOS_MAP"]
        assert sum(1 for key in db["INTERFACE"] if "|" in key) == 8  # 8 nodes' NIC of this rail, each a /31
    else:
        text = (configs / f"{leaf}.cfg").read_text()
        for absent in ("router bgp", "route-map", "prefix-list", "feature bgp"):
            assert absent not in text, f"{nos}: {absent!r} in {leaf}.cfg"
        assert "interface Loopback0" in text or "interface loopback0" in text
        assert text.count("description BE-") == 8
        # the lab's routing twin of a non-FRR switch carries no BGP either
        twin = (out / "lab" / "frr" / f"{leaf}.conf").read_text()
        assert "router bgp" not in twin and "route-map" not in twin


def cabling(out) -> list[dict[str, str]]:
    with open(out / "cabling.csv", newline="", encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if row["network"] == "backend"]


def bom(out) -> dict[str, int]:
    with open(out / "bom.csv", newline="", encoding="utf-8") as f:
        return {row["pid"]: int(row["quantity"]) for row in csv.DictReader(f)}


# --- sizing: spine.count: 0 ---------------------------------------------------------------------

POD = REPO / "intents" / "inference-pod-4-node.yaml"
LAB16 = REPO / "intents" / "lab-16-gpu.yaml"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The two shipped spine-free intents, built into files once: {name: (Build, out dir)}."""
    out = tmp_path_factory.mktemp("spine-free")
    return {path.stem: build(path, out / path.stem) for path in (POD, LAB16)}


def test_a_top_of_rack_pair_with_no_spines_splits_each_node_over_both_switches(shipped):
    b, out = shipped["inference-pod-4-node"]
    s = b.sizing
    assert (s.spines, s.leaves, s.su_count, s.leaf_uplinks, s.leaf_downlinks, s.spineless, s.peer_links) == (0, 2, 1, 0, 16, True, 2)
    assert Counter(d.role for d in b.fabric.devices.values()) == {Role.GPU_NODE: 4, Role.LEAF: 2}
    assert not any(link.kind is LinkKind.FABRIC for link in b.fabric.links)
    links = {(r["a_device"], r["a_port"]): r["b_device"] for r in cabling(out) if r["kind"] == "host"}
    for node in range(1, 5):  # odd NICs on the first switch, even on the second
        assert {links[(f"gpu{node:04d}", f"nic{nic}")] for nic in (1, 3, 5, 7)} == {"be-su01-leaf1"}
        assert {links[(f"gpu{node:04d}", f"nic{nic}")] for nic in (2, 4, 6, 8)} == {"be-su01-leaf2"}
    assert len(links) == 32 and bom(out)["N9K-C9364D-GX2A"] == 2
    [note] = [n for n in b.compiled.notes if n.startswith("spine-free")]
    assert "top-of-rack pair" in note and "rails 1, 3, 5, 7 on leaf 1" in note and "peer links" in note


def test_the_two_switches_of_a_pair_are_joined_by_routed_peer_links(shipped):
    """Two parallel /31 links between the pair's switches (after the host ports), one eBGP session
    on each, cabled as BE-P cables, with the optics and cables of fabric links in the BOM."""
    b, out = shipped["inference-pod-4-node"]
    peers = [link for link in b.fabric.links if link.kind is LinkKind.PEER]
    assert [(link.id, link.a.device.name, link.b.device.name) for link in peers] == [
        ("BE-P00001", "be-su01-leaf1", "be-su01-leaf2"),
        ("BE-P00002", "be-su01-leaf1", "be-su01-leaf2"),
    ]
    assert all(link.a.cage > 16 and link.b.cage > 16 for link in peers)  # host ports first
    rows = [r for r in cabling(out) if r["kind"] == "peer"]
    assert [r["cable_id"] for r in rows] == ["BE-P00001", "BE-P00002"]
    plan = b.compiled.addresses
    for link in peers:
        a, z = plan.interfaces[link.a], plan.interfaces[link.b]
        assert (a.prefixlen, z.prefixlen, a.peer, z.peer) == (31, 31, z.address, a.address)
    text = (out / "configs" / "be-su01-leaf1.cfg").read_text()
    assert "router bgp" in text and text.count("    remote-as ") == 2 and "maximum-paths 2" in text
    assert text.count("description BE-P0000") == 2
    printed = cli_runner.fabricgen("build", POD, "-o", out.parent / "again")
    assert "no uplinks (top-of-rack: no spine tier), 2 peer links between the pair" in " ".join(printed.stdout.split())
    summary = (out / "summary.md").read_text()
    assert "16 downlinks, no uplinks" in summary and "2 peer links" in summary
    # the optics at both ends of each peer link are ordered: host ports' 32 plus the peer links' 4
    assert bom(out)[next(iter({p.optic for link in peers for p in (link.a, link.b)}))] >= 4


def test_a_single_switch_lab_holds_every_nic_and_runs_no_bgp(shipped):
    b, out = shipped["lab-16-gpu"]
    s = b.sizing
    assert (s.spines, s.leaves, s.leaf_downlinks, s.gpus) == (0, 1, 16, 16)
    assert {r["b_device"] for r in cabling(out)} == {"be-su01-leaf1"} and len(cabling(out)) == 16
    db = json.loads((out / "configs" / "be-su01-leaf1" / "config_db.json").read_text())
    assert len(db["PORT"]) == 16 and "bgp_asn" not in db["DEVICE_METADATA"]["localhost"]
    assert "router bgp" not in (out / "configs" / "be-su01-leaf1" / "frr.conf").read_text()
    assert "- 1 scalable unit of 2 nodes; 1 leaf, 0 spines\n" in (out / "summary.md").read_text()  # not "1 leaves"


@pytest.mark.parametrize(
    "backend",
    [
        "{design: top-of-rack, tor_attach: single, spine: {count: 0}}",
        "{design: rail-optimized, rails_per_leaf: 8, spine: {count: 0}}",
    ],
)
def test_one_leaf_holds_a_whole_small_cluster_in_either_spelling(write_intent, backend):
    b = compile_intent(write_intent(f"gpus: 16\ngpu_node: DGX-H100\nbackend: {backend}\n"), render=False)
    assert (b.sizing.spines, b.sizing.leaves, b.sizing.leaf_downlinks) == (0, 1, 16)


def test_rail_optimized_with_no_spines_keeps_one_leaf_per_rail_group(write_intent):
    b = compile_intent(write_intent("gpus: 64\ngpu_node: DGX-H100\nbackend: {rails_per_leaf: 4, spine: {count: 0}}\n"), render=False)
    assert (b.sizing.spines, b.sizing.leaves, b.sizing.leaf_downlinks) == (0, 2, 32)
    assert [leaf.rails for leaf in b.fabric.by_role(Role.LEAF)] == [(1, 2, 3, 4), (5, 6, 7, 8)]


def test_a_reserved_unit_keeps_ports_for_growth_without_spines(write_intent):
    b = compile_intent(
        write_intent("gpus: 32\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: pair, scalable_unit_gpus: 64, spine: {count: 0}}\n"),
        render=False,
    )
    assert (b.sizing.su_nodes, b.sizing.nodes, b.sizing.leaf_downlinks) == (8, 4, 32)
    assert any("reserves 32 downlinks" in n for n in b.compiled.notes)


# --- refusals -----------------------------------------------------------------------------------


def test_nodes_that_do_not_fit_the_pair_are_refused_with_how_many_fit(write_intent):
    """16 nodes x 4 NICs per switch of a pair and 2 peer links: 66 ports, the N9K-C9364D-GX2A has 64."""
    err = build_refused(write_intent("nodes: 16\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}}\n"))
    assert "backend.spine.count" in err and "need 64 ports and 2 for the peer links" in err and "at most 15 nodes (120 GPUs) fit without spines" in err
    assert "remove backend.spine.count to add spines" in err


@pytest.mark.parametrize(
    ("extra", "wrong"),
    [("tiers: 3", "remove tiers: 3"), ("uplinks: {count: 8}", "remove uplinks")],
)
def test_no_spines_with_a_tier_above_is_refused(write_intent, extra, wrong):
    err = build_refused(write_intent(f"gpus: 16\ngpu_node: DGX-H100\nbackend: {{design: top-of-rack, {extra}, spine: {{count: 0}}}}\n"))
    assert "spine.count: 0 builds one tier with no uplinks" in err and wrong in err


def test_a_pinned_leaf_count_that_is_not_the_pair_is_refused(write_intent):
    err = build_refused(write_intent("gpus: 32\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: pair, leaf: {count: 4}, spine: {count: 0}}\n"))
    assert "a fabric with no spines has 2 leaves" in err and "set count: 2" in err


# --- the collapsed frontend pair --------------------------------------------------------------------

FRONTEND_PAIR = """
nodes: 4
gpu_node: DGX-H100
backend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}}
frontend: {spine: {count: 0}}
storage_nodes: {model: AFF-A90, count: 2}
"""


def test_a_collapsed_frontend_pair_dual_homes_every_server_over_two_peered_leaves(write_intent, tmp_path):
    """frontend.spine.count: 0: one pair of leaves, no spines, every server (GPU and converged
    storage nodes) with one frontend port on each leaf, the leaves joined by 2 peer links with an
    eBGP session each."""
    b, out = build(write_intent(FRONTEND_PAIR), tmp_path / "out")
    plan = b.compiled.plans[Network.FRONTEND]
    assert (plan.leaves, plan.spines, plan.leaf_uplinks, plan.peer_links) == (2, 0, 0, 2)
    leaves = sorted(d.name for d in b.fabric.by_role(Role.LEAF, Network.FRONTEND))
    assert leaves == ["fe-leaf01", "fe-leaf02"] and not list(b.fabric.by_role(Role.SPINE, Network.FRONTEND))
    peers = [link for link in b.fabric.links if link.kind is LinkKind.PEER and link.network is Network.FRONTEND]
    assert [(link.id, link.a.device.name, link.b.device.name) for link in peers] == [
        ("FE-P00001", "fe-leaf01", "fe-leaf02"),
        ("FE-P00002", "fe-leaf01", "fe-leaf02"),
    ]
    homes: dict[str, set[str]] = {}
    for link in b.fabric.links:
        if link.kind is LinkKind.HOST and link.network is Network.FRONTEND:
            homes.setdefault(link.a.device.name, set()).add(link.b.device.name)
    assert len(homes) == 6 and all(leaf_set == set(leaves) for leaf_set in homes.values())  # 4 GPU nodes, 2 storage nodes
    asns = b.compiled.addresses.asns
    for leaf, other in (("fe-leaf01", "fe-leaf02"), ("fe-leaf02", "fe-leaf01")):
        config = b.configs[leaf]
        assert [n.remote_asn for n in config.bgp.neighbors] == [asns[other]] * 2
        assert config.bgp.maximum_paths == 2
        text = (out / "configs" / f"{leaf}.cfg").read_text()
        assert text.count("description FE-P0000") == 2 and text.count(f"remote-as {asns[other]}") == 2
    summary = (out / "summary.md").read_text()
    assert "- a collapsed pair: 2 leaves (leaf-pair), no spines; every leaf: 52 server ports; 2 peer links between the two leaves" in summary
    assert {r["cable_id"] for r in csv.DictReader((out / "cabling.csv").open()) if r["kind"] == "peer" and r["network"] == "frontend"} == {
        "FE-P00001",
        "FE-P00002",
    }


def test_a_collapsed_frontend_pair_that_cannot_hold_the_servers_is_refused(write_intent):
    """40 DGX nodes x 2 frontend ports: 40 ports on each leaf, an N9K-C93600CD-GX has 28 x 100G."""
    err = build_refused(write_intent("nodes: 40\ngpu_node: DGX-H100\nfrontend: {spine: {count: 0}}\n"))
    assert "frontend.spine.count" in err and "a collapsed pair" in err and "remove frontend.spine.count" in err


@pytest.mark.parametrize(("extra", "wrong"), [("attach: single-leaf", "attach: leaf-pair"), ("tiers: 3", "tiers: 3")])
def test_a_collapsed_frontend_needs_a_pair_and_one_tier(write_intent, extra, wrong):
    err = build_refused(write_intent(f"gpus: 16\ngpu_node: DGX-H100\nfrontend: {{{extra}, spine: {{count: 0}}}}\n"))
    assert "spine.count: 0" in err and wrong in err


# --- configs of every NOS for a spine-free switch -------------------------------------------------


@pytest.mark.parametrize("nos", ["nxos", "eos", "sonic"])
def test_a_top_of_rack_pair_switch_peers_with_its_twin_over_lossless_peer_links(write_intent, tmp_path, nos):
    """Each switch of a spine-free pair: 16 host ports, 2 routed peer ports with a BGP session
    each to the other switch's ASN, and the peer ports lossless like uplinks."""
    model = LEAF_OF[nos]
    out = tmp_path / "out"
    b = build(
        write_intent(
            f"nodes: 4\ngpu_node: DGX-H100\nbackend: {{design: top-of-rack, tor_attach: pair, leaf: {{model: {model}, nos: {nos}}}, spine: {{count: 0}}}}\n"
        ),
        out,
    )[0]
    asns = b.compiled.addresses.asns
    for leaf, other in (("be-su01-leaf1", "be-su01-leaf2"), ("be-su01-leaf2", "be-su01-leaf1")):
        config = b.configs[leaf]
        peer_ports = [i for i in config.interfaces if i.kind == "peer"]
        assert len(peer_ports) == 2 and all(i.address and i.address.endswith("/31") and i.lossless for i in peer_ports)
        assert [n.remote_asn for n in config.bgp.neighbors] == [asns[other]] * 2
        if nos == "sonic":
            db = json.loads((out / "configs" / leaf / "config_db.json").read_text())
            assert sum(1 for key in db["INTERFACE"] if "|" in key) == 18 and db["PORT_QOS_MAP"]
            assert all(db["PORT_QOS_MAP"].get(i.name, {}).get("pfc_enable") for i in peer_ports)
            frr = (out / "configs" / leaf / "frr.conf").read_text()
            assert "router bgp" in frr and frr.count(f"remote-as {asns[other]}") == 2
        else:
            text = (out / "configs" / f"{leaf}.cfg").read_text()
            assert text.count("description BE-") == 18 and text.count("description BE-P") == 2 and "router bgp" in text
            assert text.count(f"remote-as {asns[other]}") == 2


# --- analyze and the lab --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inference-pod-4-node", "lab-16-gpu"])
def test_analyze_reports_what_each_leaf_failure_cuts_off(shipped, name):
    _b, out = shipped[name]
    result = cli_runner.fabricgen("analyze", out, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = cli_runner.fabricgen("analyze", out)
    assert report.returncode == 0, report.stderr
    text = " ".join(report.stdout.split())
    if name == "lab-16-gpu":
        assert "No spines: every leaf is alone" in text
        assert "| be-su01-leaf1 | 16 | 100.0% | 2 |" in text
    else:  # the pair: paths between its switches over the peer links, which a leaf failure does not need
        assert "No spines: the pair's two leaves are joined by 2 peer links (BE-P00001, BE-P00002), 0.8 Tb/s" in text
        assert "A peer link's failure leaves 1 of 2 (0.4 Tb/s) and cuts off no NIC" in text
        assert "| be-su01-leaf1 | 16 | 50.0% | 4 |" in text and "| be-su01-leaf2 | 16 | 50.0% | 4 |" in text
        assert "its pair's 2 peer links would carry traffic between NICs of the two leaves" in text
        assert "whatever the traffic, the network carries only traffic between NICs of one leaf" not in text


@needs_lab
@pytest.mark.parametrize("name", ["inference-pod-4-node", "lab-16-gpu"])
def test_the_spine_free_intents_boot_in_the_lab(tmp_path, name):
    """`lab run` on each shipped spine-free intent: the single switch has no session, the pair one
    per peer link (each counted from both ends) Established, and every probe answered: those
    between NICs of the two switches cross the peer links."""
    build_dir = tmp_path / name
    build(REPO / "intents" / f"{name}.yaml", build_dir)
    try:
        run = lab_fabricgen("lab", "run", str(build_dir))
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr
        summary = " ".join(run.stdout.split())
        assert "lab run: PASS" in summary
        if name == "inference-pod-4-node":  # the peer links carry every probe between the switches
            assert "BGP sessions: PASS, 4/4 expected sessions Established" in summary
            assert "ECMP width: PASS, 2/2 routes to remote leaves' server prefixes at the planned width" in summary
            assert "Traffic: PASS, 64/64 probes reached their target" in summary
        else:
            assert "BGP sessions: PASS, 0/0 expected sessions Established" in summary
            assert "Traffic: PASS, 32/32 probes reached their target" in summary
        assert "between leaves no fabric link joins" not in summary
    finally:
        lab_fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []


# --- peer links only between the two switches of a pair -------------------------------------------


def test_the_checks_refuse_a_peer_link_outside_the_pair_or_a_missing_one(write_intent):
    """peer_links_join_the_pair on a graph edited after the design: a host cable relabelled as a
    peer link (a node to a leaf), and one of the pair's two peer links gone."""
    b = compile_intent(write_intent("nodes: 4\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}}\n"), render=False)
    c = b.compiled
    assert list(peer_links_join_the_pair(c)) == []
    host = next(link for link in c.fabric.links if link.kind is LinkKind.HOST)
    host.kind = LinkKind.PEER
    assert [p.message for p in peer_links_join_the_pair(c)] == [
        f"peer link {host.id} joins {host.a.device.name} to {host.b.device.name}; it may only join the two leaves of the pair",
        "the backend pair's leaves are joined by 3 peer links, expected 2",
    ]
    host.kind = LinkKind.HOST
    c.fabric.links.remove(next(link for link in c.fabric.links if link.id == "BE-P00002"))
    assert [p.message for p in peer_links_join_the_pair(c)] == ["the backend pair's leaves are joined by 1 peer link, expected 2"]


def test_a_peer_link_with_no_pair_is_refused_by_the_checks(write_intent):
    b = compile_intent(write_intent("gpus: 16\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: single, spine: {count: 0}}\n"), render=False)
    c = b.compiled
    link = next(link for link in c.fabric.links if link.kind is LinkKind.HOST)
    link.kind = LinkKind.PEER
    [problem] = peer_links_join_the_pair(c)
    assert problem.message == f"peer link {link.id} in a backend fabric that is no spine-free pair"


@pytest.mark.parametrize(
    ("source", "target", "fault"),
    [(Role.LEAF, Role.LEAF, None), (Role.LEAF, Role.SPINE, "target role"), (Role.GPU_NODE, Role.LEAF, "source role")],
)
def test_a_build_directory_holds_peer_links_only_between_two_leaves(source, target, fault):
    """build_dir's verification of topology.json (END_ROLES): a peer link's ends are both leaves."""
    faults = build_dir._link_faults(LinkKind.PEER, 400, Network.BACKEND, (source, Network.BACKEND), (target, Network.BACKEND))
    assert [where for where, _ in faults] == ([] if fault is None else [fault])


# --- the test plan ----------------------------------------------------------------------------------


def test_the_test_plan_crosses_the_pairs_peer_links(shipped, tmp_path):
    """Besides the NIC pairs behind each switch, one perftest pair between a NIC on each switch,
    run both ways: its routed paths are the 2 peer links, with 4 QPs per path so the hash can use both."""
    _b, out = shipped["inference-pod-4-node"]
    plan = write_plan(out, tmp_path / "plan")
    across = [p for p in plan.pairs if p.server.leaf != p.client.leaf]
    assert [(p.server.leaf, p.client.leaf, p.links, p.paths, p.qps) for p in across] == [
        ("be-su01-leaf1", "be-su01-leaf2", ["BE-P00001", "BE-P00002"], 2, 8),
        ("be-su01-leaf2", "be-su01-leaf1", ["BE-P00001", "BE-P00002"], 2, 8),
    ]
    assert {p.kind for p in plan.pairs if p.server.leaf == p.client.leaf} == {"nic"}
    assert any("peer links" in note for note in plan.notes)
    assert "2 peer links" in (tmp_path / "plan" / "testplan.md").read_text()


def test_the_containerlab_export_wires_the_peer_links(shipped, tmp_path):
    """The routing twins peer over the peer links, so the exported topology must cable them."""
    _b, out = shipped["inference-pod-4-node"]
    clab = export_build("containerlab", out, tmp_path / "clab")
    text = (clab / "inference-pod-4-node.clab.yml").read_text()
    assert "# BE-P00001: be-su01-leaf1 Ethernet1/17 - be-su01-leaf2 Ethernet1/17" in text and "# BE-P00002:" in text


@needs_lab
def test_the_collapsed_frontend_pair_boots_in_the_lab(write_intent, tmp_path):
    """`lab run --network frontend` on a collapsed pair: a session per peer link from each end,
    ECMP over both towards the other leaf, every probe answered (a failed peer link included)."""
    build_dir = tmp_path / "fe-pair"
    build(write_intent(FRONTEND_PAIR), build_dir)
    try:
        run = lab_fabricgen("lab", "run", str(build_dir), "--network", "frontend")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr
        summary = " ".join(run.stdout.split())
        assert "BGP sessions: PASS, 4/4 expected sessions Established" in summary and "lab run: PASS" in summary
        assert "ECMP width: PASS, 2/2 routes to remote leaves' server prefixes at the planned width" in summary
        assert "Traffic: PASS, 30/30 probes reached their target" in summary
    finally:
        lab_fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []


# --- the peer-link count ------------------------------------------------------------------------------


@pytest.mark.parametrize("section", ["backend", "frontend"])
def test_peer_links_sets_how_many_links_join_a_pair(write_intent, section):
    """peer_links: 4 gives 4 peer links, 4 sessions a leaf and ECMP over all 4, and keeps 4 ports."""
    fabric = "backend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}, peer_links: 4}\n"
    if section == "frontend":
        fabric = "backend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}}\nfrontend: {spine: {count: 0}, peer_links: 4}\n"
    b = compile_intent(write_intent(f"nodes: 4\ngpu_node: DGX-H100\n{fabric}"))
    network = Network(section)
    assert b.compiled.plans[network].peer_links == 4
    assert sum(link.kind is LinkKind.PEER and link.network is network for link in b.fabric.links) == 4
    leaf = next(b.fabric.by_role(Role.LEAF, network))
    assert len(b.configs[leaf.name].bgp.neighbors) == 4 and b.configs[leaf.name].bgp.maximum_paths == 4


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ("backend: {peer_links: 2}", "peer_links apply to a spine-free pair (spine.count: 0)"),
        ("frontend: {peer_links: 2}", "peer_links apply to a spine-free pair (spine.count: 0)"),
        ("backend: {spine: {count: 0}, peer_links: 0}", "backend.peer_links: Input should be greater than or equal to 1"),
        ("backend: {spine: {count: 0}, peer_links: 17}", "backend.peer_links: Input should be less than or equal to 16"),
        ("backend: {spine: {count: 0}, peer_links: 4}", "a spine-free fabric of 8 leaves has no pair to join"),
    ],
)
def test_peer_links_outside_a_pair_or_out_of_range_is_refused(write_intent, intent, expected):
    err = build_refused(write_intent(f"gpus: 16\ngpu_node: DGX-H100\n{intent}\n"))
    assert expected in err


def test_dynamic_load_balancing_covers_the_peer_links_on_nxos(write_intent, tmp_path):
    """NX-OS DLB lists the ECMP members it balances over: on a pair those are the peer links."""
    out = tmp_path / "out"
    build(
        write_intent(
            "nodes: 4\ngpu_node: DGX-H100\nbackend: {design: top-of-rack, tor_attach: pair, spine: {count: 0}, "
            "leaf: {nos_release: 10.5(3)F}, load_balancing: {mode: flowlet}}\n"
        ),
        out,
    )
    text = (out / "configs" / "be-su01-leaf1.cfg").read_text()
    assert "  dlb-interface Ethernet1/17\n  dlb-interface Ethernet1/18\n" in text


def test_tiers_beside_spine_count_zero_is_refused(write_intent):
    """spine.count: 0 builds one tier: `tiers: 2` beside it was accepted without a word."""
    from fabricgen.basics.errors import IntentError

    with pytest.raises(IntentError, match=r"spine\.count: 0 builds one tier with no uplinks; remove tiers: 2"):
        compile_intent(write_intent("nodes: 2\nbackend:\n  tiers: 2\n  design: top-of-rack\n  tor_attach: single\n  spine: {count: 0}\n"), render=False)
