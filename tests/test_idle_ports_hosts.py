"""Idle-port notes on the frontend and storage fabrics: a leaf, spine or core role whose switches
leave more than 10% of their ports idle gets one build note naming the setting that would use
them, as the backend's roles do (test_radix_sizing.py); a role whose count the intent pins, and a
collapsed pair (spine.count: 0 fixes its two switches), get none."""

from __future__ import annotations

from fabricgen.compiler.pipeline import compile_intent


def design(write_intent, text):
    return compile_intent(write_intent(text), render=False)


def idle_notes(build, network: str = "frontend") -> list[str]:
    return [note for note in build.compiled.notes if note.startswith(f"{network} ") and "idle" in note]


def role_notes(build, role: str, network: str = "frontend") -> list[str]:
    return [note for note in idle_notes(build, network) if note.startswith(f"{network} {role}:")]


def test_leaves_a_few_servers_leave_idle_get_one_note_naming_the_setting(write_intent):
    """8 DGX nodes on a converged frontend, 2 of each node's 4 100G ports on each leaf of the pair:
    16 of the 28 server ports an N9K-C93600CD-GX leaf holds at 1:1 beside its 8 400G uplinks
    (60 100G ports with the 400G cages broken out)."""
    build = design(
        write_intent,
        """
        name: fe-idle
        gpus: 64
        frontend: {}
        """,
    )
    notes = role_notes(build, "leaves")
    assert len(notes) == 1, idle_notes(build)
    assert notes[0].startswith("frontend leaves: 12 of 60 100G ports idle on each leaf"), notes
    assert "16 of the 28 server ports" in notes[0] and "a leaf model with fewer 100G ports" in notes[0], notes


def test_leaves_the_servers_fill_get_no_note(write_intent):
    """28 nodes (112 ports) fill two pairs of leaves, 28 server ports each; the uplinks take the
    400G cages."""
    build = design(
        write_intent,
        """
        name: fe-full
        gpus: 224
        frontend: {}
        """,
    )
    assert role_notes(build, "leaves") == [], idle_notes(build)


def test_spines_with_idle_ports_get_a_note_unless_pinned(write_intent):
    """4 leaves x 8 uplinks over 2 spines of 64 x 400G: 16 ports of each spine used."""
    build = design(
        write_intent,
        """
        name: fe-spines
        gpus: 224
        frontend: {}
        """,
    )
    notes = role_notes(build, "spines")
    assert len(notes) == 1 and notes[0].startswith("frontend spines: 48 of 64 400G ports idle on each spine"), idle_notes(build)
    assert "a spine model with fewer 400G ports" in notes[0]
    build = design(
        write_intent,
        """
        name: fe-spines
        gpus: 224
        frontend:
          spine: {model: N9K-C9364D-GX2A, nos: nxos, count: 2}
        """,
    )
    assert role_notes(build, "spines") == [], idle_notes(build)


def test_a_pinned_leaf_count_gets_no_idle_note(write_intent):
    """4 leaves pinned for 8 nodes: the build notes them "as pinned", not as idle ports too."""
    for pin in ("count: 4", "at_least: 4"):
        build = design(
            write_intent,
            f"""
            name: fe-pinned
            gpus: 64
            frontend:
              leaf: {{model: N9K-C93600CD-GX, nos: nxos, {pin}}}
            """,
        )
        assert role_notes(build, "leaves") == [], idle_notes(build)
        assert any("4 leaves" in note for note in build.compiled.notes), build.compiled.notes


def test_a_storage_fabric_gets_its_own_notes(write_intent):
    build = design(
        write_intent,
        """
        name: st-idle
        gpus: 64
        frontend: {storage: separate}
        storage: {}
        """,
    )
    assert len(role_notes(build, "leaves", "storage")) == 1, build.compiled.notes
    assert len(role_notes(build, "leaves")) == 1, build.compiled.notes


def test_a_collapsed_pair_gets_no_idle_note(write_intent):
    """spine.count: 0 fixes the fabric at two switches; its build note says so."""
    build = design(
        write_intent,
        """
        name: fe-pair
        gpus: 64
        frontend:
          spine: {model: N9K-C9364D-GX2A, nos: nxos, count: 0}
        """,
    )
    assert idle_notes(build) == [], build.compiled.notes
