"""`fabricgen export netbox --push URL`: the NetBox export's objects created through NetBox's REST API.

`push_plan(data) -> [Request]` is pure: one request per object, in dependency order, each naming
the API endpoint, the filter that finds an existing object of the same identity, and the body
to create it with. Related objects are referenced by attributes, as NetBox's REST API allows for
foreign keys ("a set of attributes sufficiently unique", docs/integrations/rest-api.md, Related
Objects); the generic relations NetBox wants by ID (cable terminations, an IP address's interface)
are `Lookup`s the push resolves to IDs as it goes.

`push(plan, api) -> PushResult` runs a plan against a pynetbox `api` (`connect(url, environ,
timeout)`): per request `endpoint.get(**key)`, and `endpoint.create(body)` only when nothing is
found, so pushing twice creates nothing the second time. Nothing is updated or deleted.

The URL is input from outside (`check_url`): http or https only (no file:, javascript: or other
scheme a library might open), a host, no user name or password (credentials come from the
environment) and no query or fragment. Every request has a connect and a read timeout (`timeout`
seconds, 1 to 600): pynetbox sets none, so `connect` gives it a requests session whose adapters
put one on every request; a request that times out or cannot connect stops the push (the rest
would wait as long each). The token comes from NETBOX_TOKEN in the environment only; it is never
printed or written, and a server's answer that repeats it is shown with `<NETBOX_TOKEN>` instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fabricgen.basics.errors import Problem
from fabricgen.basics.trust import check_host, has_invisible, printable, quoted
from fabricgen.export.netbox import NetboxData
from fabricgen.export.source import ExportError

EXTRA = "pip install 'fabricgen[netbox]'"
TOKEN_VARIABLE = "NETBOX_TOKEN"
SCHEMES = ("https", "http")
MAX_URL = 2048
DEFAULT_TIMEOUT_S = 30.0
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 1.0, 600.0


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


def shown_url(url: str) -> str:
    """`url` for a message: any user name and password (between // and the last @ before the
    path) as ***, escaped, cut after 200 characters."""
    return printable(_USERINFO.sub(r"\1***@", url))[:200]


_USERINFO = re.compile(r"(//)[^/?#]*@")


def check_url(url: str) -> str:
    """`url` when it is an http or https URL naming a host (a DNS name or an address, a valid port),
    with no user name or password, query or fragment; ExportError otherwise (the URL shown
    without its user name and password)."""

    def refuse(message: str, hint: str = "give the URL of the NetBox, e.g. https://netbox.example.net") -> ExportError:
        return ExportError(Problem(message, hint=hint, field=("--push",)))

    if len(url) > MAX_URL:
        raise refuse(f"the URL is longer than {MAX_URL:,} characters")
    if has_invisible(url) or any(ch.isspace() for ch in url):
        raise refuse(f"{quoted(shown_url(url))} holds a space or control character")
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise refuse(f"{quoted(shown_url(url))}: only http:// and https:// URLs are pushed to")
    if "@" in parts.netloc:
        raise refuse(
            f"{quoted(shown_url(url))} holds a user name or password",
            hint=f"give the URL without them; the API token comes from {TOKEN_VARIABLE}",
        )
    try:
        parts.port  # noqa: B018 - urllib checks the port when it is read
        host = parts.hostname
    except ValueError:
        raise refuse(f"{quoted(shown_url(url))}: {printable(parts.netloc.rpartition(':')[2])[:20]} is not a port (1 to 65535)") from None
    if not host:
        raise refuse(f"{quoted(shown_url(url))} names no host")
    try:
        check_host(host)
    except ValueError as exc:
        raise refuse(str(exc)) from None
    if parts.query or parts.fragment:
        raise refuse(f"{quoted(shown_url(url))}: a NetBox URL has no query or fragment (? or #)")
    return url


def check_timeout(seconds: float) -> float:
    """`seconds` when it is a number from MIN_TIMEOUT_S to MAX_TIMEOUT_S; ExportError otherwise."""
    if not (math.isfinite(seconds) and MIN_TIMEOUT_S <= seconds <= MAX_TIMEOUT_S):
        raise ExportError(
            Problem(
                f"{printable(seconds)[:20]} is not a number of seconds from {MIN_TIMEOUT_S:g} to {MAX_TIMEOUT_S:g}",
                hint=f"the default is {DEFAULT_TIMEOUT_S:g}",
                field=("--timeout",),
            )
        )
    return seconds


def _session(timeout: float) -> Any:
    """A requests session whose http and https adapters put (connect, read) = `timeout` on every
    request, whatever the caller passes (pynetbox passes none), and never retry."""
    import requests
    from requests.adapters import HTTPAdapter

    class TimeoutAdapter(HTTPAdapter):
        def send(self, request, **kwargs):
            kwargs["timeout"] = (timeout, timeout)
            return super().send(request, **kwargs)

    session = requests.Session()
    for scheme in ("https://", "http://"):
        session.mount(scheme, TimeoutAdapter(max_retries=0))
    return session


def connect(url: str, environ: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT_S) -> Any:
    """A pynetbox API for `url` (`check_url`), its token from NETBOX_TOKEN, every request with a
    connect and read timeout of `timeout` seconds (`check_timeout`). ExportError when the URL or
    the timeout is refused, pynetbox is not installed (naming the extra) or the token is missing;
    nothing is sent."""
    check_url(url)
    check_timeout(timeout)
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
    api = pynetbox.api(url, token=token)
    api.http_session = _session(timeout)
    return api


def push(plan: list[Request], api, url: str = "NetBox", timeout: float = DEFAULT_TIMEOUT_S) -> PushResult:
    """Create what `plan` names and NetBox lacks; an object whose request fails is named in
    `failed` (with NetBox's answer, the token hidden) and the push goes on with the next one. A
    request that cannot reach NetBox at `url` (refused, or no answer within `timeout` seconds: an
    OSError, as requests raises them) stops the push there, named in `failed`."""
    result = PushResult()
    ids: dict[Lookup, int] = {}
    token = getattr(api, "token", None)
    secret = token if isinstance(token, str) and token else None

    def hidden(text: str) -> str:
        return text.replace(secret, f"<{TOKEN_VARIABLE}>") if secret else text

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
        except OSError as exc:  # requests' ConnectionError and Timeout: NetBox is not there to answer the rest either
            what = f"did not answer within {timeout:g} s" if _timed_out(exc) else "could not be reached"
            done = sum(result.created.values()) + sum(result.existing.values())
            result.failed.append(
                hidden(f"{request.endpoint} {request.key}: {shown_url(url)} {what}; push stopped after {done:,} of {len(plan):,} objects ({str(exc)[:200]})")
            )
            break
        except Exception as exc:  # noqa: BLE001 - pynetbox's RequestError and a failed lookup alike: name it, go on
            result.failed.append(hidden(f"{request.endpoint} {request.key}: {str(exc)[:300]}"))
    return result


def _timed_out(exc: OSError) -> bool:
    """Whether `exc` is a timeout (requests' ConnectTimeout or ReadTimeout, or the socket's own)."""
    try:
        from requests.exceptions import Timeout
    except ImportError:  # no requests: no pynetbox either, so not a request of ours
        return isinstance(exc, TimeoutError)
    return isinstance(exc, Timeout | TimeoutError)
