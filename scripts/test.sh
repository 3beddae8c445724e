#!/usr/bin/env bash
# Sets everything up and runs the whole test suite.
# Installs, when missing and run as root, the Debian packages the tests drive: frr (`vtysh --dryrun`
# on every generated frr.conf, and the lab's routing daemons), iproute2, iputils-ping, traceroute and
# nftables (the lab's probes and silent link failures), lldpd (LLDP in every lab namespace), and openssh-server (the SONiC driver tests
# start their own sshd on 127.0.0.1; the package's own ssh service is kept off).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

missing=()
for pair in vtysh:frr ip:iproute2 ping:iputils-ping traceroute:traceroute nft:nftables lldpd:lldpd dot:graphviz; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair##*:}")
done
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian packages for the FRR checks, the lab and the SONiC driver tests: ${missing[*]}"
    apt-get update -qq
    if [[ " ${missing[*]} " == *" openssh-server "* || " ${missing[*]} " == *" lldpd "* ]] && [ ! -e /usr/sbin/policy-rc.d ]; then
        # keep the packages from starting the machine's sshd or lldpd during the install
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    if [[ " ${missing[*]} " == *" openssh-server "* ]]; then
        # and from starting it at boot: the tests need the binary only
        if [ -d /run/systemd/system ]; then
            systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
        else
            update-rc.d ssh disable >/dev/null 2>&1 || true
        fi
    fi
    if [[ " ${missing[*]} " == *" lldpd "* ]]; then
        # the lab starts its own lldpd in each namespace; the host's would speak LLDP on its ports
        if [ -d /run/systemd/system ]; then
            systemctl disable --now lldpd.service >/dev/null 2>&1 || true
        else
            update-rc.d lldpd disable >/dev/null 2>&1 || true
        fi
    fi
fi

set +e
# Two workers (the CI machine's two cores); the lab modules run on one of them, one after another
# (tests/conftest.py). FABRICGEN_TEST_WORKERS=0 runs everything in this process.
.venv/bin/python -m pytest -n "${FABRICGEN_TEST_WORKERS:-2}" --dist loadscope "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "pytest collected no tests: that is a failure here" >&2
    exit 1
fi
exit "$status"
