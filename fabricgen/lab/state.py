"""A lab on this machine: every name and path it owns, derived from its lab id, and its state
file, read back as hostile input.

The lab of a build directory is named by `lab_id_of` (six hex digits of the sha256 of the
directory's resolved path). Everything the lab creates is named from that id, never read from a
file: its namespaces `fg<id>-<device>`, FRR's run directory of each (`/var/run/frr/<namespace>`),
lldpd's files (`/run/fabricgen-lldpd/<namespace>.*`), and its state directory `<root>/<id>/` (mode
0700) with the state file, the lock and the key directory. The root is `$FABRICGEN_LAB_STATE`,
else /run/fabricgen/lab.

The state file records what `up` created before it creates it (write-ahead), so `down` removes
exactly that, also after a crash. It is read like a build directory: a regular file of this user's
that nobody else may write, in a directory of the same kind (never through a symbolic link, never
blocking on a FIFO), at most `MAX_STATE_BYTES`, parsed into a strict model (exact types, no
unknown field, every name checked by `fabricgen.basics.trust`), and bound to the build it is loaded for:
its lab id and build path must be that build's, each namespace it names one this lab's id gives,
and for a lab that is up (`running_lab`) each device and cable one of the build's plan. Anything
else is refused, naming the file and how to remove the lab by hand, and nothing is deleted.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import shlex
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from fabricgen.basics.errors import LabError, Problem
from fabricgen.basics.trust import HOSTNAME, Hostname, PortName, Text, Token, printable, quoted
from fabricgen.basics.version import __version__
from fabricgen.build.secrets import SecretName
from fabricgen.compiler.design.graph import Network
from fabricgen.lab.keys import private_directory, write_private
from fabricgen.lab.plan import LAB_ID, LabPlan, is_kernel_name, lab_id_of, read_plan

STATE_ENV = "FABRICGEN_LAB_STATE"
DEFAULT_STATE_ROOT = Path("/run/fabricgen/lab")
STATE_FILE = "state.json"
FRR_RUN = Path("/var/run/frr")
LLDPD_RUN = Path("/run/fabricgen-lldpd")  # sockets, pid files and the configs lldpcli reads at start
# Measured: the state of intents/superpod-4096.yaml's backend lab (896 namespaces, 24,576 cabled
# ports) is 727 KB, about 30 bytes a port; 16 MiB holds some 500,000 ports, more than a host runs
MAX_STATE_BYTES = 16 << 20
MAX_MANIFEST_BYTES = 32 << 20  # build_dir.MAX_MANIFEST_BYTES
NAMESPACE = re.compile(rf"fg{LAB_ID.pattern}-{HOSTNAME.pattern}")


def state_root() -> Path:
    """Where labs keep their state: $FABRICGEN_LAB_STATE, else /run/fabricgen/lab."""
    return Path(os.environ.get(STATE_ENV) or DEFAULT_STATE_ROOT)


def state_directory(lab_id: str) -> Path:
    """The lab's own directory: its state file, its lock and its key directory."""
    if not LAB_ID.fullmatch(lab_id):
        raise ValueError(f"{quoted(lab_id)} is not a lab id")  # callers pass lab_id_of's
    return state_root() / lab_id


def keys_directory(lab_id: str) -> Path:
    """The filled FRR configs and the keys' values (`fabricgen.lab.keys`), 0700."""
    return state_directory(lab_id) / "keys"


def management_directory(lab_id: str) -> Path:
    """The management endpoints (`fabricgen.lab.management`): one directory per switch, the lab's
    password (0600), the inventory and known_hosts files `up --management` writes."""
    return state_directory(lab_id) / "management"


def endpoint_marker(lab_id: str, device: str) -> str:
    """What a management endpoint's marker file says: which lab and switch its namespace is."""
    return f"{lab_id} {device}"


def frr_dir(namespace: str) -> Path:
    """FRR's run directory of a namespace's daemons (their sockets, pid files and logs)."""
    return FRR_RUN / namespace


def manifest_hash(build_dir: Path) -> str:
    """The sha256 of the build's manifest.json: which build a lab runs. A link, a FIFO or a file
    over the manifest's bound is a LabError (read without blocking)."""
    path = build_dir / "manifest.json"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise LabError(Problem(f"cannot read the build's manifest: {exc.strerror}", file=str(path))) from None
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LabError(Problem("the build's manifest is not a regular file", file=str(path)))
        data = stream.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise LabError(Problem(f"the build's manifest is larger than {MAX_MANIFEST_BYTES >> 20} MiB", file=str(path)))
    return hashlib.sha256(data).hexdigest()


@contextmanager
def lab_lock(lab_id: str) -> Iterator[None]:
    """One lab command at a time per lab; makes the lab's state directory (0700) when missing."""
    directory = private_directory(state_directory(lab_id))
    fd = os.open(directory / "lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LabError(Problem("another fabricgen lab command is running on this lab", hint="wait for it to finish")) from None
        yield


def cleanup_hint(lab_id: str) -> str:
    """How to remove the lab of `lab_id` by hand, every name derived from the id."""
    prefix = f"fg{lab_id}-"
    return (
        "nothing was removed; check the file, then remove the lab by hand: "
        f"for p in /proc/[0-9]*; do grep -qs '^{lab_id} ' $p/root/etc/fabricgen-endpoint/endpoint && kill -9 ${{p#/proc/}}; done; "
        f"for ns in $(ip netns list | grep -o '^{prefix}[^ ]*'); do ip netns pids $ns | xargs -r kill -9; ip netns delete $ns; done; "
        f"rm -rf {FRR_RUN}/{prefix}* {LLDPD_RUN}/{prefix}* {shlex.quote(str(state_directory(lab_id)))}"
    )


# --- the state file ------------------------------------------------------------------------------

Seconds = Annotated[float, Field(ge=0, le=1e11, allow_inf_nan=False)]  # a time.time() or a duration


def _check_namespace(value: str) -> str:
    if not NAMESPACE.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a lab namespace name (fg, a lab id, '-', a device name)")
    return value


def _check_kernel_name(value: str) -> str:
    if not is_kernel_name(value):
        raise ValueError(f"{quoted(value)} is not a kernel interface name the lab gives")
    return value


Namespace = Annotated[str, AfterValidator(_check_namespace)]
KernelName = Annotated[str, AfterValidator(_check_kernel_name)]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class LabFailure(_State):
    """A failure `lab fail` applied: a cable cut (`how`: both ends down, or frames dropped
    silently) or a device powered off; `at`: when."""

    kind: Literal["link", "device"]
    cable: Token | None = None
    device: Hostname | None = None
    how: Literal["silent", "down"] | None = None
    at: Seconds = 0.0

    @model_validator(mode="after")
    def _names_one_thing(self) -> LabFailure:
        if self.kind == "link" and (self.cable is None or self.how is None or self.device is not None):
            raise ValueError("a link failure names its cable and how it failed, and no device")
        if self.kind == "device" and (self.device is None or self.cable is not None or self.how is not None):
            raise ValueError("a device failure names its device only")
        return self

    def same(self, other: LabFailure) -> bool:
        """The same cable or device (however and whenever it failed)."""
        return (self.kind, self.cable, self.device) == (other.kind, other.cable, other.device)


class ManagementEndpoint(_State):
    """A switch's management endpoint (`up --management`): recorded before it starts."""

    device: Hostname
    port: Annotated[int, Field(ge=1, le=65535)]
    pid: Annotated[int, Field(ge=0, le=1 << 22)] = 0  # sshd's (its process group's), 0 until started


class LabState(_State):
    """What one lab created and what it is doing: written before each step, read by every command."""

    build_dir: Annotated[str, StringConstraints(min_length=1, max_length=4096)]  # resolved; PATH_MAX
    lab_id: Annotated[str, StringConstraints(pattern=rf"^{LAB_ID.pattern}$")]
    network: Network
    manifest_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    fabricgen_version: Token = __version__
    phase: Literal["starting", "up"] = "starting"
    namespaces: list[Namespace] = []
    interfaces: dict[Hostname, dict[PortName, KernelName]] = {}  # device -> port -> kernel name
    failures: list[LabFailure] = []
    notes: list[Text] = []  # what this machine cannot build, found at up
    keys_given: list[SecretName] = []  # secret names whose value came from the environment or the secrets file
    keys_generated: list[SecretName] = []  # secret names the lab made a random value up for
    started: Seconds = 0.0
    up_seconds: Seconds = 0.0
    loaded_at: Seconds = 0.0  # when the last FRR config load (up or restore) finished
    management: bool = False  # up --management: `down` stops every endpoint whose marker names this lab
    endpoints: list[ManagementEndpoint] = []

    @property
    def path(self) -> Path:
        return state_directory(self.lab_id) / STATE_FILE

    @property
    def keys_dir(self) -> Path:
        return keys_directory(self.lab_id)

    def save(self) -> None:
        """Written whole (0600, through a new file) into the lab's state directory (0700)."""
        private_directory(self.path.parent)
        write_private(self.path, self.model_dump_json(indent=1) + "\n")


def load_state(build_dir: Path) -> LabState | None:
    """The state of the lab of `build_dir`, None when it has none. A LabError naming the file and
    how to clean up by hand when the file is not one this lab wrote (see the module's docstring)."""
    lab_id = lab_id_of(build_dir)
    path = state_directory(lab_id) / STATE_FILE
    raw = _read_state_file(path, lab_id)
    if raw is None:
        return None
    try:
        state = LabState.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise _refused(path, lab_id, f"{first['msg'].removeprefix('Value error, ')}{more}", tuple(first["loc"])) from None
    if state.lab_id != lab_id:
        raise _refused(path, lab_id, f"it is the state of lab {state.lab_id}, and the lab of {build_dir} is {lab_id}", ("lab_id",))
    if state.build_dir != str(build_dir.resolve()):
        raise _refused(path, lab_id, f"it is the state of the lab of {quoted(state.build_dir, 200)}, not of {build_dir.resolve()}", ("build_dir",))
    foreign = [ns for ns in state.namespaces if not ns.startswith(f"fg{lab_id}-")]
    if foreign:
        raise _refused(path, lab_id, f"it names {len(foreign)} namespaces of another lab, e.g. {quoted(foreign[0])}", ("namespaces",))
    return state


def check_against_plan(state: LabState, plan: LabPlan) -> None:
    """The state of a lab that is up names only the namespaces, devices and cables of its build's
    plan (the build `state.manifest_sha256` says); a LabError naming the file otherwise."""
    devices = {*plan.switches, *plan.nodes}
    namespaces = {plan.namespace(device) for device in devices}
    cables = {link.cable for link in plan.links}
    unknown = [quoted(ns) for ns in state.namespaces if ns not in namespaces]
    unknown += [quoted(f.device) for f in state.failures if f.device is not None and f.device not in devices]
    unknown += [f"cable {quoted(f.cable)}" for f in state.failures if f.cable is not None and f.cable not in cables]
    unknown += [f"endpoint {quoted(e.device)}" for e in state.endpoints if e.device not in plan.switches]
    if unknown:
        raise _refused(state.path, state.lab_id, f"it names what the build's plan has not: {', '.join(unknown[:5])}")


def running_lab(build_dir: Path) -> tuple[LabState, LabPlan]:
    """The lab that is up for `build_dir` and its plan; a LabError when there is none, the build
    changed under it or its state names what the build has not."""
    state = load_state(build_dir)
    if state is None or state.phase != "up":
        raise LabError(Problem("no lab is up for this build", file=str(build_dir), hint=f"start one: fabricgen lab up {build_dir}"))
    if manifest_hash(build_dir) != state.manifest_sha256:
        raise LabError(Problem(f"{build_dir} was rebuilt after the lab came up", hint=f"fabricgen lab down {build_dir}, then lab up again"))
    plan = read_plan(build_dir, state.network)
    check_against_plan(state, plan)
    return state, plan


def _refused(path: Path, lab_id: str, why: str, field: tuple = ()) -> LabError:
    return LabError(Problem(f"not a state file this lab wrote: {printable(why)}", hint=cleanup_hint(lab_id), file=str(path), field=field))


def _read_state_file(path: Path, lab_id: str) -> bytes | None:
    """The state file's bytes, None when there is none. Its directory and itself must be this
    user's and writable by nobody else, neither a symbolic link, the file a regular one (a FIFO is
    refused without blocking) of at most MAX_STATE_BYTES."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        directory = os.open(path.parent, flags | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        what = "a symbolic link" if exc.errno in (errno.ELOOP, errno.ENOTDIR) and path.parent.is_symlink() else f"unreadable ({exc.strerror})"
        raise _refused(path, lab_id, f"its directory {path.parent} is {what}") from None
    try:
        problem = _not_private(os.fstat(directory), "its directory")
        if problem:
            raise _refused(path, lab_id, problem)
        try:
            fd = os.open(path.name, flags, dir_fd=directory)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _refused(path, lab_id, "it is a symbolic link" if exc.errno == errno.ELOOP else f"it cannot be read ({exc.strerror})") from None
    finally:
        os.close(directory)
    try:
        info = os.fstat(fd)  # before any read: a directory or a FIFO opened here is not read at all
        problem = "it is not a regular file" if not stat.S_ISREG(info.st_mode) else _not_private(info, "it")
        if not problem and info.st_size > MAX_STATE_BYTES:
            problem = f"it is larger than {MAX_STATE_BYTES >> 20} MiB"
        if problem:
            raise _refused(path, lab_id, problem)
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(MAX_STATE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_STATE_BYTES:  # it grew after the check
        raise _refused(path, lab_id, f"it is larger than {MAX_STATE_BYTES >> 20} MiB")
    return data


def _not_private(info: os.stat_result, what: str) -> str | None:
    """Why a file or directory with `info` is not one only this user can have written, or None."""
    if info.st_uid != os.geteuid():
        return f"{what} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        return f"others may write {what} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None
