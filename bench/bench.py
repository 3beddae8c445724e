"""Build benchmark: whole builds (every config and report, written to disk), one per process.

    python bench/bench.py                  # the standard cases
    python bench/bench.py --check          # also exit 1 when a target is missed
    python bench/bench.py --plot FILE      # the scaling curve there (default bench/results/scaling.png)
    python bench/bench.py --scratch DIR    # write the builds under DIR (default: the system's temp directory)
    python bench/bench.py --only bench-3tier-131072   # only these cases (intent file stems)

Each case runs in a fresh interpreter pinned to one CPU core, so wall time is single-core time
and peak memory (ru_maxrss) belongs to that build alone. In the same process, after the build,
the same files are written again by the same atomic write into other directories, without any
compile: the write floor (the fastest of those and the build's own write), the part of the wall time no
faster compiler removes. Nothing is deleted until the run is over.
The largest case is built again with --jobs 2 on two cores. Cases of one family (one design at
growing sizes) are summarised per 1,000 GPUs and per device, and drawn as GPUs against wall
seconds.

A case whose intent file does not exist yet is skipped with a note, so cases (and their targets)
can be listed before their intents land.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
INTENTS = HERE / "intents"
CASES = [
    REPO / "intents" / "cisco-256-gpu.yaml",
    INTENTS / "bench-2tier-1024.yaml",
    INTENTS / "bench-2048.yaml",
    INTENTS / "bench-2tier-2048.yaml",
    INTENTS / "bench-2tier-4096.yaml",
    INTENTS / "bench-8192.yaml",
    INTENTS / "bench-8192-sonic.yaml",
    INTENTS / "bench-8192-evpn.yaml",
    INTENTS / "bench-3tier-8192.yaml",
    INTENTS / "bench-3tier-16384.yaml",
    INTENTS / "bench-3tier-32768.yaml",
    INTENTS / "bench-3tier-131072.yaml",
]
# The same design at growing sizes: (label, intent stem) per family, smallest first.
FAMILIES = {
    "2-tier, 128 x 400G, NX-OS": [
        ("1,024 GPUs", "bench-2tier-1024"),
        ("2,048 GPUs", "bench-2tier-2048"),
        ("4,096 GPUs", "bench-2tier-4096"),
        ("8,192 GPUs", "bench-8192"),
    ],
    "3-tier, 64 x 400G, NX-OS": [
        ("8,192 GPUs", "bench-3tier-8192"),
        ("16,384 GPUs", "bench-3tier-16384"),
        ("32,768 GPUs", "bench-3tier-32768"),
    ],
}


class Target(NamedTuple):
    seconds: float  # wall, one core, imports included
    peak_mib: float
    floor_times: float | None = None  # wall at most this many times the write floor (None: no such target)


# Per intent stem: every config and report written, on one core.
TARGETS = {
    "bench-8192": Target(5.0, 1024),
    "bench-8192-sonic": Target(5.0, 1024),
    "bench-8192-evpn": Target(5.0, 1024),
    "bench-3tier-32768": Target(30.0, 4096),
    "bench-3tier-131072": Target(30.0, 4096, 4.0),  # issue 19: 131,072 GPUs, 3 tiers
}
ANALYSIS_TARGET = {"build": "bench-2048", "seconds": 16.5}  # `fabricgen analyze` with its defaults, one core (the old simulator's 15 s + 10 %)
PARALLEL_JOBS = 2  # the largest case is also built with --jobs 2 on this many cores
DEFAULT_PLOT = HERE / "results" / "scaling.png"
FLOOR_ATTEMPTS = 3


def ext4_without_journal(path: Path) -> str | None:
    """The block device `path` lies on when that is an ext4 without a journal (Linux), else None.
    There, ext4 does not reuse an inode for up to 5 minutes after it was freed and looks past each
    such inode when it creates a file (fs/ext4/ialloc.c, recently_deleted), so creating tens of
    thousands of files just after deleting as many takes several times longer: 4 s then 26 s for
    the 131,072-GPU build's write on this project's machine."""
    device = path.stat().st_dev
    try:
        name = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}").resolve().name
        journal = Path("/sys/fs/ext4", name, "journal_task").read_text().strip()
    except OSError:
        return None
    return name if journal == "<none>" else None


def pin(cores: int) -> int:
    """Pin this process to its first `cores` available CPUs; how many it got."""
    if not hasattr(os, "sched_setaffinity"):
        return os.cpu_count() or 1
    chosen = set(sorted(os.sched_getaffinity(0))[:cores])
    os.sched_setaffinity(0, chosen)
    return len(chosen)


def measure_one(intent: Path, output: Path, jobs: int) -> dict:
    cores = pin(max(jobs, 1))
    started = time.perf_counter()
    from fabricgen.build.output import write_build
    from fabricgen.compiler.pipeline import build  # imports count: a user pays for them too

    result, _ = build(intent, output, jobs=jobs)
    wall = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    files = result.files
    # the write floor: the same files, the same atomic write, no compile, into other directories;
    # the fastest of the build's own write and a few more, as the disk's time varies from one write
    # to the next. Nothing is deleted until the whole run is over: on an ext4 without a journal,
    # creating files right after deleting many is several times slower (ext4_without_journal).
    floors = [result.timings["write"]]
    for attempt in range(FLOOR_ATTEMPTS):
        floor_dir = output.parent / f"write-floor-{attempt}" / output.name
        clock = time.perf_counter()
        write_build(files, floor_dir)
        floors.append(time.perf_counter() - clock)
    config_lines = sum(data.count(b"\n") for path, data in files.items() if path.startswith("configs/"))
    return {
        "intent": intent.stem,
        "jobs": jobs,
        "cores": cores,
        "gpus": result.sizing.gpus,
        "switches": sum(1 for _ in result.fabric.switches()),
        "devices": len(result.fabric.devices),
        "links": len(result.fabric.links),
        "config_lines": config_lines,
        "bytes": sum(len(d) for d in files.values()),
        "files": len(files),
        "seconds": wall,
        "write_floor": min(floors),
        "writes": floors,  # the build's own write first
        "phases": result.timings,
        "peak_mib": peak_mib,
        "workers_peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def measure_analysis(build_dir: Path) -> dict:
    """`fabricgen analyze` with its default options (capacity, every single failure, the
    load-balancing modes over 10 seeds, the jobs sweep), figures included."""
    pin(1)
    started = time.perf_counter()
    from fabricgen.analysis.balancing import analyse
    from fabricgen.analysis.capacity import capacity, single_failures
    from fabricgen.analysis.fabric import read_fabric
    from fabricgen.analysis.limits import TrafficOptions
    from fabricgen.analysis.plots import figures

    fabric = read_fabric(build_dir)
    capacity(fabric)
    failures = single_failures(fabric)
    balancing = analyse(fabric, TrafficOptions())
    figures(balancing)
    return {
        "seconds": time.perf_counter() - started,
        "failures": len(failures),
        "gpus": balancing.fabric.gpus,  # GPUs, not NIC ports (multi-plane NICs)
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_case(intent: Path, scratch: Path, jobs: int = 1) -> dict | None:
    """The case's measurements; None, after saying why, when its build fails."""
    name = intent.stem if jobs == 1 else f"{intent.stem}-jobs{jobs}"
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(intent), str(scratch / name), "--jobs", str(jobs)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        print(f"{name}: FAILED (exit {out.returncode})")
        for line in out.stderr.strip().splitlines()[-4:]:
            print(f"    {line}")
        return None
    return json.loads(out.stdout)


HEADER = f"{'intent':<28}{'GPUs':>7}{'devices':>9}{'switches':>9}{'links':>8}{'cfg lines':>11}{'MB':>7}{'wall s':>8}{'floor s':>9}{'dev/s':>8}{'peak MiB':>10}"


def print_row(m: dict) -> None:
    label = m["intent"] if m["jobs"] == 1 else f"{m['intent']} --jobs {m['jobs']}"
    print(
        f"{label:<28}{m['gpus']:>7,}{m['devices']:>9,}{m['switches']:>9,}{m['links']:>8,}{m['config_lines']:>11,}"
        f"{m['bytes'] / 1e6:>7.1f}{m['seconds']:>8.2f}{m['write_floor']:>9.2f}{m['devices'] / m['seconds']:>8,.0f}{m['peak_mib']:>10.0f}"
    )
    phases = ", ".join(f"{k} {v:.2f}" for k, v in m["phases"].items())
    startup = m["seconds"] - sum(m["phases"].values())
    print(f"{'':<28}phases (s): start-up {startup:.2f}, {phases}")
    if m["jobs"] != 1:
        print(f"{'':<28}on {m['cores']} core(s); peak MiB is the parent's, the largest render worker's was {m['workers_peak_mib']:.0f} MiB")


def print_scaling(results: dict[str, dict]) -> list[tuple[str, list[tuple[int, float]]]]:
    """Per family: seconds per 1,000 GPUs, microseconds per device, and the marginal cost of the
    GPUs added since the previous size (constant when the build grows linearly)."""
    curves = []
    for family, members in FAMILIES.items():
        measured = [(label, results[stem]) for label, stem in members if stem in results]
        if len(measured) < 2:
            continue
        print(f"\nscaling, {family}:")
        print(f"  {'case':<14}{'GPUs':>8}{'devices':>9}{'wall s':>8}{'s / 1k GPUs':>13}{'us / device':>13}{'added: s / 1k GPUs':>20}")
        previous = None
        for label, m in measured:
            marginal = ""
            if previous is not None and m["gpus"] > previous["gpus"]:
                marginal = f"{(m['seconds'] - previous['seconds']) / (m['gpus'] - previous['gpus']) * 1000:.3f}"
            print(
                f"  {label:<14}{m['gpus']:>8,}{m['devices']:>9,}{m['seconds']:>8.2f}"
                f"{m['seconds'] / m['gpus'] * 1000:>13.3f}{m['seconds'] / m['devices'] * 1e6:>13,.0f}{marginal:>20}"
            )
            previous = m
        curves.append((family, [(m["gpus"], m["seconds"]) for _, m in measured]))
    return curves


def plot_scaling(curves: list[tuple[str, list[tuple[int, float]]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    for family, points in curves:
        gpus, seconds = zip(*points, strict=True)
        axes.plot(gpus, seconds, marker="o", label=family)
    axes.set_xlabel("GPUs")
    axes.set_ylabel("wall seconds (one core, whole build written)")
    axes.set_title("fabricgen build: wall time against cluster size")
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--one", nargs=2, metavar=("INTENT", "OUTPUT"), help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--analysis", metavar="BUILD_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT, metavar="FILE", help=f"the scaling curve as PNG (default {DEFAULT_PLOT.relative_to(REPO)})")
    parser.add_argument(
        "--scratch",
        type=Path,
        metavar="DIR",
        help="write the builds under DIR (default: the system's temporary directory). The write floor is the file system's: "
        "a long-used ext4 can take several times a fresh one's time to create tens of thousands of files",
    )
    parser.add_argument("--only", nargs="+", metavar="STEM", help="only these cases, by intent file stem (e.g. bench-8192)")
    args = parser.parse_args()
    if args.scratch is not None and not args.scratch.is_dir():
        parser.error(f"--scratch {args.scratch}: not a directory")
    cases = CASES
    if args.only:
        unknown = sorted(set(args.only) - {case.stem for case in CASES})
        if unknown:
            parser.error(f"--only: no case named {', '.join(unknown)} (cases: {', '.join(case.stem for case in CASES)})")
        cases = [case for case in CASES if case.stem in args.only]
    if args.one:
        print(json.dumps(measure_one(Path(args.one[0]), Path(args.one[1]), args.jobs)))
        return 0
    if args.analysis:
        print(json.dumps(measure_analysis(Path(args.analysis))))
        return 0

    results: dict[str, dict] = {}
    skipped = []
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-", dir=args.scratch) as scratch_name:
        scratch = Path(scratch_name)
        print(f"builds written under {scratch}\n")
        device = ext4_without_journal(scratch)
        if device is not None:
            print(
                f"note: {scratch} is on an ext4 without a journal ({device}): for 5 minutes after files there are deleted, creating files "
                "takes several times longer (ext4 skips their inodes). Nothing is deleted until the run is over; leave 5 minutes after "
                "deleting anything large there (an earlier run's builds) before a run.\n"
            )
        print(HEADER)
        print("-" * len(HEADER))
        for intent in cases:
            if not intent.exists():
                skipped.append(intent)
                continue
            m = run_case(intent, scratch)
            if m is None:
                verdicts.append(False)
                continue
            results[intent.stem] = m
            print_row(m)
        if results:
            largest = max(results.values(), key=lambda m: m["gpus"])  # the first listed of the largest size
            intent = next(i for i in cases if i.stem == largest["intent"])
            m = run_case(intent, scratch, PARALLEL_JOBS)
            if m is None:
                verdicts.append(False)
            else:
                print_row(m)
        for intent in skipped:
            print(f"note: skipped {intent.stem}: {intent.relative_to(REPO)} does not exist yet")
        for stem, target in TARGETS.items():
            if stem not in results:
                continue
            m = results[stem]
            met = m["seconds"] <= target.seconds and m["peak_mib"] <= target.peak_mib
            floor = ""
            if target.floor_times is not None:
                met = met and m["seconds"] <= target.floor_times * m["write_floor"]
                floor = f", within {target.floor_times:g}x the write floor"
            verdicts.append(met)
            print(
                f"target {stem} ({m['gpus']:,} GPUs): under {target.seconds:g} s on one core and {target.peak_mib:,.0f} MiB peak{floor}: "
                f"{m['seconds']:.2f} s, {m['peak_mib']:.0f} MiB, floor {m['write_floor']:.2f} s: {'met' if met else 'MISSED'}"
            )
        analysed = scratch / ANALYSIS_TARGET["build"]
        if analysed.is_dir():
            out = subprocess.run([sys.executable, __file__, "--analysis", str(analysed)], capture_output=True, text=True, check=True)
            a = json.loads(out.stdout)
            met = a["seconds"] <= ANALYSIS_TARGET["seconds"]
            verdicts.append(met)
            print(
                f"\nanalyze {ANALYSIS_TARGET['build']} ({a['gpus']:,} GPUs, {a['failures']:,} single failures, 3 modes x 10 seeds, jobs sweep, figures): "
                f"{a['seconds']:.1f} s, {a['peak_mib']:.0f} MiB peak; target under {ANALYSIS_TARGET['seconds']:g} s on one core: {'met' if met else 'MISSED'}"
            )
    curves = print_scaling(results)
    if curves:
        plot_scaling(curves, args.plot)
        print(f"\nscaling curve: {args.plot}")
    missed = not all(verdicts)
    print(f"\ntargets: {'MISSED' if missed else 'met'}")
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
