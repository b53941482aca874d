from __future__ import annotations

import pytest

from scenarios.actions import AddPartitions, CrashBroker, Network, Start
from scenarios.checks import Assignment, Count, ErrorCounts, Rebalances
from scenarios.errors import ScenarioError
from scenarios.loader import library_scenarios, load_scenario, load_scenario_dict, with_overrides

SCENARIO = """\
version: 1
name: three
description: three consumers
seed: 7
cluster:
  brokers: 3
  offsets_partitions: 10
  topics: {T1: 6, T2: {partitions: 2}}
  config: {group.initial.rebalance.delay.ms: 1s}
defaults: {session.timeout.ms: 10s, partition.assignment.strategy: [range, roundrobin]}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1], static: true}
  - {id: X, group: g1, topics: T2, config: {partition.assignment.strategy: org.apache.kafka.clients.consumer.RoundRobinAssignor}}
timeline:
  - {at: 2s, crash: C2}
  - {at: 0s, start: all}
  - {at: 3s, add_partitions: {T1: 2}}
  - {at: 4s, network: {isolate: C1, for: 2s}}
  - {at: 5s, crash_broker: {coordinator_of: g1}}
expect:
  - {at: 1s, state: Stable}
  - {state: Stable, assignment: {C1: [T1-0..2], X: []}, errors: [MEMBER_ID_REQUIRED], rebalances: {min: 1, max: 3}}
"""


def test_a_full_scenario_is_built():
    s = load_scenario(SCENARIO)
    assert s.name == "three" and s.seed == 7
    assert s.cluster.brokers == 3 and s.cluster.offsets_partitions == 10
    assert s.cluster.config == {
        "group_initial_rebalance_delay_ms": 1000,
        "offsets_topic_num_partitions": 10,
    }
    assert [c.id for c in s.consumers] == ["C1", "C2", "X"]
    c1 = s.consumer("C1")
    assert c1.config["session_timeout_ms"] == 10000
    assert c1.config["group_instance_id"] == "C1", "static: true uses the id as group.instance.id"
    assert c1.strategies == ("range", "roundrobin")
    assert s.consumer("X").strategies == ("roundrobin",), "Kafka class names map to protocol names"
    assert s.consumer("X").topics == ("T2",)
    assert [a.at_ms for a in s.timeline] == [0, 2000, 3000, 4000, 5000], "sorted by time"
    assert s.timeline[0].args == Start(consumers=("C1", "C2", "X"))
    assert s.timeline[2].args == AddPartitions(topics=(("T1", 2),))
    assert s.timeline[3].args == Network(sides=(("C1",),), isolate=True, for_ms=2000)
    assert s.timeline[4].args == CrashBroker(broker={"coordinator_of": "g1"})
    assert [a.kind for a in s.timeline] == [
        "start",
        "crash",
        "add_partitions",
        "network",
        "crash_broker",
    ]
    assert s.expect[1].checks["assignment"] == Assignment({"C1": ("T1-0", "T1-1", "T1-2"), "X": ()})
    assert s.expect[1].checks["rebalances"] == Rebalances(Count(min=1, max=3))
    assert s.expect[1].checks["errors"] == ErrorCounts({"MEMBER_ID_REQUIRED": Count(1, None)})
    assert s.expect[0].where.line == 21
    assert s.end_ms == 5000 + 30_000


def test_all_errors_are_collected_at_once():
    bad = (
        SCENARIO.replace("seed: 7", "seed: -1")
        .replace("crash: C2", "crash: C9")
        .replace("state: Stable}", "state: Stabel}")
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    text = info.value.format()
    assert "3 errors" in text
    assert "<text>:4:7: seed: must be at least 0" in text
    assert "timeline[0].crash: unknown consumer `C9`" in text
    assert (
        "<text>:21:21: expect[0].state: unknown group state 'Stabel' (did you mean `Stable`?)"
        in text
    )


def test_a_dict_scenario_names_its_source_and_path():
    data = {
        "version": 1,
        "name": "d",
        "cluster": {"topics": {"T": 1}},
        "consumers": [{"id": "A", "group": "g", "topics": ["U"]}],
    }
    with pytest.raises(ScenarioError) as info:
        load_scenario_dict(data, source="<sweep row 3>")
    (issue,) = info.value.issues
    assert issue.format() == "<sweep row 3>: consumers[0].topics[0]: unknown topic `U` (known: T)"


def test_with_overrides_builds_a_variant():
    s = load_scenario(SCENARIO)
    v = with_overrides(
        s, {"consumers[0].count": 5, "defaults.partition.assignment.strategy": ["sticky"]}
    )
    assert [c.id for c in v.consumers] == ["C1", "C2", "C3", "C4", "C5", "X"]
    assert v.consumer("C3").strategies == ("sticky",)
    assert s.consumer("C1").strategies == ("range", "roundrobin"), "the original is untouched"
    with pytest.raises(ScenarioError, match="unknown assignor `stiky`"):
        with_overrides(s, {"defaults.partition.assignment.strategy": ["stiky"]})


def test_overrides_at_load_time():
    s = load_scenario(SCENARIO, overrides={"seed": 99, "cluster.brokers": 5})
    assert s.seed == 99 and s.cluster.brokers == 5


def test_missing_file_is_an_error_not_a_traceback(tmp_path):
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "nope.yaml")


def test_empty_and_non_mapping_documents():
    with pytest.raises(ScenarioError, match="must be a mapping"):
        load_scenario("- 1\n- 2\n")


def test_library_lessons_are_found_by_name():
    assert len(library_scenarios()) >= 20
    assert load_scenario("seed004-roundrobin").name == "seed004-roundrobin"


def test_every_kafka_setting_reaches_a_real_config_field():
    """No setting a scenario accepts is silently dropped, and none of the configs is unreachable."""
    import attrs

    from coordinator.config import CoordinatorConfig
    from members.config import ConsumerConfig
    from scenarios.configkeys import BROKER_KEYS, CONSUMER_KEYS

    consumer_fields = {f.name for f in attrs.fields(ConsumerConfig)}
    broker_fields = {f.name for f in attrs.fields(CoordinatorConfig)}
    assert {f for f, _ in CONSUMER_KEYS.values()} == consumer_fields - {"group_id"}
    # server_assignor (design 2) is a function the runner builds from group.server.assignor
    assert {f for f, _ in BROKER_KEYS.values()} == broker_fields - {"server_assignor"}


KIP848 = """\
version: 1
name: kip848
cluster: {topics: {T: 4}}
defaults: {group.protocol: consumer}
consumers:
  - {id: A, group: g, topics: [T], config: {session.timeout.ms: 10s}}
  - {id: B, group: g, topics: [T], config: {group.protocol: classic, group.remote.assignor: uniform}}
  - {id: C, group: g, topics: [T], config: {group.remote.assignor: uniform}}
"""


def test_group_protocol_settings_are_checked_with_kafkas_messages():
    """group.protocol per consumer or in defaults; classic-only settings refused under consumer
    and group.remote.assignor under classic, each at its line with Kafka's message."""
    with pytest.raises(ScenarioError) as info:
        load_scenario(KIP848)
    text = info.value.format()
    assert "2 errors" in text
    assert (
        "<text>:6:65: consumers[0].config.session.timeout.ms: session.timeout.ms cannot be set "
        "when group.protocol=CONSUMER" in text
    )
    assert (
        "<text>:7:93: consumers[1].config.group.remote.assignor: group.remote.assignor cannot be "
        "set when group.protocol=CLASSIC" in text
    )
    ok = load_scenario(
        KIP848.replace(", config: {session.timeout.ms: 10s}", "").replace(
            "group.protocol: classic, ", "group.protocol: consumer, "
        )
    )
    assert [c.config["group_protocol"] for c in ok.consumers] == ["consumer"] * 3


def test_every_zookeeper_consumer_setting_reaches_a_real_config_field():
    """design: zookeeper's own settings land on the 0.8 consumer's config (members/zk_consumer)."""
    import attrs

    from members.zk_consumer import ZkConsumerConfig
    from scenarios.configkeys import ZK_CONSUMER_KEYS

    zk_fields = {f.name for f in attrs.fields(ZkConsumerConfig)}
    assert {f for f, _ in ZK_CONSUMER_KEYS.values()} <= zk_fields


def test_delay_request_is_built_and_its_errors_name_the_field():
    from scenarios.actions import DelayRequest

    good = SCENARIO.replace(
        "  - {at: 5s, crash_broker",
        "  - {at: 1s, delay_request: {from: C1, api: JoinGroup, for: 15s}}\n  - {at: 5s, crash_broker",
    )
    s = load_scenario(good)
    assert DelayRequest(node="C1", api="JoinGroup", for_ms=15_000) in [a.args for a in s.timeline]
    bad = SCENARIO.replace(
        "  - {at: 5s, crash_broker",
        "  - {at: 1s, delay_request: {from: C7, api: JoinGrop, for: 0s}}\n"
        "  - {at: 1s, delay_request: {from: C1, api: Heartbeat}}\n"
        "  - {at: 5s, crash_broker",
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    text = info.value.format()
    assert "timeline[4].delay_request.from: unknown consumer `C7`" in text
    assert (
        "timeline[4].delay_request.api: unknown api `JoinGrop` (did you mean `JoinGroup`?)" in text
    )
    assert "timeline[4].delay_request.for: a delay must be positive" in text
    assert "timeline[5].delay_request: delay_request needs `for`" in text
