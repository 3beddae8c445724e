"""The NOS packages fabricgen knows: found under `fabricgen.nos`, checked when registered.

`plugins()` imports every package below `fabricgen.nos` (a folder with an `__init__.py`) and
checks it against `PARTS`: a package that lacks a part, or gives one of
the wrong kind, stops fabricgen with `NosRegistrationError` naming the package and the part, so a
half-made NOS never silently passes a check it cannot answer.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType

import fabricgen.nos

NOT_NOS_PACKAGES = frozenset({"interface", "registry"})  # the modules of fabricgen.nos itself
INTERFACE = "fabricgen.nos.interface"


def declared(name: str, *, a_class: bool = False) -> Callable[[object], bool]:
    """The kind of a part that is an instance of the interface's class `name` (a stage's parts,
    one frozen dataclass), or with `a_class` that class or a subclass of it, or None. The class
    is named, not imported: the interface imports this registry."""

    def fits(value: object) -> bool:
        if a_class and value is None:
            return True
        kind = value if a_class else type(value)
        return isinstance(kind, type) and any(base.__module__ == INTERFACE and base.__qualname__ == name for base in kind.__mro__)

    fits.__name__ = f"a {name} class or None" if a_class else name
    return fits


# Each part of the interface (fabricgen.nos.interface.NosPackage), what it must be, and what it is for
# (the message when a package lacks it).
PARTS: dict[str, tuple[type | Callable[[object], bool], str]] = {
    "NAME": (str, "the NOS's name as intents write it"),
    "TITLE": (str, "the name problems and notes give it"),
    "DESCRIPTION": (str, "its one-line description"),
    "IS_DEFAULT": (bool, "whether it is the default NOS"),
    "RELEASES": (Path, "the path of its releases.yaml"),
    "MANAGEMENT_PORT": (str, "its out-of-band Ethernet port's name"),
    "RUNS_OOB_SWITCHES": (bool, "whether it writes OOB access switches"),
    "PREFERS_MAPPED_PLATFORM": (bool, "whether init prefers models with a platform port map"),
    "ROUTING_IS_FRR": (bool, "whether its routing config is an frr.conf the lab runs"),
    "TEMPLATE_FILTERS": (dict, "the Jinja filters its templates use"),
    "HEADROOM_FROM_ASIC_DELAY": (bool, "whether its headroom counts the ASIC's MAC/PHY delay"),
    "config_files": (callable, "the files a switch's config is made of"),
    "render_config": (callable, "the adapter: a device config to files"),
    "load_balancing_gaps": (callable, "what it cannot write of load balancing"),
    "security_gaps": (callable, "what it cannot write of BGP security and management"),
    "watchdog_values": (callable, "the PFC watchdog numbers it writes"),
    "unrendered": (callable, "what it leaves out of a management section"),
    "feature_needs": (callable, "the release features its configs always use"),
    "settings_gaps": (callable, "what it cannot write of a network's own settings"),
    "notes": (callable, "its build notes on a network"),
    "model_notes": (callable, "its build notes on a catalog model"),
    "EXPORT": (declared("ExportParts"), "what fabricgen export writes for its switches"),
    "PUSH": (declared("PushParts"), "how push reaches and changes its switches"),
    "VERIFY": (declared("VerifyParts"), "what verify reads of its switches beyond NAPALM's getters"),
    # the build's secrets, the catalog's and the intent's per-NOS sections
    "SECRETS": (declared("SecretSlots"), "where its build files carry secrets"),
    "CATALOG_PLATFORM": (declared("CatalogPlatform", a_class=True), "its section of a catalog switch entry"),
    "BOOT_IMAGE": (declared("BootImage"), "the image name its switches boot"),
}


class NosRegistrationError(RuntimeError):
    """A NOS package that does not give fabricgen every part of the interface (a programming
    error in fabricgen or a plug-in, not a user's input problem)."""


@cache
def plugins() -> dict[str, ModuleType]:
    """Every NOS package by name, in name order."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(fabricgen.nos.__path__), key=lambda info: info.name):
        if not info.ispkg or info.name in NOT_NOS_PACKAGES:
            continue
        module = importlib.import_module(f"fabricgen.nos.{info.name}")
        found[info.name] = register(module)
    defaults = [name for name, plugin in found.items() if plugin.IS_DEFAULT]
    if len(defaults) != 1:
        raise NosRegistrationError(f"exactly one NOS package must set IS_DEFAULT = True; these do: {', '.join(defaults) or 'none'}")
    return found


def register(module: ModuleType) -> ModuleType:
    """`module` as a NOS package, once every part of the interface is there and of its kind."""
    short = module.__name__.rpartition(".")[2]
    problems = []
    for part, (kind, what) in PARTS.items():
        if not hasattr(module, part):
            problems.append(f"lacks {part} ({what})")
            continue
        value = getattr(module, part)
        fits = isinstance(value, kind) if isinstance(kind, type) else kind(value)
        if not fits or (kind is bool and not isinstance(value, bool)):
            problems.append(f"gives {part} as {type(value).__name__}, not {getattr(kind, '__name__', 'a function')} ({what})")
    if not problems and short != module.NAME:
        problems.append(f"gives NAME {module.NAME!r}, not its package's name {short!r}")
    if not problems and not module.RELEASES.is_file():
        problems.append(f"gives RELEASES {module.RELEASES}, which is not a file")
    if problems:
        raise NosRegistrationError(f"NOS package {module.__name__} " + "; ".join(problems))
    return module


def names() -> tuple[str, ...]:
    return tuple(plugins())


def default_name() -> str:
    return next(name for name, package in plugins().items() if package.IS_DEFAULT)


def title(name: str) -> str:
    """How problems and notes name the NOS: "NX-OS"; the name itself for one fabricgen lacks."""
    found = plugins().get(name)
    return found.TITLE if found is not None else name
