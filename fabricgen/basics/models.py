"""The bases of fabricgen's pydantic models, one per kind of document a model describes.

- `InputModel`: what a user writes (an intent, a catalog file).
- `FileModel`: what fabricgen's own files hold, read back (a build's manifest and reports,
  testplan.json, an output's marker, lab/overlay.json).
- `JsonOutputModel`: a document a command prints with `--json` (or writes with `--json-report`).

Every one refuses a key it does not declare: a typo in an intent, a file another tool or version
wrote, or a field the documented shape (its JSON Schema, `additionalProperties: false`) leaves out.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class InputModel(BaseModel):
    """What a user writes. Every value must be of its exact type (strict: 256 written as a
    number, true is not 1, "no" is not false), and the loaded model does not change (frozen)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FileModel(BaseModel):
    """What a file fabricgen wrote holds, as a command reads it back: frozen once read. Values
    are taken as JSON, YAML or a CSV cell gives them (a number for a float field, a string cell);
    each field's own type and validators bound them (`fabricgen.build.build_dir`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class JsonOutputModel(BaseModel):
    """A document a command prints (`build --json`, `verify --json`, ...), checked against its
    documented shape before it is printed."""

    model_config = ConfigDict(extra="forbid")
