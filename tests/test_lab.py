"""The lab: what it plans from a build (no root needed), and the real thing: namespaces, veth pairs
and FRR daemons on this machine (root, FRR, ping, traceroute and nft; scripts/test.sh installs them).

The end-to-end tests use tests/lab/two-units.yaml: two scalable units of two DGX nodes, SONiC
leaves whose frr.conf the lab runs as built, NX-OS spines whose FRR routing twin it runs; and
tests/lab/three-tiers.yaml: the same nodes in two pods joined by SONiC cores.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabricgen.basics.errors import LabError, Problem
from fabricgen.build.secrets import ENV_PREFIX, FILE_ENV, env_name
from fabricgen.compiler.pipeline import build
from fabricgen.lab import keys, runtime, session
from fabricgen.lab.plan import (
    LabPlan,
    LabSwitch,
    _components,
    _probes,
    lab_id_of,
    read_plan,
)
from tests import cli_runner

REPO = Path(__file__).resolve().parents[1]
LAB_INTENT = REPO / "tests" / "lab" / "two-units.yaml"
THREE_TIER_INTENT = REPO / "tests" / "lab" / "three-tiers.yaml"
CROSS_POD = ("leaf", "spine", "core", "spine", "leaf", "node")
TOOLS = ("vtysh", "ping", "traceroute", "nft", "ip")
needs_lab = pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(t) is None for t in TOOLS) or not Path("/usr/lib/frr/bgpd").exists() or not runtime.LLDPD.exists(),
    reason="the lab needs root, Debian's frr, lldpd, iputils-ping, traceroute and nftables (scripts/test.sh installs them as root)",
)


def fabricgen(*args: str, secrets: dict[str, str] | None = None) -> cli_runner.Completed:
    """The CLI as a user runs it, in this process (tests/cli_runner.py; the daemons it starts are
    processes of their own either way); with `secrets`, exactly these FABRICGEN_SECRET_* values
    (none the test process happens to hold)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX) and k != FILE_ENV}
    env.update({env_name(name): value for name, value in (secrets or {}).items()})
    return cli_runner.fabricgen(*args, env=env)


def fabricgen_process(*args: str) -> subprocess.CompletedProcess:
    """The CLI as a process of its own (no FABRICGEN_SECRET_* values)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX) and k != FILE_ENV}
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, timeout=600, check=False, env=env)


def leftovers(build_dir: Path) -> list[str]:
    """Everything of this build's lab still on the machine: namespaces, FRR run dirs, lldpd's
    sockets, pid files and configs, lldpd processes, state."""
    prefix = f"fg{lab_id_of(build_dir)}-"
    found = [f"netns {n}" for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout.split() if n.startswith(prefix)]
    found += [f"dir {p}" for p in Path("/var/run/frr").glob(f"{prefix}*")]
    found += [f"lldpd file {p}" for p in runtime.LLDPD_RUN.glob(f"{prefix}*")]
    found += [f"lldpd process {pid}" for pid in orphaned_lldpd()]
    found += [f"state {p}" for p in Path("/run/fabricgen/lab").glob(lab_id_of(build_dir))]
    return found


def orphaned_lldpd() -> list[int]:
    """lldpd processes in a network namespace that neither this machine's own nor any named one
    (`ip netns`) is: left running after their lab's namespace was deleted. (lldpd rewrites its
    command line to "lldpd: monitor.", so it cannot be told by its socket path.)"""
    known = {os.stat("/proc/self/ns/net").st_ino}
    known |= {p.stat().st_ino for p in Path("/run/netns").glob("*")} if Path("/run/netns").is_dir() else set()
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if status.read_text().startswith("Name:\tlldpd\n") and os.stat(status.parent / "ns" / "net").st_ino not in known:
                found.append(int(status.parent.name))
        except OSError:
            continue  # the process ended
    return found


@pytest.fixture
def clean_lab(lab_build: Path):
    """The lab of `lab_build`, removed after the test whatever happened in it."""
    yield lab_build
    fabricgen("lab", "down", str(lab_build))
    assert leftovers(lab_build) == []


# --- the plan (no root) --------------------------------------------------------------------------


# --- keys (no root) ------------------------------------------------------------------------------

KEYED_LEAF = """router bgp 64513
 neighbor SPINES peer-group
 neighbor SPINES password <<secret=bgp-backend>>
 neighbor SPINES ttl-security hops 1
 neighbor 10.8.0.0 remote-as 64512
 neighbor 10.8.0.0 peer-group SPINES
 neighbor 10.9.0.0 remote-as 64600
 neighbor 10.9.0.0 password <<secret=bgp-core>>
 neighbor 10.10.0.0 remote-as 64601
 address-family ipv4 unicast
  neighbor SPINES route-map FABRICGEN-IN in
  neighbor SPINES route-map FABRICGEN-OUT out
  neighbor SPINES maximum-prefix 40 restart 5
 exit-address-family
exit
ip prefix-list FABRICGEN-ACCEPT seq 10 permit 10.0.0.0/16 le 32
route-map FABRICGEN-IN permit 10
 match ip address prefix-list FABRICGEN-ACCEPT
exit
"""


class KeyedPlan:
    """The part of a LabPlan the key functions read: switches and their FRR configs."""

    def __init__(self, confs: dict[str, str]):
        self.switches = {name: LabSwitch(name, "leaf", f"configs/{name}/frr.conf", conf, (), None, (), (), None) for name, conf in confs.items()}


# --- bad input -----------------------------------------------------------------------------------


@needs_lab
def test_missing_incomplete_and_foreign_build_directories_are_refused(lab_build: Path, tmp_path: Path):
    missing = fabricgen("lab", "up", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and f"{tmp_path / 'nowhere'}: does not exist: a build directory is needed here" in missing.stderr

    incomplete = tmp_path / "incomplete"
    shutil.copytree(lab_build, incomplete)
    (incomplete / "cabling.csv").unlink()
    result = fabricgen("lab", "up", str(incomplete))
    assert result.returncode == 2 and "cabling.csv" in result.stderr and "Traceback" not in result.stderr

    edited = tmp_path / "edited"
    shutil.copytree(lab_build, edited)
    with open(edited / "ip-plan.csv", "a") as handle:
        handle.write("backend,x,y,10.0.0.1/32,loopback,,,,\n")
    result = fabricgen("lab", "up", str(edited))
    assert result.returncode == 2 and "differs from what the build wrote" in result.stderr

    foreign = tmp_path / "foreign"
    shutil.copytree(lab_build, foreign)
    manifest = json.loads((foreign / "manifest.json").read_text())
    manifest["fabricgen_version"] = "0.0.1"
    (foreign / "manifest.json").write_text(json.dumps(manifest))
    result = fabricgen("lab", "up", str(foreign))
    assert result.returncode == 2 and "built by fabricgen 0.0.1" in result.stderr
    for directory in (incomplete, edited, foreign):
        assert leftovers(directory) == []

    # a secrets file others can read is refused before anything is built, naming the fix, not a value
    shared = tmp_path / "keys.yaml"
    shared.write_text(f"bgp-backend: {MARKER_KEY}\n")
    shared.chmod(0o644)
    result = fabricgen("lab", "up", str(lab_build), "--secrets", str(shared))
    assert result.returncode == 2 and "chmod 600" in result.stderr and "Traceback" not in result.stderr
    assert MARKER_KEY not in result.stdout + result.stderr
    assert leftovers(lab_build) == [] and not runtime.keys_directory(lab_id_of(lab_build)).exists()


@needs_lab
def test_an_up_that_fails_midway_removes_what_it_built(lab_build: Path, monkeypatch: pytest.MonkeyPatch):
    """Namespaces and veths exist, then starting FRR fails: `up` removes everything itself."""
    built = []

    def refuse(plan, state, switches):
        built.extend(leftovers(lab_build))
        raise LabError(Problem("FRR would not start (injected by the test)"))

    monkeypatch.setattr(runtime, "_start_frr", refuse)
    with pytest.raises(LabError, match="injected"):
        runtime.lab_up(lab_build)
    assert len([b for b in built if b.startswith("netns ")]) == 22  # 18 switches + 4 nodes were up
    assert leftovers(lab_build) == []


@needs_lab
def test_a_killed_up_is_removed_by_down(clean_lab: Path):
    """A lab whose `up` is killed midway (SIGKILL: no cleanup code runs) is removed by `down`."""
    process = subprocess.Popen([sys.executable, "-m", "fabricgen", "lab", "up", str(clean_lab)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not any(item.startswith("dir ") for item in leftovers(clean_lab)) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert leftovers(clean_lab), "the lab should have been half built when it was killed"
    # `up` and `down` as processes of their own, as a user runs them after a kill. (Run in this
    # process, `down` follows the kill within milliseconds and misses an FRR daemon that the killed
    # `up`'s orphaned `ip netns exec` is still starting: it keeps running, in a deleted namespace.)
    again = fabricgen_process("lab", "up", str(clean_lab))
    assert again.returncode == 2 and "already" in again.stderr and "lab down" in again.stderr
    down = fabricgen_process("lab", "down", str(clean_lab))
    assert down.returncode == 0, down.stderr
    assert leftovers(clean_lab) == []
    assert not [
        p for p in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout.splitlines() if f"fg{lab_id_of(clean_lab)}-" in p
    ]


# --- the lab, end to end -------------------------------------------------------------------------


MARKER_KEY = "lab-marker-key-7f3a9c"  # the BGP key the end-to-end test gives, looked for everywhere it must not be


def files_holding(text: str, *roots: Path) -> list[str]:
    return [str(p) for root in roots for p in root.rglob("*") if p.is_file() and not p.is_symlink() and text.encode() in p.read_bytes()]


def command_lines_holding(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(str(cmdline))
        except OSError:
            continue  # the process ended
    return found


@needs_lab
def test_up_verify_fail_restore_down(clean_lab: Path):
    up = fabricgen("lab", "up", str(clean_lab), secrets={"bgp-backend": MARKER_KEY})
    assert up.returncode == 0, up.stderr
    assert "18 switches, 4 GPU nodes, 64 links" in up.stdout
    assert "lldpd: 44 processes" in up.stdout  # one privilege-separated lldpd (two processes) per namespace
    assert "s after the configs were loaded" in up.stdout and "not converged" not in up.stdout
    assert "keys: bgp-backend from the environment or the secrets file" in up.stdout and "generated" not in up.stdout
    assert MARKER_KEY not in up.stdout + up.stderr
    _sessions_run_with_the_key_and_it_is_nowhere_else(clean_lab)
    _a_key_changed_on_one_end_takes_exactly_that_session_down(clean_lab)

    again = fabricgen("lab", "up", str(clean_lab))
    assert again.returncode == 2 and "already up" in again.stderr

    verify = fabricgen("lab", "verify", str(clean_lab))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "BGP sessions: PASS, 64/64 expected sessions Established" in verify.stdout
    assert "BFD sessions: PASS, 64/64" in verify.stdout
    assert "Traffic: PASS, 64/64 probes reached their target" in verify.stdout
    assert "LLDP: PASS, 128/128 cable ends see the planned neighbour" in verify.stdout  # nodes' NICs too

    unknown = fabricgen("lab", "fail", str(clean_lab), "--link", "be-su01-leaf1:Ethernet999")
    assert unknown.returncode == 2 and "has no cabled port 'Ethernet999'" in unknown.stderr

    plan = read_plan(clean_lab)
    leaf = "be-su01-leaf1"
    uplink = plan.uplinks[leaf][0].end(leaf).port
    failed = fabricgen("lab", "fail", str(clean_lab), "--link", f"{leaf}:{uplink}", "--silent")
    assert failed.returncode == 0, failed.stdout + failed.stderr
    assert "converged in" in failed.stdout and "BFD detection time" in failed.stdout
    seconds = float(failed.stdout.split("converged in ")[1].split(" s")[0])
    # BFD (3 x 150 ms here) plus FRR's work; without BFD only the 9 s hold timer would notice
    assert seconds < 3

    verify = fabricgen("lab", "verify", str(clean_lab))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "62/62 expected sessions Established; 2 lost to the applied failures" in verify.stdout
    assert "LLDP: PASS, 126/126 cable ends see the planned neighbour; 2 ends of silently failed cables not checked" in verify.stdout
    # the leaf's kernel now reaches every other leaf through the one spine left: width 1, not 2
    routes = json.loads(
        subprocess.run(["ip", "-n", f"fg{plan.lab_id}-{leaf}", "-j", "route", "show", "proto", "bgp"], capture_output=True, text=True, check=False).stdout
    )
    remote = [r for r in routes if r["dst"].startswith("10.4.") and r.get("type") != "blackhole"]  # not its own aggregate
    assert len(remote) == 15 and all("nexthops" not in r for r in remote)

    restored = fabricgen("lab", "restore", str(clean_lab))
    assert restored.returncode == 0 and "restored" in restored.stdout

    down = fabricgen("lab", "down", str(clean_lab))
    assert down.returncode == 0 and leftovers(clean_lab) == []
    assert not runtime.keys_directory(lab_id_of(clean_lab)).exists()
    assert fabricgen("lab", "down", str(clean_lab)).stdout.startswith("no lab was up")


def _sessions_run_with_the_key_and_it_is_nowhere_else(build_dir: Path) -> None:
    """FRR holds the key (its running config, inside the lab's namespace) and every session is up
    with it; no file of the build, of FRR's run directories or of the lab's state outside its key
    directory holds it, nor any process's command line."""
    plan = read_plan(build_dir)
    running = runtime.vtysh(plan.namespace("be-spine01"), "show running-config")
    assert f" neighbor LEAVES password {MARKER_KEY}\n" in running and " neighbor LEAVES ttl-security hops 1\n" in running
    verify = fabricgen("lab", "verify", str(build_dir))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "64/64 expected sessions Established; 64/64 with the TCP-MD5 key the build gives them" in verify.stdout
    assert MARKER_KEY not in verify.stdout + verify.stderr
    key_dir = runtime.keys_directory(plan.lab_id)
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700
    assert sorted(p.name for p in key_dir.iterdir()) == sorted([keys.KEYS_FILE, *(f"{name}.conf" for name in plan.switches)])
    assert {stat.S_IMODE(p.stat().st_mode) for p in key_dir.iterdir()} == {0o600}
    state_dir = key_dir.parent
    outside = [p for p in files_holding(MARKER_KEY, build_dir, state_dir, *Path("/var/run/frr").glob(f"fg{plan.lab_id}-*")) if not p.startswith(str(key_dir))]
    assert outside == []
    assert command_lines_holding(MARKER_KEY) == []


def _a_key_changed_on_one_end_takes_exactly_that_session_down(build_dir: Path) -> None:
    """One spine gets another key for one leaf: that session (both of its ends) goes down and
    verify names it, every other session stays up; without the override it comes back."""
    plan = read_plan(build_dir)
    cut = next(s for s in plan.sessions if s.device == "be-spine01" and s.peer_device == "be-su01-leaf1")
    spine_ns = plan.namespace("be-spine01")
    bgp = f"router bgp {plan.switches['be-spine01'].asn}"
    runtime.run(["vtysh", "-N", spine_ns, "-c", "configure terminal", "-c", bgp, "-c", f"neighbor {cut.peer_address} password not-the-lab-key"])
    # the session cannot come back (its two ends disagree on the key): verify's wait for
    # convergence runs out; 3 s is ample for FRR's reset and the leaf to see it
    result = session.check(build_dir, timeout=3)
    assert not result.passed
    bgp_check = result.checks[0]
    assert bgp_check.summary.startswith("62/64 expected sessions Established")
    failing = {row[0]: row[4] for row, ok in zip(bgp_check.rows, bgp_check.row_ok, strict=True) if not ok}
    assert failing == {"be-spine01": f"be-su01-leaf1 {cut.peer_address}", "be-su01-leaf1": f"be-spine01 {cut.address}"}
    assert result.checks[1].passed  # BFD has no key: it stays up, so only BGP can tell
    runtime.run(["vtysh", "-N", spine_ns, "-c", "configure terminal", "-c", bgp, "-c", f"no neighbor {cut.peer_address} password"])
    verify = fabricgen("lab", "verify", str(build_dir))  # back to the group's key: up again
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "64/64 expected sessions Established; 64/64 with the TCP-MD5 key" in verify.stdout


@needs_lab
def test_evpn_fabric_bridges_each_rail_over_vxlan_and_reports_what_it_cannot_check(tmp_path: Path):
    """tests/golden/tiny-evpn.yaml: per-rail segments spanning two units, SONiC leaves as VTEPs."""
    build_dir = tmp_path / "tiny-evpn"
    build(REPO / "tests" / "golden" / "tiny-evpn.yaml", build_dir)
    try:
        assert fabricgen("lab", "up", str(build_dir)).returncode == 0
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        # each of the 8 rails' leaves sees the other unit's leaf as the one remote VTEP of its VNI
        assert "EVPN: PASS, 16/16 remote VTEPs seen per VNI" in verify.stdout
        assert "tenant VRFs (L3 VNI, type-5) not checked" in verify.stdout
        # same rail, other unit: one bridged segment, so the target is the first and only hop
        assert "Traffic: PASS, 16/16 probes reached their target" in verify.stdout
        # nothing routed between segments is claimed as passed
        plan = read_plan(build_dir)
        assert all(p.unchecked for p in plan.probes if p.kind == "other rail")
        assert all(p.path == ("node",) for p in plan.probes if not p.unchecked)
    finally:
        fabricgen("lab", "down", str(build_dir))
        assert leftovers(build_dir) == []


@needs_lab
def test_an_eos_fabric_boots_its_routing_twins_and_verifies(tmp_path: Path):
    """tests/golden/tiny-eos.yaml: EOS leaves and spines, VXLAN EVPN. The lab runs each switch's
    FRR routing twin (lab/frr/), made from the same device config as its EOS config: every
    session with its key, BFD, the VTEPs' ECMP width, LLDP on every cable end, each rail's VNI."""
    build_dir = tmp_path / "tiny-eos"
    build(REPO / "tests" / "golden" / "tiny-eos.yaml", build_dir)
    try:
        assert fabricgen("lab", "up", str(build_dir)).returncode == 0
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        summary = " ".join(verify.stdout.split())
        assert "BGP sessions: PASS, 64/64 expected sessions Established; 64/64 with the TCP-MD5 key" in summary
        assert "ECMP width: PASS, 272/272 routes to remote VTEPs at the planned width" in summary
        assert "EVPN: PASS, 16/16 remote VTEPs seen per VNI" in summary
        assert "Traffic: PASS, 16/16 probes reached their target" in summary
    finally:
        fabricgen("lab", "down", str(build_dir))
        assert leftovers(build_dir) == []


@needs_lab
def test_a_3_tier_fabric_comes_up_verifies_and_survives_a_core_down(three_tier_build: Path, tmp_path: Path):
    """tests/lab/three-tiers.yaml through `lab run`: every round verifies, traceroutes between
    pods cross leaf, spine, core, spine, leaf, and the core round loses what the simulation says."""
    report = tmp_path / "lab.md"
    try:
        result = fabricgen("lab", "run", str(three_tier_build), "--report", str(report))
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    finally:
        fabricgen("lab", "down", str(three_tier_build))
    assert leftovers(three_tier_build) == []
    text = report.read_text()
    assert "22 switches, 4 GPU nodes, 96 links" in text and "result: **PASS**" in text
    assert "keys: bgp-backend, bgp-core generated for this lab" in text
    rounds = {part.split("\n", 1)[0]: part for part in text.split("\n## ")[1:]}
    assert list(rounds)[3:] == ["be-spine01 down", "be-spine01 down, restored", "be-core01 down", "be-core01 down, restored"]
    for name, part in rounds.items():
        assert "FAIL" not in part and "NOT converged" not in part, name
        # every probe reached its target over the planned roles: 48 of them through a core
        assert "| same rail, other unit | 32 | 32 | 32 | 0 | - |" in part and "| other rail | 32 | 32 | 32 | 0 | - |" in part, name
    assert "128/128 expected sessions Established; 128/128 with the TCP-MD5 key" in rounds["after up"] and "336/336 routes" in rounds["after up"]
    core_round = rounds["be-core01 down"]
    assert "96/96 expected sessions Established; 16 lost to the applied failures" in core_round
    assert "| be-spine01 | spine | 16 | 0/1 | - |" in core_round and "| be-su01-leaf1 | leaf | 15 | 1/2 | - |" in core_round


# --- frontend, storage and planes ---------------------------------------------------------------

FRONTEND_INTENT = REPO / "tests" / "lab" / "frontend.yaml"
PLANES_INTENT = REPO / "tests" / "lab" / "two-planes.yaml"


def ip_plan_rows(build_dir: Path, network: str) -> list[list[str]]:
    return [r for r in (line.split(",") for line in (build_dir / "ip-plan.csv").read_text().splitlines()[1:]) if r[0] == network]


def _without_spines(plan):
    """The plan as a rail-only fabric with no spine tier: every leaf alone, no fabric link."""
    switches = {n: s for n, s in plan.switches.items() if s.role == "leaf"}
    links = [link for link in plan.links if link.kind == "host"]
    bare = LabPlan(
        plan.build_dir,
        plan.lab_id,
        plan.network,
        plan.fabric,
        switches,
        plan.nodes,
        links,
        [],
        plan.host_blocks,
        {name: [] for name in switches},
        plan.address_owner,
        [],
        "rail-only",
        _components(switches, links),
    )
    bare.probes = _probes(bare, {})
    return bare


@needs_lab
def test_frontend_and_storage_networks_boot_and_verify(tmp_path: Path):
    """tests/lab/frontend.yaml: `lab up --network frontend` (GPU nodes and a management node on
    leaf pairs), then `--network storage` (the GPU nodes' storage ports and two ONTAP appliances run
    from their netplan twin), each verified and removed. The shipped intents' converged frontends
    boot the same way (`lab run`, README), too large for the suite's time."""
    build_dir = tmp_path / "frontend"
    build(FRONTEND_INTENT, build_dir)
    try:
        up = fabricgen("lab", "up", str(build_dir), "--network", "frontend")
        assert up.returncode == 0, up.stdout + up.stderr
        assert "frontend of lab-frontend: 4 switches, 5 servers (4 GPU nodes, 1 management node), 26 links" in up.stdout
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        assert "BGP sessions: PASS, 32/32 expected sessions Established; 32/32 with the TCP-MD5 key" in verify.stdout
        assert "ECMP width: PASS, 6/6 routes" in verify.stdout and "Traffic: PASS, 20/20 probes reached their target" in verify.stdout
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []
    try:
        up = fabricgen("lab", "up", str(build_dir), "--network", "storage")
        assert up.returncode == 0, up.stdout + up.stderr
        assert "storage of lab-frontend: 4 switches, 6 servers (4 GPU nodes, 2 storage nodes), 28 links" in up.stdout
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        assert "BGP sessions: PASS, 32/32" in verify.stdout and "Traffic: PASS, 24/24 probes reached their target" in verify.stdout
        # the appliance runs its twin's rule: traffic from its first port's address uses that port's table
        plan = read_plan(build_dir, "storage")
        first = plan.nodes["storage01"].nics[0]
        rules = runtime.run(["ip", "-n", plan.namespace("storage01"), "rule", "show"]).stdout
        assert f"from {first.address.split('/')[0]} lookup 301" in rules, rules  # storage tables from 301 (host_config TABLE_BASE)
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []


# --- the rail designs -----------------------------------------------------------------------------


@needs_lab
def test_multi_plane_nics_boot_each_plane_with_its_own_ecmp_and_no_route_between_them(tmp_path: Path):
    """tests/lab/multi-plane-nics.yaml (port p of every ConnectX-8 on plane p; the planes meet only
    in the nodes) up and verified: width 4 inside each plane, and probes between the planes' leaves
    go unanswered. The rail-only design boots the same way (README); its plan is tested without root."""
    build_dir = tmp_path / "multi-plane-nics"
    build(REPO / "tests" / "lab" / "multi-plane-nics.yaml", build_dir)
    try:
        up = fabricgen("lab", "up", str(build_dir))
        assert up.returncode == 0, up.stdout + up.stderr
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        summary = " ".join(verify.stdout.split())  # the table title wraps on a narrow terminal
        assert "plane 1: width 4 between its leaves, 0 routes to other planes (0 planned)" in summary
        assert "plane 2: width 4 between its leaves, 0 routes to other planes (0 planned)" in summary
        assert "4/4 between leaves no fabric link joins" in summary
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []


@needs_lab
def test_the_shipped_32_gpu_pod_boots_and_verifies(tmp_path: Path):
    """intents/small-32-gpu.yaml as shipped: 2 leaves of 4 rails each (rail-major ports), 16
    uplinks per leaf over 2 spines; every session (both ends) and every probe, same rail and other
    rail. `lab run`'s report and failure rounds are the 3-tier test's."""
    build_dir = tmp_path / "small-32-gpu"
    build(REPO / "intents" / "small-32-gpu.yaml", build_dir)
    try:
        up = fabricgen("lab", "up", str(build_dir))
        assert up.returncode == 0, up.stdout + up.stderr
        assert "leaves serving several rails" in up.stdout
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        summary = " ".join(verify.stdout.split())
        assert "BGP sessions: PASS, 64/64 expected sessions Established" in summary
        assert "64/64 probes reached their target" in summary
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []
