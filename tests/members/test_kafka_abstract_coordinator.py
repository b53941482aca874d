"""Parity suite: Kafka's AbstractCoordinatorTest, ported to the simulated consumer.

Each test names the Kafka test it ports (clients/src/test/java/org/apache/kafka/clients/consumer/
internals/AbstractCoordinatorTest.java, apache/kafka trunk 1eb7644) and checks what that test
checks, in groupsim's terms: the settings are the Java test's (rebalance timeout 60 s, session
timeout 10 s, heartbeat interval 3 s, retry backoff 100 ms..1 s, request timeout 40 s), Kafka's
DummyCoordinator becomes a consumer with the range assignor, and a MockClient's prepared responses
become answers given by hand through ``tests.members.harness.Harness``.

Not ported (no counterpart in the simulator):

* testMetrics: client metrics and sensors are not modelled.
* testWakeupFromEnsureCoordinatorReady: KafkaConsumer.wakeup() has no counterpart, and the only
  point of the test is which call may throw WakeupException.
* testUncaughtExceptionInHeartbeatThread: a RuntimeException thrown by the network client inside
  the Java heartbeat thread; the simulated heartbeat thread cannot crash that way.
* testWakeupInOnJoinComplete: an exception thrown from onJoinComplete is retried on the next
  poll() in Kafka; the simulator logs a throwing listener and goes on (docs/members.md, "Where
  the simulator differs").
* testAuthenticationErrorInEnsureCoordinatorReady: SASL/SSL authentication is not modelled.
* testReturnUponRetriableErrorAndExpiredTimer: poll(timeout) handing control back to the caller
  when its timer runs out; the simulated application never passes a poll timeout.

The other wakeup tests are ported for the behaviour behind them (a join or sync answer that
arrives while the application is outside poll() is not lost, and each callback still runs once).
"""

from __future__ import annotations

import attrs
import pytest

from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    SyncGroupRequest,
    SyncGroupResponse,
)
from members.config import ConsumerConfig
from members.consumer_protocol import encode_assignment
from members.state import NO_GENERATION
from tests.members.harness import Harness, tps

GROUP_ID = "dummy-group"
REBALANCE_TIMEOUT_MS = 60_000
SESSION_TIMEOUT_MS = 10_000
HEARTBEAT_INTERVAL_MS = 3_000
RETRY_BACKOFF_MS = 100
RETRY_BACKOFF_MAX_MS = 1_000
REQUEST_TIMEOUT_MS = 40_000
JOIN_GROUP_TIMEOUT_LAPSE_MS = 5_000  # AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE
JAVA_INT_MAX = 2**31 - 1
MEMBER_ID = "memberId"
LEADER_ID = "leaderId"
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "range"
LONG_REASON = (
    "Very l" + "o" * 163 + "ng reason that is 271 characters long to make sure that length limit "
    "logic handles the scenario nicely"
)


def config(**overrides: object) -> ConsumerConfig:
    """The Java test's GroupRebalanceConfig and request timeout, as consumer settings (the
    consumer's rebalance timeout is max.poll.interval.ms)."""
    settings: dict[str, object] = {
        "group_id": GROUP_ID,
        "partition_assignment_strategy": (PROTOCOL_NAME,),
        "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
        "max_poll_interval_ms": REBALANCE_TIMEOUT_MS,
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
        "retry_backoff_ms": RETRY_BACKOFF_MS,
        "retry_backoff_max_ms": RETRY_BACKOFF_MAX_MS,
    }
    settings.update(overrides)
    return ConsumerConfig(**settings)  # type: ignore[arg-type]


def join_group(h: Harness, generation_id: int = 1, partitions=("t-0",)) -> None:
    """Kafka's joinGroup(): find the coordinator, join as a follower, sync (STABLE)."""
    h.connect()
    h.join_and_sync(
        tps(*partitions), member_id=MEMBER_ID, generation_id=generation_id, leader=LEADER_ID
    )
    assert h.consumer.state == "STABLE"


def timed_out(h: Harness, request) -> bool:
    return any(
        e["correlation_id"] == request.correlation_id for e in h.log.named("request_timeout")
    )


def the_join(h: Harness):
    (join,) = h.pending(JoinGroupRequest)
    return join


# --- coordinator discovery ---------------------------------------------------------------------


def test_coordinator_discovery_exponential_backoff() -> None:
    """Port of AbstractCoordinatorTest.testCoordinatorDiscoveryExponentialBackoff: failed
    coordinator discoveries back off exponentially (10, 20, 40, 80 ms, ±20 % jitter, with
    retry.backoff.ms 10 and retry.backoff.max.ms 100), so four failures cost between the sums of
    the lower and upper bounds. Kafka's test fails discovery by making the found coordinator's
    connection unavailable; the simulator has no connection state, so here the FindCoordinator
    answers fail (ensureCoordinatorReady takes the same backoff for both; after a failed answer
    it also awaits a metadata update, answered here at once as Kafka's MockClient does)."""
    h = Harness(config(retry_backoff_ms=10, retry_backoff_max_ms=100))
    h.start()
    h.answer_metadata()
    start = h.now
    for _ in range(4):
        (find,) = h.pending(FindCoordinatorRequest)
        h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
        while not h.pending(FindCoordinatorRequest):
            h.advance(h.now + 1)
            h.answer_metadata()
    h.answer_find_coordinator()
    assert h.consumer.coordinator == "broker-1"
    lower = sum(int(10 * 2**i * 0.8) for i in range(4))
    upper = sum(int(10 * 2**i * 1.2) for i in range(4))
    assert lower <= h.now - start <= upper + 10


def test_lookup_coordinator() -> None:
    """Port of AbstractCoordinatorTest.testLookupCoordinator: while a FindCoordinator is in
    flight, further lookups reuse it instead of sending another; once it has completed, the next
    lookup sends a new request. (The first part of Kafka's test, no broker available because of a
    connection backoff, has no counterpart: the simulator does not model connections.)"""
    h = Harness(config())
    h.start()
    assert h.count(FindCoordinatorRequest) == 1
    h.answer_metadata()  # the join loop runs again and wants the coordinator
    h.call("stall", 0)  # and the application polls again
    h.advance(h.now + 10)
    assert h.count(FindCoordinatorRequest) == 1
    h.answer_find_coordinator()
    assert h.consumer.coordinator == "broker-1"
    h.respond(the_join(h), JoinGroupResponse(Errors.NOT_COORDINATOR))
    assert h.consumer.coordinator is None
    assert h.count(FindCoordinatorRequest) == 2
    assert len(h.pending(FindCoordinatorRequest)) == 1


# --- JoinGroup request timeout -----------------------------------------------------------------


def test_join_group_request_timeout() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestTimeout: a JoinGroup waits for the
    rebalance timeout + 5 s (65 s), not request.timeout.ms (40 s); when that passes it fails as a
    disconnect (the coordinator is marked unknown) and the join is retried."""
    h = Harness(config())
    h.connect()
    join = the_join(h)
    t0 = h.now
    h.advance(t0 + REQUEST_TIMEOUT_MS + 1)
    assert not timed_out(h, join) and h.consumer.coordinator == "broker-1"
    h.advance(t0 + REBALANCE_TIMEOUT_MS + JOIN_GROUP_TIMEOUT_LAPSE_MS + 1)
    assert timed_out(h, join)
    assert h.log.named("coordinator_unknown")[-1]["disconnected"] is True
    h.answer_find_coordinator()
    h.advance(h.now + RETRY_BACKOFF_MS)
    assert h.count(JoinGroupRequest) == 2  # DisconnectException is retriable


def test_join_group_request_timeout_lower_bounded_by_default_request_timeout() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestTimeoutLowerBoundedByDefaultRequest
    Timeout: with a rebalance timeout of 30 s, the JoinGroup still waits request.timeout.ms
    (40 s), not 35 s."""
    rebalance_timeout = REQUEST_TIMEOUT_MS - 10_000
    h = Harness(config(max_poll_interval_ms=rebalance_timeout))
    h.connect()
    join = the_join(h)
    t0 = h.now
    h.advance(t0 + rebalance_timeout + JOIN_GROUP_TIMEOUT_LAPSE_MS + 1)
    assert not timed_out(h, join)
    h.advance(t0 + REQUEST_TIMEOUT_MS + 1)
    assert timed_out(h, join)


def test_join_group_request_max_timeout() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestMaxTimeout: with the largest rebalance
    timeout Kafka accepts (Integer.MAX_VALUE), adding the 5 s lapse would overflow, so
    AbstractCoordinator.sendJoinGroupRequest keeps the rebalance timeout itself: the JoinGroup
    times out after Integer.MAX_VALUE ms, not 5 s later."""
    h = Harness(config(max_poll_interval_ms=JAVA_INT_MAX))
    h.connect()
    join = the_join(h)
    assert h.timers[f"request-{join.correlation_id}"] == h.now + JAVA_INT_MAX


# --- JoinGroup errors ----------------------------------------------------------------------------


def test_join_group_request_with_member_id_required() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestWithMemberIdRequired: MEMBER_ID_REQUIRED
    gives the member its id (generation still -1) and asks for a rejoin; the next JoinGroup
    carries the id and says why."""
    h = Harness(config())
    h.connect()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, error=Errors.MEMBER_ID_REQUIRED))
    assert h.consumer.rejoin_needed
    assert h.consumer.member_id == MEMBER_ID and h.consumer.generation_id == -1
    retry = the_join(h).message
    assert retry.member_id == MEMBER_ID
    assert retry.reason == f"need to re-join with the given member-id: {MEMBER_ID}"
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, error=Errors.UNKNOWN_MEMBER_ID))
    assert the_join(h).message.member_id == ""


@pytest.mark.parametrize(
    "error",
    [Errors.FENCED_INSTANCE_ID, Errors.GROUP_MAX_SIZE_REACHED],
    ids=["testJoinGroupRequestWithFencedInstanceIdException", "testGroupMaxSizeExceptionIsFatal"],
)
def test_join_group_fatal_errors(error: Errors) -> None:
    """Ports of AbstractCoordinatorTest.testJoinGroupRequestWithFencedInstanceIdException and
    testGroupMaxSizeExceptionIsFatal: FENCED_INSTANCE_ID and GROUP_MAX_SIZE_REACHED from JoinGroup
    are not retriable: the error is thrown from poll() and no JoinGroup follows."""
    h = Harness(config())
    h.connect()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, error=error))
    assert h.consumer.failed and h.consumer.fatal_error == error.name
    h.advance(h.now + 60_000)
    assert h.count(JoinGroupRequest) == 1


def test_join_group_request_with_group_instance_id_not_found() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestWithGroupInstanceIdNotFound: an
    UNKNOWN_MEMBER_ID answer leaves the member with no generation and no member id (the id in the
    answer is not taken) and asks for a rejoin, which goes out at once."""
    h = Harness(config())
    h.connect()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, error=Errors.UNKNOWN_MEMBER_ID))
    assert h.consumer.rejoin_needed
    assert h.consumer.generation == NO_GENERATION
    assert h.count(JoinGroupRequest) == 2 and the_join(h).message.member_id == ""


def test_join_group_request_with_rebalance_in_progress() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupRequestWithRebalanceInProgress: a JoinGroup
    answered REBALANCE_IN_PROGRESS is retried, and the whole rebalance still runs onJoinPrepare
    once (one revocation) and onJoinComplete once (one assignment)."""
    h = Harness(config())
    join_group(h, partitions=("t-0", "t-1"))
    before = len(h.listener.calls)
    h.rejoin()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, error=Errors.REBALANCE_IN_PROGRESS))
    assert h.consumer.rejoin_needed
    assert h.count(JoinGroupRequest) == 3 and the_join(h).message.member_id == MEMBER_ID
    h.join_and_sync(tps("t-0", "t-1"), member_id=MEMBER_ID, generation_id=2)
    assert h.listener.calls[before:] == [("revoked", ["t-0", "t-1"]), ("assigned", ["t-0", "t-1"])]


def test_backoff_and_retry_upon_retriable_error() -> None:
    """Port of AbstractCoordinatorTest.testBackoffAndRetryUponRetriableError: a JoinGroup answered
    COORDINATOR_LOAD_IN_PROGRESS is retried after retry.backoff.ms (100 ms), then succeeds."""
    h = Harness(config())
    h.connect()
    t0 = h.now
    h.respond(the_join(h), h.join_response(error=Errors.COORDINATOR_LOAD_IN_PROGRESS))
    while h.count(JoinGroupRequest) == 1:
        h.advance(h.now + 1)
    assert abs(h.now - t0 - RETRY_BACKOFF_MS) <= int(RETRY_BACKOFF_MS * 0.2) + 1
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID)
    assert h.consumer.state == "STABLE"


def test_timeout_and_retry_join_group_if_needed() -> None:
    """Port of AbstractCoordinatorTest.testTimeoutAndRetryJoinGroupIfNeeded: when the application
    leaves poll() while its JoinGroup is outstanding (Kafka: the poll timer expires), the request
    stays in flight; the answer that arrives later completes the join, with no second
    JoinGroup."""
    h = Harness(config())
    h.connect()
    join = the_join(h)
    h.call("stall", REQUEST_TIMEOUT_MS)
    h.advance(h.now + REQUEST_TIMEOUT_MS)
    assert h.pending(JoinGroupRequest) == [join] and not timed_out(h, join)
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, leader=LEADER_ID)
    assert h.consumer.state == "STABLE" and h.count(JoinGroupRequest) == 1


# --- protocol type and name checks -------------------------------------------------------------


@pytest.mark.parametrize(
    ("join_type", "sync_type", "sync_name", "succeeds"),
    [
        (None, None, None, True),
        (PROTOCOL_TYPE, PROTOCOL_TYPE, PROTOCOL_NAME, True),
        ("wrong", None, None, False),
        (PROTOCOL_TYPE, "wrong-type", PROTOCOL_NAME, False),
        (PROTOCOL_TYPE, PROTOCOL_TYPE, "wrong-name", False),
    ],
)
def test_join_group_protocol_type_and_name(join_type, sync_type, sync_name, succeeds) -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupProtocolTypeAndName: a JoinGroup or SyncGroup
    answer may omit the protocol type and name, but a type other than "consumer", or a SyncGroup
    protocol name other than the generation's, fails the join with INCONSISTENT_GROUP_PROTOCOL."""
    h = Harness(config())
    h.connect()
    join = h.join_response(member_id=MEMBER_ID, leader="memberid", generation_id=-1)
    h.respond(the_join(h), attrs.evolve(join, protocol_type=join_type))
    for sync in h.pending(SyncGroupRequest):
        assert sync.message.protocol_type == PROTOCOL_TYPE
        assert sync.message.protocol_name == PROTOCOL_NAME
        answer = SyncGroupResponse(Errors.NONE, sync_type, sync_name, encode_assignment(tps("t-0")))
        h.respond(sync, answer)
    if succeeds:
        assert h.consumer.state == "STABLE" and not h.consumer.failed
    else:
        assert h.consumer.fatal_error == "INCONSISTENT_GROUP_PROTOCOL"


def test_no_generation_will_not_trigger_protocol_name_check() -> None:
    """Port of AbstractCoordinatorTest.testNoGenerationWillNotTriggerProtocolNameCheck: when the
    generation is reset while the SyncGroup is outstanding (here by the heartbeat thread leaving
    the group on a poll timeout), the SyncGroup answer is not checked for its protocol name; the
    rebalance fails as ILLEGAL_GENERATION, is retried, and nothing is thrown."""
    h = Harness(config(max_poll_interval_ms=5_000))  # a poll timeout before the session timeout
    h.connect()
    h.respond(
        the_join(h), h.join_response(member_id=MEMBER_ID, leader="memberid", generation_id=-1)
    )
    (sync,) = h.pending(SyncGroupRequest)
    h.call("stall", 10_000)
    h.advance(h.now + 5_000)
    assert h.count(LeaveGroupRequest) == 1 and h.consumer.generation == NO_GENERATION
    wrong = SyncGroupResponse(Errors.NONE, PROTOCOL_TYPE, "wrong-name", encode_assignment([]))
    h.respond(sync, wrong)
    assert not h.consumer.failed
    h.advance(h.now + 5_000)  # back in poll(): the retry
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=1)
    assert h.consumer.state == "STABLE" and not h.consumer.failed


def test_sync_group_request_with_fenced_instance_id_exception() -> None:
    """Port of AbstractCoordinatorTest.testSyncGroupRequestWithFencedInstanceIdException: a
    SyncGroup answered FENCED_INSTANCE_ID is fatal."""
    h = Harness(config())
    h.connect()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, leader="", generation_id=-1))
    (sync,) = h.pending(SyncGroupRequest)
    h.respond(sync, SyncGroupResponse(Errors.FENCED_INSTANCE_ID))
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"
    h.advance(h.now + 60_000)
    assert h.count(JoinGroupRequest) == 1


# --- keeping the member id, rejoin reasons -------------------------------------------------------


def test_retain_member_id_after_join_group_disconnect() -> None:
    """Port of AbstractCoordinatorTest.testRetainMemberIdAfterJoinGroupDisconnect: a JoinGroup
    lost to a disconnect is retried, after rediscovering the coordinator, with the same member
    id."""
    h = Harness(config())
    join_group(h, generation_id=5)
    h.rejoin("Manual test trigger")
    assert h.consumer.rejoin_pending
    h.disconnect(the_join(h))
    assert h.consumer.coordinator is None
    h.answer_find_coordinator()
    h.advance(h.now + RETRY_BACKOFF_MS)
    assert the_join(h).message.member_id == MEMBER_ID
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=10)
    assert h.consumer.generation_id == 10 and h.consumer.member_id == MEMBER_ID
    assert not h.consumer.rejoin_pending


def test_retain_member_id_after_sync_group_disconnect() -> None:
    """Port of AbstractCoordinatorTest.testRetainMemberIdAfterSyncGroupDisconnect: a SyncGroup
    lost to a disconnect sends the member back to JoinGroup (not SyncGroup), with the same member
    id."""
    h = Harness(config())
    join_group(h, generation_id=5)
    h.rejoin("Manual test trigger")
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, leader=LEADER_ID, generation_id=10))
    (sync,) = h.pending(SyncGroupRequest)
    assert sync.message.generation_id == 10 and sync.message.member_id == MEMBER_ID
    h.disconnect(sync)
    h.answer_find_coordinator()
    h.advance(h.now + RETRY_BACKOFF_MS)
    assert not h.pending(SyncGroupRequest)
    assert the_join(h).message.member_id == MEMBER_ID
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=10)
    assert h.consumer.generation_id == 10 and h.consumer.member_id == MEMBER_ID
    assert not h.consumer.rejoin_pending


def test_rejoin_reason() -> None:
    """Port of AbstractCoordinatorTest.testRejoinReason: each JoinGroup carries the reason of the
    rejoin: none on the first join (Kafka sends "", the simulator None; the coordinator reads both
    as "not provided"), the requested reason afterwards, "rebalance failed due to <exception class
    name>" after a failed attempt, and at most 255 characters (JoinGroupRequest
    .maybeTruncateReason). Kafka's test fails the attempt with GROUP_MAX_SIZE_REACHED and catches
    the exception; a simulated application stops at a fatal error, so a retriable error stands in
    for it."""
    h = Harness(config())
    h.connect()
    assert not the_join(h).message.reason
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=5)

    h.rejoin("Manual test trigger")
    assert the_join(h).message.reason == "Manual test trigger"
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=5)

    h.rejoin("Manual test trigger 2")
    h.respond(the_join(h), h.join_response(error=Errors.COORDINATOR_LOAD_IN_PROGRESS))
    h.advance(h.now + RETRY_BACKOFF_MS)
    expected = "rebalance failed due to CoordinatorLoadInProgressException"
    assert the_join(h).message.reason == expected
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=5)

    assert len(LONG_REASON) == 271
    h.rejoin(LONG_REASON)
    assert the_join(h).message.reason == LONG_REASON[:255]
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=5)
    assert h.consumer.state == "STABLE"


# --- answers for an older generation -----------------------------------------------------------


def test_join_group_unknown_member_response_with_old_generation() -> None:
    """Port of AbstractCoordinatorTest.testJoinGroupUnknownMemberResponseWithOldGeneration: an
    UNKNOWN_MEMBER_ID answer to a JoinGroup sent under an older generation does not reset the
    member's current generation; the retry uses the current member id."""
    h = Harness(config())
    join_group(h)
    h.rejoin()
    join = the_join(h)
    new = attrs.evolve(h.consumer.generation, member_id=MEMBER_ID + "-new")
    h.set_generation(new)
    h.respond(join, h.join_response(member_id=MEMBER_ID, error=Errors.UNKNOWN_MEMBER_ID))
    assert h.consumer.generation == new
    assert the_join(h).message.member_id == MEMBER_ID + "-new"


@pytest.mark.parametrize(
    "error",
    [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION],
    ids=[
        "testSyncGroupUnknownMemberResponseWithOldGeneration",
        "testSyncGroupIllegalGenerationResponseWithOldGeneration",
    ],
)
def test_sync_group_response_with_old_generation(error: Errors) -> None:
    """Ports of AbstractCoordinatorTest.testSyncGroupUnknownMemberResponseWithOldGeneration and
    testSyncGroupIllegalGenerationResponseWithOldGeneration: an UNKNOWN_MEMBER_ID or
    ILLEGAL_GENERATION answer to a SyncGroup sent under an older generation fails the rebalance
    but does not reset the current generation."""
    h = Harness(config())
    join_group(h)
    h.rejoin()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, leader=LEADER_ID))
    (sync,) = h.pending(SyncGroupRequest)
    new = attrs.evolve(h.consumer.generation, member_id=MEMBER_ID + "-new")
    h.set_generation(new)
    resets = len(h.log.named("generation_reset"))
    h.respond(sync, SyncGroupResponse(error))
    assert h.consumer.generation == new
    assert len(h.log.named("generation_reset")) == resets
    assert the_join(h).message.member_id == MEMBER_ID + "-new"  # the rebalance starts over


# --- heartbeats --------------------------------------------------------------------------------


def test_heartbeat_sent_when_completing_rebalance() -> None:
    """Port of AbstractCoordinatorTest.testHeartbeatSentWhenCompletingRebalance: the member
    heartbeats while its SyncGroup is outstanding, and a REBALANCE_IN_PROGRESS answer then leaves
    the generation alone (it is expected during a rebalance); the SyncGroup still completes it."""
    h = Harness(config())
    h.connect()
    h.respond(the_join(h), h.join_response(member_id=MEMBER_ID, leader=LEADER_ID))
    assert h.consumer.state == "COMPLETING_REBALANCE"
    generation = h.consumer.generation
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    (hb,) = h.pending(HeartbeatRequest)
    assert hb.message.generation_id == 1 and hb.message.member_id == MEMBER_ID
    h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    assert h.consumer.generation == generation
    assert h.consumer.state == "COMPLETING_REBALANCE"
    (sync,) = h.pending(SyncGroupRequest)
    h.respond(sync, h.sync_response(tps("t-0")))
    assert h.consumer.state == "STABLE" and h.count(JoinGroupRequest) == 1


@pytest.mark.parametrize(
    ("error", "change"),
    [
        (Errors.ILLEGAL_GENERATION, "generation"),
        (Errors.UNKNOWN_MEMBER_ID, "member"),
        (Errors.FENCED_INSTANCE_ID, "member"),
    ],
    ids=[
        "testHeartbeatIllegalGenerationResponseWithOldGeneration",
        "testHeartbeatUnknownMemberResponseWithOldGeneration",
        "testHeartbeatInstanceFencedResponseWithOldGeneration",
    ],
)
def test_heartbeat_response_with_old_generation(error: Errors, change: str) -> None:
    """Ports of AbstractCoordinatorTest.testHeartbeatIllegalGenerationResponseWithOldGeneration,
    testHeartbeatUnknownMemberResponseWithOldGeneration and
    testHeartbeatInstanceFencedResponseWithOldGeneration: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or
    FENCED_INSTANCE_ID answering a heartbeat of an older generation is ignored: no reset, no
    rejoin, no fatal error."""
    h = Harness(config())
    join_group(h)
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    (hb,) = h.pending(HeartbeatRequest)
    current = h.consumer.generation
    if change == "generation":
        new = attrs.evolve(current, generation_id=current.generation_id + 1)
    else:
        new = attrs.evolve(current, member_id=current.member_id + "-new")
    h.set_generation(new)
    h.respond(hb, HeartbeatResponse(error))
    h.advance(h.now + 1)
    assert h.consumer.generation == new
    assert h.consumer.state == "STABLE" and not h.consumer.failed
    assert h.count(JoinGroupRequest) == 1


def test_heartbeat_rebalance_in_progress_response_during_rebalancing() -> None:
    """Port of AbstractCoordinatorTest.testHeartbeatRebalanceInProgressResponseDuringRebalancing:
    REBALANCE_IN_PROGRESS answering a heartbeat makes a STABLE member rejoin, keeping its
    generation until the JoinGroup answers; the rejoin completes in the same generation."""
    h = Harness(config())
    join_group(h)
    generation = h.consumer.generation
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    (hb,) = h.pending(HeartbeatRequest)
    h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    h.rejoin("test")
    join = the_join(h)
    assert join.message.member_id == MEMBER_ID
    assert h.consumer.generation == generation
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, generation_id=generation.generation_id)
    assert h.consumer.generation == generation and h.consumer.state == "STABLE"


def test_heartbeat_request_with_fenced_instance_id_exception() -> None:
    """Port of AbstractCoordinatorTest.testHeartbeatRequestWithFencedInstanceIdException: a
    heartbeat answered FENCED_INSTANCE_ID (for the current generation) fails the heartbeat
    thread, and the next poll() throws it."""
    h = Harness(config())
    h.connect()
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, leader="", generation_id=-1)
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    (hb,) = h.pending(HeartbeatRequest)
    h.respond(hb, HeartbeatResponse(Errors.FENCED_INSTANCE_ID))
    h.advance(h.now + 1000)
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def test_poll_heartbeat_awakes_heartbeat_thread() -> None:
    """Port of AbstractCoordinatorTest.testPollHeartbeatAwakesHeartbeatThread: the heartbeat goes
    out when heartbeat.interval.ms has passed even with a retry.backoff.ms (10 s) far longer than
    the interval (Kafka: poll() wakes the heartbeat thread from its backoff wait)."""
    h = Harness(config(retry_backoff_ms=10_000, retry_backoff_max_ms=10_000))
    h.connect()
    joined_at = h.now
    h.join_and_sync(tps("t-0"), member_id=MEMBER_ID, leader=LEADER_ID)
    h.advance(joined_at + HEARTBEAT_INTERVAL_MS - 1)
    assert h.count(HeartbeatRequest) == 0
    h.advance(joined_at + HEARTBEAT_INTERVAL_MS)
    assert h.count(HeartbeatRequest) == 1


# --- LeaveGroup ----------------------------------------------------------------------------------


@pytest.mark.parametrize("instance_id", [None, "groupInstanceId"])
def test_leave_group_sent_with_group_instance_id_unset(instance_id: str | None) -> None:
    """Port of AbstractCoordinatorTest.testLeaveGroupSentWithGroupInstanceIdUnSet: close() sends
    LeaveGroup only for a dynamic member; a static member (group.instance.id set) sends none."""
    h = Harness(config(group_instance_id=instance_id, max_poll_interval_ms=JAVA_INT_MAX))
    join_group(h)
    h.call("close")
    if instance_id is None:
        (leave,) = h.pending(LeaveGroupRequest)
        assert [m.member_id for m in leave.message.members] == [MEMBER_ID]
    else:
        assert h.count(LeaveGroupRequest) == 0


def leave(h: Harness, reason: str = "test maybe leave group"):
    """Kafka's setupLeaveGroup: join, then maybeLeaveGroup(reason); returns the request."""
    join_group(h)
    h.leave_group(reason)
    (request,) = h.pending(LeaveGroupRequest)
    assert [m.member_id for m in request.message.members] == [MEMBER_ID]
    return request


def leave_answer(*errors: Errors) -> LeaveGroupResponse:
    return LeaveGroupResponse(
        Errors.NONE, tuple(LeaveGroupResponseMember(MEMBER_ID, None, e) for e in errors)
    )


@pytest.mark.parametrize(
    ("members", "outcome"),
    [
        ((Errors.NONE,), None),
        ((Errors.NONE, Errors.NONE), "ILLEGAL_STATE"),
        ((), None),
        ((Errors.UNKNOWN_MEMBER_ID,), "UNKNOWN_MEMBER_ID"),
    ],
    ids=[
        "testHandleNormalLeaveGroupResponse",
        "testHandleMultipleMembersLeaveGroupResponse",
        "testHandleLeaveGroupResponseWithEmptyMemberResponse",
        "testHandleLeaveGroupResponseWithException",
    ],
)
def test_handle_leave_group_response(members: tuple[Errors, ...], outcome: str | None) -> None:
    """Ports of AbstractCoordinatorTest.testHandleNormalLeaveGroupResponse,
    testHandleMultipleMembersLeaveGroupResponse, testHandleLeaveGroupResponseWithEmptyMemberResponse
    and testHandleLeaveGroupResponseWithException: LeaveGroupResponseHandler succeeds on an answer
    with no error and at most one member; an answer listing more than one member fails
    (IllegalStateException), and so does a member-level error (here UNKNOWN_MEMBER_ID), which is
    the response's error although the top-level code is NONE."""
    h = Harness(config(max_poll_interval_ms=JAVA_INT_MAX))
    request = leave(h)
    h.respond(request, leave_answer(*members))
    assert h.log.named("response_received")[-1]["api"] == "LeaveGroup"
    failures = h.log.named("leave_group_failed")
    assert [e["error"] for e in failures] == ([] if outcome is None else [outcome])
    assert all(e["member_id"] == MEMBER_ID and e["generation_id"] == 1 for e in failures)
    assert h.consumer.state == "UNJOINED" and not h.consumer.failed


def test_handle_normal_leave_group_response_and_truncated_leave_reason() -> None:
    """Port of AbstractCoordinatorTest.testHandleNormalLeaveGroupResponseAndTruncatedLeaveReason:
    the LeaveGroup reason is cut to 255 characters (JoinGroupRequest.maybeTruncateReason), and a
    normal answer succeeds."""
    h = Harness(config(max_poll_interval_ms=JAVA_INT_MAX))
    request = leave(h, LONG_REASON)
    assert request.message.members[0].reason == LONG_REASON[:255]
    h.respond(request, leave_answer(Errors.NONE))
    assert not h.log.named("leave_group_failed")


# --- the application outside poll() (Kafka's wakeup tests) --------------------------------------


@pytest.mark.parametrize(
    ("leave_poll", "answers_while_out"),
    [
        ("join_sent", False),
        ("join_sent", True),
        ("join_received", False),
        ("join_received", True),
    ],
    ids=[
        "testWakeupAfterJoinGroupSent",
        "testWakeupAfterJoinGroupSentExternalCompletion",
        "testWakeupAfterJoinGroupReceived",
        "testWakeupAfterJoinGroupReceivedExternalCompletion+SyncGroup",
    ],
)
def test_join_completes_once_when_the_application_leaves_poll(
    leave_poll: str, answers_while_out: bool
) -> None:
    """Ports, for the behaviour behind them, of AbstractCoordinatorTest's
    testWakeupAfterJoinGroupSent, testWakeupAfterJoinGroupSentExternalCompletion,
    testWakeupAfterJoinGroupReceived, testWakeupAfterJoinGroupReceivedExternalCompletion,
    testWakeupAfterSyncGroupSentExternalCompletion, testWakeupAfterSyncGroupReceived and
    testWakeupAfterSyncGroupReceivedExternalCompletion. Kafka's wakeup throws the application out
    of poll() at some point of a rebalance; here the application leaves poll() (a stall) after
    the JoinGroup is sent or after it is answered, and the remaining answers arrive while it is
    out or after it is back. (The SyncGroup goes out as soon as the JoinGroup is answered, so the
    three SyncGroup variants are the last case.) In every case the rebalance completes without a
    second JoinGroup or SyncGroup, onJoinPrepare runs once, onJoinComplete runs once and only
    when the application is back in poll(), and heartbeats follow."""
    h = Harness(config())
    join_group(h, partitions=("t-0", "t-1"))
    before = len(h.listener.calls)
    h.rejoin()
    out_for = 1_000
    if leave_poll == "join_received":
        h.respond(
            the_join(h), h.join_response(member_id=MEMBER_ID, leader=LEADER_ID, generation_id=2)
        )
    h.call("stall", out_for)
    back_at = h.now + out_for
    if not answers_while_out:
        h.advance(back_at)
    if leave_poll == "join_sent":
        h.respond(
            the_join(h), h.join_response(member_id=MEMBER_ID, leader=LEADER_ID, generation_id=2)
        )
    (sync,) = h.pending(SyncGroupRequest)
    h.respond(sync, h.sync_response(tps("t-0", "t-1")))
    if answers_while_out:
        assert h.listener.calls[before:] == [("revoked", ["t-0", "t-1"])]  # not assigned yet
        h.advance(back_at)
    assert h.listener.calls[before:] == [("revoked", ["t-0", "t-1"]), ("assigned", ["t-0", "t-1"])]
    assert h.consumer.state == "STABLE" and h.consumer.generation_id == 2
    assert h.count(JoinGroupRequest) == 2 and h.count(SyncGroupRequest) == 2
    heartbeats = h.count(HeartbeatRequest)
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    assert h.count(HeartbeatRequest) > heartbeats
