"""What changed between two builds: a semantic summary on top of per-device unified diffs.

`compare_sides(old, new)` takes two opened sides (fabricgen.diff.sides) and returns a `BuildDiff`.
Both sides are verified builds (every file hashed against its manifest when opened), so their
manifests' sha256 say exactly which files differ; only those are compared, so a small change to a
large fabric stays fast. The reports are read through the checked models of `fabricgen.build.build_dir`.

- configs/<dev>* and hosts/<node>/* are diffed per device (unified, `a/` and `b/` paths);
- lab/ holds derived files (FRR routing twins, the lab overlay): counted, not diffed;
- the reports feed the semantic sections: devices and their QoS (topology.json), cables
  (cabling.csv), addresses (ip-plan.csv), the BOM by PID (bom.csv); BGP neighbors come from the
  FRR-syntax configs (SONiC frr.conf, the NX-OS routing twins);
- settings (an MTU, a speed, a QoS threshold) come from the per-device diffs themselves: a removed
  and an added line of one file that are the same but for their values are one setting changed.

"Nothing changed" means the rendered files are identical: two intents (or catalogs) that render
the same fabric are no change; the difference is kept as a note.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricgen.basics.sorting import natural_key
from fabricgen.build.build_dir import AddressRow, BomRow, BuildFiles, CableRow, TopologyNode
from fabricgen.build.secrets import PLACEHOLDER_PATTERN, use_of
from fabricgen.diff.sides import Side

CONTEXT_LINES = 3
REFINE_LIMIT = 250_000  # lines x lines of a replaced block matched again (see _RefinedMatcher)
DEVICE_ATTRIBUTES = ("role", "network", "model", "nos", "nos_release", "asn")
ADDRESS_KEY = ("network", "device", "interface", "kind")
ADDRESS_VALUES = ("address", "gateway", "peer_device", "peer_interface", "peer_address")
CABLE_VALUES = ("a_optic", "b_optic", "cable", "length_m", "speed")
REPORTS = ("topology.json", "cabling.csv", "ip-plan.csv", "bom.csv")


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    status: str  # added, removed, changed
    diff: str  # unified diff, '--- a/path' / '+++ b/path' ('/dev/null' for a missing side)


@dataclass(frozen=True, slots=True)
class FileStat:
    """A file's changed lines, as `git diff --stat` counts them."""

    path: str
    added: int
    removed: int


def file_stat(diff: FileDiff) -> FileStat:
    lines = diff.diff.splitlines()[2:]  # after the --- and +++ header
    return FileStat(diff.path, sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines))


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One setting changed the same way on these devices: `change` is the config line with each
    changed value written old→new (`mtu 9216→9000`), `lines` how many lines say it."""

    change: str
    devices: tuple[str, ...]
    lines: int


@dataclass(frozen=True, slots=True)
class DeviceChange:
    name: str
    status: str  # added, removed, changed
    attributes: dict[str, str]  # the kept side's role, network, model, nos
    changes: tuple[tuple[str, object, object], ...] = ()  # (attribute, old, new) of a kept device


@dataclass(frozen=True, slots=True)
class Cable:
    a: str  # device:port
    b: str
    values: dict[str, str]  # optic, cable, length, speed

    def describe(self) -> str:
        facts = [self.values.get("speed", ""), self.values.get("cable", "")]
        length = self.values.get("length_m")
        if length:
            facts.append(f"{length} m")
        return f"{self.a} — {self.b}" + (f" ({', '.join(f for f in facts if f)})" if any(facts) else "")


@dataclass(frozen=True, slots=True)
class Recabled:
    port: str  # device:port
    old_peer: str
    new_peer: str


@dataclass(frozen=True, slots=True)
class CableChange:
    cable: Cable  # the new side's
    changes: tuple[tuple[str, str, str], ...]  # (column, old, new)


@dataclass
class CablingDelta:
    added: list[Cable] = field(default_factory=list)
    removed: list[Cable] = field(default_factory=list)
    recabled: list[Recabled] = field(default_factory=list)  # ports whose peer changed
    changed: list[CableChange] = field(default_factory=list)  # same ends, other optic/cable/length


@dataclass(frozen=True, slots=True)
class Neighbor:
    address: str
    remote_as: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class BgpChange:
    """One device's BGP neighbors (default VRF) that were added, removed or changed remote-as."""

    device: str
    old_asn: str | None
    new_asn: str | None
    added: tuple[Neighbor, ...] = ()
    removed: tuple[Neighbor, ...] = ()
    changed: tuple[tuple[Neighbor, Neighbor], ...] = ()  # (old, new)


@dataclass(frozen=True, slots=True)
class AddressChange:
    key: tuple[str, ...]  # network, device, interface, kind
    status: str
    old: dict[str, str] | None
    new: dict[str, str] | None

    def changes(self) -> list[tuple[str, str, str]]:
        old, new = self.old or {}, self.new or {}
        return [(name, old.get(name, ""), new.get(name, "")) for name in ADDRESS_VALUES if old.get(name, "") != new.get(name, "")]


@dataclass(frozen=True, slots=True)
class QosChange:
    """One QoS value changed the same way on these switches."""

    value: str  # dotted path in the topology's qos attribute, e.g. ecn.400G.min_kbytes
    old: object
    new: object
    switches: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BomChange:
    pid: str
    description: str
    old: int
    new: int

    @property
    def delta(self) -> int:
        return self.new - self.old


@dataclass(frozen=True, slots=True)
class SecretReferenceChange:
    """A config line that now uses another secret (old -> new), or a secret use added (old None)
    or removed (new None), the same way on these switches. Names only: a build holds no value."""

    use: str  # what the line uses it for (BGP session key, TACACS+ key, ...)
    old: str | None
    new: str | None
    switches: tuple[str, ...]


@dataclass
class BuildDiff:
    old: Side
    new: Side
    device_files: dict[str, list[FileDiff]]  # device -> its rendered files that differ
    derived: list[str]  # lab/ files that differ
    reports: list[str]  # report files that differ
    devices: list[DeviceChange]
    cabling: CablingDelta
    bgp: list[BgpChange]
    addresses: list[AddressChange]
    qos: list[QosChange]
    bom: list[BomChange]
    notes: list[str]
    secrets: list[SecretReferenceChange] = field(default_factory=list)
    settings: list[SettingChange] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.device_files or self.derived or self.reports)

    def counts(self) -> dict[str, dict[str, int]]:
        """The headline numbers, the same in every format."""
        files = [f for diffs in self.device_files.values() for f in diffs]

        def status(items, name):
            return sum(item.status == name for item in items)

        return {
            "devices": {"added": status(self.devices, "added"), "removed": status(self.devices, "removed"), "changed": status(self.devices, "changed")},
            "cables": {
                "added": len(self.cabling.added),
                "removed": len(self.cabling.removed),
                "recabled_ports": len(self.cabling.recabled),
                "changed": len(self.cabling.changed),
            },
            "bgp_neighbors": {
                "added": sum(len(c.added) for c in self.bgp),
                "removed": sum(len(c.removed) for c in self.bgp),
                "changed": sum(len(c.changed) for c in self.bgp),
                "devices": len(self.bgp),
            },
            "addresses": {"added": status(self.addresses, "added"), "removed": status(self.addresses, "removed"), "changed": status(self.addresses, "changed")},
            "qos": {"values": len(self.qos), "switches": len({s for change in self.qos for s in change.switches})},
            "settings": {"changes": len(self.settings), "devices": len({d for change in self.settings for d in change.devices})},
            "bom": {"pids": len(self.bom)},
            "files": {
                "devices": len(self.device_files),
                "added": status(files, "added"),
                "removed": status(files, "removed"),
                "changed": status(files, "changed"),
                "derived": len(self.derived),
                "reports": len(self.reports),
            },
        }


def compare_sides(old: Side, new: Side) -> BuildDiff:
    """Everything that differs between the two sides' rendered files."""
    old_hashes, new_hashes = old.hashes, new.hashes
    differ = sorted(p for p in old_hashes.keys() | new_hashes.keys() if old_hashes.get(p) != new_hashes.get(p))
    device_paths: dict[str, list[str]] = defaultdict(list)
    derived, reports = [], []
    for path in differ:
        device = device_of(path)
        if device is not None:
            device_paths[device].append(path)
        elif path.startswith("lab/"):
            derived.append(path)
        else:
            reports.append(path)
    device_files = {device: [_file_diff(old, new, path) for path in paths] for device, paths in sorted(device_paths.items())}
    changed = set(differ)

    def both(path: str, how: Callable[[BuildFiles], list]) -> tuple[list | None, list | None]:
        """The report's checked rows on each side (None: absent), when it changed."""
        return (old.read(path, how), new.read(path, how)) if path in changed else (None, None)

    old_nodes, new_nodes = (_nodes(nodes) for nodes in both("topology.json", lambda files: files.topology().nodes))
    cabling = _cabling(*both("cabling.csv", BuildFiles.cabling))
    return BuildDiff(
        old=old,
        new=new,
        device_files=device_files,
        derived=derived,
        reports=reports,
        devices=_devices(old_nodes, new_nodes),
        cabling=cabling,
        bgp=_bgp(old, new, changed),
        addresses=_addresses(*both("ip-plan.csv", BuildFiles.ip_plan)),
        qos=_qos(old_nodes, new_nodes),
        bom=_bom(*both("bom.csv", BuildFiles.bom)),
        notes=_notes(old, new, bool(differ)) + spine_count_notes(old_nodes, new_nodes, cabling),
        secrets=secret_references(device_files),
        settings=setting_changes(device_files),
    )


def device_of(path: str) -> str | None:
    """configs/<dev>.cfg, configs/<dev>/*, hosts/<node>/* -> the device; None for other files."""
    parts = path.split("/")
    if parts[0] == "configs" and len(parts) == 2:
        return parts[1].rsplit(".", 1)[0]
    if parts[0] in ("configs", "hosts") and len(parts) >= 3:
        return parts[1]
    return None


def _file_diff(old: Side, new: Side, path: str) -> FileDiff:
    before, after = old.text(path), new.text(path)
    status = "added" if before is None else "removed" if after is None else "changed"
    diff = unified_diff(
        (before or "").splitlines(),
        (after or "").splitlines(),
        "/dev/null" if before is None else f"a/{path}",
        "/dev/null" if after is None else f"b/{path}",
    )
    return FileDiff(path, status, diff)


class _RefinedMatcher(difflib.SequenceMatcher):
    """difflib's matcher, its replaced blocks matched again without the junk heuristic.

    In a config, lines such as `  no switchport` repeat in every interface; difflib (fast, for
    long files) treats them as junk, so they cannot anchor a match and unchanged lines show as
    removed and added. Matching everything without that heuristic is quadratic on a large switch
    config; matching only the small replaced blocks again keeps it fast and the diff minimal."""

    def get_opcodes(self):
        refined: list[tuple[str, int, int, int, int]] = []
        for tag, i1, i2, j1, j2 in super().get_opcodes():
            if tag == "replace" and (i2 - i1) * (j2 - j1) <= REFINE_LIMIT:
                inner = difflib.SequenceMatcher(None, self.a[i1:i2], self.b[j1:j2], autojunk=False).get_opcodes()
                pieces = [(t, i1 + a1, i1 + a2, j1 + b1, j1 + b2) for t, a1, a2, b1, b2 in inner]
            else:
                pieces = [(tag, i1, i2, j1, j2)]
            for piece in pieces:
                if refined and refined[-1][0] == piece[0] == "equal":  # one run of equal lines
                    refined[-1] = ("equal", refined[-1][1], piece[2], refined[-1][3], piece[4])
                else:
                    refined.append(piece)
        return refined


def unified_diff(a: list[str], b: list[str], from_file: str, to_file: str, context: int = CONTEXT_LINES) -> str:
    """Unified diff text ('--- from', '+++ to', hunks); empty when a == b."""
    lines = [f"--- {from_file}", f"+++ {to_file}"]
    for group in _RefinedMatcher(None, a, b).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        lines.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[i1:i2]]
                continue
            lines += ["-" + line for line in a[i1:i2]]
            lines += ["+" + line for line in b[j1:j2]]
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diff writes it (1-based start, length; an empty range at start)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _notes(old: Side, new: Side, differ: bool) -> list[str]:
    notes = [side.note for side in (old, new) if side.note]
    old_intent, new_intent = old.intent or {}, new.intent or {}
    if old.files is not None and new.files is not None:
        if old_intent.get("sha256") != new_intent.get("sha256"):
            renders = "" if differ else "; they render identical files, so this is no change"
            notes.append(
                f"the intents differ ({old_intent.get('file')} sha256 {str(old_intent.get('sha256'))[:12]} vs {new_intent.get('file')} {str(new_intent.get('sha256'))[:12]}){renders}"
            )
        if old.catalog != new.catalog:
            notes.append("the user catalog files differ (manifest `catalog`)")
    return notes


def spine_count_notes(old: dict[str, dict] | None, new: dict[str, dict] | None, cabling: CablingDelta) -> list[str]:
    """A note when the backend's spine count changed and leaves on both sides lost or changed
    uplinks: growth that re-spreads every leaf's uplinks over another spine count, with the pin
    that keeps it additive (the larger design's spine count, built from the start)."""
    if old is None or new is None:
        return []

    def backend(nodes: dict[str, dict], role: str) -> set[str]:
        return {name for name, node in nodes.items() if node.get("role") == role and node.get("network") == "backend"}

    before, after = len(backend(old, "spine")), len(backend(new, "spine"))
    if before == after:
        return []
    kept_leaves = backend(old, "leaf") & backend(new, "leaf")
    moved = {end for cable in cabling.removed for end in (cable.a, cable.b) if end.partition(":")[0] in kept_leaves}
    moved |= {change.port for change in cabling.recabled if change.port.partition(":")[0] in kept_leaves}
    if not moved:
        return []
    leaves = len({port.partition(":")[0] for port in moved})
    return [
        f"the backend spine count changes from {before} to {after}, and {len(moved):,} uplink ports of {leaves} leaves on both sides move to other spines: "
        f"growth that changes the spine count re-spreads every leaf's uplinks; to grow by adding only, pin backend.spine.count: {max(before, after)} "
        "(the larger design's count) in the smaller build too"
    ]


# --- secret references (placeholders in the per-device diffs) --------------------------------------


def secret_references(device_files: dict[str, list[FileDiff]]) -> list[SecretReferenceChange]:
    """Which secret each changed config line refers to, before and after. A removed and an added
    line that are the same but for their placeholders are one reference changed (a BGP key renamed
    from bgp-a to bgp-b); a secret whose line changed for another reason (a TACACS+ server's
    address) is no change of reference."""
    groups: dict[tuple[str, str | None, str | None], list[str]] = defaultdict(list)
    for device, diffs in device_files.items():
        found: set[tuple[str, str | None, str | None]] = set()
        for diff in diffs:
            lines = diff.diff.splitlines()[2:]  # after the --- and +++ header
            removed = [line[1:] for line in lines if line.startswith("-") and PLACEHOLDER_PATTERN.search(line)]
            added = [line[1:] for line in lines if line.startswith("+") and PLACEHOLDER_PATTERN.search(line)]
            found |= _reference_changes(removed, added)
        for key in found:
            groups[key].append(device)
    changes = [SecretReferenceChange(use, old, new, tuple(sorted(devices, key=natural_key))) for (use, old, new), devices in groups.items()]
    return sorted(changes, key=lambda c: (c.use, c.old or "", c.new or ""))


def _reference_changes(removed: list[str], added: list[str]) -> set[tuple[str, str | None, str | None]]:
    def shape(line: str) -> str:
        return PLACEHOLDER_PATTERN.sub("<<secret>>", line)

    def uses(line: str) -> list[tuple[str, str]]:
        return [(use_of(line, m.start()), m.group(1)) for m in PLACEHOLDER_PATTERN.finditer(line)]

    waiting: dict[str, list[str]] = defaultdict(list)
    for line in removed:
        waiting[shape(line)].append(line)
    changes: set[tuple[str, str | None, str | None]] = set()
    gained: list[tuple[str, str]] = []
    for line in added:
        partners = waiting.get(shape(line))
        if not partners:
            gained += uses(line)
            continue
        before = partners.pop(0)
        changes |= {(use, a, b) for (use, a), (_, b) in zip(uses(before), uses(line), strict=True) if a != b}
    lost = [use for lines in waiting.values() for line in lines for use in uses(line)]
    kept = set(lost) & set(gained)  # the same secret on a line that changed otherwise
    changes |= {(use, name, None) for use, name in lost if (use, name) not in kept}
    changes |= {(use, None, name) for use, name in gained if (use, name) not in kept}
    return changes


# --- settings (value changes in the per-device diffs) ----------------------------------------------

_VALUE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_PUNCTUATION = "\"',:;{}[]"  # JSON and YAML around a key or value
MAX_SETTING_TEXT = 120


def setting_changes(device_files: dict[str, list[FileDiff]]) -> list[SettingChange]:
    """The settings the per-device diffs change, grouped: a removed and an added line of one file
    whose words are the same but for their values (numbers that are words of their own, such as
    `mtu 9216`, `"mtu": "9216"`, `bandwidth percent 50`; or a last word without digits, such as
    `fec rs` -> `fec none`) are one setting changed. Names with numbers in them (interfaces,
    devices, addresses) are not values: those changes are the other sections' (cables, addresses).
    One pass over the diff lines: no line is compared with more than its partner."""
    groups: dict[str, list[str]] = defaultdict(list)
    lines: dict[str, int] = defaultdict(int)
    for device, diffs in device_files.items():
        found: set[str] = set()
        for diff in diffs:
            for change in _changed_settings(diff.diff.splitlines()[2:]):
                found.add(change)
                lines[change] += 1
        for change in found:
            groups[change].append(device)
    changes = [SettingChange(change, tuple(sorted(devices, key=natural_key)), lines[change]) for change, devices in groups.items()]
    return sorted(changes, key=lambda c: (-len(c.devices), -c.lines, c.change))


def _changed_settings(lines: list[str]) -> list[str]:
    removed: dict[tuple, list[list[str]]] = defaultdict(list)
    added: list[list[str]] = []
    for line in lines:
        # a line naming a secret is reported under secret references (secret_references), once
        if line.startswith(("-", "+")) and not PLACEHOLDER_PATTERN.search(line):
            words = [word.strip(_PUNCTUATION) for word in line[1:].split()]
            words = [word for word in words if word]
            if words:
                (removed[_shape(words)].append(words) if line[0] == "-" else added.append(words))
    changes = []
    unpaired = []
    for words in added:
        partners = removed.get(_shape(words))
        if partners:
            changes.append(_written(partners.pop(0), words))
        else:
            unpaired.append(words)
    # a word setting (fec rs -> fec none): the same words but the last, which has no digit
    waiting: dict[tuple, list[list[str]]] = defaultdict(list)
    for partners in removed.values():
        for words in partners:
            if not _VALUE.search(words[-1]):
                waiting[tuple(words[:-1])].append(words)
    for words in unpaired:
        partners = waiting.get(tuple(words[:-1]))
        if partners and not _VALUE.search(words[-1]):
            changes.append(_written(partners.pop(0), words))
    return [change for change in changes if change]


def _shape(words: list[str]) -> tuple:
    """The words with each value (a number that is a word of its own) as None: a setting's key."""
    shape = tuple(None if _VALUE.fullmatch(word) else word for word in words)
    return shape if None in shape else ("\0no value",) + shape  # a line without a value pairs with nothing here


def _written(old: list[str], new: list[str]) -> str:
    """`mtu 9216→9000`: the line with each changed word written old→new ('' when nothing differs)."""
    if old == new:
        return ""
    text = " ".join(a if a == b else f"{a}→{b}" for a, b in zip(old, new, strict=True))
    return text if len(text) <= MAX_SETTING_TEXT else text[:MAX_SETTING_TEXT] + "…"


# --- devices and QoS (topology.json) ----------------------------------------------------------------


def _nodes(nodes: list[TopologyNode] | None) -> dict[str, dict] | None:
    if nodes is None:
        return None
    return {node.id: node.model_dump(mode="json", exclude_none=True) for node in nodes}


def _devices(old: dict[str, dict] | None, new: dict[str, dict] | None) -> list[DeviceChange]:
    if old is None and new is None:
        return []
    old, new = old or {}, new or {}

    def attributes(node: dict) -> dict[str, str]:
        return {name: str(node[name]) for name in ("role", "network", "model", "nos", "nos_release") if name in node}

    changes = [DeviceChange(name, "removed", attributes(old[name])) for name in old.keys() - new.keys()]
    changes += [DeviceChange(name, "added", attributes(new[name])) for name in new.keys() - old.keys()]
    for name in old.keys() & new.keys():
        moved = tuple((a, old[name].get(a), new[name].get(a)) for a in DEVICE_ATTRIBUTES if old[name].get(a) != new[name].get(a))
        if moved:
            changes.append(DeviceChange(name, "changed", attributes(new[name]), moved))
    return sorted(changes, key=lambda c: c.name)


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def _qos(old: dict[str, dict] | None, new: dict[str, dict] | None) -> list[QosChange]:
    """Per switch kept on both sides, each QoS value that changed; identical changes grouped."""
    if old is None or new is None:
        return []
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    values: dict[tuple[str, str, str], tuple[object, object]] = {}
    for name in old.keys() & new.keys():
        before, after = old[name].get("qos"), new[name].get("qos")
        if before == after or (before is None and after is None):
            continue
        flat_old, flat_new = _flatten(before or {}), _flatten(after or {})
        for key in flat_old.keys() | flat_new.keys():
            a, b = flat_old.get(key), flat_new.get(key)
            if a != b:
                group = (key, json.dumps(a), json.dumps(b))
                groups[group].append(name)
                values[group] = (a, b)
    changes = [QosChange(key[0], *values[key], tuple(sorted(names))) for key, names in groups.items()]
    return sorted(changes, key=lambda c: (c.value, -len(c.switches), c.switches))


# --- cables (cabling.csv) ---------------------------------------------------------------------------


def _cables(rows: list[CableRow] | None) -> dict[tuple[str, str], Cable]:
    """Cables by their unordered pair of ends (device:port); the cable id is not compared (renumbering)."""
    cables = {}
    for row in rows or ():
        a, b = f"{row.a_device}:{row.a_port}", f"{row.b_device}:{row.b_port}"
        cables[(a, b) if a <= b else (b, a)] = Cable(a, b, {name: getattr(row, name) for name in CABLE_VALUES})
    return cables


def _cabling(old_rows: list[CableRow] | None, new_rows: list[CableRow] | None) -> CablingDelta:
    if old_rows is None and new_rows is None:
        return CablingDelta()
    old, new = _cables(old_rows), _cables(new_rows)
    delta = CablingDelta(
        added=[new[key] for key in sorted(new.keys() - old.keys(), key=natural_key)],
        removed=[old[key] for key in sorted(old.keys() - new.keys(), key=natural_key)],
    )
    for key in sorted(old.keys() & new.keys(), key=natural_key):
        moved = tuple((name, old[key].values[name], new[key].values[name]) for name in CABLE_VALUES if old[key].values[name] != new[key].values[name])
        if moved:
            delta.changed.append(CableChange(new[key], moved))
    old_peer = {end: other for a, b in old for end, other in ((a, b), (b, a))}
    new_peer = {end: other for a, b in new for end, other in ((a, b), (b, a))}
    delta.recabled = [
        Recabled(port, old_peer[port], new_peer[port])
        for port in sorted(old_peer.keys() & new_peer.keys(), key=natural_key)
        if old_peer[port] != new_peer[port]
    ]
    return delta


# --- BGP (FRR-syntax configs) -----------------------------------------------------------------------


def frr_bgp(text: str) -> tuple[str | None, dict[str, Neighbor]]:
    """The default VRF's `router bgp ASN` and its neighbors, each with its remote-as (its own or
    its peer group's) and description. Peer groups themselves are not neighbors."""
    asn = None
    inside = False
    remote: dict[str, str] = {}
    member: dict[str, str] = {}
    described: dict[str, str] = {}
    groups: set[str] = set()
    for line in text.splitlines():
        if not line.startswith(" "):
            words = line.split()
            inside = len(words) == 3 and words[:2] == ["router", "bgp"]  # not `router bgp N vrf X`
            if inside:
                asn = words[2]
            continue
        words = line.split()
        if not inside or len(words) < 3 or words[0] != "neighbor":
            continue
        name, rest = words[1], words[2:]
        if rest == ["peer-group"]:
            groups.add(name)
        elif rest[0] == "description":
            described[name] = " ".join(rest[1:])
        else:  # `remote-as N`, `peer-group G`, `interface [peer-group G] [remote-as N]`
            for keyword, value in itertools.pairwise(rest):
                if keyword == "remote-as":
                    remote[name] = value
                elif keyword == "peer-group":
                    member[name] = value
    neighbors = {}
    for name in (remote.keys() | member.keys()) - groups:
        remote_as = remote.get(name) or remote.get(member.get(name, ""), "?")
        neighbors[name] = Neighbor(name, remote_as, described.get(name, ""))
    return asn, neighbors


def _frr_paths(device: str) -> tuple[str, str]:
    return f"configs/{device}/frr.conf", f"lab/frr/{device}.conf"


def _bgp(old: Side, new: Side, changed: set[str]) -> list[BgpChange]:
    """Per device whose FRR config (SONiC's own or an NX-OS switch's routing twin) differs."""
    devices = set()
    for path in changed:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "configs" and parts[2] == "frr.conf":
            devices.add(parts[1])
        elif len(parts) == 3 and parts[:2] == ["lab", "frr"] and parts[2].endswith(".conf"):
            devices.add(parts[2][: -len(".conf")])

    def parsed(side: Side, device: str) -> tuple[str | None, dict[str, Neighbor]]:
        for path in _frr_paths(device):
            text = side.text(path)
            if text is not None:
                return frr_bgp(text)
        return None, {}

    changes = []
    for device in sorted(devices):
        (old_asn, old_neighbors), (new_asn, new_neighbors) = parsed(old, device), parsed(new, device)
        before, after = _by_peer(old_neighbors), _by_peer(new_neighbors)
        change = BgpChange(
            device,
            old_asn,
            new_asn,
            added=tuple(after[n] for n in sorted(after.keys() - before.keys())),
            removed=tuple(before[n] for n in sorted(before.keys() - after.keys())),
            changed=tuple((before[n], after[n]) for n in sorted(before.keys() & after.keys()) if before[n] != after[n]),
        )
        if change.added or change.removed or change.changed or (old_asn != new_asn and None not in (old_asn, new_asn)):
            changes.append(change)
    return changes


def _by_peer(neighbors: dict[str, Neighbor]) -> dict[str, Neighbor]:
    """Neighbors by what they peer with: fabricgen describes each as "<peer device> <port>", so a
    renumbered link is one neighbor whose address changed, not one removed and one added. Without
    a (unique) description, by address."""
    described = [n.description for n in neighbors.values() if n.description]
    if len(set(described)) != len(neighbors):
        return {n.address: n for n in neighbors.values()}
    return {n.description: n for n in neighbors.values()}


# --- addresses (ip-plan.csv) ------------------------------------------------------------------------


def _address_rows(checked: list[AddressRow] | None) -> dict[tuple[str, ...], dict[str, str]]:
    rows: dict[tuple[str, ...], dict[str, str]] = {}
    for row in checked or ():
        key = base = tuple(str(getattr(row, name)) for name in ADDRESS_KEY)
        repeat = 1
        while key in rows:  # another row for the same interface and kind: keep each, numbered
            repeat += 1
            key = base + (f"#{repeat}",)
        rows[key] = {name: getattr(row, name) for name in ADDRESS_VALUES}
    return rows


def _addresses(old_rows: list[AddressRow] | None, new_rows: list[AddressRow] | None) -> list[AddressChange]:
    if old_rows is None and new_rows is None:
        return []
    old, new = _address_rows(old_rows), _address_rows(new_rows)
    changes = [AddressChange(key, "removed", old[key], None) for key in old.keys() - new.keys()]
    changes += [AddressChange(key, "added", None, new[key]) for key in new.keys() - old.keys()]
    changes += [AddressChange(key, "changed", old[key], new[key]) for key in old.keys() & new.keys() if old[key] != new[key]]
    return sorted(changes, key=lambda c: c.key)


# --- bill of materials (bom.csv) --------------------------------------------------------------------


def _bom_quantities(rows: list[BomRow] | None) -> dict[str, tuple[int, str]]:
    """PID -> (quantity summed over sections and cable lengths, description)."""
    parts: dict[str, tuple[int, str]] = {}
    for row in rows or ():
        before, description = parts.get(row.pid, (0, row.description))
        parts[row.pid] = (before + int(row.quantity), description)
    return parts


def _bom(old_rows: list[BomRow] | None, new_rows: list[BomRow] | None) -> list[BomChange]:
    if old_rows is None and new_rows is None:
        return []
    old, new = _bom_quantities(old_rows), _bom_quantities(new_rows)
    changes = []
    for pid in sorted(old.keys() | new.keys()):
        before, after = old.get(pid, (0, "")), new.get(pid, (0, ""))
        if before[0] != after[0]:
            changes.append(BomChange(pid, after[1] or before[1], before[0], after[0]))
    return changes
