"""Writing a build atomically: all files or none, and never someone else's directory.

The build is written into a hidden staging directory beside the destination, flushed to disk,
then swapped in with one rename (Linux renameat2 RENAME_EXCHANGE when replacing an earlier build,
so there is no moment without a complete build). A failure before the swap removes the staging
directory and leaves the previous build untouched.

Only a directory that is empty, or holds an earlier fabricgen build and nothing else (every entry
listed in its manifest.json), is ever replaced; anything else there (`.git/`, a user's notes) makes
the build refuse, naming it, with nothing deleted.

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
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fabricgen.build_dir import MANIFEST, list_build, read_manifest
from fabricgen.errors import OutputError, Problem
from fabricgen.trust import check_build_path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
MAX_FOREIGN_SHOWN = 10


def check_relative_path(path: str) -> None:
    try:
        check_build_path(path)
    except ValueError:
        raise OutputError(Problem(f"refusing to write {path!r}: not a plain relative file name")) from None


def foreign_entries(directory: Path) -> list[str]:
    """What in `directory` is not part of a fabricgen build: [] for an empty directory or one that
    holds an earlier build and nothing else; every entry when there is no manifest of ours."""
    entries = sorted(entry.name + ("/" if entry.is_dir() and not entry.is_symlink() else "") for entry in os.scandir(directory))
    if not entries:
        return []
    try:
        manifest = read_manifest(directory, OutputError, any_version=True)  # an older build of ours is ours
    except OutputError:
        return entries
    return list_build(directory, manifest.files.keys() | {MANIFEST})[1]


def beside(build_dir: Path, suffix: str) -> Path:
    """The directory next to `build_dir`, named like it with `suffix` added (a plan, an export)."""
    resolved = build_dir.resolve()
    return resolved.with_name(resolved.name + suffix)


def write_build(files: Mapping[str, bytes], destination: Path) -> None:
    """Replace `destination` with exactly `files` (relative path -> content)."""
    for path in files:
        check_relative_path(path)
    # A symlink to an earlier build means "that build": replace the directory it points to.
    destination = destination.resolve()
    if destination.exists():
        if not destination.is_dir():
            raise OutputError(Problem(f"{destination} exists and is not a directory", hint="choose another -o"))
        foreign = foreign_entries(destination)
        if foreign:
            shown = ", ".join(foreign[:MAX_FOREIGN_SHOWN]) + (f" and {len(foreign) - MAX_FOREIGN_SHOWN} more" if len(foreign) > MAX_FOREIGN_SHOWN else "")
            raise OutputError(
                Problem(
                    f"{destination} holds what is not part of a fabricgen build: {shown}",
                    hint="choose an empty or new directory with -o; fabricgen only replaces its own builds, and nothing else in them",
                )
            )
    parent = destination.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned_staging(parent, destination.name)
        staging, lock = _staging_directory(parent, destination.name, ".partial")
    except OSError as exc:
        raise OutputError(Problem(f"cannot create a directory in {parent}: {exc.strerror}")) from None
    try:
        try:
            _write_files(files, staging)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(Problem(f"writing {destination} failed: {exc.strerror or exc}; the previous build is untouched")) from None
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
        raise OutputError(Problem(f"{path} already exists", hint="remove it or choose another file")) from None
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise OutputError(Problem(f"cannot write {path}: {exc.strerror}", hint="choose a writable path")) from None


def _link_new(staging: Path, path: Path, data: bytes) -> None:
    try:
        os.link(staging, path)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: create exclusively, then write
        with open(path, "xb") as file:
            file.write(data)
    staging.unlink()
