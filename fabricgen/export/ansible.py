"""An Ansible YAML inventory of a build's switches: inventory.yaml.

The YAML inventory format of ansible-core's `yaml` inventory plugin (all -> children -> hosts, with
`vars` per group). Each switch is defined once, under its NOS group, with `ansible_host` (its
management address) and its facts from the build; the network groups (`backend`, `frontend`,
`oob`, ...) hold the network-and-role groups (`backend_leaf`), which list the same hosts.

Per NOS the group's vars say how Ansible reaches it: `ansible_network_os`, `ansible_connection`
and any further vars its package gives (`ExportParts`: NX-OS and SONiC over network_cli, EOS over
eAPI with the certificate checked; the sources are in each package's export.py); a NOS this
fabricgen has no package for gets none.
No credentials: `ansible_user` and `ansible_password` come from the command line or a vault.
"""

from __future__ import annotations

import yaml

from fabricgen.export.inventory import managed_switches
from fabricgen.export.source import ExportBuild, export_parts


def group_vars(nos: str | None) -> dict[str, str | bool]:
    """The vars of a NOS's group: how Ansible reaches its switches (none for a NOS fabricgen has no package for)."""
    parts = export_parts(nos)
    if parts is None:
        return {}
    return {"ansible_network_os": parts.ansible_network_os, "ansible_connection": parts.ansible_connection, **parts.ansible_vars}


def render_ansible(build: ExportBuild) -> dict[str, str]:
    children: dict[str, dict] = {}
    networks: dict[str, dict[str, dict]] = {}
    for switch in managed_switches(build):
        nos, network, role = switch.groups
        host = {"ansible_host": switch.host} if switch.host else {}
        host.update(switch.data(build.name))
        group = children.setdefault(nos, {"vars": group_vars(switch.node.nos), "hosts": {}})
        group["hosts"][switch.name] = host
        networks.setdefault(network, {}).setdefault(role, {"hosts": {}})["hosts"][switch.name] = None
    for network, roles in networks.items():
        children[network] = {"children": dict(sorted(roles.items()))}
    for group in children.values():
        if not group.get("vars", True):
            del group["vars"]
    document = {"all": {"vars": {"fabric": build.name}, "children": dict(sorted(children.items()))}}
    return {"inventory.yaml": yaml.safe_dump(document, sort_keys=False, default_flow_style=False)}
