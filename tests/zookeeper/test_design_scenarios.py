"""``design:`` in scenario files: validated like every key (file:line errors), the same
consumers and timeline run under each design, and the measures in results and ``--json``."""

from __future__ import annotations

import pytest

from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

BASE = """version: 1
name: d
design: zookeeper
cluster:
  topics: {T: 4}
consumers:
  - {id: A, group: g, topics: [T]}
  - {id: B, group: g, topics: [T]}
timeline:
  - {at: 0s, start: [A, B]}
  - {at: 10s, crash: B}
until: 30s
expect:
  - {assignment: {A: [T-0..3]}, measures: {failed_rebalances: 0}}
"""


def _errors(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(text)
    return info.value.format()


def test_an_unknown_design_is_named_with_its_line():
    text = _errors(BASE.replace("design: zookeeper", "design: zookeper"))
    assert "<text>:3:9: design: unknown design 'zookeper' (did you mean `zookeeper`?)" in text


def test_zookeeper_settings_need_the_zookeeper_design():
    text = _errors(
        BASE.replace("design: zookeeper\n", "").replace(
            "{id: A, group: g, topics: [T]}",
            "{id: A, group: g, topics: [T], config: {num.streams: 2}}",
        )
    )
    assert "<text>:6:" in text and "consumers[0].config.num.streams" in text
    assert "a setting of Kafka 0.8's ZooKeeper consumer" in text
    assert "add `design: zookeeper`" in text


def test_steps_and_checks_the_zookeeper_design_lacks_are_errors():
    text = _errors(
        BASE.replace("crash: B", "stall: {B: 5s}").replace(
            "measures: {failed_rebalances: 0}", "generation: 2"
        )
    )
    assert "<text>:11:" in text and "`stall` is not available under `design: zookeeper`" in text
    assert "the `generation` check is not available under `design: zookeeper`" in text


def test_bad_ensemble_and_server_references():
    text = _errors(
        BASE.replace(
            "topics: {T: 4}", "topics: {T: 4}\n  zookeeper: {servers: 2, lag: {zk-0: 1s, zk-5: 2s}}"
        ).replace(
            "{id: B, group: g, topics: [T]}",
            "{id: B, group: g, topics: [T], config: {zookeeper.server: zk-3}}",
        )
    )
    assert "zk-0 is the leader: it has no lag" in text
    assert "unknown follower `zk-5`" in text
    assert "unknown server `zk-3`" in text
    assert "consumers[1].config.zookeeper.server" in text


def test_a_two_strategy_list_is_refused_for_the_08_consumer():
    text = _errors(
        BASE.replace(
            "{id: A, group: g, topics: [T]}",
            "{id: A, group: g, topics: [T], config: {partition.assignment.strategy: [range, roundrobin]}}",
        )
    )
    assert "the 0.8 consumer has one strategy, range or roundrobin" in text


def test_the_same_file_runs_under_both_designs_with_measures():
    zk = run_scenario(load_scenario(BASE))
    classic = run_scenario(
        load_scenario(
            BASE.replace("design: zookeeper", "design: client-side").replace(
                "until: 30s", "until: 70s"
            )
        )
    )
    assert zk.passed and classic.passed, (zk.expectations, classic.expectations)
    assert zk.measures is not None and classic.measures is not None
    assert zk.measures["design"] == "zookeeper" and classic.measures["design"] == "client-side"
    # the crash at 10 s: ZooKeeper expires B's session 6 s later, then A rebalances alone
    expired = [e for e in zk.events if e["event"] == "zk_session_expired"]
    assert [e["t_ms"] for e in expired] == [16_000]
    settle = {s["at_ms"]: s["after_ms"] for s in zk.measures["settle_ms"]}
    assert settle[10_000] is not None and 6_000 <= settle[10_000] < 7_000
    doc = zk.to_dict()
    assert doc["measures"]["unowned_partition_ms"] == zk.measures["unowned_partition_ms"] > 0
    assert doc["groups"][0]["members"][0]["assignment"] == ["T-0", "T-1", "T-2", "T-3"]


def test_a_zookeeper_run_is_deterministic():
    a = run_scenario(load_scenario(BASE))
    b = run_scenario(load_scenario(BASE))
    assert a.events == b.events


def test_the_json_document_of_a_zookeeper_run_follows_the_schema():
    import json
    from pathlib import Path

    from tests.scenarios.schema_check import errors

    schema = json.loads(
        (Path(__file__).resolve().parents[2] / "docs" / "result-schema.json").read_text()
    )
    doc = json.loads(json.dumps(run_scenario(load_scenario(BASE)).to_dict()))
    assert errors(doc, schema) == []


def test_a_sweep_row_carries_the_measures_of_either_design():
    """pipeline.runrow (what the Spark sweep's executors run), without Spark."""
    from pipeline.runrow import RowTask, run_row

    def row(text: str) -> dict[str, object]:
        task = RowTask(base_text=text, base_source="d.yaml")
        run, _ = run_row(
            task,
            {
                "scenario_id": 0,
                "point": 0,
                "variant": "v",
                "seed": 0,
                "params": {},
                "overrides": "{}",
            },
        )
        return run

    zk = row(BASE)
    classic = row(BASE.replace("design: zookeeper", "design: client-side").replace("30s", "70s"))
    assert zk["error"] is None and classic["error"] is None, (zk["error"], classic["error"])
    assert (zk["design"], classic["design"]) == ("zookeeper", "client-side")
    assert zk["rebalance_attempts"] == 3  # A and B at the start, A after B's session expired
    assert zk["notifications"] == 1 and zk["conflicts"] == 0
    assert isinstance(zk["settle_ms_max"], int) and zk["settle_ms_max"] >= 6000
    assert classic["rebalance_attempts"] == 2  # the leader assigns once per generation


D2 = """version: 1
name: d2
design: coordinator-assigns
cluster:
  topics: {T: 4}
  config: {group.initial.rebalance.delay.ms: 0, group.server.assignor: roundrobin}
defaults: {partition.assignment.strategy: [range]}
consumers:
  - {id: A, group: g, topics: [T]}
  - {id: B, group: g, topics: [T]}
timeline:
  - {at: 0s, start: [A, B]}
expect:
  - {state: Stable, generation: 1, assignment: {A: [T-0, T-2], B: [T-1, T-3]}}
"""


def test_design_2_the_coordinator_answers_join_group_with_the_assignment():
    result = run_scenario(load_scenario(D2))
    assert result.passed, result.expectations
    apis = [e["api"] for e in result.events if e["event"] == "request_sent"]
    assert "JoinGroup" in apis and "SyncGroup" not in apis
    computed = [e for e in result.events if e["event"] == "server_assignment_computed"]
    assert [(e["generation_id"], e["members"]) for e in computed] == [(1, 2)]
    joined = [e for e in result.events if e["event"] == "joined"]
    assert joined and all(e["leader"] == "" and not e["is_leader"] for e in joined)
    assert result.measures is not None and result.measures["rebalance_attempts"] == 1


def test_design_2_settings_are_validated():
    text = _errors(D2.replace("design: coordinator-assigns\n", ""))
    assert "group.server.assignor is the broker's strategy of design 2" in text
    assert "<text>:5:" in text
    text = _errors(D2.replace("group.server.assignor: roundrobin", "group.server.assignor: rnge"))
    assert "unknown server-side strategy 'rnge' (did you mean `range`?)" in text


def test_today_s_protocol_is_untouched_without_a_server_assignor():
    classic = run_scenario(
        load_scenario(
            D2.replace("design: coordinator-assigns", "design: client-side").replace(
                ", group.server.assignor: roundrobin", ""
            )
        )
    )
    apis = [e["api"] for e in classic.events if e["event"] == "request_sent"]
    assert "SyncGroup" in apis
    assert not [e for e in classic.events if e["event"] == "server_assignment_computed"]
