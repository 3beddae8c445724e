"""The lab's plan, read from a build without booting anything (no root): cables, sessions, probes,
widths, keys, frontend and storage servers, planes and rail designs. Apart from tests/test_lab.py,
whose tests boot labs one after another on one worker, so these run beside them."""

from __future__ import annotations

import stat
from collections import Counter
from dataclasses import replace
from pathlib import Path

import netaddr
import pytest

from fabricgen.basics.errors import LabError
from fabricgen.build.secrets import env_name
from fabricgen.compiler.pipeline import build
from fabricgen.lab import keys, session
from fabricgen.lab.plan import _announced, _keyed_peers, check_frr_conf, kernel_names, read_plan
from fabricgen.lab.routing import ecmp_widths
from tests.test_lab import (
    CROSS_POD,
    FRONTEND_INTENT,
    KEYED_LEAF,
    REPO,
    THREE_TIER_INTENT,
    KeyedPlan,
    _without_spines,
    ip_plan_rows,
)


def test_kernel_names_keep_valid_names_shorten_the_rest_and_never_collide():
    names = kernel_names(["Ethernet8", "nic1", "Ethernet1/33", "Ethernet1/1/2", "eth1-33", "Ethernet1/100/4/breakout-long"])
    assert names["Ethernet8"] == "Ethernet8" and names["nic1"] == "nic1"
    assert names["Ethernet1/33"] == "eth1-33" and names["Ethernet1/1/2"] == "eth1-1-2"
    assert names["eth1-33"] == "p5"  # the name is taken by Ethernet1/33's short form: numbered instead
    assert len(set(names.values())) == len(names)
    assert all(len(n) <= 15 and "/" not in n for n in names.values())


def test_plan_wires_every_backend_cable_once_and_expects_a_session_per_fabric_link(lab_build: Path):
    plan = read_plan(lab_build)
    rows = [line.split(",") for line in (lab_build / "cabling.csv").read_text().splitlines()[1:]]
    backend = [r for r in rows if r[1] == "backend"]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in backend)
    fabric = [link for link in plan.links if link.kind == "fabric"]
    assert len(plan.sessions) == 2 * len(fabric)
    # every switch runs FRR: SONiC leaves their own frr.conf, NX-OS spines the twin
    sources = {s.role: s.frr_source.split("/")[0] for s in plan.switches.values()}
    assert sources == {"leaf": "configs", "spine": "lab"}
    # every GPU node NIC has its planned address and a rule selecting its own table
    for node in plan.nodes.values():
        assert len(node.nics) == 8 and len(node.rules) == 8


def test_probes_cross_the_tiers_the_design_says(lab_build: Path):
    plan = read_plan(lab_build)
    kinds = {p.kind for p in plan.probes}
    assert kinds == {"same rail, other unit", "other rail"}
    for probe in plan.probes:
        source = plan.nodes[probe.source]
        target = plan.nodes[probe.target]
        assert source.name != target.name
        if probe.kind == "same rail, other unit":
            assert source.scalable_unit != target.scalable_unit and probe.source_nic == probe.target_nic
        assert probe.path == ("leaf", "spine", "leaf", "node")  # different leaves: up and down again


def test_widths_of_a_2_tier_fabric_follow_its_live_uplinks(lab_build: Path):
    """Every leaf reaches every other through each spine; a failed uplink takes that spine away
    from the leaf and the leaf away from that spine, nothing else."""
    plan = read_plan(lab_build)
    intact = ecmp_widths(plan, set(), set())
    assert {w for name, by_leaf in intact.items() for w in by_leaf.values()} == {1, 2}
    assert all(set(intact[name].values()) == {2 if s.role == "leaf" else 1} for name, s in plan.switches.items())
    leaf = "be-su01-leaf1"
    link = plan.uplinks[leaf][0]
    spine = link.other(leaf).device
    cut = ecmp_widths(plan, {link.cable}, set())
    assert set(cut[leaf].values()) == {1} and cut[spine][leaf] == 0
    assert all(cut[other][leaf] == 1 for other, s in plan.switches.items() if s.role == "leaf" and other != leaf)


def test_plan_of_a_3_tier_build_has_cores_every_cable_once_and_a_session_per_fabric_link(three_tier_build: Path):
    plan = read_plan(three_tier_build)
    assert Counter(s.role for s in plan.switches.values()) == {"leaf": 16, "spine": 4, "core": 2}
    rows = [line.split(",") for line in (three_tier_build / "cabling.csv").read_text().splitlines()[1:]]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in rows if r[1] == "backend")
    fabric = [link for link in plan.links if link.kind == "fabric"]
    to_cores = [link for link in fabric if plan.switches[link.b.device].role == "core"]
    assert len(fabric) == 64 and len(to_cores) == 32 and all(plan.switches[link.a.device].role == "spine" for link in to_cores)
    assert len(plan.sessions) == 2 * len(fabric)
    assert {(s.device, s.peer_device) for s in plan.sessions if s.device == "be-core01"} == {("be-core01", "be-spine01"), ("be-core01", "be-spine03")}
    # SONiC leaves and cores run their own frr.conf, the NX-OS spines their twin
    sources = {(s.role, s.frr_source.split("/")[0]) for s in plan.switches.values()}
    assert sources == {("leaf", "configs"), ("spine", "lab"), ("core", "configs")}
    assert {s.pod for s in plan.switches.values() if s.role != "core"} == {1, 2}


def test_3_tier_probes_cross_a_core_between_pods_and_stay_in_the_pod_within_it(three_tier_build: Path):
    plan = read_plan(three_tier_build)
    paths = Counter()
    for probe in plan.probes:
        source, target = (plan.switches[plan.nodes[p].nics[0].leaf].pod for p in (probe.source, probe.target))
        assert probe.path == (CROSS_POD if source != target else ("leaf", "spine", "leaf", "node")), probe
        paths[probe.path] += 1
    # one unit per pod: every same-rail probe and half the other-rail ones cross pods
    assert paths == {CROSS_POD: 48, ("leaf", "spine", "leaf", "node"): 16}


def test_3_tier_widths_under_a_core_or_spine_failure(three_tier_build: Path):
    """Spine k of each pod reaches the other pod only through core k (8 parallel links); with core 1
    down, spine 1 of each pod loses the other pod and its leaves keep one way there."""
    plan = read_plan(three_tier_build)
    pod1 = sorted(n for n, s in plan.switches.items() if s.role == "leaf" and s.pod == 1)
    pod2 = sorted(n for n, s in plan.switches.items() if s.role == "leaf" and s.pod == 2)
    intact = ecmp_widths(plan, set(), set())
    assert {intact["be-su01-leaf1"][leaf] for leaf in pod1[1:] + pod2} == {2}
    assert {intact["be-spine01"][leaf] for leaf in pod1} == {1} and {intact["be-spine01"][leaf] for leaf in pod2} == {8}
    assert set(intact["be-core01"].values()) == {8}

    def without(device: str) -> dict[str, dict[str, int]]:
        return ecmp_widths(plan, {link.cable for link in plan.links_of(device)}, {device})

    core_down = without("be-core01")
    assert "be-core01" not in core_down
    assert {core_down["be-spine01"][leaf] for leaf in pod2} == {0} and {core_down["be-spine03"][leaf] for leaf in pod1} == {0}
    assert {core_down["be-su01-leaf1"][leaf] for leaf in pod2} == {1} and {core_down["be-su01-leaf1"][leaf] for leaf in pod1[1:]} == {2}
    spine_down = without("be-spine01")
    # core 1 hears of pod 1 only from spine 1, so spine 3 of pod 2 loses pod 1 as well
    assert {spine_down["be-core01"][leaf] for leaf in pod1} == {0} and {spine_down["be-spine03"][leaf] for leaf in pod1} == {0}
    assert {spine_down["be-su02-leaf1"][leaf] for leaf in pod1} == {1} and {spine_down["be-su02-leaf1"][leaf] for leaf in pod2[1:]} == {2}


def test_3_tier_leaf_asns_reused_per_pod_need_allowas_in(write_intent, tmp_path: Path):
    """asn: leaves: per-pod gives leaf n of every pod the same ASN: only allowas-in on the leaves
    lets them hear of each other."""
    text = THREE_TIER_INTENT.read_text() + "  asn: {leaves: per-pod}\n"
    build(write_intent(text, name="per-pod"), tmp_path / "per-pod")
    plan = read_plan(tmp_path / "per-pod")
    first, twin = plan.switches["be-su01-leaf1"], plan.switches["be-su02-leaf1"]
    assert first.asn == twin.asn and first.allowas_in == 1
    assert ecmp_widths(plan, set(), set())["be-su01-leaf1"]["be-su02-leaf1"] == 2
    strict = {name: replace(s, allowas_in=0) for name, s in plan.switches.items()}
    plan.switches = strict
    assert ecmp_widths(plan, set(), set())["be-su01-leaf1"]["be-su02-leaf1"] == 0


def test_frr_check_accepts_keys_gtsm_policies_and_maximum_prefix_and_sees_which_peers_are_keyed():
    assert check_frr_conf(KEYED_LEAF, "frr.conf") == []
    # a member inherits its peer-group's key; a neighbour with its own password has one; the rest none
    assert _keyed_peers(KEYED_LEAF) == {"10.8.0.0", "10.9.0.0", "SPINES"}


def test_lab_keys_come_from_the_environment_else_are_generated_once_kept_private_and_filled_in(tmp_path: Path):
    plan = KeyedPlan({"leaf1": KEYED_LEAF, "leaf2": KEYED_LEAF.replace("64513", "64514")})
    directory = keys.private_directory(tmp_path / "lab" / "keys")
    first = keys.lab_keys(plan, directory, environ={env_name("bgp-backend"): "given-value-1"})
    assert first.generated == ("bgp-core",)
    values = first.secrets.values
    assert values["bgp-backend"] == "given-value-1"
    assert len(values["bgp-core"]) == 32 and values["bgp-core"].replace("-", "").replace("_", "").isalnum()
    keys.write_filled_configs(plan, first, directory)
    for name in plan.switches:
        filled = (directory / f"{name}.conf").read_text()
        # both switches carry the same generated value: both ends of a session must agree
        assert "password given-value-1" in filled and f"password {values['bgp-core']}" in filled and "<<secret" not in filled
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir()} == {0o600}
    # the same lab keeps its keys: another environment later changes none of them
    again = keys.lab_keys(plan, directory, environ={env_name("bgp-backend"): "other-value"})
    assert again.secrets.values == values and again.generated == ()


def test_lab_refuses_an_md5_key_linux_cannot_take_without_showing_it(tmp_path: Path):
    plan = KeyedPlan({"leaf1": KEYED_LEAF})
    long_value = "k" * 81
    with pytest.raises(LabError) as refused:
        keys.lab_keys(plan, keys.private_directory(tmp_path / "keys"), environ={env_name("bgp-backend"): long_value})
    message = str(refused.value)
    assert "'bgp-backend'" in message and "81 characters" in message and "at most 80" in message
    assert long_value not in message
    assert not (tmp_path / "keys" / keys.KEYS_FILE).exists()


def test_every_fabric_session_of_the_lab_builds_has_a_key(lab_build: Path, three_tier_build: Path):
    """tests/lab/*.yaml set bgp_security: every switch's frr.conf or twin keys every session (the
    frr.conf template renders `neighbor GROUP password <<secret=NAME>>`), the spine-core tier of
    the 3-tier fabric with its own key."""
    two = read_plan(lab_build)
    assert two.sessions and all(s.keyed for s in two.sessions)
    assert keys.secret_names(two) == {"bgp-backend"}
    three = read_plan(three_tier_build)
    assert three.sessions and all(s.keyed for s in three.sessions)
    assert keys.secret_names(three) == {"bgp-backend", "bgp-core"}
    assert "password <<secret=bgp-core>>" in three.switches["be-core01"].frr_conf
    assert "password <<secret=bgp-core>>" not in three.switches["be-su01-leaf1"].frr_conf


@pytest.mark.parametrize("intent", ["cisco-256-gpu", "cisco-512-gpu"])
def test_a_converged_frontend_plans_every_server_and_runs_storage_appliances_from_their_twin(intent: str, tmp_path: Path):
    """The shipped intents' frontend (storage converged): the ONTAP storage nodes have no netplan
    (a settings sheet instead), so the lab runs them from lab/hosts/<node>/netplan.yaml with the
    addresses of the IP plan; each leaf's remote prefix is the aggregate it announces."""
    build(REPO / "intents" / f"{intent}.yaml", tmp_path / intent)
    plan = read_plan(tmp_path / intent, "frontend")
    rows = [line.split(",") for line in (tmp_path / intent / "cabling.csv").read_text().splitlines()[1:]]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in rows if r[1] == "frontend")
    roles = Counter(node.role for node in plan.nodes.values())
    assert roles == {"gpu-node": {"cisco-256-gpu": 32, "cisco-512-gpu": 64}[intent], "storage-node": 4, "management-node": 8}
    storage = plan.nodes["storage01"]
    assert not (tmp_path / intent / "hosts" / "storage01" / "netplan.yaml").exists()
    assert "twin of an appliance" in (tmp_path / intent / "lab" / "hosts" / "storage01" / "netplan.yaml").read_text()
    planned = {(r[1], r[2]): r[3] for r in ip_plan_rows(tmp_path / intent, "frontend")}
    assert [(nic.port, nic.address) for nic in storage.nics] == [(p, planned[("storage01", p)]) for p in ("e1a", "e2a")]
    assert len({nic.leaf for nic in storage.nics}) == 2  # a leaf pair
    # a rule and a table per port, as on the appliance's settings sheet
    assert [(r.source, r.table) for r in storage.rules] == [(f"{nic.address.split('/')[0]}/32", 200 + i) for i, nic in enumerate(storage.nics, start=1)]
    # every leaf announces one aggregate (summary-only in its config), which the ECMP check expects
    for name, blocks in plan.host_blocks.items():
        assert len(blocks) == 1 and f"aggregate-address {blocks[0]} summary-only" in plan.switches[name].frr_conf, name
    assert plan.sessions and all(s.keyed for s in plan.sessions)
    assert {p.path for p in plan.probes} <= {("leaf", "node"), ("leaf", "spine", "leaf", "node")}
    assert any(p.source.startswith("storage") or p.target.startswith("storage") for p in plan.probes)
    assert all(p.reach for p in plan.probes)


def test_a_separate_storage_fabric_plans_its_appliances_and_the_gpu_nodes_storage_ports(tmp_path: Path):
    build(FRONTEND_INTENT, tmp_path / "frontend")
    plan = read_plan(tmp_path / "frontend", "storage")
    assert Counter(node.role for node in plan.nodes.values()) == {"gpu-node": 4, "storage-node": 2}
    assert all(len(node.nics) == 2 for node in plan.nodes.values())
    assert Counter(s.role for s in plan.switches.values()) == {"leaf": 2, "spine": 2}
    frontend = read_plan(tmp_path / "frontend", "frontend")
    assert Counter(node.role for node in frontend.nodes.values()) == {"gpu-node": 4, "management-node": 1}


def test_planes_are_islands_probes_between_them_must_not_arrive_and_widths_stay_in_the_plane(planes_build: Path):
    plan = read_plan(planes_build)
    assert Counter((s.role, s.plane) for s in plan.switches.values()) == {("leaf", 1): 8, ("leaf", 2): 8, ("spine", 1): 2, ("spine", 2): 2}
    assert {plan.component[name] for name, s in plan.switches.items() if s.plane == 1} != {
        plan.component[name] for name, s in plan.switches.items() if s.plane == 2
    }
    assert len({plan.component[name] for name, s in plan.switches.items() if s.plane == 1}) == 1
    widths = ecmp_widths(plan, set(), set())
    for name, switch in plan.switches.items():
        if switch.role != "leaf":
            continue
        same = {widths[name][o] for o, other in plan.switches.items() if other.role == "leaf" and o != name and other.plane == switch.plane}
        across = {widths[name][o] for o, other in plan.switches.items() if other.role == "leaf" and other.plane != switch.plane}
        assert same == {2} and across == {0}, name
    kinds = Counter((p.kind, p.reach) for p in plan.probes)
    assert kinds == {("same rail, other unit", True): 32, ("other rail", True): 32, ("other plane", False): 4}
    for probe in plan.probes:
        source, target = (
            plan.switches[next(n.leaf for n in plan.nodes[p].nics if n.port == nic)]
            for p, nic in ((probe.source, probe.source_nic), (probe.target, probe.target_nic))
        )
        assert (source.plane == target.plane) == probe.reach and (probe.path == ()) == (not probe.reach), probe
    # a spine of plane 1 down: plane 1's leaves keep one way to each other, plane 2 keeps two
    spine = "be-spine01"
    cut = ecmp_widths(plan, {link.cable for link in plan.links_of(spine)}, {spine})
    assert {cut["be-su01-leaf1"][o] for o in ("be-su01-leaf2", "be-su02-leaf1")} == {1}
    assert {cut["be-su01-leaf5"][o] for o in ("be-su01-leaf6", "be-su02-leaf5")} == {2}


def test_a_leaf_with_no_uplinks_expects_no_session_no_route_and_no_answer_from_other_rails(lab_build: Path):
    """Rail-only with one leaf per rail (no spines): the lab expects no BGP session, ECMP width 0
    to every other leaf, probes on one rail's leaf to arrive and probes to other rails to get no
    answer; `lab run` has no uplink or spine to fail."""
    bare = _without_spines(read_plan(lab_build))
    assert len(set(bare.component.values())) == len(bare.switches)
    assert {w for by_leaf in ecmp_widths(bare, set(), set()).values() for w in by_leaf.values()} == {0}
    for probe in bare.probes:
        leaves = {n.leaf for p, nic in ((probe.source, probe.source_nic), (probe.target, probe.target_nic)) for n in bare.nodes[p].nics if n.port == nic}
        assert probe.reach == (len(leaves) == 1) and probe.path == (("leaf", "node") if probe.reach else ()), probe
    # one leaf per rail and unit here: every probe leaves its leaf, so none may arrive
    assert Counter(p.reach for p in bare.probes) == {False: 64}
    assert session.failure_rounds(bare) == []
    full = read_plan(lab_build)
    assert [name for name, *_ in session.failure_rounds(full)] == [
        f"be-su01-leaf1:{full.uplinks['be-su01-leaf1'][0].end('be-su01-leaf1').port} failed silently",
        "be-spine01 down",
    ]


def test_a_rail_only_build_plans_no_session_and_no_path_between_rails(tmp_path: Path):
    """tests/lab/rail-only.yaml built (8 nodes, one leaf per rail, no spines): what the simulated
    case above expects, from a real rail-only build: no fabric cable, no session, every leaf an
    island of its own, same-rail probes arrive on the leaf, cross-rail probes must get no answer."""
    build_dir = tmp_path / "rail-only"
    build(REPO / "tests" / "lab" / "rail-only.yaml", build_dir)
    plan = read_plan(build_dir)
    assert plan.design == "rail-only" and len(plan.switches) == 8 and not any(plan.uplinks.values())
    assert len(set(plan.component.values())) == 8  # no fabric link joins two leaves
    assert {w for by_leaf in ecmp_widths(plan, set(), set()).values() for w in by_leaf.values()} <= {0}
    assert Counter(p.reach for p in plan.probes) == {True: 64, False: 64}
    assert all(p.path == ("leaf", "node") for p in plan.probes if p.reach)
    assert session.failure_rounds(plan) == []


def test_a_leaf_serving_several_rails_reads_them_from_topology_json_else_its_one_rail(lab_build: Path, tmp_path: Path):
    """intents/small-32-gpu.yaml: 2 leaves of 4 rails each; a probe to another rail of the same
    leaf turns on the leaf, one to the other leaf's rails crosses a spine."""
    build(REPO / "intents" / "small-32-gpu.yaml", tmp_path / "small")
    plan = read_plan(tmp_path / "small")
    assert {n: s.rails for n, s in plan.switches.items()} == {
        "be-spine01": (),
        "be-spine02": (),
        "be-su01-leaf1": (1, 2, 3, 4),
        "be-su01-leaf5": (5, 6, 7, 8),
    }
    assert Counter((p.kind, p.path) for p in plan.probes) == {
        ("same rail, other node", ("leaf", "node")): 32,
        ("other rail", ("leaf", "node")): 24,
        ("other rail", ("leaf", "spine", "leaf", "node")): 8,
    }
    # one rail per leaf: topology.json writes no `rails`, the leaf's `rail` stands for it
    two_units = read_plan(lab_build)
    assert {s.rails for s in two_units.switches.values() if s.role == "leaf"} == {(r,) for r in range(1, 9)}


def test_a_top_of_rack_pair_plans_each_nodes_nics_over_both_leaves(tmp_path: Path):
    """intents/tor-64-gpu.yaml: 8 nodes whose odd NICs go to the pair's first leaf and even NICs to
    the second; every session at both ends and every probe expected to arrive, crossing a spine
    only between the two leaves."""
    build(REPO / "intents" / "tor-64-gpu.yaml", tmp_path / "tor")
    plan = read_plan(tmp_path / "tor")
    leaves = {n: s.rails for n, s in plan.switches.items() if s.role == "leaf"}
    assert sorted(leaves.values()) == [(1, 3, 5, 7), (2, 4, 6, 8)]
    assert len(plan.nodes) == 8 and all(len(node.nics) == 8 for node in plan.nodes.values())
    assert all(p.reach for p in plan.probes) and len(plan.probes) == 128
    for probe in plan.probes:
        ends = {n.leaf for p, nic in ((probe.source, probe.source_nic), (probe.target, probe.target_nic)) for n in plan.nodes[p].nics if n.port == nic}
        assert probe.path == (("leaf", "node") if len(ends) == 1 else ("leaf", "spine", "leaf", "node")), probe


def test_announced_prefixes_follow_the_leaf_aggregates():
    server = [netaddr.IPNetwork(f"10.20.0.{64 + 2 * i}/31") for i in range(28)]  # 28 ports of a /26
    assert _announced(" aggregate-address 10.20.0.64/26 summary-only\n", server) == ("10.20.0.64/26",)
    assert _announced("", server) == ("10.20.0.64/27", "10.20.0.96/28", "10.20.0.112/29")
    assert _announced(" aggregate-address 10.20.0.64/26\n", server) == ("10.20.0.64/26", "10.20.0.64/27", "10.20.0.96/28", "10.20.0.112/29")
    # a prefix from the build that is none: refused, quoted, naming the file (no traceback)
    with pytest.raises(LabError) as refused:
        _announced(" aggregate-address 10.20.0.300/26 summary-only\n", server, "configs/leaf1/frr.conf")
    assert "'10.20.0.300/26' is not an IP prefix" in str(refused.value) and "configs/leaf1/frr.conf" in str(refused.value)


def test_up_names_the_servers_by_role_the_design_and_the_rails_a_leaf_shares(lab_build: Path):
    from fabricgen.lab import report

    plan = read_plan(lab_build)
    up = session.UpReport(plan, 1.0, True, 2.0, 54, 600.0, [])
    lines = report.up_lines(up)
    assert "18 switches, 4 GPU nodes, 64 links" in lines[0] and not any(line.startswith(("design:", "leaves serving")) for line in lines)
    plan.design = "rail-only"
    plan.switches = {n: replace(s, rails=(1, 2, 3, 4)) if n == "be-su01-leaf1" else s for n, s in plan.switches.items()}
    plan.nodes = {n: replace(node, role="storage-node") if n == "gpu0004" else node for n, node in plan.nodes.items()}
    lines = report.up_lines(up)
    assert "18 switches, 4 servers (3 GPU nodes, 1 storage node), 64 links" in lines[0]
    assert "design: rail-only" in lines and "leaves serving several rails: rails 1, 2, 3, 4" in lines


def test_the_plane_summary_reads_the_widths_and_cross_plane_routes_from_the_tables(planes_build: Path):
    """ecmp_check's per-plane summary reports what the leaves' tables hold, not the plan: a lost
    next hop inside plane 1 and a route leaking into plane 2 both show (and fail the check)."""
    from fabricgen.lab.verify import Failed, Snapshot, ecmp_check, expected_widths

    plan = read_plan(planes_build)
    none = Failed(set(), set())
    tables = {name: {p: w for p, w in prefixes.items() if w} for name, prefixes in expected_widths(plan, none).items()}
    check = ecmp_check(plan, none, Snapshot({}, {}, tables))
    assert check.passed and "plane 1: width 2 between its leaves, 0 routes to other planes (0 planned)" in check.summary
    halved = plan.host_blocks["be-su01-leaf2"][0]
    tables["be-su01-leaf1"][halved] = 1
    tables["be-su01-leaf5"][halved] = 2  # plane 2's leaf holds a route to plane 1
    check = ecmp_check(plan, none, Snapshot({}, {}, tables))
    assert not check.passed
    assert (
        "plane 1: width 1/2 between its leaves" in check.summary
        and "plane 2: width 2 between its leaves, 1 routes to other planes (0 planned)" in check.summary
    )
