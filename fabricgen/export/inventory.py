"""What the Nornir and Ansible inventories share: the managed switches of a build and their groups.

`managed_switches(build) -> [ManagedSwitch]`: every switch with a config (fabric tiers and OOB
switches), in natural order, each with its management address (the IP plan's `management` row:
mgmt0 on NX-OS, eth0 on SONiC, Management1 on EOS), the NAPALM driver `fabricgen push` uses for its NOS, and its
groups: its NOS, its network, and its network and role (`backend_leaf`). Group names are
identifiers (letters, digits, `_`), which Ansible requires of group names.

Never credentials: usernames, passwords and keys come from the environment as for `fabricgen push`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.build.build_dir import TopologyNode
from fabricgen.export.source import ExportBuild


@dataclass(frozen=True)
class ManagedSwitch:
    node: TopologyNode
    host: str | None  # management address, no prefix length; None when the IP plan has none
    interface: str | None  # the management port
    driver: str  # NAPALM driver name
    groups: tuple[str, ...]

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
            "pod": node.pod,
            "plane": node.plane,
            "rack": node.rack,
            "ru": node.ru,
        }
        return {key: value for key, value in values.items() if value is not None}


def group_name(*parts: str) -> str:
    return "_".join(parts).replace("-", "_")


def managed_switches(build: ExportBuild) -> list[ManagedSwitch]:
    from fabricgen.push.inventory import DRIVERS

    switches = []
    for node in build.switches():
        row = build.management_address(node.id)
        nos = node.nos or ""
        groups = (group_name(nos), group_name(node.network.value), group_name(node.network.value, node.role.value))
        switches.append(ManagedSwitch(node, row.address.split("/")[0] if row else None, row.interface if row else None, DRIVERS.get(nos, nos), groups))
    return switches
