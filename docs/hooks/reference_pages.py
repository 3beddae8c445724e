"""Markdown generated from the code, so the documentation cannot drift from it.

- `intent_reference(schema)`: every key of the intent by its YAML path (`backend.leaf.model`,
  `nodes[].count`, `switches.<name>.ports`), a section per top-level key with a Table view and a
  YAML view (mkdocs-material content tabs), value restrictions in words (a pattern by the words
  the schema gives beside it, `patternErrorMessage`), from its JSON Schema (a dict, draft 2020-12
  as pydantic writes it: `$defs`, `$ref`, `anyOf`; draft-07 `definitions` are read too);
  `catalog_reference(schema)` the same of a catalog file, from the catalog's schema.
  `unworded_patterns(schema)` lists the patterns that have no words (tests ask for none).
- `command_pages(root)` and `options_reference(command, path)`: every command of the command line
  and its arguments and options, from the Click command tree Typer builds, with the same help
  text `--help` prints.

Pure functions of their input: the MkDocs hook (`fabricgen_docs.py`) feeds them and puts the text
into the pages; tests/test_docs.py checks the built site against the same sources.
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# The intent and catalog references, keyed by YAML path (as Arista AVD's input variables are)

SAYS = "patternErrorMessage"  # a pattern's plain words beside it (fabricgen.basics.trust.SAYS)
SMALL = 12  # an object type of at most this many rows is shown in full wherever it appears
LONG_PATTERN = 40  # a pattern without words is shown if this short (a test asks every pattern for words)


@dataclass
class _Row:
    """One key of the document: its YAML path, its schema and how deep it sits."""

    path: str  # backend.leaf.model, nodes[].count, switches.<name>.ports
    key: str  # the last part: model
    schema: dict
    required: bool
    item: bool = False  # the first key of a list item (`- key:` in YAML)
    elsewhere: str = ""  # the path where this key's object type is shown in full, when not here
    either: tuple[str, ...] = ()  # the keys of which exactly one is required, this one among them
    children: list[_Row] = field(default_factory=list)


def intent_reference(schema: dict) -> str:
    """The intent's JSON Schema as Markdown: a section per top-level key, each a table of every key
    under it by YAML path (type, required, default, value restrictions in words, description) and
    the same keys as a YAML skeleton, in two tabs. Each key's row has its path as anchor
    (`#backend.leaf.model`; `<name>` of a map is `*` there)."""
    return schema_reference(schema, "the intent")


def catalog_reference(schema: dict) -> str:
    """A catalog file's JSON Schema as Markdown, as `intent_reference` writes the intent's."""
    return schema_reference(schema, "a catalog file")


def schema_reference(schema: dict, document: str) -> str:
    """Any JSON Schema of a YAML document as Markdown, a section per top-level key; `document` names
    what the top level is ("the intent")."""
    words = pattern_words(schema)
    sections = [_section(row, words) for row in yaml_rows(schema)]
    if not sections:
        return f"{document[0].upper()}{document[1:]} has no keys."
    return "\n".join(sections)


def yaml_rows(schema: dict) -> list[_Row]:
    """Every key of the document as a tree of rows, top-level keys first. An object type is shown
    in full where it sits least deep (the first such place in reading order), and again wherever
    it is small; elsewhere its row names the path where it is shown."""
    definitions = _definitions(schema)
    homes = _homes(schema, definitions)

    def rows_of(node: dict, prefix: str, ancestors: tuple[str, ...], item: bool) -> list[_Row]:
        required = set(node.get("required", []))
        out = []
        for index, (key, field_schema) in enumerate(node.get("properties", {}).items()):
            path = f"{prefix}.{key}" if prefix else key
            row = _Row(path, key, field_schema, key in required, item=item and index == 0)
            for ref in dict.fromkeys(_refs_in(field_schema)):
                name = _ref_name(ref)
                if name not in definitions or name in ancestors:
                    continue
                inner = path + _ref_suffix(field_schema, ref)
                if homes[name][1] == inner or _size(name, definitions) <= SMALL:
                    row.children += rows_of(definitions[name], inner, (*ancestors, name), inner.endswith("[]"))
                else:
                    row.elsewhere = homes[name][0]
            out.append(row)
        return out

    rows = rows_of(schema, "", (), False)
    either = _exactly_one_of(schema)
    for row in rows:
        if row.key in either:
            row.either = either
    return rows


def _exactly_one_of(node: dict) -> tuple[str, ...]:
    """The keys of a `oneOf` whose every branch requires one key (`gpus` or `nodes`)."""
    branches = node.get("oneOf", [])
    keys = [branch.get("required", []) for branch in branches if isinstance(branch, dict)]
    if branches and all(len(one) == 1 for one in keys) and len(keys) == len(branches):
        return tuple(one[0] for one in keys)
    return ()


def _homes(schema: dict, definitions: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """Where each object type is shown in full: the least deep key that holds it, breadth first, as
    (the key's path, the path its fields go under: `nodes`, `nodes[]`)."""
    homes: dict[str, tuple[str, str]] = {}
    queue: list[tuple[dict, str, tuple[str, ...]]] = [(schema, "", ())]
    while queue:
        next_queue = []
        for node, prefix, ancestors in queue:
            for key, field_schema in node.get("properties", {}).items():
                path = f"{prefix}.{key}" if prefix else key
                for ref in dict.fromkeys(_refs_in(field_schema)):
                    name = _ref_name(ref)
                    if name not in definitions or name in ancestors:
                        continue
                    inner = path + _ref_suffix(field_schema, ref)
                    if name not in homes:
                        homes[name] = (path, inner)
                    elif _size(name, definitions) > SMALL:
                        continue
                    next_queue.append((definitions[name], inner, (*ancestors, name)))
        queue = next_queue
    return homes


def _size(name: str, definitions: dict[str, dict], ancestors: tuple[str, ...] = ()) -> int:
    """How many rows an object type takes written out in full."""
    total = 0
    for field_schema in definitions[name].get("properties", {}).values():
        total += 1
        for ref in dict.fromkeys(_refs_in(field_schema)):
            inner = _ref_name(ref)
            if inner in definitions and inner not in (*ancestors, name):
                total += _size(inner, definitions, (*ancestors, name))
    return total


def _definitions(schema: dict) -> dict[str, dict]:
    return {**schema.get("definitions", {}), **schema.get("$defs", {})}


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _refs_in(node: dict) -> list[str]:
    """The `$ref`s a field's schema leads to: directly, through anyOf/oneOf/allOf, list items and
    map values (not through another object's properties)."""
    if not isinstance(node, dict):
        return []
    refs = [node["$ref"]] if "$ref" in node else []
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key, []):
            refs += _refs_in(option)
    if isinstance(node.get("items"), dict):
        refs += _refs_in(node["items"])
    for values in _map_values(node):
        refs += _refs_in(values)
    return refs


def _map_values(node: dict) -> list[dict]:
    """The schemas of a mapping's values: `additionalProperties`, or those of `patternProperties`
    (a map whose keys have a form, such as the catalog's PIDs)."""
    values = [node["additionalProperties"]] if isinstance(node.get("additionalProperties"), dict) else []
    return values + [value for value in node.get("patternProperties", {}).values() if isinstance(value, dict)]


def _ref_suffix(node: dict, ref: str) -> str:
    """How a path continues into a referenced type: `[]` through a list, `.<name>` through a map."""
    for option in [node, *node.get("anyOf", []), *node.get("oneOf", []), *node.get("allOf", [])]:
        if not isinstance(option, dict):
            continue
        if isinstance(option.get("items"), dict) and ref in _refs_in(option["items"]):
            return "[]"
        if any(ref in _refs_in(values) for values in _map_values(option)):
            return ".<name>"
    return ""


def anchor(path: str) -> str:
    """A key's anchor on its page: its path, `<name>` as `*` (`switches.*.ports`)."""
    return path.replace("<name>", "*")


def pattern_words(schema: dict) -> dict[str, str]:
    """Every pattern of the schema that has words beside it (`patternErrorMessage`), with them; a
    map's key pattern (patternProperties) finds its words here or in its propertyNames."""
    words: dict[str, str] = {}
    for node in _schema_nodes(schema):
        if isinstance(node.get("pattern"), str) and node.get(SAYS):
            words.setdefault(node["pattern"], node[SAYS])
        if isinstance(node.get("propertyNames"), dict) and node["propertyNames"].get(SAYS):
            for key_pattern in node.get("patternProperties", {}):
                words.setdefault(key_pattern, node["propertyNames"][SAYS])
    return words


def unworded_patterns(schema: dict) -> list[str]:
    """The patterns of a schema (values' and maps' keys') that have no words: each should have some."""
    words = pattern_words(schema)
    found: list[str] = []
    for node in _schema_nodes(schema):
        if isinstance(node.get("pattern"), str) and node["pattern"] not in words:
            found.append(node["pattern"])
        found.extend(key for key in node.get("patternProperties", {}) if key not in words)
    return sorted(set(found))


def _schema_nodes(node):
    """Every object of a JSON Schema document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schema_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schema_nodes(value)


def _flatten(rows: list[_Row]) -> list[_Row]:
    out = []
    for row in rows:
        out.append(row)
        out += _flatten(row.children)
    return out


def _section(row: _Row, words: dict[str, str]) -> str:
    """A top-level key's section: its heading, its description, then the Table and YAML tabs."""
    lines = [f"## `{row.key}`", ""]
    if row.schema.get("description") and row.children:
        lines += [_text(row.schema["description"]), ""]
    lines += ['=== "Table"', "", "    | Variable | Type | Required | Default | Value restrictions | Description |", "    |---|---|---|---|---|---|"]
    for one in _flatten([row]):
        lines.append("    " + _table_row(one, words))
    lines += ["", '=== "YAML"', "", "    ```yaml"]
    lines += ["    " + line if line else "" for line in _yaml_lines([row])]
    lines += ["    ```", ""]
    return "\n".join(lines)


def _table_row(row: _Row, words: dict[str, str]) -> str:
    # a top-level key's anchor is its section heading's (the same word; an id is given once)
    anchored = "" if row.path == row.key else f' id="{_attribute(anchor(row.path))}"'
    path = f'<code class="fg-path"{anchored}>{_path_html(row.path)}</code>'
    description = _text(row.schema.get("description", ""))
    if row.elsewhere:
        shown = f'<a href="#{_attribute(anchor(row.elsewhere))}"><code class="fg-path">{_path_html(row.elsewhere)}</code></a>'
        description = (description + "<br>" if description else "") + f"Its keys are those of {shown}."
    required = "yes" if row.required else ("one of " + ", ".join(f"<code>{_html(key)}</code>" for key in row.either) if row.either else "")
    cells = [path, _kind(row.schema), required, _default(row.schema), "<br>".join(restrictions(row.schema, words)), _cell(description)]
    return "| " + " | ".join(cells) + " |"


def _path_html(path: str) -> str:
    """A YAML path for a table cell: each key whole (never broken inside, however narrow the
    column: extra.css keeps a span on one line), a line break allowed only after a dot."""
    parts = re.split(r"(?<=\.)", path)
    return "<wbr>".join(f"<span>{_html(part)}</span>" for part in parts if part)


def _kind(node: dict) -> str:
    """A key's type in words: `integer`, `list of strings`, `object or null`."""
    if not isinstance(node, dict) or not node:
        return "any"
    if "$ref" in node:
        return "object"
    if "const" in node:
        return _kind({"type": _json_type(node["const"])})
    if "enum" in node:
        kinds = dict.fromkeys(_json_type(value) for value in node["enum"])
        return " or ".join(kinds)
    for key in ("anyOf", "oneOf"):
        if key in node and "type" in node and not any("type" in option or "$ref" in option for option in node[key]):
            return _kind({name: value for name, value in node.items() if name != key})  # alternative forms of one type
        if key in node:
            options = [option for option in node[key] if option.get("type") != "null"]
            nullable = len(options) < len(node[key])
            text = " or ".join(dict.fromkeys(_kind(option) for option in options)) or "null"
            return text + (" or null" if nullable and options else "")
    if "allOf" in node and len(node["allOf"]) == 1:
        return _kind(node["allOf"][0])
    kind = node.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(_kind({**node, "type": one}) for one in kind)
    if kind == "array":
        return f"list of {_plural(_kind(node.get('items', {})))}"
    if kind == "object":
        values = _map_values(node)
        if len(values) == 1:
            return f"map of name to {_kind(values[0])}"
        return "object"
    return kind


def _plural(kind: str) -> str:
    return " or ".join(part if part.endswith("s") or part == "any" else part + "s" for part in kind.split(" or "))


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "any")


def _default(node: dict) -> str:
    if "default" not in node:
        return ""
    value = node["default"]
    text = _json(value)
    if isinstance(value, dict | list) and value and len(text) > 40:
        return "as its keys say"
    return f'<code class="fg-value">{_html(text)}</code>' if len(text) <= 30 else f"<code>{_html(text)}</code>"


def _value_code(value) -> str:
    """One value the key takes, as code kept on one line."""
    return f'<code class="fg-value">{_html(_json(value))}</code>'


def _range(low, high, unit: str = "") -> str:
    """`1 to 4,096`, `at least 1`, `at most 63 characters`."""
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"{_number(low)}" + suffix if low == high else f"{_number(low)} to {_number(high)}{suffix}"
    if low is not None:
        return f"at least {_number(low)}{suffix}"
    return f"at most {_number(high)}{suffix}"


def restrictions(node: dict, words: dict[str, str], prefix: str = "") -> list[str]:
    """What a key's value may be, in words: ranges, lengths, counts, the values it takes, what its
    pattern allows, for the key itself and for its list items, map keys and values."""
    found: list[str] = []
    if not isinstance(node, dict):
        return found
    if "minimum" in node or "maximum" in node:
        found.append(prefix + _range(node.get("minimum"), node.get("maximum")))
    if "exclusiveMinimum" in node:
        found.append(prefix + f"more than {_number(node['exclusiveMinimum'])}")
    if "exclusiveMaximum" in node:
        found.append(prefix + f"less than {_number(node['exclusiveMaximum'])}")
    if "minLength" in node or "maxLength" in node:
        found.append(prefix + _range(node.get("minLength"), node.get("maxLength"), "characters"))
    if "minItems" in node or "maxItems" in node:
        found.append(prefix + _range(node.get("minItems"), node.get("maxItems"), "items"))
    if "minProperties" in node or "maxProperties" in node:
        found.append(prefix + _range(node.get("minProperties"), node.get("maxProperties"), "entries"))
    if "enum" in node:
        found.append(prefix + "one of " + ", ".join(_value_code(value) for value in node["enum"]))
    if "const" in node:
        found.append(prefix + f"only <code>{_html(_json(node['const']))}</code>")
    if isinstance(node.get("not"), dict) and "enum" in node["not"]:
        found.append(prefix + "not " + ", ".join(_value_code(value) for value in node["not"]["enum"]))
    if isinstance(node.get("pattern"), str):
        found.append(prefix + _pattern(node["pattern"], words))
    options = [option for key in ("anyOf", "oneOf") for option in node.get(key, []) if isinstance(option, dict)]
    alternatives = ["; ".join(restrictions(option, words)) for option in options if option.get("type") != "null"]
    alternatives = [text for text in alternatives if text]
    if len(alternatives) > 1 and "pattern" in str(options):
        found.append(prefix + " or ".join(alternatives))
    else:
        found += [prefix + text for text in alternatives]
    for option in node.get("allOf", []):
        found += restrictions(option, words, prefix)
    if isinstance(node.get("items"), dict) and "$ref" not in node["items"]:
        found += restrictions(node["items"], words, prefix + "each item: ")
    if isinstance(node.get("additionalProperties"), dict) and "$ref" not in node["additionalProperties"]:
        found += restrictions(node["additionalProperties"], words, prefix + "each value: ")
    for key_pattern, values in node.get("patternProperties", {}).items():
        found.append(prefix + "each name: " + _pattern(key_pattern, words))
        if isinstance(values, dict) and "$ref" not in values:
            found += restrictions(values, words, prefix + "each value: ")
    names = node.get("propertyNames")
    if isinstance(names, dict) and "enum" in names:
        found.append(prefix + "each name: one of " + ", ".join(_value_code(value) for value in names["enum"]))
    return list(dict.fromkeys(found))


def _pattern(pattern: str, words: dict[str, str]) -> str:
    """What a pattern allows, in its words; a short pattern without words as itself (a test asks
    every pattern of the project's schemas for words), a long one by its length only."""
    if pattern in words:
        return _html(words[pattern])
    if len(pattern) <= LONG_PATTERN:
        return f"matches <code>{_html(pattern)}</code>"
    return f"matches a pattern of {len(pattern):,} characters (see the JSON Schema)"


def _yaml_lines(rows: list[_Row], indent: str = "") -> list[str]:
    """The keys as a YAML skeleton: each key with `<type; values; required or default>` as its
    value and its description's first sentence as a comment above it; a list's items begin with
    `- `, a map's entries with `<name>:`."""
    lines: list[str] = []
    for row in rows:
        lead = indent[:-2] + "- " if row.item else indent
        comment = _first_sentence(row.schema.get("description", ""))
        if comment:
            lines += [f"{indent}# {line}" for line in textwrap.wrap(comment, 96)]
        if not row.children:
            value = f"  # <{_kind(row.schema)}>: its keys are those of {row.elsewhere}" if row.elsewhere else f" <{_value_hint(row)}>"
            lines.append(f"{lead}{row.key}:{value}")
            continue
        lines.append(f"{lead}{row.key}:  # <{_kind(row.schema)}>")
        rest = row.children[0].path[len(row.path) :]
        if rest.startswith("[]"):
            lines += _yaml_lines(row.children, indent + "    ")
        elif rest.startswith(".<name>."):
            lines.append(f"{indent}  <name>:")
            lines += _yaml_lines(row.children, indent + "    ")
        else:
            lines += _yaml_lines(row.children, indent + "  ")
    return lines


def _value_hint(row: _Row) -> str:
    """`int; 1-4096; default 1`: a value's type, its values or range, required or its default."""
    node = row.schema
    parts = [_kind(node)]
    values = _enum_values(node)
    if values:
        parts.append(" | ".join(values))
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None or high is not None:
        parts.append(_range(low, high).replace(",", ""))
    if row.required:
        parts.append("required")
    elif row.either:
        parts.append("one of " + " or ".join(row.either) + " required")
    elif "default" in node and len(_json(node["default"])) <= 40:
        parts.append(f"default {_json(node['default'])}")
    return "; ".join(parts)


def _enum_values(node: dict) -> list[str]:
    if "enum" in node:
        return [_json(value) for value in node["enum"]]
    for key in ("anyOf", "oneOf"):
        for option in node.get(key, []):
            if isinstance(option, dict) and "enum" in option:
                return [_json(value) for value in option["enum"]]
    return []


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?(?<!e\.g)(?<!i\.e))\.(?:\s+[A-Z]|$)", text)
    return match.group(1) if match else text


def _html(text: str) -> str:
    """Text for raw HTML in a Markdown table cell: every sign a character reference, so Markdown
    reads no link, emphasis or cell border in it."""
    return "".join(char if char.isalnum() or char == " " else f"&#{ord(char)};" for char in text)


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _number(value) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


# ---------------------------------------------------------------------------------------------
# The command line


def commands(root) -> dict[str, object]:
    """Every command that runs something, by its path under the program (`build`, `lab up`),
    hidden ones included (`testplan plan` is what `fabricgen testplan BUILD_DIR` runs)."""
    found: dict[str, object] = {}

    def walk(command, path: str) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, subcommand in subcommands.items():
                walk(subcommand, f"{path} {name}".strip())
        elif path:
            found[path] = command

    walk(root, "")
    return found


def page_of(path: str, pages: dict[str, str] | None = None) -> str:
    """The page (under docs/) that documents a command: `commands/<first word>.md`, unless
    `pages` names another for the first word (validate is documented with build)."""
    top = path.split()[0]
    return (pages or {}).get(top, f"commands/{top}.md")


def options_reference(root, path: str, program: str = "fabricgen") -> str:
    """One command's usage, description and a table of its arguments and options, each as
    `--help` prints it (the same Click help records)."""
    context = root.make_context(program, [], resilient_parsing=True)
    command = root
    for word in path.split():
        command = command.commands[word]
        context = command.make_context(word, [], parent=context, resilient_parsing=True)
    usage = " ".join([context.command_path, *command.collect_usage_pieces(context)])
    lines = [f"`{usage}`", ""]
    description = inspect.cleandoc(command.help or "")
    if description:
        lines += [_text(paragraph) for paragraph in description.split("\n\n")]
        lines = _paragraphs(lines)
    rows = []
    for parameter in command.get_params(context):
        if getattr(parameter, "hidden", False):
            continue
        record = parameter.get_help_record(context)
        if record is None:
            continue
        name, help_text = record
        rows.append(f"| `{name}` | {_cell(_text(help_text))} |")
    if rows:
        lines += ["| argument or option | what it does |", "|---|---|", *rows, ""]
    return "\n".join(lines)


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += [line, ""] if line else []
    return out


# ---------------------------------------------------------------------------------------------
# Text from the code, made safe for Markdown

_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def _text(text: str) -> str:
    """Help or description text as Markdown that shows it as written: `<device>` stays visible,
    `*` and `_` do not become emphasis, code spans in backticks stay code."""
    pieces = _CODE_SPAN.split(" ".join(text.split()))
    out = []
    for piece in pieces:
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            out.append(piece)
        else:
            out.append(
                piece.replace("\\", "\\\\")
                .replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("*", "\\*")
                .replace("_", "\\_")
                .replace("[", "\\[")
                .replace("]", "\\]")
                .replace("`", "\\`")
                .replace("|", "\\|")
            )
    return "".join(out)


def _cell(text: str) -> str:
    """Text for a table cell: one line (`_text` has escaped `|` outside code spans)."""
    return " ".join(text.split())
