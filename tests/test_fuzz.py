"""Property-based fuzzing (issue 16): hostile intents, catalogs and build directories must give
exit 0 or 2 (1 where the command means "changed" or "a device failed"), never a crash, a traceback,
an unlocated problem, raw control characters, files written on refusal, or a case over its time or
memory limit. The generators, the forked runner and the properties are in tests/fuzzing.py.

The campaigns run a bounded, derandomized number of cases here (profile `ci`); `make fuzz` runs
10,000 (profile `full`) and prints a report. The first tests check the harness itself: that the
unmutated inputs pass, and that each property catches what it is meant to catch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from tests import fuzzing

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fuzzer forks and reads /proc (Linux)")

QUICK = replace(fuzzing.PROFILES["ci"], cpu_limit_s=5.0)


@pytest.fixture(scope="module", autouse=True)
def preloaded():
    fuzzing.preload()


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    return fuzzing.build_bases(tmp_path_factory.mktemp("fuzz-bases"))


@pytest.fixture(scope="module")
def plans(bases, tmp_path_factory) -> dict[str, Path]:
    return fuzzing.plan_bases(bases, tmp_path_factory.mktemp("fuzz-plans"))


def run(case: fuzzing.Case, directory: Path, limits: fuzzing.Profile = QUICK) -> tuple[fuzzing.Outcome, fuzzing.Finding | None]:
    outcome = fuzzing.run_case(case, directory, limits)
    return outcome, fuzzing.judge(case, outcome, directory)


# --- the harness ----------------------------------------------------------------------------------


@pytest.mark.parametrize("base", sorted(set(fuzzing.INTENT_BASES) - set(fuzzing.profile().skip_bases)))
def test_every_base_intent_builds_as_the_fuzzer_writes_it(base, tmp_path):
    """The generator starts from valid intents: unmutated, each builds (else every case would only
    test the same first error)."""
    case = fuzzing.intent_case(base, ())
    outcome, finding = run(case, tmp_path / "case", replace(QUICK, cpu_limit_s=60.0, wall_limit_s=300.0))
    assert finding is None and outcome.exit_code == 0, (finding, outcome.stderr)
    assert (tmp_path / "case" / "out" / "manifest.json").is_file()


@pytest.mark.parametrize("nos", ["nxos", "sonic"])
def test_the_base_user_catalog_builds(nos, tmp_path):
    outcome, finding = run(fuzzing.catalog_case(nos, True, ()), tmp_path / "case")
    assert finding is None and outcome.exit_code == 0, (finding, outcome.stderr)


def test_the_dumper_writes_what_it_is_given():
    """Anchors, merge keys, tags and quoted control characters come out as YAML says they should."""
    import yaml

    tree = {"a": fuzzing.Anchored("x", {"k": 1}), "b": {fuzzing.MERGE: fuzzing.Alias("x"), "j": 2}, "c": "line\nbreak\x1b", "d": [1, {"e": None}]}
    text = fuzzing.dump(tree)
    assert yaml.safe_load(text) == {"a": {"k": 1}, "b": {"k": 1, "j": 2}, "c": "line\nbreak\x1b", "d": [1, {"e": None}]}
    assert fuzzing.dump({"t": fuzzing.Tagged("!!int", "0x10")}) == "t: !!int 0x10\n"


@pytest.mark.parametrize(("command", "expected"), [("diff", 0), ("diff-reversed", 0), ("analyze", 0), ("push", 1), ("bom", 1)])
def test_unmutated_build_directories_pass(bases, command, expected, tmp_path):
    """Each build-directory command on a real build: the exit code it should give, no failure.
    push reaches nothing (127.0.0.1 port 9 refuses), so every device fails: exit 1."""
    case = fuzzing.build_case(bases, "tiny-sonic", command, ())
    outcome, finding = run(case, tmp_path / "case")
    assert finding is None and outcome.exit_code == expected, (finding, outcome.stdout[-500:], outcome.stderr[-500:])


def test_a_crash_is_a_failure_named_by_where_it_happened(monkeypatch, tmp_path):
    def crash(*args, **kwargs):
        return {}["missing"]

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", crash)
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case")
    assert outcome.exit_code == 1 and outcome.exception == "KeyError"
    assert finding.kind == "build: crash KeyError in tests/test_fuzz.py:crash"


def test_a_busy_case_is_stopped_at_the_cpu_limit_and_says_where(monkeypatch, tmp_path):
    def spin(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", spin)
    _, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case", replace(QUICK, cpu_limit_s=0.5))
    assert finding.kind == "build: over the CPU time limit, in tests/test_fuzz.py:spin"


def test_a_blocked_case_is_killed_at_the_wall_clock_limit(monkeypatch, tmp_path):
    monkeypatch.setattr("fabricgen.compiler.pipeline.build", lambda *a, **k: time.sleep(60))
    started = time.perf_counter()
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case", replace(QUICK, wall_limit_s=1.0))
    assert outcome.exit_code is None and finding.kind.startswith("build: still running after 1 s")
    assert time.perf_counter() - started < 30  # a generous bound: the child is killed, not waited for


@pytest.mark.parametrize("how", ["at once", "step by step"])
def test_memory_is_bounded(how, monkeypatch, tmp_path):
    """Over the limit, the case gets a MemoryError (still holding what it took) and is reported."""

    def hog(*args, **kwargs):
        if how == "at once":
            return bytearray(8 << 30)
        held = []
        while True:
            held.append(bytearray(1 << 20))

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", hog)
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case", replace(QUICK, memory_limit=256 << 20))
    assert finding.kind == "build: over the memory limit, in tests/test_fuzz.py:hog"
    assert outcome.peak_rss < 512 << 20


def test_no_connection_leaves_the_loopback(monkeypatch, tmp_path):
    """A case that tries to reach another address is stopped before the connect and reported."""

    def reach_out(*args, **kwargs):
        with contextlib.suppress(OSError):
            socket.create_connection(("192.0.2.1", 9), timeout=1)  # a name lookup first
        with socket.socket() as raw:
            raw.connect(("192.0.2.2", 9))

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", reach_out)
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case")
    assert finding.kind == "build: tried to reach a non-loopback address"
    assert outcome.network == ["lookup '192.0.2.1'", "connect ('192.0.2.2', 9)"]


def test_no_file_outside_the_case_changes(monkeypatch, tmp_path):
    """A case that writes, creates or removes anything outside its own directory is stopped before
    the change and reported (cases run as root: a generated path or a bug must not reach /etc)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep\n")

    def reach_out(*args, **kwargs):
        for action in (
            lambda: (outside / "new").write_text("x"),
            lambda: os.unlink(outside / "keep"),
            lambda: os.replace(outside / "keep", Path.cwd() / "stolen"),
            lambda: shutil.rmtree(outside),
        ):
            with contextlib.suppress(OSError):
                action()
        Path("inside.txt").write_text("fine\n")  # the case's own directory: allowed

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", reach_out)
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case")
    assert finding.kind == "build: tried to change files outside its directory"
    assert [w.split()[0] for w in outcome.writes] == ["open", "unlink", "replace", "rmtree"]
    assert (outside / "keep").read_text() == "keep\n" and not (outside / "new").exists()


def test_an_unlocated_problem_is_a_failure(monkeypatch, tmp_path):
    from fabricgen.basics.errors import IntentError, Problem

    def refuse(*args, **kwargs):
        raise IntentError([Problem("somewhere", file="intent.yaml", line=1), Problem("nowhere", field=("gpus",))])

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", refuse)
    outcome, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case")
    assert outcome.exit_code == 2
    assert finding.kind == "build: a problem names no file or device (intent: gpus: nowhere)"


def test_raw_control_characters_on_the_terminal_are_a_failure(monkeypatch, tmp_path):
    monkeypatch.setattr("fabricgen.compiler.pipeline.build", lambda *a, **k: sys.stdout.write("\x1b[2J") and exit(0))
    _, finding = run(fuzzing.intent_case("tiny-nxos.yaml", ()), tmp_path / "case")
    assert finding.kind == "build: printed raw control or format characters"


def test_a_campaign_keeps_going_shrinks_and_saves(monkeypatch, tmp_path):
    """Failures are collected, not raised one by one; each class is shrunk to the mutations that
    matter and saved with the command and what it printed."""
    from fabricgen.basics.errors import IntentError, Problem

    def refuse_boom(intent, output, jobs, catalog_dirs=(), on_phase=None):
        if b"BOOM" in Path(intent).read_bytes():
            raise IntentError(Problem("boom"))
        raise IntentError(Problem("fine", file=str(intent)))

    monkeypatch.setattr("fabricgen.compiler.pipeline.build", refuse_boom)
    campaign = fuzzing.Campaign("intent", tmp_path / "work", tmp_path / "report")
    campaign.limits = QUICK
    noise = (fuzzing.InsertKey(0, "a", "x"), fuzzing.InsertKey(0, "c", "y"))
    campaign.run(fuzzing.intent_case("tiny-nxos.yaml", noise))
    campaign.run(fuzzing.intent_case("tiny-nxos.yaml", (noise[0], fuzzing.InsertKey(0, "b", "BOOM"), noise[1])))
    with pytest.raises(AssertionError, match=r"1 failure class\(es\) in 2 intent cases"):
        campaign.finish()
    (failure,) = campaign.failures.values()
    assert [type(op) for op in failure.case.ops] == [fuzzing.InsertKey] and failure.case.ops[0].value == "BOOM"
    readme = (Path(failure.saved) / "README.txt").read_text()
    assert "command: fabricgen build" in readme and "exit code: 2" in readme and "boom" in readme
    report = json.loads((tmp_path / "report" / "intent.json").read_text())
    assert report["cases"] == 2 and report["exit_codes"] == {"build 2": 2}


# --- the campaigns --------------------------------------------------------------------------------


def campaign(generator: str, strategy, workdir: Path) -> None:
    limits = fuzzing.profile()
    runner = fuzzing.Campaign(generator, workdir)

    @settings(
        max_examples=limits.examples[generator],
        deadline=None,
        derandomize=limits.derandomize,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def one_case(case):
        runner.run(case)

    if fuzzing.seed() is not None:
        one_case = hypothesis_seed(fuzzing.seed())(one_case)

    one_case()
    runner.finish()


@pytest.mark.slow
def test_fuzz_intents(tmp_path):
    """Real intents with numbers, keys, anchors, merge keys, tags, bombs, naming patterns, raw
    control characters and invalid UTF-8 mutated in."""
    campaign("intent", fuzzing.intent_cases(), tmp_path)


def test_fuzz_yaml_bytes(tmp_path):
    """Whole intent files of random bytes or YAML punctuation."""
    campaign("yaml-bytes", fuzzing.yaml_bytes_cases(), tmp_path)


@pytest.mark.slow
def test_fuzz_catalogs(tmp_path):
    """A user catalog whose switch has hostile descriptions, patterns, management ports, platform,
    hwsku and numbers, or a catalog path outside the intent's directory (which must be refused)."""
    campaign("catalog", fuzzing.catalog_cases(), tmp_path)


@pytest.mark.slow
def test_fuzz_build_directories(bases, tmp_path):
    """A real build edited, truncated, pruned, added to, its devices renamed to hostile names (the
    manifest re-signed or not), given to diff, analyze --no-traffic, push (to 127.0.0.1:9) and bom
    compare."""
    campaign("build", fuzzing.build_cases(bases), tmp_path)


def test_fuzz_lab_state(bases, tmp_path):
    """`lab down` of a real build whose lab state file was forged: another lab's id, a path as the
    id, other labs' namespaces, another build's path, a link, a FIFO, a directory, an oversized or
    world-writable file, or any field set, dropped or added. The lab's kernel commands are recorded,
    not run; nothing but this lab's own may be removed, nothing at all on refusal."""
    campaign("lab-state", fuzzing.lab_state_cases(bases), tmp_path)


@pytest.mark.slow
def test_fuzz_exports(bases, tmp_path):
    """Every export format and `testplan` of a real build edited, pruned, renamed or re-signed as
    in test_fuzz_build_directories, with spreadsheet formulas where names and descriptions stand;
    no CSV written may hold a cell a spreadsheet would run."""
    campaign("exports", fuzzing.export_cases(bases), tmp_path)


def test_fuzz_device_answers(bases, tmp_path):
    """`verify` against switches answering hostile data: NAPALM answers of any value or type, a
    getter raising, counters going backwards, or SONiC command answers broken, poisoned with
    control characters or hundreds of MiB long (through the real SonicDriver). A failing getter is
    never a match; a huge answer is not read whole."""
    campaign("answers", fuzzing.answer_cases(bases), tmp_path)


def test_fuzz_results_files(plans, tmp_path):
    """`testplan check` of a real plan with perftest and nccl-tests/rccl-tests outputs edited:
    hostile text, bandwidths no link can carry, NaN, a FIFO, a directory, a link to /dev/zero, a
    60 MiB file, a --report aimed into the plan. Impossible input is refused at once; the plan is
    never changed."""
    campaign("results", fuzzing.results_cases(plans), tmp_path)


def test_fuzz_paths(bases, plans, tmp_path):
    """Every path option and argument of every command given a path of hostile parts (names past
    NAME_MAX in bytes, paths past PATH_MAX, `..`, control characters, names that read as options)
    ending in a FIFO, a directory, a file, a device, a loop or a dangling link, or under a file. A
    refusal is short and names the option; nothing changes when refused; a FIFO is never waited on."""
    campaign("paths", fuzzing.paths_cases(bases, plans), tmp_path)
