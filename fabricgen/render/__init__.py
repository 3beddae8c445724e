"""Rendering: NOS-neutral device configs -> files, each by its NOS package's adapter
(fabricgen.nos.registry); the shared templates (hosts, reports, the lab's FRR twins) live here.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.nos.interface import plugin


def render_configs(configs: Iterable[DeviceConfig]) -> dict[str, str]:
    """Every device's files, keyed by their path inside the build directory."""
    files: dict[str, str] = {}
    for config in configs:
        files.update(plugin(config.nos).render_config(config))
    return files
