"""fabricgen: compile an AI-cluster intent into configs, a cabling plan and a bill of materials."""

from fabricgen.version import __version__

__all__ = ["__version__"]
