"""Lossless headroom: how many bytes a port must still absorb after it sends a PFC pause.

After the pause leaves, data keeps arriving for one round trip on the cable, the peer's response
time, and a maximum-size frame at each end (one in flight each way). The estimate below follows
that model (as SONiC's dynamic buffer calculation does) with platform-independent constants. A
platform's own tables add its ASIC's MAC/PHY and pipeline delays on top, often tens of KB; where a
platform ships such a table, prefer it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


def lossless_headroom(speed_gbps: int, mtu: int, cable_length_m: int) -> LosslessBuffer:
    bits_per_second = speed_gbps * 1_000_000_000
    cable_round_trip = 2 * cable_length_m * bits_per_second / LIGHT_IN_FIBRE_M_PER_S / 8
    quanta = PAUSE_QUANTA.get(speed_gbps) or PAUSE_QUANTA[min(PAUSE_QUANTA, key=lambda s: abs(s - speed_gbps))]
    peer_response = quanta * 512 / 8
    xoff = _round_up(2 * mtu + cable_round_trip + peer_response)
    xon = _round_up(2 * mtu)
    return LosslessBuffer(
        speed_gbps=speed_gbps,
        cable_length_m=cable_length_m,
        xoff_bytes=xoff,
        xon_bytes=xon,
        size_bytes=xoff + xon,
    )
