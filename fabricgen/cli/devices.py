"""`fabricgen push` and `fabricgen verify`: the commands that reach the switches (NAPALM)."""

from __future__ import annotations

import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, TaskID, TextColumn

from fabricgen.basics.user_paths import INPUT_FILE, output_file
from fabricgen.cli.common import (
    BUILD_DIR_ARG,
    QUIET_OPTION,
    ProblemFormat,
    checked,
    err,
    json_option,
    out,
    print_json,
    run_or_exit,
    write_report,
)
from fabricgen.cli.extras import require_extra

DEVICES_OPTION = typer.Option(
    None, "--devices", help="Comma-separated switch names, patterns (be-su01-*), roles (leaf, spine) or networks (backend, oob). Default: every switch."
)
INVENTORY_OPTION = typer.Option(
    None,
    "--inventory",
    help="YAML with per-device host/driver/optional_args (and `defaults`), for builds without a management plan or to override it. Never credentials.",
    callback=checked(INPUT_FILE),
)
CONNECT_TIMEOUT_OPTION = typer.Option(30, "--connect-timeout", help="Seconds to connect to a device.")
KNOWN_HOSTS_OPTION = typer.Option(
    None,
    "--known-hosts",
    help="OpenSSH known_hosts file the SONiC switches' host keys must be in (default: ~/.ssh/known_hosts). An unknown or changed key refuses the switch before the password is sent.",
    callback=checked(output_file("the known_hosts file", "known_hosts")),  # --trust-on-first-use writes to it
)
TRUST_ON_FIRST_USE_OPTION = typer.Option(
    False,
    "--trust-on-first-use",
    help="Pin the host key of a SONiC switch not yet in --known-hosts FILE (which must be named; created if missing) and trust it; a key already there must still match.",
)
CA_BUNDLE_OPTION = typer.Option(
    None,
    "--ca-bundle",
    help="PEM file of the CAs that signed the NX-OS switches' NX-API certificates (default: the system's CAs).",
    callback=checked(INPUT_FILE),
)
INSECURE_OPTION = typer.Option(False, "--insecure", help="Verify neither SSH host keys nor TLS certificates. Warns on every run.")
PUSH_SECRETS_OPTION = typer.Option(
    None,
    "--secrets",
    help="YAML file (mode 0600) of secret values by name; FABRICGEN_SECRET_<NAME> in the environment wins. Values are filled in memory only.",
    callback=checked(INPUT_FILE),
)
VERIFY_SECRETS_OPTION = typer.Option(
    None, "--secrets", help="YAML file (mode 0600) of secret values by name: used only to mask them in the running configs.", callback=checked(INPUT_FILE)
)
VERIFY_REPORT_OPTION = typer.Option(
    None,
    "--report",
    help="Also write the findings as Markdown to FILE (its directories are created).",
    callback=checked(output_file("the report", "verify.md")),
)
VERIFY_JSON_REPORT_OPTION = typer.Option(
    None,
    "--json-report",
    help="Also write the findings (and each device's full config diff) as JSON to FILE (its directories are created).",
    callback=checked(output_file("the report", "verify.json")),
)


def push_command(
    build_dir: Path = BUILD_DIR_ARG,
    devices: str | None = DEVICES_OPTION,
    inventory: Path | None = INVENTORY_OPTION,
    commit: bool = typer.Option(
        False,
        "--commit",
        help="Apply: preflight every device, then a canary, then batches; verify BGP and a new management session after each commit, roll back and stop on failure. Replaces the whole config, so an incomplete one (no management VRF/address, login, SSH or boot image) is refused.",
    ),
    merge: bool = typer.Option(
        False,
        "--merge",
        help="Load the build as a merge candidate instead of a replace: adds and changes lines, removes NOTHING the build lacks. NX-OS only (no commit-confirm there).",
    ),
    confirm_timeout: int | None = typer.Option(
        None,
        "--confirm-timeout",
        min=5,
        max=3600,
        help="Seconds after a commit before the device restores its previous config by itself unless fabricgen confirmed it (default: verify timeout + 2 x connect timeout + 60; NX-OS takes 30-3600).",
    ),
    secrets_file: Path | None = PUSH_SECRETS_OPTION,
    batch: int = typer.Option(5, "--batch", min=1, help="Devices per batch after the canary."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="At most this many devices in flight at once."),
    canary: str | None = typer.Option(
        None,
        "--canary",
        help="The device to commit first (default: the first leaf whose config changes; a named device that needs no change is skipped), or `none` to go straight to batches.",
    ),
    verify_timeout: float = typer.Option(120.0, "--verify-timeout", help="Seconds for a committed device's BGP neighbors to be Established."),
    connect_timeout: int = CONNECT_TIMEOUT_OPTION,
    diffs: bool = typer.Option(True, "--diffs/--no-diffs", help="Print each device's config diff."),
    known_hosts: Path | None = KNOWN_HOSTS_OPTION,
    trust_on_first_use: bool = TRUST_ON_FIRST_USE_OPTION,
    ca_bundle: Path | None = CA_BUNDLE_OPTION,
    insecure: bool = INSECURE_OPTION,
    quiet: bool = QUIET_OPTION,
    as_json: bool = json_option("fabricgen/push/report.py PushJson; instead of the diffs and the table"),
) -> None:
    """Push BUILD_DIR's configs to the switches with NAPALM (a dry run unless --commit).

    Addresses come from the build's management plan or --inventory; credentials from
    FABRICGEN_USERNAME / FABRICGEN_PASSWORD or a prompt, and are never written anywhere; secrets
    the configs name (`<<secret=NAME>>`) from FABRICGEN_SECRET_<NAME> or --secrets FILE, filled
    in memory, masked in everything printed. Each commit reverts by itself unless confirmed after
    verification (commit-confirm). NX-OS goes
    through NAPALM's nxos (NX-API) driver, its TLS certificate verified; SONiC through fabricgen's
    sonic driver (SSH), its host key verified against known_hosts. Exit 0 when every device
    succeeded, 1 when any failed (a host key refused included), was rolled back or not reached, 2 on
    bad input (nothing contacted).
    """
    require_extra("push", "push")
    from fabricgen.push import report
    from fabricgen.push.candidate import check_complete, read_secrets
    from fabricgen.push.credentials import read_credentials
    from fabricgen.push.inventory import read_targets
    from fabricgen.push.rollout import RolloutOptions, push
    from fabricgen.push.security import DeviceVerification

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    # the drivers read the verified copies in a private directory, never the build directory again
    with tempfile.TemporaryDirectory(prefix="fabricgen-push-") as staging:
        targets = run_or_exit(lambda: read_targets(build_dir, devices, inventory, staging=Path(staging)), problems)
        verification = DeviceVerification(known_hosts, trust_on_first_use, ca_bundle, insecure)
        run_or_exit(lambda: verification.check(targets), problems)
        if commit and not merge:
            run_or_exit(lambda: check_complete(targets), problems)  # before credentials or secrets are even asked for
        secrets = run_or_exit(lambda: read_secrets(targets, secrets_file), problems)
        if warning := verification.warning(targets):
            sys.stderr.write(warning + "\n")
        credentials = run_or_exit(read_credentials, problems)
        options = RolloutOptions(
            commit=commit,
            batch=batch,
            concurrency=concurrency,
            canary=canary,
            connect_timeout=connect_timeout,
            verify_timeout=verify_timeout,
            verification=verification,
            merge=merge,
            confirm_timeout=confirm_timeout,
        )
        with _push_progress(len(targets), quiet) as progress:
            rollout = run_or_exit(lambda: push(targets, credentials, options, on_result=progress, secrets=secrets), problems)
    if as_json:
        print_json(report.push_json(rollout))
        raise typer.Exit(0 if rollout.ok else 1)
    if diffs:
        report.print_diffs(out, rollout)
    wide = out if out.is_terminal else Console(highlight=False, width=10_000)
    wide.print(report.result_table(rollout))
    out.print(report.summary(rollout), markup=False)
    raise typer.Exit(0 if rollout.ok else 1)


@contextmanager
def _push_progress(devices: int, quiet: bool = False):
    """On stderr: a live bar on a terminal, one line per finished device otherwise (CI logs);
    nothing when quiet."""
    if quiet:
        yield lambda _result: None
        return
    if err.is_terminal:
        with Progress(*Progress.get_default_columns(), TextColumn("{task.fields[last]}"), console=err, transient=True, redirect_stdout=False) as bar:
            tasks: dict[str, TaskID] = {}

            def advance(result) -> None:
                if result.stage not in tasks:
                    total = devices if result.stage == "preflight" else None
                    tasks[result.stage] = bar.add_task(result.stage, total=total, last="")
                bar.update(tasks[result.stage], advance=1, last=f"{result.target.name}: {result.outcome.value}")

            yield advance
        return
    finished = 0

    def line(result) -> None:
        nonlocal finished
        finished += 1
        err.print(f"[{finished:,}/{devices:,}] {result.stage}: {result.target.name} {result.outcome.value} ({result.seconds:.1f} s)", markup=False)

    yield line


def verify_command(
    build_dir: Path = BUILD_DIR_ARG,
    devices: str | None = DEVICES_OPTION,
    inventory: Path | None = INVENTORY_OPTION,
    interval: float = typer.Option(
        10.0, "--interval", min=0.0, max=600.0, help="Seconds between the two counter samples (errors, discards, PFC pauses, ECN marks)."
    ),
    jobs: int = typer.Option(8, "--jobs", min=1, help="At most this many devices read at once."),
    storm_threshold: float | None = typer.Option(
        None, "--storm-threshold", min=1.0, help="PFC pause frames per second on one port and priority that count as a storm (default: 1,000)."
    ),
    report_file: Path | None = VERIFY_REPORT_OPTION,
    json_file: Path | None = VERIFY_JSON_REPORT_OPTION,
    as_json: bool = json_option("fabricgen/verify/report.py VerifyJson, with each device's full config diff; instead of the table"),
    secrets_file: Path | None = VERIFY_SECRETS_OPTION,
    connect_timeout: int = CONNECT_TIMEOUT_OPTION,
    known_hosts: Path | None = KNOWN_HOSTS_OPTION,
    trust_on_first_use: bool = TRUST_ON_FIRST_USE_OPTION,
    ca_bundle: Path | None = CA_BUNDLE_OPTION,
    insecure: bool = INSECURE_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Check the live fabric against BUILD_DIR, read-only: cabling (LLDP), ports, BGP and ECMP,
    lossless QoS counters and config drift.

    Devices, addresses, drivers, credentials and host-key / TLS checks as `fabricgen push`; only
    getters are called. Exit 0 when no error is found, 1 with errors (an unreachable device
    included), 2 on bad input (nothing contacted).
    """
    require_extra("push", "verify")
    from fabricgen.push.credentials import read_credentials
    from fabricgen.push.inventory import read_targets
    from fabricgen.push.rollout import DeviceSession, RolloutOptions, resolve_drivers
    from fabricgen.push.security import DeviceVerification
    from fabricgen.verify import report, verify_fabric
    from fabricgen.verify.collect import Access
    from fabricgen.verify.compare import Thresholds

    problems = ProblemFormat.json if as_json else ProblemFormat.text
    verification = DeviceVerification(known_hosts, trust_on_first_use, ca_bundle, insecure)
    targets = run_or_exit(lambda: read_targets(build_dir, devices, inventory), problems)
    run_or_exit(lambda: verification.check(targets), problems)
    if warning := verification.warning(targets):
        sys.stderr.write(warning + "\n")
    drivers = run_or_exit(lambda: resolve_drivers(targets), problems)
    credentials = run_or_exit(read_credentials, problems)
    options = RolloutOptions(connect_timeout=connect_timeout, verification=verification)

    def connect(secrets) -> Access:
        session = DeviceSession(drivers, credentials, secrets, options)
        return Access(session.device, session.clean)

    with report.progress(err, len(targets), quiet) as done:
        result = run_or_exit(
            lambda: verify_fabric(
                build_dir,
                targets,
                connect,
                interval=interval,
                jobs=jobs,
                secrets_file=secrets_file,
                thresholds=Thresholds() if storm_threshold is None else Thresholds(storm_threshold),
                on_done=done,
            ),
            problems,
        )
    if report_file is not None:
        write_report(report_file, report.render_markdown(result).encode())
    if json_file is not None:
        write_report(json_file, report.render_json(result).encode())
    if as_json:
        sys.stdout.write(report.render_json(result))
        err.print(report.summary(result), markup=False)
        raise typer.Exit(0 if result.ok else 1)
    if out.is_terminal:
        out.print(report.table(result))
    else:
        sys.stdout.write("".join(line + "\n" for line in report.plain_lines(result)))
    out.print(report.summary(result), markup=False)
    raise typer.Exit(0 if result.ok else 1)
