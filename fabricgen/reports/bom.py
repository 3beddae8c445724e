"""The bill of materials, laid out like the components table of Cisco's AI-cluster whitepaper.

Counting rules (the README repeats them):
- one switch per device, one server per node, one console server and its async modules per
  console server (a module per slot whose lines are used);
- one transceiver per switch cage that is cabled (a breakout transceiver serves all its
  sub-ports); DAC and AOC cables, whose ends are built in, count one per link instead;
- one cable per link, by PID and, with a rack layout, by standard length; console lines use the
  async module's octal cables, one per `ports_per_cable` lines used;
- server-side transceivers are not listed (they ship with the nodes, as in the whitepaper);
- spares: `bom.spares_percent` more of every optic and cable row, rounded up.

Each row says how it was counted (`basis`) and, for optics and cables, what other counting rules
would give (`alternatives`, e.g. every cage of the spines populated), which `bom compare` uses to
explain a difference from a reference list.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from fabricgen.compiled import Compiled
from fabricgen.design.graph import Device, LinkKind, Network, Role
from fabricgen.render.environment import environment
from fabricgen.reports._csv import csv_text

SECTION_GPU_NODES = "GPU nodes"
SECTION_MANAGEMENT_NODES = "Management nodes"
SECTION_STORAGE_NODES = "Storage nodes"
SECTION_BACKEND = "Backend network"
SECTION_CONVERGED = "Converged frontend and storage network"
SECTION_FRONTEND = "Frontend network"
SECTION_STORAGE = "Storage network"
SECTION_OOB = "OOB management network"
SECTION_PLATFORM = "Management platform"

COLUMNS = ("section", "pid", "description", "quantity", "length_m", "basis", "alternatives")


@dataclass(frozen=True)
class BomRow:
    section: str
    pid: str
    description: str
    quantity: int
    length_m: float | None = None
    basis: str = ""
    alternatives: str = ""


def _network_section(c: Compiled, network: Network) -> str:
    if network is Network.BACKEND:
        return SECTION_BACKEND
    if network is Network.OOB:
        return SECTION_OOB
    if network is Network.FRONTEND:
        converged = c.intent.frontend is not None and c.intent.frontend.storage == "converged"
        return SECTION_CONVERGED if converged else SECTION_FRONTEND
    return SECTION_STORAGE


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else _plural_word(word)}"


def _plural_word(word: str) -> str:
    if word.endswith("leaf"):
        return word[:-1] + "ves"
    return word + ("es" if word.endswith("ch") else "s")


def _role_word(device: Device) -> str:
    return {Role.OOB_SWITCH: "OOB switch", Role.LEAF: "leaf", Role.SPINE: "spine", Role.CORE: "core"}.get(device.role, device.role.value)


def bom_rows(c: Compiled) -> list[BomRow]:
    catalog = c.catalog
    spares = c.intent.bom.spares_percent
    rows: list[BomRow] = []

    for section, role in ((SECTION_GPU_NODES, Role.GPU_NODE), (SECTION_MANAGEMENT_NODES, Role.MANAGEMENT_NODE), (SECTION_STORAGE_NODES, Role.STORAGE_NODE)):
        nodes = Counter(d.model for d in c.fabric.by_role(role))
        rows += [BomRow(section, pid, catalog.description(pid), n, basis="one per node") for pid, n in sorted(nodes.items())]

    switches_by_network: dict[Network, list[Device]] = defaultdict(list)
    for device in c.fabric.switches():
        switches_by_network[device.network].append(device)
    links_by_network = defaultdict(list)
    for link in c.fabric.links:
        links_by_network[link.network].append(link)

    for network in Network:
        switches = switches_by_network.get(network, [])
        links = links_by_network.get(network, [])
        if not switches and not links:
            continue
        section = _network_section(c, network)
        # switches, by model, with the roles they play
        by_model: dict[str, Counter[str]] = defaultdict(Counter)
        for device in switches:
            by_model[device.model][_role_word(device)] += 1
        for pid, roles in by_model.items():
            basis = "one per switch: " + " + ".join(_plural(n, role) for role, n in roles.items())
            rows.append(BomRow(section, pid, catalog.description(pid), sum(roles.values()), basis=basis))

        # pluggable optics: one per cabled cage, by the role of the switch holding it
        optics: dict[str, Counter[str]] = defaultdict(Counter)
        built_in: Counter[str] = Counter()
        for device in switches:
            cages = {port.cage: port.optic for port in device.ports.values() if port.optic and port.front_panel}
            for optic in cages.values():
                if catalog.transceivers[optic].cable is None:
                    continue  # DAC/AOC: counted per link below
                optics[optic][_role_word(device)] += 1
        for link in links:
            for port in {link.a.optic, link.b.optic} - {None}:
                if catalog.transceivers[port].cable is None:  # type: ignore[index]
                    built_in[port] += 1  # type: ignore[index]
        for pid, roles in optics.items():
            total = sum(roles.values())
            basis = "one per cabled switch cage: " + " + ".join(f"{n} on {_plural_word(role)}" for role, n in roles.items())
            rows.append(_spared(BomRow(section, pid, catalog.description(pid), total, basis=basis, alternatives=_alternatives(c, switches, pid)), spares))
        for pid, n in sorted(built_in.items()):
            rows.append(_spared(BomRow(section, pid, catalog.description(pid), n, basis="one per link (cable built in)"), spares))

        # cables: one per link, by PID and length
        cables: dict[tuple[str, float | None], Counter[str]] = defaultdict(Counter)
        for link in links:
            if link.cable:
                cables[(link.cable, link.length_m)][link.kind.value] += 1
        optic_for_cable = {}
        for pid in optics:
            optic_for_cable.setdefault(catalog.transceivers[pid].cable, pid)
        for (pid, length), kinds in sorted(cables.items(), key=lambda item: (item[0][0], item[0][1] or 0)):
            basis = "one per link: " + " + ".join(f"{n} {kind}" for kind, n in kinds.items())
            if pid in optic_for_cable:
                alternatives = _alternatives(c, switches, optic_for_cable[pid])
            else:
                alternatives = _copper_alternatives(c, switches)
            rows.append(_spared(BomRow(section, pid, catalog.description(pid), sum(kinds.values()), length, basis, alternatives), spares))

        if network is Network.OOB:
            rows += _console_rows(c, spares)

    if c.intent.management_platform is not None:
        platform = c.intent.management_platform
        rows.append(BomRow(SECTION_PLATFORM, platform.model, catalog.description(platform.model), platform.count, basis="as the intent lists"))
    return rows


def _spared(row: BomRow, percent: int) -> BomRow:
    if not percent:
        return row
    extra = math.ceil(row.quantity * percent / 100)
    return BomRow(row.section, row.pid, row.description, row.quantity + extra, row.length_m, f"{row.basis}; + {extra} spares ({percent} %)", row.alternatives)


def _alternatives(c: Compiled, switches: list[Device], optic_pid: str) -> str:
    """What the row would hold if every cage this optic fits were populated, per switch role and
    for all the section's switches: the counting rule published designs often use."""
    optic = c.catalog.transceivers[optic_pid]
    per_role: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # role -> [switches, cages]
    for device in switches:
        cages = sum(g.count for g in c.catalog.switches[device.model].port_groups if g.form_factor == optic.form_factor and g.speed == optic.speed)
        if cages:
            entry = per_role[_role_word(device)]
            entry[0] += 1
            entry[1] += cages
    if not per_role:
        return ""
    label = f"{optic.form_factor} {optic.speed}G"
    parts = [f"every {label} cage of the {_plural(n, role)}={cages}" for role, (n, cages) in per_role.items()]
    if len(per_role) > 1:
        parts.append(f"every {label} cage of all {len(switches)} switches={sum(cages for _, cages in per_role.values())}")
    return "; ".join(parts)


def _copper_alternatives(c: Compiled, switches: list[Device]) -> str:
    oob = [d for d in switches if d.role is Role.OOB_SWITCH]
    cages = sum(g.count for d in oob for g in c.catalog.switches[d.model].port_groups if g.form_factor == "RJ45")
    return f"every copper port of the {_plural(len(oob), 'OOB switch')}={cages}" if oob else ""


def _console_rows(c: Compiled, spares: int) -> list[BomRow]:
    catalog = c.catalog
    servers = list(c.fabric.by_role(Role.CONSOLE_SERVER))
    if not servers or c.oob is None or c.intent.oob is None:
        return []
    console = c.intent.oob.console
    model = catalog.console_servers[console.model]
    module = catalog.modules[console.module]
    modules = sum(c.oob.modules.values())
    lines = Counter(link.b.device.name for link in c.fabric.links if link.kind is LinkKind.CONSOLE)
    rows = [
        BomRow(SECTION_OOB, console.model, catalog.description(console.model), len(servers), basis=f"one per console server: {c.oob.console_ports} switch consoles"),
        BomRow(SECTION_OOB, console.module, catalog.description(console.module), modules, basis=f"one per slot with lines in use ({module.async_ports} lines each)"),
    ]
    if model.uplink_optic:
        rows.append(
            _spared(BomRow(SECTION_OOB, model.uplink_optic, catalog.description(model.uplink_optic), len(servers), basis="one per console server uplink"), spares)
        )
    if module.cable:
        per_module_cables = 0
        for server in servers:
            used = lines.get(server.name, 0)
            per_module_cables += math.ceil(used / module.ports_per_cable)
        rows.append(
            _spared(
                BomRow(SECTION_OOB, module.cable, catalog.description(module.cable), per_module_cables, basis=f"one per {module.ports_per_cable} console lines in use"),
                spares,
            )
        )
    return rows


def render_bom(c: Compiled) -> dict[str, str]:
    rows = bom_rows(c)
    sections: dict[str, list[BomRow]] = {}
    for row in rows:
        sections.setdefault(row.section, []).append(row)
    markdown = environment().get_template("reports/bom.md.j2").render(
        name=c.intent.name, sections=sections, gpus=c.sizing.gpus, spares=c.intent.bom.spares_percent
    )
    text = csv_text(
        COLUMNS,
        ((r.section, r.pid, r.description, r.quantity, _length(r.length_m), r.basis, r.alternatives) for r in rows),
    )
    return {"bom.csv": text, "bom.md": markdown}


def _length(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:g}"
