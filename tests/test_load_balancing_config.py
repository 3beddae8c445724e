"""Load balancing end to end: the ECMP hash rendered on both NOSes, DLB (flowlet, per-packet)
where the switch and NOS do it, and a check error naming model and NOS where they do not."""

from __future__ import annotations

import difflib
import json
from typing import get_args

import pytest
import yaml

from fabricgen.basics.errors import CatalogError, CheckError
from fabricgen.catalog import load_catalog
from fabricgen.catalog.model import HashFieldName, LoadBalancingMode
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.intent.model import HashField, LoadBalancing
from tests import cli_runner
from tests.conftest import REPO
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations

FIVE_TUPLE_SONIC = ["SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"]


def tiny(nos: str = "nxos", model: str = "N9K-C9364D-GX2A", **load_balancing) -> dict:
    """Two DGX nodes (2 spines, 8 leaves) with the backend's load balancing set."""
    # NX-OS DLB arrived in 10.5(1)F; SONiC's IPV6_FLOW_LABEL hash in 202505
    release = {"nxos": "10.5", "sonic": "202505"}[nos]
    backend = {"leaf": {"model": model, "nos": nos, "nos_release": release}, "spine": {"model": model, "nos": nos, "nos_release": release}}
    if load_balancing:
        backend["load_balancing"] = load_balancing
    return {"name": "lb", "gpus": 16, "backend": backend}


def build(write_intent, intent: dict, name: str = "lb"):
    return compile_intent(write_intent(yaml.safe_dump(intent, sort_keys=False), name=name))


def nxos_text(b, device: str) -> str:
    return b.files[f"configs/{device}.cfg"].decode()


def config_db(b, device: str) -> dict:
    return json.loads(b.files[f"configs/{device}/config_db.json"])


def leaves_and_spines(b) -> list[str]:
    return [n for n, c in b.configs.items() if c.role in (Role.LEAF, Role.SPINE)]


def test_the_catalog_speaks_the_intents_vocabulary():
    assert get_args(LoadBalancingMode) == get_args(LoadBalancing.model_fields["mode"].annotation)
    assert get_args(HashFieldName) == get_args(HashField)


# --- ECMP, the default --------------------------------------------------------------------------


def test_default_ecmp_hash_on_every_nxos_leaf_and_spine_and_not_on_oob_switches(whitepaper):
    b = whitepaper[256]
    for name, config in b.configs.items():
        lines = parse_nxos(nxos_text(b, name)).top("ip load-sharing")
        if config.role is Role.OOB_SWITCH:
            assert lines == [], name
        else:
            assert lines == ["ip load-sharing address source-destination port source-destination"], name
        assert "hardware profile dlb" not in nxos_text(b, name), name


def test_default_ecmp_hash_on_sonic_is_the_5_tuple_and_passes_yang(whitepaper_sonic):
    b = whitepaper_sonic[256]
    for name in leaves_and_spines(b):
        db = config_db(b, name)
        assert db["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": FIVE_TUPLE_SONIC}}, name
        assert violations(db) == [], name


@pytest.mark.parametrize(
    "fields, keywords",
    [
        (["src-ip", "dst-ip"], "source-destination"),
        (["dst-ip", "protocol", "dst-port"], "destination port destination"),
        (["dst-port", "src-port", "protocol", "dst-ip", "src-ip"], "source-destination port source-destination"),
    ],
)
def test_nxos_hash_fields_change_only_the_load_sharing_line(write_intent, fields, keywords):
    default = build(write_intent, tiny(), name="default")
    changed = build(write_intent, tiny(hash_fields=fields), name="changed")
    for name in ("be-su01-leaf1", "be-spine01"):
        before, after = nxos_text(default, name).splitlines(), nxos_text(changed, name).splitlines()
        diff = [line for line in difflib.unified_diff(before, after, lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        if keywords == "source-destination port source-destination":
            assert diff == [], name  # the same set in another order is the same hash
        else:
            assert diff == ["-ip load-sharing address source-destination port source-destination", f"+ip load-sharing address {keywords}"], name


def test_ipv6_flow_label_on_the_switch_that_documents_it(write_intent):
    b = build(write_intent, tiny(model="N9K-C93600CD-GX", hash_fields=["src-ip", "dst-ip", "ipv6-flow-label"]))
    assert "ip load-sharing address source-destination ipv6-flowlabel" in parse_nxos(nxos_text(b, "be-su01-leaf1")).lines


@pytest.mark.parametrize(
    "fields, ecmp_hash",
    [
        (["src-ip", "dst-ip"], ["SRC_IP", "DST_IP"]),
        (["dst-port", "src-ip"], ["L4_DST_PORT", "SRC_IP"]),
        (
            ["src-ip", "dst-ip", "src-port", "dst-port", "inner"],
            ["SRC_IP", "DST_IP", "L4_SRC_PORT", "L4_DST_PORT", "INNER_SRC_IP", "INNER_DST_IP", "INNER_L4_SRC_PORT", "INNER_L4_DST_PORT"],
        ),
    ],
)
def test_sonic_hash_fields_change_exactly_switch_hash(write_intent, fields, ecmp_hash):
    default = build(write_intent, tiny("sonic"), name="default")
    changed = build(write_intent, tiny("sonic", hash_fields=fields), name="changed")
    for name in ("be-su01-leaf1", "be-spine01"):
        before, after = config_db(default, name), config_db(changed, name)
        assert after["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": ecmp_hash}}, name
        assert {t: rows for t, rows in after.items() if t != "SWITCH_HASH"} == {t: rows for t, rows in before.items() if t != "SWITCH_HASH"}, name
        assert violations(after) == [], name


# --- DLB: flowlet and per-packet ----------------------------------------------------------------


def dlb_block(text: str) -> list[str]:
    return parse_nxos(text).blocks.get("hardware profile dlb", [])


@pytest.mark.parametrize("gap", [1, 700, 100000])
def test_flowlet_on_nxos_with_the_gap_on_every_fabric_link(write_intent, gap):
    b = build(write_intent, tiny(mode="flowlet", flowlet_gap_us=gap))
    for name in leaves_and_spines(b):
        config = b.configs[name]
        block = dlb_block(nxos_text(b, name))
        fabric = [i.name for i in config.interfaces if i.kind == "fabric"]
        assert fabric, name
        assert block == ["mode flowlet", *(f"dlb-interface {i}" for i in fabric), f"flowlet-aging {gap}"], name
        assert "ip load-sharing address source-destination port source-destination" in nxos_text(b, name)
    assert f"- load balancing: flowlet (flowlet gap {gap} us)" in b.files["summary.md"].decode()
    leaf = b.configs["be-su01-leaf1"]
    hosts = {i.name for i in leaf.interfaces if i.kind == "host"}
    assert hosts and not any(line.split()[-1] in hosts for line in dlb_block(nxos_text(b, "be-su01-leaf1")) if line.startswith("dlb-interface"))


def test_per_packet_on_nxos_sprays_without_a_flowlet_gap(write_intent):
    b = build(write_intent, tiny(mode="per-packet", flowlet_gap_us=900))
    block = dlb_block(nxos_text(b, "be-spine01"))
    assert block[0] == "mode per-packet" and not any("flowlet" in line for line in block)
    assert len([line for line in block if line.startswith("dlb-interface")]) == 8  # one link to each of 8 leaves


def test_dlb_on_a_frontend_fabric_leaves_the_backend_on_ecmp(whitepaper, write_intent):
    text = (REPO / "intents" / "cisco-256-gpu.yaml").read_text()
    intent = yaml.safe_load(text)
    intent["frontend"]["load_balancing"] = {"mode": "per-packet"}
    for role in ("leaf", "spine"):
        intent["frontend"][role]["nos_release"] = "10.5"  # DLB: NX-OS 10.5(1)F and later
        intent["frontend"][role]["management"] = {"boot": {"nxos": "nxos64-cs.10.5.1.F.bin"}}  # and an image of it
    b = build(write_intent, intent, name="fe-dlb")
    for name, config in b.configs.items():
        block = dlb_block(nxos_text(b, name))
        assert bool(block) == (config.network == "frontend" and config.role is not Role.OOB_SWITCH), name


# --- rejected where the switch or NOS cannot do it ----------------------------------------------


def fabricgen_cli(tmp_path, intent: dict) -> cli_runner.Completed:
    path = tmp_path / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    return cli_runner.fabricgen("build", path, "-o", tmp_path / "out", cwd=tmp_path)


@pytest.mark.parametrize(
    "intent, where, names",
    [
        (tiny("sonic", mode="flowlet"), ":13: backend.load_balancing.mode", ["N9K-C9364D-GX2A on sonic", "flowlet", "10 switches: be-su01-leaf1 and 9 more"]),
        (tiny("sonic", mode="per-packet"), ":13: backend.load_balancing.mode", ["N9K-C9364D-GX2A on sonic", "per-packet"]),
        (
            tiny(model="N9364E-SG2-O", mode="flowlet"),
            ":13: backend.load_balancing.mode",
            ["N9364E-SG2-O on nxos cannot do flowlet", "fix: use mode: ecmp, or a switch that does flowlet: N9K-C9364D-GX2A (nxos)"],
        ),
        (
            tiny(hash_fields=["src-ip", "dst-ip", "inner"]),
            ":13: backend.load_balancing.hash_fields",
            ["N9K-C9364D-GX2A on nxos cannot hash on inner", "N9K-C9364D-GX2A (sonic)"],
        ),
        (
            tiny(hash_fields=["src-ip", "dst-port"]),
            ":13: backend.load_balancing.hash_fields",
            ["N9K-C9364D-GX2A on nxos: NX-OS cannot hash on exactly src-ip, dst-port", "[src-ip, dst-ip]"],
        ),
        (
            tiny(hash_fields=["src-ip", "dst-ip", "ipv6-flow-label"]),
            ":13: backend.load_balancing.hash_fields",
            ["N9K-C9364D-GX2A on nxos cannot hash on ipv6-flow-label", "N9K-C93600CD-GX (nxos)"],
        ),
    ],
    ids=["sonic-flowlet", "sonic-per-packet", "silicon-one-flowlet", "nxos-inner", "nxos-field-set", "gx2a-flow-label"],
)
def test_unsupported_load_balancing_exits_2_naming_model_and_nos_and_writes_nothing(tmp_path, intent, where, names):
    result = fabricgen_cli(tmp_path, intent)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"{tmp_path / 'intent.yaml'}{where}" in result.stderr, result.stderr
    for fragment in names:
        assert fragment in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["intent.yaml"], "nothing may be written"


def test_one_problem_per_fabric_model_and_nos(write_intent):
    """A SONiC frontend asking for flowlet: one problem for its leaves' model, one for its
    spines', none per switch, and the field is the frontend's."""
    intent = yaml.safe_load((REPO / "intents" / "cisco-256-gpu.yaml").read_text())
    intent["frontend"]["leaf"]["nos"] = "sonic"
    intent["frontend"]["spine"]["nos"] = "sonic"
    intent["frontend"]["load_balancing"] = {"mode": "flowlet"}
    with pytest.raises(CheckError) as caught:
        build(write_intent, intent, name="fe-sonic")
    problems = caught.value.problems
    assert [p.field for p in problems] == [("frontend", "load_balancing", "mode")] * 2
    assert [p.message.split(" on ")[0] for p in problems] == ["N9K-C93600CD-GX", "N9K-C9364D-GX2A"]
    assert "8 switches: fe-leaf01 and 7 more" in problems[0].message and "2 switches: fe-spine01 and 1 more" in problems[1].message
    assert all(p.line is not None for p in problems)


# --- the catalog: capability as data, extendable by the user ------------------------------------

USER_SWITCH = """
switches:
  LAB-SONIC-64:
    description: Lab switch, 64 x 400G
    vendor: Example
    nos: [sonic]
    port_groups:
      - {first: 1, count: 64, speed: 400G, form_factor: QSFP-DD, lanes: 8, breakouts: [2x200G, 4x100G]}
    interface_names:
      sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}
    load_balancing:
      sonic: [ecmp, flowlet]
    hash_fields:
      sonic: [src-ip, dst-ip, protocol, src-port, dst-port, ipv6-flow-label]
"""


def user_intent(tmp_path, **load_balancing) -> dict:
    (tmp_path / "lab.yaml").write_text(USER_SWITCH)
    intent = tiny("sonic", model="LAB-SONIC-64", **load_balancing)
    intent["catalog"] = ["lab.yaml"]
    return intent


def test_a_user_catalog_adds_hash_fields(tmp_path, write_intent):
    b = build(write_intent, user_intent(tmp_path, hash_fields=["src-ip", "dst-ip", "ipv6-flow-label"]))
    db = config_db(b, "be-su01-leaf1")
    assert db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] == ["SRC_IP", "DST_IP", "IPV6_FLOW_LABEL"]
    assert violations(db) == []


def test_a_mode_the_hardware_does_but_fabricgen_cannot_write_is_still_an_error(tmp_path, write_intent):
    with pytest.raises(CheckError) as caught:
        build(write_intent, user_intent(tmp_path, mode="flowlet"))
    [problem] = caught.value.problems
    assert "LAB-SONIC-64 on sonic: fabricgen writes no SONiC config for flowlet" in problem.message
    assert problem.hint.startswith("use mode: ecmp on SONiC, or a switch that does flowlet: N9K-C9364D-GX2A (nxos)")


@pytest.mark.parametrize(
    "entry, message",
    [
        ("load_balancing: {nxos: [ecmp]}", "load_balancing lists nxos, which this switch does not run"),
        ("load_balancing: {sonic: [flowlet]}", "load_balancing.sonic must include ecmp"),
        ("hash_fields: {sonic: [src-ip, src-ip]}", "hash_fields.sonic lists a value twice"),
        ("load_balancing: {sonic: [ecmp, spraying]}", "spraying"),
    ],
)
def test_catalog_refuses_capabilities_that_cannot_be(tmp_path, entry, message):
    text = USER_SWITCH.split("    load_balancing:")[0] + f"    {entry}\n"
    (tmp_path / "lab.yaml").write_text(text)
    with pytest.raises(CatalogError) as caught:
        load_catalog([tmp_path / "lab.yaml"])
    assert message in str(caught.value)


def test_yang_validator_catches_bad_switch_hash():
    db = {"SWITCH_HASH": {"GLOBAL": {"ecmp_hash": ["SRC_IP", "SRC_PORT", "SRC_IP"], "lag_hash": "SRC_IP", "colour": "x"}, "LOCAL": {}}}
    found = "\n".join(violations(db))
    for fragment in (
        "'SRC_PORT' is not a hash-field",
        "a leaf-list value repeats",
        "lag_hash: value 'SRC_IP' is not a list",
        "unknown field",
        "the only key is GLOBAL",
    ):
        assert fragment in found, found
