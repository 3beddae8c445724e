"""`fabricgen diff OLD NEW`: what a change to an intent does to the rendered fabric.

`diff_builds(old, new)` opens both sides (a build directory, an intent file, or intent.yaml@REV;
see fabricgen.diff.sides), compares them (fabricgen.diff.compare) and removes any temporary
build before it returns. fabricgen.diff.render presents the result as text, markdown or JSON.
"""

from __future__ import annotations

from fabricgen.diff.compare import BuildDiff, compare_sides
from fabricgen.diff.sides import open_side


def diff_builds(old: str, new: str) -> BuildDiff:
    """Compare side OLD with side NEW. Raises DiffError naming the side that cannot be used."""
    with open_side("old", old) as old_side, open_side("new", new) as new_side:
        return compare_sides(old_side, new_side)


__all__ = ["BuildDiff", "diff_builds"]
