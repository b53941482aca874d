"""Coordinator discovery failures, request timeouts, assignment checks."""

from __future__ import annotations

import attrs

from assignors.api import PartitionAssignor, RebalanceProtocol, TopicPartition
from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    MetadataRequest,
    SyncGroupRequest,
)
from members.config import ConsumerConfig
from tests.members.harness import Harness, tps


def test_find_coordinator_error_backs_off_exponentially_then_finds_it() -> None:
    h = Harness(seed=3)
    h.start()
    h.answer_metadata()
    times = []
    for _ in range(3):
        (find,) = h.pending(FindCoordinatorRequest)
        times.append(h.now)
        h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
        while not h.pending(FindCoordinatorRequest):
            h.advance(h.now + 1)
            h.answer_metadata()  # the refresh ensureCoordinatorReady waits for (answered at once)
    gaps = [b - a for a, b in zip(times, [*times[1:], h.now], strict=True)]
    assert 80 <= gaps[0] <= 120 and 160 <= gaps[1] <= 240 and 320 <= gaps[2] <= 480
    h.answer_find_coordinator()
    assert h.last(JoinGroupRequest).dst == "broker-1"


def test_find_coordinator_authorization_failure_is_fatal() -> None:
    h = Harness()
    h.start()
    (find,) = h.pending(FindCoordinatorRequest)
    h.respond(find, FindCoordinatorResponse(Errors.GROUP_AUTHORIZATION_FAILED))
    assert h.consumer.fatal_error == "GROUP_AUTHORIZATION_FAILED"


def test_a_failed_lookup_refreshes_metadata_before_looking_up_again() -> None:
    """AbstractCoordinator.ensureCoordinatorReady: after a retriable FindCoordinator failure it
    sleeps the backoff, then awaits a metadata update (client.awaitMetadataUpdate), and only
    then looks the coordinator up again."""
    h = Harness()
    h.start()
    h.answer_metadata()
    (find,) = h.pending(FindCoordinatorRequest)
    failed_at = h.now
    h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    h.advance(failed_at + 79)
    assert h.pending(MetadataRequest) == [] and h.pending(FindCoordinatorRequest) == []
    h.advance(failed_at + 120)  # the first backoff: 100 ms +- 20 %
    (refresh,) = h.pending(MetadataRequest)
    h.advance(h.now + 1_000)  # no lookup while the refresh is out
    assert h.pending(FindCoordinatorRequest) == []
    h.respond(refresh, h.metadata_response(refresh.message.topics))
    assert len(h.pending(FindCoordinatorRequest)) == 1
    assert h.count(FindCoordinatorRequest) == 2


def test_a_lookup_does_not_wait_for_a_metadata_refresh_that_failed() -> None:
    """A refresh that fails (its broker unreachable) holds the lookup up no further: Kafka's
    next poll() would look up at once."""
    h = Harness()
    h.start()
    h.answer_metadata()
    h.respond(h.pending(FindCoordinatorRequest)[0], FindCoordinatorResponse(Errors.NOT_COORDINATOR))
    h.advance(h.now + 120)
    (refresh,) = h.pending(MetadataRequest)
    h.disconnect(refresh)
    assert len(h.pending(FindCoordinatorRequest)) == 1


def test_unreachable_bootstrap_broker_moves_to_the_next_one() -> None:
    """A FindCoordinator to a broker that is gone fails (disconnect); the metadata refresh that
    follows the backoff goes to the next broker, and the lookups then pick from the brokers the
    refresh lists, without the dead one."""
    from coordinator.protocol import MetadataResponse, MetadataResponseBroker

    def brokers(*ids: int) -> tuple[MetadataResponseBroker, ...]:
        return tuple(MetadataResponseBroker(i, f"broker-{i}", 9092) for i in ids)

    h = Harness()
    h.start()
    (start_metadata,) = h.pending(MetadataRequest)
    topics = h.metadata_response(start_metadata.message.topics).topics
    h.respond(start_metadata, MetadataResponse(brokers=brokers(0, 2), topics=topics))
    (find,) = h.pending(FindCoordinatorRequest)
    assert find.dst == "broker-0"
    h.disconnect(find)
    h.advance(h.now + 120)
    (refresh,) = h.pending(MetadataRequest)
    assert refresh.dst == "broker-2"
    h.respond(refresh, MetadataResponse(brokers=brokers(1, 2), topics=topics))  # 0 is gone
    (find,) = h.pending(FindCoordinatorRequest)
    assert find.dst == "broker-2"
    h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    h.advance(h.now + 240)
    (refresh,) = h.pending(MetadataRequest)
    assert refresh.dst == "broker-1"  # the next one of the refreshed list, not broker-0


def test_join_group_request_timeout_rediscovers_and_rejoins() -> None:
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        max_poll_interval_ms=10_000,
    )
    h = Harness(cfg)
    h.connect()
    join = h.last(JoinGroupRequest)
    h.advance(h.now + 30_000 - 1)  # max(request.timeout.ms 30 s, 10 s + 5 s)
    assert h.count(FindCoordinatorRequest) == 1
    h.advance(h.now + 1)
    assert h.consumer.coordinator is None
    assert h.log.named("request_timeout")[0]["correlation_id"] == join.correlation_id
    h.answer_find_coordinator()
    h.advance(h.now + 100)
    assert h.count(JoinGroupRequest) == 2


def test_join_group_request_timeout_requests_a_metadata_update_the_leader_waits_for() -> None:
    """NetworkClient.handleTimedOutRequests closes the connection of a request that timed out,
    and processDisconnection calls DefaultMetadataUpdater.handleServerDisconnect, which asks for
    a metadata update (Metadata.requestUpdate: "the disconnect may be the result of stale
    metadata"); the last answer is old, so it goes out at once. A leader elected before that
    update is answered waits for it (ensureFreshMetadata) before it assigns."""
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        max_poll_interval_ms=10_000,
    )
    h = Harness(cfg, partitions={"t": 2})
    h.connect()
    h.advance(h.now + 30_000)  # the JoinGroup times out
    assert h.log.named("request_timeout")[-1]["api"] == "JoinGroup"
    (meta,) = h.pending(MetadataRequest)
    assert meta.message.topics == ("t",)
    h.answer_find_coordinator()
    h.advance(h.now + 100)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert h.pending(SyncGroupRequest) == []  # the leader waits for the requested update
    h.partitions["t"] = 3
    h.respond(meta, h.metadata_response(meta.message.topics))
    assert len(h.pending(SyncGroupRequest)) == 1
    assert h.log.named("assignment_computed")[-1]["assignment"] == {"m1": ["t-0", "t-1", "t-2"]}


def test_a_disconnected_heartbeat_requests_a_metadata_update() -> None:
    """A request that fails because its connection broke (the coordinator's broker died) asks
    for a metadata update as a timed-out one does (NetworkClient.handleDisconnections ->
    processDisconnection -> handleServerDisconnect)."""
    h = Harness()
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.answer_offset_fetch()
    before = h.count(MetadataRequest)
    h.advance(h.now + h.config.heartbeat_interval_ms)
    (hb,) = h.pending(HeartbeatRequest)
    h.disconnect(hb)
    assert h.count(MetadataRequest) == before + 1


def test_a_disconnect_soon_after_a_metadata_answer_waits_for_the_refresh_backoff() -> None:
    """Metadata.timeToAllowUpdate holds a requested update back until the refresh backoff
    (retry.backoff.ms +- 20 %) after the last answer (lastRefreshMs), so a disconnect just after
    a metadata answer sends the update only then; a leader elected while it is out waits for
    it."""
    h = Harness(partitions={"t": 2})
    h.connect()
    answered = h.now
    (join,) = h.pending(JoinGroupRequest)
    h.now += 10
    h.disconnect(join)
    assert h.pending(MetadataRequest) == []
    allowed = h.timers[f"metadata:{h.consumer.incarnation}"]
    assert answered + 80 <= allowed <= answered + 120
    h.advance(allowed - 1)
    assert h.pending(MetadataRequest) == []
    h.advance(allowed)
    assert len(h.pending(MetadataRequest)) == 1
    h.answer_find_coordinator()
    while not h.pending(JoinGroupRequest):
        h.advance(h.now + 1)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert h.pending(SyncGroupRequest) == []  # the update is still out
    h.answer_metadata()
    assert len(h.pending(SyncGroupRequest)) == 1


def test_marking_the_coordinator_unknown_requests_no_metadata_update() -> None:
    """A disconnect the client makes itself (coordinatorDead -> NetworkClient.disconnect, after an
    error answer such as NOT_COORDINATOR) does not go through handleServerDisconnect: the
    requests it cancels ask for no metadata update."""
    h = Harness()
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.answer_offset_fetch()
    h.advance(h.now + h.config.heartbeat_interval_ms)
    (hb,) = h.pending(HeartbeatRequest)
    h.call("commit")
    before = h.count(MetadataRequest)
    h.respond(hb, HeartbeatResponse(Errors.NOT_COORDINATOR))  # the commit in flight is cancelled
    assert h.log.named("request_failed")[-1]["api"] == "OffsetCommit"
    assert h.count(MetadataRequest) == before


class Thief(PartitionAssignor):
    """Breaks KIP-429: hands a partition that someone still owns straight to someone else."""

    name = "thief"
    supported_protocols = (RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE)

    def assign(self, cluster, subscriptions):
        members = sorted(subscriptions)
        return {m: [TopicPartition("t", 0)] if m == members[0] else [] for m in members}


def test_cooperative_assignment_that_moves_owned_partitions_is_rejected() -> None:
    cfg = ConsumerConfig(
        group_id="g", partition_assignment_strategy=(Thief(),), enable_auto_commit=False
    )
    h = Harness(cfg)
    h.connect()
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="a", others=[("b", ["t"], tps("t-0"))]))
    assert h.count(SyncGroupRequest) == 0
    assert h.consumer.fatal_error == "UNKNOWN_SERVER_ERROR"
    assert "violates" in h.log.named("consumer_fatal")[0]["reason"]


def test_assignment_for_an_unsubscribed_topic_triggers_a_rejoin() -> None:
    h = Harness(partitions={"t": 2, "u": 2})
    h.connect()
    h.join_and_sync(tps("u-0"), member_id="m1")  # the leader still thought we wanted "u"
    assert h.consumer.assignment == []
    assert h.log.named("rejoin_requested")[-1]["reason"] == (
        "received assignment does not match the current subscription"
    )
    assert len(h.pending(JoinGroupRequest)) == 1


def test_pattern_member_accepts_a_matching_topic_it_has_not_seen_yet() -> None:
    """SubscriptionState.checkAssignmentMatchedSubscription checks a pattern subscription against
    the pattern, not the topics matched so far: a leader with fresher metadata may assign a new
    matching topic, which onJoinComplete adds to the subscription and the joined subscription
    (maybeUpdateJoinedSubscription) instead of rejoining."""
    h = Harness(topics=None, pattern="t.*", partitions={"t1": 2})
    h.connect()
    h.partitions["t2"] = 1  # created after this member's metadata was fetched
    h.join_and_sync(tps("t1-0", "t2-0"), member_id="m1")
    assert h.consumer.assignment == tps("t1-0", "t2-0")
    assert h.consumer.subscription == ("t1", "t2")
    assert h.log.named("rejoin_requested") == []
    assert not h.consumer.rejoin_needed
    h.advance(h.now + 100)
    h.answer_offset_fetch()
    h.answer_metadata()  # the refresh the new topic asked for: it matches, nothing changes
    h.advance(h.now + 1_000)
    assert h.pending(JoinGroupRequest) == []
    assert h.consumer.subscription == ("t1", "t2")


def test_pattern_member_rejoins_for_a_topic_outside_its_pattern() -> None:
    h = Harness(topics=None, pattern="t.*", partitions={"t1": 2, "u": 1})
    h.connect()
    h.join_and_sync(tps("t1-0", "u-0"), member_id="m1")
    assert h.consumer.assignment == []
    assert h.log.named("rejoin_requested")[-1]["reason"] == (
        "received assignment does not match the current subscription"
    )


def test_unknown_protocol_in_join_response_is_fatal() -> None:
    h = Harness()
    h.connect()
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="m2", leader="m1", protocol="roundrobin"))
    (sync,) = h.pending(SyncGroupRequest)
    h.respond(sync, h.sync_response(tps("t-0")))
    assert h.consumer.fatal_error == "ILLEGAL_STATE"


class Recorder(PartitionAssignor):
    """Remembers what the leader handed it; assigns nothing."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list = []

    def assign(self, cluster, subscriptions):
        self.calls.append((cluster, dict(subscriptions)))
        return {m: [] for m in subscriptions}


def test_rack_aware_leader_passes_client_racks_and_replica_racks_to_the_assignor() -> None:
    from coordinator.protocol import (
        MetadataResponse,
        MetadataResponseBroker,
        MetadataResponsePartition,
        MetadataResponseTopic,
    )
    from members.consumer_protocol import decode_subscription

    recorder = Recorder()
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=(recorder,),
        enable_auto_commit=False,
        client_rack="rack-a",
    )
    h = Harness(cfg)
    h.start()
    (meta,) = h.pending(MetadataRequest)
    h.respond(
        meta,
        MetadataResponse(
            brokers=(
                MetadataResponseBroker(0, "broker-0", 9092, "rack-a"),
                MetadataResponseBroker(1, "broker-1", 9092, "rack-b"),
            ),
            topics=(
                MetadataResponseTopic(
                    "t",
                    Errors.NONE,
                    (
                        MetadataResponsePartition(0, 0, (0, 1)),
                        MetadataResponsePartition(1, 1, (1,)),
                    ),
                ),
            ),
        ),
    )
    h.answer_find_coordinator()
    join = h.last(JoinGroupRequest).message
    assert decode_subscription(join.protocols[0].metadata).rack_id == "rack-a"
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["t"], [])]))
    ((cluster, subs),) = recorder.calls
    assert cluster.partitions_per_topic == {"t": 2}
    assert cluster.racks_of("t", 0) == frozenset({"rack-a", "rack-b"})
    assert cluster.racks_of("t", 1) == frozenset({"rack-b"})
    assert subs["m1"].rack_id == "rack-a" and subs["m2"].rack_id is None


def test_returning_static_leader_skips_the_assignment() -> None:
    recorder = Recorder()
    cfg = ConsumerConfig(
        group_id="g",
        group_instance_id="i-1",
        partition_assignment_strategy=(recorder,),
        enable_auto_commit=False,
    )
    h = Harness(cfg)
    h.connect()
    import attrs

    resp = h.join_response(member_id="m1", generation_id=5, others=[("m2", ["t"], [])])
    h.respond(h.last(JoinGroupRequest), attrs.evolve(resp, skip_assignment=True))
    assert recorder.calls == []
    assert h.last(SyncGroupRequest).message.assignments == ()
    assert h.consumer.is_leader
    assert h.log.named("assignment_skipped")


def test_no_leave_group_on_close_when_disabled() -> None:
    from coordinator.protocol import LeaveGroupRequest

    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        internal_leave_group_on_close=False,
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.call("close")
    assert h.count(LeaveGroupRequest) == 0
    assert h.listener.calls == [("assigned", ["t-0"])]  # no onLeavePrepare either
    # the new partition's OffsetFetch is still pending on the coordinator: close() waits for it
    assert h.consumer.status == "CLOSING"
    h.answer_offset_fetch()
    assert h.consumer.status == "CLOSED"


def refresh_gaps(h: Harness, answers: int) -> list[int]:
    """Answer the pending metadata request ``answers`` times; the ms from each answer to the next
    request."""
    gaps = []
    for _ in range(answers):
        assert len(h.pending(MetadataRequest)) == 1
        h.answer_metadata()
        gaps.append(h.wait_for(MetadataRequest))
    return gaps


def test_unavailable_topic_brings_the_next_metadata_refresh_forward() -> None:
    """Metadata.handleMetadataResponse requests another update when a needed topic is answered
    UNKNOWN_TOPIC_OR_PARTITION; NetworkClient sends it after Metadata.timeToAllowUpdate's refresh
    backoff (100 ms doubling to 1 s, +-20 %, while the answers stay the same). Once the topic
    exists the refresh interval is metadata.max.age.ms again."""
    h = Harness(partitions={"u": 1})  # "t" does not exist yet
    h.start()
    # the coordinator is found (else each failed lookup would refresh metadata as well)
    h.answer_find_coordinator()
    gaps = refresh_gaps(h, 5)
    bounds = [(80, 120), (160, 240), (320, 480), (640, 960), (800, 1000)]
    for gap, (lo, hi) in zip(gaps, bounds, strict=True):
        assert lo <= gap <= hi
    h.partitions["t"] = 4
    h.answer_metadata()
    answered = h.now
    h.advance(answered + h.config.metadata_max_age_ms - 1)
    assert h.pending(MetadataRequest) == []
    h.advance(answered + h.config.metadata_max_age_ms)
    assert len(h.pending(MetadataRequest)) == 1


def test_pattern_member_refreshes_metadata_before_rejoining() -> None:
    """ConsumerCoordinator.poll: before a pattern subscriber rejoins it requests a metadata update
    (Metadata.timeToAllowUpdate permitting: the last answer is at least retry.backoff.ms old) and
    waits for it (ensureFreshMetadata), so the JoinGroup carries a topic created since."""
    from coordinator.protocol import HeartbeatRequest, HeartbeatResponse
    from members.consumer_protocol import decode_subscription

    h = Harness(topics=None, pattern="t.*", partitions={"t1": 2})
    h.connect()
    h.join_and_sync(tps("t1-0"), member_id="m1")
    h.answer_offset_fetch()
    h.partitions["t2"] = 1
    h.advance(h.now + 3_000)
    (hb,) = h.pending(HeartbeatRequest)
    metadata_before = h.count(MetadataRequest)
    h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    assert h.count(MetadataRequest) == metadata_before + 1
    assert h.pending(JoinGroupRequest) == []  # waits for the metadata
    h.answer_metadata()
    (join,) = h.pending(JoinGroupRequest)
    assert decode_subscription(join.message.protocols[0].metadata).topics == ("t1", "t2")


def test_failed_metadata_requests_back_off_exponentially() -> None:
    """Metadata.failedUpdate counts the failed attempts since the last answer, and
    Metadata.timeToAllowUpdate holds the next request back for the refresh backoff of that many
    attempts (KIP-580's ExponentialBackoff: retry.backoff.ms doubling to retry.backoff.max.ms,
    +-20 % jitter, seeded). An answer resets the count: the next failure waits 100 ms again."""

    def gaps(seed: int) -> list[int]:
        h = Harness(seed=seed)
        h.start()
        h.answer_find_coordinator()
        out = []
        for i in range(6):
            if i == 5:
                h.answer_metadata()  # an answer: attempts = 0
                h.advance(h.now + h.config.metadata_max_age_ms)  # the periodic refresh
            (meta,) = h.pending(MetadataRequest)
            h.disconnect(meta)
            out.append(h.wait_for(MetadataRequest))
        return out

    a = gaps(1)
    assert a == gaps(1) and a != gaps(2)
    bounds = [(80, 120), (160, 240), (320, 480), (640, 960), (800, 1000), (80, 120)]
    for gap, (lo, hi) in zip(a, bounds, strict=True):
        assert lo <= gap <= hi, a


def test_unavailable_topic_refresh_never_waits_beyond_metadata_max_age() -> None:
    """Metadata.timeToAllowUpdate resets equivalentResponseCount once the metadata has expired
    (lastSuccessfulRefreshMs + metadata.max.age.ms), so the refresh backoff for an unavailable
    topic never delays the next update past metadata.max.age.ms, and starts over from
    retry.backoff.ms after that. With metadata.max.age.ms 300 the gaps are 100 ms, 200 ms,
    then capped at 300 ms, and the doubling restarts (+-20 % jitter)."""
    config = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        metadata_max_age_ms=300,
    )
    h = Harness(config, partitions={"u": 1})  # "t" does not exist
    h.start()
    gaps = refresh_gaps(h, 5)
    bounds = [(80, 120), (160, 240), (300, 300), (80, 120), (160, 240)]
    for gap, (lo, hi) in zip(gaps, bounds, strict=True):
        assert lo <= gap <= hi, gaps


def test_subscription_change_while_a_metadata_request_is_out_asks_again() -> None:
    """KafkaConsumer.subscribe calls Metadata.requestUpdateForNewTopics, which bumps the request
    version; an answer to a request sent before (an older version) leaves needPartialUpdate set,
    so the NetworkClient asks again, for the new topics too, once timeToAllowUpdate allows
    (the refresh backoff after that answer), instead of waiting for the next periodic refresh
    (metadata.max.age.ms)."""
    h = Harness(partitions={"t": 4, "u": 2})
    h.connect()
    h.join_and_sync(tps("t-0", "t-1", "t-2", "t-3"))
    h.answer_offset_fetch()
    key = f"metadata:{h.consumer.incarnation}"  # the periodic refresh goes out
    h.fire(key)
    (old,) = h.pending(MetadataRequest)
    assert old.message.topics == ("t",)
    h.call("subscribe", ["t", "u"])
    assert h.pending(MetadataRequest) == [old]  # one request at a time
    h.respond(old, h.metadata_response(old.message.topics))
    assert h.pending(MetadataRequest) == []
    h.advance(h.now + 120)  # retry.backoff.ms +- 20 %
    (new,) = h.pending(MetadataRequest)
    assert new.message.topics == ("t", "u")


# --- the leader's ensureFreshMetadata (ConsumerCoordinator.updateGroupSubscription) --------------


def test_leader_waits_for_a_metadata_refresh_in_flight_before_assigning() -> None:
    """ConsumerNetworkClient.ensureFreshMetadata: a refresh out when the leader is elected
    (Metadata.updateRequested, or the metadata due) makes it wait for the answer
    (awaitMetadataUpdate) and assign with it, so a partition added meanwhile is assigned."""
    h = Harness(partitions={"t": 2})
    h.connect()
    h.refresh_metadata()  # answered: the metadata is fresh
    h.advance(h.now + h.config.metadata_max_age_ms)  # the periodic refresh goes out
    (meta,) = h.pending(MetadataRequest)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert h.pending(SyncGroupRequest) == []
    h.partitions["t"] = 3
    h.respond(meta, h.metadata_response(meta.message.topics))
    (sync,) = h.pending(SyncGroupRequest)
    assert h.log.named("assignment_computed")[-1]["assignment"] == {"m1": ["t-0", "t-1", "t-2"]}
    h.respond(sync, h.sync_response(tps("t-0", "t-1", "t-2")))
    assert not h.consumer.rejoin_needed  # the snapshot was taken after the wait


def test_leader_fetches_metadata_that_is_due_before_assigning() -> None:
    """Metadata.timeToNextUpdate == 0 (the last answer is metadata.max.age.ms old) with no
    request out yet: the leader's NetworkClient sends the refresh at once and it waits for the
    answer before assigning."""
    h = Harness(partitions={"t": 2})
    h.connect()
    answered = h.now
    h.now = answered + h.config.metadata_max_age_ms  # the refresh timer has not fired yet
    metadata_before = h.count(MetadataRequest)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert h.count(MetadataRequest) == metadata_before + 1
    assert h.pending(SyncGroupRequest) == []
    h.answer_metadata()
    assert len(h.pending(SyncGroupRequest)) == 1


def test_leader_waits_through_a_lost_metadata_request_until_a_retry_is_answered() -> None:
    """A metadata request that is never answered holds the leader up to request.timeout.ms:
    awaitMetadataUpdate waits with Long.MAX_VALUE, the request times out
    (DefaultMetadataUpdater.handleServerDisconnect requests another update), the retry goes out
    after the refresh backoff, and its answer lets the leader assign."""
    h = Harness(partitions={"t": 2})
    h.start()
    (lost,) = h.pending(MetadataRequest)
    h.answer_find_coordinator()
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert h.pending(SyncGroupRequest) == []
    h.advance(h.now + h.config.request_timeout_ms - 1)
    assert h.pending(SyncGroupRequest) == []
    h.advance(h.now + 1)  # the request times out
    assert h.log.named("request_timeout")[-1]["correlation_id"] == lost.correlation_id
    assert h.last(MetadataRequest) == lost  # the retry waits for the refresh backoff
    h.advance(h.timers[f"metadata:{h.consumer.incarnation}"])
    retry = h.last(MetadataRequest)
    assert retry != lost
    h.disconnect(retry)  # a failed refresh does not end the wait either
    assert h.pending(SyncGroupRequest) == []
    h.advance(h.timers[f"metadata:{h.consumer.incarnation}"])
    h.respond(h.last(MetadataRequest), h.metadata_response(("t",)))
    assert len(h.pending(SyncGroupRequest)) == 1
    assert h.log.named("assignment_computed")[-1]["assignment"] == {"m1": ["t-0", "t-1"]}


def test_leader_with_fresh_metadata_assigns_at_once() -> None:
    """Nothing requested and nothing due: ensureFreshMetadata returns at once and the SyncGroup
    follows the JoinGroup answer without a metadata request."""
    h = Harness(partitions={"t": 2})
    h.connect()
    h.now += h.config.metadata_max_age_ms - 1
    metadata_before = h.count(MetadataRequest)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1"))
    assert len(h.pending(SyncGroupRequest)) == 1
    assert h.count(MetadataRequest) == metadata_before


# --- Metadata.timeToAllowUpdate after a failed request (Metadata.failedUpdate) -----------------


def test_pattern_member_rejoining_after_a_failed_refresh_waits_for_the_retry() -> None:
    """Metadata.failedUpdate moves lastRefreshMs to the failure, so timeToAllowUpdate holds any
    next request back for the refresh backoff: a pattern member that must rejoin just after its
    refresh was disconnected does not refresh again at once (ConsumerCoordinator.poll asks for
    an update only once timeToAllowUpdate is 0). The failed refresh left an update requested
    (handleServerDisconnect), so ensureFreshMetadata waits for the retry, which goes out after
    the backoff, and the JoinGroup follows its answer."""
    from coordinator.protocol import HeartbeatResponse
    from members.consumer_protocol import decode_subscription

    h = Harness(topics=None, pattern="t.*", partitions={"t1": 2})
    h.connect()
    h.join_and_sync(tps("t1-0", "t1-1"), member_id="m1")
    h.answer_offset_fetch()
    h.advance(h.now + h.config.heartbeat_interval_ms)
    (hb,) = h.pending(HeartbeatRequest)
    key = f"metadata:{h.consumer.incarnation}"
    h.fire(key)  # the periodic refresh goes out ...
    (refresh,) = h.pending(MetadataRequest)
    h.disconnect(refresh)  # ... and fails
    retry_at = h.timers[key]
    assert h.now + 80 <= retry_at <= h.now + 120  # the refresh backoff, 100 ms +- 20 %
    h.partitions["t2"] = 1
    h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    assert h.pending(MetadataRequest) == []  # held back by the backoff
    assert h.pending(JoinGroupRequest) == []  # the requested update is awaited
    h.advance(retry_at - 1)
    assert h.pending(MetadataRequest) == [] and h.pending(JoinGroupRequest) == []
    h.advance(retry_at)
    (retry,) = h.pending(MetadataRequest)
    h.respond(retry, h.metadata_response(retry.message.topics))
    (join,) = h.pending(JoinGroupRequest)
    assert decode_subscription(join.message.protocols[0].metadata).topics == ("t1", "t2")


def test_a_failed_lookup_awaits_the_metadata_retry_the_refresh_backoff_holds_back() -> None:
    """ensureCoordinatorReady's awaitMetadataUpdate only requests an update
    (Metadata.requestUpdate); NetworkClient's DefaultMetadataUpdater.maybeUpdate sends it once
    Metadata.timeToNextUpdate allows. After two failed metadata requests the refresh backoff
    (about 200 ms after the second failure) outlasts the lookup's own backoff (about 100 ms), so
    the refresh the lookup waits for is the retry already scheduled: nothing goes out before it,
    and the lookup follows its answer."""
    h = Harness(seed=5)
    h.start()
    (find,) = h.pending(FindCoordinatorRequest)
    key = f"metadata:{h.consumer.incarnation}"
    h.disconnect(h.pending(MetadataRequest)[0])
    h.advance(h.timers[key])
    h.disconnect(h.pending(MetadataRequest)[0])  # the second failure: attempts = 2
    retry_at = h.timers[key]
    assert h.now + 160 <= retry_at <= h.now + 240
    h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    lookup_backoff_ends = h.timers[f"find-coordinator:{h.consumer.incarnation}"]
    assert lookup_backoff_ends < retry_at
    h.advance(retry_at - 1)
    assert h.pending(MetadataRequest) == [] and h.pending(FindCoordinatorRequest) == []
    h.advance(retry_at)
    (refresh,) = h.pending(MetadataRequest)
    assert h.pending(FindCoordinatorRequest) == []
    h.respond(refresh, h.metadata_response(refresh.message.topics))
    assert len(h.pending(FindCoordinatorRequest)) == 1


def test_a_closing_consumer_s_lookup_still_gets_the_refresh_the_backoff_held_back() -> None:
    """close()'s final commit needs the coordinator; its lookup fails while the refresh backoff
    holds the metadata retry back. The closing consumer sends nothing new of its own, but the
    refresh its lookup waits for still goes out when the backoff ends, and the lookup and the
    commit follow."""
    from coordinator.protocol import OffsetCommitRequest

    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg, seed=5)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    h.answer_offset_fetch()
    h.mark_coordinator_unknown()
    (find,) = h.pending(FindCoordinatorRequest)
    key = f"metadata:{h.consumer.incarnation}"
    h.fire(key)  # a refresh goes out and fails twice
    h.disconnect(h.pending(MetadataRequest)[0])
    h.advance(h.timers[key])
    h.disconnect(h.pending(MetadataRequest)[0])
    retry_at = h.timers[key]
    h.close()
    h.respond(find, FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    h.advance(retry_at - 1)
    assert h.pending(MetadataRequest) == []
    h.advance(retry_at)
    h.answer_metadata()
    h.answer_find_coordinator()
    assert len(h.pending(OffsetCommitRequest)) == 1
    assert h.consumer.status == "CLOSING"


# --- Metadata.requestUpdateForNewTopics: the request version ---------------------------------


def test_any_subscription_change_while_a_request_is_out_asks_again_after_its_answer() -> None:
    """KafkaConsumer.subscribe calls Metadata.requestUpdateForNewTopics whenever the
    subscription changes, even to fewer topics: it bumps requestVersion, so the request in
    flight (an older version) leaves needPartialUpdate set when it is answered, and another
    request follows, once timeToAllowUpdate allows (the refresh backoff after that answer,
    retry.backoff.ms +- 20 %), for the new subscription only."""
    h = Harness(topics=("t", "u"), partitions={"t": 4, "u": 2})
    h.connect()
    h.join_and_sync(tps("t-0", "u-0"))
    h.answer_offset_fetch()
    key = f"metadata:{h.consumer.incarnation}"  # the periodic refresh goes out
    h.fire(key)
    (out,) = h.pending(MetadataRequest)
    assert out.message.topics == ("t", "u")
    h.call("subscribe", ["t"])  # fewer topics: the request out asks for all of them
    assert h.pending(MetadataRequest) == [out]
    h.respond(out, h.metadata_response(out.message.topics))
    answered = h.now
    assert h.timers[key] < answered + h.config.metadata_max_age_ms  # not the periodic refresh
    h.advance(h.timers[key])
    (again,) = h.pending(MetadataRequest)
    assert again.message.topics == ("t",)
    assert 80 <= h.now - answered <= 120


def test_subscribing_to_the_same_pattern_again_refreshes_metadata_and_keeps_the_group() -> None:
    """ClassicKafkaConsumer.subscribe(Pattern) always calls requestUpdateForNewTopics, so the same
    pattern again still sends a metadata request; the subscription it matched stays
    (SubscriptionState.subscribe(Pattern) keeps it, updatePatternSubscription re-matches the
    known topics), so nothing changes for the group."""
    h = Harness(topics=None, pattern="t.*", partitions={"t1": 2})
    h.connect()
    h.join_and_sync(tps("t1-0", "t1-1"), member_id="m1")
    h.answer_offset_fetch()
    before = h.count(MetadataRequest)
    h._take(h.consumer.subscribe(None, h.now, pattern="t.*"))
    assert h.count(MetadataRequest) == before + 1
    h.answer_metadata()
    assert not h.consumer.rejoin_needed and h.log.named("subscription_changed") == []


# --- Metadata.timeToAllowUpdate after an answer: the jittered refresh backoff -------------------


def test_the_refresh_backoff_after_an_answer_is_jittered() -> None:
    """After an answer, Metadata.timeToAllowUpdate holds the next request for the refresh
    backoff, an ExponentialBackoff: retry.backoff.ms +-20 %, drawn from the consumer's seeded
    random source, so it differs between seeds and repeats for the same seed. Here a heartbeat's
    connection breaks just as a refresh is answered, and the update it asks for
    (handleServerDisconnect) waits for that backoff."""

    def wait(seed: int) -> int:
        h = Harness(seed=seed, partitions={"t": 2})
        h.connect()
        h.join_and_sync(tps("t-0", "t-1"), member_id="m1")
        h.answer_offset_fetch()
        h.advance(h.now + h.config.heartbeat_interval_ms)
        (hb,) = h.pending(HeartbeatRequest)
        h.refresh_metadata()
        h.disconnect(hb)
        assert h.pending(MetadataRequest) == []
        return h.wait_for(MetadataRequest)

    waits = {seed: wait(seed) for seed in range(6)}
    assert all(80 <= w <= 120 for w in waits.values()), waits
    assert len(set(waits.values())) > 1, waits
    assert wait(3) == waits[3]


def test_equivalent_answers_grow_the_refresh_backoff_until_something_changes() -> None:
    """Metadata.update counts every answer that brings nothing new (equivalentResponseCount: no
    partition or leader the consumer did not know; updateLatestMetadata resets it otherwise),
    and timeToAllowUpdate holds a requested update back for the larger of the attempts backoff
    (retry.backoff.ms after an answer) and the backoff of that count. With a subscribed topic
    missing, every answer requests another update: the first answer brings t's partitions (count
    0), so the gaps are ~100 ms, ~100 ms (count 1), ~200 ms (count 2); an answer with a new leader
    for t-0 starts over at ~100 ms."""
    h = Harness(topics=("t", "x"), partitions={"t": 2}, seed=2)  # "x" does not exist
    h.start()
    h.answer_find_coordinator()

    def gap(response=None) -> int:
        (meta,) = h.pending(MetadataRequest)
        h.respond(meta, response or h.metadata_response(meta.message.topics))
        return h.wait_for(MetadataRequest)

    gaps = [gap(), gap(), gap()]
    moved = h.metadata_response(("t", "x"))
    t = moved.topics[0]
    t = attrs.evolve(t, partitions=(attrs.evolve(t.partitions[0], leader_id=1), *t.partitions[1:]))
    gaps += [gap(attrs.evolve(moved, topics=(t, *moved.topics[1:]))), gap()]
    bounds = [(80, 120), (80, 120), (160, 240), (80, 120), (80, 120)]
    for g, (lo, hi) in zip(gaps, bounds, strict=True):
        assert lo <= g <= hi, gaps


def test_backoff_bounds_hold_every_draw_and_draw_nothing() -> None:
    """ExponentialBackoff.bounds, which lets ConsumerMetadata skip drawing a refresh backoff whose
    whole range is already past: every value backoff(n) draws lies within bounds(n), and asking
    for the bounds leaves the random source untouched."""
    import random

    from members.backoff import ExponentialBackoff

    rng = random.Random(7)
    backoff = ExponentialBackoff(100, 1000, rng)
    for n in range(6):
        state = rng.getstate()
        lo, hi = backoff.bounds(n)
        assert rng.getstate() == state
        draws = [backoff.backoff(n) for _ in range(2_000)]
        assert lo <= min(draws) and max(draws) <= hi and hi - lo <= 0.4 * hi
    assert ExponentialBackoff(100, 100, rng).bounds(3) == (100, 100)
