"""The IP plan: every address in the fabric with its device, interface and peer."""

from __future__ import annotations

from fabricgen.compiled import Compiled
from fabricgen.design.graph import Role
from fabricgen.reports._csv import csv_text

COLUMNS = ("network", "device", "interface", "address", "kind", "gateway", "peer_device", "peer_interface", "peer_address")


def render_ip_plan(c: Compiled) -> dict[str, str]:
    plan = c.addresses
    rows = []
    for device in c.fabric.devices.values():
        if device.is_switch:
            rows.append((device.network.value, device.name, "Loopback0", f"{plan.loopbacks[device.name]}/32", "loopback", "", "", "", ""))
            if device.name in plan.nic_subnet_gateways:
                svi = f"Vlan{c.intent.backend.subnet_vlan}"
                rows.append((device.network.value, device.name, svi, plan.nic_subnet_gateways[device.name].cidr, "gateway", "", "", "", ""))
        for port in sorted(device.ports.values(), key=lambda p: (p.cage, p.sub)):
            address = plan.interfaces.get(port)
            if address is None:
                continue
            peer = port.link.other(port)  # type: ignore[union-attr]
            kind = "nic" if device.role is Role.GPU_NODE else port.link.kind.value  # type: ignore[union-attr]
            peer_address = plan.interfaces.get(peer)
            rows.append(
                (
                    device.network.value,
                    device.name,
                    port.name,
                    address.cidr,
                    kind,
                    plan.gateways.get(port, ""),
                    peer.device.name,
                    peer.name,
                    peer_address.address if peer_address else "",
                )
            )
    return {"ip-plan.csv": csv_text(COLUMNS, rows)}
