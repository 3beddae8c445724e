"""RFC 2544 line rates, exactly: frames per second a port of a given speed carries at a given
frame size, and the share of it a throughput trial must offer.

On the wire every Ethernet frame is preceded by the preamble and start-of-frame delimiter (8
bytes) and followed by the minimum inter-frame gap (12 byte times): IEEE 802.3 clause 4.4.2
(interFrameGap 96 bit times) and clause 3.2.1 (preamble 7 + SFD 1). RFC 2544 section 9 counts
frame sizes as the frame from destination address to FCS, so a port of `speed` bit/s carries
speed / ((size + 20) x 8) frames per second. Kept as a Fraction: 400G at 64 bytes is
595,238,095 5/21 frames/s, and rounding happens only where a figure is shown (`whole_fps_down`, `tenths`, `mixed`)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Literal

WIRE_OVERHEAD_BYTES = 20  # preamble + SFD 8, inter-frame gap 12
# RFC 2544 section 9.1 (Ethernet) lists 64, 128, 256, 512, 1024, 1280 and 1518; seed 002 (Cisco
# Nexus 9516, Network Test 2015) adds 86 (its IPv6 minimum: Ethernet 18 + IPv6 40 + UDP 8 + a
# 20-byte tester signature), 2176 (FCoE), 4096, 8192 and 9216 (jumbo, RFC 5180 section 5.1.1).
FRAME_SIZES = (64, 86, 128, 256, 512, 1024, 1280, 1518, 2176, 4096, 8192, 9216)
MIN_FRAME, MAX_FRAME = 64, 9216  # Ethernet's minimum; the largest MTU the catalog's switches take
# Offered loads, percent of line rate: seed 002 measures latency and jitter at 10, 50 and 90 % and
# at its throughput rate, 99.999 % (10 ppm under line rate, for clock differences between tester
# and switch; IEEE 802.3 allows +/- 100 ppm).
LoadPercent = Literal["10", "50", "90", "99.999"]
LOADS: tuple[LoadPercent, ...] = ("10", "50", "90", "99.999")
THROUGHPUT_LOAD: LoadPercent = "99.999"
# A trial's offered rate passes when it is at most this far under the planned rate, in parts per
# million of line rate: a tester's count over a timed trial is not exact to the frame, and seed
# 002's Table 3 (IPv4 with BGP) reports 99.999 % for rates 0.05 ppm under it. 1 ppm is a tenth of
# the 10 ppm margin the 99.999 % leaves for clocks.
RATE_TOLERANCE_PPM = 1


def line_fps(speed_gbps: int, frame_bytes: int) -> Fraction:
    """Frames per second at line rate, exactly."""
    return Fraction(speed_gbps * 10**9, (frame_bytes + WIRE_OVERHEAD_BYTES) * 8)


def load_fraction(load_percent: str) -> Fraction:
    """'99.999' -> 99999/100000 (a decimal string, exactly)."""
    return Fraction(Decimal(load_percent)) / 100


def offered_fps(speed_gbps: int, frame_bytes: int, load_percent: str) -> Fraction:
    """Frames per second a port offers at `load_percent` of line rate, exactly."""
    return line_fps(speed_gbps, frame_bytes) * load_fraction(load_percent)


def least_passing_fps(speed_gbps: int, frame_bytes: int, load_percent: str, tolerance_ppm: int) -> Fraction:
    """The lowest measured rate that still counts as offering `load_percent`: `tolerance_ppm`
    (parts per million) of line rate under it."""
    line = line_fps(speed_gbps, frame_bytes)
    return line * load_fraction(load_percent) - line * Fraction(tolerance_ppm, 10**6)


def whole_fps_down(rate: Fraction) -> int:
    """A line rate as whole frames/s, rounded down: a generator cannot send part of a frame, and
    rounding down never asks for more than the wire carries."""
    return math.floor(rate)


def tenths(rate: Fraction) -> str:
    """A criterion for people, to a tenth of a frame/s, halves rounded up: '148,808,035.7'. (Whole
    frames would mislead at low rates: 99.999 % of 13,533.997 frames/s rounded up is 13,534, above
    the line rate rounded down.) Judging uses the exact value, never this text."""
    scaled = math.floor(rate * 10 + Fraction(1, 2))
    return f"{scaled // 10:,}.{scaled % 10}"


def mixed(rate: Fraction) -> str:
    """An exact rate for people: '595,238,095 5/21' (whole part with thousands separators, then
    the remainder as a fraction), '148,809,523 17/21', or '1,000' when whole."""
    whole = math.floor(rate)
    rest = rate - whole
    return f"{whole:,}" + (f" {rest.numerator}/{rest.denominator}" if rest else "")
