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
from collections import Counter
from dataclasses import replace
from pathlib import Path

import netaddr
import pytest

from fabricgen.errors import LabError, Problem
from fabricgen.lab import runtime
from fabricgen.lab import keys, session
from fabricgen.lab.plan import LabPlan, LabSwitch, _announced, _components, _keyed_peers, _probes, _rails, check_frr_conf, kernel_names, lab_id_of, read_plan
from fabricgen.lab.routing import ecmp_widths
from fabricgen.pipeline import build
from fabricgen.secrets import ENV_PREFIX, FILE_ENV, env_name

REPO = Path(__file__).resolve().parents[1]
LAB_INTENT = REPO / "tests" / "lab" / "two-units.yaml"
THREE_TIER_INTENT = REPO / "tests" / "lab" / "three-tiers.yaml"
CROSS_POD = ("leaf", "spine", "core", "spine", "leaf", "node")
TOOLS = ("vtysh", "ping", "traceroute", "nft", "ip")
needs_lab = pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(t) is None for t in TOOLS) or not Path("/usr/lib/frr/bgpd").exists(),
    reason="the lab needs root, Debian's frr, iputils-ping, traceroute and nftables (scripts/test.sh installs them as root)",
)


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    destination = tmp_path_factory.mktemp("lab") / "two-units"
    build(LAB_INTENT, destination)
    return destination


@pytest.fixture(scope="module")
def three_tier_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    destination = tmp_path_factory.mktemp("lab") / "three-tiers"
    build(THREE_TIER_INTENT, destination)
    return destination


def fabricgen(*args: str, timeout: float = 600, secrets: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI as a user runs it; with `secrets`, exactly these FABRICGEN_SECRET_* values (none
    the test process happens to hold)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX) and k != FILE_ENV}
    env.update({env_name(name): value for name, value in (secrets or {}).items()})
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, timeout=timeout, check=False, env=env)


def leftovers(build_dir: Path) -> list[str]:
    """Everything of this build's lab still on the machine: namespaces, FRR run dirs, state."""
    prefix = f"fg{lab_id_of(build_dir)}-"
    found = [f"netns {n}" for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout.split() if n.startswith(prefix)]
    found += [f"dir {p}" for p in Path("/var/run/frr").glob(f"{prefix}*")]
    found += [f"state {p}" for p in Path("/run/fabricgen/lab").glob(lab_id_of(build_dir))]
    return found


@pytest.fixture
def clean_lab(lab_build: Path):
    """The lab of `lab_build`, removed after the test whatever happened in it."""
    yield lab_build
    fabricgen("lab", "down", str(lab_build))
    assert leftovers(lab_build) == []


# --- the plan (no root) --------------------------------------------------------------------------


def test_kernel_names_keep_valid_names_shorten_the_rest_and_never_collide():
    names = kernel_names(["Ethernet8", "nic1", "Ethernet1/33", "Ethernet1/1/2", "eth1-33", "Ethernet1/100/4/breakout-long"])
    assert names["Ethernet8"] == "Ethernet8" and names["nic1"] == "nic1"
    assert names["Ethernet1/33"] == "eth1-33" and names["Ethernet1/1/2"] == "eth1-1-2"
    assert names["eth1-33"] == "p5"  # the name is taken by Ethernet1/33's short form: numbered instead
    assert len(set(names.values())) == len(names)
    assert all(len(n) <= 15 and "/" not in n for n in names.values())


def test_plan_wires_every_backend_cable_once_and_expects_a_session_per_fabric_link(lab_build: Path):
    plan = read_plan(lab_build)
    rows = [line.split(",") for line in (lab_build / "cabling.csv").read_text().splitlines()[1:]]
    backend = [r for r in rows if r[1] == "backend"]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in backend)
    fabric = [link for link in plan.links if link.kind == "fabric"]
    assert len(plan.sessions) == 2 * len(fabric)
    # every switch runs FRR: SONiC leaves their own frr.conf, NX-OS spines the twin
    sources = {s.role: s.frr_source.split("/")[0] for s in plan.switches.values()}
    assert sources == {"leaf": "configs", "spine": "lab"}
    # every GPU node NIC has its planned address and a rule selecting its own table
    for node in plan.nodes.values():
        assert len(node.nics) == 8 and len(node.rules) == 8


def test_probes_cross_the_tiers_the_design_says(lab_build: Path):
    plan = read_plan(lab_build)
    kinds = {p.kind for p in plan.probes}
    assert kinds == {"same rail, other unit", "other rail"}
    for probe in plan.probes:
        source = plan.nodes[probe.source]
        target = plan.nodes[probe.target]
        assert source.name != target.name
        if probe.kind == "same rail, other unit":
            assert source.scalable_unit != target.scalable_unit and probe.source_nic == probe.target_nic
        assert probe.path == ("leaf", "spine", "leaf", "node")  # different leaves: up and down again


def test_widths_of_a_2_tier_fabric_follow_its_live_uplinks(lab_build: Path):
    """Every leaf reaches every other through each spine; a failed uplink takes that spine away
    from the leaf and the leaf away from that spine, nothing else."""
    plan = read_plan(lab_build)
    intact = ecmp_widths(plan, set(), set())
    assert {w for name, by_leaf in intact.items() for w in by_leaf.values()} == {1, 2}
    assert all(set(intact[name].values()) == {2 if s.role == "leaf" else 1} for name, s in plan.switches.items())
    leaf = "be-su01-leaf1"
    link = plan.uplinks[leaf][0]
    spine = link.other(leaf).device
    cut = ecmp_widths(plan, {link.cable}, set())
    assert set(cut[leaf].values()) == {1} and cut[spine][leaf] == 0
    assert all(cut[other][leaf] == 1 for other, s in plan.switches.items() if s.role == "leaf" and other != leaf)


def test_plan_of_a_3_tier_build_has_cores_every_cable_once_and_a_session_per_fabric_link(three_tier_build: Path):
    plan = read_plan(three_tier_build)
    assert Counter(s.role for s in plan.switches.values()) == {"leaf": 16, "spine": 4, "core": 2}
    rows = [line.split(",") for line in (three_tier_build / "cabling.csv").read_text().splitlines()[1:]]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in rows if r[1] == "backend")
    fabric = [link for link in plan.links if link.kind == "fabric"]
    to_cores = [link for link in fabric if plan.switches[link.b.device].role == "core"]
    assert len(fabric) == 64 and len(to_cores) == 32 and all(plan.switches[link.a.device].role == "spine" for link in to_cores)
    assert len(plan.sessions) == 2 * len(fabric)
    assert {(s.device, s.peer_device) for s in plan.sessions if s.device == "be-core01"} == {("be-core01", "be-spine01"), ("be-core01", "be-spine03")}
    # SONiC leaves and cores run their own frr.conf, the NX-OS spines their twin
    sources = {(s.role, s.frr_source.split("/")[0]) for s in plan.switches.values()}
    assert sources == {("leaf", "configs"), ("spine", "lab"), ("core", "configs")}
    assert {s.pod for s in plan.switches.values() if s.role != "core"} == {1, 2}


def test_3_tier_probes_cross_a_core_between_pods_and_stay_in_the_pod_within_it(three_tier_build: Path):
    plan = read_plan(three_tier_build)
    paths = Counter()
    for probe in plan.probes:
        source, target = (plan.switches[plan.nodes[p].nics[0].leaf].pod for p in (probe.source, probe.target))
        assert probe.path == (CROSS_POD if source != target else ("leaf", "spine", "leaf", "node")), probe
        paths[probe.path] += 1
    # one unit per pod: every same-rail probe and half the other-rail ones cross pods
    assert paths == {CROSS_POD: 48, ("leaf", "spine", "leaf", "node"): 16}


def test_3_tier_widths_under_a_core_or_spine_failure(three_tier_build: Path):
    """Spine k of each pod reaches the other pod only through core k (8 parallel links); with core 1
    down, spine 1 of each pod loses the other pod and its leaves keep one way there."""
    plan = read_plan(three_tier_build)
    pod1 = sorted(n for n, s in plan.switches.items() if s.role == "leaf" and s.pod == 1)
    pod2 = sorted(n for n, s in plan.switches.items() if s.role == "leaf" and s.pod == 2)
    intact = ecmp_widths(plan, set(), set())
    assert {intact["be-su01-leaf1"][leaf] for leaf in pod1[1:] + pod2} == {2}
    assert {intact["be-spine01"][leaf] for leaf in pod1} == {1} and {intact["be-spine01"][leaf] for leaf in pod2} == {8}
    assert set(intact["be-core01"].values()) == {8}

    def without(device: str) -> dict[str, dict[str, int]]:
        return ecmp_widths(plan, {link.cable for link in plan.links_of(device)}, {device})

    core_down = without("be-core01")
    assert "be-core01" not in core_down
    assert {core_down["be-spine01"][leaf] for leaf in pod2} == {0} and {core_down["be-spine03"][leaf] for leaf in pod1} == {0}
    assert {core_down["be-su01-leaf1"][leaf] for leaf in pod2} == {1} and {core_down["be-su01-leaf1"][leaf] for leaf in pod1[1:]} == {2}
    spine_down = without("be-spine01")
    # core 1 hears of pod 1 only from spine 1, so spine 3 of pod 2 loses pod 1 as well
    assert {spine_down["be-core01"][leaf] for leaf in pod1} == {0} and {spine_down["be-spine03"][leaf] for leaf in pod1} == {0}
    assert {spine_down["be-su02-leaf1"][leaf] for leaf in pod1} == {1} and {spine_down["be-su02-leaf1"][leaf] for leaf in pod2[1:]} == {2}


def test_3_tier_leaf_asns_reused_per_pod_need_allowas_in(write_intent, tmp_path: Path):
    """asn: leaves: per-pod gives leaf n of every pod the same ASN: only allowas-in on the leaves
    lets them hear of each other."""
    text = THREE_TIER_INTENT.read_text() + "  asn: {leaves: per-pod}\n"
    build(write_intent(text, name="per-pod"), tmp_path / "per-pod")
    plan = read_plan(tmp_path / "per-pod")
    first, twin = plan.switches["be-su01-leaf1"], plan.switches["be-su02-leaf1"]
    assert first.asn == twin.asn and first.allowas_in == 1
    assert ecmp_widths(plan, set(), set())["be-su01-leaf1"]["be-su02-leaf1"] == 2
    strict = {name: replace(s, allowas_in=0) for name, s in plan.switches.items()}
    plan.switches = strict
    assert ecmp_widths(plan, set(), set())["be-su01-leaf1"]["be-su02-leaf1"] == 0


# --- keys (no root) ------------------------------------------------------------------------------

KEYED_LEAF = """router bgp 64513
 neighbor SPINES peer-group
 neighbor SPINES password <<secret:bgp-backend>>
 neighbor SPINES ttl-security hops 1
 neighbor 10.8.0.0 remote-as 64512
 neighbor 10.8.0.0 peer-group SPINES
 neighbor 10.9.0.0 remote-as 64600
 neighbor 10.9.0.0 password <<secret:bgp-core>>
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


def test_frr_check_accepts_keys_gtsm_policies_and_maximum_prefix_and_sees_which_peers_are_keyed():
    assert check_frr_conf(KEYED_LEAF, "frr.conf") == []
    # a member inherits its peer-group's key; a neighbour with its own password has one; the rest none
    assert _keyed_peers(KEYED_LEAF) == {"10.8.0.0", "10.9.0.0", "SPINES"}


def test_lab_keys_come_from_the_environment_else_are_generated_once_kept_private_and_filled_in(tmp_path: Path):
    plan = KeyedPlan({"leaf1": KEYED_LEAF, "leaf2": KEYED_LEAF.replace("64513", "64514")})
    directory = keys.private_directory(tmp_path / "lab" / "keys")
    first = keys.lab_keys(plan, directory, environ={env_name("bgp-backend"): "given-value-1"})
    assert first.generated == ("bgp-core",)
    values = first.secrets.values
    assert values["bgp-backend"] == "given-value-1"
    assert len(values["bgp-core"]) == 32 and values["bgp-core"].replace("-", "").replace("_", "").isalnum()
    keys.write_filled_configs(plan, first, directory)
    for name in plan.switches:
        filled = (directory / f"{name}.conf").read_text()
        # both switches carry the same generated value: both ends of a session must agree
        assert "password given-value-1" in filled and f"password {values['bgp-core']}" in filled and "<<secret:" not in filled
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir()} == {0o600}
    # the same lab keeps its keys: another environment later changes none of them
    again = keys.lab_keys(plan, directory, environ={env_name("bgp-backend"): "other-value"})
    assert again.secrets.values == values and again.generated == ()


def test_lab_refuses_an_md5_key_linux_cannot_take_without_showing_it(tmp_path: Path):
    plan = KeyedPlan({"leaf1": KEYED_LEAF})
    long_value = "k" * 81
    with pytest.raises(LabError) as refused:
        keys.lab_keys(plan, keys.private_directory(tmp_path / "keys"), environ={env_name("bgp-backend"): long_value})
    message = str(refused.value)
    assert "'bgp-backend'" in message and "81 characters" in message and "at most 80" in message
    assert long_value not in message
    assert not (tmp_path / "keys" / keys.KEYS_FILE).exists()


def test_every_fabric_session_of_the_lab_builds_has_a_key(lab_build: Path, three_tier_build: Path):
    """tests/lab/*.yaml set bgp_security: every switch's frr.conf or twin keys every session (the
    frr.conf template renders `neighbor GROUP password <<secret:NAME>>`), the spine-core tier of
    the 3-tier fabric with its own key."""
    two = read_plan(lab_build)
    assert two.sessions and all(s.keyed for s in two.sessions)
    assert keys.secret_names(two) == {"bgp-backend"}
    three = read_plan(three_tier_build)
    assert three.sessions and all(s.keyed for s in three.sessions)
    assert keys.secret_names(three) == {"bgp-backend", "bgp-core"}
    assert "password <<secret:bgp-core>>" in three.switches["be-core01"].frr_conf
    assert "password <<secret:bgp-core>>" not in three.switches["be-su01-leaf1"].frr_conf


# --- bad input -----------------------------------------------------------------------------------


@needs_lab
def test_missing_incomplete_and_foreign_build_directories_are_refused(lab_build: Path, tmp_path: Path):
    missing = fabricgen("lab", "up", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr

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
    again = fabricgen("lab", "up", str(clean_lab))
    assert again.returncode == 2 and "already" in again.stderr and "lab down" in again.stderr
    down = fabricgen("lab", "down", str(clean_lab))
    assert down.returncode == 0, down.stderr
    assert leftovers(clean_lab) == []
    assert not [p for p in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout.splitlines() if f"fg{lab_id_of(clean_lab)}-" in p]


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
    # the leaf's kernel now reaches every other leaf through the one spine left: width 1, not 2
    routes = json.loads(subprocess.run(["ip", "-n", f"fg{plan.lab_id}-{leaf}", "-j", "route", "show", "proto", "bgp"], capture_output=True, text=True, check=False).stdout)
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
    result = session.check(build_dir, timeout=8)
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


@pytest.fixture(scope="module")
def planes_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    destination = tmp_path_factory.mktemp("lab") / "two-planes"
    build(PLANES_INTENT, destination)
    return destination


def ip_plan_rows(build_dir: Path, network: str) -> list[list[str]]:
    return [r for r in (line.split(",") for line in (build_dir / "ip-plan.csv").read_text().splitlines()[1:]) if r[0] == network]


@pytest.mark.parametrize("intent", ["cisco-256-gpu", "cisco-512-gpu"])
def test_a_converged_frontend_plans_every_server_and_runs_storage_appliances_from_their_twin(intent: str, tmp_path: Path):
    """The shipped intents' frontend (storage converged): the ONTAP storage nodes have no netplan
    (a settings sheet instead), so the lab runs them from lab/hosts/<node>/netplan.yaml with the
    addresses of the IP plan; each leaf's remote prefix is the aggregate it announces."""
    build(REPO / "intents" / f"{intent}.yaml", tmp_path / intent)
    plan = read_plan(tmp_path / intent, "frontend")
    rows = [line.split(",") for line in (tmp_path / intent / "cabling.csv").read_text().splitlines()[1:]]
    assert sorted(link.cable for link in plan.links) == sorted(r[0] for r in rows if r[1] == "frontend")
    roles = Counter(node.role for node in plan.nodes.values())
    assert roles == {"gpu-node": {"cisco-256-gpu": 32, "cisco-512-gpu": 64}[intent], "storage-node": 4, "management-node": 8}
    storage = plan.nodes["storage01"]
    assert not (tmp_path / intent / "hosts" / "storage01" / "netplan.yaml").exists()
    assert "twin of an appliance" in (tmp_path / intent / "lab" / "hosts" / "storage01" / "netplan.yaml").read_text()
    planned = {(r[1], r[2]): r[3] for r in ip_plan_rows(tmp_path / intent, "frontend")}
    assert [(nic.port, nic.address) for nic in storage.nics] == [(p, planned[("storage01", p)]) for p in ("e1a", "e2a")]
    assert len({nic.leaf for nic in storage.nics}) == 2  # a leaf pair
    # a rule and a table per port, as on the appliance's settings sheet
    assert [(r.source, r.table) for r in storage.rules] == [(f"{nic.address.split('/')[0]}/32", 200 + i) for i, nic in enumerate(storage.nics, start=1)]
    # every leaf announces one aggregate (summary-only in its config), which the ECMP check expects
    for name, blocks in plan.host_blocks.items():
        assert len(blocks) == 1 and f"aggregate-address {blocks[0]} summary-only" in plan.switches[name].frr_conf, name
    assert plan.sessions and all(s.keyed for s in plan.sessions)
    assert {p.path for p in plan.probes} <= {("leaf", "node"), ("leaf", "spine", "leaf", "node")}
    assert any(p.source.startswith("storage") or p.target.startswith("storage") for p in plan.probes)
    assert all(p.reach for p in plan.probes)


def test_a_separate_storage_fabric_plans_its_appliances_and_the_gpu_nodes_storage_ports(tmp_path: Path):
    build(FRONTEND_INTENT, tmp_path / "frontend")
    plan = read_plan(tmp_path / "frontend", "storage")
    assert Counter(node.role for node in plan.nodes.values()) == {"gpu-node": 4, "storage-node": 2}
    assert all(len(node.nics) == 2 for node in plan.nodes.values())
    assert Counter(s.role for s in plan.switches.values()) == {"leaf": 2, "spine": 2}
    frontend = read_plan(tmp_path / "frontend", "frontend")
    assert Counter(node.role for node in frontend.nodes.values()) == {"gpu-node": 4, "management-node": 1}


def test_planes_are_islands_probes_between_them_must_not_arrive_and_widths_stay_in_the_plane(planes_build: Path):
    plan = read_plan(planes_build)
    assert Counter((s.role, s.plane) for s in plan.switches.values()) == {("leaf", 1): 8, ("leaf", 2): 8, ("spine", 1): 2, ("spine", 2): 2}
    assert {plan.component[name] for name, s in plan.switches.items() if s.plane == 1} != {plan.component[name] for name, s in plan.switches.items() if s.plane == 2}
    assert len({plan.component[name] for name, s in plan.switches.items() if s.plane == 1}) == 1
    widths = ecmp_widths(plan, set(), set())
    for name, switch in plan.switches.items():
        if switch.role != "leaf":
            continue
        same = {widths[name][o] for o, other in plan.switches.items() if other.role == "leaf" and o != name and other.plane == switch.plane}
        across = {widths[name][o] for o, other in plan.switches.items() if other.role == "leaf" and other.plane != switch.plane}
        assert same == {2} and across == {0}, name
    kinds = Counter((p.kind, p.reach) for p in plan.probes)
    assert kinds == {("same rail, other unit", True): 32, ("other rail", True): 32, ("other plane", False): 4}
    for probe in plan.probes:
        source, target = (plan.switches[next(n.leaf for n in plan.nodes[p].nics if n.port == nic)] for p, nic in ((probe.source, probe.source_nic), (probe.target, probe.target_nic)))
        assert (source.plane == target.plane) == probe.reach and (probe.path == ()) == (not probe.reach), probe
    # a spine of plane 1 down: plane 1's leaves keep one way to each other, plane 2 keeps two
    spine = "be-spine01"
    cut = ecmp_widths(plan, {link.cable for link in plan.links_of(spine)}, {spine})
    assert {cut["be-su01-leaf1"][o] for o in ("be-su01-leaf2", "be-su02-leaf1")} == {1}
    assert {cut["be-su01-leaf5"][o] for o in ("be-su01-leaf6", "be-su02-leaf5")} == {2}


def _without_spines(plan):
    """The plan as a rail-only fabric with no spine tier: every leaf alone, no fabric link."""
    switches = {n: s for n, s in plan.switches.items() if s.role == "leaf"}
    links = [link for link in plan.links if link.kind == "host"]
    bare = LabPlan(
        plan.build_dir, plan.lab_id, plan.network, plan.fabric, switches, plan.nodes, links, [], plan.host_blocks,
        {name: [] for name in switches}, plan.address_owner, [], "rail-only", _components(switches, links),
    )
    bare.probes = _probes(bare, {})
    return bare


def test_a_leaf_with_no_uplinks_expects_no_session_no_route_and_no_answer_from_other_rails(lab_build: Path):
    """Rail-only with one leaf per rail (no spines): the lab expects no BGP session, ECMP width 0
    to every other leaf, probes on one rail's leaf to arrive and probes to other rails to get no
    answer; `lab run` has no uplink or spine to fail."""
    bare = _without_spines(read_plan(lab_build))
    assert len(set(bare.component.values())) == len(bare.switches)
    assert {w for by_leaf in ecmp_widths(bare, set(), set()).values() for w in by_leaf.values()} == {0}
    for probe in bare.probes:
        leaves = {n.leaf for p, nic in ((probe.source, probe.source_nic), (probe.target, probe.target_nic)) for n in bare.nodes[p].nics if n.port == nic}
        assert probe.reach == (len(leaves) == 1) and probe.path == (("leaf", "node") if probe.reach else ()), probe
    # one leaf per rail and unit here: every probe leaves its leaf, so none may arrive
    assert Counter(p.reach for p in bare.probes) == {False: 64}
    assert session.failure_rounds(bare) == []
    full = read_plan(lab_build)
    assert [name for name, *_ in session.failure_rounds(full)] == [f"be-su01-leaf1:{full.uplinks['be-su01-leaf1'][0].end('be-su01-leaf1').port} failed silently", "be-spine01 down"]


def test_a_leaf_serving_several_rails_reads_them_from_topology_json_else_its_one_rail():
    from types import SimpleNamespace

    assert _rails(SimpleNamespace(rails=[1, 2, 3, 4], rail=1)) == (1, 2, 3, 4)
    assert _rails(SimpleNamespace(rail=3)) == (3,)
    assert _rails(SimpleNamespace(rail=None)) == ()


def test_announced_prefixes_follow_the_leaf_aggregates():
    server = [netaddr.IPNetwork(f"10.20.0.{64 + 2 * i}/31") for i in range(28)]  # 28 ports of a /26
    assert _announced(" aggregate-address 10.20.0.64/26 summary-only\n", server) == ("10.20.0.64/26",)
    assert _announced("", server) == ("10.20.0.64/27", "10.20.0.96/28", "10.20.0.112/29")
    assert _announced(" aggregate-address 10.20.0.64/26\n", server) == ("10.20.0.64/26", "10.20.0.64/27", "10.20.0.96/28", "10.20.0.112/29")


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


def test_up_names_the_servers_by_role_the_design_and_the_rails_a_leaf_shares(lab_build: Path):
    from fabricgen.lab import report

    plan = read_plan(lab_build)
    up = session.UpReport(plan, 1.0, True, 2.0, 54, 600.0, [])
    lines = report.up_lines(up)
    assert "18 switches, 4 GPU nodes, 64 links" in lines[0] and not any(line.startswith(("design:", "leaves serving")) for line in lines)
    plan.design = "rail-only"
    plan.switches = {n: replace(s, rails=(1, 2, 3, 4)) if n == "be-su01-leaf1" else s for n, s in plan.switches.items()}
    plan.nodes = {n: replace(node, role="storage-node") if n == "gpu0004" else node for n, node in plan.nodes.items()}
    lines = report.up_lines(up)
    assert "18 switches, 4 servers (3 GPU nodes, 1 storage node), 64 links" in lines[0]
    assert "design: rail-only" in lines and "leaves serving several rails: rails 1, 2, 3, 4" in lines


# --- the rail designs -----------------------------------------------------------------------------

RAIL_DESIGNS = {
    # multi-plane NICs: port p of every ConnectX-8 on plane p, the planes meet only in the nodes
    "multi-plane-nics": (REPO / "tests" / "lab" / "multi-plane-nics.yaml", [
        "plane 1: width 4 between its leaves, 0 routes to other planes (0 planned)",
        "plane 2: width 4 between its leaves, 0 routes to other planes (0 planned)",
        "4/4 between leaves no fabric link joins",
    ]),
    # rail-only: one leaf per rail, no spines, no BGP session; rails reach each other only in the nodes
    "rail-only": (REPO / "tests" / "lab" / "rail-only.yaml", ["BGP sessions: PASS, 0/0", "64/64 between leaves no fabric link joins"]),
}


@needs_lab
@pytest.mark.parametrize("design", sorted(RAIL_DESIGNS))
def test_rail_designs_boot_and_verify(design: str, tmp_path: Path):
    """Each rail design comes up in the lab and verifies: sessions, widths and probes as its plan
    says, including probes that must go unanswered between planes or rail-only rails."""
    intent, expected = RAIL_DESIGNS[design]
    build_dir = tmp_path / design
    build(intent, build_dir)
    try:
        up = fabricgen("lab", "up", str(build_dir))
        assert up.returncode == 0, up.stdout + up.stderr
        verify = fabricgen("lab", "verify", str(build_dir))
        assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
        summary = " ".join(verify.stdout.split())
        for text in expected:
            assert text in summary, (text, summary[-3000:])
        if design == "multi-plane-nics":  # a spine of plane 1 down: plane 1 loses its 2 links to it, plane 2 nothing
            failed = fabricgen("lab", "fail", str(build_dir), "--device", "be-spine01")
            assert failed.returncode == 0 and "converged in" in failed.stdout, failed.stdout + failed.stderr
            verify = fabricgen("lab", "verify", str(build_dir))
            assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr
            summary = " ".join(verify.stdout.split())
            assert "plane 1: width 2 between its leaves" in summary and "plane 2: width 4 between its leaves" in summary
    finally:
        fabricgen("lab", "down", str(build_dir))
    assert leftovers(build_dir) == []


@needs_lab
def test_run_of_the_shipped_32_gpu_pod_is_one_report_with_a_failure_round(tmp_path: Path):
    """`lab run` on intents/small-32-gpu.yaml as shipped (2 leaves of 4 rails each, 16 uplinks per
    leaf over 2 spines): up, verify, a silent uplink failure and a spine down, each restored, down;
    one report."""
    build_dir = tmp_path / "small-32-gpu"
    build(REPO / "intents" / "small-32-gpu.yaml", build_dir)
    report = tmp_path / "lab.md"
    result = fabricgen("lab", "run", str(build_dir), "--report", str(report))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    text = report.read_text()
    assert "result: **PASS**" in text
    assert "64/64 expected sessions Established" in text and "64/64 probes reached their target" in text
    assert "## be-su01-leaf1:Ethernet" in text and "failed silently" in text
    assert "## be-spine01 down" in text and "be-spine01 down, restored" in text
    # with a spine down (its own 16 sessions gone with its FRR), the leaves lose their 16 to it
    spine_round = text.split("\n## be-spine01 down\n")[1].split("\n## ")[0]
    assert "32/32 expected sessions Established; 16 lost to the applied failures" in spine_round
    assert leftovers(build_dir) == []
