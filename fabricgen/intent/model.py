"""The intent schema: what an engineer writes. Every field has a default except the GPU count.

Units are in the names (`_ms`, `_kbytes`, `_percent`); speeds are written like 400G; ratios are
downlink:uplink bandwidth like "1:1", "3:1" or "1:2".
"""

from __future__ import annotations

import re
from fractions import Fraction
from ipaddress import IPv4Network
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabricgen.catalog.model import Nos
from fabricgen.units import Network, Ratio, Speed

# RFC 1123 label: becomes a hostname and a file name, so nothing that could escape a directory.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def check_name(value: str, what: str = "name") -> str:
    if not NAME_PATTERN.match(value):
        raise ValueError(
            f"{what} {value!r} must be 1-63 letters, digits or '-', not starting or ending with '-' "
            "(it becomes a hostname and a file name)"
        )
    return value


class _Strict(BaseModel):
    # strict: 256 must be written as a number, true is not 1, "no" is not false
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SwitchRole(_Strict):
    model: str = Field("N9K-C9364D-GX2A", description="switch PID from the catalog")
    nos: Nos = "nxos"
    count: int | None = Field(None, ge=1, description="optional: checked against what the design needs")


class Bfd(_Strict):
    enabled: bool = True
    interval_ms: int = Field(150, ge=50, le=999)
    min_rx_ms: int = Field(150, ge=50, le=999)
    multiplier: int = Field(3, ge=1, le=50)


class AsnPlan(_Strict):
    """RFC 7938: one ASN shared by the spines, a unique ASN per leaf."""

    scheme: Literal["private-2byte", "private-4byte"] = "private-2byte"
    spine: int | None = Field(None, description="default: the first ASN of the scheme's private range")
    leaf_first: int | None = Field(None, description="default: the ASN after the spines'")


class _DisjointPools(_Strict):
    """Address pools of one network: every field is a network, and none overlaps another."""

    @model_validator(mode="after")
    def _disjoint(self) -> _DisjointPools:
        named = list(self)
        for i, (name_a, a) in enumerate(named):
            for name_b, b in named[i + 1 :]:
                if a.overlaps(b):
                    raise ValueError(f"pools {name_a} ({a}) and {name_b} ({b}) overlap; give each its own range")
        return self


class Pools(_DisjointPools):
    loopbacks: Network = IPv4Network("10.0.0.0/16")
    gpu_nics: Network = IPv4Network("10.4.0.0/14")
    fabric_links: Network = IPv4Network("10.8.0.0/13")



class EcnThresholds(_Strict):
    min_kbytes: int = Field(ge=1)
    max_kbytes: int = Field(ge=1)
    drop_probability: int = Field(ge=1, le=100, description="percent marked at max_kbytes")

    @model_validator(mode="after")
    def _min_below_max(self) -> EcnThresholds:
        if self.min_kbytes >= self.max_kbytes:
            raise ValueError(f"min_kbytes ({self.min_kbytes}) must be below max_kbytes ({self.max_kbytes})")
        return self


def default_ecn(speed_gbps: int) -> EcnThresholds:
    """Starting point: 150 KB / 3000 KB / 7 % at 100G (Cisco's RoCE guidance), scaled with the
    port's bandwidth-delay product, i.e. linearly with speed."""
    return EcnThresholds(
        min_kbytes=max(1, 150 * speed_gbps // 100), max_kbytes=max(2, 3000 * speed_gbps // 100), drop_probability=7
    )


DEFAULT_ECN = {speed: default_ecn(speed) for speed in (100, 200, 400, 800)}


class PfcWatchdog(_Strict):
    enabled: bool = True
    poll_interval_ms: int = Field(100, ge=100, le=1000)
    detection_ms: int = Field(200, ge=100, le=5000, description="a queue paused this long is declared stormed")
    restoration_ms: int = Field(400, ge=100, le=60000, description="quiet time before the queue is restored")
    action: Literal["drop", "forward", "alert"] = "drop"

    @model_validator(mode="after")
    def _multiples_of_poll(self) -> PfcWatchdog:
        for name in ("detection_ms", "restoration_ms"):
            if getattr(self, name) % self.poll_interval_ms:
                raise ValueError(f"{name} must be a multiple of poll_interval_ms ({self.poll_interval_ms})")
        return self


class Qos(_Strict):
    """RoCEv2 lossless profile: RoCE data on a PFC priority with ECN, CNPs strict priority."""

    enabled: bool = True
    roce_dscp: list[int] = Field([24, 26], min_length=1)
    # 1-7: queue 0 is where all other traffic goes (NX-OS's q-default), never a class of its own
    lossless_priority: int = Field(3, ge=1, le=7, description="traffic class, PFC priority and queue for RoCE")
    cnp_dscp: list[int] = Field([48], min_length=1)
    cnp_priority: int = Field(7, ge=1, le=7, description="strict-priority queue for congestion notifications")
    lossless_bandwidth_percent: int = Field(50, ge=1, le=99, description="share of the rest after strict priority")
    ecn: dict[Speed, EcnThresholds] = Field(default_factory=lambda: dict(DEFAULT_ECN))
    pfc_watchdog: PfcWatchdog = PfcWatchdog()
    cable_length_m: int = Field(100, ge=1, le=10000, description="assumed for SONiC lossless headroom")

    @field_validator("ecn")
    @classmethod
    def _ecn_over_defaults(cls, value: dict[int, EcnThresholds]) -> dict[int, EcnThresholds]:
        # naming one speed should not drop the defaults of the others
        return {**DEFAULT_ECN, **value}

    def ecn_at(self, speed_gbps: int) -> EcnThresholds:
        """The intent's thresholds for this port speed, or the scaled default."""
        return self.ecn.get(speed_gbps) or default_ecn(speed_gbps)

    @field_validator("roce_dscp", "cnp_dscp")
    @classmethod
    def _dscp_range(cls, values: list[int]) -> list[int]:
        for value in values:
            if not 0 <= value <= 63:
                raise ValueError(f"DSCP {value} is outside 0-63")
        if len(set(values)) != len(values):
            raise ValueError("a DSCP value is listed twice")
        return values

    @model_validator(mode="after")
    def _classes_apart(self) -> Qos:
        if self.lossless_priority == self.cnp_priority:
            raise ValueError("lossless_priority and cnp_priority must differ (CNPs must not be paused)")
        if set(self.roce_dscp) & set(self.cnp_dscp):
            raise ValueError("roce_dscp and cnp_dscp share a value")
        return self


class Optics(_Strict):
    """Transceiver PIDs; default: the catalog's default for each cage."""

    host_links: str | None = Field(None, description="switch end of GPU NIC links")
    fabric_links: str | None = Field(None, description="both ends of leaf-spine links")


class Backend(_Strict):
    design: Literal["rail-optimized"] = "rail-optimized"
    scalable_unit_gpus: int = Field(256, ge=1, description="GPUs per scalable unit; one leaf per rail per unit")
    ratio: Ratio = Field(Fraction(1), description="leaf downlink:uplink bandwidth")
    leaf: SwitchRole = SwitchRole()
    spine: SwitchRole = SwitchRole()
    routing: Literal["ebgp", "vxlan-evpn"] = "ebgp"
    nic_addressing: Literal["p2p", "subnet"] = Field(
        "p2p", description="p2p: a routed /31 per NIC; subnet: one subnet per leaf behind a VLAN interface"
    )
    subnet_vlan: int = Field(100, ge=2, le=4094, description="VLAN of the leaf's GPU subnet (nic_addressing: subnet)")
    mtu: int = Field(9216, ge=1500, le=9216)
    bfd: Bfd = Bfd()
    asn: AsnPlan = AsnPlan()
    pools: Pools = Pools()
    optics: Optics = Optics()
    qos: Qos = Qos()

    @field_validator("routing")
    @classmethod
    def _evpn_not_yet(cls, value: str) -> str:
        if value == "vxlan-evpn":
            raise ValueError(
                "vxlan-evpn is not supported yet (it arrives with the VXLAN EVPN work); use routing: ebgp for now"
            )
        return value


class HostPools(_DisjointPools):
    loopbacks: Network
    hosts: Network = Field(description="server ports on the leaves: a /31 per port, or a subnet per leaf")
    fabric_links: Network



class HostFabric(_Strict):
    """A frontend or storage leaf/spine fabric. Servers attach with the ports their catalog entry
    lists; each server's ports are spread over a pair of leaves (or all on one leaf)."""

    leaf: SwitchRole = SwitchRole(model="N9K-C93600CD-GX")
    spine: SwitchRole = SwitchRole()
    ratio: Ratio = Field(Fraction(1), description="leaf downlink:uplink bandwidth")
    attach: Literal["leaf-pair", "single-leaf"] = Field(
        "leaf-pair", description="leaf-pair: a server's ports alternate between two leaves, so one leaf can fail"
    )
    host_addressing: Literal["p2p", "subnet"] = Field(
        "p2p", description="p2p: a routed /31 per server port; subnet: one subnet per leaf behind a VLAN interface"
    )
    subnet_vlan: int = Field(100, ge=2, le=4094)
    mtu: int = Field(9216, ge=1500, le=9216)
    bfd: Bfd = Bfd()
    asn: AsnPlan
    pools: HostPools
    optics: Optics = Optics()
    qos: Qos = Field(
        Qos(enabled=False), description="off by default; enable to carry storage (e.g. NVMe over RoCE) on a PFC priority"
    )


def _frontend_defaults() -> dict:
    return {
        "asn": AsnPlan(spine=65000, leaf_first=65001),
        "pools": HostPools(
            loopbacks=IPv4Network("10.16.0.0/16"), hosts=IPv4Network("10.20.0.0/14"), fabric_links=IPv4Network("10.24.0.0/14")
        ),
    }


def _storage_defaults() -> dict:
    return {
        "asn": AsnPlan(spine=65200, leaf_first=65201),
        "pools": HostPools(
            loopbacks=IPv4Network("10.32.0.0/16"), hosts=IPv4Network("10.36.0.0/14"), fabric_links=IPv4Network("10.40.0.0/14")
        ),
    }


class Frontend(HostFabric):
    storage: Literal["converged", "separate"] = Field(
        "converged", description="converged: storage ports share the frontend fabric (as the whitepaper); separate: a storage fabric of its own"
    )

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: object) -> object:
        return {**_frontend_defaults(), **data} if isinstance(data, dict) else data


class StorageFabric(HostFabric):
    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: object) -> object:
        return {**_storage_defaults(), **data} if isinstance(data, dict) else data


class Servers(_Strict):
    model: str
    count: int = Field(ge=0)


class ConsoleServers(_Strict):
    model: str = "C8300-1N1S-4T2X"
    module: str = Field("NIM-24A", description="async serial module, one per slot")
    count: int | None = Field(None, ge=1, description="optional: at least what the console ports need")


class OobPools(_DisjointPools):
    management: Network = Field(IPv4Network("172.16.0.0/16"), description="a subnet per OOB switch for every management port")
    uplinks: Network = Field(IPv4Network("172.31.255.0/24"), description="/31s from OOB switches to the management core")



class Oob(_Strict):
    """Out-of-band management: copper access switches for every mgmt0, BMC, host management NIC,
    PDU and console server; console servers for every switch's console port."""

    switch: SwitchRole = SwitchRole(model="N9K-C93108TC-FX3")
    uplinks: int = Field(2, ge=0, description="routed uplinks per OOB switch to the management core (the intent's edge)")
    vlan: int = Field(10, ge=2, le=4094, description="access VLAN of the management ports on every OOB switch")
    console: ConsoleServers = ConsoleServers()
    pools: OobPools = OobPools()


class Appliances(_Strict):
    model: str
    count: int = Field(1, ge=1)


class BomOptions(_Strict):
    spares_percent: int = Field(0, ge=0, le=100, description="extra optics and cables, rounded up per row")


class Layout(_Strict):
    """Where things stand: racks in rows, filled in order. GPU racks hold `gpu_nodes_per_rack`
    nodes; server racks hold storage and management nodes by rack units; network racks hold every
    switch and console server by rack units, and stand where `network_racks` says in the
    sequence of racks. From this every cable gets a length, and the medium that reaches."""

    rack_units: int = Field(42, ge=8, le=60, description="usable rack units per rack")
    racks: int | None = Field(None, ge=1, description="racks available; the build fails if the design needs more")
    racks_per_row: int = Field(10, ge=1)
    gpu_nodes_per_rack: int = Field(4, ge=1, description="usually power and cooling, not rack units, set this")
    network_racks: Literal["start", "middle", "end"] = Field("end", description="where the network racks stand in each row sequence")
    rack_width_m: float = Field(0.6, gt=0, le=2)
    row_pitch_m: float = Field(3.0, gt=0, le=20, description="distance from one row to the next (rack depth + aisle)")
    tray_height_m: float = Field(0.5, ge=0, le=5, description="from a rack's top to the overhead cable tray")
    slack_m: float = Field(2.0, ge=0, le=20, description="added to every estimated run for dressing and service loops")
    pdus_per_rack: int = Field(2, ge=0, le=8, description="each PDU's network port is cabled to the OOB network")


class Naming(_Strict):
    """Device name patterns. Fields: {index} (1-based within the role), {su} and {rail} (1-based),
    {node} (1-based within its scalable unit)."""

    gpu_node: str = "gpu{index:04d}"
    leaf: str = "be-su{su:02d}-leaf{rail}"
    spine: str = "be-spine{index:02d}"
    frontend_leaf: str = "fe-leaf{index:02d}"
    frontend_spine: str = "fe-spine{index:02d}"
    storage_leaf: str = "st-leaf{index:02d}"
    storage_spine: str = "st-spine{index:02d}"
    storage_node: str = "storage{index:02d}"
    management_node: str = "mgmt{index:02d}"
    oob_switch: str = "oob{index:02d}"
    console_server: str = "console{index:02d}"

    @field_validator("*")
    @classmethod
    def _pattern_formats(cls, pattern: str) -> str:
        try:
            sample = pattern.format(index=1, su=1, rail=1, node=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"pattern {pattern!r} uses an unknown field or bad format ({exc}); fields: index, su, rail, node") from None
        check_name(sample, "a name from this pattern")
        return pattern


class Intent(_Strict):
    name: str = Field(description="fabric name; the build goes to output/<name>/ (default: the file name)")
    description: str = ""
    catalog: list[str] = Field([], description="extra catalog YAML files, relative to the intent")
    gpus: int | None = Field(None, ge=1)
    nodes: int | None = Field(None, ge=1)
    gpu_node: str = Field("DGX-H100", description="GPU node model from the catalog")
    naming: Naming = Naming()
    backend: Backend = Backend()
    frontend: Frontend | None = Field(None, description="frontend (and converged storage) network; absent: not built")
    storage: StorageFabric | None = Field(None, description="a separate storage fabric (frontend.storage: separate)")
    storage_nodes: Servers | None = None
    management_nodes: Servers | None = None
    oob: Oob | None = Field(None, description="OOB management and console network; absent: not built")
    management_platform: Appliances | None = Field(None, description="e.g. a Nexus Dashboard cluster: a BOM line item")
    layout: Layout | None = Field(None, description="racks and rows; absent: no cable lengths, media as the intent or catalog default")
    bom: BomOptions = BomOptions()

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        return check_name(value, "fabric name")

    @model_validator(mode="after")
    def _storage_fabric_wanted(self) -> Intent:
        separate = self.frontend is not None and self.frontend.storage == "separate"
        if self.storage is not None and not separate:
            raise ValueError("a 'storage' fabric is only built with frontend.storage: separate; remove it or set that")
        return self

    def storage_fabric(self) -> HostFabric | None:
        """The fabric storage ports attach to: the frontend when converged, else its own."""
        if self.frontend is None:
            return None
        if self.frontend.storage == "converged":
            return self.frontend
        return self.storage or StorageFabric.model_validate({})

    @model_validator(mode="after")
    def _gpus_or_nodes(self) -> Intent:
        if (self.gpus is None) == (self.nodes is None):
            raise ValueError("give exactly one of 'gpus' (total GPU count) or 'nodes' (GPU node count)")
        return self
