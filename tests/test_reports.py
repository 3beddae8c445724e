"""Reports: the whitepaper BOM, every cable once, every address listed, the graph and manifest."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricgen.basics.csv_format import csv_text, joined_csv, spreadsheet_safe, spreadsheet_value
from fabricgen.basics.errors import DiffError
from fabricgen.build.build_dir import BomRow, read_rows
from fabricgen.compiler.design.graph import LinkKind, Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.reports import cabling, ip_plan
from fabricgen.reports.bom import _network_section, _octal_cables, bom_rows
from fabricgen.reports.cabling import COLUMNS as COLUMNS_CABLING
from fabricgen.reports.cabling import cabling_rows, render_cabling
from fabricgen.reports.ip_plan import COLUMNS as COLUMNS_IP_PLAN
from fabricgen.reports.ip_plan import ip_plan_rows, render_ip_plan
from fabricgen.reports.topology import _one_per_line
from tests.conftest import INTENTS, REPO


def read_csv(build, name):
    return list(csv.DictReader(io.StringIO(build.files[name].decode())))


@pytest.mark.parametrize(
    "gpus, switches, optics, cables, nodes",
    [(256, 12, 768, 512, 32), (512, 24, 1536, 1024, 64)],
)
def test_backend_bom_is_the_whitepapers(whitepaper, gpus, switches, optics, cables, nodes):
    rows = read_csv(whitepaper[gpus], "bom.csv")
    backend = {r["pid"]: int(r["quantity"]) for r in rows if r["section"] == "Backend network"}
    assert backend == {"N9K-C9364D-GX2A": switches, "QDD-400G-DR4-S": optics, "CB-M12-M12-SMF": cables}
    gpu_rows = [r for r in rows if r["section"] == "GPU nodes"]
    assert [int(r["quantity"]) for r in gpu_rows] == [nodes]
    assert all(r["description"] for r in rows)


def test_bom_markdown_is_laid_out_like_the_whitepaper(whitepaper):
    text = whitepaper[256].files["bom.md"].decode()
    assert "| PID | Description | Length | Quantity | Counted as |" in text
    sections = [line for line in text.splitlines() if line.startswith("| **")]
    assert [line.split("**")[1] for line in sections] == [
        "GPU nodes", "Management nodes", "Storage nodes", "Backend network",
        "Converged frontend and storage network", "OOB management network", "Management platform",
    ]  # fmt: skip
    assert "| QDD-400G-DR4-S | 400G QSFP-DD transceiver, 400GBASE-DR4, MPO-12 parallel SMF, 500m |  | 768 |" in text


def test_breakout_optics_count_once_per_cage(write_intent):
    build = compile_intent(write_intent("gpus: 1024\nbackend: {scalable_unit_gpus: 512, leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n"))
    rows = {r["pid"]: int(r["quantity"]) for r in read_csv(build, "bom.csv") if r["section"] == "Backend network"}
    links = len(build.fabric.links)  # 1024 host + 1024 fabric
    # switch ports used: 1024 leaf downlinks + 1024 leaf uplinks + 1024 spine ports, two per 800G cage
    assert rows["OSFP-800G-DR8"] == 3 * 1024 // 2
    assert rows["CB-M12-M12-SMF"] == links


@pytest.mark.parametrize("gpus", [256, 512])
def test_cabling_plan_lists_every_link_once_and_every_port_once(whitepaper, gpus):
    build = whitepaper[gpus]
    rows = read_csv(build, "cabling.csv")
    assert len(rows) == len(build.fabric.links)
    assert len({r["cable_id"] for r in rows}) == len(rows)
    ends = Counter((r[f"{side}_device"], r[f"{side}_port"]) for r in rows for side in ("a", "b"))
    assert max(ends.values()) == 1
    expected_ends = {(d.name, p.name) for d in build.fabric.devices.values() for p in d.ports.values()}
    assert set(ends) == expected_ends
    # a link listed twice (once from each end) would show up as the same pair reversed
    pairs = Counter(frozenset([(r["a_device"], r["a_port"]), (r["b_device"], r["b_port"])]) for r in rows)
    assert max(pairs.values()) == 1
    for r in rows:
        if r["network"] != "backend":
            continue
        assert r["speed"] == "400G" and r["cable"] == "CB-M12-M12-SMF"
        assert r["b_optic"] == "QDD-400G-DR4-S"
        assert r["a_optic"] == ("" if r["kind"] == "host" else "QDD-400G-DR4-S")
    kinds = Counter((r["network"], r["kind"]) for r in rows)
    nodes = gpus // 8
    assert kinds[("backend", "host")] == kinds[("backend", "fabric")] == gpus
    assert kinds[("frontend", "host")] == 4 * nodes + 2 * 4 + 2 * 8  # DGX 2+2, AFF 2, C225 2 ports
    # every switch's mgmt0 and console, every server's BMC (and DGX host management NIC)
    switches = sum(1 for d in build.fabric.switches())
    assert kinds[("oob", "console")] == switches
    assert kinds[("oob", "management")] == switches + nodes * 2 + 4 + 8 + len(list(build.fabric.by_role(Role.CONSOLE_SERVER)))


def test_cabling_markdown_has_a_row_per_cable(whitepaper):
    text = whitepaper[256].files["cabling.md"].decode()
    assert sum(1 for line in text.splitlines() if line.startswith("| BE-")) == 512


def test_ip_plan_lists_every_address(whitepaper):
    build = whitepaper[512]
    rows = read_csv(build, "ip-plan.csv")
    listed = {(r["device"], r["interface"]): r for r in rows}
    plan = build.addresses
    anycast_gateways = sum(
        len(overlay.leaf_segments(leaf)) for overlay in build.compiled.evpn.values() for leaf in build.fabric.by_role(Role.LEAF, overlay.network)
    )
    assert anycast_gateways == 16  # 512's backend: each of 16 leaves serves one rail segment
    assert len(rows) == (len(plan.interfaces) + len(plan.loopbacks) + len(plan.management) + len(plan.management_subnets) + len(plan.vteps) + anycast_gateways)
    for port, address in plan.interfaces.items():
        row = listed[(port.device.name, port.name)]
        assert row["address"] == address.cidr and row["peer_address"] == (address.peer or "")
    nic_rows = [r for r in rows if r["kind"] == "nic"]
    assert len(nic_rows) == 512 + 64 * 4 + 4 * 2 + 8 * 2 and all(r["gateway"] for r in nic_rows)
    management = [r for r in rows if r["kind"] == "management"]
    assert len(management) == len(plan.management) and all(r["network"] == "oob" and r["gateway"] for r in management)
    own = [r for r in rows if r["kind"] != "anycast-gateway"]  # a gateway is shared by its segment's leaves
    assert len({r["address"] for r in own}) == len(own)


def written_by_csv(header, rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


@pytest.mark.parametrize("nic_addressing", ["p2p", "subnet"])
def test_ip_plan_is_its_rows_as_csv_writes_them(whitepaper, write_intent, nic_addressing):
    # render_ip_plan formats each port's line itself and takes the peer's address from address.peer:
    # it must be csv.writer over ip_plan_rows, which looks each peer up (EVPN segments, OOB, subnet mode)
    builds = [whitepaper[512]] if nic_addressing == "p2p" else []
    builds.append(compile_intent(write_intent(f"gpus: 64\noob: {{}}\nbackend: {{nic_addressing: {nic_addressing}}}\n")))
    for build in builds:
        rows = ip_plan_rows(build.compiled)
        assert {row[4] for row in rows} >= {"loopback", "fabric", "nic", "management", "management-gateway"}
        assert build.files["ip-plan.csv"].decode() == written_by_csv(COLUMNS_IP_PLAN, rows)


def test_ip_plan_quotes_a_name_csv_would_quote(write_intent):
    # a name that passed no trust check (names cannot hold commas): the plan falls back to csv's writer
    build = compile_intent(write_intent("gpus: 32\n"))
    port = next(p for p in build.fabric.devices["be-spine01"].ports.values() if p in build.addresses.interfaces)
    port.name = 'Ethernet1/1,"x"'
    text = render_ip_plan(build.compiled)["ip-plan.csv"]
    assert 'be-spine01,"Ethernet1/1,""x""",' in text
    assert text == written_by_csv(COLUMNS_IP_PLAN, ip_plan_rows(build.compiled))


def test_cabling_csv_is_its_rows_as_csv_writes_them(whitepaper, write_intent):
    # render_cabling joins each row itself and has joined_csv check the text: it must be what csv.writer writes
    build = whitepaper[512]
    assert build.files["cabling.csv"].decode() == written_by_csv(COLUMNS_CABLING, cabling_rows(build.compiled))
    build = compile_intent(write_intent("gpus: 32\n"))
    build.fabric.links[0].a.name = 'Ethernet1/1,"x"'  # past every trust check: csv quotes it
    text = render_cabling(build.compiled)["cabling.csv"]
    assert ',"Ethernet1/1,""x""",' in text and text == written_by_csv(COLUMNS_CABLING, cabling_rows(build.compiled))


def cabling_table(rows):
    """The markdown table as a row at a time writes it: a row's cells joined by " | "."""
    head = f"| {' | '.join(COLUMNS_CABLING)} |\n|{'---|' * len(COLUMNS_CABLING)}\n"
    return head + "".join(f"| {' | '.join(row)} |\n" for row in rows)


def test_cabling_markdown_is_its_rows_one_per_line(whitepaper, write_intent):
    # the table is made from the CSV's text when no field holds a comma, row by row when one does
    build = whitepaper[512]
    markdown = build.files["cabling.md"].decode()
    assert markdown.endswith(cabling_table(cabling_rows(build.compiled)))
    assert markdown.count("\n| ") == len(build.fabric.links) + 1
    build = compile_intent(write_intent("gpus: 32\n"))
    build.fabric.links[-1].b.name = "Ethernet1/1,x"  # past every trust check: a comma in a cell
    markdown = render_cabling(build.compiled)["cabling.md"]
    assert "| Ethernet1/1,x |" in markdown and markdown.endswith(cabling_table(cabling_rows(build.compiled)))


def test_joined_csv_counts_rows_across_blocks():
    header = ("a", "b", "c")
    assert joined_csv(header, ["1,2,3\n4,5,6", "7,8,9"], 3) == written_by_csv(header, [("1", "2", "3"), ("4", "5", "6"), ("7", "8", "9")])
    assert joined_csv(header, [], 0) == "a,b,c\n"
    assert joined_csv(header, ["1,2,3\n4,5,6", "7,8,9"], 2) is None  # a row more than told: a field held a line break
    assert joined_csv(header, ["1,2,3,4", "7,8,9"], 2) is None  # a comma in a field
    assert joined_csv(header, ["1,2,3", "", "7,8,9"], 2) is None  # an empty block would write an empty line
    assert joined_csv(header, ['1,"2",3'], 1) is None  # csv quotes a quote


@pytest.mark.parametrize("block", [1, 7, 100_000])
def test_cabling_blocks_write_the_rows(whitepaper, monkeypatch, block):
    # render_cabling writes BLOCK links at a time: any block size gives the row-by-row texts, and
    # a plain fabric never falls back to csv's writer
    monkeypatch.setattr(cabling, "BLOCK", block)
    monkeypatch.setattr(cabling, "csv_text", None)  # the fallback: calling it fails the test
    build = whitepaper[512]
    files = render_cabling(build.compiled)
    rows = cabling_rows(build.compiled)
    assert len(rows) > 7 and len(rows) % 7
    assert files["cabling.csv"] == written_by_csv(COLUMNS_CABLING, rows)
    assert files["cabling.md"] == build.files["cabling.md"].decode() and files["cabling.md"].endswith(cabling_table(rows))


def test_cabling_of_a_fabric_without_links(whitepaper):
    build = whitepaper[256]
    files = render_cabling(replace(build.compiled, fabric=replace(build.fabric, links=[])))
    assert files["cabling.csv"] == written_by_csv(COLUMNS_CABLING, [])
    assert files["cabling.md"].endswith(cabling_table([]))


def test_ip_plan_of_a_plain_fabric_is_joined_not_written_by_csv(whitepaper, monkeypatch):
    monkeypatch.setattr(ip_plan, "csv_text", None)  # the fallback: calling it fails the test
    build = whitepaper[512]
    assert render_ip_plan(build.compiled)["ip-plan.csv"] == written_by_csv(COLUMNS_IP_PLAN, ip_plan_rows(build.compiled))


def test_topology_json_is_the_graph(whitepaper):
    build = whitepaper[256]
    topology = json.loads(build.files["topology.json"])
    assert topology["multigraph"] is True
    assert len(topology["nodes"]) == len(build.fabric.devices)
    assert len(topology["links"]) == len(build.fabric.links)
    assert topology["graph"]["backend"]["spines"] == 4 and topology["graph"]["backend"]["built_ratio"] == "1:1"
    leaf = next(n for n in topology["nodes"] if n["id"] == "be-su01-leaf1")
    assert (leaf["rail"], leaf["asn"], leaf["role"]) == (1, 64513, "leaf")


@pytest.mark.parametrize("links", [0, 1, 3])
def test_topology_layout_is_json_one_line_per_node_and_link(links):
    # _one_per_line writes the document by hand (indents joined in): it must read back as json.dumps wrote it
    graph = {"name": "f", "backend": {"gpus": 8}}
    nodes = [{"id": f"n{i}", "role": "leaf", "qos": {"ecn": {"400G": {"min_kbytes": 1}}}} for i in range(2)]
    lines = [json.dumps({"source": "n0", "target": "n1", "key": f"BE-{i}", "length_m": None}) for i in range(links)]
    text = _one_per_line(graph, nodes, lines)
    assert json.loads(text) == {"directed": False, "multigraph": True, "graph": graph, "nodes": nodes, "links": [json.loads(line) for line in lines]}
    body = text.splitlines()
    assert [line.strip().rstrip(",") for line in body if line.startswith('  {"source"')] == lines
    assert body[-3:] == ["  " + lines[-1] if lines else "", " ]", "}"]


def test_manifest_hashes_every_file(whitepaper):
    build = whitepaper[256]
    manifest = json.loads(build.files["manifest.json"])
    assert manifest["intent"]["file"] == "cisco-256-gpu.yaml"
    assert set(manifest["files"]) == set(build.files) - {"manifest.json"}
    for path, digest in manifest["files"].items():
        assert hashlib.sha256(build.files[path]).hexdigest() == digest


def test_summary_states_the_design(whitepaper):
    text = whitepaper[512].files["summary.md"].decode()
    assert "512 GPUs in 64 nodes" in text and "16 leaves, 8 spines" in text
    assert "32 downlinks, 32 uplinks (4 to each spine)" in text


def test_subnet_mode_ip_plan_names_the_vlan_interface(write_intent):
    build = compile_intent(write_intent("gpus: 64\nbackend: {nic_addressing: subnet, subnet_vlan: 310}\n"))
    rows = [r for r in read_csv(build, "ip-plan.csv") if r["kind"] == "gateway"]
    assert len(rows) == 8 and {r["interface"] for r in rows} == {"Vlan310"}
    nics = [r for r in read_csv(build, "ip-plan.csv") if r["kind"] == "nic"]
    gateways = {r["device"]: r["address"].split("/")[0] for r in rows}
    assert all(r["gateway"] in gateways.values() for r in nics) and len(nics) == 64


def test_manifest_records_the_user_catalog(tmp_path, write_intent):
    (tmp_path / "extra.yaml").write_text("cables:\n  MY-CABLE:\n    description: x\n    media: smf\n    connector: LC\n")
    build = compile_intent(write_intent("catalog: [extra.yaml]\ngpus: 64\n"))
    manifest = json.loads(build.files["manifest.json"])
    assert manifest["catalog"] == {"extra.yaml": hashlib.sha256((tmp_path / "extra.yaml").read_bytes()).hexdigest()}


# A 2x breakout host link: 400G OSFP NICs (DGX H100) on 800G OSFP leaf cages, each cage holding one
# 2 x 400G splitter DAC (MCP7Y00-N001). 32 nodes x 8 NICs = 256 host links over 8 leaves.
BREAKOUT_DAC = """\
gpus: 256
backend:
  scalable_unit_gpus: 256
  leaf: {model: N9364E-SG2-O}
  spine: {model: N9364E-SG2-O}
  optics: {host_links: MCP7Y00-N001}
"""


def bom_totals(build, section="Backend network"):
    totals = Counter()
    for r in read_csv(build, "bom.csv"):
        if r["section"] == section:
            totals[r["pid"]] += int(r["quantity"])
    return totals


def test_a_breakout_dac_counts_once_per_switch_cage(write_intent):
    build = compile_intent(write_intent(BREAKOUT_DAC))
    host = [link for link in build.fabric.links if link.kind.value == "host"]
    assert len(host) == 256 and {link.b.optic for link in host} == {"MCP7Y00-N001"}
    # hand count: each leaf serves 32 NICs on 2 x 400G sub-ports of 16 cages; 8 leaves -> 128 cables
    cages = {(link.b.device.name, link.b.cage) for link in host}
    assert len(cages) == 8 * 16
    rows = [r for r in read_csv(build, "bom.csv") if r["pid"] == "MCP7Y00-N001"]
    assert len(rows) == 1, "one row for the part"
    assert int(rows[0]["quantity"]) == 128, "one per cage, not one per link (256)"
    assert rows[0]["basis"] == "one per switch cage (2 links each, cable built in)"
    # the fabric side is unchanged: a 2 x 400G DR8 optic per cabled cage, an MPO trunk per link
    totals = bom_totals(build)
    assert totals["OSFP-800G-DR8"] == 128 + 128 and totals["CB-M12-M12-SMF"] == 256


def test_breakout_dac_spares_are_added_per_cage(write_intent):
    build = compile_intent(write_intent(BREAKOUT_DAC + "bom: {spares_percent: 10}\n"))
    assert bom_totals(build)["MCP7Y00-N001"] == 128 + 13  # 12.8 rounded up


SMALL_CLUSTER = """\
gpus: 32
backend:
  scalable_unit_gpus: 32
  leaf: {model: N9K-C9364D-GX2A}
  spine: {model: N9K-C9364D-GX2A}
frontend:
  storage: converged
  leaf: {model: N9K-C93600CD-GX, count: 2}
  spine: {model: N9K-C9364D-GX2A, count: 1}
oob:
  switch: {model: N9K-C93108TC-FX3, nos: nxos}
  console: {model: C8300-1N1S-4T2X, module: NIM-24A}
"""


def _counted_one_by_one(c):
    """The cabled rule's optic, built-in part and cable quantities, by (section, PID, length),
    counted a cage and a link at a time: what bom_rows counts per switch and per kind of link."""
    catalog = c.catalog
    counts = Counter()
    for device in c.fabric.switches():
        cages = {port.cage: port.optic for port in device.ports.values() if port.optic and port.front_panel}
        for optic in cages.values():
            if catalog.transceivers[optic].cable is not None:
                counts[(_network_section(c, device.network), optic, None)] += 1
    heads = set()  # (switch, cage) of a breakout part already counted
    for link in c.fabric.links:
        section = _network_section(c, link.network)
        for pid in {link.a.optic, link.b.optic} - {None}:
            optic = catalog.transceivers[pid]
            if optic.cable is None:
                head = next((end for end in (link.b, link.a) if end.optic == pid and end.sub), None) if optic.links > 1 else None
                if head is not None:
                    if (head.device.name, head.cage) in heads:
                        continue
                    heads.add((head.device.name, head.cage))
                counts[(section, pid, None)] += 1
        if link.cable:
            optic = link.b.optic or link.a.optic
            counts[(section, link.cable, link.length_m)] += catalog.transceivers[optic].cables_per_link(link.speed_gbps) if optic else 1
    return counts


@pytest.mark.parametrize(
    "intent",
    [
        INTENTS / "small-32-gpu.yaml",
        INTENTS / "superpod-4096.yaml",
        REPO / "bench" / "intents" / "bench-2048.yaml",  # frontend, storage, OOB and consoles
        BREAKOUT_DAC,
        "gpus: 1024\nbackend: {scalable_unit_gpus: 512, leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n",  # 2 x 400G DR8
        "gpus: 32\nbackend: {uplinks: {count: 1, speed: 800G}, leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}}\n",  # DR8 at 1 x 800G
    ],
    ids=["small-32", "superpod-4096", "bench-2048", "breakout-dac", "breakout-dr8", "dr8-800g"],
)
def test_cabled_bom_counts_what_one_by_one_counting_finds(write_intent, intent):
    # bom_rows counts a switch's cages per optic at once and links per kind of link: the same totals
    c = compile_intent(intent if isinstance(intent, Path) else write_intent(intent), render=False).compiled
    assert c.intent.bom.counting == "cabled" and not c.intent.bom.spares_percent
    parts = ("one per cabled switch cage", "one per link", "one per switch cage (")
    counted = {(r.section, r.pid, r.length_m): r.quantity for r in bom_rows(c) if r.basis.startswith(parts)}
    expected = _counted_one_by_one(c)
    assert counted == expected
    assert any(pid in c.catalog.transceivers and c.catalog.transceivers[pid].cable for _, pid, _ in expected)  # optics were counted


@pytest.mark.parametrize("gpus", [256, 512])
def test_octal_cables_count_each_console_servers_lines(whitepaper, gpus):
    # _octal_cables reads the console servers' own ports: the same as every console link counted by its server end
    c = whitepaper[gpus].compiled
    module = c.catalog.modules[c.intent.oob.console.module]
    lines = Counter(link.b.device.name for link in c.fabric.links if link.kind is LinkKind.CONSOLE)
    servers = [d.name for d in c.fabric.by_role(Role.CONSOLE_SERVER)]
    assert len(servers) >= 2 and sum(lines.values()) > module.ports_per_cable
    expected = sum(-(-lines[name] // module.ports_per_cable) for name in servers)
    assert _octal_cables(c) == (module.cable, expected)


def test_populate_all_against_cabled_by_hand(write_intent):
    cabled = compile_intent(write_intent(SMALL_CLUSTER, name="cabled"))
    full = compile_intent(write_intent(SMALL_CLUSTER + "bom: {counting: populate-all}\n", name="full"))
    kinds = Counter((link.network.value, link.kind.value) for link in cabled.fabric.links)
    assert kinds == {("backend", "host"): 32, ("backend", "fabric"): 32, ("frontend", "host"): 16, ("frontend", "fabric"): 14,
                     ("oob", "management"): 23, ("oob", "console"): 14, ("oob", "uplink"): 2}  # fmt: skip
    backend, frontend, oob = "Backend network", "Converged frontend and storage network", "OOB management network"
    # cabled: an optic per cabled cage (8 leaves x (4 host + 4 up) + 2 spines x 16), a cable per link
    assert bom_totals(cabled, backend) == {"N9K-C9364D-GX2A": 10, "QDD-400G-DR4-S": 96, "CB-M12-M12-SMF": 64}
    assert bom_totals(cabled, frontend) == {
        "N9K-C9364D-GX2A": 1, "N9K-C93600CD-GX": 2, "QDD-400G-DR4-S": 28, "QSFP-100G-DR-S": 16, "CB-LC-LC-SMF": 16, "CB-M12-M12-SMF": 14,
    }  # fmt: skip
    assert bom_totals(cabled, oob)["CAB-HD8-ASYNC"] == 2  # 14 console lines, 8 per octal cable
    # populate-all, by hand: every cage of the 10 backend switches (10 x 64), a cable per link plus
    # one per empty cage (64 + 640 - 96); the frontend spine's 64 cages, not the leaves' 400G
    # uplink group (its 14 cables end on the spine), and the leaves' 2 x 28 100G cages; the OOB
    # switch's 48 copper and 6 100G ports; no octal console cables (the whitepaper lists none)
    assert bom_totals(full, backend) == {"N9K-C9364D-GX2A": 10, "QDD-400G-DR4-S": 640, "CB-M12-M12-SMF": 64 + 544}
    assert bom_totals(full, frontend) == {
        "N9K-C9364D-GX2A": 1, "N9K-C93600CD-GX": 2, "QDD-400G-DR4-S": 64, "QSFP-100G-DR-S": 56, "CB-LC-LC-SMF": 56, "CB-M12-M12-SMF": 64,
    }  # fmt: skip
    assert bom_totals(full, oob) == {
        "N9K-C93108TC-FX3": 1, "QSFP-100G-DR-S": 6, "CB-LC-LC-SMF": 6, "CAB-CAT5E/6E": 48, "C8300-1N1S-4T2X": 1, "NIM-24A": 1, "GLC-TE": 1,
    }  # fmt: skip
    assert "2 CAB-HD8-ASYNC console cables" in full.files["bom.md"].decode()
    # each row says which rule counted it, and what the other rule gives
    rows = {(r["section"], r["pid"]): r for r in read_csv(full, "bom.csv")}
    optic = rows[(frontend, "QDD-400G-DR4-S")]
    assert optic["basis"].startswith("populate-all") and "64 on spines (50 empty)" in optic["basis"]
    assert "not the 14 on leaves cabled only to the next tier" in optic["basis"]
    assert "one per cabled switch cage=28" in optic["alternatives"]
    assert "one per link=14" in rows[(frontend, "CB-M12-M12-SMF")]["alternatives"]
    # devices and nodes do not depend on the rule
    assert bom_totals(full, "GPU nodes") == bom_totals(cabled, "GPU nodes") == {"DGX-H100": 4}


def test_populate_all_fills_empty_cages_with_the_downlinks_breakout_dac(write_intent):
    build = compile_intent(write_intent(BREAKOUT_DAC + "bom: {counting: populate-all}\n"))
    totals = bom_totals(build)
    # leaves: 16 DAC cages + 16 uplink cages cabled, 32 empty cages take the DAC of the host links
    assert totals["MCP7Y00-N001"] == 128 + 8 * 32
    # spines are full (2 x 64 cages, 128 leaf uplinks each); uplink optics as cabled
    assert totals["OSFP-800G-DR8"] == 256 and totals["CB-M12-M12-SMF"] == 256


@pytest.mark.parametrize(
    "rows",
    [
        [("a", "b"), ("", "")],  # plain text: joined directly
        [("a", "b,c")],  # a comma, a quote, a line break: csv quotes them
        [("a", 'say "hi"')],
        [("a", "two\nlines"), ("c", "d")],
        [("a", "b"), ("lone",), ("",)],  # a lone empty field is written as ""
        [("a", 1), ("b", None), ("c", 2.5)],  # numbers and None: the writer formats them
        [("x", "y", "z"), ("p,q", "r")],  # a comma in a short row cannot pass for a missing field
    ],
)
def test_csv_text_is_what_csv_writes(rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("h1", "h2"))
    writer.writerows(rows)
    assert csv_text(("h1", "h2"), rows) == buffer.getvalue()


# --- spreadsheet formulas (CSV injection) -------------------------------------------------------------

# Cells a spreadsheet would run as a formula (OWASP, CSV Injection): = + - @ tab and CR first.
FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "@SUM(1)", "-2+3", "\t=1+1", "\r=1+1"]
HOSTILE_NODE = """
nodes:
  EVIL-ARRAY:
    kind: storage
    description: {description}
    rack_units: 2
    storage: {{count: 2, speed: 100G, form_factor: QSFP28, names: "e{{n}}a", nic_family: ontap}}
    bmc: {{count: 1, speed: 1G, form_factor: RJ45, names: "e0M"}}
"""


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("value", FORMULAS)
def test_a_formula_cell_gets_a_leading_quote_on_every_path_of_csv_text(value):
    assert cells(csv_text(("a", "b"), [("x", value), (value, "y")]))[1:] == [["x", "'" + value], ["'" + value, "y"]]
    assert cells(csv_text(("a", "b"), [("x", value), ("n", 1)]))[1] == ["x", "'" + value]  # the csv.writer path (a number)
    # the joined fast path never lets one through: the caller writes those rows by csv_text
    assert joined_csv(("a", "b"), [f"x,{value}"], 1) is None and joined_csv(("a", "b"), [f"{value},x"], 1) is None


def test_numbers_and_the_reports_blank_marker_stay_as_they_are():
    rows = [("-", "-2"), ("-0.5", "2.5"), ("a-b", "x@y"), ("1+1", "e=mc2"), ("'quoted'", "it's")]
    assert csv_text(("a", "b"), rows) == written_by_csv(("a", "b"), rows)
    # a '-' or '@' inside a field keeps the joined fast path (names hold dashes)
    assert joined_csv(("a", "b"), ["a-b,x@y\n1+1,e=mc2"], 2) == written_by_csv(("a", "b"), rows[2:4])


def test_a_carriage_return_in_a_cell_cannot_start_a_row():
    # csv.writer leaves a CR unquoted when the line terminator is "\n": a spreadsheet would read
    # "=1+1" as the first cell of a row of its own
    text = csv_text(("a", "b"), [("x", "1\r=1+1"), ("y", 2)])
    assert cells(text) == [["a", "b"], ["x", "1\r=1+1"], ["y", "2"]]


@given(st.text(max_size=12))
def test_a_neutralised_cell_reads_back_as_it_was(value):
    written = spreadsheet_safe(value)
    assert spreadsheet_value(written) == value
    if written[:1] in ("=", "+", "-", "@", "\t", "\r"):
        assert written == "-" or re.fullmatch(r"-[0-9]+(\.[0-9]+)?", written), written


@pytest.mark.parametrize("value", FORMULAS)
def test_cabling_and_ip_plan_neutralise_a_formula_in_any_cell(write_intent, value):
    # a rack or port name of an edited build's kind, put past every trust check
    build = compile_intent(write_intent("gpus: 32\n"))
    link = build.fabric.links[0]
    link.a.device.rack, link.a.device.ru = value, 3
    port = next(p for p in build.fabric.devices["be-spine01"].ports.values() if p in build.addresses.interfaces)
    port.name = value
    cabling_csv = cells(render_cabling(build.compiled)["cabling.csv"])
    column = {name: COLUMNS_CABLING.index(name) for name in COLUMNS_CABLING}
    assert cabling_csv[1][column["a_rack"]] == "'" + value
    ends = [(row[column[f"{side}_device"]], row[column[f"{side}_port"]]) for row in cabling_csv[1:] for side in "ab"]
    assert ("be-spine01", "'" + value) in ends
    ip_csv = cells(render_ip_plan(build.compiled)["ip-plan.csv"])
    assert ["be-spine01", "'" + value] in [row[1:3] for row in ip_csv]
    for table in (cabling_csv, ip_csv):
        assert not [cell for row in table for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and cell != "-"]


@pytest.mark.parametrize("value", FORMULAS[:4])
def test_a_catalog_description_reaches_bom_csv_neutralised_and_reads_back(tmp_path, write_intent, value):
    (tmp_path / "hw.yaml").write_text(HOSTILE_NODE.format(description=json.dumps(value)))
    build = compile_intent(write_intent("catalog: [hw.yaml]\ngpus: 256\nfrontend: {}\nstorage_nodes: {model: EVIL-ARRAY, count: 2}\n"))
    row = next(r for r in read_csv(build, "bom.csv") if r["pid"] == "EVIL-ARRAY")
    assert row["description"] == "'" + value
    parsed = read_rows(build.files["bom.csv"].decode(), BomRow, "bom.csv", DiffError)  # as every command reads a build's bom.csv
    assert next(r for r in parsed if r.pid == "EVIL-ARRAY").description == value
