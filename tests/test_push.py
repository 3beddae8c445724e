"""`fabricgen push`: inventory, credentials and the staged rollout.

The switches are NAPALM's own MockDriver (napalm.base.mock): an NX-OS switch cannot run here, so
each device's answers come from fixture files (load_replace_candidate.1, compare_config.1,
get_bgp_neighbors.N, ...) that each test writes for the behaviour it needs. The orchestration tests
wrap MockDriver in a subclass that only records which methods ran, on which device, in what order;
the CLI tests use the plain "mock" driver through an inventory file, as a user could.
The SONiC driver against a real SSH server and real FRR is tested in test_push_sonic.py.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import threading
import time
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from napalm.base.mock import MockDriver

from fabricgen.basics.errors import PushError
from fabricgen.compiler.pipeline import build
from fabricgen.push import rollout
from fabricgen.push.credentials import Credentials, read_credentials
from fabricgen.push.inventory import read_targets
from fabricgen.push.rollout import Outcome, RolloutOptions, push
from tests import cli_runner
from tests.push_build import complete_nxos, completed_copy

PASSWORD = "pw-7f3a9c-never-on-disk"  # distinctive, so a leak is found by a plain search
CREDENTIALS = Credentials("netops", PASSWORD)
FAST = {"verify_timeout": 0.3, "poll_interval": 0.05, "connect_timeout": 5}

TINY_OOB = """
name: tiny-oob
gpus: 16
oob:
  switch: {model: N9K-C93108TC-FX3, nos: nxos, count: 1}
  console: {model: C8300-1N1S-4T2X, module: NIM-24A}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """2 spines, 8 leaves and an OOB switch on NX-OS, with a management plan."""
    root = tmp_path_factory.mktemp("push-build")
    intent = root / "tiny-oob.yaml"
    intent.write_text(TINY_OOB.lstrip())
    build(intent, root / "build")
    return root / "build"


@pytest.fixture(scope="module")
def complete_built(built, tmp_path_factory) -> Path:
    """`built` with every switch config complete for a replace (tests/push_build.py)."""
    return completed_copy(built, tmp_path_factory.mktemp("complete") / "build")


@pytest.fixture(scope="module")
def plan_rows(built) -> list[dict]:
    return list(csv.DictReader((built / "ip-plan.csv").open()))


def peers_of(rows: list[dict], device: str) -> set[str]:
    """A switch's BGP neighbors as the IP plan wires them: the far end of each routed cable."""
    return {row["peer_address"] for row in rows if row["device"] == device and row["kind"] == "fabric"}


def write_device(root: Path, name: str, *, diff: str = "", bgp: list[dict] | None = None, commit_error: str = "", echo_password: bool = False) -> Path:
    """Fixture files for one mock device: what compare_config returns, whether commit_config
    raises, and one get_bgp_neighbors answer per call (the last one repeated a few times)."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    for method in ("load_replace_candidate", "load_merge_candidate", "discard_config", "commit_config", "confirm_commit"):
        (directory / f"{method}.1").write_text("{}")
    # the new management session after a commit: a fresh MockDriver instance counts from 1 again
    (directory / "get_facts.1").write_text(
        json.dumps({"hostname": name, "fqdn": name, "vendor": "mock", "model": "", "os_version": "", "serial_number": "", "uptime": 1.0, "interface_list": []})
    )
    if commit_error:
        (directory / "commit_config.1").write_text(json.dumps({"exception": "napalm.base.exceptions.CommitError", "args": [commit_error]}))
    if echo_password:  # a device that echoes what it was sent, the password included
        (directory / "load_replace_candidate.1").write_text(
            json.dumps({"exception": "napalm.base.exceptions.ReplaceConfigException", "args": [f"rejected: login {PASSWORD} invalid"]})
        )
    (directory / "compare_config.1").write_text(json.dumps({"diff": diff}))
    answers = bgp or []
    answers = answers + [answers[-1]] * 20 if answers else []
    for number, answer in enumerate(answers, start=1):
        (directory / f"get_bgp_neighbors.{number}").write_text(json.dumps(answer))
    return directory


def neighbors(up: dict[str, bool]) -> dict:
    return {
        "global": {
            "router_id": "10.0.0.1",
            "peers": {
                address: {
                    "is_up": state,
                    "is_enabled": True,
                    "remote_as": 64512,
                    "local_as": 64513,
                    "remote_id": address,
                    "description": "",
                    "uptime": 1,
                    "address_family": {},
                }
                for address, state in up.items()
            },
        }
    }


class Journal:
    """Every driver call of a run, in order, and the most devices ever connected at once (a device
    counts once while it has sessions open: its commit's and the management probe's)."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.sessions: dict[str, int] = {}
        self.most_open = 0
        self.revert_in: list[int | None] = []
        self.candidates: dict[str, str] = {}  # the config= text each device was given
        self.lock = threading.Lock()

    def driver(self, paths: dict[str, Path]):
        journal = self

        class RecordingMock(MockDriver):
            def __init__(self, hostname, username, password, timeout=60, optional_args=None):
                name = next(n for n, p in paths.items() if str(p) == optional_args["path"])
                super().__init__(hostname, username, password, timeout, optional_args)
                self.device_name = name

            def _note(self, method):
                with journal.lock:
                    journal.calls.append((self.device_name, method))

            def open(self):
                self._note("open")
                super().open()
                with journal.lock:
                    journal.sessions[self.device_name] = journal.sessions.get(self.device_name, 0) + 1
                    journal.most_open = max(journal.most_open, sum(1 for n in journal.sessions.values() if n))
                # a real login takes a while; without it a loaded machine may finish each mock
                # device before the next starts, and the concurrency would never be seen
                time.sleep(0.05)

            def close(self):
                self._note("close")
                if self.opened:
                    with journal.lock:
                        journal.sessions[self.device_name] -= 1
                super().close()

            def commit_config(self, message="", revert_in=None):
                self._note("commit_config")
                journal.revert_in.append(revert_in)
                return super().commit_config(message, revert_in)

            def load_replace_candidate(self, filename=None, config=None):
                journal.candidates[self.device_name] = config
                return super().load_replace_candidate(filename, config)

            def confirm_commit(self):
                self._note("confirm_commit")
                return super().confirm_commit()

            def discard_config(self):
                self._note("discard_config")
                return super().discard_config()

            def rollback(self):
                self._note("rollback")
                return super().rollback()

        return RecordingMock

    def of(self, device: str) -> list[str]:
        return [method for name, method in self.calls if name == device]

    def committed(self) -> list[str]:
        return [name for name, method in self.calls if method == "commit_config"]


def mocked(built: Path, tmp_path: Path, monkeypatch, devices: dict[str, dict], selection: str | None = None):
    """Targets for `devices` (name -> write_device options), every one on a recording MockDriver."""
    paths = {name: write_device(tmp_path / "mock", name, **options) for name, options in devices.items()}
    targets = [t for t in read_targets(built, selection or ",".join(devices)) if t.name in paths]
    # the configs a replace may commit (the parts push refuses to replace without, added)
    (tmp_path / "complete").mkdir(exist_ok=True)
    for t in targets:
        (tmp_path / "complete" / t.config.name).write_text(complete_nxos(t.config.read_text()))
    targets = [replace(t, driver="mock", optional_args={"path": str(paths[t.name])}, config=tmp_path / "complete" / t.config.name) for t in targets]
    journal = Journal()
    recording = journal.driver(paths)
    monkeypatch.setattr(rollout, "get_network_driver", lambda name: recording)
    return targets, journal


# -- inventory -------------------------------------------------------------------------------------


def test_targets_come_from_the_management_plan_and_declared_neighbors(built, plan_rows):
    targets = read_targets(built)
    assert [t.name for t in targets] == ["be-spine01", "be-spine02"] + [f"be-su01-leaf{i}" for i in range(1, 9)] + ["oob01"]
    management = {row["device"]: row["address"].split("/")[0] for row in plan_rows if row["kind"] == "management"}
    for target in targets:
        assert target.host == management[target.name]
        assert target.driver == "nxos" and target.nos == "nxos"
        assert target.config == built / "configs" / f"{target.name}.cfg"
        # what verification waits for = the routed cables' far ends in the IP plan
        assert set(target.expected_peers) == peers_of(plan_rows, target.name)
    leaf = next(t for t in targets if t.name == "be-su01-leaf1")
    assert len(leaf.expected_peers) == 2  # one uplink to each of the two spines


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("leaf", [f"be-su01-leaf{i}" for i in range(1, 9)]),
        ("be-spine0*", ["be-spine01", "be-spine02"]),
        ("oob", ["oob01"]),
        ("be-su01-leaf3, spine", ["be-spine01", "be-spine02", "be-su01-leaf3"]),
    ],
)
def test_devices_select_by_name_pattern_role_or_network(built, selection, expected):
    assert [t.name for t in read_targets(built, selection)] == expected


def test_a_device_not_in_the_build_is_refused(built):
    with pytest.raises(PushError) as error:
        read_targets(built, "be-spine01,be-su09-leaf1")
    assert "'be-su09-leaf1' matches no switch in the build" in error.value.report()


def test_inventory_overrides_and_refuses_secrets_and_strangers(built, tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        "defaults: {optional_args: {port: 8443, transport: https}}\ndevices:\n  be-spine01: {host: 192.0.2.11, driver: nxos, optional_args: {port: 443}}\n"
    )
    spine, other = read_targets(built, "spine", inventory)
    assert (spine.host, spine.driver, spine.optional_args) == ("192.0.2.11", "nxos", {"port": 443, "transport": "https"})
    assert (other.driver, other.optional_args["port"]) == ("nxos", 8443) and other.host.startswith("172.16.")

    inventory.write_text("devices:\n  be-spine01: {optional_args: {password: hunter2}}\n  be-spine99: {host: 192.0.2.99}\n")
    with pytest.raises(PushError) as error:
        read_targets(built, None, inventory)
    report = error.value.report()
    assert "devices.be-spine01.optional_args.password: 'password' looks like a credential" in report
    assert "devices.be-spine99: 'be-spine99' is not a switch of this build" in report


def test_a_build_without_management_addresses_needs_an_inventory(tmp_path):
    intent = tmp_path / "no-oob.yaml"
    intent.write_text("name: no-oob\ngpus: 16\n")
    build(intent, tmp_path / "build")
    with pytest.raises(PushError) as error:
        read_targets(tmp_path / "build", "spine")
    report = error.value.report()
    assert report.count("no management address") == 2 and "be-spine01" in report and "--inventory" in report
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("devices:\n  be-spine01: {host: 127.0.0.1}\n  be-spine02: {host: 127.0.0.2}\n")
    assert [t.host for t in read_targets(tmp_path / "build", "spine", inventory)] == ["127.0.0.1", "127.0.0.2"]


def test_an_edited_build_is_refused_before_any_device_is_contacted(built, tmp_path):
    copy = tmp_path / "edited"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    with (copy / "configs" / "be-spine01.cfg").open("a") as config:
        config.write("feature telnet\n")
    with pytest.raises(PushError) as error:
        read_targets(copy, "spine")
    assert "configs/be-spine01.cfg: differs from what the build wrote" in error.value.report()


def test_credentials_come_from_the_environment_or_fail_clearly():
    assert read_credentials({"FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": PASSWORD}, interactive=False) == CREDENTIALS
    assert PASSWORD not in repr(CREDENTIALS)
    with pytest.raises(PushError) as error:
        read_credentials({"FABRICGEN_USERNAME": "netops"}, interactive=False)
    assert "FABRICGEN_PASSWORD not set and no terminal to prompt on" in error.value.report()


# -- rollout ---------------------------------------------------------------------------------------


def all_peers(built_rows, device: str, state: bool) -> dict:
    return neighbors(dict.fromkeys(peers_of(built_rows, device), state))


def test_dry_run_shows_every_diff_and_commits_nothing(built, plan_rows, tmp_path, monkeypatch):
    devices = {f"be-su01-leaf{i}": {"diff": f"+interface Ethernet1/{i}\n+  mtu 9216\n" if i % 2 else ""} for i in range(1, 9)}
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(concurrency=3, **FAST))
    assert result.ok and not result.committed
    outcomes = {r.target.name: r.outcome for r in result.results}
    assert [n for n, o in outcomes.items() if o is Outcome.would_change] == ["be-su01-leaf1", "be-su01-leaf3", "be-su01-leaf5", "be-su01-leaf7"]
    assert [n for n, o in outcomes.items() if o is Outcome.unchanged] == ["be-su01-leaf2", "be-su01-leaf4", "be-su01-leaf6", "be-su01-leaf8"]
    assert "+  mtu 9216" in result.results[0].diff
    assert journal.committed() == []
    assert all(journal.of(name)[-2:] == ["discard_config", "close"] for name in devices)  # every candidate dropped
    assert 1 < journal.most_open <= 3


def test_commit_goes_canary_first_then_batches_within_the_concurrency_bound(built, plan_rows, tmp_path, monkeypatch):
    devices = {f"be-su01-leaf{i}": {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, f"be-su01-leaf{i}", True)]} for i in range(1, 9)}
    devices["be-spine01"] = {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, "be-spine01", True)]}
    devices["be-spine02"] = {"diff": ""}  # already in sync: never committed
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, batch=3, concurrency=2, **FAST))
    assert result.ok, [(r.target.name, r.outcome, r.message) for r in result.results]
    stages = {r.target.name: r.stage for r in result.results}
    assert stages["be-su01-leaf1"] == "canary"  # a leaf, although a spine comes first in the build
    assert journal.committed()[0] == "be-su01-leaf1"
    # 8 changed after the canary, in batches of 3: 3 + 3 + 2, each batch after the previous one
    batches = [sorted(n for n, s in stages.items() if s == f"batch {k}") for k in (1, 2, 3)]
    assert [len(b) for b in batches] == [3, 3, 2] and stages.get("be-spine02") == "preflight"
    order = journal.committed()
    for earlier, later in pairwise(batches):
        assert max(order.index(n) for n in earlier) < min(order.index(n) for n in later)
    assert {r.outcome for r in result.results} == {Outcome.committed, Outcome.unchanged}
    assert journal.most_open <= 2
    assert "rollback" not in [method for _, method in journal.calls]


def test_a_canary_failing_verification_is_rolled_back_and_nothing_else_is_touched(built, plan_rows, tmp_path, monkeypatch):
    canary = "be-su01-leaf1"
    down = all_peers(plan_rows, canary, False)
    devices = {canary: {"diff": "+ router bgp 65000\n", "bgp": [all_peers(plan_rows, canary, True), down]}}
    devices |= {f"be-su01-leaf{i}": {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, f"be-su01-leaf{i}", True)]} for i in range(2, 5)}
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, batch=2, **FAST))
    assert not result.ok
    by_name = {r.target.name: r for r in result.results}
    assert by_name[canary].outcome is Outcome.rolled_back
    assert "0/2 BGP neighbors Established" in by_name[canary].message
    assert journal.of(canary)[-3:] == ["commit_config", "rollback", "close"]
    assert journal.committed() == [canary]
    assert {by_name[f"be-su01-leaf{i}"].outcome for i in range(2, 5)} == {Outcome.not_attempted}
    assert "canary failed" in result.stopped


def test_a_failing_batch_stops_the_rollout_before_the_next_one(built, plan_rows, tmp_path, monkeypatch):
    devices = {f"be-su01-leaf{i}": {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, f"be-su01-leaf{i}", True)]} for i in range(1, 8)}
    devices["be-su01-leaf4"]["commit_error"] = "Invalid command at line 12"
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, batch=2, concurrency=1, **FAST))
    stages = {r.target.name: (r.stage, r.outcome) for r in result.results}
    assert stages["be-su01-leaf4"] == ("batch 2", Outcome.failed)
    assert stages["be-su01-leaf5"] == ("batch 2", Outcome.committed)  # its batch-mate still finished
    assert {stages[f"be-su01-leaf{i}"][1] for i in (6, 7)} == {Outcome.not_attempted}
    refused = next(r for r in result.results if r.target.name == "be-su01-leaf4")
    assert "commit refused, the device kept its previous config: Invalid command at line 12" in refused.message
    assert "rollback" not in journal.of("be-su01-leaf4")  # a refused commit changed nothing to roll back
    assert result.stopped == "batch 2 failed; later devices were not touched"


def test_an_unreachable_device_in_preflight_means_no_commit_anywhere(built, plan_rows, tmp_path, monkeypatch):
    devices = {f"be-su01-leaf{i}": {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, f"be-su01-leaf{i}", True)]} for i in range(1, 4)}
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    targets[1] = replace(targets[1], optional_args={**targets[1].optional_args, "fail_on_open": True})
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, **FAST))
    assert journal.committed() == []
    failed = result.results[1]
    assert failed.outcome is Outcome.failed and failed.message.startswith(f"cannot connect to {failed.target.host}")
    assert result.stopped == "preflight failed on 1 device(s); nothing was committed"
    assert [r.outcome for r in result.results] == [Outcome.not_attempted, Outcome.failed, Outcome.not_attempted]


def test_messages_from_devices_never_show_the_password(built, tmp_path, monkeypatch):
    targets, _ = mocked(built, tmp_path, monkeypatch, {"be-su01-leaf1": {"echo_password": True}})
    result = push(targets, CREDENTIALS, RolloutOptions(**FAST))
    assert result.results[0].outcome is Outcome.failed
    assert "login ******** invalid" in result.results[0].message and PASSWORD not in result.results[0].message


def test_an_unknown_canary_is_refused(built, tmp_path, monkeypatch):
    targets, _ = mocked(built, tmp_path, monkeypatch, {"be-su01-leaf1": {}})
    with pytest.raises(PushError, match="--canary 'be-su01-leaf9' is not among the selected devices"):
        push(targets, CREDENTIALS, RolloutOptions(commit=True, canary="be-su01-leaf9", **FAST))


# -- the command, as a user runs it ------------------------------------------------------------------


def fabricgen(*args: str, env: dict | None = None) -> cli_runner.Completed:
    """In this process (tests/cli_runner.py), with exactly these FABRICGEN_* variables."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")} | (env or {})
    return cli_runner.fabricgen(*args, env=environment)


CREDENTIAL_ENV = {"FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": PASSWORD}


def test_push_command_dry_run_commit_and_exit_codes(complete_built, plan_rows, tmp_path):
    built = complete_built
    mock = tmp_path / "mock"
    leaf1 = write_device(mock, "be-su01-leaf1", diff="-  mtu 1500\n+  mtu 9216\n", bgp=[all_peers(plan_rows, "be-su01-leaf1", True)])
    leaf2 = write_device(
        mock, "be-su01-leaf2", diff="+ changed\n", bgp=[all_peers(plan_rows, "be-su01-leaf2", True), all_peers(plan_rows, "be-su01-leaf2", False)]
    )
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(
        f"defaults: {{driver: mock}}\ndevices:\n  be-su01-leaf1: {{optional_args: {{path: {leaf1}}}}}\n  be-su01-leaf2: {{optional_args: {{path: {leaf2}}}}}\n"
    )
    selection = ["--devices", "be-su01-leaf1,be-su01-leaf2", "--inventory", str(inventory)]

    dry = fabricgen("push", str(built), *selection, env=CREDENTIAL_ENV)
    assert dry.returncode == 0, dry.stderr
    assert "+  mtu 9216" in dry.stdout and "would change" in dry.stdout
    assert "dry run of 2 device(s): 2 would change; nothing was changed (add --commit to apply)" in dry.stdout

    # leaf2's sessions never come up after its commit: rolled back, exit 1
    committed = fabricgen("push", str(built), *selection, "--commit", "--batch", "1", "--verify-timeout", "0.5", env=CREDENTIAL_ENV)
    assert committed.returncode == 1, committed.stderr
    assert "committed" in committed.stdout and "rolled back" in committed.stdout
    assert "commit of 2 device(s): 1 committed, 1 rolled back; stopped: batch 1 failed" in committed.stdout

    for output in (dry.stdout + dry.stderr, committed.stdout + committed.stderr):
        assert PASSWORD not in output
    leaked = [path for path in [*tmp_path.rglob("*"), *built.rglob("*")] if path.is_file() and PASSWORD.encode() in path.read_bytes()]
    assert leaked == []


def test_push_command_json_is_the_rollout_and_nothing_else(complete_built, plan_rows, tmp_path):
    from fabricgen.push.report import PushJson

    leaf1 = write_device(tmp_path / "mock", "be-su01-leaf1", diff="-  mtu 1500\n+  mtu 9216\n", bgp=[all_peers(plan_rows, "be-su01-leaf1", True)])
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"defaults: {{driver: mock}}\ndevices:\n  be-su01-leaf1: {{optional_args: {{path: {leaf1}}}}}\n")
    result = fabricgen("push", str(complete_built), "--devices", "be-su01-leaf1", "--inventory", str(inventory), "--json", env=CREDENTIAL_ENV)
    assert result.returncode == 0, result.stderr
    document = PushJson.model_validate_json(result.stdout)  # stdout is the document alone: the progress went to stderr
    assert (document.committed, document.ok, document.counts) == (False, True, {"would change": 1})
    (device,) = document.devices
    assert (device.device, device.stage, device.outcome, device.diff_lines) == ("be-su01-leaf1", "preflight", "would change", 2)
    assert "+  mtu 9216" in device.diff and "preflight: be-su01-leaf1 would change" in result.stderr
    refused = fabricgen("push", str(tmp_path), "--json", env=CREDENTIAL_ENV)
    assert refused.returncode == 2 and json.loads(refused.stdout)["phase"] == "push"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--devices", "be-su07-leaf1"], CREDENTIAL_ENV, "'be-su07-leaf1' matches no switch in the build"),
        (["--devices", "leaf"], {"FABRICGEN_USERNAME": "netops"}, "FABRICGEN_PASSWORD not set and no terminal to prompt on"),
        (["--devices", "leaf", "--batch", "0"], CREDENTIAL_ENV, "--batch"),
    ],
)
def test_push_command_bad_input_exits_2_before_contacting_anything(built, args, env, message):
    result = fabricgen("push", str(built), *args, env=env)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr and "Traceback" not in result.stderr


def test_push_command_refuses_a_directory_that_is_not_a_build(tmp_path):
    result = fabricgen("push", str(tmp_path), env=CREDENTIAL_ENV)
    assert result.returncode == 2 and "no manifest.json" in result.stderr


def test_canary_none_commits_both_ends_of_a_change_in_one_batch(built, plan_rows, tmp_path, monkeypatch):
    """A renumbered link needs both ends at once: a lone canary would fail verification."""
    devices = {name: {"diff": "+ changed\n", "bgp": [all_peers(plan_rows, name, True)]} for name in ("be-spine01", "be-su01-leaf1")}
    targets, journal = mocked(built, tmp_path, monkeypatch, devices)
    result = push(targets, CREDENTIALS, RolloutOptions(commit=True, canary="none", batch=2, **FAST))
    assert result.ok and {r.stage for r in result.results} == {"batch 1"}
    assert sorted(journal.committed()) == ["be-spine01", "be-su01-leaf1"]


def test_each_nos_gets_its_napalm_driver(built, tmp_path):
    """NX-OS through NAPALM's NX-API driver (fabricgen's subclass: candidates from memory,
    commit-confirm), SONiC through fabricgen's own, both found by name."""
    from napalm.nxos import NXOSDriver

    from fabricgen.nos.nxos.push import NxosDriver
    from fabricgen.nos.sonic.driver import SonicDriver

    sonic = tmp_path / "sonic.yaml"
    sonic.write_text(
        "name: sonic-oob\ngpus: 16\nbackend:\n  leaf: {nos: sonic}\noob:\n  switch: {model: N9K-C93108TC-FX3, nos: nxos, count: 1}\n  console: {model: C8300-1N1S-4T2X, module: NIM-24A}\n"
    )
    build(sonic, tmp_path / "build")
    targets = read_targets(tmp_path / "build")
    assert {t.nos: t.driver for t in targets} == {"nxos": "nxos", "sonic": "sonic"}
    assert rollout.resolve_drivers(targets) == {"nxos": NxosDriver, "sonic": SonicDriver}
    assert issubclass(NxosDriver, NXOSDriver)
    leaf = next(t for t in targets if t.nos == "sonic")
    assert leaf.config == tmp_path / "build" / "configs" / leaf.name and leaf.config.is_dir()
