"""What the catalog holds, for `fabricgen catalog list` and `catalog show MODEL`: a row per entry
with its key facts, each entry in full, and the file (and line) that defines it.

`listing(catalog, files, kind)` gives the rows, `entry(catalog, files, pid)` one entry; `files` are
the catalog files in the order the loader read them (`catalog_files`). The JSON shapes
(`CatalogListing`, `CatalogEntry`) are what `--json` prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import Field

from fabricgen.basics.errors import CatalogError, Problem
from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.trust import check_pid, quoted
from fabricgen.basics.units import format_speed
from fabricgen.basics.validation import closest
from fabricgen.basics.yaml_source import MAX_CATALOG_NODES, load_yaml
from fabricgen.catalog import Catalog, builtin_files
from fabricgen.catalog.model import SECTIONS, Cable, ConsoleServer, Module, NodeModel, NodePorts, SwitchModel, Transceiver

# The sections whose entries are hardware keyed by PID (NOS flavours are `fabricgen releases`'s).
KINDS = tuple(section for section in SECTIONS if section != "nos_releases")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # built-in files are shown from here: fabricgen/catalog/data/...


class EntrySource(JsonOutputModel):
    file: str = Field(description="the catalog file that defines the entry (a built-in one relative to the package's folder)")
    line: int | None = Field(description="the line of its PID in that file")
    builtin: bool = Field(description="a file shipped with fabricgen, not one of yours")


class CatalogRow(JsonOutputModel):
    pid: str
    kind: str = Field(description="its catalog section: switches, nodes, transceivers, ...")
    description: str
    facts: str = Field(description="what tells entries of its kind apart: ports at each speed, GPUs and NICs, ...")
    source: EntrySource


class CatalogListing(JsonOutputModel):
    """What `fabricgen catalog list --json` prints."""

    entries: list[CatalogRow]


class CatalogEntry(JsonOutputModel):
    """What `fabricgen catalog show MODEL --json` prints."""

    pid: str
    kind: str
    source: EntrySource
    entry: dict[str, Any] = Field(description="the entry as validated, every field with its value (defaults included)")


def catalog_files(user_files: Iterable[Path] = ()) -> list[Path]:
    """Every file a catalog is loaded from: the built-in ones, then the user's."""
    return [*builtin_files(), *user_files]


def sources(files: Iterable[Path]) -> dict[str, EntrySource]:
    """PID -> where it is defined, from the files of a catalog that loaded (so each PID is in one
    file and every file is a catalog: read again for the lines, which the models do not keep)."""
    builtin = set(builtin_files())
    found: dict[str, EntrySource] = {}
    for path in files:
        doc, _ = load_yaml(path, what="catalog", quote_content=False, max_nodes=MAX_CATALOG_NODES)
        shown = str(path.resolve().relative_to(PACKAGE_ROOT)) if path in builtin else str(path)
        for section in KINDS:
            for pid in (doc.data or {}).get(section) or {}:
                found.setdefault(str(pid), EntrySource(file=shown, line=doc.lines.get((section, pid)), builtin=path in builtin))
    return found


def listing(catalog: Catalog, files: Iterable[Path], kinds: Iterable[str] = KINDS) -> CatalogListing:
    """A row per entry of the sections `kinds`, section by section in catalog order, PIDs sorted."""
    where = sources(files)
    rows = []
    for kind in kinds:
        for pid, model in sorted(getattr(catalog, kind).items()):
            rows.append(CatalogRow(pid=pid, kind=kind, description=model.description, facts=facts(model), source=where[pid]))
    return CatalogListing(entries=rows)


def entry(catalog: Catalog, files: Iterable[Path], pid: str) -> CatalogEntry:
    """The entry `pid` in full with where it is defined. Raises CatalogError for text that is no
    PID (compared with nothing: it may be megabytes), and for a PID the catalog does not have,
    with the one it most likely means."""
    try:
        check_pid(pid)
    except ValueError as exc:
        raise CatalogError(Problem(str(exc), hint="name a model by its PID, e.g. N9K-C9364D-GX2A", field=("MODEL",))) from None
    for kind in KINDS:
        model = getattr(catalog, kind).get(pid)
        if model is not None:
            return CatalogEntry(pid=pid, kind=kind, source=sources(files)[pid], entry=model.model_dump(mode="json"))
    known = [known for kind in KINDS for known in getattr(catalog, kind)]
    close = closest(pid, known)
    hint = f"did you mean '{close}'?" if close is not None else "`fabricgen catalog list` shows every model"
    raise CatalogError(Problem(f"the catalog has no model {quoted(pid)}", hint=hint, field=("MODEL",)))


def facts(model: Any) -> str:
    """An entry's key facts in one line."""
    if isinstance(model, SwitchModel):
        return _switch_facts(model)
    if isinstance(model, NodeModel):
        return _node_facts(model)
    if isinstance(model, Transceiver):
        links = f", {model.links} x {format_speed(model.link_speed)}" if model.links > 1 else ""
        return f"{format_speed(model.speed)} {model.form_factor}{links}, {model.media}, {model.connector}, {model.reach_m:g} m"
    if isinstance(model, Cable):
        lengths = f", {min(model.lengths_m):g}-{max(model.lengths_m):g} m" if model.lengths_m else ""
        return f"{model.media}, {model.connector}{lengths}"
    if isinstance(model, ConsoleServer):
        return f"{model.module_slots} module slots, {model.rack_units} RU"
    if isinstance(model, Module):
        return f"{model.async_ports} async ports"
    return ""


def _switch_facts(switch: SwitchModel) -> str:
    """Its cages by speed and form factor with their breakouts (`64 x 800G OSFP (2x400G, 4x200G)
    + 2 x 10G SFP+`; groups that differ only in naming counted together), the NOSes it runs, its
    height."""
    cages: dict[tuple[int, str, tuple[str, ...]], int] = {}
    for group in switch.port_groups:
        key = (group.speed, group.form_factor, tuple(group.breakouts))
        cages[key] = cages.get(key, 0) + group.count
    ports = " + ".join(
        f"{count} x {format_speed(speed)} {form_factor}" + (f" ({', '.join(breakouts)})" if breakouts else "")
        for (speed, form_factor, breakouts), count in cages.items()
    )
    return f"{ports}; {', '.join(switch.nos)}; {switch.rack_units} RU"


def _node_facts(node: NodeModel) -> str:
    """GPUs, then each network's ports with their NIC."""
    parts: list[str] = [f"{node.gpus} GPUs" if node.gpus else node.kind]
    for network in ("backend", "frontend", "storage"):
        ports: NodePorts | None = getattr(node, network)
        if ports is not None:
            nic = f" ({ports.nic})" if ports.nic else ""
            count = f"{ports.count} x {ports.ports_per_nic}" if ports.ports_per_nic > 1 else str(ports.count)
            parts.append(f"{network} {count} x {format_speed(ports.speed)}{nic}")
    return "; ".join(parts)
