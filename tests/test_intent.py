"""Reading intents: defaults, schema errors with file/line/field, safe and bounded YAML."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fabricgen.basics.errors import IntentError
from fabricgen.basics.yaml_source import MAX_FILE_BYTES, load_yaml
from fabricgen.intent import load_intent


def problems_of(path):
    with pytest.raises(IntentError) as caught:
        load_intent(path)
    return caught.value.problems


def test_gpu_count_alone_is_a_complete_intent(write_intent):
    loaded = load_intent(write_intent("gpus: 256\n", name="just-gpus"))
    intent = loaded.intent
    assert intent.name == "just-gpus"  # from the file name
    assert intent.gpu_node == "DGX-H100"
    assert intent.backend.ratio == Fraction(1)
    assert intent.backend.leaf.model == intent.backend.spine.model == "N9K-C9364D-GX2A"
    assert intent.backend.leaf.nos == "nxos"
    assert intent.backend.routing == "ebgp"
    assert intent.backend.nic_addressing == "p2p"
    assert intent.backend.bfd.interval_ms == 150 and intent.backend.bfd.multiplier == 3
    assert intent.backend.qos.roce_dscp == [24, 26] and intent.backend.qos.lossless_priority == 3
    assert intent.backend.qos.cnp_dscp == [48]
    # thresholds the intent does not write come from each switch model (fabricgen.compiler.qos.lossless_thresholds)
    assert intent.backend.qos.ecn == {} and intent.backend.qos.pfc_trigger_kbytes == {}


def test_node_count_instead_of_gpus(write_intent):
    assert load_intent(write_intent("nodes: 32\n")).intent.nodes == 32


def test_unquoted_ratio_is_read_as_a_ratio_not_base_60(write_intent):
    # YAML 1.1 would read 2:1 as the integer 121
    loaded = load_intent(write_intent("gpus: 256\nbackend:\n  ratio: 2:1\n"))
    assert loaded.intent.backend.ratio == Fraction(2)


def test_one_ecn_speed_keeps_the_other_defaults(write_intent):
    text = """
    gpus: 256
    backend:
      qos:
        ecn:
          400G: {min_kbytes: 500, max_kbytes: 9000, drop_probability: 5}
    """
    qos = load_intent(write_intent(text)).intent.backend.qos
    assert list(qos.ecn) == [400] and qos.ecn[400].min_kbytes == 500 and qos.ecn_at(100).min_kbytes == 150


def test_unknown_key_names_line_field_and_suggests(write_intent):
    path = write_intent("gpus: 256\nbackend:\n  leaf:\n    modle: N9K-C9364D-GX2A\n")
    [problem] = problems_of(path)
    assert problem.file == str(path) and problem.line == 4
    assert problem.field == ("backend", "leaf", "modle")
    assert "unknown key 'modle'" in problem.message
    assert "did you mean 'model'" in problem.hint


def test_every_schema_error_of_the_phase_is_reported_together(write_intent):
    text = """
    gpus: many
    backend:
      mtu: 20000
      routing: ospf
      spine: {count: -1}  # 0 is a spine-free fabric; below 0 is nothing
    """
    problems = problems_of(write_intent(text))
    fields = {p.field for p in problems}
    assert {("gpus",), ("backend", "mtu"), ("backend", "routing"), ("backend", "spine", "count")} <= fields
    lines = {p.field: p.line for p in problems}
    assert lines[("gpus",)] == 1 and lines[("backend", "mtu")] == 3 and lines[("backend", "routing")] == 4


def test_evpn_addresses_nics_by_segment_so_p2p_is_refused(write_intent):
    [problem] = problems_of(write_intent("gpus: 256\nbackend: {routing: vxlan-evpn, nic_addressing: p2p}\n"))
    assert problem.field == ("backend",)
    assert "remove nic_addressing" in problem.message


def test_evpn_tenants_need_distinct_names_and_valid_route_targets(write_intent):
    text = """
    gpus: 256
    backend:
      routing: vxlan-evpn
      evpn:
        tenants:
          - {name: a, nodes: "1-16", route_target: "70000:1"}
          - {name: b, nodes: "17-x"}
    """
    problems = problems_of(write_intent(text))
    messages = " | ".join(p.message for p in problems)
    assert "2-byte ASN" in messages and "range like" in messages


def test_gpus_and_nodes_together_is_an_error(write_intent):
    [problem] = problems_of(write_intent("gpus: 256\nnodes: 32\n"))
    assert "exactly one" in problem.message


def test_gpu_count_must_fill_whole_nodes(write_intent):
    [problem] = problems_of(write_intent("gpus: 250\n"))
    assert problem.field == ("gpus",) and problem.line == 1
    assert "248" in problem.hint and "256" in problem.hint


@pytest.mark.parametrize(
    "text, field",
    [
        ("gpus: 256\nbackend:\n  leaf: {model: N9K-NOPE}\n", ("backend", "leaf", "model")),
        ("gpus: 256\ngpu_node: DGX-Z9000\n", ("gpu_node",)),
        ("gpus: 256\nbackend:\n  optics: {fabric_links: QSFP-NOPE}\n", ("backend", "optics", "fabric_links")),
        ("gpus: 256\nbackend:\n  leaf: {model: N9K-C93108TC-FX3, nos: sonic}\n", ("backend", "leaf", "nos")),
    ],
)
def test_unknown_catalog_references(write_intent, text, field):
    problems = problems_of(write_intent(text))
    assert [p.field for p in problems] == [field]
    assert problems[0].line is not None and problems[0].hint


def test_overlapping_pools_are_refused(write_intent):
    [problem] = problems_of(write_intent("gpus: 256\nbackend:\n  pools: {loopbacks: 10.0.0.0/8}\n"))
    assert problem.field == ("backend", "pools") and "overlap" in problem.message


@pytest.mark.parametrize("name", ["../escape", "a/b", "-leading", "x" * 64, "has space"])
def test_fabric_name_must_be_a_safe_file_name(write_intent, name):
    [problem] = problems_of(write_intent(f"name: '{name}'\ngpus: 256\n"))
    assert problem.field == ("name",)


def test_file_name_that_is_not_a_valid_fabric_name(tmp_path):
    path = tmp_path / "my fabric.yaml"
    path.write_text("gpus: 256\n")
    [problem] = problems_of(path)
    assert "add 'name:'" in problem.hint


def test_naming_pattern_with_unknown_field(write_intent):
    [problem] = problems_of(write_intent("gpus: 256\nnaming: {leaf: 'leaf-{row}'}\n"))
    assert problem.field == ("naming", "leaf")


# --- the YAML layer ---------------------------------------------------------------------------


def test_malformed_yaml_names_the_line(write_intent):
    path = write_intent("gpus: 256\nbackend:\n  leaf: {model: X\n  spine: 3\n")
    [problem] = problems_of(path)
    assert problem.file == str(path) and problem.line in (3, 4)
    assert "not valid YAML" in problem.message


def test_duplicate_keys_are_errors_not_last_one_wins(write_intent):
    [problem] = problems_of(write_intent("gpus: 256\nbackend:\n  mtu: 9216\n  mtu: 1500\n"))
    assert problem.line == 4 and "duplicate key 'mtu'" in problem.message and "line 3" in problem.message


def test_empty_file(write_intent):
    [problem] = problems_of(write_intent(""))
    assert "empty" in problem.message


def test_top_level_must_be_a_mapping(write_intent):
    [problem] = problems_of(write_intent("- gpus: 256\n"))
    assert "mapping" in problem.message


def test_oversized_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("gpus: 256\n" + "#" * MAX_FILE_BYTES)
    _, problems = load_yaml(path)
    assert "limit" in problems[0].message


def test_alias_bomb_is_bounded(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([previous] * 10)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    doc, problems = load_yaml(path)
    assert doc.data is None and "more than" in problems[0].message


def test_python_tags_are_not_executed(tmp_path):
    path = tmp_path / "evil.yaml"
    path.write_text("gpus: !!python/object/apply:os.system ['echo pwned']\n")
    _, problems = load_yaml(path)
    assert problems and "tag !!python/object/apply:os.system is not allowed" in problems[0].message


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("description: caf\xe9\n".encode("latin-1"))
    _, problems = load_yaml(path)
    assert "UTF-8" in problems[0].message


def test_missing_file(tmp_path):
    _, problems = load_yaml(tmp_path / "nope.yaml")
    assert "cannot read" in problems[0].message


# --- strict types: YAML that means something else is refused, not coerced ---------------------


@pytest.mark.parametrize(
    "text, field",
    [
        ("gpus: true\n", ("gpus",)),
        ("gpus: '256'\n", ("gpus",)),
        ("gpus: 256.0\n", ("gpus",)),
        ("gpus: 256\nbackend:\n  bfd: {enabled: 'no'}\n", ("backend", "bfd", "enabled")),
        ("gpus: 256\nbackend:\n  ratio: '-1:-2'\n", ("backend", "ratio")),
        ("gpus: 256\nbackend:\n  ratio: 2\n", ("backend", "ratio")),
    ],
)
def test_values_that_mean_something_else_are_refused(write_intent, text, field):
    problems = problems_of(write_intent(text))
    assert [p.field for p in problems] == [field]


@pytest.mark.parametrize("key", ["lossless_priority", "cnp_priority"])
def test_queue_zero_is_not_a_class_of_its_own(write_intent, key):
    # queue 0 is where all other traffic goes (NX-OS's c-out-8q-q-default)
    [problem] = problems_of(write_intent(f"gpus: 256\nbackend:\n  qos: {{{key}: 0}}\n"))
    assert problem.field == ("backend", "qos", key) and problem.line == 3


def test_fewer_gpus_than_one_node_offers_one_choice(write_intent):
    [problem] = problems_of(write_intent("gpus: 3\n"))
    assert problem.hint == "use 8, or give 'nodes:' instead"


def test_catalog_that_is_a_directory(write_intent, tmp_path):
    (tmp_path / "hardware").mkdir()
    [problem] = problems_of(write_intent("catalog: [hardware]\ngpus: 256\n"))
    assert "is a directory" in problem.message


def test_yaml_tags_are_refused_with_their_own_hint(write_intent):
    [problem] = problems_of(write_intent("gpus: !!python/object/apply:os.system ['true']\n"))
    assert "tags" in problem.hint and problem.line == 1


def test_frontend_and_storage_defaults_are_their_own_and_replaced_whole(write_intent):
    """The frontend's and storage fabric's ASNs and pools are field defaults (the schema shows
    them, nothing requires them); a pools section given replaces the defaults whole."""
    text = """
    gpus: 256
    frontend: {storage: separate}
    storage: {}
    """
    intent = load_intent(write_intent(text)).intent
    assert (intent.frontend.asn.spine, intent.frontend.asn.leaf_first) == (65000, 65001)
    assert (intent.storage.asn.spine, intent.storage.asn.leaf_first) == (65200, 65201)
    assert str(intent.frontend.pools.hosts) == "10.20.0.0/14" and str(intent.storage.pools.hosts) == "10.36.0.0/14"
    given = """
    gpus: 256
    frontend:
      pools: {loopbacks: 10.60.0.0/16, hosts: 10.64.0.0/14, fabric_links: 10.68.0.0/14}
    """
    pools = load_intent(write_intent(given, name="given")).intent.frontend.pools
    assert str(pools.loopbacks) == "10.60.0.0/16" and pools.vteps is None
    problems = problems_of(write_intent("gpus: 256\nfrontend:\n  pools: {loopbacks: 10.60.0.0/16}\n", name="partial"))
    assert {p.field for p in problems} == {("frontend", "pools", "hosts"), ("frontend", "pools", "fabric_links")}


def test_a_speed_key_is_read_with_or_without_its_unit(write_intent):
    text = """
    gpus: 256
    backend:
      qos:
        ecn: {400G: {min_kbytes: 500, max_kbytes: 9000, drop_probability: 5}}
        pfc_trigger_kbytes: {400: 12000, 100gbe: 3000}
    """
    qos = load_intent(write_intent(text)).intent.backend.qos
    assert list(qos.ecn) == [400] and qos.pfc_trigger_kbytes == {400: 12000, 100: 3000}
    problems = problems_of(write_intent("gpus: 256\nbackend: {qos: {ecn: {fast: {min_kbytes: 1, max_kbytes: 2, drop_probability: 5}}}}\n", name="bad"))
    assert problems and problems[0].field[:3] == ("backend", "qos", "ecn")
