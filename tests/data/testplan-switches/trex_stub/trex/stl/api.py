"""A stand-in for TRex's trex.stl.api (github:cisco-system-traffic-generator/trex-core,
scripts/automation/trex_control_plane/interactive/trex/stl/api.py) with just what the plan's
run_trials.py calls, for tests/test_testplan_switches.py: no server, no traffic. Each port "sends"
its streams' rates for the trial's duration and every frame arrives; get_stats() answers in the
shape of TRex's (per port id opackets/ipackets, latency per pg_id in microseconds)."""


class STLError(Exception):
    pass


class _Profile:
    def __init__(self, port_id, tunables):
        self.port_id = port_id
        self.tunables = tunables

    def get_streams(self):
        return [(self.port_id, self.tunables["pps"])]


class STLProfile:
    @staticmethod
    def load_py(python_file, direction=0, port_id=0, **kwargs):
        return _Profile(port_id, kwargs)


class STLClient:
    def __init__(self, server="127.0.0.1"):
        self.streams = {}
        self.counters = {}

    def connect(self):
        pass

    def disconnect(self):
        pass

    def reset(self, ports=None):
        self.streams = {}

    def resolve(self, ports=None):
        pass

    def add_streams(self, streams, ports=None):
        for port in ports:
            self.streams.setdefault(port, []).extend(streams)

    def clear_stats(self):
        self.counters = {}

    def start(self, ports=None, duration=-1):
        for port in ports:
            frames = int(sum(pps for _, pps in self.streams[port]) * duration) + 1
            self.counters[port] = frames

    def wait_on_traffic(self, ports=None, timeout=None, rx_delay_ms=None):
        pass

    def get_stats(self, ports=None):
        stats = {port: {"opackets": n, "ipackets": n, "tx_pps": 0.0, "rx_pps": 0.0} for port, n in self.counters.items()}
        stats["latency"] = {
            port: {"latency": {"average": 2.5, "total_max": 4.0, "total_min": 1.5, "jitter": 0.5}, "err_cntrs": {"dropped": 0}} for port in self.counters
        }
        stats["latency"]["global"] = {"bad_hdr": 0, "old_flow": 0}
        return stats
