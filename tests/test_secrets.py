"""Secrets never leave memory except through `secrets render`: the acceptance proof for build,
validate, diff and `secrets list`, and the unit tests of fabricgen.build.secrets.

Marker values are planted for every secret of intents/cisco-256-gpu.yaml, one set in the
environment (FABRICGEN_SECRET_*) and another in a 0600 secrets file ($FABRICGEN_SECRETS_FILE);
no marker may appear in any file the commands write, their stdout or their stderr. The acceptance
proof runs them as processes of their own, as a user runs them (whatever reaches file descriptors
1 and 2 counts); the other command tests run them in this process (tests/cli_runner.py). `secrets render` is the one command that writes values: there
the environment's markers must appear, in 0600 files of a 0700 directory, with a warning."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabricgen.basics.errors import SecretsError
from fabricgen.build.secrets import (
    BGP_KEY,
    MAX_FILE_BYTES,
    NTP_KEY,
    PLACEHOLDER_PATTERN,
    SNMP_AUTH_KEY,
    SNMP_PRIVACY_KEY,
    TACACS_KEY,
    USER_HASH,
    Secrets,
    dummy_secrets,
    env_name,
    load_secrets,
    mask_config_db,
    mask_text,
    names_in,
    slots,
    uses_in,
)
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.nos.sonic.secret_slots import config_db_slot as sonic_slot
from tests import cli_runner
from tests.conftest import INTENTS

INTENT = INTENTS / "cisco-256-gpu.yaml"
SLOTS = slots()
TAG = "7f3a9c1e"


def _names() -> list[str]:
    build = compile_intent(INTENT, render=False)
    return sorted(set().union(*(config.secret_names() for config in build.configs.values())))


NAMES = _names()
ENV_MARKERS = {name: f"MARKER-ENV-{name}-{TAG}" for name in NAMES + ["bgp-backend-b"]}
FILE_MARKERS = {name: f"MARKER-FILE-{name}-{TAG}" for name in NAMES + ["bgp-backend-b"]}


def _run(*args: str, env: dict[str, str], cwd: Path | None = None) -> cli_runner.Completed:
    return cli_runner.fabricgen(*args, env=env, cwd=cwd)


def _run_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], check=False, capture_output=True, text=True, timeout=300, env=env)


def _secrets_file(path: Path, values: dict[str, str], mode: int = 0o600) -> Path:
    path.write_text("".join(f"{name}: '{value}'\n" for name, value in values.items()))
    path.chmod(mode)
    return path


def _environment(secrets_file: Path | None, values: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("FABRICGEN_SECRET")}
    env.update({env_name(name): value for name, value in (ENV_MARKERS if values is None else values).items()})
    if secrets_file is not None:
        env["FABRICGEN_SECRETS_FILE"] = str(secrets_file)
    return env


def _assert_no_marker(where: str, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    assert b"MARKER-" not in data, f"a secret value in {where}"


def _assert_tree_clean(root: Path) -> int:
    count = 0
    for path in root.rglob("*"):
        if path.is_file():
            _assert_no_marker(str(path), path.read_bytes())
            count += 1
    return count


# --- a build of the whitepaper intent, placeholders as the renderers write them -------------------


def _rewrite_manifest(build_dir: Path, changed: list[str]) -> None:
    manifest = json.loads((build_dir / "manifest.json").read_text())
    for path in changed:
        manifest["files"][path] = hashlib.sha256((build_dir / path).read_bytes()).hexdigest()
    (build_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("planted")
    result = _run("build", str(INTENT), "-o", str(directory / "build"), "-q", env=_environment(None))
    assert result.returncode == 0, result.stderr
    return directory / "build"


# --- the acceptance proof: build, validate, diff, secrets list -------------------------------------


@pytest.mark.slow  # six processes of their own
def test_no_value_reaches_a_build_validate_diff_or_list(tmp_path: Path):
    secrets_file = _secrets_file(tmp_path / "secrets.yaml", FILE_MARKERS)
    env = _environment(secrets_file)
    edited = tmp_path / "edited.yaml"
    edited.write_text(INTENT.read_text().replace("password: bgp-backend}", "password: bgp-backend-b}").replace("timeout_s: 5", "timeout_s: 6"))
    assert "bgp-backend-b" in edited.read_text()

    outputs = {}
    build = _run_process("build", str(INTENT), "-o", str(tmp_path / "build"), env=env)
    assert build.returncode == 0, build.stderr
    outputs["build"] = build
    outputs["validate"] = _run_process("validate", str(INTENT), env=env)
    assert outputs["validate"].returncode == 0
    for output_format in ("text", "markdown", "json"):
        result = _run_process("diff", str(INTENT), str(edited), "--format", output_format, env=env)
        assert result.returncode == 1, result.stderr  # the BGP key's name changed
        outputs[f"diff {output_format}"] = result
    listing = _run_process("secrets", "list", str(tmp_path / "build"), env=env)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    outputs["secrets list"] = listing
    outputs["secrets list --json"] = _run_process("secrets", "list", str(tmp_path / "build"), "--json", env=env)

    for command, result in outputs.items():
        _assert_no_marker(f"stdout of {command}", result.stdout)
        _assert_no_marker(f"stderr of {command}", result.stderr)
    assert _assert_tree_clean(tmp_path / "build") > 40
    document = json.loads(outputs["diff json"].stdout)
    assert "topology.json" in document["files"]["reports"]  # its nodes' secrets name the new key
    renamed = [(r["old"], r["new"]) for r in document["secret_references"] if r["use"] == BGP_KEY]
    assert renamed == [("bgp-backend", "bgp-backend-b")]
    listed = json.loads(outputs["secrets list --json"].stdout)
    assert {s["name"] for s in listed["secrets"]} == set(NAMES)
    assert all(s["available"] and s["source"] == "environment" for s in listed["secrets"])


def test_errors_never_quote_a_value(tmp_path: Path, planted: Path):
    loose = _secrets_file(tmp_path / "loose.yaml", FILE_MARKERS, mode=0o644)
    result = _run("secrets", "list", str(planted), env=_environment(loose, {}))
    assert result.returncode == 2
    assert "chmod 600" in result.stderr and "MARKER" not in result.stderr + result.stdout

    broken = tmp_path / "broken.yaml"
    broken.write_text(f'tacacs-key: "MARKER-FILE-line1\\nline2-{TAG}"\n')  # a YAML escape: a real newline in the value
    broken.chmod(0o600)
    for command in (("secrets", "list", str(planted)), ("secrets", "render", str(planted), "--out", str(tmp_path / "out"))):
        result = _run(*command, env=_environment(broken, {}))
        assert result.returncode == 2, result.stdout
        assert "secret 'tacacs-key'" in result.stderr and "control" in result.stderr
        _assert_no_marker(" ".join(command[:2]), result.stdout + result.stderr)
    assert not (tmp_path / "out").exists()

    env = _environment(None, {"ntp-key": f"MARKER-ENV-two words-{TAG}"})
    result = _run("secrets", "list", str(planted), env=env)
    assert result.returncode == 2 and "FABRICGEN_SECRET_NTP_KEY" in result.stderr
    _assert_no_marker("secrets list with a bad environment value", result.stdout + result.stderr)

    tagged = tmp_path / "tagged.yaml"
    tagged.write_text(f"tacacs-key: !!int MARKER-FILE-{TAG}\n")
    tagged.chmod(0o600)
    result = _run("secrets", "list", str(planted), env=_environment(tagged, {}))
    assert result.returncode == 2
    _assert_no_marker("a YAML error of the secrets file", result.stdout + result.stderr)


# --- secrets list -------------------------------------------------------------------------------


def test_list_names_uses_switches_and_availability(tmp_path: Path, planted: Path):
    partial = {name: value for name, value in ENV_MARKERS.items() if name not in ("tacacs-key", "ntp-key")}
    result = _run("secrets", "list", str(planted), "--json", env=_environment(None, partial))
    assert result.returncode == 1
    _assert_no_marker("secrets list --json", result.stdout + result.stderr)
    document = json.loads(result.stdout)
    assert document["missing"] == ["ntp-key", "tacacs-key"]
    by_name = {s["name"]: s for s in document["secrets"]}
    topology = json.loads((planted / "topology.json").read_text())
    switches = [n for n in topology["nodes"] if n.get("secrets")]
    assert by_name["tacacs-key"]["switches"] == len(switches) == 26
    assert by_name["bgp-backend"]["switches"] == sum("bgp-backend" in n["secrets"] for n in switches) == 12
    assert by_name["tacacs-key"]["uses"] == [TACACS_KEY]
    assert by_name["snmp-auth-key"]["uses"] == [SNMP_AUTH_KEY] and by_name["snmp-priv-key"]["uses"] == [SNMP_PRIVACY_KEY]
    assert by_name["admin-password-hash"]["uses"] == [USER_HASH] and by_name["ntp-key"]["uses"] == [NTP_KEY]
    assert by_name["bgp-frontend"]["uses"] == [BGP_KEY]
    assert by_name["bgp-backend"]["env"] == "FABRICGEN_SECRET_BGP_BACKEND"
    assert not by_name["tacacs-key"]["available"] and by_name["bgp-backend"]["available"]

    text = _run("secrets", "list", str(planted), env=_environment(None, partial))
    assert text.returncode == 1
    assert "2 of 7 secrets have no value: ntp-key ($FABRICGEN_SECRET_NTP_KEY), tacacs-key ($FABRICGEN_SECRET_TACACS_KEY)" in text.stdout
    row = next(line for line in text.stdout.splitlines() if line.startswith("tacacs-key "))
    assert "FABRICGEN_SECRET_TACACS_KEY" in row and row.split()[2] == "26" and row.endswith("no")

    file_only = _secrets_file(tmp_path / "s.yaml", FILE_MARKERS)
    result = _run("secrets", "list", str(planted), "--json", env=_environment(file_only, {}))
    assert result.returncode == 0
    assert {s["source"] for s in json.loads(result.stdout)["secrets"]} == {"secrets file"}


def test_list_refuses_a_placeholder_topology_does_not_list(tmp_path: Path, planted: Path):
    copy = tmp_path / "build"
    subprocess.run(["cp", "-a", str(planted), str(copy)], check=True)
    config = copy / "configs" / "be-spine01.cfg"
    config.write_text(config.read_text() + "radius-server host 10.0.0.9 key 0 <<secret=radius-key>>\n")
    _rewrite_manifest(copy, ["configs/be-spine01.cfg"])
    result = _run("secrets", "list", str(copy), env=_environment(None))
    assert result.returncode == 2
    assert "refers to secret 'radius-key', which topology.json does not list for be-spine01" in result.stderr

    not_a_build = _run("secrets", "list", str(tmp_path), env=_environment(None))
    assert not_a_build.returncode == 2 and "manifest.json" in not_a_build.stderr


# --- secrets render -----------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_render_writes_values_into_private_files(tmp_path: Path, planted: Path):
    out = tmp_path / "deploy" / "configs-with-keys"
    env = _environment(_secrets_file(tmp_path / "s.yaml", FILE_MARKERS))
    result = _run("secrets", "render", str(planted), "--out", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert "secrets in clear text" in result.stderr and "never commit" in result.stderr
    _assert_no_marker("secrets render's output", result.stdout + result.stderr)

    written = sorted(p for p in out.rglob("*") if p.is_file() and p.name != ".fabricgen-secrets-render")
    built = sorted(p.relative_to(planted) for p in (planted / "configs").rglob("*") if p.is_file())
    assert [p.relative_to(out) for p in written] == built
    assert _mode(out) == 0o700 and _mode(out / "configs") == 0o700
    for path in written:
        assert _mode(path) == 0o600, path
        text = path.read_text()
        assert "<<secret" not in text, path
        original = (planted / path.relative_to(out)).read_text()
        for name in names_in(original):
            assert ENV_MARKERS[name] in text  # the environment wins over the file
        assert "MARKER-FILE" not in text
    assert f"tacacs-server host 10.250.0.11 key 0 {ENV_MARKERS['tacacs-key']}" in (out / "configs" / "be-spine01.cfg").read_text()
    assert not list(out.rglob("*.tmp"))

    again = _run("secrets", "render", str(planted), "--out", str(out), "--devices", "be-spine01", env=env)
    assert again.returncode == 0, again.stderr  # its own earlier render: replaced, stale files removed
    assert sorted(p.name for p in (out / "configs").iterdir()) == ["be-spine01.cfg"]


def test_render_shows_its_output_directory_escaped(tmp_path: Path, planted: Path):
    """Found by the paths fuzz campaign: the directory's name reached the terminal raw (an escape
    sequence or a bidirectional override in it drove the terminal)."""
    out = tmp_path / "x\x1b[31m\u202eevil"
    result = _run("secrets", "render", str(planted), "--out", str(out), env=_environment(_secrets_file(tmp_path / "s.yaml", FILE_MARKERS)))
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout + result.stderr and "\u202e" not in result.stdout + result.stderr
    assert "x\\x1b[31m\\u202eevil" in result.stdout


def test_render_refuses_before_writing_anything(tmp_path: Path, planted: Path):
    partial = {name: value for name, value in ENV_MARKERS.items() if name not in ("snmp-auth-key", "bgp-frontend")}
    out = tmp_path / "out"
    result = _run("secrets", "render", str(planted), "--out", str(out), env=_environment(None, partial))
    assert result.returncode == 2
    assert "'bgp-frontend' has no value" in result.stderr and "$FABRICGEN_SECRET_BGP_FRONTEND" in result.stderr
    assert "'snmp-auth-key' has no value" in result.stderr and "$FABRICGEN_SECRET_SNMP_AUTH_KEY" in result.stderr
    assert not out.exists()
    _assert_no_marker("a refused render", result.stdout + result.stderr)

    env = _environment(None)
    inside = _run("secrets", "render", str(planted), "--out", str(planted / "filled"), env=env)
    assert inside.returncode == 2 and "inside the build directory" in inside.stderr
    assert not (planted / "filled").exists()

    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "todo.txt").write_text("mine\n")
    refused = _run("secrets", "render", str(planted), "--out", str(foreign), env=env)
    assert refused.returncode == 2 and "not written by `fabricgen secrets render`" in refused.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["todo.txt"]

    typo = _run("secrets", "render", str(planted), "--out", str(out), "--devices", "be-spine99", env=env)
    assert typo.returncode == 2 and "--devices 'be-spine99' matches no switch" in typo.stderr
    assert not out.exists()

    spines = _run("secrets", "render", str(planted), "--out", str(out), "--devices", "spine", env=env)
    assert spines.returncode == 0, spines.stderr
    topology = json.loads((planted / "topology.json").read_text())
    expected = sorted(f"{n['id']}.cfg" for n in topology["nodes"] if n["role"] == "spine")
    assert sorted(p.name for p in (out / "configs").iterdir()) == expected and len(expected) >= 2


# --- diff names a changed secret reference ---------------------------------------------------------


def test_diff_names_a_renamed_secret(tmp_path: Path, planted: Path):
    renamed = tmp_path / "renamed"
    subprocess.run(["cp", "-a", str(planted), str(renamed)], check=True)
    changed = []
    for path in sorted((renamed / "configs").glob("*.cfg")):
        text = path.read_text()
        if "<<secret=bgp-backend>>" in text:
            path.write_text(text.replace("<<secret=bgp-backend>>", "<<secret=bgp-backend-b>>"))
            changed.append(f"configs/{path.name}")
    topology = (renamed / "topology.json").read_text().replace('"bgp-backend"', '"bgp-backend-b"')
    (renamed / "topology.json").write_text(topology)
    _rewrite_manifest(renamed, changed + ["topology.json"])
    assert len(changed) == 12

    env = _environment(_secrets_file(tmp_path / "s.yaml", FILE_MARKERS))
    document = json.loads(_run("diff", str(planted), str(renamed), "--format", "json", env=env).stdout)
    references = document["secret_references"]
    assert [(r["use"], r["old"], r["new"], len(r["switches"])) for r in references] == [(BGP_KEY, "bgp-backend", "bgp-backend-b", 12)]
    text = _run("diff", str(planted), str(renamed), env=env)
    assert "Secret references: 1 change on 12 switches" in text.stdout
    assert "BGP session key  bgp-backend → bgp-backend-b  12" in text.stdout
    assert "+    password 0 <<secret=bgp-backend-b>>" in text.stdout
    markdown = _run("diff", str(planted), str(renamed), "--format", "markdown", env=env)
    assert "| BGP session key | bgp-backend → bgp-backend-b | 12 |" in markdown.stdout
    for result in (text, markdown):
        _assert_no_marker("diff", result.stdout + result.stderr)


def test_a_secret_on_a_line_changed_otherwise_is_no_reference_change():
    from fabricgen.diff.compare import _reference_changes

    before = ["tacacs-server host 10.0.0.1 key 0 <<secret:tacacs-key>>"]
    after = ["tacacs-server host 10.0.0.2 key 0 <<secret:tacacs-key>>"]
    assert _reference_changes(before, after) == set()
    assert _reference_changes([], after) == {(TACACS_KEY, None, "tacacs-key")}
    assert _reference_changes(before, []) == {(TACACS_KEY, "tacacs-key", None)}


# --- summary.md ---------------------------------------------------------------------------------


def test_summary_lists_each_secret_once_without_values(monkeypatch: pytest.MonkeyPatch):
    for name, value in ENV_MARKERS.items():
        monkeypatch.setenv(env_name(name), value)
    summary = compile_intent(INTENT).files["summary.md"].decode()
    section = summary.split("## Secrets", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == NAMES
    assert "| `bgp-backend` | `FABRICGEN_SECRET_BGP_BACKEND` | BGP session key (leaf-spine) | 12 |" in rows
    assert "| `tacacs-key` | `FABRICGEN_SECRET_TACACS_KEY` | TACACS+ key | 26 |" in rows
    _assert_no_marker("summary.md", summary)


# --- fabricgen.build.secrets --------------------------------------------------------------------------


def test_fill_and_mask():
    secrets = Secrets({"a": "k3y", "ab": "k3y-longer", "q": 'x"y\\z'})
    assert secrets.fill("key <<secret:a>> and <<secret:ab>>") == "key k3y and k3y-longer"
    with pytest.raises(KeyError):
        secrets.fill("<<secret:other>>")
    filled = secrets.fill('{"k": "<<secret:q>>"}', in_json=True)
    assert json.loads(filled) == {"k": 'x"y\\z'}
    assert secrets.mask(filled) == '{"k": "<<secret=q>>"}'  # the JSON-escaped form is masked too
    assert secrets.mask("k3y-longer then k3y") == "<<secret=ab>> then <<secret=a>>"  # longest first
    # a build of fabricgen before the `=` form: its placeholders are read and filled the same
    assert secrets.fill("key <<secret=a>> and <<secret:ab>>") == "key k3y and k3y-longer"
    assert names_in("<<secret:a>> <<secret=ab>>") == {"a", "ab"}
    assert secrets.missing_in("<<secret:a>> <<secret:zz>>") == ["zz"]
    assert "k3y" not in repr(secrets)


def test_load_secrets_env_wins_and_only_asked_names_are_kept(tmp_path: Path):
    path = _secrets_file(tmp_path / "s.yaml", {"bgp-a": "from-file", "ntp-key": "n1", "unused": "u"})
    secrets = load_secrets(["bgp-a", "ntp-key", "absent"], path, {env_name("bgp-a"): "from-env"})
    assert dict(secrets.values) == {"bgp-a": "from-env", "ntp-key": "n1"}
    via_env = load_secrets(["ntp-key"], None, {"FABRICGEN_SECRETS_FILE": str(path)})
    assert dict(via_env.values) == {"ntp-key": "n1"}


@pytest.mark.parametrize(
    ("content", "mode", "expected"),
    [
        ("a: b\n", 0o644, "readable or writable by others (mode 0644)"),
        ("a: b\n", 0o620, "readable or writable by others"),
        ("- MARKER-x\n", 0o600, "must be a mapping"),
        ("Bad_Key: MARKER-x\n", 0o600, "a key that is not a secret name"),
        ("bgp-a: 12345\n", 0o600, "is not a string"),
        ("bgp-a: 'two MARKER-x'\n", 0o600, "a space, a control or a non-ASCII"),
        ("bgp-a: ''\n", 0o600, "is empty"),
        ("bgp-a: '<<secret:bgp-a>>'\n", 0o600, "is a placeholder"),
        ("bgp-a: [MARKER-x\n", 0o600, "not valid YAML"),
        ("bgp-a: !!float MARKER-x\n", 0o600, "not a valid"),
    ],
)
def test_unsafe_secrets_files_are_refused_without_quoting_them(tmp_path: Path, content: str, mode: int, expected: str):
    path = tmp_path / "s.yaml"
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(SecretsError) as caught:
        load_secrets(["bgp-a"], path, {})
    report = caught.value.report()
    assert expected in report
    assert "MARKER" not in report and "12345" not in report


def test_symlinks_other_owners_and_size_are_refused(tmp_path: Path):
    real = _secrets_file(tmp_path / "real.yaml", {"bgp-a": "v"})
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    with pytest.raises(SecretsError, match="is a symbolic link"):
        load_secrets(["bgp-a"], link, {})
    big = tmp_path / "big.yaml"
    big.write_text("x" * (MAX_FILE_BYTES + 1))
    big.chmod(0o600)
    with pytest.raises(SecretsError, match=f"at most {MAX_FILE_BYTES}"):
        load_secrets(["bgp-a"], big, {})
    many = tmp_path / "many.yaml"
    many.write_text("".join(f"k{i}: v\n" for i in range(6_000)))  # 12,000 nodes, under the byte limit
    many.chmod(0o600)
    with pytest.raises(SecretsError, match="YAML nodes"):
        load_secrets(["bgp-a"], many, {})
    with pytest.raises(SecretsError, match="cannot open"):
        load_secrets(["bgp-a"], tmp_path / "absent.yaml", {})
    if os.geteuid() == 0:  # only root can give a file away
        os.chown(real, 65534, 65534)
        with pytest.raises(SecretsError, match="belongs to another user"):
            load_secrets(["bgp-a"], real, {})
    with pytest.raises(SecretsError, match="FABRICGEN_SECRET_BGP_A"):
        load_secrets(["bgp-a"], None, {env_name("bgp-a"): "line\nbreak"})


def test_uses_are_read_from_config_lines_and_config_db_fields():
    nxos = "\n".join(
        [
            "snmp-server user nms network-operator auth sha <<secret:sa>> priv aes-128 <<secret:sp>>",
            "tacacs-server host 10.0.0.1 key 0 <<secret:t>>",
            "ntp authentication-key 1 md5 <<secret:n>> 7",
            "username admin password 5 <<secret:h>> role network-admin",
            "  template peer SPINES",
            "    password 3 <<secret:b>>",
        ]
    )
    assert uses_in("configs/x.cfg", nxos) == [
        ("sa", SNMP_AUTH_KEY),
        ("sp", SNMP_PRIVACY_KEY),
        ("t", TACACS_KEY),
        ("n", NTP_KEY),
        ("h", USER_HASH),
        ("b", BGP_KEY),
    ]
    assert uses_in("configs/x/frr.conf", " neighbor SPINES password <<secret:b>>") == [("b", BGP_KEY)]
    config_db = {
        "TACPLUS_SERVER": {"10.0.0.1": {"passkey": "<<secret:t>>"}},
        "NTP_KEY": {"1": {"value": "<<secret:n>>"}},
        "SNMP_USER": {"nms": {"SNMP_USER_AUTH_PASSWORD": "<<secret:sa>>", "SNMP_USER_ENCRYPTION_PASSWORD": "<<secret:sp>>"}},
    }
    assert sorted(uses_in("configs/x/config_db.json", json.dumps(config_db))) == sorted(
        [("t", TACACS_KEY), ("n", NTP_KEY), ("sa", SNMP_AUTH_KEY), ("sp", SNMP_PRIVACY_KEY)]
    )


# --- verify's drift masks secrets where the configs carry them ---------------------------------------


def _drift_output(nos: str, built: str, running: str, secrets: Secrets | None = None) -> str:
    """Everything `verify` prints of a drift between `built` and `running` (JSON, Markdown and
    the plain lines), for one switch of `nos`: the device stands in as its answer (no switch here)."""
    from fabricgen.push.inventory import Target
    from fabricgen.verify import report
    from fabricgen.verify.collect import Observation
    from fabricgen.verify.drift import check_drift
    from fabricgen.verify.plan import Plan

    target = Target("sw1", "leaf", "backend", nos, "127.0.0.1", "mock", Path("configs/sw1"), ())
    plan = Plan([target], {}, [], {}, {}, {}, {}, {}, {"sw1": built})
    findings = check_drift(plan, {"sw1": Observation(target, reached=True, answers={"get_config": running})}, secrets or Secrets())
    assert findings, "the test needs a drift to print"
    result = report.Verification("build", findings, [], [], 0.0)
    return "\n".join([report.render_json(result), report.render_markdown(result), *report.plain_lines(result)])


def test_drift_never_prints_the_ntp_key_nxos_or_sonic():
    # NX-OS shows the key encrypted, type 7 after it: `ntp authentication-key 1 md5 <encrypted> 7`
    built = "ntp authentication-key 1 md5 <<secret=ntp-key>> 0\nntp trusted-key 1\nntp authenticate\n"
    running = "ntp authentication-key 1 md5 swqWxyzEnc9 7\nntp trusted-key 1\nntp authenticate\nntp server 10.0.0.9 use-vrf management\n"
    shown = _drift_output("nxos", built, running)
    assert "swqWxyzEnc9" not in shown
    assert "+ntp server 10.0.0.9 use-vrf management" in shown and "ntp authentication-key" not in shown  # the key line is the same once masked

    from fabricgen.nos.sonic.verify import sonic_config_text

    db = {"NTP": {"global": {"authentication": "enabled"}}, "NTP_KEY": {"1": {"type": "md5", "value": "<<secret=ntp-key>>", "trusted": "yes"}}}
    device = {"NTP": {"global": {"authentication": "enabled", "vrf": "mgmt"}}, "NTP_KEY": {"1": {"type": "md5", "value": "ntpClearKey42", "trusted": "yes"}}}
    frr = "router bgp 65001\n neighbor SPINE password <<secret=bgp-backend>>\n"
    running = f"! config_db (show runningconfiguration all)\n{json.dumps(device)}\n! frr (vtysh)\nrouter bgp 65001\n neighbor SPINE password frrClearKey7\n neighbor 10.0.0.1 password otherClearKey8\n"
    shown = _drift_output("sonic", sonic_config_text(json.dumps(db), frr), running)
    for value in ("ntpClearKey42", "frrClearKey7", "otherClearKey8"):
        assert value not in shown, value
    assert '"vrf": "mgmt"' in shown  # the drift itself is shown


def test_drift_masks_by_slot_not_by_words():
    """A description that says `secret` or `key` is no secret: it is shown; a community is one
    wherever it stands, known to --secrets or not."""
    built = "interface Ethernet1/1\n  description to secret lab\n"
    running = "interface Ethernet1/1\n  description to key lab\nsnmp-server community hunterTwo group network-operator\n"
    shown = _drift_output("nxos", built, running)
    assert "description to key lab" in shown and "description to secret lab" in shown
    assert "hunterTwo" not in shown and "snmp-server community <<masked>> group network-operator" in shown


# --- secrets render deletes only what it wrote ------------------------------------------------------


def test_render_refuses_a_marker_it_did_not_write_and_deletes_nothing(tmp_path: Path, planted: Path):
    env = _environment(None)
    target = tmp_path / "handed-over"
    (target / "configs").mkdir(parents=True)
    keep = target / "configs" / "be-spine01.cfg"
    keep.write_text("my own notes\n")
    other = target / "configs" / "notes.cfg"
    other.write_text("more of mine\n")
    # a marker in fabricgen's words, listing files fabricgen never wrote there
    (target / ".fabricgen-secrets-render").write_text(
        json.dumps({"written_by": "fabricgen secrets render", "files": ["configs/be-spine01.cfg", "configs/notes.cfg"]})
    )
    result = _run("secrets", "render", str(planted), "--out", str(target), "--devices", "be-spine02", env=env)
    assert result.returncode == 2, result.stderr
    assert "not written by `fabricgen secrets render`" in result.stderr
    assert keep.read_text() == "my own notes\n" and other.read_text() == "more of mine\n"
    assert sorted(p.name for p in (target / "configs").iterdir()) == ["be-spine01.cfg", "notes.cfg"]

    # a real render, then a file of it changed by hand: kept, and the next render refuses
    out = tmp_path / "rendered"
    assert _run("secrets", "render", str(planted), "--out", str(out), "--devices", "spine", env=env).returncode == 0
    edited = out / "configs" / "be-spine01.cfg"
    edited.write_text("edited by hand\n")
    again = _run("secrets", "render", str(planted), "--out", str(out), "--devices", "be-spine02", env=env)
    assert again.returncode == 2 and "configs/be-spine01.cfg" in again.stderr, again.stderr
    assert edited.read_text() == "edited by hand\n"


# --- values checked against the field they go into, before anything is written or contacted ---------

SONIC_INTENT = Path(__file__).parent / "golden" / "tiny-sonic.yaml"
SONIC_VALUES = {
    "bgp-backend": "bgpKey123",
    "ntp-key": "ntpKey123",
    "tacacs-key": "tacacsKey123",
    "snmp-auth-key": "snmpAuth123",
    "snmp-priv-key": "snmpPriv123",
}


@pytest.fixture(scope="module")
def sonic_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny-sonic on 202511, the first release whose NTP_KEY loads (so every SONiC slot is there)."""
    directory = tmp_path_factory.mktemp("sonic-values")
    intent = directory / "tiny-sonic-202511.yaml"
    intent.write_text(SONIC_INTENT.read_text().replace("{nos: sonic}", '{nos: sonic, nos_release: "202511"}'))
    assert intent.read_text().count('"202511"') == 2
    result = _run("build", str(intent), "-o", str(directory / "build"), "-q", env=_environment(None, {}))
    assert result.returncode == 0, result.stderr
    return directory / "build"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("snmp-auth-key", "snmp:Auth123", "':'"),
        ("snmp-priv-key", "snmpPriv@123", "'@'"),
        ("snmp-auth-key", "short", "at least 8"),
        ("tacacs-key", "tacacs#Key", "'#'"),
        ("tacacs-key", "tacacs,Key", "','"),
        ("ntp-key", "n" * 70, "at most 64"),
    ],
)
def test_values_a_sonic_field_refuses_are_refused_before_writing(tmp_path: Path, sonic_build: Path, name: str, value: str, expected: str):
    env = _environment(None, dict(SONIC_VALUES, **{name: value}))
    listed = _run("secrets", "list", str(sonic_build), env=env)
    assert listed.returncode == 2, listed.stdout + listed.stderr
    assert f"secret {name!r}" in listed.stderr and expected in listed.stderr and "SONiC" in listed.stderr
    assert value not in listed.stdout + listed.stderr
    out = tmp_path / "out"
    rendered = _run("secrets", "render", str(sonic_build), "--out", str(out), env=env)
    assert rendered.returncode == 2 and f"secret {name!r}" in rendered.stderr and expected in rendered.stderr
    assert not out.exists() and value not in rendered.stdout + rendered.stderr

    from fabricgen.basics.errors import PushError
    from fabricgen.push.candidate import read_secrets
    from fabricgen.push.inventory import read_targets

    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("defaults: {host: 127.0.0.1, driver: mock}\n")  # never contacted: read_secrets refuses first
    targets = read_targets(sonic_build, inventory_file=inventory)  # push's own reading of the build
    with pytest.raises(PushError) as refused:
        read_secrets(targets, None, env)
    assert f"secret {name!r}" in refused.value.report() and value not in refused.value.report()


def test_valid_sonic_values_are_listed_and_rendered(tmp_path: Path, sonic_build: Path):
    env = _environment(None, SONIC_VALUES)
    assert _run("secrets", "list", str(sonic_build), env=env).returncode == 0
    out = tmp_path / "out"
    assert _run("secrets", "render", str(sonic_build), "--out", str(out), env=env).returncode == 0
    db = json.loads((out / "configs" / "be-spine01" / "config_db.json").read_text())
    assert db["SNMP_USER"]["nms-poller"]["SNMP_USER_AUTH_PASSWORD"] == "snmpAuth123"


# --- the slots: every placeholder stands in one, and each slot's rules are its field's ---------------


def _every_shipped_build(tmp_path: Path):
    from tests.test_render_eos import eos_variant
    from tests.test_sonic_security import _sonic_variant

    intents = [*sorted(INTENTS.glob("*.yaml")), *sorted((Path(__file__).parent / "golden").glob("*.yaml"))]
    intents += [_sonic_variant(tmp_path, gpus) for gpus in (256, 512)]
    intents += [eos_variant(tmp_path, gpus) for gpus in (256, 512)]

    def every_slot(doc):  # RADIUS and an SNMPv2c community, which no shipped intent asks for
        doc["management"]["radius"] = {"servers": ["10.250.0.61"], "key": "radius-key"}
        doc["management"]["snmp"]["communities"] = ["snmp-community"]
        doc["name"] += "-every-slot"

    (tmp_path / "every-slot").mkdir()
    intents.append(_sonic_variant(tmp_path / "every-slot", 256, every_slot))
    (tmp_path / "every-slot-eos").mkdir()
    intents.append(eos_variant(tmp_path / "every-slot-eos", 256, every_slot))
    nxos = yaml.safe_load(INTENT.read_text())
    every_slot(nxos)
    (tmp_path / "nxos-every-slot.yaml").write_text(yaml.safe_dump(nxos))
    intents.append(tmp_path / "nxos-every-slot.yaml")
    for intent in intents:
        yield intent.name, compile_intent(intent)


def test_every_placeholder_of_every_shipped_intent_stands_in_a_declared_slot(tmp_path: Path):
    from fabricgen.build.secrets import file_nos, placements

    counted: dict[str, int] = {}
    for intent, build in _every_shipped_build(tmp_path):
        for path, content in build.files.items():
            text = content.decode() if isinstance(content, bytes) else content
            if not PLACEHOLDER_PATTERN.search(text):
                continue
            assert file_nos(path) is not None, (intent, path)
            found, stray = placements(path, text)
            assert stray == [], (intent, path, stray)
            assert len(found) == text.count("<<secret="), (intent, path)
            for placement in found:
                assert placement.slot.placed
                counted[f"{placement.slot.nos} {placement.slot.use}"] = counted.get(f"{placement.slot.nos} {placement.slot.use}", 0) + 1
                # the placeholder itself fits the field on every release (YANG-checked as built)
                assert placement.slot.strictest().problem(f"<<secret={placement.name}>>") is None, (intent, path, placement)
    placed = {f"{slot.nos} {slot.use}" for slot in SLOTS if slot.placed}
    assert placed <= set(counted), placed - set(counted)  # each slot fabricgen writes is exercised


def test_each_slot_takes_its_dummy_and_refuses_what_its_field_refuses():
    for slot in SLOTS:
        for release in (None, "202405", "202511", "master", "10.4"):
            assert slot.rule(release).problem(slot.dummy) is None, (slot.where, release)
            assert slot.rule(release).problem(slot.dummy_for("bgp-backend")) is None, (slot.where, release)
    tacacs = sonic_slot("TACPLUS", "passkey")
    assert tacacs.rule("202505").max_length == 65 and tacacs.rule("202511").max_length == 256 and tacacs.rule("master").max_length == 256
    assert tacacs.rule("4.4").max_length == 65  # a vendor's release: the strictest
    assert "holds ':'" in sonic_slot("SNMP_USER", "SNMP_USER_AUTH_PASSWORD").rule("master").problem("a:bcdefgh")
    files = {
        "configs/x.cfg": "ntp authentication-key 1 md5 <<secret=ntp-key>> 0\n",
        "configs/y/config_db.json": json.dumps({"SNMP_COMMUNITY": {"<<secret=c>>": {"TYPE": "RO"}}}),
    }
    dummies = dummy_secrets(files)
    assert set(dummies.values) == {"ntp-key", "c"} and "<<secret" not in dummies.fill(files["configs/x.cfg"])


def test_masking_is_the_slots_on_both_sides():
    built = "snmp-server user nms network-operator auth sha <<secret=a>> priv aes-128 <<secret=p>>\n    password 0 <<secret=b>>\n"
    device = "snmp-server user nms network-operator auth sha 0x1f2e priv aes-128 0x3d4c localizedkey\n    password 3 9a8b7c\n"
    assert (
        mask_text(built, "nxos")
        == mask_text(device, "nxos")
        == ("snmp-server user nms network-operator auth sha <<masked>> priv aes-128 <<masked>>\n    password <<masked>>\n")
    )
    db = {
        "SNMP_COMMUNITY": {"public1": {"TYPE": "RO"}},
        "LDAP": {"global": {"bind_password": "x", "port": "389"}},
        "NTP_KEY": {"1": {"value": "k", "type": "md5"}},
    }
    assert mask_config_db(db) == {
        "SNMP_COMMUNITY": {"<<masked>>": {"TYPE": "RO"}},
        "LDAP": {"global": {"bind_password": "<<masked>>", "port": "389"}},
        "NTP_KEY": {"1": {"value": "<<masked>>", "type": "md5"}},
    }


def test_a_long_secret_name_cannot_stand_as_a_sonic_snmp_community(tmp_path: Path):
    from fabricgen.basics.errors import CheckError
    from tests.test_sonic_security import _sonic_variant

    def edit(doc):
        doc["management"]["snmp"]["communities"] = ["a-community-secret-name-too-long"]

    with pytest.raises(CheckError) as refused:
        compile_intent(_sonic_variant(tmp_path, 256, edit))
    assert "management.snmp.communities" in str(refused.value) and "at most 21 characters" in str(refused.value)


@pytest.mark.parametrize("kind", ["missing", "directory", "world-readable"])
def test_a_secrets_file_that_cannot_be_used_is_the_problem_s_file(tmp_path, kind):
    """Found by the paths fuzz campaign: the file was named only inside the message, so `--json`
    and `--format github` had no file to point at."""
    path = tmp_path / "secrets.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "world-readable":
        path.write_text("bgp-backend: x\n")
        path.chmod(0o644)
    with pytest.raises(SecretsError) as caught:
        load_secrets({"bgp-backend"}, path, environ={})
    (problem,) = caught.value.problems
    assert problem.file == str(path) and "the secrets file" in problem.message
