"""Drift: a device's running config against the build's, statement by statement, secrets masked
on both sides (one `Finding` per device that differs).

A secret is masked where it stands: the slots `fabricgen.build.secrets.SLOTS` declares for each NOS
(the same places the renderers write placeholders), in the build and in the device's answer
alike, so a placeholder and the device's value (or its encrypted form) compare equal and neither
is printed. Values the user gave (--secrets) are masked wherever they appear, first."""

from __future__ import annotations

import json
import re
from collections import Counter

from fabricgen.build.secrets import MASK, Secrets, mask_config_db, mask_text
from fabricgen.verify.collect import Observation
from fabricgen.verify.findings import WARNING, Finding
from fabricgen.verify.plan import Plan

DRIFT_LINES_SHOWN = 5
NOT_JSON = f"{MASK} (the running config_db is not JSON: not compared)"
# lines a NOS writes around its running config that no build holds
_NOISE = re.compile(
    r"^\s*(!.*|Building configuration.*|Current configuration.*|end|exit|exit-address-family|exit-vrf|frr version .*|frr defaults .*|version .*)?$"
)
_NOT_STATEMENTS = {"{", "}", "[", "]", "},", "],"}


def mask_config(text: str, secrets: Secrets, nos: str) -> str:
    """A config of `nos` with every secret masked: the known values first (as push masks them),
    then every slot. SONiC: the driver's text, `! config_db ...` (JSON, masked by table and
    field and re-serialised sorted) then `! frr ...`; a config_db that is not JSON is not shown."""
    text = secrets.mask(text)
    if nos != "sonic":
        return mask_text(text, nos)
    head, _, rest = text.partition("\n")
    if not head.startswith("! config_db"):
        return mask_text(text, "frr")
    db, marker, frr = rest.partition("\n! frr")
    try:
        document = json.loads(db)
    except ValueError:
        document = None
    shown = json.dumps(mask_config_db(document), indent=4, sort_keys=True) if isinstance(document, dict) else NOT_JSON
    return f"{head}\n{shown}\n{marker.strip()}{mask_text(frr, 'frr')}"


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
        built = statements(mask_config(plan.configs[name], secrets, o.target.nos))
        live = statements(mask_config(running, secrets, o.target.nos))
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
