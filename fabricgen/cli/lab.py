"""`fabricgen lab`: boot a build's fabric in network namespaces with FRR and check it."""

from __future__ import annotations

from pathlib import Path

import typer

from fabricgen.basics.trust import printable
from fabricgen.basics.user_paths import INPUT_FILE, output_file
from fabricgen.cli.common import (
    BUILD_DIR_ARG,
    NETWORK_CHOICE_OPTION,
    QUIET_OPTION,
    TIMEOUT_OPTION,
    Network,
    ProblemFormat,
    checked,
    json_option,
    out,
    print_json,
    run_or_exit,
    write_report,
)
from fabricgen.cli.progress import Phases

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Boot a build's fabric with real FRR in Linux network namespaces and check it converges, forwards and survives failures (Linux, root).",
)
LAB_SECRETS_OPTION = typer.Option(
    None,
    "--secrets",
    help="A YAML file (mode 0600) of secret values by name for the BGP keys; $FABRICGEN_SECRETS_FILE and FABRICGEN_SECRET_<NAME> work too. "
    "A key with no value gets a random one for this lab.",
    callback=checked(INPUT_FILE),
)


MANAGEMENT_OPTION = typer.Option(
    False,
    "--management",
    help="Also give every SONiC switch an SSH management endpoint on 127.0.0.1 (a port each) that answers fabricgen's SONiC driver "
    "from the switch's FRR, kernel and lldpd, and write an inventory and a known_hosts file for `fabricgen push` and `verify`.",
)


REPORT_OPTION = typer.Option(
    None,
    "--report",
    help="Also write the whole report as Markdown to this file (its directories are created).",
    callback=checked(output_file("the report", "lab.md")),
)


@app.command("up")
def lab_up_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: Network = NETWORK_CHOICE_OPTION,
    timeout: float = TIMEOUT_OPTION,
    secrets_file: Path | None = LAB_SECRETS_OPTION,
    with_management: bool = MANAGEMENT_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """One namespace per switch and GPU node, one veth pair per cable of the cabling plan, FRR per switch with its BGP keys; waits for convergence."""
    from fabricgen.lab import report, session

    with Phases("lab up", quiet=quiet) as progress:
        result = run_or_exit(lambda: session.up(build_dir, network.value, timeout, secrets_file, progress.start, with_management))
    for line in report.up_lines(result):
        out.print(line, markup=False)
    out.print(f"next: fabricgen lab verify {printable(build_dir)}", markup=False)
    if result.management is not None and result.management.endpoints:
        m = result.management
        out.print(
            f'next: FABRICGEN_USERNAME={m.username} FABRICGEN_PASSWORD="$(cat {printable(m.password_file)})" '
            f"fabricgen verify {printable(build_dir)} --inventory {printable(m.inventory)} --known-hosts {printable(m.known_hosts)}",
            markup=False,
        )


@app.command("verify")
def lab_verify_command(
    build_dir: Path = BUILD_DIR_ARG,
    timeout: float = TIMEOUT_OPTION,
    quiet: bool = QUIET_OPTION,
    as_json: bool = json_option("fabricgen/lab/report.py VerificationJson"),
) -> None:
    """BGP and BFD sessions against the build's list, ECMP width per leaf, traffic between rails and units (exit 1 on a failed check)."""
    from fabricgen.lab import report, session

    with Phases("lab verify", quiet=quiet) as progress:
        result = run_or_exit(lambda: session.check(build_dir, timeout, progress.start), ProblemFormat.json if as_json else ProblemFormat.text)
    if as_json:
        print_json(report.verification_json(result))
    else:
        report.print_verification(out, result)
    raise typer.Exit(0 if result.passed else 1)


@app.command("fail")
def lab_fail_command(
    build_dir: Path = BUILD_DIR_ARG,
    link: str | None = typer.Option(None, "--link", help="DEV:PORT of a cable to cut, e.g. be-su01-leaf1:Ethernet1/33."),
    device: str | None = typer.Option(None, "--device", help="A switch (or node) to power off."),
    silent: bool = typer.Option(False, "--silent", help="With --link: drop every frame but keep carrier up, so only BFD can notice."),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Fail a link or a device, and measure how long the fabric takes to converge around it."""
    from fabricgen.lab import report, session

    result = run_or_exit(lambda: session.fail(build_dir, link, device, silent, timeout))
    out.print(report.failure_line(result), markup=False)
    out.print(f"next: fabricgen lab verify {printable(build_dir)}; fabricgen lab restore {printable(build_dir)}", markup=False)
    raise typer.Exit(0 if result.converged else 1)


@app.command("restore")
def lab_restore_command(
    build_dir: Path = BUILD_DIR_ARG,
    link: str | None = typer.Option(None, "--link", help="Restore only this failed link (DEV:PORT)."),
    device: str | None = typer.Option(None, "--device", help="Restore only this failed device."),
    timeout: float = TIMEOUT_OPTION,
) -> None:
    """Undo failures (all of them unless one is named) and measure reconvergence."""
    from fabricgen.lab import report, session

    results = run_or_exit(lambda: session.restore(build_dir, link, device, timeout))
    if not results:
        out.print("nothing is failed")
    for result in results:
        out.print(report.failure_line(result), markup=False)
    raise typer.Exit(0 if all(r.converged for r in results) else 1)


@app.command("down")
def lab_down_command(build_dir: Path = BUILD_DIR_ARG) -> None:
    """Remove every namespace, process and file the lab of BUILD_DIR created."""
    from fabricgen.lab import session

    removed = run_or_exit(lambda: session.down(build_dir))
    out.print(f"lab of {printable(build_dir)} removed" if removed else f"no lab was up for {printable(build_dir)}; nothing to remove", markup=False)


@app.command("run")
def lab_run_command(
    build_dir: Path = BUILD_DIR_ARG,
    network: Network = NETWORK_CHOICE_OPTION,
    report_file: Path | None = REPORT_OPTION,
    timeout: float = TIMEOUT_OPTION,
    secrets_file: Path | None = LAB_SECRETS_OPTION,
    with_management: bool = MANAGEMENT_OPTION,
    quiet: bool = QUIET_OPTION,
    as_json: bool = json_option("fabricgen/lab/report.py RunJson"),
) -> None:
    """up, verify, a failure round (a silent uplink failure, a spine down, each restored), down: one report (exit 1 on a failed check)."""
    from fabricgen.lab import report, session

    with Phases("lab run", quiet=quiet) as progress:
        result = run_or_exit(
            lambda: session.run(build_dir, network.value, timeout, secrets_file, progress.start, with_management),
            ProblemFormat.json if as_json else ProblemFormat.text,
        )
    if report_file is not None:
        write_report(report_file, report.markdown(result).encode())
    if as_json:
        print_json(report.run_json(result))
        raise typer.Exit(0 if result.passed else 1)
    for line in report.up_lines(result.up):
        out.print(line, markup=False)
    for name, verification, failure in result.rounds:
        out.rule(name)
        if failure is not None:
            out.print(report.failure_line(failure), markup=False)
        report.print_verification(out, verification)
    if report_file is not None:
        out.print(f"report: {printable(report_file)}", markup=False)
    out.print(f"lab run: {'PASS' if result.passed else 'FAIL'}; lab removed")
    raise typer.Exit(0 if result.passed else 1)
