"""The backend fabric of a build as the test plan models it: its switches and the fabric links
between them, and the GPU NICs on each leaf. `plan.read_backend` fills it from a verified build;
`plan` picks the perftest pairs from it and `runs` the NCCL/RCCL runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fabricgen.testplan.model import Link


@dataclass(frozen=True, slots=True)
class Nic:
    """A GPU node's backend NIC and the leaf port its cable meets."""

    node: str
    port: str
    rail: int  # 1-based position among the node's backend NICs (the lab numbers rails the same way)
    leaf: str
    leaf_port: str
    cable: str
    speed_gbps: int
    address: str | None
    rack: str = ""  # the node's end of the cable in cabling.csv ("" when the build places nothing)
    ru: str = ""


@dataclass
class Backend:
    """The backend fabric of a build: switches and their fabric links, GPU NICs per leaf."""

    name: str
    design: str
    tiers: int
    gpus_per_node: int
    gpu_vendor: str | None  # the GPU node model's, from the catalog (None: not known)
    role: dict[str, str]  # switch -> leaf | spine | core
    scalable_unit: dict[str, int]  # leaf -> its scalable unit
    up: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # leaf -> spines, spine -> cores
    down: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # spine -> leaves, core -> spines
    cables: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))  # (lower, upper) -> cable ids
    peer_cables: dict[frozenset[str], list[str]] = field(default_factory=lambda: defaultdict(list))  # a spine-free pair's two leaves -> its peer links
    links: list[Link] = field(default_factory=list)
    uplink_gbps: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # leaf -> line rate of its fabric and peer links
    nics_of_leaf: dict[str, list[Nic]] = field(default_factory=lambda: defaultdict(list))
    nics_of_node: dict[str, list[Nic]] = field(default_factory=dict)
    qos: dict | None = None  # a backend leaf's lossless profile (topology.json), None without one
