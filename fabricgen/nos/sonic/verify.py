"""What `fabricgen verify` reads of a SONiC build: its config in the layout the driver's
get_config(retrieve="running") gives (driver.py `_labelled`: the config_db JSON, sorted and
indented, then frr.conf, each under a `!` header line), the MTU of each port (config_db PORT
table), and such a config with its secret slots masked. The driver implements every getter itself
(no extensions)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from fabricgen.build.secrets import MASK, mask_config_db, mask_text

NOT_JSON = f"{MASK} (the running config_db is not JSON: not compared)"


def running_config(files: Mapping[str, str]) -> str:
    """config_db.json and frr.conf as one text, in the layout of the driver's running config."""
    return sonic_config_text(files["config_db.json"], files["frr.conf"])


def sonic_config_text(config_db: str, frr: str) -> str:
    """A SONiC switch's config as one text, in the layout fabricgen's SONiC driver gives
    get_config(retrieve="running"): the config_db JSON (sorted, indented) then frr.conf, each under
    a `!` header line (driver.py `_labelled`)."""
    canonical = json.dumps(json.loads(config_db), indent=4, sort_keys=True)
    return f"! config_db (config_db.json)\n{canonical}\n! frr (frr.conf)\n{frr.rstrip()}\n"


def port_mtus(files: Mapping[str, str]) -> dict[str, int]:
    """config_db's PORT|NAME mtu of each port that has one."""
    ports = json.loads(files["config_db.json"]).get("PORT") or {}
    return {port: int(settings["mtu"]) for port, settings in ports.items() if str(settings.get("mtu", "")).isdigit()}


def mask_slots(text: str) -> str:
    """The driver's running config text with every slot masked: the config_db JSON by table and
    field (re-serialised sorted), then frr.conf line by line; a config_db that is not JSON is not
    shown. A text without the config_db header is FRR's alone."""
    head, _, rest = text.partition("\n")
    if not head.startswith("! config_db"):
        return mask_text(text, "frr")
    db, marker, frr = rest.partition("\n! frr")
    try:
        document = json.loads(db)
    except ValueError:
        document = None
    shown = json.dumps(mask_config_db(document), indent=4, sort_keys=True) if isinstance(document, dict) else NOT_JSON
    return f"{head}\n{shown}\n{marker.strip()}{mask_text(frr, 'frr')}"


# What FRR's `show running-config` leaves out as a default, so a build that writes it is no drift:
# - a BFD profile's timers at bfdd's defaults (FRR doc/user/bfd.rst: detect-multiplier 3,
#   receive-interval and transmit-interval 300 ms);
# - `bgp log-neighbor-changes` under `frr defaults datacenter` (bgpd/bgp_vty.c:
#   FRR_CFG_DEFAULT_BOOL(BGP_LOG_NEIGHBOR_CHANGES), true for the datacenter profile only).
# And what it adds: `neighbor X bfd` beside `neighbor X bfd profile P` (FRR 8.4 shows both; seen on
# Debian's 8.4.4 in the lab).
_BFD_PROFILE_DEFAULTS = frozenset({"detect-multiplier 3", "receive-interval 300", "transmit-interval 300"})
_DATACENTER_PROFILE = re.compile(r"^frr defaults datacenter\s*$", re.MULTILINE)
_NEIGHBOR_BFD_PROFILE = re.compile(r"^(neighbor \S+ bfd) profile \S+$")


def as_frr_shows(found: list[str], text: str) -> list[str]:
    """Drift's statements of a SONiC config (`text`) as FRR shows them: defaults left out, the
    implied `neighbor X bfd` added (as one statement, so both sides count it once)."""
    datacenter = _DATACENTER_PROFILE.search(text) is not None
    shown: list[str] = []
    implied: set[str] = set()
    for statement in found:
        *context, last = statement.split(" > ")
        if context[:1] == ["bfd"] and len(context) == 2 and context[1].startswith("profile ") and last in _BFD_PROFILE_DEFAULTS:
            continue
        if datacenter and len(context) == 1 and context[0].startswith("router bgp ") and last == "bgp log-neighbor-changes":
            continue
        if bfd := _NEIGHBOR_BFD_PROFILE.match(last):
            implied.add(" > ".join([*context, bfd.group(1)]))
        shown.append(statement)
    return [statement for statement in shown if statement not in implied]
