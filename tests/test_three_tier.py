"""3-tier sizing (issue 8, first part): pods of scalable units, pod spines, a core in groups.

The expected counts are the DGX SuperPOD tables of shared/DOMAIN.md §3 (64-port 400G switches,
8-GPU nodes, 32-node scalable units), not the module's own output."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fabricgen.design.three_tier import size_three_tier
from fabricgen.errors import DesignError
from fabricgen.pipeline import compile_intent

SUPERPOD = {4096: (128, 128, 64), 8192: (256, 256, 128), 16384: (512, 512, 256)}


@pytest.mark.parametrize(("gpus", "expected"), SUPERPOD.items())
def test_the_superpod_tables(gpus, expected):
    s = size_three_tier(nodes=gpus // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert (s.leaves, s.spines, s.cores) == expected
    assert s.leaf_spine_links == s.spine_core_links == gpus  # every tier as many cables as GPUs
    assert s.pod_sus == 4 and s.pod_spines == 32  # a pod: 4 units, one spine per leaf uplink
    # every core port used once: each pod's plane spine sends links_per_spine_per_core to each core
    assert s.pods * s.links_per_spine_per_core == 64
    assert s.group_cores * s.links_per_spine_per_core == s.spine_uplinks == 32


def test_32768_gpus_fit_and_65536_is_the_limit_of_64_port_switches():
    s = size_three_tier(nodes=32768 // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert (s.leaves, s.spines, s.cores, s.pods) == (1024, 1024, 512, 32)
    with pytest.raises(DesignError) as error:
        size_three_tier(nodes=2 * 65536 // 8, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64)
    assert "at most 64 pods" in error.value.problems[0].message
    assert "8,192 nodes (65,536 GPU NICs)" in error.value.problems[0].hint


def test_an_oversubscribed_leaf_needs_fewer_pod_spines():
    s = size_three_tier(nodes=1024, rails=8, su_nodes=32, leaf_ports=64, spine_ports=64, core_ports=64, leaf_ratio=Fraction(2))
    assert s.leaf_uplinks == s.pod_spines == 16
    assert s.leaf_spine_links == 8192 // 2


def test_a_ratio_the_leaf_cannot_hold_says_what_would():
    with pytest.raises(DesignError) as error:
        size_three_tier(nodes=1024, rails=8, su_nodes=48, leaf_ports=64, spine_ports=64, core_ports=64)
    assert "needs 48 downlinks and 48 uplinks" in error.value.problems[0].message
    assert "at most 32 nodes" in error.value.problems[0].hint


def test_a_cluster_too_big_for_two_tiers_is_told_its_three_tier_size(write_intent):
    with pytest.raises(DesignError) as error:
        compile_intent(write_intent("gpus: 8192\nbackend: {tiers: 2}\n"), render=False)
    hint = error.value.problems[0].hint
    assert "for a 3-tier design (256 leaves, 256 spines in 8 pods, 128 core switches" in hint
