"""The NOS interface: a NOS is one package under fabricgen/nos/, found and checked by the registry.

A stub fourth NOS is written into a temporary folder that the test adds to `fabricgen.nos`'s
package path, the way a new folder fabricgen/nos/<name>/ would be found: `releases`, `init`, the
JSON Schema and the checks see it with no other file of fabricgen changed. A stub that lacks a part
is refused when it registers, naming the part.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fabricgen.nos
from fabricgen.basics.errors import CheckError
from fabricgen.build.secrets import Secrets, file_nos, mask_text, placements, value_problems
from fabricgen.cli import app
from fabricgen.nos import registry
from fabricgen.nos.registry import PARTS
from fabricgen.render.environment import environment

STUB = "stubnos"

STUB_INIT = '''
"""A stub NOS for the registry's tests: one text file per switch."""
from pathlib import Path

from fabricgen.nos.interface import ExportParts, Gap
from fabricgen.nos.interface import BootImage, Gap, SecretSlots

NAME = "stubnos"
TITLE = "StubOS"
DESCRIPTION = "a stub NOS"
IS_DEFAULT = False
RELEASES = Path(__file__).parent / "releases.yaml"
MANAGEMENT_PORT = "oob0"
RUNS_OOB_SWITCHES = False
PREFERS_MAPPED_PLATFORM = False
HEADROOM_FROM_ASIC_DELAY = False
ROUTING_IS_FRR = False
TEMPLATE_FILTERS = {}
EXPORT = ExportParts(ansible_network_os="stub.os", ansible_connection="ssh", ansible_vars={}, nornir_group={}, netbox_platform="StubOS", netbox_manufacturer=None, batfish_folder="configs", batfish_rancid_type=None, containerlab=None)

from fabricgen.nos.interface import Lazy, PushParts, VerifyParts

_ANY = Lazy("builtins:str")  # no test pushes to or verifies the stub
PUSH = PushParts(napalm_driver="stubnos", own_driver=None, driver_options={}, transport="ssh", commit_timer=None, merge_refused=None, candidate=_ANY, replace_must_keep=_ANY)
VERIFY = VerifyParts(extensions=None, running_config=_ANY, port_mtus=_ANY, mask_slots=_ANY)
SECRETS = SecretSlots(slots=(), files=())
CATALOG_PLATFORM = None
BOOT_IMAGE = BootImage(pattern=r"^stub-.+$", description="the stub's image", example="stub-1.0")


def config_files(hostname):
    return (f"configs/{hostname}.stub",)


def render_config(config):
    from fabricgen.render.environment import environment

    text = environment().get_template("stubnos/switch.j2").render(c=config)
    return {f"configs/{config.hostname}.stub": text}


def load_balancing_gaps(lb):
    return [] if lb.mode == "ecmp" else [Gap("mode", f"StubOS writes no {lb.mode}", "use mode: ecmp on StubOS")]


def security_gaps(security, management):
    return []


def watchdog_values(watchdog):
    return {"poll-interval": (watchdog.poll_interval_ms, "poll_interval_ms")}


def unrendered(management, features):
    return []


def feature_needs(management):
    return []


def settings_gaps(spec):
    return []


def notes(spec):
    return []


def model_notes(pid, model, roles):
    return []
'''

STUB_RELEASES = """
nos_releases:
  stubnos:
    nos: stubnos
    description: a stub NOS
    releases: ["1.0", "2.0"]
    default: "1.0"
    features:
      evpn-anycast-gateway: {since: "1.0", source: the stub}
      dlb: {since: null, source: the stub}
      ipv6-flow-label-hash: {since: null, source: the stub}
      pfc-watchdog:
        since: "1.0"
        source: the stub
        parameters:
          poll-interval:
            syntax: watchdog poll <ms>
            ranges: [{since: "1.0", min: 100, max: 1000, default: 100}]
            source: the stub
"""

HARDWARE = """
switches:
  STUB-SW-32X400:
    description: a switch that runs the stub NOS, 32 x 400G
    vendor: Example
    nos: [stubnos]
    port_groups:
      - {first: 1, count: 32, speed: 400G, form_factor: QSFP-DD, lanes: 8}
    interface_names:
      stubnos: {port: "port{port}", breakout: "port{port}.{sub}"}
    load_balancing: {stubnos: [ecmp, flowlet]}  # the hardware can; the stub's adapter cannot write it
"""

INTENT = """
catalog: [stub-hardware.yaml]
gpus: 64
backend:
  scalable_unit_gpus: 64
  leaf: {model: STUB-SW-32X400, nos: stubnos}
  spine: {model: STUB-SW-32X400, nos: stubnos}
"""


def _write_stub(root, *, drop: str | None = None) -> None:
    package = root / STUB
    (package / "templates").mkdir(parents=True)
    text = STUB_INIT
    if drop is not None:  # take one part out: its assignment, or its function with its body
        kept, dropping = [], False
        for line in text.splitlines():
            if line.startswith((f"{drop} = ", f"def {drop}(")):
                dropping = line.startswith("def ")
                continue
            if dropping and (not line or line.startswith(" ")):
                continue
            dropping = False
            kept.append(line)
        text = "\n".join(kept)
    (package / "__init__.py").write_text(textwrap.dedent(text))
    (package / "releases.yaml").write_text(STUB_RELEASES)
    (package / "templates" / "switch.j2").write_text("hostname {{ c.hostname }}\n{% for i in c.interfaces %}port {{ i.name }} mtu {{ i.mtu }}\n{% endfor %}")


@pytest.fixture
def stub_path(tmp_path, monkeypatch):
    """fabricgen.nos with one more folder to find NOS packages in; the caches that hold the
    registry's answers are cleared on the way in and out."""

    def clear():
        registry.plugins.cache_clear()
        environment.cache_clear()

    root = tmp_path / "nos"
    root.mkdir()
    monkeypatch.setattr(fabricgen.nos, "__path__", [*fabricgen.nos.__path__, str(root)])
    clear()
    yield root
    clear()
    import sys

    for name in [name for name in sys.modules if name == f"fabricgen.nos.{STUB}" or name.startswith(f"fabricgen.nos.{STUB}.")]:
        del sys.modules[name]


def test_the_shipped_nos_packages_register_with_every_part():
    found = registry.plugins()
    assert {"nxos", "sonic"} <= set(found)
    assert registry.default_name() in found
    for name, package in found.items():
        assert name == package.NAME
        assert all(hasattr(package, part) for part in PARTS)


def test_a_stub_fourth_nos_is_seen_by_releases_init_the_schema_and_the_checks(stub_path, tmp_path, write_intent):
    _write_stub(stub_path)
    assert STUB in registry.names()
    runner = CliRunner()

    releases = runner.invoke(app, ["releases", "--json"])
    assert releases.exit_code == 0, releases.output
    assert STUB in {flavour["name"] for flavour in json.loads(releases.output)["flavours"]}

    schema = json.loads(runner.invoke(app, ["schema"]).output)
    nos = schema["$defs"]["SwitchRole"]["properties"]["nos"]
    assert STUB in nos["enum"] and "stubnos (a stub NOS)" in nos["description"]

    # init takes it as a NOS (and then wants a catalog model that runs it: the built-in has none)
    init = runner.invoke(app, ["init", "--gpus", "64", "--nos", STUB, "--no-interactive", "-o", str(tmp_path / "x.yaml")])
    assert init.exit_code == 2
    assert f"does not run {STUB}" in init.output and "not a NOS" not in init.output
    unknown = runner.invoke(app, ["init", "--gpus", "64", "--nos", "stubos", "--no-interactive", "-o", str(tmp_path / "y.yaml")])
    assert unknown.exit_code == 2 and f"did you mean {STUB}?" in unknown.output

    # a fabric of it builds through the stub's own adapter and template
    from fabricgen.compiler.pipeline import compile_intent

    (tmp_path / "stub-hardware.yaml").write_text(HARDWARE)
    result = compile_intent(write_intent(INTENT, name="stub-fabric"))
    stub_files = sorted(path for path in result.files if path.endswith(".stub"))
    leaves = [d for d in result.compiled.fabric.switches() if d.nos == STUB]
    assert leaves and len(stub_files) == len(leaves)
    assert result.files[stub_files[0]].startswith(b"hostname ")

    # and its gaps reach the checks: the stub writes no DLB
    with pytest.raises(CheckError) as refused:
        compile_intent(write_intent(INTENT + "  load_balancing: {mode: flowlet}\n", name="stub-dlb"))
    assert any("StubOS writes no flowlet" in problem.message for problem in refused.value.problems), refused.value.problems


@pytest.mark.parametrize("part", sorted(PARTS))
def test_a_stub_without_a_part_is_refused_when_it_registers_naming_the_part(stub_path, part):
    _write_stub(stub_path, drop=part)
    with pytest.raises(registry.NosRegistrationError) as refused:
        registry.plugins()
    assert f"fabricgen.nos.{STUB} lacks {part} " in str(refused.value)


def test_a_part_of_the_wrong_kind_is_refused(stub_path):
    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    init.write_text(init.read_text().replace("IS_DEFAULT = False", 'IS_DEFAULT = "no"'))
    with pytest.raises(registry.NosRegistrationError, match="gives IS_DEFAULT as str, not bool"):
        registry.plugins()


def test_an_export_part_that_is_not_export_parts_is_refused(stub_path):
    """EXPORT is checked by its class (the registry cannot import the interface's ExportParts)."""
    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    init.write_text(init.read_text().replace("EXPORT = ExportParts(", "EXPORT = dict("))
    with pytest.raises(registry.NosRegistrationError, match="gives EXPORT as dict, not ExportParts"):
        registry.plugins()


STUB_CONTAINER = """

def stub_node(switch):
    from fabricgen.nos.interface import LabNode

    wires = {port: f"p{index}" for index, port in enumerate(sorted(switch.ports), start=1)}
    config = f"configs/{switch.device}.stub"
    return LabNode(
        comment=f"{switch.device}: StubOS", kind="stub-vm", image=switch.image or "stub:1", wires=wires,
        startup_config=f"stub/{switch.device}.cfg", files={f"stub/{switch.device}.cfg": switch.files.text(config)},
    )


EXPORT = ExportParts(**{**EXPORT.__dict__, "containerlab": ContainerlabNode("--stub-image", "Image of the stub nodes.", stub_node)})
"""


def test_the_exports_write_what_a_stub_nos_package_gives(stub_path, tmp_path, write_intent):
    """Each export format asks the NOS's package (its EXPORT) and nothing else: the stub's Ansible
    vars, NetBox platform, Batfish layout and containerlab node come out as it gives them."""
    import csv

    import yaml

    from fabricgen.compiler.pipeline import build as build_intent
    from fabricgen.export.containerlab import Images, render_containerlab
    from fabricgen.export.source import open_build

    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    init.write_text(init.read_text().replace("import ExportParts, Gap", "import ContainerlabNode, ExportParts, Gap") + STUB_CONTAINER)
    (tmp_path / "stub-hardware.yaml").write_text(HARDWARE)
    build_dir = tmp_path / "stub-fabric"
    build_intent(write_intent(INTENT, name="stub-fabric"), build_dir)
    runner = CliRunner()
    for fmt in ("ansible", "netbox", "batfish"):
        result = runner.invoke(app, ["export", fmt, str(build_dir), "-o", str(tmp_path / fmt)])
        assert result.exit_code == 0, result.output

    inventory = yaml.safe_load((tmp_path / "ansible" / "inventory.yaml").read_text())
    assert inventory["all"]["children"][STUB]["vars"] == {"ansible_network_os": "stub.os", "ansible_connection": "ssh"}
    with open(tmp_path / "netbox" / "platforms.csv", newline="") as handle:
        assert list(csv.DictReader(handle)) == [{"name": "StubOS", "slug": STUB, "manufacturer": ""}]
    stub_configs = sorted(path.name for path in (build_dir / "configs").glob("*.stub"))
    assert stub_configs and sorted(path.name for path in (tmp_path / "batfish" / "configs").iterdir()) == stub_configs
    first = stub_configs[0]
    assert (tmp_path / "batfish" / "configs" / first).read_bytes() == (build_dir / "configs" / first).read_bytes()  # no RANCID header

    files = render_containerlab(open_build(build_dir), images=Images(nos={STUB: "registry.example/stub:2"}))
    topology = yaml.safe_load(files["stub-fabric.clab.yml"])
    switches = {name: node for name, node in topology["topology"]["nodes"].items() if node["kind"] == "stub-vm"}
    assert len(switches) == len(stub_configs)
    assert {node["image"] for node in switches.values()} == {"registry.example/stub:2"}
    name, node = next(iter(switches.items()))
    assert files[node["startup-config"]] == (build_dir / "configs" / f"{name}.stub").read_text()
    ends = [end for link in topology["topology"]["links"] for end in link["endpoints"] if end.split(":")[0] in switches]
    assert ends and all(end.split(":")[1].startswith("p") for end in ends)  # the links name the stub's wires


# --- the push and verify parts ------------------------------------------------------------------


def test_the_push_and_verify_parts_of_the_shipped_noses_name_what_exists():
    """PUSH and VERIFY name their NOS's day-2 code lazily ("module:attribute", imported when push
    or verify runs, so a misspelt one would only fail on a live switch): each resolves here."""
    from napalm.base import get_network_driver

    from fabricgen.verify.collect import READ_ONLY

    for name, package in registry.plugins().items():
        push, verify = package.PUSH, package.VERIFY
        driver = push.own_driver.load() if push.own_driver is not None else get_network_driver(push.napalm_driver)
        assert isinstance(driver, type) and all(hasattr(driver, method) for method in ("load_replace_candidate", "commit_config", "get_facts")), name
        for part in (push.candidate, push.replace_must_keep, verify.running_config, verify.port_mtus, verify.mask_slots):
            assert callable(part.load()), (name, part.reference)
        if verify.extensions is not None:
            extensions = verify.extensions.load()
            assert extensions and set(extensions) <= READ_ONLY and all(map(callable, extensions.values())), name
    assert len({package.PUSH.napalm_driver for package in registry.plugins().values()}) == len(registry.plugins())  # push keys its drivers by name


def test_a_push_part_of_the_wrong_kind_is_refused_naming_its_dataclass(stub_path):
    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    init.write_text(init.read_text().replace("PUSH = PushParts(", "PUSH = dict("))
    with pytest.raises(registry.NosRegistrationError, match="gives PUSH as dict, not PushParts"):
        registry.plugins()


def test_push_parts_refuse_a_transport_push_would_secure_with_neither_check():
    """push checks an SSH host key or a TLS certificate by the NOS's transport: a third value (a
    typo) must stop the NOS from loading, not leave its switches unverified."""
    from fabricgen.nos.interface import Lazy, PushParts

    anything = Lazy("builtins:str")
    fields = {"napalm_driver": "x", "own_driver": None, "commit_timer": None, "merge_refused": None, "candidate": anything, "replace_must_keep": anything}
    with pytest.raises(ValueError, match="transport 'http' is none of ssh, https"):
        PushParts(**fields, driver_options={}, transport="http")
    with pytest.raises(ValueError, match="driver_options ssl_verify: kinds are"):
        PushParts(**fields, driver_options={"ssl_verify": "bool"}, transport="https")
    with pytest.raises(ValueError, match="'nomodule' is not a reference"):
        Lazy("nomodule")


@pytest.mark.parametrize(
    "line, message",
    [
        ("SECRETS = ()", "gives SECRETS as tuple, not SecretSlots"),
        ("CATALOG_PLATFORM = dict", "gives CATALOG_PLATFORM as type, not a CatalogPlatform class or None"),
        ('BOOT_IMAGE = "stub-1.0"', "gives BOOT_IMAGE as str, not BootImage"),
    ],
)
def test_a_stage_part_of_another_kind_is_refused_naming_its_kind(stub_path, line, message):
    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    part = line.split(" = ")[0]
    text = "\n".join(line if row.startswith(f"{part} = ") else row for row in init.read_text().splitlines())
    init.write_text(text)
    with pytest.raises(registry.NosRegistrationError, match=message):
        registry.plugins()


STUB_SLOT = """
import re

from fabricgen.build.secrets import Rule, Slot

SECRETS = SecretSlots(
    slots=(Slot("stubnos", "TACACS+ key", "aaa key KEY", (Rule(1, 8, "#", "the stub's manual"),), line=re.compile(r"^aaa key (?P<value>\\S+)")),),
    files=("*.stub",),
)
"""


def test_a_stub_s_secret_slots_are_found_checked_and_masked(stub_path):
    _write_stub(stub_path)
    init = stub_path / STUB / "__init__.py"
    init.write_text(init.read_text().replace("SECRETS = SecretSlots(slots=(), files=())\n", STUB_SLOT))
    assert file_nos("configs/x.stub") == (STUB,)
    found, stray = placements("configs/x.stub", "hostname x\naaa key <<secret=stub-key>>\n")
    assert stray == [] and [(p.name, p.slot.nos, p.where) for p in found] == [("stub-key", STUB, "line 2")]
    [problem] = value_problems([(p.name, p.slot, None, "x") for p in found], Secrets({"stub-key": "a#b"}))
    assert "holds '#'" in problem.message and "(StubOS, aaa key KEY)" in problem.message
    assert mask_text("hostname x\naaa key s3cret\n", STUB) == "hostname x\naaa key <<masked>>\n"


# A NOS package present when fabricgen starts, as a folder fabricgen/nos/<name>/ is: the catalog's
# switch entries and the intent's boot images get a field for it when their models are defined,
# so this runs in a process of its own that adds the stub's folder before importing them.
STUB_PLATFORM = """
from typing import Literal

from fabricgen.nos.interface import CatalogPlatform


class StubPlatform(CatalogPlatform):
    queue_mode: Literal["fifo", "strict"] = "fifo"


CATALOG_PLATFORM = StubPlatform
"""

PROBE = """
import json, sys
from pathlib import Path
import fabricgen.nos
fabricgen.nos.__path__.append(sys.argv[1])
from fabricgen.basics.errors import CatalogError
from fabricgen.catalog import load_catalog
from fabricgen.intent.management import Management
from fabricgen.intent.schema import intent_schema

found = {"boot": intent_schema()["$defs"]["BootImages"]["properties"]["stubnos"]}
found["image"] = Management.model_validate({"boot": {"stubnos": "stub-2.0"}}).boot.image("stubnos")
hardware = Path(sys.argv[2])
model = load_catalog([hardware]).switches["STUB-SW-32X400"]
found["section"] = type(model.stubnos).__name__, model.stubnos.queue_mode
hardware.write_text(hardware.read_text().replace("queue_mode: strict", "queue_mode: wfq"))
try:
    load_catalog([hardware])
except CatalogError as refused:
    found["refused"] = [(list(p.field), p.line) for p in refused.problems]
print(json.dumps(found))
"""


def test_a_nos_package_there_at_start_gets_its_boot_image_and_its_catalog_section(tmp_path):
    root = tmp_path / "nos"
    _write_stub(root)
    init = root / STUB / "__init__.py"
    init.write_text(init.read_text().replace("CATALOG_PLATFORM = None\n", STUB_PLATFORM))
    hardware = tmp_path / "stub-hardware.yaml"
    hardware.write_text(HARDWARE + "    stubnos: {queue_mode: strict}\n")
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(root), str(hardware)], capture_output=True, text=True, timeout=120, check=False, cwd=Path(__file__).parents[1]
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["boot"] == {"anyOf": [{"pattern": "^stub-.+$", "type": "string"}, {"type": "null"}], "default": None, "description": "the stub's image"}
    assert found["image"] == "stub-2.0"
    assert found["section"] == ["StubPlatform", "strict"]
    line = HARDWARE.count("\n") + 1  # the section's line, as the file has it
    assert found["refused"] == [[["switches", "STUB-SW-32X400", "stubnos", "queue_mode"], line]]
