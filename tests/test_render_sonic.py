"""SONiC output: config_db.json within SONiC's YANG constraints, frr.conf accepted by FRR itself."""

from __future__ import annotations

import ipaddress
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fabricgen.compiler.design.graph import Device, LinkKind, Network, Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.nos.sonic.render import config_db_text
from tests.conftest import VTYSH, needs_frr
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations


def sonic_switches(build) -> list[Device]:
    """The switches running SONiC: every leaf and spine; the OOB switches stay on NX-OS."""
    return [d for d in build.fabric.switches() if d.nos == "sonic"]


def config_dbs(build):
    return {d.name: json.loads(build.files[f"configs/{d.name}/config_db.json"]) for d in sonic_switches(build)}


def frr_confs(build):
    return {d.name: build.files[f"configs/{d.name}/frr.conf"].decode() for d in sonic_switches(build)}


def vtysh_dryrun(files: dict[str, str], directory: Path) -> dict[str, str]:
    """Run FRR's own parser on each file; returns {name: error output} for the ones it rejects."""
    rejected = {}
    for name, text in files.items():
        path = directory / f"{name}.frr.conf"
        path.write_text(text)
        result = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            rejected[name] = result.stdout + result.stderr
    return rejected


@pytest.mark.parametrize("gpus", [256, 512])
def test_two_files_per_switch(whitepaper_sonic, gpus):
    build = whitepaper_sonic[gpus]
    sonic = sonic_switches(build)
    oob = list(build.fabric.by_role(Role.OOB_SWITCH))
    expected = {f"configs/{d.name}/{f}" for d in sonic for f in ("config_db.json", "frr.conf")}
    expected |= {f"configs/{d.name}.cfg" for d in oob}
    assert {p for p in build.files if p.startswith("configs/")} == expected
    assert {d.role for d in sonic} == {Role.LEAF, Role.SPINE} and all(d.nos == "nxos" for d in oob)
    per_network = Counter(d.network for d in sonic)
    assert per_network == ({Network.BACKEND: 12, Network.FRONTEND: 10} if gpus == 256 else {Network.BACKEND: 24, Network.FRONTEND: 14})


@pytest.mark.parametrize("gpus", [256, 512])
def test_config_db_meets_the_yang_constraints(whitepaper_sonic, gpus):
    for name, db in config_dbs(whitepaper_sonic[gpus]).items():
        assert violations(db, whitepaper_sonic[gpus].configs[name].nos_release) == [], name


@needs_frr
@pytest.mark.frr
@pytest.mark.parametrize("gpus", [256, pytest.param(512, marks=pytest.mark.slow)])
def test_frr_accepts_every_frr_conf(whitepaper_sonic, gpus, tmp_path):
    confs = frr_confs(whitepaper_sonic[gpus])
    assert {whitepaper_sonic[gpus].fabric.devices[name].network for name in confs} == {Network.BACKEND, Network.FRONTEND}
    assert vtysh_dryrun(confs, tmp_path) == {}


SONIC = {"nos": "sonic"}
BIG = {"model": "N9364E-SG2-O", "nos": "sonic"}


@needs_frr
@pytest.mark.frr
@pytest.mark.parametrize(
    "backend",
    [
        {"nic_addressing": "subnet", "leaf": SONIC, "spine": SONIC},
        {"ratio": "3:1", "bfd": {"enabled": False}, "leaf": SONIC, "spine": SONIC},
        {"asn": {"scheme": "private-4byte"}, "qos": {"enabled": False}, "leaf": SONIC, "spine": SONIC},
        {"scalable_unit_gpus": 512, "leaf": BIG, "spine": BIG},
    ],
    ids=["subnet", "3to1-no-bfd", "4byte-no-qos", "51t-breakout"],
)
@pytest.mark.slow
def test_frr_and_yang_accept_other_designs(write_intent, tmp_path, backend):
    build = compile_intent(write_intent(yaml.safe_dump({"gpus": 1024, "backend": backend})))
    assert all(config.nos == "sonic" for config in build.configs.values())
    for name, db in config_dbs(build).items():
        assert violations(db, build.configs[name].nos_release) == [], name
    assert vtysh_dryrun(frr_confs(build), tmp_path) == {}


def test_routing_only_in_frr_conf(whitepaper_sonic):
    db = config_dbs(whitepaper_sonic[256])["be-su01-leaf1"]
    assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
    assert not any(table.startswith("BGP") for table in db)
    assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "64513"  # the same ASN frr.conf uses
    assert "router bgp 64513" in frr_confs(whitepaper_sonic[256])["be-su01-leaf1"]


def test_ports_and_addresses_match_the_graph(whitepaper_sonic):
    build = whitepaper_sonic[512]
    plan = build.addresses
    dbs = config_dbs(build)
    assert {build.fabric.devices[name].network for name in dbs} == {Network.BACKEND, Network.FRONTEND}
    for name, db in dbs.items():
        device = build.fabric.devices[name]
        spec = build.compiled.plan_of(device.network).spec
        ports = [p for p in device.ports.values() if p.front_panel]
        assert set(db["PORT"]) == {p.name for p in ports}, name  # not eth0, not the console
        assert f"Loopback0|{plan.loopbacks[name]}/32" in db["LOOPBACK_INTERFACE"]
        for port in ports:
            where = (name, port.name)
            row = db["PORT"][port.name]
            peer = port.link.other(port)
            assert row["description"] == f"{port.link.id} to {peer.device.name} {peer.name}", where
            assert row["speed"] == str(port.speed_gbps * 1000) and row["mtu"] == str(spec.mtu), where
            assert row["admin_status"] == "up", where
            overlay = build.compiled.evpn_of(device.network)
            if overlay is not None and port.link.kind is LinkKind.HOST:
                vlan = f"Vlan{overlay.segment_of[peer].vlan}"
                assert db["VLAN_MEMBER"][f"{vlan}|{port.name}"] == {"tagging_mode": "untagged"}, where
                assert port.name not in db["INTERFACE"], where
            else:
                assert f"{port.name}|{plan.interfaces[port].cidr}" in db["INTERFACE"], where
            if spec.qos.enabled:
                assert db["PORT_QOS_MAP"][port.name]["pfc_enable"] == str(spec.qos.lossless_priority), where
                assert db["PFC_WD"][port.name]["action"] == "drop", where
            else:
                assert port.name not in db.get("PORT_QOS_MAP", {}) and port.name not in db.get("PFC_WD", {}), where


def test_sonic_names_ports_by_first_lane(whitepaper_sonic):
    db = config_dbs(whitepaper_sonic[256])["be-spine01"]
    assert db["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3,4,5,6,7"
    assert db["PORT"]["Ethernet8"]["index"] == "2" and db["PORT"]["Ethernet8"]["alias"] == "etp2"
    assert sorted(db["PORT"], key=lambda n: int(n[8:]))[-1] == "Ethernet504"  # cage 64


def test_breakout_ports_on_sonic(write_intent):
    build = compile_intent(
        write_intent("gpus: 1024\nbackend:\n  scalable_unit_gpus: 512\n  leaf: {model: N9364E-SG2-O, nos: sonic}\n  spine: {model: N9364E-SG2-O, nos: sonic}\n")
    )
    db = config_dbs(build)["be-spine01"]
    ports = db["PORT"]
    assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "2x400G"} and len(db["BREAKOUT_CFG"]) == 64
    assert violations(db, build.configs["be-spine01"].nos_release) == []
    assert ports["Ethernet0"]["lanes"] == "0,1,2,3" and ports["Ethernet4"]["lanes"] == "4,5,6,7"
    assert ports["Ethernet0"]["alias"] == "etp1a" and ports["Ethernet4"]["alias"] == "etp1b"
    assert ports["Ethernet0"]["index"] == ports["Ethernet4"]["index"] == "1"
    assert ports["Ethernet4"]["speed"] == "400000"


def test_qos_tables(whitepaper_sonic):
    db = config_dbs(whitepaper_sonic[256])["be-su01-leaf1"]
    dscp = db["DSCP_TO_TC_MAP"]["FABRICGEN"]
    assert (dscp["24"], dscp["26"], dscp["48"], dscp["0"]) == ("3", "3", "7", "0") and len(dscp) == 64
    wred = db["WRED_PROFILE"]["ROCE_LOSSLESS_400G"]
    assert wred["ecn"] == "ecn_all" and wred["green_min_threshold"] == str(950 * 1024)  # the GX2A's published 400G value
    assert db["QUEUE"]["Ethernet0|3"] == {"scheduler": "FABRICGEN_LOSSLESS", "wred_profile": "ROCE_LOSSLESS_400G"}
    assert db["SCHEDULER"][db["QUEUE"]["Ethernet0|7"]["scheduler"]]["type"] == "STRICT"
    profile = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]
    assert int(profile["xoff"]) > 0 and int(profile["size"]) == int(profile["xon"]) + int(profile["xoff"])
    assert db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] == "100"


def test_headroom_grows_with_cable_length_and_speed():
    from fabricgen.compiler.qos import lossless_headroom

    short, long = lossless_headroom(400, 9216, 5), lossless_headroom(400, 9216, 300)
    # about 505 bytes per metre of round trip at 400G
    assert 140_000 < long.xoff_bytes - short.xoff_bytes < 160_000
    assert lossless_headroom(800, 9216, 100).xoff_bytes > lossless_headroom(400, 9216, 100).xoff_bytes


@pytest.mark.parametrize("gpus", [256, 512])
def test_frr_conf_sessions_match_both_ends(whitepaper_sonic, gpus):
    build = whitepaper_sonic[gpus]
    confs = frr_confs(build)
    remote_as = {}
    for name, text in confs.items():
        for address, asn in re.findall(r"^ neighbor (\S+) remote-as (\d+)$", text, re.M):
            remote_as[(name, address)] = int(asn)
    fabric_links = [link for link in build.fabric.links if link.kind is LinkKind.FABRIC]
    assert {link.network for link in fabric_links} == {Network.BACKEND, Network.FRONTEND}
    plan = build.addresses
    for link in fabric_links:
        leaf, spine = link.a, link.b
        assert remote_as[(leaf.device.name, plan.interfaces[spine].address)] == plan.asns[spine.device.name], link
        assert remote_as[(spine.device.name, plan.interfaces[leaf].address)] == plan.asns[leaf.device.name], link
    assert len(remote_as) == 2 * len(fabric_links)


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_switch_has_its_management_address_in_the_management_vrf(whitepaper_sonic, gpus):
    build = whitepaper_sonic[gpus]
    plan = build.addresses
    vlan = build.compiled.intent.oob.vlan
    addresses = []
    for name, db in config_dbs(build).items():
        device = build.fabric.devices[name]
        port = device.ports["eth0"]
        oob = port.link.other(port).device
        assert not port.front_panel and port.link.kind is LinkKind.MANAGEMENT and oob.role is Role.OOB_SWITCH, name
        address, gateway = plan.management[port], plan.management_gateways[port]
        assert db["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "true"}}, name
        assert db["MGMT_PORT"] == {"eth0": {"admin_status": "up", "alias": "eth0"}}, name
        assert db["MGMT_INTERFACE"] == {f"eth0|{address.cidr}": {"gwaddr": gateway}}, name
        # the gateway is the VLAN interface of the OOB switch eth0 is cabled to, as its NX-OS config says
        svi = parse_nxos(build.files[f"configs/{oob.name}.cfg"].decode()).interfaces[f"Vlan{vlan}"]
        assert f"ip address {gateway}/{address.prefixlen}" in svi, (name, oob.name)
        assert ipaddress.ip_interface(address.cidr) in ipaddress.ip_interface(f"{gateway}/{address.prefixlen}").network
        addresses.append(address.address)
    assert len(addresses) == len(set(addresses)), "two switches share a management address"


def test_the_constraint_checker_catches_what_sonic_would_refuse(whitepaper_sonic):
    db = json.loads(json.dumps(config_dbs(whitepaper_sonic[256])["be-su01-leaf1"]))
    db["PORT"]["Ethernet0"]["speed"] = "400G"
    db["PORT"]["Ethernet0"]["mtu"] = "9300"
    db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "[DSCP_TO_TC_MAP|FABRICGEN]"
    db["WRED_PROFILE"]["ROCE_LOSSLESS_400G"]["green_max_threshold"] = "1"
    db["PFC_WD"]["Ethernet0"]["detection_time"] = "50"
    db["BGP_NEIGHBOR"] = {"10.0.0.1": {"asn": "64512"}}
    del db["INTERFACE"]["Ethernet8"]
    db["MGMT_PORT"]["mgmt0"] = {"admin_status": "up"}
    [key] = db["MGMT_INTERFACE"]
    db["MGMT_INTERFACE"]["mgmt0|10.0.0.5/24"] = {"gwaddr": "10.0.1.1"}
    db["MGMT_INTERFACE"][key]["gwaddr"] = "gateway"
    found = "\n".join(violations(db))
    for expected in (
        "speed",
        "mtu 9300",
        "plain names",
        "max >= min",
        "detection",
        "routing table",
        "no bare 'Ethernet8'",
        "eth<n>",
        "not another host of 10.0.0.0/24",
        "'gateway' is not an address",
    ):
        assert expected in found, expected


@pytest.mark.parametrize(
    "document",
    [
        {},
        {"PORT": {}, "VLAN": {"Vlan100": {"members": []}}},
        {"DEVICE_METADATA": {"localhost": {"hostname": 'leaf\u00e9 "1"\n'}}, "SWITCH_HASH": {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP"]}}},
        {"nested": [[], {}, [1, True, False, None, {"k": [{"x": "y"}]}]]},
        {"a float": {"x": 1.5}},  # not config_db's: json.dumps writes it
        {"a key that is not a string": {3: "x"}},
        {"a tuple": (1, 2)},
    ],
)
def test_config_db_text_is_json_dumps_indent_4(document):
    assert config_db_text(document) == json.dumps(document, indent=4)


def test_config_db_files_are_json_dumps_indent_4(whitepaper_sonic):
    for gpus in (256, 512):
        for device in sonic_switches(whitepaper_sonic[gpus]):
            text = whitepaper_sonic[gpus].files[f"configs/{device.name}/config_db.json"].decode()
            assert text == json.dumps(json.loads(text), indent=4) + "\n", device.name


def build_on_7060x6(write_intent):
    """Leaves and spines on the built-in Arista 7060X6-64PE, the SONiC model with a public
    platform definition (its lanes and names: tests/test_builtin_sonic_platform.py)."""
    return compile_intent(
        write_intent(
            "gpus: 1024\nbackend:\n  scalable_unit_gpus: 512\n  leaf: {model: DCS-7060X6-64PE, nos: sonic}\n  spine: {model: DCS-7060X6-64PE, nos: sonic}\n"
        )
    )


def test_every_sonic_config_names_its_platform_or_the_build_says_why_not(whitepaper_sonic, write_intent):
    mapped = build_on_7060x6(write_intent)
    for db in config_dbs(mapped).values():
        assert db["DEVICE_METADATA"]["localhost"]["platform"] == "x86_64-arista_7060x6_64pe"
    # the built-in Cisco models have no public SONiC platform definition: generic lanes, and a note
    build = whitepaper_sonic[256]
    notes = {n.split()[3]: n for n in build.compiled.notes if n.startswith("UNVERIFIED SONiC platform: ")}  # one per model
    models = {d.model for d in sonic_switches(build)}
    assert set(notes) == models and "N9K-C9364D-GX2A" in models
    assert all("device/cisco/ is empty" in note and "will not load as is" in note for note in notes.values())
    assert all("platform" not in db["DEVICE_METADATA"]["localhost"] for db in config_dbs(build).values())
