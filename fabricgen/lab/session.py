"""The lab commands as functions: up, verify, fail, restore, down and run, each returning a report."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.basics.errors import LabError, Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.lab import management, runtime
from fabricgen.lab.plan import LabPlan
from fabricgen.lab.state import LabFailure, LabState, management_directory, running_lab
from fabricgen.lab.verify import Verification, verify, wait_converged


@dataclass
class ManagementReport:
    """What `up --management` started and wrote: the endpoints (switch -> port on `host`), the
    switches refused one, and the files a push or verify against the lab reads."""

    host: str
    username: str
    endpoints: dict[str, int]
    refused: list[str]
    inventory: Path
    known_hosts: Path
    password_file: Path

    @classmethod
    def of(cls, state: LabState, plan: LabPlan) -> ManagementReport:
        directory = management_directory(state.lab_id)
        refused = sorted(set(plan.switches) - {e.device for e in state.endpoints}, key=natural_key)
        return cls(
            management.HOST,
            management.USERNAME,
            {e.device: e.port for e in state.endpoints},
            refused,
            directory / management.INVENTORY_FILE,
            directory / management.KNOWN_HOSTS_FILE,
            directory / management.PASSWORD_FILE,
        )


@dataclass
class UpReport:
    plan: LabPlan
    seconds: float
    converged: bool
    convergence_seconds: float | None
    frr_daemons: int
    frr_rss_mib: float
    notes: list[str]
    keys_given: list[str] = field(default_factory=list)  # secret names filled from the environment or the secrets file
    keys_generated: list[str] = field(default_factory=list)  # secret names the lab made a random value up for
    keys_dir: str = ""
    lldpd_processes: int = 0  # two per namespace: lldpd runs privilege-separated (lldpd -vv: "Privilege separation: enabled")
    lldpd_rss_mib: float = 0.0
    management: ManagementReport | None = None  # up --management


@dataclass
class FailureReport:
    action: str  # "fail" | "restore"
    what: str
    converged: bool
    convergence_seconds: float | None
    bfd_detect_ms: int | None
    verification: Verification | None = None


@dataclass
class RunReport:
    up: UpReport
    rounds: list[tuple[str, Verification, FailureReport | None]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(v.passed for _, v, _ in self.rounds) and all(f is None or f.converged for _, _, f in self.rounds)


Progress = Callable[[str], None]  # hears the name of each step as it starts (the command's progress)


def _silent(_step: str) -> None:
    pass


def up(
    build_dir: Path,
    network: str = "backend",
    timeout: float = 120.0,
    secrets_file: Path | None = None,
    progress: Progress = _silent,
    with_management: bool = False,
) -> UpReport:
    progress("boot: namespaces, links, FRR" + (", management endpoints" if with_management else ""))
    state, plan = runtime.lab_up(build_dir, network, secrets_file, with_management)
    progress("convergence")
    converged, seconds, _, _ = wait_converged(plan, state, state.loaded_at, timeout) if timeout > 0 else (False, None, None, 0)
    memory = process_memory(state)
    frr, lldpd = memory.get("frr", (0, 0.0)), memory.get("lldpd", (0, 0.0))
    return UpReport(
        plan,
        state.up_seconds,
        converged,
        seconds,
        frr[0],
        frr[1],
        state.notes,
        state.keys_given,
        state.keys_generated,
        str(state.keys_dir),
        lldpd[0],
        lldpd[1],
        ManagementReport.of(state, plan) if state.management else None,
    )


def process_memory(state: runtime.LabState) -> dict[str, tuple[int, float]]:
    """ "frr" and "lldpd" (and "other") -> how many processes of it run in the lab's namespaces and
    their resident memory (MiB)."""
    pids = [pid for pids in runtime.parallel(runtime.namespace_pids, state.namespaces) for pid in pids]
    totals: dict[str, list] = {}
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        name = fields.get("Name", "").strip()
        kind = "frr" if name in runtime.DAEMONS else "lldpd" if name == "lldpd" else "other"
        total = totals.setdefault(kind, [0, 0])
        total[0] += 1
        total[1] += int(fields.get("VmRSS", "0 kB").split()[0])
    return {kind: (count, kib / 1024) for kind, (count, kib) in totals.items()}


def check(build_dir: Path, timeout: float = 60.0, progress: Progress = _silent) -> Verification:
    state, plan = running_lab(build_dir)
    since = max(state.loaded_at, *(f.at for f in state.failures)) if state.failures else state.loaded_at
    return verify(plan, state, timeout, since, progress)


def parse_link(plan: LabPlan, text: str, silent: bool = False) -> LabFailure:
    """DEV:PORT (the build's port name or the lab's kernel name) -> the failure of its cable."""
    device, _, port = text.partition(":")
    if not port:
        raise LabError(Problem(f"--link {text!r} is not DEV:PORT", hint="e.g. --link be-su01-leaf1:Ethernet1/33"))
    _require_device(plan, device)
    found = plan.port(device, port)
    if found is None:
        ports = ", ".join(p.port for p in plan.ports_of(device)[:6])
        raise LabError(Problem(f"{device} has no cabled port {port!r} in the lab", hint=f"its ports are e.g. {ports}"))
    link, _ = found
    return LabFailure(kind="link", cable=link.cable, how="silent" if silent else "down")


def parse_device(plan: LabPlan, device: str) -> LabFailure:
    _require_device(plan, device)
    return LabFailure(kind="device", device=device)


def label(plan: LabPlan, failure: LabFailure, how: bool = True) -> str:
    """What a failure is (and `how` a cable failed), for reports: from the plan, never from the
    lab's state file."""
    if failure.device is not None:
        return f"{failure.device} (all its links, its FRR stopped)"
    link = next(link for link in plan.links if link.cable == failure.cable)
    what = f"{link.a.device} {link.a.port} <-> {link.b.device} {link.b.port} ({link.cable})"
    if not how:
        return what
    return f"{what}: {'frames dropped, carrier up' if failure.how == 'silent' else 'both ends down'}"


def _require_device(plan: LabPlan, device: str) -> None:
    if device not in plan.switches and device not in plan.nodes:
        raise LabError(Problem(f"no device {device!r} in the lab", hint=f"devices are e.g. {', '.join(sorted(plan.switches)[:4])}"))


def fail(build_dir: Path, link: str | None, device: str | None, silent: bool = False, timeout: float = 60.0) -> FailureReport:
    state, plan = running_lab(build_dir)
    if (link is None) == (device is None):
        raise LabError(Problem("give exactly one of --link DEV:PORT or --device DEV"))
    if silent and link is None:
        raise LabError(Problem("--silent applies to --link only", hint="a failed device takes its links down"))
    failure = parse_link(plan, link, silent) if link else parse_device(plan, device)  # type: ignore[arg-type]
    if any(f.same(failure) for f in state.failures):
        raise LabError(Problem(f"{label(plan, failure)} is already failed", hint="fabricgen lab restore first"))
    failure.at = time.time()
    runtime.apply_failure(plan, state, failure)
    converged, seconds, _, _ = wait_converged(plan, state, failure.at, timeout, _touched(plan, failure))
    detect = min((s.bfd_detect_ms for s in plan.switches.values() if s.bfd_detect_ms), default=None)
    return FailureReport("fail", label(plan, failure), converged, seconds, detect)


def restore(build_dir: Path, link: str | None = None, device: str | None = None, timeout: float = 120.0) -> list[FailureReport]:
    state, plan = running_lab(build_dir)
    chosen = list(state.failures)
    if link or device:
        wanted = parse_link(plan, link) if link else parse_device(plan, device)  # type: ignore[arg-type]
        chosen = [f for f in state.failures if f.same(wanted)]
        if not chosen:
            raise LabError(Problem(f"{label(plan, wanted, how=False)} is not failed", hint="fabricgen lab restore with no option restores every failure"))
    reports = []
    for failure in chosen:
        started = time.time()
        runtime.undo_failure(plan, state, failure)
        converged, seconds, _, _ = wait_converged(plan, state, started, timeout, _touched(plan, failure))
        reports.append(FailureReport("restore", label(plan, failure), converged, seconds, None))
    return reports


def _touched(plan: LabPlan, failure: LabFailure) -> set[str]:
    """The switches whose sessions a failure changes: both ends of its cables."""
    if failure.device is not None:
        links = plan.links_of(failure.device)
    else:
        links = [link for link in plan.links if link.cable == failure.cable]
    return {end.device for link in links for end in (link.a, link.b)}


def down(build_dir: Path) -> bool:
    return runtime.lab_down(build_dir) is not None


def failure_rounds(plan: LabPlan) -> list[tuple[str, str | None, str | None, bool]]:
    """(name, --link, --device, silent) of each failure `run` applies: a silent uplink failure on the
    first leaf that has an uplink, the first spine down, the first core down; a round the fabric has
    nothing for (a rail-only fabric with no spine: no uplink, no spine) is left out."""
    rounds: list[tuple[str, str | None, str | None, bool]] = []
    leaf = next((n for n in sorted(plan.uplinks, key=natural_key) if plan.switches[n].role == "leaf" and plan.uplinks[n]), None)
    if leaf is not None:
        uplink = plan.uplinks[leaf][0].end(leaf).port
        rounds.append((f"{leaf}:{uplink} failed silently", f"{leaf}:{uplink}", None, True))
    for role in ("spine", "core"):
        first = min((n for n, s in plan.switches.items() if s.role == role), key=natural_key, default=None)
        if first is not None:
            rounds.append((f"{first} down", None, first, False))
    return rounds


def _prefixed(progress: Progress, prefix: str) -> Progress:
    """`progress`, hearing each step as `prefix: step`."""
    return lambda step: progress(f"{prefix}: {step}")


def run(
    build_dir: Path,
    network: str = "backend",
    timeout: float = 120.0,
    secrets_file: Path | None = None,
    progress: Progress = _silent,
    with_management: bool = False,
) -> RunReport:
    """up, verify, a failure round (a silent leaf uplink failure that only BFD can see, then a
    spine down, and a core down in a 3-tier fabric), each verified and restored, then down, even
    when something fails on the way. `progress` hears each step as it starts."""
    report = RunReport(
        up(build_dir, network, timeout, secrets_file, _prefixed(progress, "up"), with_management)
    )  # refuses a lab that is already up, before the try
    try:
        report.rounds.append(("after up", check(build_dir, timeout, _prefixed(progress, "verify")), None))
        for name, link, device, silent in failure_rounds(report.up.plan):
            progress(f"fail {name}")
            failure = fail(build_dir, link, device, silent, timeout)
            report.rounds.append((name, check(build_dir, timeout, _prefixed(progress, f"{name}: verify")), failure))
            progress(f"{name}: restore")
            restored = restore(build_dir, timeout=timeout)[0]
            report.rounds.append((f"{name}, restored", check(build_dir, timeout, _prefixed(progress, f"{name}, restored: verify")), restored))
    finally:
        progress("down")
        down(build_dir)
    return report
