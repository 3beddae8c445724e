"""The plan against what the devices answered: one `Finding` per thing that differs.

Checks, each a function of (plan, observations) -> findings:
- cabling: LLDP against cabling.csv. An observed link is a pair of ends that LLDP connects (both
  ends agreeing, or the one end that speaks: a GPU node is not polled). Observed links are matched
  against planned cables; what is left is explained as cycles first (two cables that exchanged
  ends are ONE swap, three a rotation), then as wrong, missing and extra cables.
- ports: oper state, speed against the cable's, MTU against the config's, error and discard
  counter deltas, optics present and DOM readings against their thresholds where reported.
- routing: planned BGP sessions Established, unexpected ones (a wrong peer address is paired with
  the planned one it replaces), prefixes received, ECMP widths against the plan's.
- lossless: PFC pause rates per port and priority over the interval, storms, pauses on a priority
  the plan does not make lossless, pauses sent that the peer never counts, watchdog storms, ECN.
- drift: running config against the build's, secrets masked on both sides.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace

import netaddr

from fabricgen.secrets import Secrets
from fabricgen.verify.collect import Observation
from fabricgen.verify.drift import check_drift
from fabricgen.verify.findings import ERROR, INFO, WARNING, Finding
from fabricgen.verify.plan import Cable, End, Plan

FABRIC_SWITCH_ROLES = frozenset({"leaf", "spine", "core", "super-spine"})  # a session to one of them should carry routes
# A PFC pause frame carries at most 65,535 quanta of 512 bit times (IEEE 802.1Qbb; Nokia SR Linux
# QoS guide, "Priority-based Flow Control"): 83.9 us at 400 Gb/s, 335.5 us at 100 Gb/s. At 1,000
# frames/s of maximal pauses a 400G port is held 8.4 % of each second, a 100G port a third: far
# above what a healthy lossless fabric sends outside a burst, well below a stuck receiver's rate.
# fabricgen's judgement, not a vendor number: --storm-threshold changes it.
STORM_FRAMES_PER_SECOND = 1000.0
# A receive power at or below this is no light at all (a dark fibre, a missing or dead optic):
# transceivers report their floor there, typically -40 dBm (0.0001 mW). UNVERIFIED as a universal
# floor; used only where the driver reports no thresholds of its own.
NO_LIGHT_DBM = -30.0
MAX_CYCLE = 8  # cables in one rewiring cycle before it is reported piecewise


@dataclass(frozen=True, slots=True)
class Thresholds:
    storm: float = STORM_FRAMES_PER_SECOND  # PFC frames/s on one port and priority


def compare(plan: Plan, observations: list[Observation], secrets: Secrets | None = None, thresholds: Thresholds | None = None) -> list[Finding]:
    """Every finding, reachability first, then cabling, ports, routing, lossless QoS, drift."""
    by_name = {o.target.name: o for o in observations}
    findings = [Finding("reach", ERROR, o.target.name, "", f"not reached: {o.error}", planned=o.target.host) for o in observations if not o.reached]
    for o in observations:
        for getter, error in sorted(o.errors.items()):
            findings.append(Finding("reach", WARNING, o.target.name, "", f"{getter} failed: {error}"))
    cabling = check_cabling(plan, by_name)
    others = check_ports(plan, by_name) + check_routing(plan, by_name) + check_lossless(plan, by_name, thresholds or Thresholds())
    return findings + cabling + _attributed(plan, cabling, others) + check_drift(plan, by_name, secrets or Secrets())


def _attributed(plan: Plan, cabling: list[Finding], others: list[Finding]) -> list[Finding]:
    """Port, session and pause findings on a port a cabling finding names, marked as following
    from it (a swap takes its two sessions down): each keeps its severity, and says which."""
    cause: dict[Point, str] = {}
    for finding in cabling:
        for entry in finding.detail.get("cables", []) or ([finding.detail] if "cable" in finding.detail else []):
            for end in (entry.get("a"), entry.get("b")):
                if end:
                    head = finding.message.split(":")[0]  # "swap of 2 cables", "missing cable BE-S00002"
                    ids = [c["id"] for c in finding.detail.get("cables", [])]
                    cause[(end["device"], end["port"])] = f"{head} ({', '.join(ids)})" if ids else head
    marked = []
    for finding in others:
        why = cause.get((finding.device, finding.port))
        if why:
            finding = replace(finding, message=f"{finding.message} [follows from: {why}]", detail={**finding.detail, "follows_from": why})
        marked.append(finding)
    return marked


# --- cabling -------------------------------------------------------------------------------------

Point = tuple[str, str]  # (device, port)


def observed_links(plan: Plan, by_name: dict[str, Observation]) -> tuple[dict[Point, set[Point]], dict[Point, set[Point]]]:
    """(links, one-sided): each end -> the ends LLDP connects it to (symmetric); each end -> the
    neighbours it reports that the other end does not confirm.

    A link is observed when both ends' LLDP agree, or when one end reports it and the other does
    not speak LLDP (a GPU node: not polled; a switch whose driver gave no LLDP answer). A neighbour
    reported by one end that the other, speaking, does not confirm is one-sided: kept apart, so it
    never matches a planned cable, but still named in a wrong or extra cable's finding.
    A neighbour is named by its system name (a domain suffix dropped when the short name is a
    device of the build) and its port ID, or its port description when the port ID is not one of
    that device's planned ports."""
    planned_ports = defaultdict(set)
    for device, port in plan.by_end:
        planned_ports[device].add(port)
    halves: dict[Point, set[Point]] = defaultdict(set)
    for name, observation in by_name.items():
        answer = observation.answers.get("get_lldp_neighbors_detail")
        if not isinstance(answer, dict):
            continue
        for port, neighbours in answer.items():
            for neighbour in neighbours or []:
                remote = _remote(neighbour, plan.roles, planned_ports)
                if remote is not None:
                    halves[(name, port)].add(remote)
    speakers = {name for name, o in by_name.items() if isinstance(o.answers.get("get_lldp_neighbors_detail"), dict)}
    links: dict[Point, set[Point]] = defaultdict(set)
    one_sided: dict[Point, set[Point]] = defaultdict(set)
    for here, fars in halves.items():
        for far in fars:
            if far[0] not in speakers or here in halves.get(far, ()):
                links[here].add(far)
                links[far].add(here)
            else:
                one_sided[here].add(far)  # as `here` reported it
    return links, one_sided


def _remote(neighbour: dict, roles: Mapping[str, str], planned_ports: dict[str, set[str]]) -> Point | None:
    system = str(neighbour.get("remote_system_name") or "").strip()
    if not system:
        return None
    if system not in roles and system.split(".")[0] in roles:
        system = system.split(".")[0]
    port = str(neighbour.get("remote_port") or "").strip()
    description = str(neighbour.get("remote_port_description") or "").strip()
    known = planned_ports.get(system, set())
    if port not in known:
        if description in known:
            port = description
        elif port.startswith("Eth") and "Ethernet" + port[3:] in known:
            port = "Ethernet" + port[3:]
    return (system, port or description) if (port or description) else None


def check_cabling(plan: Plan, by_name: dict[str, Observation]) -> list[Finding]:
    spoke = {name for name, o in by_name.items() if isinstance(o.answers.get("get_lldp_neighbors_detail"), dict)}
    links, one_sided = observed_links(plan, by_name)
    key = {cable.id: ((cable.a.device, cable.a.port), (cable.b.device, cable.b.port)) for cable in plan.cables}
    seen_any = {point: links.get(point, set()) | one_sided.get(point, set()) for point in links.keys() | one_sided.keys()}
    unmatched = [c for c in plan.cables if key[c.id][1] not in links.get(key[c.id][0], set()) and _observable(c, spoke)]
    unmatched_ids = {c.id for c in unmatched}
    findings: list[Finding] = []
    explained: set[str] = set()
    for cable in unmatched:
        if cable.id in explained:
            continue
        cycle = _cycle(cable, plan, links, unmatched_ids, explained)
        if cycle:
            explained.update(c.id for c, _ in cycle)
            findings.append(_cycle_finding(cycle))
    covered: set[Point] = set()
    for cable in unmatched:
        if cable.id in explained:
            continue
        ends = key[cable.id]
        found = {end: sorted(seen_any.get(end, set()) - {ends[0], ends[1]}) for end in ends}
        covered.update(ends)
        talker = next((end for end in ends if (ends[1] if end == ends[0] else ends[0]) in one_sided.get(end, set())), None)
        if not any(found.values()) and talker is not None:
            quiet = ends[1] if talker == ends[0] else ends[0]
            findings.append(
                Finding(
                    "cabling",
                    WARNING,
                    quiet[0],
                    quiet[1],
                    f"cable {cable.id}: {_point(talker)} sees {_point(quiet)}, but {_point(quiet)} reports no LLDP neighbour there (LLDP off or broken on that port?)",
                    planned=_cable_text(cable),
                    found="one-sided LLDP",
                    detail={"cable": cable.id, "a": cable.a.as_dict(), "b": cable.b.as_dict()},
                )
            )
            continue
        if any(found.values()):
            seen = "; ".join(
                f"{_point(end)} sees {', '.join(_point(p) + _owner(plan, p) for p in far)} instead of {_point(ends[1] if end == ends[0] else ends[0])}"
                for end, far in found.items()
                if far
            )
            findings.append(
                Finding(
                    "cabling",
                    ERROR,
                    cable.a.device if cable.a.device in by_name else cable.b.device,
                    _port_of(cable, by_name),
                    f"wrong cable {cable.id}: {seen}",
                    planned=_cable_text(cable),
                    found=seen,
                    detail={
                        "cable": cable.id,
                        "a": cable.a.as_dict(),
                        "b": cable.b.as_dict(),
                        "found": {_point(e): [_point(p) for p in f] for e, f in found.items()},
                    },
                )
            )
            continue
        host_port = cable.kind == "host" and (cable.a.device not in by_name or cable.b.device not in by_name)
        message = (
            f"cable {cable.id}: no LLDP neighbour on a host-facing port (GPU nodes may not run LLDP: check the node)"
            if host_port
            else f"missing cable {cable.id}: no LLDP neighbour"
        )
        findings.append(
            Finding(
                "cabling",
                WARNING if host_port else ERROR,
                cable.a.device if cable.a.device in by_name else cable.b.device,
                _port_of(cable, by_name),
                message,
                planned=_cable_text(cable),
                found="no neighbour",
                detail={"cable": cable.id, "a": cable.a.as_dict(), "b": cable.b.as_dict()},
            )
        )
    reported = set()
    for end, fars in sorted(seen_any.items()):
        if end[0] not in by_name or end in plan.by_end or end in covered:
            continue
        for far in sorted(fars):
            pair = tuple(sorted((end, far)))
            if pair in reported or (far in plan.by_end and plan.by_end[far].id in explained):
                continue
            reported.add(pair)
            findings.append(
                Finding(
                    "cabling",
                    ERROR,
                    end[0],
                    end[1],
                    f"extra cable: {_point(end)} sees {_point(far)}, and the plan has no cable on {end[1]}",
                    planned="no cable",
                    found=_point(far),
                    detail={"end": _point(end), "neighbour": _point(far)},
                )
            )
    return findings


def _owner(plan: Plan, point: Point) -> str:
    """ " (planned on cable X)" for an end the plan cables elsewhere; "" for one it does not know."""
    cable = plan.by_end.get(point)
    return f" (an end of {cable.id})" if cable else ""


def _observable(cable: Cable, spoke: set[str]) -> bool:
    return cable.a.device in spoke or cable.b.device in spoke


def _cycle(start: Cable, plan: Plan, links: dict[Point, set[Point]], unmatched_ids: set[str], explained: set[str]) -> list[tuple[Cable, Point]] | None:
    """Cables whose ends were rewired among themselves, starting at `start`: from start's A end,
    follow what LLDP connects it to, step to that end's planned cable, cross to its other end,
    and so on until start's B end comes back. [(cable, the end reached first)] or None."""
    home = (start.b.device, start.b.port)
    chain: list[tuple[Cable, Point]] = [(start, (start.a.device, start.a.port))]
    current = (start.a.device, start.a.port)
    for _step in range(MAX_CYCLE):
        seen = links.get(current, set())
        if len(seen) != 1:
            return None
        (far,) = seen
        if far == home:
            return chain if len(chain) > 1 else None
        cable = plan.by_end.get(far)
        if cable is None or cable.id not in unmatched_ids or cable.id in explained or any(cable.id == c.id for c, _ in chain):
            return None
        chain.append((cable, far))
        other = cable.other(far)
        current = (other.device, other.port)
    return None


def _cycle_finding(cycle: list[tuple[Cable, Point]]) -> Finding:
    cables = [cable for cable, _ in cycle]
    ids = [c.id for c in cables]
    what = "swap of 2 cables" if len(cables) == 2 else ("rotation of 3 cables" if len(cables) == 3 else f"rotation of {len(cables)} cables")
    # what each end meets instead: the A end of cable i meets the entry end of cable i+1
    found = []
    for i, (cable, _entry) in enumerate(cycle):
        leave = cable.other(_entry) if i else cable.a
        nxt = cycle[(i + 1) % len(cycle)]
        meets = nxt[1] if i + 1 < len(cycle) else (cycle[0][0].b.device, cycle[0][0].b.port)
        found.append(f"{_end_text(leave)} meets {_point(meets)}")
    return Finding(
        "cabling",
        ERROR,
        cables[0].a.device,
        cables[0].a.port,
        f"{what}: {', '.join(ids)}",
        planned="; ".join(_cable_text(c) for c in cables),
        found="; ".join(found),
        detail={
            "kind": "swap" if len(cables) == 2 else "rotation",
            "cables": [{"id": c.id, "a": c.a.as_dict(), "b": c.b.as_dict()} for c in cables],
            "found": found,
        },
    )


def _point(point: Point) -> str:
    return f"{point[0]} {point[1]}"


def _end_text(end: End) -> str:
    return f"{end.device} {end.port}" + (f" ({end.place})" if end.place else "")


def _cable_text(cable: Cable) -> str:
    return f"{cable.id}: {_end_text(cable.a)} - {_end_text(cable.b)}"


def _port_of(cable: Cable, by_name: dict) -> str:
    return cable.a.port if cable.a.device in by_name else cable.b.port


# --- ports ---------------------------------------------------------------------------------------

ERROR_COUNTERS = ("rx_errors", "tx_errors")
DISCARD_COUNTERS = ("rx_discards", "tx_discards")


def check_ports(plan: Plan, by_name: dict[str, Observation]) -> list[Finding]:
    findings: list[Finding] = []
    for name, o in by_name.items():
        interfaces = o.answers.get("get_interfaces")
        first, second = o.answers.get("get_interfaces_counters"), o.second.get("get_interfaces_counters")
        optics_answer = o.answers.get("get_optics")
        optics = optics_answer if isinstance(optics_answer, dict) else None
        if optics == {}:  # a driver that reports no transceiver at all has no DOM to give (a lab's veths)
            findings.append(Finding("ports", INFO, name, "", "get_optics reports no transceiver on any port: optics not checked"))
            optics = None
        for port, cable in plan.ports_of(name):
            where = f"{cable.id} to {cable.other((name, port))}"
            if isinstance(interfaces, dict):
                findings += _port_state(name, port, where, cable, interfaces.get(port), plan.mtu.get((name, port)))
            if isinstance(first, dict) and isinstance(second, dict):
                findings += _counters(name, port, where, first.get(port) or {}, second.get(port) or {}, o.interval)
            if optics is not None:
                findings += _optics(name, port, where, cable, optics.get(port))
    return findings


def _port_state(name: str, port: str, where: str, cable: Cable, info, mtu: int | None) -> list[Finding]:
    if not isinstance(info, dict):
        return [Finding("ports", ERROR, name, port, f"port not found on the device ({where})", planned=port, found="no such port")]
    if not info.get("is_enabled", True):
        return [Finding("ports", ERROR, name, port, f"administratively down ({where})", planned="up", found="admin down")]
    if not info.get("is_up"):
        return [Finding("ports", ERROR, name, port, f"down ({where})", planned="up", found="down")]
    found = []
    speed = info.get("speed")
    if cable.speed_gbps and isinstance(speed, (int, float)) and speed > 0 and speed != cable.speed_gbps * 1000:
        found.append(
            Finding(
                "ports",
                ERROR,
                name,
                port,
                f"runs at {speed / 1000:g}G, the cable is {cable.speed_gbps}G ({where})",
                planned=f"{cable.speed_gbps}G",
                found=f"{speed / 1000:g}G",
            )
        )
    live_mtu = info.get("mtu")
    if mtu and isinstance(live_mtu, int) and live_mtu > 0 and live_mtu != mtu:
        found.append(Finding("ports", ERROR, name, port, f"MTU {live_mtu}, the config sets {mtu} ({where})", planned=str(mtu), found=str(live_mtu)))
    return found


def _counters(name: str, port: str, where: str, before: dict, after: dict, interval: float) -> list[Finding]:
    findings = []
    for counters, severity in ((ERROR_COUNTERS, ERROR), (DISCARD_COUNTERS, WARNING)):
        deltas = {c: after.get(c, 0) - before.get(c, 0) for c in counters if isinstance(after.get(c), int) and isinstance(before.get(c), int)}
        grown = {c: d for c, d in deltas.items() if d > 0}
        if grown:
            text = ", ".join(f"{c} +{d}" for c, d in grown.items())
            findings.append(
                Finding(
                    "ports",
                    severity,
                    name,
                    port,
                    f"{text} in {interval:.0f} s ({where})",
                    planned="0",
                    found=text,
                    detail={"deltas": grown, "seconds": round(interval, 2)},
                )
            )
    return findings


def _optics(name: str, port: str, where: str, cable: Cable, optic) -> list[Finding]:
    planned = cable.end((name, port)).optic
    if not isinstance(optic, dict):
        return (
            [Finding("ports", WARNING, name, port, f"no optic reported, the plan has {planned} ({where})", planned=planned, found="none reported")]
            if planned
            else []
        )
    findings = []
    channels = ((optic.get("physical_channels") or {}).get("channel")) or []
    for channel in channels:
        state = channel.get("state") or {}
        for reading in ("input_power", "output_power", "laser_bias_current"):
            values = state.get(reading) or {}
            instant = values.get("instant")
            if not isinstance(instant, (int, float)):
                continue
            low, high = values.get("low_alarm"), values.get("high_alarm")  # where a driver reports thresholds
            lane = f"lane {channel.get('index', '?')} {reading}"
            if isinstance(low, (int, float)) and instant < low:
                findings.append(
                    Finding(
                        "ports", ERROR, name, port, f"{lane} {instant:g} below its low alarm {low:g} ({where})", planned=f">= {low:g}", found=f"{instant:g}"
                    )
                )
            elif isinstance(high, (int, float)) and instant > high:
                findings.append(
                    Finding(
                        "ports", ERROR, name, port, f"{lane} {instant:g} above its high alarm {high:g} ({where})", planned=f"<= {high:g}", found=f"{instant:g}"
                    )
                )
            elif reading == "input_power" and low is None and instant <= NO_LIGHT_DBM:
                findings.append(
                    Finding(
                        "ports", ERROR, name, port, f"{lane} {instant:g} dBm: no light ({where})", planned=f"> {NO_LIGHT_DBM:g} dBm", found=f"{instant:g} dBm"
                    )
                )
    return findings


# --- routing -------------------------------------------------------------------------------------


def check_routing(plan: Plan, by_name: dict[str, Observation]) -> list[Finding]:
    findings: list[Finding] = []
    for name, o in by_name.items():
        answer = o.answers.get("get_bgp_neighbors")
        if isinstance(answer, dict):
            findings += _sessions(plan, name, answer)
        widths = o.answers.get("get_ecmp_widths")
        if isinstance(widths, dict) and name in plan.widths:
            findings += _widths(name, plan.widths[name], widths)
    return findings


def _sessions(plan: Plan, name: str, answer: dict) -> list[Finding]:
    peers = {address: peer for vrf in answer.values() if isinstance(vrf, dict) for address, peer in (vrf.get("peers") or {}).items()}
    planned = plan.sessions.get(name, {})
    findings: list[Finding] = []
    missing = [s for address, s in planned.items() if address not in peers]
    unexpected = sorted(set(peers) - set(planned))
    paired: set[str] = set()
    for session in missing:
        partner = next((u for u in unexpected if u not in paired and _replaces(session, u, peers[u])), None)
        where = f"{session.port} to {session.peer_device}" if session.port else "loopback session"
        if partner is not None:
            paired.add(partner)
            state = "Established" if peers[partner].get("is_up") else "not Established"
            findings.append(
                Finding(
                    "routing",
                    ERROR,
                    name,
                    session.port,
                    f"wrong BGP peer address on {where}: peer address {partner} configured, plan says {session.peer} ({state})",
                    planned=session.peer,
                    found=partner,
                    detail={"subnet": session.subnet},
                )
            )
        else:
            findings.append(
                Finding(
                    "routing", ERROR, name, session.port, f"BGP session to {session.peer} ({where}) not configured", planned=session.peer, found="no session"
                )
            )
    for address in unexpected:
        if address not in paired:
            findings.append(
                Finding("routing", ERROR, name, "", f"unexpected BGP session to {address} (the plan has none)", planned="no session", found=address)
            )
    for address, session in planned.items():
        peer = peers.get(address)
        if peer is None:
            continue
        where = f"{session.port} to {session.peer_device}" if session.port else "loopback session"
        if not peer.get("is_up"):
            findings.append(
                Finding("routing", ERROR, name, session.port, f"BGP session to {address} ({where}) not Established", planned="Established", found="down")
            )
            continue
        received = [f.get("received_prefixes", -1) for f in (peer.get("address_family") or {}).values() if isinstance(f, dict)]
        if plan.roles.get(session.peer_device) in FABRIC_SWITCH_ROLES and received and max(received) == 0 and len(plan.widths.get(name, {})) > 0:
            findings.append(
                Finding(
                    "routing",
                    WARNING,
                    name,
                    session.port,
                    f"BGP session to {address} ({where}) receives no prefixes; the plan has routes for it to carry",
                    planned="> 0 prefixes",
                    found="0",
                )
            )
    return findings


def _replaces(session, address: str, peer: dict) -> bool:
    """Whether the device's session to `address` is the planned `session` at a wrong address: the
    address lies in the session's link subnet, or the session's description names the planned peer
    device and port (fabricgen's configs describe each neighbor so, and a mistyped address keeps
    its description)."""
    if session.subnet and _in(address, session.subnet):
        return True
    words = str(peer.get("description") or "").split()
    return bool(session.peer_device and session.peer_port) and session.peer_device in words and session.peer_port in words


def _in(address: str, subnet: str) -> bool:
    try:
        return netaddr.IPAddress(address) in netaddr.IPNetwork(subnet)
    except (netaddr.AddrFormatError, ValueError):
        return False


def _widths(name: str, planned: dict[str, int], found: dict[str, int]) -> list[Finding]:
    wrong = {prefix: (width, found.get(prefix, 0)) for prefix, width in planned.items() if found.get(prefix, 0) != width}
    if not wrong:
        return []
    shown = ", ".join(f"{p} {have}/{want}" for p, (want, have) in sorted(wrong.items())[:4]) + (f" and {len(wrong) - 4} more" if len(wrong) > 4 else "")
    return [
        Finding(
            "routing",
            ERROR,
            name,
            "",
            f"{len(wrong)} of {len(planned)} remote leaf prefixes not at the planned ECMP width (found/planned): {shown}",
            planned="planned widths",
            found=shown,
            detail={"wrong": {p: {"planned": w, "found": h} for p, (w, h) in wrong.items()}},
        )
    ]


# --- lossless QoS --------------------------------------------------------------------------------


def pause_rates(o: Observation) -> dict[str, dict[str, dict[int, float]]]:
    """port -> "rx"/"tx" -> priority -> pause frames per second over the interval."""
    first, second = o.answers.get("get_lossless_counters"), o.second.get("get_lossless_counters")
    if not isinstance(first, dict) or not isinstance(second, dict) or o.interval <= 0:
        return {}
    rates: dict[str, dict[str, dict[int, float]]] = {}
    for port, after in second.items():
        before = first.get(port) or {}
        rates[port] = {}
        for direction in ("rx", "tx"):
            a, b = after.get(f"pfc_{direction}") or {}, before.get(f"pfc_{direction}") or {}
            rates[port][direction] = {int(p): (a[p] - b.get(p, 0)) / o.interval for p in a if isinstance(a[p], int)}
    return rates


def _delta(o: Observation, port: str, key: str) -> int | None:
    first, second = o.answers.get("get_lossless_counters"), o.second.get("get_lossless_counters")
    if not isinstance(first, dict) or not isinstance(second, dict):
        return None
    after, before = (second.get(port) or {}).get(key), (first.get(port) or {}).get(key)
    return after - before if isinstance(after, int) and isinstance(before, int) else None


def check_lossless(plan: Plan, by_name: dict[str, Observation], thresholds: Thresholds) -> list[Finding]:
    findings: list[Finding] = []
    rates = {name: pause_rates(o) for name, o in by_name.items()}
    for name, o in by_name.items():
        lossless = plan.lossless.get(name, set())
        for port, cable in plan.ports_of(name):
            per = rates[name].get(port)
            where = f"{cable.id} to {cable.other((name, port))}"
            if per is None:
                continue
            for direction, verb in (("rx", "received"), ("tx", "sent")):
                for priority, rate in sorted(per[direction].items()):
                    if rate >= thresholds.storm:
                        findings.append(
                            Finding(
                                "lossless",
                                ERROR,
                                name,
                                port,
                                f"pause storm: {rate:.0f} PFC frames/s {verb} on priority {priority} ({where})",
                                planned=f"< {thresholds.storm:g}/s",
                                found=f"{rate:.0f}/s",
                            )
                        )
                    elif rate > 0 and lossless and priority not in lossless:
                        findings.append(
                            Finding(
                                "lossless",
                                ERROR,
                                name,
                                port,
                                f"PFC frames {verb} on priority {priority}, which the plan does not make lossless ({where})",
                                planned=f"pauses on priority {', '.join(map(str, sorted(lossless)))} only",
                                found=f"{rate:.1f}/s on {priority}",
                            )
                        )
            far = cable.other((name, port))
            if far.device in rates and rates[far.device].get(far.port) is not None:
                theirs = rates[far.device][far.port]
                for priority, rate in per["tx"].items():
                    if rate > 0 and theirs["rx"].get(priority, 0) == 0:
                        findings.append(
                            Finding(
                                "lossless",
                                ERROR,
                                name,
                                port,
                                f"sends {rate:.1f} PFC frames/s on priority {priority} that {far} never counts: PFC missing on that end? ({where})",
                                planned=f"{far} honours priority {priority}",
                                found="0 received",
                            )
                        )
            storms = _delta(o, port, "pfcwd_storms")
            if storms:
                findings.append(
                    Finding(
                        "lossless",
                        ERROR,
                        name,
                        port,
                        f"PFC watchdog detected {storms} storm(s) in {o.interval:.0f} s ({where})",
                        planned="0",
                        found=str(storms),
                    )
                )
            marked = _delta(o, port, "ecn_marked")
            if marked:
                findings.append(Finding("lossless", INFO, name, port, f"{marked} ECN-marked packets in {o.interval:.0f} s ({where})", found=str(marked)))
    return findings
