"""NOS releases as data: every switch has a target release, configs are written for it, a feature
its release lacks is refused naming the minimum release, and the release shows in every report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fabricgen.basics.errors import CatalogError, CheckError, IntentError
from fabricgen.catalog import load_catalog
from fabricgen.catalog.model import release_key
from fabricgen.compiler.pipeline import build, compile_intent
from tests import cli_runner
from tests.conftest import build_refused

REPO = Path(__file__).parent.parent

EVPN_SONIC = """
name: evpn-sonic
gpus: 64
backend:
  scalable_unit_gpus: 32
  routing: vxlan-evpn
  leaf: {{nos: sonic{release}}}
"""


def test_releases_sort_as_released():
    names = ["master", "10.6", "202411", "10.5(3)F", "10.5", "10.4(4)M", "202405", "10.10"]
    assert sorted(names, key=release_key) == ["10.4(4)M", "10.5", "10.5(3)F", "10.6", "10.10", "202405", "202411", "master"]
    # a train is its first release: 10.5 is 10.5(1)
    assert release_key("10.5") == release_key("10.5(1)F")


def test_every_shipped_switch_has_a_known_release_and_reports_carry_it(tmp_path):
    _result, out = build(REPO / "intents" / "cisco-256-gpu.yaml", tmp_path / "out")
    nodes = json.loads((out / "topology.json").read_text())["nodes"]
    switches = [n for n in nodes if "nos" in n]
    assert switches and all(n["nos_release"] == "10.4" for n in switches)
    assert json.loads((out / "manifest.json").read_text())["nos_releases"] == {"nxos": ["10.4"]}
    assert "| backend | leaf | N9K-C9364D-GX2A | nxos | 10.4 |" in (out / "summary.md").read_text()
    leaf = next(n["id"] for n in switches if n["role"] == "leaf")
    assert "!written for NX-OS 10.4\n" in (out / "configs" / f"{leaf}.cfg").read_text()


def test_the_role_release_wins_over_the_catalog_default(write_intent):
    intent = write_intent('gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {nos: nxos, nos_release: "10.5(3)F"}\n')
    configs = compile_intent(intent, render=False).configs
    releases = {c.role.value: c.nos_release for c in configs.values()}
    assert releases == {"leaf": "10.5(3)F", "spine": "10.4"}


def test_an_unknown_release_is_refused_with_the_known_ones(write_intent):
    stderr = build_refused(write_intent('gpus: 64\nbackend:\n  leaf: {nos: nxos, nos_release: "10.2"}\n'))
    assert "backend.leaf.nos_release" in stderr and "NX-OS release 10.2 is not one fabricgen renders for" in stderr
    assert "10.3, 10.4, 10.5, 10.6" in stderr
    with pytest.raises(IntentError, match="not a release name"):
        compile_intent(write_intent('gpus: 64\nbackend:\n  leaf: {nos: sonic, nos_release: "2024-11; reboot"}\n'), render=False)


def test_a_feature_the_release_lacks_is_refused_naming_the_minimum_release(write_intent):
    stderr = build_refused(write_intent(EVPN_SONIC.format(release=', nos_release: "202411"')))
    assert re.search(r":6: backend\.leaf\.nos_release: .*SONiC 202411\): the EVPN anycast gateway .* needs SONiC master", stderr), stderr
    assert "fix: set nos_release: master for this role" in stderr
    build = compile_intent(write_intent(EVPN_SONIC.format(release=", nos_release: master"), name="ok"), render=False)
    leaves = [c for c in build.configs.values() if c.role.value == "leaf"]
    assert leaves and all("evpn-anycast-gateway" in c.features and c.nos_release == "master" for c in leaves)


def test_a_feature_no_release_has_names_the_setting_to_change(write_intent):
    intent = write_intent(
        "gpus: 64\nbackend:\n  leaf: {nos: sonic}\n  spine: {nos: sonic}\n  load_balancing: {hash_fields: [src-ip, dst-ip, ipv6-flow-label]}\n"
    )
    with pytest.raises(CheckError) as refused:
        compile_intent(intent, render=False)
    messages = [p.message for p in refused.value.problems if p.field and p.field[-1] == "nos_release"]
    assert messages and all("hashing on the IPv6 flow label needs SONiC 202505" in m for m in messages)


def test_a_model_default_release_must_exist_and_user_flavours_answer_every_feature(tmp_path):
    model = (REPO / "tests" / "test_user_hardware.py").read_text().split('HARDWARE = """')[1].split('"""')[0]
    bad_default = tmp_path / "a.yaml"
    bad_default.write_text(model.replace("    max_ecmp_paths: 64\n", '    max_ecmp_paths: 64\n    nos_release: {sonic: "201911"}\n', 1))
    with pytest.raises(CatalogError, match=r"sonic release 201911 is not one fabricgen knows.*202405, 202411"):
        load_catalog([bad_default])
    flavour = tmp_path / "b.yaml"
    flavour.write_text(
        "nos_releases:\n  vendor-sonic:\n    nos: sonic\n    description: a vendor's SONiC\n    releases: ['4.4']\n    default: '4.4'\n"
        "    features:\n      evpn-anycast-gateway: {since: '4.4', source: vendor guide}\n"
    )
    with pytest.raises(CatalogError, match="flavour vendor-sonic says nothing of banner-message, dlb, generic-hash, ipv6-flow-label-hash"):
        load_catalog([flavour])


def test_a_model_default_release_is_used_when_the_role_names_none(tmp_path, write_intent):
    model = (REPO / "tests" / "test_user_hardware.py").read_text().split('HARDWARE = """')[1].split('"""')[0]
    # a maintenance release, parentheses and all, is a release name the catalog takes
    (tmp_path / "lab-hardware.yaml").write_text(model.replace("    max_ecmp_paths: 64\n", '    max_ecmp_paths: 64\n    nos_release: {nxos: "10.5(3)F"}\n', 1))
    intent = write_intent(
        "catalog: [lab-hardware.yaml]\ngpus: 64\ngpu_node: LAB-GPU-4\nbackend:\n  scalable_unit_gpus: 64\n"
        '  leaf: {model: LAB-SW-32X100, nos: nxos}\n  spine: {model: LAB-SW-32X100, nos: nxos, nos_release: "10.6"}\n'
    )
    releases = {c.role.value: c.nos_release for c in compile_intent(intent, render=False).configs.values()}
    assert releases == {"leaf": "10.5(3)F", "spine": "10.6"}


def test_a_vendor_flavour_is_a_target_of_its_own(tmp_path, write_intent):
    features = "".join(f"      {name}: {{since: '4.4', source: vendor guide}}\n" for name in load_catalog().nos_releases["sonic"].features)
    (tmp_path / "vendor.yaml").write_text(
        "nos_releases:\n  vendor-sonic:\n    nos: sonic\n    description: a vendor's SONiC\n    releases: ['4.2', '4.4']\n    default: '4.4'\n"
        f"    features:\n{features}"
    )
    early = write_intent("catalog: [vendor.yaml]\n" + EVPN_SONIC.format(release=', nos_release: "4.2"'), name="early")
    with pytest.raises(CheckError, match=r"needs SONiC 4\.4 or later"):
        compile_intent(early, render=False)
    ok = compile_intent(write_intent("catalog: [vendor.yaml]\n" + EVPN_SONIC.format(release=', nos_release: "4.4"'), name="ok"), render=False)
    assert {c.nos_release for c in ok.configs.values() if c.role.value == "leaf"} == {"4.4"}


def test_diff_names_a_release_change(tmp_path, write_intent):
    old = write_intent("gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n", name="old")
    new = write_intent('gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  spine: {nos: nxos, nos_release: "10.6"}\n', name="new")
    result = cli_runner.fabricgen("diff", old, new, "--format", "json")
    assert result.returncode == 1, result.stderr
    changes = {d["device"]: d for d in json.loads(result.stdout)["devices"]}
    spines = [d for name, d in changes.items() if name.startswith("be-spine")]
    assert spines and all({"attribute": "nos_release", "old": "10.4", "new": "10.6"} in d["changes"] for d in spines)
    assert not any(name.startswith("be-su") for name in changes)


# --- the pinned boot image and the release the configs are written for -------------------------

BOOT = """
gpus: 64
backend:
  scalable_unit_gpus: 32
  leaf: {{nos: {nos}{model}{leaf_release}}}
  spine: {{nos: {nos}{model}}}
management: {{boot: {{{nos}: {image}}}}}
"""


@pytest.mark.parametrize(
    ("nos", "model", "leaf_release", "image", "says"),
    [
        # the spines run the default train 10.4, which 10.4(5)M is of; the leaves 10.5(3)F
        ("nxos", "", ', nos_release: "10.5(3)F"', "nxos64-cs.10.4.5.M.bin", "an image of NX-OS 10.4(5)M"),
        # EOS's default train is 4.34: a 4.34 hotfix image is of it, not of the leaves' 4.35
        ("eos", ", model: DCS-7060DX5-64S", ', nos_release: "4.35"', "EOS-4.34.1.1F.swi", "an image of EOS 4.34.1.1F"),
        # SONiC's default is 202411
        ("sonic", "", ', nos_release: "202505"', "SONiC-OS-202411.5", "an image of SONiC 202411"),
    ],
)
def test_a_pinned_image_of_another_release_is_refused(write_intent, nos, model, leaf_release, image, says):
    """The defect: leaves written for 10.5(3)F were told to boot the 10.4(5)M image, and the build
    said nothing; a push would then have run the configs on a release they were not written for."""
    stderr = build_refused(write_intent(BOOT.format(nos=nos, model=model, leaf_release=leaf_release, image=image)))
    assert "management.boot." + nos in stderr and says in stderr
    refusal = next(line for line in stderr.splitlines() if image in line)
    assert "be-su01-leaf1" in refusal and "spine" not in refusal


def test_an_image_of_the_release_or_its_train_builds_and_boots(write_intent, tmp_path):
    # the spines run the default train 10.4: 10.4(5)M is of it; the leaves run exactly 10.4(5)M
    intent = write_intent(BOOT.format(nos="nxos", model="", leaf_release=', nos_release: "10.4(5)M"', image="nxos64-cs.10.4.5.M.bin"))
    _result, out = build(intent, tmp_path / "out")
    configs = sorted((out / "configs").glob("*.cfg"))
    assert configs and all("boot nxos bootflash:/nxos64-cs.10.4.5.M.bin" in path.read_text() for path in configs)


def test_an_image_whose_name_names_no_release_is_noted_not_refused(write_intent):
    intent = write_intent(BOOT.format(nos="nxos", model="", leaf_release="", image="custom-build.bin"))
    notes = " ".join(compile_intent(intent, render=False).compiled.notes)
    assert "custom-build.bin" in notes and "cannot tell" in notes
