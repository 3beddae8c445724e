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
import socket
import ssl
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import paramiko
import pytest
from napalm.base.exceptions import ConnectAuthError, ConnectionException

from fabricgen.errors import PushError
from fabricgen.pipeline import build
from fabricgen.push import known_hosts, rollout
from fabricgen.push.credentials import Credentials
from fabricgen.push.inventory import read_targets
from fabricgen.push.report import print_diffs, result_table
from fabricgen.push.rollout import DeviceResult, Outcome, Rollout, RolloutOptions, push
from fabricgen.push.security import DeviceVerification
from fabricgen.push.sonic import SonicDriver
from fabricgen.trust import check_host

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
        f"{HostKeysHash.of('[10.9.9.9]:22')} {other.get_name()} {other.get_base64()}\n"
        f"@revoked * {other.get_name()} {other.get_base64()}\n"
        "garbage line\n"
        + switch.known_hosts_line()
    )
    with pytest.raises(ConnectAuthError, match="authentication failed"):
        open_driver(switch, known_hosts=str(file))
    assert switch.attempts == [("netops", PASSWORD)]


def test_a_hashed_known_hosts_entry_is_found(switch, tmp_path):
    """OpenSSH hashes host names in ~/.ssh/known_hosts by default (HashKnownHosts yes)."""
    file = tmp_path / "known_hosts"
    file.write_text(f"{HostKeysHash.of(switch.name)} {switch.key.get_name()} {switch.key.get_base64()}\n")
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
    keygen = subprocess.run(["which", "ssh-keygen"], capture_output=True, check=False)
    if keygen.returncode:
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


class HostKeysHash:
    @staticmethod
    def of(name: str) -> str:
        return paramiko.HostKeys.hash_host(name)
