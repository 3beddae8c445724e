"""MkDocs hook (mkdocs.yml `hooks:`): the pages generated from the code at build time.

- `reference/intent.md`: `<!-- fabricgen:intent-reference -->` becomes every field of the intent,
  from its JSON Schema (`intent_schema()`).
- `reference/catalog.md`: `<!-- fabricgen:catalog-reference -->` becomes every field of a catalog
  file, from its JSON Schema (`fabricgen.catalog.schema.catalog_schema()`).
- `<!-- fabricgen:nos-releases -->` becomes the catalog's NOS feature matrix, the table
  `fabricgen releases` prints (`fabricgen.catalog.releases.support_table`).
- `commands/<command>.md`: each command's usage, description and options, from the command line's
  own definitions (`fabricgen.cli.app`), where `<!-- fabricgen:options <command path> -->` stands,
  or at the end of its page under "Options".

The build stops (a PluginError, named file and command) when a command has no page, a marker names
no command, or a page lacks a marker it needs, so a new command or option cannot go undocumented.
"""

from __future__ import annotations

import re

import reference_pages
from mkdocs.exceptions import PluginError

INTENT_MARKER = "<!-- fabricgen:intent-reference -->"
RELEASES_MARKER = "<!-- fabricgen:nos-releases -->"
# a marker counts only alone on its line (a page may quote one in a code span)
OPTIONS_MARKER = re.compile(r"^<!-- fabricgen:options ([a-z][a-z -]*?) -->$", re.MULTILINE)
INTENT_PAGE = "reference/intent.md"
CATALOG_MARKER = "<!-- fabricgen:catalog-reference -->"
CATALOG_PAGE = "reference/catalog.md"

# Commands documented on another command's page: `validate` is `build` without writing.
PAGES = {"validate": "commands/build.md"}


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
    """Refuse a build where a command of the command line has no page."""
    root = cli_root()
    missing = sorted({reference_pages.page_of(path, PAGES) for path in reference_pages.commands(root)} - {file.src_uri for file in files.documentation_pages()})
    if missing:
        raise PluginError(f"fabricgen docs: no page for a command: {', '.join('docs/' + page for page in missing)} (add the page; its options are generated)")
    if INTENT_PAGE not in {file.src_uri for file in files.documentation_pages()}:
        raise PluginError(f"fabricgen docs: docs/{INTENT_PAGE} is missing")
    return files


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
    if _has_marker(markdown, RELEASES_MARKER):
        from fabricgen.catalog import load_catalog
        from fabricgen.catalog.releases import support_table

        markdown = _put(markdown, RELEASES_MARKER, _literal_cells(support_table(load_catalog())))
    return _options(markdown, source)


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
