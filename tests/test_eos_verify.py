"""`fabricgen verify` of EOS switches: NAPALM's eos getters and fabricgen's two extensions
(fabricgen/nos/eos/verify.py), each answer checked before a check reads it, and drift with the
EOS secrets masked on both sides.

An EOS switch cannot run here: the switch is the RECORDED eAPI STAND-IN of tests/eos_target.py
(answers written from Arista's documented output shapes, tests/data/eos/answers.json; not
captured from a switch), reached over verified HTTPS by the same driver push uses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fabricgen.build.secrets import Secrets
from fabricgen.nos.eos.push import EosDriver
from fabricgen.push.inventory import Target
from fabricgen.verify.collect import ONCE, SAMPLED, Access, observe
from fabricgen.verify.drift import mask_config, statements
from tests.eos_target import RECORDED, EapiStandIn, TestCa

PASSWORD = "pw-verify-eos-5e1f"


@pytest.fixture
def switch(tmp_path):
    ca = TestCa(tmp_path / "ca")
    certificate, key = ca.server_files()
    running = ["hostname leaf1", "router bgp 65001", "neighbor 10.1.0.0 remote-as 65000"]
    standing = EapiStandIn("leaf1", certificate, key, "netops", PASSWORD, running=running)
    standing.ca = ca
    yield standing
    standing.close()


def observed(switch: EapiStandIn):
    target = Target("leaf1", "leaf", "backend", "eos", "127.0.0.1", "eos", Path("leaf1.cfg"), ("10.1.0.0",), optional_args={"port": switch.port})
    connect = lambda t: EosDriver(t.host, "netops", PASSWORD, timeout=5, optional_args={"port": switch.port, "ssl_verify": str(switch.ca.bundle)})  # noqa: E731
    return observe(target, Access(connect), interval=0.0)


def test_every_getter_answers_through_the_eos_driver_and_its_extensions(switch):
    observation = observed(switch)
    assert observation.reached and observation.errors == {} and observation.missing == set()
    assert set(observation.answers) == {*SAMPLED, *ONCE}
    assert observation.answers["get_ecmp_widths"] == {"10.0.0.1/32": 2, "10.1.0.0/31": 1}
    lossless = observation.answers["get_lossless_counters"]
    assert (lossless["Ethernet1/1"].pfc_rx, lossless["Ethernet1/1"].pfc_tx, lossless["Ethernet1/1"].pfcwd_storms) == ({3: 1520}, {3: 87}, 1)
    assert lossless["Ethernet2/1"].pfcwd_storms == 0 and lossless["Ethernet2/1"].ecn_marked is None  # no watchdog event yet: none
    assert observation.answers["get_bgp_neighbors"]["global"].peers["10.1.0.0"].is_up
    (neighbour,) = observation.answers["get_lldp_neighbors_detail"]["Ethernet1/1"]
    assert (neighbour.remote_system_name, neighbour.remote_port) == ("spine1", "Ethernet1/1")
    assert observation.answers["get_facts"].model == "DCS-7060X6-64PE"
    assert observation.second.keys() == set(SAMPLED)
    # verify asked only show commands
    assert {c for c in switch.commands() if not c.startswith("show ")} == {"enable"}


@pytest.mark.parametrize(
    ("command", "edit", "getter", "message"),
    [
        (
            "show priority-flow-control counters detail",
            lambda a: a["interfaces"]["Ethernet1/1"]["priorities"]["3"].update(rxFrames="1520"),
            "get_lossless_counters",
            "rxFrames is '1520', not a count",
        ),
        (
            "show priority-flow-control counters detail",
            lambda a: a["interfaces"]["Ethernet1/1"]["priorities"].update({"9": {"rxFrames": 1, "txFrames": 1}}),
            "get_lossless_counters",
            "priority '9', not 0-7",
        ),
        (
            "show priority-flow-control counters detail",
            lambda a: a["interfaces"].update({"Eth 1": {}}),
            "get_lossless_counters",
            "'Eth 1' is not an interface name",
        ),
        (
            "show priority-flow-control counters watchdog",
            lambda a: a["interfaces"]["Ethernet1/1"]["txQueues"]["3"].update(stuckCount=-1),
            "get_lossless_counters",
            "stuckCount is -1",
        ),
        (
            "show priority-flow-control counters detail",
            lambda a: a["interfaces"]["Ethernet1/1"]["priorities"]["3"].update(txFrames=2**64),
            "get_lossless_counters",
            "not a count",
        ),
        ("show ip route vrf default", lambda a: a["vrfs"]["default"]["routes"]["10.0.0.1/32"].update(vias="two"), "get_ecmp_widths", "has no list of vias"),
        (
            "show ip route vrf default",
            lambda a: a["vrfs"]["default"]["routes"].update({"not-a-prefix": {"vias": []}}),
            "get_ecmp_widths",
            "is not an IP prefix",
        ),
        ("show ip route vrf default", lambda a: a.update(vrfs=[]), "get_ecmp_widths", "vrfs is not an object"),
    ],
)
def test_a_malformed_extension_answer_is_reported_and_not_kept(switch, command, edit, getter, message):
    import copy

    answer = copy.deepcopy(RECORDED[command])
    edit(answer)
    switch.answers[command] = answer
    observation = observed(switch)
    assert getter not in observation.answers
    assert observation.errors[getter].startswith("answered malformed data") and message in observation.errors[getter], observation.errors[getter]
    assert len(observation.answers) == len(SAMPLED) + len(ONCE) - 1  # the other getters are not held up


def test_drift_masks_the_eos_secrets_the_device_shows_encrypted():
    built = "\n".join(
        [
            "! written by fabricgen",
            "username admin privilege 15 role network-admin secret sha512 <<secret=admin-password-hash>>",
            "tacacs-server host 10.250.0.11 vrf MGMT timeout 5 key 0 <<secret=tacacs-key>>",
            "snmp-server user nms FABRICGEN-READ v3 auth sha <<secret=snmp-auth>> priv aes <<secret=snmp-priv>>",
            "router bgp 65001",
            "   neighbor SPINES peer group",
            "   neighbor SPINES password 0 <<secret=bgp-backend>>",
        ]
    )
    running = "\n".join(
        [
            "! Command: show running-config",
            "! device: leaf1 (DCS-7060X6-64PE, EOS-4.32.2F)",
            "!",
            "username admin privilege 15 role network-admin secret sha512 $6$abc$def",
            "tacacs-server host 10.250.0.11 vrf MGMT timeout 5 key 7 070E234F1B",
            "snmp-server user nms FABRICGEN-READ v3 localized 800075ad03 auth sha 9c1f0e priv aes 77ab01",
            "router bgp 65001",
            "   neighbor SPINES peer group",
            "   neighbor SPINES password 7 q+VNViP5i4rVjW1cxFv2wA==",
            "end",
        ]
    )
    secrets = Secrets({"bgp-backend": "plain-bgp-key"})
    assert Counter(statements(mask_config(built, secrets, "eos"))) == Counter(statements(mask_config(running, secrets, "eos")))
    changed = running.replace("timeout 5", "timeout 9")
    assert Counter(statements(mask_config(built, secrets, "eos"))) != Counter(statements(mask_config(changed, secrets, "eos")))
    # a key the user gave is masked wherever the device prints it, too
    assert "plain-bgp-key" not in mask_config(running + "\n! neighbor key plain-bgp-key", secrets, "eos")


def test_fabricgen_verify_reads_an_eos_switch_of_a_build_and_masks_its_secrets_in_drift(tmp_path):
    """`fabricgen verify` of one leaf of an EOS build, the stand-in running the build's config with
    its keys as EOS shows them (type 7): every getter answers, drift is only what differs, and no
    secret value is printed."""
    import json

    from fabricgen.compiler.pipeline import build as build_intent
    from tests import cli_runner
    from tests.test_eos_push import TINY_EOS

    (tmp_path / "tiny.yaml").write_text(TINY_EOS.lstrip())
    build_intent(tmp_path / "tiny.yaml", tmp_path / "build")
    built = (tmp_path / "build" / "configs" / "be-su01-leaf1.cfg").read_text()
    shown = (
        built.replace("<<secret=admin-password-hash>>", "$6$abc$def")
        .replace("password 0 <<secret=bgp-backend>>", "password 7 q+VNViP5i4rVjW1cxFv2wA==")
        .replace("md5 0 <<secret=ntp-key>>", "md5 7 044F0E151B")
        .replace("ip address 10.4.0.0/31", "ip address 10.4.0.9/31")  # the one real drift
    )
    ca = TestCa(tmp_path / "ca")
    certificate, key = ca.server_files()
    switch = EapiStandIn("be-su01-leaf1", certificate, key, "netops", PASSWORD, running=shown.splitlines()[:-1])
    try:
        inventory = tmp_path / "inventory.yaml"
        inventory.write_text(f"devices:\n  be-su01-leaf1: {{host: 127.0.0.1, optional_args: {{port: {switch.port}}}}}\n")
        env = {"FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": PASSWORD, "FABRICGEN_SECRET_BGP_BACKEND": "bgp-value-4e2a"}
        result = cli_runner.fabricgen(
            "verify",
            str(tmp_path / "build"),
            "--devices",
            "be-su01-leaf1",
            "--inventory",
            str(inventory),
            "--ca-bundle",
            str(ca.bundle),
            "--interval",
            "0",
            "--json",
            env=env,
        )
        assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
        document = json.loads(result.stdout)
        findings = document["findings"]
        assert not [f for f in findings if f["check"] in ("reach", "answers")], [f for f in findings if f["check"] in ("reach", "answers")]
        (drift,) = [f for f in findings if f["check"] == "drift"]
        assert drift["detail"]["diff"] == ["-interface Ethernet1/1 > ip address 10.4.0.0/31", "+interface Ethernet1/1 > ip address 10.4.0.9/31"], drift[
            "detail"
        ]["diff"]
        for value in (PASSWORD, "q+VNViP5i4rVjW1cxFv2wA==", "044F0E151B", "$6$abc$def", "bgp-value-4e2a"):
            assert value not in result.stdout + result.stderr
        assert {c for c in switch.commands() if not c.startswith("show ")} == {"enable"}  # read-only
    finally:
        switch.close()
