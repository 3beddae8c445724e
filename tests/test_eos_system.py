"""EOS day-0 management baseline (fabricgen/nos/eos/system.py): the intent's `management` section
in EOS syntax, every service in the management port's VRF, every key and hash a placeholder in a
declared slot, and the slots' masking on both sides of a drift (a device shows keys encrypted,
SNMPv3 keys localized).

The switches come from the whitepaper intent's device configs (its management section), rendered
here by the EOS management adapter alone: the EOS renderer that includes this text is tested in
test_render_eos.py."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from fabricgen.build.secrets import dummy_secrets, mask_text, names_in, placements, slots
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.intent.management import AaaServers, Access, BgpSecurity, Management, Snmp, SnmpUser
from fabricgen.nos.eos import capabilities as eos_capabilities
from fabricgen.nos.eos import system as eos_system
from fabricgen.nos.eos.capabilities import security_gaps, unrendered
from fabricgen.nos.eos.system import MGMT_ACL, system_text

REPO = Path(__file__).resolve().parents[1]
SLOTS = slots()
MGMT_VRF = "management"  # the ManagementConfig's VRF, which switch.cfg.j2 declares and puts Management1 in


@pytest.fixture(scope="module")
def leaf():
    build = compile_intent(REPO / "intents" / "cisco-256-gpu.yaml", render=False)
    config = next(c for c in build.configs.values() if c.role.value == "leaf")
    return replace(config, management=replace(config.management, port="Management1"))


def block(text: str, header: str) -> list[str]:
    """The lines under a top-level `header` line, as written."""
    lines = text.splitlines()
    start = lines.index(header)
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        body.append(line)
    return body


def test_the_services_use_the_management_port_s_vrf_and_the_port_is_left_to_the_switch_config(leaf):
    text = system_text(leaf)
    assert leaf.management.vrf == MGMT_VRF
    assert "interface Management1" not in text.splitlines() and "vrf instance" not in text  # switch.cfg.j2 writes both
    assert f"logging vrf {MGMT_VRF} source-interface Management1" in text.splitlines()
    other = replace(leaf, management=replace(leaf.management, vrf="OOB", port="Management0"))
    assert "ntp server vrf OOB 10.250.0.21 key 1" in system_text(other) and "ntp local-interface vrf OOB Management0" in system_text(other)
    assert system_text(replace(leaf, system=None)) == ""


def test_the_management_section_in_eos_syntax(leaf):
    text = system_text(leaf)
    lines = text.splitlines()
    assert "username admin privilege 15 role network-admin secret sha512 <<secret=admin-password-hash>>" in lines
    assert f"tacacs-server host 10.250.0.11 vrf {MGMT_VRF} timeout 5 key 0 <<secret=tacacs-key>>" in lines
    assert block(text, "aaa group server tacacs+ FABRICGEN-TACACS") == [f"   server 10.250.0.11 vrf {MGMT_VRF}", f"   server 10.250.0.12 vrf {MGMT_VRF}"]
    assert "aaa authentication login default group FABRICGEN-TACACS local" in lines
    assert "ntp authentication-key 1 md5 0 <<secret=ntp-key>>" in lines and f"ntp server vrf {MGMT_VRF} 10.250.0.21 key 1" in lines
    assert f"logging vrf {MGMT_VRF} host 10.250.0.31" in lines and "logging trap informational" in lines
    assert "snmp-server user nms-poller FABRICGEN-READ v3 auth sha <<secret=snmp-auth-key>> priv aes <<secret=snmp-priv-key>>" in lines
    assert f"snmp-server host 10.250.0.41 vrf {MGMT_VRF} version 3 priv nms-poller" in lines
    # eAPI: HTTPS only, in the management VRF (push and verify use it)
    assert block(text, "management api http-commands") == [
        "   protocol https",
        "   no protocol http",
        "   no shutdown",
        "   !",
        f"   vrf {MGMT_VRF}",
        "      no shutdown",
    ]
    assert "banner login" not in lines  # not yet (system.py BANNER), and the build notes say so
    assert any(note.startswith("banner") for note in unrendered(leaf.system))
    # the management ACL guards the management VRF's control plane, and ends by dropping the rest
    assert block(text, "system control-plane") == [f"   ip access-group {MGMT_ACL} vrf {MGMT_VRF} in"]
    rules = block(text, f"ip access-list {MGMT_ACL}")
    assert rules[0] == "   10 permit tcp 10.250.0.0/24 any eq 22" and rules[-1].endswith("deny ip any any log")
    assert "   90 permit tcp 10.250.0.11/32 eq 49 any established" in rules  # TACACS+ replies, never a SYN


def test_every_placeholder_stands_in_an_eos_slot_and_the_nxos_slots_would_not_take_them(leaf):
    text = system_text(leaf)
    found, stray = placements(f"configs/{leaf.hostname}.cfg", text, "eos")
    assert stray == []
    assert len(found) == text.count("<<secret=") and {p.name for p in found} == names_in(text)
    assert {p.slot.nos for p in found} == {"eos"}
    # read as NX-OS: the EOS forms are in no NX-OS slot; read without a NOS: both NOSes' slots
    assert placements(f"configs/{leaf.hostname}.cfg", text, "nxos")[1] != []
    unknown = placements(f"configs/{leaf.hostname}.cfg", text)
    assert unknown[1] == [] and [(p.name, p.slot.use) for p in unknown[0]] == [(p.name, p.slot.use) for p in found]
    # and an NX-OS line that an EOS slot would also take keeps its NX-OS slot (and its 63-character rule)
    (nxos_tacacs,) = placements("configs/n.cfg", "tacacs-server host 10.0.0.1 key 0 <<secret=tacacs-key>> timeout 5\n")[0]
    assert nxos_tacacs.slot.nos == "nxos" and nxos_tacacs.slot.rule(None).max_length == 63
    # Batfish's stand-ins take each slot's form: a SHA-512 crypt hash for the user
    dummies = dummy_secrets({"configs/x.cfg": text}, {"configs/x.cfg": "eos"})
    assert dummies.values["admin-password-hash"].startswith("$6$") and len(dummies.values["admin-password-hash"].split("$")[3]) == 86


def test_radius_without_access_keeps_eapi_and_writes_no_acl(leaf):
    management = leaf.system.model_copy(update={"tacacs": None, "access": None, "radius": AaaServers(servers=["10.250.0.15"], key="radius-key", timeout_s=7)})
    text = system_text(replace(leaf, system=management))
    lines = text.splitlines()
    assert f"radius-server host 10.250.0.15 vrf {MGMT_VRF} timeout 7 key 0 <<secret=radius-key>>" in lines
    assert "aaa authentication login default group FABRICGEN-RADIUS local" in lines
    assert not any(line.startswith("aaa authorization") for line in lines)  # command authorization is TACACS+'s
    assert "management api http-commands" in lines and "system control-plane" not in lines and "management console" not in lines
    assert placements("configs/x.cfg", text, "eos")[1] == []


def test_nxapi_false_turns_the_https_api_off(leaf):
    access = Access(management_networks=["10.250.0.0/24"], nxapi=False)
    text = system_text(replace(leaf, system=leaf.system.model_copy(update={"access": access})))
    assert "management api http-commands" not in text
    assert " eq 443" not in text  # and the ACL does not open its port


def test_snmp_sha256_communities_and_lldp_off(leaf):
    snmp = Snmp(users=[SnmpUser(name="poller", auth="sha-256", auth_key="a-key", privacy_key="p-key")], communities=["ro-community"])
    text = system_text(replace(leaf, system=leaf.system.model_copy(update={"snmp": snmp, "lldp": False})))
    lines = text.splitlines()
    assert "snmp-server user poller FABRICGEN-READ v3 auth sha256 <<secret=a-key>> priv aes <<secret=p-key>>" in lines
    assert "snmp-server community <<secret=ro-community>> ro" in lines and "no lldp run" in lines
    assert not any(line.startswith("snmp-server host") for line in lines)
    assert placements("configs/x.cfg", text, "eos")[1] == []


def test_what_eos_cannot_write_is_a_gap_and_what_it_leaves_out_a_note():
    assert [gap.field for gap in security_gaps(BgpSecurity(tcp_ao=True), None)] == ["bgp_security.tcp_ao"]
    assert security_gaps(BgpSecurity(), None) == []
    for line in ("EOF", "! keep out"):
        gaps = security_gaps(BgpSecurity(), Management(banner=["Authorized only", line]))
        assert [gap.field for gap in gaps] == ["management.banner"], line
    assert security_gaps(BgpSecurity(), Management(banner=["EOF follows", "a ! inside"])) == []
    notes = unrendered(Management(access=Access(management_networks=["10.0.0.0/8"], login_attempts=5), copp_profile="lenient"))
    assert any("login_attempts" in note for note in notes) and any("copp_profile" in note for note in notes)
    assert unrendered(Management()) == []


def test_a_device_s_encrypted_keys_mask_like_the_build_s_placeholders():
    built = "\n".join(
        [
            "username admin privilege 15 role network-admin secret sha512 <<secret=admin-password-hash>>",
            "tacacs-server host 10.250.0.11 vrf MGMT timeout 5 key 0 <<secret=tacacs-key>>",
            "ntp authentication-key 1 md5 0 <<secret=ntp-key>>",
            "snmp-server user nms FABRICGEN-READ v3 auth sha256 <<secret=a>> priv aes <<secret=p>>",
            "snmp-server community <<secret=c>> ro",
            "   neighbor SPINES password 0 <<secret=bgp-backend>>",
        ]
    )
    # what EOS shows in its running config (User Security "Encryption"; SNMP keys localized)
    device = "\n".join(
        [
            "username admin privilege 15 role network-admin secret sha512 $6$salt$abcdefghij",
            "tacacs-server host 10.250.0.11 vrf MGMT timeout 5 key 7 070E234F1B",
            "ntp authentication-key 1 md5 7 044F0E151B",
            "snmp-server user nms FABRICGEN-READ v3 localized 800075ad0300 auth sha256 9c1f0e priv aes 77ab01",
            "snmp-server community 0a1b2c3d ro",
            "   neighbor SPINES password 7 q+VNViP5i4rVjW1cxFv2wA==",
        ]
    )
    assert mask_text(built, "eos") == mask_text(device, "eos")
    assert "<<secret" not in mask_text(built, "eos") and "070E234F1B" not in mask_text(device, "eos")
    # a change that is not a secret still shows
    assert mask_text(built.replace("timeout 5", "timeout 9"), "eos") != mask_text(device, "eos")


def test_every_eos_slot_a_renderer_writes_is_written_by_this_one(leaf):
    snmp = leaf.system.snmp.model_copy(update={"communities": ["ro-community"]})
    radius = AaaServers(servers=["10.250.0.15"], key="radius-key")
    text = system_text(replace(leaf, system=leaf.system.model_copy(update={"snmp": snmp, "radius": radius})))
    written = {p.slot.use for p in placements("configs/x.cfg", text, "eos")[0]}
    placed = {slot.use for slot in SLOTS if slot.nos == "eos" and slot.placed}
    assert placed - written == {"BGP session key"}  # the BGP template's (test_render_eos.py)


def test_switches_of_one_role_share_one_rendering(leaf):
    eos_system._SYSTEM_TEXTS.clear()
    other = replace(leaf, hostname="other", management=replace(leaf.management, address="172.16.0.99/26"))
    assert system_text(leaf) is system_text(other) and len(eos_system._SYSTEM_TEXTS) == 1


def test_the_banner_once_written_ends_at_eof(leaf, monkeypatch):
    monkeypatch.setattr(eos_system, "BANNER", True)  # what system.j2 writes
    monkeypatch.setattr(eos_capabilities, "BANNER", True)  # what the build notes leave out
    eos_system._SYSTEM_TEXTS.clear()
    try:
        lines = system_text(leaf).splitlines()
        start = lines.index("banner login")
        assert lines[start + 1 : start + 3] == ["Authorized access only. Activity on this device is logged and monitored.", "EOF"]
        assert not any(note.startswith("banner") for note in unrendered(leaf.system))
    finally:
        eos_system._SYSTEM_TEXTS.clear()


def _shapes() -> list[re.Pattern[str]]:
    """docs/reference/eos.md's line shapes: its main tables' (tests/test_render_eos.py reads
    those) and the table of lines only other settings write (their second cell)."""
    from tests.test_render_eos import documented_shapes

    shapes = documented_shapes()
    for row in (REPO / "docs" / "reference" / "eos.md").read_text().splitlines():
        match = re.match(r"\| with [^|]* \| `([^`]+)`", row)
        if match:
            parts = re.split(r"(<[^>]+>)", match[1])
            shapes.append(re.compile("".join((".+" if p.endswith("...>") else r"\S+") if p.startswith("<") else re.escape(p) for p in parts)))
    return shapes


def test_every_line_of_the_baseline_has_a_documented_shape(leaf):
    shapes = _shapes()
    snmp = leaf.system.snmp.model_copy(update={"communities": ["ro-community"], "users": [SnmpUser(name="p", auth="sha-256", auth_key="a", privacy_key="b")]})
    variants = [
        leaf.system,
        leaf.system.model_copy(update={"radius": AaaServers(servers=["10.250.0.15"], key="radius-key"), "snmp": snmp, "lldp": False}),
        leaf.system.model_copy(update={"ntp": leaf.system.ntp.model_copy(update={"key": None}), "tacacs": None, "access": None}),
    ]
    written = set()
    for management in variants:
        config = replace(leaf, system=management)
        written |= {line.strip() for line in system_text(config).splitlines()}
    for line in sorted(written):
        assert any(shape.fullmatch(line) for shape in shapes), f"{line!r} has no documented shape in docs/reference/eos.md"
    assert {"no lldp run", "snmp-server community <<secret=ro-community>> ro", "ntp server vrf management 10.250.0.21"} <= written


def test_a_banner_line_eos_cannot_take_is_a_check_error_of_the_build(write_intent):
    from fabricgen.basics.errors import CheckError
    from tests.test_eos_push import TINY_EOS

    intent = write_intent(TINY_EOS + '  banner: ["Authorized access only", "EOF"]\n', name="eos-banner")
    with pytest.raises(CheckError) as refused:
        compile_intent(intent)
    messages = [problem.format() for problem in refused.value.problems]
    assert any("management.banner" in m and "EOS cannot take a banner line that is 'EOF' alone" in m for m in messages), messages
    compile_intent(write_intent(TINY_EOS + '  banner: ["Authorized access only", "EOF follows"]\n', name="eos-banner-ok"))
