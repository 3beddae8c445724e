"""Which fabricgen this is, and which release the files it writes name.

`__version__` is the full version hatch-vcs derived from git when this copy was built or installed
(PEP 440, with setuptools-scm's no-guess-dev scheme): `0.2.0` at the tag v0.2.0,
`0.2.0.post1.dev3+g1a2b3c4d` three commits later, `...d20250101` appended when the tree had
uncommitted changes. manifest.json records it, and `fabricgen --version` prints it.

`RELEASE` is the release that version is or follows: `0.2.0` for all of the above. Config and
script headers and topology.json name it, so a new commit does not change every generated file
(and every `fabricgen diff`); it changes with a new tag. A build directory is read (lab, diff,
push, analyze, verify, testplan) only by the release that wrote it.

An editable install writes the version once, when it is installed: scripts/setup.sh reinstalls
when the commit changes.
"""

from __future__ import annotations

try:
    from fabricgen._version import __version__  # written by the hatch-vcs build hook
except ImportError:  # a source tree on PYTHONPATH that was never built or installed
    __version__ = "0.0.0"


def release_of(version: str) -> str:
    """The release a version is or follows: '0.2.0.post1.dev3+g1a2b3c4d' -> '0.2.0'. What
    no-guess-dev appends after the tag (.postN.devM) and a local label (+...) go; a pre-release or
    post-release tag stays itself ('0.3.0rc1', '0.2.0.post2')."""
    public = version.partition("+")[0]
    head, post, tail = public.rpartition(".post")
    number, dev, distance = tail.partition(".dev")
    if post and dev and number.isdigit() and distance.isdigit():
        return head
    return public


RELEASE = release_of(__version__)
