"""'Did you mean': a PID, a key, a choice or a catalog section that differs from a known one only in
case (or by a typo) is answered with that one, not with the whole list."""

from __future__ import annotations

import pytest

from fabricgen.catalog import load_catalog, unknown_pid_hint
from fabricgen.errors import CatalogError, IntentError
from fabricgen.intent import load_intent
from fabricgen.validation import closest


def test_closest_prefers_the_choice_equal_but_for_case():
    choices = ["N9K-C9364D-GX2A", "N9K-C93600CD-GX", "n9k-c9364d-gx2b"]
    assert closest("n9k-c9364d-gx2a", choices) == "N9K-C9364D-GX2A"
    assert closest("N9K-C93600CD-G", choices) == "N9K-C93600CD-GX"
    assert closest("N9K-C9364D-GX2A", choices) is None  # a choice itself needs no hint
    assert closest("something else", choices) is None


def test_unknown_pid_hint_names_one_pid_or_all():
    known = ["N9K-C9364D-GX2A", "N9K-C93600CD-GX"]
    assert unknown_pid_hint("n9k-c9364d-gx2a", known) == "did you mean 'N9K-C9364D-GX2A'? PIDs are case-sensitive"
    assert unknown_pid_hint("N9K-C93600CD-GXX", known) == "did you mean 'N9K-C93600CD-GX'? else add it to a catalog file"
    assert unknown_pid_hint("QFX5220", known) == "use one of N9K-C93600CD-GX, N9K-C9364D-GX2A or add it to a catalog file"


def intent_problems(write_intent, text):
    with pytest.raises(IntentError) as caught:
        load_intent(write_intent(text))
    return {".".join(map(str, p.field)): p for p in caught.value.problems}


@pytest.mark.parametrize(
    ("text", "field", "hint"),
    [
        ("gpus: 256\nbackend:\n  spine: {model: n9k-c9364d-gx2a}\n", "backend.spine.model", "did you mean 'N9K-C9364D-GX2A'? PIDs are case-sensitive"),
        (
            "gpus: 256\nbackend:\n  optics: {fabric_links: qdd-400g-dr4-s}\n",
            "backend.optics.fabric_links",
            "did you mean 'QDD-400G-DR4-S'? PIDs are case-sensitive",
        ),
        ("gpus: 256\ngpu_node: dgx-h100\n", "gpu_node", "did you mean 'DGX-H100'? PIDs are case-sensitive"),
        ("gpus: 256\nbackend:\n  MTU: 9000\n", "backend.MTU", "did you mean 'mtu'?"),
        ("gpus: 256\nbackend:\n  leaf: {nos: SONiC}\n", "backend.leaf.nos", "did you mean 'sonic'? the choices are 'nxos', 'sonic' or 'eos'"),
    ],
)
def test_the_intent_gets_one_suggestion(write_intent, text, field, hint):
    problems = intent_problems(write_intent, text)
    assert problems[field].hint == hint


def test_a_catalog_file_gets_suggestions(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("Transceivers:\n  MY-OPTIC: {}\n")
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    assert caught.value.problems[0].hint == "did you mean 'transceivers'?"
    extra.write_text(
        "transceivers:\n  MY-OPTIC:\n    description: x\n    form_factor: QSFP-DD\n    speed: 400G\n    media: smf\n"
        "    connector: LC\n    reach_m: 10\n    cable: cb-lc-lc-smf\n"
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog([extra])
    (problem,) = caught.value.problems
    assert problem.field == ("transceivers", "MY-OPTIC", "cable") and problem.hint.startswith("did you mean 'CB-LC-LC-SMF'?")
