"""What each switch's NOS and release can do: the load balancing, network settings and features a
config uses exist in its target release, and its PFC watchdog numbers lie in the release's ranges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from pydantic import ValidationError

from fabricgen.basics.errors import FieldPath, Problem
from fabricgen.catalog.model import is_train, release_key
from fabricgen.compiler.compiled import Compiled, NosTarget
from fabricgen.compiler.design.graph import FABRIC_ROLES, Network, Role
from fabricgen.intent.management import Management
from fabricgen.intent.model import LoadBalancing, Qos
from fabricgen.nos.interface import CatalogPlatform, plugin
from fabricgen.nos.registry import title


def load_balancing_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf and spine can do its fabric's load-balancing mode and hash fields: the catalog
    says what the hardware does under its NOS, the NOS adapter what fabricgen can write. One
    problem per fabric, switch model and NOS (and setting), not one per switch."""
    for plan in c.plans.values():
        lb = plan.spec.load_balancing
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for role in FABRIC_ROLES:
            for device in c.fabric.by_role(role, plan.network):
                groups[(device.model, device.nos)].append(device.name)  # type: ignore[index]
        for (pid, nos), names in sorted(groups.items()):
            model = c.catalog.switches[pid]
            gaps = {gap.field: gap for gap in plugin(nos).load_balancing_gaps(lb)}
            affected = f"{len(names)} switch{'es' if len(names) != 1 else ''}: {names[0]}"
            if len(names) > 1:
                affected += f" and {len(names) - 1} more"

            if lb.mode not in model.load_balancing_modes(nos):
                why, hint = f"{pid} on {nos} cannot do {lb.mode} load balancing{_dlb_note(c, pid, nos, lb.mode)}", "use mode: ecmp"
            elif "mode" in gaps:
                why, hint = f"{pid} on {nos}: {gaps['mode'].message}", gaps["mode"].hint
            else:
                why = None
            if why:
                others = _doing(c, lambda m, n, lb=lb: lb.mode in m.load_balancing_modes(n) and "mode" not in _gap_fields(n, lb))
                yield Problem(
                    f"{why} ({affected})",
                    hint=hint + (f", or a switch that does {lb.mode}: {others}" if others else ""),
                    field=(plan.section, "load_balancing", "mode"),
                )

            missing = [f for f in lb.hash_fields if f not in model.hash_fields_on(nos)]
            if missing:
                why, hint = f"{pid} on {nos} cannot hash on {', '.join(missing)}", f"hash on fields it can ({', '.join(model.hash_fields_on(nos))})"
            elif "hash_fields" in gaps:
                why, hint = f"{pid} on {nos}: {gaps['hash_fields'].message}", gaps["hash_fields"].hint
            else:
                why = None
            if why:
                others = _doing(c, lambda m, n, lb=lb: set(lb.hash_fields) <= set(m.hash_fields_on(n)) and "hash_fields" not in _gap_fields(n, lb))
                yield Problem(
                    f"{why} ({affected})",
                    hint=hint + (f", or a switch that can hash on them all: {others}" if others else ""),
                    field=(plan.section, "load_balancing", "hash_fields"),
                )


def _dlb_note(c: Compiled, pid: str, nos: str, mode: str) -> str:
    """Why the feature matrix has DLB in no release for this model (its `why_not`), when it says."""
    flavour = c.catalog.nos_releases.get(nos)
    dlb = flavour.features.get("dlb") if flavour is not None else None
    if mode == "ecmp" or dlb is None or pid not in dlb.why_not:
        return ""
    return f": {dlb.why_not[pid]} ({dlb.source})"


def _gap_fields(nos: str, lb: LoadBalancing) -> set[str]:
    return {gap.field for gap in plugin(nos).load_balancing_gaps(lb)}


def _doing(c: Compiled, can: Callable) -> str:
    """Catalog switches, with the NOS, for which `can(model, nos)` holds: "A (nxos), B (sonic)"."""
    return ", ".join(f"{pid} ({nos})" for pid, model in c.catalog.switches.items() for nos in model.nos if can(model, nos))


def settings_supported(c: Compiled) -> Iterable[Problem]:
    """Every leaf, spine and core's NOS adapter can write its network's own settings (EOS: a BFD
    multiplier of 3 or more). One problem per network, NOS and gap."""
    for plan in c.plans.values():
        devices = [d for role in FABRIC_ROLES for d in c.fabric.by_role(role, plan.network)]
        for nos in sorted({d.nos for d in devices if d.nos is not None}):
            for gap in plugin(nos).settings_gaps(plan.spec):
                names = [d.name for d in devices if d.nos == nos]
                yield Problem(f"{_names(names)} ({nos}): {gap.message}", hint=gap.hint, field=(plan.section, *gap.field.split(".")))


def network_notes(c: Compiled) -> list[str]:
    """What each NOS adapter says of a network it writes for: left to the switch, or written
    otherwise than asked (EOS: its MTU ceiling, the platform's lossless headroom)."""
    notes = []
    for plan in c.plans.values():
        noses = sorted({d.nos for role in FABRIC_ROLES for d in c.fabric.by_role(role, plan.network) if d.nos is not None})
        notes += [f"{title(nos)} {plan.section} switches: {note}" for nos in noses for note in plugin(nos).notes(plan.spec)]
    return notes


def _switch_groups(c: Compiled) -> dict[tuple[Network, Role, str], list[str]]:
    """Switch names by (network, role, model): what shares one NOS target."""
    groups: dict[tuple[Network, Role, str], list[str]] = defaultdict(list)
    for device in c.fabric.switches():
        groups[(device.network, device.role, device.model)].append(device.name)
    return groups


def _names(names: list[str]) -> str:
    return f"{names[0]}{f' and {len(names) - 1:,} more' if len(names) > 1 else ''}"


def nos_releases_known(c: Compiled) -> Iterable[Problem]:
    """Every switch's target release (the role's nos_release, else the model's) is one a catalog
    flavour of its NOS lists: configs are written for a named release, never a guess."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            c.nos_target(network, role, model)
        except KeyError:
            where, spec = c.role_spec(network, role)
            release = spec.nos_release or c.catalog.default_release(model, spec.nos)
            yield Problem(
                f"{_names(names)} ({model}): {title(spec.nos)} release {release} is not one fabricgen renders for",
                hint=f"use one of: {', '.join(c.catalog.releases_of(spec.nos))} (or add a flavour in a catalog file)",
                field=(*where, "nos_release"),
            )


def _pinned_images(c: Compiled) -> Iterable[tuple[list[str], str, str, NosTarget, FieldPath]]:
    """(switch names, model, image, target, field) for each switch group whose management section
    pins a boot image for its NOS; groups whose release is unknown are left to nos_releases_known."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue
        levels = c.management_levels(network, role)
        management = Management.effective(level for _, level in levels)
        image = management.boot.image(target.nos) if management is not None else None
        if image:
            where = next(field for field, level in reversed(levels) if level is not None and "boot" in level.model_fields_set)
            yield names, model, image, target, (*where, "boot", target.nos)


def boot_images_match_releases(c: Compiled) -> Iterable[Problem]:
    """A pinned boot image is of the release the switch's configs are written for (of its train,
    when the target is a train such as NX-OS 10.4): push checks the switch runs the pinned image,
    so a mismatch would put configs on a release they were not written for."""
    for names, model, image, target, field in _pinned_images(c):
        image_release = plugin(target.nos).BOOT_IMAGE.release_of(image)
        if image_release is None or _same_release(c, target, image_release):
            continue
        yield Problem(
            f"{_names(names)} ({model}) run {title(target.nos)} {target.release}, but management.boot.{target.nos} pins {image}, an image of {title(target.nos)} {image_release}",
            hint=f"pin an image of {target.release}, or set nos_release: {image_release} for this role, or pin images per role (a role's management.boot)",
            field=field,
        )


def _same_release(c: Compiled, target: NosTarget, image_release: str) -> bool:
    """Whether an image of `image_release` runs `target`'s release: the same release, or of the
    same train when the target names a train."""
    flavour = c.catalog.nos_releases[target.flavour]
    if is_train(target.release):
        return flavour.find(image_release) == flavour.find(target.release)
    try:
        return release_key(image_release) == release_key(target.release)
    except ValueError:
        return False


def boot_image_notes(c: Compiled) -> list[str]:
    """A pinned image whose name carries no release fabricgen can read is noted, once per image."""
    unread: dict[str, list[str]] = defaultdict(list)
    for _switches, _model, image, target, _field in _pinned_images(c):
        if plugin(target.nos).BOOT_IMAGE.release_of(image) is None:
            unread[image].append(f"{title(target.nos)} {target.release}")
    return [
        f"fabricgen cannot tell from its name which release the pinned image {image} is: check it is {' / '.join(sorted(set(releases)))}"
        for image, releases in sorted(unread.items())
    ]


def _feature_needs(c: Compiled, network: Network, role: Role, model: str, nos: str) -> list[tuple[str, str, FieldPath]]:
    """What a switch of this role asks of its release: (feature, what for, intent field)."""
    if role is Role.OOB_SWITCH:
        return []
    plan = c.plans[network]
    spec = plan.spec
    needs: list[tuple[str, str, FieldPath]] = []
    if role is Role.LEAF and c.evpn_of(network) is not None:
        needs.append(("evpn-anycast-gateway", "the EVPN anycast gateway of every segment", (plan.section, "routing")))
    lb = spec.load_balancing
    writable = "mode" not in _gap_fields(nos, lb)  # load_balancing_supported reports what is not
    if lb.mode != "ecmp" and writable and lb.mode in c.catalog.switches[model].load_balancing_modes(nos):
        needs.append(("dlb", f"{lb.mode} load balancing", (plan.section, "load_balancing", "mode")))
    if "ipv6-flow-label" in lb.hash_fields:
        needs.append(("ipv6-flow-label-hash", "hashing on the IPv6 flow label", (plan.section, "load_balancing", "hash_fields")))
    if spec.qos.enabled and spec.qos.pfc_watchdog.enabled:
        needs.append(("pfc-watchdog", "the PFC watchdog", (plan.section, "qos", "pfc_watchdog", "enabled")))
    if (spec.bgp_security.password or spec.bgp_security.tier_passwords) and not spec.bgp_security.tcp_ao:
        field = (plan.section, "bgp_security", "password" if spec.bgp_security.password else "tier_passwords")
        needs.append(("tcp-md5", "BGP session keys (TCP-MD5)", field))
    levels = c.management_levels(network, role)
    management = Management.effective(level for _, level in levels)
    for need in plugin(nos).feature_needs(management):
        head, _, rest = need.field.partition(".")
        if head == "management":
            where = next(field for field, level in reversed(levels) if level is not None)  # the innermost section
            needs.append((need.feature, need.what, (*where, *rest.split("."))))
        else:
            needs.append((need.feature, need.what, (plan.section, *need.field.split("."))))
    return needs


def features_in_release(c: Compiled) -> Iterable[Problem]:
    """Every feature a switch's config uses exists in its target release (the catalog's feature
    matrix). A problem names the minimum release that has it, or the setting to change when no
    release of the flavour does."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        flavour = c.catalog.nos_releases[target.flavour]
        for feature, what, field in _feature_needs(c, network, role, model, target.nos):
            if feature in target.features or feature not in flavour.features:
                continue  # a feature its NOS's matrix does not name, every release of it has
            since = flavour.features[feature].since_on(model)
            head = f"{_names(names)} ({model}, {title(target.nos)} {target.release}): {what}"
            source = flavour.features[feature].source
            if since is None:
                yield Problem(
                    f"{head} exists in no {flavour.description} release fabricgen knows ({source})", hint="change this setting for these switches", field=field
                )
            else:
                yield Problem(
                    f"{head} needs {title(target.nos)} {since} or later ({source})",
                    hint=f"set nos_release: {since}{'' if since == 'master' else ' (or later)'} for this role",
                    field=target.field,
                )


def watchdog_in_range(c: Compiled) -> Iterable[Problem]:
    """Every PFC watchdog number a switch's config carries (the poll interval; on NX-OS the
    multipliers detection and restoration become) lies in the range its target release documents
    (releases.yaml pfc-watchdog `parameters`): the fabric's profile and each switch's override."""
    for (network, role, model), names in _switch_groups(c).items():
        if role is Role.OOB_SWITCH:
            continue
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        if "pfc-watchdog" not in target.features:
            continue  # features_in_release reports it
        plan = c.plans[network]
        spec = plan.spec
        parameters = c.catalog.nos_releases[target.flavour].features["pfc-watchdog"].parameters
        profiles: list[tuple[FieldPath, Qos, list[str]]] = [((plan.section, "qos", "pfc_watchdog"), spec.qos, names)]
        members = set(names) if spec.qos_overrides else set()
        for name, override in spec.qos_overrides.items():
            if override.pfc_watchdog is not None and name in members:
                try:
                    profiles.append(((plan.section, "qos_overrides", name, "pfc_watchdog"), override.apply(spec.qos), [name]))
                except ValidationError:
                    continue  # qos_overrides_name_switches reports it
        for where, qos, affected in profiles:
            if not (qos.enabled and qos.pfc_watchdog.enabled):
                continue
            for parameter, (value, field) in plugin(target.nos).watchdog_values(qos.pfc_watchdog).items():
                accepted = parameters[parameter].at(target.release) if parameter in parameters else None
                if accepted is None or accepted.min <= value <= accepted.max:
                    continue
                # a number the NOS derives from the intent's (NX-OS: a multiple of the poll interval) is named as well
                derived = "" if value == getattr(qos.pfc_watchdog, field) else f" gives {parameter} {value}, but"
                yield Problem(
                    f"{_names(affected)} ({model}, {title(target.nos)} {target.release}): {field} {getattr(qos.pfc_watchdog, field)}"
                    f"{derived} is outside {accepted.min}-{accepted.max} for `{parameters[parameter].syntax}` ({parameters[parameter].source})",
                    hint=f"choose {field} so that {parameter} is {accepted.min}-{accepted.max}",
                    field=(*where, field),
                )


def model_notes(c: Compiled) -> list[str]:
    """What each NOS says of a catalog model it writes for (SONiC: a model without its platform's
    port map), one note per model and NOS, naming the network roles built on it."""
    roles: dict[tuple[str, str], set[str]] = defaultdict(set)
    for device in c.fabric.switches():
        if device.nos is not None:
            roles[(device.model, device.nos)].add(f"{device.network.value} {device.role.value}")
    notes = []
    for pid, nos in sorted(roles):
        notes += plugin(nos).model_notes(pid, c.catalog.switches[pid], ", ".join(sorted(roles[(pid, nos)])))
    return notes


UNVERIFIED = "UNVERIFIED"  # a vendor flavour's feature source starting so: written in its NOS's own flavour's form


def flavour_notes(c: Compiled) -> list[str]:
    """One note per vendor flavour (one not named after its NOS) and release the switches run:
    the network roles on it, its features written in the NOS's own flavour's form because the
    vendor's could not be read (their source says UNVERIFIED), and the notes of its features."""
    where: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    features: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for network, role, model in sorted({(d.network, d.role, d.model) for d in c.fabric.switches() if d.nos}):
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        if target.flavour == target.nos:
            continue
        key = (target.nos, target.flavour, target.release)
        if f"{network.value} {role.value}" not in where[key]:
            where[key].append(f"{network.value} {role.value}")
        features[key] |= target.features
    notes = []
    for (nos, name, release), roles in where.items():
        flavour = c.catalog.nos_releases[name]
        used = sorted(features[(nos, name, release)])
        unverified = [f for f in used if flavour.features[f].source.startswith(UNVERIFIED)]
        text = f"{flavour.description} {release} (flavour {name}) on the {', '.join(roles)} switches"
        if unverified:
            text += (
                f": where used, {', '.join(unverified)} are written in the {nos} flavour's form, unverified on {name} (`fabricgen releases` shows each source)"
            )
        notes.append(text + "".join(f"; {f}: {flavour.features[f].note}" for f in used if flavour.features[f].note))
    return notes


def _platform_targets(c: Compiled) -> Iterable[tuple[list[str], str, NosTarget, CatalogPlatform]]:
    """(switch names, model, target, the model's section for the target's NOS) of each switch
    group whose release is known and whose NOS has a catalog section."""
    for (network, role, model), names in _switch_groups(c).items():
        try:
            target = c.nos_target(network, role, model)
        except KeyError:
            continue  # nos_releases_known reports it
        section = getattr(c.catalog.switches[model], target.nos, None)
        if isinstance(section, CatalogPlatform):
            yield names, model, target, section


def platforms_in_release(c: Compiled) -> Iterable[Problem]:
    """Every switch's target release has its platform files (SONiC: the entry's sonic.since): an
    image without them does not run on the switch, and its config_db would name a platform the
    image lacks."""
    for names, model, target, section in _platform_targets(c):
        first = section.missing_in(target.release, list(c.catalog.nos_releases[target.flavour].releases))
        if first is not None:
            yield Problem(
                f"{_names(names)} ({model}): {title(target.nos)} {target.release} has no platform files for this switch; they arrive in {first}",
                hint=f"set nos_release: {first} (or later) for this role",
                field=target.field,
            )


def platform_release_notes(c: Compiled) -> list[str]:
    """What each switch's target release's platform files say that its config does not follow
    (the 7060X6's lane typos before SONiC 202505), one note per model, NOS and release."""
    said: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    notes: dict[tuple[str, str, str], str] = {}
    for names, model, target, section in _platform_targets(c):
        note = section.release_note(target.release)
        if note is not None:
            key = (model, target.nos, target.release)
            said[key] += names
            notes[key] = note
    return [
        f"{model} on {title(nos)} {release} ({_names(said[(model, nos, release)])}): {notes[(model, nos, release)]}" for model, nos, release in sorted(said)
    ]
