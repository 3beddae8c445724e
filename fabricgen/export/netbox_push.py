"""`fabricgen export netbox --push URL`: the NetBox export's objects created through NetBox's REST API.

`push_plan(data) -> [Request]` is pure: one request per object, in dependency order, each naming
the API endpoint, the filter that finds an existing object of the same identity, and the body
to create it with. Related objects are referenced by attributes, as NetBox's REST API allows for
foreign keys ("a set of attributes sufficiently unique", docs/integrations/rest-api.md, Related
Objects); the generic relations NetBox wants by ID (cable terminations, an IP address's interface)
are `Lookup`s the push resolves to IDs as it goes.

`push(plan, api) -> PushResult` runs a plan against a pynetbox `api` (pynetbox.api(url, token=...)):
per request `endpoint.get(**key)`, and `endpoint.create(body)` only when nothing is found, so
pushing twice creates nothing the second time. Nothing is updated or deleted.

The token comes from NETBOX_TOKEN in the environment only; it is never printed or written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fabricgen.errors import Problem
from fabricgen.export.netbox import NetboxData
from fabricgen.export.source import ExportError

EXTRA = "pip install 'fabricgen[netbox]'"
TOKEN_VARIABLE = "NETBOX_TOKEN"


@dataclass(frozen=True)
class Lookup:
    """An object the push finds by `key` on `endpoint` and refers to by its ID."""

    endpoint: str
    key: tuple[tuple[str, str], ...]


# a request body's value: JSON, where a related object's ID may be a Lookup
BodyValue = str | int | float | bool | Lookup | list["BodyValue"] | dict[str, "BodyValue"]
Body = dict[str, BodyValue]


@dataclass(frozen=True)
class Request:
    endpoint: str  # app.endpoint as pynetbox names it: "dcim.device_types"
    key: dict[str, str]  # the filter that finds this object if it exists
    body: Body  # values may be Lookups, or lists of {"object_type", "object_id": Lookup}


@dataclass
class PushResult:
    created: dict[str, int] = field(default_factory=dict)
    existing: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)


def _interface(device: str, name: str, kind: str = "dcim.interface") -> Body:
    endpoint = {"dcim.interface": "dcim.interfaces", "dcim.consoleport": "dcim.console_ports", "dcim.consoleserverport": "dcim.console_server_ports"}[kind]
    return {"object_type": kind, "object_id": Lookup(endpoint, (("device", device), ("name", name)))}


def push_plan(data: NetboxData) -> list[Request]:
    """Every object of `data` as a request, in the order NetBox needs them."""
    rows = data.rows
    plan: list[Request] = []
    for r in rows.get("manufacturers.csv", []):
        plan.append(Request("dcim.manufacturers", {"slug": r["slug"]}, {"name": r["name"], "slug": r["slug"]}))
    for r in rows.get("device-roles.csv", []):
        plan.append(Request("dcim.device_roles", {"slug": r["slug"]}, {"name": r["name"], "slug": r["slug"], "color": r["color"]}))
    for r in rows.get("platforms.csv", []):
        body: Body = {"name": r["name"], "slug": r["slug"]}
        if r["manufacturer"]:
            body["manufacturer"] = {"name": r["manufacturer"]}
        plan.append(Request("dcim.platforms", {"slug": r["slug"]}, body))
    for r in rows.get("device-types.csv", []):
        body = {
            "manufacturer": {"name": r["manufacturer"]},
            "model": r["model"],
            "slug": r["slug"],
            "part_number": r["part_number"],
            "u_height": int(r["u_height"]),
        }
        plan.append(Request("dcim.device_types", {"slug": r["slug"]}, body))
    for r in rows.get("sites.csv", []):
        plan.append(Request("dcim.sites", {"slug": r["slug"]}, {"name": r["name"], "slug": r["slug"], "status": r["status"]}))
    for r in rows.get("racks.csv", []):
        body = {"site": {"name": r["site"]}, "name": r["name"], "status": r["status"], "width": int(r["width"]), "u_height": int(r["u_height"])}
        plan.append(Request("dcim.racks", {"site": _slug_of(rows, r["site"]), "name": r["name"]}, body))
    for r in rows.get("devices.csv", []):
        body = {
            "name": r["name"], "role": {"name": r["role"]}, "device_type": {"model": r["device_type"]},
            "status": r["status"], "site": {"name": r["site"]},
        }  # fmt: skip
        if r["platform"]:
            body["platform"] = {"name": r["platform"]}
        if r["rack"]:
            body["rack"] = {"name": r["rack"], "site": {"name": r["site"]}}
        if r["position"]:
            body.update(position=int(r["position"]), face=r["face"])
        plan.append(Request("dcim.devices", {"name": r["name"]}, body))
    for r in rows.get("interfaces.csv", []):
        body = {"device": {"name": r["device"]}, "name": r["name"], "type": r["type"], "mgmt_only": r["mgmt_only"] == "true", "description": r["description"]}
        if r["speed"]:
            body["speed"] = int(r["speed"])
        plan.append(Request("dcim.interfaces", {"device": r["device"], "name": r["name"]}, body))
    for file, endpoint in (("console-ports.csv", "dcim.console_ports"), ("console-server-ports.csv", "dcim.console_server_ports")):
        for r in rows.get(file, []):
            plan.append(Request(endpoint, {"device": r["device"], "name": r["name"]}, {"device": {"name": r["device"]}, "name": r["name"], "type": r["type"]}))
    for r in rows.get("cables.csv", []):
        body = {
            "a_terminations": [_interface(r["side_a_device"], r["side_a_name"], r["side_a_type"])],
            "b_terminations": [_interface(r["side_b_device"], r["side_b_name"], r["side_b_type"])],
            "status": r["status"], "label": r["label"],
        }  # fmt: skip
        if r["type"]:
            body["type"] = r["type"]
        if r["length"]:
            body.update(length=float(r["length"]), length_unit=r["length_unit"])
        plan.append(Request("dcim.cables", {"label": r["label"]}, body))
    for r in rows.get("ip-addresses.csv", []):
        body = {
            "address": r["address"], "status": r["status"], "description": r["description"],
            "assigned_object_type": "dcim.interface", "assigned_object_id": Lookup("dcim.interfaces", (("device", r["device"]), ("name", r["interface"]))),
        }  # fmt: skip
        if r["role"]:
            body["role"] = r["role"]
        plan.append(Request("ipam.ip_addresses", {"address": r["address"], "device": r["device"]}, body))
    return plan


def _slug_of(rows: Mapping[str, list[dict[str, str]]], site: str) -> str:
    return next(r["slug"] for r in rows["sites.csv"] if r["name"] == site)


def connect(url: str, environ: Mapping[str, str]) -> Any:
    """A pynetbox API for `url`, its token from NETBOX_TOKEN. ExportError when pynetbox is not
    installed (naming the extra) or the token is missing."""
    try:
        import pynetbox
    except ImportError:
        raise ExportError(Problem("--push needs pynetbox, which is not installed", hint=EXTRA)) from None
    token = environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise ExportError(
            Problem(
                f"--push needs a NetBox API token in {TOKEN_VARIABLE}",
                hint=f"export {TOKEN_VARIABLE}=... (a token with write permission); it is read from the environment only",
            )
        )
    return pynetbox.api(url, token=token)


def push(plan: list[Request], api) -> PushResult:
    """Create what `plan` names and NetBox lacks; an object whose request fails is named in
    `failed` (with NetBox's answer) and the push goes on with the next one."""
    result = PushResult()
    ids: dict[Lookup, int] = {}

    def endpoint(name: str):
        app, model = name.split(".")
        return getattr(getattr(api, app), model)

    def resolve(value: BodyValue) -> BodyValue:
        if isinstance(value, Lookup):
            if value not in ids:
                found = endpoint(value.endpoint).get(**dict(value.key))
                if found is None:
                    raise LookupError(f"{value.endpoint} {dict(value.key)} not found")
                ids[value] = found.id
            return ids[value]
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        return value

    for request in plan:
        try:
            if endpoint(request.endpoint).get(**request.key) is not None:
                result.existing[request.endpoint] = result.existing.get(request.endpoint, 0) + 1
                continue
            endpoint(request.endpoint).create(resolve(request.body))
            result.created[request.endpoint] = result.created.get(request.endpoint, 0) + 1
        except Exception as exc:  # noqa: BLE001 - pynetbox's RequestError and a failed lookup alike: name it, go on
            result.failed.append(f"{request.endpoint} {request.key}: {str(exc)[:300]}")
    return result
