"""A Nornir SimpleInventory of a build's switches: hosts.yaml, groups.yaml, defaults.yaml.

The three files as Nornir's SimpleInventory plugin reads them (nornir docs, "Inventory" tutorial and
nornir/plugins/inventory/simple.py): a host's `hostname` (the management address), `platform`
(the NAPALM driver: NAPALM's `nxos` NX-API driver for NX-OS, NAPALM's `eos` eAPI driver for EOS,
fabricgen's own `sonic` driver from napalm_sonic for SONiC, as `fabricgen push` uses them),
`groups` and `data`; groups per NOS (which carry the platform, and what the NOS's package adds to
its group, `ExportParts.nornir_group`: the EOS group asks NAPALM to verify the switches' eAPI
certificates), per network and per network and role (whose parent is the network's group);
defaults with the fabric's name. No username or password: Nornir takes them from the code that
runs it (or the environment), never from these files.
"""

from __future__ import annotations

import yaml

from fabricgen.export.inventory import ManagedSwitch, group_name, managed_switches
from fabricgen.export.source import ExportBuild, export_parts


def render_nornir(build: ExportBuild) -> dict[str, str]:
    switches = managed_switches(build)
    hosts = {}
    for switch in switches:
        host: dict = {"platform": switch.driver, "groups": list(switch.groups), "data": switch.data(build.name)}
        if switch.host:
            host = {"hostname": switch.host, **host}
        hosts[switch.name] = host
    groups = _groups(switches)
    defaults = {"data": {"fabric": build.name}}
    return {"hosts.yaml": _dump(hosts), "groups.yaml": _dump(groups), "defaults.yaml": _dump(defaults)}


def _groups(switches: list[ManagedSwitch]) -> dict:
    groups: dict[str, dict] = {}
    for switch in switches:
        nos, network, role = switch.groups
        if nos not in groups:
            parts = export_parts(switch.node.nos)
            groups[nos] = {"platform": switch.driver, "data": {"nos": switch.node.nos}} | (dict(parts.nornir_group) if parts is not None else {})
        groups.setdefault(network, {"data": {"network": switch.node.network.value}})
        groups.setdefault(role, {"groups": [group_name(switch.node.network.value)], "data": {"role": switch.node.role.value}})
    return dict(sorted(groups.items()))


def _dump(document: dict) -> str:
    # sort_keys=False: hosts in natural order, keys in the order a reader expects them
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=False)
