"""The shape of `fabricgen analyze --json`: pydantic models (the documented schema; `json_schema()`
gives it as JSON Schema) and `to_json`, which builds the document from the analysis results.

Thresholds for CI (`--max-jct-stretch`, `--max-failure-cut`) are parsed here too, so the command
can refuse a malformed one before any work."""

from __future__ import annotations

import math

from pydantic import Field

from fabricgen.analysis.loadbalance import MODES
from fabricgen.basics.errors import Problem
from fabricgen.basics.models import JsonOutputModel


class Estimate(JsonOutputModel):
    mean: float | None = Field(description="mean over the seeds (null: nothing crossed the fabric)")
    low: float | None = Field(description="95 % confidence interval, low end (Student t)")
    high: float | None
    seeds: int


class ModeFindings(JsonOutputModel):
    mode: str = Field(description="ecmp, flowlet or spray")
    metrics: dict[str, Estimate] = Field(
        description=(
            "max_load_ratio, jain, stretch_median, stretch_p90, stretch_worst, share_above_stretch "
            "(flows whose FCT / ideal is above --stretch-threshold), jct_ratio_worst, jct_ratio_mean, jct_s"
        )
    )


class FabricShape(JsonOutputModel):
    network: str
    leaves: int
    spines: int
    cores: int
    gpu_nics: int = Field(description="GPU NIC ports cabled to the fabric's leaves")
    gpus: int = Field(description="GPUs (one endpoint each, whatever its NIC's ports)")
    rails: int = Field(description="GPUs per node, in port order")
    planes: int = Field(1, description="ports per GPU NIC, port p on plane p (1 unless multi-plane NICs)")
    fabric_links: int


class CapacityFindings(JsonOutputModel):
    """2-tier fabrics: the max-flow and single-failure analysis (capacity.py)."""

    leaf_uplink_gbps: float
    spine_gbps: float
    bisection_gbps: float
    min_pair_gbps: float
    min_ecmp_width: int
    worst_single_failure: str | None
    worst_single_failure_cut: float | None = Field(description="share of the least leaf-to-leaf capacity it cuts, 0..1")
    most_stranding_failure: str | None = Field(None, description="the single failure that strands the most GPUs (then GPU NIC ports): a leaf")
    most_feared_failure: str | None = Field(
        None, description="the single failure a job over every GPU feels most: the one that stops it over the most GPUs, else slows it most"
    )
    most_feared_stops_job: bool = Field(False, description="whether it strands GPUs, so a job using them stops")
    most_feared_job_slowdown: float | None = Field(
        None, description="when it stops no job: the cross-rail all-to-all's time under ideal balancing, failed / intact"
    )
    stranded_gpu_nics: int = Field(0, description="GPU NIC ports it strands (their leaf is down)")
    stranded_gpus: int = Field(0, description="GPUs it leaves with no backend port")
    stranded_nodes: int = Field(0, description="GPU nodes with a port it strands")


class FailureFindings(JsonOutputModel):
    down: list[str] = Field(description="the devices and cables failed (--fail)")
    capacity_cut: float = Field(description="1 - intact / failed makespan of the traffic under spraying, 0..1")
    flows_lost: float = Field(description="share of the flows whose GPU's leaf is down")
    jct_change: dict[str, float] = Field(description="mode -> slowest job's time failed / intact")
    modes: list[ModeFindings]


class Verdict(JsonOutputModel):
    passed: bool
    violations: list[str]


class AnalysisOutput(JsonOutputModel):
    """What `fabricgen analyze --json` prints (schema_version 1)."""

    schema_version: int = 1
    fabric: FabricShape
    capacity: CapacityFindings | None = None
    traffic: dict[str, str | int | float] | None = Field(None, description="the traffic options simulated")
    crosses_fabric: bool | None = None
    modes: list[ModeFindings] = Field([])
    sweep: dict[str, dict[str, Estimate]] = Field({}, description="concurrent jobs -> mode -> slowest job's JCT / ideal")
    failure: FailureFindings | None = None
    verdict: Verdict


def json_schema() -> dict:
    return AnalysisOutput.model_json_schema()


def estimate(value) -> Estimate:
    finite = value.mean == value.mean
    return Estimate(mean=value.mean if finite else None, low=value.low if finite else None, high=value.high if finite else None, seeds=value.n)


def modes(summaries) -> list[ModeFindings]:
    return [ModeFindings(mode=m, metrics={k: estimate(v) for k, v in s.metrics.items()}) for m, s in summaries.items()]


def parse_jct_limits(text: str | None) -> tuple[dict[str, float], list[Problem]]:
    """`--max-jct-stretch X` (every mode) or `ecmp=X,flowlet=Y`: mode -> limit."""
    if text is None:
        return {}, []
    limits, problems = {}, []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        mode, _, value = part.rpartition("=")
        targets = [mode] if mode else list(MODES)
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if mode and mode not in MODES:
            problems.append(Problem(f"--max-jct-stretch: {mode!r} is not a mode", hint=f"choose from: {', '.join(MODES)}"))
        elif not number >= 1.0:
            problems.append(Problem(f"--max-jct-stretch: {value!r} is not a number of at least 1", hint="e.g. --max-jct-stretch 1.2 or ecmp=1.5,flowlet=1.2"))
        else:
            limits.update(dict.fromkeys(targets, number))
    if not limits and not problems:
        problems.append(Problem("--max-jct-stretch names no limit", hint="e.g. --max-jct-stretch 1.2"))
    return limits, problems


def violations(summaries, jct_limits: dict[str, float], failure_cut: float | None, max_cut_percent: float | None) -> list[str]:
    found = []
    for mode, summary in summaries.items():
        limit = jct_limits.get(mode)
        value = summary.metrics["jct_ratio_worst"].mean
        if limit is not None and not math.isnan(value) and value > limit:
            found.append(f"{mode}: slowest job's JCT is {value:.3f} x ideal, above --max-jct-stretch {limit:g}")
    if max_cut_percent is not None and failure_cut is not None and failure_cut * 100 > max_cut_percent:
        found.append(f"the failure cuts {failure_cut:.1%} of the capacity, above --max-failure-cut {max_cut_percent:g}%")
    return found
