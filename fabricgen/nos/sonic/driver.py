"""A NAPALM driver for SONiC over SSH: replace a switch's config_db and frr.conf with a build's,
compare first, commit with a checkpoint, roll back; read BGP neighbors and facts.

In: the device's address and credentials, and a candidate: one JSON text
`{"config_db": {...}, "frr": "..."}` held in memory (what `fabricgen push` gives, secrets filled in),
or a fabricgen SONiC device directory (`configs/<device>/` with config_db.json and frr.conf).
Out: NAPALM's return formats. Commit-confirm (`commit_config(revert_in=N)`, `confirm_commit()`,
`has_pending_commit()`) is a timer on the device itself, so it outlives fabricgen.

config_db goes through sonic-utilities (`config checkpoint/replace/rollback/save`); frr.conf goes
through FRR's own `frr-reload.py`, inside the `bgp` container on a real SONiC. The password is
only ever handed to paramiko: no command line, file or message carries it, and paramiko sends it
only after the switch's host key passed the check of known_hosts.py (during the key exchange).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import io
import json
import re
import secrets
import shlex
import time
from pathlib import Path
from typing import Any

import paramiko
from napalm.base import NetworkDriver
from napalm.base.exceptions import (
    CommandErrorException,
    CommitError,
    ConnectAuthError,
    ConnectionException,
    ConnectTimeoutError,
    MergeConfigException,
    ReplaceConfigException,
)

from fabricgen.basics.trust import quoted
from fabricgen.nos.sonic import answers as sonic_answers
from fabricgen.push import known_hosts

# --- vendor commands, all in one place ------------------------------------------------------------
SHOW_CONFIG_DB = "show runningconfiguration all"  # the running CONFIG_DB as JSON
SHOW_VERSION = "show version"
CONFIG_CHECKPOINT = "config checkpoint {name}"
CONFIG_REPLACE = "config replace {path}"
CONFIG_ROLLBACK = "config rollback {name}"
CONFIG_SAVE = "config save -y"  # running CONFIG_DB -> /etc/sonic/config_db.json (survives reboot)
STARTUP_CONFIG_DB = "/etc/sonic/config_db.json"
FRR_CONF = "/etc/sonic/frr/frr.conf"  # the bgp container's /etc/frr/frr.conf on a real SONiC
STATE_DIR = "/etc/sonic/fabricgen"  # checkpoints of FRR: its running config and the old frr.conf
LAST_CHECKPOINT = f"{STATE_DIR}/last-checkpoint"
# What `frr-reload.py --test` still lists right after a successful reload of a config: lines FRR
# accepts but never shows in its running config (defaults written out, like `detect-multiplier 3`
# or `no bgp ebgp-requires-policy`). Kept with the sha256 of the config it belongs to, so pushing
# the same config again compares as unchanged instead of listing them forever.
FRR_RESIDUAL = f"{STATE_DIR}/frr-residual"
# no-header: the saved copy must load again through frr-reload (vtysh -m rejects the
# "Building configuration..." banner)
VTYSH_RUNNING = "vtysh -c 'show running-config no-header'"
VTYSH_VERSION = "vtysh -c 'show version'"
VTYSH_BGP_SUMMARY = "vtysh -c 'show bgp vrf all summary json'"
VTYSH_BGP_NEIGHBORS = "vtysh -c 'show bgp vrf all neighbors json'"  # only for the peers' router ids
VTYSH_ROUTES = "vtysh -c 'show ip route json'"  # FRR zebra: the default VRF's IPv4 table
FRR_RELOAD = "/usr/lib/frr/frr-reload.py"
# Read-only getters (sonic-utilities 202405 unless said otherwise).
# lldpd's own client, in the `lldp` container on SONiC (scripts/lldpshow runs `docker exec -i lldp
# lldpctl`); JSON since lldpd 0.7.9 (src/client/json_writer.c)
LLDPCTL_JSON = "lldpctl -f json"
# show/interfaces/__init__.py: `show interfaces status` = `intfutil -c status`, `show interfaces
# description` = `intfutil -c description`; scripts/intfutil prints tabulate tables (no JSON option)
SHOW_INTERFACES_STATUS = "show interfaces status"
INTERFACES_STATUS_HEADER = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]
SHOW_INTERFACES_DESCRIPTION = "show interfaces description"
INTERFACES_DESCRIPTION_HEADER = ["Interface", "Oper", "Admin", "Alias", "Description"]
# Counters come from COUNTERS_DB itself, read as portstat, pfcstat and pfcwd read it, in one
# sonic-db-cli call: `portstat -j` lacks octets and the unicast/multicast/broadcast split
# (utilities_common/portstat.py cnstat_print), pfcstat and `pfcwd show stats` have no JSON, and all
# three print differences against a user's `sonic-clear` snapshot, where verify needs cumulative
# counters. sonic-db-cli passes EVAL to redis (swss-common sonic-db-cli usage, example 4) and
# prints a string reply as is (common/redisreply.cpp), so the script answers one JSON text.
DB_CLI_EVAL = "sonic-db-cli {db} EVAL {script} 0 {args}"
# every COUNTERS:<oid> hash named in a name map (COUNTERS_PORT_NAME_MAP: port -> oid,
# COUNTERS_QUEUE_NAME_MAP: "Ethernet0:3" -> oid), only the fields asked for
NAME_MAP_COUNTERS = """-- fabricgen: name-map counters
local names = redis.call('HGETALL', ARGV[1])
local result = {}
for i = 1, #names, 2 do
  local values = redis.call('HMGET', 'COUNTERS:' .. names[i + 1], unpack(ARGV, 2))
  local entry = {}
  for j = 2, #ARGV do
    if values[j - 1] then entry[ARGV[j]] = values[j - 1] end
  end
  result[names[i]] = entry
end
return cjson.encode(result)
"""
# every hash whose key matches ARGV[1], whole
TABLE_BY_PATTERN = """-- fabricgen: table by pattern
local result = {}
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  local flat = redis.call('HGETALL', key)
  local entry = {}
  for i = 1, #flat, 2 do entry[flat[i]] = flat[i + 1] end
  result[key] = entry
end
return cjson.encode(result)
"""
# NAPALM's get_interfaces_counters names -> the SAI counters portstat sums (utilities_common/portstat.py counter_bucket_dict)
PORT_COUNTERS = {
    "tx_errors": "SAI_PORT_STAT_IF_OUT_ERRORS",
    "rx_errors": "SAI_PORT_STAT_IF_IN_ERRORS",
    "tx_discards": "SAI_PORT_STAT_IF_OUT_DISCARDS",
    "rx_discards": "SAI_PORT_STAT_IF_IN_DISCARDS",
    "tx_octets": "SAI_PORT_STAT_IF_OUT_OCTETS",
    "rx_octets": "SAI_PORT_STAT_IF_IN_OCTETS",
    "tx_unicast_packets": "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
    "rx_unicast_packets": "SAI_PORT_STAT_IF_IN_UCAST_PKTS",
    "tx_multicast_packets": "SAI_PORT_STAT_IF_OUT_MULTICAST_PKTS",
    "rx_multicast_packets": "SAI_PORT_STAT_IF_IN_MULTICAST_PKTS",
    "tx_broadcast_packets": "SAI_PORT_STAT_IF_OUT_BROADCAST_PKTS",
    "rx_broadcast_packets": "SAI_PORT_STAT_IF_IN_BROADCAST_PKTS",
}
PFC_COUNTER = "SAI_PORT_STAT_PFC_{priority}_{way}_PKTS"  # scripts/pfcstat counter_bucket_rx_dict/_tx_dict
PFCWD_STORMS = "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"  # pfcwd/main.py STATS_DESCRIPTION, per queue
# per queue; scripts/wredstat reads it (sonic-utilities master); 202405's queuestat has no ECN counter
ECN_MARKED = "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"
# STATE_DB TRANSCEIVER_DOM_SENSOR|<port>: what `show interfaces transceiver eeprom --dom` shows
# (scripts/sfpshow reads it; xcvrd writes it); absent without optics or DOM
DOM_SENSOR = "TRANSCEIVER_DOM_SENSOR|"
# Every answer is read up to a bound (more is a CommandErrorException): a hostile or runaway one
# cannot fill fabricgen's memory. A config_db, FRR's JSON or running config, a counters table:
MAX_ANSWER = 32 * 1024 * 1024  # bytes; a bigger one is not a switch's
# a host name, /proc/uptime, a version banner, an image list, a staging path, a checkpoint name:
SHORT_ANSWER = 64 * 1024
# Runs on FRR's side (host or container) with a config on stdin. The config gets a directory of
# its own and frr-reload gets it as --confdir: a file named <confdir>/frr.conf is "the" config, so
# frr-reload skips its closing `vtysh write` (this driver owns /etc/sonic/frr/frr.conf). The empty
# vtysh.conf keeps vtysh from warning about a missing one; --stdout keeps the log out of
# /var/log/frr and in the answer.
FRR_WITH_CONFIG = (
    'd=$(mktemp -d) && : > "$d/vtysh.conf" && cat > "$d/frr.conf" && '
    + FRR_RELOAD
    + ' {mode} --stdout --confdir "$d" "$d/frr.conf"; rc=$?; rm -rf "$d"; exit $rc'
)
STAGING = "mktemp -d /tmp/fabricgen-candidate.XXXXXX"  # mktemp -d makes it mode 700
STAGED_PATH = re.compile(r"/tmp/fabricgen-candidate\.[A-Za-z0-9]{6,}")
# `sonic-installer list` prints "Current: IMAGE", "Next: IMAGE", "Available:" and one image a line
# (sonic-utilities sonic_installer/main.py, list_command)
SONIC_INSTALLER_LIST = "sonic-installer list"
# Commit-confirm: a shell script on the device that sleeps, then restores the checkpoint exactly as
# rollback() does, unless confirm_commit() removed CONFIRM_PENDING first. Claiming the pending file
# with mv makes confirm and revert exclusive: whichever comes first wins, the other sees it gone.
CONFIRM_TIMER = f"{STATE_DIR}/confirm-timer.sh"
TIMER_COMMAND = f"sh {CONFIRM_TIMER}"  # how _start_timer runs it; _kill_timer knows the timer by it
MAX_REVERT_IN = 86_400  # a day: a longer wait for confirmation is a mistake, not a plan
CONFIRM_PENDING = f"{STATE_DIR}/confirm-pending"
CONFIRM_PID = f"{STATE_DIR}/confirm-timer.pid"
CONFIRM_LOG = f"{STATE_DIR}/confirm-timer.log"
CONFIRM_SCRIPT = """#!/bin/sh
# fabricgen commit-confirm timer: restores checkpoint {name} after {seconds} s unless the commit is
# confirmed (confirm_commit() removes {pending} and stops this script).
sleep {seconds} &
echo "$$ $!" > {pid}
wait $!
rm -rf {staged}
mv {pending} {pending}.reverting 2>/dev/null || exit 0
rc=0
{{ {config_rollback} && {config_save}; }} >/dev/null 2>&1 || rc=1
{frr_reload} < {saved} >/dev/null 2>&1 || rc=$((rc + 2))
cp -p {old_frr} {frr_conf} || rc=$((rc + 4))
rm -f {residual} {pending}.reverting {pid}
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) not confirmed within {seconds} s: restored {name} (status $rc)" >> {log}
exit $rc
"""


class SonicDriver(NetworkDriver):
    """NAPALM driver for SONiC. optional_args:

    - port (22); key_file: a private key to log in with (the password then unlocks nothing else);
    - frr_container ("bgp"): the docker container FRR runs in; "" when FRR runs on the host;
    - lldp_container ("lldp"): the docker container lldpd runs in; "" when it runs on the host;
    - sudo (True unless logged in as root): prefix privileged commands with `sudo -n`;
    - host_keys ("verify"): "verify" refuses a host key that `known_hosts` does not list for the
      device; "trust-on-first-use" pins an unknown one in that file (a listed one must still
      match); "accept-any" checks nothing. Checked before the password is sent;
    - known_hosts ("~/.ssh/known_hosts"): the OpenSSH known_hosts file to check against.
    """

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60, optional_args: dict | None = None) -> None:
        self.hostname = hostname
        self.username = username
        self.password = password
        self.timeout = timeout
        args = dict(optional_args or {})
        self.port = int(args.get("port", 22))
        self.key_file = args.get("key_file")
        self.frr_container = args.get("frr_container", "bgp")
        self.lldp_container = args.get("lldp_container", "lldp")
        self.sudo = bool(args.get("sudo", username != "root"))
        self.host_keys = args.get("host_keys", known_hosts.VERIFY)
        if self.host_keys not in known_hosts.MODES:
            raise ValueError(f"host_keys must be one of {', '.join(known_hosts.MODES)}, not {self.host_keys!r}")
        self.known_hosts_file = Path(args.get("known_hosts") or known_hosts.DEFAULT_FILE).expanduser()
        self.pinned_host_key = ""  # what trust-on-first-use pinned at open(), as ssh-keygen -lf names it
        self._ssh: paramiko.SSHClient | None = None
        self._staged: str | None = None  # the candidate's directory on the device
        self._candidate: dict[str, str] | None = None  # {"config_db": canonical JSON, "frr": text}
        self._checkpoint: str | None = None

    # --- connection -------------------------------------------------------------------------------

    def open(self) -> None:
        where = f"{self.hostname}:{self.port}"
        client = paramiko.SSHClient()
        policy = known_hosts.prepare(client, self.hostname, self.port, self.host_keys, self.known_hosts_file)
        try:
            client.connect(
                self.hostname,
                port=self.port,
                username=self.username,
                password=self.password,
                key_filename=self.key_file,
                timeout=self.timeout,
                banner_timeout=self.timeout,
                auth_timeout=self.timeout,
                allow_agent=False,
                look_for_keys=False,  # only what the caller gave: no surprise keys from ~/.ssh
            )
        except known_hosts.HostKeyError:
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:  # listed with another key: paramiko's own check
            client.close()
            raise known_hosts.changed_key(known_hosts.server_name(self.hostname, self.port), exc.key, exc.expected_key, self.known_hosts_file) from None
        except paramiko.AuthenticationException:
            client.close()
            raise ConnectAuthError(f"{where}: authentication failed for user {self.username!r} (wrong password or key)") from None
        except TimeoutError:
            client.close()
            raise ConnectTimeoutError(f"{where} is unreachable: no answer within {self.timeout} s") from None
        except OSError as exc:  # refused, no route, name not found (paramiko's NoValidConnectionsError too)
            client.close()
            raise ConnectionException(f"{where} is unreachable: {exc.strerror or exc}") from None
        except paramiko.SSHException as exc:
            client.close()
            raise ConnectionException(f"{where}: SSH failed: {exc}") from None
        if isinstance(policy, known_hosts.PinUnknown) and policy.pinned is not None:
            self.pinned_host_key = known_hosts.describe(policy.pinned)
        self._ssh = client

    def close(self) -> None:
        """Also removes a candidate that was loaded and not committed: staging is per session."""
        if self._ssh is not None:
            with contextlib.suppress(Exception):  # a dead connection cannot clean up; closing must still work
                self.discard_config()
            self._ssh.close()
            self._ssh = None

    def is_alive(self) -> dict[str, bool]:
        transport = self._ssh.get_transport() if self._ssh else None
        return {"is_alive": bool(transport and transport.is_active())}

    # --- running commands -------------------------------------------------------------------------

    def _exec(self, command: str, stdin: str | None = None, timeout: float | None = None, limit: int = MAX_ANSWER) -> tuple[int, str, str]:
        """Exit status, stdout and stderr of `command`; at most `limit` bytes of stdout (more is a
        CommandErrorException, the channel closed at once: a hostile answer does not fill
        fabricgen's memory) and MAX_ANSWER of stderr."""
        if self._ssh is None:
            raise ConnectionException(f"{self.hostname}: not connected (call open() first)")
        stdin_file, stdout, stderr = self._ssh.exec_command(command, timeout=timeout or self.timeout)
        # A command may end before it reads all of stdin (127: the shell found no docker; a wrong
        # option): the switch then closes the channel and paramiko's write raises "Socket is
        # closed". Its exit status and stderr below say why, not the write.
        with contextlib.suppress(OSError):
            if stdin is not None:
                stdin_file.write(stdin)
            stdin_file.channel.shutdown_write()  # EOF: commands reading stdin finish
        try:
            chunks, size = [], 0
            while chunk := stdout.read(65536):
                size += len(chunk)
                if size > limit:
                    stdout.channel.close()
                    raise CommandErrorException(f"{self.hostname}: `{command[:200]}` answered more than {limit} bytes")
                chunks.append(chunk)
            out = b"".join(chunks).decode(errors="replace")
            err = stderr.read(MAX_ANSWER).decode(errors="replace")
        except TimeoutError:
            raise CommandErrorException(f"{self.hostname}: `{command[:200]}` did not finish within {timeout or self.timeout} s") from None
        return stdout.channel.recv_exit_status(), out, err

    def _privileged(self, command: str) -> str:
        return f"sudo -n {command}" if self.sudo else command

    def _frr(self, command: str) -> str:
        """`command` (a shell command line) run where FRR runs."""
        if self.frr_container:
            return self._privileged(f"docker exec -i {shlex.quote(self.frr_container)} sh -c {shlex.quote(command)}")
        return self._privileged(f"sh -c {shlex.quote(command)}")

    def _run(self, command: str, what: str, stdin: str | None = None, timeout: float | None = None, limit: int = MAX_ANSWER) -> str:
        """stdout of `command` (at most `limit` bytes); a CommandErrorException naming `what` when it fails."""
        status, out, err = self._exec(command, stdin, timeout, limit)
        if status != 0:
            raise CommandErrorException(f"{self.hostname}: {what} failed (exit {status}): {_tail(err or out)}")
        return out

    def _frr_reload(self, mode: str, config: str) -> tuple[int, str, str]:
        return self._exec(self._frr(FRR_WITH_CONFIG.format(mode=mode)), stdin=config, timeout=max(self.timeout, 120))

    def _write_file(self, path: str, text: str, what: str) -> None:
        quoted = shlex.quote(path)
        self._run(self._privileged(f"sh -c {shlex.quote(f'cat > {quoted}.new && mv {quoted}.new {quoted}')}"), what, stdin=text)

    # --- candidate --------------------------------------------------------------------------------

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        """The candidate, checked here, then staged on the device (mktemp -d: mode 700).

        `config`: one JSON text `{"config_db": {...tables...}, "frr": "...frr.conf text..."}`, held
        in memory only (fabricgen push fills secrets into it; it is never written locally).
        `filename`: a fabricgen SONiC device directory (config_db.json and frr.conf), or its
        config_db.json with frr.conf beside it."""
        if config is not None:
            config_db, frr = _parse_candidate(config)
        elif filename is not None:
            config_db, frr = _read_candidate(Path(filename))
        else:
            raise ReplaceConfigException("load_replace_candidate needs config= (JSON with config_db and frr) or filename= (a SONiC device directory)")
        self.discard_config()
        staged = self._run(STAGING, "creating the staging directory", limit=SHORT_ANSWER).strip()
        if not STAGED_PATH.fullmatch(staged):  # the device's answer becomes an `rm -rf` argument
            raise ReplaceConfigException(f"{self.hostname}: mktemp answered {quoted(staged)}, not a staging directory")
        canonical = _canonical(config_db)
        sftp = self._ssh.open_sftp()  # type: ignore[union-attr]
        try:
            sftp.putfo(io.BytesIO(canonical.encode()), f"{staged}/config_db.json")
            sftp.putfo(io.BytesIO(frr.encode()), f"{staged}/frr.conf")
        finally:
            sftp.close()
        self._staged = staged
        self._candidate = {"config_db": canonical, "frr": frr}

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise MergeConfigException(
            "SonicDriver does not merge: `config load` would add config_db entries and `vtysh -f` FRR lines, "
            "but nothing could be checked or rolled back as one change; use a replace (SONiC keeps its local "
            "Linux users, the image's admin, outside config_db, so a replace cannot delete them)"
        )

    def discard_config(self) -> None:
        if self._staged is not None and self._ssh is not None:
            self._exec(f"rm -rf {shlex.quote(self._staged)}")
        self._staged = None
        self._candidate = None

    def compare_config(self) -> str:
        """What a commit would change, "" when nothing: a unified diff of the running config_db
        against the candidate's (canonical JSON), then the lines frr-reload.py would delete and add."""
        candidate = self._require_candidate()
        running = _canonical(self._running_config_db())
        db_diff = "".join(
            difflib.unified_diff(
                running.splitlines(keepends=True), candidate["config_db"].splitlines(keepends=True), "running config_db", "candidate config_db.json"
            )
        )
        status, out, err = self._frr_reload("--test", candidate["frr"])
        if status == 127:  # the shell found no docker/frr-reload: a setting, not the config
            raise CommandErrorException(
                f"{self.hostname}: cannot run FRR's tools there ({_tail(err)}); check optional_args frr_container ('{self.frr_container}')"
            )
        if status != 0:
            raise CommandErrorException(f"{self.hostname}: FRR rejects the candidate frr.conf: {_frr_error(out, err)}")
        parts = []
        if db_diff:
            parts.append(f"=== config_db: running -> candidate (unified diff) ===\n{db_diff}")
        if out.strip() and out.strip() != self._residual(candidate["frr"]):
            parts.append(f"=== frr.conf: what frr-reload.py would change (frr-reload.py --test) ===\n{out.strip()}\n")
        return "\n".join(parts)

    # --- commit and rollback ----------------------------------------------------------------------

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Checkpoint (config_db and FRR), then replace config_db, save it, install frr.conf and
        reload FRR. A failing step undoes the steps before it and raises CommitError naming it.

        revert_in=N: commit-confirm. Before anything changes, a detached timer is started on the
        device (setsid: it outlives this SSH session and fabricgen) that restores the checkpoint
        after N seconds exactly as rollback() does, unless confirm_commit() cancels it first."""
        if revert_in is not None and (not isinstance(revert_in, int) or not 1 <= revert_in <= MAX_REVERT_IN):
            raise CommitError(f"{self.hostname}: revert_in must be 1-{MAX_REVERT_IN} seconds, not {revert_in!r}")
        if revert_in is not None and self.has_pending_commit():
            raise CommitError(f"{self.hostname}: a commit is already waiting for confirmation (confirm_commit() or rollback() first)")
        if self._candidate is None or self._staged is None:
            raise CommitError(f"{self.hostname}: no candidate loaded: call load_replace_candidate first")
        candidate, staged = self._candidate, self._staged
        status, out, err = self._frr_reload("--test", candidate["frr"])
        if status != 0:
            raise CommitError(f"{self.hostname}: commit failed at 'check frr.conf' (nothing was changed): FRR rejects it: {_frr_error(out, err)}")
        name = f"fabricgen-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"
        undo: list[tuple[str, Any]] = []  # (what, how) of every applied step, undone in reverse
        step = "checkpoint"
        try:
            self._checkpoint_frr(name)
            self._run(self._privileged(CONFIG_CHECKPOINT.format(name=name)), "config checkpoint")
            self._write_file(LAST_CHECKPOINT, name + "\n", "recording the checkpoint")
            self._checkpoint = name
            if revert_in is not None:
                step = "starting the confirm timer"
                self._start_timer(name, revert_in, staged)
            step = "config replace"
            undo.append(("config_db", lambda: self._restore_config_db(name)))
            self._run(self._privileged(CONFIG_REPLACE.format(path=shlex.quote(f"{staged}/config_db.json"))), step)
            step = "config save"
            self._run(self._privileged(CONFIG_SAVE), step)
            step = "install frr.conf"
            undo.append(("frr", lambda: self._restore_frr(name)))
            self._run(self._privileged(f"cp {shlex.quote(f'{staged}/frr.conf')} {FRR_CONF}"), step)
            # the staged files hold the filled secrets and are installed now: gone at once, so a
            # fabricgen killed from here on leaves no candidate on the device
            self._exec(f"rm -rf {shlex.quote(staged)}")
            self._staged = None
            step = "frr-reload"
            status, out, err = self._frr_reload("--reload", candidate["frr"])
            if status != 0:
                raise CommandErrorException(f"frr-reload.py --reload failed (exit {status}): {_frr_error(out, err)}")
        except Exception as exc:  # noqa: BLE001 - whatever broke (SSH, a command), undo what was applied
            if revert_in is not None:  # first, so the timer does not restore at the same time
                with contextlib.suppress(Exception):
                    self._cancel_timer()
            restored, failed = [], []
            for what, how in reversed(undo):
                try:
                    how()
                    restored.append(what)
                except Exception as undo_exc:  # noqa: BLE001 - report every undo that failed
                    failed.append(f"{what}: {undo_exc}")
            outcome = f"restored {', '.join(restored)}" if restored else "nothing was changed"
            if failed:
                outcome = f"restoring failed ({'; '.join(failed)}): the switch may be half-applied, run rollback()"
            raise CommitError(f"{self.hostname}: commit failed at '{step}' ({outcome}): {exc}") from None
        # Only an optimisation of the next compare: failing to record it must not undo the commit.
        status, out, _ = self._frr_reload("--test", candidate["frr"])
        if status == 0:
            self._exec(self._privileged(f"sh -c {shlex.quote(f'cat > {FRR_RESIDUAL}')}"), stdin=f"{_sha256(candidate['frr'])}\n{out.strip()}\n")
        self.discard_config()

    def confirm_commit(self) -> None:
        """Keep the pending commit: the confirm timer is cancelled. CommitError when it already
        fired (the device is back on its checkpoint) or nothing was pending."""
        status, _, _ = self._exec(self._privileged(f"rm {CONFIRM_PENDING}"))
        if status != 0:
            raise CommitError(f"{self.hostname}: no commit waiting for confirmation: the confirm timer already restored the checkpoint, or there was none")
        self._kill_timer()

    def has_pending_commit(self) -> bool:
        status, _, _ = self._exec(self._privileged(f"test -f {CONFIRM_PENDING}"))
        return status == 0

    def _start_timer(self, name: str, seconds: int, staged: str) -> None:
        """Write the timer script (no secret in it: it names files) and start it detached. It also
        removes the staged candidate (filled secrets), should this session die before it does."""
        script = CONFIRM_SCRIPT.format(
            seconds=int(seconds),
            staged=shlex.quote(staged),
            pending=CONFIRM_PENDING,
            pid=CONFIRM_PID,
            log=CONFIRM_LOG,
            name=name,
            config_rollback=self._privileged(CONFIG_ROLLBACK.format(name=name)),
            config_save=self._privileged(CONFIG_SAVE),
            frr_reload=self._frr(FRR_WITH_CONFIG.format(mode="--reload")),
            saved=f"{STATE_DIR}/{name}.frr-running.conf",
            old_frr=f"{STATE_DIR}/{name}.frr.conf",
            frr_conf=FRR_CONF,
            residual=FRR_RESIDUAL,
        )
        self._write_file(CONFIRM_TIMER, script, "writing the confirm timer")
        self._write_file(CONFIRM_PENDING, name + "\n", "arming the confirm timer")
        # setsid: a session of its own, so neither the end of this SSH session (SIGHUP) nor
        # fabricgen's death stops it; every descriptor away from the SSH channel, so exec returns
        self._run(self._privileged(f"sh -c {shlex.quote(f'setsid {TIMER_COMMAND} </dev/null >/dev/null 2>&1 &')}"), "starting the confirm timer")

    def _cancel_timer(self) -> None:
        self._exec(self._privileged(f"rm -f {CONFIRM_PENDING}"))
        self._kill_timer()

    def _kill_timer(self) -> None:
        # The pid file holds the script's pid (setsid made it its process group's leader, the
        # group holds its sleep) and its sleep's. Those numbers are only the timer's while it runs:
        # after a reboot in the confirm window, or a timer that ended, they may be any other
        # process's, so the group is killed only while its leader's command line is still exactly
        # TIMER_COMMAND, as _start_timer starts it (a pattern would match this very shell's).
        is_timer = f'[ "$(tr "\\0" " " < /proc/"$leader"/cmdline)" = "{TIMER_COMMAND} " ]'
        check_and_kill = f'read leader _ < {CONFIRM_PID} && {is_timer} && kill -TERM -"$leader"'
        self._exec(self._privileged(f"sh -c {shlex.quote(f'test -s {CONFIRM_PID} && {check_and_kill}; rm -f {CONFIRM_PID}')}"))

    def rollback(self) -> None:
        """Back to the last commit's checkpoint: config_db (`config rollback`, saved), FRR's
        running config (frr-reload) and /etc/sonic/frr/frr.conf. A pending confirm timer is
        cancelled first."""
        name = self._checkpoint or self._run(self._privileged(f"cat {LAST_CHECKPOINT}"), "reading the last checkpoint", limit=SHORT_ANSWER).strip()
        if not name:
            raise CommandErrorException(f"{self.hostname}: no checkpoint to roll back to")
        self._cancel_timer()
        self._restore_config_db(name)
        self._restore_frr(name)
        self._exec(self._privileged(f"rm -f {FRR_RESIDUAL}"))

    def _residual(self, frr: str) -> str | None:
        """The residual recorded when this very frr.conf was last committed here, if it was."""
        status, out, _ = self._exec(self._privileged(f"cat {FRR_RESIDUAL}"))
        digest, _, residual = out.partition("\n")
        return residual.strip() if status == 0 and digest == _sha256(frr) else None

    def _checkpoint_frr(self, name: str) -> None:
        running = self._run(self._frr(VTYSH_RUNNING), "reading FRR's running config")
        self._run(self._privileged(f"mkdir -p {STATE_DIR}"), "creating " + STATE_DIR)
        self._write_file(f"{STATE_DIR}/{name}.frr-running.conf", running, "saving FRR's running config")
        self._run(self._privileged(f"cp -p {FRR_CONF} {STATE_DIR}/{name}.frr.conf"), "keeping the old frr.conf")

    def _restore_config_db(self, name: str) -> None:
        self._run(self._privileged(CONFIG_ROLLBACK.format(name=name)), "config rollback")
        self._run(self._privileged(CONFIG_SAVE), "config save")

    def _restore_frr(self, name: str) -> None:
        saved = self._run(self._privileged(f"cat {STATE_DIR}/{name}.frr-running.conf"), "reading the saved FRR config")
        status, out, err = self._frr_reload("--reload", saved)
        if status != 0:
            raise CommandErrorException(f"frr-reload.py of the saved running config failed (exit {status}): {_frr_error(out, err)}")
        self._run(self._privileged(f"cp -p {STATE_DIR}/{name}.frr.conf {FRR_CONF}"), "restoring the old frr.conf")

    # --- getters ----------------------------------------------------------------------------------

    def get_facts(self) -> dict[str, Any]:
        """NAPALM's format from the running config_db (DEVICE_METADATA, PORT), `show version`
        (FRR's when sonic-utilities has none), `hostname` when config_db names none, /proc/uptime."""
        config_db = self._running_config_db()
        metadata = self._parsed(SHOW_CONFIG_DB, lambda: sonic_answers.device_metadata(config_db))
        if metadata.get("hostname"):
            hostname = self._parsed(SHOW_CONFIG_DB, lambda: sonic_answers.host_name(metadata["hostname"], "DEVICE_METADATA hostname"))
        else:
            hostname = self._answer("hostname", "hostname", sonic_answers.host_name, limit=SHORT_ANSWER)
        status, out, _ = self._exec(SHOW_VERSION, limit=SHORT_ANSWER)
        version = self._parsed(SHOW_VERSION, lambda: sonic_answers.sonic_version(out)) if status == 0 else ""
        if not version:  # no sonic-utilities `show version`: say which FRR runs
            version = self._answer(self._frr(VTYSH_VERSION), "FRR version", lambda text: sonic_answers.first_line(text, "FRR version"), limit=SHORT_ANSWER)
        return {
            "uptime": self._answer("cat /proc/uptime", "uptime", sonic_answers.uptime, limit=SHORT_ANSWER),
            "vendor": "SONiC",
            "os_version": version,
            "serial_number": metadata.get("serial", ""),
            "model": metadata.get("hwsku", ""),
            "hostname": hostname,
            "fqdn": hostname,
            "interface_list": self._parsed(SHOW_CONFIG_DB, lambda: sonic_answers.port_names(config_db)),
        }

    def get_boot_images(self) -> dict[str, str]:
        """{"current": the image running now, "next": the one the next boot loads} from
        `sonic-installer list`."""
        return self._answer(self._privileged(SONIC_INSTALLER_LIST), SONIC_INSTALLER_LIST, sonic_answers.boot_images, limit=SHORT_ANSWER)

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False, format: str = "text") -> dict[str, str]:
        """running: the running config_db (JSON) then FRR's running config, each under a `!` header
        line; startup: /etc/sonic/config_db.json and /etc/sonic/frr/frr.conf; candidate: the loaded one."""
        if sanitized:
            raise NotImplementedError("SonicDriver does not sanitize configs")
        result = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            result["running"] = _labelled(
                _canonical(self._running_config_db()), SHOW_CONFIG_DB, self._run(self._frr(VTYSH_RUNNING), "reading FRR's running config"), VTYSH_RUNNING
            )
        if retrieve in ("all", "startup"):
            db = self._run(self._privileged(f"cat {STARTUP_CONFIG_DB}"), "reading " + STARTUP_CONFIG_DB)
            frr = self._run(self._privileged(f"cat {FRR_CONF}"), "reading " + FRR_CONF)
            result["startup"] = _labelled(db, STARTUP_CONFIG_DB, frr, FRR_CONF)
        if retrieve in ("all", "candidate") and self._candidate:
            result["candidate"] = _labelled(self._candidate["config_db"], "candidate config_db.json", self._candidate["frr"], "candidate frr.conf")
        return result

    def get_bgp_neighbors(self) -> dict[str, dict[str, Any]]:
        """NAPALM's format from FRR's `show bgp vrf all summary json` (FRR 8.4: vrf -> address
        family -> peers); the peers' router ids and accepted prefixes from `show bgp vrf all
        neighbors json`. Both parsed strictly (sonic_answers.bgp_summary, bgp_details)."""
        summary = self._answer(self._frr(VTYSH_BGP_SUMMARY), "show bgp vrf all summary json", sonic_answers.bgp_summary)
        details = self._answer(self._frr(VTYSH_BGP_NEIGHBORS), "show bgp vrf all neighbors json", lambda text: sonic_answers.bgp_details(text, summary))
        return sonic_answers.bgp_neighbors(summary, details)

    def get_lldp_neighbors_detail(self, interface: str = "") -> dict[str, list[dict[str, Any]]]:
        """NAPALM's format from lldpd's `lldpctl -f json`, run where lldpd runs (lldp_container)."""
        detail = self._answer(self._lldp(LLDPCTL_JSON), LLDPCTL_JSON, sonic_answers.lldp_neighbors_detail)
        return {port: neighbours for port, neighbours in detail.items() if not interface or port == interface}

    def get_lldp_neighbors(self) -> dict[str, list[dict[str, str]]]:
        return sonic_answers.lldp_neighbors(self.get_lldp_neighbors_detail())

    def get_interfaces(self) -> dict[str, dict[str, Any]]:
        """NAPALM 4's format (speed in Mbps, float) from `show interfaces status` and `show
        interfaces description`; the MAC is the switch's (DEVICE_METADATA|localhost mac in
        config_db, sonic-yang-models sonic-device_metadata.yang): SONiC routes every front panel
        port with it. "" when config_db does not hold it."""
        status = self._answer(SHOW_INTERFACES_STATUS, SHOW_INTERFACES_STATUS, lambda text: sonic_answers.simple_table(text, INTERFACES_STATUS_HEADER))
        descriptions = self._answer(
            SHOW_INTERFACES_DESCRIPTION, SHOW_INTERFACES_DESCRIPTION, lambda text: sonic_answers.simple_table(text, INTERFACES_DESCRIPTION_HEADER)
        )
        config_db = self._running_config_db()
        mac = self._parsed(SHOW_CONFIG_DB, lambda: sonic_answers.device_metadata(config_db)).get("mac", "")
        if mac and not re.fullmatch(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}", mac):
            raise CommandErrorException(f"{self.hostname}: `{SHOW_CONFIG_DB}`: DEVICE_METADATA mac is {quoted(mac)}, not a MAC address")
        return self._parsed(SHOW_INTERFACES_STATUS, lambda: sonic_answers.interfaces(status, descriptions, mac))

    def get_interfaces_counters(self) -> dict[str, dict[str, int]]:
        """NAPALM's format from COUNTERS_DB (the SAI counters portstat reads); -1: not kept."""
        ports = self._counters("COUNTERS_PORT_NAME_MAP", list(PORT_COUNTERS.values()))
        return self._parsed("COUNTERS_DB port counters", lambda: sonic_answers.interfaces_counters(ports, PORT_COUNTERS))

    def get_lossless_counters(self) -> dict[str, dict[str, Any]]:
        """fabricgen's extension: {port: {"pfc_rx": {priority: frames}, "pfc_tx": {...},
        "pfcwd_storms": int | None, "ecn_marked": int | None}}, cumulative, from COUNTERS_DB: the
        PFC frames pfcstat shows, the storms `show pfcwd stats` shows (summed over the port's
        queues; None where the watchdog watches no queue) and the queues' WRED ECN marks (None
        where SONiC keeps none: 202405 counts none)."""
        pfc = [PFC_COUNTER.format(priority=p, way=way) for way in ("RX", "TX") for p in range(8)]
        ports = self._counters("COUNTERS_PORT_NAME_MAP", pfc)
        queues = self._counters("COUNTERS_QUEUE_NAME_MAP", [PFCWD_STORMS, ECN_MARKED])
        return self._parsed("COUNTERS_DB PFC counters", lambda: sonic_answers.lossless_counters(ports, queues, PFC_COUNTER, PFCWD_STORMS, ECN_MARKED))

    def get_optics(self) -> dict[str, dict[str, Any]]:
        """NAPALM's format from STATE_DB TRANSCEIVER_DOM_SENSOR (what `show interfaces transceiver
        eeprom --dom` shows); empty without optics that report DOM."""
        command = DB_CLI_EVAL.format(db="STATE_DB", script=shlex.quote(TABLE_BY_PATTERN), args=shlex.quote(DOM_SENSOR + "*"))
        table = self._answer(command, "sonic-db-cli STATE_DB TRANSCEIVER_DOM_SENSOR", sonic_answers.string_tables)
        return self._parsed("STATE_DB TRANSCEIVER_DOM_SENSOR", lambda: sonic_answers.optics(table, DOM_SENSOR))

    def get_ecmp_widths(self) -> dict[str, int]:
        """fabricgen's extension: {prefix: next hops installed} of the default VRF's IPv4 routes,
        from FRR (`show ip route json`, where FRR runs)."""
        return self._answer(self._frr(VTYSH_ROUTES), "show ip route json", sonic_answers.ecmp_widths)

    # --- helpers ----------------------------------------------------------------------------------

    def _lldp(self, command: str) -> str:
        """`command` run where lldpd runs."""
        if self.lldp_container:
            return self._privileged(f"docker exec -i {shlex.quote(self.lldp_container)} {command}")
        return self._privileged(command)

    def _answer(self, command: str, what: str, parse, limit: int = MAX_ANSWER):
        """`parse` of `command`'s answer (at most `limit` bytes); a malformed one is a
        CommandErrorException naming `what`."""
        text = self._run(command, what, limit=limit)
        return self._parsed(what, lambda: parse(text))

    def _parsed(self, what: str, parse):
        try:
            return parse()
        except sonic_answers.AnswerError as exc:
            raise CommandErrorException(f"{self.hostname}: `{what}` answered something else than documented: {exc}") from None

    def _counters(self, name_map: str, fields: list[str]) -> dict[str, dict[str, int]]:
        args = " ".join(shlex.quote(arg) for arg in (name_map, *fields))
        command = DB_CLI_EVAL.format(db="COUNTERS_DB", script=shlex.quote(NAME_MAP_COUNTERS), args=args)
        return self._answer(command, f"sonic-db-cli COUNTERS_DB {name_map}", sonic_answers.counters_json)

    def _running_config_db(self) -> dict:
        return self._answer(self._privileged(SHOW_CONFIG_DB), SHOW_CONFIG_DB, sonic_answers.config_db)

    def _require_candidate(self) -> dict[str, str]:
        if self._candidate is None:
            raise ReplaceConfigException(f"{self.hostname}: no candidate loaded: call load_replace_candidate first")
        return self._candidate


def _parse_candidate(config: str) -> tuple[dict, str]:
    """The JSON candidate; errors say what is wrong, never quote it (it holds secrets)."""
    try:
        value = json.loads(config)
    except ValueError as exc:
        raise ReplaceConfigException(f"the candidate is not JSON (line {getattr(exc, 'lineno', '?')}, column {getattr(exc, 'colno', '?')})") from None
    if not isinstance(value, dict) or set(value) != {"config_db", "frr"}:
        raise ReplaceConfigException('the candidate must be a JSON object {"config_db": {...}, "frr": "..."}')
    config_db, frr = value["config_db"], value["frr"]
    if not isinstance(config_db, dict):
        raise ReplaceConfigException("the candidate's config_db is not a JSON object of tables")
    if not isinstance(frr, str) or not frr.strip():
        raise ReplaceConfigException("the candidate's frr is empty or not text")
    return config_db, frr


def _read_candidate(path: Path) -> tuple[dict, str]:
    directory = path if path.is_dir() else path.parent
    db_path, frr_path = (path if path.is_file() else directory / "config_db.json"), directory / "frr.conf"
    for required in (db_path, frr_path):
        if not required.is_file():
            raise ReplaceConfigException(f"{required} is missing: a SONiC candidate is config_db.json and frr.conf in one directory")
    try:
        config_db = json.loads(db_path.read_text())
    except ValueError as exc:
        raise ReplaceConfigException(f"{db_path} is not valid JSON: {exc}") from None
    if not isinstance(config_db, dict):
        raise ReplaceConfigException(f"{db_path} is not a config_db (a JSON object of tables)")
    frr = frr_path.read_text()
    if not frr.strip():
        raise ReplaceConfigException(f"{frr_path} is empty")
    return config_db, frr


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(config_db: dict) -> str:
    return json.dumps(config_db, indent=4, sort_keys=True) + "\n"


def _labelled(config_db: str, db_source: str, frr: str, frr_source: str) -> str:
    return f"! config_db ({db_source})\n{config_db.rstrip()}\n! frr ({frr_source})\n{frr.rstrip()}\n"


def _frr_error(out: str, err: str) -> str:
    """frr-reload's complaint without its INFO chatter."""
    lines = [line for line in (err + "\n" + out).splitlines() if line.strip() and " INFO: " not in line and "vtysh.conf" not in line]
    return _tail("\n".join(lines))


def _tail(text: str, limit: int = 800) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
