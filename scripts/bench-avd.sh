#!/usr/bin/env bash
# fabricgen beside Arista AVD (pyavd) on the same EVPN fabric (bench/avd/compare.py; not part of
# the test suite). pyavd lives only in the bench's own virtualenv, bench/.venv-avd, with fabricgen
# from this checkout (editable) and pytest (to run tests/test_avd_bench.py's pyavd test there);
# never in .venv or fabricgen's dependencies. Arguments go to compare.py (--json, --repeat N, INTENT).
set -euo pipefail
cd "$(dirname "$0")/.."

PYAVD=pyavd==6.4.0  # the release compare.py and bench/avd/avd_inputs.py were written against
PYTHON=${PYTHON:-python3}
venv=bench/.venv-avd
if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
fi
# reinstall when the pin or the project's dependencies changed since the last install
stamp=$venv/.installed
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$PYAVD" ] || [ pyproject.toml -nt "$stamp" ]; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "$PYAVD" pytest -e .
    echo "$PYAVD" > "$stamp"
fi
"$venv/bin/python" bench/avd/compare.py "$@"
