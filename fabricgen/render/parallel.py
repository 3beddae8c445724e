"""Rendering every device's and host's files, on one process or several.

`render_devices(configs, hosts, jobs)` gives the same files, in the same order, for any `jobs`.
With jobs > 1 (Linux), the switches and the hosts are each split into `jobs` contiguous chunks;
the parent renders chunk 0 while a pool of jobs - 1 forked workers renders the others. Workers
are forked, not spawned, so they inherit the configs instead of unpickling them: only a chunk's
index goes out and its files (path -> text) come back. The chunks are merged in index order.
Where fork is not the platform's way (macOS, Windows), rendering stays on one process.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence

from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.compiler.host_config import HostConfig
from fabricgen.render import render_configs
from fabricgen.render.hosts import render_hosts
from fabricgen.render.twin import render_lab_overlay, render_routing_twins

# What the forked workers render, set just before the pool starts: (configs, hosts, jobs).
_WORK: tuple[Sequence[DeviceConfig], Sequence[HostConfig], int] | None = None


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, which a container or taskset narrows)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def effective_jobs(jobs: int, items: int) -> int:
    """How many processes `jobs` means for `items` things to render: 0 is one per available CPU;
    never more processes than things, never fewer than one; one where fork is not available."""
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (one per CPU) or more, not {jobs}")
    wanted = available_cpus() if jobs == 0 else jobs
    if not sys.platform.startswith("linux"):
        return 1
    return max(1, min(wanted, items))


def render_devices(configs: Sequence[DeviceConfig], hosts: Sequence[HostConfig], jobs: int = 1) -> dict[str, str]:
    """Every switch's config files, every host's NIC files, the routing twins and the lab overlay,
    keyed by path inside the build directory; the same dict, byte for byte and in the same order,
    whatever `jobs` is. jobs=1 starts no process."""
    configs, hosts = list(configs), list(hosts)
    jobs = effective_jobs(jobs, max(len(configs), len(hosts)))
    if jobs == 1:
        parts = [_render(configs, hosts)]
    else:
        parts = _render_in_pool(configs, hosts, jobs)
    files: dict[str, str] = {}
    for kind in range(3):  # every chunk's configs, then every chunk's hosts, then the twins
        for part in parts:
            files.update(part[kind])
    files.update(render_lab_overlay(configs))  # one file over every VTEP: cheap, kept whole
    return files


def _render(configs: Sequence[DeviceConfig], hosts: Sequence[HostConfig]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    return render_configs(configs), render_hosts(hosts), render_routing_twins(configs)


def _chunk(items: Sequence, jobs: int, index: int) -> Sequence:
    """The index-th of `jobs` contiguous, near-equal slices of items."""
    size, extra = divmod(len(items), jobs)
    start = index * size + min(index, extra)
    return items[start : start + size + (index < extra)]


def _render_chunk(index: int) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    assert _WORK is not None, "a render worker was started without its work"
    configs, hosts, jobs = _WORK
    return _render(_chunk(configs, jobs, index), _chunk(hosts, jobs, index))


def _render_in_pool(configs: list[DeviceConfig], hosts: list[HostConfig], jobs: int) -> list[tuple[dict[str, str], dict[str, str], dict[str, str]]]:
    global _WORK
    _WORK = (configs, hosts, jobs)
    try:
        # Ctrl-C is the parent's to handle (it stops the pool); workers ignore it, no tracebacks
        with multiprocessing.get_context("fork").Pool(jobs - 1, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)) as pool:
            others = pool.map_async(_render_chunk, range(1, jobs), chunksize=1)
            first = _render_chunk(0)  # the parent works too instead of waiting
            return [first, *others.get()]
    finally:
        _WORK = None
