"""Writing a build atomically: all files or none, and never someone else's directory.

The build is written into a hidden staging directory beside the destination, flushed to disk,
then swapped in with one rename (Linux renameat2 RENAME_EXCHANGE when replacing an earlier build,
so there is no moment without a complete build). A failure before the swap removes the staging
directory and leaves the previous build untouched.

Only a directory that is empty, or holds an earlier fabricgen output of the same kind and nothing
else (every entry listed in its manifest.json), is ever replaced; anything else there (`.git/`, a
user's notes) makes the write refuse, naming it, with nothing deleted. The kinds (`Contents`): a
build replaces a build; an export replaces only an export of the same format of the same fabric,
a test plan only a test plan of the same fabric. Exports and plans say what they are in a marker,
fabricgen-output.json, listed in their manifest.json like any of their files; a build is a
directory whose manifest lists topology.json. Nothing is ever written inside a directory fabricgen
wrote (`enclosing_output`): it is verified as a whole and would no longer be.

Staging directories are named `.<destination>.<pid>-<random>.partial` (and `.old` for a replaced
build on filesystems without RENAME_EXCHANGE) and locked (flock) while their build runs. One left
behind by a killed build is removed by the next build into the same parent: only names of that
exact pattern, only when unlocked and their process is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from fabricgen.basics.errors import OutputError, Problem
from fabricgen.basics.files import SHOWN, UnreadableFile, read_regular_file
from fabricgen.basics.models import FileModel
from fabricgen.basics.trust import Hostname, Token, check_build_path, quoted
from fabricgen.build.build_dir import MANIFEST, Manifest, list_build, read_manifest

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
MAX_FOREIGN_SHOWN = 10


def check_relative_path(path: str) -> None:
    try:
        check_build_path(path)
    except ValueError:
        raise OutputError(Problem("refusing to write this: not a plain relative file name", file=path)) from None


# --- what a directory fabricgen wrote holds ---------------------------------------------------------

MARKER = "fabricgen-output.json"
MAX_MARKER_BYTES = 4096
Kind = Literal["build", "export", "testplan"]
_NOUNS: dict[str, str] = {"build": "build", "export": "export", "testplan": "test plan"}


class OutputMarker(FileModel):
    """fabricgen-output.json in an export or a test plan: what the directory holds. Read back as
    hostile input: bounded, its sha256 the one manifest.json lists, every field checked; it names
    no path."""

    kind: Literal["export", "testplan"]
    format: Token | None = None  # an export's format (batfish, nornir ...)
    fabric: Hostname  # the fabric of the build it was written from


@dataclass(frozen=True)
class Contents:
    """What a directory fabricgen wrote holds. `fabric` and `format` are None where nothing
    recorded them: a build (its fabric is in topology.json, not read here), or an export or a plan
    written before the marker existed."""

    kind: Kind
    fabric: str | None = None
    format: str | None = None
    intent: str | None = None  # the intent file its manifest.json names

    @property
    def noun(self) -> str:
        return _NOUNS[self.kind]

    @property
    def directory(self) -> str:
        """'the build directory', 'the batfish export directory' ..."""
        return f"the {self.format + ' ' if self.kind == 'export' and self.format else ''}{self.noun} directory"

    def describe(self) -> str:
        """What the directory holds, for a message: the build of intent 'x.yaml', the batfish
        export of fabric 'x', the test plan of fabric 'x'."""
        if self.kind == "build":
            return f"the build of intent {quoted(self.intent)}" if self.intent else "a build"
        if self.fabric is None:
            return f"{'an' if self.kind == 'export' else 'a'} {self.noun} that an earlier fabricgen wrote without saying of what"
        what = f"the {self.format} {self.noun}" if self.format else f"the {self.noun}"  # the batfish export, the switch-acceptance test plan
        return f"{what} of fabric {quoted(self.fabric)}"

    def may_replace(self, existing: Contents) -> bool:
        """Whether writing this may replace `existing`: a build any build; an export or a plan only
        its own earlier self (the same kind, format and fabric, each recorded)."""
        if self.kind == "build":
            return existing.kind == "build"
        return existing.fabric is not None and (existing.kind, existing.fabric, existing.format) == (self.kind, self.fabric, self.format)


def marker(kind: Literal["export", "testplan"], fabric: str, format_name: str | None = None) -> dict[str, bytes]:
    """The marker file of an export or a test plan, to write with its files (and list in its manifest)."""
    document = OutputMarker(kind=kind, format=format_name, fabric=fabric).model_dump(mode="json", exclude_none=True)
    return {MARKER: (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()}


def contents_of(files: Mapping[str, bytes]) -> Contents:
    """What `files` (about to be written) are: their marker says, else they are a build."""
    if MARKER not in files:
        return Contents("build")
    found = OutputMarker.model_validate_json(files[MARKER])
    return Contents(found.kind, found.fabric, found.format)


def foreign_entries(directory: Path) -> list[str]:
    """What in `directory` is not part of what fabricgen wrote there: [] for an empty directory or
    one that holds an earlier output and nothing else; every entry when there is no manifest of ours."""
    entries = sorted(entry.name + ("/" if entry.is_dir() and not entry.is_symlink() else "") for entry in os.scandir(directory))
    if not entries:
        return []
    manifest = _manifest(directory)
    if manifest is None:
        return entries
    return list_build(directory, manifest.files.keys() | {MANIFEST})[1]


def existing_contents(directory: Path) -> Contents | None:
    """What the existing directory `directory` holds: None when it is empty; OutputError naming
    every entry that is not part of what fabricgen wrote there (all of them without a manifest of
    ours), or a marker that is not the one its manifest lists."""
    foreign = foreign_entries(directory)
    if foreign:
        more = len(foreign) - MAX_FOREIGN_SHOWN
        listed = ", ".join(quoted(entry) for entry in foreign[:MAX_FOREIGN_SHOWN]) + (f" and {more:,} more" if more > 0 else "")
        raise OutputError(
            Problem(
                f"holds what fabricgen did not write there: {listed}",
                file=str(directory),
                hint="choose an empty or new directory with -o; fabricgen only replaces its own builds, plans and exports, and nothing else in them",
            )
        )
    manifest = _manifest(directory)
    if manifest is None:
        return None  # empty
    return _contents(directory, manifest, strict=True)


def enclosing_output(path: Path) -> tuple[Path, Contents] | None:
    """The nearest directory above `path` that fabricgen wrote (it holds a manifest.json of ours),
    and what it holds; None when there is none. Symbolic links on the way are followed."""
    for directory in Path(os.path.realpath(path)).parents:
        manifest = _manifest(directory)
        if manifest is not None:
            return directory, _contents(directory, manifest, strict=False)
    return None


def _manifest(directory: Path) -> Manifest | None:
    """`directory`/manifest.json as a Manifest of any fabricgen version (an older output of ours
    is ours), or None when there is none, it is not a regular file, or it is not ours."""
    try:
        if not stat.S_ISREG(os.lstat(directory / MANIFEST).st_mode):
            return None  # a FIFO named manifest.json is never opened: that would wait for a writer
    except OSError:
        return None
    try:
        return read_manifest(directory, OutputError, any_version=True)
    except OutputError:
        return None


def _contents(directory: Path, manifest: Manifest, strict: bool) -> Contents:
    """What a directory with this manifest holds: its marker's word; without one, a test plan
    (testplan.json), a build (topology.json) or an older export. `strict`: a marker that cannot be
    read or is not the one manifest.json lists is an OutputError; otherwise it is passed over."""
    files = manifest.files
    if MARKER in files:
        try:
            data = read_regular_file(directory / MARKER, MAX_MARKER_BYTES, follow_symlinks=False)
            if hashlib.sha256(data).hexdigest() != files[MARKER]:
                raise UnreadableFile("differs from what fabricgen wrote (its sha256 in manifest.json)")
            found = OutputMarker.model_validate_json(data)
            return Contents(found.kind, found.fabric, found.format, manifest.intent.file)
        except (UnreadableFile, ValidationError) as exc:
            if strict:
                reason = exc.reason if isinstance(exc, UnreadableFile) else "not what fabricgen writes there"
                raise OutputError(Problem(reason, file=str(directory / MARKER), hint="remove the directory if it is yours, or choose another -o")) from None
    if "testplan.json" in files:
        return Contents("testplan", intent=manifest.intent.file)
    if "topology.json" in files:
        return Contents("build", intent=manifest.intent.file)
    return Contents("export", intent=manifest.intent.file)


def beside(build_dir: Path, suffix: str) -> Path:
    """The directory next to `build_dir`, named like it with `suffix` added (a plan, an export)."""
    resolved = build_dir.resolve()
    return resolved.with_name(resolved.name + suffix)


def write_build(files: Mapping[str, bytes], destination: Path) -> None:
    """Replace `destination` with exactly `files` (relative path -> content): a build, or an
    export or a test plan (their marker among the files says which). OutputError, nothing
    deleted, when the destination is inside a directory fabricgen wrote, or holds anything but an
    earlier output this one may replace (`Contents.may_replace`)."""
    for path in files:
        check_relative_path(path)
    writing = contents_of(files)
    # A symlink to an earlier build means "that build": replace the directory it points to.
    destination = destination.resolve()
    inside = enclosing_output(destination)
    if inside is not None:
        raise OutputError(
            Problem(
                f"is inside {inside[1].directory} {quoted(inside[0], SHOWN)}: writing there would overwrite the {inside[1].noun}",
                file=str(destination),
                hint="choose another -o, outside it",
            )
        )
    if destination.exists():
        if not destination.is_dir():
            raise OutputError(Problem("exists and is not a directory", file=str(destination), hint="choose another -o"))
        existing = existing_contents(destination)
        if existing is not None and not writing.may_replace(existing):
            raise OutputError(
                Problem(
                    f"holds {existing.describe()}, which {writing.describe()} may not replace; nothing was deleted",
                    file=str(destination),
                    hint="choose another -o: a new or empty directory (fabricgen replaces a build with a build, an export or a plan only with its own newer self)",
                )
            )
    parent = destination.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned_staging(parent, destination.name)
        staging, lock = _staging_directory(parent, destination.name, ".partial")
    except OSError as exc:
        raise OutputError(Problem(f"cannot create a directory here: {exc.strerror}", file=str(parent))) from None
    try:
        try:
            _write_files(files, staging)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(Problem(f"writing failed: {exc.strerror or exc}; the previous build is untouched", file=str(destination))) from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _swap_in(staging, destination)
    finally:
        os.close(lock)


def _write_files(files: Mapping[str, bytes], staging: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes 0700; a build is as readable as any new directory
    made: set[Path] = set()
    for relative, data in sorted(files.items()):
        target = staging / relative
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        with open(target, "wb") as handle:
            handle.write(data)
            if not _SYNCFS:
                handle.flush()
                os.fsync(handle.fileno())
    if _SYNCFS:
        _syncfs(staging)  # every file and directory of the build durable in one call
    else:
        for directory in made:
            _fsync_dir(directory)
    _fsync_dir(staging)


def _staging_directory(parent: Path, name: str, suffix: str) -> tuple[Path, int]:
    """A new `.<name>.<pid>-<random><suffix>` in `parent`, and an open descriptor holding its lock
    (released when closed, or when this process dies, however it dies)."""
    path = Path(tempfile.mkdtemp(prefix=f".{name}.{os.getpid()}-", suffix=suffix, dir=parent))
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return path, fd


def _staging_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(name)}\.(\d+)-[a-z0-9_]{{8}}\.(?:partial|old)")


def remove_abandoned_staging(parent: Path, name: str) -> list[Path]:
    """Remove the staging directories of builds into parent/name that died (killed before they
    cleaned up). A directory is removed only when its name is exactly ours, no process holds its
    lock and the process its name records is gone: a build still running, here or in another PID
    namespace, is left alone. Returns what was removed."""
    pattern = _staging_pattern(name)
    removed = []
    for entry in os.scandir(parent):
        found = pattern.fullmatch(entry.name)
        if not found or entry.is_symlink() or not entry.is_dir() or _alive(int(found.group(1))):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # locked: its build is running
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
        finally:
            os.close(fd)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return False
    return True


def _swap_in(staging: Path, destination: Path) -> None:
    """Put the complete staging directory in place of the destination, then drop the old build."""
    parent = destination.parent
    try:
        if not destination.exists():
            os.rename(staging, destination)
            previous = None
        elif _exchange(staging, destination):
            previous = staging  # after the exchange, staging holds the previous build
        else:
            previous, lock = _staging_directory(parent, destination.name, ".old")
            try:
                os.rename(destination, previous / "build")
                try:
                    os.rename(staging, destination)
                except OSError:
                    os.rename(previous / "build", destination)  # put the previous build back
                    raise
            finally:
                os.close(lock)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(Problem(f"replacing failed: {exc.strerror or exc}; the previous build is untouched", file=str(destination))) from None
    # The new build is in place; failing to clean up the old one loses nothing, so it is not an error.
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)
    with contextlib.suppress(OSError):  # durability of the rename is best effort
        _fsync_dir(parent)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux >= 3.15). False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: the filesystem cannot exchange
        return False
    raise OSError(errno, os.strerror(errno))


def _load_syncfs():
    """Linux's syncfs(2): flushes one filesystem, so a build of thousands of files costs one
    call instead of an fsync each (Python has no wrapper). None where libc lacks it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.syncfs
    except (OSError, AttributeError):
        return None


_SYNCFS = _load_syncfs() if sys.platform.startswith("linux") else None


def _syncfs(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _SYNCFS(fd) != 0:  # type: ignore[misc]
            raise OSError(ctypes.get_errno(), "syncfs failed")
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file_atomic(path: Path, data: bytes, replace: bool = True) -> None:
    """One file (a report), written beside its destination and renamed over it: a reader sees the
    old file or the whole new one, never half of it. With replace=False an existing file is kept
    and refused, even one that appears meanwhile: the staged file is hard-linked into place, which
    fails when the name exists (or, where links are unsupported, created with O_EXCL)."""
    staging = path.with_name(f".{path.name}.fabricgen-tmp")
    try:
        staging.write_bytes(data)
        if replace:
            os.replace(staging, path)
        else:
            _link_new(staging, path, data)
    except FileExistsError:
        staging.unlink(missing_ok=True)
        raise OutputError(Problem("already exists", file=str(path), hint="remove it or choose another file")) from None
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise OutputError(Problem(f"cannot write: {exc.strerror}", file=str(path), hint="choose a writable path")) from None


def _link_new(staging: Path, path: Path, data: bytes) -> None:
    try:
        os.link(staging, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: create exclusively, then write
        with open(path, "xb") as file:
            file.write(data)
    staging.unlink()
