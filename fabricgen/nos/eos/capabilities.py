"""What the EOS adapter can write, asked by the checks before anything renders (no Jinja here):
its PFC watchdog numbers, load-balancing, BGP security and network-setting gaps, and what an EOS
build leaves to the switch (build notes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.catalog.model import FIVE_TUPLE
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


def security_gaps(security: BgpSecurity, management: Management | None) -> list[Gap]:
    """What this adapter cannot write of a network's BGP security or a switch's management
    section; `field` is the path below the network section (bgp_security.tcp_ao) or below
    `management`. The sessions' keys are TCP-MD5 (`neighbor GROUP password`); EOS's TCP-AO
    commands are not sourced."""
    if security.tcp_ao:
        return [Gap("bgp_security.tcp_ao", "fabricgen writes no EOS TCP-AO: its commands are not sourced", "set tcp_ao: false (TCP-MD5 with `password`)")]
    return []


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


def unrendered(management: Management, features: frozenset[str]) -> list[str]:
    """Settings of the section this adapter writes nothing for (the build says so in its notes):
    the management baseline (fabricgen.nos.eos.system) writes none yet, so every part the
    section sets."""
    parts = [name for name in ("users", "access", "tacacs", "radius", "ntp", "syslog", "snmp", "banner", "boot") if getattr(management, name, None)]
    if management.domain_name or management.dns_servers:
        parts.append("domain_name / dns_servers")
    return [f"{', '.join(parts)} (the EOS management baseline is not written yet)"] if parts else []


def feature_needs(management: Management | None) -> list[FeatureNeed]:
    """EOS configs use no release feature beyond the ones every NOS is asked about."""
    return []


def model_notes(pid: str, model: SwitchModel, roles: str) -> list[str]:
    """Nothing: the catalog's EOS names are the switch's own."""
    return []
