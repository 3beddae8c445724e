"""testplan.json: the plan's machine-readable expectations, written by `fabricgen testplan` and read
back (strictly, through these models) by `fabricgen testplan check`."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from fabricgen.basics.models import FileModel
from fabricgen.basics.trust import Hostname, PortName, Token

Gbps = Annotated[float, Field(ge=0, le=100_000)]
GBps = Annotated[float, Field(ge=0, le=100_000)]
Efficiency = Annotated[float, Field(gt=0, le=1)]
Library = Literal["nccl", "rccl"]  # nccl-tests or rccl-tests
Collective = Literal["all_reduce", "alltoall"]  # the test binary: <collective>_perf
GpuVendor = Literal["nvidia", "amd"]
PairKind = Literal["fabric", "nic"]  # fabric: crosses fabric links between two leaves; nic: two NICs behind one leaf
PLAN_FORMAT: Final = 2  # Final: mypy reads it as Literal[2], the type of TestPlan.format


RESULTS_DIR = "results"  # where the plan's scripts write their outputs, inside the plan directory by default


class Qos(FileModel):
    """What the plan's commands set so RDMA lands in the fabric's lossless class."""

    lossless: bool  # False: the backend runs without a lossless class (no PFC): traffic class 0
    roce_dscp: Annotated[int, Field(ge=0, le=63)] | None
    traffic_class: Annotated[int, Field(ge=0, le=255)]  # the IP TOS byte: DSCP << 2 | ECT(0) (perftest --tclass, NCCL_IB_TC)
    lossless_priority: Annotated[int, Field(ge=0, le=7)] | None
    cnp_dscp: Annotated[int, Field(ge=0, le=63)] | None
    host_mtu: Annotated[int, Field(ge=576, le=9216)]
    roce_mtu: Literal[256, 512, 1024, 2048, 4096]


class Endpoint(FileModel):
    """One end of a perftest pair: a GPU node's backend NIC and the leaf port it is cabled to."""

    node: Hostname
    port: PortName  # the build's name for the NIC (its netdev unless <PORT>_NETDEV says otherwise)
    address: Annotated[str, Field(max_length=45)]
    rail: Annotated[int, Field(ge=1, le=64)]
    leaf: Hostname
    leaf_port: PortName
    cable: Token  # cable id of the NIC's cable in cabling.csv
    speed_gbps: Annotated[int, Field(ge=1, le=100_000)]
    rack: Annotated[str, Field(max_length=200)] = ""  # the node's rack and rack unit, as cabling.csv gives them ("" when it has none)
    ru: Annotated[str, Field(max_length=20)] = ""


class Pair(FileModel):
    id: Token  # results/<id>.txt is where the client writes its output
    kind: PairKind
    round: Annotated[int, Field(ge=1, le=100_000)]
    server: Endpoint
    client: Endpoint
    tcp_port: Annotated[int, Field(ge=1024, le=65535)]
    qps: Annotated[int, Field(ge=1, le=4096)]
    paths: Annotated[int, Field(ge=0)]  # equal-cost switch paths between the two leaves
    links: list[Token]  # cable ids of every fabric link on those paths
    expected_gbps: Gbps  # line rate of the slower NIC
    threshold_gbps: Gbps  # expected_gbps x efficiency: below it the pair fails


class Run(FileModel):
    id: Token  # results/<id>.txt
    library: Library
    test: Collective
    scope: Token  # su01, su02 ... or cluster
    nodes: list[Hostname]
    ranks: Annotated[int, Field(ge=1)]
    gpus_per_node: Annotated[int, Field(ge=1, le=64)]
    ports: list[PortName]  # the nodes' backend NICs, by rail: NCCL_IB_HCA lists their RDMA devices
    nic_gbps: Gbps  # line rate of one GPU's backend NIC
    nic_bound_busbw: GBps  # what the nodes' NICs allow (no leaf oversubscribed): above it a result is impossible
    leaf_factor: Annotated[float, Field(gt=0, le=1)]  # the share of that the busiest leaf's uplinks carry (1: not limited)
    bound_busbw: GBps  # nic_bound_busbw x leaf_factor: the network's bound on bus bandwidth, GB/s as nccl-tests prints it
    threshold_busbw: GBps  # bound x efficiency: a peak busbw below it fails
    hostfile: Annotated[str, Field(max_length=200)]
    command: Annotated[str, Field(max_length=2000)]


class Link(FileModel):
    """A fabric (switch-to-switch) link of cabling.csv, for naming what a short pair shares."""

    cable: Token
    a_device: Hostname
    a_port: PortName
    b_device: Hostname
    b_port: PortName


class TestPlan(FileModel):
    format: Literal[2] = PLAN_FORMAT
    fabric: Hostname
    gpu_vendor: GpuVendor | None  # from the catalog's GPU node model; None: not known, both libraries run
    design: Token
    tiers: Annotated[int, Field(ge=1, le=3)]
    spines: Annotated[int, Field(ge=0)]
    qos: Qos
    efficiency: Efficiency
    alltoall_efficiency: Efficiency
    pairs: list[Pair]
    uncovered: list[Token]  # fabric links no leaf-to-leaf path crosses (none in a healthy build)
    runs: list[Run]
    links: list[Link]
    notes: list[Annotated[str, Field(max_length=2000)]] = Field([])
