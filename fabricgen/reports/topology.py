"""topology.json: the fabric graph in node-link form (networkx.node_link_graph reads it).

Each switch with a lossless profile carries a NOS-neutral `qos` attribute (see `qos_summary`), so
tools such as `fabricgen diff` compare QoS values without parsing NX-OS or SONiC syntax."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii

from fabricgen.basics import version
from fabricgen.basics.units import format_ratio
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import Link
from fabricgen.compiler.device_config import DeviceConfig, QosConfig


def qos_summary(qos: QosConfig) -> dict:
    """A switch's effective lossless profile as plain data, speeds as "400G" keys. Per-port
    buffers are summarised per speed (ports, bucketed cable lengths, distinct xoff sizes): the
    full table is in the switch's config."""

    def speed(gbps: int) -> str:
        return f"{gbps}G"

    buffers: dict[str, dict] = {}
    for gbps in sorted({b.speed_gbps for b in qos.buffers.values()}):
        at_speed = [b for b in qos.buffers.values() if b.speed_gbps == gbps]
        buffers[speed(gbps)] = {
            "ports": len(at_speed),
            "cable_length_m": sorted({b.cable_length_m for b in at_speed}),
            "xoff_bytes": sorted({b.xoff_bytes for b in at_speed}),
        }
    summary = {
        "lossless_priority": qos.lossless_priority,
        "roce_dscp": list(qos.roce_dscp),
        "cnp_priority": qos.cnp_priority,
        "cnp_dscp": list(qos.cnp_dscp),
        "lossless_bandwidth_percent": qos.lossless_bandwidth_percent,
        "main_speed": speed(qos.main_speed_gbps),
        "ecn": {
            speed(gbps): {"min_kbytes": e.min_kbytes, "max_kbytes": e.max_kbytes, "drop_probability": e.drop_probability} for gbps, e in sorted(qos.ecn.items())
        },
        "pfc_trigger_kbytes": {speed(gbps): kbytes for gbps, kbytes in sorted(qos.pfc_trigger_kbytes.items())},
        "pfc_watchdog": qos.pfc_watchdog.model_dump(),
        "buffers": buffers,
    }
    if qos.storage_priority is not None:
        summary["storage"] = {
            "priority": qos.storage_priority,
            "dscp": list(qos.storage_dscp),
            "bandwidth_percent": qos.storage_bandwidth_percent,
        }
    return summary


def render_topology(c: Compiled, configs: dict[str, DeviceConfig] | None = None) -> dict[str, str]:
    """topology.json; `configs` (the switches' DeviceConfigs) adds each switch's `qos`."""
    configs = configs or {}
    s = c.sizing
    plan = c.addresses
    backend: dict[str, object] = {
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
        "tiers": s.tiers,
    }
    fabrics: dict[str, dict[str, object]] = {
        network.value: {
            "leaves": plan.leaves,
            "spines": plan.spines,
            "leaf_downlinks": plan.leaf_downlinks,
            "leaf_uplinks": plan.leaf_uplinks,
            "links_per_leaf_per_spine": plan.links_per_spine,
            "built_ratio": format_ratio(plan.built_ratio),
            **(
                {
                    "tiers": 3,
                    "pods": plan.pods,
                    "pod_leaves": plan.pod_leaves,
                    "cores": plan.cores,
                    "spine_uplinks": plan.spine_uplinks,
                    "links_per_spine_per_core": plan.links_per_core,
                }
                if plan.tiers == 3
                else {}
            ),
        }
        for network, plan in c.plans.items()
    }
    graph = {
        "name": c.intent.name,
        "fabricgen_version": version.RELEASE,  # the release: a new commit changes no report
        "backend": backend,
        "fabrics": fabrics,
        "notes": list(c.notes),
    }
    if s.tiers == 3:
        assert s.spine_built_ratio is not None, "a 3-tier sizing has the spines' ratio"
        backend.update(
            pods=s.pods,
            pod_scalable_units=s.pod_sus,
            pod_spines=s.pod_spines,
            cores=s.cores,
            core_group_cores=s.group_cores,
            spine_downlinks=s.spine_downlinks,
            spine_uplinks=s.spine_uplinks,
            links_per_spine_per_core=s.links_per_core,
            spine_built_ratio=format_ratio(s.spine_built_ratio),
        )
    if s.planes > 1:
        backend["planes"] = s.planes
    # how NICs map onto leaves: the design, and (below) every rail each backend leaf serves
    backend.update(design=s.design, rails_per_leaf=s.rails_per_leaf)
    fabrics["backend"]["design"] = s.design
    nodes = []
    for d in c.fabric.devices.values():
        node: dict[str, object] = {"id": d.name, "role": d.role.value, "network": d.network.value, "model": d.model, "index": d.index}
        if d.nos:
            node["nos"] = d.nos
            node["nos_release"] = c.nos_target(d.network, d.role, d.model).release
        if d.name in plan.asns:
            node.update(asn=plan.asns[d.name], loopback=plan.loopbacks[d.name])
        if d.rack is not None:
            node.update(rack=d.rack, ru=d.ru)
        if d.su is not None:
            node["scalable_unit"] = d.su
        if d.rail is not None:
            node["rail"] = d.rail
            node["rails"] = list(d.rails or (d.rail,))
        for key in ("pod", "plane", "core_group"):
            if getattr(d, key) is not None:
                node[key] = getattr(d, key)
        config = configs.get(d.name)
        if config is not None and config.qos is not None:
            node["qos"] = qos_summary(config.qos)
        image = config.system.boot.image(config.nos) if config is not None and config.system is not None else None
        if image:
            node["boot_image"] = image
        if config is not None and config.secret_names():
            node["secrets"] = sorted(config.secret_names())
        nodes.append(node)
    return {"topology.json": _one_per_line(graph, nodes, _link_lines(c.fabric.links))}


def _link_lines(links: list[Link]) -> list[str]:
    """Each link as the JSON object json.dumps would write for
    {"source", "target", "key", "network", "kind", "source_port", "target_port", "speed_gbps",
    "cable", "length_m"}, formatted directly: 440,000 dicts through json's encoder cost twice as
    much. Strings are encoded by json's own function (ASCII, escaped), each distinct one once."""
    text = _Encoded({None: "null"})  # text[value]: a dict lookup in C once the value was seen

    def number(value: float) -> str:
        return float.__repr__(value) if type(value) is float else json.dumps(value)

    return [
        f'{{"source": {text[link.a.device.name]}, "target": {text[link.b.device.name]}, "key": {encode_basestring_ascii(link.id)}, '
        f'"network": {text[link.network]}, "kind": {text[link.kind]}, "source_port": {text[link.a.name]}, '
        f'"target_port": {text[link.b.name]}, "speed_gbps": {link.a.speed_gbps}, "cable": {text[link.cable]}, '
        f'"length_m": {"null" if link.length_m is None else number(link.length_m)}}}'
        for link in links
    ]


class _Encoded(dict):
    """str -> its JSON text (json's own encoder), made the first time a string is asked for."""

    def __missing__(self, value: str) -> str:
        encoded = self[value] = encode_basestring_ascii(value)
        return encoded


def _one_per_line(graph: dict, nodes: list[dict], links: list[str]) -> str:
    """The node-link document with one line per node and per link (`links`: encoded objects,
    `_link_lines`): a review diff shows one line per changed device or cable, and json's C
    encoder (not used with `indent`) writes the nodes in a fraction of a second."""
    head = json.dumps(graph, indent=1).replace("\n", "\n ")

    def rows(items: list[dict]) -> str:
        # One json.dumps of the whole list (a C call) instead of one per item, then a line break
        # after each item. json.dumps(list) is "[" + ", ".join(json.dumps(item)) + "]", and
        # '}, {"<first key>": ' cannot occur inside an encoded string (its quotes are escaped), so
        # it marks the item boundaries, unless a nested object starts with the same key: then it
        # occurs more often than there are boundaries, and each item is encoded on its own.
        if not items:
            return ""
        boundary = "}, " + json.dumps({next(iter(items[0])): 0})[:-2]
        text = json.dumps(items)[1:-1]
        if text.count(boundary) != len(items) - 1:
            return ",\n".join(f"  {json.dumps(item)}" for item in items)
        return "  " + text.replace(boundary, "},\n  " + boundary[3:])

    opening = f'{{\n "directed": false,\n "multigraph": true,\n "graph": {head},\n "nodes": [\n{rows(nodes)}\n ],\n "links": [\n'
    closing = "\n ]\n}\n"
    if not links:
        return opening + closing
    # the document is the links' join, the rest added to the first and last line: the links' text
    # (100 MB at 131,072 GPUs) is copied once; each line's indent is joined in, not a copy of each line
    lines = [f"{opening}  {links[0]}", *links[1:]]
    lines[-1] += closing
    return ",\n  ".join(lines)
