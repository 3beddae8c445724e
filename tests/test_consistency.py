"""The cluster agrees with itself hop by hop: lossless class, DSCP mapping, MTU."""

from __future__ import annotations

from fabricgen.compiler.checks.configs import lossless_class_agrees
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import build_refused


def test_a_leaf_whose_lossless_priority_differs_is_refused_naming_the_hop(write_intent):
    path = write_intent("gpus: 256\nbackend:\n  qos_overrides:\n    be-su01-leaf3: {lossless_priority: 4}\n")
    errors = build_refused(path)
    # one problem per leaf-spine pair, on the leaf's uplink, pointing at the override's line
    hops = [line for line in errors.splitlines() if "hop BE-" in line]
    assert len(hops) == 4
    assert hops[0].strip().startswith(f"{path}:4: backend.qos_overrides.be-su01-leaf3: be-su01-leaf3 Ethernet1/33: hop BE-")
    assert "to be-spine01 Ethernet1/17: PFC priorities 4 vs 3; DSCP 24 -> 4 vs 3, DSCP 26 -> 4 vs 3" in hops[0]


def test_the_same_override_on_every_switch_is_consistent(write_intent):
    names = [f"be-su01-leaf{r}" for r in range(1, 9)] + [f"be-spine{s:02d}" for s in range(1, 5)]
    overrides = "".join(f"    {name}: {{roce_dscp: [26]}}\n" for name in names)
    build = compile_intent(write_intent("gpus: 256\nbackend:\n  qos_overrides:\n" + overrides))
    assert list(lossless_class_agrees(build.compiled, build.configs)) == []
    assert build.configs["be-spine01"].qos.roce_dscp == (26,)


def test_an_ecn_max_above_the_pfc_trigger_is_refused(write_intent):
    errors = build_refused(write_intent("gpus: 256\nbackend:\n  qos:\n    ecn:\n      400G: {min_kbytes: 600, max_kbytes: 20000, drop_probability: 7}\n"))
    assert "backend.qos.ecn.400G" in errors and "the PFC trigger is 4000 KB" in errors


def test_a_fabric_mtu_too_small_for_vxlan_is_refused(write_intent):
    errors = build_refused(write_intent("gpus: 256\nbackend:\n  routing: vxlan-evpn\n  mtu: 9000\n"))
    assert "backend.mtu: be-spine01 Ethernet1/1: MTU 9000 is below the 9050 bytes this hop must carry" in errors


def test_a_host_whose_nic_disagrees_with_its_leaf_is_named(whitepaper):
    """Host files follow their leaf, so this guards the builder: a NIC pausing another priority
    or trusting another DSCP map is reported on its first hop, naming server, port and cable."""
    from dataclasses import replace

    from fabricgen.compiler.checks.configs import hosts_agree_with_leaves

    build = whitepaper[256]
    assert hosts_agree_with_leaves(build.compiled, build.configs, build.hosts) == []
    host = build.hosts["gpu0005"]
    nic = host.nics[0]
    broken = replace(nic, lossless_priorities=(4,), dscp_to_priority=((24, 4), (26, 4), (48, 7)), mtu=9300)
    hosts = dict(build.hosts)
    hosts["gpu0005"] = replace(host, nics=(broken,) + host.nics[1:])
    [problem] = hosts_agree_with_leaves(build.compiled, build.configs, hosts)
    assert problem.device == nic.switch and problem.port == nic.switch_port
    assert f"hop {nic.cable} from gpu0005 {nic.port}" in problem.message
    assert "PFC priorities 4 vs 3" in problem.message and "NIC MTU 9300 above the leaf port's 9216" in problem.message


def test_a_storage_class_below_the_roce_priority_agrees_end_to_end(write_intent):
    """PFC priorities are compared as sets in ascending order on both sides, so a storage class
    numbered below RoCE's is not a false mismatch; the NICs pause exactly what the leaf pauses."""
    build = compile_intent(write_intent("gpus: 64\nbackend:\n  qos: {storage_dscp: [16], storage_priority: 2}\n"))
    leaf = build.configs["be-su01-leaf1"]
    assert leaf.qos.lossless_priorities == (2, 3)
    nics = [nic for host in build.hosts.values() for nic in host.nics if nic.switch == "be-su01-leaf1"]
    assert nics and all(nic.lossless_priorities == (2, 3) and dict(nic.dscp_to_priority)[16] == 2 for nic in nics)
