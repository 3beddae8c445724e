"""Routing twins: the FRR rendering of a non-SONiC switch's routing model, for the lab.

`fabricgen lab` runs real FRR for every routed switch. A SONiC switch's own frr.conf is what the
lab runs; an NX-OS switch has no FRR config, so the build also renders its DeviceConfig (the same
BGP, BFD and EVPN model its NX-OS config comes from) through the FRR template into
`lab/frr/<device>.conf`. The lab then proves the routing design whichever NOS the intent targets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from fabricgen.basics import version
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.nos.interface import plugin
from fabricgen.render.environment import NEIGHBOR_LINES, environment

TWIN_DIR = "lab/frr"
# What the lab needs of each VTEP that neither the IP plan nor frr.conf says: VLAN -> VNI and members.
OVERLAY_FILE = "lab/overlay.json"
# Appliances (ONTAP) get a settings sheet, not netplan: the lab runs them from a netplan twin here.
HOST_TWIN_DIR = "lab/hosts"


def render_routing_twins(configs: Iterable[DeviceConfig]) -> dict[str, str]:
    """`lab/frr/<device>.conf` for every fabric switch (not OOB) whose NOS's routing is not an
    frr.conf; a switch with no BGP neighbour gets one without BGP, so the lab runs every switch alike."""
    template = environment().get_template("frr/frr.conf.j2")
    return {
        f"{TWIN_DIR}/{config.hostname}.conf": template.render(
            c=config, neighbors=list(map(NEIGHBOR_LINES, config.bgp.neighbors)) if config.bgp else [], version=version.RELEASE, twin=config.nos
        )
        for config in configs
        if config.role is not Role.OOB_SWITCH and not plugin(config.nos).ROUTING_IS_FRR
    }


def render_lab_overlay(configs: Iterable[DeviceConfig]) -> dict[str, str]:
    """`lab/overlay.json`, when the build has VTEPs: per leaf, its VTEP, segments and VRFs."""
    overlay = {
        config.hostname: {
            "vtep": config.evpn.vtep_address,
            "anycast_gateway_mac": config.evpn.anycast_gateway_mac,
            "segments": [
                {"name": s.name, "vlan": s.vlan, "vni": s.vni, "vrf": s.vrf, "gateway": s.gateway, "members": list(s.members)} for s in config.evpn.segments
            ],
            "vrfs": [{"name": v.name, "l3_vni": v.l3_vni, "l3_vlan": v.l3_vlan} for v in config.evpn.vrfs],
        }
        for config in configs
        if config.evpn is not None and config.evpn.vtep
    }
    return {OVERLAY_FILE: json.dumps(overlay, indent=1, sort_keys=True) + "\n"} if overlay else {}
