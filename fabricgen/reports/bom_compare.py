"""Compare a build's bill of materials with a reference list: a vendor quote, a published design.

`compare_bom(build_dir, reference)` reads BUILD_DIR/bom.csv (as `fabricgen build` writes it) and a
reference CSV (a header row with `pid` and `quantity`, optionally `section`), matches their parts and
returns a `BomComparison`: one `BomDelta` per part with the build's and the reference's quantity and
the cause of any difference. `bom_table`, `render_markdown` and `render_json` present it for a
terminal, a pull-request comment and a script.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table
from rich.text import Text

from fabricgen.basics.csv_format import spreadsheet_value
from fabricgen.basics.errors import FabricgenError, Problem
from fabricgen.basics.trust import has_invisible

# A BOM is a few hundred rows of a few hundred characters (the 4,096-GPU build's bom.csv: 13 rows,
# cells of at most 192 characters); anything far beyond these is the wrong file, or a hostile one.
MAX_CSV_BYTES = 4 * 1024 * 1024
MAX_ROWS = 10_000
MAX_COLUMNS = 64
MAX_CELL_CHARS = 1_000
MAX_LINE_CHARS = 10_000
MAX_RECORD_LINES = 50  # one record: a quoted description may break lines, not run through the file
MAX_PROBLEMS = 20  # shown per comparison; the rest are counted
SHOWN_COLUMNS = ("section", "pid", "quantity", "basis", "alternatives")  # cells echoed to the user
REBUILD_HINT = "rebuild with this version: fabricgen build INTENT -o BUILD_DIR"
_WHOLE_NUMBER = re.compile(r"[0-9]+")  # not \d: it also matches other scripts' digits

Key = tuple[str, str]  # (normalized section, pid); section "" when comparing by PID only


class BomCompareError(FabricgenError):
    """The build's bom.csv or the reference CSV is missing, unreadable or holds bad rows."""

    phase = "bom compare"


@dataclass
class _BuildPart:
    """One part of the build, its rows summed (cables come as one row per standard length)."""

    section: str
    pid: str
    quantity: int
    basis: str = ""
    alternatives: dict[str, int] = field(default_factory=dict)  # counting rule -> quantity


@dataclass(frozen=True, slots=True)
class _ReferencePart:
    section: str
    pid: str
    quantity: int
    key: Key


@dataclass(frozen=True, slots=True)
class BomDelta:
    """One part: its quantity in the build and in the reference (None: not listed there)."""

    section: str
    pid: str
    build: int | None
    reference: int | None
    cause: str
    build_section: str | None = None  # set when matched to a build part in another section

    @property
    def delta(self) -> int:
        return (self.build or 0) - (self.reference or 0)

    @property
    def equal(self) -> bool:
        return self.build == self.reference

    @property
    def explanation(self) -> str:
        """The cause, plus the section difference when the part was matched across sections."""
        note = f"this build lists it under '{self.build_section}'" if self.build_section else ""
        return "; ".join(text for text in (self.cause, note) if text)


@dataclass(frozen=True, slots=True)
class BomComparison:
    build_file: str
    reference_file: str
    by_pid_only: bool  # the reference has no section column
    rows: list[BomDelta]

    @property
    def equal_count(self) -> int:
        return sum(row.equal for row in self.rows)

    @property
    def equal(self) -> bool:
        return self.equal_count == len(self.rows)

    def summary(self) -> str:
        return f"{len(self.rows)} rows: {self.equal_count} equal, {len(self.rows) - self.equal_count} differ"

    def notes(self) -> list[str]:
        if not self.by_pid_only:
            return []
        return ["compared by PID only: the reference has no section column, so the build's quantities are summed over its sections"]


def compare_bom(build_dir: Path, reference: Path) -> BomComparison:
    """BUILD_DIR/bom.csv against the REFERENCE CSV; raises BomCompareError with every problem of both files."""
    reference_parts, by_pid_only, problems = _read_reference(reference)
    build_parts, build_file, build_problems = _read_build(build_dir, by_pid_only)
    problems = build_problems + problems
    if len(problems) > MAX_PROBLEMS:
        more = len(problems) - MAX_PROBLEMS + 1
        problems = problems[: MAX_PROBLEMS - 1] + [Problem(f"and {more:,} more problems", hint="fix these and run again")]
    if problems:
        raise BomCompareError(problems)
    return BomComparison(build_file, str(reference), by_pid_only, _match(reference_parts, build_parts))


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Csv:
    """A CSV file's header (casefolded name -> column) and its data records with their first line."""

    file: str
    header_line: int
    header: list[str]
    columns: dict[str, int]
    records: list[tuple[int, list[str]]]

    def cell(self, record: list[str], name: str) -> str:
        index = self.columns.get(name)
        return record[index].strip() if index is not None and index < len(record) else ""

    def missing(self, names: tuple[str, ...]) -> list[str]:
        return [name for name in names if name not in self.columns]


def _read_csv(path: Path, what: str) -> tuple[_Csv | None, list[Problem]]:
    """Read a bounded UTF-8 CSV (a BOM mark is fine); '#' comment and blank lines are skipped but counted.

    Hostile until checked: the file must be a regular file of at most MAX_CSV_BYTES (never a
    device or FIFO read until memory runs out), and its content is bounded in lines, records,
    columns and cell length. Cells this module shows (section, pid, quantity, basis, alternatives)
    may hold no control or format character, so nothing from the file reaches a terminal raw."""
    shown = str(path)
    data, problem = _read_bounded(path, what)
    if problem is not None:
        return None, [problem]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [Problem(f"the {what} is not UTF-8 text ({exc.reason} at byte {exc.start})", hint="save it as CSV UTF-8", file=shown)]
    del data

    records: list[tuple[int, list[str]]] = []
    try:
        for line, record in _records(text):
            if len(records) > MAX_ROWS:  # the header and MAX_ROWS rows are in
                return None, [
                    Problem(
                        f"the {what} has more than {MAX_ROWS:,} rows",
                        hint="is this the right file? a bill of materials lists a few hundred parts",
                        file=shown,
                        line=line,
                    )
                ]
            records.append((line, record))
    except csv.Error as exc:
        line = records[-1][0] + 1 if records else 1
        return None, [Problem(f"not valid CSV near here: {exc}", file=shown, line=line)]
    except _TooLong as exc:
        return None, [Problem(str(exc), hint="is this the right file?", file=shown, line=exc.line)]
    del text
    if not records:
        return None, [Problem(f"the {what} has no header row", hint="start with a line such as 'section,pid,description,quantity'", file=shown)]

    header_line, header = records[0]
    header = [name.strip() for name in header]
    columns: dict[str, int] = {}
    problems = _bounded_cells(records, shown)
    for index, name in enumerate(header):
        name = name.casefold()
        if name in columns and name in ("section", "pid", "quantity"):
            problems.append(Problem(f"two '{name}' columns", hint="keep one", field=("header",), file=shown, line=header_line))
        columns.setdefault(name, index)
    problems += _plain_cells(records[1:], columns, shown)
    return _Csv(shown, header_line, header, columns, records[1:]), problems


def _read_bounded(path: Path, what: str) -> tuple[bytes, Problem | None]:
    """The bytes of a regular file of at most MAX_CSV_BYTES, read with that bound; or a problem."""
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return b"", Problem(f"cannot read the {what}: {exc.strerror}", file=shown)
    try:
        mode = os.fstat(descriptor)
        if not stat.S_ISREG(mode.st_mode):
            kind = "a directory" if stat.S_ISDIR(mode.st_mode) else "a device, FIFO or socket"
            return b"", Problem(f"the {what} is {kind}, not a regular file", hint="give the path of a CSV file", file=shown)
        if mode.st_size > MAX_CSV_BYTES:
            return b"", Problem(f"the {what} is {mode.st_size:,} bytes; the limit is {MAX_CSV_BYTES:,}", hint="is this the right file?", file=shown)
        chunks, left = [], MAX_CSV_BYTES + 1  # the size may have grown since the check
        while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        return b"", Problem(f"cannot read the {what}: {exc.strerror}", file=shown)
    finally:
        os.close(descriptor)
    if len(data) > MAX_CSV_BYTES:
        return b"", Problem(f"the {what} is over {MAX_CSV_BYTES:,} bytes, the limit", hint="is this the right file?", file=shown)
    return data, None


class _TooLong(ValueError):
    """A line or a record beyond the bounds; raised from inside the csv reader's input."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """CSV records, each with the line it starts on (a quoted field may span lines, up to
    MAX_RECORD_LINES of at most MAX_LINE_CHARS each, so no record grows without bound)."""
    starts: list[int] = []
    spanned = 0  # lines the record being read has taken so far

    def lines() -> Iterator[str]:
        nonlocal spanned
        # newline="" keeps \r\n and quoted line breaks intact for the csv module
        for number, line in enumerate(io.StringIO(text, newline=""), 1):
            if len(line) > MAX_LINE_CHARS:
                raise _TooLong(f"line of {len(line):,} characters; the limit is {MAX_LINE_CHARS:,}", number)
            if line.strip() and not line.lstrip().startswith("#"):
                spanned += 1
                if spanned > MAX_RECORD_LINES:
                    raise _TooLong(f"a quoted field runs over more than {MAX_RECORD_LINES} lines", starts[-MAX_RECORD_LINES])
                starts.append(number)
                yield line

    reader = csv.reader(lines())
    while True:
        first = len(starts)
        spanned = 0
        try:
            record = next(reader)
        except StopIteration:
            return
        yield starts[first], record


def _bounded_cells(records: list[tuple[int, list[str]]], shown: str) -> list[Problem]:
    """A problem per record with more than MAX_COLUMNS cells or a cell over MAX_CELL_CHARS."""
    problems = []
    for line, record in records:
        if len(record) > MAX_COLUMNS:
            problems.append(Problem(f"{len(record):,} columns; the limit is {MAX_COLUMNS}", file=shown, line=line))
        longest = max((len(cell) for cell in record), default=0)
        if longest > MAX_CELL_CHARS:
            problems.append(Problem(f"a cell of {longest:,} characters; the limit is {MAX_CELL_CHARS:,}", file=shown, line=line))
    return problems


def _plain_cells(records: list[tuple[int, list[str]]], columns: dict[str, int], shown: str) -> list[Problem]:
    """A problem per shown cell holding a control or format character (a terminal escape, a line
    break in a quoted field, a bidirectional override)."""
    problems = []
    used = [(name, columns[name]) for name in SHOWN_COLUMNS if name in columns]
    for line, record in records:
        for name, index in used:
            if index < len(record) and has_invisible(record[index]):
                problems.append(
                    Problem(
                        f"{_quoted(record[index])} holds a control or format character",
                        hint="keep one line of plain text",
                        field=(name,),
                        file=shown,
                        line=line,
                    )
                )
    return problems


def _quoted(text: str) -> str:
    """A cell for a message: repr escapes what cannot be shown, and a long cell is cut short."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _read_reference(path: Path) -> tuple[list[_ReferencePart], bool, list[Problem]]:
    """The reference's parts in file order, whether it lacks a section column, and its problems."""
    table, problems = _read_csv(path, "reference")
    if table is None:
        return [], False, problems
    for name in table.missing(("pid", "quantity")):
        problems.append(
            Problem(
                f"no '{name}' column (have: {', '.join(name if len(name) <= 40 else name[:40] + '...' for name in table.header)})",
                hint="the first row names the columns; it needs at least pid and quantity (section and description are optional)",
                field=("header",),
                file=table.file,
                line=table.header_line,
            )
        )
    if problems:
        return [], False, problems

    by_pid_only = "section" not in table.columns
    parts: list[_ReferencePart] = []
    first_line: dict[Key, int] = {}
    for line, record in table.records:
        section, pid, raw_quantity = (table.cell(record, name) for name in ("section", "pid", "quantity"))
        quantity = _whole_number(raw_quantity)
        if not pid:
            problems.append(Problem("empty", "give the part number of this row, or delete the row", ("pid",), table.file, line))
        if quantity is None:
            problems.append(
                Problem(f"{_quoted(raw_quantity)} is not a whole number >= 0", "write the count in digits, e.g. 12", ("quantity",), table.file, line)
            )
        if not pid or quantity is None:
            continue
        key = ("" if by_pid_only else _section_key(section), pid)
        if key in first_line:
            twice = f"{_quoted(pid)} is listed twice{'' if by_pid_only else f' in section {_quoted(section)}'} (first on line {first_line[key]})"
            problems.append(Problem(twice, "add the quantities up in one row", ("pid",), table.file, line))
            continue
        first_line[key] = line
        parts.append(_ReferencePart(section, pid, quantity, key))
    if not parts and not problems:
        problems.append(Problem("no parts listed under the header", file=table.file, line=table.header_line))
    return parts, by_pid_only, problems


def _read_build(build_dir: Path, by_pid_only: bool) -> tuple[dict[Key, _BuildPart], str, list[Problem]]:
    """The build's parts by key in file order, rows of one part summed; and the bom.csv path shown."""
    path = build_dir / "bom.csv"
    shown = str(path)
    if not build_dir.is_dir():
        return {}, shown, [Problem("not a build directory", hint="give the directory `fabricgen build` wrote", file=str(build_dir))]
    if not path.exists():  # anything else that is there (a device, a FIFO) the reader refuses by name
        return {}, shown, [Problem("no bill of materials here", hint=f"build first: fabricgen build INTENT -o {build_dir}", file=shown)]
    table, problems = _read_csv(path, "bill of materials")
    if table is None:
        return {}, shown, problems
    missing = table.missing(("section", "pid", "quantity"))
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        return {}, shown, [Problem(f"not a fabricgen bill of materials (no {names} column)", hint=REBUILD_HINT, file=shown)]

    parts: dict[Key, _BuildPart] = {}
    for line, written in table.records:
        record = [spreadsheet_value(cell) for cell in written]  # as the build meant it, before csv_format neutralised it
        section, pid, raw_quantity = (table.cell(record, name) for name in ("section", "pid", "quantity"))
        quantity = _whole_number(raw_quantity)
        alternatives, bad_alternative = _alternatives(table.cell(record, "alternatives"))
        if not pid:
            problems.append(Problem("empty", REBUILD_HINT, ("pid",), shown, line))
        if quantity is None:
            problems.append(Problem(f"{_quoted(raw_quantity)} is not a whole number >= 0", REBUILD_HINT, ("quantity",), shown, line))
        if bad_alternative:
            problems.append(Problem(f"{_quoted(bad_alternative)} is not 'label=N'", REBUILD_HINT, ("alternatives",), shown, line))
        if not pid or quantity is None:
            continue
        part = parts.setdefault((_section_key(section), pid), _BuildPart(section, pid, 0))
        part.quantity += quantity
        # rows of one part differ only by cable length; the first basis given speaks for all
        part.basis = part.basis or table.cell(record, "basis")
        part.alternatives = part.alternatives or alternatives
    return (_merge_sections(parts) if by_pid_only else parts), shown, problems


def _merge_sections(parts: dict[Key, _BuildPart]) -> dict[Key, _BuildPart]:
    """One part per PID, summed over sections, for a reference without sections."""
    merged: dict[Key, _BuildPart] = {}
    for part in parts.values():
        into = merged.get(("", part.pid))
        if into is None:
            merged[("", part.pid)] = _BuildPart(part.section, part.pid, part.quantity, part.basis, dict(part.alternatives))
            continue
        into.section += f", {part.section}"
        into.quantity += part.quantity
        into.basis = "; ".join(text for text in (into.basis, part.basis) if text)
        into.alternatives = {}  # each section's alternative counts only that section
    return merged


def _alternatives(text: str) -> tuple[dict[str, int], str]:
    """'label=N; label=N' -> ({label: N}, ''); on a malformed pair, the pair as second item."""
    alternatives: dict[str, int] = {}
    for pair in filter(None, (p.strip() for p in text.split(";"))):
        label, _, count = pair.rpartition("=")
        number = _whole_number(count.strip())
        if not label.strip() or number is None:
            return {}, pair
        alternatives[label.strip()] = number
    return alternatives, ""


def _whole_number(text: str) -> int | None:
    return int(text) if _WHOLE_NUMBER.fullmatch(text) else None


def _section_key(section: str) -> str:
    return " ".join(section.split()).casefold()


# --- matching -------------------------------------------------------------------------------------


def _match(reference: list[_ReferencePart], build: dict[Key, _BuildPart]) -> list[BomDelta]:
    """Reference parts in their order, then the build's parts the reference does not list."""
    matched: dict[int, Key] = {i: ref.key for i, ref in enumerate(reference) if ref.key in build}
    taken = set(matched.values())

    # Sections named differently (the whitepaper's "Nexus Dashboard" is a "Management platform"):
    # pair the leftovers by PID, but only where the PID leaves no choice on either side.
    leftover_by_pid: dict[str, list[Key]] = {}
    for key in build:
        if key not in taken:
            leftover_by_pid.setdefault(key[1], []).append(key)
    unmatched_refs = Counter(ref.pid for i, ref in enumerate(reference) if i not in matched)
    for i, ref in enumerate(reference):
        candidates = leftover_by_pid.get(ref.pid, [])
        if i not in matched and len(candidates) == 1 and unmatched_refs[ref.pid] == 1:
            matched[i] = candidates[0]
            taken.add(candidates[0])

    rows: list[BomDelta] = []
    for i, ref in enumerate(reference):
        if i not in matched:
            rows.append(BomDelta(ref.section, ref.pid, None, ref.quantity, "not in this build"))
            continue
        part = build[matched[i]]
        renamed = part.section if ref.key != matched[i] else None
        rows.append(BomDelta(ref.section or part.section, ref.pid, part.quantity, ref.quantity, _cause(part, ref.quantity), renamed))
    rows += [BomDelta(part.section, part.pid, part.quantity, None, "not in the reference") for key, part in build.items() if key not in taken]
    return rows


def _cause(part: _BuildPart, reference: int) -> str:
    if part.quantity == reference:
        return ""
    counted = f"this build counts {part.basis}" if part.basis else ""
    for label, quantity in part.alternatives.items():
        if quantity == reference:
            return "; ".join(text for text in (f"reference counts {label} ({quantity})", counted) if text)
    return counted or "differs"


# --- presenting -----------------------------------------------------------------------------------

COLUMNS = ("section", "pid", "build", "reference", "delta", "cause")


def _cells(row: BomDelta) -> tuple[str, ...]:
    def quantity(n: int | None) -> str:
        return "" if n is None else str(n)

    delta = f"{row.delta:+d}" if row.delta else "0"
    return (row.section, row.pid, quantity(row.build), quantity(row.reference), delta, row.explanation)


def bom_table(result: BomComparison) -> Table:
    """A rich table of the comparison, one row per part."""
    table = Table(title=f"{result.build_file} vs {result.reference_file}", header_style="bold")
    for name in COLUMNS:
        table.add_column(name, justify="right" if name in ("build", "reference", "delta") else "left")
    for row in result.rows:
        # Text, not str: a part number or basis must never be read as rich markup
        table.add_row(*(Text(cell) for cell in _cells(row)), style=None if row.equal else "yellow")
    return table


def render_markdown(result: BomComparison) -> str:
    """A pipe table for a pull-request comment, then the notes and the summary."""

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = [
        f"**Bill of materials**: `{result.build_file}` vs `{result.reference_file}`",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---|---:|---:|---:|---|",
    ]
    lines += ["| " + " | ".join(escape(cell) for cell in _cells(row)) + " |" for row in result.rows]
    lines += [""] + [f"_{note}_" for note in result.notes()] + [result.summary()]
    return "\n".join(lines) + "\n"


def render_json(result: BomComparison) -> str:
    """{"build", "reference", "compared_by", "rows": [...], "summary": {...}} for scripts."""
    document = {
        "build": result.build_file,
        "reference": result.reference_file,
        "compared_by": "pid" if result.by_pid_only else "section and pid",
        "rows": [
            {
                "section": row.section,
                "pid": row.pid,
                "build": row.build,
                "reference": row.reference,
                "delta": row.delta,
                "equal": row.equal,
                "cause": row.explanation,
                "build_section": row.build_section,
            }
            for row in result.rows
        ],
        "summary": {"rows": len(result.rows), "equal": result.equal_count, "differ": len(result.rows) - result.equal_count},
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
