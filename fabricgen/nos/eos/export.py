"""What `fabricgen export` writes for an EOS switch (fabricgen.nos.interface.ExportParts).

- Ansible: `ansible_network_os: arista.eos.eos` over `ansible.netcommon.httpapi`, eAPI as
  fabricgen's build enables it (HTTPS only, in the management VRF), with the certificate validated
  and privileges raised with `enable` (Ansible's "EOS Platform Options": httpapi with
  `ansible_become_method: enable`; ansible.netcommon's httpapi connection options
  `ansible_httpapi_use_ssl`, `ansible_httpapi_validate_certs`);
- netmiko `arista_eos` and scrapli `arista_eos` (netmiko/ssh_dispatcher.py CLASS_MAPPER,
  AristaSSH; scrapli/factory.py CORE_PLATFORM_MAP, EOSDriver), both over SSH;
- Nornir: the group asks NAPALM's `eos` driver to verify the switches' eAPI certificates
  (`connection_options: napalm: extras: optional_args: {enforce_verification: true}`): without it
  pyeapi, under NAPALM's eos driver, accepts any certificate (pyeapi/eapilib.py
  HttpsEapiConnection), and with it the system's CAs verify them (nornir_napalm hands `extras` to
  the driver as keyword arguments);
- NetBox: the platform "Arista EOS", made by Arista;
- Batfish: `configs/<switch>.cfg` headed `!RANCID-CONTENT-TYPE: arista` (pybatfish
  docs/source/formats.md): a generated config lacks the tell-tale line Batfish detects EOS by (a
  running config's `! device: NAME (MODEL, EOS-VERSION)` comment), and Batfish's
  VendorConfigurationFormatDetector reads the RANCID type first;
- containerlab: an `arista_ceos` node (containerlab's cEOS kind, also named `ceos`: nodes/ceos/ceos.go
  KindNames), image `--ceos-image` or by default `ceos:<the release the build is written for>`,
  which the user imports from Arista's cEOS-lab archive. It boots the build's config
  (`startup-config`, its secrets replaced by stand-ins of their slots' forms, as the Batfish
  export does: the lab never sees a real key). Its cabled ports are wired to eth1, eth2, ... in
  natural order, and a cEOS interface mapping file (containerlab's ceos page, "User-defined
  interface mapping", cEOS 4.28.0F and later: /mnt/flash/EosIntfMapping.json) gives each the
  build's name (eth1 -> Ethernet1/1) and eth0 the build's management port, so the config's
  interface names are the container's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fabricgen.nos.interface import ContainerlabNode, ExportParts, LabNode

if TYPE_CHECKING:
    from fabricgen.nos.interface import LabSwitch

CEOS_KIND = "arista_ceos"
CEOS_MAPPING = "/mnt/flash/EosIntfMapping.json"


def ceos_node(switch: LabSwitch) -> LabNode:
    """An EOS switch as cEOS-lab booting the build's config, with its interface mapping (see
    above); ExportError when the build has no config for it."""
    from fabricgen.basics.errors import Problem
    from fabricgen.build.secrets import dummy_secrets
    from fabricgen.export.containerlab import IMAGE, numbered_wires  # the export's code only when it runs
    from fabricgen.export.source import ExportError

    device, node = switch.device, switch.node
    config = f"configs/{device}.cfg"
    if not switch.files.has(config):
        raise ExportError(Problem(f"{device} (eos) has no {config}", hint="rebuild the directory", file=str(switch.files.root / "manifest.json")))
    text = switch.files.text(config)
    wires = numbered_wires(switch.ports)
    by_wire = sorted(wires.items(), key=lambda item: int(item[1][3:]))
    release = f"ceos:{node.nos_release}" if node.nos_release and IMAGE.fullmatch(f"ceos:{node.nos_release}") else "ceos:latest"
    mapping = {  # ManagementIntf, EthernetIntf: containerlab's ceos page
        "ManagementIntf": {"eth0": switch.management_port or "Management1"},
        "EthernetIntf": {wire: port for port, wire in by_wire},
    }
    return LabNode(
        comment=f"{device}: EOS ({node.model}) as cEOS-lab booting the build's config; ports {', '.join(f'{wire}={port}' for port, wire in by_wire)}",
        kind=CEOS_KIND,
        image=switch.image or release,
        wires=wires,
        startup_config=f"ceos/{device}/startup-config",
        binds=(f"ceos/{device}/EosIntfMapping.json:{CEOS_MAPPING}:ro",),
        files={
            f"ceos/{device}/startup-config": dummy_secrets({config: text}, {config: "eos"}).fill(text),
            f"ceos/{device}/EosIntfMapping.json": json.dumps(mapping, indent=2) + "\n",
        },
    )


EXPORT = ExportParts(
    ansible_network_os="arista.eos.eos",
    ansible_connection="ansible.netcommon.httpapi",
    ansible_vars={
        "ansible_httpapi_use_ssl": True,
        "ansible_httpapi_validate_certs": True,
        "ansible_become": True,
        "ansible_become_method": "enable",
    },
    nornir_group={"connection_options": {"napalm": {"extras": {"optional_args": {"enforce_verification": True}}}}},
    netmiko_device_type="arista_eos",
    scrapli_platform="arista_eos",
    netbox_platform="Arista EOS",
    netbox_manufacturer="Arista",
    batfish_folder="configs",
    batfish_rancid_type="arista",
    containerlab=ContainerlabNode(
        image_option="--ceos-image",
        image_help="Image of the EOS nodes (default ceos:<the build's EOS release>, imported from Arista's cEOS-lab archive).",
        write=ceos_node,
    ),
)
