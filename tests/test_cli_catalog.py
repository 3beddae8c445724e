"""`fabricgen catalog list` and `catalog show MODEL`: every model of the catalog with its key facts
and the file that defines it; one entry in full; a user's file beside the built-in ones; an
unknown model refused with the one meant."""

from __future__ import annotations

import json

import yaml

from fabricgen.catalog import load_catalog
from fabricgen.catalog.listing import KINDS, CatalogEntry, CatalogListing
from fabricgen.cli.catalog import Kind
from tests import cli_runner
from tests.conftest import REPO

MY_SWITCH = """\
# my hardware
switches:
  MY-SW-32:
    description: a 32-port 800G test switch
    vendor: Test
    nos: [sonic]
    port_groups: [{count: 32, speed: 800G, form_factor: OSFP, lanes: 8, breakouts: [2x400G]}]
    interface_names: {sonic: {port: "Ethernet{lane}", breakout: "Ethernet{lane}"}}
"""


def catalog(*args) -> cli_runner.Completed:
    return cli_runner.fabricgen("catalog", *args, cwd=REPO)


def test_list_has_every_model_with_its_kind_and_file():
    result = catalog("list", "--json")
    assert result.returncode == 0, result.stderr
    rows = CatalogListing.model_validate(json.loads(result.stdout)).entries
    built = load_catalog()
    assert {(row.kind, row.pid) for row in rows} == {(kind, pid) for kind in KINDS for pid in getattr(built, kind)}
    for row in rows:
        assert row.source.builtin and row.source.file.startswith("fabricgen/catalog/data/")
        # the line holds the entry's PID as a key
        line = (REPO / row.source.file).read_text().splitlines()[row.source.line - 1]
        assert line.strip().startswith(f"{row.pid}:") or line.strip().startswith(f"'{row.pid}':"), (row.pid, line)


def test_list_facts_say_ports_per_speed_and_gpus_and_nics():
    rows = {row.pid: row for row in CatalogListing.model_validate(json.loads(catalog("list", "--json").stdout)).entries}
    assert rows["N9K-C9364D-GX2A"].facts == "64 x 400G QSFP-DD (2x200G, 4x100G); nxos, sonic; 2 RU"
    assert rows["N9K-C93600CD-GX"].facts.startswith("28 x 100G QSFP28 (4x25G, 4x10G) + 8 x 400G QSFP-DD")
    assert rows["DGX-H100"].facts.startswith("8 GPUs; backend 8 x 400G (ConnectX-7)")
    assert "backend 8 x 2 x 400G (ConnectX-8)" in rows["DGX-B300"].facts  # two ports per NIC, one per plane


def test_list_text_table_and_kind_filter():
    result = catalog("list", "--kind", "switches")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:5] == ["PID", "kind", "facts", "description", "defined"]
    assert all(" switches " in line for line in lines[1:] if line.strip())
    assert any(line.split()[0] == "N9K-C9364D-GX2A" and "fabricgen/catalog/data/" in line for line in lines[1:])
    nodes = CatalogListing.model_validate(json.loads(catalog("list", "--kind", "nodes", "--kind", "cables", "--json").stdout)).entries
    assert {row.kind for row in nodes} == {"nodes", "cables"}


def test_the_kind_choices_are_the_catalogs_sections():
    assert tuple(kind.value for kind in Kind) == KINDS


def test_show_prints_the_entry_in_full_and_where_it_comes_from():
    result = catalog("show", "N9K-C9364D-GX2A")
    assert result.returncode == 0, result.stderr
    header, body = result.stdout.split("\n", 1)
    assert header.startswith("# N9K-C9364D-GX2A (switches), built-in fabricgen/catalog/data/")
    entry = yaml.safe_load(body)["N9K-C9364D-GX2A"]
    assert entry == load_catalog().switches["N9K-C9364D-GX2A"].model_dump(mode="json")
    assert entry["port_groups"][0]["breakouts"] == ["2x200G", "4x100G"] and entry["max_ecmp_paths"] == 64  # defaults included
    shown = CatalogEntry.model_validate(json.loads(catalog("show", "DGX-H100", "--json").stdout))
    assert (shown.kind, shown.entry["gpus"], shown.source.builtin) == ("nodes", 8, True)


def test_a_users_file_is_listed_and_shown_as_theirs(tmp_path):
    mine = tmp_path / "my-hardware.yaml"
    mine.write_text(MY_SWITCH)
    rows = CatalogListing.model_validate(json.loads(catalog("list", "--kind", "switches", "--catalog", str(mine), "--json").stdout)).entries
    row = next(row for row in rows if row.pid == "MY-SW-32")
    assert row.facts == "32 x 800G OSFP (2x400G); sonic; 1 RU"
    assert (row.source.file, row.source.line, row.source.builtin) == (str(mine), 3, False)
    result = catalog("show", "MY-SW-32", "--catalog", str(mine))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# MY-SW-32 (switches), your file {mine}:3\n")


def test_an_unknown_model_exits_2_with_the_model_meant():
    result = catalog("show", "n9k-c9364d-gx2")
    assert result.returncode == 2 and result.stdout == ""
    assert "the catalog has no model 'n9k-c9364d-gx2'" in result.stderr and "did you mean 'N9K-C9364D-GX2A'?" in result.stderr
    assert "Traceback" not in result.stderr
    far = catalog("show", "Nothing-like-it")
    assert far.returncode == 2 and "`fabricgen catalog list` shows every model" in far.stderr
    for hostile in ("\x1b[31mred", "x" * 1_000_000):
        refused = catalog("show", hostile)
        assert refused.returncode == 2 and "is not a valid part number (PID)" in refused.stderr
        assert "\x1b" not in refused.stderr and len(refused.stderr) < 600  # escaped, cut short
    as_json = catalog("show", "DGX-H10", "--json")
    assert as_json.returncode == 2 and "did you mean 'DGX-H100'?" in as_json.stdout


def test_a_broken_user_file_is_refused_with_its_line(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(MY_SWITCH.replace("breakouts: [2x400G]", "breakouts: [2by400G]"))
    result = catalog("list", "--catalog", str(broken))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{broken}:7" in result.stderr and "must look like 2x400G" in result.stderr and "Traceback" not in result.stderr
    missing = catalog("list", "--catalog", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "nope.yaml: cannot read the catalog file" in missing.stderr and "Traceback" not in missing.stderr
