"""`fabricgen testplan switches` and its `testplan check`: the RFC 2544 line rates a switch
acceptance plan lists (computed here independently from the 20-byte wire overhead), seed 002's
published 100G figures against the plan's, the RFC 2889 full-mesh groups, the TRex files, and the
check of TRex results: a good trial passes, a short one exits 1 naming what, a malformed one exits 2.

One plan of intents/cisco-256-gpu.yaml (the shared `shipped_build`) serves the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.testplan.switches.plan import mesh_groups

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "testplan-switches"
DURATION = 300  # seconds per trial, as seed 002 ran them
MAX_LATENCY_US = 10.0


def _line_rate(speed_gbps: int, frame_bytes: int) -> Fraction:
    """Frames/s at line rate: each frame also takes 8 bytes of preamble and SFD and a 12-byte gap."""
    return Fraction(speed_gbps * 10**9, (frame_bytes + 8 + 12) * 8)


@pytest.fixture(scope="module")
def plan_dir(shipped_build, tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("switch-plan") / "plan"
    result = runner.invoke(
        app,
        [
            "testplan",
            "switches",
            str(shipped_build("cisco-256-gpu")),
            "-o",
            str(destination),
            "--duration",
            str(DURATION),
            "--max-latency-us",
            str(MAX_LATENCY_US),
        ],
    )
    assert result.exit_code == 0, result.output
    return destination


@pytest.fixture(scope="module")
def plan(plan_dir) -> dict:
    return json.loads((plan_dir / "switch-plan.json").read_text())


def _rates(plan: dict, speed: int) -> dict[int, dict]:
    return {row["frame_bytes"]: row for row in next(s for s in plan["speeds"] if s["speed_gbps"] == speed)["rates"]}


def test_400g_line_rate_at_64_bytes_is_exact(plan, plan_dir):
    assert {"model": "N9K-C9364D-GX2A", "speed_gbps": 400} in [{"model": m["model"], "speed_gbps": m["speed_gbps"]} for m in plan["models"]]
    expected = _line_rate(400, 64)  # 400e9 / ((64 + 20) x 8) = 595,238,095.238...
    row = _rates(plan, 400)[64]
    numerator, denominator = map(int, row["line_fps_exact"].split("/"))
    assert Fraction(numerator, denominator) == expected
    assert row["line_fps"] == 595_238_095  # rounded down: never more than the wire carries
    assert Fraction(*map(int, row["throughput_fps_exact"].split("/"))) == expected * Fraction(99_999, 100_000)
    text = (plan_dir / "switch-plan.md").read_text()
    section = text.split("### 400G")[1]
    assert "| 64 | 595,238,095 5/21 | 595,238,095 | 595,232,142.9 |" in section  # 5/21 = 0.238095...
    assert "rounded down" in text and "judged exactly" in text
    for size in (64, 128, 256, 512, 1024, 1280, 1518, 9216):  # RFC 2544 section 9's sizes and jumbo
        assert Fraction(*map(int, _rates(plan, 400)[size]["line_fps_exact"].split("/"))) == _line_rate(400, size)


def _seed_rows() -> dict[str, list[tuple[int, int, str, str]]]:
    """Seed 002's throughput rows: table -> (frame bytes, frames/s over 128 ports, Tbit/s, % line rate) as printed."""
    tables: dict[str, list[tuple[int, int, str, str]]] = {}
    current = ""
    for line in (DATA / "seed-002-throughput.tsv").read_text().splitlines():
        if line.startswith("# Table"):
            current = line.split(":")[0][2:]
            continue
        if line.startswith("#"):
            continue
        size, frames, tbits, percent = line.split("\t")[:4]
        tables.setdefault(current, []).append((int(size.replace(",", "")), int(frames.replace(",", "")), tbits, percent))
    return tables


def test_100g_throughput_per_port_is_seed_002s_aggregate_over_128_ports(plan):
    rates = _rates(plan, 100)
    rows = _seed_rows()
    assert len(rows["Table 1"]) == 11 and len(rows["Table 4"]) == 1
    for size, aggregate, tbits, percent in rows["Table 1"] + rows["Table 4"]:
        line = _line_rate(100, size)
        required = Fraction(*map(int, rates[size]["throughput_fps_exact"].split("/")))
        per_port = Fraction(aggregate, 128)
        # the seed prints its rate as a share of line rate to 0.001 %: the plan's per-port figure
        # and the seed's aggregate / 128 agree to that precision ...
        assert abs(per_port - required) / line < Fraction(5, 10**6), size
        assert f"{float(per_port / line * 100):.3f}%" == percent == f"{float(required / line * 100):.3f}%"
        # ... and to the precision of its Tbit/s column (frame bits of all 128 ports)
        assert f"{float(required * 128 * size * 8 / 10**12):.3f}" == tbits, size


def _trial(plan: dict, switch: str, group: dict, size: int, load: str, sent: list[int], received: list[int] | None = None, latency: dict | None = None) -> dict:
    stats: dict = {str(port): {"opackets": count, "ipackets": (received or sent)[port], "tx_pps": 0.0, "rx_pps": 0.0} for port, count in enumerate(sent)}
    stats["total"] = {"opackets": sum(sent), "ipackets": sum(received or sent)}
    stats["latency"] = {"global": {"bad_hdr": 0, "old_flow": 0}}
    for port, figures in (latency or {}).items():
        stats["latency"][str(port)] = {
            "latency": {"average": figures[0], "total_max": figures[1], "total_min": 1.0, "jitter": figures[2]},
            "err_cntrs": {"dropped": 0},
        }
    header = {"fabric": plan["fabric"], "switch": switch, "group": group["id"], "frame_bytes": size, "load_percent": load, "duration_s": DURATION}
    return {"fabricgen_trial": {**header, "tester_ports": len(group["ports"])}, "stats": stats}


def _group_at(plan: dict, speed: int) -> tuple[str, dict]:
    return next((s["name"], g) for s in plan["switches"] for g in s["groups"] if g["speed_gbps"] == speed)


def _write(directory: Path, name: str, document: dict | str) -> Path:
    path = directory / name
    path.write_text(document if isinstance(document, str) else json.dumps(document, indent=1))
    return path


def test_seed_002s_own_results_pass_the_check(plan, plan_dir, tmp_path):
    """Seed 002's Tables 1 and 3 as TRex counters of a 100G group (every port sending its 128th
    of the aggregate for 300 s, every frame received): the plan accepts the published results,
    Table 3's too (0.05 ppm under 99.999 %, which the seed itself reports as 99.999 %)."""
    switch, group = _group_at(plan, 100)
    ports = len(group["ports"])
    files = []
    for table, rows in _seed_rows().items():
        if table == "Table 4":
            continue
        for size, aggregate, _, _ in rows:
            per_port = aggregate * DURATION // 128
            document = _trial(plan, switch, group, size, "99.999", [per_port] * ports, latency={0: (3.95, 6.41, 2.2)})
            files.append(_write(tmp_path, f"{table.replace(' ', '')}-{size}.json", document))
        result = runner.invoke(app, ["testplan", "check", str(plan_dir), *map(str, files[-len(rows) :]), "--json"])
        assert result.exit_code == 0, result.output
        outcome = json.loads(result.output)
        assert outcome["passed"] and len(outcome["trials"]) == len(rows)


def test_a_short_trial_exits_1_naming_switch_group_frame_size_and_figures(plan, plan_dir, tmp_path):
    switch, group = _group_at(plan, 400)
    ports = len(group["ports"])
    required = _line_rate(400, 64) * Fraction(99_999, 100_000) * DURATION
    full = int(required) + 1
    slow = [full] * ports
    slow[3] = int(required * Fraction(9_999, 10_000))  # port 3 offers 99.99 % of the criterion (99.989 % of line rate): under the tolerance
    ok = {0: (3.0, 5.0, 1.0)}  # average, maximum latency and jitter, µs: within the plan's 10 µs
    files = [
        _write(
            tmp_path,
            "good.json",
            _trial(plan, switch, group, 128, "99.999", [int(_line_rate(400, 128) * Fraction(99_999, 100_000) * DURATION) + 1] * ports, latency=ok),
        ),
        _write(tmp_path, "slow.json", _trial(plan, switch, group, 64, "99.999", slow)),
        _write(tmp_path, "lossy.json", _trial(plan, switch, group, 64, "90", [int(_line_rate(400, 64) * Fraction(9, 10) * DURATION) + 1] * ports)),
        _write(
            tmp_path,
            "late.json",
            _trial(plan, switch, group, 1518, "50", [int(_line_rate(400, 1518) / 2 * DURATION) + 1] * ports, latency={1: (4.0, 12.5, 3.0)}),
        ),
    ]
    lossy = json.loads(files[2].read_text())
    lossy["stats"]["5"]["ipackets"] -= 7
    files[2].write_text(json.dumps(lossy))
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), *map(str, files)])
    assert result.exit_code == 1, result.output
    text = result.output
    assert f"SHORT {switch} (N9K-C9364D-GX2A) group {group['id']}, 64-byte frames at 99.999 %" in text
    assert f"tester port 3 ({group['ports'][3]}) offered" in text and "595,232,142.9" in text and "(99.9890 % offered)" in text
    assert f"SHORT {switch} (N9K-C9364D-GX2A) group {group['id']}, 64-byte frames at 90 %: lost 7 of" in text
    assert "1518-byte frames at 50 %: maximum latency 12.50 µs; at most 10 µs required" in text
    assert "128-byte" not in text.split("| switch |")[0]  # the good trial is not among the short ones
    report = json.loads(runner.invoke(app, ["testplan", "check", str(plan_dir), *map(str, files), "--json"]).output)
    assert [t["passed"] for t in report["trials"]] == [True, False, False, False]


def test_frames_the_switch_adds_are_short_too(plan, plan_dir, tmp_path):
    switch, group = _group_at(plan, 400)
    sent = [int(_line_rate(400, 256) * Fraction(99_999, 100_000) * DURATION) + 1] * len(group["ports"])
    received = list(sent)
    received[0] += 12  # LLDP and the like: as many lost frames would hide behind them
    path = _write(tmp_path, "extra.json", _trial(plan, switch, group, 256, "99.999", sent, received))
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(path)])
    assert result.exit_code == 1 and "received 12 frames more than the" in result.output


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: '{"fabricgen_trial": {\n  "switch": "x",\n  oops\n}', ":3: not JSON: Expecting property name enclosed in double quotes"),
        (lambda d: json.dumps(d).replace('"ipackets": 1', '"ipackets": NaN', 1), "NaN is not a number JSON allows"),
        (lambda d: {**d, "stats": {k: v for k, v in d["stats"].items() if k != "1"}}, "stats.1: no counters for tester port 1"),
        (lambda d: {**d, "stats": {**d["stats"], "2": {"opackets": "many", "ipackets": 1}}}, "stats.2.opackets: Input should be a valid integer"),
        (lambda d: {**d, "fabricgen_trial": {**d["fabricgen_trial"], "switch": "leaf99"}}, "fabricgen_trial: switch leaf99 is not in this plan"),
        (
            lambda d: {**d, "fabricgen_trial": {**d["fabricgen_trial"], "frame_bytes": 63}},
            "fabricgen_trial.frame_bytes: Input should be greater than or equal to 64",
        ),
        (
            lambda d: {**d, "stats": {**d["stats"], "0": {"opackets": 10**13, "ipackets": 10**13}}},
            "tester port 0 sent 10,000,000,000,000 frames in 300 s: more than 400G carries",
        ),
    ],
)
def test_a_malformed_results_file_exits_2_naming_file_and_place(plan, plan_dir, tmp_path, edit, expected):
    switch, group = _group_at(plan, 400)
    good = _trial(plan, switch, group, 512, "10", [10_000_001] * len(group["ports"]))
    path = _write(tmp_path, "bad.json", edit(good))
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(path)])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and expected in result.output
    assert "Traceback" not in result.output


def test_the_same_trial_twice_is_exit_2(plan, plan_dir, tmp_path):
    switch, group = _group_at(plan, 400)
    document = _trial(plan, switch, group, 512, "10", [10_000_001] * len(group["ports"]))
    first, second = _write(tmp_path, "a.json", document), _write(tmp_path, "b.json", document)
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(first), str(second)])
    assert result.exit_code == 2 and f"{second}: the same trial as {first}" in result.output


def test_a_fifo_is_refused_at_once(plan_dir, tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(fifo)])
    assert result.exit_code == 2 and "not a regular file" in result.output


def test_groups_hold_every_data_port_once_and_no_management_port(plan):
    by_name = {s["name"]: s for s in plan["switches"]}
    # the whitepaper's backend leaf: 32 GPU NIC ports and 32 uplinks, all 400G, one group of 64
    leaf = by_name["be-su01-leaf1"]
    assert [(g["id"], len(g["ports"])) for g in leaf["groups"]] == [("400g-1", 64)]
    for switch in plan["switches"]:
        ports = [p for g in switch["groups"] for p in g["ports"]]
        assert len(ports) == len(set(ports)), switch["name"]
        assert not any(p.startswith("mgmt") for p in ports), switch["name"]


def test_mesh_groups_split_evenly_within_the_tester_size():
    ports = [f"Ethernet1/{i}" for i in range(1, 65)]
    groups = mesh_groups(ports, 400, 24)
    assert [len(g.ports) for g in groups] == [22, 21, 21]
    assert [p for g in groups for p in g.ports] == ports
    assert [g.id for g in groups] == ["400g-1", "400g-2", "400g-3"]


def test_trex_files_are_what_trex_loads(plan, plan_dir):
    for path in sorted((plan_dir / "trex").glob("trex_cfg-*ports.yaml")):
        (config,) = yaml.safe_load(path.read_text())
        ports = int(path.name.split("-")[1].removesuffix("ports.yaml"))
        assert config["version"] == 2 and config["port_limit"] == len(config["interfaces"]) == len(config["port_info"]), path.name
        assert config["port_limit"] % 2 == 0 and config["port_limit"] - ports in (0, 1)  # TRex pairs its ports: an odd group gets a dummy
        assert config["port_info"][0] == {"ip": "198.18.0.2", "default_gw": "198.18.0.1"}
    for name in ("fullmesh.py", "run_trials.py"):
        compile((plan_dir / "trex" / name).read_text(), name, "exec")


def test_tester_interfaces_are_checked(shipped_build, tmp_path):
    result = runner.invoke(
        app, ["testplan", "switches", str(shipped_build("cisco-256-gpu")), "-o", str(tmp_path / "p"), "--tester-interfaces", "03:00.0,$(reboot)"]
    )
    assert result.exit_code == 2 and "entry 2 is not a PCI address" in result.output and "reboot" not in result.output
    assert not (tmp_path / "p").exists()


def test_a_gpu_plan_is_not_replaced_by_a_switch_plan(plan_dir, shipped_build):
    result = runner.invoke(app, ["testplan", str(shipped_build("cisco-256-gpu")), "-o", str(plan_dir)])
    assert result.exit_code == 2 and "switch-acceptance test plan" in result.output


def test_what_run_trials_writes_is_what_check_reads(plan, plan_dir, tmp_path):
    """The plan's runner against a stand-in of TRex's client (tests/data/testplan-switches/
    trex_stub): one file per frame size and load, named as the checklist says, that the check
    accepts as the group's trials."""
    switch, group = _group_at(plan, 100)
    results = tmp_path / "results"
    environment = {**os.environ, "PYTHONPATH": str(DATA / "trex_stub")}
    command = [sys.executable, str(plan_dir / "trex" / "run_trials.py"), "--switch", switch, "--group", group["id"], "--results", str(results)]
    done = subprocess.run([*command, "--sizes", "64,9216", "--loads", "10,99.999"], env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    files = sorted((results / switch / group["id"]).iterdir())
    assert [f.name for f in files] == ["64B-10.json", "64B-99.999.json", "9216B-10.json", "9216B-99.999.json"]
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), *map(str, files), "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["trials"]) == 4
    refused = subprocess.run([*command, "--sizes", "65"], env=environment, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "not in the plan: 65" in refused.stderr
