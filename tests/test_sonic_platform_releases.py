"""SONiC platform data per release: a switch's aliases (and what else its platform files say)
follow the release its config is written for, and a release whose image has no platform files for
the switch is refused.

Expected values are copied by hand from sonic-buildimage, not computed from the catalog entry:
device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/port_config.ini on branch
202411 (566f5575) and 202405 (cfc766e1; the same file) and on 202505 (ff3c0c9f).
"""

from __future__ import annotations

import pytest

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


def test_7060x6_aliases_are_etp_from_202505(write_intent):
    build = compile_intent(write_intent(_intent(ARISTA, "202505")))
    leaf = next(db for name, db in config_dbs(build).items() if "leaf" in name)
    for port, (lanes, alias) in ROWS_202505.items():
        if port in leaf["PORT"]:
            assert (leaf["PORT"][port]["lanes"], leaf["PORT"][port]["alias"]) == (lanes, alias), port


def test_7060x6_before_202505_says_what_its_platform_files_get_wrong(write_intent):
    notes = compile_intent(write_intent(_intent(ARISTA, "202411")), render=False).compiled.notes
    said = [note for note in notes if ARISTA in note and "202411" in note and "Ethernet444" in note]
    assert len(said) == 1, notes
    assert "#21561" in said[0]
    newer = compile_intent(write_intent(_intent(ARISTA, "202505"), name="newer"), render=False).compiled.notes
    assert not any("Ethernet444" in note for note in newer)


def test_the_7060x6_entry_says_where_each_release_differs():
    from fabricgen.catalog import load_catalog

    model = load_catalog().switches[ARISTA]
    assert model.sonic.aliases("202411").name(model, 1, 2, 400) == "Ethernet1/5"
    assert model.sonic.aliases("202411").name(model, 65, 0, 10) == "Ethernet65"
    assert model.sonic.aliases("202511").name(model, 1, 2, 400) == "etp1b"
    assert model.sonic.aliases("master").name(model, 65, 0, 10) == "etp65"
