"""`fabricgen export FORMAT BUILD_DIR [-o DIR]`: a build as the files other tools read."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path

import typer

from fabricgen.basics.user_paths import OUTPUT_DIRECTORY
from fabricgen.cli.common import BUILD_DIR_ARG, NETWORK_CHOICE_OPTION, Network, checked, err, json_option, out, print_json, run_or_exit
from fabricgen.nos.interface import ContainerlabNode, plugins  # the NOS packages only, light: their image options

app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Write a build as the files other tools read: containerlab, batfish, nornir, ansible, netbox, diagram. "
    "Each writes a directory (default BUILD_DIR-FORMAT), all of it or nothing; exit 2 on a bad build.",
)

OUTPUT_OPTION = typer.Option(
    None,
    "--output",
    "-o",
    help="The export directory (default: BUILD_DIR-FORMAT beside the build). Replaced as a whole, and only when it holds an earlier export of this format of the same fabric.",
    callback=checked(OUTPUT_DIRECTORY),
)
JSON_OPTION = json_option("fabricgen/export/files.py ExportSummary")


def _export(build_dir: Path, output: Path | None, format_name: str, render: Callable, as_json: bool, push: Callable | None = None) -> None:
    """Verify the build, render the format, write the directory; print where and how much (and,
    with `push`, what it pushed: push(build) -> NetboxPushSummary)."""
    from fabricgen.basics.trust import printable
    from fabricgen.basics.user_paths import check_path
    from fabricgen.export.files import ExportSummary, default_destination, write_export
    from fabricgen.export.source import open_build

    def action():
        # the default, derived from BUILD_DIR, checked as -o would be (a long name plus the suffix)
        destination = output or check_path(default_destination(build_dir, format_name), OUTPUT_DIRECTORY, f"--output (default BUILD_DIR-{format_name})")
        build = open_build(build_dir)
        files = render(build)
        return build, destination, *write_export(build, files, destination, format_name)

    build, destination, count, size = run_or_exit(action)
    if not as_json:
        out.print(f"{printable(destination)}: {count:,} files ({size / 1e6:.1f} MB), {format_name} export of {build.name}", markup=False)
    pushed = push(build) if push is not None else None
    if as_json:
        print_json(ExportSummary(format=format_name, fabric=build.name, directory=str(destination), files=count, bytes=size, netbox_push=pushed))
    if pushed is not None and pushed.failed:
        raise typer.Exit(1)


def _with_nos_image_options(command: Callable) -> Callable:
    """`command` with an image option per NOS whose package runs its switches in a container of
    their own (`ExportParts.containerlab`: --sonic-image, --ceos-image), before --json: the option
    and its help come from the NOS's package, so a new NOS brings its own and the names users'
    scripts pass stay. Typer reads the options from the signature set here; the command receives
    them in `**nos_images`, by the option's name as a parameter (`sonic_image`)."""
    signature = inspect.signature(command, eval_str=True)
    fixed = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    added = [
        inspect.Parameter(
            _image_parameter(own.image_option),
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=typer.Option(None, own.image_option, help=own.image_help),
            annotation=str | None,
        )
        for own in _own_containers().values()
    ]
    command.__signature__ = signature.replace(parameters=[*fixed[:-1], *added, fixed[-1]])  # type: ignore[attr-defined]
    return command


def _own_containers() -> dict[str, ContainerlabNode]:
    """The NOSes whose switches run in a container of their own, and that container."""
    return {name: package.EXPORT.containerlab for name, package in plugins().items() if package.EXPORT.containerlab is not None}


def _image_parameter(option: str) -> str:
    return option.removeprefix("--").replace("-", "_")


@app.command("containerlab")
@_with_nos_image_options
def containerlab_command(
    build_dir: Path = BUILD_DIR_ARG,
    output: Path | None = OUTPUT_OPTION,
    network: Network = NETWORK_CHOICE_OPTION,
    frr_image: str | None = typer.Option(None, "--frr-image", help="Image of the FRR nodes (default quay.io/frrouting/frr:10.5.1)."),
    host_image: str | None = typer.Option(None, "--host-image", help="Image of the server nodes (default wbitt/network-multitool:3.22.2)."),
    frr_twins: bool = typer.Option(
        True,
        "--frr-twins/--no-frr-twins",
        help="Run a switch with more cabled ports than its NOS's image holds as an FRR twin (default), or refuse the export.",
    ),
    as_json: bool = JSON_OPTION,
    **nos_images: str | None,
) -> None:
    """A containerlab topology of one fabric (<lab>.clab.yml): switches as FRR running their
    routing twins (SONiC switches as sonic-vs booting their build config on the image's 32 ports,
    FRR twins beyond; EOS switches as cEOS booting their build config), servers as Linux nodes
    with their netplan, every cable of the fabric a link."""
    from fabricgen.export.containerlab import Images, render_containerlab

    defaults = Images()
    given = {nos: nos_images.get(_image_parameter(own.image_option)) for nos, own in _own_containers().items()}
    images = Images(frr_image or defaults.frr, host_image or defaults.host, {nos: image for nos, image in given.items() if image})
    notes: list[str] = []  # the switches run as FRR twins, and why
    _export(build_dir, output, "containerlab", lambda build: render_containerlab(build, network.value, images, frr_twins, notes), as_json)
    for note in notes:
        err.print(f"note: {note}", markup=False)


@app.command("batfish")
def batfish_command(build_dir: Path = BUILD_DIR_ARG, output: Path | None = OUTPUT_OPTION, as_json: bool = JSON_OPTION) -> None:
    """A Batfish snapshot: configs/ (NX-OS, EOS), sonic_configs/<switch>/ (SONiC) and
    batfish/layer1_topology.json from the cabling plan. Secrets stay placeholders."""
    from fabricgen.export.batfish import render_batfish

    _export(build_dir, output, "batfish", render_batfish, as_json)


@app.command("nornir")
def nornir_command(build_dir: Path = BUILD_DIR_ARG, output: Path | None = OUTPUT_OPTION, as_json: bool = JSON_OPTION) -> None:
    """A Nornir SimpleInventory (hosts.yaml, groups.yaml, defaults.yaml) of the build's switches,
    platform = the NAPALM driver fabricgen push uses, netmiko's and scrapli's as connection options;
    grouped by NOS, network and role, rack, scalable unit, rail and model. No credentials."""
    from fabricgen.export.nornir import render_nornir

    _export(build_dir, output, "nornir", render_nornir, as_json)


@app.command("ansible")
def ansible_command(build_dir: Path = BUILD_DIR_ARG, output: Path | None = OUTPUT_OPTION, as_json: bool = JSON_OPTION) -> None:
    """An Ansible YAML inventory (inventory.yaml) of the build's switches, grouped by NOS, network
    and role, rack, scalable unit, rail and model. No credentials."""
    from fabricgen.export.ansible import render_ansible

    _export(build_dir, output, "ansible", render_ansible, as_json)


@app.command("netbox")
def netbox_command(
    build_dir: Path = BUILD_DIR_ARG,
    output: Path | None = OUTPUT_OPTION,
    push_url: str | None = typer.Option(
        None,
        "--push",
        metavar="URL",
        help="Also make the NetBox at URL match the build: create what is missing, change what differs (token from NETBOX_TOKEN; needs pip install 'fabricgen[netbox]').",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="With --push: read NetBox and print what would change; change nothing."),
    delete: bool = typer.Option(False, "--delete", help="With --push: also delete this fabric's objects (tagged fabricgen-<fabric>) the build no longer has."),
    concurrency: int = typer.Option(4, "--concurrency", metavar="N", help="With --push: bulk requests in flight at a time, 1 to 16."),
    timeout: float = typer.Option(
        30.0, "--timeout", metavar="SECONDS", help="With --push: how long to wait to connect to NetBox and for each answer, 1 to 600."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """NetBox bulk-import CSV files (NetBox 4.7): tags, manufacturers, roles, platforms, device
    types, RIR, tenant, site, VRF, racks, ASNs, VLANs, prefixes, devices, interfaces, console
    ports, cables, IP addresses, optics. With --push, NetBox is made to match the build through its
    API, every object scoped to the fabric (its site, tenant, VRF and tag); exit 1 when NetBox
    refused some."""
    from fabricgen.basics.trust import printable
    from fabricgen.cli.progress import Phases
    from fabricgen.export.files import NetboxPushSummary, NetboxTypeCounts
    from fabricgen.export.netbox import NetboxData, netbox_data, netbox_files
    from fabricgen.export.netbox_push import check_concurrency, connect, push, shown_url

    client = run_or_exit(lambda: (check_concurrency(concurrency), connect(push_url, os.environ, timeout))[1]) if push_url else None
    made: list[NetboxData] = []  # the rows, made once for the files and the push

    def render(build) -> dict[str, str]:
        made.append(netbox_data(build))
        return netbox_files(made[0])

    def push_to_netbox(build) -> NetboxPushSummary:
        assert client is not None
        with Phases("netbox push") as phases:  # on stderr, beside --json's stdout
            result = push(made[0], build.name, client, delete=delete, dry_run=dry_run, concurrency=concurrency, progress=phases.start)
        summary = NetboxPushSummary(
            url=shown_url(push_url or ""),
            dry_run=dry_run,
            created=result.total("created"),
            updated=result.total("updated"),
            deleted=result.total("deleted"),
            unchanged=result.total("unchanged"),
            failed=[printable(f) for f in result.failed],
            types={name: NetboxTypeCounts(**vars(counts)) for name, counts in result.counts.items()},
            changes=[printable(c) for c in result.changes],
            seconds=round(result.seconds, 1),
        )
        if not as_json:
            _print_push(summary)
        return summary

    _export(build_dir, output, "netbox", render, as_json, push_to_netbox if client is not None else None)


def _print_push(summary) -> None:
    """The push's outcome: totals, then per object type, the first changes of a dry run, the failures."""
    would = "would be " if summary.dry_run else ""
    stale = sum(c.stale for c in summary.types.values())
    out.print(
        f"{summary.url}: {summary.created:,} objects {would}created, {summary.updated:,} {would}changed, {summary.deleted:,} {would}deleted, "
        f"{summary.unchanged:,} unchanged, {len(summary.failed):,} failed ({summary.seconds:.1f} s)",
        markup=False,
    )
    if summary.created + summary.updated + summary.deleted == 0 and not summary.failed:
        out.print("  NetBox already matches the build: nothing " + ("would change" if summary.dry_run else "changed"), markup=False)
    for name, c in summary.types.items():
        if c.created or c.updated or c.deleted or c.failed or c.stale:
            kept = f", {c.stale:,} not in the build (kept; --delete deletes them)" if c.stale else ""
            out.print(
                f"  {name}: {c.created:,} {would}created, {c.updated:,} {would}changed, {c.deleted:,} {would}deleted, {c.unchanged:,} unchanged, {c.failed:,} failed{kept}",
                markup=False,
            )
    if summary.dry_run:
        for change in summary.changes:
            out.print("  " + change, markup=False)
    elif stale:
        out.print(f"  {stale:,} of this fabric's objects are no longer in the build: kept (--delete deletes them)", markup=False)
    for failure in summary.failed[:50]:
        out.print("  " + failure, markup=False)


VIEW_OPTION = typer.Option(
    None,
    "--view",
    metavar="VIEW",
    help="What each network's drawing shows (repeatable): full (every device), summary (groups per unit and rail, "
    "cables counted per speed on the lines), auto (the default: full while no tier holds more than 16 devices, else summary); "
    "unit:N, rail:N, unit:all, rail:all add one drawing per unit or rail.",
)


@app.command("diagram")
def diagram_command(
    build_dir: Path = BUILD_DIR_ARG, output: Path | None = OUTPUT_OPTION, view: list[str] | None = VIEW_OPTION, as_json: bool = JSON_OPTION
) -> None:
    """Graphviz (.dot), D2 (.d2) and Mermaid (.mmd) drawings per network, rails coloured, devices in
    natural order; a summary of large networks, per-unit and per-rail views on request; rack
    elevations (SVG) with a layout."""
    from fabricgen.export.diagram import render_diagram

    _export(build_dir, output, "diagram", lambda build: render_diagram(build, view or ()), as_json)
