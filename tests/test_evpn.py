"""VXLAN EVPN: the whitepaper's clusters with EVPN backends (and frontends) on both NOS; every
building block present, FRR and SONiC's YANG accept the output, broken intents are refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from fabricgen.compiler.checks.configs import segments_agree, vteps_reachable
from fabricgen.compiler.design.graph import LinkKind, Network, Role
from fabricgen.compiler.pipeline import compile_intent
from tests.conftest import INTENTS, build_refused, needs_frr
from tests.nxos_parse import parse_nxos
from tests.sonic_yang import violations
from tests.test_render_sonic import vtysh_dryrun


def _evpn_intent(directory: Path, gpus: int, nos: str) -> Path:
    """The whitepaper intent with EVPN on the backend and the frontend, every switch on `nos`
    (the OOB switches stay NX-OS: the catalog has no SONiC for them)."""
    data = yaml.safe_load((INTENTS / f"cisco-{gpus}-gpu.yaml").read_text())
    data["name"] = f"evpn-{gpus}-{nos}"
    data["backend"]["routing"] = "vxlan-evpn"
    data["backend"].setdefault("evpn", {"segments": "per-rail"})
    data["frontend"]["routing"] = "vxlan-evpn"
    for section in ("backend", "frontend"):
        for role in ("leaf", "spine"):
            data[section][role]["nos"] = nos
        if nos == "sonic":
            data[section]["leaf"]["nos_release"] = "master"  # the first SONiC with an anycast gateway (SAG)
    path = directory / f"evpn-{gpus}-{nos}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def evpn_builds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("evpn")
    return {(gpus, nos): compile_intent(_evpn_intent(directory, gpus, nos)) for gpus in (256, 512) for nos in ("nxos", "sonic")}


def _leaves_and_spines(build):
    return [d for d in build.fabric.switches() if d.role in (Role.LEAF, Role.SPINE)]


@pytest.mark.parametrize("gpus", [256, 512])
def test_nxos_configs_hold_every_evpn_building_block(evpn_builds, gpus):
    build = evpn_builds[(gpus, "nxos")]
    for device in _leaves_and_spines(build):
        config = parse_nxos(build.files[f"configs/{device.name}.cfg"].decode())
        overlay = build.compiled.evpn_of(device.network)
        where = device.name
        assert "nv overlay evpn" in config.lines, where
        bgp = config.router_bgp
        assert "  address-family l2vpn evpn" in bgp, where
        for group in {"SPINES", "LEAVES"} & {line.split()[-1] for line in bgp if line.startswith("  template peer ")}:
            template = bgp[bgp.index(f"  template peer {group}") :]
            evpn_af = template[template.index("    address-family l2vpn evpn") :]
            assert "      send-community extended" in evpn_af[:4], where
        if device.role is Role.SPINE:
            # spines keep every route-target and pass the originating VTEP on as next hop
            assert "    retain route-target all" in bgp, where
            assert "      route-map FABRICGEN-NH-UNCHANGED out" in bgp, where
            assert config.blocks["route-map FABRICGEN-NH-UNCHANGED permit 10"] == ["set ip next-hop unchanged"], where
            assert "feature nv overlay" not in config.lines, where
            continue
        for feature in ("feature nv overlay", "feature vn-segment-vlan-based", "feature interface-vlan"):
            assert feature in config.lines, (where, feature)
        assert config.top("fabric forwarding anycast-gateway-mac ") == ["fabric forwarding anycast-gateway-mac 0200.0000.00aa"]
        nve = config.interfaces["nve1"]
        assert {"host-reachability protocol bgp", "source-interface loopback1", "no shutdown"} <= set(nve), where
        assert f"ip address {build.addresses.vteps[device.name]}/32" in config.interfaces["loopback1"], where
        segments = overlay.leaf_segments(device)
        assert segments, where
        evpn_block = config.blocks["evpn"]
        for s in segments:
            assert config.blocks[f"vlan {s.vlan}"] == [f"name {s.name}", f"vn-segment {s.vni}"], where
            svi = config.interfaces[f"Vlan{s.vlan}"]
            assert f"vrf member {s.tenant.vrf}" in svi and "fabric forwarding mode anycast-gateway" in svi, where
            assert f"ip address {s.gateway}/{s.prefixlen}" in svi, where
            assert f"member vni {s.vni}" in nve and "ingress-replication protocol bgp" in nve, where
            at = evpn_block.index(f"vni {s.vni} l2")
            assert evpn_block[at + 1 : at + 4] == ["rd auto", f"route-target import {s.route_target}", f"route-target export {s.route_target}"]
        for t in {s.tenant for s in segments}:
            vrf = config.blocks[f"vrf context {t.vrf}"]
            assert f"vni {t.l3_vni}" in vrf and f"route-target import {t.route_target} evpn" in vrf, where
            assert f"route-target export {t.route_target} evpn" in vrf, where
            assert f"member vni {t.l3_vni} associate-vrf" in nve, where
            assert config.blocks[f"vlan {t.l3_vlan}"][-1] == f"vn-segment {t.l3_vni}", where
            assert "ip forward" in config.interfaces[f"Vlan{t.l3_vlan}"], where
            assert f"  vrf {t.vrf}" in bgp, where
        # underlay: only loopbacks and the VTEP, no GPU block aggregate
        assert f"    network {build.addresses.vteps[device.name]}/32" in bgp, where
        assert not any("aggregate-address" in line for line in bgp), where
        for port in device.ports.values():
            if port.link is not None and port.link.kind is LinkKind.HOST:
                lines = config.interfaces[port.name]
                segment = overlay.segment_of[port.link.other(port)]
                assert f"switchport access vlan {segment.vlan}" in lines, (where, port.name)


@pytest.mark.parametrize("gpus", [256, 512])
def test_sonic_evpn_tables_meet_the_yang_constraints(evpn_builds, gpus):
    build = evpn_builds[(gpus, "sonic")]
    for device in _leaves_and_spines(build):
        db = json.loads(build.files[f"configs/{device.name}/config_db.json"])
        assert violations(db, build.configs[device.name].nos_release) == [], device.name
        if device.role is Role.SPINE:
            assert not {"VXLAN_TUNNEL", "VRF", "VXLAN_TUNNEL_MAP"} & set(db), device.name
            continue
        overlay = build.compiled.evpn_of(device.network)
        vtep = build.addresses.vteps[device.name]
        assert db["VXLAN_TUNNEL"] == {"vtep": {"src_ip": vtep}}
        assert db["VXLAN_EVPN_NVO"] == {"nvo": {"source_vtep": "vtep"}}
        assert f"Loopback1|{vtep}/32" in db["LOOPBACK_INTERFACE"]
        segments = overlay.leaf_segments(device)
        maps = {(row["vlan"], row["vni"]) for row in db["VXLAN_TUNNEL_MAP"].values()}
        for s in segments:
            assert (f"Vlan{s.vlan}", str(s.vni)) in maps
            assert db["VLAN_INTERFACE"][f"Vlan{s.vlan}"] == {"vrf_name": s.tenant.vrf, "static_anycast_gateway": "true"}
            assert f"Vlan{s.vlan}|{s.gateway}/{s.prefixlen}" in db["VLAN_INTERFACE"]
        for t in {s.tenant for s in segments}:
            assert db["VRF"][t.vrf] == {"vni": str(t.l3_vni)}
            assert (f"Vlan{t.l3_vlan}", str(t.l3_vni)) in maps
        assert db["SAG"] == {"GLOBAL": {"gateway_mac": "02:00:00:00:00:aa"}}


@needs_frr
@pytest.mark.parametrize("gpus", [256, pytest.param(512, marks=pytest.mark.slow)])
def test_frr_accepts_every_evpn_frr_conf(evpn_builds, gpus, tmp_path):
    build = evpn_builds[(gpus, "sonic")]
    confs = {d.name: build.files[f"configs/{d.name}/frr.conf"].decode() for d in _leaves_and_spines(build)}
    assert vtysh_dryrun(confs, tmp_path) == {}
    leaf = next(d for d in build.fabric.by_role(Role.LEAF, Network.BACKEND))
    text = confs[leaf.name]
    segment = build.compiled.evpn_of(Network.BACKEND).leaf_segments(leaf)[0]
    assert f"  vni {segment.vni}\n   route-target import {segment.route_target}\n   route-target export {segment.route_target}\n  exit-vni" in text
    assert "  advertise-all-vni" in text and f"vrf {segment.tenant.vrf}\n vni {segment.tenant.l3_vni}\nexit-vrf" in text
    assert f"router bgp {build.addresses.asns[leaf.name]} vrf {segment.tenant.vrf}" in text and "  advertise ipv4 unicast" in text
    spine = next(iter(build.fabric.by_role(Role.SPINE, Network.BACKEND)))
    assert "  neighbor LEAVES attribute-unchanged next-hop" in confs[spine.name]
    assert "advertise-all-vni" not in confs[spine.name]


def _bgp_instances(frr_conf: str) -> dict[str, list[str]]:
    """FRR: each `router bgp ...` line -> the lines of its block, up to its `exit`."""
    instances: dict[str, list[str]] = {}
    block: list[str] | None = None
    for line in frr_conf.splitlines():
        if line.startswith("router bgp "):
            block = instances.setdefault(line, [])
        elif line == "exit":
            block = None
        elif block is not None:
            block.append(line.strip())
    return instances


def _nxos_bgp_vrfs(config) -> dict[str, list[str]]:
    """NX-OS: each `vrf NAME` under `router bgp` -> its lines (every depth below it)."""
    vrfs: dict[str, list[str]] = {}
    block: list[str] | None = None
    for line in config.router_bgp:
        if line.startswith("  ") and not line.startswith("   "):
            block = vrfs.setdefault(line.strip().removeprefix("vrf "), []) if line.startswith("  vrf ") else None
        elif block is not None:
            block.append(line.strip())
    return vrfs


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_tenant_vrf_balances_over_every_vtep_of_a_subnet(evpn_builds, gpus):
    """A per-rail segment's subnet is announced (type 5) by the rail's leaf in every scalable unit,
    each leaf in its own ASN (RFC 7938): equal-length AS paths that differ. BGP multipath takes
    only identical AS paths unless `bestpath as-path multipath-relax` is set, and both NOSes set it
    per BGP instance (NX-OS: `router bgp` and each `vrf` under it; FRR: each `router bgp ... vrf`),
    so without it in the tenant VRF each remote subnet is installed via one VTEP of two, whatever
    `maximum-paths` says. Every BGP instance that may use several paths must relax: NX-OS configs,
    SONiC frr.conf and the NX-OS switches' routing twins alike."""
    nxos = evpn_builds[(gpus, "nxos")]
    vrfs_seen = 0
    for device in nxos.fabric.by_role(Role.LEAF):
        config = parse_nxos(nxos.files[f"configs/{device.name}.cfg"].decode())
        assert "  bestpath as-path multipath-relax" in config.router_bgp, device.name
        tenants = {s.tenant.vrf for s in nxos.compiled.evpn_of(device.network).leaf_segments(device)}
        vrfs = _nxos_bgp_vrfs(config)
        assert set(vrfs) == tenants, device.name
        for vrf, lines in vrfs.items():
            assert lines[0] == "bestpath as-path multipath-relax", (device.name, vrf)  # before the address family, as NX-OS shows it
            assert any(line.startswith("maximum-paths ") for line in lines), (device.name, vrf)
            vrfs_seen += 1
    frr_files = {name: data.decode() for name, data in nxos.files.items() if name.startswith("lab/frr/")}
    sonic = evpn_builds[(gpus, "sonic")]
    frr_files |= {name: data.decode() for name, data in sonic.files.items() if name.endswith("/frr.conf")}
    tenant_instances = 0
    for name, text in frr_files.items():
        for instance, lines in _bgp_instances(text).items():
            if any(line.startswith("maximum-paths ") and line != "maximum-paths 1" for line in lines):
                assert "bgp bestpath as-path multipath-relax" in lines, (name, instance)
                tenant_instances += " vrf " in instance
    assert vrfs_seen > 0 and tenant_instances > 0


def test_the_512_gpu_intent_runs_evpn_like_the_whitepaper(whitepaper):
    build = whitepaper[512]
    overlay = build.compiled.evpn_of(Network.BACKEND)
    assert overlay is not None and len(overlay.segments) == 8  # one per rail
    for segment in overlay.segments:
        members = overlay.members[segment.number]
        assert len(members) == 64 and {p.cage for p in members} == {segment.rail}  # rail r of all 64 nodes
        leaves = {p.link.other(p).device.name for p in members}
        assert len(leaves) == 2  # the rail's leaf in each scalable unit: the segment spans both
        assert segment.prefixlen == 25 and segment.route_target == f"{overlay.route_target_asn}:{segment.vni}"
    # every NIC's gateway is its segment's anycast gateway, on the NIC's own subnet
    for port, gateway in build.addresses.gateways.items():
        if port.link.network is Network.BACKEND:
            assert gateway == overlay.segment_of[port].gateway


def test_segments_and_tenants_per_tenant(write_intent):
    build = compile_intent(
        write_intent(
            """
            gpus: 256
            backend:
              routing: vxlan-evpn
              evpn:
                segments: per-tenant
                tenants:
                  - {name: train, nodes: "1-24"}
                  - {name: infer}
            """
        )
    )
    overlay = build.compiled.evpn_of(Network.BACKEND)
    assert [(s.name, s.vni, s.vlan) for s in overlay.segments] == [("train", 10001, 1001), ("infer", 10002, 1002)]
    assert [(t.vrf, t.l3_vni, t.l3_vlan) for t in overlay.tenants] == [("Vrf-train", 50001, 3001), ("Vrf-infer", 50002, 3002)]
    assert len(overlay.members[1]) == 24 * 8 and len(overlay.members[2]) == 8 * 8
    assert {p.device.index for p in overlay.members[2]} == set(range(25, 33))
    # each rail's leaf carries both tenants' segments and VRFs
    leaf = build.configs["be-su01-leaf3"]
    assert [s.name for s in leaf.evpn.segments] == ["train", "infer"] and len(leaf.evpn.vrfs) == 2


def test_a_vni_used_twice_is_refused(write_intent):
    text = """
    gpus: 256
    backend:
      routing: vxlan-evpn
      evpn:
        tenants:
          - {name: ai, l3_vni: 10003}
    """
    errors = build_refused(write_intent(text))
    assert ":6: backend.evpn.tenants[0].l3_vni: tenant ai and segment ai-rail3 both use VNI 10003" in errors


def test_a_route_target_shared_by_two_vnis_is_refused(write_intent):
    text = """
    gpus: 256
    backend:
      routing: vxlan-evpn
      evpn:
        tenants:
          - {name: a, nodes: "1-16"}
          - {name: b, route_target: "64512:50001"}
    """
    errors = build_refused(write_intent(text))
    assert ":7: backend.evpn.tenants[1].route_target: tenant b and tenant a both use route-target 64512:50001" in errors


def test_vlans_past_4094_and_overlapping_ranges_are_refused(write_intent):
    text = """
    gpus: 256
    backend:
      routing: vxlan-evpn
      evpn: {vlan_base: 3998, l3_vlan_base: 4000}
    """
    errors = build_refused(write_intent(text))
    assert "backend.evpn.l3_vlan_base: tenant ai and segment ai-rail3 both use VLAN 4001" in errors


def test_a_fabric_mtu_without_room_for_vxlan_is_refused_naming_the_hop(write_intent):
    errors = build_refused(write_intent("gpus: 256\nbackend:\n  routing: vxlan-evpn\n  mtu: 9000\n"))
    assert ":4: backend.mtu: be-spine01 Ethernet1/1: MTU 9000 is below the 9050 bytes this hop must carry" in errors
    assert "plus 50 bytes of VXLAN" in errors
    # the same MTU is fine without VXLAN (servers send 9000)
    assert compile_intent(write_intent("gpus: 256\nbackend:\n  mtu: 9000\n", name="plain"))


def test_tenants_must_cover_the_nodes_once(write_intent):
    errors = build_refused(
        write_intent(
            """
            gpus: 256
            backend:
              routing: vxlan-evpn
              evpn:
                tenants:
                  - {name: a, nodes: "1-20"}
                  - {name: b, nodes: "16-32"}
            """
        )
    )
    assert "node 16 is in tenant a and in tenant b" in errors


def test_config_checks_catch_leaves_that_disagree_on_a_segment(whitepaper):
    """Guards the renderers against a builder bug: a leaf whose route-target or VTEP drifts."""
    build = whitepaper[512]
    configs = dict(build.configs)
    leaf = configs["be-su02-leaf1"]
    drifted = replace(leaf.evpn.segments[0], route_target="64512:99")
    configs["be-su02-leaf1"] = replace(leaf, evpn=replace(leaf.evpn, segments=(drifted,)))
    [problem] = list(segments_agree(build.compiled, configs))
    assert problem.device == "be-su02-leaf1" and "route-target 64512:99 (not 64512:10001)" in problem.message
    unannounced = replace(leaf, bgp=replace(leaf.bgp, networks=leaf.bgp.networks[:1]))
    configs["be-su02-leaf1"] = unannounced
    [problem] = list(vteps_reachable(build.compiled, configs))
    assert problem.device == "be-su02-leaf1" and "not announced into the underlay" in problem.message
    assert list(segments_agree(build.compiled, build.configs)) == [] and list(vteps_reachable(build.compiled, build.configs)) == []
