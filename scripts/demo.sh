#!/usr/bin/env bash
# Sets everything up and builds the whitepaper's 256-GPU cluster into output/cisco-256-gpu/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/fabricgen build intents/cisco-256-gpu.yaml "$@"
