"""A SONiC-like SSH host for driver tests, made from one lab switch's FRR.

sonic-utilities (`config`, `show`) cannot be installed outside SONiC, and there is no SONiC image
here, so the target is assembled from real parts plus small stand-ins:

- a dedicated `sshd -D` on 127.0.0.1:<free port> with its own host key, its own log and root
  login by a password generated per target (the host's sshd and users are not touched); the host
  key is pinned in `directory/known_hosts`, so drivers connect with host key checking on;
- sshd runs in a private mount namespace (`unshare --mount`) in which
  - /etc is an overlay whose writes land in `directory/etc-upper`: /etc/shadow there carries the
    test password's hash, /etc/sonic is `directory/sonic` (running and saved config_db,
    checkpoints, /etc/sonic/frr/frr.conf);
  - /run is a private tmpfs, with /run/frr bound to the lab switch's /var/run/frr/<namespace>, so
    a plain `vtysh` or `frr-reload.py` in an SSH session drives that switch's FRR (unix sockets
    work across network namespaces, so sshd itself needs no `ip netns exec`); /run/netns/<namespace>
    is bound in too (the state stand-ins read the switch's kernel with `ip netns exec`), and when
    the lab runs lldpd in the namespace its socket is bound to lldpctl's default /run/lldpd.socket,
    so a plain `lldpctl -f json` is the switch's real lldpd;
  - /usr/local/bin (first on sshd's default PATH) holds stand-ins for `config checkpoint NAME`,
    `config replace FILE`, `config rollback NAME`, `config save -y`,
    `show runningconfiguration all` and `sonic-installer list` (the image in
    `directory/control/image`), plus the read-only state the getters ask for
    (`show interfaces status|description`, `sonic-db-cli ... EVAL`: see STATE_STAND_IN); each
    appends its argv to `directory/record.jsonl` and changes the JSON files as SONiC would change
    CONFIG_DB.

The mount namespace lives exactly as long as sshd and its sessions: stopping them removes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
FRR_RUN = Path("/var/run/frr")
# where the lab's lldpd of a namespace listens (issue 20's shared interface:
# fabricgen.lab.runtime.lldpd_socket); lldpctl's default socket is /run/lldpd.socket (Debian's lldpd)
LLDPD_RUN = Path("/run/fabricgen-lldpd")
LLDPCTL_SOCKET = "/run/lldpd.socket"

# One stand-in for both commands: the program name says which. Only the subcommands the driver uses.
STAND_IN = r'''#!/usr/bin/python3
"""Stand-in for sonic-utilities' {program} (fabricgen tests): records argv, edits JSON files."""
import json, os, shutil, sys

RECORD, CONTROL = {record!r}, {control!r}
SONIC = "/etc/sonic"
RUNNING = SONIC + "/running_config_db.json"  # what redis' CONFIG_DB holds on a real switch
SAVED = SONIC + "/config_db.json"
CHECKPOINTS = SONIC + "/checkpoints"
program, args = os.path.basename(sys.argv[0]), sys.argv[1:]
with open(RECORD, "a") as record:
    record.write(json.dumps([program, *args]) + "\n")


def fail(message):
    print(f"{{program}}: {{message}}", file=sys.stderr)
    sys.exit(1)


if program == "sonic-installer":
    # sonic-utilities sonic_installer/main.py list_command: Current, Next, Available and the images
    if args != ["list"]:
        fail(f"the stand-in knows only `sonic-installer list`, not {{args}}")
    image = open(os.path.join(CONTROL, "image")).read().strip()
    print(f"Current: {{image}}\nNext: {{image}}\nAvailable: \n{{image}}")
    sys.exit(0)
if program == "show":
    if args in (["interfaces", "status"], ["interfaces", "description"]):
        state = "/usr/local/bin/fabricgen-sonic-state"  # recorded above already
        os.execve(state, [state, *args], {{**os.environ, "FABRICGEN_STAND_IN": "show"}})
    if args != ["runningconfiguration", "all"]:
        fail(f"the stand-in knows only `show runningconfiguration all`, not {{args}}")
    print(open(RUNNING).read())
    sys.exit(0)
verb = args[0] if args else ""
injected = os.path.join(CONTROL, "fail-" + verb)
if os.path.exists(injected):
    os.unlink(injected)
    fail(f"{{verb}} failed (failure injected by the test)")
if verb == "checkpoint" and len(args) == 2:
    os.makedirs(CHECKPOINTS, exist_ok=True)
    shutil.copyfile(RUNNING, f"{{CHECKPOINTS}}/{{args[1]}}.cp.json")
elif verb == "replace" and len(args) == 2:
    try:
        config = json.load(open(args[1]))
    except ValueError as exc:
        fail(f"{{args[1]}} is not JSON: {{exc}}")
    with open(RUNNING, "w") as running:
        json.dump(config, running, indent=4, sort_keys=True)
elif verb == "rollback" and len(args) == 2:
    checkpoint = f"{{CHECKPOINTS}}/{{args[1]}}.cp.json"
    if not os.path.exists(checkpoint):
        fail(f"no checkpoint {{args[1]}}")
    shutil.copyfile(checkpoint, RUNNING)
elif args == ["save", "-y"]:
    shutil.copyfile(RUNNING, SAVED)
else:
    fail(f"the stand-in does not know `config {{' '.join(args)}}`")
'''

# The read-only state SONiC keeps in redis and shows through sonic-utilities, made from the lab
# switch's kernel (`ip -j -s link` in its namespace) and the target's running config_db:
# - `show interfaces status` / `show interfaces description`: intfutil's tables (scripts/intfutil,
#   tabulate "simple", right-aligned): lanes, speed, FEC, alias and description from the PORT table,
#   MTU, admin state (the interface's UP flag) and oper state (LOWER_UP) from the kernel;
# - `sonic-db-cli COUNTERS_DB EVAL <the driver's name-map script> 0 MAP FIELD...`: COUNTERS_DB as
#   the Lua script would read it, answered as the JSON text the script returns. Port counters are
#   the kernel's: octets, packets, errors, drops (the kernel splits off multicast on receive only;
#   broadcast is 0). PFC frames are 0 and queues keep no watchdog or ECN counter: veths have no
#   PFC, no queues and no watchdog; a real switch's SAI keeps them;
# - `sonic-db-cli STATE_DB EVAL <the driver's table script> 0 'TRANSCEIVER_DOM_SENSOR|*'`: {} (no optics).
# Only the requests the driver makes are known; anything else fails loudly.
STATE_STAND_IN = r'''#!/usr/bin/python3
"""Stand-in for sonic-utilities' `show interfaces status|description` and sonic-db-cli (fabricgen tests)."""
import json, os, re, subprocess, sys

RECORD, CONTROL = "@RECORD@", "@CONTROL@"
program, args = os.environ.get("FABRICGEN_STAND_IN") or os.path.basename(sys.argv[0]), sys.argv[1:]
if program != "show":  # the `show` stand-in recorded it before handing over
    with open(RECORD, "a") as record:
        record.write(json.dumps([program, *args]) + "\n")


def fail(message):
    print(f"{program}: {message}", file=sys.stderr)
    sys.exit(1)


injected = os.path.join(CONTROL, "answer-" + program)
if os.path.exists(injected):  # the test's answer instead, once
    text = open(injected).read()
    os.unlink(injected)
    print(text)
    sys.exit(0)


def natural(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


ports = json.load(open(os.path.join(CONTROL, "ports.json")))  # build port -> kernel interface
namespace = open(os.path.join(CONTROL, "namespace")).read().strip()
config_db = json.load(open("/etc/sonic/running_config_db.json"))
port_table = config_db.get("PORT", {})
links = {link["ifname"]: link for link in json.loads(subprocess.run(
    ["ip", "netns", "exec", namespace, "ip", "-j", "-s", "link", "show"], capture_output=True, text=True, check=True).stdout)}


def kernel(port):
    return links.get(ports.get(port, ""))


def speed(mbps):  # scripts/intfutil port_speed_parse
    if not mbps.isdigit():
        return "N/A"
    value = int(mbps)
    return f"{value}M" if value < 1000 else f"{value / 1000:.1f}G" if value % 1000 >= 100 else f"{value / 1000:.0f}G"


def table(header, rows):  # tabulate(rows, header, tablefmt="simple", stralign="right")
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    line = lambda cells: "  ".join(str(cell).rjust(width) for cell, width in zip(cells, widths))
    print("\n".join([line(header), "  ".join("-" * width for width in widths), *map(line, rows)]))


def states(port):
    link, config = kernel(port), port_table[port]
    if link is None:
        return "down", config.get("admin_status", "down")
    flags = link.get("flags", [])
    admin = "up" if "UP" in flags else "down"
    return ("up" if admin == "up" and "LOWER_UP" in flags else "down"), admin


if program == "show":
    names = sorted(port_table, key=natural)
    if args == ["interfaces", "status"]:
        rows = []
        for port in names:
            config, link = port_table[port], kernel(port)
            oper, admin = states(port)
            mtu = str(link["mtu"]) if link else config.get("mtu", "N/A")
            rows.append((port, config.get("lanes", "N/A"), speed(config.get("speed", "")), mtu, config.get("fec", "N/A"),
                         config.get("alias", "N/A"), "routed", oper, admin, "N/A", "N/A"))
        table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"], rows)
    elif args == ["interfaces", "description"]:
        rows = [(port, *states(port), port_table[port].get("alias", "N/A"), port_table[port].get("description", "N/A")) for port in names]
        table(["Interface", "Oper", "Admin", "Alias", "Description"], rows)
    else:
        fail(f"the stand-in does not know `show {' '.join(args)}`")
    sys.exit(0)

# sonic-db-cli DB EVAL SCRIPT 0 ARGV...
if len(args) < 4 or args[1] != "EVAL" or args[3] != "0":
    fail(f"the stand-in knows only `sonic-db-cli DB EVAL SCRIPT 0 ...`, not {args[:2]}")
db, script, argv = args[0], args[2], args[4:]
if db == "COUNTERS_DB" and script.startswith("-- fabricgen: name-map counters") and argv:
    counters = {}
    if argv[0] == "COUNTERS_PORT_NAME_MAP":
        for port in port_table:
            stats = (kernel(port) or {}).get("stats64", {})
            rx, tx = stats.get("rx", {}), stats.get("tx", {})
            values = {
                "SAI_PORT_STAT_IF_IN_OCTETS": rx.get("bytes", 0), "SAI_PORT_STAT_IF_OUT_OCTETS": tx.get("bytes", 0),
                "SAI_PORT_STAT_IF_IN_UCAST_PKTS": rx.get("packets", 0) - rx.get("multicast", 0),
                "SAI_PORT_STAT_IF_IN_MULTICAST_PKTS": rx.get("multicast", 0), "SAI_PORT_STAT_IF_IN_BROADCAST_PKTS": 0,
                "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": tx.get("packets", 0), "SAI_PORT_STAT_IF_OUT_MULTICAST_PKTS": 0,
                "SAI_PORT_STAT_IF_OUT_BROADCAST_PKTS": 0,
                "SAI_PORT_STAT_IF_IN_ERRORS": rx.get("errors", 0), "SAI_PORT_STAT_IF_OUT_ERRORS": tx.get("errors", 0),
                "SAI_PORT_STAT_IF_IN_DISCARDS": rx.get("dropped", 0), "SAI_PORT_STAT_IF_OUT_DISCARDS": tx.get("dropped", 0),
            }
            values.update({f"SAI_PORT_STAT_PFC_{p}_{way}_PKTS": 0 for p in range(8) for way in ("RX", "TX")})
            counters[port] = {field: str(values[field]) for field in argv[1:] if field in values}
    elif argv[0] == "COUNTERS_QUEUE_NAME_MAP":
        counters = {f"{port}:{queue}": {} for port in port_table for queue in (3, 4)}
    else:
        fail(f"no name map {argv[0]}")
    print(json.dumps(counters))
elif db == "STATE_DB" and script.startswith("-- fabricgen: table by pattern") and argv == ["TRANSCEIVER_DOM_SENSOR|*"]:
    print("{}")
else:
    fail(f"the stand-in does not know this EVAL on {db}")
'''

SSHD_CONFIG = """\
Port {port}
ListenAddress 127.0.0.1
HostKey {directory}/ssh_host_ed25519_key
PidFile {directory}/sshd.pid
PermitRootLogin yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication no
UsePAM no
StrictModes no
PrintMotd no
Subsystem sftp internal-sftp
LogLevel VERBOSE
"""

# Runs inside the new mount namespace, then becomes sshd. /etc/sonic and /run/frr need mount points
# that exist: the overlay's upper dir provides /etc/sonic, the private /run gets /run/frr made.
MOUNTS = """\
set -e
mount -t overlay overlay -o lowerdir=/etc,upperdir={directory}/etc-upper,workdir={directory}/etc-work /etc
mount --bind {directory}/sonic /etc/sonic
mount --bind {frr_dir} {directory}/frr-run
mount --bind /run/netns/{namespace} {directory}/netns
if [ -S {lldpd_socket} ]; then mount --bind {lldpd_socket} {directory}/lldpd.socket; fi
mount -t tmpfs -o mode=755 fabricgen-target /run
mkdir -p /run/frr /run/sshd
mount --bind {directory}/frr-run /run/frr
mkdir -p /run/netns && touch /run/netns/{namespace} && mount --bind {directory}/netns /run/netns/{namespace}
if [ -S {directory}/lldpd.socket ]; then touch /run/lldpd.socket && mount --bind {directory}/lldpd.socket /run/lldpd.socket; fi
mount --bind {directory}/bin /usr/local/bin
exec {sshd} -D -f {directory}/sshd_config -E {directory}/sshd.log
"""


@dataclass
class SonicTarget:
    """One running target. `directory` holds everything of it (config, keys, log, record)."""

    host: str
    port: int
    username: str
    password: str
    namespace: str
    directory: Path
    process: subprocess.Popen

    @property
    def sonic_dir(self) -> Path:
        """What SSH sessions see as /etc/sonic."""
        return self.directory / "sonic"

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

    def detached(self) -> list[int]:
        """Processes in the target's mount namespace outside sshd's process group: what a session
        started with setsid (the driver's commit-confirm timer)."""
        try:
            mine = os.readlink(f"/proc/{self.process.pid}/ns/mnt")
        except OSError:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == self.process.pid:
                continue
            try:
                if os.readlink(entry / "ns" / "mnt") == mine and os.getpgid(int(entry.name)) != self.process.pid:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def timers(self) -> list[int]:
        """The driver's commit-confirm timers running here: processes of the namespace whose process
        group leader runs confirm-timer.sh (the script and its sleep). sshd's per-connection
        processes call setsid too, so a group of its own alone does not tell them apart."""
        found = []
        for pid in self.detached():
            try:
                leader = os.getpgid(pid)
                if b"confirm-timer" in Path(f"/proc/{leader}/cmdline").read_bytes():
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
        pid_file = self.sonic_dir / "fabricgen" / "confirm-timer.pid"
        wait_until(lambda: len(pid_file.read_text().split()) == 2 if pid_file.exists() else False, timeout, "the confirm timer's pid file")
        leader, sleep = map(int, pid_file.read_text().split())
        running = self.timers()
        assert leader in running and sleep in running, f"the pid file names no running confirm timer: {leader} {sleep}, timers {running}"
        os.kill(sleep, signal.SIGTERM)

    def stop(self) -> None:
        """sshd and every session it started (one process group), and anything a session detached
        into the target's mount namespace; the mount namespace goes with them."""
        for pid in self.detached():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            _kill_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _kill_group(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        _kill_group(self.process.pid, signal.SIGKILL)  # sessions left behind by a killed sshd


def wait_until(condition: Callable[[], object], timeout: float, what: str, interval: float = 0.1) -> None:
    """Polls `condition` until it holds. A wait on an event: `timeout` only bounds a failure
    (AssertionError naming `what`), it is no window a loaded machine has to hit."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(interval)


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


DEFAULT_IMAGE = "SONiC-OS-202411.0"  # what `sonic-installer list` says it runs (tests/lab/two-units.yaml pins it)


def start_sonic_target(
    namespace: str, directory: Path, config_db: dict, frr_conf: str, timeout: float = 10, image: str = DEFAULT_IMAGE, ports: dict[str, str] | None = None
) -> SonicTarget:
    """Start a target for the lab switch in `namespace` (its FRR must be running); `config_db` is
    its running and saved CONFIG_DB, `frr_conf` its /etc/sonic/frr/frr.conf, `image` what
    `sonic-installer list` reports, `ports` the build's port names -> the kernel interfaces in the
    namespace (the state stand-ins read them). When the lab runs lldpd there, its socket is
    lldpctl's default one inside the target. Stop it with .stop()."""
    frr_dir = FRR_RUN / namespace
    if not (frr_dir / "bgpd.vty").exists():
        raise RuntimeError(f"no FRR runs for {namespace} ({frr_dir}/bgpd.vty is missing)")
    directory.mkdir(parents=True, exist_ok=True)
    for sub in ("etc-upper/sonic", "etc-work", "sonic/frr", "sonic/checkpoints", "frr-run", "bin", "control"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(18)
    _write_shadow(directory / "etc-upper" / "shadow", password)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "ssh_host_ed25519_key")], check=True, capture_output=True)
    port = free_port()
    key_type, key = (directory / "ssh_host_ed25519_key.pub").read_text().split()[:2]
    (directory / "known_hosts").write_text(f"[127.0.0.1]:{port} {key_type} {key}\n")
    (directory / "sshd_config").write_text(SSHD_CONFIG.format(port=port, directory=directory))
    (directory / "control" / "image").write_text(image + "\n")
    (directory / "control" / "namespace").write_text(namespace + "\n")
    (directory / "control" / "ports.json").write_text(json.dumps(ports or {}))
    for mount_point in ("netns", "lldpd.socket"):
        (directory / mount_point).touch()
    for program in ("sonic-db-cli", "fabricgen-sonic-state"):
        stand_in = directory / "bin" / program
        stand_in.write_text(STATE_STAND_IN.replace("@RECORD@", str(directory / "record.jsonl")).replace("@CONTROL@", str(directory / "control")))
        stand_in.chmod(0o755)
    for program in ("config", "show", "sonic-installer"):
        stand_in = directory / "bin" / program
        stand_in.write_text(STAND_IN.format(program=program, record=str(directory / "record.jsonl"), control=str(directory / "control")))
        stand_in.chmod(0o755)
    text = json.dumps(config_db, indent=4, sort_keys=True)
    (directory / "sonic" / "running_config_db.json").write_text(text)
    (directory / "sonic" / "config_db.json").write_text(text)
    (directory / "sonic" / "frr" / "frr.conf").write_text(frr_conf)
    script = MOUNTS.format(directory=directory, frr_dir=frr_dir, sshd=SSHD, namespace=namespace, lldpd_socket=LLDPD_RUN / f"{namespace}.socket")
    with open(directory / "unshare.log", "w") as log:
        process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # own process group: stop() ends it all
        )
    target = SonicTarget("127.0.0.1", port, "root", password, namespace, directory, process)
    try:
        _wait_listening(port, process, directory, timeout)
    except BaseException:
        target.stop()
        raise
    return target


@contextmanager
def sonic_target(namespace: str, directory: Path, config_db: dict, frr_conf: str, ports: dict[str, str] | None = None) -> Iterator[SonicTarget]:
    """start_sonic_target as a context: stopped on the way out, whatever happened."""
    target = start_sonic_target(namespace, directory, config_db, frr_conf, ports=ports)
    try:
        yield target
    finally:
        target.stop()


def _write_shadow(path: Path, password: str) -> None:
    """The host's /etc/shadow with root's hash replaced by the test password's (given to openssl on
    stdin, never on a command line)."""
    hashed = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n", capture_output=True, text=True, check=True).stdout.strip()
    lines = []
    for line in Path("/etc/shadow").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == "root":
            fields[1] = hashed
        lines.append(":".join(fields))
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o640)
    shutil.copystat("/etc/shadow", path)  # same mode as the original


def _wait_listening(port: int, process: subprocess.Popen, directory: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = "".join((directory / name).read_text() for name in ("unshare.log", "sshd.log") if (directory / name).exists())
            raise RuntimeError(f"the SONiC test target's sshd exited ({process.returncode}): {output[-1500:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the SONiC test target's sshd did not listen on 127.0.0.1:{port} within {timeout} s")
