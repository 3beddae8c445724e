"""Where a SONiC config_db carries a secret: the slots (fabricgen.build.secrets.Slot) of a switch's
`configs/<switch>/config_db.json`, by table and field (the row's key for an SNMP community), with
the values each takes per community branch as the YANG models say (sonic-buildimage
src/sonic-yang-models/yang-models). Its frr.conf carries BGP keys in the shared FRR slots
(fabricgen.build.secrets.FRR_SLOTS)."""

from __future__ import annotations

from fabricgen.build.secrets import (
    BGP_KEY,
    LDAP_PASSWORD,
    MACSEC_KEY,
    NTP_KEY,
    RADIUS_KEY,
    SNMP_AUTH_KEY,
    SNMP_COMMUNITY,
    SNMP_PRIVACY_KEY,
    TACACS_KEY,
    Rule,
    Slot,
)

_SONIC_SNMP = "sonic-snmp.yang SNMP_USER: length 0..64, pattern [^ @:]*, at least 8 with authentication (every branch 202405 to master)"
_SONIC_TACACS = "sonic-system-tacacs.yang passkey: pattern [^ #,]*, length 1..65"
_SONIC_RADIUS = "sonic-system-radius.yang passkey: pattern [^ #,]*, length 1..65 (every branch 202405 to master)"

SECRET_SLOTS: tuple[Slot, ...] = (
    # SONiC config_db (nos/sonic/render.py), each from sonic-buildimage src/sonic-yang-models/yang-models
    *(
        Slot(
            "sonic",
            TACACS_KEY,
            f"{table}|... passkey",
            (Rule(1, 65, "#,", _SONIC_TACACS + " up to 202505"), Rule(1, 256, "#,", _SONIC_TACACS.replace("1..65", "1..256") + " from 202511", "202511")),
            table=table,
            field="passkey",
        )
        for table in ("TACPLUS", "TACPLUS_SERVER")
    ),
    *(
        Slot("sonic", RADIUS_KEY, f"{table}|... passkey", (Rule(1, 65, "#,", _SONIC_RADIUS),), table=table, field="passkey")
        for table in ("RADIUS", "RADIUS_SERVER")
    ),
    Slot("sonic", NTP_KEY, "NTP_KEY|ID value", (Rule(1, 64, "", "sonic-ntp.yang NTP_KEY value: length 1..64"),), table="NTP_KEY", field="value"),
    Slot(
        "sonic", SNMP_AUTH_KEY, "SNMP_USER|NAME SNMP_USER_AUTH_PASSWORD", (Rule(8, 64, "@:", _SONIC_SNMP),), table="SNMP_USER", field="SNMP_USER_AUTH_PASSWORD"
    ),
    Slot(
        "sonic",
        SNMP_PRIVACY_KEY,
        "SNMP_USER|NAME SNMP_USER_ENCRYPTION_PASSWORD",
        (Rule(8, 64, "@:", _SONIC_SNMP),),
        table="SNMP_USER",
        field="SNMP_USER_ENCRYPTION_PASSWORD",
    ),
    Slot(
        "sonic",
        SNMP_COMMUNITY,
        "SNMP_COMMUNITY|COMMUNITY (the row's key)",
        (Rule(4, 32, "@,\\'", "sonic-snmp.yang SNMP_COMMUNITY name: length 4..32, pattern [^ @,\\']* (every branch 202405 to master)"),),
        table="SNMP_COMMUNITY",
    ),
    Slot("sonic", LDAP_PASSWORD, "LDAP|global bind_password (sonic-system-ldap.yang)", table="LDAP", field="bind_password", placed=False),
    *(
        Slot("sonic", MACSEC_KEY, f"MACSEC_PROFILE|... {field} (sonic-macsec.yang)", table="MACSEC_PROFILE", field=field, placed=False)
        for field in ("primary_cak", "fallback_cak")
    ),
    *(
        Slot("sonic", BGP_KEY, f"{table}|... auth_password (sonic-bgp-common.yang)", table=table, field="auth_password", placed=False)
        for table in ("BGP_NEIGHBOR", "BGP_PEER_GROUP")
    ),
)


_BY_FIELD = {(slot.table, slot.field): slot for slot in SECRET_SLOTS}


def config_db_slot(table: str, field_name: str | None) -> Slot:
    """The slot of a config_db table and field (None: the row's key, an SNMP community)."""
    return _BY_FIELD[(table, field_name)]
