"""The hardware catalog: built-in data is complete and valid; user files extend it safely."""

from __future__ import annotations

import hashlib

import pytest

from fabricgen.basics.errors import CatalogError
from fabricgen.catalog import load_catalog
from fabricgen.intent import load_intent

# Every PID of the whitepaper's components table (shared/DOMAIN.md §1), by catalog section.
WHITEPAPER_PIDS = {
    "nodes": ["DGX-H100", "DGX-H200", "UCSC-C225-M8S", "AFF-A90", "AFF-A900"],
    "switches": ["N9K-C9364D-GX2A", "N9K-C93600CD-GX", "N9K-C93108TC-FX3"],
    "transceivers": ["QDD-400G-DR4-S", "QSFP-100G-DR-S", "GLC-TE"],
    "cables": ["CB-M12-M12-SMF", "CB-LC-LC-SMF", "CAB-CAT5E/6E"],
    "console_servers": ["C8300-1N1S-4T2X"],
    "modules": ["NIM-24A"],
    "appliances": ["ND-CLUSTER-L4"],
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def catalog_problems(tmp_path, text):
    """Load the built-in catalog plus one user file holding `text`; the problems it raises."""
    extra = tmp_path / "extra.yaml"
    extra.write_text(text)
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    return caught.value.problems


@pytest.mark.parametrize("section, pids", WHITEPAPER_PIDS.items())
def test_every_whitepaper_pid_is_in_the_catalog(catalog, section, pids):
    entries = getattr(catalog, section)
    missing = [pid for pid in pids if pid not in entries]
    assert not missing, f"{section} lacks {missing}"


def test_whitepaper_switch_port_layouts(catalog):
    assert catalog.switches["N9K-C9364D-GX2A"].ports_at(400) == 64
    fx = catalog.switches["N9K-C93600CD-GX"]
    assert fx.ports_at(100) == 28 + 8 * 4  # 28 native, 8 QSFP-DD broken out 4x100G
    assert fx.group_of(29).speed == 400 and fx.group_of(28).speed == 100
    assert catalog.switches["N9K-C93108TC-FX3"].ports_at(10) == 48 + 6 * 4  # RJ45 ports, uplinks 4x10G


def test_a_51t_switch_with_128_x_400g(catalog):
    big = [pid for pid, model in catalog.switches.items() if model.ports_at(400) == 128]
    assert big, "the catalog needs a 51.2T switch (64 x 800G with 2 x 400G breakout)"
    model = catalog.switches[big[0]]
    assert model.ports_at(800) == 64
    # a 2x400G optic carries two links from one 800G cage
    optic = catalog.default_optic(model.port_groups[0].form_factor, 400, 800)
    assert optic and catalog.transceivers[optic].links == 2


def test_sonic_lanes_count_across_port_groups(catalog):
    fx = catalog.switches["N9K-C93600CD-GX"]
    assert fx.first_lanes[1] == 0 and fx.first_lanes[2] == 4
    assert fx.first_lanes[29] == 28 * 4  # the QSFP-DD group starts after 28 four-lane cages
    assert fx.first_lanes[30] == 28 * 4 + 8


def test_every_optic_names_a_cable_in_the_catalog(catalog):
    for pid, optic in catalog.transceivers.items():
        assert optic.cable is None or optic.cable in catalog.cables, pid


def test_user_catalog_adds_a_switch(tmp_path, write_intent):
    (tmp_path / "extra.yaml").write_text(
        """
switches:
  LAB-SW-32X400:
    description: A 32-port 400G lab switch
    vendor: Example
    nos: [sonic]
    port_groups:
      - {count: 32, speed: 400G, form_factor: QSFP-DD, lanes: 8}
    interface_names:
      sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}
"""
    )
    path = write_intent(
        """
        catalog: [extra.yaml]
        gpus: 64
        backend:
          leaf: {model: LAB-SW-32X400, nos: sonic}
          spine: {model: LAB-SW-32X400, nos: sonic}
        """
    )
    loaded = load_intent(path)
    assert loaded.catalog.switches["LAB-SW-32X400"].ports_at(400) == 32


def test_user_catalog_cannot_redefine_a_pid(tmp_path, write_intent):
    (tmp_path / "extra.yaml").write_text("cables:\n  CB-LC-LC-SMF:\n    description: mine\n    media: smf\n    connector: LC\n")
    with pytest.raises(CatalogError) as caught:
        load_intent(write_intent("catalog: [extra.yaml]\ngpus: 256\n"))
    [problem] = caught.value.problems
    assert problem.file.endswith("extra.yaml") and problem.line == 2
    assert "already defined" in problem.message


def test_user_catalog_schema_errors_point_at_the_line(tmp_path, write_intent):
    (tmp_path / "extra.yaml").write_text(
        "transceivers:\n  MY-OPTIC:\n    description: x\n    form_factor: QSFP-DD\n    speed: fast\n    media: smf\n"
        "    connector: LC\n    reach_m: 10\n    cable: CB-NOPE\n"
    )
    with pytest.raises(CatalogError) as caught:
        load_intent(write_intent("catalog: [extra.yaml]\ngpus: 256\n"))
    [problem] = caught.value.problems
    assert problem.line == 5 and problem.field == ("transceivers", "MY-OPTIC", "speed")


def test_dangling_cable_reference(tmp_path):
    problems = catalog_problems(
        tmp_path,
        "transceivers:\n  MY-OPTIC:\n    description: x\n    form_factor: QSFP-DD\n    speed: 400G\n    media: smf\n"
        "    connector: LC\n    reach_m: 10\n    cable: CB-NOPE\n",
    )
    assert "CB-NOPE" in problems[0].message


def test_missing_user_catalog_file(write_intent):
    from fabricgen.basics.errors import IntentError

    with pytest.raises(IntentError) as caught:
        load_intent(write_intent("catalog: [nowhere.yaml]\ngpus: 256\n"))
    assert caught.value.problems[0].field == ("catalog", 0) and caught.value.problems[0].line == 1


def test_bad_breakout_spelling_is_refused(tmp_path):
    problems = catalog_problems(
        tmp_path,
        "switches:\n  X:\n    description: x\n    vendor: x\n    nos: [sonic]\n"
        "    port_groups: [{count: 4, speed: 400G, form_factor: OSFP, lanes: 8, breakouts: [two-by-200]}]\n"
        "    interface_names: {sonic: {port: 'Ethernet{lane}', breakout: 'Ethernet{lane}'}}\n",
    )
    assert "2x400G" in problems[0].message


SWITCH = """
switches:
  LAB-SW:
    description: lab switch
    vendor: Example
    nos: [sonic]
    port_groups:
{groups}
    interface_names:
      sonic: {{port: "{port}", breakout: "{breakout}"}}
"""


@pytest.mark.parametrize(
    "groups, port, breakout, message",
    [
        ("      - {count: 4, speed: 400G, form_factor: OSFP, lanes: 8}", "Ethernet{lanes}", "Ethernet{lane}", "uses {lanes}"),
        ("      - {count: 4, speed: 400G, form_factor: OSFP, lanes: 8}", "Ethernet0", "Ethernet{lane}", "both 'Ethernet0'"),
        ("      - {count: 4, speed: 400G, form_factor: OSFP, lanes: 8, breakouts: [2x200G]}", "Ethernet{lane}", "Ethernet{port}", "repeat"),
        (
            "      - {count: 4, speed: 400G, form_factor: OSFP, lanes: 8}\n      - {first: 3, count: 4, speed: 100G, form_factor: QSFP28, lanes: 4}",
            "Ethernet{lane}",
            "Ethernet{lane}",
            "both claim cage 3",
        ),
    ],
    ids=["unknown-field", "no-placeholder", "breakout-repeats", "overlapping-groups"],
)
def test_switch_entries_that_would_misname_ports(tmp_path, groups, port, breakout, message):
    [problem] = catalog_problems(tmp_path, SWITCH.format(groups=groups, port=port, breakout=breakout))
    assert message in problem.message and problem.file == str(tmp_path / "extra.yaml") and problem.line is not None


def test_node_port_names_must_differ(tmp_path):
    problems = catalog_problems(
        tmp_path, "nodes:\n  LAB-GPU:\n    kind: gpu\n    description: x\n    gpus: 4\n    backend: {count: 4, speed: 400G, names: eth}\n"
    )
    assert "put {n} in it" in problems[0].message


def test_unknown_key_inside_a_catalog_entry_gets_a_suggestion(tmp_path):
    missing, unknown = catalog_problems(
        tmp_path, "cables:\n  MY-CABLE:\n    descripton: x\n    media: smf\n    connector: LC\n"
    )  # the required key, and the misspelt one meant to be it
    assert unknown.line == 3 and "did you mean 'description'" in unknown.hint
    assert missing.field == ("cables", "MY-CABLE", "description")


def test_an_appliance_os_is_not_mixed_with_linux_nics(tmp_path):
    [problem] = catalog_problems(
        tmp_path,
        "nodes:\n  LAB-STORE:\n    kind: storage\n    description: x\n"
        '    storage: {count: 2, speed: 100G, names: "e{n}a", nic_family: ontap}\n'
        '    frontend: {count: 2, speed: 100G, names: "fe{n}", nic_family: connectx}\n',
    )
    assert "must be on every data port set" in problem.message and problem.field[:2] == ("nodes", "LAB-STORE")


MAPPED = """
switches:
  LAB-MAPPED:
    description: lab switch with a SONiC port map
    vendor: Example
    nos: [sonic]
    port_groups:
      - {{count: 4, speed: 400G, form_factor: QSFP-DD, lanes: 4, breakouts: [2x200G]}}
    interface_names:
      sonic: {{port: "{pattern}", breakout: "{pattern}"}}
    sonic:
      platform: x86_64-example_lab4-r0
      hwsku: Example-Lab4
      source: a test
      ports:
{ports}
"""


def mapped_switch(tmp_path, ports, pattern="Ethernet{number}"):
    extra = tmp_path / "extra.yaml"
    extra.write_text(MAPPED.format(ports=ports, pattern=pattern))
    return load_catalog([extra]).switches["LAB-MAPPED"]


def test_an_irregular_map_gives_each_sub_port_its_slice_of_the_listed_lanes(tmp_path):
    # lanes out of order inside a cage, as some real platforms list them (e.g. "38,37,39,36")
    model = mapped_switch(
        tmp_path, "        - {first: 1, count: 4, number_base: 0, number_stride: 4, lanes: [[38, 37, 39, 36], [1, 2, 3, 4], [9, 10, 11, 12], [5, 6, 7, 8]]}"
    )
    assert model.port_lanes(1, 0, 400) == (38, 37, 39, 36)
    assert model.subports(1, 200) == [(1, 0, (38, 37)), (2, 2, (39, 36))]  # Ethernet0 and Ethernet2
    assert model.name_of("sonic", 4, 2, 200) == "Ethernet14" and model.port_lanes(4, 2, 200) == (7, 8)
    assert model.platform_mapped and model.first_lanes[2] == 1


def test_a_regular_map_is_two_numbers(tmp_path):
    model = mapped_switch(tmp_path, "        - {first: 1, count: 4, number_base: 0, number_stride: 4, lane_base: 1, lane_stride: 4}")
    assert [model.port_lanes(cage, 0, 400) for cage in (1, 4)] == [(1, 2, 3, 4), (13, 14, 15, 16)]
    assert model.name_of("sonic", 3) == "Ethernet8"


@pytest.mark.parametrize(
    "ports, pattern, message",
    [
        ("        - {first: 1, count: 4, number_base: 0, number_stride: 4, first_lanes: [0, 4, 4, 12]}", "Ethernet{number}", "gives lane 4 to cages 2 and 3"),
        ("        - {first: 1, count: 4, number_base: 0, number_stride: 4, first_lanes: [0, 4, 8]}", "Ethernet{number}", "3 lane entries for 4 cages"),
        (
            "        - {first: 1, count: 4, number_base: 0, number_stride: 4, lanes: [[0, 1, 2, 3], [4, 5, 6], [8, 9, 10, 11], [12, 13, 14, 15]]}",
            "Ethernet{number}",
            "gives cage 2 3 lanes",
        ),
        ("        - {first: 1, count: 3, number_base: 0, number_stride: 4, lane_base: 0, lane_stride: 4}", "Ethernet{number}", "does not map cage 4"),
        ("        - {first: 1, count: 4, number_base: 0, number_stride: 2, lane_base: 0, lane_stride: 4}", "Ethernet{number}", "overlaps cage 1"),
        (
            "        - {first: 1, count: 4, number_base: 0, number_stride: 4, lane_base: 1, lane_stride: 4}",
            "Ethernet{lane}",
            "platform x86_64-example_lab4-r0 names it 'Ethernet0'",
        ),
        (
            "        - {first: 1, count: 4, number_base: 0, number_stride: 4, lane_base: 0, lane_stride: 4, first_lanes: [0, 4, 8, 12]}",
            "Ethernet{number}",
            "give their lanes one way",
        ),
    ],
    ids=["duplicate-lane", "wrong-cage-count", "wrong-lane-count", "unmapped-cage", "overlapping-names", "names-disagree", "two-ways"],
)
def test_bad_platform_maps_are_refused(tmp_path, ports, pattern, message):
    extra = tmp_path / "extra.yaml"
    extra.write_text(MAPPED.format(ports=ports, pattern=pattern))
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    [problem] = caught.value.problems
    assert message in problem.message, problem.message
    assert problem.file == str(extra) and problem.line is not None


@pytest.mark.parametrize(
    "section, field, message",
    [
        ("    sonic: {platform: x86_64-lab-r0, breakout_modes: {2x400G: two-by-400}}", ("sonic", "breakout_modes", "2x400G"), "should match pattern"),
        (
            "    sonic: {ports: [{first: 1, count: 4, number_base: 0, number_stride: 0, lane_base: 0, lane_stride: 4}]}",
            ("sonic", "ports", 0, "number_stride"),
            "",
        ),
        ("    eos: {tx_queue: queue}", ("eos", "tx_queue"), "is not allowed here"),
        ("    nxos: {}", ("nxos",), "unknown key 'nxos'"),
        ("    sonc: {platform: x}", ("sonc",), "unknown key 'sonc'"),
    ],
    ids=["sonic-mode-name", "sonic-map-stride", "eos-queue", "no-nxos-section", "misspelt-section"],
)
def test_a_nos_section_s_problem_is_located_in_the_section(tmp_path, section, field, message):
    # each NOS's section of a switch entry is its package's model (CATALOG_PLATFORM), under the NOS's name
    text = SWITCH.format(groups="      - {count: 4, speed: 400G, form_factor: OSFP, lanes: 8}", port="Ethernet{lane}", breakout="Ethernet{lane}")
    [problem] = catalog_problems(tmp_path, text + section + "\n")
    assert problem.field == ("switches", "LAB-SW", *field) and problem.line == text.count("\n") + 1, problem
    assert message in problem.message, problem.message
    if field == ("sonc",):
        assert problem.hint == "did you mean 'sonic'?"


def test_a_map_without_its_platform_is_refused(tmp_path):
    text = MAPPED.format(ports="        - {first: 1, count: 4, number_base: 0, number_stride: 4, lane_base: 0, lane_stride: 4}", pattern="Ethernet{number}")
    [problem] = catalog_problems(tmp_path, text.replace("      hwsku: Example-Lab4\n", ""))
    assert "give platform, hwsku and source with ports" in problem.message


def test_built_in_sonic_models_say_why_they_have_no_map(catalog):
    for pid, model in catalog.switches.items():
        if "sonic" in model.nos:
            assert model.platform_mapped or model.sonic.unverified, pid


def test_built_in_files_are_parsed_again_only_when_their_bytes_or_the_nos_registry_change(tmp_path, monkeypatch):
    """load_catalog keeps each built-in file as parsed and validated, by path and content: a second
    load parses none, an edited file is parsed again (and its edit shows), a broken one is refused
    every time, and a new NOS registry (a package added) has every file validated again."""
    import fabricgen.catalog as catalog_module
    from fabricgen.nos import registry

    copies = []
    for index, path in enumerate(catalog_module.builtin_files()):  # paths never seen before: nothing cached for them
        copies.append(tmp_path / f"{index:02d}-{path.name}")
        copies[-1].write_bytes(path.read_bytes())
    monkeypatch.setattr(catalog_module, "builtin_files", lambda: list(copies))
    parsed: list[str] = []
    parse = catalog_module._catalog_file

    def counted(path, problems, raw=None):
        parsed.append(path.name)
        return parse(path, problems, raw)

    monkeypatch.setattr(catalog_module, "_catalog_file", counted)
    first = load_catalog()
    assert len(parsed) == len(copies)
    second = load_catalog()
    assert len(parsed) == len(copies) and second == first and second is not first
    assert second.sha256 == first.sha256 == {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in copies}

    (switches,) = [path for path in copies if path.name.endswith("-switches.yaml")]
    original = switches.read_text()
    described = "description: Cisco Nexus 9364D-GX2A switch with 64 400 GE QSFP-DD ports"
    assert described in original
    switches.write_text(original.replace(described, "description: edited"))
    parsed.clear()
    assert load_catalog().switches["N9K-C9364D-GX2A"].description == "edited" and parsed == [switches.name]

    switches.write_text(original.replace("  N9K-C9364D-GX2A:\n", "  N9K-C9364D-GX2A:\n    colour: red\n"))
    for _ in range(2):
        with pytest.raises(CatalogError, match="colour"):
            load_catalog()
    switches.write_text(original)
    parsed.clear()
    registry.plugins.cache_clear()  # the next plugins() is another registry, with the same packages
    try:
        assert load_catalog() == first and len(parsed) == len(copies)
    finally:
        registry.plugins.cache_clear()
