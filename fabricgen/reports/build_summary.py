"""`fabricgen build --json` and `validate --json`: what was compiled (and written), as one document.

`BuildSummary` is the documented shape (its JSON Schema: `BuildSummary.model_json_schema()`).
Counts come from the compiled fabric, the same numbers the text summary prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fabricgen.basics.models import JsonOutputModel
from fabricgen.basics.trust import printable
from fabricgen.basics.units import format_ratio

if TYPE_CHECKING:
    from fabricgen.compiler.pipeline import Build


class DeviceCount(JsonOutputModel):
    """How many devices of one kind the fabric has (one row of the text summary's table)."""

    network: str  # backend, frontend, storage, oob
    role: str  # leaf, spine, core, oob-switch, gpu-node, ...
    model: str  # the catalog PID
    nos: str  # nxos, sonic, or '-' (servers)
    count: int
    flavour: str | None = None  # switches: the catalog flavour their release belongs to (sonic, broadcom-sonic, ...)


class Backend(JsonOutputModel):
    gpus: int
    nodes: int
    scalable_units: int
    tiers: int
    planes: int
    leaves: int
    spines: int
    cores: int
    leaf_ratio: str  # the built downlink:uplink bandwidth of a leaf, e.g. '1:1'


class BuildSummary(JsonOutputModel):
    """The document `build --json` and `validate --json` print on stdout (exit 0)."""

    ok: Literal[True] = True
    command: Literal["build", "validate"]
    intent: str  # the intent file as given
    fabric: str  # the intent's name
    backend: Backend
    devices: list[DeviceCount]
    links: int  # every link of the fabric graph (fabric, server, OOB)
    notes: list[str]  # the design's advisories, as `note:` lines in the text output
    destination: str | None = None  # build: the build directory written
    files: int | None = None  # build: files written
    bytes: int | None = None  # build: their total size
    seconds: dict[str, float]  # per phase (intent, design, ..., write)


def build_summary(result: Build, intent: Path, destination: Path | None = None) -> BuildSummary:
    """The summary of a compiled `result` of `intent`; with `destination`, of the build written there."""
    s = result.sizing
    written = destination is not None
    flavours = {
        (n.value, r.value, m): result.compiled.nos_target(n, r, m).flavour for n, r, m in {(d.network, d.role, d.model) for d in result.fabric.switches()}
    }
    return BuildSummary(
        command="build" if written else "validate",
        intent=printable(intent),
        fabric=result.loaded.intent.name,
        backend=Backend(
            gpus=s.gpus,
            nodes=s.nodes,
            scalable_units=s.su_count,
            tiers=s.tiers,
            planes=s.planes,
            leaves=s.leaves,
            spines=s.spines,
            cores=s.cores,
            leaf_ratio=format_ratio(s.built_ratio),
        ),
        devices=[
            DeviceCount(network=network, role=role, model=model, nos=nos, count=count, flavour=flavours.get((network, role, model)))
            for (network, role, model, nos), count in result.fabric.inventory()
        ],
        links=len(result.fabric.links),
        notes=list(result.compiled.notes),
        destination=printable(destination) if written else None,
        files=len(result.files) if written else None,
        bytes=sum(len(data) for data in result.files.values()) if written else None,
        seconds={phase: round(seconds, 3) for phase, seconds in result.timings.items()},
    )
