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

import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from fabricgen.errors import Problem, SecretsError, raise_if

SECRET_NAME = re.compile(r"[a-z][a-z0-9-]{0,62}")
PLACEHOLDER_PATTERN = re.compile(r"<<secret:([a-z][a-z0-9-]{0,62})>>")
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


SecretName = Annotated[str, AfterValidator(check_secret_name)]


def placeholder(name: str) -> str:
    """What a build writes where the secret's value goes."""
    return f"<<secret:{check_secret_name(name)}>>"


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

    def fill(self, text: str) -> str:
        """`text` with every placeholder replaced by its value; KeyError names a missing one."""
        return PLACEHOLDER_PATTERN.sub(lambda match: self.values[match.group(1)], text)

    def mask(self, text: str) -> str:
        """`text` with every value written as the placeholder of its secret: a message or a diff
        says which secret a line uses, never what it is. Longer values first, so one value that
        contains another is masked whole."""
        for name, value in sorted(self.values.items(), key=lambda item: -len(item[1])):
            if value:
                text = text.replace(value, placeholder(name))
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
        value = environ.get(env_name(name))
        if value is not None:
            problems += check_value(name, value, f"${env_name(name)}")
            values[name] = value
    raise_if(problems, SecretsError)
    return Secrets(values)


def _read_file(path: Path) -> dict[str, str]:
    """A secrets file: a regular file of the user's, readable by nobody else, a YAML mapping of
    secret names to string values. Never quoted in an error: it holds secrets."""
    from fabricgen.yaml_source import parse_yaml  # the bounded loader; late: yaml_source imports errors

    shown = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise_if([Problem(f"cannot open the secrets file {shown}: {exc.strerror}", hint="name an existing file with --secrets or $" + FILE_ENV)], SecretsError)
    try:
        info = os.fstat(fd)
        problems = []
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem(f"the secrets file {shown} is not a regular file"))
        elif info.st_mode & 0o077:
            problems.append(Problem(
                f"the secrets file {shown} is readable or writable by others (mode {stat.S_IMODE(info.st_mode):04o})",
                hint=f"chmod 600 {shown}",
            ))
        elif info.st_uid != os.geteuid():
            problems.append(Problem(f"the secrets file {shown} belongs to another user (uid {info.st_uid})", hint="use a file of your own"))
        elif info.st_size > MAX_FILE_BYTES:
            problems.append(Problem(f"the secrets file {shown} is {info.st_size} bytes; at most {MAX_FILE_BYTES}"))
        raise_if(problems, SecretsError)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    doc, problems = parse_yaml(raw, shown, "secrets file", quote_content=False, max_nodes=MAX_FILE_NODES)
    raise_if(problems, SecretsError)
    data = doc.data
    if not isinstance(data, dict):
        raise_if([Problem(f"the secrets file {shown} must be a mapping of secret names to values", hint="write lines like `bgp-backend: <value>`")], SecretsError)
    problems = []
    values = {}
    for name, value in data.items():
        if not isinstance(name, str) or not SECRET_NAME.fullmatch(name):
            problems.append(Problem(f"the secrets file {shown} has a key that is not a secret name", hint="lower-case letters, digits and '-', starting with a letter"))
        elif not isinstance(value, str):
            problems.append(Problem(f"secret {name!r} in {shown} is not a string", hint="quote the value"))
        else:
            values[name] = value
    raise_if(problems, SecretsError)
    return values
