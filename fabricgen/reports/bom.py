"""The bill of materials, laid out like the components table of Cisco's AI-cluster whitepaper.

Counting rules (the README repeats them):
- one switch per device, one server per node, one console server and its async modules per
  console server (a module per slot whose lines are used);
- one transceiver per switch cage that is cabled (a breakout transceiver serves all its
  sub-ports); DAC and AOC cables, whose ends are built in, count one per link instead, and a
  breakout (Y) DAC/AOC one per switch cage it occupies;
- one cable per link, by PID and, with a rack layout, by standard length (two for a link that
  takes both connectors of a twin-port module, e.g. OSFP-800G-DR8 at 1 x 800G); console lines use the
  async module's octal cables, one per `ports_per_cable` lines used;
- server-side transceivers are not listed (they ship with the nodes, as in the whitepaper);
- spares: `bom.spares_percent` more of every optic and cable row, rounded up.

`bom.counting: populate-all` counts as Cisco's AI-cluster whitepaper does instead (see
`_populated_groups`): every cage of a port group facing down or leaving the fabric holds an
optic and a cable, cabled or not, and the octal console cables are left out.

Each row says how it was counted (`basis`) and, for optics and cables, what other counting rules
would give (`alternatives`, e.g. every cage of the spines populated), which `bom compare` uses to
explain a difference from a reference list.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from fabricgen.basics.csv_format import csv_text
from fabricgen.build.build_dir import BomRow
from fabricgen.catalog.model import Chassis
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import Device, LinkKind, Network, Role
from fabricgen.render.environment import environment

SECTION_GPU_NODES = "GPU nodes"
SECTION_MANAGEMENT_NODES = "Management nodes"
SECTION_STORAGE_NODES = "Storage nodes"
SECTION_BACKEND = "Backend network"
SECTION_CONVERGED = "Converged frontend and storage network"
SECTION_FRONTEND = "Frontend network"
SECTION_STORAGE = "Storage network"
SECTION_OOB = "OOB management network"
SECTION_PLATFORM = "Management platform"

POPULATE_ALL = "populate-all (every cage of a port group facing down or leaving the fabric)"
COLUMNS = tuple(BomRow.model_fields)  # bom.csv's header: the row's fields, in their order


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
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return word[:-1] + "ies"  # power supply
    return word + ("es" if word.endswith("ch") else "s")


_ROLE_WORDS = {Role.OOB_SWITCH: "OOB switch", Role.LEAF: "leaf", Role.SPINE: "spine", Role.CORE: "core"}


def _role_word(device: Device) -> str:
    return _ROLE_WORDS.get(device.role) or device.role.value


def bom_rows(c: Compiled) -> list[BomRow]:
    catalog = c.catalog
    spares = c.intent.bom.spares_percent
    populate_all = c.intent.bom.counting == "populate-all"
    rows: list[BomRow] = []

    for section, role in ((SECTION_GPU_NODES, Role.GPU_NODE), (SECTION_MANAGEMENT_NODES, Role.MANAGEMENT_NODE), (SECTION_STORAGE_NODES, Role.STORAGE_NODE)):
        nodes = Counter(d.model for d in c.fabric.by_role(role))
        rows += [BomRow(section=section, pid=pid, description=catalog.description(pid), quantity=n, basis="one per node") for pid, n in sorted(nodes.items())]

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
            switches_of = " + ".join(_plural(n, role) for role, n in roles.items())
            chassis = catalog.switches[pid].chassis
            if chassis is None:
                rows.append(
                    BomRow(section=section, pid=pid, description=catalog.description(pid), quantity=sum(roles.values()), basis=f"one per switch: {switches_of}")
                )
            else:
                rows += _chassis_rows(section, pid, catalog.description(pid), chassis, sum(roles.values()), switches_of)

        populated = _populated_groups(c, switches) if populate_all else None
        rows += _optic_and_cable_rows(c, section, switches, links, populated, spares)

        if network is Network.OOB:
            rows += _console_rows(c, spares, populate_all)

    if c.intent.management_platform is not None:
        platform = c.intent.management_platform
        rows.append(
            BomRow(
                section=SECTION_PLATFORM,
                pid=platform.model,
                description=catalog.description(platform.model),
                quantity=platform.count,
                basis="as the intent lists",
            )
        )
    return rows


def _chassis_rows(section: str, model: str, description: str, chassis: Chassis, switches: int, switches_of: str) -> list[BomRow]:
    """A chassis switch model's rows: the chassis, one per switch, then each of its line cards,
    supervisors, fabric modules (power supplies, fan trays) as many per switch as the catalog
    fits; a part no public source confirmed says so in its basis."""
    rows = [BomRow(section=section, pid=chassis.pid or model, description=description, quantity=switches, basis=f"one chassis per switch: {switches_of}")]
    for kind, pid, part, per_switch, unverified in chassis.parts():
        basis = f"{_plural(per_switch, kind)} per {model} chassis x {switches}"
        if kind == "line card":
            slots = sorted(slot for slot, card in chassis.fitted() if card.pid == pid)
            basis += f" (slots {_slot_ranges(slots)})"
        if unverified:
            basis += f"; unverified: {unverified}"
        rows.append(BomRow(section=section, pid=pid, description=part, quantity=per_switch * switches, basis=basis))
    return rows


def _slot_ranges(slots: list[int]) -> str:
    """3, 4, 5, 7 -> "3-5, 7"."""
    runs: list[list[int]] = []
    for slot in slots:
        if runs and slot == runs[-1][-1] + 1:
            runs[-1].append(slot)
        else:
            runs.append([slot])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs)


GroupKey = tuple[Role, str, int]  # (role, switch model, first cage of the port group)
PartChoice = tuple[str | None, str | None]  # (optic PID or None for RJ45, cable PID or None when built in)


def _populated_groups(c: Compiled, switches: list[Device]) -> dict[GroupKey, PartChoice]:
    """populate-all: the port groups whose every cage holds an optic, with the optic and cable an
    empty cage gets (the ones most of the group's cabled cages carry).

    The whitepaper's components table (tests/data/whitepaper-*-gpu.csv; DOMAIN.md, section 1)
    counts every cage of the backend leaves and spines (768 = 12 x 64), of the frontend spines
    (128 = 2 x 64) and of the frontend leaves' 100G group (224 = 8 x 28), every copper and 100G
    port of the OOB switches (192 = 4 x 48, 24 = 4 x 6), but not the frontend leaves' 400G uplink
    group (8 per leaf): that group's cables end on spine cages it already counts. So a group is
    populated when, on any switch of that role and model, one of its cabled ports faces down (it is
    the upper end of its link: hosts, lower tier, management ports) or leaves the build (an OOB
    uplink to the management core); a group cabled only up to the next tier of switches is counted
    at that tier."""
    catalog = c.catalog
    usage: dict[GroupKey, Counter[PartChoice]] = defaultdict(Counter)
    for device in switches:
        model = catalog.switches[device.model]
        for port in device.ports.values():
            link = port.link
            if not port.front_panel or link is None:
                continue
            group = model.group_of(port.cage)
            if group is None:
                continue
            if port is link.a and link.b.device.is_switch:
                continue  # an uplink to the next tier
            # an empty cage takes the media of the group's downward (or outward) links
            usage[(device.role, device.model, group.first)][(port.optic, link.cable)] += 1
    # most used first, then by PID so the choice does not depend on device order
    return {key: min(counts.items(), key=lambda item: (-item[1], str(item[0])))[0] for key, counts in usage.items()}


def _built_in_parts(c: Compiled, links: list) -> tuple[Counter[str], dict[str, int]]:
    """DAC and AOC parts: one per link, except a breakout (Y) cable carrying `links` > 1 links,
    which is one part per switch cage it occupies (its broken-out end), however many of its
    legs are cabled. -> (parts by PID, links per part for breakout PIDs)."""
    catalog = c.catalog
    parts: Counter[str] = Counter()
    fanout: dict[str, int] = {}
    cages_seen: set[tuple[str, int]] = set()
    built_in = {pid for pid, optic in catalog.transceivers.items() if optic.cable is None}
    for link in links:
        a, b = link.a.optic, link.b.optic
        if a not in built_in and b not in built_in:
            continue  # pluggable optics (or none): their cables are counted as cables
        for pid in {a, b} & built_in:
            optic = catalog.transceivers[pid]
            if optic.links > 1:
                fanout[pid] = optic.links
                head = next((end for end in (link.b, link.a) if end.optic == pid and end.sub), None)
                if head is not None:
                    cage = (head.device.name, head.cage)
                    if cage in cages_seen:
                        continue
                    cages_seen.add(cage)
            parts[pid] += 1
    return parts, fanout


def _optic_and_cable_rows(
    c: Compiled, section: str, switches: list[Device], links: list, populated: dict[GroupKey, PartChoice] | None, spares: int
) -> list[BomRow]:
    """The section's optic, DAC/AOC and cable rows. `populated` is None when counting cabled
    cages and links; else the port groups populate-all fills (`_populated_groups`)."""
    catalog = c.catalog
    rows: list[BomRow] = []
    # pluggable optics: one per cabled cage, by the role of the switch holding it
    optics: dict[str, Counter[str]] = defaultdict(Counter)
    cabled_optics: Counter[str] = Counter()  # what the cabled rule gives, for populate-all's alternatives
    empty_optics: dict[str, Counter[str]] = defaultdict(Counter)  # populate-all: empty cages, by role
    empty_built_in: Counter[str] = Counter()
    far_end: dict[str, Counter[str]] = defaultdict(Counter)  # populate-all: cabled cages left to the far end
    empty_cables: Counter[str] = Counter()
    for device in switches:
        cages = {port.cage: port.optic for port in device.ports.values() if port.optic and port.front_panel}
        role = _role_word(device)
        if populated is None:
            # cabled cages only: the switch's cages counted per optic at once (in C), not one by one
            for optic, n in Counter(cages.values()).items():
                if catalog.transceivers[optic].cable is not None:  # DAC/AOC: counted per link (or per breakout cage) below
                    cabled_optics[optic] += n
                    optics[optic][role] += n
            continue
        model = catalog.switches[device.model]
        for cage, optic in cages.items():
            if catalog.transceivers[optic].cable is None:
                continue  # DAC/AOC, as above
            cabled_optics[optic] += 1
            group = model.group_of(cage)
            if group is None or (device.role, device.model, group.first) not in populated:
                far_end[optic][role] += 1
                continue  # populate-all: counted at the far end, as the whitepaper does
            optics[optic][role] += 1
        cabled = {port.cage for port in device.ports.values() if port.front_panel and port.link is not None}
        for group in model.port_groups:
            choice = populated.get((device.role, device.model, group.first))
            if choice is None:
                continue
            optic_pid, cable_pid = choice
            empty = sum(1 for cage in range(group.first, group.first + group.count) if cage not in cabled)
            if not empty:
                continue
            transceiver = catalog.transceivers[optic_pid] if optic_pid else None
            if optic_pid and transceiver is not None and transceiver.cable is None:
                empty_built_in[optic_pid] += empty
                continue
            if optic_pid is not None:
                optics[optic_pid][_role_word(device)] += empty
                empty_optics[optic_pid][_role_word(device)] += empty
            if cable_pid is not None:
                empty_cables[cable_pid] += empty * (transceiver.links if transceiver is not None else 1)  # a cage carrying N links takes N cables
    built_in, fanout = _built_in_parts(c, links)

    for pid, roles in optics.items():
        total = sum(roles.values())
        alternatives = _alternatives(c, switches, pid)
        if populated is None:
            basis = "one per cabled switch cage: " + " + ".join(f"{n} on {_plural_word(role)}" for role, n in roles.items())
        else:
            basis = f"{POPULATE_ALL}: " + " + ".join(
                f"{n} on {_plural_word(role)}" + (f" ({empty_optics[pid][role]} empty)" if empty_optics[pid][role] else "") for role, n in roles.items()
            )
            if far_end[pid]:
                left = " + ".join(f"{n} on {_plural_word(role)}" for role, n in far_end[pid].items())
                basis += f"; not the {left} cabled only to the next tier (the far end is counted)"
            alternatives = "; ".join(text for text in (f"one per cabled switch cage={cabled_optics[pid]}", alternatives) if text)
        rows.append(
            _spared(BomRow(section=section, pid=pid, description=catalog.description(pid), quantity=total, basis=basis, alternatives=alternatives), spares)
        )
    for pid in sorted(set(built_in) | set(empty_built_in)):
        n, extra = built_in[pid], empty_built_in[pid]
        basis = f"one per switch cage ({fanout[pid]} links each, cable built in)" if pid in fanout else "one per link (cable built in)"
        if extra:
            basis = f"{POPULATE_ALL}: {basis}, + {extra} empty cages"
        rows.append(_spared(BomRow(section=section, pid=pid, description=catalog.description(pid), quantity=n + extra, basis=basis), spares))

    # cables: one per link, by PID and length
    # by PID and length: (link kind, cables each link takes) -> links; "empty cage" -> cables
    cables: dict[tuple[str, float | None], Counter[tuple[str, int]]] = defaultdict(Counter)
    per_link: Counter[str] = Counter()
    # the links counted by what decides their cables first (in C), then the cables per distinct kind of link
    alike = Counter((link.cable, link.length_m, link.kind, link.b.optic or link.a.optic, link.a.speed_gbps) for link in links if link.cable)
    for (pid, length, kind, optic, speed), count in alike.items():
        n = catalog.transceivers[optic].cables_per_link(speed) if optic else 1
        cables[(pid, length)][(kind, n)] += count  # kind: the StrEnum member, formats as its value
        per_link[pid] += n * count
    for pid, n in empty_cables.items():
        cables[(pid, None)][("empty cage", 1)] += n
    optic_for_cable: dict[str | None, str] = {}  # cable PID (None: built in) -> the first optic taking it
    for pid in optics:
        optic_for_cable.setdefault(catalog.transceivers[pid].cable, pid)
    for (pid, length), counted in sorted(cables.items(), key=lambda item: (item[0][0], item[0][1] or 0)):
        # a link over both connectors of a twin-port module takes two: "8 fabric x 2"
        kinds = {f"{kind}" if n == 1 else f"{kind} x {n}": links_or_cables * n for (kind, n), links_or_cables in counted.items()}
        labels = {f"{kind}" if n == 1 else f"{kind} x {n}": links_or_cables for (kind, n), links_or_cables in counted.items()}
        basis = "one per link: " + " + ".join(f"{labels[key]} {key}" for key in kinds)
        if pid in optic_for_cable:
            alternatives = _alternatives(c, switches, optic_for_cable[pid])
        else:
            alternatives = _copper_alternatives(c, switches)
        if populated is not None:
            cabled_kinds = " + ".join(f"{labels[key]} {key}" for key in kinds if key != "empty cage")
            basis = f"{POPULATE_ALL}: one per link" + (f" ({cabled_kinds})" if cabled_kinds else "")
            if kinds.get("empty cage"):
                basis += f" + one per empty cage ({kinds['empty cage']})"
            alternatives = "; ".join(text for text in (f"one per link={per_link[pid]}", alternatives) if text)
        row = BomRow(
            section=section,
            pid=pid,
            description=catalog.description(pid),
            quantity=sum(kinds.values()),
            length_m=length,
            basis=basis,
            alternatives=alternatives,
        )
        rows.append(_spared(row, spares))
    return rows


def _spared(row: BomRow, percent: int) -> BomRow:
    if not percent:
        return row
    extra = math.ceil(row.quantity * percent / 100)
    return BomRow.model_validate({**dict(row), "quantity": row.quantity + extra, "basis": f"{row.basis}; + {extra} spares ({percent} %)"})


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


def _console_rows(c: Compiled, spares: int, populate_all: bool = False) -> list[BomRow]:
    """Console servers, their async modules and uplink optics, and (counting cabled) the modules'
    octal cables. populate-all leaves the octal cables out: the whitepaper's components table
    lists none (tests/data/whitepaper-*-gpu.csv), and bom.md says how many the lines need."""
    catalog = c.catalog
    servers = list(c.fabric.by_role(Role.CONSOLE_SERVER))
    if not servers or c.oob is None or c.intent.oob is None:
        return []
    console = c.intent.oob.console
    model = catalog.console_servers[console.model]
    module = catalog.modules[console.module]
    modules = sum(c.oob.modules.values())
    rows = [
        BomRow(
            section=SECTION_OOB,
            pid=console.model,
            description=catalog.description(console.model),
            quantity=len(servers),
            basis=f"one per console server: {c.oob.console_ports} switch consoles",
        ),
        BomRow(
            section=SECTION_OOB,
            pid=console.module,
            description=catalog.description(console.module),
            quantity=modules,
            basis=f"one per slot with lines in use ({module.async_ports} lines each)",
        ),
    ]
    if model.uplink_optic:
        rows.append(
            _spared(
                BomRow(
                    section=SECTION_OOB,
                    pid=model.uplink_optic,
                    description=catalog.description(model.uplink_optic),
                    quantity=len(servers),
                    basis="one per console server uplink",
                ),
                spares,
            )
        )
    octal = _octal_cables(c)
    if octal is not None and not populate_all:
        pid, count = octal
        row = BomRow(
            section=SECTION_OOB, pid=pid, description=catalog.description(pid), quantity=count, basis=f"one per {module.ports_per_cable} console lines in use"
        )
        rows.append(_spared(row, spares))
    return rows


def _octal_cables(c: Compiled) -> tuple[str, int] | None:
    """(cable PID, count) of the async modules' octal cables: one per `ports_per_cable` console
    lines in use on each console server; None without console servers or a module cable."""
    if c.intent.oob is None:
        return None
    module = c.catalog.modules[c.intent.oob.console.module]
    servers = list(c.fabric.by_role(Role.CONSOLE_SERVER))
    if not module.cable or not servers:
        return None
    console = LinkKind.CONSOLE
    # a console line is a console link's b end: the servers' own ports, not every link of the fabric
    lines = [sum(1 for port in server.ports.values() if port.link is not None and port.link.kind is console and port is port.link.b) for server in servers]
    return module.cable, sum(math.ceil(n / module.ports_per_cable) for n in lines)


def render_bom(c: Compiled) -> dict[str, str]:
    rows = bom_rows(c)
    sections: dict[str, list[BomRow]] = {}
    for row in rows:
        sections.setdefault(row.section, []).append(row)
    populate_all = c.intent.bom.counting == "populate-all"
    markdown = (
        environment()
        .get_template("reports/bom.md.j2")
        .render(
            name=c.intent.name,
            sections=sections,
            gpus=c.sizing.gpus,
            spares=c.intent.bom.spares_percent,
            populate_all=populate_all,
            octal=_octal_cables(c) if populate_all else None,
        )
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
