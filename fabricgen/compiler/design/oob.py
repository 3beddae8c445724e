"""The out-of-band management and console network.

- Copper management ports: every data switch's mgmt0, every server's BMC and host management NIC,
  every console server's uplink, every PDU, and every OOB switch's own mgmt0.
- OOB switches: copper ports are handed out by a stable key (below), so growing the cluster
  moves no existing management cable, access port or address. Each OOB switch routes its own
  management subnet (a VLAN interface as gateway, one address per copper port, by port number)
  and has `uplinks` routed links to the management core, so no VLAN spans two OOB switches and
  nothing depends on spanning tree.
- Console servers: every switch's console port (OOB switches included) on an async line, by the
  same stable key.

The stable key. Management ports and console lines are grouped into blocks: block 0 holds what
does not grow with the GPU count (cores, 2-tier backend spines, frontend/storage spines, storage
and management nodes, frontend/storage leaves that serve no GPU node, PDUs); block s (s >= 1)
holds scalable unit s: its GPU nodes, its backend leaves, its pod's spines when s is the pod's
first unit (3 tiers), the frontend/storage leaves whose first GPU node is in unit s, and (3-tier
frontend/storage) the spines of a pod whose first leaf is in block s. Every
block reserves the ports and lines of its FULL size, category by category (leaves, spines, cores,
frontend/storage leaves, frontend/storage spines, GPU nodes, storage nodes, management nodes,
console servers, PDUs; OOB switches take lines only), plus room for the OOB switches and console
servers that start inside it. Blocks lie one after another in one sequence of copper slots and
one of console lines; a device's slot is its block's start + its category's offset + its rank
in the category (by index). Growth only appends blocks or fills a block's reserved room.

Slots map to OOB switches in order: every switch keeps its last copper port for the next
switch's mgmt0 (switch k+1's mgmt0 on switch k's last port), and switch 2 also its second-to-last
for switch 1's mgmt0 (a single switch takes its own). Cable ids are numbered by position: switch
k's copper ports and then its uplinks own the numbers after switch k-1's, so a cable keeps its id
as long as it keeps its port; console cables by line slot. Lines map to console servers in order,
`lines per server` each. Without pinned counts, the fewest switches and servers that hold every
block; pinned counts add spares at the end.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from fabricgen.basics.errors import Problem
from fabricgen.catalog import Catalog
from fabricgen.compiler.design.graph import (
    SERVER_ROLES,
    Device,
    Fabric,
    Link,
    LinkKind,
    Network,
    OutOfPorts,
    Port,
    PortAllocator,
    Role,
)
from fabricgen.compiler.design.optics import SwitchOptics, link_cable
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.compiler.design.sizing import BackendSizing
from fabricgen.intent.model import NAME_PATTERN, Intent, name_from

MANAGEMENT_CORE = "mgmt-core"

# copper slots of a block, category by category; console lines likewise
COPPER_CATEGORIES = ("leaf", "spine", "core", "host-leaf", "host-spine", "gpu-node", "storage-node", "management-node", "console-server", "pdu")
LINE_CATEGORIES = ("leaf", "spine", "core", "host-leaf", "host-spine", "oob-switch")
_ROLE_CATEGORY = {Role.GPU_NODE: "gpu-node", Role.STORAGE_NODE: "storage-node", Role.MANAGEMENT_NODE: "management-node", Role.PDU: "pdu"}


@dataclass(frozen=True)
class OobPlan:
    switches: int
    copper_ports: int  # per OOB switch
    management_ports: int  # copper ports cabled, in total
    console_servers: int
    console_lines: int  # per console server
    console_ports: int  # cabled, in total
    modules: dict[str, int]  # console server -> async modules it needs
    notes: tuple[str, ...] = ()
    copper_cages: tuple[int, ...] = ()  # an OOB switch's copper cages in port order (addresses go by it)
    switch_rows: dict[str, int] = field(default_factory=dict)  # with a layout: OOB switch -> the row it serves and stands in


@dataclass(frozen=True)
class GrowthUnits:
    """How big a full scalable-unit block is: what each block reserves, known before it is full."""

    su_nodes: int = 0  # GPU nodes in a full unit
    leaves_per_su: int = 0  # backend leaves of a unit
    pod_sus: int = 0  # 3 tiers: units in a pod (its first unit holds the pod's spines); 0: 2 tiers
    spines_per_pod: int = 0  # 3 tiers
    host_leaves_per_su: int = 0  # frontend/storage leaves that can start in one unit, all host fabrics
    host_spines_per_su: int = 0  # 3-tier frontend/storage: spines of the pods that can start in one unit


def growth_units(sizing: BackendSizing, plans: Mapping[Network, LeafSpinePlan], fabric: Fabric) -> GrowthUnits:
    """The reservations of a full unit, from the backend sizing and the host fabrics' plans."""
    pod_sus = sizing.pod_sus if sizing.tiers == 3 else 0
    host_leaves = host_spines = 0
    gpu_node = next(fabric.by_role(Role.GPU_NODE), None)
    for network, plan in plans.items():
        if network is Network.BACKEND or gpu_node is None:
            continue
        width = 2 if plan.spec.attach == "leaf-pair" else 1  # type: ignore[union-attr]  # a host fabric's plan
        ports = sum(1 for p in gpu_node.ports.values() if p.link is not None and p.link.network is network)
        if not ports:
            continue
        per_leaf = math.ceil(ports / width)  # a node's ports on one leaf of its group
        fewest_nodes = max(1, plan.leaf_downlinks // per_leaf)
        # groups starting within one unit, and the group shared with the servers before the GPU nodes
        leaves = width * (math.ceil(sizing.su_nodes / fewest_nodes) + 1)
        host_leaves += leaves
        if plan.tiers == 3:
            host_spines += (math.ceil(leaves / plan.pod_leaves) + 1) * (plan.spines // plan.pods)
    return GrowthUnits(
        su_nodes=sizing.su_nodes,
        leaves_per_su=sizing.leaves_per_su,
        pod_sus=pod_sus,
        spines_per_pod=sizing.spines // max(1, sizing.pods) if pod_sus else 0,
        host_leaves_per_su=host_leaves,
        host_spines_per_su=host_spines,
    )


def _copper_ports(catalog: Catalog, model: str) -> int:
    return sum(g.count for g in catalog.switches[model].port_groups if g.form_factor == "RJ45")


def _node_ports(catalog: Catalog, device: Device) -> list[Port]:
    node = catalog.nodes[device.model]
    found = []
    for ports in (node.bmc, node.mgmt):
        if ports is not None:
            found += [Port(device, ports.names.format(n=n), n, 0, ports.speed, front_panel=False) for n in range(1, ports.count + 1)]
    return found


def _lines_per_server(catalog: Catalog, intent: Intent) -> int:
    console = intent.oob.console  # type: ignore[union-attr]
    return catalog.console_servers[console.model].module_slots * catalog.modules[console.module].async_ports


# -- the stable key ----------------------------------------------------------------------------


@dataclass
class _Members:
    """One block's devices by category, each list in index order."""

    copper: dict[str, list[Device]]
    lines: dict[str, list[Device]]


def _members(fabric: Fabric, rows: Mapping[str, int] | None = None) -> dict[int, _Members]:
    """Every data switch and server by block and category (OOB switches and console servers are
    placed later, by the slot they start at). With `rows` (a layout: device or rack name -> row),
    the block is the row the device stands in."""
    first_su_of_pod: dict[int, int] = {}
    for leaf in fabric.by_role(Role.LEAF, Network.BACKEND):
        if leaf.pod is not None and leaf.su is not None:
            first_su_of_pod[leaf.pod] = min(leaf.su, first_su_of_pod.get(leaf.pod, leaf.su))
    blocks: dict[int, _Members] = {}

    def add(block: int, category: str, device: Device, copper: bool, line: bool) -> None:
        members = blocks.get(block)
        if members is None:  # not setdefault: that would make a _Members per device to drop
            members = blocks[block] = _Members({c: [] for c in COPPER_CATEGORIES}, {c: [] for c in LINE_CATEGORIES})
        if copper:
            members.copper[category].append(device)
        if line:
            members.lines[category].append(device)

    # a 3-tier frontend/storage pod's spines go with its first leaf group's block
    host_pod_block: dict[tuple[Network, int], int] = {}
    for leaf in fabric.by_role(Role.LEAF):
        if leaf.network is not Network.BACKEND and leaf.pod is not None:
            block = _host_leaf_block(leaf)
            key = (leaf.network, leaf.pod)
            host_pod_block[key] = min(block, host_pod_block.get(key, block))
    for device in fabric.devices.values():
        if device.network is Network.OOB and device.role is not Role.PDU:
            continue
        if device.is_switch:
            backend = device.network is Network.BACKEND
            if device.role is Role.LEAF and backend:
                block, category = device.su or 0, "leaf"
            elif device.role is Role.SPINE and backend:
                block, category = first_su_of_pod.get(device.pod or 0, 0), "spine"
            elif device.role is Role.CORE:
                block, category = 0, "core"
            elif device.role is Role.LEAF:
                block, category = _host_leaf_block(device), "host-leaf"
            elif device.role is Role.SPINE and device.pod is not None:
                block, category = host_pod_block.get((device.network, device.pod), 0), "host-spine"
            else:
                block, category = 0, "host-spine"
            add(rows[device.name] if rows is not None else block, category, device, True, True)
        elif device.role in _ROLE_CATEGORY:
            block = (device.su or 0) if device.role is Role.GPU_NODE else 0
            if rows is not None:
                block = rows[device.rack] if device.role is Role.PDU else rows[device.name]  # type: ignore[index]
            add(block, _ROLE_CATEGORY[device.role], device, True, False)
    for members in blocks.values():
        for group in (*members.copper.values(), *members.lines.values()):
            group.sort(key=lambda d: 0 if d.role is Role.PDU else d.index)  # PDUs stay in rack order
    return blocks


def _host_leaf_block(leaf: Device) -> int:
    """A frontend/storage leaf's block: the unit of the first GPU node on it (0: none)."""
    sus = [
        p.link.other(p).device.su
        for p in leaf.ports.values()
        if p.link is not None and p.link.kind is LinkKind.HOST and p.link.other(p).device.role is Role.GPU_NODE
    ]
    return min((s for s in sus if s is not None), default=0)


@dataclass(frozen=True)
class _Layout:
    """Where each block's categories start in the copper slots and console lines."""

    copper: dict[tuple[int, str], int]  # (block, category) -> first slot
    lines: dict[tuple[int, str], int]
    copper_end: dict[int, int]  # block -> one past its last slot
    lines_end: dict[int, int]
    copper_total: int
    lines_total: int


def _switch_of(slot: int, per_switch: int) -> tuple[int, int]:
    """(switch number, copper port position, both from 0) of a slot: every switch keeps its last
    port, and switch 2 (number 1) also its second-to-last."""
    usable = per_switch - 1
    if slot < usable:
        return 0, slot
    slot -= usable
    if slot < usable - 1:
        return 1, slot
    slot -= usable - 1
    return 2 + slot // usable, slot % usable


def _first_slot(switch: int, per_switch: int) -> int:
    usable = per_switch - 1
    return 0 if switch == 0 else usable if switch == 1 else 2 * usable - 1 + (switch - 2) * usable


def _switches_for(slots: int, per_switch: int) -> int:
    return 1 if slots <= 0 else _switch_of(slots - 1, per_switch)[0] + 1


def _layout(
    catalog: Catalog, blocks: dict[int, _Members], units: GrowthUnits, node_copper: int, per_switch: int, lines_per_server: int, by_row: bool = False
) -> _Layout:
    """Block by block, category by category. By row (a layout): every row as many as there are,
    its console servers where they stand, and whole OOB switches of its own."""
    copper: dict[tuple[int, str], int] = {}
    lines: dict[tuple[int, str], int] = {}
    copper_end: dict[int, int] = {}
    lines_end: dict[int, int] = {}
    slot = line = 0
    for block in sorted(blocks):
        members = blocks[block]
        if block == 0 or by_row:  # what does not grow with the GPU count: as many as there are
            copper_need = {c: sum(_endpoint_port_count(catalog, d) for d in devices) for c, devices in members.copper.items()}
            line_need = {c: len(d) for c, d in members.lines.items()}
        else:  # a unit reserves its full size
            spines = units.spines_per_pod if units.pod_sus and (block - 1) % units.pod_sus == 0 else 0
            copper_need = dict.fromkeys(COPPER_CATEGORIES, 0) | {
                "leaf": units.leaves_per_su,
                "spine": spines,
                "host-leaf": units.host_leaves_per_su,
                "host-spine": units.host_spines_per_su,
                "gpu-node": units.su_nodes * node_copper,
            }
            line_need = dict.fromkeys(LINE_CATEGORIES, 0) | {
                "leaf": units.leaves_per_su,
                "spine": spines,
                "host-leaf": units.host_leaves_per_su,
                "host-spine": units.host_spines_per_su,
            }
            for category, devices in members.copper.items():  # never fewer than there are
                copper_need[category] = max(copper_need[category], sum(_endpoint_port_count(catalog, d) for d in devices))
            for category, devices in members.lines.items():
                line_need[category] = max(line_need[category], len(devices))
        # room for the OOB switches and console servers that start inside the block (each
        # needs a line or a copper port in the block that holds it); settle the two
        oob_switches = servers = 0
        while True:
            line_need["oob-switch"] = oob_switches
            if not by_row:  # by row, the console servers that stand in it
                copper_need["console-server"] = servers
            servers_now = math.ceil(sum(line_need.values()) / lines_per_server) + 1
            switches_now = math.ceil(sum(copper_need.values()) / max(1, per_switch - 2)) + 1
            if (servers_now, switches_now) == (servers, oob_switches):
                break
            servers, oob_switches = max(servers, servers_now), max(oob_switches, switches_now)
        for category in COPPER_CATEGORIES:
            copper[(block, category)] = slot
            slot += copper_need[category]
        if by_row and slot:  # the row's last switch is its own: the next row starts a new one
            slot = _first_slot(_switch_of(slot - 1, per_switch)[0] + 1, per_switch)
        for category in LINE_CATEGORIES:
            lines[(block, category)] = line
            line += line_need[category]
        copper_end[block], lines_end[block] = slot, line
    return _Layout(copper, lines, copper_end, lines_end, slot, line)


def _block_finder(ends: dict[int, int]) -> Callable[[int], int | None]:
    """position -> the block whose slots (or lines) hold it; None past the last. Blocks lie in
    key order, so their ends rise: a binary search."""
    blocks = sorted(ends)
    bounds = [ends[b] for b in blocks]

    def block_at(position: int) -> int | None:
        found = bisect.bisect_right(bounds, position)
        return blocks[found] if found < len(blocks) else None

    return block_at


@dataclass(frozen=True)
class OobCounts:
    switches: int  # as built: what is needed, or the pinned count when higher
    servers: int
    needed_switches: int
    needed_servers: int


def oob_counts(
    catalog: Catalog, intent: Intent, fabric: Fabric, units: GrowthUnits, pdus: Mapping[str, int] | None = None, rows: Mapping[str, int] | None = None
) -> OobCounts:
    """OOB switches and console servers the cluster needs by the stable key, with the PDUs of
    `pdus` (rack -> count) the fabric does not hold yet. With `rows` (device, rack or `#console-n`
    placeholder -> row), by row: every row its own OOB switches."""
    oob = intent.oob
    assert oob is not None
    blocks = _members(fabric, rows)
    for rack, count in (pdus or {}).items():
        block = rows[rack] if rows is not None else 0
        members = blocks.setdefault(block, _Members({c: [] for c in COPPER_CATEGORIES}, {c: [] for c in LINE_CATEGORIES}))
        members.copper["pdu"] += [Device(f"pdu-{rack}-{n}", Role.PDU, Network.OOB, "PDU", None, n) for n in range(count)]
    if rows is not None:
        _add_console_placeholders(catalog, intent, blocks, rows)
    blocks.setdefault(0, _Members({c: [] for c in COPPER_CATEGORIES}, {c: [] for c in LINE_CATEGORIES}))
    layout = _layout(
        catalog,
        blocks,
        units,
        _gpu_node_copper(catalog, fabric),
        _copper_ports(catalog, oob.switch.model),
        _lines_per_server(catalog, intent),
        by_row=rows is not None,
    )
    needed_switches = _switches_for(layout.copper_total, _copper_ports(catalog, oob.switch.model))
    needed_servers = max(1, math.ceil(layout.lines_total / _lines_per_server(catalog, intent)))
    return OobCounts(
        max(needed_switches, oob.switch.pinned(needed_switches) or 1), max(needed_servers, oob.console.count or 1), needed_switches, needed_servers
    )


def _add_console_placeholders(catalog: Catalog, intent: Intent, blocks: dict[int, _Members], rows: Mapping[str, int]) -> None:
    """By row: the console servers `rows` places (`#console-1`...) count in their row's block."""
    model = intent.oob.console.model  # type: ignore[union-attr]
    for name, row in rows.items():
        if name.startswith("#console-"):
            members = blocks.setdefault(row, _Members({c: [] for c in COPPER_CATEGORIES}, {c: [] for c in LINE_CATEGORIES}))
            members.copper["console-server"].append(Device(name, Role.CONSOLE_SERVER, Network.OOB, model, None, int(name.rpartition("-")[2])))


def _gpu_node_copper(catalog: Catalog, fabric: Fabric) -> int:
    node = next(fabric.by_role(Role.GPU_NODE), None)
    return len(_node_ports(catalog, node)) if node is not None else 0


def build_oob(
    intent: Intent, catalog: Catalog, fabric: Fabric, pdus_per_rack: dict[str, int], units: GrowthUnits | None = None, rows: Mapping[str, int] | None = None
) -> tuple[OobPlan | None, list[Problem]]:
    """Add PDUs, console servers and OOB switches to `fabric` and cable them by the stable key.
    With `rows` (a layout: device, rack and `#console-n` -> row), every row gets OOB switches of
    its own, recorded in `OobPlan.switch_rows`, for the layout to stand them in that row."""
    oob = intent.oob
    assert oob is not None
    units = units or GrowthUnits()
    problems: list[Problem] = []
    switch_model = catalog.switches[oob.switch.model]
    copper = _copper_ports(catalog, oob.switch.model)
    if copper < 3:
        return None, [
            Problem(
                f"{oob.switch.model} has {copper} copper (RJ45) ports; an OOB switch needs at least 3 for management",
                hint="pick an OOB switch with 10GBASE-T or 1000BASE-T ports",
                field=("oob", "switch", "model"),
            )
        ]

    for rack, count in pdus_per_rack.items():
        for n in range(1, count + 1):
            fabric.add_device(Device(f"pdu-{rack.lower()}-{n}", Role.PDU, Network.OOB, "PDU", None, n, rack=rack))

    server_model = catalog.console_servers[oob.console.model]
    module = catalog.modules[oob.console.module]
    lines_per_server = _lines_per_server(catalog, intent)
    if lines_per_server == 0:
        return None, [Problem(f"{oob.console.model} with {oob.console.module} has no async lines", field=("oob", "console", "module"))]
    node_copper = _gpu_node_copper(catalog, fabric)
    blocks = _members(fabric, rows)
    if rows is not None:
        _add_console_placeholders(catalog, intent, blocks, rows)
    blocks.setdefault(0, _Members({c: [] for c in COPPER_CATEGORIES}, {c: [] for c in LINE_CATEGORIES}))
    layout = _layout(catalog, blocks, units, node_copper, copper, lines_per_server, by_row=rows is not None)
    needed_switches = _switches_for(layout.copper_total, copper)
    needed_servers = max(1, math.ceil(layout.lines_total / lines_per_server))
    pinned_switches = oob.switch.pinned(needed_switches)
    switches, servers = max(needed_switches, pinned_switches or 1), max(needed_servers, oob.console.count or 1)
    notes = []
    for pinned, needed, where, what in (
        (pinned_switches, needed_switches, ("oob", "switch", "count"), f"{oob.switch.model} OOB switches"),
        (oob.console.count, needed_servers, ("oob", "console", "count"), f"{oob.console.model} console servers"),
    ):
        if pinned is not None and pinned < needed:
            why = "every row has its own" if rows is not None else "every scalable unit keeps room for a full unit"
            problems.append(
                Problem(f"the cluster needs {needed} {what} ({why}), the intent pins {pinned}", hint=f"set count: {needed} or more, or remove it", field=where)
            )
        elif pinned is not None and pinned > needed:
            asked = "at least, as asked" if where[1] == "switch" and oob.switch.at_least is not None else "as pinned"
            notes.append(f"oob: {pinned} {what} {asked} ({needed} would do)")
    if problems:
        return None, problems

    names = []
    for key, count in (("console_server", servers), ("oob_switch", switches)):
        pattern = getattr(intent.naming, key)
        role_names = [name_from(pattern, index=i, node=i) for i in range(1, count + 1)]
        if any(not NAME_PATTERN.match(n) or n in fabric.devices for n in role_names) or len(set(role_names)) != count:
            problems.append(Problem(f"the {key} pattern does not give every device a distinct hostname", hint="put {index} in it", field=("naming", key)))
        names.append(role_names)
    if problems:
        return None, problems
    console_servers = [
        fabric.add_device(Device(name, Role.CONSOLE_SERVER, Network.OOB, oob.console.model, None, i)) for i, name in enumerate(names[0], start=1)
    ]
    oob_switches = [
        fabric.add_device(Device(name, Role.OOB_SWITCH, Network.OOB, oob.switch.model, oob.switch.nos, i)) for i, name in enumerate(names[1], start=1)
    ]

    # each OOB switch and console server counts in the block its first slot (line) falls in;
    # spares beyond every block come last
    copper_block, line_block = _block_finder(layout.copper_end), _block_finder(layout.lines_end)
    for number, device in enumerate(oob_switches):
        block = copper_block(_first_slot(number, copper))
        if block is not None:
            blocks[block].lines["oob-switch"].append(device)
    spare_switches = [d for d in oob_switches if copper_block(_first_slot(d.index - 1, copper)) is None]
    if rows is not None:  # by row: each console server where it stands (the placeholders' places)
        real = {f"#console-{d.index}": d for d in console_servers}
        for members in blocks.values():
            members.copper["console-server"] = [real[d.name] for d in members.copper["console-server"] if d.name in real]
        placed = {d.name for m in blocks.values() for d in m.copper["console-server"]}
        spare_servers = [d for d in console_servers if d.name not in placed]
    else:
        for number, device in enumerate(console_servers):
            block = line_block(number * lines_per_server)
            if block is not None:
                blocks[block].copper["console-server"].append(device)
        spare_servers = [d for d in console_servers if line_block((d.index - 1) * lines_per_server) is None]
    switch_rows = {}
    if rows is not None:
        for number, device in enumerate(oob_switches):
            block = copper_block(_first_slot(number, copper))
            if block is not None and block != 0:
                switch_rows[device.name] = block

    allocator = {s.name: PortAllocator(s, switch_model) for s in oob_switches}
    copper_speed = max(g.speed for g in switch_model.port_groups if g.form_factor == "RJ45")
    access = {s.name: allocator[s.name].take(copper_speed, copper) for s in oob_switches}
    copper_cages = tuple(p.cage for p in access[oob_switches[0].name])
    uplinks_each = oob.uplinks or 0
    links: list[Link] = []

    network, management_kind = Network.OOB, LinkKind.MANAGEMENT  # bound once: a member lookup on an Enum class costs 70 ns

    def management_link(port: Port, switch: int, position: int) -> None:
        target = oob_switches[switch]
        theirs = access[target.name][position]
        theirs.speed_gbps = port.speed_gbps = min(port.speed_gbps, theirs.speed_gbps)  # copper negotiates down
        number = switch * (copper + uplinks_each) + position + 1
        links.append(Link(f"MG-{number:05d}", network, management_kind, port, theirs, patch_cable))

    patch_cable = next(iter(catalog.ethernet_cables()), None)  # lengths come with a layout
    for block, members in blocks.items():
        for category in COPPER_CATEGORIES:
            slot = layout.copper[(block, category)]
            for device in members.copper[category]:
                for port in _endpoint_ports(catalog, device):
                    management_link(port, *_switch_of(slot, copper))
                    slot += 1
    if spare_servers:  # pinned spares: after every block, in the spare room
        slot = layout.copper_total
        for device in spare_servers:
            for port in _endpoint_ports(catalog, device):
                if _switch_of(slot, copper)[0] >= switches:
                    return None, [
                        Problem(
                            f"the pinned {oob.console.model} console servers do not fit the OOB switches",
                            hint="pin more OOB switches",
                            field=("oob", "switch", "count"),
                        )
                    ]
                management_link(port, *_switch_of(slot, copper))
                slot += 1
    # each OOB switch's own mgmt0: switch k+1's on switch k's last port, switch 1's on switch 2's
    # second-to-last (a single switch takes its own)
    for number, switch in enumerate(oob_switches):
        own = Port(switch, switch_model.management_port[switch.nos], 0, 0, 1, front_panel=False)  # type: ignore[index]
        if number == 0 and switches > 1:
            management_link(own, 1, copper - 2)
        elif number == 0:
            management_link(own, 0, copper - 1)
        else:
            management_link(own, number - 1, copper - 1)

    # uplinks to the management core (outside the build: its ports are placeholders to assign)
    if oob.uplinks:
        core = fabric.add_device(Device(MANAGEMENT_CORE, Role.MANAGEMENT_CORE, Network.OOB, "-", None, 1))
        uplink_speed = max(g.speed for g in switch_model.port_groups if g.form_factor != "RJ45")
        optics = SwitchOptics(catalog, None, ("oob", "switch", "model"))
        for number, s in enumerate(oob_switches):
            try:
                ours = allocator[s.name].take(uplink_speed, oob.uplinks)
            except OutOfPorts as exc:
                return None, [Problem(str(exc), hint="use fewer uplinks", field=("oob", "uplinks"))]
            for n, port in enumerate(ours, start=1):
                port.optic = optics.choose(s.model, port.cage, uplink_speed)
                far = Port(core, f"{s.name}-uplink{n}", n, 0, uplink_speed, front_panel=False)
                cable_id = f"MG-{number * (copper + uplinks_each) + copper + n:05d}"
                links.append(Link(cable_id, Network.OOB, LinkKind.UPLINK, port, far, link_cable(catalog, port, far)))
        problems += optics.problems.values()

    # console lines by the same key: line slot -> console server, line
    modules: dict[str, int] = {}
    console_links = 0

    def console_line(device: Device, line_slot: int) -> None:
        nonlocal console_links
        server = console_servers[line_slot // lines_per_server]
        line = line_slot % lines_per_server
        slot, offset = divmod(line, module.async_ports)
        port = Port(device, catalog.switches[device.model].console_port, 0, 0, 0, front_panel=False)
        far = Port(server, server_model.line_names.format(slot=slot + 1, port=offset), line + 1, 0, 0, front_panel=False)
        links.append(Link(f"CON-{line_slot + 1:05d}", Network.OOB, LinkKind.CONSOLE, port, far, None))
        modules[server.name] = max(modules.get(server.name, 0), slot + 1)
        console_links += 1

    for block, members in blocks.items():
        for category in LINE_CATEGORIES:
            for rank, device in enumerate(members.lines[category]):
                console_line(device, layout.lines[(block, category)] + rank)
    for rank, device in enumerate(spare_switches):
        line_slot = layout.lines_total + rank
        if line_slot >= servers * lines_per_server:
            return None, [
                Problem(
                    f"the pinned {oob.switch.model} OOB switches have no console line left", hint="pin more console servers", field=("oob", "console", "count")
                )
            ]
        console_line(device, line_slot)

    console_kind = LinkKind.CONSOLE
    links.sort(key=lambda link: (link.kind is console_kind, int(link.id.rpartition("-")[2])))
    for link in links:
        fabric.connect(link)
    management = sum(1 for link in links if link.kind is management_kind)
    return OobPlan(
        switches=switches,
        copper_ports=copper,
        management_ports=management,
        console_servers=servers,
        console_lines=lines_per_server,
        console_ports=console_links,
        modules={s.name: max(1, modules.get(s.name, 0)) for s in console_servers},
        notes=tuple(notes),
        copper_cages=copper_cages,
        switch_rows=switch_rows,
    ), problems


def _endpoint_port_count(catalog: Catalog, device: Device) -> int:
    """len(_endpoint_ports(catalog, device)), without making the ports."""
    if device.role in SERVER_ROLES:
        node = catalog.nodes[device.model]
        return sum(ports.count for ports in (node.bmc, node.mgmt) if ports is not None)
    return 1


def _endpoint_ports(catalog: Catalog, device: Device) -> list[Port]:
    if device.role in SERVER_ROLES:
        return _node_ports(catalog, device)
    if device.role is Role.CONSOLE_SERVER:
        uplink = catalog.console_servers[device.model].uplink
        return [Port(device, uplink.names.format(n=1), 1, 0, uplink.speed, front_panel=False)]
    if device.role is Role.PDU:
        return [Port(device, "net", 1, 0, 1, front_panel=False)]
    model = catalog.switches[device.model]
    return [Port(device, model.management_port[device.nos], 0, 0, 1, front_panel=False)]  # type: ignore[index]
