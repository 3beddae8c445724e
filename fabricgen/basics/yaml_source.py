"""Safe, bounded YAML loading that remembers the line of every field.

Intents and catalogs are user input and hostile until checked. They are loaded with PyYAML's
SafeLoader only and refused, as located problems and never as a traceback:
- above a size limit, when not a regular file, or when not UTF-8 text;
- when they hold a control character (only tabs and line breaks are text);
- above a node budget counted both as the file is composed and as aliases and '<<' merge keys are
  expanded (counted before anything is copied), so alias and merge bombs cost no memory;
- nested deeper than a real intent ever is (PyYAML's composer recurses), or through an alias that
  refers to itself;
- with a tag other than the plain scalar ones (!!str !!int !!float !!bool !!null), or a value its
  tag cannot read (`!!int` with no digits, a number longer than any field takes);
- with a duplicate key, instead of PyYAML's silent "last one wins".
The result keeps a map from field path to line so later phases can point at the line that caused a
problem.

`document_from_data` takes what a caller parsed already (the Python API's intent as a mapping)
through the same limits, as a document whose fields have no lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from fabricgen.basics.errors import FieldPath, Problem
from fabricgen.basics.trust import printable

MAX_FILE_BYTES = 1 << 20  # 1 MiB: an intent is a page of YAML, a catalog a few hundred entries
# Nodes composed, and nodes visited once aliases and merges are expanded: the built-in catalog's
# largest file has under 600, an intent under 300; PyYAML composes about 50,000 a second.
MAX_NODES = 100_000
# Per kind of file: an intent has under 300 nodes and a user catalog of a few hundred entries a
# few thousand, so a file of 20,000 or 50,000 is refused within half a second of parsing.
MAX_INTENT_NODES = 20_000
MAX_CATALOG_NODES = 50_000
MAX_DEPTH = 32  # the deepest real field (backend.qos.ecn.400G.min_kbytes) is 5 levels down
MAX_NUMBER_CHARACTERS = 32  # no field takes a number longer than an ASN or a VNI; int() of 5,000 digits raises

# What YAML 1.1 and PyYAML call printable, minus NEL and the Unicode line and paragraph separators
# (YAML breaks lines there, a config would not): anything else cannot be meant.
_NOT_TEXT = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class YamlDocument:
    """Plain data from one YAML file plus where each field came from."""

    path: str
    data: Any
    lines: dict[FieldPath, int | None] = field(default_factory=dict)  # None: a field of data given as such
    sha256: str = ""  # of the bytes that were parsed (the manifest records it; no second read)

    def line_of(self, path: FieldPath) -> int | None:
        """The line of the field, or of its nearest ancestor present in the file."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def locate(self, problem: Problem) -> Problem:
        return problem.located(self.path, self.line_of(problem.field))


if yaml.__with_libyaml__:
    from yaml.cyaml import CParser as _Parser
else:  # pragma: no cover - PyYAML's wheels ship libyaml

    class _Parser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef]  # mypy reads both branches; one runs
        def __init__(self, text: str):
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


class _Refused(Exception):
    """Loading stops here: the document as a whole is refused (too large, too deep, a loop)."""

    def __init__(self, message: str, node_or_mark: object = None, hint: str = ""):
        super().__init__(message)
        mark = getattr(node_or_mark, "start_mark", node_or_mark)
        line = getattr(mark, "line", None)  # PyYAML's Mark or libyaml's
        self.line = line + 1 if isinstance(line, int) else None
        self.hint = hint


class _Loader(yaml.composer.Composer, _Parser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """PyYAML's safe loader, with a composer that counts and bounds the nodes it composes and how
    deep they nest, so a file of a million tiny nodes or ten thousand brackets is refused early
    instead of eating memory or blowing Python's recursion limit. The events come from libyaml's
    parser where PyYAML was built with it (about 4 times faster than the pure-Python one, and it
    keeps its state on a heap stack, not Python's), else from the pure-Python parser."""

    def __init__(self, text: str, max_nodes: int = MAX_NODES):
        _Parser.__init__(self, text)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.composed = 0
        self.depth = 0
        self.max_nodes = max_nodes

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        self.depth += 1
        self.composed += 1
        if self.depth > MAX_DEPTH:
            raise _Refused(f"is nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark, "no intent or catalog field is that deep")
        if self.composed > self.max_nodes:
            raise _Refused(
                f"has more than {self.max_nodes:,} YAML nodes", self.peek_event().start_mark, "an intent is a page of YAML; split a catalog over several files"
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_PLAIN_SCALAR_TAGS = {_STR, _INT, _FLOAT, "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}
_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _tag_name(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag


class _Walker:
    """Turns a composed node tree into Python data, recording lines, refusing duplicates.

    Every node visited counts against the budget, so a node reached through many aliases counts
    once per path. Merge keys are expanded here rather than by PyYAML's flatten_mapping, which
    copies every merged pair into every mapping before anything could count them."""

    def __init__(self, loader: _Loader, doc: YamlDocument):
        self.loader = loader
        self.doc = doc
        self.nodes = 0
        self.problems: list[Problem] = []
        self.pairs: dict[int, list[tuple[Any, yaml.Node, yaml.Node]]] = {}  # id(mapping node) -> its pairs
        self.merging: set[int] = set()
        self.scalars: dict[int, Any] = {}

    def count(self, nodes: int, node: yaml.Node) -> None:
        self.nodes += nodes
        if self.nodes > self.loader.max_nodes:
            raise _Refused(
                f"expands to more than {self.loader.max_nodes:,} YAML nodes through aliases or '<<' merge keys", node, "write the values out, or alias less"
            )

    def walk(self, node: yaml.Node, path: FieldPath) -> Any:
        self.count(1, node)
        if len(path) > MAX_DEPTH:
            raise _Refused(f"is nested more than {MAX_DEPTH} levels deep", node, "an alias that refers to a mapping or list it is inside repeats forever")
        if isinstance(node, yaml.ScalarNode) or node.tag not in _PLAIN_TAGS:
            # only plain YAML: an application tag such as !!python/object or !!set is refused, not ignored
            found = len(self.problems)
            if isinstance(node, yaml.ScalarNode):
                value = self.scalar(node)
            else:
                self.refuse_tag(node)
                value = None
            self.problems[found:] = [replace(p, field=path) for p in self.problems[found:]]
            return value
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.doc.lines[path + (index,)] = item.start_mark.line + 1
                items.append(self.walk(item, path + (index,)))
            return items
        result: dict[Any, Any] = {}
        found = len(self.problems)
        pairs = self.mapping_pairs(node)
        # a bad key or merge inside this mapping: the mapping is the field to point at
        self.problems[found:] = [p if p.field else replace(p, field=path) for p in self.problems[found:]]
        for key, key_node, value_node in pairs:
            key_path = path + (key,)
            line = key_node.start_mark.line + 1
            if key in result:
                self.problems.append(
                    Problem(
                        f"duplicate key '{key}' (first given on line {self.doc.lines.get(key_path)})",
                        hint="keep one of the two; YAML would silently use the last",
                        field=key_path,
                        line=line,
                    )
                )
                continue
            self.doc.lines[key_path] = line
            result[key] = self.walk(value_node, key_path)
        return result

    def mapping_pairs(self, node: yaml.MappingNode) -> list[tuple[Any, yaml.Node, yaml.Node]]:
        """(key, key node, value node) of a mapping with its '<<' merges applied as YAML says:
        the mapping's own keys win, then the first merged mapping that has the key. Every merged
        pair counts against the budget before it is copied."""
        cached = self.pairs.get(id(node))
        if cached is not None:
            return cached
        if id(node) in self.merging:
            raise _Refused("has a '<<' merge key that merges the mapping it is in", node, "a mapping cannot merge itself")
        if len(self.merging) >= MAX_DEPTH:  # merges of merges recurse here
            raise _Refused(f"merges mappings more than {MAX_DEPTH} levels deep", node, "merge fewer levels")
        self.merging.add(id(node))
        own: list[tuple[Any, yaml.Node, yaml.Node]] = []
        sources: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources += value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                continue
            key = self.key(key_node)
            if key is not None:
                own.append((key, key_node, value_node))
        pairs = list(own)
        if sources:
            taken = {key for key, _, _ in own}
            for source in sources:
                if not isinstance(source, yaml.MappingNode) or source.tag not in _PLAIN_TAGS:
                    self.problems.append(
                        Problem(
                            "a '<<' merge key takes a mapping or a list of mappings",
                            hint="merge an alias of a mapping, such as <<: *defaults",
                            line=source.start_mark.line + 1,
                        )
                    )
                    continue
                merged = self.mapping_pairs(source)
                self.count(len(merged), source)
                pairs.extend(pair for pair in merged if pair[0] not in taken)
                taken.update(key for key, _, _ in merged)
        self.merging.discard(id(node))
        self.pairs[id(node)] = pairs
        return pairs

    def key(self, node: yaml.Node) -> str | int | None:
        """A mapping key: a name or a number, read without building anything bigger."""
        if isinstance(node, yaml.ScalarNode):
            key = self.scalar(node)
            if isinstance(key, (str, int)) and not isinstance(key, bool):
                return key
            shown = f"a {type(key).__name__} ({printable(node.value)[:40]})" if key is not None else "empty"
        else:
            shown = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
        self.problems.append(Problem(f"a key must be a name, not {shown}", hint="quote the key", line=node.start_mark.line + 1))
        return None

    def scalar(self, node: yaml.ScalarNode) -> Any:
        """A scalar's value. Only the plain scalar tags, written or implied; a value the tag
        cannot read is a located problem (the value is then None)."""
        cached = self.scalars.get(id(node), self)
        if cached is not self:
            return cached
        value = self._scalar(node)
        self.scalars[id(node)] = value
        return value

    def refuse_tag(self, node: yaml.Node) -> None:
        self.problems.append(
            Problem(
                f"the tag {_tag_name(node.tag)} is not allowed",
                hint="only plain YAML is read: no tags other than !!str !!int !!float !!bool !!null",
                line=node.start_mark.line + 1,
            )
        )

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        implied = self.loader.resolve(yaml.ScalarNode, node.value, (True, False)) if not node.style else _STR  # plain: None, or "" from libyaml
        if node.tag == implied and node.tag in (_INT, _FLOAT) and ":" in node.value:
            # YAML 1.1 reads 2:1 as the base-60 number 121; a ratio is what an intent means by it
            return node.value
        if node.tag == implied == _TIMESTAMP:
            return node.value  # no field takes a date; 2024-01-01 in a description is text
        if node.tag not in _PLAIN_SCALAR_TAGS:
            if node.tag == implied:  # '<<' or '=' where a value belongs
                self.problems.append(Problem(f"'{node.value}' means something else in YAML", hint="quote it", line=node.start_mark.line + 1))
                return None
            return self.refuse_tag(node)
        if node.tag in (_INT, _FLOAT) and len(node.value) > MAX_NUMBER_CHARACTERS:
            self.problems.append(
                Problem(f"a number of {len(node.value):,} characters; no field takes one longer than {MAX_NUMBER_CHARACTERS}", line=node.start_mark.line + 1)
            )
            return None
        try:
            return self.loader.construct_object(node)
        except (ValueError, IndexError, KeyError, OverflowError):
            shown = printable(node.value)
            self.problems.append(
                Problem(
                    f"'{shown[:40]}' is not a valid {_tag_name(node.tag)}" if shown else f"an empty {_tag_name(node.tag)}",
                    hint="give a value or remove the tag",
                    line=node.start_mark.line + 1,
                )
            )
            return None


def load_yaml(
    path: Path, what: str = "intent", max_bytes: int = MAX_FILE_BYTES, quote_content: bool = True, max_nodes: int = MAX_NODES
) -> tuple[YamlDocument, list[Problem]]:
    """Load one YAML file. Returns the document and the problems found (empty when it loaded).

    Problems carry file and line already; the document's data is None when the file is unusable.
    With quote_content=False a file that is not valid YAML is described without quoting any of
    it (a catalog path may name a file that is none of fabricgen's business).
    """
    raw, problems = read_yaml_bytes(path, what, max_bytes)
    if raw is None:
        return YamlDocument(str(path), None), problems
    return parse_yaml(raw, str(path), what, quote_content, max_nodes)


def read_yaml_bytes(path: Path, what: str = "intent", max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Problem]]:
    """The bytes `load_yaml` parses (a regular file of at most `max_bytes`), or None and the
    problem, naming the file, that stops it."""
    raw, problem = _read_regular_file(path, what, max_bytes)
    if problem is not None:
        return None, [problem.located(str(path), None)]
    return raw, []


def parse_yaml(raw: bytes, shown: str, what: str, quote_content: bool = True, max_nodes: int = MAX_NODES) -> tuple[YamlDocument, list[Problem]]:
    """`load_yaml` for bytes already read (a build directory's verified file); `shown` names them
    in problems."""
    doc = YamlDocument(shown, None)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return doc, [Problem(f"the {what} file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=shown)]
    control = _NOT_TEXT.search(text)
    if control is not None:
        line = text.count("\n", 0, control.start()) + 1
        column = control.start() - (text.rfind("\n", 0, control.start()) + 1) + 1
        return doc, [
            Problem(
                f"a control character ({printable(control.group())}) at column {column}",
                hint=f"remove it; an {what} is plain text, and tabs and line breaks are its only control characters",
                file=shown,
                line=line,
            )
        ]
    doc.sha256 = hashlib.sha256(raw).hexdigest()
    try:
        loader = _Loader(text, max_nodes)
    except yaml.YAMLError as exc:  # the reader refuses what the check above let through
        return doc, [Problem(f"not valid YAML: {printable(exc)}", file=shown)]
    walker = _Walker(loader, doc)
    try:
        root = loader.get_single_node()
        if root is None:
            first_line = {"intent": "gpus: 256", "catalog": "switches:"}.get(what, "a key: value")
            return doc, [Problem(f"the {what} file is empty", hint=f"start with a line such as '{first_line}'", file=shown, line=1)]
        doc.lines[()] = root.start_mark.line + 1
        doc.data = walker.walk(root, ())
    except _Refused as exc:
        return YamlDocument(shown, None), [Problem(f"the {what} {exc}", hint=exc.hint, file=shown, line=exc.line)]
    except yaml.MarkedYAMLError as exc:
        return YamlDocument(shown, None), [_yaml_syntax_problem(exc, shown, what, quote_content)]
    except yaml.YAMLError as exc:
        return YamlDocument(shown, None), [Problem(f"not valid YAML: {exc}", file=shown)]
    finally:
        loader.dispose()
    return doc, [p.located(shown, p.line) for p in walker.problems]


def document_from_data(data: object, shown: str, what: str, max_nodes: int = MAX_NODES) -> tuple[YamlDocument, list[Problem]]:
    """A document from data a caller parsed: a copy of it as the YAML loader would have given it,
    refused as `parse_yaml` refuses a file (more than `max_nodes` values, nested deeper than
    MAX_DEPTH, strings holding control characters or longer in all than a file may be, numbers
    longer than MAX_NUMBER_CHARACTERS digits) and for anything YAML cannot give: only str, int,
    float, bool and None, lists (tuples read as lists) and mappings keyed by str or int. Every field
    is known, at no line. The sha256 is that of the data as canonical JSON (keys sorted), so equal
    data has equal digests however its mappings were ordered."""
    doc = YamlDocument(shown, None)
    budget = _DataBudget(max_nodes)
    problems: list[Problem] = []
    try:
        plain = _plain(data, (), doc, budget, problems)
    except _Refused as exc:
        return doc, [Problem(f"the {what} {exc}", hint=exc.hint, file=shown)]
    if problems:
        return YamlDocument(shown, None), [p.located(shown, None) for p in problems]
    doc.data = plain
    doc.sha256 = hashlib.sha256(json.dumps(_canonical(plain), ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
    return doc, []


@dataclass
class _DataBudget:
    max_nodes: int
    nodes: int = 0
    characters: int = 0


def _plain(value: object, path: FieldPath, doc: YamlDocument, budget: _DataBudget, problems: list[Problem]) -> object:
    """`value` copied as plain data, its field paths recorded; problems for what YAML cannot hold."""
    budget.nodes += 1
    if budget.nodes > budget.max_nodes:
        raise _Refused(f"has more than {budget.max_nodes:,} values", hint="an intent is a page of YAML")
    if len(path) > MAX_DEPTH:
        raise _Refused(
            f"is nested more than {MAX_DEPTH} levels deep", hint="no intent or catalog field is that deep; a mapping or list inside itself repeats forever"
        )
    doc.lines[path] = None
    # subclasses (an IntEnum, a StrEnum) as their plain values, as YAML would have given them
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        if abs(value) >= 10**MAX_NUMBER_CHARACTERS:
            problems.append(Problem(f"a number of more than {MAX_NUMBER_CHARACTERS} digits; no field takes one that long", field=path))
        return int(value)
    if isinstance(value, str):
        return _plain_text(str.__str__(value), path, budget, problems)
    if isinstance(value, (list, tuple)):
        return [_plain(item, path + (index,), doc, budget, problems) for index, item in enumerate(value)]
    if isinstance(value, Mapping):
        result: dict[str | int, object] = {}
        for key, item in value.items():
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                problems.append(Problem(f"a key must be a name or a number, not a {type(key).__name__}", field=path))
                continue
            key = _plain_text(str.__str__(key), path, budget, problems) if isinstance(key, str) else int(key)
            result[key] = _plain(item, path + (key,), doc, budget, problems)
        return result
    problems.append(
        Problem(f"a {type(value).__name__} is not YAML data", hint="give str, int, float, bool, None, lists and mappings, as YAML would", field=path)
    )
    return None


def _plain_text(text: str, path: FieldPath, budget: _DataBudget, problems: list[Problem]) -> str:
    budget.characters += len(text)
    if budget.characters > MAX_FILE_BYTES:
        raise _Refused(f"holds more than {MAX_FILE_BYTES:,} characters of text", hint="an intent is a short description; split or trim it")
    control = _NOT_TEXT.search(text)
    if control is not None:
        problems.append(
            Problem(
                f"a control character ({printable(control.group())})",
                hint="remove it; tabs and line breaks are the only control characters text may hold",
                field=path,
            )
        )
    return text


def _canonical(value: object) -> object:
    """Plain data as JSON that tells a mapping from a list: ["map", [key, value]...] with the
    pairs in a fixed order (JSON keys are strings, and a mapping may mix str and int keys), and
    ["list", item...]."""
    if isinstance(value, dict):
        pairs = sorted(value.items(), key=lambda pair: (isinstance(pair[0], str), pair[0]))
        return ["map", *([key, _canonical(item)] for key, item in pairs)]
    if isinstance(value, list):
        return ["list", *(_canonical(item) for item in value)]
    return value


def _read_regular_file(path: Path, what: str, max_bytes: int) -> tuple[bytes | None, Problem | None]:
    """The bytes of a regular file of at most `max_bytes`. Opened without blocking and checked
    on the open descriptor, so a FIFO, a device such as /dev/zero or a file swapped after a
    check is refused rather than read forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        return None, Problem(f"the {what} path is a directory, not a file")
    except OSError as exc:
        return None, Problem(f"cannot read the {what} file: {exc.strerror}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, Problem(f"the {what} path is not a regular file", hint="name a YAML file, not a directory, device or pipe")
        if info.st_size > max_bytes:
            return None, Problem(
                f"the {what} file is {info.st_size:,} bytes; the limit is {max_bytes:,}", hint=f"an {what} is a short description; split or trim it"
            )
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while being read
            return None, Problem(f"the {what} file is over {max_bytes:,} bytes", hint=f"an {what} is a short description; split or trim it")
        return b"".join(chunks), None
    except OSError as exc:
        return None, Problem(f"cannot read the {what} file: {exc.strerror}")
    finally:
        os.close(fd)


def _yaml_syntax_problem(exc: yaml.MarkedYAMLError, shown: str, what: str, quote_content: bool = True) -> Problem:
    """Point at the construct that is broken: for an unclosed bracket or quote PyYAML notices at
    the end of the file, the line where the construct began is the one to look at."""
    problem_line = exc.problem_mark.line + 1 if exc.problem_mark else None
    context_line = exc.context_mark.line + 1 if exc.context_mark else None
    reason = exc.problem or "not valid YAML"
    if "maximum nesting depth" in reason:
        # libyaml's scanner runs ahead of the composer and has a depth limit of its own (PyYAML
        # 6.0.4's wheels); the user sees one wording whichever of the two stops first
        return Problem(f"the {what} is nested more than {MAX_DEPTH} levels deep", hint="no intent or catalog field is that deep", file=shown, line=problem_line)
    if not quote_content:
        reason = _QUOTED.sub("'...'", reason)  # PyYAML quotes what it found: an alias name, a character
    if isinstance(exc, yaml.constructor.ConstructorError):
        return Problem(
            f"not valid YAML here: {reason}",
            hint="only plain YAML is read: no tags other than !!str !!int !!float !!bool !!null",
            file=shown,
            line=problem_line,
        )
    if exc.context and context_line and context_line != problem_line:
        return Problem(
            f"not valid YAML: {exc.context} that starts here, {reason} on line {problem_line}",
            hint="close the bracket or quote opened on this line",
            file=shown,
            line=context_line,
        )
    return Problem(f"not valid YAML: {reason}", hint="check indentation, colons and quotes on this line", file=shown, line=problem_line)
