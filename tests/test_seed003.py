"""Seed 003's cluster (Supermicro's SSE-T8032S white paper, Appendix 1), as intents/seed-003-mi300x.yaml
ships it: built from the built-in catalog alone, its BOM counted by hand from the appendix.

Hand count: 4 nodes x 8 NICs = 32 NIC ports; rails 1-4 on leaf 1 and 5-8 on leaf 2, 16 NIC ports
a leaf, two to each 2 x 400G cage: 8 cages a leaf, 16 Y-cables (the appendix orders 32, one per
NIC with one leg unused: the intent's comment says why the rule gives 16). Uplinks: 2 x 400G a
leaf, both in one leaf cage, to one spine cage: one 800G OSFP cable a leaf, 2 in all (the
appendix's 2 x CBL-NTWK-1107-15M-J).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from fabricgen.compiler.design.graph import LinkKind
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import INTENTS

SEED_003 = INTENTS / "seed-003-mi300x.yaml"
Y_CABLE = "CBL-NTWK-0976-15M-J"
SWITCH_CABLE = "CBL-NTWK-1107-15M-J"


@pytest.fixture(scope="module")
def build():
    return compile_intent(SEED_003)


def bom(build) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(build.files["bom.csv"].decode())))


def test_it_builds_from_the_built_in_catalog_alone(build):
    manifest = json.loads(build.files["manifest.json"])
    assert manifest["catalog"] == {}, "no user catalog file"


def test_bom_has_the_appendix_nodes_switches_and_leaf_spine_cables(build):
    rows = {r["pid"]: r for r in bom(build)}
    assert int(rows["AS-8125GS-TNMR2"]["quantity"]) == 4
    assert int(rows["SSE-T8032S"]["quantity"]) == 3
    assert rows["SSE-T8032S"]["basis"] == "one per switch: 1 spine + 2 leaves"
    assert int(rows[SWITCH_CABLE]["quantity"]) == 2, "one 800G cable per leaf, as the appendix orders"


def test_y_cables_are_counted_one_per_leaf_cage_by_a_named_rule(build):
    row = next(r for r in bom(build) if r["pid"] == Y_CABLE)
    assert int(row["quantity"]) == 16, "32 NIC ports, two per cage"
    assert row["basis"] == "one per switch cage (2 links each, cable built in)"
    host = [link for link in build.fabric.links if link.kind is LinkKind.HOST]
    assert len(host) == 32 and {link.b.optic for link in host} == {Y_CABLE}
    cages = Counter((link.b.device.name, link.b.cage) for link in host)
    assert len(cages) == 16 and set(cages.values()) == {2}, "every Y-cable has both legs cabled"


def test_uplinks_are_two_400g_links_in_one_cage_on_each_end(build):
    fabric = [link for link in build.fabric.links if link.kind is LinkKind.FABRIC]
    assert len(fabric) == 4 and {link.a.speed_gbps for link in fabric} == {400}
    leaf_cages = Counter((link.a.device.name, link.a.cage) for link in fabric)
    spine_cages = Counter((link.b.device.name, link.b.cage) for link in fabric)
    assert set(leaf_cages.values()) == {2} and set(spine_cages.values()) == {2} and len(leaf_cages) == 2


def test_the_nics_get_broadcom_host_files(build):
    script = build.files["hosts/gpu0001/nic-qos.sh"].decode()
    assert "dcb pfc set" in script and "bnxt_re" in script


def test_every_config_db_passes_the_yang_checks_of_its_release(build):
    from tests.sonic_yang import violations
    from tests.test_render_sonic import config_dbs
    from tests.test_sonic_flavours import BGP_TABLES, bgp_violations

    dbs = config_dbs(build)
    assert len(dbs) == 3
    releases = {(c.nos_release, c.nos_flavour) for name, c in build.configs.items() if name in dbs}
    assert releases == {("4.2.1", "broadcom-sonic")}, "the appendix's SONiC-OS-4.2.1-Enterprise_Advanced"
    # the BGP tables against the community models as that flavour's frrcfgd reads them, the rest
    # against the suite's 202411 checks (tests/test_sonic_flavours.py)
    assert {name: bgp_violations(db) for name, db in dbs.items() if bgp_violations(db)} == {}
    others = {name: {table: rows for table, rows in db.items() if table not in BGP_TABLES} for name, db in dbs.items()}
    assert {name: violations(db, "202411") for name, db in others.items() if violations(db, "202411")} == {}
    # the host cages run as 2 x 400G, as the appendix's Y-cables need
    leaf = dbs["be-su01-leaf1"]
    assert {row["brkout_mode"] for row in leaf["BREAKOUT_CFG"].values()} == {"2x400G"}
