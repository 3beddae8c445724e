"""What switches answer verify's getters, for tests and the fuzzer: `healthy(build)` is every
switch of a build answering as built (NAPALM's shapes and fabricgen's two extensions), and
`FakeDriver` serves such answers as a NAPALM driver would. No switch runs here; these stand in
for one (tests/test_verify.py, tests/fuzzing.py's device-answer cases)."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

from fabricgen.nos.nxos import verify as nxos

BGP_KEY = "s3cr3t-bgp-Key-9f2"  # the value the "switches" hold for <<secret=bgp-backend>>


def rows(build_dir: Path, name: str) -> list[dict]:
    with open(build_dir / name, newline="") as handle:
        return list(csv.DictReader(handle))


def healthy(build_dir: Path) -> dict[str, dict]:
    """device -> getter -> answer, for a fabric exactly as built."""
    topology = json.loads((build_dir / "topology.json").read_text())
    switches = {n["id"]: n for n in topology["nodes"] if n.get("nos") in ("sonic", "nxos")}
    answers = {
        name: {
            "get_lldp_neighbors_detail": {},
            "get_interfaces": {},
            "get_interfaces_counters": {},
            "get_bgp_neighbors": {"global": {"router_id": "", "peers": {}}},
            "get_lossless_counters": {},
        }
        for name in switches
    }
    for row in rows(build_dir, "cabling.csv"):
        speed = int(row["speed"].rstrip("G")) * 1000
        for here, there in (("a", "b"), ("b", "a")):
            device, port = row[f"{here}_device"], row[f"{here}_port"]
            if device not in switches:
                continue
            a = answers[device]
            a["get_lldp_neighbors_detail"][port] = [
                {
                    "remote_system_name": row[f"{there}_device"],
                    "remote_port": row[f"{there}_port"],
                    "remote_port_description": row[f"{there}_port"],
                    "remote_chassis_id": "00:00:00:00:00:01",
                }
            ]
            a["get_interfaces"][port] = {
                "is_up": True,
                "is_enabled": True,
                "description": "",
                "last_flapped": -1.0,
                "speed": float(speed),
                "mtu": 9216,
                "mac_address": "",
            }
            a["get_interfaces_counters"][port] = {"rx_errors": 0, "tx_errors": 0, "rx_discards": 0, "tx_discards": 0}
            a["get_lossless_counters"][port] = {"pfc_rx": {3: 10}, "pfc_tx": {3: 10}, "pfcwd_storms": 0, "ecn_marked": 0}
    for row in rows(build_dir, "ip-plan.csv"):
        if row["device"] in switches and row["peer_address"] and row["peer_device"] in switches:
            answers[row["device"]]["get_bgp_neighbors"]["global"]["peers"][row["peer_address"]] = {
                "local_as": 0,
                "remote_as": 0,
                "remote_id": "0.0.0.0",
                "is_up": True,
                "is_enabled": True,
                "description": "",
                "uptime": 100,
                "address_family": {"ipv4": {"received_prefixes": 3, "accepted_prefixes": 3, "sent_prefixes": 3}},
            }
    for name, node in switches.items():
        if node["nos"] == "sonic":
            db = json.loads((build_dir / f"configs/{name}/config_db.json").read_text())
            frr = (build_dir / f"configs/{name}/frr.conf").read_text()
            text = f"! config_db (show runningconfiguration all)\n{json.dumps(db)}\n! frr (vtysh -c 'show running-config')\n{frr}"
        else:
            text = (build_dir / f"configs/{name}.cfg").read_text()
        answers[name]["get_config"] = text.replace("<<secret=bgp-backend>>", BGP_KEY)
    return answers


class FakeDriver:
    """NAPALM-shaped answers; counters move by `deltas` between the first and the second sample.
    Records every method called, so a test can see nothing but getters ran."""

    def __init__(self, answers: dict, deltas: dict | None = None, calls: list | None = None, down: bool = False):
        self.answers, self.deltas, self.calls, self.down, self.samples = answers, deltas or {}, calls if calls is not None else [], down, {}

    def open(self):
        self.calls.append("open")
        if self.down:
            raise ConnectionRefusedError("connection refused")

    def close(self):
        self.calls.append("close")

    def _answer(self, getter):
        self.calls.append(getter)
        if isinstance(self.answers.get(getter), Exception):  # a getter that fails as a driver's can
            raise self.answers[getter]
        answer = copy.deepcopy(self.answers[getter])
        count = self.samples[getter] = self.samples.get(getter, 0) + 1
        if count > 1:
            for (port, key), value in self.deltas.get(getter, {}).items():
                if isinstance(value, dict):
                    for priority, more in value.items():
                        answer[port][key][priority] = answer[port][key].get(priority, 0) + more
                else:
                    answer[port][key] += value
        return answer

    def get_facts(self):
        if "get_facts" in self.answers:
            return self._answer("get_facts")
        self.calls.append("get_facts")
        return {"hostname": "fake"}

    def get_lldp_neighbors_detail(self):
        return self._answer("get_lldp_neighbors_detail")

    def get_interfaces(self):
        return self._answer("get_interfaces")

    def get_interfaces_counters(self):
        return self._answer("get_interfaces_counters")

    def get_bgp_neighbors(self):
        return self._answer("get_bgp_neighbors")

    def get_optics(self):
        if "get_optics" not in self.answers:
            raise NotImplementedError
        return self._answer("get_optics")

    def get_config(self, retrieve="all"):
        return {"running": self._answer("get_config"), "startup": "", "candidate": ""}

    def get_lossless_counters(self):
        return self._answer("get_lossless_counters")

    def get_ecmp_widths(self):
        if "get_ecmp_widths" not in self.answers:
            raise NotImplementedError
        return self._answer("get_ecmp_widths")

    def cli(self, commands, encoding="text"):
        """NX-OS's `show interface priority-flow-control | json` in the shape of the recording
        tests/data/verify/nxos-show-interface-pfc.json, from this fake's lossless counters; the
        route table is not reported."""
        self.calls.append("cli")
        if commands != [nxos.PFC]:
            raise NotImplementedError
        counters = self._answer("get_lossless_counters")
        rows = [
            {"if_name_str": port, "oper_vl_bmap": "On (8)", "rx_ppp": str(c["pfc_rx"].get(3, 0)), "tx_ppp": str(c["pfc_tx"].get(3, 0))}
            for port, c in counters.items()
        ]
        return {nxos.PFC: json.dumps({"TABLE_ppp": {"ROW_ppp": rows}})}

    def load_replace_candidate(self, filename=None, config=None):
        self.calls.append("load_replace_candidate")

    def commit_config(self, message="", revert_in=None):
        self.calls.append("commit_config")
