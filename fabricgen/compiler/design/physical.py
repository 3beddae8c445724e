"""The physical pass: with a rack layout in the intent, every device gets a rack and rack unit,
and every cable a length and the medium that reaches (fabricgen.compiler.design.layout holds the rules).

`oob_rows` runs before the OOB network exists, to learn the racks (each rack's PDUs are OOB
endpoints); `apply_layout` runs after, to place everything and choose media. Without a layout it does nothing:
links keep the intent's or the catalog's default optic and no length.
"""

from __future__ import annotations

from collections.abc import Mapping

from fabricgen.basics.errors import Problem
from fabricgen.catalog import Catalog
from fabricgen.compiler.design.graph import SERVER_ROLES, Device, Fabric, LinkKind, Role
from fabricgen.compiler.design.layout import Position, Rack, RackKind, cable_length_m, choose_media, place
from fabricgen.compiler.design.oob import GrowthUnits, oob_counts
from fabricgen.intent.model import Intent

PLACED_ROLES = {Role.LEAF, Role.SPINE, Role.CORE, Role.OOB_SWITCH, Role.CONSOLE_SERVER} | SERVER_ROLES


def _items(catalog: Catalog, devices: list[Device], extra_network_units: list[tuple[str, int]]) -> list[tuple[str, RackKind, int]]:
    items: list[tuple[str, RackKind, int]] = []
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


def oob_rows(intent: Intent, catalog: Catalog, fabric: Fabric, units: GrowthUnits | None = None) -> tuple[dict[str, int], dict[str, int] | None, list[Problem]]:
    """Before the OOB network exists: {rack: PDUs} for the racks the whole cluster will fill, and
    the row of every device and rack (console servers as `#console-n`), for OOB switches per row.
    Empty and None without a layout or an OOB network. Console servers (and pinned spare OOB
    switches) stand in network racks, each rack's PDUs need OOB ports, and every row's OOB
    switches stand in that row: count them as `build_oob` will, until racks and counts settle."""
    layout, oob = intent.layout, intent.oob
    if layout is None or oob is None:
        return {}, None, []
    devices = [d for d in fabric.devices.values() if d.role in PLACED_ROLES]
    server_units = catalog.console_servers[oob.console.model].rack_units
    switch_units = catalog.switches[oob.switch.model].rack_units
    servers, spares = 1, 0
    pdus: dict[str, int] = {}
    for _ in range(32):  # counts only grow, and settle within a round or two
        extra = [(f"#console-{i}", server_units) for i in range(1, servers + 1)] + [(f"#oob-spare-{i}", switch_units) for i in range(1, spares + 1)]
        placement = place(_items(catalog, devices, extra), layout)
        if placement.problems:
            return {}, None, placement.problems
        rows = {name: position.rack.row for name, position in placement.positions.items()} | {rack.name: rack.row for rack in placement.racks}
        racks = {rack.name: layout.pdus_per_rack for rack in placement.racks}
        counts = oob_counts(catalog, intent, fabric, units or GrowthUnits(), racks, rows)
        settled = (max(servers, counts.servers), max(spares, counts.switches - counts.needed_switches), racks)
        if settled == (servers, spares, pdus):
            return racks, rows, []
        servers, spares, pdus = settled
    raise AssertionError("the OOB counts and racks did not settle")


def apply_layout(intent: Intent, catalog: Catalog, fabric: Fabric, switch_rows: Mapping[str, int] | None = None) -> list[Problem]:
    """With a layout: every device's rack and rack unit, every cable's length and medium. The OOB
    switches of `switch_rows` (switch -> row) stand in their row: in the rack of that row with
    the most rack units free above what it holds (ties: nearest the row's middle), on top."""
    layout = intent.layout
    if layout is None:
        return []
    switch_rows = switch_rows or {}
    devices = [d for d in fabric.devices.values() if d.role in PLACED_ROLES and d.name not in switch_rows]
    placement = place(_items(catalog, devices, []), layout)
    if placement.problems:
        return placement.problems
    positions = dict(placement.positions)
    row_problems = _stand_in_rows(catalog, fabric, layout, placement.racks, positions, switch_rows)
    if row_problems:
        return row_problems
    for name, position in positions.items():
        device = fabric.devices[name]
        device.rack, device.ru = position.rack.name, position.ru
    racks = {rack.name: rack for rack in placement.racks}
    pdu_racks_now = {pdu.rack for pdu in fabric.by_role(Role.PDU)}
    if intent.oob is not None and layout.pdus_per_rack and pdu_racks_now != set(racks):
        # oob_rows counted these racks in advance; a difference is a bug, not the user's
        raise AssertionError(f"PDUs stand in {sorted(pdu_racks_now, key=str)}, the layout has {sorted(racks)}")  # key: a rackless PDU shows as None
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


def _stand_in_rows(
    catalog: Catalog, fabric: Fabric, layout, racks: list[Rack], positions: dict[str, Position], switch_rows: Mapping[str, int]
) -> list[Problem]:
    """Each OOB switch of `switch_rows` into its row (see `apply_layout`), added to `positions`."""
    top: dict[str, int] = {}  # rack -> highest rack unit in use
    for position in positions.values():
        top[position.rack.name] = max(top.get(position.rack.name, 0), position.ru + position.height - 1)
    by_row: dict[int, list[Rack]] = {}
    for rack in racks:
        by_row.setdefault(rack.row, []).append(rack)
    problems = []
    for name, row in switch_rows.items():
        device = fabric.devices[name]
        height = catalog.switches[device.model].rack_units
        row_racks = by_row.get(row, [])
        middle = (len(row_racks) + 1) / 2
        best = max(row_racks, key=lambda r: (layout.rack_units - top.get(r.name, 0), -abs(r.column - middle), -r.column), default=None)
        if best is None or layout.rack_units - top.get(best.name, 0) < height:
            problems.append(
                Problem(
                    f"{name} serves row {row}, but no rack of that row has {height} RU free for it",
                    hint="lower layout.gpu_nodes_per_rack, or raise layout.rack_units if the racks are taller",
                    field=("layout", "gpu_nodes_per_rack"),
                )
            )
            continue
        positions[name] = Position(best, top.get(best.name, 0) + 1, height)
        top[best.name] = top.get(best.name, 0) + height
    return problems


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
        if ports is not None and any(ports.port_name(n) == port.name for n in range(1, ports.ports + 1)):
            return ports.form_factor
    return None


def _preferred_optics(intent: Intent) -> dict[tuple[str, LinkKind], str]:
    """The optics the intent names, by (network, link kind): they are kept, and their reach checked."""
    sections = {"backend": intent.backend, "frontend": intent.frontend, "storage": intent.storage_fabric()}
    found = {}
    for network, spec in sections.items():
        if spec is None:
            continue
        # a spine-free pair's peer links take the fabric links' optic, as the build without a layout does
        for kind, pid in ((LinkKind.HOST, spec.optics.host_links), (LinkKind.FABRIC, spec.optics.fabric_links), (LinkKind.PEER, spec.optics.fabric_links)):
            if pid is not None:
                found[(network, kind)] = pid
    return found
