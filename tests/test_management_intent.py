"""The intent's management section and BGP security, up to the NOS-neutral device configs:
overrides reach exactly the switches they name, secrets are names only, maximum-prefix is sized
from what the fabric really announces, and the prefix policy lets every planned route through
while keeping leaves from carrying transit."""

from __future__ import annotations

import ipaddress
import math

import pytest

from fabricgen.basics.errors import IntentError
from fabricgen.compiler.design.graph import Role
from fabricgen.compiler.pipeline import compile_intent
from fabricgen.intent import load_intent

MANAGEMENT = """
management:
  ntp: {servers: [10.250.0.21], key: ntp-key}
  syslog: {servers: [10.250.0.31]}
  tacacs: {servers: [10.250.0.11], key: tacacs-key}
  users: [{name: admin, password_hash: admin-hash}]
  access: {management_networks: [10.250.0.0/24]}
"""


def _announced(config) -> set[str]:
    """What a switch originates: its `network` statements, aggregates, or redistributed blocks."""
    bgp = config.bgp
    return set(bgp.networks) | set(bgp.aggregates or bgp.redistribute)


def _covered(prefix: str, rules) -> bool:
    net = ipaddress.ip_network(prefix)
    for rule in rules:
        pool = ipaddress.ip_network(rule.prefix)
        if rule.le is None and net == pool:
            return True
        if rule.le is not None and net.subnet_of(pool) and net.prefixlen <= rule.le:
            return True
    return False


def test_overrides_replace_a_sub_section_for_their_network_or_role_only(write_intent):
    text = (
        MANAGEMENT
        + """
gpus: 64
backend:
  scalable_unit_gpus: 32
  management:
    syslog: {servers: [10.9.9.9]}
  spine:
    management:
      ntp: {servers: [10.8.8.8]}
oob:
  switch:
    model: N9K-C93108TC-FX3
    management:
      banner: [OOB switch]
"""
    )
    build = compile_intent(write_intent(text), render=False)
    by_role = {}
    for config in build.configs.values():
        by_role.setdefault((config.network, config.role), config.system)
    leaf, spine, oob = by_role[("backend", Role.LEAF)], by_role[("backend", Role.SPINE)], by_role[("oob", Role.OOB_SWITCH)]
    assert [str(s) for s in leaf.syslog.servers] == ["10.9.9.9"]  # the backend's override
    assert [str(s) for s in leaf.ntp.servers] == ["10.250.0.21"]  # inherited from the cluster
    assert [str(s) for s in spine.ntp.servers] == ["10.8.8.8"] and [str(s) for s in spine.syslog.servers] == ["10.9.9.9"]
    assert [str(s) for s in oob.syslog.servers] == ["10.250.0.31"]  # not the backend's
    assert oob.banner == ["OOB switch"] and leaf.banner == [] and spine.banner == []
    assert leaf.tacacs.key == "tacacs-key" and oob.tacacs.key == "tacacs-key"


def test_no_management_section_leaves_system_unset(write_intent):
    build = compile_intent(write_intent("gpus: 64\nbackend: {scalable_unit_gpus: 32}\n"), render=False)
    assert all(config.system is None for config in build.configs.values())
    assert all(config.secret_names() == set() for config in build.configs.values())


def test_every_secret_of_the_whitepaper_intent_is_a_name(whitepaper):
    leaf = whitepaper[256].configs["be-su01-leaf1"]
    assert leaf.secret_names() == {"admin-password-hash", "bgp-backend", "ntp-key", "snmp-auth-key", "snmp-priv-key", "tacacs-key"}
    frontend_leaf = next(c for c in whitepaper[256].configs.values() if c.network == "frontend" and c.role is Role.LEAF)
    assert "bgp-frontend" in frontend_leaf.secret_names() and "bgp-backend" not in frontend_leaf.secret_names()


@pytest.mark.parametrize(
    ("snippet", "field", "words"),
    [
        ("management:\n  users: [{name: root, password_hash: h}]\n", "management.users[0].name", "belongs to the NOS"),
        ("management:\n  users: [{name: admin, password_hash: 'MyPass word'}]\n", "management.users[0].password_hash", "must be a secret name"),
        ("management:\n  tacacs: {servers: [10.0.0.1], key: Tacacs_Key}\n", "management.tacacs.key", "must be a secret name"),
        ("management:\n  banner: ['hello ^ there']\n", "management", "delimits the NX-OS banner"),
        ("management:\n  ntp: {servers: ['10.0.0.1; rm -rf /']}\n", "management.ntp.servers[0]", "neither an IP address nor a DNS name"),
        ("backend:\n  bgp_security: {tier_passwords: {leaf-core: k}}\n", "backend.bgp_security.tier_passwords", ""),
        # push fills every placeholder: one in free text would print the key in the login banner
        ("management:\n  banner: ['<<secret:tacacs-key>>']\n", "management.banner[0]", "only stand where fabricgen writes a key"),
        (
            "management:\n  snmp: {users: [{name: nms-poller, auth_key: a, privacy_key: b}], location: 'x <<secret:a>>'}\n",
            "management.snmp.location",
            "free text",
        ),
        ("description: '<<secret:bgp-backend>>'\n", "description", "free text"),
    ],
)
def test_bad_management_settings_name_their_field(write_intent, snippet, field, words):
    with pytest.raises(IntentError) as caught:
        load_intent(write_intent("gpus: 64\n" + snippet))
    messages = [p.format() for p in caught.value.problems]
    assert any(field in m and words in m for m in messages), messages
    assert "MyPass" not in str(messages) and "Tacacs_Key" not in str(messages)  # a value put where a name goes is not echoed


def test_maximum_prefix_is_what_the_network_announces_plus_the_margin(whitepaper):
    for build in whitepaper.values():
        for network in ("backend", "frontend"):
            configs = [c for c in build.configs.values() if c.network == network and c.bgp is not None]
            announced = set().union(*(_announced(c) for c in configs))
            margin = getattr(build.loaded.intent, network).bgp_security.maximum_prefix_margin_percent
            expected = math.ceil(len(announced) * (100 + margin) / 100)
            for config in configs:
                assert {g.maximum_prefix for g in config.bgp.groups} == {expected}, config.hostname
                # no peer can rightly send more than everything the others announce
                assert expected >= len(announced - _announced(config))


def test_policy_passes_every_planned_route_and_no_transit_through_leaves(whitepaper):
    for build in whitepaper.values():
        configs = [c for c in build.configs.values() if c.bgp is not None]
        for config in configs:
            own = _announced(config)
            for prefix in own:  # what it originates, it may send
                assert _covered(prefix, config.bgp.policy.announce), (config.hostname, prefix)
        for receiver in configs:
            peers = {n.address for n in receiver.bgp.neighbors}
            for sender in configs:
                if sender.network != receiver.network or not peers & {i.address.split("/")[0] for i in sender.interfaces if i.address}:
                    continue
                for prefix in _announced(sender):
                    assert _covered(prefix, receiver.bgp.policy.accept), (receiver.hostname, sender.hostname, prefix)
        leaves = [c for c in configs if c.role is Role.LEAF]
        for leaf in leaves[:4]:
            for other in leaves:
                if other is not leaf and other.network == leaf.network:
                    assert not any(_covered(p, leaf.bgp.policy.announce) for p in _announced(other)), (leaf.hostname, other.hostname)


def test_tier_keys_follow_the_links_tier(write_intent):
    text = """
gpus: 512
backend:
  tiers: 3
  scalable_unit_gpus: 128
  pod_gpus: 256
  bgp_security: {password: bgp-pods, tier_passwords: {spine-core: bgp-core}, maximum_prefix_restart_min: null}
"""
    build = compile_intent(write_intent(text), render=False)
    seen = set()
    for config in build.configs.values():
        if config.bgp is None:
            continue
        assert config.bgp.maximum_prefix_restart_min is None
        for group in config.bgp.groups:
            roles = {config.role.value, group.name}
            expected = "bgp-core" if roles in ({"spine", "CORES"}, {"core", "SPINES"}) else "bgp-pods"
            assert group.password == expected, (config.hostname, group)
            seen.add((config.role.value, group.name, group.tier))
    assert seen == {("leaf", "SPINES", "leaf-spine"), ("spine", "LEAVES", "leaf-spine"), ("spine", "CORES", "spine-core"), ("core", "SPINES", "spine-core")}
