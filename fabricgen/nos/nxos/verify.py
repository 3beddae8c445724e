"""The two getters of issue 20's contract that NAPALM's nxos driver lacks, from NX-OS's own JSON.

NAPALM's NX-API driver (napalm/nxos/nxos.py, 5.x) has `cli(commands)` with text encoding only;
NX-OS prints JSON for any show command piped to `| json`, so each extension sends one
`show ... | json` through `cli` (the read-only wrapper lets only show commands pass) and parses
the text. NX-OS JSON nests rows as TABLE_<x> -> ROW_<x>, and a table of one row holds that row as
an object instead of a list of one (napalm/nxos/nxos.py `_get_table_rows` handles the same).

- get_ecmp_widths: `show ip route | json` (default VRF): TABLE_vrf/ROW_vrf -> TABLE_addrf/ROW_addrf
  -> TABLE_prefix/ROW_prefix with `ipprefix` and `ucast-nhops` (the number of unicast next hops),
  the shape of NX-OS's documented JSON route table (Cisco, "Nexus 9000 NX-OS Programmability
  Guide", NX-API / `| json` output; the same keys as NAPALM's own nxos getters read for routes).
- get_lossless_counters: `show interface priority-flow-control | json`: one ROW per interface
  with its PFC mode, operational VL bitmap and the received / transmitted per-priority pause
  (PPP) frame totals (columns "Port Mode Oper(VL bmap) RxPPP TxPPP" of the text form, Cisco Nexus
  9000 NX-OS Quality of Service Configuration Guide, "Configuring Priority Flow Control",
  "Verifying the Priority Flow Control Configuration"). The totals are per interface, not per
  priority: they are given to the priority the VL bitmap enables when it enables exactly one
  (fabricgen's NX-OS configs enable only the lossless one), else to the lowest enabled. NX-OS's
  queuing JSON (`show queuing interface`) is not parsed: its key names for WRED/ECN marks could not
  be confirmed from a published sample, so `ecn_marked` and `pfcwd_storms` are None (not reported).
  The JSON key names used here are UNVERIFIED against a switch (see the README's Unverified list);
  tests/data/verify/nxos-*.json are recordings written from these documents, not captured.

Answers are parsed strictly: a table or row of another shape, a row without its name, a count
that is not a whole number of at most 64 bits raises AnswerError (the getter then reports the
device's answer as malformed); only a table NX-OS leaves out (no rows) reads as empty.

What verify reads of an NX-OS build (the package's VERIFY part): the config as `show
running-config` gives it (the file itself), each port's `mtu`, and the config with its secret
slots masked.
"""

from __future__ import annotations

import json
import re

from fabricgen.basics.trust import check_interface_name, quoted
from fabricgen.build.secrets import mask_text
from fabricgen.verify.answers import MAX_CONFIG, MAX_COUNT, MAX_ENTRIES, AnswerError

ROUTES = "show ip route | json"
PFC = "show interface priority-flow-control | json"
_BITMAP = re.compile(r"\(\s*(?:0x)?([0-9a-fA-F]+)\s*\)")


def rows(table: dict, table_name: str, row_name: str) -> list[dict]:
    """table[table_name][row_name] as a list (NX-OS writes one row as an object); [] when the
    table is absent (NX-OS leaves an empty one out)."""
    if table.get(table_name) is None:
        return []
    inner = table[table_name]
    value = inner.get(row_name) if isinstance(inner, dict) else None
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise AnswerError(f"{table_name}.{row_name} is neither a row nor a list of rows")
    if len(value) > MAX_ENTRIES:
        raise AnswerError(f"{table_name} has more than {MAX_ENTRIES} rows")
    return value


def _answer(device, command: str) -> dict:
    """The JSON object `command` answered ({} for no answer: NX-OS prints nothing for an empty table)."""
    answers = device.cli([command])
    text = answers.get(command, "") if isinstance(answers, dict) else None
    if isinstance(text, dict):  # a driver that parsed it already
        return text
    if not isinstance(text, str):
        raise AnswerError(f"`{command}` answered {type(text).__name__}, not text")
    if len(text) > MAX_CONFIG:
        raise AnswerError(f"`{command}` answered more than {MAX_CONFIG} characters")
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        raise AnswerError(f"`{command}` did not answer JSON") from None
    if not isinstance(value, dict):
        raise AnswerError(f"`{command}` did not answer a JSON object")
    return value


def ecmp_widths(device) -> dict[str, int]:
    """{prefix: unicast next hops} of the default VRF's IPv4 table."""
    widths: dict[str, int] = {}
    for vrf in rows(_answer(device, ROUTES), "TABLE_vrf", "ROW_vrf"):
        if vrf.get("vrf-name-out", "default") != "default":
            continue
        for family in rows(vrf, "TABLE_addrf", "ROW_addrf"):
            for prefix in rows(family, "TABLE_prefix", "ROW_prefix"):
                name = prefix.get("ipprefix")
                if not isinstance(name, str):
                    raise AnswerError(f"a ROW_prefix has ipprefix {quoted(name)}, not a prefix")
                widths[name] = _count(prefix.get("ucast-nhops"), f"{quoted(name)} ucast-nhops")
    return widths


def lossless_counters(device) -> dict[str, dict]:
    """{interface: {"pfc_rx": {priority: frames}, "pfc_tx": {...}, "pfcwd_storms": None, "ecn_marked": None}}."""
    found: dict[str, dict] = {}
    for row in rows(_answer(device, PFC), "TABLE_ppp", "ROW_ppp"):
        name = row.get("if_name_str") or row.get("if_name")
        try:
            port = _long_name(check_interface_name(name)) if isinstance(name, str) else None
        except ValueError:
            port = None
        if port is None:
            raise AnswerError(f"a ROW_ppp has if_name_str {quoted(name)}, not an interface name")
        bitmap = row.get("oper_vl_bmap", row.get("oper", ""))
        if not isinstance(bitmap, str):
            raise AnswerError(f"{port} oper_vl_bmap is {quoted(bitmap)}, not text")
        priority = _priority(bitmap)
        rx, tx = _count(row.get("rx_ppp"), f"{port} rx_ppp"), _count(row.get("tx_ppp"), f"{port} tx_ppp")
        found[port] = {
            "pfc_rx": {priority: rx} if priority is not None else {},
            "pfc_tx": {priority: tx} if priority is not None else {},
            "pfcwd_storms": None,
            "ecn_marked": None,
        }
    return found


COUNT = re.compile(r"[0-9]{1,20}")  # a 64-bit counter has at most 20 digits


def _count(value: object, what: str) -> int:
    """A count NX-OS writes as a number or a string of ASCII digits, at most 64 bits; AnswerError
    for anything else (a superscript digit passes str.isdigit but not int(); a bool is not a count)."""
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif isinstance(value, str) and COUNT.fullmatch(value):
        count = int(value)
    else:
        raise AnswerError(f"{what} is {quoted(value)}, not a count")
    if not 0 <= count <= MAX_COUNT:
        raise AnswerError(f"{what} is {count}, not a count of at most 64 bits")
    return count


def _priority(bitmap: str) -> int | None:
    """The lowest priority of an operational VL bitmap such as "On (8)" (bit 3: priority 3)."""
    match = _BITMAP.search(bitmap)
    if not match:
        return None
    value = int(match.group(1), 16)
    return (value & -value).bit_length() - 1 if value else None


def _long_name(name: str) -> str:
    """NX-OS's short `Eth1/1` as the build names it (`Ethernet1/1`)."""
    return "Ethernet" + name[3:] if name.startswith("Eth") and not name.startswith("Ethernet") else name


EXTENSIONS = {"get_ecmp_widths": ecmp_widths, "get_lossless_counters": lossless_counters}


# --- what verify reads of an NX-OS build ---------------------------------------------------------


def mask_slots(text: str) -> str:
    """A running config with every NX-OS secret slot masked (fabricgen.build.secrets)."""
    return mask_text(text, "nxos")
