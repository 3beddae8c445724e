"""Drift: a device's running config against the build's, statement by statement, secrets masked
on both sides (one `Finding` per device that differs).

A secret is masked where it stands: the slots `fabricgen.build.secrets.SLOTS` declares for each NOS
(the same places the renderers write placeholders; the NOS's VERIFY.mask_slots finds them in its
running config's layout), in the build and in the device's answer alike, so a placeholder and the device's value (or its encrypted form) compare equal and neither
is printed. Values the user gave (--secrets) are masked wherever they appear, first."""

from __future__ import annotations

import re
from collections import Counter

from fabricgen.build.secrets import Secrets
from fabricgen.nos.interface import plugin
from fabricgen.verify.collect import Observation
from fabricgen.verify.findings import WARNING, Finding
from fabricgen.verify.plan import Plan

DRIFT_LINES_SHOWN = 5
# lines a NOS writes around its running config that no build holds
_NOISE = re.compile(
    r"^\s*(!.*|Building configuration.*|Current configuration.*|end|exit|exit-address-family|exit-vrf|frr version .*|frr defaults .*|version .*)?$"
)
_NOT_STATEMENTS = {"{", "}", "[", "]", "},", "],"}


def mask_config(text: str, secrets: Secrets, nos: str) -> str:
    """A config of `nos` (in its running config's layout) with every secret masked: the known
    values first (as push masks them), then every slot (its VERIFY.mask_slots)."""
    return plugin(nos).VERIFY.mask_slots.load()(secrets.mask(text))


def statements(text: str) -> list[str]:
    """A config as statements, each with the blocks it sits in (by indentation):
    `router bgp 64512 > address-family ipv4 unicast > maximum-paths 8`; the same for the JSON of a
    config_db (`"PORT": { > "Ethernet0": { > "mtu": "9216"`). Order within a block means nothing to
    NX-OS, FRR or CONFIG_DB, so drift is the statements one side has and the other lacks. Comments,
    `exit` lines and lone brackets are not statements."""
    found: list[str] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        if _NOISE.match(raw):
            continue
        line = raw.strip().rstrip(",")
        indent = len(raw) - len(raw.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if line in _NOT_STATEMENTS:
            continue
        found.append(" > ".join([context for _, context in stack] + [line]))
        stack.append((indent, line))
    return found


def _as_shown(text: str, nos: str) -> list[str]:
    """The statements of a config as its NOS shows them (both sides alike, so a default the build
    writes and the device leaves out is no drift)."""
    as_shown = plugin(nos).VERIFY.as_shown
    found = statements(text)
    return as_shown.load()(found, text) if as_shown is not None else found


def _only_in(lines: list[str], other: list[str]) -> list[str]:
    """The statements of `lines` (in their order) that `other` lacks, counting repeats."""
    left = Counter(other)
    only = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            only.append(line)
    return only


def check_drift(plan: Plan, by_name: dict[str, Observation], secrets: Secrets) -> list[Finding]:
    findings = []
    for name, o in by_name.items():
        running = o.answers.get("get_config")
        if not isinstance(running, str) or not running.strip() or name not in plan.configs:
            continue
        built, live = (_as_shown(mask_config(text, secrets, o.target.nos), o.target.nos) for text in (plan.configs[name], running))
        removed, added = _only_in(built, live), _only_in(live, built)
        if not added and not removed:
            continue
        first = [f"-{line}" for line in removed[:DRIFT_LINES_SHOWN]] + [f"+{line}" for line in added[:DRIFT_LINES_SHOWN]]
        findings.append(
            Finding(
                "drift",
                WARNING,
                name,
                "",
                f"running config differs from the build: {len(removed)} statement(s) missing, {len(added)} added",
                planned=f"{len(built)} statements",
                found=" | ".join(first[:DRIFT_LINES_SHOWN]),
                detail={"missing": len(removed), "added": len(added), "diff": [f"-{line}" for line in removed] + [f"+{line}" for line in added]},
            )
        )
    return findings
