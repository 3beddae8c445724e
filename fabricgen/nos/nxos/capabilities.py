"""What the NX-OS adapter can write, asked by the checks before anything renders (no Jinja here):
its load-balancing forms, PFC watchdog numbers, BGP security and management gaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabricgen.nos.interface import FeatureNeed, Gap

# annotations only: the registry imports this package while the intent's models are being defined
if TYPE_CHECKING:
    from fabricgen.catalog.model import SwitchModel
    from fabricgen.intent.management import BgpSecurity, Management
    from fabricgen.intent.model import Backend, HostFabric, LoadBalancing, PfcWatchdog

# `ip load-sharing address` hashes one of these field sets, not a free choice of fields (Cisco
# NX-OS interfaces guide, "Configuring ECMP Load Balancing"). NX-OS has no keyword for the
# protocol on its own; fabricgen pairs it with the L4 ports, which are only read per protocol.
LOAD_SHARING: dict[tuple[str, ...], str] = {
    ("src-ip", "dst-ip", "protocol", "src-port", "dst-port"): "source-destination port source-destination",
    ("src-ip", "dst-ip"): "source-destination",
    ("dst-ip", "protocol", "dst-port"): "destination port destination",
    ("src-ip", "dst-ip", "ipv6-flow-label"): "source-destination ipv6-flowlabel",
}
# `hardware profile dlb` modes (NX-OS 10.5(1)F and later); ecmp is plain `ip load-sharing`
DLB_MODES = ("flowlet", "per-packet")


def watchdog_values(watchdog: PfcWatchdog) -> dict[str, tuple[int, str]]:
    """The PFC watchdog numbers this adapter writes, by their releases.yaml parameter name: the value
    and the intent field (under qos.pfc_watchdog) it comes from. NX-OS counts detection and
    restoration in poll intervals: `shutdown-multiplier` and `auto-restore multiplier`."""
    poll = watchdog.poll_interval_ms
    return {
        "poll-interval": (poll, "poll_interval_ms"),
        "shutdown-multiplier": (watchdog.detection_ms // poll, "detection_ms"),
        "auto-restore-multiplier": (watchdog.restoration_ms // poll, "restoration_ms"),
    }


def load_sharing(fields: Sequence[str]) -> str | None:
    """The `ip load-sharing address` keywords hashing exactly `fields`; None if NX-OS has none."""
    wanted = frozenset(fields)
    return next((keywords for form, keywords in LOAD_SHARING.items() if frozenset(form) == wanted), None)


def load_balancing_gaps(lb: LoadBalancing) -> list[Gap]:
    """What this adapter cannot write of `lb`: every mode it can, not every field set."""
    gaps = []
    if lb.mode not in ("ecmp", *DLB_MODES):
        gaps.append(Gap("mode", f"fabricgen writes no NX-OS config for {lb.mode}", f"use one of: ecmp, {', '.join(DLB_MODES)}"))
    if load_sharing(lb.hash_fields) is None:
        forms = "; ".join(f"[{', '.join(form)}]" for form in LOAD_SHARING)
        gaps.append(
            Gap(
                "hash_fields",
                f"NX-OS cannot hash on exactly {', '.join(lb.hash_fields)}: `ip load-sharing` offers fixed field sets",
                f"use one of the sets NX-OS has: {forms}",
            )
        )
    return gaps


def bgp_security_gaps(security: BgpSecurity) -> list[Gap]:
    """What this adapter cannot write of a network's `bgp_security`.

    NX-OS 10.4(x) has TCP-AO for BGP (Security Configuration Guide 10.4(x), Configuring TCP
    Authentication Option: `key chain NAME tcp`, keys with send-id and recv-id), but fabricgen
    has not confirmed the neighbor command and the algorithm keywords, so it writes none."""
    if security.tcp_ao:
        return [
            Gap(
                "tcp_ao",
                "fabricgen writes no NX-OS TCP-AO yet: the BGP neighbor's `ao` command and the key chain's algorithm keywords are not confirmed",
                "set tcp_ao: false (TCP-MD5 with `password`)",
            )
        ]
    return []


def unrendered(management: Management, features: frozenset[str] = frozenset()) -> list[str]:
    """Settings of the section this adapter writes nothing for (the build says so in its notes):
    a login attempt limit (`login block-for`: its 10.x syntax is unconfirmed), when the intent sets one."""
    if management.access is not None and "login_attempts" in management.access.model_fields_set:
        return ["access.login_attempts (no `login block-for`)"]
    return []


def security_gaps(security: BgpSecurity, management: Management | None) -> list[Gap]:
    """The interface's form of bgp_security_gaps: fields below the network section."""
    return [Gap(f"bgp_security.{gap.field}", gap.message, gap.hint) for gap in bgp_security_gaps(security)]


def feature_needs(management: Management | None) -> list[FeatureNeed]:
    """NX-OS configs use no release feature beyond the ones every NOS is asked about."""
    return []


def model_notes(pid: str, model: SwitchModel, roles: str) -> list[str]:
    """Nothing: the catalog's NX-OS entries are the switch's own port layout."""
    return []


def settings_gaps(spec: Backend | HostFabric) -> list[Gap]:
    """Nothing: NX-OS takes every network setting the intent can ask for."""
    return []


def notes(spec: Backend | HostFabric) -> list[str]:
    """Nothing beyond the notes the checks write for every NOS."""
    return []
