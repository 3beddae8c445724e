"""Uplinks as bought (backend.uplinks: {count, speed}), 800G fabric links on OSFP cages, and mixed
speeds between the leaf's downlinks and its uplinks."""

from __future__ import annotations

import csv
import json
from collections import Counter
from fractions import Fraction

import pytest

from fabricgen.basics.errors import DesignError, IntentError
from fabricgen.compiler.design.graph import LinkKind, Role
from fabricgen.compiler.pipeline import compile_intent
from tests import cli_runner

# 4 DGX nodes (32 GPUs, 8 rails): 8 leaves of 4 downlinks each, on 800G OSFP switches whose cages
# break out to 2 x 400G for the NICs.
OSFP_32 = """
gpus: 32
backend:
  uplinks: {{count: {count}, speed: 800G}}
  leaf: {{model: {model}, nos: {nos}}}
  spine: {{model: {model}, nos: {nos}}}
"""


def build(write_intent, text, render=False):
    return compile_intent(write_intent(text), render=render)


def problems_of(write_intent, text):
    with pytest.raises((DesignError, IntentError)) as caught:
        compile_intent(write_intent(text), render=False)
    return caught.value.problems


def fabric_links(fabric):
    return [link for link in fabric.links if link.kind is LinkKind.FABRIC]


def test_one_800g_uplink_per_leaf_to_one_spine_builds_exactly_that(write_intent):
    b = build(write_intent, OSFP_32.format(count=1, model="N9364E-SG2-O", nos="nxos"))
    s = b.sizing
    assert (s.leaves, s.spines, s.leaf_downlinks, s.leaf_uplinks, s.links_per_spine) == (8, 1, 4, 1, 1)
    # bandwidth, not counts: 4 x 400G down, 1 x 800G up
    assert s.built_ratio == Fraction(2) and s.fabric_speed_gbps == 800
    assert "one spine: no redundancy between leaves" in s.notes
    assert any("uplinks as given: 1 x 800G per leaf" in note and "2:1" in note for note in s.notes)
    assert not any(note.startswith("requested") for note in s.notes)  # nothing was rounded
    links = fabric_links(b.fabric)
    assert len(links) == 8 and {link.speed_gbps for link in links} == {800}
    assert {link.b.device.name for link in links} == {"be-spine01"}
    # downlinks first on broken-out cages, the uplink on the next whole cage: no cage serves both
    leaf = b.fabric.devices["be-su01-leaf1"]
    host_cages = {p.cage for p in leaf.ports.values() if p.link.kind is LinkKind.HOST}
    [uplink] = [p for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC]
    assert host_cages == {1, 2} and all(p.sub for p in leaf.ports.values() if p.link.kind is LinkKind.HOST)
    assert (uplink.cage, uplink.sub, uplink.name, uplink.speed_gbps) == (3, 0, "Ethernet1/3", 800)
    # the 800G link takes the module in its 1 x 800G mode; host links the same PID at 2 x 400G
    assert uplink.optic == "OSFP-800G-DR8"


def test_without_uplinks_the_same_cluster_gets_400g_uplinks_at_the_ratio(write_intent):
    # the old behaviour stays: uplinks at the NIC speed, rounded to spread over 2+ spines
    b = build(write_intent, "gpus: 32\nbackend: {leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n")
    assert (b.sizing.leaf_uplinks, b.sizing.spines, b.sizing.fabric_speed_gbps) == (4, 2, 400)


def test_explicit_count_is_not_rounded_to_the_ratio(write_intent):
    # 32 x 400G down; 3 uplinks cannot make 1:1, and no ratio rounding happens: 3 x 400G, 3 spines
    b = build(write_intent, "gpus: 256\nbackend: {uplinks: {count: 3}}\n")
    s = b.sizing
    assert (s.leaf_uplinks, s.spines, s.links_per_spine, s.fabric_speed_gbps) == (3, 3, 1, 400)
    assert s.built_ratio == Fraction(32, 3)
    assert not any(note.startswith("requested") for note in s.notes)


def test_count_spreads_evenly_over_pinned_spines(write_intent):
    b = build(write_intent, "gpus: 256\nbackend: {uplinks: {count: 16}, spine: {count: 4}}\n")
    assert (b.sizing.spines, b.sizing.links_per_spine) == (4, 4)
    per_spine = Counter(link.b.device.name for link in fabric_links(b.fabric) if link.a.device.name == "be-su01-leaf1")
    assert per_spine == {f"be-spine0{n}": 4 for n in range(1, 5)}


def test_speed_alone_sizes_uplinks_by_bandwidth(write_intent):
    # 4 x 400G down at 1:1 need 1600G up: 2 x 800G, one to each of 2 spines
    b = build(write_intent, "gpus: 32\nbackend: {uplinks: {speed: 800G}, leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n")
    s = b.sizing
    assert (s.leaf_uplinks, s.spines, s.built_ratio, s.fabric_speed_gbps) == (2, 2, Fraction(1), 800)


def test_ratio_beside_count_is_checked(write_intent):
    text = OSFP_32.format(count=2, model="N9364E-SG2-O", nos="nxos")
    # 2 x 800G for 4 x 400G is 1:1: the ratio written beside it agrees
    assert build(write_intent, text.replace("backend:\n", 'backend:\n  ratio: "1:1"\n')).sizing.built_ratio == Fraction(1)
    # 1 x 800G is 2:1, not the 1:1 the intent claims: refused, naming the line
    [problem] = problems_of(write_intent, OSFP_32.format(count=1, model="N9364E-SG2-O", nos="nxos").replace("backend:\n", 'backend:\n  ratio: "1:1"\n'))
    assert problem.field == ("backend", "ratio") and problem.line == 3
    assert "give 2:1, not the 1:1" in problem.message and 'ratio: "2:1"' in problem.hint


def test_uplink_speed_the_leaf_lacks_is_refused(write_intent):
    # an 800G leaf, but a 400G-only spine: the spine end cannot take the uplinks
    [problem] = problems_of(write_intent, "gpus: 256\nbackend: {uplinks: {count: 16, speed: 800G}, leaf: {model: N9364E-SG2-O}}\n")
    assert problem.field == ("backend", "uplinks", "speed")
    assert "N9K-C9364D-GX2A has no 800G ports" in problem.message and "spine end" in problem.message
    assert "N9364E-SG2-O" in problem.hint and "400G" in problem.hint  # a model that has them, or a speed the spine has
    both = problems_of(write_intent, "gpus: 256\nbackend: {uplinks: {count: 16, speed: 800G}}\n")
    assert len(both) == 2 and {p.field for p in both} == {("backend", "uplinks", "speed")}


def test_more_uplinks_than_the_leaf_has_left(write_intent):
    # 32 x 400G on 16 broken-out cages leave 48 whole 800G cages
    [problem] = problems_of(
        write_intent, "gpus: 256\nbackend: {uplinks: {count: 49, speed: 800G}, leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n"
    )
    assert problem.field == ("backend", "uplinks", "count")
    assert "leaves 48 800G ports free after 32 400G downlinks" in problem.message and "count: 48" in problem.hint


def test_count_that_pinned_spines_cannot_divide(write_intent):
    [problem] = problems_of(write_intent, "gpus: 256\nbackend: {uplinks: {count: 3}, spine: {count: 2}}\n")
    assert problem.field == ("backend", "spine", "count")
    assert "pin 1 or 3 spines" in problem.hint


def test_uplinks_with_three_tiers_is_refused(write_intent):
    [problem] = problems_of(write_intent, "gpus: 256\nbackend: {tiers: 3, uplinks: {count: 2}}\n")
    assert problem.field[:1] == ("backend",)
    assert "2 tiers only" in problem.message


def test_uplinks_do_not_fall_back_to_three_tiers(write_intent):
    # 128 leaves x 32 uplinks cannot reach every 64-port spine: without uplinks this becomes 3
    # tiers; with uplinks given the build refuses instead of changing the design behind them
    [problem] = problems_of(write_intent, "gpus: 4096\nbackend: {uplinks: {count: 32}}\n")
    assert problem.field == ("backend", "uplinks", "count")
    assert "128 leaves x 32 400G uplinks cannot spread evenly over any spine count" in problem.message
    assert "3 tiers do not take uplinks" in problem.hint


@pytest.mark.parametrize("slack, medium", [(0.0, "dac"), (20.0, "smf")])
def test_800g_fabric_links_take_the_medium_their_length_needs(write_intent, slack, medium):
    b = build(write_intent, OSFP_32.format(count=2, model="N9364E-SG2-O", nos="nxos") + f"layout: {{slack_m: {slack}}}\n")
    catalog_media = {"MCP4Y10-N001": "dac", "MCP4Y10-N01A": "dac", "MCP4Y10-N002": "dac", "OSFP-800G-DR8": "smf"}
    links = fabric_links(b.fabric)
    for link in links:
        assert link.a.optic == link.b.optic, link
        if medium == "dac":
            assert link.length_m is not None and link.length_m <= 2 and link.cable is None, link  # DAC: cable built in
        assert catalog_media[link.a.optic] == medium, (link, link.length_m)
    if medium == "smf":
        assert {link.cable for link in links} == {"CB-M12-M12-SMF"}
    # host links stay 400G on the 2 x 400G optic, never on an 800G DAC
    assert {(link.speed_gbps, link.b.optic) for link in b.fabric.links if link.kind is LinkKind.HOST} == {(400, "OSFP-800G-DR8")}


def test_800g_links_in_cabling_and_bom(write_intent, tmp_path):
    path = write_intent(OSFP_32.format(count=1, model="N9364E-SG2-O", nos="nxos") + "layout: {slack_m: 0.0}\n")
    out = tmp_path / "out"
    run = cli_runner.fabricgen("build", path, "-o", out)
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader((out / "cabling.csv").open()))
    fabric = [r for r in rows if r["kind"] == "fabric"]
    assert len(fabric) == 8 and {r["speed"] for r in fabric} == {"800G"}
    bom = {r["pid"]: r for r in csv.DictReader((out / "bom.csv").open())}
    dacs = sum(int(bom[pid]["quantity"]) for pid in bom if pid.startswith("MCP4Y10-"))
    dr8_links = sum(1 for r in fabric if r["a_optic"] == "OSFP-800G-DR8")
    assert dacs == 8 - dr8_links and dacs > 0  # one DAC per link, its cable built in
    summary = (out / "summary.md").read_text()
    assert "uplinks as given: 1 x 800G per leaf for 4 x 400G downlinks, downlink:uplink bandwidth 2:1" in summary
    topology = json.loads((out / "topology.json").read_text())
    assert json.dumps(topology).count('"built_ratio": "2:1"') >= 1


def test_configs_carry_each_link_its_own_speed(write_intent):
    nxos = build(write_intent, OSFP_32.format(count=1, model="N9364E-SG2-O", nos="nxos"), render=True)
    leaf = nxos.files["configs/be-su01-leaf1.cfg"] if hasattr(nxos, "files") else None
    if leaf is None:
        pytest.skip("Build keeps no rendered files in memory")
    text = leaf if isinstance(leaf, str) else leaf.decode()
    assert "interface breakout module 1 port 1 map 400g-2x" in text
    assert "interface breakout module 1 port 3 map" not in text  # the 800G cage stays whole
    assert "service-policy type queuing output FABRICGEN-QUEUING-800G" in text


def test_sonic_800g_port_is_whole_with_8_lanes(write_intent, tmp_path):
    path = write_intent(OSFP_32.format(count=1, model="DCS-7060X6-64PE", nos="sonic"))
    out = tmp_path / "out"
    run = cli_runner.fabricgen("build", path, "-o", out)
    assert run.returncode == 0, run.stderr
    db = json.loads((out / "configs" / "be-su01-leaf1" / "config_db.json").read_text())
    # cage 3 of the O128S2 hwsku is Ethernet16, lanes 9-16 (port_config.ini); whole at 800G
    assert db["PORT"]["Ethernet16"]["speed"] == "800000"
    assert db["PORT"]["Ethernet16"]["lanes"] == "9,10,11,12,13,14,15,16"
    # by the key platform.json gives the whole-cage mode (x86_64-arista_7060x6_64pe: "1x800G[400G]");
    # a plain "1x800G" matches none of its modes
    assert db["BREAKOUT_CFG"]["Ethernet16"] == {"brkout_mode": "1x800G[400G]"}
    assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "2x400G"}
    assert db["PORT"]["Ethernet0"]["speed"] == "400000"
    from tests.sonic_yang import (
        violations,  # the sonic-port / sonic-breakout_cfg constraints
    )

    assert violations(db, "202505") == []


def test_bad_uplinks_exit_2_with_file_line_field_and_fix(write_intent):
    path = write_intent("gpus: 256\nbackend:\n  uplinks: {count: 3}\n  spine: {count: 2}\n")
    run = cli_runner.fabricgen("validate", path)
    assert run.returncode == 2
    text = run.stdout + run.stderr
    assert f"{path.name}" in text and "backend.spine.count" in text and "pin 1 or 3 spines" in text


def test_uplinks_fields_are_validated(write_intent):
    problems = problems_of(write_intent, "gpus: 256\nbackend: {uplinks: {count: 0, speed: fast}}\n")
    fields = {p.field for p in problems}
    assert ("backend", "uplinks", "count") in fields and ("backend", "uplinks", "speed") in fields


def test_spines_are_spines(write_intent):
    b = build(write_intent, OSFP_32.format(count=1, model="N9364E-SG2-O", nos="nxos"))
    assert [d.name for d in b.fabric.by_role(Role.SPINE)] == ["be-spine01"]


def test_an_800g_dr8_fabric_link_takes_two_trunks_a_400g_leg_one(write_intent):
    from fabricgen.reports.bom import bom_rows

    # 20 m of slack: every fabric link is long enough for OSFP-800G-DR8 (no DAC reaches)
    b = build(write_intent, OSFP_32.format(count=2, model="N9364E-SG2-O", nos="nxos") + "layout: {slack_m: 20.0}\n")
    fabric = fabric_links(b.fabric)
    hosts = [link for link in b.fabric.links if link.kind is LinkKind.HOST]
    assert {link.a.optic for link in fabric} == {"OSFP-800G-DR8"} and len(fabric) == 16 and len(hosts) == 32
    trunks = sum(row.quantity for row in bom_rows(b.compiled) if row.pid == "CB-M12-M12-SMF" and row.section == "Backend network")
    # 1 x 800G uses both MPO-12 connectors of each end; a 2 x 400G leg to a NIC uses one
    assert trunks == 16 * 2 + 32 * 1
    [row] = [row for row in bom_rows(b.compiled) if row.pid == "CB-M12-M12-SMF"]
    assert row.basis == "one per link: 32 host + 16 fabric x 2"  # the basis says which links take two
