"""Building the rail-optimized backend graph from the sizing.

Port layout on every leaf: downlinks first (node 1 on the first port, the full unit's ports
reserved even when the last unit is partial), then uplinks grouped by spine. On every spine: the
links of leaf 1 first, then leaf 2, and so on. Cable ids follow the same order: host links node by
node and rail by rail, then fabric links leaf by leaf.
"""

from __future__ import annotations

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
from fabricgen.design.sizing import BackendSizing
from fabricgen.errors import Problem
from fabricgen.intent.model import NAME_PATTERN, Intent

CABLE_PREFIX = "BE-"


def build_backend(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> tuple[Fabric | None, list[Problem]]:
    """The graph, or None with the problems that prevent it (names, optics)."""
    backend = intent.backend
    names, problems = _plan_names(intent, sizing)
    if problems:
        return None, problems
    fabric = Fabric(intent.name)
    leaf_model = catalog.switches[backend.leaf.model]
    spine_model = catalog.switches[backend.spine.model]
    node_model = catalog.nodes[intent.gpu_node]
    assert node_model.backend is not None
    speed = sizing.link_speed_gbps
    host_optics = SwitchOptics(catalog, backend.optics.host_links, ("backend", "optics", "host_links"))
    fabric_optics = SwitchOptics(catalog, backend.optics.fabric_links, ("backend", "optics", "fabric_links"))

    spines = [
        fabric.add_device(Device(name, Role.SPINE, Network.BACKEND, backend.spine.model, backend.spine.nos, i))
        for i, name in enumerate(names[Role.SPINE], start=1)
    ]
    spine_ports = {spine.name: PortAllocator(spine, spine_model) for spine in spines}
    leaves: list[Device] = []
    nodes: list[Device] = []
    leaf_names, node_names = iter(names[Role.LEAF]), iter(names[Role.GPU_NODE])
    for su in range(1, sizing.su_count + 1):
        for rail in range(1, sizing.rails + 1):
            leaves.append(
                fabric.add_device(
                    Device(next(leaf_names), Role.LEAF, Network.BACKEND, backend.leaf.model, backend.leaf.nos, len(leaves) + 1, su=su, rail=rail)
                )
            )
        for _ in range(sizing.su_size(su)):
            nodes.append(fabric.add_device(Device(next(node_names), Role.GPU_NODE, Network.BACKEND, intent.gpu_node, None, len(nodes) + 1, su=su)))
    leaf_ports = {leaf.name: PortAllocator(leaf, leaf_model) for leaf in leaves}

    links: list[tuple[LinkKind, Port, Port]] = []
    try:
        # Host links: NIC i of every node in a unit -> leaf i of that unit (rail alignment).
        downlinks = {leaf.name: leaf_ports[leaf.name].take(speed, sizing.leaf_downlinks) for leaf in leaves}
        for node in nodes:
            su_leaves = leaves[(node.su - 1) * sizing.rails : node.su * sizing.rails]  # type: ignore[operator]
            position = (node.index - 1) - (node.su - 1) * sizing.su_nodes  # type: ignore[operator]
            for rail, leaf in enumerate(su_leaves, start=1):
                nic = Port(node, node_model.backend.names.format(n=rail), rail, 0, speed)
                switch_port = downlinks[leaf.name][position]
                switch_port.optic = host_optics.choose(leaf.model, switch_port.cage, speed)
                links.append((LinkKind.HOST, nic, switch_port))
        # Fabric links: every leaf to every spine, links_per_spine times.
        for leaf in leaves:
            uplinks = leaf_ports[leaf.name].take(speed, sizing.leaf_uplinks)
            for s, spine in enumerate(spines):
                ours = uplinks[s * sizing.links_per_spine : (s + 1) * sizing.links_per_spine]
                theirs = spine_ports[spine.name].take(speed, sizing.links_per_spine)
                for leaf_port, spine_port in zip(ours, theirs, strict=True):
                    leaf_port.optic = fabric_optics.choose(leaf.model, leaf_port.cage, speed)
                    spine_port.optic = fabric_optics.choose(spine.model, spine_port.cage, speed)
                    links.append((LinkKind.FABRIC, leaf_port, spine_port))
    except OutOfPorts as exc:  # sizing should prevent this; say which device if it does not
        return None, [Problem(str(exc), device=exc.device, hint="the switch model has too few ports for this design")]

    fabric.connect_numbered(CABLE_PREFIX, Network.BACKEND, [(kind, a, b, link_cable(catalog, a, b)) for kind, a, b in links])
    return fabric, [*host_optics.problems.values(), *fabric_optics.problems.values()]



def _plan_names(intent: Intent, sizing: BackendSizing) -> tuple[dict[Role, list[str]], list[Problem]]:
    """Every device's name, in build order, checked before any device exists: valid hostnames
    (they become file names) and unique across the fabric."""
    patterns = intent.naming
    names: dict[Role, list[str]] = {
        Role.SPINE: [patterns.spine.format(index=i, su=0, rail=0, node=0) for i in range(1, sizing.spines + 1)],
        Role.LEAF: [],
        Role.GPU_NODE: [],
    }
    for su in range(1, sizing.su_count + 1):
        for rail in range(1, sizing.rails + 1):
            names[Role.LEAF].append(patterns.leaf.format(index=len(names[Role.LEAF]) + 1, su=su, rail=rail, node=0))
        for node in range(1, sizing.su_size(su) + 1):
            names[Role.GPU_NODE].append(patterns.gpu_node.format(index=len(names[Role.GPU_NODE]) + 1, su=su, rail=0, node=node))
    problems: list[Problem] = []
    owner: dict[str, Role] = {}
    for role, role_names in names.items():
        key = _NAMING_KEY[role]
        bad = next((name for name in role_names if not NAME_PATTERN.match(name)), None)
        if bad is not None:
            problems.append(Problem(f"the {key} pattern gives the name {bad!r}, which is not a valid hostname", field=("naming", key)))
        for name in role_names:
            if name in owner:
                problems.append(
                    Problem(
                        f"two devices are named {name!r}",
                        hint="make the pattern distinguish every device, e.g. with {index}, or {su} and {rail} for leaves",
                        field=("naming", key),
                    )
                )
                break
            owner[name] = role
    return names, problems


_NAMING_KEY = {Role.SPINE: "spine", Role.LEAF: "leaf", Role.GPU_NODE: "gpu_node"}
