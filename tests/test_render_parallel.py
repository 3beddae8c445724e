"""Rendering on several processes: the same files in the same order as on one, and one process
when asked for one."""

from __future__ import annotations

import multiprocessing

import pytest

from fabricgen.compiler.pipeline import compile_intent
from fabricgen.render import parallel
from fabricgen.render.parallel import effective_jobs, render_devices
from tests.conftest import INTENTS


@pytest.fixture(scope="module")
def whitepaper_256():
    return compile_intent(INTENTS / "cisco-256-gpu.yaml", render=False)


@pytest.mark.parametrize("jobs", [2, 3, 0])
def test_same_files_in_the_same_order(whitepaper_256, jobs):
    configs, hosts = list(whitepaper_256.configs.values()), list(whitepaper_256.hosts.values())
    one = render_devices(configs, hosts, 1)
    several = render_devices(configs, hosts, jobs)
    assert list(several) == list(one)
    assert [path for path in one if one[path] != several[path]] == []


def test_one_job_starts_no_process(monkeypatch):
    def no_processes(*args, **kwargs):
        raise AssertionError("jobs=1 must not start a process")

    monkeypatch.setattr(multiprocessing, "get_context", no_processes)
    monkeypatch.setattr(parallel.multiprocessing, "get_context", no_processes)
    build = compile_intent(INTENTS / "cisco-256-gpu.yaml", jobs=1)
    assert any(path.startswith("configs/") for path in build.files)


def test_how_many_processes(monkeypatch):
    monkeypatch.setattr(parallel, "available_cpus", lambda: 4)
    monkeypatch.setattr(parallel.sys, "platform", "linux")
    assert effective_jobs(0, 100) == 4  # one per available CPU
    assert effective_jobs(8, 100) == 8
    assert effective_jobs(8, 3) == 3  # never more processes than devices
    assert effective_jobs(2, 0) == 1
    monkeypatch.setattr(parallel.sys, "platform", "darwin")
    assert effective_jobs(8, 100) == 1  # no fork: one process
    with pytest.raises(ValueError, match="jobs"):
        effective_jobs(-1, 100)


def test_chunks_are_contiguous_and_cover_everything():
    items = list(range(10))
    for jobs in range(1, 12):
        chunks = [list(parallel._chunk(items, jobs, i)) for i in range(jobs)]
        assert [x for chunk in chunks for x in chunk] == items
        assert max(map(len, chunks)) - min(map(len, chunks)) <= 1
