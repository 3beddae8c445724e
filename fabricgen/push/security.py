"""How `fabricgen push` makes sure it talks to the real switch before it hands over the password.

Each NOS's PUSH part says which transport its driver speaks (`transport`), so which check applies:

- SONiC (SSH): the switch's host key must be listed in a known_hosts file (`--known-hosts FILE`,
  default ~/.ssh/known_hosts); `--trust-on-first-use` pins unknown keys in that file instead, and
  a listed key that changed is still refused (push/known_hosts.py does the checking).
- NX-OS (NX-API over HTTPS): the TLS certificate is verified against `--ca-bundle FILE` or the
  system's CAs (NAPALM's `ssl_verify`, which it hands to requests as `verify`; NAPALM's default is
  no verification). Plain http is refused.
- EOS (eAPI over HTTPS): the same `ssl_verify`, read by fabricgen's EOS driver, which verifies the
  certificate itself (pyeapi, under NAPALM's EOS driver, does not unless given an SSL context:
  nos/eos/push.py). It speaks HTTPS only.
- `--insecure` turns both checks off, explicitly, and the command warns on every run.

The inventory can name a CA bundle per device (`ssl_verify: FILE`) but cannot switch a check off:
`ssl_verify: false` or `transport: http` there is refused unless `--insecure` is given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fabricgen.basics.errors import Problem, PushError, raise_if
from fabricgen.basics.trust import check_host
from fabricgen.nos.interface import NosPackage, PushParts, plugins
from fabricgen.push import known_hosts
from fabricgen.push.inventory import Target, driver_parts

SSH, HTTPS = "ssh", "https"  # the transports fabricgen secures (PushParts.transport): host keys, TLS certificates


def _transport(target: Target) -> str:
    """The transport of the target's driver ("" for one no NOS gives, such as NAPALM's mock)."""
    parts = driver_parts().get(target.driver)
    return parts.transport if parts is not None else ""


@dataclass(frozen=True, slots=True)
class DeviceVerification:
    """What the push command's --known-hosts, --trust-on-first-use, --ca-bundle and --insecure say."""

    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    trust_on_first_use: bool = False  # pin unknown SSH host keys in known_hosts (which must be named)
    ca_bundle: Path | None = None  # None: the system's certificate authorities
    insecure: bool = False

    @property
    def host_keys(self) -> str:
        """The host_keys mode these options ask an SSH driver for (the SONiC driver's optional_args)."""
        if self.insecure:
            return known_hosts.ACCEPT_ANY
        return known_hosts.TRUST_ON_FIRST_USE if self.trust_on_first_use else known_hosts.VERIFY

    @property
    def known_hosts_file(self) -> Path:
        return (self.known_hosts or Path(known_hosts.DEFAULT_FILE)).expanduser()

    def check(self, targets: Iterable[Target]) -> None:
        """Raise PushError with every problem of these options and of the targets' own transport
        settings, before any device is contacted."""
        targets = list(targets)
        problems = self._option_problems(any(_transport(t) == SSH for t in targets))
        for target in targets:
            problems += _target_problems(target, self.insecure)
        raise_if(problems, PushError)

    def driver_args(self, target: Target) -> dict:
        """The optional_args to hand `target`'s NAPALM driver: the inventory's, with verification
        set as these options say (call `check` first: it refuses what this would override)."""
        args = dict(target.optional_args)
        transport = _transport(target)
        if transport == SSH:
            args |= {"host_keys": self.host_keys, "known_hosts": str(self.known_hosts_file)}
        elif transport == HTTPS:
            if self.insecure:
                args["ssl_verify"] = False
            elif isinstance(args.get("ssl_verify"), str):  # a device's own CA bundle wins
                args["ssl_verify"] = str(Path(args["ssl_verify"]).expanduser())
            else:
                args["ssl_verify"] = str(self.ca_bundle) if self.ca_bundle else True
        return args

    def warning(self, targets: Iterable[Target]) -> str:
        """One line naming what --insecure leaves unverified for these targets; "" without it."""
        if not self.insecure:
            return ""
        drivers = Counter(target.driver for target in targets)
        checked = {SSH: "the SSH host keys", HTTPS: "the TLS certificates"}
        unverified = [
            f"{checked[package.PUSH.transport]} of {drivers[package.PUSH.napalm_driver]} {package.TITLE} switch(es)"
            for package in sorted(plugins().values(), key=_ssh_first)
            if drivers[package.PUSH.napalm_driver]
        ]
        what = " and ".join(unverified) or "device identities (SSH host keys, TLS certificates)"
        return f"warning: --insecure: {what} are not verified; anyone on the path can pose as a switch and take the password"

    def _option_problems(self, any_ssh: bool) -> list[Problem]:
        problems = []
        if self.insecure:
            given = [
                name
                for name, value in (("--known-hosts", self.known_hosts), ("--trust-on-first-use", self.trust_on_first_use), ("--ca-bundle", self.ca_bundle))
                if value
            ]
            if given:
                problems.append(
                    Problem(
                        f"--insecure checks nothing, so {', '.join(given)} would be ignored",
                        hint="drop --insecure to verify the devices, or drop " + ", ".join(given),
                    )
                )
            return problems
        if self.trust_on_first_use and self.known_hosts is None:
            problems.append(
                Problem(
                    "--trust-on-first-use needs the file to pin host keys in",
                    hint="name it with --known-hosts FILE (a file of its own for the fabric is best; it is created if missing)",
                )
            )
        elif self.known_hosts is not None and self.known_hosts.exists() and not self.known_hosts.is_file():
            problems.append(Problem("is not a file", file=str(self.known_hosts), hint="--known-hosts names an OpenSSH known_hosts file"))
        elif any_ssh and not self.trust_on_first_use and not self.known_hosts_file.is_file():
            problems.append(
                Problem(
                    "no such known_hosts file: no SONiC switch's SSH host key could be verified",
                    file=str(self.known_hosts_file),
                    hint="list the switches' keys there (ssh-keyscan, then compare the fingerprints with the switches'), "
                    "or add --trust-on-first-use to pin them on first contact",
                )
            )
        if self.ca_bundle is not None and not self.ca_bundle.is_file():
            problems.append(
                Problem(
                    "no such CA bundle file",
                    file=str(self.ca_bundle),
                    hint="--ca-bundle names a PEM file of the CA certificates that signed the switches' NX-API or eAPI certificates",
                )
            )
        return problems


def _ssh_first(package: NosPackage) -> tuple[bool, str]:
    """The order --insecure's warning names NOSes in: those reached over SSH, then over HTTPS."""
    return (package.PUSH.transport != SSH, package.NAME)


def _target_problems(target: Target, insecure: bool) -> list[Problem]:
    """A target whose address is not a host, or whose inventory settings would switch TLS off."""
    problems = []
    try:
        check_host(target.host)
    except ValueError as exc:
        problems.append(Problem(str(exc), device=target.name))
    parts: PushParts | None = driver_parts().get(target.driver)
    if parts is None or parts.transport != HTTPS:
        return problems
    args = target.optional_args
    # the options that choose http or https (kind "transport" in its PUSH.driver_options), the first given wins
    schemes = [key for key, kind in parts.driver_options.items() if kind == "transport" and key in args]
    transport = args[schemes[0]] if schemes else "https"
    if transport != "https" and not insecure:
        problems.append(
            Problem(
                f"optional_args transport {transport!r} would send the password unencrypted",
                device=target.name,
                hint="remove it (NX-API over https is the default), or pass --insecure if you must",
            )
        )
    verify = args.get("ssl_verify")
    if verify is False and not insecure:
        problems.append(
            Problem(
                "optional_args ssl_verify: false would accept any TLS certificate",
                device=target.name,
                hint="name the CA bundle instead (ssl_verify: FILE or --ca-bundle FILE), or pass --insecure to turn verification off",
            )
        )
    elif isinstance(verify, str) and not Path(verify).expanduser().is_file():
        problems.append(Problem(f"optional_args ssl_verify: no such CA bundle file {verify!r}", device=target.name))
    return problems
