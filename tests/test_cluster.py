"""The whole cluster: frontend/storage fabrics, OOB management and console, the complete BOM
against the whitepaper's components table, and the design's bad-input errors."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest
from netaddr import IPNetwork

from fabricgen.basics.errors import DesignError, IntentError
from fabricgen.compiler.design.graph import SERVER_ROLES, LinkKind, Network, Role
from fabricgen.compiler.pipeline import build, compile_intent
from fabricgen.reports.bom_compare import compare_bom
from tests import cli_runner

REPO = Path(__file__).parent.parent

REFERENCES = Path(__file__).parent / "data"

# The whitepaper's components table (shared/seeds/000_dac0e30783cd1e24.txt): every device count.
WHITEPAPER_DEVICES = {
    256: {
        ("Converged frontend and storage network", "N9K-C9364D-GX2A"): 2,
        ("Converged frontend and storage network", "N9K-C93600CD-GX"): 8,
        ("OOB management network", "N9K-C93108TC-FX3"): 4,
        ("OOB management network", "C8300-1N1S-4T2X"): 2,
        ("OOB management network", "NIM-24A"): 2,
        ("OOB management network", "GLC-TE"): 2,
        ("GPU nodes", "DGX-H100"): 32,
        ("Management nodes", "UCSC-C225-M8S"): 8,
        ("Storage nodes", "AFF-A90"): 4,
        ("Management platform", "ND-CLUSTER-L4"): 1,
        ("Backend network", "N9K-C9364D-GX2A"): 12,
        ("Backend network", "QDD-400G-DR4-S"): 768,
        ("Backend network", "CB-M12-M12-SMF"): 512,
    },
    512: {
        ("Converged frontend and storage network", "N9K-C9364D-GX2A"): 4,
        ("Converged frontend and storage network", "N9K-C93600CD-GX"): 10,
        ("OOB management network", "N9K-C93108TC-FX3"): 8,
        ("OOB management network", "C8300-1N1S-4T2X"): 4,
        ("OOB management network", "NIM-24A"): 4,
        ("OOB management network", "GLC-TE"): 4,
        ("GPU nodes", "DGX-H200"): 64,
        ("Management nodes", "UCSC-C225-M8S"): 8,
        ("Storage nodes", "AFF-A90"): 4,
        ("Management platform", "ND-CLUSTER-L4"): 1,
        ("Backend network", "N9K-C9364D-GX2A"): 24,
        ("Backend network", "QDD-400G-DR4-S"): 1536,
        ("Backend network", "CB-M12-M12-SMF"): 1024,
    },
}


def bom(build_result) -> dict[tuple[str, str], int]:
    rows = csv.DictReader(io.StringIO(build_result.files["bom.csv"].decode()))
    totals: Counter[tuple[str, str]] = Counter()
    for row in rows:
        totals[(row["section"], row["pid"])] += int(row["quantity"])
    return dict(totals)


@pytest.mark.parametrize("gpus", [256, 512])
def test_whitepaper_device_counts_exactly(whitepaper, gpus):
    rows = bom(whitepaper[gpus])
    for key, quantity in WHITEPAPER_DEVICES[gpus].items():
        assert rows.get(key) == quantity, key


def cabled(gpus: int, directory: Path) -> Path:
    """The shipped whitepaper intent with the BOM counted by the default rule (cabled cages and links)."""
    text = (Path(__file__).parents[1] / "intents" / f"cisco-{gpus}-gpu.yaml").read_text()
    assert "bom: {counting: populate-all}" in text
    path = directory / f"cisco-{gpus}-gpu.yaml"
    path.write_text(text.replace("bom: {counting: populate-all}", "bom: {counting: cabled}"))
    return path


@pytest.mark.parametrize("gpus", [256, 512])
def test_bom_compare_explains_every_whitepaper_difference(whitepaper, gpus, tmp_path):
    build(cabled(gpus, tmp_path), tmp_path / "b")
    result = compare_bom(tmp_path / "b", REFERENCES / f"whitepaper-{gpus}-gpu.csv")
    differ = {(r.section, r.pid): r for r in result.rows if not r.equal}
    # devices and the backend are exact; the frontend and OOB optics and cables follow the cabling
    assert all(key not in differ for key in WHITEPAPER_DEVICES[gpus]), sorted(differ)
    spines = 2 if gpus == 256 else 4
    trunks = differ[("Converged frontend and storage network", "CB-M12-M12-SMF")]
    assert trunks.build == 8 * (8 if gpus == 256 else 10)  # one per leaf uplink
    assert trunks.reference == 64 * spines and f"every QSFP-DD 400G cage of the {spines} spines" in trunks.cause
    copper = differ[("OOB management network", "CAB-CAT5E/6E")]
    assert copper.reference == 48 * (4 if gpus == 256 else 8) and "every copper port of the" in copper.cause
    assert differ[("OOB management network", "CAB-HD8-ASYNC")].reference is None  # the whitepaper omits them
    if gpus == 512:  # 10 leaves are full: every 100G port is cabled, as the whitepaper counts
        assert ("Converged frontend and storage network", "QSFP-100G-DR-S") not in differ


def test_bom_compare_command_exit_codes(whitepaper, tmp_path):
    build(cabled(256, tmp_path), tmp_path / "b")
    run = ["bom", "compare", str(tmp_path / "b")]
    differs = cli_runner.fabricgen(*run, str(REFERENCES / "whitepaper-256-gpu.csv"))
    assert differs.returncode == 1 and "QDD-400G-DR4-S" in differs.stdout
    own = tmp_path / "own.csv"
    own.write_bytes((tmp_path / "b" / "bom.csv").read_bytes())
    same = cli_runner.fabricgen(*run, str(own))
    assert same.returncode == 0, same.stdout


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_mgmt0_console_and_bmc_is_cabled_and_addressed(whitepaper, gpus):
    b = whitepaper[gpus]
    catalog = b.compiled.catalog
    management = {(l.a.device.name, l.a.name) for l in b.fabric.links if l.kind is LinkKind.MANAGEMENT}
    console = {(l.a.device.name, l.a.name) for l in b.fabric.links if l.kind is LinkKind.CONSOLE}
    for device in b.fabric.devices.values():
        if device.is_switch:
            model = catalog.switches[device.model]
            assert (device.name, model.management_port[device.nos]) in management, device.name
            assert (device.name, "console") in console, device.name
        elif device.role in SERVER_ROLES:
            node = catalog.nodes[device.model]
            assert (device.name, node.bmc.names.format(n=1)) in management, device.name
    addressed = {(p.device.name, p.name) for p in b.addresses.management}
    assert addressed == management
    # an OOB switch's mgmt0 is on another OOB switch, never on itself
    for link in b.fabric.links:
        if link.kind is LinkKind.MANAGEMENT and link.a.device.role is Role.OOB_SWITCH:
            assert link.b.device is not link.a.device


@pytest.mark.parametrize("gpus", [256, 512])
def test_address_plans_of_the_networks_never_overlap(whitepaper, gpus):
    rows = list(csv.DictReader(io.StringIO(whitepaper[gpus].files["ip-plan.csv"].decode())))
    spans: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        net = IPNetwork(row["address"])
        spans.setdefault(row["network"], []).append((net.first, net.last))
    assert set(spans) == {"backend", "frontend", "oob"}
    bounds = {name: (min(f for f, _ in s), max(last for _, last in s)) for name, s in spans.items()}
    names = sorted(bounds)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (a_first, a_last), (b_first, b_last) = bounds[a], bounds[b]
            assert a_last < b_first or b_last < a_first, (a, b)
    # an EVPN anycast gateway is one address on every leaf of its segment; every other address is one port's
    unique = [row for row in rows if row["kind"] != "anycast-gateway"]
    assert len({row["address"].split("/")[0] for row in unique}) == len(unique)
    anycast = {(row["address"], row["interface"]) for row in rows if row["kind"] == "anycast-gateway"}
    assert len({address for address, _ in anycast}) == len(anycast)  # one VLAN per gateway
    assert not {address.split("/")[0] for address, _ in anycast} & {row["address"].split("/")[0] for row in unique}


def test_gpu_frontend_and_storage_ports_spread_over_a_leaf_pair(whitepaper):
    b = whitepaper[256]
    for node in b.fabric.by_role(Role.GPU_NODE):
        leaves = Counter(p.link.other(p).device.name for p in node.ports.values() if p.link.network is Network.FRONTEND)
        assert sum(leaves.values()) == 4 and len(leaves) == 2 and set(leaves.values()) == {2}, node.name


def test_separate_storage_fabric_with_lossless_storage(write_intent):
    path = write_intent(
        """
        gpus: 128
        frontend:
          storage: separate
          spine: {model: N9K-C9364D-GX2A}
        storage:
          leaf: {model: N9K-C93600CD-GX, nos: sonic}
          spine: {model: N9K-C9364D-GX2A, nos: sonic}
          qos: {enabled: true, roce_dscp: [26], lossless_priority: 4, cnp_priority: 6}
        storage_nodes: {model: AFF-A90, count: 4}
        management_nodes: {model: UCSC-C225-M8S, count: 2}
        """
    )
    b = compile_intent(path)
    storage_leaves = list(b.fabric.by_role(Role.LEAF, Network.STORAGE))
    assert storage_leaves and all(leaf.nos == "sonic" for leaf in storage_leaves)
    for node in b.fabric.by_role(Role.STORAGE_NODE):
        assert {p.link.network for p in node.ports.values()} == {Network.STORAGE}
    gpu = next(b.fabric.by_role(Role.GPU_NODE))
    assert Counter(p.link.network for p in gpu.ports.values()) == {Network.BACKEND: 8, Network.FRONTEND: 2, Network.STORAGE: 2}
    leaf_db = b.files[f"configs/{storage_leaves[0].name}/config_db.json"].decode()
    assert '"pfc_enable": "4"' in leaf_db
    frontend_leaf = next(b.fabric.by_role(Role.LEAF, Network.FRONTEND))
    assert "priority-flow-control" not in b.files[f"configs/{frontend_leaf.name}.cfg"].decode()  # lossless only where asked


def test_pinned_leaves_below_what_the_servers_need_is_an_error(write_intent):
    path = write_intent("gpus: 512\nfrontend:\n  leaf: {model: N9K-C93600CD-GX, count: 4}\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    report = caught.value.report()
    assert "frontend.leaf.count" in report and "the servers need 10" in report and f"{path}:3" in report


USER_STORAGE = """
nodes:
  BLOCK-ONLY-ARRAY:
    kind: storage
    description: Storage array with only Fibre Channel host ports
    rack_units: 2
    bmc: {count: 1, speed: 1G, form_factor: RJ45, names: "mgmt"}
"""


def test_a_storage_node_without_storage_ports_is_an_error(write_intent, tmp_path):
    (tmp_path / "hw.yaml").write_text(USER_STORAGE)
    path = write_intent("catalog: [hw.yaml]\ngpus: 256\nfrontend: {}\nstorage_nodes:\n  model: BLOCK-ONLY-ARRAY\n  count: 2\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    report = caught.value.report()
    assert f"{path}:5: storage_nodes.model" in report and "BLOCK-ONLY-ARRAY has no storage ports" in report


def test_a_storage_node_of_the_wrong_kind_is_an_error(write_intent):
    path = write_intent("gpus: 256\nfrontend: {}\nstorage_nodes: {model: UCSC-C225-M8S, count: 2}\n")
    with pytest.raises(IntentError) as caught:
        compile_intent(path)
    assert f"{path}:3: storage_nodes.model" in caught.value.report()


def test_overlapping_pools_across_networks_is_an_error(write_intent):
    path = write_intent("gpus: 256\nfrontend:\n  pools:\n    loopbacks: 10.0.0.0/16\n    hosts: 10.20.0.0/14\n    fabric_links: 10.24.0.0/14\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    assert f"{path}:4: frontend.pools.loopbacks" in caught.value.report() and "overlaps backend.pools.loopbacks" in caught.value.report()


def test_oob_count_pinned_too_low_is_an_error(write_intent):
    path = write_intent("gpus: 512\nfrontend: {}\noob:\n  switch: {model: N9K-C93108TC-FX3, count: 1}\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    assert f"{path}:4: oob.switch.count" in caught.value.report()


LAYOUT_INTENT = """
gpus: 256
frontend: {}
storage_nodes: {model: AFF-A90, count: 4}
layout:
  racks_per_row: %d
  row_pitch_m: 20
  gpu_nodes_per_rack: 4
"""


def cabling(build_result) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(build_result.files["cabling.csv"].decode())))


def test_a_rack_layout_gives_lengths_and_the_medium_that_reaches(write_intent):
    # one rack per row, rows 20 m apart: the far GPU racks are well beyond multimode reach
    b = compile_intent(write_intent(LAYOUT_INTENT % 1))
    catalog = b.compiled.catalog
    rows = [r for r in cabling(b) if r["kind"] != "console" and r["b_device"] != "mgmt-core"]
    assert all(r["length_m"] and r["a_rack"] and r["b_rack"] and r["b_ru"] for r in rows)
    backend_host = [r for r in rows if r["network"] == "backend" and r["kind"] == "host"]
    media = {}
    for r in backend_host:
        optic = catalog.transceivers[r["b_optic"]]
        length = float(r["length_m"])
        assert optic.reach_m >= length, r
        media.setdefault(optic.media, []).append(length)
    assert "smf" in media and min(media["smf"]) > 100  # single-mode only where multimode cannot reach
    assert "mmf" in media and max(media["mmf"]) <= 100
    # switches in the same network rack: short direct-attach copper between leaf and spine
    fabric = [r for r in rows if r["kind"] == "fabric" and r["a_rack"] == r["b_rack"]]
    assert fabric and all(catalog.transceivers[r["b_optic"]].media == "dac" and r["cable"] == "" for r in fabric)
    # cables counted by PID and length in the BOM
    trunk_rows = [line for line in b.files["bom.csv"].decode().splitlines() if line.startswith("Backend network,CB-M12-M12-SMF")]
    assert len(trunk_rows) >= 2  # several standard lengths


def test_a_layout_puts_pdus_in_every_rack_on_the_oob_network(write_intent):
    b = compile_intent(write_intent((LAYOUT_INTENT % 10).replace("frontend: {}", "frontend: {}\noob: {}")))
    rows = cabling(b)
    racks = {r[f"{side}_rack"] for r in rows for side in "ab"} - {""}
    pdus = [r for r in rows if r["a_device"].startswith("pdu-")]
    assert {r["a_rack"] for r in pdus} == racks and len(pdus) == 2 * len(racks)
    assert all(r["kind"] == "management" and r["b_device"].startswith("oob") for r in pdus)


def test_a_long_room_gets_oob_switches_in_every_row_within_copper_reach(write_intent):
    # ten rows 20 m apart: from network racks at the end, row 1 would be ~190 m of copper away
    b = compile_intent(write_intent((LAYOUT_INTENT % 1).replace("frontend: {}", "frontend: {}\noob: {}")), render=False)
    fabric = b.fabric
    racks = {d.rack for d in fabric.devices.values() if d.rack}
    switches = list(fabric.by_role(Role.OOB_SWITCH))
    assert {s.rack for s in switches} == racks  # one rack per row: an OOB switch in each
    for switch in switches:
        served = {
            p.link.other(p).device.rack
            for p in switch.ports.values()
            if p.link.kind is LinkKind.MANAGEMENT and p.link.other(p).device.role is not Role.OOB_SWITCH
        }
        assert served == {switch.rack}, switch.name  # it serves its own row only
    copper = [link for link in fabric.links if link.kind is LinkKind.MANAGEMENT]
    assert copper and max(link.length_m for link in copper) <= 100


def test_copper_beyond_100_m_is_an_error_naming_the_runs(write_intent):
    # one row of 130 racks 2 m wide: an OOB switch in the middle of the row is still ~130 m from its ends
    path = write_intent("gpus: 1024\noob: {}\nlayout:\n  racks_per_row: 200\n  rack_width_m: 2\n  gpu_nodes_per_rack: 1\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    report = caught.value.report()
    assert f"{path}:3: layout: MG-" in report and "100 m" in report and "more links with the same problem" in report


def test_without_a_layout_lengths_stay_empty_and_optics_default(whitepaper):
    rows = cabling(whitepaper[256])
    assert all(r["length_m"] == "" and r["a_rack"] == "" for r in rows)
    assert {r["b_optic"] for r in rows if r["network"] == "backend"} == {"QDD-400G-DR4-S"}


def test_a_layout_with_too_few_racks_is_an_error(write_intent):
    path = write_intent((LAYOUT_INTENT % 10) + "  racks: 4\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    report = caught.value.report()
    assert f"{path}:8: layout.racks" in report and "8 GPU racks" in report


def test_summary_names_what_the_whitepaper_intents_pin(whitepaper):
    notes = whitepaper[512].compiled.notes
    assert "frontend: 4 spines as pinned (2 would take the uplinks)" in notes
    assert not any(note.startswith("frontend: 10 leaves") for note in notes)  # 10 leaves are computed
    assert "frontend: 8 leaves at least, as asked (6 would hold every server port)" in whitepaper[256].compiled.notes
    assert "4 spines as pinned" in whitepaper[512].files["summary.md"].decode()
    assert "oob: 4 N9K-C93108TC-FX3 OOB switches at least, as asked (3 would do)" in whitepaper[256].compiled.notes


def test_at_least_builds_what_the_design_needs_once_it_grows_past_it(write_intent):
    """The white paper's 256-GPU intent keeps its deployed counts as at_least: grown to 512 GPUs it
    builds the 10 frontend leaves and 5 OOB switches the design needs (count would be refused)."""
    text = (REPO / "intents" / "cisco-256-gpu.yaml").read_text().replace("\ngpus: 256\n", "\ngpus: 512\n")
    compiled = compile_intent(write_intent(text), render=False).compiled
    assert len(list(compiled.fabric.by_role(Role.LEAF, Network.FRONTEND))) == 10
    assert len(list(compiled.fabric.by_role(Role.OOB_SWITCH))) == 5
    refused = text.replace("at_least: 8", "count: 8")
    with pytest.raises(DesignError, match="the intent pins 8"):
        compile_intent(write_intent(refused), render=False)
    with pytest.raises(IntentError, match=r"count .* or at_least .*not both"):
        compile_intent(write_intent(text.replace("at_least: 8", "at_least: 8, count: 8")), render=False)


def test_pinning_fewer_oob_switches_than_rows_says_why(write_intent):
    path = write_intent((LAYOUT_INTENT % 1).replace("frontend: {}", "frontend: {}\noob: {switch: {model: N9K-C93108TC-FX3, count: 4}}"))
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    assert "the cluster needs 10 N9K-C93108TC-FX3 OOB switches (every row has its own), the intent pins 4" in caught.value.report()


def test_oob_port_counts_are_the_ports_cabled(whitepaper):
    """The OOB layout counts each device's management ports without making them: the count is
    the number of ports build_oob cables, for every kind of device on the OOB network."""
    from fabricgen.compiler.design.graph import Device
    from fabricgen.compiler.design.oob import _endpoint_port_count, _endpoint_ports

    compiled = whitepaper[256].compiled
    devices = [d for d in compiled.fabric.devices.values() if d.role is not Role.MANAGEMENT_CORE and d.role is not Role.OOB_SWITCH]
    devices.append(Device("pdu-r01-01-1", Role.PDU, Network.OOB, "PDU", None, 1))
    assert {d.role for d in devices} >= {*SERVER_ROLES, Role.LEAF, Role.SPINE, Role.CONSOLE_SERVER, Role.PDU}
    for device in devices:
        assert _endpoint_port_count(compiled.catalog, device) == len(_endpoint_ports(compiled.catalog, device)), device.name
    node = compiled.fabric.devices["gpu0001"]  # and a GPU node's count is its management links as built
    cabled = [p for p in node.ports.values() if p.link.kind is LinkKind.MANAGEMENT]
    assert _endpoint_port_count(compiled.catalog, node) == len(cabled) >= 1
