"""3 tiers: pods of scalable units with their own spines, a core in groups; planes; per-tier checks.

The expected counts are the DGX SuperPOD tables of shared/DOMAIN.md §3 (64-port 400G switches,
8-GPU nodes, 32-node scalable units), not the module's own output."""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from collections import Counter
from fractions import Fraction

import pytest

from fabricgen.basics.errors import DesignError
from fabricgen.compiler.checks import run_checks
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.design.three_tier import size_three_tier
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import build_refused, needs_frr
from tests.nxos_parse import parse_nxos
from tests.test_render_sonic import vtysh_dryrun

SUPERPOD = {4096: (128, 128, 64), 8192: (256, 256, 128), 16384: (512, 512, 256)}


@pytest.mark.parametrize(("gpus", "expected"), SUPERPOD.items())
def test_the_superpod_tables(gpus, expected):
    s = size_three_tier(nodes=gpus // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert (s.leaves, s.spines, s.cores) == expected
    assert s.leaf_spine_links == s.spine_core_links == gpus  # every tier as many cables as GPUs
    assert s.pod_sus == 4 and s.pod_spines == 32  # a pod: 4 units, one spine per leaf uplink
    # every core port used once: each pod's plane spine sends links_per_spine_per_core to each core
    assert s.pods * s.links_per_spine_per_core == 64
    assert s.group_cores * s.links_per_spine_per_core == s.spine_uplinks == 32


def test_32768_gpus_fit_and_65536_is_the_limit_of_64_port_switches():
    s = size_three_tier(nodes=32768 // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert (s.leaves, s.spines, s.cores, s.pods) == (1024, 1024, 512, 32)
    with pytest.raises(DesignError) as error:
        size_three_tier(nodes=2 * 65536 // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert "at most 64 pods" in error.value.problems[0].message
    assert "8,192 nodes (65,536 GPU NICs)" in error.value.problems[0].hint


def test_an_oversubscribed_leaf_needs_fewer_pod_spines():
    s = size_three_tier(nodes=1024, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64, leaf_ratio=Fraction(2))
    assert s.leaf_uplinks == s.pod_spines == 16
    assert s.leaf_spine_links == 8192 // 2


def test_a_ratio_the_leaf_cannot_hold_says_what_would():
    with pytest.raises(DesignError) as error:
        size_three_tier(nodes=1024, rails=8, su_nodes=48, leaf_ports=64, spine_ports=64, core_ports=64)
    assert "needs 48 downlinks and 48 uplinks" in error.value.problems[0].message
    assert "at most 32 nodes" in error.value.problems[0].hint


def test_a_cluster_too_big_for_two_tiers_is_told_its_three_tier_size(write_intent):
    with pytest.raises(DesignError) as error:
        compile_intent(write_intent("gpus: 8192\nbackend: {tiers: 2}\n"), render=False)
    hint = error.value.problems[0].hint
    assert "for a 3-tier design (256 leaves, 256 spines in 8 pods, 128 core switches" in hint


# --- whole builds: intents through the compiler ---------------------------------------------------


def tier_cables(build) -> Counter:
    """Backend cables by the role of their lower end: GPU node (to leaf), leaf (to spine), spine (to core)."""
    return Counter(link.a.device.role for link in build.fabric.links if link.network is Network.BACKEND)


@pytest.mark.parametrize(("gpus", "expected"), SUPERPOD.items())
def test_superpod_intents_build_the_tables_leaf_spine_and_core_counts(write_intent, gpus, expected):
    # the default switch is the 64-port 400G N9K-C9364D-GX2A, the default node an 8 x 400G DGX
    build = compile_intent(write_intent(f"gpus: {gpus}\n"), render=False)
    counts = tuple(sum(1 for _ in build.fabric.by_role(role)) for role in (Role.LEAF, Role.SPINE, Role.CORE))
    assert counts == expected
    assert tier_cables(build) == {Role.GPU_NODE: gpus, Role.LEAF: gpus, Role.SPINE: gpus}
    assert "do not fit 2 tiers" in " ".join(build.compiled.notes)


def test_a_4096_gpu_build_bom_counts_every_switch_optic_and_cable(write_intent):
    build = compile_intent(write_intent("gpus: 4096\n"))
    rows = list(csv.DictReader(io.StringIO(build.files["bom.csv"].decode())))
    backend = {r["pid"]: int(r["quantity"]) for r in rows if r["section"] == "Backend network"}
    # 128 + 128 + 64 switches; an optic in every switch port (GPU end: the NIC's own); a cable per link
    assert backend == {"N9K-C9364D-GX2A": 320, "QDD-400G-DR4-S": 4096 + 2 * 4096 * 2, "CB-M12-M12-SMF": 3 * 4096}
    summary = build.files["summary.md"].decode()
    assert "128 leaves, 128 spines (32 per pod), 64 cores (32 groups of 2" in summary
    assert "links: 4096 GPU NIC to leaf, 4096 leaf to spine, 4096 spine to core" in summary


@pytest.mark.slow
def test_32768_gpus_build_with_every_cable_and_port_once_in_bom_cabling_and_configs(write_intent):
    build = compile_intent(write_intent("gpus: 32768\nbackend:\n  asn: {scheme: private-4byte}\n"))
    fabric, files = build.fabric, build.files
    assert [sum(1 for _ in fabric.by_role(r)) for r in (Role.LEAF, Role.SPINE, Role.CORE)] == [1024, 1024, 512]
    assert tier_cables(build) == {Role.GPU_NODE: 32768, Role.LEAF: 32768, Role.SPINE: 32768}

    cabling = list(csv.DictReader(io.StringIO(files["cabling.csv"].decode())))
    assert len(cabling) == len(fabric.links) == len({r["cable_id"] for r in cabling})
    ends = Counter((r[f"{side}_device"], r[f"{side}_port"]) for r in cabling for side in ("a", "b"))
    assert max(ends.values()) == 1  # every port once
    assert set(ends) == {(d.name, p.name) for d in fabric.devices.values() for p in d.ports.values()}

    bom = {r["pid"]: int(r["quantity"]) for r in csv.DictReader(io.StringIO(files["bom.csv"].decode())) if r["section"] == "Backend network"}
    optics = sum(1 for r in cabling for side in ("a", "b") if r[f"{side}_optic"])
    assert bom == {"N9K-C9364D-GX2A": 2560, "QDD-400G-DR4-S": optics, "CB-M12-M12-SMF": len(cabling)}

    # the configs: every switch port exactly once (by its cable id), a BGP session per fabric link end
    mentions: Counter = Counter()
    neighbors = 0
    switches = list(fabric.switches())
    for device in switches:
        text = files[f"configs/{device.name}.cfg"].decode()
        mentions.update(re.findall(r"^  description (BE-[SC]?\d+) to ", text, re.MULTILINE))
        neighbors += len(re.findall(r"^  neighbor \S+$", text, re.MULTILINE))
    for link in fabric.links:
        assert mentions[link.id] == (1 if link.kind is LinkKind.HOST else 2), link
    assert neighbors == 2 * sum(1 for link in fabric.links if link.kind is LinkKind.FABRIC)
    assert {p for p in files if p.startswith("configs/")} == {f"configs/{d.name}.cfg" for d in switches}


def test_the_2_byte_asn_range_running_out_names_both_ways_out(write_intent):
    with pytest.raises(DesignError) as error:
        compile_intent(write_intent("gpus: 32768\n"), render=False)
    [problem] = error.value.problems
    assert problem.field == ("backend", "asn", "scheme")
    assert "use scheme: private-4byte, or leaves: per-pod (every pod reuses the same 32 leaf ASNs, with allowas-in)" in problem.hint
    assert "the fabric needs 1,057 ASNs, the range has 1,023" in problem.hint


SMALL = "gpus: 32\nbackend:\n  tiers: 3\n  scalable_unit_gpus: 16\n  pod_gpus: 16\n"


def test_asns_follow_rfc_7938_per_tier_and_reuse_leaf_asns_per_pod_when_asked(write_intent):
    unique = compile_intent(write_intent(SMALL), render=False)
    asns = unique.addresses.asns
    fabric = unique.fabric
    assert {asns[d.name] for d in fabric.by_role(Role.CORE)} == {64512}
    assert {(d.pod, asns[d.name]) for d in fabric.by_role(Role.SPINE)} == {(1, 64513), (2, 64514)}
    # leaves after room for 64 pods' spine ASNs (the most a 64-port core takes), so a new pod moves none
    assert sorted(asns[d.name] for d in fabric.by_role(Role.LEAF)) == list(range(64577, 64577 + 16))
    assert all(c.bgp.allowas_in == 0 for c in unique.configs.values() if c.bgp)

    reused = compile_intent(write_intent(SMALL + "  asn: {leaves: per-pod}\n"), render=False)
    by_pod = {pod: sorted(reused.addresses.asns[d.name] for d in reused.fabric.by_role(Role.LEAF) if d.pod == pod) for pod in (1, 2)}
    assert by_pod[1] == by_pod[2] == list(range(64577, 64577 + 8))
    leaves = [c for c in reused.configs.values() if c.role is Role.LEAF]
    assert leaves and all(c.bgp.allowas_in == 1 for c in leaves)
    assert all(c.bgp.allowas_in == 0 for c in reused.configs.values() if c.role is not Role.LEAF)


def test_every_tier_peers_with_the_tier_above_in_its_own_pod_and_core_group(write_intent):
    build = compile_intent(write_intent(SMALL), render=False)
    spines_of = {d.name: d for d in build.fabric.by_role(Role.SPINE)}
    cores_of = {d.name: d for d in build.fabric.by_role(Role.CORE)}
    for name, config in build.configs.items():
        device = build.fabric.devices[name]
        groups = {n.group for n in config.bgp.neighbors}
        peers = {n.description.split()[0] for n in config.bgp.neighbors}
        if device.role is Role.LEAF:
            assert groups == {"SPINES"} and {spines_of[p].pod for p in peers} == {device.pod}
            assert config.bgp.maximum_paths == 2
        elif device.role is Role.SPINE:
            assert groups == {"LEAVES", "CORES"}
            assert {cores_of[p].core_group for p in peers if p in cores_of} == {device.core_group}
            assert config.bgp.maximum_paths == 8  # its 8 links to the one core of its group
        else:
            assert groups == {"SPINES"} and {spines_of[p].core_group for p in peers} == {device.core_group}
            assert {spines_of[p].pod for p in peers} == {1, 2}  # every pod


@needs_frr
@pytest.mark.frr
def test_frr_accepts_every_3_tier_frr_conf_and_routing_twin(write_intent, tmp_path):
    build = compile_intent(write_intent(SMALL + "  asn: {leaves: per-pod}\n  leaf: {nos: sonic}\n  core: {nos: sonic}\n"))
    confs = {p.split("/")[1]: data.decode() for p, data in build.files.items() if p.endswith("frr.conf")}
    twins = {p: data.decode() for p, data in build.files.items() if p.startswith("lab/frr/")}
    assert {build.fabric.devices[n].role for n in confs} == {Role.LEAF, Role.CORE} and twins  # spines are NX-OS
    leaf = next(text for name, text in confs.items() if build.fabric.devices[name].role is Role.LEAF)
    assert " neighbor SPINES allowas-in 1\n" in leaf
    assert vtysh_dryrun(confs | {p.replace("/", "-"): t for p, t in twins.items()}, tmp_path) == {}


def test_nxos_leaves_accept_their_own_asn_back_once_when_asns_are_reused(write_intent):
    build = compile_intent(write_intent(SMALL + "  asn: {leaves: per-pod}\n"))
    leaf = parse_nxos(build.files["configs/be-su01-leaf1.cfg"].decode())
    template = leaf.router_bgp[leaf.router_bgp.index("  template peer SPINES") :]
    assert "      allowas-in 1" in template[: next(i for i, line in enumerate(template) if line.startswith("  neighbor "))]
    core = parse_nxos(build.files["configs/be-core01.cfg"].decode())
    assert "allowas-in" not in "\n".join(core.router_bgp)


def test_evpn_leaves_accept_their_own_asn_back_in_the_evpn_family_not_in_a_vrf(write_intent):
    """With VXLAN EVPN the routes of the same leaf of another pod arrive as EVPN routes: allowas-in
    goes into the l2vpn evpn family (NX-OS: per neighbor address family, cisco.nxos
    nxos_bgp_neighbor_af), never into the tenant VRF, which has no neighbors (bgpd refused the line
    there: tests/test_frr_loads.py)."""
    build = compile_intent(write_intent(SMALL + "  asn: {leaves: per-pod}\n  routing: vxlan-evpn\n"))
    bgp = parse_nxos(build.files["configs/be-su01-leaf1.cfg"].decode()).router_bgp
    template = bgp[bgp.index("  template peer SPINES") : next(i for i, line in enumerate(bgp) if line.startswith("  neighbor "))]
    assert "      allowas-in 1" in template[template.index("    address-family l2vpn evpn") :]
    vrfs = bgp[next(i for i, line in enumerate(bgp) if line.startswith("  vrf ")) :]  # the tenant VRFs close the block
    assert "    bestpath as-path multipath-relax" in vrfs and not any("allowas-in" in line for line in vrfs)


@pytest.mark.slow
def test_growing_by_two_pods_keeps_every_existing_address_asn_and_cable(write_intent):
    """With the core count pinned to the final size, 4,096 -> 6,144 GPUs only adds."""

    def built(gpus):
        build = compile_intent(write_intent(f"gpus: {gpus}\nbackend:\n  core: {{count: 128}}\n"), render=False)
        ports = {(p.device.name, p.name): a.cidr for p, a in build.addresses.interfaces.items()}
        cables = {(l.a.device.name, l.a.name, l.b.device.name, l.b.name) for l in build.fabric.links}
        return build, ports, cables

    small, small_ports, small_cables = built(4096)
    large, large_ports, large_cables = built(6144)
    assert (small.sizing.pods, large.sizing.pods) == (4, 6) and large.sizing.cores == 128
    assert {n: large.addresses.loopbacks[n] for n in small.addresses.loopbacks} == small.addresses.loopbacks
    assert {n: large.addresses.asns[n] for n in small.addresses.asns} == small.addresses.asns
    assert {k: large_ports[k] for k in small_ports} == small_ports
    assert small_cables <= large_cables


# --- the checks hold per tier -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_three_tier(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "small.yaml"
    path.write_text("name: small\n" + SMALL)
    return compile_intent(path, render=False).compiled


def test_a_clean_3_tier_fabric_passes_every_check(small_three_tier):
    assert run_checks(small_three_tier) == []


def test_a_spine_wired_to_the_wrong_core_group_is_named(small_three_tier):
    spine = next(small_three_tier.fabric.by_role(Role.SPINE))
    group = spine.core_group
    spine.core_group = 2 if group == 1 else 1
    try:
        problems = [p for p in run_checks(small_three_tier) if p.device == spine.name]
    finally:
        spine.core_group = group
    assert any("expected 8" in p.message and "ECMP width would be 0 of 1 cores" in p.message for p in problems)
    assert any("outside its own core group" in p.message for p in problems)


def test_asn_mistakes_at_each_tier_are_named(small_three_tier):
    asns = small_three_tier.addresses.asns
    spines = [d.name for d in small_three_tier.fabric.by_role(Role.SPINE)]
    leaf = next(small_three_tier.fabric.by_role(Role.LEAF)).name
    saved = dict(asns)
    try:
        asns[spines[0]] = asns[spines[-1]]  # pod 1's first spine takes pod 2's ASN
        asns[leaf] = asns[next(small_three_tier.fabric.by_role(Role.CORE)).name]
        messages = [p.message for p in run_checks(small_three_tier)]
    finally:
        asns.clear()
        asns.update(saved)
    assert "the spines of pod 1 use 2 different ASNs; they share one" in messages
    assert any(m.startswith("the spines of pod 2 use ASN") and m.endswith("also used by the spines of pod 1") for m in messages)
    assert f"ASN {saved[next(small_three_tier.fabric.by_role(Role.CORE)).name]} is the cores' ASN" in messages


def test_a_spine_ratio_beyond_the_plan_is_named_per_spine(small_three_tier):
    plans = dict(small_three_tier.plans)
    strict = dataclasses.replace(small_three_tier, plans={n: dataclasses.replace(p, spine_built_ratio=Fraction(1, 2)) for n, p in plans.items()})
    problems = [p for p in run_checks(strict) if "downlink:uplink" in p.message]
    assert len(problems) == 4 and all("more than the 1:2 asked" in p.message for p in problems)


def test_addresses_never_overlap_across_pods(small_three_tier):
    plan = small_three_tier.addresses
    pod_two = next(d for d in small_three_tier.fabric.by_role(Role.SPINE) if d.pod == 2)
    saved = plan.loopbacks[pod_two.name]
    plan.loopbacks[pod_two.name] = plan.loopbacks[next(small_three_tier.fabric.by_role(Role.SPINE)).name]
    try:
        problems = [p for p in run_checks(small_three_tier) if p.device == pod_two.name]
    finally:
        plan.loopbacks[pod_two.name] = saved
    assert any("is also on" in p.message for p in problems)


# --- bad input says what would work ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "field", "says"),
    [
        ("tiers: 3\n  spine_ratio: '1:8'", ("backend", "spine_ratio"), "a spine ratio of at least 1:7"),
        ("tiers: 3\n  pod_gpus: 2048", ("backend", "pod_gpus"), "use pod_gpus: 1024 or less (4 scalable units)"),
        ("planes: 3", ("backend", "planes"), "use a number of planes that divides 8: 1, 2, 4, 8"),
        ("tiers: 3\n  spine: {count: 100}", ("backend", "spine", "count"), "set count: 128 or remove it"),
        ("tiers: 3\n  core: {count: 100}", ("backend", "core", "count"), "use one of 64, 128, 256, 512, 1024, or remove the count"),
        ("tiers: 3\n  planes: 2\n  core: {count: 129}", ("backend", "core", "count"), "pin a multiple of 2"),
    ],
)
def test_a_3_tier_design_that_cannot_hold_says_what_would(write_intent, backend, field, says):
    with pytest.raises(DesignError) as error:
        compile_intent(write_intent(f"gpus: 4096\nbackend:\n  {backend}\n"), render=False)
    [problem] = error.value.problems
    assert problem.field == field and says in problem.hint


def test_3_tier_settings_on_a_2_tier_fabric_are_refused(write_intent):
    errors = build_refused(write_intent("gpus: 256\nbackend:\n  tiers: 2\n  pod_gpus: 256\n"))
    assert "pod_gpus only apply to 3 tiers; remove them or set tiers: 3" in errors


# --- planes -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tiers", [2, 3])
def test_planes_are_independent_fabrics_for_their_groups_of_rails(write_intent, tiers):
    gpus = 256 if tiers == 2 else 8192
    build = compile_intent(write_intent(f"gpus: {gpus}\nbackend:\n  tiers: {tiers}\n  planes: 2\n"), render=False)
    for link in build.fabric.links:
        if link.kind is LinkKind.FABRIC:
            assert link.a.device.plane == link.b.device.plane is not None
        elif link.kind is LinkKind.HOST and link.network is Network.BACKEND:
            assert link.b.device.plane == (1 if link.a.cage <= 4 else 2)  # NICs 1-4 in plane 1
    spines = list(build.fabric.by_role(Role.SPINE))
    assert Counter(s.plane for s in spines) == {1: len(spines) // 2, 2: len(spines) // 2}
    if tiers == 3:  # 4 rails per plane: a 32-leaf spine takes 8 units a pod
        assert build.sizing.pod_sus == 8 and build.sizing.pods == 4
        assert tier_cables(build) == {Role.GPU_NODE: gpus, Role.LEAF: gpus, Role.SPINE: gpus}
