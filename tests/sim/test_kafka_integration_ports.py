"""Kafka's consumer-group integration tests, ported as end-to-end parity tests on the Simulation.

The sources are Kafka's Scala integration tests in core/src/test/scala/integration/kafka/api/
(ConsumerBounceTest, PlaintextConsumer{Poll,Assignors,Callback,Subscription,Commit}Test,
PlaintextConsumerTest and BaseConsumerTest, with the helpers of AbstractConsumerTest), at apache/kafka
trunk 1eb7644. Those tests start three real brokers and real consumers and poll them from threads,
waiting on wall clocks. Here each one runs whole groups of simulated consumers against the
simulated cluster on a simulated clock, and asserts the group behaviour Kafka's test asserts: who
owns which partitions after which events, how many rebalances and callbacks, which errors, when a
member is expelled, what is committed. Where Kafka waits for something "within N seconds", the
port asserts the deterministic equivalent (when it happens, from the rule that makes it happen) and
says so in the docstring. Only the classic group protocol runs are ported.

The configuration follows the Kafka tests: AbstractConsumerTest's brokers (one
``__consumer_offsets`` partition, group.min.session.timeout.ms 100, initial rebalance delay 10 ms)
and consumers (group "my-test", auto-commit off, metadata.max.age.ms 100, max.poll.interval.ms
6000, the default assignors [range, cooperative-sticky]), the topic "topic" with two partitions;
ConsumerBounceTest's own brokers (group.min.session.timeout.ms 10, no initial delay,
group.max.size 5) and auto-commit on.

Not ported (the Kafka test asserts nothing groupsim models, or something it deliberately does not):

* Records, fetching, serializers, headers, timestamps, seek, pause/resume, metrics, quotas,
  interceptors (groupsim's partitions are endless logs with positions only):
  ConsumerBounceTest.testSeekAndCommitWithBrokerFailures (also assign()),
  PlaintextConsumerPollTest.testMaxPollRecords, testPerPartitionLeadWithMaxPollRecords,
  testPerPartitionLagWithMaxPollRecords, testPollEventuallyReturnsRecordsWithZeroTimeout,
  BaseConsumerTest.testSimpleConsumption, testClusterResourceListener,
  PlaintextConsumerCallbackTest.testSeekPositionAndPauseNewlyAssignedPartitionOnPartitionsAssignedCallback,
  PlaintextConsumerCommitTest.testAutoCommitIntercept (its rebalance commit is
  testAutoCommitOnRebalance's), PlaintextConsumerTest.testHeaders*, testSeek,
  testPartitionPauseAndResume, testInterceptors*, testConsumeMessagesWith*Time,
  testPerPartition*MetricsCleanUp*, testPerPartitionLagMetricsWhenReadCommitted,
  testQuotaMetricsNotCreatedIfNoQuotasConfigured, testEndOffsets, testFetchOffsetsForTime,
  testAutoOffsetReset, testPauseStateNotPreservedByRebalance (no pause in groupsim).
* Manual assignment (assign()) and the admin/offset lookups of a KafkaConsumer (partitionsFor,
  listTopics, beginningOffsets, committed() without a group, position() blocking):
  PlaintextConsumerCommitTest.testCommitMetadata, testAsyncCommit, testCommitSpecifiedOffsets,
  testPositionAndCommit, PlaintextConsumerPollTest.testNoOffsetForPartitionExceptionOnPollZero,
  PlaintextConsumerCallbackTest.testConsumerRebalanceListenerAssignOnPartitionsAssigned,
  testConsumerRebalanceListenerAssignOnPartitionsRevoked,
  testConsumerRebalanceListenerBeginningOffsetsOnPartitions{Assigned,Revoked},
  testGetPositionOfNewlyAssignedPartitionOnPartitionsAssignedCallback, PlaintextConsumerTest.
  testPartitionsFor*, testListTopics, testConsumingWithNullGroupId,
  testNullGroupIdNotSupportedIfCommitting, testSeekThrowsIllegalStateIfPartitionsNotAssigned,
  testPositionRespects{Timeout,Wakeup}, testPositionWithErrorConnectionRespectsWakeup.
* A listener that blocks: groupsim's callbacks take no simulated time and cannot commit from
  inside the callback, so PlaintextConsumerPollTest.testMaxPollIntervalMsDelayInRevocation and
  testMaxPollIntervalMsDelayInAssignment (a callback sleeping past session.timeout.ms while the
  heartbeat thread keeps the member in the group) have nothing to drive.
* Java's wakeup(): PlaintextConsumerCommitTest.testAutoCommitOnCloseAfterWakeup (what is left of
  it, the commit on close, is testAutoCommitOnClose).
* KIP-848 only: the consumer-protocol runs of every test, PlaintextConsumerAssignorsTest.
  testRemoteAssignor{Invalid,Range}, PlaintextConsumerCommitTest.testCommitAsyncCompletedBefore*.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import pytest

from assignors.api import TopicPartition
from coordinator.config import CoordinatorConfig

TOPIC = "topic"
TP = TopicPartition(TOPIC, 0)
TP2 = TopicPartition(TOPIC, 1)
GROUP = "my-test"

#: AbstractConsumerTest.brokerPropertyOverrides
BROKER = CoordinatorConfig(
    offsets_topic_num_partitions=1,
    group_min_session_timeout_ms=100,
    group_max_session_timeout_ms=60_000,
    group_initial_rebalance_delay_ms=10,
)
#: AbstractConsumerTest's consumerConfig
CONSUMER: dict[str, Any] = {
    "group_id": GROUP,
    "enable_auto_commit": False,
    "metadata_max_age_ms": 100,
    "max_poll_interval_ms": 6000,
}
#: ConsumerBounceTest.generateKafkaConfigs
BOUNCE_BROKER = CoordinatorConfig(
    offsets_topic_num_partitions=1,
    group_min_session_timeout_ms=10,
    group_initial_rebalance_delay_ms=0,
    group_max_size=5,
)
#: ConsumerBounceTest turns auto-commit on for every consumer
BOUNCE_CONSUMER: dict[str, Any] = {**CONSUMER, "enable_auto_commit": True}


def make_sim(
    groupsim: Any,
    topics: dict[str, int] | None = None,
    broker: CoordinatorConfig = BROKER,
    seed: int = 1,
) -> Any:
    """AbstractConsumerTest.setUp: three brokers and ``topic`` with two partitions."""
    return groupsim(
        brokers=3,
        topics={TOPIC: 2, **(topics or {})},
        coordinator_config=broker,
        seed=seed,
        raise_on_violation=True,
    )


def parts(topic: str, count: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(count)}


def owned(sim: Any, cid: str) -> set[TopicPartition]:
    return set(sim.assignment(cid))


class CountingListener:
    """AbstractConsumerTest.TestConsumerReassignmentListener: counts the callbacks. It has no
    onPartitionsLost, so Kafka's default (call onPartitionsRevoked) counts a loss as a revocation."""

    def __init__(self) -> None:
        self.calls_to_assigned = 0
        self.calls_to_revoked = 0

    def on_partitions_assigned(self, partitions: Sequence[TopicPartition]) -> None:
        self.calls_to_assigned += 1

    def on_partitions_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        self.calls_to_revoked += 1


def assignment_valid(
    sim: Any,
    consumers: Iterable[str],
    partitions: set[TopicPartition],
    expected: list[set[TopicPartition]] | None = None,
) -> bool:
    """AbstractConsumerTest.isPartitionAssignmentValid over the consumers' owned partitions:
    everyone owns something, every partition is owned exactly once, and (if given) every
    consumer's set is one of ``expected``."""
    sets = [owned(sim, c) for c in consumers]
    if not all(sets) or sum(map(len, sets)) != len(partitions):
        return False
    if set().union(*sets) != partitions:
        return False
    return expected is None or all(s in expected for s in sets)


def await_group_assignment(
    sim: Any,
    consumers: Iterable[str],
    partitions: set[TopicPartition],
    timeout_ms: int = 10_000,
    expected: list[set[TopicPartition]] | None = None,
) -> None:
    """AbstractConsumerTest.validateGroupAssignment (10 s by default), on the simulated clock."""
    ids = list(consumers)
    assert sim.run_until(
        lambda: assignment_valid(sim, ids, partitions, expected), timeout_ms=timeout_ms
    ), {c: sorted(map(str, sim.assignment(c))) for c in ids}


def await_assignment(
    sim: Any, cid: str, expected: set[TopicPartition], timeout_ms: int = 15_000
) -> None:
    """AbstractConsumerTest.awaitAssignment (pollUntilTrue: 15 s), on the simulated clock."""
    assert sim.run_until(lambda: owned(sim, cid) == expected, timeout_ms=timeout_ms), sorted(
        map(str, sim.assignment(cid))
    )


def fetched_positions(sim: Any, cid: str, timeout_ms: int = 15_000) -> dict[TopicPartition, int]:
    """The positions a consumer starts its owned partitions from (its OffsetFetch answer), read
    the instant they are known, before anything is consumed."""
    consumer = sim.consumer(cid)
    assert sim.run_until(
        lambda: bool(consumer.owned) and set(consumer.positions) == set(consumer.owned),
        timeout_ms=timeout_ms,
    )
    return consumer.positions


# --- ConsumerBounceTest ---------------------------------------------------------------------------


def test_consumption_with_broker_failures(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testConsumptionWithBrokerFailures (consumeWithBrokerFailures(10)):
    one subscribed consumer keeps consuming and committing while brokers are killed and restarted
    ten times (each down for 500 ms, 500 ms apart). Kafka picks a random broker each time and
    checks that commitSync succeeds and reads back the position, with records in order; here the
    brokers are bounced in turn, so the coordinator's broker fails more than once, and the port
    checks that every commitSync (one every 200 ms) succeeds, that the committed positions never
    go back (nothing is consumed twice) and that the coordinator ends up holding the last one.
    The bounces also cause no rebalance: the member keeps its generation and its partitions."""
    sim = make_sim(groupsim, broker=BOUNCE_BROKER)
    sim.add_consumer("C1", topics=[TOPIC], **BOUNCE_CONSUMER, start=True)
    assert sim.run_until_stable(GROUP, timeout_ms=10_000)
    generation = sim.generation(GROUP)
    fetched_positions(sim, "C1")
    coordinators = set()
    start = sim.now
    for i in range(10):
        broker = sim.cluster.broker_nodes[i % 3]
        sim.at(start + i * 1000, lambda b=broker: sim.fail_broker(b))
        sim.at(start + i * 1000 + 500, lambda b=broker: sim.restart_broker(b))
    for t in range(start + 100, start + 10_000, 200):
        sim.at(t, lambda: sim.commit("C1"))
    while sim.now < start + 10_000:
        sim.run_for(100)
        coordinators.add(sim.coordinator(GROUP))
    sim.run_for(5_000)  # the last commits complete
    commits = [c for c in sim.consumer("C1").commits if c.purpose == "manual"]
    assert len(commits) == 50
    assert all(c.done and c.error is None for c in commits), [c.error for c in commits]
    offsets = [c.offsets[TP] for c in commits]
    assert offsets == sorted(offsets) and offsets[-1] > offsets[0]
    assert len(coordinators - {None}) >= 2  # the group moved between brokers
    committed = sim.committed_offsets(GROUP)
    last = max(commits, key=lambda c: c.offsets[TP])
    assert committed[(TOPIC, 0)] >= last.offsets[TP]
    # no rebalance: one generation, the first assignment only
    assert sim.generation(GROUP) == generation
    assert sim.consumer("C1").generation_id == generation
    assert sim.consumer("C1").callback_history() == [("assigned", ["topic-0", "topic-1"])]
    assert owned(sim, "C1") == {TP, TP2}


def test_subscribe_when_topic_unavailable(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testSubscribeWhenTopicUnavailable: a consumer subscribes to a
    topic that does not exist yet; the topic is created 2 s later with three partitions, and the
    consumer gets all of them and consumes; then every broker is killed for 500 ms and the
    consumer goes on consuming. Kafka waits up to 10 s for the records; with metadata.max.age.ms
    100 the consumer here sees the topic on its next refresh and owns it within 200 ms, and after
    the outage it keeps its membership (same generation) and its positions keep growing."""
    sim = make_sim(groupsim, broker=BOUNCE_BROKER)
    sim.add_consumer("C1", topics=["newtopic"], **BOUNCE_CONSUMER, start=True)
    sim.run_for(2_000)
    assert owned(sim, "C1") == set()
    sim.create_topic("newtopic", 3)
    created = sim.now
    await_assignment(sim, "C1", parts("newtopic", 3), timeout_ms=10_000)
    assert sim.now - created <= 200
    fetched_positions(sim, "C1")
    sim.run_for(1_000)
    generation = sim.consumer("C1").generation_id
    before = sim.consumer("C1").positions_at(sim.now)
    assert all(before[tp] > 0 for tp in parts("newtopic", 3))
    for broker in sim.cluster.broker_nodes:
        sim.fail_broker(broker)
    sim.run_for(500)
    for broker in sim.cluster.broker_nodes:
        sim.restart_broker(broker)
    sim.run_for(10_000)
    after = sim.consumer("C1").positions_at(sim.now)
    assert all(after[tp] > before[tp] for tp in parts("newtopic", 3))
    assert owned(sim, "C1") == parts("newtopic", 3)
    assert sim.consumer("C1").generation_id == generation == sim.generation(GROUP)
    assert sim.members(GROUP) == ["C1"]


def consume_then_stop(sim: Any, cid: str, group: str) -> None:
    """ConsumerBounceTest.createConsumerAndReceive: a subscribed consumer receives records."""
    sim.add_consumer(cid, topics=[TOPIC], **{**BOUNCE_CONSUMER, "group_id": group}, start=True)
    assert sim.run_until_stable(group, timeout_ms=10_000)
    fetched_positions(sim, cid)
    sim.run_for(1_000)


def check_closed_state(sim: Any, cid: str, group: str) -> dict[TopicPartition, int]:
    """ConsumerBounceTest.checkClosedState: a new consumer of the group is assigned at once (Kafka
    allows 15 s; the group's only member left, so the join waits for nobody) and starts from the
    committed offsets, which it returns."""
    sim.add_consumer(cid, topics=[TOPIC], **{**BOUNCE_CONSUMER, "group_id": group}, start=True)
    started = sim.now
    await_assignment(sim, cid, {TP, TP2}, timeout_ms=15_000)
    assert sim.now - started < 1_000  # no session timeout (45 s) or rebalance timeout waited
    return fetched_positions(sim, cid)


def test_close_good_path(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testClose, checkCloseGoodPath: a consumer closed while the
    cluster is healthy commits its positions and leaves the group at once (Kafka: within 1 s plus
    2 s of grace; here the close ends when the final commit is answered, a few ms); a new consumer
    of the group is assigned immediately and starts from the committed offsets."""
    sim = make_sim(groupsim, broker=BOUNCE_BROKER)
    consume_then_stop(sim, "C1", "group1")
    closed_at = sim.now
    positions = sim.consumer("C1").positions_at(sim.now)
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=3_000)
    assert sim.now - closed_at < 1_000
    [close] = [c for c in sim.consumer("C1").commits if c.purpose == "close"]
    assert close.error is None and close.offsets == positions
    assert sim.events_named("leave_group", node="C1", sent=True)
    assert sim.run_until(lambda: sim.group_state("group1") == "Empty", timeout_ms=100)
    assert check_closed_state(sim, "C2", "group1") == positions


def test_close_with_coordinator_failure(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testClose, checkCloseWithCoordinatorFailure (the group-managed
    consumer; the manual-assignment one is not modelled): the group's coordinator is killed, then
    the consumer is closed. Kafka requires the close to end within 1 s + 2 s of grace and a new
    consumer to be assigned once the broker is back. Here the close's commitSync rediscovers the
    coordinator (another replica, after the failover's load) and commits, the LeaveGroup reaches
    the new coordinator, so the group is Empty and the new consumer joins without waiting."""
    sim = make_sim(groupsim, broker=BOUNCE_BROKER)
    consume_then_stop(sim, "C1", "group2")
    old = sim.coordinator("group2")
    sim.fail_broker(old)
    closed_at = sim.now
    positions = sim.consumer("C1").positions_at(sim.now)
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=3_000)
    assert sim.now - closed_at < 3_000
    # the first attempt hit the dead broker; the retry went to the new coordinator
    assert sim.events_named("commit_failed", node="C1", purpose="close")
    [close] = [c for c in sim.consumer("C1").commits if c.purpose == "close"]
    assert close.error is None and close.offsets == positions
    assert sim.events_named("leave_group", node="C1", sent=True)
    assert sim.coordinator("group2") not in (None, old)
    assert sim.run_until(lambda: sim.group_state("group2") == "Empty", timeout_ms=1_000)
    sim.restart_broker(old)
    assert check_closed_state(sim, "C2", "group2") == positions


def test_close_with_cluster_failure(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testClose, checkCloseWithClusterFailure: with every broker down,
    close() cannot commit or leave, and ends after min(close timeout, request.timeout.ms)
    (ClassicKafkaConsumer.createTimerForRequest). Kafka checks this on consumer2 (request.timeout.ms
    6000, session 5000, heartbeat 1000, an unbounded close: done within 6 s + 2 s of grace) and on
    consumer1 (a 2 s close timeout); groupsim's close() takes no timeout, so the port runs
    consumer2's settings on a group-managed consumer: the final commitSync retries until the 6 s
    are over, fails with TIMEOUT, and no LeaveGroup is sent."""
    sim = make_sim(groupsim, broker=BOUNCE_BROKER)
    settings = {
        **BOUNCE_CONSUMER,
        "group_id": "group5",
        "session_timeout_ms": 5000,
        "heartbeat_interval_ms": 1000,
        "request_timeout_ms": 6000,
    }
    sim.add_consumer("C1", topics=[TOPIC], **settings, start=True)
    assert sim.run_until_stable("group5", timeout_ms=10_000)
    fetched_positions(sim, "C1")
    sim.run_for(1_000)
    for broker in sim.cluster.broker_nodes:
        sim.fail_broker(broker)
    closed_at = sim.now
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=8_000)
    assert sim.now - closed_at == 6_000
    [close] = [c for c in sim.consumer("C1").commits if c.purpose == "close"]
    assert close.error == "TIMEOUT"
    assert sim.events_named("leave_group", node="C1", sent=False)
    assert not sim.events_named("request_received", api="LeaveGroup")


def test_rolling_broker_restarts_with_smaller_max_group_size_disrupts_big_group(
    groupsim: Any,
) -> None:
    """Port of ConsumerBounceTest.testRollingBrokerRestartsWithSmallerMaxGroupSizeConfigDisruptsBigGroup
    (disabled in Kafka as flaky, KAFKA-13421; the behaviour is deterministic here): a Stable group
    of three consumers (max.poll.interval.ms 60 s, heartbeat 1 s, auto-commit off) sees every
    broker restarted in turn with group.max.size 2. The coordinator that loads the over-sized
    group rebalances it (GroupMetadataManager.onLoaded), the last member to rejoin gets
    GROUP_MAX_SIZE_REACHED, and exactly one consumer fails with GroupMaxSizeReachedException
    while the other two share the six partitions. groupsim's cluster has one broker config, so
    the smaller limit takes effect on the first load after the roll begins (Kafka: on a restarted
    broker); the outcome is the same."""
    topic = "group-max-size-test"
    sim = make_sim(groupsim, {topic: 6}, broker=BOUNCE_BROKER)
    settings = {
        **BOUNCE_CONSUMER,
        "group_id": topic,
        "max_poll_interval_ms": 60_000,
        "heartbeat_interval_ms": 1000,
        "enable_auto_commit": False,
    }
    ids = sim.add_consumers(3, topics=[topic], **settings, start=True)
    await_group_assignment(sim, ids, parts(topic, 6))
    assert sim.run_until_stable(topic, timeout_ms=10_000)
    sim.cluster.config = attrs.evolve(sim.cluster.config, group_max_size=2)
    for broker in sim.cluster.broker_nodes:
        sim.fail_broker(broker)
        sim.run_for(500)
        sim.restart_broker(broker)
        sim.run_for(500)
    assert sim.run_until(lambda: any(sim.status(c) == "FAILED" for c in ids), timeout_ms=10_000)
    # GroupMetadataManager.classicGroupJoin only removes the rejected member; nothing completes
    # the join phase then, although the two others have rejoined, so it ends when the
    # rebalance timeout (max.poll.interval.ms, 60 s) set on load expires
    [loaded] = sim.events_named(
        "group_state_changed", group_id=topic, reason="loaded group is over group.max.size"
    )[-1:]
    assert sim.run_until_stable(topic, timeout_ms=120_000)
    [completed] = sim.events_named(
        "group_state_changed", group_id=topic, reason="join phase completed"
    )[-1:]
    assert completed["t_ms"] == loaded["t_ms"] + 60_000
    failed = [c for c in ids if sim.status(c) == "FAILED"]
    assert len(failed) == 1
    assert sim.consumer(failed[0]).fatal_error == "GROUP_MAX_SIZE_REACHED"
    survivors = [c for c in ids if c not in failed]
    assert sorted(sim.members(topic)) == survivors
    await_group_assignment(sim, survivors, parts(topic, 6))


def test_consumer_receives_fatal_exception_when_group_passes_max_size(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testConsumerReceivesFatalExceptionWhenGroupPassesMaxSize: with
    group.max.size 5, five consumers share five partitions; a sixth one gets
    GROUP_MAX_SIZE_REACHED from its JoinGroup and fails with GroupMaxSizeReachedException, and
    the group lives on: the five keep their partitions and go on consuming."""
    topic = "fatal-exception-test"
    sim = make_sim(groupsim, {topic: 5}, broker=BOUNCE_BROKER)
    settings = {
        **BOUNCE_CONSUMER,
        "group_id": topic,
        "max_poll_interval_ms": 60_000,
        "heartbeat_interval_ms": 1000,
        "enable_auto_commit": False,
    }
    ids = sim.add_consumers(5, topics=[topic], **settings, start=True)
    await_group_assignment(sim, ids, parts(topic, 5))
    assert sim.run_until_stable(topic, timeout_ms=10_000)
    generation = sim.generation(topic)
    sim.add_consumer("C6", topics=[topic], **settings, start=True)
    assert sim.run_until(lambda: sim.status("C6") == "FAILED", timeout_ms=10_000)
    assert sim.consumer("C6").fatal_error == "GROUP_MAX_SIZE_REACHED"
    [fatal] = sim.events_named("consumer_fatal", node="C6")
    assert fatal["error"] == "GROUP_MAX_SIZE_REACHED"
    start = {c: sim.consumer(c).positions_at(sim.now) for c in ids}
    sim.run_for(5_000)
    assert sim.generation(topic) == generation and sim.group_state(topic) == "Stable"
    assert sorted(sim.members(topic)) == ids
    for c in ids:
        now = sim.consumer(c).positions_at(sim.now)
        assert all(now[tp] > start[c][tp] for tp in now)


def test_close_during_rebalance(groupsim: Any) -> None:
    """Port of ConsumerBounceTest.testCloseDuringRebalance: C1 and C2 (max.poll.interval.ms 60 s,
    heartbeat 1 s, auto-commit off) are Stable and stop polling; C3 joins, and the rebalance
    waits for them. C1 is closed: it leaves at once, so when C2 polls again the rebalance
    completes with C2 and C3 without waiting for C1's rebalance timeout (Kafka: within 2 s).
    Then C4 starts another rebalance, every broker is killed, and C2's close returns at once
    (Kafka: 0 ms plus 2 s of grace; here one disconnect notice) without a LeaveGroup reaching
    any broker. Kafka's "not
    polling" is a stall here."""
    topic = "closetest"
    sim = make_sim(groupsim, {topic: 10}, broker=BOUNCE_BROKER)
    settings = {
        **BOUNCE_CONSUMER,
        "group_id": "group1",
        "max_poll_interval_ms": 60_000,
        "heartbeat_interval_ms": 1000,
        "enable_auto_commit": False,
    }
    sim.add_consumer("C1", topics=[topic], **settings, start=True)
    assert sim.run_until_stable("group1", timeout_ms=2_000)
    sim.add_consumer("C2", topics=[topic], **settings, start=True)
    assert sim.run_until_stable("group1", timeout_ms=2_000)
    # neither polls: C1 for 50 s (without its LeaveGroup the join would wait that long, within
    # the 60 s rebalance timeout), C2 for 4 s (it polls again 1 s after C1's close)
    stalled_at = sim.now
    sim.stall("C1", 50_000)
    sim.stall("C2", 4_000)
    generation = sim.generation("group1")
    sim.add_consumer("C3", topics=[topic], **settings, start=True)
    # the rebalance starts, and is held up by the members that do not poll
    assert sim.run_until(
        lambda: sim.group_state("group1") == "PreparingRebalance", timeout_ms=2_000
    )
    sim.run(until=stalled_at + 3_000)
    assert sim.group_state("group1") == "PreparingRebalance"
    assert sim.client_state("C3") == "PREPARING_REBALANCE"
    closed_at = sim.now
    sim.close("C1")
    # close() returns once the LeaveGroup is answered (AbstractCoordinator.close waits for it)
    assert sim.status("C1") == "CLOSING"
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=100)
    c1 = _member(sim, "C1")
    assert sim.run_until(lambda: c1 not in sim.group("group1").member_ids, timeout_ms=100)
    [removed] = sim.events_named("member_removed", group_id="group1", member_id=c1)
    assert removed["reason"].startswith("LeaveGroup")
    assert sim.run_until_stable("group1", timeout_ms=2_000)
    assert sim.now - closed_at < 2_000
    assert sim.generation("group1") == generation + 1
    assert sorted(sim.members("group1")) == ["C2", "C3"]

    sim.stall("C2", 50_000)
    sim.add_consumer("C4", topics=[topic], **settings, start=True)
    assert sim.run_until(
        lambda: sim.group_state("group1") == "PreparingRebalance", timeout_ms=2_000
    )
    for broker in sim.cluster.broker_nodes:
        sim.fail_broker(broker)
    leaves = len(sim.events_named("request_received", api="LeaveGroup"))
    sim.close("C2")
    # the dead coordinator's connection fails the LeaveGroup at once: nothing is left to wait for
    assert sim.run_until(lambda: sim.status("C2") == "CLOSED", timeout_ms=100)
    sim.run_for(2_000)
    assert len(sim.events_named("request_received", api="LeaveGroup")) == leaves


def _member(sim: Any, cid: str) -> str:
    """The member id ``cid`` had most recently (kept after it leaves)."""
    [event] = sim.events_named("joined", node=cid)[-1:]
    return str(event["member_id"])


# --- PlaintextConsumerPollTest --------------------------------------------------------------------


def test_max_poll_interval_ms(groupsim: Any) -> None:
    """Port of PlaintextConsumerPollTest.testMaxPollIntervalMs: a consumer (max.poll.interval.ms
    1000, heartbeat 500, session 2000) is assigned once; then its application does not poll for
    3 s. The poll timeout makes it leave the group, and when it polls again it loses its
    partitions (counted as a revocation: the listener has no onPartitionsLost) and rejoins:
    two assignments, one revocation. Kafka sleeps 3 s on a real clock; here the stall is 3 s
    and the heartbeat thread notices exactly 1 s into it."""
    sim = make_sim(groupsim)
    listener = CountingListener()
    sim.add_consumer(
        "C1",
        topics=[TOPIC],
        listener=listener,
        **{
            **CONSUMER,
            "max_poll_interval_ms": 1000,
            "heartbeat_interval_ms": 500,
            "session_timeout_ms": 2000,
        },
        start=True,
    )
    assert sim.run_until(lambda: listener.calls_to_assigned == 1, timeout_ms=15_000)
    assert listener.calls_to_revoked == 0
    stalled_at = sim.now
    sim.stall("C1", 3_000)
    assert sim.run_until(lambda: listener.calls_to_assigned == 2, timeout_ms=15_000)
    assert listener.calls_to_revoked == 1
    [timeout] = sim.events_named("poll_timeout", node="C1")
    assert timeout["t_ms"] == stalled_at + 1_000
    [lost] = [c for c in sim.consumer("C1").callbacks if c.callback == "lost"]
    assert lost.t_ms == stalled_at + 3_000 and set(lost.partitions) == {TP, TP2}
    assert owned(sim, "C1") == {TP, TP2}


def test_max_poll_interval_ms_shorter_than_poll_timeout(groupsim: Any) -> None:
    """Port of PlaintextConsumerPollTest.testMaxPollIntervalMsShorterThanPollTimeout: an
    application blocked inside poll() for longer than max.poll.interval.ms (Kafka: poll(2 s), then
    two poll(500 ms), with a 1 s interval) does not overrun it, because poll() itself keeps the
    member alive (the poll loop wakes before the interval ends): no poll timeout, no rebalance.
    groupsim's continuous application is inside poll() whenever it is not stalled; it runs 3 s."""
    sim = make_sim(groupsim)
    listener = CountingListener()
    sim.add_consumer(
        "C1",
        topics=[TOPIC],
        listener=listener,
        **{**CONSUMER, "max_poll_interval_ms": 1000, "heartbeat_interval_ms": 500},
        start=True,
    )
    assert sim.run_until(lambda: listener.calls_to_assigned == 1, timeout_ms=15_000)
    generation = sim.generation(GROUP)
    sim.run_for(3_000)
    assert listener.calls_to_assigned == 1 and listener.calls_to_revoked == 0
    assert sim.events_named("poll_timeout") == []
    assert sim.generation(GROUP) == generation


@pytest.mark.parametrize("close_consumer", [False, True], ids=["stop_polling", "close"])
def test_multi_consumer_session_timeout(groupsim: Any, close_consumer: bool) -> None:
    """Port of PlaintextConsumerPollTest.testMultiConsumerSessionTimeoutOnStopPolling and
    testMultiConsumerSessionTimeoutOnClose (runMultiConsumerSessionTimeoutTest): three consumers
    share topic (2 partitions) and topic1 (6); one stops polling, and is closed too in the second
    test; the other two get all eight partitions. Kafka allows three maximum session timeouts
    (180 s); here a consumer that only stops polling leaves (LeaveGroup from its heartbeat
    thread) exactly when max.poll.interval.ms (6 s) has passed, a closed one leaves at once, and
    the other two are reassigned within a heartbeat interval of the leave."""
    sim = make_sim(groupsim, {"topic1": 6})
    subscriptions = {TP, TP2} | parts("topic1", 6)
    ids = sim.add_consumers(3, topics=[TOPIC, "topic1"], **CONSUMER, start=True)
    await_group_assignment(sim, ids, subscriptions)
    stopped_at = sim.now
    sim.stall("C3", 600_000)  # the poller is shut down: no poll() any more
    if close_consumer:
        sim.close("C3")
    await_group_assignment(sim, ["C1", "C2"], subscriptions, timeout_ms=180_000)
    timeouts = sim.events_named("poll_timeout", node="C3")
    if close_consumer:
        assert timeouts == []
        left_at = stopped_at
    else:
        [timeout] = timeouts
        left_at = timeout["t_ms"]
        assert left_at == stopped_at + 6_000
    [leave] = sim.events_named("leave_group", node="C3")
    assert leave["t_ms"] == left_at and leave["sent"]
    # the others hear of the rebalance with their next heartbeat (heartbeat.interval.ms, 3 s)
    assert sim.now - left_at <= 3_000 + 100
    assert sorted(sim.members(GROUP)) == ["C1", "C2"]


# --- PlaintextConsumerAssignorsTest ---------------------------------------------------------------


def test_round_robin_assignment(groupsim: Any) -> None:
    """Port of PlaintextConsumerAssignorsTest.testRoundRobinAssignment: one round-robin consumer
    subscribes to topic1 and topic2 (two partitions each) and owns all four; subscribing to topic3
    as well adds its two, dropping it again removes them, and unsubscribe() empties the
    assignment at once."""
    sim = make_sim(groupsim, {"topic1": 2, "topic2": 2})
    settings = {
        **CONSUMER,
        "group_id": "roundrobin-group",
        "partition_assignment_strategy": ["roundrobin"],
    }
    sim.add_consumer("C1", topics=["topic1", "topic2"], **settings, start=True)
    expected = parts("topic1", 2) | parts("topic2", 2)
    await_assignment(sim, "C1", expected)
    sim.create_topic("topic3", 2)
    sim.subscribe("C1", ["topic1", "topic2", "topic3"])
    await_assignment(sim, "C1", expected | parts("topic3", 2))
    sim.subscribe("C1", ["topic1", "topic2"])
    await_assignment(sim, "C1", expected)
    sim.subscribe("C1", [])
    assert owned(sim, "C1") == set()
    assert sim.protocol("roundrobin-group") == "roundrobin"


def test_multi_consumer_round_robin_assignor(groupsim: Any) -> None:
    """Port of PlaintextConsumerAssignorsTest.testMultiConsumerRoundRobinAssignor: ten round-robin
    consumers share topic1 (5 partitions) and topic2 (8): each owns at least one, every partition
    is owned once; an eleventh joins and the same holds. Round robin over identical
    subscriptions also balances the counts (at most one apart), which the port checks too."""
    sim = make_sim(groupsim, {"topic1": 5, "topic2": 8})
    settings = {
        **CONSUMER,
        "group_id": "roundrobin-group",
        "partition_assignment_strategy": ["roundrobin"],
    }
    subscriptions = parts("topic1", 5) | parts("topic2", 8)
    ids = sim.add_consumers(10, topics=["topic1", "topic2"], **settings, start=True)
    await_group_assignment(sim, ids, subscriptions)
    assert sorted(len(owned(sim, c)) for c in ids) == [1] * 7 + [2] * 3
    ids += sim.add_consumers(1, first=11, topics=["topic1", "topic2"], **settings, start=True)
    await_group_assignment(sim, ids, subscriptions)
    assert sorted(len(owned(sim, c)) for c in ids) == [1] * 9 + [2] * 2


@pytest.mark.parametrize("rand", range(1, 11))
def test_multi_consumer_sticky_assignor(groupsim: Any, rand: int) -> None:
    """Port of PlaintextConsumerAssignorsTest.testMultiConsumerStickyAssignor: nine sticky
    consumers share one topic of 10 x rand partitions (Kafka draws rand from 1..10; the port runs
    each); a tenth joins, and exactly rand partitions change owner: one from each consumer that
    had more than the new fair share, none between the others."""
    topic = "single-topic"
    sim = make_sim(groupsim, {topic: rand * 10})
    settings = {**CONSUMER, "group_id": "sticky-group", "partition_assignment_strategy": ["sticky"]}
    partitions = parts(topic, rand * 10)
    ids = sim.add_consumers(9, topics=[topic], **settings, start=True)
    await_group_assignment(sim, ids, partitions)
    before = {tp: c for c in ids for tp in owned(sim, c)}
    ids += sim.add_consumers(1, first=10, topics=[topic], **settings, start=True)
    await_group_assignment(sim, ids, partitions)
    after = {tp: c for c in ids for tp in owned(sim, c)}
    changes = sum(1 for tp in partitions if before.get(tp) != after.get(tp))
    assert changes == rand


def test_multi_consumer_default_assignor_and_verify_assignment(groupsim: Any) -> None:
    """Port of PlaintextConsumerAssignorsTest.testMultiConsumerDefaultAssignorAndVerifyAssignment:
    with the default assignors ([range, cooperative-sticky], so range), two consumers subscribed
    to topic1 and topic2 (three partitions each) get {topic1-0, topic1-1, topic2-0, topic2-1} and
    {topic1-2, topic2-2}."""
    sim = make_sim(groupsim, {"topic1": 3, "topic2": 3})
    ids = sim.add_consumers(2, topics=["topic1", "topic2"], **CONSUMER, start=True)
    t1, t2 = "topic1", "topic2"
    expected = [
        {
            TopicPartition(t1, 0),
            TopicPartition(t1, 1),
            TopicPartition(t2, 0),
            TopicPartition(t2, 1),
        },
        {TopicPartition(t1, 2), TopicPartition(t2, 2)},
    ]
    await_group_assignment(sim, ids, parts(t1, 3) | parts(t2, 3), expected=expected)
    assert sim.protocol(GROUP) == "range"


def test_multi_consumer_default_assignor(groupsim: Any) -> None:
    """Port of PlaintextConsumerAssignorsTest.testMultiConsumerDefaultAssignor: two consumers with
    the default assignors share topic (2 partitions) and topic1 (5); two more join; then all four
    subscribe to topic2 (3) as well, and drop it again. After each change every consumer owns
    something and every partition is owned once."""
    sim = make_sim(groupsim, {"topic1": 5})
    subscriptions = {TP, TP2} | parts("topic1", 5)
    ids = sim.add_consumers(2, topics=[TOPIC, "topic1"], **CONSUMER, start=True)
    await_group_assignment(sim, ids, subscriptions)
    ids += sim.add_consumers(2, first=3, topics=[TOPIC, "topic1"], **CONSUMER, start=True)
    await_group_assignment(sim, ids, subscriptions)
    sim.create_topic("topic2", 3)
    for c in ids:
        sim.subscribe(c, [TOPIC, "topic1", "topic2"])
    await_group_assignment(sim, ids, subscriptions | parts("topic2", 3))
    for c in ids:
        sim.subscribe(c, [TOPIC, "topic1"])
    await_group_assignment(sim, ids, subscriptions)


@pytest.mark.parametrize(
    ("strategy", "rounds"), [("cooperative-sticky", 2), ("range", 1)], ids=["cooperative", "eager"]
)
def test_rebalance_and_rejoin(groupsim: Any, strategy: str, rounds: int) -> None:
    """Port of PlaintextConsumerAssignorsTest.testRebalanceAndRejoin: C1 owns both partitions of
    topic1; C2 joins and each ends with one. C1's listener records its generation and member id
    whenever partitions are assigned: after the move the generation is one higher with an eager
    assignor and two higher with the cooperative one (its second round), and the member id is
    the same (C1 never left the group)."""
    topic = "topic1"
    sim = make_sim(groupsim, {topic: 2})
    settings = {
        **CONSUMER,
        "group_id": "rebalance-and-rejoin-group",
        "partition_assignment_strategy": [strategy],
        "enable_auto_commit": True,
    }
    seen: list[tuple[int, str]] = []

    class Recorder:
        def on_partitions_assigned(self, partitions: Sequence[TopicPartition]) -> None:
            consumer = sim.consumer("C1")
            seen.append((consumer.generation_id, consumer.member_id))

        def on_partitions_revoked(self, partitions: Sequence[TopicPartition]) -> None:
            return None

    sim.add_consumer("C1", topics=[topic], listener=Recorder(), **settings, start=True)
    await_assignment(sim, "C1", parts(topic, 2))
    stable_generation, stable_member = seen[-1]
    sim.add_consumer("C2", topics=[topic], **settings, start=True)
    assert sim.run_until(
        lambda: len(owned(sim, "C1")) == 1 and len(owned(sim, "C2")) == 1, timeout_ms=15_000
    )
    assert sim.run_until_stable("rebalance-and-rejoin-group", timeout_ms=15_000)
    assert seen[-1] == (stable_generation + rounds, stable_member)


# --- PlaintextConsumerCallbackTest ----------------------------------------------------------------


class AssignmentProbe:
    """A listener that records, in each callback, whether its consumer's assignment() holds ``tp``
    (a failed assert inside a callback would only be logged as listener_error)."""

    def __init__(self, sim: Any, cid: str, tp: TopicPartition) -> None:
        self.sim, self.cid, self.tp = sim, cid, tp
        self.assigned: list[bool] = []
        self.revoked: list[bool] = []

    def _holds(self) -> bool:
        return self.tp in self.sim.consumer(self.cid).assignment

    def on_partitions_assigned(self, partitions: Sequence[TopicPartition]) -> None:
        self.assigned.append(self._holds())

    def on_partitions_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        self.revoked.append(self._holds())


def test_listener_assignment_on_partitions_assigned(groupsim: Any) -> None:
    """Port of PlaintextConsumerCallbackTest.testConsumerRebalanceListenerAssignmentOnPartitionsAssigned:
    inside onPartitionsAssigned, the consumer's assignment() already holds the new partitions
    (ConsumerCoordinator.onJoinComplete updates the subscription state before the callback)."""
    sim = make_sim(groupsim)
    probe = AssignmentProbe(sim, "C1", TP)
    sim.add_consumer("C1", topics=[TOPIC], listener=probe, **CONSUMER, start=True)
    assert sim.run_until(lambda: bool(probe.assigned), timeout_ms=15_000)
    assert probe.assigned == [True]


def test_listener_assignment_on_partitions_revoked(groupsim: Any) -> None:
    """Port of PlaintextConsumerCallbackTest.testConsumerRebalanceListenerAssignmentOnPartitionsRevoked:
    a consumer assigned its partitions is closed; onPartitionsRevoked runs during close(), and
    inside it the consumer's assignment() still holds the partitions being revoked."""
    sim = make_sim(groupsim)
    probe = AssignmentProbe(sim, "C1", TP)
    sim.add_consumer("C1", topics=[TOPIC], listener=probe, **CONSUMER, start=True)
    assert sim.run_until(lambda: bool(probe.assigned), timeout_ms=15_000)
    assert probe.revoked == []
    sim.close("C1")
    assert probe.revoked == [True]
    assert owned(sim, "C1") == set()


# --- PlaintextConsumerSubscriptionTest ------------------------------------------------------------


def test_pattern_subscription(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testPatternSubscription: the pattern t.*c matches
    'topic' and 'tblablac' but not 'tblablak' or 'tblab1', so the consumer owns the four
    partitions of the first two; 'tsomec', created afterwards, is matched on the next metadata
    refresh (metadata.max.age.ms 100) and its partitions are assigned too (Kafka waits up to 15 s;
    here it takes one refresh and one rebalance); unsubscribe() empties the assignment."""
    sim = make_sim(groupsim, {"tblablac": 2, "tblablak": 2, "tblab1": 2})
    sim.add_consumer("C1", pattern="t.*c", listener=CountingListener(), **CONSUMER, start=True)
    assignment = {TP, TP2} | parts("tblablac", 2)
    await_assignment(sim, "C1", assignment)
    sim.create_topic("tsomec", 2)
    created = sim.now
    await_assignment(sim, "C1", assignment | parts("tsomec", 2))
    assert sim.now - created < 200
    sim.subscribe("C1", [])
    assert owned(sim, "C1") == set()


def test_subsequent_pattern_subscription(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testSubsequentPatternSubscription: with
    metadata.max.age.ms 30 s, the pattern .*o.* gives 'topic' and 'foo'; 'bar' is created, and
    subscribing to the pattern ... (three characters: 'foo', 'bar') moves the consumer to foo-0
    and bar-0. The new subscription refreshes the metadata itself: the assignment changes long
    before the 30 s refresh would. unsubscribe() empties it."""
    sim = make_sim(groupsim, {"foo": 1})
    settings = {**CONSUMER, "metadata_max_age_ms": 30_000}
    sim.add_consumer("C1", pattern=".*o.*", listener=CountingListener(), **settings, start=True)
    foo0, bar0 = TopicPartition("foo", 0), TopicPartition("bar", 0)
    await_assignment(sim, "C1", {TP, TP2, foo0})
    sim.create_topic("bar", 1)
    sim.subscribe("C1", None, pattern="...")
    subscribed = sim.now
    await_assignment(sim, "C1", {foo0, bar0})
    assert sim.now - subscribed < 1_000
    sim.subscribe("C1", [])
    assert owned(sim, "C1") == set()


def test_pattern_unsubscription(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testPatternUnsubscription: the pattern t.*c gives
    the partitions of 'topic' and 'tblablac'; unsubscribe() clears them at once."""
    sim = make_sim(groupsim, {"tblablac": 2})
    sim.add_consumer("C1", pattern="t.*c", listener=CountingListener(), **CONSUMER, start=True)
    await_assignment(sim, "C1", {TP, TP2} | parts("tblablac", 2))
    sim.subscribe("C1", [])
    assert owned(sim, "C1") == set()


def test_expanding_topic_subscriptions(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testExpandingTopicSubscriptions: a consumer owns
    'topic'; after 'other' is created and added to its subscription it owns both topics."""
    sim = make_sim(groupsim)
    sim.add_consumer("C1", topics=[TOPIC], **CONSUMER, start=True)
    await_assignment(sim, "C1", {TP, TP2})
    sim.create_topic("other", 2)
    sim.subscribe("C1", [TOPIC, "other"])
    await_assignment(sim, "C1", {TP, TP2} | parts("other", 2))


def test_shrinking_topic_subscriptions(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testShrinkingTopicSubscriptions: a consumer owns
    'topic' and 'other'; after dropping 'other' from its subscription it owns 'topic' only."""
    sim = make_sim(groupsim, {"other": 2})
    sim.add_consumer("C1", topics=[TOPIC, "other"], **CONSUMER, start=True)
    await_assignment(sim, "C1", {TP, TP2} | parts("other", 2))
    sim.subscribe("C1", [TOPIC])
    await_assignment(sim, "C1", {TP, TP2})


def test_unsubscribe_topic(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testUnsubscribeTopic: a consumer (session 100 ms,
    heartbeat 30 ms) assigned its partitions subscribes to nothing: its assignment is empty at
    once."""
    sim = make_sim(groupsim)
    listener = CountingListener()
    settings = {**CONSUMER, "session_timeout_ms": 100, "heartbeat_interval_ms": 30}
    sim.add_consumer("C1", topics=[TOPIC], listener=listener, **settings, start=True)
    assert sim.run_until(lambda: listener.calls_to_assigned == 1, timeout_ms=15_000)
    sim.subscribe("C1", [])
    assert owned(sim, "C1") == set()


def subscribe_invalid_topic(sim: Any) -> None:
    """PlaintextConsumerSubscriptionTest.setupSubscribeInvalidTopic: a consumer subscribes to
    "topic abc" (a space is illegal in a topic name); its poll() must throw
    InvalidTopicException("Invalid topics: [topic abc]") within 5 s. Here the broker answers
    the Metadata request INVALID_TOPIC_EXCEPTION and the consumer fails with that error (an
    exception from poll() stops the simulated application) a few ms after it starts."""
    sim.add_consumer("C1", topics=["topic abc"], **CONSUMER, start=True)
    assert sim.run_until(lambda: sim.status("C1") == "FAILED", timeout_ms=5_000)
    [fatal] = sim.events_named("consumer_fatal", node="C1")
    assert fatal["error"] == "INVALID_TOPIC_EXCEPTION"
    assert fatal["reason"] == "Invalid topics: [topic abc]"
    assert sim.members(GROUP) == []  # it failed before joining
    # nor can the topic come to exist: CreateTopics answers INVALID_TOPIC_EXCEPTION
    with pytest.raises(ValueError, match="'topic abc': Topic name is invalid"):
        sim.create_topic("topic abc", 1)
    assert sim.events_named("sim_topic_created") == []


def test_subscribe_invalid_topic_can_unsubscribe(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testSubscribeInvalidTopicCanUnsubscribe: after
    poll() threw InvalidTopicException, unsubscribe() does not throw. Here the failed consumer
    takes the empty subscription without an error and sends nothing (it never joined, so there
    is no LeaveGroup to send)."""
    sim = make_sim(groupsim)
    subscribe_invalid_topic(sim)
    sent = len(sim.events_named("request_sent", node="C1"))
    sim.subscribe("C1", [])
    sim.run_for(1_000)
    assert sim.consumer("C1").subscription == ()
    assert len(sim.events_named("request_sent", node="C1")) == sent


def test_subscribe_invalid_topic_can_close(groupsim: Any) -> None:
    """Port of PlaintextConsumerSubscriptionTest.testSubscribeInvalidTopicCanClose: after poll()
    threw InvalidTopicException, close() does not throw. Here the failed consumer closes
    (CLOSED, consumer_closed) without sending anything."""
    sim = make_sim(groupsim)
    subscribe_invalid_topic(sim)
    sent = len(sim.events_named("request_sent", node="C1"))
    sim.close("C1")
    assert sim.status("C1") == "CLOSED"
    assert sim.events_named("consumer_closed", node="C1")
    sim.run_for(1_000)
    assert len(sim.events_named("request_sent", node="C1")) == sent


# --- PlaintextConsumerCommitTest ------------------------------------------------------------------


def test_auto_commit_on_close(groupsim: Any) -> None:
    """Port of PlaintextConsumerCommitTest.testAutoCommitOnClose: with auto-commit on, close()
    commits the consumer's positions, which another consumer then reads as the group's committed
    offsets. Kafka seeks to 300 and 500 first; groupsim has no seek, so the positions are the
    ones consumed so far."""
    sim = make_sim(groupsim)
    sim.add_consumer("C1", topics=[TOPIC], **{**CONSUMER, "enable_auto_commit": True}, start=True)
    await_assignment(sim, "C1", {TP, TP2})
    fetched_positions(sim, "C1")
    sim.run_for(1_000)
    positions = sim.consumer("C1").positions_at(sim.now)
    assert positions[TP] > 0 and positions[TP2] > 0
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=1_000)
    committed = sim.committed_offsets(GROUP)
    assert committed == {(TOPIC, 0): positions[TP], (TOPIC, 1): positions[TP2]}
    sim.add_consumer("C2", topics=[TOPIC], **CONSUMER, start=True)
    assert fetched_positions(sim, "C2") == positions


def test_auto_commit_on_rebalance(groupsim: Any) -> None:
    """Port of PlaintextConsumerCommitTest.testAutoCommitOnRebalance: an auto-committing consumer
    owns topic-0 and topic-1; a subscription change (topic2 added) rebalances the group, and
    before giving up its partitions the consumer commits its positions (onJoinPrepare), so after
    the rebalance the committed offsets are those positions and consumption resumes from them.
    Kafka pauses the partitions and seeks to 300 and 500; here the positions are read the
    instant the subscription changes (the rejoin, and its commit, start at that instant)."""
    sim = make_sim(groupsim, {"topic2": 2})
    settings = {**CONSUMER, "enable_auto_commit": True}
    sim.add_consumer("C1", topics=[TOPIC], **settings, start=True)
    await_assignment(sim, "C1", {TP, TP2})
    fetched_positions(sim, "C1")
    sim.run_for(1_000)
    positions = sim.consumer("C1").positions_at(sim.now)
    sim.subscribe("C1", [TOPIC, "topic2"])
    await_assignment(sim, "C1", {TP, TP2} | parts("topic2", 2))
    committed = sim.committed_offsets(GROUP)
    assert committed[(TOPIC, 0)] == positions[TP] and committed[(TOPIC, 1)] == positions[TP2]
    [prepare] = [c for c in sim.consumer("C1").commits if c.purpose == "join-prepare"]
    assert prepare.error is None and prepare.offsets == positions
    resumed = fetched_positions(sim, "C1")
    assert resumed[TP] == positions[TP] and resumed[TP2] == positions[TP2]


def test_subscribe_and_commit_sync(groupsim: Any) -> None:
    """Port of PlaintextConsumerCommitTest.testSubscribeAndCommitSync: once a subscribed consumer
    is assigned its partitions, commitSync succeeds: the OffsetCommit carries the member id and
    generation the coordinator handed out."""
    sim = make_sim(groupsim)
    sim.add_consumer("C1", topics=[TOPIC], **CONSUMER, start=True)
    await_assignment(sim, "C1", {TP, TP2})
    fetched_positions(sim, "C1")
    sim.commit("C1")
    assert sim.run_until(lambda: sim.consumer("C1").commits[-1].done, timeout_ms=1_000)
    commit = sim.consumer("C1").commits[-1]
    assert commit.error is None and commit.purpose == "manual"
    [received] = sim.events_named("request_received", api="OffsetCommit")
    assert received["member_id"] == sim.consumer("C1").member_id == sim.group(GROUP).leader_id
    assert received["generation_id"] == sim.generation(GROUP)


# --- PlaintextConsumerTest and BaseConsumerTest ---------------------------------------------------


def test_group_consumption(groupsim: Any) -> None:
    """Port of PlaintextConsumerTest.testGroupConsumption: a subscribed consumer is assigned the
    topic and consumes topic-0 from offset 0 (no committed offset, auto.offset.reset earliest)."""
    sim = make_sim(groupsim)
    sim.add_consumer("C1", topics=[TOPIC], **CONSUMER, start=True)
    assert fetched_positions(sim, "C1") == {TP: 0, TP2: 0}
    sim.run_for(100)
    assert sim.consumer("C1").positions_at(sim.now)[TP] > 0


def test_static_consumer_detects_new_partition_created_after_restart(groupsim: Any) -> None:
    """Port of PlaintextConsumerTest.testStaticConsumerDetectsNewPartitionCreatedAfterRestart: a
    static member (group.instance.id my-instance-id) owns foo-0 and is closed (a static member
    sends no LeaveGroup); a new consumer with the same instance id replaces it and, as the
    returning static leader, gets its assignment back without a rebalance (skipAssignment).
    foo then grows to two partitions, and that leader still notices it and rebalances: it owns
    foo-0 and foo-1."""
    sim = make_sim(groupsim, {"foo": 1})
    settings = {**CONSUMER, "group_id": "my-group-id", "group_instance_id": "my-instance-id"}
    foo0, foo1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    sim.add_consumer("C1", topics=["foo"], **settings, start=True)
    await_assignment(sim, "C1", {foo0})
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED", timeout_ms=1_000)
    generation = sim.generation("my-group-id")
    sim.add_consumer("C2", topics=["foo"], **settings, start=True)
    await_assignment(sim, "C2", {foo0})
    assert sim.events_named("assignment_skipped", node="C2")
    assert sim.generation("my-group-id") == generation
    sim.add_partitions("foo", 2)
    await_assignment(sim, "C2", {foo0, foo1})
    sim.close("C2")


def test_coordinator_failover(groupsim: Any) -> None:
    """Port of BaseConsumerTest.testCoordinatorFailover: a consumer (session 5001 ms, heartbeat 1 s,
    max.poll.interval.ms 15 s) is assigned once; the broker hosting the group's coordinator shuts
    down. The failover causes no rebalance: a commit (retried while the coordinator moves)
    succeeds and the listener sees no revocation."""
    sim = make_sim(groupsim)
    listener = CountingListener()
    settings = {
        **CONSUMER,
        "session_timeout_ms": 5001,
        "heartbeat_interval_ms": 1000,
        "max_poll_interval_ms": 15_000,
    }
    sim.add_consumer("C1", topics=[TOPIC], listener=listener, **settings, start=True)
    assert sim.run_until(lambda: listener.calls_to_assigned == 1, timeout_ms=15_000)
    fetched_positions(sim, "C1")
    generation = sim.generation(GROUP)
    old = sim.coordinator(GROUP)
    sim.fail_broker(old)
    sim.commit("C1")
    assert sim.run_until(lambda: sim.consumer("C1").commits[-1].done, timeout_ms=10_000)
    assert sim.consumer("C1").commits[-1].error is None
    assert sim.coordinator(GROUP) not in (None, old)
    sim.run_for(10_000)  # two session timeouts: still no rebalance
    assert listener.calls_to_revoked == 0 and listener.calls_to_assigned == 1
    assert sim.generation(GROUP) == generation == sim.consumer("C1").generation_id
