"""A fabric built entirely from the user's own catalog: a 4-rail 25G GPU server on 32 x 100G
switches broken out 4 x 25G, with the user's own breakout optic and SONiC platform data."""

from __future__ import annotations

import csv
import io
import json

import pytest

from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import needs_frr
from tests.sonic_yang import violations
from tests.test_render_sonic import vtysh_dryrun

HARDWARE = """
switches:
  LAB-SW-32X100:
    description: Lab switch, 32 x 100G QSFP28
    vendor: Example
    nos: [nxos, sonic]
    max_ecmp_paths: 64
    port_groups:
      - {first: 1, count: 32, speed: 100G, form_factor: QSFP28, lanes: 4, breakouts: [4x25G]}
    interface_names:
      nxos: {port: "Ethernet1/{port}", breakout: "Ethernet1/{port}/{sub}"}
      sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}
    sonic: {platform: x86_64-example_lab32-r0, hwsku: Example-Lab32-C128}
transceivers:
  LAB-QSFP-4X25G:
    description: 100G QSFP28 breakout optic, 4 x 25G over MPO-12 SMF
    form_factor: QSFP28
    speed: 100G
    links: 4
    media: smf
    connector: MPO-12
    reach_m: 500
    cable: CB-M12-M12-SMF
    default: true
nodes:
  LAB-GPU-4:
    kind: gpu
    description: Lab GPU server, 4 GPUs, 4 x 25G
    gpus: 4
    backend: {count: 4, speed: 25G, form_factor: SFP28, names: "ens{n}f0"}
"""

INTENT = """
catalog: [lab-hardware.yaml]
gpus: 64
gpu_node: LAB-GPU-4
backend:
  scalable_unit_gpus: 64
  leaf: {{model: LAB-SW-32X100, nos: {nos}}}
  spine: {{model: LAB-SW-32X100, nos: {nos}}}
"""


def build_lab(tmp_path, write_intent, nos):
    (tmp_path / "lab-hardware.yaml").write_text(HARDWARE)
    return compile_intent(write_intent(INTENT.format(nos=nos), name=f"lab-{nos}"))


@pytest.fixture(params=["nxos", "sonic"])
def lab(request, tmp_path, write_intent):
    return build_lab(tmp_path, write_intent, request.param)


def test_user_hardware_builds(lab):
    s = lab.sizing
    # 16 nodes x 4 rails: 4 leaves of 16 x 25G down and 16 up; 64 uplinks over 128 25G spine ports
    assert (s.nodes, s.rails, s.leaves, s.leaf_downlinks, s.leaf_uplinks, s.link_speed_gbps) == (16, 4, 4, 16, 16, 25)
    nic = lab.fabric.devices["gpu0001"].ports["ens3f0"]
    assert nic.link.other(nic).device.rail == 3
    bom = {row["pid"]: int(row["quantity"]) for row in csv.DictReader(io.StringIO(lab.files["bom.csv"].decode()))}
    # 25G sub-ports, four per 100G cage: 4 leaves x 32 -> 32 cages; 2 spines x 32 -> 16 cages
    assert bom["LAB-QSFP-4X25G"] == 48 and bom["LAB-SW-32X100"] == 6 and bom["CB-M12-M12-SMF"] == 128


def test_a_speed_without_ecn_settings_gets_the_scaled_default(lab):
    config = next(iter(lab.configs.values()))
    ecn = config.qos.ecn[25]
    assert (ecn.min_kbytes, ecn.max_kbytes) == (37, 750)  # 150 / 3000 KB scaled from 100G to 25G


def test_user_hardware_renders_for_its_nos(lab, tmp_path):
    leaf = lab.configs["be-su01-leaf1"]
    if leaf.nos == "nxos":
        text = lab.files["configs/be-su01-leaf1.cfg"].decode()
        assert "interface breakout module 1 port 1 map 25g-4x" in text
        assert "interface Ethernet1/1/4" in text
        assert "FABRICGEN-QUEUING-25G" in text and "minimum-threshold 37 kbytes" in text
    else:
        db = json.loads(lab.files["configs/be-su01-leaf1/config_db.json"])
        assert violations(db) == []
        assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "Example-Lab32-C128"
        assert db["DEVICE_METADATA"]["localhost"]["platform"] == "x86_64-example_lab32-r0"
        assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "4x25G"}
        assert [db["PORT"][f"Ethernet{n}"]["lanes"] for n in range(4)] == ["0", "1", "2", "3"]
        assert db["PORT"]["Ethernet3"]["speed"] == "25000" and db["PORT"]["Ethernet3"]["alias"] == "etp1d"


@needs_frr
@pytest.mark.frr
def test_frr_accepts_user_hardware_configs(tmp_path, write_intent):
    lab = build_lab(tmp_path, write_intent, "sonic")
    confs = {name: lab.files[f"configs/{name}/frr.conf"].decode() for name in lab.configs}
    assert vtysh_dryrun(confs, tmp_path) == {}
