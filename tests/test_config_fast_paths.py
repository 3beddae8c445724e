"""The config builders' fast paths give what the straightforward code they replace gives."""

from __future__ import annotations

import pytest

from fabricgen.host_config import _subnet_of
from fabricgen.units import network_text


@pytest.mark.parametrize("address", ["10.4.13.77", "10.4.13.0", "10.4.13.255", "192.168.255.1", "0.0.0.1", "255.255.255.254"])
@pytest.mark.parametrize("prefixlen", range(33))
def test_a_nics_subnet_is_the_network_its_address_lies_in(address, prefixlen):
    assert _subnet_of(address, prefixlen) == network_text(address, prefixlen)


def test_a_slash_31_subnet_starts_at_its_even_address():
    assert _subnet_of("10.4.0.9", 31) == "10.4.0.8/31"
    assert _subnet_of("10.4.0.8", 31) == "10.4.0.8/31"
    assert _subnet_of("10.4.1.130", 25) == "10.4.1.128/25"
