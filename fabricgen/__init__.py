"""fabricgen: compile an AI-cluster intent into configs, a cabling plan and a bill of materials.

The Python API (docs/python-api.md) is `fabricgen.compile(intent) -> fabricgen.Build`, raising a
`fabricgen.FabricgenError` subclass. Importing fabricgen loads none of the compiler: `compile`,
`Build` and the errors are loaded when first used.
"""

from __future__ import annotations

from fabricgen.basics.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers know the name)

if TYPE_CHECKING:
    from fabricgen.api import compile
    from fabricgen.basics.errors import FabricgenError
    from fabricgen.compiler.pipeline import Build

__all__ = ["Build", "FabricgenError", "__version__", "compile"]

_LAZY = {"compile": "fabricgen.api", "Build": "fabricgen.compiler.pipeline", "FabricgenError": "fabricgen.basics.errors"}


def __getattr__(name: str) -> object:
    """The public API, imported on first use: `import fabricgen` stays as fast as `--version`."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module 'fabricgen' has no attribute {name!r}")
