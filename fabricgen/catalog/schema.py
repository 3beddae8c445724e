"""A catalog file's JSON Schema (draft 2020-12), generated from `fabricgen.catalog.model.CatalogFile`
the way the intent's is (`fabricgen.intent.schema`), for editors and the docs' catalog reference.

`catalog_schema()` returns it as a dict, `schema_text()` as the text `fabricgen schema --catalog`
prints and `schema/catalog.schema.json` holds; `schema_file()` is that file.

It covers every section a catalog file may hold, the NOS sections the registry adds to a switch
entry (`sonic:`, `eos:`) and the NOS flavours (`nos_releases:`, as in fabricgen/nos/*/releases.yaml).
It says what each field may hold; rules across fields and files (a PID defined once, a cage in one
port group, a transceiver's cable in the catalog) stay with the loader, which is the judge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_core import core_schema

from fabricgen.basics.trust import SAYS
from fabricgen.catalog.model import CatalogFile
from fabricgen.intent.schema import DRAFT, IntentJsonSchema

SCHEMA_NAME = "catalog.schema.json"
TITLE = "fabricgen catalog"

# A breakout as `PortGroup.breakouts` reads it (`2x400G`: fanout 2 to MAX_FANOUT, x, a speed with
# its unit, either letter in either case), written out for ECMAScript, which has no flags;
# tests/test_catalog_schema.py holds it to the model's check.
BREAKOUT_PATTERN = r"^(?:0?[2-9]|1[0-6])[xX][0-9]{1,5}[GgMm]$"
BREAKOUT_SAYS = "ports x speed: 2 to 16, 'x', a speed with its unit G or M, such as 2x400G or 4x100G"


class CatalogJsonSchema(IntentJsonSchema):
    """The intent's generator (no generated titles, sections' defaults as what differs, keyed maps
    closed, descriptions unwrapped) under the catalog's title, with the breakout strings' form,
    which the model checks in a validator rather than a pattern."""

    def generate(self, schema: core_schema.CoreSchema, mode: Any = "validation") -> dict[str, Any]:
        generated = super().generate(schema, mode)
        generated["title"] = TITLE
        generated["$defs"]["PortGroup"]["properties"]["breakouts"]["items"]["pattern"] = BREAKOUT_PATTERN
        generated["$defs"]["PortGroup"]["properties"]["breakouts"]["items"][SAYS] = BREAKOUT_SAYS
        return generated


def catalog_schema() -> dict[str, Any]:
    """The catalog file's JSON Schema as a dict."""
    schema = CatalogFile.model_json_schema(schema_generator=CatalogJsonSchema, mode="validation")
    assert schema["$schema"] == DRAFT
    return schema


def schema_text() -> str:
    """The schema as `fabricgen schema --catalog` prints it: indented JSON, keys in the models'
    order, one trailing newline; the same text for the same models and NOS packages."""
    return json.dumps(catalog_schema(), indent=2) + "\n"


def schema_file() -> Path:
    """The committed schema: schema/catalog.schema.json in a checkout or editable install,
    fabricgen/schema/catalog.schema.json inside an installed wheel."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "schema" / SCHEMA_NAME
    if packaged.is_file():
        return packaged
    return here.parents[2] / "schema" / SCHEMA_NAME
