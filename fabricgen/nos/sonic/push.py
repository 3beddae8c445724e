"""What `fabricgen push` asks of a SONiC build besides its driver (driver.py): the candidate the
driver takes, and what a replace must keep.

A SONiC candidate is one JSON text, `{"config_db": {...tables...}, "frr": "frr.conf text"}`: what
SonicDriver's `load_replace_candidate(config=...)` takes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabricgen.nos.interface import SecretValues


def candidate(files: Mapping[str, str], secrets: SecretValues) -> str:
    """config_db.json and frr.conf as the driver's one JSON candidate, secrets filled in."""
    config_db = json.loads(secrets.fill(files["config_db.json"], in_json=True))  # a `"` in a value stays in its string
    return json.dumps({"config_db": config_db, "frr": secrets.fill(files["frr.conf"])})


def replace_must_keep(files: Mapping[str, str], boot_image: str | None) -> list[str]:
    """The management interface in the management VRF, a login that works, a pinned image.
    Local Linux users (the image's `admin`) live in /etc/passwd, not config_db, so a replace of
    config_db cannot delete them: without an AAA table login stays local."""
    config_db = json.loads(files["config_db.json"])
    missing = []
    # sonic-mgmt_interface.yang: MGMT_INTERFACE keys "eth0|ADDRESS/LEN"; sonic-mgmt_vrf.yang:
    # MGMT_VRF_CONFIG|vrf_global mgmtVrfEnabled
    if not any("|" in key for key in (config_db.get("MGMT_INTERFACE") or {})):
        missing.append("MGMT_INTERFACE (eth0 with an address)")
    if str((config_db.get("MGMT_VRF_CONFIG") or {}).get("vrf_global", {}).get("mgmtVrfEnabled", "")).lower() != "true":
        missing.append("the management VRF (MGMT_VRF_CONFIG|vrf_global mgmtVrfEnabled true)")
    # sonic-system-aaa.yang: AAA|authentication login, e.g. "tacacs+,local"
    login = str((config_db.get("AAA") or {}).get("authentication", {}).get("login", "local"))
    methods = [method.strip() for method in login.split(",") if method.strip()]
    servers = {"tacacs+": "TACPLUS_SERVER", "radius": "RADIUS_SERVER"}
    if "local" not in methods and not any(config_db.get(servers[m]) for m in methods if m in servers):
        missing.append(f"a login: AAA login {login!r} has no server table ({', '.join(servers.values())}) and no local fallback")
    if not boot_image:
        missing.append("a pinned image (topology.json `boot_image`: the intent's management.boot.sonic)")
    # a flavour whose frrcfgd builds FRR's config from config_db (Broadcom Enterprise SONiC: the
    # routing-in-config-db feature) must not also get frr.conf through frr-reload.py, which this
    # driver runs: refused until a driver pushes config_db alone (docs/not-yet.md)
    if "BGP_GLOBALS" in config_db:
        missing.append("a driver for BGP in config_db: this flavour's frrcfgd owns FRR's config, and fabricgen's SONiC driver would also reload frr.conf")
    return missing
