from __future__ import annotations

from scenarios.eventlog import dumps_event
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario

BASE = """\
version: 1
name: two
cluster: {topics: {T1: 4}}
defaults: {session.timeout.ms: 10s, partition.assignment.strategy: [range]}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
expect:
  - {at: 2s, state: PreparingRebalance, generation: 0}
  - {state: Stable, generation: 1, leader: C1, protocol: range, assignment: {C1: [T1-0, T1-1], C2: [T1-2, T1-3]}}
"""


def test_result_carries_groups_members_and_expectations():
    result = run_scenario(load_scenario(BASE))
    assert result.passed, [e.to_dict() for e in result.expectations]
    (g,) = result.groups
    assert (g.group_id, g.state, g.generation, g.leader, g.protocol) == (
        "g1",
        "Stable",
        1,
        "C1",
        "range",
    )
    assert g.assignment == {"C1": ["T1-0", "T1-1"], "C2": ["T1-2", "T1-3"]}
    assert {m.client_state for m in g.members} == {"STABLE"}
    assert g.leader_member_id.startswith("C1-")
    assert len(result.rebalances) == 1
    assert result.end_ms == 2000 + 30_000, "the last time mentioned + 30 s"
    assert [e.at_ms for e in result.expectations] == [2000, 32_000]


def test_a_false_expectation_fails_with_expected_and_actual():
    result = run_scenario(load_scenario(BASE.replace("generation: 1,", "generation: 5,")))
    assert not result.passed
    failing = [c for e in result.expectations for c in e.checks if not c.passed]
    assert [(c.check, c.expected, c.actual) for c in failing] == [("generation", 5, 1)]


def test_same_seed_same_log_other_seed_other_member_ids():
    a = run_scenario(load_scenario(BASE))
    b = run_scenario(load_scenario(BASE))
    c = run_scenario(load_scenario(BASE), seed=99)
    assert [dumps_event(e) for e in a.events] == [dumps_event(e) for e in b.events]
    assert a.groups[0].leader_member_id != c.groups[0].leader_member_id
    assert c.seed == 99


def test_until_cuts_the_run_and_unreached_expectations_fail():
    result = run_scenario(load_scenario(BASE), until_ms=1000)
    assert result.end_ms == 1000
    assert not result.passed
    assert result.expectations[0].checks[0].check == "reached"


def test_a_runtime_problem_is_reported_not_raised():
    text = BASE.replace(
        "  - {at: 0s, start: all}",
        "  - {at: 0s, start: all}\n  - {at: 1s, start: C1}",
    )
    result = run_scenario(load_scenario(text))
    assert result.error is not None and "already running" in result.error
    assert result.events, "the events up to the failure are kept"
    assert not result.passed


def test_raw_requests_and_their_expectations():
    text = """\
version: 1
name: raw
cluster: {topics: {T1: 1}}
timeline:
  - at: 0s
    send: {api: JoinGroup, from: app, group_id: g, protocols: [range], topics: [T1]}
    expect: {error: MEMBER_ID_REQUIRED}
    as: j
  - at: 1s
    send: {api: Heartbeat, from: app, group_id: g, generation_id: 0, member_id: $j.member_id}
    expect: {error: NONE}
"""
    result = run_scenario(load_scenario(text))
    raw = {e.label: e for e in result.expectations}
    assert raw["JoinGroup sent at 0ms (j)"].passed
    hb = raw["Heartbeat sent at 1000ms"]
    assert not hb.passed, "a pending member id is not a member: UNKNOWN_MEMBER_ID"
    assert hb.checks[0].actual == "UNKNOWN_MEMBER_ID"


EVERY_ACTION = """\
version: 1
name: every-action
cluster: {brokers: 3, topics: {T1: 4, T2: 2}}
# Deleting T2 at 50s holds up C1's next rebalance: its auto-commit before rejoining includes its
# positions of T2, which the broker refuses (UNKNOWN_TOPIC_OR_PARTITION, retriable), until the
# join-prepare timer (max.poll.interval.ms) runs out; 20s lets the group settle before the end.
defaults: {session.timeout.ms: 10s, partition.assignment.strategy: [range], metadata.max.age.ms: 5s,
           max.poll.interval.ms: 20s}
consumers:
  - {count: 3, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
  - {at: 10s, commit: C1}
  - {at: 11s, subscribe: {C1: [T1, T2]}}
  - {at: 20s, network: {isolate: C3, for: 20s}}
  - {at: 45s, create_topic: {T3: 2}}
  - {at: 46s, subscribe: {C2: [T3]}}
  - {at: 50s, delete_topic: T2}
  - {at: 55s, crash_broker: broker-1}
  - {at: 60s, restart_broker: broker-1}
  - {at: 65s, stall: {C1: 2s}}
  - {at: 70s, crash: C2}
  - {at: 72s, restart: C2}
expect:
  - {at: 15s, owns: {C1: [T2-0, T2-1]}, label: "the new subscription was picked up"}
  - {at: 35s, members: [C1, C2], label: "C3 cut off by the network: its session expired"}
  - {at: 49s, assignment: {C2: [T3-0, T3-1]}}
  - {state: Stable, members: 3, invariants: true, sizes: {C2: 2}}
"""


def test_every_timeline_action_runs():
    result = run_scenario(load_scenario(EVERY_ACTION))
    assert result.error is None
    assert result.passed, [e.to_dict() for e in result.expectations if not e.passed]
    kinds = {e["event"] for e in result.events}
    for event in (
        "sim_consumer_commit",
        "sim_consumer_subscribe",
        "sim_network_partitioned",
        "sim_network_healed",
        "sim_topic_created",
        "sim_topic_deleted",
        "sim_broker_failed",
        "sim_broker_restarted",
        "sim_consumer_stall",
        "sim_consumer_crashed",
        "sim_consumer_restarted",
    ):
        assert event in kinds, event


CLOSE_WITH_TIMEOUT = """\
version: 1
name: close-timeouts
cluster: {topics: {T1: 4}}
defaults: {partition.assignment.strategy: [range], enable.auto.commit: false}
consumers:
  - {count: 3, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: all}
  - {at: 10s, network: {isolate: C1, for: 60s}}
  - {at: 10s, close: {C1: 2s}}
  - {at: 10s, close: C2}
expect:
  - {at: 10s, client_states: {C1: CLOSING, C2: CLOSING}}
  - {at: 11s, client_states: {C1: CLOSING, C2: CLOSED}}
  - {at: 12s, client_states: {C1: CLOSED}}
"""


def test_a_close_step_can_give_a_timeout_per_consumer():
    """``close: {C1: 2s}`` is KafkaConsumer.close(Duration.ofSeconds(2)): C1, cut off from the
    coordinator, waits for its LeaveGroup's answer until its 2 s close timer ends it; C2's
    ``close: C2`` (30 s by default) ends with the answer."""
    result = run_scenario(load_scenario(CLOSE_WITH_TIMEOUT))
    assert result.error is None
    assert result.passed, [e.to_dict() for e in result.expectations if not e.passed]
    closes = [e for e in result.events if e["event"] == "sim_consumer_closed"]
    assert [(e["node"], e.get("timeout_ms")) for e in closes] == [("C1", 2000), ("C2", None)]
    (timed_out,) = [e for e in result.events if e["event"] == "close_timed_out"]
    assert (timed_out["node"], timed_out["t_ms"], timed_out["apis"]) == (
        "C1",
        12_000,
        ["LeaveGroup"],
    )


MEMBER_EPOCHS = """\
version: 1
name: member-epochs
cluster: {topics: {T1: 4}}
defaults: {partition.assignment.strategy: [range]}
consumers:
  - {count: 2, first: 1, id: "C{i}", group: g1, topics: [T1]}
timeline:
  - {at: 0s, start: C1}
  - {at: 10s, start: C2}
expect:
  - {at: 9s, member_epochs: {C1: 1}, client_states: {C1: STABLE}}
  - {at: 20s, member_epochs: {C1: 2, C2: 2}}
  - {at: 20s, member_epochs: {C1: 3}}
"""


def test_member_epochs_are_checked():
    """``member_epochs``: a classic member's epoch is its generation; a wrong one fails."""
    result = run_scenario(load_scenario(MEMBER_EPOCHS))
    assert result.error is None
    assert [e.passed for e in result.expectations] == [True, True, False]


def test_kip848_rebalances_have_the_classic_measures():
    """history.consumer_group_rebalances: a KIP-848 group's rebalance runs from the epoch bump
    until Stable plus the assignments that complete it; C1's slow poll() holds T1-2 back."""
    result = run_scenario(load_scenario("slow-reconciliation"))
    records = [r for r in result.rebalances if r["protocol"] == "consumer"]
    assert [r["generation_id"] for r in records] == [2, 3]
    second = records[1]
    assert (second["start_ms"], second["end_ms"]) == (12_003, 32_010)
    assert (second["partitions_moved"], second["partitions_revoked"]) == (2, 2)
    # T1-5 unowned 15.010 -> 17.006, T1-2 30.002 -> 32.010
    assert second["paused_partition_ms"] == 1996 + 2008
    assert (second["trigger"], second["outcome"], second["members_after"]) == (
        "member_joined",
        "Stable",
        3,
    )
