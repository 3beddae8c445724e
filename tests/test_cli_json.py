"""--json: one document on stdout in its documented shape (a pydantic model or typed dict that
forbids other keys), progress and problems on stderr; a refusal is the error document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter
from typer.testing import CliRunner

from fabricgen.basics.errors import ErrorDocument, ProblemJson
from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from tests.conftest import INTENTS

runner = CliRunner()
INTENT = INTENTS / "cisco-256-gpu.yaml"


def error_document(text: str) -> dict:
    """The document, checked against errors.ErrorDocument (its keys and types, no other key)."""
    document = json.loads(text)
    TypeAdapter(ErrorDocument).validate_python(document, strict=True)
    assert set(document) == set(ErrorDocument.__annotations__)
    for problem in document["problems"]:
        assert set(problem) == set(ProblemJson.__annotations__), problem
    return document


@pytest.fixture(scope="module")
def built_256(tmp_path_factory) -> Path:
    return build(INTENT, tmp_path_factory.mktemp("json") / "cisco-256")[1]


def test_validate_json_is_the_build_summary_without_files():
    from fabricgen.reports.build_summary import BuildSummary

    result = runner.invoke(app, ["validate", str(INTENT), "--json"])
    assert result.exit_code == 0, result.output
    summary = BuildSummary.model_validate_json(result.stdout)
    assert (summary.command, summary.fabric, summary.destination, summary.files) == ("validate", "cisco-256-gpu", None, None)
    # the white paper's backend: 32 DGX H100 nodes, 8 leaves, 4 spines, non-blocking
    assert (summary.backend.gpus, summary.backend.nodes, summary.backend.leaves, summary.backend.spines, summary.backend.leaf_ratio) == (256, 32, 8, 4, "1:1")
    backend = {(d.role, d.model): d.count for d in summary.devices if d.network == "backend"}
    assert backend[("leaf", "N9K-C9364D-GX2A")] == 8 and backend[("spine", "N9K-C9364D-GX2A")] == 4 and backend[("gpu-node", "DGX-H100")] == 32
    assert list(summary.seconds) == ["intent", "design", "addressing", "checks", "device configs"]


def test_build_json_names_what_it_wrote(tmp_path):
    from fabricgen.reports.build_summary import BuildSummary

    destination = tmp_path / "b"
    result = runner.invoke(app, ["build", str(INTENT), "-o", str(destination), "--json"])
    assert result.exit_code == 0, result.output
    summary = BuildSummary.model_validate_json(result.stdout)  # stdout holds the document and nothing else
    written = [p for p in destination.rglob("*") if p.is_file()]
    assert summary.command == "build" and summary.destination == str(destination)
    assert summary.files == len(written) and summary.bytes == sum(p.stat().st_size for p in written)
    assert any("PFC trigger" in note for note in summary.notes)  # the design's advisories, as `note:` lines in text
    assert "build: done" in result.stderr  # progress stays on stderr


@pytest.mark.parametrize("command", ["build", "validate"])
def test_a_refusal_with_json_is_the_error_document(write_intent, tmp_path, command):
    intent = write_intent("gpus: 256\nbackend:\n  mtu: jumbo\n  spine: {model: n9k-c9364d-gx2a}\n")
    args = [command, str(intent), "--json"] + (["-o", str(tmp_path / "b")] if command == "build" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    document = error_document(result.stdout)
    assert (document["ok"], document["exit_code"], document["phase"]) == (False, 2, "intent")
    by_field = {p["field"]: p for p in document["problems"]}
    assert by_field["backend.mtu"]["file"] == str(intent) and by_field["backend.mtu"]["line"] == 3
    assert "integer" in by_field["backend.mtu"]["message"]
    # the schema phase stops before catalog references: the wrong-case spine is not reached yet
    assert len(document["problems"]) == 1 and "intent: 1 problem\n" in result.stderr  # the text report stays on stderr
    assert not (tmp_path / "b").exists()


def test_the_error_document_escapes_what_the_input_holds(write_intent):
    intent = write_intent('gpus: 256\nbackend:\n  "col\\x1b[31mour": blue\n')
    result = runner.invoke(app, ["validate", str(intent), "--json"])
    document = error_document(result.stdout)
    assert "\x1b" not in result.stdout and "\\\\x1b" in result.stdout  # printable's escape, JSON-encoded
    assert document["problems"][0]["field"] == "backend.col\\x1b[31mour"


def test_a_command_line_mistake_with_json_is_the_error_document():
    result = runner.invoke(app, ["validate", str(INTENT), "--json", "--format", "yaml"])
    assert result.exit_code == 2
    document = error_document(result.stdout)
    assert document["phase"] == "usage" and "--format" in document["problems"][0]["message"]
    assert document["problems"][0]["hint"] == "see root validate --help"  # CliRunner's program name
    without = runner.invoke(app, ["validate", str(INTENT), "--format", "yaml"])
    assert without.exit_code == 2 and without.stdout == ""


def test_releases_json_holds_the_support_tables_cells():
    from fabricgen.catalog.releases import ReleaseSupport

    document = ReleaseSupport.model_validate_json(runner.invoke(app, ["releases", "--json"]).stdout)
    tables = runner.invoke(app, ["releases"]).stdout
    assert [f.name for f in document.flavours][:3] == ["eos", "nxos", "sonic"]  # the NOS packages' own, in name order
    for flavour in document.flavours:
        table = tables.split(f"(`{flavour.name}`, default {flavour.default})", 1)[1].split("\n\n", 2)[1]  # this flavour's table
        for feature in flavour.features:
            assert list(feature.releases) == flavour.releases
            row = next(line for line in table.splitlines() if line.startswith(f"| {feature.feature} |"))
            cells = [cell.strip() for cell in row.split("|")[2 : 2 + len(flavour.releases)]]
            assert cells == [{"yes": "yes", "no": "-"}.get(value, value) for value in feature.releases.values()]


def test_analyze_json_is_its_schema(built_256):
    from fabricgen.analysis.schema import AnalysisOutput

    result = runner.invoke(app, ["analyze", str(built_256), "--no-traffic", "--json"])
    assert result.exit_code == 0, result.output
    document = AnalysisOutput.model_validate_json(result.stdout)
    assert (document.fabric.leaves, document.fabric.spines) == (8, 4)
    refused = runner.invoke(app, ["analyze", str(built_256), "--json", "--concurrent-jobs", "100"])
    assert refused.exit_code == 2 and error_document(refused.stdout)["phase"] == "analyze"


def test_bom_compare_and_diff_take_json_as_their_format(built_256, tmp_path):
    reference = tmp_path / "ref.csv"
    reference.write_text("pid,quantity\nN9K-C9364D-GX2A,12\n")
    flag = runner.invoke(app, ["bom", "compare", str(built_256), str(reference), "--json"])
    formatted = runner.invoke(app, ["bom", "compare", str(built_256), str(reference), "--format", "json"])
    assert flag.exit_code == formatted.exit_code == 1 and flag.stdout == formatted.stdout and json.loads(flag.stdout)["rows"]
    diff = runner.invoke(app, ["diff", str(built_256), str(built_256), "--json"])
    assert diff.exit_code == 0 and json.loads(diff.stdout)["changed"] is False


def test_testplan_check_json_on_stdout_and_in_a_file(built_256, tmp_path):
    from fabricgen.testplan import write_plan
    from fabricgen.testplan.check import CheckJson

    plan = tmp_path / "plan"
    write_plan(built_256, plan)
    results = tmp_path / "results"
    results.mkdir()
    (results / "pair0001.txt").write_text((Path(__file__).parent / "data" / "testplan" / "pair0001.txt").read_text())
    result = runner.invoke(app, ["testplan", "check", str(plan), str(results / "pair0001.txt"), "--json", "--json-report", str(tmp_path / "out" / "r.json")])
    assert result.exit_code == 0, result.output
    document = CheckJson.model_validate_json(result.stdout)
    assert document.passed and [p.pair for p in document.pairs] == ["pair0001"]
    assert (tmp_path / "out" / "r.json").read_text() == result.stdout


def test_lab_verify_and_run_json(monkeypatch, tmp_path):
    # no lab here (root, FRR): the session returns what a lab would; the shapes and the escaping
    # of what devices answer are what is tested
    from fabricgen.lab import report, session
    from fabricgen.lab.plan import LabPlan
    from fabricgen.lab.session import FailureReport, RunReport, UpReport
    from fabricgen.lab.verify import Check, Verification

    verification = Verification(
        [Check("LLDP", ("device", "cable ends", "as planned", "wrong or missing"), [("leaf1", 2, 1, "Eth1 sees \x1b[2Jnobody")], False, "1/2", 0.5, [False])],
        True,
        1.25,
    )
    monkeypatch.setattr(session, "check", lambda build_dir, timeout, progress: verification)
    result = runner.invoke(app, ["lab", "verify", str(tmp_path), "--json"])
    assert result.exit_code == 1
    document = report.VerificationJson.model_validate_json(result.stdout)
    assert document.passed is False and document.checks[0].rows == [["leaf1", 2, 1, "Eth1 sees \\x1b[2Jnobody"]]
    assert "\x1b" not in result.stdout

    plan = LabPlan(tmp_path, "l1", "backend", "small", {}, {}, [], [], {}, {}, {}, [])
    up = UpReport(plan, 3.5, True, 0.8, 12, 120.0, [])
    run = RunReport(up, [("after up", verification, None), ("be-spine01 down", verification, FailureReport("fail", "be-spine01", True, 0.4, 300))])
    monkeypatch.setattr(session, "run", lambda build_dir, network, timeout, secrets_file, progress, with_management=False: run)
    result = runner.invoke(app, ["lab", "run", str(tmp_path), "--json", "--report", str(tmp_path / "r" / "lab.md")])
    assert result.exit_code == 1
    document = report.RunJson.model_validate_json(result.stdout)
    assert [r.name for r in document.rounds] == ["after up", "be-spine01 down"] and document.rounds[1].failure.bfd_detect_ms == 300
    assert document.up.lab_id == "l1" and (tmp_path / "r" / "lab.md").exists()


def test_push_json_escapes_and_counts():
    from fabricgen.push.inventory import Target
    from fabricgen.push.report import PushJson, push_json
    from fabricgen.push.rollout import DeviceResult, Outcome, Rollout

    def target(name):
        return Target(name, "leaf", "backend", "nxos", "10.0.0.1", "nxos", Path("configs") / f"{name}.cfg", ())

    rollout = Rollout(
        [
            DeviceResult(target("leaf1"), Outcome.would_change, "preflight", "-  mtu 1500\n+  mtu 9216\n", "", 1.2),
            DeviceResult(target("leaf2"), Outcome.failed, "preflight", "", "refused: \x1b[31mno", 0.3),
        ],
        committed=False,
    )
    document = PushJson.model_validate(json.loads(json.dumps(push_json(rollout).model_dump(mode="json"))))
    assert document.counts == {"would change": 1, "failed": 1} and not document.ok
    assert document.devices[0].diff_lines == 2 and document.devices[1].message == "refused: \\x1b[31mno"


def test_verify_json_is_its_shape():
    from fabricgen.verify.findings import ERROR, Finding
    from fabricgen.verify.report import Verification, VerifyJson, render_json

    result = Verification("b", [Finding("ports", ERROR, "leaf1", "Ethernet16", "down")], [], ["a note"], 0.0)
    document = VerifyJson.model_validate_json(render_json(result))
    assert document.ok is False and document.counts == {"error": 1, "warning": 0, "info": 0}
