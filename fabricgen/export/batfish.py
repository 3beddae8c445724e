"""A Batfish snapshot of every switch of a build.

`render_batfish(build) -> {path: text}`, laid out as Batfish's "Format of vendor and supplemental
data" (pybatfish docs/source/formats.md) asks:
- `configs/<switch>.cfg`: an NX-OS switch's config as the build wrote it, with Batfish's vendor
  header `!RANCID-CONTENT-TYPE: cisco-nx` as its first line (generated files lack the tell-tale
  lines Batfish detects NX-OS by);
- `sonic_configs/<switch>/config_db.json` and `frr.conf`: a SONiC switch's two files, nothing else in
  its folder (the page: "The device folder must have only these files");
- `batfish/layer1_topology.json`: every cable whose two ends are both in the snapshot (fabric,
  management and OOB links between switches), as `{"edges": [{"node1": {"hostname",
  "interfaceName"}, "node2": {...}}]}`, each cable in both directions as Batfish's example
  (networks/example/example_layer1_topology.json) lists them: Batfish's Layer1Topology is a
  directed graph.
Secrets: each placeholder becomes a dummy value of its line's syntax (`with_dummy_secrets`), never
a value: the export reads no secret. Batfish parses config text line by line, and a placeholder
is not a token its NX-OS grammar takes where a key is a WORD (CiscoNxosLexer.g4 `F_WordChar` has no
`<`, `>`): `ntp authentication-key N md5 KEY` and `snmp-server user ... auth sha KEY priv aes-128
KEY` were unparseable on every NX-OS switch.
"""

from __future__ import annotations

import hashlib
import json
import re

from fabricgen.errors import Problem
from fabricgen.export.source import ExportBuild, ExportError
from fabricgen.secrets import PLACEHOLDER_PATTERN
from fabricgen.sorting import natural_key

RANCID_HEADER = {"nxos": "!RANCID-CONTENT-TYPE: cisco-nx"}
SONIC_FILES = ("config_db.json", "frr.conf")


def render_batfish(build: ExportBuild) -> dict[str, str]:
    files: dict[str, str] = {}
    problems: list[Problem] = []
    in_snapshot: set[str] = set()
    for switch in build.switches():
        name = switch.id
        if switch.nos == "sonic":
            missing = [f for f in SONIC_FILES if not build.files.has(f"configs/{name}/{f}")]
            if missing:
                problems.append(
                    Problem(f"{name} (sonic) has no configs/{name}/{missing[0]}", hint="rebuild the directory", file=str(build.root / "manifest.json"))
                )
                continue
            for file in SONIC_FILES:
                files[f"sonic_configs/{name}/{file}"] = with_dummy_secrets(build.files.text(f"configs/{name}/{file}"))
        elif build.files.has(f"configs/{name}.cfg"):
            text = with_dummy_secrets(build.files.text(f"configs/{name}.cfg"))
            header = RANCID_HEADER.get(switch.nos or "")
            files[f"configs/{name}.cfg"] = f"{header}\n{text}" if header else text
        else:
            problems.append(Problem(f"{name} ({switch.nos}) has no configs/{name}.cfg", hint="rebuild the directory", file=str(build.root / "manifest.json")))
            continue
        in_snapshot.add(name)
    if problems:
        raise ExportError(problems)
    files["batfish/layer1_topology.json"] = layer1_topology(build, in_snapshot)
    return files


def layer1_topology(build: ExportBuild, devices: set[str]) -> str:
    edges = []
    for row in build.cables:
        if row.a_device in devices and row.b_device in devices:
            a = {"hostname": row.a_device, "interfaceName": row.a_port}
            b = {"hostname": row.b_device, "interfaceName": row.b_port}
            edges += [{"node1": a, "node2": b}, {"node1": b, "node2": a}]
    edges.sort(key=lambda e: natural_key((e["node1"]["hostname"], e["node1"]["interfaceName"], e["node2"]["hostname"], e["node2"]["interfaceName"])))
    return json.dumps({"edges": edges}, indent=1) + "\n"


# The characters of crypt(3)'s hashes (`./0-9A-Za-z`), in their order
CRYPT_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# A key encrypted as Cisco type 7 follows `key 7` or `password 7`; on NX-OS's NTP line the type
# comes after the key (`ntp authentication-key N md5 KEY 7`)
TYPE_7_BEFORE = re.compile(r"\b(key|password) 7 $")
TYPE_7_NTP = re.compile(r"^ntp authentication-key \d+ md5 $")


def with_dummy_secrets(text: str) -> str:
    """`text` (a config, or config_db.json) with every secret placeholder replaced by a dummy value
    that its line takes (`dummy_secret`). Lines without a placeholder are kept byte for byte."""
    return "\n".join(_fill_line(line) if PLACEHOLDER_PATTERN.search(line) else line for line in text.split("\n"))


def _fill_line(line: str) -> str:
    parts, last = [], 0
    for match in PLACEHOLDER_PATTERN.finditer(line):
        parts += [line[last : match.start()], dummy_secret(match.group(1), line[: match.start()], line[match.end() :])]
        last = match.end()
    return "".join([*parts, line[last:]])


def dummy_secret(name: str, before: str, after: str) -> str:
    """A stand-in for secret `name` between `before` and `after` on its line, derived from the
    name alone (the same secret gets the same dummy on every switch, so both ends of a keyed BGP
    session agree; two secrets get two):
    - after `password 5` (NX-OS user): a SHA-256 crypt hash, `$5$SALT$` and 43 characters of
      `./0-9A-Za-z`, the form NX-OS writes for type 5 (the last character carries 4 bits);
    - a Cisco type-7 key (`key 7 K`, `password 7 K`, `ntp authentication-key N md5 K 7`): two
      decimal digits (the offset, 00-15) and pairs of hex digits;
    - anywhere else: 15 letters and digits. That fits every key field fabricgen writes: a Batfish
      NX-OS WORD, NX-OS's NTP md5 key (1-15 characters), SNMPv3 passphrases (8 or more; no `@`,
      `:` or space in sonic-snmp.yang), TACACS+/RADIUS keys (no space, `#` or `,` in SONiC's
      models), TCP-MD5 keys, SNMP community names."""
    digest = hashlib.sha256(f"fabricgen dummy secret {name}".encode()).digest()
    if before.endswith("password 5 "):
        salt = "".join(CRYPT_ALPHABET[b % 64] for b in digest[:8])
        body = hashlib.sha512(digest).digest()
        return f"$5${salt}${''.join(CRYPT_ALPHABET[b % 64] for b in body[:42])}{CRYPT_ALPHABET[body[42] % 16]}"
    if TYPE_7_BEFORE.search(before) or (TYPE_7_NTP.match(before.lstrip()) and after.split()[:1] == ["7"]):
        return f"{digest[0] % 16:02d}{digest[1:9].hex().upper()}"
    return "fgDummy" + digest[:4].hex()
