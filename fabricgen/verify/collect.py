"""What `fabricgen verify` reads from each switch: getters only, through a read-only wrapper.

Each device is reached as `fabricgen push` reaches it (the same targets, drivers, credentials and
host-key / TLS checks), but the driver is wrapped in `ReadOnlyDevice`: only the getters of the
issue-20 getter contract, get_config and `show` commands pass; load, commit, rollback or anything
else raises `ReadOnlyViolation` before the driver sees it. Counters are sampled twice, `interval`
seconds apart, so error, discard and pause counts are rates over a known window.

Every answer is checked (answers.py) before it is kept: a getter that raises, or answers
something other than its documented format, is recorded (masked) in the device's `Observation`
as an error, and what it answered is not kept; it never stops the other getters or devices. Only a
getter the driver does not have, or that raises NotImplementedError (NAPALM's base class does for
what a driver lacks), is "not reported".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from fabricgen.nos.interface import plugin
from fabricgen.push.inventory import Target
from fabricgen.verify import answers

# The getter contract of issue 20 (NAPALM's getters and fabricgen's two extensions), and what a
# session needs around them. Nothing else is reachable through the wrapper.
READ_ONLY = frozenset(
    {
        "open",
        "close",
        "is_alive",
        "get_facts",
        "get_lldp_neighbors_detail",
        "get_interfaces",
        "get_interfaces_counters",
        "get_bgp_neighbors",
        "get_optics",
        "get_config",
        "get_lossless_counters",
        "get_ecmp_widths",
    }
)
# `cli` only for one show command at a time: NX-API's cli runs whatever it is given.
_SHOW = re.compile(r"show [A-Za-z0-9 ./|_:-]+")


class ReadOnlyViolation(PermissionError):
    """verify asked a driver for something other than a getter."""


class ReadOnlyDevice:
    """A NAPALM driver that only answers getters (READ_ONLY) and `cli` with `show` commands."""

    def __init__(self, driver) -> None:
        self._driver = driver

    def __getattr__(self, name: str):
        if name == "cli":
            return self._cli
        if name not in READ_ONLY:
            raise ReadOnlyViolation(f"verify is read-only: {name} is not a getter")
        return getattr(self._driver, name)

    def _cli(self, commands: list[str], encoding: str = "text") -> dict:
        for command in commands:
            if not _SHOW.fullmatch(command) or ";" in command:
                raise ReadOnlyViolation(f"verify is read-only: {command[:60]!r} is not a show command")
        if encoding == "text":
            return self._driver.cli(commands)
        return self._driver.cli(commands, encoding=encoding)


@dataclass
class Observation:
    """What one device answered, checked (answers.py: the getter's models, get_config's text); a
    getter that failed, answered malformed data or is not implemented is in `errors` / `missing`,
    not in `answers`."""

    target: Target
    reached: bool = False
    error: str = ""  # why it could not be reached
    answers: dict[str, Any] = field(default_factory=dict)  # getter -> checked answer (the first sample)
    second: dict[str, Any] = field(default_factory=dict)  # counters getter -> the second sample
    interval: float = 0.0  # seconds between the two samples
    errors: dict[str, str] = field(default_factory=dict)  # getter -> "failed: ..." or "answered malformed data: ..." (masked)
    missing: set[str] = field(default_factory=set)  # getters the driver does not implement
    seconds: float = 0.0


SAMPLED = ("get_interfaces_counters", "get_lossless_counters")
ONCE = ("get_facts", "get_lldp_neighbors_detail", "get_interfaces", "get_bgp_neighbors", "get_optics", "get_config", "get_ecmp_widths")


@dataclass(frozen=True, slots=True)
class Access:
    """How to reach devices: a driver factory (push's drivers, credentials and verification) and
    what masks a device's words (secret values, the password)."""

    connect: Callable[[Target], object]  # -> an unopened NAPALM driver
    clean: Callable[[str], str] = str


def collect(targets: list[Target], access: Access, interval: float, jobs: int, on_done: Callable[[Observation], None] | None = None) -> list[Observation]:
    """One Observation per target, in target order; at most `jobs` devices at once."""
    report = on_done or (lambda observation: None)

    def one(target: Target) -> Observation:
        observation = observe(target, access, interval)
        report(observation)
        return observation

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(targets) or 1))) as pool:
        return list(pool.map(one, targets))


def observe(target: Target, access: Access, interval: float) -> Observation:
    started = time.monotonic()
    observation = Observation(target)
    try:
        device = ReadOnlyDevice(access.connect(target))
        device.open()
    except Exception as exc:  # noqa: BLE001 - unreachable, refused, bad credentials: a finding
        observation.error = f"cannot connect to {target.host}: {type(exc).__name__}: {access.clean(str(exc))}"
        observation.seconds = time.monotonic() - started
        return observation
    observation.reached = True
    try:
        first = time.monotonic()
        for getter in SAMPLED:
            _ask(device, getter, observation, observation.answers, access)
        for getter in ONCE:
            _ask(device, getter, observation, observation.answers, access)
        time.sleep(max(0.0, interval - (time.monotonic() - first)))
        observation.interval = time.monotonic() - first
        for getter in SAMPLED:
            if getter in observation.answers:
                _ask(device, getter, observation, observation.second, access)
    finally:
        with suppress(Exception):
            device.close()
    observation.seconds = time.monotonic() - started
    return observation


MAX_ERROR = 400  # characters of a getter's error kept (masked first)


def _ask(device: ReadOnlyDevice, getter: str, observation: Observation, into: dict, access: Access) -> None:
    """Ask `getter`, check its answer, keep it in `into`; or record why not. A getter the NOS's
    NAPALM driver lacks is its VERIFY part's extension, read from the switch's own show output."""
    extensions = plugin(observation.target.nos).VERIFY.extensions
    extension = extensions.load().get(getter) if extensions is not None else None
    if extension is not None:
        ask = lambda: extension(device)  # noqa: E731
    elif getter == "get_config":
        ask = lambda: device.get_config(retrieve="running")  # noqa: E731
    else:
        try:
            ask = getattr(device, getter)
        except AttributeError:  # the driver has no such method (a NAPALM driver without fabricgen's extensions)
            observation.missing.add(getter)
            return
    try:
        into[getter] = answers.parse(getter, ask())
    except NotImplementedError:
        observation.missing.add(getter)
    except ReadOnlyViolation:
        raise
    except answers.AnswerError as exc:  # the answer, or NX-OS's JSON behind an extension, is malformed
        observation.errors[getter] = _masked(f"answered malformed data: {exc}", access)
    except Exception as exc:  # noqa: BLE001 - an AttributeError inside a getter included: it failed
        observation.errors[getter] = _masked(f"failed: {type(exc).__name__}: {exc}", access)


def _masked(text: str, access: Access) -> str:
    """Secrets masked, then cut (in that order: a value cut in half would not be masked)."""
    return access.clean(text)[:MAX_ERROR]
