"""`fabricgen init`: a commented intent that builds, from options or answers on a terminal; bad
combinations refused with the option to change and nothing written."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabricgen.basics.trust import HOSTNAME, PID
from fabricgen.basics.yaml_source import load_yaml, parse_yaml
from fabricgen.catalog import load_catalog
from fabricgen.cli import app
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.intent.template import schema_reference, switch_choices
from tests.conftest import REPO

runner = CliRunner()
SCHEMA = REPO / "schema" / "intent.schema.json"
# An example in the written intent is a key commented out at its place: '#' then the key, or '#'
# then the indentation of a key under the section above; a prose comment is '# ' and a word.
EXAMPLE_LINE = re.compile(r"^#(?=\S|  )")


def init(*args: str, input: str | None = None):
    return runner.invoke(app, ["init", *args], input=input)


def data_of(path: Path) -> dict:
    doc, problems = load_yaml(path)
    assert not problems, problems
    return doc.data


def test_gpus_alone_writes_an_intent_that_builds(tmp_path, monkeypatch):
    """The acceptance run: fabricgen init --gpus 512 -o x.yaml && fabricgen build x.yaml."""
    monkeypatch.chdir(tmp_path)
    result = init("--gpus", "512", "-o", "x.yaml")
    assert result.exit_code == 0, result.output
    assert "next: fabricgen build x.yaml" in result.output
    built = runner.invoke(app, ["build", "x.yaml", "--quiet"])
    assert built.exit_code == 0, built.output
    manifest = json.loads((tmp_path / "output" / "x" / "manifest.json").read_text())
    assert "configs/be-su02-leaf8.cfg" in manifest["files"]  # 64 DGX-H100 nodes: 2 units of 8 rails
    data = data_of(tmp_path / "x.yaml")
    assert data == {
        "name": "x",
        "gpus": 512,
        "gpu_node": "DGX-H100",
        "backend": {
            "design": "rail-optimized",
            "ratio": "1:1",
            "routing": "ebgp",
            "leaf": {"model": "N9K-C9364D-GX2A", "nos": "nxos"},
            "spine": {"model": "N9K-C9364D-GX2A", "nos": "nxos"},
        },
    }


STARTERS = {
    "32 GPUs, NX-OS, eBGP": ["--gpus", "32"],
    "64 GPUs top-of-rack on SONiC": ["--gpus", "64", "--design", "top-of-rack", "--nos", "sonic"],
    "256 DGX-B200 GPUs, VXLAN EVPN": ["--gpus", "256", "--gpu-node", "DGX-B200", "--routing", "vxlan-evpn"],
    "1024 GPUs rail-only": ["--gpus", "1024", "--design", "rail-only"],
    "128 GPUs, SONiC EVPN on master": ["--gpus", "128", "--nos", "sonic", "--routing", "vxlan-evpn", "--nos-release", "master"],
    "512 GPUs, 800G spines": ["--gpus", "512", "--spine", "N9364E-SG2-O", "--name", "mixed"],
}


@pytest.mark.parametrize("args", STARTERS.values(), ids=STARTERS.keys())
def test_starters_build_and_say_what_was_asked(tmp_path, args):
    path = tmp_path / "fabric.yaml"
    result = init(*args, "-o", str(path), "--no-interactive")
    assert result.exit_code == 0, result.output
    build = compile_intent(path)
    options = dict(zip(args[::2], args[1::2], strict=True))
    intent = build.loaded.intent
    assert intent.gpus == int(options["--gpus"])
    assert intent.name == options.get("--name", "fabric")
    assert intent.gpu_node == options.get("--gpu-node", "DGX-H100")
    assert intent.backend.design == options.get("--design", "rail-optimized")
    assert intent.backend.routing == options.get("--routing", "ebgp")
    nos = options.get("--nos", "nxos")
    assert {intent.backend.leaf.nos, intent.backend.spine.nos} == {nos}
    assert (
        intent.backend.leaf.model == {"nxos": "N9K-C9364D-GX2A", "sonic": "DCS-7060X6-64PE"}[nos]
    )  # the default switch per NOS, written here, not asked of the code under test
    assert intent.backend.spine.model == options.get("--spine", intent.backend.leaf.model)
    assert intent.backend.leaf.nos_release == options.get("--nos-release")
    assert {device.nos for device in build.fabric.devices.values() if device.network.value == "backend" and device.nos} == {nos}
    assert any(path.endswith((".cfg", "config_db.json")) for path in build.files)


@pytest.mark.parametrize("args", [STARTERS["32 GPUs, NX-OS, eBGP"], STARTERS["64 GPUs top-of-rack on SONiC"]], ids=["nxos", "sonic"])
def test_every_commented_example_builds_when_used(tmp_path, args):
    """Deleting the '#' of every example gives an intent that builds, with the networks and
    settings the examples name."""
    path = tmp_path / "fabric.yaml"
    assert init(*args, "-o", str(path)).exit_code == 0
    lines = path.read_text().splitlines()
    examples = [line for line in lines if EXAMPLE_LINE.match(line)]
    assert any(line.startswith("#frontend:") for line in examples) and any(line.startswith("#oob:") for line in examples)
    used = tmp_path / "used.yaml"
    used.write_text("\n".join(line[1:] if EXAMPLE_LINE.match(line) else line for line in lines) + "\n")
    build = compile_intent(used)
    intent = build.loaded.intent
    assert intent.frontend is not None and intent.oob is not None and intent.management is not None and intent.layout is not None
    assert intent.backend.bgp_security.password == "bgp-backend"
    assert {"frontend", "oob"} <= {device.network.value for device in build.fabric.devices.values()}


def test_written_intent_carries_the_modeline_and_passes_the_schema(tmp_path):
    path = tmp_path / "deep" / "er" / "fabric.yaml"
    path.parent.mkdir(parents=True)
    assert init("--gpus", "64", "--routing", "vxlan-evpn", "-o", str(path)).exit_code == 0
    first = path.read_text().splitlines()[0]
    match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert match, first
    # outside a repository: a copy beside the intent (tests/test_init_modeline.py has the rest)
    assert match.group(1) == ".fabricgen/intent.schema.json" and (path.parent / match.group(1)).read_bytes() == SCHEMA.read_bytes()
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(data_of(path))))


def test_schema_reference_falls_back_to_a_uri_where_a_path_would_break_the_modeline(tmp_path):
    # yaml-language-server reads the modeline's path up to the first white space
    schema = tmp_path / "my schemas" / "intent.schema.json"
    schema.parent.mkdir()
    schema.write_bytes(SCHEMA.read_bytes())
    for intent in (tmp_path / "a.yaml", tmp_path / "intents" / "a.yaml"):
        reference = schema_reference(intent, schema)
        assert reference == schema.resolve().as_uri() and reference.startswith("file:///") and " " not in reference
    assert schema_reference(tmp_path / "my intents" / "a.yaml", SCHEMA) == os.path.relpath(SCHEMA, tmp_path / "my intents")


def test_same_options_give_the_same_bytes(tmp_path):
    for directory in ("a", "b"):
        (tmp_path / directory).mkdir()
        assert init("--gpus", "256", "-o", str(tmp_path / directory / "same.yaml")).exit_code == 0
    assert (tmp_path / "a" / "same.yaml").read_bytes() == (tmp_path / "b" / "same.yaml").read_bytes()


def test_name_comes_from_the_file_unless_it_cannot(tmp_path):
    assert init("--gpus", "16", "-o", str(tmp_path / "lab-a.yaml")).exit_code == 0
    assert data_of(tmp_path / "lab-a.yaml")["name"] == "lab-a"
    assert init("--gpus", "16", "-o", str(tmp_path / "lab_b.yaml")).exit_code == 0
    assert data_of(tmp_path / "lab_b.yaml")["name"] == "cluster-16-gpu"


def test_existing_file_is_kept_unless_forced(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("gpus: 8\n")
    refused = init("--gpus", "16", "-o", str(path))
    assert refused.exit_code == 2 and "already exists" in refused.output and "--force" in refused.output
    assert path.read_text() == "gpus: 8\n"
    forced = init("--gpus", "16", "-o", str(path), "--force")
    assert forced.exit_code == 0, forced.output
    assert data_of(path)["gpus"] == 16
    assert sorted(p.name for p in tmp_path.iterdir()) == [".fabricgen", "x.yaml"]  # no staging file left
    assert [p.name for p in (tmp_path / ".fabricgen").iterdir()] == ["intent.schema.json"]  # the modeline's schema


REFUSED = {
    "GPUs that fill no whole node": (["--gpus", "100"], "--gpus 100 is not a whole number of DGX-H100 nodes", "use --gpus 96 or 104"),
    "a leaf that does not run SONiC": (
        ["--gpus", "64", "--nos", "sonic", "--leaf", "N9K-C93108TC-FX3"],
        "--leaf N9K-C93108TC-FX3 does not run sonic",
        "--nos nxos",
    ),
    "a leaf without ports for the NICs": (
        ["--gpus", "16", "--leaf", "N9K-C93108TC-FX3"],
        "--leaf (backend.leaf.model): N9K-C93108TC-FX3 has no 400G ports",
        "pick a leaf model",
    ),
    "SONiC EVPN on a release without it": (
        ["--gpus", "64", "--nos", "sonic", "--routing", "vxlan-evpn"],
        "--nos-release (backend.leaf.nos_release)",
        "nos_release: master",
    ),
    "an unknown GPU node": (["--gpus", "64", "--gpu-node", "DGX-Z9"], "--gpu-node 'DGX-Z9' is not a GPU node model", "DGX-H100"),
    "a switch as GPU node": (["--gpus", "64", "--gpu-node", "AFF-A90"], "--gpu-node 'AFF-A90' is not a GPU node model", "DGX-B200"),
    "an unknown spine": (["--gpus", "64", "--spine", "WS-C6509"], "--spine 'WS-C6509' is not a switch model", "N9K-C9364D-GX2A"),
    "a leaf PID in the wrong case": (
        ["--gpus", "64", "--leaf", "n9k-c9364d-gx2a"],
        "--leaf 'n9k-c9364d-gx2a' is not a switch model",
        "did you mean 'N9K-C9364D-GX2A'? PIDs are case-sensitive",
    ),
    "a bad fabric name": (["--gpus", "64", "--name", "my_lab"], "--name 'my_lab' is not a valid fabric name", "letters, digits"),
    "a bad release name": (
        ["--gpus", "64", "--nos-release", "latest"],
        "--nos-release 'latest' is not a release name",
        "the NX-OS releases fabricgen knows: 10.3, 10.4, 10.5, 10.6",
    ),
    "no GPU count off a terminal": (["--no-interactive"], "how many GPUs?", "give --gpus N"),
}


@pytest.mark.parametrize("args, message, hint", REFUSED.values(), ids=REFUSED.keys())
def test_bad_combinations_are_refused_and_nothing_is_written(tmp_path, args, message, hint):
    path = tmp_path / "x.yaml"
    result = init(*args, "-o", str(path))
    assert result.exit_code == 2, result.output
    assert message in result.output and hint in result.output, result.output
    assert "Traceback" not in result.output and result.output.startswith("init: ")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_no_intent_file(tmp_path):
    result = init("--gpus", "16", "-o", str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.output


def test_off_a_terminal_nothing_is_asked():
    # CliRunner's stdin is no terminal: the answers below are never read
    result = runner.invoke(app, ["init"], input="64\n")
    assert result.exit_code == 2 and "how many GPUs?" in result.output and "GPUs [256]" not in result.output


def test_interactive_defaults_are_the_options_defaults(tmp_path):
    path = tmp_path / "asked.yaml"
    result = init("--interactive", input="\n" * 8 + f"{path}\n")
    assert result.exit_code == 0, result.output
    assert "GPUs [256]: " in result.output
    models = (
        "AS-4126GS-NMR-LCC, AS-8125GS-TNMR2, AS-8126GS-TNMR, DGX-B200, DGX-B300, DGX-H100, DGX-H200, GB200-NVL72-TRAY, GB300-NVL72-TRAY, UCSC-C885A-M8, XE9680L"
    )
    assert f"GPU node model ({models}) [DGX-H100]: " in result.output
    assert "Write to [cluster-256-gpu.yaml]: " in result.output
    data = data_of(path)
    assert data["name"] == "cluster-256-gpu" and data["gpus"] == 256 and data["backend"]["leaf"] == {"model": "N9K-C9364D-GX2A", "nos": "nxos"}


def test_interactive_answers_with_a_wrong_one_asked_again(tmp_path):
    path = tmp_path / "lab.yaml"
    sonic_models = ", ".join(switch_choices(load_catalog(), "sonic"))
    answers = [
        "sixty-four",
        "\u00b2",  # a superscript two: str.isdigit() says yes, int() refuses it
        "9" * 5000,  # int() refuses this many digits too
        "300000",  # above the intent's bound
        "64",  # GPUs: not a whole number from 1 to 262,144, asked again
        "DGX-H200",  # GPU node
        "top-of-rack",  # design
        "junos",
        "sonic",  # NOS: not a choice, asked again
        "",  # leaf: the default for SONiC
        "N9364E-SG2-O",  # spine
        "ebgp",  # routing
        "tor-lab",  # name
    ]
    result = init("--interactive", "-o", str(path), input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("is not a whole number from 1 to 262,144") == 4 and "choose one of eos, nxos, sonic" in result.output
    assert f"Leaf switch model ({sonic_models}) [DCS-7060X6-64PE]: " in result.output
    assert "Write to" not in result.output  # -o given: not asked
    data = data_of(path)
    assert (data["name"], data["gpus"], data["gpu_node"], data["backend"]["design"]) == ("tor-lab", 64, "DGX-H200", "top-of-rack")
    assert data["backend"]["leaf"] == {"model": "DCS-7060X6-64PE", "nos": "sonic"}
    assert data["backend"]["spine"] == {"model": "N9364E-SG2-O", "nos": "sonic"}
    compile_intent(path, render=False)


def test_options_given_are_not_asked(tmp_path):
    path = tmp_path / "partly.yaml"
    result = init("--interactive", "--gpus", "32", "--nos", "nxos", "--design", "rail-optimized", "-o", str(path), input="\n" * 5)
    assert result.exit_code == 0, result.output
    assert "GPUs [" not in result.output and "Switch NOS" not in result.output and "Backend design" not in result.output
    assert data_of(path)["gpus"] == 32


def test_on_a_terminal_init_asks(tmp_path):
    """The real thing: no options, standard input a pseudo-terminal."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "fabricgen", "init"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=tmp_path,
        close_fds=True,
        env={**os.environ, "TERM": "dumb"},
    )
    os.close(terminal)
    os.write(controller, b"16\n\n\n\n\n\n\nptylab\n\n")
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    os.close(controller)
    text = seen.decode(errors="replace")
    assert process.returncode == 0, text
    assert "GPUs [256]:" in text and "Fabric name [cluster-16-gpu]:" in text
    assert data_of(tmp_path / "ptylab.yaml")["name"] == "ptylab"


def test_the_gpu_bound_is_the_intents():
    """`init --gpus` and the prompt refuse above intent.model.MAX_GPUS without importing the model first."""
    from fabricgen.cli.init import MAX_GPUS as INIT_MAX
    from fabricgen.intent.model import MAX_GPUS

    assert INIT_MAX == MAX_GPUS
    result = init("--gpus", str(MAX_GPUS + 1), "--no-interactive")
    assert result.exit_code == 2 and "262144" in result.output


# Names the fabric-name rule (trust.HOSTNAME) accepts that YAML reads as something other than a
# string when written bare: booleans and null (YAML 1.1 and 1.2), integers in every base, floats
# and dates. `init` must write each so that it reads back as the name that was asked for.
YAML_LOOKALIKES = ["on", "yes", "null", "1234", "1e3", "0x10", "012", "true", "False", "NO", "Off", "Null", "y", "0b101", "0o17", "2024-01-01", "1-2", "inf"]


@pytest.mark.parametrize("name", ["on", "yes", "null", "1234", "1e3", "0x10", "012", "true", "False"])
def test_a_name_yaml_would_read_as_another_type_is_written_so_it_reads_back(tmp_path, name):
    """init used to write `name: on`, then refuse its own intent (`name` is True, not a string)."""
    result = init("--gpus", "32", "--name", name, "-o", str(tmp_path / "x.yaml"))
    assert result.exit_code == 0, result.output
    assert data_of(tmp_path / "x.yaml")["name"] == name
    by_file = init("--gpus", "32", "-o", str(tmp_path / f"{name}.yaml"))  # the name taken from the file's
    assert by_file.exit_code == 0, by_file.output
    assert data_of(tmp_path / f"{name}.yaml")["name"] == name


def _written(starter) -> dict:
    from fabricgen.intent.template import render_starter

    text = render_starter(starter, CATALOG, "intent.schema.json", "x.yaml")
    document, problems = parse_yaml(text.encode(), "x.yaml", "intent")  # as `fabricgen build` reads it
    assert not problems, problems
    return document.data


CATALOG = load_catalog()


@given(name=st.one_of(st.sampled_from(YAML_LOOKALIKES), st.from_regex(HOSTNAME, fullmatch=True)))
@settings(max_examples=300, deadline=None)
def test_every_name_the_name_rule_accepts_reads_back_as_written(name):
    from fabricgen.intent.template import Starter

    assert _written(Starter(gpus=32, name=name))["name"] == name


@given(pid=st.one_of(st.sampled_from(YAML_LOOKALIKES), st.from_regex(PID, fullmatch=True)))
@settings(max_examples=300, deadline=None)
def test_every_part_number_the_pid_rule_accepts_reads_back_as_written(pid):
    """Switch models are catalog PIDs, which a user's catalog may name as it likes."""
    from fabricgen.intent.template import Starter

    backend = _written(Starter(gpus=32, name="x", leaf=pid, spine=pid))["backend"]
    assert backend["leaf"]["model"] == pid and backend["spine"]["model"] == pid


def test_ordinary_names_are_written_bare():
    """Quoting only where YAML needs it: the common intent reads as before."""
    from fabricgen.intent.template import Starter, render_starter

    text = render_starter(Starter(gpus=32, name="lab-a"), CATALOG, "intent.schema.json", "x.yaml")
    assert "\nname: lab-a\n" in text and "\ngpu_node: DGX-H100\n" in text
    assert "  leaf: {model: N9K-C9364D-GX2A, nos: nxos}\n" in text


@pytest.mark.parametrize(("nos", "says"), [("eos", "Arista EOS configs"), ("nxos", "Cisco NX-OS configs"), ("sonic", "SONiC configs")])
def test_the_roles_comment_names_the_nos_chosen(tmp_path, monkeypatch, nos, says):
    """The comment above the switch roles said "Cisco NX-OS configs" for an EOS intent."""
    monkeypatch.chdir(tmp_path)
    assert init("--gpus", "64", "--nos", nos, "-o", "x.yaml").exit_code == 0
    text = (tmp_path / "x.yaml").read_text()
    assert f"their operating system: {says}" in text and text.count("Cisco NX-OS") == (nos == "nxos")
