"""QoS design rules: each switch's effective profile, and lossless headroom per port.

`effective_qos(spec, switch)` is the fabric's QoS profile with that switch's override applied.

`lossless_headroom(speed, mtu, cable_length_m)` is how many bytes a port must still absorb after
it sends a PFC pause. After the pause leaves, data keeps arriving for one round trip on the cable,
the peer's response time, and a maximum-size frame at each end (one in flight each way). The
estimate follows that model (as SONiC's dynamic buffer calculation does) with platform-independent
constants, plus the ASIC's MAC/PHY delay where the catalog publishes one (`mac_phy_delay_bytes`,
SONiC's ASIC_TABLE `mac_phy_delay`); without it the estimate is short by that delay, and the build
says so in a note.

`lossless_thresholds(qos, platform, speed)` is the ECN and PFC trigger a switch uses at a speed:
the intent's values where it writes them, else the switch model's published values (catalog
`qos:`), else fabricgen's generic defaults; each with where it came from.

`ingress_pause_policy(buffer, trigger_kbytes)` is the NX-OS ingress `pause buffer-size /
pause-threshold / resume-threshold` of a lossless class for one (speed, cable bucket): PAUSE at
the same trigger the SONiC profile uses and the DCQCN check proves above ECN's maximum.

`cable_length_bucket(metres)` rounds a cable up to one of a few lengths, so a fabric has a handful
of buffer profiles rather than one per cable.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass

from fabricgen.catalog.model import PlatformQos
from fabricgen.intent.model import Backend, EcnThresholds, HostFabric, Qos, default_ecn

LIGHT_IN_FIBRE_M_PER_S = 198_000_000  # about 5 ns per metre
# IEEE 802.1Qbb peer response budget in pause quanta (512 bit times) by port speed
PAUSE_QUANTA = {25: 80, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}
CELL_ROUNDING = 1024


@dataclass(frozen=True)
class LosslessBuffer:
    """Ingress buffer profile of the lossless priority group at one port speed (bytes)."""

    speed_gbps: int
    cable_length_m: int
    xoff_bytes: int
    xon_bytes: int
    size_bytes: int


def _round_up(value: float, step: int = CELL_ROUNDING) -> int:
    return int(math.ceil(value / step) * step)


def pg_reserved_bytes(mtu: int) -> int:
    """The part of a lossless PG's buffer that is not headroom (its xon): two maximum frames."""
    return _round_up(2 * mtu)


def lossless_headroom(speed_gbps: int, mtu: int, cable_length_m: int, mac_phy_delay_bytes: int = 0) -> LosslessBuffer:
    bits_per_second = speed_gbps * 1_000_000_000
    cable_round_trip = 2 * cable_length_m * bits_per_second / LIGHT_IN_FIBRE_M_PER_S / 8
    quanta = PAUSE_QUANTA.get(speed_gbps) or PAUSE_QUANTA[min(PAUSE_QUANTA, key=lambda s: abs(s - speed_gbps))]
    peer_response = quanta * 512 / 8
    # SONiC's dynamic headroom calculation adds the ASIC's mac_phy_delay (bytes the MAC/PHY still
    # sends once the pause is decided) to the cable and peer terms (sonic-net/SONiC
    # doc/qos/dynamically-headroom-calculation.md, ASIC_TABLE)
    xoff = _round_up(2 * mtu + cable_round_trip + peer_response + mac_phy_delay_bytes)
    xon = pg_reserved_bytes(mtu)
    return LosslessBuffer(
        speed_gbps=speed_gbps,
        cable_length_m=cable_length_m,
        xoff_bytes=xoff,
        xon_bytes=xon,
        size_bytes=xoff + xon,
    )


# Headroom grows by about 2 x 5 ns of data per metre (~505 bytes/m at 400G), so rounding a cable up
# costs little next to the fixed part (two frames plus the peer's response). The steps follow how
# runs are built: 5 m in-rack copper, 10/20 m within a row, 40 m across rows, 100 m the multimode
# (OM4 SR) reach that covers a hall, 300 m beyond it; 5, 40 and 300 m are also the lengths SONiC's
# traditional lookup tables use. Then single-mode reaches: 500 m (DR), 2 km (FR), 10 km (LR, the
# intent's upper bound). A hall fabric uses three to five of them.
CABLE_LENGTH_BUCKETS_M = (5, 10, 20, 40, 100, 300, 500, 2000, 10000)


def cable_length_bucket(length_m: float) -> int:
    """The shortest bucket that covers the cable (a cable above the last one keeps its length)."""
    index = bisect_left(CABLE_LENGTH_BUCKETS_M, length_m)
    return CABLE_LENGTH_BUCKETS_M[index] if index < len(CABLE_LENGTH_BUCKETS_M) else math.ceil(length_m)


def effective_qos(spec: Backend | HostFabric, switch: str) -> Qos:
    """The fabric's QoS profile with the switch's `qos_overrides` entry applied (if any).

    Raises pydantic's ValidationError when the override breaks the profile's own rules; the
    checks phase reports that as a problem before configs are built."""
    override = spec.qos_overrides.get(switch)
    return spec.qos if override is None else override.apply(spec.qos)


GENERIC = "fabricgen's generic default"
INTENT = "the intent"


@dataclass(frozen=True)
class LosslessThresholds:
    """ECN and the PFC trigger of one switch model at one port speed, and where each came from."""

    ecn: EcnThresholds
    ecn_source: str
    pfc_trigger_kbytes: int
    trigger_source: str


def lossless_thresholds(qos: Qos, platform: PlatformQos, speed_gbps: int) -> LosslessThresholds:
    """The intent's value for this speed, else the platform's published one, else the generic
    default (which scales with speed; the check and a build note say so)."""
    if speed_gbps in qos.ecn:
        ecn, ecn_source = qos.ecn[speed_gbps], INTENT
    elif speed_gbps in platform.ecn:
        published = platform.ecn[speed_gbps]
        ecn = EcnThresholds(min_kbytes=published.min_kbytes, max_kbytes=published.max_kbytes, drop_probability=published.drop_probability)
        ecn_source = published.source
    else:
        ecn, ecn_source = default_ecn(speed_gbps), GENERIC
    if speed_gbps in qos.pfc_trigger_kbytes:
        trigger, trigger_source = qos.pfc_trigger_kbytes[speed_gbps], INTENT
    elif speed_gbps in platform.pfc_trigger_kbytes:
        trigger, trigger_source = platform.pfc_trigger_kbytes[speed_gbps].value, platform.pfc_trigger_kbytes[speed_gbps].source
    else:
        # a third above the platform's own ECN maximum (published, else the generic one), so its
        # marking starts before pausing; an intent's higher ECN does not move the pause point
        basis = platform.ecn[speed_gbps].max_kbytes if speed_gbps in platform.ecn else default_ecn(speed_gbps).max_kbytes
        trigger, trigger_source = -(-basis * 4 // 3), GENERIC
    return LosslessThresholds(ecn=ecn, ecn_source=ecn_source, pfc_trigger_kbytes=trigger, trigger_source=trigger_source)


class FabricThresholds:
    """lossless_thresholds for the switches of one fabric: those on the fabric's own profile (no
    qos override) share one answer per switch model and speed, worked out once (it builds pydantic
    models; thousands of switches at 131,072 GPUs); an override's profile is worked out each time."""

    def __init__(self, profile: Qos) -> None:
        self.profile = profile
        self._shared: dict[tuple[str, int], LosslessThresholds] = {}

    def at(self, qos: Qos, model: str, platform: PlatformQos, speed_gbps: int) -> LosslessThresholds:
        """lossless_thresholds(qos, platform, speed_gbps) for a switch of `model`."""
        if qos is not self.profile:
            return lossless_thresholds(qos, platform, speed_gbps)
        found = self._shared.get((model, speed_gbps))
        if found is None:
            found = self._shared[(model, speed_gbps)] = lossless_thresholds(qos, platform, speed_gbps)
        return found


# Cisco's NX-OS QoS configuration guide (Configuring Priority Flow Control, guidelines): the ingress
# pause buffer configuration is optional for cables under 100 m and mandatory above.
PAUSE_POLICY_ABOVE_M = 100


@dataclass(frozen=True)
class PausePolicy:
    """An NX-OS ingress queuing policy for the lossless classes at one speed and cable bucket
    (bytes): the class's buffer, the occupancy that sends PAUSE, the one that sends resume."""

    name: str
    speed_gbps: int
    cable_length_m: int
    buffer_size: int
    pause_threshold: int
    resume_threshold: int


def ingress_pause_policy(buffer: LosslessBuffer, trigger_kbytes: int) -> PausePolicy:
    """The lossless class's ingress buffer in NX-OS's terms, laid out like the SONiC profile:
    PAUSE goes out when the class holds the PFC trigger (which the checks prove above ECN's
    maximum, so DCQCN marks first); above it, `xoff` bytes of headroom take what is still in
    flight; resume once the class has drained by its `xon` reserve (two maximum frames)."""
    pause = trigger_kbytes * 1024
    return PausePolicy(
        name=f"PAUSE_{buffer.speed_gbps}G_{buffer.cable_length_m}M",
        speed_gbps=buffer.speed_gbps,
        cable_length_m=buffer.cable_length_m,
        buffer_size=pause + buffer.xoff_bytes,
        pause_threshold=pause,
        resume_threshold=pause - buffer.xon_bytes,
    )
