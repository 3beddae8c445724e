"""Paths a user gives on the command line: each checked before any use, by one function.

Every path option and argument of every command is declared with a `Role` (what it must name)
and goes through `path_problems` while the command line is read (`fabricgen.cli.common.checked`),
before the command opens, creates, resolves or reads anything. A path fabricgen derives from one
the user gave (the default BUILD_DIR-testplan) goes through `check_path`, the same checks.

What is checked, for every role:

- the whole path is at most PATH_MAX - 1 bytes and each name in it at most NAME_MAX bytes, counted
  as the kernel counts them (the bytes of the file-system encoding; Linux <linux/limits.h>);
- the path can be looked up: no loop of symbolic links (ELOOP), no file standing where a directory
  must be (`init -o FILE/x.yaml`: ENOTDIR, the file named);
- what it names, when it exists: a regular file where a file is read or written (never a
  directory, FIFO, socket or device: opening a FIFO to read waits for a writer forever), a
  directory where a directory is;
- a path fabricgen writes: a file name (not `.`), short enough for the staging name written
  beside it, and outside every directory fabricgen wrote (a build, a test plan, an export), which
  are verified as wholes against their manifest.json and would no longer be.

A path that does not exist is left to the command, which says so in its own words (no manifest.json
here, no such intent file), or creates it. A refusal names the option or argument, shows the path
escaped (`trust.printable`: a newline, an escape sequence or a byte that is not UTF-8 cannot
reach the terminal raw) and cut (`trust.quoted`), exit 2, nothing written:

    arguments: 1 problem
      --output: a name in the path is 300 bytes long ('nnnn...'); at most 255 bytes (NAME_MAX) (fix: shorten that name)
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fabricgen.basics.errors import FabricgenError, Problem
from fabricgen.basics.files import describe, shown
from fabricgen.basics.trust import quoted

NAME_MAX = 255  # bytes in one name (Linux <linux/limits.h>; ext4, xfs, btrfs, tmpfs)
PATH_MAX = 4096  # bytes in a path, its terminating NUL included
# What fabricgen adds to a name it writes, for the staging file or directory beside it:
# `.<name>.<pid>-<8 random>.partial` (fabricgen.build.output: 1 + 1 + 7 + 1 + 8 + 8 bytes; Linux pids
# have at most 7 digits), `.<name>.fabricgen-tmp` (15) and mkstemp's `.<name>.<8 random>.tmp` (14).
STAGING_ROOM = 26


class PathError(FabricgenError):
    """A path on the command line cannot be what its option or argument needs."""

    phase = "arguments"


@dataclass(frozen=True)
class Role:
    """What a path argument must name. `noun` and `example` make the hints: "choose another path
    for the report", "give one, e.g. --report analysis.md"."""

    wants: Literal["file", "directory", "file or directory"]
    writes: bool = False  # fabricgen creates or replaces it
    noun: str = ""
    example: str = ""
    beside: str = "the staging name"  # what fabricgen writes beside it, named after it
    room: int = STAGING_ROOM  # the bytes that adds to the name


INPUT_FILE = Role("file", noun="the file", example="cluster.yaml")
INPUT_DIRECTORY = Role("directory", noun="the directory", example="output/cluster")
DIFF_SIDE = Role("file or directory", noun="the side", example="output/cluster")  # a build directory, an intent, intent.yaml@REV
OUTPUT_DIRECTORY = Role("directory", writes=True, noun="the output", example="output/cluster")


def output_file(noun: str, example: str, beside: str = "the staging name", room: int = STAGING_ROOM) -> Role:
    """A file fabricgen writes (a report, an intent, the schema), and what it writes beside it."""
    return Role("file", writes=True, noun=noun, example=example, beside=beside, room=room)


def check_path(path: str | os.PathLike[str], role: Role, where: str) -> Path:
    """`path` as a Path when it can be what `role` needs; PathError (located at `where`, the
    option or argument: `--output`, `BUILD_DIR`) when not."""
    problems = path_problems(path, role, where)
    if problems:
        raise PathError(problems)
    return Path(path)


def path_problems(path: str | os.PathLike[str], role: Role, where: str) -> list[Problem]:
    """Why `path` cannot be what `role` needs (at most one problem), [] when it can."""
    found = _problem(path, role, where)
    return [] if found is None else [Problem(found[0], hint=found[1], field=(where,))]  # shown as "--output: ..."


def _problem(path: str | os.PathLike[str], role: Role, where: str) -> tuple[str, str] | None:
    """(what is wrong, how to fix it) or None. Checks in order, each on what the one before it
    made safe: the lengths before any system call, the lookup before the type."""
    raw = os.fsencode(path)
    if not raw:
        return "an empty path", f"name {role.noun}, e.g. {where} {role.example}"
    if len(raw) >= PATH_MAX:
        return (f"the path is {len(raw):,} bytes long ({shown(path)}); at most {PATH_MAX - 1:,} bytes (PATH_MAX)", "use a shorter path")
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return (f"a name in the path is {len(longest):,} bytes long ({quoted(os.fsdecode(longest))}); at most {NAME_MAX} bytes (NAME_MAX)", "shorten that name")
    name = os.path.basename(os.path.normpath(raw))
    if role.writes and role.wants == "file" and name in (b"", b".", b".."):
        return f"needs a file name, not {shown(path)}", f"give one, e.g. {where} {role.example}"
    if role.writes and len(name) > NAME_MAX - role.room:
        return (
            f"the name {quoted(os.fsdecode(name))} is {len(name)} bytes long, too long for {role.beside} beside it; at most {NAME_MAX - role.room} bytes",
            "shorten that name",
        )
    try:
        mode: int | None = os.stat(raw).st_mode
    except FileNotFoundError:
        mode = None  # the command says so, or creates it
    except NotADirectoryError:
        return f"{shown(_first_non_directory(raw))} is not a directory", f"choose another path for {role.noun}"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{shown(path)} runs into a loop of symbolic links", "remove or fix the link"
        if exc.errno == errno.ENAMETOOLONG:  # a file system with a shorter NAME_MAX, or a link that expands past PATH_MAX
            return f"{shown(path)} is too long for its file system", "use a shorter path"
        return f"cannot look up {shown(path)}: {exc.strerror}", f"choose another path for {role.noun}"
    if mode is not None:
        wrong = _wrong_type(mode, role, path)
        if wrong is not None:
            return wrong
    if role.writes:
        return _inside_output(Path(os.fsdecode(raw)), role)
    return None


def _wrong_type(mode: int, role: Role, path: str | os.PathLike[str]) -> tuple[str, str] | None:
    if role.wants == "file" and not stat.S_ISREG(mode):
        if role.writes:
            return f"{shown(path)} exists and is not a regular file: it is {describe(mode)}", f"choose another path for {role.noun}"
        return f"{shown(path)} is not a regular file: it is {describe(mode)}", "name a regular file"
    if role.wants == "directory" and not stat.S_ISDIR(mode):
        return f"{shown(path)} is not a directory: it is {describe(mode)}", f"name a directory, e.g. {role.example}"
    if role.wants == "file or directory" and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"{shown(path)} is neither a directory nor a regular file: it is {describe(mode)}", "name a build directory or an intent file"
    return None


def _first_non_directory(raw: bytes) -> str:
    """The first leading part of `raw` that exists and is not a directory (`FILE` of `FILE/x`)."""
    parts = raw.split(b"/")
    for end in range(1, len(parts)):
        prefix = b"/".join(parts[:end]) or b"/"
        try:
            if not stat.S_ISDIR(os.stat(prefix).st_mode):
                return os.fsdecode(prefix)
        except OSError:
            break
    return os.fsdecode(raw)


def _inside_output(path: Path, role: Role) -> tuple[str, str] | None:
    from fabricgen.build.output import enclosing_output  # reads manifests: only when a path to write is given

    found = enclosing_output(path)
    if found is None:
        return None
    directory, contents = found
    return (
        f"{shown(path)} is inside {contents.directory} {shown(directory)}: writing there would overwrite the {contents.noun}",
        f"choose a path outside it for {role.noun}; fabricgen checks what it wrote as a whole against its manifest.json",
    )
