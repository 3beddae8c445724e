#!/usr/bin/env bash
# The static checks, configured in pyproject.toml: ruff's lint rules, ruff's format (checked, not
# applied: `.venv/bin/ruff format` applies it) and mypy with the pydantic plugin. Expects the
# virtualenv scripts/setup.sh makes; scripts/test.sh runs this before the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check --no-cache .
.venv/bin/ruff format --check --no-cache .
.venv/bin/mypy
