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
        "dscp2prio": {int(d): int(p) for d, p in re.findall(r"^ *run nicctl update qos dscp-to-priority --dscp (\d+) --priority (\d)$", block, re.M)},
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
    assert nic["pause"] and nic["classification"] == ["pcp", "dscp"], "DSCP trust, set as AMD's guide does (pcp, then dscp)"
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


# --- the 2026 nodes: each builds, and its NICs get the host files of their family ---------------

NODES_2026 = {
    # PID: (GPUs, backend ports, NIC family, planes the backend gets by default)
    "AS-8125GS-TNMR2": (8, 8, "broadcom", 1),
    "AS-8126GS-TNMR": (8, 8, None, 1),
    "AS-4126GS-NMR-LCC": (8, 8, "pollara", 1),
    "GB200-NVL72-TRAY": (4, 4, "connectx", 1),
    "GB300-NVL72-TRAY": (4, 8, "connectx", 2),
    "XE9680L": (8, 8, None, 1),
}
SCRIPT_MARK = {"broadcom": "run dcb pfc set", "pollara": "run nicctl update port", "connectx": "run mlnx_qos", None: "NIC family unknown"}


def test_the_2026_nodes_are_in_the_built_in_catalog():
    nodes = load_catalog().nodes
    for pid, (gpus, ports, family, _) in NODES_2026.items():
        node = nodes[pid]
        assert (node.kind, node.gpus, node.backend.ports, node.backend.nic_family) == ("gpu", gpus, ports, family), pid


@pytest.mark.parametrize("pid", sorted(NODES_2026))
def test_a_2026_node_builds_and_gets_its_familys_host_files(pid, write_intent):
    gpus, ports, family, planes = NODES_2026[pid]
    build = compile_intent(write_intent(f"gpus: {gpus * 4}\ngpu_node: {pid}\nbackend: {{leaf: {{nos: sonic}}, spine: {{nos: sonic}}}}\n"))
    host = [link for link in build.fabric.links if link.kind.value == "host"]
    assert len(host) == 4 * ports, "every backend port cabled"
    assert build.compiled.sizing.planes == planes, "ConnectX-8 as 2 x 400G: two planes, port p of every NIC in plane p"
    script = text(build, "hosts/gpu0001/nic-qos.sh")
    assert SCRIPT_MARK[family] in script, pid
    assert {nic.family for nic in build.hosts["gpu0001"].nics} == {family}


# --- the Supermicro switches ------------------------------------------------------------------

# Supermicro SSE-T8164, copied by hand from sonic-buildimage 086b03bd
# device/supermicro/x86_64-supermicro_sse_t8164-r0/Supermicro_sse_t8164/port_config.ini (name:
# lanes, alias, index) and platform.json (breakout alias names Eth<n>-<sub>), not from the entry.
T8164 = "SSE-T8164"
T8164_PLATFORM = ("x86_64-supermicro_sse_t8164-r0", "Supermicro_sse_t8164")
T8164_PORT_CONFIG_INI = {  # 800G cages: (lanes, alias, index)
    1: ("Ethernet0", "1,2,3,4,5,6,7,8", "Eth1", "1"),
    17: ("Ethernet128", "281,282,283,284,285,286,287,288", "Eth17", "17"),
    18: ("Ethernet136", "265,266,267,268,269,270,271,272", "Eth18", "18"),
    33: ("Ethernet256", "25,26,27,28,29,30,31,32", "Eth33", "33"),
    64: ("Ethernet504", "505,506,507,508,509,510,511,512", "Eth64", "64"),
    65: ("Ethernet512", "514", "Eth65", "65"),
    66: ("Ethernet513", "513", "Eth66", "66"),
}


def test_the_t8164_entry_is_its_platforms_port_config():
    model = load_catalog().switches[T8164]
    assert (model.sonic.platform, model.sonic.hwsku) == T8164_PLATFORM and model.platform_mapped
    assert model.max_ecmp_paths == 128 and model.ports_at(800) == 64 and model.ports_at(400) == 128
    for cage, (name, lanes, alias, _index) in T8164_PORT_CONFIG_INI.items():
        speed = 800 if cage <= 64 else 25
        got = (model.name_of("sonic", cage), model.port_lanes(cage, 0, speed), model.sonic.alias.name(model, cage, 0, speed))
        assert got == (name, tuple(int(lane) for lane in lanes.split(",")), alias), cage
    # 2 x 400G of cage 18 (lanes 265-272): Ethernet136 on 265-268 and Ethernet140 on 269-272, Eth18-1 and Eth18-2
    assert [model.name_of("sonic", 18, sub, 400) for sub in (1, 2)] == ["Ethernet136", "Ethernet140"]
    assert model.port_lanes(18, 2, 400) == (269, 270, 271, 272) and model.sonic.alias.name(model, 18, 2, 400) == "Eth18-2"


@pytest.fixture(scope="module")
def t8164_builds(tmp_path_factory):
    """256 GPUs of DGX H100 on T8164 leaves and spines (2 x 400G host cages), one build per SONiC
    release that has this platform (202511 on) and the default (the catalog's 202511)."""
    builds = {}
    for release in (None, "202511", "202605", "master"):
        pin = f', nos_release: "{release}"' if release else ""
        path = tmp_path_factory.mktemp(f"t8164-{release}") / "t8164.yaml"
        path.write_text(f"gpus: 256\nbackend:\n  leaf: {{model: {T8164}, nos: sonic{pin}}}\n  spine: {{model: {T8164}, nos: sonic{pin}}}\n")
        builds[release] = compile_intent(path)
    return builds


def test_t8164_config_dbs_are_the_platforms_and_pass_yang_on_every_release(t8164_builds):
    from tests.sonic_yang import violations
    from tests.test_render_sonic import config_dbs

    assert {c.nos_release for c in t8164_builds[None].configs.values() if c.nos_release} == {"202511"}
    for release, build in t8164_builds.items():
        dbs = config_dbs(build)
        assert dbs, release
        for name, db in dbs.items():
            metadata = db["DEVICE_METADATA"]["localhost"]
            assert (metadata["platform"], metadata["hwsku"]) == T8164_PLATFORM, name
            # cage 1 as 2 x 400G on leaves (to NICs) and spines (to leaves): port_config.ini's lanes, platform.json's alias
            first, second = db["PORT"]["Ethernet0"], db["PORT"]["Ethernet4"]
            assert (first["lanes"], first["alias"], first["speed"], second["lanes"], second["alias"]) == ("1,2,3,4", "Eth1-1", "400000", "5,6,7,8", "Eth1-2"), (
                name
            )
            assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "2x400G"}, name
            assert violations(db, release or "202511") == [], (release, name)
        assert not any("UNVERIFIED SONiC platform" in note for note in build.compiled.notes)


def test_t8032s_is_said_to_have_no_public_sonic_platform(tmp_path):
    model = load_catalog().switches["SSE-T8032S"]
    assert not model.platform_mapped and "SSE-T8032S" in model.sonic.unverified
    assert model.ports_at(400) == 64 and model.ports_at(10) == 2 and model.rack_units == 1
    assert model.qos.buffer_bytes.value == 112 * 2**20


def test_the_t8164_on_a_release_without_its_platform_files_is_refused(write_intent):
    """Its platform directory arrived in sonic-buildimage 202511: an older target has no image for it."""
    from tests.conftest import build_refused

    stderr = build_refused(
        write_intent('gpus: 64\nbackend:\n  leaf: {model: SSE-T8164, nos: sonic, nos_release: "202505"}\n  spine: {model: SSE-T8164, nos: sonic}\n')
    )
    assert "backend.leaf.nos_release" in stderr and "no platform files for this switch; they arrive in 202511" in stderr
