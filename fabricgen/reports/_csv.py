"""CSV text with fixed line endings, so builds are byte-identical on every platform."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    rows = list(rows)
    plain = _plain_csv(header, rows)
    if plain is not None:
        return plain
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _plain_csv(header: Sequence[str], rows: list[Sequence[object]]) -> str | None:
    """The rows joined with commas, when that is exactly what csv.writer writes: every field text,
    every row of two fields or more, and no field holding a comma, a quote or a line break (csv
    would quote it). None otherwise. Three times faster than the writer for the cabling plan and
    the IP plan (a million rows at 131,072 GPUs)."""
    table = [header, *rows]
    if min(map(len, table)) < 2:  # csv writes a lone empty field as ""
        return None
    try:
        lines = [",".join(row) for row in table]  # type: ignore[arg-type]
        lines.append("")  # the last line break, joined in: `+ "\n"` would copy the whole text (76 MB at 131,072 GPUs)
        text = "\n".join(lines)
    except TypeError:  # a number or None: the writer formats it
        return None
    commas = sum(map(len, table)) - len(table)
    if text.count(",") != commas or text.count("\n") != len(table) or '"' in text or "\r" in text:
        return None
    return text
