"""Every error AbstractCoordinator's Join/Sync/Heartbeat response handlers handle, as Kafka does."""

from __future__ import annotations

import pytest

from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    MetadataRequest,
    MetadataResponse,
    MetadataResponseTopic,
    SyncGroupRequest,
)
from members.config import ConsumerConfig
from tests.members.harness import Harness, tps


def stable(h: Harness, partitions=("t-0",), member_id: str = "m1", generation_id: int = 3) -> int:
    """Join and sync; returns the time the member became STABLE (heartbeats count from there)."""
    h.connect()
    h.join_and_sync(tps(*partitions), member_id=member_id, generation_id=generation_id)
    assert h.consumer.state == "STABLE"
    joined = h.now
    h.advance(h.now + 100)  # the next poll fetches committed offsets of the new partitions
    h.answer_offset_fetch()
    return joined


# --- JoinGroup ----------------------------------------------------------------------------------


def test_join_unknown_member_id_resets_member_id_and_retries_at_once() -> None:
    h = Harness()
    stable(h)
    h.rejoin()
    h.advance(h.now + 100)
    join = h.last(JoinGroupRequest)
    assert join.message.member_id == "m1"
    h.respond(join, h.join_response(member_id="m1", error=Errors.UNKNOWN_MEMBER_ID))
    retry = h.last(JoinGroupRequest)
    assert retry.correlation_id != join.correlation_id
    assert retry.message.member_id == ""
    assert h.consumer.generation_id == -1


def test_join_rebalance_in_progress_retries_at_once_with_same_member_id() -> None:
    h = Harness()
    h.connect()
    h.respond(
        h.last(JoinGroupRequest), h.join_response(member_id="m9", error=Errors.MEMBER_ID_REQUIRED)
    )
    join = h.last(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="m9", error=Errors.REBALANCE_IN_PROGRESS))
    assert h.count(JoinGroupRequest) == 3
    assert h.last(JoinGroupRequest).message.member_id == "m9"


def test_join_load_in_progress_retries_after_backoff_at_same_coordinator() -> None:
    h = Harness()
    h.connect()
    t0 = h.now
    h.respond(h.last(JoinGroupRequest), h.join_response(error=Errors.COORDINATOR_LOAD_IN_PROGRESS))
    assert h.count(JoinGroupRequest) == 1
    assert h.count(FindCoordinatorRequest) == 1
    h.advance(t0 + 99)
    assert h.count(JoinGroupRequest) == 1
    h.advance(t0 + 100)
    assert h.count(JoinGroupRequest) == 2
    assert h.last(JoinGroupRequest).dst == "broker-1"


@pytest.mark.parametrize("error", [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE])
def test_join_coordinator_errors_rediscover_then_retry(error) -> None:
    h = Harness()
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(error=error))
    assert h.consumer.coordinator is None
    assert h.count(FindCoordinatorRequest) == 2
    (find,) = h.pending(FindCoordinatorRequest)
    h.respond(find, FindCoordinatorResponse(Errors.NONE, 2, "broker-2", 9092))
    h.advance(h.now + 100)
    assert h.last(JoinGroupRequest).dst == "broker-2"
    assert h.count(JoinGroupRequest) == 2


@pytest.mark.parametrize(
    "error",
    [
        Errors.FENCED_INSTANCE_ID,
        Errors.INCONSISTENT_GROUP_PROTOCOL,
        Errors.INVALID_SESSION_TIMEOUT,
        Errors.INVALID_GROUP_ID,
        Errors.GROUP_AUTHORIZATION_FAILED,
        Errors.GROUP_MAX_SIZE_REACHED,
        Errors.UNSUPPORTED_VERSION,
        Errors.UNKNOWN_SERVER_ERROR,
    ],
)
def test_join_fatal_errors_fail_the_consumer(error) -> None:
    h = Harness()
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(error=error))
    assert h.consumer.failed and h.consumer.fatal_error == error.name
    assert h.log.named("consumer_fatal")[0]["error"] == error.name
    sent = len(h.sent)
    h.advance(h.now + 60_000)
    assert len(h.sent) == sent  # a failed consumer sends nothing more


def test_join_illegal_generation_is_an_unexpected_error_and_fatal() -> None:
    """AbstractCoordinator.JoinGroupResponseHandler has no ILLEGAL_GENERATION branch: like any
    unlisted error it raises a KafkaException, which joinGroupIfNeeded throws (no retry)."""
    h = Harness()
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(error=Errors.ILLEGAL_GENERATION))
    assert h.consumer.failed and h.consumer.fatal_error == "ILLEGAL_GENERATION"
    assert h.count(JoinGroupRequest) == 1


def test_join_response_with_foreign_protocol_type_is_fatal() -> None:
    h = Harness()
    h.connect()
    resp = h.join_response(member_id="m1", leader="m0")
    import attrs

    h.respond(h.last(JoinGroupRequest), attrs.evolve(resp, protocol_type="connect"))
    assert h.consumer.fatal_error == "INCONSISTENT_GROUP_PROTOCOL"


# --- SyncGroup ----------------------------------------------------------------------------------


def to_sync(h: Harness, member_id: str = "m1", generation_id: int = 2):
    h.connect()
    h.respond(
        h.last(JoinGroupRequest),
        h.join_response(member_id=member_id, leader="other", generation_id=generation_id),
    )
    return h.last(SyncGroupRequest)


def test_sync_rebalance_in_progress_rejoins_at_once_keeping_the_generation() -> None:
    h = Harness()
    sync = to_sync(h)
    h.respond(sync, h.sync_response([], error=Errors.REBALANCE_IN_PROGRESS))
    join = h.last(JoinGroupRequest)
    assert h.count(JoinGroupRequest) == 2
    assert join.message.member_id == "m1"
    assert h.listener.calls == []  # onJoinPrepare is not repeated for retries


def test_sync_illegal_generation_resets_generation_but_keeps_member_id() -> None:
    h = Harness()
    sync = to_sync(h)
    h.respond(sync, h.sync_response([], error=Errors.ILLEGAL_GENERATION))
    assert h.consumer.generation_id == -1 and h.consumer.member_id == "m1"
    assert h.last(JoinGroupRequest).message.member_id == "m1"
    assert h.count(JoinGroupRequest) == 2


def test_sync_unknown_member_id_resets_generation_and_member_id() -> None:
    h = Harness()
    sync = to_sync(h)
    h.respond(sync, h.sync_response([], error=Errors.UNKNOWN_MEMBER_ID))
    assert h.consumer.member_id == ""
    assert h.last(JoinGroupRequest).message.member_id == ""


def test_sync_not_coordinator_rediscovers() -> None:
    h = Harness()
    sync = to_sync(h)
    h.respond(sync, h.sync_response([], error=Errors.NOT_COORDINATOR))
    assert h.consumer.coordinator is None
    assert len(h.pending(FindCoordinatorRequest)) == 1


@pytest.mark.parametrize("error", [Errors.FENCED_INSTANCE_ID, Errors.GROUP_AUTHORIZATION_FAILED])
def test_sync_fatal_errors(error) -> None:
    h = Harness()
    sync = to_sync(h)
    h.respond(sync, h.sync_response([], error=error))
    assert h.consumer.fatal_error == error.name


def test_sync_empty_assignment_bytes_is_a_client_error() -> None:
    h = Harness()
    sync = to_sync(h)
    from coordinator.protocol import SyncGroupResponse

    h.respond(sync, SyncGroupResponse(Errors.NONE, "consumer", "range", b""))
    assert h.consumer.fatal_error == "ILLEGAL_STATE"


# --- Heartbeat ----------------------------------------------------------------------------------


def heartbeat(h: Harness):
    h.advance(h.now + h.config.heartbeat_interval_ms)
    return h.last(HeartbeatRequest)


def test_heartbeat_rebalance_in_progress_in_stable_rejoins_and_counts_as_alive() -> None:
    h = Harness()
    stable(h)
    hb = heartbeat(h)
    h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    assert h.consumer.rejoin_needed
    # EAGER: revoke everything, then JoinGroup with the same member id
    assert h.listener.calls[-1] == ("revoked", ["t-0"])
    assert h.last(JoinGroupRequest).message.member_id == "m1"
    assert h.consumer.membership.heartbeat.session_deadline_ms == h.now + 45000


def test_heartbeat_illegal_generation_resets_generation_keeps_member_id_and_loses_partitions() -> (
    None
):
    h = Harness()
    stable(h, partitions=("t-0", "t-1"))
    hb = heartbeat(h)
    h.respond(hb, HeartbeatResponse(Errors.ILLEGAL_GENERATION))
    assert h.consumer.member_id == "m1"
    # onJoinPrepare with a reset generation: onPartitionsLost, not onPartitionsRevoked
    assert h.listener.calls[-1] == ("lost", ["t-0", "t-1"])
    join = h.last(JoinGroupRequest).message
    assert join.member_id == "m1"


def test_heartbeat_unknown_member_id_resets_member_id() -> None:
    h = Harness()
    stable(h)
    h.respond(heartbeat(h), HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    assert h.last(JoinGroupRequest).message.member_id == ""
    assert h.listener.calls[-1] == ("lost", ["t-0"])


def test_heartbeat_error_for_an_old_generation_is_ignored() -> None:
    h = Harness()
    stable(h)
    hb = heartbeat(h)
    h.rejoin()
    h.advance(h.now + 100)
    h.join_and_sync(tps("t-0"), member_id="m1", generation_id=4)
    h.respond(hb, HeartbeatResponse(Errors.ILLEGAL_GENERATION))  # answer to generation 3
    assert h.consumer.state == "STABLE" and h.consumer.generation_id == 4


def test_heartbeat_fenced_instance_id_is_fatal() -> None:
    cfg = ConsumerConfig(
        group_id="g",
        group_instance_id="i-1",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
    )
    h = Harness(cfg)
    stable(h)
    h.respond(heartbeat(h), HeartbeatResponse(Errors.FENCED_INSTANCE_ID))
    h.advance(h.now + 200)
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def test_heartbeat_group_authorization_failed_only_backs_off() -> None:
    """HeartbeatResponseHandler raises GroupAuthorizationException into the heartbeat future, whose
    listener in HeartbeatThread.run just calls failHeartbeat(): the thread does not fail, poll()
    throws nothing, and the next heartbeat waits the retry backoff."""
    h = Harness()
    stable(h)
    h.respond(heartbeat(h), HeartbeatResponse(Errors.GROUP_AUTHORIZATION_FAILED))
    failed_at = h.now
    h.advance(h.now + 1000)
    assert not h.consumer.failed and h.consumer.state == "STABLE"
    sent_at = [e["t_ms"] for e in h.log.named("request_sent") if e["api"] == "Heartbeat"]
    assert failed_at < sent_at[-1] <= failed_at + 120  # 100 ms x (1 +- 20 %), not 3 s


@pytest.mark.parametrize("error", [Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE])
def test_heartbeat_coordinator_errors_mark_it_unknown(error) -> None:
    h = Harness()
    stable(h)
    h.respond(heartbeat(h), HeartbeatResponse(error))
    assert h.consumer.coordinator is None
    assert len(h.pending(FindCoordinatorRequest)) == 1
    assert h.consumer.state == "STABLE"  # still in the group


def test_silent_coordinator_heartbeat_times_out_and_coordinator_is_rediscovered() -> None:
    h = Harness()
    t0 = stable(h)
    h.advance(t0 + 3000 + 29_999)  # first heartbeat at +3 s, request.timeout.ms = 30 s
    assert h.consumer.coordinator == "broker-1"
    h.advance(t0 + 3000 + 30_000)
    assert h.consumer.coordinator is None
    assert h.log.named("request_timeout")[0]["api"] == "Heartbeat"
    assert h.consumer.state == "STABLE"  # still in the group; only the coordinator is unknown


def test_session_expiry_without_successful_heartbeat_marks_coordinator_unknown() -> None:
    h = Harness()
    t0 = stable(h)
    while h.now < t0 + 45_000 and h.consumer.coordinator is not None:
        for hb in h.pending(HeartbeatRequest):
            h.respond(hb, HeartbeatResponse(Errors.UNKNOWN_SERVER_ERROR))  # failHeartbeat
        h.advance(h.now + 1)
    assert h.now == t0 + 45_000
    assert h.log.named("coordinator_unknown")[-1]["reason"].startswith("session timed out")
    assert h.consumer.state == "STABLE"


def test_failed_heartbeats_back_off_exponentially_with_seeded_jitter() -> None:
    def gaps(seed: int) -> list[int]:
        h = Harness(seed=seed)
        stable(h)
        hb = heartbeat(h)
        out = []
        for _ in range(4):
            h.disconnect(hb)  # coordinator unknown, rediscovered at once
            h.answer_find_coordinator()
            before = h.now
            n = h.count(HeartbeatRequest)
            while h.count(HeartbeatRequest) == n:
                h.advance(h.now + 1)
            out.append(h.now - before)
            hb = h.last(HeartbeatRequest)
        return out

    a = gaps(1)
    assert a == gaps(1)  # deterministic per seed
    assert a != gaps(2)
    bounds = [(80, 120), (160, 240), (320, 480), (640, 960)]
    for gap, (lo, hi) in zip(a, bounds, strict=True):
        assert lo <= gap <= hi


# --- Metadata: topics Kafka's broker calls invalid ------------------------------------------------


def invalid_topic_answer(h: Harness, request) -> MetadataResponse:
    """The broker's answer when the request names a topic Topic.validate rejects: that topic
    gets INVALID_TOPIC_EXCEPTION (KafkaApis.getTopicMetadata), the others their metadata."""
    good = h.metadata_response([t for t in request.message.topics if t != "topic abc"])
    bad = MetadataResponseTopic("topic abc", Errors.INVALID_TOPIC_EXCEPTION)
    return MetadataResponse(brokers=good.brokers, topics=(*good.topics, bad))


def test_invalid_topic_in_metadata_is_thrown_from_poll() -> None:
    """Metadata.handleMetadataResponse keeps the subscribed topics answered
    INVALID_TOPIC_EXCEPTION, and ConsumerNetworkClient.poll ends with
    Metadata.maybeThrowAnyException: the application's poll() throws InvalidTopicException
    ("Invalid topics: [topic abc]"), which stops the simulated application (a fatal error).
    Unsubscribing and closing afterwards still work; neither sends anything, as the member never
    joined (Kafka's maybeLeaveGroup needs a member id)."""
    h = Harness(topics=("t", "topic abc"))
    h.start()
    (meta,) = h.pending(MetadataRequest)
    assert meta.message.topics == ("t", "topic abc")
    h.respond(meta, invalid_topic_answer(h, meta))
    assert h.consumer.failed and h.consumer.fatal_error == "INVALID_TOPIC_EXCEPTION"
    (fatal,) = h.log.named("consumer_fatal")
    assert fatal["reason"] == "Invalid topics: [topic abc]"
    sent = len(h.sent)
    h.call("subscribe", [])
    assert h.consumer.subscription == ()
    h.close()
    assert h.consumer.status == "CLOSED" and h.log.named("consumer_closed")
    h.advance(h.now + 60_000)
    assert len(h.sent) == sent


def test_invalid_topic_is_thrown_from_the_next_poll_of_a_busy_application() -> None:
    """The exception is thrown from poll(): an application busy processing a batch meets it when
    it calls poll() next, not before."""
    config = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        processing_time_ms=500,
    )
    h = Harness(config)
    h.connect()
    while not h.pending(JoinGroupRequest):
        h.advance(h.now + 1)
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.answer_offset_fetch()
    h.advance(h.consumer.app.busy_until + 1)  # the next poll: processing for 500 ms
    h.call("subscribe", ["t", "topic abc"])
    while not h.pending(MetadataRequest):
        h.advance(h.now + 1)
    busy_until = h.consumer.app.busy_until
    assert h.now < busy_until
    (meta,) = h.pending(MetadataRequest)
    h.respond(meta, invalid_topic_answer(h, meta))
    assert not h.consumer.failed
    h.advance(busy_until)
    assert h.consumer.fatal_error == "INVALID_TOPIC_EXCEPTION"


def test_invalid_topic_no_longer_subscribed_is_ignored() -> None:
    """Metadata.handleMetadataResponse skips topics ConsumerMetadata.retainTopic does not keep:
    an answer naming an invalid topic the consumer unsubscribed from meanwhile throws nothing."""
    h = Harness(topics=("t", "topic abc"))
    h.start()
    (meta,) = h.pending(MetadataRequest)
    h.call("subscribe", ["t"])
    h.respond(meta, invalid_topic_answer(h, meta))
    assert not h.consumer.failed and h.consumer.status == "RUNNING"
