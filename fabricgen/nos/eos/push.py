"""NAPALM's EOS (eAPI) driver with what `fabricgen push` and `verify` need that it lacks.

What NAPALM 5.2's EOSDriver (napalm/eos/eos.py) gives, used as it is: a candidate loaded into a
configuration session (`configure session NAME`, `rollback clean-config` for a replace, then the
lines), its diff (`show session-config named NAME diffs`), commit-confirm through the session's
commit timer (`configure session NAME commit timer hh:mm:ss`, confirmed by `configure session
NAME commit`, the pending timer read from `show configuration sessions detail`, EOS 4.32's
`commitTimerSessionName` form included), `rollback` (aborting the pending session: EOS then
restores the previous config, User Manual "Configure Session"), and the getters.

What it lacks, added here:

1. A verified, bounded eAPI transport. The driver hands eAPI to pyeapi, whose HTTPS connection
   turns certificate verification OFF unless it is given an SSL context (pyeapi/eapilib.py
   HttpsEapiConnection: `disable_certificate_verification` when `context` is None), and whose
   `send` reads the whole answer into memory, however large, logs it at debug level (with the
   filled candidate in the request) and writes a traceback to stderr on a socket error
   (`_LOGGER.exception`). `VerifiedHttpsEapi` sends the same JSON-RPC request over HTTPS with the
   certificate verified against `ssl_verify` (a CA bundle, or the system's CAs), reads at most
   MAX_ANSWER bytes, and accepts only a JSON-RPC 2.0 answer with one result per command; it logs
   nothing. The password goes in the Basic authorization header only after the TLS handshake
   has verified the switch.
2. The commit timer's range. NAPALM formats `revert_in` as hh:mm:ss through time.gmtime, so a
   day or more wraps silently (86,460 s becomes 00:01:00); COMMIT_TIMER_RANGE refuses it first.
3. `get_boot_images`: the image the switch runs and boots (`show version`, `show boot-config`),
   which push compares with the image the intent pins before it commits.

And what push asks of EOS through the package's PUSH part: `candidate` (the config's text, secrets
filled in) and `replace_must_keep` (`missing_parts`: what an EOS config must keep for a replace).
"""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Mapping
from http.client import HTTPException
from pathlib import Path
from typing import TYPE_CHECKING

from napalm.base.exceptions import CommitError, ConnectionException
from napalm.eos.eos import EOSDriver
from pyeapi.eapilib import CommandError, ConnectionError, EapiConnection, HttpsConnection  # type: ignore[import-untyped]

from fabricgen.basics.trust import printable
from fabricgen.nos.eos import COMMIT_TIMER_RANGE, PUSH
from fabricgen.nos.indented_config import block

if TYPE_CHECKING:
    from fabricgen.nos.interface import SecretValues

MAX_ANSWER = 32 * 1024 * 1024  # bytes of one eAPI answer: a running config of a large chassis fits
MAX_MESSAGE = 400  # characters of a switch's error message kept
EAPI_PATH = "/command-api"  # eAPI's JSON-RPC endpoint (Command API Guide)
EAPI_PORT = 443
OPTIONS = tuple(PUSH.driver_options)  # the optional_args this driver reads (push/inventory.py checks their values)


class VerifiedHttpsEapi(EapiConnection):
    """eAPI's JSON-RPC over HTTPS: the certificate verified by `context`, the answer bounded and
    its envelope checked. NAPALM's EOSDriver builds it with the keyword arguments it finds in
    this signature (napalm/eos/eos.py `_process_optional_args_eapi`)."""

    def __init__(self, host, port=None, path=None, username=None, password=None, context=None, timeout=60, **kwargs):
        super().__init__()
        if not isinstance(context, ssl.SSLContext):
            raise ValueError("an SSL context that says how to verify the switch's certificate is required")
        self.transport = HttpsConnection(path or EAPI_PATH, host, int(port or EAPI_PORT), context=context, timeout=timeout)
        self.authentication(username, password)

    def send(self, data):
        """The decoded answer to the request `data` (a JSON-RPC runCmds text); ConnectionError when
        the switch cannot be reached or verified or answers something other than eAPI's JSON-RPC,
        CommandError when it refuses a command."""
        where = str(self.transport)
        try:
            body = data.encode()
            self.transport.putrequest("POST", EAPI_PATH)
            self.transport.putheader("Content-Type", "application/json-rpc")
            self.transport.putheader("Content-Length", str(len(body)))
            self.transport.putheader(*self._auth)
            self.transport.endheaders(message_body=body)
            response = self.transport.getresponse()
            status, reason = response.status, printable(response.reason)[:80]
            answer = response.read(MAX_ANSWER + 1)
        except ssl.SSLCertVerificationError as exc:
            raise ConnectionError(where, f"TLS certificate not trusted ({printable(exc.verify_message)[:120]}); nothing was sent") from None
        except (OSError, HTTPException) as exc:
            raise ConnectionError(where, f"{type(exc).__name__}: {printable(exc)[:MAX_MESSAGE]}") from None
        finally:
            self.transport.close()
        if len(answer) > MAX_ANSWER:
            raise ConnectionError(where, f"the answer is over {MAX_ANSWER} bytes; not read")
        if status == 401:
            raise ConnectionError(where, f"HTTP 401 {reason}: the switch refused the username or password")
        if status != 200:
            raise ConnectionError(where, f"HTTP {status} {reason}: not an eAPI answer")
        return _checked(answer, _command_count(data), where)


def _command_count(data: str) -> int:
    request = json.loads(data)
    return len(request["params"]["cmds"])


def _checked(answer: bytes, commands: int, where: str) -> dict:
    """The JSON-RPC answer, when it is one: an object with `result`, a list of one object per
    command, or with `error` (code, message, data), raised as CommandError."""
    try:
        decoded = json.loads(answer)
    except (ValueError, RecursionError):
        raise ConnectionError(where, "the answer is not JSON") from None
    if not isinstance(decoded, dict) or decoded.get("jsonrpc") != "2.0":
        raise ConnectionError(where, "the answer is not a JSON-RPC 2.0 object")
    error = decoded.get("error")
    if error is not None:
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
            raise ConnectionError(where, "the answer's error is not a JSON-RPC error object")
        data = error.get("data")
        outputs = data if isinstance(data, list) and len(data) <= commands else None
        errors = [e for item in outputs or [] if isinstance(item, dict) for e in item.get("errors", []) if isinstance(e, str)]
        message = printable(error["message"])[:MAX_MESSAGE]
        raise CommandError(error["code"], message, command_error=printable("; ".join(errors))[:MAX_MESSAGE], output=outputs)
    result = decoded.get("result")
    if not isinstance(result, list) or len(result) != commands or not all(isinstance(item, dict) for item in result):
        raise ConnectionError(where, f"the answer does not hold one result object for each of the {commands} command(s)")
    return decoded


def tls_context(verify: bool | str) -> ssl.SSLContext:
    """How to verify a switch's eAPI certificate: against the CA bundle `verify` names, the
    system's CAs (True), or not at all (False: --insecure). TLS 1.2 or later."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cafile=str(Path(verify).expanduser()) if isinstance(verify, str) else None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


class EosDriver(EOSDriver):
    """NAPALM's EOSDriver over VerifiedHttpsEapi; `commit_config(revert_in=N)` refuses a timer its
    hh:mm:ss cannot hold; `get_boot_images()` for push's image check. optional_args: `port` and
    `ssl_verify` (True, a CA bundle path, or False); nothing else."""

    def __init__(self, hostname, username, password, timeout=60, optional_args=None):
        args = dict(optional_args or {})
        unknown = sorted(set(args) - set(OPTIONS))
        if unknown:
            raise ValueError(f"optional_args {', '.join(unknown)} are not read by the EOS driver (it reads {', '.join(OPTIONS)})")
        self._verify = args.get("ssl_verify", True)
        eapi = {"transport": VerifiedHttpsEapi, "port": args.get("port", EAPI_PORT)}
        super().__init__(hostname, username, password, timeout=timeout, optional_args=eapi)

    def open(self):
        # the SSL context is made here, not in __init__: a CA bundle that cannot be read is then
        # this device's connection failure, reported with the others, not an exception of the rollout
        self.eapi_kwargs["context"] = tls_context(self._verify)
        try:
            super().open()
        except ConnectionError as exc:  # pyeapi's, raised by the first command: NAPALM's own kind, as its open() raises for the others
            raise ConnectionException(str(exc)) from None

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        if revert_in is not None:
            low, high = COMMIT_TIMER_RANGE
            if not low <= revert_in <= high:
                raise CommitError(f"EOS's commit timer (hh:mm:ss) takes {low}-{high} seconds, not {revert_in}")
        super().commit_config(message, revert_in)

    def get_boot_images(self) -> dict[str, str]:
        """{"next": the image file `show boot-config` names (flash:/EOS-4.32.2F.swi -> EOS-4.32.2F.swi),
        "current": that file when the running version (`show version`) is the one its name
        carries (Arista names images EOS-<version>.swi, EOS64-<version>.swi), else "EOS <version>"}."""
        boot, version = self._run_commands(["show boot-config", "show version"])
        image, running = boot.get("softwareImage"), version.get("version")
        if not isinstance(image, str) or not isinstance(running, str) or len(image) > 256 or not _VERSION.fullmatch(running):
            raise ValueError("show boot-config / show version did not answer an image file and a version")
        name = printable(image.rsplit("/", 1)[-1].rsplit(":", 1)[-1])
        return {"next": name, "current": name if name.endswith(f"-{running}.swi") else f"EOS {running}"}


_VERSION = re.compile(r"[0-9][0-9A-Za-z.-]{0,63}")
_MANAGEMENT_PORT = re.compile(r"interface Management[0-9/]+")


# --- what push asks of an EOS config -----------------------------------------------------------


def candidate(files: Mapping[str, str], secrets: SecretValues) -> str:
    """The switch's one config file, secrets filled in: what load_*_candidate(config=) takes."""
    (text,) = files.values()
    return secrets.fill(text)


def replace_must_keep(files: Mapping[str, str], boot_image: str | None) -> list[str]:
    """`missing_parts` of the switch's one config file (the boot image is no part of it)."""
    (text,) = files.values()
    return missing_parts(text)


def missing_parts(config: str) -> list[str]:
    """What an EOS config lacks that a replace must keep so the switch can still be reached,
    logged into and pushed to: a management port (Management1, or Management0 / Management1/1 of
    a chassis) with an address in a VRF the config declares, a login, SSH and eAPI (HTTPS) running
    in that VRF, telnet off. Config sessions apply a replace to a clean config (`rollback
    clean-config`), so whatever the build leaves out is gone. The boot image is not among them:
    `boot system` is no part of the running config."""
    lines = config.splitlines()
    top = {line.rstrip() for line in lines if line and not line[0].isspace()}
    missing = []
    management_port = next((line.split()[1] for line in lines if _MANAGEMENT_PORT.fullmatch(line.rstrip())), "Management1")
    port = block(lines, f"interface {management_port}")
    vrf = next((line.split()[1] for line in port if line.strip().startswith("vrf ") and len(line.split()) == 2), None)
    if vrf is None or f"vrf instance {vrf}" not in top or not any(re.match(r"\s+ip address \S+", line) for line in port):
        missing.append(f"`interface {management_port}` with `vrf NAME` (a `vrf instance NAME`) and an `ip address`")
    if not any(line.startswith("aaa authentication login") or re.match(r"username \S+ .*secret ", line) for line in top):
        missing.append("a login: `aaa authentication login ...` or a local `username ... secret`")
    for service, what in (("management ssh", "SSH"), ("management api http-commands", "eAPI")):
        service_block = block(lines, service)
        if not _runs_in(service_block, vrf):
            missing.append(f"{what} in the management VRF (`{service}` with `vrf {vrf or 'NAME'}` and `no shutdown`)")
        elif any(line == "   shutdown" for line in service_block):
            missing.append(f"{what} on (`{service}` has `shutdown`)")
    if any(line.strip() == "protocol http" for line in block(lines, "management api http-commands")):
        missing.append("eAPI over HTTPS only (`management api http-commands` has `protocol http`)")
    if any(line.strip() == "no shutdown" for line in block(lines, "management telnet")):
        missing.append("telnet off (the config has `management telnet` with `no shutdown`)")
    return missing


def _runs_in(service: list[str], vrf: str | None) -> bool:
    """A `management ...` block turns its service on in `vrf`: `vrf NAME` then `no shutdown` under it."""
    if vrf is None:
        return False
    inside = False
    for line in service:
        stripped, depth = line.strip(), len(line) - len(line.lstrip())
        if depth == 3 and stripped.startswith("vrf "):
            inside = stripped == f"vrf {vrf}"
        elif inside and depth > 3 and stripped == "no shutdown":
            return True
        elif depth <= 3 and stripped != "!":
            inside = False
    return False
