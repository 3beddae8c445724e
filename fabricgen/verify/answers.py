"""What a switch may answer to each getter `verify` calls, checked before any check reads it.

In: what a driver's getter returned (NAPALM 5's formats, napalm/base/models.py, and fabricgen's
two extensions, see fabricgen/nos/sonic/driver.py). Out: the same data as frozen models, or an
`AnswerError` saying where and what is wrong. A device is hostile until checked like any other
input, whichever driver answers for it:

- types are exact: a boolean is a bool (`is_up: "false"` is malformed, not up), a count an int
  (not a bool, a float or digits in a string), a name or a description a string;
- numbers are finite and in range: no port is faster than 3.2T or has an MTU above 65,535, a
  counter fits 64 bits, an optical power lies within what a transceiver's DOM can report; -1 is
  NAPALM's "not known" where NAPALM uses it, and nothing else is negative;
- sizes are bounded: entries per answer, lanes per optic, characters per text, the running config;
- ports are interface names, BGP peers addresses (or, for FRR's unnumbered sessions, an
  interface), routes IP prefixes.

Text is kept as the device sent it (within its bound): every output escapes it when it prints it.
Validation is linear in the answer and runs in pydantic's core, once per getter and device.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

from fabricgen.basics.errors import dotted
from fabricgen.basics.trust import IPV4_OCTET, check_interface_name, printable, quoted
from fabricgen.basics.units import MAX_SPEED_GBPS

# Bounds the NOS modules' own parsers of device answers hold too (they import them from here)
MAX_ENTRIES = 100_000  # no switch has this many ports, queues, neighbours or routes per answer
MAX_AS = 4_294_967_295
MAX_PREFIXES = 2**32 - 1
MAX_LANES = 16  # optical lanes of one port (QSFP-DD and OSFP have 8)
MAX_TEXT = 1024  # characters of a description or an LLDP field (255 octets, escaped at most 4 times over)
MAX_CONFIG = 32 * 1024 * 1024  # characters of a running config (fabricgen's SONiC driver reads at most 32 MiB)
MAX_COUNT = 2**64 - 1  # interface and PFC counters are 64-bit
MAX_SPEED_MBPS = MAX_SPEED_GBPS * 1000
MAX_MTU = 65_535
MAX_ECMP = 65_536  # the catalog's bound on max_ecmp_paths
MAX_SECONDS = 10**10  # an uptime of three centuries
# Optical DOM (SFF-8472, CMIS) keeps power in units of 0.1 uW, so the weakest reading is -40 dBm
# (0 mW is -inf dBm: an instant reading of -inf is read as that floor, DARK_DBM); nothing pluggable
# emits 1 W (+30 dBm). Laser bias is kept in units of 2 uA, at most 131 mA (x4 with CMIS's
# multiplier): 1 A is no transceiver's.
MIN_DBM, MAX_DBM = -60.0, 30.0
DARK_DBM = -40.0
MAX_BIAS_MA = 1000.0


class AnswerError(ValueError):
    """A getter's answer is not in the format it documents."""


class _Answer(BaseModel):
    """Exact types (strict), fields verify does not read ignored, immutable once checked."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


def _unknown_or_non_negative(value: float) -> float:
    if value < 0 and value != -1:
        raise ValueError("is negative; only -1 (not known) may be")
    return value


def _peer_name(value: str) -> str:
    """An IP address, or the interface of an unnumbered session (FRR keys those by interface)."""
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    try:
        return check_interface_name(value)
    except ValueError:
        raise ValueError(f"{quoted(value)} is neither an IP address nor an interface name") from None


def _dark(value: object) -> object:
    """0 mW is -inf dBm: the weakest power DOM can report instead, so the no-light check sees it."""
    return DARK_DBM if value == -math.inf else value


Count = Annotated[int, Field(ge=-1, le=MAX_COUNT)]  # -1: the device does not keep it (NAPALM)
Total = Annotated[int, Field(ge=0, le=MAX_COUNT)]  # fabricgen's extensions say None instead
PrefixCount = Annotated[int, Field(ge=-1, le=MAX_PREFIXES)]
AsNumber = Annotated[int, Field(ge=0, le=MAX_AS)]
Seconds = Annotated[float, Field(ge=-1, le=MAX_SECONDS, allow_inf_nan=False), AfterValidator(_unknown_or_non_negative)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
ShortText = Annotated[str, Field(max_length=255)]
PortName = Annotated[str, AfterValidator(check_interface_name)]
PeerName = Annotated[str, AfterValidator(_peer_name)]
# An IPv4 prefix exactly, or an IPv6 one by its characters (checked in pydantic's core: a route
# table has thousands of them; a wrong one can only fail to match a planned prefix).
PREFIX = rf"^(?:{IPV4_OCTET}(?:\.{IPV4_OCTET}){{3}}/(?:3[0-2]|[12]?[0-9])|[0-9A-Fa-f.]{{0,39}}:[0-9A-Fa-f:.]{{0,39}}/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))$"
Prefix = Annotated[str, Field(max_length=64, pattern=PREFIX)]
Priority = Annotated[int, Field(ge=0, le=7)]
Dbm = Annotated[float, Field(ge=MIN_DBM, le=MAX_DBM, allow_inf_nan=False)]
InstantDbm = Annotated[float, BeforeValidator(_dark), Field(ge=MIN_DBM, le=MAX_DBM, allow_inf_nan=False)]
Milliamperes = Annotated[float, Field(ge=0, le=MAX_BIAS_MA, allow_inf_nan=False)]


# --- get_facts -----------------------------------------------------------------------------------


class Facts(_Answer):
    hostname: ShortText = ""
    fqdn: ShortText = ""
    vendor: Text = ""
    model: Text = ""
    os_version: Text = ""
    serial_number: Text = ""
    uptime: Seconds = -1.0
    interface_list: Annotated[list[PortName], Field(max_length=MAX_ENTRIES)] = []


# --- get_interfaces ------------------------------------------------------------------------------


class Interface(_Answer):
    is_up: bool
    is_enabled: bool
    description: Text = ""
    last_flapped: Seconds = -1.0
    speed: Annotated[float, Field(ge=-1, le=MAX_SPEED_MBPS, allow_inf_nan=False), AfterValidator(_unknown_or_non_negative)] = -1.0  # Mbps
    mtu: Annotated[int, Field(ge=-1, le=MAX_MTU)] = -1
    mac_address: ShortText = ""


# --- get_interfaces_counters ---------------------------------------------------------------------


class Counters(_Answer):
    tx_errors: Count = -1
    rx_errors: Count = -1
    tx_discards: Count = -1
    rx_discards: Count = -1
    tx_octets: Count = -1
    rx_octets: Count = -1
    tx_unicast_packets: Count = -1
    rx_unicast_packets: Count = -1
    tx_multicast_packets: Count = -1
    rx_multicast_packets: Count = -1
    tx_broadcast_packets: Count = -1
    rx_broadcast_packets: Count = -1


# --- get_bgp_neighbors ---------------------------------------------------------------------------


class AddressFamily(_Answer):
    received_prefixes: PrefixCount = -1
    accepted_prefixes: PrefixCount = -1
    sent_prefixes: PrefixCount = -1


class Peer(_Answer):
    is_up: bool
    is_enabled: bool = True
    local_as: AsNumber = 0
    remote_as: AsNumber = 0
    remote_id: ShortText = ""
    description: Text = ""
    uptime: Seconds = -1.0
    address_family: Annotated[dict[Annotated[str, Field(max_length=64)], AddressFamily], Field(max_length=64)] = {}


class Vrf(_Answer):
    router_id: ShortText = ""
    peers: Annotated[dict[PeerName, Peer], Field(max_length=MAX_ENTRIES)] = {}


# --- get_lldp_neighbors_detail -------------------------------------------------------------------


class Neighbour(_Answer):
    parent_interface: Text = ""
    remote_port: Text = ""
    remote_port_description: Text = ""
    remote_chassis_id: Text = ""
    remote_system_name: Text = ""
    remote_system_description: Text = ""
    remote_system_capab: Annotated[list[ShortText], Field(max_length=32)] = []
    remote_system_enable_capab: Annotated[list[ShortText], Field(max_length=32)] = []


# --- get_optics ----------------------------------------------------------------------------------


class Power(_Answer):
    """A power reading in dBm, with the alarm thresholds where the driver reports them."""

    instant: InstantDbm
    avg: Dbm = 0.0
    min: Dbm = 0.0
    max: Dbm = 0.0
    low_alarm: Dbm | None = None
    high_alarm: Dbm | None = None


class Bias(_Answer):
    """A laser bias current in mA, with the alarm thresholds where the driver reports them."""

    instant: Milliamperes
    avg: Milliamperes = 0.0
    min: Milliamperes = 0.0
    max: Milliamperes = 0.0
    low_alarm: Milliamperes | None = None
    high_alarm: Milliamperes | None = None


class LaneState(_Answer):
    input_power: Power | None = None
    output_power: Power | None = None
    laser_bias_current: Bias | None = None


class Lane(_Answer):
    index: Annotated[int, Field(ge=0, lt=MAX_LANES)]
    state: LaneState


class Lanes(_Answer):
    channel: Annotated[list[Lane], Field(max_length=MAX_LANES)] = []


class Optic(_Answer):
    physical_channels: Lanes = Lanes()


# --- get_config ----------------------------------------------------------------------------------


class Configs(_Answer):
    running: Annotated[str, Field(max_length=MAX_CONFIG)]


# --- fabricgen's extensions ----------------------------------------------------------------------


class LosslessCounters(_Answer):
    """get_lossless_counters of one port: cumulative PFC frames per priority, watchdog storms and
    ECN-marked packets (None where the device keeps none)."""

    pfc_rx: Annotated[dict[Priority, Total], Field(max_length=8)] = {}
    pfc_tx: Annotated[dict[Priority, Total], Field(max_length=8)] = {}
    pfcwd_storms: Total | None = None
    ecn_marked: Total | None = None


def _entries(value: Any) -> Any:
    return Annotated[value, Field(max_length=MAX_ENTRIES)]


_ANSWERS: dict[str, TypeAdapter] = {
    "get_facts": TypeAdapter(Facts),
    "get_interfaces": TypeAdapter(_entries(dict[PortName, Interface])),
    "get_interfaces_counters": TypeAdapter(_entries(dict[PortName, Counters])),
    "get_bgp_neighbors": TypeAdapter(Annotated[dict[Annotated[str, Field(min_length=1, max_length=64)], Vrf], Field(max_length=4096)]),
    "get_lldp_neighbors_detail": TypeAdapter(_entries(dict[PortName, Annotated[list[Neighbour], Field(max_length=64)]])),
    "get_optics": TypeAdapter(_entries(dict[PortName, Optic])),
    "get_config": TypeAdapter(Configs),
    "get_lossless_counters": TypeAdapter(_entries(dict[PortName, LosslessCounters])),
    "get_ecmp_widths": TypeAdapter(_entries(dict[Prefix, Annotated[int, Field(ge=0, le=MAX_ECMP)]])),
}
GETTERS = frozenset(_ANSWERS)


def parse(getter: str, answer: object) -> Any:
    """`answer` (what `getter` returned) checked: the models above (dicts of them by port, peer
    or prefix), get_config's running text. AnswerError says where and what is wrong."""
    try:
        parsed = _ANSWERS[getter].validate_python(answer, strict=True)
    except ValidationError as exc:
        raise AnswerError(describe(exc)) from None
    return parsed.running if isinstance(parsed, Configs) else parsed


_MODEL_NAME = re.compile(r" or instance of \w+")  # pydantic names the model class: not the user's concern
_PATTERNS = {PREFIX: "is not an IP prefix"}  # what a pattern means, instead of the pattern


def describe(exc: ValidationError) -> str:
    """The first problem of `exc` on one line: where (field path; a device's keys cut short), what,
    and the value when it is a plain one; how many more there are."""
    errors = exc.errors(include_url=False, include_context=True, include_input=True)
    first = errors[0]
    path = [part if isinstance(part, int) else printable(part)[:64] for part in first["loc"]]
    if path and path[-1] == "[key]":  # a key itself is wrong: the message names it, say where it is
        path = path[:-2]
    given = first.get("input")
    meaning = _PATTERNS.get(first.get("ctx", {}).get("pattern", ""))
    message = f"{quoted(given)} {meaning}" if meaning else _MODEL_NAME.sub("", first["msg"].removeprefix("Value error, "))
    if isinstance(given, str):
        got = f" (got {quoted(given)})" if quoted(given) not in message else ""
    elif isinstance(given, (int, float, bool)) or given is None:
        got = f" (got {given!r})"
    else:
        got = f" (got {'an object' if isinstance(given, dict) else 'a ' + type(given).__name__})"
    more = f"; and {len(errors) - 1} more" if len(errors) > 1 else ""
    return f"{dotted(tuple(path)) or 'the answer'}: {message}{got}{more}"
