"""A Batfish snapshot of every switch of a build.

`render_batfish(build) -> {path: text}`, laid out as Batfish's "Format of vendor and supplemental
data" (pybatfish docs/source/formats.md) asks:
- `configs/<switch>.cfg`: an NX-OS switch's config as the build wrote it, with Batfish's vendor
  header `!RANCID-CONTENT-TYPE: cisco-nx` as its first line (generated files lack the tell-tale
  lines Batfish detects NX-OS by);
- `sonic_configs/<switch>/config_db.json` and `frr.conf`: a SONiC switch's two files, nothing else in
  its folder (the page: "The device folder must have only these files");
- `batfish/layer1_topology.json`: every cable whose two ends are both in the snapshot (fabric,
  management and OOB links between switches), as `{"edges": [{"node1": {"hostname",
  "interfaceName"}, "node2": {...}}]}`, each cable in both directions as Batfish's example
  (networks/example/example_layer1_topology.json) lists them: Batfish's Layer1Topology is a
  directed graph.
Secrets stay as the build's placeholders (<<secret:NAME>>): nothing is filled in.
"""

from __future__ import annotations

import json

from fabricgen.errors import Problem
from fabricgen.export.source import ExportBuild, ExportError
from fabricgen.sorting import natural_key

RANCID_HEADER = {"nxos": "!RANCID-CONTENT-TYPE: cisco-nx"}
SONIC_FILES = ("config_db.json", "frr.conf")


def render_batfish(build: ExportBuild) -> dict[str, str]:
    files: dict[str, str] = {}
    problems: list[Problem] = []
    in_snapshot: set[str] = set()
    for switch in build.switches():
        name = switch.id
        if switch.nos == "sonic":
            missing = [f for f in SONIC_FILES if not build.files.has(f"configs/{name}/{f}")]
            if missing:
                problems.append(
                    Problem(f"{name} (sonic) has no configs/{name}/{missing[0]}", hint="rebuild the directory", file=str(build.root / "manifest.json"))
                )
                continue
            for file in SONIC_FILES:
                files[f"sonic_configs/{name}/{file}"] = build.files.text(f"configs/{name}/{file}")
        elif build.files.has(f"configs/{name}.cfg"):
            text = build.files.text(f"configs/{name}.cfg")
            header = RANCID_HEADER.get(switch.nos or "")
            files[f"configs/{name}.cfg"] = f"{header}\n{text}" if header else text
        else:
            problems.append(Problem(f"{name} ({switch.nos}) has no configs/{name}.cfg", hint="rebuild the directory", file=str(build.root / "manifest.json")))
            continue
        in_snapshot.add(name)
    if problems:
        raise ExportError(problems)
    files["batfish/layer1_topology.json"] = layer1_topology(build, in_snapshot)
    return files


def layer1_topology(build: ExportBuild, devices: set[str]) -> str:
    edges = []
    for row in build.cables:
        if row.a_device in devices and row.b_device in devices:
            a = {"hostname": row.a_device, "interfaceName": row.a_port}
            b = {"hostname": row.b_device, "interfaceName": row.b_port}
            edges += [{"node1": a, "node2": b}, {"node1": b, "node2": a}]
    edges.sort(key=lambda e: natural_key((e["node1"]["hostname"], e["node1"]["interfaceName"], e["node2"]["hostname"], e["node2"]["interfaceName"])))
    return json.dumps({"edges": edges}, indent=1) + "\n"
