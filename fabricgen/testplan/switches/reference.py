"""Published figures the plan shows beside its own, for comparison (never as criteria).

Seed 002: "Cisco Nexus 9516: Scaling 100G Performance to New Heights", Network Test, June 2015
(/work/shared/seeds/002_68ca27483f84e570.txt), Table 1 "Layer-2 unicast performance results"
(RFC 2889, 128 x 100G ports fully meshed, Spirent TestCenter, 300 s trials at 99.999 % of line
rate): the aggregate throughput in frames/s over all 128 ports, per frame size, as printed."""

from __future__ import annotations

SEED_002_SPEED_GBPS = 100
SEED_002_PORTS = 128
SEED_002_LOAD = "99.999"
SEED_002_AGGREGATE_FPS: dict[int, int] = {
    64: 19_047_430_585,
    128: 10_810_703_846,
    256: 5_797_044_091,
    512: 3_007_489_040,
    1024: 1_532_551_887,
    1280: 1_230_757_053,
    1518: 1_040_301_801,
    2176: 728_590_241,
    4096: 388_723_073,
    8192: 194_834_897,
    9216: 173_233_453,
}
SEED_002_NOTE = (
    "Network Test's RFC 2889 test of a Cisco Nexus 9516 (seed 002, Table 1): aggregate frames/s over 128 x 100G ports at 99.999 % "
    "of line rate, and that divided by 128 ports"
)
