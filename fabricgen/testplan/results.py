"""Reading perftest and nccl-tests / rccl-tests output, as hostile input: a regular file only
(opened without blocking, so a FIFO or a pipe another process holds open is refused at once, never
waited on), bounded size, UTF-8, every number parsed strictly (digits and one decimal point: no
exponent, sign, inf or nan), and every problem names the file, the line and what was expected.
Nothing read is echoed raw: values kept are the numbers' own text after they matched a pattern, so
no terminal escape can pass. Each result keeps the line of its fastest figure, so `check` can name
the line of a value no link could carry.

Formats:
- perftest (github:linux-rdma/perftest src/perftest_parameters.h RESULT_FMT / RESULT_FMT_G and
  REPORT_FMT): a header ` #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]
  MsgRate[Mpps]` (`[MB/sec]` without --report_gbits; MsgRate absent in old versions), then one row
  per message size: bytes, iterations, peak, average[, message rate]. MB is 2^20 bytes, Gb 10^9
  bits (src/perftest_resources.c: format_factor 0x100000 or 125000000).
- nccl-tests and rccl-tests (github:NVIDIA/nccl-tests src/common.cu, github:ROCm/rccl-tests
  src/common.cu; doc/PERFORMANCE.md): `#`-prefixed header lines, a column header naming
  `time algbw busbw #wrong` twice (out-of-place, then in-place), data rows (with or without a
  leading `#`) whose first field is the size in bytes and whose last eight are the two groups,
  `# Out of bounds values : N OK|FAILED` and `# Avg bus bandwidth    : X` (printf %g)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.basics.errors import Problem
from fabricgen.basics.files import UnreadableFile, read_regular_file
from fabricgen.basics.trust import printable

MAX_RESULT_BYTES = 8 << 20  # a full nccl-tests sweep of 4,096 ranks prints under 1 MB
MAX_LINE = 4000
NUMBER = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?")
INTEGER = re.compile(r"[0-9]{1,15}")
PERFTEST_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb|MB)/sec\]\s+BW average\[(Gb|MB)/sec\](?:\s+MsgRate\[Mpps\])?")
NCCL_COLUMNS = re.compile(r"time\s+algbw\s+busbw\s+#wrong\s+time\s+algbw\s+busbw\s+#wrong\s*$")
# The same table pasted from a report (seed 003, Supermicro's SSE-T8032S paper, Table 1): tab-
# separated, units beside the names (`algbw (GB/s)`), the header split over two lines, the
# first ending in `time (us) out-of-place ... In-place` and the second starting at algbw.
UNITS = re.compile(r"\((?:B|elements|us|GB/s)\)")
SPLIT_COLUMNS = re.compile(r"^#?\s*algbw\s+busbw\s+#wrong\s+time\s+algbw\s+busbw\s+#wrong\s*$")
AVG_BUSBW = re.compile(r"#\s*Avg bus bandwidth\s*:\s*(\S+)")
OUT_OF_BOUNDS = re.compile(r"#\s*Out of bounds values\s*:\s*(\S+)")
RANK_HOST = re.compile(r"#\s*Rank\s+[0-9]+\s+Group\s+[0-9]+\s+Pid\s+[0-9]+\s+on\s+([A-Za-z0-9][A-Za-z0-9.-]{0,252})\s+device")
GID_LINE = re.compile(r"GID:\s*((?:[0-9]{2,3}:){15}[0-9]{2,3})")
MB_TO_GB = (1 << 20) * 8 / 1e9  # perftest MB/sec (2^20 bytes) to Gb/s


@dataclass(frozen=True)
class Reading:
    """One figure of a results file, where it is: for naming a value that cannot be."""

    line: int
    column: str  # "BW peak", "BW average", "busbw", "Avg bus bandwidth"
    text: str  # as printed
    value: float  # Gb/s (perftest) or GB/s (nccl-tests), as the plan counts them


@dataclass
class PerftestResult:
    path: str
    unit: str  # "Gb/sec" or "MB/sec", as printed
    peak: str  # the largest row's numbers exactly as printed
    average: str
    average_gbps: float
    rows: int
    fastest: Reading  # the largest BW peak or BW average of any row, in Gb/s
    addresses: set[str] = field(default_factory=set)  # IPv4 addresses of the GIDs it printed
    local: str | None = None  # the IPv4 address of the first `local address` GID: the side that printed it
    remote: str | None = None  # and of the first `remote address` GID


@dataclass
class NcclResult:
    path: str
    peak_busbw: str  # the largest busbw of any row, as printed
    peak_size: str
    avg_busbw: str | None  # the `# Avg bus bandwidth` value, as printed
    out_of_bounds: str | None
    wrong: int  # rows whose #wrong is neither 0 nor N/A
    rows: int
    reduction: bool  # a redop other than none/-: all-reduce, not all-to-all
    library: str | None  # "rccl" when the header says so, else None
    fastest: Reading  # the largest busbw of any row, or the `# Avg bus bandwidth` when larger
    hosts: set[str] = field(default_factory=set)


class ResultProblem(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def read_result(path: Path) -> PerftestResult | NcclResult:
    """One results file, parsed; ResultProblem naming the file (and line) when it is not a regular
    file of at most MAX_RESULT_BYTES, or neither format."""
    name = str(path)
    try:
        data = read_regular_file(path, MAX_RESULT_BYTES)
    except UnreadableFile as exc:
        reason = f"larger than {MAX_RESULT_BYTES >> 20} MiB: not a perftest or nccl-tests output" if exc.too_large else exc.reason
        raise ResultProblem(Problem(reason, hint="name the output file the plan's script wrote (results/<id>.txt)", file=name)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultProblem(Problem(f"not UTF-8 text (byte {exc.start})", file=name)) from None
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE:
            raise ResultProblem(Problem(f"a line longer than {MAX_LINE} characters", file=name, line=number))
    if any(PERFTEST_HEADER.search(line) for line in lines):
        return _perftest(name, lines)
    if any(NCCL_COLUMNS.search(line) or SPLIT_COLUMNS.match(_unitless(line)) for line in lines):
        return _nccl(name, lines)
    raise ResultProblem(
        Problem(
            "neither perftest output (a `#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]` header) nor nccl-tests/rccl-tests output "
            "(a `time algbw busbw #wrong time algbw busbw #wrong` column header)",
            file=name,
            line=1,
        )
    )


def _perftest(name: str, lines: list[str]) -> PerftestResult:
    start = next(i for i, line in enumerate(lines) if PERFTEST_HEADER.search(line))
    match = PERFTEST_HEADER.search(lines[start])
    assert match is not None
    unit = f"{match.group(1)}/sec"
    columns = 5 if "MsgRate" in lines[start] else 4
    best: tuple[float, str, str] | None = None
    fastest: Reading | None = None
    rows = 0
    for number in range(start + 2, len(lines) + 1):
        words = lines[number - 1].split()
        if not words or set(lines[number - 1].strip()) <= {"-"}:
            if rows:
                break
            continue
        if len(words) != columns or not INTEGER.fullmatch(words[0]) or not INTEGER.fullmatch(words[1]) or not all(NUMBER.fullmatch(w) for w in words[2:]):
            if rows:
                break  # the table ended (perftest prints its end line or a warning after it)
            raise ResultProblem(
                Problem(
                    f"expected a perftest row of {columns} numbers (bytes, iterations, BW peak, BW average{', MsgRate' if columns == 5 else ''}), found {printable(lines[number - 1].strip())[:120]!r}",
                    file=name,
                    line=number,
                )
            )
        rows += 1
        factor = MB_TO_GB if unit == "MB/sec" else 1
        average = float(words[3]) * factor
        if best is None or average > best[0]:
            best = (average, words[2], words[3])
        for column, text in (("BW peak", words[2]), ("BW average", words[3])):
            if fastest is None or float(text) * factor > fastest.value:
                fastest = Reading(number, column, text, float(text) * factor)
    if best is None or fastest is None:
        raise ResultProblem(Problem("a perftest header but no result row under it (did the test fail? see the rest of the file)", file=name, line=start + 1))
    addresses = set()
    ends: dict[str, str] = {}
    side = None  # perftest prints `local address: ...` or `remote address: ...`, then that side's GID
    for line in lines:
        if "local address" in line or "remote address" in line:
            side = "local" if "local address" in line else "remote"
        found = GID_LINE.search(line)
        if found:
            parts = found.group(1).split(":")
            if parts[10:12] == ["255", "255"]:
                address = ".".join(str(int(p)) for p in parts[12:])
                addresses.add(address)
                if side is not None:
                    ends.setdefault(side, address)
            side = None
    return PerftestResult(name, unit, best[1], best[2], best[0], rows, fastest, addresses, ends.get("local"), ends.get("remote"))


def _unitless(line: str) -> str:
    """A header line without its units: `algbw (GB/s)` -> `algbw` (tabs are whitespace to split())."""
    return UNITS.sub(" ", line).strip()


def _nccl(name: str, lines: list[str]) -> NcclResult:
    start = next(i for i, line in enumerate(lines) if NCCL_COLUMNS.search(line) or SPLIT_COLUMNS.match(_unitless(line)))
    header = _unitless(lines[start]).lstrip("#").split()
    if header[0] == "algbw":  # the pasted form: the columns before the first time are on the line above
        above = _unitless(lines[start - 1]).lstrip("#").split() if start else []
        if "time" not in above:
            raise ResultProblem(
                Problem("a results table whose column header has no `size ... time` line above its `algbw busbw #wrong` line", file=name, line=start + 1)
            )
        header = above[: above.index("time") + 1] + header
    width = len(header)
    redop = header.index("redop") if "redop" in header else None
    peak: tuple[float, str, str, int] | None = None
    rows = wrong = 0
    reduction = False
    avg = oob = None
    avg_line = 0
    hosts: set[str] = set()
    library = "rccl" if any("rccl" in line.lower() for line in lines[:start] if line.startswith("#")) else None
    for line in lines[:start]:
        host = RANK_HOST.search(line)
        if host:
            hosts.add(host.group(1))
    for number in range(start + 2, len(lines) + 1):
        raw = lines[number - 1]
        stripped = raw.strip()
        if found := AVG_BUSBW.match(stripped):
            if not NUMBER.fullmatch(found.group(1)) and not re.fullmatch(r"[0-9.]+e[+-][0-9]{2}", found.group(1)):
                raise ResultProblem(Problem(f"expected a number after `Avg bus bandwidth :`, found {printable(found.group(1))[:40]!r}", file=name, line=number))
            avg, avg_line = found.group(1), number
            continue
        if found := OUT_OF_BOUNDS.match(stripped):
            if not INTEGER.fullmatch(found.group(1)):
                raise ResultProblem(
                    Problem(f"expected a count after `Out of bounds values :`, found {printable(found.group(1))[:40]!r}", file=name, line=number)
                )
            oob = found.group(1)
            continue
        words = stripped.lstrip("#").split()
        if not words or not INTEGER.fullmatch(words[0]):
            continue  # a comment or header line (`#  (B) (elements) ...`, `# Collective test concluded`)
        if len(words) != width:
            raise ResultProblem(Problem(f"expected a row of {width} columns like the header ({' '.join(header)}), found {len(words)}", file=name, line=number))
        groups = words[-8:]
        for column, value in zip(
            ("time", "algbw", "busbw", "time", "algbw", "busbw"), (groups[0], groups[1], groups[2], groups[4], groups[5], groups[6]), strict=True
        ):
            if not NUMBER.fullmatch(value):
                raise ResultProblem(Problem(f"expected a number in column {column}, found {printable(value)[:40]!r}", file=name, line=number))
        for value in (groups[3], groups[7]):
            if value not in ("0", "N/A") and not INTEGER.fullmatch(value.rstrip("*")):
                raise ResultProblem(Problem(f"expected a count or N/A in column #wrong, found {printable(value)[:40]!r}", file=name, line=number))
            if value not in ("0", "N/A"):
                wrong += 1
        if redop is not None and words[redop] not in ("none", "-"):
            reduction = True
        rows += 1
        for busbw in (groups[2], groups[6]):
            if peak is None or float(busbw) > peak[0]:
                peak = (float(busbw), busbw, words[0], number)
    if peak is None:
        raise ResultProblem(Problem("a nccl-tests column header but no data row (the run failed? see the file)", file=name, line=start + 1))
    fastest = Reading(peak[3], "busbw", peak[1], peak[0])
    if avg is not None and float(avg) > fastest.value:  # %g may print an exponent: 1e+06 is a number float() reads
        fastest = Reading(avg_line, "Avg bus bandwidth", avg, float(avg))
    return NcclResult(name, peak[1], peak[2], avg, oob, wrong, rows, reduction, library, fastest, hosts)
