"""The intent schema: what an engineer writes. Every field has a default except the GPU count.

Units are in the names (`_ms`, `_kbytes`, `_percent`); speeds are written like 400G; ratios are
downlink:uplink bandwidth like "1:1", "3:1" or "1:2".
"""

from __future__ import annotations

import re
from fractions import Fraction
from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from fabricgen.basics.models import InputModel
from fabricgen.basics.trust import (
    HOSTNAME,
    HOSTNAME_SCHEMA,
    SAYS,
    Hostname,
    Pid,
    Text,
    check_hostname,
    check_pattern,
)
from fabricgen.basics.units import Network, Ratio, Speed, SpeedKey
from fabricgen.catalog.model import Nos, Release
from fabricgen.intent.management import BgpSecurity, Management
from fabricgen.nos import registry

# trust's RFC 1123 label, anchored for the design's .match(): a device name becomes a hostname and
# a file name, so nothing that could escape a directory
NAME_PATTERN = re.compile(rf"^{HOSTNAME.pattern}$")

# Upper bounds no real cluster reaches: a count past them is a typo or an attack, and would
# otherwise cost minutes and gigabytes before any check could say so (README: "Bad input").
MAX_GPUS = 262_144  # 8x today's largest single fabrics
MAX_SWITCHES = 65_536  # of one role
MAX_SERVERS = 65_536  # storage or management nodes
MAX_PLANES = 64
MAX_TENANTS = 256
MAX_CATALOG_FILES = 64
MAX_ASN = 4_294_967_295
MAX_BUFFER_KBYTES = 10_000_000  # 10 GB: more than the deepest switch buffer
# An ECN or PFC threshold is bytes queued at one port; more than the port carries in 10 ms (a
# 400G port: 500 MB, 40 times the default ECN maximum) is not a threshold any buffer reaches.
THRESHOLD_KBYTES_PER_GBPS = 1250
BufferKbytes = Annotated[int, Field(ge=1, le=MAX_BUFFER_KBYTES)]

# What these strings may be, for the JSON Schema (`fabricgen schema`); the validators below judge.
NAMING_FIELDS = ("index", "su", "rail", "node", "pod", "plane")
FabricName = Annotated[str, WithJsonSchema({**HOSTNAME_SCHEMA, "examples": ["cluster-512-gpu"]})]
TenantName = Annotated[str, Field(max_length=11), WithJsonSchema({**HOSTNAME_SCHEMA, "maxLength": 11})]
NamePattern = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": rf"^(?:[A-Za-z0-9-]|\{{(?:{'|'.join(NAMING_FIELDS)})(?::0?[1-9]?d)?\}})+$",
            SAYS: "letters, digits and '-', with fields in braces: "
            + ", ".join(f"{{{name}}}" for name in NAMING_FIELDS)
            + ", each may be zero-padded ({index:02d})",
        }
    ),
]
NodeRange = Annotated[
    str,
    Field(max_length=40),
    WithJsonSchema(
        {"type": "string", "maxLength": 40, "pattern": r"^\s*[0-9]{1,7}\s*(?:-\s*[0-9]{1,7}\s*)?$", SAYS: "a node number (5) or a range of them (1-16)"}
    ),
]
RouteTarget = Annotated[
    str,
    Field(max_length=40),
    WithJsonSchema({"type": "string", "pattern": r"^[0-9]{1,5}:[0-9]{1,10}$", SAYS: "ASN:number, such as 65000:50001", "examples": ["65000:50001"]}),
]


def check_name(value: str, what: str = "name") -> str:
    if not NAME_PATTERN.match(value):
        raise ValueError(f"{what} {value!r} must be 1-63 letters, digits or '-', not starting or ending with '-' (it becomes a hostname and a file name)")
    return value


def _nos_choices_described(schema: dict) -> None:
    """The description of a switch role's `nos`, naming the NOSes registered when the schema is made."""
    choices = " or ".join(", ".join(f"{name} ({package.DESCRIPTION})" for name, package in registry.plugins().items()).rsplit(", ", 1))
    schema["description"] = f"operating system the configs are written for: {choices}; the model must run it"


class SwitchRole(InputModel):
    """The switches of one role (leaf, spine, core, OOB): which model, which NOS and release."""

    model: Pid = Field("N9K-C9364D-GX2A", description="switch model (PID) from the catalog, e.g. N9K-C9364D-GX2A")
    nos: Nos = Field(registry.default_name(), json_schema_extra=_nos_choices_described)
    nos_release: Release | None = Field(
        None, description="target release, e.g. 10.5(3)F or 10.5 (NX-OS), 202411 or master (SONiC); default: the catalog's for the model"
    )
    count: int | None = Field(
        None,
        ge=1,
        le=MAX_SWITCHES,
        description="how many to build: used where the design has a choice, refused where it needs more; default: what the design needs",
    )
    management: Management | None = Field(None, description="this role's management settings, where they differ from the network's")


class SpineRole(SwitchRole):
    """The spines: like any role, but `count: 0` builds no spine tier (a spine-free fabric)."""

    count: int | None = Field(
        None,
        ge=0,
        le=MAX_SWITCHES,
        description="how many to build: used where the design has a choice, refused where it needs more; 0: no spines, every node on one "
        "leaf (or leaf pair, or one leaf per rail group); default: what the design needs",
    )


class GrowableRole(SwitchRole):
    """A role whose switches are bought ahead of need (frontend and storage leaves, OOB switches):
    `at_least` builds that many while the design needs fewer, and what the design needs once it
    grows past them, where `count` would be refused."""

    at_least: int | None = Field(
        None,
        ge=1,
        le=MAX_SWITCHES,
        description="build at least this many (as bought), more when the design needs them; instead of count",
    )

    @model_validator(mode="after")
    def _count_or_at_least(self) -> GrowableRole:
        if self.count is not None and self.at_least is not None:
            raise ValueError("give count (exactly this many) or at_least (this many or more), not both")
        return self

    def pinned(self, needed: int) -> int | None:
        """The count to build when the intent sets one: `count` as written, `at_least` raised to
        what the design needs; None when the design chooses."""
        if self.at_least is not None:
            return max(self.at_least, needed)
        return self.count


PEER_LINKS = 2  # the routed links between the two switches of a spine-free pair, by default: one may fail
MAX_PEER_LINKS = 16
PEER_LINKS_DESCRIPTION = (
    "a spine-free pair (spine.count: 0 with two leaves): the routed links between its two switches, each a /31 with an eBGP session, "
    "ECMP over them; they take leaf ports beside the servers'"
)


def _peer_links_need_no_spines(spine_count: int | None, given: set[str]) -> None:
    """peer_links written where no spine-free pair is asked for is a mistake: refused, not ignored."""
    if "peer_links" in given and spine_count != 0:
        raise ValueError("peer_links apply to a spine-free pair (spine.count: 0); set spine.count: 0 or remove peer_links")


class Bfd(InputModel):
    """BFD beside every BGP session, so a dead link is noticed in about interval x multiplier."""

    enabled: bool = Field(True, description="run BFD on the fabric's BGP sessions")
    interval_ms: int = Field(150, ge=50, le=999, description="transmit interval in milliseconds")
    min_rx_ms: int = Field(150, ge=50, le=999, description="slowest receive interval accepted from the peer, in milliseconds")
    multiplier: int = Field(3, ge=1, le=50, description="packets missed before the session is declared down")


class AsnPlan(InputModel):
    """RFC 7938: one ASN shared by the spines, a unique ASN per leaf. With 3 tiers: one ASN
    shared by the cores, one per pod shared by its spines, and leaves unique across the fabric or
    (`leaves: per-pod`) the same set reused in every pod, accepted back with allowas-in."""

    scheme: Literal["private-2byte", "private-4byte"] = Field(
        "private-2byte",
        description="private-2byte: ASNs from 64512-65534 (1,023 of them); private-4byte: from 4200000000-4294967294, for fabrics with more leaves",
    )
    spine: int | None = Field(
        None, ge=1, le=MAX_ASN, description="default: the first ASN of the scheme's private range (3 tiers: after the cores'; pod n gets spine + n - 1)"
    )
    leaf_first: int | None = Field(
        None, ge=1, le=MAX_ASN, description="the first leaf's ASN; the next leaves count up from it; default: the ASN after the spines'"
    )
    core: int | None = Field(None, ge=1, le=MAX_ASN, description="3 tiers: the cores' ASN; default: the first ASN of the scheme's private range")
    leaves: Literal["unique", "per-pod"] = Field("unique", description="3 tiers: per-pod reuses the same leaf ASNs in every pod (leaves then need allowas-in)")


class _DisjointPools(InputModel):
    """Address pools of one network: every field is a network (or unset), and none overlaps another."""

    @model_validator(mode="after")
    def _disjoint(self) -> _DisjointPools:
        named = [(name, value) for name, value in self if value is not None]
        for i, (name_a, a) in enumerate(named):
            for name_b, b in named[i + 1 :]:
                if a.overlaps(b):
                    raise ValueError(f"pools {name_a} ({a}) and {name_b} ({b}) overlap; give each its own range")
        return self


class Pools(_DisjointPools):
    """The backend's IPv4 address pools; none may overlap another."""

    loopbacks: Network = Field(IPv4Network("10.0.0.0/16"), description="a loopback (router ID, BGP source) per switch")
    vteps: Network = Field(IPv4Network("10.1.0.0/16"), description="a VTEP loopback per leaf (routing: vxlan-evpn)")
    gpu_nics: Network = Field(IPv4Network("10.4.0.0/14"), description="GPU NIC addresses: a /31 per NIC (p2p), a subnet per leaf (subnet) or per EVPN segment")
    fabric_links: Network = Field(IPv4Network("10.8.0.0/13"), description="a /31 per leaf-spine (and spine-core) link")


class EcnThresholds(InputModel):
    """WRED with ECN on the lossless queue: marking starts at min_kbytes queued and rises to
    drop_probability percent at max_kbytes (above it every packet is marked)."""

    min_kbytes: int = Field(ge=1, le=MAX_BUFFER_KBYTES, description="queue depth in KB where ECN marking starts")
    max_kbytes: int = Field(ge=1, le=MAX_BUFFER_KBYTES, description="queue depth in KB where marking reaches drop_probability; must stay below the PFC trigger")
    drop_probability: int = Field(ge=1, le=100, description="percent marked at max_kbytes")

    @model_validator(mode="after")
    def _min_below_max(self) -> EcnThresholds:
        if self.min_kbytes >= self.max_kbytes:
            raise ValueError(f"min_kbytes ({self.min_kbytes}) must be below max_kbytes ({self.max_kbytes})")
        return self


def default_ecn(speed_gbps: int) -> EcnThresholds:
    """The fallback for a switch model that publishes none: Cisco's 100G starting point, 150 KB /
    3000 KB / 7 % (DOMAIN: Cisco's AI/ML blueprint), scaled down below 100G but not up above it:
    the maximum must stay under the platform's pause point, which does not grow with port speed."""
    scale = min(speed_gbps, 100)
    return EcnThresholds(min_kbytes=max(1, 150 * scale // 100), max_kbytes=max(2, 3000 * scale // 100), drop_probability=7)


class PfcWatchdog(InputModel):
    """Detects a lossless queue stuck in PAUSE (a PFC storm) and stops it spreading."""

    enabled: bool = Field(True, description="watch every lossless queue for PFC storms")
    poll_interval_ms: int = Field(100, ge=100, le=1000, description="how often the queues are checked; detection_ms and restoration_ms are multiples of it")
    detection_ms: int = Field(200, ge=100, le=5000, description="a queue paused this long is declared stormed")
    restoration_ms: int = Field(400, ge=100, le=60000, description="quiet time before the queue is restored")
    action: Literal["drop", "forward", "alert"] = Field("drop", description="on a storm: drop the queue's packets, forward them ignoring PAUSE, or only alert")

    @model_validator(mode="after")
    def _multiples_of_poll(self) -> PfcWatchdog:
        for name in ("detection_ms", "restoration_ms"):
            if getattr(self, name) % self.poll_interval_ms:
                raise ValueError(f"{name} must be a multiple of poll_interval_ms ({self.poll_interval_ms})")
        return self


class Qos(InputModel):
    """RoCEv2 lossless profile: RoCE data on a PFC priority with ECN, CNPs strict priority."""

    enabled: bool = Field(True, description="write the lossless QoS profile (classification, PFC, ECN, queuing) on every switch and host")
    roce_dscp: list[int] = Field([24, 26], min_length=1, max_length=64, description="DSCP values (0-63) the NICs mark RoCE data with")
    # 1-7: queue 0 is where all other traffic goes (NX-OS's q-default), never a class of its own
    lossless_priority: int = Field(3, ge=1, le=7, description="traffic class, PFC priority and queue for RoCE")
    cnp_dscp: list[int] = Field([48], min_length=1, max_length=64, description="DSCP values (0-63) of congestion notification packets (CNP)")
    cnp_priority: int = Field(7, ge=1, le=7, description="strict-priority queue for congestion notifications")
    storage_dscp: list[int] = Field([], max_length=64, description="optional second lossless class, e.g. NVMe over RoCE")
    storage_priority: int | None = Field(None, ge=1, le=7, description="PFC priority, traffic class and queue of the storage class (with storage_dscp)")
    lossless_bandwidth_percent: int = Field(
        50, ge=1, le=99, description="the RoCE class's guaranteed share of the bandwidth left after the strict-priority queue"
    )
    storage_bandwidth_percent: int = Field(20, ge=1, le=98, description="the storage class's share (with storage_dscp)")
    # Only the speeds the intent writes; the others come from each switch model's catalog data
    # (fabricgen.compiler.qos.lossless_thresholds), or fabricgen's generic defaults where it has none.
    ecn: dict[SpeedKey, EcnThresholds] = Field(
        {},
        description="ECN thresholds per port speed, e.g. {400G: {min_kbytes: ..., max_kbytes: ..., drop_probability: ...}}; unwritten speeds: the switch model's published values",
    )
    pfc_trigger_kbytes: dict[SpeedKey, BufferKbytes] = Field(
        {},
        description="per port speed: ingress occupancy of a lossless class at which PAUSE is sent; ECN max must stay below",
    )
    pause_thresholds: Literal["long-links", "always"] = Field(
        "long-links",
        description="NX-OS: an ingress pause policy (pause buffer-size) on lossless ports whose cable exceeds 100 m, or on all",
    )
    pfc_watchdog: PfcWatchdog = Field(PfcWatchdog(), description="PFC storm detection and what to do about one")
    cable_length_m: int = Field(100, ge=1, le=10000, description="assumed for lossless headroom where the layout gives no cable length")

    @field_validator("pfc_trigger_kbytes")
    @classmethod
    def _trigger_over_defaults(cls, value: dict[int, int]) -> dict[int, int]:
        for speed, kbytes in value.items():
            if kbytes < 1:
                raise ValueError(f"pfc_trigger_kbytes at {speed}G must be positive")
        return value

    @model_validator(mode="after")
    def _thresholds_a_port_can_reach(self) -> Qos:
        thresholds = [(f"ecn at {speed}G", speed, ecn.max_kbytes) for speed, ecn in self.ecn.items()]
        thresholds += [(f"pfc_trigger_kbytes at {speed}G", speed, kbytes) for speed, kbytes in self.pfc_trigger_kbytes.items()]
        for what, speed, kbytes in thresholds:
            if kbytes > speed * THRESHOLD_KBYTES_PER_GBPS:
                raise ValueError(
                    f"{what}: {kbytes:,} KB is more than a {speed}G port carries in 10 ms ({speed * THRESHOLD_KBYTES_PER_GBPS:,} KB); no switch queues that much at one port"
                )
        return self

    def ecn_at(self, speed_gbps: int) -> EcnThresholds:
        """The intent's thresholds for this port speed, or the generic default (without the
        platform's published values: fabricgen.compiler.qos.lossless_thresholds has those)."""
        return self.ecn.get(speed_gbps) or default_ecn(speed_gbps)

    @field_validator("roce_dscp", "cnp_dscp", "storage_dscp")
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
        if bool(self.storage_dscp) != (self.storage_priority is not None):
            raise ValueError("a storage class needs both storage_dscp and storage_priority (or neither)")
        if self.storage_priority is not None:
            if self.storage_priority in (self.lossless_priority, self.cnp_priority):
                raise ValueError("storage_priority must differ from lossless_priority and cnp_priority")
            if set(self.storage_dscp) & (set(self.roce_dscp) | set(self.cnp_dscp)):
                raise ValueError("storage_dscp shares a value with roce_dscp or cnp_dscp")
            if self.lossless_bandwidth_percent + self.storage_bandwidth_percent >= 100:
                raise ValueError("lossless_bandwidth_percent + storage_bandwidth_percent must leave room for other traffic (< 100)")
        return self


class QosOverride(InputModel):
    """Per-switch differences from the fabric's QoS profile, e.g. a platform generation that needs
    other ECN thresholds during a migration. Every path is still checked end to end: an override
    that breaks agreement with a neighbour (priority, DSCP) is rejected, naming the hop."""

    lossless_priority: int | None = Field(None, ge=1, le=7, description="this switch's RoCE priority and queue")
    roce_dscp: list[int] | None = Field(None, max_length=64, description="this switch's RoCE DSCP values")
    cnp_priority: int | None = Field(None, ge=1, le=7, description="this switch's CNP queue")
    cnp_dscp: list[int] | None = Field(None, max_length=64, description="this switch's CNP DSCP values")
    ecn: dict[SpeedKey, EcnThresholds] | None = Field(None, description="ECN thresholds per port speed; merged over the fabric's")
    pfc_trigger_kbytes: dict[SpeedKey, BufferKbytes] | None = Field(None, description="PAUSE thresholds per port speed; merged over the fabric's")
    pfc_watchdog: PfcWatchdog | None = Field(None, description="this switch's PFC watchdog, replacing the fabric's")

    def apply(self, base: Qos) -> Qos:
        """The base profile with this override's fields, validated as a whole profile. Per-speed
        tables merge: an override naming 400G keeps the fabric's values at the other speeds."""
        # a field left empty (None) overrides nothing
        changes = {name: getattr(self, name) for name in self.model_fields_set if getattr(self, name) is not None}
        for name in ("ecn", "pfc_trigger_kbytes"):
            if name in changes:
                changes[name] = {**getattr(base, name), **changes[name]}
        return Qos.model_validate({**dict(base), **changes})


HashField = Literal["src-ip", "dst-ip", "protocol", "src-port", "dst-port", "ipv6-flow-label", "inner"]


class LoadBalancing(InputModel):
    """How a switch spreads traffic over equal-cost uplinks.

    ecmp: a hash of `hash_fields` per flow (no reordering; elephant flows can collide);
    flowlet: dynamic load balancing, a flow may move to the least-loaded uplink after an idle
    gap longer than `flowlet_gap_us` (no reordering if the gap exceeds the path skew);
    per-packet: spraying, each packet to the least-loaded uplink (best balance, reorders: the
    receiving NIC must tolerate out-of-order RoCE packets)."""

    mode: Literal["ecmp", "flowlet", "per-packet"] = Field(
        "ecmp", description="ecmp: a hash per flow; flowlet: dynamic load balancing of flowlets; per-packet: spraying (the NICs must tolerate reordering)"
    )
    hash_fields: list[HashField] = Field(
        ["src-ip", "dst-ip", "protocol", "src-port", "dst-port"],
        min_length=1,
        description="ECMP hash inputs; RoCEv2's entropy is its UDP source port",
    )
    flowlet_gap_us: int = Field(500, ge=1, le=100000, description="idle gap that starts a new flowlet")

    @field_validator("hash_fields")
    @classmethod
    def _no_repeats(cls, values: list[str]) -> list[str]:
        if len(set(values)) != len(values):
            raise ValueError("a hash field is listed twice")
        return values


class Optics(InputModel):
    """Transceiver PIDs; default: the catalog's default for each cage."""

    host_links: Pid | None = Field(None, description="transceiver PID at the switch end of host links (GPU NICs, servers)")
    fabric_links: Pid | None = Field(None, description="transceiver PID at both ends of leaf-spine (and spine-core) links")


_NODE_RANGE = re.compile(r"^\s*(\d{1,7})\s*(?:-\s*(\d{1,7}))?\s*$")


class Tenant(InputModel):
    """A tenant VRF: its own L3 VNI (symmetric IRB) and route-target. `nodes` picks the GPU
    nodes whose NICs sit in its segments, as 1-based node numbers like "1-32"; the tenant
    without `nodes` gets every node no other tenant names."""

    name: TenantName = Field(description="becomes the VRF Vrf-<name>: SONiC VRF names start with Vrf, Linux allows 15 characters")
    nodes: NodeRange | None = Field(None, description='GPU nodes of this tenant, 1-based: "5" or "1-32"; absent: every node no other tenant names')
    l3_vni: int | None = Field(None, ge=1, le=16777214, description="the tenant VRF's L3 VNI; default: evpn.l3_vni_base + tenant number")
    route_target: RouteTarget | None = Field(None, description="the tenant's route-target, ASN:NN; default: route_target_asn:l3_vni")

    @field_validator("name")
    @classmethod
    def _safe(cls, value: str) -> str:
        return check_name(value, "tenant name")

    @field_validator("nodes")
    @classmethod
    def _range(cls, value: str | None) -> str | None:
        if value is not None:
            match = _NODE_RANGE.match(value)
            if not match or int(match.group(1)) < 1 or (match.group(2) and int(match.group(2)) < int(match.group(1))):
                raise ValueError(f'nodes {value!r} must be a node number or a range like "1-32" (1-based, first <= last)')
        return value

    @field_validator("route_target")
    @classmethod
    def _route_target(cls, value: str | None) -> str | None:
        if value is not None:
            check_route_target(value)
        return value

    def node_range(self) -> tuple[int, int] | None:
        if self.nodes is None:
            return None
        match = _NODE_RANGE.match(self.nodes)
        assert match is not None
        first = int(match.group(1))
        return first, int(match.group(2) or first)


def check_route_target(value: str) -> str:
    """Type-0 route-target ASN(2 bytes):NN(4 bytes), the form that holds a VNI."""
    parts = value.split(":")
    if (
        len(parts) != 2
        or not all(p.isdigit() and p.isascii() and len(p) <= 10 for p in parts)
        or not (1 <= int(parts[0]) <= 65535 and int(parts[1]) <= 4294967295)
    ):
        raise ValueError(f"route-target {value!r} must be ASN:NN with a 2-byte ASN (1-65535) and NN up to 4294967295")
    return value


class Evpn(InputModel):
    """VXLAN EVPN over the eBGP fabric: one VTEP loopback per leaf, an L2 VNI per segment with an
    anycast gateway, an L3 VNI per tenant VRF. Route-targets are explicit (route_target_asn:VNI):
    auto route-targets embed each leaf's own ASN and would not match across leaves."""

    segments: Literal["per-rail", "per-tenant"] = Field(
        "per-rail", description="per-rail: one segment per rail and tenant; per-tenant: one segment per tenant (backend only)"
    )
    tenants: list[Tenant] = Field(
        default_factory=lambda: [Tenant(name="ai")], min_length=1, max_length=MAX_TENANTS, description="tenant VRFs; default: one tenant 'ai' with every node"
    )
    l2_vni_base: int = Field(10000, ge=1, le=16000000, description="segment n gets VNI l2_vni_base + n")
    l3_vni_base: int = Field(50000, ge=1, le=16000000, description="tenant n gets VNI l3_vni_base + n")
    vlan_base: int = Field(1000, ge=2, le=4000, description="segment n uses VLAN vlan_base + n on its leaves")
    l3_vlan_base: int = Field(3000, ge=2, le=4000, description="tenant n's L3 VNI uses VLAN l3_vlan_base + n")
    route_target_asn: int | None = Field(None, ge=1, le=65535, description="the ASN part of every route-target (2-byte); default: the spines' ASN")
    anycast_gateway_mac: str = Field(
        "02:00:00:00:00:aa",
        pattern=r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$",
        json_schema_extra={SAYS: "a MAC address: six pairs of hex digits separated by ':', such as 02:00:00:00:00:aa"},
        description="the gateway MAC every leaf answers with in every segment",
    )

    @model_validator(mode="after")
    def _tenants(self) -> Evpn:
        names = [t.name for t in self.tenants]
        if len(set(names)) != len(names):
            raise ValueError("two tenants have the same name")
        if sum(1 for t in self.tenants if t.nodes is None) > 1:
            raise ValueError("only one tenant may leave out 'nodes' (it gets every node no other tenant names)")
        return self


class Uplinks(InputModel):
    """A leaf's uplinks as bought: how many and how fast. The count is built as given (no rounding
    to a ratio); the downlink:uplink bandwidth it gives is reported as the built ratio."""

    count: int | None = Field(None, ge=1, le=1024, description="uplinks per leaf; default: as many as the ratio needs, spread evenly over the spines")
    speed: Speed | None = Field(None, description="uplink speed, e.g. 800G; default: the GPU NICs' speed")


class Backend(InputModel):
    """The backend (GPU-to-GPU) network: RoCEv2 only, lossless, routed leaf/spine (or
    leaf/spine/core) built per scalable unit."""

    design: Literal["rail-optimized", "rail-only", "top-of-rack"] = Field(
        "rail-optimized",
        description="rail-optimized: NIC i of every node in a unit to the leaf of rail i, leaves to spines; rail-only: each rail its own "
        "network, no spine tier when a rail fits one leaf (arXiv 2307.12169); top-of-rack: every NIC of a node on one leaf (or a leaf pair)",
    )
    rails_per_leaf: int = Field(1, ge=1, le=64, description="rail-optimized: rails one leaf serves in a unit (1, 2, 4, 8); divides the rails (of a plane)")
    tor_attach: Literal["single", "pair"] = Field(
        "single", description="top-of-rack: every NIC of a node on one leaf (single), or odd NICs on one leaf and even on its pair"
    )
    scalable_unit_gpus: int | None = Field(
        None,
        ge=1,
        le=MAX_GPUS,
        description="GPUs per scalable unit; one leaf per rail per unit; default: as many nodes as one leaf serves at the ratio "
        "(its ports at the NICs' speed, breakouts included), e.g. 32 8-GPU nodes on a 64 x 400G leaf at 1:1",
    )
    ratio: Ratio = Field(Fraction(1), description='leaf downlink:uplink bandwidth: "1:1" is non-blocking, "2:1" oversubscribed, "1:2" undersubscribed')
    uplinks: Uplinks | None = Field(None, description="2 tiers: each leaf's uplinks as bought ({count, speed}); with ratio too, the count must give that ratio")
    leaf: SwitchRole = Field(SwitchRole(), description="the leaf switches (one per rail per scalable unit)")
    spine: SpineRole = Field(SpineRole(), description="the spine switches")
    peer_links: int = Field(PEER_LINKS, ge=1, le=MAX_PEER_LINKS, description=PEER_LINKS_DESCRIPTION)
    tiers: int | None = Field(
        None, ge=2, le=3, description="2 (leaf/spine) or 3 (pods of leaves and spines joined by a core); default: 2 when the cluster fits, else 3"
    )
    core: SwitchRole | None = Field(None, description="3 tiers: the core (super-spine) switches; default: the spines' model and NOS")
    spine_ratio: Ratio = Field(Fraction(1), description="3 tiers: spine downlink:uplink bandwidth toward the cores, written like ratio")
    pod_gpus: int | None = Field(None, ge=1, le=MAX_GPUS, description="3 tiers: GPUs per pod, whole scalable units; default: as many units as a spine takes")
    links_per_spine: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="3 tiers: parallel links from each leaf to each spine of its pod (divides a leaf's uplinks); "
        "default: 1 on a fixed spine, on a chassis spine as many as make the fewest, fullest chassis",
    )
    planes: int = Field(1, ge=1, le=MAX_PLANES, description="independent planes, each a group of rails with its own spines (and cores); divides the rail count")
    routing: Literal["ebgp", "vxlan-evpn"] = Field(
        "ebgp", description="ebgp: a routed fabric, eBGP on every link (RFC 7938); vxlan-evpn: the same underlay with VXLAN EVPN segments and tenant VRFs"
    )
    nic_addressing: Literal["p2p", "subnet"] = Field(
        "p2p", description="p2p: a routed /31 per NIC; subnet: one subnet per leaf behind a VLAN interface (ebgp only)"
    )
    subnet_vlan: int = Field(100, ge=2, le=4094, description="VLAN of the leaf's GPU subnet (nic_addressing: subnet)")
    mtu: int = Field(9216, ge=1500, le=9216, description="MTU of the switch ports, in bytes")
    host_mtu: int = Field(9000, ge=1280, le=9216, description="the NICs' MTU; every hop must carry it (plus 50 bytes over VXLAN)")
    bfd: Bfd = Field(Bfd(), description="BFD on the BGP sessions")
    asn: AsnPlan = Field(AsnPlan(), description="BGP AS numbers")
    pools: Pools = Field(Pools(), description="IPv4 address pools")
    optics: Optics = Field(Optics(), description="transceivers; default: the catalog's for each cage")
    qos: Qos = Field(Qos(), description="the lossless RoCEv2 profile (PFC, ECN, queuing)")
    qos_overrides: dict[Hostname, QosOverride] = Field({}, description="per switch name: the QoS settings where that switch differs from qos")
    load_balancing: LoadBalancing = Field(LoadBalancing(), description="how leaves and spines spread traffic over their uplinks")
    evpn: Evpn = Field(Evpn(), description="segments and tenants (routing: vxlan-evpn)")
    bgp_security: BgpSecurity = Field(BgpSecurity(), description="authentication, GTSM and prefix limits of the BGP sessions")
    management: Management | None = Field(None, description="this network's management settings, where they differ from the cluster's")

    @property
    def core_switch(self) -> SwitchRole:
        return self.core if self.core is not None else SwitchRole(model=self.spine.model, nos=self.spine.nos, nos_release=self.spine.nos_release)

    @model_validator(mode="after")
    def _three_tier_settings(self) -> Backend:
        if self.tiers == 2:
            wrong = sorted({"core", "spine_ratio", "pod_gpus", "links_per_spine"} & self.model_fields_set)
            if wrong:
                raise ValueError(f"{', '.join(wrong)} only apply to 3 tiers; remove them or set tiers: 3")
        if self.tiers == 3 and self.uplinks is not None:
            raise ValueError(
                "uplinks (count and speed per leaf) apply to 2 tiers only; remove uplinks for 3 tiers (ratio and spine_ratio size them), or set tiers: 2"
            )
        if self.spine.count == 0 and (self.tiers is not None or self.uplinks is not None):
            raise ValueError(
                f"spine.count: 0 builds one tier with no uplinks; remove {f'tiers: {self.tiers}' if self.tiers is not None else 'uplinks'} or the spine count"
            )
        _peer_links_need_no_spines(self.spine.count, self.model_fields_set)
        if self.pod_gpus is not None and self.scalable_unit_gpus is not None and self.pod_gpus % self.scalable_unit_gpus:
            raise ValueError(f"pod_gpus ({self.pod_gpus}) must be a whole number of scalable units of {self.scalable_unit_gpus} GPUs")
        return self

    @model_validator(mode="after")
    def _design_settings(self) -> Backend:
        given = self.model_fields_set
        if self.design == "rail-only":
            if self.rails_per_leaf != 1:
                raise ValueError(
                    "rail-only keeps every rail on leaves of its own (a leaf with several rails joins them in the switch); "
                    "remove rails_per_leaf, or use design: rail-optimized with rails_per_leaf"
                )
            if "planes" in given:
                raise ValueError("rail-only makes every rail its own network (planes = rails when a rail needs several leaves); remove planes")
        if self.design == "top-of-rack":
            wrong = sorted({"rails_per_leaf", "planes"} & given)
            if wrong:
                raise ValueError(
                    f"top-of-rack puts every NIC of a node on its own leaf (or leaf pair), so {' and '.join(wrong)} cannot apply; "
                    "remove them, or use design: rail-optimized"
                )
        elif "tor_attach" in given:
            raise ValueError("tor_attach only applies to design: top-of-rack")
        return self

    @model_validator(mode="after")
    def _evpn_addressing(self) -> Backend:
        if self.routing == "vxlan-evpn" and "nic_addressing" in self.model_fields_set:
            raise ValueError("with routing: vxlan-evpn the NICs are addressed by their EVPN segment; remove nic_addressing")
        return self


class HostPools(_DisjointPools):
    """A frontend or storage fabric's IPv4 address pools; none may overlap another. Given, the
    section replaces the default pools whole: write every pool."""

    loopbacks: Network = Field(description="a loopback (router ID, BGP source) per switch")
    vteps: Network | None = Field(None, description="a VTEP loopback per leaf (routing: vxlan-evpn)")
    hosts: Network = Field(description="server ports on the leaves: a /31 per port, or a subnet per leaf")
    fabric_links: Network = Field(description="a /31 per leaf-spine (and spine-core) link")


class HostFabric(InputModel):
    """A frontend or storage leaf/spine fabric. Servers attach with the ports their catalog entry
    lists; each server's ports are spread over a pair of leaves (or all on one leaf)."""

    leaf: GrowableRole = Field(GrowableRole(model="N9K-C93600CD-GX"), description="the leaf switches the servers attach to")
    spine: SpineRole = Field(
        SpineRole(), description="the spine switches; count: 0 builds a collapsed pair (two leaves joined by routed peer links, no spines)"
    )
    peer_links: int = Field(PEER_LINKS, ge=1, le=MAX_PEER_LINKS, description=PEER_LINKS_DESCRIPTION)
    tiers: int | None = Field(
        None, ge=2, le=3, description="2 (leaf/spine) or 3 (pods of leaves and spines joined by a core); default: 2 when the spines take every leaf, else 3"
    )
    core: SwitchRole | None = Field(None, description="3 tiers: the core (super-spine) switches; default: the spines' model and NOS")
    spine_ratio: Ratio = Field(Fraction(1), description="3 tiers: spine downlink:uplink bandwidth toward the cores, written like ratio")
    pod_leaves: int | None = Field(
        None, ge=1, le=MAX_SWITCHES, description="3 tiers: leaves per pod (whole leaf pairs with attach: leaf-pair); default: as many as a spine takes"
    )
    ratio: Ratio = Field(Fraction(1), description='leaf downlink:uplink bandwidth: "1:1" is non-blocking, "2:1" oversubscribed, "1:2" undersubscribed')
    attach: Literal["leaf-pair", "single-leaf"] = Field(
        "leaf-pair", description="leaf-pair: a server's ports alternate between two leaves, so one leaf can fail"
    )
    host_addressing: Literal["p2p", "subnet"] = Field(
        "p2p", description="p2p: a routed /31 per server port; subnet: one subnet per leaf behind a VLAN interface"
    )
    subnet_vlan: int = Field(100, ge=2, le=4094, description="VLAN of each leaf's server subnet (host_addressing: subnet)")
    mtu: int = Field(9216, ge=1500, le=9216, description="MTU of the switch ports, in bytes")
    host_mtu: int = Field(9000, ge=1280, le=9216, description="the servers' MTU; every hop must carry it (plus 50 bytes over VXLAN)")
    bfd: Bfd = Field(Bfd(), description="BFD on the BGP sessions")
    asn: AsnPlan = Field(description="BGP AS numbers")
    pools: HostPools = Field(description="IPv4 address pools")
    optics: Optics = Field(Optics(), description="transceivers; default: the catalog's for each cage")
    qos: Qos = Field(Qos(enabled=False), description="off by default; enable to carry storage (e.g. NVMe over RoCE) on a PFC priority")
    qos_overrides: dict[Hostname, QosOverride] = Field({}, description="per switch name: the QoS settings where that switch differs from qos")
    load_balancing: LoadBalancing = Field(LoadBalancing(), description="how leaves and spines spread traffic over their uplinks")
    routing: Literal["ebgp", "vxlan-evpn"] = Field(
        "ebgp", description="ebgp: a routed fabric, eBGP on every link (RFC 7938); vxlan-evpn: the same underlay with a VXLAN EVPN segment per tenant"
    )
    evpn: Evpn = Field(Evpn(tenants=[Tenant(name="servers")]), description="tenants (routing: vxlan-evpn); one segment per tenant")
    bgp_security: BgpSecurity = Field(BgpSecurity(), description="authentication, GTSM and prefix limits of the BGP sessions")
    management: Management | None = Field(None, description="this network's management settings, where they differ from the cluster's")

    @property
    def core_switch(self) -> SwitchRole:
        return self.core if self.core is not None else SwitchRole(model=self.spine.model, nos=self.spine.nos, nos_release=self.spine.nos_release)

    @model_validator(mode="after")
    def _three_tier_settings(self) -> HostFabric:
        if self.tiers == 2:
            wrong = sorted({"core", "spine_ratio", "pod_leaves"} & self.model_fields_set)
            if wrong:
                raise ValueError(f"{', '.join(wrong)} only apply to 3 tiers; remove them or set tiers: 3")
        return self

    @model_validator(mode="after")
    def _collapsed_pair(self) -> HostFabric:
        """spine.count: 0 is one pair of leaves with a server's ports on both: no tier above."""
        _peer_links_need_no_spines(self.spine.count, self.model_fields_set)
        if self.spine.count == 0:
            if self.attach != "leaf-pair":
                raise ValueError("spine.count: 0 builds a collapsed pair, each server on both leaves; use attach: leaf-pair or remove the spine count")
            if self.tiers == 3 or {"core", "spine_ratio", "pod_leaves"} & self.model_fields_set:
                raise ValueError("spine.count: 0 builds one tier with no uplinks; remove tiers: 3 (and core, spine_ratio, pod_leaves) or the spine count")
        return self

    @model_validator(mode="after")
    def _evpn_settings(self) -> HostFabric:
        if self.routing == "vxlan-evpn":
            if self.pools.vteps is None:
                raise ValueError("routing: vxlan-evpn needs pools.vteps (a VTEP loopback per leaf)")
            if "host_addressing" in self.model_fields_set:
                raise ValueError("with routing: vxlan-evpn servers are addressed by their EVPN segment; remove host_addressing")
            if self.evpn.segments != "per-rail" or "segments" in self.evpn.model_fields_set:
                raise ValueError("a frontend or storage fabric has one segment per tenant; remove evpn.segments")
        return self


# The frontend and storage fabrics' defaults differ only in their ASNs and pools, each apart from
# the backend's (10.0.0.0/12) and from each other's, so all three can share the management core.
class Frontend(HostFabric):
    """The frontend (and converged storage) network: users, applications and storage reach the
    nodes' frontend ports through it."""

    asn: AsnPlan = Field(AsnPlan(spine=65000, leaf_first=65001), description="BGP AS numbers")
    pools: HostPools = Field(
        HostPools(
            loopbacks=IPv4Network("10.16.0.0/16"),
            vteps=IPv4Network("10.17.0.0/16"),
            hosts=IPv4Network("10.20.0.0/14"),
            fabric_links=IPv4Network("10.24.0.0/14"),
        ),
        description="IPv4 address pools; given, the section replaces the defaults whole",
    )
    storage: Literal["converged", "separate"] = Field(
        "converged", description="converged: storage ports share the frontend fabric (as the whitepaper); separate: a storage fabric of its own"
    )


class StorageFabric(HostFabric):
    """A storage network of its own (frontend.storage: separate) between the nodes' storage ports
    and the storage servers."""

    asn: AsnPlan = Field(AsnPlan(spine=65200, leaf_first=65201), description="BGP AS numbers")
    pools: HostPools = Field(
        HostPools(
            loopbacks=IPv4Network("10.32.0.0/16"),
            vteps=IPv4Network("10.33.0.0/16"),
            hosts=IPv4Network("10.36.0.0/14"),
            fabric_links=IPv4Network("10.40.0.0/14"),
        ),
        description="IPv4 address pools; given, the section replaces the defaults whole",
    )


class Servers(InputModel):
    """Storage or management servers: a catalog model and how many. Their ports attach to the
    frontend (or storage) fabric and the OOB network as the catalog entry lists them."""

    model: Pid = Field(description="server model (PID) from the catalog, e.g. AFF-A90 or UCSC-C225-M8S")
    count: int = Field(ge=0, le=MAX_SERVERS, description="how many")


class ConsoleServers(InputModel):
    """Console servers whose async serial lines reach every switch's console port."""

    model: Pid = Field("C8300-1N1S-4T2X", description="console server model (PID) from the catalog")
    module: Pid = Field("NIM-24A", description="async serial module, one per slot")
    count: int | None = Field(None, ge=1, le=MAX_SWITCHES, description="optional: at least what the console ports need")


class OobPools(_DisjointPools):
    """The OOB network's IPv4 address pools; none may overlap another."""

    management: Network = Field(IPv4Network("172.16.0.0/16"), description="a subnet per OOB switch for every management port")
    uplinks: Network = Field(IPv4Network("172.31.255.0/24"), description="/31s from OOB switches to the management core")


class Oob(InputModel):
    """Out-of-band management: copper access switches for every mgmt0, BMC, host management NIC,
    PDU and console server; console servers for every switch's console port."""

    switch: GrowableRole = Field(GrowableRole(model="N9K-C93108TC-FX3"), description="the copper OOB access switches (NX-OS only)")
    uplinks: int = Field(2, ge=0, le=64, description="routed uplinks per OOB switch to the management core (the intent's edge)")
    vlan: int = Field(10, ge=2, le=4094, description="access VLAN of the management ports on every OOB switch")
    console: ConsoleServers = Field(ConsoleServers(), description="the console servers")
    pools: OobPools = Field(OobPools(), description="IPv4 address pools")
    management: Management | None = Field(None, description="the OOB switches' management settings, where they differ from the cluster's")


class Appliances(InputModel):
    """Appliances the network does not configure but the BOM lists."""

    model: Pid = Field(description="appliance model (PID) from the catalog's 'appliances', e.g. ND-CLUSTER-L4")
    count: int = Field(1, ge=1, le=1000, description="how many")


class BomOptions(InputModel):
    """How the bill of materials counts."""

    spares_percent: int = Field(0, ge=0, le=100, description="extra optics and cables, rounded up per row")
    counting: Literal["cabled", "populate-all"] = Field(
        "cabled",
        description=(
            "cabled: one optic per cabled switch cage, one cable per link; populate-all: the Cisco AI-cluster "
            "whitepaper's rule, every cage of a switch's port groups that face hosts or leave the fabric "
            "holds an optic and a cable (a group carrying only uplinks to the next tier is counted at that tier)"
        ),
    )


class Layout(InputModel):
    """Where things stand: racks in rows, filled in order. GPU racks hold `gpu_nodes_per_rack`
    nodes; server racks hold storage and management nodes by rack units; network racks hold every
    switch and console server by rack units, and stand where `network_racks` says in the
    sequence of racks. From this every cable gets a length, and the medium that reaches."""

    rack_units: int = Field(42, ge=8, le=60, description="usable rack units per rack")
    racks: int | None = Field(None, ge=1, le=100_000, description="racks available; the build fails if the design needs more")
    racks_per_row: int = Field(10, ge=1, le=1000, description="racks in one row before the next row starts")
    gpu_nodes_per_rack: int = Field(4, ge=1, le=64, description="usually power and cooling, not rack units, set this")
    network_racks: Literal["start", "middle", "end"] = Field("end", description="where the network racks stand in each row sequence")
    rack_width_m: float = Field(0.6, gt=0, le=2, description="width of a rack in metres, for runs along a row")
    row_pitch_m: float = Field(3.0, gt=0, le=20, description="distance from one row to the next (rack depth + aisle)")
    tray_height_m: float = Field(0.5, ge=0, le=5, description="from a rack's top to the overhead cable tray")
    slack_m: float = Field(2.0, ge=0, le=20, description="added to every estimated run for dressing and service loops")
    pdus_per_rack: int = Field(2, ge=0, le=8, description="each PDU's network port is cabled to the OOB network")


def name_from(pattern: str, index: int, su: int = 0, rail: int = 0, node: int = 0, pod: int = 0, plane: int = 0) -> str:
    """A device name from a naming pattern; fields a role does not have are 0."""
    return pattern.format(index=index, su=su, rail=rail, node=node, pod=pod, plane=plane)


class Naming(InputModel):
    """Device name patterns. Fields: {index} (1-based within the role), {su} and {rail} (1-based),
    {node} (1-based within its scalable unit), {pod} and {plane} (1-based; 3-tier and planes)."""

    gpu_node: NamePattern = Field("gpu{index:04d}", description="names of the GPU nodes")
    leaf: NamePattern = Field("be-su{su:02d}-leaf{rail}", description="names of the backend leaves ({rail} is the first rail the leaf serves)")
    spine: NamePattern = Field("be-spine{index:02d}", description="names of the backend spines")
    core: NamePattern = Field("be-core{index:02d}", description="3 tiers: names of the core (super-spine) switches")
    frontend_leaf: NamePattern = Field("fe-leaf{index:02d}", description="names of the frontend leaves")
    frontend_spine: NamePattern = Field("fe-spine{index:02d}", description="names of the frontend spines")
    frontend_core: NamePattern = Field("fe-core{index:02d}", description="3 tiers: names of the frontend core switches")
    storage_leaf: NamePattern = Field("st-leaf{index:02d}", description="names of the storage leaves (frontend.storage: separate)")
    storage_spine: NamePattern = Field("st-spine{index:02d}", description="names of the storage spines")
    storage_core: NamePattern = Field("st-core{index:02d}", description="3 tiers: names of the storage core switches")
    storage_node: NamePattern = Field("storage{index:02d}", description="names of the storage servers")
    management_node: NamePattern = Field("mgmt{index:02d}", description="names of the management servers")
    oob_switch: NamePattern = Field("oob{index:02d}", description="names of the OOB switches")
    console_server: NamePattern = Field("console{index:02d}", description="names of the console servers")

    @field_validator("*")
    @classmethod
    def _pattern_formats(cls, pattern: str) -> str:
        # every name it gives is a hostname: it becomes a file name, a prompt, a BGP description
        return check_pattern(pattern, NAMING_FIELDS, check=check_hostname)


def _intent_as_written(schema: dict) -> None:
    """The JSON Schema of the intent as a file holds it: `name` may be left out (load_intent takes
    the file name), and exactly one of `gpus` and `nodes` is given (`_gpus_or_nodes`)."""
    schema["required"] = [key for key in schema.get("required", ()) if key != "name"]
    if not schema["required"]:
        del schema["required"]
    schema["oneOf"] = [
        {"required": ["gpus"], "properties": {"gpus": {"type": "integer"}}},
        {"required": ["nodes"], "properties": {"nodes": {"type": "integer"}}},
    ]


class Intent(InputModel):
    """An AI cluster as fabricgen builds it: the GPU count (or node count) and the GPU node model;
    the backend fabric; optionally the frontend, storage and OOB networks, the servers they
    carry, the racks and day-0 management. Every field but gpus/nodes has a default."""

    model_config = ConfigDict(json_schema_extra=_intent_as_written)

    name: FabricName = Field(description="fabric name; the build goes to output/<name>/ (default: the file name)")
    description: Text = Field("", description="one line about this cluster, for the summary")
    catalog: list[Text] = Field([], max_length=MAX_CATALOG_FILES, description="extra catalog YAML files, relative to the intent (or under a --catalog-dir)")
    gpus: int | None = Field(None, ge=1, le=MAX_GPUS, description="total GPU count, a whole number of GPU nodes; give this or nodes")
    nodes: int | None = Field(None, ge=1, le=MAX_GPUS, description="GPU node count; give this or gpus")
    gpu_node: Pid = Field("DGX-H100", description="GPU node model from the catalog, e.g. DGX-H100, DGX-H200, DGX-B200")
    naming: Naming = Field(Naming(), description="device name patterns")
    backend: Backend = Field(Backend(), description="the backend (GPU-to-GPU) network")
    frontend: Frontend | None = Field(None, description="frontend (and converged storage) network; absent: not built")
    storage: StorageFabric | None = Field(None, description="a separate storage fabric (frontend.storage: separate)")
    storage_nodes: Servers | None = Field(None, description="storage servers on the storage (or converged frontend) fabric; absent: none")
    management_nodes: Servers | None = Field(None, description="management servers on the frontend and OOB networks; absent: none")
    oob: Oob | None = Field(None, description="OOB management and console network; absent: not built")
    management_platform: Appliances | None = Field(None, description="e.g. a Nexus Dashboard cluster: a BOM line item")
    layout: Layout | None = Field(None, description="racks and rows; absent: no cable lengths, media as the intent or catalog default")
    bom: BomOptions = Field(BomOptions(), description="how the bill of materials counts")
    management: Management | None = Field(
        None,
        description="day-0 management and security of every switch (AAA, SSH, NTP, syslog, SNMPv3, ACLs, boot image); absent: configs a push refuses to replace",
    )

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
