"""The PFC watchdog per NOS and release: every number written lies in the range its release
documents (catalog nos.yaml, pfc-watchdog `parameters`), a number at its default is left out,
and a profile outside a range is refused naming the intent field, the range and the source."""

from __future__ import annotations

import json
import re

import pytest

from fabricgen.basics.errors import CheckError
from fabricgen.catalog import load_catalog
from fabricgen.compiler.pipeline import compile_intent

CATALOG = load_catalog()
NXOS = CATALOG.nos_releases["nxos"]
SONIC = CATALOG.nos_releases["sonic"]
# the NX-OS lines and the catalog parameter each one writes
NXOS_LINES = {
    re.compile(r"^priority-flow-control watch-dog interval (\d+)$"): "poll-interval",
    re.compile(r"^priority-flow-control watch-dog shutdown-multiplier (\d+)$"): "shutdown-multiplier",
    re.compile(r"^priority-flow-control auto-restore multiplier (\d+)$"): "auto-restore-multiplier",
}
PROFILES = [
    {},  # the intent's defaults: 100 / 200 / 400 ms
    {"poll_interval_ms": 100, "detection_ms": 100, "restoration_ms": 1000},  # all at NX-OS's defaults
    {"poll_interval_ms": 200, "detection_ms": 2000, "restoration_ms": 20000},  # the NX-OS maxima
    {"poll_interval_ms": 1000, "detection_ms": 5000, "restoration_ms": 60000},
]


def _intent(nos: str, model: str, release: str, watchdog: dict) -> str:
    profile = f"\n  qos:\n    pfc_watchdog: {json.dumps(watchdog)}" if watchdog else ""
    spine = f'{{nos: {nos}, nos_release: "{release}"}}'  # the catalog's default spine
    leaf = f'{{model: {model}, nos: {nos}, nos_release: "{release}"}}'
    return f"gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {leaf}\n  spine: {spine}{profile}\n"


def _nxos_watchdog(text: str) -> dict[str, int]:
    found = {}
    for line in text.splitlines():
        for pattern, parameter in NXOS_LINES.items():
            if match := pattern.match(line):
                found[parameter] = int(match.group(1))
    return found


@pytest.mark.parametrize("release", NXOS.releases)
@pytest.mark.parametrize("model", ["N9K-C9364D-GX2A", "N9K-C93600CD-GX", "N9364E-SG2-O"])
@pytest.mark.parametrize("watchdog", PROFILES)
def test_every_nxos_watchdog_value_is_in_its_release_range_and_none_at_its_default(write_intent, release, model, watchdog):
    build = compile_intent(write_intent(_intent("nxos", model, release, watchdog)))
    configs = {name: data.decode() for name, data in build.files.items() if name.startswith("configs/") and name.endswith(".cfg")}
    assert configs
    parameters = NXOS.features["pfc-watchdog"].parameters
    for name, text in configs.items():
        assert "priority-flow-control watch-dog-interval on" in text.splitlines(), name
        for parameter, value in _nxos_watchdog(text).items():
            accepted = parameters[parameter].at(release)
            assert accepted is not None and accepted.min <= value <= accepted.max, (name, parameter, value)
            assert value != accepted.default, f"{name}: {parameter} {value} is the {release} default and must not be written"


def test_the_default_profile_writes_only_what_differs_from_nxos(write_intent):
    text = compile_intent(write_intent(_intent("nxos", "N9K-C9364D-GX2A", "10.4", {}))).files["configs/be-su01-leaf1.cfg"].decode()
    # 100 ms poll is NX-OS's own; 200 ms detection is 2 polls, 400 ms restoration is 4
    assert _nxos_watchdog(text) == {"shutdown-multiplier": 2, "auto-restore-multiplier": 4}
    at_defaults = {"poll_interval_ms": 100, "detection_ms": 100, "restoration_ms": 1000}
    text = compile_intent(write_intent(_intent("nxos", "N9K-C9364D-GX2A", "10.4", at_defaults), name="defaults")).files["configs/be-su01-leaf1.cfg"].decode()
    assert _nxos_watchdog(text) == {}
    assert "priority-flow-control watch-dog-interval on" in text.splitlines()  # off by default: always written


@pytest.mark.parametrize("release", SONIC.releases)
@pytest.mark.parametrize("watchdog", PROFILES)
def test_every_sonic_watchdog_field_is_in_its_release_range(write_intent, release, watchdog):
    build = compile_intent(write_intent(_intent("sonic", "N9K-C9364D-GX2A", release, watchdog)))
    parameters = SONIC.features["pfc-watchdog"].parameters
    fields = {"POLL_INTERVAL": "poll-interval", "detection_time": "detection-time", "restoration_time": "restoration-time"}
    dbs = [json.loads(data) for name, data in build.files.items() if name.endswith("config_db.json")]
    assert dbs
    for db in dbs:
        assert db["PFC_WD"]["GLOBAL"]
        for key, row in db["PFC_WD"].items():
            for field, value in row.items():
                if field in fields:
                    accepted = parameters[fields[field]].at(release)
                    assert accepted.min <= int(value) <= accepted.max, (key, field, value)


def test_sonic_poll_interval_range_follows_the_yang_model_per_release():
    poll = SONIC.features["pfc-watchdog"].parameters["poll-interval"]
    assert (poll.at("202411").min, poll.at("202411").max) == (100, 3000)
    assert (poll.at("202511").min, poll.at("202511").max) == (100, 1000)
    assert poll.at("master").max == 1000 and poll.at("202405").max == 3000


def test_nxos_multipliers_outside_their_range_are_refused(write_intent):
    intent = _intent("nxos", "N9K-C9364D-GX2A", "10.4", {"poll_interval_ms": 100, "detection_ms": 5000, "restoration_ms": 60000})
    with pytest.raises(CheckError) as refused:
        compile_intent(write_intent(intent), render=False)
    problems = {p.field: p for p in refused.value.problems}
    shutdown = problems[("backend", "qos", "pfc_watchdog", "detection_ms")]
    assert "gives shutdown-multiplier 50" in shutdown.message and "outside 1-10" in shutdown.message
    assert "platform_PriorFlowCtrlWd-group" in shutdown.message and "NX-OS 10.4" in shutdown.message
    restore = problems[("backend", "qos", "pfc_watchdog", "restoration_ms")]
    assert "gives auto-restore-multiplier 600" in restore.message and "outside 0-100" in restore.message
    # the same numbers are fine on SONiC, whose fields are milliseconds
    compile_intent(write_intent(intent.replace("nos: nxos", "nos: sonic").replace('"10.4"', '"202411"'), name="sonic"), render=False)


def test_a_switch_override_outside_the_range_is_refused_at_the_override(write_intent):
    intent = _intent("nxos", "N9K-C9364D-GX2A", "10.5", {}) + (
        "  qos_overrides:\n    be-spine01:\n      pfc_watchdog: {poll_interval_ms: 100, detection_ms: 1100, restoration_ms: 400}\n"
    )
    with pytest.raises(CheckError) as refused:
        compile_intent(write_intent(intent), render=False)
    fields = [p.field for p in refused.value.problems]
    assert fields == [("backend", "qos_overrides", "be-spine01", "pfc_watchdog", "detection_ms")]
    assert refused.value.problems[0].message.startswith("be-spine01 (N9K-C9364D-GX2A, NX-OS 10.5)")


def test_silicon_one_dlb_refusal_names_what_is_unverified(write_intent):
    intent = (
        'gpus: 64\nbackend:\n  scalable_unit_gpus: 32\n  leaf: {model: N9364E-SG2-O, nos: nxos, nos_release: "10.5(3)F"}\n  load_balancing: {mode: flowlet}\n'
    )
    with pytest.raises(CheckError) as refused:
        compile_intent(write_intent(intent), render=False)
    mode = [p.message for p in refused.value.problems if p.field == ("backend", "load_balancing", "mode")]
    assert len(mode) == 1 and "N9364E-SG2-O on nxos cannot do flowlet" in mode[0]
    assert "policy-driven" in mode[0] and "could not source those commands" in mode[0] and "Configure Dynamic Load Balancing" in mode[0]
