"""`fabricgen init`'s modeline survives sharing: it points at a schema file that travels with the
intent (`.fabricgen/intent.schema.json` at the root of the intent's git repository, or beside the
intent outside one; the repository's own `schema/` in a fabricgen checkout), never at the copy
installed in a virtualenv. Checked the way yaml-language-server reads it: the path after
`$schema=` resolved from the intent file's directory."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from fabricgen.basics.yaml_source import load_yaml
from tests.cli_runner import fabricgen
from tests.conftest import REPO

SCHEMA = REPO / "schema" / "intent.schema.json"
MODELINE = re.compile(r"# yaml-language-server: \$schema=(\S+)")


@pytest.fixture
def wheel_install(tmp_path, monkeypatch) -> Path:
    """fabricgen as installed from its wheel into a virtualenv unrelated to the intent: the schema
    file is the package's (fabricgen/schema/ in site-packages), a real copy of the committed one."""
    installed = tmp_path / "venv" / "lib" / "python3" / "site-packages" / "fabricgen" / "schema" / "intent.schema.json"
    installed.parent.mkdir(parents=True)
    installed.write_bytes(SCHEMA.read_bytes())
    monkeypatch.setattr("fabricgen.intent.schema.schema_file", lambda: installed)
    return installed


def schema_of(intent: Path) -> Path:
    """The file the intent's modeline names, resolved from the intent's directory."""
    match = MODELINE.fullmatch(intent.read_text().splitlines()[0])
    assert match, intent.read_text()[:200]
    reference = match.group(1)
    assert not reference.startswith(("/", "file:")), reference  # relative: it moves with the repository
    return intent.parent / reference


def check_is_the_intent_schema(schema: Path, intent: Path) -> None:
    assert schema.is_file(), schema
    assert schema.read_bytes() == SCHEMA.read_bytes()
    doc, problems = load_yaml(intent)
    assert not problems
    jsonschema.Draft202012Validator(json.loads(schema.read_text())).validate(json.loads(json.dumps(doc.data)))


def init(intent: Path):
    result = fabricgen("init", "--gpus", "64", "--no-interactive", "-o", str(intent))
    assert result.returncode == 0, result.stderr
    return result


def test_in_a_git_repository_the_schema_is_kept_at_its_root_and_travels_with_it(tmp_path, wheel_install):
    repo = tmp_path / "network-repo"
    (repo / ".git").mkdir(parents=True)  # what marks a repository's root (a worktree's .git is a file: also found)
    intent = repo / "fabrics" / "east" / "cluster.yaml"
    intent.parent.mkdir(parents=True)
    result = init(intent)
    assert "commit it with the intent" in result.stdout
    assert schema_of(intent) == intent.parent / "../../.fabricgen/intent.schema.json"
    check_is_the_intent_schema(schema_of(intent), intent)
    # shared: the repository cloned elsewhere, and the virtualenv gone
    clone = tmp_path / "elsewhere" / "clone"
    shutil.copytree(repo, clone)
    shutil.rmtree(tmp_path / "venv")
    shared = clone / "fabrics" / "east" / "cluster.yaml"
    check_is_the_intent_schema(schema_of(shared), shared)


def test_a_second_intent_shares_the_copy_and_leaves_it_as_it_is(tmp_path, wheel_install):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / ".git").write_text("gitdir: /somewhere/.git/worktrees/repo\n", encoding="utf-8")  # a worktree's .git
    init(repo / "a.yaml")
    copy = repo / ".fabricgen" / "intent.schema.json"
    before = copy.stat()
    second = init(repo / "sub" / "b.yaml")
    assert "commit it with the intent" not in second.stdout
    assert copy.stat().st_mtime_ns == before.st_mtime_ns and copy.stat().st_ino == before.st_ino
    check_is_the_intent_schema(schema_of(repo / "sub" / "b.yaml"), repo / "sub" / "b.yaml")
    # a copy from another fabricgen release is replaced by this one's schema
    copy.write_text("{}", encoding="utf-8")
    init(repo / "c.yaml")
    check_is_the_intent_schema(schema_of(repo / "c.yaml"), repo / "c.yaml")


def test_outside_a_repository_the_copy_lies_beside_the_intent(tmp_path, wheel_install):
    intent = tmp_path / "plain" / "lab.yaml"
    intent.parent.mkdir()
    init(intent)
    assert schema_of(intent) == intent.parent / ".fabricgen/intent.schema.json"
    check_is_the_intent_schema(schema_of(intent), intent)
    moved = tmp_path / "moved"
    shutil.copytree(intent.parent, moved)
    shutil.rmtree(tmp_path / "venv")
    check_is_the_intent_schema(schema_of(moved / "lab.yaml"), moved / "lab.yaml")


def test_in_a_fabricgen_checkout_the_modeline_points_at_its_schema_directory(tmp_path, monkeypatch):
    checkout = tmp_path / "fabricgen"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "schema").mkdir()
    (checkout / "intents").mkdir()
    committed = checkout / "schema" / "intent.schema.json"
    committed.write_bytes(SCHEMA.read_bytes())
    monkeypatch.setattr("fabricgen.intent.schema.schema_file", lambda: committed)  # an editable install's
    intent = checkout / "intents" / "new.yaml"
    init(intent)
    assert schema_of(intent) == intent.parent / "../schema/intent.schema.json"
    assert not (checkout / ".fabricgen").exists()
    check_is_the_intent_schema(schema_of(intent), intent)


def test_this_checkout_as_installed_here(tmp_path):
    # no stand-in: the fabricgen of this virtualenv, an intent in a fresh repository
    repo = tmp_path / "r"
    (repo / ".git").mkdir(parents=True)
    init(repo / "x.yaml")
    check_is_the_intent_schema(schema_of(repo / "x.yaml"), repo / "x.yaml")


@pytest.mark.parametrize("what", ["link", "file"])
def test_a_dot_fabricgen_that_is_no_directory_is_refused_and_nothing_written(tmp_path, wheel_install, what):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    target = tmp_path / "outside"
    target.mkdir()
    if what == "link":
        (repo / ".fabricgen").symlink_to(target)
    else:
        (repo / ".fabricgen").write_text("not a directory\n", encoding="utf-8")
    result = fabricgen("init", "--gpus", "64", "--no-interactive", "-o", str(repo / "x.yaml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ".fabricgen" in result.stderr and "should be a directory" in result.stderr
    assert not (repo / "x.yaml").exists() and not list(target.iterdir())
