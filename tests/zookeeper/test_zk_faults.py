"""Design 1 under faults: a consumer cut from ZooKeeper (session kept, or expired and
``ZKSessionExpireListener.handleNewSession``), a restarted process, the application's
``commitOffsets()``; and the same steps from scenario files (validated with file:line errors).
Kafka's source: the parent of cc4dce94af8, ``ZookeeperConsumerConnector``."""

from __future__ import annotations

import pytest

from coordinator import events as ev
from members.zk_consumer import ZkConsumerConfig
from scenarios.errors import ScenarioError
from scenarios.loader import load_scenario
from scenarios.runner import run_scenario
from scenarios.zk_simulation import ZkSimulation

G, T = "g", "T"


def _sim(*names: str, **cfg: object) -> ZkSimulation:
    sim = ZkSimulation(topics={T: 4})
    for n in names:
        sim.add_consumer(n, ZkConsumerConfig(group_id=G, consumer_id=n, topics=(T,), **cfg))  # type: ignore[arg-type]
        sim.start(n)
    sim.run(until=5_000)
    return sim


def _events(sim: ZkSimulation, name: str, node: str | None = None) -> list[dict]:
    return [e for e in sim.events if e["event"] == name and node in (None, e["node"])]


def test_an_expired_session_is_renewed_re_registered_and_rebalanced():
    """handleNewSession: resetState, registerConsumerInZK, syncedRebalance. Until the cut
    heals, the cut consumer's fetchers go on while the others took its partitions."""
    sim = _sim("A", "B")
    assert sim.fetching() == {"T-0": ["A"], "T-1": ["A"], "T-2": ["B"], "T-3": ["B"]}
    old = sim.consumers["A"].session_id
    sim.partition_network([["A"]], 10_000)  # at 5 s, for 10 s
    sim.run(until=12_000)  # the session expired at 5 s + 6 s (zookeeper.session.timeout.ms)
    assert [e["t_ms"] for e in _events(sim, ev.ZK_SESSION_EXPIRED)] == [11_000]
    assert sim.registry(G) == ["g_B"]
    # B owns everything, A still fetches T-0 and T-1: two readers of one partition
    assert sim.fetching() == {"T-0": ["A", "B"], "T-1": ["A", "B"], "T-2": ["B"], "T-3": ["B"]}
    sim.run(until=20_000)
    (back,) = _events(sim, ev.ZK_CLIENT_RECONNECTED, "A")
    assert back["t_ms"] == 15_000 and back["session_expired"] is True
    (renewed,) = _events(sim, ev.ZK_NEW_SESSION, "A")
    assert renewed["old_session_id"] == old and renewed["session_id"] != old
    assert renewed["partitions"] == ["T-0", "T-1"]  # resetState: dropped, not committed
    assert sim.consumers["A"].session_id == renewed["session_id"]
    assert [e["t_ms"] for e in _events(sim, ev.ZK_CONSUMER_REGISTERED, "A")] == [
        2,
        15_001,
    ]  # after the create's round trip
    assert sim.registry(G) == ["g_A", "g_B"]
    assert sim.fetching() == {"T-0": ["A"], "T-1": ["A"], "T-2": ["B"], "T-3": ["B"]}
    assert sim.owners(G) == {"T-0": "g_A-0", "T-1": "g_A-0", "T-2": "g_B-0", "T-3": "g_B-0"}
    # what A read of T-0 during the cut was never committed by A (its registry was reset)
    a_commits = [e for e in _events(sim, ev.ZK_OFFSETS_COMMITTED, "A") if e["t_ms"] >= 5_000]
    assert all("T-0" not in e["offsets"] for e in a_commits if e["t_ms"] <= 15_000)
    # the new session watches the registry again: a later join notifies A
    sim.add_consumer("C", ZkConsumerConfig(group_id=G, consumer_id="C", topics=(T,)))
    sim.start("C")
    sim.run(until=30_000)
    assert any(e["t_ms"] > 20_000 for e in _events(sim, ev.ZK_WATCH_RECEIVED, "A"))
    assert sorted(len(sim.assignment(c)) for c in "ABC") == [1, 1, 2]


def test_a_short_cut_keeps_the_session_and_delivers_the_notifications_late():
    sim = _sim("A", "B")
    sim.partition_network([["A"]], 3_000)  # 5 s .. 8 s: within the 6 s session timeout
    sim.add_consumer("C", ZkConsumerConfig(group_id=G, consumer_id="C", topics=(T,)))
    sim.run(until=6_000)
    sim.start("C")  # A's notification waits for its connection
    sim.run(until=7_900)
    assert [e["t_ms"] for e in _events(sim, ev.ZK_WATCH_RECEIVED, "A")] == []
    assert [str(tp) for tp in sim.assignment("A")] == ["T-0", "T-1"]  # still fetching
    sim.run(until=20_000)
    (back,) = _events(sim, ev.ZK_CLIENT_RECONNECTED, "A")
    assert back["session_expired"] is False
    assert _events(sim, ev.ZK_NEW_SESSION) == [] and _events(sim, ev.ZK_SESSION_EXPIRED) == []
    assert [e["t_ms"] for e in _events(sim, ev.ZK_WATCH_RECEIVED, "A")] == [8_000]
    assert sorted(len(sim.assignment(c)) for c in "ABC") == [1, 1, 2]
    assert set(sim.owners(G)) == {"T-0", "T-1", "T-2", "T-3"}


def test_a_rebalance_waits_for_the_connection():
    """ZkClient.retryUntilConnected: a rebalance step due during the cut runs after it."""
    sim = _sim("A", "B", rebalance_backoff_ms=100)
    sim.add_consumer("C", ZkConsumerConfig(group_id=G, consumer_id="C", topics=(T,)))
    sim.start("C")  # A is notified 1 ms later and starts rebalancing...
    sim.run(until=5_002)
    sim.partition_network([["A"]], 2_000)  # ...and is cut in the middle of it
    sim.run(until=6_900)
    assert not [e for e in _events(sim, ev.ZK_REBALANCE_DONE, "A") if e["t_ms"] > 5_000]
    sim.run(until=20_000)
    done = [e["t_ms"] for e in _events(sim, ev.ZK_REBALANCE_DONE, "A") if e["t_ms"] > 5_000]
    assert done and done[0] >= 7_002
    assert sorted(len(sim.assignment(c)) for c in "ABC") == [1, 1, 2]


def test_a_restarted_process_has_a_new_id_and_the_old_one_lingers_until_its_session_expires():
    sim = _sim("A", "B")
    sim.restart("A")
    sim.run(until=8_000)
    assert sim.consumers["A"].consumer_id_string == "g_A-r1"
    assert sim.registry(G) == ["g_A", "g_A-r1", "g_B"]  # the dead process is still registered
    # the dead process's owner znodes live as long as its session: T-0 and T-1 are its share
    # of the new assignment too, so nobody fetches them
    assert sim.owners(G) == {"T-0": "g_A-0", "T-1": "g_A-0", "T-2": "g_A-r1-0", "T-3": "g_B-0"}
    assert sim.fetching() == {"T-0": [], "T-1": [], "T-2": ["A"], "T-3": ["B"]}
    sim.run(until=20_000)  # the old session expires at 5 s + 6 s, everyone rebalances
    assert sim.registry(G) == ["g_A-r1", "g_B"]
    assert set(sim.owners(G).values()) == {"g_A-r1-0", "g_B-0"}
    assert len(sim.owners(G)) == 4
    (started,) = [e for e in _events(sim, ev.CONSUMER_STARTED, "A") if e["incarnation"] == 1]
    assert started["t_ms"] == 5_000


def test_commit_offsets_writes_the_positions_to_zookeeper():
    """ConsumerConnector.commitOffsets(): updatePersistentPath of each moved offset under
    /consumers/<group>/offsets/<topic>/<partition> (commitOffsetToZooKeeper), only when it moved
    since the last checkpoint."""
    sim = _sim("A", auto_commit_enable=False, records_per_second=100)
    sim.run(until=7_000)
    sim.commit("A")
    a = sim.consumers["A"]
    expected = {str(tp): a.position(tp, 7_000) for tp in a.owned}
    assert sim.offsets(G) == expected and expected["T-0"] > 0
    assert sim.zk.view("zk-0")["/consumers/g/offsets/T/0"].data == str(expected["T-0"])
    sim.commit("A")  # nothing moved: nothing written
    assert len(_events(sim, ev.ZK_OFFSETS_COMMITTED, "A")) == 1
    sim.run(until=8_000)
    sim.commit("A")
    assert len(_events(sim, ev.ZK_OFFSETS_COMMITTED, "A")) == 2


def test_auto_commit_runs_every_interval():
    sim = _sim("A", auto_commit_interval_ms=2_000)
    sim.run(until=9_500)
    assert [e["t_ms"] for e in _events(sim, ev.ZK_OFFSETS_COMMITTED, "A")] == [
        2_000,
        4_000,
        6_000,
        8_000,
    ]


YAML = """version: 1
name: faults
design: zookeeper
cluster:
  topics: {T: 4}
consumers:
  - {id: A, group: g, topics: [T], config: {enable.auto.commit: false}}
  - {id: B, group: g, topics: [T]}
timeline:
  - {at: 0s, start: [A, B]}
  - {at: 10s, network: {isolate: A, for: 10s}}
  - {at: 25s, commit: A}
  - {at: 30s, restart: B}
until: 60s
expect:
  - at: 18s
    assignment: {A: [T-0, T-1], B: [T-0..3]}
  - at: 22s
    assignment: {A: [T-0, T-1], B: [T-2, T-3]}
  - assignment: {A: [T-0, T-1], B: [T-2, T-3]}
    members: [A, B]
    events:
      - {event: zk_new_session, count: 1}
      - {event: zk_client_reconnected, session_expired: true, count: 1}
      - {event: sim_consumer_commit, count: 1}
      - {event: sim_consumer_restarted, count: 1}
"""


def test_the_steps_run_from_a_scenario_file():
    result = run_scenario(load_scenario(YAML))
    assert result.error is None, result.error
    assert result.passed, [str(r) for r in result.expectations if not r.passed]


def _errors(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(text)
    return info.value.format()


def test_a_cut_between_zookeeper_servers_is_refused_with_its_line():
    text = _errors(
        YAML.replace(
            "network: {isolate: A, for: 10s}", "network: {partition: [[A, zk-1], [zk-0]], for: 5s}"
        )
    )
    assert "<text>:11:" in text and "timeline[1].network" in text
    assert "not the ensemble's servers from each other" in text


def test_brokers_are_not_nodes_under_the_zookeeper_design():
    text = _errors(YAML.replace("isolate: A", "isolate: broker-0"))
    assert "<text>:11:" in text and "timeline[1].network.isolate" in text
    assert "zk-0" in text  # the hint lists the nodes there


def test_steps_without_a_zookeeper_meaning_stay_refused():
    for step in ("stall: {A: 5s}", "subscribe: {A: [T]}", "crash_broker: broker-0"):
        text = _errors(YAML.replace("commit: A", step))
        assert "<text>:12:" in text and "is not available under `design: zookeeper`" in text


def test_a_new_layout_replaces_the_previous_cut():
    sim = _sim("A", "B")
    sim.partition_network([["A"]], 4_000)
    sim.run(until=6_000)
    sim.partition_network([["B"]], 2_000)  # A is reconnected, B is cut
    assert sim.cut == {"B"}
    (back,) = _events(sim, ev.ZK_CLIENT_RECONNECTED, "A")
    assert back["t_ms"] == 6_000 and back["session_expired"] is False
    sim.run(until=30_000)
    assert sim.cut == set() and _events(sim, ev.ZK_SESSION_EXPIRED) == []
    assert [e["t_ms"] for e in _events(sim, ev.ZK_CLIENT_RECONNECTED, "B")] == [8_000]
    assert sim.fetching() == {"T-0": ["A"], "T-1": ["A"], "T-2": ["B"], "T-3": ["B"]}
