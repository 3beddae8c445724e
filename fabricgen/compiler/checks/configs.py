"""Checks on what will be rendered: the per-device configs of the whole cluster, hop by hop.

`fabricgen.compiler.checks` proves the graph and the plans; these prove that the configs built from them
agree where devices must agree (every leaf of an EVPN segment, both ends of a link), so a bug in
a config builder or a per-device override cannot slip into the rendered files. Every problem
names the device (and port) where agreement breaks. Linear in interfaces.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from operator import attrgetter

from fabricgen.basics.errors import Problem
from fabricgen.compiler.compiled import Compiled
from fabricgen.compiler.design.graph import LinkKind, Network
from fabricgen.compiler.device_config import DeviceConfig, InterfaceConfig, QosConfig
from fabricgen.compiler.host_config import HostConfig
from fabricgen.nos.registry import title

VXLAN_OVERHEAD = 50  # outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 bytes
_mtu_of = attrgetter("mtu")


def segments_agree(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """Every leaf of an EVPN segment gives its VNI the same route-target, VLAN and anycast
    gateway, and every leaf of a tenant gives its L3 VNI the same route-target; otherwise
    routes are not imported or the gateway moves with the host."""
    for network in c.evpn or {}:
        views: dict[tuple[str, int], dict[tuple, list[str]]] = defaultdict(lambda: defaultdict(list))
        for config in _leaves(configs, network):
            assert config.evpn is not None
            for s in config.evpn.segments:
                views[("segment", s.vni)][(s.route_target, s.vlan, s.gateway, s.vrf)].append(config.hostname)
            for v in config.evpn.vrfs:
                views[("tenant VRF", v.l3_vni)][(v.route_target, v.name)].append(config.hostname)
        for (kind, vni), variants in views.items():
            if len(variants) < 2:
                continue
            usual = max(variants, key=lambda key: len(variants[key]))
            for variant, leaves in variants.items():
                if variant == usual:
                    continue
                what = _difference(kind, usual, variant)
                yield Problem(
                    f"{kind} VNI {vni}: {what} here, unlike {len(variants[usual])} other leaves (e.g. {variants[usual][0]})"
                    + (f"; also on {', '.join(leaves[1:4])}" if len(leaves) > 1 else ""),
                    hint="every leaf of a VNI must use the same route-target, VLAN and gateway",
                    device=leaves[0],
                )


def _difference(kind: str, usual: tuple, variant: tuple) -> str:
    names = ("route-target", "VLAN", "anycast gateway", "VRF") if kind == "segment" else ("route-target", "VRF")
    return ", ".join(f"{name} {mine} (not {theirs})" for name, mine, theirs in zip(names, variant, usual, strict=True) if mine != theirs)


def vteps_reachable(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """Each VTEP address is unique, announced by its leaf into the underlay, and not hidden by an
    aggregate anywhere; every leaf has an eBGP session (with EVPN) to a spine that passes EVPN
    routes on, so every other VTEP learns it."""
    for network in c.evpn or {}:
        owners: dict[str, str] = {}
        spines = [cfg for cfg in configs.values() if cfg.evpn is not None and not cfg.evpn.vtep and cfg.network == network.value]
        spine_addresses = {i.address.split("/")[0] for s in spines for i in s.interfaces if i.address}
        for config in _leaves(configs, network):
            vtep = config.evpn.vtep_address  # type: ignore[union-attr]
            if vtep is None:
                yield Problem("leaf has no VTEP address", device=config.hostname)
                continue
            if vtep in owners:
                yield Problem(f"VTEP {vtep} is also {owners[vtep]}'s", device=config.hostname)
            owners[vtep] = config.hostname
            if config.bgp is None or f"{vtep}/32" not in config.bgp.networks:
                yield Problem(f"VTEP {vtep} is not announced into the underlay", device=config.hostname, port="loopback1")
            elif config.bgp.aggregates:
                yield Problem(f"VTEP {vtep} could be hidden by aggregates {', '.join(config.bgp.aggregates)}", device=config.hostname)
            sessions = [n for n in (config.bgp.neighbors if config.bgp else ()) if n.address in spine_addresses]
            if not sessions:
                yield Problem("no eBGP session to an EVPN spine: its VTEP and routes reach no other leaf", device=config.hostname)


def mtu_carries_hosts(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """Every switch port on a server's path carries the servers' MTU; over VXLAN, fabric links
    carry it plus the 50-byte VXLAN encapsulation. One problem per fabric and shortfall, naming
    the first hop that is short and how many others are."""
    short: dict[tuple[Network, int, int], list[tuple[str, str]]] = defaultdict(list)
    # per network that carries servers (not the OOB one), by a config's name for it: what a host
    # port and a fabric port must carry
    needs = {network.value: (plan.spec.host_mtu, plan.spec.host_mtu + (VXLAN_OVERHEAD if c.evpn_of(network) else 0)) for network, plan in c.plans.items()}
    for config in configs.values():
        if config.network not in needs:
            continue  # OOB switches carry no server traffic
        host_needs, fabric_needs = needs[config.network]
        if min(map(_mtu_of, config.interfaces), default=fabric_needs) >= fabric_needs:
            continue  # every port carries what any port needs: found in C, no Python step per port
        network = Network(config.network)
        for i in config.interfaces:
            needed = fabric_needs if i.kind in ("fabric", "peer") else host_needs
            if i.mtu < needed:
                short[(network, i.mtu, needed)].append((config.hostname, i.name))
    for (network, mtu, needed), hops in short.items():
        plan = c.plan_of(network)
        overlay = needed > plan.spec.host_mtu
        why = f"servers send {plan.spec.host_mtu}-byte packets" + (f", plus {VXLAN_OVERHEAD} bytes of VXLAN on fabric links" if overlay else "")
        device, port = hops[0]
        yield Problem(
            f"MTU {mtu} is below the {needed} bytes this hop must carry ({why})"
            + (f"; {len(hops) - 1} more ports of the {network.value} fabric too" if len(hops) > 1 else ""),
            hint=f"raise {plan.section}.mtu to at least {needed}, or lower {plan.section}.host_mtu",
            device=device,
            port=port,
            field=(plan.section, "mtu"),
        )


def lossless_class_agrees(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """RoCE is lossless only if both ends of every hop agree on it: each leaf-spine link's two
    switches map the same DSCPs to the same priorities, pause the same priorities, and give CNPs
    the same priority. A difference is reported on the hop (link, both ends), once per pair of
    switches, not once per parallel link."""
    seen: set[tuple[str, str]] = set()
    # what qos_differences compares, per switch: equal profiles have no difference, so only the
    # hops between unequal ones (none in a uniform fabric) are compared field by field; each
    # distinct profile is numbered, so a hop costs one comparison of two ints
    numbers: dict[tuple | None, int] = {}
    profile = {name: numbers.setdefault(_lossless_profile(config.qos), len(numbers)) for name, config in configs.items()}
    fabric, peer = LinkKind.FABRIC, LinkKind.PEER  # bound once: a member lookup on an Enum class costs 70 ns, per link here
    for link in c.fabric.links:
        if link.kind is not fabric and link.kind is not peer:  # a pair's peer link is a hop between switches too
            continue
        a_name, b_name = link.a.device.name, link.b.device.name
        a_profile, b_profile = profile.get(a_name), profile.get(b_name)
        if a_profile is None or b_profile is None or a_profile == b_profile or (a_name, b_name) in seen:
            continue
        a, b = configs[a_name], configs[b_name]
        differences = qos_differences(a.qos, b.qos)
        if differences:
            seen.add((a.hostname, b.hostname))
            plan = c.plan_of(link.network)
            overridden = [name for name in (a.hostname, b.hostname) if name in plan.spec.qos_overrides]
            yield Problem(
                f"hop {link.id} to {b.hostname} {link.b.name}: {'; '.join(differences)} ({a.hostname} first, {b.hostname} second)",
                hint="every switch and host on a path needs the same lossless priorities and DSCP mapping; check the qos_overrides of these two switches",
                device=a.hostname,
                port=link.a.name,
                field=(plan.section, "qos_overrides", overridden[0]) if overridden else (),
            )


def hosts_agree_with_leaves(c: Compiled, configs: dict[str, DeviceConfig], hosts: dict[str, HostConfig]) -> list[Problem]:
    """The first hop: every server NIC trusts the same DSCPs into the same priorities as its leaf
    port, pauses the same priorities, sends CNPs on the leaf's CNP priority, and its MTU fits
    the leaf port. One problem per server and leaf (not per port)."""
    problems = []
    ports: dict[str, dict[str, InterfaceConfig]] = {}  # leaf -> its interfaces by name, built once per leaf
    leaf_maps: dict[str, tuple[tuple[int, int], ...]] = {}  # leaf -> its DSCP map's items, likewise
    for host in hosts.values():
        reported: set[str] = set()
        for nic in host.nics:
            leaf = configs.get(nic.switch)
            if leaf is None or leaf.hostname in reported:
                continue
            if leaf.hostname not in ports:
                ports[leaf.hostname] = {i.name: i for i in leaf.interfaces}
                leaf_maps[leaf.hostname] = tuple(leaf.qos.dscp_to_priority.items()) if leaf.qos else ()
            port = ports[leaf.hostname].get(nic.switch_port)
            differences = []
            qos = leaf.qos if port is not None and port.lossless else None
            if nic.qos != (qos is not None):
                differences.append(f"lossless QoS is {'on' if nic.qos else 'off'} on the NIC, {'on' if qos else 'off'} on the leaf port")
            elif qos is not None:
                if nic.lossless_priorities != qos.lossless_priorities:
                    differences.append(f"PFC priorities {_csv(nic.lossless_priorities)} vs {_csv(qos.lossless_priorities)}")
                # the leaf's map item by item first (it has no duplicate DSCPs, so the same items
                # are the same map): a dict per NIC only when they differ
                if nic.dscp_to_priority != leaf_maps[leaf.hostname] and dict(nic.dscp_to_priority) != qos.dscp_to_priority:
                    differences.append(f"DSCP map {dict(nic.dscp_to_priority)} vs {qos.dscp_to_priority}")
                if nic.rdma_priority is not None and nic.rdma_priority not in qos.lossless_priorities:
                    differences.append(f"RDMA marked for priority {nic.rdma_priority}, which the leaf does not pause")
                if nic.cnp_priority is not None and nic.cnp_priority != qos.cnp_priority:
                    differences.append(f"CNP priority {nic.cnp_priority} vs {qos.cnp_priority}")
            if port is not None and nic.mtu > port.mtu:
                differences.append(f"NIC MTU {nic.mtu} above the leaf port's {port.mtu}")
            if differences:
                reported.add(leaf.hostname)
                problems.append(
                    Problem(
                        f"hop {nic.cable} from {host.hostname} {nic.port}: {'; '.join(differences)} (NIC first, leaf second)",
                        hint="the host files follow the leaf's QoS; rebuild rather than edit them, and check this leaf's qos_overrides",
                        device=leaf.hostname,
                        port=nic.switch_port,
                    )
                )
    return problems


def _lossless_profile(qos: QosConfig | None) -> tuple | None:
    """Everything qos_differences compares, as one hashable value: equal values, no differences
    (the DSCP map as a frozenset of its items: equal exactly when the dicts are)."""
    if qos is None:
        return None
    return (qos.lossless_priorities, frozenset(qos.dscp_to_priority.items()), qos.cnp_priority)


def qos_differences(a, b) -> list[str]:
    """What two ends of a hop disagree on: a QosConfig each (None = no lossless class)."""
    if a is None and b is None:
        return []
    if a is None or b is None:
        return ["lossless QoS is " + ("off on the first end, on" if a is None else "on on the first end, off") + " on the second"]
    found = []
    if a.lossless_priorities != b.lossless_priorities:
        found.append(f"PFC priorities {_csv(a.lossless_priorities)} vs {_csv(b.lossless_priorities)}")
    if a.dscp_to_priority != b.dscp_to_priority:
        mismatched = sorted(d for d in set(a.dscp_to_priority) | set(b.dscp_to_priority) if a.dscp_to_priority.get(d, 0) != b.dscp_to_priority.get(d, 0))
        shown = ", ".join(f"DSCP {d} -> {a.dscp_to_priority.get(d, 0)} vs {b.dscp_to_priority.get(d, 0)}" for d in mismatched[:3])
        found.append(shown + (f" (and {len(mismatched) - 3} more)" if len(mismatched) > 3 else ""))
    if a.cnp_priority != b.cnp_priority:
        found.append(f"CNP priority {a.cnp_priority} vs {b.cnp_priority}")
    return found


def _csv(values) -> str:
    return ",".join(str(v) for v in values) or "none"


def lossless_headroom_fits(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """Every lossless port's headroom (the xoff its config carries: its cable's round trip, the
    peer's response, two frames, the MAC/PHY delay) fits what its switch model gives one PG
    (`qos.max_headroom_bytes`), and a switch's lossless buffers together fit its packet buffer
    (`qos.buffer_bytes`), where the catalog publishes them. A cable too long is named once, with
    both ends."""
    reported: set[str] = set()
    for config in configs.values():
        platform = config.hardware.qos
        if config.qos is None or (platform.max_headroom_bytes is None and platform.buffer_bytes is None):
            continue
        device = c.fabric.devices[config.hostname]
        section = c.plan_of(device.network).section
        classes = len(config.qos.lossless_priorities)
        limit = platform.max_headroom_bytes
        total = 0
        for port_name, buffer in sorted(config.qos.buffers.items()):
            total += classes * buffer.size_bytes
            link = device.ports[port_name].link
            if limit is None or buffer.xoff_bytes <= limit.value or link is None or link.id in reported:
                continue
            reported.add(link.id)  # a cable between two such switches once
            length = link.length_m if link.length_m is not None else buffer.cable_length_m
            yield Problem(
                f"cable {link.id} ({link.a.label} -- {link.b.label}, {length:g} m) is too long for a lossless "
                f"{buffer.speed_gbps}G port of {config.model}: its headroom would be {buffer.xoff_bytes} bytes, "
                f"the model gives one PG at most {limit.value} bytes ({limit.source})",
                hint=f"shorten the cable (at {buffer.speed_gbps}G each metre adds about "
                f"{round(2 * buffer.speed_gbps * 1e9 / 198e6 / 8)} bytes), or carry this traffic lossy",
                field=("layout",) if link.length_m is not None else (section, "qos", "cable_length_m"),
                device=config.hostname,
            )
        if platform.buffer_bytes is not None and total > platform.buffer_bytes.value:
            yield Problem(
                f"{config.hostname}'s lossless buffers ({total} bytes over its ports) exceed the {platform.buffer_bytes.value} "
                f"bytes of {config.model}'s packet buffer ({platform.buffer_bytes.source})",
                hint="shorten the longest lossless cables, or use fewer lossless classes",
                field=(section, "qos"),
                device=config.hostname,
            )


def pause_policies_in_range(c: Compiled, configs: dict[str, DeviceConfig]) -> Iterable[Problem]:
    """Every ingress pause policy a config carries lies in the ranges its target release takes
    (the NOS's releases.yaml, pause-thresholds `parameters`; a NOS without them writes no policy). `pause-threshold` is the PFC trigger, so one
    outside is the intent's pfc_trigger_kbytes (named once per model, release and speed); a
    `pause buffer-size` too big (trigger + the cable's headroom) is the cable, named once."""
    triggers: dict[tuple[str, str, str, str, int, int, str], list[str]] = defaultdict(list)
    reported: set[str] = set()
    for config in configs.values():
        if config.qos is None or not config.qos.pause_policies:
            continue
        device = c.fabric.devices[config.hostname]
        target = c.nos_target(device.network, device.role, device.model)
        feature = c.catalog.nos_releases[target.flavour].features.get("pause-thresholds")
        if feature is None or "pause-thresholds" not in target.features:
            continue
        # the parameters with a documented range in this release (none before their first entry)
        accepted = {name: found for name, parameter in feature.parameters.items() if (found := parameter.at(target.release)) is not None}
        section = c.plan_of(device.network).section
        for port_name, policy in sorted(config.qos.pause_policies.items()):
            values = {"buffer-size": policy.buffer_size, "pause-threshold": policy.pause_threshold, "resume-threshold": policy.resume_threshold}
            wrong = {name for name, value in values.items() if name in accepted and not accepted[name].min <= value <= accepted[name].max}
            if wrong & {"pause-threshold", "resume-threshold"}:
                names = triggers[(device.model, config.nos, target.flavour, target.release, policy.speed_gbps, policy.pause_threshold // 1024, section)]
                if not names or names[-1] != config.hostname:
                    names.append(config.hostname)
                continue
            link = device.ports[port_name].link
            if "buffer-size" not in wrong or (link is not None and link.id in reported):
                continue
            buffer = feature.parameters["buffer-size"]
            later = next((r.since for r in buffer.ranges if r.min <= policy.buffer_size <= r.max and r.since != accepted["buffer-size"].since), None)
            length = link.length_m if link is not None and link.length_m is not None else None
            where = f"cable {link.id} ({link.a.label} -- {link.b.label}, {length or policy.cable_length_m:g} m)" if link is not None else f"port {port_name}"
            yield Problem(
                f"{where} is too long for a lossless {policy.speed_gbps}G port of {device.model} on {title(config.nos)} {target.release}: "
                f"its `pause buffer-size` would be {policy.buffer_size} bytes (PFC trigger {policy.pause_threshold} + headroom "
                f"{policy.buffer_size - policy.pause_threshold}), above the {accepted['buffer-size'].max} bytes that release takes ({buffer.source})",
                hint="shorten the cable, or carry this traffic lossy" + (f", or set nos_release: {later} (or later) for this role" if later else ""),
                field=("layout",) if length is not None else (section, "qos", "cable_length_m"),
                device=config.hostname,
            )
            if link is not None:
                reported.add(link.id)  # a cable between two such switches once
    for (model, nos, flavour, release, speed, trigger, section), names in triggers.items():
        parameter = c.catalog.nos_releases[flavour].features["pause-thresholds"].parameters["pause-threshold"]
        accepted_range = parameter.at(release)
        # a group is recorded only for a threshold outside its range in this release; releases.yaml gives
        # pause-threshold and resume-threshold ranges from the same release, so the trigger's has one too
        assert accepted_range is not None, f"{flavour} {release}: pause-threshold has no range"
        more = f" and {len(names) - 1:,} more" if len(names) > 1 else ""
        yield Problem(
            f"{names[0]}{more} ({model}, {title(nos)} {release}): the PFC trigger at {speed}G, {trigger} KB, gives `pause-threshold` "
            f"{trigger * 1024} bytes, outside {accepted_range.min}-{accepted_range.max} ({parameter.source})",
            hint=f"set qos.pfc_trigger_kbytes for {speed}G to at most {accepted_range.max // 1024} KB",
            field=(section, "qos", "pfc_trigger_kbytes", f"{speed}G"),
        )


def _leaves(configs: dict[str, DeviceConfig], network: Network) -> list[DeviceConfig]:
    return [cfg for cfg in configs.values() if cfg.evpn is not None and cfg.evpn.vtep and cfg.network == network.value]


CONFIG_CHECKS: tuple[Callable[[Compiled, dict[str, DeviceConfig]], Iterable[Problem]], ...] = (
    segments_agree,
    vteps_reachable,
    mtu_carries_hosts,
    lossless_class_agrees,
    lossless_headroom_fits,
    pause_policies_in_range,
)


def run_config_checks(c: Compiled, configs: dict[str, DeviceConfig]) -> list[Problem]:
    """Every config check, every problem."""
    return [problem for check in CONFIG_CHECKS for problem in check(c, configs)]
