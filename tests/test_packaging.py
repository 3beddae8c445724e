"""The wheel ships the templates and the catalog, and a fabric builds from the wheel alone."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import INTENTS, REPO


def test_wheel_ships_templates_and_catalog_and_builds_from_them(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        check=True, capture_output=True, timeout=300,
    )
    [wheel] = tmp_path.glob("fabricgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "fabricgen/templates/nxos/switch.cfg.j2",
        "fabricgen/templates/frr/frr.conf.j2",
        "fabricgen/templates/reports/bom.md.j2",
        "fabricgen/templates/hosts/nic-qos.sh.j2",
        "fabricgen/catalog/data/switches.yaml",
        "fabricgen/catalog/data/nodes.yaml",
        "fabricgen/schema/intent.schema.json",
        "fabricgen/templates/intent/starter.yaml.j2",
    ):
        assert required in names, required

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    script = (
        "import fabricgen.render.environment as e, pathlib, sys;"
        "from fabricgen.pipeline import compile_intent;"
        "from fabricgen.intent.schema import schema_file, schema_text;"
        "b = compile_intent(pathlib.Path(sys.argv[1]));"
        "assert schema_file().read_text() == schema_text();"
        "print(e.templates_dir()); print(schema_file()); print(len(b.files))"
    )
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    result = subprocess.run(
        [sys.executable, "-c", script, str(INTENTS / "cisco-256-gpu.yaml")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=True,
    )
    templates, schema, count = result.stdout.split()
    assert Path(templates) == unpacked / "fabricgen" / "templates"
    assert Path(schema) == unpacked / "fabricgen" / "schema" / "intent.schema.json"  # `fabricgen schema --path`, init's modeline
    # backend, frontend and OOB switch configs, 8 reports; host files: a script and netplan per GPU
    # node, a settings sheet per ONTAP controller, netplan per management node; a routing twin
    # per routed NX-OS switch (12 backend, 10 frontend) and a netplan twin per ONTAP controller
    # (the lab runs the appliances from it)
    assert int(count) == 12 + 10 + 4 + 8 + 32 * 2 + 4 + 8 + 12 + 10 + 4
