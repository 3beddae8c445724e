"""Growing a cluster only adds: every cable (its id and both ends), every port, every address and
every ASN of the smaller build is in the larger one unchanged, in every network (backend,
frontend, storage, OOB management and console).

The two builds are compared through their own outputs (cabling.csv, ip-plan.csv, topology.json),
each built in-process without rendering device configs."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fabricgen.compiler.design.graph import Network, Role
from fabricgen.compiler.pipeline import compile_intent
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
