"""Sizing and the backend graph: whitepaper and SuperPOD figures, ratios, rails, port layout."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from fabricgen.basics.errors import DesignError
from fabricgen.basics.units import format_ratio
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.pipeline import compile_intent


def design(write_intent, text):
    return compile_intent(write_intent(text), render=False)


def design_problems(write_intent, text):
    with pytest.raises(DesignError) as caught:
        compile_intent(write_intent(text), render=False)
    return caught.value.problems


def uplinks_by_spine(leaf):
    return Counter(p.link.other(p).device.name for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC)


# --- the whitepaper's two clusters (acceptance) -----------------------------------------------


@pytest.mark.parametrize("gpus, leaves, spines, per_spine", [(256, 8, 4, 8), (512, 16, 8, 4)])
def test_whitepaper_switch_counts_and_mesh(whitepaper, gpus, leaves, spines, per_spine):
    fabric = whitepaper[gpus].fabric
    leaf_devices = list(fabric.by_role(Role.LEAF, Network.BACKEND))
    spine_devices = list(fabric.by_role(Role.SPINE, Network.BACKEND))
    assert (len(leaf_devices), len(spine_devices)) == (leaves, spines)
    for leaf in leaf_devices:
        kinds = Counter(p.link.kind for p in leaf.ports.values())
        assert kinds[LinkKind.HOST] == 32 and kinds[LinkKind.FABRIC] == 32, leaf.name
        assert uplinks_by_spine(leaf) == {s.name: per_spine for s in spine_devices}, leaf.name
    for spine in spine_devices:
        from_leaves = Counter(p.link.other(p).device.name for p in spine.ports.values() if p.link.kind is LinkKind.FABRIC)
        assert from_leaves == {leaf.name: per_spine for leaf in leaf_devices}, spine.name


@pytest.mark.parametrize("gpus", [256, 512])
def test_nic_i_of_every_node_lands_on_leaf_i_of_its_unit(whitepaper, gpus):
    fabric = whitepaper[gpus].fabric
    nodes = list(fabric.by_role(Role.GPU_NODE))
    assert len(nodes) == gpus // 8
    for node in nodes:
        backend_ports = [p for p in node.ports.values() if p.link.network is Network.BACKEND]
        assert len(backend_ports) == 8
        for nic in backend_ports:
            leaf = nic.link.other(nic).device
            assert (leaf.rail, leaf.su) == (nic.cage, node.su), f"{node.name} {nic.name} -> {leaf.name}"
    # the second unit of the 512-GPU cluster has its own eight leaves
    if gpus == 512:
        units = Counter(node.su for node in nodes)
        assert units == {1: 32, 2: 32}


def test_whitepaper_port_layout_down_first_then_up(whitepaper):
    leaf = whitepaper[256].fabric.devices["be-su01-leaf1"]
    host = sorted(p.cage for p in leaf.ports.values() if p.link.kind is LinkKind.HOST)
    fabric = sorted(p.cage for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC)
    assert host == list(range(1, 33)) and fabric == list(range(33, 65))
    assert leaf.ports["Ethernet1/1"].link.other(leaf.ports["Ethernet1/1"]).device.name == "gpu0001"


# --- SuperPOD and scale figures (shared/DOMAIN.md §3) ----------------------------------------


@pytest.mark.parametrize(
    "gpus, leaves, spines",
    [(256, 8, 4), (512, 16, 8), (1024, 32, 16), (2048, 64, 32)],
)
def test_two_tier_with_64_port_switches(write_intent, gpus, leaves, spines):
    s = design(write_intent, f"gpus: {gpus}\n").sizing
    assert (s.leaves, s.spines, s.leaf_uplinks) == (leaves, spines, 32)


def test_8192_gpus_on_128_port_switches(write_intent):
    build = design(
        write_intent,
        """
        gpus: 8192
        backend:
          scalable_unit_gpus: 512
          leaf: {model: N9364E-SG2-O}
          spine: {model: N9364E-SG2-O}
        """,
    )
    s = build.sizing
    assert (s.leaves, s.spines, s.leaf_downlinks, s.leaf_uplinks, s.links_per_spine) == (128, 64, 64, 64, 1)
    assert len(build.fabric.links) == 2 * 8192
    # 400G links on 800G cages: sub-ports of broken-out cages, two per cage, one optic per cage
    spine = build.fabric.devices["be-spine01"]
    cages = Counter(p.cage for p in spine.ports.values())
    assert set(cages.values()) == {2} and len(cages) == 64
    assert "Ethernet1/1/1" in spine.ports and "Ethernet1/1/2" in spine.ports


def test_more_gpus_than_two_tiers_allow_says_what_would_work(write_intent):
    [problem] = design_problems(write_intent, "gpus: 4096\nbackend: {tiers: 2}\n")
    assert problem.field == ("gpus",) and problem.line == 1
    assert "set backend.tiers: 3" in problem.hint and "2,048 GPUs" in problem.hint
    assert "N9364E-SG2-O" in problem.hint  # a switch with more 400G ports would do it


# --- ratios ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ratio, down, up",
    [("2:1", 32, 16), ("1:1", 32, 32)],
)
def test_oversubscription(write_intent, ratio, down, up):
    s = design(write_intent, f"gpus: 256\nbackend: {{ratio: '{ratio}'}}\n").sizing
    assert (s.leaf_downlinks, s.leaf_uplinks) == (down, up)
    assert s.built_ratio == Fraction(down, up)


def test_ratio_that_cannot_spread_evenly_is_rounded_and_explained(write_intent):
    s = design(write_intent, "gpus: 256\nbackend: {ratio: '3:1'}\n").sizing
    # 32/3 -> 11 uplinks cannot spread over 2+ spines evenly; 12 over 2 spines can
    assert (s.leaf_uplinks, s.spines, s.links_per_spine) == (12, 2, 6)
    assert s.built_ratio < Fraction(3)
    assert any("requested 3:1, built 2.67:1" in note for note in s.notes)


@pytest.mark.parametrize("ratio, up", [("1:2", 16), ("1:4", 32)])
def test_undersubscription_as_in_the_whitepapers_load_balancing_tests(write_intent, ratio, up):
    # 16 up / 8 down and 32 up / 8 down: 8 nodes per unit
    build = design(write_intent, f"gpus: 64\nbackend: {{ratio: '{ratio}'}}\n")
    s = build.sizing
    assert (s.leaf_downlinks, s.leaf_uplinks) == (8, up)
    for leaf in build.fabric.by_role(Role.LEAF):
        counts = uplinks_by_spine(leaf)
        assert sum(counts.values()) == up and len(set(counts.values())) == 1


def test_scalable_unit_too_big_for_the_leaf_at_this_ratio(write_intent):
    [problem] = design_problems(write_intent, "gpus: 256\nbackend: {ratio: '1:2', scalable_unit_gpus: 256}\n")
    assert problem.field == ("backend", "ratio")  # the setting the user wrote, not the default
    assert "168 or less" in problem.hint
    # without a unit named, the unit is what the leaf serves at the ratio: 21 nodes, 42 uplinks
    s = design(write_intent, "gpus: 256\nbackend: {ratio: '1:2'}\n").sizing
    assert (s.su_nodes, s.leaf_downlinks, s.leaf_uplinks) == (21, 21, 42)


def test_partial_last_unit_keeps_full_uplinks(write_intent):
    build = design(write_intent, "gpus: 384\n")
    s = build.sizing
    assert (s.su_count, s.leaves, s.spines) == (2, 16, 8)
    su2_leaf = build.fabric.devices["be-su02-leaf1"]
    kinds = Counter(p.link.kind for p in su2_leaf.ports.values())
    assert kinds == {LinkKind.HOST: 16, LinkKind.FABRIC: 32}
    # growth room: the uplinks sit where a full unit's would, after the reserved downlinks
    assert min(p.cage for p in su2_leaf.ports.values() if p.link.kind is LinkKind.FABRIC) == 33
    assert any("16 of 32 nodes" in note for note in s.notes)


# --- pinned counts, names ------------------------------------------------------------------------


def test_pinned_leaf_count_is_checked(write_intent):
    [problem] = design_problems(write_intent, "gpus: 512\nbackend:\n  leaf: {count: 8}\n")
    assert problem.field == ("backend", "leaf", "count") and problem.line == 3
    assert "16 leaves" in problem.message and "count: 16" in problem.hint


def test_pinned_spine_count_is_used_when_it_works(write_intent):
    s = design(write_intent, "gpus: 256\nbackend:\n  spine: {count: 8}\n").sizing
    assert (s.spines, s.links_per_spine) == (8, 4)


def test_pinned_spine_count_that_cannot_work(write_intent):
    [problem] = design_problems(write_intent, "gpus: 256\nbackend:\n  spine: {count: 3}\n")
    assert problem.field == ("backend", "spine", "count") and problem.line == 3


def test_naming_pattern_that_collides(write_intent):
    [problem] = design_problems(write_intent, "gpus: 256\nnaming: {leaf: 'leaf{su}'}\n")
    assert problem.field == ("naming", "leaf") and "two devices" in problem.message


def test_custom_naming(write_intent):
    fabric = design(write_intent, "gpus: 512\nnaming: {leaf: 'bl-{su}-{rail}', spine: 'bs{index}', gpu_node: 'dgx-{su}-{node:02d}'}\n").fabric
    assert {"bl-2-8", "bs8", "dgx-2-32"} <= set(fabric.devices)


def test_leaf_model_without_ports_at_the_nic_speed(write_intent):
    [problem] = design_problems(write_intent, "gpus: 256\nbackend:\n  leaf: {model: N9K-C93108TC-FX3}\n")
    assert problem.field == ("backend", "leaf", "model") and "400G" in problem.message


# --- odd ratios and sizes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "ratio, uplinks, spines",
    [
        # 32/1.5 -> 22 uplinks would need 11 spines; 24 spread over 3
        ("3:2", 24, 3),
        # 32/5 -> 7 uplinks would need 7 spines; 8 spread over 2
        ("5:1", 8, 2),
    ],
)
def test_fewest_spines_then_fewest_uplinks(write_intent, ratio, uplinks, spines):
    build = design(write_intent, f"gpus: 256\nbackend: {{ratio: '{ratio}'}}\n")
    s = build.sizing
    assert (s.leaf_uplinks, s.spines) == (uplinks, spines)
    asked = Fraction(*map(int, ratio.split(":")))
    assert s.built_ratio <= asked
    assert any(note.startswith(f"requested {format_ratio(asked)}, built") for note in s.notes)
    for leaf in build.fabric.by_role(Role.LEAF):
        assert set(uplinks_by_spine(leaf).values()) == {uplinks // spines}


def test_a_single_node(write_intent):
    build = design(write_intent, "gpus: 8\n")
    s = build.sizing
    assert (s.nodes, s.leaves, s.spines, s.leaf_downlinks, s.leaf_uplinks) == (1, 8, 2, 1, 2)
    assert len(build.fabric.links) == 8 + 16


def test_named_unit_size_reserves_ports_for_growth(write_intent):
    """A cluster smaller than the unit it names keeps the full unit's ports and uplinks, so
    growing to a full unit changes no existing cable or address."""
    small = design(write_intent, "gpus: 64\nbackend: {scalable_unit_gpus: 256, spine: {count: 4}}\n")
    full = design(write_intent, "gpus: 256\nbackend: {scalable_unit_gpus: 256, spine: {count: 4}}\n")
    assert small.sizing.leaf_uplinks == 32 and small.sizing.su_nodes == 32
    leaf = small.fabric.devices["be-su01-leaf1"]
    assert min(p.cage for p in leaf.ports.values() if p.link.kind is LinkKind.FABRIC) == 33

    def cabling(build):
        return {(l.a.device.name, l.a.name, l.b.device.name, l.b.name) for l in build.fabric.links}

    def addresses(build):
        return {(p.device.name, p.name): a.cidr for p, a in build.addresses.interfaces.items()}

    assert cabling(small) <= cabling(full)
    assert addresses(small).items() <= addresses(full).items()


def test_default_unit_size_adapts_to_a_small_cluster(write_intent):
    s = design(write_intent, "gpus: 64\n").sizing
    assert (s.su_nodes, s.leaf_downlinks, s.leaf_uplinks) == (8, 8, 8)
    assert any("set scalable_unit_gpus to reserve ports" in note for note in s.notes)


def test_two_tier_limit_names_the_unit_size_that_reaches_it(write_intent):
    big = "leaf: {model: N9364E-SG2-O}, spine: {model: N9364E-SG2-O}"
    [problem] = design_problems(write_intent, f"gpus: 16384\nbackend: {{tiers: 2, scalable_unit_gpus: 256, {big}}}\n")
    # 128-port leaves hold 64 nodes at 1:1: 16 units of 512 GPUs on 128-port spines
    assert "2 tiers reach 8,192 GPUs with scalable_unit_gpus: 512" in problem.hint
    # the default unit is already that one: the hint does not name it
    [problem] = design_problems(write_intent, f"gpus: 16384\nbackend: {{tiers: 2, {big}}}\n")
    assert "2 tiers reach 8,192 GPUs" in problem.hint and "scalable_unit_gpus" not in problem.hint


def test_ratio_no_leaf_can_meet(write_intent):
    [problem] = design_problems(write_intent, "gpus: 256\nbackend: {ratio: '1:100'}\n")
    assert "not even one node" in problem.hint and "0 or less" not in problem.hint


def test_every_design_problem_is_reported_together(write_intent):
    problems = design_problems(
        write_intent,
        """
        gpus: 512
        backend:
          leaf: {count: 9}
          optics: {fabric_links: QSFP-100G-DR-S}
          pools: {fabric_links: 10.8.0.0/28}
          asn: {leaf_first: 65534}
        """,
    )
    assert {p.field for p in problems} == {
        ("backend", "leaf", "count"),
        ("backend", "optics", "fabric_links"),
        ("backend", "pools", "fabric_links"),
        ("backend", "asn", "leaf_first"),
    }


# --- port allocation ----------------------------------------------------------------------------


def test_port_allocation_skips_cages_claimed_at_another_speed():
    """N9K-C93600CD-GX: 28 x 100G cages, then 8 x 400G cages that break out to 4 x 100G. 100G
    takes the native cages first, then sub-ports of the first 400G cage; 400G then skips that
    cage, and runs out when every other 400G cage is taken."""
    from fabricgen.catalog import load_catalog
    from fabricgen.compiler.design.graph import Device, OutOfPorts, PortAllocator

    model = load_catalog().switches["N9K-C93600CD-GX"]
    switches = [Device(f"leaf{i}", Role.LEAF, Network.BACKEND, "N9K-C93600CD-GX", "nxos", i) for i in (1, 2)]
    for device in switches:
        allocator = PortAllocator(device, model)
        hundreds = allocator.take(100, 30)
        assert [(p.cage, p.sub) for p in hundreds] == [(cage, 0) for cage in range(1, 29)] + [(29, 1), (29, 2)]
        four_hundreds = allocator.take(400, 7)
        assert [(p.cage, p.sub) for p in four_hundreds] == [(cage, 0) for cage in range(30, 37)]
        assert all(p.device is device for p in hundreds + four_hundreds)
        with pytest.raises(OutOfPorts) as caught:
            allocator.take(400, 1)
        assert (caught.value.device, caught.value.available) == (device.name, 0)
    # both switches name their ports as the catalog does, from the one order kept on the model
    assert hundreds[0].name == model.name_of("nxos", 1) and hundreds[-1].name == model.name_of("nxos", 29, 2, 100)
    assert four_hundreds[0].name == model.name_of("nxos", 30)
    assert {("nxos", 100), ("nxos", 400)} <= set(model.allocation_orders)


def test_cable_ids_are_numbered_per_tier_and_widen_past_five_digits():
    """connect_numbered: each series (links to a leaf, to a spine, to a core) counts from 1 on
    its own, zero-padded to five digits or to its own count's width; both ends are wired."""
    from fabricgen.compiler.design.graph import Device, Fabric, Port

    fabric = Fabric("ids")
    leaf, spine, core, node = (
        fabric.add_device(Device(name, role, Network.BACKEND, "M", nos, 1))
        for name, role, nos in (("leaf", Role.LEAF, "nxos"), ("spine", Role.SPINE, "nxos"), ("core", Role.CORE, "nxos"), ("node", Role.GPU_NODE, None))
    )

    def port(device, n):
        return Port(device, f"p{n}", n, 0, 400)

    host = [(LinkKind.HOST, port(node, n), port(leaf, n), None) for n in range(100_001)]
    to_spine = [(LinkKind.FABRIC, port(leaf, -n), port(spine, n), "C1") for n in range(1, 3)]
    to_core = [(LinkKind.FABRIC, port(spine, -n), port(core, n), None) for n in range(1, 4)]
    links = [host[0], to_spine[0], to_core[0], *host[1:], to_spine[1], *to_core[1:]]  # the series interleaved
    fabric.connect_numbered("BE-", Network.BACKEND, links)

    assert [link.id for link in fabric.links[:3]] == ["BE-000001", "BE-S00001", "BE-C00001"]
    assert [link.id for link in fabric.links[-3:]] == ["BE-S00002", "BE-C00002", "BE-C00003"]
    assert fabric.links[-4].id == "BE-100001" and len({link.id for link in fabric.links}) == len(links)
    for link, (kind, a, b, cable) in zip(fabric.links, links, strict=True):
        assert (link.kind, link.a, link.b, link.cable, link.network) == (kind, a, b, cable, Network.BACKEND)
        assert a.link is link and b.link is link and a.device.ports[a.name] is a and b.device.ports[b.name] is b


def test_cable_ids_of_a_series_connected_on_its_own_are_connect_numbered_s():
    """connect_series (backend: one call per tier) numbers and wires a series as connect_numbered
    does when the series are mixed in one list, past the five-digit width too."""
    from fabricgen.compiler.design.graph import Device, Fabric, Port

    def tiers(fabric):
        leaf, spine, core, node = (
            fabric.add_device(Device(name, role, Network.BACKEND, "M", nos, 1))
            for name, role, nos in (("leaf", Role.LEAF, "nxos"), ("spine", Role.SPINE, "nxos"), ("core", Role.CORE, "nxos"), ("node", Role.GPU_NODE, None))
        )
        host = [(Port(node, f"n{n}", n, 0, 400), Port(leaf, f"d{n}", n, 0, 400), "C1" if n % 2 else None) for n in range(100_000)]
        to_spine = [(Port(leaf, f"u{n}", n, 0, 400), Port(spine, f"d{n}", n, 0, 400), "C2") for n in range(3)]
        to_core = [(Port(spine, f"u{n}", n, 0, 400), Port(core, f"d{n}", n, 0, 400), None) for n in range(2)]
        return host, to_spine, to_core

    mixed, series = Fabric("mixed"), Fabric("series")
    host, to_spine, to_core = tiers(mixed)
    mixed.connect_numbered("BE-", Network.BACKEND, [(LinkKind.HOST, *link) for link in host] + [(LinkKind.FABRIC, *link) for link in to_spine + to_core])
    host, to_spine, to_core = tiers(series)
    series.connect_series("BE-", Network.BACKEND, LinkKind.HOST, host)
    series.connect_series("BE-S", Network.BACKEND, LinkKind.FABRIC, to_spine)
    series.connect_series("BE-C", Network.BACKEND, LinkKind.FABRIC, to_core)
    series.connect_series("BE-X", Network.BACKEND, LinkKind.FABRIC, [])  # an empty tier adds nothing

    def seen(fabric):
        return [(link.id, link.kind, link.network, link.a.label, link.b.label, link.cable, link.a.link is link, link.b.link is link) for link in fabric.links]

    assert seen(series) == seen(mixed)
    assert [link.id for link in series.links[-6:]] == ["BE-100000", "BE-S00001", "BE-S00002", "BE-S00003", "BE-C00001", "BE-C00002"]
    assert series.devices["leaf"].ports["d7"].link is series.links[7]


def test_optics_by_cage_answer_as_choose_and_report_a_misfit_once():
    """SwitchOptics.by_cage (the backend's per-port lookup) gives choose's answer for every cage:
    none for RJ45, the default per cage type, the intent's optic where it fits; a misfit is None
    and one problem however many ports ask."""
    from fabricgen.catalog import load_catalog
    from fabricgen.compiler.design.optics import SwitchOptics

    catalog = load_catalog()
    for preferred in (None, "QSFP-100G-DR-S"):
        for model, speed in (("N9K-C93108TC-FX3", 100), ("N9K-C93600CD-GX", 100), ("N9K-C93600CD-GX", 400)):
            by_cage = SwitchOptics(catalog, preferred, ("backend", "optics", "host_links")).by_cage(model, speed)
            reference = SwitchOptics(catalog, preferred, ("backend", "optics", "host_links"))
            cages = [group.first + n for group in catalog.switches[model].port_groups for n in range(group.count)]
            assert [by_cage[cage] for cage in cages * 2] == [reference.choose(model, cage, speed) for cage in cages * 2]
    assert by_cage[1] is None and by_cage[29] is None  # a 100G optic in QSFP28 and QSFP-DD cages at 400G: neither fits
    optics = SwitchOptics(catalog, "QSFP-100G-DR-S", ("backend", "optics", "host_links"))
    by_cage = optics.by_cage("N9K-C93600CD-GX", 400)
    assert [by_cage[cage] for cage in (29, 30, 29)] == [None, None, None] and len(optics.problems) == 1
    assert SwitchOptics(catalog, None, ("f",)).by_cage("N9K-C93108TC-FX3", 100)[1] is None  # RJ45: no optic


def test_cable_by_optic_answers_as_link_cable():
    """The backend's per-link cable lookup gives link_cable's answer for every catalog optic, a
    fixed-cable one (DAC/AOC: none) included, and for a link without an optic."""
    from fabricgen.catalog import load_catalog
    from fabricgen.compiler.design.graph import Device, Port
    from fabricgen.compiler.design.optics import cable_by_optic, link_cable

    catalog = load_catalog()
    cable_of = cable_by_optic(catalog)
    device = Device("leaf1", Role.LEAF, Network.BACKEND, "N9K-C93600CD-GX", "nxos", 1)
    optics = [*catalog.transceivers, None]
    assert any(catalog.transceivers[pid].cable for pid in catalog.transceivers)  # some take a separate cable
    assert any(not catalog.transceivers[pid].cable for pid in catalog.transceivers)  # and some have it built in
    for optic in optics:
        a, b = Port(device, "Ethernet1/1", 1, 0, 400), Port(device, "Ethernet1/2", 2, 0, 400, optic=optic)
        assert cable_of(b.optic or a.optic) == link_cable(catalog, a, b), optic
