"""What a NOS adapter cannot write, asked by the checks before anything is rendered.

The catalog says what a switch and its NOS can do; an adapter may still have no way to say it
(NX-OS hashes fixed sets of fields, fabricgen writes no SONiC flowlet tables). Each adapter
answers with `Gap`s so the user hears it as a check error, not as a half-rendered config.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    field: str  # the intent field under the fabric section's load_balancing (mode, hash_fields) or bgp_security (tcp_ao)
    message: str
    hint: str
