"""`fabricgen export batfish`: every secret placeholder of the build becomes a dummy value that the
line it sits on takes, so Batfish parses every line; dummies are deterministic, keep which lines
share a secret, and never come from the environment.

The syntax of each line that carries a secret is written here independently of the export, from
Batfish's NX-OS grammar (batfish/batfish `projects/batfish/src/main/antlr4/org/batfish/vendor/
cisco_nxos/grammar`: CiscoNxosLexer.g4 `F_WordChar`, the M_Word mode that `md5` and `sha` push;
`M_Password` for `key 0` and `password 0`; CiscoNxos_ntp.g4 `md5_string`, "1-15 characters")
and the switches' own rules (NX-OS `username ... password 5` takes a SHA-256 crypt hash, `$5$`
salt `$` 43 characters of `./0-9A-Za-z`; SNMPv3 passphrases of at least 8 characters on NX-OS
and in sonic-snmp.yang)."""

from __future__ import annotations

import filecmp
import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricgen.build.secrets import env_name, names_in, placeholder
from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()

# Batfish's NX-OS WORD (CiscoNxosLexer.g4 F_WordChar): no '<', '>' or space
WORD = r"[0-9A-Za-z!@#$%^&*()_=+.;:{}/-]+"
KEY = r"\S+"  # M_Password's PASSWORD_0_TEXT: any non-blank run
SHA256_CRYPT = r"\$5\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{43}"
# Each line kind that carries a secret: what the line must be once the secret is a value
NXOS_SECRET_LINES = {
    "username": rf"username \S+ password 5 {SHA256_CRYPT} role \S+",
    "tacacs-server host": rf"tacacs-server host \S+ key 0 {KEY} timeout \d+",
    "radius-server host": rf"radius-server host \S+ key 0 {KEY} authentication accounting",
    "ntp authentication-key": r"ntp authentication-key \d+ md5 [0-9A-Za-z!@#$%^&*()_=+.;:{}/-]{1,15} 0",
    "snmp-server user": rf"snmp-server user \S+ network-operator auth (sha|sha-256) (?=\S{{8,}} ){WORD} priv aes-128 (?=\S{{8,}}$){WORD}",
    "snmp-server community": rf"snmp-server community {WORD} (group network-operator|use-ipv4acl \S+)",
    "password 0": rf"    password 0 {KEY}",  # a BGP peer template's TCP-MD5 key
}
FRR_SECRET_LINES = {"neighbor": rf" neighbor \S+ password {KEY}"}
PLAIN_VALUE = re.compile(r"[0-9A-Za-z]{8,15}")  # fits every config_db field that holds a key (sonic-snmp.yang: 8+ characters, no '@' or ':')
MARKER = "NotADummy-4f1c"


def _with_every_secret(text: str) -> str:
    """A tiny intent plus RADIUS and a v2c community: every kind of secret line fabricgen writes."""
    doc = yaml.safe_load(text)
    doc["management"]["radius"] = {"servers": ["192.0.2.15"], "key": "radius-key"}
    doc["management"].setdefault("snmp", {})["communities"] = ["legacy-ro"]
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("batfish-builds")
    result = {}
    for name in ("tiny-nxos", "tiny-sonic"):
        intent = directory / f"{name}.yaml"
        intent.write_text(_with_every_secret((REPO / "tests" / "golden" / f"{name}.yaml").read_text()))
        result[name] = directory / name
        build_intent(intent, result[name])
    return result


def export(build_dir: Path, destination: Path, env: dict[str, str] | None = None) -> Path:
    result = runner.invoke(app, ["export", "batfish", str(build_dir), "-o", str(destination)], env=env)
    assert result.exit_code == 0, result.output
    return destination


def _secret_lines(build_dir: Path, relative: str, exported: Path) -> list[tuple[str, str]]:
    """(build line, exported line) for each line of the build's file that holds a placeholder."""
    built = (build_dir / "configs" / relative).read_text().splitlines()
    lines = exported.read_text().splitlines()
    if lines[0].startswith("!RANCID-CONTENT-TYPE"):
        lines = lines[1:]
    assert len(lines) == len(built)
    return [(b, e) for b, e in zip(built, lines, strict=True) if names_in(b)]


def test_every_secret_line_of_an_nxos_switch_holds_a_value_of_its_syntax(builds, tmp_path):
    """The build's NX-OS configs keep `<<secret=NAME>>`, which Batfish's NX-OS grammar cannot read
    where a key is a WORD (ntp authentication-key, snmp-server user: two lines per switch)."""
    build_dir = builds["tiny-nxos"]
    out = export(build_dir, tmp_path / "bf")
    kinds_seen = set()
    for config in sorted((out / "configs").glob("*.cfg")):
        assert names_in(config.read_text()) == set(), config.name
        for built, exported in _secret_lines(build_dir, config.name, config):
            [kind] = [k for k in NXOS_SECRET_LINES if built.lstrip().startswith(k) or built.startswith(k)] or [None]
            assert kind is not None, f"{config.name}: a secret line no rule here describes: {built}"
            assert re.fullmatch(NXOS_SECRET_LINES[kind], exported), (config.name, exported)
            kinds_seen.add(kind)
    assert kinds_seen == set(NXOS_SECRET_LINES)


def test_every_secret_of_a_sonic_switch_holds_a_value_of_its_syntax(builds, tmp_path):
    build_dir = builds["tiny-sonic"]
    out = export(build_dir, tmp_path / "bf")
    switches = sorted(p.name for p in (out / "sonic_configs").iterdir())
    assert switches
    fields_seen = 0
    for name in switches:
        frr = out / "sonic_configs" / name / "frr.conf"
        assert names_in(frr.read_text()) == set(), name
        pairs = _secret_lines(build_dir, f"{name}/frr.conf", frr)
        assert pairs and all(re.fullmatch(FRR_SECRET_LINES["neighbor"], exported) for _, exported in pairs), name
        built = json.loads((build_dir / "configs" / name / "config_db.json").read_text())
        exported = json.loads((out / "sonic_configs" / name / "config_db.json").read_text())
        assert names_in(json.dumps(exported)) == set(), name
        for table, rows in built.items():
            for key, row in rows.items():
                if names_in(key):  # SNMP_COMMUNITY: the community is the key
                    [dummy] = [k for k in exported[table] if k not in rows]
                    assert PLAIN_VALUE.fullmatch(dummy), (name, table)
                    fields_seen += 1
                    continue
                for field, value in row.items():
                    if isinstance(value, str) and names_in(value):
                        assert PLAIN_VALUE.fullmatch(exported[table][key][field]), (name, table, key, field)
                        fields_seen += 1
    assert fields_seen >= 6 * len(switches)  # TACPLUS x2, RADIUS x2, NTP_KEY, SNMP_USER x2, SNMP_COMMUNITY


def test_a_secret_keeps_one_dummy_everywhere_and_two_secrets_never_share_one(builds, tmp_path):
    """Batfish compares the two ends of a BGP session: both ends of a keyed session carry the same
    dummy, and a line that used another secret another one."""
    out = export(builds["tiny-nxos"], tmp_path / "bf")
    dummies: dict[str, set[str]] = {}
    for config in sorted((out / "configs").glob("*.cfg")):
        for built, exported in _secret_lines(builds["tiny-nxos"], config.name, config):
            pattern = re.escape(built)
            for name in names_in(built):
                pattern = pattern.replace(re.escape(placeholder(name)), f"(?P<{name.replace('-', '_')}>\\S+)")
            match = re.fullmatch(pattern, exported)
            assert match, exported
            for name, value in match.groupdict().items():
                dummies.setdefault(name, set()).add(value)
    assert all(len(values) == 1 for values in dummies.values()), dummies
    values = [next(iter(v)) for v in dummies.values()]
    assert len(set(values)) == len(values) >= 6


def test_the_snapshot_is_deterministic_and_never_holds_a_value_from_the_environment(builds, tmp_path):
    """Secret values in the environment (as `push` would read them) change nothing: the export
    never reads them."""
    environment = {env_name(name): f"{MARKER}-{name}" for name in ("bgp-backend", "tacacs-key", "ntp-key", "snmp-auth-key", "snmp-priv-key", "radius-key")}
    for build_dir in builds.values():
        plain = export(build_dir, tmp_path / f"{build_dir.name}-a")
        with_values = export(build_dir, tmp_path / f"{build_dir.name}-b", env=environment)
        files = sorted(str(p.relative_to(plain)) for p in plain.rglob("*") if p.is_file())
        assert filecmp.cmpfiles(plain, with_values, files, shallow=False)[1:] == ([], [])
        for path in with_values.rglob("*"):
            if path.is_file():
                assert MARKER not in path.read_text(), path
