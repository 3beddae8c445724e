"""sorting.natural_key: numbers in names by value, and never a comparison of unlike types."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.basics.sorting import natural_key
from fabricgen.diff.compare import _cabling

# names as a catalog or an intent may spell them: letters, ASCII digits (numbers), other
# scripts' digits (text, not numbers), the separators of port and cable names
NAME = st.text(alphabet=st.sampled_from("abcz019:/-_.²١E"), max_size=12)


def test_numbers_sort_by_value():
    names = ["leaf10", "leaf2", "leaf1", "Ethernet1/10", "Ethernet1/2", "Ethernet1/1/4"]
    assert sorted(names, key=natural_key) == ["Ethernet1/1/4", "Ethernet1/2", "Ethernet1/10", "leaf1", "leaf2", "leaf10"]


def test_a_name_and_the_same_name_with_a_number():
    # the case of issue 21: a device with ports bmc and bmc1, compared as ends of cables
    assert sorted(["bmc1", "bmc"], key=natural_key) == ["bmc", "bmc1"]
    ends = [("leaf1:bmc1", "oob1:Ethernet1/2"), ("leaf1:bmc", "oob1:Ethernet1/1")]
    assert sorted(ends, key=natural_key) == ends[::-1]


def test_leading_zeros_keep_a_fixed_order():
    assert sorted(["leaf1", "leaf01"], key=natural_key) == sorted(["leaf01", "leaf1"], key=natural_key) == ["leaf01", "leaf1"]


@settings(max_examples=400, deadline=None)
@given(st.lists(NAME, max_size=30))
def test_any_names_sort_the_same_whatever_order_they_come_in(names):
    expected = sorted(names, key=natural_key)
    shuffled = names[:]
    random.Random(len(names)).shuffle(shuffled)
    assert sorted(shuffled, key=natural_key) == expected


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(NAME, NAME), max_size=30), st.lists(st.tuples(NAME, NAME, NAME), max_size=5))
def test_any_tuples_of_names_sort(pairs, triples):
    # tuples of the same length (cable ends) and of mixed lengths: never a TypeError
    backwards = pairs[::-1]  # stable sorting keeps equal keys in input order: the key must tell every pair apart
    assert sorted(pairs, key=natural_key) == sorted(backwards, key=natural_key)
    sorted(pairs + triples, key=natural_key)


@given(NAME, st.integers(0, 10**6), st.integers(0, 10**6))
def test_a_number_after_the_same_prefix_orders_by_value(prefix, a, b):
    if prefix[-1:].isascii() and prefix[-1:].isdigit():
        prefix += "x"  # a trailing digit would join the number
    keys = natural_key(f"{prefix}{a}"), natural_key(f"{prefix}{b}")
    assert (keys[0] < keys[1]) == (a < b)


def test_the_diff_of_a_cabling_plan_with_bmc_and_bmc1_ports():
    class Row:
        def __init__(self, a_port, b_port):
            self.a_device, self.a_port, self.b_device, self.b_port = "leaf1", a_port, "oob1", b_port
            self.a_optic = self.b_optic = self.cable = self.length_m = self.speed = ""

    old = [Row("bmc", "Ethernet1/1")]
    new = [Row("bmc", "Ethernet1/1"), Row("bmc1", "Ethernet1/2")]
    delta = _cabling(old, new)
    assert [(c.a, c.b) for c in delta.added] == [("leaf1:bmc1", "oob1:Ethernet1/2")]
