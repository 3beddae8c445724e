"""Where an EOS config carries a secret: the slots (fabricgen.build.secrets.Slot) of a switch's
`configs/<switch>.cfg`, as templates/system.j2 and bgp.j2 write them and as a switch shows them
(keys encrypted as type 7 or 8a, SNMP keys localized), with the values each takes and where that
is written down."""

from __future__ import annotations

import re

from fabricgen.build.secrets import (
    BGP_AO_KEY,
    BGP_KEY,
    MAX_VALUE,
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

_EOS_KEY = r"(?P<kind>(?:0|7|8a) )?(?P<value>\S+)"  # EOS: 0 the key in clear, 7 or 8a encrypted
_RFC3414 = "RFC 3414 11.2: an SNMPv3 passphrase of at least 8 characters"

SECRET_SLOTS: tuple[Slot, ...] = (
    # EOS (fabricgen/nos/eos/templates/bgp.j2); EOS sets the key on the kernel's TCP-MD5 socket
    # option, so Linux's 80-byte limit holds (EOS's own CLI limit was not read)
    Slot(
        "eos",
        BGP_KEY,
        "router bgp: neighbor GROUP password 0 KEY",
        (Rule(1, 80, "", "Linux TCP_MD5SIG_MAXKEYLEN (include/uapi/linux/tcp.h): EOS runs BGP on Linux's TCP-MD5"),),
        line=re.compile(r"^\s+neighbor \S+ password (?P<kind>(?:0|7|8a) )?(?P<value>\S+)$"),
    ),
    # EOS (fabricgen/nos/eos/templates/system.j2 and the BGP template); Arista EOS User Manual
    # 4.32: "User Security" (username secret, tacacs-server and radius-server key, encryption types
    # 0 clear, 7 and 8a encrypted), "SNMP" (snmp-server user ... v3 auth ... priv; the running
    # config shows the keys localized to the engine ID: `v3 localized ENGINEID auth sha256 KEY`),
    # "NTP" (ntp authentication-key ID md5 [0|7|8a] KEY), "Border Gateway Protocol" (neighbor
    # password). A key the device shows encrypted (type 7 or 8a) is masked with its type.
    Slot(
        "eos",
        USER_HASH,
        "username NAME privilege N role ROLE secret sha512 HASH",
        line=re.compile(r"^username \S+ (?:privilege \d+ )?(?:role \S+ )?secret (?P<kind>(?:sha512|5|0) )?(?P<value>\S+)"),
        dummy="$6$fabricgen$" + "0" * 86,
    ),
    Slot(
        "eos",
        USER_HASH,
        "enable password / aaa root secret: sha512 HASH",
        line=re.compile(r"^(?:enable password|aaa root secret) (?P<kind>(?:sha512|5|7|0) )?(?P<value>\S+)"),
        placed=False,
    ),
    Slot(
        "eos", TACACS_KEY, "tacacs-server host ADDRESS vrf VRF timeout N key 0 KEY", line=re.compile(r"^tacacs-server (?:host \S+ (?:\S+ )*?)?key " + _EOS_KEY)
    ),
    Slot(
        "eos", RADIUS_KEY, "radius-server host ADDRESS vrf VRF timeout N key 0 KEY", line=re.compile(r"^radius-server (?:host \S+ (?:\S+ )*?)?key " + _EOS_KEY)
    ),
    Slot("eos", NTP_KEY, "ntp authentication-key ID md5 0 KEY", line=re.compile(r"^ntp authentication-key \d+ (?:md5|sha1) " + _EOS_KEY)),
    Slot(
        "eos",
        SNMP_AUTH_KEY,
        "snmp-server user NAME GROUP v3 auth ALGORITHM KEY",
        (Rule(8, MAX_VALUE, "", _RFC3414),),
        # the algorithm is masked with the key: a device shows it beside the engine ID its key is localized to
        line=re.compile(r"^snmp-server user \S+ \S+ v3 (?P<flag>localized \S+ )?(?P<kind>auth \S+ )(?P<value>\S+)"),
    ),
    Slot(
        "eos",
        SNMP_PRIVACY_KEY,
        "snmp-server user NAME GROUP v3 ... priv aes KEY",
        (Rule(8, MAX_VALUE, "", _RFC3414),),
        line=re.compile(r"^snmp-server user \S+ \S+ v3 .*? priv (?P<kind>\S+ )(?P<value>\S+)"),
    ),
    Slot("eos", SNMP_COMMUNITY, "snmp-server community COMMUNITY ro", line=re.compile(r"^snmp-server community (?P<value>\S+)")),
    Slot(
        "eos",
        BGP_AO_KEY,
        "management security: session shared-secret profile NAME: secret ID 0 KEY",
        line=re.compile(r"^\s+secret \S+ " + _EOS_KEY),
        placed=False,
    ),
    Slot(
        "eos",
        OSPF_KEY,
        "interface: ip ospf authentication-key / message-digest-key",
        line=re.compile(r"^\s+ip ospf (?:authentication-key|message-digest-key \d+ md5) " + _EOS_KEY),
        placed=False,
    ),
)
