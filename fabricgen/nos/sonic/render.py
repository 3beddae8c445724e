"""SONiC adapter: a DeviceConfig becomes `configs/<device>/config_db.json` and `frr.conf`.

config_db.json is data, so it is built as a dict here (table and field names are SONiC's
vocabulary, values follow its YANG models: strings, speeds in Mb/s, plain-name references).
Routing lives only in frr.conf: DEVICE_METADATA selects `split-unified`, the mode in which SONiC
loads one integrated frr.conf and does not render BGP from config_db (plain `split` expects
per-daemon bgpd.conf/zebra.conf and deletes frr.conf).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

from fabricgen.basics import version
from fabricgen.build.secrets import placeholder
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.compiler.qos import LosslessBuffer
from fabricgen.intent.management import Management
from fabricgen.nos.sonic.capabilities import ecmp_hash
from fabricgen.nos.sonic.catalog import platform_of
from fabricgen.nos.sonic.flavour_forms import STANDARD_NAMES, bgp_in_config_db, bgp_tables, routing_metadata, standard_name
from fabricgen.render.environment import NEIGHBOR_LINES, environment

QOS_MAP = "FABRICGEN"
SCHEDULER_STRICT = "FABRICGEN_STRICT"
SCHEDULER_LOSSLESS = "FABRICGEN_LOSSLESS"
SCHEDULER_STORAGE = "FABRICGEN_STORAGE"
SCHEDULER_DEFAULT = "FABRICGEN_DEFAULT"


def render_sonic(config: DeviceConfig) -> dict[str, str]:
    base = f"configs/{config.hostname}"
    files = {f"{base}/config_db.json": config_db_text(config_db(config)) + "\n"}
    if config.role is not Role.OOB_SWITCH:  # a fabric switch: its routing, BGP or (no neighbour) none
        neighbors = list(map(NEIGHBOR_LINES, config.bgp.neighbors)) if config.bgp else []
        files[f"{base}/frr.conf"] = (
            environment().get_template("frr/frr.conf.j2").render(c=config, neighbors=neighbors, version=version.RELEASE, flavour=_flavour_header(config))
        )
    return files


def config_db(c: DeviceConfig) -> dict[str, Any]:
    metadata = {
        "hostname": c.hostname,
        "type": {Role.SPINE: "SpineRouter", Role.CORE: "SpineRouter", Role.OOB_SWITCH: "MgmtToRRouter"}.get(c.role, "LeafRouter"),
        "docker_routing_config_mode": "split-unified",
        "default_pfcwd_status": "enable" if c.qos and c.qos.pfc_watchdog.enabled else "disable",
    }
    if c.asn is not None:
        metadata["bgp_asn"] = str(c.asn)
    metadata.update(routing_metadata(c))  # a vendor flavour's naming and routing modes (flavour_forms.py)
    # platform and hwsku where the catalog knows them (always with a port map); otherwise they
    # stay the device's own and the build says so (fabricgen.compiler.checks, unmapped SONiC platforms)
    platform = platform_of(c.hardware)
    if platform.platform:
        metadata["platform"] = platform.platform
    if platform.hwsku:
        metadata["hwsku"] = platform.hwsku
    if c.system is not None:
        # sonic-device_metadata.yang timezone: an IANA (tz database) name, 1-255 characters
        metadata["timezone"] = c.system.timezone.iana
    tables: dict[str, dict[str, Any]] = {
        "DEVICE_METADATA": {"localhost": metadata},
        "PORT": {},
        "INTERFACE": {},
    }
    if c.loopback:
        tables["LOOPBACK_INTERFACE"] = {"Loopback0": {}, f"Loopback0|{c.loopback}/32": {}}
    if c.management:
        # eth0 in the management VRF (mgmt), with its default route via the OOB gateway
        tables["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true"}}
        tables["MGMT_PORT"] = {c.management.port: {"admin_status": "up", "alias": c.management.port}}
        tables["MGMT_INTERFACE"] = {f"{c.management.port}|{c.management.address}": {"gwaddr": c.management.gateway}}
    if c.static_routes:
        tables["STATIC_ROUTE"] = {
            route.prefix: {"nexthop": ",".join(r.next_hop for r in c.static_routes if r.prefix == route.prefix)} for route in c.static_routes
        }
    aliases = platform.aliases(c.nos_release)  # the target release's platform files' (sonic.releases)
    for i in c.interfaces:
        tables["PORT"][i.name] = {
            "admin_status": "up",
            "alias": standard_name(i.cage, i.sub) if STANDARD_NAMES in c.features else aliases.name(c.hardware, i.cage, i.sub, i.speed_gbps),
            "description": i.description,
            "fec": "rs" if i.speed_gbps >= 100 else "none",  # RS-FEC on every 100G-and-up PAM4/NRZ port
            "index": str(i.cage),
            "lanes": ",".join(str(lane) for lane in c.hardware.port_lanes(i.cage, i.sub, i.speed_gbps)),
            "mtu": str(i.mtu),
            "speed": str(i.speed_gbps * 1000),
        }
        if i.address:
            tables["INTERFACE"][i.name] = {}
            tables["INTERFACE"][f"{i.name}|{i.address}"] = {}
    if c.breakouts:
        # the platform must split these cages before the sub-ports in PORT exist
        tables["BREAKOUT_CFG"] = {b.port_name: {"brkout_mode": platform.breakout_mode(b.fanout, b.speed_gbps)} for b in c.breakouts}
    if c.hardware.platform_mapped:
        # A cage used whole on a platform whose cages also break out: its hwsku may default to a
        # breakout (Arista-7060X6-64PE-O128S2: 2x400G on every cage, hwsku.json), so the mode is
        # written, by the name platform.json gives it (1x800G[400G] on the 7060X6).
        native = {
            i.name: {"brkout_mode": platform.breakout_mode(1, i.speed_gbps)}
            for i in c.interfaces
            if not i.sub and (group := c.hardware.group_of(i.cage)) is not None and group.breakouts and i.speed_gbps == group.speed
        }
        if native:
            tables.setdefault("BREAKOUT_CFG", {}).update(native)
    if c.vlans:
        tables["VLAN"], tables["VLAN_MEMBER"], tables["VLAN_INTERFACE"] = {}, {}, {}
        for vlan in c.vlans:
            name = f"Vlan{vlan.id}"
            tables["VLAN"][name] = {"vlanid": str(vlan.id), "mtu": str(c.mtu), "admin_status": "up"}
            for member in vlan.members:
                tables["VLAN_MEMBER"][f"{name}|{member}"] = {"tagging_mode": "untagged"}
            tables["VLAN_INTERFACE"][name] = {}
            tables["VLAN_INTERFACE"][f"{name}|{vlan.gateway}"] = {}
    if c.evpn and c.evpn.vtep:
        _evpn_tables(c, tables)
    if c.qos:
        tables.update(_qos_tables(c))
    if c.load_balancing is not None:
        tables["SWITCH_HASH"] = {"GLOBAL": {"ecmp_hash": ecmp_hash(c.load_balancing.hash_fields)}}
    if c.system is not None:
        tables.update(_management_tables(c, c.system))
    if bgp_in_config_db(c):
        tables.update(bgp_tables(c))
    return {name: tables[name] for name in sorted(tables)}


def _flavour_header(c: DeviceConfig) -> str | None:
    """For a vendor flavour, frr.conf's header line naming it and saying what the file is for
    there; None for community SONiC (its frr.conf is what the switch loads)."""
    if not c.nos_flavour or c.nos_flavour == c.nos:
        return None
    if bgp_in_config_db(c):
        return (
            f"{c.nos_flavour} {c.nos_release}: the switch takes BGP from config_db.json (BGP_GLOBALS, BGP_NEIGHBOR...);"
            " this file is the same routing model for fabricgen lab, not loaded on the switch"
        )
    return f"{c.nos_flavour} {c.nos_release}"


def config_db_text(document: dict[str, Any]) -> str:
    """json.dumps(document, indent=4), byte for byte. config_db holds only strings, lists and
    dicts with string keys; joined directly they take a fraction of the json module's time, whose
    indented output goes through its pure-Python encoder (a generator per value: most of a SONiC
    build's rendering). Anything else (a float, a non-string key) goes to json.dumps whole."""
    try:
        return _json_value(document, "\n")
    except TypeError:
        return json.dumps(document, indent=4)


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}


def _json_value(value: Any, newline: str) -> str:
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    inner = newline + "    "
    if isinstance(value, dict):
        if not value:
            return "{}"
        # encode_basestring_ascii raises TypeError on a key that is not a string
        items = [encode_basestring_ascii(k) + ": " + (encode_basestring_ascii(v) if type(v) is str else _json_value(v, inner)) for k, v in value.items()]
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [encode_basestring_ascii(v) if type(v) is str else _json_value(v, inner) for v in value]
        return "[" + inner + ("," + inner).join(items) + newline + "]"
    if value is True or value is False or value is None:
        return _JSON_CONSTANTS[value]
    if type(value) is int:
        return str(value)
    raise TypeError(f"{type(value).__name__} is left to json.dumps")


VTEP = "vtep"


def _evpn_tables(c: DeviceConfig, tables: dict[str, dict[str, Any]]) -> None:
    """A leaf as VTEP: segments as VLANs mapped to L2 VNIs with a static anycast gateway (SAG)
    in their tenant VRF; each VRF's L3 VNI on a VLAN of its own, mapped too (symmetric IRB).
    SAG (sonic-static-anycast-gateway.yang, VLAN_INTERFACE static_anycast_gateway) exists on
    master only; a release without it has no anycast gateway form and is refused before rendering
    (releases.yaml evpn-anycast-gateway, checks.features_in_release), so reaching here without the
    feature is a bug, not a form to guess."""
    e = c.evpn
    assert e is not None and e.vtep_address is not None
    assert "evpn-anycast-gateway" in c.features, f"{c.hostname}: SONiC {c.nos_release} has no anycast gateway (SAG)"
    tables["LOOPBACK_INTERFACE"].update({"Loopback1": {}, f"Loopback1|{e.vtep_address}/32": {}})
    for name in ("VLAN", "VLAN_MEMBER", "VLAN_INTERFACE"):
        tables.setdefault(name, {})
    tables["VRF"] = {v.name: {"vni": str(v.l3_vni)} for v in e.vrfs}
    tables["VXLAN_TUNNEL"] = {VTEP: {"src_ip": e.vtep_address}}
    tables["VXLAN_EVPN_NVO"] = {"nvo": {"source_vtep": VTEP}}
    tables["VXLAN_TUNNEL_MAP"] = {}
    tables["SAG"] = {"GLOBAL": {"gateway_mac": e.anycast_gateway_mac}}
    for s in e.segments:
        vlan = f"Vlan{s.vlan}"
        tables["VLAN"][vlan] = {"vlanid": str(s.vlan), "mtu": str(c.mtu), "admin_status": "up"}
        for member in s.members:
            tables["VLAN_MEMBER"][f"{vlan}|{member}"] = {"tagging_mode": "untagged"}
        tables["VLAN_INTERFACE"][vlan] = {"vrf_name": s.vrf, "static_anycast_gateway": "true"}
        tables["VLAN_INTERFACE"][f"{vlan}|{s.gateway}"] = {}
        tables["VXLAN_TUNNEL_MAP"][f"{VTEP}|map_{s.vni}_{vlan}"] = {"vlan": vlan, "vni": str(s.vni)}
    for v in e.vrfs:
        vlan = f"Vlan{v.l3_vlan}"
        tables["VLAN"][vlan] = {"vlanid": str(v.l3_vlan), "mtu": str(c.mtu), "admin_status": "up"}
        tables["VLAN_INTERFACE"][vlan] = {"vrf_name": v.name}
        tables["VXLAN_TUNNEL_MAP"][f"{VTEP}|map_{v.l3_vni}_{vlan}"] = {"vlan": vlan, "vni": str(v.l3_vni)}


def _qos_tables(c: DeviceConfig) -> dict[str, dict[str, Any]]:
    qos = c.qos
    assert qos is not None
    lossless_priorities, cnp = qos.lossless_priorities, qos.cnp_priority
    dscp_to_tc = {str(d): "0" for d in range(64)}
    dscp_to_tc.update({str(dscp): str(priority) for dscp, priority in qos.dscp_to_priority.items()})
    identity = {str(n): str(n) for n in range(8)}
    # each lossless traffic class gets the priority group of its own number, the rest share PG 0
    tc_to_pg = {str(n): str(n) if n in lossless_priorities else "0" for n in range(8)}
    wred_name = {speed: f"ROCE_LOSSLESS_{speed}G" for speed in qos.ecn}
    wred = {}
    for speed, ecn in sorted(qos.ecn.items()):
        profile: dict[str, str] = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            profile[f"wred_{colour}_enable"] = "true"
            profile[f"{colour}_min_threshold"] = str(ecn.min_kbytes * 1024)
            profile[f"{colour}_max_threshold"] = str(ecn.max_kbytes * 1024)
            profile[f"{colour}_drop_probability"] = str(ecn.drop_probability)
        wred[wred_name[speed]] = profile
    lossy_queues = _ranges(q for q in range(8) if q not in lossless_priorities)
    watchdog = qos.pfc_watchdog
    pfc = ",".join(str(p) for p in lossless_priorities)
    schedulers = {
        SCHEDULER_STRICT: {"type": "STRICT"},
        SCHEDULER_LOSSLESS: {"type": "DWRR", "weight": str(qos.lossless_bandwidth_percent)},
        SCHEDULER_DEFAULT: {"type": "DWRR", "weight": str(qos.default_bandwidth_percent)},
    }
    if qos.storage_priority is not None:
        schedulers[SCHEDULER_STORAGE] = {"type": "DWRR", "weight": str(qos.storage_bandwidth_percent)}

    tables: dict[str, dict[str, Any]] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: dscp_to_tc},
        "TC_TO_QUEUE_MAP": {QOS_MAP: identity},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: tc_to_pg},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: identity},
        "WRED_PROFILE": wred,
        "SCHEDULER": schedulers,
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
            "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
        },
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "3"},
        },
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": QOS_MAP}},
        "QUEUE": {},
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
        "CABLE_LENGTH": {"AZURE": {}},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": str(watchdog.poll_interval_ms)}} if watchdog.enabled else {},
    }
    for i in c.interfaces:
        buffer = qos.buffers[i.name]
        profile_name = _lossless_profile(tables["BUFFER_PROFILE"], buffer, qos.pfc_trigger_kbytes[i.speed_gbps])
        tables["PORT_QOS_MAP"][i.name] = {
            "dscp_to_tc_map": QOS_MAP,
            "tc_to_queue_map": QOS_MAP,
            "tc_to_pg_map": QOS_MAP,
            "pfc_to_queue_map": QOS_MAP,
            "pfc_enable": pfc,
        }
        if watchdog.enabled:
            tables["PORT_QOS_MAP"][i.name]["pfcwd_sw_enable"] = pfc
        elif "pfcwd-sw-enable-empty" in c.features:
            # watchdog off on every queue; up to 202411 the YANG pattern refuses "" (releases.yaml), and
            # leaving the field out there is the same: no queue watched
            tables["PORT_QOS_MAP"][i.name]["pfcwd_sw_enable"] = ""
        tables["QUEUE"][f"{i.name}|{qos.lossless_priority}"] = {"scheduler": SCHEDULER_LOSSLESS, "wred_profile": wred_name[i.speed_gbps]}
        if qos.storage_priority is not None:
            # NVMe over RoCE runs DCQCN too: ECN-marked at the same per-speed thresholds
            tables["QUEUE"][f"{i.name}|{qos.storage_priority}"] = {"scheduler": SCHEDULER_STORAGE, "wred_profile": wred_name[i.speed_gbps]}
        tables["QUEUE"][f"{i.name}|{cnp}"] = {"scheduler": SCHEDULER_STRICT}
        tables["QUEUE"][f"{i.name}|0"] = {"scheduler": SCHEDULER_DEFAULT}
        tables["BUFFER_PG"][f"{i.name}|0"] = {"profile": "ingress_lossy_profile"}
        for priority in lossless_priorities:
            tables["BUFFER_PG"][f"{i.name}|{priority}"] = {"profile": profile_name}
            tables["BUFFER_QUEUE"][f"{i.name}|{priority}"] = {"profile": "egress_lossless_profile"}
        for span in lossy_queues:
            tables["BUFFER_QUEUE"][f"{i.name}|{span}"] = {"profile": "egress_lossy_profile"}
        # the bucketed length, so the table agrees with the profile the port uses
        tables["CABLE_LENGTH"]["AZURE"][i.name] = f"{buffer.cable_length_m}m"
        if watchdog.enabled:
            tables["PFC_WD"][i.name] = {
                "action": watchdog.action,
                "detection_time": str(watchdog.detection_ms),
                "restoration_time": str(watchdog.restoration_ms),
            }
    return tables


def _lossless_profile(profiles: dict[str, Any], buffer: LosslessBuffer, trigger_kbytes: int) -> str:
    """Add (once) and name the ingress profile of lossless PGs at this speed and cable bucket.

    The PFC trigger is a fixed byte count, so the profile uses `static_th` (SAI's static shared
    threshold, in bytes) rather than `dynamic_th` (an alpha: a share of whatever the pool has
    free, so the pause point would move with the load on other ports and could fall below the ECN
    maximum). A PG pauses its peer when it has filled its reserved part and its shared allowance;
    the reserved part of `size` that is not headroom is `xon` (size = xon + xoff), so the shared
    allowance is the trigger minus that. `xoff` is the headroom that absorbs what is still in
    flight after the pause. The pool stays in dynamic mode for the other profiles: a profile's own
    threshold mode overrides its pool's (SAI), as SONiC's Tomahawk 5 buffer templates do with
    static_th. SONiC names the profile pg_lossless_<speed Mb/s>_<cable>_profile."""
    name = f"pg_lossless_{buffer.speed_gbps * 1000}_{buffer.cable_length_m}m_profile"
    profiles.setdefault(
        name,
        {
            "pool": "ingress_lossless_pool",
            "xon": str(buffer.xon_bytes),
            "xoff": str(buffer.xoff_bytes),
            "size": str(buffer.size_bytes),
            # never 0: SAI reads a static threshold of 0 as "no limit" (the checks keep it positive)
            "static_th": str(max(1, trigger_kbytes * 1024 - (buffer.size_bytes - buffer.xoff_bytes))),
        },
    )
    return name


def _ranges(numbers) -> list[str]:
    """[0, 1, 2, 4, 5, 6, 7] -> ['0-2', '4-7'] (SONiC's queue range keys)."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return [f"{a}-{b}" if a != b else str(a) for a, b in spans]


# intent (NX-OS `logging server ... <level>` names) -> sonic-syslog.yang rsyslog-severity
SYSLOG_SEVERITY = {
    "emergencies": "crit",
    "alerts": "crit",
    "critical": "crit",
    "errors": "error",
    "warnings": "warn",
    "notifications": "notice",
    "informational": "info",
    "debugging": "debug",
}
# intent -> sonic-snmp.yang SNMP_USER_AUTH_TYPE (SHA, MD5, HMAC-SHA-2) and _ENCRYPTION_TYPE (DES, AES)
SNMP_AUTH = {"sha": "SHA", "sha-256": "HMAC-SHA-2"}
SNMP_PRIVACY = {"aes-128": "AES"}
# caclmgrd (sonic-host-services scripts/caclmgrd, ACL_SERVICES) knows these CTRLPLANE services
CONTROL_PLANE_SERVICES = ("SSH", "SNMP", "NTP")
MGMT_VRF = "mgmt"


def _management_tables(c: DeviceConfig, m: Management) -> dict[str, dict[str, Any]]:
    """The day-0 management plane as config_db tables (each checked against its
    sonic-buildimage YANG model, named beside it). Secrets are placeholders; `push` fills them.
    Servers are reached through the management VRF when eth0 is in it."""
    vrf = MGMT_VRF if c.management else "default"
    tables: dict[str, dict[str, Any]] = {}
    # sonic-system-aaa.yang AAA_LIST: login is an ordered list; failthrough on, so a server that
    # rejects or does not answer hands over to the next method (local), the fallback for the users
    # the NOS keeps locally. AAA needs TACPLUS|global passkey before login may name tacacs+ (its `must`).
    methods = [name for name, group in (("tacacs+", m.tacacs), ("radius", m.radius)) if group is not None]
    if methods:
        login = ",".join(methods + ["local"])
        tables["AAA"] = {
            "authentication": {"login": login, "failthrough": "True", "fallback": "True"},
            "authorization": {"login": login},
        }
        if m.accounting:
            tables["AAA"]["accounting"] = {"login": ",".join(methods + ["local"])}
    # sonic-system-tacacs.yang and sonic-system-radius.yang (202305 and later): the same shape,
    # passkey 1-65 characters without space, '#' or ','; priority 1-64, the first server highest
    for table, group, port_field, port in (("TACPLUS", m.tacacs, "tcp_port", "49"), ("RADIUS", m.radius, "auth_port", "1812")):
        if group is None:
            continue
        key, timeout = placeholder(group.key), str(group.timeout_s)
        tables[table] = {"global": {"auth_type": "pap", "timeout": timeout, "passkey": key}}
        tables[f"{table}_SERVER"] = {
            str(server): {"priority": str(len(group.servers) - n), port_field: port, "timeout": timeout, "passkey": key, "vrf": vrf}
            for n, server in enumerate(group.servers)
        }
    if m.ntp is not None:
        # sonic-ntp.yang: src_intf is a leaf-list; vrf mgmt needs MGMT_VRF_CONFIG mgmtVrfEnabled
        # true (its `must`); server_role disabled: the switch is an NTP client, not a server for
        # others. NTP_KEY (and a server's key, a leafref to it) only where the release's model
        # loads it (DeviceConfig.ntp_key, 202511): before, the servers are written without
        # authentication and the build notes it (unrendered)
        ntp_key = c.ntp_key
        ntp: dict[str, Any] = {"admin_state": "enabled", "server_role": "disabled", "dhcp": "disabled", "vrf": vrf}
        if c.management:
            ntp["src_intf"] = [c.management.port]
        ntp["authentication"] = "enabled" if ntp_key else "disabled"
        tables["NTP"] = {"global": ntp}
        server: dict[str, str] = {"association_type": "server", "iburst": "on", "version": "4"}
        if ntp_key:
            server.update({"key": str(m.ntp.key_id), "trusted": "yes"})
            tables["NTP_KEY"] = {str(m.ntp.key_id): {"type": "md5", "value": placeholder(ntp_key), "trusted": "yes"}}
        tables["NTP_SERVER"] = {str(host): dict(server) for host in m.ntp.servers}
    if m.syslog is not None:
        # sonic-syslog.yang SYSLOG_SERVER: vrf default|mgmt|a VRF, severity an rsyslog-severity
        tables["SYSLOG_SERVER"] = {
            str(host): {"vrf": vrf, "severity": SYSLOG_SEVERITY[m.syslog.severity], "protocol": "udp", "port": "514"} for host in m.syslog.servers
        }
    if m.snmp is not None:
        tables.update(_snmp_tables(c, m, vrf))
    if m.access is not None:
        tables.update(_control_plane_acls(m, "SNMP" if m.snmp is not None else None))
        # sonic-ssh-server.yang SSH_SERVER|POLICIES (202311 and later); inactivity_timeout from 202411
        # (releases.yaml ssh-inactivity-timeout): left out before, and the build notes it (unrendered)
        policies = {"authentication_retries": str(m.access.login_attempts), "login_timeout": "120"}
        if "ssh-inactivity-timeout" in c.features:
            policies["inactivity_timeout"] = str(m.access.exec_timeout_min)
        tables["SSH_SERVER"] = {"POLICIES": {**policies, "ports": "22"}}
    if m.banner:
        # sonic-banner.yang BANNER_MESSAGE|global (202405 and later): state enabled shows login/motd
        text = "\n".join(m.banner)
        tables["BANNER_MESSAGE"] = {"global": {"state": "enabled", "login": text, "motd": text, "logout": ""}}
    policy = m.password_policy
    # sonic-passwh.yang PASSW_HARDENING|POLICIES: len_min 1-32; the character classes are booleans
    strong = "true" if policy.strength_check else "false"
    tables["PASSW_HARDENING"] = {
        "POLICIES": {
            "state": "enabled",
            "len_min": str(policy.min_length),  # at most PASSWORD_LEN_MAX: security_gaps
            "reject_user_passw_match": "true",
            "lower_class": strong,
            "upper_class": strong,
            "digits_class": strong,
            "special_class": "false",
        }
    }
    return tables


def _snmp_tables(c: DeviceConfig, m: Management, vrf: str) -> dict[str, dict[str, Any]]:
    """sonic-snmp.yang: SNMP|LOCATION/CONTACT, SNMP_USER (authPriv is SNMP_USER_TYPE Priv;
    passwords at least 8 characters), SNMP_COMMUNITY only when the intent asks for one, and the
    agent bound to eth0's address in the management VRF (SNMP_AGENT_ADDRESS_CONFIG, key
    agent_ip|port|vrf_name; docker-snmp snmpd.conf.j2 turns it into `agentAddress udp:[ip]@mgmt`)."""
    snmp = m.snmp
    assert snmp is not None
    tables: dict[str, dict[str, Any]] = {}
    location = {}
    if snmp.location:
        location["LOCATION"] = {"Location": snmp.location}
    if snmp.contact:
        location["CONTACT"] = {"Contact": snmp.contact}
    if location:
        tables["SNMP"] = location
    tables["SNMP_USER"] = {
        user.name: {
            "SNMP_USER_TYPE": "Priv",
            "SNMP_USER_PERMISSION": "RO",
            "SNMP_USER_AUTH_TYPE": SNMP_AUTH[user.auth],
            "SNMP_USER_AUTH_PASSWORD": placeholder(user.auth_key),
            "SNMP_USER_ENCRYPTION_TYPE": SNMP_PRIVACY[user.privacy],
            "SNMP_USER_ENCRYPTION_PASSWORD": placeholder(user.privacy_key),
        }
        for user in snmp.users
    }
    if snmp.communities:
        tables["SNMP_COMMUNITY"] = {placeholder(name): {"TYPE": "RO"} for name in snmp.communities}
    if c.management:
        address = c.management.address.split("/")[0]
        tables["SNMP_AGENT_ADDRESS_CONFIG"] = {f"{address}||{vrf}": {}}
    return tables


def _control_plane_acls(m: Management, snmp: str | None) -> dict[str, dict[str, Any]]:
    """CTRLPLANE ACL tables (sonic-acl.yang; caclmgrd turns them into iptables INPUT rules): per
    service, one ACCEPT rule per management network. caclmgrd ends INPUT with a DROP once any
    control-plane rule exists (scripts/caclmgrd, "drop all other incoming packets"), keeping its
    own accepts for BGP (tcp 179), established connections, ICMP and DHCP. Management networks
    are IPv4 (fabricgen.basics.units.Network), so every table is an IPv4 one (caclmgrd takes a table's
    IP version from its rules)."""
    assert m.access is not None
    acl_table: dict[str, Any] = {}
    acl_rule: dict[str, Any] = {}
    for service in (s for s in CONTROL_PLANE_SERVICES if s != "SNMP" or snmp):
        name = f"FABRICGEN_{service}"
        acl_table[name] = {"type": "CTRLPLANE", "policy_desc": f"{service} from the management networks", "services": [service], "stage": "ingress"}
        for n, network in enumerate(m.access.management_networks, start=1):
            acl_rule[f"{name}|RULE_{n}"] = {"PRIORITY": str(10000 - n), "PACKET_ACTION": "ACCEPT", "SRC_IP": str(network)}
    return {"ACL_TABLE": acl_table, "ACL_RULE": acl_rule}
