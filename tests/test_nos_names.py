"""No NOS is named outside its package: the rest of fabricgen asks the registry.

Every Python file of fabricgen outside fabricgen/nos/ is read token by token: a name (split at
underscores) or a string literal that holds a registered NOS's name as a word is a place that
decides something for one NOS, which belongs in that NOS's package. Comments and docstrings may
name a NOS (they cite sources and explain).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from fabricgen.nos import registry

PACKAGE = Path(__file__).resolve().parents[1] / "fabricgen"


def _is_docstring(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """A string that is a statement of its own (a module, class or function docstring)."""
    skip = (tokenize.NL, tokenize.COMMENT)
    before = next((t for t in reversed(tokens[:i]) if t.type not in skip), None)
    after = next(t for t in tokens[i + 1 :] if t.type not in skip)
    starts_statement = before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    return starts_statement and after.type in (tokenize.NEWLINE, tokenize.ENDMARKER)


def nos_mentions(source: str, names: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, token) of every name or non-docstring string literal that names one of `names`."""
    word = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9])")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found = []
    for i, token in enumerate(tokens):
        if (token.type == tokenize.NAME and set(token.string.lower().split("_")) & set(names)) or (
            token.type == tokenize.STRING and word.search(token.string) and not _is_docstring(tokens, i)
        ):
            found.append((token.start[0], token.string))
    return found


def test_the_finder_sees_names_and_strings_but_not_docstrings_or_comments():
    source = '"""About nxos."""\nx = "nxos"  # nxos\nNXOS_LIMIT = 1\nmax_nxosish = 2\ny = f"{a} sonic-vs"\n'
    assert nos_mentions(source, ("nxos", "sonic")) == [(2, '"nxos"'), (3, "NXOS_LIMIT"), (5, 'f"{a} sonic-vs"')]


def test_no_nos_is_named_outside_the_nos_packages():
    names = registry.names()
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("nos/"):
            continue
        mentions = nos_mentions(path.read_text(encoding="utf-8"), names)
        if mentions:
            found[relative] = mentions[:3]
    assert not found, f"NOS names outside fabricgen/nos/ (move the decision into the NOS's package as a part of the interface): {found}"
