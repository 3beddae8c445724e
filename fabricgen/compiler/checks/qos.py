"""Lossless QoS: per-switch overrides name real switches, ECN marks below the PFC trigger, and where
thresholds fall back to fabricgen's generic values (notes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from difflib import get_close_matches
from operator import attrgetter

from pydantic import ValidationError

from fabricgen.basics.errors import Problem
from fabricgen.catalog.model import PlatformQos
from fabricgen.compiler.checks.ports import SwitchPorts
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import FABRIC_ROLES, Device, Network
from fabricgen.compiler.design.plan import LeafSpinePlan
from fabricgen.compiler.qos import GENERIC, INTENT, FabricThresholds, effective_qos, pg_reserved_bytes
from fabricgen.intent.model import Qos, QosOverride
from fabricgen.nos.interface import plugin
from fabricgen.nos.registry import title


def qos_overrides_name_switches(c: Compiled) -> Iterable[Problem]:
    """Every `qos_overrides` key is a leaf or spine of its own fabric, on a fabric with QoS on, and
    the profile it makes still holds together (e.g. its priorities stay apart)."""
    for network, plan in c.plans.items():
        spec = plan.spec
        if not spec.qos_overrides:
            continue
        switches = [d.name for d in c.fabric.switches() if d.network is network and d.role in FABRIC_ROLES]
        known = set(switches)
        for name in spec.qos_overrides:
            field = (plan.section, "qos_overrides", name)
            if name not in known:
                examples = get_close_matches(name, switches, n=3, cutoff=0) or switches[:3]
                yield Problem(
                    f"{name!r} is not a switch of the {plan.section} fabric",
                    hint=f"name one of its {len(switches)} leaves and spines, e.g. {', '.join(examples)}",
                    field=field,
                )
            elif not spec.qos.enabled:
                yield Problem(
                    f"QoS is off on the {plan.section} fabric, so this override would change nothing",
                    hint=f"set {plan.section}.qos.enabled: true, or remove the override",
                    field=field,
                    device=name,
                )
            else:
                try:
                    effective_qos(spec, name)
                except ValidationError as exc:
                    reasons = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
                    yield Problem(f"with this override the switch's QoS profile is invalid: {reasons}", field=field, device=name)


def ecn_below_pfc_trigger(c: Compiled, walked: SwitchPorts | None = None) -> Iterable[Problem]:
    """DCQCN acts before PFC: on every switch (after its override), at every port speed it uses,
    ECN min < ECN max < PFC trigger (the pause point), with each value from the intent, else the
    switch model's published data, else the generic default; and the trigger lies above the
    lossless PG's reserved two frames. Switches that share a wrong setting are reported once,
    naming the first of them."""
    groups: dict[tuple, list[str]] = {}
    for plan, thresholds, device, qos, platform in _lossless_switches(c):
        spec = plan.spec
        override = spec.qos_overrides.get(device.name)
        for speed in sorted(_front_panel_speeds(device) if walked is None else walked.speeds[device]):
            t = thresholds.at(qos, device.model, platform, speed)
            ecn, trigger = t.ecn, t.pfc_trigger_kbytes
            if ecn.min_kbytes < ecn.max_kbytes < trigger and trigger * 1024 > pg_reserved_bytes(spec.mtu):
                continue
            field = _threshold_field(plan.section, device.name, override, spec.qos.model_fields_set, speed)
            key = (field, speed, ecn.min_kbytes, ecn.max_kbytes, trigger, spec.mtu, t.ecn_source, t.trigger_source)
            groups.setdefault(key, []).append(device.name)
    for (field, speed, low, high, trigger, mtu, ecn_source, trigger_source), devices in groups.items():
        if not low < high < trigger:
            message = (
                f"at {speed}G ECN marks from {low} KB to {high} KB ({_origin(ecn_source)}) but the PFC trigger is "
                f"{trigger} KB ({_origin(trigger_source)}): PFC would pause senders before ECN slows them"
            )
            hint = f"keep min < max < trigger at {speed}G: lower ecn max_kbytes below {trigger}, or raise pfc_trigger_kbytes above {high}"
        else:
            message = (
                f"at {speed}G the PFC trigger ({trigger} KB) is not above the {pg_reserved_bytes(mtu)} bytes a lossless buffer reserves (two {mtu}-byte frames)"
            )
            hint = f"raise pfc_trigger_kbytes at {speed}G (the defaults scale 4000 KB per 100G)"
        if len(devices) > 1:
            shown = ", ".join(devices[1:4]) + (", ..." if len(devices) > 4 else "")
            message += f"; the same on {len(devices) - 1} more switches ({shown})"
        yield Problem(message, hint=hint, field=field, device=devices[0])


def _lossless_switches(c: Compiled) -> Iterator[tuple[LeafSpinePlan, FabricThresholds, Device, Qos, PlatformQos]]:
    """Each leaf, spine and core of a network with QoS on, network by network, with its network's
    plan and thresholds, its effective QoS (after its override) and its model's published QoS.
    A switch whose override does not hold together is left out: qos_overrides_name_switches
    reports it."""
    by_network: dict[Network, list[Device]] = defaultdict(list)
    for device in c.fabric.switches():
        if device.role in FABRIC_ROLES:
            by_network[device.network].append(device)
    for network, plan in c.plans.items():
        spec = plan.spec
        if not spec.qos.enabled:
            continue
        thresholds = FabricThresholds(spec.qos)
        for device in by_network[network]:
            try:
                qos = effective_qos(spec, device.name)
            except ValidationError:
                continue
            yield plan, thresholds, device, qos, c.catalog.switches[device.model].qos


_front_panel, _speed_of = attrgetter("front_panel"), attrgetter("speed_gbps")


def _front_panel_speeds(device) -> set[int]:
    """The speeds a switch's data ports run at (mgmt0 and console left out), collected in C."""
    return set(map(_speed_of, filter(_front_panel, device.ports.values())))


def _origin(source: str) -> str:
    if source in (INTENT, GENERIC):
        return f"from {source}"
    return "the switch model's published value"


def _threshold_field(section: str, switch: str, override: QosOverride | None, qos_fields: set[str], speed: int) -> tuple[str, ...]:
    """Where a wrong ECN/trigger pair comes from: the switch's override if it sets either at this
    speed, else the fabric's ecn (or its pfc_trigger_kbytes when only that was written)."""
    label = f"{speed}G"
    if override is not None:
        for key in ("ecn", "pfc_trigger_kbytes"):
            values = getattr(override, key)
            if values is not None and speed in values:
                return (section, "qos_overrides", switch, key, label)
    key = "pfc_trigger_kbytes" if "pfc_trigger_kbytes" in qos_fields and "ecn" not in qos_fields else "ecn"
    return (section, "qos", key, label)


def platform_qos_notes(c: Compiled) -> list[str]:
    """Where a lossless switch's thresholds fall back to fabricgen's generic defaults (its catalog
    entry publishes none for that speed and the intent writes none), and headroom a NOS computes
    without the ASIC's MAC/PHY delay: one note per model, naming the speeds."""
    generic: dict[tuple[str, str], set[int]] = defaultdict(set)
    no_delay: set[tuple[str, str]] = set()  # (model, NOS title)
    for _, thresholds, device, qos, platform in _lossless_switches(c):
        for speed in _front_panel_speeds(device):
            t = thresholds.at(qos, device.model, platform, speed)
            if t.ecn_source == GENERIC:
                generic[(device.model, "ECN")].add(speed)
            if t.trigger_source == GENERIC:
                generic[(device.model, "the PFC trigger (pause point)")].add(speed)
        if device.nos is not None and plugin(device.nos).HEADROOM_FROM_ASIC_DELAY and platform.mac_phy_delay_bytes is None:
            no_delay.add((device.model, title(device.nos)))
    field = {"ECN": "qos.ecn", "the PFC trigger (pause point)": "qos.pfc_trigger_kbytes"}
    notes = [
        f"{model}: {what} at {', '.join(f'{s}G' for s in sorted(speeds))} is fabricgen's generic default (the catalog "
        f"publishes none for this model and speed, and the intent writes none); write {field[what]}, or add the "
        "vendor's value with its source to the catalog"
        for (model, what), speeds in sorted(generic.items())
    ]
    notes += [
        f"{model}: {nos} lossless headroom leaves out the ASIC's MAC/PHY delay (the catalog publishes no "
        "qos.mac_phy_delay_bytes for it); the platform's own buffer tables may ask for more"
        for model, nos in sorted(no_delay)
    ]
    return notes
