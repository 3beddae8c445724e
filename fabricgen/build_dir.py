"""Reading a directory `fabricgen build` wrote: every file checked against manifest.json as it is read,
so a command never acts on an edited, partial or other-version build."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import yaml

from fabricgen import __version__
from fabricgen.errors import FabricgenError, Problem

MAX_READ_BYTES = 64 << 20  # a build's largest file (cabling.csv at 100k GPUs) is well under this


class BuildFiles:
    """A build directory's files, checked against its manifest as they are read.

    `error` is the FabricgenError subclass to raise, so a problem is reported under the phase of
    the command that read the build (lab, diff, push)."""

    def __init__(self, root: Path, error: type[FabricgenError]):
        self.root = root
        self.error = error
        manifest_path = root / "manifest.json"
        if not root.is_dir():
            raise self.error(Problem(f"{root} is not a directory", hint="give the directory `fabricgen build` wrote (default output/<fabric name>)"))
        if not manifest_path.is_file():
            raise self.error(Problem("no manifest.json: not a fabricgen build directory, or an incomplete one", hint="run `fabricgen build INTENT -o DIR` and give DIR", file=str(root)))
        try:
            self.manifest = json.loads(manifest_path.read_text())
            version = self.manifest["fabricgen_version"]
            self.hashes: dict[str, str] = self.manifest["files"]
        except (ValueError, KeyError, TypeError) as exc:
            raise self.error(Problem(f"manifest.json is damaged ({exc})", hint="rebuild the directory", file=str(manifest_path))) from None
        if version != __version__:
            raise self.error(Problem(f"built by fabricgen {version}, this is fabricgen {__version__}", hint="rebuild it with this version: fabricgen build INTENT -o DIR", file=str(manifest_path)))

    def has(self, path: str) -> bool:
        return path in self.hashes

    def bytes(self, path: str) -> bytes:
        if path not in self.hashes:
            raise self.error(Problem(f"{path} is not in the build", hint="rebuild the directory: it is incomplete or from another fabricgen version", file=str(self.root / "manifest.json")))
        full = self.root / path
        try:
            if full.stat().st_size > MAX_READ_BYTES:
                raise self.error(Problem(f"{path} is larger than {MAX_READ_BYTES >> 20} MiB", file=str(full)))
            data = full.read_bytes()
        except OSError as exc:
            raise self.error(Problem(f"cannot read {path}: {exc.strerror}", hint="rebuild the directory: it is incomplete", file=str(full))) from None
        if hashlib.sha256(data).hexdigest() != self.hashes[path]:
            raise self.error(Problem(f"{path} differs from what the build wrote (manifest sha256)", hint="rebuild instead of editing a build; change the intent", file=str(full)))
        return data

    def text(self, path: str) -> str:
        return self.bytes(path).decode("utf-8")

    def json(self, path: str):
        try:
            return json.loads(self.text(path))
        except ValueError as exc:
            raise self.error(Problem(f"{path} is not JSON ({exc})", file=str(self.root / path))) from None

    def yaml(self, path: str):
        return yaml.safe_load(self.text(path)) or {}

    def csv(self, path: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(self.text(path))))
