"""How fabricgen is packaged: what the wheel ships, where its version comes from and what the files
it writes say about it, what a base install can do without the extras.

The wheels are built from a copy of the working tree made into a git repository of its own,
tagged v9.8.7, so the version is known and the repository's own fabricgen/_version.py (the
editable install's) is never rewritten under the running suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from fabricgen.basics import version
from fabricgen.basics.errors import LabError
from fabricgen.build.build_dir import read_manifest
from fabricgen.cli.extras import EXTRAS
from tests.conftest import INTENTS, REPO

TAG = "9.8.7"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "fabricgen tests",
    "GIT_AUTHOR_EMAIL": "tests@example.com",
    "GIT_COMMITTER_NAME": "fabricgen tests",
    "GIT_COMMITTER_EMAIL": "tests@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
BASE = {"pydantic", "typing-extensions", "jinja2", "netaddr", "typer", "pyyaml", "rich"}
TINY = REPO / "tests" / "golden" / "tiny-nxos.yaml"
# What a subprocess runs the CLI with when the extras' modules cannot be imported (None in
# sys.modules makes `import numpy` fail and importlib.util.find_spec('numpy') return None)
WITHOUT_EXTRAS = (
    "import sys\n"
    f"for module in {sorted(m for modules in EXTRAS.values() for m in modules)!r}:\n"
    "    sys.modules[module] = None\n"
    "from fabricgen.cli import main\n"
    "sys.argv[0] = 'fabricgen'\n"
    "main()\n"
)


def _git(tree: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}, timeout=60)
    return result.stdout.strip()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The working tree's files (tracked and new, not ignored) in a repository of their own whose
    one commit is tagged v9.8.7."""
    copy = tmp_path_factory.mktemp("tree") / "fabricgen"
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z"], check=True, capture_output=True, timeout=60).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():  # a file deleted but not yet committed is listed too
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    _git(copy, "-c", "init.defaultBranch=main", "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-q", "--no-gpg-sign", "-m", "the working tree")
    _git(copy, "tag", f"v{TAG}")
    return copy


def _wheel(tree: Path, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(tree), "--no-deps", "--no-build-isolation", "-q", "-w", str(into)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = into.glob("fabricgen-*.whl")
    return wheel


def _build_from(wheel: Path, intent: Path, into: Path, tmp_path: Path) -> None:
    """Unpack `wheel` and build `intent` into `into` with its fabricgen and its templates."""
    unpacked = tmp_path / f"site-{wheel.stem}"
    zipfile.ZipFile(wheel).extractall(unpacked)
    script = (
        "import fabricgen.render.environment as e, pathlib, sys;"
        "from fabricgen.compiler.pipeline import build;"
        "from fabricgen.intent.schema import schema_file, schema_text;"
        "build(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]));"
        "assert schema_file().read_text() == schema_text();"
        "print(e.templates_dir()); print(schema_file())"
    )
    # PYTHONPATH comes before the editable install's path: the wheel's fabricgen, this venv's pydantic & co
    result = subprocess.run(
        [sys.executable, "-c", script, str(intent), str(into)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(unpacked)},
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    templates, schema = result.stdout.split()
    assert Path(templates) == unpacked / "fabricgen" / "templates"
    assert Path(schema) == unpacked / "fabricgen" / "schema" / "intent.schema.json"  # `fabricgen schema --path`, init's modeline


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_the_wheel_ships_data_license_and_version_and_a_commit_changes_only_the_manifest(tree: Path, tmp_path: Path):
    wheel = _wheel(tree, tmp_path / "tagged")
    assert wheel.name == f"fabricgen-{TAG}-py3-none-any.whl"
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    for required in (
        "fabricgen/nos/nxos/templates/switch.cfg.j2",
        "fabricgen/nos/eos/templates/switch.cfg.j2",
        "fabricgen/templates/frr/frr.conf.j2",
        "fabricgen/templates/reports/bom.md.j2",
        "fabricgen/templates/hosts/nic-qos.sh.j2",
        "fabricgen/catalog/data/switches.yaml",
        "fabricgen/catalog/data/nodes.yaml",
        "fabricgen/schema/intent.schema.json",
        "fabricgen/templates/intent/starter.yaml.j2",
        "fabricgen/py.typed",
        "fabricgen/_version.py",
        "napalm_sonic/__init__.py",
        f"fabricgen-{TAG}.dist-info/licenses/LICENSE",
    ):
        assert required in names, required
    assert "Apache License" in archive.read(f"fabricgen-{TAG}.dist-info/licenses/LICENSE").decode()
    metadata = HeaderParser().parsestr(archive.read(f"fabricgen-{TAG}.dist-info/METADATA").decode())
    assert metadata["Version"] == TAG
    assert metadata["License-Expression"] == "Apache-2.0" and metadata.get_all("License-File") == ["LICENSE"]
    needs: dict[str, set[str]] = {}  # extra ("" for the base) -> distributions
    for requirement in map(Requirement, metadata.get_all("Requires-Dist")):
        extra = next((e for e in metadata.get_all("Provides-Extra") if requirement.marker and requirement.marker.evaluate({"extra": e})), "")
        needs.setdefault(extra, set()).add(requirement.name.lower())
    assert needs[""] == BASE  # no driver, no numpy: a base install is small
    for extra, modules in EXTRAS.items():  # what require_extra checks is what the extra installs
        assert needs[extra] == set(modules), extra
    assert needs["all"] == set().union(*EXTRAS.values()) and needs["all"] < needs["test"]

    _build_from(wheel, INTENTS / "cisco-256-gpu.yaml", tmp_path / "build-tagged", tmp_path)
    files = _files(tmp_path / "build-tagged")
    # backend, frontend and OOB switch configs, 8 reports, the manifest; host files: a script and
    # netplan per GPU node, a settings sheet per ONTAP controller, netplan per management node; a
    # routing twin per routed NX-OS switch (12 backend, 10 frontend) and a netplan twin per ONTAP
    # controller (the lab runs the appliances from it)
    assert len(files) == 12 + 10 + 4 + 8 + 32 * 2 + 4 + 8 + 12 + 10 + 4
    assert files["configs/be-spine01.cfg"].startswith(f"!Command: generated by fabricgen {TAG};".encode())
    assert f"# Generated by fabricgen {TAG}:".encode() in files["hosts/gpu0001/nic-qos.sh"]
    assert json.loads(files["topology.json"])["graph"]["fabricgen_version"] == TAG
    assert json.loads(files["manifest.json"])["fabricgen_version"] == TAG

    # one commit later: another version, the same release; only manifest.json says so
    _git(tree, "commit", "-q", "--no-gpg-sign", "--allow-empty", "-m", "a commit after the tag")
    later = _wheel(tree, tmp_path / "later")
    commit = _git(tree, "rev-parse", "HEAD")
    match = re.fullmatch(rf"fabricgen-{re.escape(TAG)}\.post1\.dev1\+g([0-9a-f]+)-py3-none-any\.whl", later.name)
    assert match and commit.startswith(match.group(1)), later.name
    _build_from(later, INTENTS / "cisco-256-gpu.yaml", tmp_path / "build-later", tmp_path)
    after = _files(tmp_path / "build-later")
    assert sorted(name for name in files if files[name] != after[name]) == ["manifest.json"]
    before_manifest, after_manifest = json.loads(files["manifest.json"]), json.loads(after["manifest.json"])
    assert after_manifest.pop("fabricgen_version") == f"{TAG}.post1.dev1+g{match.group(1)}"
    before_manifest.pop("fabricgen_version")
    assert after_manifest == before_manifest


def _hatchling_version(project: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "hatchling", "version"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **GIT_ENV, "GIT_CEILING_DIRECTORIES": str(project.parent)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.slow
def test_without_a_git_checkout_the_version_comes_from_the_sdist_or_the_archive_else_a_fallback(tree: Path, tmp_path: Path):
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "dist")], cwd=tree, check=True, capture_output=True, timeout=300
    )
    [sdist] = (tmp_path / "dist").glob("fabricgen-*.tar.gz")
    shutil.unpack_archive(sdist, tmp_path / "sdist")
    [unpacked] = (tmp_path / "sdist").iterdir()
    assert not (unpacked / ".git").exists()
    expected = _hatchling_version(tree)  # the tag, or one commit after it when the test above ran first
    assert _hatchling_version(unpacked) == expected  # from PKG-INFO

    # a `git archive` tarball (GitHub's downloads): .git_archival.txt, filled in by export-subst
    archive = tmp_path / "archive"
    archive.mkdir()
    tar = subprocess.run(["git", "-C", str(tree), "archive", "--format=tar", f"v{TAG}"], check=True, capture_output=True, timeout=60).stdout
    subprocess.run(["tar", "-x", "-C", str(archive)], input=tar, check=True, timeout=60)
    assert f"describe-name: v{TAG}" in (archive / ".git_archival.txt").read_text()
    assert _hatchling_version(archive) == TAG

    # nothing to tell: a copy of the files only (the archival file unfilled)
    bare = tmp_path / "bare"
    shutil.copytree(tree, bare, ignore=shutil.ignore_patterns(".git"))
    assert _hatchling_version(bare) == "0.0.0"


def test_the_release_names_the_files_the_full_version_the_manifest():
    """What this copy writes: the release in every header and topology.json, the full version in
    manifest.json (the wheel test above checks both against a real tag)."""
    from fabricgen.compiler.pipeline import compile_intent

    files = compile_intent(TINY).files
    assert version.release_of(version.__version__) == version.RELEASE
    assert files["configs/be-spine01.cfg"].startswith(f"!Command: generated by fabricgen {version.RELEASE};".encode())
    assert f"Generated by fabricgen {version.RELEASE}:".encode() in files["hosts/gpu0001/netplan.yaml"]
    assert json.loads(files["topology.json"])["graph"]["fabricgen_version"] == version.RELEASE
    assert json.loads(files["manifest.json"])["fabricgen_version"] == version.__version__


@pytest.mark.parametrize(
    ("version_string", "release"),
    [
        ("0.2.0", "0.2.0"),
        ("0.2.0.post1.dev3+g1a2b3c4d", "0.2.0"),
        ("0.2.0.post1.dev3+g1a2b3c4d.d20250101", "0.2.0"),
        ("0.2.0+d20250101", "0.2.0"),  # the tag, with uncommitted changes
        ("0.3.0rc1.post1.dev2+g1a2b3c4", "0.3.0rc1"),
        ("0.2.0.post2", "0.2.0.post2"),  # a post-release tag is a release of its own
        ("0.0.0", "0.0.0"),
    ],
)
def test_the_release_of_a_version(version_string: str, release: str):
    assert version.release_of(version_string) == release


def test_a_build_of_another_commit_of_the_release_is_read_one_of_another_release_is_refused(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("fabricgen.build.build_dir.RELEASE", "0.2.0")
    monkeypatch.setattr("fabricgen.build.build_dir.__version__", "0.2.0.post1.dev5+gfeedbee")
    manifest = {"intent": {"file": "x.yaml", "sha256": "0" * 64}, "files": {}}
    for same in ("0.2.0", "0.2.0.post1.dev3+g1a2b3c4d", "0.2.0+d20250101"):
        (tmp_path / "manifest.json").write_text(json.dumps({"fabricgen_version": same, **manifest}))
        assert read_manifest(tmp_path, LabError).fabricgen_version == same
    for other in ("0.1.0", "0.2.1", "0.3.0rc1.post1.dev1+gabc"):
        (tmp_path / "manifest.json").write_text(json.dumps({"fabricgen_version": other, **manifest}))
        with pytest.raises(LabError) as refused:
            read_manifest(tmp_path, LabError)
        [problem] = refused.value.problems
        assert problem.message == f"built by fabricgen {other}, this is fabricgen 0.2.0.post1.dev5+gfeedbee (release 0.2.0)"
        assert "rebuild" in problem.hint
        assert read_manifest(tmp_path, LabError, any_version=True).fabricgen_version == other  # `build` replacing it


def _without_extras(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *args], capture_output=True, text=True, cwd=cwd, timeout=300, check=False)


@pytest.mark.slow
def test_without_the_extras_build_validate_diff_and_testplan_run_and_push_verify_analyze_name_their_extra(tmp_path: Path):
    build = tmp_path / "build"
    for args in (
        ("build", str(TINY), "-o", str(build)),
        ("validate", str(TINY)),
        ("diff", str(build), str(TINY)),
        ("testplan", str(build), "-o", str(tmp_path / "plan")),
        ("lab", "--help"),
    ):
        result = _without_extras(*args, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
    for command, extra in (("push", "push"), ("verify", "push"), ("analyze", "analyze")):
        result = _without_extras(command, str(build), cwd=tmp_path)
        assert result.returncode == 2, (command, result.stderr)
        modules = ", ".join(EXTRAS[extra])
        assert result.stderr == f"fabricgen {command} needs the '{extra}' extra: pip install 'fabricgen[{extra}]' (not installed: {modules})\n"
    lab = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_EXTRAS.replace(
                "from fabricgen.cli import main\n", "import fabricgen.lab.session, fabricgen.lab.verify, fabricgen.lab.runtime\nmain = lambda: None\n"
            ),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert lab.returncode == 0, lab.stderr  # the lab's code imports nothing from an extra


@pytest.mark.slow
def test_a_fresh_base_install_builds_and_validates_and_push_names_its_extra(tree: Path, tmp_path: Path):
    """`pip install .` (no extras) into a new virtualenv: the whitepaper's cluster builds and
    validates; push says which extra to install. pip's cache keeps this under a minute after the
    first run."""
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=False)  # ensurepip would cost some 2.5 s of CPU: this pip installs into it (--python)
    python = environment / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check", str(tree)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    probe = subprocess.run(
        [str(python), "-c", f"import importlib.util as u; print([m for m in {sorted(m for ms in EXTRAS.values() for m in ms)!r} if u.find_spec(m)])"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert probe.stdout.strip() == "[]"  # none of the extras came along
    fabricgen = environment / "bin" / "fabricgen"
    intent = INTENTS / "cisco-256-gpu.yaml"
    built = subprocess.run(
        [str(fabricgen), "build", str(intent), "-o", str(tmp_path / "build")], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "build" / "configs" / "be-spine01.cfg").read_bytes().startswith(f"!Command: generated by fabricgen {TAG};".encode())
    validated = subprocess.run([str(fabricgen), "validate", str(intent)], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr
    pushed = subprocess.run([str(fabricgen), "push", str(tmp_path / "build")], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert pushed.returncode == 2
    assert "fabricgen push needs the 'push' extra: pip install 'fabricgen[push]'" in pushed.stderr and "Traceback" not in pushed.stderr


def test_pre_commit_runs_the_ruff_that_ci_pins():
    """.pre-commit-config.yaml's ruff hooks are the release the test extra pins (scripts/lint.sh in
    CI): a commit hook on another ruff would pass code CI fails, or fail code CI passes."""
    import tomllib

    import yaml

    pins = {
        req.name: req.specifier for req in map(Requirement, tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"])
    }
    (pinned,) = [spec.version for spec in pins["ruff"] if spec.operator == "=="]
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    (ruff_repo,) = [repo for repo in config["repos"] if repo["repo"].endswith("/ruff-pre-commit")]
    assert ruff_repo["rev"] == f"v{pinned}"
    assert {hook["id"] for hook in ruff_repo["hooks"]} == {"ruff-check", "ruff-format"}
    (mypy,) = [hook for repo in config["repos"] for hook in repo["hooks"] if hook["id"] == "mypy"]
    assert mypy["entry"] == ".venv/bin/mypy" and mypy["pass_filenames"] is False  # the whole configured tree, as CI checks it
