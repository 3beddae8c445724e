"""Shared fixtures: the repository's intents, throwaway intents, compiled whitepaper fabrics."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import typer.testing

from fabricgen.compiler.pipeline import Build, build, compile_intent

# typer's CliRunner builds click's command tree from the app on every invoke (20 to 100 ms, the
# larger figure on a loaded machine); the suite runs the command line a few thousand times, and
# the tree of one app is the same every time: built once per worker
typer.testing._get_command = functools.cache(typer.testing._get_command)

REPO = Path(__file__).resolve().parents[1]
INTENTS = REPO / "intents"


@pytest.fixture
def write_intent(tmp_path: Path) -> Callable[..., Path]:
    """write_intent("gpus: 256", name="x") -> path of a fresh intent file."""

    def write(text: str, name: str = "test-fabric") -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


def compile_text(path: Path) -> Build:
    return compile_intent(path)


@pytest.fixture(scope="session")
def shipped_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A build directory of a shipped intent (intents/<name>.yaml), written once per worker on
    first use and shared by every module that reads it (analyze, its failures)."""
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = tmp_path_factory.mktemp("shipped") / name
            build(INTENTS / f"{name}.yaml", made[name])
        return made[name]

    return get


@pytest.fixture(scope="session")
def whitepaper() -> dict[int, Build]:
    """The whitepaper's two clusters, compiled once for the session: {256: Build, 512: Build}."""
    return {gpus: compile_intent(INTENTS / f"cisco-{gpus}-gpu.yaml") for gpus in (256, 512)}


@pytest.fixture(scope="session")
def whitepaper_sonic(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Build]:
    """The same two intents with every switch on SONiC."""
    builds = {}
    directory = tmp_path_factory.mktemp("sonic-intents")
    for gpus in (256, 512):
        # the 512-GPU intent's EVPN leaves need SONiC's anycast gateway (SAG): master only; the
        # 256-GPU one stays on the default release
        release = ", nos_release: master" if gpus == 512 else ""
        text = (INTENTS / f"cisco-{gpus}-gpu.yaml").read_text().replace("nos: nxos", f"nos: sonic{release}")
        text = text.replace(f"N9K-C93108TC-FX3, nos: sonic{release}", "N9K-C93108TC-FX3, nos: nxos")  # no SONiC on the OOB switch
        path = directory / f"cisco-{gpus}-gpu-sonic.yaml"
        path.write_text(text.replace(f"name: cisco-{gpus}-gpu", f"name: cisco-{gpus}-gpu-sonic"))
        builds[gpus] = compile_intent(path)
    return builds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that boot a lab (tests.test_lab.needs_lab, also the SONiC driver, push and verify
    modules) carry the `lab` marker; with `slow` (pyproject.toml), `make test-fast` runs
    `-m "not lab and not slow"` (docs/testing.md)."""
    for item in items:
        if any(mark.name == "skipif" and LAB_SKIP_REASON in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers()):
            item.add_marker(pytest.mark.lab)

    # The streams' tests first, so xdist starts every stream at once (LAB_STREAMS below); in the
    # shared lab's stream the tests with labs of their own (tests/test_chassis_lab.py,
    # tests/test_lab_management.py, MOVED_TESTS) come first: their labs are down before the
    # two-unit lab boots.
    order = list(LAB_STREAMS)

    def stream_rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::", 1)[0]
        if item.nodeid in MOVED_TESTS:
            return order.index(MOVED_TESTS[item.nodeid])
        return order.index(module) if module in LAB_STREAMS else len(order)

    items.sort(key=stream_rank)  # stable: each module's tests keep their order
    # labs will boot: a lab test is selected and none of its skip conditions holds (root, the tools)
    config.stash[RUNS_LABS] = any(
        item.nodeid.startswith(LAB_MODULES) and not any(mark.args and mark.args[0] for mark in item.iter_markers("skipif")) for item in items
    )


RUNS_LABS = pytest.StashKey[bool]()
NICE_BESIDE_LABS = 10


def pytest_runtest_setup(item: pytest.Item) -> None:
    """On xdist, while labs run, every test outside the lab modules (and what it starts) runs at
    nice 10: the streams (LAB_STREAMS) are the suite's critical path, and their boots and
    convergence get the CPU first; the other worker soaks up what they leave. The streams' tests,
    their fixtures and their daemons run at normal priority. Linux's nice is per thread: this sets the thread that
    runs tests and forks their processes."""
    if "PYTEST_XDIST_WORKER" not in os.environ or not item.config.stash.get(RUNS_LABS, False):
        return
    wanted = 0 if item.nodeid.startswith(LAB_MODULES) else NICE_BESIDE_LABS
    with contextlib.suppress(OSError):  # back to 0 needs root, which the lab tests have
        if os.getpriority(os.PRIO_PROCESS, 0) != wanted:
            os.setpriority(os.PRIO_PROCESS, 0, wanted)


@pytest.hookimpl(trylast=True)  # after pytest's own teardown: the module fixtures on the lab (sshd targets) go first
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The two-unit lab goes down after the last test of its stream, not at the end of the
    session: idle, its BFD sessions alone cost about a quarter of a core that the tests after it
    on this worker want."""
    if _shared_lab_down and (nextitem is None or nextitem.nodeid.split("::", 1)[0] not in SHARED_LAB_USERS):
        _shared_lab_down.pop()()


# The modules that boot labs or servers, in streams: on xdist (scripts/test.sh) each stream runs on
# a worker of its own, its tests one after another, the streams beside each other (at most two
# labs at once, of different builds), while the other workers take the other tests one by one.
# Each lab test of tests/test_lab.py boots its own lab; the shared-lab stream is
# tests/test_chassis_lab.py's and tests/test_lab_management.py's labs (and MOVED_TESTS'), then the
# session's two-unit lab (two_unit_lab) for the modules that use it; the NetBox stream is the
# modules that start a real NetBox (PostgreSQL, Redis, gunicorn: tests/netbox_server.py), apart
# from the labs: minutes of CPU of their own.
SHARED_LAB_USERS = ("tests/test_lab_lldp.py", "tests/test_push_sonic.py", "tests/test_sonic_driver.py")
NETBOX_MODULES = ("tests/test_netbox_server.py", "tests/test_netbox_live.py")
LAB_STREAMS = {
    "tests/test_lab.py": "own labs",
    # their own labs, in the shared-lab stream before that lab boots
    "tests/test_chassis_lab.py": "shared lab",
    "tests/test_lab_management.py": "shared lab",
    **dict.fromkeys(SHARED_LAB_USERS, "shared lab"),
    **dict.fromkeys(NETBOX_MODULES, "netbox"),
}
# Tests of tests/test_lab.py that run in the shared-lab stream (node id -> the module whose place in
# that stream they take), so that both lab streams take about as long: each boots a lab of its own
# and uses no fixture of its module's.
MOVED_TESTS = {
    "tests/test_lab.py::test_an_eos_fabric_boots_its_routing_twins_and_verifies": "tests/test_chassis_lab.py",
}
LAB_MODULES = tuple(LAB_STREAMS)


@pytest.hookimpl(optionalhook=True)  # xdist's hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (scripts/test.sh): a worker for each stream whose modules are in the tree, and one
    for every other test (three until the NetBox modules land, then four; on two cores: the
    streams wait on daemons and timers much of the time)."""
    return len({stream for module, stream in LAB_STREAMS.items() if (REPO / module).exists()}) + 1


@pytest.hookimpl(optionalhook=True)  # xdist's hook: `-p no:xdist` still runs the suite
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`scripts/test.sh` runs `--dist loadscope` with these scopes: each stream is one scope,
    every other test a scope of its own. The streams' tests come first (pytest_collection_modifyitems),
    so the streams start at once, each on a worker of its own. (xdist's loadgroup would say the same with marks, but
    it loses the marks with pytest 9.2: pytest-dev/pytest-xdist#1386.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LabStreams(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid in MOVED_TESTS:
                return LAB_STREAMS[MOVED_TESTS[nodeid]]
            return LAB_STREAMS.get(nodeid.split("::", 1)[0], nodeid)

    return LabStreams(config, log)


LAB_SKIP_REASON = "the lab needs root"


def build_refused(intent: Path) -> str:
    """Build `intent` with the CLI as a user would (in this process: tests/cli_runner.py); it must
    be refused (exit 2, no traceback, nothing written). Returns what it printed on stderr."""
    from tests.cli_runner import fabricgen

    out = intent.parent / "refused-out"
    result = fabricgen("build", intent, "-o", out)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and not out.exists()
    return result.stderr


VTYSH = shutil.which("vtysh")
needs_frr = pytest.mark.skipif(VTYSH is None, reason="Debian's frr is not installed (scripts/test.sh installs it when run as root)")


@pytest.fixture(scope="session")
def two_unit_lab(tmp_path_factory: pytest.TempPathFactory):
    """tests/lab/two-units.yaml built and its lab up and converged, once for every module that
    drives a lab leaf over SSH (the SONiC driver and push tests); down afterwards whatever happened.
    Its BGP keys come from the test process's FABRICGEN_SECRET_* (a push test sets the values it
    will push), else the lab generates them. Yields (build_dir, plan)."""
    from fabricgen.compiler.pipeline import build
    from fabricgen.lab import session
    from tests.test_lab import LAB_INTENT, leftovers

    # Without the intent's BGP key: the driver tests load the build's own files, placeholders and
    # all, and the push tests key their sessions themselves (test_push_sonic.py keyed_spines). The
    # lab with keys is tests/test_lab.py's.
    directory = tmp_path_factory.mktemp("two-unit-lab")
    intent = directory / "two-units.yaml"
    text = LAB_INTENT.read_text()
    assert "  bgp_security: {password: bgp-backend}\n" in text
    intent.write_text(text.replace("  bgp_security: {password: bgp-backend}\n", ""))
    build_dir = directory / "two-units"
    build(intent, build_dir)

    def down() -> None:
        session.down(build_dir)
        assert leftovers(build_dir) == []

    _shared_lab_down.append(down)  # pytest_runtest_teardown takes it down after its last user
    try:
        report = session.up(build_dir, timeout=60)
        assert report.converged, "the lab did not converge"
        yield build_dir, report.plan
    finally:
        if down in _shared_lab_down:
            _shared_lab_down.remove(down)
            down()


_shared_lab_down: list[Callable[[], None]] = []


# The lab tests' builds, for the modules that plan labs (tests/test_lab_plan.py) and those that boot
# them (tests/test_lab.py): built once per module.
LAB_INTENTS = Path(__file__).resolve().parent / "lab"


def _lab_build(tmp_path_factory: pytest.TempPathFactory, intent: str) -> Path:
    from fabricgen.compiler.pipeline import build

    destination = tmp_path_factory.mktemp("lab") / intent
    build(LAB_INTENTS / f"{intent}.yaml", destination)
    return destination


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/lab/two-units.yaml built."""
    return _lab_build(tmp_path_factory, "two-units")


@pytest.fixture(scope="module")
def three_tier_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/lab/three-tiers.yaml built."""
    return _lab_build(tmp_path_factory, "three-tiers")


@pytest.fixture(scope="module")
def planes_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/lab/two-planes.yaml built."""
    return _lab_build(tmp_path_factory, "two-planes")
