"""The IP plan: every address in the fabric with its device, interface and peer."""

from __future__ import annotations

from operator import attrgetter

from fabricgen.compiled import Compiled
from fabricgen.design.graph import SERVER_ROLES
from fabricgen.reports._csv import csv_text

CAGE_ORDER = attrgetter("cage", "sub")  # a device's ports in front-panel order
COLUMNS = ("network", "device", "interface", "address", "kind", "gateway", "peer_device", "peer_interface", "peer_address")


def render_ip_plan(c: Compiled) -> dict[str, str]:
    plan = c.addresses
    rows = []
    # the plan's lookups bound once: the loop below runs once per port (880,000 at 131,072 GPUs)
    interface_of, management_of = plan.interfaces.get, plan.management.get
    gateway_of, management_gateway_of = plan.gateways.get, plan.management_gateways.get
    for device in c.fabric.devices.values():
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
        server = device.role in SERVER_ROLES
        name = device.name
        for port in sorted(device.ports.values(), key=CAGE_ORDER):
            link = port.link
            if link is None:  # addressing walks links: a port without a cable has no address
                continue
            address = interface_of(port)
            if address is not None:
                kind = "nic" if server else link.kind
                gateway = gateway_of(port, "")
            else:
                address = management_of(port)
                if address is None:
                    continue
                kind = "management"
                gateway = management_gateway_of(port, "")
            peer = link.b if port is link.a else link.a  # link.other(port)
            peer_address = interface_of(peer)
            # network and kind as their StrEnum members: csv writes their values, without a .value per row;
            # the CIDR written here rather than by InterfaceAddress.cidr: a call less on each of a million rows
            rows.append(
                (
                    link.network,
                    name,
                    port.name,
                    f"{address.address}/{address.prefixlen}",
                    kind,
                    gateway,
                    peer.device.name,
                    peer.name,
                    peer_address.address if peer_address else "",
                )
            )
    return {"ip-plan.csv": csv_text(COLUMNS, rows)}
