"""`fabricgen push` end to end, as a user runs it, against a real SSH server and real FRR.

The push runs in the test process (tests/cli_runner.py).
The switch is a lab leaf (tests/lab/two-units.yaml: SONiC leaves) behind the lab's management
endpoint (fabricgen.lab.management, started for one leaf by tests/sonic_target.py): OpenSSH on
127.0.0.1 in a private mount namespace, whose vtysh and frr-reload.py drive that leaf's FRR.
sonic-utilities cannot run outside SONiC, so `config` and `show runningconfiguration all` are
stand-ins that record their arguments and keep config_db as JSON files on the endpoint. The tests
run in order, each from the previous one's end. What a push does when it commits (a keyed commit
with its secrets filled in memory and never on a command line, a broken change rolled back, a
killed push reverted by the device's own timer) is tested on `lab up --management`'s endpoints
(tests/test_lab_management.py); here, what refuses a commit before anything changes.

Every push here is of a build made complete for a replace (tests/push_build.py adds what the
renderer does not write yet) whose leaf frr.conf uses the BGP key `bgp-backend`; the values of
every secret the build names are marker strings given to `push` in its environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.build.secrets import env_name
from tests import cli_runner
from tests.push_build import completed_copy
from tests.sonic_target import free_port, start_sonic_target
from tests.test_lab import needs_lab
from tests.test_sonic_driver import needs_target

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


@pytest.fixture(scope="module")
def complete(two_unit_lab, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab build, complete for a replace, its leaf sessions keyed with bgp-backend."""
    build_dir, _ = two_unit_lab
    return completed_copy(build_dir, tmp_path_factory.mktemp("push-complete") / "build", edit_frr=with_keys)


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


def push(build_dir: Path, inventory: Path, password: str, *args: str) -> cli_runner.Completed:
    """The same push in this process (tests/cli_runner.py): for the tests about what it decides,
    not about what its process shows."""
    command, env = push_command(build_dir, inventory, password, *args)
    return cli_runner.fabricgen(*command[3:], env=env)


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
    assert result.returncode == 1 and "check optional_args frr_container ('bgp')" in result.stdout, result.stdout + result.stderr


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
