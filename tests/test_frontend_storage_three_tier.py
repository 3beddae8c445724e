"""Frontend and storage fabrics in 3 tiers: pods of leaf pairs with their own spines, joined by a
core in groups, as the backend's 3 tiers.

The expected counts are derived by hand from the catalog entries (in the comments), not from
the module's output: DGX-H100 nodes have 2 frontend + 2 storage ports at 100G (converged: 4 on
the frontend); an N9K-C93600CD-GX leaf has 28 x 100G + 8 x 400G cages, so at 1:1 it takes 28
server ports and 7 x 400G uplinks; an N9K-C9364D-GX2A spine or core has 64 x 400G."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from fabricgen.basics.errors import IntentError
from fabricgen.compiler.checks import run_checks
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.pipeline import compile_intent

FRONTEND_ASNS = "asn: {scheme: private-4byte, core: 4200100000, spine: 4200100001, leaf_first: 4200100100}"


def tier_links(build, network: Network) -> Counter:
    return Counter(link.a.device.role for link in build.fabric.links if link.network is network and link.kind is LinkKind.FABRIC)


def count(build, network: Network, role: Role) -> int:
    return sum(1 for _ in build.fabric.by_role(role, network))


@pytest.mark.slow
def test_a_32768_gpu_frontend_does_not_fit_2_tiers_and_is_built_in_3(write_intent):
    build = compile_intent(write_intent(f"gpus: 32768\nbackend:\n  asn: {{scheme: private-4byte}}\nfrontend:\n  {FRONTEND_ASNS}\n"), render=False)
    plan = build.compiled.plans[Network.FRONTEND]
    # 4,096 nodes x 4 ports, alternating over a leaf pair: 2 per leaf, 28 / 2 = 14 nodes a pair,
    # ceil(4096 / 14) = 293 pairs = 586 leaves, 7 uplinks each
    assert count(build, Network.FRONTEND, Role.LEAF) == plan.leaves == 586
    # a spine at 1:1: 32 leaves down, 32 up; a pod = 16 pairs = 32 leaves, ceil(293 / 16) = 19 pods,
    # 7 spines a pod (one per leaf uplink) = 133
    assert (plan.tiers, plan.pods, plan.pod_leaves, plan.spines) == (3, 19, 32, 133)
    assert count(build, Network.FRONTEND, Role.SPINE) == 133
    # spine k of every pod to core group k: 19 pods x 32 / g links on a 64-port core, g dividing
    # 32: g = 16 (2 links to each core, 38 ports a core) -> 7 groups x 16 = 112 cores
    assert (plan.cores, plan.links_per_core) == (112, 2) and count(build, Network.FRONTEND, Role.CORE) == 112
    assert tier_links(build, Network.FRONTEND) == {Role.LEAF: 586 * 7, Role.SPINE: 133 * 32}
    assert any("frontend: 586 leaves do not fit 2 tiers" in note for note in build.compiled.notes)
    # every leaf of a pod on every spine of its pod, every spine on every core of its group
    assert run_checks(build.compiled) == []


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("fe3") / "fe3.yaml"
    path.write_text(f"name: fe3\ngpus: 1024\nfrontend:\n  tiers: 3\n  pod_leaves: 4\n  {FRONTEND_ASNS}\noob: {{}}\n")
    return compile_intent(path)


def test_a_small_frontend_forced_into_3_tiers_of_pods(small):
    plan = small.compiled.plans[Network.FRONTEND]
    # 128 nodes / 14 a pair = 10 pairs = 20 leaves; pods of 4 leaves: 5 pods x 7 spines = 35;
    # a spine: 4 leaves down, 4 up; 7 groups, g | 4 and 5 x 4 / g <= 64: g = 1 -> 7 cores, 4 links each
    assert (plan.leaves, plan.pods, plan.spines, plan.cores, plan.links_per_core) == (20, 5, 35, 7, 4)
    assert tier_links(small, Network.FRONTEND) == {Role.LEAF: 140, Role.SPINE: 140}
    leaves = list(small.fabric.by_role(Role.LEAF, Network.FRONTEND))
    assert [leaf.pod for leaf in leaves] == [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4
    for leaf in leaves:  # one uplink to each of its own pod's 7 spines
        spines = [p.link.b.device for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC]
        assert len(spines) == 7 and {s.pod for s in spines} == {leaf.pod}, leaf.name


def test_3_tier_frontend_addresses_asns_and_bgp(small):
    asns, loopbacks = small.addresses.asns, small.addresses.loopbacks
    cores = list(small.fabric.by_role(Role.CORE, Network.FRONTEND))
    spines = list(small.fabric.by_role(Role.SPINE, Network.FRONTEND))
    assert {asns[c.name] for c in cores} == {4200100000}
    assert {s.pod: asns[s.name] for s in spines} == {pod: 4200100000 + pod for pod in range(1, 6)}  # one ASN per pod
    # the core loopbacks: the last quarter of frontend's 10.16.0.0/16
    assert loopbacks[cores[0].name] == "10.16.192.1"
    config = small.files[f"configs/{cores[0].name}.cfg"].decode()
    assert "router bgp 4200100000" in config
    # a core peers with spine 1 of every pod, 4 links each: 20 sessions, each to its pod's ASN
    remote = Counter(re.findall(r"^    remote-as (\d+)$", config, re.MULTILINE))
    assert remote == {str(4200100000 + pod): 4 for pod in range(1, 6)}
    summary = small.files["summary.md"].decode()
    assert "- 3 tiers: 5 pods of up to 4 leaves and 7 spines; 7 cores" in summary
    assert "- links: 512 server to leaf, 140 leaf to spine, 140 spine to core" in summary


def test_3_tier_settings_on_2_tiers_are_refused(write_intent):
    with pytest.raises(IntentError) as caught:
        compile_intent(write_intent("gpus: 256\nfrontend:\n  tiers: 2\n  pod_leaves: 4\n"))
    assert "pod_leaves only apply to 3 tiers" in caught.value.report()


def test_a_pod_that_splits_a_leaf_pair_is_refused(write_intent):
    with pytest.raises(Exception) as caught:
        compile_intent(write_intent(f"gpus: 1024\nfrontend:\n  tiers: 3\n  pod_leaves: 5\n  {FRONTEND_ASNS}\n"))
    assert "frontend.pod_leaves" in caught.value.report() and "splits a leaf pair" in caught.value.report()
