"""SONiC platform data per release: a switch's aliases (and what else its platform files say)
follow the release its config is written for, and a release whose image has no platform files for
the switch is refused.

Expected values are copied by hand from sonic-buildimage, not computed from the catalog entry:
device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/port_config.ini on branch
202411 (566f5575) and 202405 (cfc766e1; the same file) and on 202505 (ff3c0c9f).
"""

from __future__ import annotations

import pytest

from fabricgen.basics.errors import CatalogError, FabricgenError
from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from tests.sonic_yang import violations
from tests.test_render_sonic import config_dbs

ARISTA = "DCS-7060X6-64PE"

# port_config.ini rows: name -> (lanes, alias) on 202405/202411 and on 202505 on. The 202411 file
# gives Ethernet444, 468 and 496 the lanes 437,438,439,430 / 453,454,453,454 / 481,482,483,483
# (typos, sonic-buildimage #21561); fabricgen writes the ASIC's lanes, as 202505's file does.
ROWS_202411 = {
    "Ethernet0": ("17,18,19,20", "Ethernet1/1"),
    "Ethernet4": ("21,22,23,24", "Ethernet1/5"),
    "Ethernet8": ("1,2,3,4", "Ethernet2/1"),
    "Ethernet444": ("437,438,439,440", "Ethernet56/5"),
    "Ethernet468": ("453,454,455,456", "Ethernet59/5"),
    "Ethernet496": ("481,482,483,484", "Ethernet63/1"),
    "Ethernet508": ("501,502,503,504", "Ethernet64/5"),
}
ROWS_202505 = {"Ethernet0": ("17,18,19,20", "etp1a"), "Ethernet4": ("21,22,23,24", "etp1b"), "Ethernet508": ("501,502,503,504", "etp64b")}


def _intent(model: str, release: str, gpus: int = 64, unit: int = 32) -> str:
    return (
        f"gpus: {gpus}\nbackend:\n  scalable_unit_gpus: {unit}\n"
        f'  leaf: {{model: {model}, nos: sonic, nos_release: "{release}"}}\n'
        f'  spine: {{model: {model}, nos: sonic, nos_release: "{release}"}}\n'
    )


@pytest.mark.parametrize("release", ["202405", "202411"])
def test_7060x6_aliases_are_eos_names_before_202505(write_intent, release):
    build = compile_intent(write_intent(_intent(ARISTA, release)))
    dbs = config_dbs(build)
    leaf = next(db for name, db in dbs.items() if "leaf" in name)
    for port, (lanes, alias) in ROWS_202411.items():
        if port in leaf["PORT"]:
            assert (leaf["PORT"][port]["lanes"], leaf["PORT"][port]["alias"]) == (lanes, alias), port
    assert leaf["PORT"]["Ethernet0"]["alias"] == "Ethernet1/1" and leaf["PORT"]["Ethernet4"]["alias"] == "Ethernet1/5"
    for name, db in dbs.items():
        assert violations(db, release) == [], name


@pytest.mark.parametrize("release", ["202505", "202511", "202605", "master"])
def test_7060x6_aliases_are_etp_from_202505(write_intent, release):
    build = compile_intent(write_intent(_intent(ARISTA, release)))
    dbs = config_dbs(build)
    leaf = next(db for name, db in dbs.items() if "leaf" in name)
    for port, (lanes, alias) in ROWS_202505.items():
        if port in leaf["PORT"]:
            assert (leaf["PORT"][port]["lanes"], leaf["PORT"][port]["alias"]) == (lanes, alias), port
    assert leaf["PORT"]["Ethernet0"]["alias"] == "etp1a"
    for name, db in dbs.items():
        assert violations(db, release) == [], name


def test_7060x6_before_202505_says_what_its_platform_files_get_wrong(write_intent):
    notes = compile_intent(write_intent(_intent(ARISTA, "202411")), render=False).compiled.notes
    said = [note for note in notes if ARISTA in note and "202411" in note and "Ethernet444" in note]
    assert len(said) == 1, notes
    assert "#21561" in said[0]
    newer = compile_intent(write_intent(_intent(ARISTA, "202505"), name="newer"), render=False).compiled.notes
    assert not any("Ethernet444" in note for note in newer)


def test_the_7060x6_entry_says_where_each_release_differs():
    model = load_catalog().switches[ARISTA]
    assert model.sonic.aliases("202411").name(model, 1, 2, 400) == "Ethernet1/5"
    assert model.sonic.aliases("202411").name(model, 65, 0, 10) == "Ethernet65"
    assert model.sonic.aliases("202511").name(model, 1, 2, 400) == "etp1b"
    assert model.sonic.aliases("master").name(model, 65, 0, 10) == "etp65"


# The new models' platform files, a few rows each, copied by hand from sonic-buildimage master
# (086b03bd): port_config.ini name, lanes and alias of a cage's sub-ports at 400G (the SN5610N's
# from platform.json: its hwskus have no 2 x 400G rows) and the platform.json mode name.
NEW_MODELS = {
    # device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/port_config.ini
    "SN5600": (
        ("x86_64-nvidia_sn5600-r0", "Mellanox-SN5600-O128"),
        {"Ethernet0": ("0,1,2,3", "etp1a"), "Ethernet4": ("4,5,6,7", "etp1b"), "Ethernet508": ("508,509,510,511", "etp64b")},
        "2x400G[200G,100G,50G,40G,25G,10G]",
        "202405",
    ),
    # device/mellanox/x86_64-nvidia_sn5610n-r0/platform.json (Ethernet0: lanes 0-7, etp1a/etp1b)
    "SN5610N": (
        ("x86_64-nvidia_sn5610n-r0", "Mellanox-SN5610N-C256S2"),
        {"Ethernet0": ("0,1,2,3", "etp1a"), "Ethernet4": ("4,5,6,7", "etp1b"), "Ethernet504": ("504,505,506,507", "etp64a")},
        "2x400G[200G,100G,50G,40G,25G,10G]",
        "202505",
    ),
    # device/dell/x86_64-dell_z9864f-r0/Dell-Z9864f-O64/port_config.ini (etp1 on 1-8, etp33 on
    # 25-32, etp64 on 481-488) and platform.json ("2x400G(8)": etp1a, etp1b)
    "Z9864F-ON": (
        ("x86_64-dell_z9864f-r0", "Dell-Z9864f-O64"),
        {
            "Ethernet0": ("1,2,3,4", "etp1a"),
            "Ethernet4": ("5,6,7,8", "etp1b"),
            "Ethernet256": ("25,26,27,28", "etp33a"),
            "Ethernet508": ("485,486,487,488", "etp64b"),
        },
        "2x400G(8)",
        "202605",
    ),
}
RELEASES = ["202405", "202411", "202505", "202511", "202605", "master"]
SUPPORTED = [(pid, release) for pid, (*_, first) in NEW_MODELS.items() for release in RELEASES[RELEASES.index(first) :]]
REFUSED = [(pid, release) for pid, (*_, first) in NEW_MODELS.items() for release in RELEASES[: RELEASES.index(first)]]


@pytest.mark.parametrize(("pid", "release"), SUPPORTED)
def test_new_models_config_db_passes_the_yang_checks_of_each_release(write_intent, pid, release):
    """A leaf and spine of the model, on every release whose image has its platform files: the
    platform's names, lanes, aliases and breakout mode, and the YANG checks of that release."""
    (platform, hwsku), rows, mode, _ = NEW_MODELS[pid]
    build = compile_intent(write_intent(_intent(pid, release, gpus=128, unit=64)))
    dbs = config_dbs(build)
    assert {c.nos_release for c in build.configs.values()} == {release}
    leaf = next(db for name, db in dbs.items() if "leaf" in name)
    for port, (lanes, alias) in rows.items():
        if port in leaf["PORT"]:
            assert (leaf["PORT"][port]["lanes"], leaf["PORT"][port]["alias"], leaf["PORT"][port]["speed"]) == (lanes, alias, "400000"), port
    assert "Ethernet0" in leaf["PORT"] and leaf["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"] == mode
    for name, db in dbs.items():
        assert (db["DEVICE_METADATA"]["localhost"]["platform"], db["DEVICE_METADATA"]["localhost"]["hwsku"]) == (platform, hwsku), name
        assert violations(db, release) == [], name


@pytest.mark.parametrize(("pid", "release"), REFUSED)
def test_a_release_without_the_platform_files_is_refused(write_intent, pid, release):
    first = NEW_MODELS[pid][3]
    with pytest.raises(FabricgenError) as refused:
        compile_intent(write_intent(_intent(pid, release)), render=False)
    message = str(refused.value)
    assert f"({pid}): SONiC {release} has no platform files for this switch; they arrive in {first}" in message
    assert f"set nos_release: {first} (or later)" in message and "nos_release" in message


def test_new_models_default_to_the_first_release_with_their_platform(write_intent):
    for pid, (*_, first) in NEW_MODELS.items():
        intent = f"gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {{model: {pid}, nos: sonic}}\n  spine: {{model: {pid}, nos: sonic}}\n"
        build = compile_intent(write_intent(intent, name=f"default-{pid.lower()}"), render=False)
        assert {c.nos_release for c in build.configs.values()} == {first}, pid


def test_the_sn5610n_build_says_its_2x400g_is_unverified(write_intent):
    notes = compile_intent(write_intent(_intent("SN5610N", "202505")), render=False).compiled.notes
    said = [note for note in notes if note.startswith("SN5610N on SONiC 202505")]
    assert len(said) == 1 and "unverified on a switch" in said[0], notes
    sn5600 = compile_intent(write_intent(_intent("SN5600", "202505"), name="sn5600"), render=False).compiled.notes
    assert not any(note.startswith("SN5600 on SONiC") for note in sn5600)


USER_SWITCH = """
switches:
  LAB-RELEASES:
    description: lab switch whose SONiC platform files differ by release
    vendor: Example
    nos: [{noses}]
    port_groups:
      - {{count: 4, speed: 400G, form_factor: QSFP-DD, lanes: 8, breakouts: [2x200G]}}
    interface_names:
      sonic: {{port: "Ethernet{{number}}", breakout: "Ethernet{{number}}"}}
      {eos}
    sonic:
      platform: x86_64-example_lab-r0
      hwsku: Example-Lab
      source: a test
      ports:
        - {{first: 1, count: 4, number_base: 0, number_stride: 8, lane_base: 0, lane_stride: 8}}
{sonic}
"""
EOS_NAMES = 'eos: {port: "Ethernet{port}/1", breakout: "Ethernet{port}/{cage_lane}"}'


def _user_catalog(tmp_path, sonic: str, eos: str = EOS_NAMES):
    extra = tmp_path / "extra.yaml"
    extra.write_text(USER_SWITCH.format(sonic=sonic, eos=eos, noses="sonic, eos" if eos else "sonic"))
    return extra


def test_a_user_entry_gives_a_releases_aliases_in_a_few_lines(tmp_path):
    extra = _user_catalog(tmp_path, '      since: "202411"\n      releases:\n        - {releases: ["202411"], source: a test, alias: {nos: eos}}')
    model = load_catalog([extra]).switches["LAB-RELEASES"]
    assert [model.sonic.aliases(release).name(model, 2, 2, 200) for release in ("202411", "202505")] == ["Ethernet2/5", "etp2b"]
    assert model.sonic.missing_in("202405", RELEASES) == "202411" and model.sonic.missing_in("202411", RELEASES) is None
    assert model.sonic.missing_in("4.2.1", RELEASES) is None  # a release of another flavour: its own platform support


@pytest.mark.parametrize(
    ("sonic", "eos", "field", "message"),
    [
        ('      since: "202311"', EOS_NAMES, ("sonic", "since"), "sonic release 202311 is not one fabricgen knows"),
        (
            '      releases:\n        - {releases: ["202405", "20411"], source: a test, alias: {nos: eos}}',
            EOS_NAMES,
            ("sonic", "releases", 0, "releases", 1),
            "sonic release 20411 is not one fabricgen knows",
        ),
        (
            '      releases:\n        - {releases: ["202405"], source: a, alias: {nos: eos}}\n        - {releases: ["202405"], source: b, note: again}',
            EOS_NAMES,
            ("sonic",),
            "names release 202405 twice",
        ),
        ('      releases:\n        - {releases: ["202405"], source: a test}', EOS_NAMES, ("sonic", "releases", 0), "say how they differ (alias or note)"),
        ('      releases:\n        - {releases: ["202405"], source: a test, alias: {nos: eos}}', "", (), "interface_names.eos, which this entry does not give"),
    ],
    ids=["unknown-since", "unknown-release", "release-twice", "no-difference", "alias-nos-without-names"],
)
def test_bad_release_data_is_refused_where_it_is_written(tmp_path, sonic, eos, field, message):
    extra = _user_catalog(tmp_path, sonic, eos)
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    [problem] = caught.value.problems
    assert message in problem.message, problem.message
    assert problem.file == str(extra) and problem.line is not None
    assert problem.field[:2] == ("switches", "LAB-RELEASES") and tuple(problem.field[2 : 2 + len(field)]) == field, problem.field


def test_release_data_needs_a_port_map(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "switches:\n  LAB-BARE:\n    description: lab switch\n    vendor: Example\n    nos: [sonic]\n"
        "    port_groups:\n      - {count: 4, speed: 400G, form_factor: QSFP-DD, lanes: 8}\n"
        '    interface_names:\n      sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}\n'
        '    sonic: {since: "202411"}\n'
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    assert "give its port map (ports) with them" in caught.value.problems[0].message
