"""Host files: every server's NICs agree with the leaf port they are cabled to.

The scripts, netplan files and sheets are compared with *other outputs* of the same build (the
leaves' config_db.json, cabling.csv, ip-plan.csv), never with the intent they both come from.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
import yaml

from fabricgen.compiler.design.graph import Network, Role
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import build_refused

GPUS = (256, 512)

# A GPU server with Broadcom Thor2 backend NICs and frontend NICs of no known family.
LAB_HARDWARE = """
nodes:
  LAB-THOR2-8:
    kind: gpu
    description: Lab GPU server, 8 GPUs, 8 x 400G Broadcom Thor2 backend, 2 x 100G frontend
    gpus: 8
    backend: {count: 8, speed: 400G, form_factor: QSFP112, names: "ens{n}np0", nic: BCM57608, nic_family: broadcom}
    frontend: {count: 2, speed: 100G, form_factor: QSFP28, names: "fe{n}"}
"""


def lab_build(tmp_path, write_intent, body: str):
    (tmp_path / "lab-hardware.yaml").write_text(LAB_HARDWARE)
    return compile_intent(write_intent("catalog: [lab-hardware.yaml]\ngpu_node: LAB-THOR2-8\n" + body, name="lab"))


def rows(build, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(build.files[name].decode())))


def text(build, path: str) -> str:
    return build.files[path].decode()


def script_blocks(script: str) -> dict[str, str]:
    """Catalog port name -> the commands of its block, found through the script's own mapping
    (`NIC1_NETDEV=${NIC1_NETDEV:-nic1}`) and the `dev=$NIC1_NETDEV` line that opens each block."""
    ports = dict(re.findall(r"^(\w+)_NETDEV=\$\{\w+:-(\S+)\}$", script, re.M))
    starts = [(m.start(), ports[m.group(1)]) for m in re.finditer(r"^dev=\$(\w+)_NETDEV$", script, re.M)]
    end = script.index("\nif [[ $incomplete == 1 ]]")
    return {port: script[start : (starts[i + 1][0] if i + 1 < len(starts) else end)] for i, (start, port) in enumerate(starts)}


def connectx_settings(block: str) -> dict:
    """What a ConnectX block sets, read from its commands."""
    tos = re.search(r'^put (\d+) "/sys/kernel/config/rdma_cm/\$rdma/ports/1/default_roce_tos"', block, re.M)
    pfc = re.search(r"--pfc ([01](?:,[01]){7})$", block, re.M)
    cnp_dscp = re.search(r'^put (\d+) "/sys/class/net/\$dev/ecn/roce_np/cnp_dscp"', block, re.M)
    cnp_prio = re.search(r'^put (\d+) "/sys/class/net/\$dev/ecn/roce_np/cnp_802p_prio"', block, re.M)
    return {
        "trust": "--trust dscp" in block,
        "dscp2prio": {int(d): int(p) for d, p in re.findall(r"--dscp2prio set,(\d+),(\d+)$", block, re.M)},
        "pfc": {p for p, on in enumerate(pfc.group(1).split(",")) if on == "1"} if pfc else None,
        "rdma_dscp": int(tos.group(1)) >> 2 if tos else None,
        "ecn": {int(p) for p in re.findall(r'^put 1 "/sys/class/net/\$dev/ecn/roce_rp/enable/(\d)"', block, re.M)},
        "cnp_dscp": int(cnp_dscp.group(1)) if cnp_dscp else None,
        "cnp_priority": int(cnp_prio.group(1)) if cnp_prio else None,
        "mtu": int(re.search(r'^run ip link set dev "\$dev" mtu (\d+)$', block, re.M).group(1)),
    }


def leaf_view(db: dict, port: str) -> dict:
    """What the SONiC leaf does on one port: its DSCP -> TC map, PFC priorities, strict queues."""
    qos = db["PORT_QOS_MAP"][port]
    dscp_to_tc = {int(d): int(tc) for d, tc in db["DSCP_TO_TC_MAP"][qos["dscp_to_tc_map"]].items()}
    strict = {int(key.split("|")[1]) for key, q in db["QUEUE"].items() if key.startswith(f"{port}|") and db["SCHEDULER"][q["scheduler"]]["type"] == "STRICT"}
    return {
        "classified": {d: tc for d, tc in dscp_to_tc.items() if tc != 0},
        "dscp_to_tc": dscp_to_tc,
        "pfc": {int(p) for p in qos["pfc_enable"].split(",")},
        "strict": strict,
        "mtu": int(db["PORT"][port]["mtu"]),
    }


@pytest.mark.parametrize("gpus", GPUS)
def test_every_server_of_the_whitepaper_intents_gets_its_host_files(whitepaper, whitepaper_sonic, gpus):
    for build in (whitepaper[gpus], whitepaper_sonic[gpus]):
        files = set(build.files)
        for node in build.fabric.by_role(Role.GPU_NODE):
            assert {f"hosts/{node.name}/nic-qos.sh", f"hosts/{node.name}/netplan.yaml"} <= files, node.name
        for node in build.fabric.by_role(Role.STORAGE_NODE):  # AFF controllers run ONTAP: a sheet only
            assert f"hosts/{node.name}/nic-qos.txt" in files and not {f"hosts/{node.name}/nic-qos.sh", f"hosts/{node.name}/netplan.yaml"} & files
            assert f"lab/hosts/{node.name}/netplan.yaml" in files  # the lab runs the appliance as Linux from this twin
        for node in build.fabric.by_role(Role.MANAGEMENT_NODE):  # no RDMA: addresses and routes only
            assert f"hosts/{node.name}/netplan.yaml" in files and f"hosts/{node.name}/nic-qos.sh" not in files
        assert "hosts/be-su01-leaf1/netplan.yaml" not in files  # switches have configs, not host files


@pytest.mark.parametrize("gpus", GPUS)
def test_gpu_nic_qos_matches_the_sonic_leaf_port_it_is_cabled_to(whitepaper_sonic, gpus):
    build = whitepaper_sonic[gpus]
    cabled = {(r["a_device"], r["a_port"]): (r["b_device"], r["b_port"]) for r in rows(build, "cabling.csv") if r["kind"] == "host"}
    dbs: dict[str, dict] = {}
    checked = 0
    for node in build.fabric.by_role(Role.GPU_NODE):
        for port, block in script_blocks(text(build, f"hosts/{node.name}/nic-qos.sh")).items():
            leaf, leaf_port = cabled[(node.name, port)]
            if leaf not in dbs:
                dbs[leaf] = json.loads(text(build, f"configs/{leaf}/config_db.json"))
            nic = connectx_settings(block)
            where = f"{node.name} {port} -> {leaf} {leaf_port}"
            if "PORT_QOS_MAP" not in dbs[leaf]:  # a fabric without QoS: the NIC runs no PFC either
                assert nic["pfc"] == set() and not nic["dscp2prio"] and nic["rdma_dscp"] is None, where
                continue
            sw = leaf_view(dbs[leaf], leaf_port)
            assert nic["trust"] and nic["dscp2prio"] == sw["classified"], where
            assert nic["pfc"] == sw["pfc"] == nic["ecn"], where
            assert sw["dscp_to_tc"][nic["rdma_dscp"]] in sw["pfc"], f"{where}: RDMA marked into a lossy class"
            assert sw["dscp_to_tc"][nic["cnp_dscp"]] == nic["cnp_priority"] and nic["cnp_priority"] in sw["strict"], where
            assert nic["mtu"] <= sw["mtu"], where
            checked += 1
    assert checked == gpus  # every backend NIC of every GPU node


@pytest.mark.parametrize("gpus", GPUS)
def test_netplan_addresses_and_gateways_are_the_ip_plans(whitepaper, gpus):
    build = whitepaper[gpus]
    plan = {(r["device"], r["interface"]): r for r in rows(build, "ip-plan.csv")}
    for path in (p for p in build.files if p.endswith("/netplan.yaml")):
        node = path.split("/")[-2]  # hosts/<node>/, or lab/hosts/<node>/ for an appliance's lab twin
        ethernets = yaml.safe_load(text(build, path))["network"]["ethernets"]
        assert ethernets, node
        for port, settings in ethernets.items():
            row = plan[(node, port)]
            gateway = row["gateway"]
            leaf_port = plan.get((row["peer_device"], row["peer_interface"]))  # the leaf's own row (routed ports)
            if leaf_port is not None:  # a /31: the gateway is the leaf port itself
                assert gateway == leaf_port["address"].split("/")[0], f"{node} {port}"
            else:  # an EVPN segment: the anycast gateway on the NIC's own subnet
                assert (
                    plan[(row["peer_device"], f"Vlan{build.compiled.evpn_of(Network.BACKEND).segment_of[build.fabric.devices[node].ports[port]].vlan}")][
                        "address"
                    ].split("/")[0]
                    == gateway
                )
            assert settings["addresses"] == [row["address"]], f"{node} {port}"
            assert {r["via"] for r in settings["routes"] if "via" in r} == {gateway}, f"{node} {port}"
            [rule] = settings["routing-policy"]
            assert rule["from"] == row["address"].split("/")[0] + "/32"
            own = [r for r in settings["routes"] if r.get("table") == rule["table"]]
            assert len(own) == 2 and any(r.get("scope") == "link" for r in own), f"{node} {port}: its table has its subnet and its way out"


def test_netplan_main_table_backend_via_nic1_default_via_each_frontend_port(whitepaper):
    build = whitepaper[256]
    ethernets = yaml.safe_load(text(build, "hosts/gpu0001/netplan.yaml"))["network"]["ethernets"]
    main = {port: [r for r in s["routes"] if "table" not in r] for port, s in ethernets.items()}
    assert [(r["to"], r["metric"]) for r in main["nic1"]] == [("10.4.0.0/14", 100)]  # the backend's whole pool
    assert all(main[f"nic{n}"] == [] for n in range(2, 9))
    assert [(r["to"], r["metric"]) for port in ("fe1", "fe2") for r in main[port]] == [("default", 100), ("default", 200)]
    assert main["st1"] == main["st2"] == []  # converged storage ports: by their source address only
    tables = [s["routing-policy"][0]["table"] for s in ethernets.values()]
    assert len(set(tables)) == len(tables) == 12


def test_subnet_addressing_routes_through_the_leaf_svi(tmp_path, write_intent):
    build = compile_intent(write_intent("gpus: 32\nbackend: {nic_addressing: subnet, leaf: {nos: sonic}, spine: {nos: sonic}}\n"))
    plan = rows(build, "ip-plan.csv")
    svi = {r["device"]: r["address"].split("/")[0] for r in plan if r["kind"] == "gateway"}
    for row in (r for r in plan if r["kind"] == "nic"):
        settings = yaml.safe_load(text(build, f"hosts/{row['device']}/netplan.yaml"))["network"]["ethernets"][row["interface"]]
        assert settings["addresses"] == [row["address"]] and int(row["address"].split("/")[1]) < 31
        assert {r["via"] for r in settings["routes"] if "via" in r} == {svi[row["peer_device"]]}
        subnet = next(r["to"] for r in settings["routes"] if r.get("scope") == "link")
        assert subnet.split("/")[1] == row["address"].split("/")[1]  # same-rail peers are reached on the link


def test_every_generated_script_passes_bash_n_and_shellcheck(whitepaper, tmp_path, write_intent):
    lab = lab_build(tmp_path, write_intent, "gpus: 16\nbackend: {qos: {storage_dscp: [28], storage_priority: 4}}\nfrontend: {qos: {enabled: true}}\n")
    scripts = {f"{name}:{p}": b for name, build in (("whitepaper", whitepaper[256]), ("lab", lab)) for p, b in build.files.items() if p.endswith(".sh")}
    assert len(scripts) == 32 + 2
    paths = []
    for name, data in scripts.items():
        assert data.startswith(b"#!/usr/bin/env bash\n") and b"\nset -euo pipefail\n" in data, name
        path = tmp_path / name.replace("/", "_").replace(":", "_")
        path.write_bytes(data)
        result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{name}: {result.stderr}"
        paths.append(str(path))
    if shutil.which("shellcheck"):
        # one process for every script: shellcheck names the file of each finding, and its start
        # costs more than its checks (about 0.25 s of CPU per process)
        result = subprocess.run(["shellcheck", "-S", "style", *paths], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout


def test_dry_run_prints_commands_and_changes_nothing(whitepaper, tmp_path):
    path = tmp_path / "nic-qos.sh"
    path.write_bytes(whitepaper[256].files["hosts/gpu0001/nic-qos.sh"])
    result = subprocess.run(
        ["bash", str(path)], env={"PATH": "/usr/bin:/bin", "DRY_RUN": "1", "NIC3_NETDEV": "ens3f0np0", "NIC3_RDMA": "mlx5_7"}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert "+ mlnx_qos -i ens3f0np0 --pfc 0,0,0,1,0,0,0,0" in out  # the mapping renames the port
    assert "+ echo 98 > /sys/kernel/config/rdma_cm/mlx5_7/ports/1/default_roce_tos" in out
    assert "+ ip link set dev nic1 mtu 9000" in out and all(line.startswith("+ ") for line in out)


def test_a_storage_controller_gets_a_sheet_not_commands(write_intent):
    build = compile_intent(
        write_intent(
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
            """
        )
    )
    sheet = text(build, "hosts/storage01/nic-qos.txt")
    plan = {(r["device"], r["interface"]): r for r in rows(build, "ip-plan.csv")}
    assert "runs ONTAP, not Linux: fabricgen writes no commands" in sheet
    assert not re.search(r"^\s*(run |mlnx_qos|dcb |ip |echo )", sheet, re.M)
    for port in ("e1a", "e2a"):
        row = plan[("storage01", port)]
        section = sheet[sheet.index(f"Port {port}\n") :]
        assert f"address          {row['address']}" in section and f"gateway          {row['gateway']}" in section
        leaf = json.loads(text(build, f"configs/{row['peer_device']}/config_db.json"))
        assert f"PFC            on priority {leaf['PORT_QOS_MAP'][row['peer_interface']]['pfc_enable']} only" in section
        assert "trust DSCP     26 -> priority 4, 48 -> priority 6" in section
    # the GPU nodes' storage ports on that fabric get its lossless class too; their frontend stays lossy
    blocks = script_blocks(text(build, "hosts/gpu0001/nic-qos.sh"))
    assert connectx_settings(blocks["st1"])["pfc"] == {4} and connectx_settings(blocks["fe1"])["pfc"] == set()


def test_a_storage_class_gets_pfc_and_its_own_marking_on_storage_ports(write_intent):
    build = compile_intent(
        write_intent(
            """
            gpus: 16
            backend: {qos: {storage_dscp: [28], storage_priority: 4}}
            frontend:
              storage: separate
              spine: {model: N9K-C9364D-GX2A}
            storage:
              qos: {enabled: true, storage_dscp: [30], storage_priority: 5}
            """
        )
    )
    host = build.hosts["gpu0001"]
    nic1, st1 = (next(n for n in host.nics if n.port == port) for port in ("nic1", "st1"))
    assert (nic1.lossless_priorities, nic1.rdma_dscp, nic1.rdma_priority) == ((3, 4), 24, 3)  # RoCE on the backend
    assert (st1.lossless_priorities, st1.rdma_dscp, st1.rdma_priority) == ((3, 5), 30, 5)  # NVMe/NFS over RDMA
    block = connectx_settings(script_blocks(text(build, "hosts/gpu0001/nic-qos.sh"))["st1"])
    assert block["pfc"] == block["ecn"] == {3, 5} and block["rdma_dscp"] == 30 and block["dscp2prio"][30] == 5


def test_broadcom_nics_get_bnxt_re_and_dcb_settings_of_their_leaf(tmp_path, write_intent):
    build = lab_build(tmp_path, write_intent, "gpus: 16\nbackend: {leaf: {nos: sonic}, spine: {nos: sonic}}\n")
    cabled = {(r["a_device"], r["a_port"]): (r["b_device"], r["b_port"]) for r in rows(build, "cabling.csv") if r["kind"] == "host"}
    block = script_blocks(text(build, "hosts/gpu0002/nic-qos.sh"))["ens5np0"]
    leaf, leaf_port = cabled[("gpu0002", "ens5np0")]
    sw = leaf_view(json.loads(text(build, f"configs/{leaf}/config_db.json")), leaf_port)
    pfc = dict(re.findall(r"(\d):(on|off)", re.search(r"prio-pfc (.*)$", block, re.M).group(1)))
    assert {int(p) for p, state in pfc.items() if state == "on"} == sw["pfc"] and len(pfc) == 8
    assert {int(d): int(p) for d, p in re.findall(r"dscp-prio (\d+):(\d)$", block, re.M)} == sw["classified"]
    cc = {name: value for value, name in re.findall(r'^put (0x[0-9a-f]+) "\$cc/(\w+)"$', block, re.M)}
    assert sw["dscp_to_tc"][int(cc["roce_dscp"], 16)] == int(cc["roce_prio"], 16) and int(cc["roce_prio"], 16) in sw["pfc"]
    assert sw["dscp_to_tc"][int(cc["cnp_dscp"], 16)] == int(cc["cnp_prio"], 16) and int(cc["cnp_prio"], 16) in sw["strict"]
    assert cc["apply"] == "0x1" and re.findall(r'"\$cc/(\w+)"$', block, re.M)[-1] == "apply"  # after every setting
    assert "mlnx_qos" not in block


def test_an_unknown_nic_family_gets_settings_printed_not_guessed(tmp_path, write_intent):
    build = lab_build(tmp_path, write_intent, "gpus: 16\nfrontend: {qos: {enabled: true}}\n")
    script = text(build, "hosts/gpu0001/nic-qos.sh")
    fe1 = script_blocks(script)["fe1"]
    assert "NIC family unknown" in script and not re.search(r"^(run mlnx_qos|run dcb|put )", fe1, re.M)
    assert "PFC on priority 3 only" in fe1 and "CNPs sent in DSCP 48, priority 7" in fe1
    path = tmp_path / "nic-qos.sh"
    path.write_text(script)
    result = subprocess.run(["bash", str(path)], env={"PATH": "/usr/bin:/bin", "DRY_RUN": "1"}, capture_output=True, text=True)
    assert result.returncode == 2 and "fe1 (fe1): NIC family unknown" in result.stderr  # not silently "done"


def test_host_files_follow_the_leaf_they_are_cabled_to(whitepaper):
    """Every NIC names its leaf port, and that is the cabling plan's other end of its cable."""
    build = whitepaper[512]
    cables = {r["cable_id"]: r for r in rows(build, "cabling.csv")}
    for host in build.hosts.values():
        for nic in host.nics:
            row = cables[nic.cable]
            assert (row["a_device"], row["a_port"], row["b_device"], row["b_port"]) == (host.hostname, nic.port, nic.switch, nic.switch_port)


def test_a_nic_follows_the_qos_override_of_its_leaf(write_intent):
    # the override must hold on every switch of the path, or the hop-by-hop check refuses it
    # (tests/test_consistency.py); here leaves and spines all trust DSCP 26 only
    switches = [f"be-su01-leaf{r}" for r in range(1, 9)] + ["be-spine01", "be-spine02"]
    overrides = "".join(f"    {name}: {{roce_dscp: [26]}}\n" for name in switches)
    build = compile_intent(write_intent("gpus: 16\nbackend:\n  qos_overrides:\n" + overrides))
    for host in build.hosts.values():
        for nic in host.nics:
            assert (nic.rdma_dscp, nic.dscp_to_priority) == (26, ((26, 3), (48, 7))), (host.hostname, nic.port)


def test_nic_commands_rendered_once_per_setting_still_name_each_nics_own_cable(whitepaper):
    """A NIC's commands are rendered once per distinct NicSettings and shared; what differs per NIC
    (cable, leaf port, address) is in its header, so every script still names its own."""
    from fabricgen.render.hosts import NicSettings

    assert not {"switch", "switch_port", "cable", "address", "gateway", "table", "routes"} & set(NicSettings._fields)
    build = whitepaper[512]
    for host in list(build.hosts.values())[:8]:
        script = build.files[f"hosts/{host.hostname}/nic-qos.sh"].decode()
        for nic in host.nics:
            assert f"# --- {nic.port}: {nic.nic}, {nic.network} fabric, cabled to {nic.switch} {nic.switch_port} ({nic.cable}), {nic.cidr}\n" in script


def test_a_nic_template_reading_what_nicsettings_lacks_fails_the_render():
    """The shared rendering is safe only while the family templates read nothing but the settings:
    one that reads the cable gets StrictUndefined, not another NIC's cable."""
    import jinja2

    from fabricgen.render.environment import environment
    from fabricgen.render.hosts import NicSettings

    settings = NicSettings("nic1", "backend", 9000, True, (3,), ((26, 3),), 26, 3, 48, 6, 50)
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ nic.cable }}").render(nic=settings)


@pytest.mark.parametrize(
    ("section", "model"),
    [("storage_nodes", "AFF-A90"), ("management_nodes", "UCSC-C225-M8S")],
)
def test_servers_without_the_network_they_attach_to_are_refused(write_intent, section, model):
    """The defect: storage and management nodes with no frontend built, came out in the BOM with no
    cable and no word; they attach to the frontend (or storage) fabric, so the intent is refused."""
    stderr = build_refused(write_intent(f"gpus: 64\n{section}: {{model: {model}, count: 2}}\n"))
    assert f"{section}.model" in stderr or section in stderr
    assert "no frontend" in stderr and "add a 'frontend:' section" in stderr


def test_no_servers_need_no_frontend(write_intent):
    compiled = compile_intent(write_intent("gpus: 64\nstorage_nodes: {model: AFF-A90, count: 0}\n"), render=False).compiled
    assert not list(compiled.fabric.by_role(Role.STORAGE_NODE))
