"""`fabricgen diff OLD NEW`: what a change to an intent does to the rendered fabric.

`diff_builds(old, new)` opens both sides (a build directory, an intent file, or intent.yaml@REV;
see fabricgen.diff.sides), compares them (fabricgen.diff.compare) and removes any temporary
build before it returns. fabricgen.diff.render presents the result as text, markdown or JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fabricgen.diff.compare import BuildDiff, compare_sides
from fabricgen.diff.sides import open_side


def diff_builds(old: str, new: str, catalog_dirs: Sequence[Path] = (), progress: Callable[[str], None] | None = None) -> BuildDiff:
    """Compare side OLD with side NEW. Raises DiffError naming the side that cannot be used.
    catalog_dirs: where an intent side's catalog files may come from besides its own directory.
    progress: hears each step (opening or building a side, comparing) as it starts."""
    say = progress or (lambda _step: None)
    say("old side")
    with open_side("old", old, catalog_dirs) as old_side:
        say("new side")
        with open_side("new", new, catalog_dirs) as new_side:
            say("compare")
            return compare_sides(old_side, new_side)


__all__ = ["BuildDiff", "diff_builds"]
