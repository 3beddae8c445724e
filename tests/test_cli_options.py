"""The command line's options: choices as enumerations, analyze's --concurrent-jobs (and the
deprecated --jobs), shell completion, and a start-up that loads no compiler."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from fabricgen.analysis import loadbalance
from fabricgen.analysis.limits import Hash, Mode, Pattern, Placement, Scope
from fabricgen.cli import app
from fabricgen.cli.common import Network
from fabricgen.compiler.pipeline import build
from tests.conftest import INTENTS, REPO

runner = CliRunner()


def test_the_command_lines_choices_are_the_simulations():
    assert [p.value for p in Pattern] == list(loadbalance.PATTERNS)
    assert sorted(s.value for s in Scope) == sorted(loadbalance.SCOPES)
    assert [p.value for p in Placement] == list(loadbalance.PLACEMENTS)
    assert [h.value for h in Hash] == list(loadbalance.HASHES)
    assert [m.value for m in Mode] == list(loadbalance.MODES)
    from fabricgen.analysis.limits import NETWORKS

    assert [n.value for n in Network] == list(NETWORKS)


def test_inits_choices_are_the_intents():
    """fabricgen init's enumerations are written out (the CLI imports no model before a command
    runs): they must stay the intent model's Literals. The NOS is the registry's (--nos names them)."""
    from fabricgen.cli.init import DesignChoice, RoutingChoice
    from fabricgen.intent.template import DESIGNS, ROUTINGS

    assert [c.value for c in RoutingChoice] == list(ROUTINGS)
    assert [c.value for c in DesignChoice] == list(DESIGNS)


@pytest.mark.parametrize("command", [["analyze"], ["lab", "up"], ["lab", "run"]])
def test_network_choices_show_in_help(command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "--network <backend|frontend|storage>" in result.stdout
    refused = runner.invoke(app, [*command, "/nowhere", "--network", "mgmt"])
    assert refused.exit_code == 2 and "Invalid value for '--network'" in refused.stderr


@pytest.fixture(scope="module")
def built_256(tmp_path_factory):
    return build(INTENTS / "cisco-256-gpu.yaml", tmp_path_factory.mktemp("options") / "b")[1]


def test_concurrent_jobs_and_the_deprecated_jobs(built_256):
    args = ["analyze", str(built_256), "--scope", "cross-rail", "--seeds", "1", "--no-sweep", "--json", "-q"]
    new = runner.invoke(app, [*args, "--concurrent-jobs", "2"])
    old = runner.invoke(app, [*args, "--jobs", "2"])
    assert new.exit_code == old.exit_code == 0, new.output + old.output
    assert '"jobs": 2' in new.stdout and new.stdout == old.stdout
    assert new.stderr == "" and "--jobs is deprecated" in old.stderr and "--concurrent-jobs" in old.stderr
    assert "--jobs" not in runner.invoke(app, ["analyze", "--help"]).stdout.replace("--concurrent-jobs", "")  # hidden
    both = runner.invoke(app, [*args, "--jobs", "2", "--concurrent-jobs", "4"])
    assert both.exit_code == 2 and "--jobs (deprecated) and --concurrent-jobs disagree" in both.stderr


def test_concurrent_jobs_are_checked_against_the_fabric_also_without_traffic(built_256, monkeypatch):
    from fabricgen.analysis import capacity

    def never(*_args, **_kwargs):
        raise AssertionError("the capacity analysis ran before the refusal")

    monkeypatch.setattr(capacity, "capacity", never)
    result = runner.invoke(app, ["analyze", str(built_256), "--no-traffic", "--concurrent-jobs", "17"])
    assert result.exit_code == 2
    assert (
        "--concurrent-jobs 17: the fabric has 32 GPU nodes (256 GPUs), and every job needs at least 2 nodes (fix: use --concurrent-jobs 16 or fewer)"
        in result.stderr
    )


def complete(words: str) -> list[str]:
    """What bash completion offers after `words` (the last word being completed)."""
    parts = words.split(" ")
    result = runner.invoke(
        app, [], prog_name="fabricgen",
        env={"_FABRICGEN_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)},
    )  # fmt: skip
    return result.stdout.split()


def test_shell_completion_offers_commands_and_choices():
    assert "analyze" in complete("fabricgen ana")
    assert complete("fabricgen analyze out/x --pattern ") == ["all-to-all", "ring", "permutation", "shift"]
    assert complete("fabricgen build x.yaml --format ") == ["text", "json", "github"]
    help_text = runner.invoke(app, ["--help"]).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text


def test_version_and_help_load_no_compiler():
    # what keeps `fabricgen --version` well under half a second: neither the compiler, the
    # analysis (numpy) nor the drivers are imported to print it or the help
    probe = (
        "import sys, runpy; sys.argv = ['fabricgen', %r]\n"
        "try:\n    runpy.run_module('fabricgen', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('fabricgen.compiler.pipeline', 'fabricgen.compiler.design', 'numpy', 'matplotlib', 'napalm', 'networkx', 'jinja2')))\n"
        "print('HEAVY', heavy)\n"
    )
    for option in ("--version", "--help"):
        result = subprocess.run([sys.executable, "-c", probe % option], capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
        assert "HEAVY []" in result.stdout, result.stdout + result.stderr
