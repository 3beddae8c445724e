"""`fabricgen bom compare`: a build's bill of materials against a reference list, row by row."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.reports.bom_compare import BomCompareError, compare_bom

DATA = Path(__file__).parent / "data"
BOM_HEADER = "section,pid,description,quantity,length_m,basis,alternatives\n"
runner = CliRunner()

# A small build: backend switches, optics counted per cabled cage (with the alternatives a
# whole-switch count would give) and trunk cables split by standard length.
BUILD = BOM_HEADER + textwrap.dedent(
    """\
    GPU nodes,DGX-H100,NVIDIA DGX H100,8,,one per GPU node,
    Backend network,N9K-C9364D-GX2A,Nexus 9364D-GX2A,10,,one per switch,
    Backend network,QDD-400G-DR4-S,400G DR4,128,,one per cabled switch cage: 64 leaf uplinks + 64 spine ports,every 400G cage of the 2 spines=128; every 400G cage of the 8 leaves=64; every 400G cage of all 10 switches=640
    Backend network,CB-M12-M12-SMF,MPO trunk,40,3,one per link,
    Backend network,CB-M12-M12-SMF,MPO trunk,24,5,one per link,
    Management platform,ND-CLUSTER-L4,Nexus Dashboard,1,,one per fabric,
    """
)
EQUAL_REFERENCE = textwrap.dedent(
    """\
    section,pid,description,quantity
    GPU nodes,DGX-H100,,8
    Backend network,N9K-C9364D-GX2A,,10
    Backend network,QDD-400G-DR4-S,,128
    Backend network,CB-M12-M12-SMF,,64
    Management platform,ND-CLUSTER-L4,,1
    """
)


def compare(tmp_path: Path, reference: str, build: str = BUILD, *options: str):
    """Run the command on a build dir holding `build` as bom.csv and a reference file; -> (result, reference path)."""
    build_dir = tmp_path / "build"
    build_dir.mkdir(exist_ok=True)
    (build_dir / "bom.csv").write_text(build, encoding="utf-8")
    path = tmp_path / "reference.csv"
    path.write_text(reference, encoding="utf-8")
    return runner.invoke(app, ["bom", "compare", str(build_dir), str(path), *options]), path


def row_of(output: str, pid: str) -> list[str]:
    """The cells of the text table's row for `pid`."""
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.strip()[1:-1].split("│")]
        if len(cells) == 6 and cells[1] == pid:
            return cells
    raise AssertionError(f"no row for {pid} in:\n{output}")


def test_equal_lists_exit_0(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE)
    assert result.exit_code == 0, result.output
    assert "5 rows: 5 equal, 0 differ" in result.stdout
    assert "\x1b[" not in result.stdout, "no colour off a terminal"


def test_cable_rows_of_every_length_are_summed(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE)
    assert row_of(result.stdout, "CB-M12-M12-SMF")[2:5] == ["64", "64", "0"]


def test_a_delta_shows_sign_and_the_builds_basis(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("N9K-C9364D-GX2A,,10", "N9K-C9364D-GX2A,,12").replace("DGX-H100,,8", "DGX-H100,,5"))
    assert result.exit_code == 1
    assert row_of(result.stdout, "N9K-C9364D-GX2A")[2:] == ["10", "12", "-2", "this build counts one per switch"]
    assert row_of(result.stdout, "DGX-H100")[2:] == ["8", "5", "+3", "this build counts one per GPU node"]
    assert "5 rows: 3 equal, 2 differ" in result.stdout


def test_a_cell_the_build_neutralised_for_spreadsheets_reads_as_it_was_meant(tmp_path):
    # fabricgen writes a cell starting with = + - @ with a quote in front (fabricgen/basics/csv_format.py)
    build = BUILD.replace("8,,one per GPU node,", "8,,'@one per GPU node,")
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("DGX-H100,,8", "DGX-H100,,5"), build)
    assert row_of(result.stdout, "DGX-H100")[2:] == ["8", "5", "+3", "this build counts @one per GPU node"]


def test_a_reference_counting_another_way_is_named(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("QDD-400G-DR4-S,,128", "QDD-400G-DR4-S,,640"))
    assert result.exit_code == 1
    assert row_of(result.stdout, "QDD-400G-DR4-S")[4:] == [
        "-512",
        "reference counts every 400G cage of all 10 switches (640); this build counts one per cabled switch cage: 64 leaf uplinks + 64 spine ports",
    ]


def test_parts_on_one_side_only(tmp_path):
    reference = EQUAL_REFERENCE.replace("Management platform,ND-CLUSTER-L4,,1\n", "OOB management network,GLC-TE,,2\n")
    result, _ = compare(tmp_path, reference)
    assert result.exit_code == 1
    assert row_of(result.stdout, "GLC-TE") == ["OOB management network", "GLC-TE", "", "2", "-2", "not in this build"]
    assert row_of(result.stdout, "ND-CLUSTER-L4") == ["Management platform", "ND-CLUSTER-L4", "1", "", "+1", "not in the reference"]
    lines = result.stdout.splitlines()
    assert [i for i, line in enumerate(lines) if "GLC-TE" in line] < [i for i, line in enumerate(lines) if "ND-CLUSTER-L4" in line], (
        "reference rows first, then the build's extras"
    )


def test_a_part_filed_under_another_section_still_matches(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("Management platform,ND-CLUSTER-L4", "Nexus Dashboard,ND-CLUSTER-L4"))
    assert result.exit_code == 0, result.stdout
    assert row_of(result.stdout, "ND-CLUSTER-L4") == [
        "Nexus Dashboard",
        "ND-CLUSTER-L4",
        "1",
        "1",
        "0",
        "this build lists it under 'Management platform'",
    ]


def test_sections_match_whatever_their_case_and_spacing(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("Backend network", "  BACKEND   Network "))
    assert result.exit_code == 0, result.stdout
    assert "lists it under" not in result.stdout


def test_a_pid_in_two_unmatched_sections_is_not_guessed(tmp_path):
    build = BOM_HEADER + "Frontend,QSFP-100G-DR-S,,10,,,\nOOB,QSFP-100G-DR-S,,4,,,\n"
    result, _ = compare(tmp_path, "section,pid,quantity\nConverged frontend,QSFP-100G-DR-S,10\n", build)
    assert result.exit_code == 1
    assert "3 rows: 0 equal, 3 differ" in result.stdout


def test_a_reference_without_sections_compares_by_pid(tmp_path):
    build = BUILD + "OOB management network,QSFP-100G-DR-S,,24,,,\nFrontend network,QSFP-100G-DR-S,,224,,,\n"
    reference = "pid,quantity\nQSFP-100G-DR-S,248\nDGX-H100,8\nN9K-C9364D-GX2A,10\nQDD-400G-DR4-S,128\nCB-M12-M12-SMF,64\nND-CLUSTER-L4,1\n"
    result, _ = compare(tmp_path, reference, build)
    assert result.exit_code == 0, result.stdout
    assert "compared by PID only" in result.stdout
    assert row_of(result.stdout, "QSFP-100G-DR-S")[2:5] == ["248", "248", "0"]


def test_markdown_is_a_pipe_table(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("N9K-C9364D-GX2A,,10", "N9K-C9364D-GX2A,,12"), BUILD, "--format", "markdown")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "| section | pid | build | reference | delta | cause |" in lines
    assert "| Backend network | N9K-C9364D-GX2A | 10 | 12 | -2 | this build counts one per switch |" in lines
    assert lines[-1] == "5 rows: 4 equal, 1 differ"


def test_json_lists_rows_and_a_summary(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE.replace("GPU nodes,DGX-H100,,8\n", ""), BUILD, "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["summary"] == {"rows": 5, "equal": 4, "differ": 1}
    assert document["rows"][-1] == {
        "section": "GPU nodes",
        "pid": "DGX-H100",
        "build": 8,
        "reference": None,
        "delta": 8,
        "equal": False,
        "cause": "not in the reference",
        "build_section": None,
    }


def test_comments_blank_lines_and_a_byte_order_mark_are_fine(tmp_path):
    reference = "\ufeff# from the vendor quote of 2025-01-10\n\n" + EQUAL_REFERENCE.replace("\nBackend", "\n# backend follows\n\nBackend", 1)
    result, _ = compare(tmp_path, reference)
    assert result.exit_code == 0, result.output


# Bad input: exit 2, every bad row named as file:line: field, no traceback.
def test_every_bad_reference_row_is_reported_at_once(tmp_path):
    reference = textwrap.dedent(
        """\
        # line 1 is a comment: line numbers still count it
        section,pid,quantity
        Backend network,QDD-400G-DR4-S,twelve
        Backend network,,4
        Backend network,N9K-C9364D-GX2A,12
        backend  network,N9K-C9364D-GX2A,2
        GPU nodes,DGX-H100,-1
        """
    )
    result, path = compare(tmp_path, reference)
    assert result.exit_code == 2, result.output
    assert "bom compare: 4 problems" in result.stderr
    assert f"{path}:3: quantity: 'twelve' is not a whole number >= 0" in result.stderr
    assert f"{path}:4: pid: empty" in result.stderr
    assert f"{path}:6: pid: 'N9K-C9364D-GX2A' is listed twice in section 'backend  network' (first on line 5)" in result.stderr
    assert f"{path}:7: quantity: '-1' is not a whole number >= 0" in result.stderr
    assert "fix: write the count in digits" in result.stderr
    assert "Traceback" not in result.output


def test_a_reference_without_a_quantity_column(tmp_path):
    result, path = compare(tmp_path, "pid,qty\nDGX-H100,8\n")
    assert result.exit_code == 2
    assert f"{path}:1: header: no 'quantity' column (have: pid, qty)" in result.stderr


def test_a_build_without_a_bill_of_materials(tmp_path):
    reference = tmp_path / "reference.csv"
    reference.write_text(EQUAL_REFERENCE)
    result = runner.invoke(app, ["bom", "compare", str(tmp_path), str(reference)])
    assert result.exit_code == 2
    assert f"{tmp_path / 'bom.csv'}: no bill of materials here" in result.stderr
    assert "Traceback" not in result.output


def test_a_bom_csv_fabricgen_did_not_write(tmp_path):
    result, _ = compare(tmp_path, EQUAL_REFERENCE, "part,count\nDGX-H100,8\n")
    assert result.exit_code == 2
    assert "bom.csv: not a fabricgen bill of materials (no 'section', 'pid', 'quantity' column)" in result.stderr
    assert "rebuild with this version" in result.stderr


def test_a_reference_too_large_is_refused(tmp_path):
    result, path = compare(tmp_path, "pid,quantity\n" + "X,1\n" * (3 * 1024 * 1024))
    assert result.exit_code == 2
    assert f"{path}: the reference is 12,582,925 bytes; the limit is 4,194,304" in result.stderr


# The whitepaper's components table, transcribed into tests/data (reviewed against the paper's text).
WHITEPAPER = {
    # (section, pid): (256-GPU cluster, 512-GPU cluster)
    ("GPU nodes", "DGX-H100 / DGX-H200"): (32, 64),
    ("Management nodes", "UCSC-C225-M8S"): (8, 8),
    ("Storage nodes", "AFF-A90"): (4, 4),
    ("Backend network", "N9K-C9364D-GX2A"): (12, 24),
    ("Backend network", "QDD-400G-DR4-S"): (768, 1536),
    ("Backend network", "CB-M12-M12-SMF"): (512, 1024),
    ("Converged frontend and storage network", "N9K-C9364D-GX2A"): (2, 4),
    ("Converged frontend and storage network", "N9K-C93600CD-GX"): (8, 10),
    ("Converged frontend and storage network", "QDD-400G-DR4-S"): (128, 256),
    ("Converged frontend and storage network", "CB-M12-M12-SMF"): (128, 256),
    ("Converged frontend and storage network", "QSFP-100G-DR-S"): (224, 280),
    ("Converged frontend and storage network", "CB-LC-LC-SMF"): (224, 280),
    ("OOB management network", "N9K-C93108TC-FX3"): (4, 8),
    ("OOB management network", "QSFP-100G-DR-S"): (24, 48),
    ("OOB management network", "CB-LC-LC-SMF"): (24, 48),
    ("OOB management network", "CAB-CAT5E/6E"): (192, 384),
    ("OOB management network", "C8300-1N1S-4T2X"): (2, 4),
    ("OOB management network", "NIM-24A"): (2, 4),
    ("OOB management network", "GLC-TE"): (2, 4),
    ("Management platform", "ND-CLUSTER-L4"): (1, 1),
}


@pytest.mark.parametrize("gpus", [256, 512])
def test_whitepaper_references_hold_the_papers_table(tmp_path, gpus):
    # Compare the reference with a build listing nothing but one unrelated part: every reference
    # row then comes back as "not in this build" with the reference's quantity, in file order.
    (tmp_path / "bom.csv").write_text(BOM_HEADER + "X,NOT-A-PART,,1,,,\n")
    rows = compare_bom(tmp_path, DATA / f"whitepaper-{gpus}-gpu.csv").rows[:-1]
    gpu_pid = "DGX-H100" if gpus == 256 else "DGX-H200"
    expected = [(section, gpu_pid if pid.startswith("DGX") else pid, quantities[0 if gpus == 256 else 1]) for (section, pid), quantities in WHITEPAPER.items()]
    assert [(row.section, row.pid, row.reference) for row in rows] == expected


def test_whitepaper_reference_against_a_build_of_itself(tmp_path):
    # A build that lists exactly the paper's parts compares equal: the reader and the matcher agree.
    text = (DATA / "whitepaper-512-gpu.csv").read_text(encoding="utf-8")
    build = BOM_HEADER + "".join(
        f'"{section}",{pid},,{quantities[1]},,,\n'
        for (section, pid), quantities in WHITEPAPER.items()
        for pid in [("DGX-H200" if pid.startswith("DGX") else pid)]
    )
    result, _ = compare(tmp_path, text, build)
    assert result.exit_code == 0, result.stdout
    assert "20 rows: 20 equal, 0 differ" in result.stdout


def test_compare_bom_raises_a_typed_error(tmp_path):
    with pytest.raises(BomCompareError) as caught:
        compare_bom(tmp_path, tmp_path / "missing.csv")
    assert caught.value.phase == "bom compare"
    assert len(caught.value.problems) == 2, "the missing bom.csv and the missing reference, together"


def test_a_bad_row_in_the_builds_bom_csv_is_named(tmp_path):
    build = BUILD.replace("Backend network,N9K-C9364D-GX2A,Nexus 9364D-GX2A,10,", "Backend network,N9K-C9364D-GX2A,Nexus 9364D-GX2A,ten,")
    build = build.replace("all 10 switches=640", "all 10 switches")
    result, _ = compare(tmp_path, EQUAL_REFERENCE, build)
    assert result.exit_code == 2
    assert "bom.csv:3: quantity: 'ten' is not a whole number >= 0" in result.stderr
    assert "bom.csv:4: alternatives: 'every 400G cage of all 10 switches' is not 'label=N'" in result.stderr


@pytest.mark.parametrize("gpus", [256, 512])
def test_the_shipped_whitepaper_intents_match_the_papers_table_exactly(tmp_path, gpus):
    # acceptance of issue 19: with the intents as shipped (bom.counting: populate-all) every row
    # of the paper's components table is equal, and the build lists nothing the paper does not
    from fabricgen.compiler.pipeline import build

    intent = Path(__file__).parents[1] / "intents" / f"cisco-{gpus}-gpu.yaml"
    assert "bom: {counting: populate-all}" in intent.read_text()
    build(intent, tmp_path / "b")
    reference = DATA / f"whitepaper-{gpus}-gpu.csv"
    result = runner.invoke(app, ["bom", "compare", str(tmp_path / "b"), str(reference), "--format", "json"])
    assert result.exit_code == 0, result.stdout
    document = json.loads(result.stdout)
    assert document["summary"] == {"rows": 20, "equal": 20, "differ": 0}
    assert [(row["section"], row["build"]) for row in document["rows"]] == [
        (section, quantities[0 if gpus == 256 else 1]) for (section, _), quantities in WHITEPAPER.items()
    ]
    # the Nexus Dashboard row is matched across its section name; every other row by section and PID
    assert [row["pid"] for row in document["rows"] if row["build_section"]] == []


def test_a_populate_all_build_explains_a_cabled_reference(tmp_path):
    # the other way round: a populate-all build against a list counted by cabled cages and links
    # names the rule that gives the reference's number
    build = BOM_HEADER + (
        "Converged frontend and storage network,QSFP-100G-DR-S,100G DR,224,,"
        '"populate-all (every cage of a port group facing down or leaving the fabric): 224 on leaves (72 empty)",'
        "one per cabled switch cage=152; every QSFP28 100G cage of the 8 leaves=224\n"
    )
    result, _ = compare(tmp_path, "section,pid,quantity\nConverged frontend and storage network,QSFP-100G-DR-S,152\n", build)
    assert result.exit_code == 1
    assert row_of(result.stdout, "QSFP-100G-DR-S")[4] == "+72"
    assert "reference counts one per cabled switch cage (152)" in result.stdout
