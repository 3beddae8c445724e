"""`fabricgen export` of an EOS build: Ansible's arista.eos over eAPI, Nornir's NAPALM `eos`
(certificates verified), NetBox's Arista EOS platform, Batfish's Arista format with the EOS
secrets' stand-ins, and containerlab's cEOS nodes booting the build's config under the build's
interface names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabricgen.build.secrets import PLACEHOLDER_PATTERN, dummy_secrets
from fabricgen.compiler.pipeline import build as build_intent
from tests.test_eos_push import TINY_EOS
from tests.test_export import export, rows

EOS_SWITCHES = [f"be-su01-leaf{n}" for n in range(1, 9)] + ["be-spine01", "be-spine02"]


@pytest.fixture(scope="module")
def eos_build(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("eos-export")
    (root / "tiny-eos.yaml").write_text(TINY_EOS.lstrip())
    build_intent(root / "tiny-eos.yaml", root / "build")
    return root / "build"


def nodes(build: Path) -> dict[str, dict]:
    return {n["id"]: n for n in json.loads((build / "topology.json").read_text())["nodes"] if n.get("nos")}


def test_ansible_reaches_eos_through_eapi_with_the_certificate_checked(eos_build, tmp_path):
    out = export("ansible", eos_build, tmp_path / "ansible")
    document = yaml.safe_load((out / "inventory.yaml").read_text())
    eos = document["all"]["children"]["eos"]
    assert sorted(eos["hosts"]) == sorted(EOS_SWITCHES)
    assert eos["vars"] == {
        "ansible_network_os": "arista.eos.eos",
        "ansible_connection": "ansible.netcommon.httpapi",
        "ansible_httpapi_use_ssl": True,
        "ansible_httpapi_validate_certs": True,
        "ansible_become": True,
        "ansible_become_method": "enable",
        # netmiko's and scrapli's names of EOS (netmiko ssh_dispatcher.py CLASS_MAPPER, scrapli factory.py CORE_PLATFORM_MAP)
        "netmiko_device_type": "arista_eos",
        "scrapli_platform": "arista_eos",
    }
    tool = Path(sys.executable).with_name("ansible-inventory")
    if tool.exists():
        env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_HOME": str(tmp_path / "home")}
        listed = subprocess.run([str(tool), "-i", str(out / "inventory.yaml"), "--list"], check=True, capture_output=True, text=True, timeout=120, env=env)
        hostvars = json.loads(listed.stdout)["_meta"]["hostvars"]
        assert hostvars["be-spine01"]["ansible_network_os"] == "arista.eos.eos" and hostvars["oob01"]["ansible_network_os"] == "cisco.nxos.nxos"


def test_nornir_platform_is_napalm_s_eos_with_verification_on(eos_build, tmp_path):
    from nornir.plugins.inventory.simple import SimpleInventory

    out = export("nornir", eos_build, tmp_path / "nornir")
    inventory = SimpleInventory(str(out / "hosts.yaml"), str(out / "groups.yaml"), str(out / "defaults.yaml")).load()
    assert {name for name, host in inventory.hosts.items() if host.platform == "eos"} == set(EOS_SWITCHES)
    options = inventory.hosts["be-spine01"].get_connection_parameters("napalm")
    assert options.extras == {"optional_args": {"enforce_verification": True}}
    assert inventory.hosts["oob01"].get_connection_parameters("napalm").extras in (None, {})  # NX-OS's group carries none


def test_netbox_names_the_arista_eos_platform(eos_build, tmp_path):
    out = export("netbox", eos_build, tmp_path / "netbox")
    platforms = {row["slug"]: row for row in rows(out / "platforms.csv")}
    assert platforms["eos"] == {"name": "Arista EOS", "slug": "eos", "manufacturer": "Arista"}
    assert "Arista" in {row["name"] for row in rows(out / "manufacturers.csv")}
    devices = {row["name"]: row for row in rows(out / "devices.csv")}
    assert {devices[name]["platform"] for name in EOS_SWITCHES} == {"Arista EOS"}


def test_batfish_reads_eos_configs_as_arista_with_stand_ins_for_their_secrets(eos_build, tmp_path):
    out = export("batfish", eos_build, tmp_path / "batfish")
    for name in EOS_SWITCHES:
        built = (eos_build / "configs" / f"{name}.cfg").read_text()
        config = (out / "configs" / f"{name}.cfg").read_text()
        header, body = config.split("\n", 1)
        assert header == "!RANCID-CONTENT-TYPE: arista"
        assert not PLACEHOLDER_PATTERN.search(body)
        path = f"configs/{name}.cfg"
        assert body == dummy_secrets({path: built}, {path: "eos"}).fill(built)
        user = next(line for line in body.splitlines() if line.startswith("username admin "))
        assert user.split()[-1].startswith("$6$") and len(user.split()[-1].split("$")[3]) == 86  # a SHA-512 crypt hash's form
    assert (out / "configs" / "oob01.cfg").read_text().startswith("!RANCID-CONTENT-TYPE: cisco-nx\n")


def test_containerlab_runs_eos_switches_as_ceos_booting_the_build_config(eos_build, tmp_path):
    out = export("containerlab", eos_build, tmp_path / "clab")
    topology = yaml.safe_load((out / "tiny-eos-push.clab.yml").read_text())
    switches = nodes(eos_build)
    for name in EOS_SWITCHES:
        node = topology["topology"]["nodes"][name]
        assert node["kind"] == "arista_ceos" and node["image"] == f"ceos:{switches[name]['nos_release']}"
        assert node["startup-config"] == f"ceos/{name}/startup-config"
        assert node["binds"] == [f"ceos/{name}/EosIntfMapping.json:/mnt/flash/EosIntfMapping.json:ro"]
        startup = (out / node["startup-config"]).read_text()
        assert not PLACEHOLDER_PATTERN.search(startup) and startup.startswith("! generated by fabricgen")
        mapping = json.loads((out / "ceos" / name / "EosIntfMapping.json").read_text())
        assert mapping["ManagementIntf"] == {"eth0": "Management1"}
        wires = mapping["EthernetIntf"]
        assert list(wires) == [f"eth{n}" for n in range(1, len(wires) + 1)]
        for port in wires.values():  # every wired port is one the build configures
            assert f"interface {port}\n" in startup
    # every cable of an EOS switch is wired to the eth the mapping gives its build port
    mappings = {
        name: {port: wire for wire, port in json.loads((out / "ceos" / name / "EosIntfMapping.json").read_text())["EthernetIntf"].items()}
        for name in EOS_SWITCHES
    }
    cables = [row for row in rows(eos_build / "cabling.csv") if row["network"] == "backend" and row["kind"] in ("host", "fabric")]
    links = [link["endpoints"] for link in topology["topology"]["links"]]
    assert len(links) == len(cables)
    for row, (a, b) in zip(cables, links, strict=True):  # in cabling-plan order
        for device, port, end in ((row["a_device"], row["a_port"], a), (row["b_device"], row["b_port"], b)):
            if device in mappings:
                assert end == f"{device}:{mappings[device][port]}", (row["cable_id"], end)
    pinned = export("containerlab", eos_build, tmp_path / "pinned", "--ceos-image", "registry.example/ceos:4.34.1F")
    assert "registry.example/ceos:4.34.1F" in (pinned / "tiny-eos-push.clab.yml").read_text()
    from typer.testing import CliRunner

    from fabricgen.cli import app

    refused = CliRunner().invoke(app, ["export", "containerlab", str(eos_build), "-o", str(tmp_path / "bad"), "--ceos-image", "ceos:4.34 ; rm"])
    assert refused.exit_code == 2 and "is not an image reference" in refused.output and not (tmp_path / "bad").exists()
