"""bench/samebytes.py, the byte-identity guard for speed work: it must pass an unchanged build and
name the files of a changed one."""

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("samebytes", REPO / "bench" / "samebytes.py")
assert spec is not None and spec.loader is not None
samebytes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samebytes)


def test_an_unchanged_build_checks_identical(tmp_path, capsys):
    recorded = tmp_path / "base.json"
    assert samebytes.main(["record", str(recorded), "--only", "small-32-gpu"]) == 0
    hashes = json.loads(recorded.read_text())["intents/small-32-gpu"]
    assert any(name.startswith("configs/") for name in hashes)
    assert "manifest.json" not in hashes and "bom.csv" in hashes
    assert samebytes.main(["check", str(recorded), "--only", "small-32-gpu"]) == 0
    assert "all identical" in capsys.readouterr().out


def test_a_changed_file_is_named_and_fails(tmp_path, capsys):
    recorded = tmp_path / "base.json"
    samebytes.main(["record", str(recorded), "--only", "small-32-gpu"])
    data = json.loads(recorded.read_text())
    data["intents/small-32-gpu"]["bom.csv"] = "0" * 64  # as if the build's BOM had changed
    del data["intents/small-32-gpu"]["cabling.csv"]  # and it wrote a file it did not write before
    recorded.write_text(json.dumps(data))
    capsys.readouterr()
    assert samebytes.main(["check", str(recorded), "--only", "small-32-gpu"]) == 1
    out = capsys.readouterr().out
    assert "2 files differ: bom.csv, cabling.csv" in out and "1 intents differ" in out


def test_an_unknown_intent_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no intent named no-such-intent"):
        samebytes.main(["check", str(tmp_path / "base.json"), "--only", "no-such-intent"])
