"""Turns pydantic validation errors into `Problem`s that point at YAML lines."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from pydantic import BaseModel, ValidationError

from fabricgen.basics.errors import FieldPath, Problem
from fabricgen.basics.yaml_source import YamlDocument


def closest(name: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice `name` most likely means, for a 'did you mean' hint: the one that differs only in
    case, else the closest (difflib) with case ignored; None when nothing is close or `name` is a
    choice itself."""
    choices = list(choices)
    if name in choices:
        return None
    folded = name.casefold()
    same = [choice for choice in choices if choice.casefold() == folded]
    if same:
        return same[0]
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    close = difflib.get_close_matches(folded, list(by_folded), n=1, cutoff=cutoff)
    return by_folded[close[0]] if close else None


def _allowed_keys(model: type[BaseModel], path: FieldPath) -> list[str]:
    """The keys the schema accepts at `path` (for 'did you mean' hints). A model consumes a field
    name; a list or a dict keyed by name (a catalog section's PIDs) consumes an index or key."""
    current: object = model
    for part in path:
        fields = getattr(current, "model_fields", None)
        if fields is not None:
            if part not in fields:
                return []
            current = _without_none(fields[part].annotation)
        else:
            args = getattr(current, "__args__", ()) or ()
            if not args:
                return []
            current = _without_none(args[-1])  # list[X] -> X, dict[K, V] -> V
    fields = getattr(current, "model_fields", None)
    return sorted(fields) if fields else []


def _without_none(annotation: object) -> object:
    """X | None -> X."""
    args = [a for a in getattr(annotation, "__args__", ()) or () if a is not type(None)]
    if type(None) in (getattr(annotation, "__args__", ()) or ()) and len(args) == 1:
        return args[0]
    return annotation


def problems_from_validation_error(exc: ValidationError, doc: YamlDocument, model: type[BaseModel], prefix: FieldPath = ()) -> list[Problem]:
    problems = []
    for error in exc.errors(include_url=False):
        path = _field_path(error["loc"], doc, prefix)
        kind = error["type"]
        value = error.get("input")
        if kind == "extra_forbidden" and path:
            key = path[-1]
            allowed = _allowed_keys(model, path[len(prefix) : -1])
            close = closest(str(key), allowed)
            hint = f"did you mean '{close}'?" if close else ("allowed here: " + ", ".join(allowed) if allowed else "remove it")
            problems.append(Problem(f"unknown key {_quoted(key)}", hint=hint, field=path))
        elif kind == "missing" and path:
            problems.append(Problem("this field is required", hint=f"add '{path[-1]}:'", field=path))
        elif kind == "literal_error":
            expected = error.get("ctx", {}).get("expected", "")
            close = closest(value, _literal_choices(error)) if isinstance(value, str) else None
            hint = f"did you mean '{close}'? the choices are {expected}" if close else f"use one of {expected}"
            problems.append(Problem(f"{_quoted(value)} is not allowed here", hint=hint, field=path))
        else:
            message = error["msg"]
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            elif value is not None and not isinstance(value, (dict, list)):
                message = f"{message} (got {_quoted(value)})"
            problems.append(Problem(message, field=path))
    located = [doc.locate(p) for p in problems]
    return sorted(located, key=lambda p: p.line or 0)  # file order reads best


def _literal_choices(error) -> list[str]:
    """The string choices of a Literal that refused a value (pydantic words them as "'a', 'b' or 'c'")."""
    return re.findall(r"'((?:[^'\\]|\\.)*)'", error.get("ctx", {}).get("expected", ""))


def _field_path(loc: tuple[str | int, ...], doc: YamlDocument, prefix: FieldPath) -> FieldPath:
    """The YAML field of a pydantic error location. pydantic adds parts of its own (the member of
    a union it tried, such as 'function-after[...]' or 'int', and '[key]' for a dict key); a part
    is the user's when the document has that key there, so a user's key named 'int' or 'a[b'
    keeps its place (and its line)."""
    path: FieldPath = prefix
    for part in loc:
        if (path + (part,)) in doc.lines or not _is_pydantic_part(part):
            path += (part,)
    return path


def _is_pydantic_part(part: object) -> bool:
    return isinstance(part, str) and ("[" in part or part in {"int", "str", "float", "bool", "list", "dict"})


def _quoted(value: object, limit: int = 60) -> str:
    """A value shown in a message: repr of a number, a quoted string, cut to `limit` characters
    (a hostile 10,000-character key or a whole mapping is not worth printing)."""
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= limit else text[:limit] + "..."
