"""NX-OS adapter: a DeviceConfig becomes one complete `configs/<device>.cfg`.

The shape follows `show running-config` (features, management and security, QoS, interfaces,
routing). With the intent's `management` section the file is a whole switch: users and AAA, SSH,
the management ACL, NTP, logging, SNMP, the boot image; BGP sessions carry keys, prefix policy
and maximum-prefix whether or not it is there. NX-OS specifics that are names or numbers rather
than syntax are worked out here: system queuing class names, breakout map keywords, watchdog
multipliers (a value at its release's default is left out), syslog severity numbers, the
management ACL's rules.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from fabricgen.basics import version
from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.compiler.qos import PausePolicy
from fabricgen.intent.management import AaaServers, Management
from fabricgen.intent.model import Bfd
from fabricgen.nos.nxos.capabilities import load_sharing, watchdog_values
from fabricgen.render.environment import NEIGHBOR_LINES, environment

QOS_POLICY = "FABRICGEN-QOS-IN"
MGMT_ACL = "MGMT-ACCESS"
MGMT_VRF = "management"  # NX-OS's built-in VRF of mgmt0
MGMT_PORT = "mgmt0"
NETWORK_QOS_POLICY = "FABRICGEN-NETWORK-QOS"


@dataclass(frozen=True)
class QueuingPolicy:
    name: str
    speed_gbps: int
    min_kbytes: int
    max_kbytes: int
    drop_probability: int


def queuing_policy_name(speed_gbps: int) -> str:
    return f"FABRICGEN-QUEUING-{speed_gbps}G"


def _watchdog(config: DeviceConfig) -> dict[str, int]:
    """The watchdog numbers to write: those not at the release's documented default."""
    if config.qos is None or not config.qos.pfc_watchdog.enabled:
        return {}
    values = watchdog_values(config.qos.pfc_watchdog)
    return {name: value for name, (value, _) in values.items() if config.nos_defaults.get(f"pfc-watchdog.{name}") != value}


# `logging server HOST LEVEL`: NX-OS takes the severity as its number (System Management
# Configuration Guide, Configuring System Message Logging: 0 emergencies ... 7 debugging)
SYSLOG_LEVELS = ("emergencies", "alerts", "critical", "errors", "warnings", "notifications", "informational", "debugging")
# What the management plane listens on (IANA): what the management networks may reach
SSH_PORT, HTTPS_PORT, SNMP_PORT = 22, 443, 161
# Where replies to the switch's own requests come from: they pass the mgmt0 ACL too
TACACS_PORT, RADIUS_PORTS, NTP_PORT, DNS_PORT = 49, (1812, 1813), 123, 53
# A UDP reply goes to the port the switch sent from: an ephemeral one, which RFC 6056 (3.2) puts
# in 1024-65535; the well-known ports below it (SNMP's 161 among them) are never a client's
EPHEMERAL_ABOVE = 1023


@dataclass(frozen=True)
class AaaGroup:
    name: str
    protocol: str  # tacacs or radius: `<protocol>-server host`
    keyword: str  # tacacs+ or radius: `aaa group server <keyword>`
    servers: AaaServers


@dataclass(frozen=True)
class AclRule:
    """`permit <protocol> <source>[ eq <source_port>] any[ eq <port> | gt <port_above>][ established]`"""

    protocol: str
    source: str
    port: int | None = None
    source_port: int | None = None
    port_above: int | None = None
    established: bool = False  # TCP with ACK or RST set: part of a connection, never its opening SYN


def aaa_groups(system: Management) -> list[AaaGroup]:
    """The AAA server groups, TACACS+ first: login tries them in this order."""
    groups = []
    if system.tacacs is not None:
        groups.append(AaaGroup("FABRICGEN-TACACS", "tacacs", "tacacs+", system.tacacs))
    if system.radius is not None:
        groups.append(AaaGroup("FABRICGEN-RADIUS", "radius", "radius", system.radius))
    return groups


def management_acl(system: Management) -> list[AclRule]:
    """The rules of the management ACL (on mgmt0 and the vty lines), before its final `deny ip
    any any log`: from each management network SSH, NX-API's HTTPS (when on), SNMP (when on) and
    ping; from each AAA, NTP and DNS server given by address, its replies and nothing else. A
    stateless ACL cannot know a reply, so a reply line admits what no request to the switch can
    be: TACACS+ only `established` TCP (no SYN opens a connection), UDP only to the switch's
    client side (NTP's own port 123, RFC 5905 9.1, or an ephemeral port). A server given by name
    must sit inside a management network. Empty without `access`: no ACL."""
    access = system.access
    if access is None:
        return []
    ports = [SSH_PORT] + ([HTTPS_PORT] if access.nxapi else [])
    rules = []
    for network in access.management_networks:
        rules += [AclRule("tcp", str(network), port) for port in ports]
        if system.snmp is not None:
            rules.append(AclRule("udp", str(network), SNMP_PORT))
        rules.append(AclRule("icmp", str(network)))
    tacacs = _host_sources(system.tacacs.servers if system.tacacs is not None else [])
    radius = _host_sources(system.radius.servers if system.radius is not None else [])
    ntp = _host_sources(system.ntp.servers if system.ntp is not None else [])
    rules += [AclRule("tcp", server, source_port=TACACS_PORT, established=True) for server in tacacs]
    rules += [AclRule("udp", server, source_port=port, port_above=EPHEMERAL_ABOVE) for server in radius for port in RADIUS_PORTS]
    for server in ntp:  # ntpd asks from port 123; a client may ask from an ephemeral port (RFC 9109)
        rules += [AclRule("udp", server, source_port=NTP_PORT, port=NTP_PORT), AclRule("udp", server, source_port=NTP_PORT, port_above=EPHEMERAL_ABOVE)]
    rules += [AclRule("udp", server, source_port=DNS_PORT, port_above=EPHEMERAL_ABOVE) for server in _host_sources(system.dns_servers)]
    return rules


def _host_sources(servers: Sequence[object]) -> list[str]:
    """`A.B.C.D/32` of each server given by address; a name has no address to filter on."""
    return [f"{server}/32" for server in servers if _is_address(server)]


def _is_address(host: object) -> bool:
    try:
        ipaddress.ip_address(str(host))
    except ValueError:
        return False
    return True


def timezone_offset(system: Management) -> str:
    """`clock timezone ABBR HOURS MINUTES`: +05:30 -> "5 30", -03:00 -> "-3 0"."""
    offset = system.timezone.utc_offset
    hours, minutes = int(offset[1:3]), int(offset[4:6])
    return f"{'-' if offset[0] == '-' and (hours or minutes) else ''}{hours} {minutes}"


def render_nxos(config: DeviceConfig) -> dict[str, str]:
    qos = config.qos
    queuing = []
    if qos is not None:
        for speed, ecn in sorted(qos.ecn.items()):
            queuing.append(QueuingPolicy(queuing_policy_name(speed), speed, ecn.min_kbytes, ecn.max_kbytes, ecn.drop_probability))
    env = environment()
    # The interfaces and the BGP sessions, most of a config's lines, are rendered on their own and
    # passed in as text rather than included: Jinja hands every piece an included template writes
    # through the including template's loop (a tenth of the NX-OS render time at 32,768 GPUs).
    interfaces = env.get_template("nxos/interfaces.j2").render(
        c=config,
        ports=_ports(config, {policy.speed_gbps: policy.name for policy in queuing}),
        breakout_maps={b.cage: f"{b.speed_gbps}g-{b.fanout}x" for b in config.breakouts},
        anycast_mac=_dotted_mac(config.evpn.anycast_gateway_mac) if config.evpn else None,
    )
    bgp = env.get_template("nxos/bgp.j2").render(c=config, neighbors=list(map(NEIGHBOR_LINES, config.bgp.neighbors))) if config.bgp else ""
    text = env.get_template("nxos/switch.cfg.j2").render(
        c=config,
        version=version.RELEASE,
        interfaces_text=interfaces,
        bgp_text=bgp,
        qos_text=_qos_text(config, queuing),
        load_sharing=_load_sharing(config),
        system_text=_system_text(config),
        # mgmt0 takes the management ACL whenever the section has one (management.j2)
        mgmt_acl=config.system is not None and config.system.access is not None,
        mgmt_acl_name=MGMT_ACL,
    )
    return {f"configs/{config.hostname}.cfg": text}


class QosSection(NamedTuple):
    """What nxos/qos.j2 may read: the switch's lossless profile, its policies and its MTU, no
    name or port, so the switches set alike share one rendering. A field the template starts to
    read must be added here (reading one that is missing fails the build: StrictUndefined)."""

    qos_policy: str
    network_qos_policy: str
    roce_dscp: tuple[int, ...]
    storage_priority: int | None
    storage_dscp: tuple[int, ...]
    cnp_priority: int
    cnp_dscp: tuple[int, ...]
    lossless_priority: int
    lossless_priorities: tuple[int, ...]
    lossless_bandwidth_percent: int
    storage_bandwidth_percent: int
    default_bandwidth_percent: int
    mtu: int
    pause_policies: tuple[PausePolicy, ...]  # one per (speed, cable bucket), however many ports share it
    queuing: tuple[QueuingPolicy, ...]  # the egress queuing policy of each speed
    other_queues: tuple[int, ...]
    system_queuing: str
    watchdog: bool  # the PFC watchdog on
    # its numbers not at the release's default; None: left out (_watchdog)
    watchdog_interval: int | None
    shutdown_multiplier: int | None
    restore_multiplier: int | None


# Rendered QoS sections, by section: the switches of a role and speed mix share one.
_QOS_TEXTS: dict[QosSection, str] = {}


def _qos_text(config: DeviceConfig, queuing: list[QueuingPolicy]) -> str:
    """nxos/qos.j2 for the switch ("" without QoS)."""
    qos = config.qos
    if qos is None:
        return ""
    watchdog = _watchdog(config)
    section = QosSection(
        qos_policy=QOS_POLICY,
        network_qos_policy=NETWORK_QOS_POLICY,
        roce_dscp=qos.roce_dscp,
        storage_priority=qos.storage_priority,
        storage_dscp=qos.storage_dscp,
        cnp_priority=qos.cnp_priority,
        cnp_dscp=qos.cnp_dscp,
        lossless_priority=qos.lossless_priority,
        lossless_priorities=qos.lossless_priorities,
        lossless_bandwidth_percent=qos.lossless_bandwidth_percent,
        storage_bandwidth_percent=qos.storage_bandwidth_percent,
        default_bandwidth_percent=qos.default_bandwidth_percent,
        mtu=config.mtu,
        pause_policies=tuple(sorted({p.name: p for p in qos.pause_policies.values()}.values(), key=lambda p: (p.speed_gbps, p.cable_length_m))),
        queuing=tuple(queuing),
        other_queues=tuple(_other_queues(config)),
        system_queuing=queuing_policy_name(qos.main_speed_gbps),
        watchdog=qos.pfc_watchdog.enabled,
        watchdog_interval=watchdog.get("poll-interval"),
        shutdown_multiplier=watchdog.get("shutdown-multiplier"),
        restore_multiplier=watchdog.get("auto-restore-multiplier"),
    )
    text = _QOS_TEXTS.get(section)
    if text is None:
        text = _QOS_TEXTS[section] = environment().get_template("nxos/qos.j2").render(q=section)
    return text


# Rendered management sections by the section object: the switches of one role share it
# (device_config), so a fabric of thousands of switches renders a handful. The object is kept
# beside its text, so its id cannot be reused while the entry lives.
_SYSTEM_TEXTS: dict[tuple[int, str | None], tuple[Management, str]] = {}


def _system_text(config: DeviceConfig) -> str:
    """nxos/system.j2 for the switch's management section ("" without one)."""
    system = config.system
    assert config.bgp is None or not config.bgp.tcp_ao, "the checks reject tcp_ao on NX-OS (bgp_security_gaps)"
    if system is None:
        return ""
    port = config.management.port if config.management else None
    key = (id(system), port)
    cached = _SYSTEM_TEXTS.get(key)
    if cached is None or cached[0] is not system:
        text = environment().get_template("nxos/system.j2").render(c=config, **_system(system, port or MGMT_PORT))
        cached = _SYSTEM_TEXTS[key] = (system, text)
    return cached[1]


def _system(system: Management, mgmt_port: str) -> dict:
    """What system.j2 needs besides the intent's section: group names, ACL rules, numbers."""
    groups = aaa_groups(system)
    return {
        "mgmt_vrf": MGMT_VRF,
        "mgmt_port": mgmt_port,
        "mgmt_acl_name": MGMT_ACL,
        "mgmt_acl": management_acl(system),
        "aaa_groups": groups,
        "tacacs_group": next((g.name for g in groups if g.protocol == "tacacs"), None),
        "syslog_level": SYSLOG_LEVELS.index(system.syslog.severity) if system.syslog else None,
        "timezone_offset": timezone_offset(system),
    }


def _dotted_mac(mac: str) -> str:
    """02:00:00:00:00:aa -> 0200.0000.00aa, the form NX-OS writes MAC addresses in."""
    digits = mac.replace(":", "").lower()
    return ".".join(digits[i : i + 4] for i in range(0, 12, 4))


def _load_sharing(config: DeviceConfig) -> str | None:
    if config.load_balancing is None:
        return None
    keywords = load_sharing(config.load_balancing.hash_fields)
    assert keywords is not None, "the checks reject hash fields NX-OS cannot express"
    return keywords


def _other_queues(config: DeviceConfig) -> list[int]:
    """Queues 1-7 that carry no class of ours (queue 0 is q-default); they get no guaranteed share."""
    if config.qos is None:
        return []
    used = {*config.qos.lossless_priorities, config.qos.cnp_priority}
    return [q for q in range(1, 8) if q not in used]


class PortSettings(NamedTuple):
    """What nxos/port_settings.j2 may read of an interface: its QoS, PFC and BFD, no name,
    description or address, so the ports set alike share one rendering. A field the template
    starts to read must be added here (reading one that is missing fails the build: StrictUndefined)."""

    output_queuing: str | None  # the egress queuing policy of a port not at the system-wide speed
    qos_policy: str | None  # the classification policy of a lossless port; None: not lossless
    input_queuing: str | None  # a lossless port's ingress pause thresholds (qos.pause_policies)
    watchdog: bool  # the PFC watchdog on a lossless port
    bfd: Bfd | None  # the switch's BFD timers on a port that runs BFD


class PortLines(NamedTuple):
    """What nxos/interfaces.j2 writes of one interface, in the order its loop unpacks them: a
    tuple is unpacked in one step, where each `i.name` in a template is a call (700,000
    interfaces at 131,072 GPUs)."""

    name: str
    description: str
    access_vlan: int | None
    mtu: int
    address: str | None
    settings: str  # its nxos/port_settings.j2 text


# An InterfaceConfig's PortLines fields but its settings, in one call (C): the row is this tuple plus
# the settings text, a plain tuple, as PortLines(...) costs a Python call per interface.
_port_lines = attrgetter(*PortLines._fields[:-1])

# Rendered port settings, by settings: a fabric's hundreds of thousands of ports have a handful.
_PORT_TEXTS: dict[PortSettings, str] = {}


def _ports(config: DeviceConfig, queuing_by_speed: dict[int, str]) -> list[tuple]:
    """Each interface's lines (PortLines' fields), with its nxos/port_settings.j2 text."""
    qos = config.qos
    main_speed = qos.main_speed_gbps if qos else None
    pause = qos.pause_policies if qos else {}
    watchdog = qos is not None and qos.pfc_watchdog.enabled
    template = environment().get_template("nxos/port_settings.j2")
    texts: dict[tuple, str] = {}  # this switch's settings by what tells its ports apart
    ports = []
    for i in config.interfaces:
        policy = pause.get(i.name)
        key = (i.speed_gbps, i.lossless, policy.name if policy is not None else None, i.bfd)
        text = texts.get(key)
        if text is None:
            lossless = i.lossless
            settings = PortSettings(
                output_queuing=queuing_by_speed[i.speed_gbps] if qos and i.speed_gbps != main_speed else None,
                qos_policy=QOS_POLICY if lossless else None,
                input_queuing=policy.name if lossless and policy is not None else None,
                watchdog=lossless and watchdog,
                bfd=config.bfd if i.bfd else None,
            )
            text = _PORT_TEXTS.get(settings)
            if text is None:
                text = _PORT_TEXTS[settings] = template.render(p=settings)
            texts[key] = text
        ports.append(_port_lines(i) + (text,))
    return ports
