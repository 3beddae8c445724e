"""The compiled fabric: what checks, device configs and reports all read."""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricgen.catalog import Catalog
from fabricgen.compiler.addressing import AddressPlan
from fabricgen.compiler.design.evpn import EvpnPlan
from fabricgen.compiler.design.graph import Fabric, Network, Role
from fabricgen.compiler.design.oob import OobPlan
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.compiler.design.sizing import BackendSizing
from fabricgen.intent.management import Management
from fabricgen.intent.model import Intent, SwitchRole


@dataclass(frozen=True)
class NosTarget:
    """What a switch runs: the NOS, the catalog flavour and release, and the features of the
    catalog's matrix that release has on that switch model (renderers pick forms by them)."""

    nos: str
    flavour: str
    release: str
    features: frozenset[str]
    field: tuple[str, ...]  # the intent field that sets it (the role's nos_release)


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
    _targets: dict = field(default_factory=dict, compare=False, repr=False)  # nos_target's, per role and model

    def evpn_of(self, network: Network) -> EvpnPlan | None:
        return (self.evpn or {}).get(network)

    def plan_of(self, network: Network) -> LeafSpinePlan:
        return self.plans[network]

    def management_levels(self, network: Network, role: Role) -> list[tuple[tuple[str, ...], Management | None]]:
        """Where a switch of `role` in `network` takes its management settings from, outermost
        first, each with its intent field: the cluster's, the network's, the role's."""
        if role is Role.OOB_SWITCH:
            oob = self.intent.oob
            return [
                (("management",), self.intent.management),
                (("oob", "management"), oob.management if oob is not None else None),
                (("oob", "switch", "management"), oob.switch.management if oob is not None else None),
            ]
        plan = self.plans[network]
        role_spec = getattr(plan.spec, role.value, None)  # leaf, spine; core only when the intent names it
        return [
            (("management",), self.intent.management),
            ((plan.section, "management"), plan.spec.management),
            ((plan.section, role.value, "management"), role_spec.management if role_spec is not None else None),
        ]

    def role_spec(self, network: Network, role: Role) -> tuple[tuple[str, ...], SwitchRole]:
        """The intent's entry for a switch role of a network, with its field path."""
        if role is Role.OOB_SWITCH:
            assert self.intent.oob is not None
            return ("oob", "switch"), self.intent.oob.switch
        plan = self.plans[network]
        if role is Role.CORE:
            return (plan.section, "core"), plan.spec.core_switch
        return (plan.section, role.value), getattr(plan.spec, role.value)

    def nos_target(self, network: Network, role: Role, model: str) -> NosTarget:
        """The release a switch of this role and model runs, and its features. Raises KeyError for
        a release no catalog flavour has (the checks report it first: `nos_releases_known`)."""
        key = (network, role, model)
        target = self._targets.get(key)
        if target is None:
            where, spec = self.role_spec(network, role)
            release = spec.nos_release or self.catalog.default_release(model, spec.nos)
            found = self.catalog.flavour_of(spec.nos, release)
            if found is None:
                raise KeyError(f"{spec.nos} release {release}")
            name, flavour = found
            features = frozenset(f for f in flavour.features if flavour.has(f, release, model))
            target = self._targets[key] = NosTarget(spec.nos, name, release, features, (*where, "nos_release"))
        return target
