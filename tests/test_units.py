"""The IPv4 text <-> int helpers of the hot paths agree with the standard library, at the edges
of the address space and of every prefix length."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface

import pytest

from fabricgen.basics.units import ipv4_ints, ipv4_text, ipv4_texts, network_of, network_text

EDGES = [0, 1, 254, 255, 256, 0x0A000000, 0x0AFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFF00]


@pytest.mark.parametrize("first", EDGES)
def test_a_run_of_address_texts_is_each_address_in_order(first):
    texts = ipv4_texts(first, 256)
    assert texts == [str(IPv4Address(first + i)) for i in range(256)]
    assert texts[0] == ipv4_text(first)


@pytest.mark.parametrize(("first", "count"), [(0x0A0000FE, 5), (0x0A000080, 64), (0x0A0000F0, 1000), (5, 3), (0xFFFFFEFF, 257), (0x0A000000, 1)])
def test_a_run_across_or_inside_a_slash_24_is_each_address_in_order(first, count):
    # texts are made a /24 at a time: runs that start or end inside one, or span several
    assert ipv4_texts(first, count) == [str(IPv4Address(first + i)) for i in range(count)]


def test_no_addresses_is_an_empty_run():
    assert ipv4_texts(0x0A000000, 0) == []


def test_texts_back_to_ints():
    values = [first + offset for first in EDGES for offset in (0, 1, 255)]
    assert ipv4_ints([str(IPv4Address(v)) for v in values]) == values
    assert ipv4_ints(iter(["10.0.0.1", "255.255.255.255"])) == [0x0A000001, 0xFFFFFFFF]  # any iterable


@pytest.mark.parametrize("prefixlen", range(33))
def test_network_text_is_the_address_network(prefixlen):
    # every last digit (a /31 is worked out on it), both ends of an octet and of the address space
    for address in (
        "10.7.131.77",
        "255.255.255.255",
        "0.0.0.1",
        "192.168.1.0",
        "10.4.13.3",
        "10.4.13.5",
        "10.4.13.9",
        "10.4.13.10",
        "10.4.13.2",
        "10.4.13.6",
        "10.4.13.8",
        "10.4.13.255",
        "255.255.255.254",
    ):
        expected = str(IPv4Interface(f"{address}/{prefixlen}").network)
        assert network_text(address, prefixlen) == expected, (address, prefixlen)
        assert network_of(f"{address}/{prefixlen}") == expected


def test_a_bare_address_is_its_own_network():
    assert network_of("10.1.2.3") == "10.1.2.3/32"
