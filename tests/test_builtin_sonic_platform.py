"""The built-in SONiC switch: Arista 7060X6-64PE, whose config_db carries its platform's own lanes,
port names, platform and hwsku, so it loads as is.

Every expected value below is copied by hand from sonic-buildimage (master 086b03bd, 2026-08-23)
device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/: port_config.ini (name,
lanes, alias, index), qos.json.j2 (WRED_PROFILE WRED_LOSSLESS_Q3) and sai.profile
(SAI_NUM_ECMP_MEMBERS), not computed from the catalog entry under test.
"""

from __future__ import annotations

import pytest

from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import needs_frr
from tests.sonic_yang import violations
from tests.test_render_sonic import config_dbs, frr_confs, sonic_switches, vtysh_dryrun

PID = "DCS-7060X6-64PE"
PLATFORM = ("x86_64-arista_7060x6_64pe", "Arista-7060X6-64PE-O128S2")

# port_config.ini rows: name -> (lanes, alias, index). Cages whose lanes are out of front-panel
# order (etp1 on 17-24, etp2 on 1-8, etp5 on 57-64), the last cage, whose second half has lower
# lanes than a neighbour's, and the two SFP+ ports, named 512 and 513 but on lanes 513 and 515.
PORT_CONFIG_INI = {
    "Ethernet0": ("17,18,19,20", "etp1a", "1"),
    "Ethernet4": ("21,22,23,24", "etp1b", "1"),
    "Ethernet8": ("1,2,3,4", "etp2a", "2"),
    "Ethernet12": ("5,6,7,8", "etp2b", "2"),
    "Ethernet32": ("57,58,59,60", "etp5a", "5"),
    "Ethernet36": ("61,62,63,64", "etp5b", "5"),
    "Ethernet264": ("257,258,259,260", "etp34a", "34"),
    "Ethernet444": ("437,438,439,440", "etp56b", "56"),
    "Ethernet468": ("453,454,455,456", "etp59b", "59"),
    "Ethernet480": ("505,506,507,508", "etp61a", "61"),
    "Ethernet496": ("481,482,483,484", "etp63a", "63"),
    "Ethernet508": ("501,502,503,504", "etp64b", "64"),
}
SFP_PORTS = {"Ethernet512": ("513", "etp65", "65"), "Ethernet513": ("515", "etp66", "66")}


@pytest.fixture(scope="module")
def arista_build(tmp_path_factory):
    """1,024 GPUs on two 512-GPU units, every leaf and spine the built-in 7060X6 under SONiC."""
    path = tmp_path_factory.mktemp("arista") / "arista.yaml"
    path.write_text(f"gpus: 1024\nbackend:\n  scalable_unit_gpus: 512\n  leaf: {{model: {PID}, nos: sonic}}\n  spine: {{model: {PID}, nos: sonic}}\n")
    return compile_intent(path)


def test_the_catalog_entry_is_the_platforms_port_config():
    model = load_catalog().switches[PID]
    assert (model.sonic.platform, model.sonic.hwsku) == PLATFORM and model.platform_mapped
    assert "sonic" in model.nos and model.ports_at(400) == 128 and model.ports_at(800) == 64
    for name, (lanes, alias, index) in PORT_CONFIG_INI.items():
        cage, sub = int(index), 1 if alias.endswith("a") else 2
        got = (model.name_of("sonic", cage, sub, 400), model.port_lanes(cage, sub, 400), model.sonic.alias.name(model, cage, sub, 400))
        assert got == (name, tuple(int(lane) for lane in lanes.split(",")), alias), name
    for name, (lanes, alias, index) in SFP_PORTS.items():
        cage = int(index)
        assert (model.name_of("sonic", cage), model.port_lanes(cage, 0, 10), model.sonic.alias.name(model, cage, 0, 10)) == (name, (int(lanes),), alias)
    # sai.profile: SAI_NUM_ECMP_MEMBERS=128; qos.json.j2: 131072 / 262144 bytes, probability 5
    assert model.max_ecmp_paths == 128 and model.rack_units == 2
    ecn = model.qos.ecn[400]
    assert (ecn.min_kbytes * 1024, ecn.max_kbytes * 1024, ecn.drop_probability) == (131072, 262144, 5)


def test_every_config_db_is_the_platforms(arista_build):
    dbs = config_dbs(arista_build)
    assert {arista_build.fabric.devices[name].model for name in dbs} == {PID}
    assert len(dbs) == 16 + 8  # 16 leaves, 8 spines
    for name, db in dbs.items():
        metadata = db["DEVICE_METADATA"]["localhost"]
        assert (metadata["platform"], metadata["hwsku"]) == PLATFORM, name
        ports = db["PORT"]
        # every cage cabled, as 2 x 400G, as the hwsku's hwsku.json defaults them; SFP+ unused
        assert len(ports) == 128 and all(p["speed"] == "400000" for p in ports.values()), name
        assert {row["brkout_mode"] for row in db["BREAKOUT_CFG"].values()} == {"2x400G"} and len(db["BREAKOUT_CFG"]) == 64, name
        for port, (lanes, alias, index) in PORT_CONFIG_INI.items():
            assert (ports[port]["lanes"], ports[port]["alias"], ports[port]["index"]) == (lanes, alias, index), (name, port)


def test_every_config_db_passes_the_yang_checks(arista_build):
    assert {name: violations(db) for name, db in config_dbs(arista_build).items() if violations(db)} == {}


def test_the_build_does_not_call_the_platform_unverified(arista_build):
    assert not any("UNVERIFIED SONiC platform" in note for note in arista_build.compiled.notes)
    # the ECN is the platform's published value; what stays generic is said
    assert not any(f"{PID}: ECN" in note for note in arista_build.compiled.notes)


def test_lossless_queues_mark_at_the_platforms_wred_thresholds(arista_build):
    for name, db in config_dbs(arista_build).items():
        profiles = db["WRED_PROFILE"]
        assert profiles, name
        for profile in profiles.values():
            for colour in ("green", "yellow", "red"):
                assert (profile[f"{colour}_min_threshold"], profile[f"{colour}_max_threshold"], profile[f"{colour}_drop_probability"]) == (
                    "131072",
                    "262144",
                    "5",
                ), name


def test_leaves_use_every_spine_path(arista_build):
    # 8 spines, 8 links each: 64 equal-cost uplinks per leaf, within the hwsku's 128 ECMP members
    leaves = [d for d in sonic_switches(arista_build) if "leaf" in d.name]
    confs = frr_confs(arista_build)
    for leaf in leaves:
        assert "maximum-paths 64" in confs[leaf.name], leaf.name


@needs_frr
@pytest.mark.frr
def test_frr_accepts_every_frr_conf(arista_build, tmp_path):
    confs = frr_confs(arista_build)
    assert len(confs) == 24
    assert vtysh_dryrun(confs, tmp_path) == {}


def test_builds_target_the_first_release_with_this_platform_data(arista_build, write_intent):
    # port_config.ini with etp aliases, the ECN profile and SAI_NUM_ECMP_MEMBERS: 202505 onwards
    assert {c.nos_release for c in arista_build.configs.values()} == {"202505"}
    intent = (
        f'gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {{model: {PID}, nos: sonic, nos_release: "202411"}}\n  spine: {{model: {PID}, nos: sonic}}\n'
    )
    older = compile_intent(write_intent(intent), render=False).configs
    assert {c.role.value: c.nos_release for c in older.values()} == {"leaf": "202411", "spine": "202505"}
