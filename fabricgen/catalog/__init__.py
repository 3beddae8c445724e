"""The hardware catalog: built-in YAML data extended by the user's catalog files.

`load_catalog(user_files)` returns a `Catalog`: every switch, transceiver, cable, node and other
component by PID, validated, with cross-references (a transceiver's cable) checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from fabricgen.catalog.model import (
    SECTIONS,
    Appliance,
    Cable,
    CatalogFile,
    ConsoleServer,
    Module,
    NodeModel,
    SwitchModel,
    Transceiver,
)
from fabricgen.errors import CatalogError, Problem, raise_if
from fabricgen.validation import problems_from_validation_error
from fabricgen.yaml_source import YamlDocument, load_yaml

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

    def description(self, pid: str) -> str:
        for section in SECTIONS:
            entry = getattr(self, section).get(pid)
            if entry is not None:
                return entry.description
        raise KeyError(pid)

    def default_optic(self, form_factor: str, link_speed: int, cage_speed: int) -> str | None:
        """The catalog's default transceiver for a cage of this form factor carrying links of
        `link_speed` (a 2x400G optic in an 800G cage serves 400G links)."""
        for pid, optic in self.transceivers.items():
            if optic.default and optic.form_factor == form_factor and optic.speed == cage_speed and optic.link_speed == link_speed:
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


def load_catalog(user_files: Iterable[Path] = ()) -> Catalog:
    """Built-in catalog plus the user's files. Raises CatalogError listing every problem."""
    merged: dict[str, dict] = {section: {} for section in SECTIONS}
    origin: dict[str, str] = {}
    problems: list[Problem] = []
    builtin = sorted(BUILTIN_DIR.glob("*.yaml"))
    for path in [*builtin, *user_files]:
        doc, load_problems = load_yaml(path, what="catalog")
        problems += load_problems
        if doc.data is None:
            continue
        parsed = _parse_file(doc, problems)
        if parsed is None:
            continue
        for section in SECTIONS:
            for pid, entry in getattr(parsed, section).items():
                if pid in origin:
                    problems.append(
                        doc.locate(
                            Problem(
                                f"PID '{pid}' is already defined in {origin[pid]}",
                                hint="give your entry a PID of its own; PIDs are unique across the catalog",
                                field=(section, pid),
                            )
                        )
                    )
                    continue
                origin[pid] = doc.path
                merged[section][pid] = entry
    raise_if(problems, CatalogError)
    catalog = Catalog(**merged)
    raise_if(_cross_reference_problems(catalog), CatalogError)
    return catalog


def _parse_file(doc: YamlDocument, problems: list[Problem]) -> CatalogFile | None:
    if not isinstance(doc.data, dict):
        problems.append(doc.locate(Problem("a catalog file is a mapping of sections such as 'switches:'")))
        return None
    try:
        return CatalogFile.model_validate(doc.data)
    except ValidationError as exc:
        problems += problems_from_validation_error(exc, doc, CatalogFile)
        return None


def _cross_reference_problems(catalog: Catalog) -> list[Problem]:
    problems = []
    for pid, optic in catalog.transceivers.items():
        if optic.cable is not None and optic.cable not in catalog.cables:
            problems.append(
                Problem(f"transceiver {pid} takes cable '{optic.cable}', which is not in the catalog", field=("transceivers", pid, "cable"))
            )
    seen: dict[tuple[str, int, int], str] = {}
    for pid, optic in catalog.transceivers.items():
        if optic.default:
            key = (optic.form_factor, optic.speed, optic.link_speed)
            if key in seen:
                problems.append(
                    Problem(
                        f"transceivers {seen[key]} and {pid} are both the default for {optic.form_factor} {optic.speed}G",
                        hint="keep 'default: true' on one only; to use another for a fabric, name it under backend.optics",
                        field=("transceivers", pid, "default"),
                    )
                )
            seen[key] = pid
    return problems
