"""``groupsim compare``: variants of one scenario, measured side by side (scenarios/compare.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarios import compare as cmp
from scenarios.cli import app
from scenarios.loader import load_scenario, load_scenario_dict

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """\
version: 1
name: cmp
seed: 3
cluster: {topics: {T: 6}}
defaults: {partition.assignment.strategy: [range], session.timeout.ms: 10s}
consumers:
  - {count: 3, first: 1, id: "C{i}", group: g, topics: [T], config: {heartbeat.interval.ms: 1s}}
timeline:
  - {at: 0s, start: all}
  - {at: 20s, restart: C1}
expect:
  - {at: 19s, generation: 99, group: g}
"""


def test_the_consumer_variant_drops_the_classic_only_settings_and_validates() -> None:
    s = load_scenario(SCENARIO)
    description, data = cmp.variant_data(s.data, "consumer")
    assert "KIP-848" in description
    assert data["defaults"] == {"group.protocol": "consumer", "group.remote.assignor": "uniform"}
    assert data["consumers"][0]["config"] == {}
    assert data["expect"] == []
    loaded = load_scenario_dict(data, source="variant")
    assert {c.config["group_protocol"] for c in loaded.consumers} == {"consumer"}


def test_the_classic_variants_set_the_strategy_and_static() -> None:
    s = load_scenario(SCENARIO)
    _, eager = cmp.variant_data(s.data, "eager")
    _, static = cmp.variant_data(s.data, "static")
    assert eager["defaults"]["partition.assignment.strategy"] == ["range"]
    assert static["defaults"]["partition.assignment.strategy"] == ["cooperative-sticky"]
    assert all(c["static"] for c in static["consumers"])
    assert s.data["expect"], "the scenario's own data is left alone"


def test_a_named_variant_applies_dotted_overrides() -> None:
    name, _, overrides = cmp.parse_variant("fast=defaults.session.timeout.ms:6s,seed:4")
    assert (name, overrides) == ("fast", {"defaults.session.timeout.ms": "6s", "seed": 4})
    with pytest.raises(cmp.VariantError, match="unknown variant 'eagre'"):
        cmp.parse_variant("eagre")
    with pytest.raises(cmp.VariantError, match="not path:value"):
        cmp.parse_variant("x=defaults")


def test_measures_count_moves_revocations_and_unowned_time() -> None:
    def cb(t, node, callback, parts):
        return {
            "event": "rebalance_callback",
            "t_ms": t,
            "node": node,
            "group_id": "g",
            "callback": callback,
            "partitions": parts,
        }

    events = [
        cb(0, "A", "assigned", ["T-0", "T-1"]),
        cb(10, "A", "revoked", ["T-1"]),
        cb(30, "B", "assigned", ["T-1"]),
        {"event": "assignment_received", "t_ms": 30, "node": "B"},
        {"event": "response_received", "t_ms": 31, "node": "B", "error": "FENCED_MEMBER_EPOCH"},
    ]
    m = cmp.measure("x", "d", events)
    assert (m.partitions_moved, m.partitions_revoked, m.unowned_partition_ms) == (1, 1, 20)
    assert (m.assignments, m.last_change_ms, m.consumer_errors) == (1, 30, 1)


def test_compare_runs_each_variant_with_the_same_seed() -> None:
    s = load_scenario(SCENARIO)
    first = cmp.compare(s, ["eager", "static"])
    again = cmp.compare(s, ["eager", "static"])
    assert first == again
    eager, static = first
    assert eager.partitions_revoked > 0
    assert static.partitions_moved == 0  # C1 comes back under its group.instance.id


def test_the_readme_compare_table_is_what_the_command_prints() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```text\n(.*?)```", readme, flags=re.S) if "compare" in b)
    command, *shown = block.splitlines()
    args = command.removeprefix("$ groupsim ").split()
    printed = CliRunner().invoke(app, args, env={"COLUMNS": "120"}).output
    for line in shown:
        assert line in printed, line


def test_the_json_output_and_a_bad_variant() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["compare", "rolling-restart-dynamic", "-v", "eager", "--json"])
    assert out.exit_code == 0
    doc = json.loads(out.output)
    assert [v["variant"] for v in doc["variants"]] == ["eager"]
    assert doc["variants"][0]["partitions_moved"] == 16
    bad = runner.invoke(app, ["compare", "rolling-restart-dynamic", "-v", "nope"])
    assert bad.exit_code == 2
