"""Builds the push tests can commit: the parts a replace needs (push/candidate.py check_complete),
added to a copy of a build where its renderer does not write them (yet), with the manifest updated
so the copy is still a verified build.

What is added is only what the completeness check looks for, in the NOS's own syntax; a build that
already has a part keeps its own.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

NXOS_PARTS = {
    "vrf context management": "vrf context management\n  ip route 0.0.0.0/0 192.0.2.1\n",
    "interface mgmt0": "interface mgmt0\n  vrf member management\n  ip address 192.0.2.10/24\n",
    "aaa authentication login": "username admin role network-admin\n",
    "feature ssh": "feature ssh\n",
    "boot nxos": "boot nxos bootflash:nxos64-cs.10.4.5.M.bin\n",
}


def complete_nxos(text: str) -> str:
    lines = text.splitlines()
    extra = ""
    for marker, part in NXOS_PARTS.items():
        present = any(line.startswith(marker) for line in lines)
        if marker == "aaa authentication login":
            present = present or any(line.startswith("username ") for line in lines)
        if marker == "interface mgmt0" and present:
            continue  # a renderer's mgmt0 stays as it is
        if not present:
            extra += part
    return text.rstrip("\n") + "\n" + extra if extra else text


def complete_config_db(config_db: dict) -> dict:
    config_db = dict(config_db)
    if not any("|" in key for key in config_db.get("MGMT_INTERFACE") or {}):
        config_db["MGMT_INTERFACE"] = {"eth0|192.0.2.21/24": {"gwaddr": "192.0.2.1"}}
        config_db["MGMT_PORT"] = {"eth0": {"admin_status": "up", "alias": "eth0"}}
    config_db["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true"}}
    return config_db


def rehash(build_dir: Path, *paths: str) -> None:
    manifest_path = build_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for path in paths:
        manifest["files"][path] = hashlib.sha256((build_dir / path).read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2))


def completed_copy(build_dir: Path, destination: Path, edit_frr=None, boot_image: str | None = None) -> Path:
    """A copy of `build_dir` whose every switch config is complete for a replace; `edit_frr`
    (text -> text) changes every SONiC frr.conf; `boot_image` pins that image on every switch
    that has none in topology.json."""
    shutil.copytree(build_dir, destination)
    changed = []
    for path in sorted((destination / "configs").glob("*.cfg")):
        path.write_text(complete_nxos(path.read_text()))
        changed.append(f"configs/{path.name}")
    for directory in sorted(p for p in (destination / "configs").iterdir() if p.is_dir()):
        db = directory / "config_db.json"
        db.write_text(json.dumps(complete_config_db(json.loads(db.read_text())), indent=4))
        changed.append(f"configs/{directory.name}/config_db.json")
        if edit_frr:
            frr = directory / "frr.conf"
            frr.write_text(edit_frr(frr.read_text()))
            changed.append(f"configs/{directory.name}/frr.conf")
    if boot_image:
        topology_path = destination / "topology.json"
        topology = json.loads(topology_path.read_text())
        for node in topology["nodes"]:
            node.setdefault("boot_image", boot_image)
            if node.get("boot_image") is None:
                node["boot_image"] = boot_image
        topology_path.write_text(json.dumps(topology, indent=2))
        changed.append("topology.json")
    rehash(destination, *changed)
    return destination
