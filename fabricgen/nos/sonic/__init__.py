"""SONiC (community and vendor builds): `configs/<switch>/config_db.json` and `frr.conf`.

The package's parts (fabricgen.nos.interface): `render.py` the adapter (config_db as data, FRR
through the shared frr/ template), `capabilities.py` what it can write, `releases.yaml` its
releases and features, `driver.py` fabricgen's NAPALM driver for it (registered by napalm_sonic),
`answers.py` its getters' answers parsed strictly, `push.py` and `verify.py` what push and verify
read of a config (named in PUSH and VERIFY, imported when used).
`export.py` what `fabricgen export` writes for its switches (EXPORT). `lab_endpoint.py`
(LAB_ENDPOINT, optional: a NOS without one gets no endpoint) what a lab switch's management
endpoint answers with that only SONiC has (`fabricgen lab up --management`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen.basics.trust import TOKEN, TOKEN_SAYS
from fabricgen.nos.interface import BootImage, Lazy, PushParts, Refusal, SecretSlots, VerifyParts
from fabricgen.nos.sonic import lab_endpoint
from fabricgen.nos.sonic.capabilities import (
    feature_needs,
    load_balancing_gaps,
    model_notes,
    notes,
    security_gaps,
    settings_gaps,
    unrendered,
    watchdog_values,
)
from fabricgen.nos.sonic.catalog import SonicPlatform
from fabricgen.nos.sonic.export import EXPORT as EXPORT  # what fabricgen export writes for its switches
from fabricgen.nos.sonic.secret_slots import SECRET_SLOTS

LAB_ENDPOINT = lab_endpoint  # a lab switch's management endpoint (lab up --management); an optional part

if TYPE_CHECKING:
    from fabricgen.compiler.device_config import DeviceConfig

NAME = "sonic"
TITLE = "SONiC"
DESCRIPTION = "SONiC"
IS_DEFAULT = False
RELEASES = Path(__file__).parent / "releases.yaml"
MANAGEMENT_PORT = "eth0"
# Its static default route would need an frr.conf, which this adapter builds only from BGP.
RUNS_OOB_SWITCHES = False
HEADROOM_FROM_ASIC_DELAY = True  # fabricgen writes BUFFER_PROFILE headroom, with the ASIC's MAC/PHY delay when the catalog has it
ROUTING_IS_FRR = True  # its frr.conf is what the lab runs
TEMPLATE_FILTERS: dict[str, Callable[[object], str]] = {}
PREFERS_MAPPED_PLATFORM = True  # config_db.json loads on the switch as written only with the platform's port map

PUSH = PushParts(
    napalm_driver="sonic",  # fabricgen's own, found by NAPALM's napalm_<name> lookup (napalm_sonic)
    own_driver=None,
    driver_options={"port": "port", "key_file": "path", "frr_container": "container", "lldp_container": "container", "sudo": "flag"},
    transport="ssh",  # the host key checked against known_hosts (push/known_hosts.py)
    commit_timer=None,  # the driver's own timer refuses what it cannot hold (driver.py MAX_REVERT_IN)
    merge_refused=Refusal(
        "config_db and FRR have no merge that can be checked and rolled back as one change",
        "push SONiC switches without --merge (a replace keeps the image's local users: they are not in config_db)",
    ),
    candidate=Lazy("fabricgen.nos.sonic.push:candidate"),
    replace_must_keep=Lazy("fabricgen.nos.sonic.push:replace_must_keep"),
)
VERIFY = VerifyParts(
    extensions=None,  # the driver reads every getter itself
    running_config=Lazy("fabricgen.nos.sonic.verify:running_config"),
    port_mtus=Lazy("fabricgen.nos.sonic.verify:port_mtus"),
    mask_slots=Lazy("fabricgen.nos.sonic.verify:mask_slots"),
    as_shown=Lazy("fabricgen.nos.sonic.verify:as_frr_shows"),
)

# the build's secrets, the catalog's and the intent's per-NOS sections
SECRETS = SecretSlots(slots=SECRET_SLOTS, files=("config_db.json",))  # its frr.conf has FRR's slots
CATALOG_PLATFORM = SonicPlatform  # `sonic:` in a switch entry: the platform, hwsku and port map
BOOT_IMAGE = BootImage(
    pattern=f"^{TOKEN.pattern}$",
    pattern_says=TOKEN_SAYS,
    description="the image name `sonic-installer list` shows, e.g. SONiC-OS-202405.0",
    example="SONiC-OS-202405.0",
    # `sonic-installer list` names an image SONiC-OS-<version>: a community build's version starts
    # with its branch (SONiC-OS-202405.0, sonic-utilities sonic_installer/common.py: IMAGE_PREFIX
    # "SONiC-OS-"), Broadcom Enterprise SONiC's with its release (SONiC-OS-4.2.1-Enterprise_Advanced,
    # seed 003's appendix). A master build (SONiC-OS-master.<build>) names no release.
    release_in_name=r"SONiC-OS-(?:(\d{6})\.[A-Za-z0-9._-]*|(\d{1,2}\.\d{1,2}\.\d{1,2})-[A-Za-z0-9._-]*)",
)

__all__ = ["feature_needs", "load_balancing_gaps", "model_notes", "notes", "security_gaps", "settings_gaps", "unrendered", "watchdog_values"]


def config_files(hostname: str) -> tuple[str, ...]:
    return (f"configs/{hostname}/config_db.json", f"configs/{hostname}/frr.conf")


def render_config(config: DeviceConfig) -> dict[str, str]:
    from fabricgen.nos.sonic.render import render_sonic  # Jinja only when a config is written

    return render_sonic(config)
