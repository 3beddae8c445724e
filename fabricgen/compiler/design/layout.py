"""Physical layout: where every device stands, how long each cable run is, and the medium that reaches.

`place(items, layout) -> Placement`
    Devices in build order, each `(name, kind, rack_units)` with kind "gpu", "server" or
    "network", go into racks: GPU racks hold `layout.gpu_nodes_per_rack` GPU nodes each, server
    racks and network racks are filled by rack units; every rack bottom-up from RU 1, every kind in
    the order given. The racks form one sequence: the GPU racks, then the server racks, with the
    network racks at its start, in its middle (after the first half of those compute racks,
    rounded up) or at its end (`layout.network_racks`). The sequence is cut into rows of
    `layout.racks_per_row`; rack R02-03 stands in row 2, column 3 (both 1-based). Problems (more
    racks needed than `layout.racks`, a device taller than a rack, GPU nodes that do not fit their
    rack) come back in `Placement.problems`; the placement is complete all the same.

`cable_length_m(a, b, layout) -> float`
    An estimate of one run, slack included, before rounding up to a standard length. One rack
    unit is 0.04445 m (1.75 in).
    - Same rack: straight up or down, |RU(a) - RU(b)| x 0.04445 m, plus `slack_m`.
    - Different racks: each end rises to the rack top and on to the overhead tray,
      (rack_units - RU) x 0.04445 m + `tray_height_m`; along the tray the run goes Manhattan style,
      |column difference| x `rack_width_m` plus |row difference| x `row_pitch_m`; plus `slack_m`.
    RU is a device's lowest rack unit.

`choose_media(catalog, *, cage_form_factor, cage_speed, link_speed, far_form_factor, length_m,
preferred) -> MediaChoice | Problem`
    The switch-end transceiver, the cable and its standard length for one link. Without a length
    (no layout) it is the intent's `preferred` optic or the catalog's default, as before. With a
    length the preferred optic is checked for reach; otherwise the cheapest medium that reaches
    wins, DAC < AOC < multimode < single-mode (copper RJ45 optics rank after DAC), then the
    shortest reach. A DAC or AOC fits when its fixed length covers the run and its far end matches
    the far cage; a pluggable when its reach covers the run and its cable comes in a standard
    length at least as long. RJ45 cages take an Ethernet copper cable up to 100 m. Results are
    cached per catalog, so calling it once per link is cheap.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fabricgen.basics.errors import Problem
from fabricgen.catalog import Catalog
from fabricgen.catalog.model import Cable, Transceiver
from fabricgen.intent.model import Layout

RackKind = Literal["gpu", "server", "network"]

RACK_UNIT_M = 0.04445
ETHERNET_COPPER_REACH_M = 100.0  # 1000BASE-T / 10GBASE-T over twisted pair
_MEDIA_RANK = {"dac": 0, "copper": 1, "aoc": 2, "mmf": 3, "smf": 4}
_BUILT_IN = ("dac", "aoc")


@dataclass(frozen=True, slots=True)
class Rack:
    name: str  # R{row:02d}-{column:02d}
    row: int  # 1-based
    column: int  # 1-based
    kind: RackKind


@dataclass(frozen=True, slots=True)
class Position:
    rack: Rack
    ru: int  # lowest rack unit the device occupies, 1-based
    height: int  # rack units


@dataclass(frozen=True, slots=True)
class Placement:
    racks: list[Rack]  # in sequence order: row by row, column by column
    positions: dict[str, Position]  # device name -> where it stands
    problems: list[Problem]


@dataclass(frozen=True, slots=True)
class MediaChoice:
    optic: str | None  # switch-end transceiver PID; None for an RJ45 cage
    cable: str | None  # cable PID; None when the optic has its cable built in (DAC/AOC)
    cable_length_m: float | None  # standard length picked; None without a run length


# -- placement -------------------------------------------------------------------------------


def place(items: Sequence[tuple[str, RackKind, int]], layout: Layout) -> Placement:
    """Racks and a position for every device; see the module docstring for the rules."""
    by_kind: dict[str, list[tuple[str, int]]] = {"gpu": [], "server": [], "network": []}
    for name, kind, height in items:
        if kind not in by_kind:
            raise ValueError(f"{name}: rack kind {kind!r} is not one of gpu, server, network")
        by_kind[kind].append((name, height))

    problems: list[Problem] = []
    too_tall = [(name, height) for name, _, height in items if height > layout.rack_units]
    if too_tall:
        name, height = too_tall[0]
        more = f" ({_count(len(too_tall) - 1, 'more device')} too)" if len(too_tall) > 1 else ""
        problems.append(
            Problem(
                f"{name} is {height} RU tall; a rack has {layout.rack_units} RU{more}",
                hint=f"raise layout.rack_units to at least {max(h for _, h in too_tall)}",
                field=("layout", "rack_units"),
            )
        )

    # Each kind's slots: (rack number within the kind, lowest RU), in item order.
    gpu_slots, gpu_used = _stack(by_kind["gpu"], layout.gpu_nodes_per_rack)
    server_slots, _ = _fill(by_kind["server"], layout.rack_units)
    network_slots, _ = _fill(by_kind["network"], layout.rack_units)
    counts = {kind: _racks_in(slots) for kind, slots in (("gpu", gpu_slots), ("server", server_slots), ("network", network_slots))}

    compute: list[tuple[RackKind, int]] = [("gpu", i) for i in range(counts["gpu"])] + [("server", i) for i in range(counts["server"])]
    network: list[tuple[RackKind, int]] = [("network", i) for i in range(counts["network"])]
    if layout.network_racks == "start":
        sequence = network + compute
    elif layout.network_racks == "middle":
        half = (len(compute) + 1) // 2
        sequence = compute[:half] + network + compute[half:]
    else:
        sequence = compute + network

    racks: list[Rack] = []
    rack_of: dict[RackKind, list[Rack]] = {"gpu": [], "server": [], "network": []}
    for index, (kind, _) in enumerate(sequence):
        row, column = divmod(index, layout.racks_per_row)
        rack = Rack(f"R{row + 1:02d}-{column + 1:02d}", row + 1, column + 1, kind)
        racks.append(rack)
        rack_of[kind].append(rack)  # kind-local numbers come in order within each kind

    positions: dict[str, Position] = {}
    for kind, slots in (("gpu", gpu_slots), ("server", server_slots), ("network", network_slots)):
        for (name, height), (number, ru) in zip(by_kind[kind], slots, strict=True):
            positions[name] = Position(rack_of[kind][number], ru, height)

    if not any(height > layout.rack_units for _, height in by_kind["gpu"]):
        overfull = next((number for number, used in enumerate(gpu_used) if used > layout.rack_units), None)
        if overfull is not None:
            nodes = sum(1 for number, _ in gpu_slots if number == overfull)
            problems.append(
                Problem(
                    f"GPU rack {rack_of['gpu'][overfull].name} needs {gpu_used[overfull]} RU for its {_count(nodes, 'node')}; "
                    f"a rack has {layout.rack_units} RU",
                    hint="lower layout.gpu_nodes_per_rack, or raise layout.rack_units if the racks are taller",
                    field=("layout", "gpu_nodes_per_rack"),
                )
            )

    if layout.racks is not None and len(racks) > layout.racks:
        parts = []
        if counts["gpu"]:
            gpu_nodes = len(by_kind["gpu"])
            parts.append(f"{_count(counts['gpu'], 'GPU rack')} ({_count(gpu_nodes, 'node')} at {layout.gpu_nodes_per_rack} per rack)")
        if counts["server"]:
            parts.append(_count(counts["server"], "server rack"))
        if counts["network"]:
            parts.append(_count(counts["network"], "network rack"))
        hint = f"set layout.racks to {len(racks)} or more"
        if counts["gpu"]:
            hint += ", or put more GPU nodes in a rack (layout.gpu_nodes_per_rack) if power and cooling allow"
        problems.append(
            Problem(
                f"the layout has {_count(layout.racks, 'rack')}; the design needs {len(racks)}: {', '.join(parts)}",
                hint=hint,
                field=("layout", "racks"),
            )
        )
    return Placement(racks, positions, problems)


def _stack(items: list[tuple[str, int]], per_rack: int) -> tuple[list[tuple[int, int]], list[int]]:
    """`per_rack` items to a rack, stacked from RU 1; also each rack's rack units used."""
    slots: list[tuple[int, int]] = []
    used: list[int] = []
    for index, (_, height) in enumerate(items):
        number = index // per_rack
        if number == len(used):
            used.append(0)
        slots.append((number, used[number] + 1))
        used[number] += height
    return slots, used


def _fill(items: list[tuple[str, int]], rack_units: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Items stacked from RU 1 until the next one does not fit, then the next rack. An item taller
    than a rack gets a rack of its own (and a problem from the caller)."""
    slots: list[tuple[int, int]] = []
    used: list[int] = []
    for _, height in items:
        if not used or (used[-1] and used[-1] + height > rack_units):
            used.append(0)
        slots.append((len(used) - 1, used[-1] + 1))
        used[-1] += height
    return slots, used


def _racks_in(slots: list[tuple[int, int]]) -> int:
    return slots[-1][0] + 1 if slots else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# -- length ----------------------------------------------------------------------------------


def cable_length_m(a: Position, b: Position, layout: Layout) -> float:
    """Estimated run between two devices in metres, slack included, not yet a standard length."""
    if a.rack.name == b.rack.name:
        run = abs(a.ru - b.ru) * RACK_UNIT_M
    else:
        rise = (max(0, layout.rack_units - a.ru) + max(0, layout.rack_units - b.ru)) * RACK_UNIT_M + 2 * layout.tray_height_m
        along = abs(a.rack.column - b.rack.column) * layout.rack_width_m + abs(a.rack.row - b.rack.row) * layout.row_pitch_m
        run = rise + along
    return run + layout.slack_m


# -- media -----------------------------------------------------------------------------------

_CacheKey = tuple[str, int, int, str | None, float | None, str | None]
_caches: dict[int, dict[_CacheKey, MediaChoice | Problem]] = {}


def choose_media(
    catalog: Catalog,
    *,
    cage_form_factor: str,
    cage_speed: int,
    link_speed: int,
    far_form_factor: str | None = None,
    length_m: float | None = None,
    preferred: str | None = None,
) -> MediaChoice | Problem:
    """What goes in a switch cage (`cage_form_factor`, `cage_speed` Gb/s, carrying `link_speed`
    Gb/s links) for a run of `length_m` metres (None: no layout) to a cage of `far_form_factor`
    (None: a switch cage like this one). `preferred` is the intent's optic PID, if any. A Problem
    carries message and hint only; the caller says where (field, device, port)."""
    run = None if length_m is None else round(length_m, 3)  # millimetres: float noise must not cost a size
    key = (cage_form_factor, cage_speed, link_speed, far_form_factor, run, preferred)
    cache = _cache_of(catalog)
    choice = cache.get(key)
    if choice is None:
        choice = cache[key] = _choose(catalog, *key)
    return choice


def _cache_of(catalog: Catalog) -> dict[_CacheKey, MediaChoice | Problem]:
    # A Catalog holds dicts, so it is not hashable: key by identity, dropped with the catalog.
    key = id(catalog)
    cache = _caches.get(key)
    if cache is None:
        cache = _caches[key] = {}
        weakref.finalize(catalog, _caches.pop, key, None)
    return cache


def _choose(
    catalog: Catalog, form_factor: str, cage_speed: int, link_speed: int, far: str | None, run: float | None, preferred: str | None
) -> MediaChoice | Problem:
    cage = f"{form_factor} {cage_speed}G cages carrying {link_speed}G links"
    if form_factor == "RJ45":
        return _ethernet_copper(catalog, None, run)
    far = far or form_factor

    if preferred is not None:
        optic = catalog.transceivers.get(preferred)
        if optic is None:
            return Problem(f"transceiver {preferred} is not in the catalog", hint="name a transceiver PID from the catalog, or add it in a catalog file")
        if not _fits_cage(optic, form_factor, cage_speed, link_speed):
            return Problem(
                f"{preferred} ({optic.form_factor} {optic.speed}G, {optic.link_speed}G links) does not fit {cage}",
                hint="name a transceiver of that form factor and speed, or remove it to use the catalog default",
            )
        if run is None:
            return MediaChoice(preferred, optic.cable, None)
        choice = _fit(catalog, preferred, optic, run, far)
        if isinstance(choice, Problem):
            return Problem(
                choice.message,
                hint="name one that reaches under backend.optics, remove it to let the run length choose, or move the racks closer",
            )
        return choice

    if run is None:
        default = catalog.default_optic(form_factor, link_speed, cage_speed)
        if default is None:
            return Problem(
                f"the catalog has no default transceiver for {cage}",
                hint="name one under backend.optics, or mark one 'default: true' in a catalog file",
            )
        return MediaChoice(default, catalog.transceivers[default].cable, None)

    candidates = [(pid, optic) for pid, optic in catalog.transceivers.items() if _fits_cage(optic, form_factor, cage_speed, link_speed)]
    candidates.sort(key=lambda item: (_MEDIA_RANK.get(item[1].media, len(_MEDIA_RANK)), _longest_run(catalog, item[1]), item[0]))
    longest: tuple[float, str] | None = None
    for pid, optic in candidates:
        choice = _fit(catalog, pid, optic, run, far)
        if isinstance(choice, MediaChoice):
            return choice
        if not _built_in(optic) or (optic.far_form_factor or optic.form_factor) == far:
            reach = _longest_run(catalog, optic)
            if longest is None or reach > longest[0]:
                longest = (reach, pid)
    if longest is None:
        return Problem(
            f"the catalog has no transceiver for {cage}" + (f" reaching a {far} cage" if far != form_factor else ""),
            hint="add one to a catalog file",
        )
    return Problem(
        f"nothing for {cage} reaches a {_metres(run)} run (the longest reach: {longest[1]}, {_metres(longest[0])})",
        hint="add a longer-reach transceiver (and its cable) to a catalog file, or move the racks closer",
    )


def _fits_cage(optic: Transceiver, form_factor: str, cage_speed: int, link_speed: int) -> bool:
    return optic.serves(form_factor, cage_speed, link_speed)


def _built_in(optic: Transceiver) -> bool:
    return optic.cable is None and optic.media in _BUILT_IN


def _ethernet_optic(optic: Transceiver) -> bool:
    """A copper RJ45 transceiver (GLC-TE): any Ethernet patch cable will do."""
    return optic.media == "copper" and optic.connector == "RJ45"


def _fit(catalog: Catalog, pid: str, optic: Transceiver, run: float, far: str) -> MediaChoice | Problem:
    """The choice if this optic serves the run; otherwise why not."""
    if _built_in(optic):
        assert optic.length_m is not None  # the catalog model requires it
        if (optic.far_form_factor or optic.form_factor) != far:
            return Problem(f"{pid}'s far end is {optic.far_form_factor or optic.form_factor}, not the {far} cage at the other end")
        if optic.length_m < run:
            return Problem(f"a {_metres(run)} run is longer than {pid} ({_metres(optic.length_m)})")
        return MediaChoice(pid, None, optic.length_m)
    if optic.reach_m < run:
        return Problem(f"a {_metres(run)} run exceeds {pid}'s reach ({_metres(optic.reach_m)})")
    if _ethernet_optic(optic):
        return _ethernet_copper(catalog, pid, run, first=optic.cable)
    if optic.cable is None:
        return MediaChoice(pid, None, None)
    cable = catalog.cables[optic.cable]
    length = _standard_length(cable, run)
    if length is None:
        return Problem(f"a {_metres(run)} run is longer than the longest {optic.cable} ({_metres(max(cable.lengths_m))}) that {pid} takes")
    return MediaChoice(pid, optic.cable, length)


def _ethernet_copper(catalog: Catalog, optic: str | None, run: float | None, first: str | None = None) -> MediaChoice | Problem:
    """An RJ45 run: the first Ethernet patch cable (the optic's own first) that comes long enough."""
    cables = catalog.ethernet_cables()
    if first is not None and first in catalog.cables:
        cables = [first, *(pid for pid in cables if pid != first)]
    if run is None:
        return MediaChoice(optic, cables[0] if cables else None, None)
    if run > ETHERNET_COPPER_REACH_M:
        return Problem(
            f"a {_metres(run)} copper run exceeds Ethernet's {_metres(ETHERNET_COPPER_REACH_M)} over twisted pair",
            hint="move the racks closer (e.g. the OOB switches nearer the devices they serve)",
        )
    for pid in cables:
        length = _standard_length(catalog.cables[pid], run)
        if length is not None:
            return MediaChoice(optic, pid, length)
    return Problem(
        f"no copper RJ45 cable in the catalog comes {_metres(run)} long or longer",
        hint="add one (media: copper, connector: RJ45, lengths_m up to 100) to a catalog file",
    )


def _standard_length(cable: Cable, run: float) -> float | None:
    """The shortest standard length that covers the run; a cable with no listed lengths is cut to
    length (whole metres)."""
    if not cable.lengths_m:
        return float(math.ceil(run))
    return min((length for length in cable.lengths_m if length >= run), default=None)


def _longest_run(catalog: Catalog, optic: Transceiver) -> float:
    """The longest run this optic serves with the catalog's cables."""
    if _built_in(optic):
        return optic.length_m  # type: ignore[return-value]
    if _ethernet_optic(optic):
        lengths = [max(catalog.cables[pid].lengths_m, default=math.inf) for pid in catalog.ethernet_cables()]
        return min(optic.reach_m, ETHERNET_COPPER_REACH_M, max(lengths, default=optic.reach_m))
    if optic.cable is None:
        return optic.reach_m
    return min(optic.reach_m, max(catalog.cables[optic.cable].lengths_m, default=math.inf))


def _metres(value: float) -> str:
    return f"{round(value, 1):g} m"
