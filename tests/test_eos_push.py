"""`fabricgen push` to EOS switches through NAPALM's eos driver (fabricgen/nos/eos/push.py).

An EOS switch cannot run here: every switch in this file is the RECORDED eAPI STAND-IN of
tests/eos_target.py, an HTTPS JSON-RPC server on 127.0.0.1 whose answers are written from
Arista's documented eAPI output shapes (tests/data/eos/answers.json), not captured from a switch.
It keeps configuration sessions, the commit timer and its expiry (on a clock the test moves), so
the driver's real requests, NAPALM's own session handling and fabricgen's rollout all run
against it. Certificates come from a CA each test makes; the client verifies them.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
from napalm.base.exceptions import CommitError

from fabricgen.basics.errors import PushError
from fabricgen.build.secrets import Secrets
from fabricgen.nos.eos.push import COMMIT_TIMER_RANGE, MAX_ANSWER, EosDriver, missing_parts
from fabricgen.push.credentials import Credentials
from fabricgen.push.inventory import Target, bgp_neighbors
from fabricgen.push.rollout import Outcome, RolloutOptions, push
from fabricgen.push.security import DeviceVerification
from tests.eos_target import HOSTILE, EapiStandIn, TestCa

PASSWORD = "pw-eos-4b1d-never-on-disk"
CREDENTIALS = Credentials("netops", PASSWORD)
BGP_KEY = "bgp-key-9c2e-SECRET"  # distinctive: a leak is found by a plain search
ADMIN_HASH = "$6$fabricgensalt$" + "a" * 86
FAST = {"verify_timeout": 0.5, "poll_interval": 0.05, "connect_timeout": 5}

# What every switch runs before the push: reachable, a login, eAPI in the management VRF.
BEFORE = [
    "hostname {name}",
    "vrf instance MGMT",
    "interface Management1",
    "vrf MGMT",
    "ip address 192.0.2.{octet}/24",
    "ip route vrf MGMT 0.0.0.0/0 192.0.2.1",
    "username admin privilege 15 role network-admin secret sha512 " + ADMIN_HASH,
    "management api http-commands",
    "no shutdown",
    "vrf MGMT",
    "no shutdown",
]

CONFIG = """\
! a build's EOS config, as the EOS renderer writes one (shortened)
hostname {name}
!
vrf instance MGMT
!
interface Management1
   description out-of-band management
   vrf MGMT
   ip address 192.0.2.{octet}/24
!
ip route vrf MGMT 0.0.0.0/0 192.0.2.1
!
username admin privilege 15 role network-admin secret sha512 <<secret=admin-password-hash>>
!
management ssh
   !
   vrf MGMT
      no shutdown
!
management api http-commands
   protocol https
   no protocol http
   no shutdown
   !
   vrf MGMT
      no shutdown
!
interface Ethernet1/1
   no switchport
   ip address 10.1.0.{octet}/31
!
router bgp {asn}
   neighbor SPINES peer group
   neighbor SPINES password 0 <<secret=bgp-backend>>
   neighbor 10.1.0.{peer} peer group SPINES
   neighbor 10.1.0.{peer} remote-as {peer_asn}
!
"""


@pytest.fixture
def ca(tmp_path) -> TestCa:
    return TestCa(tmp_path / "ca")


class Fabric:
    """Two stand-in switches (a leaf and a spine), their build configs and push targets."""

    def __init__(self, ca: TestCa, directory: Path, **switch_options) -> None:
        self.ca = ca
        self.switches: dict[str, EapiStandIn] = {}
        self.targets: list[Target] = []
        for name, role, octet, peer, asn in (("spine1", "spine", 0, 1, 65000), ("leaf1", "leaf", 1, 0, 65001)):
            certificate, key = ca.server_files()
            running = [line.format(name=name, octet=octet) for line in BEFORE]
            switch = EapiStandIn(name, certificate, key, CREDENTIALS.username, PASSWORD, running=running, asn=asn, **switch_options)
            self.switches[name] = switch
            config = directory / f"{name}.cfg"
            config.write_text(CONFIG.format(name=name, octet=octet, peer=peer, asn=asn, peer_asn=65000 if role == "leaf" else 65001))
            self.targets.append(
                Target(
                    name=name,
                    role=role,
                    network="backend",
                    nos="eos",
                    host="127.0.0.1",
                    driver="eos",
                    config=config,
                    expected_peers=bgp_neighbors(config.read_text()),
                    optional_args={"port": switch.port},
                )
            )

    def push(self, **options) -> object:
        verification = options.pop("verification", DeviceVerification(ca_bundle=self.ca.bundle))
        secrets = Secrets({"admin-password-hash": ADMIN_HASH, "bgp-backend": BGP_KEY})
        return push(self.targets, CREDENTIALS, RolloutOptions(verification=verification, **(FAST | options)), secrets=secrets)

    def close(self) -> None:
        for switch in self.switches.values():
            switch.close()


@pytest.fixture
def fabric(ca, tmp_path):
    built = Fabric(ca, tmp_path)
    yield built
    built.close()


def statements(path: Path, secrets: dict[str, str]) -> list[str]:
    """A config file as NAPALM's eos driver sends it into the session: stripped lines, comments
    left out, secrets filled, up to `end` (which leaves the session)."""
    text = path.read_text()
    for name, value in secrets.items():
        text = text.replace(f"<<secret={name}>>", value)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("!")]
    return lines[: lines.index("end")] if "end" in lines else lines


def session_commands(switch: EapiStandIn, pattern: str) -> list[str]:
    return [command for command in switch.commands() if re.fullmatch(pattern, command)]


def test_canary_commit_is_confirmed_only_after_verification(fabric):
    result = fabric.push(commit=True, confirm_timeout=300)
    assert result.ok, [(r.target.name, r.outcome, r.message) for r in result.results]
    by_name = {r.target.name: r for r in result.results}
    assert by_name["leaf1"].stage == "canary" and by_name["spine1"].stage == "batch 1"  # a leaf first
    for name, switch in fabric.switches.items():
        target = next(t for t in fabric.targets if t.name == name)
        # the whole candidate went in, secrets filled in memory; and it is what the switch runs and saved
        assert switch.running == switch.startup == statements(target.config, {"admin-password-hash": ADMIN_HASH, "bgp-backend": BGP_KEY})
        # committed with a commit timer of the confirm timeout, then confirmed by a second commit
        (timer,) = session_commands(switch, r"configure session napalm_\d+ commit timer \d\d:\d\d:\d\d")
        assert timer.endswith("commit timer 00:05:00")
        confirm = timer.removesuffix(" timer 00:05:00")
        commands = switch.commands()
        assert commands.index(timer) < commands.index("show ip bgp neighbors vrf all", commands.index(timer)) < commands.index(confirm)
        assert switch.timer is None and not switch.timer_expired.is_set()
        assert "confirmed" in by_name[name].message and "a new management session works" in by_name[name].message
        assert BGP_KEY not in by_name[name].diff and "<<secret=bgp-backend>>" in by_name[name].diff  # the diff comes back masked
    # the canary was confirmed before the spine's commit began (dry runs of both came first)
    leaf, spine = fabric.switches["leaf1"], fabric.switches["spine1"]
    assert leaf.first(r"configure session napalm_\d+ commit") < spine.first(r"copy startup-config flash:rollback-0")
    assert spine.first(r"configure session napalm_\d+ abort") < leaf.first(r"copy startup-config flash:rollback-0")


def test_napalm_s_own_eos_driver_would_have_sent_the_password_to_any_certificate(fabric, tmp_path):
    """Why push uses fabricgen's subclass: NAPALM's EOSDriver over pyeapi does not verify the
    certificate unless it is handed an SSL context, and sends the password to whoever answers."""
    from napalm.eos.eos import EOSDriver

    leaf = fabric.switches["leaf1"]
    device = EOSDriver("127.0.0.1", CREDENTIALS.username, PASSWORD, timeout=5, optional_args={"port": leaf.port})
    device.open()  # no CA given anywhere: the stand-in's certificate was not checked
    device.close()
    assert leaf.handshakes >= 1 and leaf.requests  # the password went out with the first request


def test_an_unconfirmed_commit_is_rolled_back_by_the_switch_when_its_timer_expires(ca, tmp_path):
    """The commit locks fabricgen out (as a wrong management ACL would): no verification, no
    confirm, no rollback reaches the switch. The switch's commit timer restores the old config."""
    fabric = Fabric(ca, tmp_path, lock_out_after_commit=True)
    try:
        before = {name: list(switch.running) for name, switch in fabric.switches.items()}
        result = fabric.push(commit=True, confirm_timeout=120)
        canary = next(r for r in result.results if r.stage == "canary")
        assert canary.outcome is Outcome.failed and "ROLLBACK FAILED" in canary.message
        assert "its confirm timer restores the previous config within 120 s of the commit" in canary.message
        assert "batch 1 failed" not in result.stopped and "canary failed" in result.stopped
        leaf = fabric.switches["leaf1"]
        assert leaf.timer_started.is_set() and leaf.running != before["leaf1"]  # the new config is live, unconfirmed
        assert fabric.switches["spine1"].timer is None and fabric.switches["spine1"].running == before["spine1"]  # never touched
        leaf.advance(119)
        assert not leaf.timer_expired.is_set() and leaf.running != before["leaf1"]
        leaf.advance(1)  # the timer runs out
        assert leaf.timer_expired.wait(10) and leaf.running == before["leaf1"]
        # a new session sees the old config and no commit waiting
        device = EosDriver("127.0.0.1", CREDENTIALS.username, PASSWORD, timeout=5, optional_args={"port": leaf.port, "ssl_verify": str(ca.bundle)})
        device.open()
        try:
            assert device.has_pending_commit() is False
            assert device.get_config(retrieve="running")["running"].splitlines()[5:-1] == before["leaf1"]
        finally:
            device.close()
    finally:
        fabric.close()


def test_a_failed_verification_aborts_the_pending_session_and_the_old_config_is_back(ca, tmp_path):
    fabric = Fabric(ca, tmp_path, bgp_up=False)
    try:
        before = list(fabric.switches["leaf1"].running)
        result = fabric.push(commit=True, confirm_timeout=120)
        canary = next(r for r in result.results if r.stage == "canary")
        assert canary.outcome is Outcome.rolled_back, canary.message
        assert "0/1 BGP neighbors Established" in canary.message
        leaf = fabric.switches["leaf1"]
        assert leaf.running == before and leaf.timer is None
        assert any(re.fullmatch(r"configure session napalm_\d+ abort", c) for c in leaf.commands())
    finally:
        fabric.close()


def test_a_certificate_from_another_ca_is_refused_before_anything_is_sent(fabric, tmp_path):
    stranger = TestCa(tmp_path / "other-ca", name="another CA")
    result = fabric.push(verification=DeviceVerification(ca_bundle=stranger.bundle))
    assert not result.ok
    for outcome in result.results:
        assert outcome.outcome is Outcome.failed
        assert "TLS certificate not trusted" in outcome.message and "nothing was sent" in outcome.message, outcome.message
    for switch in fabric.switches.values():
        assert switch.requests == [] and switch.handshakes == 0 and switch.unauthorized == 0  # no request, no password


def test_insecure_accepts_any_certificate_and_says_so(fabric, tmp_path):
    stranger = TestCa(tmp_path / "other-ca", name="another CA")
    verification = DeviceVerification(insecure=True)
    assert verification.warning(fabric.targets).startswith("warning: --insecure: the TLS certificates of 2 EOS switch(es) are not verified")
    assert fabric.push(verification=verification).ok
    assert stranger  # another CA exists, and it did not matter


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_answers_are_refused_cleanly(fabric, kind):
    for switch in fabric.switches.values():
        switch.hostile = kind
    started = time.monotonic()
    result = fabric.push()
    expected = {
        "huge": f"the answer is over {MAX_ANSWER} bytes; not read",
        "not-json": "the answer is not JSON",
        "deep": "the answer is not JSON",
        "not-json-rpc": "the answer is not a JSON-RPC 2.0 object",
        "too-few-results": "the answer does not hold one result object for each of the 2 command(s)",
    }[kind]
    for outcome in result.results:
        assert outcome.outcome is Outcome.failed
        assert outcome.message.startswith("cannot connect to 127.0.0.1: ") and expected in outcome.message, outcome.message
        assert len(outcome.message) < 400 and "Traceback" not in outcome.message
    assert time.monotonic() - started < 60


def test_a_refused_line_stops_the_rollout_in_preflight_and_its_secret_stays_masked(ca, tmp_path):
    fabric = Fabric(ca, tmp_path, refuse=re.compile(r"^neighbor SPINES password"))
    try:
        before = {name: list(switch.running) for name, switch in fabric.switches.items()}
        result = fabric.push(commit=True)
        assert result.stopped == "preflight failed on 2 device(s); nothing was committed"
        for outcome in result.results:
            assert outcome.outcome is Outcome.failed and outcome.message.startswith("the device rejected the candidate")
            assert "<<secret=bgp-backend>>" in outcome.message and BGP_KEY not in outcome.message, outcome.message
        for name, switch in fabric.switches.items():
            assert switch.running == before[name] and switch.timer is None
            assert not any("commit" in command for command in switch.commands())
    finally:
        fabric.close()


def test_the_commit_timer_takes_what_hh_mm_ss_holds(fabric):
    low, high = COMMIT_TIMER_RANGE
    with pytest.raises(PushError, match=f"EOS's commit timer takes {low}-{high} s"):
        fabric.push(commit=True, confirm_timeout=high + 1)
    assert all(switch.requests == [] for switch in fabric.switches.values())  # refused before any switch was asked
    leaf = fabric.switches["leaf1"]
    device = EosDriver("127.0.0.1", CREDENTIALS.username, PASSWORD, timeout=5, optional_args={"port": leaf.port, "ssl_verify": str(fabric.ca.bundle)})
    device.open()
    try:
        device.load_replace_candidate(config="hostname leaf1\n")
        with pytest.raises(CommitError, match="takes 1-86399 seconds, not 86460"):
            device.commit_config(revert_in=86_460)  # NAPALM's hh:mm:ss would have made it 00:01:00
        assert leaf.timer is None and not session_commands(leaf, r".*commit.*")
    finally:
        device.close()


def test_a_switch_that_does_not_boot_the_pinned_image_is_refused_in_preflight(fabric):
    fabric.targets = [replace(t, boot_image="EOS-4.33.1F.swi") if t.name == "leaf1" else t for t in fabric.targets]
    result = fabric.push(commit=True)
    leaf = next(r for r in result.results if r.target.name == "leaf1")
    assert leaf.outcome is Outcome.failed
    assert "runs another image than the build pins (EOS-4.33.1F.swi): current EOS-4.32.2F.swi, next EOS-4.32.2F.swi" in leaf.message
    assert result.stopped.startswith("preflight failed") and all(s.timer is None for s in fabric.switches.values())
    pinned = [replace(t, boot_image="EOS-4.32.2F.swi") for t in fabric.targets]
    fabric.targets = pinned
    assert fabric.push().ok


def test_the_driver_reads_only_its_options_and_refuses_the_rest():
    with pytest.raises(ValueError, match="transport are not read by the EOS driver"):
        EosDriver("127.0.0.1", "u", "p", optional_args={"transport": "http"})


def test_a_replace_keeps_management_login_ssh_and_eapi():
    complete = CONFIG.format(name="leaf1", octet=1, peer=0, asn=65001, peer_asn=65000)
    assert missing_parts(complete) == []
    cases = {
        "no VRF": (complete.replace("vrf instance MGMT\n", ""), "`interface Management1` with `vrf NAME`"),
        "no login": (complete.replace("username admin", "! username admin"), "a login"),
        "SSH elsewhere": (complete.replace("management ssh\n   !\n   vrf MGMT", "management ssh\n   !\n   vrf OTHER"), "SSH in the management VRF"),
        "eAPI off": (complete.replace("   no protocol http\n   no shutdown", "   no protocol http\n   shutdown"), "eAPI on"),
        "eAPI over http": (complete.replace("   no protocol http\n", "   protocol http\n"), "eAPI over HTTPS only"),
        "telnet": (complete + "management telnet\n   no shutdown\n", "telnet off"),
    }
    for case, (config, missing) in cases.items():
        assert any(missing in part for part in missing_parts(config)), (case, missing_parts(config))


# --- `fabricgen push` of an EOS build to two stand-in switches -----------------------------------

TINY_EOS = """
name: tiny-eos-push
gpus: 16
backend:
  # the release the stand-in switches answer they run (tests/data/eos/answers.json) and boot
  leaf: {model: DCS-7060DX5-64S, nos: eos, nos_release: "4.32.2F"}
  spine: {model: DCS-7060DX5-64S, nos: eos, nos_release: "4.32.2F"}
  bgp_security: {password: bgp-backend}
oob:
  switch: {model: N9K-C93108TC-FX3, nos: nxos, count: 1}
  console: {model: C8300-1N1S-4T2X, module: NIM-24A}
management:
  users: [{name: admin, role: network-admin, password_hash: admin-password-hash}]
  access: {management_networks: [10.250.0.0/24]}
  ntp: {servers: [10.250.0.21], key: ntp-key}
  boot: {eos: EOS-4.32.2F.swi}
"""
NTP_KEY = "ntp-key-77e1-SECRET"
SECRET_ENV = {
    "FABRICGEN_USERNAME": CREDENTIALS.username,
    "FABRICGEN_PASSWORD": PASSWORD,
    "FABRICGEN_SECRET_ADMIN_PASSWORD_HASH": ADMIN_HASH,
    "FABRICGEN_SECRET_BGP_BACKEND": BGP_KEY,
    "FABRICGEN_SECRET_NTP_KEY": NTP_KEY,
}
PUSHED = ("be-su01-leaf1", "be-spine01")


@pytest.fixture(scope="module")
def eos_build(tmp_path_factory) -> Path:
    """A leaf/spine EOS build with a management section (complete for a replace) and an OOB plan."""
    from fabricgen.compiler.pipeline import build

    root = tmp_path_factory.mktemp("eos-build")
    (root / "tiny-eos.yaml").write_text(TINY_EOS.lstrip())
    build(root / "tiny-eos.yaml", root / "build")
    return root / "build"


class BuildSwitches:
    """A stand-in for each pushed switch of `eos_build`, its inventory and its CA bundle."""

    def __init__(self, build: Path, directory: Path, **options) -> None:
        self.ca = TestCa(directory / "ca")
        self.switches = {}
        lines = ["devices:"]
        for octet, name in enumerate(PUSHED, start=2):
            certificate, key = self.ca.server_files()
            running = [line.format(name=name, octet=octet) for line in BEFORE]
            self.switches[name] = EapiStandIn(name, certificate, key, CREDENTIALS.username, PASSWORD, running=running, **options)
            lines.append(f"  {name}: {{host: 127.0.0.1, optional_args: {{port: {self.switches[name].port}}}}}")
        self.inventory = directory / "inventory.yaml"
        self.inventory.write_text("\n".join(lines) + "\n")
        self.build = build

    def push(self, *args: str):
        from tests import cli_runner

        selection = ["--devices", ",".join(PUSHED), "--inventory", str(self.inventory), "--ca-bundle", str(self.ca.bundle)]
        return cli_runner.fabricgen("push", str(self.build), *selection, *args, env=SECRET_ENV)

    def close(self) -> None:
        for switch in self.switches.values():
            switch.close()


def test_fabricgen_push_commits_an_eos_build_canary_first_and_confirms_after_verification(eos_build, tmp_path):
    switches = BuildSwitches(eos_build, tmp_path)
    try:
        dry = switches.push()
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert "dry run of 2 device(s): 2 would change; nothing was changed" in dry.stdout
        assert all(switch.timer is None and switch.running == switch.startup for switch in switches.switches.values())

        result = switches.push("--commit", "--confirm-timeout", "600", "--verify-timeout", "2")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "commit of 2 device(s): 2 committed" in result.stdout
        leaf, spine = switches.switches["be-su01-leaf1"], switches.switches["be-spine01"]
        assert leaf.first(r"configure session napalm_\d+ commit timer 00:10:00") < leaf.first(r"configure session napalm_\d+ commit")
        assert leaf.first(r"configure session napalm_\d+ commit") < spine.first(r"configure session napalm_\d+ commit timer 00:10:00")  # the canary first
        secrets = {"admin-password-hash": ADMIN_HASH, "bgp-backend": BGP_KEY, "ntp-key": NTP_KEY}
        for name, switch in switches.switches.items():
            assert switch.running == switch.startup == statements(eos_build / "configs" / f"{name}.cfg", secrets), name
            assert switch.timer is None and not switch.timer_expired.is_set()
        output = result.stdout + result.stderr
        for value in (PASSWORD, BGP_KEY, NTP_KEY, ADMIN_HASH):
            assert value not in output
        assert "<<secret=bgp-backend>>" in output  # the diffs say which secret a line uses
        again = switches.push("--commit")
        assert again.returncode == 0 and "2 unchanged" in again.stdout, again.stdout
    finally:
        switches.close()


def test_fabricgen_push_to_eos_whose_confirm_never_comes_is_undone_by_the_switch_s_timer(eos_build, tmp_path):
    switches = BuildSwitches(eos_build, tmp_path, lock_out_after_commit=True)
    try:
        before = {name: list(switch.running) for name, switch in switches.switches.items()}
        result = switches.push("--commit", "--confirm-timeout", "600", "--verify-timeout", "0.5")
        assert result.returncode == 1
        assert "canary failed; later devices were not touched" in result.stdout, result.stdout
        leaf, spine = switches.switches["be-su01-leaf1"], switches.switches["be-spine01"]
        assert leaf.timer is not None and leaf.running != before["be-su01-leaf1"]  # committed, never confirmed
        assert spine.running == before["be-spine01"] and spine.timer is None
        leaf.advance(600)
        assert leaf.timer_expired.wait(10) and leaf.running == before["be-su01-leaf1"] and leaf.timer is None
        assert "Traceback" not in result.stderr and PASSWORD not in result.stdout + result.stderr
    finally:
        switches.close()
