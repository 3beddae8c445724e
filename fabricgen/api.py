"""fabricgen's Python API: `fabricgen.compile(intent) -> Build` (docs/python-api.md).

The same compiler as `fabricgen build`, returning the build in memory instead of writing it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from fabricgen.compiler.pipeline import Build, compile_loaded
from fabricgen.intent import load_intent, load_intent_data, load_intent_text


def compile(
    intent: Mapping | str | os.PathLike[str],
    *,
    catalog_dirs: Sequence[str | os.PathLike[str]] = (),
    jobs: int = 1,
) -> Build:
    """Compile an intent into a `Build` in memory: `files` (each path of the build directory ->
    its bytes, as `fabricgen build` writes them), `fabric` (the graph), `sizing`, `addresses`,
    `notes`, `configs` (per switch), `hosts` (per server).

    `intent` is one of:
    - a `pathlib.Path` (any `os.PathLike`): the intent file, read as `fabricgen build` reads it;
      its catalog files lie beside it or under `catalog_dirs`;
    - a `str`: always the intent's YAML text, never a file name (wrap a file name in `Path`);
    - a mapping (a `dict`): the intent already parsed, as YAML would give it.
    Text and a mapping have no file: the intent must give `name:`, and its catalog files (named
    relative to the working directory) must lie under one of `catalog_dirs`.

    `jobs` processes render the devices (0: one per CPU); the bytes are the same for any number.

    Raises the `fabricgen.basics.errors.FabricgenError` subclass of the first phase with problems
    (IntentError, CatalogError, DesignError, CheckError), carrying every problem of that phase in
    `.problems`, each naming the field (and the line, for a file or text) as the CLI prints them.
    A `TypeError` for an `intent` of another type.
    """
    directories = [Path(d) for d in catalog_dirs]
    if isinstance(intent, str):
        loaded = load_intent_text(intent, directories)
    elif isinstance(intent, os.PathLike):
        loaded = load_intent(Path(intent), directories)
    elif isinstance(intent, Mapping):
        loaded = load_intent_data(intent, directories)
    else:
        raise TypeError(f"fabricgen.compile takes a Path, YAML text (str) or a mapping, not {type(intent).__name__}")
    return compile_loaded(loaded, jobs=jobs)
