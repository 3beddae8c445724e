"""`fabricgen testplan switches`: a switch acceptance plan written from a build (RFC 2544
throughput, latency and loss per frame size over RFC 2889 full-mesh port groups, for TRex, with a
checklist per switch), and its `testplan check`.

    write_switch_plan(BUILD_DIR, PLAN_DIR, ...) -> SwitchPlan
    is_switch_plan(PLAN_DIR) -> bool
    check_switch_results(PLAN_DIR, [RESULTS...]) -> SwitchCheckResult
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from fabricgen.basics.errors import Problem
from fabricgen.basics.files import UnreadableFile, read_regular_file
from fabricgen.build.output import MARKER, MAX_MARKER_BYTES, OutputMarker, write_build
from fabricgen.testplan.plan import TestplanError
from fabricgen.testplan.switches.check import SwitchCheckResult, check_switch_results
from fabricgen.testplan.switches.model import MAX_MESH_PORTS, SWITCH_PLAN_KIND, SwitchPlan
from fabricgen.testplan.switches.plan import DEFAULT_DURATION_S, build_switch_plan, open_build
from fabricgen.testplan.switches.rates import RATE_TOLERANCE_PPM
from fabricgen.testplan.switches.render import render_switch_plan

__all__ = ["SwitchCheckResult", "SwitchPlan", "check_switch_results", "is_switch_plan", "tester_interfaces", "write_switch_plan"]

# A DPDK port as TRex's interfaces list takes it: a PCI address (domain optional), or dd:dd.d/d for
# the second port of one PCI device (TRex doc/trex_book.asciidoc, "Basic Configuration").
PCI_ADDRESS = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7](?:/[0-9])?")


def tester_interfaces(text: str | None) -> list[str] | None:
    """--tester-interfaces "03:00.0,03:00.1,..." as a list; TestplanError naming the entry that is
    not a PCI address, or one given twice."""
    if text is None:
        return None
    entries = [entry.strip() for entry in text.split(",")]
    problems = []
    for number, entry in enumerate(entries, start=1):
        if not PCI_ADDRESS.fullmatch(entry):
            problems.append(Problem(f"entry {number} is not a PCI address like 03:00.0", field=("--tester-interfaces",)))
    if len(set(entries)) != len(entries):
        problems.append(Problem("names a port twice", field=("--tester-interfaces",)))
    if len(entries) > MAX_MESH_PORTS:
        problems.append(Problem(f"{len(entries)} ports; a group has at most {MAX_MESH_PORTS}", field=("--tester-interfaces",)))
    if problems:
        raise TestplanError(problems)
    return entries


def write_switch_plan(
    build_dir: Path,
    plan_dir: Path,
    mesh_ports: int = MAX_MESH_PORTS,
    duration_s: int = DEFAULT_DURATION_S,
    max_latency_us: float | None = None,
    max_jitter_us: float | None = None,
    interfaces: list[str] | None = None,
    rate_tolerance_ppm: int = RATE_TOLERANCE_PPM,
) -> SwitchPlan:
    """Plan the build in `build_dir` (verified) and write the plan directory atomically: all of it,
    or nothing (TestplanError / OutputError on bad input)."""
    build = open_build(build_dir)
    plan = build_switch_plan(build, mesh_ports, duration_s, max_latency_us, max_jitter_us, rate_tolerance_ppm)
    largest = max(len(group.ports) for switch in plan.switches for group in switch.groups)
    if interfaces is not None and len(interfaces) < largest:
        raise TestplanError(
            Problem(
                f"lists {len(interfaces)} tester ports; the largest group has {largest}",
                hint="list as many tester ports as the largest group, or lower --mesh-ports to the tester's port count",
                field=("--tester-interfaces",),
            )
        )
    write_build(render_switch_plan(plan, build.manifest, interfaces), plan_dir)
    return plan


def is_switch_plan(plan_dir: Path) -> bool:
    """Whether `plan_dir`'s marker says it is a switch acceptance plan. Only a hint for choosing
    the check: the check itself verifies the directory against its manifest."""
    try:
        marker = OutputMarker.model_validate_json(read_regular_file(plan_dir / MARKER, MAX_MARKER_BYTES, follow_symlinks=False))
    except (UnreadableFile, ValidationError):
        return False
    return marker.kind == "testplan" and marker.format == SWITCH_PLAN_KIND
