"""`fabricgen export diagram`: drawings read back the way a user sees them. Graphviz's dot lays out
the .dot files (Debian's graphviz, installed by scripts/test.sh) and the test reads the positions
from `dot -Tplain`; what a drawing should hold is computed here from the build's own cabling.csv
and topology.json (csv and json modules), not from the diagram code."""

from __future__ import annotations

import csv
import json
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent
from tests.conftest import INTENTS

runner = CliRunner()
SVG = "{http://www.w3.org/2000/svg}"


def export(build_dir: Path, destination: Path, *views: str) -> Path:
    options = [option for view in views for option in ("--view", view)]
    result = runner.invoke(app, ["export", "diagram", str(build_dir), "-o", str(destination), *options])
    assert result.exit_code == 0, result.output
    return destination


def topology(build_dir: Path) -> dict[str, dict]:
    return {node["id"]: node for node in json.loads((build_dir / "topology.json").read_text())["nodes"]}


def cabling(build_dir: Path, network: str) -> list[dict[str, str]]:
    with open(build_dir / "cabling.csv", newline="") as handle:
        return [row for row in csv.DictReader(handle) if row["network"] == network]


def number(name: str) -> list[int]:
    return [int(n) for n in re.findall(r"[0-9]+", name)]


def layout(dot_file: Path) -> tuple[dict[str, tuple[float, float]], list[tuple[str, str, str]]]:
    """dot's own layout of a file: each node's centre (x, y) and each drawn edge (tail, head, label)."""
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (scripts/test.sh installs the Debian package graphviz)")
    result = subprocess.run(["dot", "-Tplain", str(dot_file)], check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stderr, f"{dot_file.name}: {result.stderr}"
    positions, edges = {}, []
    for line in result.stdout.splitlines():
        fields = shlex.split(line)  # plain format: graphviz.org/docs/outputs/plain
        if fields[0] == "node":
            positions[fields[1]] = (float(fields[2]), float(fields[3]))
        elif fields[0] == "edge" and fields[-2] != "invis":
            points = int(fields[3])
            rest = fields[4 + 2 * points :]
            edges.append((fields[1], fields[2], rest[0] if len(rest) == 5 else ""))
    return positions, edges


def left_to_right(positions: dict[str, tuple[float, float]], names) -> list[str]:
    row = {positions[n][1] for n in names}
    assert len(row) == 1, f"not on one rank: {sorted(names)}"
    return sorted(names, key=lambda n: positions[n][0])


def boxes(dot_text: str) -> list[tuple[str, str]]:
    """Each box of a .dot file as (id, label), in file order."""
    return re.findall(r'^    "([^"]+)" \[label="((?:[^"\\]|\\.)*)"', dot_text, flags=re.MULTILINE)


# --- the 256-GPU backend ------------------------------------------------------------------------


def test_256_gpu_backend_is_a_summary_in_natural_order_with_the_cabling_counted_on_its_lines(shipped_build, tmp_path):
    """The acceptance: dot lays out the default (summary) drawing of the 256-GPU backend, leaves left
    to right by number, and every line carries the cables of cabling.csv between its two ends."""
    build = shipped_build("cisco-256-gpu")
    out = export(build, tmp_path / "d")
    dot = (out / "backend.dot").read_text()
    assert "summary view: a tier of 32 devices is over 16" in dot.splitlines()[0]
    nodes = topology(build)
    leaves = sorted((n for n, node in nodes.items() if node["network"] == "backend" and node["role"] == "leaf"), key=number)
    positions, edges = layout(out / "backend.dot")
    assert left_to_right(positions, leaves) == leaves
    # the lines, as dot drew them, against the cables counted here
    groups = {box: label for box, label in boxes(dot) if box.startswith("group-")}
    (spines,) = [box for box, label in groups.items() if "spines" in label]
    (gpus,) = [box for box, label in groups.items() if "GPU nodes" in label]
    assert groups[gpus].startswith("su01: 32 GPU nodes × 8 links")
    expected: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in cabling(build, "backend"):
        ends = {nodes[row["a_device"]]["role"]: row["a_device"], nodes[row["b_device"]]["role"]: row["b_device"]}
        pair = (spines, ends["leaf"]) if "spine" in ends else (ends["leaf"], gpus)
        expected[pair][row["speed"]] += 1
    drawn = {(tail, head): label for tail, head, label in edges}
    assert drawn == {pair: " + ".join(f"{n} × {speed}" for speed, n in speeds.items()) for pair, speeds in expected.items()}
    assert set(drawn.values()) == {"32 × 400G"}  # 4 spines x 8 links per leaf; 32 nodes per rail leaf


def test_full_view_keeps_every_gpu_and_leaf_in_natural_order(shipped_build, tmp_path):
    """dot orders a rank to cut crossings: before the chain of invisible edges it drew gpu0015 first."""
    build = shipped_build("cisco-256-gpu")
    out = export(build, tmp_path / "d", "full")
    assert "full view" in (out / "backend.dot").read_text().splitlines()[0]
    nodes = topology(build)
    positions, edges = layout(out / "backend.dot")
    for role in ("gpu-node", "leaf", "spine"):
        names = sorted((n for n, node in nodes.items() if node["network"] == "backend" and node["role"] == role), key=number)
        assert left_to_right(positions, names) == names, role
    assert len(edges) == len({tuple(sorted((r["a_device"], r["b_device"]))) for r in cabling(build, "backend")})


def test_unit_groups_stand_in_unit_order_and_lines_count_per_unit(shipped_build, tmp_path):
    """cisco-512-gpu: two units of 32 nodes and 8 rail leaves each; su01's boxes left of su02's."""
    build = shipped_build("cisco-512-gpu")
    out = export(build, tmp_path / "d", "summary")
    dot = (out / "backend.dot").read_text()
    nodes = topology(build)
    positions, edges = layout(out / "backend.dot")
    leaves = sorted(
        (n for n, node in nodes.items() if node["network"] == "backend" and node["role"] == "leaf"),
        key=lambda n: (nodes[n]["scalable_unit"], nodes[n]["index"]),
    )
    assert left_to_right(positions, leaves) == leaves
    units = [box for box, label in boxes(dot) if "GPU nodes" in label]
    assert [label.split(":")[0] for box, label in boxes(dot) if box in left_to_right(positions, units)] == ["su01", "su02"]
    per_unit: Counter[tuple[str, int]] = Counter()
    for row in cabling(build, "backend"):
        if row["kind"] == "host":
            leaf = row["b_device"] if nodes[row["b_device"]]["role"] == "leaf" else row["a_device"]
            per_unit[leaf, nodes[leaf]["scalable_unit"]] += 1
    drawn = {tail: (head, label) for tail, head, label in edges if head in units}
    assert {leaf: label for leaf, (_, label) in drawn.items()} == {leaf: f"{n} × 400G" for (leaf, _), n in per_unit.items()}
    for (leaf, unit), _ in per_unit.items():
        assert dict(boxes(dot))[drawn[leaf][0]].startswith(f"su{unit:02d}: ")


# --- rails ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ("small-32-gpu", {(1, 2, 3, 4): "rails 1-4", (5, 6, 7, 8): "rails 5-8"}),
        ("inference-pod-4-node", {(1, 3, 5, 7): "rails 1, 3, 5, 7", (2, 4, 6, 8): "rails 2, 4, 6, 8"}),
    ],
)
def test_a_leaf_serving_several_rails_says_so_in_its_box_its_colour_and_the_legend(shipped_build, tmp_path, intent, expected):
    build = shipped_build(intent)
    nodes = topology(build)
    served = {n: tuple(sorted(node["rails"])) for n, node in nodes.items() if node["network"] == "backend" and node["role"] == "leaf"}
    assert set(served.values()) == set(expected)  # the builds still have these multi-rail leaves
    out = export(build, tmp_path / "d")
    dot, d2, mermaid = ((out / f"backend.{ext}").read_text() for ext in ("dot", "d2", "mmd"))
    legend = re.search(r"label=<<table.*</table>>", dot)
    assert legend and set(re.findall(r'<font color="white">([^<]+)</font>', legend.group(0))) == set(expected.values())
    labels = dict(boxes(dot))
    colours = {}
    for leaf, rails in served.items():
        text = expected[rails]
        assert labels[leaf] == f"{leaf}\\n{text}"
        assert f'"{text}"' in d2 and f'"{text}"' in mermaid  # the legend of the other formats
        colours[leaf] = set(
            re.findall(rf'^  "{re.escape(leaf)}" -- "gpu[0-9]+" \[(?:label="[^"]*", )?color="(#[0-9A-F]+)", penwidth=2\]', dot, flags=re.MULTILINE)
        )
        assert len(colours[leaf]) == 1, leaf  # every server line of a leaf in its one colour
        assert f'bgcolor="{colours[leaf].pop()}"><font color="white">{text}<' in legend.group(0)  # and the legend names it
    assert "rail 1<" not in dot and "rail 5<" not in dot  # no rail named alone for a leaf that serves four


def test_views_per_unit_and_per_rail_and_refusals(shipped_build, tmp_path):
    build = shipped_build("cisco-512-gpu")
    nodes = topology(build)
    out = export(build, tmp_path / "d", "summary", "unit:2", "rail:3")
    assert {"backend.dot", "backend-su02.dot", "backend-rail3.dot", "backend-rail3.d2", "backend-rail3.mmd"} <= {p.name for p in out.iterdir()}
    rail3 = (out / "backend-rail3.dot").read_text()
    leaves = {n for n, node in nodes.items() if node["network"] == "backend" and node["role"] == "leaf" and 3 in node["rails"]}
    drawn = {box for box, _ in boxes(rail3)}
    assert {d for d in drawn if nodes[d]["role"] == "leaf"} == leaves and len(leaves) == 2
    gpus = {
        r[end]
        for r in cabling(build, "backend")
        for end in ("a_device", "b_device")
        if {r["a_device"], r["b_device"]} & leaves and nodes[r[end]]["role"] == "gpu-node"
    }
    assert {d for d in drawn if nodes[d]["role"] == "gpu-node"} == gpus and len(gpus) == 64
    su02 = {box for box, _ in boxes((out / "backend-su02.dot").read_text())}
    assert {d for d in su02 if nodes[d]["role"] == "leaf"} == {
        n for n, node in nodes.items() if node["role"] == "leaf" and node.get("scalable_unit") == 2 and node["network"] == "backend"
    }
    for views, message in [
        (["sideways"], "unknown view 'sideways'"),
        (["full", "summary"], "one of full, summary and auto"),
        (["unit:9"], "units in this build: 1, 2"),
        (["rail:12"], "rails in this build: 1, 2, 3, 4, 5, 6, 7, 8"),
    ]:
        destination = tmp_path / "refused"
        result = runner.invoke(app, ["export", "diagram", str(build), "-o", str(destination), *[o for v in views for o in ("--view", v)]])
        assert result.exit_code == 2 and "--view" in result.output and message in result.output, result.output
        assert "Traceback" not in result.output and not destination.exists()


def test_every_format_draws_the_same_boxes_in_the_same_order_and_says_leaves(shipped_build, tmp_path):
    build = shipped_build("cisco-256-gpu")
    out = export(build, tmp_path / "d", "summary", "unit:all", "rail:all")
    for dot_file in sorted(out.glob("*.dot")):
        ids = [box for box, _ in boxes(dot_file.read_text())]
        d2 = re.findall(r'^  "([^"]+)": "', dot_file.with_suffix(".d2").read_text(), flags=re.MULTILINE)
        mermaid = re.findall(r"^    (n_[A-Za-z0-9_]+)\[", dot_file.with_suffix(".mmd").read_text(), flags=re.MULTILINE)
        assert d2 == ids and mermaid == ["n_" + re.sub(r"[^A-Za-z0-9_]", "_", box) for box in ids], dot_file.name
    text = "".join(p.read_text() for p in out.iterdir()).lower()
    assert "leafs" not in text and "leaves" in text


def test_a_three_tier_summary_groups_spines_per_pod_under_the_cores(three_tier_build, tmp_path):
    out = export(three_tier_build, tmp_path / "d", "summary", "unit:all")
    nodes = topology(three_tier_build)
    spines: dict[int, list[str]] = defaultdict(list)
    for n in sorted(nodes, key=number):
        if nodes[n]["role"] == "spine":
            spines[nodes[n]["pod"]].append(n)
    assert len(spines) == 2 and {f"backend-pod{p:02d}.dot" for p in spines} <= {p.name for p in out.iterdir()}
    dot = (out / "backend.dot").read_text()
    positions, edges = layout(out / "backend.dot")
    labels = dict(boxes(dot))
    cores = sorted((n for n in nodes if nodes[n]["role"] == "core"), key=number)
    groups = [box for box, label in labels.items() if " spines\\n" in label]
    assert [labels[g] for g in left_to_right(positions, groups)] == [f"pod{p:02d}: {len(s)} spines\\n{', '.join(s)}" for p, s in sorted(spines.items())]
    assert left_to_right(positions, cores) == cores and positions[cores[0]][1] > positions[groups[0]][1]  # cores above
    expected: Counter[tuple[str, str]] = Counter()
    for row in cabling(three_tier_build, "backend"):
        ends = {nodes[row["a_device"]]["role"]: row["a_device"], nodes[row["b_device"]]["role"]: row["b_device"]}
        if set(ends) == {"core", "spine"}:
            expected[ends["core"], groups[sorted(spines).index(nodes[ends["spine"]]["pod"])]] += 1
    drawn = {(tail, head): label for tail, head, label in edges if tail in cores}
    assert drawn == {pair: f"{n} × 400G" for pair, n in expected.items()} and all(label for *_, label in edges)


# --- rack elevations -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def layout_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("layout")
    intent = directory / "c256-layout.yaml"
    intent.write_text((INTENTS / "cisco-256-gpu.yaml").read_text().replace("name: cisco-256-gpu", "name: c256-layout") + "\nlayout: {}\n")
    build_intent(intent, directory / "c256-layout")
    return directory / "c256-layout"


def test_rack_elevations_number_every_unit_and_name_the_role_colours(layout_build, tmp_path):
    from fabricgen.catalog import load_catalog

    out = export(layout_build, tmp_path / "d")
    catalog = load_catalog()
    heights = {model: entry.rack_units for section in (catalog.switches, catalog.nodes, catalog.console_servers) for model, entry in section.items()}
    nodes = [n for n in json.loads((layout_build / "topology.json").read_text())["nodes"] if n.get("rack")]
    for path in sorted((out / "elevations").iterdir()):
        root = ET.parse(path).getroot()
        racks = {t.text for t in root.iter(f"{SVG}text") if t.text and t.text.startswith("R")}
        units = [g for g in root.iter(f"{SVG}g") if g.get("class") == "rack-units"]
        assert len(units) == len(racks) and racks
        for group in units:
            numbers = [int(t.text or "") for t in group.iter(f"{SVG}text")]
            assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 42
        (legend,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
        named = [t.text for t in legend.iter(f"{SVG}text")]
        fills = [r.get("fill") for r in legend.iter(f"{SVG}rect")]
        assert len(named) == len(fills) == len(set(fills)) and "GPU nodes" in named
        drawn = {t.text.split(":")[0]: t.text for t in root.iter(f"{SVG}title") if t.text}
        for node in nodes:  # each device at its units, its height the catalog's
            if node["id"] in drawn and node.get("ru"):
                h = heights.get(node["model"], 1)
                assert drawn[node["id"]].endswith(f"RU {node['ru']}" + (f"-{node['ru'] + h - 1}" if h > 1 else "")), drawn[node["id"]]
