"""The pipeline around its phases: the cycle collector is off while a build runs; afterwards the
build's objects are neither left young (the collector would walk them once per generation, each
pass over millions of objects at 131,072 GPUs) nor left frozen (a dropped build would never be freed)."""

from __future__ import annotations

import gc
import threading

from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import INTENTS

INTENT = INTENTS / "small-32-gpu.yaml"


def test_a_build_joins_the_oldest_generation_without_a_collection():
    compile_intent(INTENT, render=False)  # templates and caches made once
    gc.collect()
    before = len(gc.get_objects())
    passes: list[int] = []

    this_thread = threading.get_ident()

    def record(phase: str, info: dict) -> None:
        # a collection runs in the thread whose allocation set it off: pytest-xdist's execnet thread
        # may start one of its own before the build turns the collector off, and that one is not the build's
        if phase == "start" and threading.get_ident() == this_thread:
            passes.append(info["generation"])

    gc.callbacks.append(record)
    try:
        build = compile_intent(INTENT, render=False)
        passes_after_build = list(passes)
    finally:
        gc.callbacks.remove(record)
    assert passes_after_build == [], f"collections of generations {passes_after_build} walked the new build"
    assert gc.isenabled() and gc.get_freeze_count() == 0
    link = build.fabric.links[0]
    assert any(o is link for o in gc.get_objects(generation=2))
    # the graph is cyclic (ports <-> links): only the collector frees it, and it still does
    grown = len(gc.get_objects()) - before
    assert grown > 500  # the graph and configs of 32 GPUs (about 880; the built-in catalog is loaded once per process)
    del build, link
    gc.collect()
    assert len(gc.get_objects()) - before < grown // 10


def test_objects_someone_else_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        compile_intent(INTENT, render=False)
        # gc.unfreeze would have thawed them all (count 0); the count may still drop a little as frozen objects are freed
        assert gc.get_freeze_count() > frozen // 2
    finally:
        gc.unfreeze()


def test_the_build_command_leaves_the_collector_as_it_found_it(tmp_path):
    """The console script freezes the collector's objects only at exit (cli.main's atexit): run in a process
    that goes on (tests/cli_runner.py), the next build's objects must still join the oldest
    generation, which a leftover freeze would prevent."""
    from tests.cli_runner import fabricgen

    before = gc.get_freeze_count()
    result = fabricgen("build", INTENT, "-o", tmp_path / "out", "--quiet")
    assert result.returncode == 0, result.stderr
    assert gc.get_freeze_count() == before


def test_the_write_runs_with_the_collector_off(tmp_path, monkeypatch):
    """A build's objects join the oldest generation uncounted, so a full pass may come due during the
    write: `build` keeps the collector off until its files are on disk."""
    import fabricgen.compiler.pipeline as pipeline

    during_write: list[bool] = []
    real_write = pipeline.write_build

    def write_build(files, destination):
        during_write.append(gc.isenabled())
        real_write(files, destination)

    monkeypatch.setattr(pipeline, "write_build", write_build)
    pipeline.build(INTENT, tmp_path / "out")
    assert during_write == [False]
    assert gc.isenabled()
    assert (tmp_path / "out" / "manifest.json").is_file()
