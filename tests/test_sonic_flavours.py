"""SONiC flavours: Broadcom Enterprise SONiC (catalog/data/broadcom-sonic.yaml) builds for its own
release names, writes the forms it documents (standard interface names, BGP in config_db) and
says which flavour it wrote for in frr.conf's header, summary.md, build --json and manifest.json;
community SONiC keeps EthernetN aliases and its frr.conf (its bytes: tests/test_golden.py and
bench/samebytes.py)."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import pytest

from fabricgen.basics.errors import CheckError
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.reports.build_summary import build_summary
from tests.sonic_yang import violations

ENTERPRISE = """
name: esonic
gpus: 1024
backend:
  scalable_unit_gpus: 512
  bgp_security: {{gtsm: true}}
  leaf: {{model: DCS-7060X6-64PE, nos: sonic{release}}}
  spine: {{model: DCS-7060X6-64PE, nos: sonic{release}}}
"""
# the tables flavour_forms.bgp_tables writes (sonic-bgp-*.yang, sonic-route-map.yang,
# sonic-routing-policy-sets.yang, sonic-route-common.yang)
BGP_TABLES = {
    "BGP_GLOBALS",
    "BGP_GLOBALS_AF",
    "BGP_GLOBALS_AF_NETWORK",
    "BGP_GLOBALS_AF_AGGREGATE_ADDR",
    "BGP_PEER_GROUP",
    "BGP_PEER_GROUP_AF",
    "BGP_NEIGHBOR",
    "ROUTE_MAP_SET",
    "ROUTE_MAP",
    "PREFIX_SET",
    "PREFIX",
    "ROUTE_REDISTRIBUTE",
}


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    intent = tmp_path_factory.mktemp("esonic") / "esonic.yaml"
    intent.write_text(ENTERPRISE.format(release=', nos_release: "4.2.1"'))
    return intent, compile_intent(intent)


def config_dbs(build) -> dict[str, dict[str, Any]]:
    return {name: json.loads(build.files[f"configs/{name}/config_db.json"]) for name in build.configs}


def test_an_enterprise_release_builds_and_every_report_names_its_flavour(enterprise):
    intent, build = enterprise
    assert {c.nos_flavour for c in build.configs.values()} == {"broadcom-sonic"}
    summary = build.files["summary.md"].decode()
    assert re.search(r"\| backend \| leaf \| DCS-7060X6-64PE \| sonic \| 4\.2\.1 \(Broadcom Enterprise SONiC, broadcom-sonic\) \|", summary)
    assert json.loads(build.files["manifest.json"])["nos_releases"] == {"broadcom-sonic": ["4.2.1"]}
    switches = {d.role: d.flavour for d in build_summary(build, intent).devices}
    assert switches == {"gpu-node": None, "leaf": "broadcom-sonic", "spine": "broadcom-sonic"}
    flavour_notes = [n for n in build.notes if n.startswith("Broadcom Enterprise SONiC 4.2.1 (flavour broadcom-sonic) on the backend leaf, backend spine")]
    assert len(flavour_notes) == 1 and "pfc-watchdog" in flavour_notes[0] and "FRR's default timers" in flavour_notes[0], build.notes
    assert flavour_notes[0] in summary
    for name in build.configs:
        header = build.files[f"configs/{name}/frr.conf"].decode().splitlines()[2]
        assert header.startswith("! broadcom-sonic 4.2.1: the switch takes BGP from config_db.json"), (name, header)


def test_enterprise_config_db_uses_standard_names_and_native_keys(enterprise):
    _, build = enterprise
    for name, db in config_dbs(build).items():
        assert db["DEVICE_METADATA"]["localhost"]["intf_naming_mode"] == "standard", name
        for port, row in db["PORT"].items():
            # keys stay native (EthernetN: the AliasFeature HLD's "DB references to ports are unchanged")
            assert re.fullmatch(r"Ethernet\d+", port), (name, port)
            cage = int(row["index"])
            assert re.fullmatch(rf"Eth1/{cage}(/[1-8])?", row["alias"]), (name, port, row["alias"])
        assert len({row["alias"] for row in db["PORT"].values()}) == len(db["PORT"]), name


def test_enterprise_bgp_lives_in_config_db_as_frr_conf_says(enterprise):
    _, build = enterprise
    for name, db in config_dbs(build).items():
        config = build.configs[name]
        meta = db["DEVICE_METADATA"]["localhost"]
        assert (meta["docker_routing_config_mode"], meta["frr_mgmt_framework_config"]) == ("unified", "true")
        assert db["BGP_GLOBALS"]["default"]["local_asn"] == str(config.bgp.asn)
        neighbors = {key.split("|")[1]: row for key, row in db["BGP_NEIGHBOR"].items()}
        assert neighbors == {
            n.address: {"asn": str(n.remote_asn), "peer_group_name": n.group, "name": n.description, "admin_status": "true"} for n in config.bgp.neighbors
        }
        for group in config.bgp.groups:
            assert db["BGP_PEER_GROUP"][f"default|{group.name}"] == {"admin_status": "true", "ttl_security_hops": "1", "bfd": "true"}
            family = db["BGP_PEER_GROUP_AF"][f"default|{group.name}|ipv4_unicast"]
            assert (family["route_map_in"], family["route_map_out"]) == (["FABRICGEN-IN"], ["FABRICGEN-OUT"])
            assert family["max_prefix_limit"] == str(group.maximum_prefix)
        announced = {key.split("|")[1] for key in db["PREFIX"] if key.startswith("FABRICGEN-ANNOUNCE|")}
        assert announced == {rule.prefix for rule in config.bgp.policy.announce}, name
        assert bgp_violations(db) == [], name
        # every other table meets the community YANG checks (the BGP tables are checked above:
        # sonic_yang.violations refuses them outright, as community SONiC's routing is frr.conf)
        assert violations({t: rows for t, rows in db.items() if t not in BGP_TABLES}, "202411") == [], name


def test_the_bgp_checks_catch_what_the_yang_models_refuse(enterprise):
    _, build = enterprise
    db = json.loads(json.dumps(next(iter(config_dbs(build).values()))))
    group = next(iter(db["BGP_PEER_GROUP"]))
    next(iter(db["BGP_NEIGHBOR"].values()))["peer_group_name"] = "NOBODY"
    db["BGP_PEER_GROUP_AF"][f"{group}|ipv4_unicast"]["route_map_in"] = ["MISSING"]
    db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] = "257"
    db["ROUTE_MAP"]["FABRICGEN-IN|10"]["route_operation"] = "accept"
    found = "\n".join(bgp_violations(db))
    for expected in ("peer_group_name NOBODY", "route_map_in MISSING", "max_ebgp_paths 257", "route_operation accept"):
        assert expected in found, (expected, found)


def test_community_sonic_keeps_native_aliases_and_routing_in_frr_conf(write_intent):
    build = compile_intent(write_intent(ENTERPRISE.format(release="")))
    assert {c.nos_flavour for c in build.configs.values()} == {"sonic"}
    for name, db in config_dbs(build).items():
        assert not BGP_TABLES & set(db), name
        assert {"intf_naming_mode", "frr_mgmt_framework_config"}.isdisjoint(db["DEVICE_METADATA"]["localhost"]), name
        assert not any(row["alias"].startswith("Eth1/") for row in db["PORT"].values()), name
        assert not build.files[f"configs/{name}/frr.conf"].decode().splitlines()[2].startswith("! sonic")
    assert list(json.loads(build.files["manifest.json"])["nos_releases"]) == ["sonic"]


def test_a_release_of_neither_flavour_is_refused_with_both_lists(write_intent):
    with pytest.raises(CheckError) as refused:
        compile_intent(write_intent(ENTERPRISE.format(release=', nos_release: "4.3.0"')), render=False)
    message = str(refused.value)
    assert "4.3.0" in message and "use one of: 202405, 202411, 202505, 202511, 202605, master, 4.2.0, 4.2.1 " in message, message


def test_what_the_flavour_cannot_write_is_refused_naming_it(write_intent):
    evpn = "name: e\ngpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  routing: vxlan-evpn\n  leaf: {nos: sonic, nos_release: '4.2.1'}\n"
    with pytest.raises(CheckError, match="EVPN anycast gateway of every segment exists in no Broadcom Enterprise SONiC release"):
        compile_intent(write_intent(evpn), render=False)
    # config_db's auth_password is the key as the switch encrypts it (frrcfgd: `password ... encrypted`)
    keyed = ENTERPRISE.format(release=', nos_release: "4.2.1"').replace("{gtsm: true}", "{password: bgp-backend}")
    with pytest.raises(CheckError, match=r"backend\.bgp_security\.password: .*BGP session keys \(TCP-MD5\) exists in no Broadcom Enterprise SONiC"):
        compile_intent(write_intent(keyed), render=False)
    community = compile_intent(write_intent(ENTERPRISE.format(release="").replace("{gtsm: true}", "{password: bgp-backend}"), name="c"), render=False)
    assert all(c.bgp.groups[0].password == "bgp-backend" for c in community.configs.values())


def test_a_flavour_with_both_forms_and_evpn_keeps_its_vteps_bgp_in_frr_conf(tmp_path, write_intent):
    """A user flavour that claims every feature (routing in config_db and an anycast gateway):
    its VTEP leaves keep frr.conf (frrcfgd's EVPN VNI tables are not written), its spines carry
    the EVPN family in config_db."""
    from fabricgen.catalog import load_catalog

    features = "".join(f"      {name}: {{since: '5.0', source: vendor guide}}\n" for name in load_catalog().nos_releases["sonic"].features)
    (tmp_path / "vendor.yaml").write_text(
        f"nos_releases:\n  vendor-sonic:\n    nos: sonic\n    description: a vendor's SONiC\n    releases: ['5.0']\n    default: '5.0'\n    features:\n{features}"
    )
    build = compile_intent(
        write_intent(
            "catalog: [vendor.yaml]\nname: v\ngpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  routing: vxlan-evpn\n"
            "  leaf: {nos: sonic, nos_release: '5.0'}\n  spine: {nos: sonic, nos_release: '5.0'}\n"
        )
    )
    for name, db in config_dbs(build).items():
        meta = db["DEVICE_METADATA"]["localhost"]
        if build.configs[name].role.value == "leaf":
            assert meta["docker_routing_config_mode"] == "split-unified" and not BGP_TABLES & set(db), name
            assert build.files[f"configs/{name}/frr.conf"].decode().splitlines()[2] == "! vendor-sonic 5.0"
        else:
            assert meta["frr_mgmt_framework_config"] == "true", name
            family = db["BGP_PEER_GROUP_AF"]["default|LEAVES|l2vpn_evpn"]
            assert family["unchanged_nexthop"] == "true" and family["route_map_in"] == ["FABRICGEN-EVPN-IN"], name
            assert bgp_violations(db) == [], name


def bgp_violations(db: dict[str, Any]) -> list[str]:
    """What sonic-buildimage's BGP and routing-policy YANG models (branch 202411) refuse in the
    tables flavour_forms.bgp_tables writes: key shapes, enums, ranges, and the leafrefs between
    them (a neighbor's peer group, a peer group's route maps, a route map's prefix set). Where
    frrcfgd, the program that reads them (src/sonic-frr-mgmt-framework, same branch), reads
    otherwise, its reading holds: admin_status "true"/"false" (the models' typedef: up/down), a
    PREFIX key name|ip_prefix|masklength_range (the models add a sequence number)."""
    found: list[str] = []

    def bad(where: str, what: str) -> None:
        found.append(f"{where}: {what}")

    def in_range(value: str, low: int, high: int) -> bool:
        return value.isdigit() and low <= int(value) <= high

    for vrf, row in db.get("BGP_GLOBALS", {}).items():
        if vrf != "default" and vrf not in db.get("VRF", {}):
            bad(f"BGP_GLOBALS|{vrf}", "vrf_name is neither default nor a VRF")
        if not in_range(row.get("local_asn", ""), 1, 4294967295):
            bad(f"BGP_GLOBALS|{vrf}", f"local_asn {row.get('local_asn')}")
        ipaddress.IPv4Address(row["router_id"])
        for flag in ("log_nbr_state_changes", "load_balance_mp_relax"):
            if row.get(flag, "true") not in ("true", "false"):
                bad(f"BGP_GLOBALS|{vrf}", f"{flag} {row[flag]}")
    for key, row in db.get("BGP_GLOBALS_AF", {}).items():
        vrf, family = key.split("|")
        if vrf not in db["BGP_GLOBALS"] or family not in ("ipv4_unicast", "ipv6_unicast", "l2vpn_evpn"):
            bad(f"BGP_GLOBALS_AF|{key}", "key")
        if "max_ebgp_paths" in row and not in_range(row["max_ebgp_paths"], 1, 256):
            bad(f"BGP_GLOBALS_AF|{key}", f"max_ebgp_paths {row['max_ebgp_paths']}")
    for table in ("BGP_GLOBALS_AF_NETWORK", "BGP_GLOBALS_AF_AGGREGATE_ADDR"):
        for key, row in db.get(table, {}).items():
            vrf, family, prefix = key.split("|")
            ipaddress.IPv4Network(prefix)
            if f"{vrf}|{family}" not in db["BGP_GLOBALS_AF"] or row.get("summary_only", "true") not in ("true", "false"):
                bad(f"{table}|{key}", "key or summary_only")
    route_map_sets = set(db.get("ROUTE_MAP_SET", {}))
    for key, row in db.get("BGP_PEER_GROUP", {}).items():
        vrf, _ = key.split("|")
        if vrf not in db["BGP_GLOBALS"] or row.get("admin_status") not in ("true", "false"):
            bad(f"BGP_PEER_GROUP|{key}", "vrf or admin_status")
        if "ttl_security_hops" in row and not in_range(row["ttl_security_hops"], 1, 254):
            bad(f"BGP_PEER_GROUP|{key}", f"ttl_security_hops {row['ttl_security_hops']}")
        if row.get("bfd", "true") not in ("true", "false"):
            bad(f"BGP_PEER_GROUP|{key}", f"bfd {row['bfd']}")
    for key, row in db.get("BGP_PEER_GROUP_AF", {}).items():
        vrf, group, _ = key.split("|")
        if f"{vrf}|{group}" not in db["BGP_PEER_GROUP"] or row.get("admin_status") not in ("true", "false"):
            bad(f"BGP_PEER_GROUP_AF|{key}", "peer group or admin_status")
        for direction in ("route_map_in", "route_map_out"):
            for name in row.get(direction, []):
                if name not in route_map_sets:
                    bad(f"BGP_PEER_GROUP_AF|{key}", f"{direction} {name} is no ROUTE_MAP_SET")
            if len(row.get(direction, [])) > 1:
                bad(f"BGP_PEER_GROUP_AF|{key}", f"{direction}: max-elements 1")
        for field in ("max_prefix_limit", "max_prefix_restart_interval", "allow_as_count"):
            if field in row and not in_range(row[field], 1, 4294967295 if field != "allow_as_count" else 255):
                bad(f"BGP_PEER_GROUP_AF|{key}", f"{field} {row[field]}")
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, address = key.split("|")
        ipaddress.ip_address(address)
        if f"{vrf}|{row.get('peer_group_name')}" not in db.get("BGP_PEER_GROUP", {}):
            bad(f"BGP_NEIGHBOR|{key}", f"peer_group_name {row.get('peer_group_name')} is no peer group of VRF {vrf}")
        if not in_range(row.get("asn", ""), 1, 4294967295) or row.get("admin_status") not in ("true", "false"):
            bad(f"BGP_NEIGHBOR|{key}", "asn or admin_status")
    prefix_sets = db.get("PREFIX_SET", {})
    for name, row in prefix_sets.items():
        if row.get("mode") not in ("IPv4", "IPv6"):
            bad(f"PREFIX_SET|{name}", f"mode {row.get('mode')}")
    for key, row in db.get("PREFIX", {}).items():
        name, prefix, lengths = key.split("|")
        network = ipaddress.IPv4Network(prefix)
        if name not in prefix_sets or row.get("action") not in ("permit", "deny"):
            bad(f"PREFIX|{key}", "set or action")
        low_high = re.fullmatch(r"(\d+)\.\.(\d+)", lengths)
        if lengths != "exact" and not (low_high and network.prefixlen <= int(low_high[1]) <= int(low_high[2]) <= 32):
            bad(f"PREFIX|{key}", f"masklength_range {lengths}")
    for key, row in db.get("ROUTE_MAP", {}).items():
        name, statement = key.split("|")
        if name not in route_map_sets or not in_range(statement, 1, 65535):
            bad(f"ROUTE_MAP|{key}", "set or stmt_name")
        if row.get("route_operation") not in ("permit", "deny"):
            bad(f"ROUTE_MAP|{key}", f"route_operation {row.get('route_operation')}")
        if "match_prefix_set" in row and row["match_prefix_set"] not in prefix_sets:
            bad(f"ROUTE_MAP|{key}", f"match_prefix_set {row['match_prefix_set']} is no PREFIX_SET")
    for key, row in db.get("ROUTE_REDISTRIBUTE", {}).items():
        vrf, _, _, family = key.split("|")
        if vrf not in db["BGP_GLOBALS"] or family not in ("ipv4", "ipv6") or any(m not in route_map_sets for m in row.get("route_map", [])):
            bad(f"ROUTE_REDISTRIBUTE|{key}", "vrf, family or route_map")
    return found


def test_the_seed_release_string_is_the_flavour_release():
    """Seed 003's `show version` OS (SONiC-OS-4.2.1-Enterprise_Advanced) names the release listed."""
    seed = Path("/work/shared/seeds/003_b2680f710a597d55.txt")
    if not seed.exists():
        pytest.skip("seed 003 is not on this machine")
    assert "SONiC-OS-4.2.1-Enterprise_Advanced" in seed.read_text()


def test_push_refuses_a_switch_whose_routing_lives_in_config_db(enterprise, tmp_path):
    """The driver reloads frr.conf through frr-reload.py; on a flavour whose frrcfgd owns FRR's
    config (BGP in config_db) that would fight it, so a replace is refused before any switch is
    contacted. Community SONiC is not refused for it."""
    from fabricgen.nos.sonic.push import replace_must_keep

    _intent, build = enterprise
    name = next(iter(build.configs))
    files = {"config_db.json": build.files[f"configs/{name}/config_db.json"], "frr.conf": build.files[f"configs/{name}/frr.conf"]}
    assert any("BGP in config_db" in part for part in replace_must_keep(files, "SONiC-OS-4.2.1-Enterprise_Advanced"))
    community = tmp_path / "community.yaml"
    community.write_text(ENTERPRISE.format(release=""))
    plain = compile_intent(community)
    name = next(iter(plain.configs))
    files = {"config_db.json": plain.files[f"configs/{name}/config_db.json"], "frr.conf": plain.files[f"configs/{name}/frr.conf"]}
    assert not any("BGP in config_db" in part for part in replace_must_keep(files, "SONiC-OS-202505.1"))
