"""`fabricgen push` and `verify` rehearsed on the lab: `lab up --management` (issue 33).

tests/lab/verify.yaml (2 SONiC leaves of 4 rails each, 2 SONiC spines, 4 DGX nodes, BGP keyed with
`bgp-backend`) is built and its lab brought up once for the module, as a user does it:
`fabricgen lab up BUILD --management --secrets FILE`. Every switch then has a management endpoint
(fabricgen.lab.management: an sshd on 127.0.0.1 whose vtysh drives that switch's FRR and whose
SONiC stand-ins answer from its kernel and lldpd), named in the inventory and known_hosts files
`up` wrote, reached with the password from the file `up` named. Then, with the real CLI:
`fabricgen verify` exits 0; tests/lab_faults.py breaks the lab behind the plan's back (two
leaf-spine cables swapped, a cable pulled, a BGP neighbour at a wrong address) and verify exits 1
naming exactly that, without writing to any device; `fabricgen push --commit` of a changed build
reaches the leaf's FRR with the lab's BGP key filled in memory (never on a command line or in a
file); a broken change is rolled back by push; a push killed after its commit is reverted by the
device's own timer;
`lab down` leaves nothing, also an endpoint its state does not record (a crash's).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fabricgen.lab import management
from fabricgen.lab.state import endpoint_marker, management_directory
from tests import cli_runner
from tests.push_build import completed_copy, rehash
from tests.sonic_target import expire_timer, wait_until
from tests.test_lab import leftovers, needs_lab
from tests.test_sonic_driver import needs_target, neighbors_of

pytestmark = [needs_lab, needs_target]

INTENT = Path(__file__).resolve().parent / "lab" / "verify.yaml"
LLDP_WAIT = 60.0  # seconds for lldpd to report a rewired port's new neighbour
MARKER = "mk-7c1d-LAB-KEY"  # the BGP key's value starts with it: a leak is found by a plain search
LEAF = "be-su01-leaf1"


class Lab:
    """The module's lab: its build, plan and state, what `up` printed and wrote, the login."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.build_dir = directory / "build"
        self.secrets_file = directory / "secrets.yaml"
        self.key = f"{MARKER}-{secrets.token_hex(4)}"
        self.up_output = ""

    def load(self) -> None:
        from fabricgen.lab import runtime
        from fabricgen.lab.plan import read_plan

        self.state = runtime.load_state(self.build_dir)
        self.plan = read_plan(self.build_dir)
        files = management_directory(self.state.lab_id)
        self.inventory, self.known_hosts, self.password_file = (files / name for name in ("inventory.yaml", "known_hosts", "password"))
        self.password = self.password_file.read_text().strip()

    def env(self) -> dict[str, str]:
        """A user's environment with the lab's login, as push and verify read it."""
        own = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
        return own | {"FABRICGEN_USERNAME": "root", "FABRICGEN_PASSWORD": self.password}

    def endpoint_dir(self, device: str) -> Path:
        return management_directory(self.state.lab_id) / device

    def config_calls(self, device: str) -> list[list[str]]:
        record = self.endpoint_dir(device) / "record.jsonl"
        calls = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
        return [call[1:] for call in calls if call[0] == "config"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    lab = Lab(tmp_path_factory.mktemp("management-lab"))
    built = cli_runner.fabricgen("build", INTENT, "-o", lab.build_dir, "-q")
    assert built.returncode == 0, built.stderr
    lab.secrets_file.write_text(f"bgp-backend: {lab.key}\n")
    lab.secrets_file.chmod(0o600)
    try:
        up = cli_runner.fabricgen("lab", "up", lab.build_dir, "--management", "--secrets", lab.secrets_file, "--timeout", "60", "-q")
        lab.up_output = up.stdout + up.stderr
        assert up.returncode == 0 and "converged" in up.stdout, lab.up_output
        lab.load()
        yield lab
    finally:
        cli_runner.fabricgen("lab", "down", lab.build_dir)
        assert leftovers(lab.build_dir) == []


def verify(lab: Lab) -> tuple[int, dict]:
    result = cli_runner.fabricgen(
        "verify", lab.build_dir, "--inventory", lab.inventory, "--known-hosts", lab.known_hosts, "--interval", "1", "--json", env=lab.env()
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert lab.password not in result.stdout + result.stderr and MARKER not in result.stdout + result.stderr
    for name in lab.plan.switches:  # verify only reads: no run writes to any device
        assert lab.config_calls(name) == [], name
    return result.returncode, json.loads(result.stdout)


def errors(document: dict, check: str | None = None) -> list[dict]:
    return [f for f in document["findings"] if f["severity"] == "error" and (check is None or f["check"] == check)]


def verify_until(lab: Lab, done, timeout: float = LLDP_WAIT) -> tuple[int, dict]:
    """verify again until `done(document)` (LLDP and BGP take seconds to see a change)."""
    deadline = time.monotonic() + timeout
    while True:
        code, document = verify(lab)
        if done(document) or time.monotonic() > deadline:
            return code, document
        time.sleep(2)


def fabric_cables(plan, leaf: str) -> list:
    return [link for link in plan.links if link.kind == "fabric" and leaf in (link.a.device, link.b.device)]


def running_frr(lab: Lab, device: str) -> str:
    return subprocess.run(["vtysh", "-N", lab.plan.namespace(device), "-c", "show running-config"], capture_output=True, text=True, check=True).stdout


def test_up_names_the_endpoints_files_and_not_the_password(lab: Lab):
    inventory = lab.inventory.read_text()
    ports = {e.device: e.port for e in lab.state.endpoints}
    assert set(ports) == set(lab.plan.switches) and len(set(ports.values())) == 4
    for device, port in ports.items():
        assert f"  {device}: {{host: 127.0.0.1, optional_args: {{port: {port}}}}}\n" in inventory
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) == 0, device
    hosts = lab.known_hosts.read_text().splitlines()
    assert sorted(line.split()[0] for line in hosts) == sorted(f"[127.0.0.1]:{port}" for port in ports.values())
    assert stat.S_IMODE(lab.password_file.stat().st_mode) == 0o600 and len(lab.password) >= 20
    assert str(lab.password_file) in lab.up_output and str(lab.inventory) in lab.up_output
    assert lab.password not in lab.up_output and MARKER not in lab.up_output
    # the lab's BGP key is the secrets file's: push fills the same one in
    assert "keys: bgp-backend from the environment or the secrets file" in lab.up_output


def test_a_fresh_lab_matches_its_build(lab: Lab):
    code, document = verify(lab)
    assert errors(document) == [] and code == 0, [f["message"] for f in errors(document)]
    for name, device in document["devices"].items():
        # every getter answered: a stand-in missing or failing must not pass as "nothing found"
        assert device["reached"] and device["getter_errors"] == {}, (name, device)
        assert set(device["not_reported"]) <= {"get_optics"}, (name, device["not_reported"])
    # the running FRR as the switch shows it (the build's defaults left out, the switch's host name,
    # IPv6 forwarding on as SONiC sets it) is the build's, but for the lab's own zebra setting
    drift = {f["device"]: f["detail"]["diff"] for f in document["findings"] if f["check"] == "drift"}
    assert drift == {name: ["+no zebra nexthop kernel enable"] for name in document["devices"]}, drift


def test_two_swapped_leaf_spine_cables_are_named_as_one_swap(lab: Lab):
    from tests import lab_faults

    one = fabric_cables(lab.plan, "be-su01-leaf1")[0]
    two = fabric_cables(lab.plan, "be-su01-leaf5")[-1]
    fault = lab_faults.swap_cables(lab.plan, lab.state, one.cable, two.cable)
    try:
        code, document = verify_until(lab, lambda d: any(f["detail"].get("kind") == "swap" for f in errors(d, "cabling")))
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
    code, document = verify_until(lab, lambda d: not errors(d), timeout=90)
    assert code == 0, [f["message"] for f in errors(document)]


def test_a_pulled_cable_and_a_wrong_peer_address_are_named(lab: Lab):
    from tests import lab_faults

    pulled = fabric_cables(lab.plan, "be-su01-leaf1")[1]
    rows = [r for r in csv_rows(lab.build_dir / "ip-plan.csv") if r["device"] == "be-su01-leaf5" and r["kind"] == "fabric"]
    cut = rows[0]
    wrong = "10.255.255.1"  # no lab address: the session cannot come up
    down = lab_faults.link_down(lab.plan, lab.state, pulled.cable)
    moved = lab_faults.set_peer_address(lab.plan, lab.state, "be-su01-leaf5", cut["peer_address"], wrong)
    try:
        code, document = verify_until(lab, lambda d: any(f["message"].startswith("missing cable") for f in errors(d, "cabling")))
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


REHEARSAL_LINE = "ip prefix-list FABRICGEN-ACCEPT seq 30 permit 192.0.2.0/24 le 32"


def add_rehearsal_line(frr: str) -> str:
    """A change every switch's FRR shows and nothing depends on: one more accepted prefix."""
    anchor = re.search(r"^ip prefix-list FABRICGEN-ACCEPT seq 20 .*\n", frr, re.MULTILINE)
    assert anchor, "the build's frr.conf has no FABRICGEN-ACCEPT seq 20"
    return frr[: anchor.end()] + REHEARSAL_LINE + "\n" + frr[anchor.end() :]


def push_command(lab: Lab, build: Path, *args: str) -> list[str]:
    return ["push", str(build), "--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts), "--secrets", str(lab.secrets_file), *args]


class CmdlineWatch:
    """Samples every process's command line while a push runs; keeps those holding the marker."""

    def __init__(self):
        self.found: list[str] = []
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        marker = MARKER.encode()
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):  # os and open, not pathlib: about 2/3 of the CPU per sample
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                            line = cmdline.read()
                    except OSError:
                        continue
                    if marker in line:
                        self.found.append(line.replace(b"\0", b" ").decode(errors="replace"))
            self.samples += 1
            time.sleep(0.01)


def push_process(lab: Lab, build: Path, *args: str) -> subprocess.CompletedProcess:
    """`fabricgen push` as a user runs it, a process of its own (its command line is watched)."""
    command = [sys.executable, "-m", "fabricgen", *push_command(lab, build, *args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=lab.env(), stdin=subprocess.DEVNULL, check=False)


def test_a_pushed_change_reaches_the_switchs_frr_its_key_filled_in_memory(lab: Lab, tmp_path: Path):
    """The leaf has drifted (no BGP at all) and the build changed (one more accepted prefix;
    complete for a replace: tests/push_build.py). The push fills the lab's BGP key from the
    secrets file in memory, commits with commit-confirm, sees both sessions Established with the
    key, opens a new management session, confirms: vtysh in the leaf's namespace shows the change
    and the keyed sessions. No key value in the output, the endpoint's logs, the timer script or
    any command line; a second push finds nothing to change."""
    changed = completed_copy(lab.build_dir, tmp_path / "changed", edit_frr=add_rehearsal_line)
    expected = neighbors_of((changed / "configs" / LEAF / "frr.conf").read_text())
    namespace = lab.plan.namespace(LEAF)
    subprocess.run(["vtysh", "-N", namespace, "-c", "configure terminal", "-c", "no router bgp"], capture_output=True, check=True)

    dry = cli_runner.fabricgen(*push_command(lab, changed, "--devices", LEAF), env=lab.env())
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would change" in dry.stdout and "router bgp 64513" in dry.stdout and REHEARSAL_LINE in dry.stdout
    assert "password <<secret=bgp-backend>>" in dry.stdout  # the diff names the secret, masked
    assert lab.config_calls(LEAF) == []  # the preflight changed nothing

    with CmdlineWatch() as watch:
        committed = push_process(lab, changed, "--devices", LEAF, "--commit", "--verify-timeout", "120")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert f"{len(expected)}/{len(expected)} BGP neighbors Established; a new management session works; confirmed" in committed.stdout
    assert [c[0] for c in lab.config_calls(LEAF)] == ["checkpoint", "replace", "save"]
    assert not (lab.endpoint_dir(LEAF) / "config" / "fabricgen" / "confirm-pending").exists()
    running = running_frr(lab, LEAF)
    assert "router bgp 64513" in running and REHEARSAL_LINE in running
    # the lab's key (the secrets file's value) is configured on the leaf's spine sessions: FRR shows it in its config
    assert f" neighbor SPINES password {lab.key}\n" in running
    assert all(f" neighbor {peer} peer-group SPINES\n" in running for peer in expected)
    assert watch.samples > 10 and watch.found == [], watch.found

    outputs = dry.stdout + dry.stderr + committed.stdout + committed.stderr
    assert MARKER not in outputs and lab.password not in outputs
    endpoint = lab.endpoint_dir(LEAF)
    places = [changed, endpoint / "sshd.log", endpoint / "record.jsonl", endpoint / "unshare.log", endpoint / "config" / "fabricgen" / "confirm-timer.sh"]
    places += list(Path("/tmp").glob("fabricgen-push-*"))
    found = subprocess.run(["grep", "-rlF", "--", MARKER, *map(str, places)], capture_output=True, text=True, check=False)
    assert found.returncode == 1, f"a secret value is in: {found.stdout}{found.stderr}"

    again = cli_runner.fabricgen(*push_command(lab, changed, "--devices", LEAF), env=lab.env())
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout + again.stderr  # idempotent: nothing left to push


def broken_build(lab: Lab, destination: Path) -> Path:
    """The changed build with the leaf's spines at a wrong ASN: its sessions cannot come up."""
    broken = completed_copy(lab.build_dir, destination, edit_frr=add_rehearsal_line)
    frr_conf = broken / "configs" / LEAF / "frr.conf"
    frr_conf.write_text(frr_conf.read_text().replace("remote-as 64512", "remote-as 65000"))
    rehash(broken, f"configs/{LEAF}/frr.conf")
    return broken


def test_a_broken_change_is_rolled_back_to_the_running_config(lab: Lab, tmp_path: Path):
    broken = broken_build(lab, tmp_path / "broken")
    before = running_frr(lab, LEAF)
    calls = len(lab.config_calls(LEAF))
    # the sessions cannot come up (the spines' ASN is wrong): any wait ends in fabricgen's rollback
    result = cli_runner.fabricgen(*push_command(lab, broken, "--devices", LEAF, "--commit", "--verify-timeout", "3"), env=lab.env())
    assert result.returncode == 1, result.stdout + result.stderr
    expected = neighbors_of((broken / "configs" / LEAF / "frr.conf").read_text())
    assert "rolled back" in result.stdout and f"0/{len(expected)} BGP neighbors Established" in result.stdout
    verbs = [c[0] for c in lab.config_calls(LEAF)[calls:]]
    assert verbs == ["checkpoint", "replace", "save", "rollback", "save"], verbs
    assert running_frr(lab, LEAF) == before  # the previous running FRR config, exactly
    assert not (lab.endpoint_dir(LEAF) / "config" / "fabricgen" / "confirm-timer.pid").exists()  # the rollback cancelled the timer


def test_an_unconfirmed_commit_is_reverted_by_the_device(lab: Lab, tmp_path: Path):
    """A commit whose sessions never come up (the spines' ASN wrong); fabricgen is killed while it
    waits for them: nobody confirms or rolls back, and the switch's own confirm timer restores the
    previous config. The confirm window is long (a loaded machine cannot run it out before the
    kill); the test then ends the timer's sleep, as the window running out would, and waits for
    the restore with a generous bound."""
    broken = broken_build(lab, tmp_path / "broken")
    before = running_frr(lab, LEAF)
    assert "remote-as 65000" not in before
    command = [
        sys.executable,
        "-m",
        "fabricgen",
        *push_command(lab, broken, "--devices", LEAF, "--commit", "--verify-timeout", "300", "--confirm-timeout", "600"),
    ]
    process = subprocess.Popen(command, env=lab.env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = endpoint_marker(lab.state.lab_id, LEAF)

    def timers() -> list[int]:
        found = []
        for pid in management.namespace_processes([marker]).get(marker, []):
            try:
                if b"confirm-timer" in Path(f"/proc/{os.getpgid(pid)}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        return found

    try:
        wait_until(lambda: process.poll() is not None or "remote-as 65000" in running_frr(lab, LEAF), 180, "the commit", interval=0.5)
        assert process.poll() is None, "the push ended before it was killed"
        assert timers(), "no confirm timer runs on the device"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    expire_timer(lab.endpoint_dir(LEAF) / "config", timers)
    wait_until(lambda: not timers() and running_frr(lab, LEAF) == before, 180, "the confirm timer's restore", interval=0.5)
    verbs = [c[0] for c in lab.config_calls(LEAF)]
    assert verbs[-5:] == ["checkpoint", "replace", "save", "rollback", "save"], verbs
    assert "not confirmed within 600 s" in (lab.endpoint_dir(LEAF) / "config" / "fabricgen" / "confirm-timer.log").read_text()
    for staging in Path("/tmp").glob("fabricgen-push-*"):  # the killed push could not remove its staging copy
        assert subprocess.run(["grep", "-rqF", MARKER, str(staging)], check=False).returncode != 0
        shutil.rmtree(staging, ignore_errors=True)


def test_down_leaves_nothing_also_an_endpoint_a_crash_left_unrecorded(lab: Lab):
    """Last. An endpoint the state file does not list (as a crash between its start and the
    state's next save would leave) is found by its marker; then nothing of the lab is left: no
    process of any endpoint's namespace, no listener on their ports, no file in the lab's state."""
    from fabricgen.lab.runtime import lldpd_socket
    from fabricgen.lab.state import frr_dir

    namespace = lab.plan.namespace(LEAF)
    orphan = management.start_endpoint(
        "orphan",
        namespace,
        management_directory(lab.state.lab_id) / "orphan",
        endpoint_marker(lab.state.lab_id, "orphan"),
        port=management.free_port(),
        root_hash=management.password_hash(secrets.token_urlsafe(12)),
        nos="sonic",
        config_files={},
        ports={},
        frr_dir=frr_dir(namespace),
        lldpd_socket=lldpd_socket(namespace),
    )
    prefix = endpoint_marker(lab.state.lab_id, "")
    assert len(management.namespace_processes(prefix=prefix)) == 5
    ports = [e.port for e in lab.state.endpoints] + [orphan.port]

    result = cli_runner.fabricgen("lab", "down", lab.build_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert management.namespace_processes(prefix=prefix) == {}
    for port in ports:
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, port
    assert not management_directory(lab.state.lab_id).exists()
    assert leftovers(lab.build_dir) == []


def csv_rows(path: Path) -> list[dict]:
    import csv

    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))
