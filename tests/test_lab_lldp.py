"""LLDP and the faults of tests/lab_faults.py (swapped cables, a downed link, a wrong peer
address) on the session's two-unit lab (tests/conftest.py two_unit_lab), each undone and the lab
converged as planned again for the next test. The lab modules' scheduling: tests/conftest.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

from fabricgen.lab import runtime
from fabricgen.lab.plan import LabPlan
from tests.test_lab import needs_lab


def _lldp_at(plan: LabPlan, ends: list) -> dict[tuple[str, str], list]:
    """(device, planned port) -> the neighbours its lldpd reports, read with lldpcli as a user would."""
    from fabricgen.lab import lldp

    seen = {}
    for end in ends:
        neighbors = lldp.neighbors(plan.namespace(end.device))
        seen[(end.device, end.port)] = neighbors.get(end.ifname, [])
    return seen


def _wait_lldp(plan: LabPlan, ends: list, want: dict[tuple[str, str], list[tuple[str, str]]], timeout: float = 10) -> dict:
    """Poll until each end's neighbours, as (system name, port ID), are `want`'s; the last look."""
    deadline = time.monotonic() + timeout
    while True:
        seen = _lldp_at(plan, ends)
        if {key: [(n.system, n.port) for n in found] for key, found in seen.items()} == want or time.monotonic() > deadline:
            return seen
        time.sleep(0.1)


def _back_to_plan(build_dir: Path, plan: LabPlan, since: float) -> None:
    """The shared lab converged as planned again (BGP, BFD, ECMP; LLDP at every end), for the next test."""
    from fabricgen.lab import lldp
    from fabricgen.lab.verify import wait_converged

    state = runtime.load_state(build_dir)
    converged, _, _, _ = wait_converged(plan, state, since, 60)
    assert converged
    assert all(end.ok for end in lldp.wait_for_lldp(plan, set(), set(), set()))


def _two_fabric_cables(plan: LabPlan):
    """Two leaf-spine cables with four different devices at their ends."""
    fabric = [link for link in plan.links if link.kind == "fabric"]
    first = fabric[0]
    return first, next(l for l in fabric if len({first.a.device, first.b.device, l.a.device, l.b.device}) == 4)


@needs_lab
def test_lldp_shows_swapped_cables_and_the_plan_again_after_undo(two_unit_lab):
    """lab_faults.swap_cables: lldpd in the four namespaces reports the swapped far ends (device
    name as system name, planned port name as port ID); the ends keep their names, addresses and
    MTU; lab verify's LLDP check names the four wrong ends; undo() restores the planned neighbours."""
    from fabricgen.lab.verify import Failed, lldp_check
    from tests import lab_faults

    build_dir, plan = two_unit_lab
    state = runtime.load_state(build_dir)
    a, b = _two_fabric_cables(plan)
    ends = [a.a, a.b, b.a, b.b]
    planned = {(x.device, x.port): [(y.device, y.port)] for x, y in ((a.a, a.b), (a.b, a.a), (b.a, b.b), (b.b, b.a))}
    seen = _wait_lldp(plan, ends, planned)
    for end in ends:  # every port advertises its planned name: port ID subtype local, and the description
        (neighbor,) = seen[(end.device, end.port)]
        other = a.other(end.device) if end in (a.a, a.b) else b.other(end.device)
        assert (neighbor.system, neighbor.port, neighbor.port_subtype, neighbor.description) == (other.device, other.port, "local", other.port)

    started = time.time()
    fault = lab_faults.swap_cables(plan, state, a.cable, b.cable)
    try:
        swapped = {
            (a.a.device, a.a.port): [(b.b.device, b.b.port)],
            (b.b.device, b.b.port): [(a.a.device, a.a.port)],
            (b.a.device, b.a.port): [(a.b.device, a.b.port)],
            (a.b.device, a.b.port): [(b.a.device, b.a.port)],
        }
        seen = _wait_lldp(plan, ends, swapped)
        assert {key: [(n.system, n.port) for n in found] for key, found in seen.items()} == swapped
        assert all(n.port_subtype == "local" and n.description == n.port for found in seen.values() for n in found)  # re-applied
        for end in ends:
            link = json.loads(runtime.run(["ip", "-n", plan.namespace(end.device), "-j", "addr", "show", "dev", end.ifname]).stdout)[0]
            assert link["mtu"] == runtime.SWITCH_PORT_MTU and link["operstate"] == "UP"
            assert [f"{i['local']}/{i['prefixlen']}" for i in link["addr_info"] if i["family"] == "inet"] == [end.address]
        check = lldp_check(plan, Failed(set(), set()), timeout=0)
        assert not check.passed and check.summary == "124/128 cable ends see the planned neighbour"
        wrong = {row[0]: row[3] for row, ok in zip(check.rows, check.row_ok, strict=True) if not ok}
        assert wrong[a.a.device] == f"{a.a.port} ({a.cable}): sees {b.b.device} {b.b.port}, planned {a.b.device} {a.b.port}"
        assert set(wrong) == {a.a.device, a.b.device, b.a.device, b.b.device}
    finally:
        fault.undo()
    seen = _wait_lldp(plan, ends, planned)
    assert {key: [(n.system, n.port) for n in found] for key, found in seen.items()} == planned
    _back_to_plan(build_dir, plan, started)


@needs_lab
def test_a_downed_link_loses_its_lldp_neighbours_until_undo(two_unit_lab):
    """lab_faults.link_down on a GPU node's NIC cable: neither end has a neighbour; undo() brings
    the neighbours back and the node's route through that NIC (the kernel dropped it with the link)."""
    from tests import lab_faults

    build_dir, plan = two_unit_lab
    state = runtime.load_state(build_dir)
    link = next(l for l in plan.links if l.kind == "host")
    node_ns = plan.namespace(link.a.device)
    routes = ["ip", "-n", node_ns, "-4", "route", "show", "table", "all"]
    routes_before = sorted(line for line in runtime.run(routes).stdout.splitlines() if "table local" not in line)
    assert any(f"dev {link.a.ifname} " in line and " via " in line for line in routes_before)  # the netplan route through it
    started = time.time()
    fault = lab_faults.link_down(plan, state, link.cable)
    try:
        seen = _wait_lldp(plan, [link.a, link.b], {(link.a.device, link.a.port): [], (link.b.device, link.b.port): []})
        assert seen == {(link.a.device, link.a.port): [], (link.b.device, link.b.port): []}
    finally:
        fault.undo()
    seen = _wait_lldp(
        plan, [link.a, link.b], {(link.a.device, link.a.port): [(link.b.device, link.b.port)], (link.b.device, link.b.port): [(link.a.device, link.a.port)]}
    )
    assert [(n.system, n.port) for n in seen[(link.a.device, link.a.port)]] == [(link.b.device, link.b.port)]
    assert sorted(line for line in runtime.run(routes).stdout.splitlines() if "table local" not in line) == routes_before
    _back_to_plan(build_dir, plan, started)


@needs_lab
def test_a_wrong_peer_address_takes_that_session_down_and_undo_restores_the_config(two_unit_lab):
    """lab_faults.set_peer_address: the leaf's FRR has `neighbor NEW` with the old neighbour's
    settings (remote-as, peer-group, description) and no `neighbor OLD`; the session is not
    Established; undo() gives back the exact running config."""
    from fabricgen.lab.verify import _bgp_states
    from tests import lab_faults

    build_dir, plan = two_unit_lab
    state = runtime.load_state(build_dir)
    cut = next(s for s in plan.sessions if s.device == "be-su01-leaf1")
    ns = plan.namespace(cut.device)
    before = runtime.vtysh(ns, "show running-config")
    wrong = "10.8.255.1"
    started = time.time()
    fault = lab_faults.set_peer_address(plan, state, cut.device, cut.peer_address, wrong)
    try:
        running = runtime.vtysh(ns, "show running-config")
        _, old_lines, _ = lab_faults.neighbor_lines(before, cut.peer_address)
        header, new_lines, _ = lab_faults.neighbor_lines(running, wrong)
        assert header == f"router bgp {plan.switches[cut.device].asn}" and new_lines == old_lines
        assert f"remote-as {plan.switches[cut.peer_device].asn}" in new_lines and any(l.startswith("peer-group ") for l in new_lines)
        assert lab_faults.neighbor_lines(running, cut.peer_address)[1] == []
        states = _bgp_states(ns)
        assert cut.peer_address not in states and states[wrong] != "Established"
    finally:
        fault.undo()
    assert runtime.vtysh(ns, "show running-config") == before
    _back_to_plan(build_dir, plan, started)
