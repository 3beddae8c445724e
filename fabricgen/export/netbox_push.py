"""`fabricgen export netbox --push URL`: NetBox converged to the build through its REST API.

`push(data, fabric, client, ...) -> PushResult` reads what NetBox holds (list GETs of 1,000 objects
a page: the fabric's own objects by its tag, shared ones by slug or number), plans per object type
what to create, which fields of which objects to change and, with `delete`, which of the fabric's
objects to delete (`fabricgen.export.netbox_plan`), and sends it as bulk requests: NetBox's list
endpoints take a JSON list for POST, PATCH and DELETE (netbox/api/viewsets/mixins.py,
BulkUpdateModelMixin and BulkDestroyModelMixin; a list POST is created in one transaction, rolled
back as a whole when one object is refused, its answer naming each refused object by index).
Requests go `concurrency` at a time, in waves whose batch size follows NetBox's pace (`in_waves`);
the types go one after the other, in the order they refer to each other (`KINDS`), deletes last in
the reverse order (the fabric's removed cables with the cables, before cables whose ends moved are
made again: `KindPlan.replaces`). A dry run reads and plans only. A batch that NetBox refuses is
sent again without the refused objects, which are named with NetBox's answer; an object whose
related object was refused is named too.

The URL is input from outside (`check_url`): http or https only (no file:, javascript: or other
scheme a library might open), a host, no user name or password (credentials come from the
environment) and no query or fragment. Every request has a connect and a read timeout (`timeout`
seconds, 1 to 600, on the session's adapters); a request that times out or cannot connect stops
the push (the rest would wait as long each). The token comes from NETBOX_TOKEN in the environment
only (`Token <token>`, or `Bearer <token>` for NetBox's v2 tokens, which start `nbt_`:
netbox/netbox/api/authentication.py); it is never printed or written, and a server's answer that
repeats it is shown with `<NETBOX_TOKEN>` instead.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fabricgen.basics.errors import Problem
from fabricgen.basics.trust import check_host, has_invisible, printable, quoted
from fabricgen.export.netbox import NetboxData, fabric_tag
from fabricgen.export.netbox_plan import DEVICE_ADDRESSES, KIND, KINDS, Key, Kind, KindPlan, Record, Wanted, plan_kind, resolve, unresolved, wanted_objects
from fabricgen.export.source import ExportError

EXTRA = "pip install 'fabricgen[netbox]'"
TOKEN_VARIABLE = "NETBOX_TOKEN"
SCHEMES = ("https", "http")
MAX_URL = 2048
DEFAULT_TIMEOUT_S = 30.0
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 1.0, 600.0
DEFAULT_CONCURRENCY, MAX_CONCURRENCY = 4, 16
BATCH = 250  # objects per bulk request at most (`Kind.batch` per type: every answer must come within --timeout)
PAGE = 1000  # objects per list GET (NetBox's default MAX_PAGE_SIZE)
FILTER_VALUES = 100  # slugs or numbers per lookup GET of a shared kind
LISTED = 20  # changes a dry run lists
# A bulk write that PostgreSQL aborted to break a deadlock or a serialization conflict with another
# of the push's concurrent requests (NetBox answers 500 with PostgreSQL's message): NetBox runs each
# bulk create, update and delete in one transaction (netbox/api/viewsets/mixins.py, 4.7.3), so the
# whole request was rolled back and is sent again. PostgreSQL: "Deadlocks" (13.3.4) aborts one of
# the transactions; the messages are those of SQLSTATE 40P01 and 40001 (Appendix A).
TRANSIENT = ("deadlock detected", "could not serialize access")
ATTEMPTS = 5  # sends of a request a transient conflict aborted, in all


class HttpError(Exception):
    """NetBox answered `status` (400 and up); `payload` is its JSON answer, else its text."""

    def __init__(self, status: int, payload: Any):
        super().__init__(f"HTTP {status}: {str(payload)[:300]}")
        self.status, self.payload = status, payload


class Stopped(Exception):
    """NetBox could not be reached or did not answer in time: the push stops."""


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    stale: int = 0  # the fabric's objects the build no longer has, kept (no --delete)
    failed: int = 0


@dataclass
class PushResult:
    counts: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    failed: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # the first LISTED planned changes
    dry_run: bool = False
    seconds: float = 0.0

    def total(self, what: str) -> int:
        return sum(getattr(c, what) for c in self.counts.values())


class Client:
    """NetBox's REST API at `url` with `token`: one requests session per thread, every request
    with a (connect, read) timeout of `timeout` seconds."""

    def __init__(self, url: str, token: str, timeout: float = DEFAULT_TIMEOUT_S):
        self.url, self.token, self.timeout = url, token, timeout
        self.base = url.rstrip("/") + "/api/"
        keyword = "Bearer" if token.startswith("nbt_") else "Token"
        self.headers = {"Authorization": f"{keyword} {token}", "Accept": "application/json"}
        self._local = threading.local()

    def hidden(self, text: str) -> str:
        return text.replace(self.token, f"<{TOKEN_VARIABLE}>") if self.token else text

    def request(self, method: str, path: str, params: Iterable[tuple[str, str]] = (), body: Any = None) -> Any:
        """The JSON answer of one request, sent again (up to ATTEMPTS in all, after a short random
        pause) while NetBox's database aborts it as a transient conflict; HttpError for a 4xx/5xx
        answer, Stopped when NetBox cannot be reached or does not answer within the timeout."""
        params = list(params)
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return self._request_once(method, path, params, body)
            except HttpError as exc:
                if exc.status < 500 or attempt == ATTEMPTS or not any(text in str(exc.payload) for text in TRANSIENT):
                    raise
            # the other transaction commits meanwhile; a random pause keeps two victims from meeting again
            time.sleep(random.uniform(0.05, 0.25) * attempt)  # noqa: S311 - a pause, not a secret
        raise AssertionError("unreachable")

    def _request_once(self, method: str, path: str, params: list[tuple[str, str]], body: Any) -> Any:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = _session(self.timeout)
        try:
            response = session.request(method, self.base + path, params=params, json=body, headers=self.headers)
        except OSError as exc:  # requests' ConnectionError and Timeout
            what = f"did not answer within {self.timeout:g} s" if _timed_out(exc) else "could not be reached"
            raise Stopped(self.hidden(f"{shown_url(self.url)} {what} ({str(exc)[:200]})")) from None
        if response.status_code >= 400:
            try:
                payload = response.json()
            except ValueError:
                payload = response.text[:500]
            raise HttpError(response.status_code, payload)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:  # a proxy's HTML page, say
            raise HttpError(response.status_code, f"not JSON: {response.text[:300]}") from None

    def list(self, path: str, params: Iterable[tuple[str, str]] = ()) -> list[Record]:
        """Every object a list GET returns, a page of PAGE at a time."""
        params = list(params)
        found: list[Record] = []
        while True:
            page = self.request("GET", path, [*params, ("limit", str(PAGE)), ("offset", str(len(found)))])
            results = page.get("results", []) if isinstance(page, dict) else []
            found.extend(r for r in results if isinstance(r, dict))
            if not results or not page.get("next") or len(found) >= int(page.get("count", 0)):
                return found


def push(
    data: NetboxData,
    fabric: str,
    client: Client,
    *,
    delete: bool = False,
    dry_run: bool = False,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch: int = BATCH,
    progress: Callable[[str, str], None] = lambda phase, detail: None,
) -> PushResult:
    """Converge the NetBox behind `client` to `data` (the module docstring). `progress(phase,
    detail)` is called as each step starts."""
    started = time.perf_counter()
    result = PushResult(dry_run=dry_run)
    wanted: dict[str, list[Wanted]] = defaultdict(list)
    for want in wanted_objects(data, fabric):
        wanted[want.kind].append(want)
    existing: dict[str, dict[Key, Record]] = {}
    ids: dict[str, dict[Key, int]] = defaultdict(dict)
    workers = max(1, min(concurrency, MAX_CONCURRENCY))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            progress("read", f"what NetBox holds of {fabric}")
            _read(client, pool, fabric, wanted, existing, ids)
            deletes: list[tuple[Kind, KindPlan]] = []
            for kind in KINDS:
                records = existing["dcim.devices" if kind.name == DEVICE_ADDRESSES else kind.name]
                plan = plan_kind(kind, wanted.get(kind.name, []), records, ids, fabric, delete=delete)
                counts = result.counts[kind.name]
                counts.unchanged, counts.stale = plan.unchanged, plan.stale
                _list_changes(result, kind, plan)
                early = bool(kind.replace_on) and not dry_run  # a cable deleted frees its ports for the cables created next
                if plan.deletes and not early:
                    deletes.append((kind, plan))
                if dry_run:
                    counts.created, counts.deleted = len(plan.creates), len(plan.deletes)
                    counts.updated = len(plan.updates) + len(plan.replaces)
                    continue
                if plan.creates or plan.updates or plan.replaces:
                    progress(kind.name, f"{len(plan.creates):,} to create, {len(plan.updates) + len(plan.replaces):,} to change")
                if plan.deletes and early:
                    progress(f"delete {kind.name}", f"{len(plan.deletes):,}")
                    _delete(client, pool, kind, plan, result, batch, workers)
                _replace(client, pool, kind, plan, existing, ids, result, batch, workers)
                _create(client, pool, kind, plan.creates, existing, ids, result, batch, workers, progress)
                _update(client, pool, kind, plan, existing, result, batch, workers)
            if not dry_run:
                for kind, plan in reversed(deletes):
                    progress(f"delete {kind.name}", f"{len(plan.deletes):,}")
                    _delete(client, pool, kind, plan, result, batch, workers)
        except Stopped as exc:
            done = result.total("created") + result.total("updated") + result.total("deleted")
            result.failed.append(f"{exc}; push stopped after {done:,} changes")
    result.seconds = time.perf_counter() - started
    return result


def _read(client: Client, pool: ThreadPoolExecutor, fabric: str, wanted: Mapping[str, list[Wanted]], existing: dict, ids: dict) -> None:
    """What NetBox holds: the fabric's own objects by its tag (none while the tag does not exist),
    shared ones by the slugs or numbers the build wants."""
    tag = fabric_tag(fabric)
    try:
        own = bool(client.list("extras/tags/", [("slug", tag)]))
    except HttpError as exc:
        raise Stopped(client.hidden(f"reading extras.tags from {shown_url(client.url)}: {exc}")) from None
    jobs: dict[str, list[Future]] = {}
    for kind in KINDS:
        if kind.name == DEVICE_ADDRESSES:
            continue
        # only the fields the plan reads (NetBox's `fields` query parameter, netbox/netbox/api/
        # viewsets/__init__.py): an interface's cable paths and a device's counts are not computed
        names = {"id", "tags", *kind.identity}
        for want in [*wanted.get(kind.name, []), *(wanted.get(DEVICE_ADDRESSES, []) if kind.name == "dcim.devices" else [])]:
            names.update(want.fields)
        query = [*kind.query, ("fields", ",".join(sorted(names)))]
        if kind.shared:
            values = [want.key[0] for want in wanted.get(kind.name, [])]
            chunks = [values[i : i + FILTER_VALUES] for i in range(0, len(values), FILTER_VALUES)]
            jobs[kind.name] = [pool.submit(client.list, kind.path, [*query, *((kind.lookup, v) for v in chunk)]) for chunk in chunks]
        elif own:
            jobs[kind.name] = [pool.submit(client.list, kind.path, [*query, ("tag", tag)])]
        else:
            jobs[kind.name] = []
    for name, futures in jobs.items():
        records: dict[Key, Record] = {}
        for future in futures:
            try:
                found = future.result()
            except HttpError as exc:
                raise Stopped(client.hidden(f"reading {name} from {shown_url(client.url)}: {exc}")) from None
            for record in found:
                key = KIND[name].key_of(record)
                records.setdefault(key, record)
        existing[name] = records
        ids[name] = {key: int(record["id"]) for key, record in records.items()}


def _list_changes(result: PushResult, kind: Kind, plan: KindPlan) -> None:
    room = LISTED - len(result.changes)
    lines = [f"create {kind.name} {_shown(w.key)}" for w in plan.creates[:room]]
    for update in [*plan.updates, *plan.replaces][: max(0, room - len(lines))]:
        fields = ", ".join(f"{name} {printable(_brief(update.was[name]))[:60]} -> {printable(_brief(value))[:60]}" for name, value in update.changes.items())
        again = " (deleted and made again)" if update.want is not None else ""
        lines.append(f"update {kind.name} {_shown(update.key)}{again}: {fields}")
    lines += [f"delete {kind.name} {_shown(key)}" for key, _ in plan.deletes[: max(0, room - len(lines))]]
    result.changes.extend(lines)


def _shown(key: Key) -> str:
    return printable(" ".join(key))[:120]


def _brief(value: Any) -> Any:
    """A NetBox value as short as it reads: a related object as its name, a choice as its value."""
    if isinstance(value, Mapping):
        for name in ("value", "name", "slug", "address", "id"):
            if name in value:
                return value[name]
    if isinstance(value, list):
        return [_brief(item) for item in value]
    return value


def _fields(kind: Kind, names: Iterable[str]) -> tuple[str, str]:
    """NetBox's `fields` query parameter naming `names`, the ID and what the object's identity
    reads: a write's serializer then takes and answers only those (netbox/netbox/api/serializers/
    base.py BaseModelSerializer.fields), so NetBox does not compute an interface's cable paths or
    a device's component counts for its answer."""
    return ("fields", ",".join(sorted({"id", "tags", *kind.identity, *names})))


FIRST_BATCH = 10  # objects in each of the first requests of a step, before NetBox's pace is known


def in_waves(
    pool: ThreadPoolExecutor,
    items: list,
    send: Callable[[list], list],
    workers: int,
    most: int,
    timeout: float,
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[list]:
    """`send(batch)`'s results for `items` in batches, `workers` requests at a time. The batches of
    each wave are sized from the wave before: as many objects as the slowest request of that wave
    took a quarter of `timeout` for (at most 4 times the size before, and `most`), so a loaded
    NetBox gets small requests that answer within the timeout and an idle one large ones."""
    size = min(most, FIRST_BATCH)
    start = 0
    while start < len(items):
        wave = []
        for _ in range(workers):
            if start >= len(items):
                break
            batch = items[start : start + size]
            start += len(batch)
            wave.append((len(batch), pool.submit(_timed, send, batch, clock)))
        slowest = 0.0
        for count, future in wave:
            seconds, results = future.result()
            slowest = max(slowest, seconds / count)
            yield results
        pace = int(timeout / 4 / slowest) if slowest > 0 else most
        size = max(1, min(most, size * 4, pace))


def _timed(send: Callable[[list], list], batch: list, clock: Callable[[], float]) -> tuple[float, list]:
    started = clock()
    results = send(batch)
    return clock() - started, results


def _body(want: Wanted, ids: Mapping[str, Mapping[Key, int]]) -> dict[str, Any]:
    """The create body: Refs as IDs, blank (None) fields left to NetBox's default."""
    return {name: resolve(value, ids) for name, value in want.fields.items() if value is not None}


def _errors(payload: Any) -> dict[int, str]:
    """NetBox 4.7's bulk answer `{"detail", "errors": [{"index" or "id", "errors"}]}` as
    {index or id: its errors}; older NetBoxes answer a list aligned with the request."""
    found: dict[int, str] = {}
    if isinstance(payload, dict) and isinstance(payload.get("errors"), list):
        for entry in payload["errors"]:
            if isinstance(entry, dict):
                where = entry.get("index", entry.get("id"))
                if isinstance(where, int):
                    found[where] = str(entry.get("errors"))[:300]
    elif isinstance(payload, list):
        found = {i: str(e)[:300] for i, e in enumerate(payload) if e}
    return found


def _create(
    client: Client,
    pool: ThreadPoolExecutor,
    kind: Kind,
    creates: list[Wanted],
    existing: dict,
    ids: dict,
    result: PushResult,
    batch: int,
    workers: int,
    progress: Callable[[str, str], None] = lambda phase, detail: None,
) -> None:
    counts = result.counts[kind.name]
    ready: list[Wanted] = []
    for want in creates:
        missing = unresolved(want.fields, ids)
        if missing:
            counts.failed += 1
            result.failed.append(f"{kind.name} {_shown(want.key)}: not created, it needs {missing[0].kind} {_shown(missing[0].key)}, which is not in NetBox")
        else:
            ready.append(want)

    def send(items: list[Wanted]) -> list[tuple[Wanted, Record | None, str]]:
        """(object, its record or None, why not) per object of a batch; a refused batch sent
        again without the refused objects."""
        try:
            bodies = [_body(w, ids) for w in items]
            records = client.request("POST", kind.path, [_fields(kind, {name for body in bodies for name in body})], body=bodies)
        except HttpError as exc:
            refused = _errors(exc.payload)
            if exc.status < 500 and refused and len(refused) < len(items):
                rest = [w for i, w in enumerate(items) if i not in refused]
                return [(items[i], None, f"HTTP {exc.status}: {why}") for i, why in sorted(refused.items())] + send(rest)
            return [(w, None, f"HTTP {exc.status}: {refused.get(i, str(exc.payload)[:300])}") for i, w in enumerate(items)]
        if not isinstance(records, list) or len(records) != len(items) or not all(isinstance(r, dict) and isinstance(r.get("id"), int) for r in records):
            return [(w, None, f"NetBox's answer is not the {len(items):,} objects sent") for w in items]
        return [(w, r, "") for w, r in zip(items, records, strict=True)]

    shown, before = 0, counts.created + counts.failed
    for results in in_waves(pool, ready, send, workers, min(batch, kind.batch), client.timeout):
        for want, record, why in results:
            if record is None:
                counts.failed += 1
                result.failed.append(client.hidden(f"{kind.name} {_shown(want.key)}: {why}"))
                continue
            counts.created += 1
            existing[kind.name][want.key] = record
            ids[kind.name][want.key] = int(record["id"])
        done = counts.created + counts.failed - before
        if len(ready) >= 500 and done < len(ready) and done * 4 // len(ready) > shown:  # a long step: each quarter done
            shown = done * 4 // len(ready)
            progress(kind.name, f"{done:,} of {len(ready):,} sent")


def _replace(
    client: Client, pool: ThreadPoolExecutor, kind: Kind, plan: KindPlan, existing: dict, ids: dict, result: PushResult, batch: int, workers: int
) -> None:
    """Make the objects of `plan.replaces` again: all of them deleted first, then created; counted
    as changed."""
    if not plan.replaces:
        return
    counts = result.counts[kind.name]
    deleted = _delete(client, pool, kind, KindPlan(kind.name, deletes=[(u.key, u.id) for u in plan.replaces]), result, batch, workers)
    counts.deleted -= len(deleted)
    for key in deleted:
        existing[kind.name].pop(key, None)
        ids[kind.name].pop(key, None)
    created = counts.created
    _create(client, pool, kind, [u.want for u in plan.replaces if u.key in deleted and u.want is not None], existing, ids, result, batch, workers)
    counts.updated += counts.created - created
    counts.created = created


def _update(client: Client, pool: ThreadPoolExecutor, kind: Kind, plan: KindPlan, existing: dict, result: PushResult, batch: int, workers: int) -> None:
    counts = result.counts[kind.name]
    records = existing["dcim.devices" if kind.name == DEVICE_ADDRESSES else kind.name]
    by_id = {update.id: update for update in plan.updates}

    def send(items: list) -> list[tuple[Any, Record | None, str]]:
        try:
            names = {name for u in items for name in u.changes}
            answer = client.request("PATCH", kind.path, [_fields(kind, names)], body=[{"id": u.id, **u.changes} for u in items])
        except HttpError as exc:
            refused = _errors(exc.payload)
            if exc.status < 500 and refused and len(refused) < len(items):
                rest = [u for u in items if u.id not in refused]
                return [(by_id[i], None, f"HTTP {exc.status}: {why}") for i, why in sorted(refused.items()) if i in by_id] + send(rest)
            return [(u, None, f"HTTP {exc.status}: {refused.get(u.id, str(exc.payload)[:300])}") for u in items]
        got = {r["id"]: r for r in answer if isinstance(r, dict) and isinstance(r.get("id"), int)} if isinstance(answer, list) else {}
        return [(u, got.get(u.id), "" if u.id in got else "not in NetBox's answer") for u in items]

    for results in in_waves(pool, plan.updates, send, workers, min(batch, kind.batch), client.timeout):
        for update, record, why in results:
            if record is None:
                counts.failed += 1
                result.failed.append(client.hidden(f"{kind.name} {_shown(update.key)}: not changed, {why}"))
                continue
            counts.updated += 1
            records[update.key] = record


def _delete(client: Client, pool: ThreadPoolExecutor, kind: Kind, plan: KindPlan, result: PushResult, batch: int, workers: int) -> set[Key]:
    """Delete `plan.deletes`; the keys deleted."""
    counts = result.counts[kind.name]
    deleted: set[Key] = set()

    def send(items: list[tuple[Key, int]]) -> list[tuple[Key, str]]:
        try:
            client.request("DELETE", kind.path, body=[{"id": object_id} for _, object_id in items])
        except HttpError as exc:
            return [(key, f"HTTP {exc.status}: {str(exc.payload)[:300]}") for key, _ in items]
        return [(key, "") for key, _ in items]

    for results in in_waves(pool, plan.deletes, send, workers, min(batch, kind.batch), client.timeout):
        for key, why in results:
            if why:
                counts.failed += 1
                result.failed.append(client.hidden(f"{kind.name} {_shown(key)}: not deleted, {why}"))
            else:
                counts.deleted += 1
                deleted.add(key)
    return deleted


def connect(url: str, environ: Mapping[str, str], timeout: float = DEFAULT_TIMEOUT_S) -> Client:
    """A Client for `url` (`check_url`), its token from NETBOX_TOKEN, every request with a connect
    and read timeout of `timeout` seconds (`check_timeout`). ExportError when the URL or the
    timeout is refused, requests is not installed (naming the extra) or the token is missing;
    nothing is sent."""
    check_url(url)
    check_timeout(timeout)
    try:
        import requests  # noqa: F401 - the netbox extra's
    except ImportError:
        raise ExportError(Problem("--push needs requests, which is not installed", hint=EXTRA)) from None
    token = environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise ExportError(
            Problem(
                f"--push needs a NetBox API token in {TOKEN_VARIABLE}",
                hint=f"export {TOKEN_VARIABLE}=... (a token with write permission); it is read from the environment only",
            )
        )
    if has_invisible(token) or any(ch.isspace() for ch in token) or len(token) > 512:
        raise ExportError(Problem(f"{TOKEN_VARIABLE} holds a space or control character, or is over 512 characters", hint="export the token alone"))
    return Client(url, token, timeout)


def check_concurrency(value: int) -> int:
    """`value` when it is 1 to MAX_CONCURRENCY; ExportError otherwise."""
    if not 1 <= value <= MAX_CONCURRENCY:
        raise ExportError(
            Problem(f"{value} requests at a time is not 1 to {MAX_CONCURRENCY}", hint=f"the default is {DEFAULT_CONCURRENCY}", field=("--concurrency",))
        )
    return value


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
    request, whatever the caller passes, and never retry."""
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


def _timed_out(exc: OSError) -> bool:
    """Whether `exc` is a timeout (requests' ConnectTimeout or ReadTimeout, or the socket's own)."""
    try:
        from requests.exceptions import Timeout
    except ImportError:  # no requests: not a request of ours
        return isinstance(exc, TimeoutError)
    return isinstance(exc, Timeout | TimeoutError)
