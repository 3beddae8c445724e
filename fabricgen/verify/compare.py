"""The plan against what the devices answered: one `Finding` per thing that differs.

Every answer was checked when it was collected (answers.py): the checks read typed, bounded
models only. Checks, each a function of (plan, observations) -> findings:
- answers: a getter that failed or answered malformed data (what it feeds is not checked there),
  and a device that answered no getter at all;
- cabling: LLDP against cabling.csv. An observed link is a pair of ends that LLDP connects (both
  ends agreeing, or the one end that speaks: a GPU node is not polled). Observed links are matched
  against planned cables; what is left is explained as cycles first (two cables that exchanged
  ends are ONE swap, three a rotation), then as wrong, missing and extra cables.
- ports: oper state, speed against the cable's, MTU against the config's, error and discard
  counter deltas (a counter that went backwards between the samples is named, not judged),
  optics present and DOM readings against their thresholds where reported.
- routing: planned BGP sessions Established, unexpected ones (a wrong peer address is paired with
  the planned one it replaces), prefixes received, ECMP widths against the plan's.
- lossless: PFC pause rates per port and priority over the interval, storms, pauses on a priority
  the plan does not make lossless, pauses sent that the peer never counts, watchdog storms, ECN;
  counters that went backwards are named.
- drift: running config against the build's, secrets masked on both sides.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace

import netaddr

from fabricgen.build.secrets import Secrets
from fabricgen.verify.answers import Counters, Interface, LosslessCounters, Neighbour, Optic, Peer, Vrf
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
    """Every finding, reachability and answers first, then cabling, ports, routing, lossless QoS, drift."""
    by_name = {o.target.name: o for o in observations}
    findings = [Finding("reach", ERROR, o.target.name, "", f"not reached: {o.error}", planned=o.target.host) for o in observations if not o.reached]
    findings += check_answers(observations)
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


# --- answers -------------------------------------------------------------------------------------

# What each getter's answer feeds: what a failed or malformed one leaves unchecked on its device.
UNCHECKED_WITHOUT = {
    "get_lldp_neighbors_detail": "cabling",
    "get_interfaces": "port state, speed and MTU",
    "get_interfaces_counters": "error and discard counters",
    "get_bgp_neighbors": "BGP sessions",
    "get_optics": "optics",
    "get_config": "drift",
    "get_lossless_counters": "PFC pauses, watchdog storms and ECN marks",
    "get_ecmp_widths": "ECMP widths",
}


def check_answers(observations: list[Observation]) -> list[Finding]:
    """An error per getter that failed or answered malformed data, and per reached device that
    answered no getter at all: a device verify could not read never passes as matching."""
    findings = []
    for o in observations:
        if not o.reached:
            continue
        for getter, error in sorted(o.errors.items()):
            unchecked = UNCHECKED_WITHOUT.get(getter)
            findings.append(
                Finding(
                    "answers",
                    ERROR,
                    o.target.name,
                    "",
                    f"{getter} {error}" + (f" ({unchecked} not checked)" if unchecked else ""),
                    planned="an answer in its documented format",
                    found=error.partition(":")[0],
                    detail={"getter": getter},
                )
            )
        if not o.answers and not o.errors:
            findings.append(
                Finding(
                    "answers",
                    ERROR,
                    o.target.name,
                    "",
                    f"no getter answered: its driver implements none of {', '.join(sorted(o.missing))}; nothing was checked on this device",
                    planned="answers",
                    found="none",
                )
            )
    return findings


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
        answer: dict[str, list[Neighbour]] | None = observation.answers.get("get_lldp_neighbors_detail")
        for port, neighbours in (answer or {}).items():
            for neighbour in neighbours:
                remote = _remote(neighbour, plan.roles, planned_ports)
                if remote is not None:
                    halves[(name, port)].add(remote)
    speakers = _speakers(by_name)
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


def _speakers(by_name: dict[str, Observation]) -> set[str]:
    """The devices whose LLDP neighbours verify read."""
    return {name for name, o in by_name.items() if "get_lldp_neighbors_detail" in o.answers}


def _remote(neighbour: Neighbour, roles: Mapping[str, str], planned_ports: dict[str, set[str]]) -> Point | None:
    system = neighbour.remote_system_name.strip()
    if not system:
        return None
    if system not in roles and system.split(".")[0] in roles:
        system = system.split(".")[0]
    port = neighbour.remote_port.strip()
    description = neighbour.remote_port_description.strip()
    known = planned_ports.get(system, set())
    if port not in known:
        if description in known:
            port = description
        elif port.startswith("Eth") and "Ethernet" + port[3:] in known:
            port = "Ethernet" + port[3:]
    return (system, port or description) if (port or description) else None


def check_cabling(plan: Plan, by_name: dict[str, Observation]) -> list[Finding]:
    spoke = _speakers(by_name)
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
        interfaces: dict[str, Interface] | None = o.answers.get("get_interfaces")
        first: dict[str, Counters] | None = o.answers.get("get_interfaces_counters")
        second: dict[str, Counters] | None = o.second.get("get_interfaces_counters")
        optics: dict[str, Optic] | None = o.answers.get("get_optics")
        if optics == {}:  # a driver that reports no transceiver at all has no DOM to give (a lab's veths)
            findings.append(Finding("ports", INFO, name, "", "get_optics reports no transceiver on any port: optics not checked"))
            optics = None
        for port, cable in plan.ports_of(name):
            where = f"{cable.id} to {cable.other((name, port))}"
            if interfaces is not None:
                findings += _port_state(name, port, where, cable, interfaces.get(port), plan.mtu.get((name, port)))
            if first is not None and second is not None:
                findings += _counters(name, port, where, first.get(port), second.get(port), o.interval)
            if optics is not None:
                findings += _optics(name, port, where, cable, optics.get(port))
    return findings


def _port_state(name: str, port: str, where: str, cable: Cable, info: Interface | None, mtu: int | None) -> list[Finding]:
    if info is None:
        return [Finding("ports", ERROR, name, port, f"port not found on the device ({where})", planned=port, found="no such port")]
    if not info.is_enabled:
        return [Finding("ports", ERROR, name, port, f"administratively down ({where})", planned="up", found="admin down")]
    if not info.is_up:
        return [Finding("ports", ERROR, name, port, f"down ({where})", planned="up", found="down")]
    found = []
    speed = info.speed  # Mbps; -1 or 0: not known
    if cable.speed_gbps and speed > 0 and speed != cable.speed_gbps * 1000:
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
    live_mtu = info.mtu
    if mtu and live_mtu > 0 and live_mtu != mtu:
        found.append(Finding("ports", ERROR, name, port, f"MTU {live_mtu}, the config sets {mtu} ({where})", planned=str(mtu), found=str(live_mtu)))
    return found


def _counters(name: str, port: str, where: str, before: Counters | None, after: Counters | None, interval: float) -> list[Finding]:
    """Error and discard counters that grew between the samples; those that went backwards (a
    clear or a wrap: their growth is unknown) named in one warning."""
    if before is None or after is None:
        return []
    findings = []
    backwards: list[str] = []
    for counters, severity in ((ERROR_COUNTERS, ERROR), (DISCARD_COUNTERS, WARNING)):
        grown = {}
        for counter in counters:
            old, new = getattr(before, counter), getattr(after, counter)
            if old < 0 or new < 0:  # -1: not kept
                continue
            if new < old:
                backwards.append(f"{counter} {old} -> {new}")
            elif new > old:
                grown[counter] = new - old
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
    if backwards:
        findings.append(_backwards("ports", name, port, where, backwards, interval))
    return findings


def _backwards(check: str, name: str, port: str, where: str, counters: list[str], interval: float) -> Finding:
    text = ", ".join(counters)
    return Finding(
        check,
        WARNING,
        name,
        port,
        f"counters went backwards between the two samples (cleared or wrapped): {text}; their growth over {interval:.0f} s is unknown ({where})",
        planned="counters that only grow",
        found=text,
        detail={"backwards": counters},
    )


def _optics(name: str, port: str, where: str, cable: Cable, optic: Optic | None) -> list[Finding]:
    planned = cable.end((name, port)).optic
    if optic is None:
        return (
            [Finding("ports", WARNING, name, port, f"no optic reported, the plan has {planned} ({where})", planned=planned, found="none reported")]
            if planned
            else []
        )
    findings = []
    for channel in optic.physical_channels.channel:
        for reading in ("input_power", "output_power", "laser_bias_current"):
            values = getattr(channel.state, reading)
            if values is None:
                continue
            instant = values.instant
            low, high = values.low_alarm, values.high_alarm  # where a driver reports thresholds
            lane = f"lane {channel.index} {reading}"
            if low is not None and instant < low:
                findings.append(
                    Finding(
                        "ports", ERROR, name, port, f"{lane} {instant:g} below its low alarm {low:g} ({where})", planned=f">= {low:g}", found=f"{instant:g}"
                    )
                )
            elif high is not None and instant > high:
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
        answer: dict[str, Vrf] | None = o.answers.get("get_bgp_neighbors")
        if answer is not None:
            findings += _sessions(plan, name, answer)
        widths: dict[str, int] | None = o.answers.get("get_ecmp_widths")
        if widths is not None and name in plan.widths:
            findings += _widths(name, plan.widths[name], widths)
    return findings


def _sessions(plan: Plan, name: str, answer: dict[str, Vrf]) -> list[Finding]:
    peers = {address: peer for vrf in answer.values() for address, peer in vrf.peers.items()}
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
            state = "Established" if peers[partner].is_up else "not Established"
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
        if not peer.is_up:
            findings.append(
                Finding("routing", ERROR, name, session.port, f"BGP session to {address} ({where}) not Established", planned="Established", found="down")
            )
            continue
        received = [family.received_prefixes for family in peer.address_family.values()]
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


def _replaces(session, address: str, peer: Peer) -> bool:
    """Whether the device's session to `address` is the planned `session` at a wrong address: the
    address lies in the session's link subnet, or the session's description names the planned peer
    device and port (fabricgen's configs describe each neighbor so, and a mistyped address keeps
    its description)."""
    if session.subnet and _in(address, session.subnet):
        return True
    words = peer.description.split()
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


def _lossless_samples(o: Observation, port: str) -> tuple[LosslessCounters, LosslessCounters] | None:
    """(first, second) of `port`'s lossless counters, when both samples hold it."""
    first: dict[str, LosslessCounters] | None = o.answers.get("get_lossless_counters")
    second: dict[str, LosslessCounters] | None = o.second.get("get_lossless_counters")
    before, after = (first or {}).get(port), (second or {}).get(port)
    return (before, after) if before is not None and after is not None else None


def pause_rates(o: Observation) -> dict[str, dict[str, dict[int, float]]]:
    """port -> "rx"/"tx" -> priority -> pause frames per second over the interval, for the
    priorities both samples count and whose count did not go backwards."""
    second: dict[str, LosslessCounters] | None = o.second.get("get_lossless_counters")
    if second is None or o.interval <= 0:
        return {}
    rates: dict[str, dict[str, dict[int, float]]] = {}
    for port in second:
        samples = _lossless_samples(o, port)
        if samples is None:
            continue
        before, after = samples
        rates[port] = {
            "rx": {p: (n - before.pfc_rx[p]) / o.interval for p, n in after.pfc_rx.items() if p in before.pfc_rx and n >= before.pfc_rx[p]},
            "tx": {p: (n - before.pfc_tx[p]) / o.interval for p, n in after.pfc_tx.items() if p in before.pfc_tx and n >= before.pfc_tx[p]},
        }
    return rates


def _delta(o: Observation, port: str, key: str) -> int | None:
    """Growth of `key` (pfcwd_storms, ecn_marked) over the interval; None when not kept or when it went backwards."""
    samples = _lossless_samples(o, port)
    if samples is None:
        return None
    before, after = getattr(samples[0], key), getattr(samples[1], key)
    return after - before if before is not None and after is not None and after >= before else None


def _lossless_backwards(o: Observation, port: str) -> dict[str, tuple[int, int]]:
    """The lossless counters of `port` that went backwards between the samples: {"pfc_rx priority
    3": (before, after), "pfcwd_storms": ..., ...}."""
    samples = _lossless_samples(o, port)
    if samples is None:
        return {}
    before, after = samples
    went = {
        f"{direction} priority {p}": (before_counts[p], n)
        for direction, before_counts, after_counts in (("pfc_rx", before.pfc_rx, after.pfc_rx), ("pfc_tx", before.pfc_tx, after.pfc_tx))
        for p, n in sorted(after_counts.items())
        if p in before_counts and n < before_counts[p]
    }
    for key in ("pfcwd_storms", "ecn_marked"):
        old, new = getattr(before, key), getattr(after, key)
        if old is not None and new is not None and new < old:
            went[key] = (old, new)
    return went


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
            backwards = _lossless_backwards(o, port)
            if backwards:
                findings.append(_backwards("lossless", name, port, where, [f"{c} {old} -> {new}" for c, (old, new) in backwards.items()], o.interval))
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
                unknown = _lossless_backwards(by_name[far.device], far.port)  # their count went backwards: not "never"
                for priority, rate in per["tx"].items():
                    if rate > 0 and theirs["rx"].get(priority, 0) == 0 and f"pfc_rx priority {priority}" not in unknown:
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
