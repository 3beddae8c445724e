"""Markdown generated from the code, so the documentation cannot drift from it.

- `intent_reference(schema)`: every field of the intent, from its JSON Schema (a dict, draft
  2020-12 as pydantic writes it: `$defs`, `$ref`, `anyOf`; draft-07 `definitions` are read too);
  `catalog_reference(schema)` the same of a catalog file, from the catalog's schema.
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
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# The intent reference


@dataclass
class _Section:
    """One object type of the schema: its name, its schema and the intent paths where it appears."""

    name: str
    schema: dict
    paths: list[str] = field(default_factory=list)


ROOT = "Intent"  # the top level's name in anchors (`Intent.gpus`), whatever the schema's title


def intent_reference(schema: dict) -> str:
    """The intent's JSON Schema as Markdown: one section per object type (the top level first, then
    each type where it is first used), a table row per field with its type, default, bounds and
    description. Each row carries the anchor `<Type>.<field>` (e.g. `Backend.qos`, `Intent.gpus`)."""
    return schema_reference(schema, ROOT, "the intent")


CATALOG_ROOT = "Catalog"  # a catalog file's top level in anchors (`Catalog.switches`)


def catalog_reference(schema: dict) -> str:
    """A catalog file's JSON Schema as Markdown, as `intent_reference` writes the intent's; anchors
    `<Type>.<field>` (e.g. `SwitchModel.port_groups`, `Catalog.switches`)."""
    return schema_reference(schema, CATALOG_ROOT, "a catalog file")


def schema_reference(schema: dict, root_name: str, document: str) -> str:
    """Any JSON Schema of a YAML document as Markdown: its top level (anchored as `root_name`)
    first, then each object type where it is first used; `document` names what the top level is
    ("the intent") for a type no path reaches."""
    return "\n".join(_section_markdown(section, schema, root_name, document) for section in _sections(schema, root_name).values())


def schema_fields(schema: dict) -> dict[str, dict[str, dict]]:
    """Every object type of the schema (the top level as `Intent`) with its fields' schemas."""
    types = {ROOT: schema.get("properties", {})}
    for name, definition in _definitions(schema).items():
        if "properties" in definition:
            types[name] = definition["properties"]
    return types


def _definitions(schema: dict) -> dict[str, dict]:
    return {**schema.get("definitions", {}), **schema.get("$defs", {})}


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _sections(schema: dict, root_name: str) -> dict[str, _Section]:
    """The object types in reading order (depth first from the top level, each where it first
    appears), each with every intent path that reaches it; types no path reaches come last."""
    definitions = _definitions(schema)
    sections: dict[str, _Section] = {root_name: _Section(root_name, schema, [""])}

    def visit(node: dict, path: str, stack: tuple[str, ...]) -> None:
        for ref in _refs_in(node):
            name = _ref_name(ref)
            if name not in definitions or name in stack:
                continue
            target_path = path + _ref_suffix(node, ref)
            section = sections.setdefault(name, _Section(name, definitions[name]))
            section.paths.append(target_path)
            visit_object(definitions[name], target_path, (*stack, name))

    def visit_object(node: dict, path: str, stack: tuple[str, ...]) -> None:
        for field_name, field_schema in node.get("properties", {}).items():
            visit(field_schema, f"{path}.{field_name}" if path else field_name, stack)

    visit_object(schema, "", (root_name,))
    for name, definition in definitions.items():
        if "properties" in definition and name not in sections:
            sections[name] = _Section(name, definition)
    return sections


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


def _section_markdown(section: _Section, schema: dict, root_name: str, document: str) -> str:
    node = section.schema
    heading = "The top level" if section.name == root_name else section.name
    lines = [f"## {heading}", ""]
    if section.name != root_name:
        if section.paths:
            lines.append("At " + ", ".join(f"`{path}`" for path in section.paths) + ".")
        else:
            lines.append(f"Not reached from the top level of {document}.")
        lines.append("")
    if node.get("description"):
        lines += [_text(node["description"]), ""]
    required = set(node.get("required", []))
    properties = node.get("properties", {})
    if node.get("additionalProperties") is False:
        lines += ["Any other key is refused.", ""]
    if not properties:
        return "\n".join(lines)
    lines += ["| field | type | default | allowed | description |", "|---|---|---|---|---|"]
    for field_name, field_schema in properties.items():
        anchor = f'<a id="{section.name}.{field_name}"></a>'
        default = "required" if field_name in required else _default(field_schema)
        lines.append(
            f"| {anchor}`{field_name}` | {_type(field_schema)} | {default} | {_bounds(field_schema)} | {_cell(_text(field_schema.get('description', '')))} |"
        )
    lines.append("")
    return "\n".join(lines)


def _type(node: dict) -> str:
    """A field's type in words, other types linked: `integer`, `list of string`, `Bfd` or null."""
    if not isinstance(node, dict) or not node:
        return "any"
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        return f"[{name}](#{_slug(name)})"
    if "const" in node:
        return f"`{_json(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{_json(value)}`" for value in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = [option for option in node[key] if option.get("type") != "null"]
            nullable = len(options) < len(node[key])
            text = " or ".join(dict.fromkeys(_type(option) for option in options)) or "null"
            return text + (" or null" if nullable and options else "")
    if "allOf" in node and len(node["allOf"]) == 1:
        return _type(node["allOf"][0])
    kind = node.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(_type({**node, "type": one}) for one in kind)
    if kind == "array":
        return f"list of {_type(node.get('items', {}))}"
    if kind == "object":
        values = _map_values(node)
        if len(values) == 1:
            return f"map of name to {_type(values[0])}"
        return "mapping"
    if node.get("format"):
        return f"{kind} ({node['format']})"
    return kind


def _default(node: dict) -> str:
    if "default" not in node:
        return ""
    value = node["default"]
    text = _json(value)
    if isinstance(value, dict | list) and value and len(text) > 40:
        return "as its fields say"
    return f"`{text}`"


_BOUNDS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("minProperties", "at least {} entries"),
    ("maxProperties", "at most {} entries"),
)


def _bounds(node: dict) -> str:
    """Ranges, lengths and patterns of a field and of the types it may take (list items, map
    values and keys included)."""
    found: list[str] = []

    def collect(part: dict, prefix: str = "") -> None:
        if not isinstance(part, dict):
            return
        for key, template in _BOUNDS:
            if key in part:
                found.append(prefix + template.format(_number(part[key])))
        if "pattern" in part:
            found.append(prefix + _pattern(part["pattern"]))
        for key in ("anyOf", "oneOf", "allOf"):
            for option in part.get(key, []):
                collect(option, prefix)
        if isinstance(part.get("items"), dict) and "$ref" not in part["items"]:
            collect(part["items"], prefix + "each item ")
        if isinstance(part.get("additionalProperties"), dict) and "$ref" not in part["additionalProperties"]:
            collect(part["additionalProperties"], prefix + "each value ")
        for key_pattern, values in part.get("patternProperties", {}).items():
            found.append(prefix + "each key " + _pattern(key_pattern))
            if isinstance(values, dict) and "$ref" not in values:
                collect(values, prefix + "each value ")
        if isinstance(part.get("propertyNames"), dict):
            names = part["propertyNames"]
            if "enum" in names:
                found.append(prefix + "keys: " + ", ".join(f"`{_json(value)}`" for value in names["enum"]))
            collect(names, prefix + "each key ")

    collect(node)
    return "; ".join(dict.fromkeys(found))


def _pattern(pattern: str) -> str:
    """A short pattern inline; a long one (the schema's text rules run to hundreds of characters)
    folded, so the table stays readable and the pattern is still all there."""
    if len(pattern) <= 60:
        return f"matches `{pattern}`"
    # every sign as a character reference: inside raw HTML Markdown would still read [..](..), * and _
    escaped = "".join(char if char.isalnum() else f"&#{ord(char)};" for char in pattern)
    return f"matches <details><summary>a pattern of {len(pattern):,} characters</summary><code>{escaped}</code></details>"


def _number(value) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _slug(name: str) -> str:
    """The anchor MkDocs' table of contents gives a heading of that name."""
    return re.sub(r"[^\w-]", "", name.strip().lower().replace(" ", "-"))


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
