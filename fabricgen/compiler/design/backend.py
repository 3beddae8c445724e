"""Building the rail-optimized backend graph from the sizing.

Port layout on every leaf: downlinks first (node 1 on the first port, the full unit's ports
reserved even when the last unit is partial), then uplinks grouped by spine. A leaf serving several
rails (rails_per_leaf) takes them rail-major: every node's NIC of its first rail, then every node's
NIC of its second rail, so each rail is one contiguous block of ports laid out like a one-rail
leaf (splitting the leaf later moves whole blocks, and a port's rail reads off its position).
Top-of-rack leaves take theirs node-major: a node's NICs side by side. On every spine: the
links of leaf 1 first, then leaf 2, and so on (3 tiers: a full pod's downlinks reserved, then the
uplinks grouped by core). On every core: the links of pod 1's spine first. Cable ids follow the
same order: host links node by node and rail by rail, then leaf-spine links leaf by leaf, then
spine-core links spine by spine. A spine-free pair's two leaves are joined by peer links (BE-P
cables) on the ports after their downlinks.
"""

from __future__ import annotations

from fabricgen.basics.errors import Problem
from fabricgen.catalog import Catalog
from fabricgen.compiler.design.graph import (
    Device,
    Fabric,
    LinkKind,
    Network,
    OutOfPorts,
    Port,
    PortAllocator,
    Role,
)
from fabricgen.compiler.design.optics import SwitchOptics, cable_by_optic
from fabricgen.compiler.design.sizing import BackendSizing
from fabricgen.intent.model import NAME_PATTERN, Intent, name_from

CABLE_PREFIX = "BE-"


def build_backend(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> tuple[Fabric | None, list[Problem]]:
    """The graph, or None with the problems that prevent it (names, optics)."""
    backend = intent.backend
    names, problems = _plan_names(intent, sizing)
    if problems:
        return None, problems
    fabric = Fabric(intent.name)
    three_tiers = sizing.tiers == 3
    node_model = catalog.nodes[intent.gpu_node]
    assert node_model.backend is not None
    speed = sizing.link_speed_gbps  # host links: the NICs' speed
    up_speed = sizing.fabric_speed_gbps  # leaf-spine and spine-core links (backend.uplinks.speed)
    host_optics = SwitchOptics(catalog, backend.optics.host_links, ("backend", "optics", "host_links"))
    fabric_optics = SwitchOptics(catalog, backend.optics.fabric_links, ("backend", "optics", "fabric_links"))

    spines, cores, pod_spines, core_groups = _upper_tiers(intent, sizing, names, fabric)
    allocators = {device.name: PortAllocator(device, catalog.switches[device.model]) for device in spines + cores}
    # a 3-tier spine reserves a full pod's downlinks, so growing the last pod keeps every port
    spine_downlinks = {spine.name: allocators[spine.name].take(up_speed, sizing.spine_downlinks) for spine in spines} if three_tiers else {}

    leaves: list[Device] = []
    nodes: list[Device] = []
    leaf_names, node_names = iter(names[Role.LEAF]), iter(names[Role.GPU_NODE])
    for su in range(1, sizing.su_count + 1):
        for leaf_rails in sizing.leaf_rails:
            first = leaf_rails[0]
            leaf = Device(
                next(leaf_names),
                Role.LEAF,
                Network.BACKEND,
                backend.leaf.model,
                backend.leaf.nos,
                len(leaves) + 1,
                su=su,
                rail=first,
                pod=sizing.pod_of(su) if three_tiers else None,
                plane=sizing.plane_label(sizing.plane_of(first)),
                rails=leaf_rails,
            )
            leaves.append(fabric.add_device(leaf))
        for _ in range(sizing.su_size(su)):
            nodes.append(fabric.add_device(Device(next(node_names), Role.GPU_NODE, Network.BACKEND, intent.gpu_node, None, len(nodes) + 1, su=su)))
    leaf_model = catalog.switches[backend.leaf.model]
    allocators.update({leaf.name: PortAllocator(leaf, leaf_model) for leaf in leaves})

    # (low end, high end, cable PID) per tier, each tier one cable-id series
    host_links: list[tuple[Port, Port, str | None]] = []
    leaf_spine: list[tuple[Port, Port, str | None]] = []
    spine_core: list[tuple[Port, Port, str | None]] = []
    peer_links: list[tuple[Port, Port, str | None]] = []
    cable_of = cable_by_optic(catalog)
    # each tier's switch-end optics by cage: every switch of a tier is its tier's model
    leaf_down_optic = host_optics.by_cage(backend.leaf.model, speed)
    leaf_up_optic, spine_down_optic = fabric_optics.by_cage(backend.leaf.model, up_speed), fabric_optics.by_cage(backend.spine.model, up_speed)
    spine_up_optic, core_optic = fabric_optics.by_cage(backend.spine.model, up_speed), fabric_optics.by_cage(backend.core_switch.model, up_speed)
    peer_optic = fabric_optics.by_cage(backend.leaf.model, speed) if sizing.peer_links else {}

    try:
        # Host links: NIC i of every node in a unit -> the leaf serving rail i in that unit (rail alignment).
        downlinks = {leaf.name: allocators[leaf.name].take(speed, sizing.leaf_downlinks) for leaf in leaves}
        per_unit, place_of_rail = sizing.leaves_per_su, sizing.leaf_of_rail()
        # per rail, made once (131,072 NICs at 131,072 GPUs): the NIC's name and its leaf's place in the unit
        rails = [(rail, node_model.backend.port_name(rail), *place_of_rail[rail]) for rail in range(1, sizing.rails + 1)]
        # per place in a unit, made once: the leaf downlink each rail's NIC takes
        downlink_at = [[sizing.downlink_of(position, slot) for _, _, _, slot in rails] for position in range(sizing.su_nodes)]
        for node in nodes:
            su_leaves = leaves[(node.su - 1) * per_unit : node.su * per_unit]  # type: ignore[operator]
            position = (node.index - 1) - (node.su - 1) * sizing.su_nodes  # type: ignore[operator]
            for (rail, nic_name, k, _), downlink in zip(rails, downlink_at[position], strict=True):
                leaf = su_leaves[k]
                nic = Port(node, nic_name, rail, 0, speed)
                switch_port = downlinks[leaf.name][downlink]
                switch_port.optic = optic = leaf_down_optic[switch_port.cage]
                host_links.append((nic, switch_port, cable_of(optic)))
        # Leaf to spine: every leaf to every spine of its pod and plane, links_per_spine times.
        plane_unit_leaves = per_unit // sizing.planes
        # the ignores: Device's su, rail and core_group are Optional for every role; backend leaves
        # have su and rail, 3-tier spines a core_group
        for leaf in leaves if not sizing.spineless else ():
            plane = sizing.plane_of(leaf.rail)  # type: ignore[arg-type]
            unit, k = leaf.su, (leaf.index - 1) % per_unit
            uplinks = allocators[leaf.name].take(up_speed, sizing.leaf_uplinks)  # after the downlinks: no cage serves both
            lps = sizing.links_per_spine
            for s, spine in enumerate(pod_spines[(plane, sizing.pod_of(unit) if three_tiers else 1)]):  # type: ignore[arg-type]
                if three_tiers:  # the leaf's own ports on the spine, by its place in the pod
                    place = ((unit - 1) % sizing.pod_sus) * plane_unit_leaves + k % plane_unit_leaves  # type: ignore[operator]
                    theirs = spine_downlinks[spine.name][place * lps : (place + 1) * lps]
                else:
                    theirs = allocators[spine.name].take(up_speed, lps)
                for leaf_port, spine_port in zip(uplinks[s * lps : (s + 1) * lps], theirs, strict=True):
                    leaf_port.optic, spine_port.optic = low, high = leaf_up_optic[leaf_port.cage], spine_down_optic[spine_port.cage]
                    leaf_spine.append((leaf_port, spine_port, cable_of(high or low)))
        # Spine to core: spine k of every pod to every core of group k, links_per_core times.
        for spine in spines if three_tiers else ():
            group = core_groups[(spine.plane or 1, spine.core_group)]  # type: ignore[index]
            uplinks = allocators[spine.name].take(up_speed, sizing.spine_uplinks)
            lpc = sizing.links_per_core
            for c, core in enumerate(group):
                for spine_port, core_port in zip(uplinks[c * lpc : (c + 1) * lpc], allocators[core.name].take(up_speed, lpc), strict=True):
                    spine_port.optic, core_port.optic = low, high = spine_up_optic[spine_port.cage], core_optic[core_port.cage]
                    spine_core.append((spine_port, core_port, cable_of(high or low)))
        # A spine-free pair: its peer links, leaf 1 to leaf 2, after the downlinks (fabric optics).
        if sizing.peer_links:
            for low_port, high_port in zip(*(allocators[leaf.name].take(speed, sizing.peer_links) for leaf in leaves), strict=True):
                low_port.optic, high_port.optic = low, high = peer_optic[low_port.cage], peer_optic[high_port.cage]
                peer_links.append((low_port, high_port, cable_of(high or low)))
    except OutOfPorts as exc:  # sizing should prevent this; say which device if it does not
        return None, [Problem(str(exc), device=exc.device, hint="the switch model has too few ports for this design")]

    # cable ids as connect_numbered gives them: BE-00001... to a leaf, BE-S00001... to a spine, BE-C00001... to a core
    fabric.connect_series(CABLE_PREFIX, Network.BACKEND, LinkKind.HOST, host_links)
    fabric.connect_series(f"{CABLE_PREFIX}S", Network.BACKEND, LinkKind.FABRIC, leaf_spine)
    fabric.connect_series(f"{CABLE_PREFIX}C", Network.BACKEND, LinkKind.FABRIC, spine_core)
    fabric.connect_series(f"{CABLE_PREFIX}P", Network.BACKEND, LinkKind.PEER, peer_links)
    return fabric, [*host_optics.problems.values(), *fabric_optics.problems.values()]


def _upper_tiers(
    intent: Intent, sizing: BackendSizing, names: dict[Role, list[str]], fabric: Fabric
) -> tuple[list[Device], list[Device], dict[tuple[int, int], list[Device]], dict[tuple[int, int], list[Device]]]:
    """Spines plane by plane and pod by pod, and (3 tiers) each plane's cores group by group:
    spine k of every pod links to core group k. Returns them with their lookups by (plane, pod)
    and (plane, group)."""
    backend = intent.backend
    three_tiers = sizing.tiers == 3
    pod_spines: dict[tuple[int, int], list[Device]] = {}
    core_groups: dict[tuple[int, int], list[Device]] = {}
    spine_names, core_names = iter(names[Role.SPINE]), iter(names[Role.CORE])
    spines: list[Device] = []
    cores: list[Device] = []
    for plane in range(1, sizing.planes + 1):
        for pod in range(1, sizing.pods + 1):
            for k in range(1, sizing.pod_spines + 1):
                spine = Device(
                    next(spine_names),
                    Role.SPINE,
                    Network.BACKEND,
                    backend.spine.model,
                    backend.spine.nos,
                    len(spines) + 1,
                    pod=pod if three_tiers else None,
                    plane=sizing.plane_label(plane),
                    core_group=k if three_tiers else None,
                )
                spines.append(fabric.add_device(spine))
                pod_spines.setdefault((plane, pod), []).append(spine)
        for k in range(1, sizing.pod_spines + 1 if three_tiers else 1):
            for _ in range(sizing.group_cores):
                core = Device(
                    next(core_names),
                    Role.CORE,
                    Network.BACKEND,
                    backend.core_switch.model,
                    backend.core_switch.nos,
                    len(cores) + 1,
                    plane=sizing.plane_label(plane),
                    core_group=k,
                )
                cores.append(fabric.add_device(core))
                core_groups.setdefault((plane, k), []).append(core)
    return spines, cores, pod_spines, core_groups


def _plan_names(intent: Intent, sizing: BackendSizing) -> tuple[dict[Role, list[str]], list[Problem]]:
    """Every device's name, in build order, checked before any device exists: valid hostnames
    (they become file names) and unique across the fabric."""
    patterns = intent.naming
    three_tiers = sizing.tiers == 3
    names: dict[Role, list[str]] = {Role.SPINE: [], Role.CORE: [], Role.LEAF: [], Role.GPU_NODE: []}
    for plane in range(1, sizing.planes + 1):
        for pod in range(1, sizing.pods + 1):
            for _ in range(sizing.pod_spines):
                names[Role.SPINE].append(name_from(patterns.spine, len(names[Role.SPINE]) + 1, pod=pod if three_tiers else 0, plane=plane))
        for _ in range(sizing.cores // sizing.planes):
            names[Role.CORE].append(name_from(patterns.core, len(names[Role.CORE]) + 1, plane=plane))
    for su in range(1, sizing.su_count + 1):
        pod = sizing.pod_of(su) if three_tiers else 0
        for leaf_rails in sizing.leaf_rails:  # {rail} of a leaf with several rails: its first
            names[Role.LEAF].append(
                name_from(patterns.leaf, len(names[Role.LEAF]) + 1, su=su, rail=leaf_rails[0], pod=pod, plane=sizing.plane_of(leaf_rails[0]))
            )
        for node in range(1, sizing.su_size(su) + 1):
            names[Role.GPU_NODE].append(name_from(patterns.gpu_node, len(names[Role.GPU_NODE]) + 1, su=su, node=node, pod=pod))
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


_NAMING_KEY = {Role.SPINE: "spine", Role.CORE: "core", Role.LEAF: "leaf", Role.GPU_NODE: "gpu_node"}
