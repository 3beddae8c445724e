"""NX-OS day-0 security: every switch of the whitepaper fabrics carries the management plane the
intent's `management` section asks for, every BGP session is keyed, filtered both ways and
bounded, and no secret's value reaches a build."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fabricgen.basics.errors import CheckError
from fabricgen.build.secrets import env_name, names_in, placeholder
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.nos.nxos.render import timezone_offset
from tests.nxos_parse import indentation_problems, parse_nxos

REPO = Path(__file__).resolve().parents[1]
SECRET_NAMES = (
    "admin-password-hash",
    "tacacs-key",
    "ntp-key",
    "snmp-auth-key",
    "snmp-priv-key",
    "bgp-backend",
    "bgp-frontend",
)


def marker(name: str) -> str:
    return f"MARKER-{name.upper()}-VALUE-7f3a"


@pytest.fixture(scope="module")
def secured():
    """Both whitepaper intents, built with a marker value for every secret in the environment
    (a build must not read them, let alone write them)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in SECRET_NAMES:
            patch.setenv(env_name(name), marker(name))
        yield {gpus: compile_intent(REPO / "intents" / f"cisco-{gpus}-gpu.yaml") for gpus in (256, 512)}


def configs_of(build):
    return {name: (build.files[f"configs/{name}.cfg"].decode(), build.configs[name]) for name in build.configs}


def intent_management(gpus: int) -> dict:
    return yaml.safe_load((REPO / "intents" / f"cisco-{gpus}-gpu.yaml").read_text())["management"]


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_nxos_switch_has_the_day0_management_plane(secured, gpus):
    build = secured[gpus]
    intent = intent_management(gpus)
    networks = intent["access"]["management_networks"]
    roles = set()
    for name, (text, device) in configs_of(build).items():
        assert device.nos == "nxos"
        roles.add(device.role)
        config = parse_nxos(text)
        lines = set(config.lines)
        assert indentation_problems(text) == [], name
        # AAA: TACACS+ in the management VRF, login/authorization/accounting through it
        assert "feature tacacs+" in lines, name
        for server in intent["tacacs"]["servers"]:
            assert f"tacacs-server host {server} key 0 <<secret=tacacs-key>> timeout 5" in lines, (name, server)
        group = config.blocks["aaa group server tacacs+ FABRICGEN-TACACS"]
        assert {"use-vrf management", "source-interface mgmt0"} <= set(group), name
        assert {f"server {s}" for s in intent["tacacs"]["servers"]} <= set(group), name
        assert "aaa authentication login default group FABRICGEN-TACACS" in lines, name
        assert "aaa authorization commands default group FABRICGEN-TACACS local" in lines, name
        assert "aaa accounting default group FABRICGEN-TACACS" in lines, name
        assert "username admin password 5 <<secret=admin-password-hash>> role network-admin" in lines, name
        # SSH only; NX-API over HTTPS in the management VRF
        assert {"no feature telnet", "feature ssh"} <= lines and "feature telnet" not in lines, name
        assert {"feature nxapi", "nxapi https port 443", "no nxapi http", "nxapi use-vrf management"} <= lines, name
        # the management ACL: on mgmt0 and the vty lines, the management networks only, the rest dropped
        acl = config.blocks["ip access-list MGMT-ACCESS"]
        assert acl[-1].endswith(" deny ip any any log"), name
        for network in networks:
            assert any(rule.endswith(f" permit tcp {network} any eq 22") for rule in acl), (name, network)
            assert any(rule.endswith(f" permit tcp {network} any eq 443") for rule in acl), (name, network)
        sequence = [int(rule.split()[0]) for rule in acl]
        assert sequence == sorted(set(sequence)), name
        assert "ip access-group MGMT-ACCESS in" in config.interfaces["mgmt0"], name
        assert "access-class MGMT-ACCESS in" in config.blocks["line vty"], name
        assert "exec-timeout 10" in config.blocks["line vty"], name
        # CoPP, NTP with authentication, remote logging, SNMPv3 only
        assert "copp profile strict" in lines, name
        assert {"ntp authenticate", "ntp trusted-key 1", "ntp authentication-key 1 md5 <<secret=ntp-key>> 0"} <= lines, name
        for server in intent["ntp"]["servers"]:
            assert f"ntp server {server} use-vrf management key 1" in lines, (name, server)
        for server in intent["syslog"]["servers"]:
            assert f"logging server {server} 6 use-vrf management" in lines, (name, server)
        assert "snmp-server user nms-poller network-operator auth sha <<secret=snmp-auth-key>> priv aes-128 <<secret=snmp-priv-key>>" in lines
        assert "snmp-server host 10.250.0.41 traps version 3 priv nms-poller" in lines, name
        assert not config.top("snmp-server community"), name
        # banner, boot image, DNS, clock
        assert config.banner == intent["banner"], name
        assert f"boot nxos bootflash:/{intent['boot']['nxos']}" in lines, name
        assert "ip domain-name ai.example.net use-vrf management" in lines, name
        assert "clock timezone UTC 0 0" in lines, name
        # the placeholders are exactly the secrets the device config says it uses
        assert names_in(text) == device.secret_names(), name
    assert roles == {Role.LEAF, Role.SPINE, Role.OOB_SWITCH}


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_bgp_session_is_keyed_filtered_and_bounded(secured, gpus):
    build = secured[gpus]
    sessions = 0
    for name, (text, device) in configs_of(build).items():
        config = parse_nxos(text)
        if device.bgp is None:
            assert not config.router_bgp and "FABRICGEN-ACCEPT" not in text, name
            continue
        bgp = device.bgp
        key = f"bgp-{device.network}"
        # the prefix-lists say exactly what the plan's policy says
        for list_name, rules in (("FABRICGEN-ACCEPT", bgp.policy.accept), ("FABRICGEN-ANNOUNCE", bgp.policy.announce)):
            wanted = [f"ip prefix-list {list_name} seq {10 * i} permit {r.prefix}" + (f" le {r.le}" if r.le else "") for i, r in enumerate(rules, 1)]
            assert config.top(f"ip prefix-list {list_name} ") == wanted, (name, list_name)
        assert config.blocks["route-map FABRICGEN-IN permit 10"] == ["match ip address prefix-list FABRICGEN-ACCEPT"], name
        assert config.blocks["route-map FABRICGEN-OUT permit 10"] == ["match ip address prefix-list FABRICGEN-ANNOUNCE"], name
        groups = {g.name: g for g in bgp.groups}
        assert set(config.templates) == set(groups), name
        for group_name, template in config.templates.items():
            where = (name, group_name)
            assert f"password 0 {placeholder(key)}" in template[""], where
            assert "ttl-security hops 1" in template[""], where
            ipv4 = template["ipv4 unicast"]
            assert {"route-map FABRICGEN-IN in", "route-map FABRICGEN-OUT out"} <= set(ipv4), where
            assert f"maximum-prefix {groups[group_name].maximum_prefix} restart 5" in ipv4, where
            if device.evpn is not None:
                evpn = template["l2vpn evpn"]
                out = "FABRICGEN-EVPN-OUT" if device.evpn.vtep else "FABRICGEN-NH-UNCHANGED"
                assert {"route-map FABRICGEN-EVPN-IN in", f"route-map {out} out"} <= set(evpn), where
                assert f"route-map {out} permit 10" in config.lines, where
        # every neighbor gets all of it through its template
        assert config.neighbors, name
        for address, lines in config.neighbors.items():
            [inherit] = [line for line in lines if line.startswith("inherit peer ")]
            assert inherit.split()[-1] in config.templates, (name, address)
            sessions += 1
        if device.role is Role.LEAF:
            # a leaf announces what it originates, never its spines' routes on to other spines
            originated = {r.prefix for r in bgp.policy.announce}
            assert f"{device.loopback}/32" in originated, name
            pools = {r.prefix for r in bgp.policy.accept}
            assert not originated & pools, name
    assert sessions > 0


def test_maximum_prefix_is_a_warning_when_no_restart_is_asked(write_intent):
    build = compile_intent(write_intent("gpus: 64\nbackend:\n  bgp_security: {maximum_prefix_restart_min: null, gtsm: false}\n"))
    config = parse_nxos(build.files["configs/be-spine01.cfg"].decode())
    [template] = config.templates.values()
    assert any(line.startswith("maximum-prefix ") and line.endswith(" warning-only") for line in template["ipv4 unicast"])
    assert "ttl-security hops 1" not in template[""] and not any(line.startswith("password") for line in template[""])


def test_without_a_management_section_the_switch_keeps_todays_management_but_bgp_is_secured(write_intent):
    build = compile_intent(write_intent("gpus: 64\n"))
    text = build.files["configs/be-su01-leaf1.cfg"].decode()
    config = parse_nxos(text)
    assert indentation_problems(text) == []
    assert {"feature nxapi", "feature scp-server", "feature lldp"} <= set(config.lines)
    for absent in ("no feature telnet", "username ", "aaa ", "ntp ", "MGMT-ACCESS", "copp profile", "banner", "boot nxos"):
        assert absent not in text, absent
    [template] = config.templates.values()
    assert {"route-map FABRICGEN-IN in", "route-map FABRICGEN-OUT out"} <= set(template["ipv4 unicast"])
    assert names_in(text) == set()


def management_intent(write_intent, management: dict, **sections):
    intent = yaml.safe_load((REPO / "intents" / "cisco-256-gpu.yaml").read_text())
    intent["management"] = management
    for section, value in sections.items():
        intent[section].update(value)
    return compile_intent(write_intent(yaml.safe_dump(intent, sort_keys=False), name="mgmt"))


BASE = {
    "ntp": {"servers": ["10.250.0.21"], "key": "ntp-key"},
    "tacacs": {"servers": ["10.250.0.11"], "key": "tacacs-key"},
    "users": [{"name": "ops", "password_hash": "ops-hash"}],
    "access": {"management_networks": ["10.250.0.0/24"]},
}


def test_a_role_override_reaches_only_that_roles_switches(write_intent):
    """oob.switch.management replaces ntp on the OOB switches alone; backend.management replaces
    syslog on the backend alone; everything they do not set is the cluster's."""
    build = management_intent(
        write_intent,
        BASE,
        oob={
            "switch": {**yaml.safe_load((REPO / "intents/cisco-256-gpu.yaml").read_text())["oob"]["switch"], "management": {"ntp": {"servers": ["10.99.0.1"]}}}
        },
        backend={"management": {"syslog": {"servers": ["10.98.0.1"], "severity": "warnings"}}},
    )
    seen = set()
    for name, (text, device) in configs_of(build).items():
        lines = set(text.splitlines())
        oob = device.role is Role.OOB_SWITCH
        seen.add((oob, device.network))
        assert ("ntp server 10.99.0.1 use-vrf management" in lines) == oob, name
        assert ("ntp server 10.250.0.21 use-vrf management key 1" in lines) == (not oob), name
        assert ("ntp authenticate" in lines) == (not oob), name  # the override has no key
        assert ("logging server 10.98.0.1 4 use-vrf management" in lines) == (device.network == "backend"), name
        assert "tacacs-server host 10.250.0.11 key 0 <<secret=tacacs-key>> timeout 5" in lines, name
    assert {(True, "oob"), (False, "backend"), (False, "frontend")} <= seen


def test_nxapi_off_leaves_nxapi_out_and_its_port_closed(write_intent):
    build = management_intent(write_intent, {**BASE, "access": {"management_networks": ["10.250.0.0/24"], "nxapi": False}})
    for name, (text, _) in configs_of(build).items():
        assert "nxapi" not in text, name
        acl = parse_nxos(text).blocks["ip access-list MGMT-ACCESS"]
        assert not any(rule.endswith("eq 443") for rule in acl) and any(rule.endswith("eq 22") for rule in acl), name


def test_radius_snmp_communities_and_lldp_off(write_intent):
    management = {
        **BASE,
        "tacacs": None,
        "radius": {"servers": ["10.250.0.15"], "key": "radius-key", "timeout_s": 7},
        "snmp": {"users": [{"name": "nms-poller", "auth_key": "a-key", "privacy_key": "p-key"}], "communities": ["legacy-ro"]},
        "lldp": False,
        "timezone": {"iana": "Asia/Kolkata", "abbreviation": "IST", "utc_offset": "+05:30"},
    }
    build = management_intent(write_intent, {k: v for k, v in management.items() if v is not None})
    text = build.files["configs/be-spine01.cfg"].decode()
    config = parse_nxos(text)
    lines = set(config.lines)
    assert "feature tacacs+" not in lines and "feature lldp" not in lines
    assert "radius-server host 10.250.0.15 key 0 <<secret=radius-key>> authentication accounting" in lines
    assert {"use-vrf management", "source-interface mgmt0", "server 10.250.0.15"} <= set(config.blocks["aaa group server radius FABRICGEN-RADIUS"])
    assert "aaa authentication login default group FABRICGEN-RADIUS" in lines
    assert not any(line.startswith("aaa authorization") for line in lines)  # RADIUS authorizes no commands
    assert "snmp-server community <<secret=legacy-ro>> group network-operator" in lines
    assert "snmp-server community <<secret=legacy-ro>> use-ipv4acl MGMT-ACCESS" in lines
    acl = config.blocks["ip access-list MGMT-ACCESS"]
    assert any(rule.endswith("permit udp 10.250.0.15/32 eq 1812 any gt 1023") for rule in acl)
    assert any(rule.endswith("permit udp 10.250.0.0/24 any eq 161") for rule in acl)
    assert "clock timezone IST 5 30" in lines


def test_every_acl_source_is_a_network_or_a_server(secured):
    """The ACL opens the management plane to the management networks and to replies from the
    servers the switch itself talks to, nothing else."""
    intent = intent_management(256)
    networks = [ipaddress.ip_network(n) for n in intent["access"]["management_networks"]]
    servers = set(intent["tacacs"]["servers"]) | set(intent["ntp"]["servers"]) | set(intent["dns_servers"])
    text = secured[256].files["configs/be-spine01.cfg"].decode()
    for rule in parse_nxos(text).blocks["ip access-list MGMT-ACCESS"][:-1]:
        source = ipaddress.ip_network(rule.split()[3])
        assert source in networks or (source.prefixlen == 32 and str(source.network_address) in servers), rule


@dataclass(frozen=True)
class Packet:
    protocol: str  # tcp, udp, icmp
    source: str
    source_port: int = 0
    port: int = 0
    ack: bool = False  # a TCP packet with ACK (or RST) set: NX-OS's `established`


def _ports_match(words: list[str], port: int) -> tuple[bool, list[str]]:
    """An optional port operator at the head of `words` (eq, gt, lt, neq, range): whether `port`
    matches, and the words after it."""
    if words and words[0] in ("eq", "gt", "lt", "neq"):
        operator, value = words[0], int(words[1])
        matched = {"eq": port == value, "gt": port > value, "lt": port < value, "neq": port != value}[operator]
        return matched, words[2:]
    if words and words[0] == "range":
        return int(words[1]) <= port <= int(words[2]), words[3:]
    return True, words


def acl_verdict(rules: list[str], packet: Packet) -> str:
    """First match of an NX-OS IPv4 ACL as fabricgen writes it (`SEQ permit|deny PROTO SRC [port]
    DST [port] [established] [log]`, DST always `any`): "permit" or "deny" (the implicit deny
    ends every ACL). NX-OS Security Command Reference, permit (IPv4): `established` matches TCP
    packets with ACK or RST set; eq/gt/lt/neq/range compare the port."""
    for rule in rules:
        words = rule.split()
        action, protocol, source, words = words[1], words[2], words[3], words[4:]
        if protocol not in ("ip", packet.protocol):
            continue
        if source != "any" and ipaddress.ip_address(packet.source) not in ipaddress.ip_network(source):
            continue
        source_port_ok, words = _ports_match(words, packet.source_port)
        assert words[0] == "any", rule
        port_ok, words = _ports_match(words[1:], packet.port)
        established_ok = "established" not in words or packet.ack
        assert set(words) <= {"established", "log"}, rule
        if source_port_ok and port_ok and established_ok:
            return action
    return "deny"


OUTSIDE_SERVERS = {"tacacs": "192.0.2.11", "radius": "192.0.2.15", "ntp": "192.0.2.21", "dns": "192.0.2.53"}


def test_servers_outside_the_management_networks_get_replies_in_and_nothing_else(write_intent):
    """The ACL lets the AAA, NTP and DNS servers' replies in. A server outside the management
    networks must not reach SSH, NX-API or SNMP, whatever source port it picks: a reply line
    admits only established TCP (ACK/RST: no connection can be opened) and UDP to the switch's
    client side (NTP's port 123, ephemeral ports above 1023; RFC 5905 9.1, RFC 6056 3.2)."""
    management = {
        "dns_servers": [OUTSIDE_SERVERS["dns"]],
        "ntp": {"servers": [OUTSIDE_SERVERS["ntp"]], "key": "ntp-key"},
        "tacacs": {"servers": [OUTSIDE_SERVERS["tacacs"]], "key": "tacacs-key"},
        "radius": {"servers": [OUTSIDE_SERVERS["radius"]], "key": "radius-key"},
        "snmp": {"users": [{"name": "nms-poller", "auth_key": "snmp-auth-key", "privacy_key": "snmp-priv-key"}]},
        "access": {"management_networks": ["10.250.0.0/24"], "nxapi": True},
    }
    build = compile_intent(write_intent(yaml.safe_dump({"gpus": 64, "management": management}), name="outside"))
    rules = parse_nxos(build.files["configs/be-spine01.cfg"].decode()).blocks["ip access-list MGMT-ACCESS"]
    any_port = (0, 22, 49, 53, 123, 161, 443, 1812, 1813, 40000)
    for role, server in OUTSIDE_SERVERS.items():
        for source_port in any_port:
            for port in (22, 443):  # SSH, NX-API: a connection starts with a SYN, no ACK
                assert acl_verdict(rules, Packet("tcp", server, source_port, port)) == "deny", (role, source_port, port)
            assert acl_verdict(rules, Packet("udp", server, source_port, 161)) == "deny", (role, source_port)  # SNMP
            if role != "ntp":
                assert acl_verdict(rules, Packet("udp", server, source_port, 123)) == "deny", (role, source_port)
    replies = [
        Packet("tcp", OUTSIDE_SERVERS["tacacs"], 49, 40000, ack=True),
        Packet("udp", OUTSIDE_SERVERS["radius"], 1812, 40000),
        Packet("udp", OUTSIDE_SERVERS["radius"], 1813, 40000),
        Packet("udp", OUTSIDE_SERVERS["ntp"], 123, 123),  # ntpd's own port (RFC 5905 9.1)
        Packet("udp", OUTSIDE_SERVERS["ntp"], 123, 40000),  # a client on an ephemeral port (RFC 9109)
        Packet("udp", OUTSIDE_SERVERS["dns"], 53, 40000),
    ]
    for reply in replies:
        assert acl_verdict(rules, reply) == "permit", reply
    for port in (22, 443):  # the management networks keep their access
        assert acl_verdict(rules, Packet("tcp", "10.250.0.7", 40000, port)) == "permit", port
    assert acl_verdict(rules, Packet("udp", "10.250.0.7", 40000, 161)) == "permit"


def test_tcp_ao_on_nxos_is_a_check_error_naming_the_field(write_intent):
    with pytest.raises(CheckError) as caught:
        compile_intent(write_intent("gpus: 64\nbackend:\n  bgp_security: {password: k, tcp_ao: true}\n"))
    problems = caught.value.problems
    assert len(problems) == 2  # one per role: the leaves and the spines
    for problem in problems:
        assert problem.field == ("backend", "bgp_security", "tcp_ao") and problem.line == 3
        assert "TCP-AO" in problem.message and "tcp_ao: false" in problem.hint


@pytest.mark.parametrize("gpus", [256, 512])
def test_no_secret_value_reaches_any_build_file(secured, gpus):
    build = secured[gpus]
    for path, content in build.files.items():
        text = content.decode(errors="replace") if isinstance(content, bytes) else str(content)
        for name in SECRET_NAMES:
            assert marker(name) not in text, (path, name)
    every = set().union(*(names_in(build.files[f"configs/{n}.cfg"].decode()) for n in build.configs))
    assert every == set(SECRET_NAMES)


@pytest.mark.parametrize(("offset", "nxos"), [("+00:00", "0 0"), ("+05:30", "5 30"), ("-03:30", "-3 30"), ("+14:00", "14 0")])
def test_timezone_offset(offset, nxos):
    from fabricgen.intent.management import Management, Timezone

    assert timezone_offset(Management(timezone=Timezone(utc_offset=offset))) == nxos


def test_a_login_attempt_limit_nxos_does_not_write_is_a_note_not_silence(write_intent):
    base = "gpus: 64\nbackend: {scalable_unit_gpus: 32}\nmanagement:\n  access: {management_networks: [10.250.0.0/24]"
    quiet = compile_intent(write_intent(base + "}\n", name="quiet"), render=False)
    assert not [n for n in quiet.compiled.notes if "not written" in n]  # the default is not asked for
    asked = compile_intent(write_intent(base + ", login_attempts: 5}\n", name="asked"), render=False)
    [note] = [n for n in asked.compiled.notes if "not written" in n]
    assert note.startswith("NX-OS backend leaf, backend spine switches:") and "access.login_attempts" in note
