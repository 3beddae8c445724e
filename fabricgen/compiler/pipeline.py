"""The compiler pipeline, one direction, an error gate after every phase:

intent YAML -> validated intent (+ catalog) -> sizing -> fabric graph -> addresses and ASNs
-> checks -> per-device configs -> rendered files and reports -> written atomically.

`compile_intent` does everything but the writing and touches nothing outside; `build` writes.
`compile_loaded` compiles an intent already read (`fabricgen.intent`: a file, YAML text or a
mapping); the Python API (`fabricgen.compile`) is built on it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from fabricgen.basics.errors import CheckError, DesignError, raise_if
from fabricgen.build.output import write_build
from fabricgen.compiler.addressing import (
    AddressPlan,
    address_plan_problems,
    allocate_addresses,
    asn_overlap_problems,
    cluster_pool_problems,
    spine_asn_of,
)
from fabricgen.compiler.checks import advisories, run_checks
from fabricgen.compiler.checks.configs import hosts_agree_with_leaves, run_config_checks
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.backend import build_backend
from fabricgen.compiler.design.evpn import EvpnPlan, plan_evpn
from fabricgen.compiler.design.graph import Fabric, Network
from fabricgen.compiler.design.hosts import add_servers, build_host_fabric, server_port_problems
from fabricgen.compiler.design.oob import OobPlan, build_oob, growth_units
from fabricgen.compiler.design.physical import apply_layout, oob_rows
from fabricgen.compiler.design.plan import LeafSpinePlan, backend_plan
from fabricgen.compiler.design.sizing import BackendSizing, size_backend
from fabricgen.compiler.device_config import DeviceConfig, build_device_configs
from fabricgen.compiler.host_config import HostConfig, build_host_configs
from fabricgen.intent import LoadedIntent, load_intent
from fabricgen.render.parallel import render_devices
from fabricgen.reports import (
    render_bom,
    render_cabling,
    render_ip_plan,
    render_manifest,
    render_summary,
    render_topology,
)

DEFAULT_OUTPUT = Path("output")
# The phases `on_phase` hears of, in order (a `validate` ends after "device configs").
PHASES = ("intent", "design", "addressing", "checks", "device configs", "render", "reports", "write")
PhaseCallback = Callable[[str, float], None]  # (phase that just ended, its seconds)


@dataclass
class Build:
    """A compiled fabric in memory: `files` (path in the build directory -> bytes, manifest.json
    included; empty when compiled without rendering), the fabric graph, its sizing and addresses,
    `notes` for the user, the per-device and per-server configs, the intent as loaded."""

    loaded: LoadedIntent
    compiled: Compiled
    configs: dict[str, DeviceConfig]
    files: dict[str, bytes]
    timings: dict[str, float] = field(default_factory=dict)
    hosts: dict[str, HostConfig] = field(default_factory=dict)  # servers' data NICs

    @property
    def sizing(self) -> BackendSizing:
        return self.compiled.sizing

    @property
    def fabric(self) -> Fabric:
        return self.compiled.fabric

    @property
    def addresses(self) -> AddressPlan:
        return self.compiled.addresses

    @property
    def notes(self) -> tuple[str, ...]:
        """Design choices fabricgen made and advisories, as summary.md lists them."""
        return self.compiled.notes


def compile_intent(intent_path: Path, render: bool = True, jobs: int = 1, catalog_dirs: Sequence[Path] = (), on_phase: PhaseCallback | None = None) -> Build:
    """Run every phase but writing. Raises a FabricgenError subclass with all problems of the
    first phase that has any. With render=False stops after the config checks (for `validate`).
    `jobs` processes render the devices (0: one per CPU); the files are the same for any jobs.
    The intent's catalog files may lie in its directory or in one of `catalog_dirs`. `on_phase`
    is called as each phase of PHASES ends, with its name and seconds (progress)."""
    with _no_cycle_collection():
        return _compile(lambda: load_intent(intent_path, catalog_dirs), render, jobs, on_phase)


def compile_loaded(loaded: LoadedIntent, render: bool = True, jobs: int = 1, on_phase: PhaseCallback | None = None) -> Build:
    """`compile_intent` for an intent already read and validated (`fabricgen.intent`)."""
    with _no_cycle_collection():
        return _compile(lambda: loaded, render, jobs, on_phase)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The graph is millions of long-lived, cyclic objects (ports <-> links) built in one go: the
    cycle collector's full passes over them cost 12 % of a 32,768-GPU build and free nothing.
    Reference counting still frees everything else; the collector runs again afterwards.

    Afterwards the build's objects join the collector's oldest generation at once (gc.freeze, then
    gc.unfreeze: two list splices). Left young, the collector would walk them three times on
    their way there, once per generation, right after the build and during the write: 3 s CPU at
    131,072 GPUs that free nothing. They are still collected once they are garbage, by the next
    full collection. Skipped when something else has frozen objects (gc.unfreeze would thaw those
    too)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def _compile(load: Callable[[], LoadedIntent], render: bool, jobs: int, on_phase: PhaseCallback | None) -> Build:
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now
        if on_phase is not None:
            on_phase(name, timings[name])

    loaded = load()
    intent, catalog = loaded.intent, loaded.catalog
    lap("intent")
    try:
        sizing, plans, fabric, oob, evpn = _design(intent, catalog)
        lap("design")
        addresses = allocate_addresses(fabric, list(plans.values()), intent, oob, evpn)
        lap("addressing")
    except DesignError as exc:
        raise DesignError([loaded.locate(p) for p in exc.problems]) from None
    compiled = Compiled(intent, catalog, sizing, fabric, addresses, plans, oob, evpn=evpn)
    # a problem with an intent field points at its line; the rest name devices
    raise_if([loaded.locate(p) if p.field else p for p in run_checks(compiled)], CheckError)
    notes = tuple(note for plan in plans.values() for note in plan.notes) + (oob.notes if oob else ())
    compiled = replace(compiled, notes=notes + tuple(advisories(compiled)))
    lap("checks")
    build = Build(loaded, compiled, {}, {}, timings)
    # the configs are checked hop by hop before anything is rendered, also by `validate`
    build.configs = build_device_configs(compiled)
    build.hosts = build_host_configs(compiled, build.configs)
    problems = run_config_checks(compiled, build.configs) + hosts_agree_with_leaves(compiled, build.configs, build.hosts)
    raise_if([loaded.locate(p) if p.field else p for p in problems], CheckError)
    lap("device configs")
    if not render:
        return build
    texts = render_devices(list(build.configs.values()), list(build.hosts.values()), jobs)
    lap("render")
    for report in (render_cabling, render_bom, render_ip_plan):
        texts.update(report(compiled))
    texts.update(render_summary(compiled, build.configs))
    texts.update(render_topology(compiled, build.configs))
    # each text dropped as soon as it is encoded: never both copies of the build at once (1 GB each at 131,072 GPUs)
    files = {path: texts.pop(path).encode("utf-8") for path in list(texts)}
    releases: dict[str, set[str]] = {}
    for config in build.configs.values():
        releases.setdefault(config.nos_flavour or config.nos, set()).add(config.nos_release)  # by flavour: sonic, broadcom-sonic...
    manifest = render_manifest(loaded.file, loaded.sha256, loaded.catalog_files, files, releases)
    files.update({path: text.encode("utf-8") for path, text in manifest.items()})
    build.files = files
    lap("reports")
    return build


def _design(intent, catalog) -> tuple[BackendSizing, dict[Network, LeafSpinePlan], Fabric, OobPlan | None, dict[Network, EvpnPlan]]:
    """Every network of the cluster into one graph, then the physical layout. Raises
    DesignError with every problem of the phase that has any."""
    sizing, problems = size_backend(intent, catalog)
    plans = {Network.BACKEND: backend_plan(intent, sizing)}
    problems += address_plan_problems(plans[Network.BACKEND])
    problems += server_port_problems(intent, catalog)
    fabric, graph_problems = build_backend(intent, catalog, sizing)
    raise_if(problems + graph_problems, DesignError)  # every design problem at once
    assert fabric is not None
    raise_if(add_servers(intent, catalog, fabric), DesignError)
    problems = []
    if intent.frontend is not None:
        fabrics = [(Network.FRONTEND, intent.frontend, "frontend")]
        if intent.frontend.storage == "separate":
            fabrics.append((Network.STORAGE, intent.storage_fabric(), "storage"))
        for network, spec, section in fabrics:
            plan, fabric_problems = build_host_fabric(intent, catalog, fabric, network, spec, section)
            problems += fabric_problems
            if plan is not None:
                plans[network] = plan
                problems += address_plan_problems(plan)
        problems += asn_overlap_problems(list(plans.values()))
    evpn: dict[Network, EvpnPlan] = {}
    for network, plan in plans.items():
        overlay, evpn_problems = plan_evpn(plan, fabric, spine_asn_of(plan))
        problems += evpn_problems
        if overlay is not None:
            evpn[network] = overlay
    raise_if(problems, DesignError)
    units = growth_units(sizing, plans, fabric)  # what a scalable unit reserves on the OOB network
    racks, rows, problems = oob_rows(intent, catalog, fabric, units)  # with a layout: OOB switches per row
    raise_if(problems, DesignError)
    oob = None
    if intent.oob is not None:
        oob, problems = build_oob(intent, catalog, fabric, racks, units, rows)
        raise_if(problems, DesignError)
    raise_if(cluster_pool_problems(intent, oob) + apply_layout(intent, catalog, fabric, oob.switch_rows if oob else None), DesignError)
    return sizing, plans, fabric, oob, evpn


def build(
    intent_path: Path, output_dir: Path | None = None, jobs: int = 1, catalog_dirs: Sequence[Path] = (), on_phase: PhaseCallback | None = None
) -> tuple[Build, Path]:
    """Compile (rendering on `jobs` processes) and write atomically to `output_dir` (default
    output/<fabric name>). The intent's catalog files may lie in its directory or in `catalog_dirs`.
    `on_phase`: as for `compile_intent`, and "write" last.

    The collector stays off through the write as well: the build's objects join its oldest
    generation uncounted, so its next full pass can come within the write's first allocations and
    walk all of them for nothing (1.2 s of a 4 s write at 131,072 GPUs)."""
    with _no_cycle_collection():
        result = compile_intent(intent_path, jobs=jobs, catalog_dirs=catalog_dirs, on_phase=on_phase)
        destination = output_dir if output_dir is not None else DEFAULT_OUTPUT / result.loaded.intent.name
        clock = time.perf_counter()
        write_build(result.files, destination)
        result.timings["write"] = time.perf_counter() - clock
    if on_phase is not None:
        on_phase("write", result.timings["write"])
    return result, destination
