"""A Batfish snapshot of every switch of a build.

`render_batfish(build) -> {path: text}`, laid out as Batfish's "Format of vendor and supplemental
data" (pybatfish docs/source/formats.md) asks:
- each switch's config files (its NOS's `config_files`) in the folder its NOS's package names
  (`ExportParts.batfish_folder`), where they lie below configs/ in the build: NX-OS and EOS as
  `configs/<switch>.cfg` with Batfish's vendor header as its first line (`!RANCID-CONTENT-TYPE:
  <batfish_rancid_type>`: cisco-nx, arista; generated files lack the tell-tale lines Batfish
  detects a vendor by, and its VendorConfigurationFormatDetector reads the RANCID type first),
  SONiC as `sonic_configs/<switch>/config_db.json` and `frr.conf` with nothing else in its folder
  (the page: "The device folder must have only these files"); a switch of a NOS fabricgen has no
  package for as `configs/<switch>.cfg`, no header;
- `batfish/layer1_topology.json`: every cable whose two ends are both in the snapshot (fabric,
  management and OOB links between switches), as `{"edges": [{"node1": {"hostname",
  "interfaceName"}, "node2": {...}}]}`, each cable in both directions as Batfish's example
  (networks/example/example_layer1_topology.json) lists them: Batfish's Layer1Topology is a
  directed graph.
Secrets: each placeholder becomes a stand-in of the form its slot takes (`fabricgen.build.secrets.
dummy_secrets`: a SHA-256 crypt hash for a user's password, 15 letters and digits elsewhere, the
same for one secret on every switch), never a value: the export reads no secret. Batfish parses config text line by line, and a placeholder
is not a token its NX-OS grammar takes where a key is a WORD (CiscoNxosLexer.g4 `F_WordChar` has no
`<`, `>`): `ntp authentication-key N md5 KEY` and `snmp-server user ... auth sha KEY priv aes-128
KEY` were unparseable on every NX-OS switch.
"""

from __future__ import annotations

import json

from fabricgen.basics.errors import Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.build.secrets import dummy_secrets
from fabricgen.export.source import ExportBuild, ExportError
from fabricgen.nos.interface import plugins

BUILD_FOLDER = "configs/"  # where a switch's config files lie in the build


def render_batfish(build: ExportBuild) -> dict[str, str]:
    configs: dict[str, tuple[str, str]] = {}  # snapshot path -> (build path, text)
    noses: dict[str, str] = {}  # build path -> its switch's NOS: which slots its placeholders stand in
    problems: list[Problem] = []
    in_snapshot: set[str] = set()
    for switch in build.switches():
        name, nos = switch.id, switch.nos or ""
        package = plugins().get(nos)  # None: a NOS fabricgen has no package for, its config a .cfg
        paths = package.config_files(name) if package is not None else (f"{BUILD_FOLDER}{name}.cfg",)
        missing = [path for path in paths if not build.files.has(path)]
        if missing:
            problems.append(Problem(f"{name} ({nos}) has no {missing[0]}", hint="rebuild the directory", file=str(build.root / "manifest.json")))
            continue
        folder, rancid_type = (package.EXPORT.batfish_folder, package.EXPORT.batfish_rancid_type) if package is not None else ("configs", None)
        header = f"!RANCID-CONTENT-TYPE: {rancid_type}\n" if rancid_type else ""
        for index, path in enumerate(paths):  # the first is its main config
            text = build.files.text(path)
            configs[f"{folder}/{path.removeprefix(BUILD_FOLDER)}"] = (path, header + text if index == 0 else text)
            noses[path] = nos
        in_snapshot.add(name)
    if problems:
        raise ExportError(problems)
    dummies = dummy_secrets(dict(configs.values()), noses)
    files = {path: dummies.fill(text, in_json=path.endswith(".json")) for path, (_, text) in configs.items()}
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
