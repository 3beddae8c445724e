"""Reading an intent: YAML -> validated `Intent`, with every problem tied to its line.

`load_intent(path)` returns a `LoadedIntent`: the validated intent, the YAML document (for line
lookups in later phases) and the catalog it refers to (built-in plus the user's files). The user's
catalog files must lie under the intent's directory, or under a directory named with
`catalog_dirs` (the CLI's --catalog-dir), after symlinks are resolved.

`load_intent_text(text)` and `load_intent_data(mapping)` (the Python API's) read an intent that is
no file: the same limits, schema and catalog checks, but no file name to take the fabric's name
from (it must say `name:`), no directory (its catalog files must lie under `catalog_dirs`, names
relative to the working directory), and for a mapping no lines (problems name the field only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from fabricgen.basics.errors import IntentError, Problem, raise_if
from fabricgen.basics.validation import problems_from_validation_error
from fabricgen.basics.yaml_source import (
    MAX_FILE_BYTES,
    MAX_INTENT_NODES,
    YamlDocument,
    document_from_data,
    load_yaml,
    parse_yaml,
)
from fabricgen.catalog import Catalog, load_catalog, unknown_pid_hint
from fabricgen.intent.model import MAX_GPUS, NAME_PATTERN, Backend, HostFabric, Intent
from fabricgen.nos import registry

__all__ = ["Intent", "LoadedIntent", "load_intent", "load_intent_data", "load_intent_text"]

TEXT_SOURCE = "<intent text>"  # where problems of an intent given as YAML text say they are
DATA_SOURCE = "<intent data>"  # ... and of one given as a mapping (no lines)


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    source: YamlDocument
    catalog: Catalog
    sha256: str  # of the file's bytes, the text's UTF-8 or the mapping's canonical JSON
    catalog_files: dict[str, str]  # user catalog files as the intent names them -> sha256
    file: str  # what manifest.json names: the file's name, or TEXT_SOURCE / DATA_SOURCE

    def locate(self, problem: Problem) -> Problem:
        return self.source.locate(problem)


def load_intent(path: Path, catalog_dirs: Sequence[Path] = ()) -> LoadedIntent:
    """Read, validate and resolve an intent; its catalog files may come from its own directory or
    from `catalog_dirs`. Raises IntentError or CatalogError with every problem."""
    doc, problems = load_yaml(path, what="intent", max_nodes=MAX_INTENT_NODES)
    raise_if(problems, IntentError)
    return _resolve(doc, path.name, path.parent, catalog_dirs, default_name=path.stem)


def load_intent_text(text: str, catalog_dirs: Sequence[Path] = ()) -> LoadedIntent:
    """`load_intent` for YAML text (not a file name: that is a `Path` for `load_intent`)."""
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate is then 'not UTF-8', located
    if len(raw) > MAX_FILE_BYTES:
        raise IntentError(
            Problem(
                f"the intent text is {len(raw):,} bytes; the limit is {MAX_FILE_BYTES:,}",
                hint="an intent is a short description; split or trim it",
                file=TEXT_SOURCE,
            )
        )
    doc, problems = parse_yaml(raw, TEXT_SOURCE, "intent", max_nodes=MAX_INTENT_NODES)
    raise_if(problems, IntentError)
    if isinstance(doc.data, str) and doc.data.endswith((".yaml", ".yml")) and "\n" not in text.strip():
        raise IntentError(
            doc.locate(Problem("a str is read as the intent's YAML text, and this one is a file name", hint="pass a pathlib.Path to read the file"))
        )
    return _resolve(doc, TEXT_SOURCE, None, catalog_dirs)


def load_intent_data(data: Mapping, catalog_dirs: Sequence[Path] = ()) -> LoadedIntent:
    """`load_intent` for an intent already parsed: a mapping of what YAML would have given (str,
    int, float, bool, None, lists and mappings), refused otherwise with the same limits as a file."""
    doc, problems = document_from_data(data, DATA_SOURCE, "intent", max_nodes=MAX_INTENT_NODES)
    raise_if(problems, IntentError)
    return _resolve(doc, DATA_SOURCE, None, catalog_dirs)


def _resolve(doc: YamlDocument, file: str, directory: Path | None, catalog_dirs: Sequence[Path], default_name: str | None = None) -> LoadedIntent:
    """The parsed document validated, its catalog loaded and every name it uses checked.
    `directory`: where its catalog names are relative to and may lie (None: the working directory,
    and only `catalog_dirs`); `default_name`: the fabric's name when the intent gives none."""
    if not isinstance(doc.data, dict):
        raise IntentError(doc.locate(Problem("an intent is a mapping of keys such as 'gpus: 256'")))
    data = dict(doc.data)
    if "name" not in data:
        # the file name is the fabric's name unless the intent says otherwise
        if default_name is None:
            raise IntentError(
                doc.locate(Problem("an intent that is no file has no file name to take the fabric's name from", hint="add 'name:'", field=("name",)))
            )
        if not NAME_PATTERN.match(default_name):
            raise IntentError(
                doc.locate(
                    Problem(
                        f"the file name '{default_name}' cannot be the fabric name",
                        hint="add 'name:' with letters, digits and '-' only",
                    )
                )
            )
        data["name"] = default_name
    try:
        intent = Intent.model_validate(data)
    except ValidationError as exc:
        raise IntentError(problems_from_validation_error(exc, doc, Intent)) from None
    catalog_paths = _catalog_paths(intent, directory, doc, catalog_dirs)
    catalog = load_catalog(catalog_paths)
    # the digests of the bytes that were parsed: no second read that could see another file
    catalog_files = {name: catalog.sha256[str(p)] for name, p in zip(intent.catalog, catalog_paths, strict=True)}
    loaded = LoadedIntent(intent, doc, catalog, doc.sha256, catalog_files, file)
    raise_if([loaded.locate(p) for p in _catalog_references(intent, catalog)], IntentError)
    return loaded


def _catalog_paths(intent: Intent, directory: Path | None, doc: YamlDocument, catalog_dirs: Sequence[Path]) -> list[Path]:
    """Each catalog name, relative to the intent's directory, resolved through symlinks and
    confined: under the intent's directory or one of `catalog_dirs`, and a regular file (not
    /dev/zero, a FIFO or a directory). An intent from elsewhere cannot make a build read, or
    print, /etc/shadow. An intent with no directory (None: text or data) names its catalog files
    relative to the working directory, and they must lie under one of `catalog_dirs`."""
    problems = []
    if directory is None and intent.catalog and not catalog_dirs:
        raise IntentError(
            doc.locate(
                Problem(
                    "an intent that is no file has no directory its catalog files may come from",
                    hint="name the directory that holds them with catalog_dirs",
                    field=("catalog",),
                )
            )
        )
    base = directory if directory is not None else Path.cwd()
    roots = [directory.resolve()] if directory is not None else []
    for extra in catalog_dirs:
        root = Path(extra).resolve()
        if not root.is_dir():
            problems.append(Problem("is not a directory", field=("--catalog-dir",), file=str(extra), hint="name a directory that holds catalog files"))
        roots.append(root)
    raise_if(problems, IntentError)
    paths = []
    for index, name in enumerate(intent.catalog):
        where = ("catalog", index)
        try:
            candidate = (base / name).resolve()
        except (OSError, RuntimeError):  # a symlink loop
            problems.append(doc.locate(Problem(f"catalog '{name}' cannot be resolved (a symlink loop?)", field=where)))
            continue
        if not any(candidate.is_relative_to(root) for root in roots):
            problems.append(
                doc.locate(
                    Problem(
                        f"catalog '{name}' is outside the intent's directory" if directory is not None else f"catalog '{name}' is outside every catalog_dirs",
                        hint="put the file beside the intent, or name its directory with --catalog-dir"
                        if directory is not None
                        else "name its directory in catalog_dirs",
                        field=where,
                    )
                )
            )
        elif candidate.is_dir():
            problems.append(doc.locate(Problem(f"catalog '{name}' is a directory; name a YAML file", field=where)))
        elif not candidate.exists():
            problems.append(doc.locate(Problem(f"catalog file '{name}' not found (looked in {candidate.parent})", field=where)))
        elif not candidate.is_file():
            problems.append(doc.locate(Problem(f"catalog '{name}' is not a regular file (a device or a pipe?)", hint="name a YAML file", field=where)))
        paths.append(candidate)
    raise_if(problems, IntentError)
    return paths


def _catalog_references(intent: Intent, catalog: Catalog) -> list[Problem]:
    """Every PID the intent names exists, has the right kind, and runs the NOS asked for."""
    problems = []
    node = catalog.nodes.get(intent.gpu_node)
    if node is None or node.kind != "gpu":
        known = sorted(pid for pid, model in catalog.nodes.items() if model.kind == "gpu")
        problems.append(Problem(f"unknown GPU node model {intent.gpu_node!r}", hint=unknown_pid_hint(intent.gpu_node, known), field=("gpu_node",)))
    elif intent.nodes is not None and intent.nodes * node.gpus > MAX_GPUS:
        problems.append(
            Problem(
                f"{intent.nodes:,} nodes of {node.gpus} GPUs are more than {MAX_GPUS:,} GPUs",
                hint="no cluster is that large; check the count",
                field=("nodes",),
            )
        )
    elif intent.gpus is not None and intent.gpus % node.gpus:
        lower = intent.gpus - intent.gpus % node.gpus
        choices = f"{lower:,} or {lower + node.gpus:,}" if lower else f"{node.gpus}"
        problems.append(
            Problem(
                f"{intent.gpus:,} GPUs is not a whole number of {intent.gpu_node} nodes ({node.gpus} GPUs each)",
                hint=f"use {choices}, or give 'nodes:' instead",
                field=("gpus",),
            )
        )
    switch_roles = [(("backend", role), getattr(intent.backend, role)) for role in ("leaf", "spine")]
    if intent.backend.core is not None:  # unset, the core is the spines' model
        switch_roles.append((("backend", "core"), intent.backend.core))
    fabrics: list[tuple[str, Backend | HostFabric]] = [("backend", intent.backend)]
    if intent.frontend is not None:
        fabrics.append(("frontend", intent.frontend))
        switch_roles += [(("frontend", role), getattr(intent.frontend, role)) for role in ("leaf", "spine")]
        if intent.frontend.core is not None:  # 3 tiers; unset, the core is the spines' model
            switch_roles.append((("frontend", "core"), intent.frontend.core))
    if intent.storage is not None:
        fabrics.append(("storage", intent.storage))
        switch_roles += [(("storage", role), getattr(intent.storage, role)) for role in ("leaf", "spine")]
        if intent.storage.core is not None:
            switch_roles.append((("storage", "core"), intent.storage.core))
    if intent.oob is not None:
        switch_roles.append((("oob", "switch"), intent.oob.switch))
    for path, wanted in switch_roles:
        model = catalog.switches.get(wanted.model)
        if model is None:
            problems.append(
                Problem(
                    f"unknown switch model {wanted.model!r}",
                    hint=unknown_pid_hint(wanted.model, catalog.switches),
                    field=(*path, "model"),
                )
            )
        elif wanted.nos not in model.interface_names:
            problems.append(
                Problem(
                    f"{wanted.model} has no {wanted.nos} interface naming in the catalog",
                    hint=f"use nos: {' or '.join(model.nos)}, or add interface_names.{wanted.nos} to the catalog entry",
                    field=(*path, "nos"),
                )
            )
    for section, spec in fabrics:
        for key in ("host_links", "fabric_links"):
            pid = getattr(spec.optics, key)
            if pid is not None and pid not in catalog.transceivers:
                problems.append(
                    Problem(
                        f"unknown transceiver {pid!r}",
                        hint=unknown_pid_hint(pid, catalog.transceivers),
                        field=(section, "optics", key),
                    )
                )
    for key, kind in (("storage_nodes", "storage"), ("management_nodes", "management")):
        servers = getattr(intent, key)
        if servers is not None and (servers.model not in catalog.nodes or catalog.nodes[servers.model].kind != kind):
            known = sorted(pid for pid, m in catalog.nodes.items() if m.kind == kind)
            problems.append(Problem(f"unknown {kind} node model {servers.model!r}", hint=unknown_pid_hint(servers.model, known), field=(key, "model")))
    if intent.oob is not None and not registry.plugins()[intent.oob.switch.nos].RUNS_OOB_SWITCHES:
        able = [name for name, package in registry.plugins().items() if package.RUNS_OOB_SWITCHES]
        problems.append(
            Problem(
                f"fabricgen writes no {registry.title(intent.oob.switch.nos)} config for an OOB switch (static routes only, no BGP)",
                hint=f"use nos: {' or '.join(able)} for oob.switch",
                field=("oob", "switch", "nos"),
            )
        )
    if intent.oob is not None:
        console = intent.oob.console
        if console.model not in catalog.console_servers:
            problems.append(
                Problem(
                    f"unknown console server {console.model!r}",
                    hint=unknown_pid_hint(console.model, catalog.console_servers, ""),
                    field=("oob", "console", "model"),
                )
            )
        if console.module not in catalog.modules:
            problems.append(
                Problem(
                    f"unknown async module {console.module!r}", hint=unknown_pid_hint(console.module, catalog.modules, ""), field=("oob", "console", "module")
                )
            )
    if intent.management_platform is not None and intent.management_platform.model not in catalog.appliances:
        problems.append(
            Problem(
                f"unknown management platform {intent.management_platform.model!r}",
                hint=unknown_pid_hint(intent.management_platform.model, catalog.appliances, "add it under 'appliances:' in a catalog file"),
                field=("management_platform", "model"),
            )
        )
    if intent.backend.scalable_unit_gpus and node is not None and node.kind == "gpu" and intent.backend.scalable_unit_gpus % node.gpus:
        problems.append(
            Problem(
                f"a scalable unit of {intent.backend.scalable_unit_gpus:,} GPUs is not a whole number of {intent.gpu_node} nodes",
                hint=f"use a multiple of {node.gpus}",
                field=("backend", "scalable_unit_gpus"),
            )
        )
    return problems
