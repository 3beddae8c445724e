"""A build as NetBox bulk-import CSV files; `--push` sends the same rows (netbox_plan, netbox_push).

Written for NetBox 4.7 (checked against 4.7.3): the column names are the fields of its import
forms (netbox/dcim/forms/bulk_import.py, netbox/ipam/forms/bulk_import.py,
netbox/tenancy/forms/bulk_import.py, netbox/extras/forms/bulk_import.py; `tags` of
netbox/netbox/forms/bulk_import.py NetBoxModelImportForm), the values its choice sets
(netbox/dcim/choices.py, netbox/ipam/choices.py). Import the files in the order of `IMPORT_ORDER`
(each refers to objects the earlier ones create); `COLUMNS` names each file's columns.

The fabric is a site, a tenant and a VRF named after it; every object it owns carries the tags
`fabricgen` and `fabricgen-<fabric>` (`fabric_tag`), its addresses and prefixes are in its VRF.
Shared objects (manufacturers, roles, platforms, device types, the RIR, ASNs) carry `fabricgen`.

- tags, manufacturers (the catalog's `vendor` of each switch model, `UNKNOWN_MANUFACTURER` for a
  model whose entry names none), device roles, platforms (the NOSes, named as their packages say:
  `ExportParts.netbox_platform`, `netbox_manufacturer`), device types (rack units from the
  built-in catalog, 1 for a model it does not hold);
- the RIR `PRIVATE_RIR` and the switches' private ASNs (RFC 6996); tenant, site, VRF; racks with a
  layout; VLANs (one per SVI, `Vlan<N>`); prefixes (`fabric_prefixes`);
- devices; interfaces (every cabled port and every addressed interface, the type from the port's
  form factor and speed, `INTERFACE_TYPES`, `virtual` for loopbacks and SVIs, else `other`);
  console ports; cables (label = the cable ID); IP addresses with the device's OOB and primary
  address marked (`device_addresses`); optics as inventory items on their interface.

A cell that starts with `= + - @` (a rack named in an edited build, say) starts with a quote in
the files, so a spreadsheet shows it as text (OWASP, CSV Injection; fabricgen.basics.csv_format); `--push`
sends the name as it is.

Everything is `planned` where NetBox's choices have it (sites, racks, devices, cables, optics): a
build is a plan until it is racked. Devices outside the build (the management core an OOB uplink
ends at) and their cables are left out.
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricgen.basics.csv_format import csv_text
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import AddressRow, CableRow, TopologyNode
from fabricgen.compiler.design.graph import Role
from fabricgen.export.source import ExportBuild, export_parts
from fabricgen.nos.interface import plugins

if TYPE_CHECKING:
    from fabricgen.catalog import Catalog

NETBOX_VERSION = "4.7.3"  # the release the columns and the push were checked against
UNKNOWN_MANUFACTURER = "Unknown"
OUTSIDE = "-"  # topology.json's model of a device outside the build
IMPORT_ORDER = (
    "tags.csv", "manufacturers.csv", "device-roles.csv", "platforms.csv", "device-types.csv", "rirs.csv", "tenants.csv",
    "sites.csv", "vrfs.csv", "racks.csv", "asns.csv", "vlans.csv", "prefixes.csv", "devices.csv", "interfaces.csv",
    "console-ports.csv", "console-server-ports.csv", "cables.csv", "ip-addresses.csv", "inventory-items.csv",
)  # fmt: skip
OWNER_TAG = "fabricgen"  # on every object fabricgen made, beside the fabric's own tag (`fabric_tag`)
PRIVATE_RIR = "fabricgen-private"  # the RIR of the fabric's private ASNs (RFC 6996), `is_private`
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


def fabric_tag(fabric: str) -> str:
    """The slug of the tag every object of `fabric` carries (its owner mark for update and delete)."""
    return f"{OWNER_TAG}-{slug(fabric)}"[:100]  # NetBox's Tag.slug: 100 characters


def netbox_data(build: ExportBuild) -> NetboxData:
    """The objects of `build` as NetBox import rows (see the module docstring)."""
    from fabricgen.catalog import load_catalog

    catalog = load_catalog()
    data = NetboxData()
    site = tenant = vrf = build.name
    tags = f"{OWNER_TAG},{fabric_tag(build.name)}"
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

    data.rows["tags.csv"] = [
        {"name": OWNER_TAG, "slug": OWNER_TAG, "color": "607d8b", "description": "made by fabricgen"},
        {"name": fabric_tag(build.name), "slug": fabric_tag(build.name), "color": "2196f3", "description": f"fabricgen fabric {build.name}"[:200]},
    ]
    models = sorted({n.model for n in inside}, key=natural_key)
    makers = {package.EXPORT.netbox_manufacturer for package in plugins().values()}
    manufacturers = sorted({vendor(m) for m in models} | {m for m in makers if m}, key=str.lower)
    data.rows["manufacturers.csv"] = [{"name": m, "slug": slug(m)} for m in manufacturers]
    roles = sorted({n.role.value for n in inside})
    data.rows["device-roles.csv"] = [{"name": r, "slug": slug(r), "color": ROLE_COLORS.get(r, "9e9e9e")} for r in roles]
    noses = sorted({n.nos for n in inside if n.nos})
    data.rows["platforms.csv"] = [{"name": platform(nos)[0], "slug": slug(nos), "manufacturer": platform(nos)[1]} for nos in noses]
    data.rows["device-types.csv"] = [{"manufacturer": vendor(m), "model": m, "slug": slug(m), "part_number": m, "u_height": str(height(m))} for m in models]
    # private ASNs only: NetBox's ASN needs an RIR (ipam.models.asns.ASN.rir) and the build names
    # none for a public one; an ASN is unique in NetBox (ASN.asn) and the fabrics that use the
    # private defaults share it, so it carries the owner tag only and is never updated or deleted
    asns = sorted({n.asn for n in inside if n.asn is not None and _private_asn(n.asn)})
    if asns:
        data.rows["rirs.csv"] = [{"name": PRIVATE_RIR, "slug": PRIVATE_RIR, "is_private": "true"}]
    data.rows["tenants.csv"] = [{"name": tenant, "slug": slug(tenant), "tags": tags}]
    data.rows["sites.csv"] = [{"name": site, "slug": slug(site), "status": "planned", "tenant": tenant, "tags": tags}]
    data.rows["vrfs.csv"] = [{"name": vrf, "tenant": tenant, "enforce_unique": "false", "tags": tags}]
    racks = sorted({n.rack for n in inside if n.rack}, key=natural_key)
    tallest: dict[str, int] = defaultdict(lambda: 42)
    for n in inside:
        if n.rack and n.ru:
            tallest[n.rack] = max(tallest[n.rack], n.ru + height(n.model) - 1)
    data.rows["racks.csv"] = [
        {"site": site, "name": r, "status": "planned", "width": "19", "u_height": str(tallest[r]), "tenant": tenant, "tags": tags} for r in racks
    ]
    data.rows["asns.csv"] = [{"asn": str(asn), "rir": PRIVATE_RIR, "tags": OWNER_TAG} for asn in asns]
    for n in inside:
        data.rows["devices.csv"].append(
            {
                "name": n.id, "role": n.role.value, "tenant": tenant, "manufacturer": vendor(n.model), "device_type": n.model,
                "platform": platform(n.nos)[0] if n.nos else "", "status": "planned", "site": site,
                "rack": n.rack or "", "position": str(n.ru) if n.rack and n.ru else "", "face": "front" if n.rack and n.ru else "", "tags": tags,
            }
        )  # fmt: skip

    interfaces: dict[tuple[str, str], dict[str, str]] = {}
    console_ports: dict[tuple[str, str], dict[str, str]] = {}
    console_server_ports: dict[tuple[str, str], dict[str, str]] = {}
    optics: dict[tuple[str, str], dict[str, str]] = {}
    for row in build.cables:
        if row.a_device not in names or row.b_device not in names:
            continue
        if row.kind == "console":
            # the cabling plan's a side is the device's console port, the b side the server's line
            console_ports[row.a_device, row.a_port] = {"device": row.a_device, "name": row.a_port, "type": "rj-45", "tags": tags}
            console_server_ports[row.b_device, row.b_port] = {"device": row.b_device, "name": row.b_port, "type": "rj-45", "tags": tags}
            side_type = ("dcim.consoleport", "dcim.consoleserverport")
        else:
            for device, port, optic in ((row.a_device, row.a_port, row.a_optic), (row.b_device, row.b_port, row.b_optic)):
                interfaces[device, port] = {
                    "device": device, "name": port, "type": _interface_type(catalog, build.nodes[device], optic, row), "speed": _kbps(row.speed),
                    "mgmt_only": "true" if row.kind == "management" and build.nodes[device].role not in (Role.OOB_SWITCH,) else "false",
                    "description": f"{row.cable_id} to {_other(row, device)}", "tags": tags,
                }  # fmt: skip
                if optic:
                    optics[device, port] = {
                        "device": device, "name": f"{port} optic"[:64], "status": "planned", "part_id": optic,
                        "component_type": "dcim.interface", "component_name": port, "description": f"{row.cable_id} {row.cable}".strip(), "tags": tags,
                    }  # fmt: skip
            side_type = ("dcim.interface", "dcim.interface")
        data.rows["cables.csv"].append(
            {
                "side_a_device": row.a_device, "side_a_type": side_type[0], "side_a_name": row.a_port,
                "side_b_device": row.b_device, "side_b_type": side_type[1], "side_b_name": row.b_port,
                "type": _cable_type(catalog, row), "status": "planned", "tenant": tenant, "label": row.cable_id,
                "length": row.length_m, "length_unit": "m" if row.length_m else "", "tags": tags,
            }
        )  # fmt: skip
    oob, primary = device_addresses(build, catalog, names)
    vlans: dict[int, dict[str, str]] = {}
    for address_row in build.addresses:
        if address_row.device not in names:
            continue
        device, interface, kind = address_row.device, address_row.interface, address_row.kind
        if (device, interface) not in interfaces:
            virtual = kind in VIRTUAL_KINDS
            interfaces[device, interface] = {
                "device": device, "name": interface, "type": "virtual" if virtual else "other", "speed": "",
                "mgmt_only": "true" if kind == "management" else "false", "description": kind, "tags": tags,
            }  # fmt: skip
        svi = _SVI.fullmatch(interface)
        if svi and 1 <= int(svi.group(1)) <= 4094:
            vid = int(svi.group(1))
            vlans.setdefault(vid, {"site": site, "vid": str(vid), "name": f"{address_row.network}-{vid}", "tenant": tenant, "status": "active", "tags": tags})
        data.rows["ip-addresses.csv"].append(
            {
                "address": address_row.address, "vrf": vrf, "tenant": tenant, "status": "active",
                "role": "loopback" if kind in ("loopback", "vtep") else "anycast" if kind == "anycast-gateway" else "",
                "device": device, "interface": interface, "is_primary": "true" if primary.get(device) is address_row else "",
                "is_oob": "true" if oob.get(device) is address_row else "", "description": f"{address_row.network} {kind}", "tags": tags,
            }
        )  # fmt: skip
    data.rows["vlans.csv"] = [vlans[vid] for vid in sorted(vlans)]
    data.rows["prefixes.csv"] = [
        {
            "prefix": prefix,
            "vrf": vrf,
            "tenant": tenant,
            "status": status,
            "scope_type": "dcim.site",
            "scope_name": site,
            "description": description,
            "tags": tags,
        }
        for prefix, status, description in fabric_prefixes(build.addresses, names)
    ]

    def ordered(rows):
        return [rows[key] for key in sorted(rows, key=natural_key)]

    data.rows["interfaces.csv"] = ordered(interfaces)
    data.rows["console-ports.csv"] = ordered(console_ports)
    data.rows["console-server-ports.csv"] = ordered(console_server_ports)
    data.rows["inventory-items.csv"] = ordered(optics)
    return data


_SVI = re.compile(r"[Vv]lan(\d{1,4})")


def bmc_ports(catalog: Catalog, node: TopologyNode) -> set[str]:
    """The names of a server's BMC ports (its catalog model's `bmc` ports: bmc, cimc, ...)."""
    model = catalog.nodes.get(node.model)
    ports = model.bmc if model is not None else None
    return {ports.port_name(number) for number in range(1, ports.ports + 1)} if ports is not None else set()


def device_addresses(build: ExportBuild, catalog: Catalog, names: set[str]) -> tuple[dict[str, AddressRow], dict[str, AddressRow]]:
    """(OOB address, primary address) per device.

    OOB: NetBox's out-of-band IP, the address to reach the device when its own network is down: a
    server's BMC address (a port its catalog model lists under `bmc`), else the device's management
    address (a switch's mgmt0). Primary: the address to reach the device by: a switch's first
    loopback (its router ID, the address its routing, monitoring and configs name it by), else the
    management address that is not the BMC (a server's host OS), else the OOB address."""
    management: dict[str, list[AddressRow]] = defaultdict(list)
    loopback: dict[str, AddressRow] = {}
    for row in build.addresses:
        if row.device not in names:
            continue
        if row.kind == "management":
            management[row.device].append(row)
        elif row.kind == "loopback":
            loopback.setdefault(row.device, row)
    oob: dict[str, AddressRow] = {}
    primary: dict[str, AddressRow] = dict(loopback)
    for device, rows in management.items():
        bmc = bmc_ports(catalog, build.nodes[device])
        out_of_band = next((r for r in rows if r.interface in bmc), rows[0])
        oob[device] = out_of_band
        primary.setdefault(device, next((r for r in rows if r.interface not in bmc), out_of_band))
    return oob, primary


def fabric_prefixes(addresses: list[AddressRow], names: set[str]) -> list[tuple[str, str, str]]:
    """(prefix, status, description) of the fabric's pools and subnets: per network and kind of
    address the smallest prefix holding all its addresses (the loopback pool, the p2p pool, the
    host-link pool), `container`, when it is no wider than a /8 (IPv4) or /32 (IPv6); and every
    subnet wider than a link that an address sits in (the management /26), `active`. The build
    records addresses, not pools, so a pool is what its addresses span. A /31 (/127) link is no
    prefix of its own: the 256-GPU build has 740, each of two addresses, and its pool holds them."""
    subnets: dict[ipaddress.IPv4Network | ipaddress.IPv6Network, str] = {}
    spans: dict[tuple[str, str, int], list[ipaddress.IPv4Network | ipaddress.IPv6Network]] = defaultdict(list)
    for row in addresses:
        if row.device not in names:
            continue
        interface = ipaddress.ip_interface(row.address)
        network = interface.network
        if network.prefixlen < network.max_prefixlen - 1:
            subnets.setdefault(network, f"{row.network} {row.kind}")
        spans[row.network, row.kind, interface.version].append(network)
    pools: dict[ipaddress.IPv4Network | ipaddress.IPv6Network, str] = {}
    for (network_name, kind, version), networks in sorted(spans.items()):
        low = min(int(n.network_address) for n in networks)
        high = max(int(n.broadcast_address) for n in networks)
        bits = 32 if version == 4 else 128
        length = bits - (low ^ high).bit_length()
        pool = ipaddress.ip_network((low >> (bits - length) << (bits - length), length)) if length else None
        if pool is not None and length >= (8 if version == 4 else 32) and pool not in subnets:
            pools.setdefault(pool, f"{network_name} {kind} pool")
    rows = [(str(p), "container", d) for p, d in pools.items()] + [(str(p), "active", d) for p, d in subnets.items()]
    return sorted(
        rows, key=lambda r: (ipaddress.ip_network(r[0]).version, int(ipaddress.ip_network(r[0]).network_address), ipaddress.ip_network(r[0]).prefixlen)
    )


def _private_asn(asn: int) -> bool:
    """RFC 6996 private-use ranges (64512-65534, 4200000000-4294967294)."""
    return 64512 <= asn <= 65534 or 4_200_000_000 <= asn <= 4_294_967_294


COLUMNS = {
    "tags.csv": ("name", "slug", "color", "description"),
    "manufacturers.csv": ("name", "slug"),
    "device-roles.csv": ("name", "slug", "color"),
    "platforms.csv": ("name", "slug", "manufacturer"),
    "device-types.csv": ("manufacturer", "model", "slug", "part_number", "u_height"),
    "rirs.csv": ("name", "slug", "is_private"),
    "tenants.csv": ("name", "slug", "tags"),
    "sites.csv": ("name", "slug", "status", "tenant", "tags"),
    "vrfs.csv": ("name", "tenant", "enforce_unique", "tags"),
    "racks.csv": ("site", "name", "status", "width", "u_height", "tenant", "tags"),
    "asns.csv": ("asn", "rir", "tags"),
    "vlans.csv": ("site", "vid", "name", "tenant", "status", "tags"),
    "prefixes.csv": ("prefix", "vrf", "tenant", "status", "scope_type", "scope_name", "description", "tags"),
    "devices.csv": ("name", "role", "tenant", "manufacturer", "device_type", "platform", "status", "site", "rack", "position", "face", "tags"),
    "interfaces.csv": ("device", "name", "type", "speed", "mgmt_only", "description", "tags"),
    "console-ports.csv": ("device", "name", "type", "tags"),
    "console-server-ports.csv": ("device", "name", "type", "tags"),
    "cables.csv": (
        "side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
        "type", "status", "tenant", "label", "length", "length_unit", "tags",
    ),
    "ip-addresses.csv": ("address", "vrf", "tenant", "status", "role", "device", "interface", "is_primary", "is_oob", "description", "tags"),
    "inventory-items.csv": ("device", "name", "status", "part_id", "component_type", "component_name", "description", "tags"),
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
