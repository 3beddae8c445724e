"""topology.json: the fabric graph in node-link form (networkx.node_link_graph reads it)."""

from __future__ import annotations

import json

from fabricgen import __version__
from fabricgen.compiled import Compiled
from fabricgen.units import format_ratio


def render_topology(c: Compiled) -> dict[str, str]:
    s = c.sizing
    plan = c.addresses
    graph = {
        "name": c.intent.name,
        "fabricgen_version": __version__,
        "backend": {
            "gpus": s.gpus,
            "nodes": s.nodes,
            "rails": s.rails,
            "link_speed_gbps": s.link_speed_gbps,
            "scalable_units": s.su_count,
            "scalable_unit_nodes": s.su_nodes,
            "leaves": s.leaves,
            "spines": s.spines,
            "leaf_downlinks": s.leaf_downlinks,
            "leaf_uplinks": s.leaf_uplinks,
            "links_per_leaf_per_spine": s.links_per_spine,
            "requested_ratio": format_ratio(s.requested_ratio),
            "built_ratio": format_ratio(s.built_ratio),
        },
        "fabrics": {
            network.value: {
                "leaves": plan.leaves,
                "spines": plan.spines,
                "leaf_downlinks": plan.leaf_downlinks,
                "leaf_uplinks": plan.leaf_uplinks,
                "links_per_leaf_per_spine": plan.links_per_spine,
                "built_ratio": format_ratio(plan.built_ratio),
            }
            for network, plan in c.plans.items()
        },
        "notes": list(c.notes),
    }
    nodes = []
    for d in c.fabric.devices.values():
        node = {"id": d.name, "role": d.role.value, "network": d.network.value, "model": d.model, "index": d.index}
        if d.nos:
            node["nos"] = d.nos
        if d.name in plan.asns:
            node.update(asn=plan.asns[d.name], loopback=plan.loopbacks[d.name])
        if d.rack is not None:
            node.update(rack=d.rack, ru=d.ru)
        if d.su is not None:
            node["scalable_unit"] = d.su
        if d.rail is not None:
            node["rail"] = d.rail
        nodes.append(node)
    links = [
        {
            "source": link.a.device.name,
            "target": link.b.device.name,
            "key": link.id,
            "network": link.network.value,
            "kind": link.kind.value,
            "source_port": link.a.name,
            "target_port": link.b.name,
            "speed_gbps": link.speed_gbps,
            "cable": link.cable,
            "length_m": link.length_m,
        }
        for link in c.fabric.links
    ]
    document = {"directed": False, "multigraph": True, "graph": graph, "nodes": nodes, "links": links}
    return {"topology.json": json.dumps(document, indent=1) + "\n"}
