"""What `fabricgen export` writes for a SONiC switch (fabricgen.nos.interface.ExportParts).

- Ansible: `ansible_network_os: dellemc.enterprise_sonic.sonic` over `ansible.netcommon.network_cli`,
  the one SONiC collection in Ansible's community package (ansible-collections/dellemc.enterprise_sonic,
  "supports network_cli and httpapi connections"). It drives the SONiC Management Framework CLI
  (sonic-mgmt-framework), which Enterprise SONiC ships and community images may lack; without it
  use `ansible_connection: ssh` and the SONiC shell (`config`, `vtysh`);
- netmiko `dell_sonic` and scrapli `dell_enterprisesonic`, as for Ansible the Management
  Framework CLI of Enterprise SONiC: netmiko's DellSonicSSH (netmiko/ssh_dispatcher.py CLASS_MAPPER)
  runs `sonic-cli` after logging in, scrapli_community's dell/enterprisesonic escalates to it from
  the Linux prompt (scrapli/factory.py turns `dell_enterprisesonic` into that module). On a
  community image without `sonic-cli` use netmiko's `linux` (its `edgecore_sonic` is the same
  LinuxSSH class) and scrapli's generic driver on the shell instead;
- Nornir: the platform alone (fabricgen's own `sonic` driver from napalm_sonic);
- NetBox: the platform "SONiC", with no manufacturer (many vendors ship it);
- Batfish: `sonic_configs/<switch>/config_db.json` and `frr.conf`, nothing else in the switch's
  folder (pybatfish docs/source/formats.md: "The device folder must have only these files"), no
  header;
- containerlab: a `sonic-vs` node (containerlab's manual/kinds/sonic-vs.md), image
  `docker-sonic-vs:latest` unless `--sonic-image` names one: SONiC-VS has no registry image, the
  page has it built from the sonic-buildimage pipeline (docker-sonic-vs.gz). SONiC-VS names its
  data ports after its own lane map, eth1 behind Ethernet0, eth2 behind Ethernet4 and so on, so
  the switch's cabled ports are wired to eth1, eth2, ... in the natural order of their build names
  (each link's comment names both). Its config is SONiC-VS's own: the build's config_db.json is
  written for the real platform's port map and is not loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.basics.sorting import natural_key
from fabricgen.nos.interface import ContainerlabNode, ExportParts, LabNode

if TYPE_CHECKING:
    from fabricgen.nos.interface import LabSwitch

SONIC_VS_IMAGE = "docker-sonic-vs:latest"


def sonic_vs_node(switch: LabSwitch) -> LabNode:
    """A SONiC switch as a SONiC-VS container, its cabled ports on eth1, eth2, ... (see above)."""
    from fabricgen.export.containerlab import numbered_wires  # the export's code only when it runs

    wires = numbered_wires(switch.ports)
    listed = ", ".join(f"{wires[port]}={port}" for port in sorted(switch.ports, key=natural_key))
    return LabNode(
        comment=f"{switch.device}: SONiC ({switch.node.model}); SONiC-VS ports behind {listed}",
        kind="sonic-vs",
        image=switch.image or SONIC_VS_IMAGE,
        wires=wires,
    )


EXPORT = ExportParts(
    ansible_network_os="dellemc.enterprise_sonic.sonic",
    ansible_connection="ansible.netcommon.network_cli",
    ansible_vars={},
    nornir_group={},
    netmiko_device_type="dell_sonic",
    scrapli_platform="dell_enterprisesonic",
    netbox_platform="SONiC",
    netbox_manufacturer=None,
    batfish_folder="sonic_configs",
    batfish_rancid_type=None,
    containerlab=ContainerlabNode(
        image_option="--sonic-image",
        image_help=f"Image of the SONiC nodes (default {SONIC_VS_IMAGE}, built from sonic-buildimage).",
        write=sonic_vs_node,
    ),
)
