"""What a SONiC switch answers to the driver's read-only commands, parsed strictly.

In: the text of one command's answer (lldpctl JSON, sonic-utilities' tables and texts, sonic-db-cli
JSON, FRR JSON, config_db JSON, /proc/uptime). Out: NAPALM's return formats (or fabricgen's two
extensions, see SonicDriver). Every answer is hostile: a shape other than the documented one, a
type other than the documented one (a count as a string, a peer as a string, a list for an
object) or a number out of range raises AnswerError naming what was wrong, never a KeyError or an
AttributeError; the driver turns it into NAPALM's CommandErrorException naming the command. The
driver bounds the size of every answer before it gets here. Sources are cited beside each parser
(sonic-utilities 202405, lldpd 1.0.16, FRR 8.4).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from typing import Any

from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import check_interface_name, check_token, has_invisible, printable, quoted
from fabricgen.verify.answers import DARK_DBM, MAX_AS, MAX_ENTRIES, MAX_PREFIXES  # the bounds verify checks every answer against

MAX_TLV = 255  # an LLDP string TLV carries at most 255 octets (IEEE 802.1AB-2016, 8.5)


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
    sfpshow reads them: rx<N>power and tx<N>power in dBm, tx<N>bias in mA). A reading that is N/A
    is left out (never read as 0), a lane with none too, a port with no lane too; NaN, +inf, or a
    negative bias is malformed."""
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
            channels.append({"index": lane - 1, "state": {name: _instant(value) for name, value in values.items() if value is not None}})
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
    if field.endswith("power") and number == -math.inf:
        # no light gives log10(0) = -inf dBm; NAPALM wants a finite float: -40 dBm is below any
        # receiver's sensitivity (DARK_DBM)
        return DARK_DBM
    if not math.isfinite(number) or (field.endswith("bias") and number < 0):
        raise AnswerError(f"{key} {field} is {quoted(value)}, not a reading")
    return number


def _instant(value: float) -> dict[str, float]:
    """NAPALM's reading: instant, avg, min, max; SONiC keeps only the instant value."""
    return {"instant": value, "avg": 0.0, "min": 0.0, "max": 0.0}


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


# --- config_db, `show version`, /proc/uptime, `sonic-installer list` (get_facts, get_boot_images) ---

MAX_NAME = 253  # a host name (RFC 1035's bound for a DNS name)


def config_db(text: str) -> dict[str, Any]:
    """The running CONFIG_DB of `show runningconfiguration all`: a JSON object of tables."""
    document = _json_object(text)
    for table, entries in document.items():
        if not isinstance(entries, dict):
            raise AnswerError(f"table {quoted(table)} is not an object of entries")
    return document


def device_metadata(db: dict[str, Any]) -> dict[str, str]:
    """DEVICE_METADATA|localhost (sonic-yang-models sonic-device_metadata.yang: every field a
    string), {} when config_db holds none."""
    localhost = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if not isinstance(localhost, dict):
        raise AnswerError("DEVICE_METADATA localhost is not an object")
    for key, value in localhost.items():
        if not isinstance(value, str) or len(value) > MAX_TLV:
            raise AnswerError(f"DEVICE_METADATA localhost {quoted(key)} is {quoted(value)}, not a short string")
    return localhost


def port_names(db: dict[str, Any]) -> list[str]:
    """The PORT table's ports (config_db keys: interface names), in natural order."""
    ports = db.get("PORT", {})
    if len(ports) > MAX_ENTRIES:
        raise AnswerError(f"more than {MAX_ENTRIES} ports")
    return sorted((sonic_port_of_kernel_interface(name) for name in ports), key=natural_key)


def host_name(text: str, what: str = "host name") -> str:
    """A host name as a switch gives it (`hostname`, DEVICE_METADATA hostname): one printable word."""
    name = text.strip()
    if not name or len(name) > MAX_NAME or has_invisible(name) or " " in name:
        raise AnswerError(f"the {what} is {quoted(name)}, not one printable word of at most {MAX_NAME} characters")
    return name


def sonic_version(text: str) -> str:
    """The "SONiC Software Version: ..." line of `show version` (sonic-utilities show/main.py
    version), "" when it has none."""
    for line in text.splitlines():
        if line.startswith("SONiC Software Version"):
            return _line(line.split(":", 1)[1] if ":" in line else "", "SONiC software version")
    return ""


def first_line(text: str, what: str) -> str:
    """The first line of `text` (FRR's `show version`: "FRRouting 8.4.4 (...)")."""
    return _line(next(iter(text.strip().splitlines()), ""), what)


def uptime(text: str) -> float:
    """Seconds since boot: the first number of /proc/uptime (proc(5): "the uptime of the system
    (including time spent in suspend) and the amount of time spent in the idle process")."""
    first = next(iter(text.split()), "")
    if not re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,3})?", first):  # no nan, inf, sign or exponent
        raise AnswerError(f"the uptime is {quoted(first)}, not seconds like 1234.56")
    return float(first)


def boot_images(text: str) -> dict[str, str]:
    """{"current", "next"} of `sonic-installer list` ("Current: IMAGE", "Next: IMAGE"; sonic-utilities
    sonic_installer/main.py list_command)."""
    images = {"current": "", "next": ""}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in images:
            images[key.strip().lower()] = _line(value, f"{key.strip()} image")
    return images


# --- FRR `show bgp vrf all summary json` and `show bgp vrf all neighbors json` ----------------------
# bgpd/bgp_vty.c (FRR 8.4), bgp_show_summary: {vrf: {"ipv4Unicast": {"routerId", "as", "peers":
# {peer: {"remoteAs", "localAs", "state", "peerState", "pfxRcd", "pfxSnt", "peerUptimeMsec",
# "desc", ...}}}, "ipv6Unicast": ..., ...}}; a peer is keyed by its address, or by its interface for
# an unnumbered session ("idType": "interface"); pfxRcd only once Established. `neighbors json`:
# {vrf: {peer: {"remoteRouterId", "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter"}}},
# "vrfId", "vrfName"}}: only the summary's peers are read from it.

BGP_FAMILIES = {"ipv4Unicast": "ipv4", "ipv6Unicast": "ipv6"}  # FRR's keys -> NAPALM's
MAX_MSEC = 2**63 - 1


def bgp_summary(text: str) -> dict[str, dict[str, dict[str, Any]]]:
    """{vrf: {FRR family key: {"routerId": str, "as": int, "peers": {peer: {...}}}}}, the families of
    BGP_FAMILIES only, every field NAPALM's format needs checked."""
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for vrf, families in _json_object(text).items():
        where = f"VRF {quoted(vrf)}"
        _vrf_name(vrf)
        if not isinstance(families, dict):
            raise AnswerError(f"{where} is not an object of address families")
        result[vrf] = {}
        for key in BGP_FAMILIES:
            if key not in families:
                continue
            family = families[key]
            if not isinstance(family, dict):
                raise AnswerError(f"{where} {key} is not an object")
            peers = family.get("peers", {})
            if not isinstance(peers, dict):
                raise AnswerError(f"{where} {key} peers is not an object of peers")
            if len(peers) > MAX_ENTRIES:
                raise AnswerError(f"{where} {key} has more than {MAX_ENTRIES} peers")
            result[vrf][key] = {
                "routerId": _optional(family, "routerId", str, where) or "",
                "as": _number(family, "as", MAX_AS, where) or 0,
                "peers": {_peer_name(peer, where): _summary_peer(fields, f"{where} {key} peer {quoted(peer)}") for peer, fields in peers.items()},
            }
    return result


def _summary_peer(fields: object, where: str) -> dict[str, Any]:
    if not isinstance(fields, dict):
        raise AnswerError(f"{where} is not an object")
    state = _optional(fields, "state", str, where)
    if state is None:
        raise AnswerError(f"{where} has no state")
    description = _optional(fields, "desc", str, where) or ""
    if len(description) > MAX_TLV:
        raise AnswerError(f"{where} desc is longer than {MAX_TLV} characters")
    return {
        "state": _line(state, f"{where} state"),
        "peerState": _line(_optional(fields, "peerState", str, where) or "", f"{where} peerState"),
        "remoteAs": _number(fields, "remoteAs", MAX_AS, where),
        "localAs": _number(fields, "localAs", MAX_AS, where),
        "pfxRcd": _number(fields, "pfxRcd", MAX_PREFIXES, where),
        "pfxSnt": _number(fields, "pfxSnt", MAX_PREFIXES, where),
        "peerUptimeMsec": _number(fields, "peerUptimeMsec", MAX_MSEC, where),
        "desc": printable(description),
    }


def bgp_details(text: str, summary: dict[str, dict[str, dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
    """{(vrf, peer): {"remoteRouterId": str | None, "accepted": {FRR family key: int}}} for the peers
    of `summary` that `show bgp vrf all neighbors json` lists."""
    document = _json_object(text)
    result: dict[tuple[str, str], dict[str, Any]] = {}
    for vrf, families in summary.items():
        peers = {peer for family in families.values() for peer in family["peers"]}
        if not peers or vrf not in document:
            continue
        listed = document[vrf]
        if not isinstance(listed, dict):
            raise AnswerError(f"VRF {quoted(vrf)} is not an object of peers")
        for peer in sorted(peers & set(listed)):
            where = f"VRF {quoted(vrf)} peer {quoted(peer)}"
            fields = listed[peer]
            if not isinstance(fields, dict):
                raise AnswerError(f"{where} is not an object")
            router_id = _optional(fields, "remoteRouterId", str, where)
            if router_id is not None:
                try:
                    ipaddress.IPv4Address(router_id)
                except ValueError:
                    raise AnswerError(f"{where} remoteRouterId is {quoted(router_id)}, not a router id") from None
            info = _optional(fields, "addressFamilyInfo", dict, where) or {}
            accepted = {}
            for key in BGP_FAMILIES:
                family = info.get(key)
                if family is None:
                    continue
                if not isinstance(family, dict):
                    raise AnswerError(f"{where} addressFamilyInfo {key} is not an object")
                count = _number(family, "acceptedPrefixCounter", MAX_PREFIXES, f"{where} {key}")
                if count is not None:
                    accepted[key] = count
            result[(vrf, peer)] = {"remoteRouterId": router_id, "accepted": accepted}
    return result


def bgp_neighbors(summary: dict[str, dict[str, dict[str, Any]]], details: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """NAPALM's get_bgp_neighbors from bgp_summary and bgp_details (the default VRF is "global")."""
    result: dict[str, dict[str, Any]] = {}
    for vrf, families in summary.items():
        entry = result.setdefault("global" if vrf == "default" else vrf, {"router_id": "", "peers": {}})
        for key, family in families.items():
            entry["router_id"] = entry["router_id"] or family["routerId"]
            for address, peer in family["peers"].items():
                detail = details.get((vrf, address), {"remoteRouterId": None, "accepted": {}})
                is_up = peer["state"] == "Established"
                info = entry["peers"].setdefault(
                    address,
                    {
                        "local_as": peer["localAs"] if peer["localAs"] is not None else family["as"],
                        "remote_as": peer["remoteAs"] or 0,
                        "remote_id": detail["remoteRouterId"] or "0.0.0.0",
                        "is_up": is_up,
                        "is_enabled": "Admin" not in peer["state"] and peer["peerState"] != "Admin",
                        "description": peer["desc"],
                        "uptime": (peer["peerUptimeMsec"] or 0) // 1000 if is_up else -1,
                        "address_family": {},
                    },
                )
                received = peer["pfxRcd"] if peer["pfxRcd"] is not None else -1
                info["address_family"][BGP_FAMILIES[key]] = {
                    "received_prefixes": received,
                    "accepted_prefixes": detail["accepted"].get(key, received),
                    "sent_prefixes": peer["pfxSnt"] if peer["pfxSnt"] is not None else -1,
                }
    return result


def _vrf_name(name: str) -> str:
    try:
        return check_token(name)
    except ValueError as exc:
        raise AnswerError(f"a VRF name: {exc}") from None


def _peer_name(name: str, where: str) -> str:
    try:
        ipaddress.ip_address(name)
        return name
    except ValueError:
        pass
    try:
        return check_interface_name(name)
    except ValueError:
        raise AnswerError(f"{where}: peer {quoted(name)} is neither an address nor an interface") from None


def _optional(fields: dict, key: str, kind: type, where: str) -> Any:
    """fields[key] when present (of type `kind`), None when absent."""
    value = fields.get(key)
    if value is not None and not isinstance(value, kind):
        raise AnswerError(f"{where} {key} is {quoted(value)}, not {'text' if kind is str else 'an object' if kind is dict else kind.__name__}")
    return value


def _number(fields: dict, key: str, bound: int, where: str) -> int | None:
    """fields[key] when present: an integer (not a bool, a float or digits in a string) in 0..bound."""
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= bound:
        raise AnswerError(f"{where} {key} is {quoted(value)}, not a whole number from 0 to {bound}")
    return value


def _line(text: str, what: str) -> str:
    """One printable line of at most MAX_TLV characters (a version, an image name, a state)."""
    value = text.strip()
    if len(value) > MAX_TLV or has_invisible(value):
        raise AnswerError(f"the {what} is {quoted(value)}, not one printable line of at most {MAX_TLV} characters")
    return value


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
