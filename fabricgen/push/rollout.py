"""The staged rollout behind `fabricgen push`.

Dry run (the default): every selected device loads the build's config as a replace candidate,
reports its diff (`compare_config`) and discards it. Nothing changes on any device.

Every candidate is the staged build's text with its secrets filled in, in memory
(push/candidate.py), handed over as `load_*_candidate(config=...)`; everything a device or driver
says back (diffs, errors) is masked (each secret value becomes its placeholder, the password
********) before it is kept in a result.

`--commit`: the same dry run first, as a preflight: when any device cannot be reached, refuses the
login or rejects the candidate, nothing is committed anywhere. Then only the devices whose diff is
not empty are committed: a canary alone, then batches. After each commit the device must show every
BGP neighbor its new config declares as Established (`get_bgp_neighbors`) within the verify
timeout, and a NEW management session must open (a second driver instance: open, get_facts,
close); otherwise it is rolled back and the rollout stops before the next batch. Within a batch,
devices run concurrently up to a bound.

Commit-confirm: each commit is made with `revert_in` (the confirm timeout): the device restores
its previous config by itself unless fabricgen confirms after verification, so a lost session, a
killed fabricgen or a config that locks the management plane out undoes the change. A driver
without commit-confirm gets a plain commit and the result says so.

`merge`: the build is loaded with `load_merge_candidate` instead: lines are added or changed,
nothing the build lacks is removed from the device.

Per-device trouble (unreachable, bad credentials, a refused commit, failed verification) is a
`DeviceResult`, never an exception: one device's failure must not hide what happened on the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from enum import Enum

from napalm.base import get_network_driver
from napalm.base.exceptions import (
    CommitError,
    ConnectionException,
    MergeConfigException,
    ModuleImportError,
    ReplaceConfigException,
)

from fabricgen.basics.errors import Problem, PushError, raise_if
from fabricgen.build.secrets import Secrets
from fabricgen.nos.interface import plugin
from fabricgen.push.candidate import candidate as filled_candidate
from fabricgen.push.candidate import check_complete
from fabricgen.push.credentials import Credentials
from fabricgen.push.inventory import Target, driver_parts
from fabricgen.push.security import DeviceVerification

# Exceptions with which a driver says "the device refused the commit and kept its config":
# NX-OS applies a replace atomically (rollback-patch), fabricgen's SONiC driver restores its own
# checkpoint before raising. Anything else during a commit leaves the device's state unknown.
REFUSED_COMMIT = (CommitError, ReplaceConfigException, MergeConfigException)
NO_CANARY = "none"  # --canary none: straight to batches (both ends of a renumbered link at once)


class Outcome(str, Enum):
    unchanged = "unchanged"
    would_change = "would change"  # dry run: the build differs from the device
    committed = "committed"  # and verified
    rolled_back = "rolled back"
    failed = "failed"
    not_attempted = "not attempted"  # the rollout stopped before this device


@dataclass(frozen=True, slots=True)
class RolloutOptions:
    commit: bool = False
    batch: int = 5
    concurrency: int = 8
    canary: str | None = None  # default: the first leaf (else the first device) whose config changes
    connect_timeout: int = 60
    verify_timeout: float = 120.0
    poll_interval: float = 2.0
    verification: DeviceVerification = field(default_factory=DeviceVerification)  # host keys, TLS
    merge: bool = False  # load_merge_candidate instead of a replace
    confirm_timeout: int | None = None  # revert_in of each commit; None: verify + connect timeouts + 60 s

    @property
    def revert_in(self) -> int:
        if self.confirm_timeout is not None:
            return self.confirm_timeout
        # verification, then a new management session, then the confirm itself, with room to spare
        return int(self.verify_timeout + 2 * self.connect_timeout + 60)


@dataclass(frozen=True, slots=True)
class DeviceResult:
    target: Target
    outcome: Outcome
    stage: str = ""  # "preflight", "canary", "batch 2"
    diff: str = ""
    message: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome in (Outcome.unchanged, Outcome.would_change, Outcome.committed)


@dataclass(frozen=True, slots=True)
class Rollout:
    results: list[DeviceResult]  # one per selected device, in build order
    committed: bool  # --commit was asked
    stopped: str = ""  # why the rollout stopped early, if it did

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self.results)


Progress = Callable[[DeviceResult], None]


def resolve_drivers(targets: Iterable[Target]) -> dict[str, type]:
    """Every driver the targets need, looked up before any device is contacted: fabricgen's own
    where a NOS's PUSH names one (NAPALM's lacks what push needs), else NAPALM's lookup."""
    drivers, problems = {}, []
    own = {name: parts.own_driver for name, parts in driver_parts().items() if parts.own_driver is not None}
    for name in sorted({target.driver for target in targets}):
        try:
            if name in own:
                drivers[name] = own[name].load()  # imported when needed (as NAPALM's lookup does)
                continue
            drivers[name] = get_network_driver(name)
        except ModuleImportError as exc:
            problems.append(Problem(f"NAPALM driver {name!r} is not available: {exc}", hint="install it, or set `driver` in the inventory"))
    raise_if(problems, PushError)
    return drivers


class DeviceSession:
    """What every device action of one rollout shares: credentials, secrets, a way to make drivers."""

    def __init__(self, drivers: dict[str, type], credentials: Credentials, secrets: Secrets, options: RolloutOptions):
        self.drivers, self.credentials, self.secrets, self.options = drivers, credentials, secrets, options

    def device(self, target: Target):
        return self.drivers[target.driver](
            target.host,
            self.credentials.username,
            self.credentials.password,
            timeout=self.options.connect_timeout,
            optional_args=self.options.verification.driver_args(target),
        )

    def clean(self, text: object) -> str:
        """A device's or driver's words (a text or an exception) with every secret value and the
        password masked."""
        return self.credentials.scrub(self.secrets.mask(str(text)))


def push(
    targets: list[Target], credentials: Credentials, options: RolloutOptions, on_result: Progress | None = None, secrets: Secrets | None = None
) -> Rollout:
    """Dry-run every target; with options.commit, then commit the changed ones in stages.
    `secrets`: the values the configs' placeholders take (push/candidate.py read_secrets)."""
    if options.canary not in (None, NO_CANARY) and options.canary not in {target.name for target in targets}:
        raise PushError(Problem(f"--canary {options.canary!r} is not among the selected devices", hint="name one of the devices --devices selects"))
    options.verification.check(targets)
    if options.merge:
        _refuse_merge(targets)
    if options.commit and not options.merge:
        check_complete(targets)  # a replace of an incomplete config would lock everyone out
        _check_commit_timers(targets, options.revert_in)
    session = DeviceSession(resolve_drivers(targets), credentials, secrets or Secrets(), options)
    report = on_result or (lambda result: None)

    preflight = _run_stage(targets, "preflight", lambda t: _dry_run(session, t), options.concurrency, report)
    if not options.commit:
        return Rollout(preflight, committed=False)
    results = {result.target.name: result for result in preflight}
    failed = sum(not result.ok for result in preflight)
    stopped = f"preflight failed on {failed} device(s); nothing was committed" if failed else ""
    changed = [result.target for result in preflight if result.outcome is Outcome.would_change]
    for stage, group in [] if stopped else _stages(changed, options):
        outcomes = _run_stage(group, stage, lambda t: _commit(session, t), options.concurrency, report)
        results.update((result.target.name, result) for result in outcomes)
        if not all(result.ok for result in outcomes):
            stopped = f"{stage} failed; later devices were not touched"
            break
    final = []
    for target in targets:
        result = results[target.name]
        if result.outcome is Outcome.would_change:  # preflight saw a change the rollout never reached
            result = replace(result, outcome=Outcome.not_attempted, stage="")  # the summary says why
        final.append(result)
    return Rollout(final, committed=True, stopped=stopped)


def _refuse_merge(targets: list[Target]) -> None:
    """PushError for the targets whose NOS refuses --merge (its PUSH.merge_refused), one per NOS."""
    problems = []
    for nos in sorted({target.nos for target in targets}):
        package = plugin(nos)
        refusal = package.PUSH.merge_refused
        if refusal is None:
            continue
        names = sorted(target.name for target in targets if target.nos == nos)
        problems.append(
            Problem(
                f"--merge is not supported on {package.TITLE} ({', '.join(names[:3])}{' and more' if len(names) > 3 else ''}): {refusal.message}",
                hint=refusal.hint,
            )
        )
    raise_if(problems, PushError)


def _check_commit_timers(targets: list[Target], revert_in: int) -> None:
    """PushError when a driver's commit-confirm timer (its NOS's PUSH.commit_timer) cannot hold
    `revert_in`: refused before any device is contacted, not by the device after the change."""
    parts = driver_parts()
    timers = {parts[t.driver].commit_timer for t in targets if t.driver in parts}
    problems = [
        Problem(
            f"the confirm timeout is {revert_in} s; {timer.name} takes {timer.low}-{timer.high} s",
            hint="set --confirm-timeout in that range (or lower --verify-timeout / --connect-timeout)",
        )
        for timer in sorted((timer for timer in timers if timer is not None), key=lambda timer: timer.name)
        if not timer.low <= revert_in <= timer.high
    ]
    raise_if(problems, PushError)


def _stages(changed: list[Target], options: RolloutOptions) -> list[tuple[str, list[Target]]]:
    size = max(1, options.batch)
    if not changed:
        return []
    if options.canary == NO_CANARY:
        return [(f"batch {n + 1}", changed[i : i + size]) for n, i in enumerate(range(0, len(changed), size))]
    # A leaf by default: one of many, and a mistake on it touches one rail of one scalable unit,
    # where a spine carries a share of every leaf's traffic.
    named = next((t for t in changed if t.name == options.canary), None)
    canary = named or next((t for t in changed if t.role == "leaf"), changed[0])
    rest = [target for target in changed if target is not canary]
    return [("canary", [canary])] + [(f"batch {n + 1}", rest[i : i + size]) for n, i in enumerate(range(0, len(rest), size))]


def _run_stage(targets: list[Target], stage: str, action, concurrency: int, report: Progress) -> list[DeviceResult]:
    def one(target: Target) -> DeviceResult:
        started = time.monotonic()
        result = action(target)
        result = replace(result, stage=stage, seconds=time.monotonic() - started)
        report(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(targets) or 1))) as pool:
        return list(pool.map(one, targets))


def _dry_run(session: DeviceSession, target: Target) -> DeviceResult:
    device = session.device(target)
    opened = _open(device, target, session)
    if isinstance(opened, DeviceResult):
        return opened
    try:
        result = _candidate(device, target, session)
        pinned = getattr(device, "pinned_host_key", "")  # trust on first use: say what was trusted
        if pinned:
            result = replace(result, message=f"pinned its host key, {pinned}" + (f"; {result.message}" if result.message else ""))
        image = _image_problem(device, target, session)
        if image:  # a commit would pin an image the switch does not run: refused in preflight
            outcome = Outcome.failed if session.options.commit and result.ok else result.outcome
            result = replace(result, outcome=outcome, message=image + (f"; {result.message}" if result.message else ""))
        return result
    finally:
        _discard(device)
        _close(device)


def _image_problem(device, target: Target, session: DeviceSession) -> str:
    """A switch that does not run (or will not boot) the image the build pins (SONiC, EOS: drivers
    with get_boot_images); "" when it does or the driver cannot tell."""
    if not target.boot_image or not hasattr(device, "get_boot_images"):
        return ""
    try:
        images = device.get_boot_images()
    except Exception as exc:  # noqa: BLE001
        return f"cannot read its images ({target.driver} driver): {session.clean(exc)}"
    wrong = [f"{which} {images.get(which) or '(none)'}" for which in ("current", "next") if images.get(which) != target.boot_image]
    return f"runs another image than the build pins ({target.boot_image}): {', '.join(wrong)}" if wrong else ""


def _commit(session: DeviceSession, target: Target) -> DeviceResult:
    device, options = session.device(target), session.options
    opened = _open(device, target, session)
    if isinstance(opened, DeviceResult):
        return opened
    try:
        result = _candidate(device, target, session)
        if result.outcome is not Outcome.would_change:
            _discard(device)
            return result
        before = _established(device, target)
        confirm = True
        try:
            try:
                device.commit_config(revert_in=options.revert_in)
            except NotImplementedError:  # the driver has no commit-confirm: refused before any change
                confirm = False
                device.commit_config()
        except REFUSED_COMMIT as exc:
            return replace(result, outcome=Outcome.failed, message=f"commit refused, the device kept its previous config: {session.clean(exc)}")
        except Exception as exc:  # noqa: BLE001 - any driver or transport error: report it, stop the rollout
            timer = f"; its confirm timer restores the previous config within {options.revert_in} s" if confirm else ""
            return replace(
                result,
                outcome=Outcome.failed,
                message=(
                    f"commit interrupted ({type(exc).__name__}: {session.clean(exc)}); "
                    f"the device's state is unknown{timer}: check it, then `rollback` on the device if needed"
                ),
            )
        verified, detail = _wait_established(device, target, options, set(target.expected_peers))
        if verified:
            management = _management_works(session, target)
            verified, detail = (True, f"{detail}; a new management session works") if not management else (False, f"{detail}; {management}")
        if verified:
            if not confirm:
                return replace(result, outcome=Outcome.committed, message=f"{detail}; the {target.driver} driver has no commit-confirm")
            try:
                device.confirm_commit()
            except Exception as exc:  # noqa: BLE001 - not confirmed: the device reverts by itself
                return replace(
                    result,
                    outcome=Outcome.failed,
                    message=(
                        f"verified ({detail}) but the confirm failed ({session.clean(exc)}); the device restores its previous config "
                        f"within {options.revert_in} s of the commit"
                    ),
                )
            return replace(result, outcome=Outcome.committed, message=f"{detail}; confirmed")
        try:
            device.rollback()
        except Exception as exc:  # noqa: BLE001
            fallback = f"; its confirm timer restores the previous config within {options.revert_in} s of the commit" if confirm else ""
            return replace(result, outcome=Outcome.failed, message=f"verification failed ({detail}) and ROLLBACK FAILED: {session.clean(exc)}{fallback}")
        _, back = _wait_established(device, target, options, before) if before else (True, "")
        return replace(result, outcome=Outcome.rolled_back, message=f"verification failed ({detail}); rolled back" + (f"; {back}" if back else ""))
    finally:
        _close(device)


def _management_works(session: DeviceSession, target: Target) -> str:
    """ "" when a NEW session to the device opens and answers get_facts; else what went wrong.
    The commit's own session may survive a change that refuses every new login."""
    probe = session.device(target)
    try:
        probe.open()
        probe.get_facts()
    except Exception as exc:  # noqa: BLE001
        return f"a new management session FAILED ({type(exc).__name__}: {session.clean(exc)})"
    finally:
        _close(probe)
    return ""


def _open(device, target: Target, session: DeviceSession) -> DeviceResult | None:
    try:
        device.open()
    except Exception as exc:  # noqa: BLE001 - unreachable, refused, bad credentials: all per device
        # a driver's own ConnectionException says what went wrong; anything else (a proxy or a web
        # server answering NX-API's port with something that is not JSON) needs its type to make sense
        detail = session.clean(exc) if isinstance(exc, ConnectionException) else f"{type(exc).__name__}: {session.clean(exc)}"
        return DeviceResult(target, Outcome.failed, message=f"cannot connect to {target.host}: {detail}")
    return None


def _candidate(device, target: Target, session: DeviceSession) -> DeviceResult:
    """Load the build's config (secrets filled, in memory) as a replace or merge candidate and
    diff it (the caller discards it)."""
    try:
        config = filled_candidate(target, session.secrets)
    except (OSError, ValueError, KeyError) as exc:
        return DeviceResult(target, Outcome.failed, message=f"cannot prepare the candidate: {type(exc).__name__}")
    try:
        if session.options.merge:
            device.load_merge_candidate(config=config)
        else:
            device.load_replace_candidate(config=config)
    except Exception as exc:  # noqa: BLE001
        return DeviceResult(target, Outcome.failed, message=f"the device rejected the candidate: {session.clean(exc)}")
    finally:
        del config  # the filled text lives no longer than needed
    try:
        diff = device.compare_config() or ""
    except Exception as exc:  # noqa: BLE001
        return DeviceResult(target, Outcome.failed, message=f"compare_config failed: {session.clean(exc)}")
    outcome = Outcome.would_change if diff.strip() else Outcome.unchanged
    return DeviceResult(target, outcome, diff=session.clean(diff))


def _established(device, target: Target) -> set[str]:
    """The declared neighbors Established now; empty when the device cannot say."""
    try:
        return _up_peers(device.get_bgp_neighbors()) & set(target.expected_peers)
    except Exception:  # noqa: BLE001 - only used to judge a rollback, never to pass a commit
        return set()


def _wait_established(device, target: Target, options: RolloutOptions, expected: set[str]) -> tuple[bool, str]:
    """Poll get_bgp_neighbors until every expected neighbor is Established or the timeout."""
    if not expected:
        return True, "no BGP neighbors declared; nothing to verify"
    deadline = time.monotonic() + options.verify_timeout
    up: set[str] = set()
    error = ""
    while True:
        try:
            up = _up_peers(device.get_bgp_neighbors()) & expected
            error = ""
        except Exception as exc:  # noqa: BLE001 - a device busy applying its config may not answer yet
            error = f"get_bgp_neighbors: {type(exc).__name__}"
        if up == expected:
            return True, f"{len(expected)}/{len(expected)} BGP neighbors Established"
        if time.monotonic() >= deadline:
            break
        time.sleep(options.poll_interval)
    down = sorted(expected - up)
    listed = ", ".join(down[:4]) + (f" and {len(down) - 4} more" if len(down) > 4 else "")
    detail = f"{len(up)}/{len(expected)} BGP neighbors Established after {options.verify_timeout:g} s; not up: {listed}"
    return False, detail + (f" ({error})" if error else "")


def _up_peers(neighbors: dict) -> set[str]:
    """Addresses of Established peers across every VRF of a NAPALM get_bgp_neighbors result."""
    return {address for vrf in (neighbors or {}).values() for address, peer in (vrf.get("peers") or {}).items() if peer.get("is_up")}


def _discard(device) -> None:
    with suppress(Exception):
        device.discard_config()


def _close(device) -> None:
    with suppress(Exception):
        device.close()
