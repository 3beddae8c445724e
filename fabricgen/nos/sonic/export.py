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
- containerlab: a `sonic-vs` node (containerlab's manual/kinds/sonic-vs.md; nodes/sonic/sonic.go
  starts the image's supervisord once the links are up), image `docker-sonic-vs:latest` unless
  `--sonic-image` names one: SONiC-VS has no registry image, the page has it built from the
  sonic-buildimage pipeline (docker-sonic-vs.gz). The image is a Force10-S6000 of 32 ports
  (lab_images.yaml, with its sources): the switch's cabled ports, in natural order, stand on its
  Ethernet0, Ethernet4, ... behind eth1, eth2, ... It boots the build's config rewritten to those
  ports (`vs_config_db`) and the build's frr.conf:
  - `sonic/<switch>/config_db.json` bound to /var/sonic/config_db.json, which the image's start.sh
    copies over its own (platform/vs/docker-sonic-vs/start.sh, "If a config_db.json is provided on
    the persistent volume, use it");
  - `sonic/<switch>/frr.conf` bound to /etc/frr/frr.conf, and `sonic/<switch>/vtysh-boot.conf` to
    /etc/supervisor/conf.d/ (the image's supervisord includes conf.d/*.conf:
    dockers/docker-base-bookworm/etc/supervisor/supervisord.conf): a program running `vtysh -b`
    once bgpd runs, as SONiC's own `vtysh_b` program does in split-unified mode
    (dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.common.j2), which the image's
    supervisord.conf, rendered when the image was built, lacks. FRR's daemons read only their own
    files (bgpd.conf, zebra.conf: the image keeps its zebra.conf); an integrated frr.conf is what
    `vtysh -b` sends them ("Execute boot startup configuration", vtysh(1));
  - `sonic/<switch>/port_map.json`: build port -> image port -> wire.
  A switch with more cabled ports than the image holds raises PortsBeyondImage: the export runs it
  as an FRR twin, or refuses (--no-frr-twins).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricgen.nos.interface import ContainerlabNode, ExportParts, LabNode

if TYPE_CHECKING:
    from fabricgen.export.containerlab_ports import ImagePort, LabImage
    from fabricgen.nos.interface import LabSwitch

LAB_IMAGES = Path(__file__).parent / "lab_images.yaml"
SONIC_VS = "sonic-vs"  # its key there
FRR_CONF = "/etc/frr/frr.conf"
VTYSH_BOOT = "/etc/supervisor/conf.d/fabricgen-vtysh-boot.conf"
DROPPED = object()  # vs_config_db: an entry or value that named only ports the lab leaves out
# Tables of the build's config_db that belong to its own hardware or management network, not the
# image's: BREAKOUT_CFG names the real platform's cages and modes; eth0 is containerlab's management
# interface (manual/kinds/sonic-vs.md: containerlab addresses it), not the build's OOB port.
DROPPED_TABLES = ("BREAKOUT_CFG", "MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")
# supervisord program running `vtysh -b` once bgpd runs; the keys as SONiC's own vtysh_b program
# (supervisord.conf.common.j2) and supervisord-dependent-startup (dependent_startup_wait_for).
VTYSH_BOOT_PROGRAM = """; fabricgen: load /etc/frr/frr.conf into FRR once bgpd runs (vtysh -b), as SONiC does in split-unified mode
[program:fabricgen-vtysh-boot]
command=/usr/bin/vtysh -b
priority=30
autostart=false
autorestart=false
startsecs=0
stdout_logfile=NONE
stdout_syslog=true
stderr_logfile=NONE
stderr_syslog=true
dependent_startup=true
dependent_startup_wait_for=bgpd:running
"""


def sonic_vs_image() -> LabImage:
    from fabricgen.export.containerlab_ports import lab_image  # the export's code only when it runs

    return lab_image(LAB_IMAGES, SONIC_VS)


def sonic_vs_node(switch: LabSwitch) -> LabNode:
    """A SONiC switch as a SONiC-VS container booting the build's config on the image's ports (see
    above). PortsBeyondImage when the switch has more cabled ports than the image; ExportError
    when the build lacks its config_db.json or frr.conf."""
    from fabricgen.basics.errors import Problem
    from fabricgen.build.secrets import dummy_secrets
    from fabricgen.export.containerlab_ports import image_port_map, rename_ports
    from fabricgen.export.source import ExportError

    image = sonic_vs_image()
    device, node = switch.device, switch.node
    on_image = image_port_map(device, switch.ports, image)  # build port -> image port
    sources = {name: f"configs/{device}/{name}" for name in ("config_db.json", "frr.conf")}
    missing = [path for path in sources.values() if not switch.files.has(path)]
    if missing:
        manifest = str(switch.files.root / "manifest.json")
        raise ExportError([Problem(f"{device} (sonic) has no {path}", hint="rebuild the directory", file=manifest) for path in missing])
    texts = {name: switch.files.text(path) for name, path in sources.items()}
    dummies = dummy_secrets({sources[name]: text for name, text in texts.items()})  # the lab never sees a real key (as Batfish's export)
    try:
        built = json.loads(dummies.fill(texts["config_db.json"], in_json=True))
    except ValueError as exc:
        built = exc
    if not isinstance(built, dict) or not all(isinstance(table, dict) for table in built.values()):
        raise ExportError(Problem("not a config_db of tables (a JSON object of objects)", file=str(switch.files.root / sources["config_db.json"])))
    config_db = vs_config_db(built, on_image, image)
    renames = {port: target.name for port, target in on_image.items()}
    base = f"sonic/{device}"
    port_map = {
        "switch": device,
        "image": switch.image or image.image,
        "hwsku": image.hwsku,
        "source": image.source,
        "ports": [{"build": port, "image": target.name, "wire": target.wire, "lanes": target.lanes} for port, target in on_image.items()],
    }
    listed = ", ".join(f"{target.wire}={target.name}" + (f" (build {port})" if port != target.name else "") for port, target in on_image.items())
    return LabNode(
        comment=f"{device}: SONiC ({node.model}) as SONiC-VS {image.hwsku} ({len(image.ports)} ports) booting the build's config; the image's ports: {listed}",
        kind=image.kind,
        image=switch.image or image.image,
        wires={port: target.wire for port, target in on_image.items()},
        binds=(f"{base}/config_db.json:{image.config_db}:ro", f"{base}/frr.conf:{FRR_CONF}:ro", f"{base}/vtysh-boot.conf:{VTYSH_BOOT}:ro"),
        files={
            f"{base}/config_db.json": json.dumps(config_db, indent=4) + "\n",
            f"{base}/frr.conf": rename_ports(dummies.fill(texts["frr.conf"]), renames),
            f"{base}/vtysh-boot.conf": VTYSH_BOOT_PROGRAM,
            f"{base}/port_map.json": json.dumps(port_map, indent=2) + "\n",
        },
    )


def vs_config_db(config: dict[str, Any], on_image: Mapping[str, ImagePort], image: LabImage) -> dict[str, Any]:
    """The build's config_db on the image: DEVICE_METADATA names the image's platform and HwSKU,
    each PORT entry the image's port (its lanes, alias, index and speed; the build's MTU, admin
    status and description), every key or value naming a build port the image's name for it;
    entries of a port the lab does not cable, and DROPPED_TABLES, are left out."""
    build_ports = set(config.get("PORT", {})) | set(on_image)
    renames = {port: target.name for port, target in on_image.items()}

    def token(value: str) -> str | None:  # a port name mapped; None: a build port the lab leaves out
        return renames.get(value, None if value in build_ports else value)

    def rename(text: str) -> str | None:
        # keys and values list ports as "Ethernet0|3", "Ethernet0,Ethernet4"
        parts = []
        for part in text.split("|"):
            names = [token(name) for name in part.split(",")]
            kept = [name for name in names if name is not None]
            if not kept:
                return None
            parts.append(",".join(kept))
        return "|".join(parts)

    def walk(value: Any) -> Any:  # DROPPED: it named only ports the lab leaves out
        if isinstance(value, dict):
            items = ((rename(key), walk(item)) for key, item in value.items())
            return {key: item for key, item in items if key is not None and item is not DROPPED}
        if isinstance(value, list):
            return [item for item in map(walk, value) if item is not DROPPED]
        if isinstance(value, str):
            renamed = rename(value)
            return DROPPED if renamed is None else renamed
        return value

    tables = {name: table for name, table in config.items() if name not in DROPPED_TABLES}
    ports = tables.pop("PORT", {})
    result = walk(tables)
    result["PORT"] = {
        target.name: {
            **{key: ports.get(port, {})[key] for key in ("admin_status", "description", "mtu") if key in ports.get(port, {})},
            "alias": target.alias,
            "index": str(target.index),
            "lanes": target.lanes,
            "speed": str(target.speed),
        }
        for port, target in on_image.items()
    }
    metadata = result.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
    metadata["platform"], metadata["hwsku"] = image.platform, image.hwsku
    return {name: result[name] for name in sorted(result)}  # tables by name, as the build writes them; entries in the build's order


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
        image_help="Image of the SONiC nodes (default docker-sonic-vs:latest, built from sonic-buildimage; its ports must be the Force10-S6000's).",
        write=sonic_vs_node,
    ),
)
