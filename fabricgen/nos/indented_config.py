"""Reading an indented CLI config, the shape NX-OS's and EOS's share (and FRR's): a top-level line
opens a block, the indented lines below it belong to it. Push's and verify's NOS modules read a
built config with these (what a replace must keep, the MTU of each port).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_INTERFACE = re.compile(r"^interface (\S+)")
_MTU = re.compile(r"^\s+mtu (\d+)")


def block(lines: list[str], header: str) -> list[str]:
    """The indented lines under the top-level line `header`."""
    found, inside = [], False
    for line in lines:
        if line.rstrip() == header:
            inside = True
        elif inside and line[:1].isspace():
            found.append(line)
        elif inside:
            break
    return found


def interface_mtus(config: str) -> dict[str, int]:
    """`mtu N` under each `interface NAME` block: {NAME: N}."""
    found, current = {}, None
    for line in config.splitlines():
        if match := _INTERFACE.match(line):
            current = match.group(1)
        elif line and not line[0].isspace():
            current = None
        elif current and (match := _MTU.match(line)):
            found[current] = int(match.group(1))
    return found


def running_config(files: Mapping[str, str]) -> str:
    """A one-file build config as verify's drift compares it with get_config(retrieve="running"):
    the file itself (a NOS whose switch config is one indented text, NX-OS and EOS)."""
    (text,) = files.values()
    return text


def port_mtus(files: Mapping[str, str]) -> dict[str, int]:
    """`mtu N` under each `interface NAME` of a one-file build config: {NAME: N}."""
    return interface_mtus(running_config(files))
