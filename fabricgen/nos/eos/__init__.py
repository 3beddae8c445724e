"""Arista EOS (the 7060X5/X6 fixed switches; the EOS64.swi image): one `configs/<switch>.cfg`.

The package's parts (fabricgen.nos.interface): `render.py` the adapter and `templates/` its
syntax (every line shape's source: docs/reference/eos.md), `capabilities.py` what it can write,
`releases.yaml` its releases and features, `system.py` the management baseline, `push.py`
fabricgen's NAPALM driver for it and what push reads of a config, `verify.py` the readings NAPALM's
driver lacks and what verify reads of a config (both named in PUSH and VERIFY, imported when used).
`export.py` what `fabricgen export` writes for its switches (EXPORT).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen.nos.eos.capabilities import (
    feature_needs,
    load_balancing_gaps,
    model_notes,
    notes,
    security_gaps,
    settings_gaps,
    unrendered,
    watchdog_values,
)
from fabricgen.nos.eos.catalog import EosPlatform
from fabricgen.nos.eos.export import EXPORT as EXPORT  # what fabricgen export writes for its switches
from fabricgen.nos.eos.secret_slots import SECRET_SLOTS
from fabricgen.nos.eos.text import eos_text
from fabricgen.nos.interface import BootImage, CommitTimer, Lazy, PushParts, SecretSlots, VerifyParts

if TYPE_CHECKING:
    from fabricgen.compiler.device_config import DeviceConfig

NAME = "eos"
TITLE = "EOS"
DESCRIPTION = "Arista EOS"
IS_DEFAULT = False
RELEASES = Path(__file__).parent / "releases.yaml"
MANAGEMENT_PORT = "Management1"
RUNS_OOB_SWITCHES = False  # the OOB access switches' static-route config is NX-OS's only so far
ROUTING_IS_FRR = False  # the lab runs a routing twin for it (lab/frr/)
TEMPLATE_FILTERS: dict[str, Callable[[object], str]] = {"eos_text": eos_text}
HEADROOM_FROM_ASIC_DELAY = False  # fabricgen writes no EOS buffer config: the platform's defaults stay
PREFERS_MAPPED_PLATFORM = False

# hh:mm:ss, which NAPALM writes with time.gmtime: 24 hours or more would wrap to a short timer
COMMIT_TIMER_RANGE = (1, 86_399)
PUSH = PushParts(
    napalm_driver="eos",  # NAPALM's eAPI driver, through fabricgen's subclass:
    own_driver=Lazy("fabricgen.nos.eos.push:EosDriver"),  # a verified, bounded eAPI transport
    driver_options={"port": "port", "ssl_verify": "tls_verify"},  # eAPI over HTTPS only
    transport="https",  # eAPI: the certificate checked against --ca-bundle or the system's CAs
    commit_timer=CommitTimer("EOS's commit timer", *COMMIT_TIMER_RANGE),
    merge_refused=None,
    candidate=Lazy("fabricgen.nos.eos.push:candidate"),
    replace_must_keep=Lazy("fabricgen.nos.eos.push:replace_must_keep"),
)
VERIFY = VerifyParts(
    extensions=Lazy("fabricgen.nos.eos.verify:EXTENSIONS"),  # ECMP widths and PFC counters from eAPI's JSON
    running_config=Lazy("fabricgen.nos.indented_config:running_config"),
    port_mtus=Lazy("fabricgen.nos.indented_config:port_mtus"),
    mask_slots=Lazy("fabricgen.nos.eos.verify:mask_slots"),
)

# the build's secrets, the catalog's and the intent's per-NOS sections
SECRETS = SecretSlots(slots=SECRET_SLOTS, files=("*.cfg",))
CATALOG_PLATFORM = EosPlatform  # `eos:` in a switch entry: the transmit queue sub-mode
BOOT_IMAGE = BootImage(
    pattern_says="an EOS image file name: a letter or digit, then letters, digits and . _ -, ending in .swi",
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.swi$",
    description="EOS image file on flash: that `show boot-config` names, e.g. EOS-4.32.2F.swi (push checks the switch runs and boots it)",
    example="EOS-4.32.2F.swi",
    # Arista's software downloads name an image after its release: EOS-4.32.2F.swi, the 64-bit
    # EOS64-4.32.2F.swi (the image types titom73/eos-downloader fetches: EOS, EOS64, cEOS ...)
    release_in_name=r"EOS(?:64)?-(\d{1,2}\.\d{1,2}\.\d{1,2}(?:\.\d{1,2})?[A-Z]{0,2})\.swi",
)

__all__ = [
    "feature_needs",
    "load_balancing_gaps",
    "model_notes",
    "notes",
    "security_gaps",
    "settings_gaps",
    "unrendered",
    "watchdog_values",
]


def config_files(hostname: str) -> tuple[str, ...]:
    return (f"configs/{hostname}.cfg",)


def render_config(config: DeviceConfig) -> dict[str, str]:
    from fabricgen.nos.eos.render import render_eos  # Jinja only when a config is written

    return render_eos(config)
