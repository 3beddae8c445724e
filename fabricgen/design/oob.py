"""The out-of-band management and console network.

- Copper management ports, in build order: every data switch's mgmt0, every server's BMC and
  host management NIC, every console server's uplink, every PDU, and every OOB switch's own mgmt0
  (cabled to the next OOB switch, so no OOB switch manages itself).
- OOB switches: the fewest whose copper ports take them all, or the pinned count; ports are
  spread evenly in order, so neighbours in the build share a switch. Each OOB switch routes its
  own management subnet (a VLAN interface as gateway) and has `uplinks` routed links to the
  management core, so no VLAN spans two OOB switches and nothing depends on spanning tree.
- Console servers: every switch's console port (OOB switches included) on an async line; the
  fewest servers whose modules have the lines, or the pinned count, lines spread evenly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricgen.catalog import Catalog
from fabricgen.design.graph import (
    Device,
    Fabric,
    LinkKind,
    Network,
    OutOfPorts,
    Port,
    PortAllocator,
    Role,
)
from fabricgen.design.optics import SwitchOptics, link_cable
from fabricgen.errors import Problem
from fabricgen.intent.model import NAME_PATTERN, Intent, name_from

MANAGEMENT_CORE = "mgmt-core"


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


def _copper_ports(catalog: Catalog, model: str) -> int:
    return sum(g.count for g in catalog.switches[model].port_groups if g.form_factor == "RJ45")


def _management_endpoints(catalog: Catalog, fabric: Fabric) -> list[Port]:
    """Every copper management port outside the OOB switches, in build order."""
    endpoints = []
    for device in list(fabric.devices.values()):
        if device.is_switch and device.network is not Network.OOB:
            model = catalog.switches[device.model]
            endpoints.append(Port(device, model.management_port[device.nos], 0, 0, 1, front_panel=False))  # type: ignore[index]
        elif device.nos is None and device.role in (Role.GPU_NODE, Role.STORAGE_NODE, Role.MANAGEMENT_NODE):
            node = catalog.nodes[device.model]
            for ports in (node.bmc, node.mgmt):
                if ports is not None:
                    endpoints += [Port(device, ports.names.format(n=n), n, 0, ports.speed, front_panel=False) for n in range(1, ports.count + 1)]
        elif device.role is Role.CONSOLE_SERVER:
            uplink = catalog.console_servers[device.model].uplink
            endpoints.append(Port(device, uplink.names.format(n=1), 1, 0, uplink.speed, front_panel=False))
        elif device.role is Role.PDU:
            endpoints.append(Port(device, "net", 1, 0, 1, front_panel=False))
    return endpoints


def _switches_for(catalog: Catalog, intent: Intent, endpoints: int) -> int:
    per_switch = _copper_ports(catalog, intent.oob.switch.model)  # type: ignore[union-attr]
    # each OOB switch's own mgmt0 takes one more port on a neighbour
    return max(1, math.ceil(endpoints / max(1, per_switch - 1)))


def _lines_per_server(catalog: Catalog, intent: Intent) -> int:
    console = intent.oob.console  # type: ignore[union-attr]
    return catalog.console_servers[console.model].module_slots * catalog.modules[console.module].async_ports


@dataclass(frozen=True)
class OobCounts:
    switches: int  # as built: what is needed, or the pinned count when higher
    servers: int
    needed_switches: int
    needed_servers: int


def oob_counts(catalog: Catalog, intent: Intent, endpoints: int, data_switches: int) -> OobCounts:
    """OOB switches and console servers for `endpoints` copper ports (console-server uplinks not
    included) and `data_switches` consoles. The two depend on each other (each console server
    takes a copper port, each OOB switch a console line), so settle them; both only grow."""
    oob = intent.oob
    assert oob is not None
    lines = _lines_per_server(catalog, intent)
    switches = servers = 1
    for _ in range(4):
        servers = max(math.ceil((data_switches + switches) / lines), oob.console.count or 1)
        switches = max(_switches_for(catalog, intent, endpoints + servers), oob.switch.count or 1)
    return OobCounts(
        switches, servers, _switches_for(catalog, intent, endpoints + servers), math.ceil((data_switches + switches) / lines)
    )


def build_oob(intent: Intent, catalog: Catalog, fabric: Fabric, pdus_per_rack: dict[str, int]) -> tuple[OobPlan | None, list[Problem]]:
    """Add PDUs, console servers and OOB switches to `fabric` and cable them."""
    oob = intent.oob
    assert oob is not None
    problems: list[Problem] = []
    switch_model = catalog.switches[oob.switch.model]
    copper = _copper_ports(catalog, oob.switch.model)
    if copper == 0:
        return None, [Problem(f"{oob.switch.model} has no copper (RJ45) ports for management", hint="pick an OOB switch with 10GBASE-T or 1000BASE-T ports", field=("oob", "switch", "model"))]

    for rack, count in pdus_per_rack.items():
        for n in range(1, count + 1):
            fabric.add_device(Device(f"pdu-{rack.lower()}-{n}", Role.PDU, Network.OOB, "PDU", None, n, rack=rack))

    server_model = catalog.console_servers[oob.console.model]
    module = catalog.modules[oob.console.module]
    if _lines_per_server(catalog, intent) == 0:
        return None, [Problem(f"{oob.console.model} with {oob.console.module} has no async lines", field=("oob", "console", "module"))]
    data_switches = sum(1 for _ in fabric.switches())
    counts = oob_counts(catalog, intent, len(_management_endpoints(catalog, fabric)), data_switches)
    switches, servers = counts.switches, counts.servers
    notes = []
    for pinned, needed, field, what in (
        (oob.switch.count, counts.needed_switches, ("oob", "switch", "count"), f"{oob.switch.model} OOB switches"),
        (oob.console.count, counts.needed_servers, ("oob", "console", "count"), f"{oob.console.model} console servers"),
    ):
        if pinned is not None and pinned < needed:
            problems.append(Problem(f"the cluster needs {needed} {what}, the intent pins {pinned}", hint=f"set count: {needed} or more, or remove it", field=field))
        elif pinned is not None and pinned > needed:
            notes.append(f"oob: {pinned} {what} as pinned ({needed} would do)")
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

    links: list[tuple[LinkKind, Port, Port]] = []
    # management ports, spread evenly in order over the OOB switches; each OOB switch's own mgmt0
    # lands on the next one
    endpoints_list = _management_endpoints(catalog, fabric)
    own = [Port(s, switch_model.management_port[s.nos], 0, 0, 1, front_panel=False) for s in oob_switches]  # type: ignore[index]
    quota = math.ceil((len(endpoints_list) + switches) / switches)  # <= copper ports, as counted above
    load = {s.name: 0 for s in oob_switches}
    assignments: list[tuple[Port, Device]] = []
    for i, port in enumerate(own):
        target = oob_switches[(i + 1) % switches]
        load[target.name] += 1
        assignments.append((port, target))
    position = 0
    for port in endpoints_list:
        while load[oob_switches[position].name] >= quota:
            position += 1
        load[oob_switches[position].name] += 1
        assignments.append((port, oob_switches[position]))
    allocators = {s.name: PortAllocator(s, switch_model) for s in oob_switches}
    copper_speed = max(g.speed for g in switch_model.port_groups if g.form_factor == "RJ45")
    access_ports = {s.name: iter(allocators[s.name].take(copper_speed, load[s.name])) for s in oob_switches}
    for port, target in assignments:
        access = next(access_ports[target.name])
        access.speed_gbps = port.speed_gbps = min(port.speed_gbps, access.speed_gbps)  # copper negotiates down
        links.append((LinkKind.MANAGEMENT, port, access))

    # uplinks to the management core (outside the build: its ports are placeholders to assign)
    if oob.uplinks:
        core = fabric.add_device(Device(MANAGEMENT_CORE, Role.MANAGEMENT_CORE, Network.OOB, "-", None, 1))
        uplink_speed = max(g.speed for g in switch_model.port_groups if g.form_factor != "RJ45")
        optics = SwitchOptics(catalog, None, ("oob", "switch", "model"))
        for s in oob_switches:
            try:
                ours = allocators[s.name].take(uplink_speed, oob.uplinks)
            except OutOfPorts as exc:
                return None, [Problem(str(exc), hint="use fewer uplinks", field=("oob", "uplinks"))]
            for n, port in enumerate(ours, start=1):
                port.optic = optics.choose(s.model, port.cage, uplink_speed)
                links.append((LinkKind.UPLINK, port, Port(core, f"{s.name}-uplink{n}", n, 0, uplink_speed, front_panel=False)))
        problems += optics.problems.values()

    # console lines, spread evenly over the console servers
    console_ports = [
        Port(d, catalog.switches[d.model].console_port, 0, 0, 0, front_panel=False) for d in fabric.devices.values() if d.is_switch
    ]
    per_server = math.ceil(len(console_ports) / servers)
    modules: dict[str, int] = {}
    for index, port in enumerate(console_ports):
        server = console_servers[index // per_server]
        line = index % per_server
        slot, offset = divmod(line, module.async_ports)
        name = server_model.line_names.format(slot=slot + 1, port=offset)
        links.append((LinkKind.CONSOLE, port, Port(server, name, line + 1, 0, 0, front_panel=False)))
        modules[server.name] = max(modules.get(server.name, 0), slot + 1)

    # copper management cables: the catalog's Ethernet patch cable (lengths come with a layout);
    # console lines run on the async module's octal cables, counted per module in the BOM
    patch_cable = next(iter(catalog.ethernet_cables()), None)
    cabled = [(kind, a, b, patch_cable if kind is LinkKind.MANAGEMENT else link_cable(catalog, a, b)) for kind, a, b in links if kind is not LinkKind.CONSOLE]
    fabric.connect_numbered("MG-", Network.OOB, cabled)
    fabric.connect_numbered("CON-", Network.OOB, [(kind, a, b, None) for kind, a, b in links if kind is LinkKind.CONSOLE])

    return OobPlan(
        switches=switches,
        copper_ports=copper,
        management_ports=len(assignments),
        console_servers=servers,
        console_lines=_lines_per_server(catalog, intent),
        console_ports=len(console_ports),
        modules={s.name: max(1, modules.get(s.name, 0)) for s in console_servers},
        notes=tuple(notes),
    ), problems

