"""`fabricgen analyze`: capacity, failures and load balancing of a build's fabric."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from fabricgen.analysis.limits import BOUNDS as ANALYZE_BOUNDS
from fabricgen.analysis.limits import Hash, Mode, Pattern, Placement, Schedule, Scope
from fabricgen.basics.errors import AnalysisError, Problem, raise_if
from fabricgen.basics.trust import printable
from fabricgen.basics.user_paths import STAGING_ROOM, output_file
from fabricgen.cli.common import (
    BUILD_DIR_ARG,
    NETWORK_CHOICE_OPTION,
    QUIET_OPTION,
    Network,
    ProblemFormat,
    checked,
    json_option,
    out,
    print_json,
    run_or_exit,
    write_report,
)
from fabricgen.cli.extras import require_extra
from fabricgen.cli.progress import Phases

# the phases progress shows, in order; a fabric skips those it has no use for
PHASES = ("read build", "capacity", "single failures", "load balancing", "figures", "write")


def _bounds(option: str) -> str:
    low, high = ANALYZE_BOUNDS[option]
    return f"{low:,} to {high:,}"


# the --modes default and help; a module constant, as mypy takes a comprehension's variable in a
# default argument for an undefined name (python/mypy#9346)
MODE_NAMES = [mode.value for mode in Mode]


def _modes(value: str) -> str:
    """--modes: comma-separated modes, each one of Mode, checked as the command line is read."""
    names = list(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    choices = [mode.value for mode in Mode]
    unknown = [name for name in names if name not in choices]
    if not names or unknown:
        shown = ", ".join(repr(name) for name in unknown) if unknown else "no mode"
        raise typer.BadParameter(f"{shown}: choose one or more of {', '.join(choices)}, comma-separated")
    return ",".join(names)


# the figures beside the report are named after it: analysis.md -> analysis-fct-stretch.png, staged
# as .analysis-fct-stretch.png.fabricgen-tmp (analysis.limits.report_problems checks them too)
REPORT_FILE = output_file("the report", "analysis.md", beside="the figures", room=len("-fct-stretch.png") + STAGING_ROOM)
REPORT_OPTION = typer.Option(
    None,
    "--report",
    help="Write the findings as Markdown to this file (its directories are created), and the figures (PNG and SVG) beside it.",
    callback=checked(REPORT_FILE),
)
PATTERN_OPTION = typer.Option(
    Pattern.all_to_all,
    "--pattern",
    help="Traffic: all-to-all, ring (all-reduce), permutation (every GPU sends to one other, a seeded random cycle of nodes) or shift (node i to node i + n/2).",
)
SCOPE_OPTION = typer.Option(
    Scope.rail, "--scope", help="rail: each GPU talks to its own rail (rail-optimized collectives); cross-rail: every hop also changes rail."
)
PLACEMENT_OPTION = typer.Option(Placement.contiguous, "--placement", help="Nodes per job: contiguous or scattered.")
HASH_OPTION = typer.Option(Hash.crc32, "--hash", help="Static ECMP's hash: crc32 (of the 5-tuple) or random (an ideal hash).")
SCHEDULE_OPTION = typer.Option(
    Schedule.fluid,
    "--schedule",
    help="fluid: every flow of the collective at once; nccl: an all-to-all in NCCL's p2p rounds (one peer node at a time, a round's latency each).",
)
FAIL_OPTION = typer.Option(
    [], "--fail", help="A device (leaf, spine, core) or a fabric cable id (cabling.csv) to fail; repeatable. The traffic runs again over what remains."
)


def analyze_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: Network = NETWORK_CHOICE_OPTION,
    worst: int = typer.Option(10, "--worst", help=f"How many of the worst single failures to list ({_bounds('--worst')})."),
    report_file: Path | None = REPORT_OPTION,
    pattern: Pattern = PATTERN_OPTION,
    scope: Scope = SCOPE_OPTION,
    senders: str = typer.Option("all", "--senders", help="all, or leaf:NAME: only the GPUs on that leaf send."),
    concurrent_jobs: int = typer.Option(
        1, "--concurrent-jobs", help=f"Concurrent jobs sharing the cluster ({_bounds('--concurrent-jobs')}, at most half the GPU nodes)."
    ),
    old_jobs: int | None = typer.Option(None, "--jobs", hidden=True, help="Deprecated: --concurrent-jobs."),
    placement: Placement = PLACEMENT_OPTION,
    schedule: Schedule = SCHEDULE_OPTION,
    message_bytes: int = typer.Option(
        1 << 20, "--message-bytes", help=f"Bytes per GPU pair (all-to-all, permutation, shift) or per GPU (ring) ({_bounds('--message-bytes')})."
    ),
    flows_per_pair: int = typer.Option(
        1, "--flows-per-pair", help=f"Flows (RoCE queue pairs, one UDP source port each) per GPU pair ({_bounds('--flows-per-pair')})."
    ),
    load: float = typer.Option(1.0, "--load", help="Offered load: the fraction of NIC line rate the GPUs send at (0 < load <= 1)."),
    stretch_threshold: float = typer.Option(1.5, "--stretch-threshold", help="Report the share of flows whose completion / ideal is above this (>= 1)."),
    modes: str = typer.Option(
        ",".join(MODE_NAMES),
        "--modes",
        metavar="MODE[,MODE...]",
        callback=_modes,
        help=f"Load-balancing modes, comma-separated, from: {', '.join(MODE_NAMES)}.",
    ),
    hash_function: Hash = HASH_OPTION,
    flowlets: int = typer.Option(4, "--flowlets", help=f"Bursts per flow in flowlet mode ({_bounds('--flowlets')})."),
    flowlet_gap_us: float = typer.Option(
        500.0, "--flowlet-gap-us", help="Flowlet timeout (NX-OS flowlet-aging): a burst may move only after an idle gap longer than this."
    ),
    idle_gap_us: float = typer.Option(500.0, "--idle-gap-us", help="Mean idle gap between a flow's bursts (exponential)."),
    seeds: int = typer.Option(10, "--seeds", help=f"Random seeds per mode, confidence intervals over them ({_bounds('--seeds')})."),
    sweep: bool = typer.Option(True, "--sweep/--no-sweep", help="Also sweep JCT against 1, 2, 4 ... concurrent jobs."),
    fail: list[str] = FAIL_OPTION,
    as_json: bool = json_option("fabricgen/analysis/schema.py AnalysisOutput; instead of the Markdown"),
    max_jct_stretch: str | None = typer.Option(
        None, "--max-jct-stretch", help="Exit 1 when the slowest job's JCT / ideal is above X: X for every mode, or ecmp=X,flowlet=Y."
    ),
    max_failure_cut: float | None = typer.Option(
        None,
        "--max-failure-cut",
        help="Exit 1 when the --fail scenario (or, without --fail, the worst single failure of a 2-tier fabric) cuts more than PERCENT of the capacity.",
    ),
    no_traffic: bool = typer.Option(False, "--no-traffic", help="Capacity and failures only."),
    quiet: bool = QUIET_OPTION,
) -> None:
    """Will the fabric BUILD_DIR built deliver what the GPUs need? Capacity per tier, bisection,
    max-flow between rails and scalable units, oversubscription per leaf, every single failure's
    capacity and ECMP width left (the worst named), and load balancing (static ECMP, flowlet,
    per-packet spraying) under collective traffic over 2- and 3-tier fabrics, planes and rail-only
    designs: link loads, Jain's fairness, FCT stretch, JCT, with devices or links failed.

    Every option is checked before the build is read (also with --no-traffic), and the
    simulation's memory and work are estimated from the fabric's size before it runs: what would
    not fit is refused (exit 2) with the option to lower and the value that fits. Exit 1 when a
    threshold (--max-jct-stretch, --max-failure-cut) is exceeded."""
    require_extra("analyze", "analyze")
    errors = ProblemFormat.json if as_json else ProblemFormat.text
    if old_jobs is not None:
        if concurrent_jobs != 1 and concurrent_jobs != old_jobs:
            run_or_exit(
                lambda: raise_if([Problem("--jobs (deprecated) and --concurrent-jobs disagree", hint="give --concurrent-jobs only")], AnalysisError), errors
            )
        sys.stderr.write("warning: analyze --jobs is deprecated and goes in the next release: use --concurrent-jobs (build's --jobs counts processes)\n")
        concurrent_jobs = old_jobs
    with _quiet_libraries():
        from fabricgen.analysis import schema
        from fabricgen.analysis.balancing import analyse, plan, suits
        from fabricgen.analysis.capacity import capacity, single_failures, worst_for_capacity
        from fabricgen.analysis.fabric import read_fabric
        from fabricgen.analysis.limits import (
            TrafficOptions,
            check_capacity_cost,
            option_problems,
            report_problems,
        )
        from fabricgen.analysis.report import (
            balancing_markdown,
            markdown,
            paths_markdown,
        )

    options = TrafficOptions(
        pattern=pattern.value,
        scope=scope.value,
        jobs=concurrent_jobs,
        placement=placement.value,
        message_bytes=message_bytes,
        flows_per_pair=flows_per_pair,
        modes=tuple(modes.split(",")),
        hash=hash_function.value,
        flowlets=flowlets,
        seeds=seeds,
        senders=senders,
        load=load,
        stretch_threshold=stretch_threshold,
        flowlet_gap_us=flowlet_gap_us,
        idle_gap_us=idle_gap_us,
        schedule=schedule.value,
    )
    network_name = network.value
    jct_limits, limit_problems = schema.parse_jct_limits(max_jct_stretch)
    problems = option_problems(network_name, worst, options) + (report_problems(report_file) if report_file is not None else []) + limit_problems
    if max_failure_cut is not None and not 0 <= max_failure_cut <= 100:
        problems.append(Problem(f"--max-failure-cut must be a percentage 0-100, not {max_failure_cut:g}", hint="e.g. --max-failure-cut 25"))
    if fail and no_traffic:
        problems.append(Problem("--fail simulates traffic, --no-traffic does not", hint="drop one of them"))
    run_or_exit(lambda: raise_if(problems, AnalysisError), errors)

    def analyse_build(progress: Phases):
        with progress.phase("read build"):
            fabric = read_fabric(build_dir, network_name)
        unknown = [name for name in fail if name not in fabric.switches and name not in {key for key, *_ in fabric.cables}]
        raise_if(
            [
                Problem(
                    f"--fail {name!r} is neither a switch nor a fabric cable id of the {network_name} fabric",
                    hint="name a leaf, spine or core, or a cable_id of a switch-to-switch row of cabling.csv",
                )
                for name in unknown
            ],
            AnalysisError,
        )
        two_tier = bool(fabric.spines) and not fabric.cores
        if two_tier:
            check_capacity_cost(len(fabric.leaves), len(fabric.spines), network_name)
        simulated = not no_traffic and fabric.nic_leaf.size > 0
        # a CI threshold or a failure that nothing would measure is refused, never passed in silence
        if max_failure_cut is not None and not fail and not two_tier:
            raise AnalysisError(
                Problem(
                    f"--max-failure-cut without --fail reads the single-failure tables, which cover 2-tier leaf-spine fabrics; the {network_name} fabric has "
                    + (f"{len(fabric.cores):,} cores" if fabric.cores else "no spines"),
                    hint="name the failure to measure: --fail DEVICE|CABLE",
                )
            )
        if fail and not simulated:
            raise AnalysisError(Problem(f"--fail simulates GPU traffic, and the {network_name} fabric has no GPU nodes", hint="analyse the backend fabric"))
        # every option against this fabric before the capacity analysis, not after; the
        # simulation's cost only when it runs
        if simulated:
            plan(fabric, options, sweep)
        elif fabric.nic_leaf.size > 0:
            suits(fabric, options)
        found, failures = None, []
        if two_tier:
            with progress.phase("capacity", f"{len(fabric.leaves):,} leaves, {len(fabric.spines):,} spines"):
                found = capacity(fabric)
            with progress.phase("single failures"):
                failures = single_failures(fabric)
            text = markdown(fabric, found, failures, worst)
        else:
            text = paths_markdown(fabric)
        balancing = None
        if simulated:
            work = f"{', '.join(options.modes)} x {options.seeds} seeds" + (", the jobs sweep" if sweep and options.senders == "all" else "")
            try:
                with progress.phase("load balancing", work):
                    balancing = analyse(
                        fabric,
                        options,
                        sweep,
                        devices=tuple(n for n in fail if n in fabric.switches),
                        cables=tuple(n for n in fail if n not in fabric.switches),
                    )
            except MemoryError:
                # the estimate is measured, not a guarantee: other programs may have taken the memory meanwhile
                raise AnalysisError(
                    Problem(
                        "the load-balancing simulation ran out of memory",
                        hint="lower --flows-per-pair or --flowlets, or use --no-traffic",
                    )
                ) from None
        elif not no_traffic:
            text += (
                f"\n## Load balancing under collective traffic\n\nThe {network_name} fabric has no GPU nodes; collective traffic is analysed on the backend.\n"
            )
        files = {}
        if balancing is not None:
            png = {}
            if report_file is not None and balancing.crosses_fabric:
                with progress.phase("figures"):
                    from fabricgen.analysis.plots import figures

                    # figures beside the report, named after it: analysis.md -> analysis-link-load.png
                    files = {f"{report_file.stem}-{name}": data for name, data in figures(balancing).items()}
                png = {
                    name: f"{report_file.stem}-{name}.png" for name in ("link-load", "fct-stretch", "jct-vs-jobs") if f"{report_file.stem}-{name}.png" in files
                }
            text += "\n" + balancing_markdown(balancing, png)
        if fail:
            assert balancing is not None, "--fail without a simulation is refused above"
            if balancing.failure is None:
                raise AnalysisError(
                    Problem(
                        f"--fail: no flow of this traffic crosses from one leaf to another, so no failure of {', '.join(fail)} was simulated",
                        hint="this fabric has no spines: the report's leaf-failure table says what each leaf cuts off"
                        if not fabric.spines
                        else "use --scope cross-rail, or a fabric of several scalable units",
                    )
                )
        # --max-failure-cut reads capacity, as before: the failure that leaves the least, not the one a job feels most
        by_capacity = worst_for_capacity(failures) if not fail else None
        cut = (
            balancing.failure.capacity_cut
            if balancing is not None and balancing.failure is not None
            else (1 - by_capacity.capacity_left if by_capacity is not None else None)
        )
        broken = schema.violations(balancing.summaries if balancing is not None else {}, jct_limits, cut, max_failure_cut)
        document = _analysis_json(schema, fabric, found, failures, balancing, broken)
        return text, files, document, broken

    with Phases("analyze", quiet=quiet, order=PHASES) as progress, _quiet_libraries():
        text, figure_files, document, broken = run_or_exit(lambda: analyse_build(progress), errors)
        if report_file is not None:
            with progress.phase("write", report_file.name):
                for name, data in figure_files.items():
                    write_report(report_file.with_name(name), data)
                write_report(report_file, text.encode())
    if as_json:
        print_json(document)
    else:
        out.print(text, markup=False, highlight=False)
        for line in broken:
            out.print(f"threshold exceeded: {line}", markup=False)
        if report_file is not None:
            out.print(f"report: {printable(report_file)}" + (f" and {len(figure_files)} figures beside it" if figure_files else ""), markup=False)
    raise typer.Exit(1 if broken else 0)


@contextmanager
def _quiet_libraries() -> Iterator[None]:
    """No warning of numpy or matplotlib reaches the user: a division by zero on an empty series
    (the report says what it means), matplotlib's notes on its font cache or config directory.
    The findings never depend on them; warnings in tests still show (pytest records them)."""
    import logging
    import warnings

    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import numpy
        except ImportError:  # the analysis itself says what is missing
            yield
            return
        with numpy.errstate(all="ignore"):
            yield


def _analysis_json(schema, fabric, found, failures, balancing, broken):
    """The analysis as the documented `schema.AnalysisOutput`."""
    from fabricgen.analysis.capacity import most_feared, most_stranding, worst_for_capacity

    shape = schema.FabricShape(
        network=fabric.network,
        leaves=len(fabric.leaves),
        spines=len(fabric.spines),
        cores=len(fabric.cores),
        gpu_nics=int(fabric.nic_leaf.size),
        gpus=int(fabric.nic_leaf.size // fabric.nic_leaf.shape[2]),
        rails=int(fabric.nic_leaf.shape[1]) if fabric.nic_leaf.size else 0,
        planes=int(fabric.nic_leaf.shape[2]),
        fabric_links=len(fabric.cables),
    )
    capacity_found = None
    if found is not None:
        stranding = most_stranding(failures)
        worst, feared = worst_for_capacity(failures), most_feared(failures)
        capacity_found = schema.CapacityFindings(
            leaf_uplink_gbps=found.leaf_uplink_gbps,
            spine_gbps=found.spine_gbps,
            bisection_gbps=found.bisection_gbps,
            min_pair_gbps=found.min_pair_gbps,
            min_ecmp_width=found.min_ecmp_width,
            worst_single_failure=f"{worst.kind} {worst.name}" if worst is not None else None,
            worst_single_failure_cut=1 - worst.capacity_left if worst is not None else None,
            most_feared_failure=f"{feared.kind} {feared.name}" if feared is not None else None,
            most_feared_stops_job=feared.stops_a_job if feared is not None else False,
            most_feared_job_slowdown=None if feared is None or feared.stops_a_job else feared.job_slowdown,
            most_stranding_failure=f"{stranding.kind} {stranding.name}" if stranding is not None else None,
            stranded_gpu_nics=stranding.stranded_nics if stranding is not None else 0,
            stranded_gpus=stranding.stranded_gpus if stranding is not None else 0,
            stranded_nodes=stranding.stranded_nodes if stranding is not None else 0,
        )
    document = schema.AnalysisOutput(fabric=shape, capacity=capacity_found, verdict=schema.Verdict(passed=not broken, violations=broken))
    if balancing is None:
        return document
    o = balancing.options
    document.traffic = {
        "pattern": o.pattern,
        "scope": o.scope,
        "senders": o.senders,
        "jobs": o.jobs,
        "placement": o.placement,
        "message_bytes": o.message_bytes,
        "flows_per_pair": o.flows_per_pair,
        "load": o.load,
        "hash": o.hash,
        "flowlets": o.flowlets,
        "flowlet_gap_us": o.flowlet_gap_us,
        "idle_gap_us": o.idle_gap_us,
        "schedule": o.schedule,
        "stretch_threshold": o.stretch_threshold,
        "seeds": o.seeds,
    }
    document.crosses_fabric = balancing.crosses_fabric
    document.modes = schema.modes(balancing.summaries)
    document.sweep = {str(j): {m: schema.estimate(s.metrics["jct_ratio_worst"]) for m, s in per.items()} for j, per in balancing.sweep.items()}
    if balancing.failure is not None:
        f = balancing.failure
        document.failure = schema.FailureFindings(
            down=list(f.down), capacity_cut=f.capacity_cut, flows_lost=f.flows_lost, jct_change=f.jct_change, modes=schema.modes(f.summaries)
        )
    return document
