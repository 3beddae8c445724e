"""The lab on this machine: namespaces, veth pairs, addresses, FRR and lldpd daemons, and their removal.

Everything the lab creates is recorded in its state file before it is created (write-ahead), so
`down` removes exactly that, also after a crash or a failed `up`; every name and path of it is
derived from the lab id, and the file is read as hostile input (`fabricgen.lab.state`). The FRR
configs the daemons read carry the BGP keys (`fabricgen.lab.keys`): they live in the lab's
private key directory (0700, files 0600), never in FRR's run directory, and go with `down`. The
host's own network namespace is never changed: veth pairs are created directly inside their
namespaces (`ip link add ... netns`), and every command that configures anything runs inside a
lab namespace.

Every namespace (switches and GPU nodes) runs Debian's lldpd on its planned ports, so LLDP in the
lab is real: each chassis advertises the device's name, each port its planned name (port ID subtype
local, and the same port description). Its control socket is `lldpd_socket(namespace)`; `lldpctl
-u SOCKET -f json` lists what the namespace sees.
"""

from __future__ import annotations

import grp
import os
import platform
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

from fabricgen.basics.errors import LabError, Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import BuildFiles
from fabricgen.build.secrets import Secrets
from fabricgen.compiler.design.graph import Network
from fabricgen.lab import keys, management
from fabricgen.lab.plan import LabNic, LabPlan, LabPort, Route, lab_id_of, read_plan
from fabricgen.lab.state import (
    LLDPD_RUN,
    LabFailure,
    LabState,
    ManagementEndpoint,
    endpoint_marker,
    frr_dir,
    keys_directory,
    lab_lock,
    load_state,
    management_directory,
    manifest_hash,
    state_directory,
)
from fabricgen.nos.interface import plugin

FRR_BIN = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bfdd", "bgpd")  # zebra first: the others connect to it
SWITCH_PORT_MTU = 9216  # what data-center switch ports run; the hosts' MTU comes from netplan
SWITCH_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    # as SONiC sets it (sonic-buildimage files/image_config/sysctl/sysctl-net.conf); without it FRR
    # shows `no ipv6 forwarding`, which no build holds
    "net.ipv6.conf.all.forwarding=1",
    "net.ipv4.fib_multipath_hash_policy=1",  # hash on L4 ports, as the fabric's ECMP does
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    "net.ipv4.icmp_ratelimit=0",  # traceroute probes every hop of hundreds of paths at once
    "net.ipv4.icmp_msgs_per_sec=100000",
    "net.ipv4.icmp_msgs_burst=10000",
    "net.ipv4.conf.all.ignore_routes_with_linkdown=1",  # a switch never forwards into a dark port
)
# Lab-only zebra setting, applied before the build's config: FRR 8.4 with kernel nexthop objects
# loses the members of a multipath group whose interface flapped and does not put them back
# (FRRouting/frr#14160); routes carry their next hops inline instead. Switch ASICs have their own
# next-hop groups, so this changes nothing the build decides.
ZEBRA_LAB_SETTINGS = ("no zebra nexthop kernel enable",)
NODE_SYSCTLS = (
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    "net.ipv4.icmp_ratelimit=0",
    "net.ipv4.icmp_msgs_per_sec=100000",  # traceroute's port-unreachable answers come in bursts
    "net.ipv4.icmp_msgs_burst=10000",
)
NFT_TABLE = "fabricgen_fail"
# lldpd: Debian's package (1.0.16 on bookworm). Its options and lldpcli's commands are from lldpd(8)
# and lldpcli(8) of that version.
LLDPD = Path("/usr/sbin/lldpd")
LLDPCLI = Path("/usr/sbin/lldpcli")
# lldpcli(8) `configure lldp tx-interval`: seconds (or "ms" suffixed), default 30; the daemon takes
# any value above 0 (lldpd src/lib/atoms/config.c, _lldpctl_atom_set_int_config). 1 s: a new or
# rewired neighbour shows within about a second. `tx-hold` 4 (the default) makes the TTL 4 s.
LLDP_TX_INTERVAL = 1
LLDP_TX_HOLD = 4
WORKERS = min(16, (os.cpu_count() or 2) * 4)  # subprocesses mostly wait on the kernel or FRR


def require_lab_host() -> None:
    """The lab needs Linux, root and the tools it drives; anything else is a clear error."""
    if platform.system() != "Linux":
        raise LabError(Problem(f"the lab runs on Linux only (this is {platform.system()})", hint="run it on a Linux machine or VM"))
    if os.geteuid() != 0:
        raise LabError(Problem("the lab needs root: it creates network namespaces and starts FRR", hint="run it with sudo"))
    missing = [tool for tool in ("ip", "vtysh") if shutil.which(tool) is None]
    missing += [str(FRR_BIN / d) for d in DAEMONS if not (FRR_BIN / d).exists()]
    missing += [f"{tool} (lldpd)" for tool in (LLDPD, LLDPCLI) if not tool.exists()]
    if missing:
        raise LabError(Problem(f"missing: {', '.join(missing)}", hint="install Debian's frr, lldpd and iproute2: apt-get install frr lldpd iproute2"))


# --- commands run inside a namespace -------------------------------------------------------------


def run(args: list[str], stdin: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    result = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise LabError(Problem(f"`{' '.join(args[:6])}{' ...' if len(args) > 6 else ''}` failed: {result.stderr.strip()[:500]}"))
    return result


def in_namespace(namespace: str, args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return run(["ip", "netns", "exec", namespace, *args], **kwargs)


def vtysh(namespace: str, command: str, timeout: float = 30) -> str:
    return run(["vtysh", "-N", namespace, "-c", command], timeout=timeout).stdout


def ip_batch(commands: Iterable[str], namespace: str | None = None) -> None:
    text = "\n".join(commands) + "\n"
    run(["ip", *(["-n", namespace] if namespace else []), "-batch", "-"], stdin=text)


def parallel(action: Callable, items: Iterable) -> list:
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(action, items))


# --- up ------------------------------------------------------------------------------------------


def lab_up(build_dir: Path, network: str = "backend", secrets_file: Path | None = None, with_management: bool = False) -> tuple[LabState, LabPlan]:
    """Build the lab of `network` from `build_dir`, its BGP keys from the environment or
    `secrets_file` (random where neither has one); `with_management`: a management endpoint per
    SONiC switch (`fabricgen.lab.management`). On any failure everything created so far is
    removed again before the error is raised."""
    require_lab_host()
    if with_management:
        management.require_tools()
    plan = read_plan(build_dir, network)
    _require_neighbor_room(plan)
    try:
        return _up_locked(build_dir, network, plan, secrets_file, with_management)
    except BaseException:
        if load_state(build_dir) is None:
            forget(plan.lab_id)
        raise


def _up_locked(build_dir: Path, network: str, plan: LabPlan, secrets_file: Path | None, with_management: bool) -> tuple[LabState, LabPlan]:
    with lab_lock(plan.lab_id):
        existing = load_state(build_dir)
        if existing is not None:
            what = "up" if existing.phase == "up" else f"left over ({existing.phase})"
            raise LabError(Problem(f"a lab is already {what} for {build_dir}", hint=f"fabricgen lab down {build_dir} first"))
        state = LabState(
            build_dir=str(build_dir.resolve()),
            lab_id=plan.lab_id,
            network=Network(network),
            manifest_sha256=manifest_hash(build_dir),
            interfaces={device: {port.port: port.ifname for port in plan.ports_of(device)} for device in (*plan.switches, *plan.nodes)},
            started=time.time(),
            management=with_management,
        )
        try:
            _create(plan, state, secrets_file)
            if with_management:
                _start_management(plan, state)
        except BaseException:
            _remove(state)
            raise
        state.phase = "up"
        state.up_seconds = time.time() - state.started
        state.save()
        return state, plan


def _require_neighbor_room(plan: LabPlan) -> None:
    """The kernel's ARP table is one table for all namespaces, capped by the host's gc_thresh3
    (1,024 by default): every veth end resolves its peer, so a large lab needs a larger cap. The lab
    does not change host settings; it says which one to change."""
    needed = 2 * len(plan.links) + 256  # both ends of every cable, plus EVPN's remote hosts and slack
    path = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
    limit = int(path.read_text()) if path.exists() else needed
    if needed > limit:
        raise LabError(
            Problem(
                f"this lab needs about {needed:,} ARP entries and the kernel keeps at most {limit:,} (for all namespaces together)",
                hint=f"raise the limit on this host: sysctl -w net.ipv4.neigh.default.gc_thresh3={needed} net.ipv4.neigh.default.gc_thresh2={needed}",
            )
        )


def _create(plan: LabPlan, state: LabState, secrets_file: Path | None) -> None:
    state.save()  # the key directory, named by the lab id, is removed by `down` from here on
    directory = keys.private_directory(state.keys_dir)
    lab_keys = keys.lab_keys(plan, directory, secrets_file)  # before anything is built: a bad value stops here
    keys.write_filled_configs(plan, lab_keys, directory)
    state.keys_generated = list(lab_keys.generated)
    state.keys_given = sorted(set(lab_keys.secrets.values) - set(lab_keys.generated))
    devices = [*plan.switches, *plan.nodes]
    state.namespaces = [plan.namespace(d) for d in devices]
    state.save()  # recorded before any exists
    ip_batch(f"netns add {ns}" for ns in state.namespaces)
    ip_batch(
        f"link add name {link.a.ifname} netns {plan.namespace(link.a.device)} type veth peer name {link.b.ifname} netns {plan.namespace(link.b.device)}"
        for link in plan.links
    )
    if any(s.vtep for s in plan.switches.values()) and not _kernel_has_vrf(state.namespaces[0]):
        state.notes.append("this kernel has no VRF support: tenant VRFs (L3 VNI routing) are not built")
    parallel(lambda d: _configure_switch(plan, d), plan.switches)
    parallel(lambda n: _configure_node(plan, n), plan.nodes)
    start_lldpd(plan, devices)
    _start_frr(plan, state, list(plan.switches))
    state.loaded_at = time.time()


def _kernel_has_vrf(namespace: str) -> bool:
    probe = run(["ip", "-n", namespace, "link", "add", "name", "fgvrfprobe", "type", "vrf", "table", "4242"], check=False)
    if probe.returncode == 0:
        run(["ip", "-n", namespace, "link", "del", "dev", "fgvrfprobe"], check=False)
    return probe.returncode == 0


def _configure_switch(plan: LabPlan, name: str) -> None:
    in_namespace(plan.namespace(name), ["sysctl", "-q", "-w", *SWITCH_SYSCTLS])
    ip_batch(switch_commands(plan, name), plan.namespace(name))


def switch_commands(plan: LabPlan, name: str) -> list[str]:
    """`ip -batch` lines that set a switch's interfaces up as the plan has them: the loopback
    addresses, a bridge (and under EVPN a VXLAN device) per server segment with its gateway, every
    cabled port. `fabricgen export containerlab` runs the same lines in its FRR nodes."""
    switch = plan.switches[name]
    commands = ["link set dev lo up"]
    commands += [f"address add {address} dev lo" for address in switch.loopbacks]
    bridged = {}
    for segment in switch.segments:
        bridge = f"br{segment.vlan}"
        commands.append(f"link add name {bridge} type bridge")
        commands.append(f"link set dev {bridge} mtu {SWITCH_PORT_MTU}")
        if segment.vni is not None and switch.vtep:
            vxlan = f"vx{segment.vni}"
            commands.append(f"link add name {vxlan} type vxlan id {segment.vni} local {switch.vtep} dstport 4789 nolearning")
            commands.append(f"link set dev {vxlan} master {bridge} mtu {SWITCH_PORT_MTU - 50}")
            commands.append(f"link set dev {vxlan} up")
        commands.append(f"address add {segment.gateway} dev {bridge}")
        commands.append(f"link set dev {bridge} up")
        bridged.update(dict.fromkeys(segment.members, bridge))
    for port in plan.ports_of(name):
        commands += switch_port_commands(port, bridged.get(port.port))
    return commands


def switch_port_commands(port: LabPort, bridge: str | None) -> list[str]:
    """`ip -batch` lines that set up one switch port: MTU, its bridge or its address, up."""
    commands = [f"link set dev {port.ifname} mtu {SWITCH_PORT_MTU}"]
    if bridge:
        commands.append(f"link set dev {port.ifname} master {bridge}")
    elif port.address:
        commands.append(f"address add {port.address} dev {port.ifname}")
    commands.append(f"link set dev {port.ifname} up")
    return commands


def port_commands(plan: LabPlan, device: str, port: LabPort) -> list[str]:
    """`ip -batch` lines that set up one port of `device` as `lab up` does, after its veth was
    (re)created: a switch port's MTU, bridge or address; a node NIC's MTU, address and the routes
    through it (the kernel drops a device's routes with the device; the policy rules stay)."""
    if device in plan.switches:
        bridge = next((f"br{s.vlan}" for s in plan.switches[device].segments if port.port in s.members), None)
        return switch_port_commands(port, bridge)
    node = plan.nodes[device]
    nic = next(n for n in node.nics if n.ifname == port.ifname)
    return _nic_commands(nic) + [_route_command(route) for route in node.routes if route.dev == nic.ifname]


def _configure_node(plan: LabPlan, name: str) -> None:
    in_namespace(plan.namespace(name), ["sysctl", "-q", "-w", *NODE_SYSCTLS])
    ip_batch(node_commands(plan, name), plan.namespace(name))


def node_commands(plan: LabPlan, name: str) -> list[str]:
    """`ip -batch` lines that set a server up as its netplan has it: every NIC's MTU and address,
    the routes (per-NIC tables included) and the policy rules."""
    node = plan.nodes[name]
    commands = ["link set dev lo up"]
    for nic in node.nics:
        commands += _nic_commands(nic)
    commands += [_route_command(route) for route in node.routes]
    commands += [f"rule add from {rule.source} table {rule.table} priority {rule.priority}" for rule in node.rules]
    return commands


def _nic_commands(nic: LabNic) -> list[str]:
    commands = [f"link set dev {nic.ifname} mtu {nic.mtu}"] if nic.mtu else []
    return [*commands, f"address add {nic.address} dev {nic.ifname}", f"link set dev {nic.ifname} up"]


def _route_command(route: Route, verb: str = "add") -> str:
    words = [f"route {verb} {route.to}"]
    if route.via:
        words.append(f"via {route.via}")
    words.append(f"dev {route.dev}")
    if route.scope:
        words.append(f"scope {route.scope}")
    if route.table:
        words.append(f"table {route.table}")
    if route.metric is not None:
        words.append(f"metric {route.metric}")
    return " ".join(words)


def _start_frr(plan: LabPlan, state: LabState, switches: list[str]) -> None:
    """FRR in each switch's namespace; their run directories are named by the namespaces, which
    the state recorded before they existed."""
    parallel(lambda name: _start_daemons(plan, name), switches)


def _start_daemons(plan: LabPlan, name: str) -> None:
    ns = plan.namespace(name)
    directory = frr_dir(ns)
    directory.mkdir(parents=True, exist_ok=True)
    if not directory.is_dir() or directory.is_symlink():
        # /var/run/frr is the frr user's: a link there must not make root chown its target
        raise LabError(Problem(f"{directory} is not a directory", device=name, hint=f"remove it: rm {directory}"))
    os.chown(directory, *_frr_owner(), follow_symlinks=False)
    config = keys_directory(plan.lab_id) / f"{name}.conf"  # the build's config with its keys (keys.write_filled_configs)
    for daemon in DAEMONS:
        # -N gives each instance its own sockets and pid files under /var/run/frr/<namespace>;
        # no TCP vty (-P 0); the configuration comes from vtysh below, as one integrated file.
        # Each in a UTS namespace named for the switch (a checked host name): FRR's daemons show the
        # host name they started with in the running config, and BGP sends it (hostname capability)
        daemon_command = [str(FRR_BIN / daemon), "-N", ns, "-d", "-f", "/dev/null", "-P", "0", "--log", f"file:{directory}/{daemon}.log"]
        in_namespace(ns, ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name, *daemon_command])
    _wait_for_sockets(directory)
    run(["vtysh", "-N", ns, "-c", "configure terminal", *(arg for s in ZEBRA_LAB_SETTINGS for arg in ("-c", s))])
    result = run(["vtysh", "-N", ns, "-f", str(config)], check=False, timeout=120)
    if result.returncode != 0:
        # vtysh quotes the line it refused, which may hold a key: masked before it is shown
        masked = Secrets(keys.read_keys(config.parent)).mask(result.stdout + result.stderr)
        errors = [line for line in masked.splitlines() if line.strip() and "vtysh.conf" not in line]
        raise LabError(
            Problem(
                f"FRR refused {plan.switches[name].frr_source}: {' '.join(errors)[:600]}",
                device=name,
                hint="run vtysh --dryrun -f on it; report a fabricgen bug",
            )
        )


def _frr_owner() -> tuple[int, int]:
    return pwd.getpwnam("frr").pw_uid, grp.getgrnam("frr").gr_gid


def _wait_for_sockets(directory: Path, timeout: float = 20) -> None:
    _wait_for(lambda: all((directory / f"{d}.vty").exists() for d in DAEMONS), f"FRR did not start in {directory} (see its *.log files)", timeout)


# --- management endpoints ------------------------------------------------------------------------


def _start_management(plan: LabPlan, state: LabState) -> None:
    """A management endpoint for each switch whose NOS has a LAB_ENDPOINT part (SONiC), recorded in the state before any starts; the
    others are refused (a note says why). Then the lab's password (0600), the inventory and the
    known_hosts file, all in the lab's management directory."""
    build = BuildFiles(Path(state.build_dir), LabError)
    nodes = {node.id: node for node in build.topology().nodes}
    directory = keys.private_directory(management_directory(state.lab_id))
    chosen, refused = management.endpoint_switches({name: str(nodes[name].nos) for name in sorted(plan.switches, key=natural_key)})
    state.endpoints = [ManagementEndpoint(device=name, port=port) for name, port in zip(chosen, management.free_ports(len(chosen)), strict=True)]
    state.save()  # before any endpoint exists: `down` looks for them from here on
    password = management.new_password()
    keys.write_private(directory / management.PASSWORD_FILE, password + "\n")
    root_hash = management.password_hash(password)

    def start(entry: ManagementEndpoint) -> management.Endpoint:
        name, namespace, nos = entry.device, plan.namespace(entry.device), str(nodes[entry.device].nos)
        paths = plugin(nos).config_files(name)
        try:
            config_files = management.parts(nos).config_files({path.rsplit("/", 1)[-1]: build.bytes(path) for path in paths}, plan.switches[name].frr_conf)
        except ValueError as exc:
            raise LabError(Problem(str(exc), file=str(build.root / paths[0]))) from None
        return management.start_endpoint(
            name,
            namespace,
            directory / name,
            endpoint_marker(state.lab_id, name),
            port=entry.port,
            root_hash=root_hash,
            nos=nos,
            config_files=config_files,
            ports={port.port: port.ifname for port in plan.ports_of(name)},
            image=nodes[name].boot_image,
            frr_dir=frr_dir(namespace),
            lldpd_socket=lldpd_socket(namespace),
        )

    endpoints = parallel(start, state.endpoints)
    for entry, endpoint in zip(state.endpoints, endpoints, strict=True):
        entry.pid = endpoint.pid
    options = {key: value for name in chosen for key, value in management.parts(str(nodes[name].nos)).INVENTORY_OPTIONS.items()}
    management.write_lab_files(directory, state.lab_id, endpoints, refused, options)
    # short: a state note is one line of at most 240 characters (trust.Text); the inventory says why in full
    state.notes += [f"{name}: no management endpoint (the lab runs an FRR twin of its {nodes[name].nos} config)" for name in refused]


def _stop_management(state: LabState) -> None:
    """Every endpoint process of this lab (found by its marker, so also those a crash left
    unrecorded), then the management directory."""
    if state.management:
        management.stop_endpoints(prefix=endpoint_marker(state.lab_id, ""))
    shutil.rmtree(management_directory(state.lab_id), ignore_errors=True)  # a link there is not followed


# --- lldpd ---------------------------------------------------------------------------------------


def lldpd_socket(namespace: str) -> Path:
    """The control socket of the namespace's lldpd (`lldpctl -u` / `lldpcli -u` it). A namespace
    name is at most 72 characters (fg, the lab id, a hostname), so the path stays within a Unix
    socket's 108 bytes (lldpd src/lldpd.h UNIX_PATH_MAX)."""
    return LLDPD_RUN / f"{namespace}.socket"


def lldpd_files(namespace: str) -> list[Path]:
    """Every file a namespace's lldpd has: its socket and the lock lldpd keeps beside it (both gone
    when it stops), its pid file (left behind by lldpd) and its start-up config."""
    socket = lldpd_socket(namespace)
    return [socket, socket.with_name(socket.name + ".lock"), LLDPD_RUN / f"{namespace}.pid", LLDPD_RUN / f"{namespace}.conf"]


def lldp_port_command(port: LabPort) -> str:
    """lldpcli(8): `configure [ports ethX [,...]] lldp portidsubtype local value` and, in the same
    command, the port description (lldpd src/client/conf-lldp.c, cmd_portid_type_local, sets
    both): the port advertises its planned name, not its MAC address and kernel name."""
    return f"configure ports {port.ifname} lldp portidsubtype local {port.port} description {port.port}"


def lldpd_config(plan: LabPlan, device: str) -> str:
    """The lldpcli commands the device's lldpd runs at start (`lldpd -O`): the chassis' system name
    is the device's, its ports advertise their planned names, fast transmission, and the port
    settings kept when a port is deleted and created again (a rewired cable)."""
    ports = plan.ports_of(device)
    lines = [
        f"configure system hostname {device}",  # lldpcli(8): overrides the node name as the system name
        f"configure lldp tx-interval {LLDP_TX_INTERVAL}",
        f"configure lldp tx-hold {LLDP_TX_HOLD}",
    ]
    if ports:
        # lldpcli(8) `configure system interface permanent`: without it lldpd forgets a removed
        # interface's custom settings (checked: a re-created veth advertised its MAC again)
        lines.append(f"configure system interface permanent {','.join(p.ifname for p in ports)}")
    lines += [lldp_port_command(port) for port in ports]
    return "\n".join(lines) + "\n"


def start_lldpd(plan: LabPlan, devices: list[str]) -> None:
    """One lldpd in each device's namespace, on its planned ports only (not lo), its socket at
    `lldpd_socket`. The daemons start paused until lldpcli has run their config (lldpd(8) -O and
    FILES), so the first frame already carries the planned names."""
    LLDPD_RUN.mkdir(parents=True, exist_ok=True)
    parallel(lambda device: _start_one_lldpd(plan, device), devices)
    _wait_for(lambda: all(lldpd_socket(plan.namespace(d)).exists() for d in devices), f"lldpd did not start (no socket in {LLDPD_RUN})")


def _start_one_lldpd(plan: LabPlan, device: str) -> None:
    ns = plan.namespace(device)
    socket, _, pid_file, config = lldpd_files(ns)
    ports = plan.ports_of(device)
    config.write_text(lldpd_config(plan, device))
    for stale in (socket, pid_file):
        stale.unlink(missing_ok=True)  # a device restarted after `lab fail --device`
    # lldpd(8): -u control socket, -p pid file, -I the interfaces to use (an exact name passes
    # lldpd's own tests for a physical port: veths do), -O the lldpcli config to run at start
    args = [str(LLDPD), "-u", str(socket), "-p", str(pid_file), "-O", str(config)]
    if ports:
        args += ["-I", ",".join(p.ifname for p in ports)]
    in_namespace(ns, args)


def lldpcli(namespace: str, command: str) -> str:
    """One lldpcli command against the namespace's lldpd (its words come from the checked plan)."""
    return run([str(LLDPCLI), "-u", str(lldpd_socket(namespace)), *command.split()]).stdout


def _wait_for(ready: Callable[[], bool], message: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise LabError(Problem(message))
        time.sleep(0.02)


def _remove_lldpd_files(namespaces: list[str]) -> None:
    for ns in namespaces:
        for path in lldpd_files(ns):
            path.unlink(missing_ok=True)
    # LLDPD_RUN itself stays (an empty directory on tmpfs): another lab may be between making it
    # and its first lldpd's socket, and removing it there would fail that lab's up


# --- down ----------------------------------------------------------------------------------------


def lab_down(build_dir: Path) -> LabState | None:
    """Remove everything the lab of `build_dir` created; None when there was no lab. A state file
    this lab did not write is a LabError, and then nothing is removed."""
    require_lab_host()
    lab_id = lab_id_of(build_dir)
    with lab_lock(lab_id):
        state = load_state(build_dir)
        if state is not None:
            _remove(state)
    forget(lab_id)
    return state


def forget(lab_id: str) -> None:
    """The lab's state directory. The state root stays, empty or not: another lab's up may be
    making its own directory under it at this moment (labs of different builds run side by side)."""
    shutil.rmtree(state_directory(lab_id), ignore_errors=True)  # a link there is not followed


def _remove(state: LabState) -> None:
    """The management endpoints' processes (`up --management`), then the processes in the lab's
    namespaces (FRR, lldpd), then the namespaces (their veths go with
    them), then FRR's run directories and lldpd's files, then the keys and the state. Every name
    is this lab's: `fg<lab id>-<device>` (load_state refuses a file naming another), the paths
    derived from them and from the lab id. Each step tolerates what is already gone."""
    stopped = False
    try:
        _stop_management(state)  # first: its sessions drive the switches' FRR
        stopped = True
    finally:  # an endpoint process that would not end is reported after everything else went; the state stays for another `down`
        existing = set(run(["ip", "netns", "list"], check=False).stdout.split())
        namespaces = [ns for ns in state.namespaces if ns in existing]
        stop_processes(namespaces)
        if namespaces:
            run(["ip", "-force", "-batch", "-"], stdin="".join(f"netns delete {ns}\n" for ns in namespaces), check=False)
        for ns in state.namespaces:
            shutil.rmtree(frr_dir(ns), ignore_errors=True)  # none for a node; a link is not followed
        _remove_lldpd_files(state.namespaces)
        shutil.rmtree(state.keys_dir, ignore_errors=True)
        if stopped:
            state.path.unlink(missing_ok=True)


def namespace_pids(namespace: str) -> list[int]:
    result = run(["ip", "netns", "pids", namespace], check=False)
    return [int(pid) for pid in result.stdout.split()] if result.returncode == 0 else []


def stop_processes(namespaces: list[str], grace: float = 3.0) -> None:
    """Every process inside `namespaces` (only lab processes live there): TERM, then KILL after
    `grace` seconds; with no grace, KILL at once (a power-off: no BGP notification is sent)."""
    pids = [pid for pids in parallel(namespace_pids, namespaces) for pid in pids]
    for pid in pids:
        _signal(pid, signal.SIGTERM if grace else signal.SIGKILL)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        time.sleep(0.05)
    for pid in pids:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, sig)


# --- failures ------------------------------------------------------------------------------------


def apply_failure(plan: LabPlan, state: LabState, failure: LabFailure) -> None:
    """Fail a cable or a device of `plan` (`failure` names one of its cables or devices)."""
    if failure.kind == "link":
        link = next(l for l in plan.links if l.cable == failure.cable)
        for end in (link.a, link.b):
            ns = plan.namespace(end.device)
            if failure.how == "silent":
                # frames vanish on both ends while carrier stays up: only BFD (or BGP's hold timer) notices
                rules = f'table netdev {NFT_TABLE} {{ chain {_drop_chain(end.ifname)} {{ type filter hook ingress device "{end.ifname}" priority -500; policy drop; }}; }}'
                in_namespace(ns, ["nft", "-f", "-"], stdin=rules)
            else:
                ip_batch([f"link set dev {end.ifname} down"], ns)
    else:
        name = failure.device
        assert name is not None  # a device failure names its device (LabFailure)
        ns = plan.namespace(name)
        stop_processes([ns], grace=0)  # power off: no graceful BGP notification
        ip_batch([f"link set dev {port.ifname} down" for port in plan.ports_of(name)], ns)
    state.failures.append(failure)
    state.save()


def undo_failure(plan: LabPlan, state: LabState, failure: LabFailure) -> None:
    """Undo a failure `apply_failure` applied."""
    if failure.kind == "link":
        link = next(l for l in plan.links if l.cable == failure.cable)
        for end in (link.a, link.b):
            ns = plan.namespace(end.device)
            if failure.how == "silent":
                in_namespace(ns, ["nft", "delete", "chain", "netdev", NFT_TABLE, _drop_chain(end.ifname)])
            else:
                ip_batch([f"link set dev {end.ifname} up", *node_routes_again(plan, end.device, [end.ifname])], ns)
    else:
        name = failure.device
        assert name is not None
        ns = plan.namespace(name)
        ports = [port.ifname for port in plan.ports_of(name)]
        ip_batch([*(f"link set dev {ifname} up" for ifname in ports), *node_routes_again(plan, name, ports)], ns)
        start_lldpd(plan, [name])  # powered on again: its lldpd went with the power
        if name in plan.switches:
            for stale in frr_dir(ns).glob("*.vty"):
                stale.unlink()
            _start_daemons(plan, name)
    state.failures.remove(failure)
    state.loaded_at = time.time()
    state.save()


def node_routes_again(plan: LabPlan, device: str, ifnames: list[str]) -> list[str]:
    """`ip -batch` lines that put back a node's routes through `ifnames` after those links were
    down (the kernel removes a route whose device goes down; a switch's come back from FRR)."""
    if device not in plan.nodes:
        return []
    return [_route_command(route, "replace") for route in plan.nodes[device].routes if route.dev in ifnames]


def _drop_chain(ifname: str) -> str:
    return "drop_" + ifname.replace("-", "_").replace(".", "_")
