"""The `fabricgen` command line."""

from __future__ import annotations

import sys
import tempfile
import time
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, TextColumn
from rich.table import Table

from fabricgen import __version__
from fabricgen.analysis.limits import BOUNDS as ANALYZE_BOUNDS
from fabricgen.catalog import load_catalog
from fabricgen.catalog.releases import support_table
from fabricgen.diff import diff_builds
from fabricgen.diff import render as diff_render
from fabricgen.errors import AnalysisError, FabricgenError, Problem, raise_if
from fabricgen.intent import load_intent
from fabricgen.output import write_file_atomic
from fabricgen.pipeline import Build, build, compile_intent
from fabricgen.reports.bom_compare import (
    bom_table,
    compare_bom,
    render_json,
    render_markdown,
)
from fabricgen.secrets_cli import app as secrets_app
from fabricgen.units import format_ratio
from fabricgen.verify.compare import STORM_FRAMES_PER_SECOND as STORM_DEFAULT

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Compile an AI-cluster intent (YAML) into switch configs, a cabling plan and a bill of materials.",
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)

EXIT_INPUT = 2
CATALOG_DIR_HELP = (
    "A directory the intent's catalog files may also come from (repeatable); by default they must lie in the intent's own directory."
)


def _version(value: bool) -> None:
    if value:
        out.print(f"fabricgen {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool | None = typer.Option(None, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """fabricgen: AI-cluster intent -> validated fabric -> NX-OS and SONiC configs, cabling plan, BOM."""


@app.command("build")
def build_command(
    intent: Path = typer.Argument(..., help="The intent YAML file, e.g. intents/cisco-256-gpu.yaml."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Build directory (default: output/<fabric name>). Replaced atomically; only an earlier build is ever replaced."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the destination."),
    jobs: int = typer.Option(
        1, "--jobs", "-j", min=0, help="Render the devices on this many processes (0: one per available CPU). The files are the same for any value."
    ),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """Compile INTENT and write every config and report, all or nothing.

    Writes configs/ (NX-OS <device>.cfg, SONiC <device>/config_db.json + frr.conf), hosts/ (per
    server: nic-qos.sh or nic-qos.txt, netplan.yaml), cabling.csv/.md, bom.csv/.md, ip-plan.csv,
    topology.json, summary.md and manifest.json.
    """
    started = time.perf_counter()
    result, destination = _run(lambda: build(intent, output, jobs, catalog_dirs))
    if quiet:
        out.print(str(destination))
        return
    _print_summary(result)
    total_bytes = sum(len(data) for data in result.files.values())
    out.print(
        f"wrote {len(result.files)} files ({total_bytes / 1e6:.1f} MB) to {destination} "
        f"in {time.perf_counter() - started:.2f} s"
    )


@app.command("validate")
def validate_command(
    intent: Path = typer.Argument(..., help="The intent YAML file."),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """Run every check on INTENT (schema, catalog, design, addressing, fabric invariants); write nothing."""
    result = _run(lambda: compile_intent(intent, render=False, catalog_dirs=catalog_dirs))
    _print_summary(result)
    out.print(f"{intent}: valid")


def _run(action):
    try:
        return action()
    except FabricgenError as exc:
        # plain text, never wrapped: one problem per line stays greppable as file:line: field
        sys.stderr.write(exc.report() + "\n")
        raise typer.Exit(EXIT_INPUT) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; nothing was written\n")
        raise typer.Exit(130) from None


def _print_summary(result: Build) -> None:
    s = result.sizing
    table = Table(title=f"{result.loaded.intent.name}", show_header=True, header_style="bold")
    for column in ("network", "role", "model", "NOS", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for (network, role, model, nos), count in result.fabric.inventory():
        table.add_row(network, role, model, nos, f"{count:,}")
    out.print(table)
    out.print(
        f"{s.gpus:,} GPUs, {s.su_count} scalable unit(s) of {s.su_nodes} nodes, {len(result.fabric.links):,} links; "
        + (f"leaf {s.leaf_downlinks} down, no uplinks (rail-only: no spine tier)" if s.spineless else
        f"leaf {s.leaf_downlinks} down / {s.leaf_uplinks} up ({format_ratio(s.built_ratio)}), "
        + (
            f"{s.links_per_spine} link(s) to each of {s.pod_spines} spines of its pod; {s.pods} pods, {s.spines:,} spines, "
            f"{s.cores:,} cores; spine {s.spine_downlinks} down / {s.spine_uplinks} up ({format_ratio(s.spine_built_ratio)})"
            if s.tiers == 3
            else f"{s.links_per_spine} link(s) to each of {s.spines} spines"
        ))
        + (f"; {s.planes} planes" if s.planes > 1 else "")
    )
    for network, plan in result.compiled.plans.items():
        if network.value != "backend":
            out.print(
                f"{network.value}: {plan.leaves} leaves, {plan.spines} spines; leaf {plan.leaf_downlinks} server ports / "
                f"{plan.leaf_uplinks} up ({format_ratio(plan.built_ratio)})"
            )
    if result.compiled.oob is not None:
        o = result.compiled.oob
        out.print(f"oob: {o.switches} OOB switches for {o.management_ports} management ports; {o.console_servers} console servers for {o.console_ports} consoles")
    for note in result.compiled.notes:
        out.print(f"note: {note}")


@app.command("releases")
def releases_command(
    intent: Path | None = typer.Argument(None, help="An intent: its own catalog files are added (vendor SONiC flavours, models)."),
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """The NOS releases fabricgen writes configs for, and from which release each feature it renders
    exists (the catalog's feature matrix), as Markdown tables with their sources."""
    catalog = _run(lambda: load_intent(intent, catalog_dirs).catalog if intent else load_catalog())
    sys.stdout.write(support_table(catalog))


bom_app = typer.Typer(no_args_is_help=True, help="Work with a build's bill of materials.", rich_markup_mode=None)
app.add_typer(bom_app, name="bom")
app.add_typer(secrets_app, name="secrets")


class BomFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


@bom_app.command("compare")
def bom_compare_command(
    build_dir: Path = typer.Argument(..., help="A build directory holding bom.csv, e.g. output/cisco-256-gpu."),
    reference: Path = typer.Argument(..., help="The reference CSV: a header row with pid and quantity, optionally section."),
    output_format: BomFormat = typer.Option(BomFormat.text, "--format", help="text (a table), markdown (for a PR comment) or json."),
) -> None:
    """Compare BUILD_DIR/bom.csv with REFERENCE (a vendor quote, a published design), part by part.

    Prints each part's delta (build - reference) and its cause. Exit 0 when equal, 1 when they differ,
    2 on bad input.
    """
    result = _run(lambda: compare_bom(build_dir, reference))
    if output_format is BomFormat.markdown:
        sys.stdout.write(render_markdown(result))
    elif output_format is BomFormat.json:
        sys.stdout.write(render_json(result))
    else:
        # off a terminal, let the table take its natural width: wrapped cells would break grep
        wide = out if out.is_terminal else Console(highlight=False, width=10_000)
        wide.print(bom_table(result))
        for note in result.notes():
            out.print(f"note: {note}", markup=False)
        out.print(result.summary())
    raise typer.Exit(0 if result.equal else 1)


DIFF_OLD_ARG = typer.Argument(..., help="The old side: a build directory, an intent YAML file, or intent.yaml@REV (a git revision, e.g. @HEAD~1, @origin/main).")
DIFF_NEW_ARG = typer.Argument(..., help="The new side, the same kinds as OLD.")
DIFF_FORMAT_OPTION = typer.Option(BomFormat.text, "--format", help="text (a terminal), markdown (a PR comment) or json.")
DIFF_MAX_BYTES_OPTION = typer.Option(
    diff_render.DEFAULT_MAX_BYTES, "--max-bytes", min=4_000, help="markdown: cap the comment at this many bytes (GitHub allows 65,536 characters)."
)


@app.command("diff")
def diff_command(
    old: str = DIFF_OLD_ARG,
    new: str = DIFF_NEW_ARG,
    output_format: BomFormat = DIFF_FORMAT_OPTION,
    max_bytes: int = DIFF_MAX_BYTES_OPTION,
    catalog_dirs: list[Path] = typer.Option([], "--catalog-dir", metavar="DIR", help=CATALOG_DIR_HELP),
) -> None:
    """What changes between OLD and NEW: devices, cables, BGP neighbors, addresses, QoS values and
    BOM by PID, then a unified diff of every rendered file per device.

    An intent side is built into a temporary directory; intent.yaml@REV builds the repository
    tree at REV (an intent that does not exist there is an empty side). Exit 0 when both render
    identical files, 1 when something changed, 2 on error.
    """
    result = _run(lambda: diff_builds(old, new, catalog_dirs))
    if output_format is BomFormat.markdown:
        sys.stdout.write(diff_render.render_markdown(result, max_bytes))
    elif output_format is BomFormat.json:
        sys.stdout.write(diff_render.render_json(result))
    elif out.is_terminal:
        for line, style in diff_render.render_text(result):
            out.print(line, style=style, markup=False)
    else:
        sys.stdout.write("".join(line + "\n" for line, _ in diff_render.render_text(result)))
    raise typer.Exit(1 if result.changed else 0)


lab_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Boot a build's fabric with real FRR in Linux network namespaces and check it converges, forwards and survives failures (Linux, root).",
)
app.add_typer(lab_app, name="lab")

BUILD_DIR_ARG = typer.Argument(..., help="A build directory written by `fabricgen build`.")
TIMEOUT_OPTION = typer.Option(120.0, "--timeout", help="Seconds to wait for the control plane to converge.")
NETWORK_OPTION = typer.Option("backend", "--network", help="Which routed fabric of the build: backend, frontend or storage.")
LAB_SECRETS_OPTION = typer.Option(
    None,
    "--secrets",
    help="A YAML file (mode 0600) of secret values by name for the BGP keys; $FABRICGEN_SECRETS_FILE and FABRICGEN_SECRET_<NAME> work too. "
    "A key with no value gets a random one for this lab.",
)


@lab_app.command("up")
def lab_up_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: str = NETWORK_OPTION,
    timeout: float = TIMEOUT_OPTION,
    secrets_file: Path | None = LAB_SECRETS_OPTION,
) -> None:
    """One namespace per switch and GPU node, one veth pair per cable of the cabling plan, FRR per switch with its BGP keys; waits for convergence."""
    from fabricgen.lab import report, session

    result = _run(lambda: session.up(build_dir, network, timeout, secrets_file))
    for line in report.up_lines(result):
        out.print(line, markup=False)
    out.print(f"next: fabricgen lab verify {build_dir}", markup=False)


@lab_app.command("verify")
def lab_verify_command(build_dir: Path = BUILD_DIR_ARG, timeout: float = TIMEOUT_OPTION) -> None:
    """BGP and BFD sessions against the build's list, ECMP width per leaf, traffic between rails and units (exit 1 on a failed check)."""
    from fabricgen.lab import report, session

    result = _run(lambda: session.check(build_dir, timeout))
    report.print_verification(out, result)
    raise typer.Exit(0 if result.passed else 1)


@lab_app.command("fail")
def lab_fail_command(
    build_dir: Path = BUILD_DIR_ARG,
    link: str | None = typer.Option(None, "--link", help="DEV:PORT of a cable to cut, e.g. be-su01-leaf1:Ethernet1/33."),
    device: str | None = typer.Option(None, "--device", help="A switch (or node) to power off."),
    silent: bool = typer.Option(False, "--silent", help="With --link: drop every frame but keep carrier up, so only BFD can notice."),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Fail a link or a device, and measure how long the fabric takes to converge around it."""
    from fabricgen.lab import report, session

    result = _run(lambda: session.fail(build_dir, link, device, silent, timeout))
    out.print(report.failure_line(result), markup=False)
    out.print(f"next: fabricgen lab verify {build_dir}; fabricgen lab restore {build_dir}", markup=False)
    raise typer.Exit(0 if result.converged else 1)


@lab_app.command("restore")
def lab_restore_command(
    build_dir: Path = BUILD_DIR_ARG,
    link: str | None = typer.Option(None, "--link", help="Restore only this failed link (DEV:PORT)."),
    device: str | None = typer.Option(None, "--device", help="Restore only this failed device."),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Undo failures (all of them unless one is named) and measure reconvergence."""
    from fabricgen.lab import report, session

    results = _run(lambda: session.restore(build_dir, link, device, timeout))
    if not results:
        out.print("nothing is failed")
    for result in results:
        out.print(report.failure_line(result), markup=False)
    raise typer.Exit(0 if all(r.converged for r in results) else 1)


@lab_app.command("down")
def lab_down_command(build_dir: Path = BUILD_DIR_ARG) -> None:
    """Remove every namespace, process and file the lab of BUILD_DIR created."""
    from fabricgen.lab import session

    removed = _run(lambda: session.down(build_dir))
    out.print(f"lab of {build_dir} removed" if removed else f"no lab was up for {build_dir}; nothing to remove", markup=False)


@lab_app.command("run")
def lab_run_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: str = NETWORK_OPTION,
    report_file: Path | None = typer.Option(None, "--report", help="Also write the whole report as Markdown to this file."),
    timeout: float = TIMEOUT_OPTION,
    secrets_file: Path | None = LAB_SECRETS_OPTION,
) -> None:
    """up, verify, a failure round (a silent uplink failure, a spine down, each restored), down: one report (exit 1 on a failed check)."""
    from fabricgen.lab import report, session

    result = _run(lambda: session.run(build_dir, network, timeout, secrets_file))
    for line in report.up_lines(result.up):
        out.print(line, markup=False)
    for name, verification, failure in result.rounds:
        out.rule(name)
        if failure is not None:
            out.print(report.failure_line(failure), markup=False)
        report.print_verification(out, verification)
    if report_file is not None:
        _run(lambda: write_file_atomic(report_file, report.markdown(result).encode()))
        out.print(f"report: {report_file}", markup=False)
    out.print(f"lab run: {'PASS' if result.passed else 'FAIL'}; lab removed")
    raise typer.Exit(0 if result.passed else 1)


def _bounds(option: str) -> str:
    low, high = ANALYZE_BOUNDS[option]
    return f"{low:,} to {high:,}"


@app.command("analyze")
def analyze_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: str = NETWORK_OPTION,
    worst: int = typer.Option(10, "--worst", help=f"How many of the worst single failures to list ({_bounds('--worst')})."),
    report_file: Path | None = typer.Option(None, "--report", help="Write the findings as Markdown to this file, and the figures (PNG and SVG) beside it. Its directory must exist."),
    pattern: str = typer.Option("all-to-all", "--pattern", help="Traffic: all-to-all, ring (all-reduce), permutation (every GPU sends to one other, a seeded random cycle of nodes) or shift (node i to node i + n/2)."),
    scope: str = typer.Option("rail", "--scope", help="rail: each GPU talks to its own rail (rail-optimized collectives); cross-rail: every hop also changes rail."),
    senders: str = typer.Option("all", "--senders", help="all, or leaf:NAME: only the GPUs on that leaf send."),
    jobs: int = typer.Option(1, "--jobs", help=f"Concurrent jobs sharing the cluster ({_bounds('--jobs')}, at most half the GPU nodes)."),
    placement: str = typer.Option("contiguous", "--placement", help="contiguous or scattered nodes per job."),
    message_bytes: int = typer.Option(1 << 20, "--message-bytes", help=f"Bytes per GPU pair (all-to-all, permutation, shift) or per GPU (ring) ({_bounds('--message-bytes')})."),
    flows_per_pair: int = typer.Option(1, "--flows-per-pair", help=f"Flows (RoCE queue pairs, one UDP source port each) per GPU pair ({_bounds('--flows-per-pair')})."),
    load: float = typer.Option(1.0, "--load", help="Offered load: the fraction of NIC line rate the GPUs send at (0 < load <= 1)."),
    stretch_threshold: float = typer.Option(1.5, "--stretch-threshold", help="Report the share of flows whose completion / ideal is above this (>= 1)."),
    modes: str = typer.Option("ecmp,flowlet,spray", "--modes", help="Load-balancing modes, comma-separated: ecmp, flowlet, spray."),
    hash_function: str = typer.Option("crc32", "--hash", help="Static ECMP's hash: crc32 (of the 5-tuple) or random (an ideal hash)."),
    flowlets: int = typer.Option(4, "--flowlets", help=f"Bursts per flow in flowlet mode ({_bounds('--flowlets')})."),
    flowlet_gap_us: float = typer.Option(500.0, "--flowlet-gap-us", help="Flowlet timeout (NX-OS flowlet-aging): a burst may move only after an idle gap longer than this."),
    idle_gap_us: float = typer.Option(500.0, "--idle-gap-us", help="Mean idle gap between a flow's bursts (exponential)."),
    seeds: int = typer.Option(10, "--seeds", help=f"Random seeds per mode, confidence intervals over them ({_bounds('--seeds')})."),
    sweep: bool = typer.Option(True, "--sweep/--no-sweep", help="Also sweep JCT against 1, 2, 4 ... concurrent jobs."),
    fail: list[str] = typer.Option([], "--fail", help="A device (leaf, spine, core) or a fabric cable id (cabling.csv) to fail; repeatable. The traffic runs again over what remains."),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON (shape: fabricgen/analysis/schema.py AnalysisOutput) instead of Markdown."),
    max_jct_stretch: str | None = typer.Option(None, "--max-jct-stretch", help="Exit 1 when the slowest job's JCT / ideal is above X: X for every mode, or ecmp=X,flowlet=Y."),
    max_failure_cut: float | None = typer.Option(None, "--max-failure-cut", help="Exit 1 when the --fail scenario (or, without --fail, the worst single failure of a 2-tier fabric) cuts more than PERCENT of the capacity."),
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
        pattern=pattern, scope=scope, jobs=jobs, placement=placement, message_bytes=message_bytes,
        flows_per_pair=flows_per_pair, modes=tuple(dict.fromkeys(m.strip() for m in modes.split(",") if m.strip())),
        hash=hash_function, flowlets=flowlets, seeds=seeds, senders=senders, load=load,
        stretch_threshold=stretch_threshold, flowlet_gap_us=flowlet_gap_us, idle_gap_us=idle_gap_us,
    )
    jct_limits, limit_problems = schema.parse_jct_limits(max_jct_stretch)
    problems = option_problems(network, worst, options) + (report_problems(report_file) if report_file is not None else []) + limit_problems
    if max_failure_cut is not None and not 0 <= max_failure_cut <= 100:
        problems.append(Problem(f"--max-failure-cut must be a percentage 0-100, not {max_failure_cut:g}", hint="e.g. --max-failure-cut 25"))
    if fail and no_traffic:
        problems.append(Problem("--fail simulates traffic, --no-traffic does not", hint="drop one of them"))
    _run(lambda: raise_if(problems, AnalysisError))

    def analyse_build():
        fabric = read_fabric(build_dir, network)
        unknown = [name for name in fail if name not in fabric.switches and name not in {key for key, *_ in fabric.cables}]
        raise_if([Problem(f"--fail {name!r} is neither a switch nor a fabric cable id of the {network} fabric",
                          hint="name a leaf, spine or core, or a cable_id of a switch-to-switch row of cabling.csv") for name in unknown], AnalysisError)
        two_tier = bool(fabric.spines) and not fabric.cores
        if two_tier:
            check_capacity_cost(len(fabric.leaves), len(fabric.spines), network)
        simulated = not no_traffic and fabric.nic_leaf.size > 0
        # a CI threshold or a failure that nothing would measure is refused, never passed in silence
        if max_failure_cut is not None and not fail and not two_tier:
            raise AnalysisError(Problem(
                f"--max-failure-cut without --fail reads the single-failure tables, which cover 2-tier leaf-spine fabrics; the {network} fabric has "
                + (f"{len(fabric.cores)} cores" if fabric.cores else "no spines"), hint="name the failure to measure: --fail DEVICE|CABLE"))
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
                balancing = analyse(fabric, options, sweep, devices=tuple(n for n in fail if n in fabric.switches),
                                    cables=tuple(n for n in fail if n not in fabric.switches))
            except MemoryError:
                # the estimate is measured, not a guarantee: other programs may have taken the memory meanwhile
                raise AnalysisError(Problem(
                    "the load-balancing simulation ran out of memory", hint="lower --flows-per-pair or --flowlets, or use --no-traffic",
                )) from None
        elif not no_traffic:
            text += f"\n## Load balancing under collective traffic\n\nThe {network} fabric has no GPU nodes; collective traffic is analysed on the backend.\n"
        files = {}
        if balancing is not None:
            png = {}
            if report_file is not None and balancing.crosses_fabric:
                from fabricgen.analysis.plots import figures

                # figures beside the report, named after it: analysis.md -> analysis-link-load.png
                files = {f"{report_file.stem}-{name}": data for name, data in figures(balancing).items()}
                png = {name: f"{report_file.stem}-{name}.png" for name in ("link-load", "fct-stretch", "jct-vs-jobs") if f"{report_file.stem}-{name}.png" in files}
            text += "\n" + balancing_markdown(balancing, png)
        if fail and balancing.failure is None:
            raise AnalysisError(Problem(f"--fail: no flow of this traffic crosses from one leaf to another, so no failure of {', '.join(fail)} was simulated",
                                        hint="use --scope cross-rail, or a fabric of several scalable units"))
        cut = balancing.failure.capacity_cut if balancing is not None and balancing.failure is not None else (
            1 - failures[0].capacity_left if failures and not fail else None)
        broken = schema.violations(balancing.summaries if balancing is not None else {}, jct_limits, cut, max_failure_cut)
        document = _analysis_json(schema, fabric, found, failures, balancing, broken)
        return text, files, document, broken

    text, figure_files, document, broken = _run(analyse_build)
    if as_json:
        sys.stdout.write(json.dumps(document.model_dump(mode="json"), indent=1) + "\n")
    else:
        out.print(text, markup=False, highlight=False)
        for line in broken:
            out.print(f"threshold exceeded: {line}", markup=False)
    if report_file is not None:
        for name, data in figure_files.items():
            _run(lambda name=name, data=data: write_file_atomic(report_file.with_name(name), data))
        _run(lambda: write_file_atomic(report_file, text.encode()))
        if not as_json:
            out.print(f"report: {report_file}" + (f" and {len(figure_files)} figures beside it" if figure_files else ""), markup=False)
    raise typer.Exit(1 if broken else 0)


def _analysis_json(schema, fabric, found, failures, balancing, broken):
    """The analysis as the documented `schema.AnalysisOutput`."""
    shape = schema.FabricShape(
        network=fabric.network, leaves=len(fabric.leaves), spines=len(fabric.spines), cores=len(fabric.cores),
        gpu_nics=int(fabric.nic_leaf.size), gpus=int(fabric.nic_leaf.size // fabric.nic_leaf.shape[2]),
        rails=int(fabric.nic_leaf.shape[1]) if fabric.nic_leaf.size else 0, planes=int(fabric.nic_leaf.shape[2]), fabric_links=len(fabric.cables),
    )
    capacity_found = None
    if found is not None:
        capacity_found = schema.CapacityFindings(
            leaf_uplink_gbps=found.leaf_uplink_gbps, spine_gbps=found.spine_gbps, bisection_gbps=found.bisection_gbps,
            min_pair_gbps=found.min_pair_gbps, min_ecmp_width=found.min_ecmp_width,
            worst_single_failure=f"{failures[0].kind} {failures[0].name}" if failures else None,
            worst_single_failure_cut=1 - failures[0].capacity_left if failures else None,
        )
    document = schema.AnalysisOutput(fabric=shape, capacity=capacity_found, verdict=schema.Verdict(passed=not broken, violations=broken))
    if balancing is None:
        return document
    o = balancing.options
    document.traffic = {"pattern": o.pattern, "scope": o.scope, "senders": o.senders, "jobs": o.jobs, "placement": o.placement,
                        "message_bytes": o.message_bytes, "flows_per_pair": o.flows_per_pair, "load": o.load, "hash": o.hash,
                        "flowlets": o.flowlets, "flowlet_gap_us": o.flowlet_gap_us, "idle_gap_us": o.idle_gap_us,
                        "stretch_threshold": o.stretch_threshold, "seeds": o.seeds}
    document.crosses_fabric = balancing.crosses_fabric
    document.modes = schema.modes(balancing.summaries)
    document.sweep = {str(j): {m: schema.estimate(s.metrics["jct_ratio_worst"]) for m, s in per.items()} for j, per in balancing.sweep.items()}
    if balancing.failure is not None:
        f = balancing.failure
        document.failure = schema.FailureFindings(down=list(f.down), capacity_cut=f.capacity_cut, flows_lost=f.flows_lost,
                                                  jct_change=f.jct_change, modes=schema.modes(f.summaries))
    return document


DEVICES_OPTION = typer.Option(None, "--devices", help="Comma-separated switch names, patterns (be-su01-*), roles (leaf, spine) or networks (backend, oob). Default: every switch.")
INVENTORY_OPTION = typer.Option(None, "--inventory", help="YAML with per-device host/driver/optional_args (and `defaults`), for builds without a management plan or to override it. Never credentials.")
CONNECT_TIMEOUT_OPTION = typer.Option(30, "--connect-timeout", help="Seconds to connect to a device.")
KNOWN_HOSTS_OPTION = typer.Option(None, "--known-hosts", help="OpenSSH known_hosts file the SONiC switches' host keys must be in (default: ~/.ssh/known_hosts). An unknown or changed key refuses the switch before the password is sent.")
TRUST_ON_FIRST_USE_OPTION = typer.Option(False, "--trust-on-first-use", help="Pin the host key of a SONiC switch not yet in --known-hosts FILE (which must be named; created if missing) and trust it; a key already there must still match.")
CA_BUNDLE_OPTION = typer.Option(None, "--ca-bundle", help="PEM file of the CAs that signed the NX-OS switches' NX-API certificates (default: the system's CAs).")
INSECURE_OPTION = typer.Option(False, "--insecure", help="Verify neither SSH host keys nor TLS certificates. Warns on every run.")


@app.command("push")
def push_command(
    build_dir: Path = BUILD_DIR_ARG,
    devices: str | None = DEVICES_OPTION,
    inventory: Path | None = INVENTORY_OPTION,
    commit: bool = typer.Option(False, "--commit", help="Apply: preflight every device, then a canary, then batches; verify BGP and a new management session after each commit, roll back and stop on failure. Replaces the whole config, so an incomplete one (no management VRF/address, login, SSH or boot image) is refused."),
    merge: bool = typer.Option(False, "--merge", help="Load the build as a merge candidate instead of a replace: adds and changes lines, removes NOTHING the build lacks. NX-OS only (no commit-confirm there)."),
    confirm_timeout: int | None = typer.Option(None, "--confirm-timeout", min=5, max=3600, help="Seconds after a commit before the device restores its previous config by itself unless fabricgen confirmed it (default: verify timeout + 2 x connect timeout + 60; NX-OS takes 30-3600)."),
    secrets_file: Path | None = typer.Option(None, "--secrets", help="YAML file (mode 0600) of secret values by name; FABRICGEN_SECRET_<NAME> in the environment wins. Values are filled in memory only."),
    batch: int = typer.Option(5, "--batch", min=1, help="Devices per batch after the canary."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="At most this many devices in flight at once."),
    canary: str | None = typer.Option(None, "--canary", help="The device to commit first (default: the first leaf whose config changes; a named device that needs no change is skipped), or `none` to go straight to batches."),
    verify_timeout: float = typer.Option(120.0, "--verify-timeout", help="Seconds for a committed device's BGP neighbors to be Established."),
    connect_timeout: int = CONNECT_TIMEOUT_OPTION,
    diffs: bool = typer.Option(True, "--diffs/--no-diffs", help="Print each device's config diff."),
    known_hosts: Path | None = KNOWN_HOSTS_OPTION,
    trust_on_first_use: bool = TRUST_ON_FIRST_USE_OPTION,
    ca_bundle: Path | None = CA_BUNDLE_OPTION,
    insecure: bool = INSECURE_OPTION,
) -> None:
    """Push BUILD_DIR's configs to the switches with NAPALM (a dry run unless --commit).

    Addresses come from the build's management plan or --inventory; credentials from
    FABRICGEN_USERNAME / FABRICGEN_PASSWORD or a prompt, and are never written anywhere; secrets
    the configs name (`<<secret:NAME>>`) from FABRICGEN_SECRET_<NAME> or --secrets FILE, filled
    in memory, masked in everything printed. Each commit reverts by itself unless confirmed after
    verification (commit-confirm). NX-OS goes
    through NAPALM's nxos (NX-API) driver, its TLS certificate verified; SONiC through fabricgen's
    sonic driver (SSH), its host key verified against known_hosts. Exit 0 when every device
    succeeded, 1 when any failed (a host key refused included), was rolled back or not reached, 2 on
    bad input (nothing contacted).
    """
    from fabricgen.push import report
    from fabricgen.push.candidate import check_complete, read_secrets
    from fabricgen.push.credentials import read_credentials
    from fabricgen.push.inventory import read_targets
    from fabricgen.push.rollout import RolloutOptions, push
    from fabricgen.push.security import DeviceVerification

    # the drivers read the verified copies in a private directory, never the build directory again
    with tempfile.TemporaryDirectory(prefix="fabricgen-push-") as staging:
        targets = _run(lambda: read_targets(build_dir, devices, inventory, staging=Path(staging)))
        verification = DeviceVerification(known_hosts, trust_on_first_use, ca_bundle, insecure)
        _run(lambda: verification.check(targets))
        if commit and not merge:
            _run(lambda: check_complete(targets))  # before credentials or secrets are even asked for
        secrets = _run(lambda: read_secrets(targets, secrets_file))
        if warning := verification.warning(targets):
            sys.stderr.write(warning + "\n")
        credentials = _run(read_credentials)
        options = RolloutOptions(
            commit=commit, batch=batch, concurrency=concurrency, canary=canary,
            connect_timeout=connect_timeout, verify_timeout=verify_timeout, verification=verification,
            merge=merge, confirm_timeout=confirm_timeout,
        )
        with _push_progress(len(targets)) as progress:
            rollout = _run(lambda: push(targets, credentials, options, on_result=progress, secrets=secrets))
    if diffs:
        report.print_diffs(out, rollout)
    wide = out if out.is_terminal else Console(highlight=False, width=10_000)
    wide.print(report.result_table(rollout))
    out.print(report.summary(rollout), markup=False)
    raise typer.Exit(0 if rollout.ok else 1)


@contextmanager
def _push_progress(devices: int):
    """A live bar on a terminal; one line per finished device otherwise (CI logs)."""
    if out.is_terminal:
        with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[last]}"), console=out, transient=True) as bar:
            tasks: dict[str, int] = {}

            def advance(result) -> None:
                if result.stage not in tasks:
                    total = devices if result.stage == "preflight" else None
                    tasks[result.stage] = bar.add_task(result.stage, total=total, last="")
                bar.update(tasks[result.stage], advance=1, last=f"{result.target.name}: {result.outcome.value}")

            yield advance
        return
    finished = 0

    def line(result) -> None:
        nonlocal finished
        finished += 1
        out.print(f"[{finished}] {result.stage}: {result.target.name} {result.outcome.value} ({result.seconds:.1f} s)", markup=False)

    yield line


@app.command("verify")
def verify_command(
    build_dir: Path = BUILD_DIR_ARG,
    devices: str | None = DEVICES_OPTION,
    inventory: Path | None = INVENTORY_OPTION,
    interval: float = typer.Option(10.0, "--interval", min=0.0, help="Seconds between the two counter samples (errors, discards, PFC pauses, ECN marks)."),
    jobs: int = typer.Option(8, "--jobs", min=1, help="At most this many devices read at once."),
    storm_threshold: float = typer.Option(STORM_DEFAULT, "--storm-threshold", min=1.0, help="PFC pause frames per second on one port and priority that count as a storm."),
    report_file: Path | None = typer.Option(None, "--report", help="Also write the findings as Markdown to FILE."),
    json_file: str | None = typer.Option(None, "--json", help="Also write the findings (and each device's full config diff) as JSON to FILE, or `-` for stdout (then nothing else is printed there)."),
    secrets_file: Path | None = typer.Option(None, "--secrets", help="YAML file (mode 0600) of secret values by name: used only to mask them in the running configs."),
    connect_timeout: int = CONNECT_TIMEOUT_OPTION,
    known_hosts: Path | None = KNOWN_HOSTS_OPTION,
    trust_on_first_use: bool = TRUST_ON_FIRST_USE_OPTION,
    ca_bundle: Path | None = CA_BUNDLE_OPTION,
    insecure: bool = INSECURE_OPTION,
) -> None:
    """Check the live fabric against BUILD_DIR, read-only: cabling (LLDP), ports, BGP and ECMP,
    lossless QoS counters and config drift.

    Devices, addresses, drivers, credentials and host-key / TLS checks as `fabricgen push`; only
    getters are called. Exit 0 when no error is found, 1 with errors (an unreachable device
    included), 2 on bad input (nothing contacted).
    """
    from fabricgen.push.credentials import read_credentials
    from fabricgen.push.inventory import read_targets
    from fabricgen.push.rollout import DeviceSession, RolloutOptions, resolve_drivers
    from fabricgen.push.security import DeviceVerification
    from fabricgen.verify import report, verify_fabric
    from fabricgen.verify.collect import Access
    from fabricgen.verify.compare import Thresholds

    verification = DeviceVerification(known_hosts, trust_on_first_use, ca_bundle, insecure)
    targets = _run(lambda: read_targets(build_dir, devices, inventory))
    _run(lambda: verification.check(targets))
    if warning := verification.warning(targets):
        sys.stderr.write(warning + "\n")
    drivers = _run(lambda: resolve_drivers(targets))
    credentials = _run(read_credentials)
    options = RolloutOptions(connect_timeout=connect_timeout, verification=verification)

    def connect(secrets) -> Access:
        session = DeviceSession(drivers, credentials, secrets, options)
        return Access(session.device, session.clean)

    screen = Console(stderr=True, highlight=False) if json_file == "-" else out
    with report.progress(screen, len(targets)) as done:
        result = _run(lambda: verify_fabric(build_dir, targets, connect, interval=interval, jobs=jobs, secrets_file=secrets_file,
                                            thresholds=Thresholds(storm_threshold), on_done=done))
    if report_file is not None:
        _run(lambda: write_file_atomic(report_file, report.render_markdown(result).encode()))
    if json_file == "-":
        sys.stdout.write(report.render_json(result))
    else:
        if json_file:
            _run(lambda: write_file_atomic(Path(json_file), report.render_json(result).encode()))
        if out.is_terminal:
            out.print(report.table(result))
        else:
            sys.stdout.write("".join(line + "\n" for line in report.plain_lines(result)))
    screen.print(report.summary(result), markup=False)
    raise typer.Exit(0 if result.ok else 1)


class _PlanByDefault(typer.core.TyperGroup):
    """`fabricgen testplan BUILD_DIR` plans; `fabricgen testplan check ...` checks."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["plan", *args]
        return super().parse_args(ctx, args)


testplan_app = typer.Typer(cls=_PlanByDefault, no_args_is_help=True, rich_markup_mode=None,
                           help="`fabricgen testplan BUILD_DIR [-o PLAN_DIR] [--efficiency X]` writes a GPU-side acceptance plan (perftest pairs, NCCL/RCCL runs); `fabricgen testplan check PLAN_DIR RESULTS...` checks its results.")
app.add_typer(testplan_app, name="testplan")


@testplan_app.command("plan", hidden=True)
def testplan_command(
    build_dir: Path = BUILD_DIR_ARG,
    output: Path | None = typer.Option(None, "--output", "-o", help="The plan directory (default: BUILD_DIR-testplan). Replaced as a whole."),
    efficiency: float = typer.Option(0.9, "--efficiency", min=0.01, max=1.0, help="Share of line rate a perftest pair and an all-reduce must reach."),
    alltoall_efficiency: float = typer.Option(0.7, "--alltoall-efficiency", min=0.01, max=1.0, help="Share of the all-to-all bound it must reach (ECMP hashes its flows unevenly)."),
) -> None:
    """Write an acceptance plan for BUILD_DIR: perftest pairs crossing every backend fabric link,
    NCCL/RCCL runs per scalable unit and for the cluster, a script per node, testplan.md and
    testplan.json. Exit 2 on a bad build (nothing written)."""
    from fabricgen.testplan import write_plan

    destination = output or build_dir.with_name(build_dir.resolve().name + "-testplan")
    plan = _run(lambda: write_plan(build_dir, destination, efficiency, alltoall_efficiency))
    rounds = max((p.round for p in plan.pairs), default=0)
    out.print(f"{destination}: {len(plan.pairs):,} perftest pair{'s' * (len(plan.pairs) != 1)} in {rounds:,} round{'s' * (rounds != 1)}, {len(plan.runs):,} collective runs", markup=False)


@testplan_app.command("check")
def testplan_check_command(
    plan_dir: Path = typer.Argument(..., help="A plan directory written by `fabricgen testplan`."),
    results: list[Path] = typer.Argument(..., help="perftest and nccl-tests/rccl-tests output files (results/<id>.txt)."),
    json_file: Path | None = typer.Option(None, "--json", help="Also write the findings as JSON to this file."),
    report_file: Path | None = typer.Option(None, "--report", help="Also write the findings as Markdown to this file."),
) -> None:
    """Compare results with the plan; name every short pair (nodes, NICs, rails, cables, the
    fabric links short pairs share) and run (peak and average bus bandwidth as printed). Exit 0
    all met, 1 below a threshold, 2 on bad input."""
    from fabricgen.testplan.check import as_json, as_markdown, check_results

    result = _run(lambda: check_results(plan_dir, results))
    text = as_markdown(result)
    out.print(text, markup=False, highlight=False)
    if json_file is not None:
        _run(lambda: write_file_atomic(json_file, as_json(result).encode()))
    if report_file is not None:
        _run(lambda: write_file_atomic(report_file, text.encode()))
    raise typer.Exit(0 if result.passed else 1)


def main() -> None:
    app(prog_name="fabricgen")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
