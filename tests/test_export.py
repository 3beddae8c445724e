"""`fabricgen export`: every format from the whitepaper's 256-GPU build (and its SONiC twin, and a
copy with a rack layout), checked against the build's own files read independently here (csv and
json, not the export's reader) and, where the tool is installable, by the tool itself: Nornir's
SimpleInventory, ansible-inventory, Graphviz's dot."""

from __future__ import annotations

import csv
import filecmp
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricgen.build.secrets import dummy_secrets, names_in
from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent
from tests.conftest import INTENTS
from tests.push_build import rehash

runner = CliRunner()
FORMATS = ("containerlab", "batfish", "nornir", "ansible", "netbox", "diagram")


def _variant(directory: Path, name: str, edit) -> Path:
    text = edit((INTENTS / "cisco-256-gpu.yaml").read_text()).replace("name: cisco-256-gpu", f"name: {name}")
    intent = directory / f"{name}.yaml"
    intent.write_text(text)
    destination = directory / name
    build_intent(intent, destination)
    return destination


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 256-GPU build as shipped (NX-OS), with every fabric switch on SONiC, and with a layout."""
    directory = tmp_path_factory.mktemp("export-builds")
    nxos = directory / "cisco-256-gpu"
    build_intent(INTENTS / "cisco-256-gpu.yaml", nxos)
    sonic = _variant(
        directory,
        "c256-sonic",
        lambda t: t.replace("nos: nxos", "nos: sonic").replace("N9K-C93108TC-FX3, nos: sonic", "N9K-C93108TC-FX3, nos: nxos"),
    )
    layout = _variant(directory, "c256-layout", lambda t: t + "\nlayout: {}\n")
    return {"nxos": nxos, "sonic": sonic, "layout": layout}


def export(fmt: str, build_dir: Path, destination: Path, *options: str) -> Path:
    result = runner.invoke(app, ["export", fmt, str(build_dir), "-o", str(destination), *options])
    assert result.exit_code == 0, result.output
    return destination


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def tree(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}


# --- every format ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_writes_its_files_with_a_manifest_and_byte_identical_twice(builds, tmp_path, fmt):
    first = export(fmt, builds["nxos"], tmp_path / "a")
    second = export(fmt, builds["nxos"], tmp_path / "b")
    files = tree(first)
    assert files == tree(second) and len(files) > 1
    mismatch = filecmp.cmpfiles(first, second, sorted(files), shallow=False)[1:]
    assert mismatch == ([], []), f"{fmt}: not byte-identical: {mismatch}"
    manifest = json.loads((first / "manifest.json").read_text())
    assert set(manifest["files"]) == files - {"manifest.json"}
    assert manifest["intent"]["file"].endswith("cisco-256-gpu.yaml")
    # a second export into the same directory replaces it (it is an export of ours)
    export(fmt, builds["nxos"], first)


def test_an_edited_build_is_refused_naming_the_file_and_nothing_is_written(builds, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(builds["nxos"], edited)
    with open(edited / "cabling.csv", "a") as handle:
        handle.write("BE-99999,backend,host,gpu0001,nic9,,,,be-su01-leaf1,Ethernet1/64,,,,,,400G\n")
    for fmt in FORMATS:
        result = runner.invoke(app, ["export", fmt, str(edited), "-o", str(tmp_path / fmt)])
        assert result.exit_code == 2, result.output
        assert "cabling.csv" in result.output and "Traceback" not in result.output
        assert not (tmp_path / fmt).exists()


def test_the_export_never_lands_in_the_build_or_over_someone_elses_directory(builds, tmp_path):
    build_copy = tmp_path / "build"
    shutil.copytree(builds["nxos"], build_copy)
    for destination in (build_copy, build_copy / "batfish"):
        result = runner.invoke(app, ["export", "batfish", str(build_copy), "-o", str(destination)])
        assert result.exit_code == 2 and "overwrite the build" in result.output, result.output
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep me")
    result = runner.invoke(app, ["export", "nornir", str(build_copy), "-o", str(foreign)])
    assert result.exit_code == 2 and "mine.txt" in result.output
    assert tree(foreign) == {"mine.txt"}


def test_the_default_destination_is_beside_the_build(builds, tmp_path):
    build_copy = tmp_path / "fabric"
    shutil.copytree(builds["nxos"], build_copy)
    result = runner.invoke(app, ["export", "ansible", str(build_copy)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "fabric-ansible" / "inventory.yaml").is_file()


def test_a_switch_of_a_nos_fabricgen_has_no_package_for_exports_as_any_switch(builds, tmp_path):
    """A build whose switches run a NOS this fabricgen has no package for (one written where a
    plug-in NOS was installed) still exports: no Ansible vars, a NetBox platform and a Nornir
    platform named after the NOS, its .cfg as Batfish reads it without a header, FRR running its
    twin in containerlab."""
    edited = tmp_path / "build"
    shutil.copytree(builds["nxos"], edited)
    topology = json.loads((edited / "topology.json").read_text())
    for node in topology["nodes"]:
        if node.get("network") == "backend" and node["role"] in ("leaf", "spine"):
            node["nos"] = "junos"
    (edited / "topology.json").write_text(json.dumps(topology, indent=2))
    rehash(edited, "topology.json")

    inventory = yaml.safe_load((export("ansible", edited, tmp_path / "ansible") / "inventory.yaml").read_text())
    assert "vars" not in inventory["all"]["children"]["junos"] and inventory["all"]["children"]["nxos"]["vars"]
    groups = yaml.safe_load((export("nornir", edited, tmp_path / "nornir") / "groups.yaml").read_text())
    assert groups["junos"] == {"platform": "junos", "data": {"nos": "junos"}}
    platforms = rows(export("netbox", edited, tmp_path / "netbox") / "platforms.csv")
    assert {"name": "junos", "slug": "junos", "manufacturer": ""} in platforms
    batfish = export("batfish", edited, tmp_path / "batfish")
    built = (edited / "configs/be-su01-leaf1.cfg").read_text()
    assert (batfish / "configs/be-su01-leaf1.cfg").read_text().splitlines()[0] == built.splitlines()[0] != "!RANCID-CONTENT-TYPE: cisco-nx"
    nodes = yaml.safe_load((export("containerlab", edited, tmp_path / "clab") / "cisco-256-gpu.clab.yml").read_text())["topology"]["nodes"]
    assert nodes["be-su01-leaf1"]["kind"] == "linux" and nodes["be-su01-leaf1"]["labels"]["fabricgen.nos"] == "junos"


# --- containerlab ------------------------------------------------------------------------------


def _links(topology: dict) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    links = []
    for link in topology["topology"]["links"]:
        a, b = (tuple(end.split(":", 1)) for end in link["endpoints"])
        links.append((a, b))
    return links


def test_containerlab_wires_every_backend_cable_once(builds, tmp_path):
    out = export("containerlab", builds["nxos"], tmp_path / "clab")
    topology = yaml.safe_load((out / "cisco-256-gpu.clab.yml").read_text())
    cables = [r for r in rows(builds["nxos"] / "cabling.csv") if r["network"] == "backend"]
    links = _links(topology)
    # one link per cable, the same device pairs, no interface used twice
    assert len(links) == len(cables) == 512
    assert sorted(tuple(sorted((a[0], b[0]))) for a, b in links) == sorted(tuple(sorted((c["a_device"], c["b_device"]))) for c in cables)
    ends = [end for link in links for end in link]
    assert len(ends) == len(set(ends)), "an interface is wired twice"
    for device, ifname in ends:  # Linux interface names: at most 15 characters, no '/'
        assert len(ifname) <= 15 and "/" not in ifname and " " not in ifname, (device, ifname)
    # the cable comment names the build's ports: gpu0001 nic1 -> be-su01-leaf1 Ethernet1/1 is eth1-1
    text = (out / "cisco-256-gpu.clab.yml").read_text()
    assert '# BE-00001: gpu0001 nic1 - be-su01-leaf1 Ethernet1/1 (400G)\n    - endpoints: ["gpu0001:nic1", "be-su01-leaf1:eth1-1"]' in text


def test_containerlab_nodes_run_the_routing_twins_with_the_ip_plan(builds, tmp_path):
    out = export("containerlab", builds["nxos"], tmp_path / "clab")
    nodes = yaml.safe_load((out / "cisco-256-gpu.clab.yml").read_text())["topology"]["nodes"]
    leaf = nodes["be-su01-leaf1"]
    assert leaf["kind"] == "linux" and leaf["image"].startswith("quay.io/frrouting/frr:")
    assert leaf["binds"] == ["frr/be-su01-leaf1/frr.conf:/etc/frr/frr.conf", "frr/be-su01-leaf1/daemons:/etc/frr/daemons"]
    twin = (builds["nxos"] / "lab/frr/be-su01-leaf1.conf").read_text()  # its keys stand-ins, as every node's of the lab
    assert (out / "frr/be-su01-leaf1/frr.conf").read_text() == dummy_secrets({"lab/frr/be-su01-leaf1.conf": twin}).fill(twin)
    daemons = (out / "frr/be-su01-leaf1/daemons").read_text()
    assert "bgpd=yes" in daemons and "bfdd=yes" in daemons and "zebra=yes" in daemons
    assert leaf["sysctls"]["net.ipv4.ip_forward"] == 1
    plan = {(r["device"], r["interface"]): r for r in rows(builds["nxos"] / "ip-plan.csv") if r["network"] == "backend"}
    loopback = next(r["address"] for (d, _), r in plan.items() if d == "be-su01-leaf1" and r["kind"] == "loopback")
    assert f"ip address add {loopback} dev lo" in leaf["exec"]
    assert f"ip address add {plan['be-su01-leaf1', 'Ethernet1/33']['address']} dev eth1-33" in leaf["exec"]
    gpu = nodes["gpu0001"]
    assert gpu["kind"] == "linux" and f"ip address add {plan['gpu0001', 'nic1']['address']} dev nic1" in gpu["exec"]
    assert any(command.startswith("ip rule add from ") for command in gpu["exec"])  # the per-NIC routing tables
    assert gpu["labels"]["fabricgen.scalable-unit"] == "1"


def test_containerlab_runs_sonic_switches_beyond_the_sonic_vs_image_as_frr_twins(builds, tmp_path):
    """The 256-GPU build's SONiC leaves cable 64 ports and SONiC-VS holds 32 (its Force10-S6000):
    each runs as FRR with the build's frr.conf, says so, and keeps its SONiC port names
    (tests/test_export_containerlab.py has the switches the image holds)."""
    result = runner.invoke(app, ["export", "containerlab", str(builds["sonic"]), "-o", str(tmp_path / "clab")])
    assert result.exit_code == 0, result.output
    assert "note: be-su01-leaf1: 64 cabled ports, docker-sonic-vs:latest (Force10-S6000) holds 32" in result.output
    out = tmp_path / "clab"
    topology = yaml.safe_load((out / "c256-sonic.clab.yml").read_text())
    nodes = topology["topology"]["nodes"]
    assert nodes["be-su01-leaf1"]["kind"] == "linux" and "exec" in nodes["be-su01-leaf1"]
    assert (out / "frr/be-su01-leaf1/frr.conf").is_file()
    leaf = sorted(ifname for link in _links(topology) for device, ifname in link if device == "be-su01-leaf1")
    assert len(leaf) == 64 and all(ifname.startswith("Ethernet") for ifname in leaf)


def test_containerlab_takes_the_image_option_of_each_nos_package(builds, tmp_path):
    """--sonic-image and --ceos-image come from the NOS packages (ExportParts.containerlab), under
    the names users' scripts already pass (tests/test_export_containerlab.py sees --sonic-image's
    image on the SONiC-VS nodes)."""
    help_text = runner.invoke(app, ["export", "containerlab", "--help"]).output
    assert "--sonic-image" in help_text and "--ceos-image" in help_text
    result = runner.invoke(app, ["export", "containerlab", str(builds["sonic"]), "-o", str(tmp_path / "bad"), "--sonic-image", "sonic vs"])
    assert result.exit_code == 2 and "--sonic-image" in result.output and "is not an image reference" in result.output
    assert not (tmp_path / "bad").exists()


def test_containerlab_exports_the_frontend_and_refuses_an_unknown_network(builds, tmp_path):
    out = export("containerlab", builds["nxos"], tmp_path / "fe", "--network", "frontend")
    topology = yaml.safe_load((out / "cisco-256-gpu-frontend.clab.yml").read_text())
    frontend = [r for r in rows(builds["nxos"] / "cabling.csv") if r["network"] == "frontend" and r["kind"] in ("host", "fabric")]
    assert len(_links(topology)) == len(frontend)
    result = runner.invoke(app, ["export", "containerlab", str(builds["nxos"]), "-o", str(tmp_path / "x"), "--network", "storage"])
    assert result.exit_code == 2 and "no storage fabric" in result.output and not (tmp_path / "x").exists()
    result = runner.invoke(app, ["export", "containerlab", str(builds["nxos"]), "-o", str(tmp_path / "y"), "--frr-image", "frr\nexec: rm"])
    assert result.exit_code == 2 and "--frr-image" in result.output and not (tmp_path / "y").exists()
    result = runner.invoke(app, ["export", "containerlab", str(builds["nxos"]), "-o", str(tmp_path / "z"), "--network", "mgmt"])
    assert result.exit_code == 2 and "Invalid value for '--network'" in result.output and not (tmp_path / "z").exists()


def test_containerlab_builds_the_evpn_leaves_bridges_and_vxlan_devices(tmp_path):
    build_dir = tmp_path / "cisco-512-gpu"
    build_intent(INTENTS / "cisco-512-gpu.yaml", build_dir)  # VXLAN EVPN backend, a segment per rail
    overlay = json.loads((build_dir / "lab/overlay.json").read_text())
    out = export("containerlab", build_dir, tmp_path / "clab")
    nodes = yaml.safe_load((out / "cisco-512-gpu.clab.yml").read_text())["topology"]["nodes"]
    leaf = overlay["be-su01-leaf1"]
    segment = leaf["segments"][0]
    commands = nodes["be-su01-leaf1"]["exec"]
    bridge = f"br{segment['vlan']}"
    assert f"ip link add name vx{segment['vni']} type vxlan id {segment['vni']} local {leaf['vtep']} dstport 4789 nolearning" in commands
    assert f"ip address add {segment['gateway']} dev {bridge}" in commands
    assert "ip link set dev eth1-1 master " + bridge in commands  # Ethernet1/1, a server port, is bridged, not addressed
    assert not any(c.endswith(" dev eth1-1") and c.startswith("ip address add") for c in commands)


def test_containerlab_leaves_hold_the_servers_gateway_in_subnet_mode(tmp_path):
    """nic_addressing: subnet: the leaf's gateway (its Vlan SVI in the IP plan) is a bridge holding
    the gateway address with the server ports in it, as `fabricgen lab up` builds it: the servers'
    netplan routes go via that address. (The export used to set only the ports' MTU there.)"""
    import csv as csv_module

    intent = tmp_path / "subnet.yaml"
    intent.write_text("name: subnet\ngpus: 32\nbackend: {nic_addressing: subnet, subnet_vlan: 300}\n")
    build_dir = tmp_path / "subnet"
    build_intent(intent, build_dir)
    with open(build_dir / "ip-plan.csv", newline="") as handle:
        gateways = [r for r in csv_module.DictReader(handle) if r["network"] == "backend" and r["kind"] == "gateway"]
    assert gateways, "a subnet-mode leaf has a gateway SVI"
    out = export("containerlab", build_dir, tmp_path / "clab")
    nodes = yaml.safe_load((out / "subnet.clab.yml").read_text())["topology"]["nodes"]
    for gateway in gateways:
        commands = nodes[gateway["device"]]["exec"]
        assert f"ip address add {gateway['address']} dev br300" in commands, commands
        assert any(c.startswith("ip link set dev ") and c.endswith(" master br300") for c in commands)
    gpu = nodes["gpu0001"]["exec"]
    via = {c.split(" via ")[1].split()[0] for c in gpu if " via " in c}
    assert via and via <= {g["address"].split("/")[0] for g in gateways}  # the hosts' next hops are those gateways


# --- Batfish -----------------------------------------------------------------------------------


def test_batfish_snapshot_has_the_layout_batfish_reads(builds, tmp_path):
    topology = json.loads((builds["sonic"] / "topology.json").read_text())
    switches = {n["id"]: n["nos"] for n in topology["nodes"] if n.get("nos")}
    out = export("batfish", builds["sonic"], tmp_path / "bf")
    expected = {f"configs/{name}.cfg" for name, nos in switches.items() if nos == "nxos"}
    expected |= {f"sonic_configs/{name}/{file}" for name, nos in switches.items() if nos == "sonic" for file in ("config_db.json", "frr.conf")}
    assert tree(out) == expected | {"batfish/layer1_topology.json", "manifest.json", "fabricgen-output.json"}
    assert any(nos == "sonic" for nos in switches.values()) and any(nos == "nxos" for nos in switches.values())
    for name, nos in switches.items():
        # the build's files, their secret placeholders as dummies (tests/test_batfish_export.py)
        if nos == "nxos":
            config = (out / f"configs/{name}.cfg").read_text()
            assert config.splitlines()[0] == "!RANCID-CONTENT-TYPE: cisco-nx"
            built = (builds["sonic"] / f"configs/{name}.cfg").read_text()
            assert config.split("\n", 1)[1] == dummy_secrets({f"configs/{name}.cfg": built}).fill(built)
        else:
            built = (builds["sonic"] / f"configs/{name}/config_db.json").read_text()
            assert (out / f"sonic_configs/{name}/config_db.json").read_text() == dummy_secrets({f"configs/{name}/config_db.json": built}).fill(
                built, in_json=True
            )
    assert names_in((out / "sonic_configs/be-spine01/frr.conf").read_text()) == set()  # dummies, never placeholders or values


def test_batfish_layer1_lists_every_cable_between_switches_both_ways(builds, tmp_path):
    out = export("batfish", builds["nxos"], tmp_path / "bf")
    edges = json.loads((out / "batfish/layer1_topology.json").read_text())["edges"]
    switches = {n["id"] for n in json.loads((builds["nxos"] / "topology.json").read_text())["nodes"] if n.get("nos")}
    cables = [r for r in rows(builds["nxos"] / "cabling.csv") if r["a_device"] in switches and r["b_device"] in switches]
    expected = set()
    for r in cables:
        a, b = (r["a_device"], r["a_port"]), (r["b_device"], r["b_port"])
        expected |= {(a, b), (b, a)}
    got = [((e["node1"]["hostname"], e["node1"]["interfaceName"]), (e["node2"]["hostname"], e["node2"]["interfaceName"])) for e in edges]
    assert len(got) == len(set(got)) == 2 * len(cables) and set(got) == expected
    assert any(r["kind"] == "management" for r in cables) and any(r["kind"] == "fabric" for r in cables)


# --- Nornir and Ansible ------------------------------------------------------------------------


def _management(build_dir: Path) -> dict[str, str]:
    return {r["device"]: r["address"].split("/")[0] for r in rows(build_dir / "ip-plan.csv") if r["kind"] == "management"}


def test_nornir_inventory_loads_with_simple_inventory(builds, tmp_path):
    from nornir.plugins.inventory.simple import SimpleInventory

    out = export("nornir", builds["sonic"], tmp_path / "nornir")
    inventory = SimpleInventory(str(out / "hosts.yaml"), str(out / "groups.yaml"), str(out / "defaults.yaml")).load()
    switches = {n["id"]: n for n in json.loads((builds["sonic"] / "topology.json").read_text())["nodes"] if n.get("nos")}
    management = _management(builds["sonic"])
    assert set(inventory.hosts) == set(switches)
    for name, host in inventory.hosts.items():
        assert host.hostname == management[name]
        assert host.platform == {"nxos": "nxos", "sonic": "sonic"}[switches[name]["nos"]]
        assert host.username is None and host.password is None
    spine = inventory.hosts["be-spine01"]
    assert spine["role"] == "spine" and spine["asn"] == switches["be-spine01"]["asn"]
    assert "backend_spine" in [g.name for g in spine.groups]
    assert inventory.hosts["oob01"].platform == "nxos"
    assert "password" not in "".join(p.read_text() for p in out.glob("*.yaml")).lower()


def test_ansible_inventory_loads_with_ansible_inventory(builds, tmp_path):
    out = export("ansible", builds["sonic"], tmp_path / "ansible")
    tool = Path(sys.executable).with_name("ansible-inventory")
    if not tool.exists():
        pytest.skip("ansible-core is not installed (pip install -e '.[test]')")
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home")}
    result = subprocess.run([str(tool), "-i", str(out / "inventory.yaml"), "--list"], check=False, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    hostvars = listed["_meta"]["hostvars"]
    management = _management(builds["sonic"])
    switches = {n["id"]: n for n in json.loads((builds["sonic"] / "topology.json").read_text())["nodes"] if n.get("nos")}
    assert set(hostvars) == set(switches)
    for name, variables in hostvars.items():
        assert variables["ansible_host"] == management[name]
        expected = {"nxos": "cisco.nxos.nxos", "sonic": "dellemc.enterprise_sonic.sonic"}[switches[name]["nos"]]
        assert variables["ansible_network_os"] == expected
    assert sorted(listed["backend_leaf"]["hosts"]) == sorted(n for n, s in switches.items() if s["role"] == "leaf" and s["network"] == "backend")
    assert "backend_leaf" in listed["backend"]["children"]


# NetBox: tests/test_export_netbox.py (the CSV files and the push's plan), tests/test_netbox_live.py


# --- diagrams ----------------------------------------------------------------------------------


def test_diagrams_per_network_render_with_graphviz(builds, tmp_path):
    """Every view of every network as dot lays it out (the order and counts: tests/test_export_diagram.py)."""
    out = export("diagram", builds["nxos"], tmp_path / "d", "--view", "full", "--view", "unit:all", "--view", "rail:all")
    for network in ("backend", "frontend", "oob"):
        assert {f"{network}.dot", f"{network}.d2", f"{network}.mmd"} <= tree(out)
    assert {f"backend-rail{r}.dot" for r in range(1, 9)} | {"backend-su01.dot"} <= tree(out)
    mermaid = (out / "backend.mmd").read_text()
    assert mermaid.startswith("%%") and "flowchart TB" in mermaid and "subgraph legend" in mermaid
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (scripts/test.sh installs the Debian package graphviz)")
    for path in sorted(out.glob("*.dot")):
        result = subprocess.run(["dot", "-Tsvg", str(path)], check=False, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "<svg" in result.stdout and not result.stderr, f"{path.name}: {result.stderr}"


def test_rack_elevations_from_the_layout_escape_rack_names(builds, tmp_path):
    edited = tmp_path / "layout"
    shutil.copytree(builds["layout"], edited)
    topology = json.loads((edited / "topology.json").read_text())
    for node in topology["nodes"]:
        if node.get("rack") == "R01-01":
            node["rack"] = 'R01-01 <b>&"x"'  # free text in a build: must not break the SVG or the DOT
    topology["graph"]["name"] = "c256--layout"  # a valid hostname, and "--" ends no XML comment legally
    (edited / "topology.json").write_text(json.dumps(topology))
    rehash(edited, "topology.json")
    out = export("diagram", edited, tmp_path / "d")
    svgs = sorted(p for p in tree(out) if p.startswith("elevations/"))
    assert svgs, "no elevations for a build with a layout"
    placed = {n["id"] for n in topology["nodes"] if n.get("rack")}
    seen = set()
    for path in svgs:
        root = ET.parse(out / path).getroot()  # well-formed XML
        seen |= {t.text.split(":")[0] for t in root.iter("{http://www.w3.org/2000/svg}title")}
    assert seen == placed
    assert "R01-01 &lt;b&gt;&amp;" in "".join((out / p).read_text() for p in svgs)


@pytest.mark.parametrize("fmt", ["batfish", "diagram"])
def test_json_names_the_directory_and_counts_what_is_on_disk(builds, tmp_path, fmt):
    """`--json`: one ExportSummary on stdout, its counts those of the directory as written."""
    from fabricgen.export.files import ExportSummary

    destination = tmp_path / "out"
    result = runner.invoke(app, ["export", fmt, str(builds["nxos"]), "-o", str(destination), "--json"])
    assert result.exit_code == 0, result.output
    summary = ExportSummary.model_validate_json(result.stdout)
    written = [p for p in destination.rglob("*") if p.is_file()]
    assert (summary.format, summary.fabric, summary.directory) == (fmt, "cisco-256-gpu", str(destination))
    assert summary.files == len(written) and summary.bytes == sum(p.stat().st_size for p in written)
    assert summary.netbox_push is None


def test_the_default_destination_of_dot_is_beside_the_build_too(builds, tmp_path, monkeypatch):
    """`fabricgen export FORMAT .` from inside the build: `.` has no name to extend (it raised
    ValueError), and the export must land beside the build, not in it."""
    build_copy = tmp_path / "fabric"
    shutil.copytree(builds["nxos"], build_copy)
    monkeypatch.chdir(build_copy)
    result = runner.invoke(app, ["export", "nornir", "."])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "fabric-nornir" / "hosts.yaml").is_file()
    monkeypatch.chdir(build_copy / "configs")
    result = runner.invoke(app, ["export", "ansible", ".."])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "fabric-ansible" / "inventory.yaml").is_file()
