"""Physical layout: racks and positions, cable run estimates, and the medium that reaches."""

from __future__ import annotations

import pytest

from fabricgen.basics.errors import CatalogError, Problem
from fabricgen.catalog import load_catalog
from fabricgen.compiler.design.layout import (
    MediaChoice,
    Position,
    Rack,
    cable_length_m,
    choose_media,
    place,
)
from fabricgen.intent.model import Layout

RU = 0.04445


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def items(gpu=0, gpu_ru=10, server=0, server_ru=4, network=0, network_ru=2):
    """Build-order items: GPU nodes, then servers, then switches, named by kind and number."""
    return (
        [(f"gpu{i:04d}", "gpu", gpu_ru) for i in range(1, gpu + 1)]
        + [(f"srv{i:03d}", "server", server_ru) for i in range(1, server + 1)]
        + [(f"sw{i:03d}", "network", network_ru) for i in range(1, network + 1)]
    )


def kinds(placement):
    return [rack.kind for rack in placement.racks]


# -- placement -------------------------------------------------------------------------------


def test_gpu_nodes_per_rack_stacked_from_ru_1():
    placement = place(items(gpu=10, gpu_ru=10), Layout(gpu_nodes_per_rack=4))
    assert not placement.problems
    per_rack = {}
    for i in range(1, 11):
        position = placement.positions[f"gpu{i:04d}"]
        per_rack.setdefault(position.rack.name, []).append(position.ru)
    # 10 nodes at 4 per rack: 4, 4, 2; each 10 RU tall, so at RU 1, 11, 21, 31
    assert list(per_rack.values()) == [[1, 11, 21, 31], [1, 11, 21, 31], [1, 11]]
    assert all(placement.positions[f"gpu{i:04d}"].height == 10 for i in range(1, 11))


def test_servers_and_switches_fill_racks_by_rack_units():
    placement = place(items(server=11, server_ru=4, network=22, network_ru=2), Layout(rack_units=42))
    assert not placement.problems
    # servers: 10 x 4 RU = 40 fit in 42, the 11th starts the next rack
    first, eleventh = placement.positions["srv001"], placement.positions["srv011"]
    assert placement.positions["srv010"].rack == first.rack and placement.positions["srv010"].ru == 37
    assert eleventh.rack != first.rack and eleventh.ru == 1
    # switches: 21 x 2 RU = 42 fill a rack exactly, the 22nd starts the next
    assert placement.positions["sw021"].rack == placement.positions["sw001"].rack
    assert placement.positions["sw021"].ru == 41
    assert placement.positions["sw022"].rack != placement.positions["sw001"].rack
    assert kinds(placement) == ["server", "server", "network", "network"]


@pytest.mark.parametrize(
    "where, expected",
    [
        # 3 GPU racks + 1 server rack = 4 compute racks, 2 network racks
        ("start", ["network", "network", "gpu", "gpu", "gpu", "server"]),
        ("middle", ["gpu", "gpu", "network", "network", "gpu", "server"]),
        ("end", ["gpu", "gpu", "gpu", "server", "network", "network"]),
    ],
)
def test_network_racks_stand_at_start_middle_or_end(where, expected):
    placement = place(items(gpu=12, server=2, network=22), Layout(network_racks=where, gpu_nodes_per_rack=4))
    assert kinds(placement) == expected
    # every device sits in a rack of its own kind
    for name, kind, _ in items(gpu=12, server=2, network=22):
        assert placement.positions[name].rack.kind == kind, name


def test_middle_with_an_odd_number_of_compute_racks_puts_the_larger_half_first():
    placement = place(items(gpu=12, network=1), Layout(network_racks="middle", gpu_nodes_per_rack=4))
    assert kinds(placement) == ["gpu", "gpu", "network", "gpu"]


def test_rows_wrap_and_racks_are_named_by_row_and_column():
    placement = place(items(gpu=24, network=1), Layout(racks_per_row=4, gpu_nodes_per_rack=4))
    assert [rack.name for rack in placement.racks] == ["R01-01", "R01-02", "R01-03", "R01-04", "R02-01", "R02-02", "R02-03"]
    assert placement.racks[4] == Rack("R02-01", 2, 1, "gpu")
    assert placement.racks[-1] == Rack("R02-03", 2, 3, "network")
    assert placement.positions["gpu0021"].rack.name == "R02-02"  # nodes 21-24 in the sixth rack


def test_too_few_racks_says_how_many_the_design_needs():
    layout = Layout(racks=8, gpu_nodes_per_rack=4)
    # 32 GPU nodes -> 8 racks; 3 servers of 4 RU -> 1 rack; 30 switches of 2 RU -> 21 + 9: 2 racks
    placement = place(items(gpu=32, server=3, network=30), layout)
    assert len(placement.racks) == 11
    [problem] = placement.problems
    assert problem.field == ("layout", "racks")
    assert problem.message == ("the layout has 8 racks; the design needs 11: 8 GPU racks (32 nodes at 4 per rack), 1 server rack, 2 network racks")
    assert "11" in problem.hint


def test_enough_racks_is_no_problem():
    assert not place(items(gpu=32, server=3, network=30), Layout(racks=11)).problems


def test_a_device_taller_than_a_rack():
    placement = place([("big-chassis", "network", 10), ("sw001", "network", 2)], Layout(rack_units=8))
    [problem] = placement.problems
    assert problem.field == ("layout", "rack_units")
    assert "big-chassis" in problem.message and "10 RU" in problem.message
    # still placed, alone in its rack; the next switch starts another
    assert placement.positions["big-chassis"].ru == 1
    assert placement.positions["sw001"].rack != placement.positions["big-chassis"].rack


def test_gpu_nodes_that_do_not_fit_their_rack():
    # 4 nodes x 10 RU = 40 RU in a 38 RU rack
    placement = place(items(gpu=4, gpu_ru=10), Layout(rack_units=38, gpu_nodes_per_rack=4))
    [problem] = placement.problems
    assert problem.field == ("layout", "gpu_nodes_per_rack")
    assert "R01-01" in problem.message and "40 RU" in problem.message


def test_tens_of_thousands_of_devices():
    placement = place(items(gpu=20_000, server=500, network=3_000), Layout(gpu_nodes_per_rack=4, racks_per_row=20))
    assert len(placement.positions) == 23_500
    # 5000 GPU racks, 500 x 4 RU / 40 per rack = 50 server racks, 3000 x 2 RU / 21 per rack = 143 network racks
    assert kinds(placement).count("gpu") == 5000
    assert kinds(placement).count("server") == 50
    assert kinds(placement).count("network") == 143
    assert placement.racks[-1].name == "R260-13"  # 5193 racks: 259 full rows of 20, then 13


# -- cable length ----------------------------------------------------------------------------


def test_same_rack_run_is_vertical_plus_slack():
    layout = Layout()  # slack 2 m
    rack = Rack("R01-01", 1, 1, "network")
    a, b = Position(rack, 1, 2), Position(rack, 41, 2)
    # 40 RU x 0.04445 m = 1.778 m, + 2 m slack
    assert cable_length_m(a, b, layout) == pytest.approx(40 * 0.04445 + 2.0)
    assert cable_length_m(a, b, layout) == pytest.approx(3.778)


def test_neighbour_rack_run_goes_up_across_and_down():
    layout = Layout()  # 42 RU, tray 0.5 m above the racks, 0.6 m racks, slack 2 m
    a = Position(Rack("R01-01", 1, 1, "gpu"), 10, 10)
    b = Position(Rack("R01-02", 1, 2, "network"), 40, 2)
    up_a = (42 - 10) * RU + 0.5  # 1.4224 + 0.5 = 1.9224
    up_b = (42 - 40) * RU + 0.5  # 0.0889 + 0.5 = 0.5889
    along = 1 * 0.6
    assert cable_length_m(a, b, layout) == pytest.approx(up_a + along + up_b + 2.0)
    assert cable_length_m(a, b, layout) == pytest.approx(5.1113)


def test_run_across_rows_adds_row_pitch():
    layout = Layout(row_pitch_m=3.0)
    a = Position(Rack("R01-02", 1, 2, "gpu"), 1, 10)
    b = Position(Rack("R03-05", 3, 5, "network"), 1, 2)
    up = 2 * ((42 - 1) * RU + 0.5)  # 2 x (1.82245 + 0.5) = 4.6449
    along = 3 * 0.6 + 2 * 3.0  # 3 columns + 2 rows = 7.8
    assert cable_length_m(a, b, layout) == pytest.approx(up + along + 2.0)
    assert cable_length_m(a, b, layout) == pytest.approx(14.4449)
    assert cable_length_m(a, b, layout) == pytest.approx(cable_length_m(b, a, layout))


# -- media -----------------------------------------------------------------------------------


def media(catalog, length_m, *, ff="QSFP-DD", speed=400, link=None, far=None, preferred=None):
    return choose_media(
        catalog,
        cage_form_factor=ff,
        cage_speed=speed,
        link_speed=link or speed,
        far_form_factor=far,
        length_m=length_m,
        preferred=preferred,
    )


def test_no_layout_keeps_the_default_optic(catalog):
    assert media(catalog, None) == MediaChoice("QDD-400G-DR4-S", "CB-M12-M12-SMF", None)
    assert media(catalog, None, ff="QSFP28", speed=100) == MediaChoice("QSFP-100G-DR-S", "CB-LC-LC-SMF", None)
    # the 2x400G default of an 800G OSFP cage
    assert media(catalog, None, ff="OSFP", speed=800, link=400) == MediaChoice("OSFP-800G-DR8", "CB-M12-M12-SMF", None)


def test_no_layout_honours_the_preferred_optic_and_checks_it_fits(catalog):
    assert media(catalog, None, preferred="QDD-400G-FR4-S") == MediaChoice("QDD-400G-FR4-S", "CB-LC-LC-SMF", None)
    problem = media(catalog, None, preferred="QSFP-100G-DR-S")
    assert isinstance(problem, Problem) and "does not fit" in problem.message and problem.field == ()


def test_2m_in_rack_switch_to_switch_is_a_dac(catalog):
    assert media(catalog, 2.0) == MediaChoice("QDD-400-CU2M", None, 2.0)
    # the shortest DAC that covers the run, never a shorter one
    assert media(catalog, 1.2) == MediaChoice("QDD-400-CU2M", None, 2.0)
    assert media(catalog, 2.5) == MediaChoice("QDD-400-CU3M", None, 3.0)


def test_float_noise_does_not_cost_a_cable_size(catalog):
    assert media(catalog, 2.0000001) == MediaChoice("QDD-400-CU2M", None, 2.0)


def test_12m_is_an_aoc_of_15m(catalog):
    assert media(catalog, 12.0) == MediaChoice("QDD-400-AOC15M", None, 15.0)


def test_60m_is_multimode_with_the_shortest_trunk_that_covers_it(catalog):
    choice = media(catalog, 60.0)
    # longer than every AOC (30 m): the multimode SR8 (100 m) before single-mode
    assert choice.optic == "QDD-400G-SR8-S" and choice.cable == "CB-M16-M16-MMF"
    lengths = catalog.cables["CB-M16-M16-MMF"].lengths_m
    assert choice.cable_length_m == min(length for length in lengths if length >= 60)


def test_220m_is_single_mode_dr4(catalog):
    choice = media(catalog, 220.0)
    assert choice.optic == "QDD-400G-DR4-S" and choice.cable == "CB-M12-M12-SMF"
    assert choice.cable_length_m >= 220
    assert choice.cable_length_m == min(length for length in catalog.cables["CB-M12-M12-SMF"].lengths_m if length >= 220)


def test_900m_is_fr4(catalog):
    choice = media(catalog, 900.0)
    assert choice.optic == "QDD-400G-FR4-S" and choice.cable == "CB-LC-LC-SMF" and choice.cable_length_m >= 900


def test_3km_has_no_answer(catalog):
    problem = media(catalog, 3000.0)
    assert isinstance(problem, Problem)
    assert "3000 m" in problem.message and "QSFP-DD 400G" in problem.message
    assert "QDD-400G-FR4-S, 2000 m" in problem.message  # the longest reach available
    assert "catalog" in problem.hint and "closer" in problem.hint


def test_preferred_optic_with_too_short_a_reach(catalog):
    problem = media(catalog, 212.0, preferred="QDD-400G-SR8-S")
    assert isinstance(problem, Problem)
    assert problem.message == "a 212 m run exceeds QDD-400G-SR8-S's reach (100 m)"
    assert problem.hint and problem.field == ()


def test_preferred_optic_that_reaches_gets_a_standard_cable_length(catalog):
    assert media(catalog, 7.5, preferred="QDD-400G-DR4-S") == MediaChoice("QDD-400G-DR4-S", "CB-M12-M12-SMF", 10.0)


def test_preferred_dac_too_short(catalog):
    problem = media(catalog, 4.0, preferred="QDD-400-CU3M")
    assert isinstance(problem, Problem) and "QDD-400-CU3M" in problem.message


def test_host_link_to_an_osfp_nic_takes_no_qsfp_dd_dac(catalog):
    # a 2 m run from a QSFP-DD leaf cage to a GPU's OSFP NIC: a QSFP-DD-to-QSFP-DD DAC or AOC cannot
    # plug into the far end, so the cheapest pluggable optic that reaches
    choice = media(catalog, 2.0, far="OSFP")
    assert catalog.transceivers[choice.optic].media not in ("dac", "aoc")
    assert choice.cable is not None and choice.cable_length_m == 2.0
    assert choice.optic == "QDD-400G-SR8-S"


def test_a_dac_with_a_different_far_end_serves_that_far_end(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        """
transceivers:
  LAB-QDD-OSFP-CU2M:
    description: 400G QSFP-DD to OSFP passive copper cable, 2m
    form_factor: QSFP-DD
    far_form_factor: OSFP
    speed: 400G
    media: dac
    connector: OSFP
    reach_m: 2
    length_m: 2
"""
    )
    catalog = load_catalog([extra])
    assert media(catalog, 2.0, far="OSFP") == MediaChoice("LAB-QDD-OSFP-CU2M", None, 2.0)
    # and not between two switch cages of the same form factor
    assert media(catalog, 2.0) == MediaChoice("QDD-400-CU2M", None, 2.0)


def test_100g_cages(catalog):
    assert media(catalog, 3.0, ff="QSFP28", speed=100) == MediaChoice("QSFP-100G-CU3M", None, 3.0)
    assert media(catalog, 25.0, ff="QSFP28", speed=100) == MediaChoice("QSFP-100G-AOC25M", None, 25.0)
    assert media(catalog, 80.0, ff="QSFP28", speed=100).optic == "QSFP-100G-SR4-S"
    assert media(catalog, 300.0, ff="QSFP28", speed=100).optic == "QSFP-100G-DR-S"
    assert media(catalog, 1500.0, ff="QSFP28", speed=100).optic == "QSFP-100G-FR-S"


def test_rj45_copper_runs(catalog):
    choice = media(catalog, 50.0, ff="RJ45", speed=10)
    assert choice.optic is None and catalog.cables[choice.cable].media == "copper"
    assert catalog.cables[choice.cable].connector == "RJ45"
    assert choice.cable_length_m >= 50
    # no layout: the catalog's Ethernet copper cable, the one GLC-TE takes
    assert media(catalog, None, ff="RJ45", speed=1) == MediaChoice(None, "CAB-CAT5E/6E", None)
    # never the console server's octal async cable, though it has RJ45 ends too
    assert media(catalog, 3.0, ff="RJ45", speed=1).cable != "CAB-HD8-ASYNC"
    problem = media(catalog, 120.0, ff="RJ45", speed=10)
    assert isinstance(problem, Problem) and "100 m" in problem.message


def test_answers_are_cached_per_catalog(catalog):
    first = media(catalog, 12.0)
    assert media(catalog, 12.0) is first
    other = load_catalog()
    assert media(other, 12.0) == first


def test_a_dac_without_its_length_is_refused(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        """
transceivers:
  LAB-DAC:
    description: a DAC of unknown length
    form_factor: QSFP-DD
    speed: 400G
    media: dac
    connector: QSFP-DD
    reach_m: 2
"""
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    assert any("length_m" in problem.message for problem in caught.value.problems)


def test_every_dac_and_aoc_in_the_catalog_is_as_long_as_it_reaches(catalog):
    for pid, optic in catalog.transceivers.items():
        if optic.media in ("dac", "aoc"):
            assert optic.cable is None and optic.length_m == optic.reach_m, pid
