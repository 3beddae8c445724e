"""`analyze` and `bom compare` are bounded: the hostile tester's inputs (a million flows per GPU
pair, free-string options, an empty --report, /dev/zero as a reference) are each a located exit 2,
found before any work, in little memory; and what they echo cannot drive a terminal."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fabricgen.analysis import capacity as capacity_module
from fabricgen.analysis import limits, loadbalance
from fabricgen.analysis.balancing import clos_of as leaf_spine
from fabricgen.analysis.balancing import plan
from fabricgen.analysis.fabric import read_fabric
from fabricgen.analysis.limits import TrafficOptions
from fabricgen.basics.errors import AnalysisError
from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from fabricgen.reports import bom_compare
from fabricgen.reports.bom_compare import compare_bom

INTENTS = Path(__file__).resolve().parents[1] / "intents"
runner = CliRunner()
PEAK_MIB = 200  # the brief's bound for a refusal, interpreter and imports included


@pytest.fixture(scope="module")
def whitepaper_256(tmp_path_factory) -> Path:
    """The whitepaper's 256-GPU cluster: 32 DGX of 8 rails, 8 leaves, 4 spines."""
    destination = tmp_path_factory.mktemp("bounded") / "256"
    build(INTENTS / "cisco-256-gpu.yaml", destination)
    return destination


def analyze(*args: str):
    return runner.invoke(app, ["analyze", *args])


def peak_of(*command: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run `python -m fabricgen COMMAND` as a user would; -> (its result, its peak RSS in MiB).
    A fresh parent measures it, so no other test's child counts."""
    measure = (
        "import resource, subprocess, sys; "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(r.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.stderr.write(r.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "fabricgen", *command],
        capture_output=True, text=True, timeout=120, check=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    code, peak_kib = result.stdout.split()
    result.returncode = int(code)
    return result, int(peak_kib) / 1024


# --- analyze: options -------------------------------------------------------------------------


def test_a_million_flows_per_pair_is_refused_before_the_build_is_read(tmp_path):
    # the tester's input asked numpy for 59 GiB; the build directory here does not even exist,
    # so a refusal that names only the option proves nothing was read or allocated first
    result = analyze(str(tmp_path / "no-build"), "--flows-per-pair", "1000000")
    assert result.exit_code == 2, result.output
    assert "--flows-per-pair must be at most 256, not 1,000,000 (fix: use --flows-per-pair 256 or less)" in result.stderr
    assert "analyze: 1 problem" in result.stderr


def test_the_refusal_is_a_located_exit_2_in_little_memory(whitepaper_256):
    result, peak = peak_of("analyze", str(whitepaper_256), "--flows-per-pair", "1000000")
    assert result.returncode == 2 and "--flows-per-pair must be at most 256" in result.stderr
    assert "Traceback" not in result.stderr
    assert peak < PEAK_MIB, f"{peak:.0f} MiB"


@pytest.mark.parametrize("name", sorted(limits.BOUNDS))
def test_every_numeric_option_has_a_bound(tmp_path, name):
    low, high = limits.BOUNDS[name]
    result = analyze(str(tmp_path / "no-build"), name, str(high + 1))
    assert result.exit_code == 2, result.output
    assert f"{name} must be at most {high:,}, not {high + 1:,} (fix: use {name} {high} or less)" in result.stderr
    result = analyze(str(tmp_path / "no-build"), name, str(low - 1))
    assert f"{name} must be at least {low}, not {low - 1}" in result.stderr
    # the bound itself is allowed: the refusal is then the missing build, not the option
    result = analyze(str(tmp_path / "no-build"), name, str(high), "--no-traffic")
    assert result.exit_code == 2 and name not in result.stderr


@pytest.mark.parametrize(
    ("option", "value", "choices"),
    [
        ("--network", "nope", "'backend', 'frontend', 'storage'"),
        ("--pattern", "butterfly\x1b[2J", "'all-to-all', 'ring', 'permutation', 'shift'"),
        ("--scope", "galaxy", "'rail', 'cross-rail'"),
        ("--placement", "random", "'contiguous', 'scattered'"),
        ("--hash", "md5", "'crc32', 'random'"),
    ],
)
def test_every_choice_is_checked_as_the_command_line_is_read_also_without_traffic(tmp_path, option, value, choices):
    # the choices are enumerations: --help lists them, and any other value is refused before the
    # build is read, with or without --no-traffic
    for extra in ((), ("--no-traffic",)):
        result = analyze(str(tmp_path / "no-build"), *extra, option, value)
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.stderr and f"is not one of {choices}" in result.stderr
        assert "\x1b" not in result.stderr  # the escape is shown, never sent to the terminal
        assert "no-build" not in result.stderr  # the build was not looked at
    assert choices.replace("'", "").replace(", ", "|") in analyze("--help").stdout


def test_a_mode_not_known_is_refused_as_the_command_line_is_read(tmp_path):
    result = analyze(str(tmp_path / "no-build"), "--no-traffic", "--modes", "ecmp,magic\x1b[2J")
    assert result.exit_code == 2
    assert "Invalid value for '--modes': 'magic\\x1b[2J': choose one or more of ecmp, flowlet, spray, comma-separated" in result.stderr
    assert "\x1b" not in result.stderr and "no-build" not in result.stderr


def test_no_modes_at_all_is_refused(tmp_path):
    result = analyze(str(tmp_path / "no-build"), "--modes", " , ,")
    assert result.exit_code == 2 and "Invalid value for '--modes': no mode: choose one or more of ecmp, flowlet, spray" in result.stderr


# --- analyze: the simulation's memory and work --------------------------------------------------


def cross_rail(**changes) -> TrafficOptions:
    return replace(TrafficOptions(scope="cross-rail"), **changes)


def test_a_simulation_too_big_for_memory_is_refused_with_the_value_that_fits(whitepaper_256, monkeypatch):
    model = leaf_spine(read_fabric(whitepaper_256))
    budget = 1 << 30
    options = cross_rail(flows_per_pair=64, seeds=1)  # within every bound; 4 M flows, ~2 GiB, a minute of CPU
    assert limits.simulation_cost(model, options, sweep=False).bytes > budget
    with pytest.raises(AnalysisError) as caught:
        plan(read_fabric(whitepaper_256), options, sweep=False, budget=budget)
    (problem,) = caught.value.problems
    assert "the load-balancing simulation would need about" in problem.message and "more than the 1.0 GiB it may use" in problem.message
    fitting = int(problem.hint.split("lower --flows-per-pair to ")[1].split(";")[0])
    # the value named is the largest that fits, not a guess
    assert limits.simulation_cost(model, replace(options, flows_per_pair=fitting), sweep=False).bytes <= budget
    assert limits.simulation_cost(model, replace(options, flows_per_pair=fitting + 1), sweep=False).bytes > budget
    assert "use --scope rail" in problem.hint and "use --no-traffic" in problem.hint

    # the command refuses it before the capacity analysis and before any traffic is built
    def never(*_args, **_kwargs):
        raise AssertionError("ran before the refusal")

    monkeypatch.setattr(limits, "memory_budget", lambda: budget)
    monkeypatch.setattr(capacity_module, "capacity", never)
    monkeypatch.setattr(loadbalance, "make_traffic", never)
    result = analyze(str(whitepaper_256), "--scope", "cross-rail", "--flows-per-pair", "64", "--seeds", "1", "--no-sweep")
    assert result.exit_code == 2, result.output
    assert f"lower --flows-per-pair to {fitting}" in result.stderr and "Traceback" not in result.output


def test_a_simulation_too_long_is_refused_by_its_work(whitepaper_256):
    # 16.6 G placements, hours of CPU whatever the machine's memory: refused in any case, with the fixes
    result, peak = peak_of("analyze", str(whitepaper_256), "--scope", "cross-rail", "--flows-per-pair", "256", "--flowlets", "64")
    assert result.returncode == 2, result.stderr
    assert "16,644,046,848 flow and flowlet placements over its seeds, modes and jobs sweep), more than the limit of 5 minutes" in result.stderr
    assert "(fix: lower --flows-per-pair to 9; or use --no-traffic" in result.stderr and "Traceback" not in result.stderr  # the only single change that fits
    assert peak < PEAK_MIB, f"{peak:.0f} MiB"


def test_the_time_estimate_follows_the_work():
    # a leaf-spine of 2 hops and 3 tiers of 4 hops, 64 nodes of 8 GPUs: the estimate scales with
    # the flows, the hops, the planes and the flowlets, and one sending leaf cuts it to its share
    from tests.test_analysis_paths import synthetic

    def clos(tiers: int, planes: int = 1):
        leaves = [f"l{i}" for i in range(8 * planes)]
        if tiers == 2:
            cables = [(leaf, s) for leaf in leaves for s in ("s1", "s2")]
            names, kinds = leaves + ["s1", "s2"], [0] * len(leaves) + [1, 1]
        else:
            half = len(leaves) // 2
            cables = [(leaf, "s1" if i < half else "s2") for i, leaf in enumerate(leaves)] + [("s1", "c1"), ("s2", "c1")]
            names, kinds = leaves + ["s1", "s2", "c1"], [0] * len(leaves) + [1, 1, 2]
        nics = np.tile(np.arange(len(leaves)), 64)
        model = synthetic(names, kinds, cables, nics, 8)
        return replace(model, planes=planes) if planes > 1 else model

    options = TrafficOptions(scope="cross-rail", seeds=1)
    two, three = (limits.simulation_cost(clos(t), options, sweep=False) for t in (2, 3))
    assert two.flows == three.flows == 64 * 63 * 64
    assert 1.5 < three.seconds / two.seconds < 2.0  # twice the hops, the traffic's own cost aside
    per_hop = sum(limits.SECONDS_PER_FLOW_HOP[m] * (options.flowlets if m == "flowlet" else 1) for m in options.modes)
    assert three.seconds - two.seconds == pytest.approx(two.flows * 2 * per_hop)  # the 2 extra hops of every flow
    assert limits.simulation_cost(clos(2), replace(options, seeds=4), sweep=False).seconds == pytest.approx(4 * two.seconds)
    one_leaf = limits.simulation_cost(clos(2), replace(options, senders="leaf:l0"), sweep=False)
    assert one_leaf.flows == math.ceil(two.flows / 8)  # 8 leaves, one rail each: an eighth of the GPUs send


def test_traffic_size_counts_the_flows_make_traffic_builds(whitepaper_256):
    model = leaf_spine(read_fabric(whitepaper_256))
    for pattern, scope, jobs, flows_per_pair in (
        ("all-to-all", "rail", 1, 1),
        ("all-to-all", "cross-rail", 3, 2),
        ("ring", "cross-rail", 4, 3),
        ("ring", "rail", 16, 1),
    ):
        traffic = loadbalance.make_traffic(model, pattern, scope=scope, jobs=jobs, flows_per_pair=flows_per_pair)
        flows, _ = loadbalance.traffic_size(model.nodes, model.rails, pattern, scope, jobs, flows_per_pair)
        assert flows == len(traffic.src), (pattern, scope, jobs, flows_per_pair)


def test_the_estimate_bounds_the_measured_peak(whitepaper_256):
    # a real simulation (254 K flows, every mode, no sweep) in a fresh process: its peak
    # allocation is below the estimate, and the estimate not wildly above it
    script = textwrap.dedent(
        f"""
        import json, tracemalloc
        from fabricgen.analysis.balancing import analyse, clos_of as leaf_spine
        from fabricgen.analysis.fabric import read_fabric
        from fabricgen.analysis.limits import TrafficOptions, simulation_cost
        from pathlib import Path
        fabric = read_fabric(Path({str(whitepaper_256)!r}))
        options = TrafficOptions(scope="cross-rail", flows_per_pair=4, seeds=1)
        # tracemalloc sees numpy's buffers too; unlike ru_maxrss it does not depend on the peak
        # an earlier phase (reading the build) happened to leave behind
        tracemalloc.start()
        analyse(fabric, options, sweep=False)
        _, peak = tracemalloc.get_traced_memory()
        print(json.dumps([peak, simulation_cost(leaf_spine(fabric), options, sweep=False).bytes]))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True, cwd=Path(__file__).resolve().parents[1])
    measured, estimate = json.loads(result.stdout)
    assert measured > 50 << 20, "the run should be large enough to measure"
    assert measured <= estimate <= 2.5 * measured, (measured >> 20, estimate >> 20)


def test_a_fabric_too_large_for_the_capacity_analysis_is_refused_before_it():
    # a build directory is input too: a topology of 100,000 leaves would need ~1 TB of pair matrices
    with pytest.raises(AnalysisError) as caught:
        limits.check_capacity_cost(100_000, 64, "backend", budget=16 << 30)
    messages = [problem.message for problem in caught.value.problems]
    assert messages[0].startswith("analysing the backend fabric's 100,000 leaves and 64 spines would need about 954.0 GiB of memory")
    assert "more than the limit of 200,000,000,000" in messages[1]
    # the 8,192-GPU bench fabric (128 leaves, 64 spines) is far inside both
    cost = limits.check_capacity_cost(128, 64, "backend", budget=1 << 30)
    assert cost.bytes < 64 << 20 and cost.placements < limits.MAX_CAPACITY_STEPS / 1000


def test_the_budget_is_a_share_of_the_memory_free_now():
    budget = limits.memory_budget()
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        available = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:"))
    assert 0 < budget <= available  # a share of it (it moves while other programs run)


# --- analyze: the report's path ---------------------------------------------------------------


def test_an_empty_report_path_is_a_clear_exit_2(tmp_path):
    result = analyze(str(tmp_path / "no-build"), "--report", "")
    assert result.exit_code == 2, result.output
    assert "--report: needs a file name, not '.' (fix: give one, e.g. --report analysis.md)" in result.stderr
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(result.exception, SystemExit)


def test_a_report_under_a_file_is_refused_before_the_work(whitepaper_256, tmp_path, monkeypatch):
    # a missing directory is created when the report is written (tests/test_cli_reports.py); one
    # that cannot be, because a file stands where a directory of the path would be, is refused
    def never(*_args, **_kwargs):
        raise AssertionError("analysed before the refusal")

    monkeypatch.setattr(capacity_module, "capacity", never)
    (tmp_path / "file").write_text("")
    result = analyze(str(whitepaper_256), "--report", str(tmp_path / "file" / "newdir" / "x.md"))
    assert result.exit_code == 2, result.output
    assert f"--report: '{tmp_path / 'file'}' is not a directory (fix: choose another path for the report)" in result.stderr
    assert (tmp_path / "file").read_text() == ""


def test_a_report_or_figure_over_a_device_or_fifo_is_refused(tmp_path):
    result = analyze(str(tmp_path / "no-build"), "--report", "/dev/null")
    assert result.exit_code == 2 and "--report: '/dev/null' exists and is not a regular file" in result.stderr
    os.mkfifo(tmp_path / "a-link-load.png")  # where a figure of a.md would go
    result = analyze(str(tmp_path / "no-build"), "--report", str(tmp_path / "a.md"))
    assert result.exit_code == 2 and f"--report: '{tmp_path / 'a-link-load.png'}' exists and is not a regular file" in result.stderr
    result = analyze(str(tmp_path / "no-build"), "--report", str(tmp_path))
    assert result.exit_code == 2 and "exists and is not a regular file" in result.stderr


def test_a_report_name_too_long_for_its_figures_is_refused(tmp_path):
    result = analyze(str(tmp_path / "no-build"), "--report", str(tmp_path / ("r" * 250 + ".md")))
    assert result.exit_code == 2 and "too long for the figures beside it" in result.stderr


# --- bom compare ------------------------------------------------------------------------------

BOM = "section,pid,description,quantity,length_m,basis,alternatives\nBackend network,N9K-C9364D-GX2A,Nexus,10,,one per switch,\n"


@pytest.fixture
def bom_build(tmp_path) -> Path:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "bom.csv").write_text(BOM)
    return tmp_path / "build"


def compare(build_dir: Path, reference: Path):
    return runner.invoke(app, ["bom", "compare", str(build_dir), str(reference)])


def test_dev_zero_as_the_reference_is_refused_in_little_memory(bom_build):
    result, peak = peak_of("bom", "compare", str(bom_build), "/dev/zero")
    assert result.returncode == 2, result.stderr
    assert "REFERENCE: '/dev/zero' is not a regular file: it is a character device (fix: name a regular file)" in result.stderr
    assert "Traceback" not in result.stderr
    assert peak < PEAK_MIB, f"{peak:.0f} MiB"


def test_a_fifo_as_the_reference_is_refused_without_waiting_for_a_writer(bom_build, tmp_path):
    fifo = tmp_path / "quote.csv"
    os.mkfifo(fifo)
    found = []
    reader = threading.Thread(target=lambda: found.append(compare(bom_build, fifo)), daemon=True)
    reader.start()
    reader.join(timeout=30)  # a hang, not a duration: opening a FIFO must not block
    assert found, "bom compare blocked on the FIFO"
    assert found[0].exit_code == 2 and "is not a regular file: it is a FIFO or pipe" in found[0].stderr


def test_a_directory_as_the_reference_is_refused(bom_build, tmp_path):
    result = compare(bom_build, tmp_path)
    assert result.exit_code == 2 and f"REFERENCE: '{tmp_path}' is not a regular file: it is a directory" in result.stderr


def test_a_bom_csv_that_is_a_link_to_dev_zero_is_refused(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "bom.csv").symlink_to("/dev/zero")
    reference = tmp_path / "reference.csv"
    reference.write_text("pid,quantity\nX,1\n")
    result = compare(tmp_path / "build", reference)
    assert result.exit_code == 2
    assert "bom.csv: the bill of materials is a device, FIFO or socket, not a regular file" in result.stderr


def test_a_reference_that_is_not_utf8_is_refused(bom_build, tmp_path):
    reference = tmp_path / "quote.csv"
    reference.write_bytes("pid,quantity\nCâble,1\n".encode("latin-1"))
    result = compare(bom_build, reference)
    assert result.exit_code == 2 and f"{reference}: the reference is not UTF-8 text (invalid continuation byte at byte 14)" in result.stderr


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "quote.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_more_rows_than_any_bill_of_materials_is_refused(bom_build, tmp_path):
    reference = write(tmp_path, "pid,quantity\n" + "".join(f"P{i},1\n" for i in range(bom_compare.MAX_ROWS + 1)))
    result = compare(bom_build, reference)
    assert result.exit_code == 2
    assert f"{reference}:{bom_compare.MAX_ROWS + 2}: the reference has more than 10,000 rows" in result.stderr


@pytest.mark.parametrize(("text", "message"), [
    ("pid,quantity\n" + "X" * 1_001 + ",1\n", ":2: a cell of 1,001 characters; the limit is 1,000"),
    ("pid,quantity\nX,1" + ",a" * 64 + "\n", ":2: 66 columns; the limit is 64"),
    ("pid,quantity\nX,1," + "a" * 10_001 + "\n", ":2: line of 10,006 characters; the limit is 10,000"),
    ('pid,quantity,description\nX,1,"' + "line\n" * 60 + '"\n', ":2: a quoted field runs over more than 50 lines"),
])  # fmt: skip
def test_lines_records_columns_and_cells_are_bounded(bom_build, tmp_path, text, message):
    reference = write(tmp_path, text)
    result = compare(bom_build, reference)
    assert result.exit_code == 2, result.output
    assert f"{reference}{message}" in result.stderr


def test_control_and_format_characters_in_shown_cells_are_refused_and_escaped(bom_build, tmp_path):
    reference = write(tmp_path, 'section,pid,quantity,description\nBackend\u202enetwork,N9K\x1b[2J,10,fine\nX,"two\nlines",1,ok\nY,Z,3,a\tb\n')
    result = compare(bom_build, reference)
    assert result.exit_code == 2, result.output
    assert f"{reference}:2: section: 'Backend\\u202enetwork' holds a control or format character (fix: keep one line of plain text)" in result.stderr
    assert f"{reference}:2: pid: 'N9K\\x1b[2J' holds a control or format character" in result.stderr
    assert f"{reference}:3: pid: 'two\\nlines' holds a control or format character" in result.stderr
    assert ":5:" not in result.stderr  # a tab in the description is not shown anywhere: not refused
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr


def test_a_flood_of_bad_rows_shows_the_first_problems_and_counts_the_rest(bom_build, tmp_path):
    reference = write(tmp_path, "pid,quantity\n" + "X,lots\n" * 5_000)
    with pytest.raises(bom_compare.BomCompareError) as caught:
        compare_bom(bom_build, reference)
    problems = caught.value.problems
    assert len(problems) == bom_compare.MAX_PROBLEMS
    assert problems[-1].message == "and 4,981 more problems"


def test_a_large_hostile_reference_is_refused_in_little_memory(bom_build, tmp_path):
    # just under the size limit, every line as wide and as many columns as allowed, and every row bad
    line = ",".join(["1"] * 64) + "\n"
    reference = write(tmp_path, "pid,quantity\n" + line * (bom_compare.MAX_ROWS - 1))
    assert reference.stat().st_size < bom_compare.MAX_CSV_BYTES
    result, peak = peak_of("bom", "compare", str(bom_build), str(reference))
    assert result.returncode == 2 and "more problems" in result.stderr
    assert peak < PEAK_MIB, f"{peak:.0f} MiB"
