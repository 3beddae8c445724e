"""The live NetBox harness (tests/netbox_server.py): the release it serves, a token that writes,
reset() to empty, 127.0.0.1 only, nothing left behind when a test fails inside it, and what a
killed test run left behind stopped by the next."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pynetbox
import pytest

from tests import netbox_server
from tests.netbox_server import start_netbox, unavailable, wait_for_setup


class Failed(Exception):
    """What the test raises inside the NetBox, as a failing test would."""


def listeners(port: int) -> set[str]:
    """The local addresses of TCP sockets listening on port (/proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            next(handle)
            for line in handle:
                fields = line.split()
                address, hex_port = fields[1].rsplit(":", 1)
                if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    found.add(address)
    return found


def processes_naming(text: str) -> list[int]:
    """The processes whose command line holds text."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
def test_a_netbox_of_its_own_serves_the_release_writes_resets_and_leaves_nothing_behind() -> None:
    wait_for_setup()  # scripts/test.sh's install beside the tests: this test needs it as the fixture does
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with pytest.raises(Failed), start_netbox() as server:
        directory, pids = server.directory, server.pids
        assert server.version == netbox_server.VERSION == "4.7.3"
        api = pynetbox.api(server.url, token=server.token)
        status = api.status()
        assert status["netbox-version"] == "4.7.3" and status["python-version"].startswith("3.13")

        site = api.dcim.sites.create(name="fabricgen harness", slug="fabricgen-harness")
        assert api.dcim.sites.get(slug="fabricgen-harness").id == site.id
        assert site.delete() and api.dcim.sites.count() == 0

        api.dcim.sites.create(name="left over", slug="left-over")
        server.reset()
        assert api.dcim.sites.count() == 0  # empty again, and the token still works

        with pytest.raises(pynetbox.RequestError) as refused:
            pynetbox.api(server.url, token=server.token[:-1] + "x").dcim.sites.count()
        assert refused.value.req.status_code == 403

        port = int(server.url.rsplit(":", 1)[1])
        assert listeners(port) == {"0100007F"}  # gunicorn on 127.0.0.1 only
        assert listeners(server.redis_port) == {"0100007F"}
        assert processes_naming(directory.name)  # PostgreSQL and gunicorn, found by their directory
        raise Failed
    assert not directory.exists()
    assert processes_naming(directory.name) == []
    for name, pid in pids.items():
        assert not os.path.exists(f"/proc/{pid}"), f"{name} ({pid}) still runs"


def test_a_netbox_whose_test_run_was_killed_is_stopped_and_removed_by_the_next(tmp_path: Path) -> None:
    """sweep_orphans on real processes: a killed owner's NetBox goes, a running owner's stays."""
    owner = subprocess.Popen(["true"])
    owner.wait()
    orphan, in_use = tmp_path / "netbox-orphan", tmp_path / "netbox-in-use"
    for directory, owner_pid in ((orphan, owner.pid), (in_use, os.getpid())):
        (directory / "pgdata").mkdir(parents=True)
        (directory / "owner").write_text(f"{owner_pid}\n")
    left = subprocess.Popen(["sleep", "600"], cwd=orphan / "pgdata")  # as PostgreSQL works in its data directory
    kept = subprocess.Popen(["sleep", "600"], cwd=in_use)
    try:
        netbox_server.sweep_orphans(tmp_path)
        assert left.wait(timeout=60) == -signal.SIGKILL
        assert not orphan.exists()
        assert in_use.exists() and kept.poll() is None
    finally:
        for process in (left, kept):
            process.kill()
            process.wait()
