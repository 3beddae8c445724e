"""A file from outside as fabricgen reads it and names it in a message.

`read_regular_file` reads an input the same way the intent and catalog readers do: opened without
blocking, checked on the open descriptor (a regular file, not too large), then read bounded.
`shown` is a path as a message shows it: escaped (`trust.printable`), quoted, cut.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from fabricgen.basics.trust import quoted

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SHOWN = 160  # characters of a path a message shows; the rest is cut


def shown(path: object) -> str:
    """A path for a message: escaped, quoted, cut after SHOWN characters."""
    return quoted(path, SHOWN)


def describe(mode: int) -> str:
    """What a file of this mode is, for a message: 'a directory', 'a FIFO or pipe' ..."""
    for test, text in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO or pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return text
    return "not a file"


class UnreadableFile(Exception):
    """A file that is not a regular file, too large (`too_large`), or cannot be read; `reason`
    says which, without the path (the caller's problem names the file)."""

    def __init__(self, reason: str, too_large: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


def read_regular_file(path: Path, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes`. Opened without blocking and
    checked on the open descriptor, so a FIFO, a pipe held open by another process, a device such
    as /dev/zero or a file swapped for one after a check is refused at once, never read forever.
    `follow_symlinks=False`: a symbolic link is refused (O_NOFOLLOW). UnreadableFile otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise UnreadableFile("a symbolic link, not the file itself") from None
        raise UnreadableFile(f"cannot open it: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"not a regular file: it is {describe(info.st_mode)}")
        if info.st_size > max_bytes:
            raise UnreadableFile(f"{info.st_size:,} bytes; at most {max_bytes:,}", too_large=True)
        data = b"".join(_chunks(fd, max_bytes + 1))
    except OSError as exc:
        raise UnreadableFile(f"cannot read it: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise UnreadableFile(f"over {max_bytes:,} bytes", too_large=True)
    return data


def _chunks(fd: int, most: int) -> Iterator[bytes]:
    while most > 0:
        chunk = os.read(fd, min(most, 1 << 20))
        if not chunk:
            return
        most -= len(chunk)
        yield chunk
