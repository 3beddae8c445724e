"""Build benchmark: whole builds (every config and report, written to disk), one per process.

    python bench/bench.py            # the standard cases
    python bench/bench.py --check    # also exit 1 when the 8,192-GPU target is missed

Each case runs in a fresh interpreter pinned to one CPU core, so wall time is single-core time
and peak memory (ru_maxrss) belongs to that build alone.
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CASES = [
    REPO / "intents" / "cisco-256-gpu.yaml",
    HERE / "intents" / "bench-2048.yaml",
    HERE / "intents" / "bench-8192.yaml",
    HERE / "intents" / "bench-8192-sonic.yaml",
    HERE / "intents" / "bench-8192-evpn.yaml",
]
TARGET = {"gpus": 8192, "seconds": 5.0, "peak_mib": 1024}
ANALYSIS_TARGET = {"build": "bench-2048", "seconds": 30.0}  # `fabricgen analyze` with its defaults, one core


def measure_one(intent: Path, output: Path) -> dict:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    started = time.perf_counter()
    from fabricgen.pipeline import build  # imports count: a user pays for them too

    result, _ = build(intent, output)
    wall = time.perf_counter() - started
    files = result.files
    config_lines = sum(data.count(b"\n") for path, data in files.items() if path.startswith("configs/"))
    return {
        "intent": intent.name,
        "gpus": result.sizing.gpus,
        "switches": sum(1 for _ in result.fabric.switches()),
        "devices": len(result.fabric.devices),
        "links": len(result.fabric.links),
        "config_lines": config_lines,
        "bytes": sum(len(d) for d in files.values()),
        "files": len(files),
        "seconds": wall,
        "phases": result.timings,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def measure_analysis(build_dir: Path) -> dict:
    """`fabricgen analyze` with its default options (capacity, every single failure, the
    load-balancing modes over 10 seeds, the jobs sweep), figures included."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    started = time.perf_counter()
    from fabricgen.analysis.balancing import TrafficOptions, analyse
    from fabricgen.analysis.capacity import capacity, single_failures
    from fabricgen.analysis.fabric import read_fabric
    from fabricgen.analysis.plots import figures

    fabric = read_fabric(build_dir)
    capacity(fabric)
    failures = single_failures(fabric)
    balancing = analyse(fabric, TrafficOptions())
    figures(balancing)
    return {
        "seconds": time.perf_counter() - started,
        "failures": len(failures),
        "gpus": len(balancing.fabric.leaf_of_nic),
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--one", nargs=2, metavar=("INTENT", "OUTPUT"), help=argparse.SUPPRESS)
    parser.add_argument("--analysis", metavar="BUILD_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="exit 1 if the 8,192-GPU target is missed")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(Path(args.one[0]), Path(args.one[1]))))
        return 0
    if args.analysis:
        print(json.dumps(measure_analysis(Path(args.analysis))))
        return 0

    header = f"{'intent':<24}{'GPUs':>7}{'devices':>9}{'switches':>9}{'links':>8}{'cfg lines':>11}{'MB':>7}{'wall s':>8}{'dev/s':>8}{'peak MiB':>10}"
    print(header)
    print("-" * len(header))
    missed = False
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as scratch:
        for intent in CASES:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(intent), str(Path(scratch) / intent.stem)],
                capture_output=True, text=True, check=True,
            )
            m = json.loads(out.stdout)
            print(
                f"{m['intent']:<24}{m['gpus']:>7,}{m['devices']:>9,}{m['switches']:>9,}{m['links']:>8,}{m['config_lines']:>11,}"
                f"{m['bytes'] / 1e6:>7.1f}{m['seconds']:>8.2f}{m['devices'] / m['seconds']:>8,.0f}{m['peak_mib']:>10.0f}"
            )
            phases = ", ".join(f"{k} {v:.2f}" for k, v in m["phases"].items())
            print(f"{'':<24}phases (s): {phases}")
            if m["gpus"] == TARGET["gpus"] and (m["seconds"] > TARGET["seconds"] or m["peak_mib"] > TARGET["peak_mib"]):
                missed = True
        analysed = Path(scratch) / ANALYSIS_TARGET["build"]
        out = subprocess.run([sys.executable, __file__, "--analysis", str(analysed)], capture_output=True, text=True, check=True)
        a = json.loads(out.stdout)
        slow = a["seconds"] > ANALYSIS_TARGET["seconds"]
        missed = missed or slow
        print(f"\nanalyze {ANALYSIS_TARGET['build']} ({a['gpus']:,} GPUs, {a['failures']:,} single failures, 3 modes x 10 seeds, jobs sweep, figures): "
              f"{a['seconds']:.1f} s, {a['peak_mib']:.0f} MiB peak; target under {ANALYSIS_TARGET['seconds']:.0f} s on one core: {'MISSED' if slow else 'met'}")
    print(f"\ntarget: {TARGET['gpus']:,} GPUs, every config and report, under {TARGET['seconds']:.0f} s on one core "
          f"and {TARGET['peak_mib']} MiB peak: {'MISSED' if missed else 'met'}")
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
