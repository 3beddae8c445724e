"""Safe, bounded YAML loading that remembers the line of every field.

Intents and catalogs are user input: they are loaded with PyYAML's SafeLoader only, refused above a
size limit and a node budget (so alias bombs cannot blow up memory), and duplicate keys are errors
instead of PyYAML's silent "last one wins". The result keeps a map from field path to line so later
phases can point at the line that caused a problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricgen.errors import FieldPath, Problem

MAX_FILE_BYTES = 1 << 20  # 1 MiB: an intent is a page of YAML, a catalog a few hundred entries
MAX_NODES = 200_000


@dataclass
class YamlDocument:
    """Plain data from one YAML file plus where each field came from."""

    path: str
    data: Any
    lines: dict[FieldPath, int] = field(default_factory=dict)

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


class _Walker:
    """Turns a composed node tree into Python data, recording lines, refusing duplicates."""

    def __init__(self, loader: yaml.SafeLoader, doc: YamlDocument):
        self.loader = loader
        self.doc = doc
        self.nodes = 0
        self.problems: list[Problem] = []

    def walk(self, node: yaml.Node, path: FieldPath) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_TAGS:
            # only plain YAML: an application tag such as !!python/object is refused, not ignored
            raise yaml.constructor.ConstructorError(None, None, f"tag {node.tag!r} is not allowed", node.start_mark)
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)  # resolves '<<' merge keys
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int)):
                    self.problems.append(
                        Problem(f"a key must be a name, not {key!r}", field=path, line=key_node.start_mark.line + 1)
                    )
                    continue
                key_path = path + (key,)
                line = key_node.start_mark.line + 1
                if key in result:
                    first = self.doc.lines.get(key_path)
                    self.problems.append(
                        Problem(
                            f"duplicate key '{key}' (first given on line {first})",
                            hint="keep one of the two; YAML would silently use the last",
                            field=key_path,
                            line=line,
                        )
                    )
                    continue
                self.doc.lines[key_path] = line
                result[key] = self.walk(value_node, key_path)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.doc.lines[path + (index,)] = item.start_mark.line + 1
                items.append(self.walk(item, path + (index,)))
            return items
        if node.tag in _SEXAGESIMAL_TAGS and ":" in node.value:
            # YAML 1.1 reads 2:1 as the base-60 number 121; a ratio is what an intent means by it
            return node.value
        return self.loader.construct_object(node, deep=True)


_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_SEXAGESIMAL_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


class _TooLarge(Exception):
    pass


def load_yaml(path: Path, what: str = "intent", max_bytes: int = MAX_FILE_BYTES) -> tuple[YamlDocument, list[Problem]]:
    """Load one YAML file. Returns the document and the problems found (empty when it loaded).

    Problems carry file and line already; the document's data is None when the file is unusable.
    """
    shown = str(path)
    doc = YamlDocument(shown, None)
    try:
        size = path.stat().st_size
    except OSError as exc:
        return doc, [Problem(f"cannot read the {what} file: {exc.strerror}", file=shown)]
    if not path.is_file():
        return doc, [Problem(f"the {what} path is not a file", file=shown)]
    if size > max_bytes:
        return doc, [
            Problem(
                f"the {what} file is {size:,} bytes; the limit is {max_bytes:,}",
                hint=f"an {what} is a short description; split or trim it",
                file=shown,
            )
        ]
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return doc, [Problem(f"the {what} file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=shown)]
    except OSError as exc:
        return doc, [Problem(f"cannot read the {what} file: {exc.strerror}", file=shown)]
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            first_line = {"intent": "gpus: 256", "catalog": "switches:"}.get(what, "a key: value")
            return doc, [Problem(f"the {what} file is empty", hint=f"start with a line such as '{first_line}'", file=shown, line=1)]
        walker = _Walker(loader, doc)
        doc.lines[()] = root.start_mark.line + 1
        doc.data = walker.walk(root, ())
    except _TooLarge:
        return YamlDocument(shown, None), [
            Problem(f"the {what} expands to more than {MAX_NODES:,} YAML nodes (aliases?)", file=shown)
        ]
    except yaml.MarkedYAMLError as exc:
        return YamlDocument(shown, None), [_yaml_syntax_problem(exc, shown)]
    except yaml.YAMLError as exc:
        return YamlDocument(shown, None), [Problem(f"not valid YAML: {exc}", file=shown)]
    finally:
        loader.dispose()
    return doc, [p.located(shown, p.line) for p in walker.problems]


def _yaml_syntax_problem(exc: yaml.MarkedYAMLError, shown: str) -> Problem:
    """Point at the construct that is broken: for an unclosed bracket or quote PyYAML notices at
    the end of the file, the line where the construct began is the one to look at."""
    problem_line = exc.problem_mark.line + 1 if exc.problem_mark else None
    context_line = exc.context_mark.line + 1 if exc.context_mark else None
    reason = exc.problem or "not valid YAML"
    if isinstance(exc, yaml.constructor.ConstructorError):
        return Problem(f"not valid YAML here: {reason}", hint="only plain YAML is read: no !! or ! tags", file=shown, line=problem_line)
    if exc.context and context_line and context_line != problem_line:
        return Problem(
            f"not valid YAML: {exc.context} that starts here, {reason} on line {problem_line}",
            hint="close the bracket or quote opened on this line",
            file=shown,
            line=context_line,
        )
    return Problem(f"not valid YAML: {reason}", hint="check indentation, colons and quotes on this line", file=shown, line=problem_line)
