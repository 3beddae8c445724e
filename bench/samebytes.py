"""Byte-identity guard for speed work: a change that only makes the build faster must leave every
file it writes as it was.

    python bench/samebytes.py record FILE              # every intent's file hashes -> FILE (JSON)
    python bench/samebytes.py check FILE               # the same hashes now; exit 1 on any difference
    python bench/samebytes.py check FILE --only bench-3tier-32768 cisco-256-gpu

Record on the commit before the change, check after it (a worktree's code is the one imported
when you run it from the worktree's root with PYTHONPATH=$PWD). Each intent of intents/ and
bench/intents/ is compiled in memory, nothing written, and the sha256 of every file is kept;
manifest.json is left out, as it names the package version, which moves with every commit (it
hashes every other file anyway). All 18 intents take about 25 s, half of it the
131,072-GPU one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEFT_OUT = "manifest.json"


def intents(only: list[str] | None) -> list[Path]:
    found = sorted([*REPO.glob("intents/*.yaml"), *REPO.glob("bench/intents/*.yaml")])
    chosen = [path for path in found if not only or path.stem in only]
    unknown = set(only or ()) - {path.stem for path in found}
    if unknown:
        raise SystemExit(f"no intent named {', '.join(sorted(unknown))} in intents/ or bench/intents/")
    return chosen


def file_hashes(intent: Path) -> dict[str, str]:
    """Every file the build of `intent` writes but the manifest, by path: its sha256, or the
    error that stopped the build (an intent that no longer builds is a difference too)."""
    from fabricgen.basics.errors import FabricgenError
    from fabricgen.compiler.pipeline import compile_intent

    try:
        build = compile_intent(intent)
    except FabricgenError as exc:
        return {"(error)": str(exc)}
    return {path: hashlib.sha256(data).hexdigest() for path, data in build.files.items() if path != LEFT_OUT}


def key(intent: Path) -> str:
    return f"{intent.parent.name}/{intent.stem}"


def record(path: Path, only: list[str] | None) -> int:
    recorded = {}
    for intent in intents(only):
        started = time.process_time()
        recorded[key(intent)] = file_hashes(intent)
        print(f"{key(intent)}: {len(recorded[key(intent)])} files, {time.process_time() - started:.1f} s CPU", flush=True)
    staging = path.with_name(f".{path.name}.partial")
    staging.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    os.replace(staging, path)
    return 0


def check(path: Path, only: list[str] | None) -> int:
    chosen = intents(only)
    recorded = json.loads(path.read_text())
    differing = 0
    for intent in chosen:
        started = time.process_time()
        now, was = file_hashes(intent), recorded.get(key(intent))
        if was is None:
            print(f"{key(intent)}: not recorded in {path}")
            differing += 1
            continue
        changed = sorted(name for name in was.keys() | now.keys() if was.get(name) != now.get(name))
        if changed:
            differing += 1
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            print(f"{key(intent)}: {len(changed)} files differ: {shown}")
        else:
            print(f"{key(intent)}: identical ({len(now)} files, {time.process_time() - started:.1f} s CPU)", flush=True)
    print("all identical" if not differing else f"{differing} intents differ")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("record", "check"))
    parser.add_argument("file", type=Path, help="the recorded hashes (JSON)")
    parser.add_argument("--only", nargs="+", metavar="STEM", help="only these intents (file stems)")
    args = parser.parse_args(argv)
    return (record if args.mode == "record" else check)(args.file, args.only)


if __name__ == "__main__":
    sys.exit(main())
