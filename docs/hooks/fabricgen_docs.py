"""MkDocs hook (mkdocs.yml `hooks:`): the pages generated from the code at build time.

- `reference/intent.md`: `<!-- fabricgen:intent-reference -->` becomes every field of the intent,
  from its JSON Schema (`intent_schema()`).
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
OPTIONS_MARKER = re.compile(r"<!-- fabricgen:options ([a-z][a-z -]*?) -->")
INTENT_PAGE = "reference/intent.md"

# Commands documented on another command's page: `validate` is `build` without writing.
PAGES = {"validate": "commands/build.md"}


def intent_schema() -> dict:
    """The intent's JSON Schema, the source of the intent reference."""
    from fabricgen.intent.model import Intent

    return Intent.model_json_schema()


def cli_root():
    """The Click command tree of `fabricgen`, as Typer builds it for `--help`."""
    import typer

    from fabricgen.cli import app

    return typer.main.get_command(app)


def on_files(files, config):
    """Refuse a build where a command of the command line has no page."""
    root = cli_root()
    missing = sorted(
        {reference_pages.page_of(path, PAGES) for path in reference_pages.commands(root)} - {file.src_uri for file in files.documentation_pages()}
    )
    if missing:
        raise PluginError(f"fabricgen docs: no page for a command: {', '.join('docs/' + page for page in missing)} (add the page; its options are generated)")
    if INTENT_PAGE not in {file.src_uri for file in files.documentation_pages()}:
        raise PluginError(f"fabricgen docs: docs/{INTENT_PAGE} is missing")
    return files


def on_page_markdown(markdown, page, config, files):
    """Put the generated parts into the page."""
    source = page.file.src_uri
    if source == INTENT_PAGE:
        if INTENT_MARKER not in markdown:
            raise PluginError(f"fabricgen docs: docs/{source} has no {INTENT_MARKER}")
        markdown = markdown.replace(INTENT_MARKER, reference_pages.intent_reference(intent_schema()))
    if RELEASES_MARKER in markdown:
        from fabricgen.catalog import load_catalog
        from fabricgen.catalog.releases import support_table

        # the sources quote YANG patterns such as "[0-7](,[0-7])*", which Markdown reads as a link
        table = support_table(load_catalog()).replace("[", "\\[").replace("]", "\\]")
        markdown = markdown.replace(RELEASES_MARKER, table)
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
        if marker in markdown:
            markdown = markdown.replace(marker, text)
        else:
            appended.append((path, text))
    if appended:
        if len(appended) == 1 and len(documented) == 1:
            markdown += "\n\n## Options\n\n" + appended[0][1]
        else:
            markdown += "\n\n## Options\n\n" + "\n".join(f"### fabricgen {path}\n\n{text}" for path, text in appended)
    return markdown
