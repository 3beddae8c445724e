"""Building the rail-optimized backend graph from the sizing.

Port layout on every leaf: downlinks first (node 1 on the first port, the full unit's ports
reserved even when the last unit is partial), then uplinks grouped by spine. On every spine: the
links of leaf 1 first, then leaf 2, and so on. Cable ids follow the same order: host links node by
node and rail by rail, then fabric links leaf by leaf.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from fabricgen.catalog import Catalog
from fabricgen.design.graph import (
    Device,
    DuplicateDeviceName,
    Fabric,
    Link,
    LinkKind,
    Network,
    OutOfPorts,
    Port,
    PortAllocator,
    Role,
)
from fabricgen.design.sizing import BackendSizing
from fabricgen.errors import DesignError, Problem
from fabricgen.intent.model import NAME_PATTERN, Intent

CABLE_PREFIX = "BE-"


@dataclass
class _Optics:
    """Chooses the switch-end transceiver of a port: the intent's PID if given, else the catalog's
    default for the cage's form factor and speed. RJ45 cages need none."""

    catalog: Catalog
    preferred: str | None
    field: tuple[str, ...]

    def __post_init__(self) -> None:
        self.choose = lru_cache(maxsize=None)(self._choose)

    def _choose(self, model_pid: str, cage: int, link_speed: int) -> str | None:
        model = self.catalog.switches[model_pid]
        group = model.group_of(cage)
        assert group is not None
        if group.form_factor == "RJ45":
            return None
        if self.preferred is not None:
            optic = self.catalog.transceivers[self.preferred]
            if optic.form_factor != group.form_factor or optic.speed != group.speed or optic.link_speed != link_speed:
                raise DesignError(
                    Problem(
                        f"{self.preferred} ({optic.form_factor} {optic.speed}G, {optic.link_speed}G links) does not fit "
                        f"{model_pid}'s {group.form_factor} {group.speed}G cages carrying {link_speed}G links",
                        hint="name a transceiver of that form factor and speed, or remove it to use the catalog default",
                        field=self.field,
                    )
                )
            return self.preferred
        default = self.catalog.default_optic(group.form_factor, link_speed, group.speed)
        if default is None:
            raise DesignError(
                Problem(
                    f"the catalog has no default transceiver for {group.form_factor} {group.speed}G cages carrying {link_speed}G links",
                    hint="name one under backend.optics, or mark one 'default: true' in a catalog file",
                    field=self.field,
                )
            )
        return default


def build_backend(intent: Intent, catalog: Catalog, sizing: BackendSizing) -> Fabric:
    backend = intent.backend
    fabric = Fabric(intent.name)
    leaf_model = catalog.switches[backend.leaf.model]
    spine_model = catalog.switches[backend.spine.model]
    node_model = catalog.nodes[intent.gpu_node]
    assert node_model.backend is not None
    speed = sizing.link_speed_gbps
    host_optics = _Optics(catalog, backend.optics.host_links, ("backend", "optics", "host_links"))
    fabric_optics = _Optics(catalog, backend.optics.fabric_links, ("backend", "optics", "fabric_links"))

    spines = [
        _add(fabric, Device(_name(intent.naming.spine, "spine", index=i), Role.SPINE, Network.BACKEND, backend.spine.model, backend.spine.nos, i))
        for i in range(1, sizing.spines + 1)
    ]
    spine_ports = {spine.name: PortAllocator(spine, spine_model) for spine in spines}

    leaves: list[Device] = []
    leaf_ports: dict[str, PortAllocator] = {}
    nodes: list[Device] = []
    for su in range(1, sizing.su_count + 1):
        for rail in range(1, sizing.rails + 1):
            index = len(leaves) + 1
            leaf = _add(
                fabric,
                Device(_name(intent.naming.leaf, "leaf", index=index, su=su, rail=rail), Role.LEAF, Network.BACKEND,
                       backend.leaf.model, backend.leaf.nos, index, su=su, rail=rail),
            )
            leaves.append(leaf)
            leaf_ports[leaf.name] = PortAllocator(leaf, leaf_model)
        for node_in_su in range(1, sizing.su_size(su) + 1):
            index = len(nodes) + 1
            nodes.append(
                _add(
                    fabric,
                    Device(_name(intent.naming.gpu_node, "gpu_node", index=index, su=su, node=node_in_su), Role.GPU_NODE,
                           Network.BACKEND, intent.gpu_node, None, index, su=su),
                )
            )

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
        raise DesignError(Problem(str(exc), device=exc.device, hint="the switch model has too few ports for this design")) from None

    width = max(5, len(str(len(links))))
    for number, (kind, a, b) in enumerate(links, start=1):
        fabric.connect(Link(f"{CABLE_PREFIX}{number:0{width}d}", Network.BACKEND, kind, a, b, _cable(catalog, a, b)))
    return fabric


def _cable(catalog: Catalog, a: Port, b: Port) -> str | None:
    """The cable the switch-end optic takes (both ends of a fabric link carry the same optic)."""
    optic = b.optic or a.optic
    return catalog.transceivers[optic].cable if optic else None


def _name(pattern: str, role: str, *, index: int, su: int = 0, rail: int = 0, node: int = 0) -> str:
    name = pattern.format(index=index, su=su, rail=rail, node=node)
    if not NAME_PATTERN.match(name):
        raise DesignError(
            Problem(f"the {role} pattern gives the name {name!r}, which is not a valid hostname", field=("naming", role))
        )
    return name


def _add(fabric: Fabric, device: Device) -> Device:
    try:
        return fabric.add_device(device)
    except DuplicateDeviceName:
        role = {Role.SPINE: "spine", Role.LEAF: "leaf", Role.GPU_NODE: "gpu_node"}[device.role]
        raise DesignError(
            Problem(
                f"two devices are named {device.name!r}",
                hint="make the pattern distinguish every device, e.g. with {index}, or {su} and {rail} for leaves",
                field=("naming", role),
            )
        ) from None

