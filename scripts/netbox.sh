#!/usr/bin/env bash
# Installs, when missing, what the live NetBox tests run (tests/netbox_server.py says how they run
# it; docs/testing.md): `bash scripts/netbox.sh`. scripts/test.sh runs it with the whole suite and
# for test files named *netbox*; once everything is there it returns at once.
#
# - Debian's postgresql and redis-server (their services neither started nor enabled: each test
#   session starts its own) and debootstrap;
# - NetBox $NETBOX_VERSION, the official release from PyPI, in a virtualenv of a Debian trixie root
#   (NetBox 4.7 requires Python 3.12 or newer; bookworm has 3.11, trixie 3.13);
# - the migrated database each test session copies (the migrations take minutes of CPU).
#
# Where: $FABRICGEN_NETBOX_HOME, by default /var/cache/fabricgen/netbox, shared by every clone on
# the machine. Root only (debootstrap, chroot, PostgreSQL run as its own user): elsewhere it says
# so and the live tests skip, naming why.
set -euo pipefail
cd "$(dirname "$0")/.."

NETBOX_VERSION=4.7.3  # tests/netbox_server.py VERSION
HOME_DIR=${FABRICGEN_NETBOX_HOME:-/var/cache/fabricgen/netbox}
ROOT=$HOME_DIR/root
STAMP=opt/netbox/installed-$NETBOX_VERSION  # in the root, written last

if [ "$(id -u)" != 0 ]; then
    echo "scripts/netbox.sh: not root, no NetBox installed: the live NetBox tests will skip" >&2
    exit 0
fi

postgres_major() {
    local bin
    bin=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/postgres' 2>/dev/null | sort -V | tail -n 1)
    [ -n "$bin" ] && basename "$(dirname "$(dirname "$bin")")"
}

# Everything there: nothing to do (tests/netbox_server.py template_dir() names the template so)
major=$(postgres_major || true)
if [ -f "$ROOT/$STAMP" ] && [ -n "$major" ] && [ -d "$HOME_DIR/pgdata-netbox$NETBOX_VERSION-pg$major" ] \
    && command -v redis-server >/dev/null; then
    exit 0
fi
started=$SECONDS

packages=()
[ -n "$major" ] || packages+=(postgresql)
command -v redis-server >/dev/null || packages+=(redis-server)
[ -f "$ROOT/$STAMP" ] || command -v debootstrap >/dev/null || packages+=(debootstrap)
if [ "${#packages[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "scripts/netbox.sh: needs ${packages[*]} and has no apt-get: the live NetBox tests will skip" >&2
        exit 0
    fi
    echo "installing the Debian packages the live NetBox tests run: ${packages[*]}"
    apt-get update -qq
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        # keep the packages from starting their services during the install
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${packages[@]}" >/dev/null
    for service in postgresql redis-server; do
        # nor at boot
        if [ -d /run/systemd/system ]; then
            systemctl disable --now "$service" >/dev/null 2>&1 || true
        else
            update-rc.d "$service" disable >/dev/null 2>&1 || true
        fi
    done
    major=$(postgres_major)
fi

if [ ! -f "$ROOT/$STAMP" ]; then
    mkdir -p "$HOME_DIR"
    partial=$ROOT.partial
    rm -rf "$partial"
    # the Debian mirror this machine's apt uses
    mirror=$(grep -rhoE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' \
        /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE '[a-z]+://[^[:space:]]+' | head -n 1 || true)
    if [ -z "$mirror" ]; then
        echo "scripts/netbox.sh: no Debian mirror in /etc/apt/sources.list*: cannot make NetBox's trixie root" >&2
        exit 1
    fi
    echo "making a Debian trixie root for NetBox's Python 3.13 (debootstrap, about a minute)"
    debootstrap --variant=minbase --include=python3,python3-venv trixie "$partial" "$mirror" >"$HOME_DIR/debootstrap.log" 2>&1 \
        || { tail -n 20 "$HOME_DIR/debootstrap.log" >&2; exit 1; }
    # pip in the root reaches the package index as this machine's pip does
    cp /etc/resolv.conf "$partial/etc/resolv.conf"
    [ -f /etc/pip.conf ] && cp /etc/pip.conf "$partial/etc/pip.conf"
    pip_env=(PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1)
    for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT PIP_CERT; do
        [ -n "${!name:-}" ] && pip_env+=("$name=${!name}")
    done
    for bundle in /etc/ssl/certs/ca-certificates.crt ${PIP_CERT:-}; do
        [ -f "$bundle" ] && mkdir -p "$partial$(dirname "$bundle")" && cp "$bundle" "$partial$bundle"
    done
    echo "installing NetBox $NETBOX_VERSION from PyPI in the root (about a minute)"
    # NetBox's pins, as its release declares them, but psycopg's prebuilt binary flavour of the
    # pinned release in place of the c flavour (compiled at install: it would need a compiler and
    # libpq's headers in the root)
    chroot "$partial" /usr/bin/env -i "${pip_env[@]}" /bin/sh -euc "
        python3 -m venv /opt/netbox/venv
        /opt/netbox/venv/bin/pip install -q --no-deps netbox==$NETBOX_VERSION
        /opt/netbox/venv/bin/python -c '
from importlib.metadata import requires
pins = [r for r in requires(\"netbox\") if \"extra ==\" not in r]
assert any(r.startswith(\"psycopg[c,pool]\") for r in pins), pins
print(\"\n\".join(r.replace(\"psycopg[c,pool]\", \"psycopg[binary,pool]\") for r in pins))
' > /tmp/netbox-requirements.txt
        /opt/netbox/venv/bin/pip install -q -r /tmp/netbox-requirements.txt
        rm /tmp/netbox-requirements.txt
    "
    touch "$partial/$STAMP"
    rm -rf "$ROOT"
    mv "$partial" "$ROOT"
fi

echo "migrating NetBox's database once for this machine (a few minutes of CPU)"
FABRICGEN_NETBOX_HOME=$HOME_DIR .venv/bin/python -m tests.netbox_server template >/dev/null
echo "NetBox $NETBOX_VERSION ready for the live tests in $HOME_DIR ($((SECONDS - started)) s)"
