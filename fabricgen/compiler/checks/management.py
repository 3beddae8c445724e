"""Management: with an OOB network every management port and console cabled and addressed; each
NOS able to write the fabric's BGP security and management sections; what they leave out, noted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from fabricgen.basics.errors import Problem
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import FABRIC_ROLES, SERVER_ROLES, LinkKind
from fabricgen.intent.management import Management
from fabricgen.nos.interface import plugin
from fabricgen.nos.registry import title


def management_complete(c: Compiled) -> Iterable[Problem]:
    """With an OOB network: every switch's mgmt0 and console and every server's BMC cabled, and
    every management port addressed."""
    if c.oob is None:
        return
    for device in c.fabric.devices.values():
        if device.is_switch:
            model = c.catalog.switches[device.model]
            for name in (model.management_port[device.nos], model.console_port):  # type: ignore[index]
                if name not in device.ports:
                    yield Problem(f"{name} is not cabled", device=device.name, port=name)
        elif device.role in SERVER_ROLES:
            bmc = c.catalog.nodes[device.model].bmc
            if bmc is not None:
                for n in range(1, bmc.count + 1):
                    if bmc.names.format(n=n) not in device.ports:
                        yield Problem("BMC port is not cabled", device=device.name, port=bmc.names.format(n=n))
    management, addressed = LinkKind.MANAGEMENT, c.addresses.management  # bound once, not per link
    for link in c.fabric.links:
        if link.kind is management and link.a not in addressed:
            yield Problem("management port has no address", device=link.a.device.name, port=link.a.name)


def security_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf, spine and core's NOS adapter can write its network's BGP security and its
    management section (SONiC: no TCP-AO in FRR, SNMPv3 user names of 4+ characters). One problem
    per network, role and gap, at the intent field that asks for it."""
    for plan in c.plans.values():
        spec = plan.spec
        for role in FABRIC_ROLES:
            devices = list(c.fabric.by_role(role, plan.network))
            if not devices:
                continue
            present = [(path, level) for path, level in c.management_levels(plan.network, role) if level is not None]
            management = Management.effective(level for _, level in present)
            for nos in sorted({d.nos for d in devices if d.nos is not None}):  # all of them: fabric roles are switches
                for gap in plugin(nos).security_gaps(spec.bgp_security, management):
                    head, _, rest = gap.field.partition(".")
                    if head == "bgp_security":
                        field = (plan.section, "bgp_security", *rest.split("."))
                    else:
                        sub = rest.split(".")[0]
                        # the innermost level that sets the sub-section is where to change it
                        where = next((path for path, level in reversed(present) if sub in level.model_fields_set), present[0][0])
                        field = (*where, *rest.split("."))
                    names = [d.name for d in devices if d.nos == nos]
                    yield Problem(f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''} ({nos}): {gap.message}", hint=gap.hint, field=field)


def unrendered_notes(c: Compiled) -> list[str]:
    """One note per NOS and set of settings its adapter does not write, naming the network roles
    that ask for them, so nothing of a management section is dropped silently."""
    groups = sorted({(d.nos, d.network, d.role, d.model) for d in c.fabric.switches() if d.nos})
    by_missing: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for nos, network, role, model in groups:
        management = Management.effective(level for _, level in c.management_levels(network, role))
        try:
            features = frozenset(c.nos_target(network, role, model).features)
        except KeyError:
            continue  # nos_releases_known reports it
        missing = tuple(plugin(nos).unrendered(management, features)) if management is not None else ()
        if missing and f"{network.value} {role.value}" not in by_missing[(nos, missing)]:
            by_missing[(nos, missing)].append(f"{network.value} {role.value}")
    return [
        f"{title(nos)} {', '.join(where)} switches: not written to their configs (set by hand, or the NOS default stays): {'; '.join(missing)}"
        for (nos, missing), where in by_missing.items()
    ]
