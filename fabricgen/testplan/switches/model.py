"""switch-plan.json: the switch acceptance plan as `fabricgen testplan check` reads it back
(strictly, through these models, after the plan directory's manifest.json vouched for it)."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from fabricgen.basics.models import FileModel
from fabricgen.basics.trust import Hostname, PortName, Token
from fabricgen.basics.units import MAX_SPEED_GBPS
from fabricgen.testplan.switches.rates import MAX_FRAME, MIN_FRAME, LoadPercent

SWITCH_PLAN_FORMAT: Final = 1
SWITCH_PLAN_KIND = "switch-acceptance"  # fabricgen-output.json's format of a switch plan (kind "testplan")
MAX_MESH_PORTS = 512  # tester port i is 198.18.<i>.2/24 inside 198.18.0.0/15 (RFC 2544 appendix C): 512 /24s
MAX_DURATION_S = 3600

FrameBytes = Annotated[int, Field(ge=MIN_FRAME, le=MAX_FRAME)]
Speed = Annotated[int, Field(ge=1, le=MAX_SPEED_GBPS)]
Microseconds = Annotated[float, Field(gt=0, le=1_000_000)]


class FrameRate(FileModel):
    """One row of a speed's rate table (fabricgen/testplan/switches/rates.py computes it)."""

    frame_bytes: FrameBytes
    line_fps_exact: Annotated[str, Field(max_length=64)]  # "12500000000/21": numerator/denominator
    line_fps: int  # rounded down to whole frames/s
    throughput_fps_exact: Annotated[str, Field(max_length=64)]  # the throughput load's share of it, numerator/denominator
    throughput_fps: Annotated[str, Field(max_length=32)]  # the same to a tenth of a frame/s, as shown: "148,808,035.7"


class SpeedRates(FileModel):
    speed_gbps: Speed
    rates: list[FrameRate]


class MeshGroup(FileModel):
    """Switch ports tested together in an RFC 2889 full mesh: tester port i (0-based) is cabled to
    ports[i] and sends to every other port of the group in equal shares."""

    id: Token  # "400g-1": speed and the group's number on its switch
    speed_gbps: Speed
    ports: Annotated[list[PortName], Field(min_length=2, max_length=MAX_MESH_PORTS)]
    tester_config: Token  # trex/trex_cfg-<n>ports.yaml's file name


class SwitchUnderTest(FileModel):
    name: Hostname
    model: Annotated[str, Field(max_length=80)]
    role: Token
    network: Token
    groups: list[MeshGroup]


class ModelSpeed(FileModel):
    """A switch model at one port speed: what the acceptance measures once per model and speed."""

    model: Annotated[str, Field(max_length=80)]
    speed_gbps: Speed
    switches: list[Hostname]
    ports: int  # the build's ports at this speed over those switches


class SwitchPlan(FileModel):
    format: Literal[1] = SWITCH_PLAN_FORMAT
    fabric: Hostname
    frame_sizes: Annotated[list[FrameBytes], Field(min_length=1, max_length=64)]
    loads: list[LoadPercent]
    throughput_load: LoadPercent
    duration_s: Annotated[int, Field(ge=1, le=MAX_DURATION_S)]
    rate_tolerance_ppm: Annotated[int, Field(ge=0, le=100)]
    max_latency_us: Microseconds | None = None
    max_jitter_us: Microseconds | None = None
    latency_pps: Annotated[int, Field(ge=1, le=100_000)]
    speeds: list[SpeedRates]
    models: list[ModelSpeed]
    switches: list[SwitchUnderTest]
    notes: list[Annotated[str, Field(max_length=400)]] = Field([])
