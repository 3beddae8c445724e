"""The IP plan: every address in the fabric with its device, interface and peer."""

from __future__ import annotations

from operator import attrgetter

from fabricgen.basics.csv_format import csv_text, joined_csv
from fabricgen.build.build_dir import AddressRow
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import SERVER_ROLES, Device

CAGE_ORDER = attrgetter("cage", "sub")  # a device's ports in front-panel order
COLUMNS = tuple(AddressRow.model_fields)  # ip-plan.csv's header: the fields of the row every command reads back, in order


def render_ip_plan(c: Compiled) -> dict[str, str]:
    """ip-plan.csv: the rows of `ip_plan_rows`, each port's formatted at once (a tuple and a join
    per row cost twice as much: 880,000 rows at 131,072 GPUs)."""
    plan = c.addresses
    blocks: list[str] = []  # each device's lines, joined: its lines are freed (their memory reused) before the next device's
    rows = 0
    # the plan's lookups bound once: the loop below runs once per port
    interface_of, management_of = plan.interfaces.get, plan.management.get
    gateway_of, management_gateway_of = plan.gateways.get, plan.management_gateways.get
    for device in c.fabric.devices.values():
        lines = list(map(",".join, _own_rows(c, device)))
        server = device.role in SERVER_ROLES
        name = device.name
        for port in sorted(device.ports.values(), key=CAGE_ORDER):
            link = port.link
            if link is None:  # addressing walks links: a port without a cable has no address
                continue
            address = interface_of(port)
            if address is None:
                address = management_of(port)
                if address is None:
                    continue
                kind, gateway = "management", management_gateway_of(port, "")
            elif server:
                kind, gateway = "nic", gateway_of(port, "")
            else:  # gateways are the NICs' (AddressPlan.gateways): a switch port's is not looked up
                kind, gateway = link.kind, ""
            peer = link.b if port is link.a else link.a  # link.other(port)
            # address.peer: the peer's own address, set on both ends of a /31 and only there (no lookup of the peer);
            # !s: a StrEnum's str() is its value, in C (format() and .value go through Python code)
            lines.append(
                f"{link.network!s},{name},{port.name},{address.address}/{address.prefixlen},{kind!s},{gateway},"
                f"{peer.device.name},{peer.name},{address.peer or ''}"
            )
        if lines:
            blocks.append("\n".join(lines))
            rows += len(lines)
    text = joined_csv(COLUMNS, blocks, rows)
    return {"ip-plan.csv": text if text is not None else csv_text(COLUMNS, ip_plan_rows(c))}


def ip_plan_rows(c: Compiled) -> list[tuple[str, ...]]:
    """Every row of the plan as its fields (COLUMNS): per device its own addresses (loopbacks,
    gateways), then its cabled ports with an address in front-panel order."""
    plan = c.addresses
    rows = []
    for device in c.fabric.devices.values():
        rows += _own_rows(c, device)
        for port in sorted(device.ports.values(), key=CAGE_ORDER):
            if port.link is None:
                continue
            if port in plan.interfaces:
                address = plan.interfaces[port]
                kind = "nic" if device.role in SERVER_ROLES else port.link.kind.value
                gateway = plan.gateways.get(port, "")
            elif port in plan.management:
                address = plan.management[port]
                kind = "management"
                gateway = plan.management_gateways.get(port, "")
            else:
                continue
            peer = port.link.other(port)
            peer_address = plan.interfaces[peer].address if peer in plan.interfaces else ""
            rows.append((port.link.network.value, device.name, port.name, address.cidr, kind, gateway, peer.device.name, peer.name, peer_address))
    return rows


def _own_rows(c: Compiled, device: Device) -> list[tuple[str, ...]]:
    """The device's addresses that belong to no port: loopbacks, SVIs and anycast gateways."""
    plan = c.addresses
    rows: list[tuple[str, ...]] = []
    if device.name in plan.loopbacks:
        rows.append((device.network.value, device.name, "Loopback0", f"{plan.loopbacks[device.name]}/32", "loopback", "", "", "", ""))
    if device.name in plan.nic_subnet_gateways:
        svi = f"Vlan{c.plan_of(device.network).spec.subnet_vlan}"
        rows.append((device.network.value, device.name, svi, plan.nic_subnet_gateways[device.name].cidr, "gateway", "", "", "", ""))
    if device.name in plan.vteps:
        rows.append((device.network.value, device.name, "loopback1", f"{plan.vteps[device.name]}/32", "vtep", "", "", "", ""))
        overlay = c.evpn_of(device.network)
        assert overlay is not None, "VTEPs are addressed only in a VXLAN EVPN network"
        for segment in overlay.leaf_segments(device):
            cidr = f"{segment.gateway}/{segment.prefixlen}"
            rows.append((device.network.value, device.name, f"Vlan{segment.vlan}", cidr, "anycast-gateway", "", "", "", ""))
    if device.name in plan.management_subnets and c.intent.oob is not None:
        svi = f"Vlan{c.intent.oob.vlan}"
        rows.append(("oob", device.name, svi, plan.management_subnets[device.name].cidr, "management-gateway", "", "", "", ""))
    return rows
