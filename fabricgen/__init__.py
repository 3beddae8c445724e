"""fabricgen: compile an AI-cluster intent into configs, a cabling plan and a bill of materials."""

__version__ = "0.1.0"
