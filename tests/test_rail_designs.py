"""Rail mapping as part of the design: rails per leaf, rail-only, top-of-rack and multi-plane
NICs, each through the graph, checks, configs and reports (cabling, BOM, topology, summary)."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from fabricgen.basics.errors import DesignError
from fabricgen.compiler.design.graph import LinkKind, Role
from fabricgen.compiler.pipeline import build, compile_intent
from tests.conftest import INTENTS, build_refused


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The four shipped rail-design intents, built into files once: {name: (Build, out dir)}."""
    out = tmp_path_factory.mktemp("rail-designs")
    return {name: build(INTENTS / f"{name}.yaml", out / name) for name in ("small-32-gpu", "rail-only-1024", "dual-plane-2048", "tor-64-gpu")}


def cabling(out) -> list[dict[str, str]]:
    with open(out / "cabling.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def bom(out) -> dict[str, int]:
    with open(out / "bom.csv", newline="", encoding="utf-8") as f:
        return {row["pid"]: int(row["quantity"]) for row in csv.DictReader(f)}


def host_links(rows):
    return {(r["a_device"], r["a_port"]): (r["b_device"], r["b_port"]) for r in rows if r["network"] == "backend" and r["kind"] == "host"}


def roles(b) -> Counter:
    return Counter(d.role for d in b.fabric.devices.values())


def design_problems(write_intent, text):
    with pytest.raises(DesignError) as caught:
        compile_intent(write_intent(text), render=False)
    return caught.value.problems


# --- rails per leaf: the 32-GPU pod -------------------------------------------------------------


def test_small_pod_two_leaves_of_four_rails(shipped):
    b, out = shipped["small-32-gpu"]
    assert roles(b) == {Role.GPU_NODE: 4, Role.LEAF: 2, Role.SPINE: 2}
    leaves = [b.fabric.devices[name] for name in ("be-su01-leaf1", "be-su01-leaf5")]
    assert [(leaf.rail, leaf.rails) for leaf in leaves] == [(1, (1, 2, 3, 4)), (5, (5, 6, 7, 8))]
    # rail-major: ports 1-4 rail 1 of nodes 1-4, ports 5-8 rail 2 ... on the leaf of the rail
    links = host_links(cabling(out))
    assert len(links) == 32
    for node in range(1, 5):
        for rail in range(1, 9):
            leaf = "be-su01-leaf1" if rail <= 4 else "be-su01-leaf5"
            port = ((rail - 1) % 4) * 4 + node
            assert links[(f"gpu{node:04d}", f"nic{rail}")] == (leaf, f"Ethernet1/{port}"), (node, rail)
    # uplinks after the 16 downlinks, 8 to each spine
    for leaf in leaves:
        up = Counter(p.link.other(p).device.name for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC)
        assert up == {"be-spine01": 8, "be-spine02": 8}
        assert min(p.cage for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC) == 17
    assert bom(out) == {"DGX-H100": 4, "N9K-C9364D-GX2A": 4, "QDD-400G-DR4-S": 32 + 64, "CB-M12-M12-SMF": 64}


def test_small_pod_reports_say_which_rails_share_a_leaf(shipped):
    _b, out = shipped["small-32-gpu"]
    summary = (out / "summary.md").read_text()
    assert "rails 1-4 on leaf 1 of each scalable unit; rails 5-8 on leaf 2" in summary
    topology = json.loads((out / "topology.json").read_text())
    leaves = {n["id"]: n for n in topology["nodes"] if n["role"] == "leaf"}
    assert leaves["be-su01-leaf5"]["rail"] == 5 and leaves["be-su01-leaf5"]["rails"] == [5, 6, 7, 8]
    assert topology["graph"]["backend"]["rails_per_leaf"] == 4
    assert topology["graph"]["fabrics"]["backend"]["design"] == "rail-optimized"
    # a leaf's host block holds all 16 NICs: 16 /31s in a /27, the leaf on the even address
    config = (out / "configs" / "be-su01-leaf1.cfg").read_text()
    assert config.count("ip address 10.") >= 16 + 16  # 16 host /31s + 16 uplink /31s


def test_pinned_leaf_count_hint_names_rails_per_leaf(write_intent):
    [problem] = design_problems(write_intent, "gpus: 32\nbackend:\n  leaf: {count: 2}\n")
    assert "needs 8 leaves" in problem.message and "pins 2" in problem.message
    assert "rails_per_leaf: 4" in problem.hint


def test_rails_per_leaf_must_divide_the_rails(write_intent):
    [problem] = design_problems(write_intent, "gpus: 32\nbackend: {rails_per_leaf: 3}\n")
    assert problem.field == ("backend", "rails_per_leaf")
    assert "does not divide the 8 rails" in problem.message and "1, 2, 4, 8" in problem.hint


def test_multi_rail_leaf_too_small_says_what_fits(write_intent):
    # 32 nodes x 4 rails = 128 downlinks: a 64-port leaf holds 1 rail of 32 nodes at 1:1
    [problem] = design_problems(write_intent, "gpus: 256\nbackend: {rails_per_leaf: 4, scalable_unit_gpus: 256}\n")
    assert "128 downlinks (32 nodes x 4 rails)" in problem.message
    assert "scalable_unit_gpus: 64 or less" in problem.hint and "rails_per_leaf: 1" in problem.hint


def test_rails_per_leaf_in_three_tiers(write_intent):
    # 3 tiers with 2 rails a leaf: 16-node units, 4 leaves a unit, each with 32 down and 32 up
    b = compile_intent(write_intent("gpus: 1024\nbackend: {tiers: 3, rails_per_leaf: 2, scalable_unit_gpus: 128, pod_gpus: 512}\n"), render=False)
    s = b.sizing
    assert (s.leaves_per_su, s.leaf_downlinks, s.leaf_uplinks, s.su_count, s.pods) == (4, 32, 32, 8, 2)
    assert roles(b)[Role.LEAF] == 32


def test_evpn_per_rail_segments_on_a_multi_rail_leaf(write_intent):
    text = """
        gpus: 32
        backend:
          rails_per_leaf: 4
          routing: vxlan-evpn
          evpn: {segments: per-rail}
    """
    b = compile_intent(write_intent(text), render=False)
    segments = b.compiled.evpn[next(iter(b.compiled.evpn))].segments
    assert len(segments) == 8  # one per rail, whichever leaf carries it
    leaf1 = {
        s.rail for s in segments if any(p.link.other(p).device.name == "be-su01-leaf1" for p in b.compiled.evpn[next(iter(b.compiled.evpn))].members[s.number])
    }
    assert leaf1 == {1, 2, 3, 4}


# --- rail-only ----------------------------------------------------------------------------------


def test_rail_only_1024_is_eight_rail_switches_and_no_spines(shipped):
    b, out = shipped["rail-only-1024"]
    assert roles(b) == {Role.GPU_NODE: 128, Role.LEAF: 8}
    assert not any(link.kind is LinkKind.FABRIC for link in b.fabric.links)
    links = host_links(cabling(out))
    assert len(links) == 1024
    for node in (1, 64, 128):
        for rail in range(1, 9):
            leaf, port = links[(f"gpu{node:04d}", f"nic{rail}")]
            assert leaf == f"be-su01-leaf{rail}"
            # 2x400G breakout of 800G cages: node n on sub-port (n-1)%2+1 of cage (n+1)//2
            assert port == f"Ethernet1/{(node + 1) // 2}/{(node - 1) % 2 + 1}"
    assert bom(out)["N9364E-SG2-O"] == 8
    topology = json.loads((out / "topology.json").read_text())
    assert topology["graph"]["fabrics"]["backend"]["design"] == "rail-only" and topology["graph"]["backend"]["spines"] == 0
    config = (out / "configs" / "be-su01-leaf3.cfg").read_text()
    assert "router bgp" not in config and "route-map" not in config  # no BGP: there is no one to talk to
    assert config.count("description BE-") == 128 and "interface loopback0" in config  # the host side is still there
    assert any("no BGP sessions between leaves" in note for note in b.compiled.notes)
    assert "no uplinks: no spine tier" in (out / "summary.md").read_text()


def test_rail_only_larger_than_a_leaf_makes_each_rail_a_plane(write_intent):
    b = compile_intent(write_intent("gpus: 1024\nbackend: {design: rail-only}\n"), render=False)  # 128 nodes, 64-port leaves
    s = b.sizing
    assert (s.planes, s.leaves, s.su_count) == (8, 32, 4)
    for leaf in b.fabric.by_role(Role.LEAF):
        assert leaf.rails == (leaf.rail,) and leaf.plane == leaf.rail
        for p in leaf.ports.values():
            if p.link.kind is LinkKind.FABRIC:
                assert p.link.other(p).device.plane == leaf.plane  # a rail's spines serve only that rail


@pytest.mark.parametrize(
    ("backend", "says"),
    [
        ("{design: rail-only, rails_per_leaf: 2}", "rail-only keeps every rail on leaves of its own"),
        ("{design: rail-only, planes: 2}", "remove planes"),
        ("{design: top-of-rack, planes: 2}", "top-of-rack puts every NIC of a node"),
        ("{design: top-of-rack, rails_per_leaf: 4}", "rails_per_leaf cannot apply"),
        ("{tor_attach: pair}", "tor_attach only applies to design: top-of-rack"),
    ],
)
def test_invalid_combinations_are_refused(write_intent, backend, says):
    err = build_refused(write_intent(f"gpus: 64\nbackend: {backend}\n"))
    assert says in err


def test_rail_only_with_pinned_spines_is_refused(write_intent):
    problems = design_problems(write_intent, "gpus: 1024\nbackend:\n  design: rail-only\n  leaf: {model: N9364E-SG2-O}\n  spine: {count: 2}\n")
    assert [p.field for p in problems] == [("backend", "spine", "count")]


# --- top-of-rack --------------------------------------------------------------------------------


def test_tor_pair_alternates_nics_node_by_node(shipped):
    b, out = shipped["tor-64-gpu"]
    assert roles(b) == {Role.GPU_NODE: 8, Role.LEAF: 2, Role.SPINE: 2}
    links = host_links(cabling(out))
    assert len(links) == 64
    for node in range(1, 9):
        for nic in range(1, 9):
            leaf = "be-su01-leaf1" if nic % 2 else "be-su01-leaf2"
            port = (node - 1) * 4 + (nic - 1) // 2 + 1  # a node's 4 NICs side by side
            assert links[(f"gpu{node:04d}", f"nic{nic}")] == (leaf, f"Ethernet1/{port}")
    assert [b.fabric.devices[n].rails for n in ("be-su01-leaf1", "be-su01-leaf2")] == [(1, 3, 5, 7), (2, 4, 6, 8)]
    assert bom(out) == {"DGX-H100": 8, "N9K-C9364D-GX2A": 4, "QDD-400G-DR4-S": 64 + 128, "CB-M12-M12-SMF": 128}
    assert "a leaf's downlinks go node by node" in (out / "summary.md").read_text()


def test_tor_single_sizes_nodes_per_leaf_from_its_ports(write_intent):
    # 64 ports at 1:1: 32 downlinks = 4 nodes of 8 NICs a leaf; 96 GPUs = 12 nodes = 3 leaves
    b = compile_intent(write_intent("gpus: 96\nbackend: {design: top-of-rack}\n"), render=False)
    assert (b.sizing.su_nodes, b.sizing.leaves, b.sizing.leaf_downlinks) == (4, 3, 32)
    for leaf in b.fabric.by_role(Role.LEAF):
        nodes = {p.link.other(p).device.name for p in leaf.ports.values() if p.link.kind is LinkKind.HOST}
        assert len(nodes) == 4  # every NIC of each of its nodes


# --- multi-plane NICs ---------------------------------------------------------------------------


def test_dual_plane_2048_puts_port_p_of_every_nic_on_plane_p(shipped):
    b, out = shipped["dual-plane-2048"]
    assert roles(b) == {Role.GPU_NODE: 256, Role.LEAF: 128, Role.SPINE: 64}
    links = host_links(cabling(out))
    assert len(links) == 256 * 16
    devices = b.fabric.devices
    for node in (1, 256):
        for nic in range(1, 9):
            for port in (1, 2):
                leaf, _ = links[(f"gpu{node:04d}", f"nic{nic}p{port}")]
                assert devices[leaf].plane == port and devices[leaf].rail == (port - 1) * 8 + nic
    for link in b.fabric.links:
        if link.kind is LinkKind.FABRIC:
            assert link.a.device.plane == link.b.device.plane
    counts = bom(out)
    assert counts["DGX-B300"] == 256 and counts["N9K-C9364D-GX2A"] == 192
    assert counts["CB-M12-M12-SMF"] == 4096 + 128 * 32  # host links + one link from every leaf to each of its plane's 32 spines
