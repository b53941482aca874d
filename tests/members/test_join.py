"""The join sequence (joinGroupIfNeeded): FindCoordinator, MEMBER_ID_REQUIRED, SyncGroup."""

from __future__ import annotations

from assignors.api import PartitionAssignor
from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    MetadataRequest,
    SyncGroupRequest,
)
from members.config import ConsumerConfig
from members.consumer_protocol import decode_assignment, decode_subscription
from tests.members.harness import TP, Harness, tps


def test_start_discovers_coordinator_then_joins_with_empty_member_id() -> None:
    h = Harness()
    h.start()
    assert h.count(FindCoordinatorRequest) == 1
    assert h.last(FindCoordinatorRequest).dst == "broker-0"
    assert h.last(MetadataRequest).message.topics == ("t",)
    assert h.count(JoinGroupRequest) == 0  # coordinator unknown yet
    h.answer_metadata()
    h.answer_find_coordinator(node_id=1)
    join = h.last(JoinGroupRequest)
    assert join.dst == "broker-1"
    req = join.message
    assert req.member_id == "" and req.group_id == "g" and req.protocol_type == "consumer"
    assert req.session_timeout_ms == 45000 and req.rebalance_timeout_ms == 300000
    assert [p.name for p in req.protocols] == ["range"]
    sub = decode_subscription(req.protocols[0].metadata)
    assert sub.topics == ("t",) and sub.generation_id == -1 and sub.owned_partitions == ()
    assert h.consumer.state == "PREPARING_REBALANCE"
    # JoinGroup's request timeout is max(request.timeout.ms, rebalance timeout + 5 s)
    assert h.timers[f"request-{join.correlation_id}"] == h.now + 305000


def test_member_id_required_retries_at_once_with_the_given_id() -> None:
    h = Harness()
    h.connect()
    first = h.last(JoinGroupRequest)
    h.respond(first, h.join_response(member_id="consumer-abc", error=Errors.MEMBER_ID_REQUIRED))
    second = h.last(JoinGroupRequest)
    assert second.correlation_id != first.correlation_id
    assert second.message.member_id == "consumer-abc"
    assert h.consumer.generation_id == -1 and h.consumer.member_id == "consumer-abc"
    assert h.listener.calls == []  # onJoinPrepare is not run again on retries


def test_leader_runs_the_assignor_over_all_subscriptions() -> None:
    h = Harness(partitions={"t": 4})
    h.connect()
    h.respond(
        h.last(JoinGroupRequest),
        h.join_response(member_id="m1", others=[("m2", ["t"], [])]),
    )
    assert h.consumer.is_leader and h.consumer.state == "COMPLETING_REBALANCE"
    sync = h.last(SyncGroupRequest).message
    assert sync.generation_id == 1 and sync.member_id == "m1" and sync.protocol_name == "range"
    got = {a.member_id: decode_assignment(a.assignment)[0] for a in sync.assignments}
    assert got == {"m1": tps("t-0", "t-1"), "m2": tps("t-2", "t-3")}
    h.respond(h.last(SyncGroupRequest), h.sync_response(tps("t-0", "t-1")))
    assert h.consumer.state == "STABLE"
    assert h.consumer.assignment == tps("t-0", "t-1")
    assert h.listener.calls == [("assigned", ["t-0", "t-1"])]  # no revoke before the first join


def test_leader_fetches_metadata_for_topics_only_others_subscribe() -> None:
    h = Harness(partitions={"t": 2, "u": 2})
    h.connect()
    metadata_before = h.count(MetadataRequest)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["u"], [])]))
    assert h.count(SyncGroupRequest) == 0  # waits for metadata of "u"
    assert h.count(MetadataRequest) == metadata_before + 1
    assert set(h.last(MetadataRequest).message.topics) == {"t", "u"}
    h.answer_metadata()
    got = {
        a.member_id: decode_assignment(a.assignment)[0]
        for a in h.last(SyncGroupRequest).message.assignments
    }
    assert got == {"m1": tps("t-0", "t-1"), "m2": tps("u-0", "u-1")}


def test_leader_waiting_for_metadata_blocks_the_heartbeat_thread() -> None:
    """JoinGroupResponseHandler runs onLeaderElected inside synchronized (AbstractCoordinator.this)
    and HeartbeatThread.run takes the same lock on every pass, so while the leader waits for
    metadata (ensureFreshMetadata) no heartbeat goes out; the heartbeat thread goes on once the
    SyncGroup is sent, at once if a heartbeat fell due meanwhile."""
    h = Harness(partitions={"t": 2, "u": 2})
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["u"], [])]))
    assert h.count(SyncGroupRequest) == 0  # waits for the metadata of "u"
    interval = h.config.heartbeat_interval_ms
    h.advance(h.now + 3 * interval)
    assert h.count(HeartbeatRequest) == 0
    h.answer_metadata()
    assert h.count(SyncGroupRequest) == 1
    h.advance(h.now)
    (hb,) = h.pending(HeartbeatRequest)
    assert hb.message.generation_id == 1 and hb.message.member_id == "m1"


def test_leader_that_leaves_while_it_waits_for_metadata_rejoins_when_subscribed_again() -> None:
    """A leader waiting for the metadata of a topic only another member subscribes to, whose
    application unsubscribes (leaving the group) and subscribes again meanwhile, rejoins once the
    metadata arrives: the pending join fails (as SyncGroupResponseHandler fails a join whose
    generation was cleared, ILLEGAL_GENERATION, retried at once) instead of staying pending for
    good."""
    h = Harness(partitions={"t": 2, "u": 2})
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["u"], [])]))
    assert h.count(SyncGroupRequest) == 0  # waits for the metadata of "u"
    h.call("subscribe", [])
    h.answer_leave_group()
    assert h.consumer.generation_id == -1 and h.consumer.state == "UNJOINED"
    h.call("subscribe", ["t"])
    assert h.count(JoinGroupRequest) == 1
    h.answer_metadata()
    assert h.count(SyncGroupRequest) == 0
    (join,) = h.pending(JoinGroupRequest)
    assert join.message.member_id == ""
    assert join.message.reason == "rebalance failed due to IllegalGenerationException"


def test_leader_wait_ends_with_an_older_answer_without_the_new_topics() -> None:
    """ConsumerNetworkClient.awaitMetadataUpdate returns on the next metadata update, whatever
    request it answers: a refresh already out when the leader asks for the topics only others
    subscribe to (requestUpdateForNewTopics) ends the wait without them, and the leader assigns
    without their partitions. The answer leaves needPartialUpdate set, so the topics are asked
    for once Metadata.timeToAllowUpdate allows (the refresh backoff after that answer); when they
    arrive, the leader's assignment snapshot no longer matches and it rejoins."""
    h = Harness(partitions={"t": 2, "u": 2})
    h.connect()
    h.advance(h.now + h.config.metadata_max_age_ms)  # the periodic refresh goes out
    (older,) = h.pending(MetadataRequest)
    assert older.message.topics == ("t",)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["u"], [])]))
    assert h.pending(SyncGroupRequest) == [] and h.pending(MetadataRequest) == [older]
    h.respond(older, h.metadata_response(older.message.topics))
    (sync,) = h.pending(SyncGroupRequest)
    got = {a.member_id: decode_assignment(a.assignment)[0] for a in sync.message.assignments}
    assert got == {"m1": tps("t-0", "t-1"), "m2": []}
    assert h.pending(MetadataRequest) == []
    h.advance(h.now + 120)  # retry.backoff.ms +- 20 %
    (newer,) = h.pending(MetadataRequest)
    assert newer.message.topics == ("t", "u")
    h.respond(sync, h.sync_response(tps("t-0", "t-1")))
    assert h.consumer.state == "STABLE" and not h.consumer.rejoin_needed
    h.respond(newer, h.metadata_response(newer.message.topics))
    assert h.log.named("rejoin_requested")[-1]["reason"] == "cached metadata has changed"


class ExtraTopicAssignor(PartitionAssignor):
    """A custom assignor that also hands out a topic nobody subscribed to ("x")."""

    name = "extra-topic"

    def assign(self, cluster, subscriptions):
        members = sorted(subscriptions)
        return {
            m: ([TP("t", 0), TP("x", 0)] if m == members[-1] else [TP("t", 1)]) for m in members
        }


def test_custom_assignor_handing_out_unsubscribed_topics_extends_the_group_subscription() -> None:
    """ConsumerCoordinator.maybeUpdateGroupSubscription (custom assignors only): topics assigned
    beyond what the group subscribes to join the group subscription; the leader fetches their
    metadata before its SyncGroup and takes the assignment snapshot after, so a later change of
    those topics makes it rejoin like any of the group's topics."""
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=(ExtraTopicAssignor(),),
        enable_auto_commit=False,
    )
    h = Harness(cfg, partitions={"t": 2, "x": 1})
    h.connect()
    metadata_before = h.count(MetadataRequest)
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m1", others=[("m2", ["t"], [])]))
    assert h.count(SyncGroupRequest) == 0  # waits for the metadata of "x"
    assert h.count(MetadataRequest) == metadata_before + 1
    assert set(h.last(MetadataRequest).message.topics) == {"t", "x"}
    assert h.log.named("group_subscription_extended")[0]["topics"] == ["x"]
    h.answer_metadata()
    (sync,) = h.pending(SyncGroupRequest)
    got = {a.member_id: decode_assignment(a.assignment)[0] for a in sync.message.assignments}
    assert got == {"m1": tps("t-1"), "m2": tps("t-0", "x-0")}
    h.respond(sync, h.sync_response(tps("t-1")))
    assert h.consumer.state == "STABLE" and not h.consumer.rejoin_needed
    h.partitions["x"] = 2  # "x" grows: the leader's next metadata refresh sees it
    h.advance(h.now + cfg.metadata_max_age_ms)
    h.answer_metadata()
    h.advance(h.now + 100)
    assert h.log.named("rejoin_requested")[-1]["reason"] == "cached metadata has changed"


def test_follower_sends_an_empty_sync_group() -> None:
    h = Harness()
    h.connect()
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m2", leader="m1"))
    sync = h.last(SyncGroupRequest).message
    assert sync.assignments == () and sync.member_id == "m2" and not h.consumer.is_leader
    h.respond(h.last(SyncGroupRequest), h.sync_response(tps("t-2")))
    assert h.consumer.assignment == [TP("t", 2)]


def test_heartbeats_only_after_join_and_on_their_interval() -> None:
    h = Harness()
    h.connect()
    h.advance(10_000)  # PREPARING_REBALANCE: the heartbeat thread sends nothing
    assert h.count(HeartbeatRequest) == 0
    t_join = h.now
    h.respond(h.last(JoinGroupRequest), h.join_response(member_id="m2", leader="m1"))
    h.advance(t_join + 2999)
    assert h.count(HeartbeatRequest) == 0
    h.advance(t_join + 3000)  # COMPLETING_REBALANCE heartbeats too
    hb = h.last(HeartbeatRequest)
    assert hb.message.generation_id == 1 and hb.message.member_id == "m2"
    h.respond(hb, HeartbeatResponse(Errors.NONE))
    h.advance(t_join + 5999)
    assert h.count(HeartbeatRequest) == 1
    h.advance(t_join + 6000)
    assert h.count(HeartbeatRequest) == 2


def test_static_member_joins_with_instance_id_and_no_member_id_round() -> None:
    cfg = ConsumerConfig(
        group_id="g", group_instance_id="i-1", partition_assignment_strategy=("range",)
    )
    h = Harness(cfg)
    h.connect()
    req = h.last(JoinGroupRequest).message
    assert req.group_instance_id == "i-1" and req.member_id == ""


def test_subscription_carries_owned_partitions_and_generation_on_rejoin() -> None:
    h = Harness()
    h.connect()
    h.join_and_sync(tps("t-1", "t-3"), member_id="m1", generation_id=4)
    h.call("subscribe", ["t", "u"])
    h.advance(h.now + 100)  # next poll rejoins: subscription changed
    req = h.last(JoinGroupRequest).message
    sub = decode_subscription(req.protocols[0].metadata)
    assert sub.topics == ("t", "u") and req.member_id == "m1"
    # EAGER: everything was revoked in onJoinPrepare, so nothing is owned any more
    assert sub.owned_partitions == () and sub.generation_id == 4
