"""The catalog's JSON Schema: committed and current, valid draft 2020-12, accepting every built-in
catalog file (whatever files the catalog holds: the directory is globbed) and refusing what the
loader refuses."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from fabricgen.basics.yaml_source import MAX_CATALOG_NODES, load_yaml
from fabricgen.catalog import BUILTIN_DIR, builtin_files, load_catalog
from fabricgen.catalog.schema import BREAKOUT_PATTERN, catalog_schema, schema_file, schema_text
from fabricgen.cli import app
from fabricgen.intent.schema import DRAFT
from fabricgen.nos import registry
from tests.conftest import REPO

runner = CliRunner()
COMMITTED = REPO / "schema" / "catalog.schema.json"
REGENERATE = ".venv/bin/fabricgen schema --catalog -o schema/catalog.schema.json"
# every built-in catalog file, found by globbing as the loader finds them
BUILTIN_FILES = builtin_files()


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(COMMITTED.read_text()), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def as_json(path: Path) -> object:
    """The catalog file as the loader reads it, as JSON (and an editor) sees it: keys are text."""
    doc, problems = load_yaml(path, what="catalog", quote_content=False, max_nodes=MAX_CATALOG_NODES)
    assert not problems, problems
    return json.loads(json.dumps(doc.data))


def schema_errors(validator, path: Path) -> list[str]:
    """Every error as "field.path: message", an anyOf's alternatives included."""
    found = []
    pending = list(validator.iter_errors(as_json(path)))
    while pending:
        error = pending.pop()
        found.append(f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:200]}")
        pending += error.context or []
    return found


def test_committed_schema_is_the_one_the_models_give():
    assert COMMITTED.read_text(encoding="utf-8") == schema_text(), (
        f"{COMMITTED.relative_to(REPO)} differs from the catalog models' schema; regenerate it with `{REGENERATE}` and commit it"
    )


def test_schema_is_valid_draft_2020_12_and_covers_every_section():
    schema = catalog_schema()
    assert schema["$schema"] == DRAFT and schema["title"] == "fabricgen catalog"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema_file() == COMMITTED
    assert list(schema["properties"]) == ["switches", "transceivers", "cables", "nodes", "console_servers", "modules", "appliances", "nos_releases"]
    assert schema["additionalProperties"] is False
    switch = schema["$defs"]["SwitchModel"]["properties"]
    # the NOS sections the registry adds to a switch entry
    assert [name for name in registry.names() if registry.plugins()[name].CATALOG_PLATFORM is not None] == [n for n in registry.names() if n in switch]


def test_the_builtin_files_are_found():
    # every data file, whatever its name (helpers add files), and every NOS's releases
    assert set(BUILTIN_FILES) == {*BUILTIN_DIR.glob("*.yaml"), *(REPO / "fabricgen" / "nos").glob("*/releases.yaml")}
    assert len(BUILTIN_FILES) >= 5 + 3


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_builtin_catalog_file_is_valid(validator, path):
    assert schema_errors(validator, path) == []


# A file the loader refuses, each for one reason, and the field the schema must name.
GOOD_SWITCH = """\
switches:
  TEST-SW:
    description: a test switch
    vendor: Test
    nos: [sonic]
    port_groups: [{count: 4, speed: 400G, form_factor: QSFP-DD, lanes: 8, breakouts: [%s]}]
    interface_names: {sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}}
"""
BROKEN = {
    "a count written as text": (GOOD_SWITCH.replace("count: 4", 'count: "4"') % "2x200G", "switches.TEST-SW.port_groups.0.count"),
    "an unknown key in an entry": (GOOD_SWITCH.replace("vendor: Test", "vendor: Test\n    colour: red") % "2x200G", "switches.TEST-SW"),
    "an unknown section": ("switchs: {}", "(top)"),
    "a breakout without a fanout": (GOOD_SWITCH % "x200G", "switches.TEST-SW.port_groups.0.breakouts.0"),
    "a breakout of one sub-port": (GOOD_SWITCH % "1x400G", "switches.TEST-SW.port_groups.0.breakouts.0"),
    "a breakout of 17 sub-ports": (GOOD_SWITCH % "17x25G", "switches.TEST-SW.port_groups.0.breakouts.0"),
    "a breakout speed without a unit": (GOOD_SWITCH % "2x200", "switches.TEST-SW.port_groups.0.breakouts.0"),
    "a NOS fabricgen has not": (GOOD_SWITCH.replace("nos: [sonic]", "nos: [junos]") % "2x200G", "switches.TEST-SW.nos.0"),
    "a PID with a space": ("cables:\n  'MY CABLE': {description: x, media: smf, connector: LC}", "cables"),
    "an unknown medium": ("cables:\n  MY-CABLE: {description: x, media: wire, connector: LC}", "cables.MY-CABLE.media"),
    "a GPU count out of range": ("nodes:\n  N1: {kind: gpu, description: x, gpus: -1}", "nodes.N1.gpus"),
    "a release name of no form": (
        "nos_releases:\n  my-sonic: {nos: sonic, description: x, releases: [next], default: next, features: {}}",
        "nos_releases.my-sonic.releases.0",
    ),
}


@pytest.mark.parametrize("text, field", BROKEN.values(), ids=BROKEN.keys())
def test_schema_and_loader_refuse_the_same_broken_file(validator, tmp_path, text, field):
    path = tmp_path / "broken.yaml"
    path.write_text(text + "\n")
    errors = schema_errors(validator, path)
    assert any(error.startswith(f"{field}:") for error in errors), errors
    with pytest.raises(Exception) as refused:
        load_catalog([path])
    assert type(refused.value).__name__ == "CatalogError"
    assert str(path) in str(refused.value.problems[0].file)


def test_a_good_user_file_passes_both(validator, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD_SWITCH % "2x200G, 4x100G")
    assert schema_errors(validator, path) == []
    assert "TEST-SW" in load_catalog([path]).switches


def test_the_breakout_pattern_agrees_with_the_model():
    from pydantic import ValidationError

    from fabricgen.catalog.model import PortGroup

    checker = jsonschema.Draft202012Validator({"type": "string", "pattern": BREAKOUT_PATTERN})
    for value in ["2x400G", "4x100g", "8X50G", "16x25G", "02x400G", "2x1000M", "16x50G"]:
        PortGroup(count=1, speed=800, form_factor="OSFP", lanes=16, breakouts=[value])
        assert checker.is_valid(value), value
    for value in ["1x400G", "17x25G", "0x400G", "2x400", "x400G", "2x400GbE", "2 x 400G", "100x4G", "2x400T"]:
        with pytest.raises(ValidationError):
            PortGroup(count=1, speed=800, form_factor="OSFP", lanes=16, breakouts=[value])
        assert not checker.is_valid(value), value


def test_schema_command_prints_and_writes_the_catalog_schema(tmp_path):
    printed = runner.invoke(app, ["schema", "--catalog"])
    assert printed.exit_code == 0 and printed.output == COMMITTED.read_text()
    target = tmp_path / "catalog.schema.json"
    assert runner.invoke(app, ["schema", "--catalog", "-o", str(target)]).exit_code == 0
    assert target.read_bytes() == COMMITTED.read_bytes()
    located = runner.invoke(app, ["schema", "--catalog", "--path"])
    assert located.exit_code == 0 and Path(located.output.strip()) == COMMITTED


def test_the_catalog_reference_page_has_every_key_of_the_schema():
    """docs/reference/catalog.md as the MkDocs hook fills it: an anchored row per YAML path of a
    catalog file (or the path where its object type is shown), with every description."""
    from tests.test_docs import _reference_markdown, assert_every_path_documented, hook

    markdown = _reference_markdown(hook.CATALOG_PAGE)
    assert hook.CATALOG_MARKER not in markdown
    assert_every_path_documented(catalog_schema(), markdown, "catalog reference")
    assert '<code class="fg-path" id="switches.*.port_groups[].breakouts">' in markdown
    assert "## `switches`" in markdown and "## `nos_releases`" in markdown
