"""A starter intent: the commented YAML `fabricgen init` writes from a few choices.

`Starter` holds the choices (GPU count, GPU node, switch models, NOS, routing, design, name);
`check_starter` refuses the ones the catalog cannot satisfy, each naming its `fabricgen init`
option; `render_starter` writes the intent through templates/intent/starter.yaml.j2, with the
yaml-language-server modeline `schema_reference` makes. Whether the result builds is the
pipeline's to say (fabricgen.cli.init compiles it before writing anything).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from fabricgen.basics.errors import FieldPath, Problem
from fabricgen.basics.trust import has_invisible, quoted
from fabricgen.basics.validation import closest
from fabricgen.catalog import Catalog, unknown_pid_hint
from fabricgen.catalog.model import NOS_RELEASE
from fabricgen.intent.model import MAX_GPUS, NAME_PATTERN, Backend, SwitchRole
from fabricgen.nos import registry

DESIGNS: tuple[str, ...] = get_args(Backend.model_fields["design"].annotation)
ROUTINGS: tuple[str, ...] = get_args(Backend.model_fields["routing"].annotation)
DEFAULT_GPU_NODE = "DGX-H100"
DEFAULT_SWITCH: str = SwitchRole.model_fields["model"].default

# The option of `fabricgen init` that sets each intent field it writes, to name in problems.
OPTION_OF_FIELD: dict[FieldPath, str] = {
    ("name",): "--name",
    ("gpus",): "--gpus",
    ("gpu_node",): "--gpu-node",
    ("backend", "design"): "--design",
    ("backend", "routing"): "--routing",
    ("backend", "leaf"): "--leaf",
    ("backend", "spine"): "--spine",
    ("backend", "core"): "--spine",  # the core is the spines' model unless the intent says otherwise
    ("backend", "leaf", "nos"): "--nos",
    ("backend", "spine", "nos"): "--nos",
    ("backend", "leaf", "nos_release"): "--nos-release",
    ("backend", "spine", "nos_release"): "--nos-release",
}


@dataclass(frozen=True)
class Starter:
    """What `fabricgen init` asks for; every other field keeps its default."""

    gpus: int
    name: str
    gpu_node: str = DEFAULT_GPU_NODE
    leaf: str = DEFAULT_SWITCH
    spine: str = DEFAULT_SWITCH
    nos: str = field(default_factory=registry.default_name)
    routing: str = "ebgp"
    design: str = "rail-optimized"
    nos_release: str | None = None


def default_name(gpus: int) -> str:
    return f"cluster-{gpus}-gpu"


def gpu_node_choices(catalog: Catalog) -> list[str]:
    return sorted(pid for pid, node in catalog.nodes.items() if node.kind == "gpu")


def switch_choices(catalog: Catalog, nos: str) -> list[str]:
    """The catalog's switch models that run `nos`."""
    return sorted(pid for pid, model in catalog.switches.items() if nos in model.interface_names)


def _fastest_cages_have_an_optic(catalog: Catalog, pid: str) -> bool:
    """Whether the catalog has a default transceiver for the model's fastest cages, so a starter
    on it builds from the built-in catalog alone (no 800G QSFP-DD optic is built in)."""
    fastest = max(catalog.switches[pid].port_groups, key=lambda group: group.speed)
    return any(t.default and (t.form_factor, t.speed) == (fastest.form_factor, fastest.speed) for t in catalog.transceivers.values())


def default_switch(catalog: Catalog, nos: str) -> str:
    """The built-in default model where it runs `nos` (for a NOS that prefers it, SONiC: with its
    platform's port map, so config_db.json loads on the switch as written, and an optic for its
    cages), else the first model that does. An unknown `nos` gets the default model;
    check_starter refuses the NOS."""
    choices = switch_choices(catalog, nos)
    package = registry.plugins().get(nos)
    if package is not None and package.PREFERS_MAPPED_PLATFORM:
        mapped = [pid for pid in choices if catalog.switches[pid].platform_mapped and _fastest_cages_have_an_optic(catalog, pid)]
        choices = mapped or choices
    if DEFAULT_SWITCH in choices:
        return DEFAULT_SWITCH
    return choices[0] if choices else DEFAULT_SWITCH


def option_of(field: FieldPath) -> str | None:
    """The `fabricgen init` option behind an intent field (or its nearest parent), if any."""
    path = tuple(field)
    while path:
        if path in OPTION_OF_FIELD:
            return OPTION_OF_FIELD[path]
        path = path[:-1]
    return None


def check_starter(starter: Starter, catalog: Catalog) -> list[Problem]:
    """The choices the catalog cannot satisfy, each naming its option and the values it takes."""
    problems = []
    if not NAME_PATTERN.match(starter.name):
        problems.append(Problem(f"--name {quoted(starter.name)} is not a valid fabric name", hint="use 1-63 letters, digits and '-', not first or last"))
    if not 1 <= starter.gpus <= MAX_GPUS:
        problems.append(Problem(f"--gpus {starter.gpus} is out of range", hint=f"give 1 to {MAX_GPUS:,} GPUs"))
    node = catalog.nodes.get(starter.gpu_node)
    if node is None or node.kind != "gpu":
        problems.append(
            Problem(
                f"--gpu-node {quoted(starter.gpu_node)} is not a GPU node model of the catalog",
                hint=unknown_pid_hint(starter.gpu_node, gpu_node_choices(catalog), ""),
            )
        )
    elif starter.gpus % node.gpus:
        lower = starter.gpus - starter.gpus % node.gpus
        choices = f"{lower} or {lower + node.gpus}" if lower else f"{node.gpus}"
        problems.append(
            Problem(f"--gpus {starter.gpus} is not a whole number of {starter.gpu_node} nodes ({node.gpus} GPUs each)", hint=f"use --gpus {choices}")
        )
    if starter.nos not in registry.names():
        close = closest(starter.nos, registry.names())
        problems.append(
            Problem(
                f"--nos {quoted(starter.nos)} is not a NOS fabricgen writes for",
                hint=(f"did you mean {close}? " if close else "") + f"choose one of {', '.join(registry.names())}",
            )
        )
        return problems
    for option, pid in (("--leaf", starter.leaf), ("--spine", starter.spine)):
        model = catalog.switches.get(pid)
        if model is None:
            problems.append(Problem(f"{option} {quoted(pid)} is not a switch model of the catalog", hint=unknown_pid_hint(pid, catalog.switches, "")))
        elif starter.nos not in model.interface_names:
            problems.append(
                Problem(
                    f"{option} {pid} does not run {starter.nos}",
                    hint=f"use --nos {' or --nos '.join(model.nos)}, or one of {', '.join(switch_choices(catalog, starter.nos))}",
                )
            )
    if starter.nos_release is not None and not NOS_RELEASE.match(starter.nos_release):
        problems.append(
            Problem(
                f"--nos-release {quoted(starter.nos_release)} is not a release name",
                hint=f"write it like the {registry.title(starter.nos)} releases fabricgen knows: {', '.join(catalog.releases_of(starter.nos))}",
            )
        )
    return problems


# Where `fabricgen init` keeps the schema its modeline points at, in the intent's repository
SCHEMA_COPY = Path(".fabricgen") / "intent.schema.json"


def intent_root(directory: Path) -> Path:
    """The root of the git repository `directory` lies in (the nearest ancestor with a `.git`, a
    directory or, in a worktree or submodule, a file), else `directory` itself."""
    directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


def schema_for(intent_file: Path, installed: Path) -> Path:
    """The schema file the modeline of `intent_file` should point at, so that it resolves for
    whoever opens the intent where it is shared: the repository's own `schema/intent.schema.json`
    when the intent lies in a fabricgen checkout whose schema is `installed` (the shipped intents'
    case), else `.fabricgen/intent.schema.json` at the root of the intent's repository (or beside
    the intent, outside one), which `fabricgen init` writes as a copy of `installed`. Never the
    installed copy itself: it lies in a virtualenv, which is nobody else's."""
    root = intent_root(intent_file.parent)
    if installed.resolve() == root / "schema" / installed.name:
        return installed.resolve()
    return root / SCHEMA_COPY


def schema_reference(intent_file: Path, schema: Path) -> str:
    """Where the modeline of `intent_file` points: the schema's path relative to the intent's
    directory (yaml-language-server resolves it from there), or a file: URI where no relative path
    exists or it would hold white space or an invisible character (the modeline ends at white space;
    a URI escapes them)."""
    try:
        relative = Path(os.path.relpath(schema.resolve(), intent_file.parent.resolve())).as_posix()
    except ValueError:  # another drive
        return schema.resolve().as_uri()
    if has_invisible(relative) or any(ch.isspace() for ch in relative):
        return schema.resolve().as_uri()
    return relative


def render_starter(starter: Starter, catalog: Catalog, schema_ref: str, file_name: str) -> str:
    """The commented intent for `starter` (choices already checked by `check_starter`)."""
    from fabricgen.render.environment import environment

    node = catalog.nodes[starter.gpu_node]
    shown_file = file_name if not has_invisible(file_name) and not any(ch.isspace() for ch in file_name) else "<file>"
    return (
        environment()
        .get_template("intent/starter.yaml.j2")
        .render(
            s=starter,
            schema_ref=schema_ref,
            file_name=shown_file,
            node_count=starter.gpus // node.gpus,
            gpus_per_node=node.gpus,
            # what the chosen NOS writes per switch, for the comment above the roles
            nos_description=registry.plugins()[starter.nos].DESCRIPTION,
            nos_files=", ".join(path.rsplit("/", 1)[-1] for path in registry.plugins()[starter.nos].config_files("<switch>")),
        )
    )
