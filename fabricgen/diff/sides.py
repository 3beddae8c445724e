"""The two sides of `fabricgen diff`, each opened as a manifest-checked build.

`open_side(label, spec)` is a context manager yielding a `Side` for one of:
- a build directory (holds manifest.json), verified when opened (`fabricgen.build.build_dir.BuildFiles`:
  every listed file present and unedited, nothing else there);
- an intent YAML file in the working tree, built into a temporary directory;
- `path/to/intent.yaml@REV`: the repository tree at git revision REV is extracted into a temporary
  directory (so a user catalog the intent names comes from REV too) and the intent built there.
  An intent that does not exist at REV (a new file) gives an empty side: everything is added.

Temporary directories are removed on exit. Every error is a DiffError whose first problem names
the side ("old side intents/x.yaml@HEAD~1: ..."), so a user knows which argument to fix.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from fabricgen.basics.errors import DiffError, FabricgenError, Problem
from fabricgen.build.build_dir import BuildFiles
from fabricgen.compiler.pipeline import build

INTENT_SUFFIXES = (".yaml", ".yml")
T = TypeVar("T")
GIT_TIMEOUT_S = 120


@dataclass
class Side:
    """One side: its build (None when the intent does not exist at the revision) and what it is."""

    label: str  # "old" or "new"
    spec: str  # as the user wrote it
    files: BuildFiles | None
    note: str = ""  # e.g. why the side is empty

    @property
    def hashes(self) -> dict[str, str]:
        return self.files.hashes if self.files is not None else {}

    @property
    def intent(self) -> dict | None:
        """The manifest's {file, sha256} of the intent that built this side."""
        return self.files.manifest.intent.model_dump() if self.files is not None else None

    @property
    def catalog(self) -> dict[str, str]:
        return dict(self.files.manifest.catalog) if self.files is not None else {}

    def text(self, path: str) -> str | None:
        """The file's text, checked against the manifest; None when this side has no such file."""
        return self.read(path, lambda files: files.text(path))

    def read(self, path: str, how: Callable[[BuildFiles], T]) -> T | None:
        """`how(files)` (e.g. `BuildFiles.cabling`, checked rows) when this side has `path`, else
        None; a DiffError naming the side when the file is malformed."""
        if self.files is None or path not in self.files.hashes:
            return None
        try:
            return how(self.files)
        except FabricgenError as exc:
            raise _side_error(self, "a file of the build cannot be used", exc.problems) from None


def _side_error(side: Side | tuple[str, str], what: str, problems: list[Problem] | None = None, hint: str = "") -> DiffError:
    label, spec = (side.label, side.spec) if isinstance(side, Side) else side
    return DiffError([Problem(f"{label} side {spec}: {what}", hint=hint)] + list(problems or []))


@contextmanager
def open_side(label: str, spec: str, catalog_dirs: Sequence[Path] = ()) -> Iterator[Side]:
    """The side `spec` (a build directory, an intent file, or intent.yaml@REV) as a Side.
    catalog_dirs: directories outside the intent's own that its catalog files may come from
    (`--catalog-dir`); for a REV side, one inside the repository is taken from REV's tree."""
    path = Path(spec)
    if not path.exists() and "@" in spec:
        with _revision_side(label, spec, catalog_dirs) as side:
            yield side
    elif path.is_file():
        if path.suffix not in INTENT_SUFFIXES:
            raise _side_error(
                (label, spec),
                "neither a build directory nor an intent YAML file",
                hint="give a directory `fabricgen build` wrote, an intent .yaml, or intent.yaml@REV (a git revision)",
            )
        with tempfile.TemporaryDirectory(prefix="fabricgen-diff-") as scratch:
            yield _built_side(label, spec, path, Path(scratch), tree=None, catalog_dirs=catalog_dirs)
    elif not path.exists():
        raise _side_error(
            (label, spec), "no such file or directory", hint="give a directory `fabricgen build` wrote, an intent .yaml, or intent.yaml@REV (a git revision)"
        )
    else:
        try:
            files = BuildFiles(path, DiffError, keep=_kept)
        except FabricgenError as exc:
            raise _side_error((label, spec), "not a usable build directory", exc.problems) from None
        yield Side(label, spec, files)


def _built_side(label: str, spec: str, intent: Path, scratch: Path, tree: tuple[Path, str] | None, catalog_dirs: Sequence[Path] = ()) -> Side:
    """Build `intent` into scratch/build. tree: (extracted tree root, REV), to show the compiler's
    problems as REV:path rather than a temporary path."""
    try:
        _, destination = build(intent, scratch / "build", catalog_dirs=catalog_dirs)
    except FabricgenError as exc:
        problems = exc.problems
        if tree is not None:
            root, rev = str(tree[0]) + os.sep, tree[1]
            problems = [replace(p, file=f"{rev}:{p.file[len(root) :]}") if p.file and p.file.startswith(root) else p for p in problems]
        count = len(problems)
        raise _side_error((label, spec), f"the intent does not build ({exc.phase}: {count} problem{'s' if count != 1 else ''})", problems) from None
    return Side(label, spec, BuildFiles(destination, DiffError, keep=_kept))


def _kept(path: str) -> bool:
    """What a side keeps in memory from verification: the reports (top-level files), which the
    summary parses when they differ. A changed config is read again; most are never read."""
    return "/" not in path


@contextmanager
def _revision_side(label: str, spec: str, catalog_dirs: Sequence[Path] = ()) -> Iterator[Side]:
    where = (label, spec)
    relative, rev = spec.rsplit("@", 1)
    if not relative or not rev:
        raise _side_error(where, "expected PATH@REV, e.g. intents/x.yaml@HEAD~1 or intents/x.yaml@origin/main")
    absolute = Path(os.path.abspath(relative))
    probe = absolute.parent
    while not probe.is_dir() and probe != probe.parent:
        probe = probe.parent
    top = Path(_git(where, probe, "rev-parse", "--show-toplevel", what="not inside a git repository").strip()).resolve()
    try:
        in_repo = absolute.resolve().relative_to(top).as_posix()
    except ValueError:
        raise _side_error(where, f"{relative} is outside the git repository {top}") from None
    commit = _git(
        where,
        top,
        "rev-parse",
        "--verify",
        "--quiet",
        f"{rev}^{{commit}}",
        what=f"unknown git revision {rev!r}",
        hint="check the name (git log --oneline, git branch -a); in CI, check out with full history (fetch-depth: 0)",
    ).strip()
    if subprocess.run(["git", "-C", str(top), "cat-file", "-e", f"{commit}:{in_repo}"], check=False, capture_output=True, timeout=GIT_TIMEOUT_S).returncode:
        yield Side(label, spec, None, note=f"{in_repo} does not exist at {rev}: that side is empty, everything counts as added")
        return
    with tempfile.TemporaryDirectory(prefix="fabricgen-diff-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        _extract(where, top, commit, tree)
        yield _built_side(label, spec, tree / in_repo, Path(scratch), tree=(tree, rev), catalog_dirs=[_in_tree(d, top, tree) for d in catalog_dirs])


def _in_tree(directory: Path, top: Path, tree: Path) -> Path:
    """A --catalog-dir inside the repository, as the same directory of the extracted tree (the
    catalog comes from REV, like the intent); one outside the repository stays as it is."""
    try:
        return tree / directory.resolve().relative_to(top)
    except ValueError:
        return directory


def _git(where: tuple[str, str], cwd: Path, *args: str, what: str, hint: str = "") -> str:
    try:
        result = subprocess.run(["git", "-C", str(cwd), *args], check=False, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except FileNotFoundError:
        raise _side_error(where, "git is not installed", hint="install git, or give a build directory or an intent file") from None
    if result.returncode:
        detail = result.stderr.strip().splitlines()
        raise _side_error(where, what + (f" ({detail[-1]})" if detail else ""), hint=hint) from None
    return result.stdout


def _extract(where: tuple[str, str], top: Path, commit: str, into: Path) -> None:
    """The repository's tree at `commit` into `into` (git archive | tar -x)."""
    archive = subprocess.Popen(["git", "-C", str(top), "archive", "--format=tar", commit], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert archive.stdout is not None
    untar = subprocess.run(["tar", "-x", "-C", str(into)], check=False, stdin=archive.stdout, capture_output=True, timeout=GIT_TIMEOUT_S)
    archive.stdout.close()
    error = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
    if archive.wait(timeout=GIT_TIMEOUT_S) or untar.returncode:
        detail = (error or untar.stderr.decode(errors="replace")).strip()
        raise _side_error(where, f"cannot extract the repository at {commit[:12]} ({detail})")
