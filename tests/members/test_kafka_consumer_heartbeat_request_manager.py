"""Parity suite: Kafka's ``ConsumerHeartbeatRequestManagerTest`` (clients, at 1eb7644) on the
simulated KIP-848 consumer's heartbeats (``members.consumer_membership``: HeartbeatRequestState,
HeartbeatState, the error table), driven through the ``Consumer`` facade. Each test names its
original. As in Kafka's test, the heartbeat backoff is built without jitter (the production
manager passes max.poll.interval.ms as the jitter: see ``HeartbeatRequestState``).

Left out, and why: testHeartBeatRequestStateToStringBase and testisExpiredByUsedForLogging (log
text), testPollOnCloseGeneratesRequestIfNeeded (close() is tested in the membership suite's
testLeaveGroupEpoch port), testPollTimerExpirationShouldNotMarkMemberStaleIfMemberAlreadyLeaving
(not ported for lack of time).
"""

from __future__ import annotations

import pytest

from coordinator.errors import Errors
from coordinator.protocol import ConsumerGroupHeartbeatRequest, FindCoordinatorRequest
from members.config import ConsumerConfig
from members.consumer_membership import HEARTBEAT_ERRORS, HeartbeatRequestState, Reaction
from members.state import ConsumerStatus
from tests.members.kip848_harness import HEARTBEAT_INTERVAL_MS, MEMBER_ID, Kip848Harness, tid

RETRY_BACKOFF_MS = 100


def no_jitter(h: Kip848Harness) -> Kip848Harness:
    h.manager.request_state.backoff.jitter = 0.0
    return h


def joined(assignment=None) -> Kip848Harness:
    """A STABLE member whose last heartbeat was answered (nothing in flight)."""
    h = no_jitter(Kip848Harness())
    h.join({"t": [0]} if assignment is None else assignment)
    h.answer_offset_fetch()
    h.answer_heartbeat(epoch=1)
    assert h.mstate == "STABLE" and not h.pending(ConsumerGroupHeartbeatRequest)
    return h


def heartbeat_times(h: Kip848Harness) -> list[int]:
    return [e["t_ms"] for e in h.log.named("request_sent") if e["api"] == "ConsumerGroupHeartbeat"]


def test_heartbeat_on_startup() -> None:
    """testHeartbeatOnStartup: no heartbeat before the coordinator is known; the joining one at
    once after."""
    h = Kip848Harness()
    h.start()
    assert not h.heartbeats()
    h.answer_metadata()
    h.answer_find_coordinator()
    assert len(h.heartbeats()) == 1


def test_first_heartbeat_includes_required_info_to_join_group_and_get_assignments() -> None:
    """testFirstHeartbeatIncludesRequiredInfoToJoinGroupAndGetAssignments: epoch 0, no member id,
    the rebalance timeout, the subscription, the server assignor, the (empty) owned partitions."""
    h = Kip848Harness(
        ConsumerConfig(
            group_id="g",
            group_protocol="consumer",
            group_instance_id="i-1",
            group_remote_assignor="range",
            max_poll_interval_ms=10_000,
        )
    )
    h.connect()
    hb = h.last_heartbeat()
    assert (hb.group_id, hb.member_id, hb.member_epoch, hb.instance_id) == ("g", "", 0, "i-1")
    assert hb.rebalance_timeout_ms == 10_000
    assert hb.subscribed_topic_names == ("t",)
    assert hb.server_assignor == "range"
    assert hb.topic_partitions == ()


def test_successful_heartbeat_timing() -> None:
    """testSuccessfulHeartbeatTiming / testTimerNotDue: the next heartbeat goes out on the
    interval the broker sent, not before."""
    h = joined()
    start = h.now
    h.advance(start + HEARTBEAT_INTERVAL_MS - 1)
    assert not h.pending(ConsumerGroupHeartbeatRequest)
    h.advance(start + HEARTBEAT_INTERVAL_MS)
    assert heartbeat_times(h)[-1] == start + HEARTBEAT_INTERVAL_MS


def test_heartbeat_interval_comes_from_the_broker() -> None:
    """updateHeartbeatIntervalMs: a new interval in an answer restarts the timer with it."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    h.answer_heartbeat(epoch=1, interval=5000)
    answered = h.now
    h.advance(answered + 4999)
    assert not h.pending(ConsumerGroupHeartbeatRequest)
    h.advance(answered + 5000)
    assert heartbeat_times(h)[-1] == answered + 5000


def test_heartbeat_not_sent_if_another_one_in_flight() -> None:
    """testHeartbeatNotSentIfAnotherOneInFlight: one heartbeat in flight at a time."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    sent = len(h.heartbeats())
    h.advance(h.now + 5 * HEARTBEAT_INTERVAL_MS)
    assert len(h.heartbeats()) == sent


def test_heartbeat_outside_interval_to_acknowledge() -> None:
    """testHeartbeatOutsideInterval: a member with something to acknowledge heartbeats at once
    (shouldHeartbeatNow), not on the interval."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    h.answer_heartbeat(epoch=2, assignment={"t": [0, 1]})
    assert heartbeat_times(h)[-1] == h.now
    ack = h.last_heartbeat()
    assert [(tp.topic_id, tp.partitions) for tp in ack.topic_partitions or ()] == [
        (tid("t"), (0, 1))
    ]


def test_skipping_heartbeat_when_not_in_group() -> None:
    """testSkippingHeartbeat: a FATAL (or STALE, FENCED, UNSUBSCRIBED) member sends none."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    h.answer_heartbeat(error=Errors.GROUP_AUTHORIZATION_FAILED)
    sent = len(h.heartbeats())
    h.advance(h.now + 10 * HEARTBEAT_INTERVAL_MS)
    assert len(h.heartbeats()) == sent


@pytest.mark.parametrize("how", ["timeout", "disconnect"])
def test_network_timeout_and_disconnect(how) -> None:
    """testNetworkTimeout / testDisconnect: a failed heartbeat marks the coordinator unknown,
    backs off and goes out again once the coordinator is found."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    hb = h.pending_heartbeat()
    if how == "disconnect":
        h.disconnect(hb)
    else:
        h.advance(h.now + h.config.request_timeout_ms)
    assert h.consumer.coordinator is None
    assert h.pending(FindCoordinatorRequest)
    sent = len(h.heartbeats())
    h.answer_find_coordinator()
    h.advance(h.now + RETRY_BACKOFF_MS)
    assert len(h.heartbeats()) == sent + 1


def test_no_coordinator() -> None:
    """testNoCoordinator: nothing goes out while the coordinator is unknown."""
    h = Kip848Harness()
    h.start()
    h.answer_metadata()
    h.advance(h.now + 10_000)
    assert not h.heartbeats()


@pytest.mark.parametrize(
    ("error", "fatal"),
    [
        (Errors.NONE, False),
        (Errors.COORDINATOR_NOT_AVAILABLE, False),
        (Errors.COORDINATOR_LOAD_IN_PROGRESS, False),
        (Errors.NOT_COORDINATOR, False),
        (Errors.GROUP_AUTHORIZATION_FAILED, True),
        (Errors.INVALID_REQUEST, True),
        (Errors.UNKNOWN_MEMBER_ID, False),
        (Errors.FENCED_MEMBER_EPOCH, False),
        (Errors.UNSUPPORTED_ASSIGNOR, True),
        (Errors.UNSUPPORTED_VERSION, True),
        (Errors.UNRELEASED_INSTANCE_ID, True),
        (Errors.FENCED_INSTANCE_ID, True),
        (Errors.GROUP_MAX_SIZE_REACHED, True),
    ],
)
def test_heartbeat_response_on_error_handling(error, fatal) -> None:
    """testHeartbeatResponseOnErrorHandling (errorProvider): the next heartbeat's timing per
    error: the interval on success, retry.backoff.ms while loading, at once for a new
    coordinator or a fenced member, none after a fatal error."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    answered = h.now
    assert (HEARTBEAT_ERRORS.get(error) is Reaction.FATAL) == fatal or error == Errors.NONE
    h.answer_heartbeat(error=error) if error != Errors.NONE else h.answer_heartbeat(epoch=1)
    if fatal:
        assert h.mstate == "FATAL" and h.consumer.status is ConsumerStatus.FAILED
        return
    if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        assert h.consumer.coordinator is None
        h.answer_find_coordinator()
        assert heartbeat_times(h)[-1] == answered  # assertNextHeartbeatTiming(0)
        return
    if error in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_MEMBER_EPOCH):
        assert heartbeat_times(h)[-1] == answered and h.last_heartbeat().member_epoch == 0
        return
    expected = HEARTBEAT_INTERVAL_MS if error == Errors.NONE else RETRY_BACKOFF_MS
    sent = len(h.heartbeats())
    h.advance(answered + expected - 1)
    assert len(h.heartbeats()) == sent
    h.advance(answered + expected)
    assert heartbeat_times(h)[-1] == answered + expected


def test_failure_on_fatal_exception_message() -> None:
    """testFailureOnFatalException / UNSUPPORTED_VERSION's message: the error reaches the
    application as the consumer's fatal error, with Kafka's text."""
    h = Kip848Harness()
    h.connect()
    h.answer_heartbeat(error=Errors.UNSUPPORTED_VERSION)
    (fatal,) = h.log.named("consumer_fatal")
    assert fatal["error"] == "UNSUPPORTED_VERSION"
    assert "Set group.protocol=classic" in fatal["reason"]


def test_validate_consumer_group_heartbeat_request() -> None:
    """testValidateConsumerGroupHeartbeatRequest / testHeartbeatState: after the join, a
    heartbeat carries only what changed (rebalance timeout -1, no topics, no owned partitions);
    a failed heartbeat (SentFields.reset) sends everything again."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    hb = h.last_heartbeat()
    assert (hb.member_id, hb.member_epoch) == (MEMBER_ID, 1)
    assert hb.rebalance_timeout_ms == -1
    assert hb.subscribed_topic_names is None and hb.topic_partitions is None
    h.answer_heartbeat(error=Errors.COORDINATOR_LOAD_IN_PROGRESS)
    h.advance(h.now + RETRY_BACKOFF_MS)
    again = h.last_heartbeat()
    assert again.rebalance_timeout_ms == h.config.max_poll_interval_ms
    assert again.subscribed_topic_names == ("t",)
    assert [(tp.topic_id, tp.partitions) for tp in again.topic_partitions or ()] == [
        (tid("t"), (0,))
    ]


def test_validate_heartbeat_request_assignment_sent_when_local_epoch_changes() -> None:
    """testValidateConsumerGroupHeartbeatRequestAssignmentSentWhenLocalEpochChanges: an
    assignment that comes back after a different one is acknowledged again (its local epoch
    moved), though it equals one sent before."""
    h = joined({"t": [0]})
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    h.answer_heartbeat(epoch=2, assignment={"t": [0, 1]})
    h.answer_heartbeat(epoch=2)
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    h.answer_heartbeat(epoch=3, assignment={"t": [0]})
    ack = h.last_heartbeat()
    assert [(tp.topic_id, tp.partitions) for tp in ack.topic_partitions or ()] == [(tid("t"), (0,))]


def test_poll_timer_expiration() -> None:
    """testPollTimerExpiration: the poll timer expires -> a leave heartbeat (epoch -1) at once,
    the member goes STALE (its answer is ignored), and rejoins when poll() is called again."""
    h = joined()
    h.call("stall", 301_000)
    while h.now < 300_000:
        h.advance(h.now + HEARTBEAT_INTERVAL_MS)
        if h.pending(ConsumerGroupHeartbeatRequest):
            h.answer_heartbeat(epoch=1)
    assert h.log.named("poll_timeout")
    assert h.last_heartbeat().member_epoch == -1
    # the loop answered the leave heartbeat (with epoch 1): logResponse, ignored
    assert not h.pending(ConsumerGroupHeartbeatRequest)
    assert h.mstate == "STALE" and h.manager.member_epoch == -1
    h.advance(302_000)
    assert h.mstate == "JOINING" and h.last_heartbeat().member_epoch == 0


def test_fenced_member_stop_heartbeat_until_it_releases_assignment_to_rejoin() -> None:
    """testFencedMemberStopHeartbeatUntilItReleasesAssignmentToRejoin: a fenced member whose
    application is busy sends nothing until its poll() runs onPartitionsLost; then it rejoins."""
    h = joined()
    h.call("stall", 5_000)
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    sent = len(h.heartbeats())
    h.answer_heartbeat(error=Errors.FENCED_MEMBER_EPOCH)
    assert h.mstate == "FENCED"
    h.advance(h.now + 3_000)
    assert len(h.heartbeats()) == sent
    h.advance(h.now + 2_000)
    assert h.listener.calls[-1] == ("lost", ["t-0"])
    assert h.mstate == "JOINING" and len(h.heartbeats()) == sent + 1


def test_heartbeat_request_state_backoff_without_jitter() -> None:
    """HeartbeatRequestState over RequestState: the backoff grows 100, 200, 400, ... up to
    retry.backoff.max.ms after each failure, and a success resets it."""
    h = Kip848Harness()
    rs: HeartbeatRequestState = no_jitter(h).manager.request_state
    waits = []
    for _ in range(5):
        rs.on_failed_attempt(0)
        waits.append(rs.remaining_backoff_ms(0))
    assert waits == [100, 200, 400, 800, 1000]
    rs.on_successful_attempt(0)
    assert rs.remaining_backoff_ms(0) == 100 and rs.num_attempts == 0


def test_consumer_acks_reconciled_assignment_after_ack_lost() -> None:
    """testConsumerAcksReconciledAssignmentAfterAckLost: the acknowledging heartbeat times out;
    SentFields are reset, so the next heartbeat carries the subscription and the owned
    partitions again (and acknowledges them)."""
    h = no_jitter(Kip848Harness())
    h.connect()
    h.answer_heartbeat(epoch=1, assignment={"t": [0]})
    ack = h.pending_heartbeat()
    assert ack.message.topic_partitions
    h.advance(h.now + h.config.request_timeout_ms)  # the ack times out
    h.answer_find_coordinator()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    again = h.last_heartbeat()
    assert again.subscribed_topic_names == ("t",)
    assert [(tp.topic_id, tp.partitions) for tp in again.topic_partitions or ()] == [
        (tid("t"), (0,))
    ]


def test_sending_leave_group_heartbeat_when_previous_one_in_flight() -> None:
    """testSendingLeaveGroupHeartbeatWhenPreviousOneInFlight: the leave heartbeat goes out even
    with a heartbeat in flight; nothing follows it (UNSUBSCRIBED skips heartbeats)."""
    h = joined()
    h.advance(h.now + HEARTBEAT_INTERVAL_MS)
    assert len(h.pending(ConsumerGroupHeartbeatRequest)) == 1
    h.call("subscribe", [])  # unsubscribe(): leave
    in_flight = h.pending(ConsumerGroupHeartbeatRequest)
    assert len(in_flight) == 2 and in_flight[-1].message.member_epoch == -1
    sent = len(h.heartbeats())
    h.advance(h.now + 10 * HEARTBEAT_INTERVAL_MS)
    assert len(h.heartbeats()) == sent
