"""FRR's bgpd loads the frr.conf files fabricgen writes without a failed line.

`vtysh --dryrun` (tests/test_render_sonic.py and others) checks each line against FRR's grammar
only: a line that names a peer group its BGP instance does not have parses, and the running bgpd
then refuses it while taking the rest. Here Debian's real zebra, bfdd and bgpd (8.4) load whole
files as the lab does (`vtysh -f`), in a network namespace of the test's own. Needs root
(namespaces; FRR's daemons drop to the frr user) and Debian's frr.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from fabricgen.compiler.pipeline import compile_intent

FRR = Path("/usr/lib/frr")
FRR_RUN = Path("/var/run/frr")
needs_bgpd = pytest.mark.skipif(
    os.geteuid() != 0 or not (FRR / "bgpd").exists() or shutil.which("vtysh") is None or shutil.which("ip") is None,
    reason="loading a config into bgpd needs root, iproute2 and Debian's frr",
)
READY_WITHIN = 120.0  # seconds for FRR to start and load a file: only a bound on a failure, never waited out


DAEMONS = ("zebra", "bfdd", "bgpd")  # what the configs configure; zebra first: the others connect to it


def refused_lines(config: str) -> list[str]:
    """What FRR refused of `config`, loaded as the lab and a SONiC switch load an integrated
    frr.conf: zebra, bfdd and bgpd started (no config of their own) in a namespace of the test's
    own, then `vtysh -f` hands every line to the daemon it is for and says which one failed;
    everything removed again. [] when every line was taken."""
    namespace = f"fgt-load-{secrets.token_hex(3)}"
    run = FRR_RUN / namespace
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        run.mkdir(parents=True)
        shutil.chown(run, "frr", "frr")  # the daemons run as frr: their sockets, pid files and logs
        for daemon in DAEMONS:
            command = [str(FRR / daemon), "-N", namespace, "-d", "-f", "/dev/null", "-P", "0", "--log", f"file:{run / daemon}.log"]
            subprocess.run(["ip", "netns", "exec", namespace, *command], check=True, capture_output=True)
        deadline = time.monotonic() + READY_WITHIN
        while not all((run / f"{daemon}.vty").exists() for daemon in DAEMONS):  # each daemon's vty socket: up
            assert time.monotonic() < deadline, f"FRR did not start in {run} within {READY_WITHIN} s"
            time.sleep(0.1)
        path = run / "frr.conf"
        path.write_text(config)
        result = subprocess.run(["vtysh", "-N", namespace, "-f", str(path)], capture_output=True, text=True, timeout=READY_WITHIN)
        return [] if result.returncode == 0 else [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    finally:
        pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout.split()
        for pid in pids:
            subprocess.run(["kill", "-9", pid], check=False)
        subprocess.run(["ip", "netns", "delete", namespace], check=False)
        shutil.rmtree(run, ignore_errors=True)


# 3 tiers, VXLAN EVPN, the leaf ASNs reused in every pod (allowas-in), SONiC leaves and cores
# (master: the anycast gateway), NX-OS spines (their routing twins are frr.conf files too)
PER_POD_EVPN = """\
gpus: 32
backend:
  tiers: 3
  scalable_unit_gpus: 16
  pod_gpus: 16
  routing: vxlan-evpn
  asn: {leaves: per-pod}
  leaf: {nos: sonic, nos_release: master}
  core: {nos: sonic, nos_release: master}
"""


@needs_bgpd
@pytest.mark.frr
def test_bgpd_loads_every_line_of_a_3_tier_evpn_fabric_with_leaf_asns_reused_per_pod(write_intent):
    """The tenant VRF's BGP instance has no peer group: bgpd refused its `neighbor SPINES
    allowas-in 1` (found by loading the file into bgpd; --dryrun accepted it). allowas-in belongs to the EVPN
    family of the default instance, where the routes of the same leaf in another pod arrive."""
    build = compile_intent(write_intent(PER_POD_EVPN))
    files = {path: data.decode() for path, data in build.files.items() if path.endswith("frr.conf") or path.startswith("lab/frr/")}
    chosen = {
        "leaf": next(text for path, text in files.items() if "leaf" in path and path.endswith("frr.conf")),
        "core": next(text for path, text in files.items() if "core" in path and path.endswith("frr.conf")),
        "spine twin": next(text for path, text in files.items() if "spine" in path and path.startswith("lab/frr/")),
    }
    assert " vrf " in chosen["leaf"] and "allowas-in 1" in chosen["leaf"]  # the case in question is there
    assert {role: refused_lines(text) for role, text in chosen.items()} == {role: [] for role in chosen}
