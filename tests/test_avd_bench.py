"""bench/avd, fabricgen beside Arista AVD: a fabricgen build of an EVPN fabric turned into AVD's
eos_designs inputs for the same fabric (bench/avd/avd_inputs.py, no pyavd needed), the check of
AVD's configs against fabricgen's plan, and, where pyavd is installed (only bench/.venv-avd has it:
`make bench-avd`, then `bench/.venv-avd/bin/python -m pytest tests/test_avd_bench.py`), AVD itself
run on those inputs."""

from __future__ import annotations

import importlib.util
import ipaddress
import sys
from pathlib import Path

import pytest

import fabricgen
from fabricgen.basics.errors import FabricgenError
from fabricgen.build.build_dir import AddressRow, CableRow, Topology, read_rows

AVD_BENCH = Path(__file__).resolve().parents[1] / "bench" / "avd"


def load(name: str):
    """A module of bench/avd, as compare.py imports its sibling (bench/avd on sys.path)."""
    sys.path.insert(0, str(AVD_BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, AVD_BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(AVD_BENCH))


avd_inputs = load("avd_inputs")
compare = load("compare")

SWITCH = {"model": "N9K-C9364D-GX2A", "nos": "nxos"}
# 16 leaves (2 units of 8 rails), 2 spines, two parallel links from each leaf to each spine; two
# tenants over per-rail segments, so leaves carry different segments
TINY = {
    "name": "avd-tiny",
    "gpus": 64,
    "gpu_node": "DGX-H100",
    "backend": {
        "scalable_unit_gpus": 32,
        "ratio": "1:1",
        "leaf": SWITCH,
        "spine": SWITCH,
        "routing": "vxlan-evpn",
        "evpn": {"segments": "per-rail", "tenants": [{"name": "train", "nodes": "1-4"}, {"name": "infer"}]},
    },
}


@pytest.fixture(scope="module")
def tiny():
    build = fabricgen.compile(TINY)
    return build, avd_inputs.avd_inputs(build)


def nodes_by_name(inputs: dict) -> dict[str, dict]:
    shared = next(iter(inputs.values()))
    return {node["name"]: node for key in ("spine", "l3leaf") for node in shared[key]["nodes"]}


def test_every_switch_is_an_avd_node_with_its_asn_loopback_and_vtep(tiny):
    build, inputs = tiny
    topology = Topology.model_validate_json(build.files["topology.json"])
    vteps = {row.device: row.address for row in read_rows(build.files["ip-plan.csv"].decode(), AddressRow, "ip-plan.csv", FabricgenError) if row.kind == "vtep"}
    switches = [node for node in topology.nodes if node.role in ("leaf", "spine")]
    nodes = nodes_by_name(inputs)
    assert sorted(inputs) == sorted(node.id for node in switches) == sorted(nodes)
    assert len(switches) == 18
    for switch in switches:
        node = nodes[switch.id]
        assert inputs[switch.id]["type"] == {"leaf": "l3leaf", "spine": "spine"}[switch.role], switch.id
        assert node["bgp_as"] == str(switch.asn), switch.id
        assert node["loopback_ipv4_address"] == switch.loopback, switch.id
        if switch.role == "leaf":
            assert f"{node['vtep_loopback_ipv4_address']}/32" == vteps[switch.id], switch.id
    leaf_ids = [node["id"] for node in next(iter(inputs.values()))["l3leaf"]["nodes"]]
    assert len(set(leaf_ids)) == len(leaf_ids) == 16  # AVD's id: unique per node type


def test_every_fabric_link_is_an_avd_uplink_with_its_ports_and_addresses(tiny):
    build, inputs = tiny
    shared = next(iter(inputs.values()))
    pool = shared["l3leaf"]["defaults"]["uplink_ipv4_pool"]
    nodes = nodes_by_name(inputs)
    addresses = {(row.device, row.interface): row.address for row in read_rows(build.files["ip-plan.csv"].decode(), AddressRow, "ip-plan.csv", FabricgenError)}
    cables = [c for c in read_rows(build.files["cabling.csv"].decode(), CableRow, "cabling.csv", FabricgenError) if c.kind == "fabric"]
    assert len(cables) == 64
    uplinks = {}
    for cable in cables:
        leaf = nodes[cable.a_device]
        i = leaf["uplink_interfaces"].index(cable.a_port)
        assert (leaf["uplink_switches"][i], leaf["uplink_switch_interfaces"][i]) == (cable.b_device, cable.b_port), cable.cable_id
        subnet = avd_inputs.uplink_subnets(leaf, pool)[i]  # the /31 AVD derives for this uplink
        assert addresses[(cable.b_device, cable.b_port)] == f"{subnet[0]}/31", cable.cable_id  # the spine: the first address
        assert addresses[(cable.a_device, cable.a_port)] == f"{subnet[1]}/31", cable.cable_id
        uplinks.setdefault(cable.a_device, []).append(cable.a_port)
    for name, ports in uplinks.items():  # no uplink AVD would configure that fabricgen did not cable
        assert sorted(nodes[name]["uplink_interfaces"]) == sorted(ports), name
    all_subnets = [s for name in uplinks for s in avd_inputs.uplink_subnets(nodes[name], pool)]
    assert len(set(all_subnets)) == len(all_subnets) and all(s.subnet_of(ipaddress.ip_network(pool)) for s in all_subnets)


def test_every_segment_and_server_port_is_in_avds_network_services(tiny):
    build, inputs = tiny
    shared = next(iter(inputs.values()))
    nodes = nodes_by_name(inputs)
    svis = {}  # VLAN -> (tenant, VRF, SVI)
    for tenant in shared["tenants"]:
        for vrf in tenant["vrfs"]:
            for svi in vrf["svis"]:
                svis[svi["id"]] = (tenant, vrf, svi)
    adapters = {(a["switches"][0], a["switch_ports"][0]): a for server in shared["servers"] for a in server["adapters"]}
    carried = set()
    for name, config in build.configs.items():
        if config.evpn is None or not config.evpn.vtep:
            continue
        for segment in config.evpn.segments:
            tenant, vrf, svi = svis[segment.vlan]
            assert vrf["name"] == segment.vrf and svi["ip_address_virtual"] == segment.gateway and svi["rt_override"] == segment.route_target, segment.name
            assert svi.get("vni_override", tenant["mac_vrf_vni_base"] + segment.vlan) == segment.vni, segment.name
            assert svi["tags"] == [segment.name] and segment.name in nodes[name]["filter"]["tags"], (name, segment.name)
            for port in segment.members:
                assert adapters[(name, port)]["vlans"] == str(segment.vlan) and adapters[(name, port)]["mode"] == "access", (name, port)
                carried.add((name, port))
        assert len(nodes[name]["filter"]["tags"]) == len(config.evpn.segments), name  # no segment it does not carry
        for vrf in config.evpn.vrfs:
            assert any(
                v["name"] == vrf.name and v["vrf_vni"] == vrf.l3_vni and v["rt_override"] == vrf.route_target for t in shared["tenants"] for v in t["vrfs"]
            ), vrf.name
    assert len(svis) == 16 and carried == set(adapters) and len(adapters) == 64  # 8 nodes x 8 NICs


def test_scoped_inputs_keep_each_server_port_once_on_its_own_switch(tiny):
    _, inputs = tiny
    scoped = compare.servers_scoped(inputs)
    every = sorted((a["switches"][0], a["switch_ports"][0]) for server in next(iter(inputs.values()))["servers"] for a in server["adapters"])
    kept = sorted(
        (name, a["switch_ports"][0]) for name, data in scoped.items() for server in data["servers"] for a in server["adapters"] if a["switches"] == [name]
    )
    assert kept == every and sum(len(s["adapters"]) for data in scoped.values() for s in data["servers"]) == len(every)
    assert all(not scoped[name]["servers"] for name, data in inputs.items() if data["type"] == "spine")


def test_an_ebgp_fabric_is_refused_naming_why():
    backend = {key: value for key, value in TINY["backend"].items() if key != "evpn"} | {"routing": "ebgp"}
    build = fabricgen.compile({**TINY, "name": "avd-ebgp", "backend": backend})
    with pytest.raises(avd_inputs.NotExpressible, match="backend: not a VXLAN EVPN fabric"):
        avd_inputs.avd_inputs(build)


def test_the_check_names_a_config_that_differs_from_fabricgens_plan():
    plan = {
        "leaf1": {"asn": 64513, "loopback": "10.0.0.1", "ports": {"Ethernet1/5": "10.8.0.1/31", "Ethernet1/6": "10.8.0.3/31"}},
        "leaf2": {"asn": 64514, "loopback": "10.0.0.2", "ports": {}},
    }
    config = "hostname leaf1\n!\ninterface Ethernet1/5\n   ip address 10.8.0.1/31\n!\ninterface Ethernet1/6\n   ip address 10.8.0.5/31\n!\ninterface Loopback0\n   ip address 10.0.0.1/32\n!\nrouter bgp 64513\n   router-id 10.0.0.1\n!\nend\n"
    assert compare.mismatches({"leaf1": config}, plan) == ["leaf1 Ethernet1/6: 10.8.0.5/31, fabricgen 10.8.0.3/31", "leaf2: no config"]
    assert compare.mismatches({"leaf1": config.replace("router bgp 64513", "router bgp 65000")}, {"leaf1": plan["leaf1"]})[0] == "leaf1: no 'router bgp 64513'"


@pytest.mark.skipif(
    importlib.util.find_spec("pyavd") is None,
    reason="pyavd is not installed in this Python: it lives only in bench/.venv-avd (make bench-avd; then bench/.venv-avd/bin/python -m pytest tests/test_avd_bench.py)",
)
def test_avd_builds_every_device_of_the_tiny_fabric_as_fabricgen_planned_it(tiny):
    build, inputs = tiny
    configs, stages = compare.run_avd(inputs)
    assert sorted(configs) == sorted(inputs) and set(stages) == {"validate_inputs", "get_avd_facts", "get_device_structured_config", "get_device_config"}
    topology = Topology.model_validate_json(build.files["topology.json"])
    for node in topology.nodes:
        if node.id in inputs:
            assert f"\nrouter bgp {node.asn}\n" in configs[node.id], node.id
    assert compare.mismatches(configs, avd_inputs.expected(build, inputs)) == []
    assert compare.run_avd(compare.servers_scoped(inputs))[0] == configs  # the scoped variant writes the same configs
