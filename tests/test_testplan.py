"""`fabricgen testplan` and `testplan check` (issue 20 items 3-4).

Coverage is computed here from cabling.csv and the routing on its own (leaf-to-leaf equal-cost
paths through every spine both leaves reach), not with the planner's code. Results files under
tests/data/testplan/ are written by hand in the tools' documented formats (perftest
src/perftest_parameters.h RESULT_FMT_G/REPORT_FMT; nccl-tests/rccl-tests src/common.cu)."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from fabricgen.testplan import TestplanError as PlanError
from fabricgen.testplan import write_plan

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "testplan"
runner = CliRunner()


@pytest.fixture(scope="module")
def built_256(shipped_build) -> Path:
    return shipped_build("cisco-256-gpu")


@pytest.fixture(scope="module")
def plan_256(built_256, tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("p") / "plan"
    write_plan(built_256, destination)
    return destination


@pytest.fixture(scope="module")
def plan_mi300x(shipped_build, tmp_path_factory) -> Path:
    """Seed 003's cluster: 4 AS-8125GS-TNMR2 (AMD MI300X) on 2 leaves with 8:1 uplinks."""
    destination = tmp_path_factory.mktemp("p") / "plan-mi300x"
    write_plan(shipped_build("seed-003-mi300x"), destination)
    return destination


def _independent_coverage(build_dir: Path, pairs: list[dict]) -> tuple[set[str], set[str]]:
    """(every backend leaf-spine cable id, those on a routed path of some pair) from cabling.csv
    alone: a pair between leaves A != B uses every cable from A or B to a spine both reach."""
    rows = list(csv.DictReader((build_dir / "cabling.csv").open()))
    leaf_of = {(r["a_device"], r["a_port"]): r["b_device"] for r in rows if r["network"] == "backend" and r["kind"] == "host"}
    cables: dict[tuple[str, str], set[str]] = defaultdict(set)
    spines_of: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r["network"] == "backend" and r["kind"] == "fabric" and "leaf" in r["a_device"] + r["b_device"]:
            leaf, spine = (r["a_device"], r["b_device"]) if "leaf" in r["a_device"] else (r["b_device"], r["a_device"])
            cables[leaf, spine].add(r["cable_id"])
            spines_of[leaf].add(spine)
    crossed = set()
    for pair in pairs:
        a = leaf_of[pair["server"]["node"], pair["server"]["port"]]
        b = leaf_of[pair["client"]["node"], pair["client"]["port"]]
        if a != b:
            for spine in spines_of[a] & spines_of[b]:
                crossed |= cables[a, spine] | cables[b, spine]
    return set().union(*cables.values()), crossed


def test_every_leaf_spine_link_of_the_256_gpu_backend_is_on_a_pairs_path(built_256, plan_256):
    plan = json.loads((plan_256 / "testplan.json").read_text())
    every, crossed = _independent_coverage(built_256, plan["pairs"])
    assert len(every) == 256  # 8 leaves x 32 uplinks
    assert every - crossed == set(), f"leaf-spine cables no pair crosses: {sorted(every - crossed)[:10]}"
    fabric = [pair for pair in plan["pairs"] if pair["kind"] == "fabric"]
    assert len(fabric) <= 8  # linear in leaves: half the leaves here, each pair both ways
    for pair in fabric:
        assert pair["server"]["node"] != pair["client"]["node"]
        assert pair["qps"] >= 32, "at least one QP per uplink of the leaf (ECMP hashes per QP)"


def test_qos_of_the_plan_follows_the_fabric(plan_256, write_intent, tmp_path):
    plan = json.loads((plan_256 / "testplan.json").read_text())
    assert plan["qos"] == {"lossless": True, "roce_dscp": 24, "traffic_class": 98, "lossless_priority": 3, "cnp_dscp": 48, "host_mtu": 9000, "roce_mtu": 4096}
    rank_env = (plan_256 / "rank-env.sh").read_text()
    assert "NCCL_IB_TC=98\n" in rank_env and "NCCL_IB_SL=3\n" in rank_env
    script = next((plan_256 / "nodes").iterdir()).read_text()
    assert "TCLASS=98\n" in script and "SL=3\n" in script and "ROCE_MTU=4096\n" in script

    # the intent's RoCE DSCP and lossless priority change: so do the plan's traffic class and SL
    text = (ROOT / "intents" / "cisco-256-gpu.yaml").read_text()
    changed = text.replace("  routing: ebgp\n", "  routing: ebgp\n  qos: {roce_dscp: [26], lossless_priority: 4}\n", 1)
    assert changed != text
    intent = write_intent(changed, name="cisco-256-gpu")
    built = build(intent, tmp_path / "b26")[1]
    plan26 = write_plan(built, tmp_path / "p26")
    assert (plan26.qos.roce_dscp, plan26.qos.traffic_class, plan26.qos.lossless_priority) == (26, 106, 4)
    rank_env = (tmp_path / "p26" / "rank-env.sh").read_text()
    assert "NCCL_IB_TC=106\n" in rank_env and "NCCL_IB_SL=4\n" in rank_env


def test_scripts_are_valid_bash_and_dry_run(plan_256):
    for script in [*(plan_256 / "nodes").iterdir(), *(plan_256 / "runs").iterdir(), plan_256 / "rank-env.sh"]:
        subprocess.run(["bash", "-n", str(script)], check=True)
    node = min((plan_256 / "nodes").iterdir())
    done = subprocess.run(["bash", str(node)], env={"DRY_RUN": "1", "ROUND": "1", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True)
    assert "ib_write_bw" in done.stdout and "--tclass 98" in done.stdout and "--report_gbits" in done.stdout and "-m 4096" in done.stdout
    missing = subprocess.run(["bash", str(node)], env={"DRY_RUN": "1", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=False)
    assert missing.returncode == 1 and "ROUND" in missing.stderr


def test_bad_input_is_exit_2_and_writes_nothing(built_256, tmp_path):
    assert runner.invoke(app, ["testplan", str(tmp_path / "none"), "-o", str(tmp_path / "out")]).exit_code == 2
    tampered = tmp_path / "tampered"
    shutil.copytree(built_256, tampered)
    with (tampered / "cabling.csv").open("a") as handle:
        handle.write("BE-99999,backend,host,gpu0001,nic9,,,,be-su01-leaf1,Ethernet1/64,,,,,,400G\n")
    result = runner.invoke(app, ["testplan", str(tampered), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "cabling.csv" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tiers", ["two", 7, True, [2]])
def test_a_backend_tiers_that_is_not_1_to_3_is_exit_2_naming_the_field(built_256, tmp_path, tiers):
    # a build whose manifest matches its files, but whose topology.json says something no build writes
    crafted = tmp_path / "crafted"
    shutil.copytree(built_256, crafted)
    topology = json.loads((crafted / "topology.json").read_text())
    topology["graph"]["backend"]["tiers"] = tiers
    data = json.dumps(topology).encode()
    (crafted / "topology.json").write_bytes(data)
    manifest = json.loads((crafted / "manifest.json").read_text())
    manifest["files"]["topology.json"] = hashlib.sha256(data).hexdigest()
    (crafted / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(app, ["testplan", str(crafted), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "topology.json: graph.backend.tiers: tiers is" in result.output and "expected 1, 2 or 3" in result.output
    assert not (tmp_path / "out").exists()


def test_a_build_without_backend_gpus_is_refused(built_256, monkeypatch):
    from fabricgen.testplan.plan import build_plan, open_build

    opened = open_build(built_256)
    rows = opened.cabling()
    monkeypatch.setattr(opened, "cabling", lambda: [r for r in rows if r.network != "backend"])
    with pytest.raises(PlanError, match="no GPU nodes cabled to a backend"):
        build_plan(opened, 0.9, 0.7)


@pytest.mark.parametrize("intent", ["tests/lab/three-tiers.yaml", "intents/rail-only-1024.yaml"])
def test_three_tier_and_rail_only_builds_plan(intent, tmp_path):
    built = build(ROOT / intent, tmp_path / "b")[1]
    plan = write_plan(built, tmp_path / "p")
    assert plan.pairs and plan.runs and not plan.uncovered
    if "rail-only" in intent:
        assert plan.spines == 0 and any("rail-only" in note for note in plan.notes)
        assert all(p.server.leaf == p.client.leaf and p.server.rail == p.client.rail for p in plan.pairs)
    else:
        # every fabric link (leaf-spine and spine-core) lies on some pair's routed path
        fabric = {row["cable_id"] for row in csv.DictReader((built / "cabling.csv").open()) if row["network"] == "backend" and row["kind"] == "fabric"}
        assert fabric and fabric <= {c for p in plan.pairs for c in p.links}


def _results(tmp_path: Path, names: dict[str, str]) -> list[Path]:
    (tmp_path / "results").mkdir(exist_ok=True)
    paths = []
    for source, target in names.items():
        paths.append(tmp_path / "results" / target)
        shutil.copy(DATA / source, paths[-1])
    return paths


def test_check_reports_busbw_as_printed_and_names_short_runs(plan_256, plan_mi300x, tmp_path):
    files = _results(tmp_path, {"nccl-all_reduce-cluster.txt": "nccl-all_reduce-cluster.txt", "pair0001.txt": "pair0001.txt"})
    report = tmp_path / "report.md"
    result = runner.invoke(app, ["testplan", "check", str(plan_256), *map(str, files), "--json-report", str(tmp_path / "r.json"), "--report", str(report)])
    assert result.exit_code == 0, result.output
    found = json.loads((tmp_path / "r.json").read_text())
    runs = {r["run"]: r for r in found["runs"]}
    assert (runs["nccl-all_reduce-cluster"]["peak_busbw"], runs["nccl-all_reduce-cluster"]["avg_busbw"]) == ("390.20", "386.858")
    assert runs["nccl-all_reduce-cluster"]["passed"]
    pair = found["pairs"][0]
    assert (pair["pair"], pair["peak"], pair["average"], pair["passed"]) == ("pair0001", "391.24", "391.02", True)

    # the AMD cluster's plan runs RCCL: its run (#-prefixed rows) is below 360 GB/s
    files = _results(tmp_path, {"rccl-all_reduce-cluster.txt": "rccl-all_reduce-cluster.txt"})
    result = runner.invoke(app, ["testplan", "check", str(plan_mi300x), *map(str, files), "--json-report", str(tmp_path / "r.json"), "--report", str(report)])
    assert result.exit_code == 1, result.output
    runs = {r["run"]: r for r in json.loads((tmp_path / "r.json").read_text())["runs"]}
    assert (runs["rccl-all_reduce-cluster"]["peak_busbw"], runs["rccl-all_reduce-cluster"]["avg_busbw"]) == ("239.01", "237.681")
    assert not runs["rccl-all_reduce-cluster"]["passed"]
    assert "gpu0001" in runs["rccl-all_reduce-cluster"]["nodes"]
    markdown = report.read_text()
    assert "| rccl-all_reduce-cluster | gpu0001, gpu0002" in markdown and "SHORT" in markdown and "237.681" in markdown


def test_a_short_pair_is_named_by_nodes_rails_and_cables(plan_256, tmp_path):
    files = _results(tmp_path, {"pair0002-mbs.txt": "pair0002.txt", "pair0001.txt": "pair0001.txt"})
    result = runner.invoke(app, ["testplan", "check", str(plan_256), *map(str, files), "--json-report", str(tmp_path / "r.json")])
    assert result.exit_code == 1
    plan = json.loads((plan_256 / "testplan.json").read_text())
    p2 = next(p for p in plan["pairs"] if p["id"] == "pair0002")
    short = next(p for p in json.loads((tmp_path / "r.json").read_text())["pairs"] if not p["passed"])
    assert short["pair"] == "pair0002" and short["unit"] == "MB/sec" and short["average"] == "29811.55"
    assert 249 < short["average_gbps"] < 251  # 29811.55 x 2^20 bytes x 8 bits
    assert p2["server"]["node"] in short["server"] and f"rail {p2['server']['rail']}" in short["server"]
    assert p2["server"]["cable"] in short["cables"] and set(p2["links"]) == set(short["links"])
    assert p2["server"]["node"] in result.output and p2["server"]["cable"] in result.output


def test_results_are_matched_by_content_when_misnamed(plan_256, tmp_path):
    files = _results(tmp_path, {"pair0001.txt": "ib_write_bw-output.log"})
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(files[0]), "--json-report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r.json").read_text())["pairs"][0]["pair"] == "pair0001"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n 1048576 100 3.9e2 391.0 0.04\n", ":2: expected a perftest row"),
        (
            (
                "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                "#        (B)    (elements)\n  1024  256  float  sum  -1  10.0  nan  1.0  0  10.0  1.0  1.0  0\n"
            ),
            ":3: expected a number in column algbw",
        ),
        ("hello \x1b[31mred\n", "neither perftest output"),
    ],
)
def test_unparseable_results_are_exit_2_naming_file_and_line(plan_256, tmp_path, content, expected):
    path = tmp_path / "pair0001.txt"
    path.write_text(content)
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(path)])
    assert result.exit_code == 2 and expected in result.output and "\x1b" not in result.output


def test_oversized_results_file_is_refused(plan_256, tmp_path):
    path = tmp_path / "pair0001.txt"
    path.write_bytes(b"#" * ((8 << 20) + 1))
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(path)])
    assert result.exit_code == 2 and "larger than 8 MiB" in result.output


def test_a_tampered_plan_is_refused(plan_256, tmp_path):
    copy = tmp_path / "plan"
    shutil.copytree(plan_256, copy)
    document = json.loads((copy / "testplan.json").read_text())
    document["pairs"][0]["threshold_gbps"] = 1.0
    (copy / "testplan.json").write_text(json.dumps(document))
    result = runner.invoke(app, ["testplan", "check", str(copy), str(DATA / "pair0001.txt")])
    assert result.exit_code == 2 and "testplan.json" in result.output


def test_results_the_scripts_write_inside_the_plan_are_checked_and_other_files_refused(plan_256, tmp_path):
    """The scripts write to PLAN_DIR/results by default: check reads them there, while any other
    file in the plan directory still makes it a tampered plan."""
    copy = tmp_path / "plan"
    shutil.copytree(plan_256, copy)
    (copy / "results").mkdir()
    shutil.copy(DATA / "pair0001.txt", copy / "results" / "pair0001.txt")
    result = runner.invoke(app, ["testplan", "check", str(copy), str(copy / "results" / "pair0001.txt")])
    assert result.exit_code == 0, result.output
    (copy / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["testplan", "check", str(copy), str(copy / "results" / "pair0001.txt")])
    assert result.exit_code == 2 and "notes.txt" in result.output


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_json_prints_the_plan_that_testplan_json_holds(built_256, tmp_path):
    result = CliRunner().invoke(app, ["testplan", str(built_256), "-o", str(tmp_path / "plan"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads((tmp_path / "plan" / "testplan.json").read_text())


# --- results are hostile input: regular files, bounded, values that can be (issue 30, item 2) ---


def _finishes_without_a_writer(action, release) -> object:
    """action() in a thread; its result when it finishes although nothing is ever written to the
    FIFO or pipe it is given. A reader blocked in open() or read() fails the test, after
    `release()` lets it go (a writer opened and closed, the held writer closed), so the test
    itself never hangs. The wait bounds a failure only: a run that refuses the file ends at once
    and sets the event."""
    import threading

    done = threading.Event()
    results: list[object] = []

    def run() -> None:
        try:
            results.append(action())
        finally:
            done.set()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    if not done.wait(120):
        release()
        worker.join()
        pytest.fail("the results file was opened and waited on")
    return results[0]


def test_a_fifo_as_results_file_is_refused_at_once(plan_256, tmp_path):
    import os

    from fabricgen.testplan.results import ResultProblem, read_result
    from tests.cli_runner import fabricgen

    fifo = tmp_path / "pair0001.txt"
    os.mkfifo(fifo)

    def release() -> None:  # a reader stuck in open() gets its writer; its read() then sees the end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    result = _finishes_without_a_writer(lambda: fabricgen("testplan", "check", plan_256, fifo), release)
    assert result.returncode == 2 and "RESULTS: " in result.stderr and "FIFO" in result.stderr, result.stderr

    def read() -> str:  # the reader behind the command line refuses it on the open descriptor too
        try:
            read_result(fifo)
        except ResultProblem as exc:
            return exc.problem.message
        return "read"

    assert "FIFO" in _finishes_without_a_writer(read, release)


def test_a_pipe_another_process_holds_open_is_refused_at_once(plan_256, tmp_path):
    """`testplan check PLAN <(tool)`: /dev/fd/N of a pipe whose writer never writes or closes."""
    import os

    from tests.cli_runner import fabricgen

    reader, writer = os.pipe()
    held = [writer]

    def release() -> None:  # the writer closed: a read() waiting on the pipe sees the end
        os.close(held.pop())

    try:
        path = Path(f"/proc/self/fd/{reader}")
        result = _finishes_without_a_writer(lambda: fabricgen("testplan", "check", plan_256, path), release)
    finally:
        os.close(reader)
        for fd in held:
            os.close(fd)
    assert result.returncode == 2 and "not a regular file" in result.stderr, result.stderr


def _perftest(tmp_path: Path, peak: str, average: str, unit: str = "Gb") -> Path:
    text = (DATA / "pair0001.txt").read_text().replace("391.24             391.02", f"{peak}             {average}")
    text = text.replace("BW peak[Gb/sec]    BW average[Gb/sec]", f"BW peak[{unit}/sec]    BW average[{unit}/sec]")
    path = tmp_path / "results" / "pair0001.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("peak", "average", "unit", "shown"),
    [
        pytest.param("999999999999.99", "999999999999.99", "Gb", "BW peak 999999999999.99 Gb/sec", id="10^12 Gb/s"),
        pytest.param("391.24", "400000.00", "Gb", "BW average 400000.00 Gb/sec", id="1000x the line rate"),
        pytest.param("400.01", "391.02", "Gb", "BW peak 400.01 Gb/sec", id="a peak just above the line rate"),
        pytest.param("47683715.82", "47683715.82", "MB", "(400,000.00 Gb/s)", id="1000x in MB/sec"),
    ],
)
def test_a_bandwidth_above_the_pairs_line_rate_is_refused_as_impossible(plan_256, tmp_path, peak, average, unit, shown):
    path = _perftest(tmp_path, peak, average, unit)
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(path), "--json-report", str(tmp_path / "r.json")])
    assert result.exit_code == 2, result.output
    line = next(number for number, text in enumerate(path.read_text().splitlines(), start=1) if text.startswith(" 1048576"))
    assert f"{path}:{line}: " in result.output and shown in result.output and "impossible" in result.output, result.output
    assert "400 Gb/s" in result.output and not (tmp_path / "r.json").exists()


def test_a_bandwidth_at_the_line_rate_is_judged(plan_256, tmp_path):
    path = _perftest(tmp_path, "400.00", "399.99")
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(path)])
    assert result.exit_code == 0, result.output


def _nccl(tmp_path: Path, name: str, busbw: str, average: str = "386.858") -> Path:
    text = (DATA / "nccl-all_reduce-cluster.txt").read_text().replace("195.87  390.20", f"195.87  {busbw}").replace("386.858", average)
    path = tmp_path / "results" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_a_bus_bandwidth_above_what_the_nics_carry_is_refused_as_impossible(plan_256, tmp_path):
    plan = json.loads((plan_256 / "testplan.json").read_text())
    run = next(r for r in plan["runs"] if r["id"] == "nccl-all_reduce-cluster")
    nodes, ranks = len(run["nodes"]), run["ranks"]
    # with every reduction off the network, each node still sends 2(N-1)/N of the data: the
    # ring bound times N(n-1)/(n(N-1)), which a bandwidth-optimal algorithm (NVLS tree) approaches
    limit = run["bound_busbw"] * nodes * (ranks - 1) / (ranks * (nodes - 1))
    assert run["bound_busbw"] < limit < run["bound_busbw"] * 1.05
    above_the_ring = _nccl(tmp_path, "nccl-all_reduce-cluster.txt", f"{(run['bound_busbw'] + limit) / 2:.2f}")
    result = runner.invoke(app, ["testplan", "check", str(plan_256), str(above_the_ring)])
    assert result.exit_code == 0, result.output  # above the ring estimate, below what the NICs carry: judged
    for busbw, average, shown in (
        (f"{run['bound_busbw'] * 1000:.2f}", "386.858", f"busbw {run['bound_busbw'] * 1000:.2f} GB/s"),
        ("390.20", "1e+06", "Avg bus bandwidth 1e+06 GB/s"),
    ):
        path = _nccl(tmp_path, "nccl-all_reduce-cluster.txt", busbw, average)
        result = runner.invoke(app, ["testplan", "check", str(plan_256), str(path)])
        assert result.exit_code == 2, result.output
        assert f"{path}:" in result.output and shown in result.output and "impossible" in result.output, result.output


def test_a_report_is_never_written_into_the_plan_or_over_its_inputs(plan_256, tmp_path):
    from tests.cli_runner import fabricgen

    copy = tmp_path / "plan"
    shutil.copytree(plan_256, copy)
    (copy / "results").mkdir()
    result_file = copy / "results" / "pair0001.txt"
    shutil.copy(DATA / "pair0001.txt", result_file)
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    for option, target in (
        ("--report", copy / "report.md"),
        ("--report", copy / "testplan.md"),
        ("--json-report", copy / "testplan.json"),
        ("--report", copy / "results" / "report.md"),
        ("--report", result_file),
    ):
        result = fabricgen("testplan", "check", copy, result_file, option, target)
        assert result.returncode == 2, result.stderr
        assert f"{option}: " in result.stderr and "inside the test plan directory" in result.stderr, result.stderr
    outside = tmp_path / "mine.txt"
    shutil.copy(DATA / "pair0001.txt", outside)
    result = fabricgen("testplan", "check", copy, outside, "--report", outside)
    assert result.returncode == 2 and f"  {outside}: --report: is one of the results files it checks" in result.stderr, (
        result.stderr
    )  # located: the file and its option
    result = fabricgen("testplan", "check", copy, result_file, "--report", tmp_path / "r", "--json-report", tmp_path / "r")
    assert result.returncode == 2 and f"  {tmp_path / 'r'}: --report: is the file --json-report names too" in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()
    assert outside.read_bytes() == (DATA / "pair0001.txt").read_bytes()
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
    assert fabricgen("testplan", "check", copy, result_file).returncode == 0  # the plan still verifies
