"""Fabric invariants: a correct fabric passes; each broken invariant is caught, naming device and port."""

from __future__ import annotations

import pytest

from fabricgen.compiler.addressing import InterfaceAddress
from fabricgen.compiler.checks import (
    addresses_unique,
    asns_as_planned,
    ecn_below_pfc_trigger,
    every_leaf_reaches_every_spine,
    leaf_ratio_holds,
    link_speeds_match,
    one_optic_per_cage,
    ports_used_once,
    rails_aligned,
    run_checks,
    switch_ports_exist,
)
from fabricgen.compiler.design.graph import Link, LinkKind, Network, Port
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import INTENTS


@pytest.fixture
def compiled():
    """A fresh 256-GPU fabric the test may break."""
    return compile_intent(INTENTS / "cisco-256-gpu.yaml", render=False).compiled


def test_whitepaper_fabrics_pass_every_check(whitepaper):
    for build in whitepaper.values():
        assert run_checks(build.compiled) == []


def first_fabric_link(c, leaf="be-su01-leaf1"):
    return next(p.link for p in c.fabric.devices[leaf].ports.values() if p.link.kind is LinkKind.FABRIC)


def test_port_used_by_two_links(compiled):
    link = first_fabric_link(compiled)
    node = compiled.fabric.devices["gpu0001"]
    nic = Port(node, "nic9", 9, 0, 400)
    compiled.fabric.links.append(Link("BE-99999", Network.BACKEND, LinkKind.HOST, nic, link.b, link.cable))
    [problem] = ports_used_once(compiled)
    assert (problem.device, problem.port) == (link.b.device.name, link.b.name)
    assert "BE-99999" in problem.message and link.id in problem.message


@pytest.mark.parametrize("how", ["same object", "another port object", "another device object"])
def test_port_used_twice_is_found_past_the_identity_pass(compiled, how):
    """ports_used_once's quick pass compares ports by identity: a second link on a port of the same
    device and name is still found when its end is the same object, a copy, or a copy on a twin device."""
    from dataclasses import replace

    from fabricgen.compiler.design.graph import Device

    link = first_fabric_link(compiled)
    end = link.b
    if how == "another port object":
        end = replace(end, link=None)
    elif how == "another device object":
        twin = replace(end.device, ports={})
        end = replace(end, device=twin, link=None)
        twin.ports[end.name] = end
        assert isinstance(twin, Device) and twin is not link.b.device
    node = compiled.fabric.devices["gpu0001"]
    nic = node.ports["nic9"] = Port(node, "nic9", 9, 0, 400)  # registered, so only the reused end can fail the quick pass
    compiled.fabric.links.append(Link("BE-99999", Network.BACKEND, LinkKind.HOST, nic, end, link.cable))
    [problem] = ports_used_once(compiled)
    assert (problem.device, problem.port) == (link.b.device.name, link.b.name) and "BE-99999" in problem.message


def test_speed_mismatch(compiled):
    link = first_fabric_link(compiled)
    link.b.speed_gbps = 100
    [problem] = link_speeds_match(compiled)
    assert problem.device == "be-su01-leaf1" and problem.port == link.a.name and "100G" in problem.message


def test_port_beyond_the_switch_model(compiled):
    port = first_fabric_link(compiled).a
    port.cage = 65
    problems = list(switch_ports_exist(compiled))
    assert any(p.device == "be-su01-leaf1" and p.port == port.name and "no cage 65" in p.message for p in problems)


def test_cage_at_a_speed_it_cannot_run(compiled):
    port = first_fabric_link(compiled).a
    port.speed_gbps = 800
    problems = list(switch_ports_exist(compiled))
    assert any(p.port == port.name and "cannot run a 800G" in p.message for p in problems)


def test_nic_on_the_wrong_rail(compiled):
    node = compiled.fabric.devices["gpu0003"]
    nic = node.ports["nic2"]
    nic.cage = 5  # pretend this cable came from NIC 5
    [problem] = rails_aligned(compiled)
    assert problem.device == "be-su01-leaf2" and "rail 5" in problem.message and "gpu0003" in problem.message


def test_leaf_missing_a_spine(compiled):
    leaf = compiled.fabric.devices["be-su01-leaf3"]
    lost = [p for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC and p.link.other(p).device.name == "be-spine02"]
    for port in lost:
        compiled.fabric.links.remove(port.link)
        del leaf.ports[port.name]
    problems = list(every_leaf_reaches_every_spine(compiled))
    assert [p.device for p in problems] == ["be-su01-leaf3"]
    assert "0 links to be-spine02" in problems[0].message and "3 of 4 spines" in problems[0].message
    # and fewer uplinks breaks the 1:1 ratio on that leaf
    [ratio] = leaf_ratio_holds(compiled)
    assert ratio.device == "be-su01-leaf3" and "1.33:1 (12800G:9600G)" in ratio.message


def test_run_checks_shares_one_port_walk_with_the_same_findings(compiled):
    """run_checks walks the leaves' and spines' ports once for leaf_ratio_holds and
    every_leaf_reaches_every_spine: what they find there is what each finds on its own."""
    leaf = compiled.fabric.devices["be-su01-leaf3"]
    for port in [p for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC][:3]:
        compiled.fabric.links.remove(port.link)
        del leaf.ports[port.name]
    alone = [*leaf_ratio_holds(compiled), *every_leaf_reaches_every_spine(compiled)]
    assert len(alone) >= 2 and {p.device for p in alone} == {"be-su01-leaf3"}
    assert [p for p in run_checks(compiled) if p.device == "be-su01-leaf3"] == alone


def test_run_checks_shares_one_switch_port_walk_with_the_same_findings(compiled):
    """run_checks walks every switch's ports once for switch_ports_exist, one_optic_per_cage and
    ecn_below_pfc_trigger: what they find is what each finds on its own, in the same order."""
    leaf = first_fabric_link(compiled).a
    leaf.cage = 65  # beyond the model
    other = first_fabric_link(compiled, "be-su01-leaf2").a
    other.speed_gbps = 800  # a speed its cage cannot run
    first, second = list(compiled.fabric.devices["be-spine01"].ports.values())[:2]
    second.cage, second.optic = first.cage, "QDD-400G-FR4-S"  # a second port in its first one's cage, wanting another optic
    alone = [*switch_ports_exist(compiled), *one_optic_per_cage(compiled), *ecn_below_pfc_trigger(compiled)]
    found = ("no cage 65", "cannot run a 800G", "a cage holds one transceiver")
    assert all(any(phrase in p.message for p in alone) for phrase in found)
    assert [p for p in run_checks(compiled) if p in alone] == alone


def test_the_switch_port_walk_finds_each_switchs_data_port_speeds(compiled):
    """ecn_below_pfc_trigger reads a switch's data-port speeds off the shared walk, which counts
    ports at a speed only outside copper cages: equal to the speeds taken port by port, on copper
    OOB switches (1, 10 and 100G) and on a leaf with a port at a new speed."""
    from fabricgen.compiler.checks.ports import switch_ports as _switch_ports
    from fabricgen.compiler.checks.qos import _front_panel_speeds

    first_fabric_link(compiled).a.speed_gbps = 200
    walked = _switch_ports(compiled)
    switches = list(compiled.fabric.switches())
    assert {1, 10} <= walked.speeds[compiled.fabric.devices["oob01"]] and 200 in walked.speeds[compiled.fabric.devices["be-su01-leaf1"]]
    assert all(walked.speeds[device] == _front_panel_speeds(device) for device in switches)


def test_duplicate_address(compiled):
    a = first_fabric_link(compiled, "be-su01-leaf1").a
    b = first_fabric_link(compiled, "be-su01-leaf2").a
    compiled.addresses.interfaces[b] = compiled.addresses.interfaces[a]
    problems = list(addresses_unique(compiled))
    assert any(p.device == "be-su01-leaf2" and p.port == b.name and "also on be-su01-leaf1" in p.message for p in problems)


def test_overlapping_subnets(compiled):
    plan = compiled.addresses
    plan.nic_blocks["be-su01-leaf2"] = plan.nic_blocks["be-su01-leaf1"]
    problems = list(addresses_unique(compiled))
    assert any("overlaps" in p.message and p.device in {"be-su01-leaf1", "be-su01-leaf2"} for p in problems)


def test_nic_outside_the_advertised_block(compiled):
    plan = compiled.addresses
    leaf_port = compiled.fabric.devices["be-su01-leaf1"].ports["Ethernet1/1"]
    plan.interfaces[leaf_port] = InterfaceAddress("10.99.0.0", 31, "10.99.0.1")
    problems = list(addresses_unique(compiled))
    assert any(p.device == "be-su01-leaf1" and p.port == "Ethernet1/1" and "outside" in p.message for p in problems)


def _break_address(c, how: str) -> None:
    plan = c.addresses
    leaf1, leaf2 = (first_fabric_link(c, leaf) for leaf in ("be-su01-leaf1", "be-su01-leaf2"))
    if how == "loopback":  # a loopback twice: the same address and the same /32
        plan.loopbacks["be-su01-leaf2"] = plan.loopbacks["be-su01-leaf1"]
    elif how == "link /31":  # a fabric link's /31 inside another's, different addresses
        spine_end = plan.interfaces[leaf1.b]
        plan.interfaces[leaf2.b] = InterfaceAddress(spine_end.peer, 31, spine_end.address)
        plan.interfaces[leaf2.a] = InterfaceAddress("10.250.0.1", 31, None)
    elif how == "NIC block":
        plan.nic_blocks["be-su01-leaf2"] = plan.nic_blocks["be-su01-leaf1"]
    elif how == "NIC outside":
        port = c.fabric.devices["be-su01-leaf1"].ports["Ethernet1/1"]
        plan.interfaces[port] = InterfaceAddress("10.99.0.0", 31, "10.99.0.1")
    elif how == "NIC outside, leaf as a":  # a host link built the other way round: the leaf's end is `a`
        link = c.fabric.devices["be-su01-leaf1"].ports["Ethernet1/1"].link
        link.a, link.b = link.b, link.a
        plan.interfaces[link.a] = InterfaceAddress("10.99.0.0", 31, "10.99.0.1")
    elif how == "uplink /31":  # an OOB uplink's /31 (another link kind) on a fabric link's
        uplink = next(link for link in c.fabric.links if link.kind is LinkKind.UPLINK)
        spine_end = plan.interfaces[leaf1.b]
        plan.interfaces[uplink.b] = InterfaceAddress(spine_end.peer, 31, spine_end.address)
    elif how == "link /8":  # an unused address, but its subnet (a prefix length of its own) covers the pools
        plan.interfaces[leaf2.b] = InterfaceAddress("10.250.0.1", 8, None)


@pytest.mark.parametrize("how", ["loopback", "link /31", "NIC block", "NIC outside", "NIC outside, leaf as a", "uplink /31", "link /8", None])
def test_address_clash_is_seen_without_labels(compiled, how):
    """addresses_unique labels problems only when its quick pass finds one: both must agree."""
    from fabricgen.compiler.checks.addresses import _address_problems, _addresses_clash

    if how is not None:
        _break_address(compiled, how)
    problems = list(_address_problems(compiled))
    assert _addresses_clash(compiled) == bool(problems) == (how is not None)
    assert list(addresses_unique(compiled)) == problems


def test_shared_leaf_asn(compiled):
    compiled.addresses.asns["be-su01-leaf2"] = compiled.addresses.asns["be-su01-leaf1"]
    [problem] = asns_as_planned(compiled)
    assert problem.device == "be-su01-leaf1" and "be-su01-leaf2" in problem.message


def test_leaf_with_the_spine_asn(compiled):
    compiled.addresses.asns["be-su01-leaf4"] = 64512
    [problem] = asns_as_planned(compiled)
    assert problem.device == "be-su01-leaf4" and "spines' ASN" in problem.message


def test_every_problem_is_reported_not_just_the_first(compiled):
    compiled.addresses.asns["be-su01-leaf2"] = compiled.addresses.asns["be-su01-leaf1"]
    first_fabric_link(compiled).b.speed_gbps = 100
    assert len(run_checks(compiled)) >= 2


def test_a_cage_holds_one_transceiver():
    c = compile_intent(INTENTS.parent / "bench" / "intents" / "bench-8192.yaml", render=False).compiled
    spine = c.fabric.devices["be-spine01"]
    port = spine.ports["Ethernet1/1/2"]
    port.optic = "QDD-400G-DR4-S"
    [problem] = one_optic_per_cage(c)
    assert (problem.device, problem.port) == ("be-spine01", "Ethernet1/1/2")
    assert "cage 1" in problem.message and "OSFP-800G-DR8" in problem.message
