"""Value types shared by the intent and the catalog: link speeds and bandwidth ratios; IPv4 text and
ints for the hot paths."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable
from fractions import Fraction
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

from fabricgen.basics.trust import SAYS

_SPEED = re.compile(r"^\s*(\d{1,9})\s*([GM])(?:b(?:ps|/s)?|bE|E)?\s*$", re.IGNORECASE)
MAX_SPEED_GBPS = 3200  # a port faster than 3.2T does not exist yet; a bound keeps every product of speeds small
# A switch's front-panel cages and a cage's SerDes lanes, as the catalog and the NOS packages' catalog
# sections bound them (no real hardware comes near: the largest fixed switch has 128 cages)
MAX_CAGES = 1024
MAX_LANES = 64
# A ratio side is a short decimal (2, 2.5, 1.333): Fraction("1e99999999") would build a 100-million-digit number
_RATIO_SIDE = re.compile(r"\s*(\d{1,6}(?:\.\d{1,6})?)\s*")
MAX_RATIO_PART = 1000


def parse_speed(value: object) -> int:
    """'400G', '400GbE', '100Gbps', '1000M' or a bare number of Gb/s -> Gb/s as int."""
    if isinstance(value, bool):
        raise ValueError("a speed is a number of Gb/s such as 400G")
    if isinstance(value, int):
        gbps = value
    elif isinstance(value, str) and (match := _SPEED.match(value)):
        number, unit = int(match.group(1)), match.group(2).upper()
        if unit == "M":
            if number % 1000:
                raise ValueError(f"{value!r}: speeds below 1G are not supported")
            number //= 1000
        gbps = number
    else:
        raise ValueError(f"{value!r} is not a speed; write it like 400G")
    if gbps <= 0:
        raise ValueError("a speed must be positive")
    if gbps > MAX_SPEED_GBPS:
        raise ValueError(f"{gbps}G is faster than any port ({MAX_SPEED_GBPS}G at most)")
    return gbps


def format_speed(gbps: int) -> str:
    return f"{gbps}G"


# The JSON Schema of each type says what its parser reads, for editors and `fabricgen schema`
# (the parser stays the judge: the schema does not repeat every range). A speed is a number of
# Gb/s or text with a unit; as a mapping key (ecn: {400G: ...}) it is text, and a bare number
# there (400:) reaches an editor as the key "400".
_SPEED_TEXT = r"\s*[0-9]{1,9}\s*[GgMm](?:[Bb](?:[Pp][Ss]|/[Ss])?|[Bb][Ee]|[Ee])?\s*"
SPEED_SCHEMA = {
    "type": ["integer", "string"],
    "minimum": 1,
    "maximum": MAX_SPEED_GBPS,
    "pattern": f"^{_SPEED_TEXT}$",
    SAYS: "a speed in Gb/s as a number (400) or text with its unit G or M (400G, 100Gbps, 800GbE; either case)",
    "examples": ["400G", "800G", "100G"],
}
SPEED_KEY_SCHEMA = {
    "type": "string",
    "pattern": r"^\s*[0-9]{1,9}\s*(?:[GgMm](?:[Bb](?:[Pp][Ss]|/[Ss])?|[Bb][Ee]|[Ee])?)?\s*$",
    SAYS: "a speed: a number of Gb/s, or with its unit G or M (400G, 100Gbps; either case)",
}

Speed = Annotated[int, BeforeValidator(parse_speed), PlainSerializer(format_speed, return_type=str), WithJsonSchema(SPEED_SCHEMA)]
SpeedKey = Annotated[int, BeforeValidator(parse_speed), PlainSerializer(format_speed, return_type=str), WithJsonSchema(SPEED_KEY_SCHEMA)]


def parse_ratio(value: object) -> Fraction:
    """'2:1' (downlink:uplink bandwidth) -> Fraction(2, 1); '1:2' is under-subscribed."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # a bare number is ambiguous (is 2 meant as 2:1 or 1:2?); the loader keeps 2:1 as text
        raise ValueError("write the ratio as downlink:uplink, such as 1:1, 2:1 or 1:2")
    if not isinstance(value, str) or value.count(":") != 1:
        raise ValueError(f'{value!r} is not a ratio; write downlink:uplink such as "1:1", "3:1" or "1:2"')
    sides = [_RATIO_SIDE.fullmatch(side) for side in value.split(":")]
    if not all(sides):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ValueError(f'{shown!r} is not a ratio of two positive numbers such as "3:1" or "1:1.5"')
    down, up = (Fraction(side.group(1)) for side in sides)  # type: ignore[union-attr]
    if down <= 0 or up <= 0:
        raise ValueError(f"{value!r}: both sides of the ratio must be positive")
    if down > MAX_RATIO_PART or up > MAX_RATIO_PART:
        raise ValueError(f"{value!r}: a side of a ratio is at most {MAX_RATIO_PART}")
    return down / up


def format_ratio(ratio: Fraction) -> str:
    """Fraction(8, 3) -> '2.67:1'; Fraction(1, 2) -> '1:2'."""
    if ratio >= 1:
        return f"{_short(ratio)}:1"
    return f"1:{_short(1 / ratio)}"


def _short(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def parse_network(value: object) -> object:
    return IPv4Network(value) if isinstance(value, str) else value


def parse_address(value: object) -> object:
    return IPv4Address(value) if isinstance(value, str) else value


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4_TEXT = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
# a prefix length or a netmask, as ipaddress reads them; a bare address is a /32
NETWORK_SCHEMA = {
    "type": "string",
    "pattern": rf"^{IPV4_TEXT}(?:/(?:3[0-2]|[12]?[0-9]|{IPV4_TEXT}))?$",
    SAYS: "an IPv4 network such as 10.0.0.0/16: an address, then / and a prefix length (0 to 32) or a netmask; a bare address is a /32",
    "examples": ["10.0.0.0/16"],
}
ADDRESS_SCHEMA = {"type": "string", "pattern": f"^{IPV4_TEXT}$", SAYS: "an IPv4 address such as 10.0.0.1"}
_RATIO_SIDE_TEXT = r"\s*[0-9]{1,6}(?:\.[0-9]{1,6})?\s*"
RATIO_SCHEMA = {
    "type": "string",
    "pattern": f"^{_RATIO_SIDE_TEXT}:{_RATIO_SIDE_TEXT}$",
    SAYS: "downlink:uplink bandwidth, two positive numbers such as 1:1, 3:1 or 1:1.5",
    "examples": ["1:1", "3:1", "1:2"],
}

# Models are strict (no "256" for 256, no true for 1); these types accept their YAML spelling.
Network = Annotated[IPv4Network, BeforeValidator(parse_network), WithJsonSchema(NETWORK_SCHEMA)]
Address = Annotated[IPv4Address, BeforeValidator(parse_address), WithJsonSchema(ADDRESS_SCHEMA)]

Ratio = Annotated[Fraction, BeforeValidator(parse_ratio), PlainSerializer(format_ratio, return_type=str), WithJsonSchema(RATIO_SCHEMA)]


# IPv4 text <-> int for the hot paths (hundreds of thousands of addresses at 32k GPUs), where
# parsing through netaddr or ipaddress objects dominated; pool arithmetic stays with netaddr.
def ipv4_int(address: str) -> int:
    return int.from_bytes(socket.inet_aton(address), "big")


def ipv4_text(value: int) -> str:
    return socket.inet_ntoa(value.to_bytes(4, "big"))


_OCTETS = [str(octet) for octet in range(256)]


def ipv4_texts(first: int, count: int) -> list[str]:
    """The texts of `count` consecutive addresses from `first`. Within each /24 the texts are its
    "a.b.c." joined to the last octet's text, in C: 4x faster than inet_ntoa per address."""
    texts: list[str] = []
    end = first + count
    while first < end:
        base = first & ~0xFF
        stop = min(end, base + 256)
        prefix = ipv4_text(base)[:-1]  # "a.b.c.0" -> "a.b.c."
        texts += map(prefix.__add__, _OCTETS[first - base : stop - base])
        first = stop
    return texts


def ipv4_ints(addresses: Iterable[str]) -> list[int]:
    """ipv4_int of each address, converted in C (no Python call per address)."""
    return list(map(int.from_bytes, map(socket.inet_aton, addresses)))  # big-endian (network order): from_bytes's default since Python 3.11


def cidr_span(cidr: str) -> tuple[int, int]:
    """First and last address of the network a CIDR (or a bare address, as a /32) lies in."""
    address, _, prefix = cidr.partition("/")
    size = 1 << (32 - int(prefix or 32))
    first = ipv4_int(address) & ~(size - 1) & 0xFFFFFFFF
    return first, first + size - 1


def network_of(cidr: str) -> str:
    """10.4.0.1/24 -> 10.4.0.0/24."""
    address, _, prefix = cidr.partition("/")
    return network_text(address, int(prefix or 32))


_EVEN_DIGIT = {digit: str(int(digit) & ~1) for digit in "0123456789"}


def network_text(address: str, prefixlen: int) -> str:
    """10.4.0.1, 24 -> 10.4.0.0/24: network_of without making and splitting the CIDR text. A prefix
    that keeps the first three octets whole is worked out on the last one alone (a quarter of the
    integer round trip's cost; once per NIC at 131,072 GPUs)."""
    if prefixlen == 31:  # a /31 starts at its even address: the last digit made even, no borrow
        return f"{address[:-1]}{_EVEN_DIGIT[address[-1]]}/31"
    host_bits = 32 - prefixlen
    if prefixlen >= 24:
        head, _, last = address.rpartition(".")
        return f"{head}.{int(last) >> host_bits << host_bits}/{prefixlen}"
    return f"{ipv4_text(ipv4_int(address) >> host_bits << host_bits)}/{prefixlen}"
