"""Intents and catalogs are hostile until checked (issue 16): each test feeds the input a hostile
tester used and shows it is refused as a located problem (file, line, field; exit 2 from the
CLI; no traceback), in bounded time and memory, and that nothing it holds reaches a config."""

from __future__ import annotations

import dataclasses
import os
import tracemalloc

import pytest

from fabricgen.basics.errors import CatalogError, FabricgenError, IntentError
from fabricgen.basics.yaml_source import MAX_DEPTH, load_yaml
from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.intent import load_intent
from fabricgen.nos.nxos.render import render_nxos
from fabricgen.nos.nxos.text import nxos_text
from fabricgen.nos.sonic.render import render_sonic
from fabricgen.render.environment import frr_text
from tests import cli_runner
from tests.conftest import build_refused
from tests.test_user_hardware import HARDWARE, INTENT

INJECTED = "username evil password 0 evil role network-admin"


def refused(path, error=FabricgenError, **kwargs):
    """The problems load_intent raises for `path`; each must name its file and line."""
    with pytest.raises(error) as caught:
        load_intent(path, **kwargs)
    for problem in caught.value.problems:
        assert problem.file and problem.line, problem.format()
        assert "\n" not in problem.format() and "\x1b" not in problem.format()
    return caught.value.problems


def lab_intent(tmp_path, write_intent, hardware=HARDWARE, nos="nxos"):
    """The user-hardware lab fabric (64 GPUs on a user's own 32 x 100G switch), with `hardware`
    as its catalog file."""
    (tmp_path / "lab-hardware.yaml").write_text(hardware)
    return write_intent(INTENT.format(nos=nos), name=f"lab-{nos}")


# --- 1. config injection from a catalog or an intent -------------------------------------------


@pytest.mark.parametrize(
    "old, new, field",
    [
        (
            "description: Lab switch, 32 x 100G QSFP28",
            f'description: "Lab switch\\n{INJECTED}"',
            ("switches", "LAB-SW-32X100", "description"),
        ),
        ("vendor: Example", 'vendor: "Example\\nfeature telnet"', ("switches", "LAB-SW-32X100", "vendor")),
        (
            'nxos: {port: "Ethernet1/{port}"',
            'nxos: {port: "Ethernet1/{port}\\nfeature telnet"',
            ("switches", "LAB-SW-32X100", "interface_names", "nxos", "port"),
        ),
        (
            'sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}',
            'sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}\\nline vty\\n no login"}',
            ("switches", "LAB-SW-32X100", "interface_names", "sonic", "breakout"),
        ),
        (
            "    max_ecmp_paths: 64",
            '    max_ecmp_paths: 64\n    management_port: {nxos: "mgmt0\\nfeature telnet", sonic: eth0}',
            ("switches", "LAB-SW-32X100", "management_port", "nxos"),
        ),
        ("    max_ecmp_paths: 64", '    max_ecmp_paths: 64\n    console_port: "console\\nline vty"', ("switches", "LAB-SW-32X100", "console_port")),
        (
            "sonic: {platform: x86_64-example_lab32-r0",
            "sonic: {platform: 'x86_64-example_lab32-r0; reboot'",
            ("switches", "LAB-SW-32X100", "sonic", "platform"),
        ),
        ("hwsku: Example-Lab32-C128}", "hwsku: ../../etc/Example}", ("switches", "LAB-SW-32X100", "sonic", "hwsku")),
        ("  LAB-SW-32X100:", '  "LAB-SW-32X100\\nfeature telnet":', ("switches", "LAB-SW-32X100\nfeature telnet")),
        ("form_factor: QSFP28, lanes: 4", "form_factor: 'QSFP28 x', lanes: 4", ("switches", "LAB-SW-32X100", "port_groups", 0, "form_factor")),
        (
            "description: 100G QSFP28 breakout optic, 4 x 25G over MPO-12 SMF",
            'description: "optic\\e]0;owned\\a"',
            ("transceivers", "LAB-QSFP-4X25G", "description"),
        ),
        ("connector: MPO-12", "connector: 'MPO-12 $(reboot)'", ("transceivers", "LAB-QSFP-4X25G", "connector")),
        ("cable: CB-M12-M12-SMF", "cable: 'CB-M12\\nx'", ("transceivers", "LAB-QSFP-4X25G", "cable")),
        ('names: "ens{n}f0"', 'names: "ens{n}f0; ip link set dev ens1f0 down"', ("nodes", "LAB-GPU-4", "backend", "names")),
        ("form_factor: SFP28, names:", 'nic: "CX\\u202eevil", form_factor: SFP28, names:', ("nodes", "LAB-GPU-4", "backend", "nic")),
    ],
    ids=[
        "description",
        "vendor",
        "nxos-port-pattern",
        "sonic-breakout-pattern",
        "management-port",
        "console-port",
        "platform",
        "hwsku",
        "pid-key",
        "form-factor",
        "optic-description-osc",
        "connector",
        "cable-reference",
        "node-port-pattern",
        "nic-bidi",
    ],
)
def test_a_catalog_string_that_could_add_a_config_line_is_refused_where_it_enters(tmp_path, write_intent, old, new, field):
    assert HARDWARE.count(old) == 1
    problems = refused(lab_intent(tmp_path, write_intent, HARDWARE.replace(old, new)), CatalogError)
    assert [p.field for p in problems] == [field]
    assert problems[0].file == str(tmp_path / "lab-hardware.yaml")


def test_console_server_line_names_are_checked(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "console_servers:\n  MY-CONSOLE:\n    description: console server\n    module_slots: 1\n"
        '    line_names: "0/{slot}/{port}\\nline vty"\n    uplink: {count: 1, speed: 1G, names: "Gi0"}\n'
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    [problem] = caught.value.problems
    assert problem.field == ("console_servers", "MY-CONSOLE", "line_names") and problem.line == 5


def test_the_hostile_catalog_is_refused_by_the_cli_before_anything_is_written(tmp_path, write_intent):
    """The acceptance test: a build with a catalog whose description carries a NX-OS command."""
    hostile = HARDWARE.replace("description: Lab switch, 32 x 100G QSFP28", f'description: "Lab switch\\n{INJECTED}"')
    stderr = build_refused(lab_intent(tmp_path, write_intent, hostile))
    assert "lab-hardware.yaml:4: switches.LAB-SW-32X100.description: 'Lab switch\\nusername evil" in stderr
    assert not any(line.startswith("username") for line in stderr.splitlines())


@pytest.mark.parametrize(
    "text, field",
    [
        ('gpus: 64\ndescription: "a\\nfeature telnet"\n', ("description",)),
        ('gpus: 64\ndescription: "\\e[2J\\e[31mall good"\n', ("description",)),
        ('gpus: 64\nnaming: {leaf: "leaf{rail}\\nfeature telnet"}\n', ("naming", "leaf")),
        ("gpus: 64\nnaming: {spine: 'spine{index} x'}\n", ("naming", "spine")),
        ('gpus: 64\ngpu_node: "DGX-H100\\nx"\n', ("gpu_node",)),
        ('gpus: 64\nbackend: {leaf: {model: "N9K\\nfeature telnet"}}\n', ("backend", "leaf", "model")),
        ('gpus: 64\nbackend: {optics: {host_links: "QDD x"}}\n', ("backend", "optics", "host_links")),
        ('gpus: 64\nbackend: {qos_overrides: {"leaf1\\nfeature telnet": {lossless_priority: 3}}}\n', ("backend", "qos_overrides", "leaf1\nfeature telnet")),
        ('gpus: 64\nbackend:\n  routing: vxlan-evpn\n  evpn: {tenants: [{name: "ai\\nvrf"}]}\n', ("backend", "evpn", "tenants", 0, "name")),
        ('gpus: 64\ncatalog: ["hw.yaml\\n"]\n', ("catalog", 0)),
        ("gpus: 64\nmanagement_nodes: {model: 'UCSC C225', count: 1}\n", ("management_nodes", "model")),
    ],
    ids=[
        "description-newline",
        "description-escape",
        "naming-newline",
        "naming-space",
        "gpu-node",
        "switch-model",
        "optic",
        "qos-override-key",
        "tenant",
        "catalog-name",
        "server-model",
    ],
)
def test_an_intent_string_that_could_add_a_config_line_is_refused(write_intent, text, field):
    problems = refused(write_intent(text), IntentError)
    assert [p.field for p in problems] == [field]


def test_the_template_filters_escape_a_value_that_got_past_the_checks(tmp_path, write_intent):
    """Belt and braces: a description with a line break that skipped validation (built here
    around the models) still cannot add a line to a NX-OS config or an frr.conf."""
    evil = f"lab\n{INJECTED}"
    for nos, render, files in (("nxos", render_nxos, ["configs/be-spine01.cfg"]), ("sonic", render_sonic, ["configs/be-spine01/frr.conf"])):
        build = compile_intent(lab_intent(tmp_path, write_intent, nos=nos), render=False)
        config = build.configs["be-spine01"]
        bgp = dataclasses.replace(config.bgp, neighbors=tuple(dataclasses.replace(n, description=evil) for n in config.bgp.neighbors))
        config = dataclasses.replace(
            config,
            hardware=config.hardware.model_copy(update={"description": evil}),  # model_copy does not validate
            interfaces=tuple(dataclasses.replace(i, description=evil) for i in config.interfaces),
            bgp=bgp,
        )
        rendered = render(config)
        for name in files:
            lines = rendered[name].splitlines()
            assert not any(line.lstrip().startswith("username") for line in lines), name
            assert any(line.endswith(f"description lab\\n{INJECTED}") for line in lines), name
        if nos == "sonic":  # config_db.json is JSON: the newline stays inside its string
            assert f"lab\\n{INJECTED}" in rendered["configs/be-spine01/config_db.json"]


def test_the_filters_themselves():
    assert nxos_text("uplink to be-spine01 Ethernet1/1") == "uplink to be-spine01 Ethernet1/1"
    assert nxos_text("a\nfeature telnet") == "a\\nfeature telnet"
    assert len(nxos_text("x" * 1000)) == 254
    assert frr_text("a\r\nline vty\x1b[0m") == "a\\r\\nline vty\\x1b[0m"


# --- 2. resource exhaustion: bounded loader, bounded numbers -------------------------------------


def test_merge_key_bomb_costs_neither_memory_nor_time(tmp_path):
    # 546 bytes: PyYAML's flatten_mapping copies every merged pair into every mapping before any
    # budget could count them, 9 ** 6 copies of 9 pairs (1.75 GiB); merges are counted here instead
    lines = ["a: &a {" + ", ".join(f"k{i}: {i}" for i in range(9)) + "}"]
    for level, name in enumerate("bcdefg"):
        previous = "abcdefg"[level]
        lines.append(f"{name}: &{name} {{<<: [{', '.join([f'*{previous}'] * 9)}]}}")
    path = tmp_path / "merge-bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert len(path.read_bytes()) < 600
    tracemalloc.start()
    try:
        doc, problems = load_yaml(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB"
    # merges that repeat a mapping give its keys once, as YAML says
    assert not problems and doc.data["g"] == doc.data["a"]


def test_merge_key_expansion_counts_against_the_node_budget(tmp_path):
    # every merge copies 600 distinct pairs; 200 merges of it are 120,000 copies
    source = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(600)) + "}\n"
    path = tmp_path / "merges.yaml"
    path.write_text(source + "".join(f"m{i}: {{<<: *a}}\n" for i in range(200)))
    doc, [problem] = load_yaml(path)
    assert doc.data is None and "expands to more than" in problem.message and problem.line is not None


def test_an_intent_and_a_catalog_have_node_budgets_of_their_own(tmp_path, write_intent):
    # found by `make fuzz`: a 728 KB flow mapping of 70,000 keys under one intent key took over 10
    # CPU seconds to reach the general budget; an intent has under 300 nodes, a catalog a few thousand
    keys = "{" + ", ".join(f"k{i}: {i}" for i in range(70_000)) + "}"
    [problem] = refused(write_intent(f"gpus: 16\nnos: {keys}\n"))
    assert "the intent has more than 20,000 YAML nodes" in problem.message and problem.line == 2
    catalog = tmp_path / "big.yaml"
    catalog.write_text("switches: " + keys + "\n")
    with pytest.raises(CatalogError) as caught:
        load_catalog([catalog])
    [problem] = caught.value.problems
    assert "the catalog has more than 50,000 YAML nodes" in problem.message and problem.file == str(catalog) and problem.line == 1


def test_the_refused_merge_bomb_through_the_cli(tmp_path):
    lines = ["a: &a {" + ", ".join(f"k{i}: {i}" for i in range(300)) + "}"]
    lines += [f"m{i}: {{<<: [*a, *a]}}" for i in range(400)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    stderr = build_refused(path)
    assert "bomb.yaml:" in stderr and "expands to more than" in stderr


@pytest.mark.parametrize(
    "text, field",
    [
        ("gpus: 64\nmanagement_nodes: {model: UCSC-C225-M8S, count: 1000000000}\n", ("management_nodes", "count")),
        ("gpus: 64\nstorage_nodes: {model: AFF-A90, count: 1000000000}\n", ("storage_nodes", "count")),
        ('gpus: 64\nbackend: {ratio: "1e99999999:1"}\n', ("backend", "ratio")),
        ('gpus: 64\nbackend: {spine_ratio: "1:1e99999999", tiers: 3}\n', ("backend", "spine_ratio")),
        ('gpus: 64\nbackend: {ratio: "5000:1"}\n', ("backend", "ratio")),
        ("gpus: 64\nnaming: {gpu_node: 'gpu{index:0500000000d}'}\n", ("naming", "gpu_node")),
        ("gpus: 262152\n", ("gpus",)),
        ("nodes: 1000000000\n", ("nodes",)),
        ("gpus: 1" + "0" * 5000 + "\n", ("gpus",)),
        ("gpus: 64\nbackend: {scalable_unit_gpus: 1000000000}\n", ("backend", "scalable_unit_gpus")),
        ("gpus: 64\nbackend: {planes: 1000000}\n", ("backend", "planes")),
        ("gpus: 64\nbackend: {leaf: {count: 1000000000}}\n", ("backend", "leaf", "count")),
        ("gpus: 64\nbackend: {asn: {spine: 99999999999}}\n", ("backend", "asn", "spine")),
        (
            "gpus: 64\nbackend: {qos: {ecn: {400G: {min_kbytes: 100, max_kbytes: 10000000000, drop_probability: 5}}}}\n",
            ("backend", "qos", "ecn", "400G", "max_kbytes"),
        ),
        ("gpus: 64\nbackend: {qos: {ecn: {100G: {min_kbytes: 100, max_kbytes: 200000, drop_probability: 5}}}}\n", ("backend", "qos")),
        ("gpus: 64\nbackend: {qos: {pfc_trigger_kbytes: {99999999999G: 10}}}\n", ("backend", "qos", "pfc_trigger_kbytes", "99999999999G")),
        ("gpus: 64\nlayout: {racks: 1000000000}\n", ("layout", "racks")),
        ("gpus: 64\nlayout: {rack_width_m: .inf}\n", ("layout", "rack_width_m")),
        ("gpus: 64\nlayout: {slack_m: .nan}\n", ("layout", "slack_m")),
        ("gpus: 64\noob: {uplinks: 1000000}\n", ("oob", "uplinks")),
        (
            "gpus: 64\nbackend:\n  routing: vxlan-evpn\n  evpn: {tenants: [{name: a, nodes: '1-" + "9" * 5000 + "'}]}\n",
            ("backend", "evpn", "tenants", 0, "nodes"),
        ),
    ],
    ids=[
        "management-count",
        "storage-count",
        "ratio-exponent",
        "spine-ratio-exponent",
        "ratio-part",
        "naming-width",
        "gpus",
        "nodes",
        "gpus-5000-digits",
        "su-gpus",
        "planes",
        "switch-count",
        "asn",
        "ecn-absolute",
        "ecn-for-the-speed",
        "speed",
        "racks",
        "inf",
        "nan",
        "oob-uplinks",
        "tenant-nodes",
    ],
)
def test_every_number_has_an_upper_bound(write_intent, text, field):
    problems = refused(write_intent(text), IntentError)
    assert [p.field for p in problems] == [field]


def test_nodes_times_gpus_per_node_is_bounded_too(write_intent):
    [problem] = refused(write_intent("nodes: 262144\n"), IntentError)
    assert problem.field == ("nodes",) and "more than 262,144 GPUs" in problem.message


@pytest.mark.parametrize(
    "old, new, field",
    [
        ("count: 32, speed: 100G", "count: 1000000000, speed: 100G", ("switches", "LAB-SW-32X100", "port_groups", 0, "count")),
        ("count: 32, speed: 100G", "count: 32, speed: 1000000000G", ("switches", "LAB-SW-32X100", "port_groups", 0, "speed")),
        ("breakouts: [4x25G]", "breakouts: [64x25G]", ("switches", "LAB-SW-32X100", "port_groups", 0, "breakouts")),
        ("lanes: 4, breakouts", "lanes: 100000000, breakouts", ("switches", "LAB-SW-32X100", "port_groups", 0, "lanes")),
        ("max_ecmp_paths: 64", "max_ecmp_paths: 1000000000", ("switches", "LAB-SW-32X100", "max_ecmp_paths")),
        ("reach_m: 500", "reach_m: .inf", ("transceivers", "LAB-QSFP-4X25G", "reach_m")),
        ("links: 4", "links: 1000000", ("transceivers", "LAB-QSFP-4X25G", "links")),
        ("gpus: 4", "gpus: 1000000000", ("nodes", "LAB-GPU-4", "gpus")),
        ("backend: {count: 4,", "backend: {count: 100000000,", ("nodes", "LAB-GPU-4", "backend", "count")),
    ],
    ids=["cages", "speed", "fanout", "lanes", "ecmp", "reach", "links", "node-gpus", "node-ports"],
)
def test_every_catalog_number_has_an_upper_bound(tmp_path, write_intent, old, new, field):
    assert HARDWARE.count(old) == 1
    problems = refused(lab_intent(tmp_path, write_intent, HARDWARE.replace(old, new)), CatalogError)
    assert field in [p.field for p in problems]


# --- 3. what used to be a traceback -------------------------------------------------------------

CONTROL = [chr(code) for code in [*range(9), 11, 12, *range(14, 32), 127, 0x85]] + ["\u2028"]


@pytest.mark.parametrize("character", CONTROL, ids=[f"U+{ord(c):04X}" for c in CONTROL])
def test_every_control_character_in_an_intent_is_a_located_problem(write_intent, character):
    [problem] = refused(write_intent(f"gpus: 64\ndescription: a{character}b\n"), IntentError)
    assert problem.line == 2 and "control character" in problem.message and "column 15" in problem.message


def test_a_control_character_in_a_catalog_is_a_located_problem(tmp_path, write_intent):
    [problem] = refused(lab_intent(tmp_path, write_intent, HARDWARE.replace("vendor: Example", "vendor: Ex\x1bample")), CatalogError)
    assert problem.file.endswith("lab-hardware.yaml") and problem.line == 5


@pytest.mark.parametrize(
    "text, message",
    [
        ("gpus: " + "[" * 10_000 + "]" * 10_000 + "\n", f"nested more than {MAX_DEPTH} levels"),
        ("gpus: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n", f"nested more than {MAX_DEPTH} levels"),
        ("gpus: 64\nx: &x [*x]\n", "an alias that refers to"),
        ("gpus: 64\nx: &x {y: *x}\n", "an alias that refers to"),
        ("gpus: 64\nx: &x {<<: *x}\n", "merges the mapping it is in"),
        ("gpus: 64\nx: {<<: 5}\n", "a '<<' merge key takes a mapping"),
    ],
    ids=["brackets", "braces", "self-alias-list", "self-alias-map", "self-merge", "merge-scalar"],
)
def test_deep_nesting_and_self_reference_are_located_problems(write_intent, text, message):
    problems = refused(write_intent(text), IntentError)
    assert message in problems[0].message + problems[0].hint


@pytest.mark.parametrize(
    "text, message",
    [
        ("gpus: !!int\n", "an empty !!int"),
        ("gpus: !!float x\n", "'x' is not a valid !!float"),
        ("gpus: !!bool maybe\n", "is not a valid !!bool"),
        ("gpus: !!binary aGk=\n", "the tag !!binary is not allowed"),
        ("gpus: !!timestamp 64\n", "the tag !!timestamp is not allowed"),
        ("gpus: !!set {a, b}\n", "the tag !!set is not allowed"),
        ("gpus: !!omap [a: 1]\n", "the tag !!omap is not allowed"),
        ("gpus: !local 64\n", "the tag !local is not allowed"),
        ("gpus: !!python/name:os.system\n", "the tag !!python/name:os.system is not allowed"),
        ("gpus: <<\n", "means something else in YAML"),
    ],
    ids=["empty-int", "float-x", "bool", "binary", "timestamp", "set", "omap", "local", "python", "merge-value"],
)
def test_explicit_tags_other_than_the_plain_scalars_are_located_problems(write_intent, text, message):
    [problem] = refused(write_intent(text), IntentError)
    assert problem.field == ("gpus",) and problem.line == 1 and message in problem.message


@pytest.mark.parametrize(
    "text, message",
    [
        ("gpus: 64\nbackend:\n  ? [a, b]\n  : 1\n", "a key must be a name, not a list"),
        ("gpus: 64\nbackend:\n  1.5: x\n", "a key must be a name, not a float (1.5)"),
        ("gpus: 64\nbackend:\n  ~: x\n", "a key must be a name, not empty"),
    ],
    ids=["list", "float", "null"],
)
def test_keys_that_are_not_names_are_located_problems(write_intent, text, message):
    [problem] = refused(write_intent(text), IntentError)
    assert problem.field == ("backend",) and problem.line == 3 and message in problem.message


def test_the_plain_scalar_tags_are_read(write_intent):
    loaded = load_intent(write_intent("gpus: !!int 64\ndescription: !!str 2024\n"))
    assert loaded.intent.gpus == 64 and loaded.intent.description == "2024"


@pytest.mark.parametrize(
    "text, field, hint",
    [
        ("gpus: 64\nint: 1\n", ("int",), "allowed here"),
        ("gpus: 64\nlist: 1\n", ("list",), "allowed here"),
        ("gpus: 64\n'a[b': 1\n", ("a[b",), "allowed here"),
        ("gpus: 64\nbackend: {'x[': 1}\n", ("backend", "x["), "allowed here"),
        ("gpus: 64\nbackend: {leaf: {int: 1}}\n", ("backend", "leaf", "int"), "allowed here"),
        ("gpus: 64\nbackend: {qos: {ecn: {'[key]': {}}}}\n", ("backend", "qos", "ecn", "[key]"), ""),
    ],
    ids=["int", "list", "bracket", "nested-bracket", "nested-int", "key-named-key"],
)
def test_keys_that_look_like_pydantic_locations_keep_their_place(write_intent, text, field, hint):
    problems = refused(write_intent(text), IntentError)
    assert problems[0].field == field and problems[0].line == 2
    assert hint in problems[0].hint and "did you mean 'backend'" not in problems[0].hint


@pytest.mark.parametrize("pattern", ["gpu{index.real}", "gpu{index[0]}", "gpu{0}", "gpu{}", "gpu{index!r}", "gpu{index:>9}", "gpu{"])
def test_naming_patterns_use_only_their_fields(write_intent, pattern):
    [problem] = refused(write_intent(f"gpus: 64\nnaming: {{gpu_node: '{pattern}'}}\n"), IntentError)
    assert problem.field == ("naming", "gpu_node") and problem.line == 2


def test_an_unknown_core_model_is_a_located_problem(write_intent):
    [problem] = refused(write_intent("gpus: 64\nbackend:\n  tiers: 3\n  core: {model: NO-SUCH-SWITCH}\n"), IntentError)
    assert problem.field == ("backend", "core", "model") and problem.line == 4 and "unknown switch model" in problem.message


# --- 4. catalog confinement ---------------------------------------------------------------------

SHADOW = "operator:$6$salt$hunter2:19000:0:99999:7:::\nsecretuser:*:19000:0:99999:7:::\n"


def test_a_catalog_outside_the_intents_directory_is_not_read(write_intent):
    [problem] = refused(write_intent("catalog: [/etc/shadow]\ngpus: 64\n"), IntentError)
    assert problem.field == ("catalog", 0) and "outside the intent's directory" in problem.message and "--catalog-dir" in problem.hint


@pytest.mark.parametrize("how", ["dotdot", "symlink", "absolute"])
def test_paths_that_leave_the_intents_directory_are_refused_unless_named(tmp_path, how):
    (tmp_path / "intents").mkdir()
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "hw.yaml"
    target.write_text("cables: {}\n")
    name = {"dotdot": "../shared/hw.yaml", "symlink": "hw.yaml", "absolute": str(target)}[how]
    if how == "symlink":
        (tmp_path / "intents" / "hw.yaml").symlink_to(target)
    intent = tmp_path / "intents" / "fab.yaml"
    intent.write_text(f"catalog: ['{name}']\ngpus: 64\n")
    [problem] = refused(intent, IntentError)
    assert "outside the intent's directory" in problem.message
    loaded = load_intent(intent, catalog_dirs=[tmp_path / "shared"])  # named explicitly: fine
    assert loaded.catalog_files == {name: loaded.catalog.sha256[str(target)]}


def test_devices_and_pipes_are_not_catalogs(tmp_path, write_intent):
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.yaml")
    problems = refused(write_intent("catalog: [zero.yaml, pipe.yaml]\ngpus: 64\n"), IntentError, catalog_dirs=[tmp_path, "/dev"])
    assert [p.field for p in problems] == [("catalog", 0), ("catalog", 1)]
    assert all("not a regular file" in p.message for p in problems)
    # and the loader itself never blocks on a pipe nor reads a device
    for path in (tmp_path / "pipe.yaml", tmp_path / "zero.yaml"):
        _, [problem] = load_yaml(path, "catalog")
        assert "not a regular file" in problem.message


def test_a_catalog_dir_that_is_not_a_directory(write_intent, tmp_path):
    with pytest.raises(IntentError) as caught:
        load_intent(write_intent("gpus: 64\n"), catalog_dirs=[tmp_path / "nowhere"])
    (problem,) = caught.value.problems
    assert "is not a directory" in problem.message and problem.file == str(tmp_path / "nowhere") and problem.field == ("--catalog-dir",)


@pytest.mark.parametrize(
    "content",
    [SHADOW, "secretuser: 1\nhunter2: {x: 2}\n", "- secretuser\n- hunter2\n", "secretuser: *hunter2\n", "switches: {}\nsecretuser: [hunter2]\n"],
    ids=["shadow", "mapping", "list", "yaml-error", "one-stray-key"],
)
def test_a_file_that_is_not_a_catalog_is_never_quoted(tmp_path, write_intent, content):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "shadow").write_text(content)
    intent = write_intent(f"catalog: [{tmp_path / 'etc' / 'shadow'}]\ngpus: 64\n")
    with pytest.raises(CatalogError) as caught:
        load_intent(intent, catalog_dirs=[tmp_path / "etc"])
    report = caught.value.report().replace(str(tmp_path), "")
    assert "secretuser" not in report and "hunter2" not in report and "19000" not in report, report
    assert all(p.file.endswith("shadow") and p.line for p in caught.value.problems)


def test_catalog_dir_on_the_command_line(tmp_path):
    (tmp_path / "intents").mkdir()
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "lab-hardware.yaml").write_text(HARDWARE)
    intent = tmp_path / "intents" / "lab.yaml"
    intent.write_text(INTENT.format(nos="nxos").replace("[lab-hardware.yaml]", "[../hardware/lab-hardware.yaml]"))
    command = ["validate", str(intent)]
    refused_run = cli_runner.fabricgen(*command)
    assert refused_run.returncode == 2 and "outside the intent's directory" in refused_run.stderr
    allowed = cli_runner.fabricgen(*command, "--catalog-dir", str(tmp_path / "hardware"))
    assert allowed.returncode == 0, allowed.stderr


# --- 5. messages stay one line and never drive the terminal -------------------------------------


@pytest.mark.parametrize("key", ['"a\\nb"', '"\\e[31mred"', '"\\u202eevil"', "x" * 5000])
def test_hostile_keys_do_not_split_or_colour_messages(write_intent, key):
    [problem] = refused(write_intent(f"gpus: 64\n{key}: 1\n"), IntentError)
    text = problem.format()
    assert problem.line == 2 and text.isprintable() and len(text) < 400
