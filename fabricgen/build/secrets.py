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

Where a secret may stand is declared once (`slots()`): each NOS package gives the config lines
and config_db fields of its files that carry one, with the values each takes per release (its
SECRETS: fabricgen/nos/<name>/secret_slots.py), and FRR's are here. `secrets list`, `secrets render`
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
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from fabricgen.basics.errors import Problem, SecretsError, raise_if
from fabricgen.basics.trust import SAYS, SECRET_MARK
from fabricgen.nos import registry

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
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^{SECRET_NAME.pattern}$",
            SAYS: "a secret's name: a lower-case letter, then lower-case letters, digits and '-', at most 63 characters",
        }
    ),
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
# Every place a NOS's files carry a secret, declared once (each NOS package's SECRETS, FRR's
# below): the renderers write placeholders only there (tests/test_secrets.py proves it for every
# shipped intent), `secrets list` reads each secret's use from its slot, the value checks take each
# slot's rules, and `verify` masks exactly these places on both sides of a drift: the build's
# placeholder and the device's value (NX-OS shows most keys encrypted: `ntp authentication-key 1
# md5 <encrypted> 7`, `key 7 "<encrypted>"`).
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

    nos: str  # the NOS package whose files hold it (its SECRETS), or FRR (frr.conf and the lab's twins)
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


FRR = "frr"  # the slots of FRR's config (SONiC's frr.conf and the lab's twins), beside the NOSes' own
# FRR is no NOS: its config is the shared templates/frr/frr.conf.j2, which SONiC and the lab's
# routing twins of every other NOS render, so its slots live here with the machinery.
FRR_SLOTS: tuple[Slot, ...] = (
    Slot(
        FRR,
        BGP_KEY,
        "router bgp: neighbor PEER password KEY",
        (Rule(1, 80, "", "Linux TCP_MD5SIG_MAXKEYLEN (include/uapi/linux/tcp.h): bgpd sets the key with setsockopt(TCP_MD5SIG)"),),
        line=re.compile(r"^\s*neighbor \S+ password (?P<value>\S+)"),
    ),
)


def _is_frr_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name == "frr.conf" or (path.startswith("lab/frr/") and name.endswith(".conf"))


@dataclass(frozen=True)
class _SlotIndex:
    """Every slot by the NOS (or FRR) whose files hold it, as the registry's packages give them
    (each package's SECRETS, fabricgen.nos.interface.SecretSlots)."""

    text: dict[str, tuple[Slot, ...]]  # config-line slots, by NOS
    config_db: dict[str, dict[tuple[str | None, str | None], Slot]]  # config_db slots by (table, field), by NOS
    files: dict[str, tuple[str, ...]]  # the names of each NOS's files its slots are in (fnmatch patterns)
    titles: dict[str, str]  # how a problem names each

    @property
    def every(self) -> tuple[Slot, ...]:
        return tuple(slot for slots in self.text.values() for slot in slots) + tuple(slot for slots in self.config_db.values() for slot in slots.values())


@cache
def _index_of(packages: tuple[ModuleType, ...]) -> _SlotIndex:
    text: dict[str, tuple[Slot, ...]] = {FRR: FRR_SLOTS}
    config_db: dict[str, dict[tuple[str | None, str | None], Slot]] = {}
    files: dict[str, tuple[str, ...]] = {}
    titles = {FRR: "FRR"}
    for package in packages:
        parts = package.SECRETS
        strangers = sorted({slot.nos for slot in parts.slots} - {package.NAME})
        if strangers:
            raise registry.NosRegistrationError(f"NOS package {package.__name__} gives SECRETS with slots of {', '.join(strangers)}, not its own")
        text[package.NAME] = tuple(slot for slot in parts.slots if slot.line is not None)
        config_db[package.NAME] = {(slot.table, slot.field): slot for slot in parts.slots if slot.table is not None}
        files[package.NAME] = parts.files
        titles[package.NAME] = package.TITLE
    return _SlotIndex(text, config_db, files, titles)


def _index() -> _SlotIndex:
    """The slots of the NOS packages registered now: the default NOS first (it wins a tie between
    two NOSes' readings of a file, file_nos), then by name."""
    packages = registry.plugins()
    default = registry.default_name()
    return _index_of(tuple(sorted(packages.values(), key=lambda package: default != package.NAME)))


def slots() -> tuple[Slot, ...]:
    """Every slot: each NOS package's (its SECRETS) and FRR's."""
    return _index().every


def file_nos(path: str, nos: str | None = None) -> tuple[str, ...] | None:
    """Whose slots a build file's secrets stand in: FRR's for frr.conf and the lab's twins,
    else the NOSes whose files (SecretSlots.files) its name fits: only `nos`, the switch's NOS,
    when it is one of them (a `.cfg` is NX-OS's or EOS's); all of them, default NOS first, when
    the caller does not know it (placements reads the file as each). None for a file that holds
    no secret."""
    if _is_frr_file(path):
        return (FRR,)
    name = path.rsplit("/", 1)[-1]
    found = tuple(owner for owner, patterns in _index().files.items() if any(fnmatchcase(name, pattern) for pattern in patterns))
    if nos in found:
        return (nos,)
    return found or None


@dataclass(frozen=True)
class Placement:
    """A placeholder where a slot says a secret goes."""

    name: str
    slot: Slot
    where: str  # `line 12` or `TACPLUS|global.passkey`


def placements(path: str, text: str, nos: str | None = None) -> tuple[list[Placement], list[str]]:
    """Every placeholder of a build file, in its slot; and where a placeholder stands outside
    every slot (a build edited by hand, or a renderer fabricgen must fix). `nos`: the switch's
    NOS, which tells an EOS `.cfg` from an NX-OS one (file_nos). A file several NOSes' files
    fit, of a switch whose NOS is not said, is read as each: the reading that leaves the fewest
    placeholders outside a slot holds (a few lines fit a slot of each: EOS's `tacacs-server host
    A ... key K` pattern takes NX-OS's `tacacs-server host A key K timeout T`; the file as a whole
    fits one), the default NOS's on a tie."""
    index = _index()
    readings = [_read_as(index, text, owner) for owner in file_nos(path, nos) or ("",)]
    return min(readings, key=lambda reading: len(reading[1]))


def _read_as(index: _SlotIndex, text: str, owner: str) -> tuple[list[Placement], list[str]]:
    """A file's placements as a file of `owner` (a NOS or FRR): a config_db by its tables and
    fields when its slots are config_db fields, else line by line."""
    config_db = index.config_db.get(owner)
    if not config_db:
        return _text_placements(text, index.text.get(owner, ()))
    found: list[Placement] = []
    stray: list[str] = []
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return [], ["the file is not a JSON object"] if PLACEHOLDER_PATTERN.search(text) else []
    _db_placements(document, config_db, found, stray)
    return found, stray


def _text_placements(text: str, line_slots: tuple[Slot, ...]) -> tuple[list[Placement], list[str]]:
    found: list[Placement] = []
    stray: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if SECRET_MARK not in line:
            continue
        spans: dict[tuple[int, int], Slot] = {}
        for slot in line_slots:
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


def _db_placements(document: dict, config_db: dict[tuple[str | None, str | None], Slot], found: list[Placement], stray: list[str]) -> None:
    for table, rows in document.items():
        if not isinstance(rows, dict):
            if PLACEHOLDER_PATTERN.search(json.dumps(rows)):
                stray.append(str(table))
            continue
        for key, row in rows.items():
            where = f"{table}|{key}"
            if PLACEHOLDER_PATTERN.search(key):
                slot = config_db.get((table, None))
                match = PLACEHOLDER_PATTERN.fullmatch(key)
                if slot is None or match is None:
                    stray.append(f"{table} (a key)")
                else:
                    found.append(Placement(match.group(1), slot, f"{table} (a key)"))
                    where = f"{table}|{SECRET_MARK}...>>"
            fields = row.items() if isinstance(row, dict) else [("", row)]
            for field_name, value in fields:
                if isinstance(value, str) and PLACEHOLDER_PATTERN.search(value):
                    slot = config_db.get((table, field_name))
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
        for slot in slots():
            found = slot.line.search(line) if slot.line is not None else None
            if found and found.span("value") == match.span():
                return slot.use
    shown = " ".join(PLACEHOLDER_PATTERN.sub("", line).split()[:2])[:40]
    return f"a `{shown}` line" if shown else "a bare value"


# --- masking by slot -----------------------------------------------------------------------------


def mask_line(line: str, nos: str) -> str:
    """`line` with the secret of every slot it holds written as MASK, the encryption type and
    `localizedkey` flag that go with it left out (the build writes type 0, a device its own)."""
    return _mask_line(line, _index().text.get(nos, ()))


def _mask_line(line: str, line_slots: tuple[Slot, ...]) -> str:
    for slot in line_slots:
        assert slot.line is not None
        match = slot.line.search(line)
        if match is None:
            continue
        spans = [match.span(group) for group in ("kind", "value", "flag") if group in slot.line.groupindex and match.group(group) is not None]
        start, end = min(a for a, _ in spans), max(b for _, b in spans)
        line = line[:start] + MASK + line[end:]
    return line


def mask_text(text: str, nos: str) -> str:
    """A config of `nos` (a NOS whose slots are config lines, or FRR) with every slot masked
    (mask_line, line by line)."""
    line_slots = _index().text.get(nos, ())
    if not line_slots:
        return text
    return "\n".join(_mask_line(line, line_slots) for line in text.split("\n"))


def mask_config_db(document: dict) -> dict:
    """A config_db (table -> key -> field -> value) with every slot's value written as MASK and
    every key that is a secret (an SNMP community) as MASK, numbered when a table has several.
    What is not a table of rows is kept as it is. The slots are every NOS's config_db fields."""
    config_db = {key: slot for slots in _index().config_db.values() for key, slot in slots.items()}
    masked: dict = {}
    for table, rows in document.items():
        if not isinstance(rows, dict):
            masked[table] = rows
            continue
        key_slot = config_db.get((table, None))
        out: dict = {}
        for n, (key, row) in enumerate(rows.items(), start=1):
            name = (MASK if len(rows) == 1 else f"{MASK}#{n}") if key_slot is not None else key
            if isinstance(row, dict):
                row = {field_name: MASK if (table, field_name) in config_db else value for field_name, value in row.items()}
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
    titles = _index().titles
    for (name, slot, rule, what), where in devices.items():
        shown = ", ".join(sorted(set(where))[:3]) + (f" and {len(set(where)) - 3} more" if len(set(where)) > 3 else "")
        release = f" {rule.since} and later" if rule.since else ""
        problems.append(
            Problem(
                f"secret {name!r} {what}: it is the {slot.use} of {shown} ({titles.get(slot.nos, slot.nos)}{release}, {slot.where})",
                hint=f"give it a value of {rule.describe()}",
            )
        )
    return problems


def placeholder_problem(slot: Slot, name: str) -> str | None:
    """What keeps the placeholder of `name` from standing in `slot` on any release (its length:
    an SNMP community of SONiC takes at most 32 characters); None when it fits."""
    return slot.strictest().problem(placeholder(name))


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
