"""One leaf/spine network's plan: the numbers addressing, checks and configs need, the same for
the backend and for frontend and storage fabrics."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from ipaddress import IPv4Network

from fabricgen.compiler.design.graph import Network
from fabricgen.compiler.design.sizing import BackendSizing
from fabricgen.intent.model import Backend, HostFabric, Intent


@dataclass(frozen=True)
class LeafSpinePlan:
    network: Network
    section: str  # the intent key it comes from, for error fields: backend, frontend, storage
    spec: Backend | HostFabric
    leaves: int
    spines: int
    leaf_downlinks: int  # server ports each leaf reserves (sizes its address block)
    leaf_uplinks: int
    links_per_spine: int  # from each leaf to each spine
    requested_ratio: Fraction
    built_ratio: Fraction
    host_addressing: str  # p2p | subnet | segment (VXLAN EVPN: by the server's segment)
    host_pool_name: str  # gpu_nics (backend) or hosts
    notes: tuple[str, ...] = ()
    tiers: int = 2
    pods: int = 1
    most_pods: int = 1  # 3 tiers: the spine ASNs reserved, so adding a pod keeps every leaf's ASN
    pod_leaves: int = 0  # 3 tiers: leaves in a full pod
    cores: int = 0  # 3 tiers
    spine_uplinks: int = 0  # 3 tiers: each spine's links to its group of cores
    links_per_core: int = 0  # 3 tiers: from a spine to each core of its group
    spine_built_ratio: Fraction | None = None  # 3 tiers
    peer_links: int = 0  # a spine-free pair: routed links between its two leaves

    @property
    def leaf_asns_per_pod(self) -> bool:
        """3 tiers with `asn.leaves: per-pod`: every pod's leaves reuse the same ASNs (allowas-in)."""
        return self.tiers == 3 and self.spec.asn.leaves == "per-pod"

    @property
    def loopback_pool(self) -> IPv4Network:
        return self.spec.pools.loopbacks

    @property
    def host_pool(self) -> IPv4Network:
        return getattr(self.spec.pools, self.host_pool_name)

    @property
    def link_pool(self) -> IPv4Network:
        return self.spec.pools.fabric_links


def backend_plan(intent: Intent, sizing: BackendSizing) -> LeafSpinePlan:
    return LeafSpinePlan(
        network=Network.BACKEND,
        section="backend",
        spec=intent.backend,
        leaves=sizing.leaves,
        spines=sizing.spines,
        leaf_downlinks=sizing.leaf_downlinks,
        leaf_uplinks=sizing.leaf_uplinks,
        links_per_spine=sizing.links_per_spine,
        requested_ratio=sizing.requested_ratio,
        built_ratio=sizing.built_ratio,
        host_addressing="segment" if intent.backend.routing == "vxlan-evpn" else intent.backend.nic_addressing,
        host_pool_name="gpu_nics",
        notes=sizing.notes,
        tiers=sizing.tiers,
        pods=sizing.pods,
        most_pods=sizing.most_pods,
        pod_leaves=sizing.pod_sus * sizing.leaves_per_su,
        cores=sizing.cores,
        spine_uplinks=sizing.spine_uplinks,
        links_per_core=sizing.links_per_core,
        spine_built_ratio=sizing.spine_built_ratio,
        peer_links=sizing.peer_links,
    )
