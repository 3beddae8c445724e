"""What a SONiC switch answers to the driver's read-only commands, parsed strictly.

In: the text of one command's answer (lldpctl JSON, sonic-utilities' tables, sonic-db-cli JSON,
FRR JSON). Out: NAPALM's return formats (or fabricgen's two extensions, see SonicDriver). Every
answer is hostile: a shape other than the documented one raises AnswerError naming what was wrong,
never a KeyError; the driver turns it into NAPALM's CommandErrorException naming the command.
Sources are cited beside each parser (sonic-utilities 202405, lldpd 1.0.16, FRR 8).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from fabricgen.trust import check_interface_name, printable, quoted

MAX_TLV = 255  # an LLDP string TLV carries at most 255 octets (IEEE 802.1AB-2016, 8.5)
DARK_DBM = -40.0
MAX_ENTRIES = 100_000  # no switch has this many ports, queues, neighbours or routes per answer


class AnswerError(ValueError):
    """The answer is not in the shape the command documents."""


# --- lldpctl -f json --------------------------------------------------------------------------------
# lldpd's JSON writer (src/client/json_writer.c, json_element_cleanup): an array of one element is
# replaced by that element, an object whose only key is "value" by that value, and an object with
# a "name" key becomes {name: rest}. So `interface` is absent (no neighbour), one object
# {"Ethernet0": {...}} (one neighbour) or a list of such one-key objects (several; a port with two
# neighbours appears twice); `chassis` is {"<sysname>": {...}} or, without a system name TLV,
# {"id": ...}; `capability` is one object or a list. tests/data/lldpctl/ holds captures.

# lldpd's capability names (src/lib/atoms/chassis.c) -> NAPALM's (napalm.base.constants.LLDP_CAPAB_TRANFORM_TABLE)
_CAPABILITIES = {
    "Other": "other",
    "Repeater": "repeater",
    "Bridge": "bridge",
    "Wlan": "wlan-access-point",
    "Router": "router",
    "Telephone": "telephone",
    "Docsis": "docsis-cable-device",
    "Station": "station",
}


def lldp_neighbors_detail(text: str) -> dict[str, list[dict[str, Any]]]:
    """NAPALM's get_lldp_neighbors_detail from `lldpctl -f json`: {local port: [neighbour, ...]}.

    lldpd names local ports by their kernel interface; on SONiC the kernel interface of a front
    panel port is named as its config_db PORT key (Ethernet0), so they are used as they are
    (`sonic_port_of_kernel_interface`)."""
    document = _json_object(text)
    lldp = document.get("lldp")
    if isinstance(lldp, list) and lldp in ([], [{}]):  # json0 with nothing: [{}]
        return {}
    if not isinstance(lldp, dict):
        raise AnswerError('no "lldp" object at the top')
    entries = lldp.get("interface", [])
    result: dict[str, list[dict[str, Any]]] = {}
    for entry in _as_list(entries, "interface"):
        if not isinstance(entry, dict) or len(entry) != 1:
            raise AnswerError("an interface entry is not one {name: neighbour} object")
        ((kernel_name, neighbour),) = entry.items()
        port = sonic_port_of_kernel_interface(kernel_name)
        result.setdefault(port, []).append(_neighbour(port, neighbour))
    return result


def lldp_neighbors(detail: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, str]]]:
    """NAPALM's get_lldp_neighbors from the detail: {local port: [{"hostname", "port"}]}."""
    return {port: [{"hostname": n["remote_system_name"], "port": n["remote_port"]} for n in neighbours] for port, neighbours in detail.items()}


def sonic_port_of_kernel_interface(name: object) -> str:
    """The config_db port name of a kernel interface: the same name on SONiC (the hostif a port's
    kernel interface is created with is the PORT key: sonic-swss portsyncd/portmgrd)."""
    if not isinstance(name, str):
        raise AnswerError("an interface name is not a string")
    try:
        return check_interface_name(name)
    except ValueError as exc:
        raise AnswerError(str(exc)) from None


def _neighbour(port: str, neighbour: object) -> dict[str, Any]:
    if not isinstance(neighbour, dict):
        raise AnswerError(f"the neighbour on {port} is not an object")
    chassis = _field(neighbour, "chassis", dict, port)
    if "id" in chassis:  # no system name TLV: the chassis object itself
        name, body = "", chassis
    elif len(chassis) == 1:
        ((name, body),) = chassis.items()
        if not isinstance(body, dict):
            raise AnswerError(f"the chassis of the neighbour on {port} is not an object")
    else:
        raise AnswerError(f"the chassis of the neighbour on {port} is neither {{name: ...}} nor {{id: ...}}")
    port_tlv = _field(neighbour, "port", dict, port)
    capabilities = [_capability(item, port) for item in _as_list(body.get("capability", []), "capability")]
    return {
        "parent_interface": "",
        "remote_port": _tlv(_id_value(port_tlv, port), "port id", port),
        "remote_port_description": _tlv(port_tlv.get("descr", ""), "port description", port),
        "remote_chassis_id": _tlv(_id_value(body, port), "chassis id", port),
        "remote_system_name": _tlv(name, "system name", port),
        "remote_system_description": _tlv(body.get("descr", ""), "system description", port),
        "remote_system_capab": [capability for capability, _ in capabilities],
        "remote_system_enable_capab": [capability for capability, enabled in capabilities if enabled],
    }


def _id_value(tlv: dict, port: str) -> object:
    ident = tlv.get("id")
    if isinstance(ident, dict) and "value" in ident:
        return ident["value"]
    raise AnswerError(f"an id of the neighbour on {port} has no value")


def _capability(item: object, port: str) -> tuple[str, bool]:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str) or not isinstance(item.get("enabled"), bool):
        raise AnswerError(f"a capability of the neighbour on {port} is not {{type, enabled}}")
    return _CAPABILITIES.get(item["type"], "other"), item["enabled"]


def _tlv(value: object, what: str, port: str) -> str:
    if not isinstance(value, str):
        raise AnswerError(f"the {what} of the neighbour on {port} is not a string")
    if len(value) > MAX_TLV:  # lldpd writes one character per octet (U+FFFD for an invalid one)
        raise AnswerError(f"the {what} of the neighbour on {port} is longer than an LLDP TLV")
    return printable(value)


# --- sonic-utilities tables (tabulate "simple", stralign right) -------------------------------------


def simple_table(text: str, header: list[str]) -> list[dict[str, str]]:
    """Rows of a `tabulate(..., tablefmt="simple")` table whose header is exactly `header`: the
    dashes line under the header gives each column's span (columns are two spaces apart)."""
    lines = [line for line in text.splitlines() if line.strip()]
    for index, line in enumerate(lines[:-1]):
        if line.split() == [word for name in header for word in name.split()] and set(lines[index + 1]) <= {"-", " "}:
            spans = [match.span() for match in re.finditer(r"-+", lines[index + 1])]
            if len(spans) != len(header):
                raise AnswerError(f"the table has {len(spans)} columns, not {len(header)}")
            rows: list[dict[str, str]] = []
            for row in lines[index + 2 :]:
                if len(rows) >= MAX_ENTRIES:
                    raise AnswerError(f"more than {MAX_ENTRIES} rows")
                cells = [row[start : (spans[i + 1][0] if i + 1 < len(spans) else len(row))].strip() for i, (start, _) in enumerate(spans)]
                rows.append(dict(zip(header, cells, strict=True)))
            return rows
    raise AnswerError(f"no table with the columns {' | '.join(header)}")


def speed_mbps(text: str, port: str) -> float:
    """intfutil's speed (scripts/intfutil port_speed_parse: '400G', '2.5G', '100M') in Mbps; a port
    with no speed ('N/A') is 0.0."""
    if text == "N/A":
        return 0.0
    match = re.fullmatch(r"(\d+(?:\.\d)?)([GM])", text)
    if not match:
        raise AnswerError(f"the speed of {port} is {quoted(text)}, not like 400G or 100M")
    return float(match.group(1)) * (1000 if match.group(2) == "G" else 1)


def interfaces(status: list[dict[str, str]], descriptions: list[dict[str, str]], mac: str) -> dict[str, dict[str, Any]]:
    """NAPALM's get_interfaces from `show interfaces status` and `show interfaces description`
    rows; `mac`: the switch's (DEVICE_METADATA|localhost mac), every front panel port routes with it."""
    description_of = {row["Interface"]: row["Description"] for row in descriptions}
    result = {}
    for row in status:
        port = sonic_port_of_kernel_interface(row["Interface"])
        if port.startswith("PortChannel"):
            continue  # NAPALM lists ports; a port channel's members are listed themselves
        mtu = row["MTU"]
        if not mtu.isdigit():
            raise AnswerError(f"the MTU of {port} is {quoted(mtu)}, not a number")
        description = description_of.get(port, "")
        result[port] = {
            "is_up": _state(row["Oper"], port) == "up",
            "is_enabled": _state(row["Admin"], port) == "up",
            "description": "" if description == "N/A" else printable(description),
            "last_flapped": -1.0,  # intfutil's status does not say; NAPALM's "unknown"
            "speed": speed_mbps(row["Speed"], port),
            "mtu": int(mtu),
            "mac_address": mac,
        }
    return result


def _state(value: str, port: str) -> str:
    if value not in ("up", "down", "N/A"):
        raise AnswerError(f"the state of {port} is {quoted(value)}, not up or down")
    return value


# --- sonic-db-cli EVAL (one JSON string; swss-common common/redisreply.cpp prints a string reply as is)


def counters_json(text: str) -> dict[str, dict[str, int]]:
    """{object name: {counter: value}} as the driver's Lua scripts answer (cjson); values are
    decimal strings in COUNTERS_DB (syncd writes them so)."""
    document = _json_object(text)
    if len(document) > MAX_ENTRIES:
        raise AnswerError(f"more than {MAX_ENTRIES} objects")
    result = {}
    for name, counters in document.items():
        if isinstance(counters, list) and not counters:  # cjson writes an empty table as {} or []
            counters = {}
        if not isinstance(counters, dict):
            raise AnswerError(f"the counters of {quoted(name)} are not an object")
        values = {}
        for counter, value in counters.items():
            if not isinstance(value, str) or not value.isdigit() or len(value) > 20:
                raise AnswerError(f"counter {quoted(counter)} of {quoted(name)} is {quoted(value)}, not a decimal count")
            values[counter] = int(value)
        result[name] = values
    return result


def string_tables(text: str) -> dict[str, dict[str, str]]:
    """{key: {field: value}} of hashes as the driver's Lua scripts answer them (cjson)."""
    document = _json_object(text)
    if len(document) > MAX_ENTRIES:
        raise AnswerError(f"more than {MAX_ENTRIES} keys")
    result = {}
    for key, fields in document.items():
        if isinstance(fields, list) and not fields:
            fields = {}
        if not isinstance(fields, dict) or not all(isinstance(value, str) and len(value) <= MAX_TLV for value in fields.values()):
            raise AnswerError(f"{quoted(key)} is not a hash of short strings")
        result[key] = fields
    return result


def interfaces_counters(ports: dict[str, dict[str, int]], fields: dict[str, str]) -> dict[str, dict[str, int]]:
    """NAPALM's get_interfaces_counters: `fields` maps NAPALM's names to SAI counter names; a
    counter the switch does not keep is -1."""
    return {sonic_port_of_kernel_interface(port): {name: counters.get(sai, -1) for name, sai in fields.items()} for port, counters in ports.items()}


def lossless_counters(ports: dict[str, dict[str, int]], queues: dict[str, dict[str, int]], pfc: str, storms: str, ecn: str) -> dict[str, dict[str, Any]]:
    """fabricgen's get_lossless_counters: `pfc` is the SAI name pattern with {priority} and {way}
    (RX/TX); `storms`/`ecn` the per-queue counters, summed over a port's queues ("Ethernet0:3" in
    COUNTERS_QUEUE_NAME_MAP), None when no queue of the port keeps them."""
    per_port: dict[str, dict[str, list[int]]] = {}
    for queue, counters in queues.items():
        port, colon, index = queue.rpartition(":")
        if not colon or not index.isdigit():
            raise AnswerError(f"queue {quoted(queue)} is not PORT:INDEX")
        sums = per_port.setdefault(port, {"storms": [], "ecn": []})
        if storms in counters:
            sums["storms"].append(counters[storms])
        if ecn in counters:
            sums["ecn"].append(counters[ecn])
    result = {}
    for port, counters in ports.items():
        name = sonic_port_of_kernel_interface(port)
        sums = per_port.get(port, {"storms": [], "ecn": []})
        result[name] = {
            "pfc_rx": {p: counters[key] for p in range(8) if (key := pfc.format(priority=p, way="RX")) in counters},
            "pfc_tx": {p: counters[key] for p in range(8) if (key := pfc.format(priority=p, way="TX")) in counters},
            "pfcwd_storms": sum(sums["storms"]) if sums["storms"] else None,
            "ecn_marked": sum(sums["ecn"]) if sums["ecn"] else None,
        }
    return result


def optics(document: dict[str, dict[str, str]], prefix: str) -> dict[str, dict[str, Any]]:
    """NAPALM's get_optics from STATE_DB TRANSCEIVER_DOM_SENSOR|<port> hashes (xcvrd writes them;
    sfpshow reads them: rx<N>power and tx<N>power in dBm, tx<N>bias in mA). A lane whose values
    are N/A (no DOM) is left out, a port with no lane too."""
    result: dict[str, dict[str, Any]] = {}
    for key, sensors in document.items():
        if not key.startswith(prefix) or not isinstance(sensors, dict):
            raise AnswerError(f"{quoted(key)} is not a {prefix}PORT hash")
        port = sonic_port_of_kernel_interface(key[len(prefix) :])
        channels = []
        for lane in range(1, 9):
            values = {
                name: _reading(sensors.get(f"{field}{lane}{unit}"), key, f"{field}{lane}{unit}")
                for name, field, unit in (("input_power", "rx", "power"), ("output_power", "tx", "power"), ("laser_bias_current", "tx", "bias"))
            }
            if all(value is None for value in values.values()):
                continue
            channels.append({"index": lane - 1, "state": {name: _instant(value) for name, value in values.items()}})
        if channels:
            result[port] = {"physical_channels": {"channel": channels}}
    return result


def _reading(value: object, key: str, field: str) -> float | None:
    if value is None or value in ("N/A", ""):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise AnswerError(f"{key} {field} is {quoted(value)}, not a number") from None
    if not math.isfinite(number):
        # no light gives log10(0) = -inf dBm; NAPALM wants a finite float: -40 dBm is below any
        # receiver's sensitivity (DARK_DBM)
        return DARK_DBM if number < 0 else None
    return number


def _instant(value: float | None) -> dict[str, float]:
    """NAPALM's reading: instant, avg, min, max; SONiC keeps only the instant value."""
    reading = 0.0 if value is None else value
    return {"instant": reading, "avg": 0.0, "min": 0.0, "max": 0.0}


# --- FRR `show ip route json` -------------------------------------------------------------------


def ecmp_widths(text: str) -> dict[str, int]:
    """{prefix: next hops} for the selected route of each prefix, counting the next hops zebra
    installed in the FIB ("fib": true; FRR zebra/zebra_vty.c, show ip route json)."""
    document = _json_object(text)
    if len(document) > MAX_ENTRIES:
        raise AnswerError(f"more than {MAX_ENTRIES} prefixes")
    result = {}
    for prefix, routes in document.items():
        if not isinstance(routes, list):
            raise AnswerError(f"the routes of {quoted(prefix)} are not a list")
        for route in routes:
            if not isinstance(route, dict):
                raise AnswerError(f"a route of {quoted(prefix)} is not an object")
            if route.get("selected") is not True:
                continue
            hops = route.get("nexthops", [])
            if not isinstance(hops, list) or not all(isinstance(hop, dict) for hop in hops):
                raise AnswerError(f"the next hops of {quoted(prefix)} are not a list of objects")
            result[prefix] = sum(1 for hop in hops if hop.get("fib") is True)
    return result


# --- helpers -------------------------------------------------------------------------------------


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise AnswerError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AnswerError("not a JSON object")
    return value


def _as_list(value: object, what: str) -> list:
    """lldpd writes a list of one as the one element."""
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_ENTRIES:
        raise AnswerError(f"more than {MAX_ENTRIES} {what} entries")
    return items


def _field(value: dict, key: str, kind: type, port: str) -> Any:
    found = value.get(key)
    if not isinstance(found, kind):
        raise AnswerError(f"the neighbour on {port} has no {key} object")
    return found
