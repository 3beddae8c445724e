"""The documentation site builds offline and strictly, and what it generates from the code is
complete: every command of the command line has its page with every option `--help` lists, every
field of the intent's JSON Schema is in the intent reference, the NOS matrix is the catalog's, and
the README names only files that exist."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

REPO = Path(__file__).resolve().parent.parent
HOOKS = REPO / "docs" / "hooks"


def _load(name: str):
    """A module of docs/hooks, as MkDocs loads the hook (its folder on sys.path)."""
    sys.path.insert(0, str(HOOKS))
    try:
        spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(HOOKS))


reference_pages = _load("reference_pages")
hook = _load("fabricgen_docs")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `mkdocs build --strict` writes it (any warning fails the build)."""
    destination = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(destination)],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return destination


def _page(site: Path, source: str) -> str:
    """The HTML MkDocs writes for docs/<source> (use_directory_urls: a.md -> a/index.html)."""
    folder = source.removesuffix("index.md") if source.endswith("index.md") else source.removesuffix(".md")
    return (site / folder / "index.html").read_text(encoding="utf-8")


def _cli_commands() -> dict[str, object]:
    """Every command that runs something, walked here from the Click tree Typer builds."""
    found = {}

    def walk(command, path):
        if getattr(command, "commands", None):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())
        else:
            found[path] = command

    from fabricgen.cli import app

    walk(typer.main.get_command(app), "")
    return found


@pytest.mark.slow
def test_every_command_has_its_page_with_every_option(site):
    commands = _cli_commands()
    assert {"build", "validate", "diff", "analyze", "lab up", "push", "verify", "testplan check", "secrets render", "bom compare", "releases"} <= set(commands)
    for path, command in commands.items():
        top = path.split()[0]
        source = "commands/build.md" if top == "validate" else f"commands/{top}.md"
        page = html.unescape(re.sub(r"<[^>]+>", "", _page(site, source)))
        assert f"fabricgen {path} [OPTIONS]" in page, f"{source}: no usage line of fabricgen {path}"
        for parameter in command.params:
            if getattr(parameter, "hidden", False):
                continue  # --help does not list it, nor does the page (a deprecated alias)
            for flag in [*parameter.opts, *parameter.secondary_opts]:
                assert flag in page, f"{source}: fabricgen {path} {flag} is not documented"
            help_text = getattr(parameter, "help", None)
            if help_text:
                # the first words of the help --help prints, as the page shows them
                assert " ".join(help_text.replace("`", "").split()[:6]) in page, f"{source}: fabricgen {path} {parameter.name}: help text differs from --help"


def _reference_markdown(source: str) -> str:
    """docs/<source> as the MkDocs hook fills it (the reference pages need no site build)."""
    page = type("Page", (), {"file": type("File", (), {"src_uri": source})()})()
    return hook.on_page_markdown((REPO / "docs" / source).read_text(encoding="utf-8"), page, None, None)


def schema_paths(schema: dict) -> list[str]:
    """Every YAML path of a JSON Schema, walked here (not by the generator): `a.b`, `list[].c`,
    `map.<name>.d`, every object type written out wherever it appears (not inside itself)."""
    definitions = schema.get("$defs", {})
    paths: list[str] = []

    def targets(node, suffix=""):
        if not isinstance(node, dict):
            return []
        found = [(node["$ref"].rsplit("/", 1)[-1], suffix)] if "$ref" in node else []
        for option in node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", []):
            found += targets(option, suffix)
        if isinstance(node.get("items"), dict):
            found += targets(node["items"], "[]")
        for values in [node.get("additionalProperties"), *node.get("patternProperties", {}).values()]:
            found += targets(values, ".<name>")
        return found

    def walk(node, prefix, ancestors):
        for key, field_schema in node.get("properties", {}).items():
            path = f"{prefix}.{key}" if prefix else key
            paths.append(path)
            for name, suffix in dict.fromkeys(targets(field_schema)):
                if name not in ancestors:
                    walk(definitions[name], path + suffix, (*ancestors, name))

    walk(schema, "", ())
    return paths


def assert_every_path_documented(schema: dict, markdown: str, what: str) -> None:
    """Each path of the schema has its anchored row, or lies under a row that names where its
    object type is shown and that place has the rest of the path; each description is there."""
    anchors = set(re.findall(r'<code class="fg-path" id="([^"]+)">', markdown))
    anchors |= set(re.findall(r"^## `([^`]+)`$", markdown, re.MULTILINE))  # a top-level key: its section's heading
    shown_at = dict(re.findall(r'<code class="fg-path" id="([^"]+)">[^\n]*?Its keys are those of <a href="#([^"]+)">', markdown))
    assert len(anchors) > 100

    def documented(path: str) -> bool:
        if path in anchors:
            return True
        for prefix, home in shown_at.items():
            if path.startswith((prefix + ".", prefix + "[")):
                return documented(home + path[len(prefix) :])
        return False

    for path in schema_paths(schema):
        assert documented(path.replace("<name>", "*")), f"{what}: {path} is not documented"
    text = html.unescape(markdown).replace("\\", "")
    for definition in [schema, *schema.get("$defs", {}).values()]:
        for key, field_schema in definition.get("properties", {}).items():
            description = field_schema.get("description")
            if description:
                assert " ".join(description.replace("\\", "").split()) in text, f"{what}: the description of {key} is missing"


def test_every_intent_key_is_in_the_reference_by_its_yaml_path(site):
    from fabricgen.intent.schema import intent_schema

    schema = intent_schema()
    markdown = _reference_markdown(hook.INTENT_PAGE)
    assert hook.INTENT_MARKER not in markdown
    assert_every_path_documented(schema, markdown, "intent reference")
    assert {"backend.qos.pfc_watchdog.action", "nodes", "oob.console.model", "management.users[].name"} <= set(schema_paths(schema))
    page = _page(site, hook.INTENT_PAGE)
    # a section per top-level key: the table of contents by YAML path, not by class name
    for key in schema["properties"]:
        assert f'<h2 id="{key}">' in page, f"intent reference: no section for {key}"
    assert "SwitchRole" not in page and "AaaServers" not in page
    for source in (hook.INTENT_PAGE, hook.CATALOG_PAGE):
        ids = re.findall(r' id="([^"]+)"', _page(site, source))
        assert len(ids) == len(set(ids)), f"{source}: an id given twice"
    # the Table and YAML views are content tabs; the paths are code that does not wrap
    assert page.count('class="tabbed-set tabbed-alternate"') == len(schema["properties"])
    assert '<code class="fg-path" id="backend.qos.pfc_watchdog">' in page and 'id="management.users[].name"' in page
    assert "white-space: nowrap" in (REPO / "docs" / "stylesheets" / "extra.css").read_text() and "stylesheets/extra.css" in page


def test_the_references_show_restrictions_in_words_not_regexes(site):
    """No pattern of either schema appears as a regex: each has words (patternErrorMessage), in
    the schema an editor reads and on the page; ranges read as ranges."""
    from fabricgen.catalog.schema import catalog_schema
    from fabricgen.intent.schema import intent_schema
    from fabricgen.nos import registry

    for schema, source in ((intent_schema(), hook.INTENT_PAGE), (catalog_schema(), hook.CATALOG_PAGE)):
        assert reference_pages.unworded_patterns(schema) == [], f"{source}: patterns without words (add patternErrorMessage beside them)"
        text = html.unescape(re.sub(r"<[^>]+>", "", _page(site, source)))
        patterns = set(reference_pages.pattern_words(schema))
        assert len(patterns) > 5
        for pattern in patterns:
            assert pattern not in text, f"{source}: a raw regex is shown: {pattern[:60]}"
        assert "pattern of" not in text
    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site, hook.INTENT_PAGE)))
    assert "letters, digits and '-', starting and ending with a letter or digit, at most 63 characters" in text
    assert "1 to 262,144" in text
    for name, package in registry.plugins().items():
        assert package.BOOT_IMAGE.pattern_says, f"{name}: BOOT_IMAGE has no pattern_says"


def test_a_pattern_without_words_is_found():
    """The check above can fail: a pattern, or a map's key pattern, with no words beside it."""
    schema = {
        "properties": {
            "a": {"type": "string", "pattern": "^x+$", "patternErrorMessage": "one or more x"},
            "b": {"type": "string", "pattern": "^y+$"},
            "c": {"type": "object", "patternProperties": {"^z+$": {"type": "integer"}}},
            "d": {"type": "object", "patternProperties": {"^x+$": {"type": "integer"}}},
        }
    }
    assert reference_pages.unworded_patterns(schema) == ["^y+$", "^z+$"]
    assert "one or more x" in reference_pages.intent_reference(schema)


def test_an_example_page_per_shipped_intent(site):
    """Each intent in intents/ has its page under Examples, from a real build: the intent, the
    summary, the bill of materials and a leaf's configuration lines."""
    intents = sorted((REPO / "intents").glob("*.yaml"))
    assert len(intents) >= 5
    index = _page(site, "examples/index.md")
    home = (site / "index.html").read_text(encoding="utf-8")
    for intent in intents:
        page = _page(site, f"examples/{intent.stem}.md")
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        assert f'href="{intent.stem}/"' in index, f"examples index: no link to {intent.stem}"
        assert f'href="examples/{intent.stem}/"' in home, f"the nav has no {intent.stem}"
        assert "The intent" in text and "Build summary" in text and "Bill of materials" in text, intent.name
        assert "<th>PID</th>" in page and "Quantity" in text, f"{intent.name}: no BOM table"
        # a leaf's BGP lines, or its QoS lines where it runs no BGP (a switch with no spine)
        assert "Configuration excerpt" in text and any(part in text for part in ("router bgp", "class-map", "DSCP_TO_TC_MAP")), (
            f"{intent.name}: no configuration excerpt"
        )
        first_key = next(line for line in intent.read_text().splitlines() if line and not line.startswith("#"))
        assert html.escape(first_key.split(":")[0]) in page


def test_release_notes_are_the_changelog(site):
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^##+ (.+)$", changelog, re.MULTILINE)
    assert len(headings) > 10
    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site, "release-notes.md")))
    for heading in headings:
        assert html.unescape(re.sub(r"[`*]", "", heading)).strip() in text, f"release notes: {heading}"


def test_the_site_publishes_the_schemas_at_its_address(site, monkeypatch):
    """site_url comes from FABRICGEN_DOCS_URL (mkdocs's !ENV); the schemas are in the site, byte
    for byte the committed ones, at <site_url>schema/<file>."""
    from mkdocs.config import load_config

    for name in ("intent.schema.json", "catalog.schema.json"):
        assert (site / "schema" / name).read_bytes() == (REPO / "schema" / name).read_bytes()
    monkeypatch.setenv("FABRICGEN_DOCS_URL", "https://docs.example.org/fabricgen/")
    assert load_config(str(REPO / "mkdocs.yml"))["site_url"] == "https://docs.example.org/fabricgen/"
    monkeypatch.delenv("FABRICGEN_DOCS_URL")
    assert load_config(str(REPO / "mkdocs.yml"))["site_url"] == "http://127.0.0.1:8000/"


def test_intent_reference_reads_any_json_schema():
    """The generator takes a schema dict, not the model: draft-07 definitions, nullable refs,
    lists and maps of objects, bounds, enums and text that must not turn into HTML."""
    schema = {
        "title": "a cluster",
        "type": "object",
        "additionalProperties": False,
        "required": ["gpus"],
        "properties": {
            "gpus": {"type": "integer", "minimum": 1, "maximum": 262144, "description": "GPUs <all of them> *not* emphasis"},
            "fabric": {"anyOf": [{"$ref": "#/definitions/Fabric"}, {"type": "null"}], "default": None},
            "tenants": {"type": "array", "items": {"$ref": "#/definitions/Tenant"}, "maxItems": 256},
            "overrides": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Tenant"}},
        },
        "definitions": {
            "Fabric": {"type": "object", "properties": {"routing": {"enum": ["ebgp", "vxlan-evpn"], "default": "ebgp"}}},
            "Tenant": {"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}},
            "Unused": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
        },
    }
    markdown = reference_pages.intent_reference(schema)
    assert markdown.index("## `gpus`") < markdown.index("## `fabric`") < markdown.index("## `tenants`") < markdown.index("## `overrides`")
    gpus = next(line for line in markdown.split("\n") if "<span>gpus</span>" in line)
    assert "| integer | yes |" in gpus and "1 to 262,144" in gpus and "GPUs &lt;all of them&gt; \\*not\\* emphasis" in gpus
    assert '<code class="fg-path" id="fabric.routing">' in markdown and 'one of <code class="fg-value">&#34;ebgp&#34;</code>' in markdown
    assert 'id="tenants[].name"' in markdown and 'id="overrides.*.name"' in markdown
    # a pattern without words is shown as it is (short); the YAML view is the skeleton
    assert "matches <code>" in markdown
    assert "    tenants:  # <list of objects>" in markdown and "      - name: <string>" in markdown
    assert "    overrides:  # <map of name to object>" in markdown and "      <name>:" in markdown
    assert "    gpus: <integer; 1 to 262144; required>" in markdown
    assert "Unused" not in markdown  # a type no path reaches has no section


def test_a_command_without_a_page_stops_the_build():
    """The guard against drift can fail: a command whose page is missing, or a marker naming no
    command, is a PluginError that names it."""
    from mkdocs.exceptions import PluginError

    class Files:
        def __init__(self, sources):
            self.sources = sources

        def documentation_pages(self):
            return [type("File", (), {"src_uri": source}) for source in self.sources]

    pages = {reference_pages.page_of(path, hook.PAGES) for path in _cli_commands()} | {hook.INTENT_PAGE}
    hook.check_pages(Files(sorted(pages)))
    with pytest.raises(PluginError, match=r"docs/commands/verify\.md"):
        hook.check_pages(Files(sorted(pages - {"commands/verify.md"})))
    with pytest.raises(PluginError, match="names no command"):
        hook._options("<!-- fabricgen:options lab explode -->", "commands/lab.md")
    options = hook._options("# lab\n\n<!-- fabricgen:options lab up -->\n", "commands/lab.md")
    assert options.index("fabricgen lab up [OPTIONS]") < options.index("## Options") < options.index("### fabricgen lab down")


def test_the_release_matrix_is_the_catalogs(site):
    from fabricgen.catalog import load_catalog

    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site, "concepts/releases.md")))
    for name, flavour in load_catalog().nos_releases.items():
        assert f"{flavour.description} ({name}, default {flavour.default})" in text
        for feature_name, feature in flavour.features.items():
            assert feature.source.strip(), f"{name} {feature_name}: no source"
            assert " ".join(feature.source.split()[:8]) in text, f"releases page: {name} {feature_name} missing"


def test_the_readme_names_only_files_that_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w/.-])((?:intents|tests|scripts|docs|bench|\.ci|\.github)/[\w./-]*[\w])", readme))
    named |= set(re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme))
    assert any(path.startswith("docs/") for path in named)
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert not missing, f"README names files that do not exist: {missing}"
    assert len(readme.splitlines()) <= 300


def test_keys_of_which_one_is_required_say_so():
    """The intent's top level requires gpus or nodes (a oneOf): both rows and the YAML view say it."""
    schema = {
        "properties": {"gpus": {"type": "integer"}, "nodes": {"type": "integer"}, "name": {"type": "string"}},
        "oneOf": [{"required": ["gpus"]}, {"required": ["nodes"]}],
    }
    markdown = reference_pages.intent_reference(schema)
    rows = {key: next(line for line in markdown.split("\n") if f"<span>{key}</span>" in line) for key in ("gpus", "nodes", "name")}
    assert "| one of <code>gpus</code>, <code>nodes</code> |" in rows["gpus"] and "| one of <code>gpus</code>" in rows["nodes"]
    assert "one of" not in rows["name"]
    assert "gpus: <integer; one of gpus or nodes required>" in markdown


def test_every_yaml_view_is_yaml():
    """The YAML view of each section of both references parses as YAML (a value hint with ': '
    in it would not)."""
    import yaml

    for source in (hook.INTENT_PAGE, hook.CATALOG_PAGE):
        blocks = re.findall(r"\n    ```yaml\n(.*?)\n    ```", _reference_markdown(source), re.DOTALL)
        assert len(blocks) > 5
        for block in blocks:
            parsed = yaml.safe_load("\n".join(line[4:] for line in block.split("\n")))
            assert isinstance(parsed, dict) and len(parsed) == 1, f"{source}: {block[:80]}"
