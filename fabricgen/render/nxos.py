"""NX-OS adapter: a DeviceConfig becomes one complete `configs/<device>.cfg`.

The shape follows `show running-config` (features, QoS, interfaces, routing). It holds the whole
fabric configuration but not yet the switch's management (mgmt0, its VRF, users, boot image), so
it is merged, not used as a configuration-replace file, until the management network is modelled.
NX-OS specifics that are names rather than syntax are worked out here: system queuing class
names, breakout map keywords, watchdog multipliers.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen import __version__
from fabricgen.device_config import DeviceConfig
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
    )
    return {f"configs/{config.hostname}.cfg": text}


def _other_queues(config: DeviceConfig) -> list[int]:
    """Queues 1-7 that carry no class of ours (queue 0 is q-default); they get no guaranteed share."""
    if config.qos is None:
        return []
    used = {*config.qos.lossless_priorities, config.qos.cnp_priority}
    return [q for q in range(1, 8) if q not in used]
