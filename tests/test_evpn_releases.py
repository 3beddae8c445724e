"""EVPN right for the target release: NX-OS VTEPs enable every feature their EVPN lines belong to,
SONiC gets its anycast gateway only where the release has one (SAG, master) and is refused with the
minimum release elsewhere, and config_db carries only what its release's YANG models accept."""

from __future__ import annotations

import json

import pytest
import yaml

from fabricgen.basics.errors import CheckError
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import INTENTS
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations


@pytest.fixture(scope="module")
def cisco_512():
    return compile_intent(INTENTS / "cisco-512-gpu.yaml")


def test_every_evpn_leaf_enables_fabric_forwarding_before_using_it(cisco_512):
    leaves = spines = 0
    for device in cisco_512.fabric.switches():
        if cisco_512.compiled.evpn_of(device.network) is None or device.role not in (Role.LEAF, Role.SPINE):
            continue
        lines = parse_nxos(cisco_512.files[f"configs/{device.name}.cfg"].decode()).lines
        uses = [n for n, line in enumerate(lines) if line.strip().startswith("fabric forwarding")]
        if device.role is Role.LEAF:
            leaves += 1
            enabled = lines.index("feature fabric forwarding")  # ValueError: missing
            assert uses and enabled < uses[0], device.name
            # and the rest a VTEP's lines need, each before its first use
            for feature, first_use in (
                ("feature interface-vlan", "interface Vlan"),
                ("feature vn-segment-vlan-based", "  vn-segment"),
                ("feature nv overlay", "interface nve1"),
            ):
                assert lines.index(feature) < next(n for n, line in enumerate(lines) if line.startswith(first_use)), (device.name, feature)
            assert lines.index("nv overlay evpn") < lines.index("feature fabric forwarding"), device.name
        else:
            spines += 1
            assert "feature fabric forwarding" not in lines and not uses, device.name
            assert "feature nv overlay" not in lines and "nv overlay evpn" in lines, device.name
    assert leaves == 16 and spines == 8


def _sonic_512(tmp_path, leaf_release: str, **edits):
    data = yaml.safe_load((INTENTS / "cisco-512-gpu.yaml").read_text())
    data["name"] = f"sonic-512-{leaf_release}"
    for role in ("leaf", "spine"):
        data["backend"][role]["nos"] = "sonic"
    data["backend"]["leaf"]["nos_release"] = leaf_release
    for path, value in edits.items():
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    intent = tmp_path / f"sonic-512-{leaf_release}.yaml"
    intent.write_text(yaml.safe_dump(data))
    return intent


def test_sonic_evpn_leaves_on_202411_are_refused_naming_master(tmp_path):
    with pytest.raises(CheckError) as refused:
        compile_intent(_sonic_512(tmp_path, "202411"))
    message = str(refused.value)
    assert "backend.leaf.nos_release" in message
    assert "SONiC 202411): the EVPN anycast gateway of every segment needs SONiC master or later" in message
    assert "set nos_release: master for this role" in message


def test_sonic_evpn_leaves_on_master_render_sag_and_pass_masters_yang(tmp_path):
    build = compile_intent(_sonic_512(tmp_path, "master"))
    leaves = [c for c in build.configs.values() if c.role == Role.LEAF and c.network == "backend"]
    assert len(leaves) == 16
    for config in leaves:
        db = json.loads(build.files[f"configs/{config.hostname}/config_db.json"])
        assert config.nos_release == "master"
        assert db["SAG"] == {"GLOBAL": {"gateway_mac": config.evpn.anycast_gateway_mac}}
        gateways = [row for key, row in db["VLAN_INTERFACE"].items() if row.get("static_anycast_gateway") == "true"]
        assert len(gateways) == len(config.evpn.segments)
        assert violations(db, "master") == [], config.hostname
        # the same document is not one 202605 or earlier accepts
        assert any("SAG: no such table before SONiC master" in v for v in violations(db, "202511")), config.hostname


@pytest.fixture(scope="module")
def sonic_202411(tmp_path_factory):
    """The 256-GPU whitepaper cluster (eBGP, no EVPN) with SONiC leaves and spines on 202411."""
    data = yaml.safe_load((INTENTS / "cisco-256-gpu.yaml").read_text())
    for role in ("leaf", "spine"):
        data["backend"][role].update(nos="sonic", nos_release="202411")
    intent = tmp_path_factory.mktemp("sonic-202411") / "sonic-202411.yaml"
    intent.write_text(yaml.safe_dump(data))
    return compile_intent(intent)


def _db(build, name):
    return json.loads(build.files[f"configs/{name}/config_db.json"])


def test_a_202411_build_passes_202411s_yang_and_master_only_fields_are_caught(sonic_202411):
    name = "be-su01-leaf1"
    assert sonic_202411.configs[name].nos_release == "202411"
    db = _db(sonic_202411, name)
    assert violations(db, "202411") == []
    planted = json.loads(json.dumps(db))
    planted["SAG"] = {"GLOBAL": {"gateway_mac": "00:00:5e:00:01:01"}}
    planted["VLAN"] = {"Vlan10": {"vlanid": "10"}}
    planted["VLAN_INTERFACE"] = {"Vlan10": {"static_anycast_gateway": "true"}, "Vlan10|10.9.0.1/24": {}}
    found = violations(planted, "202411")
    assert "SAG: no such table before SONiC master (target 202411)" in found
    assert "VLAN_INTERFACE|Vlan10.static_anycast_gateway: no such field before SONiC master (target 202411)" in found
    assert violations(planted, "master") == []


def test_values_202411_refuses_are_caught_on_202411_only(sonic_202411):
    db = _db(sonic_202411, "be-su01-leaf1")
    port = next(iter(db["PORT_QOS_MAP"].keys() - {"global"}))
    db["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] = ""
    db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = ["SRC_IP", "DST_IP", "IPV6_FLOW_LABEL"]
    db["SSH_SERVER"] = {"POLICIES": {"inactivity_timeout": "15"}}
    found = "\n".join(violations(db, "202411"))
    assert f"PORT_QOS_MAP|{port}.pfcwd_sw_enable: empty before SONiC 202505" in found
    assert "SWITCH_HASH|GLOBAL.ecmp_hash: IPV6_FLOW_LABEL is not a hash-field before SONiC 202505" in found
    assert "inactivity_timeout" not in found  # in 202411 already
    assert "SSH_SERVER|POLICIES.inactivity_timeout: no such field before SONiC 202411 (target 202405)" in violations(db, "202405")
    assert violations(db, "202505") == []
    with pytest.raises(ValueError, match="unknown SONiC release"):
        violations(db, "202311")


@pytest.mark.parametrize(("release", "field"), [("202411", None), ("202505", "")])
def test_a_disabled_watchdog_is_written_as_the_release_accepts(tmp_path, release, field):
    data = yaml.safe_load((INTENTS / "cisco-256-gpu.yaml").read_text())
    for role in ("leaf", "spine"):
        data["backend"][role].update(nos="sonic", nos_release=release)
    data["backend"].setdefault("qos", {})["pfc_watchdog"] = {"enabled": False}
    intent = tmp_path / "watchdog-off.yaml"
    intent.write_text(yaml.safe_dump(data))
    build = compile_intent(intent)
    db = _db(build, "be-su01-leaf1")
    rows = [row for key, row in db["PORT_QOS_MAP"].items() if key != "global"]
    assert rows and all(row.get("pfcwd_sw_enable") == field for row in rows)
    assert "PFC_WD" not in db or not db["PFC_WD"]
    assert violations(db, release) == []


def test_the_ipv6_flow_label_hash_is_refused_naming_its_release(tmp_path):
    data = yaml.safe_load((INTENTS / "cisco-256-gpu.yaml").read_text())
    for role in ("leaf", "spine"):
        data["backend"][role].update(nos="sonic", nos_release="202405")
    data["backend"].setdefault("load_balancing", {})["hash_fields"] = ["src-ip", "dst-ip", "ipv6-flow-label"]
    intent = tmp_path / "old-sonic.yaml"
    intent.write_text(yaml.safe_dump(data))
    with pytest.raises(CheckError) as refused:
        compile_intent(intent)
    message = str(refused.value)
    assert "SONiC 202405): hashing on the IPv6 flow label needs SONiC 202505 or later" in message
    assert "SSH" not in message  # management.access builds on 202405: only the idle timeout is left out


def _sonic_backend(tmp_path, release):
    data = yaml.safe_load((INTENTS / "cisco-256-gpu.yaml").read_text())
    for role in ("leaf", "spine"):
        data["backend"][role].update(nos="sonic", nos_release=release)
    intent = tmp_path / f"sonic-{release}.yaml"
    intent.write_text(yaml.safe_dump(data))
    return compile_intent(intent)


def test_management_access_on_202405_leaves_out_only_the_idle_timeout(tmp_path):
    build = _sonic_backend(tmp_path, "202405")
    db = _db(build, "be-su01-leaf1")
    assert db["SSH_SERVER"]["POLICIES"] == {"authentication_retries": "3", "login_timeout": "120", "ports": "22"}
    assert {t["type"] for t in db["ACL_TABLE"].values()} == {"CTRLPLANE"}  # the rest of management.access is there
    assert violations(db, "202405") == []
    [note] = [n for n in build.compiled.notes if "inactivity_timeout" in n]
    assert "backend leaf, backend spine" in note and "exec_timeout_min" in note and "202411" in note
    newer = _db(_sonic_backend(tmp_path, "202411"), "be-su01-leaf1")
    assert newer["SSH_SERVER"]["POLICIES"]["inactivity_timeout"] == "10"


@pytest.mark.parametrize("release", ["202405", "202411", "202505"])
def test_ntp_authentication_is_left_out_where_the_release_cannot_load_ntp_key(tmp_path, release):
    build = _sonic_backend(tmp_path, release)
    db = _db(build, "be-su01-leaf1")
    assert "NTP_KEY" not in db and db["NTP"]["global"]["authentication"] == "disabled"
    assert db["NTP_SERVER"] and not any("key" in row or "trusted" in row for row in db["NTP_SERVER"].values())
    assert violations(db, release) == []
    [note] = [n for n in build.compiled.notes if "NTP authentication" in n]
    assert "202511" in note and "ntp.key" in note and "backend leaf" in note


@pytest.mark.parametrize("release", ["202511", "202605", "master"])
def test_ntp_authentication_is_written_where_the_release_loads_it(tmp_path, release):
    build = _sonic_backend(tmp_path, release)
    db = _db(build, "be-su01-leaf1")
    assert db["NTP"]["global"]["authentication"] == "enabled" and set(db["NTP_KEY"]) == {"1"}
    assert all(row["key"] == "1" for row in db["NTP_SERVER"].values())
    assert violations(db, release) == []
    assert not [n for n in build.compiled.notes if "NTP authentication" in n]
    planted = json.loads(json.dumps(db))
    assert any("NTP_KEY" in v and "202511" in v for v in violations(planted, "202505"))  # the suite knows the older lists
