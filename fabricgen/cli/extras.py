"""The optional parts of fabricgen (pip extras) and the commands that need them.

A base install (`pip install fabricgen`) builds, validates, diffs, runs the lab and writes test
plans. `push` and `verify` need the `push` extra (NAPALM, paramiko, scp), `analyze` the `analyze`
extra (numpy, networkx, matplotlib), `export netbox --push` the `netbox` extra (requests). A command whose extra is missing stops before it reads
anything, naming the extra to install, instead of a traceback from an import.
"""

from __future__ import annotations

import importlib.util
import sys

import typer

from fabricgen.cli.common import EXIT_INPUT

# extra -> the modules fabricgen imports from it; pyproject.toml's optional-dependencies list the
# distributions of the same names (tests/test_packaging.py holds the two together)
EXTRAS: dict[str, tuple[str, ...]] = {
    "push": ("napalm", "paramiko", "scp"),
    "analyze": ("numpy", "networkx", "matplotlib"),
    "netbox": ("requests",),  # export netbox --push (fabricgen/export/netbox_push.py names it when missing)
}


def missing_modules(extra: str) -> list[str]:
    """The modules of `extra` that cannot be imported here (found, not imported: no cost)."""
    return [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def require_extra(extra: str, command: str) -> None:
    """Exit 2 with the pip command to run when `extra` is not installed."""
    missing = missing_modules(extra)
    if missing:
        sys.stderr.write(f"fabricgen {command} needs the '{extra}' extra: pip install 'fabricgen[{extra}]' (not installed: {', '.join(missing)})\n")
        raise typer.Exit(EXIT_INPUT)
