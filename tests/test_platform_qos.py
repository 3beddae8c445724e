"""Lossless QoS from the platform: ECN defaults from the switch model's published values, DCQCN's
order checked per switch and speed, NX-OS ingress pause thresholds for long cables, headroom
against the platform's limit, and the MAC/PHY delay in SONiC headroom."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fabricgen.basics.errors import CheckError
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.compiler.qos import GENERIC, INTENT
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations
from tests.test_render_nxos import nxos_rule_violations

INTENTS = sorted((Path(__file__).parent.parent / "intents").glob("*.yaml"))

# A user's switch: 64 x 400G like the GX2A, with a published headroom limit and MAC/PHY delay
# (made-up numbers with a made-up source: they exercise the rules, not a real platform).
LAB_SWITCH = {
    "description": "Lab switch, 64 x 400G QSFP-DD",
    "vendor": "Example",
    "nos": ["nxos", "sonic"],
    "max_ecmp_paths": 64,
    "port_groups": [{"first": 1, "count": 64, "speed": "400G", "form_factor": "QSFP-DD", "lanes": 8, "breakouts": ["2x200G", "4x100G"]}],
    "interface_names": {
        "nxos": {"port": "Ethernet1/{port}", "breakout": "Ethernet1/{port}/{sub}"},
        "sonic": {"port": "Ethernet{lane}", "breakout": "Ethernet{lane}"},
    },
}


def lab_build(tmp_path, write_intent, qos: dict, backend: dict, name: str):
    (tmp_path / f"{name}-hw.yaml").write_text(yaml.safe_dump({"switches": {"LAB-SW-64X400": {**LAB_SWITCH, "qos": qos}}}))
    text = yaml.safe_dump(
        {
            "catalog": [f"{name}-hw.yaml"],
            "gpus": 64,
            "backend": {"leaf": {"model": "LAB-SW-64X400", "nos": "nxos"}, "spine": {"model": "LAB-SW-64X400", "nos": "nxos"}, **backend},
        }
    )
    return compile_intent(write_intent(text, name=name))


# -- (a) NX-OS ingress pause policy for 300 m ---------------------------------------------------


def test_300m_lossless_links_get_an_ingress_pause_policy_computed_for_300m(write_intent):
    build = compile_intent(write_intent("gpus: 64\nbackend:\n  qos:\n    cable_length_m: 300\n"))
    # By hand, for a 400G port, a 300 m cable and MTU 9216 (bytes):
    #   cable round trip   2 x 300 m x 400e9 b/s / 1.98e8 m/s / 8  = 151515.15
    #   peer response      905 pause quanta x 512 bits / 8 (802.1Qbb at 400G) = 57920
    #   two frames         2 x 9216                                = 18432
    #   headroom (xoff)    227867.15, rounded up to 1 KB cells: 223 x 1024 = 228352
    #   reserve (xon)      two frames, 18 x 1024                   = 18432
    #   PFC trigger        the GX2A publishes ECN max 3000 KB at 400G and no pause point;
    #                      the generic trigger is a third above it: 4000 KB x 1024 = 4096000
    #   pause-threshold    the trigger                             = 4096000
    #   buffer-size        trigger + xoff = 4096000 + 228352       = 4324352
    #   resume-threshold   trigger - xon  = 4096000 - 18432        = 4077568
    expected = "pause buffer-size 4324352 pause-threshold 4096000 resume-threshold 4077568"
    for name in ("be-su01-leaf1", "be-spine01"):
        text = build.files[f"configs/{name}.cfg"].decode()
        config = parse_nxos(text)
        assert nxos_rule_violations(text) == [], name
        assert config.blocks["policy-map type queuing PAUSE_400G_300M"] == ["class type queuing c-in-q3", expected], name
        for interface in build.configs[name].interfaces:
            assert "service-policy type queuing input PAUSE_400G_300M" in config.interfaces[interface.name], (name, interface.name)
        # no ingress policy may also carry priority or bandwidth (Cisco's PFC guidelines)
        assert not any(line.startswith(("priority", "bandwidth")) for line in config.blocks["policy-map type queuing PAUSE_400G_300M"])


def test_up_to_100m_the_platform_keeps_its_thresholds_unless_asked(write_intent):
    short = compile_intent(write_intent("gpus: 64\n", name="short"))
    assert "pause buffer-size" not in short.files["configs/be-su01-leaf1.cfg"].decode()
    always = compile_intent(write_intent("gpus: 64\nbackend:\n  qos:\n    pause_thresholds: always\n", name="always"))
    config = parse_nxos(always.files["configs/be-su01-leaf1.cfg"].decode())
    [line] = config.blocks["policy-map type queuing PAUSE_400G_100M"][1:]
    assert line.startswith("pause buffer-size ")
    assert all("service-policy type queuing input PAUSE_400G_100M" in config.interfaces[i.name] for i in always.configs["be-su01-leaf1"].interfaces)


def test_a_storage_class_gets_its_own_ingress_class(write_intent):
    text = "gpus: 64\nbackend:\n  qos:\n    cable_length_m: 300\n    storage_dscp: [28]\n    storage_priority: 4\n"
    config = parse_nxos(compile_intent(write_intent(text)).files["configs/be-spine01.cfg"].decode())
    policy = config.blocks["policy-map type queuing PAUSE_400G_300M"]
    assert policy[0::2] == ["class type queuing c-in-q3", "class type queuing c-in-q4"] and policy[1] == policy[3]


# -- (b) a cable beyond the platform's headroom is refused, naming it ---------------------------


def test_a_cable_beyond_the_platforms_headroom_is_refused_naming_it(tmp_path, write_intent):
    limit = {"max_headroom_bytes": {"value": 200000, "source": "test data"}}
    # 100 m: headroom 126976 bytes fits
    lab_build(tmp_path, write_intent, limit, {}, name="fits")
    with pytest.raises(CheckError) as caught:
        lab_build(tmp_path, write_intent, limit, {"qos": {"cable_length_m": 300}}, name="too-long")
    problems = caught.value.problems
    assert problems and all(p.field == ("backend", "qos", "cable_length_m") for p in problems)
    first = problems[0].message
    assert first.startswith("cable ") and " -- " in first and "300 m" in first and "228352 bytes" in first and "200000 bytes (test data)" in first
    # each cable once, though both its ends are limited
    cables = [p.message.split()[1] for p in problems]
    assert len(cables) == len(set(cables))


def test_lossless_buffers_beyond_the_switch_buffer_are_refused(tmp_path, write_intent):
    small = {"buffer_bytes": {"value": 4_000_000, "source": "test data"}}
    with pytest.raises(CheckError) as caught:
        lab_build(tmp_path, write_intent, small, {"qos": {"cable_length_m": 300}}, name="small-buffer")
    assert any("exceed the 4000000 bytes" in p.message and "(test data)" in p.message for p in caught.value.problems)


# -- (c) every shipped intent: DCQCN's order and the sourced 400G defaults ----------------------


@pytest.mark.parametrize("path", INTENTS, ids=[p.stem for p in INTENTS])
def test_shipped_intents_mark_before_they_pause_with_the_sourced_defaults(path):
    build = compile_intent(path)
    checked = 0
    for name, config in build.configs.items():
        qos = config.qos
        if qos is None:
            continue
        published = config.hardware.qos
        for speed, ecn in qos.ecn.items():
            trigger = qos.pfc_trigger_kbytes[speed]
            assert ecn.min_kbytes < ecn.max_kbytes < trigger, (path.name, name, speed)
            if speed in published.ecn:
                source = published.ecn[speed]
                assert (ecn.min_kbytes, ecn.max_kbytes, ecn.drop_probability) == (source.min_kbytes, source.max_kbytes, source.drop_probability)
                assert qos.ecn_source[speed] == source.source
            checked += 1
        if 400 in qos.ecn:
            # never the 100G values scaled by 4 (600 / 12000)
            assert (qos.ecn[400].min_kbytes, qos.ecn[400].max_kbytes) != (600, 12000), (path.name, name)
            if 400 in published.ecn and config.hardware.vendor == "Cisco":  # the GX2A and 93600CD-GX: Cisco's RoCE values
                assert (qos.ecn[400].min_kbytes, qos.ecn[400].max_kbytes) == (950, 3000), (path.name, name)
            # a model that publishes none (N9364E-SG2-O in rail-only-1024) takes the generic rule, said so
            assert qos.ecn_source[400] == (published.ecn[400].source if 400 in published.ecn else GENERIC), (path.name, name)
    assert checked


# -- (d) the intent's values still win ---------------------------------------------------------


def test_intent_values_win_over_the_platform(write_intent):
    text = """
    gpus: 64
    backend:
      qos:
        ecn:
          400G: {min_kbytes: 500, max_kbytes: 2500, drop_probability: 5}
        pfc_trigger_kbytes: {400G: 5000}
      qos_overrides:
        be-spine01:
          ecn:
            400G: {min_kbytes: 400, max_kbytes: 2000, drop_probability: 3}
    """
    build = compile_intent(write_intent(text))
    leaf, spine = build.configs["be-su01-leaf1"].qos, build.configs["be-spine01"].qos
    assert (leaf.ecn[400].min_kbytes, leaf.ecn[400].max_kbytes, leaf.pfc_trigger_kbytes[400]) == (500, 2500, 5000)
    assert leaf.ecn_source[400] == INTENT and leaf.trigger_source[400] == INTENT
    assert (spine.ecn[400].min_kbytes, spine.ecn[400].max_kbytes) == (400, 2000)
    text = build.files["configs/be-su01-leaf1.cfg"].decode()
    assert "random-detect minimum-threshold 500 kbytes maximum-threshold 2500 kbytes drop-probability 5 weight 0 ecn" in text


def test_a_model_without_published_values_falls_back_with_a_note(tmp_path, write_intent):
    build = lab_build(tmp_path, write_intent, {}, {}, name="bare")
    qos = build.configs["be-su01-leaf1"].qos
    # Cisco's 100G starting point, not scaled up with speed (the pause point does not grow with it)
    assert qos.ecn_source[400] == GENERIC and (qos.ecn[400].min_kbytes, qos.ecn[400].max_kbytes) == (150, 3000)
    assert qos.pfc_trigger_kbytes[400] == 4000  # a third above that maximum
    assert any(n.startswith("LAB-SW-64X400: ECN at 400G is fabricgen's generic default") for n in build.compiled.notes)


def test_published_ecn_above_the_pause_point_is_refused(tmp_path, write_intent):
    qos = {"ecn": {"400G": {"min_kbytes": 900, "max_kbytes": 5000, "drop_probability": 7, "source": "test data"}}}
    with pytest.raises(CheckError) as caught:
        lab_build(tmp_path, write_intent, qos, {"qos": {"pfc_trigger_kbytes": {"400G": 4000}}}, name="inverted")
    [problem] = caught.value.problems
    assert "5000 KB (the switch model's published value)" in problem.message and "4000 KB (from the intent)" in problem.message
    assert problem.field == ("backend", "qos", "pfc_trigger_kbytes", "400G")


# -- (e) SONiC headroom includes the MAC/PHY delay ---------------------------------------------


def test_sonic_headroom_grows_by_the_mac_phy_delay(tmp_path, write_intent):
    sonic = {"leaf": {"model": "LAB-SW-64X400", "nos": "sonic"}, "spine": {"model": "LAB-SW-64X400", "nos": "sonic"}}
    without = lab_build(tmp_path, write_intent, {}, sonic, name="no-delay")
    delay = {"mac_phy_delay_bytes": {"value": 8192, "source": "test data"}}
    with_delay = lab_build(tmp_path, write_intent, delay, sonic, name="delay")

    def profile(build):
        db = json.loads(build.files["configs/be-su01-leaf1/config_db.json"])
        assert violations(db) == []
        return db["BUFFER_PROFILE"][db["BUFFER_PG"]["Ethernet0|3"]["profile"]]

    before, after = profile(without), profile(with_delay)
    # 8192 is a whole number of 1 KB cells, so the rounded headroom grows by exactly that
    assert int(after["xoff"]) - int(before["xoff"]) == 8192 and after["xon"] == before["xon"]
    assert int(after["size"]) - int(before["size"]) == 8192
    assert any("leaves out the ASIC's MAC/PHY delay" in n for n in without.compiled.notes)
    assert not any("MAC/PHY delay" in n for n in with_delay.compiled.notes)


# -- (e) NX-OS pause policies within the ranges of the target release ---------------------------
# nos.yaml pause-thresholds: `pause buffer-size` 5000..12582913 bytes and `pause-threshold` /
# `resume-threshold` 0..12582912 up to 10.5(2) (10.3 device YANG), up to 268435456 from 10.5(3)F.

LONG = "gpus: 64\nbackend:\n  qos:\n    cable_length_m: {length}\n    pfc_trigger_kbytes: {{400G: {trigger}}}\n{roles}"
ON_1053 = '  leaf: {nos: nxos, nos_release: "10.5(3)F"}\n  spine: {nos: nxos, nos_release: "10.5(3)F"}\n'


def test_a_300m_pause_policy_is_within_the_release_ranges(write_intent):
    # 300 m, trigger 8000 KB: buffer-size 8192000 + 228352 = 8420352, inside 12582913
    build = compile_intent(write_intent(LONG.format(length=300, trigger=8000, roles=""), name="short"))
    assert "pause buffer-size 8420352 pause-threshold 8192000 resume-threshold 8173568" in build.files["configs/be-spine01.cfg"].decode()


def test_a_10km_pause_buffer_beyond_the_release_range_is_refused_naming_the_cable(write_intent):
    # 10 km at 400G: headroom 5127168 bytes; with the 8000 KB trigger the buffer is 13319168 bytes,
    # above 10.4's 12582913 (the default release)
    with pytest.raises(CheckError) as caught:
        compile_intent(write_intent(LONG.format(length=10000, trigger=8000, roles=""), name="long"), render=False)
    problems = [p for p in caught.value.problems if "pause buffer-size" in p.message]
    assert problems and all(p.field == ("backend", "qos", "cable_length_m") for p in problems)
    first = problems[0].message
    assert first.startswith("cable ") and " -- " in first and "10000 m" in first and "NX-OS 10.4" in first, first
    assert "13319168 bytes" in first and "above the 12582913 bytes" in first and "ipqos_BuffSize" in first, first
    assert "nos_release: 10.5(3)F" in problems[0].hint
    cables = [p.message.split()[1] for p in problems]
    assert len(cables) == len(set(cables))  # a cable once, though both its ends are NX-OS
    # 10.5(3)F takes buffers up to 268435456 bytes: the same fabric builds
    build = compile_intent(write_intent(LONG.format(length=10000, trigger=8000, roles=ON_1053), name="newer"))
    assert "pause buffer-size 13319168 pause-threshold 8192000" in build.files["configs/be-spine01.cfg"].decode()


def test_a_pfc_trigger_beyond_the_pause_threshold_range_is_refused_naming_the_field(write_intent):
    # 12500 KB = 12800000 bytes > 12582912 (ipqos_XoffBytes), on a 300 m cable (the buffer is out too)
    with pytest.raises(CheckError) as caught:
        compile_intent(write_intent(LONG.format(length=300, trigger=12500, roles=""), name="trigger"), render=False)
    [problem] = [p for p in caught.value.problems if "pause-threshold" in p.message]
    assert problem.field == ("backend", "qos", "pfc_trigger_kbytes", "400G")
    assert "12800000 bytes" in problem.message and "outside 0-12582912" in problem.message and "ipqos_XoffBytes" in problem.message
    assert "at most 12288 KB" in problem.hint
    # the trigger is the cause: its cables are not reported as well
    assert not any(p.message.startswith("cable ") for p in caught.value.problems)
