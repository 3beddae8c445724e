"""Addresses and ASNs: /31s, gateways, aggregates, pools, RFC 7938 ASNs, growth stability."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, ip_network

import pytest

from fabricgen.basics.errors import DesignError
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.pipeline import compile_intent


def test_every_link_is_a_31_and_the_spine_takes_the_even_address(whitepaper):
    build = whitepaper[256]
    plan = build.addresses
    for link in build.fabric.links:
        if link.kind not in (LinkKind.HOST, LinkKind.FABRIC, LinkKind.UPLINK):
            continue  # management and console ports are not routed point-to-point
        a, b = plan.interfaces[link.a], plan.interfaces[link.b]
        assert a.prefixlen == b.prefixlen == 31
        assert ip_network(a.cidr, strict=False) == ip_network(b.cidr, strict=False), link
        assert a.peer == b.address and b.peer == a.address
        if link.kind is LinkKind.FABRIC:
            assert int(IPv4Address(b.address)) % 2 == 0, f"{link}: the spine takes the even address"


def test_gpu_nic_gateway_is_its_leaf_port(whitepaper):
    build = whitepaper[256]
    plan = build.addresses
    for link in build.fabric.links:
        if link.kind is not LinkKind.HOST:
            continue
        nic, leaf_port = link.a, link.b
        assert plan.gateways[nic] == plan.interfaces[leaf_port].address
        assert int(IPv4Address(plan.interfaces[leaf_port].address)) % 2 == 0


@pytest.mark.parametrize("gpus, network, leaves", [(256, Network.BACKEND, 8), (512, Network.FRONTEND, 10)])
def test_each_leaf_advertises_one_block_holding_its_nics(whitepaper, gpus, network, leaves):
    build = whitepaper[gpus]  # 256's backend and 512's frontend are eBGP with a /31 per server port
    plan = build.addresses
    blocks = {leaf: IPv4Network(block) for leaf, block in plan.nic_blocks.items()}
    names = [leaf.name for leaf in build.fabric.by_role(Role.LEAF, network)]
    assert len(names) == leaves and all(blocks[leaf].prefixlen == 26 for leaf in names)  # 32 NICs or 28 ports x /31
    for port, address in plan.interfaces.items():
        if port.device.role is Role.GPU_NODE and port.link.network is network:
            leaf = port.link.other(port).device.name
            assert IPv4Address(address.address) in blocks[leaf]


def test_loopbacks_and_router_ids(whitepaper):
    build = whitepaper[512]
    loopbacks = build.addresses.loopbacks
    switches = [d for d in build.fabric.switches() if d.network is Network.BACKEND]
    assert len(set(loopbacks.values())) == len(loopbacks) == 24 + 14  # backend and frontend switches
    assert len(switches) == 24
    leaf_pool, spine_pool = IPv4Network("10.0.0.0/17"), IPv4Network("10.0.128.0/18")
    for device in switches:
        pool = leaf_pool if device.role is Role.LEAF else spine_pool
        assert IPv4Address(loopbacks[device.name]) in pool


def test_rfc7938_asns(whitepaper):
    build = whitepaper[512]
    asns = build.addresses.asns
    spines = {asns[d.name] for d in build.fabric.by_role(Role.SPINE, Network.BACKEND)}
    leaves = [asns[d.name] for d in build.fabric.by_role(Role.LEAF, Network.BACKEND)]
    assert spines == {64512}
    assert leaves == list(range(64513, 64513 + 16))
    # the frontend fabric has ASNs of its own, apart from the backend's
    assert {asns[d.name] for d in build.fabric.by_role(Role.SPINE, Network.FRONTEND)} == {65000}
    assert [asns[d.name] for d in build.fabric.by_role(Role.LEAF, Network.FRONTEND)] == list(range(65001, 65011))


def test_subnet_mode_puts_a_gateway_per_leaf(write_intent):
    build = compile_intent(write_intent("gpus: 256\nbackend: {nic_addressing: subnet}\n"), render=False)
    plan = build.addresses
    for leaf in build.fabric.by_role(Role.LEAF):
        gateway = plan.nic_subnet_gateways[leaf.name]
        subnet = IPv4Network(gateway.cidr, strict=False)
        assert str(subnet) == plan.nic_blocks[leaf.name] and subnet.prefixlen == 26
        nics = [p.link.other(p) for p in leaf.ports.values() if p.link.kind is LinkKind.HOST]
        for nic in nics:
            assert plan.gateways[nic] == gateway.address
            assert IPv4Address(plan.interfaces[nic].address) in subnet
        # host ports are switchports in subnet mode, not routed
        assert all(p not in plan.interfaces for p in leaf.ports.values() if p.link.kind is LinkKind.HOST)


def test_adding_a_unit_keeps_every_existing_address(write_intent):
    small = compile_intent(write_intent("gpus: 256\nbackend: {spine: {count: 8}}\n", name="one"), render=False)
    grown = compile_intent(write_intent("gpus: 512\n", name="two"), render=False)

    def by_name(build):
        return {(port.device.name, port.name): address.cidr for port, address in build.addresses.interfaces.items()} | {
            (d, "lo"): a for d, a in build.addresses.loopbacks.items()
        }

    before, after = by_name(small), by_name(grown)
    assert before.items() <= after.items()
    assert small.addresses.asns.items() <= grown.addresses.asns.items()


def test_pool_too_small_says_what_size_would_do(write_intent):
    with pytest.raises(DesignError) as caught:
        compile_intent(write_intent("gpus: 2048\nbackend:\n  pools: {gpu_nics: 10.4.0.0/22}\n"), render=False)
    [problem] = caught.value.problems
    assert problem.field == ("backend", "pools", "gpu_nics") and problem.line == 3
    assert "too small" in problem.message and "/20" in problem.hint  # 64 leaves x 64 addresses


def test_two_byte_asns_run_out(write_intent):
    with pytest.raises(DesignError) as caught:
        compile_intent(write_intent("gpus: 2048\nbackend:\n  asn: {leaf_first: 65500}\n"), render=False)
    [problem] = caught.value.problems
    assert "outside the private-2byte range" in problem.message and "private-4byte" in problem.hint


def test_four_byte_asns(write_intent):
    build = compile_intent(write_intent("gpus: 256\nbackend:\n  asn: {scheme: private-4byte}\n"), render=False)
    asns = build.addresses.asns
    assert asns["be-spine01"] == 4200000000 and asns["be-su01-leaf1"] == 4200000001
