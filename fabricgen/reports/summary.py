"""summary.md: the design in a few lines, for people and for review diffs."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter

from fabricgen.basics.units import format_ratio
from fabricgen.build import secrets as secret_uses
from fabricgen.compiler.compiled import Compiled, NosTarget
from fabricgen.compiler.design.graph import Link, LinkKind, Network, Role
from fabricgen.compiler.device_config import DeviceConfig
from fabricgen.render.environment import environment


def render_summary(c: Compiled, configs: Mapping[str, DeviceConfig] | None = None) -> dict[str, str]:
    """summary.md; with the device configs, a line per secret they refer to (name, variable, use)."""
    link_counts = _LinkCounts.of(c.fabric.links)
    text = (
        environment()
        .get_template("reports/summary.md.j2")
        .render(
            name=c.intent.name,
            description=c.intent.description,
            s=c.sizing,
            roles=c.fabric.inventory(),
            releases=_releases(c),
            links=link_counts.kinds,
            requested=format_ratio(c.sizing.requested_ratio),
            built=format_ratio(c.sizing.built_ratio),
            routing=c.intent.backend.routing,
            addressing=c.plan_of(Network.BACKEND).host_addressing,
            evpn={network.value: overlay for network, overlay in (c.evpn or {}).items()},
            notes=c.notes,
            fabrics=[(network.value, plan, format_ratio(plan.built_ratio)) for network, plan in c.plans.items() if network.value != "backend"],
            oob=c.oob,
            links_by_network=link_counts.by_network,
            tier_links=link_counts.tiers,
            spine_requested=format_ratio(c.sizing.spine_requested_ratio) if c.sizing.spine_requested_ratio else None,
            spine_built=format_ratio(c.sizing.spine_built_ratio) if c.sizing.spine_built_ratio else None,
            asns=_asn_summary(c),
            layout=c.intent.layout is not None,
            load_balancing={network.value: plan.spec.load_balancing for network, plan in c.plans.items()},
            secrets=_secrets(configs or {}),
            rail_sharing=rail_sharing(c.sizing),
        )
    )
    return {"summary.md": text}


NETWORK_KIND_ROLE = attrgetter("network", "kind", "a.device.role")


@dataclass(frozen=True)
class _LinkCounts:
    """Links by kind, by (network, kind), and fabric links by (network, role of the lower end),
    keyed by the enums' values, in order of first appearance."""

    kinds: Counter[str]
    by_network: Counter[tuple[str, str]]
    tiers: Counter[tuple[str, str]]

    @staticmethod
    def of(links: list[Link]) -> _LinkCounts:
        # one pass in C, counting the enum members themselves (no .value per link) by the role of the lower end
        counted = Counter(map(NETWORK_KIND_ROLE, links))
        kinds: Counter[str] = Counter()
        by_network: Counter[tuple[str, str]] = Counter()
        tiers: Counter[tuple[str, str]] = Counter()
        for (network, kind, role), n in counted.items():
            kinds[kind.value] += n
            by_network[(network.value, kind.value)] += n
            if kind is LinkKind.FABRIC:
                tiers[(network.value, role.value)] += n
        return _LinkCounts(kinds, by_network, tiers)


def rail_sharing(s) -> str:
    """Which rails share a leaf, for designs other than one rail per leaf ('' for those)."""
    if s.design == "rail-optimized" and s.rails_per_leaf == 1:
        return ""
    if s.design == "rail-only":
        return "each rail is a network of its own" + (" (a plane with its own spines)" if not s.spineless else ", one leaf per rail")

    def span(rails: tuple[int, ...]) -> str:
        return f"{rails[0]}-{rails[-1]}" if rails == tuple(range(rails[0], rails[-1] + 1)) else ", ".join(map(str, rails))

    order = "node by node (a node's NICs side by side)" if s.node_major else "rail by rail (every node's NIC of one rail, then the next rail)"
    unit = "rack (top-of-rack unit)" if s.design == "top-of-rack" else "scalable unit"
    shares = "; ".join(f"rails {span(rails)} on leaf {k} of each {unit}" for k, rails in enumerate(s.leaf_rails, start=1))
    return f"{shares}; a leaf's downlinks go {order}"


def _secrets(configs: Mapping[str, DeviceConfig]) -> list[dict]:
    """Each secret the configs refer to: its variable, what it is used for, on how many switches."""
    uses: dict[str, set[str]] = defaultdict(set)
    switches: Counter[str] = Counter()
    for config in configs.values():
        found: set[tuple[str, str]] = set()
        if config.bgp is not None:
            use = secret_uses.BGP_AO_KEY if config.bgp.tcp_ao else secret_uses.BGP_KEY
            found |= {(group.password, f"{use} ({group.tier})") for group in config.bgp.groups if group.password}
        system = config.system
        if system is not None:
            found |= {(user.password_hash, f"{secret_uses.USER_HASH} ({user.name})") for user in system.users}
            for group, use in ((system.tacacs, secret_uses.TACACS_KEY), (system.radius, secret_uses.RADIUS_KEY)):
                if group is not None:
                    found.add((group.key, use))
            if config.ntp_key is not None:
                found.add((config.ntp_key, secret_uses.NTP_KEY))
            if system.snmp is not None:
                found |= {(name, secret_uses.SNMP_COMMUNITY) for name in system.snmp.communities}
                for user in system.snmp.users:
                    found |= {(user.auth_key, secret_uses.SNMP_AUTH_KEY), (user.privacy_key, secret_uses.SNMP_PRIVACY_KEY)}
        for name, use in found:
            uses[name].add(use)
        switches.update({name for name, _ in found})
    return [{"name": name, "env": secret_uses.env_name(name), "uses": sorted(uses[name]), "switches": switches[name]} for name in sorted(uses)]


def _releases(c: Compiled) -> dict[tuple[str, str, str], str]:
    """(network, role, model) -> the NOS release its switches' configs are written for, with the
    flavour's name where it is not the NOS's own (a vendor's SONiC)."""
    groups = {(d.network, d.role, d.model) for d in c.fabric.switches()}
    return {(n.value, r.value, m): _release_shown(c, c.nos_target(n, r, m)) for n, r, m in groups}


def _release_shown(c: Compiled, target: NosTarget) -> str:
    if target.flavour == target.nos:
        return target.release
    return f"{target.release} ({c.catalog.nos_releases[target.flavour].description}, {target.flavour})"


def _asn_summary(c: Compiled) -> dict[str, str]:
    """The backend's ASNs per tier as ranges, for a 3-tier summary."""
    asns = c.addresses.asns

    def span(role: Role) -> str:
        used = sorted({asns[d.name] for d in c.fabric.by_role(role, Network.BACKEND)})
        if not used:
            return "-"
        return str(used[0]) if len(used) == 1 else f"{used[0]}-{used[-1]}"

    leaves = span(Role.LEAF)
    if c.plan_of(Network.BACKEND).leaf_asns_per_pod:
        leaves += ", the same in every pod (allowas-in on the leaves)"
    return {"core": span(Role.CORE), "spines": span(Role.SPINE), "leaves": leaves}
