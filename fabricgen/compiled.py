"""The compiled fabric: what checks, device configs and reports all read."""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.addressing import AddressPlan
from fabricgen.catalog import Catalog
from fabricgen.design.evpn import EvpnPlan
from fabricgen.design.graph import Fabric, Network
from fabricgen.design.oob import OobPlan
from fabricgen.design.plan import LeafSpinePlan
from fabricgen.design.sizing import BackendSizing
from fabricgen.intent.model import Intent


@dataclass(frozen=True)
class Compiled:
    """The graph, its sizing and addressing, what was asked, and notes for the user (design
    choices fabricgen made, advisories) that every report repeats. `plans` holds one entry per
    leaf/spine network (backend first, then frontend and storage when built)."""

    intent: Intent
    catalog: Catalog
    sizing: BackendSizing
    fabric: Fabric
    addresses: AddressPlan
    plans: dict[Network, LeafSpinePlan]
    oob: OobPlan | None = None
    notes: tuple[str, ...] = ()
    evpn: dict[Network, EvpnPlan] | None = None  # per VXLAN EVPN fabric

    def evpn_of(self, network: Network) -> EvpnPlan | None:
        return (self.evpn or {}).get(network)

    def plan_of(self, network: Network) -> LeafSpinePlan:
        return self.plans[network]
