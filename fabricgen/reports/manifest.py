"""manifest.json: what built this directory and the sha256 of every file in it."""

from __future__ import annotations

import hashlib
import json

from fabricgen.basics.version import __version__
from fabricgen.catalog.model import release_key


def render_manifest(
    intent_file: str, intent_sha256: str, catalog_files: dict[str, str], files: dict[str, bytes], nos_releases: dict[str, set[str]]
) -> dict[str, str]:
    """catalog_files: the user's catalog files as named in the intent -> sha256; nos_releases: the
    releases the configs are written for, per NOS flavour (the NOS's own name for its built-in one)."""
    document = {
        "fabricgen_version": __version__,
        "intent": {"file": intent_file, "sha256": intent_sha256},
        "catalog": dict(sorted(catalog_files.items())),
        "nos_releases": {nos: sorted(releases, key=release_key) for nos, releases in sorted(nos_releases.items())},
        "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())},
    }
    return {"manifest.json": json.dumps(document, indent=2) + "\n"}
