"""Natural order for device and port names: leaf2 before leaf10, Ethernet1/2 before Ethernet1/10."""

from __future__ import annotations

import re

_NUMBERS = re.compile(r"([0-9]+)")  # not \d: it also matches other scripts' digits


def natural_key(value: str | tuple[str, ...]) -> list:
    """Sort key of a name, or of a tuple of names compared in turn."""
    texts = (value,) if isinstance(value, str) else value
    return [int(part) if part.isdigit() else part for text in texts for part in _NUMBERS.split(text)]
