"""Faults a test injects into a running lab, behind the plan's back, to see that something finds them.

Each function changes a running lab (`fabricgen lab up`, or the `two_unit_lab` fixture) as a field
mistake would, and returns a `Fault` whose `undo()` puts back what the plan says. The faults are not
recorded in the lab's state: `fabricgen lab verify` still expects the planned fabric, as
`fabricgen verify` does, and `lab down` removes a lab with or without them.

    fault = swap_cables(plan, state, "C0001", "C0002")
    try:
        ...  # LLDP, BGP, verify see the swap
    finally:
        fault.undo()

- `swap_cables`: two cables' far ends swapped (a miscabling);
- `link_down`: one cable dark at both ends (a pulled cable, a dead optic);
- `set_peer_address`: one switch's BGP neighbour at a wrong address (a typo in its config).

Every value that reaches a command comes from the plan (checked when it was read) or is checked here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

from fabricgen.basics.errors import LabError, Problem
from fabricgen.build.secrets import Secrets
from fabricgen.lab import keys
from fabricgen.lab.plan import LabLink, LabPlan, LabPort
from fabricgen.lab.runtime import LabState, ip_batch, keys_directory, lldp_port_command, lldpcli, node_routes_again, port_commands, run, vtysh


@dataclass
class Fault:
    """An applied fault: what it did, and how to take it back (once)."""

    what: str
    _undo: Callable[[], None]
    undone: bool = False

    def undo(self) -> None:
        """Put the lab back as the plan says; a second call does nothing."""
        if not self.undone:
            self._undo()
            self.undone = True


def cable(plan: LabPlan, cable_id: str) -> LabLink:
    found = next((link for link in plan.links if link.cable == cable_id), None)
    if found is None:
        raise LabError(Problem(f"the lab has no cable {cable_id!r}", hint=f"cables are e.g. {', '.join(l.cable for l in plan.links[:4])}"))
    return found


# --- swapped cables ------------------------------------------------------------------------------


def swap_cables(plan: LabPlan, state: LabState, cable_a: str, cable_b: str) -> Fault:
    """Rewire two cables so that cable A's A end meets cable B's B end and cable B's A end meets
    cable A's B end (two patch cords swapped at one end). Both veth pairs are deleted and created
    again between the new ends, inside their namespaces, with the same kernel names; every end
    gets its planned address (or bridge), MTU and state up again (a node NIC its routes too), and
    its lldpd port settings (port ID and description = the planned port name) are applied again.
    Nothing else changes: FRR keeps its config, so the sessions over both cables go down (their
    ends' addresses no longer share a subnet). `undo()` rewires the planned pairs the same way."""
    a, b = cable(plan, cable_a), cable(plan, cable_b)
    if a.cable == b.cable:
        raise LabError(Problem(f"swapping {a.cable} with itself changes nothing", hint="give two different cables"))
    planned = [(a.a, a.b), (b.a, b.b)]
    swapped = [(a.a, b.b), (b.a, a.b)]
    _rewire(plan, state, planned, swapped)
    return Fault(
        f"{a.cable} and {b.cable} swapped: {a.a.device} {a.a.port} <-> {b.b.device} {b.b.port}, {b.a.device} {b.a.port} <-> {a.b.device} {a.b.port}",
        lambda: _rewire(plan, state, swapped, planned),
    )


def _rewire(plan: LabPlan, state: LabState, old: list[tuple[LabPort, LabPort]], new: list[tuple[LabPort, LabPort]]) -> None:
    for near, _ in old:  # deleting one end of a veth deletes its peer
        ip_batch([f"link del dev {_ifname(state, near)}"], plan.namespace(near.device))
    ip_batch(
        f"link add name {_ifname(state, x)} netns {plan.namespace(x.device)} type veth peer name {_ifname(state, y)} netns {plan.namespace(y.device)}"
        for x, y in new
    )
    for end in (end for pair in new for end in pair):
        ip_batch(port_commands(plan, end.device, end), plan.namespace(end.device))
        lldpcli(plan.namespace(end.device), lldp_port_command(end))


def _ifname(state: LabState, port: LabPort) -> str:
    """The kernel name `lab up` gave the port (recorded in the lab's state)."""
    return state.interfaces[port.device][port.port]


# --- a dark link ---------------------------------------------------------------------------------


def link_down(plan: LabPlan, state: LabState, cable_id: str) -> Fault:
    """Take cable `cable_id` down at both ends (`ip link set dev X down` in each namespace): no
    carrier, no LLDP neighbour, its session down. `undo()` brings both ends up again and puts back
    a node NIC's routes, which the kernel removed with the link."""
    link = cable(plan, cable_id)
    for end in (link.a, link.b):
        ip_batch([f"link set dev {_ifname(state, end)} down"], plan.namespace(end.device))

    def undo() -> None:
        for end in (link.a, link.b):
            ifname = _ifname(state, end)
            ip_batch([f"link set dev {ifname} up", *node_routes_again(plan, end.device, [ifname])], plan.namespace(end.device))

    return Fault(f"{link.cable} down: {link.a.device} {link.a.port} <-> {link.b.device} {link.b.port}", undo)


# --- a wrong BGP peer address --------------------------------------------------------------------


def set_peer_address(plan: LabPlan, state: LabState, device: str, old: str, new: str) -> Fault:
    """Switch `device`'s BGP neighbour `old` to address `new` in its running FRR (default VRF):
    `no neighbor OLD`, then every `neighbor OLD ...` line of its running config (remote-as,
    peer-group, description, and those inside address families) again for NEW, in the config's
    order, through `vtysh -f` on a file in the lab's private key directory (a per-neighbour key
    stays off every command line) that is removed afterwards. `undo()` does the same from NEW
    back to OLD."""
    if device not in plan.switches:
        raise LabError(Problem(f"{device!r} is not a switch of the lab", hint=f"switches are e.g. {', '.join(sorted(plan.switches)[:4])}"))
    for address in (old, new):
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise LabError(Problem(f"{address!r} is not an IP address")) from None
    _move_neighbor(plan, state, device, old, new)
    return Fault(f"{device}: BGP neighbour {old} moved to {new}", lambda: _move_neighbor(plan, state, device, new, old))


def _move_neighbor(plan: LabPlan, state: LabState, device: str, old: str, new: str) -> None:
    ns = plan.namespace(device)
    header, top, families = neighbor_lines(vtysh(ns, "show running-config"), old)
    if not top:
        raise LabError(Problem(f"{device} has no BGP neighbour {old}", device=device))
    lines = [header, f" no neighbor {old}", *(f" neighbor {new} {rest}" for rest in top)]
    for family, rests in families.items():
        lines += [f" {family}", *(f"  neighbor {new} {rest}" for rest in rests), " exit-address-family"]
    lines.append("exit")
    directory = keys_directory(plan.lab_id)
    path = directory / f"fault-{device}.conf"
    keys.write_private(path, "\n".join(lines) + "\n")
    try:
        result = run(["vtysh", "-N", ns, "-f", str(path)], check=False)
    finally:
        path.unlink(missing_ok=True)
    if result.returncode != 0:
        masked = Secrets(keys.read_keys(directory)).mask(result.stdout + result.stderr)  # vtysh quotes the refused line
        raise LabError(Problem(f"FRR refused moving neighbour {old} to {new}: {masked.strip()[:400]}", device=device))


def neighbor_lines(running: str, address: str) -> tuple[str, list[str], dict[str, list[str]]]:
    """From FRR's running config: the default VRF's `router bgp ASN` line, what follows `neighbor
    ADDRESS` on its own lines at its top level (in order), and per `address-family ...` line the
    same inside it."""
    header, top, families = "", [], {}
    family = None
    prefix = re.compile(rf"^\s*neighbor {re.escape(address)} (.+?)\s*$")
    inside = False
    for line in running.splitlines():
        if re.fullmatch(r"router bgp \d+", line.strip()) and not line.startswith(" "):
            header, inside = line.strip(), True
        elif inside and line.strip() == "exit" and not line.startswith(" "):
            inside = False
        elif inside and line.strip().startswith("address-family "):
            family = line.strip()
            families.setdefault(family, [])
        elif inside and line.strip() == "exit-address-family":
            family = None
        elif inside and (found := prefix.match(line)):
            (families[family] if family else top).append(found.group(1))
    return header, top, {f: rests for f, rests in families.items() if rests}
