"""A push that cannot lock anyone out, without a lab: what is refused before any device is
contacted (an incomplete config for a replace, a secret with no value), how secrets reach a device
(in memory, filled, masked in everything said back), commit-confirm in the rollout, and NX-OS's
commit-confirm (configure replace commit-timeout).

NX-OS cannot run here: its driver is tested against a recording stand-in for NX-API and the SCP
upload. The SONiC driver's device-side timer, against a real SSH server and FRR, is in
test_push_sonic.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from napalm.base.exceptions import CommitError

from fabricgen.build.secrets import Secrets
from fabricgen.compiler.pipeline import build
from fabricgen.nos.nxos import push as nxos_module
from fabricgen.nos.nxos.push import NxosDriver
from fabricgen.push.rollout import Outcome, RolloutOptions, push
from tests import cli_runner
from tests.push_build import completed_copy, rehash
from tests.test_push import CREDENTIALS, FAST, TINY_OOB, all_peers, mocked

MARKER = "mk-8d1f-SECRET-VALUE"  # distinctive: a leak is found by a plain search
BGP_KEY_LINE = "  neighbor 10.8.0.1 password 3 <<secret=bgp-backend>>\n"  # a line that uses a secret


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory) -> Path:
    """An intent without a management section: NX-OS configs with no login, SSH or boot image."""
    root = tmp_path_factory.mktemp("incomplete")
    (root / "tiny-oob.yaml").write_text(TINY_OOB.lstrip())
    build(root / "tiny-oob.yaml", root / "build")
    return root / "build"


class Listener:
    """A TCP port that counts the connections made to it: 'nothing contacted' made visible."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self):
        self.stopped.set()
        self.thread.join()
        self.socket.close()


@pytest.fixture
def listener():
    started = Listener()
    yield started
    started.close()


def fabricgen(*args: str, env: dict | None = None) -> cli_runner.Completed:
    """In this process (tests/cli_runner.py), with exactly these FABRICGEN_* variables."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    environment |= {"FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": CREDENTIALS.password} | (env or {})
    return cli_runner.fabricgen(*args, env=environment)


def inventory_at(tmp_path: Path, port: int, devices: list[str]) -> Path:
    """Every device at 127.0.0.1:port over NX-API (https, certificate unchecked: nothing should get that far)."""
    path = tmp_path / "inventory.yaml"
    path.write_text(f"defaults: {{optional_args: {{port: {port}}}}}\ndevices:\n" + "".join(f"  {name}: {{host: 127.0.0.1}}\n" for name in devices))
    return path


# --- (a) an incomplete config is never replaced --------------------------------------------------


def test_commit_of_an_incomplete_config_is_refused_before_any_device_is_contacted(incomplete, tmp_path, listener):
    devices = ["be-spine01", "be-su01-leaf1"]
    inventory = inventory_at(tmp_path, listener.port, devices)
    result = fabricgen("push", str(incomplete), "--devices", ",".join(devices), "--inventory", str(inventory), "--commit", "--insecure")
    assert result.returncode == 2, result.stdout + result.stderr
    for device in devices:  # one line per switch, naming what it lacks
        line = next(line for line in result.stderr.splitlines() if line.strip().startswith(f"{device}:"))
        assert "not complete enough to replace" in line
        for part in ("a login", "`feature ssh`", "the boot image (`boot nxos"):
            assert part in line, line
    assert "--merge" in result.stderr and "Traceback" not in result.stderr
    assert listener.connections == 0


def test_a_complete_copy_passes_the_check_and_a_dry_run_needs_no_completeness(incomplete, tmp_path, listener):
    """The check is about --commit (a replace): a dry run of the same incomplete build goes on to
    contact the devices (here: a port that is not NX-API, so each fails to connect)."""
    inventory = inventory_at(tmp_path, listener.port, ["be-spine01"])
    dry = fabricgen("push", str(incomplete), "--devices", "be-spine01", "--inventory", str(inventory), "--insecure", "--connect-timeout", "3")
    assert dry.returncode == 1 and "cannot connect" in dry.stdout, dry.stdout + dry.stderr
    assert listener.connections >= 1
    complete = completed_copy(incomplete, tmp_path / "complete")
    from fabricgen.push.candidate import missing_parts
    from fabricgen.push.inventory import read_targets

    assert [missing_parts(t) for t in read_targets(complete, "be-spine01")] == [[]]


def test_merge_is_refused_on_sonic_before_any_device_is_contacted(tmp_path, listener):
    intent = tmp_path / "sonic.yaml"
    intent.write_text(
        "name: sonic-oob\ngpus: 16\nbackend:\n  leaf: {nos: sonic}\noob:\n  switch: {model: N9K-C93108TC-FX3, nos: nxos, count: 1}\n  console: {model: C8300-1N1S-4T2X, module: NIM-24A}\n"
    )
    build(intent, tmp_path / "build")
    (tmp_path / "known_hosts").write_text("")
    result = fabricgen("push", str(tmp_path / "build"), "--devices", "leaf", "--merge", "--commit", "--known-hosts", str(tmp_path / "known_hosts"))
    assert result.returncode == 2 and "--merge is not supported on SONiC" in result.stderr, result.stderr


# --- (b) a secret with no value ------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(incomplete, tmp_path_factory) -> Path:
    """A complete build whose spine config uses the secret bgp-backend."""
    copy = completed_copy(incomplete, tmp_path_factory.mktemp("keyed") / "build")
    config = copy / "configs" / "be-spine01.cfg"
    config.write_text(config.read_text().rstrip("\n") + "\nrouter bgp 64512\n" + BGP_KEY_LINE)
    rehash(copy, "configs/be-spine01.cfg")
    return copy


def test_a_missing_secret_is_refused_before_any_device_is_contacted(keyed, tmp_path, listener):
    inventory = inventory_at(tmp_path, listener.port, ["be-spine01"])
    result = fabricgen("push", str(keyed), "--devices", "be-spine01", "--inventory", str(inventory), "--insecure")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "secret 'bgp-backend' has no value; the configs of be-spine01 use it" in result.stderr
    assert "FABRICGEN_SECRET_BGP_BACKEND" in result.stderr
    assert listener.connections == 0


def test_a_secrets_file_others_can_read_is_refused_and_never_quoted(keyed, tmp_path, listener):
    secrets_file = tmp_path / "secrets.yaml"
    secrets_file.write_text(f"bgp-backend: {MARKER}\n")
    secrets_file.chmod(0o644)
    inventory = inventory_at(tmp_path, listener.port, ["be-spine01"])
    result = fabricgen("push", str(keyed), "--devices", "be-spine01", "--inventory", str(inventory), "--insecure", "--secrets", str(secrets_file))
    assert result.returncode == 2 and "chmod 600" in result.stderr, result.stderr
    assert MARKER not in result.stdout + result.stderr and listener.connections == 0


# --- secrets in the rollout: filled for the device, masked in what comes back ----------------------


def test_secrets_reach_the_device_filled_and_come_back_masked(keyed, plan_rows_of_keyed, tmp_path, monkeypatch):
    from fabricgen.push.inventory import read_targets

    name = "be-spine01"
    echo = f"+{BGP_KEY_LINE.replace('<<secret=bgp-backend>>', MARKER)}"  # a device's diff shows the key it now has
    targets, journal = mocked(keyed, tmp_path, monkeypatch, {name: {"diff": echo, "bgp": [all_peers(plan_rows_of_keyed, name, True)]}})
    staged = read_targets(keyed, name)[0].config
    targets = [replace(targets[0], config=staged)]  # the keyed build's own (complete) config
    secrets = Secrets({"bgp-backend": MARKER})
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, **FAST), secrets=secrets)
    assert result.ok, result.results[0].message
    assert MARKER in journal.candidates[name] and "<<secret" not in journal.candidates[name]  # filled for the device
    shown = result.results[0].diff + result.results[0].message
    assert MARKER not in shown and "password 3 <<secret=bgp-backend>>" in shown  # masked for people
    assert MARKER not in staged.read_text()


@pytest.fixture(scope="module")
def plan_rows_of_keyed(keyed) -> list[dict]:
    import csv

    return list(csv.DictReader((keyed / "ip-plan.csv").open()))


# --- commit-confirm in the rollout ---------------------------------------------------------------


def test_every_commit_is_confirmed_only_after_verification(incomplete, tmp_path, monkeypatch):
    import csv

    rows = list(csv.DictReader((incomplete / "ip-plan.csv").open()))
    devices = {f"be-su01-leaf{i}": {"diff": "+ changed\n", "bgp": [all_peers(rows, f"be-su01-leaf{i}", True)]} for i in (1, 2)}
    targets, journal = mocked(incomplete, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, confirm_timeout=240, **FAST))
    assert result.ok and journal.revert_in == [240, 240]
    for name in devices:
        calls = journal.of(name)
        # commit with a timer, BGP checked, a second session opened and closed, then the confirm
        assert calls[calls.index("commit_config") :] == ["commit_config", "open", "close", "confirm_commit", "close"], calls
        assert "confirmed" in next(r.message for r in result.results if r.target.name == name)


def test_a_lost_management_session_is_not_confirmed_but_rolled_back(incomplete, tmp_path, monkeypatch):
    """BGP is up, but a new login fails (say, the commit changed the vty ACL): no confirm."""
    import csv

    rows = list(csv.DictReader((incomplete / "ip-plan.csv").open()))
    name = "be-su01-leaf1"
    targets, journal = mocked(incomplete, tmp_path, monkeypatch, {name: {"diff": "+ ip access-list vty\n", "bgp": [all_peers(rows, name, True)]}})
    (tmp_path / "mock" / name / "get_facts.1").write_text(json.dumps({"exception": "napalm.base.exceptions.ConnectionException", "args": ["login refused"]}))
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, **FAST))
    outcome = result.results[0]
    assert outcome.outcome is Outcome.rolled_back, outcome.message
    assert "a new management session FAILED (ConnectionException: login refused)" in outcome.message
    assert "confirm_commit" not in journal.of(name) and "rollback" in journal.of(name)


def test_the_default_confirm_timeout_outlasts_verification():
    options = RolloutOptions(verify_timeout=120, connect_timeout=30)
    assert options.revert_in == 120 + 2 * 30 + 60


# --- (e) NX-OS commit-confirm, against a recording stand-in ---------------------------------------


class RecordingNxos:
    """What NxosDriver sends: NX-API config lists, checkpoints, copy run start, the SCP upload."""

    def __init__(self):
        self.commands: list[str] = []
        self.uploaded: dict[str, bytes] = {}

    def driver(self, monkeypatch) -> NxosDriver:
        recorder = self
        device = NxosDriver("192.0.2.1", "netops", CREDENTIALS.password, optional_args={})

        class Netmiko:
            remote_conn = type("Conn", (), {"get_transport": lambda self: None})()

            def _send_command_str(self, command, read_timeout=0):
                recorder.commands.append(command)
                data = recorder.uploaded.get("bootflash:/candidate_config.txt", b"")
                return hashlib.md5(data, usedforsecurity=False).hexdigest()

        class SCP:
            def __init__(self, transport, socket_timeout=10.0):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def putfo(self, stream, path):
                recorder.uploaded[path] = stream.read()

        import scp

        monkeypatch.setattr(scp, "SCPClient", SCP)
        device._netmiko_device = Netmiko()
        device._send_command_list = lambda commands: recorder.commands.extend(commands) or [{}, {"msg": ""}, {}]
        device._copy_run_start = lambda: recorder.commands.append("copy run startup-config")
        return device


def test_nxos_candidate_goes_from_memory_and_commit_confirm_uses_configure_replace(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where NAPALM's own config= path would write
    recorder = RecordingNxos()
    device = recorder.driver(monkeypatch)
    config = f"hostname be-spine01\nrouter bgp 64512\n  neighbor 10.8.0.1 password 3 {MARKER}\n"
    device.load_replace_candidate(config=config)
    assert recorder.uploaded == {"bootflash:/candidate_config.txt": config.encode()}
    assert "show file bootflash:candidate_config.txt md5sum" in recorder.commands
    assert list(tmp_path.iterdir()) == []  # nothing written locally

    recorder.commands.clear()
    device.commit_config(revert_in=300)
    assert recorder.commands == [
        "terminal dont-ask",
        "checkpoint file rollback_config.txt",
        "no terminal dont-ask",  # NAPALM's checkpoint, for rollback()
        "terminal dont-ask",
        "configure replace bootflash:candidate_config.txt commit-timeout 300",
        "no terminal dont-ask",
    ]
    assert device.has_pending_commit()
    with pytest.raises(CommitError, match="already waiting"):
        device.loaded = True
        device.commit_config(revert_in=300)
    recorder.commands.clear()
    device.confirm_commit()
    assert recorder.commands == [
        "configure replace commit",
        "copy run startup-config",
        "terminal dont-ask",
        "delete candidate_config.txt",
        "no terminal dont-ask",  # its keys off bootflash
    ]
    assert not device.has_pending_commit()
    assert all(MARKER not in command for command in recorder.commands)  # the value went by SCP only


def test_nxos_commit_timeout_bounds_and_merges(monkeypatch):
    recorder = RecordingNxos()
    device = recorder.driver(monkeypatch)
    device.load_replace_candidate(config="hostname x\n")
    for seconds in (29, 3601):
        with pytest.raises(CommitError, match="30-3600"):
            device.commit_config(revert_in=seconds)
    assert nxos_module.COMMIT_TIMEOUT_RANGE == (30, 3600)
    device.load_merge_candidate(config="hostname x\n")
    with pytest.raises(NotImplementedError, match="replaces only"):  # the rollout then commits without a timer, and says so
        device.commit_config(revert_in=300)
    assert not any("configure replace" in command for command in recorder.commands)


def test_a_sonic_candidate_keeps_a_quote_or_backslash_of_a_value_inside_its_string(tmp_path):
    from fabricgen.push.candidate import candidate
    from fabricgen.push.inventory import Target

    device = tmp_path / "leaf"
    device.mkdir()
    (device / "config_db.json").write_text(json.dumps({"TACPLUS": {"global": {"passkey": "<<secret=tacacs-key>>", "timeout": "5"}}}))
    (device / "frr.conf").write_text("router bgp 65001\n neighbor SPINES password <<secret=bgp-backend>>\n")
    target = Target("leaf", "leaf", "backend", "sonic", "127.0.0.1", "sonic", device, ())
    value = 'a"b\\c'
    loaded = json.loads(candidate(target, Secrets({"tacacs-key": value, "bgp-backend": "k1"})))
    assert loaded["config_db"]["TACPLUS"]["global"] == {"passkey": value, "timeout": "5"}
    assert " neighbor SPINES password k1\n" in loaded["frr"]
