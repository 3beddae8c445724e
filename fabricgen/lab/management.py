"""Management endpoints for a lab's SONiC switches: `fabricgen push` and `verify` rehearsed on the lab.

`lab up --management` gives every SONiC switch of the lab an SSH server on the host's loopback,
127.0.0.1 and a port of its own, that answers what fabricgen's SONiC driver sends
(fabricgen/nos/sonic/driver.py) from that switch's real daemons:

- a dedicated `sshd -D` (the host's sshd and users are untouched) with its own ed25519 host key,
  root login with the lab's password (one per lab, `password_file`), no public keys;
- it runs in a private mount namespace and a UTS namespace whose host name is the switch's
  (`unshare --mount --uts --propagation private`: nothing it mounts or names reaches the host) in which
  - /etc is an overlay whose writes land in the endpoint's directory: /etc/shadow there carries
    the lab password's hash for root, the NOS's config directory (/etc/sonic) is the endpoint's `config/` (running and saved
    config_db, checkpoints, /etc/sonic/frr/frr.conf, the driver's commit-confirm state);
  - /run is a private tmpfs with /run/frr bound to the switch's FRR run directory, so a plain
    `vtysh` or `frr-reload.py` drives the switch's running FRR (Unix sockets work across network
    namespaces); /run/netns/<namespace> is bound in for the state answers, and lldpctl's default
    socket /run/lldpd.socket links to the switch's lldpd socket in the lab's lldpd directory,
    bound in whole at its own path (a device restored after `lab fail --device` gets a new
    socket; Debian's AppArmor profile of lldpcli refuses a socket under another path), so
    `lldpctl -f json` is its real lldpd;
  - /usr/local/bin holds the stand-ins for what only SONiC has (the NOS package's LAB_ENDPOINT part, fabricgen/nos/sonic/lab_endpoint.py);
  - the endpoint's directory is seen at ENDPOINT_MOUNT, with a marker file naming the lab and the
    switch: that is how `down` finds the namespace's processes, also after a crash;
  - the login's home directory (root's, from the host's passwd) is the endpoint's empty `home/`:
    the switch's shell reads no dotfile of the host's root (bash reads ~/.bashrc for every
    command sshd runs: GNU Bash manual, "Bash Startup Files", invoked by sshd; a host's may start
    tools, 80 ms of CPU per command on the test machine, a dozen commands per device and verify),
    and vtysh keeps its history there, not in the host's.
- The driver's commit-confirm timer (setsid, `sh /etc/sonic/fabricgen/confirm-timer.sh`) runs in
  that namespace too: the device reverts an unconfirmed commit by itself, as on a switch.

The address is loopback only: the lab's rule that the host's own network namespace gets no link,
address or route stays. NX-OS and EOS switches run an FRR routing twin in the lab, not their NOS:
they get no endpoint (`refusal`).

Everything is named from the lab id and the checked plan (directories, markers); the state file
records the endpoints before they start (write-ahead), and `stop_endpoints` ends every process of
every namespace whose marker names the lab.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fabricgen.basics.errors import LabError, Problem
from fabricgen.lab.keys import private_directory, write_private
from fabricgen.nos.interface import plugin

ENDPOINT_MOUNT = "/etc/fabricgen-endpoint"  # where the endpoint sees its own directory

SSHD = Path("/usr/sbin/sshd")
HOST = "127.0.0.1"
USERNAME = "root"  # the endpoint's login; the NOS's driver then needs no sudo
PASSWORD_BYTES = 18  # token_urlsafe(18): 24 characters, 144 random bits
MARKER = "endpoint"  # file in the endpoint's directory: "<lab id> <device>"
START_TIMEOUT = 20.0  # seconds for sshd to listen; a bound on a failure, not a window

SSHD_CONFIG = """\
# fabricgen lab management endpoint
Port {port}
ListenAddress {host}
HostKey {mount}/ssh_host_ed25519_key
PidFile {mount}/sshd.pid
PermitRootLogin yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication no
AuthorizedKeysFile none
UsePAM no
StrictModes no
PrintMotd no
Subsystem sftp internal-sftp
LogLevel VERBOSE
"""

# Runs inside the new mount namespace, then becomes sshd. The endpoint's directory is bound at
# ENDPOINT_MOUNT first: it may itself be under /run (the lab's state), which the tmpfs then hides.
MOUNTS = """\
set -e
hostname {hostname}
mount -t overlay overlay -o lowerdir=/etc,upperdir={directory}/etc-upper,workdir={directory}/etc-work /etc
mkdir -p {mount}
mount --bind {directory} {mount}
mount --bind {mount}/config {config_dir}
mount --bind {frr_dir} {mount}/frr-run
mount --bind /run/netns/{namespace} {mount}/netns
mount --bind {lldpd_run} {mount}/lldpd-run
mount --bind {mount}/home {home}
mount -t tmpfs -o mode=755 fabricgen-endpoint /run
mkdir -p /run/frr /run/sshd /run/netns
mkdir -p {lldpd_run}
mount --bind {mount}/frr-run /run/frr
touch /run/netns/{namespace} && mount --bind {mount}/netns /run/netns/{namespace}
mount --bind {mount}/lldpd-run {lldpd_run}
ln -s {lldpd_run}/{lldpd_socket} /run/lldpd.socket
mount --bind {mount}/bin /usr/local/bin
exec {sshd} -D -f {mount}/sshd_config -E {mount}/sshd.log
"""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One running endpoint: sshd's pid (its process group too), where it listens, its files."""

    device: str
    port: int
    directory: Path
    pid: int
    host: str = HOST

    @property
    def host_key_line(self) -> str:
        """This endpoint's line of an OpenSSH known_hosts file."""
        key_type, key = (self.directory / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        return f"[{self.host}]:{self.port} {key_type} {key}\n"


def require_tools() -> None:
    missing = [str(tool) for tool in (SSHD,) if not tool.exists()]
    missing += [tool for tool in ("unshare", "ssh-keygen", "openssl") if shutil.which(tool) is None]
    if missing:
        raise LabError(Problem(f"--management needs: {', '.join(missing)}", hint="install Debian's openssh-server, openssh-client, util-linux and openssl"))


def new_password() -> str:
    return secrets.token_urlsafe(PASSWORD_BYTES)


def password_hash(password: str) -> str:
    """A SHA-512 crypt hash (openssl passwd -6), the password given on stdin, never on a command line."""
    result = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password + "\n", capture_output=True, text=True, check=False, timeout=30)
    if result.returncode != 0:
        raise LabError(Problem(f"openssl passwd failed: {result.stderr.strip()[:300]}"))
    return result.stdout.strip()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports on 127.0.0.1 that nothing listens on now: every probe stays bound
    until all are chosen, so the kernel cannot hand out one twice."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind((HOST, 0))
        return [probe.getsockname()[1] for probe in probes]


def start_endpoint(
    device: str,
    namespace: str,
    directory: Path,
    marker: str,
    *,
    port: int,
    root_hash: str,
    nos: str,
    config_files: dict[str, str],
    ports: dict[str, str],
    image: str | None = None,
    frr_dir: Path,
    lldpd_socket: Path,
    timeout: float = START_TIMEOUT,
) -> Endpoint:
    """Start the endpoint of the switch `device` whose FRR runs in `namespace` (run directory
    `frr_dir`; its lldpd at `lldpd_socket` when it runs one). `directory` (created, 0700) receives
    everything of it; `marker` is what its marker file says (`stop_endpoints` looks for it);
    `nos` names the NOS package whose LAB_ENDPOINT part (`parts`) gives the programs only that NOS
    has and the directory of its config, `config_files` that directory's files (path inside it ->
    text: the NOS part's `config_files`); `ports` the build's port names -> the kernel interfaces in
    `namespace`, `image` the image the build pins (else the NOS part's default). A LabError when
    sshd does not listen; the caller stops what was started."""
    nos_part = parts(nos)
    config_dir = Path(nos_part.CONFIG_DIR)
    if not config_dir.is_relative_to("/etc"):  # a mount point the /etc overlay provides
        raise ValueError(f"{config_dir} is not under /etc")
    if not lldpd_socket.is_relative_to("/run"):  # bound at its own path inside the private /run
        raise ValueError(f"{lldpd_socket} is not under /run")
    if not (frr_dir / "bgpd.vty").exists():
        raise LabError(Problem(f"no FRR runs for {device} ({frr_dir}/bgpd.vty is missing)", device=device))
    private_directory(directory)
    home = Path(pwd.getpwnam(USERNAME).pw_dir)
    if not home.is_absolute() or home.resolve() in (Path("/"), Path("/etc"), Path("/run")) or not home.is_dir():
        raise LabError(Problem(f"{USERNAME}'s home directory {home} cannot be replaced by the endpoint's own", device=device))
    for sub in (f"etc-upper/{config_dir.relative_to('/etc')}", "etc-work", "config", "frr-run", "bin", "control", "home"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text(marker + "\n")
    _write_shadow(directory / "etc-upper" / "shadow", root_hash)
    key = directory / "ssh_host_ed25519_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"fabricgen-lab-{device}", "-f", str(key)], check=True, capture_output=True, timeout=30
    )
    (directory / "sshd_config").write_text(SSHD_CONFIG.format(port=port, host=HOST, mount=ENDPOINT_MOUNT))
    (directory / "control" / "image").write_text((image or nos_part.DEFAULT_IMAGE) + "\n")
    (directory / "control" / "namespace").write_text(namespace + "\n")
    (directory / "control" / "ports.json").write_text(json.dumps(ports))
    (directory / "netns").touch()
    (directory / "lldpd-run").mkdir(exist_ok=True)
    for program, script in nos_part.PROGRAMS.items():
        (directory / "bin" / program).write_text(script)
        (directory / "bin" / program).chmod(0o755)
    for relative, text in config_files.items():
        path = directory / "config" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    script = MOUNTS.format(
        hostname=shlex.quote(device),  # a checked host name (the build's device names are)
        directory=shlex.quote(str(directory)),
        mount=ENDPOINT_MOUNT,
        config_dir=shlex.quote(str(config_dir)),
        frr_dir=shlex.quote(str(frr_dir)),
        namespace=shlex.quote(namespace),
        lldpd_run=shlex.quote(str(lldpd_socket.parent)),
        lldpd_socket=shlex.quote(lldpd_socket.name),
        home=shlex.quote(str(home)),
        sshd=SSHD,
    )
    with open(directory / "unshare.log", "w") as log:
        process = subprocess.Popen(
            # its own UTS namespace too: the session's `hostname`, and with it the host name vtysh shows
            # in FRR's running config, is the switch's, as on the switch
            ["unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # a process group of its own: sshd and its sessions
        )
    endpoint = Endpoint(device, port, directory, process.pid)
    _wait_listening(endpoint, process, timeout)
    return endpoint


def _write_shadow(path: Path, root_hash: str) -> None:
    """The host's /etc/shadow with root's hash replaced (0600: only the endpoint's sshd reads it)."""
    lines = []
    for line in Path("/etc/shadow").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == USERNAME:
            fields[1] = root_hash
        lines.append(":".join(fields))
    write_private(path, "\n".join(lines) + "\n")


def _wait_listening(endpoint: Endpoint, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            logs = [endpoint.directory / name for name in ("unshare.log", "sshd.log")]
            output = " ".join(path.read_text() for path in logs if path.exists())
            raise LabError(Problem(f"the management endpoint's sshd exited ({process.returncode}): {output.strip()[-800:]}", device=endpoint.device))
        with socket.socket() as probe:
            if probe.connect_ex((HOST, endpoint.port)) == 0:
                return
        time.sleep(0.05)
    raise LabError(Problem(f"the management endpoint's sshd did not listen on {HOST}:{endpoint.port} within {timeout:.0f} s", device=endpoint.device))


# --- finding and stopping -------------------------------------------------------------------------


def namespace_processes(markers: Iterable[str] | None = None, prefix: str | None = None) -> dict[str, list[int]]:
    """Marker -> the pids of the mount namespace whose endpoint marker it is, for every namespace
    whose marker is one of `markers` or starts with `prefix`. Found from /proc (a crash may have
    left them unrecorded): each mount namespace other than this process's and init's is asked
    once, through a process of it, for ENDPOINT_MOUNT/MARKER."""
    wanted = set(markers or ())
    ignored = {_mount_namespace("self"), _mount_namespace("1")}
    by_namespace: dict[str, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            namespace = _mount_namespace(entry)
            if namespace and namespace not in ignored:
                by_namespace.setdefault(namespace, []).append(int(entry))
    found: dict[str, list[int]] = {}
    for pids in by_namespace.values():
        marker = _marker_of(pids)
        if marker is not None and (marker in wanted or (prefix is not None and marker.startswith(prefix))):
            found.setdefault(marker, []).extend(pids)
    return found


def _mount_namespace(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return ""


def _marker_of(pids: list[int]) -> str | None:
    for pid in pids:
        try:
            fd = os.open(f"/proc/{pid}/root{ENDPOINT_MOUNT}/{MARKER}", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # no marker: not an endpoint (or the process ended: ask the next)
        with os.fdopen(fd, "rb") as stream:
            return stream.read(256).decode(errors="replace").strip()
    return None


def stop_endpoints(markers: Iterable[str] | None = None, prefix: str | None = None, grace: float = 3.0, timeout: float = 30.0) -> int:
    """End every process of the endpoints' mount namespaces (`namespace_processes`): TERM, then
    KILL after `grace` seconds; returns when none is left (the namespaces are gone with them), or
    raises a LabError after `timeout` seconds. How many processes there were."""
    found = namespace_processes(markers, prefix)
    for pid in (pid for group in found.values() for pid in group):
        _signal(pid, signal.SIGTERM)
    started = time.monotonic()
    while True:
        # asked again each time: a session may fork meanwhile; a process that ended (a zombie
        # too) has no mount namespace any more
        left = [pid for group in namespace_processes(markers, prefix).values() for pid in group]
        if not left:
            return sum(len(group) for group in found.values())
        waited = time.monotonic() - started
        if waited > grace + timeout:
            raise LabError(Problem(f"management endpoint processes did not end: {', '.join(map(str, left[:10]))}"))
        if waited > grace:
            for pid in left:
                _signal(pid, signal.SIGKILL)
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


# --- what `up --management` hands the user -------------------------------------------------------

INVENTORY_FILE = "inventory.yaml"
KNOWN_HOSTS_FILE = "known_hosts"
PASSWORD_FILE = "password"


def parts(nos: str):
    """The NOS package's LAB_ENDPOINT part (fabricgen/nos/<nos>/lab_endpoint.py), None when it
    has none: its switches get no endpoint."""
    return getattr(plugin(nos), "LAB_ENDPOINT", None)


def endpoint_switches(switch_nos: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The switches (name -> NOS, in the order wanted) that get an endpoint: those whose NOS
    package has a LAB_ENDPOINT part (SONiC's); and every other one with the reason it gets none."""
    chosen = [name for name, nos in switch_nos.items() if parts(nos) is not None]
    return chosen, {name: refusal(nos) for name, nos in switch_nos.items() if parts(nos) is None}


def refusal(nos: str) -> str:
    """Why a switch of NOS `nos` (one without a LAB_ENDPOINT part) gets no endpoint."""
    return (
        f"no management endpoint: the lab runs an FRR routing twin of its {nos} config, not {nos}, "
        "so push and verify of its own config cannot be rehearsed here"
    )


def inventory_text(lab_id: str, endpoints: list[Endpoint], refused: dict[str, str], options: dict[str, str] | None = None) -> str:
    """`fabricgen push`'s inventory (fabricgen/push/inventory.py) naming each endpoint: 127.0.0.1
    and its port; FRR and lldpd run on the endpoint itself, not in SONiC's containers. A refused
    switch is listed with `unavailable`, so push and verify name the reason instead of reaching
    for the build's management address (a real switch's)."""
    lines = [
        f"# fabricgen lab up --management: the management endpoints of lab {lab_id}; login {USERNAME}, password in the lab's {PASSWORD_FILE} file",
        f"defaults: {{optional_args: {json.dumps(options or {})}}}",
        "devices:",
    ]
    lines += [f"  {e.device}: {{host: {e.host}, optional_args: {{port: {e.port}}}}}" for e in endpoints]
    lines += [f"  {device}: {{unavailable: {json.dumps(why)}}}" for device, why in refused.items()]
    return "\n".join(lines) + "\n"


def write_lab_files(directory: Path, lab_id: str, endpoints: list[Endpoint], refused: dict[str, str], options: dict[str, str] | None = None) -> None:
    """The inventory (`options`: every endpoint's driver options, the NOS part's INVENTORY_OPTIONS)
    and the known_hosts file (every endpoint's host key) into `directory`."""
    write_private(directory / INVENTORY_FILE, inventory_text(lab_id, endpoints, refused, options))
    write_private(directory / KNOWN_HOSTS_FILE, "".join(e.host_key_line for e in endpoints))
