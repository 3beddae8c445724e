"""The build an export reads: a verified build directory and the indexes every format needs.

`open_build(build_dir) -> ExportBuild` opens the directory through `fabricgen.build.build_dir.BuildFiles`
(every file checked against manifest.json, topology.json, cabling.csv and ip-plan.csv parsed
through their checked models and checked against each other), so every name, port and address an export writes has passed
`fabricgen.basics.trust` on the way in. Nothing else of the build is read, except by a format that says so
(the FRR twins for containerlab, the switch configs for Batfish), and those through BuildFiles too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.basics.errors import FabricgenError, Problem
from fabricgen.basics.sorting import natural_key
from fabricgen.basics.trust import printable
from fabricgen.build.build_dir import AddressRow, BuildFiles, CableRow, Topology, TopologyNode
from fabricgen.compiler.design.graph import FABRIC_ROLES, Role
from fabricgen.nos.interface import ExportParts, plugins

READ = ("topology.json", "cabling.csv", "ip-plan.csv")
SWITCH_ROLES = frozenset({*FABRIC_ROLES, Role.OOB_SWITCH})


class ExportError(FabricgenError):
    """The export cannot be written: a bad build directory, an option that does not fit it, a
    destination that would overwrite the build."""

    phase = "export"


@dataclass
class ExportBuild:
    """A verified build: its topology, cabling and IP plan, with indexes by device."""

    root: Path
    files: BuildFiles
    topology: Topology
    cables: list[CableRow]
    addresses: list[AddressRow]
    nodes: dict[str, TopologyNode] = field(init=False)
    addresses_of: dict[str, list[AddressRow]] = field(init=False)

    def __post_init__(self) -> None:
        self.nodes = {node.id: node for node in self.topology.nodes}
        self.addresses_of = defaultdict(list)
        for row in self.addresses:
            self.addresses_of[row.device].append(row)

    @property
    def name(self) -> str:
        return self.topology.graph.name

    def networks(self) -> list[str]:
        """The routed fabrics of the build (backend, frontend, storage), as topology.json lists them."""
        return [str(network) for network in self.topology.graph.fabrics]

    def require_network(self, network: str) -> None:
        if network not in self.networks():
            raise ExportError(
                Problem(
                    f"the build has no {printable(network)} fabric",
                    hint=f"choose one of: {', '.join(self.networks())}",
                    file=str(self.root / "topology.json"),
                )
            )

    def switches(self) -> list[TopologyNode]:
        """Every switch with a config of its own (fabric tiers and OOB switches), in natural order."""
        return sorted((n for n in self.topology.nodes if n.role in SWITCH_ROLES and n.nos), key=lambda n: natural_key(n.id))

    def management_address(self, device: str) -> AddressRow | None:
        """The device's address on the OOB network (its mgmt0 / eth0), from the IP plan."""
        return next((row for row in self.addresses_of.get(device, ()) if row.kind == "management"), None)


def open_build(build_dir: Path) -> ExportBuild:
    """`build_dir` verified and read (ExportError naming every missing, edited, malformed or
    inconsistent file: BuildFiles checks cabling.csv and ip-plan.csv against topology.json)."""
    files = BuildFiles(build_dir, ExportError, keep=lambda path: path in READ)
    return ExportBuild(build_dir, files, files.topology(), files.cabling(), files.ip_plan())


def export_parts(nos: str | None) -> ExportParts | None:
    """What the package of the NOS `nos` says each format writes for its switches; None for a NOS
    this fabricgen has no package for (a build written where a plug-in NOS was installed): each
    format then writes what it writes for any switch (no Ansible vars, a NetBox platform named
    after the NOS, the config as configs/<switch>.cfg without a Batfish header, FRR running the
    routing twin in containerlab)."""
    package = plugins().get(nos or "")
    return package.EXPORT if package is not None else None
