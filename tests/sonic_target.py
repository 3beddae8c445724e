"""A lab switch's management endpoint as the driver and push tests use it: the product's
(`fabricgen.lab.management`: sshd on 127.0.0.1 in a private mount namespace, vtysh and
frr-reload.py on the switch's FRR, the SONiC stand-ins of `fabricgen.nos.sonic.lab_endpoint`),
started for one switch of a lab that is up without `--management`, plus what only tests need:

- the endpoint's files read back (the stand-ins' record of every `config`/`show`/`sonic-db-cli`
  call, the running and saved config_db) and one-shot faults written into its `control/`;
- the driver's commit-confirm timer found among the namespace's processes, and made to run out
  (`expire_timer`), so a test sees the device revert by itself without waiting a window out;
- `wait_until`, a wait on an event with a bound for the failure only.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fabricgen.lab import management
from fabricgen.lab.runtime import lldpd_socket
from fabricgen.lab.state import LLDPD_RUN as LLDPD_RUN  # where the lab's lldpd of a namespace listens
from fabricgen.lab.state import frr_dir
from fabricgen.nos.sonic import lab_endpoint

SSHD = management.SSHD
free_port = management.free_port


@dataclass
class SonicTarget:
    """One running endpoint. `directory` holds everything of it (config, keys, log, record)."""

    host: str
    port: int
    username: str
    password: str
    namespace: str
    directory: Path
    pid: int  # sshd's, the leader of its process group
    marker: str  # what its marker file says (fabricgen.lab.management.MARKER)

    @property
    def sonic_dir(self) -> Path:
        """What SSH sessions see as /etc/sonic."""
        return self.directory / "config"

    @property
    def record(self) -> Path:
        return self.directory / "record.jsonl"

    @property
    def log(self) -> Path:
        return self.directory / "sshd.log"

    @property
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file listing this target's host key (and nothing else)."""
        return self.directory / "known_hosts"

    @property
    def optional_args(self) -> dict:
        """For SonicDriver: this port, FRR on the host itself (no bgp container), the host key
        checked against `known_hosts`."""
        return {"port": self.port, "frr_container": "", "lldp_container": "", "known_hosts": str(self.known_hosts)}

    def commands(self, program: str = "config") -> list[list[str]]:
        """Every recorded invocation of the stand-in `program` ("config", "show", "sonic-db-cli"), argv without it."""
        if not self.record.exists():
            return []
        calls = [json.loads(line) for line in self.record.read_text().splitlines()]
        return [call[1:] for call in calls if call[0] == program]

    def forget_commands(self) -> None:
        self.record.write_text("")

    def running_config_db(self) -> dict:
        return json.loads((self.sonic_dir / "running_config_db.json").read_text())

    def saved_config_db(self) -> dict:
        return json.loads((self.sonic_dir / "config_db.json").read_text())

    def answer_next(self, program: str, text: str) -> None:
        """The next call of the state stand-in `program` ("sonic-db-cli", "show") answers `text`, once."""
        (self.directory / "control" / f"answer-{program}").write_text(text)

    def fail_next(self, verb: str) -> None:
        """The next `config <verb>` fails (exit 1), once."""
        (self.directory / "control" / f"fail-{verb}").write_text("")

    def set_image(self, image: str) -> None:
        (self.directory / "control" / "image").write_text(image + "\n")

    def processes(self) -> list[int]:
        """Every process of the target's mount namespace (sshd, its sessions, a detached timer)."""
        return management.namespace_processes([self.marker]).get(self.marker, [])

    def timers(self) -> list[int]:
        """The driver's commit-confirm timers running here: processes of the namespace whose process
        group leader runs confirm-timer.sh (the script and its sleep). sshd's per-connection
        processes call setsid too, so a group of its own alone does not tell them apart."""
        found = []
        for pid in self.processes():
            try:
                leader = os.getpgid(pid)
                if leader != self.pid and b"confirm-timer" in Path(f"/proc/{leader}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        return found

    def expire_timer(self, timeout: float = 60) -> None:
        """The pending commit's confirm timer fires now, as its `sleep` running out would: its
        sleep (the second pid of the pid file the driver's timer script writes) ends, and the
        script goes on to restore the checkpoint. A test gives the commit a long confirm window,
        so a loaded machine cannot let it run out before the test acts, and still sees the
        device revert by itself without waiting the window out."""
        expire_timer(self.sonic_dir, self.timers, timeout)

    def stop(self) -> None:
        """sshd, every session it started and anything a session detached into the target's mount
        namespace; the namespace goes with them."""
        management.stop_endpoints([self.marker])


def expire_timer(sonic_dir: Path, timers: Callable[[], list[int]], timeout: float = 60) -> None:
    """Ends the sleep of the confirm timer whose pid file is under `sonic_dir` (what SSH sessions
    see as /etc/sonic); `timers` lists the timer processes running there."""
    pid_file = sonic_dir / "fabricgen" / "confirm-timer.pid"
    wait_until(lambda: len(pid_file.read_text().split()) == 2 if pid_file.exists() else False, timeout, "the confirm timer's pid file")
    leader, sleep = map(int, pid_file.read_text().split())
    running = timers()
    assert leader in running and sleep in running, f"the pid file names no running confirm timer: {leader} {sleep}, timers {running}"
    os.kill(sleep, signal.SIGTERM)


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 0.1) -> None:
    """Polls `condition` until it holds. A wait on an event: `timeout` only bounds a failure
    (AssertionError naming `what`), it is no window a loaded machine has to hit."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(interval)


DEFAULT_IMAGE = "SONiC-OS-202411.0"  # what `sonic-installer list` says it runs (tests/lab/two-units.yaml pins it)


def start_sonic_target(
    namespace: str, directory: Path, config_db: dict, frr_conf: str, timeout: float = 10, image: str = DEFAULT_IMAGE, ports: dict[str, str] | None = None
) -> SonicTarget:
    """The product's endpoint for the lab switch in `namespace` (its FRR must be running), with a
    password of its own; `config_db` is its running and saved CONFIG_DB, `frr_conf` its
    /etc/sonic/frr/frr.conf, `image` what `sonic-installer list` reports, `ports` the build's port
    names -> the kernel interfaces in the namespace. Its host key alone in `directory/known_hosts`.
    Stop it with .stop()."""
    password = secrets.token_urlsafe(18)
    marker = f"test-{secrets.token_hex(6)}"
    try:
        endpoint = management.start_endpoint(
            namespace,
            namespace,
            directory,
            marker,
            port=free_port(),
            root_hash=management.password_hash(password),
            nos="sonic",
            config_files=lab_endpoint.config_files({"config_db.json": json.dumps(config_db).encode()}, frr_conf),
            ports=ports or {},
            image=image,
            frr_dir=frr_dir(namespace),
            lldpd_socket=lldpd_socket(namespace),
            timeout=timeout,
        )
    except BaseException:
        management.stop_endpoints([marker])
        raise
    (directory / "known_hosts").write_text(endpoint.host_key_line)
    return SonicTarget(endpoint.host, endpoint.port, management.USERNAME, password, namespace, directory, endpoint.pid, marker)


@contextmanager
def sonic_target(namespace: str, directory: Path, config_db: dict, frr_conf: str, ports: dict[str, str] | None = None) -> Iterator[SonicTarget]:
    """start_sonic_target as a context: stopped on the way out, whatever happened."""
    target = start_sonic_target(namespace, directory, config_db, frr_conf, ports=ports)
    try:
        yield target
    finally:
        target.stop()
