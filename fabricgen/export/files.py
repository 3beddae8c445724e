"""Writing an export directory: all of it or nothing, like a build.

The files go through `fabricgen.build.output.write_build` (a staging directory swapped in with one
rename), with a manifest.json of their own that names the build they came from and a marker
(`fabricgen.build.output.marker`: an export, its format, its fabric), so a later export of the same
format of the same fabric replaces it, and nothing else does: an export never replaces a build, a
test plan, another format's export or another fabric's, nor a directory of someone else's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fabricgen.basics.errors import Problem
from fabricgen.basics.models import JsonOutputModel
from fabricgen.build.output import beside, marker, write_build
from fabricgen.export.source import ExportBuild, ExportError
from fabricgen.reports.manifest import render_manifest


class NetboxTypeCounts(JsonOutputModel):
    """One NetBox object type of a push: what was (or, in a dry run, would be) done to it."""

    created: int
    updated: int
    deleted: int
    unchanged: int
    stale: int  # the fabric's objects the build no longer has, kept (without --delete)
    failed: int


class NetboxPushSummary(JsonOutputModel):
    """`export netbox --push`: per object type (dcim.devices, ipam.ip_addresses, ...) the objects
    created, changed, deleted and left as they were; the objects NetBox refused, named."""

    url: str
    dry_run: bool
    created: int
    updated: int
    deleted: int
    unchanged: int
    failed: list[str]
    types: dict[str, NetboxTypeCounts]
    changes: list[str]  # the first planned changes (a dry run's listing)
    seconds: float


class ExportSummary(JsonOutputModel):
    """What `fabricgen export FORMAT --json` prints: the export directory written."""

    format: str
    fabric: str  # the build's fabric name
    directory: str
    files: int  # manifest.json included
    bytes: int
    netbox_push: NetboxPushSummary | None = None


def default_destination(build_dir: Path, format_name: str) -> Path:
    """BUILD_DIR-<format> beside the build (output/cisco-256-gpu-batfish). Beside the resolved
    directory: `.` or `..` has no name to extend, and `..` from inside the build would put the
    export in it."""
    return beside(build_dir, f"-{format_name}")


def write_export(build: ExportBuild, files: Mapping[str, str | bytes], destination: Path, format_name: str) -> tuple[int, int]:
    """Replace `destination` with `files`, the marker of a `format_name` export of the build's
    fabric and their manifest.json; returns (files, bytes) written. The destination may be
    neither the build directory nor inside it (the build would no longer verify), nor hold
    anything but an earlier export of this format of this fabric (ExportError / OutputError)."""
    target = destination.resolve()
    root = build.root.resolve()
    if target == root or root in target.parents:
        raise ExportError(
            Problem(
                f"{destination} is the build directory or inside it; the export would overwrite the build",
                hint="choose another -o, e.g. a directory beside the build",
            )
        )
    data = {path: text.encode() if isinstance(text, str) else text for path, text in files.items()}
    data.update(marker("export", build.name, format_name))
    manifest = build.files.manifest
    data.update({path: text.encode() for path, text in render_manifest(manifest.intent.file, manifest.intent.sha256, {}, data, {}).items()})
    write_build(data, destination)
    return len(data), sum(len(content) for content in data.values())
