"""NX-OS configs: complete, consistent with the graph and the IP plan, QoS as the intent says."""

from __future__ import annotations

import ipaddress
import re

import pytest
import yaml

from fabricgen.compiler.design.graph import SERVER_ROLES, Device, LinkKind, Network, Port, Role
from fabricgen.compiler.pipeline import compile_intent
from tests.nxos_parse import parse_nxos


def nxos_configs(build):
    return {name: parse_nxos(build.files[f"configs/{name}.cfg"].decode()) for name in build.configs}


def bgp_switches(build) -> list[Device]:
    """The leaves and spines of every leaf/spine network (backend, frontend): the BGP routers."""
    return [d for d in build.fabric.switches() if d.role in (Role.LEAF, Role.SPINE)]


def data_ports(device: Device) -> list[Port]:
    """Cabled front-panel ports: not mgmt0 or the console port."""
    return [p for p in device.ports.values() if p.front_panel]


def management_port(device: Device) -> Port:
    """The switch's mgmt0 or eth0: its one non-front-panel port cabled to an OOB switch."""
    [port] = [p for p in device.ports.values() if not p.front_panel and p.link.kind is LinkKind.MANAGEMENT]
    return port


@pytest.mark.parametrize("gpus", [256, 512])
def test_one_complete_config_per_switch(whitepaper, gpus):
    build = whitepaper[gpus]
    switches = {d.name: d for d in build.fabric.switches()}
    assert {d.network for d in switches.values()} == {Network.BACKEND, Network.FRONTEND, Network.OOB}
    assert {p for p in build.files if p.startswith("configs/")} == {f"configs/{s}.cfg" for s in switches}
    for name, config in nxos_configs(build).items():
        assert config.top("hostname ") == [f"hostname {name}"]
        oob = switches[name].role is Role.OOB_SWITCH
        wanted = ("nxapi", "scp-server", "lldp", "interface-vlan") if oob else ("nxapi", "scp-server", "bgp", "bfd", "lldp")
        for feature in wanted:
            assert f"feature {feature}" in config.lines, (name, feature)


@pytest.mark.parametrize("gpus", [256, 512])
def test_interfaces_match_the_cabling_and_the_ip_plan(whitepaper, gpus):
    build = whitepaper[gpus]
    plan = build.addresses
    configs = nxos_configs(build)
    switches = bgp_switches(build)
    assert {d.network for d in switches} == {Network.BACKEND, Network.FRONTEND}
    for device in switches:
        name, config = device.name, configs[device.name]
        spec = build.compiled.plan_of(device.network).spec
        overlay = build.compiled.evpn_of(device.network)
        evpn_interfaces = set()
        if overlay is not None and device.role is Role.LEAF:
            segments = overlay.leaf_segments(device)
            evpn_interfaces = {"loopback1", "nve1"} | {f"Vlan{s.vlan}" for s in segments} | {f"Vlan{t.l3_vlan}" for t in {s.tenant for s in segments}}
            assert f"ip address {plan.vteps[name]}/32" in config.interfaces["loopback1"]
        assert set(config.interfaces) == {p.name for p in data_ports(device)} | {"loopback0", "mgmt0"} | evpn_interfaces, name
        assert f"ip address {plan.loopbacks[name]}/32" in config.interfaces["loopback0"]
        for port in data_ports(device):
            lines = config.interfaces[port.name]
            peer = port.link.other(port)
            where = (name, port.name)
            assert lines[0] == f"description {port.link.id} to {peer.device.name} {peer.name}", where
            assert f"mtu {spec.mtu}" in lines and "no shutdown" in lines, where
            if overlay is not None and port.link.kind is LinkKind.HOST:
                # a server port is an access port of the server's segment; the address is the server's
                assert f"switchport access vlan {overlay.segment_of[peer].vlan}" in lines, where
                continue
            assert "no switchport" in lines, where
            assert f"ip address {plan.interfaces[port].cidr}" in lines, where
            lossless = {
                "priority-flow-control mode on",
                "service-policy type qos input FABRICGEN-QOS-IN",
                "priority-flow-control watch-dog-interval on",
            }
            assert (lossless <= set(lines)) == spec.qos.enabled, where
            assert not any("priority-flow-control" in line for line in lines) or spec.qos.enabled, where
            bfd = port.link.kind is LinkKind.FABRIC and spec.bfd.enabled
            assert ("bfd interval 150 min_rx 150 multiplier 3" in lines) == bfd, where


def session_problems(build, configs) -> list[str]:
    """Every BGP neighbor in `configs` is the far end of one of the switch's own /31s, with the
    far end's ASN, and the far end has the session back. Returns what does not hold."""
    problems = []
    ports = [p for d in bgp_switches(build) for p in data_ports(d) if p in build.addresses.interfaces]
    owner = {build.addresses.interfaces[p].address: p.device.name for p in ports}
    peer_of = {build.addresses.interfaces[p].address: build.addresses.interfaces[p].peer for p in ports}
    assert len(owner) == len(ports), "two switch ports share an address"
    asn = {name: int(re.search(r"^router bgp (\d+)$", "\n".join(c.lines), re.M).group(1)) for name, c in configs.items()}
    for name, config in configs.items():
        for address, lines in config.neighbors.items():
            remote = owner.get(address)
            if remote is None or remote not in configs:
                problems.append(f"{name}: neighbor {address} is no BGP switch's port")
                continue
            local = peer_of[address]  # our end of the same /31
            if owner.get(local) != name:
                problems.append(f"{name}: neighbor {address} is not on one of {name}'s links")
            if f"remote-as {asn[remote]}" not in lines or asn[remote] != build.addresses.asns[remote]:
                problems.append(f"{name}: neighbor {address} ({remote}) without remote-as {build.addresses.asns[remote]}")
            if local not in configs[remote].neighbors:
                problems.append(f"{remote} has no session back to {name} ({local})")
    return problems


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_bgp_session_is_configured_on_both_ends(whitepaper, gpus):
    build = whitepaper[gpus]
    configs = nxos_configs(build)
    routers = {d.name: configs[d.name] for d in bgp_switches(build)}
    assert session_problems(build, routers) == []
    for network in (Network.BACKEND, Network.FRONTEND):
        fabric_links = [l for l in build.fabric.links if l.kind is LinkKind.FABRIC and l.network is network]
        sessions = sum(len(c.neighbors) for name, c in routers.items() if build.fabric.devices[name].network is network)
        assert fabric_links and sessions == 2 * len(fabric_links), network


def management_problems(build, device: Device) -> list[str]:
    """Where the graph and the address plan disagree about a switch's management port: it must be
    cabled to an OOB switch, with an address inside that switch's subnet and that switch's SVI as
    gateway."""
    port = management_port(device)
    oob = port.link.other(port)
    address = build.addresses.management.get(port)
    gateway = build.addresses.management_gateways.get(port)
    svi = build.addresses.management_subnets.get(oob.device.name)
    if oob.device.role is not Role.OOB_SWITCH or not oob.front_panel:
        return [f"{port.label} is cabled to {oob.label}, not an OOB switch's access port"]
    if address is None or svi is None:
        return [f"{port.label} has no management address"]
    subnet = ipaddress.ip_interface(svi.cidr).network
    problems = []
    if gateway != svi.address:
        problems.append(f"{port.label}: gateway {gateway}, but {oob.device.name}'s VLAN interface is {svi.address}")
    if ipaddress.ip_interface(address.cidr) not in subnet or address.address == svi.address or address.prefixlen != svi.prefixlen:
        problems.append(f"{port.label}: {address.cidr} is not a host of {oob.device.name}'s subnet {subnet}")
    return problems


@pytest.mark.parametrize("gpus", [256, 512])
def test_every_switch_has_its_management_address_in_the_management_vrf(whitepaper, gpus):
    build = whitepaper[gpus]
    plan = build.addresses
    configs = nxos_configs(build)
    switches = list(build.fabric.switches())
    assert {d.role for d in switches} == {Role.LEAF, Role.SPINE, Role.OOB_SWITCH}
    for device in switches:
        port = management_port(device)
        assert port.name == "mgmt0" and management_problems(build, device) == [], device.name
        config = configs[device.name]
        assert config.blocks["vrf context management"] == [f"ip route 0.0.0.0/0 {plan.management_gateways[port]}"], device.name
        lines = config.interfaces["mgmt0"]
        assert "vrf member management" in lines and f"ip address {plan.management[port].cidr}" in lines, device.name
        assert [line for line in lines if line.startswith("ip address")] == [f"ip address {plan.management[port].cidr}"]
        assert "console" not in config.interfaces, device.name
    in_configs = [line for c in configs.values() for line in c.interfaces["mgmt0"] if line.startswith("ip address")]
    assert len(in_configs) == len(set(in_configs)) == len(switches)
    # every device's management ports (switches, BMCs, server and PDU ports) and the gateways
    everything = [a.address for a in plan.management.values()] + [a.address for a in plan.management_subnets.values()]
    assert len(everything) == len(set(everything)), "two management ports share an address"


@pytest.mark.parametrize("gpus", [256, 512])
def test_oob_switches_bridge_management_ports_and_route_to_the_core(whitepaper, gpus):
    build = whitepaper[gpus]
    plan = build.addresses
    oob = build.compiled.intent.oob
    configs = nxos_configs(build)
    switches = list(build.fabric.by_role(Role.OOB_SWITCH))
    assert len(switches) == (oob.switch.count or oob.switch.at_least)
    access_total = 0
    for device in switches:
        name, config = device.name, configs[device.name]
        access = [p for p in data_ports(device) if p.link.kind is LinkKind.MANAGEMENT]
        uplinks = [p for p in data_ports(device) if p.link.kind is LinkKind.UPLINK]
        assert len(access) + len(uplinks) == len(data_ports(device)) and len(uplinks) == oob.uplinks, name
        access_total += len(access)
        assert set(config.interfaces) == {p.name for p in data_ports(device)} | {"mgmt0", f"Vlan{oob.vlan}"}, name
        for port in access:
            lines = config.interfaces[port.name]
            peer = port.link.other(port)
            where = (name, port.name)
            assert lines[0] == f"description {port.link.id} to {peer.device.name} {peer.name}", where
            assert "switchport mode access" in lines and f"switchport access vlan {oob.vlan}" in lines, where
            assert not any(line.startswith("ip address") or line == "no switchport" for line in lines), where
            # what is behind the access port is addressed in this switch's subnet
            svi = plan.management_subnets[name]
            assert plan.management_gateways[peer] == svi.address, where
            assert ipaddress.ip_interface(plan.management[peer].cidr) in ipaddress.ip_interface(svi.cidr).network, where
        assert f"vlan {oob.vlan}" in config.lines, name
        assert f"ip address {plan.management_subnets[name].cidr}" in config.interfaces[f"Vlan{oob.vlan}"], name
        cores = []
        for port in uplinks:
            lines = config.interfaces[port.name]
            core = port.link.other(port)
            assert core.device.role is Role.MANAGEMENT_CORE, (name, port.name)
            mine, theirs = plan.interfaces[port], plan.interfaces[core]
            assert mine.prefixlen == theirs.prefixlen == 31 and mine.peer == theirs.address and theirs.peer == mine.address
            assert "no switchport" in lines and f"ip address {mine.cidr}" in lines, (name, port.name)
            cores.append(theirs.address)
        assert sorted(config.top("ip route ")) == sorted(f"ip route 0.0.0.0/0 {a}" for a in cores), name
        assert not config.top("router bgp") and not config.router_bgp and "loopback0" not in config.interfaces, name
        assert "feature bgp" not in config.lines and "feature bfd" not in config.lines, name
    # every management link lands on exactly one OOB access port
    assert access_total == sum(1 for l in build.fabric.links if l.kind is LinkKind.MANAGEMENT)


@pytest.mark.parametrize("gpus", [256, 512])
def test_frontend_leaves_route_every_server_port_and_peer_with_every_frontend_spine(whitepaper, gpus):
    build = whitepaper[gpus]
    plan = build.addresses
    configs = nxos_configs(build)
    leaves = list(build.fabric.by_role(Role.LEAF, Network.FRONTEND))
    spines = {d.name for d in build.fabric.by_role(Role.SPINE, Network.FRONTEND)}
    assert leaves and spines
    routed_host_ports = 0
    for leaf in leaves:
        config = configs[leaf.name]
        for port in (p for p in data_ports(leaf) if p.link.kind is LinkKind.HOST):
            server = port.link.other(port)
            mine, theirs = plan.interfaces[port], plan.interfaces[server]
            where = (leaf.name, port.name, server.label)
            assert server.device.role in SERVER_ROLES and mine.prefixlen == theirs.prefixlen == 31, where
            assert mine.peer == theirs.address and theirs.peer == mine.address, where
            assert plan.gateways[server] == mine.address, where
            lines = config.interfaces[port.name]
            assert "no switchport" in lines and f"ip address {mine.cidr}" in lines, where
            routed_host_ports += 1
        # a session on every uplink, and the uplinks reach every frontend spine
        uplinks = [p for p in data_ports(leaf) if p.link.kind is LinkKind.FABRIC]
        assert {plan.interfaces[p].peer for p in uplinks} == set(config.neighbors), leaf.name
        assert {p.link.other(p).device.name for p in uplinks} == spines, leaf.name
    # one routed port per server port cabled into the frontend
    frontend_host_links = [l for l in build.fabric.links if l.network is Network.FRONTEND and l.kind is LinkKind.HOST]
    assert routed_host_ports == len(frontend_host_links)
    gpu = build.fabric.devices["gpu0001"]
    frontend_ports = [p for p in gpu.ports.values() if p.link.network is Network.FRONTEND]
    assert frontend_ports
    for nic in frontend_ports:
        leaf_port = nic.link.other(nic)
        assert plan.interfaces[nic].address == plan.interfaces[leaf_port].peer, nic.label
    routers = {name: configs[name] for name in spines | {leaf.name for leaf in leaves}}
    assert session_problems(build, routers) == []


def test_bgp_ecmp_and_advertisements(whitepaper):
    build = whitepaper[256]
    configs = nxos_configs(build)
    leaf = configs["be-su01-leaf1"]
    assert "  bestpath as-path multipath-relax" in leaf.router_bgp
    assert "    maximum-paths 32" in leaf.router_bgp  # 32 uplinks
    assert "    maximum-paths 8" in configs["be-spine01"].router_bgp  # 8 parallel links per leaf
    block = build.addresses.nic_blocks["be-su01-leaf1"]
    assert f"    aggregate-address {block} summary-only" in leaf.router_bgp
    assert f"ip prefix-list FABRICGEN-CONNECTED seq 10 permit {block} le 32" in leaf.lines
    assert "    redistribute direct route-map FABRICGEN-CONNECTED" in leaf.router_bgp
    assert f"    network {build.addresses.loopbacks['be-su01-leaf1']}/32" in leaf.router_bgp
    assert not any("aggregate-address" in line for line in configs["be-spine01"].router_bgp)
    assert len(leaf.neighbors) == 32 and len(configs["be-spine01"].neighbors) == 64


def test_roce_qos_defaults(whitepaper):
    text = whitepaper[256].files["configs/be-spine01.cfg"].decode()
    for line in [
        "class-map type qos match-any ROCE",
        "  match dscp 24,26",
        "  match dscp 48",
        "    set qos-group 3",
        "    set qos-group 7",
        "  class type network-qos c-8q-nq3",
        "    pause pfc-cos 3",
        "  class type queuing c-out-8q-q7",
        "    priority level 1",
        "  class type queuing c-out-8q-q3",
        "    random-detect minimum-threshold 950 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn",
        "system qos",
        "  service-policy type network-qos FABRICGEN-NETWORK-QOS",
        "  service-policy type queuing output FABRICGEN-QUEUING-400G",
        "priority-flow-control watch-dog-interval on",
    ]:
        assert line in text.splitlines(), line


def test_qos_overrides_reach_the_config(write_intent):
    build = compile_intent(
        write_intent(
            """
            gpus: 64
            backend:
              qos:
                roce_dscp: [26]
                lossless_priority: 4
                cnp_priority: 6
                lossless_bandwidth_percent: 60
                ecn:
                  400G: {min_kbytes: 950, max_kbytes: 3000, drop_probability: 5}
                pfc_watchdog: {poll_interval_ms: 100, detection_ms: 300, restoration_ms: 1000}
            """
        )
    )
    lines = build.files["configs/be-spine01.cfg"].decode().splitlines()
    assert "  match dscp 26" in lines and "    set qos-group 4" in lines and "    set qos-group 6" in lines
    assert "    pause pfc-cos 4" in lines and "  class type queuing c-out-8q-q6" in lines
    assert "    bandwidth remaining percent 60" in lines and "    bandwidth remaining percent 40" in lines
    assert any("minimum-threshold 950 kbytes maximum-threshold 3000 kbytes drop-probability 5" in l for l in lines)
    assert "priority-flow-control watch-dog shutdown-multiplier 3" in lines
    # 1000 ms over the 100 ms poll is NX-OS's default auto-restore multiplier (10): not written
    assert not any(line.startswith("priority-flow-control auto-restore") for line in lines)


def test_qos_off(write_intent):
    build = compile_intent(write_intent("gpus: 64\nbackend:\n  qos: {enabled: false}\n"))
    text = build.files["configs/be-su01-leaf1.cfg"].decode()
    assert "policy-map" not in text and "priority-flow-control" not in text and "system qos" not in text


def test_subnet_mode_vlan_gateway_and_access_ports(write_intent):
    build = compile_intent(write_intent("gpus: 256\nbackend: {nic_addressing: subnet, subnet_vlan: 300}\n"))
    config = parse_nxos(build.files["configs/be-su01-leaf1.cfg"].decode())
    gateway = build.addresses.nic_subnet_gateways["be-su01-leaf1"].cidr
    assert "feature interface-vlan" in config.lines and "vlan 300" in config.lines
    assert f"ip address {gateway}" in config.interfaces["Vlan300"]
    host = config.interfaces["Ethernet1/1"]
    assert "switchport access vlan 300" in host and "no switchport" not in host
    assert not any(line.startswith("ip address") for line in host)
    assert "no switchport" in config.interfaces["Ethernet1/33"]
    assert not any("aggregate-address" in line for line in config.router_bgp)


def test_breakout_cages_on_a_51t_switch(write_intent):
    build = compile_intent(
        write_intent(
            """
            gpus: 1024
            backend:
              scalable_unit_gpus: 512
              leaf: {model: N9364E-SG2-O}
              spine: {model: N9364E-SG2-O}
            """
        )
    )
    config = parse_nxos(build.files["configs/be-spine01.cfg"].decode())
    assert "interface breakout module 1 port 1 map 400g-2x" in config.lines
    assert {"Ethernet1/1/1", "Ethernet1/1/2"} <= set(config.interfaces)
    assert "Ethernet1/1" not in config.interfaces


# NX-OS system class names (CloudScale, 8 queues): fixed, not user-created.
NETWORK_QOS_CLASSES = {f"c-8q-nq{q}" for q in range(1, 8)} | {"c-8q-nq-default"}
QUEUING_CLASSES = {f"c-out-8q-q{q}" for q in range(1, 8)} | {"c-out-8q-q-default"}
# ingress queuing classes (input policies: pause buffer thresholds only)
INGRESS_QUEUING_CLASSES = {f"c-in-q{q}" for q in range(1, 8)} | {"c-in-q-default"}


def nxos_rule_violations(text: str) -> list[str]:
    """Checks beyond presence: class names NX-OS knows, numbers in the ranges it accepts, and
    one priority queue per queuing policy."""
    found = []
    policy_priorities: dict[str, int] = {}
    ingress: set[str | None] = set()
    policy = None
    for line in text.splitlines():
        if m := re.match(r"policy-map type queuing (\S+)", line):
            policy = m.group(1)
            policy_priorities[policy] = 0
        elif not line.startswith(" "):
            policy = None
        if (m := re.match(r"\s+class type network-qos (\S+)", line)) and m.group(1) not in NETWORK_QOS_CLASSES:
            found.append(f"unknown network-qos class {m.group(1)}")
        if m := re.match(r"\s+class type queuing (\S+)", line):
            if m.group(1) in INGRESS_QUEUING_CLASSES:
                ingress.add(policy)
            elif m.group(1) not in QUEUING_CLASSES:
                found.append(f"unknown queuing class {m.group(1)}")
        if policy and "priority level 1" in line:
            policy_priorities[policy] += 1
        if policy in ingress and re.match(r"\s+(priority|bandwidth)", line):
            found.append(f"{policy}: an input queuing policy with pause buffer cannot carry priority/bandwidth: {line.strip()}")
        if m := re.match(r"\s+pause buffer-size (\d+) pause-threshold (\d+) resume-threshold (\d+)$", line):
            size, pause, resume = map(int, m.groups())
            if not 0 < resume <= pause < size:
                found.append(line)
        if (m := re.match(r"\s+bandwidth remaining percent (\d+)", line)) and not 0 <= int(m.group(1)) <= 100:
            found.append(line)
        if m := re.search(r"bfd interval (\d+) min_rx (\d+) multiplier (\d+)", line):
            tx, rx, mult = map(int, m.groups())
            if not (50 <= tx <= 999 and 50 <= rx <= 999 and 1 <= mult <= 50):
                found.append(line)
        if (m := re.match(r"\s+maximum-paths (\d+)", line)) and not 1 <= int(m.group(1)) <= 128:
            found.append(line)
        if (m := re.match(r"\s+mtu (\d+)", line)) and not 576 <= int(m.group(1)) <= 9216:
            found.append(line)
        if (m := re.match(r"hostname (\S+)", line)) and len(m.group(1)) > 63:
            found.append(line)
    found += [f"{p} has {n} priority queues" for p, n in policy_priorities.items() if n != 1 and p not in ingress]
    return found


@pytest.mark.parametrize(
    "qos",
    [
        {},
        {"lossless_priority": 1, "cnp_priority": 7},
        {"lossless_priority": 7, "cnp_priority": 1},
        {"lossless_priority": 4, "cnp_priority": 6, "roce_dscp": [26], "cnp_dscp": [46, 48]},
    ],
    ids=["defaults", "lossless-1", "lossless-7", "custom"],
)
def test_nxos_rules_hold_at_the_edges_of_the_qos_settings(write_intent, qos):
    build = compile_intent(write_intent(yaml.safe_dump({"gpus": 64, "backend": {"qos": qos}})))
    for name in build.configs:
        text = build.files[f"configs/{name}.cfg"].decode()
        assert nxos_rule_violations(text) == [], name
        lossless = qos.get("lossless_priority", 3)
        assert f"  class type network-qos c-8q-nq{lossless}" in text and f"    pause pfc-cos {lossless}" in text


def test_rule_checker_catches_what_nxos_would_refuse():
    bad = "policy-map type queuing P\n  class type queuing c-out-8q-q0\n    bandwidth remaining percent 50\n"
    assert nxos_rule_violations(bad) == ["unknown queuing class c-out-8q-q0", "P has 0 priority queues"]


def test_ports_at_another_speed_get_their_own_queuing_policy(whitepaper):
    """A switch whose ports run at two speeds (as frontend leaves will) queues each port with the
    ECN thresholds of its own speed; system qos carries the policy of the speed most ports run at."""
    import dataclasses

    from fabricgen.intent.model import default_ecn
    from fabricgen.nos.nxos.render import render_nxos

    leaf = whitepaper[256].configs["be-su01-leaf1"]
    slow = dataclasses.replace(leaf.interfaces[0], speed_gbps=100)
    mixed = dataclasses.replace(
        leaf,
        interfaces=(slow, *leaf.interfaces[1:]),
        qos=dataclasses.replace(leaf.qos, ecn={**leaf.qos.ecn, 100: default_ecn(100)}),
    )
    config = parse_nxos(render_nxos(mixed)["configs/be-su01-leaf1.cfg"])
    assert "service-policy type queuing output FABRICGEN-QUEUING-100G" in config.interfaces[slow.name]
    assert not any("type queuing" in line for line in config.interfaces[leaf.interfaces[1].name])
    assert "  service-policy type queuing output FABRICGEN-QUEUING-400G" in config.lines
    assert any("minimum-threshold 150 kbytes maximum-threshold 3000 kbytes" in line for line in config.lines)
    assert nxos_rule_violations("\n".join(config.lines)) == []
