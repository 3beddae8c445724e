"""fabricgen verify against fake drivers that answer NAPALM-format getter outputs.

The fabric is tests/lab/two-units.yaml (SONiC leaves, NX-OS spines), built once. `healthy()`
writes what every switch of that fabric answers when it is cabled, configured and converged as
built: LLDP from cabling.csv, ports up at the cable's speed and the config's MTU, every BGP
session of ip-plan.csv Established, the build's own config as the running one (with the secret
values a switch would hold). It reads the build's CSVs with the csv module, not through
fabricgen.verify, so a test is not the code checking itself. Each test breaks one thing.

The NX-OS extension getters are tested against tests/data/verify/nxos-*.json: RECORDINGS WRITTEN
BY THE DEVELOPERS from Cisco's documented output formats (each file's `_recording` key says from
what), not captured from a switch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricgen.cli import app
from fabricgen.compiler.pipeline import build
from fabricgen.nos.nxos import verify as nxos
from fabricgen.push.inventory import read_targets
from fabricgen.verify import verify_fabric
from fabricgen.verify.collect import Access, ReadOnlyDevice, ReadOnlyViolation
from tests.device_answers import BGP_KEY, FakeDriver, healthy, rows

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "verify"


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify") / "build"
    build(ROOT / "tests/lab/two-units.yaml", out)
    return out


@pytest.fixture(scope="module")
def inventory(build_dir: Path) -> Path:
    path = build_dir.parent / "inventory.yaml"
    path.write_text("defaults: {host: 127.0.0.1, driver: mock}\n")  # never contacted: the fake stands in
    return path


def run(build_dir, inventory, answers, deltas=None, down=(), calls=None):
    targets = read_targets(build_dir, None, inventory)

    def connect(secrets):
        return Access(lambda t: FakeDriver(answers[t.name], (deltas or {}).get(t.name), calls, t.name in down), secrets.mask)

    return verify_fabric(build_dir, targets, connect, interval=0.01, jobs=4)


def errors(result, check=None):
    return [f for f in result.findings if f.severity == "error" and (check is None or f.check == check)]


def _swap(answers, ends):
    """Rewire LLDP so each (device, port) of `ends` sees the neighbour given, both directions."""
    for (device, port), (far_device, far_port) in ends.items():
        for d, p, fd, fp in ((device, port, far_device, far_port), (far_device, far_port, device, port)):
            if d in answers:
                answers[d]["get_lldp_neighbors_detail"][p] = [{"remote_system_name": fd, "remote_port": fp, "remote_port_description": fp}]


def test_a_fabric_as_built_has_no_error(build_dir, inventory):
    result = run(build_dir, inventory, healthy(build_dir))
    assert errors(result) == [], [f.message for f in errors(result)]
    assert result.ok


def test_two_swapped_cables_are_one_swap_naming_both_cable_ids(build_dir, inventory):
    answers = healthy(build_dir)
    # BE-S00001: be-spine01 Ethernet1/1 - be-su01-leaf1 Ethernet16; BE-S00002: be-spine02 Ethernet1/1 - be-su01-leaf1 Ethernet24
    cables = {r["cable_id"]: r for r in rows(build_dir, "cabling.csv")}
    one, two = cables["BE-S00001"], cables["BE-S00003"]
    _swap(answers, {(one["a_device"], one["a_port"]): (two["b_device"], two["b_port"]), (two["a_device"], two["a_port"]): (one["b_device"], one["b_port"])})
    # the session over BE-S00001 goes down with it (its ends no longer share a subnet)
    answers["be-su01-leaf1"]["get_bgp_neighbors"]["global"]["peers"]["10.8.0.0"]["is_up"] = False
    result = run(build_dir, inventory, answers)
    [down] = errors(result, "routing")
    assert (down.device, down.port) == ("be-su01-leaf1", "Ethernet16")
    assert down.message.endswith("[follows from: swap of 2 cables (BE-S00001, BE-S00003)]")
    cabling = errors(result, "cabling")
    assert len(cabling) == 1, [f.message for f in cabling]
    swap = cabling[0]
    assert swap.message.startswith("swap of 2 cables") and "BE-S00001" in swap.message and "BE-S00003" in swap.message
    for row in (one, two):
        for end in "ab":
            assert f"{row[end + '_device']} {row[end + '_port']}" in swap.planned
    assert swap.detail["kind"] == "swap"


def test_three_cables_rotated_are_one_rotation(build_dir, inventory):
    answers = healthy(build_dir)
    cables = {r["cable_id"]: r for r in rows(build_dir, "cabling.csv")}
    c1, c2, c3 = (cables[i] for i in ("BE-S00001", "BE-S00003", "BE-S00005"))
    # each cable's A end (a spine port) now meets the next cable's B end (a leaf port)
    _swap(
        answers,
        {
            (c1["a_device"], c1["a_port"]): (c2["b_device"], c2["b_port"]),
            (c2["a_device"], c2["a_port"]): (c3["b_device"], c3["b_port"]),
            (c3["a_device"], c3["a_port"]): (c1["b_device"], c1["b_port"]),
        },
    )
    cabling = errors(run(build_dir, inventory, answers), "cabling")
    assert len(cabling) == 1, [f.message for f in cabling]
    assert cabling[0].message.startswith("rotation of 3 cables")
    assert all(i in cabling[0].message for i in ("BE-S00001", "BE-S00003", "BE-S00005"))


def test_a_missing_and_an_extra_cable(build_dir, inventory):
    answers = healthy(build_dir)
    cables = {r["cable_id"]: r for r in rows(build_dir, "cabling.csv")}
    gone = cables["BE-S00001"]
    answers[gone["a_device"]]["get_lldp_neighbors_detail"].pop(gone["a_port"])
    answers[gone["b_device"]]["get_lldp_neighbors_detail"].pop(gone["b_port"])
    answers["be-su01-leaf2"]["get_lldp_neighbors_detail"]["Ethernet200"] = [{"remote_system_name": "rogue-switch", "remote_port": "swp1"}]
    cabling = errors(run(build_dir, inventory, answers), "cabling")
    # the port of the missing cable is down too: that finding says why
    answers["be-su01-leaf1"]["get_interfaces"]["Ethernet16"]["is_up"] = False
    result = run(build_dir, inventory, answers)
    cabling = errors(result, "cabling")
    [down] = errors(result, "ports")
    assert down.message == "down (BE-S00001 to be-spine01 Ethernet1/1) [follows from: missing cable BE-S00001]"
    assert sorted(f.message.split(":")[0] for f in cabling) == ["extra cable", "missing cable BE-S00001"]
    missing = next(f for f in cabling if f.message.startswith("missing"))
    assert missing.planned == "BE-S00001: be-su01-leaf1 Ethernet16 - be-spine01 Ethernet1/1"
    extra = next(f for f in cabling if f.message.startswith("extra"))
    assert (extra.device, extra.port, extra.found) == ("be-su01-leaf2", "Ethernet200", "rogue-switch swp1")


def test_a_host_port_that_sees_another_node_names_both_cables(build_dir, inventory):
    answers = healthy(build_dir)
    # leaf1 Ethernet0 (BE-00001, planned to gpu0001 nic1) sees gpu0002 nic1, the end of BE-00009
    answers["be-su01-leaf1"]["get_lldp_neighbors_detail"]["Ethernet0"] = [{"remote_system_name": "gpu0002", "remote_port": "nic1"}]
    [wrong] = errors(run(build_dir, inventory, answers), "cabling")
    assert wrong.message == "wrong cable BE-00001: be-su01-leaf1 Ethernet0 sees gpu0002 nic1 (an end of BE-00009) instead of gpu0001 nic1"


def test_one_sided_lldp_on_a_planned_cable_is_a_warning(build_dir, inventory):
    answers = healthy(build_dir)
    answers["be-spine01"]["get_lldp_neighbors_detail"].pop("Ethernet1/1")  # BE-S00001's spine end hears nothing
    result = run(build_dir, inventory, answers)
    assert errors(result, "cabling") == []
    [warning] = [f for f in result.findings if f.check == "cabling"]
    assert (warning.severity, warning.device, warning.port) == ("warning", "be-spine01", "Ethernet1/1")
    assert "BE-S00001" in warning.message and "reports no LLDP neighbour" in warning.message


def test_a_silent_gpu_node_is_a_warning_not_an_error(build_dir, inventory):
    answers = healthy(build_dir)
    answers["be-su01-leaf1"]["get_lldp_neighbors_detail"].pop("Ethernet0")  # BE-00001 to gpu0001 nic1
    result = run(build_dir, inventory, answers)
    assert errors(result, "cabling") == []
    [warning] = [f for f in result.findings if f.check == "cabling"]
    assert warning.severity == "warning" and "BE-00001" in warning.message and "may not run LLDP" in warning.message


def test_a_down_port_and_wrong_speed_and_mtu(build_dir, inventory):
    answers = healthy(build_dir)
    answers["be-su01-leaf1"]["get_interfaces"]["Ethernet16"]["is_up"] = False
    answers["be-su01-leaf2"]["get_interfaces"]["Ethernet16"]["speed"] = 100000.0
    answers["be-su01-leaf3"]["get_interfaces"]["Ethernet16"]["mtu"] = 1500
    ports = {(f.device, f.port): f for f in errors(run(build_dir, inventory, answers), "ports")}
    assert set(ports) == {("be-su01-leaf1", "Ethernet16"), ("be-su01-leaf2", "Ethernet16"), ("be-su01-leaf3", "Ethernet16")}
    assert ports[("be-su01-leaf1", "Ethernet16")].message.startswith("down")
    assert (ports[("be-su01-leaf2", "Ethernet16")].planned, ports[("be-su01-leaf2", "Ethernet16")].found) == ("400G", "100G")
    assert (ports[("be-su01-leaf3", "Ethernet16")].planned, ports[("be-su01-leaf3", "Ethernet16")].found) == ("9216", "1500")


def _optic(dbm: float, low: float | None = None) -> dict:
    power = {"instant": dbm, "avg": dbm, "min": dbm, "max": dbm} | ({"low_alarm": low} if low is not None else {})
    return {
        "physical_channels": {
            "channel": [{"index": 0, "state": {"input_power": power, "output_power": {"instant": 1.0}, "laser_bias_current": {"instant": 7.0}}}]
        }
    }


def test_optics_missing_and_dom_below_its_alarm(build_dir, inventory):
    answers = healthy(build_dir)
    leaf = answers["be-su01-leaf1"]
    # the plan puts QDD-400G-DR4-S optics in every leaf port (cabling.csv b_optic / a_optic)
    leaf["get_optics"] = {port: _optic(-2.0) for port in leaf["get_interfaces"]}
    leaf["get_optics"]["Ethernet16"] = _optic(-14.5, low=-10.0)
    leaf["get_optics"]["Ethernet24"] = _optic(-40.0)
    del leaf["get_optics"]["Ethernet0"]
    found = {(f.port, f.severity): f for f in run(build_dir, inventory, answers).findings if f.check == "ports" and f.device == "be-su01-leaf1"}
    assert set(found) == {("Ethernet0", "warning"), ("Ethernet16", "error"), ("Ethernet24", "error")}
    assert "no optic reported, the plan has QDD-400G-DR4-S" in found[("Ethernet0", "warning")].message
    assert "below its low alarm -10" in found[("Ethernet16", "error")].message
    assert "no light" in found[("Ethernet24", "error")].message


def test_errors_counted_over_the_interval(build_dir, inventory):
    answers = healthy(build_dir)
    deltas = {"be-spine01": {"get_interfaces_counters": {("Ethernet1/1", "rx_errors"): 7}}}
    [finding] = errors(run(build_dir, inventory, answers, deltas), "ports")
    assert (finding.device, finding.port, finding.detail["deltas"]) == ("be-spine01", "Ethernet1/1", {"rx_errors": 7})


def test_a_wrong_peer_address_is_one_finding_naming_both(build_dir, inventory):
    answers = healthy(build_dir)
    peers = answers["be-su01-leaf1"]["get_bgp_neighbors"]["global"]["peers"]
    planned = next(a for a in peers if a == "10.8.0.0")  # be-spine01 Ethernet1/1 over Ethernet16 (10.8.0.0/31)
    session = peers.pop(planned)
    session["is_up"] = False
    peers["10.8.0.1"] = session  # its own address: a typo the /31 still holds
    routing = errors(run(build_dir, inventory, answers), "routing")
    assert len(routing) == 1, [f.message for f in routing]
    assert "peer address 10.8.0.1 configured, plan says 10.8.0.0" in routing[0].message
    assert (routing[0].device, routing[0].port) == ("be-su01-leaf1", "Ethernet16")


def test_a_wrong_peer_address_outside_the_subnet_is_paired_by_its_description(build_dir, inventory):
    answers = healthy(build_dir)
    peers = answers["be-spine01"]["get_bgp_neighbors"]["global"]["peers"]
    session = peers.pop("10.8.0.1")  # be-su01-leaf1 Ethernet16
    peers["10.8.9.1"] = session | {"is_up": False, "description": "be-su01-leaf1 Ethernet16"}
    [wrong] = errors(run(build_dir, inventory, answers), "routing")
    assert "peer address 10.8.9.1 configured, plan says 10.8.0.1" in wrong.message
    assert (wrong.device, wrong.port) == ("be-spine01", "Ethernet1/1")


def test_a_session_down_and_an_unexpected_one(build_dir, inventory):
    answers = healthy(build_dir)
    answers["be-spine01"]["get_bgp_neighbors"]["global"]["peers"]["10.8.0.1"]["is_up"] = False
    answers["be-spine02"]["get_bgp_neighbors"]["global"]["peers"]["192.0.2.9"] = {"is_up": False, "address_family": {}}
    messages = sorted(f.message for f in errors(run(build_dir, inventory, answers), "routing"))
    assert len(messages) == 2
    assert messages[0].startswith("BGP session to 10.8.0.1") and "not Established" in messages[0]
    assert messages[1].startswith("unexpected BGP session to 192.0.2.9")


def test_ecmp_widths_to_remote_leaves(build_dir, inventory):
    """Every leaf of two-units.yaml has one uplink to each of the 2 spines, so it reaches every other
    leaf's server prefixes (the lab plan's host_blocks) over 2 next hops."""
    from fabricgen.lab.plan import read_plan as read_lab_plan

    blocks = read_lab_plan(build_dir).host_blocks
    answers = healthy(build_dir)
    for leaf in blocks:
        answers[leaf]["get_ecmp_widths"] = {prefix: 2 for other, prefixes in blocks.items() if other != leaf for prefix in prefixes}
    assert errors(run(build_dir, inventory, answers), "routing") == []
    victim = next(p for p in answers["be-su01-leaf1"]["get_ecmp_widths"])
    answers["be-su01-leaf1"]["get_ecmp_widths"][victim] = 1
    [narrow] = errors(run(build_dir, inventory, answers), "routing")
    assert narrow.device == "be-su01-leaf1" and f"{victim} 1/2" in narrow.message and narrow.detail["wrong"] == {victim: {"planned": 2, "found": 1}}


def test_a_pause_storm_and_pauses_the_peer_never_counts(build_dir, inventory):
    answers = healthy(build_dir)
    # 0.01 s interval: 1,000 frames in it is ~100,000/s, far above the default storm threshold
    deltas = {
        "be-su01-leaf1": {"get_lossless_counters": {("Ethernet16", "pfc_rx"): {3: 1000}}},
        "be-su01-leaf2": {"get_lossless_counters": {("Ethernet16", "pfc_tx"): {3: 1}}},
    }
    lossless = errors(run(build_dir, inventory, answers, deltas), "lossless")
    storm = [f for f in lossless if f.message.startswith("pause storm")]
    assert [(f.device, f.port) for f in storm] == [("be-su01-leaf1", "Ethernet16")]
    unheard = [f for f in lossless if "never counts" in f.message]
    assert [(f.device, f.port) for f in unheard] == [("be-su01-leaf2", "Ethernet16")]


def test_drift_is_summarised_and_no_secret_value_appears_anywhere(build_dir, inventory, tmp_path):
    answers = healthy(build_dir)
    answers["be-spine01"]["get_config"] = answers["be-spine01"]["get_config"].replace("hostname be-spine01", "hostname be-spine01\nip domain-lookup")
    # a secret the build does not know and no --secrets names: masked by its slot (FRR's neighbor password)
    answers["be-su01-leaf1"]["get_config"] += "router bgp 65099\n neighbor 10.9.9.9 password hunter2-unknown\n"
    result = run(build_dir, inventory, answers)
    drift = [f for f in result.findings if f.check == "drift"]
    assert sorted(f.device for f in drift) == ["be-spine01", "be-su01-leaf1"], [f.found for f in drift]
    drift = [f for f in drift if f.device == "be-spine01"]
    assert drift[0].detail["added"] == 1 and drift[0].detail["missing"] == 0 and "+ip domain-lookup" in drift[0].found
    from fabricgen.verify import report

    for text in (report.render_json(result), report.render_markdown(result), "\n".join(report.plain_lines(result))):
        assert BGP_KEY not in text and "hunter2-unknown" not in text
    assert "+router bgp 65099 > neighbor 10.9.9.9 password <<masked>>" in report.render_json(result)
    assert BGP_KEY in answers["be-spine01"]["get_config"]  # the device did hold it


def test_drift_is_statements_in_their_blocks_not_line_order():
    from fabricgen.verify.drift import statements

    built = "router bgp 1\n neighbor A remote-as 2\n address-family ipv4 unicast\n  maximum-paths 8\n  network 10.0.0.1/32\n exit-address-family\nexit\nip prefix-list P seq 5 permit 10.0.0.0/8\n"
    # FRR's own order, a block closed with exit, and one real change: maximum-paths moved out of the address family
    running = "ip prefix-list P seq 5 permit 10.0.0.0/8\n!\nrouter bgp 1\n neighbor A remote-as 2\n maximum-paths 8\n address-family ipv4 unicast\n  network 10.0.0.1/32\n exit-address-family\nexit\nend\n"
    missing = set(statements(built)) - set(statements(running))
    added = set(statements(running)) - set(statements(built))
    assert missing == {"router bgp 1 > address-family ipv4 unicast > maximum-paths 8"}
    assert added == {"router bgp 1 > maximum-paths 8"}
    assert statements('{\n    "PORT": {\n        "Ethernet0": {\n            "mtu": "9216",\n            "speed": "400000"\n        }\n    }\n}\n') == [
        '"PORT": {',
        '"PORT": { > "Ethernet0": {',
        '"PORT": { > "Ethernet0": { > "mtu": "9216"',
        '"PORT": { > "Ethernet0": { > "speed": "400000"',
    ]


def test_sonic_drift_reads_frr_as_frr_shows_it():
    """FRR 8.4's `show running-config` (seen on the lab's Debian 8.4.4) leaves out a BFD profile's
    timers at their defaults and, under `frr defaults datacenter`, `bgp log-neighbor-changes`, and
    prints `neighbor X bfd` beside `neighbor X bfd profile P`: none of it is drift; a changed timer is."""
    from fabricgen.nos.sonic.verify import as_frr_shows
    from fabricgen.verify.drift import statements

    def shown(text: str) -> set[str]:
        return set(as_frr_shows(statements(text), text))

    head = "frr version 8.4.4\nfrr defaults datacenter\n"
    built = head + (
        "router bgp 64512\n bgp log-neighbor-changes\n neighbor LEAVES bfd profile FABRIC\n!\n"
        "bfd\n profile FABRIC\n  detect-multiplier 3\n  receive-interval 300\n  transmit-interval 300\n"
    )
    running = head + "router bgp 64512\n neighbor LEAVES bfd\n neighbor LEAVES bfd profile FABRIC\n!\nbfd\n profile FABRIC\n"
    assert shown(built) == shown(running)
    assert set(statements(built)) != set(statements(running))  # as written they differ
    # what FRR does show stays: a timer off its default, log-neighbor-changes under traditional
    assert "bfd > profile FABRIC > receive-interval 150" in shown(built.replace("receive-interval 300", "receive-interval 150"))
    traditional = built.replace("datacenter", "traditional")
    assert "router bgp 64512 > bgp log-neighbor-changes" in shown(traditional)
    assert "router bgp 64512 > neighbor LEAVES bfd" in shown("router bgp 64512\n neighbor LEAVES bfd\n")  # no profile: kept


def test_an_unreachable_device_is_a_finding(build_dir, inventory):
    result = run(build_dir, inventory, healthy(build_dir), down={"be-spine02"})
    [reach] = errors(result, "reach")
    assert reach.device == "be-spine02" and "ConnectionRefusedError" in reach.message
    assert not result.ok


def test_only_getters_are_called_and_the_wrapper_refuses_writes(build_dir, inventory):
    calls: list[str] = []
    run(build_dir, inventory, healthy(build_dir), calls=calls)
    assert set(calls) <= {
        "open",
        "close",
        "cli",
        "get_facts",
        "get_lldp_neighbors_detail",
        "get_interfaces",
        "get_interfaces_counters",
        "get_bgp_neighbors",
        "get_config",
        "get_lossless_counters",
    }
    device = ReadOnlyDevice(FakeDriver({}, calls=calls))
    for method in ("load_replace_candidate", "load_merge_candidate", "commit_config", "rollback", "discard_config", "compare_config"):
        with pytest.raises(ReadOnlyViolation):
            getattr(device, method)
    with pytest.raises(ReadOnlyViolation):
        device.cli(["configure terminal ; interface Ethernet1/1 ; shutdown"])
    with pytest.raises(ReadOnlyViolation):
        device.cli(["clear counters"])
    assert "load_replace_candidate" not in calls and "commit_config" not in calls


def test_nxos_extensions_parse_the_recorded_json():
    class Recorded:
        def cli(self, commands, encoding="text"):
            files = {nxos.ROUTES: "nxos-show-ip-route.json", nxos.PFC: "nxos-show-interface-pfc.json"}
            return {c: (DATA / files[c]).read_text() for c in commands}

    device = ReadOnlyDevice(Recorded())
    assert nxos.ecmp_widths(device) == {"10.0.0.1/32": 2, "10.4.0.0/24": 1, "10.8.0.0/31": 1}
    pfc = nxos.lossless_counters(device)
    assert pfc["Ethernet1/1"]["pfc_rx"] == {3: 120} and pfc["Ethernet1/1"]["pfc_tx"] == {3: 4}
    assert pfc["Ethernet1/2"]["pfc_rx"] == {3: 0}  # Eth1/2 as the build names it
    assert pfc["Ethernet1/3"]["pfc_rx"] == {}  # PFC off: no priority to count against
    assert pfc["Ethernet1/1"]["ecn_marked"] is None


@pytest.mark.parametrize(
    ("prefix_row", "pfc_row", "problem"),
    [
        ({"ipprefix": "10.0.0.1/32", "ucast-nhops": "\u00b2"}, None, "'10.0.0.1/32' ucast-nhops is '\u00b2', not a count"),  # passes str.isdigit, not int()
        ({"ipprefix": "10.0.0.1/32", "ucast-nhops": "9" * 5000}, None, "ucast-nhops is '999"),  # int() itself would raise
        ({"ipprefix": "10.0.0.1/32", "ucast-nhops": True}, None, "ucast-nhops is 'True'"),
        ({"ucast-nhops": 2}, None, "ipprefix"),
        (None, {"if_name_str": "Eth1/1", "oper_vl_bmap": "On (8)", "rx_ppp": "\u00b2", "tx_ppp": "7"}, "Ethernet1/1 rx_ppp is '\u00b2'"),
        (None, {"if_name_str": "Eth1/1", "oper_vl_bmap": "On (8)", "rx_ppp": str(2**64), "tx_ppp": "7"}, "not a count of at most 64 bits"),
        (None, {"oper_vl_bmap": "On (8)", "rx_ppp": "1", "tx_ppp": "7"}, "if_name_str"),
        (None, "Eth1/1", "ROW_ppp is neither a row nor a list of rows"),
    ],
    ids=["superscript-digit", "5000-digits", "bool", "no-prefix", "pfc-superscript", "pfc-above-64-bits", "pfc-no-name", "pfc-row-a-string"],
)
def test_nxos_rows_that_are_malformed_are_an_answer_error(prefix_row, pfc_row, problem):
    """One malformed row makes the whole answer malformed (it used to be skipped, and what it
    should have said passed as nothing to report)."""
    from fabricgen.verify.answers import AnswerError

    routes = {
        "TABLE_vrf": {"ROW_vrf": {"TABLE_addrf": {"ROW_addrf": {"TABLE_prefix": {"ROW_prefix": [{"ipprefix": "10.0.0.2/32", "ucast-nhops": 3}, prefix_row]}}}}}
    }
    pfc = {
        "TABLE_ppp": {
            "ROW_ppp": pfc_row if isinstance(pfc_row, str) else [{"if_name_str": "Eth1/2", "oper_vl_bmap": "On (8)", "rx_ppp": "1", "tx_ppp": "2"}, pfc_row]
        }
    }

    class Answering:
        def cli(self, commands, encoding="text"):
            return {c: json.dumps(routes if c == nxos.ROUTES else pfc) for c in commands}

    device = ReadOnlyDevice(Answering())
    extension = nxos.ecmp_widths if prefix_row is not None else nxos.lossless_counters
    with pytest.raises(AnswerError) as malformed:
        extension(device)
    assert problem in str(malformed.value)


def test_an_nxos_switch_whose_pfc_answer_is_malformed_is_an_error(build_dir, inventory):
    answers = healthy(build_dir)

    class Malformed(FakeDriver):
        def cli(self, commands, encoding="text"):
            self.calls.append("cli")
            if commands != [nxos.PFC]:
                raise NotImplementedError
            return {nxos.PFC: json.dumps({"TABLE_ppp": {"ROW_ppp": [{"if_name_str": "Eth1/1", "oper_vl_bmap": "On (8)", "rx_ppp": "\u00b2", "tx_ppp": "0"}]}})}

    targets = read_targets(build_dir, None, inventory)
    result = verify_fabric(
        build_dir,
        targets,
        lambda secrets: Access(lambda t: (Malformed if t.name == "be-spine01" else FakeDriver)(answers[t.name]), secrets.mask),
        interval=0.01,
    )
    [malformed] = answer_errors(result, "be-spine01")
    assert malformed.message.startswith("get_lossless_counters answered malformed data: Ethernet1/1 rx_ppp is '\u00b2', not a count")
    assert not result.ok


def test_exit_codes(build_dir, inventory, monkeypatch, tmp_path):
    import fabricgen.verify.collect as collect_module  # noqa: F401

    runner = CliRunner()
    # 2: a build directory that is not one, before anything is contacted
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("FABRICGEN_USERNAME", "u")
    monkeypatch.setenv("FABRICGEN_PASSWORD", "p")
    assert runner.invoke(app, ["verify", str(tmp_path / "empty")]).exit_code == 2
    # 2: no credentials and no terminal
    monkeypatch.delenv("FABRICGEN_PASSWORD")
    assert runner.invoke(app, ["verify", str(build_dir), "--inventory", str(inventory)]).exit_code == 2
    monkeypatch.setenv("FABRICGEN_PASSWORD", "p")
    # 0 and 1 through the command, with the fake in place of NAPALM's mock driver
    answers = healthy(build_dir)
    from fabricgen.push import rollout

    monkeypatch.setattr(
        rollout, "resolve_drivers", lambda targets: {"mock": lambda host, user, password, timeout, optional_args: FakeDriver(answers[_name_of(host)])}
    )
    names = iter([])
    del names
    inventory_by_name = build_dir.parent / "inventory-hosts.yaml"
    devices = [n["id"] for n in json.loads((build_dir / "topology.json").read_text())["nodes"] if n.get("nos")]
    inventory_by_name.write_text("defaults: {driver: mock}\ndevices:\n" + "".join(f"  {d}: {{host: {d}}}\n" for d in devices))
    report_file, json_file = tmp_path / "r.md", tmp_path / "r.json"
    ok = runner.invoke(
        app, ["verify", str(build_dir), "--inventory", str(inventory_by_name), "--interval", "0", "--report", str(report_file), "--json-report", str(json_file)]
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(json_file.read_text())["ok"] is True and "## cabling" in report_file.read_text()
    answers["be-su01-leaf1"]["get_interfaces"]["Ethernet16"]["is_up"] = False
    bad = runner.invoke(app, ["verify", str(build_dir), "--inventory", str(inventory_by_name), "--interval", "0", "--json"])
    assert bad.exit_code == 1
    document = json.loads(bad.stdout)
    assert [(f["device"], f["port"]) for f in document["findings"] if f["severity"] == "error"] == [("be-su01-leaf1", "Ethernet16")]


def _name_of(host: str) -> str:
    return host


def test_what_a_device_answers_is_shown_as_sent_never_as_markup_or_terminal_control(build_dir, inventory):
    """An LLDP neighbour's system name and port come from the cable's far end (any device): in the
    table they are text, not rich markup; nowhere do they carry an escape sequence or a newline."""
    from rich.console import Console

    from fabricgen.verify import report

    answers = healthy(build_dir)
    hostile = "[bold red]evil\x1b[2Jname\n| x"
    answers["be-su01-leaf2"]["get_lldp_neighbors_detail"]["Ethernet200"] = [{"remote_system_name": hostile, "remote_port": "[link=x]swp1"}]
    result = run(build_dir, inventory, answers)
    assert any(hostile in f.message for f in result.findings)  # the finding keeps what was seen; printing escapes it
    console = Console(record=True, width=400, color_system=None)
    console.print(report.table(result))
    shown = console.export_text()
    assert "[bold red]evil" in shown and "[link=x]swp1" in shown  # markup shown as typed, not applied
    for text in (shown, report.render_markdown(result), "\n".join(report.plain_lines(result))):
        assert "\x1b" not in text and "\\x1b[2J" in text
    markdown_rows = [line for line in report.render_markdown(result).splitlines() if "evil" in line]
    assert markdown_rows and all(line.count(" | ") == 5 for line in markdown_rows)  # the pipe and newline stay inside their cell


# --- device answers are input (issue 30) -----------------------------------------------------------
# Each test below gives one switch an answer a broken or hostile device could give; verify must
# name the device and the getter as an error (exit 1), never read it as healthy or crash on it.

LEAF = "be-su01-leaf1"  # SONiC in two-units.yaml
GETTERS = ("get_facts", "get_lldp_neighbors_detail", "get_interfaces", "get_interfaces_counters", "get_bgp_neighbors", "get_config", "get_lossless_counters")


def answer_errors(result, device):
    return [f for f in result.findings if f.check == "answers" and f.severity == "error" and f.device == device]


@pytest.mark.parametrize(
    "exception",
    [RuntimeError("NX-API answered 500"), AttributeError("'NoneType' object has no attribute 'split'")],
    ids=["runtime-error", "attribute-error"],
)
def test_a_switch_whose_every_getter_fails_is_an_error_per_getter(build_dir, inventory, exception):
    from fabricgen.verify import report

    answers = healthy(build_dir)
    for getter in GETTERS:
        answers[LEAF][getter] = exception
    result = run(build_dir, inventory, answers)
    assert not result.ok
    failed = answer_errors(result, LEAF)
    assert sorted(f.message.split()[0] for f in failed) == sorted(GETTERS), [f.message for f in failed]
    assert all(type(exception).__name__ in f.message for f in failed)
    assert "everything matches" not in report.summary(result)
    [observation] = [o for o in result.observations if o.target.name == LEAF]
    assert observation.missing.isdisjoint(GETTERS)  # failed, not "not implemented"


def test_an_attribute_error_inside_a_getter_is_a_failure_not_a_missing_getter(build_dir, inventory):
    answers = healthy(build_dir)
    answers[LEAF]["get_bgp_neighbors"] = AttributeError("'list' object has no attribute 'items'")
    result = run(build_dir, inventory, answers)
    [failed] = answer_errors(result, LEAF)
    assert failed.message.startswith("get_bgp_neighbors failed: AttributeError: 'list' object has no attribute 'items'")
    assert not result.ok
    # a getter a driver really does not implement (NotImplementedError) is still only "not reported"
    assert all("get_optics" in o.missing for o in result.observations)


def _with_optics(answers, device):
    answers[device]["get_optics"] = {port: _optic(-2.0) for port in answers[device]["get_interfaces"]}
    return answers[device]["get_optics"]


def _peer(answers, device="be-su01-leaf1", address="10.8.0.0"):
    return answers[device]["get_bgp_neighbors"]["global"]["peers"][address]


MALFORMED = {
    "bgp-peers-as-a-list": ("get_bgp_neighbors", lambda a: a[LEAF]["get_bgp_neighbors"]["global"].update(peers=[]), "global.peers"),
    "bgp-peer-as-a-string": ("get_bgp_neighbors", lambda a: a[LEAF]["get_bgp_neighbors"]["global"]["peers"].update({"10.8.0.0": "Established"}), "10.8.0.0"),
    "bgp-string-prefix-count": (
        "get_bgp_neighbors",
        lambda a: _peer(a).update(address_family={"ipv4": {"received_prefixes": "3"}, "ipv6": {"received_prefixes": 0}}),
        "received_prefixes",
    ),
    "bgp-is-up-as-text": ("get_bgp_neighbors", lambda a: _peer(a).update(is_up="true"), "is_up"),
    "nan-speed": ("get_interfaces", lambda a: a[LEAF]["get_interfaces"]["Ethernet16"].update(speed=float("nan")), "Ethernet16.speed"),
    "is-up-as-the-string-false": ("get_interfaces", lambda a: a[LEAF]["get_interfaces"]["Ethernet16"].update(is_up="false"), "Ethernet16.is_up"),
    "mtu-as-a-float": ("get_interfaces", lambda a: a[LEAF]["get_interfaces"]["Ethernet16"].update(mtu=9216.5), "Ethernet16.mtu"),
    "speed-above-any-port": ("get_interfaces", lambda a: a[LEAF]["get_interfaces"]["Ethernet16"].update(speed=1e12), "Ethernet16.speed"),
    "counter-as-text": ("get_interfaces_counters", lambda a: a[LEAF]["get_interfaces_counters"]["Ethernet16"].update(rx_errors="7"), "rx_errors"),
    "counter-above-64-bits": ("get_interfaces_counters", lambda a: a[LEAF]["get_interfaces_counters"]["Ethernet16"].update(rx_errors=2**64), "rx_errors"),
    "negative-counter": ("get_interfaces_counters", lambda a: a[LEAF]["get_interfaces_counters"]["Ethernet16"].update(tx_errors=-5), "tx_errors"),
    "pfc-priority-9": ("get_lossless_counters", lambda a: a[LEAF]["get_lossless_counters"]["Ethernet16"]["pfc_rx"].update({9: 1}), "pfc_rx"),
    "optics-nan": (
        "get_optics",
        lambda a: _with_optics(a, LEAF)["Ethernet16"]["physical_channels"]["channel"][0]["state"]["input_power"].update(instant=float("nan")),
        "instant",
    ),
    "optics-inf": (
        "get_optics",
        lambda a: _with_optics(a, LEAF)["Ethernet16"]["physical_channels"]["channel"][0]["state"]["input_power"].update(instant=float("inf")),
        "instant",
    ),
    "optics-bias-inf": (
        "get_optics",
        lambda a: _with_optics(a, LEAF)["Ethernet16"]["physical_channels"]["channel"][0]["state"]["laser_bias_current"].update(instant=float("inf")),
        "laser_bias_current",
    ),
    "lldp-neighbours-not-a-list": (
        "get_lldp_neighbors_detail",
        lambda a: a[LEAF]["get_lldp_neighbors_detail"].update(Ethernet16={"remote_system_name": "x"}),
        "Ethernet16",
    ),
    "config-not-text": ("get_config", lambda a: a[LEAF].update(get_config=["hostname x"]), ""),
    "ecmp-width-negative": ("get_ecmp_widths", lambda a: a[LEAF].update(get_ecmp_widths={"10.4.0.0/24": -2}), "10.4.0.0/24"),
    "ecmp-prefix-not-a-prefix": ("get_ecmp_widths", lambda a: a[LEAF].update(get_ecmp_widths={"10.4.0.0/24\nx": 2}), ""),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_answer_is_an_error_naming_device_getter_and_field(build_dir, inventory, case):
    getter, corrupt, where = MALFORMED[case]
    answers = healthy(build_dir)
    corrupt(answers)
    result = run(build_dir, inventory, answers)
    assert not result.ok
    [malformed] = answer_errors(result, LEAF)
    assert malformed.message.startswith(f"{getter} answered malformed data: "), malformed.message
    assert where in malformed.message, malformed.message
    # what the answer would have fed is not judged on half-read data: no finding of that check cites it
    if getter == "get_bgp_neighbors":
        assert [f for f in errors(result, "routing") if f.device == LEAF] == []


def test_counters_that_went_backwards_are_named(build_dir, inventory):
    """A counter cleared (or wrapped) between the two samples: its growth over the interval is
    unknown, so it is named, never read as 0 or as a negative rate."""
    answers = healthy(build_dir)
    answers["be-spine01"]["get_interfaces_counters"]["Ethernet1/1"]["rx_errors"] = 500
    deltas = {
        # be-spine01 Ethernet1/1 - be-su01-leaf1 Ethernet16 is BE-S00001: the spine pauses, the
        # leaf's receive count was cleared meanwhile
        "be-spine01": {"get_interfaces_counters": {("Ethernet1/1", "rx_errors"): -498}, "get_lossless_counters": {("Ethernet1/1", "pfc_tx"): {3: 5}}},
        LEAF: {"get_lossless_counters": {("Ethernet16", "pfc_rx"): {3: -10}}},
    }
    result = run(build_dir, inventory, answers, deltas)
    assert [f.message for f in result.findings if "never counts" in f.message] == []  # a cleared count is not "never counted"
    backwards = {(f.device, f.port, f.check): f for f in result.findings if "went backwards" in f.message}
    assert set(backwards) == {("be-spine01", "Ethernet1/1", "ports"), (LEAF, "Ethernet16", "lossless")}, [f.message for f in result.findings]
    assert "rx_errors 500 -> 2" in backwards[("be-spine01", "Ethernet1/1", "ports")].message
    assert "pfc_rx priority 3 10 -> 0" in backwards[(LEAF, "Ethernet16", "lossless")].message
    assert all(f.severity == "warning" for f in backwards.values())


def _strings(value):
    """Every string of a parsed JSON document, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_json_string_values_carry_no_control_character(build_dir, inventory):
    """What devices answered (an LLDP name, a getter's error) reaches the JSON escaped as the table
    and Markdown escape it: a consumer printing a value gets no terminal control or hidden line."""
    from fabricgen.basics.trust import has_invisible
    from fabricgen.verify import report

    answers = healthy(build_dir)
    answers["be-su01-leaf2"]["get_lldp_neighbors_detail"]["Ethernet200"] = [{"remote_system_name": "evil\x1b[2J\u202ename\nx", "remote_port": "swp\x07"}]
    answers["be-su01-leaf3"]["get_interfaces"] = RuntimeError("timeout\x1b]0;owned\x07")
    result = run(build_dir, inventory, answers)
    strings = list(_strings(json.loads(report.render_json(result))))
    assert [s for s in strings if has_invisible(s)] == []
    assert any("evil\\x1b[2J\\u202ename\\nx" in s for s in strings)  # escaped, not dropped
    assert any("timeout\\x1b]0;owned\\x07" in s for s in strings)


def test_verify_command_exits_1_naming_the_device_whose_getters_fail(build_dir, monkeypatch, tmp_path):
    from fabricgen.push import rollout

    answers = healthy(build_dir)
    for getter in GETTERS:
        answers[LEAF][getter] = AttributeError("'NoneType' object has no attribute 'get'")
    monkeypatch.setenv("FABRICGEN_USERNAME", "u")
    monkeypatch.setenv("FABRICGEN_PASSWORD", "p")
    monkeypatch.setattr(
        rollout, "resolve_drivers", lambda targets: {"mock": lambda host, user, password, timeout, optional_args: FakeDriver(answers[_name_of(host)])}
    )
    devices = [n["id"] for n in json.loads((build_dir / "topology.json").read_text())["nodes"] if n.get("nos")]
    inventory_by_name = tmp_path / "inventory-hosts.yaml"
    inventory_by_name.write_text("defaults: {driver: mock}\ndevices:\n" + "".join(f"  {d}: {{host: {d}}}\n" for d in devices))
    runner = CliRunner()
    text = runner.invoke(app, ["verify", str(build_dir), "--inventory", str(inventory_by_name), "--interval", "0", "--quiet"])
    assert text.exit_code == 1, text.output
    assert f"ERROR answers {LEAF}: get_bgp_neighbors failed: AttributeError" in text.stdout
    as_json = runner.invoke(app, ["verify", str(build_dir), "--inventory", str(inventory_by_name), "--interval", "0", "--json", "--quiet"])
    assert as_json.exit_code == 1
    document = json.loads(as_json.stdout)
    assert {f["message"].split()[0] for f in document["findings"] if f["device"] == LEAF and f["check"] == "answers"} == set(GETTERS)
