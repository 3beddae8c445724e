"""The physical pass: with a rack layout in the intent, every device gets a rack and rack unit,
and every cable a length and the medium that reaches (fabricgen.design.layout holds the rules).

`pdu_racks` runs before the OOB network exists, to learn the racks (each rack's PDUs are OOB
endpoints); `apply_layout` runs after, to place everything and choose media. Without a layout it does nothing:
links keep the intent's or the catalog's default optic and no length.
"""

from __future__ import annotations

from fabricgen.catalog import Catalog
from fabricgen.design.graph import SERVER_ROLES, Device, Fabric, LinkKind, Role
from fabricgen.design.layout import Position, cable_length_m, choose_media, place
from fabricgen.design.oob import GrowthUnits, oob_counts
from fabricgen.errors import Problem
from fabricgen.intent.model import Intent

PLACED_ROLES = {Role.LEAF, Role.SPINE, Role.CORE, Role.OOB_SWITCH, Role.CONSOLE_SERVER} | SERVER_ROLES


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


def pdu_racks(intent: Intent, catalog: Catalog, fabric: Fabric, units: GrowthUnits | None = None) -> tuple[dict[str, int], list[Problem]]:
    """{rack: PDUs} for the racks the whole cluster will fill, before the OOB network exists
    (empty without a layout or an OOB network). The OOB switches and console servers stand in
    network racks too, and each rack's PDUs need OOB ports: count both as `build_oob` will, with
    the PDUs of the racks that gives, until the rack count settles."""
    layout, oob = intent.layout, intent.oob
    if layout is None or oob is None:
        return {}, []
    devices = [d for d in fabric.devices.values() if d.role in PLACED_ROLES]
    server_units = catalog.console_servers[oob.console.model].rack_units
    switch_units = catalog.switches[oob.switch.model].rack_units
    pdus = 0
    while True:  # racks only grow with more PDUs, and stop growing within a round or two
        counts = oob_counts(catalog, intent, fabric, units or GrowthUnits(), pdus)
        # the same order build_oob adds them in: console servers, then OOB switches
        extra = [(f"console-{i}", server_units) for i in range(counts.servers)] + [(f"oob-{i}", switch_units) for i in range(counts.switches)]
        placement = place(_items(catalog, devices, extra), layout)
        if placement.problems:
            return {}, placement.problems
        if len(placement.racks) * layout.pdus_per_rack == pdus:
            return {rack.name: layout.pdus_per_rack for rack in placement.racks}, []
        pdus = len(placement.racks) * layout.pdus_per_rack


def apply_layout(intent: Intent, catalog: Catalog, fabric: Fabric) -> list[Problem]:
    """With a layout: every device's rack and rack unit, every cable's length and medium."""
    layout = intent.layout
    if layout is None:
        return []
    devices = [d for d in fabric.devices.values() if d.role in PLACED_ROLES]
    placement = place(_items(catalog, devices, []), layout)
    if placement.problems:
        return placement.problems
    for name, position in placement.positions.items():
        device = fabric.devices[name]
        device.rack, device.ru = position.rack.name, position.ru
    racks = {rack.name: rack for rack in placement.racks}
    positions = dict(placement.positions)
    pdu_racks_now = {pdu.rack for pdu in fabric.by_role(Role.PDU)}
    if intent.oob is not None and layout.pdus_per_rack and pdu_racks_now != set(racks):
        # pdu_racks counted these racks in advance; a difference is a bug, not the user's
        raise AssertionError(f"PDUs stand in {sorted(pdu_racks_now)}, the layout has {sorted(racks)}")
    preferred = _preferred_optics(intent)
    far_form_factors: dict[tuple[str, str], str | None] = {}  # (model, port) -> form factor
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
            key = (far.device.model, far.name)
            if key not in far_form_factors:
                far_form_factors[key] = _server_form_factor(catalog, far)
            far_form_factor = far_form_factors[key]
        choice = choose_media(
            catalog,
            cage_form_factor=cage.form_factor,
            cage_speed=cage.speed,
            link_speed=switch_end.speed_gbps if cage.form_factor != "RJ45" else cage.speed,
            far_form_factor=far_form_factor,
            length_m=length,
            preferred=preferred.get((link.network.value, link.kind)),
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
    return reported


def _position(positions, racks, device: Device):
    if device.name in positions:
        return positions[device.name]
    if device.role is Role.PDU and device.rack in racks:
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


def _preferred_optics(intent: Intent) -> dict[tuple[str, LinkKind], str]:
    """The optics the intent names, by (network, link kind): they are kept, and their reach checked."""
    sections = {"backend": intent.backend, "frontend": intent.frontend, "storage": intent.storage_fabric()}
    found = {}
    for network, spec in sections.items():
        if spec is None:
            continue
        for kind, pid in ((LinkKind.HOST, spec.optics.host_links), (LinkKind.FABRIC, spec.optics.fabric_links)):
            if pid is not None:
                found[(network, kind)] = pid
    return found
