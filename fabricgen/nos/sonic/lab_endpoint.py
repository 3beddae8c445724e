"""SONiC's part of a lab switch's management endpoint (`fabricgen lab up --management`,
fabricgen/lab/management.py): what only SONiC has, so the endpoint answers fabricgen's SONiC
driver (driver.py) from the lab switch's real FRR, kernel and lldpd.

sonic-utilities (`config`, `show`, `sonic-installer`) and SONiC's redis (`sonic-db-cli`) cannot be
installed outside a SONiC image, so PROGRAMS are put first on the endpoint's sshd's PATH
(/usr/local/bin). They answer exactly the commands the driver sends and nothing else, loudly.
Everything else the driver runs is real: vtysh and frr-reload.py drive the switch's FRR, `lldpctl
-f json` is its lldpd, the state answers come from its kernel.

Inside the endpoint's mount namespace CONFIG_DIR (/etc/sonic) holds the running and saved
config_db and frr.conf (`config_files`), and the endpoint's own directory is ENDPOINT_MOUNT, where
the scripts keep
- `record.jsonl`: every invocation's argv (what a push ran: the lab's audit trail);
- `control/`: `image` (what `sonic-installer list` reports), `namespace` and `ports.json` (build
  port -> kernel interface, read by the state answers), and one-shot rehearsal faults: a file
  `fail-VERB` makes the next `config VERB` fail, `answer-PROGRAM` is the next answer of `show
  interfaces ...` or `sonic-db-cli`.
The scripts are written with fixed paths, never formatted with a value from outside.
They run with `python3 -IS` (isolated, no site module): the standard library only, no
PYTHON* variable or .pth file of the host's, and a third less CPU per start (docs.python.org,
"Command line and environment": -I, -S); verify runs a dozen of them per device.
"""

from __future__ import annotations

import json

ENDPOINT_MOUNT = "/etc/fabricgen-endpoint"

# One script for `config`, `show` and `sonic-installer`: the program name says which.
SONIC_UTILITIES = r'''#!/usr/bin/python3 -IS
"""fabricgen lab: sonic-utilities' config/show/sonic-installer, as far as fabricgen's driver uses them."""
import json, os, shutil, sys

ENDPOINT = "@ENDPOINT@"
RECORD, CONTROL = ENDPOINT + "/record.jsonl", ENDPOINT + "/control"
SONIC = "/etc/sonic"
RUNNING = SONIC + "/running_config_db.json"  # what redis' CONFIG_DB holds on a real switch
SAVED = SONIC + "/config_db.json"
CHECKPOINTS = SONIC + "/checkpoints"
program, args = os.path.basename(sys.argv[0]), sys.argv[1:]
with open(RECORD, "a") as record:
    record.write(json.dumps([program, *args]) + "\n")


def fail(message):
    print(f"{program}: {message}", file=sys.stderr)
    sys.exit(1)


if program == "sonic-installer":
    # sonic-utilities sonic_installer/main.py list_command: Current, Next, Available and the images
    if args != ["list"]:
        fail(f"the lab knows only `sonic-installer list`, not {args}")
    image = open(os.path.join(CONTROL, "image")).read().strip()
    print(f"Current: {image}\nNext: {image}\nAvailable: \n{image}")
    sys.exit(0)
if program == "show":
    if args in (["interfaces", "status"], ["interfaces", "description"]):
        state = "/usr/local/bin/fabricgen-sonic-state"  # recorded above already
        os.execve(state, [state, *args], {**os.environ, "FABRICGEN_STAND_IN": "show"})
    if args != ["runningconfiguration", "all"]:
        fail(f"the lab knows only `show runningconfiguration all` and `show interfaces status|description`, not {args}")
    print(open(RUNNING).read())
    sys.exit(0)
verb = args[0] if args else ""
injected = os.path.join(CONTROL, "fail-" + verb)
if os.path.exists(injected):
    os.unlink(injected)
    fail(f"{verb} failed (a fault injected into the lab)")
if verb == "checkpoint" and len(args) == 2:
    os.makedirs(CHECKPOINTS, exist_ok=True)
    shutil.copyfile(RUNNING, f"{CHECKPOINTS}/{args[1]}.cp.json")
elif verb == "replace" and len(args) == 2:
    try:
        config = json.load(open(args[1]))
    except ValueError as exc:
        fail(f"{args[1]} is not JSON: {exc}")
    with open(RUNNING + ".new", "w") as running:
        json.dump(config, running, indent=4, sort_keys=True)
    os.replace(RUNNING + ".new", RUNNING)
elif verb == "rollback" and len(args) == 2:
    checkpoint = f"{CHECKPOINTS}/{args[1]}.cp.json"
    if not os.path.exists(checkpoint):
        fail(f"no checkpoint {args[1]}")
    shutil.copyfile(checkpoint, RUNNING)
elif args == ["save", "-y"]:
    shutil.copyfile(RUNNING, SAVED)
else:
    fail(f"the lab does not know `config {' '.join(args)}`")
'''.replace("@ENDPOINT@", ENDPOINT_MOUNT)

# The read-only state SONiC keeps in redis and shows through sonic-utilities, made from the lab
# switch's kernel (`ip -j -s link` in its namespace) and the endpoint's running config_db:
# - `show interfaces status` / `show interfaces description`: intfutil's tables (scripts/intfutil,
#   tabulate "simple", right-aligned): lanes, speed, FEC, alias and description from the PORT table,
#   MTU, admin state (the interface's UP flag) and oper state (LOWER_UP) from the kernel;
# - `sonic-db-cli COUNTERS_DB EVAL <the driver's name-map script> 0 MAP FIELD...`: COUNTERS_DB as
#   the Lua script would read it, answered as the JSON text the script returns. Port counters are
#   the kernel's: octets, packets, errors, drops (the kernel splits off multicast on receive only;
#   broadcast is 0). PFC frames are 0 and queues keep no watchdog or ECN counter: veths have no
#   PFC, no queues and no watchdog; a real switch's SAI keeps them;
# - `sonic-db-cli STATE_DB EVAL <the driver's table script> 0 'TRANSCEIVER_DOM_SENSOR|*'`: {} (no optics).
SONIC_STATE = r'''#!/usr/bin/python3 -IS
"""fabricgen lab: `show interfaces status|description` and sonic-db-cli, from the switch's kernel."""
import json, os, re, subprocess, sys

ENDPOINT = "@ENDPOINT@"
RECORD, CONTROL = ENDPOINT + "/record.jsonl", ENDPOINT + "/control"
program, args = os.environ.get("FABRICGEN_STAND_IN") or os.path.basename(sys.argv[0]), sys.argv[1:]
if program != "show":  # the `show` script recorded it before handing over
    with open(RECORD, "a") as record:
        record.write(json.dumps([program, *args]) + "\n")


def fail(message):
    print(f"{program}: {message}", file=sys.stderr)
    sys.exit(1)


injected = os.path.join(CONTROL, "answer-" + program)
if os.path.exists(injected):  # a rehearsal's answer instead, once
    text = open(injected).read()
    os.unlink(injected)
    print(text)
    sys.exit(0)


def natural(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


ports = json.load(open(os.path.join(CONTROL, "ports.json")))  # build port -> kernel interface
namespace = open(os.path.join(CONTROL, "namespace")).read().strip()
config_db = json.load(open("/etc/sonic/running_config_db.json"))
port_table = config_db.get("PORT", {})
links = {link["ifname"]: link for link in json.loads(subprocess.run(
    ["ip", "-n", namespace, "-j", "-s", "link", "show"], capture_output=True, text=True, check=True).stdout)}


def kernel(port):
    return links.get(ports.get(port, ""))


def speed(mbps):  # scripts/intfutil port_speed_parse
    if not mbps.isdigit():
        return "N/A"
    value = int(mbps)
    return f"{value}M" if value < 1000 else f"{value / 1000:.1f}G" if value % 1000 >= 100 else f"{value / 1000:.0f}G"


def table(header, rows):  # tabulate(rows, header, tablefmt="simple", stralign="right")
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    line = lambda cells: "  ".join(str(cell).rjust(width) for cell, width in zip(cells, widths))
    print("\n".join([line(header), "  ".join("-" * width for width in widths), *map(line, rows)]))


def states(port):
    link, config = kernel(port), port_table[port]
    if link is None:
        return "down", config.get("admin_status", "down")
    flags = link.get("flags", [])
    admin = "up" if "UP" in flags else "down"
    return ("up" if admin == "up" and "LOWER_UP" in flags else "down"), admin


if program == "show":
    names = sorted(port_table, key=natural)
    if args == ["interfaces", "status"]:
        rows = []
        for port in names:
            config, link = port_table[port], kernel(port)
            oper, admin = states(port)
            mtu = str(link["mtu"]) if link else config.get("mtu", "N/A")
            rows.append((port, config.get("lanes", "N/A"), speed(config.get("speed", "")), mtu, config.get("fec", "N/A"),
                         config.get("alias", "N/A"), "routed", oper, admin, "N/A", "N/A"))
        table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"], rows)
    elif args == ["interfaces", "description"]:
        rows = [(port, *states(port), port_table[port].get("alias", "N/A"), port_table[port].get("description", "N/A")) for port in names]
        table(["Interface", "Oper", "Admin", "Alias", "Description"], rows)
    else:
        fail(f"the lab does not know `show {' '.join(args)}`")
    sys.exit(0)

# sonic-db-cli DB EVAL SCRIPT 0 ARGV...
if len(args) < 4 or args[1] != "EVAL" or args[3] != "0":
    fail(f"the lab knows only `sonic-db-cli DB EVAL SCRIPT 0 ...`, not {args[:2]}")
db, script, argv = args[0], args[2], args[4:]
if db == "COUNTERS_DB" and script.startswith("-- fabricgen: name-map counters") and argv:
    counters = {}
    if argv[0] == "COUNTERS_PORT_NAME_MAP":
        for port in port_table:
            stats = (kernel(port) or {}).get("stats64", {})
            rx, tx = stats.get("rx", {}), stats.get("tx", {})
            values = {
                "SAI_PORT_STAT_IF_IN_OCTETS": rx.get("bytes", 0), "SAI_PORT_STAT_IF_OUT_OCTETS": tx.get("bytes", 0),
                "SAI_PORT_STAT_IF_IN_UCAST_PKTS": rx.get("packets", 0) - rx.get("multicast", 0),
                "SAI_PORT_STAT_IF_IN_MULTICAST_PKTS": rx.get("multicast", 0), "SAI_PORT_STAT_IF_IN_BROADCAST_PKTS": 0,
                "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": tx.get("packets", 0), "SAI_PORT_STAT_IF_OUT_MULTICAST_PKTS": 0,
                "SAI_PORT_STAT_IF_OUT_BROADCAST_PKTS": 0,
                "SAI_PORT_STAT_IF_IN_ERRORS": rx.get("errors", 0), "SAI_PORT_STAT_IF_OUT_ERRORS": tx.get("errors", 0),
                "SAI_PORT_STAT_IF_IN_DISCARDS": rx.get("dropped", 0), "SAI_PORT_STAT_IF_OUT_DISCARDS": tx.get("dropped", 0),
            }
            values.update({f"SAI_PORT_STAT_PFC_{p}_{way}_PKTS": 0 for p in range(8) for way in ("RX", "TX")})
            counters[port] = {field: str(values[field]) for field in argv[1:] if field in values}
    elif argv[0] == "COUNTERS_QUEUE_NAME_MAP":
        counters = {f"{port}:{queue}": {} for port in port_table for queue in (3, 4)}
    else:
        fail(f"no name map {argv[0]}")
    print(json.dumps(counters))
elif db == "STATE_DB" and script.startswith("-- fabricgen: table by pattern") and argv == ["TRANSCEIVER_DOM_SENSOR|*"]:
    print("{}")
else:
    fail(f"the lab does not know this EVAL on {db}")
'''.replace("@ENDPOINT@", ENDPOINT_MOUNT)

CONFIG_DIR = "/etc/sonic"
# push's inventory options for an endpoint: FRR and lldpd run on it, not in SONiC's containers
INVENTORY_OPTIONS = {"frr_container": "", "lldp_container": ""}
DEFAULT_IMAGE = "SONiC-OS-fabricgen-lab"  # what `sonic-installer list` reports when the build pins no image
USERNAME = "root"  # the driver then runs its commands without sudo (SonicDriver's `sudo` default)


def config_files(build_files: dict[str, bytes], frr_conf: str) -> dict[str, str]:
    """The files of CONFIG_DIR at `up` (path inside it -> text): the build's config_db as the running
    and the saved one, `frr_conf` as /etc/sonic/frr/frr.conf, and an empty checkpoints directory's
    keeper. `build_files`: the switch's config files of the build (verified bytes) by file name.
    A ValueError says what is wrong with them."""
    try:
        config_db = json.loads(build_files["config_db.json"])
    except ValueError as exc:
        raise ValueError(f"config_db.json is not JSON: {exc}") from None
    if not isinstance(config_db, dict):
        raise ValueError("config_db.json is not a config_db (a JSON object of tables)")
    text = json.dumps(config_db, indent=4, sort_keys=True)
    return {"running_config_db.json": text, "config_db.json": text, "frr/frr.conf": frr_conf, "checkpoints/.keep": ""}


# program name on the endpoint's PATH -> its script
PROGRAMS = {
    "config": SONIC_UTILITIES,
    "show": SONIC_UTILITIES,
    "sonic-installer": SONIC_UTILITIES,
    "sonic-db-cli": SONIC_STATE,
    "fabricgen-sonic-state": SONIC_STATE,
}
