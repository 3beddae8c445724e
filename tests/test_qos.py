"""QoS end to end: the storage lossless class, per-switch overrides, the PFC trigger, buffers from
cable lengths, and the checks that keep ECN below the trigger."""

from __future__ import annotations

import json

import pytest
import yaml

from fabricgen.basics.errors import CheckError
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.compiler.qos import CABLE_LENGTH_BUCKETS_M, cable_length_bucket, lossless_headroom
from tests.conftest import build_refused
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations
from tests.test_render_nxos import nxos_rule_violations

SONIC = {"nos": "sonic"}
STORAGE = {"storage_dscp": [28, 30], "storage_priority": 4, "storage_bandwidth_percent": 20}


def config_db(build, name: str) -> dict:
    return json.loads(build.files[f"configs/{name}/config_db.json"])


def nxos_lines(build, name: str) -> list[str]:
    return build.files[f"configs/{name}.cfg"].decode().splitlines()


def intent(write_intent, backend: dict, name: str = "qos-fabric", **top) -> object:
    return write_intent(yaml.safe_dump({"gpus": 64, "backend": backend, **top}), name=name)


# -- the storage class ------------------------------------------------------------------------


def test_storage_class_on_nxos(write_intent):
    build = compile_intent(intent(write_intent, {"qos": STORAGE}))
    for name in ("be-su01-leaf1", "be-spine01"):
        text = build.files[f"configs/{name}.cfg"].decode()
        config = parse_nxos(text)
        assert config.blocks["class-map type qos match-any STORAGE"] == ["match dscp 28,30"], name
        assert "set qos-group 4" in config.blocks["policy-map type qos FABRICGEN-QOS-IN"], name
        network_qos = config.blocks["policy-map type network-qos FABRICGEN-NETWORK-QOS"]
        for priority in (3, 4):
            at = network_qos.index(f"class type network-qos c-8q-nq{priority}")
            assert network_qos[at + 1 : at + 3] == [f"pause pfc-cos {priority}", "mtu 9216"], (name, priority)
        queuing = config.blocks["policy-map type queuing FABRICGEN-QUEUING-400G"]
        at = queuing.index("class type queuing c-out-8q-q4")
        assert queuing[at + 1] == "bandwidth remaining percent 20", name
        # the GX2A's published 400G values (catalog), not the 100G ones scaled up
        assert queuing[at + 2].startswith("random-detect minimum-threshold 950 kbytes maximum-threshold 3000 kbytes"), name
        # 50 % RoCE + 20 % storage leaves 30 % for everything else; queue 4 is no longer idle
        at = queuing.index("class type queuing c-out-8q-q-default")
        assert queuing[at + 1] == "bandwidth remaining percent 30", name
        assert "class type queuing c-out-8q-q4" in queuing and queuing.count("class type queuing c-out-8q-q4") == 1
        assert nxos_rule_violations(text) == [], name
        port = build.configs[name].interfaces[0].name
        assert "priority-flow-control mode on" in config.interfaces[port], name


def test_storage_class_on_sonic(write_intent):
    build = compile_intent(intent(write_intent, {"qos": STORAGE, "leaf": SONIC, "spine": SONIC}))
    for name in ("be-su01-leaf1", "be-spine01"):
        db = config_db(build, name)
        assert violations(db) == [], name
        dscp = db["DSCP_TO_TC_MAP"]["FABRICGEN"]
        assert (dscp["24"], dscp["28"], dscp["30"], dscp["48"], dscp["10"]) == ("3", "4", "4", "7", "0")
        pg = db["TC_TO_PRIORITY_GROUP_MAP"]["FABRICGEN"]
        assert (pg["3"], pg["4"], pg["0"], pg["7"]) == ("3", "4", "0", "0")
        assert db["SCHEDULER"]["FABRICGEN_STORAGE"] == {"type": "DWRR", "weight": "20"}
        assert db["SCHEDULER"]["FABRICGEN_DEFAULT"] == {"type": "DWRR", "weight": "30"}
        for interface in build.configs[name].interfaces:
            port = interface.name
            assert db["PORT_QOS_MAP"][port]["pfc_enable"] == "3,4" and db["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] == "3,4"
            assert db["QUEUE"][f"{port}|4"] == {"scheduler": "FABRICGEN_STORAGE", "wred_profile": "ROCE_LOSSLESS_400G"}
            assert db["QUEUE"][f"{port}|3"]["scheduler"] == "FABRICGEN_LOSSLESS"
            lossless = db["BUFFER_PG"][f"{port}|3"]["profile"]
            assert db["BUFFER_PG"][f"{port}|4"]["profile"] == lossless and "static_th" in db["BUFFER_PROFILE"][lossless]
            assert db["BUFFER_QUEUE"][f"{port}|4"] == {"profile": "egress_lossless_profile"}
            assert port in db["PFC_WD"]


def test_without_storage_only_one_pfc_priority(write_intent):
    build = compile_intent(intent(write_intent, {"leaf": SONIC, "spine": SONIC}))
    db = config_db(build, "be-su01-leaf1")
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3" and "Ethernet0|4" not in db["BUFFER_PG"]
    assert "FABRICGEN_STORAGE" not in db["SCHEDULER"]
    assert "class-map type qos match-any STORAGE" not in nxos_lines(compile_intent(intent(write_intent, {}, name="nx")), "be-su01-leaf1")


def test_the_consistency_view_of_a_switch(write_intent):
    """What a hop-by-hop check compares: the same on every switch of a fabric without overrides."""
    build = compile_intent(intent(write_intent, {"qos": STORAGE}))
    views = {
        name: (c.qos.dscp_to_priority, c.qos.lossless_priorities, c.qos.cnp_priority, c.qos.ecn, c.qos.pfc_trigger_kbytes)
        for name, c in build.configs.items()
        if c.qos is not None
    }
    leaf = views["be-su01-leaf1"]
    assert leaf[0] == {24: 3, 26: 3, 28: 4, 30: 4, 48: 7} and leaf[1] == (3, 4) and leaf[2] == 7
    assert leaf[4] == {400: 4000}  # a third above the GX2A's published 3000 KB ECN maximum
    assert all(view == leaf for view in views.values())


# -- the PFC trigger and buffers from cable lengths -------------------------------------------


def test_lossless_profile_pauses_at_the_trigger(write_intent):
    build = compile_intent(intent(write_intent, {"qos": {"pfc_trigger_kbytes": {"400G": 14000}}, "leaf": SONIC, "spine": SONIC}))
    db = config_db(build, "be-su01-leaf1")
    profile = db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]
    assert "dynamic_th" not in profile
    # reserved part (size - xoff = xon) plus the static shared threshold = the trigger
    assert int(profile["size"]) - int(profile["xoff"]) + int(profile["static_th"]) == 14000 * 1024
    assert int(profile["size"]) == int(profile["xon"]) + int(profile["xoff"])


def test_cable_length_buckets():
    assert [cable_length_bucket(m) for m in (0.5, 3, 5, 5.1, 15, 30, 50, 100, 150, 500, 1000, 10000)] == [5, 5, 5, 10, 20, 40, 100, 100, 300, 500, 2000, 10000]
    assert list(CABLE_LENGTH_BUCKETS_M) == sorted(CABLE_LENGTH_BUCKETS_M)


def test_headroom_grows_with_length_and_speed():
    for speed in (100, 200, 400, 800):
        # 5 m more of cable at 100G is under one 1 KB cell; from 10 m on every bucket adds headroom
        lengths = [lossless_headroom(speed, 9216, m).xoff_bytes for m in CABLE_LENGTH_BUCKETS_M]
        assert lengths == sorted(lengths) and len(set(lengths[1:])) == len(lengths) - 1, speed
    for length in CABLE_LENGTH_BUCKETS_M:
        speeds = [lossless_headroom(s, 9216, length).xoff_bytes for s in (100, 200, 400, 800)]
        assert speeds == sorted(speeds) and len(set(speeds)) == 4, length


LAYOUT = {"racks_per_row": 4, "gpu_nodes_per_rack": 2}


def test_buffer_profiles_follow_the_cabling_plan(write_intent):
    path = write_intent(yaml.safe_dump({"gpus": 128, "backend": {"leaf": SONIC, "spine": SONIC}, "layout": LAYOUT}))
    build = compile_intent(path)
    seen_lengths = set()
    for device in build.fabric.switches():
        if device.role not in (Role.LEAF, Role.SPINE):
            continue
        db = config_db(build, device.name)
        assert violations(db) == [], device.name
        for port in (p for p in device.ports.values() if p.front_panel):
            assert port.link.length_m is not None, port
            bucket = cable_length_bucket(port.link.length_m)
            profile = db["BUFFER_PG"][f"{port.name}|3"]["profile"]
            assert profile == f"pg_lossless_{port.speed_gbps * 1000}_{bucket}m_profile", (device.name, port.name, port.link.length_m)
            assert db["CABLE_LENGTH"]["AZURE"][port.name] == f"{bucket}m", (device.name, port.name)
            expected = lossless_headroom(port.speed_gbps, 9216, bucket)
            assert db["BUFFER_PROFILE"][profile]["xoff"] == str(expected.xoff_bytes), (device.name, port.name)
            seen_lengths.add(bucket)
    # this layout puts GPU nodes in-rack, a row away and further: several buckets, a few profiles
    leaf = config_db(build, "be-su01-leaf1")
    lossless = {name: p for name, p in leaf["BUFFER_PROFILE"].items() if name.startswith("pg_lossless_")}
    assert len(lossless) >= 2 and len(lossless) == len(set(leaf["CABLE_LENGTH"]["AZURE"].values()))
    by_length = sorted(lossless.values(), key=lambda p: int(p["xoff"]))
    assert [int(p["xoff"]) for p in by_length] == sorted({int(p["xoff"]) for p in by_length})
    assert len(seen_lengths) >= 2


def test_without_a_layout_the_fallback_length(write_intent):
    build = compile_intent(intent(write_intent, {"qos": {"cable_length_m": 30}, "leaf": SONIC, "spine": SONIC}))
    for name in ("be-su01-leaf1", "be-spine01"):
        db = config_db(build, name)
        assert set(db["CABLE_LENGTH"]["AZURE"].values()) == {"40m"}, name
        assert [p for p in db["BUFFER_PROFILE"] if p.startswith("pg_lossless_")] == ["pg_lossless_400000_40m_profile"], name
        assert all(i.cable_length_m is None for i in build.configs[name].interfaces)


# -- 200G and 800G ports ----------------------------------------------------------------------

FAST_HARDWARE = """
nodes:
  GPU-800:
    kind: gpu
    description: test GPU node, 8 x 800G backend
    gpus: 8
    backend: {count: 8, speed: 800G, form_factor: OSFP, names: "nic{n}"}
  GPU-200:
    kind: gpu
    description: test GPU node, 8 x 200G backend
    gpus: 8
    backend: {count: 8, speed: 200G, form_factor: OSFP, names: "nic{n}"}
# 800G links take the built-in OSFP-800G-DR8 (it also runs 1 x 800G)
transceivers:
  TEST-OSFP-4X200G:
    description: test 800G OSFP, four 200G links
    form_factor: OSFP
    speed: 800G
    links: 4
    media: smf
    connector: MPO-12
    reach_m: 500
    cable: CB-M12-M12-SMF
    default: true
"""


# N9364E-SG2-O publishes no ECN values: 200G and 800G ports get Cisco's 100G starting point, not a
# linear scale (which put 24 MB of WRED above the pause point at 800G)
@pytest.mark.parametrize("speed, ecn, trigger", [(800, (150, 3000), 4000), (200, (150, 3000), 4000)])
@pytest.mark.parametrize("nos", ["nxos", "sonic"])
def test_200g_and_800g_ports_get_the_unscaled_fallback(write_intent, tmp_path, speed, ecn, trigger, nos):
    (tmp_path / "fast.yaml").write_text(FAST_HARDWARE)
    switch = {"model": "N9364E-SG2-O", "nos": nos}
    build = compile_intent(
        write_intent(yaml.safe_dump({"catalog": ["fast.yaml"], "gpus": 64, "gpu_node": f"GPU-{speed}", "backend": {"leaf": switch, "spine": switch}}))
    )
    leaf = build.configs["be-su01-leaf1"]
    assert {i.speed_gbps for i in leaf.interfaces} == {speed}
    assert (leaf.qos.ecn[speed].min_kbytes, leaf.qos.ecn[speed].max_kbytes) == ecn and leaf.qos.pfc_trigger_kbytes == {speed: trigger}
    if nos == "sonic":
        db = config_db(build, "be-su01-leaf1")
        assert violations(db) == []
        wred = db["WRED_PROFILE"][f"ROCE_LOSSLESS_{speed}G"]
        assert wred["green_max_threshold"] == str(ecn[1] * 1024)
        profile = db["BUFFER_PROFILE"][f"pg_lossless_{speed * 1000}_100m_profile"]
        assert profile["xoff"] == str(lossless_headroom(speed, 9216, 100).xoff_bytes)
        assert int(profile["size"]) - int(profile["xoff"]) + int(profile["static_th"]) == trigger * 1024
        if speed == 200:
            assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "4x200G"}
    else:
        text = build.files["configs/be-su01-leaf1.cfg"].decode()
        assert f"random-detect minimum-threshold {ecn[0]} kbytes maximum-threshold {ecn[1]} kbytes drop-probability 7 weight 0 ecn" in text
        assert f"  service-policy type queuing output FABRICGEN-QUEUING-{speed}G" in text
        assert nxos_rule_violations(text) == []


# -- per-switch overrides ---------------------------------------------------------------------


def test_an_ecn_override_renders_on_that_leaf_only(write_intent):
    override = {"be-su01-leaf2": {"ecn": {"400G": {"min_kbytes": 800, "max_kbytes": 2500, "drop_probability": 5}}}}
    build = compile_intent(intent(write_intent, {"qos_overrides": override}))
    changed = "random-detect minimum-threshold 800 kbytes maximum-threshold 2500 kbytes drop-probability 5 weight 0 ecn"
    default = "random-detect minimum-threshold 950 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn"
    for name, config in build.configs.items():
        if config.qos is None:
            continue
        lines = [line.strip() for line in nxos_lines(build, name)]
        if name == "be-su01-leaf2":
            assert changed in lines and default not in lines
        else:
            assert default in lines and changed not in lines, name
        # only the thresholds differ: classes, priorities and the trigger stay the fabric's
        assert config.qos.dscp_to_priority == {24: 3, 26: 3, 48: 7} and config.qos.pfc_trigger_kbytes == {400: 4000}, name


def test_an_ecn_override_on_sonic(write_intent):
    override = {"be-spine01": {"ecn": {"400G": {"min_kbytes": 800, "max_kbytes": 2500, "drop_probability": 5}}}}
    build = compile_intent(intent(write_intent, {"qos_overrides": override, "leaf": SONIC, "spine": SONIC}))
    wred = {name: config_db(build, name)["WRED_PROFILE"]["ROCE_LOSSLESS_400G"]["green_max_threshold"] for name in ("be-spine01", "be-spine02", "be-su01-leaf1")}
    assert wred == {"be-spine01": str(2500 * 1024), "be-spine02": str(3000 * 1024), "be-su01-leaf1": str(3000 * 1024)}


def test_an_override_keeps_the_fabrics_other_speeds(write_intent):
    qos = {"ecn": {"100G": {"min_kbytes": 100, "max_kbytes": 2000, "drop_probability": 5}}}
    override = {"be-su01-leaf1": {"ecn": {"400G": {"min_kbytes": 800, "max_kbytes": 2500, "drop_probability": 5}}}}
    build = compile_intent(intent(write_intent, {"qos": qos, "qos_overrides": override}))
    from fabricgen.compiler.qos import effective_qos

    effective = effective_qos(build.compiled.intent.backend, "be-su01-leaf1")
    assert effective.ecn_at(100).max_kbytes == 2000 and effective.ecn_at(400).max_kbytes == 2500


# -- checks -----------------------------------------------------------------------------------


def problems_of(path):
    with pytest.raises(CheckError) as caught:
        compile_intent(path)
    return caught.value.problems


def test_ecn_max_above_the_trigger_is_rejected(write_intent):
    path = write_intent("gpus: 64\nbackend:\n  qos:\n    ecn:\n      400G: {min_kbytes: 600, max_kbytes: 20000, drop_probability: 7}\n")
    [problem] = problems_of(path)
    assert problem.field == ("backend", "qos", "ecn", "400G") and problem.line == 5
    assert problem.device in {d.name for d in compile_intent(write_intent("gpus: 64\n", name="ok")).fabric.switches()}
    assert "400G" in problem.message and "20000 KB" in problem.message and "4000 KB" in problem.message
    assert "more switches" in problem.message and "pfc_trigger_kbytes" in problem.hint


def test_a_trigger_override_below_ecn_names_that_switch(write_intent):
    path = write_intent("gpus: 64\nbackend:\n  qos_overrides:\n    be-su01-leaf3:\n      pfc_trigger_kbytes: {400G: 2000}\n")
    [problem] = problems_of(path)
    assert problem.device == "be-su01-leaf3" and problem.line == 5
    assert problem.field == ("backend", "qos_overrides", "be-su01-leaf3", "pfc_trigger_kbytes", "400G")
    assert "3000 KB (the switch model's published value)" in problem.message and "2000 KB (from the intent)" in problem.message
    assert "more switches" not in problem.message


def test_an_override_on_an_unknown_switch_is_rejected(write_intent):
    path = write_intent("gpus: 64\nbackend:\n  qos_overrides:\n    be-su01-leaf9: {cnp_priority: 6}\n")
    [problem] = problems_of(path)
    assert problem.field == ("backend", "qos_overrides", "be-su01-leaf9") and problem.line == 4
    assert "not a switch of the backend fabric" in problem.message
    assert "be-su01-leaf" in problem.hint  # real names to choose from


def test_an_override_that_breaks_the_profile_is_rejected(write_intent):
    path = write_intent("gpus: 64\nbackend:\n  qos_overrides:\n    be-spine02: {cnp_priority: 3}\n")
    [problem] = problems_of(path)
    assert problem.device == "be-spine02" and "cnp_priority must differ" in problem.message


def test_an_override_on_a_fabric_without_qos_is_rejected(write_intent):
    path = write_intent("gpus: 64\nbackend:\n  qos: {enabled: false}\n  qos_overrides:\n    be-spine01: {cnp_priority: 6}\n")
    [problem] = problems_of(path)
    assert "QoS is off" in problem.message and problem.line == 5


def test_the_cli_refuses_ecn_above_the_trigger_and_writes_nothing(tmp_path):
    intent_file = tmp_path / "intent.yaml"
    intent_file.write_text(
        "gpus: 64\nbackend:\n  qos_overrides:\n    be-su01-leaf1:\n      ecn:\n        400G: {min_kbytes: 600, max_kbytes: 17000, drop_probability: 7}\n"
    )
    errors = build_refused(intent_file)
    assert f"{intent_file}:6: backend.qos_overrides.be-su01-leaf1.ecn.400G: be-su01-leaf1: at 400G" in errors, errors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["intent.yaml"]


def test_the_constraint_checker_catches_bad_buffer_profiles(write_intent):
    build = compile_intent(intent(write_intent, {"leaf": SONIC, "spine": SONIC}))
    db = config_db(build, "be-su01-leaf1")
    profile = db["BUFFER_PG"]["Ethernet0|3"]["profile"]
    db["BUFFER_PROFILE"][profile]["dynamic_th"] = "0"
    db["BUFFER_PROFILE"]["ingress_lossy_profile"]["static_th"] = "big"
    db["BUFFER_PG"]["Ethernet8|3"] = {"profile": "ingress_lossy_profile"}
    db["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "40 m"
    found = "\n".join(violations(db))
    for expected in ("one threshold mode", "static_th must be bytes", "PG 3 has no lossless", "CABLE_LENGTH|AZURE|Ethernet0"):
        assert expected in found, expected


def test_a_trigger_inside_the_reserved_frames_is_rejected(write_intent):
    """A trigger below two frames would leave SONiC a static_th of nothing (SAI: no limit)."""
    path = write_intent(
        "gpus: 64\nbackend:\n  qos:\n    ecn: {400G: {min_kbytes: 1, max_kbytes: 5, drop_probability: 7}}\n    pfc_trigger_kbytes: {400G: 10}\n"
    )
    [problem] = problems_of(path)
    assert "18432 bytes a lossless buffer reserves" in problem.message and "400G" in problem.message


def test_fabric_thresholds_share_the_profiles_answer_and_work_out_an_overrides_own():
    """FabricThresholds (device configs and the checks): switches on the fabric's profile get one
    answer per model and speed; a switch with an override gets its own values, never the shared ones."""
    from fabricgen.catalog.model import PlatformQos
    from fabricgen.compiler.qos import FabricThresholds, lossless_thresholds
    from fabricgen.intent.model import Qos

    profile = Qos()
    override = Qos(pfc_trigger_kbytes={400: 5000})
    platform = PlatformQos()
    fabric = FabricThresholds(profile)
    first = fabric.at(profile, "N9364E-SG2-O", platform, 400)
    assert fabric.at(profile, "N9364E-SG2-O", platform, 400) is first
    assert first == lossless_thresholds(profile, platform, 400)
    own = fabric.at(override, "N9364E-SG2-O", platform, 400)
    assert own.pfc_trigger_kbytes == 5000 != first.pfc_trigger_kbytes
    # the override did not replace the shared answer
    assert fabric.at(profile, "N9364E-SG2-O", platform, 400) is first
    assert fabric.at(profile, "N9364E-SG2-O", platform, 100) == lossless_thresholds(profile, platform, 100)
