"""What a NOS package gives fabricgen: the one interface every stage asks a NOS through.

A NOS is a package under `fabricgen.nos` whose `__init__.py` defines the names below (module
attributes, as `NosPackage` lists them). The registry (`fabricgen.nos.registry`) finds the packages,
checks that each defines every part with the right kind of value (its `PARTS`), and refuses one
that does not, naming the part. The registry knows the names and kinds only, so the intent's and
catalog's models can ask it for the NOS vocabulary without importing this typed interface (whose
types are the compiler's); `plugin()` here is the typed way in. Nothing outside the NOS packages names a NOS: the catalog's and the intent's
NOS vocabulary, `fabricgen releases`, `fabricgen init`, the JSON Schema and the checks all read it
from the registry.

The package's `__init__` stays light (no Jinja, no NAPALM): the checks ask it what the NOS can
write before anything renders, so `render_config` imports the adapter when it is first called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from fabricgen.basics.models import InputModel
from fabricgen.nos import registry

if TYPE_CHECKING:
    from fabricgen.build.secrets import Slot
    from fabricgen.catalog.model import SwitchModel
    from fabricgen.compiler.device_config import DeviceConfig
    from fabricgen.intent.management import BgpSecurity, Management
    from fabricgen.intent.model import Backend, HostFabric, LoadBalancing, PfcWatchdog


@dataclass(frozen=True)
class Gap:
    """Something the intent asks for that this NOS's adapter cannot write: a check error, never a
    half-written config. `field` is a dotted intent path: `load_balancing.*` or `bgp_security.*`
    below the network section, `management.*` below a management section."""

    field: str
    message: str
    hint: str


@dataclass(frozen=True)
class FeatureNeed:
    """A feature of the NOS's release matrix (its releases.yaml `features`) that a switch's config
    uses whatever the intent says, beyond the ones every NOS is asked about (EVPN anycast gateway,
    DLB, the IPv6 flow-label hash, the PFC watchdog). `field` as in Gap."""

    feature: str
    what: str  # what it is for, as a problem says it: "the ECMP hash fields (SWITCH_HASH)"
    field: str


class NosPackage(Protocol):
    """The module attributes of a NOS package (`fabricgen/nos/<name>/__init__.py`)."""

    __file__: str  # its __init__.py: its templates/ folder lies beside it
    NAME: str  # the package's name, what intents and catalogs write (`nos: <NAME>`)
    TITLE: str  # as problems and notes name it: "NX-OS"
    DESCRIPTION: str  # one line for `fabricgen init` and the schema: "Cisco NX-OS"
    IS_DEFAULT: bool  # the NOS of a switch role that names none (exactly one package says True)
    RELEASES: Path  # its releases.yaml: the built-in flavour of this NOS (catalog nos_releases)
    MANAGEMENT_PORT: str  # the out-of-band Ethernet port a switch has when its catalog entry names none
    RUNS_OOB_SWITCHES: bool  # can write an OOB access switch (static routes, no BGP)
    PREFERS_MAPPED_PLATFORM: bool  # `init` picks a catalog model whose port map is the platform's own
    ROUTING_IS_FRR: bool  # its routing config is an frr.conf the lab runs as is (else the lab runs a twin)
    TEMPLATE_FILTERS: dict[str, Callable[[object], str]]  # Jinja filters its templates use (free text on a config line)
    HEADROOM_FROM_ASIC_DELAY: bool  # its lossless headroom counts the catalog's MAC/PHY delay (a note when absent)

    def config_files(self, hostname: str) -> tuple[str, ...]:
        """The build-relative files `render_config` writes for one switch (the first is its main config)."""
        ...

    def render_config(self, config: DeviceConfig) -> dict[str, str]:
        """A switch's files: build-relative path -> text."""
        ...

    def load_balancing_gaps(self, lb: LoadBalancing) -> list[Gap]: ...

    def security_gaps(self, security: BgpSecurity, management: Management | None) -> list[Gap]: ...

    def watchdog_values(self, watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
        """The PFC watchdog numbers this NOS writes, by its releases.yaml parameter names: (value,
        the intent field under qos.pfc_watchdog it comes from)."""
        ...

    def unrendered(self, management: Management, features: frozenset[str]) -> list[str]:
        """What this NOS leaves out of a management section on a release with `features`, without
        it being an error: build notes."""
        ...

    def feature_needs(self, management: Management | None) -> list[FeatureNeed]: ...

    def settings_gaps(self, spec: Backend | HostFabric) -> list[Gap]:
        """What it cannot write of a routed network's own settings (BFD, MTU...): Gap.field is the
        path below the network section."""
        ...

    def notes(self, spec: Backend | HostFabric) -> list[str]:
        """What it leaves to the switch, or writes otherwise than the network asks: build notes,
        once per network."""
        ...

    def model_notes(self, pid: str, model: SwitchModel, roles: str) -> list[str]:
        """Build notes on a catalog model this NOS writes for (`roles`: "backend leaf, ...")."""
        ...

    # the build's secrets, the catalog's and the intent's per-NOS sections
    SECRETS: SecretSlots  # where its build files carry a secret
    CATALOG_PLATFORM: type[CatalogPlatform] | None  # its section of a catalog switch entry; None: it has none
    BOOT_IMAGE: BootImage  # the image its switches boot, as the intent pins it


def plugin(name: str) -> NosPackage:
    """The NOS package `name`, typed as the interface (KeyError if there is none: names reach here
    validated)."""
    return cast(NosPackage, registry.plugins()[name])


def plugins() -> dict[str, NosPackage]:
    """Every NOS package by name, in name order, typed as the interface."""
    return cast(dict[str, NosPackage], registry.plugins())


# --- the build's secrets, the catalog's and the intent's per-NOS sections ------------------------


@dataclass(frozen=True)
class SecretSlots:
    """Where this NOS's build files carry a secret (fabricgen.build.secrets): `secrets list`,
    `secrets render`, push, verify and the exports find, check and mask secrets by these slots."""

    slots: tuple[Slot, ...]  # each config line or config_db field of its files that holds one, with the values it takes
    # the names of its files the slots are in (fnmatch patterns: "*.cfg", "config_db.json"); an
    # frr.conf has FRR's slots, which the lab's twins of every NOS share (fabricgen.build.secrets.FRR_SLOTS)
    files: tuple[str, ...]


@dataclass(frozen=True)
class BootImage:
    """The image a switch of this NOS must run, as the intent pins it (`management.boot.<NAME>`)."""

    pattern: str  # an image name of it, as a regular expression (anchored); the JSON Schema's pattern too
    description: str  # the field's description (schema and docs)
    example: str  # one image name, for the message that refuses another


class CatalogPlatform(InputModel):
    """A NOS's section of a catalog switch entry, under the NOS's name (`sonic: {platform: ...,
    ports: [...]}`): what the NOS needs to know of a switch model beyond its ports. A NOS package
    gives its subclass as CATALOG_PLATFORM (None when its switches need no section); every switch
    entry has one of each, its defaults when the catalog writes none. The catalog asks a section
    two things of its entry (catalog.model.SwitchModel)."""

    def cage_ports(self, cage: int, width: int) -> tuple[tuple[int, ...], int] | None:
        """The SerDes lanes and the port number (the N of SONiC's EthernetN) the NOS's platform
        definition gives `cage`, a cage of `width` lanes; None when it maps no ports (the catalog
        then numbers lanes generically)."""
        return None

    def check_entry(self, switch: SwitchModel) -> None:
        """Raise ValueError when the section does not fit the rest of its switch entry (a port
        map that misses a cage): the catalog locates the problem at the entry."""
