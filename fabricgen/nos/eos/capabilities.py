"""What the EOS adapter can write, asked by the checks before anything renders (no Jinja here):
its PFC watchdog numbers, load-balancing, BGP security and network-setting gaps, and what an EOS
build leaves to the switch (build notes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.nos.interface import FeatureNeed, Gap

# annotations only: the registry imports this package while the intent's models are being defined
if TYPE_CHECKING:
    from fabricgen.catalog.model import SwitchModel
    from fabricgen.intent.management import BgpSecurity, Management
    from fabricgen.intent.model import Backend, HostFabric, LoadBalancing, PfcWatchdog

# EOS's largest `mtu` on an Ethernet or VLAN interface (Arista AVD writes 9214 as the jumbo MTU of
# its fabric links); an intent's 9215 or 9216 is written as 9214, and the build notes say so
MAX_MTU = 9214
VXLAN_UDP_PORT = 4789  # IANA's VXLAN port (RFC 7348), EOS's default, written as AVD does
BFD_MULTIPLIER_MIN = 3  # `bfd interval ... multiplier <3-50>` (AVD's ethernet_interfaces bfd schema: min 3)
CONTROL_QUEUE = 7  # EOS keeps traffic class and transmit queue 7 for control traffic, strict priority
DSCP_PER_LINE = 8  # `qos map dscp ... to traffic-class N`: a few values a line, as AVD's examples write them
INTERNAL_VLANS = 4094  # the highest VLAN EOS may take for a routed port (`vlan internal order`)


def watchdog_values(watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
    """The PFC watchdog numbers this adapter writes, by their releases.yaml parameter name (in
    milliseconds; EOS takes seconds): the value and the intent field (under qos.pfc_watchdog) it
    comes from. Detection is EOS's `timeout`, restoration its `recovery-time`."""
    return {
        "timeout": (watchdog.detection_ms, "detection_ms"),
        "polling-interval": (watchdog.poll_interval_ms, "poll_interval_ms"),
        "recovery-time": (watchdog.restoration_ms, "restoration_ms"),
    }


def load_balancing_gaps(lb: LoadBalancing) -> list[Gap]:
    """What this adapter cannot write of `lb`: ECMP on the platform's default hash only (no EOS
    DLB or hash-field commands are sourced: releases.yaml dlb, ipv6-flow-label-hash)."""
    from fabricgen.catalog.model import FIVE_TUPLE  # here, not at the top: the catalog's models load this package while they are defined

    gaps = []
    if lb.mode != "ecmp":
        gaps.append(
            Gap("mode", f"fabricgen writes no EOS config for {lb.mode} (EOS's dynamic load balancing commands are not sourced)", "use mode: ecmp on EOS")
        )
    if set(lb.hash_fields) != set(FIVE_TUPLE):
        gaps.append(
            Gap(
                "hash_fields",
                "fabricgen writes no EOS hash-field config: the platform's default ECMP hash of the 5-tuple stays",
                f"use hash_fields: [{', '.join(FIVE_TUPLE)}] on EOS",
            )
        )
    return gaps


def settings_gaps(spec: Backend | HostFabric) -> list[Gap]:
    """What this adapter cannot write of a routed network's own settings; `field` is the path
    below the network section: a BFD multiplier under EOS's 3."""
    if spec.bfd.enabled and spec.bfd.multiplier < BFD_MULTIPLIER_MIN:
        return [
            Gap(
                "bfd.multiplier",
                f"EOS takes a BFD multiplier of {BFD_MULTIPLIER_MIN}-50, not {spec.bfd.multiplier}",
                f"set bfd.multiplier to {BFD_MULTIPLIER_MIN} or more",
            )
        ]
    return []


def notes(spec: Backend | HostFabric) -> list[str]:
    """What an EOS build of this network leaves to the switch or writes otherwise than asked
    (the build's notes, once per network)."""
    found = []
    if spec.mtu > MAX_MTU:
        found.append(f"interface MTU {spec.mtu} is written as {MAX_MTU}, EOS's largest (the intent's mtu)")
    if spec.qos.enabled:
        found.append("lossless headroom and pause thresholds: EOS's platform defaults (fabricgen writes no EOS buffer config)")
        if spec.qos.pfc_watchdog.enabled and spec.qos.pfc_watchdog.action != "drop":
            found.append(f"PFC watchdog action {spec.qos.pfc_watchdog.action}: not written, EOS's default action stays (only drop is written)")
    if spec.routing == "vxlan-evpn":
        found.append(
            "maximum-prefix: not enforced on EVPN switches (EOS's `maximum-routes` counts a session's EVPN routes too, "
            "which fabricgen does not size), written as maximum-routes 0"
        )
    return found


def feature_needs(management: Management | None) -> list[FeatureNeed]:
    """EOS configs use no release feature beyond the ones every NOS is asked about."""
    return []


def model_notes(pid: str, model: SwitchModel, roles: str) -> list[str]:
    """Nothing: the catalog's EOS names are the switch's own."""
    return []


BANNER_END = "EOF"  # `banner login` reads lines up to one that is EOF alone
BANNER = False  # written once the line-shape check of docs/reference/eos.md can take free banner lines (system.py)


def security_gaps(security: BgpSecurity, management: Management | None) -> list[Gap]:
    """What this adapter cannot write of a network's `bgp_security` or of a management section;
    `field` is the path below the network section.

    EOS has TCP-AO for BGP (TOI "TCP Authentication Option for BGP", EOS 4.28.2F: a shared-secret
    profile under `management security` and `neighbor ... password shared-secret profile NAME
    algorithm ...`), but fabricgen writes no shared-secret profile yet. A banner line that is
    `EOF` alone would end `banner login` early; one that starts with `!` is a comment to NAPALM's
    EOS driver, which drops it from what it sends (napalm/eos/eos.py `_load_config`)."""
    gaps = []
    if security.tcp_ao:
        gaps.append(
            Gap(
                "bgp_security.tcp_ao",
                "fabricgen writes no EOS TCP-AO yet (a management security shared-secret profile per key)",
                "set tcp_ao: false (TCP-MD5 with `password`)",
            )
        )
    if management is not None:
        bad = [line for line in management.banner if line.strip() == BANNER_END or line.lstrip().startswith("!")]
        if bad:
            gaps.append(
                Gap(
                    "management.banner",
                    f"EOS cannot take a banner line that is {BANNER_END!r} alone (it ends the banner) or starts with '!' (a comment to the EOS driver)",
                    "reword those banner lines",
                )
            )
    return gaps


def unrendered(management: Management, features: frozenset[str] = frozenset()) -> list[str]:
    """Settings of the section this adapter writes nothing for (the build says so in its notes)."""
    missing = []
    if management.banner and not BANNER:
        missing.append("banner (the EOS adapter writes no `banner login` yet)")
    if management.access is not None and "login_attempts" in management.access.model_fields_set:
        missing.append("access.login_attempts (EOS has a lockout policy per user, not a number of attempts per session)")
    if management.password_policy.strength_check and "password_policy" in management.model_fields_set:
        missing.append("password_policy.strength_check (EOS has password policies of per-class minimums, not one strength check)")
    if "copp_profile" in management.model_fields_set:
        missing.append("copp_profile (an NX-OS CoPP profile; EOS keeps its own copp-system-policy)")
    return missing
