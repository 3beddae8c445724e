"""The examples section: a page per shipped intent (`intents/*.yaml`) with the intent, what its
build says (summary.md), its bill of materials (bom.md), what files the build holds and an excerpt
of one leaf's configuration (its BGP and QoS parts), all from a real build made when the site is
built (`fabricgen.compile`, in memory: about 4 s for the ten shipped intents).

Pure functions of a build: the MkDocs hook (`fabricgen_docs.py`) compiles each intent and adds the
pages; tests/test_docs.py checks there is one per shipped intent.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

EXCERPT_LINES = 30  # lines of each configuration part shown
# Where a part begins in a leaf's files: the first line that matches (text configs and SONiC's
# config_db.json alike); a part a file does not have is left out.
PARTS = (
    ("BGP", re.compile(r"^router bgp\b")),
    ("QoS", re.compile(r'^(?:class-map|policy-map|qos\b|\s*"DSCP_TO_TC_MAP":)')),
)


def page_uri(intent: Path) -> str:
    """The page of an intent under docs/: `examples/<file name without .yaml>.md`."""
    return f"examples/{intent.stem}.md"


def example_page(intent: Path, build) -> str:
    """One intent's page: its name and description, the intent file, the build's summary and bill
    of materials, the files it holds, and excerpts of its first backend leaf's configuration."""
    name = intent.stem
    summary = build.files["summary.md"].decode("utf-8")
    bom = build.files["bom.md"].decode("utf-8")
    lines = [f"# {name}", ""]
    description = build.loaded.intent.description
    if description:
        lines += [_plain(description), ""]
    lines += [
        f"The shipped intent `intents/{intent.name}` and what `fabricgen build intents/{intent.name}` writes from it, "
        "built when this site was built (so it is this version's output).",
        "",
        "## The intent",
        "",
        f'```yaml title="intents/{intent.name}"',
        intent.read_text(encoding="utf-8").rstrip("\n"),
        "```",
        "",
        "## Build summary",
        "",
        "What `summary.md` of the build says.",
        "",
        _demoted(_without_title(summary, description)),
        "",
        "## Bill of materials",
        "",
        "`bom.md` of the build (`bom.csv` holds the same rows).",
        "",
        _demoted(_without_title(bom)),
        "",
        "## Files of the build",
        "",
        _file_table(build.files),
        "",
    ]
    lines += _excerpts(build)
    return "\n".join(lines).rstrip("\n") + "\n"


def index_table(entries: list[tuple[Path, object]]) -> str:
    """The examples index: a row per intent with its description, GPU count and switch count."""
    rows = ["| example | what it is | GPUs | switches |", "|---|---|---:|---:|"]
    for intent, build in entries:
        gpus = build.sizing.gpus
        switches = sum(1 for _ in build.fabric.switches())
        description = _plain(build.loaded.intent.description or "")
        rows.append(f"| [{intent.stem}]({intent.stem}.md) | {description} | {gpus:,} | {switches:,} |")
    return "\n".join(rows)


def _without_title(markdown: str, description: str = "") -> str:
    """A generated Markdown file without its first heading, nor the description under it, which
    the page shows already."""
    lines = markdown.strip("\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    text = "\n".join(lines).strip("\n")
    if description and text.startswith(description + "\n"):
        text = text[len(description) :].strip("\n")
    return text


def _demoted(markdown: str) -> str:
    """Headings two levels down, under the page's own sections (## becomes ####)."""
    out = []
    fenced = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        out.append("##" + line if not fenced and re.match(r"^#{1,4} ", line) else line)
    return "\n".join(out)


def _file_table(files: dict[str, bytes]) -> str:
    """What the build directory holds: each top-level file, and each folder with its file count."""
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for path, content in files.items():
        top = path.split("/", 1)[0] + ("/" if "/" in path else "")
        counts[top] += 1
        sizes[top] += len(content)
    rows = ["| file or folder | files | bytes |", "|---|---:|---:|"]
    for top in sorted(counts):
        rows.append(f"| `{top}` | {counts[top]:,} | {sizes[top]:,} |")
    return "\n".join(rows)


def _excerpts(build) -> list[str]:
    """The BGP and QoS parts of the first backend leaf's files, each its first lines."""
    from fabricgen.compiler.design.graph import Network, Role

    leaf = next((device for device in build.fabric.by_role(Role.LEAF, Network.BACKEND)), None)
    if leaf is None:
        return []
    paths = sorted(path for path in build.files if path.startswith((f"configs/{leaf.name}.", f"configs/{leaf.name}/")))
    lines = [
        f"## Configuration excerpt: {leaf.name}",
        "",
        f"The first {EXCERPT_LINES} lines of each part of the leaf `{leaf.name}` ({leaf.model}, {leaf.nos}); the whole file is in the build's `configs/`.",
        "",
    ]
    for title, start in PARTS:
        for path in paths:
            text = build.files[path].decode("utf-8").split("\n")
            first = next((index for index, line in enumerate(text) if start.match(line)), None)
            if first is None:
                continue
            language = "json" if path.endswith(".json") else "text"
            lines += [f"### {title}", "", f'```{language} title="{path}, from line {first + 1}"', *text[first : first + EXCERPT_LINES], "```", ""]
            break
    return lines


def _plain(text: str) -> str:
    """One line of text from an intent shown as written (no Markdown read into it)."""
    escaped = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", escaped)
