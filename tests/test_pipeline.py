"""The pipeline around its phases: the cycle collector is off while a build runs; afterwards the
build's objects are neither left young (the collector would walk them once per generation, each
pass over millions of objects at 131,072 GPUs) nor left frozen (a dropped build would never be freed)."""

from __future__ import annotations

import gc

from fabricgen.pipeline import compile_intent
from tests.conftest import INTENTS

INTENT = INTENTS / "small-32-gpu.yaml"


def test_a_build_joins_the_oldest_generation_without_a_collection():
    compile_intent(INTENT, render=False)  # templates and caches made once
    gc.collect()
    before = len(gc.get_objects())
    passes: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
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
    assert grown > 1_000
    del build, link
    gc.collect()
    assert len(gc.get_objects()) - before < grown // 10


def test_objects_someone_else_froze_stay_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        compile_intent(INTENT, render=False)
        assert gc.get_freeze_count() == frozen  # gc.unfreeze would have thawed them: the build's objects stay young instead
    finally:
        gc.unfreeze()
