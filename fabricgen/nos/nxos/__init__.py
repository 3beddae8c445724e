"""Cisco NX-OS (Nexus 9000, the nxos64-cs image): one `configs/<switch>.cfg` per switch.

The package's parts (fabricgen.nos.interface): `render.py` the adapter and `templates/` its
syntax, `capabilities.py` what it can write, `releases.yaml` its releases and features, `push.py`
fabricgen's NAPALM driver for it, `verify.py` the readings NAPALM's driver lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabricgen.nos.interface import BootImage, SecretSlots
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

# the build's secrets, the catalog's and the intent's per-NOS sections
SECRETS = SecretSlots(slots=SECRET_SLOTS, files=("*.cfg",))
CATALOG_PLATFORM = None  # a switch entry has no NX-OS section
BOOT_IMAGE = BootImage(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.bin$",
    description="NX-OS image file on bootflash:, e.g. nxos64-cs.10.4.5.M.bin",
    example="nxos64-cs.10.4.5.M.bin",
)

__all__ = ["feature_needs", "load_balancing_gaps", "model_notes", "notes", "security_gaps", "settings_gaps", "unrendered", "watchdog_values"]


def config_files(hostname: str) -> tuple[str, ...]:
    return (f"configs/{hostname}.cfg",)


def render_config(config: DeviceConfig) -> dict[str, str]:
    from fabricgen.nos.nxos.render import render_nxos  # Jinja only when a config is written

    return render_nxos(config)
