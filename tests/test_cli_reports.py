"""Report files a command is asked for (--report, --json-report): written atomically through
cli.common.write_report, their directories created; a path that cannot be made is exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from tests.conftest import INTENTS

runner = CliRunner()


@pytest.fixture(scope="module")
def built_256(tmp_path_factory):
    return build(INTENTS / "cisco-256-gpu.yaml", tmp_path_factory.mktemp("reports") / "b")[1]


def test_analyze_report_in_a_new_directory(built_256, tmp_path):
    report = tmp_path / "newdir" / "deeper" / "x.md"
    result = runner.invoke(app, ["analyze", str(built_256), "--no-traffic", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert report.read_text().startswith("# Fabric analysis: backend")
    assert f"report: {report}" in result.stdout
    assert sorted(p.name for p in report.parent.iterdir()) == ["x.md"]  # no staging file left behind


def test_analyze_report_with_figures_in_a_new_directory(built_256, tmp_path):
    report = tmp_path / "new" / "a.md"
    result = runner.invoke(app, ["analyze", str(built_256), "--scope", "cross-rail", "--seeds", "1", "--no-sweep", "--report", str(report), "-q"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in report.parent.iterdir()) == sorted(["a.md"] + [f"a-{n}.{k}" for n in ("fct-stretch", "link-load") for k in ("png", "svg")])


def test_write_report_makes_the_directories_and_refuses_a_file_in_the_way(tmp_path, capsys):
    import typer

    from fabricgen.cli.common import write_report

    write_report(tmp_path / "a" / "b" / "r.md", b"report\n")
    assert (tmp_path / "a" / "b" / "r.md").read_bytes() == b"report\n"
    (tmp_path / "file").write_text("")
    with pytest.raises(typer.Exit) as caught:
        write_report(tmp_path / "file" / "sub" / "r.md", b"x")
    assert caught.value.exit_code == 2
    assert f"output: 1 problem\n  {tmp_path / 'file' / 'sub'}: cannot create the directory: " in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == ""
