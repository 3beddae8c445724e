"""Writing a build atomically: all files or none, and never someone else's directory.

The build is written into a hidden staging directory beside the destination, flushed to disk,
then swapped in with one rename (Linux renameat2 RENAME_EXCHANGE when replacing an earlier build,
so there is no moment without a complete build). A failure before the swap removes the staging
directory and leaves the previous build untouched. Only a directory that is empty or holds an
earlier fabricgen build (a manifest.json of ours) is ever replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from fabricgen.errors import OutputError, Problem

# Relative paths made of device names and fixed file names: nothing else may reach the disk.
_SAFE_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def check_relative_path(path: str) -> None:
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(not _SAFE_PART.match(p) or p in {".", ".."} for p in parts):
        raise OutputError(Problem(f"refusing to write {path!r}: not a plain relative file name"))


def is_fabricgen_build(directory: Path) -> bool:
    manifest = directory / "manifest.json"
    try:
        return "fabricgen_version" in json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def write_build(files: Mapping[str, bytes], destination: Path) -> None:
    """Replace `destination` with exactly `files` (relative path -> content)."""
    for path in files:
        check_relative_path(path)
    # A symlink to an earlier build means "that build": replace the directory it points to.
    destination = destination.resolve()
    if destination.exists():
        if not destination.is_dir():
            raise OutputError(Problem(f"{destination} exists and is not a directory", hint="choose another -o"))
        if any(destination.iterdir()) and not is_fabricgen_build(destination):
            raise OutputError(
                Problem(
                    f"{destination} is not empty and holds no fabricgen build (no manifest.json of ours)",
                    hint="choose an empty or new directory with -o; fabricgen only replaces its own builds",
                )
            )
    parent = destination.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", suffix=".partial", dir=parent))
    except OSError as exc:
        raise OutputError(Problem(f"cannot create a directory in {parent}: {exc.strerror}")) from None
    try:
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
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(Problem(f"writing {destination} failed: {exc.strerror or exc}; the previous build is untouched")) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _swap_in(staging, destination)


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
            previous = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", suffix=".old", dir=parent))
            os.rename(destination, previous / "build")
            try:
                os.rename(staging, destination)
            except OSError:
                os.rename(previous / "build", destination)  # put the previous build back
                raise
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(Problem(f"replacing {destination} failed: {exc.strerror or exc}; the previous build is untouched")) from None
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


def write_file_atomic(path: Path, data: bytes) -> None:
    """One file (a report), written beside its destination and renamed over it: a reader sees the
    old file or the whole new one, never half of it."""
    staging = path.with_name(f".{path.name}.fabricgen-tmp")
    try:
        staging.write_bytes(data)
        os.replace(staging, path)
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise OutputError(Problem(f"cannot write {path}: {exc.strerror}", hint="choose a writable path")) from None
