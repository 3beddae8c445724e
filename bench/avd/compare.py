"""fabricgen beside Arista AVD (pyavd) on the same 2-tier VXLAN EVPN fabric: CPU time and config lines.

    python bench/avd/compare.py                   # bench/avd/evpn-eos.yaml
    python bench/avd/compare.py INTENT --json     # another intent; the measurements as JSON
    python bench/avd/compare.py --repeat 3        # also each pipeline's warm runs (2 more in its process)

Run it through `make bench-avd` (scripts/bench-avd.sh): pyavd is installed only in the bench's own
environment, bench/.venv-avd, never in fabricgen's.

1. fabricgen compiles the intent in memory (`fabricgen.compile`: every config and report, nothing
   written); its CPU time is `time.process_time()` around that call.
2. The build is turned into AVD's eos_designs inputs for the same fabric (bench/avd/avd_inputs.py:
   the same hostnames, ASNs, loopbacks, VTEPs, uplink ports and /31s, MTU, BFD, VRFs, VLANs, VNIs,
   route-targets and server ports). Not timed.
3. pyavd runs its documented pipeline for every device (pyavd 6.4's public functions, each
   documented in its docstring): `validate_inputs` per device, `get_avd_facts` over all of them,
   then `get_device_structured_config` and `get_device_config` per device. Its CPU time is
   `time.process_time()` around the four steps. It runs twice: on fabric-wide inputs (every
   device's inputs list every server, as AVD's group_vars usually do) and on inputs scoped per
   switch (each device lists only the servers cabled to it), which AVD turns into the same configs
   faster: the second run is AVD's better case.
4. Not timed: every AVD config is checked to carry its device's `router bgp <ASN>`, loopback and
   fabric /31s as fabricgen planned them, so both tools built the same fabric.

Each tool runs in a fresh Python process of its own, so each pays its own imports, as a user does,
and neither warms the other's caches. Config lines are the non-empty lines of every config file
(fabricgen: every file under configs/; AVD: `get_device_config`'s text). The table gives the CPU
ratio AVD / fabricgen per switch and per config line.

The fabric's NOS is the intent's (`backend.leaf`, one line in evpn-eos.yaml): until fabricgen
writes Arista EOS, its configs are another NOS's and the output says so.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
DEFAULT_INTENT = HERE / "evpn-eos.yaml"
NETWORK = "backend"
AVD_NOS = "eos"  # what AVD writes; fabricgen's side is compared like for like only when it writes this too


def non_empty_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


T = TypeVar("T")


def timed(run: Callable[[], T], repeat: int) -> tuple[T, float, float, float, list[float]]:
    """run()'s result, its CPU and wall seconds (the cold run: imports included), the peak MiB
    after it, and the CPU seconds of `repeat - 1` warm runs after that."""
    wall = time.perf_counter()
    cpu = time.process_time()
    result = run()
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    peak = peak_mib()
    warm = []
    for _ in range(repeat - 1):
        clock = time.process_time()
        run()
        warm.append(time.process_time() - clock)
    return result, cpu, wall, peak, warm


# --- fabricgen's side (a process of its own) ------------------------------------------------------


def fabricgen_side(intent: Path, handoff: Path, repeat: int = 1) -> dict:
    """Compile `intent`, time it, and write AVD's inputs and what AVD's configs must show to
    `handoff` (JSON). Returns fabricgen's measurements; exits 1 naming the problems when the
    intent does not build or is not a fabric AVD's inputs can say."""
    import fabricgen  # only the version: the compiler is imported by the first compile, inside the timing

    try:
        build, cpu, wall, peak, warm = timed(lambda: fabricgen.compile(intent), repeat)
    except fabricgen.FabricgenError as error:
        sys.exit(f"{intent}: fabricgen cannot build it:\n{error.report()}")

    from avd_inputs import NotExpressible, avd_inputs, expected  # bench/avd, this script's directory

    try:
        inputs = avd_inputs(build, NETWORK)
    except NotExpressible as error:
        sys.exit(f"{intent}: not a fabric this comparison can give AVD: {error}")
    shared = next(iter(inputs.values()))
    handoff.write_text(
        json.dumps(
            {
                "shared": {key: value for key, value in shared.items() if key != "type"},
                "types": {name: data["type"] for name, data in inputs.items()},
                "expected": expected(build, inputs),
            }
        ),
        encoding="utf-8",
    )
    configs = {path: data for path, data in build.files.items() if path.startswith("configs/")}
    topology = json.loads(build.files["topology.json"])
    switches = [node for node in topology["nodes"] if node["id"] in inputs]
    return {
        "fabric": topology["graph"]["name"],
        "version": fabricgen.__version__,
        "nos": sorted({node["nos"] for node in switches}),
        "switches": len(switches),
        "leaves": sum(1 for node in switches if node["role"] == "leaf"),
        "spines": sum(1 for node in switches if node["role"] == "spine"),
        "cpu_s": cpu,
        "wall_s": wall,
        "warm_cpu_s": warm,
        "config_files": len(configs),
        "config_lines": sum(non_empty_lines(data.decode()) for data in configs.values()),
        "phases_s": build.timings,  # wall seconds per compiler phase (reports include topology.json, cabling, IP plan, BOM)
        "peak_mib": peak,
    }


# --- AVD's side (a process of its own) ------------------------------------------------------------


def run_avd(inputs: dict[str, dict]) -> tuple[dict[str, str], dict[str, float]]:
    """pyavd's pipeline for every device of `inputs` ({hostname: that device's inputs}): each
    device's EOS config, and the CPU seconds of each step. Raises RuntimeError naming the device
    and the fields when pyavd refuses an input."""
    import pyavd

    stages = {}
    clock = time.process_time()
    validated = {}
    for hostname, data in inputs.items():
        result = pyavd.validate_inputs(data)
        violations = result.validation_result.violations
        if result.validated_data is None or violations:
            shown = "; ".join(f"{'.'.join(map(str, v.path))}: {v.message}" for v in violations[:5])
            raise RuntimeError(f"pyavd refused the inputs of {hostname}: {shown}")
        validated[hostname] = result.validated_data
    stages["validate_inputs"] = time.process_time() - clock

    clock = time.process_time()
    facts = pyavd.get_avd_facts(validated)
    stages["get_avd_facts"] = time.process_time() - clock

    structured = {}
    clock = time.process_time()
    for hostname in validated:
        structured[hostname] = pyavd.get_device_structured_config(hostname, validated[hostname], facts)
    stages["get_device_structured_config"] = time.process_time() - clock

    configs = {}
    clock = time.process_time()
    for hostname, config in structured.items():
        configs[hostname] = pyavd.get_device_config(config)
    stages["get_device_config"] = time.process_time() - clock
    return configs, stages


def interface_addresses(config: str) -> dict[str, str]:
    """Each interface's `ip address` in an EOS config's text."""
    addresses, interface = {}, None
    for line in config.splitlines():
        if line.startswith("interface "):
            interface = line.split(None, 1)[1]
        elif not line.startswith(" "):
            interface = None
        elif interface is not None and line.strip().startswith("ip address "):
            addresses[interface] = line.split()[2]
    return addresses


def mismatches(configs: dict[str, str], expected: dict[str, dict]) -> list[str]:
    """Where AVD's configs differ from fabricgen's plan: a device without a config, without
    `router bgp <its ASN>`, or with another loopback or fabric port address."""
    found = []
    for hostname, facts in sorted(expected.items()):
        config = configs.get(hostname)
        if config is None:
            found.append(f"{hostname}: no config")
            continue
        if f"\nrouter bgp {facts['asn']}\n" not in config:
            found.append(f"{hostname}: no 'router bgp {facts['asn']}'")
        addresses = interface_addresses(config)
        if addresses.get("Loopback0") != f"{facts['loopback']}/32":
            found.append(f"{hostname} Loopback0: {addresses.get('Loopback0')}, fabricgen {facts['loopback']}/32")
        for port, address in sorted(facts["ports"].items()):
            if addresses.get(port) != address:
                found.append(f"{hostname} {port}: {addresses.get(port)}, fabricgen {address}")
    return found


def servers_scoped(inputs: dict[str, dict]) -> dict[str, dict]:
    """`inputs` with each device's `servers` cut to the adapters cabled to that device (a spine
    keeps none): the same fabric, but no device's inputs carry the other switches' server ports.
    AVD configures a connected endpoint's adapter only on the switches it names, so the configs
    are the same; each device's inputs, which pyavd validates and loads whole, are smaller."""
    scoped = {}
    for hostname, data in inputs.items():
        servers = []
        for server in data["servers"]:
            adapters = [adapter for adapter in server["adapters"] if hostname in adapter["switches"]]
            if adapters:
                servers.append({**server, "adapters": adapters})
        scoped[hostname] = {**data, "servers": servers}
    return scoped


def avd_side(handoff: Path, repeat: int = 1, scoped: bool = False) -> dict:
    """Run pyavd on the inputs in `handoff` (each device's servers cut to its own when `scoped`),
    time it, check its configs. AVD's measurements."""
    data = json.loads(handoff.read_text(encoding="utf-8"))
    shared = data["shared"]
    inputs = {hostname: {**shared, "type": node_type} for hostname, node_type in data["types"].items()}
    if scoped:
        inputs = servers_scoped(inputs)

    (configs, stages), cpu, wall, peak, warm = timed(lambda: run_avd(inputs), repeat)

    import pyavd

    return {
        "version": pyavd.__version__,
        "switches": len(configs),
        "cpu_s": cpu,
        "wall_s": wall,
        "warm_cpu_s": warm,
        "config_lines": sum(non_empty_lines(text) for text in configs.values()),
        "stages_cpu_s": stages,
        "peak_mib": peak,
        "configs_sha256": hashlib.sha256("".join(configs[hostname] for hostname in sorted(configs)).encode()).hexdigest(),
        "mismatches": mismatches(configs, data["expected"]),
    }


# --- the comparison ----------------------------------------------------------------------------------


def run_side(*args: str) -> dict:
    """This script in a fresh interpreter on one side; its JSON answer. Exits 1 naming the side's
    last error lines when it fails."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        tail = "\n    ".join(out.stderr.strip().splitlines()[-6:])
        side = "fabricgen" if args[0] == "--fabricgen-side" else "pyavd"
        raise SystemExit(f"{side}'s side failed (exit {out.returncode}):\n    {tail}")
    return json.loads(out.stdout)


AVD_RUNS = {  # key in the results -> (the table's label, avd side's extra arguments)
    "avd": ("pyavd", ()),
    "avd_scoped": ("pyavd, scoped", ("--scoped",)),
}


def compare(intent: Path, repeat: int = 1) -> dict:
    """fabricgen, then pyavd on the fabric-wide inputs, then pyavd on inputs with servers scoped
    per switch, each in a process of its own; and the CPU ratios AVD / fabricgen. `repeat` > 1
    runs each pipeline that many times in its process: the first run is the one compared
    (imports and first-call caches included, as a user's run), the others are warm runs."""
    with tempfile.TemporaryDirectory(prefix="fabricgen-avd-") as scratch:
        handoff = Path(scratch) / "avd-inputs.json"
        result = {"intent": str(intent), "fabricgen": run_side("--fabricgen-side", str(intent), str(handoff), "--repeat", str(repeat))}
        for key, (_, extra) in AVD_RUNS.items():
            result[key] = run_side("--avd-side", str(handoff), "--repeat", str(repeat), *extra)
    fg = result["fabricgen"]
    result["fabric"] = fg.pop("fabric")
    result["fabricgen_writes_eos"] = fg["nos"] == [AVD_NOS]
    result["avd_configs_same_either_way"] = result["avd"]["configs_sha256"] == result["avd_scoped"]["configs_sha256"]
    result["ratios_avd_to_fabricgen"] = {
        key: {
            "cpu_per_switch": (result[key]["cpu_s"] / result[key]["switches"]) / (fg["cpu_s"] / fg["switches"]),
            "cpu_per_config_line": (result[key]["cpu_s"] / result[key]["config_lines"]) / (fg["cpu_s"] / fg["config_lines"]),
        }
        for key in AVD_RUNS
    }
    return result


def print_table(result: dict) -> None:
    fg, avd = result["fabricgen"], result["avd"]
    print(f"{result['fabric']} ({result['intent']}): {fg['switches']} switches ({fg['leaves']} leaves, {fg['spines']} spines), VXLAN EVPN, eBGP underlay")
    print(f"fabricgen {fg['version']} (nos: {', '.join(fg['nos'])}); pyavd {avd['version']} (EOS); each run in a process of its own")
    if not result["fabricgen_writes_eos"]:
        print(
            f"note: fabricgen's configs here are {', '.join(fg['nos'])}, not EOS: the two tools wrote different NOSes. "
            f"Set the intent's backend.leaf to an EOS switch with nos: {AVD_NOS} to compare like for like."
        )
    header = f"{'':<16}{'switches':>9}{'config lines':>14}{'CPU s':>9}{'CPU ms/switch':>15}{'CPU us/line':>13}{'wall s':>8}{'peak MiB':>10}{'AVD/fg per switch':>19}{'per line':>10}"
    print()
    print(header)
    print("-" * len(header))
    rows = [("fabricgen", fg, None)] + [(label, result[key], result["ratios_avd_to_fabricgen"][key]) for key, (label, _) in AVD_RUNS.items()]
    for label, m, ratio in rows:
        ratios = f"{ratio['cpu_per_switch']:>18.1f}x{ratio['cpu_per_config_line']:>9.1f}x" if ratio else ""
        print(
            f"{label:<16}{m['switches']:>9,}{m['config_lines']:>14,}{m['cpu_s']:>9.2f}{m['cpu_s'] / m['switches'] * 1e3:>15.1f}"
            f"{m['cpu_s'] / m['config_lines'] * 1e6:>13.1f}{m['wall_s']:>8.2f}{m['peak_mib']:>10.0f}{ratios}"
        )
    print()
    print("pyavd: fabric-wide inputs (every device's inputs list every server); scoped: each device's inputs list only its own servers' ports")
    if fg["warm_cpu_s"]:
        warm = ", ".join(f"{label} {min(result[key]['warm_cpu_s']):.2f}" for key, (label, _) in AVD_RUNS.items())
        print(f"warm runs (the same pipeline again in its process, best of {len(fg['warm_cpu_s'])}), CPU s: fabricgen {min(fg['warm_cpu_s']):.2f}, {warm}")
    print("fabricgen phases (wall s): " + ", ".join(f"{phase} {seconds:.2f}" for phase, seconds in fg["phases_s"].items()))
    for key, (label, _) in AVD_RUNS.items():
        print(f"{label} steps (CPU s): " + ", ".join(f"{step} {seconds:.2f}" for step, seconds in result[key]["stages_cpu_s"].items()))
    if not result["avd_configs_same_either_way"]:
        print("warning: pyavd wrote different configs from the scoped inputs")
    found = avd["mismatches"] + result["avd_scoped"]["mismatches"]
    if found:
        print(f"AVD's configs differ from fabricgen's plan in {len(found)} places:")
        for line in found[:10]:
            print(f"    {line}")
    else:
        print("checked: every AVD config has its switch's router bgp ASN, Loopback0 and fabric /31s as fabricgen planned them")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("intent", nargs="?", type=Path, default=DEFAULT_INTENT, help="a 2-tier VXLAN EVPN intent (default: bench/avd/evpn-eos.yaml)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON instead of the table")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="run each pipeline N times in its process; runs 2..N are reported as warm runs (default 1)"
    )
    parser.add_argument("--fabricgen-side", nargs=2, metavar=("INTENT", "HANDOFF"), help=argparse.SUPPRESS)
    parser.add_argument("--avd-side", metavar="HANDOFF", help=argparse.SUPPRESS)
    parser.add_argument("--scoped", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not 1 <= args.repeat <= 10:
        parser.error(f"--repeat {args.repeat}: give 1 to 10")
    if args.fabricgen_side:
        print(json.dumps(fabricgen_side(Path(args.fabricgen_side[0]), Path(args.fabricgen_side[1]), args.repeat)))
        return 0
    if args.avd_side:
        print(json.dumps(avd_side(Path(args.avd_side), args.repeat, args.scoped)))
        return 0
    if importlib.util.find_spec("pyavd") is None:
        parser.error("pyavd is not installed in this Python: run `make bench-avd` (it lives in bench/.venv-avd only)")
    if not args.intent.is_file():
        parser.error(f"{args.intent}: no such intent file")
    result = compare(args.intent.resolve(), args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    mismatched = result["avd"]["mismatches"] or result["avd_scoped"]["mismatches"]
    return 1 if mismatched or not result["avd_configs_same_either_way"] else 0


if __name__ == "__main__":
    sys.exit(main())
