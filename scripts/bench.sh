#!/usr/bin/env bash
# Sets up and runs the build benchmark (not part of the test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python bench/bench.py "$@"
