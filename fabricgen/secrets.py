"""Secrets by name: the intent names them, the build writes a placeholder, values live elsewhere.

BGP keys, TACACS+/RADIUS keys, SNMPv3 keys, NTP keys and local users' password hashes never come
from an intent or a catalog (both live in git and in pull requests). The intent says which secret
a config line uses (`key: tacacs-key`); the build writes `<<secret:tacacs-key>>` there. The
placeholder is not a value a switch would take for one: NX-OS refuses `<` in an encrypted key,
and `push` refuses any config that still holds one (`missing_in`), so a file with placeholders
cannot be deployed by mistake.

Values come from the environment (`FABRICGEN_SECRET_<NAME>`, the name upper-cased with `-` as
`_`) or from a secrets file the user names (YAML `name: value`, mode 0600, owned by the user);
the environment wins. They are held in memory only: `Secrets.fill` substitutes them into a
config for `push` and `secrets render`, `Secrets.mask` takes them out of any text fabricgen prints.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from fabricgen.errors import Problem, SecretsError, raise_if
from fabricgen.trust import SECRET_MARK

SECRET_NAME = re.compile(r"[a-z][a-z0-9-]{0,62}")
PLACEHOLDER_PATTERN = re.compile(re.escape(SECRET_MARK) + r"([a-z][a-z0-9-]{0,62})>>")
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
    return f"{SECRET_MARK}{check_secret_name(name)}>>"


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
    from fabricgen.yaml_source import parse_yaml  # the bounded loader; late: yaml_source imports errors

    shown = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: whoever can change a link could point it at another file
            raise_if([Problem(f"the secrets file {shown} is a symbolic link", hint="name the file itself, not a link to it")], SecretsError)
        raise_if([Problem(f"cannot open the secrets file {shown}: {exc.strerror}", hint="name an existing file with --secrets or $" + FILE_ENV)], SecretsError)
    try:
        info = os.fstat(fd)
        problems = []
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem(f"the secrets file {shown} is not a regular file"))
        elif info.st_mode & 0o077:
            problems.append(
                Problem(
                    f"the secrets file {shown} is readable or writable by others (mode {stat.S_IMODE(info.st_mode):04o})",
                    hint=f"chmod 600 {shown}",
                )
            )
        elif info.st_uid != os.geteuid():
            problems.append(Problem(f"the secrets file {shown} belongs to another user (uid {info.st_uid})", hint="use a file of your own"))
        elif info.st_size > MAX_FILE_BYTES:
            problems.append(Problem(f"the secrets file {shown} is {info.st_size} bytes; at most {MAX_FILE_BYTES}"))
        raise_if(problems, SecretsError)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:  # it grew after the check
        raise_if([Problem(f"the secrets file {shown} is over {MAX_FILE_BYTES} bytes")], SecretsError)
    doc, problems = parse_yaml(raw, shown, "secrets file", quote_content=False, max_nodes=MAX_FILE_NODES)
    raise_if([_unquoted(problem) for problem in problems], SecretsError)
    data = doc.data
    if not isinstance(data, dict):
        raise_if(
            [Problem(f"the secrets file {shown} must be a mapping of secret names to values", hint="write lines like `bgp-backend: <value>`")], SecretsError
        )
    problems = []
    values = {}
    for name, value in data.items():
        if not isinstance(name, str) or not SECRET_NAME.fullmatch(name):
            problems.append(
                Problem(f"the secrets file {shown} has a key that is not a secret name", hint="lower-case letters, digits and '-', starting with a letter")
            )
        elif not isinstance(value, str):
            problems.append(Problem(f"secret {name!r} in {shown} is not a string", hint="quote the value"))
        else:
            values[name] = value
    raise_if(problems, SecretsError)
    return values


_QUOTED = re.compile(r"'[^'\n]*'|\([^)\n]*\)")


def _unquoted(problem: Problem) -> Problem:
    """A YAML problem of the secrets file without what it quotes from the file (the loader names
    a scalar it cannot read, `'...' is not a valid !!int`, and that scalar may be a value)."""
    return replace(problem, message=_QUOTED.sub("'...'", problem.message), hint=_QUOTED.sub("'...'", problem.hint))


# --- what a config uses a secret for ---------------------------------------------------------------
# Read back from the rendered line (or config_db table and field), not from the intent, so
# `secrets list` reports what the files really do with each secret.

BGP_KEY = "BGP session key"
BGP_AO_KEY = "BGP TCP-AO key"
TACACS_KEY = "TACACS+ key"
RADIUS_KEY = "RADIUS key"
NTP_KEY = "NTP authentication key"
SNMP_AUTH_KEY = "SNMPv3 authentication key"
SNMP_PRIVACY_KEY = "SNMPv3 privacy key"
SNMP_COMMUNITY = "SNMP community"
USER_HASH = "local user password hash"

_WORD = re.compile(r"[a-z0-9+]+")


def use_of(context: str) -> str:
    """What a secret is for, from the words before its placeholder: a config line up to the
    placeholder (`snmp-server user nms network-operator auth sha`) or a config_db table and field
    (`SNMP_USER|nms SNMP_USER_AUTH_PASSWORD`). Unknown: the first words, quoted."""
    words = _WORD.findall(PLACEHOLDER_PATTERN.sub(" ", context.lower()))
    if "snmp" in words:
        if "community" in words:
            return SNMP_COMMUNITY
        last = max(((i, w) for i, w in enumerate(words) if w in ("auth", "priv", "privacy") or w.startswith("encrypt")), default=None)
        if last is not None:
            return SNMP_AUTH_KEY if last[1] == "auth" else SNMP_PRIVACY_KEY
    if "tacacs+" in words or "tacacs" in words or "tacplus" in words:
        return TACACS_KEY
    if "radius" in words:
        return RADIUS_KEY
    if "ntp" in words:
        return NTP_KEY
    if "username" in words or "user" in words:
        return USER_HASH
    if "key-string" in context.lower() or "ao" in words:
        return BGP_AO_KEY
    if "password" in words or "bgp" in words:
        return BGP_KEY
    shown = " ".join(context.split()[:2])[:40]
    return f"a `{shown}` line" if shown else "a bare value"


def uses_in(path: str, text: str) -> list[tuple[str, str]]:
    """(secret name, what it is used for) for each placeholder in a config file: config_db.json
    by table and field, any other file (NX-OS, frr.conf) by its line."""
    found: list[tuple[str, str]] = []
    if path.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        if isinstance(document, dict):
            _json_uses(document, "", found)
            return found
    for line in text.splitlines():
        for match in PLACEHOLDER_PATTERN.finditer(line):
            found.append((match.group(1), use_of(line[: match.start()])))
    return found


def _json_uses(value: object, context: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            for name in PLACEHOLDER_PATTERN.findall(key):  # a key that is a secret (an SNMP community)
                found.append((name, use_of(context)))
            _json_uses(item, f"{context} {key}", found)
    elif isinstance(value, list):
        for item in value:
            _json_uses(item, context, found)
    elif isinstance(value, str):
        found += [(name, use_of(context)) for name in PLACEHOLDER_PATTERN.findall(value)]
