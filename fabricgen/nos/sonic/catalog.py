"""SONiC's section of a catalog switch entry (`sonic: {platform: ..., hwsku: ..., ports: [...]}`):
the switch's platform in sonic-buildimage (device/<vendor>/<platform>/), its hwsku, the port map of
that hwsku, the platform's aliases and its names for breakout modes, and where release branches'
files differ. The package's CATALOG_PLATFORM (fabricgen.nos.interface.CatalogPlatform): the catalog takes the entry's lanes and port numbers
from the map and asks it whether it fits the entry's port groups and names.

No catalog module is imported here: the registry loads this package while the catalog's models
are being defined.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StringConstraints, field_validator, model_validator

from fabricgen.basics.models import InputModel
from fabricgen.basics.trust import SAYS, Text, Token, check_interface_name, check_pattern
from fabricgen.basics.units import MAX_CAGES, MAX_LANES
from fabricgen.nos.interface import CatalogPlatform

if TYPE_CHECKING:
    from fabricgen.catalog.model import SwitchModel


class AliasNaming(InputModel):
    """A SONiC platform's front-panel aliases (PORT `alias`), format strings over {port} (cage
    number), {sub} (sub-port, 1-based) and {letter} (the sub-port as a letter: a, b, ...); or,
    with `nos`, the name that NOS gives the port (Arista's platforms before 202505 alias every
    port by its EOS name: Ethernet1/1, Ethernet1/5, Ethernet65)."""

    port: str = "etp{port}"
    breakout: str = "etp{port}{letter}"
    nos: Token | None = Field(None, description="alias each port by this NOS's name of it (the entry's interface_names.<nos>), not by the patterns")

    @field_validator("port", "breakout")
    @classmethod
    def _pattern_formats(cls, pattern: str) -> str:
        # {letter} is a letter, not a number: tried as "a"
        check_pattern(pattern.replace("{letter}", "a"), ("port", "sub"), check=check_interface_name)
        return pattern

    def name(self, switch: SwitchModel, cage: int, sub: int, speed: int) -> str:
        """The alias of a cage (sub 0) or of its sub-port `sub` at `speed` (Gb/s)."""
        if self.nos is not None:
            return switch.name_of(self.nos, cage, sub, speed)
        if not sub:
            return self.port.format(port=cage, sub=0, letter="")
        return self.breakout.format(port=cage, sub=sub, letter=chr(ord("a") + sub - 1))


MAX_RELEASE = 16  # a release name's length (the catalog's Release)
SonicRelease = Annotated[Token, Field(max_length=MAX_RELEASE)]


class ReleaseDifference(InputModel):
    """Where the platform files of some release branches differ from the entry's (the newest
    branches' files): their aliases, and what else they say that the config does not follow, for
    the build's note. Port names and lanes are the entry's on every release: the whole build
    (cabling, routing) names ports, and the ASIC's lanes do not change with the release."""

    releases: list[SonicRelease] = Field(min_length=1, max_length=16, description="the release branches whose platform files these are")
    source: Text = Field(description="the platform file of those releases: repository path and commit")
    alias: AliasNaming | None = Field(None, description="those releases' aliases, where they differ")
    note: Text | None = Field(None, description="what else those files say that the config does not follow, and why (the build note)")

    @model_validator(mode="after")
    def _says_a_difference(self) -> ReleaseDifference:
        if self.alias is None and self.note is None:
            raise ValueError(f"releases {', '.join(self.releases)}: say how they differ (alias or note), or leave them out")
        return self


MAX_LANE_NUMBER = 1 << 20  # ASIC lane ids: up to a few thousand (Cisco 8000 encodes slice/IFG/SerDes)
MAX_PORT_NUMBER = 1 << 20


class PlatformPorts(InputModel):
    """How a run of cages appears in a SONiC platform's port_config.ini / platform.json: cage
    `first` + k is Ethernet<number_base + k * number_stride>, and its lanes are given one of
    three ways: regular (lane_base + k * lane_stride, then the group's lane count in a row),
    per cage first lane (`first_lanes`, each cage's lanes in a row from there) or per cage list
    (`lanes`, for platforms whose lanes within a cage are not in a row).

    A breakout sub-port takes the next slice of its cage's lanes, in the order listed, and is
    Ethernet<cage number + lane offset in the cage> (sonic-config-engine portconfig.py,
    BreakoutCfg.get_config)."""

    first: int = Field(ge=0, le=MAX_CAGES)
    count: int = Field(ge=1, le=MAX_CAGES)
    number_base: int = Field(ge=0, le=MAX_PORT_NUMBER)
    number_stride: int = Field(ge=1, le=MAX_LANES)
    lane_base: int | None = Field(None, ge=0, le=MAX_LANE_NUMBER)
    lane_stride: int | None = Field(None, ge=1, le=MAX_LANES)
    first_lanes: list[Annotated[int, Field(ge=0, le=MAX_LANE_NUMBER)]] | None = Field(None, max_length=MAX_CAGES)
    lanes: list[Annotated[list[Annotated[int, Field(ge=0, le=MAX_LANE_NUMBER)]], Field(min_length=1, max_length=MAX_LANES)]] | None = Field(
        None, max_length=MAX_CAGES
    )

    @model_validator(mode="after")
    def _one_way_of_giving_lanes(self) -> PlatformPorts:
        given = [name for name in ("lane_base", "first_lanes", "lanes") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"cages {self.first}-{self.last}: give their lanes one way: lane_base (with lane_stride), first_lanes or lanes, not {' and '.join(given) or 'none'}"
            )
        if (self.lane_base is None) != (self.lane_stride is None):
            raise ValueError(f"cages {self.first}-{self.last}: lane_base and lane_stride go together")
        listed = self.first_lanes if self.first_lanes is not None else self.lanes
        if listed is not None and len(listed) != self.count:
            raise ValueError(f"cages {self.first}-{self.last}: {len(listed)} lane entries for {self.count} cages; give one per cage")
        return self

    @property
    def last(self) -> int:
        return self.first + self.count - 1

    def cage_lanes(self, cage: int, width: int) -> tuple[int, ...]:
        k = cage - self.first
        if self.lanes is not None:
            return tuple(self.lanes[k])
        start = self.first_lanes[k] if self.first_lanes is not None else self.lane_base + k * self.lane_stride  # type: ignore[operator]
        return tuple(range(start, start + width))

    def number(self, cage: int) -> int:
        return self.number_base + (cage - self.first) * self.number_stride


# A mode as fabricgen writes it, and as platform.json names it: ports x speed, then optional
# alternative speeds in brackets and the lanes it takes in parentheses (sonic-config-engine
# portconfig.py BRKOUT_PATTERN; Dell's Z9864F names its 2 x 400G "2x400G(8)").
BreakoutMode = Annotated[
    str, StringConstraints(pattern=r"^[1-8]x[0-9]{1,4}G$"), Field(json_schema_extra={SAYS: "a cage mode: 1 to 8 ports, 'x', a speed in G, such as 2x400G"})
]
SonicBreakoutMode = Annotated[
    str,
    StringConstraints(pattern=r"^[1-8]x[0-9]{1,4}G(\[[0-9]{1,4}G(,[0-9]{1,4}G){0,7}\])?(\([1-8]\))?$"),
    Field(
        json_schema_extra={
            SAYS: "a cage mode as platform.json names it: 2x400G, then other speeds in brackets and the lanes in parentheses, such as 1x800G[400G] or 2x400G(8)"
        }
    ),
]


class SonicPlatform(CatalogPlatform):
    """A switch model's SONiC platform definition (sonic-buildimage device/<vendor>/<platform>/):
    the platform string and hwsku DEVICE_METADATA names, the port map of that hwsku and the
    platform's aliases; the first release branch with these files (`since`) and where older
    branches' files differ (`releases`). Without `ports` lanes are numbered generically and the
    build says so."""

    platform: Token | None = None
    hwsku: Token | None = None
    source: Text | None = Field(None, description="where these facts come from: repository path and commit")
    ports: list[PlatformPorts] = Field([], max_length=MAX_CAGES)
    unverified: Text | None = Field(None, description="why the entry has no port map; the build's note repeats it")
    alias: AliasNaming = AliasNaming()
    breakout_modes: dict[BreakoutMode, SonicBreakoutMode] = Field(
        {},
        max_length=16,
        description="a cage mode (1x800G, 2x400G) -> the name the platform's platform.json gives it, where it differs (1x800G[400G])",
    )
    note: Text | None = Field(None, description="what the build says of these platform files on every release (a choice not verified on a switch)")
    since: SonicRelease | None = Field(None, description="the first release branch whose image has these platform files; older ones are refused")
    releases: list[ReleaseDifference] = Field([], max_length=16, description="where some releases' platform files differ from the above")

    @model_validator(mode="after")
    def _a_map_names_its_platform(self) -> SonicPlatform:
        if self.ports and not (self.platform and self.hwsku and self.source):
            raise ValueError("a SONiC port map belongs to one platform and hwsku: give platform, hwsku and source with ports")
        if sum(run.count for run in self.ports) > MAX_CAGES:
            raise ValueError(f"sonic.ports maps more than {MAX_CAGES} cages in all")
        if (self.since or self.releases or self.note) and not self.ports:
            raise ValueError("since, releases and note describe a platform's files: give its port map (ports) with them")
        seen: set[str] = set()
        for difference in self.releases:
            for release in difference.releases:
                if release in seen:
                    raise ValueError(f"sonic.releases names release {release} twice; give each release's differences once")
                seen.add(release)
        return self

    def releases_named(self) -> list[tuple[tuple[str | int, ...], str]]:
        named: list[tuple[tuple[str | int, ...], str]] = [(("since",), self.since)] if self.since else []
        return named + [(("releases", i, "releases", k), release) for i, d in enumerate(self.releases) for k, release in enumerate(d.releases)]

    def difference(self, release: str) -> ReleaseDifference | None:
        """How `release`'s platform files differ from the entry's, if they do."""
        return next((d for d in self.releases if release in d.releases), None)

    def aliases(self, release: str) -> AliasNaming:
        """The aliases of the platform files of `release`."""
        difference = self.difference(release)
        return difference.alias if difference is not None and difference.alias is not None else self.alias

    def release_note(self, release: str) -> str | None:
        """What the build says of the platform files of `release`: the entry's note and what that
        release's files say that the config does not follow (None: nothing)."""
        difference = self.difference(release)
        said = [f"{self.note} ({self.source})"] if self.note else []
        if difference is not None and difference.note is not None:
            said.append(f"{difference.note} ({difference.source})")
        return "; ".join(said) or None

    def missing_in(self, release: str, releases: list[str]) -> str | None:
        """The first release with this platform, when `release` (of a flavour whose releases are
        `releases`, oldest first) is older: its image has no files for the switch. None when it
        has them, or when the flavour does not number its releases like the entry (a vendor
        flavour: its own platform support)."""
        if self.since is None or self.since not in releases or release not in releases:
            return None
        return self.since if releases.index(release) < releases.index(self.since) else None

    @cached_property
    def cage_runs(self) -> dict[int, PlatformPorts]:
        """Each cage the map names -> its run."""
        return {cage: run for run in self.ports for cage in range(run.first, run.first + run.count)}

    def cage_ports(self, cage: int, width: int) -> tuple[tuple[int, ...], int] | None:
        run = self.cage_runs.get(cage)
        return None if run is None else (run.cage_lanes(cage, width), run.number(cage))

    def check_entry(self, switch: SwitchModel) -> None:
        """The port map covers every cage once, with the cage's lane count, and no lane or port
        number twice; the SONiC names the catalog gives are the platform's."""
        if not self.ports:
            return
        if "sonic" not in switch.nos:
            raise ValueError("sonic.ports maps a SONiC platform, but this switch does not run sonic (nos)")
        mapped: dict[int, PlatformPorts] = {}
        for run in self.ports:
            for cage in range(run.first, run.first + run.count):
                if cage in mapped:
                    raise ValueError(f"sonic.ports maps cage {cage} twice")
                mapped[cage] = run
        lane_owner: dict[int, int] = {}
        number_owner: dict[int, int] = {}
        for group in switch.port_groups:
            for cage in range(group.first, group.first + group.count):
                cage_run = mapped.pop(cage, None)
                if cage_run is None:
                    raise ValueError(f"sonic.ports does not map cage {cage}; map every cage of the port groups")
                lanes = cage_run.cage_lanes(cage, group.lanes)
                if len(lanes) != group.lanes:
                    raise ValueError(f"sonic.ports gives cage {cage} {len(lanes)} lanes; its port group has {group.lanes} per cage")
                for lane in lanes:
                    if lane in lane_owner:
                        raise ValueError(f"sonic.ports gives lane {lane} to cages {lane_owner[lane]} and {cage}; every lane is one cage's")
                    lane_owner[lane] = cage
                number = cage_run.number(cage)
                # a cage's sub-ports take the numbers up to its lane count (portconfig.py)
                for taken in range(number, number + group.lanes):
                    if taken in number_owner:
                        raise ValueError(f"sonic.ports numbers cage {cage} Ethernet{number}, which overlaps cage {number_owner[taken]}'s Ethernet ports")
                    number_owner[taken] = cage
        if mapped:
            raise ValueError(f"sonic.ports maps cage {min(mapped)}, which no port group has")
        for naming_of in [self.alias] + [d.alias for d in self.releases if d.alias is not None]:
            if naming_of.nos is not None and naming_of.nos not in switch.interface_names:
                raise ValueError(f"sonic alias nos: {naming_of.nos} names ports by interface_names.{naming_of.nos}, which this entry does not give")
        naming = switch.interface_names.get("sonic")
        if naming is not None and not _named_by_number(switch):
            for group in switch.port_groups:
                for cage in range(group.first, group.first + group.count):
                    wanted = [(0, group.speed, f"Ethernet{switch.port_numbers[cage]}")]
                    for mode in group.breakout_modes:
                        wanted += [(sub, mode.speed, f"Ethernet{number}") for sub, number, _ in switch.subports(cage, mode.speed)]
                    for sub, speed, name in wanted:
                        given = switch.name_of("sonic", cage, sub, speed)
                        if given != name:
                            where = f"cage {cage}" + (f" sub-port {sub}" if sub else "")
                            raise ValueError(
                                f"interface_names.sonic names {where} {given!r}, but platform {self.platform} names it {name!r}; "
                                "use {number} in the pattern (Ethernet{number})"
                            )

    def breakout_mode(self, fanout: int, speed: int) -> str:
        """BREAKOUT_CFG's brkout_mode for a cage split `fanout` ways at `speed`: the platform's
        own name for it (platform.json breakout_modes) where the catalog records one."""
        mode = f"{fanout}x{speed}G"
        return self.breakout_modes.get(mode, mode)


BY_NUMBER = "Ethernet{number}"


def _named_by_number(switch: SwitchModel) -> bool:
    """Whether every SONiC name pattern of the entry is Ethernet{number}: then every name is the
    platform's by construction, and checking each of a 64-cage switch's thousand sub-port names
    (a good part of loading the catalog, on every build) proves nothing."""
    namings = [switch.interface_names["sonic"]] + [group.interface_names["sonic"] for group in switch.port_groups if "sonic" in group.interface_names]
    return all(naming.port == BY_NUMBER and naming.breakout == BY_NUMBER for naming in namings)


def platform_of(model: SwitchModel) -> SonicPlatform:
    """The SONiC section of a catalog switch entry (`sonic:`)."""
    return model.platform("sonic", SonicPlatform)
