"""What `fabricgen push` hands each driver, and what it refuses before contacting any device.

- Secrets: the build writes `<<secret=NAME>>` where a key goes. `read_secrets` collects the names
  every selected config uses (from the verified staged copies) and loads their values
  (`FABRICGEN_SECRET_<NAME>`, `--secrets FILE`); one missing is a refusal naming the secret, its
  environment variable and the devices that need it, and so is a value the field it goes into
  refuses on that switch's release (fabricgen.build.secrets.SLOTS: an SNMPv3 key with `:` on SONiC). `candidate` fills them in, in memory only:
  the text goes to the driver as `load_*_candidate(config=...)`, never to a file or a command line.
- Completeness: `--commit` replaces a switch's whole config, so a config without a way back in
  (management VRF and address, a login, SSH, the boot image) would lock everyone out.
  `check_complete` refuses such a build, naming what each switch lacks.

SONiC candidates are one JSON text, `{"config_db": {...tables...}, "frr": "frr.conf text"}`: what
fabricgen's SonicDriver takes as `load_replace_candidate(config=...)`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from fabricgen.basics.errors import Problem, PushError, raise_if
from fabricgen.build.secrets import Secrets, env_name, load_secrets, names_in, placements, value_problems
from fabricgen.push.inventory import Target

SONIC_FILES = ("config_db.json", "frr.conf")


def config_files(target: Target) -> dict[str, str]:
    """The target's staged config files as text, by file name."""
    if target.nos == "sonic":
        return {name: (target.config / name).read_text() for name in SONIC_FILES}
    return {target.config.name: target.config.read_text()}


def read_secrets(targets: list[Target], secrets_file: Path | None = None, environ: Mapping[str, str] = os.environ) -> Secrets:
    """The values of every secret the targets' configs refer to; PushError naming each missing one
    and each value a field it goes into refuses, before any device is contacted."""
    users: dict[str, list[str]] = {}
    slots = []
    for target in targets:
        for file_name, text in config_files(target).items():
            for name in names_in(text):
                users.setdefault(name, []).append(target.name)
            slots += [(p.name, p.slot, target.nos_release, target.name) for p in placements(file_name, text, target.nos)[0]]
    secrets = load_secrets(users, secrets_file, environ)
    problems = value_problems(slots, secrets)
    for name in sorted(set(users) - set(secrets.values)):
        devices = sorted(set(users[name]))
        shown = ", ".join(devices[:3]) + (f" and {len(devices) - 3} more" if len(devices) > 3 else "")
        problems.append(
            Problem(
                f"secret {name!r} has no value; the configs of {shown} use it",
                hint=f"export {env_name(name)}=... or add `{name}: ...` to the secrets file (--secrets FILE, mode 0600)",
                device=devices[0],
            )
        )
    raise_if(problems, PushError)
    return secrets


def candidate(target: Target, secrets: Secrets) -> str:
    """The config to load, secrets filled in (in memory). SONiC: the JSON object the driver takes."""
    files = config_files(target)
    if target.nos != "sonic":
        return secrets.fill(files[target.config.name])
    config_db = json.loads(secrets.fill(files["config_db.json"], in_json=True))  # a `"` in a value stays in its string
    return json.dumps({"config_db": config_db, "frr": secrets.fill(files["frr.conf"])})


# --- completeness ------------------------------------------------------------------------------


def check_complete(targets: list[Target]) -> None:
    """PushError, one line per incomplete switch naming what its config lacks for a replace."""
    problems = []
    for target in targets:
        missing = missing_parts(target)
        if missing:
            problems.append(
                Problem(
                    f"its config is not complete enough to replace the running one; missing: {'; '.join(missing)}",
                    device=target.name,
                    hint="add a `management` section (and an oob network) to the intent and rebuild, or push with --merge (adds, removes nothing)",
                )
            )
    raise_if(problems, PushError)


def missing_parts(target: Target) -> list[str]:
    files = config_files(target)
    if target.nos == "sonic":
        return _sonic_missing(json.loads(files["config_db.json"]), target)
    if target.nos == "eos":
        from fabricgen.nos.eos.push import missing_parts as eos_missing  # EOS's own rules (its management port in a VRF, eAPI, SSH)

        return eos_missing(files[target.config.name])
    return _nxos_missing(files[target.config.name], target)


def _nxos_missing(config: str, target: Target) -> list[str]:
    """NX-OS: what a replace must keep so the switch can still be reached and logged into."""
    lines = config.splitlines()
    top = {line.rstrip() for line in lines if line and not line[0].isspace()}
    missing = []
    if "vrf context management" not in top:
        missing.append("`vrf context management`")
    mgmt0 = _block(lines, "interface mgmt0")
    if not any(line.strip() == "vrf member management" for line in mgmt0) or not any(re.match(r"\s+ip address \S+", line) for line in mgmt0):
        missing.append("`interface mgmt0` with `vrf member management` and an `ip address`")
    if not any(line.startswith("aaa authentication login") or re.match(r"username \S+ ", line) for line in top):
        missing.append("a login: `aaa authentication login ...` or a local `username`")
    # SSH: Cisco Nexus 9000 NX-OS Security Configuration Guide, "Configuring SSH and Telnet":
    # `feature ssh` (the SSH server) and `feature telnet` (off by default; a replace without it
    # turns it off, so `no feature telnet` or its absence both do).
    if "feature ssh" not in top:
        missing.append("`feature ssh`")
    if "feature telnet" in top:
        missing.append("telnet off (the config has `feature telnet`)")
    boot = [line for line in top if line.startswith("boot nxos ")]
    if not boot:
        missing.append("the boot image (`boot nxos bootflash:...`)")
    elif target.boot_image and not any(line.endswith(target.boot_image) for line in boot):
        missing.append(f"`boot nxos` naming the pinned image {target.boot_image}")
    return missing


def _sonic_missing(config_db: dict, target: Target) -> list[str]:
    """SONiC: the management interface in the management VRF, a login that works, a pinned image.
    Local Linux users (the image's `admin`) live in /etc/passwd, not config_db, so a replace of
    config_db cannot delete them: without an AAA table login stays local."""
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
    if not target.boot_image:
        missing.append("a pinned image (topology.json `boot_image`: the intent's management.boot.sonic)")
    return missing


def _block(lines: list[str], header: str) -> list[str]:
    """The indented lines under a top-level `header` line."""
    block, inside = [], False
    for line in lines:
        if line.rstrip() == header:
            inside = True
        elif inside and line[:1].isspace():
            block.append(line)
        elif inside:
            break
    return block
