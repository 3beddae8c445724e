"""The switch acceptance plan of a build: every switch's data ports by speed, split into RFC 2889
full-mesh groups, and the RFC 2544 rates each group must carry.

Input is the build's topology.json (verified against its manifest.json): the switches (leaf,
spine, core and OOB switches, with their catalog model) and every link with the speed and port
name at each end. A switch's data ports are the ports of its links except console cables and its
own management port; a management link runs from the managed device's management port (its
source) to an OOB switch's access port (its target), so the target end is a data port of the OOB
switch and the source end is not one of the managed switch's.

A full mesh (RFC 2889 section 5.1, "fully meshed"): each port of a group sends to every other port
of the group in equal shares, so each port also receives at its full rate. Seed 002 meshes all 128
ports of its switch at once; a switch with more ports at a speed than `mesh_ports` (the tester's
port count, at most MAX_MESH_PORTS) is split into groups of near-equal size."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from fabricgen.basics.errors import Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import BuildFiles, Topology
from fabricgen.compiler.design.graph import Role
from fabricgen.testplan.plan import TestplanError
from fabricgen.testplan.switches.model import (
    MAX_MESH_PORTS,
    FrameRate,
    MeshGroup,
    ModelSpeed,
    SpeedRates,
    SwitchPlan,
    SwitchUnderTest,
)
from fabricgen.testplan.switches.rates import (
    FRAME_SIZES,
    LOADS,
    RATE_TOLERANCE_PPM,
    THROUGHPUT_LOAD,
    line_fps,
    offered_fps,
    tenths,
    whole_fps_down,
)

SWITCH_ROLES = frozenset({Role.LEAF, Role.SPINE, Role.CORE, Role.OOB_SWITCH})
DEFAULT_DURATION_S = 60  # RFC 2544 section 24: a trial SHOULD last at least 60 s (seed 002 ran 300 s)
LATENCY_PPS = 1000  # each port's latency stream; TRex keeps latency streams low-rate (its stateless manual, per stream latency)


def open_build(root: Path) -> BuildFiles:
    """A build directory, verified against its manifest (TestplanError naming what is wrong)."""
    return BuildFiles(root, TestplanError, keep=lambda path: path == "topology.json")


def data_ports(topology: Topology) -> dict[str, dict[int, list[str]]]:
    """Switch name -> speed (Gb/s) -> its data ports at that speed, in natural order (see the
    module docstring for which ports count)."""
    switches = {node.id for node in topology.nodes if node.role in SWITCH_ROLES}
    found: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for link in topology.links:
        if link.kind == "console" or link.speed_gbps == 0:
            continue
        ends = [(link.target, link.target_port)] if link.kind == "management" else [(link.source, link.source_port), (link.target, link.target_port)]
        for device, port in ends:
            if device in switches:
                found[device][link.speed_gbps].add(port)
    return {name: {speed: sorted(ports, key=natural_key) for speed, ports in by_speed.items()} for name, by_speed in found.items()}


def mesh_groups(ports: list[str], speed: int, mesh_ports: int) -> list[MeshGroup]:
    """`ports` in groups of at most `mesh_ports`, of near-equal size (a group of one port has no
    mesh; a lone port joins its neighbours by the even split)."""
    count = math.ceil(len(ports) / mesh_ports)
    size, extra = divmod(len(ports), count)
    groups, start = [], 0
    for number in range(1, count + 1):
        members = ports[start : start + size + (number <= extra)]
        start += len(members)
        groups.append(MeshGroup(id=f"{speed}g-{number}", speed_gbps=speed, ports=members, tester_config=tester_config_name(len(members))))
    return groups


def tester_config_name(port_count: int) -> str:
    return f"trex_cfg-{port_count}ports.yaml"


def speed_rates(speed: int, frame_sizes: tuple[int, ...]) -> SpeedRates:
    rows = []
    for size in frame_sizes:
        line, throughput = line_fps(speed, size), offered_fps(speed, size, THROUGHPUT_LOAD)
        rows.append(
            FrameRate(
                frame_bytes=size,
                line_fps_exact=f"{line.numerator}/{line.denominator}",
                line_fps=whole_fps_down(line),
                throughput_fps_exact=f"{throughput.numerator}/{throughput.denominator}",
                throughput_fps=tenths(throughput),
            )
        )
    return SpeedRates(speed_gbps=speed, rates=rows)


def build_switch_plan(
    build: BuildFiles,
    mesh_ports: int = MAX_MESH_PORTS,
    duration_s: int = DEFAULT_DURATION_S,
    max_latency_us: float | None = None,
    max_jitter_us: float | None = None,
    rate_tolerance_ppm: int = RATE_TOLERANCE_PPM,
) -> SwitchPlan:
    """The plan of a verified build, with notes (ports left out: a speed with a single port on a
    switch has no mesh). TestplanError when the build has no switch with two ports at a speed."""
    topology = build.topology()
    by_switch = data_ports(topology)
    nodes = {node.id: node for node in topology.nodes if node.id in by_switch}
    switches: list[SwitchUnderTest] = []
    notes: list[str] = []
    per_model: dict[tuple[str, int], list[str]] = defaultdict(list)
    ports_of_model: dict[tuple[str, int], int] = defaultdict(int)
    for name in sorted(by_switch, key=natural_key):
        node = nodes[name]
        groups: list[MeshGroup] = []
        for speed in sorted(by_switch[name]):
            ports = by_switch[name][speed]
            if len(ports) < 2:
                notes.append(f"{name}: a single port at {speed}G ({ports[0]}): a full mesh needs two; test it with a neighbour port of another speed")
                continue
            groups += mesh_groups(ports, speed, mesh_ports)
            per_model[node.model, speed].append(name)
            ports_of_model[node.model, speed] += len(ports)
        if groups:
            switches.append(SwitchUnderTest(name=name, model=node.model, role=str(node.role), network=str(node.network), groups=groups))
    if not switches:
        raise TestplanError(
            Problem(
                "the build has no switch with two data ports at one speed: there is nothing to mesh",
                hint="plan a build with switches",
                file=str(build.root / "topology.json"),
            )
        )
    speeds = sorted({speed for _, speed in per_model})
    return SwitchPlan(
        fabric=topology.graph.name,
        frame_sizes=list(FRAME_SIZES),
        loads=list(LOADS),
        throughput_load=THROUGHPUT_LOAD,
        duration_s=duration_s,
        rate_tolerance_ppm=rate_tolerance_ppm,
        max_latency_us=max_latency_us,
        max_jitter_us=max_jitter_us,
        latency_pps=LATENCY_PPS,
        speeds=[speed_rates(speed, FRAME_SIZES) for speed in speeds],
        models=[
            ModelSpeed(model=model, speed_gbps=speed, switches=names, ports=ports_of_model[model, speed])
            for (model, speed), names in sorted(per_model.items(), key=lambda item: (natural_key(item[0][0]), item[0][1]))
        ],
        switches=switches,
        notes=notes,
    )
