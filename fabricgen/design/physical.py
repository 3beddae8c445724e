"""The physical pass: with a rack layout in the intent, every device gets a rack and rack unit,
and every cable a length and the medium that reaches (fabricgen.design.layout holds the rules).

It runs twice: before the OOB network exists, to learn the racks (each rack's PDUs are OOB
endpoints), and after, to place everything and choose media. Without a layout it does nothing:
links keep the intent's or the catalog's default optic and no length.
"""

from __future__ import annotations

from fabricgen.catalog import Catalog
from fabricgen.design.graph import SERVER_ROLES, Device, Fabric, LinkKind, Role
from fabricgen.design.layout import Placement, cable_length_m, choose_media, place
from fabricgen.design.oob import _management_endpoints, oob_switches_needed
from fabricgen.errors import Problem
from fabricgen.intent.model import Intent

PLACED_ROLES = {Role.LEAF, Role.SPINE, Role.OOB_SWITCH, Role.CONSOLE_SERVER} | SERVER_ROLES


def _items(catalog: Catalog, devices: list[Device], extra_network_units: list[tuple[str, int]]) -> list[tuple[str, str, int]]:
    items = []
    for d in devices:
        if d.role is Role.GPU_NODE:
            items.append((d.name, "gpu", catalog.nodes[d.model].rack_units))
        elif d.role in SERVER_ROLES:
            items.append((d.name, "server", catalog.nodes[d.model].rack_units))
        elif d.role is Role.CONSOLE_SERVER:
            items.append((d.name, "network", catalog.console_servers[d.model].rack_units))
        elif d.role in PLACED_ROLES:
            items.append((d.name, "network", catalog.switches[d.model].rack_units))
    items += [(name, "network", units) for name, units in extra_network_units]
    return items


def apply_layout(intent: Intent, catalog: Catalog, fabric: Fabric, before_oob: bool) -> tuple[dict[str, int], list[Problem]]:
    """Before the OOB network: {rack: PDUs} (empty without a layout). After: places devices and
    chooses media; returns the problems."""
    layout = intent.layout
    if layout is None:
        return {}, []
    devices = [d for d in fabric.devices.values() if d.role in PLACED_ROLES]
    if before_oob:
        if intent.oob is None:
            return {}, []
        # the OOB switches and console servers stand in network racks too; estimate their number,
        # then add the PDUs of the racks that gives (their ports may need one more OOB switch)
        endpoints = len(_management_endpoints(catalog, fabric))
        server_model = catalog.console_servers[intent.oob.console.model]
        switch_units = catalog.switches[intent.oob.switch.model].rack_units
        pdus = 0
        placement: Placement | None = None
        for _ in range(4):
            switches = max(oob_switches_needed(catalog, intent, endpoints + pdus + 2), intent.oob.switch.count or 0)
            consoles = max(2, intent.oob.console.count or 0)
            extra = [(f"oob-estimate-{i}", switch_units) for i in range(switches)] + [
                (f"console-estimate-{i}", server_model.rack_units) for i in range(consoles)
            ]
            placement = place(_items(catalog, devices, extra), layout)
            if placement.problems:
                return {}, [_located(p) for p in placement.problems]
            new_pdus = len(placement.racks) * layout.pdus_per_rack
            if new_pdus == pdus:
                break
            pdus = new_pdus
        assert placement is not None
        return {rack.name: layout.pdus_per_rack for rack in placement.racks}, []

    placement = place(_items(catalog, devices, []), layout)
    if placement.problems:
        return {}, [_located(p) for p in placement.problems]
    for name, position in placement.positions.items():
        device = fabric.devices[name]
        device.rack, device.ru = position.rack.name, position.ru
    racks = {rack.name: rack for rack in placement.racks}
    positions = dict(placement.positions)
    for pdu in fabric.by_role(Role.PDU):
        if pdu.rack not in racks:
            return {}, [Problem(f"{pdu.name} stands in rack {pdu.rack}, which the final layout does not have", field=("layout",))]
    problems: dict[str, list[Problem]] = {}
    for link in fabric.links:
        a_pos, b_pos = _position(positions, racks, link.a.device), _position(positions, racks, link.b.device)
        if a_pos is None or b_pos is None or link.kind is LinkKind.CONSOLE:
            continue  # the management core is outside the layout; console lines use octal cables
        length = cable_length_m(a_pos, b_pos, layout)
        switch_end = link.b  # host, management and fabric links: the b end is a switch port
        cage = catalog.switches[switch_end.device.model].group_of(switch_end.cage) if switch_end.device.is_switch else None
        if cage is None:
            continue
        far = link.a
        far_form_factor = None
        if not far.device.is_switch and far.device.role is not Role.MANAGEMENT_CORE:
            far_form_factor = _server_form_factor(catalog, far)
        preferred = _preferred(intent, link)
        choice = choose_media(
            catalog,
            cage_form_factor=cage.form_factor,
            cage_speed=cage.speed,
            link_speed=switch_end.speed_gbps if cage.form_factor != "RJ45" else cage.speed,
            far_form_factor=far_form_factor,
            length_m=length,
            preferred=preferred,
        )
        if isinstance(choice, Problem):
            problems.setdefault(choice.hint, []).append(
                Problem(f"{link.id} ({link.a.label} to {link.b.label}, about {length:.0f} m): {choice.message}", hint=choice.hint, field=("layout",))
            )
            continue
        switch_end.optic = choice.optic
        if link.kind is LinkKind.FABRIC or (far.device.is_switch and far.front_panel):
            far.optic = choice.optic
        link.cable = choice.cable
        link.length_m = choice.cable_length_m
    reported = []
    for same in problems.values():  # a few examples of each kind of problem, then a count
        reported += same[:3]
        if len(same) > 3:
            reported.append(Problem(f"... and {len(same) - 3} more links with the same problem", field=("layout",)))
    return {}, reported


def _located(problem: Problem) -> Problem:
    return problem


def _position(positions, racks, device: Device):
    if device.name in positions:
        return positions[device.name]
    if device.role is Role.PDU and device.rack in racks:
        from fabricgen.design.layout import Position

        rack = racks[device.rack]
        return Position(rack, 1, 1)  # PDUs run the rack's height; their network port sits low
    return None


def _server_form_factor(catalog: Catalog, port) -> str | None:
    device = port.device
    if device.role is Role.CONSOLE_SERVER:
        return catalog.console_servers[device.model].uplink.form_factor
    if device.role is Role.PDU:
        return "RJ45"
    node = catalog.nodes.get(device.model)
    if node is None:
        return None
    for ports in (node.backend, node.frontend, node.storage, node.bmc, node.mgmt):
        if ports is not None and any(ports.names.format(n=n) == port.name for n in range(1, ports.count + 1)):
            return ports.form_factor
    return None


def _preferred(intent: Intent, link) -> str | None:
    """The intent's optic for this kind of link, if it names one."""
    sections = {"backend": intent.backend, "frontend": intent.frontend, "storage": intent.storage_fabric()}
    spec = sections.get(link.network.value)
    if spec is None:
        return None
    if link.kind is LinkKind.HOST:
        return spec.optics.host_links
    if link.kind is LinkKind.FABRIC:
        return spec.optics.fabric_links
    return None
