"""Diagram benchmark: how long each tool takes to lay out fabricgen's drawings of a build.

    python bench/diagrams.py                          # the 256-GPU backend, summary and full views
    python bench/diagrams.py --intent intents/superpod-4096.yaml --network backend
    python bench/diagrams.py --check                  # exit 1 when a summary takes 10 s or more

Builds the intent, exports its diagrams once per view (`fabricgen export diagram --view ...`), then
renders the network's .dot with Graphviz's `dot -Tsvg`, its .d2 with `d2` and its .mmd with
mermaid-cli's `mmdc`, each tool found on PATH (or named by $D2 / $MMDC; mmdc's puppeteer
configuration from $MMDC_PUPPETEER, e.g. {"executablePath": "/usr/bin/chromium", "args": ["--no-sandbox"]}).
A tool that is not installed is reported as such. Wall time per render, and the drawing's width
and height as the tool wrote them in its SVG (px). The target (issue 34): every format renders the
256-GPU backend's default view in under 10 s.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 10.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--intent", type=Path, default=REPO / "intents" / "cisco-256-gpu.yaml")
    parser.add_argument("--network", default="backend")
    parser.add_argument("--views", default="summary,full")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    from fabricgen.compiler.pipeline import build

    missed = False
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-diagrams-") as scratch:
        root = Path(scratch)
        build(args.intent, root / "build")
        print(f"{args.intent.stem} {args.network}")
        for view in args.views.split(","):
            out = root / f"diagram-{view}"
            subprocess.run(
                [sys.executable, "-m", "fabricgen", "export", "diagram", str(root / "build"), "-o", str(out), "--view", view], check=True, capture_output=True
            )
            for tool, command in tools(out / args.network, root).items():
                if command is None:
                    print(f"  {view:8} {tool:8} not installed")
                    continue
                start = time.perf_counter()
                try:
                    result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, check=False)
                    seconds = time.perf_counter() - start
                except subprocess.TimeoutExpired:
                    print(f"  {view:8} {tool:8} over {args.timeout:.0f} s")
                    missed = missed or view == "summary"
                    continue
                svg = Path(command[-1])
                size = _size(svg.read_text()) if result.returncode == 0 and svg.exists() else "failed: " + result.stderr.strip()[:200]
                print(f"  {view:8} {tool:8} {seconds:7.2f} s  {size}")
                missed = missed or (view == "summary" and (seconds >= TARGET_S or result.returncode != 0))
    return 1 if args.check and missed else 0


def tools(stem: Path, root: Path) -> dict[str, list[str] | None]:
    """The render command per tool, None for a tool not installed."""
    d2 = os.environ.get("D2") or shutil.which("d2")
    mmdc = os.environ.get("MMDC") or shutil.which("mmdc")
    dot = shutil.which("dot")
    mermaid = [mmdc, "-i", str(stem.with_suffix(".mmd"))]
    if mmdc and os.environ.get("MMDC_PUPPETEER"):
        config = root / "puppeteer.json"
        config.write_text(os.environ["MMDC_PUPPETEER"])
        mermaid += ["-p", str(config)]
    return {
        "dot": [dot, "-Tsvg", str(stem.with_suffix(".dot")), "-o", str(stem.with_suffix(".dot.svg"))] if dot else None,
        "d2": [d2, str(stem.with_suffix(".d2")), str(stem.with_suffix(".d2.svg"))] if d2 else None,
        "mermaid": [*mermaid, "-o", str(stem.with_suffix(".mmd.svg"))] if mmdc else None,
    }


def _size(svg: str) -> str:
    box = re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"', svg)
    return f"{float(box.group(1)):,.0f} x {float(box.group(2)):,.0f} px" if box else "?"


if __name__ == "__main__":
    sys.exit(main())
