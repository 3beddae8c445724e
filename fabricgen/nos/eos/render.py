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

from fabricgen.basics import version
from fabricgen.compiler.device_config import DeviceConfig, QosConfig
from fabricgen.intent.model import Bfd
from fabricgen.nos.eos.capabilities import CONTROL_QUEUE, DSCP_PER_LINE, INTERNAL_VLANS, MAX_MTU
from fabricgen.nos.eos.catalog import platform_of
from fabricgen.nos.eos.system import system_text
from fabricgen.render.environment import NEIGHBOR_LINES, environment

_name = attrgetter("name")


def qos_profile_name(speed_gbps: int) -> str:
    return f"FABRICGEN-ROCE-{speed_gbps}G"


def render_eos(config: DeviceConfig) -> dict[str, str]:
    env = environment()
    qos = config.qos
    tx_queue = platform_of(config.hardware).tx_queue
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
