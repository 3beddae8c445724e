"""summary.md: the design in a few lines, for people and for review diffs."""

from __future__ import annotations

from collections import Counter

from fabricgen.compiled import Compiled
from fabricgen.design.graph import LinkKind, Network, Role
from fabricgen.render.environment import environment
from fabricgen.units import format_ratio


def render_summary(c: Compiled) -> dict[str, str]:
    text = environment().get_template("reports/summary.md.j2").render(
        name=c.intent.name,
        description=c.intent.description,
        s=c.sizing,
        roles=c.fabric.inventory(),
        links=Counter(link.kind.value for link in c.fabric.links),
        requested=format_ratio(c.sizing.requested_ratio),
        built=format_ratio(c.sizing.built_ratio),
        routing=c.intent.backend.routing,
        addressing=c.plan_of(Network.BACKEND).host_addressing,
        evpn={network.value: overlay for network, overlay in (c.evpn or {}).items()},
        notes=c.notes,
        fabrics=[(network.value, plan, format_ratio(plan.built_ratio)) for network, plan in c.plans.items() if network.value != "backend"],
        oob=c.oob,
        links_by_network=Counter((link.network.value, link.kind.value) for link in c.fabric.links),
        tier_links=Counter((link.network.value, link.a.device.role.value) for link in c.fabric.links if link.kind is LinkKind.FABRIC),
        spine_requested=format_ratio(c.sizing.spine_requested_ratio) if c.sizing.spine_requested_ratio else None,
        spine_built=format_ratio(c.sizing.spine_built_ratio) if c.sizing.spine_built_ratio else None,
        asns=_asn_summary(c),
        layout=c.intent.layout is not None,
        load_balancing={network.value: plan.spec.load_balancing for network, plan in c.plans.items()},
    )
    return {"summary.md": text}


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
