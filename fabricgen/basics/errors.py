"""The errors a user can cause, as data.

Every phase of the pipeline collects `Problem`s and raises them together in one typed error, so a
user sees all the mistakes of a phase at once. A problem names where it is (intent file, YAML line
and field, or device and port), what is wrong and how to fix it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from fabricgen.basics.trust import printable

FieldPath = tuple[str | int, ...]


def dotted(path: FieldPath) -> str:
    """('backend', 'leaf', 'model') -> 'backend.leaf.model'; list items as [i]."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + part
    return text


@dataclass(frozen=True, slots=True)
class Problem:
    message: str
    hint: str = ""
    field: FieldPath = ()
    file: str | None = None
    line: int | None = None
    device: str | None = None
    port: str | None = None

    def located(self, file: str, line: int | None) -> Problem:
        return replace(self, file=file, line=line)

    def format(self) -> str:
        """One line: where, what, and the fix. Every part is escaped (`trust.printable`), so a key or
        value from hostile input can neither split the line nor reach the terminal raw."""
        where = []
        if self.file:
            where.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.field:
            where.append(dotted(self.field))
        if self.device:
            where.append(f"{self.device} {self.port}" if self.port else self.device)
        text = ": ".join(where + [self.message]) if where else self.message
        if self.hint:
            text += f" (fix: {self.hint})"
        return printable(text)

    def as_json(self) -> ProblemJson:
        """The problem for `--json`: each part escaped as in `format`, so `jq -r` prints no raw
        control character either."""
        return ProblemJson(
            file=printable(self.file) if self.file else None,
            line=self.line,
            field=printable(dotted(self.field)) if self.field else None,
            device=printable(self.device) if self.device else None,
            port=printable(self.port) if self.port else None,
            message=printable(self.message),
            hint=printable(self.hint) if self.hint else None,
        )

    def github_annotation(self, title: str) -> str:
        """One GitHub Actions workflow command, `::error file=F,line=N,title=T::message`, which the
        runner shows on file F at line N, escaped as `github_command` says."""
        where = [dotted(self.field)] if self.field else []
        if self.device:
            where.append(f"{self.device} {self.port}" if self.port else self.device)
        message = ": ".join(where + [self.message]) + (f" (fix: {self.hint})" if self.hint else "")
        return github_command("error", message, file=self.file, line=self.line, title=title)


def github_command(command: str, message: str, **properties: str | int | None) -> str:
    """One GitHub Actions workflow command line (no newline), `::warning file=F,line=N,title=T::message`
    (GitHub Docs, "Workflow commands for GitHub Actions": error, warning, notice), the properties
    without a value left out. Every part is `printable` first (one line, whatever it came from),
    then escaped as actions/toolkit's command.ts does: in the message `%`, CR and LF; in a property
    also `:` and `,` (they end the command's name and separate its properties)."""
    shown = ",".join(f"{key}={_github_property(printable(value))}" for key, value in properties.items() if value)
    return f"::{command} {shown}::{_github_data(printable(message))}" if shown else f"::{command}::{_github_data(printable(message))}"


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


# The shape of a `--json` error document, as typed dicts: the command line builds it without
# loading pydantic's models (`fabricgen --version` stays fast); pydantic's TypeAdapter validates
# and describes it (`TypeAdapter(ErrorDocument).json_schema()`).
class ProblemJson(TypedDict):
    """One problem in a `--json` error document."""

    file: str | None  # the intent, catalog or other input file it is in
    line: int | None  # its line in that file
    field: str | None  # the YAML field, dotted: backend.leaf.model, servers[2].name
    device: str | None
    port: str | None
    message: str  # what is wrong
    hint: str | None  # how to fix it


class ErrorDocument(TypedDict):
    """What a command given `--json` prints on stdout when it refuses its input (exit 2)."""

    ok: Literal[False]
    exit_code: Literal[2]
    phase: str  # intent, catalog, design, checks, output, usage, analyze, lab, push, verify, ...
    problems: list[ProblemJson]


def error_document(phase: str, problems: list[ProblemJson]) -> ErrorDocument:
    return ErrorDocument(ok=False, exit_code=2, phase=phase, problems=problems)


class FabricgenError(Exception):
    """Something the user can fix; carries every problem found in one phase."""

    phase = "build"

    def __init__(self, problems: Sequence[Problem] | Problem):
        self.problems: list[Problem] = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(p.format() for p in self.problems))

    def report(self) -> str:
        count = len(self.problems)
        head = f"{self.phase}: {count:,} problem{'s' if count != 1 else ''}"
        return head + "\n" + "\n".join("  " + p.format() for p in self.problems)

    def json_document(self) -> ErrorDocument:
        return error_document(self.phase, [p.as_json() for p in self.problems])

    def github_annotations(self) -> str:
        """One `::error` workflow command a line per problem, titled 'fabricgen <phase>'."""
        return "".join(p.github_annotation(f"fabricgen {self.phase}") + "\n" for p in self.problems)


class IntentError(FabricgenError):
    """The intent file cannot be read or does not match the schema."""

    phase = "intent"


class InitError(FabricgenError):
    """`fabricgen init` was given choices that do not make an intent that builds."""

    phase = "init"


class CatalogError(FabricgenError):
    """A catalog file (built-in or the user's) is malformed or inconsistent."""

    phase = "catalog"


class DesignError(FabricgenError):
    """The intent is well formed but asks for a fabric that cannot be built."""

    phase = "design"


class CheckError(FabricgenError):
    """The compiled fabric breaks an invariant (names the device and the port)."""

    phase = "checks"


class OutputError(FabricgenError):
    """The build could not be written."""

    phase = "output"


class DiffError(FabricgenError):
    """A side of `fabricgen diff` cannot be read or built (each problem names the side)."""

    phase = "diff"


def raise_if(problems: Iterable[Problem], error: type[FabricgenError]) -> None:
    """The error gate between phases: raise every collected problem at once."""
    problems = list(problems)
    if problems:
        raise error(problems)


class LabError(FabricgenError):
    """The lab cannot run this build, or is not in the state the command needs."""

    phase = "lab"


class PushError(FabricgenError):
    """The push cannot start: a bad build, inventory, device selection or missing credentials.
    Raised before any device is touched; per-device failures are results, not errors."""

    phase = "push"


class AnalysisError(FabricgenError):
    """The build cannot be analysed as asked: not a build, another version, a bad traffic option."""

    phase = "analyze"


class SecretsError(FabricgenError):
    """A secret cannot be read: a missing value, an unsafe secrets file, a value that cannot go
    into a config line. Never quotes a value."""

    phase = "secrets"


class VerifyError(FabricgenError):
    """`fabricgen verify` cannot start: the build, the inventory or the credentials are wrong."""

    phase = "verify"
