"""Radix-aware sizing: the default scalable unit is the most nodes one leaf serves at the ratio
(its ports at the NIC speed, breakouts included), the default pod as many units as a spine takes;
switch roles that leave more than 10% of their ports idle get one note each; `init` picks the same
unit; top-of-rack pods are whole units of the unit the design uses."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fabricgen.basics.errors import DesignError, IntentError
from fabricgen.cli import app
from fabricgen.compiler.design.graph import Network, Role
from fabricgen.compiler.pipeline import compile_intent


def design(write_intent, text):
    return compile_intent(write_intent(text), render=False)


def counts(build) -> tuple[int, int]:
    fabric = build.compiled.fabric
    return (
        sum(1 for _ in fabric.by_role(Role.LEAF, Network.BACKEND)),
        sum(1 for _ in fabric.by_role(Role.SPINE, Network.BACKEND)),
    )


def idle_notes(build) -> list[str]:
    return [note for note in build.compiled.sizing.notes if "idle" in note]


# --- the default unit follows the leaf's radix (acceptance) ----------------------------------


@pytest.mark.parametrize("node", ["DGX-H100", "DGX-B200"])
def test_2048_gpus_on_51t_leaves_build_32_leaves_and_16_spines(write_intent, node):
    """64 x 800G cages as 128 x 400G: a leaf serves 64 nodes at 1:1, so 4 units of 8 leaves."""
    build = design(
        write_intent,
        f"""
        name: radix-2048
        gpus: 2048
        gpu_node: {node}
        backend:
          leaf: {{model: DCS-7060X6-64PE, nos: sonic}}
          spine: {{model: DCS-7060X6-64PE, nos: sonic}}
        """,
    )
    sizing = build.compiled.sizing
    assert counts(build) == (32, 16)
    assert (sizing.su_nodes, sizing.su_count, sizing.leaf_downlinks, sizing.leaf_uplinks) == (64, 4, 64, 64)
    assert idle_notes(build) == []


def test_4096_gpus_on_two_planes_of_51t_switches_build_64_leaves_and_32_spines(write_intent):
    build = design(
        write_intent,
        """
        name: radix-planes
        gpus: 4096
        gpu_node: DGX-B200
        backend:
          planes: 2
          leaf: {model: N9364E-SG2-O, nos: nxos}
          spine: {model: N9364E-SG2-O, nos: nxos}
        """,
    )
    assert counts(build) == (64, 32)
    assert build.compiled.sizing.su_nodes == 64
    assert idle_notes(build) == []


def test_a_25t_leaf_keeps_the_32_node_unit(write_intent):
    build = design(
        write_intent,
        """
        name: radix-25t
        gpus: 512
        backend:
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9K-C9364D-GX2A, nos: nxos}
        """,
    )
    assert build.compiled.sizing.su_nodes == 32 and counts(build) == (16, 8)


def test_the_unit_follows_the_ratio(write_intent):
    """At 3:1 a 128-port leaf takes 96 downlinks: 96 nodes a unit, 32 uplinks."""
    build = design(
        write_intent,
        """
        name: radix-ratio
        gpus: 1536
        backend:
          ratio: "3:1"
          leaf: {model: DCS-7060X6-64PE, nos: sonic}
          spine: {model: DCS-7060X6-64PE, nos: sonic}
        """,
    )
    sizing = build.compiled.sizing
    assert (sizing.su_nodes, sizing.leaf_downlinks, sizing.leaf_uplinks) == (96, 96, 32)


def test_an_explicit_unit_is_honoured(write_intent):
    build = design(
        write_intent,
        """
        name: radix-explicit
        gpus: 2048
        backend:
          scalable_unit_gpus: 256
          leaf: {model: DCS-7060X6-64PE, nos: sonic}
          spine: {model: DCS-7060X6-64PE, nos: sonic}
        """,
    )
    assert build.compiled.sizing.su_nodes == 32 and counts(build)[0] == 64


def test_the_default_pod_is_as_many_units_as_a_spine_takes(write_intent):
    """3 tiers of 128-port (at 400G) switches at 1:1: a spine takes 64 leaves = 8 units of 8 leaves."""
    build = design(
        write_intent,
        """
        name: radix-pods
        gpus: 8192
        backend:
          tiers: 3
          leaf: {model: DCS-7060X6-64PE, nos: sonic}
          spine: {model: DCS-7060X6-64PE, nos: sonic}
        """,
    )
    sizing = build.compiled.sizing
    assert (sizing.su_nodes, sizing.pod_sus, sizing.pods) == (64, 8, 2)


# --- idle ports -----------------------------------------------------------------------------


def test_leaves_with_idle_ports_get_one_note_naming_the_setting(write_intent):
    """The old default: a 256-GPU unit on a 128-port leaf leaves half its ports idle."""
    build = design(
        write_intent,
        """
        name: radix-idle
        gpus: 2048
        backend:
          scalable_unit_gpus: 256
          leaf: {model: DCS-7060X6-64PE, nos: sonic}
          spine: {model: DCS-7060X6-64PE, nos: sonic}
        """,
    )
    notes = idle_notes(build)
    assert len(notes) == 1, notes
    assert notes[0].startswith("leaves: 64 of 128 400G ports idle on each leaf") and "scalable_unit_gpus: 512" in notes[0]


def test_spines_with_idle_ports_get_a_note(write_intent):
    """3 units of 8 leaves on 128-port spines at 1:1: 24 leaves x 64 uplinks over the fewest
    spines that divide them evenly."""
    build = design(
        write_intent,
        """
        name: radix-idle-spines
        gpus: 512
        backend:
          scalable_unit_gpus: 256
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9364E-SG2-O, nos: nxos}
        """,
    )
    # 16 leaves x 32 uplinks = 512 links on 128-port spines: 4 spines, full
    assert idle_notes(build) == []
    build = design(
        write_intent,
        """
        name: radix-idle-spines
        gpus: 256
        backend:
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9364E-SG2-O, nos: nxos}
        """,
    )
    # 8 leaves x 32 uplinks = 256 links: 2 spines of 128 ports, full too
    assert idle_notes(build) == []
    build = design(
        write_intent,
        """
        name: radix-idle-spines
        gpus: 768
        backend:
          scalable_unit_gpus: 256
          spine: {model: N9364E-SG2-O, nos: nxos}
        """,
    )
    # 24 leaves x 32 uplinks = 768 links: 8 spines of 96 used ports of 128
    notes = idle_notes(build)
    assert len(notes) == 1 and notes[0].startswith("spines: 32 of 128 400G ports idle on each spine"), notes


def test_a_partial_last_unit_is_not_noted_twice(write_intent):
    build = design(
        write_intent,
        """
        name: radix-partial
        gpus: 384
        backend:
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9K-C9364D-GX2A, nos: nxos}
        """,
    )
    assert any("the last scalable unit has 16 of 32 nodes" in note for note in build.compiled.sizing.notes)
    assert not any(note.startswith("leaves:") for note in idle_notes(build))


# --- top-of-rack pods -----------------------------------------------------------------------


def test_top_of_rack_pods_are_whole_units_of_the_top_of_rack_unit(write_intent):
    """Top-of-rack on a 64-port leaf at 1:1: a unit is the 4 nodes (32 GPUs) one leaf takes, so a
    3,072-GPU pod is 96 units (96 leaves, which a 128-port spine at 3:1 takes), not 12 units of the
    256-GPU default: 8 pods of 32 spines, not 64."""
    build = design(
        write_intent,
        """
        name: tor-pods
        gpus: 24576
        backend:
          design: top-of-rack
          tiers: 3
          pod_gpus: 3072
          spine_ratio: "3:1"
          leaf: {model: N9K-C9364D-GX2A, nos: nxos}
          spine: {model: N9364E-SG2-O, nos: nxos}
          core: {model: N9364E-SG2-O, nos: nxos}
        """,
    )
    sizing = build.compiled.sizing
    assert (sizing.su_nodes, sizing.pod_sus, sizing.pods) == (4, 96, 8)
    assert (sizing.pod_spines, sizing.spines) == (32, 256)


def test_a_pod_that_is_not_whole_units_of_the_derived_unit_is_refused(write_intent):
    with pytest.raises(DesignError) as caught:
        design(
            write_intent,
            """
            name: tor-pods
            gpus: 6144
            backend:
              design: top-of-rack
              tiers: 3
              pod_gpus: 1000
              leaf: {model: N9K-C9364D-GX2A, nos: nxos}
              spine: {model: N9364E-SG2-O, nos: nxos}
            """,
        )
    (problem,) = [p for p in caught.value.problems if p.field == ("backend", "pod_gpus")]
    assert "32 GPUs" in problem.message and "pod_gpus: 992" in problem.hint and "1,024" in problem.hint


def test_an_explicit_unit_still_checks_pod_gpus_when_the_intent_loads(write_intent):
    with pytest.raises(IntentError) as caught:
        design(
            write_intent,
            """
            name: explicit-pods
            gpus: 4096
            backend:
              tiers: 3
              scalable_unit_gpus: 256
              pod_gpus: 1000
            """,
        )
    assert any(p.field[-1] == "pod_gpus" or "pod_gpus" in p.message for p in caught.value.problems)


# --- init ------------------------------------------------------------------------------------


def test_init_with_a_51t_leaf_builds_the_same_counts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "--gpus", "2048", "--gpu-node", "DGX-B200", "--leaf", "DCS-7060X6-64PE", "--nos", "sonic", "-o", "x.yaml"])
    assert result.exit_code == 0, result.output
    assert "scalable_unit_gpus" not in (tmp_path / "x.yaml").read_text()
    build = compile_intent(tmp_path / "x.yaml", render=False)
    assert counts(build) == (32, 16) and idle_notes(build) == []


def test_a_ratio_no_leaf_can_meet_is_refused_in_every_design(write_intent):
    """Top-of-rack's unit was the leaf's ratio nodes: 0 at 1:100, and sizing divided by it."""
    with pytest.raises(DesignError) as caught:
        design(write_intent, "gpus: 256\nbackend: {design: top-of-rack, ratio: '1:100'}\n")
    [problem] = caught.value.problems
    assert problem.field == ("backend", "ratio") and "not even one node" in problem.hint
