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


FRONTEND_ASNS = "asn: {scheme: private-4byte, core: 4200100000, spine: 4200100001, leaf_first: 4200100100}"


def test_3_tier_spines_name_pod_leaves_and_cores_get_their_own_note(write_intent):
    """128 nodes in pods of 4 leaves (test_frontend_storage_three_tier.py): a 64 x 400G spine uses
    4 ports down and 4 up, 32 leaves a pod would fill it at 1:1; 7 cores take 5 pods x 4 links."""
    build = design(
        write_intent,
        f"""
        name: fe-3tier
        gpus: 1024
        backend:
          asn: {{scheme: private-4byte}}
        frontend:
          tiers: 3
          pod_leaves: 4
          {FRONTEND_ASNS}
        """,
    )
    assert role_notes(build, "spines") == ["frontend spines: 56 of 64 400G ports idle on each spine; pod_leaves: 32 fills them"]
    cores = role_notes(build, "cores")
    assert len(cores) == 1 and cores[0].startswith("frontend cores: 44 of 64 400G ports idle on each core (5 pods)"), cores
    # a full pod of 32 leaves leaves no spine port idle
    build = design(
        write_intent,
        f"""
        name: fe-3tier
        gpus: 1024
        backend:
          asn: {{scheme: private-4byte}}
        frontend:
          tiers: 3
          {FRONTEND_ASNS}
        """,
    )
    assert role_notes(build, "spines") == [], idle_notes(build)


def test_full_leaves_the_ratio_leaves_idle_name_the_ratio(write_intent):
    """At 1:4 an N9K-C93600CD-GX leaf takes 8 server ports (8 x 100G down, its 8 x 400G cages up):
    every leaf is full of servers, and 20 of its 28 native 100G ports stay idle."""
    build = design(
        write_intent,
        """
        name: fe-ratio
        gpus: 224
        frontend:
          ratio: "1:4"
        """,
    )
    notes = role_notes(build, "leaves")
    assert len(notes) == 1 and notes[0].startswith("frontend leaves: 20 of 60 100G ports idle on each leaf"), idle_notes(build)
    assert "a more oversubscribed ratio than 1:4" in notes[0], notes
