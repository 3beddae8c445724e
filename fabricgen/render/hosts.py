"""Host adapter: each HostConfig becomes files under `hosts/<node>/`.

- `nic-qos.sh` (GPU and storage nodes on Linux): the commands that make every data NIC agree with
  its leaf, one block per NIC from the template of its NIC family (templates/hosts/<family>.sh.j2;
  `unknown` prints the settings instead of guessing commands);
- `nic-qos.txt` (appliances, e.g. ONTAP): the same settings as a sheet, no commands;
- `netplan.yaml` (every Linux node): addresses, MTU, per-NIC routing tables and rules; written by
  its template like any other vendor syntax (PyYAML's emitter would take seconds at 1,000 nodes);
- `lab/hosts/<node>/netplan.yaml` (appliances): the same netplan as a lab twin, so `fabricgen lab`
  can run a storage appliance as a Linux namespace (like `lab/frr/` for NX-OS switches).

Shell variable names for the port-name mapping are derived here: `nic1` -> `NIC1_NETDEV`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from operator import attrgetter
from typing import NamedTuple

from netaddr import IPNetwork

from fabricgen.basics import version
from fabricgen.compiler.host_config import HostConfig, HostNic
from fabricgen.render.environment import TEMPLATE_GLOBALS, environment
from fabricgen.render.twin import HOST_TWIN_DIR

SCRIPT_FAMILIES = ("connectx", "broadcom", "pollara")  # families with a command template; others: unknown
TOOLS = {"connectx": "mlnx_qos", "broadcom": "dcb", "pollara": "nicctl"}


def render_hosts(hosts: Iterable[HostConfig]) -> dict[str, str]:
    """Every host's files, keyed by their path inside the build directory."""
    env = environment()
    family_templates = {family: env.get_template(f"hosts/{family}.sh.j2", globals=TEMPLATE_GLOBALS) for family in (*SCRIPT_FAMILIES, "unknown")}
    settings_header = env.get_template("hosts/nic-header.sh.j2")
    # A NIC's settings header and commands depend on its settings alone, which thousands of NICs
    # share (every rail's NIC of every node): each distinct set is rendered once (131,072 NICs: 8 renders).
    bodies: dict[tuple[object, str, tuple], str] = {}
    # a host's shell names and the setup part of its script (nic-qos-setup.sh.j2), by its NicPorts' fields
    setups: dict[tuple[tuple, ...], tuple[dict[str, str], str]] = {}

    def body(nic: HostNic, name: str) -> str:
        template = family_templates.get(nic.family, family_templates["unknown"])  # type: ignore[arg-type]
        key = (template, name, _settings_of(nic))  # NicSettings made only for a new key: once per distinct set
        body = bodies.get(key)
        if body is None:
            settings = NicSettings(*key[2])
            body = bodies[key] = settings_header.render(nic=settings) + template.render(nic=settings, names={nic.port: name})
        return body

    script, netplan = env.get_template("hosts/nic-qos.sh.j2"), env.get_template("hosts/netplan.yaml.j2")
    files: dict[str, str] = {}
    for host in hosts:
        base = f"hosts/{host.hostname}"
        if host.appliance:
            files[f"{base}/nic-qos.txt"] = env.get_template("hosts/ontap.txt.j2").render(
                host=host, netmask=_netmask, routes_of=_gateway_routes, version=version.RELEASE
            )
            # the same addresses and routes as netplan, for the lab to run the appliance as Linux
            files[f"{HOST_TWIN_DIR}/{host.hostname}/netplan.yaml"] = netplan.render(host=host, nics=netplan_nics(host), version=version.RELEASE, twin=True)
            continue
        if host.rdma:
            ports = tuple(map(_nic_port, host.nics))  # its NicPorts' fields
            if ports not in setups:  # the nodes of a model have the same ports: one setup text for all
                families = {nic.family for nic in host.nics}
                names = shell_names(host.nics)
                tools = [TOOLS[family] for family in SCRIPT_FAMILIES if family in families]
                setup = env.get_template("hosts/nic-qos-setup.sh.j2").render(nics=[NicPort(*port) for port in ports], names=names, tools=tools)
                setups[ports] = (names, setup)
            names, setup = setups[ports]
            # each NIC's NicLines fields, read in one call, and its body: a plain tuple (NicLines(...) is a Python call per NIC)
            lines = [_nic_lines(nic) + (body(nic, names[nic.port]),) for nic in host.nics]
            files[f"{base}/nic-qos.sh"] = script.render(host=host, setup=setup, nics=lines, version=version.RELEASE)
        files[f"{base}/netplan.yaml"] = netplan.render(host=host, nics=netplan_nics(host), version=version.RELEASE, twin=False)
    return files


class NicPort(NamedTuple):
    """What the setup part of a host's script (templates/hosts/nic-qos-setup.sh.j2) may read of a
    NIC, so the hosts with the same ports share one rendering (StrictUndefined fails the build on
    any other field)."""

    port: str
    qos: bool
    family: str | None


_nic_port = attrgetter(*NicPort._fields)


class NicLines(NamedTuple):
    """What nic-qos.sh.j2 writes of one NIC, in the order its loop unpacks them: a tuple is
    unpacked in one step, where each `nic.port` in a template is a call (131,072 NICs)."""

    port: str
    nic: str | None  # the NIC model
    network: str
    switch: str
    switch_port: str
    cable: str
    cidr: str
    body: str  # its settings header and its family's commands (nic-header.sh.j2, <family>.sh.j2)


_nic_lines = attrgetter(*NicLines._fields[:-1])  # a HostNic's NicLines fields but its body


class NetplanNic(NamedTuple):
    """What netplan.yaml.j2 writes of one NIC, in the order its loops unpack them (a tuple is
    unpacked in one step, where each `nic.port` in a template is a call: 131,072 NICs)."""

    port: str
    network: str
    switch: str
    switch_port: str
    cable: str
    cidr: str
    gateway: str
    table: int
    mtu: int
    address: str
    routes: list[tuple[str, str | None, int | None, int | None]]  # HostRoute's (to, via, table, metric)


_netplan_fields = attrgetter(*NetplanNic._fields[:-1])  # a HostNic's NetplanNic fields but its routes, in one call
_route_fields = attrgetter("to", "via", "table", "metric")


def netplan_nics(host: HostConfig) -> list[tuple]:
    """Each NIC's NetplanNic fields, a plain tuple (NetplanNic(...) is a Python call per NIC)."""
    return [_netplan_fields(nic) + (list(map(_route_fields, nic.routes)),) for nic in host.nics]


class NicSettings(NamedTuple):
    """What a NIC's commands (templates/hosts/<family>.sh.j2) may read of it: no cable, leaf or
    address, so NICs set alike share one rendering. A field the templates start to read must be
    added here (a template reading one that is missing fails the build: StrictUndefined)."""

    port: str
    network: str
    mtu: int
    qos: bool
    lossless_priorities: tuple[int, ...]
    dscp_to_priority: tuple[tuple[int, int], ...]
    rdma_dscp: int | None
    rdma_priority: int | None
    cnp_dscp: int | None
    cnp_priority: int | None
    lossless_bandwidth_percent: int | None


_settings_of = attrgetter(*NicSettings._fields)  # a HostNic's NicSettings fields, in order, in one call


def shell_names(nics: Iterable[HostNic]) -> dict[str, str]:
    """Port name -> a shell variable stem, unique on the host: nic1 -> NIC1, e1a -> E1A."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for nic in nics:
        stem = re.sub(r"[^A-Z0-9]", "_", nic.port.upper())
        if not stem[0].isalpha():
            stem = f"PORT_{stem}"
        unique, n = stem, 2
        while unique in taken:
            unique, n = f"{stem}_{n}", n + 1
        taken.add(unique)
        names[nic.port] = unique
    return names


def _netmask(nic: HostNic) -> str:
    return str(IPNetwork(nic.cidr).netmask)


def _gateway_routes(nic: HostNic) -> list[tuple[str, str, int | None]]:
    """(to, via, main-table metric) once per destination and gateway: an appliance has one
    routing table per port or per SVM rather than Linux's tables and rules."""
    found: dict[tuple[str, str], int | None] = {}
    for route in nic.routes:
        if route.via is not None:
            key = (route.to, route.via)
            found[key] = found.get(key) if route.metric is None else route.metric
    return [(to, via, metric) for (to, via), metric in found.items()]
