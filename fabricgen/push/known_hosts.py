"""Whose SSH host key a switch must show before it is sent a password.

A known_hosts file (OpenSSH's format) says which key each `host` or `[host]:port` has. The SONiC
driver checks the key a device offers during the SSH key exchange, before any authentication:

- verify (the default): the key must be listed; an unknown or a different key is refused;
- trust-on-first-use: an unknown key is pinned (appended to the file) and trusted; a host already
  listed must still show the listed key, so a changed key is refused exactly as in verify;
- accept-any: no check at all (`fabricgen push --insecure`).

A file is read once per process and shared by every connection (plain names are a dict lookup;
OpenSSH's hashed names, ``|1|salt|hash``, are tried one by one), and read again when it changes.
Keys are named as `ssh-keygen -lf` names them: type and SHA256 fingerprint.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import os
import threading
from pathlib import Path
from typing import ClassVar

import paramiko
from napalm.base.exceptions import ConnectionException
from paramiko.hostkeys import HostKeyEntry, HostKeys, InvalidHostKey

VERIFY = "verify"
TRUST_ON_FIRST_USE = "trust-on-first-use"
ACCEPT_ANY = "accept-any"
MODES = (VERIFY, TRUST_ON_FIRST_USE, ACCEPT_ANY)
DEFAULT_FILE = "~/.ssh/known_hosts"

# paramiko's key names -> the type `ssh-keygen -lf` prints in parentheses
_KEY_TYPES = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ssh-dss": "DSA"}


class HostKeyError(ConnectionException):
    """The device showed a host key that is not the one known for it; nothing was sent to it."""


def server_name(host: str, port: int) -> str:
    """The name known_hosts files use: `host` on port 22, `[host]:port` elsewhere (as paramiko and
    OpenSSH both write it)."""
    return host if port == 22 else f"[{host}]:{port}"


def describe(key: paramiko.PKey) -> str:
    """'ED25519 key SHA256:...' : the type and fingerprint `ssh-keygen -lf` shows for the key."""
    kind = _KEY_TYPES.get(key.get_name(), "ECDSA" if key.get_name().startswith("ecdsa-") else key.get_name())
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{kind} key SHA256:{digest}"


class KnownHosts:
    """One known_hosts file: the keys listed per name, and pinning a new one."""

    _shared: ClassVar[dict[Path, KnownHosts]] = {}  # one per file, for every device of a run
    _shared_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._plain: dict[str, dict[str, paramiko.PKey]] = {}
        self._hashed: list[tuple[str, paramiko.PKey]] = []
        self._seen: tuple | None = None
        self._read()

    @classmethod
    def shared(cls, path: str | Path) -> KnownHosts:
        """The process's one copy of the file at `path`, read again if it changed on disk."""
        resolved = Path(os.path.abspath(Path(path).expanduser()))
        with cls._shared_lock:
            known = cls._shared.get(resolved)
            if known is None:
                known = cls._shared[resolved] = cls(resolved)
        known.refresh()
        return known

    def refresh(self) -> None:
        with self._lock:
            if self._signature() != self._seen:
                self._read()

    def keys_for(self, name: str) -> dict[str, paramiko.PKey]:
        """The keys listed for `name` (a `server_name`), by key type; empty when it is unknown."""
        found = dict(self._plain.get(name, {}))
        for hashed, key in self._hashed:
            if key.get_name() not in found and HostKeys.hash_host(name, hashed) == hashed:
                found[key.get_name()] = key
        return found

    def pin(self, name: str, key: paramiko.PKey) -> None:
        """Append `name`'s `key` to the file (trust on first use). Under an exclusive lock on the
        file, so concurrent connections and concurrent runs pin a name once; if the name got a key
        meanwhile, that key is the one it must match (HostKeyError otherwise)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path, "a+b") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            if self._signature() != self._seen:
                self._read()
            known = self.keys_for(name)
            if known:
                if known.get(key.get_name()) != key:
                    raise changed_key(name, key, next(iter(known.values())), self.path)
                return
            file.seek(0, os.SEEK_END)
            if file.tell() > 0:
                file.seek(-1, os.SEEK_END)
                if file.read(1) != b"\n":  # a hand-edited file without a final newline
                    file.write(b"\n")
            file.write(f"{name} {key.get_name()} {key.get_base64()}\n".encode())
            file.flush()
            self._plain.setdefault(name, {})[key.get_name()] = key
            self._seen = self._signature()

    def _signature(self) -> tuple | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _read(self) -> None:
        """Parse the file (a missing one lists nothing). Lines it cannot use are skipped, as
        OpenSSH skips them: markers (@cert-authority, @revoked), patterns, broken keys."""
        plain: dict[str, dict[str, paramiko.PKey]] = {}
        hashed: list[tuple[str, paramiko.PKey]] = []
        self._seen = self._signature()
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            text = ""
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith(("#", "@")):
                continue
            try:
                entry = HostKeyEntry.from_line(line, number)
            except (InvalidHostKey, paramiko.SSHException, ValueError, binascii.Error):
                continue
            if entry is None:
                continue
            for name in entry.hostnames:
                if name.startswith("|1|"):
                    hashed.append((name, entry.key))
                elif not any(ch in name for ch in "*?!"):
                    plain.setdefault(name, {}).setdefault(entry.key.get_name(), entry.key)
        self._plain, self._hashed = plain, hashed  # whole, so a lookup meanwhile sees one version


def unknown_key(name: str, key: paramiko.PKey, path: Path) -> HostKeyError:
    return HostKeyError(
        f"{name}: unknown host key, {describe(key)}, is not in {path}; refused before logging in, nothing was sent "
        "(fix: if the switch's console shows this fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), add its key to the file)"
    )


def changed_key(name: str, key: paramiko.PKey, expected: paramiko.PKey, path: Path) -> HostKeyError:
    return HostKeyError(
        f"{name}: host key CHANGED: it shows {describe(key)}, {path} lists {describe(expected)}; "
        f"refused before logging in, nothing was sent (fix: only if the switch was re-keyed on purpose, remove the old key: ssh-keygen -R '{name}' -f {path})"
    )


class RefuseUnknown(paramiko.MissingHostKeyPolicy):
    """verify: a host the file does not list is refused."""

    def __init__(self, known: KnownHosts) -> None:
        self.known = known

    def missing_host_key(self, client, hostname, key) -> None:
        raise unknown_key(hostname, key, self.known.path)


class PinUnknown(paramiko.MissingHostKeyPolicy):
    """trust-on-first-use: a host the file does not list has its key pinned; `pinned` says which."""

    def __init__(self, known: KnownHosts) -> None:
        self.known = known
        self.pinned: paramiko.PKey | None = None

    def missing_host_key(self, client, hostname, key) -> None:
        self.known.pin(hostname, key)
        self.pinned = key


class AcceptAny(paramiko.MissingHostKeyPolicy):
    """accept-any (--insecure): any key, remembered nowhere."""

    def missing_host_key(self, client, hostname, key) -> None:
        return None


def prepare(client: paramiko.SSHClient, host: str, port: int, mode: str, path: str | Path) -> paramiko.MissingHostKeyPolicy:
    """Give `client` the keys listed for host:port and the policy of `mode` for unknown ones.
    paramiko then checks the key during the key exchange: a listed name with another key raises
    BadHostKeyException, an unlisted one goes to the policy; both before any authentication."""
    if mode == ACCEPT_ANY:
        policy: paramiko.MissingHostKeyPolicy = AcceptAny()
    else:
        known = KnownHosts.shared(path)
        name = server_name(host, port)
        for key in known.keys_for(name).values():
            client.get_host_keys().add(name, key.get_name(), key)
        policy = PinUnknown(known) if mode == TRUST_ON_FIRST_USE else RefuseUnknown(known)
    client.set_missing_host_key_policy(policy)
    return policy
