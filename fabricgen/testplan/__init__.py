"""`fabricgen testplan`: a GPU-side acceptance plan written from a build (perftest pairs that cross
every fabric link, NCCL/RCCL runs with bus-bandwidth bounds), and `testplan check`, which reads
the tools' output back and names what falls short.

    write_plan(BUILD_DIR, PLAN_DIR, efficiency, alltoall_efficiency) -> TestPlan
    check_results(PLAN_DIR, [RESULTS...]) -> CheckResult
"""

from __future__ import annotations

from pathlib import Path

from fabricgen.build.output import write_build
from fabricgen.testplan.model import TestPlan
from fabricgen.testplan.plan import TestplanError, build_plan, open_build
from fabricgen.testplan.render import render_plan
from fabricgen.testplan.runs import ALLTOALL_EFFICIENCY

__all__ = ["TestplanError", "write_plan"]


def write_plan(build_dir: Path, plan_dir: Path, efficiency: float = 0.9, alltoall_efficiency: float = ALLTOALL_EFFICIENCY) -> TestPlan:
    """Plan the build in `build_dir` (verified) and write the plan directory atomically: all of it,
    or nothing (TestplanError / OutputError on bad input)."""
    build = open_build(build_dir)
    plan = build_plan(build, efficiency, alltoall_efficiency)
    write_build(render_plan(plan, build.manifest), plan_dir)
    return plan
