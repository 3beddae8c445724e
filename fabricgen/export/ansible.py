"""An Ansible YAML inventory of a build's switches: inventory.yaml.

The YAML inventory format of ansible-core's `yaml` inventory plugin (all -> children -> hosts, with
`vars` per group). Each switch is defined once, under its NOS group, with `ansible_host` (its
management address) and its facts from the build; every other group lists the same hosts:
the network groups (`backend`, `frontend`, `oob`, ...) hold the network-and-role groups
(`backend_leaf`), and `racks`, `scalable_units`, `rails` and `models` hold a group per rack
(`rack_R01_10`), scalable unit (`backend_su_2`), rail (`backend_rail_3`) and switch model
(`model_N9K_C9364D_GX2A`): `ansible-playbook -l rack_R01_10` or `-l 'backend_rail_3:&backend_leaf'`
(fabricgen.export.inventory names them).

Per NOS the group's vars say how Ansible reaches it: `ansible_network_os`, `ansible_connection`
and any further vars its package gives (`ExportParts`: NX-OS and SONiC over network_cli, EOS over
eAPI with the certificate checked; the sources are in each package's export.py), and for tasks
that drive the switches with netmiko or scrapli (from Python modules or `ansible.builtin.script`),
`netmiko_device_type` and `scrapli_platform`, the names those libraries know the NOS by; a NOS this
fabricgen has no package for gets none.
No credentials: `ansible_user` and `ansible_password` come from the command line or a vault.
"""

from __future__ import annotations

import yaml

from fabricgen.basics.sorting import natural_key
from fabricgen.export.inventory import FAMILIES, managed_switches
from fabricgen.export.source import ExportBuild, export_parts


def group_vars(nos: str | None) -> dict[str, str | bool]:
    """The vars of a NOS's group: how Ansible reaches its switches, and the netmiko and scrapli
    names of the NOS (none for a NOS fabricgen has no package for)."""
    parts = export_parts(nos)
    if parts is None:
        return {}
    names = {"netmiko_device_type": parts.netmiko_device_type, "scrapli_platform": parts.scrapli_platform}
    return {
        "ansible_network_os": parts.ansible_network_os,
        "ansible_connection": parts.ansible_connection,
        **parts.ansible_vars,
        **{key: value for key, value in names.items() if value},
    }


def render_ansible(build: ExportBuild) -> dict[str, str]:
    children: dict[str, dict] = {}
    networks: dict[str, dict[str, dict]] = {}
    families: dict[str, dict[str, dict]] = {family: {} for family in FAMILIES}
    for switch in managed_switches(build):
        groups = switch.groups
        host = {"ansible_host": switch.host} if switch.host else {}
        host.update(switch.data(build.name))
        group = children.setdefault(groups.nos, {"vars": group_vars(switch.node.nos), "hosts": {}})
        group["hosts"][switch.name] = host
        networks.setdefault(groups.network, {}).setdefault(groups.role, {"hosts": {}})["hosts"][switch.name] = None
        for family, names in groups.by_family().items():
            for name in names:
                families[family].setdefault(name, {"hosts": {}})["hosts"][switch.name] = None
    for network, roles in networks.items():
        children[network] = {"children": dict(sorted(roles.items()))}
    for family, groups_of_family in families.items():
        if groups_of_family:
            children[FAMILIES[family]] = {"children": dict(sorted(groups_of_family.items(), key=lambda item: natural_key(item[0])))}
    for group in children.values():
        if not group.get("vars", True):
            del group["vars"]
    document = {"all": {"vars": {"fabric": build.name}, "children": dict(sorted(children.items()))}}
    return {"inventory.yaml": yaml.safe_dump(document, sort_keys=False, default_flow_style=False)}
