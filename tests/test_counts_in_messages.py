"""Counts a user reads carry thousands separators (131,072 GPUs, not 131072)."""

from __future__ import annotations

import pytest

from fabricgen.basics.errors import DesignError, IntentError, Problem
from fabricgen.diff.render import _plural, _signed
from fabricgen.intent import load_intent


def test_a_phase_with_thousands_of_problems():
    error = DesignError([Problem(f"problem {i}") for i in range(1_234)])
    assert error.report().startswith("design: 1,234 problems\n")


def test_a_gpu_count_that_is_not_whole_nodes(write_intent):
    with pytest.raises(IntentError) as caught:
        load_intent(write_intent("gpus: 131073\n"))
    (problem,) = caught.value.problems
    assert problem.message == "131,073 GPUs is not a whole number of DGX-H100 nodes (8 GPUs each)"
    assert problem.hint == "use 131,072 or 131,080, or give 'nodes:' instead"


def test_the_diff_summary_counts():
    assert _signed(1_234, 5, 67_890) == "+1,234 −5 ~67,890"
    assert _plural(22_586, "switch") == "22,586 switches" and _plural(1, "device") == "1 device"
