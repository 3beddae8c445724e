"""The hardware catalog: built-in YAML data extended by the user's catalog files.

`load_catalog(user_files)` returns a `Catalog`: every switch, transceiver, cable, node and other
component by PID, validated, with cross-references (a transceiver's cable) checked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from fabricgen.basics.errors import CatalogError, Problem, raise_if
from fabricgen.basics.validation import closest, problems_from_validation_error
from fabricgen.basics.yaml_source import MAX_CATALOG_NODES, YamlDocument, load_yaml, parse_yaml, read_yaml_bytes
from fabricgen.catalog.model import (
    SECTIONS,
    Appliance,
    Cable,
    CatalogFile,
    ConsoleServer,
    Module,
    NodeModel,
    NosFlavour,
    SwitchModel,
    Transceiver,
)
from fabricgen.nos import registry

BUILTIN_DIR = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Catalog:
    switches: dict[str, SwitchModel]
    transceivers: dict[str, Transceiver]
    cables: dict[str, Cable]
    nodes: dict[str, NodeModel]
    console_servers: dict[str, ConsoleServer]
    modules: dict[str, Module]
    appliances: dict[str, Appliance]
    nos_releases: dict[str, NosFlavour] = field(default_factory=dict)
    sha256: dict[str, str] = field(default_factory=dict, compare=False)  # file as loaded -> sha256 of the bytes parsed

    def description(self, pid: str) -> str:
        for section in SECTIONS:
            entry = getattr(self, section).get(pid)
            if entry is not None:
                return entry.description
        raise KeyError(pid)

    def flavour_of(self, nos: str, release: str) -> tuple[str, NosFlavour] | None:
        """The flavour of `nos` whose releases include `release` (an NX-OS maintenance release
        belongs to its train); None when no flavour supports it. A flavour listing the name
        exactly comes first: a train `4.2` of one flavour and a release `4.2.1` of another sort
        alike (release_key), yet each names its own flavour's release."""
        flavours = [(name, flavour) for name, flavour in self.nos_releases.items() if flavour.nos == nos]
        for name, flavour in flavours:
            if release in flavour.releases:
                return name, flavour
        for name, flavour in flavours:
            if flavour.find(release) is not None:
                return name, flavour
        return None

    def default_release(self, model: str, nos: str) -> str:
        """The release a switch of `model` runs under `nos` when the intent names none."""
        chosen = self.switches[model].nos_release.get(nos)
        return chosen if chosen is not None else self.nos_releases[nos].default

    def releases_of(self, nos: str) -> list[str]:
        return [release for flavour in self.nos_releases.values() if flavour.nos == nos for release in flavour.releases]

    def default_optic(self, form_factor: str, link_speed: int, cage_speed: int) -> str | None:
        """The catalog's default transceiver for a cage of this form factor carrying links of
        `link_speed` (a 2x400G optic in an 800G cage serves 400G links)."""
        for pid, optic in self.transceivers.items():
            if optic.default and optic.serves(form_factor, cage_speed, link_speed):
                return pid
        return None

    def ethernet_cables(self) -> list[str]:
        """Copper RJ45 patch cables for Ethernet, the default copper transceiver's cable first (then
        catalog order); a module's console breakout cable (RJ45 ends too) is not one."""
        console = {module.cable for module in self.modules.values()}
        copper = [pid for pid, cable in self.cables.items() if cable.media == "copper" and cable.connector == "RJ45" and pid not in console]
        first = [
            optic.cable
            for optic in self.transceivers.values()
            if optic.default and optic.media == "copper" and optic.connector == "RJ45" and optic.cable in copper
        ]
        return list(dict.fromkeys([*first, *copper]))


def builtin_files() -> list[Path]:
    """The built-in catalog files in the order they are loaded: each NOS package's releases
    (fabricgen/nos/<name>/releases.yaml), then the hardware and the vendor flavours
    (fabricgen/catalog/data/*.yaml), so a NOS's own flavour comes first wherever flavours are listed."""
    return [*(package.RELEASES for package in registry.plugins().values()), *sorted(BUILTIN_DIR.glob("*.yaml"))]


def load_catalog(user_files: Iterable[Path] = ()) -> Catalog:
    """Built-in catalog plus the user's files (paths already checked by the caller: see
    `fabricgen.intent`). Raises CatalogError listing every problem, each located in its file."""
    merged: dict[str, dict] = {section: {} for section in SECTIONS}
    origin: dict[str, YamlDocument] = {}
    problems: list[Problem] = []
    digests: dict[str, str] = {}
    builtin = builtin_files()
    for path in [*builtin, *user_files]:
        doc, parsed = _builtin_file(path, problems) if path in builtin else _catalog_file(path, problems)
        digests[doc.path] = doc.sha256
        if parsed is None:
            continue
        for section in SECTIONS:
            for pid, entry in getattr(parsed, section).items():
                if pid in origin:
                    problems.append(
                        doc.locate(
                            Problem(
                                f"PID '{pid}' is already defined in {origin[pid].path}",
                                hint="give your entry a PID of its own; PIDs are unique across the catalog",
                                field=(section, pid),
                            )
                        )
                    )
                    continue
                origin[pid] = doc
                merged[section][pid] = entry
    raise_if(problems, CatalogError)
    catalog = Catalog(**merged, sha256=digests)
    raise_if(_cross_reference_problems(catalog, origin), CatalogError)
    return catalog


def _catalog_file(path: Path, problems: list[Problem], raw: bytes | None = None) -> tuple[YamlDocument, CatalogFile | None]:
    """One catalog file read (unless its bytes are given), parsed and validated; None and its
    problems added to `problems` when it is unusable."""
    if raw is None:
        doc, load_problems = load_yaml(path, what="catalog", quote_content=False, max_nodes=MAX_CATALOG_NODES)
    else:
        doc, load_problems = parse_yaml(raw, str(path), "catalog", quote_content=False, max_nodes=MAX_CATALOG_NODES)
    if doc.data is None:
        problems += load_problems
        return doc, None
    if not _is_catalog(doc, problems):
        return doc, None  # its YAML problems would quote a file that is not a catalog
    problems += load_problems
    return doc, _parse_file(doc, problems)


# The built-in files as parsed and validated, by path and the sha256 of their bytes, with the NOS
# registry they were validated against (a switch entry's NOS names and sections come from it).
# Parsing and validating them is 0.12 s of the 0.14 s a 64-GPU intent takes to compile: a process
# that compiles many intents (fabricgen.compile() in a loop, bench/samebytes.py, the tests) does it
# once. The entries are frozen models, and each load_catalog makes a Catalog of its own. Built-in
# files only: their number is fixed, a user's files are parsed every time.
_BUILTIN_PARSED: dict[tuple[str, str], tuple[dict, YamlDocument, CatalogFile]] = {}


def _builtin_file(path: Path, problems: list[Problem]) -> tuple[YamlDocument, CatalogFile | None]:
    """`_catalog_file` for a built-in file, parsed again only when its bytes or the registry changed."""
    raw, read_problems = read_yaml_bytes(path, "catalog")
    if raw is None:
        problems += read_problems
        return YamlDocument(str(path), None), None
    key = (str(path), hashlib.sha256(raw).hexdigest())
    known = _BUILTIN_PARSED.get(key)
    if known is not None and known[0] is registry.plugins():
        return known[1], known[2]
    found: list[Problem] = []
    doc, parsed = _catalog_file(path, found, raw)
    problems += found
    if parsed is not None and not found:
        _BUILTIN_PARSED[key] = (registry.plugins(), doc, parsed)
    return doc, parsed


def _is_catalog(doc: YamlDocument, problems: list[Problem]) -> bool:
    """Is the file's top level a mapping of catalog sections? If not, say so without a word of
    its content: a path that names some other file (/etc/shadow) must not have it printed."""
    sections = ", ".join(SECTIONS)
    if not isinstance(doc.data, dict):
        problems.append(doc.locate(Problem("this is not a catalog file: a catalog is a mapping of sections", hint=f"the sections are {sections}")))
        return False
    strangers = [key for key in doc.data if key not in SECTIONS]
    for key in strangers:
        close = closest(str(key), SECTIONS, cutoff=0.8)
        hint = f"did you mean '{close}'?" if close else f"the sections are {sections}"
        # located by line, not by field: the field would be the key itself
        problems.append(Problem("this top-level key is not a catalog section", hint=hint, file=doc.path, line=doc.lines.get((key,))))
    return not strangers


def _parse_file(doc: YamlDocument, problems: list[Problem]) -> CatalogFile | None:
    try:
        return CatalogFile.model_validate(doc.data)
    except ValidationError as exc:
        problems += problems_from_validation_error(exc, doc, CatalogFile)
        return None


def _cross_reference_problems(catalog: Catalog, origin: dict[str, YamlDocument]) -> list[Problem]:
    """Each transceiver's cable exists; one default optic per cage kind. Each problem is located
    in the file that defines the entry."""
    problems = []
    for pid, optic in catalog.transceivers.items():
        if optic.cable is not None and optic.cable not in catalog.cables:
            problems.append(
                origin[pid].locate(
                    Problem(
                        f"transceiver {pid} takes cable '{optic.cable}', which is not in the catalog",
                        hint=unknown_pid_hint(optic.cable, catalog.cables, "add it under 'cables:'"),
                        field=("transceivers", pid, "cable"),
                    )
                )
            )
    problems += _release_problems(catalog, origin)
    seen: dict[tuple[str, int, int], str] = {}
    for pid, optic in catalog.transceivers.items():
        for key in [(optic.form_factor, optic.speed, link_speed) for link_speed in optic.link_speeds] if optic.default else []:
            if key in seen:
                problems.append(
                    origin[pid].locate(
                        Problem(
                            f"transceivers {seen[key]} and {pid} are both the default for {optic.form_factor} {optic.speed}G cages carrying {key[2]}G links",
                            hint="keep 'default: true' on one only; to use another for a fabric, name it under backend.optics",
                            field=("transceivers", pid, "default"),
                        )
                    )
                )
            seen[key] = pid
    return problems


def _release_problems(catalog: Catalog, origin: dict[str, YamlDocument]) -> list[Problem]:
    """Each NOS has its built-in flavour; every flavour of a NOS answers the same features (the
    adapter asks about them by name); a release is in one flavour only; a model's default release
    and a feature's model exceptions name what exists."""
    problems = []
    for nos, package in registry.plugins().items():
        if nos not in catalog.nos_releases or catalog.nos_releases[nos].nos != nos:
            problems.append(
                Problem(f"the catalog has no flavour '{nos}' of NOS {nos}", hint=f"keep the built-in {package.RELEASES.name} of fabricgen/nos/{nos}")
            )
    owner: dict[tuple[str, str], str] = {}
    for name, flavour in catalog.nos_releases.items():
        base = catalog.nos_releases.get(flavour.nos)
        missing = sorted(set(base.features) - set(flavour.features)) if base is not None else []
        if missing:
            problems.append(
                origin[name].locate(
                    Problem(
                        f"flavour {name} says nothing of {', '.join(missing)}, which the {flavour.nos} adapter asks about",
                        hint="add each under features, with since (null: never) and source",
                        field=("nos_releases", name, "features"),
                    )
                )
            )
        for release in flavour.releases:
            other = owner.setdefault((flavour.nos, release), name)
            if other != name:
                problems.append(
                    origin[name].locate(
                        Problem(
                            f"release {release} is already a release of flavour {other}",
                            hint="name each flavour's releases apart",
                            field=("nos_releases", name, "releases"),
                        )
                    )
                )
        for feature, entry in flavour.features.items():
            for model in entry.models:
                if model not in catalog.switches:
                    problems.append(
                        origin[name].locate(
                            Problem(
                                f"feature {feature} names switch model {model}, which is not in the catalog",
                                hint=unknown_pid_hint(model, catalog.switches, ""),
                                field=("nos_releases", name, "features", feature, "models", model),
                            )
                        )
                    )
    for pid, switch in catalog.switches.items():
        for nos, release in switch.nos_release.items():
            if nos not in switch.nos:
                problems.append(
                    origin[pid].locate(Problem(f"nos_release names {nos}, which this switch does not run", field=("switches", pid, "nos_release", nos)))
                )
            elif catalog.flavour_of(nos, release) is None:
                problems.append(
                    origin[pid].locate(
                        Problem(
                            f"{nos} release {release} is not one fabricgen knows",
                            hint=f"use one of: {', '.join(catalog.releases_of(nos))}",
                            field=("switches", pid, "nos_release", nos),
                        )
                    )
                )
        # the releases a NOS section's platform data names (SONiC: sonic.since, sonic.releases)
        for nos in switch.nos:
            section = getattr(switch, nos, None)  # a fabricgen.nos.interface.CatalogPlatform, when the NOS has one
            for field_path, release in section.releases_named() if section is not None else []:
                if catalog.flavour_of(nos, release) is None:
                    problems.append(
                        origin[pid].locate(
                            Problem(
                                f"{nos} release {release} is not one fabricgen knows",
                                hint=f"use one of: {', '.join(catalog.releases_of(nos))}",
                                field=("switches", pid, nos, *field_path),
                            )
                        )
                    )
    return problems


def unknown_pid_hint(pid: str, known: Iterable[str], otherwise: str = "add it to a catalog file") -> str:
    """The hint for a PID the catalog does not have: the PID it most likely means (PIDs are
    case-sensitive, so 'n9k-c9364d-gx2a' points at 'N9K-C9364D-GX2A'), else every PID it could
    be; `otherwise` is the other fix ('' for none)."""
    known = sorted(known)
    close = closest(pid, known)
    if close is not None and close.casefold() == pid.casefold():
        return f"did you mean '{close}'? PIDs are case-sensitive"
    if close is not None:
        return f"did you mean '{close}'?" + (f" else {otherwise}" if otherwise else "")
    return f"use one of {', '.join(known)}" + (f" or {otherwise}" if otherwise else "")
