"""EOS day-0 management baseline: the intent's `management` section.

`system_text(config) -> str` is the text the EOS switch config (switch.cfg.j2, which writes the
management port, its VRF and default route itself) includes after `hostname`: everything the
NX-OS and SONiC adapters write from the section, every service in the management port's VRF:
local users (password hashes as secret placeholders), TACACS+ and RADIUS groups and AAA, SSH and
console timeouts, the management ACL as the control-plane ACL of the management VRF, eAPI over
HTTPS in the management VRF (push uses it), NTP (its key a placeholder), DNS, the clock, remote
logging, SNMPv3 (keys as placeholders) and the password policy. Sources for each line are in
templates/system.j2 and docs/reference/eos.md.

Not written yet: the login banner. Its lines are free text, and the EOS line-shape check of
tests/test_render_eos.py (every line a build writes has a documented shape) cannot tell
`banner login`'s lines from the config's; system.j2 writes it once `BANNER` is on and that check
skips a banner's body (the build notes say so meanwhile).

Not written here: `boot system`. On EOS it writes flash:/boot-config and is no part of the
running config (EOS User Manual, "Boot Loader - Aboot"; `show running-config` shows it only as a
comment), so a config line could never match the switch and a config replace cannot change it.
The image the intent pins (management.boot.eos) is topology.json's `boot_image`, which push
checks against the switch's boot-config and running version before it commits
(fabricgen/nos/eos/push.py `get_boot_images`).

`security_gaps(security, management)` and `unrendered(management, features)` say what this
adapter cannot write (a check error) or leaves out (a build note).
"""

from __future__ import annotations

from typing import NamedTuple

from fabricgen.basics.trust import printable
from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.intent.management import Management
from fabricgen.nos.eos.capabilities import BANNER
from fabricgen.nos.nxos.render import AaaGroup, AclRule, aaa_groups, management_acl
from fabricgen.render.environment import environment

# The management port and its VRF when the switch has no out-of-band address (else the switch's
# ManagementConfig: the VRF switch.cfg.j2 declares and puts the port in)
MGMT_VRF = "management"
MGMT_PORT = "Management1"
MGMT_ACL = "MGMT-ACCESS"
SNMP_GROUP = "FABRICGEN-READ"  # an SNMPv3 group that reads the view below, authPriv
SNMP_VIEW = "FABRICGEN-READ"
# The intent's SNMPv3 algorithms as EOS names them (SNMP chapter: snmp-server user ... auth
# {md5|sha|sha224|sha256|sha384|sha512} ... priv {des|aes|aes192|aes256})
SNMP_AUTH = {"sha": "sha", "sha-256": "sha256"}
SNMP_PRIVACY = {"aes-128": "aes"}
# `username NAME privilege N role ROLE`: the default roles' privilege levels (User Security:
# network-admin at 15, network-operator at 1)
PRIVILEGE = {"network-admin": 15, "network-operator": 1}


class SystemSection(NamedTuple):
    """What templates/system.j2 reads besides the management section: names, rules, escaped text."""

    mgmt_vrf: str
    mgmt_port: str
    mgmt_acl_name: str
    mgmt_acl: tuple[AclRule, ...]
    aaa_groups: tuple[AaaGroup, ...]
    tacacs_group: str | None
    accounting_group: str | None
    eapi: bool
    banner: tuple[str, ...]
    snmp_location: str
    snmp_contact: str
    snmp_auth: dict[str, str]
    snmp_privacy: dict[str, str]
    snmp_group: str
    snmp_view: str
    privilege: dict[str, int]


# Rendered management sections by the section object and port: the switches of one role share the
# section (device_config), so a fabric of thousands of switches renders a handful. The object is
# kept beside its text, so its id cannot be reused while the entry lives.
_SYSTEM_TEXTS: dict[tuple[int, str, str, str | None], tuple[Management, str]] = {}


def system_text(config: DeviceConfig) -> str:
    """The switch's management section in EOS syntax, its services in the management port's
    VRF; "" without a section."""
    system = config.system
    if system is None:
        return ""
    port, vrf = (config.management.port, config.management.vrf) if config.management is not None else (MGMT_PORT, MGMT_VRF)
    key = (id(system), port, vrf, config.ntp_key)
    cached = _SYSTEM_TEXTS.get(key)
    if cached is None or cached[0] is not system:
        section = _section(system, port, vrf)
        rendered = environment().get_template("eos/system.j2").render(m=system, s=section, ntp_key=config.ntp_key)
        cached = _SYSTEM_TEXTS[key] = (system, rendered)
    return cached[1]


def _section(system: Management, port: str, vrf: str) -> SystemSection:
    groups = aaa_groups(system)
    snmp = system.snmp
    return SystemSection(
        mgmt_vrf=vrf,
        mgmt_port=port,
        mgmt_acl_name=MGMT_ACL,
        mgmt_acl=tuple(management_acl(system)),
        aaa_groups=tuple(groups),
        tacacs_group=next((g.name for g in groups if g.protocol == "tacacs"), None),
        accounting_group=groups[0].name if groups and system.accounting else None,
        eapi=system.access is None or system.access.nxapi,
        banner=tuple(_text(line) for line in system.banner) if BANNER else (),
        snmp_location=_text(snmp.location) if snmp else "",
        snmp_contact=_text(snmp.contact) if snmp else "",
        snmp_auth=SNMP_AUTH,
        snmp_privacy=SNMP_PRIVACY,
        snmp_group=SNMP_GROUP,
        snmp_view=SNMP_VIEW,
        privilege=PRIVILEGE,
    )


def _text(value: object) -> str:
    """Free text as one EOS line's tail: control and format characters escaped (the intent's
    checks already refuse them; this keeps one that got past from adding a line)."""
    return printable(value).strip()
