"""What `fabricgen export` writes for an NX-OS switch (fabricgen.nos.interface.ExportParts).

- Ansible: `ansible_network_os: cisco.nxos.nxos` over `ansible.netcommon.network_cli` (the
  cisco.nxos collection's platform guide);
- netmiko `cisco_nxos` and scrapli `cisco_nxos` (netmiko/ssh_dispatcher.py CLASS_MAPPER,
  CiscoNxosSSH; scrapli/factory.py CORE_PLATFORM_MAP, NXOSDriver);
- Nornir: the platform alone (NAPALM's `nxos` NX-API driver, as `fabricgen push` uses it);
- NetBox: the platform "Cisco NX-OS", made by Cisco;
- Batfish: `configs/<switch>.cfg` headed `!RANCID-CONTENT-TYPE: cisco-nx` (pybatfish
  docs/source/formats.md; Batfish's VendorConfigurationFormatDetector reads the RANCID type first,
  and a generated config lacks the lines it would otherwise detect NX-OS by);
- containerlab: no NX-OS container (a Nexus 9000v image runs as a VM, which fabricgen's lab does
  not use): a Linux node running FRR with the switch's routing twin.
"""

from __future__ import annotations

from fabricgen.nos.interface import ExportParts

EXPORT = ExportParts(
    ansible_network_os="cisco.nxos.nxos",
    ansible_connection="ansible.netcommon.network_cli",
    ansible_vars={},
    nornir_group={},
    netmiko_device_type="cisco_nxos",
    scrapli_platform="cisco_nxos",
    netbox_platform="Cisco NX-OS",
    netbox_manufacturer="Cisco",
    batfish_folder="configs",
    batfish_rancid_type="cisco-nx",
    containerlab=None,
)
