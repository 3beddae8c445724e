"""The switch plan directory: switch-plan.json (what `check` reads back), switch-plan.md (rates and
criteria per model and speed), switch-checklists/<switch>.md (a checklist per switch), trex/ (a
TRex platform configuration per group size, the full-mesh stateless profile, the trial runner),
fabricgen-output.json (a "switch-acceptance" test plan of this fabric: `fabricgen.build.output.marker`,
so it replaces only its own earlier self) and a manifest.json of them all.

The text of each is a template under templates/testplan/switches/; here only what they read."""

from __future__ import annotations

from typing import NamedTuple

from fabricgen.basics import version
from fabricgen.build.build_dir import Manifest
from fabricgen.build.output import marker
from fabricgen.render.environment import environment
from fabricgen.reports.manifest import render_manifest
from fabricgen.testplan.switches.model import SWITCH_PLAN_KIND, SwitchPlan
from fabricgen.testplan.switches.rates import line_fps, mixed
from fabricgen.testplan.switches.reference import SEED_002_AGGREGATE_FPS, SEED_002_NOTE, SEED_002_PORTS, SEED_002_SPEED_GBPS

PLACEHOLDER_INTERFACE = "REPLACE-ME-{}"


class TesterPort(NamedTuple):
    tester: str  # the tester port's address
    gateway: str  # the switch port's address, the tester's default gateway


def tester_addresses(count: int) -> list[TesterPort]:
    """Tester port i: the i-th /24 of 198.18.0.0/15 (RFC 2544 appendix C), .2 the tester, .1 the switch."""
    ports = []
    for i in range(count):
        prefix = f"198.{18 + i // 256}.{i % 256}"
        ports.append(TesterPort(f"{prefix}.2", f"{prefix}.1"))
    return ports


def render_switch_plan(plan: SwitchPlan, intent: Manifest, tester_interfaces: list[str] | None = None) -> dict[str, bytes]:
    """Every file of the plan directory, manifest.json included."""
    env = environment()
    common = {"version": version.RELEASE, "fabric": plan.fabric}
    files: dict[str, str] = {"switch-plan.json": plan.model_dump_json(indent=1) + "\n"}
    reference = {
        SEED_002_SPEED_GBPS: {size: f"{total:,} (/ {SEED_002_PORTS} = {total / SEED_002_PORTS:,.1f})" for size, total in SEED_002_AGGREGATE_FPS.items()}
    }
    exact = {speed.speed_gbps: {row.frame_bytes: mixed(line_fps(speed.speed_gbps, row.frame_bytes)) for row in speed.rates} for speed in plan.speeds}
    files["switch-plan.md"] = env.get_template("testplan/switches/switch-plan.md.j2").render(
        plan=plan,
        notes=plan.notes,
        exact=exact,
        reference={speed: rows for speed, rows in reference.items() if speed in exact},
        reference_note=SEED_002_NOTE,
        **common,
    )
    checklist = env.get_template("testplan/switches/checklist.md.j2")
    trials = len(plan.frame_sizes) * len(plan.loads)
    for switch in plan.switches:
        speeds = sorted({group.speed_gbps for group in switch.groups})
        files[f"switch-checklists/{switch.name}.md"] = checklist.render(
            switch=switch,
            addresses=tester_addresses(max(len(group.ports) for group in switch.groups)),
            speeds=[speed for speed in plan.speeds if speed.speed_gbps in speeds],
            trials=trials,
            duration=plan.duration_s,
            sizes=plan.frame_sizes,
            loads=plan.loads,
            throughput_load=plan.throughput_load,
            tolerance_ppm=plan.rate_tolerance_ppm,
            max_latency_us=plan.max_latency_us,
            max_jitter_us=plan.max_jitter_us,
            **common,
        )
    config = env.get_template("testplan/switches/trex_cfg.yaml.j2")
    for count in sorted({len(group.ports) for switch in plan.switches for group in switch.groups}):
        placeholders = tester_interfaces is None
        interfaces = list(tester_interfaces[:count]) if tester_interfaces is not None else [PLACEHOLDER_INTERFACE.format(i) for i in range(count)]
        if count % 2:
            interfaces.append("dummy")
        files[f"trex/trex_cfg-{count}ports.yaml"] = config.render(
            ports=tester_addresses(count), interfaces=interfaces, placeholders=placeholders, dummy=bool(count % 2), **common
        )
    files["trex/fullmesh.py"] = env.get_template("testplan/switches/fullmesh.py.j2").render(**common)
    files["trex/run_trials.py"] = env.get_template("testplan/switches/run_trials.py.j2").render(**common)
    data = {path: text.encode() for path, text in files.items()}
    data.update(marker("testplan", plan.fabric, SWITCH_PLAN_KIND))
    data.update({path: text.encode() for path, text in render_manifest(intent.intent.file, intent.intent.sha256, {}, data, {}).items()})
    return data
