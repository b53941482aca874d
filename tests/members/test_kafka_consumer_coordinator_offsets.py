"""Parity suite: the offset, commit, close and leave tests of Kafka's ConsumerCoordinatorTest.

Each test ports one test of apache/kafka's
``clients/src/test/java/org/apache/kafka/clients/consumer/internals/ConsumerCoordinatorTest.java``
(trunk 1eb7644) to the simulated consumer, with Kafka's settings (session 10 s, heartbeat 5 s,
rebalance timeout 60 s, auto-commit every 2 s, request timeout 30 s, retry backoff 100 ms) and its
names (group ``test-group``, member ``consumer``, partition ``test1-0``). Kafka runs the class once
per rebalance protocol (EAGER and COOPERATIVE subclasses); so does the ``strategy`` fixture here.

How Kafka's calls map onto groupsim:

* ``commitOffsetsSync`` is ``Consumer.commit()`` (it commits the consumed positions; its outcome is
  the last ``CommitResult``: ``error`` None is ``true``, ``TIMEOUT`` is ``false``, any other error
  is the exception commitSync throws, COMMIT_FAILED being CommitFailedException);
* ``commitOffsetsAsync`` is what auto-commit does (``purpose == "auto"``); a retriable failure is
  Kafka's RetriableCommitFailedException (``retriable``);
* ``seek(t1p, 100)`` is an OffsetFetch answered with a committed offset of 100; positions then
  advance with the simulated application's polls, so a commit carries ``positions_at(now)``;
* an exception thrown from ``poll()`` is a failed consumer (``fatal_error``), as everywhere in
  groupsim (docs/members.md, "Fatal errors").

Not ported (17 of the 81 offset/commit/close/leave tests):

* manual assignment (``assign()`` without group management) is not modelled:
  testAutoCommitManualAssignment, testAutoCommitManualAssignmentCoordinatorUnknown,
  testAutoCommitAsyncWithUserAssignedType, testCommitAsyncWithUserAssignedType,
  testCloseManualAssignment, testCloseCoordinatorNotKnownManualAssignment,
  testCommitAfterLeaveGroup, testCommitOffsetShouldNotSetInstanceIdIfMemberIdIsUnknown (a commit
  outside any group), testNoCoordinatorDiscoveryIfPositionsKnown,
  testNoCoordinatorDiscoveryIfPartitionAwaitingReset (also: no offset-reset state);
* Java API plumbing with no behaviour of its own: testCommitOffsetAsyncWithDefaultCallback and
  testCommitOffsetAsyncFailedWithDefaultCallback (the default OffsetCommitCallback; outcomes as in
  testCommitOffsetOnly / testCommitOffsetAsyncCoordinatorNotAvailable),
  testCommitOffsetMetadataAsync (the metadata string, otherwise testCommitOffsetOnly);
* not modelled: testRefreshOffsetWithValidation (leader epochs, position validation),
  testThrowOnUnsupportedStableFlag and testNoThrowWhenStableFlagIsSupported (API versions),
  testEnsureCompletingAsyncCommitsWhenSyncCommitWithoutOffsets (commitSync of explicit, empty
  offsets waiting for in-flight commitAsyncs: ``commit()`` of nothing completes at once).
"""

from __future__ import annotations

import pytest

from assignors.api import TopicPartition
from coordinator.errors import Errors
from coordinator.protocol import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from members.config import ConsumerConfig
from members.state import NO_GENERATION, Generation
from tests.members.harness import Harness

GROUP_ID = "test-group"
CONSUMER_ID = "consumer"
GROUP_INSTANCE_ID = "test-instance"
T1P = TopicPartition("test1", 0)
SESSION_TIMEOUT_MS = 10_000
HEARTBEAT_INTERVAL_MS = 5_000
REBALANCE_TIMEOUT_MS = 60_000
AUTO_COMMIT_INTERVAL_MS = 2_000
REQUEST_TIMEOUT_MS = 30_000
RETRY_BACKOFF_MS = 100
#: default.api.timeout.ms: how long commitSync() retries.
DEFAULT_API_TIMEOUT_MS = 60_000


@pytest.fixture(params=["range", "cooperative-sticky"], ids=["eager", "cooperative"])
def strategy(request: pytest.FixtureRequest) -> str:
    """Kafka's EAGER / COOPERATIVE subclasses of ConsumerCoordinatorTest."""
    return request.param


def kafka_config(strategy: str = "range", **overrides: object) -> ConsumerConfig:
    """ConsumerCoordinatorTest's GroupRebalanceConfig and auto-commit settings."""
    settings: dict[str, object] = {
        "group_id": GROUP_ID,
        "partition_assignment_strategy": (strategy,),
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
        "max_poll_interval_ms": REBALANCE_TIMEOUT_MS,
        "auto_commit_interval_ms": AUTO_COMMIT_INTERVAL_MS,
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
        "retry_backoff_ms": RETRY_BACKOFF_MS,
        "retry_backoff_max_ms": 1_000,
        "enable_auto_commit": False,
    }
    settings.update(overrides)
    return ConsumerConfig(**settings)  # type: ignore[arg-type]


def harness(strategy: str = "range", **overrides: object) -> Harness:
    """One consumer subscribed to ``test1``; the cluster has test1 and test2, one partition each."""
    return Harness(
        kafka_config(strategy, **overrides),
        topics=("test1",),
        partitions={"test1": 1, "test2": 1},
    )


def join_as_follower(
    h: Harness,
    *,
    committed: int = 100,
    member_id: str = CONSUMER_ID,
    generation_id: int = 1,
) -> None:
    """joinAsFollowerAndReceiveAssignment(t1p) followed by Kafka's ``seek(t1p, 100)``: the
    OffsetFetch of the new partition answers with ``committed``."""
    if h.consumer.status == "NEW":
        h.connect()
    h.join_and_sync([T1P], member_id=member_id, generation_id=generation_id, leader="leader")
    assert h.consumer.state == "STABLE"
    h.answer_offset_fetch({str(T1P): committed})


def offsets_of(request) -> dict[TopicPartition, int]:
    """The offsets an OffsetCommit request carries."""
    return {
        TopicPartition(t.name, p.partition_index): p.committed_offset
        for t in request.message.topics
        for p in t.partitions
    }


def sync_commit(h: Harness):
    """commitSync of the consumed positions; returns its OffsetCommit request."""
    before = h.count(OffsetCommitRequest)
    h.call("commit")
    assert h.count(OffsetCommitRequest) == before + 1
    return h.last(OffsetCommitRequest)


def answer_heartbeats(h: Harness, error: Errors = Errors.NONE) -> None:
    for hb in h.pending(HeartbeatRequest):
        h.respond(hb, HeartbeatResponse(error))


def advance_with_heartbeats(h: Harness, to_ms: int, step_ms: int = 1_000) -> None:
    """Advance to ``to_ms``, the coordinator answering every heartbeat (so the session lives)."""
    while h.now < to_ms:
        h.advance(min(h.now + step_ms, to_ms))
        answer_heartbeats(h)


# --- auto-commit ------------------------------------------------------------------------------


def test_auto_commit_dynamic_assignment(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAutoCommitDynamicAssignment: a member that joined and
    has a position commits it automatically once auto.commit.interval.ms has passed."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    joined = h.now
    h.advance(joined + AUTO_COMMIT_INTERVAL_MS - 1)
    assert h.count(OffsetCommitRequest) == 0
    h.advance(joined + AUTO_COMMIT_INTERVAL_MS)
    (commit,) = h.pending(OffsetCommitRequest)
    assert commit.dst == "broker-1"
    assert commit.message.group_id == GROUP_ID
    assert (commit.message.generation_id, commit.message.member_id) == (1, CONSUMER_ID)
    assert offsets_of(commit) == h.consumer.positions_at(h.now)
    assert offsets_of(commit)[T1P] > 100  # consumed from the committed offset on
    h.answer_commit(commit)
    assert h.consumer.commits[-1].purpose == "auto"
    assert h.consumer.commits[-1].error is None


def test_auto_commit_retry_backoff(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAutoCommitRetryBackoff: an auto-commit failing with a
    retriable error (NOT_COORDINATOR) marks the coordinator unknown; once it is found again the
    commit is retried after retry.backoff.ms, not earlier, with the positions of that moment."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    failed_at = h.now
    h.answer_commit(h.last(OffsetCommitRequest), Errors.NOT_COORDINATOR)
    assert h.consumer.coordinator is None
    h.answer_find_coordinator()
    assert h.consumer.coordinator == "broker-1"
    h.advance(failed_at + RETRY_BACKOFF_MS // 2)
    assert h.pending(OffsetCommitRequest) == []
    h.advance(failed_at + RETRY_BACKOFF_MS)
    (retry,) = h.pending(OffsetCommitRequest)
    assert offsets_of(retry) == h.consumer.positions_at(h.now)
    h.answer_commit(retry)
    assert h.consumer.commits[-1].error is None


def test_auto_commit_awaits_interval(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAutoCommitAwaitsInterval: an outstanding auto-commit
    does not bring the next one forward, and an answer does not restart the interval: the next
    auto-commit goes out one interval after the previous one was sent."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    first_at = h.now + AUTO_COMMIT_INTERVAL_MS
    h.advance(first_at)
    (first,) = h.pending(OffsetCommitRequest)
    h.advance(first_at + AUTO_COMMIT_INTERVAL_MS // 2)
    assert h.count(OffsetCommitRequest) == 1
    h.answer_commit(first)
    assert h.pending(OffsetCommitRequest) == []
    h.advance(first_at + AUTO_COMMIT_INTERVAL_MS - 1)
    assert h.count(OffsetCommitRequest) == 1
    h.advance(first_at + AUTO_COMMIT_INTERVAL_MS)
    (second,) = h.pending(OffsetCommitRequest)
    assert offsets_of(second)[T1P] > offsets_of(first)[T1P]
    h.answer_commit(second)


def test_auto_commit_dynamic_assignment_rebalance(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAutoCommitDynamicAssignmentRebalance: a member that has
    not joined yet commits nothing however long it waits; after the join the interval starts
    afresh and the commit follows one interval later."""
    h = harness(strategy, enable_auto_commit=True)
    h.connect()  # the coordinator is known, the JoinGroup is outstanding
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    assert h.count(OffsetCommitRequest) == 0
    join_as_follower(h)
    joined = h.now
    h.advance(joined + AUTO_COMMIT_INTERVAL_MS - 1)
    assert h.count(OffsetCommitRequest) == 0
    h.advance(joined + AUTO_COMMIT_INTERVAL_MS)
    (commit,) = h.pending(OffsetCommitRequest)
    assert offsets_of(commit) == h.consumer.positions_at(h.now)
    h.answer_commit(commit)
    assert h.consumer.commits[-1].error is None


def test_auto_commit_after_coordinator_back_to_service(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAutoCommitAfterCoordinatorBackToService: an auto-commit
    that falls due while the coordinator is unknown goes out as soon as the coordinator is found
    again, to that coordinator, and leaves the position as it was."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.mark_coordinator_unknown()
    assert h.consumer.coordinator is None
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    assert h.count(OffsetCommitRequest) == 0
    h.answer_find_coordinator()
    assert h.consumer.coordinator == "broker-1"
    (commit,) = h.pending(OffsetCommitRequest)
    assert commit.dst == "broker-1"
    position = h.consumer.positions_at(h.now)
    assert offsets_of(commit) == position
    h.answer_commit(commit)
    assert h.consumer.coordinator == "broker-1"
    assert h.consumer.committed == position
    assert h.consumer.positions_at(h.now) == position


# --- commitAsync (auto-commit) outcomes -------------------------------------------------------


def test_commit_offset_only(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetOnly: an asynchronous commit answered
    without error completes successfully, and its offsets become the committed ones."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    (commit,) = h.pending(OffsetCommitRequest)
    op = h.consumer.commits[-1]
    assert not op.done
    h.answer_commit(commit)
    assert op.done and op.error is None and op.purpose == "auto"
    assert h.consumer.committed == offsets_of(commit)


@pytest.mark.parametrize(
    "failure",
    [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, "disconnect"],
    ids=[
        "testCommitOffsetAsyncCoordinatorNotAvailable",
        "testCommitOffsetAsyncNotCoordinator",
        "testCommitOffsetAsyncDisconnected",
    ],
)
def test_commit_offset_async_coordinator_failures(strategy: str, failure: Errors | str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetAsyncCoordinatorNotAvailable,
    testCommitOffsetAsyncNotCoordinator and testCommitOffsetAsyncDisconnected: an asynchronous
    commit answered COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR, or whose connection breaks,
    fails once as retriable (RetriableCommitFailedException) and marks the coordinator unknown."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    (commit,) = h.pending(OffsetCommitRequest)
    if failure == "disconnect":
        h.disconnect(commit)
    else:
        h.answer_commit(commit, failure)
    op = h.consumer.commits[-1]
    assert op.done and op.retriable
    assert op.error == ("NETWORK_EXCEPTION" if failure == "disconnect" else failure.name)
    assert h.consumer.coordinator is None
    assert len(h.log.named("commit_failed")) == 1


def test_async_commit_callbacks_invoked_prior_to_sync_commit_completion(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testAsyncCommitCallbacksInvokedPriorToSyncCommitCompletion:
    an asynchronous commit sent before a commitSync completes before it, in the order sent, and
    the offsets of the later (synchronous) commit are the ones left committed."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    (first,) = h.pending(OffsetCommitRequest)
    h.advance(h.now + 500)
    second = sync_commit(h)
    assert len(h.pending(OffsetCommitRequest)) == 2
    auto, manual = list(h.consumer.commits)[-2:]
    assert (auto.purpose, manual.purpose) == ("auto", "manual")
    h.answer_commit(first)
    assert auto.done and not manual.done
    h.answer_commit(second)
    assert manual.done and manual.error is None
    assert [e["purpose"] for e in h.log.named("commit_completed")] == ["auto", "manual"]
    assert h.consumer.committed == offsets_of(second)
    assert offsets_of(second)[T1P] > offsets_of(first)[T1P]


def test_many_in_flight_async_commits_with_coordinator_disconnect(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testManyInFlightAsyncCommitsWithCoordinatorDisconnect:
    when the coordinator is marked unknown, every asynchronous commit in flight to it fails with a
    retriable disconnect, each exactly once."""
    h = harness(strategy, enable_auto_commit=True, auto_commit_interval_ms=10)
    join_as_follower(h)
    h.advance(1_000)  # one auto-commit every 10 ms, none answered
    in_flight = h.pending(OffsetCommitRequest)
    assert len(in_flight) == 100
    ops = [op for op in h.consumer.commits if op.purpose == "auto"]
    assert len(ops) == 100 and not any(op.done for op in ops)
    h.mark_coordinator_unknown()
    assert all(op.done and op.retriable and op.error == "NETWORK_EXCEPTION" for op in ops)
    assert len(h.log.named("commit_failed")) == 100
    assert h.count(OffsetCommitRequest) == 100  # nothing re-sent to the old coordinator


def test_coordinator_unknown_in_unsent_callbacks_after_coordinator_dead(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCoordinatorUnknownInUnsentCallbacksAfterCoordinatorDead:
    a request cancelled because its coordinator was marked dead fails with a disconnect, and its
    handler already sees the coordinator as unknown, so nothing is retried against the dead
    coordinator; the retry goes to the one found next."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    assert len(h.pending(OffsetCommitRequest)) == 1
    h.mark_coordinator_unknown()
    op = h.consumer.commits[-1]
    assert op.done and op.retriable and op.error == "NETWORK_EXCEPTION"
    names = [e["event"] for e in h.log.events]
    assert names.index("coordinator_unknown") < names.index("commit_failed")
    assert h.count(OffsetCommitRequest) == 1
    h.answer_find_coordinator(node_id=2)
    h.advance(h.now + RETRY_BACKOFF_MS)
    assert h.last(OffsetCommitRequest).dst == "broker-2"


# --- commitSync outcomes ----------------------------------------------------------------------


def test_commit_offset_metadata_sync(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetMetadataSync: a commitSync answered without
    error returns true (the metadata string it carries in Kafka is not modelled)."""
    h = harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    assert offsets_of(commit) == h.consumer.positions_at(h.now)
    h.answer_commit(commit)
    op = h.consumer.commits[-1]
    assert op.done and op.error is None and op.purpose == "manual"
    assert h.consumer.committed == offsets_of(commit)


@pytest.mark.parametrize(
    "failure",
    [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, "disconnect"],
    ids=[
        "testCommitOffsetSyncNotCoordinator",
        "testCommitOffsetSyncCoordinatorNotAvailable",
        "testCommitOffsetSyncCoordinatorDisconnected",
    ],
)
def test_commit_offset_sync_coordinator_failures_are_retried(
    strategy: str, failure: Errors | str
) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetSyncNotCoordinator,
    testCommitOffsetSyncCoordinatorNotAvailable and testCommitOffsetSyncCoordinatorDisconnected:
    a commitSync whose coordinator fails or disconnects rediscovers the coordinator and sends
    the same offsets again; only the successful retry is its outcome."""
    h = harness(strategy)
    join_as_follower(h)
    first = sync_commit(h)
    if failure == "disconnect":
        h.disconnect(first)
    else:
        h.answer_commit(first, failure)
    op = h.consumer.commits[-1]
    assert not op.done
    assert h.consumer.coordinator is None
    h.answer_find_coordinator()
    h.advance(h.now + 2 * RETRY_BACKOFF_MS)  # the first backoff: 100 ms +- 20 %
    (second,) = h.pending(OffsetCommitRequest)
    assert second.correlation_id != first.correlation_id
    assert offsets_of(second) == offsets_of(first)
    h.answer_commit(second)
    assert op.done and op.error is None
    assert h.count(OffsetCommitRequest) == 2


def test_retry_commit_unknown_topic_or_partition(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testRetryCommitUnknownTopicOrPartition: a commitSync
    answered UNKNOWN_TOPIC_OR_PARTITION is retried at the same coordinator and succeeds."""
    h = harness(strategy)
    join_as_follower(h)
    started = h.now
    first = sync_commit(h)
    h.answer_commit(first, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert h.consumer.coordinator == "broker-1"
    h.advance(h.now + 2 * RETRY_BACKOFF_MS)
    (second,) = h.pending(OffsetCommitRequest)
    assert second.dst == "broker-1" and offsets_of(second) == offsets_of(first)
    h.answer_commit(second)
    op = h.consumer.commits[-1]
    assert op.done and op.error is None
    assert h.now - started < 10_000  # within Kafka's 10 s timer


@pytest.mark.parametrize(
    "error",
    [Errors.OFFSET_METADATA_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR],
    ids=[
        "testCommitOffsetMetadataTooLarge",
        "testCommitOffsetSyncCallbackWithNonRetriableException",
    ],
)
def test_commit_offset_sync_non_retriable_errors_are_thrown(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetMetadataTooLarge and
    testCommitOffsetSyncCallbackWithNonRetriableException: a commitSync answered with a
    non-retriable error (OFFSET_METADATA_TOO_LARGE, an unexpected UNKNOWN_SERVER_ERROR) is not
    retried; the error is its outcome, and the member stays in the group."""
    h = harness(strategy)
    join_as_follower(h)
    h.answer_commit(sync_commit(h), error)
    op = h.consumer.commits[-1]
    assert op.done and op.error == error.name and not op.retriable
    h.advance(h.now + 5_000)
    assert h.count(OffsetCommitRequest) == 1
    assert h.consumer.state == "STABLE" and h.consumer.generation_id == 1
    assert not h.consumer.failed


def test_commit_offset_sync_without_future_gets_completed(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetSyncWithoutFutureGetsCompleted: a commitSync
    whose time runs out before any answer returns false (TIMEOUT) rather than throwing; here
    that time is default.api.timeout.ms."""
    h = harness(strategy)
    join_as_follower(h)
    started = h.now
    sync_commit(h)
    op = h.consumer.commits[-1]
    h.advance(started + DEFAULT_API_TIMEOUT_MS - 1)  # nothing is ever answered
    assert not op.done
    h.advance(started + DEFAULT_API_TIMEOUT_MS)
    assert op.done and op.error == "TIMEOUT"
    assert not h.consumer.failed


@pytest.mark.parametrize(
    "error",
    [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID],
    ids=["testCommitOffsetIllegalGeneration", "testCommitOffsetUnknownMemberId"],
)
def test_commit_offset_generation_errors_are_commit_failed(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetIllegalGeneration and
    testCommitOffsetUnknownMemberId: a commitSync answered ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID
    cannot be retried (a rebalance happened): it throws CommitFailedException."""
    h = harness(strategy)
    join_as_follower(h)
    h.answer_commit(sync_commit(h), error)
    op = h.consumer.commits[-1]
    assert op.done and op.error == "COMMIT_FAILED" and not op.retriable
    assert h.count(OffsetCommitRequest) == 1


def test_commit_offset_illegal_generation_should_reset_generation_id(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetIllegalGenerationShouldResetGenerationId:
    ILLEGAL_GENERATION to a commit resets the generation id and protocol but keeps the member id
    (the member may still be valid), so the rejoin goes out with it."""
    h = harness(strategy)
    join_as_follower(h)
    h.answer_commit(sync_commit(h), Errors.ILLEGAL_GENERATION)
    gen = h.consumer.generation
    assert gen.generation_id == NO_GENERATION.generation_id
    assert gen.protocol_name == NO_GENERATION.protocol_name
    assert gen.member_id == CONSUMER_ID
    assert h.last(JoinGroupRequest).message.member_id == CONSUMER_ID


def test_commit_offset_unknown_member_should_reset_to_no_generation(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetUnknownMemberShouldResetToNoGeneration:
    UNKNOWN_MEMBER_ID to a commit resets the generation and the member id."""
    h = harness(strategy)
    join_as_follower(h)
    h.answer_commit(sync_commit(h), Errors.UNKNOWN_MEMBER_ID)
    assert h.consumer.generation == NO_GENERATION
    assert h.last(JoinGroupRequest).message.member_id == ""


def rebalance_to_new_generation(h: Harness, strategy: str) -> Generation:
    """The member rejoins and gets generation 2 with a new member id, as Kafka's
    ``setNewGeneration(new Generation(2, "memberId-new", ...))``."""
    h.rejoin()
    h.join_and_sync([T1P], member_id="memberId-new", generation_id=2, leader="leader")
    h.answer_offset_fetch({str(T1P): 100})
    assert h.consumer.state == "STABLE"
    return Generation(2, "memberId-new", strategy)


@pytest.mark.parametrize(
    "error",
    [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID],
    ids=[
        "testCommitOffsetIllegalGenerationWithNewGeneration",
        "testCommitOffsetUnknownMemberWithNewGeneration",
    ],
)
def test_commit_offset_generation_error_with_new_generation(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetIllegalGenerationWithNewGeneration and
    testCommitOffsetUnknownMemberWithNewGeneration: when the answer to an older generation's
    commit arrives while the member, with a newer generation, is rebalancing again, the commit
    fails with RebalanceInProgressException and the newer generation is not reset."""
    h = harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    new_generation = rebalance_to_new_generation(h, strategy)
    h.rejoin()
    assert h.consumer.state == "PREPARING_REBALANCE"
    joins = h.count(JoinGroupRequest)
    h.answer_commit(commit, error)
    assert h.consumer.commits[0].error == "REBALANCE_IN_PROGRESS"
    assert h.consumer.generation == new_generation
    assert h.consumer.state == "PREPARING_REBALANCE"
    assert h.count(JoinGroupRequest) == joins  # the JoinGroup under way is not restarted


@pytest.mark.parametrize(
    "error",
    [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID],
    ids=[
        "testCommitOffsetIllegalGenerationWithResetGeneration",
        "testCommitOffsetUnknownMemberWithResetGeneration",
    ],
)
def test_commit_offset_generation_error_with_reset_generation(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetIllegalGenerationWithResetGeneration and
    testCommitOffsetUnknownMemberWithResetGeneration: when the generation was reset (here by a
    heartbeat error while the application is busy, so no rejoin has started) before the answer,
    the commit fails with CommitFailedException and the generation stays NO_GENERATION."""
    h = harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    h.call("stall", 10_000)
    h.advance(HEARTBEAT_INTERVAL_MS)
    answer_heartbeats(h, Errors.UNKNOWN_MEMBER_ID)
    assert h.consumer.generation == NO_GENERATION and h.consumer.state == "UNJOINED"
    h.answer_commit(commit, error)
    assert h.consumer.commits[-1].error == "COMMIT_FAILED"
    assert h.consumer.generation == NO_GENERATION


def test_commit_offset_rebalance_in_progress() -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetRebalanceInProgress: while the member is
    rebalancing, a commitSync fails at once with RebalanceInProgressException and sends nothing;
    once the leader completes the rebalance, a commit answered REBALANCE_IN_PROGRESS fails the
    same way and requests a rejoin without resetting the generation.

    COOPERATIVE only: a simulated commit() commits the consumed positions, and an EAGER member
    owns nothing while it rebalances (Kafka's test commits an explicit offset instead)."""
    h = harness("cooperative-sticky")
    h.connect()
    h.join_and_sync([T1P], member_id="leader", generation_id=1, leader="leader")
    h.answer_offset_fetch({str(T1P): 100})
    h.rejoin()
    assert h.consumer.state == "PREPARING_REBALANCE" and h.consumer.rejoin_pending
    commits = h.count(OffsetCommitRequest)
    h.call("commit")
    assert h.consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"
    assert h.count(OffsetCommitRequest) == commits
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(generation_id=2, member_id="leader", leader="leader"))
    (sync,) = h.pending(SyncGroupRequest)
    assert (sync.message.member_id, sync.message.generation_id) == ("leader", 2)
    assert [a.member_id for a in sync.message.assignments] == ["leader"]
    h.respond(sync, h.sync_response([T1P]))
    expected = Generation(2, "leader", "cooperative-sticky")
    assert h.consumer.state == "STABLE" and not h.consumer.rejoin_pending
    assert h.consumer.generation == expected
    commit = sync_commit(h)
    h.call("stall", 1_000)  # the application is busy: the requested rejoin waits for poll()
    h.answer_commit(commit, Errors.REBALANCE_IN_PROGRESS)
    assert h.consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"
    assert h.consumer.rejoin_pending
    assert h.consumer.state == "STABLE" and h.consumer.generation == expected
    h.advance(h.now + 1_000)
    assert h.last(JoinGroupRequest).message.member_id == "leader"


# --- FENCED_INSTANCE_ID -----------------------------------------------------------------------


def static_harness(strategy: str = "range", **overrides: object) -> Harness:
    return harness(strategy, group_instance_id=GROUP_INSTANCE_ID, **overrides)


def test_commit_offset_request_sync_with_fenced_instance_id_exception(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetRequestSyncWithFencedInstanceIdException:
    a commitSync answered FENCED_INSTANCE_ID throws FencedInstanceIdException."""
    h = static_harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    assert commit.message.group_instance_id == GROUP_INSTANCE_ID
    h.answer_commit(commit, Errors.FENCED_INSTANCE_ID)
    assert h.consumer.commits[-1].error == "FENCED_INSTANCE_ID"
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def receive_fenced_instance_id_exception(h: Harness) -> None:
    """receiveFencedInstanceIdException: an asynchronous commit answered FENCED_INSTANCE_ID."""
    join_as_follower(h)
    h.advance(AUTO_COMMIT_INTERVAL_MS)
    (commit,) = h.pending(OffsetCommitRequest)
    h.answer_commit(commit, Errors.FENCED_INSTANCE_ID)
    assert h.consumer.commits[-1].error == "FENCED_INSTANCE_ID"


def test_commit_offset_request_async_with_fenced_instance_id_exception(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetRequestAsyncWithFencedInstanceIdException:
    an asynchronous commit answered FENCED_INSTANCE_ID makes the application's next poll() throw
    FencedInstanceIdException."""
    h = static_harness(strategy, enable_auto_commit=True)
    receive_fenced_instance_id_exception(h)
    h.advance(h.now + 100)
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def test_commit_offset_request_async_always_receive_fenced_exception(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetRequestAsyncAlwaysReceiveFencedException:
    once fenced, the consumer stays fenced: later commits (async or sync) send nothing."""
    h = static_harness(strategy, enable_auto_commit=True)
    receive_fenced_instance_id_exception(h)
    sent = h.count(OffsetCommitRequest)
    h.call("commit")
    h.advance(h.now + 3 * AUTO_COMMIT_INTERVAL_MS)
    assert h.count(OffsetCommitRequest) == sent
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def test_commit_offset_fenced_instance_with_new_generation(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetFencedInstanceWithNewGeneration: a
    FENCED_INSTANCE_ID answer to an older generation's commit, arriving after the member got a
    new generation (and is not rebalancing), is a CommitFailedException, not fatal, and the new
    generation is kept."""
    h = static_harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    new_generation = rebalance_to_new_generation(h, strategy)
    h.answer_commit(commit, Errors.FENCED_INSTANCE_ID)
    assert h.consumer.commits[0].error == "COMMIT_FAILED"
    assert h.consumer.generation == new_generation
    h.advance(h.now + 1_000)
    assert not h.consumer.failed and h.consumer.state == "STABLE"


def test_commit_offset_fenced_instance_with_rebalancing_generation(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCommitOffsetFencedInstanceWithRebalancingGeneration:
    the same late FENCED_INSTANCE_ID while the member is rebalancing with its newer generation is
    a RebalanceInProgressException; the generation is kept."""
    h = static_harness(strategy)
    join_as_follower(h)
    commit = sync_commit(h)
    new_generation = rebalance_to_new_generation(h, strategy)
    h.rejoin()
    assert h.consumer.state == "PREPARING_REBALANCE"
    h.answer_commit(commit, Errors.FENCED_INSTANCE_ID)
    assert h.consumer.commits[0].error == "REBALANCE_IN_PROGRESS"
    assert h.consumer.generation == new_generation
    assert not h.consumer.failed


# --- onJoinPrepare's commit -------------------------------------------------------------------


def prepare_to_rejoin(h: Harness):
    """A member of generation 42 ("consumer-42") with a position rejoins; with auto-commit on,
    onJoinPrepare's commit is returned (outstanding), else None."""
    join_as_follower(h, member_id="consumer-42", generation_id=42)
    h.advance(h.now + 500)
    commits = h.count(OffsetCommitRequest)
    h.rejoin()
    if h.count(OffsetCommitRequest) == commits:
        return None
    prepare = h.last(OffsetCommitRequest)
    assert offsets_of(prepare) == h.consumer.positions_at(h.now)
    assert (prepare.message.generation_id, prepare.message.member_id) == (42, "consumer-42")
    return prepare


def test_join_prepare_with_disable_auto_commit(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testJoinPrepareWithDisableAutoCommit: without auto-commit,
    onJoinPrepare commits nothing and the JoinGroup goes out at once."""
    h = harness(strategy, group_instance_id="group-id")
    assert prepare_to_rejoin(h) is None
    assert h.count(OffsetCommitRequest) == 0
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.consumer.coordinator == "broker-1"


def test_join_prepare_and_commit_completed(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testJoinPrepareAndCommitCompleted: with auto-commit,
    onJoinPrepare commits the positions and completes (the JoinGroup goes out) once the commit
    succeeds; nothing else is left in flight."""
    h = harness(strategy, group_instance_id="group-id", enable_auto_commit=True)
    prepare = prepare_to_rejoin(h)
    assert prepare is not None
    assert h.pending(JoinGroupRequest) == []
    h.answer_commit(prepare)
    assert h.consumer.commits[-1].purpose == "join-prepare"
    assert h.consumer.commits[-1].error is None
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.pending(OffsetCommitRequest) == []
    assert h.consumer.coordinator == "broker-1"


def test_join_prepare_and_commit_with_coordinator_not_available(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testJoinPrepareAndCommitWithCoordinatorNotAvailable: a
    retriable failure of onJoinPrepare's commit (COORDINATOR_NOT_AVAILABLE) keeps onJoinPrepare
    from completing (no JoinGroup) and marks the coordinator unknown."""
    h = harness(strategy, group_instance_id="group-id", enable_auto_commit=True)
    prepare = prepare_to_rejoin(h)
    h.answer_commit(prepare, Errors.COORDINATOR_NOT_AVAILABLE)
    assert h.consumer.commits[-1].retriable
    assert h.count(JoinGroupRequest) == 1  # only the first join's
    assert h.pending(OffsetCommitRequest) == []
    assert h.consumer.coordinator is None


@pytest.mark.parametrize(
    "instance_id",
    ["group-id", None],
    ids=[
        "testJoinPrepareAndCommitWithUnknownMemberId",
        "testOnJoinPrepareWithOffsetCommitShouldKeepJoinAfterNonRetryableException",
    ],
)
def test_join_prepare_keeps_joining_after_non_retriable_commit_failure(
    strategy: str, instance_id: str | None
) -> None:
    """Port of ConsumerCoordinatorTest.testJoinPrepareAndCommitWithUnknownMemberId and
    testOnJoinPrepareWithOffsetCommitShouldKeepJoinAfterNonRetryableException: a non-retriable
    failure of onJoinPrepare's commit (UNKNOWN_MEMBER_ID) does not stop the rejoin: onJoinPrepare
    completes and the JoinGroup goes out; the coordinator stays known."""
    h = harness(strategy, group_instance_id=instance_id, enable_auto_commit=True)
    prepare = prepare_to_rejoin(h)
    h.answer_commit(prepare, Errors.UNKNOWN_MEMBER_ID)
    assert h.consumer.commits[-1].error == "COMMIT_FAILED"
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.pending(OffsetCommitRequest) == []
    assert h.consumer.coordinator == "broker-1"


def test_on_join_prepare_with_offset_commit_should_success_after_retry(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testOnJoinPrepareWithOffsetCommitShouldSuccessAfterRetry:
    after a retriable failure (UNKNOWN_TOPIC_OR_PARTITION) onJoinPrepare commits again after
    retry.backoff.ms and completes once that commit succeeds."""
    h = harness(strategy, enable_auto_commit=True)
    prepare = prepare_to_rejoin(h)
    failed_at = h.now
    h.answer_commit(prepare, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert h.pending(JoinGroupRequest) == []
    h.advance(failed_at + RETRY_BACKOFF_MS - 1)
    assert h.pending(OffsetCommitRequest) == []
    h.advance(failed_at + RETRY_BACKOFF_MS)
    (retry,) = h.pending(OffsetCommitRequest)
    assert h.pending(JoinGroupRequest) == []
    h.answer_commit(retry)
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.pending(OffsetCommitRequest) == []
    assert h.consumer.coordinator == "broker-1"


def test_on_join_prepare_with_offset_commit_should_keep_join_after_rebalance_timeout(
    strategy: str,
) -> None:
    """Port of ConsumerCoordinatorTest.testOnJoinPrepareWithOffsetCommitShouldKeepJoinAfterRebalanceTimeout:
    once the rebalance timeout has passed since onJoinPrepare began, it stops waiting for its
    commit and the member joins; an answer arriving later, even a retriable error
    (UNKNOWN_TOPIC_OR_PARTITION), is not retried. The rebalance timeout is 20 s here, below
    request.timeout.ms, so that the commit is still outstanding when it ends (Kafka's MockClient
    never times requests out)."""
    rebalance_timeout_ms = 20_000
    h = harness(strategy, enable_auto_commit=True, max_poll_interval_ms=rebalance_timeout_ms)
    prepare = prepare_to_rejoin(h)
    began = h.now
    advance_with_heartbeats(h, began + rebalance_timeout_ms - 1)
    assert h.pending(JoinGroupRequest) == []
    h.advance(began + rebalance_timeout_ms)
    assert len(h.pending(JoinGroupRequest)) == 1
    h.answer_commit(prepare, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    h.advance(h.now + 1_000)
    assert h.pending(OffsetCommitRequest) == []
    assert h.count(OffsetCommitRequest) == 1
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.consumer.coordinator == "broker-1"


# --- close and leave --------------------------------------------------------------------------


def make_coordinator_unknown(h: Harness, error: Errors) -> None:
    """makeCoordinatorUnknown: the next heartbeat is answered with ``error`` (auto-commits up to
    then are answered); the lookup that follows gets no answer."""
    to = h.now + HEARTBEAT_INTERVAL_MS
    while not h.pending(HeartbeatRequest):
        h.advance(min(h.now + 1_000, to))
        for commit in h.pending(OffsetCommitRequest):
            h.answer_commit(commit)
    answer_heartbeats(h, error)
    assert h.consumer.coordinator is None


def test_close_dynamic_assignment(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCloseDynamicAssignment (gracefulCloseTest): close()
    with auto-commit commits the positions, then revokes the partitions once, sends LeaveGroup,
    and returns once the LeaveGroup is answered."""
    h = harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(h.now + 1_000)
    h.call("close")
    commit = h.last(OffsetCommitRequest)
    assert commit.message.group_id == GROUP_ID
    assert h.count(LeaveGroupRequest) == 0
    h.answer_commit(commit)
    leave = h.last(LeaveGroupRequest)
    assert leave.message.group_id == GROUP_ID
    assert h.consumer.callback_history() == [("assigned", ["test1-0"]), ("revoked", ["test1-0"])]
    assert h.consumer.status == "CLOSING"
    h.answer_leave_group()
    assert h.consumer.status == "CLOSED"


def test_leave_group_on_close(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testLeaveGroupOnClose: closing a dynamic member sends a
    LeaveGroup for the group naming this one member."""
    h = harness(strategy)
    join_as_follower(h)
    h.call("close")
    leave = h.last(LeaveGroupRequest)
    assert leave.dst == "broker-1"
    assert leave.message.group_id == GROUP_ID
    assert [m.member_id for m in leave.message.members] == [CONSUMER_ID]


def test_maybe_leave_group(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testMaybeLeaveGroup: maybeLeaveGroup sends a LeaveGroup
    naming the member, and afterwards the member has no stable generation."""
    h = harness(strategy)
    join_as_follower(h)
    h.maybe_leave_group("test maybe leave group")
    leave = h.last(LeaveGroupRequest)
    assert leave.message.group_id == GROUP_ID
    assert [(m.member_id, m.reason) for m in leave.message.members] == [
        (CONSUMER_ID, "test maybe leave group")
    ]
    assert h.consumer.state != "STABLE"
    assert h.consumer.generation == NO_GENERATION


def test_pending_member_should_leave_group(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testPendingMemberShouldLeaveGroup: a member that was given
    a member id (MEMBER_ID_REQUIRED) but has no generation yet still sends LeaveGroup with it."""
    h = harness(strategy)
    h.connect()
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="consumer-id", error=Errors.MEMBER_ID_REQUIRED))
    assert h.consumer.generation_id == -1 and h.consumer.member_id == "consumer-id"
    h.maybe_leave_group("pending member leaves")
    leave = h.last(LeaveGroupRequest)
    assert leave.message.group_id == GROUP_ID
    assert [m.member_id for m in leave.message.members] == ["consumer-id"]


@pytest.mark.parametrize(
    "error",
    [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE],
    ids=["testCloseCoordinatorNotKnownNoCommits", "testCloseCoordinatorUnavailableNoCommits"],
)
def test_close_coordinator_unknown_without_commits(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testCloseCoordinatorNotKnownNoCommits and
    testCloseCoordinatorUnavailableNoCommits: with nothing to commit and the coordinator unknown,
    close() completes at once; no LeaveGroup can be sent."""
    h = harness(strategy)
    join_as_follower(h)
    make_coordinator_unknown(h, error)
    h.call("close")
    assert h.consumer.status == "CLOSED"
    assert h.count(LeaveGroupRequest) == 0
    assert h.count(OffsetCommitRequest) == 0


@pytest.mark.parametrize(
    ("error", "instance_id"),
    [(Errors.NOT_COORDINATOR, None), (Errors.COORDINATOR_NOT_AVAILABLE, GROUP_INSTANCE_ID)],
    ids=[
        "testCloseCoordinatorNotKnownWithCommits",
        "testCloseTimeoutCoordinatorUnavailableForCommit",
    ],
)
def test_close_coordinator_unknown_with_commits_waits_the_close_timeout(
    strategy: str, error: Errors, instance_id: str | None
) -> None:
    """Port of ConsumerCoordinatorTest.testCloseCoordinatorNotKnownWithCommits and
    testCloseTimeoutCoordinatorUnavailableForCommit: with auto-commit on and the coordinator
    unknown (and not found again), close() waits for it the whole close timeout, then gives the
    commit up and completes. Kafka's tests pass close(1 s); groupsim's close() has Kafka's
    default, min(30 s, request.timeout.ms)."""
    h = harness(strategy, enable_auto_commit=True, group_instance_id=instance_id)
    join_as_follower(h)
    make_coordinator_unknown(h, error)
    h.advance(h.now + AUTO_COMMIT_INTERVAL_MS)
    closed_at = h.now
    h.call("close")
    h.advance(closed_at + REQUEST_TIMEOUT_MS - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + REQUEST_TIMEOUT_MS)
    assert h.consumer.status == "CLOSED"
    assert h.consumer.commits[-1].purpose == "close"
    assert h.consumer.commits[-1].error == "TIMEOUT"
    assert h.count(LeaveGroupRequest) == 0


def test_close_max_wait_coordinator_unavailable_for_commit(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCloseMaxWaitCoordinatorUnavailableForCommit: however
    long close() may take, its wait for the coordinator is capped at request.timeout.ms (20 s
    here, below the 30 s default close timeout)."""
    h = static_harness(strategy, enable_auto_commit=True, request_timeout_ms=20_000)
    join_as_follower(h)
    make_coordinator_unknown(h, Errors.COORDINATOR_NOT_AVAILABLE)
    h.advance(h.now + AUTO_COMMIT_INTERVAL_MS)
    closed_at = h.now
    h.call("close")
    h.advance(closed_at + 20_000 - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + 20_000)
    assert h.consumer.status == "CLOSED"
    assert h.consumer.commits[-1].error == "TIMEOUT"


def test_close_no_response_for_commit(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCloseNoResponseForCommit: close()'s commit that is
    never answered keeps close() waiting for request.timeout.ms, then close() completes."""
    h = static_harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(h.now + AUTO_COMMIT_INTERVAL_MS - 1)  # before the first auto-commit
    closed_at = h.now
    h.call("close")
    assert h.last(OffsetCommitRequest).message.group_instance_id == GROUP_INSTANCE_ID
    h.advance(closed_at + REQUEST_TIMEOUT_MS - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + REQUEST_TIMEOUT_MS)
    assert h.consumer.status == "CLOSED"
    assert h.count(OffsetCommitRequest) == 1


def test_close_no_response_for_leave_group(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCloseNoResponseForLeaveGroup: without auto-commit,
    close() sends LeaveGroup and waits for its answer (AbstractCoordinator.close:
    awaitPendingRequests); none comes, so close() completes when its timer, request.timeout.ms
    here, runs out, and not before."""
    h = harness(strategy)
    join_as_follower(h)
    closed_at = h.now
    h.call("close")
    assert h.last(LeaveGroupRequest).message.members[0].member_id == CONSUMER_ID
    h.advance(closed_at + REQUEST_TIMEOUT_MS - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + REQUEST_TIMEOUT_MS)
    assert h.consumer.status == "CLOSED"
    assert h.count(LeaveGroupRequest) == 1


def test_close_no_wait(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testCloseNoWait: close(Duration.ZERO) of a static member
    with auto-commit sends its final commit but waits for no answer: it is closed at once, the
    commit given up (commitOffsetsSync returned false) and still in flight."""
    h = static_harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(h.now + AUTO_COMMIT_INTERVAL_MS)
    for commit in h.pending(OffsetCommitRequest):
        h.answer_commit(commit)
    h.close(timeout_ms=0)
    assert h.consumer.status == "CLOSED"
    (final,) = h.pending(OffsetCommitRequest)
    assert h.consumer.commits[-1].purpose == "close"
    assert h.consumer.commits[-1].error == "TIMEOUT"
    assert h.count(LeaveGroupRequest) == 0  # a static member
    assert "OffsetCommit" in h.log.named("close_timed_out")[-1]["apis"]
    h.answer_commit(final)  # too late: the consumer is closed
    assert h.consumer.commits[-1].error == "TIMEOUT"


def test_heartbeat_thread_close(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testHeartbeatThreadClose: a member closed while a
    heartbeat is in flight and whose final commit gets no answer closes after request.timeout.ms,
    and its heartbeat thread is gone afterwards: no heartbeat is ever sent again."""
    h = static_harness(strategy, enable_auto_commit=True)
    join_as_follower(h)
    h.advance(HEARTBEAT_INTERVAL_MS + 100)
    for commit in h.pending(OffsetCommitRequest):
        h.answer_commit(commit)
    assert len(h.pending(HeartbeatRequest)) == 1
    closed_at = h.now
    h.call("close")
    h.advance(closed_at + REQUEST_TIMEOUT_MS - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + REQUEST_TIMEOUT_MS)
    assert h.consumer.status == "CLOSED"
    heartbeats = h.count(HeartbeatRequest)
    h.advance(h.now + 10 * HEARTBEAT_INTERVAL_MS)
    assert h.count(HeartbeatRequest) == heartbeats
    assert not any(key.startswith("heartbeat:") for key in h.timers)


# --- unsubscribe ------------------------------------------------------------------------------


def test_unsubscribe_with_valid_generation(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testUnsubscribeWithValidGeneration: Kafka's test hands the
    member an assignment through onJoinComplete while the coordinator holds no generation, and
    unsubscribing then declares the partitions lost, not revoked. Here the member's generation
    is gone after a poll timeout (the application overran max.poll.interval.ms), its assignment
    kept until the next poll(); unsubscribing now loses them."""
    h = harness(strategy, max_poll_interval_ms=20_000, session_timeout_ms=30_000)
    join_as_follower(h)
    h.call("stall", 25_000)
    advance_with_heartbeats(h, h.now + 20_000)
    assert h.log.named("poll_timeout")
    assert h.consumer.generation == NO_GENERATION and h.consumer.last_owned == [T1P]
    h.call("subscribe", [])
    assert h.consumer.callback_history()[1:] == [("lost", ["test1-0"])]


def test_unsubscribe_with_invalid_generation(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testUnsubscribeWithInvalidGeneration: a member whose
    generation was reset (UNKNOWN_MEMBER_ID to a heartbeat while the application is busy) and
    that still owns its partitions loses them, not revokes them, when it unsubscribes."""
    h = harness(strategy)
    join_as_follower(h)
    h.call("stall", 10_000)
    h.advance(HEARTBEAT_INTERVAL_MS)
    answer_heartbeats(h, Errors.UNKNOWN_MEMBER_ID)
    assert h.consumer.generation == NO_GENERATION and h.consumer.last_owned == [T1P]
    h.call("subscribe", [])
    assert h.consumer.callback_history()[1:] == [("lost", ["test1-0"])]
    assert h.count(LeaveGroupRequest) == 0  # not in the group any more


# --- committed offsets (OffsetFetch) ----------------------------------------------------------


def join_without_offsets(h: Harness):
    """Join and receive test1-0; returns the OffsetFetch that goes out for it (unanswered)."""
    h.connect()
    h.join_and_sync([T1P], member_id=CONSUMER_ID, generation_id=1, leader="leader")
    (fetch,) = h.pending(OffsetFetchRequest)
    return fetch


def test_fetch_committed_offsets(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testFetchCommittedOffsets: the committed offset of a newly
    owned partition is fetched from the coordinator (OffsetFetch for the group and exactly that
    partition), and the answer is the offset the member starts from."""
    h = harness(strategy)
    fetch = join_without_offsets(h)
    assert fetch.dst == "broker-1"
    assert fetch.message.group_id == GROUP_ID
    assert [(t.name, list(t.partition_indexes)) for t in fetch.message.topics] == [("test1", [0])]
    h.answer_offset_fetch({str(T1P): 500})
    assert h.consumer.positions_at(h.now) == {T1P: 500}


def test_refresh_offset(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testRefreshOffset: a partition has no position (nothing is
    fetched from it) until its committed offset arrives; then it is fetched from that offset."""
    h = harness(strategy)
    join_without_offsets(h)
    h.advance(h.now + 1_000)
    assert h.consumer.positions_at(h.now) == {}
    h.answer_offset_fetch({str(T1P): 100})
    assert h.consumer.positions_at(h.now) == {T1P: 100}
    h.advance(h.now + 1_000)
    assert h.consumer.positions_at(h.now)[T1P] > 100


def test_refresh_offset_with_no_fetchable_offsets(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testRefreshOffsetWithNoFetchableOffsets: with no committed
    offset (-1) the position does not come from the commit; Kafka leaves the partition
    initializing for auto.offset.reset, whose earliest (Kafka's test, and groupsim's only
    policy) is offset 0."""
    h = harness(strategy)
    join_without_offsets(h)
    h.answer_offset_fetch({})
    assert h.consumer.positions_at(h.now) == {T1P: 0}


def test_refresh_offset_with_pending_transactions(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testRefreshOffsetWithPendingTransactions: an offset that is
    not stable yet (UNSTABLE_OFFSET_COMMIT) is fetched again after the retry backoff (the first
    step of fetchCommittedOffsets' ExponentialBackoff: 100 ms +- 20 %), and the stable answer
    sets the position; until then the partition has none."""
    h = harness(strategy)
    fetch = join_without_offsets(h)
    assert fetch.message.require_stable  # what makes the broker answer UNSTABLE_OFFSET_COMMIT
    answered = h.now
    h.answer_offset_fetch({str(T1P): 90}, errors={str(T1P): Errors.UNSTABLE_OFFSET_COMMIT})
    assert h.consumer.positions_at(h.now) == {}
    assert h.pending(OffsetFetchRequest) == []
    h.advance(answered + RETRY_BACKOFF_MS * 8 // 10 - 1)
    assert h.pending(OffsetFetchRequest) == []
    h.advance(answered + RETRY_BACKOFF_MS * 12 // 10)
    (retry,) = h.pending(OffsetFetchRequest)
    assert [(t.name, list(t.partition_indexes)) for t in retry.message.topics] == [("test1", [0])]
    h.answer_offset_fetch({str(T1P): 100})
    assert h.consumer.positions_at(h.now) == {T1P: 100}


@pytest.mark.parametrize(
    "error",
    [Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.TOPIC_AUTHORIZATION_FAILED],
    ids=["testRefreshOffsetUnknownTopicOrPartition", "testTopicAuthorizationFailedInOffsetFetch"],
)
def test_offset_fetch_partition_errors_are_thrown(strategy: str, error: Errors) -> None:
    """Port of ConsumerCoordinatorTest.testRefreshOffsetUnknownTopicOrPartition and
    testTopicAuthorizationFailedInOffsetFetch: a partition answered UNKNOWN_TOPIC_OR_PARTITION
    (KafkaException: the partition does not exist) or TOPIC_AUTHORIZATION_FAILED
    (TopicAuthorizationException) is thrown from poll(), not retried."""
    h = harness(strategy)
    join_without_offsets(h)
    h.answer_offset_fetch({}, errors={str(T1P): error})
    assert h.consumer.fatal_error == error.name
    assert h.consumer.positions_at(h.now) == {}
    h.advance(h.now + 1_000)
    assert h.count(OffsetFetchRequest) == 1


def test_refresh_offsets_group_not_authorized(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testRefreshOffsetsGroupNotAuthorized: OffsetFetch answered
    GROUP_AUTHORIZATION_FAILED throws GroupAuthorizationException from poll()."""
    h = harness(strategy)
    join_without_offsets(h)
    h.answer_offset_fetch(group_error=Errors.GROUP_AUTHORIZATION_FAILED)
    assert h.consumer.fatal_error == "GROUP_AUTHORIZATION_FAILED"
    h.advance(h.now + 1_000)
    assert h.count(OffsetFetchRequest) == 1


def test_group_read_unauthorized(strategy: str) -> None:
    """Port of ConsumerCoordinatorTest.testGroupReadUnauthorized: a JoinGroup answered
    GROUP_AUTHORIZATION_FAILED throws GroupAuthorizationException from poll()."""
    h = harness(strategy)
    h.connect()
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="memberId", error=Errors.GROUP_AUTHORIZATION_FAILED))
    assert h.consumer.fatal_error == "GROUP_AUTHORIZATION_FAILED"
    assert h.count(JoinGroupRequest) == 1
