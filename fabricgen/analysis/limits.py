"""What `fabricgen analyze` may be asked, checked before any work: the traffic options
(`TrafficOptions`), every option's choices and bounds, the report's path, and the memory and work
the load-balancing simulation will take.

The simulation is vectorised: every flow of a seed is a row of a dozen numpy arrays at once, so
its memory grows with the number of flows (GPU pairs x --flows-per-pair; a GPU on a multi-plane NIC
sends one flow per plane) and its run time with that number, the hops of a path and, in flowlet mode,
--flowlets, over every seed, mode and sweep point. `simulation_cost` predicts both from the fabric's
size and the options, with a model measured on this code (peak allocation and CPU time per NIC-port
flow on 63 K to 2 M flows, 2 and 3 tiers, rounded up); `check_cost` refuses what exceeds the memory
the machine has free or the time limit, naming the options to change and the values that would fit.
"""

from __future__ import annotations

import math
import os
import resource
import stat
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen.basics.errors import AnalysisError, Problem, raise_if
from fabricgen.basics.trust import quoted

if TYPE_CHECKING:
    from fabricgen.analysis.clos import Clos as LeafSpine
    from fabricgen.analysis.clos import FlowletModel

# The simulation (numpy) is imported where it is used: the command line shows these bounds in its
# help, and every other command should not pay for numpy.
NETWORKS = ("backend", "frontend", "storage")  # the routed fabrics a build can hold


# The choices of the traffic options, as the command line offers them (`--help` lists them and
# refuses any other value before any work); the simulation's own tuples (loadbalance.PATTERNS, ...)
# hold the same values, which a test keeps so.
class Pattern(str, Enum):
    all_to_all = "all-to-all"
    ring = "ring"
    permutation = "permutation"
    shift = "shift"


class Scope(str, Enum):
    rail = "rail"
    cross_rail = "cross-rail"


class Placement(str, Enum):
    contiguous = "contiguous"
    scattered = "scattered"


class Hash(str, Enum):
    crc32 = "crc32"
    random = "random"


class Schedule(str, Enum):
    fluid = "fluid"
    nccl = "nccl"


class Mode(str, Enum):
    ecmp = "ecmp"
    flowlet = "flowlet"
    spray = "spray"


# Inclusive bounds of the numeric options. Beyond them an option stops meaning anything for a
# fabric (a NIC runs a handful of queue pairs per peer, a confidence interval is tight long before
# 100 seeds) while the cost keeps growing.
BOUNDS: dict[str, tuple[int, int]] = {
    "--worst": (1, 100_000),
    "--concurrent-jobs": (1, 65_536),
    "--message-bytes": (1, 1 << 40),
    "--flows-per-pair": (1, 256),
    "--flowlets": (1, 64),
    "--seeds": (1, 100),
}


@dataclass(frozen=True)
class TrafficOptions:
    """The traffic the load-balancing simulation runs (`analyze`'s traffic options), as given:
    `check` says whether they are within their choices and bounds."""

    pattern: str = "all-to-all"
    scope: str = "rail"  # rail-optimized collectives stay on their rail; cross-rail moves every hop
    jobs: int = 1
    placement: str = "contiguous"
    message_bytes: int = 1 << 20  # per GPU pair (all-to-all, permutation, shift) or per GPU (ring)
    flows_per_pair: int = 1  # RoCE queue pairs, each with its own UDP source port
    modes: tuple[str, ...] = tuple(mode.value for mode in Mode)  # loadbalance.MODES, in its order
    hash: str = "crc32"
    flowlets: int = 4
    seeds: int = 10
    sweep_seeds: int = 3  # per point of the JCT-vs-jobs sweep
    senders: str = "all"  # or "leaf:NAME": only the GPUs on that leaf send
    load: float = 1.0  # offered load, a fraction of NIC line rate
    stretch_threshold: float = 1.5  # report the share of flows whose stretch is above it
    flowlet_gap_us: float = 500.0  # flowlet timeout
    idle_gap_us: float = 500.0  # mean idle gap between a flow's bursts
    schedule: str = "fluid"  # every flow at once, or NCCL's p2p rounds (schedule.py)

    def check(self) -> None:
        """Raise AnalysisError naming every option that is not one of its choices or is out of bounds."""
        raise_if(option_problems(None, None, self), AnalysisError)

    def traffic(self, jobs: int | None = None) -> dict:
        return {
            "pattern": self.pattern,
            "scope": self.scope,
            "jobs": jobs or self.jobs,
            "placement": self.placement,
            "message_bytes": self.message_bytes,
            "flows_per_pair": self.flows_per_pair,
        }

    @property
    def flowlet(self) -> FlowletModel:
        from fabricgen.analysis.clos import FlowletModel

        return FlowletModel(flowlets=self.flowlets, gap_us=self.flowlet_gap_us, idle_gap_us=self.idle_gap_us)


# Peak memory of one mode's simulation of one seed's traffic, per NIC-port flow (bytes), measured
# with tracemalloc: 270-311 (ECMP and flowlet), 147-187 (spray) on 2 and 3 tiers.
BYTES_PER_FLOW = {"ecmp": 340, "spray": 210, "flowlet": 340}
BYTES_PER_GPU_FLOW = 48  # the GPU flows (src, dst, bytes, port, job) while their port flows exist
BYTES_KEPT_PER_FLOW = 24  # per mode: seed 0's completion times, kept for the figures
BYTES_PER_GRID_CELL = 40  # all-to-all: one job's GPU-pair grid, before same-node pairs are dropped
BYTES_PER_PAIR = 16  # the pairs kept from every job's grid while the next job's is built
BYTES_PER_GROUP_CELL = 20  # the ECMP group tables, leaf x leaf x (spine x link)
MARGIN = 1.25
BUDGET_FRACTION = 0.75  # of the memory free now: the rest is the interpreter's, and other programs'
FALLBACK_AVAILABLE = 4 << 30  # when the system does not say (no /proc/meminfo, no sysconf)
# CPU seconds per NIC-port flow and hop of its path (flowlet: and per burst), each mode simulated
# alone, measured on one core of a loaded machine (63 K, 522 K and 2.1 M flows; 2 and 3 tiers): ECMP
# 0.08-0.16 us, spray 0.05-0.08 us, flowlet 0.15-0.17 us per hop and burst (its first burst's ECMP
# paths included, which `clos.simulate_modes` shares with ECMP: counted twice here, on the safe side).
# Rounded up to cover 8.4 M port flows (dual-plane-2048 cross-rail, 1 seed: 25.5 s measured, memory-bound).
SECONDS_PER_FLOW_HOP = {"ecmp": 0.25e-6, "spray": 0.1e-6, "flowlet": 0.25e-6}
# building one seed's traffic and its metrics (every mode's), re-measured: 0.15-0.4 us, 0.6 us on the
# first seed of 2.1 M flows
SECONDS_PER_GPU_FLOW = 0.4e-6
# --schedule nccl simulates an all-to-all's rounds one after another (schedule.py): a fixed cost per
# round and mode on top of the flows' (flowlet: per later burst and load sample, `FlowletModel.updates`).
# Measured on bench-2048 (255 rounds, 1 seed, three modes): 7.9 s of CPU more than fluid, 31 ms a
# round; rounded up.
SECONDS_PER_ROUND = {"ecmp": 1e-3, "spray": 1e-3, "flowlet": 0.2e-3}
LOAD_SAMPLES_PER_BURST = 64  # clos.FlowletModel.updates, not imported: numpy stays out of --help
# Refuse rather than run for minutes: about 5 minutes of CPU for the whole simulation.
MAX_SECONDS = 300.0

# The capacity and failure analysis depends on the fabric alone (a build directory is input too):
# leaf x leaf matrices of float64 and int64, a block of rows x leaves x spines, networkx's
# max-flow graph of Python objects per leaf-spine pair; every spine and every cabled leaf-spine
# pair recomputes leaf x spine minima over every leaf, so its steps grow as leaves^2 x spines^2.
BYTES_PER_LEAF_PAIR = 80
BYTES_PER_LEAF_SPINE = 256 * 8 + 1_000  # capacity.ROWS_PER_CHUNK rows of float64, one networkx edge
MAX_CAPACITY_STEPS = 200_000_000_000  # ~150 M element steps a second: about 20 minutes


def _path(path: Path) -> str:
    """A path for a message: quoted and escaped, never cut (PATH_MAX bounds it)."""
    return repr(str(path))


def option_problems(network: str | None, worst: int | None, options: TrafficOptions) -> list[Problem]:
    """Every option that is not one of its choices or is out of its bounds (None: not given)."""
    from fabricgen.analysis import loadbalance, schedule

    choices = {
        "--pattern": loadbalance.PATTERNS,
        "--scope": loadbalance.SCOPES,
        "--placement": loadbalance.PLACEMENTS,
        "--hash": loadbalance.HASHES,
        "--schedule": schedule.SCHEDULES,
    }
    problems = []
    given: list[tuple[str, str, tuple[str, ...]]] = [("--network", network, NETWORKS)] if network is not None else []
    given += [(name, getattr(options, name[2:]), allowed) for name, allowed in choices.items()]
    for name, choice, allowed in given:
        if choice not in allowed:
            problems.append(Problem(f"{name} {quoted(choice)} is not known", hint=f"choose one of: {', '.join(allowed)}"))
    if not options.modes:
        problems.append(Problem("--modes names no mode", hint=f"choose from: {', '.join(loadbalance.MODES)}"))
    for mode in options.modes:
        if mode not in loadbalance.MODES:
            problems.append(Problem(f"--modes {quoted(mode)} is not known", hint=f"choose from: {', '.join(loadbalance.MODES)}"))
    if options.senders != "all" and not (options.senders.startswith("leaf:") and len(options.senders) > len("leaf:")):
        problems.append(Problem(f"--senders {quoted(options.senders)} is not known", hint="choose all, or leaf:NAME (only the GPUs on that leaf send)"))
    reals = {
        "--load": (options.load, 0.0, 1.0, False),
        "--stretch-threshold": (options.stretch_threshold, 1.0, 1e6, True),
        "--flowlet-gap-us": (options.flowlet_gap_us, 0.0, 1e6, False),
        "--idle-gap-us": (options.idle_gap_us, 0.0, 1e6, False),
    }
    for name, (real, low, high, low_included) in reals.items():
        if not (not math.isnan(real) and (low <= real if low_included else low < real) and real <= high):
            side = "at least" if low_included else "more than"
            problems.append(
                Problem(
                    f"{name} must be {side} {low:g} and at most {high:g}, not {real:g}",
                    hint=f"use {name} within ({low:g}, {high:g}]" if not low_included else f"use {name} within [{low:g}, {high:g}]",
                )
            )
    values = {
        "--worst": worst,
        "--concurrent-jobs": options.jobs,
        "--message-bytes": options.message_bytes,
        "--flows-per-pair": options.flows_per_pair,
        "--flowlets": options.flowlets,
        "--seeds": options.seeds,
    }
    for name, value in values.items():
        low, high = BOUNDS[name]
        if value is None:
            continue
        if value < low:
            problems.append(Problem(f"{name} must be at least {low:,}, not {value:,}", hint=f"use {name} {low} or more"))
        elif value > high:
            problems.append(Problem(f"{name} must be at most {high:,}, not {value:,}", hint=f"use {name} {high} or less"))
    return problems


REPORT_FIGURES = ("link-load", "fct-stretch", "jct-vs-jobs")
NAME_MAX = 255
_LONGEST_SUFFIX = len("-fct-stretch.png") + len("..fabricgen-tmp")  # a figure's name, staged


def report_problems(report: Path) -> list[Problem]:
    """Why `--report report` cannot be written, found before the analysis runs: no file name, a
    directory that cannot be created or written (a missing one is created when the report is
    written), a name too long for the figures and the staging file beside it, or a target that
    exists and is not a regular file (the report and its figures replace their targets, and
    /dev/null is no place for that)."""
    if report.name in ("", ".", ".."):
        return [Problem(f"--report needs a file name, not {_path(report)}", hint="give one, e.g. --report analysis.md")]
    if len(os.fsencode(report.name)) + _LONGEST_SUFFIX > NAME_MAX:
        return [
            Problem(
                f"--report: the file name is {len(os.fsencode(report.name))} bytes, too long for the figures beside it",
                hint=f"use a name of at most {NAME_MAX - _LONGEST_SUFFIX} bytes",
            )
        ]
    directory = report.parent
    existing = directory
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent  # the report's directories from here down are created
    if not existing.is_dir():
        return [Problem(f"--report: {_path(existing)} is not a directory", hint="choose another path for the report")]
    if not os.access(existing, os.W_OK | os.X_OK):
        return [Problem(f"--report: cannot write in {_path(existing)}", hint="choose a directory you can write")]
    if existing != directory:
        return []  # nothing exists there yet to be in the way
    targets = [report] + [report.with_name(f"{report.stem}-{name}.{kind}") for name in REPORT_FIGURES for kind in ("png", "svg")]
    problems = []
    for target in targets:
        try:
            mode = target.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(Problem(f"--report: cannot check {_path(target)}: {exc.strerror}"))
            continue
        # a symlink is replaced itself, never written through
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            problems.append(Problem(f"--report: {_path(target)} exists and is not a regular file", hint="choose another file name"))
    return problems


@dataclass(frozen=True)
class Cost:
    """What a simulation will take: peak memory added (bytes), flow (and flowlet) placements over
    every seed, mode and sweep point, the flows of the largest traffic matrix, and its CPU time."""

    bytes: int
    placements: int
    flows: int
    seconds: float = 0.0


def _sending_share(model: LeafSpine, senders: str) -> float:
    """The share of the GPUs that send: 1, or those with a NIC port on the leaf `leaf:NAME`."""
    if senders == "all" or ":" not in senders:
        return 1.0
    name = senders.split(":", 1)[1]
    if name not in model.names[: model.leaves]:
        return 1.0  # refused elsewhere, by name
    gpus = model.leaf_of_nic.reshape(-1, model.planes) == model.names.index(name)
    return float(gpus.any(axis=1).mean())


def simulation_cost(model: LeafSpine, options: TrafficOptions, sweep: bool = True) -> Cost:
    """The cost of `balancing.analyse(…, options, sweep)` on `model`, from sizes alone (nothing
    is simulated). The sweep's 1-job point is as large as it gets, so --jobs cannot make a
    simulation fit when the sweep runs; with --senders leaf:NAME there is no sweep and only that
    leaf's GPUs' flows are simulated."""
    from fabricgen.analysis.loadbalance import traffic_size

    runs = [(options.jobs, options.seeds)]  # (concurrent jobs, seeds) of every traffic simulated
    jobs = 1
    while sweep and options.senders == "all" and model.nodes // jobs >= 2:
        runs.append((jobs, options.sweep_seeds))
        jobs *= 2
    share = _sending_share(model, options.senders)
    planes = model.planes
    hops = _longest_path(model)
    per_flow = max(BYTES_PER_FLOW[mode] for mode in options.modes) * planes + BYTES_PER_GPU_FLOW + BYTES_KEPT_PER_FLOW * len(options.modes)
    per_flow_placements = sum(options.flowlets if mode == "flowlet" else 1 for mode in options.modes) * planes
    per_flow_seconds = SECONDS_PER_GPU_FLOW + planes * hops * sum(
        SECONDS_PER_FLOW_HOP[mode] * (options.flowlets if mode == "flowlet" else 1) for mode in options.modes
    )
    per_round_seconds = sum(SECONDS_PER_ROUND[mode] * ((options.flowlets - 1) * LOAD_SAMPLES_PER_BURST if mode == "flowlet" else 1) for mode in options.modes)
    peak = placements = largest = 0
    seconds = 0.0
    for jobs, seeds in runs:
        made, grid = traffic_size(model.nodes, model.rails, options.pattern, options.scope, jobs, options.flows_per_pair)
        flows = math.ceil(made * share)
        # the grid is gone before the simulation starts: the larger of the two phases
        peak = max(peak, flows * per_flow + made * BYTES_PER_GPU_FLOW, made * BYTES_PER_PAIR + grid * BYTES_PER_GRID_CELL)
        placements += seeds * flows * per_flow_placements
        seconds += seeds * (flows * per_flow_seconds + made * SECONDS_PER_GPU_FLOW + _rounds(model.nodes // jobs, options) * per_round_seconds)
        largest = max(largest, flows)
    # the path model's tables: hops to every leaf per switch, next hops per (switch, leaf)
    switches = model.leaves + model.spines
    peak += switches * model.leaves * (switches + 16) * BYTES_PER_GROUP_CELL // 4 + switches * switches * 4
    return Cost(int(peak * MARGIN), placements, largest, seconds)


def _rounds(nodes_per_job: int, options: TrafficOptions) -> int:
    """Rounds `schedule.simulate` runs one after another: none apart (fluid), an all-to-all's
    nodes - 1 peer nodes (nccl), or one (nccl, the other patterns)."""
    if options.schedule != "nccl":
        return 0
    return max(1, nodes_per_job - 1) if options.pattern == "all-to-all" else 1


def _longest_path(model: LeafSpine) -> int:
    """Hops of the longest leaf-to-leaf path (2 in a leaf-spine, 4 over cores), at least 1."""
    from fabricgen.analysis.clos import UNREACHABLE

    reach = model.dist[: model.leaves]
    finite = reach[reach < UNREACHABLE]
    return max(1, int(finite.max())) if finite.size else 1


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:,.0f} minutes" if seconds >= 90 else f"{seconds:,.0f} s"


def check_cost(model: LeafSpine, options: TrafficOptions, sweep: bool = True, budget: int | None = None) -> Cost:
    """`simulation_cost`, or AnalysisError when it needs more than `budget` bytes (default:
    `memory_budget()`) or more than MAX_SECONDS of CPU; the hint names each option that
    alone would make it fit, with the value."""
    source = f" ({BUDGET_FRACTION:.0%} of the memory free now)" if budget is None else ""
    budget = memory_budget() if budget is None else budget
    cost = simulation_cost(model, options, sweep)

    def fits(candidate: TrafficOptions, sweep: bool = sweep) -> bool:
        found = simulation_cost(model, candidate, sweep)
        return found.bytes <= budget and found.seconds <= MAX_SECONDS

    if fits(options):
        return cost
    problems = []
    if cost.bytes > budget:
        problems.append(
            f"the load-balancing simulation would need about {_gib(cost.bytes)} of memory ({cost.flows:,} flows in its largest "
            f"traffic matrix), more than the {_gib(budget)} it may use{source}"
        )
    if cost.seconds > MAX_SECONDS:
        problems.append(
            f"the load-balancing simulation would take about {_minutes(cost.seconds)} of CPU ({cost.flows:,} flows in its largest "
            f"traffic matrix, {cost.placements:,} flow and flowlet placements over its seeds, modes and jobs sweep), more than "
            f"the limit of {_minutes(MAX_SECONDS)}"
        )
    # one fix for both: each change listed makes the whole simulation fit
    hint = "; or ".join(_fixes(model, options, sweep, fits))
    raise AnalysisError([Problem(message, hint=hint if i == len(problems) - 1 else "") for i, message in enumerate(problems)])


def capacity_cost(leaves: int, spines: int) -> Cost:
    """The capacity and single-failure analysis of a fabric of this size (`placements`: its numpy
    element steps; `flows`: 0)."""
    steps = 2 * leaves**2 * spines**2  # each spine failure, and each leaf-spine failure, over every pair
    size = leaves**2 * BYTES_PER_LEAF_PAIR + leaves * spines * BYTES_PER_LEAF_SPINE
    return Cost(int(size * MARGIN), steps, 0)


def check_capacity_cost(leaves: int, spines: int, network: str, budget: int | None = None) -> Cost:
    """`capacity_cost`, or AnalysisError when the fabric is too large to analyse here."""
    source = f" ({BUDGET_FRACTION:.0%} of the memory free now)" if budget is None else ""
    budget = memory_budget() if budget is None else budget
    cost = capacity_cost(leaves, spines)
    size = f"the {network} fabric's {leaves:,} leaves and {spines:,} spines"
    problems = []
    if cost.bytes > budget:
        problems.append(
            Problem(
                f"analysing {size} would need about {_gib(cost.bytes)} of memory, more than the {_gib(budget)} it may use{source}",
                hint="analyse a smaller fabric (a 2-tier leaf-spine has at most a spine's ports of leaves)",
            )
        )
    if cost.placements > MAX_CAPACITY_STEPS:
        problems.append(
            Problem(
                f"analysing every single failure of {size} would take {cost.placements:,} steps, more than the limit of {MAX_CAPACITY_STEPS:,} (about 20 minutes)",
                hint="analyse a smaller fabric",
            )
        )
    if problems:
        raise AnalysisError(problems)
    return cost


def _fixes(model: LeafSpine, options: TrafficOptions, sweep: bool, fits) -> list[str]:
    """Each single change of one option that makes `fits` true, the least change for a number."""
    fixes = []
    if sweep and fits(options, sweep=False):
        fixes.append("use --no-sweep")
    for name, attribute in (("--flows-per-pair", "flows_per_pair"), ("--flowlets", "flowlets"), ("--seeds", "seeds")):
        if attribute == "flowlets" and "flowlet" not in options.modes:
            continue
        best = _largest_fitting(options, attribute, fits)
        if best is not None:
            fixes.append(f"lower {name} to {best}")
    if not sweep:
        jobs = next((j for j in (2, 4, 8, 16, 32, 64, 128, 256) if options.jobs < j <= model.nodes // 2 and fits(replace(options, jobs=j))), None)
        if jobs is not None:
            fixes.append(f"use --concurrent-jobs {jobs} (smaller jobs, fewer peers)")
    if options.scope == "cross-rail" and fits(replace(options, scope="rail")):
        fixes.append("use --scope rail")
    if options.senders == "all" and fits(replace(options, senders=f"leaf:{model.names[0]}")):
        fixes.append(f"use --senders leaf:{model.names[0]} (only one leaf's GPUs send)")
    without_flowlet = tuple(mode for mode in options.modes if mode != "flowlet")
    if without_flowlet != options.modes and without_flowlet and fits(replace(options, modes=without_flowlet)):
        fixes.append(f"use --modes {','.join(without_flowlet)}")
    fixes.append("use --no-traffic for capacity and failures only")
    return fixes


def _largest_fitting(options: TrafficOptions, attribute: str, fits) -> int | None:
    """The largest value below the current one of a numeric option (cost grows with it) that fits."""
    low = 1
    high: int = getattr(options, attribute) - 1
    # the ignores: mypy checks a ** dict against every field of TrafficOptions; `attribute` names an int one
    if high < low or not fits(replace(options, **{attribute: low})):  # type: ignore[arg-type]
        return None
    while low < high:
        middle = (low + high + 1) // 2
        if fits(replace(options, **{attribute: middle})):  # type: ignore[arg-type]
            low = middle
        else:
            high = middle - 1
    return low


def _gib(size: int) -> str:
    return f"{size / (1 << 30):,.1f} GiB" if size >= 1 << 30 else f"{size / (1 << 20):,.0f} MiB"


def memory_budget() -> int:
    """Bytes a simulation may take now: BUDGET_FRACTION of the least of the memory the system has
    available (MemAvailable), the room under this process's cgroup limit, and the room under its
    address-space limit (ulimit -v). Past any of them, numpy fails or the kernel kills the run."""
    rooms = [_available()]
    for room in (_cgroup_room(), _address_space_room()):
        if room is not None:
            rooms.append(room)
    return max(0, int(min(rooms) * BUDGET_FRACTION))


def _available() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return FALLBACK_AVAILABLE


def _cgroup_room() -> int | None:
    """memory.max - memory.current of this process's cgroup (v2), or None without a limit."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as handle:
            path = next((line.strip()[3:] for line in handle if line.startswith("0::")), None)
        if path is None:
            return None
        group = Path("/sys/fs/cgroup") / path.lstrip("/")
        limit = (group / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((group / "memory.current").read_text())
    except (OSError, ValueError):
        return None


def _address_space_room() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    except (OSError, ValueError, StopIteration):
        return None
    return soft - size
