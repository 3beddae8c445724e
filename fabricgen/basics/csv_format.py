"""CSV as fabricgen writes and reads it (a build's cabling.csv, ip-plan.csv, bom.csv; the NetBox
export): fixed line endings, so builds are byte-identical on every platform, and no cell a
spreadsheet would run as a formula.

A cell that starts with `= + - @`, a tab or a carriage return is a formula to Excel, LibreOffice
and Google Sheets when the file is opened (OWASP, "CSV Injection",
https://owasp.org/www-community/attacks/CSV_Injection; OWASP ASVS 5.0 V1.2.10): such a cell is
written with a single quote in front (`spreadsheet_safe`), which the spreadsheet shows as text.
Numbers (`-2`, `-0.5`) and a lone `-` stay as they are: they run nothing. A cell that already
starts with quotes followed by one of those characters gets one more quote, so `spreadsheet_value`
reads every cell back exactly (build_dir's report readers and `bom compare` use it).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

FORMULA_STARTS = "=+-@\t\r"  # OWASP's list: a cell starting with one is a formula to a spreadsheet
_START = f"[{re.escape(FORMULA_STARTS)}]"
_NEUTRALISE = re.compile(f"'*{_START}")  # a formula start, or what a neutralised one looks like
_NEUTRALISED = re.compile(f"'+{_START}")
_INERT = re.compile(r"-(?:[0-9]+(?:\.[0-9]+)?)?")  # a negative number, or the reports' "-" for nothing
_RISKY_FIRST = frozenset(FORMULA_STARTS + "'")  # a cell whose first character is not one of these is left alone at once


def spreadsheet_safe(cell: str) -> str:
    """`cell` as written to a CSV file: with a quote in front when it starts with a formula
    character (or with quotes and then one), unless it is a number or a lone '-'."""
    if _NEUTRALISE.match(cell) and not _INERT.fullmatch(cell):
        return "'" + cell
    return cell


def spreadsheet_value(cell: str) -> str:
    """What `spreadsheet_safe` was given: a cell read from a CSV file fabricgen wrote."""
    return cell[1:] if _NEUTRALISED.match(cell) else cell


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The CSV text of `header` and `rows` (text cells through `spreadsheet_safe`; numbers and
    None as csv.writer writes them), "\\n" after every row."""
    rows = list(rows)
    plain = _plain_csv(header, rows)
    if plain is not None:
        return plain
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # csv quotes a field holding a character of the line terminator ("\n"), not one holding a
    # carriage return, which spreadsheets (and csv.reader) take for a line break: such a row has
    # every field quoted, so it stays one row
    every_field_quoted = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(header)
    for row in rows:
        texts = [cell for cell in row if isinstance(cell, str)]
        if not any(cell[:1] in _RISKY_FIRST or "\r" in cell for cell in texts):
            writer.writerow(row)
            continue
        safe = [spreadsheet_safe(cell) if isinstance(cell, str) else cell for cell in row]
        (every_field_quoted if any("\r" in cell for cell in texts) else writer).writerow(safe)
    return buffer.getvalue()


def joined_csv(header: Sequence[str], blocks: list[str], rows: int) -> str | None:
    """The CSV text of `rows` rows given as `blocks` of lines (a row's fields already joined by
    commas, as many fields as `header` has, two or more; a block's lines joined by line breaks, no
    block empty), when that is exactly what `csv_text` writes: no field holds a comma, a quote or a
    line break, and none starts as a formula. None otherwise: the caller writes its rows by
    `csv_text`. For the reports of a million rows, where a tuple and a join per row cost more than
    an f-string."""
    assert len(header) >= 2, "csv writes a lone empty field as quotes"
    table = [",".join(header), *blocks, ""]  # the last line break joined in, as in _plain_csv
    return _checked("\n".join(table), (len(header) - 1) * (rows + 1), rows + 1)  # the header too


def _plain_csv(header: Sequence[str], rows: list[Sequence[object]]) -> str | None:
    """The rows joined with commas, when that is exactly what the writer path writes: every field
    text, every row of two fields or more, no field holding a comma, a quote or a line break (csv
    would quote it) and none starting as a formula. None otherwise. Three times faster than the
    writer for the cabling plan and the IP plan (a million rows at 131,072 GPUs)."""
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
    """`text` when it holds just the commas and line breaks its fields were joined by, no quote
    or carriage return (then no field needs csv's quotes), and no field that starts with a formula
    character or a single quote (then none needs `spreadsheet_safe`). None otherwise."""
    if text.count(",") != commas or text.count("\n") != lines or '"' in text or "\r" in text:
        return None
    if text[:1] in _RISKY_FIRST:
        return None
    # a field starts the text, or follows a comma or a line break; a character that occurs nowhere
    # is ruled out by one fast scan (names hold '-', so "-" takes the two slower ones)
    for first in _RISKY_FIRST:
        if first in text and (f",{first}" in text or f"\n{first}" in text):
            return None
    return text
