"""What the SONiC adapter can write, asked by the checks before anything renders (no Jinja here):
its hash fields, PFC watchdog numbers, BGP security and management gaps, and the config_db tables
its configs need from a release on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.build.secrets import placeholder, placeholder_problem
from fabricgen.nos.interface import FeatureNeed, Gap
from fabricgen.nos.sonic.catalog import platform_of
from fabricgen.nos.sonic.secret_slots import config_db_slot

# annotations only: the registry imports this package while the intent's models are being defined
if TYPE_CHECKING:
    from fabricgen.catalog.model import SwitchModel
    from fabricgen.intent.management import BgpSecurity, Management
    from fabricgen.intent.model import Backend, HashField, HostFabric, LoadBalancing, PfcWatchdog

# SWITCH_HASH|GLOBAL ecmp_hash values (sonic-hash.yang, the Generic Hash feature: on every branch
# from 202305; IPV6_FLOW_LABEL from 202505, refused on earlier targets: releases.yaml ipv6-flow-label-hash).
# `inner` adds the INNER_ counterpart of every outer field listed.
HASH_FIELDS = {
    "src-ip": "SRC_IP",
    "dst-ip": "DST_IP",
    "protocol": "IP_PROTOCOL",
    "src-port": "L4_SRC_PORT",
    "dst-port": "L4_DST_PORT",
    "ipv6-flow-label": "IPV6_FLOW_LABEL",
}
INNER_FIELDS = ("SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT")


def ecmp_hash(fields: list[HashField]) -> list[str]:
    """The ecmp_hash leaf-list for the intent's hash fields, in the intent's order, inner last."""
    outer = [HASH_FIELDS[f] for f in fields if f != "inner"]
    inner = [f"INNER_{f}" for f in outer if f in INNER_FIELDS] if "inner" in fields else []
    return outer + inner


def watchdog_values(watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
    """The PFC_WD numbers this adapter writes, by their releases.yaml parameter name: the value and
    the intent field (under qos.pfc_watchdog) it comes from. config_db takes them as they are."""
    return {
        "poll-interval": (watchdog.poll_interval_ms, "poll_interval_ms"),
        "detection-time": (watchdog.detection_ms, "detection_ms"),
        "restoration-time": (watchdog.restoration_ms, "restoration_ms"),
    }


def load_balancing_gaps(lb: LoadBalancing) -> list[Gap]:
    """What this adapter cannot write of `lb`: ECMP only. Community SONiC's flowlet and
    per-packet tables (ARS_*, sonic-ars.yang of 2025-10-30) are in sonic-buildimage but in no
    release notes up to the 202605 draft, and fabricgen does not write them."""
    gaps = []
    if lb.mode != "ecmp":
        gaps.append(Gap("mode", f"fabricgen writes no SONiC config for {lb.mode}", "use mode: ecmp on SONiC"))
    if "inner" in lb.hash_fields and not any(f.startswith("INNER_") for f in ecmp_hash(lb.hash_fields)):
        gaps.append(
            Gap("hash_fields", "inner names no inner field on its own", "list the outer fields whose inner copies to hash, e.g. [src-ip, dst-ip, inner]")
        )
    return gaps


SNMP_NAME_MIN = 4
PASSWORD_LEN_MAX = 32  # sonic-passwh.yang PASSW_HARDENING|POLICIES len_min: 1..32


def security_gaps(security: BgpSecurity, management: Management | None) -> list[Gap]:
    """What this adapter cannot write of a network's BGP security or a switch's management
    section; `field` is the path below the network section (bgp_security.tcp_ao) or below
    `management`. FRR as SONiC ships it (8.x up to 202411, 10.x after) has no TCP-AO: bgpd's
    `neighbor PEER password` is TCP-MD5 only (docs/user/bgp.rst)."""
    gaps = []
    if security.tcp_ao:
        gaps.append(
            Gap("bgp_security.tcp_ao", "FRR on SONiC has no TCP-AO, only TCP-MD5 (neighbor password)", "set tcp_ao: false for a network with SONiC switches")
        )
    if management is not None and management.snmp is not None:
        short = [user.name for user in management.snmp.users if len(user.name) < SNMP_NAME_MIN]
        if short:
            # sonic-snmp.yang SNMP_USER_LIST name: length 4..32
            gaps.append(
                Gap(
                    "management.snmp.users",
                    f"SONiC takes SNMPv3 user names of 4-32 characters, not {', '.join(short)}",
                    "give the SNMP user a name of at least 4 characters",
                )
            )
    if management is not None:
        gaps += _placeholder_gaps(management)
    if management is not None and management.password_policy.min_length > PASSWORD_LEN_MAX:
        gaps.append(
            Gap(
                "management.password_policy.min_length",
                f"SONiC's password hardening takes a minimum length of at most {PASSWORD_LEN_MAX}, not {management.password_policy.min_length}",
                f"set min_length to {PASSWORD_LEN_MAX} or less for SONiC switches",
            )
        )
    return gaps


def _placeholder_gaps(m: Management) -> list[Gap]:
    """Secret names whose placeholder cannot stand in the config_db field it goes into until
    push fills it (the fields' YANG patterns and lengths hold for the build as written): in
    practice a long name as an SNMP community (SNMP_COMMUNITY keys are 4-32 characters)."""
    wanted: list[tuple[str, str, str | None, str]] = []  # (intent field, table, field, secret name)
    for section, table in (("tacacs", "TACPLUS"), ("radius", "RADIUS")):
        group = getattr(m, section)
        if group is not None:
            wanted.append((f"management.{section}.key", table, "passkey", group.key))
    if m.ntp is not None and m.ntp.key:
        wanted.append(("management.ntp.key", "NTP_KEY", "value", m.ntp.key))
    if m.snmp is not None:
        for user in m.snmp.users:
            wanted.append(("management.snmp.users", "SNMP_USER", "SNMP_USER_AUTH_PASSWORD", user.auth_key))
            wanted.append(("management.snmp.users", "SNMP_USER", "SNMP_USER_ENCRYPTION_PASSWORD", user.privacy_key))
        wanted += [("management.snmp.communities", "SNMP_COMMUNITY", None, name) for name in m.snmp.communities]
    gaps = []
    for intent_field, table, field, name in wanted:
        slot = config_db_slot(table, field)
        problem = placeholder_problem(slot, name)
        if problem is not None:
            limit = slot.strictest().max_length - len(placeholder(name)) + len(name)
            gaps.append(
                Gap(
                    intent_field,
                    f"the placeholder of secret {name!r} {problem} of SONiC's {slot.where}, where it stands until push fills in the value",
                    f"name the secret with at most {limit} characters",
                )
            )
    return gaps


def unrendered(management: Management, features: frozenset[str] | set[str]) -> list[str]:
    """Settings of the section this adapter writes nothing for on a release with `features` (the
    build says so in its notes): DNS (sonic-dns.yang's interplay with the management VRF is
    unverified), SNMP trap receivers (sonic-snmp.yang has no trap table), LLDP off (lldpmgrd
    does not read the LLDP table); before 202511 NTP authentication (releases.yaml
    ntp-authentication), before 202411 the SSH idle timeout (ssh-inactivity-timeout)."""
    missing = []
    if management.ntp is not None and management.ntp.key and "ntp-authentication" not in features:
        missing.append(
            "NTP authentication (ntp.key): SONiC before 202511 cannot load NTP_KEY (sonic-ntp.yang names its list NTP_KEYS_LIST),"
            " so the NTP servers are used unauthenticated; target 202511 or later to keep it"
        )
    if management.access is not None and "ssh-inactivity-timeout" not in features:
        missing.append("the SSH idle timeout (access.exec_timeout_min): SSH_SERVER has no inactivity_timeout before SONiC 202411")
    if management.domain_name or management.dns_servers:
        missing.append("DNS (domain_name, dns_servers)")
    if management.snmp is not None and management.snmp.trap_hosts:
        missing.append("SNMP trap receivers (snmp.trap_hosts)")
    if not management.lldp:
        missing.append("lldp: false (LLDP stays on)")
    return missing


def feature_needs(management: Management | None) -> list[FeatureNeed]:
    """config_db tables and fields that exist from one sonic-buildimage branch on (releases.yaml)."""
    needs = [FeatureNeed("generic-hash", "the ECMP hash fields (SWITCH_HASH)", "load_balancing.hash_fields")]
    if management is not None:
        needs.append(FeatureNeed("password-hardening", "the password policy (PASSW_HARDENING)", "management.password_policy"))
        if management.access is not None:
            # the idle timeout is left out (with a note) where SSH_SERVER lacks it: render.py
            needs.append(FeatureNeed("ssh-server-policies", "the SSH server policy (SSH_SERVER)", "management.access"))
        if management.banner:
            needs.append(FeatureNeed("banner-message", "the login banner (BANNER_MESSAGE)", "management.banner"))
    return needs


def model_notes(pid: str, model: SwitchModel, roles: str) -> list[str]:
    """A model whose catalog entry has no platform port map: its config_db carries generic lanes
    and no platform or hwsku, so it does not load as is."""
    if model.platform_mapped:
        return []
    reason = platform_of(model).unverified
    return [
        f"UNVERIFIED SONiC platform: {pid} ({roles} switches) has no SONiC platform port map in the catalog"
        + (f" ({reason})" if reason else "")
        + ": PORT lanes are numbered generically from 0 and DEVICE_METADATA names no platform or hwsku, so config_db.json "
        "will not load as is on the switch; give its catalog entry sonic.platform, hwsku, source and ports from the platform's "
        "port_config.ini (sonic-buildimage device/<vendor>/<platform>/<hwsku>/)"
    ]


def settings_gaps(spec: Backend | HostFabric) -> list[Gap]:
    """Nothing: SONiC takes every network setting the intent can ask for."""
    return []


def notes(spec: Backend | HostFabric) -> list[str]:
    """Nothing beyond the notes the checks write for every NOS."""
    return []
