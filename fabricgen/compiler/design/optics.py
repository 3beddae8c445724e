"""The switch-end transceiver of each cage when the intent has no rack layout (with a layout,
fabricgen.compiler.design.layout picks the medium from each run's length)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from fabricgen.basics.errors import Problem, dotted
from fabricgen.catalog import Catalog
from fabricgen.compiler.design.graph import Port


def link_cable(catalog: Catalog, a: Port, b: Port) -> str | None:
    """The cable the switch-end optic takes (both ends of a fabric link carry the same optic);
    None for DAC/AOC (cable built in) and for RJ45 cages."""
    optic = b.optic or a.optic
    return catalog.transceivers[optic].cable if optic else None


def cable_by_optic(catalog: Catalog) -> Callable[[str | None], str | None]:
    """link_cable by the switch-end optic alone (pass `b.optic or a.optic`): one dict lookup per
    link, for the builders that wire hundreds of thousands of them."""
    cables = {pid: optic.cable for pid, optic in catalog.transceivers.items()}
    return cast(Callable[[str | None], str | None], cables.get)  # None (no optic) is no key: None


@dataclass
class SwitchOptics:
    """Chooses the switch-end transceiver of a port: the intent's PID if given, else the catalog's
    default for the cage's form factor and speed. RJ45 cages need none. Problems are collected
    (once each) rather than raised, so the design phase reports them with the others."""

    catalog: Catalog
    preferred: str | None
    field: tuple[str, ...]
    problems: dict[str, Problem] = dataclasses.field(default_factory=dict)  # the class's own `field` hides dataclasses.field

    def __post_init__(self) -> None:
        self.choose = lru_cache(maxsize=None)(self._choose)

    def by_cage(self, model_pid: str, link_speed: int) -> dict[int, str | None]:
        """`choose` for one model and link speed as a dict by cage, each cage chosen on its first
        lookup: a dict hit per port, not a call hashing three arguments (for the 900,000 switch
        ports of 131,072 GPUs)."""
        return _CageOptics(self.choose, model_pid, link_speed)

    def _choose(self, model_pid: str, cage: int, link_speed: int) -> str | None:
        group = self.catalog.switches[model_pid].group_of(cage)
        assert group is not None
        if group.form_factor == "RJ45":
            return None
        if self.preferred is not None:
            optic = self.catalog.transceivers[self.preferred]
            if optic.serves(group.form_factor, group.speed, link_speed):
                return self.preferred
            message = (
                f"{self.preferred} ({optic.form_factor} {optic.speed}G, {optic.link_speed}G links) does not fit "
                f"{model_pid}'s {group.form_factor} {group.speed}G cages carrying {link_speed}G links"
            )
            hint = "name a transceiver of that form factor and speed, or remove it to use the catalog default"
        else:
            default = self.catalog.default_optic(group.form_factor, link_speed, group.speed)
            if default is not None:
                return default
            message = f"the catalog has no default transceiver for {group.form_factor} {group.speed}G cages carrying {link_speed}G links"
            hint = f"name one under {dotted(self.field[:-1])}, or mark one 'default: true' in a catalog file"
        self.problems.setdefault(message, Problem(message, hint=hint, field=self.field))
        return None


class _CageOptics(dict[int, str | None]):
    """SwitchOptics.by_cage: fills itself from `choose` on a miss."""

    def __init__(self, choose: Callable[[str, int, int], str | None], model_pid: str, link_speed: int):
        super().__init__()
        self._choose, self._model_pid, self._link_speed = choose, model_pid, link_speed

    def __missing__(self, cage: int) -> str | None:
        optic = self[cage] = self._choose(self._model_pid, cage, self._link_speed)
        return optic
