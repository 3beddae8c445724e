"""`fabricgen testplan`: every GPU NIC and cable one by one, the plan's numbers (issue 33, part 2).

What the plan must cover is computed here from cabling.csv with the csv module alone (which NIC
meets which leaf, which leaf meets which spine), never with the planner's code. Results files
under tests/data/testplan/ are written by hand in the tools' formats, except
seed003-rccl-all_reduce-table.txt: Table 1 of seed 003 (Supermicro, "Reduce Time to Solution
Using Supermicro Switches for AI Training", /work/shared/seeds/003_b2680f710a597d55.txt lines
86-124), the RCCL all-reduce run as the paper prints it: tab-separated, every data row behind
`#`, the column header split over two lines."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from fabricgen.testplan import write_plan

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "testplan"
runner = CliRunner()


def _plan(build_dir: Path, destination: Path) -> dict:
    write_plan(build_dir, destination)
    return json.loads((destination / "testplan.json").read_text())


def _backend(build_dir: Path) -> tuple[dict[tuple[str, str], tuple[str, str]], dict[tuple[str, str], set[str]]]:
    """From cabling.csv alone: GPU NIC (node, port) -> (its cable id, its leaf), and (leaf,
    spine) -> the cable ids between them."""
    nics: dict[tuple[str, str], tuple[str, str]] = {}
    uplinks: dict[tuple[str, str], set[str]] = defaultdict(set)
    with (build_dir / "cabling.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["network"] != "backend":
                continue
            if row["kind"] == "host":
                assert row["a_device"].startswith("gpu"), row  # the node's end comes first
                nics[row["a_device"], row["a_port"]] = (row["cable_id"], row["b_device"])
            elif row["kind"] == "fabric":
                leaf, spine = sorted((row["a_device"], row["b_device"]), key=lambda d: "spine" in d)
                uplinks[leaf, spine].add(row["cable_id"])
    return nics, uplinks


def _check_every_nic(plan: dict, nics: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Every GPU NIC (and so its host cable) sends in some pair and receives in some pair, the
    plan's cable and leaf for it are cabling.csv's, and no NIC is in two pairs of one round."""
    sends, receives = set(), set()
    in_round: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for pair in plan["pairs"]:
        for role, end in (("server", pair["server"]), ("client", pair["client"])):
            nic = (end["node"], end["port"])
            assert nic in nics, f"{pair['id']}: {nic} is no GPU NIC of cabling.csv"
            assert (end["cable"], end["leaf"]) == nics[nic], f"{pair['id']} {role}: {nic} is cabled as {nics[nic]}"
            assert nic not in in_round[pair["round"]], f"{nic} is in two pairs of round {pair['round']}"
            in_round[pair["round"]].add(nic)
            (receives if role == "server" else sends).add(nic)  # ib_write_bw writes from the client to the server
        assert pair["server"]["node"] != pair["client"]["node"], pair["id"]
    assert set(nics) - sends == set(), f"NICs that never send: {sorted(set(nics) - sends)[:8]}"
    assert set(nics) - receives == set(), f"NICs that never receive: {sorted(set(nics) - receives)[:8]}"
    host_cables = {cable for cable, _ in nics.values()}
    assert {pair[end]["cable"] for pair in plan["pairs"] for end in ("server", "client")} == host_cables


def test_every_gpu_nic_cable_and_fabric_link_both_ways_on_the_256_gpu_plan(shipped_build, tmp_path):
    built = shipped_build("cisco-256-gpu")
    plan = _plan(built, tmp_path / "plan")
    nics, uplinks = _backend(built)
    assert len(nics) == 256 and sum(len(c) for c in uplinks.values()) == 256
    _check_every_nic(plan, nics)

    # every leaf-spine cable in both directions: data leaves the client's leaf up through every
    # spine both leaves reach (ECMP) and comes down to the server's leaf
    spines_of: dict[str, set[str]] = defaultdict(set)
    for leaf, spine in uplinks:
        spines_of[leaf].add(spine)
    crossed = set()
    for pair in plan["pairs"]:
        source, target = nics[pair["client"]["node"], pair["client"]["port"]][1], nics[pair["server"]["node"], pair["server"]["port"]][1]
        for spine in spines_of[source] & spines_of[target] if source != target else ():
            crossed |= {(cable, "up") for cable in uplinks[source, spine]} | {(cable, "down") for cable in uplinks[target, spine]}
    every = {(cable, way) for cables in uplinks.values() for cable in cables for way in ("up", "down")}
    assert every - crossed == set(), f"leaf-spine cables not crossed both ways: {sorted(every - crossed)[:8]}"

    # NIC pairs stay behind one leaf (no uplink, so no ECMP noise), each NIC with two partners;
    # a few rounds, whatever the cluster's size
    nic_pairs = [p for p in plan["pairs"] if p["kind"] == "nic"]
    assert all(p["server"]["leaf"] == p["client"]["leaf"] and not p["links"] for p in nic_pairs)
    partners: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for p in nic_pairs:
        partners[p["server"]["node"], p["server"]["port"]].add((p["client"]["node"], p["client"]["port"]))
    assert all(len(found) == 2 for found in partners.values()) and len(partners) == 256
    assert len({p["round"] for p in nic_pairs}) == 4 and len({p["round"] for p in plan["pairs"]}) <= 6

    # a node's script runs its side of every pair of a NIC round at once, each server on a port of its own
    first_nic_round = min(p["round"] for p in nic_pairs)
    script = tmp_path / "plan" / "nodes" / "gpu0001.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    done = subprocess.run(
        ["bash", str(script)], env={"DRY_RUN": "1", "ROUND": str(first_nic_round), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True
    )
    commands = [line.split() for line in done.stdout.splitlines() if line.startswith("+ ib_write_bw")]
    assert len(commands) == 8 and len({c[c.index("-p") + 1] for c in commands}) == 8, done.stdout


@pytest.mark.parametrize(
    "intent",
    [
        "intents/tor-64-gpu.yaml",  # top of rack, odd NICs on one leaf of the pair and even on the other
        "intents/inference-pod-4-node.yaml",  # no spines: a leaf pair joined by peer links
        "intents/lab-16-gpu.yaml",  # top of rack, one leaf
        "intents/rail-only-1024.yaml",  # rail-only: no spines
        "tests/lab/multi-plane-nics.yaml",  # multi-plane NICs: a ConnectX-8's two ports in two planes
        "odd",  # 3 nodes: 3 NICs behind each leaf
    ],
)
def test_every_gpu_nic_is_exercised_both_ways_in_every_design(intent, shipped_build, write_intent, tmp_path):
    if intent == "odd":
        built = build(
            write_intent(
                """
                name: odd-3-node
                gpus: 24
                gpu_node: DGX-H100
                backend:
                  leaf: {model: N9K-C9364D-GX2A, nos: nxos}
                  spine: {model: N9K-C9364D-GX2A, nos: nxos, count: 2}
                  routing: ebgp
                """
            ),
            tmp_path / "b",
        )[1]
    elif intent.startswith("intents/"):
        built = shipped_build(Path(intent).stem)
    else:
        built = build(ROOT / intent, tmp_path / "b")[1]
    plan = _plan(built, tmp_path / "plan")
    nics, _ = _backend(built)
    _check_every_nic(plan, nics)
    nic_rounds = {p["round"] for p in plan["pairs"] if p["kind"] == "nic"}
    assert len(nic_rounds) <= 6  # 4, and 2 more where a leaf has an odd number of NICs
    assert all(p["server"]["leaf"] == p["client"]["leaf"] for p in plan["pairs"] if p["kind"] == "nic")
    if intent == "odd":  # each leaf: 1 with 2, then 3 with 1 (1 is busy in the first two rounds)
        assert len(nic_rounds) == 4


def test_a_node_alone_has_no_partner_and_the_plan_says_so(write_intent, tmp_path):
    intent = write_intent(
        """
        name: one-node
        gpus: 8
        gpu_node: DGX-H100
        backend:
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9K-C9364D-GX2A, nos: nxos, count: 1}
          routing: ebgp
        """
    )
    plan = write_plan(build(intent, tmp_path / "b")[1], tmp_path / "plan")
    assert not plan.pairs
    assert any("8 NICs have no partner of another node" in note and "gpu0001 nic1, gpu0001 nic2" in note for note in plan.notes), plan.notes


# --- the plan's numbers -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def whitepaper_8_node(tmp_path_factory) -> Path:
    """The Cisco whitepaper's load-balancing shape: 8 nodes of 8 x 400G, 8 up / 8 down per leaf."""
    return build(DATA / "whitepaper-8-node.yaml", tmp_path_factory.mktemp("b") / "whitepaper-8-node")[1]


@pytest.fixture(scope="module")
def whitepaper_plan(whitepaper_8_node, tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("p") / "plan"
    write_plan(whitepaper_8_node, destination)
    return destination


def test_the_whitepapers_ecmp_alltoall_passes_on_its_own_shape(whitepaper_plan, tmp_path):
    plan = json.loads((whitepaper_plan / "testplan.json").read_text())
    run = next(r for r in plan["runs"] if r["id"] == "nccl-alltoall-cluster")
    # 64 ranks, 8 per node, 400G per GPU = 50 GB/s: the NICs carry 50 x 63/56 of all-to-all busbw
    assert run["ranks"] == 64 and run["bound_busbw"] == 56.25 and run["leaf_factor"] == 1
    assert run["threshold_busbw"] == pytest.approx(56.25 * 0.6, abs=0.01)
    assert run["threshold_busbw"] < 36.66 < 56.25 * 0.7  # the old factor judged the paper's own figure short
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(DATA / "nccl-alltoall-whitepaper.txt", results / "nccl-alltoall-cluster.txt")
    result = runner.invoke(app, ["testplan", "check", str(whitepaper_plan), str(results / "nccl-alltoall-cluster.txt"), "--json"])
    assert result.exit_code == 0, result.output
    (outcome,) = json.loads(result.stdout)["runs"]
    assert (outcome["peak_busbw"], outcome["passed"]) == ("36.66", True)


def test_a_short_nic_pair_is_named_by_nic_cable_leaf_port_and_rack(whitepaper_8_node, whitepaper_plan, tmp_path):
    plan = json.loads((whitepaper_plan / "testplan.json").read_text())
    with (whitepaper_8_node / "cabling.csv").open(newline="") as handle:
        where = {(r["a_device"], r["a_port"]): r for r in csv.DictReader(handle) if r["kind"] == "host" and r["network"] == "backend"}
    # gpu0003 nic2 is bad: every pair it is in reads 250 Gb/s, every other pair 391
    bad = ("gpu0003", "nic2")
    results = tmp_path / "results"
    results.mkdir()
    template = (DATA / "pair0001.txt").read_text()
    files = []
    for pair in plan["pairs"]:
        if pair["kind"] != "nic" or pair["server"]["leaf"] != where[bad]["b_device"]:
            continue
        ends = {(pair[e]["node"], pair[e]["port"]) for e in ("server", "client")}
        files.append(results / f"{pair['id']}.txt")
        files[-1].write_text(template.replace("391.24             391.02", "252.10             250.00") if bad in ends else template)
    result = runner.invoke(app, ["testplan", "check", str(whitepaper_plan), *map(str, files), "--json-report", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output
    row = where[bad]
    named = f"gpu0003 nic2 (cable {row['cable_id']} to {row['b_device']} {row['b_port']}, rail 2, rack {row['a_rack']} RU {row['a_ru']})"
    assert row["a_rack"] and row["a_ru"] and named in result.output, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert [n["nic"] for n in report["suspect_nics"]] == [named]  # its partners are good with their other partner
    assert report["suspect_nics"][0]["partners"] == 2 and report["suspect_nics"][0]["sends"] == 2 == report["suspect_nics"][0]["receives"]


def test_an_amd_cluster_runs_rccl_and_its_oversubscribed_leaves_bound_alltoall(shipped_build, tmp_path):
    plan = _plan(shipped_build("seed-003-mi300x"), tmp_path / "plan")
    assert plan["gpu_vendor"] == "amd" and {r["library"] for r in plan["runs"]} == {"rccl"}
    assert all((tmp_path / "plan" / "runs" / f"{r['id']}.sh").read_text().count("RCCL_TESTS_DIR") == 1 for r in plan["runs"])
    assert "NCCL" not in (tmp_path / "plan" / "testplan.md").read_text().split("## ")[-1].split("\n")[0]  # the section is "RCCL runs"
    runs = {r["test"]: r for r in plan["runs"]}
    # each leaf: 16 NICs of 400G down (rails 1-4 or 5-8 of 4 nodes), 2 x 400G up (8:1). all-to-all
    # sends a NIC's traffic to 24 remote GPUs, 12 of them behind the same leaf: half leaves it,
    # 16 x 400 / 2 = 3,200 Gb/s over 800: a quarter of the NICs' bound 50 x 31/24
    assert runs["alltoall"]["nic_bound_busbw"] == pytest.approx(50 * 31 / 24, abs=0.01)
    assert runs["alltoall"]["leaf_factor"] == 0.25 and runs["alltoall"]["bound_busbw"] == pytest.approx(50 * 31 / 24 / 4, abs=0.01)
    # all-reduce rings stay on their rail, and a rail's NICs are all behind one leaf
    assert runs["all_reduce"]["leaf_factor"] == 1 and runs["all_reduce"]["bound_busbw"] == 400


def test_an_nvidia_cluster_runs_nccl_only(shipped_build, tmp_path):
    plan = _plan(shipped_build("tor-64-gpu"), tmp_path / "plan")
    assert plan["gpu_vendor"] == "nvidia" and {r["library"] for r in plan["runs"]} == {"nccl"}


def test_check_reads_a_results_table_pasted_from_a_report(shipped_build, tmp_path):
    """Seed 003's Table 1 as printed: tabs, `#` before every row, units in the header."""
    plan_dir = tmp_path / "plan"
    write_plan(shipped_build("seed-003-mi300x"), plan_dir)
    results = tmp_path / "results"
    results.mkdir()
    pasted = results / "rccl-all_reduce-cluster.txt"
    shutil.copy(DATA / "seed003-rccl-all_reduce-table.txt", pasted)
    assert "\t" in pasted.read_text() and "# Avg bus bandwidth : 92.3885" in pasted.read_text()
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(pasted), "--json"])
    assert result.exit_code == 1, result.output  # read, and below the plan's 360 GB/s: 282.63 at 32 GiB
    (run,) = json.loads(result.stdout)["runs"]
    assert (run["peak_busbw"], run["peak_size"], run["avg_busbw"], run["out_of_bounds"], run["wrong_rows"]) == ("282.63", "34359738368", "92.3885", "0", 0)
    # the same table without its tabs (spaces) and without the `#` prefixes reads the same
    text = pasted.read_text().replace("\t", "   ")
    text = "\n".join(line[1:] if line.startswith("#   ") and line[4:5].isdigit() else line for line in text.split("\n"))
    pasted.write_text(text)
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(pasted), "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["runs"][0]["peak_busbw"] == "282.63"


def test_a_pasted_table_without_its_first_header_line_is_exit_2(shipped_build, tmp_path):
    plan_dir = tmp_path / "plan"
    write_plan(shipped_build("seed-003-mi300x"), plan_dir)
    pasted = tmp_path / "rccl-all_reduce-cluster.txt"
    pasted.write_text("".join((DATA / "seed003-rccl-all_reduce-table.txt").read_text().splitlines(keepends=True)[1:]))
    result = runner.invoke(app, ["testplan", "check", str(plan_dir), str(pasted)])
    assert result.exit_code == 2 and f"{pasted}:1: " in result.output and "no `size ... time` line above" in result.output, result.output
