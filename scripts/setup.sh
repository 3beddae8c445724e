#!/usr/bin/env bash
# Creates .venv and installs fabricgen into it (editable, with every extra and the test dependencies).
# Works on a fresh Debian with only python3: installs python3-venv when missing and run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "fabricgen needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    if ! "$PYTHON" -m venv .venv 2>/dev/null; then
        rm -rf .venv
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "installing python3-venv (Debian splits venv out of python3)"
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
            "$PYTHON" -m venv .venv
        else
            echo "cannot create a virtualenv: install python3-venv (apt-get install python3-venv) and retry" >&2
            exit 1
        fi
    fi
fi

# Reinstall when the project's dependencies changed since the last setup; refresh the version
# (hatch-vcs writes fabricgen/_version.py at install time only) when the commit or the last tag
# did, so manifest.json and --version name the commit that is checked out.
stamp=.venv/.fabricgen-installed
described=$(git describe --tags --long --always --match '*[0-9]*' 2>/dev/null || true)
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
    echo "$described" > "$stamp"
elif [ "$(cat "$stamp")" != "$described" ] || [ ! -f fabricgen/_version.py ]; then
    .venv/bin/python -m pip install --quiet --no-deps -e .
    echo "$described" > "$stamp"
fi
