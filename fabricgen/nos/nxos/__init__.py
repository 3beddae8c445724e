"""Cisco NX-OS (Nexus 9000, the nxos64-cs image): one `configs/<switch>.cfg` per switch.

The package's parts (fabricgen.nos.interface): `render.py` the adapter and `templates/` its
syntax, `capabilities.py` what it can write, `releases.yaml` its releases and features, `push.py`
fabricgen's NAPALM driver for it and what push reads of a config, `verify.py` the readings NAPALM's
driver lacks and what verify reads of a config (both named in PUSH and VERIFY, imported when used).
`export.py` what `fabricgen export` writes for its switches (EXPORT).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen.nos.interface import BootImage, CommitTimer, Lazy, PushParts, SecretSlots, VerifyParts
from fabricgen.nos.nxos.capabilities import (
    feature_needs,
    load_balancing_gaps,
    model_notes,
    notes,
    security_gaps,
    settings_gaps,
    unrendered,
    watchdog_values,
)
from fabricgen.nos.nxos.export import EXPORT as EXPORT  # what fabricgen export writes for its switches
from fabricgen.nos.nxos.secret_slots import SECRET_SLOTS
from fabricgen.nos.nxos.text import nxos_text

if TYPE_CHECKING:
    from fabricgen.compiler.device_config import DeviceConfig

NAME = "nxos"
TITLE = "NX-OS"
DESCRIPTION = "Cisco NX-OS"
IS_DEFAULT = True
RELEASES = Path(__file__).parent / "releases.yaml"
MANAGEMENT_PORT = "mgmt0"
RUNS_OOB_SWITCHES = True  # the OOB access switches route statically, which only this adapter writes
HEADROOM_FROM_ASIC_DELAY = False  # NX-OS's own buffer profiles size the headroom; fabricgen writes none
ROUTING_IS_FRR = False  # the lab runs a routing twin for it (lab/frr/)
TEMPLATE_FILTERS: dict[str, Callable[[object], str]] = {"nxos_text": nxos_text}
PREFERS_MAPPED_PLATFORM = False

# "The timer value range is between 30-3600 seconds." (Cisco Nexus 7000 Series NX-OS Fundamentals
# Configuration Guide 8.x, "Configure Replace"; the Nexus 9000 chapter describes the same feature)
COMMIT_TIMEOUT_RANGE = (30, 3600)
PUSH = PushParts(
    napalm_driver="nxos",  # NAPALM's NX-API driver, through fabricgen's subclass:
    own_driver=Lazy("fabricgen.nos.nxos.push:NxosDriver"),  # candidates from memory, commit-confirm
    driver_options={"transport": "transport", "nxos_protocol": "transport", "port": "port", "ssl_verify": "tls_verify"},
    transport="https",  # NX-API: the certificate checked against --ca-bundle or the system's CAs
    commit_timer=CommitTimer("NX-OS's commit-timeout", *COMMIT_TIMEOUT_RANGE),
    merge_refused=None,
    candidate=Lazy("fabricgen.nos.nxos.push:candidate"),
    replace_must_keep=Lazy("fabricgen.nos.nxos.push:replace_must_keep"),
)
VERIFY = VerifyParts(
    extensions=Lazy("fabricgen.nos.nxos.verify:EXTENSIONS"),  # ECMP widths and PFC counters from `show ... | json`
    running_config=Lazy("fabricgen.nos.indented_config:running_config"),
    port_mtus=Lazy("fabricgen.nos.indented_config:port_mtus"),
    mask_slots=Lazy("fabricgen.nos.nxos.verify:mask_slots"),
)

# the build's secrets, the catalog's and the intent's per-NOS sections
SECRETS = SecretSlots(slots=SECRET_SLOTS, files=("*.cfg",))
CATALOG_PLATFORM = None  # a switch entry has no NX-OS section
BOOT_IMAGE = BootImage(
    pattern_says="an NX-OS image file name: a letter or digit, then letters, digits and . _ -, ending in .bin",
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.bin$",
    description="NX-OS image file on bootflash:, e.g. nxos64-cs.10.4.5.M.bin",
    example="nxos64-cs.10.4.5.M.bin",
    # nxos64-cs (Cloud Scale) and nxos64-msll (R-series) images are named <major>.<minor>.
    # <maintenance>.<designation>.bin for release major.minor(maintenance)designation, e.g.
    # nxos64-cs.10.5.1.F.bin is 10.5(1)F, F a feature and M a maintenance release (two 64-bit
    # image types since 10.2(2)F: "Breaking Down the NX-OS Image Filename", netterrene.blogspot.com,
    # 2025-11; the shipped intents' nxos64-cs.10.4.5.M.bin is Cisco's 10.4(5)M download)
    release_in_name=r"nxos64-(?:cs|msll)\.(\d{1,2})\.(\d{1,2})\.(\d{1,2})\.([A-Z])\.bin",
    release_form="{0}.{1}({2}){3}",
)

__all__ = ["feature_needs", "load_balancing_gaps", "model_notes", "notes", "security_gaps", "settings_gaps", "unrendered", "watchdog_values"]


def config_files(hostname: str) -> tuple[str, ...]:
    return (f"configs/{hostname}.cfg",)


def render_config(config: DeviceConfig) -> dict[str, str]:
    from fabricgen.nos.nxos.render import render_nxos  # Jinja only when a config is written

    return render_nxos(config)
