"""Consumers against the real coordinator (coordinator.cluster.KafkaCluster) on a tiny loop."""

from __future__ import annotations

from assignors.api import TopicPartition
from coordinator.cluster import KafkaCluster
from members.config import ConsumerConfig
from members.consumer import Consumer
from tests.members.harness import CooperativeRange, EventLog
from tests.members.miniloop import MiniLoop


def build(
    n: int,
    *,
    topics=None,
    strategy=("range",),
    static: bool = False,
    seed: int = 0,
    partitions=None,
    **cfg,
):
    log = EventLog()
    cluster = KafkaCluster(num_brokers=3, topics=partitions or {"t": 6})
    consumers = []
    for i in range(n):
        config = ConsumerConfig(
            group_id="g",
            client_id=f"client-{i}",
            group_instance_id=f"instance-{i}" if static else None,
            partition_assignment_strategy=strategy,
            **cfg,
        )
        consumers.append(
            Consumer(
                f"C{i}",
                config,
                bootstrap=["broker-0", "broker-1"],
                topics=topics or ["t"],
                seed=seed + i,
            )
        )
    loop = MiniLoop(cluster, consumers)
    loop.log = log
    loop.checks.append(no_double_ownership)
    return loop, cluster, consumers


def no_double_ownership(loop: MiniLoop) -> None:
    """Kafka's guarantee among members of the group (a member kicked out by a poll timeout
    still holds its partitions until its next poll: that zombie is outside the guarantee)."""
    seen: dict[TopicPartition, str] = {}
    for c in loop.consumers.values():
        if not c.in_group:
            continue
        for tp in c.assignment:
            assert tp not in seen, f"{tp} owned by {seen[tp]} and {c.node} at {loop.now}"
            seen[tp] = c.node


def covered(consumers, topic="t", count=6) -> bool:
    owned = sorted(tp for c in consumers if c.alive for tp in c.assignment)
    return owned == [TopicPartition(topic, p) for p in range(count)]


def all_stable(cluster: KafkaCluster, consumers) -> bool:
    group = cluster.group("g")
    live = [c for c in consumers if c.alive]
    return (
        group is not None
        and group.state == "Stable"
        and all(c.state == "STABLE" and c.generation_id == group.generation_id for c in live)
        and len(group.members) == len(live)
    )


def test_three_eager_members_join_and_split_the_topic() -> None:
    loop, cluster, cs = build(3)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    assert all_stable(cluster, cs)
    assert covered(cs)
    group = cluster.group("g")
    assert group.protocol_name == "range" and group.generation_id == 1
    leader = [c for c in cs if c.is_leader]
    assert len(leader) == 1 and leader[0].member_id == group.leader_id
    for c in cs:
        assert c.callback_history() == [("assigned", [str(tp) for tp in c.assignment])]


def test_member_leaving_triggers_an_eager_rebalance_among_the_rest() -> None:
    loop, cluster, cs = build(3)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    loop.call("C1", "close")
    loop.run_until(15_000)  # the others learn of it from a heartbeat within 3 s
    assert all_stable(cluster, cs) and cluster.group("g").generation_id == 2
    assert covered(cs)
    for c in (cs[0], cs[2]):
        kinds = [k for k, _ in c.callback_history()]
        assert kinds == ["assigned", "revoked", "assigned"]


def test_crashed_member_is_noticed_only_at_session_timeout() -> None:
    loop, cluster, cs = build(3, session_timeout_ms=10_000)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    loop.call("C2", "crash")
    t_crash = loop.now
    loop.run_until(t_crash + 9_000)
    assert cluster.group("g").generation_id == 1  # nobody knows yet
    loop.run_until(t_crash + 15_000)
    assert cluster.group("g").generation_id == 2
    assert all_stable(cluster, cs) and covered(cs)


def test_static_member_restarted_within_session_timeout_causes_no_rebalance() -> None:
    loop, cluster, cs = build(3, static=True, session_timeout_ms=30_000)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    before = {c.node: c.assignment for c in cs}
    loop.call("C1", "crash")
    loop.run_until(loop.now + 5_000)
    loop.call("C1", "restart")
    loop.run_until(loop.now + 10_000)
    assert cluster.group("g").generation_id == 1
    assert all_stable(cluster, cs)
    assert {c.node: c.assignment for c in cs} == before


def test_cooperative_new_member_takes_partitions_in_two_rebalances_without_overlap() -> None:
    loop, cluster, cs = build(3, strategy=(CooperativeRange(),))
    loop.start("C0")
    loop.start("C1")
    loop.run_until(10_000)
    assert all_stable(cluster, cs[:2]) and covered(cs[:2])
    gen = cluster.group("g").generation_id
    loop.start("C2")
    loop.run_until(20_000)
    assert all_stable(cluster, cs) and covered(cs)
    assert cluster.group("g").generation_id == gen + 2  # the follow-up round
    # members that gave something up: revoked, then assigned([]) in the same round
    for c in cs[:2]:
        history = c.callback_history()
        assert ("revoked", history[-3][1]) == history[-3] and history[-2] == ("assigned", [])
    assert cs[2].callback_history()[-2:] == [("assigned", []), ("assigned", ["t-4", "t-5"])]


def test_leader_notices_added_partitions_on_metadata_refresh() -> None:
    loop, cluster, cs = build(2, metadata_max_age_ms=20_000)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    cluster.add_partitions("t", 8)
    loop.run_until(40_000)
    assert cluster.group("g").generation_id == 2
    assert all_stable(cluster, cs) and covered(cs, count=8)


def test_pattern_subscription_picks_up_a_new_matching_topic() -> None:
    cluster = KafkaCluster(num_brokers=1, topics={"orders-eu": 2, "other": 2})
    config = ConsumerConfig(group_id="g", metadata_max_age_ms=10_000)
    c = Consumer("C0", config, bootstrap=["broker-0"], pattern=r"orders-.*")
    loop = MiniLoop(cluster, [c])
    loop.start("C0")
    loop.run_until(10_000)
    assert c.assignment == [TopicPartition("orders-eu", 0), TopicPartition("orders-eu", 1)]
    cluster.create_topic("orders-us", 1)
    loop.run_until(30_000)
    assert TopicPartition("orders-us", 0) in c.assignment
    assert c.subscription == ("orders-eu", "orders-us")


def test_slow_consumer_exceeding_max_poll_interval_leaves_and_comes_back() -> None:
    loop, cluster, cs = build(2, max_poll_interval_ms=20_000, session_timeout_ms=10_000)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    loop.call("C0", "stall", 30_000)
    loop.run_until(31_000)  # poll timeout at ~30 s: C0 left, C1 took everything
    assert [c.node for c in cs if c.state == "STABLE"] == ["C1"]
    assert covered(cs[1:])
    loop.run_until(60_000)
    assert all_stable(cluster, cs) and covered(cs)
    assert ("lost", ["t-0", "t-1", "t-2"]) in cs[0].callback_history()


def test_coordinator_broker_failure_is_survived() -> None:
    loop, cluster, cs = build(3, session_timeout_ms=10_000)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    old = cs[0].coordinator
    loop.fail_broker(old)
    loop.run_until(40_000)
    assert all(c.coordinator not in (None, old) for c in cs)
    assert all_stable(cluster, cs) and covered(cs)


def test_same_seed_same_event_log() -> None:
    def run() -> list[dict]:
        loop, _cluster, cs = build(3, seed=7)
        for c in cs:
            loop.start(c.node)
        loop.run_until(10_000)
        loop.call("C1", "crash")
        loop.run_until(70_000)
        return [e for e in loop.log.events if e.get("node", "").startswith("C")]

    first, second = run(), run()
    assert first == second


def test_default_strategy_runs_eager_range_and_cooperative_sticky_runs_cooperative() -> None:
    loop, cluster, cs = build(2, strategy=("range", "cooperative-sticky"))
    assert all(c.rebalance_protocol.name == "EAGER" for c in cs)
    for c in cs:
        loop.start(c.node)
    loop.run_until(10_000)
    assert cluster.group("g").protocol_name == "range"
    assert all_stable(cluster, cs) and covered(cs)

    loop, cluster, cs = build(3, strategy=("cooperative-sticky",))
    assert all(c.rebalance_protocol.name == "COOPERATIVE" for c in cs)
    loop.start("C0")
    loop.start("C1")
    loop.run_until(10_000)
    loop.start("C2")
    loop.run_until(25_000)
    assert cluster.group("g").protocol_name == "cooperative-sticky"
    assert all_stable(cluster, cs) and covered(cs)
    assert sorted(len(c.assignment) for c in cs) == [2, 2, 2]
    # sticky: the first two members kept what they did not give up, and nobody was ever
    # revoked everything at once
    for c in cs[:2]:
        revoked = [p for kind, p in c.callback_history() if kind == "revoked"]
        assert revoked and all(len(p) == 1 for p in revoked)


def test_offsets_survive_a_rebalance_through_commits() -> None:
    loop, cluster, cs = build(2, auto_commit_interval_ms=1000)
    loop.start("C0")
    loop.run_until(10_000)
    position = cs[0].positions[TopicPartition("t", 5)]
    assert position > 0
    loop.start("C1")
    loop.run_until(20_000)
    owner = next(c for c in cs if TopicPartition("t", 5) in c.assignment)
    committed = cluster.committed_offsets("g")[("t", 5)]
    assert committed >= position  # the onJoinPrepare commit carried C0's position
    assert owner.positions[TopicPartition("t", 5)] >= committed
