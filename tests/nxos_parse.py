"""A small reader for the NX-OS configs fabricgen writes: blocks by their top-level line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class NxosConfig:
    lines: list[str]
    interfaces: dict[str, list[str]] = field(default_factory=dict)  # name -> indented lines
    neighbors: dict[str, list[str]] = field(default_factory=dict)  # address -> indented lines
    router_bgp: list[str] = field(default_factory=list)
    blocks: dict[str, list[str]] = field(default_factory=dict)  # any top-level line -> indented lines

    def top(self, prefix: str) -> list[str]:
        return [line for line in self.lines if line.startswith(prefix)]


def parse_nxos(text: str) -> NxosConfig:
    config = NxosConfig(text.splitlines())
    current: list[str] | None = None
    block: list[str] = []
    in_bgp = False
    neighbor: list[str] | None = None
    for line in config.lines:
        if not line.startswith(" "):
            in_bgp = line.startswith("router bgp ")
            current = None
            neighbor = None
            block = config.blocks.setdefault(line, [])
            if match := re.match(r"interface (\S+)$", line):
                current = config.interfaces.setdefault(match.group(1), [])
            continue
        stripped = line.strip()
        block.append(stripped)
        if in_bgp:
            config.router_bgp.append(line)
            if line.startswith("  neighbor "):
                neighbor = config.neighbors.setdefault(stripped.split()[1], [])
            elif line.startswith("  ") and not line.startswith("   "):
                neighbor = None
            elif neighbor is not None:
                neighbor.append(stripped)
        elif current is not None:
            current.append(stripped)
    return config
