"""The shared basics every stage uses."""
