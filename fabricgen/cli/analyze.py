"""`fabricgen analyze`: capacity, failures and load balancing of a build's fabric."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from fabricgen.analysis.limits import BOUNDS as ANALYZE_BOUNDS
from fabricgen.cli.common import (
    BUILD_DIR_ARG,
    NETWORK_OPTION,
    out,
    run_or_exit,
    write_report,
)
from fabricgen.cli.extras import require_extra
from fabricgen.errors import AnalysisError, Problem, raise_if


def _bounds(option: str) -> str:
    low, high = ANALYZE_BOUNDS[option]
    return f"{low:,} to {high:,}"


def analyze_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: str = NETWORK_OPTION,
    worst: int = typer.Option(10, "--worst", help=f"How many of the worst single failures to list ({_bounds('--worst')})."),
    report_file: Path | None = typer.Option(
        None, "--report", help="Write the findings as Markdown to this file, and the figures (PNG and SVG) beside it. Its directory must exist."
    ),
    pattern: str = typer.Option(
        "all-to-all",
        "--pattern",
        help="Traffic: all-to-all, ring (all-reduce), permutation (every GPU sends to one other, a seeded random cycle of nodes) or shift (node i to node i + n/2).",
    ),
    scope: str = typer.Option(
        "rail", "--scope", help="rail: each GPU talks to its own rail (rail-optimized collectives); cross-rail: every hop also changes rail."
    ),
    senders: str = typer.Option("all", "--senders", help="all, or leaf:NAME: only the GPUs on that leaf send."),
    jobs: int = typer.Option(1, "--jobs", help=f"Concurrent jobs sharing the cluster ({_bounds('--jobs')}, at most half the GPU nodes)."),
    placement: str = typer.Option("contiguous", "--placement", help="contiguous or scattered nodes per job."),
    message_bytes: int = typer.Option(
        1 << 20, "--message-bytes", help=f"Bytes per GPU pair (all-to-all, permutation, shift) or per GPU (ring) ({_bounds('--message-bytes')})."
    ),
    flows_per_pair: int = typer.Option(
        1, "--flows-per-pair", help=f"Flows (RoCE queue pairs, one UDP source port each) per GPU pair ({_bounds('--flows-per-pair')})."
    ),
    load: float = typer.Option(1.0, "--load", help="Offered load: the fraction of NIC line rate the GPUs send at (0 < load <= 1)."),
    stretch_threshold: float = typer.Option(1.5, "--stretch-threshold", help="Report the share of flows whose completion / ideal is above this (>= 1)."),
    modes: str = typer.Option("ecmp,flowlet,spray", "--modes", help="Load-balancing modes, comma-separated: ecmp, flowlet, spray."),
    hash_function: str = typer.Option("crc32", "--hash", help="Static ECMP's hash: crc32 (of the 5-tuple) or random (an ideal hash)."),
    flowlets: int = typer.Option(4, "--flowlets", help=f"Bursts per flow in flowlet mode ({_bounds('--flowlets')})."),
    flowlet_gap_us: float = typer.Option(
        500.0, "--flowlet-gap-us", help="Flowlet timeout (NX-OS flowlet-aging): a burst may move only after an idle gap longer than this."
    ),
    idle_gap_us: float = typer.Option(500.0, "--idle-gap-us", help="Mean idle gap between a flow's bursts (exponential)."),
    seeds: int = typer.Option(10, "--seeds", help=f"Random seeds per mode, confidence intervals over them ({_bounds('--seeds')})."),
    sweep: bool = typer.Option(True, "--sweep/--no-sweep", help="Also sweep JCT against 1, 2, 4 ... concurrent jobs."),
    fail: list[str] = typer.Option(
        [], "--fail", help="A device (leaf, spine, core) or a fabric cable id (cabling.csv) to fail; repeatable. The traffic runs again over what remains."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (shape: fabricgen/analysis/schema.py AnalysisOutput) instead of Markdown."),
    max_jct_stretch: str | None = typer.Option(
        None, "--max-jct-stretch", help="Exit 1 when the slowest job's JCT / ideal is above X: X for every mode, or ecmp=X,flowlet=Y."
    ),
    max_failure_cut: float | None = typer.Option(
        None,
        "--max-failure-cut",
        help="Exit 1 when the --fail scenario (or, without --fail, the worst single failure of a 2-tier fabric) cuts more than PERCENT of the capacity.",
    ),
    no_traffic: bool = typer.Option(False, "--no-traffic", help="Capacity and failures only."),
) -> None:
    """Will the fabric BUILD_DIR built deliver what the GPUs need? Capacity per tier, bisection,
    max-flow between rails and scalable units, oversubscription per leaf, every single failure's
    capacity and ECMP width left (the worst named), and load balancing (static ECMP, flowlet,
    per-packet spraying) under collective traffic over 2- and 3-tier fabrics, planes and rail-only
    designs: link loads, Jain's fairness, FCT stretch, JCT, with devices or links failed.

    Every option is checked before the build is read, and the simulation's memory and work are
    estimated from the fabric's size before it runs: what would not fit is refused (exit 2) with
    the option to lower and the value that fits. Exit 1 when a threshold (--max-jct-stretch,
    --max-failure-cut) is exceeded."""
    require_extra("analyze", "analyze")
    import json

    from fabricgen.analysis import schema
    from fabricgen.analysis.balancing import TrafficOptions, analyse, plan
    from fabricgen.analysis.capacity import capacity, single_failures
    from fabricgen.analysis.fabric import read_fabric
    from fabricgen.analysis.limits import (
        check_capacity_cost,
        option_problems,
        report_problems,
    )
    from fabricgen.analysis.report import balancing_markdown, markdown, paths_markdown

    options = TrafficOptions(
        pattern=pattern,
        scope=scope,
        jobs=jobs,
        placement=placement,
        message_bytes=message_bytes,
        flows_per_pair=flows_per_pair,
        modes=tuple(dict.fromkeys(m.strip() for m in modes.split(",") if m.strip())),
        hash=hash_function,
        flowlets=flowlets,
        seeds=seeds,
        senders=senders,
        load=load,
        stretch_threshold=stretch_threshold,
        flowlet_gap_us=flowlet_gap_us,
        idle_gap_us=idle_gap_us,
    )
    jct_limits, limit_problems = schema.parse_jct_limits(max_jct_stretch)
    problems = option_problems(network, worst, options) + (report_problems(report_file) if report_file is not None else []) + limit_problems
    if max_failure_cut is not None and not 0 <= max_failure_cut <= 100:
        problems.append(Problem(f"--max-failure-cut must be a percentage 0-100, not {max_failure_cut:g}", hint="e.g. --max-failure-cut 25"))
    if fail and no_traffic:
        problems.append(Problem("--fail simulates traffic, --no-traffic does not", hint="drop one of them"))
    run_or_exit(lambda: raise_if(problems, AnalysisError))

    def analyse_build():
        fabric = read_fabric(build_dir, network)
        unknown = [name for name in fail if name not in fabric.switches and name not in {key for key, *_ in fabric.cables}]
        raise_if(
            [
                Problem(
                    f"--fail {name!r} is neither a switch nor a fabric cable id of the {network} fabric",
                    hint="name a leaf, spine or core, or a cable_id of a switch-to-switch row of cabling.csv",
                )
                for name in unknown
            ],
            AnalysisError,
        )
        two_tier = bool(fabric.spines) and not fabric.cores
        if two_tier:
            check_capacity_cost(len(fabric.leaves), len(fabric.spines), network)
        simulated = not no_traffic and fabric.nic_leaf.size > 0
        # a CI threshold or a failure that nothing would measure is refused, never passed in silence
        if max_failure_cut is not None and not fail and not two_tier:
            raise AnalysisError(
                Problem(
                    f"--max-failure-cut without --fail reads the single-failure tables, which cover 2-tier leaf-spine fabrics; the {network} fabric has "
                    + (f"{len(fabric.cores)} cores" if fabric.cores else "no spines"),
                    hint="name the failure to measure: --fail DEVICE|CABLE",
                )
            )
        if fail and not simulated:
            raise AnalysisError(Problem(f"--fail simulates GPU traffic, and the {network} fabric has no GPU nodes", hint="analyse the backend fabric"))
        if simulated:
            plan(fabric, options, sweep)  # refuse what will not fit before the capacity analysis, not after
        found = capacity(fabric) if two_tier else None
        failures = single_failures(fabric) if two_tier else []
        text = markdown(fabric, found, failures, worst) if two_tier else paths_markdown(fabric)
        balancing = None
        if simulated:
            try:
                balancing = analyse(
                    fabric, options, sweep, devices=tuple(n for n in fail if n in fabric.switches), cables=tuple(n for n in fail if n not in fabric.switches)
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
            text += f"\n## Load balancing under collective traffic\n\nThe {network} fabric has no GPU nodes; collective traffic is analysed on the backend.\n"
        files = {}
        if balancing is not None:
            png = {}
            if report_file is not None and balancing.crosses_fabric:
                from fabricgen.analysis.plots import figures

                # figures beside the report, named after it: analysis.md -> analysis-link-load.png
                files = {f"{report_file.stem}-{name}": data for name, data in figures(balancing).items()}
                png = {
                    name: f"{report_file.stem}-{name}.png" for name in ("link-load", "fct-stretch", "jct-vs-jobs") if f"{report_file.stem}-{name}.png" in files
                }
            text += "\n" + balancing_markdown(balancing, png)
        if fail and balancing.failure is None:
            raise AnalysisError(
                Problem(
                    f"--fail: no flow of this traffic crosses from one leaf to another, so no failure of {', '.join(fail)} was simulated",
                    hint="use --scope cross-rail, or a fabric of several scalable units",
                )
            )
        cut = (
            balancing.failure.capacity_cut
            if balancing is not None and balancing.failure is not None
            else (1 - failures[0].capacity_left if failures and not fail else None)
        )
        broken = schema.violations(balancing.summaries if balancing is not None else {}, jct_limits, cut, max_failure_cut)
        document = _analysis_json(schema, fabric, found, failures, balancing, broken)
        return text, files, document, broken

    text, figure_files, document, broken = run_or_exit(analyse_build)
    if as_json:
        sys.stdout.write(json.dumps(document.model_dump(mode="json"), indent=1) + "\n")
    else:
        out.print(text, markup=False, highlight=False)
        for line in broken:
            out.print(f"threshold exceeded: {line}", markup=False)
    if report_file is not None:
        for name, data in figure_files.items():
            write_report(report_file.with_name(name), data)
        write_report(report_file, text.encode())
        if not as_json:
            out.print(f"report: {report_file}" + (f" and {len(figure_files)} figures beside it" if figure_files else ""), markup=False)
    raise typer.Exit(1 if broken else 0)


def _analysis_json(schema, fabric, found, failures, balancing, broken):
    """The analysis as the documented `schema.AnalysisOutput`."""
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
        capacity_found = schema.CapacityFindings(
            leaf_uplink_gbps=found.leaf_uplink_gbps,
            spine_gbps=found.spine_gbps,
            bisection_gbps=found.bisection_gbps,
            min_pair_gbps=found.min_pair_gbps,
            min_ecmp_width=found.min_ecmp_width,
            worst_single_failure=f"{failures[0].kind} {failures[0].name}" if failures else None,
            worst_single_failure_cut=1 - failures[0].capacity_left if failures else None,
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


DEVICES_OPTION = typer.Option(
    None, "--devices", help="Comma-separated switch names, patterns (be-su01-*), roles (leaf, spine) or networks (backend, oob). Default: every switch."
)
INVENTORY_OPTION = typer.Option(
    None,
    "--inventory",
    help="YAML with per-device host/driver/optional_args (and `defaults`), for builds without a management plan or to override it. Never credentials.",
)
CONNECT_TIMEOUT_OPTION = typer.Option(30, "--connect-timeout", help="Seconds to connect to a device.")
KNOWN_HOSTS_OPTION = typer.Option(
    None,
    "--known-hosts",
    help="OpenSSH known_hosts file the SONiC switches' host keys must be in (default: ~/.ssh/known_hosts). An unknown or changed key refuses the switch before the password is sent.",
)
TRUST_ON_FIRST_USE_OPTION = typer.Option(
    False,
    "--trust-on-first-use",
    help="Pin the host key of a SONiC switch not yet in --known-hosts FILE (which must be named; created if missing) and trust it; a key already there must still match.",
)
CA_BUNDLE_OPTION = typer.Option(
    None, "--ca-bundle", help="PEM file of the CAs that signed the NX-OS switches' NX-API certificates (default: the system's CAs)."
)
INSECURE_OPTION = typer.Option(False, "--insecure", help="Verify neither SSH host keys nor TLS certificates. Warns on every run.")
