"""QoS design rules: each switch's effective profile, and lossless headroom per port.

`effective_qos(spec, switch)` is the fabric's QoS profile with that switch's override applied.

`lossless_headroom(speed, mtu, cable_length_m)` is how many bytes a port must still absorb after
it sends a PFC pause. After the pause leaves, data keeps arriving for one round trip on the cable,
the peer's response time, and a maximum-size frame at each end (one in flight each way). The
estimate follows that model (as SONiC's dynamic buffer calculation does) with platform-independent
constants. A platform's own tables add its ASIC's MAC/PHY and pipeline delays on top, often tens of
KB; where a platform ships such a table, prefer it.

`cable_length_bucket(metres)` rounds a cable up to one of a few lengths, so a fabric has a handful
of buffer profiles rather than one per cable.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass

from fabricgen.intent.model import Backend, HostFabric, Qos

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


def lossless_headroom(speed_gbps: int, mtu: int, cable_length_m: int) -> LosslessBuffer:
    bits_per_second = speed_gbps * 1_000_000_000
    cable_round_trip = 2 * cable_length_m * bits_per_second / LIGHT_IN_FIBRE_M_PER_S / 8
    quanta = PAUSE_QUANTA.get(speed_gbps) or PAUSE_QUANTA[min(PAUSE_QUANTA, key=lambda s: abs(s - speed_gbps))]
    peer_response = quanta * 512 / 8
    xoff = _round_up(2 * mtu + cable_round_trip + peer_response)
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
    return CABLE_LENGTH_BUCKETS_M[index] if index < len(CABLE_LENGTH_BUCKETS_M) else int(math.ceil(length_m))


def effective_qos(spec: Backend | HostFabric, switch: str) -> Qos:
    """The fabric's QoS profile with the switch's `qos_overrides` entry applied (if any).

    Raises pydantic's ValidationError when the override breaks the profile's own rules; the
    checks phase reports that as a problem before configs are built."""
    override = spec.qos_overrides.get(switch)
    return spec.qos if override is None else override.apply(spec.qos)
