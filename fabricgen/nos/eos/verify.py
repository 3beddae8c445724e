"""The two getters of issue 20's contract that NAPALM's eos driver lacks, from eAPI's JSON.

NAPALM's EOSDriver (napalm/eos/eos.py, 5.x) has `cli(commands, encoding="json")`, which runs one
command through eAPI and returns EOS's own JSON object for it; each extension sends one `show`
command that way (verify's read-only wrapper lets only show commands pass) and reads it strictly.

- get_ecmp_widths: `show ip route vrf default`: `vrfs` -> `default` -> `routes` -> PREFIX -> `vias`,
  a list of next hops (`nexthopAddr`, `interface`): the keys NAPALM's own get_route_to reads from
  the same command (napalm/eos/eos.py), and eAPI's documented route table. A route's width is
  the number of its vias.
- get_lossless_counters: `show priority-flow-control counters detail`: `interfaces` -> NAME ->
  `priorities` -> "P" -> `rxFrames`, `txFrames`, the PFC frames received and sent per priority
  (the per-priority columns of the text form, Arista EOS User Manual "Quality of Service",
  "Priority Flow Control"); and `show priority-flow-control counters watchdog`: `interfaces` ->
  NAME -> `txQueues` -> "Q" -> `stuckCount`, the storms the watchdog caught per queue (an
  interface is absent until its first event). Arista publishes no schema of these two answers:
  the key names are those the TAAC health checks read from EOS switches (taac/health_checks,
  `show interface X priority-flow-control counters detail | json` and `show priority-flow-control
  counters watchdog | json`), UNVERIFIED by fabricgen against a switch; tests/data/eos/ holds
  answers written from them, not captured. ECN marks are not read (`ecn_marked` None).

Answers are parsed strictly: an object of another shape, a route or interface name that is not
one, a count that is not a whole number of at most 64 bits raises AnswerError (the getter then
reports the device's answer as malformed); sizes are bounded as for every getter.

What verify reads of an EOS build (the package's VERIFY part): the config as `show running-config`
gives it (the file itself), each port's `mtu`, and the config with its secret slots masked.
"""

from __future__ import annotations

from fabricgen.basics.trust import check_interface_name, printable, quoted
from fabricgen.build.secrets import mask_text
from fabricgen.verify.answers import MAX_COUNT, MAX_ENTRIES, AnswerError

ROUTES = "show ip route vrf default"
PFC = "show priority-flow-control counters detail"
WATCHDOG = "show priority-flow-control counters watchdog"


def _answer(device, command: str) -> dict:
    """The JSON object eAPI answered to `command`."""
    answers = device.cli([command], encoding="json")
    value = answers.get(command) if isinstance(answers, dict) else None
    if not isinstance(value, dict):
        raise AnswerError(f"`{command}` did not answer a JSON object")
    return value


def _table(value: object, what: str) -> dict:
    """An object of at most MAX_ENTRIES members ({} when absent: EOS leaves an empty one out)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AnswerError(f"{what} is not an object")
    if len(value) > MAX_ENTRIES:
        raise AnswerError(f"{what} has more than {MAX_ENTRIES} entries")
    return value


def ecmp_widths(device) -> dict[str, int]:
    """{prefix: next hops} of the default VRF's IPv4 table (prefixes checked by verify's answers)."""
    vrfs = _table(_answer(device, ROUTES).get("vrfs"), "vrfs")
    routes = _table(_table(vrfs.get("default"), "vrfs.default").get("routes"), "vrfs.default.routes")
    widths = {}
    for prefix, route in routes.items():
        vias = route.get("vias") if isinstance(route, dict) else None
        if not isinstance(vias, list) or not all(isinstance(via, dict) for via in vias):
            raise AnswerError(f"route {quoted(prefix)} has no list of vias")
        widths[prefix] = len(vias)
    return widths


def lossless_counters(device) -> dict[str, dict]:
    """{interface: {"pfc_rx": {priority: frames}, "pfc_tx": {...}, "pfcwd_storms": storms or None, "ecn_marked": None}}."""
    interfaces = _table(_answer(device, PFC).get("interfaces"), "interfaces")
    storms = _watchdog_storms(_table(_answer(device, WATCHDOG).get("interfaces"), "watchdog interfaces"))
    found: dict[str, dict] = {}
    for name, row in interfaces.items():
        port = _port(name)
        priorities = _table(row.get("priorities") if isinstance(row, dict) else None, f"{port} priorities")
        rx, tx = {}, {}
        for key, counts in priorities.items():
            priority = _priority(key, port)
            if not isinstance(counts, dict):
                raise AnswerError(f"{port} priority {priority} is not an object")
            rx[priority] = _count(counts.get("rxFrames"), f"{port} priority {priority} rxFrames")
            tx[priority] = _count(counts.get("txFrames"), f"{port} priority {priority} txFrames")
        # the watchdog lists an interface only after its first event: none yet is 0 storms
        found[port] = {"pfc_rx": rx, "pfc_tx": tx, "pfcwd_storms": storms.get(port, 0), "ecn_marked": None}
    return found


def _watchdog_storms(interfaces: dict) -> dict[str, int]:
    storms = {}
    for name, row in interfaces.items():
        port = _port(name)
        queues = _table(row.get("txQueues") if isinstance(row, dict) else None, f"{port} txQueues")
        total = 0
        for queue, counts in queues.items():
            if not isinstance(counts, dict):
                raise AnswerError(f"{port} txQueue {quoted(queue)} is not an object")
            total += _count(counts.get("stuckCount"), f"{port} txQueue {quoted(queue)} stuckCount")
        storms[port] = min(total, MAX_COUNT)
    return storms


def _port(name: object) -> str:
    if isinstance(name, str):
        try:
            return check_interface_name(name)
        except ValueError:
            pass
    raise AnswerError(f"{quoted(name)} is not an interface name")


def _priority(key: object, port: str) -> int:
    if isinstance(key, str) and len(key) == 1 and key in "01234567":
        return int(key)
    raise AnswerError(f"{port} has priority {quoted(key)}, not 0-7")


def _count(value: object, what: str) -> int:
    """A count eAPI writes as a JSON number: a whole one of at most 64 bits (not a bool or a float)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    shown = quoted(value) if isinstance(value, str) else printable(repr(value))[:40]  # a string "12" is not the number 12
    raise AnswerError(f"{what} is {shown}, not a count")


EXTENSIONS = {"get_ecmp_widths": ecmp_widths, "get_lossless_counters": lossless_counters}


# --- what verify reads of an EOS build ----------------------------------------------------------


def mask_slots(text: str) -> str:
    """A running config with every EOS secret slot masked (fabricgen.build.secrets)."""
    return mask_text(text, "eos")
