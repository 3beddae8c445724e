"""`fabricgen push` end to end, as a user runs it, against a real SSH server and real FRR.

The push runs as a process of its own where the process matters (the secrets never on a command
line or in a file; a push killed midway), in the test process otherwise (tests/cli_runner.py).
The switch is a lab leaf (tests/lab/two-units.yaml: SONiC leaves) behind the lab's management
endpoint (fabricgen.lab.management, started for one leaf by tests/sonic_target.py): OpenSSH on
127.0.0.1 in a private mount namespace, whose vtysh and frr-reload.py drive that leaf's FRR.
sonic-utilities cannot run outside SONiC, so `config` and `show runningconfiguration all` are
stand-ins that record their arguments and keep config_db as JSON files on the endpoint. The tests
run in order, each from the previous one's end. A push killed after its commit and reverted by the
device's own timer is tests/test_lab_management.py's (on `lab up --management`).

Every push here is of a build made complete for a replace (tests/push_build.py adds what the
renderer does not write yet) whose leaf frr.conf uses the BGP key `bgp-backend`; the values of
every secret the build names are marker strings given to `push` in its environment, and the lab
spines get the same key for their sessions to the leaf (through vtysh's stdin, never a command line).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fabricgen.build.secrets import env_name
from tests import cli_runner
from tests.push_build import completed_copy, rehash
from tests.sonic_target import free_port, start_sonic_target
from tests.test_lab import needs_lab
from tests.test_sonic_driver import needs_target, neighbors_of, running_frr, vtysh

pytestmark = [needs_lab, needs_target]

LEAF = "be-su01-leaf1"
OTHER_LEAF = "be-su01-leaf2"
MARKER = "mk-5e2b-PUSH-SECRET"  # every secret's value starts with it: a leak is found by a plain search
BGP_KEY = "bgp-backend"


def with_keys(frr: str) -> str:
    """frr.conf with `neighbor X password <<secret=bgp-backend>>` after each neighbor's remote-as,
    unless the renderer already writes a key."""
    if "password" in frr:
        return frr
    return re.sub(
        r"^( neighbor (\S+) remote-as \S+\n)", lambda m: f"{m.group(1)} neighbor {m.group(2)} password <<secret={BGP_KEY}>>\n", frr, flags=re.MULTILINE
    )


def secret_env(build_dir: Path) -> dict[str, str]:
    """A marker value for every secret any switch of the build names (topology.json), and the BGP key."""
    names = {BGP_KEY} | {name for node in json.loads((build_dir / "topology.json").read_text())["nodes"] for name in node.get("secrets", [])}
    return {env_name(name): f"{MARKER}-{name}" for name in names}


def vtysh_stdin(namespace: str, commands: str) -> None:
    """Configure a lab switch's FRR with commands on stdin (a key must not be on a command line)."""
    subprocess.run(["vtysh", "-N", namespace], input=commands, capture_output=True, text=True, check=True)


@pytest.fixture(scope="module")
def complete(two_unit_lab, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab build, complete for a replace, its leaf sessions keyed with bgp-backend."""
    build_dir, _ = two_unit_lab
    return completed_copy(build_dir, tmp_path_factory.mktemp("push-complete") / "build", edit_frr=with_keys)


@pytest.fixture(scope="module")
def keyed_spines(two_unit_lab, complete):
    """The spines' sessions to LEAF take the same key; removed again afterwards (no value needed)."""
    build_dir, plan = two_unit_lab
    leaf_addresses = {
        key.split("|")[1].split("/")[0] for key in json.loads((build_dir / "configs" / LEAF / "config_db.json").read_text())["INTERFACE"] if "|" in key
    }
    value = secret_env(complete)[env_name(BGP_KEY)]
    configured = []
    for spine in ("be-spine01", "be-spine02"):
        namespace = plan.namespace(spine)
        running = subprocess.run(["vtysh", "-N", namespace, "-c", "show running-config"], capture_output=True, text=True, check=True).stdout
        asn = re.search(r"^router bgp (\d+)", running, re.MULTILINE).group(1)
        peers = sorted(set(re.findall(r"^ neighbor (\S+) remote-as", running, re.MULTILINE)) & leaf_addresses)
        vtysh_stdin(namespace, f"configure terminal\nrouter bgp {asn}\n" + "".join(f"neighbor {peer} password {value}\n" for peer in peers))
        configured.append((namespace, asn, peers))
    yield
    for namespace, asn, peers in configured:
        vtysh_stdin(namespace, f"configure terminal\nrouter bgp {asn}\n" + "".join(f"no neighbor {peer} password\n" for peer in peers))


@pytest.fixture(scope="module")
def target(two_unit_lab, tmp_path_factory: pytest.TempPathFactory):
    build_dir, plan = two_unit_lab
    device = build_dir / "configs" / LEAF
    started = start_sonic_target(
        plan.namespace(LEAF), tmp_path_factory.mktemp("push-target"), json.loads((device / "config_db.json").read_text()), (device / "frr.conf").read_text()
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def inventory(target, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LEAF on the target; OTHER_LEAF on a loopback port nothing listens on. Beside it, a
    known_hosts file with the target's host key, which `push` checks against."""
    path = tmp_path_factory.mktemp("push-inventory") / "inventory.yaml"
    shutil.copyfile(target.known_hosts, path.with_name("known_hosts"))
    path.write_text(
        "defaults: {optional_args: {frr_container: ''}}\n"
        "devices:\n"
        f"  {LEAF}: {{host: 127.0.0.1, optional_args: {{port: {target.port}}}}}\n"
        f"  {OTHER_LEAF}: {{host: 127.0.0.1, optional_args: {{port: {free_port()}}}}}\n"
    )
    return path


def push_command(build_dir: Path, inventory: Path, password: str, *args: str) -> tuple[list[str], dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    env |= {"FABRICGEN_USERNAME": "root", "FABRICGEN_PASSWORD": password} | secret_env(build_dir)
    host_keys = [] if "--known-hosts" in args else ["--known-hosts", str(inventory.with_name("known_hosts"))]
    return [sys.executable, "-m", "fabricgen", "push", str(build_dir), "--inventory", str(inventory), "--connect-timeout", "10", *host_keys, *args], env


def push_process(build_dir: Path, inventory: Path, password: str, *args: str) -> subprocess.CompletedProcess:
    """`fabricgen push` as a user runs it, every secret the build names in its environment, host
    keys checked against the known_hosts file beside the inventory unless `args` name another."""
    command, env = push_command(build_dir, inventory, password, *args)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL, check=False)


def push(build_dir: Path, inventory: Path, password: str, *args: str) -> cli_runner.Completed:
    """The same push in this process (tests/cli_runner.py): for the tests about what it decides,
    not about what its process shows."""
    command, env = push_command(build_dir, inventory, password, *args)
    return cli_runner.fabricgen(*command[3:], env=env)


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


def test_push_commits_a_complete_keyed_config_with_secrets_filled_in_memory(two_unit_lab, complete, keyed_spines, target, inventory):
    """(c) The leaf has drifted (no BGP at all); the push fills the BGP key in memory, commits with
    commit-confirm, sees both sessions Established with the key, opens a new management session,
    confirms. No marker value in the build, the output, the target's logs or any command line."""
    expected = neighbors_of((complete / "configs" / LEAF / "frr.conf").read_text())
    vtysh(target, "configure terminal", "no router bgp")

    dry = push_process(complete, inventory, target.password, "--devices", LEAF)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would change" in dry.stdout and "router bgp 64513" in dry.stdout
    assert f"password <<secret={BGP_KEY}>>" in dry.stdout  # the diff names the secret, masked
    assert target.commands("sonic-installer") == [["list"]]  # the preflight read the image...
    assert target.commands("config") == []  # ...and changed nothing

    with CmdlineWatch() as watch:
        committed = push_process(complete, inventory, target.password, "--devices", LEAF, "--commit", "--verify-timeout", "60")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert f"{len(expected)}/{len(expected)} BGP neighbors Established; a new management session works; confirmed" in committed.stdout
    assert [c[0] for c in target.commands()] == ["checkpoint", "replace", "save"]
    assert target.timers() == [] and not (target.sonic_dir / "fabricgen" / "confirm-pending").exists()
    running = running_frr(target)
    assert "router bgp 64513" in running
    for peer in expected:  # the key is configured on the leaf's running sessions (FRR shows it in its config)
        assert re.search(rf"^ neighbor {re.escape(peer)} password \S+$", running, re.MULTILINE), running
    assert watch.samples > 10 and watch.found == [], watch.found

    outputs = dry.stdout + dry.stderr + committed.stdout + committed.stderr
    assert MARKER not in outputs
    places = [
        complete,
        target.log,
        target.record,
        target.directory / "unshare.log",
        target.sonic_dir / "fabricgen" / "confirm-timer.sh",
        *Path("/tmp").glob("fabricgen-push-*"),
    ]
    found = subprocess.run(["grep", "-rlF", "--", MARKER, *map(str, places)], capture_output=True, text=True, check=False)
    assert found.returncode == 1, f"a secret value is in: {found.stdout}{found.stderr}"

    again = push_process(complete, inventory, target.password, "--devices", LEAF)
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout  # idempotent: nothing left to push


def test_an_image_other_than_the_pinned_one_refuses_the_commit(complete, target, inventory):
    target.set_image("SONiC-OS-202311.3")
    target.forget_commands()
    try:
        result = push(complete, inventory, target.password, "--devices", LEAF, "--commit")
    finally:
        target.set_image("SONiC-OS-202411.0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "runs another image than the build pins (SONiC-OS-202411.0): current SONiC-OS-202311.3" in result.stdout
    assert "nothing was committed" in result.stdout and target.commands("config") == []


def test_a_broken_change_is_rolled_back_to_the_running_config(two_unit_lab, complete, keyed_spines, target, inventory, tmp_path: Path):
    broken = tmp_path / "broken"
    shutil.copytree(complete, broken)
    frr_conf = broken / "configs" / LEAF / "frr.conf"
    frr_conf.write_text(frr_conf.read_text().replace("remote-as 64512", "remote-as 65000"))
    rehash(broken, f"configs/{LEAF}/frr.conf")  # a build whose only change is the broken one
    before = running_frr(target)
    target.forget_commands()

    # the sessions cannot come up (the spines' ASN is wrong): any wait ends in the rollback
    result = push(broken, inventory, target.password, "--devices", LEAF, "--commit", "--verify-timeout", "3")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rolled back" in result.stdout and "0/2 BGP neighbors Established" in result.stdout
    verbs = [c[0] for c in target.commands("config")]
    assert verbs == ["checkpoint", "replace", "save", "rollback", "save"], verbs
    assert running_frr(target) == before  # the previous running FRR config, exactly
    assert target.timers() == []  # the explicit rollback cancelled the timer


def test_an_unreachable_device_blocks_the_whole_commit(complete, target, inventory):
    target.forget_commands()
    result = push(complete, inventory, target.password, "--devices", f"{LEAF},{OTHER_LEAF}", "--commit")
    assert result.returncode == 1
    assert "unreachable" in result.stdout and "preflight failed on 1 device(s); nothing was committed" in result.stdout
    assert target.commands("config") == []  # LEAF was reachable, and still nothing was committed on it


def test_bad_credentials_are_a_per_device_failure(two_unit_lab, target, inventory):
    build_dir, _ = two_unit_lab
    result = push(build_dir, inventory, "not-the-password", "--devices", LEAF)
    assert result.returncode == 1 and "authentication failed" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_wrong_frr_container_is_named_as_the_cause(two_unit_lab, target, tmp_path: Path):
    """Without frr_container: '' the driver looks for SONiC's `bgp` container, which this host lacks."""
    build_dir, _ = two_unit_lab
    inventory = tmp_path / "docker.yaml"
    shutil.copyfile(target.known_hosts, tmp_path / "known_hosts")
    inventory.write_text(f"devices:\n  {LEAF}: {{host: 127.0.0.1, optional_args: {{port: {target.port}}}}}\n")
    result = push(build_dir, inventory, target.password, "--devices", LEAF)
    assert result.returncode == 1 and "check optional_args frr_container ('bgp')" in result.stdout


def test_a_changed_host_key_is_refused_before_the_password_is_sent(complete, target, inventory, tmp_path: Path):
    """The real OpenSSH server: a known_hosts file that lists another key for it. sshd's log
    (LogLevel VERBOSE) shows every password attempt; this connection makes none."""
    other_key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True, capture_output=True)
    key_type, key = other_key.with_suffix(".pub").read_text().split()[:2]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{target.port} {key_type} {key}\n")
    log_before = target.log.stat().st_size
    target.forget_commands()

    result = push(complete, inventory, target.password, "--devices", LEAF, "--commit", "--known-hosts", str(known_hosts))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"[127.0.0.1]:{target.port}: host key CHANGED" in result.stdout and "SHA256:" in result.stdout
    assert "nothing was committed" in result.stdout and target.commands() == []
    with target.log.open() as log:
        log.seek(log_before)
        new = log.read()
    assert "password" not in new.lower(), new


def test_the_password_is_in_no_file(two_unit_lab, target, inventory):
    build_dir, _ = two_unit_lab
    places = [target.directory, build_dir, inventory.parent, *Path("/tmp").glob("fabricgen-candidate.*")]
    found = subprocess.run(["grep", "-rlF", "--", target.password, *map(str, places)], capture_output=True, text=True, check=False)
    assert found.returncode == 1, f"the password is in: {found.stdout}{found.stderr}"
