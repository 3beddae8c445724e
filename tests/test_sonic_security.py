"""SONiC day-0 security: frr.conf with RFC 8212 on, keys, GTSM and maximum-prefix on every session;
config_db with the management plane (AAA, TACACS+, NTP, syslog, SNMPv3, control-plane ACLs);
placeholders only, never a secret's value."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from fabricgen.basics.errors import CheckError
from fabricgen.build.secrets import Secrets
from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import needs_frr
from tests.sonic_yang import RELEASES, violations
from tests.test_render_sonic import config_dbs, frr_confs, sonic_switches, vtysh_dryrun

INTENTS = Path(__file__).parent.parent / "intents"
MARKERS = {
    "bgp-backend": "MarkerBgpBackend1",
    "bgp-frontend": "MarkerBgpFrontend2",
    "tacacs-key": "MarkerTacacs3",
    "ntp-key": "MarkerNtp4",
    "snmp-auth-key": "MarkerSnmpAuth5",
    "snmp-priv-key": "MarkerSnmpPriv6",
    "admin-password-hash": "$6$MarkerSalt$MarkerHash7",
}


def _sonic_variant(tmp_path: Path, gpus: int, edit=None) -> Path:
    """cisco-<gpus>-gpu with every leaf and spine on SONiC (N9K-C9364D-GX2A and N9K-C93600CD-GX
    list sonic in the catalog); the OOB switches stay on NX-OS."""
    doc = yaml.safe_load((INTENTS / f"cisco-{gpus}-gpu.yaml").read_text())
    for network in ("backend", "frontend"):
        for role in ("leaf", "spine"):
            doc[network][role]["nos"] = "sonic"
        if doc[network].get("routing") == "vxlan-evpn":
            doc[network]["leaf"]["nos_release"] = "master"  # SONiC's anycast gateway (SAG) is on master only
    doc["name"] = f"cisco-{gpus}-gpu-sonic-security"
    if edit:
        edit(doc)
    path = tmp_path / f"{doc['name']}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """Both whitepaper clusters on SONiC, built with marker values in the environment."""
    directory = tmp_path_factory.mktemp("sonic-security")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in MARKERS.items():
            patch.setenv("FABRICGEN_SECRET_" + name.upper().replace("-", "_"), value)
        return {gpus: compile_intent(_sonic_variant(directory, gpus)) for gpus in (256, 512)}


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_session_has_policy_key_gtsm_and_maximum_prefix(secured, gpus):
    build = secured[gpus]
    for name, text in frr_confs(build).items():
        config = build.configs[name]
        assert "no bgp ebgp-requires-policy" not in text, name
        # `frr defaults datacenter` turns RFC 8212 off, so it must be switched on in every instance
        assert text.count("bgp ebgp-requires-policy") == text.count("\nrouter bgp "), name
        groups = set(re.findall(r"^ neighbor (\S+) peer-group$", text, re.M))
        assert groups and groups == {g.name for g in config.bgp.groups}, name
        # every neighbor belongs to a group, so it inherits what the group says
        addresses = set(re.findall(r"^ neighbor (\d+\.\d+\.\d+\.\d+) remote-as", text, re.M))
        assert addresses == set(re.findall(r"^ neighbor (\S+) peer-group [A-Z]+$", text, re.M)), name
        key = "bgp-backend" if config.network == "backend" else "bgp-frontend"
        for group in groups:
            assert f" neighbor {group} password <<secret={key}>>\n" in text, (name, group)
            assert f" neighbor {group} ttl-security hops 1\n" in text, (name, group)
            assert f"  neighbor {group} route-map FABRICGEN-IN in\n" in text, (name, group)
            assert f"  neighbor {group} route-map FABRICGEN-OUT out\n" in text, (name, group)
            limit = re.search(rf"^  neighbor {group} maximum-prefix (\d+) restart 5$", text, re.M)
            # at least every prefix the network carries (a loopback per switch, a block per leaf)
            switches = [d for d in build.fabric.switches() if d.network.value == config.network and d.nos == "sonic"]
            assert limit and int(limit.group(1)) >= len(switches), (name, group)


def test_policy_announces_only_what_a_leaf_owns(secured):
    build = secured[256]
    text = frr_confs(build)["be-su01-leaf1"]
    announce = re.findall(r"^ip prefix-list FABRICGEN-ANNOUNCE seq \d+ permit (.+)$", text, re.M)
    plan = build.addresses
    assert announce == [f"{plan.loopbacks['be-su01-leaf1']}/32", f"{plan.nic_blocks['be-su01-leaf1']} le 32"]
    accept = re.findall(r"^ip prefix-list FABRICGEN-ACCEPT seq \d+ permit (.+)$", text, re.M)
    assert accept and all(rule.endswith(" le 32") for rule in accept) and "0.0.0.0/0 le 32" not in accept
    assert "route-map FABRICGEN-IN permit 10\n match ip address prefix-list FABRICGEN-ACCEPT\n" in text
    spine = frr_confs(build)["be-spine01"]
    # a spine passes on what it accepts, nothing else
    assert re.findall(r"ANNOUNCE seq \d+ permit (.+)$", spine, re.M) == re.findall(r"ACCEPT seq \d+ permit (.+)$", spine, re.M)


@pytest.mark.parametrize("gpus", [256, 512])
def test_config_db_has_the_management_plane(secured, gpus):
    build = secured[gpus]
    for name, db in config_dbs(build).items():
        assert violations(db, build.configs[name].nos_release) == [], name
        assert db["AAA"]["authentication"]["login"] == "tacacs+,local", name
        assert db["TACPLUS"]["global"]["passkey"] == "<<secret=tacacs-key>>", name
        assert {row["vrf"] for row in db["TACPLUS_SERVER"].values()} == {"mgmt"}, name
        assert set(db["TACPLUS_SERVER"]) == {"10.250.0.11", "10.250.0.12"}, name
        # 202411 (the default) cannot load NTP_KEY: the servers are written without authentication;
        # EVPN leaves (master) with it (test_evpn_releases: every release, and the build's note)
        assert db["NTP"]["global"]["vrf"] == "mgmt" and len(db["NTP_SERVER"]) == 2, name
        if build.configs[name].nos_release == "202411":
            assert db["NTP"]["global"]["authentication"] == "disabled", name
            assert "NTP_KEY" not in db and not any("key" in row for row in db["NTP_SERVER"].values()), name
        else:
            assert build.configs[name].nos_release == "master" and db["NTP"]["global"]["authentication"] == "enabled", name
            assert db["NTP_KEY"]["1"]["value"] == "<<secret=ntp-key>>" and all(row["key"] == "1" for row in db["NTP_SERVER"].values()), name
        assert db["SYSLOG_SERVER"] == {"10.250.0.31": {"vrf": "mgmt", "severity": "info", "protocol": "udp", "port": "514"}}, name
        assert db["SNMP"]["LOCATION"]["Location"] == "AI cluster, hall 1", name
        user = db["SNMP_USER"]["nms-poller"]
        assert (user["SNMP_USER_TYPE"], user["SNMP_USER_AUTH_TYPE"], user["SNMP_USER_ENCRYPTION_TYPE"]) == ("Priv", "SHA", "AES"), name
        assert "SNMP_COMMUNITY" not in db, name  # no v2c unless the intent asks for a community
        ctrlplane = {t: row["services"] for t, row in db["ACL_TABLE"].items() if row["type"] == "CTRLPLANE"}
        assert sorted(s for services in ctrlplane.values() for s in services) == ["NTP", "SNMP", "SSH"], name
        for table in ctrlplane:
            sources = sorted(r["SRC_IP"] for k, r in db["ACL_RULE"].items() if k.startswith(f"{table}|") and r["PACKET_ACTION"] == "ACCEPT")
            assert sources == ["10.250.0.0/24", "172.16.0.0/16"], (name, table)
        assert db["DEVICE_METADATA"]["localhost"]["timezone"] == "Etc/UTC", name
        assert db["BANNER_MESSAGE"]["global"]["state"] == "enabled", name


@pytest.mark.parametrize("gpus", [256, 512])
def test_no_secret_value_in_any_build_file(secured, gpus):
    build = secured[gpus]
    for path, content in build.files.items():
        text = content.decode(errors="replace") if isinstance(content, bytes) else content
        for name, value in MARKERS.items():
            assert value not in text, (path, name)


@needs_frr
@pytest.mark.frr
@pytest.mark.parametrize("gpus", [256, pytest.param(512, marks=pytest.mark.slow)])
def test_frr_accepts_every_secured_frr_conf(secured, gpus, tmp_path):
    build = secured[gpus]
    confs = frr_confs(build)
    assert len(confs) == len(sonic_switches(build))
    assert vtysh_dryrun(confs, tmp_path) == {}


@needs_frr
@pytest.mark.frr
def test_frr_accepts_warning_only_maximum_prefix_and_tier_keys(tmp_path):
    def edit(doc):
        doc["backend"]["bgp_security"] = {"password": "bgp-backend", "gtsm": False, "maximum_prefix_restart_min": None}

    build = compile_intent(_sonic_variant(tmp_path, 256, edit))
    text = frr_confs(build)["be-su01-leaf1"]
    assert "maximum-prefix" in text and "warning-only" in text and "restart" not in text
    assert "ttl-security" not in text
    assert vtysh_dryrun({"leaf": text}, tmp_path) == {}


def test_tcp_ao_on_sonic_is_refused_with_the_field_named(tmp_path):
    def edit(doc):
        doc["backend"]["bgp_security"]["tcp_ao"] = True

    with pytest.raises(CheckError) as error:
        compile_intent(_sonic_variant(tmp_path, 256, edit))
    message = str(error.value)
    assert "backend.bgp_security.tcp_ao" in message and "TCP-AO" in message and "tcp_ao: false" in message
    assert "frontend.bgp_security" not in message


def test_short_snmp_user_names_are_refused_on_sonic(tmp_path):
    def edit(doc):
        doc["management"]["snmp"]["users"][0]["name"] = "nms"

    with pytest.raises(CheckError) as error:
        compile_intent(_sonic_variant(tmp_path, 256, edit))
    assert "management.snmp.users" in str(error.value) and "4-32 characters" in str(error.value)


def test_the_yang_checks_catch_wrong_management_fields(secured):
    db = json.loads(json.dumps(config_dbs(secured[256])["be-su01-leaf1"]))
    del db["TACPLUS"]["global"]["passkey"]
    db["TACPLUS_SERVER"]["10.250.0.11"]["vrf"] = "Vrf-mgmt"
    db["TACPLUS_SERVER"]["10.250.0.12"]["passkey"] = "has space"
    db["NTP_SERVER"]["10.250.0.21"]["key"] = "9"
    db["NTP"]["global"]["authentication"] = "on"
    db["SYSLOG_SERVER"]["10.250.0.31"]["severity"] = "informational"
    db["SNMP_USER"]["nms-poller"]["SNMP_USER_ENCRYPTION_TYPE"] = "AES-128"
    db["SNMP_USER"]["nms"] = dict(db["SNMP_USER"]["nms-poller"], SNMP_USER_AUTH_PASSWORD="short")
    db["ACL_TABLE"]["FABRICGEN_SSH"]["services"] = ["TELNET"]
    db["ACL_RULE"]["FABRICGEN_NTP|RULE_1"]["PACKET_ACTION"] = "PERMIT"
    db["SSH_SERVER"]["POLICIES"]["login_timeout"] = "900"
    db["PASSW_HARDENING"]["POLICIES"]["len_min"] = "40"
    db["AAA"]["authentication"]["login"] = "tacacs,local"
    db["MGMT_VRF_CONFIG"]["vrf_global"]["mgmtVrfEnabled"] = "false"
    db["SNMP"]["LOCATION"]["location"] = "lower-case field"
    found = "\n".join(violations(db))
    for expected in (
        "TACPLUS_SERVER|10.250.0.11.vrf",
        "TACPLUS_SERVER|10.250.0.12.passkey",
        "'9' is not an NTP_KEY",
        "NTP|global.authentication",
        "SYSLOG_SERVER|10.250.0.31.severity",
        "SNMP_USER|nms-poller.SNMP_USER_ENCRYPTION_TYPE",
        "SNMP_USER|nms: name 4-32",
        "SNMP_USER|nms.SNMP_USER_AUTH_PASSWORD",
        "'TELNET' is not a service",
        "FABRICGEN_NTP|RULE_1.PACKET_ACTION",
        "SSH_SERVER|POLICIES.login_timeout",
        "PASSW_HARDENING|POLICIES.len_min",
        "AAA|authentication.login",
        "NTP|global.vrf: mgmt without MGMT_VRF_CONFIG",
        "SNMP|LOCATION.location: unknown field",
    ):
        assert expected in found, expected
    # tacacs+ login without a passkey: the AAA model's `must`
    db["AAA"]["authentication"]["login"] = "tacacs+,local"
    assert "tacacs+ without a TACPLUS|global passkey" in "\n".join(violations(db))


def test_radius_beside_tacacs_is_a_second_server_table_and_login_method(tmp_path):
    def edit(doc):
        doc["management"]["radius"] = {"servers": ["10.250.0.61", "10.250.0.62"], "key": "radius-key", "timeout_s": 7}

    build = compile_intent(_sonic_variant(tmp_path, 256, edit))
    for name, db in config_dbs(build).items():
        assert db["AAA"]["authentication"]["login"] == "tacacs+,radius,local", name
        assert db["RADIUS"]["global"] == {"auth_type": "pap", "timeout": "7", "passkey": "<<secret=radius-key>>"}
        servers = db["RADIUS_SERVER"]
        assert {s: (v["priority"], v["auth_port"], v["vrf"]) for s, v in servers.items()} == {
            "10.250.0.61": ("2", "1812", "mgmt"),
            "10.250.0.62": ("1", "1812", "mgmt"),
        }
        assert db["TACPLUS_SERVER"]["10.250.0.11"]["tcp_port"] == "49" and "auth_port" not in db["TACPLUS_SERVER"]["10.250.0.11"]
        assert violations(db, build.configs[name].nos_release) == [], name


def test_servers_outside_the_management_networks_get_no_control_plane_rule(tmp_path):
    """SONiC needs no reply rules: caclmgrd accepts conntrack ESTABLISHED,RELATED before the
    CTRLPLANE rules (sonic-host-services scripts/caclmgrd), which is exactly "replies to what the
    switch asked". So a server outside the management networks appears in no rule, and each rule
    admits a management network to its service's fixed ports only."""

    def outside(doc):
        doc["management"]["tacacs"]["servers"] = ["192.0.2.11"]
        doc["management"]["ntp"]["servers"] = ["192.0.2.21"]
        doc["management"]["dns_servers"] = ["192.0.2.53"]

    build = compile_intent(_sonic_variant(tmp_path, 256, outside))
    networks = ["10.250.0.0/24", "172.16.0.0/16"]
    for name, db in config_dbs(build).items():
        assert set(db["TACPLUS_SERVER"]) == {"192.0.2.11"}, name
        for key, rule in db["ACL_RULE"].items():
            assert rule["SRC_IP"] in networks and rule["PACKET_ACTION"] == "ACCEPT", (name, key)
            assert set(rule) == {"PRIORITY", "PACKET_ACTION", "SRC_IP"}, (name, key)  # no port or flag of a server's


def test_what_sonic_does_not_write_is_a_note_and_a_longer_minimum_password_an_error(tmp_path):
    build = compile_intent(_sonic_variant(tmp_path, 256))
    [note] = [n for n in build.compiled.notes if n.startswith("SONiC ")]
    assert "backend leaf, backend spine, frontend leaf, frontend spine" in note
    assert "DNS (domain_name, dns_servers)" in note and "SNMP trap receivers" in note and "lldp" not in note

    def no_dns_no_traps(doc):
        del doc["management"]["domain_name"], doc["management"]["dns_servers"]
        doc["management"]["snmp"]["trap_hosts"] = []

    (tmp_path / "quiet").mkdir()
    quiet = compile_intent(_sonic_variant(tmp_path / "quiet", 256, no_dns_no_traps), render=False)
    [ntp] = [n for n in quiet.compiled.notes if n.startswith("SONiC ")]  # 202411: NTP without its key
    assert "NTP authentication (ntp.key)" in ntp and "202511" in ntp and "DNS" not in ntp

    def newer(doc):
        no_dns_no_traps(doc)
        for network in ("backend", "frontend"):
            for role in ("leaf", "spine"):
                doc[network][role]["nos_release"] = "202511"

    (tmp_path / "newer").mkdir()
    quieter = compile_intent(_sonic_variant(tmp_path / "newer", 256, newer), render=False)
    assert not [n for n in quieter.compiled.notes if n.startswith("SONiC ")]

    def long_passwords(doc):
        doc["management"]["password_policy"] = {"min_length": 40}

    (tmp_path / "long").mkdir()
    with pytest.raises(CheckError) as error:
        compile_intent(_sonic_variant(tmp_path / "long", 256, long_passwords))
    assert "management.password_policy.min_length" in str(error.value) and "at most 32, not 40" in str(error.value)


SONIC_RELEASES = tuple(load_catalog().nos_releases["sonic"].releases)


def test_sonic_releases_offered_are_the_ones_the_suite_checks():
    assert SONIC_RELEASES == ("202405", "202411", "202505", "202511", "202605", "master")
    assert SONIC_RELEASES == RELEASES


@pytest.mark.parametrize("release", SONIC_RELEASES)
def test_every_config_db_passes_its_release_yang_with_placeholders_and_with_values(tmp_path, release):
    """The acceptance: both whitepaper clusters on SONiC `release` (EVPN leaves on master, the
    one release with an anycast gateway), NTP authentication and SNMPv3 included, pass the
    release's YANG checks as built (placeholders) and as pushed (values filled)."""

    def on_release(doc):
        for network in ("backend", "frontend"):
            for role in ("leaf", "spine"):
                if not (role == "leaf" and doc[network].get("routing") == "vxlan-evpn"):
                    doc[network][role]["nos_release"] = release

    values = Secrets(MARKERS)
    for gpus in (256, 512):
        (tmp_path / str(gpus)).mkdir()
        build = compile_intent(_sonic_variant(tmp_path / str(gpus), gpus, on_release))
        dbs = config_dbs(build)
        assert dbs
        for name, db in dbs.items():
            target = build.configs[name].nos_release
            assert target in (release, "master"), name
            assert violations(db, target) == [], (name, target)
            filled = json.loads(values.fill(json.dumps(db), in_json=True))
            assert "<<secret" not in json.dumps(filled)
            assert violations(filled, target) == [], (name, target)
            assert filled["SNMP_USER"]["nms-poller"]["SNMP_USER_AUTH_PASSWORD"] == MARKERS["snmp-auth-key"], name
            assert ("NTP_KEY" in db) == (RELEASES.index(target) >= RELEASES.index("202511")), (name, target)


GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("release", SONIC_RELEASES)
@pytest.mark.parametrize("intent", ["tiny-sonic.yaml", "tiny-evpn.yaml"])
def test_the_shipped_sonic_intents_pass_every_release_yang(tmp_path, intent, release):
    """The suite's own SONiC intents, each SONiC role moved to `release` (EVPN leaves stay on
    master, the one release with an anycast gateway), as built and with every secret filled.
    (bench/intents' two SONiC fabrics pass too: 242 config_dbs each on every release, about 6 s a
    release, too slow for the suite.)"""
    doc = yaml.safe_load((GOLDEN / intent).read_text())
    for network in ("backend", "frontend", "storage"):
        for role in ("leaf", "spine", "core"):
            settings = (doc.get(network) or {}).get(role)
            if isinstance(settings, dict) and settings.get("nos") == "sonic" and doc[network].get("routing") != "vxlan-evpn":
                settings["nos_release"] = release
    path = tmp_path / intent
    path.write_text(yaml.safe_dump(doc))
    build = compile_intent(path)
    dbs = config_dbs(build)
    assert dbs
    values = Secrets(MARKERS)
    for name, db in dbs.items():
        target = build.configs[name].nos_release
        assert violations(db, target) == [], (name, target)
        assert violations(json.loads(values.fill(json.dumps(db), in_json=True)), target) == [], (name, target)


def test_a_switch_that_cannot_write_the_ntp_key_does_not_list_it_as_its_secret(tmp_path):
    """SONiC before 202511 leaves NTP_KEY out (its model cannot load it): topology.json and
    summary.md list no `ntp-key` for those switches, as their configs hold none; the NX-OS OOB
    switches of the same build still write and list it."""

    def release(value):
        def edit(doc):
            for role in ("leaf", "spine"):
                doc["backend"][role]["nos_release"] = value

        return edit

    for value, listed in (("202411", False), ("202511", True)):
        (tmp_path / value).mkdir()
        build = compile_intent(_sonic_variant(tmp_path / value, 256, release(value)))
        nodes = {n["id"]: n for n in json.loads(build.files["topology.json"])["nodes"]}
        leaf = nodes["be-su01-leaf1"]
        assert ("ntp-key" in leaf.get("secrets", [])) is listed, value
        assert ("NTP_KEY" in json.loads(build.files["configs/be-su01-leaf1/config_db.json"])) is listed
        oob = next(n for n in nodes.values() if n["role"] == "oob-switch")
        assert "ntp-key" in oob["secrets"] and "ntp authentication-key" in build.files[f"configs/{oob['id']}.cfg"].decode()
        switches = [n for n in nodes.values() if "ntp-key" in n.get("secrets", [])]
        summary = build.files["summary.md"].decode()
        assert f"| `ntp-key` | `FABRICGEN_SECRET_NTP_KEY` | NTP authentication key | {len(switches)} |" in summary
        assert len(switches) > 4 if listed else len(switches) == 4  # the 4 OOB switches use it either way
