"""NAPALM's NX-OS (NX-API) driver with the two things `fabricgen push` needs that it lacks.

1. A candidate given as text is copied to the switch from memory. NAPALM 5.2's
   `load_replace_candidate(config=...)` first writes the text to a file under the local temp
   directory (napalm/nxos/nxos.py `_create_tmp_file`); with secrets filled in, that file would hold
   them. Here the text goes straight into an SCP upload (`scp.SCPClient.putfo`, over the same
   Netmiko SSH session NAPALM uses for its own file transfer) and is checked by its MD5 on the
   switch (`show file bootflash:NAME md5sum`, as Netmiko's CiscoNxosFileTransfer.remote_md5 does).

2. Commit-confirm. NAPALM 5.2's `commit_config(revert_in=...)` raises NotImplementedError on NX-OS.
   NX-OS has its own: `configure replace <file> commit-timeout <seconds>` replaces the running
   config and rolls it back by itself when the timer expires unless `configure replace commit` is
   entered before (Cisco Nexus 9000 Series NX-OS System Management Configuration Guide, 10.2(x),
   chapter "Performing Configuration Replace": "About Configuration Replace and Commit-timeout",
   "Performing a Configuration Replace"). NAPALM's own replace (`rollback running-config file`)
   has no such timer, so with revert_in this driver uses configure replace instead.

And what push asks of NX-OS through the package's PUSH part: `candidate` (the config's text,
secrets filled in) and `replace_must_keep` (what a replace must keep so the switch can still be
reached and logged into).
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from napalm.base.exceptions import CommitError, ReplaceConfigException
from napalm.nxos.nxos import NXOSDriver, ensure_netmiko_conn

from fabricgen.nos.indented_config import block
from fabricgen.nos.nxos import COMMIT_TIMEOUT_RANGE

if TYPE_CHECKING:
    from fabricgen.nos.interface import SecretValues

CONFIGURE_REPLACE = "configure replace {path} commit-timeout {seconds}"
CONFIGURE_REPLACE_COMMIT = "configure replace commit"


class NxosDriver(NXOSDriver):
    """NAPALM's NXOSDriver; `load_replace_candidate(config=)` never touches the local disk, and
    `commit_config(revert_in=N)` / `confirm_commit()` / `has_pending_commit()` use NX-OS's
    configure replace commit-timeout."""

    def __init__(self, hostname, username, password, timeout=60, optional_args=None):
        super().__init__(hostname, username, password, timeout=timeout, optional_args=optional_args)
        self._pending = False
        self._uploaded = False  # bootflash holds a candidate this driver copied there (secrets filled in)

    @ensure_netmiko_conn
    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        if config is None:
            super().load_replace_candidate(filename=filename)
            return
        self._put_from_memory(config)
        self._uploaded = True
        self.replace = True
        self.loaded = True

    def _put_from_memory(self, config: str) -> None:
        from scp import SCPClient  # NAPALM's and Netmiko's own SCP library

        data = config.encode()
        # Netmiko's put_file writes to f"{file_system}/{dest_file}" (netmiko/scp_handler.py)
        destination = f"{self._dest_file_system}/{self.candidate_cfg}"
        try:
            transport = self._netmiko_device.remote_conn.get_transport()
            with SCPClient(transport, socket_timeout=max(10.0, float(self.timeout))) as scp:
                scp.putfo(io.BytesIO(data), destination)
            answer = self._netmiko_device._send_command_str(f"show file {self._dest_file_system}{self.candidate_cfg} md5sum", read_timeout=300)
        except Exception as exc:  # noqa: BLE001 - any transfer trouble is a rejected candidate
            raise ReplaceConfigException(f"could not copy the candidate to {self._dest_file_system}{self.candidate_cfg}: {type(exc).__name__}") from None
        if hashlib.md5(data, usedforsecurity=False).hexdigest() not in answer:
            raise ReplaceConfigException(f"the candidate copied to {self._dest_file_system}{self.candidate_cfg} does not match what was sent (MD5)")

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if revert_in is None:
            super().commit_config(message)
            self._forget_candidate()
            return
        low, high = COMMIT_TIMEOUT_RANGE
        if not low <= revert_in <= high:
            raise CommitError(f"NX-OS commit-timeout must be {low}-{high} seconds, not {revert_in}")
        if self.loaded and not self.replace:  # a merge has no commit-timeout on NX-OS: say so before any change
            raise NotImplementedError("NX-OS has commit-confirm (configure replace commit-timeout) for replaces only, not merges")
        if not self.loaded:
            raise ReplaceConfigException("No config loaded.")
        if self._pending:
            raise CommitError("a commit is already waiting for confirmation")
        self._save_to_checkpoint(self.rollback_cfg)  # what rollback() restores, as NAPALM does
        command = CONFIGURE_REPLACE.format(path=f"{self._dest_file_system}{self.candidate_cfg}", seconds=revert_in)
        answers = self._send_command_list(["terminal dont-ask", command, "no terminal dont-ask"])
        answer = answers[1] if isinstance(answers, list) and len(answers) > 1 else {}
        text = f"{answer.get('msg', '')} {answer.get('error', '')}" if isinstance(answer, dict) else str(answer)
        if (isinstance(answer, dict) and answer.get("error")) or "failed" in text.lower():
            raise ReplaceConfigException(f"configure replace failed, the switch kept its config: {text.strip()}")
        self._pending = True
        self.loaded = False

    def confirm_commit(self) -> None:
        if not self._pending:
            raise CommitError("no commit is waiting for confirmation")
        self._send_command_list([CONFIGURE_REPLACE_COMMIT])
        self._pending = False
        self._copy_run_start()
        self._forget_candidate()

    def has_pending_commit(self) -> bool:
        return self._pending

    def rollback(self) -> None:
        self._pending = False
        super().rollback()
        self._forget_candidate()

    def _forget_candidate(self) -> None:
        """The committed candidate file holds the filled secrets in clear text: off bootflash once
        it has been applied (NAPALM leaves its own there; discard_config deletes an unapplied one)."""
        if self._uploaded:
            self._delete_file(self.candidate_cfg)
            self._uploaded = False


# --- what push asks of an NX-OS config -----------------------------------------------------------


def candidate(files: Mapping[str, str], secrets: SecretValues) -> str:
    """The switch's one config file, secrets filled in: what load_*_candidate(config=) takes."""
    (text,) = files.values()
    return secrets.fill(text)


def replace_must_keep(files: Mapping[str, str], boot_image: str | None) -> list[str]:
    """What a replace must keep so the switch can still be reached and logged into, and what the
    config lacks of it: the management VRF and mgmt0 in it, a login, SSH on and telnet off, the
    boot image (the one the build pins, when it pins one)."""
    (config,) = files.values()
    lines = config.splitlines()
    top = {line.rstrip() for line in lines if line and not line[0].isspace()}
    missing = []
    if "vrf context management" not in top:
        missing.append("`vrf context management`")
    mgmt0 = block(lines, "interface mgmt0")
    if not any(line.strip() == "vrf member management" for line in mgmt0) or not any(re.match(r"\s+ip address \S+", line) for line in mgmt0):
        missing.append("`interface mgmt0` with `vrf member management` and an `ip address`")
    if not any(line.startswith("aaa authentication login") or re.match(r"username \S+ ", line) for line in top):
        missing.append("a login: `aaa authentication login ...` or a local `username`")
    # SSH: Cisco Nexus 9000 NX-OS Security Configuration Guide, "Configuring SSH and Telnet":
    # `feature ssh` (the SSH server) and `feature telnet` (off by default; a replace without it
    # turns it off, so `no feature telnet` or its absence both do).
    if "feature ssh" not in top:
        missing.append("`feature ssh`")
    if "feature telnet" in top:
        missing.append("telnet off (the config has `feature telnet`)")
    boot = [line for line in top if line.startswith("boot nxos ")]
    if not boot:
        missing.append("the boot image (`boot nxos bootflash:...`)")
    elif boot_image and not any(line.endswith(boot_image) for line in boot):
        missing.append(f"`boot nxos` naming the pinned image {boot_image}")
    return missing
