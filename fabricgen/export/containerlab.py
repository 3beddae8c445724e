"""A containerlab topology of one routed fabric of a build: the lab `fabricgen lab` runs, as containers.

`render_containerlab(build, network, images) -> {path: text}`
    `<lab>.clab.yml` (lab = the fabric's name, `-<network>` added for frontend and storage),
    per switch that runs FRR `frr/<switch>/frr.conf` and `frr/<switch>/daemons`, per switch in
    its NOS's own container the files its package writes (cEOS: `ceos/<switch>/startup-config`
    and `ceos/<switch>/EosIntfMapping.json`; SONiC-VS: `sonic/<switch>/config_db.json`,
    `frr.conf`, `vtysh-boot.conf` and `port_map.json`).

What each device becomes (containerlab's docs: manual/topo-def-file.md, manual/nodes.md,
manual/kinds/linux.md, lab-examples/frr01):
- a switch whose NOS's package gives no container of its own (`ExportParts.containerlab` None:
  NX-OS): a `linux` node running FRR (`images.frr`) with the build's routing twin
  (lab/frr/<switch>.conf, the same BGP/BFD model its config comes from; a SONiC switch's own
  frr.conf; secrets as stand-ins of their slots' forms, `dummy_secrets`, the same on every node) bound to
  /etc/frr/frr.conf and a daemons file (zebra, bgpd, bfdd, staticd) to /etc/frr/daemons; `exec`
  runs the `ip` lines `fabricgen lab up` runs for it (`fabricgen.lab.runtime.switch_commands`:
  loopback addresses, a bridge with the servers' gateway per segment, under EVPN its VXLAN
  device, every port's MTU and address);
- a switch whose NOS's package gives its own container (SONiC as `sonic-vs` booting the build's
  config_db.json and frr.conf on the SONiC-VS image's ports, `sonic/<switch>/`; EOS as cEOS-lab
  booting the build's config): the node its package writes (`ContainerlabNode.write`: kind,
  image, what it boots and binds, the files it needs, and its wires: the container's interface
  behind each of its cabled ports), with the image of the NOS's option (`images.nos`) or the
  package's default. Its files must lie in the export (relative plain names) and its binds name
  only those files (`_unsafe_files`);
- such a switch with more cabled ports than its image holds (`containerlab_ports.PortsBeyondImage`:
  SONiC-VS's 32): FRR running the lab's routing of it (its frr.conf), as a switch of a NOS without
  a container, named in the topology's header and in the CLI's notes; refused instead with
  `frr_twins=False` (--no-frr-twins);
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricgen import __version__
from fabricgen.basics.errors import Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import HOSTNAME, quoted
from fabricgen.build.build_dir import CableRow, TopologyNode
from fabricgen.build.secrets import dummy_secrets
from fabricgen.compiler.design.graph import FABRIC_ROLES
from fabricgen.export.source import ExportBuild, ExportError, export_parts
from fabricgen.nos.interface import ContainerlabNode, LabNode, LabSwitch, plugin

if TYPE_CHECKING:
    from fabricgen.export.containerlab_ports import PortsBeyondImage

# FRR's own image, as containerlab's FRR example lab (lab-examples/frr01) runs it; the host image is
# the one that lab gives its hosts (iproute2, ping, traceroute).
FRR_IMAGE = "quay.io/frrouting/frr:10.5.1"
HOST_IMAGE = "wbitt/network-multitool:3.22.2"
# FRR's daemons file (docs.frrouting.org, "Daemons Configuration File"): the daemons a fabricgen
# routing twin needs, each bound to the loopback for vtysh only.
DAEMONS = ("zebra", "bgpd", "bfdd", "staticd")
EXPORT_PATH_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a part of a path the export writes
CONTAINER_PATH = re.compile(r"(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){1,8}")  # where a bind lands in the container
IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}")  # registry/name:tag or @digest, nothing a YAML line could break on


@dataclass(frozen=True)
class Images:
    frr: str = FRR_IMAGE
    host: str = HOST_IMAGE
    nos: Mapping[str, str] = field(default_factory=dict)  # NOS -> the image of its own container, when given (its option)


def lab_name(build: ExportBuild, network: str) -> str:
    return build.name if network == "backend" else f"{build.name}-{network}"


def render_containerlab(
    build: ExportBuild, network: str = "backend", images: Images = Images(), frr_twins: bool = True, notes: list[str] | None = None
) -> dict[str, str]:
    """The topology file and the FRR files of `network` (ExportError when the build has no such
    fabric). A switch with more cabled ports than its NOS's image holds runs as an FRR twin
    (`frr_twins`, each named in `notes` and in the topology's header) or is refused."""
    from fabricgen.basics.errors import LabError
    from fabricgen.export.containerlab_ports import PortsBeyondImage
    from fabricgen.lab.plan import plan_of
    from fabricgen.lab.runtime import node_commands, switch_commands

    options = [("--frr-image", images.frr), ("--host-image", images.host)]
    options += [(_own_container(nos).image_option, image) for nos, image in images.nos.items()]
    bad = [(option, value) for option, value in options if not IMAGE.fullmatch(value)]
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

    names: dict[str, Mapping[str, str]] = {}  # device -> build port -> the interface its links name
    files: dict[str, str] = {}
    blocks: list[str] = []
    problems: list[Problem] = []
    twins: list[str] = []  # why each switch that has a container of its own runs as FRR instead
    for device in sorted(ports, key=natural_key):
        node = build.nodes[device]
        if not HOSTNAME.fullmatch(device):  # it names files and the node: checked here again, whatever the build's reader let through
            problems.append(Problem(f"{quoted(device)} is not a device name the export can use", file=str(build.root / "topology.json")))
            continue
        parts = export_parts(node.nos)
        own = parts.containerlab if parts is not None and node.role in FABRIC_ROLES else None
        why = None
        if own is not None:
            address = build.management_address(device)
            switch = LabSwitch(build.files, device, node, tuple(ports[device]), address.interface if address else None, images.nos.get(node.nos or ""))
            try:
                written = own.write(switch)
            except ExportError as exc:
                problems += exc.problems
                continue
            except PortsBeyondImage as full:
                if not frr_twins:
                    problems.append(_beyond(full, network, build))
                    continue
                why = f"{full.ports} cabled ports, {full.image.image} ({full.image.hwsku}) holds {len(full.image.ports)}"
                twins.append(f"{device}: {why}; runs as an FRR twin of its frr.conf")
            else:
                problem = _unsafe_files(device, written)
                if problem is not None:
                    problems.append(problem)
                    continue
                names[device] = written.wires
                files.update(written.files)
                blocks.append(_own_node(device, node, written))
                continue
        names[device] = {port.port: port.ifname for port in plan.ports_of(device)}
        if node.role in FABRIC_ROLES:
            routing = plan.switches[device]  # its frr.conf (SONiC) or routing twin (other NOSes), read and checked by the lab's plan
            files[f"frr/{device}/frr.conf"] = dummy_secrets({routing.frr_source: routing.frr_conf}).fill(routing.frr_conf)
            files[f"frr/{device}/daemons"] = _daemons()
            blocks.append(_frr_node(device, node, ["ip " + line for line in switch_commands(plan, device)], images, why))
        else:
            blocks.append(_host_node(device, node, ["ip " + line for line in node_commands(plan, device)], images))
    if problems:
        raise ExportError(problems)
    if notes is not None:
        notes += twins

    name = lab_name(build, network)
    lines = [
        f"# {name}: the {network} fabric of {build.name} as a containerlab topology, written by fabricgen {__version__}",
        "# (fabricgen export containerlab). Deploy: sudo containerlab deploy -t " + f"{name}.clab.yml",
        *(f"# {twin}" for twin in twins),
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


def numbered_wires(ports: tuple[str, ...]) -> dict[str, str]:
    """A container's wires that are eth1, eth2, ... in the natural order of the build's port names
    (SONiC-VS's and cEOS's): build port -> its wire."""
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


def _own_container(nos: str) -> ContainerlabNode:
    """The container of its own that `nos`'s package gives (Images.nos names only such NOSes)."""
    own = plugin(nos).EXPORT.containerlab
    if own is None:
        raise ValueError(f"{nos} runs no container of its own in containerlab: its switches run FRR")
    return own


def _own_node(device: str, node: TopologyNode, written: LabNode) -> str:
    """The node block of a switch in its NOS's own container, as its package described it."""
    binds = ["      binds:", *(f"        - {_q(bind)}" for bind in written.binds)] if written.binds else []
    return "\n".join(
        [
            f"    # {written.comment}",
            f"    {_q(device)}:",
            f"      kind: {_q(written.kind)}",
            f"      image: {_q(written.image)}",
            *([f"      startup-config: {_q(written.startup_config)}"] if written.startup_config else []),
            *binds,
            *_labels(node),
        ]
    )


def _frr_node(device: str, node: TopologyNode, commands: list[str], images: Images, why: str | None = None) -> str:
    """A switch as FRR running its routing (`why`: the reason a switch whose NOS has a container
    of its own does not run in it)."""
    from fabricgen.lab.runtime import SWITCH_SYSCTLS

    sysctls = [setting.split("=", 1) for setting in SWITCH_SYSCTLS]
    comment = f"{device}: {node.nos} ({node.model}) as FRR running its routing twin" + (f" ({why})" if why else "")
    return "\n".join(
        [
            f"    # {comment}",
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


def _beyond(full: PortsBeyondImage, network: str, build: ExportBuild) -> Problem:
    image = full.image
    return Problem(
        f"{full.device} has {full.ports} cabled ports in the {network} fabric; {image.image} ({image.kind}, HwSKU {image.hwsku}) holds {len(image.ports)}",
        hint="export without --no-frr-twins to run it as an FRR twin, or give it at most that many ports",
        file=str(build.root / "cabling.csv"),
    )


def _unsafe_files(device: str, written: LabNode) -> Problem | None:
    """A problem when a node's package would write or bind a file outside its own folder of the
    export (a relative path of plain names), or bind one the export does not write."""
    bad = [path for path in written.files if not _inside(path)]
    for bind in written.binds:
        source, _, target = bind.partition(":")
        target, _, mode = target.partition(":")
        if source not in written.files or not CONTAINER_PATH.fullmatch(target) or mode not in ("", "ro"):
            bad.append(bind)
    if written.startup_config is not None and written.startup_config not in written.files:
        bad.append(written.startup_config)
    if not bad:
        return None
    return Problem(f"{device}: the export would write or bind {quoted(bad[0])}, not a file of its own in the export directory")


def _inside(path: str) -> bool:
    parts = path.split("/")
    return 1 < len(parts) <= 4 and all(EXPORT_PATH_PART.fullmatch(part) and part not in (".", "..") for part in parts)


def cables_of(build: ExportBuild, network: str) -> list[CableRow]:
    """The cables the topology wires: the network's host and fabric cables, and a spine-free
    pair's peer links (its switches' routing twins peer over them)."""
    return [row for row in build.cables if row.network == network and row.kind in ("host", "fabric", "peer")]
