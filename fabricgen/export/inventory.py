"""What the Nornir and Ansible inventories share: the managed switches of a build and their groups.

`managed_switches(build) -> [ManagedSwitch]`: every switch with a config (fabric tiers and OOB
switches), in natural order, each with its management address (the IP plan's `management` row:
mgmt0 on NX-OS, eth0 on SONiC, Management1 on EOS), the NAPALM driver `fabricgen push` uses for
its NOS, the platform names netmiko and scrapli know it by (its NOS package's `ExportParts`), and
its groups (`Groups`): its NOS; its network and its network and role (`backend_leaf`); its rack,
its scalable unit and its rails where the build places it in them (`rack_R01_10`,
`backend_su_2`, `backend_rail_3`: a leaf serving several rails is in each); its model
(`model_N9K_C9364D_GX2A`). Group names are identifiers (ASCII letters, digits and `_`, never a
digit first), which Ansible requires of group names (it warns on `-` and, by default, rewrites
it); two racks or models whose names would become the same identifier get `_2`, `_3` after it
in natural order, so every rack and model keeps a group of its own.

Never credentials: usernames, passwords and keys come from the environment as for `fabricgen push`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import TopologyNode
from fabricgen.export.source import ExportBuild, export_parts

# What each family of groups is called as a whole (Ansible's parent group of its groups)
FAMILIES = {"rack": "racks", "unit": "scalable_units", "rail": "rails", "model": "models"}


@dataclass(frozen=True)
class Groups:
    """The groups of one switch, by family; each a group name."""

    nos: str
    network: str
    role: str  # network and role: backend_leaf
    rack: str | None
    unit: str | None  # scalable unit: backend_su_2
    rails: tuple[str, ...]  # backend_rail_1, ...
    model: str

    def all(self) -> tuple[str, ...]:
        """Every group, in the order above."""
        return (self.nos, self.network, self.role, *(g for g in (self.rack, self.unit) if g), *self.rails, self.model)

    def by_family(self) -> dict[str, tuple[str, ...]]:
        """The rack, unit, rail and model groups by family (FAMILIES' keys)."""
        return {"rack": (self.rack,) if self.rack else (), "unit": (self.unit,) if self.unit else (), "rail": self.rails, "model": (self.model,)}


@dataclass(frozen=True)
class ManagedSwitch:
    node: TopologyNode
    host: str | None  # management address, no prefix length; None when the IP plan has none
    interface: str | None  # the management port
    driver: str  # NAPALM driver name
    netmiko_device_type: str | None  # netmiko's device_type for its NOS; None: none known
    scrapli_platform: str | None  # scrapli's platform for its NOS; None: none known
    groups: Groups

    @property
    def name(self) -> str:
        return self.node.id

    def data(self, fabric: str) -> dict:
        """Facts from the build an automation task may want: role, network, model, NOS release,
        ASN, loopback, rack position."""
        node = self.node
        values = {
            "fabric": fabric,
            "role": node.role.value,
            "network": node.network.value,
            "model": node.model,
            "nos": node.nos,
            "nos_release": node.nos_release,
            "asn": node.asn,
            "loopback": node.loopback,
            "management_interface": self.interface,
            "scalable_unit": node.scalable_unit,
            "rail": node.rail,
            "rails": list(node.rails) if node.rails else None,
            "pod": node.pod,
            "plane": node.plane,
            "rack": node.rack,
            "ru": node.ru,
        }
        return {key: value for key, value in values.items() if value is not None}


def group_name(*parts: str) -> str:
    """An identifier of `parts` joined by `_`: every character but ASCII letters and digits
    becomes `_`, and a name that would start with a digit starts with `_` (a NOS name alone is a
    plug-in's to choose)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))
    return f"_{name}" if name[:1].isdigit() else name


def _distinct_names(prefix: str, values: Iterable[str]) -> dict[str, str]:
    """Each value's group name `prefix_value`, with `_2`, `_3` after the names of values (in natural
    order) whose identifier another value already has."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for value in sorted(set(values), key=natural_key):
        base = group_name(prefix, value)
        name, count = base, 1
        while name in taken:
            count += 1
            name = f"{base}_{count}"
        taken.add(name)
        names[value] = name
    return names


def rails_of(node: TopologyNode) -> list[int]:
    """The rails a switch serves, in order (a leaf of several rails: each of them)."""
    return sorted(set(node.rails or ([node.rail] if node.rail is not None else [])))


def managed_switches(build: ExportBuild) -> list[ManagedSwitch]:
    from fabricgen.push.inventory import DRIVERS

    nodes = build.switches()
    racks = _distinct_names("rack", (node.rack for node in nodes if node.rack))
    models = _distinct_names("model", (node.model for node in nodes))
    switches = []
    for node in nodes:
        row = build.management_address(node.id)
        nos = node.nos or ""
        network = node.network.value
        groups = Groups(
            nos=group_name(nos),
            network=group_name(network),
            role=group_name(network, node.role.value),
            rack=racks[node.rack] if node.rack else None,
            unit=group_name(network, "su", str(node.scalable_unit)) if node.scalable_unit is not None else None,
            rails=tuple(group_name(network, "rail", str(rail)) for rail in rails_of(node)),
            model=models[node.model],
        )
        parts = export_parts(node.nos)
        switches.append(
            ManagedSwitch(
                node,
                row.address.split("/")[0] if row else None,
                row.interface if row else None,
                DRIVERS.get(nos, nos),
                parts.netmiko_device_type if parts else None,
                parts.scrapli_platform if parts else None,
                groups,
            )
        )
    return switches
