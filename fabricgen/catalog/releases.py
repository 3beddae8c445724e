"""The catalog's NOS feature matrix as a Markdown table: what `fabricgen releases` prints and what
the README's support table is (a test keeps the two equal); as data for `releases --json`
(`ReleaseSupport`)."""

from __future__ import annotations

from fabricgen.basics.models import JsonOutputModel
from fabricgen.catalog import Catalog
from fabricgen.catalog.model import NosFlavour, release_key

YES, NO = "yes", "-"


def support_table(catalog: Catalog) -> str:
    """One table per NOS flavour: a row per feature, a column per release, then the source."""
    return "\n".join(_flavour_table(name, flavour) for name, flavour in catalog.nos_releases.items())


def _flavour_table(name: str, flavour: NosFlavour) -> str:
    lines = [
        f"**{flavour.description}** (`{name}`, default {flavour.default})",
        "",
        f"| feature | {' | '.join(flavour.releases)} | source |",
        f"|---|{'---|' * len(flavour.releases)}---|",
    ]
    for feature_name, feature in flavour.features.items():
        cells = [_cell(feature.since, release) for release in flavour.releases]
        source = feature.source + "".join(f"; {model}: {_since(since)}" for model, since in feature.models.items())
        if feature.note:
            source += f". {feature.note}"
        lines.append(f"| {feature_name} | {' | '.join(cells)} | {_escape(source)} |")
    return "\n".join(lines) + "\n"


def _cell(since: str | None, release: str) -> str:
    """yes, -, or the maintenance release of this train from which it is there (10.5(1)F)."""
    if since is None:
        return NO
    have, want = release_key(since), release_key(release)
    if have <= want:
        return since if since != release and have[:2] == want[:2] and len(have) == 3 and have[2] > 1 else YES
    return since if have[:2] == want[:2] and len(have) == 3 else NO


def _since(since: str | None) -> str:
    return f"from {since}" if since else "never"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


class FeatureSupport(JsonOutputModel):
    """One feature of a flavour: the table's row."""

    feature: str
    since: str | None  # the first release that has it; null: none
    releases: dict[str, str]  # per listed release: "yes", "no", or the maintenance release of that train it arrives in
    models: dict[str, str | None]  # switch models where it arrives in another release (null: never)
    source: str  # the document that says so
    note: str | None


class FlavourSupport(JsonOutputModel):
    name: str  # the flavour's key in the catalog (nxos, sonic, a vendor's SONiC)
    nos: str  # the adapter that writes its configs
    description: str
    default: str  # the release configs are written for when the intent names none
    releases: list[str]  # oldest first
    features: list[FeatureSupport]


class ReleaseSupport(JsonOutputModel):
    """`fabricgen releases --json`: the support table as data."""

    flavours: list[FlavourSupport]


def support_document(catalog: Catalog) -> ReleaseSupport:
    """The same facts as `support_table`, one entry per flavour and feature."""
    return ReleaseSupport(
        flavours=[
            FlavourSupport(
                name=name,
                nos=flavour.nos,
                description=flavour.description,
                default=flavour.default,
                releases=list(flavour.releases),
                features=[
                    FeatureSupport(
                        feature=feature_name,
                        since=feature.since,
                        releases={release: {YES: "yes", NO: "no"}.get(cell, cell) for release in flavour.releases for cell in [_cell(feature.since, release)]},
                        models=dict(feature.models),
                        source=feature.source,
                        note=feature.note,
                    )
                    for feature_name, feature in flavour.features.items()
                ],
            )
            for name, flavour in catalog.nos_releases.items()
        ]
    )
