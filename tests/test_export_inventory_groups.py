"""The Ansible and Nornir inventories' groups per rack, scalable unit, rail, NOS, role and model, and
the netmiko and scrapli platform names: every group's hosts checked against the build's own
topology.json read here (json, not the export's reader), the files loaded by ansible-inventory and
Nornir's SimpleInventory, and rack names from an edited build that no identifier can hold as they
are (the intent's text) each kept in a group of its own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent
from tests.conftest import INTENTS
from tests.push_build import rehash

runner = CliRunner()
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what Ansible takes as a group name without a warning
ANSIBLE_INVENTORY = Path(sys.executable).with_name("ansible-inventory")
# netmiko/ssh_dispatcher.py CLASS_MAPPER; scrapli/factory.py CORE_PLATFORM_MAP, scrapli_community dell/enterprisesonic
NETMIKO = {"nxos": "cisco_nxos", "eos": "arista_eos", "sonic": "dell_sonic"}
SCRAPLI = {"nxos": "cisco_nxos", "eos": "arista_eos", "sonic": "dell_enterprisesonic"}


@pytest.fixture(scope="module")
def layout_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whitepaper's 256-GPU build with a rack layout, its fabric switches on SONiC (the OOB
    switches stay NX-OS: two NOS groups), and one leaf serving rails 1 and 2 (as a leaf of several
    rails is written)."""
    directory = tmp_path_factory.mktemp("inventory-groups")
    text = (INTENTS / "cisco-256-gpu.yaml").read_text().replace("name: cisco-256-gpu", "name: c256-groups") + "\nlayout: {}\n"
    text = text.replace("nos: nxos", "nos: sonic").replace("N9K-C93108TC-FX3, nos: sonic", "N9K-C93108TC-FX3, nos: nxos")
    intent = directory / "c256-groups.yaml"
    intent.write_text(text)
    destination = directory / "c256-groups"
    build_intent(intent, destination)
    topology = json.loads((destination / "topology.json").read_text())
    for node in topology["nodes"]:
        if node["id"] == "be-su01-leaf2":
            node["rails"] = [2, 1]
    (destination / "topology.json").write_text(json.dumps(topology, indent=2))
    rehash(destination, "topology.json")
    return destination


def export(fmt: str, build_dir: Path, destination: Path) -> Path:
    result = runner.invoke(app, ["export", fmt, str(build_dir), "-o", str(destination)])
    assert result.exit_code == 0, result.output
    return destination


def switches_of(build_dir: Path) -> dict[str, dict]:
    return {n["id"]: n for n in json.loads((build_dir / "topology.json").read_text())["nodes"] if n.get("nos")}


def expected_groups(switches: dict[str, dict]) -> dict[str, dict[str, set[str]]]:
    """Per family, each of its values -> the switches in it, from topology.json alone."""
    families: dict[str, dict[str, set[str]]] = {family: defaultdict(set) for family in ("rack", "unit", "rail", "model", "nos", "role")}
    for name, node in switches.items():
        if node.get("rack"):
            families["rack"][node["rack"]].add(name)
        if node.get("scalable_unit") is not None:
            families["unit"][f"{node['network']} {node['scalable_unit']}"].add(name)
        for rail in node.get("rails") or ([node["rail"]] if node.get("rail") is not None else []):
            families["rail"][f"{node['network']} {rail}"].add(name)
        families["model"][node["model"]].add(name)
        families["nos"][node["nos"]].add(name)
        families["role"][f"{node['network']} {node['role']}"].add(name)
    return families


def hosts_under(group: dict) -> set[str]:
    return set(group.get("hosts") or ())


def test_ansible_groups_hold_the_builds_switches(layout_build, tmp_path):
    switches = switches_of(layout_build)
    expected = expected_groups(switches)
    assert len(expected["rack"]) >= 2 and expected["unit"] and len(expected["rail"]) == 8
    assert switches["be-su01-leaf2"]["rails"] == [2, 1] and set(expected["nos"]) == {"nxos", "sonic"}
    children = yaml.safe_load((export("ansible", layout_build, tmp_path / "a") / "inventory.yaml").read_text())["all"]["children"]
    every_group = list(children) + [name for group in children.values() for name in group.get("children", {})]
    assert all(IDENTIFIER.fullmatch(name) for name in every_group), every_group

    racks = children["racks"]["children"]
    assert {frozenset(hosts_under(g)) for g in racks.values()} == {frozenset(v) for v in expected["rack"].values()}
    in_racks = [host for group in racks.values() for host in hosts_under(group)]
    assert sorted(in_racks) == sorted(n for n, s in switches.items() if s.get("rack"))  # each in exactly one
    for rack, members in expected["rack"].items():
        assert hosts_under(racks[f"rack_{re.sub('[^A-Za-z0-9_]', '_', rack)}"]) == members

    units = children["scalable_units"]["children"]
    assert {name: hosts_under(g) for name, g in units.items()} == {
        f"{key.split()[0]}_su_{key.split()[1]}": members for key, members in expected["unit"].items()
    }
    rails = children["rails"]["children"]
    assert {name: hosts_under(g) for name, g in rails.items()} == {
        f"{key.split()[0]}_rail_{key.split()[1]}": members for key, members in expected["rail"].items()
    }
    assert "be-su01-leaf2" in hosts_under(rails["backend_rail_1"]) and "be-su01-leaf2" in hosts_under(rails["backend_rail_2"])
    models = children["models"]["children"]
    assert {name: hosts_under(g) for name, g in models.items()} == {f"model_{m.replace('-', '_')}": v for m, v in expected["model"].items()}
    for nos, members in expected["nos"].items():
        assert hosts_under(children[nos]) == members
        assert children[nos]["vars"]["netmiko_device_type"] == NETMIKO[nos]
        assert children[nos]["vars"]["scrapli_platform"] == SCRAPLI[nos]
    for key, members in expected["role"].items():
        network, role = key.split()
        assert hosts_under(children[network]["children"][f"{network}_{role.replace('-', '_')}"]) == members


def test_ansible_inventory_reads_the_groups_and_each_hosts_platform_names(layout_build, tmp_path):
    if not ANSIBLE_INVENTORY.exists():
        pytest.skip("ansible-core is not installed (pip install -e '.[test]')")
    out = export("ansible", layout_build, tmp_path / "a")
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [str(ANSIBLE_INVENTORY), "-i", str(out / "inventory.yaml"), "--list"], check=False, capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "Invalid characters" not in result.stderr  # ansible's warning on a group name with '-'
    listed = json.loads(result.stdout)
    switches = switches_of(layout_build)
    expected = expected_groups(switches)
    for name, variables in listed["_meta"]["hostvars"].items():
        nos = switches[name]["nos"]
        assert (variables["netmiko_device_type"], variables["scrapli_platform"]) == (NETMIKO[nos], SCRAPLI[nos]), name
    assert set(listed["racks"]["children"]) == {f"rack_{re.sub('[^A-Za-z0-9_]', '_', r)}" for r in expected["rack"]}
    assert set(listed["backend_rail_1"]["hosts"]) == expected["rail"]["backend 1"]
    assert set(listed["backend_su_1"]["hosts"]) == expected["unit"]["backend 1"]


def test_nornir_hands_netmiko_and_scrapli_their_platform_and_napalm_its_own(layout_build, tmp_path):
    from nornir.plugins.inventory.simple import SimpleInventory

    out = export("nornir", layout_build, tmp_path / "n")
    inventory = SimpleInventory(str(out / "hosts.yaml"), str(out / "groups.yaml"), str(out / "defaults.yaml")).load()
    switches = switches_of(layout_build)
    expected = expected_groups(switches)
    assert set(inventory.hosts) == set(switches)
    for name, host in inventory.hosts.items():
        nos = switches[name]["nos"]
        assert host.get_connection_parameters("netmiko").platform == NETMIKO[nos]
        assert host.get_connection_parameters("scrapli").platform == SCRAPLI[nos]
        assert host.get_connection_parameters("napalm").platform == host.platform == nos  # the NAPALM driver (nxos, sonic)
    members: dict[str, set[str]] = defaultdict(set)
    for name, host in inventory.hosts.items():
        for group in host.groups:
            members[group.name].add(name)
    for rack, hosts in expected["rack"].items():
        group = f"rack_{re.sub('[^A-Za-z0-9_]', '_', rack)}"
        assert members[group] == hosts and inventory.groups[group].data == {"rack": rack}
    for key, hosts in expected["rail"].items():
        network, rail = key.split()
        assert members[f"{network}_rail_{rail}"] == hosts and inventory.groups[f"{network}_rail_{rail}"].data["rail"] == int(rail)
    for key, hosts in expected["unit"].items():
        network, unit = key.split()
        assert members[f"{network}_su_{unit}"] == hosts
    spine = inventory.hosts["be-spine01"]
    assert spine["rack"] == switches["be-spine01"]["rack"] and spine["model"] == switches["be-spine01"]["model"]


def test_the_eos_group_keeps_its_napalm_options_beside_the_platform_names(layout_build):
    from fabricgen.export.inventory import managed_switches
    from fabricgen.export.nornir import _nos_group
    from fabricgen.export.source import open_build

    switch = managed_switches(open_build(layout_build))[0]
    eos = type(switch)(switch.node.model_copy(update={"nos": "eos"}), switch.host, switch.interface, "eos", "arista_eos", "arista_eos", switch.groups)
    options = _nos_group(eos)["connection_options"]
    assert options["netmiko"] == {"platform": "arista_eos"} and options["scrapli"] == {"platform": "arista_eos"}
    assert options["napalm"] == {"extras": {"optional_args": {"enforce_verification": True}}}


def test_rack_names_no_identifier_holds_keep_a_group_each(layout_build, tmp_path):
    edited = tmp_path / "build"
    shutil.copytree(layout_build, edited)
    topology = json.loads((edited / "topology.json").read_text())
    names = ["R-1", "R_1", "R 1", "1st row", "Räck/7"]
    switches = [node for node in topology["nodes"] if node.get("nos")]
    for index, node in enumerate(switches):
        node["rack"] = names[index % len(names)]
    (edited / "topology.json").write_text(json.dumps(topology, indent=2))
    rehash(edited, "topology.json")
    racks = yaml.safe_load((export("ansible", edited, tmp_path / "a") / "inventory.yaml").read_text())["all"]["children"]["racks"]["children"]
    assert list(racks) == ["rack_1st_row", "rack_R_1", "rack_R_1_2", "rack_R_1_3", "rack_R_ck_7"]  # natural order: 'R 1' < 'R-1' < 'R_1'
    assert all(IDENTIFIER.fullmatch(name) for name in racks)
    by_rack = defaultdict(set)
    for node in switches:
        by_rack[node["rack"]].add(node["id"])
    assert sorted(map(sorted, (hosts_under(g) for g in racks.values()))) == sorted(map(sorted, by_rack.values()))
    groups = yaml.safe_load((export("nornir", edited, tmp_path / "n") / "groups.yaml").read_text())
    assert {groups[name]["data"]["rack"] for name in racks} == set(names)
