"""The config builders' fast paths give what the straightforward code they replace gives."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from fabricgen.compiler.checks.configs import _lossless_profile, hosts_agree_with_leaves, mtu_carries_hosts, qos_differences
from fabricgen.compiler.design.graph import Network, Role
from fabricgen.compiler.device_config import _qos_config, _Shared
from fabricgen.compiler.host_config import HostNic, _NicQos
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.compiler.qos import PAUSE_POLICY_ABOVE_M, cable_length_bucket, ingress_pause_policy, lossless_headroom


def test_a_nics_qos_fields_fill_hostnics_qos_fields_in_order():
    """_host_config builds HostNic positionally, the QoS fields spliced in from a _NicQos."""
    names = [f.name for f in fields(HostNic)]
    start = names.index("qos")
    assert names[start : start + len(_NicQos._fields)] == list(_NicQos._fields)
    assert names[start + len(_NicQos._fields) :] == ["table", "routes"]


def test_a_hostnic_built_positionally_carries_each_value_in_its_field(whitepaper):
    build = whitepaper[256]
    nic = next(iter(build.hosts.values())).nics[0]
    leaf = build.configs[nic.switch]
    port = next(i for i in leaf.interfaces if i.name == nic.switch_port)
    assert nic.network == "backend" and nic.port_set == "backend"
    assert port.description.startswith(f"{nic.cable} to ") and nic.speed_gbps == port.speed_gbps
    assert f"{nic.gateway}/{nic.prefixlen}" == port.address and nic.cidr != port.address
    assert nic.mtu <= port.mtu and nic.table == 101
    assert nic.qos and nic.lossless_priorities == leaf.qos.lossless_priorities
    assert dict(nic.dscp_to_priority) == leaf.qos.dscp_to_priority and nic.cnp_priority == leaf.qos.cnp_priority
    assert nic.routes[-1].via == nic.gateway and nic.routes[-1].table == nic.table


def test_lossless_profiles_are_equal_exactly_when_qos_differences_finds_nothing(whitepaper):
    """lossless_class_agrees compares each switch's profile, hashed, before qos_differences."""
    qos = next(config.qos for config in whitepaper[256].configs.values() if config.qos is not None)
    same = replace(qos)
    same.__dict__["dscp_to_priority"] = dict(reversed(qos.dscp_to_priority.items()))  # equal dict, other order
    variants = [replace(qos, cnp_dscp=(46,)), replace(qos, cnp_priority=5), replace(qos, lossless_priority=4), None]
    assert _lossless_profile(same) == _lossless_profile(qos) and not qos_differences(same, qos)
    for other in variants:
        assert _lossless_profile(other) != _lossless_profile(qos) and qos_differences(other, qos)


def test_one_port_below_the_host_mtu_is_found_past_the_every_port_fits_shortcut(whitepaper):
    """mtu_carries_hosts skips a switch whose smallest port MTU fits; one short port must not be skipped."""
    build = whitepaper[256]
    configs = dict(build.configs)
    leaf = next(config for config in configs.values() if config.role is Role.LEAF)
    host_mtu = build.compiled.plan_of(Network.BACKEND).spec.host_mtu
    short = replace(leaf.interfaces[-1], mtu=host_mtu - 1)
    configs[leaf.hostname] = replace(leaf, interfaces=(*leaf.interfaces[:-1], short))
    assert not list(mtu_carries_hosts(build.compiled, build.configs))
    [problem] = mtu_carries_hosts(build.compiled, configs)
    assert (problem.device, problem.port) == (leaf.hostname, short.name)
    assert f"MTU {host_mtu - 1} is below the {host_mtu} bytes" in problem.message


def test_a_switch_with_a_qos_override_gets_its_own_thresholds_the_rest_share_theirs(write_intent):
    """build_device_configs works a model's thresholds out once per fabric, for switches without an override."""
    build = compile_intent(write_intent("gpus: 64\nbackend:\n  qos_overrides:\n    be-su01-leaf3:\n      pfc_trigger_kbytes: {400G: 5000}\n"))
    plain = compile_intent(write_intent("gpus: 64\n", name="plain"))
    overridden = build.configs["be-su01-leaf3"].qos
    assert (overridden.pfc_trigger_kbytes, overridden.trigger_source) == ({400: 5000}, {400: "the intent"})
    assert plain.configs["be-su01-leaf3"].qos.pfc_trigger_kbytes == {400: 4000}
    for name, config in build.configs.items():
        if config.qos is not None and name != "be-su01-leaf3":
            expected = plain.configs[name].qos
            assert (config.qos.pfc_trigger_kbytes, config.qos.trigger_source, config.qos.ecn) == (
                expected.pfc_trigger_kbytes,
                expected.trigger_source,
                expected.ecn,
            ), name


@pytest.mark.parametrize("pause", ["long-links", "always"])
def test_each_ports_buffer_and_pause_policy_are_its_own_cables_shared_per_speed_and_length(write_intent, pause):
    """_qos_config looks a port's buffer and pause policy up per (speed, cable length); each must
    be what the port's own cable gives, worked out port by port."""
    text = f"gpus: 128\nlayout: {{racks_per_row: 4, gpu_nodes_per_rack: 2}}\nbackend:\n  qos:\n    pause_thresholds: {pause}\n"
    build = compile_intent(write_intent(text, name=pause))
    lengths = set()
    for device in build.fabric.switches():
        qos = build.configs[device.name].qos
        if qos is None:
            continue
        delay = build.compiled.catalog.switches[device.model].qos.mac_phy_delay_bytes
        for port in (p for p in device.ports.values() if p.front_panel):
            length = port.link.length_m
            lengths.add(length)
            buffer = lossless_headroom(port.speed_gbps, 9216, cable_length_bucket(length), delay.value if delay else 0)
            assert qos.buffers[port.name] == buffer, (device.name, port.name)
            if pause == "always" or length > PAUSE_POLICY_ABOVE_M:
                assert qos.pause_policies[port.name] == ingress_pause_policy(buffer, qos.pfc_trigger_kbytes[port.speed_gbps]), (device.name, port.name)
            else:
                assert port.name not in qos.pause_policies, (device.name, port.name)
    assert len({cable_length_bucket(length) for length in lengths}) >= 2


def test_a_nics_dscp_map_agrees_in_any_order_and_a_different_one_is_named(whitepaper):
    """hosts_agree_with_leaves compares a NIC's DSCP map with its leaf's items before building a dict."""
    build = whitepaper[256]
    host = build.hosts["gpu0005"]
    nic = host.nics[0]
    reordered = replace(nic, dscp_to_priority=tuple(reversed(nic.dscp_to_priority)))
    different = replace(nic, dscp_to_priority=((*nic.dscp_to_priority[0][:1], 5), *nic.dscp_to_priority[1:]))
    assert reordered.dscp_to_priority != nic.dscp_to_priority
    for changed, problems in ((reordered, 0), (different, 1)):
        hosts = dict(build.hosts)
        hosts["gpu0005"] = replace(host, nics=(changed, *host.nics[1:]))
        found = hosts_agree_with_leaves(build.compiled, build.configs, hosts)
        assert len(found) == problems and all("DSCP map" in problem.message for problem in found)


@pytest.mark.parametrize(("speeds", "main"), [((400,) * 64, 400), ((400,) * 40 + (100,) * 24, 400), ((100,) * 40 + (400,) * 24, 100), ((100, 400) * 32, 400)])
def test_the_main_speed_is_the_one_most_ports_run_at_the_higher_on_a_tie(write_intent, speeds, main):
    """_qos_config counts a switch's port speeds only when it has more than one."""
    build = compile_intent(write_intent("gpus: 64\n"), render=False)
    device = build.fabric.devices["be-su01-leaf1"]
    front = sorted((p for p in device.ports.values() if p.front_panel), key=lambda p: (p.cage, p.sub))
    ports = [replace(port, speed_gbps=speed) for port, speed in zip((front * len(speeds))[: len(speeds)], speeds, strict=True)]
    spec = build.compiled.plan_of(Network.BACKEND).spec
    qos = _qos_config(spec, device, ports, build.compiled.catalog.switches[device.model], _Shared())
    assert qos.main_speed_gbps == main and sorted(qos.ecn) == sorted(set(speeds))
