"""Spine-free fabrics: switches with no tier above them (rail-only leaves, a top-of-rack pair or a
single switch with `spine.count: 0`). Sizing and refusals, the configs of every NOS for a switch
with no BGP neighbour, cabling, BOM and analyze."""

from __future__ import annotations

import json

import pytest

from fabricgen.compiler.pipeline import build
from tests.conftest import LAB_INTENTS

RAIL_ONLY = """
name: rail-only-test
gpus: 64
gpu_node: DGX-H100
backend:
  design: rail-only
  leaf: {{model: {model}, nos: {nos}}}
"""
# a 400G leaf model each NOS names ports of
LEAF_OF = {"nxos": "N9364E-SG2-O", "sonic": "N9364E-SG2-O", "eos": "DCS-7060X6-64PE"}


# --- no BGP where there is no neighbour ----------------------------------------------------------


@pytest.mark.parametrize("nos", ["nxos", "eos", "sonic"])
def test_a_leaf_without_neighbours_gets_no_bgp_and_no_route_maps(write_intent, tmp_path, nos):
    """A rail-only leaf has no spine: no BGP process, no prefix-lists or route-maps for sessions
    that cannot exist; it keeps its host ports, loopback and QoS."""
    out = tmp_path / "out"
    build(write_intent(RAIL_ONLY.format(nos=nos, model=LEAF_OF[nos])), out)
    configs = out / "configs"
    leaf = "be-su01-leaf1"
    if nos == "sonic":
        db = json.loads((configs / leaf / "config_db.json").read_text())
        frr = (configs / leaf / "frr.conf").read_text()
        assert "router bgp" not in frr and "route-map" not in frr and "prefix-list" not in frr
        assert "BGP_NEIGHBOR" not in db and "bgp_asn" not in db["DEVICE_METADATA"]["localhost"]
        assert db["LOOPBACK_INTERFACE"] and db["PORT_QOS_MAP"]
        assert sum(1 for key in db["INTERFACE"] if "|" in key) == 8  # 8 nodes' NIC of this rail, each a /31
    else:
        text = (configs / f"{leaf}.cfg").read_text()
        for absent in ("router bgp", "route-map", "prefix-list", "feature bgp"):
            assert absent not in text, f"{nos}: {absent!r} in {leaf}.cfg"
        assert "interface Loopback0" in text or "interface loopback0" in text
        assert text.count("description BE-") == 8
        # the lab's routing twin of a non-FRR switch carries no BGP either
        twin = (out / "lab" / "frr" / f"{leaf}.conf").read_text()
        assert "router bgp" not in twin and "route-map" not in twin
