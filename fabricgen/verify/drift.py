"""Drift: a device's running config against the build's, statement by statement, secrets masked
on both sides (one `Finding` per device that differs)."""

from __future__ import annotations

import json
import re
from collections import Counter

from fabricgen.secrets import Secrets
from fabricgen.verify.collect import Observation
from fabricgen.verify.findings import WARNING, Finding
from fabricgen.verify.plan import Plan

DRIFT_LINES_SHOWN = 5

# Values that are secrets whatever their name: a keyword, an optional NX-OS encryption type digit,
# the value. Both sides go through it, so a build's placeholder and a device's value (or its
# encrypted form) compare equal and neither is ever printed.
_SECRET_WORD = r"(?:password|passwd|secret|key|key-string|community|auth\s+\S+|priv\s+\S+|localizedkey|passphrase)"
_SECRET_LINE = re.compile(rf"(?i)(\b{_SECRET_WORD})(\s+\d)?\s+(\S+)")
_SECRET_JSON = re.compile(r'(?i)("[^"]*(?:password|secret|key|passkey|auth|priv|community)[^"]*"\s*:\s*)"[^"]*"')
_SECRET_JSON_KEY = re.compile(r'"<<secret:[a-z0-9-]+>>"')
MASK = "<<masked>>"
# lines a NOS writes around its running config that no build holds
_NOISE = re.compile(
    r"^\s*(!.*|Building configuration.*|Current configuration.*|end|exit|exit-address-family|exit-vrf|frr version .*|frr defaults .*|version .*)?$"
)
_NOT_STATEMENTS = {"{", "}", "[", "]", "},", "],"}


def mask_config(text: str, secrets: Secrets) -> str:
    """A config with every secret value masked: the known values first (as push masks them), then
    any value after a secret keyword."""
    text = secrets.mask(text)
    text = _SECRET_JSON.sub(lambda m: m.group(1) + f'"{MASK}"', text)
    text = _SECRET_JSON_KEY.sub(f'"{MASK}"', text)
    return _SECRET_LINE.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} {MASK}", text)


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
        if o.target.nos == "sonic":
            running = _sonic_canonical(running)
        built = statements(mask_config(plan.configs[name], secrets))
        live = statements(mask_config(running, secrets))
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


def _sonic_canonical(running: str) -> str:
    """The driver's running text with its config_db re-serialised the way the plan's is (sorted,
    indented), so JSON formatting is never drift; the section headers are comments (`!`)."""
    head, _, rest = running.partition("\n")
    if not head.startswith("! config_db"):
        return running
    db, marker, frr = rest.partition("\n! frr")
    try:
        canonical = json.dumps(json.loads(db), indent=4, sort_keys=True)
    except ValueError:
        canonical = db
    return f"{head}\n{canonical}\n{marker.strip()}{frr}"
