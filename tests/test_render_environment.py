"""The one Jinja environment: what every template may rely on."""

from __future__ import annotations

import jinja2
from jinja2 import meta

from fabricgen.render.environment import TEMPLATE_GLOBALS, environment


def test_templates_use_no_global_they_are_not_given():
    """The environment has no global names (each render would copy them): a template that calls
    one of Jinja's (range, namespace, ...) must get it through TEMPLATE_GLOBALS."""
    env = environment()
    jinja_globals = set(jinja2.Environment().globals)
    for name in env.list_templates(extensions=["j2"]):
        used = meta.find_undeclared_variables(env.parse(env.loader.get_source(env, name)[0]))
        assert used & jinja_globals <= set(TEMPLATE_GLOBALS), f"{name} uses {sorted(used & jinja_globals - set(TEMPLATE_GLOBALS))}"
    assert not env.globals


def test_a_template_given_range_renders_it():
    env = environment()
    template = env.from_string("{% for p in range(3) %}{{ p }}{% endfor %}", globals=TEMPLATE_GLOBALS)
    assert template.render() == "012"
    try:
        env.from_string("{% for p in range(3) %}{{ p }}{% endfor %}").render()
    except jinja2.UndefinedError as exc:
        assert "range" in str(exc)
    else:
        raise AssertionError("range rendered without being given")
