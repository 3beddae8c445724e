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
    return (site / source.removesuffix(".md") / "index.html").read_text(encoding="utf-8")


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


def test_every_intent_field_is_in_the_reference(site):
    from fabricgen.intent.model import Intent

    schema = Intent.model_json_schema()
    page = _page(site, "reference/intent.md")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    types = {"Intent": schema["properties"], **{name: d["properties"] for name, d in schema["$defs"].items() if "properties" in d}}
    assert len(types) > 30
    for type_name, properties in types.items():
        for field_name, field_schema in properties.items():
            assert f'id="{type_name}.{field_name}"' in page, f"intent reference: {type_name}.{field_name} is missing"
            description = field_schema.get("description")
            if description:
                assert " ".join(description.replace("`", "").split()) in text, f"intent reference: {type_name}.{field_name}: description missing"
    # a nested type says where in the intent it goes
    assert "backend.qos.pfc_watchdog" in text and "backend.leaf" in text


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
    assert '<a id="Intent.gpus"></a>`gpus` | integer | required | ≥ 1; ≤ 262,144 | GPUs &lt;all of them&gt; \\*not\\* emphasis |' in markdown
    assert "| [Fabric](#fabric) or null | `null` |" in markdown
    assert "list of [Tenant](#tenant)" in markdown and "map of name to [Tenant](#tenant)" in markdown
    assert "At `tenants[]`, `overrides.<name>`." in markdown
    assert 'one of `"ebgp"`, `"vxlan-evpn"`' in markdown and "matches `^[a-z]+$`" in markdown
    assert "Not reached from the top level" in markdown.split("## Unused")[1]
    assert markdown.index("## Fabric") < markdown.index("## Tenant") < markdown.index("## Unused")


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
    assert hook.on_files(Files(sorted(pages)), None) is not None
    with pytest.raises(PluginError, match=r"docs/commands/verify\.md"):
        hook.on_files(Files(sorted(pages - {"commands/verify.md"})), None)
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
