"""What the lab's lldpd daemons see, and the LLDP check of `lab verify`: every cable of the lab seen
at both ends as the cabling plan says (each end's neighbour is the other end's device and port).

The neighbours are read with `lldpctl -u SOCKET -f json0` from the host: lldpcli(8) says json0 keeps
one structure whatever the number of interfaces or neighbours (plain `json` turns a list of one
into an object), so it is the format a program reads.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from fabricgen.lab.plan import LabPlan
from fabricgen.lab.runtime import LLDP_TX_HOLD, LLDP_TX_INTERVAL, LLDPCLI, lldpd_socket, parallel, run

# a change (a cable rewired, a port up again) shows within a transmit interval; a neighbour that
# went away without its port going down ages out after the TTL (tx-interval x tx-hold)
SETTLE_SECONDS = LLDP_TX_INTERVAL * LLDP_TX_HOLD + 2
POLL_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class Neighbor:
    """One neighbour lldpd reports on a local port."""

    system: str  # the chassis' system name ("" when it sends none)
    port: str  # the port ID's value
    port_subtype: str  # "local", "mac", "ifname", ...
    description: str  # the port description ("" when it sends none)


def neighbors(namespace: str) -> dict[str, list[Neighbor]]:
    """Kernel interface name -> the neighbours the namespace's lldpd has on it (only interfaces
    with at least one)."""
    result = run([str(LLDPCLI), "-u", str(lldpd_socket(namespace)), "-f", "json0", "show", "neighbors"], timeout=20)
    return parse_json0(result.stdout)


def parse_json0(text: str) -> dict[str, list[Neighbor]]:
    """lldpcli's json0 of `show neighbors`: {"lldp": [{"interface": [{"name", "chassis": [{"name":
    [{"value"}]}], "port": [{"id": [{"type", "value"}], "descr": [{"value"}]}]}]}]}."""
    found: dict[str, list[Neighbor]] = {}
    for block in json.loads(text or "{}").get("lldp", []):
        for interface in block.get("interface", []):
            chassis = (interface.get("chassis") or [{}])[0]
            port = (interface.get("port") or [{}])[0]
            port_id = (port.get("id") or [{}])[0]
            found.setdefault(interface["name"], []).append(
                Neighbor(_value(chassis.get("name")), port_id.get("value", ""), port_id.get("type", ""), _value(port.get("descr")))
            )
    return found


def _value(items: list[dict] | None) -> str:
    return items[0].get("value", "") if items else ""


@dataclass(frozen=True, slots=True)
class EndLook:
    """One cable end as LLDP sees it against the plan."""

    device: str
    port: str
    cable: str
    expected: tuple[str, str] | None  # (device, port) of the other end; None: must see nobody (a failed cable)
    seen: tuple[tuple[str, str], ...]  # (system name, port ID) of each neighbour
    checked: bool = True  # False: a silently failed cable (frames dropped after lldpd's socket sees them)

    @property
    def ok(self) -> bool:
        if not self.checked:
            return True
        return self.seen == ((self.expected,) if self.expected else ())


def look(plan: LabPlan, dead_cables: set[str], silent_cables: set[str], dead_devices: set[str]) -> list[EndLook]:
    """Every cable end of the live devices: what its lldpd sees and what the plan (with the
    applied failures) says it must."""
    live = [d for d in (*plan.switches, *plan.nodes) if d not in dead_devices]
    seen = dict(zip(live, parallel(lambda d: neighbors(plan.namespace(d)), live), strict=True))
    ends = []
    for device in live:
        for link in plan.links_of(device):
            end, other = link.end(device), link.other(device)
            gone = link.cable in dead_cables or other.device in dead_devices
            found = tuple((n.system, n.port) for n in seen[device].get(end.ifname, []))
            ends.append(EndLook(device, end.port, link.cable, None if gone else (other.device, other.port), found, link.cable not in silent_cables))
    return ends


def wait_for_lldp(plan: LabPlan, dead_cables: set[str], silent_cables: set[str], dead_devices: set[str], timeout: float = SETTLE_SECONDS) -> list[EndLook]:
    """`look` until every end is as planned or `timeout` seconds passed; the last look."""
    deadline = time.monotonic() + timeout
    while True:
        ends = look(plan, dead_cables, silent_cables, dead_devices)
        if all(end.ok for end in ends) or time.monotonic() > deadline:
            return ends
        time.sleep(POLL_SECONDS)
