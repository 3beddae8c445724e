#!/usr/bin/env bash
# Sets everything up and runs the test suite: `scripts/test.sh [PYTEST ARGS]`, e.g.
#   scripts/test.sh                          everything, ruff and mypy first (CI: .ci/run)
#   scripts/test.sh -m "not lab and not slow"  the fast inner loop (make test-fast)
#   scripts/test.sh tests/test_diff.py       one file
# docs/testing.md says what each marker and each test file covers.
#
# Run as root, it installs the Debian packages the tests drive when they are missing (below), and
# for the whole suite the live NetBox tests' NetBox (scripts/netbox.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# What the tests run -> the Debian package that provides it, one a line (a path: must be executable).
REQUIRED=(
    "vtysh frr"                        # vtysh --dryrun on every generated frr.conf; the lab's routing daemons
    "ip iproute2"                      # the lab's namespaces and veth pairs
    "ping iputils-ping"                # the lab's probes
    "traceroute traceroute"            # the lab's path checks
    "nft nftables"                     # the lab's silent link failures
    "lldpd lldpd"                      # LLDP in every lab namespace
    "/usr/sbin/sshd openssh-server"    # the SONiC driver tests start their own sshd on 127.0.0.1
    "dot graphviz"                     # export's diagrams: dot -Tsvg on each generated .dot file
    "zsh zsh"                          # zsh -n on fabricgen --show-completion zsh (fish -n too where fish is installed)
)
# Packages whose service must not start on this machine: the tests start their own daemons.
NO_SERVICE=(
    "openssh-server ssh.service ssh.socket ssh"  # package, systemd units, sysvinit script
    "lldpd lldpd.service lldpd"                  # the host's lldpd would speak LLDP on its ports
)

missing=()
for entry in "${REQUIRED[@]}"; do
    read -r tool package <<<"$entry"
    if [[ "$tool" == /* ]]; then [ -x "$tool" ] && continue; else command -v "$tool" >/dev/null && continue; fi
    missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing the Debian packages the tests drive: ${missing[*]}"
    apt-get update -qq
    quiet=()
    for entry in "${NO_SERVICE[@]}"; do
        read -r package _ <<<"$entry"
        [[ " ${missing[*]} " == *" $package "* ]] && quiet+=("$entry")
    done
    if [ "${#quiet[@]}" -gt 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
        # keep the packages from starting their services during the install
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    for entry in "${quiet[@]}"; do
        # nor at boot: the tests need the binaries only
        read -r -a words <<<"$entry"
        script=${words[-1]}
        units=("${words[@]:1:${#words[@]}-2}")
        if [ -d /run/systemd/system ]; then
            systemctl disable --now "${units[@]}" >/dev/null 2>&1 || true
        else
            update-rc.d "$script" disable >/dev/null 2>&1 || true
        fi
    done
fi

# The live NetBox tests' NetBox (scripts/netbox.sh: root; minutes once per machine, then nothing),
# with the whole suite and for the NetBox test files; elsewhere those tests skip, saying why.
# It runs beside the lint and the tests: on a new machine it takes minutes, mostly downloads and one
# core of migrations, and only the NetBox tests need it; their fixture waits for the status file
# (tests/netbox_server.py wait_for_setup) and shows this log when the install failed. It is the
# suite's longest chain (install, then the NetBox tests), so as root it runs at nice -5, ahead of
# the tests (the labs run at 0, the rest at 10: tests/conftest.py).
netbox_setup=
if [ "$#" = 0 ] || [[ " $* " == *netbox* ]]; then
    netbox_setup=$(mktemp -d /tmp/fabricgen-netbox-setup.XXXXXX)
    export FABRICGEN_NETBOX_SETUP=$netbox_setup
    ( set +e; [ "$(id -u)" = 0 ] && renice -n -5 -p "$BASHPID" >/dev/null; bash scripts/netbox.sh >"$netbox_setup/log" 2>&1; echo $? >"$netbox_setup/status.partial" \
        && mv "$netbox_setup/status.partial" "$netbox_setup/status" ) &
    netbox_pid=$!
fi

# The static checks (pyproject.toml [tool.ruff], [tool.mypy]) with the whole suite, that is without
# pytest arguments (CI: .ci/run; `make lint` runs them alone).
if [ "$#" = 0 ]; then
    bash scripts/lint.sh
fi

set +e
# pytest caches the test modules it rewrites (assertion messages) as bytecode; with
# PYTHONDONTWRITEBYTECODE set, every run and each worker rewrites all of them again (about 5 s of
# CPU per worker). The caches are git-ignored.
unset PYTHONDONTWRITEBYTECODE
# `-n auto`: a worker per test stream (tests/conftest.py LAB_STREAMS: the two lab streams, and NetBox's
# once its modules are in the tree) and one more, on the CI machine's two cores: each stream runs on
# a worker of its own and waits on its daemons much of the time; the last worker, at nice 10 while
# streams run, takes the other tests in that time (pytest_xdist_auto_num_workers says how many).
# FABRICGEN_TEST_WORKERS=0 runs everything in this process.
.venv/bin/python -m pytest -n "${FABRICGEN_TEST_WORKERS:-auto}" --dist loadscope "$@"
status=$?
if [ -n "$netbox_setup" ]; then
    wait "$netbox_pid"  # not left running after the tests (a run that stopped early)
    [ "$(cat "$netbox_setup/status" 2>/dev/null)" = 0 ] || { echo "scripts/netbox.sh failed:" >&2; tail -n 20 "$netbox_setup/log" >&2; }
    rm -rf "$netbox_setup"
fi
set -e
if [ "$status" = 5 ]; then
    echo "pytest collected no tests: that is a failure here" >&2
    exit 1
fi
exit "$status"
