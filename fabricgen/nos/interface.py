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
write before anything renders, so `render_config` imports the adapter when it is first called, and
its PUSH and VERIFY parts name its day-2 modules as `Lazy` references, imported when push or
verify runs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, cast, get_args

from fabricgen.basics.models import InputModel
from fabricgen.nos import registry

if TYPE_CHECKING:
    from fabricgen.build.build_dir import BuildFiles, TopologyNode
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
    EXPORT: ExportParts  # what `fabricgen export` writes for its switches, per format
    PUSH: PushParts  # how `fabricgen push` reaches and changes its switches
    VERIFY: VerifyParts  # what `fabricgen verify` reads of its switches beyond NAPALM's getters

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


# --- export: what `fabricgen export` writes for a NOS's switches (fabricgen/export/) ---------------


@dataclass(frozen=True)
class ExportParts:
    """What each format of `fabricgen export` writes for a switch of the NOS (EXPORT)."""

    ansible_network_os: str  # its group's `ansible_network_os`: the collection's platform, "cisco.nxos.nxos"
    ansible_connection: str  # its group's `ansible_connection`: "ansible.netcommon.network_cli"
    ansible_vars: Mapping[str, str | bool]  # the group's further vars, in this order (privilege, TLS); no credentials
    nornir_group: Mapping[str, object]  # what its Nornir group holds beside `platform` and `data` (connection options)
    netbox_platform: str  # the NetBox platform's name: "Cisco NX-OS"
    netbox_manufacturer: str | None  # the platform's manufacturer, None for none (a NOS many vendors ship)
    batfish_folder: str  # the snapshot folder its config files go to, as configs/ in the build: "configs"
    batfish_rancid_type: str | None  # the RANCID content type its main config starts with, None for no header
    containerlab: ContainerlabNode | None  # its own container; None: a Linux node running FRR with its routing twin
    # the inventories' names of the NOS for the SSH libraries, None for none: netmiko's `device_type`
    # (a key of netmiko/ssh_dispatcher.py CLASS_MAPPER) and scrapli's `platform` (a key of
    # scrapli/factory.py CORE_PLATFORM_MAP, or a scrapli_community platform: vendor_os)
    netmiko_device_type: str | None = None
    scrapli_platform: str | None = None


@dataclass(frozen=True)
class ContainerlabNode:
    """A NOS's own container in `fabricgen export containerlab`, instead of FRR running its twin."""

    image_option: str  # the command-line option that names its image: "--sonic-image"
    image_help: str  # that option's help, its default included
    write: Callable[[LabSwitch], LabNode]  # a fabric switch's node (raises ExportError naming what is missing)


@dataclass(frozen=True)
class LabSwitch:
    """A switch of the network a containerlab export wires, for its NOS's `ContainerlabNode.write`."""

    files: BuildFiles  # the verified build: its config files
    device: str
    node: TopologyNode
    ports: tuple[str, ...]  # the build's names of its ports the network's cables use
    management_port: str | None  # its port on the OOB network, as the IP plan names it; None when the plan has none
    image: str | None  # the image given with the NOS's option (checked to be an image reference); None: the NOS's default


@dataclass(frozen=True)
class LabNode:
    """A switch's containerlab node as its NOS's package writes it; the export writes it as YAML."""

    comment: str  # the line above the node: what it runs, how its ports are wired
    kind: str  # containerlab's kind: "sonic-vs"
    image: str
    wires: Mapping[str, str]  # build port -> the container's interface a link names (eth1)
    startup_config: str | None = None  # the export's file the node boots
    binds: tuple[str, ...] = ()  # "export file:container path[:ro]"
    files: Mapping[str, str] = field(default_factory=dict)  # export path -> text: what it boots or binds


# --- push and verify ---------------------------------------------------------------------------
# A NOS's day-2 code (its NAPALM driver and the modules around it) is heavy: NAPALM, paramiko, an
# HTTPS client. The parts below name it as "module:attribute" (`Lazy`), imported when push or
# verify first asks, so the CLI's start-up, the compiler and `fabricgen --version` never load it.

T = TypeVar("T")


@dataclass(frozen=True)
class Lazy(Generic[T]):
    """Something of a NOS's day-2 modules, named "module:attribute" and imported by `load()`."""

    reference: str

    def __post_init__(self) -> None:
        module, colon, attribute = self.reference.partition(":")
        if not (module and colon and attribute):
            raise ValueError(f"{self.reference!r} is not a reference of the form 'module:attribute'")

    def load(self) -> T:
        module, _, attribute = self.reference.partition(":")
        return cast(T, getattr(importlib.import_module(module), attribute))


# What an inventory's optional_args value may be (push/inventory.py checks each against its kind):
# a TCP port, true/false, a file path, a container name ("" for the host), "https" or "http", or
# TLS verification (true, false or a CA bundle's path).
OptionKind = Literal["port", "flag", "path", "container", "transport", "tls_verify"]
Transport = Literal["ssh", "https"]


class SecretValues(Protocol):
    """The secret values push fills a candidate with (fabricgen.build.secrets.Secrets)."""

    def fill(self, text: str, *, in_json: bool = False) -> str:
        """`text` with every placeholder replaced by its value (JSON-escaped inside JSON strings)."""
        ...


@dataclass(frozen=True)
class CommitTimer:
    """A driver's commit-confirm timer: what problems call it and the seconds it takes."""

    name: str  # "NX-OS's commit-timeout"
    low: int
    high: int


@dataclass(frozen=True)
class Refusal:
    """Why push refuses something on this NOS, and what to do instead."""

    message: str
    hint: str


@dataclass(frozen=True)
class PushParts:
    """How `fabricgen push` (and `verify`, which reaches switches the same way) talks to a switch of
    this NOS. Config files are given as {file name: text}, the files `config_files` names."""

    napalm_driver: str  # NAPALM's name for the driver (get_network_driver, the inventory's `driver`)
    own_driver: Lazy[type] | None  # fabricgen's driver class where NAPALM's lacks what push needs; None: NAPALM's lookup
    driver_options: Mapping[str, OptionKind]  # the optional_args the driver reads, each with what its value may be
    # how push makes sure it talks to the real switch before the password goes: "ssh", its host key
    # against known_hosts (push/known_hosts.py); "https", its TLS certificate against CAs (`ssl_verify`)
    transport: Transport
    commit_timer: CommitTimer | None  # the range push checks the confirm timeout against first; None: none
    merge_refused: Refusal | None  # why `--merge` cannot be offered; None: the driver merges
    # the text the driver's load_*_candidate(config=...) takes: its config files, secrets filled in
    candidate: Lazy[Callable[[Mapping[str, str], SecretValues], str]]
    # what its config files lack that a replace must keep (a way back in), given the boot image the
    # build pins (None: none): one phrase each, [] when nothing
    replace_must_keep: Lazy[Callable[[Mapping[str, str], str | None], list[str]]]

    def __post_init__(self) -> None:
        # a transport push does not know would be secured by neither check: refused when the NOS loads
        if self.transport not in get_args(Transport):
            raise ValueError(f"PushParts transport {self.transport!r} is none of {', '.join(get_args(Transport))}")
        unknown = sorted(key for key, kind in self.driver_options.items() if kind not in get_args(OptionKind))
        if unknown:
            raise ValueError(f"PushParts driver_options {', '.join(unknown)}: kinds are {', '.join(get_args(OptionKind))}")


@dataclass(frozen=True)
class VerifyParts:
    """What `fabricgen verify` needs of this NOS beyond NAPALM's getters. Config files as in PushParts."""

    # the getters its NAPALM driver lacks (get_ecmp_widths, get_lossless_counters), each a function
    # of the read-only device that answers as the getter would; None: its driver has them all
    extensions: Lazy[Mapping[str, Callable[[Any], object]]] | None
    # its config files as its driver's get_config(retrieve="running") shows a running config
    running_config: Lazy[Callable[[Mapping[str, str]], str]]
    port_mtus: Lazy[Callable[[Mapping[str, str]], dict[str, int]]]  # port -> the MTU its config files set
    # a config in that running layout with every secret slot masked (fabricgen.build.secrets.SLOTS)
    mask_slots: Lazy[Callable[[str], str]]
    # drift's statements of a config (fabricgen.verify.drift.statements) as the device shows them,
    # given the config's text: what it leaves out as a default, what it adds as implied. None: as written
    as_shown: Lazy[Callable[[list[str], str], list[str]]] | None = None


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
    pattern_says: str = ""  # what the pattern allows, in words (the schema's patternErrorMessage, the docs; tests/test_docs.py asks every shipped NOS for it)
    # the release an image name carries: a regular expression over the name whose matched groups,
    # formatted by `release_form`, give the release as releases.yaml names it; "" when the NOS's
    # image names do not say (the build then notes it cannot check the pinned image)
    release_in_name: str = ""
    release_form: str = "{0}"

    def release_of(self, image: str) -> str | None:
        """The release `image` is named for; None when its name does not say."""
        match = re.fullmatch(self.release_in_name, image) if self.release_in_name else None
        if match is None:
            return None
        return self.release_form.format(*(group for group in match.groups() if group))


class CatalogPlatform(InputModel):
    """A NOS's section of a catalog switch entry, under the NOS's name (`sonic: {platform: ...,
    ports: [...]}`): what the NOS needs to know of a switch model beyond its ports. A NOS package
    gives its subclass as CATALOG_PLATFORM (None when its switches need no section); every switch
    entry has one of each, its defaults when the catalog writes none. The catalog asks a section
    two things of its entry (catalog.model.SwitchModel) and the releases it names, the checks two
    things of a target release."""

    def cage_ports(self, cage: int, width: int) -> tuple[tuple[int, ...], int] | None:
        """The SerDes lanes and the port number (the N of SONiC's EthernetN) the NOS's platform
        definition gives `cage`, a cage of `width` lanes; None when it maps no ports (the catalog
        then numbers lanes generically)."""
        return None

    def check_entry(self, switch: SwitchModel) -> None:
        """Raise ValueError when the section does not fit the rest of its switch entry (a port
        map that misses a cage): the catalog locates the problem at the entry."""

    def releases_named(self) -> list[tuple[tuple[str | int, ...], str]]:
        """(field path within the section, release) of each release the section names: the
        catalog refuses one no flavour of the NOS has."""
        return []

    def missing_in(self, release: str, releases: list[str]) -> str | None:
        """The first release whose image has the platform files this section describes, when
        `release` (of a flavour whose releases are `releases`, oldest first) is older; None when
        it has them or the section does not say (the checks refuse the older release)."""
        return None

    def release_note(self, release: str) -> str | None:
        """What the platform files of `release` say that the config does not follow (the build's
        note); None for nothing."""
        return None
