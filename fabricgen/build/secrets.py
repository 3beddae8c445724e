"""Secrets by name: the intent names them, the build writes a placeholder, values live elsewhere.

BGP keys, TACACS+/RADIUS keys, SNMPv3 keys, NTP keys and local users' password hashes never come
from an intent or a catalog (both live in git and in pull requests). The intent says which secret
a config line uses (`key: tacacs-key`); the build writes `<<secret=tacacs-key>>` there. The
placeholder fits every field it stands in (SONiC's YANG patterns refuse `:` in SNMPv3 keys and
`#`/`,` in TACACS+ keys, so it has none of them: a build directory is YANG-checked as built) and is
still no value anyone would choose: `push`, `secrets render` and the lab refuse a config that
still holds one (`missing_in`), and NX-OS refuses `<` in an encrypted key. Builds of fabricgen
before this form wrote `<<secret:NAME>>`; both are read (filled, listed, masked), only the new one
is written.

Where a secret may stand is declared once, below (`SLOTS`): each NOS's config lines and config_db
fields that carry one, with the values each takes per release. `secrets list`, `secrets render`
and `push` check every value against the slots it fills before anything is written or contacted;
`verify` masks exactly these slots in a build and in a device's running config.

Values come from the environment (`FABRICGEN_SECRET_<NAME>`, the name upper-cased with `-` as
`_`) or from a secrets file the user names (YAML `name: value`, mode 0600, owned by the user);
the environment wins. They are held in memory only: `Secrets.fill` substitutes them into a
config for `push` and `secrets render`, `Secrets.mask` takes them out of any text fabricgen prints.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from fabricgen.basics.errors import Problem, SecretsError, raise_if
from fabricgen.basics.trust import SECRET_MARK

SECRET_NAME = re.compile(r"[a-z][a-z0-9-]{0,62}")
PLACEHOLDER_PATTERN = re.compile(re.escape(SECRET_MARK) + r"[=:]([a-z][a-z0-9-]{0,62})>>")  # `:`: builds written before the `=` form
ENV_PREFIX = "FABRICGEN_SECRET_"
FILE_ENV = "FABRICGEN_SECRETS_FILE"
MAX_VALUE = 512  # a SHA-512 crypt hash is 106 characters; a BGP MD5 key at most 80
MAX_FILE_BYTES = 256 * 1024
MAX_FILE_NODES = 10_000


def check_secret_name(value: str) -> str:
    if not SECRET_NAME.fullmatch(value):
        # not quoted: whoever wrote a key here instead of its name must not see it echoed in CI logs
        raise ValueError(
            "this must be a secret name: 1-63 lower-case letters, digits or '-', starting with a letter; "
            "the value itself goes into the environment (FABRICGEN_SECRET_<NAME>) or a secrets file, never the intent"
        )
    return value


SecretName = Annotated[
    str,
    AfterValidator(check_secret_name),
    WithJsonSchema({"type": "string", "pattern": f"^{SECRET_NAME.pattern}$"}),
]


def placeholder(name: str) -> str:
    """What a build writes where the secret's value goes."""
    return f"{SECRET_MARK}={check_secret_name(name)}>>"


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper().replace("-", "_")


def names_in(text: str) -> set[str]:
    """The secrets a config refers to."""
    return set(PLACEHOLDER_PATTERN.findall(text))


def check_value(name: str, value: str, source: str) -> list[Problem]:
    """A value goes into a config line: one printable token, no space, bounded."""
    if not value:
        return [Problem(f"secret {name!r} is empty in {source}", hint="give it a value")]
    if len(value) > MAX_VALUE:
        return [Problem(f"secret {name!r} in {source} is {len(value)} characters; at most {MAX_VALUE}")]
    if any(ch.isspace() or not ch.isprintable() for ch in value) or not value.isascii():
        # a space or a newline would end the config line early or start another one
        return [Problem(f"secret {name!r} in {source} holds a space, a control or a non-ASCII character", hint="use printable ASCII without spaces")]
    if PLACEHOLDER_PATTERN.search(value):
        return [Problem(f"secret {name!r} in {source} is a placeholder, not a value")]
    return []


@dataclass(frozen=True)
class Secrets:
    """Secret values by name, in memory only (never in repr, logs or files fabricgen keeps)."""

    values: Mapping[str, str] = field(default_factory=dict, repr=False)

    def missing_in(self, text: str) -> list[str]:
        return sorted(names_in(text) - set(self.values))

    def fill(self, text: str, *, in_json: bool = False) -> str:
        """`text` with every placeholder replaced by its value; KeyError names a missing one.
        in_json: the placeholders stand inside JSON strings (SONiC config_db.json), so each value
        is written JSON-escaped: a `"` or `\\` in a key must not end the string early."""
        if in_json:
            return PLACEHOLDER_PATTERN.sub(lambda match: json.dumps(self.values[match.group(1)])[1:-1], text)
        return PLACEHOLDER_PATTERN.sub(lambda match: self.values[match.group(1)], text)

    def mask(self, text: str) -> str:
        """`text` with every value written as the placeholder of its secret: a message or a diff
        says which secret a line uses, never what it is. Longer values first, so one value that
        contains another is masked whole."""
        forms = {(value, name) for name, value in self.values.items() if value}
        forms |= {(json.dumps(value)[1:-1], name) for value, name in forms}  # as a JSON file or answer shows it
        for form, name in sorted(forms, key=lambda item: (-len(item[0]), item[1])):
            text = text.replace(form, placeholder(name))
        return text


def load_secrets(names: Iterable[str], secrets_file: Path | None = None, environ: Mapping[str, str] = os.environ) -> Secrets:
    """The values of `names` (the secrets a build refers to) that the environment or the secrets
    file holds; a name with no value is left out (the caller says whether that is an error).
    The file may hold more names than asked for; only the asked ones are kept."""
    wanted = set(names)
    values: dict[str, str] = {}
    problems: list[Problem] = []
    path = secrets_file or (Path(environ[FILE_ENV]) if environ.get(FILE_ENV) else None)
    if path is not None:
        for name, value in _read_file(path).items():
            if name in wanted:
                problems += check_value(name, value, str(path))
                values[name] = value
    for name in wanted:
        from_env = environ.get(env_name(name))
        if from_env is not None:
            problems += check_value(name, from_env, f"${env_name(name)}")
            values[name] = from_env
    raise_if(problems, SecretsError)
    return Secrets(values)


def _read_file(path: Path) -> dict[str, str]:
    """A secrets file: a regular file of the user's, readable by nobody else, a YAML mapping of
    secret names to string values. Never quoted in an error: it holds secrets."""
    from fabricgen.basics.yaml_source import parse_yaml  # the bounded loader; late: yaml_source imports errors

    shown = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: whoever can change a link could point it at another file
            raise_if([Problem("the secrets file is a symbolic link", file=shown, hint="name the file itself, not a link to it")], SecretsError)
        raise_if(
            [Problem(f"cannot open the secrets file: {exc.strerror}", file=shown, hint="name an existing file with --secrets or $" + FILE_ENV)], SecretsError
        )
    try:
        info = os.fstat(fd)
        problems = []
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem("the secrets file is not a regular file", file=shown))
        elif info.st_mode & 0o077:
            problems.append(
                Problem(
                    f"the secrets file is readable or writable by others (mode {stat.S_IMODE(info.st_mode):04o})",
                    file=shown,
                    hint=f"chmod 600 {shown}",
                )
            )
        elif info.st_uid != os.geteuid():
            problems.append(Problem(f"the secrets file belongs to another user (uid {info.st_uid})", file=shown, hint="use a file of your own"))
        elif info.st_size > MAX_FILE_BYTES:
            problems.append(Problem(f"the secrets file is {info.st_size} bytes; at most {MAX_FILE_BYTES}", file=shown))
        raise_if(problems, SecretsError)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:  # it grew after the check
        raise_if([Problem(f"the secrets file is over {MAX_FILE_BYTES} bytes", file=shown)], SecretsError)
    doc, problems = parse_yaml(raw, shown, "secrets file", quote_content=False, max_nodes=MAX_FILE_NODES)
    raise_if([_unquoted(problem) for problem in problems], SecretsError)
    data = doc.data
    if not isinstance(data, dict):
        raise_if(
            [Problem("the secrets file must be a mapping of secret names to values", file=shown, hint="write lines like `bgp-backend: <value>`")], SecretsError
        )
    problems = []
    values = {}
    for name, value in data.items():
        if not isinstance(name, str) or not SECRET_NAME.fullmatch(name):
            problems.append(
                Problem("the secrets file has a key that is not a secret name", file=shown, hint="lower-case letters, digits and '-', starting with a letter")
            )
        elif not isinstance(value, str):
            problems.append(Problem(f"secret {name!r} is not a string", file=shown, hint="quote the value"))
        else:
            values[name] = value
    raise_if(problems, SecretsError)
    return values


_QUOTED = re.compile(r"'[^'\n]*'|\([^)\n]*\)")


def _unquoted(problem: Problem) -> Problem:
    """A YAML problem of the secrets file without what it quotes from the file (the loader names
    a scalar it cannot read, `'...' is not a valid !!int`, and that scalar may be a value)."""
    return replace(problem, message=_QUOTED.sub("'...'", problem.message), hint=_QUOTED.sub("'...'", problem.hint))


# --- where a secret stands: the slots -------------------------------------------------------------
# Every place a NOS's files carry a secret, declared once: the renderers write placeholders only
# there (tests/test_secrets.py proves it for every shipped intent), `secrets list` reads each
# secret's use from its slot, the value checks take each slot's rules, and `verify` masks exactly
# these places on both sides of a drift: the build's placeholder and the device's value (NX-OS
# shows most keys encrypted: `ntp authentication-key 1 md5 <encrypted> 7`, `key 7 "<encrypted>"`).
# A few slots are never written by fabricgen (`placed=False`) but a device may hold them; they are
# masked all the same.

BGP_KEY = "BGP session key"
BGP_AO_KEY = "BGP TCP-AO key"
TACACS_KEY = "TACACS+ key"
RADIUS_KEY = "RADIUS key"
NTP_KEY = "NTP authentication key"
SNMP_AUTH_KEY = "SNMPv3 authentication key"
SNMP_PRIVACY_KEY = "SNMPv3 privacy key"
SNMP_COMMUNITY = "SNMP community"
USER_HASH = "local user password hash"
OSPF_KEY = "OSPF key"
LDAP_PASSWORD = "LDAP bind password"
MACSEC_KEY = "MACsec key"

MASK = "<<masked>>"  # what a masked slot shows, on both sides of a drift
NOS_NAMES = {"nxos": "NX-OS", "sonic": "SONiC", "frr": "FRR", "eos": "EOS"}


@dataclass(frozen=True)
class Rule:
    """The values a slot takes from a release on: a length range and the characters the field
    refuses (white space and control characters are refused everywhere: check_value)."""

    min_length: int
    max_length: int
    forbidden: str
    source: str  # the document or model that says so
    since: str | None = None  # the first SONiC branch it holds for; None: every release

    def problem(self, value: str) -> str | None:
        """What is wrong with `value` here, without quoting it; None when it fits."""
        if len(value) < self.min_length:
            return f"has {len(value)} characters; at least {self.min_length}"
        if len(value) > self.max_length:
            return f"has {len(value)} characters; at most {self.max_length}"
        refused = sorted({ch for ch in value if ch in self.forbidden})
        if refused:
            return "holds " + ", ".join(repr(ch) for ch in refused) + ", which this field refuses"
        return None

    def describe(self) -> str:
        refused = ", ".join(repr(ch) for ch in self.forbidden)
        return f"{self.min_length}-{self.max_length} characters" + (f" without {refused}" if refused else "") + f" ({self.source})"


_ANY = Rule(1, MAX_VALUE, "", "one token of printable ASCII; no tighter rule is documented")
DUMMY = "fabricgenDummy1"  # 15 letters and digits: inside every rule below but the password hash's form
CRYPT_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # crypt(3)'s hash characters, in order


def _branch(release: str | None) -> int | None:
    """A community SONiC branch as a number (master last); None for anything else."""
    if release == "master":
        return 999_999
    return int(release) if release is not None and len(release) == 6 and release.isdigit() else None


@dataclass(frozen=True)
class Slot:
    """One place a secret stands. Text configs (NX-OS, FRR): `line` finds it in a line, group
    `value` the secret, groups `kind` (the encryption type digit) and `flag` (`localizedkey`) are
    masked with it, since a device writes its own. config_db (SONiC): `table` and `field`, or the
    row's key when `field` is None (SNMP_COMMUNITY)."""

    nos: str  # nxos, frr (frr.conf and the lab's twins) or sonic (config_db.json)
    use: str  # what the secret is for, as `secrets list` says
    where: str  # how a person finds it
    rules: tuple[Rule, ...] = (_ANY,)  # by release, oldest first
    line: re.Pattern[str] | None = None
    table: str | None = None
    field: str | None = None
    dummy: str = DUMMY  # the form of a stand-in every rule of the slot takes, for tools that parse configs (Batfish)
    placed: bool = True  # fabricgen writes a placeholder here (else: only a device may hold it)

    def dummy_for(self, name: str) -> str:
        """A stand-in for secret `name` in this slot: of the slot's `dummy` form (a SHA-256 crypt
        hash, or 15 letters and digits), derived from the name alone, so the same secret gets the
        same stand-in on every switch (both ends of a keyed BGP session agree) and two secrets
        get two."""
        digest = hashlib.sha256(f"fabricgen dummy secret {name}".encode()).digest()
        if self.dummy.startswith("$5$"):  # crypt(3)'s SHA-256 form: $5$SALT$ and 43 characters of ./0-9A-Za-z
            salt = "".join(CRYPT_ALPHABET[b % 64] for b in digest[:8])
            body = hashlib.sha512(digest).digest()
            return f"$5${salt}${''.join(CRYPT_ALPHABET[b % 64] for b in body[:42])}{CRYPT_ALPHABET[body[42] % 16]}"
        if self.dummy.startswith("$6$"):  # crypt(3)'s SHA-512 form: $6$SALT$ and 86 characters of ./0-9A-Za-z
            salt = "".join(CRYPT_ALPHABET[b % 64] for b in digest[:8])
            body = hashlib.sha512(digest).digest() + hashlib.sha512(digest[::-1]).digest()
            return f"$6${salt}${''.join(CRYPT_ALPHABET[b % 64] for b in body[:85])}{CRYPT_ALPHABET[body[85] % 4]}"
        return "fgDummy" + digest[:4].hex()  # as DUMMY: 15 letters and digits

    def rule(self, release: str | None) -> Rule:
        """The rule for `release`; the strictest of all when the release is not a community
        SONiC branch the rules name (a vendor's SONiC, or unknown)."""
        if len(self.rules) == 1:
            return self.rules[0]
        number = _branch(release)
        if number is None:
            return Rule(
                max(r.min_length for r in self.rules),
                min(r.max_length for r in self.rules),
                "".join(sorted(set().union(*(r.forbidden for r in self.rules)))),
                "; ".join(r.source for r in self.rules) + "; the release is not one these rules name, so the strictest holds",
            )
        chosen = self.rules[0]
        for rule in self.rules:
            if rule.since is None or (_branch(rule.since) or 0) <= number:
                chosen = rule
        return chosen

    def strictest(self) -> Rule:
        return self.rule(None)


_KEY = r'(?P<value>"[^"]*"|\S+)'  # NX-OS quotes an encrypted key: key 7 "fewhg"
_NXOS_SNMP = "Cisco Nexus 9000 Series NX-OS System Management Configuration Guide, Configuring SNMP: passphrases of 8 to 64 characters in clear text"
_SONIC_SNMP = "sonic-snmp.yang SNMP_USER: length 0..64, pattern [^ @:]*, at least 8 with authentication (every branch 202405 to master)"
_SONIC_TACACS = "sonic-system-tacacs.yang passkey: pattern [^ #,]*, length 1..65"
_SONIC_RADIUS = "sonic-system-radius.yang passkey: pattern [^ #,]*, length 1..65 (every branch 202405 to master)"
_EOS_KEY = r"(?P<kind>(?:0|7|8a) )?(?P<value>\S+)"  # EOS: 0 the key in clear, 7 or 8a encrypted
_RFC3414 = "RFC 3414 11.2: an SNMPv3 passphrase of at least 8 characters"

SLOTS: tuple[Slot, ...] = (
    # NX-OS (fabricgen/nos/nxos/templates/system.j2, bgp.j2); Cisco Nexus 9000 Series NX-OS configuration guides 10.4(x)
    Slot(
        "nxos",
        USER_HASH,
        "username NAME password 5 HASH",
        line=re.compile(r"^username \S+ password (?P<kind>\d+ )?(?P<value>\S+)"),
        dummy="$5$fabricgen$0000000000000000000000000000000000000000000",
    ),
    Slot(
        "nxos",
        TACACS_KEY,
        "tacacs-server host ADDRESS key 0 KEY",
        (Rule(1, 63, "", "NX-OS Security Configuration Guide, Configuring TACACS+: a key of at most 63 printable characters, no white space"),),
        line=re.compile(r"^tacacs-server (?:host \S+ )?key (?P<kind>\d+ )?" + _KEY),
    ),
    Slot(
        "nxos",
        RADIUS_KEY,
        "radius-server host ADDRESS key 0 KEY",
        (Rule(1, 63, "", "NX-OS Security Configuration Guide, Configuring RADIUS: a key of at most 63 characters"),),
        line=re.compile(r"^radius-server (?:host \S+ )?key (?P<kind>\d+ )?" + _KEY),
    ),
    Slot("nxos", NTP_KEY, "ntp authentication-key ID md5 KEY 0", line=re.compile(r"^ntp authentication-key \d+ md5 " + _KEY + r"(?P<kind> \d+)?")),
    Slot(
        "nxos",
        SNMP_AUTH_KEY,
        "snmp-server user NAME ROLE auth ALGORITHM KEY",
        (Rule(8, 64, "", _NXOS_SNMP),),
        line=re.compile(r"^snmp-server user \S+ (?:\S+ )*?auth (?:md5|sha(?:-\d+)?) (?P<value>\S+)(?:(?P<flag> localized\w*key)$)?"),
    ),
    Slot(
        "nxos",
        SNMP_PRIVACY_KEY,
        "snmp-server user NAME ... priv aes-128 KEY",
        (Rule(8, 64, "", _NXOS_SNMP),),
        line=re.compile(r"^snmp-server user \S+ .*? priv (?:aes-128 |3des )?(?P<value>\S+)(?P<flag> localized\w*key)?"),
    ),
    Slot(
        "nxos",
        SNMP_COMMUNITY,
        "snmp-server community COMMUNITY",
        (Rule(1, 32, "", "NX-OS System Management Configuration Guide, Configuring SNMP: a community string of up to 32 characters"),),
        line=re.compile(r"^snmp-server community (?P<value>\S+)"),
    ),
    Slot("nxos", BGP_KEY, "router bgp: template peer / neighbor: password 0 KEY", line=re.compile(r"^\s+password (?P<kind>\d+ )?(?P<value>\S+)$")),
    Slot("nxos", BGP_AO_KEY, "key chain: key-string KEY", line=re.compile(r"^\s+key-string (?P<kind>\d+ )?(?P<value>\S+)"), placed=False),
    Slot(
        "nxos",
        OSPF_KEY,
        "interface: ip ospf authentication-key / message-digest-key",
        line=re.compile(r"^\s+ip ospf (?:authentication-key|message-digest-key \d+ md5) (?P<kind>\d+ )?(?P<value>\S+)"),
        placed=False,
    ),
    # EOS (fabricgen/nos/eos/templates/bgp.j2); EOS sets the key on the kernel's TCP-MD5 socket
    # option, so Linux's 80-byte limit holds (EOS's own CLI limit was not read)
    Slot(
        "eos",
        BGP_KEY,
        "router bgp: neighbor GROUP password 0 KEY",
        (Rule(1, 80, "", "Linux TCP_MD5SIG_MAXKEYLEN (include/uapi/linux/tcp.h): EOS runs BGP on Linux's TCP-MD5"),),
        line=re.compile(r"^\s+neighbor \S+ password (?P<kind>(?:0|7|8a) )?(?P<value>\S+)$"),
    ),
    # FRR (templates/frr/frr.conf.j2: SONiC's frr.conf and the lab's twins)
    Slot(
        "frr",
        BGP_KEY,
        "router bgp: neighbor PEER password KEY",
        (Rule(1, 80, "", "Linux TCP_MD5SIG_MAXKEYLEN (include/uapi/linux/tcp.h): bgpd sets the key with setsockopt(TCP_MD5SIG)"),),
        line=re.compile(r"^\s*neighbor \S+ password (?P<value>\S+)"),
    ),
    # EOS (fabricgen/nos/eos/templates/system.j2 and the BGP template); Arista EOS User Manual
    # 4.32: "User Security" (username secret, tacacs-server and radius-server key, encryption types
    # 0 clear, 7 and 8a encrypted), "SNMP" (snmp-server user ... v3 auth ... priv; the running
    # config shows the keys localized to the engine ID: `v3 localized ENGINEID auth sha256 KEY`),
    # "NTP" (ntp authentication-key ID md5 [0|7|8a] KEY), "Border Gateway Protocol" (neighbor
    # password). A key the device shows encrypted (type 7 or 8a) is masked with its type.
    Slot(
        "eos",
        USER_HASH,
        "username NAME privilege N role ROLE secret sha512 HASH",
        line=re.compile(r"^username \S+ (?:privilege \d+ )?(?:role \S+ )?secret (?P<kind>(?:sha512|5|0) )?(?P<value>\S+)"),
        dummy="$6$fabricgen$" + "0" * 86,
    ),
    Slot(
        "eos",
        USER_HASH,
        "enable password / aaa root secret: sha512 HASH",
        line=re.compile(r"^(?:enable password|aaa root secret) (?P<kind>(?:sha512|5|7|0) )?(?P<value>\S+)"),
        placed=False,
    ),
    Slot(
        "eos", TACACS_KEY, "tacacs-server host ADDRESS vrf VRF timeout N key 0 KEY", line=re.compile(r"^tacacs-server (?:host \S+ (?:\S+ )*?)?key " + _EOS_KEY)
    ),
    Slot(
        "eos", RADIUS_KEY, "radius-server host ADDRESS vrf VRF timeout N key 0 KEY", line=re.compile(r"^radius-server (?:host \S+ (?:\S+ )*?)?key " + _EOS_KEY)
    ),
    Slot("eos", NTP_KEY, "ntp authentication-key ID md5 0 KEY", line=re.compile(r"^ntp authentication-key \d+ (?:md5|sha1) " + _EOS_KEY)),
    Slot(
        "eos",
        SNMP_AUTH_KEY,
        "snmp-server user NAME GROUP v3 auth ALGORITHM KEY",
        (Rule(8, MAX_VALUE, "", _RFC3414),),
        # the algorithm is masked with the key: a device shows it beside the engine ID its key is localized to
        line=re.compile(r"^snmp-server user \S+ \S+ v3 (?P<flag>localized \S+ )?(?P<kind>auth \S+ )(?P<value>\S+)"),
    ),
    Slot(
        "eos",
        SNMP_PRIVACY_KEY,
        "snmp-server user NAME GROUP v3 ... priv aes KEY",
        (Rule(8, MAX_VALUE, "", _RFC3414),),
        line=re.compile(r"^snmp-server user \S+ \S+ v3 .*? priv (?P<kind>\S+ )(?P<value>\S+)"),
    ),
    Slot("eos", SNMP_COMMUNITY, "snmp-server community COMMUNITY ro", line=re.compile(r"^snmp-server community (?P<value>\S+)")),
    Slot(
        "eos",
        BGP_AO_KEY,
        "management security: session shared-secret profile NAME: secret ID 0 KEY",
        line=re.compile(r"^\s+secret \S+ " + _EOS_KEY),
        placed=False,
    ),
    Slot(
        "eos",
        OSPF_KEY,
        "interface: ip ospf authentication-key / message-digest-key",
        line=re.compile(r"^\s+ip ospf (?:authentication-key|message-digest-key \d+ md5) " + _EOS_KEY),
        placed=False,
    ),
    # SONiC config_db (nos/sonic/render.py), each from sonic-buildimage src/sonic-yang-models/yang-models
    *(
        Slot(
            "sonic",
            TACACS_KEY,
            f"{table}|... passkey",
            (Rule(1, 65, "#,", _SONIC_TACACS + " up to 202505"), Rule(1, 256, "#,", _SONIC_TACACS.replace("1..65", "1..256") + " from 202511", "202511")),
            table=table,
            field="passkey",
        )
        for table in ("TACPLUS", "TACPLUS_SERVER")
    ),
    *(
        Slot("sonic", RADIUS_KEY, f"{table}|... passkey", (Rule(1, 65, "#,", _SONIC_RADIUS),), table=table, field="passkey")
        for table in ("RADIUS", "RADIUS_SERVER")
    ),
    Slot("sonic", NTP_KEY, "NTP_KEY|ID value", (Rule(1, 64, "", "sonic-ntp.yang NTP_KEY value: length 1..64"),), table="NTP_KEY", field="value"),
    Slot(
        "sonic", SNMP_AUTH_KEY, "SNMP_USER|NAME SNMP_USER_AUTH_PASSWORD", (Rule(8, 64, "@:", _SONIC_SNMP),), table="SNMP_USER", field="SNMP_USER_AUTH_PASSWORD"
    ),
    Slot(
        "sonic",
        SNMP_PRIVACY_KEY,
        "SNMP_USER|NAME SNMP_USER_ENCRYPTION_PASSWORD",
        (Rule(8, 64, "@:", _SONIC_SNMP),),
        table="SNMP_USER",
        field="SNMP_USER_ENCRYPTION_PASSWORD",
    ),
    Slot(
        "sonic",
        SNMP_COMMUNITY,
        "SNMP_COMMUNITY|COMMUNITY (the row's key)",
        (Rule(4, 32, "@,\\'", "sonic-snmp.yang SNMP_COMMUNITY name: length 4..32, pattern [^ @,\\']* (every branch 202405 to master)"),),
        table="SNMP_COMMUNITY",
    ),
    Slot("sonic", LDAP_PASSWORD, "LDAP|global bind_password (sonic-system-ldap.yang)", table="LDAP", field="bind_password", placed=False),
    *(
        Slot("sonic", MACSEC_KEY, f"MACSEC_PROFILE|... {field} (sonic-macsec.yang)", table="MACSEC_PROFILE", field=field, placed=False)
        for field in ("primary_cak", "fallback_cak")
    ),
    *(
        Slot("sonic", BGP_KEY, f"{table}|... auth_password (sonic-bgp-common.yang)", table=table, field="auth_password", placed=False)
        for table in ("BGP_NEIGHBOR", "BGP_PEER_GROUP")
    ),
)

_TEXT_SLOTS = {nos: tuple(slot for slot in SLOTS if slot.nos == nos) for nos in ("nxos", "frr", "eos")}
# The NOSes whose whole config is one `configs/<switch>.cfg`. A .cfg of a switch whose NOS the
# caller does not say is read as the one whose slots hold its placeholders (placements): a few
# lines fit a slot of each (EOS's `tacacs-server host A ... key K` pattern takes NX-OS's
# `tacacs-server host A key K timeout T`), the file as a whole fits one.
CONFIG_NOSES = ("nxos", "eos")
_DB_SLOTS = {(slot.table, slot.field): slot for slot in SLOTS if slot.nos == "sonic"}


def file_nos(path: str, nos: str | None = None) -> str | None:
    """Which slots a build file has: a switch's one config (.cfg: NX-OS or EOS as `nos`, the
    switch's NOS, says; "cfg" when the caller does not know it: both), FRR (frr.conf, the lab's
    twins) or SONiC config_db (config_db.json); None for a file that holds no secret."""
    name = path.rsplit("/", 1)[-1]
    if name == "config_db.json":
        return "sonic"
    if name == "frr.conf" or (path.startswith("lab/frr/") and name.endswith(".conf")):
        return "frr"
    if name.endswith(".cfg"):
        return nos if nos in CONFIG_NOSES else "cfg"
    return None


@dataclass(frozen=True)
class Placement:
    """A placeholder where a slot says a secret goes."""

    name: str
    slot: Slot
    where: str  # `line 12` or `TACPLUS|global.passkey`


def placements(path: str, text: str, nos: str | None = None) -> tuple[list[Placement], list[str]]:
    """Every placeholder of a build file, in its slot; and where a placeholder stands outside
    every slot (a build edited by hand, or a renderer fabricgen must fix). `nos`: the switch's
    NOS, which tells an EOS `.cfg` from an NX-OS one (file_nos)."""
    nos = file_nos(path, nos)
    found: list[Placement] = []
    stray: list[str] = []
    if nos == "sonic":
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            return [], ["the file is not a JSON object"] if PLACEHOLDER_PATTERN.search(text) else []
        _db_placements(document, found, stray)
        return found, stray
    if nos == "cfg":  # NX-OS or EOS: the reading that leaves fewer placeholders outside a slot (a tie: NX-OS)
        return min((_text_placements(text, config_nos) for config_nos in CONFIG_NOSES), key=lambda reading: len(reading[1]))
    return _text_placements(text, nos or "")


def _text_placements(text: str, nos: str) -> tuple[list[Placement], list[str]]:
    found: list[Placement] = []
    stray: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if SECRET_MARK not in line:
            continue
        spans: dict[tuple[int, int], Slot] = {}
        for slot in _TEXT_SLOTS.get(nos, ()):
            match = slot.line.search(line) if slot.line else None
            if match:
                spans[match.span("value")] = slot
        for match in PLACEHOLDER_PATTERN.finditer(line):
            holder = spans.get(match.span())
            if holder is None:
                stray.append(f"line {number}")
            else:
                found.append(Placement(match.group(1), holder, f"line {number}"))
    return found, stray


def _db_placements(document: dict, found: list[Placement], stray: list[str]) -> None:
    for table, rows in document.items():
        if not isinstance(rows, dict):
            if PLACEHOLDER_PATTERN.search(json.dumps(rows)):
                stray.append(str(table))
            continue
        for key, row in rows.items():
            where = f"{table}|{key}"
            if PLACEHOLDER_PATTERN.search(key):
                slot = _DB_SLOTS.get((table, None))
                match = PLACEHOLDER_PATTERN.fullmatch(key)
                if slot is None or match is None:
                    stray.append(f"{table} (a key)")
                else:
                    found.append(Placement(match.group(1), slot, f"{table} (a key)"))
                    where = f"{table}|{SECRET_MARK}...>>"
            fields = row.items() if isinstance(row, dict) else [("", row)]
            for field_name, value in fields:
                if isinstance(value, str) and PLACEHOLDER_PATTERN.search(value):
                    slot = _DB_SLOTS.get((table, field_name))
                    match = PLACEHOLDER_PATTERN.fullmatch(value)
                    if slot is None or match is None:
                        stray.append(f"{where}.{field_name}")
                    else:
                        found.append(Placement(match.group(1), slot, f"{where}.{field_name}"))
                elif not isinstance(value, str) and PLACEHOLDER_PATTERN.search(json.dumps(value)):
                    stray.append(f"{where}.{field_name}")


def uses_in(path: str, text: str, nos: str | None = None) -> list[tuple[str, str]]:
    """(secret name, what it is used for) for each placeholder of a config file that stands in
    a slot, the use read from the slot (`placements` names those that do not)."""
    return [(placement.name, placement.slot.use) for placement in placements(path, text, nos)[0]]


def use_of(line: str, start: int | None = None) -> str:
    """What the placeholder at `start` of an NX-OS or FRR config line (the first one when None)
    is for, from the slot it stands in; a line of no slot: its first words, quoted."""
    match = PLACEHOLDER_PATTERN.search(line, start or 0)
    if match is not None:
        for slot in SLOTS:
            found = slot.line.search(line) if slot.line is not None else None
            if found and found.span("value") == match.span():
                return slot.use
    shown = " ".join(PLACEHOLDER_PATTERN.sub("", line).split()[:2])[:40]
    return f"a `{shown}` line" if shown else "a bare value"


# --- masking by slot -----------------------------------------------------------------------------


def mask_line(line: str, nos: str) -> str:
    """`line` with the secret of every slot it holds written as MASK, the encryption type and
    `localizedkey` flag that go with it left out (the build writes type 0, a device its own)."""
    for slot in _TEXT_SLOTS.get(nos, ()):
        assert slot.line is not None
        match = slot.line.search(line)
        if match is None:
            continue
        spans = [match.span(group) for group in ("kind", "value", "flag") if group in slot.line.groupindex and match.group(group) is not None]
        start, end = min(a for a, _ in spans), max(b for _, b in spans)
        line = line[:start] + MASK + line[end:]
    return line


def mask_text(text: str, nos: str) -> str:
    """An NX-OS or FRR config with every slot masked (mask_line, line by line)."""
    return "\n".join(mask_line(line, nos) if nos in _TEXT_SLOTS else line for line in text.split("\n"))


def mask_config_db(document: dict) -> dict:
    """A config_db (table -> key -> field -> value) with every slot's value written as MASK and
    every key that is a secret (an SNMP community) as MASK, numbered when a table has several.
    What is not a table of rows is kept as it is."""
    masked: dict = {}
    for table, rows in document.items():
        if not isinstance(rows, dict):
            masked[table] = rows
            continue
        key_slot = _DB_SLOTS.get((table, None))
        out: dict = {}
        for n, (key, row) in enumerate(rows.items(), start=1):
            name = (MASK if len(rows) == 1 else f"{MASK}#{n}") if key_slot is not None else key
            if isinstance(row, dict):
                row = {field_name: MASK if (table, field_name) in _DB_SLOTS else value for field_name, value in row.items()}
            out[name] = row
        masked[table] = out
    return masked


# --- values checked against their slots ----------------------------------------------------------


def value_problems(uses: Iterable[tuple[str, Slot, str | None, str]], secrets: Secrets) -> list[Problem]:
    """One problem per secret, slot and rule a value breaks. `uses`: (secret name, slot, the
    release of the switch, the switch). A secret with no value is not checked (the callers say
    it is missing). Messages name the secret, the field and the rule, never the value."""
    devices: dict[tuple[str, Slot, Rule, str], list[str]] = {}
    for name, slot, release, device in uses:
        value = secrets.values.get(name)
        if value is None:
            continue
        rule = slot.rule(release)
        what = rule.problem(value)
        if what is not None:
            devices.setdefault((name, slot, rule, what), []).append(device)
    problems = []
    for (name, slot, rule, what), where in devices.items():
        shown = ", ".join(sorted(set(where))[:3]) + (f" and {len(set(where)) - 3} more" if len(set(where)) > 3 else "")
        release = f" {rule.since} and later" if rule.since else ""
        problems.append(
            Problem(
                f"secret {name!r} {what}: it is the {slot.use} of {shown} ({NOS_NAMES[slot.nos]}{release}, {slot.where})",
                hint=f"give it a value of {rule.describe()}",
            )
        )
    return problems


def placeholder_problem(slot: Slot, name: str) -> str | None:
    """What keeps the placeholder of `name` from standing in `slot` on any release (its length:
    an SNMP community of SONiC takes at most 32 characters); None when it fits."""
    return slot.strictest().problem(placeholder(name))


def sonic_slot(table: str, field_name: str | None) -> Slot:
    """The declared slot of a config_db table and field (None: the row's key)."""
    return _DB_SLOTS[(table, field_name)]


def dummy_secrets(files: Mapping[str, str], noses: Mapping[str, str] | None = None) -> Secrets:
    """A valid stand-in for every secret the files (build path -> text) refer to, taken from
    the slot it stands in: for tools that parse configs but must never see a real key (Batfish).
    `noses`: each path's switch NOS, where a `.cfg` may be EOS (file_nos). Fill each file with
    `dummy_secrets(files).fill(text, in_json=path.endswith(".json"))`."""
    values: dict[str, str] = {}
    for path, text in files.items():
        found, _ = placements(path, text, (noses or {}).get(path))
        for placement in found:
            values.setdefault(placement.name, placement.slot.dummy_for(placement.name))
        for name in names_in(text):
            values.setdefault(name, DUMMY)
    return Secrets(values)
