"""Where an NX-OS config carries a secret: the slots (fabricgen.build.secrets.Slot) of a switch's
`configs/<switch>.cfg`, as templates/system.j2 and bgp.j2 write them and as a switch shows them
(most keys encrypted: `ntp authentication-key 1 md5 <encrypted> 7`, `key 7 "<encrypted>"`), with
the values each takes and where that is written down."""

from __future__ import annotations

import re

from fabricgen.build.secrets import (
    BGP_AO_KEY,
    BGP_KEY,
    NTP_KEY,
    OSPF_KEY,
    RADIUS_KEY,
    SNMP_AUTH_KEY,
    SNMP_COMMUNITY,
    SNMP_PRIVACY_KEY,
    TACACS_KEY,
    USER_HASH,
    Rule,
    Slot,
)

_KEY = r'(?P<value>"[^"]*"|\S+)'  # NX-OS quotes an encrypted key: key 7 "fewhg"
_NXOS_SNMP = "Cisco Nexus 9000 Series NX-OS System Management Configuration Guide, Configuring SNMP: passphrases of 8 to 64 characters in clear text"

SECRET_SLOTS: tuple[Slot, ...] = (
    # NX-OS (fabricgen/nos/nxos/templates/system.j2, bgp.j2); Cisco Nexus 9000 Series NX-OS configuration guides 10.4(x)
    Slot(
        "nxos",
        USER_HASH,
        "username NAME password 5 HASH",
        line=re.compile(r"^username \S+ password (?P<kind>\d+ )?(?P<value>\S+)"),
        dummy="$5$fabricgen$0000000000000000000000000000000000000000000",
    ),
    Slot(
        "nxos",
        TACACS_KEY,
        "tacacs-server host ADDRESS key 0 KEY",
        (Rule(1, 63, "", "NX-OS Security Configuration Guide, Configuring TACACS+: a key of at most 63 printable characters, no white space"),),
        line=re.compile(r"^tacacs-server (?:host \S+ )?key (?P<kind>\d+ )?" + _KEY),
    ),
    Slot(
        "nxos",
        RADIUS_KEY,
        "radius-server host ADDRESS key 0 KEY",
        (Rule(1, 63, "", "NX-OS Security Configuration Guide, Configuring RADIUS: a key of at most 63 characters"),),
        line=re.compile(r"^radius-server (?:host \S+ )?key (?P<kind>\d+ )?" + _KEY),
    ),
    Slot("nxos", NTP_KEY, "ntp authentication-key ID md5 KEY 0", line=re.compile(r"^ntp authentication-key \d+ md5 " + _KEY + r"(?P<kind> \d+)?")),
    Slot(
        "nxos",
        SNMP_AUTH_KEY,
        "snmp-server user NAME ROLE auth ALGORITHM KEY",
        (Rule(8, 64, "", _NXOS_SNMP),),
        line=re.compile(r"^snmp-server user \S+ (?:\S+ )*?auth (?:md5|sha(?:-\d+)?) (?P<value>\S+)(?:(?P<flag> localized\w*key)$)?"),
    ),
    Slot(
        "nxos",
        SNMP_PRIVACY_KEY,
        "snmp-server user NAME ... priv aes-128 KEY",
        (Rule(8, 64, "", _NXOS_SNMP),),
        line=re.compile(r"^snmp-server user \S+ .*? priv (?:aes-128 |3des )?(?P<value>\S+)(?P<flag> localized\w*key)?"),
    ),
    Slot(
        "nxos",
        SNMP_COMMUNITY,
        "snmp-server community COMMUNITY",
        (Rule(1, 32, "", "NX-OS System Management Configuration Guide, Configuring SNMP: a community string of up to 32 characters"),),
        line=re.compile(r"^snmp-server community (?P<value>\S+)"),
    ),
    Slot("nxos", BGP_KEY, "router bgp: template peer / neighbor: password 0 KEY", line=re.compile(r"^\s+password (?P<kind>\d+ )?(?P<value>\S+)$")),
    Slot("nxos", BGP_AO_KEY, "key chain: key-string KEY", line=re.compile(r"^\s+key-string (?P<kind>\d+ )?(?P<value>\S+)"), placed=False),
    Slot(
        "nxos",
        OSPF_KEY,
        "interface: ip ospf authentication-key / message-digest-key",
        line=re.compile(r"^\s+ip ospf (?:authentication-key|message-digest-key \d+ md5) (?P<kind>\d+ )?(?P<value>\S+)"),
        placed=False,
    ),
)
