"""`fabricgen push` end to end, as a user runs it, against a real SSH server and real FRR.

The switch is a lab leaf (tests/lab/two-units.yaml: SONiC leaves) behind the SONiC test target of
tests/sonic_target.py: OpenSSH on 127.0.0.1 in a private mount namespace, whose vtysh and
frr-reload.py drive that leaf's FRR. sonic-utilities cannot run outside SONiC, so `config` and
`show runningconfiguration all` are stand-ins that record their arguments and keep config_db as
JSON files on the target. The tests run in order, each from the previous one's end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sonic_target import free_port, start_sonic_target
from tests.test_lab import needs_lab
from tests.test_sonic_driver import needs_target, neighbors_of, running_frr, vtysh

pytestmark = [needs_lab, needs_target]

LEAF = "be-su01-leaf1"
OTHER_LEAF = "be-su01-leaf2"


@pytest.fixture(scope="module")
def target(two_unit_lab, tmp_path_factory: pytest.TempPathFactory):
    build_dir, plan = two_unit_lab
    device = build_dir / "configs" / LEAF
    started = start_sonic_target(plan.namespace(LEAF), tmp_path_factory.mktemp("push-target"), json.loads((device / "config_db.json").read_text()), (device / "frr.conf").read_text())
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


def push(build_dir: Path, inventory: Path, password: str, *args: str) -> subprocess.CompletedProcess:
    """`fabricgen push` as a user runs it, host keys checked against the known_hosts file beside
    the inventory unless `args` name another."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    env |= {"FABRICGEN_USERNAME": "root", "FABRICGEN_PASSWORD": password}
    host_keys = [] if "--known-hosts" in args else ["--known-hosts", str(inventory.with_name("known_hosts"))]
    return subprocess.run(
        [sys.executable, "-m", "fabricgen", "push", str(build_dir), "--inventory", str(inventory), "--connect-timeout", "10", *host_keys, *args],
        capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL, check=False,
    )


def test_push_restores_the_builds_routing_and_verifies_it(two_unit_lab, target, inventory):
    build_dir, _ = two_unit_lab
    expected = neighbors_of((build_dir / "configs" / LEAF / "frr.conf").read_text())
    vtysh(target, "configure terminal", "no router bgp")  # the leaf has drifted: no BGP at all

    dry = push(build_dir, inventory, target.password, "--devices", LEAF)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "would change" in dry.stdout and "router bgp 64513" in dry.stdout
    assert target.commands() == []  # a dry run changes nothing

    committed = push(build_dir, inventory, target.password, "--devices", LEAF, "--commit", "--verify-timeout", "60")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert f"{len(expected)}/{len(expected)} BGP neighbors Established" in committed.stdout
    assert [c[0] for c in target.commands()] == ["checkpoint", "replace", "save"]
    assert "router bgp 64513" in running_frr(target)

    again = push(build_dir, inventory, target.password, "--devices", LEAF)
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout  # idempotent: nothing left to push


def test_a_broken_change_is_rolled_back_to_the_running_config(two_unit_lab, target, inventory, tmp_path: Path):
    build_dir, _ = two_unit_lab
    broken = tmp_path / "broken"
    shutil.copytree(build_dir, broken)
    frr_conf = broken / "configs" / LEAF / "frr.conf"
    frr_conf.write_text(frr_conf.read_text().replace("remote-as 64512", "remote-as 65000"))
    manifest = json.loads((broken / "manifest.json").read_text())  # a build whose only change is the broken one
    manifest["files"][f"configs/{LEAF}/frr.conf"] = hashlib.sha256(frr_conf.read_bytes()).hexdigest()
    (broken / "manifest.json").write_text(json.dumps(manifest, indent=2))
    before = running_frr(target)
    target.forget_commands()

    result = push(broken, inventory, target.password, "--devices", LEAF, "--commit", "--verify-timeout", "8")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rolled back" in result.stdout and "0/2 BGP neighbors Established" in result.stdout
    verbs = [c[0] for c in target.commands()]
    assert verbs == ["checkpoint", "replace", "save", "rollback", "save"], verbs
    assert running_frr(target) == before  # the previous running FRR config, exactly


def test_an_unreachable_device_blocks_the_whole_commit(two_unit_lab, target, inventory):
    build_dir, _ = two_unit_lab
    target.forget_commands()
    result = push(build_dir, inventory, target.password, "--devices", f"{LEAF},{OTHER_LEAF}", "--commit")
    assert result.returncode == 1
    assert "unreachable" in result.stdout and "preflight failed on 1 device(s); nothing was committed" in result.stdout
    assert target.commands() == []  # LEAF was reachable, and still nothing was committed on it


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


def test_a_changed_host_key_is_refused_before_the_password_is_sent(two_unit_lab, target, inventory, tmp_path: Path):
    """The real OpenSSH server: a known_hosts file that lists another key for it. sshd's log
    (LogLevel VERBOSE) shows every password attempt; this connection makes none."""
    build_dir, _ = two_unit_lab
    other_key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True, capture_output=True)
    key_type, key = other_key.with_suffix(".pub").read_text().split()[:2]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{target.port} {key_type} {key}\n")
    log_before = target.log.stat().st_size
    target.forget_commands()

    result = push(build_dir, inventory, target.password, "--devices", LEAF, "--commit", "--known-hosts", str(known_hosts))
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
