"""MkDocs hook (mkdocs.yml `hooks:`): the pages generated from the code at build time.

- `reference/intent.md`: `<!-- fabricgen:intent-reference -->` becomes every field of the intent,
  from its JSON Schema (`intent_schema()`).
- `reference/catalog.md`: `<!-- fabricgen:catalog-reference -->` becomes every field of a catalog
  file, from its JSON Schema (`fabricgen.catalog.schema.catalog_schema()`).
- `<!-- fabricgen:nos-releases -->` becomes the catalog's NOS feature matrix, the table
  `fabricgen releases` prints (`fabricgen.catalog.releases.support_table`).
- `examples/<intent>.md`: a page per shipped intent (`intents/*.yaml`), from a real build made now
  (`example_pages.py`), listed in the nav under Examples; `<!-- fabricgen:examples -->` on
  `examples/index.md` becomes the table of them.
- `release-notes.md`: `<!-- fabricgen:changelog -->` becomes CHANGELOG.md (its title left out).
- `schema/intent.schema.json`, `schema/catalog.schema.json`: the committed schemas, copied into
  the site, so `<site_url>schema/intent.schema.json` is a published schema URL.
- `commands/<command>.md`: each command's usage, description and options, from the command line's
  own definitions (`fabricgen.cli.app`), where `<!-- fabricgen:options <command path> -->` stands,
  or at the end of its page under "Options".

The build stops (a PluginError, named file and command) when a command has no page, a marker names
no command, or a page lacks a marker it needs, so a new command or option cannot go undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path

import example_pages
import reference_pages
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

INTENT_MARKER = "<!-- fabricgen:intent-reference -->"
RELEASES_MARKER = "<!-- fabricgen:nos-releases -->"
# a marker counts only alone on its line (a page may quote one in a code span)
OPTIONS_MARKER = re.compile(r"^<!-- fabricgen:options ([a-z][a-z -]*?) -->$", re.MULTILINE)
INTENT_PAGE = "reference/intent.md"
CATALOG_MARKER = "<!-- fabricgen:catalog-reference -->"
CATALOG_PAGE = "reference/catalog.md"

# Commands documented on another command's page: `validate` is `build` without writing.
PAGES = {"validate": "commands/build.md"}

REPO = Path(__file__).resolve().parents[2]
INTENTS = REPO / "intents"
EXAMPLES_MARKER = "<!-- fabricgen:examples -->"
EXAMPLES_INDEX = "examples/index.md"
EXAMPLES_NAV = "Examples"
CHANGELOG = REPO / "CHANGELOG.md"
CHANGELOG_MARKER = "<!-- fabricgen:changelog -->"
# The committed JSON Schemas, published as <site_url>schema/<file> for editors' modelines.
SCHEMAS = (REPO / "schema" / "intent.schema.json", REPO / "schema" / "catalog.schema.json")

_builds: dict[Path, object] = {}  # the shipped intents' builds, made once per site build


def shipped_intents() -> list[Path]:
    """The intents the repository ships, each an example page."""
    return sorted(INTENTS.glob("*.yaml"))


def _build(intent: Path):
    if intent not in _builds:
        import fabricgen

        _builds[intent] = fabricgen.compile(intent)
    return _builds[intent]


def on_config(config):
    """The Examples section of the nav: its index, then a page per shipped intent."""
    _builds.clear()
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and EXAMPLES_NAV in entry:
            entry[EXAMPLES_NAV] = [EXAMPLES_INDEX, *(example_pages.page_uri(intent) for intent in shipped_intents())]
            return config
    raise PluginError(f"fabricgen docs: mkdocs.yml's nav has no {EXAMPLES_NAV!r} section for the example pages")


def intent_schema() -> dict:
    """The intent's JSON Schema (`fabricgen schema`, the one editors read), the source of the
    intent reference."""
    from fabricgen.intent.schema import intent_schema as schema

    return schema()


def cli_root():
    """The Click command tree of `fabricgen`, as Typer builds it for `--help`."""
    import typer

    from fabricgen.cli import app

    return typer.main.get_command(app)


def on_files(files, config):
    """Refuse a build where a command of the command line has no page; add the example pages (a
    shipped intent that does not build stops the site) and the JSON Schemas."""
    check_pages(files)
    for intent in shipped_intents():
        try:
            build = _build(intent)
        except Exception as exc:  # a shipped intent that does not build stops the site, named
            raise PluginError(f"fabricgen docs: intents/{intent.name} does not build: {exc}") from exc
        files.append(File.generated(config, example_pages.page_uri(intent), content=example_pages.example_page(intent, build)))
    for schema in SCHEMAS:
        files.append(File.generated(config, f"schema/{schema.name}", abs_src_path=str(schema)))
    return files


def check_pages(files) -> None:
    """Refuse a build where a command of the command line has no page, or the intent reference is missing."""
    root = cli_root()
    missing = sorted({reference_pages.page_of(path, PAGES) for path in reference_pages.commands(root)} - {file.src_uri for file in files.documentation_pages()})
    if missing:
        raise PluginError(f"fabricgen docs: no page for a command: {', '.join('docs/' + page for page in missing)} (add the page; its options are generated)")
    if INTENT_PAGE not in {file.src_uri for file in files.documentation_pages()}:
        raise PluginError(f"fabricgen docs: docs/{INTENT_PAGE} is missing")


def on_page_markdown(markdown, page, config, files):
    """Put the generated parts into the page."""
    source = page.file.src_uri
    if source == INTENT_PAGE:
        if not _has_marker(markdown, INTENT_MARKER):
            raise PluginError(f"fabricgen docs: docs/{source} has no {INTENT_MARKER} on a line of its own")
        markdown = _put(markdown, INTENT_MARKER, reference_pages.intent_reference(intent_schema()))
    if source == CATALOG_PAGE:
        from fabricgen.catalog.schema import catalog_schema

        if not _has_marker(markdown, CATALOG_MARKER):
            raise PluginError(f"fabricgen docs: docs/{source} has no {CATALOG_MARKER} on a line of its own")
        markdown = _put(markdown, CATALOG_MARKER, reference_pages.catalog_reference(catalog_schema()))
    if _has_marker(markdown, EXAMPLES_MARKER):
        markdown = _put(markdown, EXAMPLES_MARKER, example_pages.index_table([(intent, _build(intent)) for intent in shipped_intents()]))
    if _has_marker(markdown, CHANGELOG_MARKER):
        markdown = _put(markdown, CHANGELOG_MARKER, changelog_body(CHANGELOG.read_text(encoding="utf-8")))
    if _has_marker(markdown, RELEASES_MARKER):
        from fabricgen.catalog import load_catalog
        from fabricgen.catalog.releases import support_table

        markdown = _put(markdown, RELEASES_MARKER, _literal_cells(support_table(load_catalog())))
    return _options(markdown, source)


def changelog_body(changelog: str) -> str:
    """CHANGELOG.md without its title: its sections become the page's."""
    lines = changelog.strip("\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip("\n")


def _options(markdown: str, source: str) -> str:
    """The options of every command this page documents, at its marker or appended."""
    root = cli_root()
    documented = [path for path in reference_pages.commands(root) if reference_pages.page_of(path, PAGES) == source]
    for match in OPTIONS_MARKER.finditer(markdown):
        if match.group(1) not in documented:
            raise PluginError(
                f"fabricgen docs: docs/{source}: {match.group(0)} names no command this page documents (it documents: {', '.join(documented) or 'none'})"
            )
    appended = []
    for path in documented:
        marker = f"<!-- fabricgen:options {path} -->"
        text = reference_pages.options_reference(root, path)
        if _has_marker(markdown, marker):
            markdown = _put(markdown, marker, text)
        else:
            appended.append((path, text))
    if appended:
        if len(appended) == 1 and len(documented) == 1:
            markdown += "\n\n## Options\n\n" + appended[0][1]
        else:
            markdown += "\n\n## Options\n\n" + "\n".join(f"### fabricgen {path}\n\n{text}" for path, text in appended)
    return markdown


def _has_marker(markdown: str, marker: str) -> bool:
    return re.search(f"^{re.escape(marker)}$", markdown, re.MULTILINE) is not None


def _put(markdown: str, marker: str, text: str) -> str:
    """The page with the marker's line replaced by the text."""
    return re.sub(f"^{re.escape(marker)}$", lambda _: text, markdown, flags=re.MULTILINE)


def _literal_cells(table: str) -> str:
    """Table rows shown as written: the sources quote YANG patterns such as "[0-7](,[0-7])*",
    which Markdown would read as a link and emphasis. Lines outside the table keep their bold."""
    return "\n".join(line.replace("*", "\\*").replace("[", "\\[").replace("]", "\\]") if line.startswith("|") else line for line in table.split("\n"))
