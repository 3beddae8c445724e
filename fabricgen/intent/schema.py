"""The intent's JSON Schema (draft 2020-12), generated from the pydantic models of
`fabricgen.intent.model`, for editors (yaml-language-server) and the docs' intent reference.

`intent_schema()` returns it as a dict, `schema_text()` as the bytes `fabricgen schema` prints and
`schema/intent.schema.json` holds; `schema_file()` is that file (in a checkout, or shipped inside
the installed package).

The schema describes the intent as written, in validation mode: a speed may be `400G` or 400, a
ratio is text, `name` may be left out (the loader takes the file name). It says what each field
may hold; rules across fields (pools that overlap, a design setting that needs another, catalog
references) stay with the loader, which is the judge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from fabricgen.intent.model import Intent

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_NAME = "intent.schema.json"
TITLE = "fabricgen intent"


class IntentJsonSchema(GenerateJsonSchema):
    """pydantic's generator, with what an editor and a docs generator need:
    - no generated field titles ("Gpu Node"): the key and its description say it;
    - a section's default as only what differs from its own fields' defaults (`frontend.asn`
      defaults to {spine: 65000, leaf_first: 65001}), and none when nothing differs, instead of
      the whole section written out at every level;
    - a mapping whose keys have a pattern (speeds, switch names) refuses other keys, as the
      model does;
    - the draft named at the top."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def encode_default(self, dft: Any) -> Any:
        if isinstance(dft, BaseModel):
            return dft.model_dump(mode="json", exclude_defaults=True)
        return super().encode_default(dft)

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> dict[str, Any]:
        json_schema = super().default_schema(schema)
        if json_schema.get("default") == {} and isinstance(self.get_default_value(schema), BaseModel):
            del json_schema["default"]
        return json_schema

    def dict_schema(self, schema: core_schema.DictSchema) -> dict[str, Any]:
        json_schema = super().dict_schema(schema)
        if "patternProperties" in json_schema:
            json_schema["additionalProperties"] = False
        return json_schema

    def generate(self, schema: core_schema.CoreSchema, mode: Any = "validation") -> dict[str, Any]:
        generated = super().generate(schema, mode)
        generated.pop("title", None)
        _unwrap_descriptions(generated)
        return {"$schema": DRAFT, "title": TITLE, **generated}


def _unwrap_descriptions(node: Any) -> None:
    """Docstrings wrapped at 100 columns become paragraphs: a single line break is a space, a blank
    line stays a paragraph break (editors show descriptions as Markdown)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                node[key] = "\n\n".join(" ".join(paragraph.split()) for paragraph in value.split("\n\n"))
            else:
                _unwrap_descriptions(value)
    elif isinstance(node, list):
        for item in node:
            _unwrap_descriptions(item)


def intent_schema() -> dict[str, Any]:
    """The intent's JSON Schema as a dict."""
    return Intent.model_json_schema(schema_generator=IntentJsonSchema, mode="validation")


def schema_text() -> str:
    """The schema as `fabricgen schema` prints it: indented JSON, keys in the models' order, one
    trailing newline; the same text for the same models."""
    return json.dumps(intent_schema(), indent=2) + "\n"


def schema_file() -> Path:
    """The committed schema: schema/intent.schema.json in a checkout or editable install,
    fabricgen/schema/intent.schema.json inside an installed wheel."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "schema" / SCHEMA_NAME
    if packaged.is_file():
        return packaged
    return here.parents[2] / "schema" / SCHEMA_NAME
