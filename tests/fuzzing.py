"""Property-based fuzzing of everything fabricgen reads from outside: intents, catalogs and build
directories (issue 16: every input is hostile until checked).

A *case* is a directory of files plus one command line. `run_case` runs the command in a forked
child of the test process (the CLI in-process: no interpreter start-up per case) under an
address-space limit, a CPU-time limit and a guard that refuses any connection off the loopback; `judge`
then holds what came back to the properties every input must keep:

- the exit code is one the command may give (a crash is never one, whatever its code);
- nothing printed holds a traceback or a raw control or format character;
- a refused input prints `<phase>: N problem(s)` and N lines, each located: a file (`file:line:` or
  `file:`), a device, or for `diff` the side it names (`old side PATH:`);
- a refused build writes nothing; an input that must be refused (a catalog outside the intent's
  directory) is refused;
- every case ends within its time and memory limits.

A `Campaign` runs the cases hypothesis draws for one generator, counts exit codes, keeps going past
failures (so a run of 10,000 cases reports every failure class it met, not the first one), shrinks
each class to its fewest mutations and saves that input with the command, the exit code and the
end of stderr. `python -m tests.fuzzing report DIR` prints the campaigns' summary (scripts/fuzz.sh).

Profiles (`FABRICGEN_FUZZ`): `ci` (default: a few dozen cases per generator, derandomized, well
under a minute in all) and `full` (10,000 cases over the generators, `make fuzz`).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import hashlib
import io
import ipaddress
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import stat
import sys
import tempfile
import time
import traceback
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]

# --- profiles -------------------------------------------------------------------------------------

PROFILE = os.environ.get("FABRICGEN_FUZZ", "ci")


@dataclass(frozen=True)
class Profile:
    examples: dict[str, int]  # generator -> cases
    cpu_limit_s: float  # CPU seconds per case: then the child stops where it is and says where
    wall_limit_s: float  # the parent kills a case still running this long (a case blocked, not busy)
    memory_limit: int  # bytes of address space a case may add to the fuzzer's own
    minimize_runs: int  # re-runs spent shrinking failures, per campaign
    minimize_seconds: float  # and the time they may take
    derandomize: bool
    skip_bases: tuple[str, ...] = ()  # intents too large to build many times in this profile


PROFILES = {
    # under a minute in all on 2 shared cores, with the failures the fuzzer finds today
    "ci": Profile(
        {"intent": 40, "yaml-bytes": 25, "catalog": 30, "build": 45, "exports": 20, "answers": 20, "results": 20, "paths": 25, "lab-state": 15},
        4.0,
        30.0,
        2 << 30,
        24,
        8.0,
        True,
        ("superpod-4096.yaml",),
    ),
    # `make fuzz`: 10,000 cases in total
    "full": Profile(
        {
            "intent": 3000,
            "yaml-bytes": 600,
            "catalog": 1400,
            "build": 1600,
            "exports": 1000,
            "answers": 1000,
            "results": 500,
            "paths": 400,
            "lab-state": 500,
        },
        10.0,
        120.0,
        2 << 30,
        400,
        900.0,
        False,
    ),
}


def profile() -> Profile:
    """The profile named by FABRICGEN_FUZZ; FABRICGEN_FUZZ_CASES=N spreads N cases over the
    generators in the profile's proportions."""
    if PROFILE not in PROFILES:
        raise SystemExit(f"FABRICGEN_FUZZ={PROFILE!r}: use one of {', '.join(PROFILES)}")
    chosen = PROFILES[PROFILE]
    total = os.environ.get("FABRICGEN_FUZZ_CASES")
    if total:
        share = int(total) / sum(chosen.examples.values())
        chosen = replace(chosen, examples={name: max(1, round(count * share)) for name, count in chosen.examples.items()})
    return chosen


def seed() -> int | None:
    """FABRICGEN_FUZZ_SEED: the random seed of a `full` run (printed in its report to rerun it)."""
    value = os.environ.get("FABRICGEN_FUZZ_SEED")
    return int(value) if value else None


# --- YAML written by hand, so anchors, tags and raw text can go anywhere --------------------------


@dataclass(frozen=True)
class Raw:
    """Text put into the YAML as it is (flow collections, broken syntax, a bomb)."""

    text: str


@dataclass(frozen=True)
class Tagged:
    """An explicitly tagged scalar: `!!int 0x10`, `!!python/object/apply:os.system [id]`."""

    tag: str
    text: str


@dataclass(frozen=True)
class Anchored:
    name: str
    value: object


@dataclass(frozen=True)
class Alias:
    name: str


MERGE = Raw("<<")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./+()-]*")
_RESOLVER = None


def _plain_ok(text: str) -> bool:
    """True when `text` can be written unquoted and still reads back as this string."""
    global _RESOLVER
    import yaml

    if _RESOLVER is None:
        _RESOLVER = yaml.resolver.Resolver()
    return bool(_PLAIN.fullmatch(text)) and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar; invisible characters escaped, everything else as it is."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = str(value)
    return text if _plain_ok(text) else _quoted(text)


def _key(key) -> str:
    if isinstance(key, Raw):
        return key.text
    if isinstance(key, Tagged):
        return f"{key.tag} {key.text}"
    return _scalar(key)


def _inline(value) -> str | None:
    """The value as written on its key's line, or None when it is a block of its own."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Tagged):
        return f"{value.tag} {value.text}"
    if isinstance(value, Alias):
        return f"*{value.name}"
    if isinstance(value, Anchored):
        inner = _inline(value.value)
        return None if inner is None else f"&{value.name} {inner}"
    if isinstance(value, dict):
        return "{}" if not value else None
    if isinstance(value, list):
        return "[]" if not value else None
    return _scalar(value)


def dump(tree) -> str:
    """A data tree (dicts, lists, scalars and the classes above) as block-style YAML text."""
    lines: list[str] = []
    if isinstance(tree, (dict, list)) and tree:
        _block(tree, 0, lines)
    else:
        lines.append(_inline(tree) or "")
    return "\n".join(lines) + "\n"


def _block(value, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    entries = [(f"{pad}{_key(k)}:", v) for k, v in value.items()] if isinstance(value, dict) else [(f"{pad}-", v) for v in value]
    for head, item in entries:
        anchor = ""
        if isinstance(item, Anchored) and _inline(item) is None:
            anchor, item = f" &{item.name}", item.value
        inline = _inline(item)
        if inline is not None:
            lines.append(f"{head}{anchor} {inline}")
        else:
            lines.append(head + anchor)
            _block(item, indent + 2, lines)


def load_base(path: Path):
    """A real input file as plain data (through fabricgen's own loader: `ratio: 2:1` stays a string)."""
    from fabricgen.basics.yaml_source import load_yaml

    doc, problems = load_yaml(path, what="intent")
    assert not problems, problems
    return doc.data


# --- what hostile input is made of ----------------------------------------------------------------

CONTROL = ["\x00", "\x07", "\x08", "\x1b[31m", "\x1b[2J", "\x1b]0;title\x07", "\r", "\n", "\t", "\x7f", "\x85", "\x9b", "\x9d"]
FORMAT = ["\u200b", "\u200e", "\u202e", "\u2066", "\u2028", "\u2029", "\ufeff", "\ud800", "\U000e0041"]
INJECTION = [
    "\ninterface Ethernet1/1\n  shutdown",
    "\nrouter bgp 1\n neighbor 192.0.2.1 remote-as 1",
    "\n!\nend\n",
    '"}, "PORT": {"x": "y',
    "; reboot",
    "$(id)",
    "`id`",
    "| sh",
    "../../../etc/passwd",
    "/etc/passwd",
    "-rf",
    "--help",
]
WORDS = [
    "leaf",
    "spine",
    "x",
    "",
    " ",
    "é",
    "İ",
    "ß",
    "ﬁ",
    "𝔘",
    "٣",
    "中",
    "Ω",
    "{",
    "}",
    "{index}",
    "%s",
    "%n",
    "'",
    '"',
    "\\",
    "!",
    "&a",
    "*a",
    "#",
    ": ",
    "- ",
]
NUMBERS = [
    0,
    -1,
    1,
    2,
    3,
    4,
    7,
    8,
    9,
    15,
    16,
    17,
    31,
    32,
    63,
    64,
    65,
    100,
    127,
    128,
    255,
    256,
    257,
    511,
    512,
    1000,
    1023,
    1024,
    2047,
    2048,
    4094,
    4095,
    4096,
    65535,
    2**31 - 1,
    2**31,
    2**32,
    2**63 - 1,
    2**63,
    2**64,
    10**18,
    10**100,
    -(2**31),
    -(2**63),
    -(10**30),
    0.5,
    1.5,
    -0.0,
    1e-300,
    1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
]
NUMBER_TEXTS = [
    "256",
    "1:1",
    "2:1",
    "0:1",
    "1:0",
    "-1:2",
    "1e3",
    "0x10",
    "0o17",
    "0b11",
    "1_000",
    "+5",
    "256.0",
    "1,024",
    "400G",
    "0G",
    "-400G",
    "1e9G",
    "9999999999999999999G",
]
TAGS = [
    ("!!int", "0x10"),
    ("!!int", "1_000"),
    ("!!int", "x"),
    ("!!float", "x"),
    ("!!float", "1e9999"),
    ("!!bool", "yes"),
    ("!!str", "256"),
    ("!!binary", "aGVsbG8="),
    ("!!timestamp", "2001-12-14"),
    ("!!null", "''"),
    ("!!set", "{a, b}"),
    ("!!omap", "[a: 1]"),
    ("!!python/object/apply:os.system", '["id"]'),
    ("!!python/name:os.system", "''"),
    ("!!python/object:builtins.dict", "{}"),
    ("!custom", "x"),
]
PATTERNS = [
    "{index.foo}",
    "{index:0500000000d}",
    "{index:0999999999}",
    "{index!r}",
    "{index!s}",
    "{0}",
    "{}",
    "{index[0]}",
    "{su:>99999999}",
    "{index:,}",
    "{index:x}",
    "{{}}",
    "{index",
    "index}",
    "{index:04d}\n",
    "leaf{index}\x1b[2J",
    "{index.__class__.__mro__}",
    "{rail}{rail}",
    "{nope}",
    "{index:%}",
    "{index:99999999999999999999d}",
    "{index:-^50d}",
    "leaf-{index:02d}",
    "{su:02d}/{rail}",
    "é{index}",
    "{port}",
    "{lane}",
    "{sub}",
    "{n}",
    "",
]
INTERFACE_PATTERNS = [
    "Ethernet1/{port}\n shutdown",
    "Ethernet1/{port}; reboot",
    "Eth {port}",
    "{port.__class__}",
    "{port:099999999d}",
    "{lane!r}",
    "{port}",
    "Ethernet1/{port}/{sub}",
    "Ethernet{lane}",
    "../{port}",
    "Ethernet1/{port}\x00",
    "Ethernet1/{nope}",
    "Ethernet1/1",
    "{sub}",
    "",
    "e" * 300 + "{port}",
    "Ethernet1/{port:>{lane}}",
    "Ethernet\u202e{port}",
]
ODD_KEYS = [
    Raw("[x]"),
    Raw("{a: 1}"),
    Raw("? [x]\n"),
    0,
    1,
    -1,
    10**30,
    "int",
    "list",
    "dict",
    "null",
    "true",
    "__class__",
    "__proto__",
    "<<",
    "é",
    "ключ",
    "\x00",
    "\x1b[31mred",
    "a\nb",
    "\u202egpus",
    " gpus",
    "gpus ",
    "GPUS",
    "",
    Raw("!!python/object:os.system x"),
]
SECTION_KEYS = [
    "name",
    "gpus",
    "nodes",
    "gpu_node",
    "naming",
    "backend",
    "frontend",
    "storage",
    "oob",
    "layout",
    "catalog",
    "evpn",
    "qos",
    "leaf",
    "spine",
    "core",
    "model",
    "nos",
    "count",
    "ratio",
    "routing",
    "pools",
    "asn",
    "tiers",
    "planes",
    "mtu",
]


@st.composite
def hostile_text(draw) -> str:
    """A few pieces of control characters, injections, odd words and random text; sometimes long."""
    parts = draw(st.lists(st.one_of(st.sampled_from(CONTROL + FORMAT + INJECTION + WORDS), st.text(max_size=12)), min_size=1, max_size=4))
    text = "".join(parts)
    if draw(st.integers(0, 19)) == 0:
        text = text + "A" * draw(st.sampled_from([64, 255, 256, 1000, 100_000]))
    return text


@st.composite
def bomb(draw):
    """Raw YAML that is small on disk and large (or deep) once loaded."""
    kind = draw(st.sampled_from(["laughs", "merge", "deep-seq", "deep-map", "wide"]))
    if kind == "laughs":
        width, depth = draw(st.integers(2, 10)), draw(st.integers(2, 12))
        parts = ["&l0 [" + ", ".join(["lol"] * width) + "]"]
        parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, depth)]
        return Raw("[" + ", ".join(parts) + f", *l{depth - 1}]")
    if kind == "merge":
        width, depth = draw(st.integers(2, 8)), draw(st.integers(2, 30))
        parts = ["&m0 {a0: 0, b0: 0}"] + [f"&m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * width) + f"], a{i}: {i}}}" for i in range(1, depth)]
        return Raw("[" + ", ".join(parts) + "]")
    depth = draw(st.sampled_from([10, 100, 400, 1000, 5000, 50_000]))
    if kind == "deep-seq":
        return Raw("[" * depth + "]" * depth)
    if kind == "deep-map":
        return Raw("{a: " * depth + "1" + "}" * depth)
    return Raw("{" + ", ".join(f"k{i}: {i}" for i in range(depth)) + "}")


def values() -> st.SearchStrategy:
    """Anything a value in a YAML file could be."""
    scalars = st.one_of(
        st.sampled_from(NUMBERS),
        st.integers(-5, 300),
        st.sampled_from(NUMBER_TEXTS),
        hostile_text(),
        st.booleans(),
        st.none(),
        st.sampled_from(TAGS).map(lambda t: Tagged(*t)),
        st.sampled_from(PATTERNS),
    )
    # a bomb in one value of ~16: enough to meet every kind often, rare enough that the cases
    # that stop at the CPU limit do not eat a run's time
    return st.one_of(
        *[scalars] * 12,
        st.lists(scalars, max_size=4),
        st.lists(scalars, max_size=4),
        st.dictionaries(st.sampled_from(SECTION_KEYS + ["x", "y"]), scalars, max_size=3),
        bomb(),
    )


# --- mutations of a data tree ---------------------------------------------------------------------


def _dotted(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (("." if i else "") + str(p)) for i, p in enumerate(path)) or "(root)"


def short(value, limit: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def paths(tree, kind: str = "any") -> list[tuple]:
    """Every path in the tree in document order: "any" (every value), "key" (a key of a mapping)
    or "map" (every mapping, the root included)."""
    found: list[tuple] = [()] if kind == "map" and isinstance(tree, dict) else []

    def walk(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            here = path + (key,)
            if kind == "any" or (kind == "key" and isinstance(node, dict)) or (kind == "map" and isinstance(child, dict)):
                found.append(here)
            walk(child, here)

    walk(tree, ())
    return found


def _get(tree, path):
    for part in path:
        tree = tree[part]
    return tree


def _set(tree, path, value) -> None:
    _get(tree, path[:-1])[path[-1]] = value


class Op:
    """One mutation. `stage` orders them (tree, then text, then bytes); `apply` returns the new
    value (a tree is changed in place) and says what it did, in words, for the report."""

    stage = "tree"


@dataclass(frozen=True)
class SetValue(Op):
    at: int
    value: object

    def apply(self, tree):
        found = paths(tree)
        if not found:
            return tree, "set: nothing to set"
        path = found[self.at % len(found)]
        _set(tree, path, self.value)
        return tree, f"set {_dotted(path)} to {short(self.value)}"


@dataclass(frozen=True)
class DropKey(Op):
    at: int

    def apply(self, tree):
        found = paths(tree, "key")
        if not found:
            return tree, "drop: no key"
        path = found[self.at % len(found)]
        del _get(tree, path[:-1])[path[-1]]
        return tree, f"drop {_dotted(path)}"


@dataclass(frozen=True)
class RenameKey(Op):
    at: int
    key: object

    def apply(self, tree):
        found = paths(tree, "key")
        if not found:
            return tree, "rename: no key"
        path = found[self.at % len(found)]
        parent = _get(tree, path[:-1])
        # keep the key's place: rebuild the mapping in order
        items = [(self.key if k == path[-1] else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
        return tree, f"rename {_dotted(path)} to {short(self.key)}"


@dataclass(frozen=True)
class InsertKey(Op):
    at: int
    key: object
    value: object

    def apply(self, tree):
        found = paths(tree, "map")
        if not found:
            return tree, "insert: no mapping"
        path = found[self.at % len(found)]
        _get(tree, path)[self.key] = self.value
        return tree, f"insert {short(self.key)}: {short(self.value)} into {_dotted(path)}"


@dataclass(frozen=True)
class AliasValue(Op):
    """Anchor one value and refer to it elsewhere, as a value or a merge key (`<<: *a`), in either
    order and possibly inside itself (a recursive alias)."""

    source: int
    target: int
    merge: bool

    def apply(self, tree):
        found = paths(tree)
        if not found:
            return tree, "alias: nothing to anchor"
        source, target = found[self.source % len(found)], found[self.target % len(found)]
        name = f"a{self.source % 997}"
        value = _get(tree, source)
        if isinstance(value, (Anchored, Alias)):
            return tree, "alias: already anchored"
        _set(tree, source, Anchored(name, value))
        try:
            holder = _get(tree, target)
        except (KeyError, IndexError, TypeError):  # the target was inside the anchored value
            holder = None
        if self.merge and isinstance(holder, dict):
            holder[MERGE] = Alias(name)
            return tree, f"anchor {_dotted(source)} as &{name}, merge it into {_dotted(target)} (<<: *{name})"
        with contextlib.suppress(KeyError, IndexError, TypeError):
            _set(tree, target, Alias(name))
        return tree, f"anchor {_dotted(source)} as &{name}, alias it at {_dotted(target)}"


@dataclass(frozen=True)
class Tweak(Op):
    """A number of the input changed to a near or edge value: often still valid, so the case gets
    past the schema into design, addressing and rendering."""

    at: int
    how: str  # double, half, +1, -1, zero, one, negate, float, string

    def apply(self, tree):
        found = [p for p in paths(tree) if isinstance(_get(tree, p), int) and not isinstance(_get(tree, p), bool)]
        if not found:
            return tree, "tweak: no number"
        path = found[self.at % len(found)]
        old = _get(tree, path)
        new = {"double": old * 2, "half": old // 2, "+1": old + 1, "-1": old - 1, "zero": 0, "one": 1, "negate": -old, "float": old + 0.5, "string": str(old)}[
            self.how
        ]
        _set(tree, path, new)
        return tree, f"{_dotted(path)}: {old} -> {new!r}"


@dataclass(frozen=True)
class Retext(Op):
    """A string of the input (a name, a model, a description, a pattern) with hostile text added."""

    at: int
    text: str
    where: str  # replace, prefix, suffix

    def apply(self, tree):
        found = [p for p in paths(tree) if isinstance(_get(tree, p), str)]
        if not found:
            return tree, "retext: no string"
        path = found[self.at % len(found)]
        old = _get(tree, path)
        new = {"replace": self.text, "prefix": self.text + old, "suffix": old + self.text}[self.where]
        _set(tree, path, new)
        return tree, f"{_dotted(path)}: {old!r} -> {short(new)}"


@dataclass(frozen=True)
class Naming(Op):
    role: str
    pattern: str

    def apply(self, tree):
        if isinstance(tree, dict):
            naming = tree.get("naming")
            if not isinstance(naming, dict):
                naming = tree["naming"] = {}
            naming[self.role] = self.pattern
        return tree, f"naming.{self.role} = {short(self.pattern)}"


@dataclass(frozen=True)
class TextInsert(Op):
    """Raw text into the YAML at the start of a line (control characters, a second document,
    a directive, a tab where indentation goes)."""

    line: int
    snippet: str
    stage = "text"

    def apply(self, text: str):
        lines = text.split("\n")
        at = self.line % len(lines)
        lines.insert(at, self.snippet + lines.pop(at))
        return "\n".join(lines), f"raw text {short(self.snippet)} at line {at + 1}"


@dataclass(frozen=True)
class ByteInsert(Op):
    at: int  # per mille of the file
    data: bytes
    stage = "bytes"

    def apply(self, blob: bytes):
        at = len(blob) * (self.at % 1001) // 1000
        return blob[:at] + self.data + blob[at:], f"bytes {self.data!r} at offset {at}"


@dataclass(frozen=True)
class Encode(Op):
    encoding: str
    stage = "bytes"

    def apply(self, blob: bytes):
        try:
            return blob.decode("utf-8").encode(self.encoding), f"re-encoded as {self.encoding}"
        except (UnicodeError, LookupError):
            return blob, f"re-encode as {self.encoding}: not possible"


RAW_TEXT = [
    "\t",
    "\x00",
    "\x1b[31m",
    "\x85",
    "\ufeff",
    "\u2028",
    "%YAML 1.1\n---\n",
    "%TAG ! tag:evil,2000:\n---\n",
    "---\n",
    "...\n",
    "--- !!python/object:os.system\n",
    "? [x]\n: 1\n",
    "&a ",
    "*a\n",
    '!!python/object/apply:os.system ["id"]\n',
    "- \n",
    "key: 'unterminated\n",
    "{",
    "]",
    "#",
    "  ",
    "<<: *nope\n",
    "x: !!binary AAAA\n",
    "y: !!set {a}\n",
    "z: &z [*z]\n",
]
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xef\xbb\xbf", b"\x00\x00", b"\xe2\x80\xae"]


def tree_ops(role_names: tuple[str, ...] = ("gpu_node", "leaf", "spine", "core")) -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    key = st.one_of(st.sampled_from(ODD_KEYS), st.sampled_from(SECTION_KEYS), hostile_text())
    return st.one_of(
        st.builds(SetValue, index, values()),
        st.builds(Tweak, index, st.sampled_from(["double", "half", "+1", "-1", "zero", "one", "negate", "float", "string"])),
        st.builds(Retext, index, hostile_text(), st.sampled_from(["replace", "prefix", "suffix"])),
        st.builds(DropKey, index),
        st.builds(RenameKey, index, key),
        st.builds(InsertKey, index, key, values()),
        st.builds(AliasValue, index, index, st.booleans()),
        st.builds(Naming, st.sampled_from(role_names), st.one_of(st.sampled_from(PATTERNS), hostile_text())),
    )


def text_ops() -> st.SearchStrategy:
    return st.one_of(
        st.builds(TextInsert, st.integers(0, 1000), st.one_of(st.sampled_from(RAW_TEXT), st.sampled_from(CONTROL + FORMAT))),
        st.builds(ByteInsert, st.integers(0, 1000), st.sampled_from(BAD_BYTES)),
        st.builds(Encode, st.sampled_from(["utf-16", "utf-8-sig", "latin-1", "utf-32"])),
    )


def apply_ops(tree, ops) -> tuple[bytes, list[str]]:
    """Tree ops on a copy of `tree`, then the YAML text, then its bytes; with what each did."""
    tree = copy.deepcopy(tree)
    said = []
    for op in ops:
        if op.stage == "tree":
            tree, what = op.apply(tree)
            said.append(what)
    text = dump(tree)
    for op in ops:
        if op.stage == "text":
            text, what = op.apply(text)
            said.append(what)
    blob = text.encode("utf-8", "surrogatepass")
    for op in ops:
        if op.stage == "bytes":
            blob, what = op.apply(blob)
            said.append(what)
    return blob, said


# --- cases ----------------------------------------------------------------------------------------

# Exit codes each command may give: 1 is "something differs / a device failed", never a crash.
ALLOWED = {
    "build": {0, 2},
    "validate": {0, 2},
    "diff": {0, 1, 2},
    "analyze": {0, 2},
    "push": {0, 1, 2},
    "bom": {0, 1, 2},
    "lab": {0, 2},
    "export": {0, 2},
    "testplan": {0, 1, 2},
    "verify": {0, 1, 2},
    "releases": {0, 2},
    "schema": {0, 2},
    "init": {0, 2},
    "secrets": {0, 1, 2},
}


@dataclass(frozen=True)
class Symlink:
    target: str


@dataclass(frozen=True)
class Fifo:
    """A named pipe nobody writes to: a reader that opens it plainly waits forever."""


@dataclass(frozen=True)
class Directory:
    """A directory where a file is expected."""


@dataclass(frozen=True)
class Sparse:
    """A file of `size` zero bytes that takes no disk (a hole)."""

    size: int


@dataclass
class Case:
    """Files to write (relative path -> bytes, a Symlink, or None to delete), an optional
    directory copied in first, and the command line (`{dir}` stands for the case's directory)."""

    generator: str
    command: str
    argv: tuple[str, ...]
    files: dict[str, bytes | Symlink | Fifo | Directory | Sparse | None]
    mutations: list[str]
    ops: tuple = ()
    rebuild: Callable[[tuple], Case] | None = None  # the same case with other ops (for shrinking)
    copy_tree: tuple[Path, str] | None = None  # (source directory, where in the case)
    must_refuse: str = ""  # why this input must give exit 2 ("" when it may be accepted)
    output: str | None = None  # written by the command; must not exist after exit 2
    base: str = ""
    templated: frozenset[str] = frozenset()  # files in which {dir} stands for the case's directory
    env: dict[str, str] = field(default_factory=dict)  # added to ENV for this case ({dir} stands for its directory)
    prepare: Callable[[Path], None] | None = None  # run in the parent once the files are written
    # run in the child before the command (a stand-in for what cannot run in a case: a device, the
    # lab's kernel commands); returns what the child reports back after the command, as `extra`
    child_setup: Callable[[Path], Callable[[], dict]] | None = None
    check: Callable[[Path, Outcome], str | None] | None = None  # a property of this generator: a failure class or None
    placeholders: dict[str, str] = field(default_factory=dict)  # {NAME} in argv -> a value `prepare` set

    def materialize(self, directory: Path) -> None:
        if self.copy_tree is not None:
            source, where = self.copy_tree
            shutil.copytree(source, directory / where)
        for name, data in self.files.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if data is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            elif isinstance(data, Symlink):
                path.symlink_to(data.target)
            elif isinstance(data, Fifo):
                os.mkfifo(path)
            elif isinstance(data, Directory):
                path.mkdir()
            elif isinstance(data, Sparse):
                with path.open("wb") as sparse:
                    sparse.truncate(data.size)
            else:
                path.write_bytes(data.replace(b"{dir}", str(directory).encode()) if name in self.templated else data)
        if self.prepare is not None:
            self.prepare(directory)

    def size(self) -> int:
        return sum(len(data) for data in self.files.values() if isinstance(data, bytes)) + 100 * len(self.ops)

    def __repr__(self) -> str:  # hypothesis prints a failing case: its files can be megabytes
        return f"Case({self.generator}: fabricgen {' '.join(self.argv)}; {'; '.join(self.mutations) or 'unmutated'})"


# --- running one case in a forked child -----------------------------------------------------------


class CaseTimeout(BaseException):
    """Raised in the child by its CPU timer; a BaseException so no `except Exception` swallows it."""


@dataclass
class Outcome:
    exit_code: int | None  # None: the child was killed
    stdout: str = ""  # its last part
    stderr: str = ""
    exception: str = ""  # the exception that escaped the CLI ("" when none)
    traceback: str = ""
    where: str = ""  # the innermost fabricgen frame of that traceback (or the innermost frame)
    problems: list[dict] = field(default_factory=list)  # the first unlocated problem and the first 20: text, located
    reports: list[dict] = field(default_factory=list)  # each report's head line, line count and end
    invisible: list[str] = field(default_factory=list)  # raw control/format characters printed
    network: list[str] = field(default_factory=list)  # non-loopback connections tried
    writes: list[str] = field(default_factory=list)  # changes tried outside the case's directory
    killed: str = ""  # why the parent killed the child
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0
    reports_printed: bool = True  # every report is in stderr as FabricgenError.report() wrote it
    peak_rss: int = 0  # the case's peak resident set above what it started with (bytes)
    extra: dict = field(default_factory=dict)  # what the case's child_setup reported back


STDOUT_TAIL = 4000
STDERR_MAX = 64_000
ENV = {"FABRICGEN_USERNAME": "fuzz", "FABRICGEN_PASSWORD": "fuzz-password", "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
# values for every secret the golden intents name, so an unmutated build pushes as far as a device
ENV.update(
    {
        f"FABRICGEN_SECRET_{name.upper().replace('-', '_')}": f"fuzz-{name}"
        for name in (
            "bgp-backend",
            "tacacs-key",
            "ntp-key",
            "admin-password-hash",
            "snmp-auth-key",
            "snmp-priv-key",
        )
    }
)
# Raw characters that must never reach a terminal: C0 (but tab and newline), DEL, C1, and the
# format characters that reorder or hide text.
INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]")


def _vm_bytes(field_name: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    return 0


def run_case(case: Case, directory: Path, limits: Profile) -> Outcome:
    """Write the case into `directory` (which must not exist), run its command in a forked child
    and return what happened. The parent kills a child still running at the wall-clock limit."""
    directory.mkdir(parents=True)
    case.materialize(directory)
    argv = [arg.replace("{dir}", str(directory)) for arg in case.argv]
    for key, value in case.placeholders.items():
        argv = [arg.replace("{" + key + "}", value) for arg in argv]
    baseline = _vm_bytes("VmRSS")
    read_end, write_end = os.pipe()
    started = time.perf_counter()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: whatever happens, it ends here and never runs the parent's code on
        try:
            os.close(read_end)
            try:
                result = _child(argv, directory, limits, case)
            except BaseException as exc:  # noqa: BLE001 - the parent must hear of it
                result = {"exit_code": 1, "exception": type(exc).__name__, "traceback": traceback.format_exc()}
            try:
                payload = json.dumps(result, default=str).encode()
            except BaseException:  # noqa: BLE001
                payload = b'{"exit_code": 1, "exception": "unreportable result"}'
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, killed = [], ""
    deadline = started + limits.wall_limit_s
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            killed = f"still running after {limits.wall_limit_s:.0f} s (blocked: it used little CPU)"
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read_end], [], [], remaining)
        if ready:
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - started
    peak = max(0, usage.ru_maxrss * 1024 - baseline)
    if os.WIFSIGNALED(status) and not killed:
        killed = f"killed by signal {os.WTERMSIG(status)}"
    try:
        data = json.loads(b"".join(chunks)) if chunks and not killed else {}
    except ValueError:
        data = {}
    if "exit_code" not in data and not killed:
        killed = "ended without a report"
    cpu = usage.ru_utime + usage.ru_stime
    if killed:
        return Outcome(exit_code=None, killed=killed, seconds=seconds, cpu_seconds=cpu, peak_rss=peak)
    known = Outcome.__dataclass_fields__
    return Outcome(**{"peak_rss": peak, **{k: v for k, v in data.items() if k in known}, "seconds": seconds, "cpu_seconds": cpu})


def _child(argv: list[str], directory: Path, limits: Profile, case: Case | None = None) -> dict:
    from typer.testing import CliRunner

    from fabricgen import cli
    from fabricgen.basics.errors import FabricgenError

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = _vm_bytes("VmSize") + limits.memory_limit
    resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    os.chdir(directory)
    with contextlib.suppress(OSError):  # reset the peak resident set inherited from the parent (Linux 4.0+)
        Path("/proc/self/clear_refs").write_text("5")
    start_rss = _vm_bytes("VmRSS")
    attempts = _guard_network()
    # a home and a lab state root of the case's own: nothing a command writes by default lands elsewhere
    own = {"HOME": str(directory), "FABRICGEN_LAB_STATE": str(directory / "lab-state"), "TMPDIR": str(directory / "tmp")}
    (directory / "tmp").mkdir(exist_ok=True)
    tempfile.tempdir = str(directory / "tmp")  # gettempdir() remembers the parent's choice
    env = {**ENV, **own, **{key: value.replace("{dir}", str(directory)) for key, value in (case.env if case else {}).items()}}
    os.environ.update(env)  # also for what reads os.environ directly rather than through click
    report_back = case.child_setup(directory) if case is not None and case.child_setup is not None else None
    sys.dont_write_bytecode = True
    writes = _guard_files(directory)
    reported: list = []
    original_report = FabricgenError.report

    def report(self):
        reported.append(self)
        return original_report(self)

    FabricgenError.report = report

    def alarm(signum, frame):
        raise CaseTimeout(f"over the limit of {limits.cpu_limit_s} CPU seconds")

    # CPU time, not wall time: the verdict must not depend on how busy the machine is
    signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, limits.cpu_limit_s)
    try:
        result = CliRunner().invoke(cli.app, argv, env=env, catch_exceptions=True, prog_name="fabricgen")
        signal.setitimer(signal.ITIMER_PROF, 0)
    except CaseTimeout as exc:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        return {
            "exit_code": 1,
            "exception": "CaseTimeout",
            "traceback": traceback.format_exc(),
            "where": _where(exc.__traceback__),
            "network": attempts,
            "peak_rss": _vm_bytes("VmHWM") - start_rss,
        }
    # the case is over: lift the memory limit so that describing it cannot fail for want of memory
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    FabricgenError.report = original_report
    stdout, stderr = result.stdout, result.stderr
    outcome = {
        "exit_code": result.exit_code,
        "stdout": stdout[-STDOUT_TAIL:],
        "stderr": stderr[:STDERR_MAX],
        "network": attempts,
        "writes": writes[:5],
        "peak_rss": _vm_bytes("VmHWM") - start_rss,
        "extra": report_back() if report_back is not None else {},
    }
    if "--json" in argv and result.exit_code in (0, 1):  # judged here: only the end of stdout travels
        try:
            json.loads(stdout)
            outcome["extra"]["stdout_json"] = True
        except ValueError:
            outcome["extra"]["stdout_json"] = False
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        outcome["exception"] = type(result.exception).__name__
        outcome["traceback"] = "".join(traceback.format_exception(*result.exc_info))[-20_000:]
        outcome["where"] = _where(result.exc_info[2])
    # the characters, then the first line that holds one (escaped), so the report shows where
    found = sorted({repr(ch) for ch in INVISIBLE.findall(stdout + stderr)})[:10]
    line = next((line for line in (stdout + stderr).split("\n") if INVISIBLE.search(line)), "")
    outcome["invisible"] = found + ([f"in: {line[:300]!r}"] if found else [])
    texts = [error.report() for error in reported]
    outcome["reports"] = [{"head": text.split("\n", 1)[0][:200], "lines": text.count("\n"), "tail": text[-1500:]} for text in texts]
    outcome["reports_printed"] = all(text in stderr for text in texts)
    # every problem is judged here; only a few travel (a hostile input can make a million, or one of
    # a gigabyte), the first unlocated one always among them
    judged = [(error.phase, problem, _located(problem, error.phase)) for error in reported for problem in error.problems]
    unlocated = [entry for entry in judged if not entry[2]][:1]
    outcome["problems"] = [{"text": problem.format()[:2000], "phase": phase, "located": located} for phase, problem, located in unlocated + judged[:20]]
    return outcome


def _located(problem, phase: str = "") -> bool:
    """A problem names where it is: a file, a device, (diff) the side the user gave, or (a path
    on the command line) the option or argument that gave it."""
    if phase == "arguments" and problem.field:
        return True
    return bool(problem.file or problem.device or re.match(r"(old|new) side ", problem.message))


def _where(tb) -> str:
    """The innermost frame in the project (else the innermost frame): `fabricgen/x.py:function`.
    A crash in a library is classed by the project's call into it (where it should be caught)."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if re.search(r"/(fabricgen|napalm_sonic|tests)/", f.filename) and not f.filename.endswith("fuzzing.py")]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    parts = Path(frame.filename).parts
    for anchor in ("fabricgen", "napalm_sonic", "tests", "site-packages", "lib"):
        if anchor in parts:
            index = len(parts) - 1 - parts[::-1].index(anchor)
            start = index if anchor in ("fabricgen", "napalm_sonic", "tests") else index + 1
            return "/".join(parts[start:]) + f":{frame.name}"
    return f"{Path(frame.filename).name}:{frame.name}"


def _guard_network() -> list[str]:
    """Make any connection or name lookup off the loopback fail in this process, and note it: the
    fuzzer aims `push` at 127.0.0.1, and nothing it generates may reach anything else."""
    attempts: list[str] = []
    real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def loopback(host) -> bool:
        if host in ("localhost", "localhost.localdomain"):
            return True
        try:
            return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return False

    def allowed(address) -> bool:
        return isinstance(address, (str, bytes)) or loopback(address[0])

    def connect(self, address):
        if not allowed(address):
            attempts.append(f"connect {address!r}")
            raise ConnectionRefusedError(111, "the fuzzer allows the loopback only")
        return real_connect(self, address)

    def connect_ex(self, address):
        if not allowed(address):
            attempts.append(f"connect {address!r}")
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not loopback(host.decode() if isinstance(host, bytes) else host):
            attempts.append(f"lookup {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, "the fuzzer allows the loopback only")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
    return attempts


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _guard_files(directory: Path) -> list[str]:
    """Make every change to the file system outside the case's `directory` fail in this process
    (a write, a create, a removal, a rename, a mode change), and note it: a case runs as root, and
    neither fabricgen nor a generated path may touch anything else. Reads go anywhere. /dev/null
    may be written. Subprocesses (git, dot) are not watched."""
    import builtins
    import io
    import shutil as shutil_module

    root = os.path.realpath(directory)
    attempts: list[str] = []

    def where(path, dir_fd=None, follow=False) -> str:
        text = os.fsdecode(path)
        if dir_fd is not None and not os.path.isabs(text):
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        if follow:  # an open writes where a link leads
            return os.path.realpath(text)
        # a removal or a rename acts on the name itself, a link included: its parent resolved
        return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(text)) or "/"), os.path.basename(text))

    def inside(path, dir_fd=None, follow=False) -> bool:
        if isinstance(path, int):  # an open descriptor: checked where it was opened
            return True
        try:
            real = where(path, dir_fd, follow)
        except (OSError, ValueError):
            return True  # the call itself will fail
        return real == root or real.startswith(root + os.sep) or real == "/dev/null"

    def refuse(what: str, path) -> None:
        attempts.append(f"{what} {os.fsdecode(path)[:200]!r}")
        raise PermissionError(13, "the fuzzer allows changes inside the case's directory only", os.fsdecode(path))

    def guarded(name: str, function, *, flags_at: int | None = None, mode_at: int | None = None, paths: tuple[int, ...] = (0,)):
        def wrapper(*args, **kwargs):
            if flags_at is not None:
                flags = args[flags_at] if len(args) > flags_at else kwargs.get("flags", 0)
                if not flags & _WRITE_FLAGS:
                    return function(*args, **kwargs)
            if mode_at is not None:
                mode = args[mode_at] if len(args) > mode_at else kwargs.get("mode", "r")
                if not any(ch in str(mode) for ch in "wax+"):
                    return function(*args, **kwargs)
            follow = name == "open" and not (flags_at is not None and (args[flags_at] if len(args) > flags_at else kwargs.get("flags", 0)) & os.O_NOFOLLOW)
            for index in paths:
                if len(args) > index and not inside(args[index], kwargs.get("dir_fd") if index == 0 else kwargs.get("dst_dir_fd"), follow):
                    refuse(name, args[index])
            return function(*args, **kwargs)

        return wrapper

    real_open = builtins.open
    builtins.open = io.open = guarded("open", real_open, mode_at=1)
    os.open = guarded("open", os.open, flags_at=1)
    for name in ("unlink", "remove", "rmdir", "mkdir", "mkfifo", "chmod", "chown", "truncate", "utime"):
        setattr(os, name, guarded(name, getattr(os, name)))
    for name in ("rename", "replace", "link", "symlink"):
        setattr(os, name, guarded(name, getattr(os, name), paths=(1,) if name == "symlink" else (0, 1)))
    shutil_module.rmtree = guarded("rmtree", shutil_module.rmtree)
    return attempts


# --- the properties -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    kind: str  # the failure class: one line, the same for every case that fails the same way
    detail: str  # what this case showed


def _template(text: str) -> str:
    """A message with its values taken out, so one kind of problem is one failure class."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"/\S+", "PATH", text)
    return re.sub(r"\d+", "N", text)[:90]


def judge(case: Case, outcome: Outcome, directory: Path) -> Finding | None:
    """The first property this outcome breaks, as a failure class; None when it keeps them all."""
    command = case.command
    if outcome.network:
        return Finding(f"{command}: tried to reach a non-loopback address", "; ".join(outcome.network[:3]))
    if outcome.writes:
        return Finding(f"{command}: tried to change files outside its directory", "; ".join(outcome.writes[:3]))
    if outcome.killed:
        return Finding(f"{command}: {outcome.killed}", f"after {outcome.seconds:.1f} s")
    if outcome.exception == "CaseTimeout":
        return Finding(f"{command}: over the CPU time limit, in {outcome.where}", outcome.traceback[-1500:])
    if outcome.exception == "MemoryError":
        return Finding(f"{command}: over the memory limit, in {outcome.where}", outcome.traceback[-1500:])
    if outcome.exception:
        return Finding(f"{command}: crash {outcome.exception} in {outcome.where}", outcome.traceback[-1500:])
    printed = outcome.stdout + outcome.stderr
    if "Traceback (most recent call last)" in printed:
        return Finding(f"{command}: printed a traceback", outcome.stderr[-1500:])
    if outcome.exit_code not in ALLOWED[command]:
        return Finding(f"{command}: exit {outcome.exit_code}", outcome.stderr[-1500:])
    if outcome.exit_code == 2:
        if not outcome.reports and "Usage:" not in outcome.stderr:
            return Finding(f"{command}: exit 2 without a problem report", outcome.stderr[-1500:])
        for report in outcome.reports:
            match = re.fullmatch(r"[\w ]+: ([\d,]+) problems?", report["head"])  # 1,234 problems
            if not match or int(match.group(1).replace(",", "")) != report["lines"]:
                return Finding(f"{command}: a problem report is not one line per problem", report["tail"])
        if not outcome.reports_printed:
            return Finding(f"{command}: a problem report was not printed as it is", outcome.stderr[-1500:])
        for problem in outcome.problems:
            if not problem["located"]:
                return Finding(f"{command}: a problem names no file or device ({problem['phase']}: {_template(problem['text'])})", problem["text"][:1500])
    if outcome.invisible:
        return Finding(f"{command}: printed raw control or format characters", ", ".join(outcome.invisible))
    if case.must_refuse and outcome.exit_code != 2:
        return Finding(f"{command}: accepted {case.must_refuse}", outcome.stdout[-800:])
    if outcome.exit_code == 2 and case.output and (directory / case.output).exists():
        return Finding(f"{command}: refused the input but wrote {case.output}", "")
    if case.check is not None:
        broken = case.check(directory, outcome)
        if broken:
            return Finding(f"{command}: {broken}", outcome.stderr[-1500:])
    return None


# --- a campaign: many cases of one generator ------------------------------------------------------


@dataclass
class FailureClass:
    kind: str
    count: int = 0
    case: Case | None = None  # the smallest failing case seen (then shrunk)
    outcome: Outcome | None = None
    detail: str = ""
    saved: str = ""


class Campaign:
    """Runs one generator's cases, keeps statistics and every failure class.

    `run(case)` is the body of the hypothesis test: it never raises for a failing case (so the
    campaign runs its whole budget); `finish()` shrinks each failure class, writes the report and
    fails the test when any class was found."""

    def __init__(self, generator: str, workdir: Path, report_dir: Path | None = None):
        self.generator = generator
        self.limits = profile()
        self.workdir = workdir
        self.report_dir = report_dir or Path(os.environ.get("FABRICGEN_FUZZ_REPORT") or workdir / "report")
        self.cases = 0
        self.runs = 0  # cases plus the re-runs that shrink failures
        self.exit_codes: Counter[str] = Counter()
        self.by_base: Counter[str] = Counter()
        self.failures: dict[str, FailureClass] = {}
        self.started = time.perf_counter()
        self.peak_rss = 0
        self.slowest = 0.0
        self.cpu_seconds = 0.0  # every case's, shrinking included: the cost on an idle machine

    def execute(self, case: Case) -> tuple[Outcome, Finding | None]:
        self.runs += 1
        directory = self.workdir / f"case-{self.runs}"
        try:
            outcome = run_case(case, directory, self.limits)
            self.cpu_seconds += outcome.cpu_seconds
            return outcome, judge(case, outcome, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def run(self, case: Case) -> None:
        outcome, finding = self.execute(case)
        self.cases += 1
        self.by_base[case.base] += 1
        self.exit_codes[f"{case.command} {'killed' if outcome.exit_code is None else outcome.exit_code}" + (" (crash)" if outcome.exception else "")] += 1
        self.peak_rss = max(self.peak_rss, outcome.peak_rss)
        self.slowest = max(self.slowest, outcome.seconds)
        if finding is None:
            return
        failure = self.failures.setdefault(finding.kind, FailureClass(finding.kind))
        failure.count += 1
        if failure.case is None or case.size() < failure.case.size():
            failure.case, failure.outcome, failure.detail = case, outcome, finding.detail

    def shrink(self, failure: FailureClass, budget: int, deadline: float) -> int:
        """Drop mutations one at a time while the case still fails the same way, within `budget`
        re-runs and until `deadline` (perf_counter). Returns the re-runs spent."""
        spent = 0
        case = failure.case
        changed = True
        while changed and case.rebuild is not None and spent < budget:
            changed = False
            for index in range(len(case.ops)):
                if spent >= budget or len(case.ops) <= 1 or time.perf_counter() > deadline:
                    break
                smaller = case.rebuild(case.ops[:index] + case.ops[index + 1 :])
                outcome, finding = self.execute(smaller)
                spent += 1
                if finding is not None and finding.kind == failure.kind:
                    case, failure.outcome, failure.detail = smaller, outcome, finding.detail
                    changed = True
                    break
        failure.case = case
        return spent

    def finish(self) -> None:
        budget = self.limits.minimize_runs
        deadline = time.perf_counter() + self.limits.minimize_seconds
        for failure in sorted(self.failures.values(), key=lambda f: f.outcome.cpu_seconds):  # the quick ones first
            if failure.outcome.cpu_seconds > self.limits.minimize_seconds / 4:
                continue  # a case this slow would take the whole budget in a few re-runs
            budget -= self.shrink(failure, budget, deadline)
        self.write_report()
        if self.failures:
            raise AssertionError(self.summary())

    def save(self, index: int, failure: FailureClass) -> str:
        """The failing input as files, with a README of the command and what it printed."""
        target = self.report_dir / "failures" / f"{self.generator}-{index:02d}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        case, outcome = failure.case, failure.outcome
        case.materialize(target / "input")
        argv = " ".join(_shell_word(arg.replace("{dir}", str(target / "input"))) for arg in case.argv)
        text = [
            f"failure class: {failure.kind}",
            f"cases: {failure.count} of {self.cases} {self.generator} cases",
            f"base: {case.base}"
            + (f" (a copy of {case.copy_tree[0]}, which `fabricgen build tests/golden/{case.copy_tree[0].name}.yaml` writes)" if case.copy_tree else ""),
            "mutations:",
            *[f"  - {m}" for m in case.mutations],
            f"command: fabricgen {argv}",
            f"exit code: {outcome.exit_code if outcome.exit_code is not None else 'none (killed: ' + outcome.killed + ')'}",
            f"time: {outcome.seconds:.2f} s ({outcome.cpu_seconds:.2f} s CPU), memory: {outcome.peak_rss / 2**20:.0f} MiB at its peak above its start",
            "",
            "detail:",
            failure.detail,
            "",
            "stderr (end):",
            outcome.stderr[-3000:],
            "stdout (end):",
            outcome.stdout[-1500:],
        ]
        (target / "README.txt").write_text("\n".join(text), encoding="utf-8", errors="backslashreplace")
        return str(target)

    def write_report(self) -> None:
        self.report_dir.mkdir(parents=True, exist_ok=True)
        failures = []
        for index, failure in enumerate(sorted(self.failures.values(), key=lambda f: -f.count), 1):
            failure.saved = self.save(index, failure)
            failures.append(
                {
                    "kind": failure.kind,
                    "cases": failure.count,
                    "input": failure.saved,
                    "base": failure.case.base,
                    "mutations": failure.case.mutations,
                    "exit_code": failure.outcome.exit_code,
                    "stderr_tail": failure.outcome.stderr[-600:],
                    "detail": failure.detail[-600:],
                }
            )
        report = {
            "generator": self.generator,
            "profile": PROFILE,
            "seed": seed(),
            "cases": self.cases,
            "bases": dict(self.by_base),
            "exit_codes": dict(sorted(self.exit_codes.items())),
            "failures": failures,
            "seconds": round(time.perf_counter() - self.started, 1),
            "peak_case_rss_mib": round(self.peak_rss / 2**20, 1),
            "slowest_case_s": round(self.slowest, 2),
            "cpu_s": round(self.cpu_seconds, 1),
            "fuzzer_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
        (self.report_dir / f"{self.generator}.json").write_text(json.dumps(report, indent=2, ensure_ascii=True))

    def summary(self) -> str:
        lines = [f"{len(self.failures)} failure class(es) in {self.cases} {self.generator} cases (inputs and details under {self.report_dir}/failures):"]
        for index, failure in enumerate(sorted(self.failures.values(), key=lambda f: -f.count), 1):
            outcome = failure.outcome
            lines += [
                f"[{index}] {failure.kind}  ({failure.count} cases)",
                f"    base {failure.case.base}; " + "; ".join(failure.case.mutations)[:400],
                "    command: fabricgen "
                + " ".join(_shell_word(a.replace("{dir}", failure.saved + "/input")) for a in failure.case.argv)
                + f"  -> exit {outcome.exit_code}",
                "    " + (failure.detail.strip().splitlines() or [""])[-1][:300],
                f"    saved: {failure.saved}",
            ]
        return "\n".join(lines)


def _shell_word(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_./:=@%+-]+", text) else "'" + text.replace("'", "'\\''") + "'"


# --- generators -----------------------------------------------------------------------------------

INTENT_BASES = {path.name: path for path in [*sorted((REPO / "tests" / "golden").glob("*.yaml")), *sorted((REPO / "intents").glob("*.yaml"))]}
# small fabrics are drawn more often: a case should cost a fraction of a second
INTENT_WEIGHTS = {"tiny-nxos.yaml": 4, "tiny-sonic.yaml": 4, "tiny-evpn.yaml": 3, "cisco-256-gpu.yaml": 2, "cisco-512-gpu.yaml": 1, "superpod-4096.yaml": 1}
INTENT_FILE_NAMES = ["intent.yaml", "my cluster.yaml", "x\x1b[31m.yaml", "über.yaml", "a\nb.yaml", "-o.yaml", "intent.yml", "intent.txt", ".yaml"]


def _bases() -> dict[str, object]:
    global _BASE_TREES
    if _BASE_TREES is None:
        _BASE_TREES = {name: load_base(path) for name, path in INTENT_BASES.items()}
    return _BASE_TREES


_BASE_TREES = None


def intent_case(base: str, ops: tuple, file_name: str = "intent.yaml") -> Case:
    """`fabricgen build` of a real intent after `ops`."""
    tree = _bases()[base]
    if file_name != "intent.yaml":  # the file name becomes the fabric's name
        tree = {key: value for key, value in tree.items() if key != "name"}
    blob, said = apply_ops(tree, ops)
    return Case(
        generator="intent",
        command="build",
        argv=("build", "{dir}/" + file_name, "-o", "{dir}/out"),
        files={file_name: blob},
        mutations=said + ([f"file name {file_name!r}"] if file_name != "intent.yaml" else []),
        ops=ops,
        rebuild=lambda ops: intent_case(base, ops, file_name),
        output="out",
        base=base,
    )


@st.composite
def intent_cases(draw) -> Case:
    skip = profile().skip_bases
    weighted = [name for name, weight in INTENT_WEIGHTS.items() if name in INTENT_BASES and name not in skip for _ in range(weight)]
    base = draw(st.sampled_from(weighted))
    ops = draw(st.lists(st.one_of(tree_ops(), tree_ops(), text_ops()), min_size=1, max_size=4))
    name = draw(st.one_of(st.just("intent.yaml"), st.sampled_from(INTENT_FILE_NAMES))) if draw(st.integers(0, 9)) == 0 else "intent.yaml"
    return intent_case(base, tuple(ops), name)


YAMLISH = ":-[]{}&*!|>'\"%@`#,?<= \n\t\\ab01.~"


@st.composite
def yaml_bytes_cases(draw) -> Case:
    """Whole files of random bytes, or of YAML punctuation and a few words."""
    kind = draw(st.sampled_from(["bytes", "yamlish", "words"]))
    if kind == "bytes":
        blob = draw(st.binary(max_size=600))
    elif kind == "yamlish":
        blob = draw(st.text(alphabet=YAMLISH, max_size=600)).encode()
    else:
        pieces = draw(
            st.lists(
                st.sampled_from(SECTION_KEYS + [": ", "\n", "  ", "- ", "[", "]", "{", "}", "&a ", "*a", "<<: ", "!!int ", "256", "2:1", "\x1b"]), max_size=80
            )
        )
        blob = "".join(pieces).encode()
    return Case(
        generator="yaml-bytes",
        command="build",
        argv=("build", "{dir}/intent.yaml", "-o", "{dir}/out"),
        files={"intent.yaml": blob},
        mutations=[f"the whole intent is {short(blob, 200)}"],
        output="out",
        base=kind,
    )


# catalogs -------------------------------------------------------------------------------------------

USER_PID = "USER-SW-1"


def _switch_entry() -> dict:
    global _SWITCH
    if _SWITCH is None:
        _SWITCH = load_base(REPO / "fabricgen" / "catalog" / "data" / "switches.yaml")["switches"]["N9K-C9364D-GX2A"]
    return copy.deepcopy(_SWITCH)


_SWITCH = None

CATALOG_FIELDS = {
    "text": [
        ("description",),
        ("vendor",),
        ("console_port",),
        ("management_port", "nxos"),
        ("management_port", "sonic"),
        ("sonic", "platform"),
        ("sonic", "hwsku"),
        ("port_groups", 0, "form_factor"),
    ],
    "pattern": [
        ("interface_names", "nxos", "port"),
        ("interface_names", "nxos", "breakout"),
        ("interface_names", "sonic", "port"),
        ("interface_names", "sonic", "breakout"),
    ],
    "number": [
        ("port_groups", 0, "count"),
        ("port_groups", 0, "first"),
        ("port_groups", 0, "lanes"),
        ("port_groups", 0, "speed"),
        ("max_ecmp_paths",),
        ("rack_units",),
    ],
}


@dataclass(frozen=True)
class CatalogField(Op):
    """A field of the user's switch entry, set to hostile text, a pattern or a bad number."""

    field: tuple
    value: object

    def apply(self, tree):
        entry = tree["switches"][next(iter(tree["switches"]))] if isinstance(tree.get("switches"), dict) and tree["switches"] else None
        if not isinstance(entry, dict):
            return tree, "catalog field: no switch entry"
        holder = entry
        try:
            for part in self.field[:-1]:
                holder = holder.setdefault(part, {}) if isinstance(holder, dict) else holder[part]
            holder[self.field[-1]] = self.value
        except (TypeError, IndexError, KeyError, AttributeError):  # an earlier change made a parent a scalar, an alias or a short list
            return tree, f"catalog field {'.'.join(map(str, self.field))}: its parent is no longer a mapping"
        return tree, f"switch.{_dotted(self.field)} = {short(self.value)}"


@dataclass(frozen=True)
class OnFile(Op):
    """A tree op on one file of a multi-file case."""

    file: str
    op: Op


@dataclass(frozen=True)
class SwitchPid(Op):
    pid: str


@dataclass(frozen=True)
class CatalogPath(Op):
    """Where the intent says the catalog is: possibly outside its directory."""

    path: str


CATALOG_PATHS = {
    # path in the intent -> why it must be refused ("" when it is the intent's own directory)
    "user.yaml": "",
    "./user.yaml": "",
    "sub/../user.yaml": "",
    "../outside.yaml": "a catalog outside the intent's directory (../)",
    "sub/../../outside.yaml": "a catalog outside the intent's directory (sub/../../)",
    "{dir}/outside.yaml": "a catalog outside the intent's directory (absolute path)",
    "link.yaml": "a catalog outside the intent's directory (a symlink)",
    "/etc/hostname": "a catalog outside the intent's directory (/etc/hostname)",
    "/proc/self/environ": "a catalog outside the intent's directory (/proc/self/environ)",
    "/dev/zero": "a catalog outside the intent's directory (/dev/zero)",
    "/dev/stdin": "a catalog outside the intent's directory (/dev/stdin)",
    "~/.bashrc": "",
    "": "",
    ".": "",
    "user.yaml\x00": "",
    "USER.YAML": "",
}


def catalog_case(nos: str, with_oob: bool, ops: tuple) -> Case:
    """An intent whose leaves and spines are the user's switch, described in user.yaml."""
    pid, path = USER_PID, "user.yaml"
    for op in ops:
        if isinstance(op, SwitchPid):
            pid = op.pid
        elif isinstance(op, CatalogPath):
            path = op.path
    intent = {"name": "fuzz-catalog", "catalog": [path], "gpus": 16, "backend": {"leaf": {"model": pid, "nos": nos}, "spine": {"model": pid, "nos": nos}}}
    if with_oob:
        intent["oob"] = {}
    catalog = {"switches": {pid: _switch_entry()}}
    said = [f"switch {pid!r} on {nos}" + (" with an OOB network" if with_oob else "")]
    for op in ops:
        if isinstance(op, CatalogField):
            catalog, what = op.apply(catalog)
            said.append(what)
        elif isinstance(op, OnFile):
            if op.file == "intent":
                intent, what = op.op.apply(intent)
            else:
                catalog, what = op.op.apply(catalog)
            said.append(f"{op.file}: {what}")
        elif isinstance(op, CatalogPath):
            said.append(f"catalog path {path!r}")
    catalog_blob, _ = apply_ops(catalog, ())
    files: dict[str, bytes | Symlink | Fifo | Directory | Sparse | None] = {
        "fabric/user.yaml": catalog_blob,
        "outside.yaml": catalog_blob,
        "fabric/link.yaml": Symlink("../outside.yaml"),
    }
    files["fabric/intent.yaml"] = dump(intent).encode("utf-8", "surrogatepass")
    return Case(
        generator="catalog",
        command="build",
        argv=("build", "{dir}/fabric/intent.yaml", "-o", "{dir}/out"),
        files=files,
        mutations=said,
        ops=ops,
        rebuild=lambda ops: catalog_case(nos, with_oob, ops),
        output="out",
        must_refuse=CATALOG_PATHS.get(path, ""),
        base=f"user switch on {nos}",
        templated=frozenset({"fabric/intent.yaml"}),  # an absolute catalog path names the case's directory
    )


def catalog_ops() -> st.SearchStrategy:
    def field_op(kind):
        strategy = {"text": hostile_text(), "pattern": st.sampled_from(INTERFACE_PATTERNS + PATTERNS) | hostile_text(), "number": values()}[kind]
        return st.builds(CatalogField, st.sampled_from(CATALOG_FIELDS[kind]), strategy)

    return st.one_of(
        field_op("text"),
        field_op("pattern"),
        field_op("number"),
        st.builds(OnFile, st.just("catalog"), tree_ops()),
        st.builds(OnFile, st.just("intent"), tree_ops()),
        st.builds(SwitchPid, st.one_of(hostile_text(), st.sampled_from(["", "N9K-C9364D-GX2A", "a/b", "../x", "X" * 200, "PID with space"]))),
        st.builds(CatalogPath, st.sampled_from(sorted(CATALOG_PATHS))),
    )


@st.composite
def catalog_cases(draw) -> Case:
    nos = draw(st.sampled_from(["nxos", "sonic"]))
    with_oob = draw(st.booleans())
    ops = draw(st.lists(catalog_ops(), min_size=1, max_size=4))
    return catalog_case(nos, with_oob, tuple(ops))


# build directories ----------------------------------------------------------------------------------

BUILD_BASES = ("tiny-sonic", "tiny-nxos")
INVENTORY = b"defaults: {host: 127.0.0.1, optional_args: {port: 9}}\n"
COMMANDS = {
    "diff": lambda: ("diff", "{base}", "{dir}/build"),
    "diff-reversed": lambda: ("diff", "{dir}/build", "{base}"),
    "analyze": lambda: ("analyze", "--no-traffic", "{dir}/build"),
    "push": lambda: (
        "push",
        "{dir}/build",
        "--inventory",
        "{dir}/inventory.yaml",
        "--known-hosts",
        "{dir}/known_hosts",
        "--connect-timeout",
        "2",
        "--concurrency",
        "4",
    ),
    "bom": lambda: ("bom", "compare", "{dir}/build", str(REPO / "tests" / "data" / "whitepaper-256-gpu.csv")),
}


def build_bases(directory: Path) -> dict[str, Path]:
    """The tiny golden intents built once into `directory` (in-process; a fixture calls this once)."""
    from fabricgen.compiler.pipeline import build

    built = {}
    for name in BUILD_BASES:
        target = directory / name
        if not (target / "manifest.json").exists():
            build(REPO / "tests" / "golden" / f"{name}.yaml", target)
        built[name] = target
    return built


HOSTILE_NAMES = [
    "leaf\x1b[2J",
    "../../etc",
    "a;reboot",
    "-rf",
    'x"y',
    "spine01\nrouter bgp 1",
    "Ω",
    "n" * 300,
    "",
    " ",
    "be-su01-leaf1 ",
    "configs",
    "..",
    "a/b",
    "$(id)",
    "\u202eleaf",
    "be-spine01",
    "0",
    "leaf,1",
]


@dataclass(frozen=True)
class BuildOp(Op):
    """A change to a build directory; `sign` also updates manifest.json's sha256 of the file."""

    stage = "build"


@dataclass(frozen=True)
class EditFile(BuildOp):
    file: int
    at: int
    data: bytes
    sign: bool

    def apply(self, build: dict[str, bytes]):
        name = _pick(build, self.file)
        blob = build[name]
        at = len(blob) * (self.at % 1001) // 1000
        build[name] = blob[:at] + self.data + blob[at:]
        return {name} if self.sign else set(), f"insert {short(self.data)} into {name} at {at}" + (" (manifest updated)" if self.sign else "")


@dataclass(frozen=True)
class Truncate(BuildOp):
    file: int
    keep: int  # per mille
    sign: bool

    def apply(self, build):
        name = _pick(build, self.file, prefer=(".json", ".csv"))
        build[name] = build[name][: len(build[name]) * (self.keep % 1001) // 1000]
        return {name} if self.sign else set(), f"truncate {name} to {len(build[name])} bytes" + (" (manifest updated)" if self.sign else "")


@dataclass(frozen=True)
class Delete(BuildOp):
    file: int

    def apply(self, build):
        name = _pick(build, self.file)
        build[name] = None
        return set(), f"delete {name}"


@dataclass(frozen=True)
class AddFile(BuildOp):
    name: str
    data: bytes
    listed: bool  # also in the manifest (with its right sha256)

    def apply(self, build):
        build[self.name] = self.data
        return {self.name} if self.listed else set(), f"add {self.name!r}" + (" (listed in the manifest)" if self.listed else "")


@dataclass(frozen=True)
class RenameDevice(BuildOp):
    """A device renamed in topology.json, cabling.csv and ip-plan.csv, the manifest updated."""

    device: int
    name: str

    def apply(self, build):
        try:
            nodes = [n["id"] for n in json.loads(build["topology.json"])["nodes"]]
        except (TypeError, ValueError, KeyError):
            return set(), "rename device: topology.json unreadable"
        old = sorted(nodes)[self.device % len(nodes)]
        if not _encodable(old):  # a lone surrogate an earlier rename wrote as \ud800: no bytes to find
            return set(), "rename device: its name has no UTF-8 form"
        changed = set()
        for name in ("topology.json", "cabling.csv", "ip-plan.csv"):
            if build.get(name) is None:
                continue
            if name == "topology.json":
                new = json.dumps(self.name)[1:-1].encode()  # JSON-escaped inside its quotes
                build[name] = build[name].replace(f'"{old}"'.encode(), b'"' + new + b'"')
            else:
                build[name] = re.sub(rb"(^|,)" + re.escape(old.encode()) + rb"(?=,|$)", lambda m: m.group(1) + _csv_field(self.name), build[name], flags=re.M)
            changed.add(name)
        return changed, f"rename device {old!r} to {self.name!r} (manifest updated)"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _csv_field(text: str) -> bytes:
    return (('"' + text.replace('"', '""') + '"') if re.search(r'[",\n\r]', text) else text).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class MutateJson(BuildOp):
    """A tree op on a JSON file of the build (topology.json or manifest.json), written back as JSON."""

    file: str
    op: Op

    def apply(self, build):
        if build.get(self.file) is None:
            return set(), f"{self.file}: missing"
        try:
            tree = json.loads(build[self.file])
        except ValueError:
            return set(), f"{self.file}: not JSON"
        tree, what = self.op.apply(tree)
        build[self.file] = json.dumps(_json_keys(tree), default=_json_default, indent=1, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return ({self.file} if self.file != "manifest.json" else set()), f"{self.file}: {what}"


def _json_keys(tree):
    """`tree` with every key JSON can hold: a raw or tagged key (a YAML-only form) as its text."""
    if isinstance(tree, dict):
        return {(_json_default(key) if isinstance(key, (Raw, Tagged, Anchored)) else key): _json_keys(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [_json_keys(value) for value in tree]
    return tree


def _json_default(value):
    if isinstance(value, (Raw, Tagged)):
        return value.text
    if isinstance(value, Anchored):
        return value.value
    return str(value)


@dataclass(frozen=True)
class MutateCsv(BuildOp):
    file: str
    row: int
    column: int
    value: str

    def apply(self, build):
        blob = build.get(self.file)
        if blob is None:
            return set(), f"{self.file}: missing"
        lines = blob.split(b"\n")
        row = 1 + self.row % max(1, len(lines) - 2)
        if row >= len(lines):
            return set(), f"{self.file}: no rows"
        cells = lines[row].split(b",")
        column = self.column % len(cells)
        cells[column] = _csv_field(self.value)
        lines[row] = b",".join(cells)
        build[self.file] = b"\n".join(lines)
        return {self.file}, f"{self.file} row {row} column {column} = {self.value!r} (manifest updated)"


KEY_FILES = ("manifest.json", "topology.json", "cabling.csv", "ip-plan.csv", "bom.csv")


def _pick(build: dict, index: int, prefer: tuple[str, ...] = ()) -> str:
    """A file of the build: two times in three one the commands read first (the manifest, the
    topology, the CSVs), else any."""
    names = sorted(name for name, data in build.items() if data is not None)
    key = [n for n in names if n in KEY_FILES or (prefer and n.endswith(prefer))]
    pool = key if key and index % 3 else names
    return pool[(index // 3) % len(pool)]


def _read_build(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def _sign(build: dict, names: set[str]) -> None:
    """Put the sha256 of each of `names` into the build's manifest, as a forger would."""
    if not names:
        return
    try:
        manifest = json.loads(build["manifest.json"])
        files = manifest["files"]
        for name in names:
            if build.get(name) is not None:
                files[name] = hashlib.sha256(build[name]).hexdigest()
    except (TypeError, ValueError, KeyError, AttributeError):
        return
    build["manifest.json"] = json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


def build_case(bases: dict[str, Path], base: str, command: str, ops: tuple, generator: str = "build") -> Case:
    """A build directory after `ops`, given to one command (of COMMANDS, or of EXPORT_COMMANDS for
    the exports generator)."""
    root = bases[base]
    build = _read_build(root)
    original = dict(build)
    said, sign = [], set()
    for op in ops:
        names, what = op.apply(build)
        sign |= names
        said.append(what)
    _sign(build, sign)
    files = {f"build/{name}": data for name, data in build.items() if data != original.get(name)}
    files["inventory.yaml"] = INVENTORY
    files["known_hosts"] = b""  # host keys are verified: port 9 refuses before any key is seen
    table = EXPORT_COMMANDS if generator == "exports" else COMMANDS
    argv = tuple(arg.replace("{base}", str(root)) for arg in table[command]())
    return Case(
        generator=generator,
        command=command.split("-")[0],
        argv=argv,
        files=files,
        mutations=said,
        ops=ops,
        rebuild=lambda ops: build_case(bases, base, command, ops, generator),
        copy_tree=(root, "build"),
        base=f"{base} build",
        output="out" if generator == "exports" else None,
        check=_no_formula_cells if generator == "exports" else None,
    )


# exports: every `export` format and `testplan` of a build edited as above, and CSV cells a
# spreadsheet would run as a formula (OWASP, "CSV Injection": = + - @ tab CR first)
EXPORT_COMMANDS = {
    **{
        f"export-{kind}": (lambda kind=kind: ("export", kind, "{dir}/build", "-o", "{dir}/out"))
        for kind in ("containerlab", "batfish", "nornir", "ansible", "netbox", "diagram")
    },
    "testplan": lambda: ("testplan", "{dir}/build", "-o", "{dir}/out"),
}
FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1", '=HYPERLINK("http://x")']
_FORMULA_START = tuple("=+-@\t\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _no_formula_cells(directory: Path, outcome: Outcome) -> str | None:
    """Every CSV the command wrote: no cell a spreadsheet would take for a formula (a number with
    a sign is a number)."""
    import csv

    out = directory / "out"
    if outcome.exit_code != 0 or not out.is_dir():
        return None
    for path in sorted(out.rglob("*.csv")):
        with path.open(newline="", encoding="utf-8", errors="replace") as stream:
            for row in csv.reader(stream):
                for cell in row:
                    if cell.startswith(_FORMULA_START) and not _NUMBER.fullmatch(cell):
                        return f"a CSV cell starts as a formula would ({path.name})"
    return None


@dataclass(frozen=True)
class FormulaColumn(BuildOp):
    """A formula in one named column of a build's CSV, in one row (the manifest updated)."""

    file: str
    column: str
    row: int
    value: str

    def apply(self, build):
        import csv

        blob = build.get(self.file)
        if blob is None:
            return set(), f"{self.file}: missing"
        try:
            rows = list(csv.reader(io.StringIO(blob.decode("utf-8"), newline="")))
        except (UnicodeDecodeError, csv.Error):
            return set(), f"{self.file}: not CSV"
        if len(rows) < 2 or self.column not in rows[0]:
            return set(), f"{self.file}: no {self.column}"
        at = rows[0].index(self.column)
        row = rows[1 + self.row % (len(rows) - 1)]
        if at >= len(row):
            return set(), f"{self.file}: short row"
        row[at] = self.value
        text = io.StringIO(newline="")
        csv.writer(text, lineterminator="\n").writerows(rows)
        build[self.file] = text.getvalue().encode()
        return {self.file}, f"{self.file} {self.column} = {self.value!r} (manifest updated)"


@dataclass(frozen=True)
class FormulaNode(BuildOp):
    """A formula as a value of every topology.json node's `key` (the rack a device sits in, its
    model), the manifest updated."""

    key: str
    value: str

    def apply(self, build):
        try:
            tree = json.loads(build["topology.json"])
            for node in tree["nodes"]:
                node[self.key] = self.value
        except (TypeError, ValueError, KeyError):
            return set(), "topology.json unreadable"
        build["topology.json"] = json.dumps(tree, indent=1).encode()
        return {"topology.json"}, f"topology.json: every node's {self.key} = {self.value!r} (manifest updated)"


def export_cases(bases: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        base = draw(st.sampled_from(sorted(bases)))
        command = draw(st.sampled_from(sorted(EXPORT_COMMANDS)))
        ops = draw(st.lists(st.one_of(build_ops(), formula_ops(), formula_ops()), min_size=0, max_size=3))
        return build_case(bases, base, command, tuple(ops), "exports")

    return cases()


def formula_ops() -> st.SearchStrategy:
    """A formula where a name or a description stands: in a CSV cell or a topology.json value."""
    index = st.integers(0, 10_000)
    formula = st.sampled_from(FORMULAS)
    columns = [("bom.csv", "description"), ("bom.csv", "basis"), ("bom.csv", "alternatives"), ("cabling.csv", "a_rack"), ("cabling.csv", "b_rack")]
    return st.one_of(
        st.builds(MutateCsv, st.sampled_from(["cabling.csv", "ip-plan.csv", "bom.csv"]), index, index, formula),
        st.builds(lambda where, row, value: FormulaColumn(*where, row, value), st.sampled_from(columns), index, formula),
        st.builds(FormulaNode, st.sampled_from(["rack", "rack", "model"]), formula),
        st.builds(MutateJson, st.just("topology.json"), st.builds(SetValue, index, formula)),
        st.builds(RenameDevice, index, formula),
    )


def build_ops() -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    data = st.one_of(
        st.sampled_from(BAD_BYTES), st.sampled_from(CONTROL + FORMAT + INJECTION).map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=20)
    )
    json_value_ops = st.one_of(
        st.builds(SetValue, index, values()),
        st.builds(DropKey, index),
        st.builds(RenameKey, index, st.sampled_from(ODD_KEYS[4:]) | hostile_text()),
        st.builds(InsertKey, index, st.sampled_from(SECTION_KEYS), values()),
    )
    return st.one_of(
        st.builds(EditFile, index, st.integers(0, 1000), data, st.booleans()),
        st.builds(Truncate, index, st.integers(0, 999), st.booleans()),
        st.builds(Delete, index),
        st.builds(
            AddFile,
            st.sampled_from(["extra.txt", "configs/evil.cfg", "configs/evil/config_db.json", "../escape.txt", "hosts/x/netplan.yaml"]),
            st.sampled_from([b"", b"hello\n", b"{}", b"\x1b[2J"]),
            st.booleans(),
        ),
        st.builds(RenameDevice, index, st.one_of(st.sampled_from(HOSTILE_NAMES), hostile_text())),
        st.builds(MutateJson, st.sampled_from(["topology.json", "topology.json", "manifest.json"]), json_value_ops),
        st.builds(
            MutateCsv,
            st.sampled_from(["cabling.csv", "ip-plan.csv", "bom.csv"]),
            index,
            index,
            st.one_of(st.sampled_from(HOSTILE_NAMES + ["999.1.1.1/99", "8.8.8.8", "10.0.0.1/40", "-1", "1e400", "", "nan"]), hostile_text()),
        ),
    )


def build_cases(bases: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        base = draw(st.sampled_from(sorted(bases)))
        command = draw(st.sampled_from(sorted(COMMANDS)))
        ops = draw(st.lists(build_ops(), min_size=1, max_size=3))
        return build_case(bases, base, command, tuple(ops))

    return cases()


# device answers -------------------------------------------------------------------------------------
# `fabricgen verify` of a real build against switches whose answers are hostile. No switch runs in
# a case: in the child, either every getter answers from `tests.device_answers.FakeDriver` (NAPALM's
# shapes, then mutated: any value, a getter raising, a whole answer of another type, counters
# going backwards), or every SONiC switch is fabricgen's real SonicDriver over a scripted SSH
# client whose command answers are mutated texts (broken JSON and tables, control characters,
# answers of hundreds of MiB). The properties: exit 0, 1 or 2; a getter that fails is never
# "everything matches"; a huge answer is not read whole; --json prints one JSON document.

GETTER_EXCEPTIONS = ("RuntimeError", "AttributeError", "KeyError", "TypeError", "ValueError", "OSError", "NotImplementedError", "UnicodeDecodeError")
ODD_ANSWERS = [[], "x", None, 0, -1, float("nan"), float("inf"), {"x": 1}, {"": None}, [{}], True, 2**64, "\x1b[2J", {"Ethernet0": "up"}]
_HEALTHY: dict[str, dict] = {}


def _healthy(build: Path) -> dict:
    from tests.device_answers import healthy

    key = str(build)
    if key not in _HEALTHY:
        _HEALTHY[key] = healthy(build)
    return copy.deepcopy(_HEALTHY[key])


@dataclass(frozen=True)
class AnswerOp(Op):
    stage = "answers"


@dataclass(frozen=True)
class AnswerTree(AnswerOp):
    """A tree op on one device's answers (device -> getter -> answer)."""

    device: int
    op: Op

    def apply(self, answers: dict, deltas: dict):
        name = sorted(answers)[self.device % len(answers)]
        tree, what = self.op.apply(answers[name])
        answers[name] = tree if isinstance(tree, dict) else answers[name]
        return f"{name}: {what}"


@dataclass(frozen=True)
class GetterFails(AnswerOp):
    device: int
    getter: str
    exception: str

    def apply(self, answers: dict, deltas: dict):
        name = sorted(answers)[self.device % len(answers)]
        if self.exception == "UnicodeDecodeError":
            answers[name][self.getter] = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        else:
            answers[name][self.getter] = getattr(builtins, self.exception)("fuzz: \x1b[2J getter failed")
        return f"{name}: {self.getter} raises {self.exception}"


@dataclass(frozen=True)
class GetterAnswer(AnswerOp):
    device: int
    getter: str
    value: object

    def apply(self, answers: dict, deltas: dict):
        name = sorted(answers)[self.device % len(answers)]
        answers[name][self.getter] = self.value
        return f"{name}: {self.getter} answers {short(self.value)}"


@dataclass(frozen=True)
class CounterMoves(AnswerOp):
    """Between the two samples a counter of one port moves by `delta` (negative: cleared or wrapped)."""

    device: int
    port: int
    counter: str
    delta: int

    def apply(self, answers: dict, deltas: dict):
        name = sorted(answers)[self.device % len(answers)]
        counters = answers[name].get("get_interfaces_counters")
        if not isinstance(counters, dict) or not counters:
            return f"{name}: no counters to move"
        port = sorted(counters)[self.port % len(counters)]
        deltas.setdefault(name, {}).setdefault("get_interfaces_counters", {})[(port, self.counter)] = self.delta
        return f"{name} {port}: {self.counter} moves by {self.delta}"


def answer_ops() -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    from fabricgen.verify.collect import ONCE, SAMPLED  # every getter verify asks

    getter = st.sampled_from(SAMPLED + ONCE)
    return st.one_of(
        st.builds(
            AnswerTree, index, st.one_of(st.builds(SetValue, index, values()), st.builds(DropKey, index), st.builds(InsertKey, index, hostile_text(), values()))
        ),
        st.builds(AnswerTree, index, st.builds(RenameKey, index, st.sampled_from(ODD_KEYS[4:]) | hostile_text())),
        st.builds(GetterFails, index, getter, st.sampled_from(GETTER_EXCEPTIONS)),
        st.builds(GetterAnswer, index, getter, st.sampled_from(ODD_ANSWERS) | values()),
        st.builds(
            CounterMoves, index, index, st.sampled_from(["rx_errors", "tx_errors", "rx_discards", "tx_discards"]), st.sampled_from([-1, -(2**32), 2**64, 5])
        ),
    )


def _inventory(build: Path, driver: str) -> bytes:
    """Every switch of the build by its own name (never resolved: the stand-in answers)."""
    topology = json.loads((build / "topology.json").read_text())
    names = sorted(n["id"] for n in topology["nodes"] if n.get("nos") in ("sonic", "nxos"))
    return (f"defaults: {{driver: {driver}}}\ndevices:\n" + "".join(f"  {name}: {{host: {name}}}\n" for name in names)).encode()


def getter_answer_case(bases: dict[str, Path], base: str, ops: tuple, as_json: bool) -> Case:
    """`verify` of a real build, every switch answering as built and then as `ops` change it."""
    build = bases[base]
    answers = _healthy(build)
    deltas: dict = {}
    said = [op.apply(answers, deltas) for op in ops]
    # a getter that raises must not pass, unless verify never asks the driver for it: an NX-OS
    # switch's lossless counters and ECMP widths are read with show commands (nos/nxos/verify.py)
    nos = {n["id"]: n.get("nos") for n in json.loads((build / "topology.json").read_text())["nodes"]}
    failing = any(
        isinstance(op, GetterFails)
        and op.exception != "NotImplementedError"
        and not (nos.get(sorted(answers)[op.device % len(answers)]) == "nxos" and op.getter in ("get_lossless_counters", "get_ecmp_widths"))
        for op in ops
    )

    def child_setup(directory: Path) -> Callable[[], dict]:
        from fabricgen.push import rollout
        from tests.device_answers import FakeDriver

        def driver(host, username, password, timeout=60, optional_args=None):
            return FakeDriver(answers[host], deltas.get(host))

        rollout.resolve_drivers = lambda targets: {"mock": driver}
        return dict

    def check(directory: Path, outcome: Outcome) -> str | None:
        if failing and outcome.exit_code == 0:
            return "a getter that failed was taken for a match (exit 0)"
        if as_json and outcome.extra.get("stdout_json") is False:
            return "--json printed something else than one JSON document"
        return None

    return Case(
        generator="answers",
        command="verify",
        argv=("verify", "{dir}/build", "--inventory", "{dir}/inventory.yaml", "--interval", "0", "--quiet", *(["--json"] if as_json else [])),
        files={"inventory.yaml": _inventory(build, "mock")},
        mutations=said,
        ops=ops,
        rebuild=lambda ops: getter_answer_case(bases, base, ops, as_json),
        copy_tree=(build, "build"),
        base=f"{base} getters",
        child_setup=child_setup,
        check=check,
    )


# SONiC texts: what each command of the driver answers on a healthy leaf (a key is a part of the
# command line the driver sends; the longest key found in it answers)
def _sonic_texts(build: Path, device: str) -> dict[str, str]:
    from fabricgen.nos.sonic import driver as sonic

    data = REPO / "tests" / "data"
    config = build / "configs" / device
    db = (config / "config_db.json").read_text() if (config / "config_db.json").exists() else "{}"
    frr = (config / "frr.conf").read_text() if (config / "frr.conf").exists() else ""
    status = (
        "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin    Type    Asym PFC\n"
        "-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ------  ----------\n"
        "  Ethernet0  0,1,2,3,4,5,6,7     400G   9216     rs     etp1  routed      up       up     N/A         N/A\n"
    )
    description = (
        "  Interface    Oper    Admin    Alias                    Description\n"
        "-----------  ------  -------  -------  -----------------------------\n"
        "  Ethernet0      up       up     etp1  BE-00001 to gpu0001 nic1\n"
    )
    return {
        sonic.SHOW_CONFIG_DB: db,
        sonic.SHOW_VERSION: "SONiC Software Version: SONiC.202405.0\nDistribution: Debian 12\n",
        sonic.VTYSH_VERSION: "FRRouting 8.4.4 (leaf1) on Linux(6.1.0).\n",
        "cat /proc/uptime": "1234.56 4321.00\n",
        "hostname": device + "\n",
        sonic.VTYSH_BGP_SUMMARY: (data / "frr" / "bgp-summary-established.json").read_text(),
        sonic.VTYSH_BGP_NEIGHBORS: (data / "frr" / "bgp-neighbors-established.json").read_text(),
        sonic.VTYSH_RUNNING: frr,
        sonic.VTYSH_ROUTES: '{"10.0.0.0/24": [{"selected": true, "nexthops": [{"fib": true, "ip": "10.8.0.0"}, {"fib": true, "ip": "10.8.0.2"}]}]}',
        sonic.LLDPCTL_JSON: (data / "lldpctl" / "one-neighbour.json").read_text(),
        sonic.SHOW_INTERFACES_STATUS: status,
        sonic.SHOW_INTERFACES_DESCRIPTION: description,
        "COUNTERS_PORT_NAME_MAP": '{"Ethernet0": {"SAI_PORT_STAT_IF_IN_ERRORS": "0", "SAI_PORT_STAT_IF_OUT_ERRORS": "0"}}',
        "COUNTERS_QUEUE_NAME_MAP": '{"Ethernet0:3": {"PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": "0"}}',
        "STATE_DB": '{"TRANSCEIVER_DOM_SENSOR|Ethernet0": {"rx1power": "-2.5", "tx1power": "-1.0", "tx1bias": "6.5"}}',
    }


@dataclass(frozen=True)
class Huge:
    """An answer of `mib` MiB of one repeated line: a runaway or hostile command."""

    mib: int
    line: bytes = b'{"x": "' + b"y" * 60 + b'"},\n'


@dataclass(frozen=True)
class TextOp(Op):
    """A change to what one command answers on one switch (or on all of them)."""

    device: int  # -1: every switch
    command: int

    stage = "texts"

    def target(self, texts: dict[str, dict]) -> tuple[list[str], str]:
        devices = sorted(texts)
        chosen = devices if self.device < 0 else [devices[self.device % len(devices)]]
        commands = sorted(texts[chosen[0]])
        return chosen, commands[self.command % len(commands)]


@dataclass(frozen=True)
class TextAnswer(TextOp):
    value: object  # str, bytes, Huge, or an int: the command's exit status with no answer

    def apply(self, texts: dict[str, dict]):
        chosen, command = self.target(texts)
        for device in chosen:
            texts[device][command] = self.value
        return f"{'every switch' if len(chosen) > 1 else chosen[0]}: `{command[:40]}` answers {short(self.value)}"


@dataclass(frozen=True)
class TextEdit(TextOp):
    at: int  # per mille
    data: str

    def apply(self, texts: dict[str, dict]):
        chosen, command = self.target(texts)
        for device in chosen:
            text = texts[device][command]
            if isinstance(text, str):
                at = len(text) * (self.at % 1001) // 1000
                texts[device][command] = text[:at] + self.data + text[at:]
        return f"{chosen[0]}: `{command[:40]}` with {short(self.data)} inserted"


@dataclass(frozen=True)
class TextJson(TextOp):
    op: Op

    def apply(self, texts: dict[str, dict]):
        chosen, command = self.target(texts)
        said = "not JSON"
        for device in chosen:
            try:
                tree = json.loads(texts[device][command])
            except (TypeError, ValueError):
                continue
            tree, said = self.op.apply(tree)
            texts[device][command] = json.dumps(tree, default=_json_default, ensure_ascii=False)
        return f"{chosen[0]}: `{command[:40]}` JSON: {said}"


TEXT_VALUES = [
    "",
    "\n",
    "null",
    "[]",
    "{}",
    "nan",
    "NaN",
    "Infinity",
    '{"a": NaN}',
    "Error: redis is down\n",
    "\x1b[2J\x1b]0;owned\x07",
    "\ufeff{}",
    "é" * 100,
    1,
    127,
    255,
]


def sonic_text_ops() -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    device = st.one_of(st.just(-1), index)
    return st.one_of(
        st.builds(TextAnswer, device, index, st.sampled_from(TEXT_VALUES) | hostile_text()),
        st.builds(TextAnswer, device, index, st.sampled_from([Huge(40), Huge(300)])),
        st.builds(TextEdit, device, index, st.integers(0, 1000), st.sampled_from(CONTROL + FORMAT + INJECTION + WORDS) | hostile_text()),
        st.builds(
            TextJson,
            device,
            index,
            st.one_of(st.builds(SetValue, index, values()), st.builds(DropKey, index), st.builds(InsertKey, index, hostile_text(), values())),
        ),
    )


class _Stream:
    """One side of a scripted command's channel: its bytes in chunks, then EOF."""

    def __init__(self, chunks, status: int = 0):
        self._chunks = iter(chunks)
        self._buffer = b""
        self.status = status
        self.channel = self
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        while not self.closed and (size < 0 or len(self._buffer) < size):
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buffer += chunk
        if size < 0:
            size = len(self._buffer)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def write(self, data) -> None:
        pass

    def shutdown_write(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def recv_exit_status(self) -> int:
        return self.status


class ScriptedClient:
    """What SonicDriver's `_exec` uses of paramiko's SSHClient, answering from a script; records
    the bytes of every answer it handed out."""

    def __init__(self, script: dict[str, object]):
        self.script = script
        self.handed = 0

    def exec_command(self, command: str, timeout=None):
        keys = sorted((key for key in self.script if key in command), key=len, reverse=True)
        answer = self.script[keys[0]] if keys else 127
        if isinstance(answer, int):
            return _Stream([]), _Stream([], answer), _Stream([b"not scripted\n"])
        if isinstance(answer, Huge):
            count = answer.mib * 2**20 // len(answer.line)
            block = answer.line * 1024

            def chunks():
                for _ in range(count // 1024):
                    self.handed += len(block)
                    yield block

            return _Stream([]), _Stream(chunks()), _Stream([])
        data = answer.encode("utf-8", "surrogatepass") if isinstance(answer, str) else answer
        self.handed += len(data)
        return _Stream([]), _Stream([data[i : i + 65536] for i in range(0, len(data), 65536)]), _Stream([])

    def close(self) -> None:
        pass

    def get_transport(self):
        return None


def sonic_text_case(bases: dict[str, Path], ops: tuple) -> Case:
    """`verify` of tiny-sonic, every switch the real SonicDriver over a scripted SSH client."""
    build = bases["tiny-sonic"]
    topology = json.loads((build / "topology.json").read_text())
    devices = sorted(n["id"] for n in topology["nodes"] if n.get("nos") == "sonic")
    texts = {device: _sonic_texts(build, device) for device in devices}
    said = [op.apply(texts) for op in ops]
    huge = any(isinstance(value, Huge) for script in texts.values() for value in script.values())

    def child_setup(directory: Path) -> Callable[[], dict]:
        from fabricgen.nos.sonic.driver import SonicDriver

        clients: list[ScriptedClient] = []

        def open_scripted(driver) -> None:
            driver._ssh = ScriptedClient(texts[driver.hostname])
            clients.append(driver._ssh)

        SonicDriver.open = open_scripted
        SonicDriver.close = lambda driver: None
        return lambda: {"handed_mib": round(sum(c.handed for c in clients) / 2**20, 1)}

    def check(directory: Path, outcome: Outcome) -> str | None:
        if huge and outcome.peak_rss > 400 << 20:
            return f"read a huge answer whole ({outcome.peak_rss >> 20} MiB)"
        return None

    return Case(
        generator="answers",
        command="verify",
        argv=("verify", "{dir}/build", "--inventory", "{dir}/inventory.yaml", "--interval", "0", "--quiet", "--known-hosts", "{dir}/known_hosts"),
        files={"inventory.yaml": _inventory(build, "sonic"), "known_hosts": b""},
        mutations=said,
        ops=ops,
        rebuild=lambda ops: sonic_text_case(bases, ops),
        copy_tree=(build, "build"),
        base="tiny-sonic texts",
        child_setup=child_setup,
        check=check,
    )


def answer_cases(bases: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        if draw(st.integers(0, 2)) == 0:
            return sonic_text_case(bases, tuple(draw(st.lists(sonic_text_ops(), min_size=0, max_size=3))))
        base = draw(st.sampled_from(sorted(bases)))
        ops = draw(st.lists(answer_ops(), min_size=0, max_size=4))
        return getter_answer_case(bases, base, tuple(ops), draw(st.booleans()))

    return cases()


# results files ------------------------------------------------------------------------------------
# `testplan check` of a real plan (tiny-nxos's and tiny-sonic's) with perftest and nccl-tests /
# rccl-tests outputs edited: hostile text, numbers no link can carry (above the pair's line rate or
# the collective's bound, NaN, inf), files that are not regular (a FIFO, a directory, a link to a
# device), truncated or binary, and a --report aimed into the plan. Properties: exit 0, 1 or 2; a
# FIFO or an impossible number is refused (exit 2) at once; the plan is never changed.

RESULT_SOURCES = {
    "pair0001.txt": "pair0001.txt",
    "pair0002.txt": "pair0002-mbs.txt",
    "nccl-all_reduce-cluster.txt": "nccl-all_reduce-cluster.txt",
    "rccl-all_reduce-cluster.txt": "rccl-all_reduce-cluster.txt",
}
# a result row, also behind `#` as a report pastes it (rccl-tests' own output, issue 33)
_PERFTEST_ROW = re.compile(r"^(#? *\d+ +\d+ +)([0-9.]+)( +)([0-9.]+)", re.M)
_BUSBW_ROW = re.compile(r"^(#? +\d+ +\d+ +\w+ +\w+ +-?\d+ +[0-9.]+ +[0-9.]+ +)([0-9.]+)", re.M)
IMPOSSIBLE = ["1000000000000", "1e12", "400000.5", "99999999999999999999999"]  # Gb/s, GB/s or MB/s: 8x a 400G NIC and more
MALFORMED_NUMBERS = ["nan", "NaN", "inf", "-inf", "-5", "0x10", "1e999", "4e-400", "", "12..5", "１２３"]
RESULT_KINDS = ["FIFO", "directory", "link to /dev/zero", "empty", "binary", "60 MiB"]


def plan_bases(bases: dict[str, Path], directory: Path) -> dict[str, Path]:
    """A test plan of each base build, written once into `directory`."""
    from fabricgen.testplan import write_plan

    plans = {}
    for name, build in bases.items():
        target = directory / f"{name}-plan"
        if not (target / "testplan.json").exists():
            write_plan(build, target)
        plans[name] = target
    return plans


@dataclass(frozen=True)
class ResultOp(Op):
    file: int

    stage = "results"

    def name(self, files: dict) -> str:
        names = sorted(n for n, data in files.items() if isinstance(data, bytes))
        return names[self.file % len(names)] if names else ""


@dataclass(frozen=True)
class ResultText(ResultOp):
    at: int
    data: str

    def apply(self, files: dict):
        name = self.name(files)
        if not name:
            return "no file"
        blob = files[name]
        at = len(blob) * (self.at % 1001) // 1000
        files[name] = blob[:at] + self.data.encode("utf-8", "surrogatepass") + blob[at:]
        return f"{name}: {short(self.data)} inserted at {at}"


@dataclass(frozen=True)
class ResultNumber(ResultOp):
    """Every bandwidth figure of a file (perftest's BW columns, nccl-tests' busbw) becomes `value`."""

    value: str

    def apply(self, files: dict):
        name = self.name(files)
        if not name:
            return "no file"
        text = files[name].decode("utf-8", "surrogateescape")
        text = _PERFTEST_ROW.sub(lambda m: m.group(1) + self.value + m.group(3) + self.value, text)
        text = _BUSBW_ROW.sub(lambda m: m.group(1) + self.value, text)
        files[name] = text.encode("utf-8", "surrogateescape")
        return f"{name}: bandwidth {self.value!r}"


@dataclass(frozen=True)
class ResultKind(ResultOp):
    kind: str

    def apply(self, files: dict):
        name = self.name(files)
        if not name:
            return "no file"
        if self.kind == "FIFO":
            files[name] = Fifo()
        elif self.kind == "directory":
            files[name] = Directory()
        elif self.kind == "link to /dev/zero":
            files[name] = Symlink("/dev/zero")
        elif self.kind == "empty":
            files[name] = b""
        elif self.kind == "binary":
            files[name] = bytes(range(256)) * 4
        else:
            files[name] = Sparse(60 << 20)
        return f"{name}: {self.kind}"


def result_ops() -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    return st.one_of(
        st.builds(
            ResultText,
            index,
            st.integers(0, 1000),
            st.sampled_from(CONTROL + FORMAT + INJECTION + WORDS + ["\n#", "\n  1048576 1 391.24 391.02 0.04\n"]) | hostile_text(),
        ),
        st.builds(ResultNumber, index, st.sampled_from(IMPOSSIBLE + MALFORMED_NUMBERS + ["391.24", "0", "0.0001"])),
        st.builds(ResultKind, index, st.sampled_from(RESULT_KINDS)),
    )


def _plan_hashes(plan: Path) -> dict[str, str]:
    return {str(path.relative_to(plan)): hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(plan.rglob("*")) if path.is_file()}


def results_case(plans: dict[str, Path], base: str, ops: tuple, report: str) -> Case:
    """`testplan check` of a real plan with results edited by `ops`; `report`: where --report goes
    ("" none, "beside", "in the plan", "over a plan file")."""
    files: dict[str, object] = {f"results/{target}": (REPO / "tests" / "data" / "testplan" / source).read_bytes() for target, source in RESULT_SOURCES.items()}
    said = [op.apply(files) for op in ops]
    impossible = any(
        (isinstance(op, ResultNumber) and op.value in IMPOSSIBLE) or (isinstance(op, ResultKind) and op.kind in ("FIFO", "directory", "link to /dev/zero"))
        for op in ops
    )
    into_plan = report in ("in the plan", "over a plan file")
    where = {"beside": "{dir}/report.md", "in the plan": "{dir}/plan/report.md", "over a plan file": "{dir}/plan/testplan.md"}.get(report)
    hashes: dict[str, str] = {}

    def prepare(directory: Path) -> None:
        hashes.update(_plan_hashes(directory / "plan"))

    def check(directory: Path, outcome: Outcome) -> str | None:
        if _plan_hashes(directory / "plan") != hashes:
            return "changed the plan it checks"
        return None

    return Case(
        generator="results",
        command="testplan",
        argv=("testplan", "check", "{dir}/plan", *(f"{{dir}}/{name}" for name in sorted(files)), *(["--report", where] if where else [])),
        files=files,
        mutations=said + ([f"--report {report}"] if report else []),
        ops=ops,
        rebuild=lambda ops: results_case(plans, base, ops, report),
        copy_tree=(plans[base], "plan"),
        must_refuse="a results file no test could print" if impossible else ("a report inside the plan" if into_plan else ""),
        base=f"{base} plan",
        prepare=prepare,
        check=check,
    )


def results_cases(plans: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        base = draw(st.sampled_from(sorted(plans)))
        ops = draw(st.lists(result_ops(), min_size=0, max_size=3))
        report = draw(st.sampled_from(["", "", "beside", "in the plan", "over a plan file"]))
        return results_case(plans, base, tuple(ops), report)

    return cases()


# paths ----------------------------------------------------------------------------------------------
# Every path option and argument of every command (tests.test_cli_paths.SHAPES) given a path made
# of hostile parts: names at and past NAME_MAX (in bytes: multibyte characters), paths past
# PATH_MAX, `..`, control and format characters, names that read as options, and a last part that
# is a FIFO, a directory, a file, a device, a loop or a dangling link, or lies under a file.
# Properties: exit 0, 1 or 2, never a crash; a refusal is short and names the option or argument;
# nothing is written outside the case's directory, and nothing at all when refused; a FIFO is
# never waited on.

PATH_PARTS = [
    "a",
    "out",
    "..",
    ".",
    "",
    "n" * 255,
    "n" * 256,
    "é" * 127,
    "é" * 128,
    "-o",
    "--help",
    "x y",
    "a\nb",
    "\x1b[2J",
    "\u202eevil",
    "~",
    "*",
    "$(id)",
    "con",
    ".hidden",
]
PATH_ENDS = ["none", "fifo", "directory", "file", "file as parent", "loop", "dangling link", "link to /dev/zero", "link to a FIFO", "socket", "deep"]
_SHAPES = None


def path_shapes() -> dict[str, tuple[tuple[str, ...], str, str]]:
    global _SHAPES
    if _SHAPES is None:
        from tests.test_cli_paths import SHAPES

        _SHAPES = SHAPES
    return _SHAPES


def _make_end(workspace: Path, relative: str, end: str) -> str:
    """Make the path's last part what `end` says (in the parent, before the case runs); the path
    to give."""
    import socket as sockets

    path = workspace / relative if relative else workspace / "p"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, UnicodeEncodeError):  # a part too long to create: the path is given as it is
        return str(path)
    try:
        if end == "fifo":
            os.mkfifo(path)
        elif end == "directory":
            path.mkdir()
        elif end == "file":
            path.write_text("hello\n")
        elif end == "file as parent":
            path.write_text("")
            return str(path / "x.yaml")
        elif end == "loop":
            path.symlink_to(path.name)
        elif end == "dangling link":
            path.symlink_to(workspace / "nowhere" / "x")
        elif end == "link to /dev/zero":
            path.symlink_to("/dev/zero")
        elif end == "link to a FIFO":
            os.mkfifo(workspace / "fifo-target")
            path.symlink_to(workspace / "fifo-target")
        elif end == "socket" and len(os.fsencode(str(path))) < 100:
            listener = sockets.socket(sockets.AF_UNIX)
            listener.bind(str(path))
            listener.close()
        elif end == "deep":
            return str(path) + ("/" + "d" * 200) * 21
    except (OSError, ValueError):
        pass
    return str(path)


def _argv_text(text: str) -> str:
    """`text` as a command-line argument can hold it: no NUL (argv is C strings), surrogates only
    as Python decodes undecodable bytes (U+DC80-U+DCFF, surrogateescape)."""
    return "".join(ch for ch in text if ch != "\x00" and not ("\ud800" <= ch <= "\udfff" and not "\udc80" <= ch <= "\udcff"))


def _contained(parts: tuple[str, ...]) -> str:
    """The parts joined into a path relative to the workspace that never leaves the case's
    directory: an absolute part becomes relative, and a `..` that would climb above the case's
    directory (the workspace's parent) is `dotdot` instead."""
    kept: list[str] = []
    depth = 0  # below the workspace
    for part in "/".join(_argv_text(p) for p in parts).split("/"):
        if part == ".." and depth <= -1:
            part = "dotdot"
        if part == "..":
            depth -= 1
        elif part not in ("", "."):
            depth += 1
        kept.append(part)
    return "/".join(kept).lstrip("/")


def paths_case(bases: dict[str, Path], plans: dict[str, Path], shape: str, parts: tuple[str, ...], end: str) -> Case:
    template, where, _role = path_shapes()[shape]
    relative = _contained(parts)
    prepared: dict[str, str] = {}
    before: dict[str, list] = {}

    def prepare(directory: Path) -> None:
        shutil.copytree(bases["tiny-nxos"], directory / "fixtures" / "build")
        shutil.copytree(plans["tiny-nxos"], directory / "fixtures" / "plan")
        workspace = directory / "ws"
        workspace.mkdir()
        prepared["P"] = _make_end(workspace, relative, end)
        before.clear()
        before.update(_tree(directory))

    def check(directory: Path, outcome: Outcome) -> str | None:
        if outcome.exit_code == 2 and len(outcome.stderr) > 2000:
            return "a refusal printed over 2,000 characters"
        if outcome.exit_code == 2 and outcome.reports and outcome.reports[0]["head"].startswith("arguments") and f"{where}:" not in outcome.stderr:
            return f"a refused path does not name {where}"
        if outcome.exit_code == 2 and _tree(directory) != before:
            return "refused the path but changed files"
        return None

    values = {
        "build": "{dir}/fixtures/build",
        "plan": "{dir}/fixtures/plan",
        "result": str(REPO / "tests/data/testplan/pair0001.txt"),
        "reference": "{dir}/fixtures/reference.csv",
        "intent": str(REPO / "tests/golden/tiny-nxos.yaml"),
        "none": "{dir}/no-such-build",
    }
    argv = tuple(part.format(P="{P}", **values) for part in template)
    return Case(
        generator="paths",
        command=argv[0],
        argv=argv,
        files={"fixtures/reference.csv": b"pid,quantity\nN9K-C9364D-GX2A,1\n"},
        mutations=[f"{shape}: {short(relative, 120)} ending in {end}"],
        base=shape,
        prepare=prepare,
        check=check,
        env={"HOME": "{dir}"},
        placeholders=prepared,
    )


def _tree(directory: Path) -> dict[str, list]:
    """Every entry under `directory`, not following links: kind and size (a file's content hash)."""
    found: dict[str, list] = {}
    for root, directories, files in os.walk(directory):
        if Path(root) == directory:  # the child's own temporary directory and lab state root
            directories[:] = [d for d in directories if d not in ("tmp", "lab-state")]
        for name in sorted(directories + files):
            path = Path(root) / name
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) and info.st_size < 1 << 20 else ""
            found[str(path.relative_to(directory))] = [oct(info.st_mode), info.st_size if not stat.S_ISDIR(info.st_mode) else 0, digest]
    return found


def paths_cases(bases: dict[str, Path], plans: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        shape = draw(st.sampled_from(sorted(path_shapes())))
        parts = draw(st.lists(st.sampled_from(PATH_PARTS) | hostile_text(), min_size=0, max_size=3))
        end = draw(st.sampled_from(PATH_ENDS))
        return paths_case(bases, plans, shape, tuple(parts), end)

    return cases()


# lab state ------------------------------------------------------------------------------------------
# `lab down` of a real build whose lab state file (under $FABRICGEN_LAB_STATE, in the case's
# directory) was forged or mutated. The lab's kernel commands cannot run in a case: the child's
# `runtime.run` is a stand-in that records every command and answers `ip netns list` with this
# lab's namespaces and another lab's; FRR's and lldpd's run directories are the case's own. The
# property: nothing but this lab's own is ever removed (another lab's state, keys, namespaces and
# run files, and a file outside the state root, survive), and a refused file removes nothing.

OTHER_LAB = "abcdef"  # a lab id no case's build has (the ids are six hex digits of a path's hash)
LAB_DEVICES = ("be-su01-leaf1", "be-spine01", "gpu01")


def _lab_id(build: Path) -> str:
    from fabricgen.lab.plan import lab_id_of

    return lab_id_of(build)


def lab_state_document(directory: Path) -> dict:
    """The state `lab up` writes for the case's build (up, nothing failed): the lab's own model,
    so every field it has is in the document the ops then change."""
    from fabricgen.compiler.design.graph import Network
    from fabricgen.lab.state import LabState

    build = directory / "build"
    lab_id = _lab_id(build)
    state = LabState(
        build_dir=str(build.resolve()),
        lab_id=lab_id,
        network=Network.BACKEND,
        manifest_sha256=hashlib.sha256((build / "manifest.json").read_bytes()).hexdigest(),
        phase="up",
        namespaces=[f"fg{lab_id}-{device}" for device in LAB_DEVICES],
        interfaces={"be-su01-leaf1": {"Ethernet0": "Ethernet0"}},
        keys_generated=["bgp-backend"],
        started=1_700_000_000.0,
        up_seconds=2.5,
        loaded_at=1_700_000_002.0,
    )
    return state.model_dump(mode="json")


@dataclass(frozen=True)
class StateOp(Op):
    """A change to the state file: a tree op on its JSON, or a forgery of one of its fields."""

    stage = "state"


@dataclass(frozen=True)
class StateTree(StateOp):
    op: Op

    def apply(self, state: dict, directory: Path):
        state, what = self.op.apply(state)
        return state, what


FORGED_IDS = ["../../../tmp/x", "../../outside", "/etc", OTHER_LAB, "ABCDEF", "abcdeg", "", "abcdef0", ".", "..", "abc/ef", "\x1b[2J", 123456, None]
FORGED_NAMESPACES = [f"fg{OTHER_LAB}-be-spine01", "fg{id}-../../x", "lo", "1", "", "fg{id}-", "fg{id}-a b", "default", "fg{id}-be-spine01\n", "/run/netns/x"]
FORGED_PATHS = ["/", "/etc", "{dir}/outside", "{dir}/build/..", "relative/build", "", "{dir}/build\x00x", "x" * 5000]


@dataclass(frozen=True)
class ForgeId(StateOp):
    value: object

    def apply(self, state: dict, directory: Path):
        state["lab_id"] = self.value
        return state, f"lab_id = {self.value!r}"


@dataclass(frozen=True)
class ForgeNamespace(StateOp):
    value: str

    def apply(self, state: dict, directory: Path):
        lab_id = _lab_id(directory / "build")
        name = self.value.replace("{id}", lab_id)
        state.setdefault("namespaces", [])
        if isinstance(state["namespaces"], list):
            state["namespaces"].append(name)
        return state, f"namespace {name!r} added"


@dataclass(frozen=True)
class ForgeBuildDir(StateOp):
    value: str

    def apply(self, state: dict, directory: Path):
        state["build_dir"] = self.value.replace("{dir}", str(directory))
        return state, f"build_dir = {short(self.value)}"


@dataclass(frozen=True)
class StateFileKind(StateOp):
    """The state file is not a plain file of this user's: a link, a FIFO, a directory, too big,
    writable by others."""

    kind: str

    def apply(self, state: dict, directory: Path):
        return state, f"state file: {self.kind}"


STATE_FILE_KINDS = ["link to a file outside", "link to another lab's state", "FIFO", "directory", "oversized", "writable by others", "not JSON", "empty"]


def _write_lab_state(directory: Path, ops: tuple) -> None:
    """The case's state root: this lab's (mutated) state file, another lab's whole state, and a
    file outside the root; FRR's and lldpd's run files of both labs under the case's `run/`."""
    root = directory / "state"
    lab_id = _lab_id(directory / "build")
    other = root / OTHER_LAB
    (other / "keys").mkdir(parents=True)
    other_state = lab_state_document(directory) | {"lab_id": OTHER_LAB, "namespaces": [f"fg{OTHER_LAB}-be-spine01"]}
    (other / "state.json").write_text(json.dumps(other_state))
    (other / "keys" / "secrets.yaml").write_text("bgp-backend: keep\n")
    (directory / "outside").mkdir()
    (directory / "outside" / "keep.txt").write_text("keep\n")
    for namespace in (f"fg{OTHER_LAB}-be-spine01", f"fg{lab_id}-be-spine01"):
        (directory / "run" / "frr" / namespace).mkdir(parents=True)
        (directory / "run" / "lldpd").mkdir(parents=True, exist_ok=True)
        (directory / "run" / "lldpd" / f"{namespace}.pid").write_text("1\n")
    state: object = lab_state_document(directory)
    said = []
    kind = ""
    for op in ops:
        state, what = op.apply(state, directory)
        said.append(what)
        if isinstance(op, StateFileKind):
            kind = op.kind
    mine = root / lab_id
    mine.mkdir(parents=True, exist_ok=True, mode=0o700)
    mine.chmod(0o700)
    path = mine / "state.json"
    text = json.dumps(state, default=_json_default, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if kind == "link to a file outside":
        path.symlink_to(directory / "outside" / "keep.txt")
    elif kind == "link to another lab's state":
        path.symlink_to(other / "state.json")
    elif kind == "FIFO":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir()
    else:
        if kind == "oversized":
            text = text[:-1] + b"," + b'"pad": "' + b"x" * (17 << 20) + b'"}'
        elif kind == "not JSON":
            text = text[: len(text) // 2]
        elif kind == "empty":
            text = b""
        path.write_bytes(text)
        path.chmod(0o666 if kind == "writable by others" else 0o600)


def _fake_lab_host(directory: Path) -> Callable[[], dict]:
    """In the child: the lab's kernel commands recorded instead of run; `ip netns list` names
    this lab's namespaces and another lab's; the run directories are the case's."""
    import subprocess

    from fabricgen.lab import runtime, state

    lab_id = _lab_id(directory / "build")
    existing = [f"fg{lab_id}-{device}" for device in LAB_DEVICES] + [f"fg{OTHER_LAB}-be-spine01", f"fg{OTHER_LAB}-gpu01"]
    commands: list[list[str]] = []

    def run(args, stdin=None, check=True, timeout=60):
        commands.append([str(a) for a in args] + ([f"<stdin: {stdin}>"] if stdin else []))
        out = "\n".join(existing) + "\n" if list(args[:3]) == ["ip", "netns", "list"] else ""
        return subprocess.CompletedProcess(args, 0, out, "")

    runtime.run = run
    runtime.require_lab_host = lambda: None
    state.FRR_RUN = directory / "run" / "frr"
    state.LLDPD_RUN = runtime.LLDPD_RUN = directory / "run" / "lldpd"
    return lambda: {"commands": commands[:200]}


def _lab_state_check(directory: Path, outcome: Outcome) -> str | None:
    """Nothing but this lab's own removed; nothing at all when the state file was refused."""
    lab_id = _lab_id(directory / "build")
    for path in (
        directory / "outside" / "keep.txt",
        directory / "state" / OTHER_LAB / "state.json",
        directory / "state" / OTHER_LAB / "keys" / "secrets.yaml",
        directory / "run" / "frr" / f"fg{OTHER_LAB}-be-spine01",
        directory / "run" / "lldpd" / f"fg{OTHER_LAB}-be-spine01.pid",
    ):
        if not path.exists():
            return f"removed what is not this lab's ({path.relative_to(directory)})"
    removed = []
    for command in outcome.extra.get("commands", []):
        text = " ".join(command)
        if "netns delete" in text or "netns del " in text:
            removed += re.findall(r"netns delete (\S+)", text)
        if any(word in command for word in ("kill", "pkill")):
            return f"killed processes directly: {short(text)}"
    foreign = [name for name in removed if not name.startswith(f"fg{lab_id}-")]
    if foreign:
        return f"deleted another lab's namespace ({short(foreign[0])})"
    if outcome.exit_code == 2:
        if removed:
            return "refused the state file but deleted namespaces"
        if not (directory / "run" / "frr" / f"fg{lab_id}-be-spine01").exists():
            return "refused the state file but removed this lab's FRR directory"
    return None


def lab_state_case(bases: dict[str, Path], base: str, ops: tuple) -> Case:
    """`lab down` of a real build whose lab state was forged by `ops`."""
    must = [op for op in ops if isinstance(op, (ForgeId, ForgeNamespace, StateFileKind, ForgeBuildDir))]
    return Case(
        generator="lab-state",
        command="lab",
        argv=("lab", "down", "{dir}/build"),
        files={},
        mutations=[_describe_state_op(op) for op in ops],
        ops=ops,
        rebuild=lambda ops: lab_state_case(bases, base, ops),
        copy_tree=(bases[base], "build"),
        must_refuse="a forged state file" if must else "",
        base=f"{base} lab state",
        env={"FABRICGEN_LAB_STATE": "{dir}/state"},
        prepare=lambda directory: _write_lab_state(directory, ops),
        child_setup=_fake_lab_host,
        check=_lab_state_check,
    )


def _describe_state_op(op: StateOp) -> str:
    if isinstance(op, StateTree):
        return f"state tree: {type(op.op).__name__}"
    return f"{type(op).__name__}({short(next(iter(op.__dict__.values()), ''))})"


def lab_state_ops() -> st.SearchStrategy:
    index = st.integers(0, 10_000)
    return st.one_of(
        st.builds(
            StateTree,
            st.one_of(
                st.builds(SetValue, index, values()),
                st.builds(DropKey, index),
                st.builds(InsertKey, index, st.sampled_from(["pad", "keys_dir", "frr_dirs", "x"]), values()),
            ),
        ),
        st.builds(ForgeId, st.sampled_from(FORGED_IDS)),
        st.builds(ForgeNamespace, st.sampled_from(FORGED_NAMESPACES)),
        st.builds(ForgeBuildDir, st.sampled_from(FORGED_PATHS)),
        st.builds(StateFileKind, st.sampled_from(STATE_FILE_KINDS)),
    )


def lab_state_cases(bases: dict[str, Path]) -> st.SearchStrategy:
    @st.composite
    def cases(draw) -> Case:
        base = draw(st.sampled_from(sorted(bases)))
        ops = draw(st.lists(lab_state_ops(), min_size=0, max_size=3))
        return lab_state_case(bases, base, tuple(ops))

    return cases()


def preload() -> None:
    """Import, in the parent, everything a command imports lazily, so a forked case does not pay
    for it again."""
    import napalm.nxos  # noqa: F401
    import typer.testing  # noqa: F401

    import fabricgen.analysis.balancing  # noqa: F401
    import fabricgen.analysis.capacity  # noqa: F401
    import fabricgen.analysis.fabric  # noqa: F401
    import fabricgen.analysis.report  # noqa: F401
    import fabricgen.build.output  # noqa: F401
    import fabricgen.catalog.releases  # noqa: F401
    import fabricgen.cli  # noqa: F401
    import fabricgen.diff  # noqa: F401
    import fabricgen.nos.sonic.driver  # noqa: F401
    import fabricgen.push.report  # noqa: F401
    import fabricgen.push.rollout  # noqa: F401
    import fabricgen.reports.bom_compare  # noqa: F401
    import fabricgen.testplan  # noqa: F401
    import fabricgen.verify  # noqa: F401
    import napalm_sonic  # noqa: F401
    from fabricgen.compiler.pipeline import compile_intent

    # compile every template (and fill every cache) once here rather than in every child
    for name in ("tiny-nxos.yaml", "tiny-evpn.yaml", "cisco-256-gpu.yaml"):
        compile_intent(REPO / "tests" / "golden" / name if name.startswith("tiny") else REPO / "intents" / name)


# --- the report of a whole `make fuzz` run --------------------------------------------------------


def print_report(directory: Path, seconds: float | None = None) -> int:
    """Every campaign's JSON under `directory`, as one report. Returns 1 when any failed."""
    reports = [json.loads(path.read_text()) for path in sorted(directory.glob("*.json"))]
    if not reports:
        print(f"no fuzz reports under {directory}")
        return 1
    out = io.StringIO()
    total = sum(r["cases"] for r in reports)
    seeds = sorted({str(r.get("seed")) for r in reports})
    out.write(f"fabricgen fuzz report ({reports[0]['profile']} profile, seed {', '.join(seeds)}): {total:,} cases\n\n")
    out.write(f"{'generator':<12}{'cases':>8}{'wall s':>9}{'CPU s':>8}{'slowest s':>11}{'peak MiB':>10}  exit codes\n")
    for r in reports:
        codes = ", ".join(f"{k}: {v}" for k, v in r["exit_codes"].items())
        out.write(f"{r['generator']:<12}{r['cases']:>8}{r['seconds']:>9}{r['cpu_s']:>8}{r['slowest_case_s']:>11}{r['peak_case_rss_mib']:>10}  {codes}\n")
    out.write(
        f"\npeak memory of a case: {max(r['peak_case_rss_mib'] for r in reports)} MiB (limit {profile().memory_limit >> 20} MiB); "
        f"of the fuzzer itself: {max(r['fuzzer_rss_mib'] for r in reports)} MiB"
    )
    if seconds is not None:
        out.write(f"; wall time {seconds:.0f} s")
    out.write("\n")
    failures = [(r["generator"], f) for r in reports for f in r["failures"]]
    out.write(f"\n{len(failures)} failure class(es)\n")
    for generator, f in failures:
        out.write(f"\n- [{generator}] {f['kind']}  ({f['cases']} cases)\n")
        out.write(f"    input: {f['input']}  (base {f['base']})\n")
        for mutation in f["mutations"][:6]:
            out.write(f"    * {mutation[:200]}\n")
        out.write(f"    exit {f['exit_code']}; " + ((f["detail"] or f["stderr_tail"]).strip().splitlines() or [""])[-1][:300] + "\n")
    sys.stdout.write(out.getvalue())
    return 1 if failures else 0


if __name__ == "__main__":  # python -m tests.fuzzing report DIR [SECONDS]
    if len(sys.argv) >= 3 and sys.argv[1] == "report":
        sys.exit(print_report(Path(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else None))
    sys.exit("usage: python -m tests.fuzzing report DIR [SECONDS]")
