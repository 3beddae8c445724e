"""The NOS packages fabricgen knows: found under `fabricgen.nos`, checked when registered.

`plugins()` imports every package below `fabricgen.nos` (a folder with an `__init__.py`) and
checks it against `fabricgen.nos.interface.PARTS`: a package that lacks a part, or gives one of
the wrong kind, stops fabricgen with `NosRegistrationError` naming the package and the part, so a
half-made NOS never silently passes a check it cannot answer.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import cast

import fabricgen.nos
from fabricgen.nos.interface import PARTS, NosPackage

NOT_NOS_PACKAGES = frozenset({"interface", "registry"})  # the modules of fabricgen.nos itself


class NosRegistrationError(RuntimeError):
    """A NOS package that does not give fabricgen every part of the interface (a programming
    error in fabricgen or a plug-in, not a user's input problem)."""


@cache
def plugins() -> dict[str, NosPackage]:
    """Every NOS package by name, in name order."""
    found: dict[str, NosPackage] = {}
    for info in sorted(pkgutil.iter_modules(fabricgen.nos.__path__), key=lambda info: info.name):
        if not info.ispkg or info.name in NOT_NOS_PACKAGES:
            continue
        module = importlib.import_module(f"fabricgen.nos.{info.name}")
        found[info.name] = register(module)
    defaults = [name for name, plugin in found.items() if plugin.IS_DEFAULT]
    if len(defaults) != 1:
        raise NosRegistrationError(f"exactly one NOS package must set IS_DEFAULT = True; these do: {', '.join(defaults) or 'none'}")
    return found


def register(module: ModuleType) -> NosPackage:
    """`module` as a NOS package, once every part of the interface is there and of its kind."""
    short = module.__name__.rpartition(".")[2]
    problems = []
    for part, (kind, what) in PARTS.items():
        if not hasattr(module, part):
            problems.append(f"lacks {part} ({what})")
            continue
        value = getattr(module, part)
        fits = kind(value) if kind is callable else isinstance(value, kind)  # type: ignore[arg-type]
        if not fits or (kind is bool and not isinstance(value, bool)):
            problems.append(f"gives {part} as {type(value).__name__}, not {getattr(kind, '__name__', 'a function')} ({what})")
    if not problems and short != module.NAME:
        problems.append(f"gives NAME {module.NAME!r}, not its package's name {short!r}")
    if not problems and not module.RELEASES.is_file():
        problems.append(f"gives RELEASES {module.RELEASES}, which is not a file")
    if problems:
        raise NosRegistrationError(f"NOS package {module.__name__} " + "; ".join(problems))
    return cast(NosPackage, module)


def plugin(name: str) -> NosPackage:
    """The NOS package `name` (KeyError if there is none: names reach here validated)."""
    return plugins()[name]


def names() -> tuple[str, ...]:
    return tuple(plugins())


def default_name() -> str:
    return next(name for name, package in plugins().items() if package.IS_DEFAULT)


def title(name: str) -> str:
    """How problems and notes name the NOS: "NX-OS"; the name itself for one fabricgen lacks."""
    found = plugins().get(name)
    return found.TITLE if found is not None else name
