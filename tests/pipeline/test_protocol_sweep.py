"""A sweep row that flips group.protocol: settings Kafka refuses for the protocol are dropped."""

from __future__ import annotations

import json

from pipeline.runrow import RowTask, run_row
from scenarios.compare import switch_protocol

BASE = """\
version: 1
name: small
cluster:
  topics: {T: 4}
  config: {group.consumer.assignors: "range,uniform"}
defaults:
  partition.assignment.strategy: [cooperative-sticky]
  session.timeout.ms: 10000
consumers:
  - {id: "C{i}", count: 2, group: g, topics: [T]}
timeline:
  - {at: 0s, start: all}
until: 20s
"""


def _row(overrides: dict) -> dict:
    run, _ = run_row(
        RowTask(BASE, "small.yaml"),
        {
            "scenario_id": 0,
            "point": 0,
            "variant": "v",
            "seed": 0,
            "params": {},
            "overrides": json.dumps(overrides),
        },
    )
    return run


def test_consumer_protocol_drops_the_classic_only_settings() -> None:
    data = {
        "defaults": {"partition.assignment.strategy": ["range"], "heartbeat.interval.ms": 100},
        "consumers": [{"id": "A", "config": {"session.timeout.ms": 9000}}, {"id": "B"}],
    }
    out = switch_protocol(data, {"defaults.group.protocol": "consumer"})
    assert out["defaults"] == {}
    assert out["consumers"][0]["config"] == {}


def test_a_setting_the_row_sets_itself_is_kept() -> None:
    overrides = {
        "defaults.group.protocol": "consumer",
        "defaults.partition.assignment.strategy": ["range"],
    }
    data = {"defaults": {"partition.assignment.strategy": ["range"], "session.timeout.ms": 1}}
    assert switch_protocol(data, overrides)["defaults"] == {
        "partition.assignment.strategy": ["range"]
    }
    run = _row(overrides)  # Kafka refuses it: an error row, with Kafka's message
    assert "partition.assignment.strategy cannot be set when group.protocol=CONSUMER" in (
        run["error"] or ""
    )


def test_classic_drops_the_remote_assignor_and_one_consumer_can_switch() -> None:
    data = {
        "defaults": {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
        "consumers": [{"id": "A", "config": {"group.remote.assignor": "range"}}],
    }
    out = switch_protocol(data, {"consumers[0].config.group.protocol": "classic"})
    assert out["consumers"][0]["config"] == {}
    assert out["defaults"] == {"group.protocol": "consumer", "group.remote.assignor": "uniform"}


def test_rows_carry_the_protocol_and_the_servers_assignor() -> None:
    classic = _row({})
    assert (classic["group_protocol"], classic["protocol"], classic["assignor"]) == (
        "classic",
        "cooperative",
        "cooperative-sticky",
    )
    # no group.remote.assignor: the broker's default, the first of group.consumer.assignors
    consumer = _row({"defaults.group.protocol": "consumer"})
    assert consumer["error"] is None
    assert (consumer["group_protocol"], consumer["protocol"], consumer["assignor"]) == (
        "consumer",
        "consumer",
        "range",
    )
    asked = _row(
        {"defaults.group.protocol": "consumer", "defaults.group.remote.assignor": "uniform"}
    )
    assert asked["assignor"] == "uniform" and asked["error"] is None
