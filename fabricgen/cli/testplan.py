"""`fabricgen testplan`: a GPU-side acceptance plan from a build, and the check of its results."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fabricgen.basics.trust import printable
from fabricgen.basics.user_paths import INPUT_DIRECTORY, INPUT_FILE, OUTPUT_DIRECTORY, output_file
from fabricgen.cli.common import (
    BUILD_DIR_ARG,
    ProblemFormat,
    checked,
    json_option,
    out,
    print_json,
    run_or_exit,
    write_report,
)


class _PlanByDefault(typer.core.TyperGroup):
    """`fabricgen testplan BUILD_DIR` plans; `fabricgen testplan check ...` checks."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["plan", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_PlanByDefault,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="`fabricgen testplan BUILD_DIR [-o PLAN_DIR] [--efficiency X]` writes a GPU-side acceptance plan (perftest pairs, NCCL/RCCL runs); `fabricgen testplan check PLAN_DIR RESULTS...` checks its results.",
)


OUTPUT_OPTION = typer.Option(
    None,
    "--output",
    "-o",
    help="The plan directory (default: BUILD_DIR-testplan). Replaced as a whole, and only when it holds an earlier plan of the same fabric.",
    callback=checked(OUTPUT_DIRECTORY),
)
PLAN_DIR_ARG = typer.Argument(..., help="A plan directory written by `fabricgen testplan`.", callback=checked(INPUT_DIRECTORY))
RESULTS_ARG = typer.Argument(..., help="perftest and nccl-tests/rccl-tests output files (results/<id>.txt): regular files.", callback=checked(INPUT_FILE))


@app.command("plan", hidden=True)
def testplan_command(
    build_dir: Path = BUILD_DIR_ARG,
    output: Path | None = OUTPUT_OPTION,
    efficiency: float = typer.Option(0.9, "--efficiency", min=0.01, max=1.0, help="Share of line rate a perftest pair and an all-reduce must reach."),
    alltoall_efficiency: float = typer.Option(
        0.6,
        "--alltoall-efficiency",
        min=0.01,
        max=1.0,
        help="Share of the all-to-all bound it must reach (ECMP hashes its flows unevenly: the Cisco AI-cluster whitepaper's ECMP run reached 65 %).",
    ),
    as_json: bool = json_option("fabricgen/testplan/model.py TestPlan, the plan directory's testplan.json"),
) -> None:
    """Write an acceptance plan for BUILD_DIR: perftest pairs crossing every backend fabric link
    both ways, rounds that pair every GPU NIC behind its leaf, NCCL (NVIDIA) or RCCL (AMD) runs
    per scalable unit and for the cluster, a script per node, testplan.md and testplan.json.
    Exit 2 on a bad build (nothing written)."""
    from fabricgen.basics.user_paths import check_path
    from fabricgen.build.output import beside
    from fabricgen.testplan import write_plan

    # the default, derived from BUILD_DIR, checked as -o would be (a long name plus the suffix)
    destination = output or run_or_exit(lambda: check_path(beside(build_dir, "-testplan"), OUTPUT_DIRECTORY, "--output (default BUILD_DIR-testplan)"))
    plan = run_or_exit(lambda: write_plan(build_dir, destination, efficiency, alltoall_efficiency))
    if as_json:
        print_json(plan)
        return
    rounds = max((p.round for p in plan.pairs), default=0)
    nic_pairs = sum(1 for p in plan.pairs if p.kind == "nic")
    out.print(
        f"{printable(destination)}: {len(plan.pairs):,} perftest pair{'s' * (len(plan.pairs) != 1)} ({len(plan.pairs) - nic_pairs:,} across the fabric, "
        f"{nic_pairs:,} behind one leaf) in {rounds:,} round{'s' * (rounds != 1)}, {len(plan.runs):,} collective runs",
        markup=False,
    )


JSON_REPORT_OPTION = typer.Option(
    None,
    "--json-report",
    help="Also write the findings as JSON to this file (its directories are created), outside the plan directory.",
    callback=checked(output_file("the report", "results.json")),
)
REPORT_OPTION = typer.Option(
    None,
    "--report",
    help="Also write the findings as Markdown to this file (its directories are created), outside the plan directory.",
    callback=checked(output_file("the report", "results.md")),
)


@app.command("check")
def testplan_check_command(
    plan_dir: Path = PLAN_DIR_ARG,
    results: list[Path] = RESULTS_ARG,
    json_file: Path | None = JSON_REPORT_OPTION,
    report_file: Path | None = REPORT_OPTION,
    as_json: bool = json_option("fabricgen/testplan/check.py CheckJson; instead of the Markdown"),
) -> None:
    """Compare results with the plan (a GPU plan, or a switch acceptance plan of `testplan
    switches`); name every short pair (nodes, NICs, rails, cables, the
    fabric links short pairs share) and run (peak and average bus bandwidth as printed). Exit 0
    all met, 1 below a threshold, 2 on bad input."""
    from fabricgen.testplan.check import as_json as as_json_text
    from fabricgen.testplan.check import as_markdown, check_reports, check_results

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    run_or_exit(lambda: check_reports({"--json-report": json_file, "--report": report_file}, results), problems)
    from fabricgen.testplan.switches import is_switch_plan

    if is_switch_plan(plan_dir):  # a `testplan switches` plan: its own reader and judge; the same output, reports and exit codes
        from fabricgen.testplan.switches.check import as_json as as_json_text  # type: ignore[assignment]
        from fabricgen.testplan.switches.check import as_markdown  # type: ignore[assignment]
        from fabricgen.testplan.switches.check import check_switch_results as check_results  # type: ignore[assignment]
    result = run_or_exit(lambda: check_results(plan_dir, results), problems)
    text = as_markdown(result)
    if as_json:
        sys.stdout.write(as_json_text(result))
    else:
        out.print(text, markup=False, highlight=False)
    if json_file is not None:
        write_report(json_file, as_json_text(result).encode())
    if report_file is not None:
        write_report(report_file, text.encode())
    raise typer.Exit(0 if result.passed else 1)


@app.command("switches")
def testplan_switches_command(
    build_dir: Path = BUILD_DIR_ARG,
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="The plan directory (default: BUILD_DIR-switch-acceptance). Replaced as a whole, and only when it holds an earlier switch plan of the same fabric.",
        callback=checked(OUTPUT_DIRECTORY),
    ),
    mesh_ports: int = typer.Option(512, "--mesh-ports", min=2, max=512, help="Most ports in one full-mesh group: the tester's port count."),
    duration: int = typer.Option(60, "--duration", min=1, max=3600, help="Seconds per trial (RFC 2544: at least 60; seed 002 ran 300)."),
    max_latency_us: float | None = typer.Option(
        None, "--max-latency-us", min=0.001, max=1_000_000, help="Judge each trial's maximum latency against this bound (default: reported only)."
    ),
    max_jitter_us: float | None = typer.Option(
        None, "--max-jitter-us", min=0.001, max=1_000_000, help="Judge each trial's jitter against this bound (default: reported only)."
    ),
    rate_tolerance_ppm: int = typer.Option(
        1,
        "--rate-tolerance-ppm",
        min=0,
        max=100,
        help="How far under the planned rate a port may offer, in ppm of line rate (a timed count is not exact to the frame).",
    ),
    tester_interfaces: str | None = typer.Option(
        None,
        "--tester-interfaces",
        help="The tester's DPDK ports in cabling order, comma-separated PCI addresses (03:00.0,03:00.1,...), for trex_cfg files TRex loads as written.",
    ),
    as_json: bool = json_option("fabricgen/testplan/switches/model.py SwitchPlan, the plan directory's switch-plan.json"),
) -> None:
    """Write a switch acceptance plan for BUILD_DIR: per switch model and port speed the RFC 2544
    line rate per frame size, RFC 2889 full-mesh port groups, throughput (99.999 % of line rate,
    zero loss) and latency trials for TRex, and a checklist per switch. Exit 2 on a bad build
    (nothing written)."""
    from fabricgen.basics.user_paths import check_path
    from fabricgen.build.output import beside
    from fabricgen.testplan.switches import tester_interfaces as parse_interfaces
    from fabricgen.testplan.switches import write_switch_plan

    interfaces = run_or_exit(lambda: parse_interfaces(tester_interfaces))
    destination = output or run_or_exit(
        lambda: check_path(beside(build_dir, "-switch-acceptance"), OUTPUT_DIRECTORY, "--output (default BUILD_DIR-switch-acceptance)")
    )
    plan = run_or_exit(lambda: write_switch_plan(build_dir, destination, mesh_ports, duration, max_latency_us, max_jitter_us, interfaces, rate_tolerance_ppm))
    if as_json:
        print_json(plan)
        return
    groups = sum(len(s.groups) for s in plan.switches)
    trials = sum(len(s.groups) for s in plan.switches) * len(plan.frame_sizes) * len(plan.loads)
    out.print(
        f"{printable(destination)}: {len(plan.switches):,} switches, {len(plan.models):,} model and speed pairs, {groups:,} full-mesh groups, {trials:,} trials",
        markup=False,
    )
