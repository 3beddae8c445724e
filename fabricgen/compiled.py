"""The compiled fabric: what checks, device configs and reports all read."""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.addressing import AddressPlan
from fabricgen.catalog import Catalog
from fabricgen.design.evpn import EvpnPlan
from fabricgen.design.graph import Fabric, Network, Role
from fabricgen.design.oob import OobPlan
from fabricgen.design.plan import LeafSpinePlan
from fabricgen.design.sizing import BackendSizing
from fabricgen.intent.management import Management
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

    def management_levels(self, network: Network, role: Role) -> list[tuple[tuple[str, ...], Management | None]]:
        """Where a switch of `role` in `network` takes its management settings from, outermost
        first, each with its intent field: the cluster's, the network's, the role's."""
        if role is Role.OOB_SWITCH:
            oob = self.intent.oob
            return [(("management",), self.intent.management), (("oob", "management"), oob and oob.management),
                    (("oob", "switch", "management"), oob and oob.switch.management)]
        plan = self.plans[network]
        role_spec = getattr(plan.spec, role.value, None)  # leaf, spine; core only when the intent names it
        return [(("management",), self.intent.management), ((plan.section, "management"), plan.spec.management),
                ((plan.section, role.value, "management"), role_spec.management if role_spec is not None else None)]
