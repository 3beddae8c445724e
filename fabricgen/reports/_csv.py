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


def joined_csv(header: Sequence[str], blocks: list[str], rows: int) -> str | None:
    """The CSV text of `rows` rows given as `blocks` of lines (a row's fields already joined by
    commas, as many fields as `header` has, two or more; a block's lines joined by line breaks, no
    block empty), when that is exactly what csv.writer writes: no field holds a comma, a quote or a
    line break. None otherwise: the caller writes its rows by `csv_text`. For the reports of a
    million rows, where a tuple and a join per row cost more than an f-string."""
    assert len(header) >= 2, "csv writes a lone empty field as quotes"
    table = [",".join(header), *blocks, ""]  # the last line break joined in, as in _plain_csv
    return _checked("\n".join(table), (len(header) - 1) * (rows + 1), rows + 1)  # the header too


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
    return _checked(text, sum(map(len, table)) - len(table), len(table))


def _checked(text: str, commas: int, lines: int) -> str | None:
    """`text` when it holds just the commas and line breaks its fields were joined by, and no quote
    or carriage return: then no field needs csv's quotes. None otherwise."""
    if text.count(",") != commas or text.count("\n") != lines or '"' in text or "\r" in text:
        return None
    return text
