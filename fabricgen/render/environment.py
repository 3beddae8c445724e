"""The one Jinja2 environment every device and report is rendered with.

StrictUndefined turns a missing value into an error instead of an empty string in a config.
Templates are compiled once and cached by the environment, so a large fabric pays for parsing
once, not once per device; they are not checked for changes on disk at every use (auto_reload
off: a stat per include, tens of thousands per large build), since a build never edits them.

Free text (descriptions) goes into a NOS's configs through the filter its package gives
(TEMPLATE_FILTERS) and into frr.conf through `frr_text`: the catalog and intent checks (`fabricgen.basics.trust`) already refuse a line break or a
control character there, and these filters make sure one that got past still cannot add a line
to a config. config_db.json needs none: it is JSON-encoded. A value that becomes one word of a
shell command goes through `shell_word` (POSIX shell quoting, as shlex.quote).
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from operator import attrgetter
from pathlib import Path

import jinja2

from fabricgen.basics.trust import printable
from fabricgen.basics.units import network_of
from fabricgen.build.secrets import placeholder
from fabricgen.nos.interface import plugins

# A BgpNeighbor as the BGP neighbor loops of nxos/bgp.j2 and frr/frr.conf.j2 unpack it, in this
# order: a tuple is unpacked in one step, where each `n.address` in a template is a call (524,288
# sessions at 131,072 GPUs).
NEIGHBOR_LINES = attrgetter("address", "group", "remote_asn", "description")


def frr_text(value: object) -> str:
    """Free text as one frr.conf line's tail: control and format characters escaped."""
    return printable(value).strip()


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")  # names YAML reads as plain strings, never as numbers, dates or NaN
# ... unless they are one of the words YAML 1.1 or 1.2 reads as a boolean or null (yes, On, NULL...)
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def yaml_string(name: str) -> str:
    """A name as a YAML key or string value that reads back as this string: plain when no YAML
    reader could take it for another type, else double-quoted (a JSON string is YAML)."""
    return name if _PLAIN.fullmatch(name) and name.lower() not in _YAML_WORDS else json.dumps(name)


def shell_word(value: object) -> str:
    """A value as one word of a shell command: as it is when it is safe bare, else single-quoted."""
    return shlex.quote(str(value))


def templates_dir() -> Path:
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "templates"  # fabricgen/templates inside an installed wheel
    if packaged.is_dir():
        return packaged
    source = here.parents[2] / "templates"  # a checkout or editable install
    if source.is_dir():
        return source
    raise RuntimeError(f"fabricgen's templates are missing (looked in {packaged} and {source})")


def _loader() -> jinja2.BaseLoader:
    """The shared templates (hosts/, reports/, frr/...), and each NOS package's own under its
    name: `<nos>/switch.cfg.j2` is fabricgen/nos/<nos>/templates/switch.cfg.j2, so a NOS brings its
    syntax with its package and no shared folder names it."""
    per_nos = {
        name: jinja2.FileSystemLoader(str(folder)) for name, package in plugins().items() if (folder := Path(package.__file__).parent / "templates").is_dir()
    }
    return jinja2.ChoiceLoader([jinja2.PrefixLoader(per_nos), jinja2.FileSystemLoader(str(templates_dir()))])


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=_loader(),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,
    )
    env.filters["csv"] = lambda values: ",".join(str(v) for v in values)
    env.filters["network"] = network_of  # 10.4.0.1/24 -> 10.4.0.0/24
    env.filters["frr_text"] = frr_text
    env.filters["yaml_key"] = yaml_string  # netplan's interface names
    env.filters["yaml_string"] = yaml_string  # the names `fabricgen init` writes into an intent
    env.filters["shell_word"] = shell_word  # the test plan's addresses and names in its scripts
    for package in plugins().values():
        env.filters.update(package.TEMPLATE_FILTERS)  # a NOS's own, e.g. how its config lines take free text
    env.filters["secret"] = placeholder  # a secret's name -> <<secret=name>> (a slot of fabricgen.build.secrets.slots()); never its value
    # No global names (Jinja's are range, dict, lipsum, cycler, joiner, namespace): while there are
    # any, every render copies them into its context, half of a small render's cost (3 µs, some
    # 56,000 renders at 131,072 GPUs). A template that needs one is loaded with it: TEMPLATE_GLOBALS.
    env.globals.clear()
    return env


# The global names a template may use, given to it by get_template(name, globals=TEMPLATE_GLOBALS).
TEMPLATE_GLOBALS = {"range": range}
