"""The cabling plan: one row per cable, every link exactly once, in cable-id order."""

from __future__ import annotations

from fabricgen.basics.csv_format import csv_text, joined_csv
from fabricgen.build.build_dir import CableRow
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import Link, LinkKind
from fabricgen.render.environment import environment

COLUMNS = tuple(CableRow.model_fields)  # cabling.csv's header: the fields of the row every command reads back, in order


# links per block of render_cabling: a block's rows and lines are freed before the next one is made, so
# their memory is reused instead of 440,000 tuples and lines (~160 MB) being touched at 131,072 GPUs
BLOCK = 4096


def cabling_rows(c: Compiled) -> list[tuple[str, ...]]:
    return _rows(c.fabric.links)


def _rows(links: list[Link]) -> list[tuple[str, ...]]:
    console = LinkKind.CONSOLE  # bound once: a member lookup on an Enum class costs 70 ns
    # RU and speed formatted inline, not by a function call per link (440,000 at 131,072 GPUs)
    return [
        (
            link.id,
            link.network,  # StrEnum members: csv and str.join write their values
            link.kind,
            link.a.device.name,
            link.a.name,
            link.a.optic or "",
            link.a.device.rack or "",
            f"{link.a.device.ru or ''}",
            link.b.device.name,
            link.b.name,
            link.b.optic or "",
            link.b.device.rack or "",
            f"{link.b.device.ru or ''}",
            link.cable or "",
            f"{link.length_m:g}" if link.length_m is not None else "",
            "serial" if link.kind is console else f"{link.a.speed_gbps}G",
        )
        for link in links
    ]


def render_cabling(c: Compiled) -> dict[str, str]:
    links = c.fabric.links
    template = environment().get_template("reports/cabling.md.j2")
    # the CSV and the markdown table made block by block (BLOCK links) from the rows joined by
    # commas: no field holds one when joined_csv passes the text, so a line's commas are its
    # markdown row's cell boundaries, replaced once per block in C
    csv_blocks, table_blocks = [], []
    for start in range(0, len(links), BLOCK):
        lines = list(map(",".join, _rows(links[start : start + BLOCK])))
        csv_blocks.append("\n".join(lines))
        table_blocks.append(" |\n| ".join(lines).replace(",", " | "))
    text = joined_csv(COLUMNS, csv_blocks, len(links))
    if text is None:  # a field csv would quote: row by row
        rows = cabling_rows(c)
        table = "".join(f"| {' | '.join(row)} |\n" for row in rows)
        markdown = template.render(name=c.intent.name, columns=COLUMNS, table=table)
        return {"cabling.csv": csv_text(COLUMNS, rows), "cabling.md": markdown}
    # The template ends with the table: what it renders without one is the document's head,
    # joined in front of the first block so the table (80 MB at 131,072 GPUs) is copied once.
    head = template.render(name=c.intent.name, columns=COLUMNS, table="")
    if not table_blocks:
        return {"cabling.csv": text, "cabling.md": head}
    table_blocks[0] = f"{head}| {table_blocks[0]}"
    table_blocks[-1] += " |\n"
    return {"cabling.csv": text, "cabling.md": " |\n| ".join(table_blocks)}
