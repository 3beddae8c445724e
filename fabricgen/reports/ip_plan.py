"""The IP plan: every address in the fabric with its device, interface and peer."""

from __future__ import annotations

from fabricgen.compiled import Compiled
from fabricgen.design.graph import SERVER_ROLES
from fabricgen.reports._csv import csv_text

COLUMNS = ("network", "device", "interface", "address", "kind", "gateway", "peer_device", "peer_interface", "peer_address")


def render_ip_plan(c: Compiled) -> dict[str, str]:
    plan = c.addresses
    rows = []
    for device in c.fabric.devices.values():
        if device.name in plan.loopbacks:
            rows.append((device.network.value, device.name, "Loopback0", f"{plan.loopbacks[device.name]}/32", "loopback", "", "", "", ""))
        if device.name in plan.nic_subnet_gateways:
            svi = f"Vlan{c.plan_of(device.network).spec.subnet_vlan}"
            rows.append((device.network.value, device.name, svi, plan.nic_subnet_gateways[device.name].cidr, "gateway", "", "", "", ""))
        if device.name in plan.vteps:
            rows.append((device.network.value, device.name, "loopback1", f"{plan.vteps[device.name]}/32", "vtep", "", "", "", ""))
            overlay = c.evpn_of(device.network)
            for segment in overlay.leaf_segments(device):  # type: ignore[union-attr]
                cidr = f"{segment.gateway}/{segment.prefixlen}"
                rows.append((device.network.value, device.name, f"Vlan{segment.vlan}", cidr, "anycast-gateway", "", "", "", ""))
        if device.name in plan.management_subnets and c.intent.oob is not None:
            svi = f"Vlan{c.intent.oob.vlan}"
            rows.append(("oob", device.name, svi, plan.management_subnets[device.name].cidr, "management-gateway", "", "", "", ""))
        for port in sorted(device.ports.values(), key=lambda p: (p.cage, p.sub)):
            address = plan.interfaces.get(port)
            management = address is None
            if management:
                address = plan.management.get(port)
                if address is None:
                    continue
            peer = port.link.other(port)  # type: ignore[union-attr]
            if management:
                kind = "management"
            else:
                kind = "nic" if device.role in SERVER_ROLES else port.link.kind.value  # type: ignore[union-attr]
            peer_address = plan.interfaces.get(peer)
            gateway = plan.management_gateways.get(port, "") if management else plan.gateways.get(port, "")
            rows.append(
                (
                    port.link.network.value,  # type: ignore[union-attr]
                    device.name,
                    port.name,
                    address.cidr,
                    kind,
                    gateway,
                    peer.device.name,
                    peer.name,
                    peer_address.address if peer_address else "",
                )
            )
    return {"ip-plan.csv": csv_text(COLUMNS, rows)}
