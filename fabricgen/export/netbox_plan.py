"""What `export netbox --push` would change in a NetBox: the build's objects as NetBox wants them
(`wanted_objects`), and per object type the creates, updates and deletes that make NetBox's
objects (`Existing`, as its REST API lists them) match (`plan_kind`). Pure: no server here.

Field names and endpoints are NetBox 4.7.3's REST API (the serializers in netbox/dcim/api/
serializers_/, netbox/ipam/api/serializers_/, netbox/tenancy/api/serializers_/,
netbox/extras/api/serializers_/; checked against a running 4.7.3 by tests/test_netbox_live.py).

Scoping: every object of a fabric names its site, tenant and VRF (each named for the fabric) and
carries two tags: `fabricgen` and `fabricgen-<fabric>` (`fabric_tag`). The fabric's own objects
(`Kind.shared` false) are read by that tag only, so another fabric's objects and hand-made ones are
never updated or deleted: a wanted object that clashes with one of them (a site of the same slug
made by hand) is refused by NetBox and named. Shared objects (tags, manufacturers, roles,
platforms, device types, the RIR, private ASNs) are looked up by slug or number among all of
NetBox's, created when missing and otherwise left exactly as they are.

Related objects are `Ref`s (a kind and its identity key) resolved to IDs as the push goes; a Ref
to an object not yet created (in a dry run) compares as changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabricgen.export.netbox import OWNER_TAG, NetboxData, fabric_tag, slug

Key = tuple[str, ...]
Record = Mapping[str, Any]  # one object as NetBox's REST API returns it


@dataclass(frozen=True)
class Ref:
    """The object of `kind` whose identity is `key`, sent as its ID."""

    kind: str
    key: Key


@dataclass
class Wanted:
    kind: str
    key: Key
    fields: dict[str, Any]  # JSON values; related objects as Ref, lists of Refs, lists of {..., Ref}


def _name(record: Record, *path: str) -> str:
    value: Any = record
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Kind:
    """One NetBox object type: its list endpoint, how an object's identity reads from the API, and
    whether it is the fabric's own (read by the fabric tag; updated and deleted) or shared."""

    name: str  # as it is counted and printed: dcim.devices
    path: str  # the REST list endpoint under /api/: dcim/devices/
    key_of: Callable[[Record], Key]
    shared: bool = False
    lookup: str = "slug"  # a shared kind's filter, given every wanted key
    creates: bool = True  # dcim.devices.addresses only updates devices made in dcim.devices
    query: tuple[tuple[str, str], ...] = ()  # extra filters (config_context left out of devices)
    identity: tuple[str, ...] = ("slug",)  # the fields key_of reads
    batch: int = 200  # objects per bulk request at most (a cable traces its path as it is saved: fewer)
    replace_on: frozenset[str] = frozenset()  # fields whose change makes the object again (KindPlan.replaces)


def _slug(record: Record) -> Key:
    return (_name(record, "slug"),)


def _on_device(record: Record) -> Key:
    return (_name(record, "device", "name"), _name(record, "name"))


DEVICE_ADDRESSES = "dcim.devices.addresses"  # the devices again, once their addresses exist
# in dependency order (each refers only to kinds before it); deletes go in the reverse order
KINDS = (
    Kind("extras.tags", "extras/tags/", _slug, shared=True),
    Kind("dcim.manufacturers", "dcim/manufacturers/", _slug, shared=True),
    Kind("dcim.device_roles", "dcim/device-roles/", _slug, shared=True),
    Kind("dcim.platforms", "dcim/platforms/", _slug, shared=True),
    Kind("dcim.device_types", "dcim/device-types/", _slug, shared=True),
    Kind("ipam.rirs", "ipam/rirs/", _slug, shared=True),
    Kind("tenancy.tenants", "tenancy/tenants/", _slug),
    Kind("dcim.sites", "dcim/sites/", _slug),
    Kind("ipam.vrfs", "ipam/vrfs/", lambda r: (_name(r, "name"),), identity=("name",)),
    Kind("dcim.racks", "dcim/racks/", lambda r: (_name(r, "name"),), identity=("name",)),
    Kind("ipam.asns", "ipam/asns/", lambda r: (_name(r, "asn"),), shared=True, lookup="asn", identity=("asn",)),
    Kind("ipam.vlans", "ipam/vlans/", lambda r: (_name(r, "vid"),), identity=("vid",)),
    Kind("ipam.prefixes", "ipam/prefixes/", lambda r: (_name(r, "prefix"),), identity=("prefix",)),
    Kind("dcim.devices", "dcim/devices/", lambda r: (_name(r, "name"),), query=(("exclude", "config_context"),), identity=("name",)),
    Kind("dcim.interfaces", "dcim/interfaces/", _on_device, identity=("device", "name")),
    Kind("dcim.console_ports", "dcim/console-ports/", _on_device, identity=("device", "name")),
    Kind("dcim.console_server_ports", "dcim/console-server-ports/", _on_device, identity=("device", "name")),
    Kind(
        "dcim.cables", "dcim/cables/", lambda r: (_name(r, "label"),), identity=("label",), batch=50, replace_on=frozenset({"a_terminations", "b_terminations"})
    ),
    Kind(
        "ipam.ip_addresses",
        "ipam/ip-addresses/",
        lambda r: (_name(r, "address"), _name(r, "assigned_object", "device", "name"), _name(r, "assigned_object", "name")),
        identity=("address", "assigned_object"),
    ),
    Kind("dcim.inventory_items", "dcim/inventory-items/", _on_device, identity=("device", "name")),
    Kind(DEVICE_ADDRESSES, "dcim/devices/", lambda r: (_name(r, "name"),), creates=False, query=(("exclude", "config_context"),), identity=("name",)),
)
KIND = {kind.name: kind for kind in KINDS}
TERMINATION_ENDPOINT = {"dcim.interface": "dcim.interfaces", "dcim.consoleport": "dcim.console_ports", "dcim.consoleserverport": "dcim.console_server_ports"}


def wanted_objects(data: NetboxData, fabric: str) -> list[Wanted]:
    """Every object of `data` (the rows `netbox_data` made for the CSV files) as the push wants it
    in NetBox, in `KINDS` order."""
    rows = data.rows
    own_tags = [Ref("extras.tags", (OWNER_TAG,)), Ref("extras.tags", (fabric_tag(fabric),))]
    owner_only = [Ref("extras.tags", (OWNER_TAG,))]
    platform_slug = {r["name"]: r["slug"] for r in rows.get("platforms.csv", [])}
    out: list[Wanted] = []

    def add(kind: str, key: Key, fields: dict[str, Any]) -> None:
        out.append(Wanted(kind, key, fields))

    def tenant(name: str) -> Ref:
        return Ref("tenancy.tenants", (slug(name),))

    def site(name: str) -> Ref:
        return Ref("dcim.sites", (slug(name),))

    for r in rows.get("tags.csv", []):
        add("extras.tags", (r["slug"],), {"name": r["name"], "slug": r["slug"], "color": r["color"], "description": r["description"]})
    for r in rows.get("manufacturers.csv", []):
        add("dcim.manufacturers", (r["slug"],), {"name": r["name"], "slug": r["slug"], "tags": owner_only})
    for r in rows.get("device-roles.csv", []):
        add("dcim.device_roles", (r["slug"],), {"name": r["name"], "slug": r["slug"], "color": r["color"], "tags": owner_only})
    for r in rows.get("platforms.csv", []):
        fields: dict[str, Any] = {"name": r["name"], "slug": r["slug"], "tags": owner_only}
        if r["manufacturer"]:
            fields["manufacturer"] = Ref("dcim.manufacturers", (slug(r["manufacturer"]),))
        add("dcim.platforms", (r["slug"],), fields)
    for r in rows.get("device-types.csv", []):
        add(
            "dcim.device_types",
            (r["slug"],),
            {
                "manufacturer": Ref("dcim.manufacturers", (slug(r["manufacturer"]),)), "model": r["model"], "slug": r["slug"],
                "part_number": r["part_number"], "u_height": float(r["u_height"]), "tags": owner_only,
            },
        )  # fmt: skip
    for r in rows.get("rirs.csv", []):
        add("ipam.rirs", (r["slug"],), {"name": r["name"], "slug": r["slug"], "is_private": r["is_private"] == "true", "tags": owner_only})
    for r in rows.get("tenants.csv", []):
        add("tenancy.tenants", (r["slug"],), {"name": r["name"], "slug": r["slug"], "tags": own_tags})
    for r in rows.get("sites.csv", []):
        add("dcim.sites", (r["slug"],), {"name": r["name"], "slug": r["slug"], "status": r["status"], "tenant": tenant(r["tenant"]), "tags": own_tags})
    for r in rows.get("vrfs.csv", []):
        add("ipam.vrfs", (r["name"],), {"name": r["name"], "tenant": tenant(r["tenant"]), "enforce_unique": r["enforce_unique"] == "true", "tags": own_tags})
    for r in rows.get("racks.csv", []):
        add(
            "dcim.racks",
            (r["name"],),
            {
                "site": site(r["site"]), "name": r["name"], "status": r["status"], "width": int(r["width"]),
                "u_height": int(r["u_height"]), "tenant": tenant(r["tenant"]), "tags": own_tags,
            },
        )  # fmt: skip
    for r in rows.get("asns.csv", []):
        add("ipam.asns", (r["asn"],), {"asn": int(r["asn"]), "rir": Ref("ipam.rirs", (slug(r["rir"]),)), "tags": owner_only})
    for r in rows.get("vlans.csv", []):
        add(
            "ipam.vlans",
            (r["vid"],),
            {"site": site(r["site"]), "vid": int(r["vid"]), "name": r["name"], "tenant": tenant(r["tenant"]), "status": r["status"], "tags": own_tags},
        )
    for r in rows.get("prefixes.csv", []):
        add(
            "ipam.prefixes",
            (r["prefix"],),
            {
                "prefix": r["prefix"], "vrf": Ref("ipam.vrfs", (r["vrf"],)), "tenant": tenant(r["tenant"]), "status": r["status"],
                "scope_type": r["scope_type"], "scope_id": site(r["scope_name"]), "description": r["description"], "tags": own_tags,
            },
        )  # fmt: skip
    for r in rows.get("devices.csv", []):
        racked = bool(r["rack"])
        add(
            "dcim.devices",
            (r["name"],),
            {
                "name": r["name"], "role": Ref("dcim.device_roles", (slug(r["role"]),)), "tenant": tenant(r["tenant"]),
                "device_type": Ref("dcim.device_types", (slug(r["device_type"]),)),
                "platform": Ref("dcim.platforms", (platform_slug[r["platform"]],)) if r["platform"] else None,
                "status": r["status"], "site": site(r["site"]), "rack": Ref("dcim.racks", (r["rack"],)) if racked else None,
                "position": float(r["position"]) if racked and r["position"] else None, "face": r["face"] if racked and r["position"] else None,
                "tags": own_tags,
            },
        )  # fmt: skip
    for r in rows.get("interfaces.csv", []):
        add(
            "dcim.interfaces",
            (r["device"], r["name"]),
            {
                "device": Ref("dcim.devices", (r["device"],)), "name": r["name"], "type": r["type"],
                "speed": int(r["speed"]) if r["speed"] else None, "mgmt_only": r["mgmt_only"] == "true",
                "description": r["description"], "tags": own_tags,
            },
        )  # fmt: skip
    for file, kind in (("console-ports.csv", "dcim.console_ports"), ("console-server-ports.csv", "dcim.console_server_ports")):
        for r in rows.get(file, []):
            add(kind, (r["device"], r["name"]), {"device": Ref("dcim.devices", (r["device"],)), "name": r["name"], "type": r["type"], "tags": own_tags})
    for r in rows.get("cables.csv", []):
        fields = {
            "a_terminations": [_termination(r["side_a_type"], r["side_a_device"], r["side_a_name"])],
            "b_terminations": [_termination(r["side_b_type"], r["side_b_device"], r["side_b_name"])],
            "status": r["status"], "tenant": tenant(r["tenant"]), "label": r["label"], "tags": own_tags,
        }  # fmt: skip
        if r["type"]:
            fields["type"] = r["type"]
        if r["length"]:
            fields.update(length=float(r["length"]), length_unit=r["length_unit"])
        add("dcim.cables", (r["label"],), fields)
    oob: dict[str, Ref] = {}
    primary: dict[str, tuple[str, Ref]] = {}
    for r in rows.get("ip-addresses.csv", []):
        key = (r["address"], r["device"], r["interface"])
        fields = {
            "address": r["address"], "vrf": Ref("ipam.vrfs", (r["vrf"],)), "tenant": tenant(r["tenant"]), "status": r["status"],
            "role": r["role"] or None, "description": r["description"],
            "assigned_object_type": "dcim.interface", "assigned_object_id": Ref("dcim.interfaces", (r["device"], r["interface"])), "tags": own_tags,
        }  # fmt: skip
        add("ipam.ip_addresses", key, fields)
        if r["is_oob"] == "true":
            oob.setdefault(r["device"], Ref("ipam.ip_addresses", key))
        if r["is_primary"] == "true":
            primary[r["device"]] = ("primary_ip6" if ":" in r["address"] else "primary_ip4", Ref("ipam.ip_addresses", key))
    for r in rows.get("inventory-items.csv", []):
        add(
            "dcim.inventory_items",
            (r["device"], r["name"]),
            {
                "device": Ref("dcim.devices", (r["device"],)), "name": r["name"], "status": r["status"], "part_id": r["part_id"],
                "component_type": r["component_type"], "component_id": Ref("dcim.interfaces", (r["device"], r["component_name"])),
                "description": r["description"], "tags": own_tags,
            },
        )  # fmt: skip
    for r in rows.get("devices.csv", []):
        fields = {"oob_ip": oob.get(r["name"]), "primary_ip4": None, "primary_ip6": None}
        if r["name"] in primary:
            family, ref = primary[r["name"]]
            fields[family] = ref
        add(DEVICE_ADDRESSES, (r["name"],), fields)
    return out


def _termination(object_type: str, device: str, name: str) -> dict[str, Any]:
    return {"object_type": object_type, "object_id": Ref(TERMINATION_ENDPOINT[object_type], (device, name))}


# --- the plan of one kind --------------------------------------------------------------------------


NEW = -1  # the ID of an object a dry run would create: it matches no ID NetBox has


@dataclass
class Update:
    key: Key
    id: int
    changes: dict[str, Any]  # field -> the value to PATCH (Refs resolved)
    was: dict[str, Any]  # field -> NetBox's value, for the dry run's listing
    want: Wanted | None = None  # the object as wanted, for one made again (KindPlan.replaces)


@dataclass
class KindPlan:
    kind: str
    creates: list[Wanted] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    deletes: list[tuple[Key, int]] = field(default_factory=list)
    # objects made again (deleted, then created) rather than changed: a cable whose ends moved
    # (moving ends one PATCH at a time would put one onto a port another moving cable still holds)
    replaces: list[Update] = field(default_factory=list)
    unchanged: int = 0
    stale: int = 0  # the fabric's objects the build no longer has, kept (no --delete)


def owned_by(record: Record, fabric: str) -> bool:
    """Whether `record` carries the fabric's tag (the only objects an update or delete touches)."""
    tags = record.get("tags") or []
    return any(isinstance(t, Mapping) and t.get("slug") == fabric_tag(fabric) for t in tags)


def plan_kind(
    kind: Kind, wanted: Iterable[Wanted], existing: Mapping[Key, Record], ids: Mapping[str, Mapping[Key, int]], fabric: str, *, delete: bool
) -> KindPlan:
    """The creates, updates (the changed fields only) and, with `delete`, deletes that make
    `existing` (NetBox's objects of `kind`: for the fabric's own kinds, those carrying its tag)
    what `wanted` says. A shared kind's existing object is never updated or deleted; an object
    without the fabric's tag is never updated or deleted."""
    plan = KindPlan(kind.name)
    seen: set[Key] = set()
    for want in wanted:
        seen.add(want.key)
        record = existing.get(want.key)
        if record is None:
            if kind.creates:
                plan.creates.append(want)
            continue
        if kind.shared or not owned_by(record, fabric):
            plan.unchanged += 1
            continue
        changes: dict[str, Any] = {}
        was: dict[str, Any] = {}
        for name, value in want.fields.items():
            resolved = resolve(value, ids)
            if not same(resolved, record.get(name), name):
                changes[name] = resolved
                was[name] = record.get(name)
        if changes and kind.replace_on & changes.keys():
            plan.replaces.append(Update(want.key, int(record["id"]), changes, was, want))
        elif changes:
            plan.updates.append(Update(want.key, int(record["id"]), changes, was))
        else:
            plan.unchanged += 1
    if kind.shared or not kind.creates:
        return plan
    for key, record in existing.items():
        if key in seen or not owned_by(record, fabric):
            continue
        if delete:
            plan.deletes.append((key, int(record["id"])))
        else:
            plan.stale += 1
    return plan


def resolve(value: Any, ids: Mapping[str, Mapping[Key, int]]) -> Any:
    """`value` with every Ref as the ID of its object (NEW for one not made yet)."""
    if isinstance(value, Ref):
        return ids.get(value.kind, {}).get(value.key, NEW)
    if isinstance(value, list):
        return [resolve(item, ids) for item in value]
    if isinstance(value, dict):
        return {name: resolve(item, ids) for name, item in value.items()}
    return value


def unresolved(value: Any, ids: Mapping[str, Mapping[Key, int]]) -> list[Ref]:
    """The Refs in `value` whose object has no ID yet."""
    if isinstance(value, Ref):
        return [] if value.key in ids.get(value.kind, {}) else [value]
    if isinstance(value, list):
        return [ref for item in value for ref in unresolved(item, ids)]
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in unresolved(item, ids)]
    return []


def same(wanted: Any, current: Any, name: str = "") -> bool:
    """Whether NetBox's value `current` (as its API returns it: a related object nested with its
    id, a choice as {value, label}, a decimal as a number) already is `wanted` (as sent: an ID, a
    choice's value, a number). None and "" are the same (NetBox returns either for a blank field);
    tags are compared as a set."""
    if isinstance(current, Mapping) and "id" in current and not isinstance(wanted, Mapping):
        current = current["id"]
    elif isinstance(current, Mapping) and "value" in current and not isinstance(wanted, Mapping):
        current = current["value"]
    if wanted in (None, "") or current in (None, ""):
        return wanted in (None, "") and current in (None, "")
    if name == "tags" and isinstance(wanted, list) and isinstance(current, list):
        return set(wanted) == {t.get("id") if isinstance(t, Mapping) else t for t in current}
    if isinstance(wanted, list):
        return isinstance(current, list) and len(wanted) == len(current) and all(same(w, c) for w, c in zip(wanted, current, strict=True))
    if isinstance(wanted, Mapping):
        return isinstance(current, Mapping) and all(same(value, current.get(key), key) for key, value in wanted.items())
    if isinstance(wanted, bool) or isinstance(current, bool):
        return wanted is current
    if isinstance(wanted, int | float) and isinstance(current, int | float | str):
        try:
            return math.isclose(float(wanted), float(current))
        except ValueError:
            return False
    return wanted == current
