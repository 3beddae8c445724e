"""A containerlab topology of one routed fabric of a build: the lab `fabricgen lab` runs, as containers.

`render_containerlab(build, network, images) -> {path: text}`
    `<lab>.clab.yml` (lab = the fabric's name, `-<network>` added for frontend and storage) and,
    per switch that runs FRR, `frr/<switch>/frr.conf` and `frr/<switch>/daemons`.

What each device becomes (containerlab's docs: manual/topo-def-file.md, manual/nodes.md,
manual/kinds/linux.md, manual/kinds/sonic-vs.md, lab-examples/frr01):
- a switch of any NOS but SONiC: a `linux` node running FRR (`images.frr`) with the build's routing
  twin (lab/frr/<switch>.conf, the same BGP/BFD model its NX-OS config comes from) bound to
  /etc/frr/frr.conf and a daemons file (zebra, bgpd, bfdd, staticd) to /etc/frr/daemons; `exec`
  runs the `ip` lines `fabricgen lab up` runs for it (`fabricgen.lab.runtime.switch_commands`:
  loopback addresses, a bridge with the servers' gateway per segment, under EVPN its VXLAN
  device, every port's MTU and address);
- a SONiC switch: a `sonic-vs` node (`images.sonic`). SONiC-VS names its data ports after its
  own lane map, eth1 behind Ethernet0, eth2 behind Ethernet4 and so on, so the switch's cabled
  ports are wired to eth1, eth2, ... in the natural order of their build names (each link's comment
  names both). Its config is SONiC-VS's own: the build's config_db.json is written for the real
  platform's port map and is not loaded;
- an EOS switch: an `arista_ceos` node (containerlab's cEOS kind, also named `ceos`; image
  `images.ceos`, by default `ceos:<the release the build is written for>`, which the user imports
  from Arista's cEOS-lab archive) that boots the build's config (`startup-config`, its secrets
  replaced by stand-ins of their slots' forms, as the Batfish export does: the lab never sees a
  real key). Its cabled ports are wired to eth1, eth2, ... in natural order, and a cEOS interface
  mapping file (containerlab's ceos page, "User-defined interface mapping", cEOS 4.28.0F and
  later: /mnt/flash/EosIntfMapping.json) gives each the build's name (eth1 -> Ethernet1/1) and
  eth0 the build's management port, so the config's interface names are the container's;
- a GPU, storage or management node: a `linux` node (`images.host`) whose `exec` applies its
  netplan as `fabricgen lab up` does (`node_commands`: addresses, MTU, the per-NIC routing
  tables and rules).

Linux interface names inside `linux` nodes are the lab's (`fabricgen.lab.plan.kernel_names`: a build
name the kernel takes is kept, Ethernet1/33 becomes eth1-33). Every cable of the network's
cabling plan (host and fabric links) is one `endpoints` pair, in cabling-plan order.

The YAML is written here rather than by a YAML library so every link carries its cable ID as a
comment; every scalar goes out as a JSON string (valid YAML), every name has passed the build's
trust checks.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass

from fabricgen import __version__
from fabricgen.basics.errors import Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import quoted
from fabricgen.build.build_dir import CableRow, TopologyNode
from fabricgen.build.secrets import dummy_secrets
from fabricgen.compiler.design.graph import FABRIC_ROLES
from fabricgen.export.source import ExportBuild, ExportError

# FRR's own image, as containerlab's FRR example lab (lab-examples/frr01) runs it; the host image is
# the one that lab gives its hosts (iproute2, ping, traceroute). SONiC-VS has no registry image:
# containerlab's sonic-vs page has it built from the sonic-buildimage pipeline (docker-sonic-vs.gz).
FRR_IMAGE = "quay.io/frrouting/frr:10.5.1"
HOST_IMAGE = "wbitt/network-multitool:3.22.2"
SONIC_IMAGE = "docker-sonic-vs:latest"
CEOS_KIND = "arista_ceos"  # containerlab nodes/ceos/ceos.go KindNames: ceos, arista_ceos
CEOS_MAPPING = "/mnt/flash/EosIntfMapping.json"
# FRR's daemons file (docs.frrouting.org, "Daemons Configuration File"): the daemons a fabricgen
# routing twin needs, each bound to the loopback for vtysh only.
DAEMONS = ("zebra", "bgpd", "bfdd", "staticd")
IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}")  # registry/name:tag or @digest, nothing a YAML line could break on


@dataclass(frozen=True)
class Images:
    frr: str = FRR_IMAGE
    sonic: str = SONIC_IMAGE
    host: str = HOST_IMAGE
    ceos: str | None = None  # None: ceos:<the switch's EOS release>


def lab_name(build: ExportBuild, network: str) -> str:
    return build.name if network == "backend" else f"{build.name}-{network}"


def render_containerlab(build: ExportBuild, network: str = "backend", images: Images = Images()) -> dict[str, str]:
    """The topology file and the FRR files of `network` (ExportError when the build has no such fabric)."""
    from fabricgen.basics.errors import LabError
    from fabricgen.lab.plan import plan_of
    from fabricgen.lab.runtime import node_commands, switch_commands
    from fabricgen.render.twin import TWIN_DIR

    bad = [
        (option, value)
        for option, value in (("--frr-image", images.frr), ("--sonic-image", images.sonic), ("--host-image", images.host), ("--ceos-image", images.ceos))
        if value is not None and not IMAGE.fullmatch(value)
    ]
    if bad:
        raise ExportError(
            [
                Problem(f"{quoted(value)} is not an image reference", field=(option,), hint="give registry/name:tag, e.g. quay.io/frrouting/frr:10.5.1")
                for option, value in bad
            ]
        )
    build.require_network(network)
    cables = cables_of(build, network)
    if not cables:
        raise ExportError(Problem(f"the {network} fabric has no host or fabric cables", file=str(build.root / "cabling.csv")))
    try:
        plan = plan_of(build.files, network)  # the lab `fabricgen lab up` would run: its interfaces, addresses, segments, routes
    except LabError as exc:
        raise ExportError(exc.problems) from None
    ports: dict[str, list[str]] = defaultdict(list)
    for row in cables:
        ports[row.a_device].append(row.a_port)
        ports[row.b_device].append(row.b_port)
    devices = sorted(ports, key=natural_key)
    sonic = {d for d in devices if build.nodes[d].nos == "sonic"}
    ceos = {d for d in devices if build.nodes[d].nos == "eos" and build.nodes[d].role in FABRIC_ROLES}
    names = {d: _numbered(ports[d]) if d in sonic | ceos else {port.port: port.ifname for port in plan.ports_of(d)} for d in devices}

    files: dict[str, str] = {}
    blocks: list[str] = []
    problems: list[Problem] = []
    for device in devices:
        node = build.nodes[device]
        if node.role in FABRIC_ROLES and device in sonic:
            blocks.append(_sonic_node(device, node, ports[device], names[device], images))
        elif device in ceos:
            config = f"configs/{device}.cfg"
            if not build.files.has(config):
                problems.append(Problem(f"{device} (eos) has no {config}", hint="rebuild the directory", file=str(build.root / "manifest.json")))
                continue
            text = build.files.text(config)
            files[f"ceos/{device}/startup-config"] = dummy_secrets({config: text}, {config: "eos"}).fill(text)
            port = build.management_address(device)
            files[f"ceos/{device}/EosIntfMapping.json"] = _ceos_mapping(names[device], port.interface if port else None)
            blocks.append(_ceos_node(device, node, names[device], images))
        elif node.role in FABRIC_ROLES:
            twin = f"{TWIN_DIR}/{device}.conf"
            if not build.files.has(twin):
                problems.append(
                    Problem(f"{device} ({node.nos}) has no routing twin {twin}", hint="rebuild the directory", file=str(build.root / "manifest.json"))
                )
                continue
            files[f"frr/{device}/frr.conf"] = build.files.text(twin)
            files[f"frr/{device}/daemons"] = _daemons()
            blocks.append(_frr_node(device, node, ["ip " + line for line in switch_commands(plan, device)], images))
        else:
            blocks.append(_host_node(device, node, ["ip " + line for line in node_commands(plan, device)], images))
    if problems:
        raise ExportError(problems)

    name = lab_name(build, network)
    lines = [
        f"# {name}: the {network} fabric of {build.name} as a containerlab topology, written by fabricgen {__version__}",
        "# (fabricgen export containerlab). Deploy: sudo containerlab deploy -t " + f"{name}.clab.yml",
        f"name: {_q(name)}",
        "topology:",
        "  nodes:",
        *blocks,
        "  links:",
    ]
    for row in cables:
        a, b = names[row.a_device][row.a_port], names[row.b_device][row.b_port]
        lines.append(f"    # {row.cable_id}: {row.a_device} {row.a_port} - {row.b_device} {row.b_port} ({row.speed})")
        lines.append(f"    - endpoints: [{_q(f'{row.a_device}:{a}')}, {_q(f'{row.b_device}:{b}')}]")
    files[f"{name}.clab.yml"] = "\n".join(lines) + "\n"
    return files


def _q(value: object) -> str:
    """A YAML scalar: a JSON string (double-quoted YAML) or number."""
    return json.dumps(value)


def _daemons() -> str:
    lines = [f"# FRR daemons for a fabricgen routing twin (fabricgen {__version__})"]
    lines += [f"{daemon}=yes" for daemon in DAEMONS]
    lines.append("vtysh_enable=yes")
    lines += [f'{daemon}_options="-A 127.0.0.1"' for daemon in DAEMONS]
    return "\n".join(lines) + "\n"


def _numbered(ports: list[str]) -> dict[str, str]:
    """SONiC-VS's and cEOS's wires: eth1, eth2, ... in the natural order of the build's port names."""
    return {port: f"eth{index}" for index, port in enumerate(sorted(ports, key=natural_key), start=1)}


def _labels(node: TopologyNode) -> list[str]:
    labels = {"fabricgen.role": node.role.value, "fabricgen.model": node.model}
    if node.nos:
        labels["fabricgen.nos"] = node.nos
    if node.scalable_unit is not None:
        labels["fabricgen.scalable-unit"] = str(node.scalable_unit)
    if node.rail is not None:
        labels["fabricgen.rail"] = str(node.rail)
    if node.pod is not None:
        labels["fabricgen.pod"] = str(node.pod)
    return ["      labels:", *(f"        {key}: {_q(value)}" for key, value in labels.items())]


def _exec(commands: list[str]) -> list[str]:
    return ["      exec:", *(f"        - {_q(command)}" for command in commands)] if commands else []


def _sonic_node(device: str, node: TopologyNode, ports: list[str], names: dict[str, str], images: Images) -> str:
    wires = ", ".join(f"{names[p]}={p}" for p in sorted(ports, key=natural_key))
    return "\n".join(
        [
            f"    # {device}: SONiC ({node.model}); SONiC-VS ports behind {wires}",
            f"    {_q(device)}:",
            '      kind: "sonic-vs"',
            f"      image: {_q(images.sonic)}",
            *_labels(node),
        ]
    )


def _ceos_mapping(names: dict[str, str], management_port: str | None) -> str:
    """A cEOS interface mapping: each wire to the build's name of the port behind it, eth0 to the
    build's management port (ManagementIntf, EthernetIntf: containerlab's ceos page)."""
    document = {
        "ManagementIntf": {"eth0": management_port or "Management1"},
        "EthernetIntf": {wire: port for port, wire in sorted(names.items(), key=lambda item: int(item[1][3:]))},
    }
    return json.dumps(document, indent=2) + "\n"


def _ceos_node(device: str, node: TopologyNode, names: dict[str, str], images: Images) -> str:
    wires = ", ".join(f"{wire}={port}" for port, wire in sorted(names.items(), key=lambda item: int(item[1][3:])))
    release = f"ceos:{node.nos_release}" if node.nos_release and IMAGE.fullmatch(f"ceos:{node.nos_release}") else "ceos:latest"
    image = images.ceos or release
    return "\n".join(
        [
            f"    # {device}: EOS ({node.model}) as cEOS-lab booting the build's config; ports {wires}",
            f"    {_q(device)}:",
            f"      kind: {_q(CEOS_KIND)}",
            f"      image: {_q(image)}",
            f"      startup-config: {_q(f'ceos/{device}/startup-config')}",
            "      binds:",
            f"        - {_q(f'ceos/{device}/EosIntfMapping.json:{CEOS_MAPPING}:ro')}",
            *_labels(node),
        ]
    )


def _frr_node(device: str, node: TopologyNode, commands: list[str], images: Images) -> str:
    from fabricgen.lab.runtime import SWITCH_SYSCTLS

    sysctls = [setting.split("=", 1) for setting in SWITCH_SYSCTLS]
    return "\n".join(
        [
            f"    # {device}: {node.nos} ({node.model}) as FRR running its routing twin",
            f"    {_q(device)}:",
            '      kind: "linux"',
            f"      image: {_q(images.frr)}",
            "      binds:",
            f"        - {_q(f'frr/{device}/frr.conf:/etc/frr/frr.conf')}",
            f"        - {_q(f'frr/{device}/daemons:/etc/frr/daemons')}",
            "      sysctls:",
            *(f"        {key}: {_q(int(value) if value.isdigit() else value)}" for key, value in sysctls),
            *_labels(node),
            *_exec(commands),
        ]
    )


def _host_node(device: str, node: TopologyNode, commands: list[str], images: Images) -> str:
    return "\n".join(
        [
            f"    {_q(device)}:",
            '      kind: "linux"',
            f"      image: {_q(images.host)}",
            *_labels(node),
            *_exec(commands),
        ]
    )


def cables_of(build: ExportBuild, network: str) -> list[CableRow]:
    """The cables the topology wires: the network's host and fabric cables."""
    return [row for row in build.cables if row.network == network and row.kind in ("host", "fabric")]
