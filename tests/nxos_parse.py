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
    # template peer name -> address family ("" for the session part) -> its lines
    templates: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    banner: list[str] = field(default_factory=list)  # the lines between `banner motd ^` and `^`

    def top(self, prefix: str) -> list[str]:
        return [line for line in self.lines if line.startswith(prefix)]


def parse_nxos(text: str) -> NxosConfig:
    config = NxosConfig(text.splitlines())
    current: list[str] | None = None
    block: list[str] = []
    in_bgp = False
    in_banner: str | None = None  # the delimiter while inside a banner
    neighbor: list[str] | None = None
    template: dict[str, list[str]] | None = None
    family = ""
    for line in config.lines:
        if in_banner is not None:
            if line == in_banner:
                in_banner = None
            else:
                config.banner.append(line)
            continue
        if match := re.fullmatch(r"banner motd (\S)", line):
            in_banner = match.group(1)
            continue
        if not line.startswith(" "):
            in_bgp = line.startswith("router bgp ")
            current = neighbor = template = None
            block = config.blocks.setdefault(line, [])
            if match := re.match(r"interface (\S+)$", line):
                current = config.interfaces.setdefault(match.group(1), [])
            continue
        stripped = line.strip()
        block.append(stripped)
        if in_bgp:
            config.router_bgp.append(line)
            depth = len(line) - len(line.lstrip(" "))
            if depth == 2:
                neighbor = template = None
                if line.startswith("  neighbor "):
                    neighbor = config.neighbors.setdefault(stripped.split()[1], [])
                elif line.startswith("  template peer "):
                    template = config.templates.setdefault(stripped.split()[2], {"": []})
                    family = ""
            elif neighbor is not None:
                neighbor.append(stripped)
            elif template is not None:
                if depth == 4 and stripped.startswith("address-family "):
                    family = stripped.removeprefix("address-family ")
                    template.setdefault(family, [])
                elif depth == 4:
                    family = ""
                    template[""].append(stripped)
                else:
                    template[family].append(stripped)
        elif current is not None:
            current.append(stripped)
    return config


def indentation_problems(text: str) -> list[str]:
    """Lines whose indentation cannot be NX-OS hierarchy: not a multiple of two spaces, deeper
    than one level below the line before, or an unterminated banner."""
    problems = []
    previous = 0
    banner = None
    for number, line in enumerate(text.splitlines(), 1):
        if banner is not None:
            banner = None if line == banner else banner
            continue
        if match := re.fullmatch(r"banner motd (\S)", line):
            banner = match.group(1)
            continue
        depth = len(line) - len(line.lstrip(" "))
        if depth % 2 or depth > previous + 2:
            problems.append(f"line {number}: {line!r}")
        previous = depth
    if banner is not None:
        problems.append("banner without its closing delimiter")
    return problems
