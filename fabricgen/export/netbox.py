"""A build as NetBox bulk-import CSV files, and the same objects as a request plan for `--push`.

Written for NetBox 4.6 (release 4.6.8): the column names are the fields of its import forms
(netbox/dcim/forms/bulk_import.py, netbox/ipam/forms/bulk_import.py), the values its choice sets
(netbox/dcim/choices.py, netbox/ipam/choices.py). Import the files in the order of `IMPORT_ORDER`
(each refers to objects the earlier ones create).

- manufacturers.csv (name, slug): the catalog's `vendor` of each switch model; models whose
  catalog entry names no vendor (nodes, console servers) get `UNKNOWN_MANUFACTURER`;
- device-roles.csv (name, slug, color), platforms.csv (name, slug, manufacturer: the NOSes, named
  as their packages say, `ExportParts.netbox_platform` and `netbox_manufacturer`; every NOS
  package's manufacturer is in manufacturers.csv);
- device-types.csv (manufacturer, model, slug, part_number, u_height): rack units from fabricgen's
  built-in catalog, 1 for a model it does not hold;
- sites.csv (name, slug, status): one site, the fabric;
- racks.csv (site, name, status, width, u_height) when the build has a layout (topology.json's
  `rack` per device);
- devices.csv (name, role, manufacturer, device_type, platform, status, site, rack, position, face);
- interfaces.csv (device, name, type, speed, mgmt_only, description): every cabled port and every
  addressed interface; the type from the port's form factor (its optic, else its cable, in the
  catalog) and speed (`INTERFACE_TYPES`), `virtual` for loopbacks and SVIs, else `other`;
- console-ports.csv / console-server-ports.csv (device, name, type) for console cables;
- cables.csv (side_a_device, side_a_type, side_a_name, side_b_device, side_b_type, side_b_name,
  type, status, label, length, length_unit): the cabling plan, label = the cable ID;
- ip-addresses.csv (address, status, role, device, interface, is_oob, description).

A cell that starts with `= + - @` (a rack named in an edited build, say) starts with a quote in
the files, so a spreadsheet shows it as text (OWASP, CSV Injection; fabricgen.basics.csv_format); `--push`
sends the name as it is.

Everything is `planned` where NetBox's choices have it (sites, racks, devices, cables): a build is
a plan until it is racked. Devices outside the build (the management core an OOB uplink ends at)
and their cables are left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricgen.basics.csv_format import csv_text
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import CableRow, TopologyNode
from fabricgen.compiler.design.graph import Role
from fabricgen.export.source import ExportBuild, export_parts
from fabricgen.nos.interface import plugins

if TYPE_CHECKING:
    from fabricgen.catalog import Catalog

NETBOX_VERSION = "4.6.8"
UNKNOWN_MANUFACTURER = "Unknown"
OUTSIDE = "-"  # topology.json's model of a device outside the build
IMPORT_ORDER = (
    "manufacturers.csv", "device-roles.csv", "platforms.csv", "device-types.csv", "sites.csv", "racks.csv", "devices.csv",
    "interfaces.csv", "console-ports.csv", "console-server-ports.csv", "cables.csv", "ip-addresses.csv",
)  # fmt: skip
ROLE_COLORS = {  # NetBox ColorField: six hex digits, no '#'
    "gpu-node": "4caf50", "storage-node": "795548", "management-node": "607d8b", "leaf": "2196f3", "spine": "3f51b5",
    "core": "9c27b0", "oob-switch": "ff9800", "console-server": "ffc107", "pdu": "9e9e9e",
}  # fmt: skip
# (form factor as the catalog names it, link speed in Gb/s) -> NetBox InterfaceTypeChoices value.
# ("QSFP28", 50) is no typo: NetBox's value 50gbase-x-sfp28 carries the label "QSFP28 (50GE)"
# (dcim/choices.py TYPE_50GE_QSFP28; its API schema lists the pair the same way).
INTERFACE_TYPES = {
    ("RJ45", 1): "1000base-t", ("RJ45", 10): "10gbase-t", ("SFP", 1): "1000base-x-sfp", ("SFP+", 10): "10gbase-x-sfpp",
    ("SFP28", 25): "25gbase-x-sfp28", ("QSFP28", 100): "100gbase-x-qsfp28", ("QSFP28", 50): "50gbase-x-sfp28",
    ("QSFP-DD", 100): "100gbase-x-qsfpdd", ("QSFP56", 200): "200gbase-x-qsfp56", ("QSFP-DD", 200): "200gbase-x-qsfpdd",
    ("QSFP112", 400): "400gbase-x-qsfp112", ("QSFP-DD", 400): "400gbase-x-qsfpdd", ("OSFP", 400): "400gbase-x-osfp",
    ("QSFP-DD", 800): "800gbase-x-qsfpdd", ("OSFP", 800): "800gbase-x-osfp",
}  # fmt: skip
# the catalog cable's `media` -> NetBox CableTypeChoices value (copper: the category is not in the catalog)
CABLE_TYPES = {"dac": "dac-passive", "aoc": "aoc", "mmf": "mmf", "smf": "smf"}
VIRTUAL_KINDS = {"loopback", "vtep", "gateway", "anycast-gateway", "management-gateway"}


@dataclass
class NetboxData:
    """Every object of the export as rows (column -> value), per file."""

    rows: dict[str, list[dict[str, str]]] = field(default_factory=lambda: defaultdict(list))


def slug(value: str) -> str:
    """A NetBox slug (letters, digits, '-' and '_'): lowercase, anything else as '-'."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9_-]", "-", value.lower())).strip("-") or "x"


def platform(nos: str) -> tuple[str, str]:
    """A NOS's NetBox platform and its manufacturer ("" for none): as its package names them, the
    NOS's own name for one fabricgen has no package for."""
    parts = export_parts(nos)
    return (parts.netbox_platform, parts.netbox_manufacturer or "") if parts is not None else (nos, "")


def netbox_data(build: ExportBuild) -> NetboxData:
    """The objects of `build` as NetBox import rows (see the module docstring)."""
    from fabricgen.catalog import load_catalog

    catalog = load_catalog()
    data = NetboxData()
    site = build.name
    inside = [n for n in sorted(build.topology.nodes, key=lambda n: natural_key(n.id)) if n.model != OUTSIDE]
    names = {n.id for n in inside}

    def vendor(model: str) -> str:
        switch = catalog.switches.get(model)
        return switch.vendor if switch is not None else UNKNOWN_MANUFACTURER

    def height(model: str) -> int:
        for section in (catalog.switches, catalog.nodes, catalog.console_servers):
            if model in section:
                return section[model].rack_units
        return 1

    models = sorted({n.model for n in inside}, key=natural_key)
    makers = {package.EXPORT.netbox_manufacturer for package in plugins().values()}
    manufacturers = sorted({vendor(m) for m in models} | {m for m in makers if m}, key=str.lower)
    data.rows["manufacturers.csv"] = [{"name": m, "slug": slug(m)} for m in manufacturers]
    roles = sorted({n.role.value for n in inside})
    data.rows["device-roles.csv"] = [{"name": r, "slug": slug(r), "color": ROLE_COLORS.get(r, "9e9e9e")} for r in roles]
    noses = sorted({n.nos for n in inside if n.nos})
    data.rows["platforms.csv"] = [{"name": platform(nos)[0], "slug": slug(nos), "manufacturer": platform(nos)[1]} for nos in noses]
    data.rows["device-types.csv"] = [{"manufacturer": vendor(m), "model": m, "slug": slug(m), "part_number": m, "u_height": str(height(m))} for m in models]
    data.rows["sites.csv"] = [{"name": site, "slug": slug(site), "status": "planned"}]
    racks = sorted({n.rack for n in inside if n.rack}, key=natural_key)
    tallest: dict[str, int] = defaultdict(lambda: 42)
    for n in inside:
        if n.rack and n.ru:
            tallest[n.rack] = max(tallest[n.rack], n.ru + height(n.model) - 1)
    data.rows["racks.csv"] = [{"site": site, "name": r, "status": "planned", "width": "19", "u_height": str(tallest[r])} for r in racks]
    for n in inside:
        data.rows["devices.csv"].append(
            {
                "name": n.id, "role": n.role.value, "manufacturer": vendor(n.model), "device_type": n.model,
                "platform": platform(n.nos)[0] if n.nos else "", "status": "planned", "site": site,
                "rack": n.rack or "", "position": str(n.ru) if n.rack and n.ru else "", "face": "front" if n.rack and n.ru else "",
            }
        )  # fmt: skip

    interfaces: dict[tuple[str, str], dict[str, str]] = {}
    console_ports: dict[tuple[str, str], dict[str, str]] = {}
    console_server_ports: dict[tuple[str, str], dict[str, str]] = {}
    for row in build.cables:
        if row.a_device not in names or row.b_device not in names:
            continue
        if row.kind == "console":
            # the cabling plan's a side is the device's console port, the b side the server's line
            console_ports[row.a_device, row.a_port] = {"device": row.a_device, "name": row.a_port, "type": "rj-45"}
            console_server_ports[row.b_device, row.b_port] = {"device": row.b_device, "name": row.b_port, "type": "rj-45"}
            side_type = ("dcim.consoleport", "dcim.consoleserverport")
        else:
            for device, port, optic in ((row.a_device, row.a_port, row.a_optic), (row.b_device, row.b_port, row.b_optic)):
                interfaces[device, port] = {
                    "device": device, "name": port, "type": _interface_type(catalog, build.nodes[device], optic, row), "speed": _kbps(row.speed),
                    "mgmt_only": "true" if row.kind == "management" and build.nodes[device].role not in (Role.OOB_SWITCH,) else "false",
                    "description": f"{row.cable_id} to {_other(row, device)}",
                }  # fmt: skip
            side_type = ("dcim.interface", "dcim.interface")
        data.rows["cables.csv"].append(
            {
                "side_a_device": row.a_device, "side_a_type": side_type[0], "side_a_name": row.a_port,
                "side_b_device": row.b_device, "side_b_type": side_type[1], "side_b_name": row.b_port,
                "type": _cable_type(catalog, row), "status": "planned", "label": row.cable_id,
                "length": row.length_m, "length_unit": "m" if row.length_m else "",
            }
        )  # fmt: skip
    for address_row in build.addresses:
        if address_row.device not in names:
            continue
        device, interface, kind = address_row.device, address_row.interface, address_row.kind
        if (device, interface) not in interfaces:
            virtual = kind in VIRTUAL_KINDS
            interfaces[device, interface] = {
                "device": device, "name": interface, "type": "virtual" if virtual else "other", "speed": "",
                "mgmt_only": "true" if kind == "management" else "false", "description": kind,
            }  # fmt: skip
        data.rows["ip-addresses.csv"].append(
            {
                "address": address_row.address, "status": "active", "role": "loopback" if kind in ("loopback", "vtep") else "anycast" if kind == "anycast-gateway" else "",
                "device": device, "interface": interface, "is_oob": "true" if kind == "management" else "",
                "description": f"{address_row.network} {kind}",
            }
        )  # fmt: skip

    def ordered(rows):
        return [rows[key] for key in sorted(rows, key=natural_key)]

    data.rows["interfaces.csv"] = ordered(interfaces)
    data.rows["console-ports.csv"] = ordered(console_ports)
    data.rows["console-server-ports.csv"] = ordered(console_server_ports)
    return data


COLUMNS = {
    "manufacturers.csv": ("name", "slug"),
    "device-roles.csv": ("name", "slug", "color"),
    "platforms.csv": ("name", "slug", "manufacturer"),
    "device-types.csv": ("manufacturer", "model", "slug", "part_number", "u_height"),
    "sites.csv": ("name", "slug", "status"),
    "racks.csv": ("site", "name", "status", "width", "u_height"),
    "devices.csv": ("name", "role", "manufacturer", "device_type", "platform", "status", "site", "rack", "position", "face"),
    "interfaces.csv": ("device", "name", "type", "speed", "mgmt_only", "description"),
    "console-ports.csv": ("device", "name", "type"),
    "console-server-ports.csv": ("device", "name", "type"),
    "cables.csv": (
        "side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
        "type", "status", "label", "length", "length_unit",
    ),
    "ip-addresses.csv": ("address", "status", "role", "device", "interface", "is_oob", "description"),
}  # fmt: skip


def render_netbox(build: ExportBuild) -> dict[str, str]:
    """The CSV files (a file with no rows is left out, racks.csv without a layout)."""
    return netbox_files(netbox_data(build))


def netbox_files(data: NetboxData) -> dict[str, str]:
    """The CSV files of rows already made (`export netbox --push` pushes the same rows)."""
    files = {}
    for name in IMPORT_ORDER:
        rows = data.rows.get(name, [])
        if rows:
            files[name] = _csv(COLUMNS[name], rows)
    return files


def _csv(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """The rows as CSV, a cell a spreadsheet would run as a formula (a rack named "=cmd|...")
    starting with a quote (fabricgen.basics.csv_format); the push sends the values themselves."""
    return csv_text(columns, [[row.get(column, "") for column in columns] for row in rows])


def _other(row: CableRow, device: str) -> str:
    return f"{row.b_device} {row.b_port}" if device == row.a_device else f"{row.a_device} {row.a_port}"


def _kbps(speed: str) -> str:
    """cabling.csv's speed (400G, 100M) as NetBox's interface speed (Kbps), blank when unknown."""
    match = re.fullmatch(r"(\d+)([GM])", speed)
    if not match:
        return ""
    return str(int(match.group(1)) * (1_000_000 if match.group(2) == "G" else 1_000))


def _gbps(speed: str) -> int | None:
    match = re.fullmatch(r"(\d+)G", speed)
    return int(match.group(1)) if match else None


def _interface_type(catalog: Catalog, node: TopologyNode, optic: str, row: CableRow) -> str:
    """The port's NetBox type from its form factor: the optic in its cage, else the node model's
    ports on that network, else an RJ45 cable's connector; `other` when none says."""
    form_factor = None
    if optic and optic in catalog.transceivers:
        form_factor = catalog.transceivers[optic].form_factor
    elif row.kind == "management" or (row.cable in catalog.cables and catalog.cables[row.cable].connector == "RJ45"):
        form_factor = "RJ45"
    elif node.model in catalog.nodes:
        ports = getattr(catalog.nodes[node.model], row.network, None)
        form_factor = ports.form_factor if ports is not None else None
    gbps = _gbps(row.speed)
    return INTERFACE_TYPES.get((form_factor, gbps), "other") if form_factor and gbps is not None else "other"


def _cable_type(catalog: Catalog, row: CableRow) -> str:
    if row.kind == "console":
        return "cat6"
    cable = catalog.cables.get(row.cable) if row.cable else None
    return CABLE_TYPES.get(cable.media, "") if cable is not None else ""
