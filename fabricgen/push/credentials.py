"""Device credentials: from the environment or an interactive prompt, held only in memory.

They are never written anywhere: not to the build, the inventory, logs or output. `scrub` removes
the password from any message a driver or a device sends back before fabricgen prints it.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass, field

from fabricgen.basics.errors import Problem, PushError

USERNAME_ENV = "FABRICGEN_USERNAME"
PASSWORD_ENV = "FABRICGEN_PASSWORD"


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str = field(repr=False)

    def scrub(self, text: str) -> str:
        """`text` with the password masked, for messages that came from a driver or a device."""
        return text.replace(self.password, "********") if self.password else text


def read_credentials(environ=os.environ, interactive: bool | None = None) -> Credentials:
    """FABRICGEN_USERNAME and FABRICGEN_PASSWORD, prompting on a terminal for what is missing."""
    if interactive is None:
        interactive = sys.stdin.isatty()
    username = environ.get(USERNAME_ENV, "")
    password = environ.get(PASSWORD_ENV, "")
    if (not username or not password) and not interactive:
        missing = " and ".join(name for name, value in ((USERNAME_ENV, username), (PASSWORD_ENV, password)) if not value)
        raise PushError(
            Problem(
                f"no credentials: {missing} not set and no terminal to prompt on",
                hint=f"export {USERNAME_ENV}=... {PASSWORD_ENV}=... (from your secret store), or run in a terminal",
            )
        )
    try:
        if not username:
            username = input("device username: ").strip()
        if not password:
            password = getpass.getpass(f"password for {username}: ")
    except EOFError:
        raise PushError(Problem("no credentials given at the prompt", hint=f"set {USERNAME_ENV} and {PASSWORD_ENV}")) from None
    if not username:
        raise PushError(Problem("an empty username", hint=f"set {USERNAME_ENV} or answer the prompt"))
    return Credentials(username, password)
