"""`fabricgen export netbox --push URL`: the URL, the connection and the token are handled as
input from outside. Only http and https URLs without a user name or password; every request has
a connect and read timeout (a NetBox that never answers stops the push, it does not hang it); the
token is never printed, not even when a server echoes it back.

The servers here are real HTTP servers on 127.0.0.1 started by each test (requests is the real
one): one that accepts and never answers, one that answers every request with an
error echoing the request's Authorization header.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fabricgen.compiler.pipeline import build as build_intent
from tests import cli_runner
from tests.conftest import REPO

TOKEN = "0123456789abcdef0123456789abcdef01234567"
pytest.importorskip("requests", reason="the netbox extra: pip install 'fabricgen[netbox]'")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    destination = tmp_path_factory.mktemp("netbox-push") / "small-32-gpu"
    build_intent(REPO / "intents" / "small-32-gpu.yaml", destination)
    return destination


def push(build: Path, tmp_path: Path, url: str, *options: str) -> cli_runner.Completed:
    return cli_runner.fabricgen("export", "netbox", build, "-o", tmp_path / "nb", "--push", url, *options, env={**os.environ, "NETBOX_TOKEN": TOKEN})


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http:// and https:// URLs"),
        ("javascript:alert(1)", "only http:// and https:// URLs"),
        ("ftp://netbox.example.net", "only http:// and https:// URLs"),
        ("netbox.example.net", "only http:// and https:// URLs"),
        ("https://", "names no host"),
        ("https://net box.example.net", "space or control character"),
        ("https://netbox.example.net:99999", "not a port"),
        ("https://netbox.example.net/?next=/x", "no query"),
        ("https://admin:s3cr3t-pass@netbox.example.net", "holds a user name or password"),
        ("https://admin@netbox.example.net", "holds a user name or password"),
        ("https://admin:s3cr3t-pass@net box.example.net", "'https://***@net box.example.net' holds a space"),
        ("https://netbox.example.net/" + "x" * 3000, "longer than 2,048 characters"),
    ],
)
def test_a_url_that_is_not_plain_http_or_https_is_exit_2_before_anything(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, expected: str):
    from fabricgen.export import netbox_push

    opened: list[str] = []
    monkeypatch.setattr(netbox_push, "Client", lambda *args, **kwargs: opened.append("api"))  # records whether a client was made; never called
    result = push(small, tmp_path, url)
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert opened == [] and not (tmp_path / "nb").exists()
    assert "s3cr3t-pass" not in result.stdout + result.stderr and "admin@" not in result.stdout + result.stderr


@pytest.mark.parametrize("timeout", ["0", "0.5", "601", "nan", "inf"])
def test_a_timeout_outside_1_to_600_seconds_is_exit_2(small: Path, tmp_path: Path, timeout: str):
    result = push(small, tmp_path, "http://127.0.0.1:9", "--timeout", timeout)
    assert result.returncode == 2 and "--timeout" in result.stderr and "seconds from 1 to 600" in result.stderr, result.stderr
    assert not (tmp_path / "nb").exists()


@pytest.fixture
def silent_server() -> Iterator[tuple[int, threading.Event]]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers: (port, set once a
    connection was accepted). Closed when the test ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = threading.Event()
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            held.append(connection)  # kept open, never read from or written to
            accepted.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], accepted
    done.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_netbox_that_never_answers_stops_the_push_at_the_read_timeout(small: Path, tmp_path: Path, silent_server: tuple[int, threading.Event]):
    # a process of its own: without a timeout it would hang forever; here the run is bounded
    # (120 s, far above the 1 s read timeout) so a regression fails instead of hanging the suite
    port, accepted = silent_server
    command = [sys.executable, "-m", "fabricgen", "export", "netbox", str(small), "-o", str(tmp_path / "nb")]
    command += ["--push", f"http://127.0.0.1:{port}", "--timeout", "1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "NETBOX_TOKEN": TOKEN}, check=False)
    assert accepted.is_set(), "the push never connected"
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"http://127.0.0.1:{port}: 0 objects created, 0 changed, 0 deleted, 0 unchanged, 1 failed" in result.stdout
    assert "did not answer within 1 s" in result.stdout and "stopped" in result.stdout
    assert TOKEN not in result.stdout + result.stderr
    assert (tmp_path / "nb" / "devices.csv").is_file()  # the files were written before the push


def test_every_request_goes_through_the_timeout(monkeypatch: pytest.MonkeyPatch):
    """The client's sessions have http and https adapters that put the timeout on every request,
    whatever the caller passes."""
    from fabricgen.export.netbox_push import _session

    session = _session(7.5)
    sent = []
    for scheme in ("http://", "https://"):
        adapter = session.get_adapter(scheme + "netbox.example.net")
        monkeypatch.setattr(type(adapter).__mro__[1], "send", lambda self, request, **kwargs: sent.append(kwargs["timeout"]))
        adapter.send(object(), timeout=None)
    assert sent == [(7.5, 7.5), (7.5, 7.5)]


class _JsonHandler(BaseHTTPRequestHandler):
    def answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler], **state: object) -> Iterator[ThreadingHTTPServer]:
    """A real HTTP server on 127.0.0.1 with `handler`, `state` as its attributes, until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    for name, value in state.items():
        setattr(server, name, value)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


class _EchoingHandler(_JsonHandler):
    """Answers every request 400 with a body that repeats the request's Authorization header."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.answer(400, f'{{"detail": "bad request from {self.headers.get("Authorization")}"}}'.encode())


def test_a_server_echoing_the_token_never_gets_it_printed(small: Path, tmp_path: Path):
    with serving(_EchoingHandler) as server:
        result = push(small, tmp_path, f"http://127.0.0.1:{server.server_address[1]}", "--timeout", "30")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bad request from Token <NETBOX_TOKEN>" in result.stdout  # NetBox's answer is shown, the token is not
    assert TOKEN not in result.stdout + result.stderr


class _DeadlockingHandler(_JsonHandler):
    """Stands in for NetBox's answer to a bulk write PostgreSQL aborted to break a deadlock (a real
    NetBox gave it to the push's concurrent device creates, but not on demand): 500 with
    PostgreSQL's message for the first `server.aborts` POSTs, then 201 with the objects."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts += 1  # type: ignore[attr-defined]
        if self.server.posts <= self.server.aborts:  # type: ignore[attr-defined]
            self.answer(500, b'{"error": "deadlock detected\\nDETAIL:  Process 1 waits for ShareLock on transaction 2", "exception": "DeadlockDetected"}')
        else:
            self.answer(201, b'[{"id": 1, "name": "s1"}]')


@pytest.mark.parametrize(("aborts", "posts", "created"), [(2, 3, True), (9, 5, False)])
def test_a_write_aborted_as_a_deadlock_is_sent_again_a_bounded_number_of_times(aborts: int, posts: int, created: bool):
    from fabricgen.export.netbox_push import Client, HttpError

    with serving(_DeadlockingHandler, posts=0, aborts=aborts) as server:
        client = Client(f"http://127.0.0.1:{server.server_address[1]}", TOKEN, timeout=30)
        if created:
            assert client.request("POST", "dcim/sites/", body=[{"name": "s1"}]) == [{"id": 1, "name": "s1"}]
        else:
            with pytest.raises(HttpError, match="deadlock detected"):
                client.request("POST", "dcim/sites/", body=[{"name": "s1"}])
    assert server.posts == posts  # type: ignore[attr-defined]
