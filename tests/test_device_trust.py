"""Devices are authenticated before they get a password; inventory values are hostile until checked.

The SSH side runs against a small paramiko SSH server in this process (`FakeSwitch`): it records
every authentication attempt it sees, so a test can show that a switch with an unknown or changed
host key never received one. No NX-OS switch can run here: the TLS side runs NAPALM's real NX-API
driver against a local HTTPS server with a self-signed certificate, which records every request,
and a recording stand-in driver for the optional_args fabricgen hands over.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import paramiko
import pytest
from napalm.base.exceptions import ConnectAuthError

from fabricgen.basics.errors import PushError
from fabricgen.basics.trust import check_host
from fabricgen.compiler.pipeline import build
from fabricgen.nos.sonic.driver import SonicDriver
from fabricgen.push import known_hosts, rollout
from fabricgen.push.credentials import Credentials
from fabricgen.push.inventory import read_targets
from fabricgen.push.report import print_diffs, result_table
from fabricgen.push.rollout import DeviceResult, Outcome, Rollout, RolloutOptions, push
from fabricgen.push.security import DeviceVerification
from tests import cli_runner

PASSWORD = "pw-4c1e-only-for-real-switches"
CREDENTIALS = Credentials("netops", PASSWORD)
LEAF = "be-su01-leaf1"
SPINE = "be-spine01"


# --- a switch that records who tried to log in --------------------------------------------------------


class FakeSwitch:
    """An SSH server on 127.0.0.1 with its own host key. `attempts` lists (username, password) of
    every password authentication it was offered; it accepts none (the tests only need to see
    whether the password was sent)."""

    def __init__(self) -> None:
        self.key = paramiko.ECDSAKey.generate()
        self.attempts: list[tuple[str, str]] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.transports: list[paramiko.Transport] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def name(self) -> str:
        return f"[127.0.0.1]:{self.port}"

    def known_hosts_line(self, key: paramiko.PKey | None = None) -> str:
        key = key or self.key
        return f"{self.name} {key.get_name()} {key.get_base64()}\n"

    def rekey(self) -> None:
        """A new host key, as a switch replaced (or impersonated) would show."""
        self.key = paramiko.ECDSAKey.generate()

    def _serve(self) -> None:
        switch = self

        class Server(paramiko.ServerInterface):
            def get_allowed_auths(self, username):
                return "password"

            def check_auth_password(self, username, password):
                switch.attempts.append((username, password))
                return paramiko.AUTH_FAILED

        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            transport = paramiko.Transport(connection)
            transport.add_server_key(self.key)
            self.transports.append(transport)
            try:
                transport.start_server(server=Server())
            except (paramiko.SSHException, EOFError, OSError):
                transport.close()

    def close(self) -> None:
        self.listener.close()
        for transport in self.transports:
            transport.close()


@pytest.fixture
def switch():
    fake = FakeSwitch()
    yield fake
    fake.close()


def open_driver(switch: FakeSwitch, **args) -> SonicDriver:
    driver = SonicDriver("127.0.0.1", "netops", PASSWORD, timeout=10, optional_args={"port": switch.port, **args})
    driver.open()
    return driver


# --- SONiC: host keys -------------------------------------------------------------------------------


def test_an_unknown_host_key_is_refused_before_the_password_is_sent(switch, tmp_path):
    file = tmp_path / "known_hosts"
    file.write_text("")
    with pytest.raises(known_hosts.HostKeyError, match=r"unknown host key, ECDSA key SHA256:\S+, is not in") as refused:
        open_driver(switch, known_hosts=str(file))
    assert switch.name in str(refused.value) and str(file) in str(refused.value)
    assert switch.attempts == []  # the server never saw an authentication attempt
    assert file.read_text() == ""  # and verify mode pins nothing


def test_a_changed_host_key_is_refused_naming_both_keys(switch, tmp_path):
    file = tmp_path / "known_hosts"
    file.write_text(switch.known_hosts_line())
    expected = known_hosts.describe(switch.key)
    switch.rekey()
    with pytest.raises(known_hosts.HostKeyError, match="host key CHANGED") as refused:
        open_driver(switch, known_hosts=str(file))
    assert f"it shows {known_hosts.describe(switch.key)}, {file} lists {expected}" in str(refused.value)
    assert switch.attempts == []


def test_a_listed_host_key_gets_the_password(switch, tmp_path):
    """The positive case of the two above: same server, its key listed (among unrelated and broken
    lines, a hashed entry of another host and a @revoked marker): authentication goes ahead."""
    other = paramiko.ECDSAKey.generate()
    file = tmp_path / "known_hosts"
    file.write_text(
        "# a comment\n"
        f"{paramiko.HostKeys.hash_host('[10.9.9.9]:22')} {other.get_name()} {other.get_base64()}\n"
        f"@revoked * {other.get_name()} {other.get_base64()}\n"
        "garbage line\n" + switch.known_hosts_line()
    )
    with pytest.raises(ConnectAuthError, match="authentication failed"):
        open_driver(switch, known_hosts=str(file))
    assert switch.attempts == [("netops", PASSWORD)]


def test_a_hashed_known_hosts_entry_is_found(switch, tmp_path):
    """OpenSSH hashes host names in ~/.ssh/known_hosts by default (HashKnownHosts yes)."""
    file = tmp_path / "known_hosts"
    file.write_text(f"{paramiko.HostKeys.hash_host(switch.name)} {switch.key.get_name()} {switch.key.get_base64()}\n")
    with pytest.raises(ConnectAuthError):
        open_driver(switch, known_hosts=str(file))
    assert len(switch.attempts) == 1


def test_trust_on_first_use_pins_then_verifies(switch, tmp_path):
    file = tmp_path / "pinned" / "known_hosts"  # neither the file nor its directory exists yet
    with pytest.raises(ConnectAuthError):
        open_driver(switch, known_hosts=str(file), host_keys="trust-on-first-use")
    assert file.read_text() == switch.known_hosts_line()  # pinned, in OpenSSH's format
    with pytest.raises(ConnectAuthError):  # the same key: accepted again, no second line
        open_driver(switch, known_hosts=str(file), host_keys="trust-on-first-use")
    assert file.read_text() == switch.known_hosts_line() and len(switch.attempts) == 2

    switch.rekey()
    with pytest.raises(known_hosts.HostKeyError, match="host key CHANGED"):
        open_driver(switch, known_hosts=str(file), host_keys="trust-on-first-use")
    assert len(switch.attempts) == 2  # the changed key got no password
    assert file.read_text().count("\n") == 1  # and was not pinned


def test_the_fingerprint_is_the_one_ssh_keygen_shows(switch, tmp_path):
    if shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh-keygen")
    public = tmp_path / "key.pub"
    public.write_text(f"{switch.key.get_name()} {switch.key.get_base64()}\n")
    shown = subprocess.run(["ssh-keygen", "-lf", str(public)], capture_output=True, text=True, check=True).stdout.split()
    # ssh-keygen: "256 SHA256:<fingerprint> no comment (ECDSA)"
    assert known_hosts.describe(switch.key) == f"{shown[-1].strip('()')} key {shown[1]}"


def test_accept_any_checks_nothing(switch, tmp_path):
    with pytest.raises(ConnectAuthError):
        open_driver(switch, known_hosts=str(tmp_path / "absent"), host_keys="accept-any")
    assert len(switch.attempts) == 1 and not (tmp_path / "absent").exists()


# --- the push command, as a user runs it, against the fake switch ---------------------------------------

SONIC_LEAVES = "name: trust\ngpus: 16\nbackend:\n  leaf: {nos: sonic}\n"  # NX-OS spines, SONiC leaves


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("trust-build")
    intent = root / "trust.yaml"
    intent.write_text(SONIC_LEAVES)
    build(intent, root / "build")
    return root / "build"


def fabricgen_push(built: Path, inventory: Path, *args: str, home: Path) -> cli_runner.Completed:
    """`fabricgen push` (in this process: tests/cli_runner.py) with HOME at `home` (so
    ~/.ssh/known_hosts is the test's), credentials set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")}
    env |= {"HOME": str(home), "FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": PASSWORD}
    return cli_runner.fabricgen("push", built, "--inventory", inventory, "--devices", LEAF, "--connect-timeout", "10", *args, env=env)


@pytest.fixture
def leaf_inventory(switch, tmp_path) -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text(f"devices:\n  {LEAF}: {{host: 127.0.0.1, optional_args: {{port: {switch.port}}}}}\n")
    return path


def test_push_refuses_an_unknown_host_key_naming_device_host_and_fingerprint(built, switch, leaf_inventory, tmp_path):
    file = tmp_path / "known_hosts"
    file.write_text("")
    # a dry run: this build has no management section, so --commit would be refused before any
    # contact (test_push_safety); the host key check is the same in both
    result = fabricgen_push(built, leaf_inventory, "--known-hosts", str(file), home=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # a device failed; it was not bad input
    row = next(line for line in result.stdout.splitlines() if line.lstrip("│ ").startswith(LEAF))
    assert "127.0.0.1" in row and f"{switch.name}: unknown host key, {known_hosts.describe(switch.key)}" in row
    assert switch.attempts == [] and PASSWORD not in result.stdout + result.stderr


def test_push_without_any_known_hosts_file_is_bad_input(built, switch, leaf_inventory, tmp_path):
    """HOME has no .ssh/known_hosts and no --known-hosts is given: nothing could be verified."""
    result = fabricgen_push(built, leaf_inventory, home=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{tmp_path}/.ssh/known_hosts: no such known_hosts file" in result.stderr and "--trust-on-first-use" in result.stderr
    tofu_unnamed = fabricgen_push(built, leaf_inventory, "--trust-on-first-use", home=tmp_path)
    assert tofu_unnamed.returncode == 2 and "--trust-on-first-use needs the file to pin host keys in" in tofu_unnamed.stderr
    assert switch.attempts == [] and switch.transports == []  # not even contacted


def test_push_trust_on_first_use_pins_then_refuses_a_changed_key(built, switch, leaf_inventory, tmp_path):
    file = tmp_path / "fabric_known_hosts"
    first = fabricgen_push(built, leaf_inventory, "--known-hosts", str(file), "--trust-on-first-use", home=tmp_path)
    # the fake switch accepts no password: the device fails at login, after its key was pinned
    assert first.returncode == 1 and "authentication failed" in first.stdout, first.stdout + first.stderr
    assert file.read_text() == switch.known_hosts_line() and len(switch.attempts) == 1

    switch.rekey()
    second = fabricgen_push(built, leaf_inventory, "--known-hosts", str(file), "--trust-on-first-use", home=tmp_path)
    assert second.returncode == 1 and "host key CHANGED" in second.stdout and known_hosts.describe(switch.key) in second.stdout
    assert len(switch.attempts) == 1 and file.read_text().count("\n") == 1


def test_push_insecure_warns_once_per_run_and_checks_nothing(built, switch, leaf_inventory, tmp_path):
    result = fabricgen_push(built, leaf_inventory, "--insecure", home=tmp_path)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: --insecure: the SSH host keys of 1 SONiC switch(es) are not verified; anyone on the path can pose as a switch and take the password"
    ]
    assert result.returncode == 1 and "authentication failed" in result.stdout  # the key was not checked: the login went ahead
    assert len(switch.attempts) == 1
    mixed = fabricgen_push(built, leaf_inventory, "--insecure", "--known-hosts", str(tmp_path / "kh"), home=tmp_path)
    assert mixed.returncode == 2 and "--insecure checks nothing, so --known-hosts would be ignored" in mixed.stderr


# --- NX-OS: TLS ---------------------------------------------------------------------------------------


class FakeNxApi:
    """An HTTPS server on 127.0.0.1 with a self-signed certificate for 127.0.0.1. `requests` lists
    the Authorization header of every request that got through TLS (401 to all of them)."""

    def __init__(self, directory: Path) -> None:
        self.certificate = directory / "nxapi.pem"
        key = directory / "nxapi.key"
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
                "-keyout",
                str(key),
                "-out",
                str(self.certificate),
            ],
            check=True,
            capture_output=True,
        )
        self.requests: list[str] = []
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                api.requests.append(self.headers.get("Authorization", ""))
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def nxapi(tmp_path):
    server = FakeNxApi(tmp_path)
    yield server
    server.close()


def spine_target(built: Path, tmp_path: Path, port: int, extra: str = ""):
    inventory = tmp_path / "nxos.yaml"
    inventory.write_text(f"devices:\n  {SPINE}: {{host: 127.0.0.1, optional_args: {{port: {port}{extra}}}}}\n")
    return read_targets(built, SPINE, inventory)


@pytest.mark.parametrize(
    ("verification", "reaches_api"),
    [
        (None, False),  # the default: the system's CAs, which did not sign this certificate
        ("ca_bundle", True),
        ("insecure", True),
    ],
)
def test_nxapi_tls_is_verified_before_the_password_is_sent(built, nxapi, tmp_path, verification, reaches_api):
    """NAPALM's real nxos driver over HTTPS; the server's 401 makes every open() fail, so what
    tells the cases apart is whether a request (carrying the password) got through TLS."""
    options = {"ca_bundle": DeviceVerification(ca_bundle=nxapi.certificate), "insecure": DeviceVerification(insecure=True)}
    result = push(
        spine_target(built, tmp_path, nxapi.port), CREDENTIALS, RolloutOptions(connect_timeout=10, verification=options.get(verification, DeviceVerification()))
    )
    assert result.results[0].outcome is Outcome.failed and "cannot connect" in result.results[0].message
    assert bool(nxapi.requests) is reaches_api
    assert all(header.startswith("Basic ") for header in nxapi.requests)


def test_the_nxos_driver_gets_ssl_verify_from_the_options(built, tmp_path):
    [spine] = spine_target(built, tmp_path, 443)
    bundle = tmp_path / "ca.pem"
    bundle.write_text("")
    assert DeviceVerification().driver_args(spine)["ssl_verify"] is True
    assert DeviceVerification(ca_bundle=bundle).driver_args(spine)["ssl_verify"] == str(bundle)
    assert DeviceVerification(insecure=True).driver_args(spine)["ssl_verify"] is False
    [own] = spine_target(built, tmp_path, 443, f", ssl_verify: {bundle}")
    assert DeviceVerification(ca_bundle=tmp_path / "other.pem").driver_args(own)["ssl_verify"] == str(bundle)  # the device's own CA wins


@pytest.mark.parametrize("setting", [", ssl_verify: false", ", transport: http", ", nxos_protocol: http"])
def test_the_inventory_cannot_switch_tls_off_without_insecure(built, tmp_path, monkeypatch, setting):
    """Refused before any device is contacted: the driver is never even looked up."""
    monkeypatch.setattr(rollout, "get_network_driver", lambda name: pytest.fail("a driver was looked up"))
    targets = spine_target(built, tmp_path, 443, setting)
    with pytest.raises(PushError) as refused:
        push(targets, CREDENTIALS, RolloutOptions())
    assert SPINE in refused.value.report() and "--insecure" in refused.value.report()
    DeviceVerification(insecure=True).check(targets)  # explicitly insecure: allowed


def test_push_command_refuses_ssl_verify_false_with_exit_2(built, tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"devices:\n  {SPINE}: {{host: 192.0.2.1, optional_args: {{ssl_verify: false}}}}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICGEN_")} | {"FABRICGEN_USERNAME": "netops", "FABRICGEN_PASSWORD": PASSWORD}
    result = cli_runner.fabricgen("push", built, "--inventory", inventory, "--devices", SPINE, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{SPINE}: optional_args ssl_verify: false would accept any TLS certificate" in result.stderr


# --- inventory values ---------------------------------------------------------------------------------


HOSTILE_INVENTORY = f"""\
defaults:
  optional_args: {{ssl_verfy: true}}
devices:
  {SPINE}:
    host: "10.0.0.1; reboot"
    driver: ../../etc/evil
  {LEAF}:
    host: "leaf\\x1b[2J.example"
    optional_args:
      port: "22"
      frr_container: "bgp; rm -rf /"
      key_file: "/tmp/key\\nPermitRootLogin yes"
      host_keys: accept-any
      sudo: {{nested: true}}
  be-su01-leaf2:
    host: 10.0.0.300
    optional_args: {{port: 70000}}
  "leaf\\nname": {{host: 10.0.0.9}}
"""


def test_hostile_inventory_values_are_refused_with_file_line_and_field(built, tmp_path):
    inventory = tmp_path / "hostile.yaml"
    inventory.write_text(HOSTILE_INVENTORY)
    with pytest.raises(PushError) as refused:
        read_targets(built, None, inventory)
    report = refused.value.report()
    lines = report.splitlines()
    expected = [
        ("2: defaults.optional_args.ssl_verfy: unknown option 'ssl_verfy'", "ssl_verify"),
        (f"5: devices.{SPINE}.host: '10.0.0.1; reboot' is neither an IP address nor a DNS name", ""),
        (f"6: devices.{SPINE}.driver: '../../etc/evil' is not a supported driver", "eos, nxos, sonic, mock"),  # the registry orders NOSes by name
        (f"8: devices.{LEAF}.host: 'leaf\\x1b[2J.example' is neither", ""),
        (f"10: devices.{LEAF}.optional_args.port: '22' is not a TCP port", ""),
        (f"11: devices.{LEAF}.optional_args.frr_container: 'bgp; rm -rf /' is not a valid identifier", ""),
        (f"12: devices.{LEAF}.optional_args.key_file: '/tmp/key\\nPermitRootLogin yes' holds a control character", ""),
        (f"13: devices.{LEAF}.optional_args.host_keys: 'host_keys': host key checking is not set in the inventory", "--known-hosts"),
        (f"14: devices.{LEAF}.optional_args.sudo: {{'nested': True}} is not true or false", ""),
        ("16: devices.be-su01-leaf2.host: '10.0.0.300' is neither", ""),
        ("17: devices.be-su01-leaf2.optional_args.port: 70000 is not a TCP port", ""),
        ("18: devices.leaf\\nname: 'leaf\\nname' is not a valid name", ""),
    ]
    for fragment, hint in expected:
        line = next((line for line in lines if f"{inventory}:{fragment}" in line), None)
        assert line is not None, f"no problem '{fragment}' in:\n{report}"
        assert hint in line
    assert lines[0] == f"push: {len(expected)} problems" and len(lines) == len(expected) + 1 and "\x1b" not in report


def test_inventory_yaml_tricks_are_refused(built, tmp_path):
    inventory = tmp_path / "tricks.yaml"
    inventory.write_text(f"devices:\n  {SPINE}: {{host: 192.0.2.1}}\n  {SPINE}: {{host: 192.0.2.2}}\n")
    with pytest.raises(PushError, match="duplicate key"):
        read_targets(built, SPINE, inventory)
    inventory.write_text(f"devices:\n  {SPINE}: !!python/object:os.system {{host: x}}\n")
    with pytest.raises(PushError, match=re.escape("tag !!python/object:os.system is not allowed")):
        read_targets(built, SPINE, inventory)


@pytest.mark.parametrize("host", ["192.0.2.1", "2001:db8::1", "switch-01.mgmt.example.net", "leaf1"])
def test_check_host_accepts_addresses_and_dns_names(host):
    assert check_host(host) == host


@pytest.mark.parametrize("host", ["10.0.0.300", "fe80::1%eth0", "a..b", "-leaf.example", "leaf_1", "x" * 64, "h\x1b[2J", "host name", ""])
def test_check_host_refuses_what_is_neither(host):
    with pytest.raises(ValueError, match="neither an IP address nor a DNS name"):
        check_host(host)


# --- what a device sends back -----------------------------------------------------------------------


def test_device_text_cannot_drive_the_terminal(built, tmp_path):
    """A device's message and diff with an escape sequence (clear screen), a carriage return that
    would overwrite the line, and rich markup: all shown as text."""
    from io import StringIO

    from rich.console import Console

    [target] = spine_target(built, tmp_path, 443)
    hostile = "\x1b[2J\rall good [bold green]committed[/] [link=http://evil]x[/link]"
    results = [DeviceResult(target, Outcome.failed, stage="preflight", diff=f"+ feature bgp\n+ {hostile}\n", message=hostile)]
    for terminal in (False, True):
        screen = StringIO()
        console = Console(file=screen, width=400, force_terminal=terminal, color_system=None)
        print_diffs(console, Rollout(results, committed=False))
        console.print(result_table(Rollout(results, committed=False)))
        shown = screen.getvalue()
        assert "\x1b[2J" not in shown and "\r" not in shown
        assert "\\x1b[2J\\rall good [bold green]committed[/] [link=http://evil]x[/link]" in shown
