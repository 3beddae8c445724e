"""What a string from outside may be: the one place that says so.

Intents, catalogs, build directories, inventories and device answers are hostile until checked.
Every string that can reach a config, a template, a shell, a file name or a kernel object is
checked against one of these rules where it enters, whichever of those sources it came from:

- a *hostname* (device names, fabric names): an RFC 1123 label;
- an *interface name* (switch ports, NIC ports, management ports): letters first, then letters,
  digits and ``/ . : _ -``, at most 64 characters (NX-OS `Ethernet1/1/2`, SONiC `Ethernet0`,
  Linux `enp1s0f0np0`, `mgmt0`);
- a *PID* (catalog part numbers): letters, digits and ``. _ / + ( ) -``;
- a *token* (SONiC platform and hwsku, tenant and VRF names, drivers): letters, digits and
  ``. _ + -``;
- *text* (descriptions, vendors, free notes): one printable line of bounded length; no control or
  format characters, so it cannot add a line to a config or hide one on a terminal;
- a *host* (push inventories): an IP address or a DNS name;
- a *console line* (`0/1/0`) and a *port name* (an interface name or a console line);
- a *build path*: a relative file name of a build directory that cannot climb out or hide.

Each rule is a plain function raising ValueError (pydantic turns that into a located problem), and
an `Annotated` type for the models. `printable()` makes any string safe to print, `quoted()` shows
one in a message.
"""

from __future__ import annotations

import ipaddress
import re
import string
import unicodedata
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
INTERFACE = re.compile(r"[A-Za-z][A-Za-z0-9/.:_-]{0,63}")
PID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+()-]{0,79}")
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
# What each pattern allows, in words: the JSON Schema carries it beside the pattern as
# `patternErrorMessage`, which yaml-language-server and VS Code show instead of the bare regex when
# a value does not match (redhat-developer/yaml-language-server src/languageservice/parser/
# jsonParser07.ts, the string check), and the docs' references show instead of the regex.
SAYS = "patternErrorMessage"
HOSTNAME_SAYS = "letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
INTERFACE_SAYS = "a letter, then letters, digits and / . : _ -, at most 64 characters"
PID_SAYS = "a letter or digit, then letters, digits and . _ / + ( ) -, at most 80 characters"
TOKEN_SAYS = "a letter or digit, then letters, digits and . _ + -, at most 128 characters"
SECRET_MARK = "<<secret"  # how fabricgen.build.secrets.placeholder() begins (<<secret=NAME>>; <<secret:NAME>> in older builds)
MAX_TEXT = 240  # NX-OS takes 254 characters of interface description; a catalog description is a line

# Unicode categories that are not text a person can see: controls (C0, C1, DEL), format characters
# (bidirectional overrides, zero-width joiners), line and paragraph separators, unassigned, surrogates.
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cn", "Cs", "Co"}
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def has_invisible(text: str) -> bool:
    """True when `text` holds a control, format or separator character (a newline included)."""
    return not text.isprintable() and any(unicodedata.category(ch) in _INVISIBLE for ch in text)


def printable(text: object) -> str:
    """`text` with every invisible character written as an escape (\\n, \\x1b, \\u202e), so a
    message built from hostile input stays one line and cannot drive the terminal."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(_escape(ch) if unicodedata.category(ch) in _INVISIBLE else ch for ch in value)


def _escape(ch: str) -> str:
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def quoted(value: object, limit: int = 60) -> str:
    """`value` for a message: escaped once (`printable`), quoted, cut after `limit` characters."""
    value = printable(value)
    return "'" + (value if len(value) <= limit else value[:limit] + "...") + "'"


def check_hostname(value: str) -> str:
    if not HOSTNAME.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a valid name: use letters, digits and '-' (not first or last), at most 63 characters")
    return value


def check_interface_name(value: str) -> str:
    if not INTERFACE.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a valid interface name: a letter first, then letters, digits and / . : _ -, at most 64 characters")
    return value


def check_pid(value: str) -> str:
    if not PID.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a valid part number (PID): letters, digits and . _ / + ( ) -, at most 80 characters")
    return value


def check_token(value: str) -> str:
    if not TOKEN.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a valid identifier: letters, digits and . _ + -, at most 128 characters")
    return value


def check_text(value: str, limit: int = MAX_TEXT) -> str:
    if has_invisible(value):
        raise ValueError(f"{quoted(value)} holds a control character or line break; a description is one line of plain text")
    if len(value) > limit:
        raise ValueError(f"{len(value)} characters is too long; at most {limit}")
    if value != value.strip():
        raise ValueError(f"{quoted(value)} starts or ends with white space")
    if SECRET_MARK in value:
        # push fills every placeholder in a config: one in a banner or a description would print
        # that secret where anyone can read it
        raise ValueError("a secret placeholder (<<secret=...>>) may only stand where fabricgen writes a key, not in free text")
    return value


def check_pattern(pattern: str, fields: Iterable[str], check=check_interface_name) -> str:
    """A name pattern such as ``Ethernet1/{port}/{sub}``: only the named `fields`, each a plain
    ``{name}`` or an integer format (``{index:02d}``, width at most 9), and every name it can give
    obeys `check` (tried with the widest numbers it may hold)."""
    allowed = set(fields)
    sample: dict[str, int] = {}
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        raise ValueError(f"{quoted(pattern)} is not a valid pattern ({exc}); write fields as {{name}}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed:
            raise ValueError(f"{quoted(pattern)} uses {{{printable(name)}}}; the fields here are " + ", ".join(f"{{{f}}}" for f in sorted(allowed)))
        if conversion is not None or (spec and not re.fullmatch(r"0?[1-9]?d", spec)):
            raise ValueError(
                f"{quoted(pattern)}: {{{name}:{printable(spec or '')}}} is not allowed; use {{{name}}} or a zero-padded width such as {{{name}:02d}}"
            )
        sample[name] = 999_999
    check(pattern.format(**sample))
    return pattern


# The same rules as JSON Schema (`fabricgen schema`, editors): patterns anchored and written in the
# syntax Python's re and ECMAScript share. The check functions stay the judge; Text's pattern
# approximates "no invisible character" with the control and format characters people meet.
_INVISIBLE_CLASS = r"\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
HOSTNAME_SCHEMA = {"type": "string", "pattern": f"^{HOSTNAME.pattern}$", SAYS: HOSTNAME_SAYS}
TEXT_SCHEMA = {
    "type": "string",
    "maxLength": MAX_TEXT,
    "pattern": rf"^(?!.*{re.escape(SECRET_MARK)})(?:[^\s{_INVISIBLE_CLASS}](?:[^{_INVISIBLE_CLASS}]*[^\s{_INVISIBLE_CLASS}])?)?$",
    SAYS: f"one line of text without control or invisible characters, not starting or ending with a space, without {SECRET_MARK}",
}

Hostname = Annotated[str, AfterValidator(check_hostname), WithJsonSchema(HOSTNAME_SCHEMA)]
InterfaceName = Annotated[
    str, AfterValidator(check_interface_name), WithJsonSchema({"type": "string", "pattern": f"^{INTERFACE.pattern}$", SAYS: INTERFACE_SAYS})
]
Pid = Annotated[str, AfterValidator(check_pid), WithJsonSchema({"type": "string", "pattern": f"^{PID.pattern}$", SAYS: PID_SAYS})]
Token = Annotated[str, AfterValidator(check_token), WithJsonSchema({"type": "string", "pattern": f"^{TOKEN.pattern}$", SAYS: TOKEN_SAYS})]
Text = Annotated[str, AfterValidator(check_text), WithJsonSchema(TEXT_SCHEMA)]


MAX_HOST = 253  # a DNS name's limit (RFC 1035), dots included


def check_host(value: str) -> str:
    """An address to reach a device at: an IPv4 or IPv6 address (no zone such as %eth0), or a DNS
    name of dot-separated RFC 1123 labels, at most 253 characters, whose last label is not all
    digits (so a mistyped address such as 10.0.0.300 is not taken for a name)."""
    try:
        ipaddress.ip_address(value)
        if "%" not in value:
            return value
    except ValueError:
        pass
    labels = value.split(".")
    if len(value) > MAX_HOST or not all(HOSTNAME.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(f"{quoted(value)} is neither an IP address nor a DNS name (letters, digits and '-' in dot-separated labels)")
    return value


IPV4_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"  # 0-255, no leading zero (JSON Schema and re alike)
HOST_SCHEMA = {
    "type": "string",
    "maxLength": MAX_HOST,
    "anyOf": [
        {"pattern": rf"^{IPV4_OCTET}(?:\.{IPV4_OCTET}){{3}}$", SAYS: "an IPv4 address such as 192.0.2.10"},
        {"pattern": r"^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$", "format": "ipv6", SAYS: "an IPv6 address such as 2001:db8::10"},
        # dot-separated labels, the last not all digits
        {
            "pattern": rf"^(?:{HOSTNAME.pattern}\.)*(?![0-9]+$){HOSTNAME.pattern}$",
            SAYS: "a DNS name: labels of letters, digits and '-' between dots, the last label not all digits",
        },
    ],
}
Host = Annotated[str, AfterValidator(check_host), WithJsonSchema(HOST_SCHEMA)]


# A console server's async line (Cisco `0/1/0`, Opengear `port03`): an interface name that may
# start with a digit.
LINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9/.:_-]{0,63}")


def check_line_name(value: str) -> str:
    if not LINE.fullmatch(value):
        raise ValueError(
            f"{quoted(value)} is not a valid console line name: a letter or digit first, then letters, digits and / . : _ -, at most 64 characters"
        )
    return value


LineName = Annotated[str, AfterValidator(check_line_name)]


# --- build directories -----------------------------------------------------------------------------

BUILD_PATH_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")
MAX_BUILD_PATH_PARTS = 8


def check_build_path(value: str) -> str:
    """A file of a build directory: a relative path whose parts are device names or fixed file
    names (letters, digits, ``. _ -``, a letter or digit first), so it cannot climb out (``..``),
    hide (``.x``) or carry a separator or control character."""
    parts = value.split("/")
    if len(parts) > MAX_BUILD_PATH_PARTS or not all(BUILD_PATH_PART.fullmatch(part) for part in parts):
        raise ValueError(f"{quoted(value)} is not a plain relative file name: parts of letters, digits and . _ - (a letter or digit first), separated by /")
    return value


def check_port_name(value: str) -> str:
    """A port in a build's reports: an interface name, or a console server's async line, which
    IOS XE numbers slot/subslot/port (``0/1/7``)."""
    if LINE.fullmatch(value):
        return value
    return check_interface_name(value)  # says what an interface name may be


BuildPath = Annotated[str, AfterValidator(check_build_path)]
PortName = Annotated[str, AfterValidator(check_port_name)]
