#!/usr/bin/env bash
# Sets everything up and runs the whole test suite.
# Installs Debian's frr (for `vtysh --dryrun` on every generated frr.conf) when missing and run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

if ! command -v vtysh >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's frr for the FRR syntax checks"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq frr >/dev/null
fi

set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "pytest collected no tests: that is a failure here" >&2
    exit 1
fi
exit "$status"
