"""Rendering: NOS-neutral device configs -> files, one small adapter per NOS.

Adding a NOS means a template folder and an adapter registered in RENDERERS; nothing in the
compiler changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fabricgen.device_config import DeviceConfig
from fabricgen.render.nxos import render_nxos
from fabricgen.render.sonic import render_sonic

RENDERERS: dict[str, Callable[[DeviceConfig], dict[str, str]]] = {
    "nxos": render_nxos,
    "sonic": render_sonic,
}


def render_configs(configs: Iterable[DeviceConfig]) -> dict[str, str]:
    """Every device's files, keyed by their path inside the build directory."""
    files: dict[str, str] = {}
    for config in configs:
        files.update(RENDERERS[config.nos](config))
    return files
