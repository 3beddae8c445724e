"""EOS adapter: a DeviceConfig becomes one `configs/<device>.cfg` of Arista EOS CLI.

The blocks follow the order `show running-config` lists them in (as Arista AVD's
eos-intended-config.j2 orders its templates): internal VLANs, the routing model, hostname, the
management baseline (fabricgen.nos.eos.system), QoS profiles, VLANs, VRFs, interfaces, the
anycast gateway MAC, ip routing, prefix-lists, static routes, QoS maps, the PFC watchdog,
route-maps, router bgp. Vendor syntax lives in the templates (templates/, each block's source in
docs/reference/eos.md); names and numbers are worked out here: QoS profile names, the DSCP map,
transmit queue settings, watchdog seconds, breakout speed keywords, route distinguishers, the
internal VLAN range, EOS's interface MTU.

Lossless QoS is one `qos profile` per port speed (trust DSCP, PFC on the lossless priorities,
each queue's share, ECN on the lossless queues with the switch model's thresholds for that
speed), applied to every lossless port with `service-profile`; the DSCP map and the PFC
watchdog's timers are global. Lossless headroom is left to the platform's defaults: fabricgen
has no Arista source for EOS's per-port headroom commands (a build note says so).
"""

from __future__ import annotations

from itertools import pairwise
from operator import attrgetter
from typing import NamedTuple

from fabricgen import version
from fabricgen.catalog.model import FIVE_TUPLE
from fabricgen.device_config import DeviceConfig, QosConfig
from fabricgen.intent.management import BgpSecurity, Management
from fabricgen.intent.model import Backend, Bfd, HostFabric, LoadBalancing, PfcWatchdog
from fabricgen.nos.eos.system import system_text
from fabricgen.render.capability import Gap
from fabricgen.render.environment import NEIGHBOR_LINES, environment

# EOS's largest `mtu` on an Ethernet or VLAN interface (Arista AVD writes 9214 as the jumbo MTU of
# its fabric links); an intent's 9215 or 9216 is written as 9214, and the build notes say so
MAX_MTU = 9214
VXLAN_UDP_PORT = 4789  # IANA's VXLAN port (RFC 7348), EOS's default, written as AVD does
BFD_MULTIPLIER_MIN = 3  # `bfd interval ... multiplier <3-50>` (AVD's ethernet_interfaces bfd schema: min 3)
CONTROL_QUEUE = 7  # EOS keeps traffic class and transmit queue 7 for control traffic, strict priority
DSCP_PER_LINE = 8  # `qos map dscp ... to traffic-class N`: a few values a line, as AVD's examples write them
INTERNAL_VLANS = 4094  # the highest VLAN EOS may take for a routed port (`vlan internal order`)


_name = attrgetter("name")


def qos_profile_name(speed_gbps: int) -> str:
    return f"FABRICGEN-ROCE-{speed_gbps}G"


def watchdog_values(watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
    """The PFC watchdog numbers this adapter writes, by their nos.yaml parameter name (in
    milliseconds; EOS takes seconds): the value and the intent field (under qos.pfc_watchdog) it
    comes from. Detection is EOS's `timeout`, restoration its `recovery-time`."""
    return {
        "timeout": (watchdog.detection_ms, "detection_ms"),
        "polling-interval": (watchdog.poll_interval_ms, "poll_interval_ms"),
        "recovery-time": (watchdog.restoration_ms, "restoration_ms"),
    }


def load_balancing_gaps(lb: LoadBalancing) -> list[Gap]:
    """What this adapter cannot write of `lb`: ECMP on the platform's default hash only (no EOS
    DLB or hash-field commands are sourced: nos.yaml dlb, ipv6-flow-label-hash)."""
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


def render_eos(config: DeviceConfig) -> dict[str, str]:
    env = environment()
    qos = config.qos
    tx_queue = config.hardware.eos.tx_queue
    profiles = _profile_names(qos) if qos is not None else {}
    mtu = min(config.mtu, MAX_MTU)
    # The interfaces and the BGP sessions, most of a config's lines, are rendered on their own
    # and passed in as text (as for NX-OS: an included template's output passes through the
    # including template's loop)
    interfaces = env.get_template("eos/interfaces.j2").render(ports=_ports(config, profiles, mtu))
    # EOS lists VRFs by name wherever it lists them (vrf instance, ip routing, Vxlan1, router bgp)
    tenant_vrfs = sorted(config.evpn.vrfs, key=_name) if config.evpn is not None else []
    bgp = (
        env.get_template("eos/bgp.j2").render(c=config, neighbors=list(map(NEIGHBOR_LINES, config.bgp.neighbors)), tenant_vrfs=tenant_vrfs, **_bgp(config))
        if config.bgp
        else ""
    )
    text = env.get_template("eos/switch.cfg.j2").render(
        c=config,
        version=version.RELEASE,
        mtu=mtu,
        internal_vlans=_internal_vlans(config),
        system_text=system_text(config),
        qos_profiles_text=_qos_profiles_text(qos, profiles, tx_queue) if qos is not None else "",
        qos_text=_qos_text(config) if qos is not None else "",
        vlans=_vlans(config),
        vrfs=_vrfs(config),
        tenant_vrfs=tenant_vrfs,
        interfaces_text=interfaces,
        bgp_text=bgp,
    )
    return {f"configs/{config.hostname}.cfg": text}


class TxQueue(NamedTuple):
    """One transmit queue of a QoS profile: strict priority, or a round-robin share with ECN."""

    queue: int
    strict: bool
    bandwidth_percent: int | None  # the round-robin weight (`bandwidth percent`)
    ecn: tuple[int, int, int] | None  # (min KB, max KB, max-mark-probability) on a lossless queue


class QosProfile(NamedTuple):
    """What eos/qos_profiles.j2 writes of one port speed's profile."""

    name: str
    queues: tuple[TxQueue, ...]


class QosProfiles(NamedTuple):
    """What eos/qos_profiles.j2 may read: no switch name, so the switches set alike share one
    rendering (a field the template starts to read must be added here)."""

    tx_queue: str  # uc-tx-queue or tx-queue (catalog eos.tx_queue)
    profiles: tuple[QosProfile, ...]
    lossless_priorities: tuple[int, ...]
    watchdog: bool


class QosSection(NamedTuple):
    """What eos/qos.j2 may read: the global DSCP map and the PFC watchdog's timers."""

    dscp_map: tuple[tuple[int, tuple[str, ...]], ...]  # (traffic class, lines of DSCP values)
    watchdog: bool
    timeout: str | None  # seconds, as EOS writes them
    polling_interval: str | None
    recovery_time: str | None
    drop: bool  # `priority-flow-control pause watchdog action drop`


# Rendered QoS blocks, by section: the switches of a role and speed mix share one.
_PROFILE_TEXTS: dict[QosProfiles, str] = {}
_QOS_TEXTS: dict[QosSection, str] = {}


def _profile_names(qos: QosConfig) -> dict[int, str]:
    return {speed: qos_profile_name(speed) for speed in sorted(qos.ecn)}


def _qos_profiles_text(qos: QosConfig, names: dict[int, str], tx_queue: str) -> str:
    """eos/qos_profiles.j2: a profile per port speed. Queue 0 takes what the intent gives the
    unclassified rest, each lossless queue its share and ECN at that speed, the CNP queue strict
    priority (queue 7 is EOS's strict control queue already and is not configured)."""
    lossless = {qos.lossless_priority: qos.lossless_bandwidth_percent}
    if qos.storage_priority is not None:
        lossless[qos.storage_priority] = qos.storage_bandwidth_percent
    profiles = []
    for speed, name in names.items():
        ecn = qos.ecn[speed]
        queues = [TxQueue(0, False, qos.default_bandwidth_percent, None)]
        queues += [TxQueue(q, False, share, (ecn.min_kbytes, ecn.max_kbytes, ecn.drop_probability)) for q, share in lossless.items()]
        if qos.cnp_priority != CONTROL_QUEUE:
            queues.append(TxQueue(qos.cnp_priority, True, None, None))
        profiles.append(QosProfile(name, tuple(sorted(queues))))
    section = QosProfiles(tx_queue, tuple(profiles), qos.lossless_priorities, qos.pfc_watchdog.enabled)
    text = _PROFILE_TEXTS.get(section)
    if text is None:
        text = _PROFILE_TEXTS[section] = environment().get_template("eos/qos_profiles.j2").render(q=section)
    return text


def _qos_text(config: DeviceConfig) -> str:
    """eos/qos.j2: every DSCP to its traffic class (those the profile does not name to 0, where
    fabricgen's other NOSes put them; EOS's own default map sends DSCP 0-7 to 1), and the PFC
    watchdog's timers."""
    qos = config.qos
    assert qos is not None
    classes: dict[int, list[int]] = {}
    named = qos.dscp_to_priority
    for dscp in range(64):
        classes.setdefault(named.get(dscp, 0), []).append(dscp)
    dscp_map = tuple(
        (tc, tuple(" ".join(map(str, values[i : i + DSCP_PER_LINE])) for i in range(0, len(values), DSCP_PER_LINE))) for tc, values in sorted(classes.items())
    )
    watchdog = qos.pfc_watchdog
    on = watchdog.enabled
    section = QosSection(
        dscp_map=dscp_map,
        watchdog=on,
        timeout=_seconds(watchdog.detection_ms, 2) if on else None,
        polling_interval=_seconds(watchdog.poll_interval_ms, 3) if on else None,
        recovery_time=_seconds(watchdog.restoration_ms, 2) if on else None,
        drop=on and watchdog.action == "drop",
    )
    text = _QOS_TEXTS.get(section)
    if text is None:
        text = _QOS_TEXTS[section] = environment().get_template("eos/qos.j2").render(q=section)
    return text


def _seconds(ms: int, decimals: int) -> str:
    """Milliseconds as the seconds EOS takes, with at most `decimals` decimals (timeout and
    recovery-time take 2, polling-interval 3): rounded up to what EOS can say, never shorter."""
    step = 10 ** (3 - decimals)
    ms = -(-ms // step) * step
    return f"{ms // 1000}.{ms % 1000:03d}".rstrip("0").rstrip(".")


def _vlans(config: DeviceConfig) -> list[tuple[int, str]]:
    """(VLAN, name) of every VLAN the switch defines: its server VLANs and EVPN segments."""
    found = {vlan.id: vlan.name for vlan in config.vlans}
    if config.evpn is not None:
        found.update((s.vlan, s.name) for s in config.evpn.segments)
    return sorted(found.items())


def _vrfs(config: DeviceConfig) -> list[str]:
    """The VRF instances: the management VRF and every tenant VRF, sorted by name."""
    names = {config.management.vrf} if config.management is not None else set()
    if config.evpn is not None:
        names.update(v.name for v in config.evpn.vrfs)
    return sorted(names)


def _internal_vlans(config: DeviceConfig) -> tuple[int, int] | None:
    """The VLANs EOS may take for its routed ports (`vlan internal order ascending range A B`):
    by default from 1006 up, where the segments' VLANs (1000 + n) would collide. The widest run
    of VLANs the switch does not define; None when it defines none (EOS's default stays)."""
    used = sorted({vlan for vlan, _ in _vlans(config)})
    if not used:
        return None
    bounds = [1, *used, INTERNAL_VLANS + 1]
    low, high = max(((a + 1, b - 1) for a, b in pairwise(bounds)), key=lambda run: (run[1] - run[0], run[0]))
    return (max(low, 2), high)


def _bgp(config: DeviceConfig) -> dict:
    """What eos/bgp.j2 needs besides the device config: route distinguishers and the session
    limit (`maximum-routes`, with `idle-restart-timer` in seconds for the restart)."""
    bgp = config.bgp
    evpn = config.evpn
    assert bgp is not None
    return {
        # a VRF's RD: the router-id and its L3 VNI's VLAN, which fits the 2-byte field a VNI may not
        "vrf_rds": {v.name: f"{bgp.router_id}:{v.l3_vlan}" for v in evpn.vrfs} if evpn is not None else {},
        "idle_restart_s": bgp.maximum_prefix_restart_min * 60 if bgp.maximum_prefix_restart_min else None,
    }


class PortLines(NamedTuple):
    """What eos/interfaces.j2 writes of one interface, in the order its loop unpacks them (a tuple
    is unpacked in one step)."""

    name: str
    description: str
    mtu: int | None  # routed ports only: a switchport carries jumbo frames without it
    speed: str | None  # a broken-out port's `speed` keyword (400g-4)
    access_vlan: int | None
    address: str | None
    settings: str  # its eos/port_settings.j2 text


class PortSettings(NamedTuple):
    """What eos/port_settings.j2 may read of an interface: BFD, its QoS profile, edge port; no
    name or address, so the ports set alike share one rendering."""

    bfd: Bfd | None
    profile: str | None
    edge: bool  # a server port in a VLAN: `spanning-tree portfast`


_PORT_TEXTS: dict[PortSettings, str] = {}


def _speeds(config: DeviceConfig) -> dict[int, str]:
    """A broken-out cage's `speed` keyword for each of its ports: Gb/s and lanes (400g-4)."""
    speeds = {}
    for b in config.breakouts:
        group = config.hardware.group_of(b.cage)
        assert group is not None
        speeds[b.cage] = f"{b.speed_gbps}g-{group.lanes // b.fanout}"
    return speeds


def _ports(config: DeviceConfig, profiles: dict[int, str], mtu: int) -> list[tuple]:
    """Each interface's lines (PortLines' fields), with its eos/port_settings.j2 text."""
    template = environment().get_template("eos/port_settings.j2")
    speeds = _speeds(config)
    texts: dict[tuple, str] = {}  # this switch's settings by what tells its ports apart
    ports = []
    for i in config.interfaces:
        key = (i.speed_gbps, i.lossless, i.bfd, i.access_vlan is not None)
        text = texts.get(key)
        if text is None:
            settings = PortSettings(
                bfd=config.bfd if i.bfd else None,
                profile=profiles.get(i.speed_gbps) if i.lossless else None,
                edge=i.access_vlan is not None,
            )
            text = _PORT_TEXTS.get(settings)
            if text is None:
                text = _PORT_TEXTS[settings] = template.render(p=settings)
            texts[key] = text
        routed = i.access_vlan is None
        ports.append((i.name, i.description, min(i.mtu, mtu) if routed else None, speeds.get(i.cage) if i.sub else None, i.access_vlan, i.address, text))
    return ports
