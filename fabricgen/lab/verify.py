"""What `fabricgen lab verify` checks against the build: sessions, ECMP width, LLDP, traffic, EVPN.

Every expectation comes from the build (the IP plan's routed cables, the cabling plan's uplinks,
the GPU nodes' addresses) and from the failures the lab has applied, never from what the running
daemons report about themselves.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricgen.lab import lldp
from fabricgen.lab.plan import LabPlan, Probe, Session
from fabricgen.lab.routing import ecmp_widths
from fabricgen.lab.runtime import LabState, in_namespace, parallel, run, vtysh

POLL_SECONDS = 0.05
# A full look (vtysh and ip in every switch's namespace) costs about 25 ms of CPU per switch. Timing
# a failure (a focus) keeps POLL_SECONDS; a full wait (up, verify) waits a tenth of the time already
# waited between looks, at most POLL_MAX_SECONDS: a first convergence of 8 s (BGP's connect-retry)
# takes about half the looks, each reading within some 0.5 s of the moment it converged.
POLL_SHARE = 0.1
POLL_MAX_SECONDS = 0.5


@dataclass
class Check:
    name: str
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)
    passed: bool | None = True  # None: not checked
    summary: str = ""
    seconds: float = 0.0
    row_ok: list[bool] = field(default_factory=list)

    def add(self, row: tuple, ok: bool = True) -> None:
        self.rows.append(row)
        self.row_ok.append(ok)
        if not ok:
            self.passed = False


@dataclass
class Verification:
    checks: list[Check]
    converged: bool
    convergence_seconds: float | None  # since the last config load or failure; None: converged at the first look
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.converged and all(check.passed is not False for check in self.checks)


@dataclass
class Failed:
    """What the lab's applied failures take away."""

    cables: set[str]
    devices: set[str]
    silent: set[str] = field(default_factory=set)  # the cables failed silently (carrier up, frames dropped)

    @classmethod
    def of(cls, plan: LabPlan, state: LabState) -> Failed:
        cables = {f.cable for f in state.failures if f.cable is not None}
        silent = {f.cable for f in state.failures if f.cable is not None and f.how == "silent"}
        devices = {f.device for f in state.failures if f.device is not None}
        cables |= {link.cable for device in devices for link in plan.links_of(device)}
        return cls(cables, devices, silent)


@dataclass
class Snapshot:
    """One look at every live switch: BGP and BFD peers' states, and the main table's ECMP widths."""

    bgp: dict[str, dict[str, str]]  # device -> peer address -> state
    bfd: dict[str, dict[str, str]]
    widths: dict[str, dict[str, int]]  # device -> prefix -> next hops


def expected_sessions(plan: LabPlan, failed: Failed) -> list[tuple[Session, bool]]:
    """Each session the build says must exist on a live switch, and whether it must be up."""
    return [(s, s.cable not in failed.cables) for s in plan.sessions if s.device not in failed.devices]


def expected_widths(plan: LabPlan, failed: Failed) -> dict[str, dict[str, int]]:
    """device -> remote leaf prefix -> next hops its main table must hold: what eBGP converges to
    over the live links and switches (`fabricgen.lab.routing`), capped by the switch's
    maximum-paths."""
    widths: dict[str, dict[str, int]] = {}
    for name, by_origin in ecmp_widths(plan, failed.cables, failed.devices).items():
        widths[name] = {prefix: width for origin, width in by_origin.items() for prefix in plan.host_blocks[origin]}
    return widths


def snapshot(plan: LabPlan, failed: Failed) -> Snapshot:
    live = [name for name in plan.switches if name not in failed.devices]

    def look(name: str) -> tuple[str, dict, dict, dict]:
        ns = plan.namespace(name)
        peers = _bgp_states(ns)
        bfd = {}
        if plan.switches[name].bfd_detect_ms:
            bfd = {p["peer"]: p["status"] for p in json.loads(vtysh(ns, "show bfd peers json") or "[]")}
        return name, peers, bfd, fib_widths(ns)

    looks = parallel(look, live)
    return Snapshot({n: p for n, p, _, _ in looks}, {n: b for n, _, b, _ in looks}, {n: w for n, _, _, w in looks})


def fib_widths(namespace: str) -> dict[str, int]:
    """prefix -> usable next hops of each BGP route in the namespace's main table."""
    widths = {}
    for route in json.loads(run(["ip", "-n", namespace, "-j", "route", "show", "proto", "bgp"]).stdout or "[]"):
        destination = route["dst"] if "/" in route["dst"] else f"{route['dst']}/32"
        hops = route.get("nexthops", [route])
        widths[destination] = sum(1 for hop in hops if not {"dead", "linkdown"} & set(hop.get("flags", ())))
    return widths


@dataclass
class Expected:
    """The control plane the build and the applied failures call for, computed once per wait."""

    sessions: list[tuple[Session, bool]]
    widths: dict[str, dict[str, int]]
    bfd: list[Session]  # the live sessions whose BFD must be up

    @classmethod
    def of(cls, plan: LabPlan, failed: Failed) -> Expected:
        sessions = expected_sessions(plan, failed)
        bfd = [s for s, up in sessions if up and plan.switches[s.device].bfd_detect_ms]
        return cls(sessions, expected_widths(plan, failed), bfd)

    def sessions_match(self, bgp: dict[str, dict[str, str]]) -> bool:
        """Only the switches in `bgp` are compared (a fast look reads a few)."""
        return all((bgp[s.device].get(s.peer_address) == "Established") == up for s, up in self.sessions if s.device in bgp)

    def widths_match(self, widths: dict[str, dict[str, int]]) -> bool:
        return all(all(widths[device].get(prefix, 0) == width for prefix, width in prefixes.items()) for device, prefixes in self.widths.items())

    def bfd_match(self, bfd: dict[str, dict[str, str]]) -> bool:
        return all(bfd.get(s.device, {}).get(s.peer_address) == "up" for s in self.bfd)

    def matches(self, snap: Snapshot) -> bool:
        # BFD too: after a restore BGP can be Established a moment before BFD is up again
        return self.sessions_match(snap.bgp) and self.widths_match(snap.widths) and self.bfd_match(snap.bfd)


def wait_converged(plan: LabPlan, state: LabState, since: float, timeout: float, focus: set[str] | None = None) -> tuple[bool, float | None, Snapshot, int]:
    """Poll until every BGP and BFD session and ECMP width is as the build (and the applied failures) say.
    Returns (converged, seconds from `since` to the first matching look, the last full look, how
    many looks it took). With `focus`, each look reads every live switch's FIB but only the focus
    switches' BGP sessions (a fast look, for timing a failure); a full look confirms the end."""
    failed = Failed.of(plan, state)
    expected = Expected.of(plan, failed)
    live = [name for name in plan.switches if name not in failed.devices]
    watched = [name for name in live if focus is None or name in focus]
    started = time.monotonic()
    deadline = started + timeout
    looks = 0
    while True:
        looks += 1
        widths = dict(zip(live, parallel(lambda n: fib_widths(plan.namespace(n)), live), strict=True))
        bgp = dict(zip(watched, parallel(lambda n: _bgp_states(plan.namespace(n)), watched), strict=True))
        seen = time.time()
        if expected.widths_match(widths) and expected.sessions_match(bgp):
            full = snapshot(plan, failed)
            if expected.matches(full):
                return True, seen - since, full, looks
        now = time.monotonic()
        if now > deadline:
            return False, None, snapshot(plan, failed), looks
        pause = POLL_SECONDS if focus is not None else min(max(POLL_SECONDS, POLL_SHARE * (now - started)), POLL_MAX_SECONDS)
        time.sleep(min(pause, deadline - now + 0.01))


def _bgp_states(namespace: str) -> dict[str, str]:
    summary = json.loads(vtysh(namespace, "show bgp summary json") or "{}")
    return {address: p.get("state", "?") for address, p in summary.get("ipv4Unicast", {}).get("peers", {}).items()}


def verify(plan: LabPlan, state: LabState, timeout: float = 60.0, since: float | None = None, progress: Callable[[str], None] | None = None) -> Verification:
    """Every check of the lab against its plan; `progress` hears the name of each step as it starts."""
    say = progress or (lambda _step: None)
    failed = Failed.of(plan, state)
    started = time.perf_counter()
    say("convergence")
    converged, seconds, snap, looks = wait_converged(plan, state, since if since is not None else state.loaded_at, timeout)
    if looks == 1:
        seconds = None  # already converged when verify first looked: nothing to time
    waited = time.perf_counter() - started
    say("BGP, BFD, ECMP")
    checks = [bgp_check(plan, failed, snap, authenticated(plan, failed)), bfd_check(plan, failed, snap), ecmp_check(plan, failed, snap)]
    checks[0].seconds = waited
    say("LLDP")
    checks.append(_timed(lldp_check, plan, failed))
    if any(s.vtep for s in plan.switches.values()):
        say("EVPN")
        checks.append(_timed(evpn_check, plan, failed))
    say("traffic")
    checks.append(_timed(traffic_check, plan, failed))
    return Verification(checks, converged, seconds, list(state.notes))


def lldp_check(plan: LabPlan, failed: Failed, timeout: float = lldp.SETTLE_SECONDS) -> Check:
    """Every cable end of a live device sees, over LLDP, the other end's device (system name) and
    port (port ID) and nothing else; an end of a failed cable sees nobody. A silently failed cable
    is not checked: its frames are dropped at the ingress hook, after lldpd's packet socket has
    seen them (Linux delivers to packet taps before the netdev ingress hook)."""
    check = Check("LLDP", ("device", "cable ends", "as planned", "wrong or missing"))
    ends = lldp.wait_for_lldp(plan, failed.cables, failed.silent, failed.devices, timeout)
    by_device: dict[str, list[lldp.EndLook]] = defaultdict(list)
    for end in ends:
        by_device[end.device].append(end)
    for device, looks in by_device.items():
        wrong = [_lldp_problem(end) for end in looks if not end.ok]
        check.add((device, len(looks), sum(1 for end in looks if end.ok and end.checked), "; ".join(wrong)[:300] or "-"), not wrong)
    planned = [end for end in ends if end.checked and end.expected]
    right = sum(1 for end in planned if end.ok)
    check.summary = f"{right}/{len(planned)} cable ends see the planned neighbour"
    dark = [end for end in ends if end.checked and not end.expected]
    if dark:
        check.summary += f"; {sum(1 for end in dark if end.ok)}/{len(dark)} ends of failed cables see none, as expected"
    if len(ends) > len(planned) + len(dark):
        check.summary += f"; {len(ends) - len(planned) - len(dark)} ends of silently failed cables not checked"
    return check


def _lldp_problem(end: lldp.EndLook) -> str:
    seen = ", ".join(f"{system or '?'} {port or '?'}" for system, port in end.seen) or "nothing"
    want = f"{end.expected[0]} {end.expected[1]}" if end.expected else "nothing"
    return f"{end.port} ({end.cable}): sees {seen}, planned {want}"


def _timed(make, plan: LabPlan, failed: Failed) -> Check:
    started = time.perf_counter()
    check = make(plan, failed)
    check.seconds = time.perf_counter() - started
    return check


def authenticated(plan: LabPlan, failed: Failed) -> dict[str, set[str]]:
    """live switch -> the peers whose session FRR runs with a TCP-MD5 key. FRR 8.4's `show bgp
    neighbors json` sets "authenticationEnabled" when the peer has a password (bgpd/bgp_vty.c,
    bgp_show_peer); the key itself is never shown."""
    live = [name for name in plan.switches if name not in failed.devices]

    def look(name: str) -> set[str]:
        neighbors = json.loads(vtysh(plan.namespace(name), "show bgp neighbors json") or "{}")
        return {address for address, peer in neighbors.items() if isinstance(peer, dict) and peer.get("authenticationEnabled")}

    return dict(zip(live, parallel(look, live), strict=True))


def bgp_check(plan: LabPlan, failed: Failed, snap: Snapshot, keyed: dict[str, set[str]] | None = None) -> Check:
    """Every session the build declares is Established (or down, when a failure took it), no other
    is, and each one the build gives a TCP-MD5 key runs with one (`keyed`, from `authenticated`)."""
    keyed = keyed or {}
    check = Check("BGP sessions", ("device", "expected up", "established", "with a TCP-MD5 key", "missing or down", "not in the build"))
    expected: dict[str, list[tuple[Session, bool]]] = defaultdict(list)
    for session, up in expected_sessions(plan, failed):
        expected[session.device].append((session, up))
    total = established = lost = with_key = keyed_total = 0
    for device in sorted(snap.bgp):
        peers = snap.bgp[device]
        want = expected.get(device, [])
        missing = [f"{s.peer_device} {s.peer_address}" for s, up in want if up and peers.get(s.peer_address) != "Established"]
        up_keyed = [s for s, up in want if up and s.keyed and peers.get(s.peer_address) == "Established"]
        unkeyed = [f"{s.peer_device} {s.peer_address} (up without its key)" for s in up_keyed if s.peer_address not in keyed.get(device, ())]
        lingering = [f"{s.peer_device} {s.peer_address} (failed, still up)" for s, up in want if not up and peers.get(s.peer_address) == "Established"]
        extra = sorted(set(peers) - {s.peer_address for s, _ in want})
        up_count = sum(1 for s, up in want if up and peers.get(s.peer_address) == "Established")
        total += sum(1 for _, up in want if up)
        established += up_count
        lost += sum(1 for _, up in want if not up)
        keyed_total += sum(1 for s, up in want if up and s.keyed)
        with_key += len(up_keyed) - len(unkeyed)
        row = (
            device,
            sum(1 for _, up in want if up),
            up_count,
            len(up_keyed) - len(unkeyed),
            ", ".join(missing + lingering + unkeyed)[:200] or "-",
            ", ".join(extra)[:200] or "-",
        )
        check.add(row, not (missing or lingering or extra or unkeyed))
    check.summary = f"{established}/{total} expected sessions Established" + (f"; {lost} lost to the applied failures, as expected" if lost else "")
    if keyed_total:
        check.summary += f"; {with_key}/{keyed_total} with the TCP-MD5 key the build gives them"
    return check


def bfd_check(plan: LabPlan, failed: Failed, snap: Snapshot) -> Check:
    check = Check("BFD sessions", ("device", "expected up", "up", "missing or down"))
    with_bfd = {name for name, s in plan.switches.items() if s.bfd_detect_ms}
    if not with_bfd:
        check.passed, check.summary = None, "not checked: the build configures no BFD"
        return check
    total = up_total = 0
    expected: dict[str, list[tuple[Session, bool]]] = defaultdict(list)
    for session, up in expected_sessions(plan, failed):
        if session.device in with_bfd:
            expected[session.device].append((session, up))
    for device in sorted(expected):
        peers = snap.bfd.get(device, {})
        want = [s for s, up in expected[device] if up]
        missing = [f"{s.peer_device} {s.peer_address}" for s in want if peers.get(s.peer_address) != "up"]
        total += len(want)
        up_total += len(want) - len(missing)
        check.add((device, len(want), len(want) - len(missing), ", ".join(missing)[:200] or "-"), not missing)
    detect = sorted({s.bfd_detect_ms for s in plan.switches.values() if s.bfd_detect_ms})
    check.summary = f"{up_total}/{total} expected BFD sessions up; detection time {'/'.join(map(str, detect))} ms"
    return check


def ecmp_check(plan: LabPlan, failed: Failed, snap: Snapshot) -> Check:
    check = Check("ECMP width", ("device", "role", "remote prefixes", "expected next hops", "wrong"))
    what = "remote VTEPs" if any(s.vtep for s in plan.switches.values()) else "remote leaves' server prefixes"
    wrong_total = prefixes_total = 0
    expected = expected_widths(plan, failed)
    for device, prefixes in sorted(expected.items()):
        table = snap.widths[device]
        wrong = [f"{p}: {table.get(p, 0)} (want {w})" for p, w in sorted(prefixes.items()) if table.get(p, 0) != w]
        widths = sorted(set(prefixes.values()))
        wrong_total += len(wrong)
        prefixes_total += len(prefixes)
        check.add((device, plan.switches[device].role, len(prefixes), "/".join(map(str, widths)) or "-", "; ".join(wrong)[:200] or "-"), not wrong)
    check.summary = f"{prefixes_total - wrong_total}/{prefixes_total} routes to {what} at the planned width"
    planes = plane_widths(plan, failed, snap, expected)
    if planes:
        check.summary += "; " + "; ".join(planes)
    return check


def plane_widths(plan: LabPlan, failed: Failed, snap: Snapshot, expected: dict[str, dict[str, int]]) -> list[str]:
    """Per plane of a fabric with several: the widths its leaves hold to each other (read from
    their tables), and how many routes its leaves hold to other planes' leaves (none, unless a
    fabric link joins them) beside the `expected` count."""
    leaves = {name: s for name, s in plan.switches.items() if s.role == "leaf" and name not in failed.devices}
    planes = sorted({s.plane for s in leaves.values() if s.plane is not None})
    if len(planes) < 2:
        return []
    inside: dict[int, set[int]] = defaultdict(set)
    across: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # plane -> [routes seen, routes expected]
    for name, leaf in leaves.items():
        for origin in plan.host_blocks:
            if origin == name or origin not in plan.switches:
                continue
            prefixes = plan.host_blocks[origin]
            if plan.switches[origin].plane == leaf.plane:
                inside[leaf.plane].update(snap.widths.get(name, {}).get(p, 0) for p in prefixes)  # type: ignore[index]
            else:
                across[leaf.plane][0] += sum(1 for p in prefixes if snap.widths.get(name, {}).get(p, 0) > 0)  # type: ignore[index]
                across[leaf.plane][1] += sum(1 for p in prefixes if expected[name].get(p, 0) > 0)  # type: ignore[index]
    return [
        f"plane {plane}: width {'/'.join(map(str, sorted(inside[plane]))) or '-'} between its leaves, "
        f"{across[plane][0]} routes to other planes ({across[plane][1]} planned)"
        for plane in planes
    ]


def evpn_check(plan: LabPlan, failed: Failed) -> Check:
    """Type-3 (inclusive multicast) routes: every leaf of a segment sees every other leaf of it as
    a remote VTEP of that VNI. Type-2 (MAC/IP) routes: after traffic, the remote hosts' MACs."""
    check = Check("EVPN", ("leaf", "VNI", "remote VTEPs (type-3)", "expected", "remote MACs (type-2)"))
    vteps_of_vni: dict[int, set[str]] = defaultdict(set)
    for name, switch in plan.switches.items():
        if name in failed.devices:
            continue
        for segment in switch.segments:
            if segment.vni is not None and switch.vtep:
                vteps_of_vni[segment.vni].add(switch.vtep)

    def look(name: str) -> list[tuple]:
        switch = plan.switches[name]
        ns = plan.namespace(name)
        vnis = json.loads(vtysh(ns, "show evpn vni detail json") or "[]")
        by_vni = {entry["vni"]: entry for entry in (vnis if isinstance(vnis, list) else vnis.values())}
        macs = json.loads(vtysh(ns, "show evpn mac vni all json") or "{}")
        rows = []
        for segment in switch.segments:
            if segment.vni is None:
                continue
            entry = by_vni.get(segment.vni, {})
            # FRR 8.4's detail JSON lists the remote VTEPs under "numRemoteVteps"; later ones under "remoteVteps"
            listed = entry.get("remoteVteps") or entry.get("numRemoteVteps")
            remote = {r["ip"] if isinstance(r, dict) else r for r in (listed if isinstance(listed, list) else [])}
            want = vteps_of_vni[segment.vni] - {switch.vtep}
            remote_macs = sum(1 for m in macs.get(str(segment.vni), {}).get("macs", {}).values() if m.get("type") == "remote")
            rows.append((name, segment.vni, len(remote & want), len(want), remote_macs, remote == want))
        return rows

    leaves = [n for n, s in plan.switches.items() if s.vtep and n not in failed.devices]
    for rows in parallel(look, leaves):
        for name, vni, found, want, macs, ok in rows:
            check.add((name, vni, found, want, macs), ok)
    vrf_note = "tenant VRFs (L3 VNI, type-5) not checked: the lab does not build VRFs"
    check.summary = f"{sum(r[2] for r in check.rows)}/{sum(r[3] for r in check.rows)} remote VTEPs seen per VNI; {vrf_note}"
    return check


def traffic_check(plan: LabPlan, failed: Failed) -> Check:
    check = Check("Traffic", ("kind", "probes", "reached", "path as planned", "not checked", "first failures"))
    results = parallel(lambda p: _probe(plan, failed, p), plan.probes)
    by_kind: dict[str, list[tuple[Probe, str]]] = defaultdict(list)
    for probe, outcome in zip(plan.probes, results, strict=True):
        by_kind[probe.kind].append((probe, outcome))
    reached_total = checked_total = apart_total = apart_ok = 0
    for kind, outcomes in by_kind.items():
        checked = [(p, o) for p, o in outcomes if not o.startswith("not checked")]
        # a probe between separate fabrics "reaches" when it arrives, which is its failure
        reached = [p for p, o in checked if (o == "ok" and p.reach) or o.startswith(("wrong path", "arrived"))]
        good_path = [p for p, o in checked if o == "ok"]
        bad = [f"{p.source} {p.source_nic} -> {p.target} {p.target_nic}: {o}" for p, o in checked if o != "ok"]
        reasons = sorted({o.removeprefix("not checked: ") for _, o in outcomes if o.startswith("not checked")})
        reached_total += sum(1 for p in reached if p.reach)
        checked_total += sum(1 for p, _ in checked if p.reach)
        apart_total += sum(1 for p, _ in checked if not p.reach)
        apart_ok += sum(1 for p, o in checked if not p.reach and o == "ok")
        skipped = f"{len(outcomes) - len(checked)} ({'; '.join(reasons)})" if reasons else "0"
        check.add((kind, len(checked), len(reached), len(good_path), skipped, "; ".join(bad[:3]) or "-"), not bad)
    check.summary = f"{reached_total}/{checked_total} probes reached their target (ping, then traceroute for the path)"
    if apart_total:
        check.summary += f"; {apart_ok}/{apart_total} between leaves no fabric link joins (planes, rail-only rails) got no answer, as planned"
    if checked_total + apart_total == 0:
        check.passed = None  # nothing the lab could carry: not a pass
    return check


def _probe(plan: LabPlan, failed: Failed, probe: Probe) -> str:
    if probe.unchecked:
        return f"not checked: {probe.unchecked}"
    source_nic = next(n for n in plan.nodes[probe.source].nics if n.port == probe.source_nic)
    target_nic = next(n for n in plan.nodes[probe.target].nics if n.port == probe.target_nic)
    for nic, node in ((source_nic, probe.source), (target_nic, probe.target)):
        cable = plan.port(node, nic.port)[0].cable  # type: ignore[index]
        if nic.leaf in failed.devices or cable in failed.cables:
            return "not checked: a NIC's own leaf or cable is failed (one NIC per rail)"
    ns = plan.namespace(probe.source)
    if not probe.reach:
        # no fabric path: the source's leaf must drop it (two tries, so one lost answer proves nothing)
        ping = in_namespace(ns, ["ping", "-n", "-q", "-c", "2", "-i", "0.2", "-W", "1", "-I", probe.source_address, probe.target_address], check=False)
        return "ok" if ping.returncode != 0 else "arrived, though no fabric link joins the two leaves"
    ping = in_namespace(ns, ["ping", "-n", "-q", "-c", "1", "-W", "2", "-I", probe.source_address, probe.target_address], check=False)
    if ping.returncode != 0:
        return "unreachable"
    for _attempt in range(2):  # once more when no hop answered at all (a burst lost to ICMP rate limits)
        trace = in_namespace(ns, ["traceroute", "-n", "-q", "2", "-w", "1", "-m", "8", "-s", probe.source_address, probe.target_address], check=False)
        # each hop line: its number, then per probe an address and a time, or "*" for no answer
        hops = [next((word for word in line.split()[1:] if word.count(".") == 3), "*") for line in trace.stdout.splitlines()[1:]]
        if set(hops) != {"*"}:
            break
    roles = tuple(_role(plan, plan.address_owner.get(h)) for h in hops)
    if roles != probe.path:
        shown = " > ".join(f"{hop} ({plan.address_owner.get(hop, '?')})" for hop in hops)
        return f"wrong path: {shown}"
    owners = [plan.address_owner.get(h) for h in hops]
    if len(owners) > 1 and owners[0] != source_nic.leaf:
        return f"wrong path: first hop {owners[0]}, not {source_nic.leaf}"
    if owners and owners[-1] != probe.target:
        return f"wrong path: ends at {owners[-1]}"
    return "ok"


def _role(plan: LabPlan, device: str | None) -> str:
    if device is None:
        return "?"
    if device in plan.switches:
        return plan.switches[device].role
    return "node" if device in plan.nodes else "?"
