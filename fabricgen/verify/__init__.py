"""`fabricgen verify BUILD_DIR`: the live fabric against its build, read-only.

`verify_fabric` reads the expectations (plan.py), reads every device through push's access
(collect.py), checking each answer before it is kept (answers.py), compares (compare.py) and
returns a `Verification` (report.py renders it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fabricgen.basics.errors import VerifyError
from fabricgen.build.build_dir import BuildFiles
from fabricgen.build.secrets import Secrets, load_secrets, names_in
from fabricgen.push.inventory import Target
from fabricgen.verify.collect import Access, Observation, collect
from fabricgen.verify.compare import Thresholds, compare
from fabricgen.verify.plan import planned_widths, read_plan
from fabricgen.verify.report import Verification

__all__ = ["Verification", "verify_fabric"]


def verify_fabric(
    build_dir: Path,
    targets: list[Target],
    connect: Callable[[Secrets], Access],
    *,
    interval: float = 10.0,
    jobs: int = 8,
    secrets_file: Path | None = None,
    thresholds: Thresholds | None = None,
    on_done=None,
) -> Verification:
    """The findings of one pass over `targets` (push's reading of BUILD_DIR and --devices).

    connect(secrets): how to reach the devices (push's drivers, credentials and checks), given the
    secret values the build's configs name that the environment or `secrets_file` holds (all
    optional here: they only mask the running configs, on top of the keyword masking)."""
    build = BuildFiles(build_dir, VerifyError)
    plan = read_plan(build, targets, VerifyError)
    secrets = load_secrets({name for text in plan.configs.values() for name in names_in(text)}, secrets_file)
    observations: list[Observation] = collect(targets, connect(secrets), interval, jobs, on_done)
    if any("get_ecmp_widths" in o.answers for o in observations):
        plan.widths = planned_widths(build, plan.polled, plan.notes)
    findings = compare(plan, observations, secrets, thresholds or Thresholds())
    return Verification(str(build_dir), findings, observations, plan.notes, interval)
