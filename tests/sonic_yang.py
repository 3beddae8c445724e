"""SONiC config_db constraints, as stated by the sonic-buildimage YANG models (sonic-port,
sonic-interface, sonic-vlan, sonic-*-map, sonic-port-qos-map, sonic-wred-profile, sonic-queue,
sonic-scheduler, sonic-buffer-* (static_th, dynamic_th -8..7, xon/xoff/xon_offset bytes,
headroom_type), sonic-pfcwd, sonic-cable-length ('[0-9]+m|None'), sonic-device_metadata,
sonic-mgmt_port, sonic-mgmt_interface, sonic-mgmt_vrf, sonic-hash, sonic-vrf, sonic-vxlan,
sonic-static-anycast-gateway), and the management plane: sonic-system-aaa, sonic-system-tacacs,
sonic-system-radius, sonic-ntp, sonic-syslog, sonic-snmp, sonic-acl (CTRLPLANE), sonic-ssh-server,
sonic-banner, sonic-passwh (branch 202411 of sonic-buildimage, src/sonic-yang-models/yang-models),
and what differs between the release branches 202405, 202411, 202505, 202511, 202605 and master
(SINCE and the *_SINCE rules below, each naming the model and commit): `violations(db, release)`.

A secret's field takes what the model's pattern and length allow, placeholders included: a build
directory is checked as built (`<<secret=NAME>>` in the field) and as pushed (values filled).

Written from the models' documented ranges and patterns (not copied); returns every violation.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

MAP_NAME = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}$")
DEVICE_TYPES = {
    "ToRRouter",
    "LeafRouter",
    "SpineChassisFrontendRouter",
    "ChassisBackendRouter",
    "ASIC",
    "MgmtToRRouter",
    "SpineRouter",
    "BackEndToRRouter",
    "BackEndLeafRouter",
    "EPMS",
    "MgmtTsToR",
    "BmcMgmtToRRouter",
    "not-provisioned",
}
ROUTING_MODES = {"separated", "unified", "split", "split-unified"}
# tables bgpcfgd renders into FRR: with routing in frr.conf they must not exist
ROUTING_TABLES = {
    "BGP_NEIGHBOR",
    "BGP_INTERNAL_NEIGHBOR",
    "BGP_MONITORS",
    "BGP_PEER_RANGE",
    "BGP_ALLOWED_PREFIXES",
    "BGP_BBR",
    "BGP_DEVICE_GLOBAL",
    "BGP_AGGREGATE_ADDRESS",
    "STATIC_ROUTE",
    "PREFIX_LIST",
    "DEVICE_NEIGHBOR_METADATA",
}


# sonic-hash.yang: SWITCH_HASH|GLOBAL leaf-lists of hash-field. The first revision (2022-09-05)
# had the outer and INNER_ fields; IPV6_FLOW_LABEL came in 2025, RDMA_BTH_* later still.
HASH_FIELDS = {
    "IN_PORT",
    "DST_MAC",
    "SRC_MAC",
    "ETHERTYPE",
    "VLAN_ID",
    "IP_PROTOCOL",
    "DST_IP",
    "SRC_IP",
    "L4_DST_PORT",
    "L4_SRC_PORT",
    "INNER_DST_MAC",
    "INNER_SRC_MAC",
    "INNER_ETHERTYPE",
    "INNER_IP_PROTOCOL",
    "INNER_DST_IP",
    "INNER_SRC_IP",
    "INNER_L4_DST_PORT",
    "INNER_L4_SRC_PORT",
    "IPV6_FLOW_LABEL",
    "RDMA_BTH_OPCODE",
    "RDMA_BTH_DEST_QP",
}
HASH_LISTS = {"ecmp_hash", "lag_hash"} | {f"{kind}_hash_{packet}" for kind in ("ecmp", "lag") for packet in ("ipv4", "ipv6", "ipnip", "ipv4_rdma", "ipv6_rdma")}
HASH_ALGORITHMS = {"CRC", "XOR", "RANDOM", "CRC_32LO", "CRC_32HI", "CRC_CCITT", "CRC_XOR"}  # sonic-types hash-algorithm


# leaf-lists outside SWITCH_HASH: JSON lists of strings in config_db.json
LEAF_LISTS = {("ACL_TABLE", "services"), ("ACL_TABLE", "ports"), ("NTP", "src_intf")}


def _int(value: str, low: int, high: int) -> bool:
    return isinstance(value, str) and value.lstrip("-").isdigit() and low <= int(value) <= high


# What differs between release branches (sonic-net/sonic-buildimage, each branch's
# src/sonic-yang-models/yang-models/, read 2026-08): a field or table exists from a release on, or a
# value is refused before one. Releases sort as branch numbers, master last.
RELEASES = ("202405", "202411", "202505", "202511", "202605", "master")
# (table, field or None for the whole table) -> first release whose YANG has it
SINCE = {
    ("SAG", None): "master",  # sonic-static-anycast-gateway.yang, commit 7e3ed9e030 (#27543), master only
    ("VLAN_INTERFACE", "static_anycast_gateway"): "master",  # sonic-vlan.yang, same commit
    ("VLAN_INTERFACE", "mac_addr"): "202505",  # sonic-vlan.yang, commit ec0cd568b3 (#20968)
    ("VLAN_INTERFACE", "vnet_name"): "202505",  # sonic-vlan.yang revision 2025-03-06
    ("INTERFACE", "mac_addr"): "202505",  # sonic-interface.yang, commit ec0cd568b3
    ("SSH_SERVER", "inactivity_timeout"): "202411",  # sonic-ssh-server.yang, commit 367495d036 (#17623)
    ("SSH_SERVER", "max_sessions"): "202411",  # the same commit
    ("PFC_WD", "pfc_stat_history"): "202511",  # sonic-pfcwd.yang on 202511
    ("VXLAN_TUNNEL", "ttl_mode"): "202511",  # sonic-vxlan.yang on 202511
}
# a value's range or pattern that changed: (release from which the newer rule holds)
EMPTY_PFCWD_SW_ENABLE_SINCE = "202505"  # sonic-port-qos-map.yang: "" allowed from commit ecb4b63ae3 (#22252)
IPV6_FLOW_LABEL_SINCE = "202505"  # sonic-hash.yang hash-field enum, commit 63c4721231 (#21522)
PORT_SPEED_1600G_SINCE = "202511"  # sonic-port.yang speed 1..800000 up to 202505, 1..1600000 from 202511
POLL_INTERVAL_MAX = {"202405": 3000, "202411": 3000, "202505": 3000}  # sonic-pfcwd.yang; 1000 from 202511
# sonic-ntp.yang up to 202505 names NTP_KEY's list NTP_KEYS_LIST: sonic_yang looks for <TABLE>_LIST, so
# no NTP_KEY entry loads (nor an NTP_SERVER `key`, a leafref to it); renamed NTP_KEY_LIST by commit
# 5d007b7e9d (#23401, 2025-10-30, revision 2025-07-21), branch 202511 and later
NTP_KEY_SINCE = "202511"
# sonic-system-tacacs.yang passkey (TACPLUS|global and TACPLUS_SERVER): length 1..65 up to 202505,
# 1..256 from 202511 (with key_encrypt); the pattern [^ #,]* on every branch. RADIUS stays 1..65.
TACACS_PASSKEY_256_SINCE = "202511"


def _since(release: str, first: str) -> bool:
    """`release` has what arrived in `first`."""
    return RELEASES.index(release) >= RELEASES.index(first)


def violations(db: dict[str, Any], release: str = "master") -> list[str]:
    """Every constraint `db` breaks on SONiC `release` (one of RELEASES)."""
    if release not in RELEASES:
        raise ValueError(f"unknown SONiC release {release!r}; known: {', '.join(RELEASES)}")
    found: list[str] = []

    def bad(where: str, what: str) -> None:
        found.append(f"{where}: {what}")

    for (table, field), first in SINCE.items():
        if _since(release, first) or table not in db:
            continue
        if field is None:
            bad(table, f"no such table before SONiC {first} (target {release})")
            continue
        for key, row in db[table].items():
            if isinstance(row, dict) and field in row:
                bad(f"{table}|{key}.{field}", f"no such field before SONiC {first} (target {release})")
    if not _since(release, EMPTY_PFCWD_SW_ENABLE_SINCE):
        for key, row in db.get("PORT_QOS_MAP", {}).items():
            if row.get("pfcwd_sw_enable") == "":
                bad(f"PORT_QOS_MAP|{key}.pfcwd_sw_enable", f"empty before SONiC {EMPTY_PFCWD_SW_ENABLE_SINCE} (pattern [0-7](,[0-7])*)")
    if not _since(release, IPV6_FLOW_LABEL_SINCE):
        for field, value in db.get("SWITCH_HASH", {}).get("GLOBAL", {}).items():
            if isinstance(value, list) and "IPV6_FLOW_LABEL" in value:
                bad(f"SWITCH_HASH|GLOBAL.{field}", f"IPV6_FLOW_LABEL is not a hash-field before SONiC {IPV6_FLOW_LABEL_SINCE}")
    if not _since(release, PORT_SPEED_1600G_SINCE):
        for name, port in db.get("PORT", {}).items():
            if _int(port.get("speed", ""), 800001, 1600000):
                bad(f"PORT|{name}", f"speed {port['speed']} above 800000 before SONiC {PORT_SPEED_1600G_SINCE}")
    poll_max = POLL_INTERVAL_MAX.get(release, 1000)

    for table, rows in db.items():
        for key, row in rows.items():
            if isinstance(row, dict):
                for field, value in row.items():
                    leaf_list = (table == "SWITCH_HASH" and field in HASH_LISTS) or (table, field) in LEAF_LISTS
                    if leaf_list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                        bad(f"{table}|{key}.{field}", f"value {value!r} is not a list of strings (a leaf-list)")
                    elif not leaf_list and not isinstance(value, str):
                        bad(f"{table}|{key}.{field}", f"value {value!r} is not a string")
    for table in ROUTING_TABLES & set(db):
        bad(table, "routing table in config_db while routing lives in frr.conf")

    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if not 1 <= len(meta.get("hostname", "")) <= 63:
        bad("DEVICE_METADATA.hostname", "length 1-63")
    if meta.get("type") not in DEVICE_TYPES:
        bad("DEVICE_METADATA.type", f"{meta.get('type')!r}")
    if meta.get("docker_routing_config_mode") not in ROUTING_MODES:
        bad("DEVICE_METADATA.docker_routing_config_mode", f"{meta.get('docker_routing_config_mode')!r}")
    if not _int(meta.get("bgp_asn", ""), 1, 4294967295):
        bad("DEVICE_METADATA.bgp_asn", "not an AS number")
    if "timezone" in meta and not 1 <= len(meta["timezone"]) <= 255:
        bad("DEVICE_METADATA.timezone", "length 1-255")
    _evpn_violations(db, bad)
    _management_violations(db, bad, release)

    ports = db.get("PORT", {})
    for name, port in ports.items():
        where = f"PORT|{name}"
        lanes = port.get("lanes", "")
        if not lanes or not all(part.isdigit() for part in lanes.split(",")):
            bad(where, f"lanes {lanes!r}")
        if not _int(port.get("speed", ""), 1, 1600000):
            bad(where, f"speed {port.get('speed')!r} (Mb/s)")
        if "mtu" in port and not _int(port["mtu"], 68, 9216):
            bad(where, f"mtu {port['mtu']}")
        if port.get("fec", "none") not in {"rs", "fc", "none", "auto"}:
            bad(where, f"fec {port.get('fec')}")
        if port.get("admin_status", "up") not in {"up", "down"}:
            bad(where, "admin_status")
        if "index" in port and not _int(port["index"], 0, 65535):
            bad(where, "index")
    all_lanes = [lane for port in ports.values() for lane in port.get("lanes", "").split(",")]
    if len(all_lanes) != len(set(all_lanes)):
        bad("PORT", "a SerDes lane is used by two ports")

    for table, names in (("INTERFACE", set(ports)), ("LOOPBACK_INTERFACE", None), ("VLAN_INTERFACE", set(db.get("VLAN", {})))):
        rows = db.get(table, {})
        for key in rows:
            if "|" in key:
                name, prefix = key.split("|", 1)
                if name not in rows:
                    bad(f"{table}|{key}", f"no bare '{name}' entry")
                try:
                    ipaddress.ip_interface(prefix)
                except ValueError:
                    bad(f"{table}|{key}", "not an address/prefix")
            elif names is not None and key not in names:
                bad(f"{table}|{key}", "references a missing port or VLAN")

    for name, vlan in db.get("VLAN", {}).items():
        match = re.fullmatch(r"Vlan(\d+)", name)
        if not match or not 2 <= int(match.group(1)) <= 4094 or vlan.get("vlanid") != match.group(1):
            bad(f"VLAN|{name}", "name must be Vlan<vlanid> with vlanid 2-4094")
    for key, member in db.get("VLAN_MEMBER", {}).items():
        vlan, port = key.split("|")
        if vlan not in db.get("VLAN", {}) or port not in ports:
            bad(f"VLAN_MEMBER|{key}", "unknown VLAN or port")
        if member.get("tagging_mode") not in {"tagged", "untagged", "priority_tagged"}:
            bad(f"VLAN_MEMBER|{key}", "tagging_mode")
        if port in db.get("INTERFACE", {}):
            bad(f"VLAN_MEMBER|{key}", "port is also a routed INTERFACE")

    maps = {
        "DSCP_TO_TC_MAP": ((0, 63), (0, 15)),
        "TC_TO_QUEUE_MAP": ((0, 15), (0, 9)),
        "TC_TO_PRIORITY_GROUP_MAP": ((0, 15), (0, 7)),
        "MAP_PFC_PRIORITY_TO_QUEUE": ((0, 7), (0, 7)),
    }
    for table, ((klow, khigh), (vlow, vhigh)) in maps.items():
        for name, mapping in db.get(table, {}).items():
            if not MAP_NAME.match(name):
                bad(f"{table}|{name}", "map name pattern")
            for key, value in mapping.items():
                if not _int(key, klow, khigh) or not _int(value, vlow, vhigh):
                    bad(f"{table}|{name}", f"{key} -> {value} out of range")

    references = {
        "dscp_to_tc_map": "DSCP_TO_TC_MAP",
        "tc_to_queue_map": "TC_TO_QUEUE_MAP",
        "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
        "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    }
    for key, row in db.get("PORT_QOS_MAP", {}).items():
        if key != "global" and key not in ports:
            bad(f"PORT_QOS_MAP|{key}", "not a port")
        for field, table in references.items():
            if field in row and row[field] not in db.get(table, {}):
                bad(f"PORT_QOS_MAP|{key}.{field}", f"{row[field]!r} is not in {table} (references are plain names)")
        for field in ("pfc_enable", "pfcwd_sw_enable"):
            if field in row and not re.fullmatch(r"([0-7](,[0-7])*)?", row[field]):
                bad(f"PORT_QOS_MAP|{key}.{field}", row[field])

    for name, profile in db.get("WRED_PROFILE", {}).items():
        if not MAP_NAME.match(name):
            bad(f"WRED_PROFILE|{name}", "name pattern")
        if profile.get("ecn", "ecn_none") not in {
            "ecn_none",
            "ecn_green",
            "ecn_yellow",
            "ecn_red",
            "ecn_green_yellow",
            "ecn_green_red",
            "ecn_yellow_red",
            "ecn_all",
        }:
            bad(f"WRED_PROFILE|{name}", "ecn")
        for colour in ("green", "yellow", "red"):
            low, high = profile.get(f"{colour}_min_threshold"), profile.get(f"{colour}_max_threshold")
            if low is not None and (not low.isdigit() or not high or not high.isdigit() or int(high) < int(low)):
                bad(f"WRED_PROFILE|{name}", f"{colour} thresholds must be bytes with max >= min")
            if f"{colour}_drop_probability" in profile and not _int(profile[f"{colour}_drop_probability"], 0, 100):
                bad(f"WRED_PROFILE|{name}", f"{colour}_drop_probability")
            if profile.get(f"wred_{colour}_enable", "false") not in {"true", "false"}:
                bad(f"WRED_PROFILE|{name}", f"wred_{colour}_enable")

    for name, scheduler in db.get("SCHEDULER", {}).items():
        if scheduler.get("type", "WRR") not in {"DWRR", "WRR", "STRICT"}:
            bad(f"SCHEDULER|{name}", "type")
        if "weight" in scheduler and not _int(scheduler["weight"], 1, 100):
            bad(f"SCHEDULER|{name}", "weight 1-100")
    for key, queue in db.get("QUEUE", {}).items():
        port, _, index = key.partition("|")
        if port not in ports or not re.fullmatch(r"\d+(-\d+)?", index):
            bad(f"QUEUE|{key}", "key must be <port>|<queue>")
        if "scheduler" in queue and queue["scheduler"] not in db.get("SCHEDULER", {}):
            bad(f"QUEUE|{key}", "unknown scheduler")
        if "wred_profile" in queue and queue["wred_profile"] not in db.get("WRED_PROFILE", {}):
            bad(f"QUEUE|{key}", "unknown wred_profile")

    pools = db.get("BUFFER_POOL", {})
    for name, pool in pools.items():
        if pool.get("type") not in {"ingress", "egress"} or pool.get("mode") not in {"static", "dynamic"}:
            bad(f"BUFFER_POOL|{name}", "type and mode are mandatory enums")
    profiles = db.get("BUFFER_PROFILE", {})
    for name, profile in profiles.items():
        if profile.get("pool") not in pools:
            bad(f"BUFFER_PROFILE|{name}", "unknown pool")
        if not profile.get("size", "").isdigit():
            bad(f"BUFFER_PROFILE|{name}", "size is mandatory bytes")
        if "dynamic_th" in profile and not _int(profile["dynamic_th"], -8, 7):
            bad(f"BUFFER_PROFILE|{name}", "dynamic_th -8..7")
        for field in ("xon", "xoff", "xon_offset", "static_th"):
            if field in profile and not profile[field].isdigit():
                bad(f"BUFFER_PROFILE|{name}", f"{field} must be bytes (uint64)")
        if profile.get("headroom_type", "static") not in {"static", "dynamic"}:
            bad(f"BUFFER_PROFILE|{name}", "headroom_type static|dynamic")
        # beyond YANG: SAI takes one threshold mode per profile, and reads a static threshold of 0
        # as "no limit", which on a lossless PG would leave PAUSE to the pool running out
        if "static_th" in profile and "dynamic_th" in profile:
            bad(f"BUFFER_PROFILE|{name}", "static_th and dynamic_th together (one threshold mode)")
        if profile.get("static_th") == "0" and profile.get("xoff", "0") != "0":
            bad(f"BUFFER_PROFILE|{name}", "static_th 0 on a lossless profile means no limit")
    for table, pattern in (("BUFFER_PG", r"[0-7](-[0-7])?"), ("BUFFER_QUEUE", r"(1[0-5]|[0-9])(-(1[0-5]|[0-9]))?")):
        for key, row in db.get(table, {}).items():
            port, _, index = key.partition("|")
            if port not in ports or not re.fullmatch(pattern, index):
                bad(f"{table}|{key}", "key")
            if row.get("profile") not in profiles and row.get("profile") != "NULL":
                bad(f"{table}|{key}", "unknown profile")

    # beyond YANG: every PFC-enabled priority of a port has a lossless (xoff) ingress buffer, or
    # the port would send PAUSE with no headroom behind it (or never)
    pg_profiles: dict[tuple[str, int], str] = {}
    for key, row in db.get("BUFFER_PG", {}).items():
        port, _, index = key.partition("|")
        if re.fullmatch(r"[0-7](-[0-7])?", index):
            first, _, last = index.partition("-")
            for pg in range(int(first), int(last or first) + 1):
                pg_profiles[(port, pg)] = row.get("profile", "")
    for port, row in db.get("PORT_QOS_MAP", {}).items():
        if port == "global" or not row.get("pfc_enable"):
            continue
        pg_map = db.get("TC_TO_PRIORITY_GROUP_MAP", {}).get(row.get("tc_to_pg_map", ""), {})
        for priority in row["pfc_enable"].split(","):
            pg = int(pg_map.get(priority, priority))
            profile = profiles.get(pg_profiles.get((port, pg), ""), {})
            if profile.get("xoff", "0") == "0":
                bad(f"PORT_QOS_MAP|{port}", f"PFC on priority {priority} but PG {pg} has no lossless (xoff) profile")

    watchdog = db.get("PFC_WD", {})
    poll = watchdog.get("GLOBAL", {}).get("POLL_INTERVAL")
    if watchdog and not _int(poll or "", 100, poll_max):
        bad("PFC_WD|GLOBAL", f"POLL_INTERVAL 100-{poll_max}")
    for key, row in watchdog.items():
        if key == "GLOBAL":
            continue
        if key not in ports or row.get("action") not in {"drop", "forward", "alert"}:
            bad(f"PFC_WD|{key}", "port and action")
        if not _int(row.get("detection_time", ""), 100, 5000) or not _int(row.get("restoration_time", ""), 100, 60000):
            bad(f"PFC_WD|{key}", "detection 100-5000 ms, restoration 100-60000 ms")
        elif poll and (int(row["detection_time"]) < int(poll) or int(row["restoration_time"]) < int(poll)):
            bad(f"PFC_WD|{key}", "times must be >= POLL_INTERVAL")

    # brkout_mode: sonic-breakout_cfg.yang takes any string of 1-64 characters; the form is
    # portconfig.py's BRKOUT_PATTERN, whose "(8)" lane count Dell's platform.json uses (2x400G(8))
    for port, row in db.get("BREAKOUT_CFG", {}).items():
        if port not in ports or not re.fullmatch(r"\d+x\d+G(\[\d+G(,\d+G)*\])?(\(\d+\))?", row.get("brkout_mode", "")):
            bad(f"BREAKOUT_CFG|{port}", "key is the cage's first port; brkout_mode like 2x400G")

    mgmt_ports = db.get("MGMT_PORT", {})
    for name, port in mgmt_ports.items():
        if not re.fullmatch(r"eth([1-3][0-9]{3}|[1-9][0-9]{2}|[1-9][0-9]|[0-9])", name):
            bad(f"MGMT_PORT|{name}", "name must be eth<n>")
        if port.get("admin_status", "up") not in {"up", "down"}:
            bad(f"MGMT_PORT|{name}", "admin_status")
        if "mtu" in port and not _int(port["mtu"], 1500, 9216):
            bad(f"MGMT_PORT|{name}", "mtu 1500-9216")
        if "speed" in port and port["speed"] not in {"10", "100", "1000"}:
            bad(f"MGMT_PORT|{name}", "speed 10, 100 or 1000")
    for key, row in db.get("MGMT_INTERFACE", {}).items():
        name, _, prefix = key.partition("|")
        if name not in mgmt_ports:
            bad(f"MGMT_INTERFACE|{key}", "not a MGMT_PORT")
        try:
            interface = ipaddress.ip_interface(prefix)
        except ValueError:
            bad(f"MGMT_INTERFACE|{key}", "key must be <port>|<address/prefix>")
            continue
        if "gwaddr" in row:
            try:
                gateway = ipaddress.ip_address(row["gwaddr"])
            except ValueError:
                bad(f"MGMT_INTERFACE|{key}", f"gwaddr {row['gwaddr']!r} is not an address")
                continue
            # beyond YANG: the default route via gwaddr needs it on the port's own subnet
            if gateway not in interface.network or gateway == interface.ip:
                bad(f"MGMT_INTERFACE|{key}", f"gwaddr {gateway} is not another host of {interface.network}")
    for key, row in db.get("MGMT_VRF_CONFIG", {}).items():
        if key != "vrf_global" or any(v not in {"true", "false"} for v in row.values()):
            bad(f"MGMT_VRF_CONFIG|{key}", "only vrf_global, with boolean strings")

    for key, row in db.get("SWITCH_HASH", {}).items():
        if key != "GLOBAL":
            bad(f"SWITCH_HASH|{key}", "the only key is GLOBAL")
        for field, value in row.items():
            if field in HASH_LISTS:
                values = value if isinstance(value, list) else []
                for item in values:
                    if item not in HASH_FIELDS:
                        bad(f"SWITCH_HASH|{key}.{field}", f"{item!r} is not a hash-field")
                if len(set(values)) != len(values):
                    bad(f"SWITCH_HASH|{key}.{field}", "a leaf-list value repeats")
            elif field in ("ecmp_hash_algorithm", "lag_hash_algorithm"):
                if value not in HASH_ALGORITHMS:
                    bad(f"SWITCH_HASH|{key}.{field}", f"{value!r} is not a hash-algorithm")
            else:
                bad(f"SWITCH_HASH|{key}.{field}", "unknown field")

    for name, lengths in db.get("CABLE_LENGTH", {}).items():
        if not MAP_NAME.match(name):
            bad(f"CABLE_LENGTH|{name}", "list name pattern")
        for port, length in lengths.items():
            if port not in ports or not re.fullmatch(r"[0-9]+m|None", length):
                bad(f"CABLE_LENGTH|{name}|{port}", length)
    return found


VRF_NAME = re.compile(r"^Vrf[a-zA-Z0-9_-]+$")
YANG_VLAN = re.compile(r"^Vlan([0-9]{1,3}|[1-3][0-9]{3}|40[0-8][0-9]|409[0-4])$")
MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


def _evpn_violations(db: dict[str, Any], bad) -> None:
    """VRF, VXLAN_TUNNEL / _MAP / VXLAN_EVPN_NVO and SAG, with the references between them."""
    vrfs = db.get("VRF", {})
    for name, row in vrfs.items():
        # YANG allows 3-255 characters; the kernel's VRF device name stops at 15
        if not VRF_NAME.match(name) or len(name) > 15:
            bad(f"VRF|{name}", "name must match Vrf[a-zA-Z0-9_-]+ and fit 15 characters")
        if "vni" in row and not _int(row["vni"], 0, 16777215):
            bad(f"VRF|{name}", "vni 0-16777215")
    vlans = db.get("VLAN", {})
    sag = db.get("SAG", {})
    for key in db.get("LOOPBACK_INTERFACE", {}):
        if not re.fullmatch(r"Loopback\d+", key.split("|")[0]):
            bad(f"LOOPBACK_INTERFACE|{key}", "name must be Loopback<n>")
    for key, row in db.get("VLAN_INTERFACE", {}).items():
        if "|" in key:
            continue
        if "vrf_name" in row and row["vrf_name"] not in vrfs:
            bad(f"VLAN_INTERFACE|{key}", f"vrf_name {row['vrf_name']!r} is not in VRF")
        if "static_anycast_gateway" in row:
            if row["static_anycast_gateway"] not in {"true", "false"}:
                bad(f"VLAN_INTERFACE|{key}", "static_anycast_gateway is a boolean string")
            elif row["static_anycast_gateway"] == "true" and not MAC.match(sag.get("GLOBAL", {}).get("gateway_mac", "")):
                bad(f"VLAN_INTERFACE|{key}", "static anycast gateway without SAG|GLOBAL gateway_mac")
    for key in sag:
        if key != "GLOBAL":
            bad(f"SAG|{key}", "only GLOBAL")
    tunnels = db.get("VXLAN_TUNNEL", {})
    if len(tunnels) > 2:
        bad("VXLAN_TUNNEL", "at most 2 entries")
    for name, row in tunnels.items():
        try:
            ipaddress.ip_address(row.get("src_ip", ""))
        except ValueError:
            bad(f"VXLAN_TUNNEL|{name}", "src_ip is not an address")
    nvos = db.get("VXLAN_EVPN_NVO", {})
    if len(nvos) > 1:
        bad("VXLAN_EVPN_NVO", "at most 1 entry")
    for name, row in nvos.items():
        if row.get("source_vtep") not in tunnels:
            bad(f"VXLAN_EVPN_NVO|{name}", "source_vtep is not a VXLAN_TUNNEL")
    mapped_vnis: dict[str, str] = {}
    mapped_vlans: dict[str, str] = {}
    for key, row in db.get("VXLAN_TUNNEL_MAP", {}).items():
        tunnel, _, mapname = key.partition("|")
        if tunnel not in tunnels or not mapname:
            bad(f"VXLAN_TUNNEL_MAP|{key}", "key must be <VXLAN_TUNNEL name>|<map name>")
        vlan, vni = row.get("vlan", ""), row.get("vni", "")
        if not YANG_VLAN.match(vlan) or vlan not in vlans:
            bad(f"VXLAN_TUNNEL_MAP|{key}", f"vlan {vlan!r} is not a configured VLAN")
        if not _int(vni, 1, 16777215):
            bad(f"VXLAN_TUNNEL_MAP|{key}", "vni 1-16777215")
        # beyond YANG: vxlanorch maps a VNI and a VLAN only once
        if vni in mapped_vnis:
            bad(f"VXLAN_TUNNEL_MAP|{key}", f"VNI {vni} is also mapped by {mapped_vnis[vni]}")
        if vlan in mapped_vlans:
            bad(f"VXLAN_TUNNEL_MAP|{key}", f"{vlan} is also mapped by {mapped_vlans[vlan]}")
        mapped_vnis[vni], mapped_vlans[vlan] = key, key
    for name, row in vrfs.items():
        if row.get("vni", "0") != "0" and row["vni"] not in mapped_vnis:
            bad(f"VRF|{name}", f"L3 VNI {row['vni']} has no VXLAN_TUNNEL_MAP entry (no VLAN carries it)")


BOOLEAN_TYPE = {"true", "false", "True", "False"}  # sonic-types boolean_type
ADMIN_MODE = {"enabled", "disabled"}  # sonic-types admin_mode
AAA_LOGIN = re.compile(r"((ldap|tacacs\+|local|radius|default),)*(ldap|tacacs\+|local|radius|default)")
ACL_SERVICES = {"SSH", "SNMP", "NTP", "REDFISH", "EXTERNAL_CLIENT", "ANY"}  # caclmgrd ACL_SERVICES


def _secret(value: str, length: tuple[int, int], forbidden: str) -> bool:
    """A key field: a value (or the build's placeholder standing in for it) of the YANG length
    without the characters the pattern excludes."""
    return length[0] <= len(value) <= length[1] and not any(ch in forbidden for ch in value)


def _host(value: str) -> bool:
    """inet:host: an address, or a domain name."""
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return bool(re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?", value))


def _management_violations(db: dict[str, Any], bad, release: str) -> None:
    """AAA, TACPLUS/RADIUS, NTP, SYSLOG_SERVER, SNMP, CTRLPLANE ACLs, SSH_SERVER, BANNER_MESSAGE,
    PASSW_HARDENING: types, enums and ranges of their YANG models, plus their `must` statements
    (tacacs+ login needs a TACPLUS passkey; vrf mgmt needs the management VRF enabled)."""
    mgmt_vrf = db.get("MGMT_VRF_CONFIG", {}).get("vrf_global", {}).get("mgmtVrfEnabled") == "true"

    def known(table: str, key: str, row: dict, fields: set[str]) -> None:
        for field in set(row) - fields:
            bad(f"{table}|{key}.{field}", "unknown field")

    def vrf_ok(table: str, key: str, row: dict, choices: set[str]) -> None:
        if "vrf" in row:
            if row["vrf"] not in choices:
                bad(f"{table}|{key}.vrf", f"{row['vrf']!r} is not one of {sorted(choices)}")
            elif row["vrf"] == "mgmt" and not mgmt_vrf:
                bad(f"{table}|{key}.vrf", "mgmt without MGMT_VRF_CONFIG mgmtVrfEnabled true")

    tacacs_key = db.get("TACPLUS", {}).get("global", {}).get("passkey")
    for key, row in db.get("AAA", {}).items():
        known("AAA", key, row, {"login", "failthrough", "fallback", "debug", "trace"})
        if key not in {"authentication", "authorization", "accounting"}:
            bad(f"AAA|{key}", "type must be authentication, authorization or accounting")
        if "login" in row and not AAA_LOGIN.fullmatch(row["login"]):
            bad(f"AAA|{key}.login", f"{row['login']!r} is not a list of ldap, tacacs+, local, radius, default")
        if key == "authentication" and "tacacs+" in row.get("login", "") and not tacacs_key:
            bad("AAA|authentication.login", "tacacs+ without a TACPLUS|global passkey")
        for field in ("failthrough", "fallback", "debug", "trace"):
            if field in row and row[field] not in BOOLEAN_TYPE:
                bad(f"AAA|{key}.{field}", "boolean_type true|false|True|False")

    tacacs_max = 256 if _since(release, TACACS_PASSKEY_256_SINCE) else 65
    for table, server_table, port_field, auth_types, passkey_max in (
        ("TACPLUS", "TACPLUS_SERVER", "tcp_port", {"pap", "chap", "mschap", "login"}, tacacs_max),
        ("RADIUS", "RADIUS_SERVER", "auth_port", {"pap", "chap", "mschapv2"}, 65),
    ):
        for key, row in db.get(table, {}).items():
            if key != "global":
                bad(f"{table}|{key}", "only global")
            fields = {"auth_type", "timeout", "passkey", "src_intf"} | ({"src_ip", "nas_ip", "statistics", "retransmit"} if table == "RADIUS" else set())
            known(table, key, row, fields)
            if "passkey" in row and not _secret(row["passkey"], (1, passkey_max), " #,"):
                bad(f"{table}|{key}.passkey", f"1-{passkey_max} characters without space, '#' or ','")
            if "timeout" in row and not _int(row["timeout"], 1, 60):
                bad(f"{table}|{key}.timeout", "1-60")
            if row.get("auth_type", "pap") not in auth_types:
                bad(f"{table}|{key}.auth_type", f"one of {sorted(auth_types)}")
        servers = db.get(server_table, {})
        if len(servers) > 8:
            bad(server_table, "at most 8 servers")
        for key, row in servers.items():
            known(server_table, key, row, {"priority", port_field, "timeout", "auth_type", "passkey", "vrf", "src_intf", "retransmit"})
            if not _host(key):
                bad(f"{server_table}|{key}", "key is an address or a host name")
            if "priority" in row and not _int(row["priority"], 1, 64):
                bad(f"{server_table}|{key}.priority", "1-64")
            if port_field in row and not _int(row[port_field], 0, 65535):
                bad(f"{server_table}|{key}.{port_field}", "a port number")
            if "timeout" in row and not _int(row["timeout"], 1, 60):
                bad(f"{server_table}|{key}.timeout", "1-60")
            if "passkey" in row and not _secret(row["passkey"], (1, passkey_max), " #,"):
                bad(f"{server_table}|{key}.passkey", f"1-{passkey_max} characters without space, '#' or ','")
            if row.get("auth_type", "pap") not in auth_types:
                bad(f"{server_table}|{key}.auth_type", f"one of {sorted(auth_types)}")
            vrf_ok(server_table, key, row, {"mgmt", "default"})

    keys = db.get("NTP_KEY", {})
    if keys and not _since(release, NTP_KEY_SINCE):
        bad("NTP_KEY", f"cannot be loaded before SONiC {NTP_KEY_SINCE} (sonic-ntp.yang's list is NTP_KEYS_LIST; target {release})")
        keys = {}  # an NTP_SERVER key refers to nothing that loads
    for key, row in db.get("NTP", {}).items():
        if key != "global":
            bad(f"NTP|{key}", "only global")
        known("NTP", key, row, {"src_intf", "vrf", "authentication", "dhcp", "server_role", "admin_state"})
        for field in ("authentication", "dhcp", "server_role", "admin_state"):
            if field in row and row[field] not in ADMIN_MODE:
                bad(f"NTP|{key}.{field}", "enabled|disabled")
        vrf_ok("NTP", key, row, {"mgmt", "default"})
        for name in row.get("src_intf", []) if isinstance(row.get("src_intf"), list) else []:
            if name not in db.get("MGMT_PORT", {}) and name not in db.get("PORT", {}) and name not in db.get("LOOPBACK_INTERFACE", {}) and name != "eth0":
                bad(f"NTP|{key}.src_intf", f"{name!r} is not a port, loopback or management port")
    for key, row in keys.items():
        known("NTP_KEY", key, row, {"trusted", "value", "type"})
        if not _int(key, 1, 65535):
            bad(f"NTP_KEY|{key}", "key id 1-65535")
        if row.get("type", "md5") not in {"md5", "sha1", "sha256", "sha384", "sha512"}:
            bad(f"NTP_KEY|{key}.type", "md5, sha1, sha256, sha384 or sha512")
        if row.get("trusted", "no") not in {"yes", "no"}:
            bad(f"NTP_KEY|{key}.trusted", "yes|no")
        if "value" in row and not _secret(row["value"], (1, 64), ""):
            bad(f"NTP_KEY|{key}.value", "1-64 characters")
    servers = db.get("NTP_SERVER", {})
    if len(servers) > 10:
        bad("NTP_SERVER", "at most 10 servers")
    for key, row in servers.items():
        known("NTP_SERVER", key, row, {"association_type", "iburst", "key", "resolve_as", "admin_state", "trusted", "version"})
        if not _host(key):
            bad(f"NTP_SERVER|{key}", "key is an address or a host name")
        if row.get("association_type", "server") not in {"server", "pool"}:
            bad(f"NTP_SERVER|{key}.association_type", "server|pool")
        if row.get("iburst", "on") not in {"on", "off"}:
            bad(f"NTP_SERVER|{key}.iburst", "on|off")
        if row.get("trusted", "no") not in {"yes", "no"}:
            bad(f"NTP_SERVER|{key}.trusted", "yes|no")
        if "version" in row and not _int(row["version"], 3, 4):
            bad(f"NTP_SERVER|{key}.version", "3-4")
        if "key" in row and row["key"] not in keys:
            bad(f"NTP_SERVER|{key}.key", f"{row['key']!r} is not an NTP_KEY")

    severities = {"none", "debug", "info", "notice", "warn", "error", "crit"}
    for key, row in db.get("SYSLOG_SERVER", {}).items():
        known("SYSLOG_SERVER", key, row, {"source", "port", "vrf", "filter", "filter_regex", "protocol", "severity"})
        if not _host(key):
            bad(f"SYSLOG_SERVER|{key}", "key is an address or a host name")
        if "port" in row and not _int(row["port"], 0, 65535):
            bad(f"SYSLOG_SERVER|{key}.port", "a port number")
        if row.get("protocol", "udp") not in {"udp", "tcp"}:
            bad(f"SYSLOG_SERVER|{key}.protocol", "tcp|udp")
        if row.get("severity", "info") not in severities:
            bad(f"SYSLOG_SERVER|{key}.severity", f"one of {sorted(severities)}")
        vrf_ok("SYSLOG_SERVER", key, row, {"mgmt", "default"} | set(db.get("VRF", {})))

    for key, row in db.get("SNMP", {}).items():
        field = {"LOCATION": "Location", "CONTACT": "Contact"}.get(key)
        if field is None:
            bad(f"SNMP|{key}", "only LOCATION and CONTACT")
            continue
        known("SNMP", key, row, {field})
        if not 1 <= len(row.get(field, "")) <= 255:
            bad(f"SNMP|{key}.{field}", "1-255 characters")
    for key, row in db.get("SNMP_COMMUNITY", {}).items():
        if not _secret(key, (4, 32), " @,\\'"):
            bad(f"SNMP_COMMUNITY|{key}", "4-32 characters without space, '@', ',', '\\' or a quote")
        if row.get("TYPE") not in {"RO", "RW"}:
            bad(f"SNMP_COMMUNITY|{key}.TYPE", "RO|RW")
    for key, row in db.get("SNMP_USER", {}).items():
        where = f"SNMP_USER|{key}"
        known(
            "SNMP_USER",
            key,
            row,
            {
                "SNMP_USER_TYPE",
                "SNMP_USER_PERMISSION",
                "SNMP_USER_AUTH_TYPE",
                "SNMP_USER_AUTH_PASSWORD",
                "SNMP_USER_ENCRYPTION_TYPE",
                "SNMP_USER_ENCRYPTION_PASSWORD",
            },
        )
        if not 4 <= len(key) <= 32 or any(ch in " :@,\\'" for ch in key):
            bad(where, "name 4-32 characters without space, ':', '@', ',', '\\' or a quote")
        kind = row.get("SNMP_USER_TYPE")
        if kind not in {"noAuthNoPriv", "AuthNoPriv", "Priv"}:
            bad(f"{where}.SNMP_USER_TYPE", "noAuthNoPriv, AuthNoPriv or Priv (mandatory)")
        if row.get("SNMP_USER_PERMISSION") not in {"RO", "RW"}:
            bad(f"{where}.SNMP_USER_PERMISSION", "RO|RW (mandatory)")
        if kind in {"AuthNoPriv", "Priv"} and row.get("SNMP_USER_AUTH_TYPE") not in {"SHA", "MD5", "HMAC-SHA-2"}:
            bad(f"{where}.SNMP_USER_AUTH_TYPE", "SHA, MD5 or HMAC-SHA-2 with authentication")
        if kind == "Priv" and row.get("SNMP_USER_ENCRYPTION_TYPE") not in {"DES", "AES"}:
            bad(f"{where}.SNMP_USER_ENCRYPTION_TYPE", "DES or AES with privacy")
        for field, needed in (("SNMP_USER_AUTH_PASSWORD", kind in {"AuthNoPriv", "Priv"}), ("SNMP_USER_ENCRYPTION_PASSWORD", kind == "Priv")):
            value = row.get(field, "")
            if needed and not _secret(value, (8, 64), " @:"):
                bad(f"{where}.{field}", "8-64 characters without space, '@' or ':'")
    for key in db.get("SNMP_AGENT_ADDRESS_CONFIG", {}):
        parts = key.split("|")
        if len(parts) != 3:
            bad(f"SNMP_AGENT_ADDRESS_CONFIG|{key}", "key is agent_ip|port|vrf_name")
            continue
        address, port, vrf = parts
        try:
            ipaddress.ip_address(address)
        except ValueError:
            bad(f"SNMP_AGENT_ADDRESS_CONFIG|{key}", "agent_ip is not an address")
        if port and not _int(port, 0, 65535):
            bad(f"SNMP_AGENT_ADDRESS_CONFIG|{key}", "port is empty or a port number")
        if vrf not in {"", "mgmt"} and not VRF_NAME.match(vrf):
            bad(f"SNMP_AGENT_ADDRESS_CONFIG|{key}", "vrf_name is empty, mgmt or Vrf...")

    acl_tables = db.get("ACL_TABLE", {})
    for name, row in acl_tables.items():
        known("ACL_TABLE", name, row, {"policy_desc", "type", "stage", "services", "ports"})
        if row.get("type") not in {"L2", "L3", "L3V6", "L3V4V6", "MIRROR", "MIRRORV6", "MIRROR_DSCP", "CTRLPLANE"} | set(db.get("ACL_TABLE_TYPE", {})):
            bad(f"ACL_TABLE|{name}.type", f"{row.get('type')!r} is not an ACL table type (mandatory)")
        if "policy_desc" in row and not 1 <= len(row["policy_desc"]) <= 255:
            bad(f"ACL_TABLE|{name}.policy_desc", "1-255 characters")
        if row.get("stage", "INGRESS") not in {"ingress", "egress", "INGRESS", "EGRESS"}:
            bad(f"ACL_TABLE|{name}.stage", "ingress|egress")
        if row.get("type") == "CTRLPLANE":
            services = row.get("services") if isinstance(row.get("services"), list) else []
            if not services:
                bad(f"ACL_TABLE|{name}.services", "a CTRLPLANE table names its services")
            for service in services:
                if service not in ACL_SERVICES:
                    bad(f"ACL_TABLE|{name}.services", f"{service!r} is not a service caclmgrd knows")
    for key, row in db.get("ACL_RULE", {}).items():
        table, _, rule = key.partition("|")
        where = f"ACL_RULE|{key}"
        if table not in acl_tables or not 1 <= len(rule) <= 255:
            bad(where, "key is <ACL_TABLE name>|<rule name of 1-255 characters>")
            continue
        if not _int(row.get("PRIORITY", ""), 0, 999999):
            bad(f"{where}.PRIORITY", "0-999999 (mandatory)")
        if "PACKET_ACTION" in row and row["PACKET_ACTION"] not in {"DROP", "ACCEPT", "FORWARD", "REDIRECT", "DO_NOT_NAT"}:
            bad(f"{where}.PACKET_ACTION", f"{row['PACKET_ACTION']!r} is not a packet_action")
        if acl_tables[table].get("type") == "CTRLPLANE" and "PACKET_ACTION" not in row:
            bad(f"{where}.PACKET_ACTION", "a CTRLPLANE rule needs one")
        for field, version in (("SRC_IP", 4), ("DST_IP", 4), ("SRC_IPV6", 6), ("DST_IPV6", 6)):
            if field in row:
                try:
                    network = ipaddress.ip_network(row[field])
                except ValueError:
                    bad(f"{where}.{field}", f"{row[field]!r} is not a prefix")
                    continue
                if network.version != version:
                    bad(f"{where}.{field}", f"not an IPv{version} prefix")

    for key, row in db.get("SSH_SERVER", {}).items():
        if key != "POLICIES":
            bad(f"SSH_SERVER|{key}", "only POLICIES")
        known("SSH_SERVER", key, row, {"authentication_retries", "login_timeout", "ports", "inactivity_timeout", "max_sessions"})
        for field, low, high in (("authentication_retries", 1, 100), ("login_timeout", 1, 600), ("inactivity_timeout", 0, 35000), ("max_sessions", 0, 100)):
            if field in row and not _int(row[field], low, high):
                bad(f"SSH_SERVER|{key}.{field}", f"{low}-{high}")
        if "ports" in row and not all(_int(p, 1, 65535) for p in row["ports"].split(",")):
            bad(f"SSH_SERVER|{key}.ports", "comma-separated port numbers")
    for key, row in db.get("BANNER_MESSAGE", {}).items():
        if key != "global":
            bad(f"BANNER_MESSAGE|{key}", "only global")
        known("BANNER_MESSAGE", key, row, {"state", "login", "motd", "logout"})
        if row.get("state", "disabled") not in ADMIN_MODE:
            bad(f"BANNER_MESSAGE|{key}.state", "enabled|disabled")
    for key, row in db.get("PASSW_HARDENING", {}).items():
        if key != "POLICIES":
            bad(f"PASSW_HARDENING|{key}", "only POLICIES")
        known(
            "PASSW_HARDENING",
            key,
            row,
            {
                "state",
                "expiration",
                "expiration_warning",
                "history_cnt",
                "len_min",
                "reject_user_passw_match",
                "lower_class",
                "upper_class",
                "digits_class",
                "special_class",
            },
        )
        if row.get("state", "disabled") not in ADMIN_MODE:
            bad(f"PASSW_HARDENING|{key}.state", "enabled|disabled")
        for field, low, high in (("expiration", -1, 365), ("expiration_warning", -1, 30), ("history_cnt", 1, 100), ("len_min", 1, 32)):
            if field in row and not _int(row[field], low, high):
                bad(f"PASSW_HARDENING|{key}.{field}", f"{low}-{high}")
        for field in ("reject_user_passw_match", "lower_class", "upper_class", "digits_class", "special_class"):
            if field in row and row[field] not in {"true", "false"}:
                bad(f"PASSW_HARDENING|{key}.{field}", "true|false")
