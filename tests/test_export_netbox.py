"""`fabricgen export netbox`: the CSV files (the columns of NetBox 4.7.3's import forms) and the
push's planner (`fabricgen.export.netbox_plan`) against plain dicts shaped as NetBox's REST API
returns objects: no server here (tests/test_netbox_live.py pushes into a real NetBox)."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build as build_intent
from tests.conftest import INTENTS
from tests.push_build import rehash

runner = CliRunner()


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 256-GPU build with a rack layout, and the 32-GPU build."""
    directory = tmp_path_factory.mktemp("netbox-builds")
    intent = directory / "c256-layout.yaml"
    intent.write_text((INTENTS / "cisco-256-gpu.yaml").read_text().replace("name: cisco-256-gpu", "name: c256-layout") + "\nlayout: {}\n")
    build_intent(intent, directory / "c256-layout")
    build_intent(INTENTS / "small-32-gpu.yaml", directory / "small-32-gpu")
    twin = directory / "small-twin.yaml"  # the same fabric under another name: the same default pools
    twin.write_text((INTENTS / "small-32-gpu.yaml").read_text().replace("name: small-32-gpu", "name: small-twin"))
    build_intent(twin, directory / "small-twin")
    return {"layout": directory / "c256-layout", "small": directory / "small-32-gpu", "twin": directory / "small-twin"}


def export(build_dir: Path, destination: Path, *options: str) -> Path:
    result = runner.invoke(app, ["export", "netbox", str(build_dir), "-o", str(destination), *options])
    assert result.exit_code == 0, result.output
    return destination


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def data_of(build_dir: Path):
    from fabricgen.export.netbox import netbox_data
    from fabricgen.export.source import open_build

    return netbox_data(open_build(build_dir))


# --- the CSV files ---------------------------------------------------------------------------------

# Columns checked against NetBox 4.7.3's import forms: netbox/dcim/forms/bulk_import.py,
# ipam/forms/bulk_import.py, tenancy/forms/bulk_import.py, extras/forms/bulk_import.py (each form's
# Meta.fields; `tags` from netbox/forms/bulk_import.py NetBoxModelImportForm)
NETBOX_COLUMNS = {
    "tags.csv": ["name", "slug", "color", "description"],
    "manufacturers.csv": ["name", "slug"],
    "device-roles.csv": ["name", "slug", "color"],
    "platforms.csv": ["name", "slug", "manufacturer"],
    "device-types.csv": ["manufacturer", "model", "slug", "part_number", "u_height"],
    "rirs.csv": ["name", "slug", "is_private"],
    "tenants.csv": ["name", "slug", "tags"],
    "sites.csv": ["name", "slug", "status", "tenant", "tags"],
    "vrfs.csv": ["name", "tenant", "enforce_unique", "tags"],
    "racks.csv": ["site", "name", "status", "width", "u_height", "tenant", "tags"],
    "asns.csv": ["asn", "rir", "tags"],
    "vlans.csv": ["site", "vid", "name", "tenant", "status", "tags"],
    "prefixes.csv": ["prefix", "vrf", "tenant", "status", "scope_type", "scope_name", "description", "tags"],
    "devices.csv": ["name", "role", "tenant", "manufacturer", "device_type", "platform", "status", "site", "rack", "position", "face", "tags"],
    "interfaces.csv": ["device", "name", "type", "speed", "mgmt_only", "description", "tags"],
    "console-ports.csv": ["device", "name", "type", "tags"],
    "console-server-ports.csv": ["device", "name", "type", "tags"],
    "cables.csv": [
        "side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
        "type", "status", "tenant", "label", "length", "length_unit", "tags",
    ],
    "ip-addresses.csv": ["address", "vrf", "tenant", "status", "role", "device", "interface", "is_primary", "is_oob", "description", "tags"],
    "inventory-items.csv": ["device", "name", "status", "part_id", "component_type", "component_name", "description", "tags"],
}  # fmt: skip


def test_netbox_csv_files_use_the_import_forms_columns(builds, tmp_path):
    out = export(builds["layout"], tmp_path / "nb")
    assert {p.name for p in out.iterdir()} == set(NETBOX_COLUMNS) | {"manifest.json", "fabricgen-output.json"}
    for name, columns in NETBOX_COLUMNS.items():
        with open(out / name, newline="") as handle:
            assert next(csv.reader(handle)) == columns, name
    cables = rows(builds["layout"] / "cabling.csv")
    outside = {n["id"] for n in json.loads((builds["layout"] / "topology.json").read_text())["nodes"] if n["model"] == "-"}
    inside = [c for c in cables if c["a_device"] not in outside and c["b_device"] not in outside]
    exported = rows(out / "cables.csv")
    assert sorted(c["label"] for c in exported) == sorted(c["cable_id"] for c in inside)
    interfaces = {(r["device"], r["name"]) for r in rows(out / "interfaces.csv")}
    consoles = {(r["device"], r["name"]) for r in rows(out / "console-ports.csv")} | {(r["device"], r["name"]) for r in rows(out / "console-server-ports.csv")}
    for c in exported:
        for side in ("a", "b"):
            end = (c[f"side_{side}_device"], c[f"side_{side}_name"])
            assert end in (interfaces if c[f"side_{side}_type"] == "dcim.interface" else consoles), (c["label"], side)
    by_port = {(r["device"], r["name"]): r for r in rows(out / "interfaces.csv")}
    assert by_port["be-spine01", "Ethernet1/1"]["type"] == "400gbase-x-qsfpdd"  # QDD-400G-DR4-S in a QSFP-DD cage
    assert by_port["be-spine01", "Ethernet1/1"]["speed"] == "400000000"  # Kbps
    devices = {r["name"]: r for r in rows(out / "devices.csv")}
    topology = {n["id"]: n for n in json.loads((builds["layout"] / "topology.json").read_text())["nodes"]}
    assert devices["gpu0001"]["rack"] == topology["gpu0001"]["rack"] and devices["gpu0001"]["position"] == str(topology["gpu0001"]["ru"])
    assert {r["name"] for r in rows(out / "racks.csv")} == {n["rack"] for n in topology.values() if n.get("rack")}
    # scoped to the fabric: its tenant, VRF and tag on every object it owns
    assert {r["tenant"] for r in rows(out / "devices.csv")} == {"c256-layout"}
    assert {r["vrf"] for r in rows(out / "ip-addresses.csv")} | {r["vrf"] for r in rows(out / "prefixes.csv")} == {"c256-layout"}
    assert {r["tags"] for r in rows(out / "cables.csv")} == {"fabricgen,fabricgen-c256-layout"}
    # every device in the IP plan has its OOB address; switches' primary is the loopback, servers' the management address
    addresses = rows(out / "ip-addresses.csv")
    plan = rows(builds["layout"] / "ip-plan.csv")
    managed = {r["device"] for r in plan if r["kind"] == "management"}
    assert {r["device"] for r in addresses if r["is_oob"] == "true"} == managed
    primary = {r["device"]: r for r in addresses if r["is_primary"] == "true"}
    oob = {r["device"]: r["interface"] for r in addresses if r["is_oob"] == "true"}
    assert primary["be-spine01"]["interface"] == "Loopback0" and oob["be-spine01"] == "mgmt0"
    assert primary["gpu0001"]["interface"] == "mgmt" and oob["gpu0001"] == "bmc"  # the host OS; the BMC out of band
    assert len(primary) == len({r["device"] for r in plan if r["kind"] in ("loopback", "management")})
    # optics as inventory items on the interface they sit in
    optics = {(r["device"], r["component_name"]): r["part_id"] for r in rows(out / "inventory-items.csv")}
    assert optics == {(c[f"{s}_device"], c[f"{s}_port"]): c[f"{s}_optic"] for c in inside for s in ("a", "b") if c[f"{s}_optic"]}


def test_prefixes_are_the_subnets_and_the_pools_they_span():
    from fabricgen.build.build_dir import AddressRow
    from fabricgen.export.netbox import fabric_prefixes

    def row(address: str, kind: str, device: str = "leaf1") -> AddressRow:
        return AddressRow.model_validate(
            {
                "network": "backend",
                "device": device,
                "interface": "Ethernet1/1",
                "address": address,
                "kind": kind,
                "gateway": "",
                "peer_device": "",
                "peer_interface": "",
                "peer_address": "",
            }
        )

    prefixes = fabric_prefixes(
        [
            row("10.0.128.1/32", "loopback"), row("10.0.128.9/32", "loopback"), row("10.8.0.0/31", "fabric"), row("10.8.0.6/31", "fabric"),
            row("172.16.0.2/26", "management"), row("172.16.0.70/26", "management"), row("192.0.2.1/31", "host", "outside"),
        ],
        {"leaf1"},
    )  # fmt: skip
    assert prefixes == [
        ("10.0.128.0/28", "container", "backend loopback pool"),
        ("10.8.0.0/29", "container", "backend fabric pool"),  # the /31 links are in it, not prefixes of their own
        ("172.16.0.0/25", "container", "backend management pool"),
        ("172.16.0.0/26", "active", "backend management"),
        ("172.16.0.64/26", "active", "backend management"),
    ]


@pytest.mark.parametrize("rack", ["=cmd|' /C calc'!A0", "+1+1", "@SUM(1)", "-2+3"])
def test_netbox_csv_cells_a_spreadsheet_would_run_get_a_quote_and_the_push_keeps_the_name(builds, tmp_path, rack):
    """A rack name of an edited build (free text in topology.json) that a spreadsheet would run as a
    formula (OWASP, CSV Injection): the CSV files start it with a quote, the API gets it as it is."""
    from fabricgen.export.netbox_plan import wanted_objects

    edited = tmp_path / "layout"
    shutil.copytree(builds["layout"], edited)
    topology = json.loads((edited / "topology.json").read_text())
    placed = [node["id"] for node in topology["nodes"] if node.get("rack") == "R01-01"]
    for node in topology["nodes"]:
        if node["id"] in placed:
            node["rack"] = rack
    (edited / "topology.json").write_text(json.dumps(topology))
    rehash(edited, "topology.json")
    out = export(edited, tmp_path / "nb")
    assert "'" + rack in {r["name"] for r in rows(out / "racks.csv")}
    assert {r["rack"] for r in rows(out / "devices.csv") if r["name"] in placed} == {"'" + rack}
    for path in sorted(out.glob("*.csv")):
        with open(path, newline="") as handle:
            started = [cell for row in csv.reader(handle) for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
        assert started == [], (path.name, started[:3])
    wanted = wanted_objects(data_of(edited), "c256-layout")
    assert rack in {w.fields["name"] for w in wanted if w.kind == "dcim.racks"}


# --- the planner -------------------------------------------------------------------------------


CHOICES = {"status", "type", "face", "role", "length_unit", "width"}  # fields NetBox returns as {value, label}


def as_netbox_returns(fields: dict, ids: dict, next_id: int) -> dict:
    """A wanted object as NetBox 4.7's REST API lists it once made (a simulation for the planner,
    written from its serializers: a related object nested with its id and name, a choice as
    {value, label}, a decimal as a float, tags nested with their slug, a blank field null)."""
    from fabricgen.export.netbox_plan import Ref, resolve

    record: dict = {"id": next_id}
    for name, value in fields.items():
        if isinstance(value, Ref):
            record[name] = {"id": resolve(value, ids), "name": value.key[-1], "slug": value.key[-1]}
        elif name == "tags":
            record[name] = [{"id": resolve(ref, ids), "slug": ref.key[0], "name": ref.key[0]} for ref in value]
        elif name in ("a_terminations", "b_terminations"):
            record[name] = [{"object_type": t["object_type"], "object_id": resolve(t["object_id"], ids), "object": {"id": 0}} for t in value]
        elif name in CHOICES and value is not None:
            record[name] = {"value": value, "label": str(value).title()}
        elif isinstance(value, int | float) and not isinstance(value, bool):
            record[name] = float(value) if name in ("u_height", "position", "length") else value
        else:
            record[name] = None if value == "" and name == "face" else value
    return record


def netbox_after_push(wanted: list) -> tuple[dict, dict]:
    """(existing, ids) as a NetBox holding exactly `wanted` would list them."""
    from fabricgen.export.netbox_plan import DEVICE_ADDRESSES

    existing: dict = {}
    ids: dict = {}
    for number, want in enumerate(wanted, 1):
        if want.kind == DEVICE_ADDRESSES:
            continue
        ids.setdefault(want.kind, {})[want.key] = number
    for number, want in enumerate(wanted, 1):
        if want.kind == DEVICE_ADDRESSES:
            existing["dcim.devices"][want.key].update(as_netbox_returns(want.fields, ids, ids["dcim.devices"][want.key]))
            continue
        existing.setdefault(want.kind, {})[want.key] = as_netbox_returns(want.fields, ids, number)
    return existing, ids


def plans(wanted: list, existing: dict, ids: dict, fabric: str, delete: bool = False) -> dict:
    from fabricgen.export.netbox_plan import DEVICE_ADDRESSES, KINDS, plan_kind

    grouped: dict = {}
    for want in wanted:
        grouped.setdefault(want.kind, []).append(want)
    return {
        kind.name: plan_kind(
            kind, grouped.get(kind.name, []), existing.get("dcim.devices" if kind.name == DEVICE_ADDRESSES else kind.name, {}), ids, fabric, delete=delete
        )
        for kind in KINDS
    }


@pytest.fixture(scope="module")
def small_wanted(builds):
    from fabricgen.export.netbox_plan import wanted_objects

    return wanted_objects(data_of(builds["small"]), "small-32-gpu")


def test_a_first_push_creates_everything_in_dependency_order(small_wanted):
    from fabricgen.export.netbox_plan import DEVICE_ADDRESSES, KINDS, Ref

    order = [kind.name for kind in KINDS]

    def refs(value):
        if isinstance(value, Ref):
            yield value
        elif isinstance(value, list):
            for item in value:
                yield from refs(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from refs(item)

    keys = {(w.kind, w.key) for w in small_wanted}
    for want in small_wanted:
        for ref in refs(want.fields):
            assert order.index(ref.kind) < order.index(want.kind), (want.kind, want.key, ref)
            assert (ref.kind, ref.key) in keys, (want.kind, want.key, ref)  # every related object is one of the build's
    planned = plans(small_wanted, {}, {}, "small-32-gpu")
    creates = {name: len(p.creates) for name, p in planned.items()}
    wanted_counts: dict = {}
    for want in small_wanted:
        wanted_counts[want.kind] = wanted_counts.get(want.kind, 0) + 1
    assert creates == {name: 0 if name == DEVICE_ADDRESSES else wanted_counts.get(name, 0) for name in order}
    assert all(not p.updates and not p.deletes for p in planned.values())


def test_every_object_is_scoped_to_its_fabric(small_wanted):
    from fabricgen.export.netbox_plan import KIND, Ref

    own = {Ref("extras.tags", ("fabricgen",)), Ref("extras.tags", ("fabricgen-small-32-gpu",))}
    for want in small_wanted:
        if KIND[want.kind].shared or not KIND[want.kind].creates:
            continue
        assert set(want.fields["tags"]) == own, (want.kind, want.key)
        if "tenant" in want.fields:
            assert want.fields["tenant"] == Ref("tenancy.tenants", ("small-32-gpu",))
        if "vrf" in want.fields:
            assert want.fields["vrf"] == Ref("ipam.vrfs", ("small-32-gpu",))
        if "site" in want.fields:
            assert want.fields["site"] == Ref("dcim.sites", ("small-32-gpu",))
    kinds = {w.kind for w in small_wanted}
    assert {"ipam.vrfs", "ipam.prefixes", "ipam.asns", "ipam.rirs", "dcim.inventory_items"} <= kinds  # no SVI: no VLAN
    rir = next(w for w in small_wanted if w.kind == "ipam.rirs")
    assert rir.fields["is_private"] is True  # NetBox wants private ASNs under an RIR marked private


def test_devices_get_their_oob_and_primary_address(builds):
    """The 256-GPU build (small-32-gpu has no OOB network: no management addresses)."""
    from fabricgen.export.netbox_plan import DEVICE_ADDRESSES, Ref, wanted_objects

    wanted = wanted_objects(data_of(builds["layout"]), "c256-layout")
    addresses = {w.key: w.fields for w in wanted if w.kind == DEVICE_ADDRESSES}
    devices = {w.key for w in wanted if w.kind == "dcim.devices"}
    assert set(addresses) == devices
    spine = next(k for k in devices if "spine" in k[0])
    gpu = next(k for k in devices if k[0].startswith("gpu"))
    assert isinstance(addresses[spine]["oob_ip"], Ref) and addresses[spine]["primary_ip4"].key[2].lower().startswith("loopback")
    assert addresses[gpu]["primary_ip4"].key[2] == "mgmt" and addresses[gpu]["oob_ip"].key[2] == "bmc"  # host OS; BMC out of band
    ips = {w.key for w in wanted if w.kind == "ipam.ip_addresses"}
    managed = {r["device"] for r in rows(builds["layout"] / "ip-plan.csv") if r["kind"] == "management"}
    assert {k[0] for k, fields in addresses.items() if fields["oob_ip"] is not None} == managed and managed
    for fields in addresses.values():
        for value in fields.values():
            assert value is None or value.key in ips


def test_a_second_push_of_the_same_build_changes_nothing(small_wanted):
    existing, ids = netbox_after_push(small_wanted)
    planned = plans(small_wanted, existing, ids, "small-32-gpu", delete=True)
    changed = {name: (len(p.creates), len(p.updates), len(p.deletes)) for name, p in planned.items() if p.creates or p.updates or p.deletes}
    assert changed == {}, [(name, [u.changes for u in p.updates[:2]]) for name, p in planned.items() if p.updates][:3]
    assert sum(p.unchanged for p in planned.values()) == len(small_wanted)


def test_a_changed_field_is_the_only_change(small_wanted):
    import copy

    existing, ids = netbox_after_push(small_wanted)
    wanted = copy.deepcopy(small_wanted)
    interface = next(w for w in wanted if w.kind == "dcim.interfaces")
    interface.fields["description"] = "moved"
    planned = plans(wanted, existing, ids, "small-32-gpu")
    updates = [(name, u.key, u.changes) for name, p in planned.items() for u in p.updates]
    assert updates == [("dcim.interfaces", interface.key, {"description": "moved"})]
    assert all(not p.creates for p in planned.values())


def test_only_the_fabrics_own_objects_are_changed_or_deleted(small_wanted):
    """Objects without the fabric's tag (another fabric's, hand-made ones) are never updated or
    deleted, even when listed with the same identity; the fabric's own objects the build no longer
    has are deleted only with delete=True."""
    existing, ids = netbox_after_push(small_wanted)
    devices = existing["dcim.devices"]
    theirs = next(iter(devices))
    devices[theirs]["tags"] = [{"id": 999, "slug": "fabricgen-other"}]
    devices[theirs]["description"] = "hand-made"
    devices[("gone",)] = {**devices[next(k for k in devices if k != theirs)], "id": 5000, "name": "gone"}
    devices[("handmade",)] = {"id": 5001, "name": "handmade", "tags": []}
    planned = plans(small_wanted, existing, ids, "small-32-gpu")
    assert planned["dcim.devices"].updates == [] and planned["dcim.devices"].deletes == [] and planned["dcim.devices"].stale == 1
    planned = plans(small_wanted, existing, ids, "small-32-gpu", delete=True)
    assert planned["dcim.devices"].deletes == [(("gone",), 5000)]
    # another fabric reads the same NetBox: nothing of small-32-gpu is its to change or delete
    other = plans([], existing, ids, "cisco-256-gpu", delete=True)
    assert all(not p.deletes and not p.updates for p in other.values())


def test_shared_objects_are_created_when_missing_and_never_changed(small_wanted):
    existing, ids = netbox_after_push(small_wanted)
    manufacturer = next(iter(existing["dcim.manufacturers"].values()))
    manufacturer["name"] = "Renamed by hand"
    manufacturer["tags"] = []
    del existing["ipam.asns"][next(iter(existing["ipam.asns"]))]
    planned = plans(small_wanted, existing, ids, "small-32-gpu", delete=True)
    assert planned["dcim.manufacturers"].updates == [] and planned["dcim.manufacturers"].deletes == []
    assert len(planned["ipam.asns"].creates) == 1 and planned["ipam.asns"].deletes == []


def test_two_fabrics_with_the_same_default_pools_do_not_collide(builds, small_wanted):
    """small-32-gpu and a copy named otherwise have the same addresses: each in its own VRF."""
    from fabricgen.export.netbox_plan import wanted_objects

    other = wanted_objects(data_of(builds["twin"]), "small-twin")
    ours = {w.key: w.fields["vrf"] for w in small_wanted if w.kind == "ipam.ip_addresses"}
    theirs = {w.key: w.fields["vrf"] for w in other if w.kind == "ipam.ip_addresses"}
    assert set(ours) == set(theirs) and all(ours[k] != theirs[k] for k in ours)


@pytest.mark.parametrize(
    ("wanted", "current", "equal"),
    [
        (3, {"id": 3, "name": "x"}, True),
        (4, {"id": 3, "name": "x"}, False),
        ("planned", {"value": "planned", "label": "Planned"}, True),
        (1.0, 1, True),
        (42, 42.0, True),
        (None, "", True),
        ("", None, True),
        (None, {"id": 3}, False),
        (True, 1, False),
        ([1, 2], [{"id": 2}, {"id": 1}], True),  # tags: a set
    ],
)
def test_same_reads_netbox_values_as_they_are_sent(wanted, current, equal):
    from fabricgen.export.netbox_plan import same

    assert same(wanted, current, "tags" if isinstance(wanted, list) else "x") is equal


def test_bulk_errors_name_each_refused_object():
    from fabricgen.export.netbox_push import _errors

    answer = {"detail": "1 of 3 objects could not be created.", "errors": [{"index": 1, "errors": {"name": ["exists"]}}]}
    assert _errors(answer) == {1: "{'name': ['exists']}"}
    assert _errors({"detail": "x", "errors": [{"id": 17, "errors": {"__all__": ["no"]}}]}) == {17: "{'__all__': ['no']}"}
    assert _errors([{}, {"name": ["exists"]}]) == {1: "{'name': ['exists']}"}


# --- the command -------------------------------------------------------------------------------


def test_push_takes_its_token_from_the_environment_only(builds, tmp_path, monkeypatch):
    monkeypatch.delenv("NETBOX_TOKEN", raising=False)
    result = runner.invoke(app, ["export", "netbox", str(builds["small"]), "-o", str(tmp_path / "nb"), "--push", "http://127.0.0.1:9"])
    assert result.exit_code == 2 and "NETBOX_TOKEN" in result.output and not (tmp_path / "nb").exists()


def test_push_without_requests_names_the_extra(builds, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "requests", None)  # import requests raises ImportError
    monkeypatch.setenv("NETBOX_TOKEN", "0123456789abcdef")
    result = runner.invoke(app, ["export", "netbox", str(builds["small"]), "-o", str(tmp_path / "nb"), "--push", "http://127.0.0.1:9"])
    assert result.exit_code == 2 and "pip install 'fabricgen[netbox]'" in result.output
    assert not (tmp_path / "nb").exists() and "0123456789abcdef" not in result.output


@pytest.mark.parametrize("concurrency", ["0", "17"])
def test_concurrency_is_bounded(builds, tmp_path, monkeypatch, concurrency):
    monkeypatch.setenv("NETBOX_TOKEN", "0123456789abcdef")
    result = runner.invoke(
        app, ["export", "netbox", str(builds["small"]), "-o", str(tmp_path / "nb"), "--push", "http://127.0.0.1:9", "--concurrency", concurrency]
    )
    assert result.exit_code == 2 and "--concurrency" in result.output and "1 to 16" in result.output
    assert not (tmp_path / "nb").exists()


def test_batches_are_sized_by_how_fast_netbox_answers():
    """in_waves: 10 objects a request first, then as many as the slowest request of the wave
    before took a quarter of the timeout for (at most 4 times more, and the type's most). The
    clock is a counter the fake send advances (no timers): a NetBox taking 0.1 s an object, then
    a much faster one."""
    from concurrent.futures import ThreadPoolExecutor

    from fabricgen.export.netbox_push import in_waves

    now = [0.0]
    pace = {"seconds": 0.1}
    sizes: list[int] = []

    def send(batch: list) -> list:
        sizes.append(len(batch))
        now[0] += pace["seconds"] * len(batch)
        if len(sizes) == 4:
            pace["seconds"] = 0.001
        return batch

    with ThreadPoolExecutor(max_workers=1) as pool:  # one at a time: the fake clock is not shared by threads
        sent = [item for results in in_waves(pool, list(range(400)), send, 2, 50, 30.0, clock=lambda: now[0]) for item in results]
    assert sent == list(range(400))  # every object once, in order
    # 10 a request; then a quarter of 30 s at 0.1 s an object is 75 objects, but at most 4 x 10 = 40; then the type's most, 50
    assert sizes[:6] == [10, 10, 40, 40, 50, 50] and max(sizes) == 50


def test_a_cable_whose_ends_moved_is_made_again_and_other_changes_are_patched(small_wanted):
    """NetBox refuses a cable end on a port another cable holds: a cable whose ends moved is
    deleted and created (after every moved cable is deleted), not patched end by end."""
    import copy

    existing, ids = netbox_after_push(small_wanted)
    wanted = copy.deepcopy(small_wanted)
    cables = [w for w in wanted if w.kind == "dcim.cables"]
    cables[0].fields["a_terminations"], cables[1].fields["a_terminations"] = cables[1].fields["a_terminations"], cables[0].fields["a_terminations"]
    cables[2].fields["status"] = "connected"
    plan = plans(wanted, existing, ids, "small-32-gpu")["dcim.cables"]
    assert [u.key for u in plan.replaces] == [cables[0].key, cables[1].key] and all(u.want is not None for u in plan.replaces)
    assert [(u.key, u.changes) for u in plan.updates] == [(cables[2].key, {"status": "connected"})]
