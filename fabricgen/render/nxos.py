"""NX-OS adapter: a DeviceConfig becomes one complete `configs/<device>.cfg`.

The shape follows `show running-config` (features, QoS, interfaces, routing). It holds the whole
fabric configuration but not yet the switch's management (mgmt0, its VRF, users, boot image), so
it is merged, not used as a configuration-replace file, until the management network is modelled.
NX-OS specifics that are names rather than syntax are worked out here: system queuing class
names, breakout map keywords, watchdog multipliers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabricgen import __version__
from fabricgen.device_config import DeviceConfig
from fabricgen.intent.model import LoadBalancing
from fabricgen.render.capability import Gap
from fabricgen.render.environment import environment

QOS_POLICY = "FABRICGEN-QOS-IN"
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


# `ip load-sharing address` hashes one of these field sets, not a free choice of fields (Cisco
# NX-OS interfaces guide, "Configuring ECMP Load Balancing"). NX-OS has no keyword for the
# protocol on its own; fabricgen pairs it with the L4 ports, which are only read per protocol.
LOAD_SHARING: dict[tuple[str, ...], str] = {
    ("src-ip", "dst-ip", "protocol", "src-port", "dst-port"): "source-destination port source-destination",
    ("src-ip", "dst-ip"): "source-destination",
    ("dst-ip", "protocol", "dst-port"): "destination port destination",
    ("src-ip", "dst-ip", "ipv6-flow-label"): "source-destination ipv6-flowlabel",
}
# `hardware profile dlb` modes (NX-OS 10.5(1)F and later); ecmp is plain `ip load-sharing`
DLB_MODES = ("flowlet", "per-packet")


def load_sharing(fields: Sequence[str]) -> str | None:
    """The `ip load-sharing address` keywords hashing exactly `fields`; None if NX-OS has none."""
    wanted = frozenset(fields)
    return next((keywords for form, keywords in LOAD_SHARING.items() if frozenset(form) == wanted), None)


def load_balancing_gaps(lb: LoadBalancing) -> list[Gap]:
    """What this adapter cannot write of `lb`: every mode it can, not every field set."""
    gaps = []
    if lb.mode not in ("ecmp", *DLB_MODES):
        gaps.append(Gap("mode", f"fabricgen writes no NX-OS config for {lb.mode}", f"use one of: ecmp, {', '.join(DLB_MODES)}"))
    if load_sharing(lb.hash_fields) is None:
        forms = "; ".join(f"[{', '.join(form)}]" for form in LOAD_SHARING)
        gaps.append(
            Gap(
                "hash_fields",
                f"NX-OS cannot hash on exactly {', '.join(lb.hash_fields)}: `ip load-sharing` offers fixed field sets",
                f"use one of the sets NX-OS has: {forms}",
            )
        )
    return gaps


def render_nxos(config: DeviceConfig) -> dict[str, str]:
    qos = config.qos
    queuing = []
    if qos is not None:
        for speed, ecn in sorted(qos.ecn.items()):
            queuing.append(QueuingPolicy(queuing_policy_name(speed), speed, ecn.min_kbytes, ecn.max_kbytes, ecn.drop_probability))
        watchdog = qos.pfc_watchdog
        multipliers = {
            "shutdown": watchdog.detection_ms // watchdog.poll_interval_ms,
            "restore": watchdog.restoration_ms // watchdog.poll_interval_ms,
        }
    else:
        multipliers = {}
    text = environment().get_template("nxos/switch.cfg.j2").render(
        c=config,
        version=__version__,
        qos_policy=QOS_POLICY,
        network_qos_policy=NETWORK_QOS_POLICY,
        queuing=queuing,
        queuing_by_speed={policy.speed_gbps: policy.name for policy in queuing},
        system_queuing=queuing_policy_name(qos.main_speed_gbps) if qos else None,
        watchdog_multipliers=multipliers,
        other_queues=_other_queues(config),
        breakout_maps={b.cage: f"{b.speed_gbps}g-{b.fanout}x" for b in config.breakouts},
        anycast_mac=_dotted_mac(config.evpn.anycast_gateway_mac) if config.evpn else None,
        load_sharing=_load_sharing(config),
    )
    return {f"configs/{config.hostname}.cfg": text}


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
