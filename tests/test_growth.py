"""Growing a cluster only adds: every cable (its id and both ends), every port, every address and
every ASN of the smaller build is in the larger one unchanged, in every network (backend,
frontend, storage, OOB management and console).

The two builds are compared through their own outputs (cabling.csv, ip-plan.csv, topology.json),
each built in-process without rendering device configs."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fabricgen.compiler.design.graph import Network, Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.diff import diff_builds
from fabricgen.diff.render import render_markdown, render_text
from fabricgen.reports import render_cabling, render_ip_plan, render_topology
from tests.conftest import INTENTS

# A 2-tier backend with frontend, separate storage, servers and an OOB network. Spine counts are
# pinned to the final size, as a growth plan does (the leaves' uplinks keep their spines).
WITH_HOST_FABRICS = """
name: grows
gpus: {gpus}
backend:
  spine: {{count: 16}}
frontend:
  storage: separate
  spine: {{model: N9K-C9364D-GX2A, count: 4}}
storage:
  spine: {{model: N9K-C9364D-GX2A, count: 2}}
storage_nodes: {{model: AFF-A90, count: 6}}
management_nodes: {{model: UCSC-C225-M8S, count: 3}}
oob: {{}}
"""


class Outputs:
    """One build's cabling, addresses and devices, keyed so that a grown build can be matched."""

    def __init__(self, path: Path):
        build = compile_intent(path, render=False)
        compiled = build.compiled
        self.compiled = compiled
        cabling = csv.DictReader(io.StringIO(render_cabling(compiled)["cabling.csv"]))
        self.cables = {row["cable_id"]: row for row in cabling}
        ip_plan = csv.DictReader(io.StringIO(render_ip_plan(compiled)["ip-plan.csv"]))
        self.addresses = {(row["device"], row["interface"], row["kind"]): row for row in ip_plan}
        topology = json.loads(render_topology(compiled, build.configs)["topology.json"])
        # a switch's qos summary counts its cabled ports: a core gaining pods rightly changes it
        self.nodes = {node["id"]: {k: v for k, v in node.items() if k != "qos"} for node in topology["nodes"]}
        self.links = {link["key"]: link for link in topology["links"]}


def leaves(outputs: Outputs, network: Network) -> int:
    return sum(1 for _ in outputs.compiled.fabric.by_role(Role.LEAF, network))


def grown(tmp_path: Path, text: str, gpus: int) -> Path:
    data = yaml.safe_load(text)
    data["gpus"] = gpus
    path = tmp_path / f"{data['name']}-{gpus}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def changed(before: dict, after: dict) -> list[str]:
    """What of `before` is missing or different in `after`, for a message that names it."""
    found = []
    for key, old in before.items():
        new = after.get(key)
        if new is None:
            found.append(f"{key}: missing")
        elif new != old:
            found.append(f"{key}: " + ", ".join(f"{field} {old.get(field)!r} -> {new.get(field)!r}" for field in old | new if old.get(field) != new.get(field)))
    return found


def assert_only_added(small: Outputs, large: Outputs) -> None:
    for what in ("cables", "addresses", "nodes", "links"):
        moved = changed(getattr(small, what), getattr(large, what))
        assert not moved, f"{len(moved)} {what} changed, e.g. {moved[:3]}"
    assert len(large.cables) > len(small.cables)


@pytest.fixture(scope="module")
def superpod(tmp_path_factory) -> tuple[Outputs, Outputs]:
    source = INTENTS / "superpod-4096.yaml"
    return Outputs(source), Outputs(grown(tmp_path_factory.mktemp("grown"), source.read_text(), 6144))


@pytest.mark.slow
def test_superpod_4096_to_6144_gpus_moves_nothing(superpod):
    small, large = superpod
    assert (small.compiled.sizing.pods, large.compiled.sizing.pods) == (4, 6)
    assert_only_added(small, large)


def test_every_network_of_the_superpod_is_compared(superpod):
    small, large = superpod
    networks = Counter(row["network"] for row in small.cables.values())
    kinds = Counter(row["kind"] for row in small.cables.values())
    assert set(networks) == {"backend", "oob"} and {"management", "console", "uplink", "fabric", "host"} <= set(kinds)
    # the grown cluster's new devices are where the stable key puts them: more OOB switches and
    # console lines after the old ones, and the old OOB switches' addresses where they were
    assert large.compiled.oob.switches > small.compiled.oob.switches
    management = [key for key in small.addresses if key[2] == "management"]
    assert len(management) == sum(1 for row in small.cables.values() if row["kind"] == "management")


def test_a_cluster_with_frontend_and_storage_grows_without_moving_anything(tmp_path):
    text = WITH_HOST_FABRICS.format(gpus=512)
    small_path = tmp_path / "grows.yaml"
    small_path.write_text(text)
    small, large = Outputs(small_path), Outputs(grown(tmp_path, text, 1024))
    networks = {row["network"] for row in small.cables.values()}
    assert networks == {"backend", "frontend", "storage", "oob"}
    # growth adds leaves to every data network
    for network in (Network.BACKEND, Network.FRONTEND, Network.STORAGE):
        assert leaves(large, network) > leaves(small, network), network
    assert_only_added(small, large)


# A frontend in 3 tiers (pods of 4 leaves, the core count pinned) beside a 2-tier backend.
THREE_TIER_FRONTEND = """
name: grows3
gpus: {gpus}
backend:
  spine: {{count: 32}}
frontend:
  tiers: 3
  pod_leaves: 4
  core: {{model: N9K-C9364D-GX2A, nos: nxos, count: 7}}
  asn: {{scheme: private-4byte, core: 4200100000, spine: 4200100001, leaf_first: 4200100100}}
oob: {{}}
"""


def test_a_3_tier_frontend_grows_by_pods_without_moving_anything(tmp_path):
    text = THREE_TIER_FRONTEND.format(gpus=1024)
    small_path = tmp_path / "grows3.yaml"
    small_path.write_text(text)
    small, large = Outputs(small_path), Outputs(grown(tmp_path, text, 1536))
    pods = (small.compiled.plans[Network.FRONTEND].pods, large.compiled.plans[Network.FRONTEND].pods)
    assert pods == (5, 7)  # 10 -> 14 leaf pairs of 14 nodes, 2 pairs a pod
    assert_only_added(small, large)


def test_the_comparison_catches_a_moved_cable(tmp_path):
    """The comparison can fail: the same cluster with smaller scalable units (a redesign, not
    growth) puts leaves, blocks and cables elsewhere, and that is reported."""
    text = WITH_HOST_FABRICS.format(gpus=512)
    small_path = tmp_path / "grows.yaml"
    small_path.write_text(text)
    data = yaml.safe_load(text)
    data["backend"]["scalable_unit_gpus"] = 128  # a different unit: every block starts elsewhere
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(data))
    with pytest.raises(AssertionError, match="changed"):
        assert_only_added(Outputs(small_path), Outputs(other))


# --- growth that moves the spines: named in build and diff, and kept additive by a pin ----------


SIMPLE = "name: simple\ngpus: {gpus}\n{pin}"
PINNED_SPINES = "backend:\n  spine: {count: 8}\n"


def growth_notes(build) -> list[str]:
    return [note for note in build.compiled.sizing.notes if note.startswith("growth:")]


def test_build_says_when_one_more_unit_changes_the_spine_count(tmp_path):
    path = tmp_path / "simple.yaml"
    path.write_text(SIMPLE.format(gpus=256, pin=""))
    [note] = growth_notes(compile_intent(path, render=False))
    # 8 leaves x 32 uplinks on 4 spines; 16 leaves need 8: every leaf's 32 uplinks move
    assert "one more scalable unit (512 GPUs) takes 8 spines instead of 4" in note
    assert "pin backend.spine.count: 8 (one more unit) or 32 (one link from each leaf to each spine: up to 2,048 GPUs)" in note
    # pinned, the note goes, and growing by a unit only adds
    path.write_text(SIMPLE.format(gpus=256, pin=PINNED_SPINES))
    small = Outputs(path)
    assert growth_notes(small) == []
    assert_only_added(small, Outputs(grown(tmp_path, path.read_text(), 512)))


def test_build_says_when_one_more_unit_needs_3_tiers():
    [note] = growth_notes(compile_intent(INTENTS / "dual-plane-2048.yaml", render=False))
    assert "one more scalable unit (2,304 GPUs) needs 3 tiers" in note and "tiers: 3" in note


def test_diff_names_a_spine_count_change_and_the_pin_that_avoids_it(tmp_path):
    small, large = tmp_path / "small.yaml", tmp_path / "large.yaml"
    small.write_text(SIMPLE.format(gpus=256, pin=""))
    large.write_text(SIMPLE.format(gpus=512, pin=""))
    result = diff_builds(str(small), str(large))
    [note] = [note for note in result.notes if "spine count" in note]
    assert "backend spine count changes from 4 to 8" in note
    # of the 8 leaves' 256 uplinks, all but those whose spine port happens to stay move
    moved = re.search(r"(\d+) uplink ports of 8 leaves", note)
    assert moved and 200 < int(moved.group(1)) <= 256, note
    assert "backend.spine.count: 8" in note
    assert note in render_markdown(result) and any(note in line for line, _ in render_text(result))
    # with the spines pinned on both sides the growth only adds: no note
    small.write_text(SIMPLE.format(gpus=256, pin=PINNED_SPINES))
    large.write_text(SIMPLE.format(gpus=512, pin=PINNED_SPINES))
    result = diff_builds(str(small), str(large))
    assert not [note for note in result.notes if "spine count" in note]
    assert not result.cabling.removed and not result.cabling.recabled


SHIPPED = sorted(INTENTS.glob("*.yaml"))
# cisco-256-gpu keeps the white paper's deployed counts as at_least (8 frontend leaves where 6
# suffice, 4 OOB switches where 3 do): 512 GPUs need 10 and 5, which at_least builds.


@pytest.mark.parametrize("intent", [pytest.param(path, id=path.stem) for path in SHIPPED])
def test_every_shipped_intent_grows_by_one_unit_changing_only_gpus(tmp_path, intent):
    sizing = compile_intent(intent, render=False).compiled.sizing
    text = intent.read_text()
    data = yaml.safe_load(text)
    if "nodes" in data:
        data["nodes"] += sizing.su_nodes
    else:
        data["gpus"] += sizing.su_nodes * sizing.gpus_per_node
    path = tmp_path / intent.name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    compile_intent(path, render=False)  # no refusal
