"""What `lab up --management` writes and says, without a lab: the inventory (push's format, read
back by push's own reader), its refusal of switches whose NOS the lab does not run, the lines
`up` prints. The endpoints themselves: tests/test_lab_management.py (root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.basics.errors import PushError
from fabricgen.compiler.pipeline import build
from fabricgen.lab import management
from fabricgen.lab.report import management_lines
from fabricgen.lab.session import ManagementReport
from fabricgen.push.inventory import read_targets

# NX-OS leaves and spines, and a management plan: push alone would reach for 172.16.x addresses
TINY_OOB = """
name: tiny-oob
gpus: 16
oob:
  switch: {model: N9K-C93108TC-FX3, nos: nxos, count: 1}
  console: {model: C8300-1N1S-4T2X, module: NIM-24A}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("management-files")
    (root / "tiny-oob.yaml").write_text(TINY_OOB.lstrip())
    build(root / "tiny-oob.yaml", root / "build")
    return root / "build"


def test_sonic_switches_get_endpoints_and_the_others_are_refused_with_the_reason(tmp_path: Path):
    """SONiC leaves, NX-OS spines (as tests/lab/two-units.yaml): the lab runs the spines' FRR twin,
    not NX-OS, so they get none; the NOS comes from the build's topology.json, as `up` reads it."""
    from fabricgen.build.build_dir import BuildFiles

    (tmp_path / "mixed.yaml").write_text("name: mixed\ngpus: 16\nbackend:\n  leaf: {nos: sonic}\n  spine: {nos: nxos}\n")
    build(tmp_path / "mixed.yaml", tmp_path / "build")
    nodes = {node.id: str(node.nos) for node in BuildFiles(tmp_path / "build", PushError).topology().nodes if node.role in ("leaf", "spine")}
    chosen, refused = management.endpoint_switches(nodes)
    assert chosen == [name for name in nodes if "leaf" in name] and len(chosen) == 8  # a leaf per rail
    assert set(refused) == {"be-spine01", "be-spine02"}
    assert refused["be-spine01"].startswith("no management endpoint: the lab runs an FRR routing twin of its nxos config, not nxos")


def endpoint(device: str, port: int, directory: Path) -> management.Endpoint:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ssh_host_ed25519_key.pub").write_text(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{port} fabricgen-lab-{device}\n")
    return management.Endpoint(device, port, directory, pid=1)


def test_the_inventory_is_pushs_and_a_refused_switch_names_why(built: Path, tmp_path: Path):
    """One switch on an endpoint (a SONiC one would be), the spines refused as a lab refuses an
    NX-OS switch: push's reader takes the endpoint's address, port and FRR-on-the-host options,
    and for a refused spine names the reason instead of falling back to the build's management
    address (a real switch's)."""
    leaf = endpoint("be-su01-leaf1", 40123, tmp_path / "leaf")
    refused = {spine: management.refusal("nxos") for spine in ("be-spine01", "be-spine02")}
    management.write_lab_files(tmp_path, "abc123", [leaf], refused, {"frr_container": "", "lldp_container": ""})
    inventory = tmp_path / management.INVENTORY_FILE
    assert (tmp_path / management.KNOWN_HOSTS_FILE).read_text() == "[127.0.0.1]:40123 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI40123\n"
    assert (inventory.stat().st_mode & 0o777) == 0o600

    [target] = read_targets(built, "be-su01-leaf1", inventory)
    # the defaults' frr_container and lldp_container are SONiC's options: an NX-OS leaf does not inherit them
    assert (target.host, target.optional_args) == ("127.0.0.1", {"port": 40123})
    assert 'defaults: {optional_args: {"frr_container": "", "lldp_container": ""}}' in inventory.read_text()

    with pytest.raises(PushError) as error:
        read_targets(built, "be-su01-leaf1,spine", inventory)
    report = error.value.report()
    for spine in refused:
        assert f"{spine}: this inventory cannot reach it: no management endpoint: the lab runs an FRR routing twin of its nxos config" in report
    assert "172.16." not in report and "leave it out with --devices" in report


@pytest.mark.parametrize(
    ("value", "message"),
    [("''", "is no text"), ("[a, b]", "is no text"), ('"two\\nlines"', "line break"), ("'" + "x" * 501 + "'", "too long")],
)
def test_a_bad_unavailable_is_refused_with_its_field(built: Path, tmp_path: Path, value: str, message: str):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"devices:\n  be-spine01: {{unavailable: {value}}}\n")
    with pytest.raises(PushError) as error:
        read_targets(built, None, inventory)
    report = error.value.report()
    assert "devices.be-spine01.unavailable" in report and message in report, report


def test_up_names_the_password_file_and_the_refused_switches():
    report = ManagementReport(
        "127.0.0.1",
        "root",
        {"be-su01-leaf1": 40123, "be-su01-leaf2": 40007},
        ["be-spine01"],
        Path("/run/x/inventory.yaml"),
        Path("/run/x/known_hosts"),
        Path("/run/x/password"),
    )
    lines = management_lines(report)
    assert lines[0].startswith("management: 2 SONiC switch endpoints over SSH on 127.0.0.1 (ports 40007-40123), login root, password in /run/x/password")
    assert "inventory: /run/x/inventory.yaml" in lines and "known_hosts: /run/x/known_hosts" in lines
    assert lines[-1] == "management: 1 switches without an endpoint (their NOS does not run in the lab): be-spine01"
    empty = ManagementReport("127.0.0.1", "root", {}, ["be-spine01"], Path("i"), Path("k"), Path("p"))
    assert management_lines(empty) == ["management: no SONiC switch in this lab, so no endpoint (see the notes)"]
