"""The 51.2T SONiC switches of issue 32's catalog: Celestica DS5000, Edgecore AIS800-64D (both with a
public SONiC port map, in open sonic-buildimage pull requests) and Cisco 8122-64EH-O (none public).

Every expected value below is copied by hand from the platform files, not computed from the catalog
entries under test:
- DS5000: sonic-net/sonic-buildimage PR 28275 head fe6e3415,
  device/celestica/x86_64-cls_ds5000-r0/DS5000/port_config.ini and platform.json;
- AIS800-64D: sonic-net/sonic-buildimage PR 18493 head bf5bddbb,
  device/accton/x86_64-accton_as9817_64d-r0/Accton-AS9817-64D/port_config.ini and platform.json;
- 8122-64EH-O: sonic-mgmt 0a489975 ansible/module_utils/port_utils.py (Cisco-8122-O128 names).
"""

from __future__ import annotations

import pytest

from fabricgen.basics.errors import DesignError
from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from tests.sonic_yang import RELEASES, violations
from tests.test_render_sonic import config_dbs

# port_config.ini rows: name -> (lanes, index). Cages whose lanes are out of front-panel order,
# the last cage, and the two SFP28 ports (numbered 512/513, on lanes that are not).
DS5000_ROWS = {
    "Ethernet0": ("1,2,3,4,5,6,7,8", "1"),
    "Ethernet8": ("17,18,19,20,21,22,23,24", "2"),
    "Ethernet24": ("9,10,11,12,13,14,15,16", "4"),
    "Ethernet248": ("233,234,235,236,237,238,239,240", "32"),
    "Ethernet264": ("273,274,275,276,277,278,279,280", "34"),
    "Ethernet504": ("489,490,491,492,493,494,495,496", "64"),
    "Ethernet512": ("516", "65"),
    "Ethernet513": ("515", "66"),
}
AIS800_ROWS = {
    "Ethernet0": ("1,2,3,4,5,6,7,8", "1"),
    "Ethernet16": ("41,42,43,44,45,46,47,48", "3"),
    "Ethernet24": ("33,34,35,36,37,38,39,40", "4"),
    "Ethernet256": ("17,18,19,20,21,22,23,24", "33"),
    "Ethernet368": ("249,250,251,252,253,254,255,256", "47"),
    "Ethernet504": ("497,498,499,500,501,502,503,504", "64"),
    "Ethernet512": ("514", "65"),
    "Ethernet513": ("513", "66"),
}
MAPPED = {
    # PID: (platform, hwsku, port_config.ini rows, platform.json's name of the 2x400G mode)
    "DS5000": ("x86_64-cls_ds5000-r0", "DS5000", DS5000_ROWS, "2x400G"),
    "AIS800-64D": ("x86_64-accton_as9817_64d-r0", "Accton-AS9817-64D", AIS800_ROWS, "2x400G[200G]"),
}
CISCO = "8122-64EH-O"
MODELS = (*MAPPED, CISCO)

# The catalog has no built-in 800G QSFP-DD optic (none could be sourced), so a fabric of the
# QSFP-DD800 AIS800-64D names one in a user catalog. A test stand-in, not a real part.
FIXTURE_OPTIC = """\
transceivers:
  TEST-QDD-800G-2X400G:
    description: test stand-in for an 800G QSFP-DD 2 x 400G-DR4 module
    form_factor: QSFP-DD
    speed: 800G
    links: 2
    also_links: [1]
    media: smf
    connector: MPO-12
    reach_m: 500
    cable: CB-M12-M12-SMF
    default: true
"""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _fabric(directory, pid: str, release: str | None = None):
    """64 GPUs of the default 8 x 400G node in two 32-GPU units, every leaf and spine `pid` on
    SONiC (`release` when given)."""
    on = f', nos_release: "{release}"' if release else ""
    head = "catalog: [optic.yaml]\n" if pid == "AIS800-64D" else ""
    (directory / "optic.yaml").write_text(FIXTURE_OPTIC)
    path = directory / "fabric.yaml"
    path.write_text(
        f"{head}gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {{model: {pid}, nos: sonic{on}}}\n  spine: {{model: {pid}, nos: sonic{on}}}\n"
    )
    return compile_intent(path)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    return {pid: _fabric(tmp_path_factory.mktemp(pid), pid) for pid in MODELS}


@pytest.mark.parametrize("pid", MODELS)
def test_each_entry_offers_128_ports_at_400g_with_distinct_names(catalog, pid):
    model = catalog.switches[pid]
    assert model.nos == ["sonic"] and model.rack_units == 2
    assert model.ports_at(400) == 128 and model.ports_at(800) == 64
    names = [model.name_of("sonic", cage, sub, 400) for cage in range(1, 65) for sub in (1, 2)]
    names += [model.name_of("sonic", group.first + k) for group in model.port_groups[1:] for k in range(group.count)]
    assert len(names) == len(set(names)), pid


@pytest.mark.parametrize("pid", MAPPED)
def test_the_entry_is_the_platforms_port_config(catalog, pid):
    platform, hwsku, rows, _ = MAPPED[pid]
    model = catalog.switches[pid]
    assert (model.sonic.platform, model.sonic.hwsku) == (platform, hwsku) and model.platform_mapped
    for name, (lanes, index) in rows.items():
        cage = int(index)
        assert (model.name_of("sonic", cage), ",".join(map(str, model.port_lanes(cage, 0, 0)))) == (name, lanes), name
    # 2x400G: SONiC's breakout gives sub-port 2 the cage's number + 4 and the second half of its lanes
    number, first = 264 if pid == "DS5000" else 16, 273 if pid == "DS5000" else 41
    cage = int(rows[f"Ethernet{number}"][1])
    assert model.name_of("sonic", cage, 2, 400) == f"Ethernet{number + 4}"
    assert model.port_lanes(cage, 2, 400) == tuple(range(first + 4, first + 8))


@pytest.mark.parametrize("pid", MAPPED)
def test_config_db_carries_the_platforms_ports(builds, pid):
    platform, hwsku, rows, mode = MAPPED[pid]
    dbs = config_dbs(builds[pid])
    assert len(dbs) == 16 + 2  # 8 rails x 2 units of leaves, 2 spines
    for name, db in dbs.items():
        metadata = db["DEVICE_METADATA"]["localhost"]
        assert (metadata["platform"], metadata["hwsku"]) == (platform, hwsku), name
        assert all(port["speed"] == "400000" for port in db["PORT"].values()), name
        assert {row["brkout_mode"] for row in db["BREAKOUT_CFG"].values()} == {mode}, name
        ports = db["PORT"]
        if "Ethernet0" in ports:  # cage 1, split: lanes 1-4 and 5-8, index 1
            assert (ports["Ethernet0"]["lanes"], ports["Ethernet0"]["index"]) == ("1,2,3,4", rows["Ethernet0"][1]), name
        aliases = [port["alias"] for port in ports.values()]
        assert len(aliases) == len(set(aliases)), name
    assert not any("UNVERIFIED SONiC platform" in note for note in builds[pid].compiled.notes)


def test_cisco_names_are_sonic_mgmts_and_the_build_says_the_rest_is_generic(builds, catalog):
    model = catalog.switches[CISCO]
    assert not model.platform_mapped and "Cisco-8000-sonic/platform-cisco-8000" in model.sonic.unverified
    # port_utils.py, Cisco-8122-O128: etp<i>a -> Ethernet<8i>, etp<i>b -> Ethernet<8i+4>, i from 0
    assert [model.name_of("sonic", i + 1, sub, 400) for i in (0, 1, 63) for sub in (1, 2)] == [
        "Ethernet0",
        "Ethernet4",
        "Ethernet8",
        "Ethernet12",
        "Ethernet504",
        "Ethernet508",
    ]
    build = builds[CISCO]
    assert any(note.startswith(f"UNVERIFIED SONiC platform: {CISCO} ") for note in build.compiled.notes)
    for name, db in config_dbs(build).items():
        assert not {"platform", "hwsku"} & set(db["DEVICE_METADATA"]["localhost"]), name


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("pid", MODELS)
def test_every_config_db_passes_the_yang_checks_of_each_release(tmp_path, pid, release):
    build = _fabric(tmp_path, pid, release)
    dbs = config_dbs(build)
    assert dbs and {build.configs[name].nos_release for name in dbs} == {release}
    assert {name: violations(db, release) for name, db in dbs.items() if violations(db, release)} == {}


def test_the_qsfp_dd_800g_switch_needs_an_optic_the_built_in_catalog_lacks(tmp_path):
    path = tmp_path / "fabric.yaml"
    path.write_text("gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {model: AIS800-64D, nos: sonic}\n  spine: {model: AIS800-64D, nos: sonic}\n")
    with pytest.raises(DesignError) as caught:
        compile_intent(path)
    assert any("no default transceiver for QSFP-DD 800G cages carrying 400G links" in p.message for p in caught.value.problems)
