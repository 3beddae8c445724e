"""Rendering: NOS-neutral device configs -> files, one small adapter per NOS.

Adding a NOS means a template folder and an adapter registered in RENDERERS; nothing in the
compiler changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from fabricgen.device_config import DeviceConfig
from fabricgen.intent.management import BgpSecurity, Management
from fabricgen.intent.model import Backend, HostFabric, LoadBalancing, PfcWatchdog
from fabricgen.nos.eos import render as eos
from fabricgen.nos.eos import system as eos_system  # the management baseline's gaps and notes
from fabricgen.nos.eos.render import render_eos
from fabricgen.nos.nxos import render as nxos
from fabricgen.nos.nxos.render import render_nxos
from fabricgen.nos.sonic import render as sonic
from fabricgen.nos.sonic.render import render_sonic
from fabricgen.render.capability import Gap

RENDERERS: dict[str, Callable[[DeviceConfig], dict[str, str]]] = {
    "nxos": render_nxos,
    "sonic": render_sonic,
    "eos": render_eos,
}


# What each adapter cannot write of a fabric's load balancing (the checks ask before rendering).
LOAD_BALANCING_GAPS: dict[str, Callable[[LoadBalancing], list[Gap]]] = {
    "nxos": nxos.load_balancing_gaps,
    "sonic": sonic.load_balancing_gaps,
    "eos": eos.load_balancing_gaps,
}


def load_balancing_gaps(nos: str, lb: LoadBalancing) -> list[Gap]:
    """What the `nos` adapter cannot write of `lb`; nothing when it can write it all."""
    return LOAD_BALANCING_GAPS[nos](lb)


# The PFC watchdog numbers each adapter writes, by the catalog's parameter names (nos.yaml
# pfc-watchdog `parameters`), with the intent field each comes from: the checks hold them to the
# target release's documented ranges.
WATCHDOG_VALUES: dict[str, Callable[[PfcWatchdog], dict[str, tuple[int, str]]]] = {
    "nxos": nxos.watchdog_values,
    "sonic": sonic.watchdog_values,
    "eos": eos.watchdog_values,
}


def watchdog_values(nos: str, watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
    adapter = WATCHDOG_VALUES.get(nos)
    return adapter(watchdog) if adapter else {}


# What each adapter cannot write of a network's BGP security or a switch's management section.
SECURITY_GAPS: dict[str, Callable[[BgpSecurity, Management | None], list[Gap]]] = {
    "nxos": lambda security, _: [replace(gap, field=f"bgp_security.{gap.field}") for gap in nxos.bgp_security_gaps(security)],
    "sonic": sonic.security_gaps,
    "eos": eos_system.security_gaps,
}


# What each adapter leaves out of a management section without it being an error, on a release
# with these features (nos.yaml): a build note.
UNRENDERED: dict[str, Callable[[Management, frozenset[str]], list[str]]] = {
    "nxos": lambda management, _features: nxos.unrendered(management),
    "sonic": sonic.unrendered,
    "eos": eos_system.unrendered,
}


def unrendered_management(nos: str, management: Management, features: frozenset[str]) -> list[str]:
    adapter = UNRENDERED.get(nos)
    return adapter(management, features) if adapter else []


def security_gaps(nos: str, security: BgpSecurity, management: Management | None) -> list[Gap]:
    """What the `nos` adapter cannot write of `security` and `management`; Gap.field is a dotted
    path: bgp_security.* below the network section, management.* below a management section."""
    adapter = SECURITY_GAPS.get(nos)
    return adapter(security, management) if adapter else []


# What an adapter cannot write of a routed network's own settings (BFD, MTU...): Gap.field is the
# path below the network section. NOSes that can write them all have no entry.
SETTINGS_GAPS: dict[str, Callable[[Backend | HostFabric], list[Gap]]] = {
    "eos": eos.settings_gaps,
}


def settings_gaps(nos: str, spec: Backend | HostFabric) -> list[Gap]:
    adapter = SETTINGS_GAPS.get(nos)
    return adapter(spec) if adapter else []


# What an adapter leaves to the switch, or writes otherwise than the network asks, that the build
# notes should say (once per NOS and network).
NOTES: dict[str, Callable[[Backend | HostFabric], list[str]]] = {
    "eos": eos.notes,
}


def adapter_notes(nos: str, spec: Backend | HostFabric) -> list[str]:
    adapter = NOTES.get(nos)
    return adapter(spec) if adapter else []


def render_configs(configs: Iterable[DeviceConfig]) -> dict[str, str]:
    """Every device's files, keyed by their path inside the build directory."""
    files: dict[str, str] = {}
    for config in configs:
        files.update(RENDERERS[config.nos](config))
    return files
