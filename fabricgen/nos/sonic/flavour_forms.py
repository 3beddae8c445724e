"""The config_db forms a vendor SONiC flavour documents where they differ from community SONiC:
its interface naming and BGP kept in config_db. Each is picked by a feature of the flavour's
matrix (`standard-interface-names`, `routing-in-config-db`: catalog/data/broadcom-sonic.yaml),
never by the flavour's name.

Interface naming (sonic-net/SONiC doc/mgmt/SONiC_AliasFeature_HLD.md, rev 0.2): DEVICE_METADATA
`intf_naming_mode: standard` makes the CLI, REST and gNMI take Eth<slot>/<port>[/<breakout port>]
names counted from 1; config_db keys keep the native EthernetN names ("DB references to ports are
unchanged"), so PORT keys stay as community SONiC's and the standard name is the port's alias.

BGP in config_db (sonic-net/SONiC doc/mgmt/SONiC_Design_Doc_Unified_FRR_Mgmt_Interface.md, rev
0.9): with DEVICE_METADATA `frr_mgmt_framework_config: true` frrcfgd renders FRR from BGP_GLOBALS,
BGP_PEER_GROUP, BGP_NEIGHBOR, their _AF tables, ROUTE_MAP, PREFIX_SET/PREFIX and
ROUTE_REDISTRIBUTE; `docker_routing_config_mode: unified` generates one frr.conf from config_db at
the routing container's start (sonic-buildimage dockers/docker-fpm-frr/docker_init.sh, 202411).
Field names and types follow sonic-buildimage's YANG models on branch 202411 (head 566f5575d5:
sonic-bgp-global, sonic-bgp-peergroup, sonic-bgp-neighbor, sonic-bgp-common, sonic-route-map,
sonic-routing-policy-sets, sonic-route-common) except where the program that reads them says
otherwise, as Broadcom wrote both and only the reader configures FRR: frrcfgd and its unified-mode
templates (src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py, templates/bgpd/bgpd.conf.db.*.j2,
same branch) read `admin_status` as "true"/"false" (the YANG's typedef says up/down: "up" would
leave a peer group's address family inactive), and a PREFIX key as name|ip_prefix|masklength_range
(the YANG adds a sequence number frrcfgd cannot unpack; FRR numbers the entries in order).
"""

from __future__ import annotations

from typing import Any

from fabricgen.compiler.device_config import BgpConfig, DeviceConfig, PrefixRule

STANDARD_NAMES = "standard-interface-names"
ROUTING_IN_CONFIG_DB = "routing-in-config-db"
VRF = "default"  # sonic-bgp-global.yang BGP_GLOBALS vrf_name: "default" or a VRF's name
IPV4 = "ipv4_unicast"  # the afi_safi key frrcfgd reads (Unified FRR HLD, BGP_GLOBALS_AF)
EVPN = "l2vpn_evpn"


def standard_name(cage: int, sub: int) -> str:
    """Eth1/<cage>, or Eth1/<cage>/<sub> for a breakout port (slot 1 on a fixed switch)."""
    return f"Eth1/{cage}/{sub}" if sub else f"Eth1/{cage}"


def bgp_in_config_db(c: DeviceConfig) -> bool:
    """Whether this switch's BGP goes to config_db: its flavour keeps it there, and it is no EVPN
    VTEP (frrcfgd's EVPN VNI tables are not written: a VTEP keeps community SONiC's frr.conf)."""
    return ROUTING_IN_CONFIG_DB in c.features and c.bgp is not None and not (c.evpn is not None and c.evpn.vtep)


def routing_metadata(c: DeviceConfig) -> dict[str, str]:
    """DEVICE_METADATA fields of the flavour's forms (empty for community SONiC)."""
    fields = {}
    if STANDARD_NAMES in c.features:
        fields["intf_naming_mode"] = "standard"
    if bgp_in_config_db(c):
        fields["docker_routing_config_mode"] = "unified"
        fields["frr_mgmt_framework_config"] = "true"
    return fields


def bgp_tables(c: DeviceConfig) -> dict[str, dict[str, Any]]:
    """The switch's BGP as config_db tables, for a flavour that keeps routing there. The policy is
    the frr.conf's (frr/frr.conf.j2): every group's sessions pass FABRICGEN-IN and FABRICGEN-OUT, so
    RFC 8212 holds without a global switch for it (BGP_GLOBALS has no ebgp-requires-policy field).
    Left to FRR's defaults, as the tables have no field for them: the BFD profile's timers (a peer
    group's `bfd` is on or off). Only for a switch `bgp_in_config_db` takes."""
    bgp = c.bgp
    assert bgp is not None and bgp_in_config_db(c)
    tables: dict[str, dict[str, Any]] = {
        "BGP_GLOBALS": {VRF: {"local_asn": str(bgp.asn), "router_id": bgp.router_id, "log_nbr_state_changes": "true", "load_balance_mp_relax": "true"}},
        # max_ebgp_paths: uint16 1..256
        "BGP_GLOBALS_AF": {f"{VRF}|{IPV4}": {"max_ebgp_paths": str(min(bgp.maximum_paths, 256))}},
        "BGP_PEER_GROUP": {},
        "BGP_PEER_GROUP_AF": {},
        "BGP_NEIGHBOR": {},
    }
    tables.update(_policy_tables(bgp, evpn=c.evpn is not None))
    if bgp.networks:
        tables["BGP_GLOBALS_AF_NETWORK"] = {f"{VRF}|{IPV4}|{prefix}": {} for prefix in bgp.networks}
    if bgp.aggregates:
        tables["BGP_GLOBALS_AF_AGGREGATE_ADDR"] = {f"{VRF}|{IPV4}|{prefix}": {"summary_only": "true"} for prefix in bgp.aggregates}
    if bgp.redistribute:
        # sonic-route-common.yang ROUTE_REDISTRIBUTE key vrf_name|src_protocol|dst_protocol|addr_family
        tables["ROUTE_REDISTRIBUTE"] = {f"{VRF}|connected|bgp|ipv4": {"route_map": ["FABRICGEN-CONNECTED"]}}
    if c.evpn:
        tables["BGP_GLOBALS_AF"][f"{VRF}|{EVPN}"] = {}
    for group in bgp.groups:
        # frrcfgd: "false" is `neighbor shutdown`. No auth_password: it holds the key as the switch
        # encrypts it (`password ... encrypted`); a session key is refused before (feature tcp-md5)
        assert not group.password, f"{c.hostname}: no session key form in config_db (tcp-md5)"
        row: dict[str, str] = {"admin_status": "true"}
        if bgp.gtsm:
            row["ttl_security_hops"] = "1"
        if bgp.bfd:
            row["bfd"] = "true"
        tables["BGP_PEER_GROUP"][f"{VRF}|{group.name}"] = row
        tables["BGP_PEER_GROUP_AF"][f"{VRF}|{group.name}|{IPV4}"] = _family(bgp, group.maximum_prefix, "FABRICGEN-IN", "FABRICGEN-OUT")
        if c.evpn:
            evpn = _family(bgp, None, "FABRICGEN-EVPN-IN", "FABRICGEN-EVPN-OUT")
            evpn["unchanged_nexthop"] = "true"  # a spine passes EVPN routes on with the VTEP's next hop
            tables["BGP_PEER_GROUP_AF"][f"{VRF}|{group.name}|{EVPN}"] = evpn
    for address, group_name, remote_asn, description in ((n.address, n.group, n.remote_asn, n.description) for n in bgp.neighbors):
        # sonic-bgp-common.yang: name is free text, asn uint32 1..4294967295
        tables["BGP_NEIGHBOR"][f"{VRF}|{address}"] = {"asn": str(remote_asn), "peer_group_name": group_name, "name": description, "admin_status": "true"}
    return tables


def _family(bgp: BgpConfig, maximum_prefix: int | None, route_map_in: str, route_map_out: str) -> dict[str, Any]:
    """A peer group's address family: activated, its policy, its prefix limit and allowas-in."""
    row: dict[str, Any] = {"admin_status": "true", "route_map_in": [route_map_in], "route_map_out": [route_map_out]}
    if maximum_prefix is not None:
        row["max_prefix_limit"] = str(maximum_prefix)
        if bgp.maximum_prefix_restart_min:
            row["max_prefix_restart_interval"] = str(bgp.maximum_prefix_restart_min)
        else:
            row["max_prefix_warning_only"] = "true"
    if bgp.allowas_in:
        row.update({"allow_as_in": "true", "allow_as_count": str(bgp.allowas_in)})
    return row


def _policy_tables(bgp: BgpConfig, evpn: bool) -> dict[str, dict[str, Any]]:
    """frr.conf's prefix lists and route maps as PREFIX_SET/PREFIX and ROUTE_MAP_SET/ROUTE_MAP."""
    sets = {"FABRICGEN-ACCEPT": bgp.policy.accept, "FABRICGEN-ANNOUNCE": bgp.policy.announce}
    if bgp.redistribute:
        sets["FABRICGEN-CONNECTED"] = tuple(PrefixRule(prefix, 32) for prefix in bgp.redistribute)
    maps = {"FABRICGEN-IN": "FABRICGEN-ACCEPT", "FABRICGEN-OUT": "FABRICGEN-ANNOUNCE"}
    if bgp.redistribute:
        maps["FABRICGEN-CONNECTED"] = "FABRICGEN-CONNECTED"
    prefixes = {}
    for name, rules in sets.items():
        for rule in rules:
            # key name|ip_prefix|masklength_range (frrcfgd): "exact", or "<len>..<le>"
            length = rule.prefix.split("/")[1]
            prefixes[f"{name}|{rule.prefix}|{f'{length}..{rule.le}' if rule.le else 'exact'}"] = {"action": "permit"}
    route_maps: dict[str, Any] = {f"{name}|10": {"route_operation": "permit", "match_prefix_set": match} for name, match in maps.items()}
    if evpn:
        # EVPN routes carry their own route targets: an explicit permit-all policy (frr.conf.j2 likewise)
        route_maps.update({"FABRICGEN-EVPN-IN|10": {"route_operation": "permit"}, "FABRICGEN-EVPN-OUT|10": {"route_operation": "permit"}})
    return {
        "PREFIX_SET": {name: {"mode": "IPv4"} for name in sets},
        "PREFIX": prefixes,
        "ROUTE_MAP_SET": {name.split("|")[0]: {} for name in route_maps},
        "ROUTE_MAP": route_maps,
    }
