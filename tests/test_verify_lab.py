"""`fabricgen verify` against a running lab: the acceptance test of issue 20.

tests/lab/verify.yaml (2 SONiC leaves of 4 rails each, 2 SONiC spines, 4 DGX nodes) is built and
its lab brought up once for the module: real FRR and real lldpd (advertising the planned device and
port names) in one network namespace per switch and node. Each switch is then reached as a user
reaches a SONiC switch: fabricgen's SONiC driver over SSH to a tests.sonic_target (an sshd on
127.0.0.1 whose vtysh drives that switch's FRR and whose stand-ins answer the sonic-utilities
show commands from the namespace's real state), host keys pinned in a known_hosts file, through
an inventory file, with `fabricgen verify` run as a command. tests/lab_faults.py then breaks the
lab behind the plan's back: two leaf-spine cables swapped, a cable pulled, a BGP neighbour at a
wrong address. Each time verify must exit 1 and name exactly that; and no device is ever written
to (after every verify run, every target's record of `config` commands is still empty).
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from unittest import mock

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from tests import sonic_target
from tests.test_lab import leftovers, needs_lab
from tests.test_sonic_driver import needs_target

pytestmark = [needs_lab, needs_target]

INTENT = Path(__file__).resolve().parent / "lab" / "verify.yaml"
LLDP_WAIT = 60.0  # seconds for lldpd to report a rewired port's new neighbour


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """(build_dir, plan, state, targets, inventory, known_hosts, password); everything down after."""
    from fabricgen.compiler.pipeline import build
    from fabricgen.lab import runtime, session

    directory = tmp_path_factory.mktemp("verify-lab")
    build_dir = directory / "build"
    build(INTENT, build_dir)
    targets: dict[str, sonic_target.SonicTarget] = {}
    # one login for every target, as a fabric's switches share one (FABRICGEN_PASSWORD)
    password = secrets.token_urlsafe(18)
    try:
        report = session.up(build_dir, timeout=60)
        assert report.converged, "the lab did not converge"
        plan, state = report.plan, runtime.load_state(build_dir)
        with mock.patch.object(sonic_target.secrets, "token_urlsafe", return_value=password):
            for name in sorted(plan.switches):
                config_db = json.loads((build_dir / "configs" / name / "config_db.json").read_text())
                frr = (build_dir / "configs" / name / "frr.conf").read_text()
                ports = {port.port: port.ifname for port in plan.ports_of(name)}
                targets[name] = sonic_target.start_sonic_target(plan.namespace(name), directory / "targets" / name, config_db, frr, ports=ports)
        known_hosts = directory / "known_hosts"
        known_hosts.write_text("".join(t.known_hosts.read_text() for t in targets.values()))
        inventory = directory / "inventory.yaml"
        inventory.write_text(
            "devices:\n"
            + "".join(
                f"  {name}: {{host: 127.0.0.1, optional_args: {{port: {t.port}, frr_container: '', lldp_container: ''}}}}\n" for name, t in targets.items()
            )
        )
        yield build_dir, plan, state, targets, inventory, known_hosts, password
    finally:
        for target in targets.values():
            target.stop()
        session.down(build_dir)
        assert leftovers(build_dir) == []


def verify(lab, monkeypatch) -> tuple[int, dict]:
    build_dir, _, _, _, inventory, known_hosts, password = lab
    monkeypatch.setenv("FABRICGEN_USERNAME", "root")
    monkeypatch.setenv("FABRICGEN_PASSWORD", password)
    result = CliRunner().invoke(app, ["verify", str(build_dir), "--inventory", str(inventory), "--known-hosts", str(known_hosts), "--interval", "1", "--json"])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    assert password not in result.output
    for name, target in lab[3].items():  # verify only reads: no run writes to any device
        assert target.commands("config") == [], name
    return result.exit_code, document


def errors(document: dict, check: str | None = None) -> list[dict]:
    return [f for f in document["findings"] if f["severity"] == "error" and (check is None or f["check"] == check)]


def verify_until(lab, monkeypatch, done, timeout: float = LLDP_WAIT) -> tuple[int, dict]:
    """verify again until `done(document)` (LLDP and BGP take seconds to see a change)."""
    deadline = time.monotonic() + timeout
    while True:
        code, document = verify(lab, monkeypatch)
        if done(document) or time.monotonic() > deadline:
            return code, document
        time.sleep(2)


def fabric_cables(plan, leaf: str) -> list:
    return [link for link in plan.links if link.kind == "fabric" and leaf in (link.a.device, link.b.device)]


def test_a_fresh_lab_matches_its_build(lab, monkeypatch):
    code, document = verify(lab, monkeypatch)
    assert errors(document) == [] and code == 0, [f["message"] for f in errors(document)]
    for name, device in document["devices"].items():
        # every getter answered: a stand-in missing or failing must not pass as "nothing found"
        assert device["reached"] and device["getter_errors"] == {}, (name, device)
        assert set(device["not_reported"]) <= {"get_optics"}, (name, device["not_reported"])


def test_two_swapped_leaf_spine_cables_are_named_as_one_swap(lab, monkeypatch):
    from tests import lab_faults

    _, plan, state, _, _, _, _ = lab
    one = fabric_cables(plan, "be-su01-leaf1")[0]
    two = fabric_cables(plan, "be-su01-leaf5")[-1]
    fault = lab_faults.swap_cables(plan, state, one.cable, two.cable)
    try:
        code, document = verify_until(lab, monkeypatch, lambda d: any(f["detail"].get("kind") == "swap" for f in errors(d, "cabling")))
        assert code == 1
        cabling = errors(document, "cabling")
        assert len(cabling) == 1, [f["message"] for f in cabling]
        assert cabling[0]["message"] == f"swap of 2 cables: {one.cable}, {two.cable}"
        named = {(end["device"], end["port"]) for cable in cabling[0]["detail"]["cables"] for end in (cable["a"], cable["b"])}
        assert named == {(p.device, p.port) for link in (one, two) for p in (link.a, link.b)}
        # what follows (both cables' sessions down) says so
        for finding in errors(document, "routing"):
            if finding["port"]:
                assert "follows from: swap of 2 cables" in finding["message"], finding["message"]
    finally:
        fault.undo()
    code, document = verify_until(lab, monkeypatch, lambda d: not errors(d), timeout=90)
    assert code == 0, [f["message"] for f in errors(document)]


def test_a_pulled_cable_and_a_wrong_peer_address_are_named(lab, monkeypatch):
    from tests import lab_faults

    build_dir, plan, state, _, _, _, _ = lab
    pulled = fabric_cables(plan, "be-su01-leaf1")[1]
    rows = [r for r in csv_rows(build_dir / "ip-plan.csv") if r["device"] == "be-su01-leaf5" and r["kind"] == "fabric"]
    cut = rows[0]
    wrong = "10.255.255.1"  # no lab address: the session cannot come up
    down = lab_faults.link_down(plan, state, pulled.cable)
    moved = lab_faults.set_peer_address(plan, state, "be-su01-leaf5", cut["peer_address"], wrong)
    try:
        code, document = verify_until(lab, monkeypatch, lambda d: any(f["message"].startswith("missing cable") for f in errors(d, "cabling")))
        assert code == 1
        cabling = errors(document, "cabling")
        assert [f["message"] for f in cabling] == [f"missing cable {pulled.cable}: no LLDP neighbour"]
        ports = {(f["device"], f["port"]) for f in errors(document, "ports")}
        assert ports == {(p.device, p.port) for p in (pulled.a, pulled.b)}
        routing = [f["message"] for f in errors(document, "routing") if f["device"] == "be-su01-leaf5"]
        assert any(f"peer address {wrong} configured, plan says {cut['peer_address']}" in m for m in routing), routing
    finally:
        moved.undo()
        down.undo()


def csv_rows(path: Path) -> list[dict]:
    import csv

    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))
