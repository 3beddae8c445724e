"""Free text (descriptions, banners, SNMP location) as NX-OS takes it on one config line."""

from __future__ import annotations

from fabricgen.basics.trust import printable

MAX_DESCRIPTION = 254  # NX-OS refuses a longer interface or neighbor description


def nxos_text(value: object) -> str:
    """Free text as one NX-OS config line's tail: control and format characters escaped (a
    newline becomes the two characters \\n), at most 254 characters."""
    return printable(value).strip()[:MAX_DESCRIPTION]
