"""Storage and management servers, and the frontend and storage leaf/spine fabrics they share
with the GPU nodes' frontend and storage ports.

Sizing (per fabric):
- every server port on a fabric runs one speed; uplinks use the leaf's fastest native cages that
  the spine also offers;
- a leaf's host capacity is the most server ports it can take while keeping the intent's
  downlink:uplink ratio (server ports first, then uplinks, in front-panel order);
- `leaf-pair`: leaves come in pairs and a server's ports alternate between the two, so each
  server survives a leaf failure without MLAG; `single-leaf`: all of a server's ports on one leaf;
- servers fill leaf groups in order (storage nodes, management nodes, GPU nodes: growth appends) and never span
  two groups; the fewest groups that fit, each filled in turn (so more servers only add leaves), or
  the pinned leaf count with servers spread evenly;
- spines: the fewest (at least two) that take every leaf's uplinks evenly, or the pinned count;
- `spine.count: 0`: a collapsed pair, two leaves and no spines, each server on both, the leaves
  joined by `peer_links` routed peer links at the leaf's fastest speed (after the server ports,
  whose count is what the leaf holds beside them); refused when the servers need more leaves.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction

from fabricgen.basics.errors import DesignError, Problem
from fabricgen.basics.units import format_ratio
from fabricgen.catalog import Catalog
from fabricgen.catalog.model import NodePorts, SwitchModel
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
from fabricgen.compiler.design.optics import SwitchOptics, link_cable
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.compiler.design.sizing import IDLE_SHARE, MIN_SPINES, choose_uplinks, free_uplink_ports, idle_ports
from fabricgen.compiler.design.three_tier import ThreeTierSizing, size_three_tier
from fabricgen.intent.model import NAME_PATTERN, HostFabric, Intent, name_from

CABLE_PREFIX = {Network.FRONTEND: "FE-", Network.STORAGE: "ST-"}
SERVER_SECTIONS = {"storage_nodes": Role.STORAGE_NODE, "management_nodes": Role.MANAGEMENT_NODE}
NAMING_KEY = {Role.STORAGE_NODE: "storage_node", Role.MANAGEMENT_NODE: "management_node"}


def add_servers(intent: Intent, catalog: Catalog, fabric: Fabric) -> list[Problem]:
    """Storage and management nodes as devices (they attach to fabrics and the OOB network)."""
    problems: list[Problem] = []
    for key, role in SERVER_SECTIONS.items():
        servers = getattr(intent, key)
        if servers is None:
            continue
        pattern = getattr(intent.naming, NAMING_KEY[role])
        separate = intent.frontend is not None and intent.frontend.storage == "separate"
        network = Network.STORAGE if role is Role.STORAGE_NODE and separate else Network.FRONTEND
        for index in range(1, servers.count + 1):
            name = name_from(pattern, index=index, node=index)
            if not NAME_PATTERN.match(name) or name in fabric.devices:
                why = "is not a valid hostname" if not NAME_PATTERN.match(name) else "is already another device's name"
                problems.append(Problem(f"the {NAMING_KEY[role]} pattern gives {name!r}, which {why}", field=("naming", NAMING_KEY[role])))
                break
            fabric.add_device(Device(name, role, network, servers.model, None, index))
    return problems


@dataclass(frozen=True)
class _Attachment:
    server: Device
    ports: NodePorts
    kind: str  # the node model's port set: frontend or storage


def _attachments(intent: Intent, catalog: Catalog, fabric: Fabric, network: Network) -> list[_Attachment]:
    """Which server port sets land on this fabric, in attach order."""
    converged = intent.frontend is not None and intent.frontend.storage == "converged"
    kinds = {
        Network.FRONTEND: ("frontend", "storage") if converged else ("frontend",),
        Network.STORAGE: ("storage",),
    }[network]
    found = []
    # servers whose count does not grow with the GPUs first, so adding GPU nodes only appends
    for role in (Role.STORAGE_NODE, Role.MANAGEMENT_NODE, Role.GPU_NODE):
        for server in fabric.by_role(role):
            model = catalog.nodes[server.model]
            found += [_Attachment(server, getattr(model, kind), kind) for kind in kinds if getattr(model, kind) is not None]
    return found


def server_port_problems(intent: Intent, catalog: Catalog) -> list[Problem]:
    """A node model without the ports the design needs (e.g. storage nodes with no storage ports
    when a storage network is built)."""
    problems: list[Problem] = []
    if intent.frontend is None:
        # their data ports attach to the frontend (or the storage fabric beside it): without one
        # they would be listed in the BOM with no cable
        for key in SERVER_SECTIONS:
            servers = getattr(intent, key)
            if servers is not None and servers.count:
                problems.append(
                    Problem(
                        f"{servers.count} {key.replace('_', ' ')} ({servers.model}) attach to the frontend network, but the intent builds no frontend",
                        hint=f"add a 'frontend:' section (storage: converged or separate), or remove {key}",
                        field=(key,),
                    )
                )
        return problems
    needs = {
        ("storage_nodes", "model"): ("storage",),
        ("management_nodes", "model"): ("frontend",),
    }
    for (key, field), kinds in needs.items():
        servers = getattr(intent, key)
        if servers is None or servers.count == 0:
            continue
        model = catalog.nodes[servers.model]
        if not any(getattr(model, kind) is not None for kind in kinds):
            problems.append(
                Problem(
                    f"{servers.model} has no {' or '.join(kinds)} ports, but {key.replace('_', ' ')} attach to the {kinds[0]} network",
                    hint=f"add '{kinds[0]}:' ports to the {servers.model} catalog entry, or pick a model that has them",
                    field=(key, field),
                )
            )
    return problems


def _leaf_capacity(model: SwitchModel, nos: str, host_speed: int, uplink_speed: int, ratio) -> tuple[int, int]:
    """(server ports, uplinks) for the largest server count a leaf takes at this ratio."""
    for hosts in range(model.ports_at(host_speed), 0, -1):
        uplinks = math.ceil(hosts * host_speed / (ratio * uplink_speed))
        scratch = PortAllocator(Device("scratch", Role.LEAF, Network.FRONTEND, "", nos, 0), model)
        try:
            scratch.take(host_speed, hosts)
            scratch.take(uplink_speed, uplinks)
        except OutOfPorts:
            continue
        return hosts, uplinks
    return 0, 0


def _pair_capacity(model: SwitchModel, nos: str, host_speed: int, peer_speed: int, peer_links: int) -> int:
    """Server ports a leaf of a collapsed pair takes: the most that leave `peer_links` ports at
    `peer_speed` (server ports first, then the peer links, in front-panel order)."""
    for hosts in range(model.ports_at(host_speed), 0, -1):
        if free_uplink_ports(model, nos, host_speed, hosts, peer_speed) >= peer_links:
            return hosts
    return 0


def _collapsed_pair(
    intent: Intent,
    catalog: Catalog,
    fabric: Fabric,
    network: Network,
    spec: HostFabric,
    section: str,
    groups_of_ports: list[list[_Attachment]],
    host_speed: int,
    peer_speed: int,
    capacity: int,
    notes: list[str],
) -> tuple[LeafSpinePlan | None, list[Problem]]:
    """`spine.count: 0`: two leaves, every server's ports alternating over them (as a leaf pair),
    then `spec.peer_links` peer links from the first leaf to the second (cable ids <prefix>P00001...),
    each a /31 with an eBGP session: a server's addresses on either leaf reach the other's."""
    names, name_problems = _names(intent, fabric, network, 2, 0, None)
    if name_problems:
        return None, name_problems
    leaf_model = catalog.switches[spec.leaf.model]
    leaves = [fabric.add_device(Device(name, Role.LEAF, network, spec.leaf.model, spec.leaf.nos, i)) for i, name in enumerate(names["leaf"], start=1)]
    host_optics = SwitchOptics(catalog, spec.optics.host_links, (section, "optics", "host_links"))
    fabric_optics = SwitchOptics(catalog, spec.optics.fabric_links, (section, "optics", "fabric_links"))
    allocators = {leaf.name: PortAllocator(leaf, leaf_model) for leaf in leaves}
    free = {leaf.name: iter(allocators[leaf.name].take(host_speed, capacity)) for leaf in leaves}
    links: list[tuple[LinkKind, Port, Port]] = []
    for sets in groups_of_ports:
        turn = 0
        for attachment in sets:
            for n in range(1, attachment.ports.count + 1):
                leaf = leaves[turn % 2]
                turn += 1
                server_port = Port(attachment.server, attachment.ports.names.format(n=n), n, 0, host_speed)
                switch_port = next(free[leaf.name])
                switch_port.optic = host_optics.choose(leaf.model, switch_port.cage, host_speed)
                links.append((LinkKind.HOST, server_port, switch_port))
    first, second = (allocators[leaf.name].take(peer_speed, spec.peer_links) for leaf in leaves)
    for low, high in zip(first, second, strict=True):
        low.optic, high.optic = (fabric_optics.choose(port.device.model, port.cage, peer_speed) for port in (low, high))
        links.append((LinkKind.PEER, low, high))
    fabric.connect_numbered(CABLE_PREFIX[network], network, [(kind, a, b, link_cable(catalog, a, b)) for kind, a, b in links])
    notes.append(
        f"{network.value}: a collapsed pair, no spines: every server has a port on each of the 2 leaves, joined by {spec.peer_links} routed "
        f"peer links at {peer_speed}G (a /31 and an eBGP session each, ECMP over them)"
    )
    plan = LeafSpinePlan(
        network=network,
        section=section,
        spec=spec,
        leaves=2,
        spines=0,
        leaf_downlinks=capacity,
        leaf_uplinks=0,
        links_per_spine=0,
        requested_ratio=spec.ratio,
        built_ratio=spec.ratio,
        host_addressing="segment" if spec.routing == "vxlan-evpn" else spec.host_addressing,
        host_pool_name="hosts",
        notes=tuple(notes),
        peer_links=spec.peer_links,
    )
    return plan, [*host_optics.problems.values(), *fabric_optics.problems.values()]


def _uplink_speed(leaf: SwitchModel, spine: SwitchModel) -> int | None:
    speeds = sorted({g.speed for g in leaf.port_groups if g.form_factor != "RJ45" and spine.ports_at(g.speed)}, reverse=True)
    return speeds[0] if speeds else None


def _place(loads: list[tuple[int, ...]], capacity: int, groups: int | None) -> list[int] | None:
    """Group index per server, servers in order, never spanning groups. `loads[i][k]` is server
    i's ports on leaf k of its group. With `groups` None: as few as fit; else spread evenly."""

    def fill(quota: int) -> list[int]:
        placed, group, used = [], 0, [0] * len(loads[0])
        for load in loads:
            if any(u + n > quota for u, n in zip(used, load, strict=True)):
                group, used = group + 1, [0] * len(load)
            used = [u + n for u, n in zip(used, load, strict=True)]
            placed.append(group)
        return placed

    if not loads:
        return []
    if groups is None:
        return fill(capacity)
    busiest = max(sum(load[k] for load in loads) for k in range(len(loads[0])))
    for quota in range(max(math.ceil(busiest / groups), *(max(load) for load in loads)), capacity + 1):
        placed = fill(quota)
        if placed[-1] < groups:
            return placed
    return None


def build_host_fabric(
    intent: Intent, catalog: Catalog, fabric: Fabric, network: Network, spec: HostFabric, section: str
) -> tuple[LeafSpinePlan | None, list[Problem]]:
    """Size and wire one frontend or storage fabric into `fabric`."""
    attachments = _attachments(intent, catalog, fabric, network)
    leaf_model, spine_model = catalog.switches[spec.leaf.model], catalog.switches[spec.spine.model]
    if not attachments:
        return None, [Problem(f"no server has ports for the {network.value} network", field=(section,))]
    speeds = sorted({a.ports.speed for a in attachments})
    if len(speeds) > 1:
        by_speed = {s: ", ".join(sorted({f"{a.server.model} {a.kind}" for a in attachments if a.ports.speed == s})) for s in speeds}
        listed = " and ".join(f"{s}G ({models})" for s, models in by_speed.items())
        return None, [
            Problem(
                f"servers attach to the {network.value} network at {listed}; a fabric's server ports run one speed",
                hint="use node models with the same port speed, or a separate storage fabric (frontend.storage: separate)",
                field=(section,),
            )
        ]
    host_speed = speeds[0]
    collapsed = spec.spine.count == 0  # a collapsed pair: its peer links run at the leaf's fastest speed
    uplink_speed = _uplink_speed(leaf_model, leaf_model if collapsed else spine_model)
    field = (section, "leaf", "model")
    if not leaf_model.ports_at(host_speed) or uplink_speed is None:
        return None, [
            Problem(
                f"{spec.leaf.model} has no {host_speed}G ports for the servers, or no port speed {spec.spine.model} also has for uplinks",
                hint="pick a leaf model with ports at the servers' speed and faster uplinks",
                field=field,
            )
        ]
    if collapsed:
        capacity, min_uplinks = _pair_capacity(leaf_model, spec.leaf.nos, host_speed, uplink_speed, spec.peer_links), 0
    else:
        capacity, min_uplinks = _leaf_capacity(leaf_model, spec.leaf.nos, host_speed, uplink_speed, spec.ratio)
    if capacity == 0:
        return None, [
            Problem(
                f"at {format_ratio(spec.ratio)} no server port fits a {spec.leaf.model} leaf", hint="use a more oversubscribed ratio", field=(section, "ratio")
            )
        ]

    width = 2 if spec.attach == "leaf-pair" else 1
    # a server's port sets stay together on one leaf group; its ports alternate over the group
    servers: dict[str, list[_Attachment]] = {}
    for a in attachments:
        servers.setdefault(a.server.name, []).append(a)
    groups_of_ports = list(servers.values())
    loads = []
    for sets in groups_of_ports:
        total = sum(a.ports.count for a in sets)
        loads.append(tuple(len(range(k, total, width)) for k in range(width)))
    too_big = next((sets for sets, load in zip(groups_of_ports, loads, strict=True) if max(load) > capacity), None)
    if too_big is not None:
        return None, [
            Problem(
                f"{too_big[0].server.model} has {sum(a.ports.count for a in too_big)} ports for this network; "
                f"a {spec.leaf.model} leaf takes {capacity} at {format_ratio(spec.ratio)}",
                field=field,
            )
        ]
    needed_groups = _place(loads, capacity, None)[-1] + 1  # type: ignore[index]
    problems: list[Problem] = []
    # at_least rounds up to whole pairs of what the servers need; count is used as written
    pinned = spec.leaf.pinned(needed_groups * width)
    groups = needed_groups
    notes = []
    if pinned is not None:
        if pinned % width:
            problems.append(
                Problem(
                    f"{pinned} leaves cannot form leaf pairs",
                    hint=f"use an even count ({pinned + 1}), or attach: single-leaf",
                    field=(section, "leaf", "count"),
                )
            )
        elif pinned < needed_groups * width:
            problems.append(
                Problem(
                    f"the servers need {needed_groups * width} {spec.leaf.model} leaves ({sum(a.ports.count for a in attachments)} ports at "
                    f"{host_speed}G, {capacity} per leaf at {format_ratio(spec.ratio)}), the intent pins {pinned}",
                    hint=f"set count: {needed_groups * width} or more, or remove it",
                    field=(section, "leaf", "count"),
                )
            )
        else:
            groups = pinned // width
            if groups > needed_groups:
                how = "as pinned" if spec.leaf.count is not None else "at least, as asked"
                notes.append(f"{network.value}: {pinned} leaves {how} ({needed_groups * width} would hold every server port)")
    if collapsed and (pinned or needed_groups * width) != 2:
        problems.append(
            Problem(
                f"{section}.spine.count: 0 builds a collapsed pair of {spec.leaf.model} leaves ({capacity} {host_speed}G server ports each beside "
                f"{spec.peer_links} peer links), but the servers need {needed_groups * width} leaves"
                + (f" (the intent pins {pinned})" if pinned not in (None, needed_groups * width) else ""),
                hint=f"remove {section}.spine.count to add spines, or pick a leaf with more {host_speed}G ports",
                field=(section, "spine", "count"),
            )
        )
    if problems:
        return None, problems
    # unpinned: leaves fill in order, so more servers only add leaves (growth moves none); pinned:
    # the servers spread evenly over the leaves asked for
    placement = _place(loads, capacity, groups if pinned is not None else None)
    assert placement is not None
    leaves = groups * width

    if collapsed:
        return _collapsed_pair(intent, catalog, fabric, network, spec, section, groups_of_ports, host_speed, uplink_speed, capacity, notes)
    max_up = free_uplink_ports(leaf_model, spec.leaf.nos, host_speed, capacity, uplink_speed)
    tiers = spec.tiers or 2
    choice = choose_uplinks(leaves, min_uplinks, max_up, spine_model.ports_at(uplink_speed), spec.spine.count, MIN_SPINES) if tiers == 2 else None
    if choice is None and spec.tiers is None and spec.spine.count is None:
        tiers = 3
        notes.append(f"{network.value}: {leaves} leaves do not fit 2 tiers of {spec.spine.model} spines: built 3 tiers (set {section}.tiers to choose)")
    three: ThreeTierSizing | None = None
    if tiers == 3:
        three, three_problems = _size_three_tiers(catalog, spec, section, groups, width, min_uplinks, uplink_speed)
        if three is None:
            return None, three_problems
        uplinks, spines = three.leaf_uplinks, three.spines
    elif choice is None:
        return None, [
            Problem(
                f"{leaves} leaves x {min_uplinks}+ uplinks at {uplink_speed}G do not spread evenly over "
                f"{spec.spine.count or 'any number of'} {spec.spine.model} spines",
                hint="change the spine count, the ratio, or the spine model" + ("" if spec.tiers else f", or set {section}.tiers: 3"),
                field=(section, "spine", "count") if spec.spine.count else (section, "spine", "model"),
            )
        ]
    else:
        uplinks, spines = choice
    if three is None and spec.spine.count is not None:
        fewest = choose_uplinks(leaves, min_uplinks, max_up, spine_model.ports_at(uplink_speed), None, MIN_SPINES)
        if fewest is not None and fewest[1] < spines:
            notes.append(f"{network.value}: {spines} spines as pinned ({fewest[1]} would take the uplinks)")
    built = Fraction(capacity * host_speed, uplinks * uplink_speed)
    names, name_problems = _names(intent, fabric, network, leaves, spines, three)
    if name_problems:
        return None, name_problems

    spine_devices = []
    for i, name in enumerate(names["spine"], start=1):
        pod, group = (None, None) if three is None else ((i - 1) // three.pod_spines + 1, (i - 1) % three.pod_spines + 1)
        spine_devices.append(fabric.add_device(Device(name, Role.SPINE, network, spec.spine.model, spec.spine.nos, i, pod=pod, core_group=group)))
    core_model = catalog.switches[spec.core_switch.model]
    core_devices = []
    for i, name in enumerate(names.get("core", []), start=1):
        group = (i - 1) // three.group_cores + 1  # type: ignore[union-attr]
        core_devices.append(fabric.add_device(Device(name, Role.CORE, network, spec.core_switch.model, spec.core_switch.nos, i, core_group=group)))
    leaf_devices = [
        fabric.add_device(
            Device(name, Role.LEAF, network, spec.leaf.model, spec.leaf.nos, i, pod=None if three is None else (i - 1) // (three.pod_sus * width) + 1)
        )
        for i, name in enumerate(names["leaf"], start=1)
    ]
    host_optics = SwitchOptics(catalog, spec.optics.host_links, (section, "optics", "host_links"))
    fabric_optics = SwitchOptics(catalog, spec.optics.fabric_links, (section, "optics", "fabric_links"))
    leaf_ports = {leaf.name: PortAllocator(leaf, leaf_model) for leaf in leaf_devices}
    spine_ports = {spine.name: PortAllocator(spine, spine_model) for spine in spine_devices}
    core_ports = {core.name: PortAllocator(core, core_model) for core in core_devices}
    links: list[tuple[LinkKind, Port, Port]] = []
    free = {leaf.name: iter(leaf_ports[leaf.name].take(host_speed, capacity)) for leaf in leaf_devices}
    for sets, group in zip(groups_of_ports, placement, strict=True):
        turn = 0
        for attachment in sets:
            for n in range(1, attachment.ports.count + 1):
                leaf = leaf_devices[group * width + turn % width]
                turn += 1
                server_port = Port(attachment.server, attachment.ports.names.format(n=n), n, 0, host_speed)
                switch_port = next(free[leaf.name])
                switch_port.optic = host_optics.choose(leaf.model, switch_port.cage, host_speed)
                links.append((LinkKind.HOST, server_port, switch_port))

    def fabric_link(low: Port, high: Port) -> None:
        low.optic = fabric_optics.choose(low.device.model, low.cage, uplink_speed)
        high.optic = fabric_optics.choose(high.device.model, high.cage, uplink_speed)
        links.append((LinkKind.FABRIC, low, high))

    lps = 1 if three is not None else uplinks // spines
    if three is None:
        for leaf in leaf_devices:
            ours = leaf_ports[leaf.name].take(uplink_speed, uplinks)
            for s, spine in enumerate(spine_devices):
                theirs = spine_ports[spine.name].take(uplink_speed, lps)
                for leaf_port, spine_port in zip(ours[s * lps : (s + 1) * lps], theirs, strict=True):
                    fabric_link(leaf_port, spine_port)
    else:
        # as the 3-tier backend: a spine reserves a full pod's downlinks (growing the last pod keeps
        # every port), leaf i of a pod on the spine's port i; spine k of every pod to core group k
        pod_leaves = three.pod_sus * width
        reserved = {spine.name: spine_ports[spine.name].take(uplink_speed, three.spine_downlinks) for spine in spine_devices}
        for position, leaf in enumerate(leaf_devices):
            ours = leaf_ports[leaf.name].take(uplink_speed, uplinks)
            pod_spines = spine_devices[(leaf.pod - 1) * three.pod_spines : leaf.pod * three.pod_spines]  # type: ignore[operator]
            for leaf_port, spine in zip(ours, pod_spines, strict=True):
                fabric_link(leaf_port, reserved[spine.name][position % pod_leaves])
        lpc = three.links_per_spine_per_core
        for spine in spine_devices:
            ours = spine_ports[spine.name].take(uplink_speed, three.spine_uplinks)
            cores = core_devices[(spine.core_group - 1) * three.group_cores : spine.core_group * three.group_cores]  # type: ignore[operator]
            for c, core in enumerate(cores):
                for spine_port, core_port in zip(ours[c * lpc : (c + 1) * lpc], core_ports[core.name].take(uplink_speed, lpc), strict=True):
                    fabric_link(spine_port, core_port)
    fabric.connect_numbered(CABLE_PREFIX[network], network, [(kind, a, b, link_cable(catalog, a, b)) for kind, a, b in links])

    if built != spec.ratio:
        notes.append(
            f"{network.value}: requested {format_ratio(spec.ratio)}, built {format_ratio(built)} "
            f"({capacity} x {host_speed}G down, {uplinks} x {uplink_speed}G up per leaf)"
        )
    plan = LeafSpinePlan(
        network=network,
        section=section,
        spec=spec,
        leaves=leaves,
        spines=spines,
        leaf_downlinks=capacity,
        leaf_uplinks=uplinks,
        links_per_spine=lps,
        requested_ratio=spec.ratio,
        built_ratio=built,
        host_addressing="segment" if spec.routing == "vxlan-evpn" else spec.host_addressing,
        host_pool_name="hosts",
        notes=tuple(notes),
        **(_three_tier_plan(three, width, core_model.ports_at(uplink_speed)) if three is not None else {}),
    )
    server_ports = Counter(switch_port.device.name for kind, _, switch_port in links if kind is LinkKind.HOST)
    idle = _idle_port_notes(catalog, plan, host_speed, uplink_speed, max(server_ports.values()), width)
    if idle:
        plan = replace(plan, notes=plan.notes + tuple(idle))
    return plan, [*host_optics.problems.values(), *fabric_optics.problems.values()]


def _idle_port_notes(catalog: Catalog, plan: LeafSpinePlan, host_speed: int, uplink_speed: int, busiest: int, width: int) -> list[str]:
    """One note per role (leaf, spine, core) of a frontend or storage fabric with spines whose
    switches leave more than IDLE_SHARE of their ports idle (sizing.idle_ports, as the backend's
    notes), with the setting that would use them. Leaves are counted on the busiest leaf (`busiest`
    server ports): unpinned, servers fill the leaves in turn, so only the last group keeps ports for
    growth. Not noted: a role whose count the intent pins (count or at_least: the build notes those)."""
    spec = plan.spec
    assert isinstance(spec, HostFabric)
    net, ratio = plan.network.value, format_ratio(spec.ratio)
    notes: list[str] = []
    if spec.leaf.count is None and spec.leaf.at_least is None:
        taken = ((host_speed, busiest), (uplink_speed, plan.leaf_uplinks))
        idle, total = idle_ports(catalog.switches[spec.leaf.model], spec.leaf.nos, host_speed, taken)
        if idle > total * IDLE_SHARE:
            if busiest < plan.leaf_downlinks:
                use = (
                    f"the servers take {busiest} of the {plan.leaf_downlinks} server ports a leaf holds at {ratio}; "
                    f"more servers would fill them, or a leaf model with fewer {host_speed}G ports would use them"
                )
            else:
                use = f"a more oversubscribed ratio than {ratio} would put servers on them, or a leaf model with fewer {host_speed}G ports would use them"
            notes.append(f"{net} leaves: {idle} of {total} {host_speed}G ports idle on each leaf; {use}")
    if spec.spine.count is None:
        spine_model = catalog.switches[spec.spine.model]
        if plan.tiers == 3:
            used = plan.pod_leaves + plan.spine_uplinks  # a spine reserves a full pod's downlinks
            most = math.floor(spine_model.ports_at(uplink_speed) * spec.spine_ratio / (spec.spine_ratio + 1)) // width * width
            if plan.pod_leaves < most:
                use = f"pod_leaves: {most} fills them"
            else:
                use = f"a spine model with fewer {uplink_speed}G ports, or another spine_ratio, would use them"
        else:
            used = plan.leaves * plan.links_per_spine
            use = f"a spine model with fewer {uplink_speed}G ports would use them; more leaves would fill them"
        idle, total = idle_ports(spine_model, spec.spine.nos, uplink_speed, ((uplink_speed, used),))
        if idle > total * IDLE_SHARE:
            notes.append(f"{net} spines: {idle} of {total} {uplink_speed}G ports idle on each spine; {use}")
    if plan.tiers == 3 and spec.core_switch.count is None:
        core = spec.core_switch
        idle, total = idle_ports(catalog.switches[core.model], core.nos, uplink_speed, ((uplink_speed, plan.pods * plan.links_per_core),))
        if idle > total * IDLE_SHARE:
            notes.append(
                f"{net} cores: {idle} of {total} {uplink_speed}G ports idle on each core ({plan.pods} pod{'s' if plan.pods > 1 else ''}); "
                f"a core model with fewer {uplink_speed}G ports would use them; more pods would fill them"
            )
    return notes


def _size_three_tiers(
    catalog: Catalog, spec: HostFabric, section: str, groups: int, width: int, leaf_uplinks: int, speed: int
) -> tuple[ThreeTierSizing | None, list[Problem]]:
    """Pods of leaf groups with their own spines (one link from every leaf to every spine of its
    pod), joined by a core in groups: `size_three_tier` with a leaf group (pair) in the place of
    a scalable unit and a leaf's uplinks in the place of its nodes, so the pod/core rules are the
    backend's. Every tier at `speed`, the leaves' uplink speed."""
    spine_ports = catalog.switches[spec.spine.model].ports_at(speed)
    core_ports = catalog.switches[spec.core_switch.model].ports_at(speed)
    if not core_ports:
        return None, [
            Problem(
                f"{spec.core_switch.model} has no {speed}G ports for the spines' uplinks", hint="pick a core model with them", field=(section, "core", "model")
            )
        ]
    if spec.pod_leaves is not None and spec.pod_leaves % width:
        return None, [
            Problem(f"a pod of {spec.pod_leaves} leaves splits a leaf pair", hint="use an even count, or attach: single-leaf", field=(section, "pod_leaves"))
        ]
    try:
        three = size_three_tier(
            nodes=groups * leaf_uplinks,
            rails=width,
            su_nodes=leaf_uplinks,
            leaf_ports=2 * leaf_uplinks,
            spine_ports=spine_ports,
            core_ports=core_ports,
            spine_ratio=spec.spine_ratio,
            pod_sus=spec.pod_leaves // width if spec.pod_leaves else None,
            cores=spec.core_switch.count,
        )
    except DesignError as exc:  # the backend's words; point at this section's fields
        renamed: dict[str | int, str] = {"pod_gpus": "pod_leaves", "gpus": "core"}
        return None, [
            Problem(
                p.message,
                hint=p.hint,
                field=(section, *(renamed.get(f, f) for f in p.field[1:])) if p.field and len(p.field) > 1 else (section, "core", "model"),
            )
            for p in exc.problems
        ]
    return three, []


def _three_tier_plan(three: ThreeTierSizing, width: int, core_ports: int) -> dict:
    """The LeafSpinePlan fields of a 3-tier host fabric."""
    return {
        "tiers": 3,
        "pods": three.pods,
        "most_pods": core_ports,  # spine ASNs reserved for as many pods as a core can take
        "pod_leaves": three.pod_sus * width,
        "cores": three.cores,
        "spine_uplinks": three.spine_uplinks,
        "links_per_core": three.links_per_spine_per_core,
        "spine_built_ratio": Fraction(three.spine_downlinks, three.spine_uplinks),
    }


def _names(
    intent: Intent, fabric: Fabric, network: Network, leaves: int, spines: int, three: ThreeTierSizing | None = None
) -> tuple[dict[str, list[str]], list[Problem]]:
    prefix = "frontend" if network is Network.FRONTEND else "storage"
    names, problems = {}, []
    roles = [("leaf", leaves), ("spine", spines)] + ([("core", three.cores)] if three is not None else [])
    for role, count in roles:
        key = f"{prefix}_{role}"
        pattern = getattr(intent.naming, key)
        if three is not None and role == "leaf":
            per_pod = three.pod_sus * (leaves // max(1, three.su_count))
            names[role] = [name_from(pattern, index=i, node=i, pod=(i - 1) // per_pod + 1) for i in range(1, count + 1)]
        elif three is not None and role == "spine":
            names[role] = [name_from(pattern, index=i, node=i, pod=(i - 1) // three.pod_spines + 1) for i in range(1, count + 1)]
        else:
            names[role] = [name_from(pattern, index=i, node=i) for i in range(1, count + 1)]
        bad = next((n for n in names[role] if not NAME_PATTERN.match(n)), None)
        if bad or len(set(names[role])) != count or any(n in fabric.devices for n in names[role]):
            problems.append(Problem(f"the {key} pattern does not give every {role} a distinct hostname", hint="put {index} in it", field=("naming", key)))
    return names, problems
