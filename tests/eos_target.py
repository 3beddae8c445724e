"""A recorded stand-in for an Arista switch's eAPI: an EOS switch cannot run here.

`EapiStandIn` is an HTTPS JSON-RPC server on 127.0.0.1 (its certificate signed by a CA the test
makes: `TestCa`; clients verify it) that answers eAPI's `runCmds` (Basic authentication, `enable`
first, json or text format, one result per command, a JSON-RPC error with the outputs so far at
the first command it refuses) the way the EOS User Manual and Command API Guide describe, with
the answers recorded in tests/data/eos/answers.json (written from the documented shapes, not
captured from a switch). It keeps the state configuration sessions need:

- a running and a startup config (statements, as NAPALM's eos driver sends them: stripped lines),
  files on flash (`copy startup-config flash:rollback-0`, `configure replace flash:rollback-0`);
- sessions: `configure session NAME` (a copy of the running config), `rollback clean-config`,
  config lines, `end`; `show session-config named NAME diffs`; `configure session NAME commit`;
  `configure session NAME abort`; `show configuration sessions [detail]` (EOS 4.32's form);
- the commit timer: `configure session NAME commit timer hh:mm:ss` applies the session and keeps
  the config it replaced; `configure session NAME commit` before it expires confirms, `abort`
  restores; when it EXPIRES the stand-in restores the previous config by itself. Time is the
  stand-in's own uptime, moved only by the test (`advance`), so expiry is an event the test
  causes and then checks (`timer_expired`), never a race with a short real timer;
- BGP: every neighbor address under `router bgp` of the running config is a peer, Established
  unless `bgp_up` is False.

Switches: `answers` (show commands answered otherwise than recorded), `refuse` (a pattern: config lines it rejects as invalid input), `lock_out_after_commit`
(after a commit with a timer it drops every connection, as a config that locks out the management
plane would, until the timer restores the old config), `hostile` (every answer replaced by one
of HOSTILE: over the client's bound, not JSON, not JSON-RPC, too few results, nested too deep).
"""

from __future__ import annotations

import base64
import copy
import datetime
import difflib
import http.server
import ipaddress
import json
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ANSWERS = Path(__file__).parent / "data" / "eos" / "answers.json"
RECORDED: dict = {key: value for key, value in json.loads(ANSWERS.read_text()).items() if key != "about"}
HOSTILE = ("huge", "not-json", "not-json-rpc", "too-few-results", "deep")
HUGE_BYTES = 40 * 1024 * 1024  # over the client's MAX_ANSWER (32 MiB)
_SESSION = re.compile(r"configure session (\S+)(?: (commit|abort)(?: timer (\d\d):(\d\d):(\d\d))?)?$")
_DIFFS = re.compile(r"show session-config named (\S+) diffs$")
_NEIGHBOR = re.compile(r"neighbor (\S+) ")


class TestCa:
    """A certificate authority made for one test, and server certificates it signs."""

    __test__ = False  # a helper, not a pytest class

    def __init__(self, directory: Path, name: str = "fabricgen test CA") -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        self.bundle = directory / "ca.pem"
        self.bundle.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def server_files(self, host: str = "127.0.0.1") -> tuple[Path, Path]:
        """A certificate for `host` (an IP address SAN) and its key, as PEM files."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        stem = f"server-{x509.random_serial_number()}"
        cert_path, key_path = self.directory / f"{stem}.pem", self.directory / f"{stem}.key"
        cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        return cert_path, key_path


@dataclass
class Session:
    lines: list[str]
    state: str = "pending"  # pending, committed, aborted (the states `show configuration sessions` shows)
    completed: float = 0.0


@dataclass
class Timer:
    session: str
    expires: float  # the stand-in's uptime at which it restores `previous`
    previous: list[str]


@dataclass
class EapiStandIn:
    """One switch's eAPI on 127.0.0.1:<port>; see the module docstring."""

    hostname: str
    certificate: Path
    key: Path
    username: str
    password: str
    running: list[str] = field(default_factory=list)
    asn: int = 65001
    router_id: str = "10.0.0.1"
    bgp_up: bool = True
    refuse: re.Pattern[str] | None = None
    lock_out_after_commit: bool = False
    hostile: str | None = None
    answers: dict = field(default_factory=dict)  # show command -> answer, in place of the recorded one

    def __post_init__(self) -> None:
        self.startup = list(self.running)
        self.flash: dict[str, list[str]] = {}
        self.sessions: dict[str, Session] = {}
        self.timer: Timer | None = None
        self.uptime = 1000.0
        self.locked_out = False
        self.lock = threading.Lock()
        self.timer_started = threading.Event()
        self.timer_expired = threading.Event()
        self.requests: list[list] = []  # the commands of every authenticated request, in order
        self.received: list[float] = []  # when each of them arrived (time.monotonic(): one clock for every stand-in)
        self.handshakes = 0  # TLS handshakes completed (a client that refused the certificate completes none)
        self.unauthorized = 0
        self.server = self._serve()
        self.port = self.server.server_address[1]

    # --- the test's controls --------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Move the switch's clock; a commit timer that runs out restores the previous config."""
        with self.lock:
            self.uptime += seconds
            if self.timer is not None and self.uptime >= self.timer.expires:
                self.running = self.timer.previous
                self.sessions[self.timer.session].state = "aborted"
                self.timer = None
                self.locked_out = False  # the old config lets the management plane in again
                self.timer_expired.set()

    def first(self, pattern: str) -> float:
        """When the first request with a command matching `pattern` arrived."""
        return next(at for at, request in zip(self.received, self.requests, strict=True) if any(re.fullmatch(pattern, _text(c)) for c in request))

    def commands(self) -> list[str]:
        """Every command received, flattened (a multi-line command as its first line)."""
        return [_text(command) for request in self.requests for command in request]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- eAPI -----------------------------------------------------------------------------------

    def run(self, commands: list, encoding: str) -> tuple[list[dict], dict | None]:
        """The outputs of `commands` up to the first refused one, and that one's error."""
        outputs: list[dict] = []
        session: str | None = None
        with self.lock:
            for index, command in enumerate(commands):
                text = command if isinstance(command, str) else command.get("cmd", "")
                if isinstance(command, dict) and "input" in command:
                    text = f"{text}\n{command['input']}"
                try:
                    answer, session = self._one(text.strip(), session, encoding)
                except CommandRefused as refused:
                    outputs.append({"errors": [refused.reason]})
                    return outputs, {"code": 1002, "message": f"CLI command {index + 1} of {len(commands)} '{text.splitlines()[0]}' failed: invalid command"}
                outputs.append(answer)
        return outputs, None

    def _one(self, command: str, session: str | None, encoding: str) -> tuple[dict, str | None]:
        text = encoding == "text"
        if session is not None:  # inside `configure session NAME`: config lines until `end`
            if command == "end":
                return ({"output": ""} if text else {}), None
            if command == "rollback clean-config":
                self.sessions[session].lines = []
            elif self.refuse is not None and self.refuse.search(command):
                raise CommandRefused("% Invalid input")
            else:
                self.sessions[session].lines.append(command)
            return ({"output": ""} if text else {}), session
        command = " ".join(command.split())  # EOS's parser takes any run of spaces between words (NAPALM asks "show lldp neighbors  detail")
        if command == "enable":
            return ({"output": ""} if text else {}), None
        match = _SESSION.match(command)
        if match:
            return self._session(match), (match.group(1) if match.group(2) is None else None)
        match = _DIFFS.match(command)
        if match:
            return {"output": self._diffs(match.group(1))}, None
        if command == "copy startup-config flash:rollback-0":
            self.flash["rollback-0"] = list(self.startup)
            return {"output": "Copy completed successfully.\n"}, None
        if command == "write memory":
            self.startup = list(self.running)
            return {"output": "Copy completed successfully.\n"}, None
        if command == "configure replace flash:rollback-0":
            self.running = list(self.flash.get("rollback-0", []))
            return {"output": ""}, None
        if command == "show running-config":
            return {"output": self._running_text()}, None
        answer = self._show(command)
        if answer is None:
            raise CommandRefused("% Invalid input")
        return ({"output": json.dumps(answer)} if text else answer), None

    def _session(self, match: re.Match[str]) -> dict:
        name, verb = match.group(1), match.group(2)
        if verb is None:  # enter (or create) the session: a copy of the running config
            self.sessions.setdefault(name, Session(list(self.running)))
            return {}
        if name not in self.sessions:
            raise CommandRefused(f"% Session {name} does not exist")
        current = self.sessions[name]
        if verb == "abort":
            if self.timer is not None and self.timer.session == name:  # abort of a pending commit: roll back
                self.running, self.timer = self.timer.previous, None
            current.state = "aborted"
            return {"output": ""}
        if match.group(3) is not None:  # commit timer hh:mm:ss
            seconds = int(match.group(3)) * 3600 + int(match.group(4)) * 60 + int(match.group(5))
            if seconds == 0:
                raise CommandRefused("% Invalid timer")
            self.timer = Timer(name, self.uptime + seconds, list(self.running))
            self.running = list(current.lines)
            current.state, current.completed = "committed", self.uptime
            self.timer_started.set()
            if self.lock_out_after_commit:
                self.locked_out = True
            return {"output": ""}
        if self.timer is not None and self.timer.session == name:  # the confirming commit
            self.timer = None
        else:
            self.running = list(current.lines)
        current.state, current.completed = "committed", self.uptime
        return {"output": ""}

    def _diffs(self, name: str) -> str:
        if name not in self.sessions:
            raise CommandRefused(f"% Session {name} does not exist")
        lines = difflib.unified_diff(self.running, self.sessions[name].lines, "system:/running-config", f"session:/{name}-session-config", lineterm="", n=1)
        return "\n".join(line for line in lines if not line.startswith("@@")) + "\n"

    def _running_text(self) -> str:
        version = RECORDED["show version"]
        head = [
            "! Command: show running-config",
            f"! device: {self.hostname} ({version['modelName']}, EOS-{version['version']})",
            "!",
            f"! boot system {RECORDED['show boot-config']['softwareImage']}",
            "!",
        ]
        return "\n".join([*head, *self.running, "end"]) + "\n"

    def _show(self, command: str) -> dict | None:
        if command in ("show configuration sessions", "show configuration sessions detail"):
            answer = copy.deepcopy(RECORDED["show configuration sessions"])
            answer["sessions"] = {
                name: copy.deepcopy(RECORDED["session"]) | {"state": s.state, "completedTime": s.completed, "commitUser": self.username}
                for name, s in self.sessions.items()
                if s.state != "aborted"
            }
            if self.timer is not None:  # EOS 4.32: only while a commit timer runs
                answer |= {"commitTimerSessionName": self.timer.session, "commitTimerExpireTime": self.timer.expires}
            return answer
        if command == "show version":
            return copy.deepcopy(RECORDED["show version"]) | {"uptime": self.uptime, "serialNumber": f"JPE{abs(hash(self.hostname)) % 10**8:08d}"}
        if command == "show hostname":
            return {"hostname": self.hostname, "fqdn": self.hostname}
        if command == "show ip bgp summary vrf all":
            answer = copy.deepcopy(RECORDED[command])
            vrf = answer["vrfs"]["default"]
            vrf |= {"routerId": self.router_id, "asn": str(self.asn)}
            vrf["peers"] = {peer: copy.deepcopy(RECORDED["summary peer"]) | {"asn": str(self.asn + 1), "peerState": self._state()} for peer in self._peers()}
            return answer
        if command == "show ipv6 bgp summary vrf all":
            answer = copy.deepcopy(RECORDED[command])
            answer["vrfs"]["default"] |= {"routerId": self.router_id, "asn": str(self.asn)}
            return answer
        if command == "show ip bgp neighbors vrf all":
            answer = copy.deepcopy(RECORDED[command])
            answer["vrfs"]["default"]["peerList"] = [
                copy.deepcopy(RECORDED["neighbor"])
                | {"peerAddress": peer, "asn": str(self.asn + 1), "localAsn": str(self.asn), "routerId": "10.0.0.9", "state": self._state()}
                | ({} if self.bgp_up else {"idleReason": "Connection refused"})
                for peer in self._peers()
            ]
            return answer
        if command in self.answers:
            return copy.deepcopy(self.answers[command])
        if command in RECORDED and command.startswith("show "):
            return copy.deepcopy(RECORDED[command])
        return None

    def _state(self) -> str:
        return "Established" if self.bgp_up else "Active"

    def _peers(self) -> list[str]:
        """The neighbor addresses of `router bgp` in the running config (stripped lines)."""
        peers, in_bgp = [], False
        for line in self.running:
            if line.startswith("router bgp "):
                in_bgp = True
            elif in_bgp and (match := _NEIGHBOR.match(line)):
                try:
                    ipaddress.ip_address(match.group(1))
                except ValueError:
                    continue
                if match.group(1) not in peers:
                    peers.append(match.group(1))
        return peers

    # --- HTTPS ----------------------------------------------------------------------------------

    def _serve(self) -> http.server.ThreadingHTTPServer:
        switch = self
        expected = "Basic " + base64.b64encode(f"{self.username}:{self.password}".encode()).decode()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(min(length, 64 << 20))
                if switch.locked_out:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if self.path != "/command-api" or self.headers.get("Authorization") != expected:
                    switch.unauthorized += 1
                    self._send(401, b'{"error": "Unauthorized"}', "Unauthorized")
                    return
                request = json.loads(body)
                commands, encoding = request["params"]["cmds"], request["params"].get("format", "json")
                switch.requests.append(commands)
                switch.received.append(time.monotonic())
                if switch.hostile is not None:
                    self._hostile(switch.hostile, request["id"], len(commands))
                    return
                outputs, error = switch.run(commands, encoding)
                answer = {"jsonrpc": "2.0", "id": request["id"]}
                answer |= {"error": error | {"data": outputs}} if error is not None else {"result": outputs}
                self._send(200, json.dumps(answer).encode())

            def _send(self, status: int, body: bytes, reason: str | None = None) -> None:
                self.send_response(status, reason)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _hostile(self, kind: str, request_id: object, commands: int) -> None:
                if kind == "huge":
                    self.send_response(200)
                    self.send_header("Content-Length", str(HUGE_BYTES))
                    self.end_headers()
                    chunk = b" " * (1 << 20)
                    try:
                        for _ in range(HUGE_BYTES >> 20):
                            self.wfile.write(chunk)
                    except OSError:  # the client stopped reading at its bound
                        self.close_connection = True
                    return
                bodies = {
                    "not-json": b'{"jsonrpc": "2.0", "result": [{"modelName": ',
                    "not-json-rpc": b'{"hello": "world"}',
                    "too-few-results": json.dumps({"jsonrpc": "2.0", "id": request_id, "result": [{}] * max(0, commands - 1)}).encode(),
                    "deep": b"[" * 200_000 + b"]" * 200_000,
                }
                self._send(200, bodies[kind])

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self):
                connection, address = super().get_request()
                switch.handshakes += 1  # accept() on the TLS socket returned: the handshake is done
                return connection, address

            def handle_error(self, request, client_address):
                pass  # a client that hung up mid-answer (the huge one) is no test failure

        server = Server(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate, self.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        # the loop looks for shutdown() this often: close() waits for it, not for anything the tests check
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return server


def _text(command: str | dict) -> str:
    return command if isinstance(command, str) else command.get("cmd", "")


class CommandRefused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
