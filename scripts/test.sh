#!/usr/bin/env bash
# Sets everything up and runs the whole test suite.
# Installs, when missing and run as root, the Debian packages the tests drive: frr (`vtysh --dryrun`
# on every generated frr.conf, and the lab's routing daemons), iproute2, iputils-ping, traceroute and
# nftables (the lab's probes and silent link failures).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

missing=()
for pair in vtysh:frr ip:iproute2 ping:iputils-ping traceroute:traceroute nft:nftables; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair##*:}")
done
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian packages for the FRR checks and the lab: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
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
