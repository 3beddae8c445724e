"""Chassis switches: the catalog's modular entries (fabricgen/catalog/data/chassis.yaml), their
per-slot port names, and 3-tier fabrics whose spines (and cores) are chassis with several
parallel links from each leaf to each spine: sizing, graph, addresses, sessions, configs, BOM.

Counts are worked by hand from the catalog's numbers: a DCS-7812R4 has 12 line cards of 36 x
800G OSFP cages, so 864 x 400G ports (432 down, 432 up at 1:1); a DCS-7060DX5-64S leaf has 64 x
400G ports (32 down, 32 up for a unit of 32 DGX nodes); a DGX has 8 x 400G rails.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import pytest

from fabricgen.basics.errors import CatalogError, DesignError
from fabricgen.catalog import load_catalog
from fabricgen.compiler.design.graph import LinkKind, Role
from fabricgen.compiler.design.three_tier import size_three_tier
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import build_refused

REPO = Path(__file__).resolve().parents[1]

CHASSIS_SPINES = """
    name: chassis-spines
    gpus: {gpus}
    backend:
      tiers: 3
      leaf: {{model: DCS-7060DX5-64S, nos: eos}}
      spine: {{model: DCS-7812R4, nos: eos}}
    {extra}"""


def chassis_intent(write_intent, gpus: int, extra: str = ""):
    return write_intent(CHASSIS_SPINES.format(gpus=gpus, extra=extra))


# --- the catalog ---------------------------------------------------------------------------------


def test_the_7812r4_has_12_line_cards_of_36_osfp_cages_named_per_slot():
    model = load_catalog().switches["DCS-7812R4"]
    assert model.ports_at(800) == 12 * 36 and model.ports_at(400) == 12 * 36 * 2
    # slots 3-14 (two supervisor slots first), port on the card, then the lane (EOS Ethernet3/1/1)
    assert [model.name_of("eos", cage) for cage in (1, 36, 37, 432)] == ["Ethernet3/1/1", "Ethernet3/36/1", "Ethernet4/1/1", "Ethernet14/36/1"]
    assert [model.name_of("eos", 37, sub, 400) for sub in (1, 2)] == ["Ethernet4/1/1", "Ethernet4/1/5"]
    names = [model.name_of("eos", cage, sub, 400) for cage in range(1, 433) for sub in (1, 2)]
    assert len(set(names)) == 864
    kinds = Counter(kind for kind, *_ in model.chassis.parts())
    assert kinds == {"line card": 1, "supervisor": 1, "fabric module": 1}


SWITCH = """
switches:
  LAB-CHASSIS:
    description: a two-slot lab chassis
    vendor: Lab
    nos: [eos]
    interface_names:
      eos: {port: "Ethernet{slot}/{card_port}/1", breakout: "Ethernet{slot}/{card_port}/{cage_lane}"}
    chassis:
      first_line_card_slot: 3
      line_card_slots: 2
      supervisor_slots: 2
      source: lab
      supervisors: {pid: LAB-SUP, description: supervisor, count: %(sups)d}
      line_cards:
        - pid: LAB-LC
          description: a 4-port card
          slots: %(slots)s
          port_groups:
            - {first: 1, count: 4, speed: 400G, form_factor: QSFP-DD, lanes: 8, breakouts: [2x200G]}
"""


def test_a_user_chassis_entry_numbers_its_cages_slot_by_slot(tmp_path):
    extra = tmp_path / "lab.yaml"
    extra.write_text(SWITCH % {"sups": 2, "slots": "[4, 3]"})
    model = load_catalog([extra]).switches["LAB-CHASSIS"]
    assert [model.name_of("eos", cage) for cage in range(1, 9)] == [f"Ethernet{slot}/{port}/1" for slot in (3, 4) for port in range(1, 5)]


@pytest.mark.parametrize(
    ("sups", "slots", "message"),
    [
        (2, "[3, 5]", "line card LAB-LC is in slot 5, but the line-card slots are 3-4"),
        (2, "[3, 3]", "slot 3 holds both LAB-LC and LAB-LC"),
        (3, "[3]", "3 supervisors do not fit 2 supervisor slots"),
    ],
)
def test_a_chassis_entry_that_does_not_fit_its_slots_is_refused_where_it_is_written(tmp_path, sups, slots, message):
    extra = tmp_path / "lab.yaml"
    extra.write_text(SWITCH % {"sups": sups, "slots": slots})
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    (problem,) = caught.value.problems
    assert message in problem.message
    assert problem.file is not None and problem.file.endswith("lab.yaml")
    assert problem.field == ("switches", "LAB-CHASSIS", "chassis") and problem.line == 9


def test_a_chassis_entry_with_port_groups_of_its_own_is_refused(tmp_path):
    extra = tmp_path / "lab.yaml"
    extra.write_text(SWITCH % {"sups": 2, "slots": "[3]"} + "    port_groups: [{first: 1, count: 4, speed: 400G, form_factor: QSFP-DD}]\n")
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    (problem,) = caught.value.problems
    assert "a chassis entry's ports come from its line cards; remove port_groups" in problem.message
    assert problem.field == ("switches", "LAB-CHASSIS") and problem.line == 3


def test_a_switch_with_neither_port_groups_nor_chassis_is_refused(tmp_path):
    extra = tmp_path / "lab.yaml"
    extra.write_text(
        "switches:\n  LAB-EMPTY:\n    description: x\n    vendor: Lab\n    nos: [eos]\n    interface_names: {eos: {port: 'Ethernet{port}', breakout: 'Ethernet{port}/{sub}'}}\n"
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    assert "a switch needs port_groups" in caught.value.problems[0].message


# --- sizing --------------------------------------------------------------------------------------


def test_parallel_links_shrink_the_pod_spines_and_fill_each_spine():
    # 64 leaves (8 units of 8 rails) with 32 uplinks; spines of 864 ports at 1:1 take 432 leaf links
    one = size_three_tier(256, 8, 32, 64, 864, 864)
    assert (one.pod_sus, one.pods, one.pod_spines, one.spine_downlinks) == (54, 1, 32, 432)
    sixteen = size_three_tier(256, 8, 32, 64, 864, 864, links_per_spine=16)
    # a pod is 432 // (8 x 16) = 3 units; 8 units make 3 pods of 32 / 16 = 2 spines
    assert (sixteen.pod_sus, sixteen.pods, sixteen.pod_spines, sixteen.spines) == (3, 3, 2, 6)
    assert (sixteen.spine_downlinks, sixteen.spine_uplinks, sixteen.links_per_spine) == (3 * 8 * 16, 384, 16)


def test_links_per_spine_that_does_not_divide_the_uplinks_is_refused():
    with pytest.raises(DesignError) as caught:
        size_three_tier(256, 8, 32, 64, 864, 864, links_per_spine=5)
    problem = caught.value.problems[0]
    assert "links_per_spine: 5 does not divide a leaf's 32 uplinks" in problem.message and problem.field == ("backend", "links_per_spine")
    assert "1, 2, 4, 8, 16, 32" in problem.hint


def test_2048_gpus_on_chassis_spines_take_6_full_spines_with_16_links_per_pair(write_intent):
    build = compile_intent(chassis_intent(write_intent, 2048), render=False)
    s = build.sizing
    # links_per_spine divides 32 and leaves 2+ spines: 1, 2, 4, 8, 16 give 32, 16, 8, 8, 6 spines
    # (pods of 54, 27, 13, 6, 3 units for the 8 units): 16 makes the fewest, 384 of 432 downlinks used
    assert (s.leaves, s.leaf_uplinks, s.links_per_spine, s.pod_spines, s.pods, s.spines) == (64, 32, 16, 2, 3, 6)
    assert (s.spine_downlinks, s.spine_uplinks) == (384, 384)
    # spine uplinks 384 split in groups of the fewest cores that take 3 pods: 2 a group, 2 groups
    assert (s.group_cores, s.cores, s.links_per_core) == (2, 4, 192)
    assert any("16 parallel link(s) from each leaf to each DCS-7812R4 spine of its pod" in note for note in build.compiled.notes)


def test_4096_gpus_prefer_fewer_pods_when_spine_counts_tie(write_intent):
    s = compile_intent(chassis_intent(write_intent, 4096), render=False).sizing
    # 16 units: 8 links give pods of 6 units (3 pods x 4 spines), 16 links pods of 3 (6 x 2): 12 spines both
    assert (s.links_per_spine, s.pod_sus, s.pods, s.pod_spines, s.spines, s.cores) == (8, 6, 3, 4, 12, 8)


def test_links_per_spine_from_the_intent_is_used_as_given(write_intent):
    s = compile_intent(chassis_intent(write_intent, 2048, "  links_per_spine: 4\n"), render=False).sizing
    # pods of 432 // 32 = 13 units hold all 8: one pod of 32 / 4 = 8 spines, 8 x 8 x 4 = 256 links used of 416 reserved
    assert (s.links_per_spine, s.pods, s.pod_spines, s.spines, s.spine_downlinks) == (4, 1, 8, 8, 13 * 8 * 4)


def test_a_fixed_spine_keeps_one_link_per_leaf(write_intent):
    s = compile_intent(write_intent("gpus: 4096\n"), render=False).sizing
    assert s.tiers == 3 and s.links_per_spine == 1 and s.spines == 128


def test_links_per_spine_on_2_tiers_or_not_dividing_the_uplinks_is_refused(write_intent):
    stderr = build_refused(write_intent("gpus: 256\nbackend:\n  tiers: 2\n  links_per_spine: 2\n"))
    assert "links_per_spine only apply to 3 tiers" in stderr
    stderr = build_refused(chassis_intent(write_intent, 2048, "  links_per_spine: 5\n"))
    assert "links_per_spine: 5 does not divide a leaf's 32 uplinks" in stderr and "backend.links_per_spine" in stderr


# --- the built fabric ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chassis_build(tmp_path_factory):
    path = tmp_path_factory.mktemp("chassis") / "chassis-2048.yaml"
    path.write_text(re.sub(r"(?m)^    ", "", CHASSIS_SPINES.format(gpus=2048, extra="")).lstrip("\n"))
    return compile_intent(path)


def test_every_leaf_has_16_links_to_each_spine_of_its_pod_each_its_own_31_and_session(chassis_build):
    fabric_links = [link for link in chassis_build.fabric.links if link.kind is LinkKind.FABRIC and link.a.device.role is Role.LEAF]
    pairs = Counter((link.a.device.name, link.b.device.name) for link in fabric_links)
    assert len(fabric_links) == 64 * 32 and len(pairs) == 64 * 2 and set(pairs.values()) == {16}
    rows = list(csv.DictReader(io.StringIO(chassis_build.files["ip-plan.csv"].decode())))
    # the spine end of every leaf-spine link holds a /31 of its own, its peer the other address
    spine_ends = [r for r in rows if r["kind"] == "fabric" and r["peer_device"].startswith("be-su")]
    assert len(spine_ends) == 64 * 32 and len({r["address"] for r in spine_ends}) == 64 * 32
    assert all(r["address"].endswith("/31") for r in spine_ends)
    to_spine01 = [r for r in spine_ends if r["device"] == "be-spine01" and r["peer_device"] == "be-su01-leaf1"]
    assert len(to_spine01) == 16
    config = chassis_build.files["configs/be-su01-leaf1.cfg"].decode()
    # one eBGP session per link: 32 neighbours, ECMP over all of them (2 spines x 16 links)
    assert len(re.findall(r"(?m)^   neighbor \S+ remote-as ", config)) == 32 and "maximum-paths 32 ecmp 32" in config


def test_the_spines_configs_name_line_card_ports_by_slot(chassis_build):
    config = chassis_build.files["configs/be-spine01.cfg"].decode()
    interfaces = re.findall(r"(?m)^interface (Ethernet\S+)$", config)
    # 768 ports at 400G: both halves of cages 1-384, slots 3-12 whole and 24 cages of slot 13
    assert len(interfaces) == 768
    assert interfaces[:3] == ["Ethernet3/1/1", "Ethernet3/1/5", "Ethernet3/2/1"] and interfaces[-1] == "Ethernet13/24/5"
    assert "maximum-paths 384 ecmp 384" in config


def test_the_bom_lists_every_chassis_and_its_line_cards_supervisors_and_fabric_modules(chassis_build):
    rows = list(csv.DictReader(io.StringIO(chassis_build.files["bom.csv"].decode())))
    backend = {r["pid"]: (int(r["quantity"]), r["basis"]) for r in rows if r["section"] == "Backend network"}
    # 6 spines + 4 cores are DCS-7812R4 chassis, each with 12 line cards, 2 supervisors, 6 fabric modules
    assert backend["DCS-7812R4"] == (10, "one chassis per switch: 6 spines + 4 cores")
    assert backend["DCS-7800R4-36PE-LC"] == (120, "12 line cards per DCS-7812R4 chassis x 10 (slots 3-14)")
    assert backend["DCS-7800-SUP1S"][0] == 20 and "unverified" in backend["DCS-7800-SUP1S"][1]
    assert backend["7812R4-FM"][0] == 60
    assert backend["DCS-7060DX5-64S"][0] == 64


def test_a_pinned_spine_count_picks_the_links_per_spine_that_gives_it(write_intent):
    pinned = CHASSIS_SPINES.format(gpus=2048, extra="").replace("spine: {model: DCS-7812R4, nos: eos}", "spine: {model: DCS-7812R4, nos: eos, count: 8}")
    build = compile_intent(write_intent(pinned), render=False)
    # 8 spines: 4 links (one pod of 8 spines) or 8 links (2 pods of 4); the fewer pods win
    s = build.sizing
    assert (s.links_per_spine, s.pods, s.spines) == (4, 1, 8)


def test_the_nexus_9516_names_its_36_port_cards_per_module_as_nxos_does():
    model = load_catalog().switches["N9K-C9516"]
    assert model.ports_at(100) == 16 * 36 and model.rack_units == 21
    assert [model.name_of("nxos", cage) for cage in (1, 36, 37, 576)] == ["Ethernet1/1", "Ethernet1/36", "Ethernet2/1", "Ethernet16/36"]


def test_a_nexus_9516_frontend_spine_is_listed_with_its_line_cards_supervisors_and_fabric_modules(write_intent):
    text = (REPO / "intents" / "cisco-256-gpu.yaml").read_text()
    head, frontend = text.split("\nfrontend:", 1)
    frontend = frontend.replace("spine: {model: N9K-C9364D-GX2A, nos: nxos}", "spine: {model: N9K-C9516, nos: nxos}", 1)
    build = compile_intent(write_intent(head + "\nfrontend:" + frontend))
    rows = list(csv.DictReader(io.StringIO(build.files["bom.csv"].decode())))
    front = {r["pid"]: (int(r["quantity"]), r["basis"]) for r in rows if r["section"] == "Converged frontend and storage network"}
    # 2 frontend spines, each 16 line cards, 2 supervisors and 5 fabric modules
    assert front["N9K-C9516"] == (2, "one chassis per switch: 2 spines")
    assert front["N9K-X9736C-FX"] == (32, "16 line cards per N9K-C9516 chassis x 2 (slots 1-16)")
    assert front["N9K-SUP-B+"][0] == 4 and front["N9K-C9516-FM-E2"][0] == 10
    assert "interface Ethernet1/1\n" in build.files["configs/fe-spine01.cfg"].decode()


@pytest.mark.parametrize("setting", ["links_per_spine: 4", "pod_gpus: 256", "spine_ratio: '2:1'"])
def test_three_tier_settings_on_a_cluster_that_builds_two_tiers_are_refused(write_intent, setting):
    """With tiers left out a 256-GPU cluster fits 2 tiers, where links_per_spine, pod_gpus and
    spine_ratio mean nothing: they were ignored without a word, now refused with the fix."""
    from tests.conftest import build_refused

    stderr = build_refused(write_intent(f"gpus: 256\nbackend:\n  {setting}\n"))
    name = setting.split(":")[0]
    assert f"backend.{name}" in stderr and "only apply to 3 tiers, but this cluster builds 2 tiers" in stderr and "set tiers: 3" in stderr
