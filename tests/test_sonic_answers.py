"""Parsing what a SONiC switch answers to the driver's getters (fabricgen/nos/sonic/answers.py).

The lldpctl answers in tests/data/lldpctl/ are captures of a real lldpd 1.0.16 (Debian bookworm's),
not hand-written: two network namespaces joined by veths named like the lab's ports (Ethernet0 <->
Ethernet0, Ethernet4 <-> Ethernet8, Ethernet12 <-> a bridge in a third namespace reaching `nic1` of
two hosts), each namespace running `lldpd -d -u SOCKET -O CONF` with
`configure system hostname NAME`, `configure lldp tx-interval 1` and `configure ports P lldp
portidsubtype local P description P`, then `lldpctl -u SOCKET -f json` on the switch side: with
every neighbour (several ports, two neighbours on Ethernet12), after Ethernet4 and Ethernet12 went
down (one neighbour left) and after Ethernet0 went down too (none).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.nos.sonic import answers as sonic_answers
from fabricgen.nos.sonic.answers import AnswerError

CAPTURES = Path(__file__).resolve().parent / "data" / "lldpctl"


def capture(name: str) -> str:
    return (CAPTURES / f"{name}.json").read_text()


def test_several_ports_and_two_neighbours_on_one_port():
    detail = sonic_answers.lldp_neighbors_detail(capture("several-ports-two-neighbours-on-one"))
    assert list(detail) == ["Ethernet0", "Ethernet4", "Ethernet12"]
    assert [(n["remote_system_name"], n["remote_port"]) for n in detail["Ethernet4"]] == [("be-su01-spine1", "Ethernet8")]
    assert [(n["remote_system_name"], n["remote_port"]) for n in detail["Ethernet12"]] == [("be-su01-spine1", "nic1"), ("gpu-node-7", "nic1")]
    first = detail["Ethernet0"][0]
    assert first["remote_port_description"] == "Ethernet0"
    assert first["remote_chassis_id"] == "36:09:de:cc:00:be"
    assert first["remote_system_capab"] == ["bridge", "router", "wlan-access-point", "station"]
    assert first["remote_system_enable_capab"] == ["station"]
    assert sonic_answers.lldp_neighbors(detail)["Ethernet12"] == [{"hostname": "be-su01-spine1", "port": "nic1"}, {"hostname": "gpu-node-7", "port": "nic1"}]


def test_one_neighbour_is_an_object_not_a_list():
    text = capture("one-neighbour")
    assert isinstance(json.loads(text)["lldp"]["interface"], dict)  # the shape this test is about
    detail = sonic_answers.lldp_neighbors_detail(text)
    assert {port: [n["remote_port"] for n in ns] for port, ns in detail.items()} == {"Ethernet0": ["Ethernet0"]}


def test_no_neighbour():
    assert sonic_answers.lldp_neighbors_detail(capture("no-neighbour")) == {}
    assert sonic_answers.lldp_neighbors_detail('{"lldp": [{}]}') == {}  # json0's empty answer


def test_a_chassis_without_a_system_name_and_one_capability():
    text = json.dumps(
        {
            "lldp": {
                "interface": {
                    "Ethernet0": {
                        "chassis": {"id": {"type": "mac", "value": "00:11:22:33:44:55"}, "capability": {"type": "Router", "enabled": True}},
                        "port": {"id": {"type": "ifname", "value": "swp1"}},
                    }
                }
            }
        }
    )
    (neighbour,) = sonic_answers.lldp_neighbors_detail(text)["Ethernet0"]
    assert neighbour["remote_system_name"] == "" and neighbour["remote_port"] == "swp1"
    assert neighbour["remote_system_capab"] == neighbour["remote_system_enable_capab"] == ["router"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("lldpd: unable to connect", "not JSON"),
        ('["lldp"]', "not a JSON object"),
        ('{"lldp": {"interface": [{"Ethernet0": {"port": {}}}]}}', "no chassis object"),
        ('{"lldp": {"interface": {"Ethernet0": {"chassis": {"a": {}, "b": {}}, "port": {"id": {"value": "x"}}}}}}', "neither"),
        ('{"lldp": {"interface": {"Ethernet0": {"chassis": {"id": {"value": "x"}}, "port": {"id": {}}}}}}', "has no value"),
        ('{"lldp": {"interface": {"bad name!": {}}}}', "not a valid interface name"),
        (
            '{"lldp": {"interface": {"Ethernet0": {"chassis": {"id": {"value": "' + "x" * 300 + '"}}, "port": {"id": {"value": "p"}}}}}}',
            "longer than an LLDP TLV",
        ),
    ],
)
def test_a_malformed_lldpctl_answer_is_an_answer_error(answer: str, message: str):
    with pytest.raises(AnswerError, match=message):
        sonic_answers.lldp_neighbors_detail(answer)


STATUS = """\
  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin    Type    Asym PFC
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ------  ----------
  Ethernet0  0,1,2,3,4,5,6,7     400G   9216     rs     etp1  routed      up       up     N/A         N/A
  Ethernet8  8,9,10,11,12,13     2.5G   9100     rs     etp2  routed    down     down     N/A         N/A
 Ethernet16            16,17      N/A   1500    N/A     etp3  routed    down       up     N/A         N/A
"""
DESCRIPTION = """\
  Interface    Oper    Admin    Alias                    Description
-----------  ------  -------  -------  -----------------------------
  Ethernet0      up       up     etp1  BE-00001 to gpu0001 nic1
  Ethernet8    down     down     etp2                            N/A
"""


def test_interface_tables_in_intfutils_format():
    status = sonic_answers.simple_table(STATUS, ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"])
    descriptions = sonic_answers.simple_table(DESCRIPTION, ["Interface", "Oper", "Admin", "Alias", "Description"])
    ports = sonic_answers.interfaces(status, descriptions, "0c:42:a1:00:00:01")
    assert ports["Ethernet0"] == {
        "is_up": True,
        "is_enabled": True,
        "description": "BE-00001 to gpu0001 nic1",
        "last_flapped": -1.0,
        "speed": 400000.0,
        "mtu": 9216,
        "mac_address": "0c:42:a1:00:00:01",
    }
    assert (ports["Ethernet8"]["is_up"], ports["Ethernet8"]["speed"], ports["Ethernet8"]["description"]) == (False, 2500.0, "")
    assert ports["Ethernet16"]["speed"] == 0.0 and ports["Ethernet16"]["is_enabled"]


def test_a_malformed_table_is_an_answer_error():
    header = ["Interface", "Oper", "Admin", "Alias", "Description"]
    with pytest.raises(AnswerError, match="no table"):
        sonic_answers.simple_table("Error: redis is down\n", header)
    with pytest.raises(AnswerError, match="columns"):
        sonic_answers.simple_table(DESCRIPTION.replace("-------  -----", "--------------"), header)
    status = sonic_answers.simple_table(
        STATUS.replace("9216", "big!"), ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]
    )
    with pytest.raises(AnswerError, match="MTU of Ethernet0"):
        sonic_answers.interfaces(status, [], "")


def test_counters_and_lossless_counters():
    ports = sonic_answers.counters_json(
        json.dumps(
            {
                "Ethernet0": {"SAI_PORT_STAT_IF_IN_OCTETS": "1234", "SAI_PORT_STAT_PFC_3_RX_PKTS": "7", "SAI_PORT_STAT_PFC_3_TX_PKTS": "2"},
                "Ethernet8": [],  # cjson's empty table
            }
        )
    )
    counters = sonic_answers.interfaces_counters(ports, {"rx_octets": "SAI_PORT_STAT_IF_IN_OCTETS", "tx_octets": "SAI_PORT_STAT_IF_OUT_OCTETS"})
    assert counters == {"Ethernet0": {"rx_octets": 1234, "tx_octets": -1}, "Ethernet8": {"rx_octets": -1, "tx_octets": -1}}
    queues = {"Ethernet0:3": {"STORMS": 2}, "Ethernet0:4": {"STORMS": 1, "ECN": 5}, "Ethernet8:3": {}}
    lossless = sonic_answers.lossless_counters(ports, queues, "SAI_PORT_STAT_PFC_{priority}_{way}_PKTS", "STORMS", "ECN")
    assert lossless["Ethernet0"] == {"pfc_rx": {3: 7}, "pfc_tx": {3: 2}, "pfcwd_storms": 3, "ecn_marked": 5}
    assert lossless["Ethernet8"] == {"pfc_rx": {}, "pfc_tx": {}, "pfcwd_storms": None, "ecn_marked": None}


@pytest.mark.parametrize(
    "answer", ['{"Ethernet0": {"X": "-1"}}', '{"Ethernet0": {"X": 5}}', '{"Ethernet0": "5"}', "(error) NOSCRIPT", '{"Ethernet0": {"X": "1e5"}}']
)
def test_a_malformed_counter_answer_is_an_answer_error(answer: str):
    with pytest.raises(AnswerError):
        sonic_answers.counters_json(answer)


def test_optics_from_the_dom_sensor_table():
    table = sonic_answers.string_tables(
        json.dumps(
            {
                "TRANSCEIVER_DOM_SENSOR|Ethernet0": {
                    "temperature": "35.1",
                    "rx1power": "-1.5",
                    "tx1power": "0.5",
                    "tx1bias": "6.8",
                    "rx2power": "-inf",
                    "tx2power": "N/A",
                    "tx2bias": "N/A",
                },
                "TRANSCEIVER_DOM_SENSOR|Ethernet8": {"temperature": "N/A", "rx1power": "N/A"},
            }
        )
    )
    optics = sonic_answers.optics(table, "TRANSCEIVER_DOM_SENSOR|")
    assert list(optics) == ["Ethernet0"]  # no lane of Ethernet8 reports
    first, second = optics["Ethernet0"]["physical_channels"]["channel"]
    assert first == {
        "index": 0,
        "state": {
            "input_power": {"instant": -1.5, "avg": 0.0, "min": 0.0, "max": 0.0},
            "output_power": {"instant": 0.5, "avg": 0.0, "min": 0.0, "max": 0.0},
            "laser_bias_current": {"instant": 6.8, "avg": 0.0, "min": 0.0, "max": 0.0},
        },
    }
    assert second["index"] == 1 and second["state"]["input_power"]["instant"] == sonic_answers.DARK_DBM
    with pytest.raises(AnswerError, match="not a number"):
        sonic_answers.optics({"TRANSCEIVER_DOM_SENSOR|Ethernet0": {"rx1power": "lots"}}, "TRANSCEIVER_DOM_SENSOR|")


def test_ecmp_widths_count_installed_next_hops_of_the_selected_route():
    text = json.dumps(
        {
            "10.0.0.5/32": [
                {
                    "prefix": "10.0.0.5/32",
                    "protocol": "bgp",
                    "selected": True,
                    "nexthops": [{"ip": "a", "fib": True, "active": True}, {"ip": "b", "fib": True, "active": True}, {"ip": "c", "active": True}],
                }
            ],
            "10.0.0.6/32": [{"protocol": "bgp", "nexthops": [{"ip": "a", "active": True}]}],  # not selected
        }
    )
    assert sonic_answers.ecmp_widths(text) == {"10.0.0.5/32": 2}
    with pytest.raises(AnswerError, match="next hops"):
        sonic_answers.ecmp_widths('{"10.0.0.5/32": [{"selected": true, "nexthops": "a"}]}')


@pytest.mark.parametrize(("field", "value"), [("rx1power", "nan"), ("tx1power", "inf"), ("tx1bias", "-inf"), ("tx1bias", "-3.0"), ("rx1power", "NaN")])
def test_a_dom_reading_that_is_no_number_is_an_answer_error_not_healthy(field, value):
    """NaN and +inf used to be left out and the lane's other readings kept: a NaN receive power
    read as an instant of 0.0 dBm, a healthy optic."""
    with pytest.raises(AnswerError, match=f"{field} is '{value}', not a reading"):
        sonic_answers.optics(
            {"TRANSCEIVER_DOM_SENSOR|Ethernet0": {"rx1power": "-1.0", "tx1power": "0.5", "tx1bias": "6.8", field: value}}, "TRANSCEIVER_DOM_SENSOR|"
        )


def test_a_dom_reading_not_reported_is_left_out_not_zero():
    optics = sonic_answers.optics({"TRANSCEIVER_DOM_SENSOR|Ethernet0": {"rx1power": "N/A", "tx1power": "0.5", "tx1bias": "6.8"}}, "TRANSCEIVER_DOM_SENSOR|")
    assert set(optics["Ethernet0"]["physical_channels"]["channel"][0]["state"]) == {"output_power", "laser_bias_current"}


# --- FRR's BGP JSON: captures of FRR 8.4.4 (Debian bookworm's) ---------------------------------------
# tests/data/frr/bgp-*-established.json: `show bgp vrf all summary|neighbors json` of a lab leaf with
# both uplink sessions Established; bgp-*-not-established.json: a bgpd of its own in a network
# namespace with three neighbours that never come up (Active; `remote-as external`, Connect; shut
# down, Idle (Admin)) and a VRF with no neighbour.

FRR = Path(__file__).resolve().parent / "data" / "frr"


def frr(name: str) -> str:
    return (FRR / f"{name}.json").read_text()


def test_bgp_neighbors_of_established_sessions():
    summary = sonic_answers.bgp_summary(frr("bgp-summary-established"))
    details = sonic_answers.bgp_details(frr("bgp-neighbors-established"), summary)
    neighbors = sonic_answers.bgp_neighbors(summary, details)
    assert list(neighbors) == ["global"] and neighbors["global"]["router_id"] == "10.0.0.1"
    peer = neighbors["global"]["peers"]["10.8.0.0"]
    assert peer == {
        "local_as": 64513,
        "remote_as": 64512,
        "remote_id": "10.0.128.1",
        "is_up": True,
        "is_enabled": True,
        "description": "be-spine01 Ethernet1/1",
        "uptime": 29,
        "address_family": {"ipv4": {"received_prefixes": 31, "accepted_prefixes": 31, "sent_prefixes": 2}},
    }


def test_bgp_neighbors_that_are_not_established():
    summary = sonic_answers.bgp_summary(frr("bgp-summary-not-established"))
    neighbors = sonic_answers.bgp_neighbors(summary, sonic_answers.bgp_details(frr("bgp-neighbors-not-established"), summary))
    assert neighbors["Vrf_t1"] == {"router_id": "", "peers": {}}
    peers = neighbors["global"]["peers"]
    assert {address: (p["is_up"], p["is_enabled"], p["uptime"], p["remote_as"]) for address, p in peers.items()} == {
        "192.0.2.1": (False, True, -1, 64513),
        "192.0.2.3": (False, True, -1, 0),  # remote-as external: FRR says 0 until the peer opens
        "192.0.2.5": (False, False, -1, 64515),  # shut down: Idle (Admin)
    }
    assert peers["192.0.2.1"]["remote_id"] == "0.0.0.0"


def test_an_unnumbered_peer_is_named_by_its_interface():
    summary = json.dumps(
        {"default": {"ipv4Unicast": {"routerId": "10.0.0.1", "as": 1, "peers": {"Ethernet0": {"remoteAs": 2, "state": "Established", "pfxRcd": 4}}}}}
    )
    parsed = sonic_answers.bgp_summary(summary)
    assert sonic_answers.bgp_neighbors(parsed, {})["global"]["peers"]["Ethernet0"]["address_family"]["ipv4"]["received_prefixes"] == 4


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        ({"default": {"ipv4Unicast": {"peers": []}}}, "peers is not an object"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": "Established"}}}}, "peer '10.8.0.0' is not an object"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Established", "pfxRcd": "3"}}}}}, "pfxRcd is '3', not a whole number"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Established", "pfxRcd": True}}}}}, "pfxRcd is 'True'"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Established", "pfxRcd": -4}}}}}, "pfxRcd is '-4'"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Established", "remoteAs": 2**32}}}}}, "remoteAs"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"pfxRcd": 3}}}}}, "has no state"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Establ\x1bished"}}}}}, "state"),
        ({"default": {"ipv4Unicast": {"peers": {"10.8.0.0": {"state": "Established", "desc": "x" * 300}}}}}, "desc is longer"),
        ({"default": {"ipv4Unicast": {"peers": {"ten dot eight": {"state": "Established"}}}}}, "neither an address nor an interface"),
        ({"default": {"ipv4Unicast": []}}, "ipv4Unicast is not an object"),
        ({"default": "none"}, "not an object of address families"),
        ({"vrf\nname": {}}, "VRF name"),
    ],
)
def test_a_malformed_bgp_summary_is_an_answer_error(summary, problem):
    with pytest.raises(AnswerError) as malformed:
        sonic_answers.bgp_summary(json.dumps(summary))
    assert problem in str(malformed.value)


@pytest.mark.parametrize(
    ("neighbors", "problem"),
    [
        ({"default": {"10.8.0.0": {"remoteRouterId": 7}}}, "remoteRouterId is '7', not text"),
        ({"default": {"10.8.0.0": {"remoteRouterId": "not-an-id"}}}, "not a router id"),
        ({"default": {"10.8.0.0": {"addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": "3"}}}}}, "acceptedPrefixCounter"),
        ({"default": {"10.8.0.0": "up"}}, "is not an object"),
        ({"default": []}, "not an object of peers"),
    ],
)
def test_malformed_bgp_neighbor_details_are_an_answer_error(neighbors, problem):
    summary = sonic_answers.bgp_summary(frr("bgp-summary-established"))
    with pytest.raises(AnswerError) as malformed:
        sonic_answers.bgp_details(json.dumps(neighbors), summary)
    assert problem in str(malformed.value)


@pytest.mark.parametrize("text", ["1234.56 10.00\n", "7\n"])
def test_uptime(text):
    assert sonic_answers.uptime(text) == float(text.split()[0])


@pytest.mark.parametrize("text", ["nan 1\n", "inf 1\n", "-5 1\n", "1e9 1\n", "", "\u0661\u0662 1\n"])
def test_an_uptime_that_is_no_plain_number_is_an_answer_error(text):
    with pytest.raises(AnswerError, match="not seconds"):
        sonic_answers.uptime(text)
