"""The hardware catalog's schema: switches, transceivers, cables, nodes and other components.

Every entry is keyed by its PID (the orderable part number), which is what the BOM lists.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, Field, GetJsonSchemaHandler, ValidationError, WithJsonSchema, create_model, field_validator, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from fabricgen.basics.models import InputModel
from fabricgen.basics.trust import SAYS, InterfaceName, Pid, Text, Token, check_interface_name, check_line_name, check_pattern
from fabricgen.basics.units import MAX_CAGES, MAX_LANES, Speed, parse_speed
from fabricgen.nos import registry


def _registered_nos(name: str) -> str:
    """`name` is a NOS package fabricgen has (fabricgen.nos.registry); refused as a Literal would
    be, so the problem lists the choices and guesses the one meant."""
    choices = registry.names()
    if name not in choices:
        expected = " or ".join(", ".join(f"'{n}'" for n in choices).rsplit(", ", 1))
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return name


class _NosChoices:
    """The JSON Schema of a NOS name: an enum of the registered NOSes, read when the schema is made."""

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["enum"] = list(registry.names())
        return schema


# A NOS's name as intents and catalogs write it: one of the NOS packages (fabricgen/nos/<name>/).
Nos = Annotated[str, AfterValidator(_registered_nos), _NosChoices()]


def is_nos(name: str) -> bool:
    """`name` is a NOS the catalog keys its per-NOS tables by (a device's `nos` is a plain str)."""
    return name in registry.names()


_Section = TypeVar("_Section", bound=BaseModel)  # a NOS's section of a switch entry (SwitchModel.platform)

Media = Literal["smf", "mmf", "copper", "dac", "aoc"]
# The intent's load-balancing vocabulary (fabricgen.intent.model.LoadBalancing), repeated here
# because the intent schema imports the catalog's types, not the other way round; a test keeps
# the two equal.
LoadBalancingMode = Literal["ecmp", "flowlet", "per-packet"]
HashFieldName = Literal["src-ip", "dst-ip", "protocol", "src-port", "dst-port", "ipv6-flow-label", "inner"]
FIVE_TUPLE: tuple[HashFieldName, ...] = ("src-ip", "dst-ip", "protocol", "src-port", "dst-port")

# How a server port's NIC is told the fabric's QoS: connectx (NVIDIA ConnectX/BlueField, mlx5:
# mlnx_qos and sysfs), broadcom (Thor/Thor2, bnxt_re: configfs and iproute2 dcb), pollara (AMD
# Pensando Pollara 400, ionic: AMD's nicctl), ontap (a NetApp controller: not Linux, it gets a
# settings sheet). Unknown (None): settings are printed, not applied.
NicFamily = Literal["connectx", "broadcom", "pollara", "ontap"]

_BREAKOUT = re.compile(r"^(\d{1,2})x(\d{1,5}[GM])$", re.IGNORECASE)

# Upper bounds no real hardware reaches (README: "Bad input"): a catalog entry is validated by
# walking its cages and names, so a count of a billion would cost minutes before any check.
MAX_FANOUT = 16
MAX_NOSES = 16  # a switch model runs a handful of NOSes
MAX_RACK_UNITS = 60
MAX_NODE_PORTS = 256  # of one kind on one server
MAX_GPUS_PER_NODE = 1024  # a rack-scale "node" (NVL72, NVL576) included
MAX_REACH_M = 200_000  # coherent ZR+ optics reach 120 km
MAX_CABLE_M = 10_000
MAX_SLOTS = 64  # slots of one kind in a chassis (the largest have 16 to 18 line-card slots)


class Breakout(InputModel):
    fanout: int
    speed: int  # Gb/s of each sub-port


class SlotPlace(InputModel):
    """Where a chassis's port group sits: its line card's slot, and the number its first cage has
    on that card (names count ports per card: EOS Ethernet3/1/1 is slot 3, port 1)."""

    number: int = Field(ge=0, le=MAX_SLOTS)
    first_port: int = Field(ge=0, le=MAX_CAGES)


class PortGroup(InputModel):
    """A run of identical front-panel cages, numbered from `first`."""

    first: int = Field(1, ge=0, le=MAX_CAGES)
    count: int = Field(ge=1, le=MAX_CAGES)
    speed: Speed
    form_factor: Token
    lanes: int = Field(1, ge=1, le=MAX_LANES, description="SerDes lanes per cage; SONiC names ports by first lane")
    breakouts: list[str] = Field([], max_length=8)
    interface_names: dict[Nos, InterfaceNaming] = Field(
        {}, description="per NOS: how this group's cages are named, where it differs from the switch's interface_names (EOS: Ethernet65, not Ethernet65/1)"
    )
    slot: SlotPlace | None = Field(None, description="a chassis's group: its line card's slot (set from the chassis section's line cards)")

    @field_validator("breakouts")
    @classmethod
    def _breakouts_are_fanout_x_speed(cls, values: list[str]) -> list[str]:
        for value in values:
            match = _BREAKOUT.match(value)
            if not match:
                raise ValueError(f"breakout {value!r} must look like 2x400G")
            if not 2 <= int(match.group(1)) <= MAX_FANOUT:
                raise ValueError(f"breakout {value!r} must split into 2 to {MAX_FANOUT} sub-ports")
            parse_speed(match.group(2))
        return values

    @cached_property
    def breakout_modes(self) -> list[Breakout]:
        modes = []
        for value in self.breakouts:
            fanout, speed = _BREAKOUT.match(value).groups()  # type: ignore[union-attr]
            modes.append(Breakout(fanout=int(fanout), speed=parse_speed(speed)))
        return modes

    @cached_property
    def fanouts(self) -> dict[int, int]:
        """Speed -> sub-ports per cage, made once: every cage of a chassis's hundreds asks."""
        found: dict[int, int] = {}
        for mode in self.breakout_modes:
            found[mode.speed] = max(found.get(mode.speed, 0), mode.fanout)
        found[self.speed] = 1
        return found

    def fanout_at(self, speed: int) -> int:
        """Sub-ports per cage when broken out to `speed`; 1 at the native speed; 0 if impossible."""
        return self.fanouts.get(speed, 0)

    def lanes_at(self, speed: int) -> int:
        """SerDes lanes of one port at `speed`."""
        return self.lanes // self.fanout_at(speed)

    @model_validator(mode="after")
    def _lanes_split_evenly(self) -> PortGroup:
        for mode in self.breakout_modes:
            if self.lanes % mode.fanout:
                raise ValueError(f"{self.lanes} lanes cannot be split {mode.fanout} ways")
        return self


# NX-OS 10.5(3)F, EOS 4.32.2F (or a hotfix 4.32.2.1F), either's train 10.5 / 4.32, SONiC 202411 or
# master. Plain groups (the JSON Schema carries the pattern, and ECMAScript has no (?P<name>...)):
# 1 major, 2 minor, 3 NX-OS maintenance, 4 EOS maintenance, 5 EOS hotfix, 6 SONiC branch, 7 master.
NOS_RELEASE = re.compile(r"^(?:(\d{1,2})\.(\d{1,2})(?:\((\d{1,2})\)[A-Z]{0,2}|\.(\d{1,2})(?:\.(\d{1,2}))?[A-Z]{0,2})?|(\d{6})|(master))$")
MAX_RELEASES = 64
MAX_FEATURES = 256
MAX_PARAMETER = 2**63 - 1  # a documented range is at most a 64-bit integer's (NX-OS DME uint64)


def release_key(release: str) -> tuple[int, ...]:
    """Sort key of a release name: NX-OS `10.5(3)F` -> (10, 5, 3) (a train `10.5` is its first
    maintenance release, 10.5(1)); EOS `4.32.2F` -> (4, 32, 2), a hotfix `4.32.2.1F` -> (4, 32,
    2, 1) (an EOS train's first release is 4.32.0F, so EOS features name full releases); SONiC
    `202411` -> (202411,); `master` after every branch."""
    match = NOS_RELEASE.match(release)
    if match is None:
        raise ValueError(f"{release!r} is not a release name like 10.5(3)F, 4.32.2F, 10.5, 202411 or master")
    major, minor, maintenance, dotted_maintenance, hotfix, branch, master = match.groups()
    if master:
        return (999_999,)
    if branch:
        return (int(branch),)
    if dotted_maintenance is not None:
        return (int(major), int(minor), int(dotted_maintenance), *((int(hotfix),) if hotfix is not None else ()))
    return (int(major), int(minor), int(maintenance or 1))


def is_train(release: str) -> bool:
    """Whether `release` names a train (10.5, 4.32) rather than one release of it."""
    match = NOS_RELEASE.match(release)
    return match is not None and match.group(1) is not None and match.group(3) is None and match.group(4) is None


def _check_release(value: str) -> str:
    release_key(value)
    return value


Release = Annotated[
    str,
    Field(max_length=16),
    AfterValidator(_check_release),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": 16,
            "pattern": NOS_RELEASE.pattern,
            SAYS: "a release as its NOS names it: NX-OS 10.5(3)F or 10.5, EOS 4.32.2F, SONiC 202411, or master",
            "examples": ["10.5(3)F", "10.5", "4.32.2F", "202411", "master"],
        }
    ),
]


NAME_FIELDS = ("port", "sub", "lane", "number", "cage_lane", "slot", "card_port")


class InterfaceNaming(InputModel):
    """Python format strings over {port} (cage number), {sub} (breakout sub-port, 1-based),
    {lane} (the port's first SerDes lane), {number} (the number SONiC gives the port, the N of
    EthernetN), {cage_lane} (the port's first lane within its cage, 1-based: EOS names the
    2x400G sub-ports of an 8-lane cage Ethernet1/1 and Ethernet1/5), and for a chassis {slot}
    (the line card's slot) and {card_port} (the cage's number on its card: EOS Ethernet3/1/1 is
    Ethernet{slot}/{card_port}/{cage_lane}); a fixed switch is slot 1 and its cages its card's
    ports. {lane} and {number} come from the catalog's SONiC platform map (`sonic.ports`); a
    switch without one numbers lanes from 0 across all port groups, and its {number} is that
    first lane."""

    port: str
    breakout: str

    @field_validator("port", "breakout")
    @classmethod
    def _pattern_formats(cls, pattern: str) -> str:
        # every name it gives is an interface name: it follows 'interface' in a config
        return check_pattern(pattern, NAME_FIELDS, check=check_interface_name)


class Sourced(InputModel):
    """One published number and where it was published (document and section)."""

    value: int = Field(ge=1, le=2**40)
    source: Text


class SourcedEcn(InputModel):
    """A vendor's recommended WRED/ECN thresholds for the RoCE queue at one port speed (KB)."""

    min_kbytes: int = Field(ge=1, le=1_000_000)
    max_kbytes: int = Field(ge=1, le=1_000_000)
    drop_probability: int = Field(ge=1, le=100)
    source: Text

    @model_validator(mode="after")
    def _min_below_max(self) -> SourcedEcn:
        if self.min_kbytes >= self.max_kbytes:
            raise ValueError(f"min_kbytes ({self.min_kbytes}) must be below max_kbytes ({self.max_kbytes})")
        return self


class PlatformQos(InputModel):
    """What the vendor publishes about this switch's lossless behaviour; every entry names its
    source. Anything absent falls back to fabricgen's generic rules (with a build note)."""

    ecn: dict[Speed, SourcedEcn] = Field({}, description="recommended ECN per port speed")
    pfc_trigger_kbytes: dict[Speed, Sourced] = Field({}, description="ingress occupancy that sends PAUSE, per port speed")
    buffer_bytes: Sourced | None = Field(None, description="the packet buffer of the whole switch")
    max_headroom_bytes: Sourced | None = Field(None, description="the most headroom (xoff) one lossless PG of a port can have")
    mac_phy_delay_bytes: Sourced | None = Field(None, description="data the MAC/PHY still sends after a pause (SONiC ASIC_TABLE mac_phy_delay)")


class ChassisPart(InputModel):
    """A component every switch of a chassis entry carries (supervisors, fabric modules, power
    supplies): its PID, what it is and how many; the BOM lists it."""

    pid: Pid
    description: Text
    count: int = Field(ge=1, le=MAX_SLOTS)
    unverified: Text | None = Field(None, description="why the PID or count is not confirmed by a public source (the BOM repeats it)")


class LineCard(InputModel):
    """A line card model, its front-panel cages numbered from 1 on the card, and the chassis slots
    it is fitted in."""

    pid: Pid
    description: Text
    slots: list[Annotated[int, Field(ge=0, le=MAX_SLOTS)]] = Field(min_length=1, max_length=MAX_SLOTS, description="the slots it is fitted in")
    port_groups: list[PortGroup] = Field(min_length=1, max_length=8, description="its cages, numbered from 1 on the card")
    unverified: Text | None = Field(None, description="why a fact of it is not confirmed by a public source (the BOM repeats it)")

    @property
    def cage_span(self) -> int:
        """The highest cage number on the card: each slot takes this many of the chassis's cage numbers."""
        return max(group.first + group.count - 1 for group in self.port_groups)


class Chassis(InputModel):
    """A modular switch: its chassis, slots, and what a built switch carries in them. The switch's
    port groups are its line cards', one run per slot, numbered across the chassis in slot order;
    names give slot and port on the card ({slot}, {card_port})."""

    pid: Pid | None = Field(None, description="the chassis's own PID for the BOM; default: the switch entry's")
    first_line_card_slot: int = Field(1, ge=0, le=MAX_SLOTS, description="the slot number of the first line-card slot (EOS 78xx: 3, after two supervisors)")
    line_card_slots: int = Field(ge=1, le=MAX_SLOTS)
    supervisor_slots: int = Field(ge=1, le=MAX_SLOTS)
    fabric_module_slots: int = Field(0, ge=0, le=MAX_SLOTS)
    line_cards: list[LineCard] = Field(min_length=1, max_length=8)
    supervisors: ChassisPart
    fabric_modules: ChassisPart | None = None
    power_supplies: ChassisPart | None = None
    fan_trays: ChassisPart | None = None
    source: Text = Field(description="where the slots, parts and counts were published")

    @model_validator(mode="after")
    def _parts_fit_their_slots(self) -> Chassis:
        last = self.first_line_card_slot + self.line_card_slots - 1
        taken: dict[int, str] = {}
        for card in self.line_cards:
            for slot in card.slots:
                if not self.first_line_card_slot <= slot <= last:
                    raise ValueError(f"line card {card.pid} is in slot {slot}, but the line-card slots are {self.first_line_card_slot}-{last}")
                if slot in taken:
                    raise ValueError(f"slot {slot} holds both {taken[slot]} and {card.pid}; a slot takes one line card")
                taken[slot] = card.pid
        if self.supervisors.count > self.supervisor_slots:
            raise ValueError(f"{self.supervisors.count} supervisors do not fit {self.supervisor_slots} supervisor slots")
        if self.fabric_modules is not None and self.fabric_modules.count > self.fabric_module_slots:
            raise ValueError(f"{self.fabric_modules.count} fabric modules do not fit {self.fabric_module_slots} fabric-module slots")
        if sum(card.cage_span * len(card.slots) for card in self.line_cards) > MAX_CAGES:
            raise ValueError(f"the line cards give more than {MAX_CAGES} cages in all")
        return self

    def fitted(self) -> list[tuple[int, LineCard]]:
        """(slot, line card) of every fitted slot, in slot order."""
        return sorted((slot, card) for card in self.line_cards for slot in card.slots)

    def port_groups(self) -> list[PortGroup]:
        """The switch's port groups: each fitted card's groups, numbered on from the previous
        slot's cages, each knowing its slot and its number on the card."""
        groups, base = [], 0
        for slot, card in self.fitted():
            for group in card.port_groups:
                place = SlotPlace(number=slot, first_port=group.first)
                groups.append(group.model_copy(update={"first": base + group.first, "slot": place}))
            base += card.cage_span
        return groups

    def parts(self) -> list[tuple[str, str, str, int, str | None]]:
        """(kind, PID, description, count per switch, unverified) of every component but the chassis."""
        found: list[tuple[str, str, str, int, str | None]] = []
        for card in self.line_cards:
            found.append(("line card", card.pid, card.description, len(card.slots), card.unverified))
        for kind, part in (
            ("supervisor", self.supervisors),
            ("fabric module", self.fabric_modules),
            ("power supply", self.power_supplies),
            ("fan tray", self.fan_trays),
        ):
            if part is not None:
                found.append((kind, part.pid, part.description, part.count, part.unverified))
        return found


def _default_management_ports() -> dict[str, str]:
    return {name: package.MANAGEMENT_PORT for name, package in registry.plugins().items()}


class SwitchModel(InputModel):
    description: Text
    nos_release: dict[Nos, Release] = Field(
        default_factory=dict, description="per NOS: the release a switch of this model runs when the intent names none (default: the NOS's own default)"
    )
    vendor: Text
    nos: list[Nos] = Field(min_length=1, max_length=MAX_NOSES, description="operating systems this hardware runs")
    port_groups: list[PortGroup] = Field([], max_length=64, description="front-panel cages in runs; a chassis entry's come from its line cards")
    chassis: Chassis | None = Field(None, description="a modular switch: chassis, slots, line cards, supervisors, fabric modules")
    interface_names: dict[Nos, InterfaceNaming]
    max_ecmp_paths: int = Field(64, ge=1, le=65_536)
    rack_units: int = Field(1, ge=1, le=MAX_RACK_UNITS)
    management_port: dict[Nos, InterfaceName] = Field(default_factory=_default_management_ports, description="the out-of-band Ethernet port, per NOS")
    console_port: InterfaceName = "console"
    # and a section per NOS package that gives one, named after the NOS: see _with_platform_sections
    qos: PlatformQos = PlatformQos()
    load_balancing: dict[Nos, list[LoadBalancingMode]] = Field(
        default_factory=dict, description="load-balancing modes this hardware does under each NOS (ecmp only when a NOS is not listed)"
    )
    hash_fields: dict[Nos, list[HashFieldName]] = Field(
        default_factory=dict, description="ECMP hash inputs the NOS can choose on this hardware (the 5-tuple when a NOS is not listed)"
    )

    @model_validator(mode="before")
    @classmethod
    def _line_cards_give_port_groups(cls, data: Any) -> Any:
        """A chassis entry's port groups are its fitted line cards' (Chassis.port_groups). A
        chassis section that does not validate is left to the field, located in its section."""
        if not isinstance(data, dict) or data.get("chassis") is None:
            return data
        if "port_groups" in data:
            raise ValueError("a chassis entry's ports come from its line cards; remove port_groups (or the chassis section)")
        try:
            chassis = Chassis.model_validate(data["chassis"])
        except ValidationError:
            return data
        return {**data, "chassis": chassis, "port_groups": chassis.port_groups()}  # validated once

    @model_validator(mode="after")
    def _has_ports(self) -> SwitchModel:
        if not self.port_groups and self.chassis is None:
            raise ValueError("a switch needs port_groups (its front-panel cages), or a chassis section whose line cards give them")
        return self

    def load_balancing_modes(self, nos: str) -> list[str]:
        """The modes this switch does under `nos`; every switch does ECMP."""
        return list(self.load_balancing.get(nos, ["ecmp"])) if is_nos(nos) else ["ecmp"]

    def hash_fields_on(self, nos: str) -> list[str]:
        """The ECMP hash inputs `nos` can choose on this switch."""
        return list(self.hash_fields.get(nos, FIVE_TUPLE) if is_nos(nos) else FIVE_TUPLE)

    @model_validator(mode="after")
    def _load_balancing_per_nos_it_runs(self) -> SwitchModel:
        for what, table in (("load_balancing", self.load_balancing), ("hash_fields", self.hash_fields)):
            for nos, values in table.items():
                if nos not in self.nos:
                    raise ValueError(f"{what} lists {nos}, which this switch does not run (nos: {', '.join(self.nos)})")
                if len(set(values)) != len(values):
                    raise ValueError(f"{what}.{nos} lists a value twice")
        for nos, modes in self.load_balancing.items():
            if "ecmp" not in modes:
                raise ValueError(f"load_balancing.{nos} must include ecmp (every switch hashes flows over equal-cost paths)")
        return self

    @model_validator(mode="after")
    def _names_for_every_nos(self) -> SwitchModel:
        missing = [nos for nos in self.nos if nos not in self.interface_names]
        if missing:
            raise ValueError(f"interface_names has no entry for {', '.join(missing)}")
        for group in self.port_groups:
            other = [nos for nos in group.interface_names if nos not in self.nos]
            if other:
                raise ValueError(f"port group {group.first}-{group.first + group.count - 1} names ports for {', '.join(other)}, which this switch does not run")
        return self

    def naming(self, nos: str, cage: int) -> InterfaceNaming:
        """How `nos` names `cage` and its sub-ports: its port group's patterns, else the switch's."""
        group = self.group_of(cage)
        override = group.interface_names.get(nos) if group is not None else None
        return override or self.interface_names[nos]

    def _card_place(self, cage: int) -> tuple[int, int]:
        """(slot, port on the card) of a cage: a chassis's from its line card, a fixed switch's slot 1."""
        if self.chassis is None:
            return 1, cage
        group = self.group_of(cage)
        if group is None or group.slot is None:
            return 1, cage
        return group.slot.number, cage - group.first + group.slot.first_port

    def _port_name(self, nos: str, cage: int) -> str:
        slot, card_port = self._card_place(cage)
        return self.naming(nos, cage).port.format(
            port=cage, sub=0, lane=self.first_lanes[cage], number=self.port_numbers[cage], cage_lane=1, slot=slot, card_port=card_port
        )

    def _subport_name(self, nos: str, cage: int, sub: int, number: int, lanes: tuple[int, ...]) -> str:
        # a sub-port's number is its cage's plus its lane offset in the cage (subports)
        offset = number - self.port_numbers[cage]
        slot, card_port = self._card_place(cage)
        return self.naming(nos, cage).breakout.format(port=cage, sub=sub, lane=lanes[0], number=number, cage_lane=offset + 1, slot=slot, card_port=card_port)

    @model_validator(mode="after")
    def _groups_do_not_overlap(self) -> SwitchModel:
        cages: dict[int, int] = {}
        if sum(group.count for group in self.port_groups) > MAX_CAGES:
            raise ValueError(f"more than {MAX_CAGES} cages in all")
        for index, group in enumerate(self.port_groups):
            for cage in range(group.first, group.first + group.count):
                if cage in cages:
                    raise ValueError(f"port groups {cages[cage] + 1} and {index + 1} both claim cage {cage}")
                cages[cage] = index
        return self

    @model_validator(mode="after")
    def _platform_sections_fit(self) -> SwitchModel:
        """Each NOS's section fits the rest of the entry (SONiC's port map covers every cage)."""
        for section in self.platform_sections():
            section.check_entry(self)
        return self

    @model_validator(mode="after")
    def _names_are_unique(self) -> SwitchModel:
        """Every cage, and every sub-port of each breakout mode, gets a name of its own."""
        for nos in self.interface_names:
            native: dict[str, int] = {}
            for group in self.port_groups:
                for cage in range(group.first, group.first + group.count):
                    name = self._port_name(nos, cage)
                    if name in native:
                        raise ValueError(f"{nos} names cages {native[name]} and {cage} both {name!r}; the pattern needs {{port}} or {{lane}}")
                    native[name] = cage
            for group in self.port_groups:
                for mode in group.breakout_modes:
                    seen: dict[str, int] = {}
                    for cage in range(group.first, group.first + group.count):
                        for sub, number, sub_lanes in self.subports(cage, mode.speed):
                            name = self._subport_name(nos, cage, sub, number, sub_lanes)
                            other = seen.get(name, native.get(name, cage))
                            if other != cage:
                                raise ValueError(f"{nos} breakout name {name!r} of cage {cage} is also cage {other}'s")
                            if name in seen and sub > 1:
                                raise ValueError(f"{nos} breakout names of cage {cage} repeat {name!r}; the pattern needs {{sub}}, {{lane}} or {{cage_lane}}")
                            seen[name] = cage
        return self

    def platform_sections(self) -> list[Any]:
        """The NOS sections of this entry (each a fabricgen.nos.interface.CatalogPlatform), in
        the registry's order."""
        return [getattr(self, name) for name in type(self).model_fields if is_nos(name)]

    def platform(self, nos: str, kind: type[_Section]) -> _Section:
        """The section of this entry named after `nos` (its package's CATALOG_PLATFORM), as `kind`."""
        section = getattr(self, nos, None)
        if not isinstance(section, kind):
            raise TypeError(f"a switch entry's {nos} section is {type(section).__name__}, not {kind.__name__}")
        return section

    @cached_property
    def platform_ports(self) -> dict[int, tuple[tuple[int, ...], int]]:
        """Cage number -> (its SerDes lanes, its port number) for each cage a NOS's platform
        definition maps (SONiC's port map: CatalogPlatform.cage_ports); empty without one."""
        sections = self.platform_sections()
        mapped = {}
        for group in self.port_groups:
            for cage in range(group.first, group.first + group.count):
                found = next((ports for section in sections if (ports := section.cage_ports(cage, group.lanes)) is not None), None)
                if found is not None:
                    mapped[cage] = found
        return mapped

    @cached_property
    def cage_lanes(self) -> dict[int, tuple[int, ...]]:
        """Cage number -> its SerDes lanes: the platform map's, or, without one, numbered from 0
        across the whole switch in port group order (generic, not any real platform's)."""
        lanes: dict[int, tuple[int, ...]] = {}
        mapped = self.platform_ports
        next_lane = 0
        for group in self.port_groups:
            for cage in range(group.first, group.first + group.count):
                lanes[cage] = mapped[cage][0] if cage in mapped else tuple(range(next_lane, next_lane + group.lanes))
                next_lane += group.lanes
        return lanes

    @cached_property
    def first_lanes(self) -> dict[int, int]:
        """Cage number -> its first SerDes lane."""
        return {cage: lanes[0] for cage, lanes in self.cage_lanes.items()}

    @cached_property
    def port_numbers(self) -> dict[int, int]:
        """Cage number -> the N of the EthernetN SONiC names it: the platform map's, else its
        first lane (the generic numbering)."""
        mapped = self.platform_ports
        return {cage: mapped[cage][1] if cage in mapped else first for cage, first in self.first_lanes.items()}

    @property
    def platform_mapped(self) -> bool:
        """Whether lanes and port numbers come from a real platform's definition."""
        return bool(self.platform_ports)

    def subports(self, cage: int, speed: int) -> list[tuple[int, int, tuple[int, ...]]]:
        """(sub, number, lanes) of each sub-port of `cage` broken out to `speed`: sub-port n takes
        the n-th slice of the cage's lanes in their listed order and is numbered the cage's
        number plus its lane offset (sonic-config-engine portconfig.py, BreakoutCfg.get_config)."""
        group = self.group_of(cage)
        assert group is not None
        width = group.lanes_at(speed)
        lanes, number = self.cage_lanes[cage], self.port_numbers[cage]
        return [(sub, number + offset, lanes[offset : offset + width]) for sub, offset in enumerate(range(0, group.lanes, width), start=1)]

    def port_lanes(self, cage: int, sub: int, speed: int) -> tuple[int, ...]:
        """SerDes lanes of a cage (sub 0) or of one of its sub-ports at `speed`."""
        if not sub:
            return self.cage_lanes[cage]
        return self.subports(cage, speed)[sub - 1][2]

    @cached_property
    def names_given(self) -> dict[tuple[str, int, int, int], str]:
        """name_of's answers so far: every switch of a model names the same ports, so a fabric of
        thousands formats each name once."""
        return {}

    @cached_property
    def allocation_orders(self) -> dict[tuple[str, int], list[tuple[int, int, str]]]:
        """design.graph.PortAllocator's order of (cage, sub, name) per (NOS, speed), kept here
        once made: every switch of a model takes its ports in the same order."""
        return {}

    def name_of(self, nos: str, cage: int, sub: int = 0, speed: int = 0) -> str:
        """The name `nos` gives a cage (sub 0) or one of its sub-ports at `speed`."""
        key = (nos, cage, sub, speed if sub else 0)
        name = self.names_given.get(key)
        if name is None:
            if not sub:
                name = self._port_name(nos, cage)
            else:
                _, number, lanes = self.subports(cage, speed)[sub - 1]
                name = self._subport_name(nos, cage, sub, number, lanes)
            self.names_given[key] = name
        return name

    @cached_property
    def cage_groups(self) -> dict[int, PortGroup]:
        """Each cage -> its port group (the first that claims it), built once per model: every
        port of a large fabric asks."""
        groups: dict[int, PortGroup] = {}
        for group in self.port_groups:
            for cage in range(group.first, group.first + group.count):
                groups.setdefault(cage, group)
        return groups

    def group_of(self, cage: int) -> PortGroup | None:
        return self.cage_groups.get(cage)

    def ports_at(self, speed: int) -> int:
        """How many logical ports of this speed the switch offers (natively or by breakout)."""
        return sum(group.fanout_at(speed) * group.count for group in self.port_groups)


def _with_platform_sections(entry: type[SwitchModel]) -> type[SwitchModel]:
    """The switch entry with a field per NOS package that gives a catalog section, named after the
    NOS and of its CATALOG_PLATFORM (defaults when the entry writes none), so a catalog writes
    `sonic: {platform: ..., ports: [...]}` and an error in it is located under `sonic` as before.
    The fields are the registry's when the catalog's models are defined."""
    sections: dict[str, Any] = {
        name: (package.CATALOG_PLATFORM, package.CATALOG_PLATFORM()) for name, package in registry.plugins().items() if package.CATALOG_PLATFORM is not None
    }
    return create_model(entry.__name__, __base__=entry, __module__=__name__, __doc__=entry.__doc__, **sections)


if not TYPE_CHECKING:  # mypy knows the entry's own fields and methods; pydantic validates the NOS sections too
    SwitchModel = _with_platform_sections(SwitchModel)


class Transceiver(InputModel):
    description: Text
    form_factor: Token
    speed: Speed = Field(description="speed of the cage it plugs into")
    links: int = Field(1, ge=1, le=MAX_FANOUT, description="links it carries: 2 for a 2x400G optic in an 800G cage")
    also_links: list[Annotated[int, Field(ge=1, le=MAX_FANOUT)]] = Field(
        [], max_length=4, description="other link counts the same module runs, set by the port's mode (OSFP-800G-DR8: 1 x 800G as well as 2 x 400G)"
    )
    media: Media
    connector: Token
    reach_m: float = Field(gt=0, le=MAX_REACH_M)
    cable: Pid | None = Field(None, description="the cable PID it takes; none for DAC/AOC")
    length_m: float | None = Field(None, gt=0, le=MAX_CABLE_M, description="fixed length of a DAC/AOC whose cable is built in")
    far_form_factor: Token | None = Field(None, description="the far end's form factor when it differs (default: form_factor)")
    default: bool = Field(False, description="the optic chosen for this form factor and speed when the intent names none")

    @property
    def link_speed(self) -> int:
        return self.speed // self.links

    @property
    def link_speeds(self) -> tuple[int, ...]:
        """Every link speed it serves: its own (`links`) first, then those of `also_links`."""
        return tuple(dict.fromkeys(self.speed // n for n in (self.links, *self.also_links)))

    def cables_per_link(self, link_speed: int) -> int:
        """Separate cables one link of `link_speed` takes: a module whose own mode carries `links`
        links on a connector each uses several of them for a faster link (OSFP-800G-DR8 at
        1 x 800G: both MPO-12 connectors, so two trunks)."""
        return max(1, self.links * link_speed // self.speed)

    def serves(self, form_factor: str, cage_speed: int, link_speed: int) -> bool:
        """Whether it fits a cage of this form factor and speed carrying links of `link_speed`."""
        return self.form_factor == form_factor and self.speed == cage_speed and link_speed in self.link_speeds

    @model_validator(mode="after")
    def _modes_split_the_cage(self) -> Transceiver:
        for n in (self.links, *self.also_links):
            if self.speed % n:
                raise ValueError(f"a {self.speed}G module cannot carry {n} links of equal speed")
        if self.links in self.also_links or len(set(self.also_links)) != len(self.also_links):
            raise ValueError("also_links repeats a link count")
        return self

    @model_validator(mode="after")
    def _built_in_cable_has_a_length(self) -> Transceiver:
        if self.cable is None and self.media in ("dac", "aoc") and self.length_m is None:
            raise ValueError(f"a {self.media.upper()} with its cable built in needs length_m (its fixed length in metres)")
        if self.cable is not None and self.length_m is not None:
            raise ValueError(f"length_m is the length of a built-in cable; this transceiver takes cable {self.cable!r} instead")
        return self


class Cable(InputModel):
    description: Text
    media: Media
    connector: Token
    lengths_m: list[Annotated[float, Field(gt=0, le=MAX_CABLE_M)]] = Field([], max_length=64)


class NodePorts(InputModel):
    count: int = Field(ge=1, le=MAX_NODE_PORTS)
    speed: Speed
    form_factor: Token | None = None
    names: str = Field(description="interface name pattern over {n}, 1-based")
    nic: Text | None = Field(None, description="NIC model behind these ports, e.g. ConnectX-7")
    nic_family: NicFamily | None = Field(None, description="how host files set its QoS; absent: unknown, settings are printed, not applied")
    ports_per_nic: int = Field(
        1, ge=1, le=8, description="backend: ports of each NIC, each to its own plane (e.g. ConnectX-8 as 2 x 400G); names then use {n} and {p}"
    )

    @field_validator("names")
    @classmethod
    def _names_pattern(cls, pattern: str) -> str:
        # a server's port name reaches netplan files and shell scripts
        return check_pattern(pattern, ("n", "p"), check=check_interface_name)

    @model_validator(mode="after")
    def _names_distinct(self) -> NodePorts:
        if self.ports_per_nic == 1 and "{p" in self.names:
            raise ValueError(f"names pattern {self.names!r} uses {{p}}, but the NICs have one port each (ports_per_nic: 1)")
        names = {self.port_name(rail) for rail in range(1, self.ports + 1)}
        if len(names) != self.ports:
            fields = "{n} and {p}" if self.ports_per_nic > 1 else "{n}"
            raise ValueError(f"names pattern {self.names!r} gives {self.ports} ports the same name; put {fields} in it")
        return self

    @property
    def ports(self) -> int:
        """Every port of the set: with multi-port NICs, `count` NICs x `ports_per_nic`."""
        return self.count * self.ports_per_nic

    def port_name(self, number: int) -> str:
        """Port `number` (1-based) numbered port-major: port p of NIC n is (p - 1) x count + n, so
        planes that split the ports evenly put port p of every NIC in plane p."""
        nic, port = (number - 1) % self.count + 1, (number - 1) // self.count + 1
        return self.names.format(n=nic, p=port) if self.ports_per_nic > 1 else self.names.format(n=nic)


class NodeModel(InputModel):
    kind: Literal["gpu", "storage", "management"]
    description: Text
    gpus: int = Field(0, ge=0, le=MAX_GPUS_PER_NODE)
    gpu_vendor: Literal["nvidia", "amd"] | None = Field(
        None, description="who makes the GPUs: the collective library a test plan runs (NCCL on nvidia, RCCL on amd; both when not given)"
    )
    rack_units: int = Field(1, ge=1, le=MAX_RACK_UNITS)
    backend: NodePorts | None = None
    frontend: NodePorts | None = None
    storage: NodePorts | None = None
    bmc: NodePorts | None = None
    mgmt: NodePorts | None = Field(None, description="host management NIC (copper), cabled to the OOB network")

    @model_validator(mode="after")
    def _gpu_nodes_have_backend_ports(self) -> NodeModel:
        if self.kind == "gpu" and (self.gpus < 1 or self.backend is None):
            raise ValueError("a GPU node needs gpus >= 1 and backend ports")
        return self

    @model_validator(mode="after")
    def _multi_port_nics_on_the_backend(self) -> NodeModel:
        # planes split backend NICs; frontend, storage and management ports are one port per name
        split = [key for key in ("frontend", "storage", "bmc", "mgmt") if (ports := getattr(self, key)) is not None and ports.ports_per_nic > 1]
        if split:
            raise ValueError(f"ports_per_nic only applies to backend ports (planes); remove it from {', '.join(split)}")
        return self

    @model_validator(mode="after")
    def _appliance_or_linux(self) -> NodeModel:
        """ONTAP is the whole node's OS: a node is an appliance on every data port or on none."""
        families = {ports.nic_family for ports in (self.backend, self.frontend, self.storage) if ports is not None}
        if "ontap" in families and families != {"ontap"}:
            raise ValueError("nic_family ontap (an appliance OS) must be on every data port set of the node, not mixed with Linux NICs")
        return self


class ConsoleServer(InputModel):
    description: Text
    module_slots: int = Field(0, ge=0, le=64)
    rack_units: int = Field(1, ge=1, le=MAX_RACK_UNITS)
    line_names: str = Field("0/{slot}/{port}", description="async line name over {slot} (1-based) and {port} (0-based)")
    uplink: NodePorts = Field(description="the port cabled to an OOB switch")
    uplink_optic: Pid | None = Field(None, description="transceiver in the uplink cage (e.g. GLC-TE in an SFP cage)")

    @field_validator("line_names")
    @classmethod
    def _line_pattern(cls, pattern: str) -> str:
        return check_pattern(pattern, ("slot", "port"), check=check_line_name)


class Module(InputModel):
    description: Text
    async_ports: int = Field(0, ge=0, le=256)
    cable: Pid | None = Field(None, description="breakout cable PID for its async ports (e.g. an octal cable)")
    ports_per_cable: int = Field(1, ge=1, le=64)


class Appliance(InputModel):
    description: Text


class ParameterRange(InputModel):
    """What a release (and every later one, until the next entry) accepts for a parameter."""

    since: Release
    min: int = Field(ge=-MAX_PARAMETER, le=MAX_PARAMETER)
    max: int = Field(ge=-MAX_PARAMETER, le=MAX_PARAMETER)
    default: int | None = Field(None, ge=-MAX_PARAMETER, le=MAX_PARAMETER, description="what the NOS uses with no line; a line at it is left out")

    @model_validator(mode="after")
    def _ordered(self) -> ParameterRange:
        if self.min > self.max or (self.default is not None and not self.min <= self.default <= self.max):
            raise ValueError(f"range {self.min}-{self.max} (default {self.default}) is not a range holding its default")
        return self


class Parameter(InputModel):
    """A number a feature's config line or field takes (a CLI argument, a config_db field): its
    documented range and default per release, and where that is written down."""

    syntax: Text = Field(description="the command or config_db field it is written as")
    ranges: list[ParameterRange] = Field(min_length=1, max_length=16, description="oldest first")
    source: Text

    @model_validator(mode="after")
    def _oldest_first(self) -> Parameter:
        keys = [release_key(r.since) for r in self.ranges]
        if keys != sorted(set(keys)):
            raise ValueError("ranges must be listed oldest first, one per release")
        return self

    def at(self, release: str) -> ParameterRange | None:
        """The range `release` accepts; None before the first entry."""
        key = release_key(release)
        found = None
        for entry in self.ranges:
            if release_key(entry.since) <= key:
                found = entry
        return found


class Feature(InputModel):
    """One row of the feature matrix: from which release a rendered feature (or the form fabricgen
    writes it in) exists on this NOS, and where that is written down."""

    since: Release | None = Field(description="first release that has it; null: no release of this flavour has it")
    source: Text = Field(description="document and section (or repository path) that says so")
    models: dict[Pid, Release | None] = Field(
        default_factory=dict, max_length=64, description="switch models where it arrived in another release (null: never)"
    )
    note: Text | None = None
    parameters: dict[Token, Parameter] = Field(default_factory=dict, max_length=16, description="the numbers it takes, with ranges")
    why_not: dict[Pid, Text] = Field(default_factory=dict, max_length=64, description="for a model no release has it on (models: null): why, for the refusal")

    def since_on(self, model: str) -> str | None:
        return self.models.get(model, self.since)


class NosFlavour(InputModel):
    """A NOS as shipped by one supplier (Cisco NX-OS; community SONiC; a vendor's SONiC): its
    releases oldest first, the default, and the feature matrix fabricgen renders against."""

    nos: Nos = Field(description="the adapter that writes its configs")
    description: Text
    releases: list[Release] = Field(min_length=1, max_length=MAX_RELEASES, description="supported releases (NX-OS: trains), oldest first")
    default: Release
    features: dict[Token, Feature] = Field(max_length=MAX_FEATURES)

    @model_validator(mode="after")
    def _ordered_and_known(self) -> NosFlavour:
        keys = [release_key(r) for r in self.releases]
        if keys != sorted(set(keys)):
            raise ValueError("releases must be listed oldest first, each once")
        if self.find(self.default) is None:
            raise ValueError(f"default {self.default!r} is not one of the releases ({', '.join(self.releases)})")
        return self

    def find(self, release: str) -> str | None:
        """The listed release (or NX-OS train) that `release` belongs to; None if not supported."""
        try:
            key = release_key(release)
        except ValueError:
            return None
        for listed in self.releases:
            listed_key = release_key(listed)
            train = is_train(listed) and len(key) >= 3
            if listed_key == key or (train and listed_key[:2] == key[:2]):
                return listed
        return None

    def defaults(self, release: str) -> dict[str, int]:
        """Every parameter's documented default in `release`: "feature.parameter" -> value."""
        found = {}
        for name, feature in self.features.items():
            for parameter, spec in feature.parameters.items():
                entry = spec.at(release)
                if entry is not None and entry.default is not None:
                    found[f"{name}.{parameter}"] = entry.default
        return found

    def has(self, feature: str, release: str, model: str) -> bool:
        since = self.features[feature].since_on(model)
        return since is not None and release_key(since) <= release_key(release)


class CatalogFile(InputModel):
    """One catalog YAML file: every section optional, entries keyed by PID."""

    switches: dict[Pid, SwitchModel] = Field({})
    transceivers: dict[Pid, Transceiver] = Field({})
    cables: dict[Pid, Cable] = Field({})
    nodes: dict[Pid, NodeModel] = Field({})
    console_servers: dict[Pid, ConsoleServer] = Field({})
    modules: dict[Pid, Module] = Field({})
    appliances: dict[Pid, Appliance] = Field({})
    nos_releases: dict[Token, NosFlavour] = Field({}, description="NOS flavours by name: releases and feature matrix")


SECTIONS = tuple(CatalogFile.model_fields)
