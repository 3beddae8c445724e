"""Free text (descriptions) as EOS takes it on one config line."""

from __future__ import annotations

from fabricgen.basics.trust import printable


def eos_text(value: object) -> str:
    """Free text as one EOS config line's tail: control and format characters escaped (a newline
    becomes the two characters \\n), so it cannot add a line."""
    return printable(value).strip()
