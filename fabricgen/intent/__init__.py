"""Reading an intent: YAML -> validated `Intent`, with every problem tied to its line.

`load_intent(path)` returns a `LoadedIntent`: the validated intent, the YAML document (for line
lookups in later phases) and the catalog it refers to (built-in plus the user's files).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from fabricgen.catalog import Catalog, load_catalog
from fabricgen.errors import IntentError, Problem, raise_if
from fabricgen.intent.model import NAME_PATTERN, Intent
from fabricgen.validation import problems_from_validation_error
from fabricgen.yaml_source import YamlDocument, load_yaml

__all__ = ["Intent", "LoadedIntent", "load_intent"]


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    source: YamlDocument
    catalog: Catalog
    sha256: str
    catalog_files: dict[str, str]  # user catalog files as the intent names them -> sha256

    def locate(self, problem: Problem) -> Problem:
        return self.source.locate(problem)


def load_intent(path: Path) -> LoadedIntent:
    """Read, validate and resolve an intent. Raises IntentError or CatalogError with every problem."""
    doc, problems = load_yaml(path, what="intent")
    raise_if(problems, IntentError)
    if not isinstance(doc.data, dict):
        raise IntentError(doc.locate(Problem("an intent is a mapping of keys such as 'gpus: 256'")))
    data = dict(doc.data)
    if "name" not in data:
        # the file name is the fabric's name unless the intent says otherwise
        stem = path.stem
        if not NAME_PATTERN.match(stem):
            raise IntentError(
                doc.locate(
                    Problem(
                        f"the file name {stem!r} cannot be the fabric name",
                        hint="add 'name:' with letters, digits and '-' only",
                    )
                )
            )
        data["name"] = stem
    try:
        intent = Intent.model_validate(data)
    except ValidationError as exc:
        raise IntentError(problems_from_validation_error(exc, doc, Intent)) from None
    catalog_paths = _catalog_paths(intent, path, doc)
    catalog = load_catalog(catalog_paths)
    catalog_files = {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in zip(intent.catalog, catalog_paths, strict=True)}
    loaded = LoadedIntent(intent, doc, catalog, hashlib.sha256(path.read_bytes()).hexdigest(), catalog_files)
    raise_if([loaded.locate(p) for p in _catalog_references(intent, catalog)], IntentError)
    return loaded


def _catalog_paths(intent: Intent, intent_path: Path, doc: YamlDocument) -> list[Path]:
    paths, problems = [], []
    for index, name in enumerate(intent.catalog):
        candidate = (intent_path.parent / name).resolve()
        if candidate.is_dir():
            problems.append(doc.locate(Problem(f"catalog {name!r} is a directory; name a YAML file", field=("catalog", index))))
        elif not candidate.is_file():
            problems.append(
                doc.locate(Problem(f"catalog file {name!r} not found (looked in {candidate.parent})", field=("catalog", index)))
            )
        paths.append(candidate)
    raise_if(problems, IntentError)
    return paths


def _catalog_references(intent: Intent, catalog: Catalog) -> list[Problem]:
    """Every PID the intent names exists, has the right kind, and runs the NOS asked for."""
    problems = []
    node = catalog.nodes.get(intent.gpu_node)
    if node is None or node.kind != "gpu":
        known = sorted(pid for pid, model in catalog.nodes.items() if model.kind == "gpu")
        problems.append(
            Problem(f"unknown GPU node model {intent.gpu_node!r}", hint=f"use one of {', '.join(known)} or add it to a catalog file", field=("gpu_node",))
        )
    elif intent.gpus is not None and intent.gpus % node.gpus:
        lower = intent.gpus - intent.gpus % node.gpus
        choices = f"{lower} or {lower + node.gpus}" if lower else f"{node.gpus}"
        problems.append(
            Problem(
                f"{intent.gpus} GPUs is not a whole number of {intent.gpu_node} nodes ({node.gpus} GPUs each)",
                hint=f"use {choices}, or give 'nodes:' instead",
                field=("gpus",),
            )
        )
    for role in ("leaf", "spine"):
        wanted = getattr(intent.backend, role)
        model = catalog.switches.get(wanted.model)
        if model is None:
            problems.append(
                Problem(
                    f"unknown switch model {wanted.model!r}",
                    hint=f"use one of {', '.join(sorted(catalog.switches))} or add it to a catalog file",
                    field=("backend", role, "model"),
                )
            )
        elif wanted.nos not in model.interface_names:
            problems.append(
                Problem(
                    f"{wanted.model} has no {wanted.nos} interface naming in the catalog",
                    hint=f"use nos: {' or '.join(model.nos)}, or add interface_names.{wanted.nos} to the catalog entry",
                    field=("backend", role, "nos"),
                )
            )
    for key in ("host_links", "fabric_links"):
        pid = getattr(intent.backend.optics, key)
        if pid is not None and pid not in catalog.transceivers:
            problems.append(
                Problem(
                    f"unknown transceiver {pid!r}",
                    hint=f"use one of {', '.join(sorted(catalog.transceivers))} or add it to a catalog file",
                    field=("backend", "optics", key),
                )
            )
    if intent.backend.scalable_unit_gpus and node is not None and node.kind == "gpu" and intent.backend.scalable_unit_gpus % node.gpus:
        problems.append(
            Problem(
                f"a scalable unit of {intent.backend.scalable_unit_gpus} GPUs is not a whole number of {intent.gpu_node} nodes",
                hint=f"use a multiple of {node.gpus}",
                field=("backend", "scalable_unit_gpus"),
            )
        )
    return problems
