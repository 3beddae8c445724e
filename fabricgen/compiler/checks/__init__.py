"""Invariants of a compiled fabric, checked before anything is rendered, one module per topic
(ports, topology, addresses, management, releases, qos; `configs.py` checks the per-device configs
after they are built).

Each check is a function of the compiled fabric that returns the problems it finds, each naming
the device and port. They are independent of how the design stage built the graph, so they also
catch a broken user catalog or a bug in the builder. All run in time linear in links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from fabricgen.basics.errors import Problem
from fabricgen.compiler.checks.addresses import addresses_unique, asns_as_planned, evpn_numbers_unique
from fabricgen.compiler.checks.management import management_complete, security_supported, unrendered_notes
from fabricgen.compiler.checks.ports import link_speeds_match, one_optic_per_cage, ports_used_once, switch_ports, switch_ports_exist
from fabricgen.compiler.checks.qos import ecn_below_pfc_trigger, platform_qos_notes, qos_overrides_name_switches
from fabricgen.compiler.checks.releases import (
    boot_image_notes,
    boot_images_match_releases,
    features_in_release,
    flavour_notes,
    load_balancing_supported,
    model_notes,
    network_notes,
    nos_releases_known,
    platform_release_notes,
    platforms_in_release,
    settings_supported,
    watchdog_in_range,
)
from fabricgen.compiler.checks.topology import every_leaf_reaches_every_spine, leaf_ratio_holds, peer_links_join_the_pair, rails_aligned, tier_ports
from fabricgen.compiler.compiled import Compiled

CHECKS: tuple[Callable[[Compiled], Iterable[Problem]], ...] = (
    ports_used_once,
    link_speeds_match,
    switch_ports_exist,
    one_optic_per_cage,
    leaf_ratio_holds,
    rails_aligned,
    every_leaf_reaches_every_spine,
    peer_links_join_the_pair,
    addresses_unique,
    asns_as_planned,
    management_complete,
    evpn_numbers_unique,
    load_balancing_supported,
    security_supported,
    settings_supported,
    nos_releases_known,
    features_in_release,
    boot_images_match_releases,
    platforms_in_release,
    watchdog_in_range,
    qos_overrides_name_switches,
    ecn_below_pfc_trigger,
)


def run_checks(compiled: Compiled) -> list[Problem]:
    """Every check, every problem (not just the first)."""
    tiers = tier_ports(compiled)  # one walk over the leaves' and spines' ports for the two checks that read them
    walked = switch_ports(compiled)  # one walk over every switch's ports for the three that read them
    shared: dict[Callable, Callable[[Compiled], Iterable[Problem]]] = {
        leaf_ratio_holds: partial(leaf_ratio_holds, tiers=tiers),
        every_leaf_reaches_every_spine: partial(every_leaf_reaches_every_spine, tiers=tiers),
        **{check: partial(check, walked=walked) for check in (switch_ports_exist, one_optic_per_cage, ecn_below_pfc_trigger)},
    }
    return [problem for check in CHECKS for problem in shared.get(check, check)(compiled)]


def advisories(c: Compiled) -> list[str]:
    """Things worth a user's attention that are not errors."""
    notes = []
    notes += platform_qos_notes(c)
    notes += unrendered_notes(c)
    notes += model_notes(c)
    notes += boot_image_notes(c)
    notes += platform_release_notes(c)
    notes += network_notes(c)
    notes += flavour_notes(c)
    return notes
