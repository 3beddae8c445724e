"""Shell completion: `fabricgen --show-completion SHELL` prints SHELL's script whatever shell runs
fabricgen, `--install-completion SHELL` installs SHELL's, and each script parses in its shell
where that shell is installed (zsh: scripts/test.sh installs it; fish is optional)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from fabricgen.cli import SHELLS, app

runner = CliRunner()

# What only each shell's script has (typer's templates in typer/_completion_shared.py)
MARKS = {
    "bash": "complete -o default -F _fabricgen_completion fabricgen",
    "zsh": "#compdef fabricgen",
    "fish": "complete --command fabricgen",
    "powershell": "Register-ArgumentCompleter -Native -CommandName fabricgen",
    "pwsh": "Register-ArgumentCompleter -Native -CommandName fabricgen",
}
# the command that checks a script's syntax without running it
PARSERS = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}


def show(*args: str):
    return runner.invoke(app, list(args), prog_name="fabricgen")


def test_every_shell_typer_writes_for_has_a_mark():
    assert set(SHELLS) == set(MARKS)


@pytest.mark.parametrize("shell", sorted(MARKS))
def test_show_completion_prints_the_script_of_the_shell_asked_for(shell):
    for args in (("--show-completion", shell), (f"--show-completion={shell}",)):
        result = show(*args)
        assert result.exit_code == 0, result.output
        assert MARKS[shell] in result.stdout, f"{args}: {result.stdout[:200]}"
        others = {mark for name, mark in MARKS.items() if mark != MARKS[shell]}
        assert not any(mark in result.stdout for mark in others), f"{args} printed another shell's script"


@pytest.mark.parametrize("shell", sorted(PARSERS))
def test_each_script_parses_in_its_shell(shell, tmp_path):
    if shutil.which(PARSERS[shell][0]) is None:
        pytest.skip(f"{shell} is not installed (apt-get install {shell})")
    script = tmp_path / f"fabricgen.{shell}"
    script.write_text(show("--show-completion", shell).stdout)
    checked = subprocess.run([*PARSERS[shell], str(script)], capture_output=True, text=True, timeout=30, check=False)
    assert checked.returncode == 0, checked.stderr


def test_a_shell_typer_has_no_script_for_is_refused():
    for args in (("--show-completion", "tcsh"), ("--show-completion=tcsh",), ("--install-completion", "csh")):
        result = show(*args)
        assert result.exit_code == 2, args
        assert "is not a shell fabricgen writes completion for" in result.stderr and "zsh" in result.stderr
        assert "complete" not in result.stdout


def test_a_command_after_the_flag_stays_a_command():
    # `fabricgen --show-completion build`: the flag alone (the shell fabricgen runs from), not a refusal
    result = show("--show-completion", "build")
    assert result.exit_code == 0 and "fabricgen" in result.stdout


def test_install_completion_installs_the_shell_asked_for(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    result = runner.invoke(app, ["--install-completion", "zsh"], prog_name="fabricgen", env={"HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert "zsh completion installed" in result.stdout
    assert MARKS["zsh"] in (home / ".zfunc" / "_fabricgen").read_text()
    assert not (home / ".bashrc").exists()
    result = runner.invoke(app, ["--install-completion=fish"], prog_name="fabricgen", env={"HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert MARKS["fish"] in (home / ".config" / "fish" / "completions" / "fabricgen.fish").read_text()


def test_the_help_says_a_shell_may_be_named():
    help_text = show("--help").stdout
    assert "--show-completion" in help_text and "named after it" in help_text
