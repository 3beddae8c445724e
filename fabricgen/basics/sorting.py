"""Natural order for device and port names: leaf2 before leaf10, Ethernet1/2 before Ethernet1/10."""

from __future__ import annotations

import re

_NUMBERS = re.compile(r"([0-9]+)")  # not \d: it also matches other scripts' digits

NameKey = tuple[tuple[str | int, ...], str]


def natural_key(value: str | tuple[str, ...]) -> tuple[NameKey, ...]:
    """Sort key of a name, or of a tuple of names compared in turn.

    Each name becomes a pair: its parts (text, number, text, ..., text), then the name itself.
    Split on one capturing group, the text between numbers lies at even places and the ASCII digit
    runs at odd ones, so two keys only ever compare text with text and numbers with numbers, also
    when one name is the other plus a number ('bmc' < 'bmc1') inside a tuple of names
    (('dev:bmc', 'x') < ('dev:bmc1', 'x')). The name itself breaks the tie of names equal but for
    leading zeros ('leaf01', 'leaf1'), so the order never depends on the order things came in."""
    texts = (value,) if isinstance(value, str) else value
    return tuple((_parts(text), text) for text in texts)


def _parts(text: str) -> tuple[str | int, ...]:
    parts: list[str | int] = list(_NUMBERS.split(text))
    parts[1::2] = [int(digits) for digits in parts[1::2]]
    return tuple(parts)
