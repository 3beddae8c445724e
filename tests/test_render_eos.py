"""Arista EOS configs: complete, consistent with the device configs, the cabling and the catalog;
lossless QoS, BGP and VXLAN EVPN as the intent says; every line of a documented shape.

The EOS builds are the white paper's two clusters with the backend on EOS (cisco-256-gpu on
DCS-7060DX5-64S leaves and spines; cisco-512-gpu, VXLAN EVPN, on DCS-7060DX5-64S leaves and
DCS-7060X6-64PE spines whose 800G cages are broken out to 2 x 400G). No EOS switch or parser runs
here: the configs are read back by the small block reader below.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from fabricgen.basics.errors import FabricgenError
from fabricgen.build.secrets import mask_text, placements
from fabricgen.catalog import load_catalog
from fabricgen.catalog.model import release_key
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.nos.eos.capabilities import MAX_MTU, watchdog_values
from fabricgen.nos.eos.render import _seconds, qos_profile_name, render_eos

INTENTS = Path(__file__).resolve().parents[1] / "intents"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "reference" / "eos.md"
MODELS = {256: ("DCS-7060DX5-64S", "DCS-7060DX5-64S"), 512: ("DCS-7060DX5-64S", "DCS-7060X6-64PE")}


def eos_variant(tmp_path: Path, gpus: int, edit=None) -> Path:
    """cisco-<gpus>-gpu with the backend's leaves and spines on EOS (MODELS); the frontend and
    the OOB switches stay on NX-OS. The shipped intent is not changed."""
    doc = yaml.safe_load((INTENTS / f"cisco-{gpus}-gpu.yaml").read_text())
    leaf, spine = MODELS[gpus]
    doc["backend"]["leaf"] = {"model": leaf, "nos": "eos"}
    doc["backend"]["spine"] = {"model": spine, "nos": "eos"}
    doc["name"] = f"cisco-{gpus}-gpu-eos"
    if edit:
        edit(doc)
    path = tmp_path / f"{doc['name']}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def eos_builds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("eos")
    return {gpus: compile_intent(eos_variant(directory, gpus)) for gpus in (256, 512)}


def build_of(write_intent, text: str):
    return compile_intent(write_intent(text))


class EosConfig:
    """An EOS config read back as blocks: each top-level line (not a `!` comment) with the lines
    indented below it, stripped, in order; `sections(block, header)` the lines under an indented
    header of that block (router bgp's `vlan 1001`, `address-family evpn`, a qos profile's queues)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.blocks: dict[str, list[str]] = {}
        self.raw: dict[str, list[str]] = {}
        current = None
        for line in self.lines:
            if not line.strip() or line.lstrip().startswith("!"):
                continue
            if not line.startswith(" "):
                current = line
                assert current not in self.blocks or not self.blocks[current], f"block {current!r} written twice"
                self.blocks.setdefault(current, [])
                self.raw.setdefault(current, [])
            else:
                assert current is not None, f"indented line before any block: {line!r}"
                self.blocks[current].append(line.strip())
                self.raw[current].append(line)

    def top(self, prefix: str) -> list[str]:
        return [line for line in self.blocks if line.startswith(prefix)]

    def sections(self, block: str) -> dict[str, list[str]]:
        """The second-level headers of a block (3 spaces in) with the lines under them (6)."""
        found: dict[str, list[str]] = {}
        header = None
        for line in self.raw[block]:
            if line.startswith("      "):
                assert header is not None
                found[header].append(line.strip())
            else:
                header = line.strip()
                found.setdefault(header, [])
        return found


def eos_configs(build) -> dict[str, EosConfig]:
    return {name: EosConfig(build.files[f"configs/{name}.cfg"].decode()) for name, config in build.configs.items() if config.nos == "eos"}


def router_bgp(config: EosConfig) -> str:
    [block] = config.top("router bgp ")
    return block


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_backend_switch_gets_one_complete_eos_config(eos_builds, gpus):
    build = eos_builds[gpus]
    configs = eos_configs(build)
    backend = {d.name for d in build.fabric.switches() if d.network.value == "backend"}
    assert set(configs) == backend and len(backend) == {256: 8 + 4, 512: 16 + 4}[gpus]
    for name, config in configs.items():
        device = build.configs[name]
        assert config.lines[-1] == "end" and config.lines[2] == f"! written for EOS {device.nos_release}"
        assert config.top("hostname ") == [f"hostname {name}"] and "service routing protocols model multi-agent" in config.blocks
        assert "ip routing" in config.blocks
    for name, device in build.configs.items():  # the frontend and the OOB switches stay NX-OS
        if device.nos == "nxos":
            assert "service routing protocols model multi-agent" not in build.files[f"configs/{name}.cfg"].decode()


@pytest.mark.parametrize("gpus", [256, 512])
def test_interfaces_are_the_device_configs(eos_builds, gpus):
    build = eos_builds[gpus]
    for name, config in eos_configs(build).items():
        device = build.configs[name]
        written = {line.removeprefix("interface "): lines for line, lines in config.blocks.items() if line.startswith("interface Ethernet")}
        assert set(written) == {i.name for i in device.interfaces}, name
        for i in device.interfaces:
            lines = written[i.name]
            assert lines[0] == f"description {i.description}", (name, i.name)
            if i.access_vlan is None:
                assert "no switchport" in lines and f"ip address {i.address}" in lines and f"mtu {MAX_MTU}" in lines, (name, i.name)
            else:
                assert f"switchport access vlan {i.access_vlan}" in lines and "spanning-tree portfast" in lines and "no switchport" not in lines
            bfd = [line for line in lines if line.startswith("bfd ")]
            assert bfd == (["bfd interval 150 min-rx 150 multiplier 3"] if i.bfd else []), (name, i.name)
        assert config.blocks["interface Loopback0"] == ["description router-id", f"ip address {device.loopback}/32"]
        management = config.blocks[f"interface {device.management.port}"]
        assert device.management.port == "Management1" and f"vrf {device.management.vrf}" in management
        assert f"ip address {device.management.address}" in management
        assert f"ip route vrf management 0.0.0.0/0 {device.management.gateway}" in config.blocks


def test_breakout_ports_carry_their_speed_and_eos_names(eos_builds):
    """The 512-GPU spines are 7060X6-64PE: 800G cages split 2 x 400G, Ethernet<cage>/1 and /5."""
    build = eos_builds[512]
    catalog = load_catalog()
    spines = [d for d in build.fabric.switches() if d.role is Role.SPINE and d.network.value == "backend"]
    assert spines and all(d.model == "DCS-7060X6-64PE" for d in spines)
    configs = eos_configs(build)
    for spine in spines:
        device = build.configs[spine.name]
        names = {i.name for i in device.interfaces}
        assert {name.rsplit("/", 1)[1] for name in names} == {"1", "5"}
        for i in device.interfaces:
            assert i.sub and i.name == catalog.switches["DCS-7060X6-64PE"].name_of("eos", i.cage, i.sub, 400)
            assert "speed 400g-4" in configs[spine.name].blocks[f"interface {i.name}"]
    leaves = [name for name, d in build.configs.items() if d.nos == "eos" and d.role is Role.LEAF]
    for name in leaves:  # 400G on 400G cages: no speed line
        assert not any(line.startswith("speed ") for block, lines in configs[name].blocks.items() for line in lines if block.startswith("interface "))


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_lossless_port_has_its_speeds_profile_with_pfc_and_the_catalogs_ecn(eos_builds, gpus):
    build = eos_builds[gpus]
    catalog = load_catalog()
    checked = 0
    for name, config in eos_configs(build).items():
        device = build.configs[name]
        qos = device.qos
        queue_mode = catalog.switches[device.model].eos.tx_queue
        for i in device.interfaces:
            assert i.lossless
            profile = qos_profile_name(i.speed_gbps)
            assert f"service-profile {profile}" in config.blocks[f"interface {i.name}"], (name, i.name)
            lines = config.blocks[f"qos profile {profile}"]
            assert "qos trust dscp" in lines and "priority-flow-control on" in lines and "priority-flow-control pause watchdog" in lines
            assert [line for line in lines if line.startswith("priority-flow-control priority ")] == [
                f"priority-flow-control priority {p} no-drop" for p in qos.lossless_priorities
            ]
            queues = config.sections(f"qos profile {profile}")
            ecn = qos.ecn[i.speed_gbps]
            assert queues[f"{queue_mode} {qos.lossless_priority}"] == [
                "no priority",
                f"bandwidth percent {qos.lossless_bandwidth_percent}",
                f"random-detect ecn minimum-threshold {ecn.min_kbytes} kbytes maximum-threshold {ecn.max_kbytes} kbytes max-mark-probability {ecn.drop_probability} weight 0",
            ]
            published = catalog.switches[device.model].qos.ecn.get(i.speed_gbps)
            if published is not None:  # the 7060X6-64PE's published 400G thresholds reach its config
                assert (ecn.min_kbytes, ecn.max_kbytes, ecn.drop_probability) == (published.min_kbytes, published.max_kbytes, published.drop_probability)
                checked += 1
    assert checked == (0 if gpus == 256 else 4 * 128)  # 4 spines of 128 ports (64 cages split in two) at 512 GPUs


def test_the_dscp_map_classifies_every_dscp_once_as_the_device_config_says(eos_builds):
    for build in eos_builds.values():
        for name, config in eos_configs(build).items():
            qos = build.configs[name].qos
            mapped: dict[int, int] = {}
            for line in config.top("qos map dscp "):
                values, tc = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", line).groups()
                for dscp in map(int, values.split()):
                    assert dscp not in mapped, (name, dscp)
                    mapped[dscp] = int(tc)
            assert set(mapped) == set(range(64))
            assert mapped == {dscp: qos.dscp_to_priority.get(dscp, 0) for dscp in range(64)}, name


def test_the_cnp_queue_is_strict_unless_it_is_eos_s_control_queue(write_intent):
    default = eos_configs(build_of(write_intent, _tiny("")))
    config = next(iter(default.values()))
    queues = config.sections(f"qos profile {qos_profile_name(400)}")
    assert [q for q in queues if "tx-queue" in q] == ["uc-tx-queue 0", "uc-tx-queue 3"]  # CNPs in class 7: EOS's strict control queue
    moved = eos_configs(build_of(write_intent, _tiny("  qos: {cnp_priority: 6, storage_dscp: [10], storage_priority: 4}\n")))
    config = next(iter(moved.values()))
    queues = config.sections(f"qos profile {qos_profile_name(400)}")
    assert queues["uc-tx-queue 6"] == ["priority strict"]
    assert queues["uc-tx-queue 4"][:2] == ["no priority", "bandwidth percent 20"] and queues["uc-tx-queue 0"] == ["no priority", "bandwidth percent 30"]
    assert "priority-flow-control priority 4 no-drop" in queues


def _tiny(backend_extra: str, routing: str = "ebgp", leaf: str = "DCS-7060DX5-64S", spine: str = "DCS-7060DX5-64S") -> str:
    return (
        "name: tiny-eos-test\ngpus: 16\nbackend:\n"
        f"  routing: {routing}\n  leaf: {{model: {leaf}, nos: eos}}\n  spine: {{model: {spine}, nos: eos}}\n" + backend_extra
    )


def test_the_pfc_watchdog_in_eos_seconds(write_intent):
    config = next(iter(eos_configs(build_of(write_intent, _tiny(""))).values()))
    assert config.top("priority-flow-control pause watchdog") == [
        "priority-flow-control pause watchdog default timeout 0.2",
        "priority-flow-control pause watchdog default recovery-time 0.4",
        "priority-flow-control pause watchdog default polling-interval 0.1",
        "priority-flow-control pause watchdog action drop",
    ]
    text = "  qos:\n    pfc_watchdog: {poll_interval_ms: 150, detection_ms: 450, restoration_ms: 60000, action: alert}\n"
    build = build_of(write_intent, _tiny(text))
    config = next(iter(eos_configs(build).values()))
    assert config.top("priority-flow-control pause watchdog") == [
        "priority-flow-control pause watchdog default timeout 0.45",
        "priority-flow-control pause watchdog default recovery-time 60",
        "priority-flow-control pause watchdog default polling-interval 0.15",
    ]
    assert any("PFC watchdog action alert: not written" in note for note in build.notes)
    off = next(iter(eos_configs(build_of(write_intent, _tiny("  qos: {pfc_watchdog: {enabled: false}}\n"))).values()))
    assert not off.top("priority-flow-control pause watchdog") and "priority-flow-control pause watchdog" not in off.text.replace("\n", " ")


def test_watchdog_numbers_are_milliseconds_rounded_up_to_what_eos_takes():
    from fabricgen.intent.model import PfcWatchdog

    assert watchdog_values(PfcWatchdog(poll_interval_ms=123, detection_ms=246, restoration_ms=369)) == {
        "timeout": (246, "detection_ms"),
        "polling-interval": (123, "poll_interval_ms"),
        "recovery-time": (369, "restoration_ms"),
    }
    # timeout and recovery-time take 2 decimals, the polling interval 3: never shorter than asked
    assert (_seconds(246, 2), _seconds(369, 2), _seconds(123, 3), _seconds(60000, 2), _seconds(5, 3)) == ("0.25", "0.37", "0.123", "60", "0.005")


def test_qos_off_writes_no_lossless_lines(write_intent):
    config = next(iter(eos_configs(build_of(write_intent, _tiny("  qos: {enabled: false}\n"))).values()))
    assert not config.top("qos ") and not config.top("priority-flow-control") and "service-profile" not in config.text


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_bgp_neighbor_appears_with_its_peer_group(eos_builds, gpus):
    build = eos_builds[gpus]
    for name, config in eos_configs(build).items():
        bgp = build.configs[name].bgp
        block = router_bgp(config)
        assert block == f"router bgp {bgp.asn}"
        lines = config.blocks[block]
        assert lines[:4] == [
            f"router-id {bgp.router_id}",
            "no bgp default ipv4-unicast",
            f"maximum-paths {bgp.maximum_paths} ecmp {bgp.maximum_paths}",
            "bgp bestpath as-path multipath-relax",
        ]
        written: dict[str, dict[str, str]] = {}
        for line in lines:
            match = re.fullmatch(r"neighbor (\d+\.\d+\.\d+\.\d+) (peer group|remote-as|description) (.+)", line)
            if match:
                written.setdefault(match[1], {})[match[2]] = match[3]
        assert written == {n.address: {"peer group": n.group, "remote-as": str(n.remote_asn), "description": n.description} for n in bgp.neighbors}, name
        for group in bgp.groups:
            assert f"neighbor {group.name} peer group" in lines and f"neighbor {group.name} bfd" in lines
            assert f"neighbor {group.name} ttl maximum-hops 1" in lines and f"neighbor {group.name} password 0 <<secret=bgp-backend>>" in lines
            if build.configs[name].evpn is None:
                assert f"neighbor {group.name} maximum-routes {group.maximum_prefix}" in lines and f"neighbor {group.name} idle-restart-timer 300" in lines
            else:  # EOS counts a session's EVPN routes too
                assert f"neighbor {group.name} maximum-routes 0" in lines
        ipv4 = config.sections(block)["address-family ipv4"]
        for group in bgp.groups:
            assert [
                f"neighbor {group.name} activate",
                f"neighbor {group.name} route-map FABRICGEN-IN in",
                f"neighbor {group.name} route-map FABRICGEN-OUT out",
            ] == [line for line in ipv4 if line.startswith(f"neighbor {group.name} ")]
        assert [line for line in ipv4 if line.startswith("network ")] == [f"network {prefix}" for prefix in bgp.networks]


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_session_is_configured_on_both_ends(eos_builds, gpus):
    """A's neighbor B (address, ASN) is B's own address on the shared /31 and B's ASN, and B has
    A the same way round."""
    build = eos_builds[gpus]
    configs = eos_configs(build)
    own = {}  # interface address -> (switch, ASN)
    for name in configs:
        device = build.configs[name]
        for i in device.interfaces:
            if i.address:
                own[i.address.split("/")[0]] = (name, device.asn)
    sessions = set()
    for name, config in configs.items():
        for line in config.blocks[router_bgp(config)]:
            match = re.fullmatch(r"neighbor (\S+) remote-as (\d+)", line)
            if match:
                peer, _ = own[match[1]]
                assert build.configs[peer].asn == int(match[2])
                sessions.add(frozenset((name, peer)) if name < peer else frozenset((peer, name)))
    links = {
        frozenset((link.a.device.name, link.b.device.name)) for link in build.fabric.links if link.a.device.name in configs and link.b.device.name in configs
    }
    assert sessions == links


def test_evpn_vnis_gateways_and_route_targets_are_the_plan(eos_builds):
    build = eos_builds[512]
    leaves = 0
    for name, config in eos_configs(build).items():
        evpn = build.configs[name].evpn
        block = router_bgp(config)
        sections = config.sections(block)
        if not evpn.vtep:  # spines pass EVPN routes on, next hop unchanged; no VTEP of their own
            assert "interface Vxlan1" not in config.blocks and "interface Loopback1" not in config.blocks
            assert sections["address-family evpn"] == ["neighbor LEAVES activate", "neighbor LEAVES next-hop-unchanged"]
            continue
        leaves += 1
        vxlan = config.blocks["interface Vxlan1"]
        assert vxlan[:3] == ["description VTEP", "vxlan source-interface Loopback1", "vxlan udp-port 4789"]
        assert [line for line in vxlan if line.startswith("vxlan vlan ")] == [
            f"vxlan vlan {s.vlan} vni {s.vni}" for s in sorted(evpn.segments, key=lambda s: s.vlan)
        ]
        assert [line for line in vxlan if line.startswith("vxlan vrf ")] == [
            f"vxlan vrf {v.name} vni {v.l3_vni}" for v in sorted(evpn.vrfs, key=lambda v: v.name)
        ]
        assert config.blocks["interface Loopback1"] == ["description VTEP", f"ip address {evpn.vtep_address}/32"]
        assert f"ip virtual-router mac-address {evpn.anycast_gateway_mac}" in config.blocks
        for s in evpn.segments:
            assert config.blocks[f"interface Vlan{s.vlan}"] == [
                f"description anycast gateway of segment {s.name}",
                f"mtu {MAX_MTU}",
                f"vrf {s.vrf}",
                f"ip address virtual {s.gateway}",
            ]
            assert config.blocks[f"vlan {s.vlan}"] == [f"name {s.name}"]
            assert sections[f"vlan {s.vlan}"] == ["rd auto", f"route-target both {s.route_target}", "redistribute learned"]
            for member in s.members:
                assert f"switchport access vlan {s.vlan}" in config.blocks[f"interface {member}"]
        for v in evpn.vrfs:
            assert f"vrf instance {v.name}" in config.blocks and f"ip routing vrf {v.name}" in config.blocks
            rd = f"rd {build.configs[name].bgp.router_id}:{v.l3_vlan}"
            assert sections[f"vrf {v.name}"][:3] == [rd, f"route-target import evpn {v.route_target}", f"route-target export evpn {v.route_target}"]
        assert sections["address-family evpn"] == ["neighbor SPINES activate"]
        # routed ports take internal VLANs away from the segments'
        low, high = map(int, config.top("vlan internal order ascending range ")[0].split()[-2:])
        assert not any(low <= s.vlan <= high for s in evpn.segments)
    assert leaves == 16


def test_a_hostile_description_cannot_add_a_line(eos_builds):
    build = eos_builds[256]
    name = next(n for n, d in build.configs.items() if d.nos == "eos")
    device = build.configs[name]
    hostile = "to gpu\n   shutdown\nrouter bgp 1\x1b[2J\u202e"
    port = replace(device.interfaces[0], description=hostile)
    hardware = device.hardware.model_copy(update={"description": "7060\nno ip routing"})
    text = render_eos(replace(device, interfaces=(port, *device.interfaces[1:]), hardware=hardware))[f"configs/{name}.cfg"]
    lines = text.splitlines()
    assert "   shutdown" not in lines and "router bgp 1" not in lines and "no ip routing" not in lines
    assert "   description to gpu\\n   shutdown\\nrouter bgp 1\\x1b[2J\\u202e" in lines
    assert len(lines) == len(build.files[f"configs/{name}.cfg"].decode().splitlines())


def test_every_secret_is_a_placeholder_in_a_declared_eos_slot(eos_builds):
    """The BGP key and the management baseline's secrets (users, TACACS+, NTP, SNMP) each stand
    in an EOS slot, and masking leaves none of them."""
    for build in eos_builds.values():
        for name, device in build.configs.items():
            if device.nos != "eos":
                continue
            path = f"configs/{name}.cfg"
            text = build.files[path].decode()
            found, stray = placements(path, text)
            assert stray == [] and found
            assert {p.slot.nos for p in found} == {"eos"}
            assert ("bgp-backend", "BGP session key") in {(p.name, p.slot.use) for p in found}
            assert "<<secret=" not in mask_text(text, "eos")


def test_mtu_is_eos_s_largest_and_the_build_says_so(write_intent):
    build = build_of(write_intent, _tiny(""))
    assert any(f"interface MTU 9216 is written as {MAX_MTU}" in note for note in build.notes)
    assert any("lossless headroom and pause thresholds: EOS's platform defaults" in note for note in build.notes)
    small = build_of(write_intent, _tiny("  mtu: 9100\n"))
    config = next(iter(eos_configs(small).values()))
    assert {line for lines in config.blocks.values() for line in lines if line.startswith("mtu ")} == {"mtu 9100"}
    assert not any("written as" in note for note in small.notes)


def test_subnet_mode_leaves_gateway_their_servers_on_a_vlan(write_intent):
    build = build_of(write_intent, _tiny("  nic_addressing: subnet\n"))
    configs = eos_configs(build)
    leaf = next(name for name, d in build.configs.items() if d.role is Role.LEAF)
    device, config = build.configs[leaf], configs[leaf]
    [vlan] = device.vlans
    assert config.blocks[f"vlan {vlan.id}"] == [f"name {vlan.name}"]
    assert config.blocks[f"interface Vlan{vlan.id}"] == ["description gateway of the servers on this leaf", f"mtu {MAX_MTU}", f"ip address {vlan.gateway}"]
    for member in vlan.members:
        assert config.blocks[f"interface {member}"][1] == f"switchport access vlan {vlan.id}"
    assert "redistribute connected route-map FABRICGEN-CONNECTED" in config.blocks[router_bgp(config)]


@pytest.mark.parametrize(
    "backend, field, words",
    [
        ("  bgp_security: {tcp_ao: true, password: k}\n", ("backend", "bgp_security", "tcp_ao"), "no EOS TCP-AO"),
        ("  load_balancing: {mode: flowlet}\n", ("backend", "load_balancing", "mode"), "cannot do flowlet"),
        ("  load_balancing: {hash_fields: [src-ip, dst-ip]}\n", ("backend", "load_balancing", "hash_fields"), "no EOS hash-field config"),
        ("  bfd: {multiplier: 2}\n", ("backend", "bfd", "multiplier"), "BFD multiplier of 3-50, not 2"),
        ("  leaf: {model: DCS-7060DX5-64S, nos: eos, nos_release: '4.31'}\n", ("backend", "leaf", "nos_release"), "4.31 is not one fabricgen renders for"),
    ],
)
def test_what_eos_cannot_take_is_refused_at_its_field(write_intent, backend, field, words):
    text = _tiny(backend)
    if "leaf:" in backend:  # the role line replaces the default one
        text = text.replace("  leaf: {model: DCS-7060DX5-64S, nos: eos}\n", "", 1)
    with pytest.raises(FabricgenError) as caught:
        build_of(write_intent, text)
    problems = [p for p in caught.value.problems if words in p.message]
    assert problems and tuple(problems[0].field) == field, [(p.field, p.message) for p in caught.value.problems]


def test_eos_release_names_and_features_per_release(write_intent):
    assert release_key("4.32.2F") == (4, 32, 2) and release_key("4.32.2.1F") == (4, 32, 2, 1)
    assert release_key("4.32.0F") < release_key("4.32") < release_key("4.32.2F") < release_key("4.33")
    flavour = load_catalog().nos_releases["eos"]
    assert flavour.find("4.33.1F") == "4.33" and flavour.find("4.31.0F") is None
    assert flavour.has("pfc-watchdog", "4.32.0F", "DCS-7060X6-64PE") and not flavour.has("dlb", "4.35", "DCS-7060X6-64PE")
    build = build_of(write_intent, _tiny("", spine="DCS-7060X6-64PE").replace("nos: eos}", "nos: eos, nos_release: 4.33.1F}", 1))
    leaf = next(name for name, d in build.configs.items() if d.role is Role.LEAF)
    assert build.configs[leaf].nos_release == "4.33.1F" and "pfc-watchdog" in build.configs[leaf].features
    assert "! written for EOS 4.33.1F" in build.files[f"configs/{leaf}.cfg"].decode().splitlines()


THREE_TIERS = """
name: three-tier-eos
gpus: 32
backend:
  tiers: 3
  scalable_unit_gpus: 16
  pod_gpus: 16
  asn: {leaves: per-pod}
  leaf: {model: DCS-7060DX5-64S, nos: eos}
  spine: {model: DCS-7060DX5-64S, nos: eos}
  core: {model: DCS-7060X6-64PE, nos: eos}
"""


def test_three_tiers_with_leaf_asns_reused_per_pod(write_intent):
    """Leaves accept their own ASN back once (the same leaf ASNs in every pod); spines peer with
    LEAVES and CORES, cores with SPINES."""
    build = build_of(write_intent, THREE_TIERS)
    configs = eos_configs(build)
    groups = {Role.LEAF: {"SPINES"}, Role.SPINE: {"LEAVES", "CORES"}, Role.CORE: {"SPINES"}}
    for name, config in configs.items():
        device = build.configs[name]
        lines = config.blocks[router_bgp(config)]
        assert {line.split()[1] for line in lines if line.endswith(" peer group")} == groups[device.role], name
        allowas = [line for line in lines if " allowas-in " in line]
        assert allowas == (["neighbor SPINES allowas-in 1"] if device.role is Role.LEAF else []), name
    assert {d.role for d in build.configs.values()} >= {Role.LEAF, Role.SPINE, Role.CORE}


def documented_shapes() -> list[re.Pattern[str]]:
    """The line shapes docs/reference/eos.md lists (its tables' first cells, in backticks): `<x>`
    stands for one word, `<text...>` for the rest of the line."""
    shapes = []
    for line in DOCS.read_text().splitlines():
        match = re.match(r"\| `([^`]+)` \|", line)
        if match:
            parts = re.split(r"(<[^>]+>)", match[1])
            pattern = "".join((".+" if part.endswith("...>") else r"\S+") if part.startswith("<") else re.escape(part) for part in parts)
            shapes.append(re.compile(pattern))
    return shapes


def test_every_line_written_has_a_documented_shape_and_every_shape_is_written(eos_builds, write_intent):
    shapes = documented_shapes()
    assert len(shapes) > 60
    builds = [
        *eos_builds.values(),
        build_of(write_intent, _tiny("  nic_addressing: subnet\n  qos: {cnp_priority: 6, storage_dscp: [10], storage_priority: 4}\n")),
    ]
    builds.append(build_of(write_intent, _tiny("  bgp_security: {maximum_prefix_restart_min: null}\n", spine="DCS-7060X6-64PE")))
    builds.append(build_of(write_intent, THREE_TIERS))
    used: set[int] = set()
    for build in builds:
        for name, device in build.configs.items():
            if device.nos != "eos":
                continue
            for line in {line.strip() for line in build.files[f"configs/{name}.cfg"].decode().splitlines()}:
                if line.startswith("!") and line != "!":  # comments: the header
                    continue
                matched = [n for n, shape in enumerate(shapes) if shape.fullmatch(line)]
                assert matched, f"{name}: {line!r} has no documented shape in {DOCS.name}"
                used.update(matched)
    unused = [shapes[n].pattern for n in range(len(shapes)) if n not in used]
    assert not unused, f"shapes documented but never written: {unused}"
