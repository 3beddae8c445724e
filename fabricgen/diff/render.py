"""A BuildDiff for a terminal (`render_text`), a pull-request comment (`render_markdown`, capped
in bytes) and a script (`render_json`). All three share the headline counts and section rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from fabricgen.basics.trust import printable
from fabricgen.diff.compare import BuildDiff, FileDiff, FileStat, Neighbor, file_stat
from fabricgen.diff.sides import Side

SECTION_ROWS = 50  # rows per semantic section in text and markdown; JSON has them all
SWITCHES_SHOWN = 8  # switch names listed per QoS change
SETTINGS_NAMED = 3  # setting changes the summary line names
STAT_WIDTH = 40  # the widest +/- bar of --stat
DEFAULT_MAX_BYTES = 60_000  # GitHub caps a comment at 65,536 characters
OMISSION_RESERVE = 1_200  # bytes kept back for the note on what was left out


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    summary: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]


def _arrow(old: object, new: object) -> str:
    def shown(value: object) -> str:
        if value is None or value == "":
            return "(none)"
        return json.dumps(value) if isinstance(value, list | dict | bool) else str(value)

    return f"{shown(old)} → {shown(new)}"


def _signed(added: int, removed: int, changed: int | None = None) -> str:
    text = f"+{added:,} −{removed:,}"
    return text if changed is None else f"{text} ~{changed:,}"


def _names(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names[:SWITCHES_SHOWN]) + (f", … ({len(names) - SWITCHES_SHOWN:,} more)" if len(names) > SWITCHES_SHOWN else "")


def sections(result: BuildDiff) -> list[Section]:
    """The semantic sections that have something to show, in reading order."""
    counts = result.counts()
    found = []
    c = counts["devices"]
    rows: list[tuple[str, ...]] = []  # each section's rows have that section's number of columns
    for device in result.devices:
        if device.status == "changed":
            details = "; ".join(f"{name}: {_arrow(old, new)}" for name, old, new in device.changes)
        else:
            details = " ".join(device.attributes.get(name, "") for name in ("role", "network", "model", "nos", "nos_release")).strip()
        rows.append((device.name, device.status, details))
    found.append(Section("Devices", _signed(c["added"], c["removed"], c["changed"]), ("device", "change", "details"), rows))

    c = counts["cables"]
    cabling = result.cabling
    rows = [("added", cable.describe(), "") for cable in cabling.added]
    rows += [("removed", cable.describe(), "") for cable in cabling.removed]
    rows += [("recabled", move.port, f"peer {move.old_peer} → {move.new_peer}") for move in cabling.recabled]
    rows += [("changed", change.cable.describe(), "; ".join(f"{n}: {_arrow(a, b)}" for n, a, b in change.changes)) for change in cabling.changed]
    found.append(
        Section(
            "Cables", f"{_signed(c['added'], c['removed'])}, {c['recabled_ports']} recabled ports, {c['changed']} changed", ("change", "cable", "details"), rows
        )
    )

    c = counts["bgp_neighbors"]
    rows = []
    for bgp in result.bgp:
        if bgp.old_asn != bgp.new_asn and None not in (bgp.old_asn, bgp.new_asn):
            rows.append((bgp.device, "router bgp", "", _arrow(bgp.old_asn, bgp.new_asn), ""))
        rows += [(bgp.device, "added", n.address, n.remote_as, n.description) for n in bgp.added]
        rows += [(bgp.device, "removed", n.address, n.remote_as, n.description) for n in bgp.removed]
        for a, b in bgp.changed:
            address = b.address if a.address == b.address else _arrow(a.address, b.address)
            remote_as = b.remote_as if a.remote_as == b.remote_as else _arrow(a.remote_as, b.remote_as)
            rows.append((bgp.device, "changed", address, remote_as, b.description))
    found.append(
        Section(
            "BGP neighbors",
            f"{_signed(c['added'], c['removed'], c['changed'])} on {c['devices']} devices",
            ("device", "change", "neighbor", "remote-as", "description"),
            rows,
        )
    )

    c = counts["addresses"]
    rows = []
    for address_change in result.addresses:
        if address_change.status == "changed":
            details = "; ".join(f"{n}: {_arrow(a, b)}" for n, a, b in address_change.changes())
        else:
            kept = address_change.new or address_change.old or {}
            details = kept.get("address", "") + (f" (peer {kept['peer_device']} {kept['peer_address']})" if kept.get("peer_device") else "")
        rows.append((*address_change.key[:4], address_change.status, details))
    found.append(Section("Addresses", _signed(c["added"], c["removed"], c["changed"]), ("network", "device", "interface", "kind", "change", "details"), rows))

    c = counts["qos"]
    rows = []
    for qos in result.qos:
        rows.append((qos.value, _arrow(qos.old, qos.new), f"{len(qos.switches):,}", _names(qos.switches)))
    found.append(
        Section("QoS", f"{_plural(c['values'], 'value')} changed on {_plural(c['switches'], 'switch')}", ("value", "change", "switches", "which"), rows)
    )

    c = counts["settings"]
    rows = [(change.change, f"{change.lines:,}", f"{len(change.devices):,}", _names(change.devices)) for change in result.settings]
    found.append(Section("Settings", f"{_plural(c['changes'], 'change')} on {_plural(c['devices'], 'device')}", ("setting", "lines", "devices", "which"), rows))

    rows = []
    for secret in result.secrets:
        rows.append((secret.use, _arrow(secret.old, secret.new), f"{len(secret.switches):,}", _names(secret.switches)))
    switches = len({s for secret in result.secrets for s in secret.switches})
    found.append(
        Section(
            "Secret references",
            f"{_plural(len(rows), 'change')} on {_plural(switches, 'switch')} (names only)",
            ("used for", "secret", "switches", "which"),
            rows,
        )
    )

    rows = [(change.pid, change.description, f"{change.old:,}", f"{change.new:,}", f"{change.delta:+,d}") for change in result.bom]
    found.append(Section("Bill of materials", f"{len(rows):,} PIDs changed quantity", ("pid", "description", "old", "new", "delta"), rows))
    return [section for section in found if section.rows]


def headline(result: BuildDiff) -> str:
    if not result.changed:
        return "no changes: both sides render identical files"
    counts = result.counts()
    d, c, b, a, f = (counts[k] for k in ("devices", "cables", "bgp_neighbors", "addresses", "files"))
    return (
        f"devices {_signed(d['added'], d['removed'], d['changed'])} · cables {_signed(c['added'], c['removed'])} ({c['recabled_ports']:,} recabled ports) · "
        f"BGP neighbors {_signed(b['added'], b['removed'], b['changed'])} · addresses {_signed(a['added'], a['removed'], a['changed'])} · "
        f"QoS {_plural(counts['qos']['values'], 'value')} on {_plural(counts['qos']['switches'], 'switch')} · BOM {counts['bom']['pids']:,} PIDs · "
        f"files of {f['devices']:,} devices {_signed(f['added'], f['removed'], f['changed'])}, {f['derived']:,} derived (lab/), {f['reports']:,} reports"
    )


def settings_line(result: BuildDiff) -> str | None:
    """The settings changed, most devices first, named: what a reviewer reads before any diff."""
    if not result.settings:
        return None
    named = "; ".join(f"{c.change} on {_plural(len(c.devices), 'device')}" for c in result.settings[:SETTINGS_NAMED])
    more = len(result.settings) - SETTINGS_NAMED
    return f"settings changed: {named}" + (f"; and {more:,} more (see Settings)" if more > 0 else "")


def stat_lines(result: BuildDiff) -> list[str]:
    """`git diff --stat` for the rendered files: each changed file, its changed lines and a bar of
    + and -, then the totals (reports and lab/ files are counted, not diffed)."""
    stats: list[FileStat] = [file_stat(diff) for diffs in result.device_files.values() for diff in diffs]
    if not stats:
        return []
    width = max(len(s.path) for s in stats)
    most = max(s.added + s.removed for s in stats)
    digits = len(f"{most:,}")
    lines = []
    for s in stats:
        total = s.added + s.removed
        scale = 1.0 if most <= STAT_WIDTH else STAT_WIDTH / most
        plus, minus = round(s.added * scale), round(s.removed * scale)
        if total and not plus + minus:  # a change never shows as no bar
            plus, minus = (1, 0) if s.added else (0, 1)
        lines.append(f" {s.path.ljust(width)} | {total:>{digits},} {'+' * plus}{'-' * minus}")
    added, removed = sum(s.added for s in stats), sum(s.removed for s in stats)
    summary = f" {_plural(len(stats), 'file')} changed, {added:,} insertion{'s' if added != 1 else ''}(+), {removed:,} deletion{'s' if removed != 1 else ''}(-)"
    if result.reports or result.derived:
        summary += f"; {_plural(len(result.reports), 'report')} and {len(result.derived):,} lab/ files changed (not diffed)"
    return [*lines, summary]


def _side_line(side: Side) -> str:
    intent = side.intent
    if intent is None:
        return f"{side.label}: {side.spec} (empty)"
    return f"{side.label}: {side.spec} (intent {intent.get('file')}, sha256 {str(intent.get('sha256'))[:12]})"


def _file_summary(diffs: list[FileDiff]) -> str:
    by_status: dict[str, int] = {}
    for diff in diffs:
        by_status[diff.status] = by_status.get(diff.status, 0) + 1
    return ", ".join(f"{count} file{'s' if count != 1 else ''} {status}" for status, count in sorted(by_status.items()))


# --- text ---------------------------------------------------------------------------------------------


def render_text(result: BuildDiff, stat: bool = False) -> list[tuple[str, str | None]]:
    """Lines with a rich style each (None: plain); every line of every per-device diff, or with
    `stat` the changed lines per file instead. Every line is escaped (`trust.printable`): a
    config is the build's text, and a control character in it must not reach the terminal."""
    return [(printable(line), style) for line, style in _text_lines(result, stat)]


def _text_lines(result: BuildDiff, stat: bool = False) -> list[tuple[str, str | None]]:
    lines: list[tuple[str, str | None]] = [(f"fabricgen diff {result.old.spec} {result.new.spec}", "bold")]
    lines += [(_side_line(side), None) for side in (result.old, result.new)]
    lines += [(f"note: {note}", "yellow") for note in result.notes]
    lines.append((headline(result), "bold"))
    if (settings := settings_line(result)) is not None:
        lines.append((settings, "bold"))
    for section in sections(result):
        lines.append(("", None))
        lines.append((f"{section.title}: {section.summary}", "bold"))
        for row in section.rows[:SECTION_ROWS]:
            lines.append(("  " + "  ".join(cell for cell in row if cell), None))
        if len(section.rows) > SECTION_ROWS:
            lines.append((f"  … {len(section.rows) - SECTION_ROWS} more (--format json lists all)", "dim"))
    if result.reports:
        lines += [("", None), (f"reports changed: {', '.join(result.reports)}", None)]
    if result.derived:
        lines.append((f"derived files changed (lab/, not diffed): {len(result.derived):,}", None))
    if stat:
        stats = stat_lines(result)
        return lines + ([("", None)] + [(line, None) for line in stats] if stats else [])
    for device, diffs in result.device_files.items():
        lines += [("", None), (f"== {device}: {_file_summary(diffs)}", "bold cyan")]
        for diff in diffs:
            for line in diff.diff.splitlines():
                style = None
                if line.startswith(("+++", "---")):
                    style = "bold"
                elif line.startswith("+"):
                    style = "green"
                elif line.startswith("-"):
                    style = "red"
                elif line.startswith("@@"):
                    style = "cyan"
                lines.append((line, style))
    return lines


# --- markdown -----------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return printable(text.replace("|", "\\|").replace("\n", " "))


def _fence(lines: list[str]) -> str:
    """A code fence longer than any run of backticks in `lines`, so no line can close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _table(section: Section, shown: int) -> list[str]:
    """The section as a pipe table of its first `shown` rows, and how many rows are left out."""
    lines = [f"#### {section.title} ({section.summary})", "", "| " + " | ".join(section.columns) + " |", "|" + "---|" * len(section.columns)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in section.rows[:shown]]
    if shown < len(section.rows):
        lines.append(f"\n_… {len(section.rows) - shown} more rows (`fabricgen diff --format json` lists all)_")
    return lines + [""]


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def render_markdown(result: BuildDiff, max_bytes: int = DEFAULT_MAX_BYTES, stat: bool = False) -> str:
    """A PR comment: a heading with the counts, a table per section, then a collapsed block per
    device with its unified diff (with `stat`: one block of changed lines per file instead). At
    most `max_bytes` (UTF-8): what does not fit is left out and named at the end."""
    head = [f"### fabricgen diff: `{result.old.spec}` → `{result.new.spec}`", ""]
    head += [f"- {_side_line(side)}" for side in (result.old, result.new)] + [""]
    head += [f"> note: {note}" for note in result.notes] + ([""] if result.notes else [])
    head += [f"**{headline(result)}**", ""]
    if (settings := settings_line(result)) is not None:
        head += [f"**{_cell(settings)}**", ""]
    budget = max_bytes - OMISSION_RESERVE
    body: list[str] = []
    left_out: list[str] = []

    def fits(lines: list[str]) -> bool:
        return _size(head) + _size(body) + _size(lines) <= budget

    # the semantic tables come before any diff; when they do not all fit, each gets a fair share
    # of the room (a small table keeps all its rows, what it leaves over goes to the larger ones)
    found = sections(result)
    tables: dict[str, list[str]] = {}
    room = budget - _size(head)
    for index, section in enumerate(sorted(found, key=lambda s: _size(_table(s, len(s.rows))))):
        share = room // (len(found) - index)
        shown = min(len(section.rows), SECTION_ROWS)
        while shown and _size(_table(section, shown)) > share:
            shown -= 1
        tables[section.title] = _table(section, shown)
        room -= _size(tables[section.title])
    for section in found:
        body += tables[section.title]

    extra = []
    if result.reports:
        extra.append(f"Reports changed: {', '.join(f'`{r}`' for r in result.reports)}.")
    if result.derived:
        extra.append(f"Derived files changed (lab/, not diffed): {len(result.derived)}.")
    if extra and fits(extra + [""]):
        body += extra + [""]

    if stat and result.device_files:
        lines = [printable(line) for line in stat_lines(result)]
        fence = _fence(lines)
        block = [f"#### Changed lines per file ({_plural(len(result.device_files), 'device')})", "", fence, *lines, fence, ""]
        if fits(block):
            body += block
        else:
            left_out.append("the changed lines per file")
    if result.device_files and not stat:
        body += [f"#### Per-device diffs ({len(result.device_files):,} devices)", ""]
    skipped = []
    for device, diffs in result.device_files.items() if not stat else ():
        diff_lines = [printable(line) for line in "".join(diff.diff for diff in diffs).rstrip("\n").split("\n")]
        fence = _fence(diff_lines)
        block = [f"<details><summary><code>{device}</code>: {_file_summary(diffs)}</summary>", "", f"{fence}diff", *diff_lines, fence, "", "</details>", ""]
        if fits(block):
            body += block
        else:
            skipped.append(device)
    if skipped:
        left_out.append(f"the diffs of {len(skipped):,} devices")

    tail = []
    if left_out:
        note = f"_Left out to stay under {max_bytes:,} bytes: {'; '.join(left_out)}"
        if skipped:
            names = ""
            for name in skipped:
                if len(note) + len(names) + len(name) > OMISSION_RESERVE - 200:
                    names += ", …"
                    break
                names += (", " if names else "") + name
            note += f" ({names})"
        tail = [note + ". Run `fabricgen diff` locally for everything._"]
    text = "\n".join(head + body + tail) + "\n"
    encoded = text.encode("utf-8")
    if len(encoded) > max_bytes:  # only when even the headline does not fit a tiny cap
        text = encoded[:max_bytes].decode("utf-8", errors="ignore")
    return text


# --- json ---------------------------------------------------------------------------------------------


def _neighbor(n: Neighbor) -> dict:
    return {"address": n.address, "remote_as": n.remote_as, "description": n.description}


def render_json(result: BuildDiff) -> str:
    """Everything: both sides, the counts, every semantic change and every per-device diff."""

    def side(s: Side) -> dict:
        return {"spec": s.spec, "intent": s.intent, "catalog": s.catalog, "empty": s.files is None}

    cabling = result.cabling

    def cable(c) -> dict:
        return {"a": c.a, "b": c.b, **c.values}

    document = {
        "old": side(result.old),
        "new": side(result.new),
        "changed": result.changed,
        "counts": result.counts(),
        "notes": result.notes,
        "devices": [
            {"device": d.name, "status": d.status, **d.attributes, "changes": [{"attribute": n, "old": a, "new": b} for n, a, b in d.changes]}
            for d in result.devices
        ],
        "cables": {
            "added": [cable(c) for c in cabling.added],
            "removed": [cable(c) for c in cabling.removed],
            "recabled": [{"port": r.port, "old_peer": r.old_peer, "new_peer": r.new_peer} for r in cabling.recabled],
            "changed": [{**cable(c.cable), "changes": [{"column": n, "old": a, "new": b} for n, a, b in c.changes]} for c in cabling.changed],
        },
        "bgp": [
            {
                "device": c.device,
                "old_asn": c.old_asn,
                "new_asn": c.new_asn,
                "added": [_neighbor(n) for n in c.added],
                "removed": [_neighbor(n) for n in c.removed],
                "changed": [{"old": _neighbor(a), "new": _neighbor(b)} for a, b in c.changed],
            }
            for c in result.bgp
        ],
        "addresses": [
            {**dict(zip(("network", "device", "interface", "kind"), a.key, strict=True)), "status": a.status, "old": a.old, "new": a.new}
            for a in result.addresses
        ],
        "qos": [{"value": q.value, "old": q.old, "new": q.new, "switches": list(q.switches)} for q in result.qos],
        "settings": [{"change": c.change, "lines": c.lines, "devices": list(c.devices)} for c in result.settings],
        "secret_references": [{"use": c.use, "old": c.old, "new": c.new, "switches": list(c.switches)} for c in result.secrets],
        "bom": [{"pid": b.pid, "description": b.description, "old": b.old, "new": b.new, "delta": b.delta} for b in result.bom],
        "files": {
            "devices": {
                device: [{"path": f.path, "status": f.status, **_stat_json(f), "diff": f.diff} for f in diffs] for device, diffs in result.device_files.items()
            },
            "derived": result.derived,
            "reports": result.reports,
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _stat_json(diff) -> dict[str, int]:
    s = file_stat(diff)
    return {"added_lines": s.added, "removed_lines": s.removed}


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}{'es' if noun.endswith('ch') else 's'}"
