"""VXLAN EVPN overlay of a leaf/spine fabric: tenants (VRFs with an L3 VNI each), L2 segments
(a VLAN, an L2 VNI and a subnet with an anycast gateway each), and which server port sits in
which segment.

The underlay stays the eBGP fabric. Numbers follow the intent's bases: segment n (1-based, in
tenant order, then rail) gets VNI l2_vni_base + n and VLAN vlan_base + n; tenant n gets
l3_vni_base + n and l3_vlan_base + n. Route-targets are explicit, route_target_asn:VNI, the
same on every leaf. Segment subnets are carved from the fabric's host pool in segment order,
each sized for its members plus network, gateway and broadcast.

`plan_evpn` only plans; collisions between the numbers it derives (a tenant's explicit L3 VNI
equal to a segment's, VLANs past 4094, a route-target used twice) are the checks' job
(fabricgen.compiler.checks), so a broken intent is reported the same way as any other inconsistency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from netaddr import IPAddress, IPNetwork

from fabricgen.basics.errors import Problem
from fabricgen.compiler.design.graph import Device, Fabric, LinkKind, Network, Port, Role
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.intent.model import Evpn


@dataclass(frozen=True)
class TenantVrf:
    number: int  # 1-based, the tenant's place in evpn.tenants
    name: str
    vrf: str
    l3_vni: int
    l3_vlan: int
    route_target: str


@dataclass(frozen=True)
class Segment:
    number: int  # 1-based
    name: str
    tenant: TenantVrf
    vlan: int
    vni: int
    route_target: str
    subnet: str  # CIDR
    gateway: str  # the anycast gateway address, the same on every leaf of the segment
    rail: int | None = None

    @property
    def prefixlen(self) -> int:
        return int(self.subnet.split("/")[1])


@dataclass
class EvpnPlan:
    network: Network
    section: str
    settings: Evpn
    route_target_asn: int
    tenants: list[TenantVrf]
    segments: list[Segment]
    members: dict[int, list[Port]] = field(default_factory=dict)  # segment number -> server ports, in address order
    segment_of: dict[Port, Segment] = field(default_factory=dict)  # server port -> its segment

    def leaf_segments(self, leaf: Device) -> list[Segment]:
        """Segments with a member on this leaf, in segment order."""
        numbers = {
            self.segment_of[p.link.other(p)].number
            for p in leaf.ports.values()
            if p.link is not None and p.link.kind is LinkKind.HOST and p.link.other(p) in self.segment_of
        }
        return [s for s in self.segments if s.number in numbers]


def vrf_name(tenant: str) -> str:
    # SONiC requires VRF names to start with "Vrf"; the same name on NX-OS keeps both NOS alike
    return f"Vrf-{tenant}"


def plan_evpn(plan: LeafSpinePlan, fabric: Fabric, spine_asn: int) -> tuple[EvpnPlan | None, list[Problem]]:
    """The overlay of one fabric whose spec has routing: vxlan-evpn (None for eBGP fabrics)."""
    spec = plan.spec
    if spec.routing != "vxlan-evpn":
        return None, []
    settings = spec.evpn
    section = plan.section
    problems: list[Problem] = []
    rt_asn = settings.route_target_asn if settings.route_target_asn is not None else spine_asn
    if rt_asn > 65535:
        problems.append(
            Problem(
                f"route-targets are ASN:VNI with a 2-byte ASN, and the spines' ASN {spine_asn} is 4-byte",
                hint="set evpn.route_target_asn to a 2-byte ASN (1-65535) used only for route-targets",
                field=(section, "evpn", "route_target_asn"),
            )
        )
        return None, problems

    tenants = []
    for n, t in enumerate(settings.tenants, start=1):
        l3_vni = t.l3_vni if t.l3_vni is not None else settings.l3_vni_base + n
        tenants.append(TenantVrf(n, t.name, vrf_name(t.name), l3_vni, settings.l3_vlan_base + n, t.route_target or f"{rt_asn}:{l3_vni}"))
    ports_by_tenant, tenant_problems = _server_ports_by_tenant(plan, fabric, settings)
    problems += tenant_problems
    if problems:
        return None, problems

    per_rail = plan.network is Network.BACKEND and settings.segments == "per-rail"
    rails = sorted({p.cage for ports in ports_by_tenant.values() for p in ports}) if per_rail else []
    segment_ports: list[tuple[str, TenantVrf, int | None, list[Port]]] = []
    for tenant in tenants:
        ports = ports_by_tenant[tenant.number]
        if per_rail:
            for rail in rails:
                members = [p for p in ports if p.cage == rail]
                segment_ports.append((f"{tenant.name}-rail{rail}", tenant, rail, members))
        else:
            segment_ports.append((tenant.name, tenant, None, ports))

    pool = IPNetwork(str(plan.host_pool))
    cursor = pool.first
    evpn = EvpnPlan(plan.network, section, settings, rt_asn, tenants, [])
    needed = 0
    for number, (name, tenant, segment_rail, members) in enumerate(segment_ports, start=1):
        size = 1 << math.ceil(math.log2(len(members) + 3))  # network, anycast gateway, broadcast
        cursor = -(-cursor // size) * size  # each subnet aligned on its size
        needed = cursor + size - pool.first
        vni = settings.l2_vni_base + number
        segment = Segment(
            number=number,
            name=name,
            tenant=tenant,
            vlan=settings.vlan_base + number,
            vni=vni,
            route_target=f"{rt_asn}:{vni}",
            subnet=f"{IPAddress(cursor, 4)}/{32 - int(math.log2(size))}",
            gateway=str(IPAddress(cursor + 1, 4)),
            rail=segment_rail,
        )
        evpn.segments.append(segment)
        evpn.members[number] = members
        for port in members:
            evpn.segment_of[port] = segment
        cursor += size
    if needed > pool.size:
        problems.append(
            Problem(
                f"pool {pool} is too small for {len(evpn.segments)} EVPN segments: they need {needed:,} addresses",
                hint=f"use a /{32 - math.ceil(math.log2(needed))} or larger",
                field=(section, "pools", plan.host_pool_name),
            )
        )
    return evpn, problems


def _server_ports_by_tenant(plan: LeafSpinePlan, fabric: Fabric, settings: Evpn) -> tuple[dict[int, list[Port]], list[Problem]]:
    """Tenant number -> the server ports of this fabric in it, in (server, port) order.

    GPU nodes go by the tenants' `nodes` ranges (node numbers); the tenant without `nodes` takes
    every other GPU node, and (on a frontend or storage fabric) every storage and management node.
    """
    section = plan.section
    problems: list[Problem] = []
    gpu_nodes = list(fabric.by_role(Role.GPU_NODE))
    owner: dict[int, int] = {}
    default = next((n for n, t in enumerate(settings.tenants, start=1) if t.nodes is None), None)
    for n, tenant in enumerate(settings.tenants, start=1):
        span = tenant.node_range()
        if span is None:
            continue
        first, last = span
        if last > len(gpu_nodes):
            problems.append(
                Problem(
                    f"tenant {tenant.name} names nodes {first}-{last}, the cluster has {len(gpu_nodes)}",
                    hint=f"keep node numbers within 1-{len(gpu_nodes)}",
                    field=(section, "evpn", "tenants", n - 1, "nodes"),
                )
            )
            continue
        for node in range(first, last + 1):
            if node in owner:
                problems.append(
                    Problem(
                        f"node {node} is in tenant {settings.tenants[owner[node] - 1].name} and in tenant {tenant.name}",
                        hint="give each tenant its own node range",
                        field=(section, "evpn", "tenants", n - 1, "nodes"),
                    )
                )
                break
            owner[node] = n
    if problems:
        return {}, problems
    unowned = [d.index for d in gpu_nodes if d.index not in owner]
    if unowned and default is None:
        problems.append(
            Problem(
                f"GPU nodes {unowned[0]}-{unowned[-1]} are in no tenant ({len(unowned)} nodes)",
                hint="leave out 'nodes' on one tenant so it takes the rest, or extend the ranges",
                field=(section, "evpn", "tenants"),
            )
        )
        return {}, problems
    other_servers = default if default is not None else 1

    by_tenant: dict[int, list[Port]] = {n: [] for n in range(1, len(settings.tenants) + 1)}
    role_order = {Role.GPU_NODE: 0, Role.STORAGE_NODE: 1, Role.MANAGEMENT_NODE: 2}
    servers: list[tuple[tuple[int, int, int, str], Port]] = []
    for leaf in fabric.by_role(Role.LEAF, plan.network):
        for port in leaf.ports.values():
            if port.link is None or port.link.kind is not LinkKind.HOST:
                continue
            server_port = port.link.other(port)
            server = server_port.device
            servers.append(((role_order.get(server.role, 3), server.index, server_port.cage, server_port.name), server_port))
    for _, server_port in sorted(servers, key=lambda item: item[0]):
        server = server_port.device
        if server.role is Role.GPU_NODE:
            tenant_number = owner.get(server.index, default)
            assert tenant_number is not None  # a GPU node in no range with no default tenant returned a problem above
        else:
            tenant_number = other_servers
        by_tenant[tenant_number].append(server_port)
    for n, tenant in enumerate(settings.tenants, start=1):
        if not by_tenant[n]:
            problems.append(
                Problem(
                    f"tenant {tenant.name} has no servers on the {plan.network.value} fabric",
                    hint="give it a node range, or remove it",
                    field=(section, "evpn", "tenants", n - 1),
                )
            )
    return by_tenant, problems
