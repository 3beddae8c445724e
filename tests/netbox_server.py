"""A real NetBox for the tests: NetBox's official release, started per test session on 127.0.0.1.

What `scripts/netbox.sh` installs (root, once per machine; docs/testing.md) and this module runs:

- NetBox 4.7.3 from its release on PyPI, in a virtualenv at `/opt/netbox/venv` of a Debian trixie
  root file system (debootstrap) at `/var/cache/fabricgen/netbox/root` (or under
  $FABRICGEN_NETBOX_HOME): NetBox 4.7 requires Python 3.12 or newer (on 3.11 the Django it pins
  fails to import `inspect.markcoroutinefunction`, its `settings.py` refuses to start, `circuits`
  imports `itertools.batched`); Debian bookworm has 3.11, trixie 3.13. Only NetBox's Python runs in that root (chroot); psycopg is
  its prebuilt `binary` flavour of the pinned release, not the `c` flavour compiled at install.
- PostgreSQL (the machine's Debian package) and redis-server run outside it, one of each per
  NetBox: PostgreSQL as the `postgres` user on a unix socket only, in a directory inside the root
  that only that user (and root) can open; redis on 127.0.0.1 at a free port with a random
  password, no persistence.
- A migrated database is made once per machine (`python -m tests.netbox_server template`, which
  `scripts/netbox.sh` runs) and copied for each NetBox: its 336 migrations take about 3.5 min of
  CPU (Django re-rendering model states) that a test session does not pay again. The copy has a superuser `fabricgen` and one v2 API token
  (write enabled); each NetBox gets a new random token, API token pepper and SECRET_KEY.
- gunicorn (NetBox's own pin) serves NetBox's WSGI application on 127.0.0.1 at a free port, three
  workers forked from a master that loaded NetBox once; up in about 12 s, about 0.6 GB. No
  RQ worker (nothing a push does queues a job) and no static files (the API needs none).

For test modules:

    from tests import netbox_server

    netbox = netbox_server.netbox  # the fixture, found by pytest in the module (an import of the
                                   # name would be ruff's F811 beside the test's argument)

    def test_x(netbox: netbox_server.NetBox) -> None:
        api = pynetbox.api(netbox.url, token=netbox.token)   # token: "nbt_<key>.<secret>" (v2)
        ...
        netbox.reset()   # back to the empty, migrated NetBox (seconds): a new database, same token

`netbox` is session-scoped: one NetBox per pytest worker that asks for it, however many modules
import it, stopped when the session ends; it skips the test, naming why, where no NetBox can run (`unavailable()`: not root, or `scripts/netbox.sh` not run).
`start_netbox(port=None, workers=3)` is the context manager behind it. The NetBox's attributes: `url`
(`http://127.0.0.1:<port>`, no trailing slash), `token`, `version` ("4.7.3", what
`/api/status/` says), `directory` (its files and logs: gunicorn.log, postgres.log, redis.log),
`pids` (the leaders of its processes), `redis_port`. A NetBox whose test run was killed before its
teardown is stopped and removed by the next one started on the machine (`sweep_orphans`).

From a shell (root): `python -m tests.netbox_server template` makes the migrated database if
missing; `python -m tests.netbox_server serve --port 8790 --env FILE` runs one NetBox until it is
interrupted, writing NETBOX_URL and NETBOX_TOKEN to FILE (0600); `reset DIRECTORY` empties a
served one.

Sources for the configuration keys: NetBox's docs (bundled in the release),
configuration/required-parameters (ALLOWED_HOSTS, DATABASES, REDIS, SECRET_KEY, and
API_TOKEN_PEPPERS: v2 tokens need one pepper of 50 characters or more) and
installation/3b-python-package (the wheel reads $NETBOX_ROOT/conf/configuration.py), and the
4.7.3 release's netbox/configuration_example.py; the token's HMAC from the release's
users/models/tokens.py (`Token.update_digest`: HMAC-SHA256 of the token's secret keyed with the pepper).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# what scripts/netbox.sh installs (root): shared by every clone on the machine
HOME = Path(os.environ.get("FABRICGEN_NETBOX_HOME", "/var/cache/fabricgen/netbox"))
ROOT = HOME / "root"  # the Debian trixie root NetBox's Python runs in
VERSION = "4.7.3"  # the release scripts/netbox.sh installs (NETBOX_VERSION there)
VENV = "/opt/netbox/venv"  # inside ROOT
INSTALLED = ROOT / "opt" / "netbox" / f"installed-{VERSION}"  # written last by scripts/netbox.sh
SERVERS = "/srv/fabricgen"  # inside ROOT: one directory per running NetBox
USERNAME = "fabricgen"  # the superuser the token belongs to
DATABASE = "netbox"
EMPTY_DATABASE = "netbox_empty"  # the migrated database with only the user and token: reset() copies it
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"  # the caller's PATH, not the root's
PG_USER = "postgres"  # the Debian package's system user; PostgreSQL refuses to run as root
# a bound on each wait, for a failure to show; every wait ends on its event well before
STARTUP_LIMIT = 600.0


def postgres_bin() -> Path | None:
    """The newest PostgreSQL server of the machine's Debian packages (/usr/lib/postgresql/<major>/bin)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


def template_dir() -> Path:
    """The migrated cluster, by NetBox release and PostgreSQL major (a data directory is per major)."""
    bin_dir = postgres_bin()
    major = bin_dir.parent.name if bin_dir else "none"
    return HOME / f"pgdata-netbox{VERSION}-pg{major}"


def unavailable() -> str | None:
    """Why no NetBox can run here, or None."""
    if os.geteuid() != 0:
        return "the live NetBox needs root (a chroot for NetBox's Python 3.13; PostgreSQL run as the postgres user)"
    if not INSTALLED.exists():
        return f"NetBox {VERSION} is not installed: run `bash scripts/netbox.sh` (root; scripts/test.sh runs it without arguments)"
    if postgres_bin() is None:
        return "no PostgreSQL server: apt-get install postgresql (scripts/netbox.sh does)"
    if shutil.which("redis-server") is None:
        return "no redis-server: apt-get install redis-server (scripts/netbox.sh does)"
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        return f"no {PG_USER} user (Debian's postgresql package makes it)"
    return None


SETUP_VARIABLE = "FABRICGEN_NETBOX_SETUP"  # scripts/test.sh: the directory of its background scripts/netbox.sh
SETUP_LIMIT = 3600.0  # a new machine's install takes minutes; an hour means it hangs


def wait_for_setup() -> None:
    """Where scripts/test.sh runs scripts/netbox.sh beside the tests, wait until it has ended (its
    status file appears) and fail, with its log, when it failed: a NetBox the suite was meant to
    install is a failure to see, not a skip."""
    setup = os.environ.get(SETUP_VARIABLE)
    if not setup:
        return
    status = Path(setup) / "status"
    deadline = time.monotonic() + SETUP_LIMIT
    while not status.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"scripts/netbox.sh has not ended after {SETUP_LIMIT:.0f} s (log: {Path(setup) / 'log'})")
        time.sleep(1.0)
    if status.read_text().strip() != "0":
        log = (Path(setup) / "log").read_text(errors="replace")[-4000:]
        pytest.fail(f"scripts/netbox.sh failed (exit {status.read_text().strip()}):\n{log}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(condition: Callable[[], object], what: str, alive: Callable[[], str | None], limit: float = STARTUP_LIMIT) -> None:
    """Wait until condition() holds; fail at once when alive() says a process died, else after limit."""
    deadline = time.monotonic() + limit
    while not condition():
        died = alive()
        if died:
            raise RuntimeError(f"{what}: {died}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not after {limit:.0f} s")
        time.sleep(0.1)


def random_text(length: int) -> str:
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))


@dataclass
class NetBox:
    """One running NetBox (see the module's docstring)."""

    url: str
    token: str
    version: str
    directory: Path  # on the host; inside ROOT
    redis_port: int
    redis_password: str
    pids: dict[str, int] = field(default_factory=dict)  # the leader of each process group: postgres, redis, gunicorn

    @property
    def socket_dir(self) -> Path:
        return self.directory / "pgsocket"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the cluster's superuser; returns psql's unaligned output."""
        return psql(self.socket_dir, sql, database)

    def reset(self) -> None:
        """Empty NetBox: the database again as migrated (with the user and token), Redis flushed."""
        self.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        self.psql(f"CREATE DATABASE {DATABASE} TEMPLATE {EMPTY_DATABASE}")
        redis_command(self.redis_port, self.redis_password, "FLUSHALL")


def psql(socket_dir: Path, sql: str, database: str = "postgres") -> str:
    bin_dir = postgres_bin()
    assert bin_dir is not None
    result = subprocess.run(
        [str(bin_dir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(socket_dir), "-U", DATABASE, "-d", database, "-c", sql],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
    )
    if result.returncode != 0:
        raise RuntimeError(f"psql {sql!r}: {result.stderr.strip()}")
    return result.stdout


def redis_command(port: int, password: str, *words: str) -> str:
    """One command to the NetBox's redis (RESP over TCP); returns the first reply line."""
    parts = ["AUTH", password], list(words)
    payload = b"".join(b"*%d\r\n" % len(p) + b"".join(b"$%d\r\n%s\r\n" % (len(w.encode()), w.encode()) for w in p) for p in parts)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(payload)
        reply = b""
        while reply.count(b"\r\n") < 2:
            chunk = connection.recv(4096)
            if not chunk:
                break
            reply += chunk
    lines = reply.decode(errors="replace").split("\r\n")
    if not lines[0].startswith("+OK") or len(lines) < 2 or lines[1].startswith("-"):
        raise RuntimeError(f"redis {' '.join(words)}: {reply!r}")
    return lines[1]


class Processes:
    """The processes of one NetBox, each the leader of its own process group; stop() ends them all."""

    def __init__(self) -> None:
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, command: list[str], log: Path, env: dict[str, str], cwd: Path | None = None) -> None:
        with open(log, "ab") as output:
            self.running[name] = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
            )

    def died(self) -> str | None:
        for name, process in self.running.items():
            if process.poll() is not None:
                return f"{name} exited with {process.returncode}"
        return None

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        self.stop_all({name: sig})

    def stop_all(self, signals: dict[str, int] | None = None) -> None:
        """Every process told to stop before any is waited for: a pytest-xdist worker is ended
        soon after its last test, and a NetBox stopped one process after the other (gunicorn
        takes seconds) once left PostgreSQL running. PostgreSQL's fast shutdown (SIGINT) ends the
        connections gunicorn's workers still hold."""
        if signals is None:
            signals = {name: signal.SIGINT if name == "postgres" else signal.SIGTERM for name in self.running}
        stopping = [(self.running.pop(name), sig) for name, sig in signals.items() if name in self.running]
        for process, sig in stopping:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
        for process, _ in stopping:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def chroot_env(directory: Path) -> dict[str, str]:
    """The environment of NetBox's processes in the root: nothing of the caller's."""
    return {
        "PATH": f"{VENV}/bin:/usr/bin:/bin",
        "HOME": inside(directory),
        "LANG": "C.UTF-8",
        "NETBOX_ROOT": inside(directory),  # NetBox's wheel reads NETBOX_ROOT/conf/configuration.py
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def inside(path: Path) -> str:
    """A host path under ROOT as NetBox's processes see it."""
    return "/" + str(path.relative_to(ROOT))


def netbox_command(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`netbox ARGS` (NetBox's console script: Django's management commands) in the root."""
    return subprocess.run([CHROOT, str(ROOT), f"{VENV}/bin/netbox", *args], capture_output=True, text=True, env=chroot_env(directory), stdin=subprocess.DEVNULL)


def write_configuration(directory: Path, redis_port: int, redis_password: str, pepper: str) -> None:
    """NETBOX_ROOT/conf/configuration.py. Keys from NetBox's docs: configuration/required-parameters
    (the first five; CONN_MAX_AGE there, CONN_HEALTH_CHECKS is Django's DATABASES option),
    configuration/miscellaneous (CENSUS_REPORTING_ENABLED, RELEASE_CHECK_URL),
    configuration/system (MEDIA_ROOT); the release's configuration_example.py."""
    configuration = {
        "ALLOWED_HOSTS": ["127.0.0.1", "localhost"],
        "DATABASES": {
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": DATABASE,
                "USER": DATABASE,
                "PASSWORD": "",
                "HOST": inside(directory / "pgsocket"),  # a unix socket directory
                "PORT": "",
                "CONN_MAX_AGE": 300,
                "CONN_HEALTH_CHECKS": True,  # reset() drops the database under open connections
            }
        },
        "REDIS": {
            queue: {"HOST": "127.0.0.1", "PORT": redis_port, "USERNAME": "", "PASSWORD": redis_password, "DATABASE": number, "SSL": False}
            for queue, number in (("tasks", 0), ("caching", 1))
        },
        "SECRET_KEY": random_text(60),
        "API_TOKEN_PEPPERS": {1: pepper},
        "CENSUS_REPORTING_ENABLED": False,  # no call home from a test
        "RELEASE_CHECK_URL": None,
        "MEDIA_ROOT": inside(directory / "media"),
    }
    conf = directory / "conf"
    conf.mkdir(mode=0o700, exist_ok=True)
    text = "".join(f"{key} = {value!r}\n" for key, value in configuration.items())
    descriptor = os.open(conf / "configuration.py", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


def start_postgres(processes: Processes, directory: Path, data: Path) -> None:
    bin_dir = postgres_bin()
    assert bin_dir is not None
    sockets = directory / "pgsocket"
    sockets.mkdir(mode=0o700, exist_ok=True)
    account = pwd.getpwnam(PG_USER)
    os.chown(sockets, account.pw_uid, account.pw_gid)
    log = directory / "postgres.log"
    log.touch()
    os.chown(log, account.pw_uid, account.pw_gid)
    # a throwaway cluster: durability settings off (fsync, synchronous_commit, full_page_writes),
    # no TCP listener
    settings = ["listen_addresses=", f"unix_socket_directories={sockets}", "fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=60"]
    command = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", "--", str(bin_dir / "postgres"), "-D", str(data)]
    for setting in settings:
        command += ["-c", setting]
    processes.start("postgres", command, log, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})

    def ready() -> bool:
        probe = subprocess.run([str(bin_dir / "pg_isready"), "-q", "-h", str(sockets), "-U", DATABASE, "-d", "postgres"], capture_output=True)
        return probe.returncode == 0

    wait_for(ready, f"PostgreSQL ({log})", processes.died)


def start_redis(processes: Processes, directory: Path) -> tuple[int, str]:
    port, password = free_port(), random_text(40)
    conf = directory / "redis.conf"
    descriptor = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(f'bind 127.0.0.1\nport {port}\nrequirepass "{password}"\nsave ""\nappendonly no\ndir {directory}\ndaemonize no\n')
    processes.start("redis", ["redis-server", str(conf)], directory / "redis.log", {"PATH": "/usr/bin:/bin"})

    def ready() -> bool:
        try:
            return redis_command(port, password, "PING") == "+PONG"
        except OSError:
            return False

    wait_for(ready, f"redis ({directory / 'redis.log'})", processes.died)
    return port, password


def new_directory() -> Path:
    """A directory for one NetBox inside ROOT: root's, others may only pass through (PostgreSQL's
    data and socket directories in it are the postgres user's). Its `owner` file names the
    process that started it; what a killed owner left behind goes first (sweep_orphans)."""
    parent = ROOT / SERVERS.lstrip("/")
    parent.mkdir(parents=True, exist_ok=True)
    sweep_orphans(parent)
    directory = Path(tempfile.mkdtemp(prefix="netbox-", dir=parent))
    directory.chmod(0o711)
    (directory / "owner").write_text(f"{os.getpid()}\n")
    return directory


def sweep_orphans(parent: Path) -> None:
    """Stop the processes of, and remove, each NetBox directory whose owner no longer runs (a test
    run killed before its teardown): every process of a NetBox works in its directory (PostgreSQL
    in its data, redis and gunicorn in the directory itself)."""
    for directory in parent.glob("netbox-*"):
        try:
            owner = int((directory / "owner").read_text())
            os.kill(owner, 0)
            continue  # its owner runs: its NetBox is in use
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            continue  # being made, or not ours
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if cwd == directory or directory in cwd.parents:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def initdb(data: Path) -> None:
    bin_dir = postgres_bin()
    assert bin_dir is not None
    account = pwd.getpwnam(PG_USER)
    data.mkdir(mode=0o700)
    os.chown(data, account.pw_uid, account.pw_gid)
    command = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", "--"]
    command += [str(bin_dir / "initdb"), "-D", str(data), "-U", DATABASE, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
    result = subprocess.run(command, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    if result.returncode != 0:
        raise RuntimeError(f"initdb: {result.stderr.strip()}")


def make_template() -> Path:
    """The migrated cluster (template_dir()), made once per machine; concurrent callers wait for the first."""
    target = template_dir()
    HOME.mkdir(exist_ok=True)
    with open(HOME / "template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        directory = new_directory()
        processes = Processes()
        try:
            data = directory / "pgdata"
            started = time.monotonic()
            initdb(data)
            start_postgres(processes, directory, data)
            redis_port, redis_password = start_redis(processes, directory)
            write_configuration(directory, redis_port, redis_password, random_text(60))
            psql(directory / "pgsocket", f"CREATE DATABASE {DATABASE}")
            timings = {"initdb_and_start_s": round(time.monotonic() - started, 1)}
            started = time.monotonic()
            result = netbox_command(directory, "migrate", "--no-input", "--skip-checks")
            if result.returncode != 0:
                raise RuntimeError(f"netbox migrate:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            timings["migrate_s"] = round(time.monotonic() - started, 1)
            started = time.monotonic()
            # the superuser and its token, made by NetBox itself; start_netbox() gives the token a
            # new secret and pepper for each NetBox
            script = (
                "from users.models import Token, User; "
                f"user = User.objects.create_superuser({USERNAME!r}, 'fabricgen@example.invalid', None); "
                "Token.objects.create(user=user, description='fabricgen tests', write_enabled=True)"
            )
            result = netbox_command(directory, "shell", "--no-imports", "-c", script)
            if result.returncode != 0:
                raise RuntimeError(f"netbox shell (user and token):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            timings["user_and_token_s"] = round(time.monotonic() - started, 1)
            processes.stop_all()
            (data / "postmaster.opts").unlink(missing_ok=True)
            partial = target.with_name(target.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            data.rename(partial)
            (partial / "fabricgen-timings.json").write_text(json.dumps(timings) + "\n")
            partial.rename(target)
        finally:
            processes.stop_all()
            shutil.rmtree(directory, ignore_errors=True)
    return target


def api_status(url: str, token: str) -> dict | None:
    """NetBox's /api/status/ answer, or None while it does not answer (4.7 wants a token for it:
    LOGIN_REQUIRED is on by default)."""
    request = urllib.request.Request(f"{url}/api/status/", headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            status = json.load(answer)
            return status if isinstance(status, dict) else None
    except (OSError, ValueError, urllib.error.URLError):
        return None


@contextlib.contextmanager
def start_netbox(port: int | None = None, workers: int = 3) -> Iterator[NetBox]:
    """A NetBox of its own (module docstring); everything stopped and removed on the way out."""
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    template = make_template()
    directory = new_directory()
    processes = Processes()
    try:
        data = directory / "pgdata"
        # cp keeps the owner (postgres) and modes; PostgreSQL wants its data directory 0700
        subprocess.run(["cp", "-a", "--reflink=auto", str(template), str(data)], check=True)
        (data / "fabricgen-timings.json").unlink(missing_ok=True)
        start_postgres(processes, directory, data)
        redis_port, redis_password = start_redis(processes, directory)
        pepper, key, secret = random_text(60), random_text(12), random_text(40)
        digest = hmac.new(pepper.encode(), secret.encode(), hashlib.sha256).hexdigest()
        sockets = directory / "pgsocket"
        psql(sockets, f"UPDATE users_token SET key = '{key}', pepper_id = 1, hmac_digest = '{digest}'", DATABASE)
        psql(sockets, f"CREATE DATABASE {EMPTY_DATABASE} TEMPLATE {DATABASE}")
        write_configuration(directory, redis_port, redis_password, pepper)
        (directory / "media").mkdir(exist_ok=True)
        port = port or free_port()
        gunicorn = [
            CHROOT, str(ROOT), f"{VENV}/bin/gunicorn",
            "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers),
            "--timeout", "300",
            # NetBox loaded once, in the master, and the workers forked from it: a NetBox up in
            # 12 s and 10 s of CPU rather than 28 s and 25 s; loading opens no database or
            # redis connection for the workers to share (the master holds none: ss -xp, ss -tp)
            "--preload",
            "--chdir", inside(directory),
            "netbox.wsgi",
        ]  # fmt: skip
        processes.start("gunicorn", gunicorn, directory / "gunicorn.log", chroot_env(directory))
        url, token = f"http://127.0.0.1:{port}", f"nbt_{key}.{secret}"
        wait_for(lambda: api_status(url, token) is not None, f"NetBox at {url} ({directory / 'gunicorn.log'})", processes.died)
        status = api_status(url, token) or {}
        yield NetBox(
            url=url,
            token=token,
            version=str(status.get("netbox-version", "")),
            directory=directory,
            redis_port=redis_port,
            redis_password=redis_password,
            pids={name: process.pid for name, process in processes.running.items()},
        )
    finally:
        processes.stop_all()
        shutil.rmtree(directory, ignore_errors=True)


_shared: list[NetBox] = []  # this process's NetBox behind the fixture
_shared_stack = contextlib.ExitStack()


def _close_shared() -> None:
    _shared.clear()
    _shared_stack.close()


@pytest.fixture(scope="session")
def netbox(request: pytest.FixtureRequest) -> NetBox:
    """This process's NetBox (one per pytest worker, however many modules import the fixture:
    pytest would make one per importing module); skips, naming why, where none can run."""
    wait_for_setup()
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    if not _shared:
        # at the session's end, in the last test's teardown (a failure included): a pytest-xdist
        # worker is waited for until then, not through the config's cleanup, where it was once
        # ended with PostgreSQL still running
        request.addfinalizer(_close_shared)
        _shared.append(_shared_stack.enter_context(start_netbox()))
    return _shared[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.netbox_server", description="The tests' NetBox, from a shell (root).")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("template", help="make the migrated database once per machine")
    serve = commands.add_parser("serve", help="run one NetBox until interrupted")
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--env", type=Path, help="write NETBOX_URL and NETBOX_TOKEN here (0600), and the directory")
    reset = commands.add_parser("reset", help="empty a served NetBox")
    reset.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    if args.command == "template":
        reason = unavailable()
        if reason:
            print(reason, file=sys.stderr)
            return 1
        print(make_template())
        return 0
    if args.command == "reset":
        state = json.loads((args.directory / "fabricgen-server.json").read_text())
        NetBox(url=state["url"], token="", version="", directory=args.directory, redis_port=state["redis_port"], redis_password=state["redis_password"]).reset()
        return 0
    stop = False

    def interrupted(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    with start_netbox(port=args.port) as server:
        state = {"url": server.url, "redis_port": server.redis_port, "redis_password": server.redis_password}
        descriptor = os.open(server.directory / "fabricgen-server.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            json.dump(state, handle)
        if args.env:
            descriptor = os.open(args.env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(f"NETBOX_URL={server.url}\nNETBOX_TOKEN={server.token}\nNETBOX_DIRECTORY={server.directory}\n")
        print(f"NetBox {server.version} at {server.url} ({server.directory})", flush=True)
        while not stop:
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
