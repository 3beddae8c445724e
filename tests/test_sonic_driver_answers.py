"""The SONiC driver's reads against a scripted switch: every answer bounded, every answer parsed
strictly.

No SONiC switch can run here, and tests/test_sonic_driver.py (the driver against a lab leaf's real
FRR) needs root and a lab. This module needs neither: `ScriptedSwitch` is a paramiko SSH server in
this process that answers each command the driver sends with what the test scripts, as a broken
or hostile switch could answer (a stand-in for the switch; the driver, SSH and the parsing are the
real ones). It records how many bytes of each answer it managed to send before the driver
stopped reading, so a test can show that an answer beyond the bound was never taken in.
"""

from __future__ import annotations

import json
import re
import shlex
import socket
import threading
from collections.abc import Iterator

import paramiko
import pytest
from napalm.base.exceptions import CommandErrorException

from fabricgen.nos.sonic import driver as sonic
from fabricgen.nos.sonic.driver import SonicDriver

PASSWORD = "scripted-switch-pw"
MIB = 1024 * 1024
CONFIG_DB = {"DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "hwsku": "Mellanox-SN4700", "mac": "00:11:22:33:44:55"}}, "PORT": {"Ethernet0": {}}}
BGP_SUMMARY = {
    "default": {
        "ipv4Unicast": {
            "routerId": "10.0.0.1",
            "as": 64513,
            "peers": {
                "10.8.0.0": {"remoteAs": 64512, "localAs": 64513, "state": "Established", "peerState": "OK", "pfxRcd": 3, "pfxSnt": 5, "peerUptimeMsec": 62000},
                "10.8.0.2": {"remoteAs": 64512, "localAs": 64513, "state": "Active", "peerState": "OK", "peerUptimeMsec": 0},
            },
        }
    }
}
BGP_NEIGHBORS = {"default": {"10.8.0.0": {"remoteRouterId": "10.0.0.9", "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 3}}}}}


def answers() -> dict[str, object]:
    """A healthy switch: command (a substring of what the driver runs) -> its answer."""
    return {
        sonic.SHOW_CONFIG_DB: json.dumps(CONFIG_DB),
        sonic.SHOW_VERSION: "SONiC Software Version: SONiC.202405.0\nDistribution: Debian 12\n",
        sonic.VTYSH_VERSION: "FRRouting 8.4.4 (leaf1) on Linux(6.1.0).\n",
        "cat /proc/uptime": "1234.56 4321.00\n",
        "hostname": "leaf1\n",
        sonic.SONIC_INSTALLER_LIST: "Current: SONiC-OS-202405.0\nNext: SONiC-OS-202405.0\nAvailable:\nSONiC-OS-202405.0\n",
        sonic.VTYSH_BGP_SUMMARY: json.dumps(BGP_SUMMARY),
        sonic.VTYSH_BGP_NEIGHBORS: json.dumps(BGP_NEIGHBORS),
        sonic.VTYSH_RUNNING: "frr version 8.4\nhostname leaf1\n",
        f"cat {sonic.STARTUP_CONFIG_DB}": json.dumps(CONFIG_DB),
        f"cat {sonic.FRR_CONF}": "hostname leaf1\n",
    }


def beyond(bound: int) -> Iterator[bytes]:
    """An answer of `bound` bytes and 8 MiB more: what a runaway or hostile command prints (finite,
    so a driver that reads it all still returns, and the test fails rather than hangs)."""
    for _ in range(bound // MIB + 8):
        yield b"x" * MIB


class ScriptedSwitch:
    """An SSH server on 127.0.0.1 that logs in root with PASSWORD and answers each command with its
    scripted answer (str, or an iterator of byte chunks), keyed by the command as the driver
    means it (`sh -c 'CMD'`, how it runs FRR's tools on the host, is CMD); an unscripted command
    exits 127. `sent[key]` is how many bytes of that answer went out before
    the driver closed the channel or the answer ended; `done[key]` is set then."""

    def __init__(self, script: dict[str, object]) -> None:
        self.script = script
        self.key = paramiko.ECDSAKey.generate()
        self.sent: dict[str, int] = {}
        self.done: dict[str, threading.Event] = {}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.transports: list[paramiko.Transport] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} {self.key.get_name()} {self.key.get_base64()}\n"

    def _serve(self) -> None:
        switch = self

        class Server(paramiko.ServerInterface):
            def get_allowed_auths(self, username):
                return "password"

            def check_auth_password(self, username, password):
                return paramiko.AUTH_SUCCESSFUL if (username, password) == ("root", PASSWORD) else paramiko.AUTH_FAILED

            def check_channel_request(self, kind, chanid):
                return paramiko.OPEN_SUCCEEDED if kind == "session" else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

            def check_channel_exec_request(self, channel, command):
                threading.Thread(target=switch._answer, args=(channel, command.decode()), daemon=True).start()
                return True

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

    def _answer(self, channel: paramiko.Channel, command: str) -> None:
        words = shlex.split(command)
        key = words[2] if words[:2] == ["sh", "-c"] and len(words) == 3 else command
        answer = self.script.get(key)
        chunks = iter([answer.encode()]) if isinstance(answer, str) else answer
        done = self.done.setdefault(key, threading.Event())
        sent, status = 0, 0
        try:
            if chunks is None:
                channel.sendall_stderr(f"not scripted: {command}\n".encode())
                status = 127
            for chunk in chunks or ():
                channel.sendall(chunk)
                sent += len(chunk)
            # The driver closes its side of stdin once exec_command returned: waiting for that
            # keeps the exit status and the close from overtaking the exec request's reply.
            while channel.recv(65536):
                pass
            channel.send_exit_status(status)
        except (OSError, EOFError, paramiko.SSHException):
            pass  # the driver closed the channel: it stopped reading
        finally:
            self.sent[key] = sent
            channel.close()
            done.set()

    def close(self) -> None:
        self.listener.close()
        for transport in self.transports:
            transport.close()


@pytest.fixture
def script() -> dict[str, object]:
    return answers()


@pytest.fixture
def driver(script, tmp_path):
    switch = ScriptedSwitch(script)
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(switch.known_hosts_line())
    device = SonicDriver("127.0.0.1", "root", PASSWORD, timeout=30, optional_args={"port": switch.port, "frr_container": "", "known_hosts": str(known_hosts)})
    device.open()
    device.switch = switch  # type: ignore[attr-defined]
    yield device
    device.close()
    switch.close()


def test_the_scripted_switch_answers_as_a_healthy_one(driver):
    facts = driver.get_facts()
    assert (facts["hostname"], facts["os_version"], facts["uptime"], facts["interface_list"]) == ("leaf1", "SONiC.202405.0", 1234.56, ["Ethernet0"])
    peers = driver.get_bgp_neighbors()["global"]["peers"]
    assert peers["10.8.0.0"]["is_up"] is True and peers["10.8.0.0"]["address_family"]["ipv4"] == {
        "received_prefixes": 3,
        "accepted_prefixes": 3,
        "sent_prefixes": 5,
    }
    assert peers["10.8.0.0"]["remote_id"] == "10.0.0.9" and peers["10.8.0.0"]["uptime"] == 62
    assert peers["10.8.0.2"]["is_up"] is False and peers["10.8.0.2"]["uptime"] == -1
    assert driver.get_boot_images() == {"current": "SONiC-OS-202405.0", "next": "SONiC-OS-202405.0"}
    assert "hostname leaf1" in driver.get_config(retrieve="all")["startup"]


# Every read a getter makes, with the getter that makes it. Each answers more than the largest
# bound here: the driver must stop at its bound and say so, having taken in at most the bound (plus
# what SSH's window lets the switch send ahead).
READS = {
    sonic.SHOW_CONFIG_DB: ("get_facts", {}),
    sonic.SHOW_VERSION: ("get_facts", {}),
    "cat /proc/uptime": ("get_facts", {}),
    "hostname": ("get_facts", {sonic.SHOW_CONFIG_DB: json.dumps({"DEVICE_METADATA": {"localhost": {}}})}),
    sonic.VTYSH_VERSION: ("get_facts", {sonic.SHOW_VERSION: None}),
    sonic.SONIC_INSTALLER_LIST: ("get_boot_images", {}),
    sonic.VTYSH_BGP_SUMMARY: ("get_bgp_neighbors", {}),
    sonic.VTYSH_BGP_NEIGHBORS: ("get_bgp_neighbors", {}),
    sonic.VTYSH_RUNNING: ("get_config", {}),
    f"cat {sonic.STARTUP_CONFIG_DB}": ("get_config", {}),
    f"cat {sonic.FRR_CONF}": ("get_config", {}),
}
SSH_WINDOW_SLACK = 4 * MIB  # paramiko's default window is 2 MiB: what the switch may send unread


@pytest.mark.parametrize("read", READS)
def test_every_read_is_bounded(script, driver, read):
    getter, others = READS[read]
    for key, answer in others.items():
        if answer is None:
            del script[key]  # not there: `show version` of a switch without sonic-utilities
        else:
            script[key] = answer
    script[read] = beyond(sonic.MAX_ANSWER)
    with pytest.raises(CommandErrorException, match=r"answered more than (\d+) bytes") as refused:
        getattr(driver, getter)(**({"retrieve": "all"} if getter == "get_config" else {}))
    bound = int(re.search(r"answered more than (\d+) bytes", str(refused.value)).group(1))  # type: ignore[union-attr]
    assert bound <= sonic.MAX_ANSWER
    assert driver.switch.done[read].wait(60), "the switch kept sending"
    assert driver.switch.sent[read] <= bound + SSH_WINDOW_SLACK


def test_a_300_mb_config_db_is_not_taken_in(script, driver):
    """The issue's case: `show runningconfiguration all` answering 300 MB grew fabricgen by 568 MiB."""

    def huge() -> Iterator[bytes]:
        yield b'{"DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}, "PAD": "'
        for _ in range(300):
            yield b"x" * MIB
        yield b'"}'

    script[sonic.SHOW_CONFIG_DB] = huge()
    with pytest.raises(CommandErrorException, match=f"answered more than {sonic.MAX_ANSWER} bytes"):
        driver.get_facts()
    assert driver.switch.done[sonic.SHOW_CONFIG_DB].wait(60)
    assert driver.switch.sent[sonic.SHOW_CONFIG_DB] <= sonic.MAX_ANSWER + SSH_WINDOW_SLACK


def _summary(peers) -> str:
    return json.dumps({"default": {"ipv4Unicast": {"routerId": "10.0.0.1", "as": 64513, "peers": peers}}})


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        (_summary([]), "peers"),
        (_summary({"10.8.0.0": "Established"}), "10.8.0.0"),
        (_summary({"10.8.0.0": {"remoteAs": 64512, "state": "Established", "pfxRcd": "3"}}), "pfxRcd"),
        (_summary({"10.8.0.0": {"remoteAs": 64512, "state": "Established", "pfxRcd": float("nan")}}), "pfxRcd"),
        (_summary({"10.8.0.0": {"remoteAs": "64512", "state": "Established", "pfxRcd": 3}}), "remoteAs"),
        (_summary({"10.8.0.0": {"remoteAs": 64512, "state": ["Established"], "pfxRcd": 3}}), "state"),
        (_summary({"not an address": {"remoteAs": 64512, "state": "Established"}}), "not an address"),
        (json.dumps({"default": []}), "default"),
        (json.dumps(["default"]), "not a JSON object"),
    ],
    ids=[
        "peers-a-list",
        "peer-a-string",
        "pfxRcd-a-string",
        "pfxRcd-nan",
        "remoteAs-a-string",
        "state-a-list",
        "peer-not-an-address",
        "vrf-a-list",
        "not-an-object",
    ],
)
def test_frr_bgp_json_is_parsed_strictly(script, driver, summary, problem):
    script[sonic.VTYSH_BGP_SUMMARY] = summary
    with pytest.raises(CommandErrorException, match="show bgp vrf all summary json") as refused:
        driver.get_bgp_neighbors()
    assert problem in str(refused.value)


@pytest.mark.parametrize(
    ("neighbors", "problem"),
    [
        (json.dumps({"default": {"10.8.0.0": {"remoteRouterId": 7}}}), "remoteRouterId"),
        (json.dumps({"default": {"10.8.0.0": {"addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": "3"}}}}}), "acceptedPrefixCounter"),
        (json.dumps({"default": "none"}), "default"),
    ],
    ids=["router-id-a-number", "accepted-a-string", "vrf-a-string"],
)
def test_frr_bgp_neighbors_json_is_parsed_strictly(script, driver, neighbors, problem):
    script[sonic.VTYSH_BGP_NEIGHBORS] = neighbors
    with pytest.raises(CommandErrorException, match="show bgp vrf all neighbors json") as refused:
        driver.get_bgp_neighbors()
    assert problem in str(refused.value)


@pytest.mark.parametrize(
    ("key", "answer", "problem"),
    [
        ("cat /proc/uptime", "nan 1.0\n", "uptime"),
        ("cat /proc/uptime", "inf 1.0\n", "uptime"),
        ("cat /proc/uptime", "\n", "uptime"),
        (sonic.SHOW_CONFIG_DB, json.dumps({"DEVICE_METADATA": []}), "DEVICE_METADATA"),
        (sonic.SHOW_CONFIG_DB, json.dumps({"DEVICE_METADATA": {"localhost": {"hostname": 7}}}), "hostname"),
        (sonic.SHOW_CONFIG_DB, json.dumps({"PORT": ["Ethernet0"]}), "PORT"),
        (sonic.SHOW_CONFIG_DB, json.dumps(["not", "a", "config_db"]), "not a JSON object"),
    ],
    ids=["uptime-nan", "uptime-inf", "uptime-empty", "metadata-a-list", "hostname-a-number", "ports-a-list", "config-db-a-list"],
)
def test_facts_are_parsed_strictly(script, driver, key, answer, problem):
    script[key] = answer
    with pytest.raises(CommandErrorException) as refused:
        driver.get_facts()
    assert problem in str(refused.value)
