"""The 2026 nodes and NICs of the built-in catalog, and the host files of the NIC families they
bring (pollara: AMD Pensando Pollara 400, ionic driver, configured with nicctl).

Host files are compared with the leaf's config_db.json of the same build, as tests/test_hosts.py
does for the other families.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from tests.test_hosts import leaf_view, rows, script_blocks, text

# A GPU server with Pollara 400 backend NICs (as AMD's MI355X reference configuration has them).
POLLARA_HARDWARE = """
nodes:
  LAB-POLLARA-8:
    kind: gpu
    description: Lab GPU server, 8 GPUs, 8 x 400G AMD Pensando Pollara 400 backend
    gpus: 8
    backend: {count: 8, speed: 400G, form_factor: QSFP112, names: "benic{n}p1", nic: AMD Pensando Pollara 400, nic_family: pollara}
"""


def pollara_build(tmp_path, write_intent, body: str = "", backend: str = ""):
    (tmp_path / "lab-hardware.yaml").write_text(POLLARA_HARDWARE)
    intent = f"catalog: [lab-hardware.yaml]\ngpu_node: LAB-POLLARA-8\ngpus: 16\nbackend: {{leaf: {{nos: sonic}}, spine: {{nos: sonic}}{backend}}}\n" + body
    return compile_intent(write_intent(intent, name="lab"))


def nicctl_settings(block: str) -> dict:
    """What a Pollara block sets, read from its nicctl commands."""
    return {
        "classification": re.findall(r"^ *run nicctl update qos --classification-type (\w+)$", block, re.M),
        "dscp2prio": {
            int(d): int(p) for d, p in re.findall(r"^ *run nicctl update qos dscp-to-priority --dscp (\d+) --priority (\d)$", block, re.M)
        },
        "pfc": {int(p) for p in re.findall(r"^ *run nicctl update qos pfc --priority (\d) --no-drop enable$", block, re.M)},
        "pfc_off": {int(p) for p in re.findall(r"^ *run nicctl update qos pfc --priority (\d) --no-drop disable$", block, re.M)},
        "pause": re.search(r'^run nicctl update port -p "\$port" --pause-type pfc --rx-pause enable --tx-pause enable$', block, re.M) is not None,
        "cnp_dscp": int(re.search(r"--cnp-dscp (\d+)", block).group(1)),
        "tos": int(re.search(r'^put (\d+) "/sys/kernel/config/rdma_cm/\$rdma/ports/1/default_roce_tos"$', block, re.M).group(1)),
        "mtu": int(re.search(r'^run ip link set dev "\$dev" mtu (\d+)$', block, re.M).group(1)),
    }


def test_pollara_nics_get_nicctl_settings_of_their_leaf(tmp_path, write_intent):
    build = pollara_build(tmp_path, write_intent)
    cabled = {(r["a_device"], r["a_port"]): (r["b_device"], r["b_port"]) for r in rows(build, "cabling.csv") if r["kind"] == "host"}
    block = script_blocks(text(build, "hosts/gpu0002/nic-qos.sh"))["benic5p1"]
    leaf, leaf_port = cabled[("gpu0002", "benic5p1")]
    sw = leaf_view(json.loads(text(build, f"configs/{leaf}/config_db.json")), leaf_port)
    nic = nicctl_settings(block)
    assert nic["pause"] and nic["classification"] == ["pcp", "dscp"], "DSCP trust, after clearing an earlier map as AMD does"
    assert {d: p for d, p in nic["dscp2prio"].items() if p} == sw["classified"], "trusts the leaf's DSCP map"
    assert nic["pfc"] == sw["pfc"] and nic["pfc_off"] == set(range(8)) - sw["pfc"], "no-drop exactly on the leaf's PFC priorities"
    assert sw["dscp_to_tc"][nic["tos"] >> 2] in sw["pfc"], "RoCE marked into a lossless class"
    assert sw["dscp_to_tc"][nic["cnp_dscp"]] in sw["strict"], "CNPs in the leaf's strict class"
    assert nic["mtu"] == 9000
    assert "mlnx_qos" not in block and "dcb " not in block


def test_pollara_host_tables_are_set_once_and_a_conflict_is_reported(tmp_path, write_intent):
    """nicctl's QoS tables are the host's (AMD's guide sets them once for all Pollara NICs): the
    script sets them with the first NIC, skips them for NICs with the same settings, and warns and
    exits 2 when a NIC needs other ones."""
    build = pollara_build(tmp_path, write_intent)
    script = text(build, "hosts/gpu0001/nic-qos.sh")
    path = tmp_path / "nic-qos.sh"
    path.write_text(script)
    result = subprocess.run(["bash", str(path)], env={"PATH": "/usr/bin:/bin", "DRY_RUN": "1"}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out.count("+ nicctl update qos --classification-type dscp") == 1, "host-wide tables set once for 8 NICs"
    assert sum(1 for line in out if line.startswith("+ nicctl update port -p")) == 8, "PFC pause on each NIC's own port"
    assert sum(1 for line in out if line.startswith("+ nicctl update dcqcn -r")) == 8, "DCQCN on each RDMA device"
    # two NICs that need different host tables: the second is not applied, and the script says so
    first = script_blocks(script)["benic1p1"]
    other = first.replace("pollara_host_qos '", "pollara_host_qos 'other-").replace("dev=$BENIC1P1_NETDEV", "dev=$BENIC2P1_NETDEV")
    conflicting = script.replace(script_blocks(script)["benic2p1"], other)
    path.write_text(conflicting)
    result = subprocess.run(["bash", str(path)], env={"PATH": "/usr/bin:/bin", "DRY_RUN": "1"}, capture_output=True, text=True)
    assert result.returncode == 2 and "host-wide QoS tables" in result.stderr


def test_pollara_scripts_pass_bash_n_and_shellcheck(tmp_path, write_intent):
    build = pollara_build(tmp_path, write_intent)
    scripts = {p: b for p, b in build.files.items() if p.endswith(".sh")}
    assert scripts
    for name, data in scripts.items():
        path = tmp_path / name.replace("/", "_")
        path.write_bytes(data)
        result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{name}: {result.stderr}"
        if shutil.which("shellcheck"):
            result = subprocess.run(["shellcheck", "-S", "style", str(path)], capture_output=True, text=True)
            assert result.returncode == 0, f"{name}: {result.stdout}"


def test_pollara_without_qos_turns_no_drop_off(tmp_path, write_intent):
    build = pollara_build(tmp_path, write_intent, backend=", qos: {enabled: false}")
    block = script_blocks(text(build, "hosts/gpu0001/nic-qos.sh"))["benic1p1"]
    assert re.findall(r"--no-drop (\w+)", block) == ["disable"] * 8
    assert "dscp-to-priority" not in block and "dcqcn" not in block
