"""The intent's JSON Schema: committed and current, valid draft 2020-12, accepting every shipped
intent and refusing what the loader refuses, with a description on every field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from fabricgen.basics.trust import check_host, check_hostname, check_pid, check_text
from fabricgen.basics.units import parse_ratio, parse_speed
from fabricgen.basics.yaml_source import load_yaml
from fabricgen.build.secrets import check_secret_name
from fabricgen.cli import app
from fabricgen.intent.schema import DRAFT, intent_schema, schema_file, schema_text
from tests.conftest import REPO

runner = CliRunner()
COMMITTED = REPO / "schema" / "intent.schema.json"
REGENERATE = ".venv/bin/fabricgen schema -o schema/intent.schema.json"
SHIPPED_INTENTS = sorted([*REPO.glob("intents/*.yaml"), *REPO.glob("bench/intents/*.yaml"), *REPO.glob("tests/golden/*.yaml")])


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(COMMITTED.read_text())
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def as_json(path: Path) -> object:
    """The intent as fabricgen's loader reads it, as JSON sees it (mapping keys are text, as in
    an editor: `400G:` and `400:` alike)."""
    doc, problems = load_yaml(path)
    assert not problems, problems
    return json.loads(json.dumps(doc.data))


def schema_errors(validator, path: Path) -> list[str]:
    """Every error as "field.path: message", the alternatives of an anyOf (a section that may be
    null) included: an editor shows the one under the cursor."""
    found = []
    pending = list(validator.iter_errors(as_json(path)))
    while pending:
        error = pending.pop()
        found.append(f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:200]}")
        pending += error.context or []
    return found


def test_committed_schema_is_the_one_the_models_give():
    committed = COMMITTED.read_text(encoding="utf-8")
    assert committed == schema_text(), f"{COMMITTED.relative_to(REPO)} differs from the intent models' schema; regenerate it with `{REGENERATE}` and commit it"


def test_schema_is_valid_draft_2020_12():
    schema = intent_schema()
    assert schema["$schema"] == DRAFT
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema_file() == COMMITTED


@pytest.mark.parametrize("path", SHIPPED_INTENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_intent_is_valid_and_points_at_the_schema(validator, path):
    assert schema_errors(validator, path) == []
    modeline = path.read_text().splitlines()[0]
    assert modeline.startswith("# yaml-language-server: $schema=")
    assert (path.parent / modeline.split("$schema=", 1)[1]).resolve() == COMMITTED


def test_schema_has_no_leftovers_of_the_model_only_view():
    """What the issue found: `name` required (the loader takes the file name), the frontend's
    `asn` and `pools` required (they have defaults), and generated titles on every field."""
    schema = intent_schema()
    assert "name" not in schema.get("required", [])
    for fabric in ("Frontend", "StorageFabric"):
        assert "required" not in schema["$defs"][fabric]
        assert schema["$defs"][fabric]["properties"]["asn"]["default"]["spine"] in (65000, 65200)
    for model in schema["$defs"].values():
        assert all("title" not in field for field in model.get("properties", {}).values())


def test_every_field_and_section_has_a_description():
    schema = intent_schema()
    missing = [
        f"{name}.{key}"
        for name, model in [("Intent", schema), *schema["$defs"].items()]
        for key, field in model.get("properties", {}).items()
        if not field.get("description")
    ]
    missing += [f"{name} (the section)" for name, model in schema["$defs"].items() if not model.get("description")]
    assert missing == []


# Intents the loader refuses, each for one reason, and the field the schema must name for it.
BROKEN = {
    "a count written as text": ('gpus: "256"', "gpus"),
    "a boolean for a number": ("gpus: 256\nbackend: {mtu: true}", "backend.mtu"),
    "an unknown top-level key": ("gpus: 256\nspines: 4", "(top)"),
    "an unknown key deep down": ("gpus: 256\nbackend: {qos: {pfc_watchdog: {interval: 100}}}", "backend.qos.pfc_watchdog"),
    "no gpus and no nodes": ("gpu_node: DGX-H100", "(top)"),
    "both gpus and nodes": ("gpus: 16\nnodes: 2", "(top)"),
    "GPU count out of range": ("gpus: 0", "gpus"),
    "an MTU above jumbo": ("gpus: 256\nbackend: {mtu: 9500}", "backend.mtu"),
    "queue 0 as lossless priority": ("gpus: 256\nbackend: {qos: {lossless_priority: 0}}", "backend.qos.lossless_priority"),
    "an unknown routing": ("gpus: 256\nbackend: {routing: ospf}", "backend.routing"),
    "an unknown design": ("gpus: 256\nbackend: {design: fat-tree}", "backend.design"),
    "an unknown NOS": ("gpus: 256\nbackend: {leaf: {nos: junos}}", "backend.leaf.nos"),
    "a fabric name that is no hostname": ("name: my_fabric\ngpus: 256", "name"),
    "a naming pattern with an unknown field": ("gpus: 256\nnaming: {spine: 'sp{rack}'}", "naming.spine"),
    "a ratio without a colon": ('gpus: 256\nbackend: {ratio: "2"}', "backend.ratio"),
    "a speed without a unit": ("gpus: 256\nbackend: {uplinks: {speed: fast}}", "backend.uplinks.speed"),
    "a prefix length past 32": ("gpus: 256\nbackend: {pools: {loopbacks: 10.0.0.0/33}}", "backend.pools.loopbacks"),
    "a key value where its secret name goes": ('gpus: 256\nbackend: {bgp_security: {password: "S3cret Key!"}}', "backend.bgp_security.password"),
    "a reserved user name": (
        "gpus: 256\nmanagement: {users: [{name: root, password_hash: root-hash}]}",
        "management.users.0.name",
    ),
    "a tenant name too long for a VRF": ("gpus: 256\nbackend: {routing: vxlan-evpn, evpn: {tenants: [{name: research-team}]}}", "backend.evpn.tenants.0.name"),
    "a switch name key that is no hostname": ("gpus: 256\nbackend: {qos_overrides: {be_spine01: {cnp_priority: 6}}}", "backend.qos_overrides"),
    "a description starting with a space": ('description: " padded"\ngpus: 256', "description"),
    "a frontend pools section missing pools": ("gpus: 256\nfrontend: {pools: {loopbacks: 10.16.0.0/16}}", "frontend.pools"),
    "an NTP server that is no host": ("gpus: 256\nmanagement: {ntp: {servers: [10.0.0.300]}}", "management.ntp.servers.0"),
    "an EOS image pinned for NX-OS": ("gpus: 256\nmanagement: {boot: {nxos: EOS-4.32.2F.swi}}", "management.boot.nxos"),
    "a SONiC image name with a space": ('gpus: 256\nmanagement: {boot: {sonic: "SONiC OS"}}', "management.boot.sonic"),
    "a boot image for no NOS": ("gpus: 256\nmanagement: {boot: {junos: junos.tgz}}", "management.boot"),
}


@pytest.mark.parametrize("text, field", BROKEN.values(), ids=BROKEN.keys())
def test_schema_and_loader_refuse_the_same_broken_intent(validator, tmp_path, text, field):
    path = tmp_path / "broken.yaml"
    path.write_text(text + "\n")
    errors = schema_errors(validator, path)
    assert any(error.startswith(f"{field}:") for error in errors), errors
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:" in result.output and "Traceback" not in result.output
    if field != "(top)":  # the loader names the same field (lists as [i])
        assert re.sub(r"\.(\d+)", r"[\1]", field) in result.output, result.output


# Intents the loader accepts that a schema written from the models alone got wrong.
ACCEPTED = {
    "no name (the file's name)": "gpus: 64",
    "nodes instead of gpus": "nodes: 8",
    "a frontend of defaults": "gpus: 256\nfrontend: {}",
    "a frontend with only its leaves": "gpus: 256\nfrontend: {leaf: {model: N9K-C93600CD-GX, nos: nxos}}",
    "a separate storage fabric of defaults": "gpus: 256\nfrontend: {storage: separate}\nstorage: {}\nstorage_nodes: {model: AFF-A90, count: 4}",
    "speeds as text and as numbers": "gpus: 256\nbackend: {uplinks: {speed: 400GbE}}",
    "a speed as a bare number": "gpus: 256\nbackend: {uplinks: {speed: 400}}",
    "an unquoted ratio": "gpus: 256\nbackend: {ratio: 1:1}",
    "a fractional ratio": 'gpus: 256\nbackend: {ratio: "1.5:1"}',
    "ECN keyed by speed with and without unit": (
        "gpus: 256\nbackend:\n  qos:\n    ecn: {400G: {min_kbytes: 150, max_kbytes: 3000, drop_probability: 7}}\n    pfc_trigger_kbytes: {400: 5000}"
    ),
    "a netmask pool": "gpus: 256\nbackend: {pools: {loopbacks: 10.0.0.0/255.255.0.0}}",
    "DNS names and addresses for NTP": "gpus: 256\nmanagement: {ntp: {servers: [ntp.example.net, 192.0.2.1, '2001:db8::1']}}",
    "a boot image per NOS": "gpus: 256\nmanagement: {boot: {nxos: nxos64-cs.10.4.5.M.bin, sonic: SONiC-OS-202405.0, eos: EOS-4.32.2F.swi}}",
}


@pytest.mark.parametrize("text", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_schema_and_loader_accept_the_same_intent(validator, tmp_path, text):
    path = tmp_path / "accepted.yaml"
    path.write_text(text + "\n")
    assert schema_errors(validator, path) == []
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output


# Strings and what fabricgen's own checks say of them: the schema's patterns must agree.
STRINGS = {
    "hostname": (check_hostname, ["be-spine01", "a", "A" * 63], ["-x", "x-", "a_b", "A" * 64, "", "a.b"]),
    "pid": (check_pid, ["N9K-C9364D-GX2A", "QDD-400G-DR4-S", "CAB(1)+x/y"], ["-x", "a b", "x;y", ""]),
    "text": (check_text, ["", "Cisco's 512-GPU cluster", "é ü"], [" x", "x ", "a\x1bb", "a\u202eb", "x <<secret:k>>", "x" * 241]),
    "secret": (check_secret_name, ["bgp-backend", "k"], ["Bgp", "1key", "a key", "a_b"]),
    "host": (check_host, ["10.0.0.1", "ntp.example.net", "2001:db8::1", "ntp"], ["10.0.0.300", "1.2.3", "a..b", "x_y.net", "2001:db8::1%eth0"]),
    "speed": (parse_speed, ["400G", "400GbE", "100Gbps", "1000M", "800g"], ["400", "fast", "400 T", "G"]),
    "ratio": (parse_ratio, ["1:1", "2:1", "1:1.5", " 3 : 1 "], ["2", "1:", "a:b", "1:1:1"]),
}
SUBSCHEMA = {
    "hostname": ("name",),
    "pid": ("gpu_node",),
    "text": ("description",),
    "secret": ("$defs", "BgpSecurity", "properties", "password", "anyOf", 0),
    "host": ("$defs", "Management", "properties", "domain_name", "anyOf", 0),
    "speed": ("$defs", "Uplinks", "properties", "speed", "anyOf", 0),
    "ratio": ("$defs", "Backend", "properties", "ratio"),
}


@pytest.mark.parametrize("kind", STRINGS)
def test_schema_patterns_agree_with_the_checks(kind):
    check, good, bad = STRINGS[kind]
    schema = intent_schema()
    node = schema["properties"] if SUBSCHEMA[kind][0] != "$defs" else schema
    for part in SUBSCHEMA[kind]:
        node = node[part]
    node = {key: value for key, value in node.items() if key not in ("default", "description")}
    checker = jsonschema.Draft202012Validator(node, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for value in good:
        check(value)
        assert checker.is_valid(value), f"{kind}: the schema refuses {value!r}, which fabricgen takes"
    for value in bad:
        with pytest.raises(ValueError):
            check(value)
        assert not checker.is_valid(value), f"{kind}: the schema takes {value!r}, which fabricgen refuses"


def test_schema_command_prints_writes_and_locates_the_schema(tmp_path):
    printed = runner.invoke(app, ["schema"])
    assert printed.exit_code == 0 and printed.output == COMMITTED.read_text()
    target = tmp_path / "intent.schema.json"
    assert runner.invoke(app, ["schema", "-o", str(target)]).exit_code == 0
    assert target.read_bytes() == COMMITTED.read_bytes()
    located = runner.invoke(app, ["schema", "--path"])
    assert located.exit_code == 0 and Path(located.output.strip()) == COMMITTED


def test_schema_command_refuses_an_unwritable_file(tmp_path):
    # a missing directory is created (cli.common.write_report); a file where it would be is not
    (tmp_path / "file").write_text("")
    result = runner.invoke(app, ["schema", "-o", str(tmp_path / "file" / "missing" / "intent.schema.json")])
    assert result.exit_code == 2 and f"--output: '{tmp_path / 'file'}' is not a directory" in result.output and "Traceback" not in result.output


def test_description_paragraphs_are_unwrapped():
    """Docstrings wrapped in the source read as paragraphs in an editor's hover."""
    text = intent_schema()["$defs"]["LoadBalancing"]["description"]
    assert "\n\n" in text and "\n" not in text.replace("\n\n", "")


@pytest.mark.parametrize(
    "nos, image, example",
    [("nxos", "nxos64-cs.10.4.5.M.img", "nxos64-cs.10.4.5.M.bin"), ("eos", "EOS-4.32.2F.bin", "EOS-4.32.2F.swi"), ("sonic", "SONiC/OS", "SONiC-OS-202405.0")],
)
def test_a_boot_image_of_another_form_is_refused_with_an_image_of_its_nos(tmp_path, nos, image, example):
    # each NOS package says what its image names look like (BOOT_IMAGE); the problem shows one
    path = tmp_path / "boot.yaml"
    path.write_text(f'gpus: 256\nmanagement:\n  boot: {{{nos}: "{image}"}}\n')
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert f":3: management.boot.{nos}: '{image}' is not an image name like {example}" in result.output, result.output
