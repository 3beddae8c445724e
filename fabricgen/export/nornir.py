"""A Nornir SimpleInventory of a build's switches: hosts.yaml, groups.yaml, defaults.yaml.

The three files as Nornir's SimpleInventory plugin reads them (nornir docs, "Inventory" tutorial and
nornir/plugins/inventory/simple.py): a host's `hostname` (the management address), `platform`
(the NAPALM driver: NAPALM's `nxos` NX-API driver for NX-OS, NAPALM's `eos` eAPI driver for EOS,
fabricgen's own `sonic` driver from napalm_sonic for SONiC, as `fabricgen push` uses them),
`groups` and `data`. Groups (fabricgen.export.inventory names them): per NOS, which carry the
platform, the netmiko and scrapli names of the NOS as `connection_options` (`netmiko: {platform:
cisco_nxos}`, `scrapli: {platform: cisco_nxos}`: a connection option's platform is what
nornir_netmiko hands netmiko as `device_type` and nornir_scrapli hands scrapli as `platform`
instead of the host's NAPALM name; nornir/core/inventory.py get_connection_parameters), and what
the NOS's package adds (`ExportParts.nornir_group`: the EOS group asks NAPALM to verify the
switches' eAPI certificates); per network and per network and role (whose parent is the
network's group); per rack, scalable unit, rail and model, each with what it stands for as data
(`nr.filter(F(groups__contains="rack_R01_10"))`). Defaults with the fabric's name. No username or
password: Nornir takes them from the code that runs it (or the environment), never from these
files.
"""

from __future__ import annotations

import yaml

from fabricgen.basics.sorting import natural_key
from fabricgen.export.inventory import ManagedSwitch, managed_switches, rails_of
from fabricgen.export.source import ExportBuild, export_parts


def render_nornir(build: ExportBuild) -> dict[str, str]:
    switches = managed_switches(build)
    hosts = {}
    for switch in switches:
        host: dict = {"platform": switch.driver, "groups": list(switch.groups.all()), "data": switch.data(build.name)}
        if switch.host:
            host = {"hostname": switch.host, **host}
        hosts[switch.name] = host
    groups = _groups(switches)
    defaults = {"data": {"fabric": build.name}}
    return {"hosts.yaml": _dump(hosts), "groups.yaml": _dump(groups), "defaults.yaml": _dump(defaults)}


def _groups(switches: list[ManagedSwitch]) -> dict:
    groups: dict[str, dict] = {}
    for switch in switches:
        node, names = switch.node, switch.groups
        if names.nos not in groups:
            groups[names.nos] = _nos_group(switch)
        network = node.network.value
        groups.setdefault(names.network, {"data": {"network": network}})
        groups.setdefault(names.role, {"groups": [names.network], "data": {"role": node.role.value}})
        if names.rack:
            groups.setdefault(names.rack, {"data": {"rack": node.rack}})
        if names.unit:
            groups.setdefault(names.unit, {"data": {"network": network, "scalable_unit": node.scalable_unit}})
        for rail, name in zip(rails_of(node), names.rails, strict=True):
            groups.setdefault(name, {"data": {"network": network, "rail": rail}})
        groups.setdefault(names.model, {"data": {"model": node.model}})
    return dict(sorted(groups.items(), key=lambda item: natural_key(item[0])))


def _nos_group(switch: ManagedSwitch) -> dict:
    """A NOS's group: its NAPALM platform, its netmiko and scrapli platforms as connection
    options, and what its package adds (merged into the same connection_options)."""
    parts = export_parts(switch.node.nos)
    group: dict = {"platform": switch.driver, "data": {"nos": switch.node.nos}}
    options = {library: {"platform": name} for library, name in (("netmiko", switch.netmiko_device_type), ("scrapli", switch.scrapli_platform)) if name}
    extra: dict = dict(parts.nornir_group) if parts is not None else {}
    options |= extra.pop("connection_options", {})  # the package's libraries beside these (EOS: napalm)
    if options:
        group["connection_options"] = dict(sorted(options.items()))
    return group | extra


def _dump(document: dict) -> str:
    # sort_keys=False: hosts in natural order, keys in the order a reader expects them
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=False)
