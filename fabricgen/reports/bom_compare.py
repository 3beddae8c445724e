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
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table
from rich.text import Text

from fabricgen.errors import FabricgenError, Problem

MAX_CSV_BYTES = 10 * 1024 * 1024  # a BOM is a few hundred rows; a file this big is the wrong file
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
    """Read a bounded UTF-8 CSV (a BOM mark is fine); '#' comment and blank lines are skipped but counted."""
    shown = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_CSV_BYTES:
            return None, [Problem(f"the {what} is {size:,} bytes; the limit is {MAX_CSV_BYTES:,}", hint="is this the right file?", file=shown)]
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [Problem(f"the {what} is not UTF-8 text ({exc.reason} at byte {exc.start})", hint="save it as CSV UTF-8", file=shown)]
    except OSError as exc:
        return None, [Problem(f"cannot read the {what}: {exc.strerror}", file=shown)]

    records: list[tuple[int, list[str]]] = []
    try:
        for line, record in _records(text):
            records.append((line, record))
    except csv.Error as exc:
        line = records[-1][0] + 1 if records else 1
        return None, [Problem(f"not valid CSV near here: {exc}", file=shown, line=line)]
    if not records:
        return None, [Problem(f"the {what} has no header row", hint="start with a line such as 'section,pid,description,quantity'", file=shown)]

    header_line, header = records[0]
    header = [name.strip() for name in header]
    columns: dict[str, int] = {}
    problems: list[Problem] = []
    for index, name in enumerate(header):
        name = name.casefold()
        if name in columns and name in ("section", "pid", "quantity"):
            problems.append(Problem(f"two '{name}' columns", hint="keep one", field=("header",), file=shown, line=header_line))
        columns.setdefault(name, index)
    return _Csv(shown, header_line, header, columns, records[1:]), problems


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """CSV records, each with the line it starts on (a quoted field may span lines)."""
    starts: list[int] = []

    def lines() -> Iterator[str]:
        # newline="" keeps \r\n and quoted line breaks intact for the csv module
        for number, line in enumerate(io.StringIO(text, newline=""), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                starts.append(number)
                yield line

    reader = csv.reader(lines())
    while True:
        first = len(starts)
        try:
            record = next(reader)
        except StopIteration:
            return
        yield starts[first], record


def _read_reference(path: Path) -> tuple[list[_ReferencePart], bool, list[Problem]]:
    """The reference's parts in file order, whether it lacks a section column, and its problems."""
    table, problems = _read_csv(path, "reference")
    if table is None:
        return [], False, problems
    for name in table.missing(("pid", "quantity")):
        problems.append(
            Problem(
                f"no '{name}' column (have: {', '.join(table.header)})",
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
            problems.append(Problem(f"{raw_quantity!r} is not a whole number >= 0", "write the count in digits, e.g. 12", ("quantity",), table.file, line))
        if not pid or quantity is None:
            continue
        key = ("" if by_pid_only else _section_key(section), pid)
        if key in first_line:
            twice = f"'{pid}' is listed twice{'' if by_pid_only else f' in section {section!r}'} (first on line {first_line[key]})"
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
    if not path.is_file():
        return {}, shown, [Problem("no bill of materials here", hint=f"build first: fabricgen build INTENT -o {build_dir}", file=shown)]
    table, problems = _read_csv(path, "bill of materials")
    if table is None:
        return {}, shown, problems
    missing = table.missing(("section", "pid", "quantity"))
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        return {}, shown, [Problem(f"not a fabricgen bill of materials (no {names} column)", hint=REBUILD_HINT, file=shown)]

    parts: dict[Key, _BuildPart] = {}
    for line, record in table.records:
        section, pid, raw_quantity = (table.cell(record, name) for name in ("section", "pid", "quantity"))
        quantity = _whole_number(raw_quantity)
        alternatives, bad_alternative = _alternatives(table.cell(record, "alternatives"))
        if not pid:
            problems.append(Problem("empty", REBUILD_HINT, ("pid",), shown, line))
        if quantity is None:
            problems.append(Problem(f"{raw_quantity!r} is not a whole number >= 0", REBUILD_HINT, ("quantity",), shown, line))
        if bad_alternative:
            problems.append(Problem(f"{bad_alternative!r} is not 'label=N'", REBUILD_HINT, ("alternatives",), shown, line))
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
