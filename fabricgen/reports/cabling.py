"""The cabling plan: one row per cable, every link exactly once, in cable-id order."""

from __future__ import annotations

from fabricgen.compiled import Compiled
from fabricgen.design.graph import LinkKind
from fabricgen.render.environment import environment
from fabricgen.reports._csv import csv_text, joined_csv

COLUMNS = (
    "cable_id", "network", "kind",
    "a_device", "a_port", "a_optic", "a_rack", "a_ru",
    "b_device", "b_port", "b_optic", "b_rack", "b_ru",
    "cable", "length_m", "speed",
)  # fmt: skip


def cabling_rows(c: Compiled) -> list[tuple[str, ...]]:
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
        for link in c.fabric.links
    ]


def render_cabling(c: Compiled) -> dict[str, str]:
    rows = cabling_rows(c)
    lines = list(map(",".join, rows))
    # every row is as wide as COLUMNS, each field text: joined_csv needs only check what csv would quote
    text = joined_csv(COLUMNS, lines)
    if text is None:
        table = "".join(f"| {' | '.join(row)} |\n" for row in rows)
    elif lines:
        # No field holds a comma: a CSV line's commas are its markdown row's cell boundaries. The
        # rows are joined and their commas replaced once, in C, instead of a join per row and a
        # Jinja loop (440,000 rows at 131,072 GPUs); the table's ends are added to its first and
        # last line, not to the whole text (a copy).
        lines[0] = f"| {lines[0]}"
        lines[-1] = f"{lines[-1]} |\n"
        table = " |\n| ".join(lines).replace(",", " | ")
    else:
        table = ""
    markdown = environment().get_template("reports/cabling.md.j2").render(name=c.intent.name, columns=COLUMNS, table=table)
    return {"cabling.csv": text if text is not None else csv_text(COLUMNS, rows), "cabling.md": markdown}
