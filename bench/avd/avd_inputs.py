"""A fabricgen build of a 2-tier VXLAN EVPN fabric, as the inputs of Arista AVD's eos_designs that
make AVD generate the same fabric: what bench/avd/compare.py hands to pyavd. Imports no pyavd.

`avd_inputs(build)` takes a `fabricgen.compile` result and returns, per switch hostname, the
inputs of that device (one dict shared by every device, plus its node `type`), as pyavd's
`validate_inputs` takes them. It reads the build's own files for the fabric:

- topology.json: every switch, its role, ASN and loopback;
- ip-plan.csv: each fabric link's /31 (both ends) and each leaf's VTEP loopback;
- cabling.csv: which leaf port meets which spine port, and which server NIC which leaf port;

and the NOS-neutral device configs (`Build.configs`) for what no file carries: the ports' MTU, the
BFD timers, BGP's maximum paths and the EVPN numbers (VLAN, VNI, VRF, route-targets, anycast
gateway and its MAC). A fabric AVD's inputs cannot say the same way is refused (`NotExpressible`).

AVD facts this relies on, from pyavd 6.4.0's eos_designs input schema (the source of the
input-variable tables on avd.arista.com) and, where named, its code:

- Node types `spine` and `l3leaf` (the default `node_type_keys`), chosen per device by `type`.
  `design.type` was removed in AVD 6.0 (porting guide 6.x.x, "Removal of design.type"), so the
  l3ls-evpn design follows from these node types. Leaves are listed as single `nodes`: an
  l3leaf `node_group` of two nodes is an MLAG pair.
- Per node: `id` ("unique identifier used for IP addressing"), `bgp_as`, `loopback_ipv4_address`,
  `vtep_loopback_ipv4_address`, `uplink_interfaces`, `uplink_switches` (one entry per uplink
  interface: their lengths must match), `uplink_switch_interfaces`, `uplink_ipv4_pool`,
  `filter.tags`; on leaves `virtual_router_mac_address` (the anycast gateway MAC).
- A leaf's uplink i gets the /31 at offset `(id - 1) * max_uplink_switches * max_parallel_uplinks
  + i` of `uplink_ipv4_pool`: the leaf the second address, the spine the first
  (pyavd/api/ip_addressing: `p2p_uplinks_ip`, `p2p_uplinks_peer_ip`,
  `_get_p2p_ipv4_pool_and_offset`). `max_uplink_switches` defaults to the length of
  `uplink_switches`, `max_parallel_uplinks` to 1. `uplink_subnets` applies this rule.
- `p2p_uplinks_mtu`; `bgp_peer_groups.ipv4_underlay_peers.bfd`; `bgp_maximum_paths`, `bgp_ecmp`;
  `underlay_routing_protocol` and `overlay_routing_protocol` `ebgp`; the node types'
  `structured_config` (custom EOS structured config) for `router_bfd`'s timers.
- Network services under the default key `tenants`: per VRF `vrf_vni` and `rt_override` (a full
  RT string overrides the whole RT); per SVI `id` (the VLAN), `name`, `enabled`,
  `ip_address_virtual` (the anycast gateway), `mtu`, `tags` (matched against a node's
  `filter.tags`), `vni_override` and `rt_override`; per tenant `mac_vrf_vni_base` (VNI = base +
  VLAN, required with VXLAN).
- Servers under the default connected-endpoints key `servers`: per adapter `endpoint_ports`,
  `switches`, `switch_ports`, `mode: access`, `vlans` (the access VLAN), `mtu`,
  `spanning_tree_portfast: edge`.

What the two tools still configure differently (so their line counts differ) is listed in
docs/development/benchmarks.md.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from typing import Any

from fabricgen.basics.errors import FabricgenError
from fabricgen.build.build_dir import AddressRow, CableRow, Topology, read_rows
from fabricgen.compiler.pipeline import Build

AvdInputs = dict[str, Any]  # one device's inputs, as pyavd.validate_inputs takes them


class NotExpressible(ValueError):
    """The build is not a fabric this derivation can give AVD: says which part and why."""


def avd_inputs(build: Build, network: str = "backend") -> dict[str, AvdInputs]:
    """Per switch hostname of `network`'s leaf/spine fabric in `build`, AVD's inputs for that
    device: {hostname: {...the fabric's shared inputs, "type": "spine" | "l3leaf"}}. The shared
    part is one object for every device: pyavd.validate_inputs serialises what it is given, and
    pyavd's later steps take its validated copies. Raises NotExpressible for a fabric that is not
    a 2-tier VXLAN EVPN one, or whose addresses AVD's inputs cannot say."""
    topology = Topology.model_validate_json(build.files["topology.json"])
    addresses = read_rows(build.files["ip-plan.csv"].decode(), AddressRow, "ip-plan.csv", FabricgenError)
    cables = read_rows(build.files["cabling.csv"].decode(), CableRow, "cabling.csv", FabricgenError)

    switches = {node.id: node for node in topology.nodes if node.network == network and node.role in ("leaf", "spine")}
    if any(node.role == "core" for node in topology.nodes if node.network == network):
        raise NotExpressible(f"{network}: a 3-tier fabric (cores); this comparison builds 2-tier leaf/spine fabrics only")
    leaves = sorted((n for n in switches.values() if n.role == "leaf"), key=lambda n: n.id)
    spines = sorted((n for n in switches.values() if n.role == "spine"), key=lambda n: n.index)
    if not leaves or not spines:
        raise NotExpressible(f"{network}: no leaf/spine fabric in this build")
    configs = {name: build.configs[name] for name in switches}
    if any(configs[leaf.id].evpn is None for leaf in leaves):
        raise NotExpressible(f"{network}: not a VXLAN EVPN fabric (routing: vxlan-evpn); AVD's l3ls-evpn design is compared with EVPN only")

    fabric_subnets = {}  # (leaf, leaf port) -> (the /31, spine's address, leaf's address)
    vteps = {}
    for row in addresses:
        if row.network != network:
            continue
        if row.kind == "fabric" and switches.get(row.device) is not None and switches[row.device].role == "leaf":
            subnet = ipaddress.ip_interface(row.address).network
            fabric_subnets[(row.device, row.interface)] = (subnet, row.peer_address, row.address.split("/")[0])
        elif row.kind == "vtep":
            vteps[row.device] = row.address.split("/")[0]

    uplinks: dict[str, list[tuple[ipaddress.IPv4Network, str, str, str]]] = defaultdict(list)  # leaf -> (/31, its port, spine, spine port)
    servers: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # server -> (NIC, leaf, leaf port)
    for cable in cables:
        if cable.network != network:
            continue
        if cable.kind == "fabric":
            subnet, spine_address, leaf_address = fabric_subnets[(cable.a_device, cable.a_port)]
            if ipaddress.ip_address(spine_address) != subnet[0] or ipaddress.ip_address(leaf_address) != subnet[1]:
                raise NotExpressible(
                    f"{cable.a_device} {cable.a_port}: the leaf has {leaf_address} and the spine {spine_address} of {subnet}; AVD gives the spine the first address"
                )
            uplinks[cable.a_device].append((subnet, cable.a_port, cable.b_device, cable.b_port))
        elif cable.kind == "host" and cable.b_device in switches:
            servers[cable.a_device].append((cable.a_port, cable.b_device, cable.b_port))

    pool = _covering([subnet for links in uplinks.values() for subnet, *_ in links])
    leaf_nodes = [_leaf_node(leaf, configs[leaf.id], sorted(uplinks[leaf.id]), pool, vteps) for leaf in leaves]
    spine_nodes = [
        {"name": spine.id, "id": number, "bgp_as": str(spine.asn), "loopback_ipv4_address": spine.loopback} for number, spine in enumerate(spines, start=1)
    ]

    leaf_config = configs[leaves[0].id]
    fabric_mtus = {i.mtu for name in switches for i in configs[name].interfaces if i.kind == "fabric"}
    if len(fabric_mtus) != 1:
        raise NotExpressible(f"{network}: fabric ports with MTUs {sorted(fabric_mtus)}; AVD's p2p_uplinks_mtu is one value")
    assert leaf_config.evpn is not None and leaf_config.bgp is not None
    bfd = leaf_config.bfd if leaf_config.bgp.bfd else None
    structured = {"router_bfd": {"interval": bfd.interval_ms, "min_rx": bfd.min_rx_ms, "multiplier": bfd.multiplier}} if bfd is not None else {}
    shared: AvdInputs = {
        "fabric_name": topology.graph.name,
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "ebgp",
        "p2p_uplinks_mtu": fabric_mtus.pop(),
        "bgp_maximum_paths": leaf_config.bgp.maximum_paths,
        "bgp_ecmp": leaf_config.bgp.maximum_paths,
        "bgp_peer_groups": {"ipv4_underlay_peers": {"bfd": leaf_config.bgp.bfd}},
        "spine": {
            "defaults": {"loopback_ipv4_pool": str(_covering([n.loopback for n in spines])), "structured_config": structured},
            "nodes": spine_nodes,
        },
        "l3leaf": {
            "defaults": {
                "loopback_ipv4_pool": str(_covering([n.loopback for n in leaves])),
                "vtep_loopback_ipv4_pool": str(_covering(list(vteps.values()))),
                "uplink_ipv4_pool": str(pool),
                "virtual_router_mac_address": leaf_config.evpn.anycast_gateway_mac,
                "structured_config": structured,
            },
            "nodes": leaf_nodes,
        },
        "tenants": _tenants([configs[leaf.id] for leaf in leaves]),
        "servers": _servers(servers, configs),
    }
    return {name: {**shared, "type": "spine" if node.role == "spine" else "l3leaf"} for name, node in sorted(switches.items())}


def uplink_subnets(node: dict, pool: str) -> list[ipaddress.IPv4Network]:
    """The /31 of each of a leaf node's uplinks, in `uplink_interfaces` order, as AVD derives
    them from `uplink_ipv4_pool` (a single prefix here) and the node's `id` (see the module's
    docstring)."""
    base = ipaddress.ip_network(pool)
    block = len(node["uplink_switches"])  # max_uplink_switches (its default) * max_parallel_uplinks (1)
    first = (node["id"] - 1) * block
    return [ipaddress.ip_network((int(base.network_address) + 2 * (first + i), 31)) for i in range(len(node["uplink_interfaces"]))]


def _covering(subnets: list) -> ipaddress.IPv4Network:
    """The smallest prefix that holds every one of `subnets` (networks or address strings)."""
    networks = [ipaddress.ip_network(s) for s in subnets]
    low = min(int(s.network_address) for s in networks)
    high = max(int(s.broadcast_address) for s in networks)
    prefix = 32 - (low ^ high).bit_length()
    return ipaddress.ip_network((low, prefix), strict=False)


def _leaf_node(leaf, config, links: list, pool: ipaddress.IPv4Network, vteps: dict[str, str]) -> dict:
    """An l3leaf node: its uplinks in address order, and the `id` that makes AVD's offset rule
    land on fabricgen's /31s (checked link by link)."""
    offset = (int(links[0][0].network_address) - int(pool.network_address)) // 2
    if offset % len(links):
        raise NotExpressible(
            f"{leaf.id}: its first uplink /31 {links[0][0]} is not at a multiple of its {len(links)} uplinks in {pool}; AVD numbers uplinks by id"
        )
    node = {
        "name": leaf.id,
        "id": offset // len(links) + 1,
        "bgp_as": str(leaf.asn),
        "loopback_ipv4_address": leaf.loopback,
        "vtep_loopback_ipv4_address": vteps[leaf.id],
        "uplink_interfaces": [port for _, port, _, _ in links],
        "uplink_switches": [spine for _, _, spine, _ in links],
        "uplink_switch_interfaces": [spine_port for _, _, _, spine_port in links],
        "filter": {"tags": [segment.name for segment in config.evpn.segments] or ["no-segment"]},
    }
    for (subnet, port, _, _), derived in zip(links, uplink_subnets(node, str(pool)), strict=True):
        if subnet != derived:
            raise NotExpressible(f"{leaf.id} {port}: fabricgen's /31 is {subnet}, AVD's rule gives {derived} (uplink_ipv4_pool {pool}, id {node['id']})")
    return node


def _tenants(leaf_configs: list) -> list[dict]:
    """One AVD tenant per VRF, each segment once (every leaf of a segment agrees on it: a
    fabricgen check), tagged with its name so that only its leaves carry it."""
    vrfs: dict[str, Any] = {}
    segments: dict[str, dict[int, Any]] = defaultdict(dict)
    mtu = {}
    for config in leaf_configs:
        for vrf in config.evpn.vrfs:
            vrfs[vrf.name] = vrf
        for segment in config.evpn.segments:
            segments[segment.vrf][segment.vlan] = segment
        mtu[config.hostname] = config.mtu
    tenants = []
    for name, vrf in sorted(vrfs.items()):
        members = [segments[name][vlan] for vlan in sorted(segments[name])]
        base = members[0].vni - members[0].vlan if members else 0
        svis = []
        for s in members:
            svi = {
                "id": s.vlan,
                "name": s.name,
                "enabled": True,
                "ip_address_virtual": s.gateway,
                "mtu": max(mtu.values()),
                "tags": [s.name],
                "rt_override": s.route_target,
            }
            if s.vni != base + s.vlan:
                svi["vni_override"] = s.vni
            svis.append(svi)
        tenants.append({"name": name, "mac_vrf_vni_base": base, "vrfs": [{"name": name, "vrf_vni": vrf.l3_vni, "rt_override": vrf.route_target, "svis": svis}]})
    return tenants


def _servers(servers: dict[str, list[tuple[str, str, str]]], configs: dict) -> list[dict]:
    """AVD connected endpoints: each server NIC an access port in its segment's VLAN."""
    vlan_of = {}  # (leaf, port) -> VLAN
    mtu_of = {}
    for name, config in configs.items():
        for interface in config.interfaces:
            if interface.kind == "host":
                mtu_of[(name, interface.name)] = interface.mtu
                if interface.access_vlan is not None:
                    vlan_of[(name, interface.name)] = interface.access_vlan
    endpoints = []
    for server, nics in sorted(servers.items()):
        adapters = []
        for nic, leaf, port in sorted(nics):
            adapter = {
                "endpoint_ports": [nic],
                "switches": [leaf],
                "switch_ports": [port],
                "mode": "access",
                "spanning_tree_portfast": "edge",
                "mtu": mtu_of[(leaf, port)],
            }
            if (leaf, port) in vlan_of:
                adapter["vlans"] = str(vlan_of[(leaf, port)])
            adapters.append(adapter)
        endpoints.append({"name": server, "adapters": adapters})
    return endpoints


def expected(build: Build, inputs: dict[str, AvdInputs]) -> dict[str, dict]:
    """What AVD's config of each device in `inputs` must show for the fabric to be fabricgen's:
    its ASN, its loopback and each fabric port's address (from topology.json and ip-plan.csv)."""
    topology = Topology.model_validate_json(build.files["topology.json"])
    facts = {node.id: {"asn": node.asn, "loopback": node.loopback, "ports": {}} for node in topology.nodes if node.id in inputs}
    for row in read_rows(build.files["ip-plan.csv"].decode(), AddressRow, "ip-plan.csv", FabricgenError):
        if row.device in facts and row.kind == "fabric":
            facts[row.device]["ports"][row.interface] = row.address
    return facts
