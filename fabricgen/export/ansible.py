"""An Ansible YAML inventory of a build's switches: inventory.yaml.

The YAML inventory format of ansible-core's `yaml` inventory plugin (all -> children -> hosts, with
`vars` per group). Each switch is defined once, under its NOS group, with `ansible_host` (its
management address) and its facts from the build; the network groups (`backend`, `frontend`,
`oob`, ...) hold the network-and-role groups (`backend_leaf`), which list the same hosts.

Per NOS the group's vars say how Ansible reaches it:
- NX-OS: `ansible_network_os: cisco.nxos.nxos` over `ansible.netcommon.network_cli` (the cisco.nxos
  collection's platform guide);
- SONiC: `ansible_network_os: dellemc.enterprise_sonic.sonic` over `ansible.netcommon.network_cli`,
  the one SONiC collection in Ansible's community package (ansible-collections/dellemc.enterprise_sonic,
  "supports network_cli and httpapi connections"). It drives the SONiC Management Framework CLI
  (sonic-mgmt-framework), which Enterprise SONiC ships and community images may lack; without it
  use `ansible_connection: ssh` and the SONiC shell (`config`, `vtysh`);
- EOS: `ansible_network_os: arista.eos.eos` over `ansible.netcommon.httpapi`, eAPI as fabricgen's
  build enables it (HTTPS only, in the management VRF), with the certificate validated and
  privileges raised with `enable` (Ansible's "EOS Platform Options": httpapi with
  `ansible_become_method: enable`; ansible.netcommon's httpapi connection options
  `ansible_httpapi_use_ssl`, `ansible_httpapi_validate_certs`).
No credentials: `ansible_user` and `ansible_password` come from the command line or a vault.
"""

from __future__ import annotations

import yaml

from fabricgen.export.inventory import managed_switches
from fabricgen.export.source import ExportBuild

NETWORK_OS: dict[str, dict[str, str | bool]] = {
    "nxos": {"ansible_network_os": "cisco.nxos.nxos", "ansible_connection": "ansible.netcommon.network_cli"},
    "sonic": {"ansible_network_os": "dellemc.enterprise_sonic.sonic", "ansible_connection": "ansible.netcommon.network_cli"},
    "eos": {
        "ansible_network_os": "arista.eos.eos",
        "ansible_connection": "ansible.netcommon.httpapi",
        "ansible_httpapi_use_ssl": True,
        "ansible_httpapi_validate_certs": True,
        "ansible_become": True,
        "ansible_become_method": "enable",
    },
}


def render_ansible(build: ExportBuild) -> dict[str, str]:
    children: dict[str, dict] = {}
    networks: dict[str, dict[str, dict]] = {}
    for switch in managed_switches(build):
        nos, network, role = switch.groups
        host = {"ansible_host": switch.host} if switch.host else {}
        host.update(switch.data(build.name))
        group = children.setdefault(nos, {"vars": dict(NETWORK_OS.get(switch.node.nos or "", {})), "hosts": {}})
        group["hosts"][switch.name] = host
        networks.setdefault(network, {}).setdefault(role, {"hosts": {}})["hosts"][switch.name] = None
    for network, roles in networks.items():
        children[network] = {"children": dict(sorted(roles.items()))}
    for group in children.values():
        if not group.get("vars", True):
            del group["vars"]
    document = {"all": {"vars": {"fabric": build.name}, "children": dict(sorted(children.items()))}}
    return {"inventory.yaml": yaml.safe_dump(document, sort_keys=False, default_flow_style=False)}
