"""`fabricgen export containerlab` of SONiC builds: each SONiC switch the SONiC-VS image can hold
boots the build's config_db.json and frr.conf on the image's ports (Force10-S6000: 32 ports,
Ethernet0..Ethernet124, eth1..eth32), a switch with more ports runs as an FRR twin or the export
is refused (--no-frr-twins). The expected port table is read here from the image data's own
source rows (sonic-buildimage device/dell/x86_64-dell_s6000_s1220-r0/Force10-S6000/port_config.ini),
not from the export; nothing here runs containerlab or Docker (neither can run on this machine)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricgen.build.secrets import dummy_secrets
from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent
from fabricgen.export.containerlab_ports import LabImage, PortsBeyondImage, image_port_map, rename_ports
from fabricgen.nos.sonic.export import sonic_vs_image

runner = CliRunner()

# 128 GPUs on 800G-cage SONiC switches: 8 leaves of 32 cabled ports (16 servers, 16 uplinks: the
# image's 32 exactly) and 2 spines of 64 (more than it holds); keyed BGP sessions.
INTENT = """name: clab-sonic
gpus: 128
backend:
  leaf: {model: DCS-7060X6-64PE, nos: sonic}
  spine: {model: DCS-7060X6-64PE, nos: sonic}
  bgp_security: {password: bgp-backend}
"""
# Force10-S6000's port_config.ini (sonic-buildimage, commit 086b03bd70): the first lanes of each row
FIRST_LANES = [25, 29, 33, 37, 45, 41, 1, 5, 13, 9, 17, 21, 53, 49, 57, 61, 69, 65, 73, 77, 109, 105, 113, 117, 125, 121, 81, 85, 93, 89, 101, 97]


@pytest.fixture(scope="module")
def sonic_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("clab")
    (directory / "clab-sonic.yaml").write_text(INTENT)
    build_intent(directory / "clab-sonic.yaml", directory / "build")
    return directory / "build"


def _export(build_dir: Path, destination: Path, *options: str):
    return runner.invoke(app, ["export", "containerlab", str(build_dir), "-o", str(destination), *options])


def _cables(build_dir: Path) -> list[dict[str, str]]:
    with open(build_dir / "cabling.csv", newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["network"] == "backend" and r["kind"] in ("host", "fabric", "peer")]


def test_the_image_data_is_the_force10_s6000_of_sonic_vs():
    image = sonic_vs_image()
    assert (image.kind, image.platform, image.hwsku, len(image.ports)) == ("sonic-vs", "x86_64-kvm_x86_64-r0", "Force10-S6000", 32)
    assert [p.name for p in image.ports] == [f"Ethernet{4 * i}" for i in range(32)]
    assert [p.wire for p in image.ports] == [f"eth{i}" for i in range(1, 33)]
    assert [int(p.lanes.split(",")[0]) for p in image.ports] == FIRST_LANES
    assert all(p.lanes == ",".join(str(int(p.lanes.split(",")[0]) + k) for k in range(4)) for p in image.ports)
    with pytest.raises(ValueError, match="eth1, eth2"):  # a data file whose wires skip one is refused
        LabImage.model_validate({**image.model_dump(), "ports": [image.ports[1].model_dump()]})


def test_a_switch_the_image_holds_boots_the_builds_config_on_the_images_ports(sonic_build, tmp_path):
    result = _export(sonic_build, tmp_path / "clab")
    assert result.exit_code == 0, result.output
    out = tmp_path / "clab"
    topology = yaml.safe_load((out / "clab-sonic.clab.yml").read_text())
    nodes, links = topology["topology"]["nodes"], topology["topology"]["links"]
    image = sonic_vs_image()
    by_wire = {p.wire: p for p in image.ports}
    leaves = [name for name in nodes if "leaf" in name]
    assert len(leaves) == 8
    cabled: dict[str, dict[str, str]] = {}  # device -> build port -> wire, from the topology's links and the cabling plan
    for link, cable in zip(links, _cables(sonic_build), strict=True):
        a, b = (end.split(":", 1) for end in link["endpoints"])
        assert (a[0], b[0]) == (cable["a_device"], cable["b_device"])
        cabled.setdefault(a[0], {})[cable["a_port"]] = a[1]
        cabled.setdefault(b[0], {})[cable["b_port"]] = b[1]
    build_dir_ports = 0
    for leaf in leaves:
        node = nodes[leaf]
        assert node["kind"] == "sonic-vs"
        base = f"sonic/{leaf}"
        assert node["binds"] == [
            f"{base}/config_db.json:/var/sonic/config_db.json:ro",
            f"{base}/frr.conf:/etc/frr/frr.conf:ro",
            f"{base}/vtysh-boot.conf:/etc/supervisor/conf.d/fabricgen-vtysh-boot.conf:ro",
        ]
        for bind in node["binds"]:  # every bind is a file of the export, relative, inside it
            source = bind.split(":", 1)[0]
            assert not source.startswith("/") and ".." not in source and (out / source).is_file()
        config = json.loads((out / base / "config_db.json").read_text())
        built = json.loads((sonic_build / "configs" / leaf / "config_db.json").read_text())
        port_map = json.loads((out / base / "port_map.json").read_text())
        names = {p.name for p in image.ports}
        # the config_db names only the image's ports, one per cabled port, with the image's lanes
        assert set(config["PORT"]) <= names and len(config["PORT"]) == len(cabled[leaf]) == 32
        assert config["DEVICE_METADATA"]["localhost"]["hwsku"] == "Force10-S6000"
        assert config["DEVICE_METADATA"]["localhost"]["platform"] == "x86_64-kvm_x86_64-r0"
        assert "BREAKOUT_CFG" not in config and "MGMT_INTERFACE" not in config
        for build_port, wire in cabled[leaf].items():
            # the link's eth<N> is the image port the config_db configures for that build port
            target = by_wire[wire]
            assert {"build": build_port, "image": target.name, "wire": wire, "lanes": target.lanes} in port_map["ports"]
            assert config["PORT"][target.name]["lanes"] == target.lanes
            assert config["PORT"][target.name]["mtu"] == built["PORT"][build_port]["mtu"]
            assert config["PORT"][target.name]["description"] == built["PORT"][build_port]["description"]
            for key in built["INTERFACE"]:  # its addresses moved with it
                if key.split("|")[0] == build_port:
                    assert key.replace(build_port, target.name, 1) in config["INTERFACE"]
            build_dir_ports += 1
        for table, entries in config.items():  # no key names a port that is not the image's
            for key in entries:
                first = key.split("|")[0]
                assert not first.startswith("Ethernet") or first in names, (leaf, table, key)
        built_frr = (sonic_build / "configs" / leaf / "frr.conf").read_text()
        assert "<<secret=" in built_frr and (out / base / "frr.conf").read_text() == dummy_secrets({f"configs/{leaf}/frr.conf": built_frr}).fill(built_frr)
        assert "vtysh -b" in (out / base / "vtysh-boot.conf").read_text()
        # the node's comment is the image's mapping
        text = (out / "clab-sonic.clab.yml").read_text()
        assert f"# {leaf}: SONiC (DCS-7060X6-64PE) as SONiC-VS Force10-S6000 (32 ports)" in text
        assert "eth1=Ethernet0" in text and "eth32=Ethernet124" in text
    assert build_dir_ports == 8 * 32


def test_a_switch_beyond_the_image_runs_as_an_frr_twin_or_is_refused(sonic_build, tmp_path):
    result = _export(sonic_build, tmp_path / "twins")
    assert result.exit_code == 0, result.output
    assert "note: be-spine01: 64 cabled ports, docker-sonic-vs:latest (Force10-S6000) holds 32; runs as an FRR twin" in result.output
    out = tmp_path / "twins"
    nodes = yaml.safe_load((out / "clab-sonic.clab.yml").read_text())["topology"]["nodes"]
    spine = nodes["be-spine01"]
    assert spine["kind"] == "linux" and spine["image"].startswith("quay.io/frrouting/frr:")
    # its routing is its frr.conf, the BGP key the same stand-in as its SONiC-VS leaves' (sessions come up)
    twin = (out / "frr/be-spine01/frr.conf").read_text()
    leaf = (out / "sonic/be-su01-leaf1/frr.conf").read_text()
    keys = {line.split()[-1] for text in (twin, leaf) for line in text.splitlines() if " password " in line}
    assert len(keys) == 1 and "<<" not in keys.pop() and "<<secret=" not in twin + leaf
    built = (sonic_build / "configs/be-spine01/frr.conf").read_text()
    assert twin == dummy_secrets({"configs/be-spine01/frr.conf": built}).fill(built)
    # the twin's interfaces keep the build's SONiC names (kernel names), addressed from the IP plan
    with open(sonic_build / "ip-plan.csv", newline="") as handle:
        plan = {(r["device"], r["interface"]): r["address"] for r in csv.DictReader(handle) if r["network"] == "backend"}
    assert f"ip address add {plan['be-spine01', 'Ethernet0']} dev Ethernet0" in spine["exec"]
    assert "# be-spine01: 64 cabled ports" in (out / "clab-sonic.clab.yml").read_text()

    refused = _export(sonic_build, tmp_path / "refused", "--no-frr-twins")
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "be-spine01 has 64 cabled ports in the backend fabric" in refused.output and "holds 32" in refused.output
    assert "be-spine02" in refused.output and not (tmp_path / "refused").exists()


def test_the_sonic_image_option_names_the_sonic_vs_nodes_image(sonic_build, tmp_path):
    result = _export(sonic_build, tmp_path / "clab", "--sonic-image", "registry.example/sonic-vs:202505")
    assert result.exit_code == 0, result.output
    nodes = yaml.safe_load((tmp_path / "clab" / "clab-sonic.clab.yml").read_text())["topology"]["nodes"]
    assert {node["image"] for node in nodes.values() if node["kind"] == "sonic-vs"} == {"registry.example/sonic-vs:202505"}
    assert json.loads((tmp_path / "clab/sonic/be-su01-leaf1/port_map.json").read_text())["image"] == "registry.example/sonic-vs:202505"


def test_the_port_map_pairs_ports_in_natural_order_and_knows_its_limit():
    image = sonic_vs_image()
    ports = [f"Ethernet{8 * i}" for i in range(12)]  # an 800G switch's cages, step 8
    mapped = image_port_map("leaf1", reversed(ports), image)
    assert [(port, target.name, target.wire) for port, target in mapped.items()][:3] == [
        ("Ethernet0", "Ethernet0", "eth1"),
        ("Ethernet8", "Ethernet4", "eth2"),
        ("Ethernet16", "Ethernet8", "eth3"),
    ]
    with pytest.raises(PortsBeyondImage) as full:
        image_port_map("spine1", [f"Ethernet{i}" for i in range(33)], image)
    assert (full.value.device, full.value.ports) == ("spine1", 33)
    # renaming is simultaneous: Ethernet8 -> Ethernet4 does not then become Ethernet0
    assert rename_ports("interface Ethernet8\ninterface Ethernet4\n Ethernet80", {"Ethernet8": "Ethernet4", "Ethernet4": "Ethernet0"}) == (
        "interface Ethernet4\ninterface Ethernet0\n Ethernet80"
    )


def test_a_sonic_config_db_of_ports_the_lab_does_not_cable_drops_them(sonic_build):
    """vs_config_db leaves out every entry of a build port the lab does not wire (a port of
    another network, an uncabled spare), in keys, values and lists, and maps the rest."""
    from fabricgen.nos.sonic.export import vs_config_db

    image = sonic_vs_image()
    config = {
        "PORT": {"Ethernet8": {"mtu": "9100", "fec": "rs", "lanes": "9,10"}, "Ethernet16": {"mtu": "9100"}},
        "INTERFACE": {"Ethernet8|10.0.0.0/31": {}, "Ethernet16|10.0.0.2/31": {}},
        "CABLE_LENGTH": {"AZURE": {"Ethernet8": "5m", "Ethernet16": "5m"}},
        "PORTCHANNEL": {"PortChannel1": {"members": ["Ethernet8", "Ethernet16"]}},
        "BREAKOUT_CFG": {"Ethernet8": {"brkout_mode": "2x400G"}},
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "hwsku": "Arista-7060X6-64PE-O128S2"}},
    }
    result = vs_config_db(config, image_port_map("leaf1", ["Ethernet8"], image), image)
    assert result["PORT"] == {"Ethernet0": {"mtu": "9100", "alias": "fortyGigE0/0", "index": "0", "lanes": "25,26,27,28", "speed": "40000"}}
    assert result["INTERFACE"] == {"Ethernet0|10.0.0.0/31": {}}
    assert result["CABLE_LENGTH"] == {"AZURE": {"Ethernet0": "5m"}}
    assert result["PORTCHANNEL"] == {"PortChannel1": {"members": ["Ethernet0"]}}
    assert "BREAKOUT_CFG" not in result and result["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"


def test_a_nodes_files_and_binds_stay_inside_the_export():
    """What a NOS package hands the export is checked before it is written: files at relative
    plain paths, binds only of those files, into an absolute container path, read-only at most."""
    from fabricgen.export.containerlab import _unsafe_files
    from fabricgen.nos.interface import LabNode

    def node(files: dict[str, str], binds: tuple[str, ...]) -> LabNode:
        return LabNode(comment="x", kind="sonic-vs", image="docker-sonic-vs:latest", wires={}, binds=binds, files=files)

    good = node({"sonic/leaf1/config_db.json": "{}"}, ("sonic/leaf1/config_db.json:/var/sonic/config_db.json:ro",))
    assert _unsafe_files("leaf1", good) is None
    for bad in (
        node({"../leaf1/config_db.json": "{}"}, ()),
        node({"/etc/passwd": "x"}, ()),
        node({"sonic/leaf1/a b": "x"}, ()),
        node({"top-level-file": "x"}, ()),
        node({"sonic/leaf1/config_db.json": "{}"}, ("/etc/shadow:/var/sonic/config_db.json:ro",)),
        node({"sonic/leaf1/config_db.json": "{}"}, ("sonic/leaf1/config_db.json:relative/path",)),
        node({"sonic/leaf1/config_db.json": "{}"}, ("sonic/leaf1/config_db.json:/var/sonic/config_db.json:rw,z",)),
        node({"sonic/leaf1/config_db.json": "{}"}, ("sonic/leaf1/config_db.json:/var/../etc/x",)),
    ):
        problem = _unsafe_files("leaf1", bad)
        assert problem is not None and "leaf1" in problem.message, bad


def test_the_sonic_export_is_byte_identical_twice(sonic_build, tmp_path):
    import filecmp

    for name in ("a", "b"):
        assert _export(sonic_build, tmp_path / name).exit_code == 0
    files = sorted(str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert any(f.startswith("sonic/") for f in files) and any(f.startswith("frr/") for f in files)
    assert filecmp.cmpfiles(tmp_path / "a", tmp_path / "b", files, shallow=False)[1:] == ([], [])


def test_a_damaged_config_db_is_refused_naming_it(sonic_build, tmp_path):
    import shutil

    from tests.push_build import rehash

    damaged = tmp_path / "build"
    shutil.copytree(sonic_build, damaged)
    (damaged / "configs/be-su01-leaf1/config_db.json").write_text('["not", "tables"]\n')
    rehash(damaged, "configs/be-su01-leaf1/config_db.json")  # the manifest agrees: the export's own check must catch it
    result = _export(damaged, tmp_path / "clab")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "be-su01-leaf1/config_db.json" in result.output and "not a config_db" in result.output
    assert not (tmp_path / "clab").exists()
