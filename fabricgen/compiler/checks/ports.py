"""Ports and cables: every port used once, both ends of a link at one speed, every cabled port
on its switch model, one optic per cage.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from operator import attrgetter, is_
from typing import NamedTuple

from fabricgen.basics.errors import Problem
from fabricgen.catalog.model import PortGroup
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import Device, Port

_a_of, _b_of = attrgetter("a"), attrgetter("b")
_device_name_of, _name_of = attrgetter("device.name"), attrgetter("name")


def ports_used_once(c: Compiled) -> Iterable[Problem]:
    # quick pass, in C: when every link end is the port registered under its name on the device of
    # its name, two ends with one (device, port) name are one object, so distinct objects (a set by
    # identity, no name tuples made) mean no port is used twice; names only if that fails
    links = c.fabric.links
    ends = [*map(_a_of, links), *map(_b_of, links)]
    ports_of = {name: device.ports for name, device in c.fabric.devices.items()}
    registered = map(dict.get, map(ports_of.get, map(_device_name_of, ends), repeat({})), map(_name_of, ends))
    if all(map(is_, registered, ends)) and len(set(ends)) == len(ends):  # a set from a list is sized at once
        return
    seen: dict[tuple[str, str], str] = {}
    for link in c.fabric.links:
        for port in (link.a, link.b):
            key = (port.device.name, port.name)
            if key in seen:
                yield Problem(f"port is used by two links, {seen[key]} and {link.id}", device=key[0], port=key[1])
            else:
                seen[key] = link.id


def link_speeds_match(c: Compiled) -> Iterable[Problem]:
    for link in c.fabric.links:
        if link.a.speed_gbps != link.b.speed_gbps:
            yield Problem(
                f"link {link.id} joins {link.a.speed_gbps}G to {link.b.speed_gbps}G at {link.b.label}",
                device=link.a.device.name,
                port=link.a.name,
            )


def switch_ports_exist(c: Compiled, walked: SwitchPorts | None = None) -> Iterable[Problem]:
    """Every port is a real cage (or breakout sub-port) of the switch model, at a speed the cage
    offers, with no cage used at two speeds and no more ports than the model has."""
    yield from (switch_ports(c) if walked is None else walked).cage_problems


def one_optic_per_cage(c: Compiled, walked: SwitchPorts | None = None) -> Iterable[Problem]:
    """Sub-ports of a broken-out cage share one transceiver, so they must want the same one."""
    yield from (switch_ports(c) if walked is None else walked).optic_problems


class SwitchPorts(NamedTuple):
    """What switch_ports_exist, one_optic_per_cage and ecn_below_pfc_trigger read off the switches'
    ports, from one walk over them (~900,000 at 131,072 GPUs; run_checks makes it once for all three)."""

    cage_problems: list[Problem]  # switch_ports_exist's, in switch and port order
    optic_problems: list[Problem]  # one_optic_per_cage's, likewise
    speeds: dict[Device, set[int]]  # every switch's data-port speeds (mgmt0 and console left out)


def switch_ports(c: Compiled) -> SwitchPorts:
    cage_problems: list[Problem] = []
    optic_problems: list[Problem] = []
    speeds: dict[Device, set[int]] = {}
    # model -> (cage -> its port group, its copper cages, the fanouts asked so far)
    groups_of: dict[str, tuple[dict[int, PortGroup], set[int], dict[tuple[int, int], int]]] = {}
    for device in c.fabric.switches():
        model = c.catalog.switches[device.model]
        if device.model not in groups_of:
            groups = model.cage_groups
            groups_of[device.model] = (groups, {cage for cage, group in groups.items() if group.form_factor == "RJ45"}, {})
        groups, copper, fanouts = groups_of[device.model]  # fanouts: (group's first cage, speed) -> group.fanout_at(speed)
        first_in: dict[int, Port] = {}  # cage -> its first port (not a tuple made per port)
        modes: dict[int, int] = {}
        used: dict[int, int] = {}  # speed -> data ports at it, copper cages left out
        copper_speeds: set[int] = set()  # the speeds of data ports in copper cages, which `used` leaves out
        for port in device.ports.values():
            first = first_in.setdefault(port.cage, port)
            if first.optic != port.optic:
                optic_problems.append(
                    Problem(
                        f"cage {port.cage} would need {first.optic} for {first.name} and {port.optic} for this port; a cage holds one transceiver",
                        hint="use the same transceiver for host and fabric links (backend.optics), or a switch whose host and fabric ports are separate cages",
                        device=device.name,
                        port=port.name,
                    )
                )
            if not port.front_panel:
                continue  # mgmt0 and console are fixed ports, not cages
            if port.cage in copper:
                copper_speeds.add(port.speed_gbps)
            else:
                used[port.speed_gbps] = used.get(port.speed_gbps, 0) + 1
            group = groups.get(port.cage)
            if group is None:
                cage_problems.append(Problem(f"{device.model} has no cage {port.cage}", device=device.name, port=port.name))
                continue
            if port.sub == 0:
                # copper cages negotiate down (a 10GBASE-T port runs a 1G BMC)
                fits = group.speed == port.speed_gbps or (group.form_factor == "RJ45" and port.speed_gbps <= group.speed)
            else:
                fanout = fanouts.get((group.first, port.speed_gbps))
                if fanout is None:
                    fanout = fanouts[(group.first, port.speed_gbps)] = group.fanout_at(port.speed_gbps)
                fits = group.speed != port.speed_gbps and port.sub <= fanout
            if not fits:
                cage_problems.append(
                    Problem(
                        f"cage {port.cage} ({group.form_factor} {group.speed}G) cannot run a {port.speed_gbps}G "
                        f"{'sub-port ' + str(port.sub) if port.sub else 'port'}",
                        device=device.name,
                        port=port.name,
                    )
                )
            if modes.setdefault(port.cage, port.speed_gbps) != port.speed_gbps:
                cage_problems.append(Problem(f"cage {port.cage} is used at {modes[port.cage]}G and {port.speed_gbps}G", device=device.name, port=port.name))
        for speed, count in used.items():
            if count > model.ports_at(speed):
                cage_problems.append(Problem(f"{count} ports at {speed}G, {device.model} has {model.ports_at(speed)}", device=device.name))
        speeds[device] = copper_speeds.union(used)
    return SwitchPorts(cage_problems, optic_problems, speeds)
