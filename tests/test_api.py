"""The Python API: fabricgen.compile(intent) for a Path, YAML text and a mapping gives the bytes
`fabricgen build` writes, and the errors the CLI prints, as typed exceptions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import fabricgen
from fabricgen.basics.errors import CatalogError, DesignError, FabricgenError, IntentError
from fabricgen.intent import DATA_SOURCE, TEXT_SOURCE
from tests.conftest import INTENTS
from tests.test_user_hardware import HARDWARE
from tests.test_user_hardware import INTENT as USER_HARDWARE_INTENT

WHITEPAPER = INTENTS / "cisco-256-gpu.yaml"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, cwd=cwd, timeout=300, check=False)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, bytes]:
    """What `fabricgen build` writes for the whitepaper's cluster."""
    directory = tmp_path_factory.mktemp("cli-build")
    result = _cli("build", str(WHITEPAPER), "-o", str(directory / "out"), cwd=directory)
    assert result.returncode == 0, result.stderr
    out = directory / "out"
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_a_path_gives_the_bytes_fabricgen_build_writes(written: dict[str, bytes]):
    build = fabricgen.compile(WHITEPAPER)
    assert isinstance(build, fabricgen.Build)
    assert build.files == written  # manifest.json included: same file name, digest and version
    assert build.sizing.gpus == 256 and build.fabric.devices and build.notes
    assert build.notes == fabricgen.compile(WHITEPAPER).notes


@pytest.mark.parametrize("form", ["text", "mapping"])
def test_yaml_text_and_a_mapping_give_the_same_files_and_say_so_in_the_manifest(written: dict[str, bytes], form: str):
    text = WHITEPAPER.read_text()
    build = fabricgen.compile(text if form == "text" else yaml.safe_load(text))
    assert sorted(build.files) == sorted(written)
    assert [path for path in written if build.files[path] != written[path]] == ["manifest.json"]
    ours, theirs = json.loads(build.files["manifest.json"]), json.loads(written["manifest.json"])
    intent, file_intent = ours.pop("intent"), theirs.pop("intent")
    assert ours == theirs  # version, catalog, releases and every file's digest
    assert intent["file"] == (TEXT_SOURCE if form == "text" else DATA_SOURCE)
    if form == "text":
        assert intent["sha256"] == file_intent["sha256"]  # the same bytes
    else:  # no bytes: the digest of the content, however the mapping was ordered
        reordered = dict(reversed(list(yaml.safe_load(text).items())))
        assert json.loads(fabricgen.compile(reordered).files["manifest.json"])["intent"]["sha256"] == intent["sha256"]
        changed = yaml.safe_load(text) | {"description": "another"}
        assert json.loads(fabricgen.compile(changed).files["manifest.json"])["intent"]["sha256"] != intent["sha256"]


def test_an_error_is_the_typed_exception_the_cli_prints(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ngpus: 256\ngpu_node: DGX-H100\nbackend:\n  leaf: {model: NO-SUCH-SWITCH}\n  spine: {model: N9K-C9364D-GX2A}\n")
    with pytest.raises(IntentError) as from_path:
        fabricgen.compile(bad)
    printed = _cli("build", str(bad), "-o", str(tmp_path / "out"), "--quiet", cwd=tmp_path)  # --quiet: no progress lines on stderr
    assert printed.returncode == 2 and printed.stderr == from_path.value.report() + "\n"
    [problem] = from_path.value.problems
    assert (problem.file, problem.line, problem.field) == (str(bad), 5, ("backend", "leaf", "model"))

    with pytest.raises(IntentError) as from_text:
        fabricgen.compile(bad.read_text())
    [problem] = from_text.value.problems
    assert (problem.file, problem.line, problem.field) == (TEXT_SOURCE, 5, ("backend", "leaf", "model"))
    assert "unknown switch model 'NO-SUCH-SWITCH'" in problem.message

    with pytest.raises(IntentError) as from_mapping:
        fabricgen.compile(yaml.safe_load(bad.read_text()))
    [problem] = from_mapping.value.problems
    assert (problem.file, problem.line, problem.field) == (DATA_SOURCE, None, ("backend", "leaf", "model"))
    assert problem.format().startswith(f"{DATA_SOURCE}: backend.leaf.model: unknown switch model")


def test_every_problem_of_a_mapping_names_its_field_and_later_phases_keep_their_types():
    intent = yaml.safe_load(WHITEPAPER.read_text())
    intent["gpus"] = "many"
    intent["backend"]["ratio"] = "x"
    intent["backend"]["lead"] = {}
    with pytest.raises(IntentError) as caught:
        fabricgen.compile(intent)
    fields = sorted(p.field for p in caught.value.problems)
    assert fields == [("backend", "lead"), ("backend", "ratio"), ("gpus",)]
    assert all(p.file == DATA_SOURCE and p.line is None for p in caught.value.problems)
    assert "did you mean 'leaf'?" in next(p.hint for p in caught.value.problems if p.field == ("backend", "lead"))

    # a later phase: its own error type, its problems located the same way
    too_large = "name: x\ngpus: 4096\nbackend: {tiers: 2}\n"
    for intent, line in ((too_large, 2), (yaml.safe_load(too_large), None)):
        with pytest.raises(DesignError) as design:
            fabricgen.compile(intent)
        [problem] = design.value.problems
        assert (problem.field, problem.line) == (("gpus",), line) and "set backend.tiers: 3" in problem.hint


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ({"name": "x", "gpus": {1, 2}}, (("gpus",), "a set is not YAML data")),
        ({"name": "x", "description": "one\x1b[2Jtwo"}, (("description",), "a control character (\\x1b)")),
        ({"name": "x", (1, 2): 3}, ((), "a key must be a name or a number, not a tuple")),
        ({"name": "x", "gpus": 10**40}, (("gpus",), "a number of more than 32 digits")),
        ({"name": "x", "backend": {"leaf": {"model": b"N9K"}}}, (("backend", "leaf", "model"), "a bytes is not YAML data")),
    ],
    ids=["set", "escape", "tuple-key", "huge-number", "bytes"],
)
def test_a_mapping_holds_only_what_yaml_could_have_given(intent: dict, expected: tuple):
    with pytest.raises(IntentError) as caught:
        fabricgen.compile(intent)
    field, message = expected
    [problem] = caught.value.problems
    assert problem.field == field and problem.message.startswith(message), problem


def test_a_mapping_is_bounded_like_a_file():
    looped: dict = {"name": "x"}
    looped["backend"] = looped  # a mapping inside itself
    with pytest.raises(IntentError, match="nested more than 32 levels"):
        fabricgen.compile(looped)
    with pytest.raises(IntentError, match="more than 20,000 values"):
        fabricgen.compile({"name": "x", "catalog": ["a.yaml"] * 30_000})
    with pytest.raises(IntentError, match="more than 1,048,576 characters"):
        fabricgen.compile({"name": "x", "description": "x" * (2 << 20)})


def test_a_str_is_yaml_text_never_a_file_name():
    with pytest.raises(IntentError) as caught:
        fabricgen.compile("intents/cisco-256-gpu.yaml")
    [problem] = caught.value.problems
    assert "is a file name" in problem.message and problem.hint == "pass a pathlib.Path to read the file"
    with pytest.raises(TypeError, match="not bytes"):
        fabricgen.compile(WHITEPAPER.read_bytes())  # type: ignore[arg-type]


def test_text_and_a_mapping_have_no_file_to_name_the_fabric_or_hold_its_catalog(tmp_path: Path, monkeypatch):
    unnamed = WHITEPAPER.read_text().replace("name: cisco-256-gpu\n", "")
    for intent in (unnamed, yaml.safe_load(unnamed)):
        with pytest.raises(IntentError) as caught:
            fabricgen.compile(intent)
        [problem] = caught.value.problems
        assert problem.field == ("name",) and problem.hint == "add 'name:'"

    hardware = tmp_path / "hardware"
    hardware.mkdir()
    (hardware / "lab-hardware.yaml").write_text(HARDWARE)
    monkeypatch.chdir(tmp_path)
    text = "name: lab\n" + USER_HARDWARE_INTENT.format(nos="sonic").replace("[lab-hardware.yaml]", "[hardware/lab-hardware.yaml]")
    with pytest.raises(IntentError) as caught:
        fabricgen.compile(text)
    assert caught.value.problems[0].field == ("catalog",) and "catalog_dirs" in caught.value.problems[0].hint
    with pytest.raises(IntentError) as caught:
        fabricgen.compile(text, catalog_dirs=[tmp_path / "elsewhere"])
    assert "not a directory" in caught.value.problems[0].message
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(IntentError) as caught:
        fabricgen.compile(text, catalog_dirs=[tmp_path / "elsewhere"])
    assert caught.value.problems[0].message == "catalog 'hardware/lab-hardware.yaml' is outside every catalog_dirs"

    from_text = fabricgen.compile(text, catalog_dirs=[hardware])
    from_mapping = fabricgen.compile(yaml.safe_load(text), catalog_dirs=[str(hardware)])
    (tmp_path / "lab.yaml").write_text(text)
    from_file = fabricgen.compile(tmp_path / "lab.yaml")
    assert from_text.sizing.gpus == 64
    assert {p: b for p, b in from_text.files.items() if p != "manifest.json"} == {p: b for p, b in from_file.files.items() if p != "manifest.json"}
    assert {p: b for p, b in from_mapping.files.items() if p != "manifest.json"} == {p: b for p, b in from_file.files.items() if p != "manifest.json"}
    recorded = json.loads(from_text.files["manifest.json"])["catalog"]
    assert recorded == json.loads(from_file.files["manifest.json"])["catalog"] == {"hardware/lab-hardware.yaml": recorded["hardware/lab-hardware.yaml"]}

    (hardware / "lab-hardware.yaml").write_text(HARDWARE.replace("gpus: 4", "gpus: four"))
    with pytest.raises(CatalogError):
        fabricgen.compile(text, catalog_dirs=[hardware])


def test_import_fabricgen_loads_no_compiler_and_the_api_on_first_use():
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import fabricgen\n"
        "print(sorted(set(sys.modules) - before))\n"  # not even typing or re
        "print(fabricgen.__version__)\n"
        "fabricgen.compile\n"
        "print('fabricgen.compiler.pipeline' in sys.modules, fabricgen.Build is sys.modules['fabricgen.compiler.pipeline'].Build)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    loaded, version, lazy = result.stdout.splitlines()
    assert loaded == "['__future__', 'fabricgen', 'fabricgen._version', 'fabricgen.basics', 'fabricgen.basics.version']"  # __future__: the annotations import
    assert version == fabricgen.__version__
    assert lazy == "True True"
    with pytest.raises(AttributeError, match="no attribute 'compil'"):
        fabricgen.compil  # type: ignore[attr-defined]  # noqa: B018 - a typo is an AttributeError, not an import
    assert fabricgen.FabricgenError is FabricgenError
