"""close / crash / restart / unsubscribe / poll timeout (max.poll.interval.ms) / commits."""

from __future__ import annotations

from coordinator import protocol
from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from members.config import ConsumerConfig
from tests.members.harness import Harness, tps


def static_config(**kw) -> ConsumerConfig:
    kw.setdefault("enable_auto_commit", False)
    return ConsumerConfig(
        group_id="g", group_instance_id="i-1", partition_assignment_strategy=("range",), **kw
    )


def stable(h: Harness, *partitions: str, member_id: str = "m1", generation_id: int = 1) -> None:
    h.connect()
    h.join_and_sync(tps(*partitions), member_id=member_id, generation_id=generation_id)
    h.advance(h.now + 100)
    h.answer_offset_fetch()


def commit_response(request, error: Errors = Errors.NONE) -> OffsetCommitResponse:
    return protocol.offset_commit_response(request.message, error)


# --- close -----------------------------------------------------------------------------------------


def test_dynamic_close_revokes_then_sends_leave_group() -> None:
    h = Harness()
    stable(h, "t-0")
    h.call("close")
    leave = h.last(LeaveGroupRequest)
    assert leave.dst == "broker-1"
    assert [m.member_id for m in leave.message.members] == ["m1"]
    assert leave.message.members[0].reason == "the consumer is being closed"
    assert h.listener.calls[-1] == ("revoked", ["t-0"])
    # AbstractCoordinator.close waits for the LeaveGroup's answer (awaitPendingRequests)
    assert h.consumer.status == "CLOSING" and h.consumer.state == "UNJOINED"
    assert h.consumer.assignment == []
    h.answer_leave_group()
    assert h.consumer.status == "CLOSED"
    assert not h.timers
    sent = len(h.sent)
    h.advance(h.now + 100_000)
    assert len(h.sent) == sent


def test_static_member_never_sends_leave_group() -> None:
    h = Harness(static_config())
    stable(h, "t-0")
    h.call("close")
    assert h.count(LeaveGroupRequest) == 0
    assert h.listener.calls[-1] == ("revoked", ["t-0"])
    assert h.log.named("leave_group")[-1]["sent"] is False


def test_close_during_a_rebalance_loses_partitions() -> None:
    from tests.members.harness import CooperativeRange

    cfg = ConsumerConfig(
        group_id="g", partition_assignment_strategy=(CooperativeRange(),), enable_auto_commit=False
    )
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 3000)
    h.respond(h.pending(HeartbeatRequest)[-1], HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    # COOPERATIVE keeps t-0 through the JoinGroup; closing now is "mid-rebalance": lost.
    assert h.consumer.state == "PREPARING_REBALANCE"
    assert h.consumer.assignment == tps("t-0")
    h.call("close")
    assert h.listener.calls[-1] == ("lost", ["t-0"])
    assert h.count(LeaveGroupRequest) == 1


def test_close_while_stable_after_a_reset_loses_partitions() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 3000)
    h.respond(h.pending(HeartbeatRequest)[-1], HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    # onJoinPrepare ran at once (the application was in poll) and lost t-0 already
    assert h.listener.calls[-1] == ("lost", ["t-0"])
    h.call("close")
    assert h.listener.calls.count(("lost", ["t-0"])) == 1


def test_close_with_auto_commit_commits_first_then_leaves() -> None:
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 1000)  # ten polls of 500 records
    h.call("close")
    commit = h.last(OffsetCommitRequest)
    assert h.count(LeaveGroupRequest) == 0  # waits for the commit (commitSync)
    offset = commit.message.topics[0].partitions[0].committed_offset
    assert offset > 0
    h.respond(commit, commit_response(commit))
    assert h.count(LeaveGroupRequest) == 1
    assert h.consumer.committed == {tps("t-0")[0]: offset}


def test_close_commit_retries_a_retriable_failure_then_leaves() -> None:
    """ConsumerCoordinator.close -> maybeAutoCommitOffsetsSync -> commitOffsetsSync: a retriable
    failure is retried after the exponential backoff within the close timer."""
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 1000)
    h.call("close")
    first = h.last(OffsetCommitRequest)
    h.respond(first, commit_response(first, Errors.COORDINATOR_LOAD_IN_PROGRESS))
    assert h.count(LeaveGroupRequest) == 0
    h.advance(h.now + 200)  # 100 ms +- 20 %
    second = h.last(OffsetCommitRequest)
    assert second.correlation_id != first.correlation_id
    assert second.message.topics == first.message.topics
    h.respond(second, commit_response(second))
    assert h.count(LeaveGroupRequest) == 1
    h.answer_leave_group()
    assert h.consumer.commits[-1].error is None and h.consumer.status == "CLOSED"


def test_close_with_unknown_coordinator_rediscovers_it_to_commit_and_leave() -> None:
    """commitOffsetsSync first waits for the coordinator (ensureCoordinatorReady, bounded by the
    close timer), so a close during a coordinator failover still commits and sends LeaveGroup."""
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + cfg.heartbeat_interval_ms)
    h.respond(h.last(HeartbeatRequest), HeartbeatResponse(Errors.NOT_COORDINATOR))
    assert h.consumer.coordinator is None
    h.call("close")
    assert h.consumer.status == "CLOSING"
    (find,) = h.pending(FindCoordinatorRequest)
    h.respond(find, FindCoordinatorResponse(Errors.NONE, 2, "broker-2", 9092))
    commit = h.last(OffsetCommitRequest)
    assert commit.dst == "broker-2"
    h.respond(commit, commit_response(commit))
    assert h.last(LeaveGroupRequest).dst == "broker-2"
    h.answer_leave_group()
    assert h.consumer.status == "CLOSED"


def test_close_commit_gives_up_at_the_close_timeout() -> None:
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 1000)
    closed_at = h.now
    h.call("close")
    while h.consumer.status == "CLOSING" and h.now < closed_at + 40_000:
        for req in h.pending(OffsetCommitRequest):
            h.respond(req, commit_response(req, Errors.COORDINATOR_LOAD_IN_PROGRESS))
        h.advance(h.now + 50)
    assert h.consumer.status == "CLOSED"
    assert closed_at + 29_000 <= h.now <= closed_at + 30_100  # min(30 s, request.timeout.ms)
    assert h.consumer.commits[-1].error == "TIMEOUT"  # commitOffsetsSync returned false
    assert h.count(LeaveGroupRequest) == 1


def test_close_waits_for_every_request_pending_on_the_coordinator() -> None:
    """AbstractCoordinator.close waits for all requests pending on the coordinator, not only a
    LeaveGroup: a static member (no LeaveGroup) closed with a heartbeat in flight is CLOSING
    until that heartbeat is answered, and sends nothing meanwhile."""
    h = Harness(static_config())
    stable(h, "t-0")
    h.advance(h.now + 3000)
    (heartbeat,) = h.pending(HeartbeatRequest)
    h.call("close")
    assert h.count(LeaveGroupRequest) == 0
    assert h.consumer.status == "CLOSING"
    sent = len(h.sent)
    h.advance(h.now + 10_000)
    assert len(h.sent) == sent and h.consumer.status == "CLOSING"
    h.respond(heartbeat, HeartbeatResponse(Errors.NONE))
    assert h.consumer.status == "CLOSED"
    assert h.log.named("close_timed_out") == []


def test_close_ends_when_the_leave_group_is_disconnected_without_looking_up_the_coordinator() -> (
    None
):
    """A disconnect fails the pending LeaveGroup (the coordinator is marked unknown): nothing is
    left to wait for, so close() ends at once; it does not look the coordinator up again."""
    h = Harness()
    stable(h, "t-0")
    h.call("close")
    (leave,) = h.pending(LeaveGroupRequest)
    finds = h.count(FindCoordinatorRequest)
    h.disconnect(leave)
    assert h.consumer.status == "CLOSED"
    assert h.count(FindCoordinatorRequest) == finds


def test_close_mid_rebalance_waits_for_the_join_answer_and_sends_no_sync_group() -> None:
    """Closed while its JoinGroup is parked, the member sends LeaveGroup and waits for both
    answers. The JoinGroup answer finds a member that has left (UnjoinedGroupException): no
    SyncGroup follows; close() ends with the LeaveGroup's answer."""
    h = Harness()
    stable(h, "t-0")
    h.rejoin()
    (join,) = h.pending(JoinGroupRequest)
    h.call("close")
    assert len(h.pending(LeaveGroupRequest)) == 1
    sent = len(h.sent)
    h.respond(join, h.join_response(generation_id=2, leader="someone-else"))
    assert len(h.sent) == sent and h.consumer.status == "CLOSING"
    h.answer_leave_group()
    assert h.consumer.status == "CLOSED" and len(h.sent) == sent


def test_close_mid_rebalance_does_not_look_the_coordinator_up_again() -> None:
    """A NOT_COORDINATOR answer to the parked JoinGroup marks the coordinator unknown, which
    fails the pending LeaveGroup: close() ends at once, without a FindCoordinator (Kafka's
    close() has nothing that would look the coordinator up once it waits)."""
    h = Harness()
    stable(h, "t-0")
    h.rejoin()
    (join,) = h.pending(JoinGroupRequest)
    h.call("close")
    sent = len(h.sent)
    h.respond(join, h.join_response(error=Errors.NOT_COORDINATOR))
    assert h.consumer.coordinator is None
    assert h.consumer.status == "CLOSED" and len(h.sent) == sent


def test_close_timer_ends_the_wait_for_an_unanswered_leave_group() -> None:
    """The close timer, min(30 s, request.timeout.ms), bounds the wait: with request.timeout.ms
    at 40 s the LeaveGroup is still in flight when the 30 s run out; close() logs
    close_timed_out (Kafka: "Close timed out with 1 pending requests to coordinator") and ends."""
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        request_timeout_ms=40_000,
    )
    h = Harness(cfg)
    stable(h, "t-0")
    closed_at = h.now
    h.call("close")
    h.advance(closed_at + 30_000 - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + 30_000)
    assert h.consumer.status == "CLOSED"
    (timeout,) = h.log.named("close_timed_out")
    assert (timeout["coordinator"], timeout["pending"], timeout["apis"]) == (
        "broker-1",
        1,
        ["LeaveGroup"],
    )
    assert h.log.named("request_timeout") == []


def test_close_timeout_bounds_the_wait_and_is_capped_at_the_request_timeout() -> None:
    """close(Duration): the close timer is min(timeout, request.timeout.ms), so a 5 s close
    gives up on an unanswered LeaveGroup after 5 s, and a 60 s one after request.timeout.ms."""
    for timeout, waited in ((5_000, 5_000), (60_000, 30_000)):
        h = Harness()
        stable(h, "t-0")
        closed_at = h.now
        h.close(timeout_ms=timeout)
        assert len(h.pending(LeaveGroupRequest)) == 1
        h.advance(closed_at + waited - 1)
        assert h.consumer.status == "CLOSING"
        h.advance(closed_at + waited)
        assert h.consumer.status == "CLOSED"


def test_close_timeout_is_shared_by_the_final_commit_and_the_wait() -> None:
    """One timer bounds close() (ClassicKafkaConsumer.close): what the final commit used is
    gone for the wait that follows its LeaveGroup."""
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 1000)
    closed_at = h.now
    h.close(timeout_ms=5_000)
    h.advance(closed_at + 3_000)
    commit = h.last(OffsetCommitRequest)
    h.respond(commit, commit_response(commit))
    assert len(h.pending(LeaveGroupRequest)) == 1
    h.advance(closed_at + 5_000 - 1)
    assert h.consumer.status == "CLOSING"
    h.advance(closed_at + 5_000)
    assert h.consumer.status == "CLOSED"


def test_close_with_no_time_sends_the_leave_group_and_is_closed_at_once() -> None:
    """close(Duration.ZERO): maybeLeaveGroup still sends the LeaveGroup; awaitPendingRequests
    with an expired timer returns at once (close_timed_out, one pending request)."""
    h = Harness()
    stable(h, "t-0")
    h.close(timeout_ms=0)
    assert h.consumer.status == "CLOSED"
    assert len(h.pending(LeaveGroupRequest)) == 1
    (timeout,) = h.log.named("close_timed_out")
    assert (timeout["pending"], timeout["apis"]) == (1, ["LeaveGroup"])


def test_close_with_no_time_and_no_coordinator_looks_it_up_and_gives_the_commit_up() -> None:
    """With the coordinator unknown, close(Duration.ZERO)'s commitOffsetsSync starts a lookup
    (ensureCoordinatorReady) and returns false at once; without a coordinator there is no
    LeaveGroup and nothing to wait for."""
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + cfg.heartbeat_interval_ms)
    h.respond(h.last(HeartbeatRequest), HeartbeatResponse(Errors.NOT_COORDINATOR))
    h.answer_find_coordinator()  # the heartbeat thread's lookup: found again ...
    h.mark_coordinator_unknown()  # ... and lost again, the new lookup unanswered
    finds = h.count(FindCoordinatorRequest)
    h.close(timeout_ms=0)
    assert h.consumer.status == "CLOSED"
    assert h.consumer.commits[-1].error == "TIMEOUT"
    assert h.count(LeaveGroupRequest) == 0
    assert h.count(FindCoordinatorRequest) == finds  # the lookup in flight is reused
    assert h.log.named("close_timed_out") == []


def test_a_negative_close_timeout_is_refused() -> None:
    """ClassicKafkaConsumer.close(Duration): "The timeout cannot be negative."."""
    import pytest

    h = Harness()
    stable(h, "t-0")
    with pytest.raises(ValueError, match="cannot be negative"):
        h.close(timeout_ms=-1)
    assert h.consumer.status == "RUNNING"


# --- crash / restart -----------------------------------------------------------------------------


def test_crash_is_silent_and_restart_rejoins_as_a_new_dynamic_member() -> None:
    h = Harness()
    stable(h, "t-0")
    assert h.call("crash") == []
    sent = len(h.sent)
    h.advance(h.now + 60_000)
    assert len(h.sent) == sent
    assert h.consumer.assignment == []  # a dead process consumes nothing
    h.call("restart")
    h.answer_metadata()
    h.answer_find_coordinator()
    assert h.last(JoinGroupRequest).message.member_id == ""
    assert h.consumer.incarnation == 1


def test_restarted_static_member_rejoins_with_its_instance_id() -> None:
    h = Harness(static_config())
    stable(h, "t-0")
    h.call("crash")
    h.call("restart")
    h.answer_metadata()
    h.answer_find_coordinator()
    req = h.last(JoinGroupRequest).message
    assert (req.member_id, req.group_instance_id) == ("", "i-1")


def test_responses_to_a_crashed_incarnation_are_ignored() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 3000)
    hb = h.pending(HeartbeatRequest)[-1]
    h.call("restart")
    h.respond(hb, HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    assert h.log.named("generation_reset") == []


# --- max.poll.interval.ms ---------------------------------------------------------------------------


def test_poll_timeout_dynamic_member_leaves_and_rejoins_on_next_poll() -> None:
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        max_poll_interval_ms=10_000,
        session_timeout_ms=10_000,
    )
    h = Harness(cfg)
    stable(h, "t-0")
    t0 = h.now
    h.call("stall", 15_000)
    # heartbeats continue while the application is stuck
    for _ in range(3):
        h.advance(h.now + 3000)
        for hb in h.pending(HeartbeatRequest):
            h.respond(hb, HeartbeatResponse(Errors.NONE))
    h.advance(t0 + 10_000 - 1)
    assert h.count(LeaveGroupRequest) == 0
    h.advance(t0 + 10_000)
    leave = h.last(LeaveGroupRequest)
    assert leave.message.members[0].reason == "consumer poll timeout has expired."
    assert h.consumer.state == "UNJOINED" and h.consumer.member_id == ""
    assert h.listener.calls == [("assigned", ["t-0"])]  # callbacks wait for the next poll
    joins = h.count(JoinGroupRequest)
    h.advance(t0 + 15_000)  # the application polls again
    assert h.listener.calls[-1] == ("lost", ["t-0"])
    assert h.count(JoinGroupRequest) == joins + 1
    assert h.last(JoinGroupRequest).message.member_id == ""


def test_poll_timeout_static_member_sends_no_leave_group() -> None:
    h = Harness(static_config(max_poll_interval_ms=10_000, session_timeout_ms=10_000))
    stable(h, "t-0")
    t0 = h.now
    h.call("stall", 20_000)
    while h.now < t0 + 10_000:
        h.advance(h.now + 1000)
        for hb in h.pending(HeartbeatRequest):
            h.respond(hb, HeartbeatResponse(Errors.NONE))
    assert h.count(LeaveGroupRequest) == 0
    assert h.log.named("poll_timeout")
    assert h.consumer.member_id == ""


# --- subscribe / unsubscribe ------------------------------------------------------------------------


def test_unsubscribe_revokes_and_leaves() -> None:
    h = Harness()
    stable(h, "t-0")
    h.call("subscribe", [])
    assert h.listener.calls[-1] == ("revoked", ["t-0"])
    assert h.last(LeaveGroupRequest).message.members[0].reason == (
        "the consumer unsubscribed from all topics"
    )
    joins = h.count(JoinGroupRequest)
    h.advance(h.now + 10_000)
    assert h.count(JoinGroupRequest) == joins  # no subscription, no join


# --- commits ------------------------------------------------------------------------------------------


def test_manual_commit_carries_generation_member_and_positions() -> None:
    h = Harness()
    stable(h, "t-0", "t-1", generation_id=7)
    h.advance(h.now + 200)
    h.call("commit")
    req = h.last(OffsetCommitRequest).message
    assert (req.generation_id, req.member_id, req.group_id) == (7, "m1", "g")
    offsets = {
        (t.name, p.partition_index): p.committed_offset for t in req.topics for p in t.partitions
    }
    assert offsets == {
        ("t", 0): h.consumer.positions[tps("t-0")[0]],
        ("t", 1): h.consumer.positions[tps("t-1")[0]],
    }
    assert all(v > 0 for v in offsets.values())


def test_manual_commit_retries_retriable_failures() -> None:
    """commitSync (commitOffsetsSync) retries retriable errors with the exponential backoff until
    default.api.timeout.ms; only the final outcome is the application's."""
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 200)
    h.call("commit")
    first = h.last(OffsetCommitRequest)
    h.respond(first, commit_response(first, Errors.NOT_COORDINATOR))
    assert h.consumer.commits[-1].done is False
    (find,) = h.pending(FindCoordinatorRequest)
    h.respond(find, FindCoordinatorResponse(Errors.NONE, 1, "broker-1", 9092))
    h.advance(h.now + 200)
    second = h.last(OffsetCommitRequest)
    assert second.correlation_id != first.correlation_id
    h.respond(second, commit_response(second))
    op = h.consumer.commits[-1]
    assert op.done and op.error is None and op.purpose == "manual"


def test_commit_illegal_generation_is_commit_failed_and_rejoins_keeping_member_id() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 100)
    h.call("commit")
    commit = h.last(OffsetCommitRequest)
    h.respond(commit, commit_response(commit, Errors.ILLEGAL_GENERATION))
    assert h.consumer.commits[-1].error == "COMMIT_FAILED"
    assert h.consumer.generation_id == -1 and h.consumer.member_id == "m1"
    assert h.listener.calls[-1] == ("lost", ["t-0"])
    assert h.last(JoinGroupRequest).message.member_id == "m1"


def test_commit_unknown_member_after_generation_moved_on_is_rebalance_in_progress() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 100)
    h.call("commit")
    commit = h.last(OffsetCommitRequest)
    h.rejoin()
    h.advance(h.now + 100)  # rejoining: PREPARING_REBALANCE, generation unchanged so far
    (join,) = h.pending(JoinGroupRequest)
    h.respond(join, h.join_response(member_id="m1", error=Errors.MEMBER_ID_REQUIRED))
    h.respond(commit, commit_response(commit, Errors.UNKNOWN_MEMBER_ID))
    assert h.consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"
    assert h.consumer.state == "PREPARING_REBALANCE"


def test_commit_rebalance_in_progress_requests_a_rejoin() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 100)
    h.call("commit")
    commit = h.last(OffsetCommitRequest)
    h.respond(commit, commit_response(commit, Errors.REBALANCE_IN_PROGRESS))
    assert h.consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"
    assert h.consumer.state == "PREPARING_REBALANCE"


def test_commit_outside_stable_fails_locally() -> None:
    h = Harness()
    stable(h, "t-0")
    h.advance(h.now + 100)
    h.rejoin()
    h.advance(h.now + 100)
    assert h.consumer.state == "PREPARING_REBALANCE"
    h.consumer.fetch.set_owned(tps("t-0"), h.now)
    h.consumer.fetch.positions[tps("t-0")[0]] = 5  # something to commit
    h.consumer.fetch.invalidate()
    n = h.count(OffsetCommitRequest)
    h.call("commit")
    assert h.count(OffsetCommitRequest) == n
    assert h.consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"


def test_auto_commit_every_interval_and_before_rejoining() -> None:
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    t_sync = 0
    h.advance(t_sync + 4_999)
    assert h.count(OffsetCommitRequest) == 0
    h.advance(t_sync + 5_000)
    commit = h.last(OffsetCommitRequest)
    assert commit.message.generation_id == 1
    h.respond(commit, commit_response(commit))
    for hb in h.pending(HeartbeatRequest):
        h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    h.advance(h.now + 100)
    # onJoinPrepare: commit with the current generation, JoinGroup only after it completes
    prepare = h.last(OffsetCommitRequest)
    assert prepare.correlation_id != commit.correlation_id
    assert len(h.pending(JoinGroupRequest)) == 0
    assert h.listener.calls == [("assigned", ["t-0"])]
    h.respond(prepare, commit_response(prepare))
    assert h.listener.calls[-1] == ("revoked", ["t-0"])
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.consumer.commits[-1].purpose == "join-prepare"


def test_no_auto_commit_while_a_rebalance_is_pending() -> None:
    """ConsumerCoordinator.poll returns before maybeAutoCommitOffsetsAsync while the join is not
    complete (ensureActiveGroup with a zero timer fails): a JoinGroup held by the coordinator
    for longer than auto.commit.interval.ms causes no auto-commit, not even a local failure."""
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("cooperative-sticky",))
    h = Harness(cfg)
    stable(h, "t-0")
    for hb in h.pending(HeartbeatRequest):
        h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    h.advance(h.now + 3_000)
    for hb in h.pending(HeartbeatRequest):
        h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    (prepare,) = h.pending(OffsetCommitRequest)  # onJoinPrepare's commit
    h.respond(prepare, commit_response(prepare))
    assert len(h.pending(JoinGroupRequest)) == 1
    commits = len(h.consumer.commits)
    h.advance(h.now + 20_000)  # the coordinator holds the JoinGroup
    assert len(h.consumer.commits) == commits
    assert h.log.named("commit_failed") == []
    assert h.count(OffsetCommitRequest) == 1
    h.join_and_sync(tps("t-0"), member_id="m1", generation_id=2)
    h.advance(h.now + 5_000)  # the interval restarts at onJoinComplete
    assert h.count(OffsetCommitRequest) == 2
    assert h.consumer.commits[-1].purpose == "auto"


def test_fenced_auto_commit_fails_the_consumer_at_the_next_poll() -> None:
    h = Harness(static_config(enable_auto_commit=True))
    stable(h, "t-0")
    h.advance(5_000)
    commit = h.last(OffsetCommitRequest)
    assert commit.message.group_instance_id == "i-1"
    h.respond(commit, commit_response(commit, Errors.FENCED_INSTANCE_ID))
    h.advance(h.now + 100)
    assert h.consumer.fatal_error == "FENCED_INSTANCE_ID"


def test_positions_advance_by_max_poll_records_spread_over_fetchable_partitions() -> None:
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        max_poll_records=10,
        poll_interval_ms=100,
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0", "t-1", "t-2"), member_id="m1")
    h.advance(100)  # poll: OffsetFetch goes out, nothing fetchable yet
    h.answer_offset_fetch({"t-1": 40})
    h.advance(600)  # polls at 200..600: 5 batches of 10 over three partitions (4, 3, 3)
    p = h.consumer.positions_at(h.now)
    assert [p[tp] for tp in tps("t-0", "t-1", "t-2")] == [20, 55, 15]
    h.call("subscribe", ["u"])  # the application is in poll(): it rejoins at once
    assert h.listener.calls[-1] == ("revoked", ["t-0", "t-1", "t-2"])
    assert h.consumer.positions == {}


def test_eager_member_stops_fetching_while_its_join_prepare_commit_runs() -> None:
    cfg = ConsumerConfig(group_id="g", partition_assignment_strategy=("range",))
    h = Harness(cfg)
    stable(h, "t-0")
    h.advance(h.now + 3000)
    for hb in h.pending(HeartbeatRequest):
        h.respond(hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    h.advance(h.now + 100)
    prepare = h.last(OffsetCommitRequest)
    sent = prepare.message.topics[0].partitions[0].committed_offset
    h.advance(h.now + 1000)  # ten polls while the commit is outstanding
    assert (
        h.consumer.positions_at(h.now)[tps("t-0")[0]] == sent
    )  # pending revocation: nothing fetched
    h.respond(prepare, commit_response(prepare))
    assert h.listener.calls[-1] == ("revoked", ["t-0"])


def test_offsets_of_partitions_gained_during_an_offset_fetch_are_fetched_next() -> None:
    from coordinator.protocol import OffsetFetchRequest

    h = Harness(
        ConsumerConfig(
            group_id="g", partition_assignment_strategy=("range",), enable_auto_commit=False
        )
    )
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    first = h.last(OffsetFetchRequest)
    h.rejoin()
    h.join_and_sync(tps("t-0", "t-1"), member_id="m1", generation_id=2)
    assert h.count(OffsetFetchRequest) == 1  # one lookup at a time
    h.answer_offset_fetch({"t-0": 7})
    second = h.last(OffsetFetchRequest)
    assert second.correlation_id != first.correlation_id
    assert [p for t in second.message.topics for p in t.partition_indexes] == [1]
    h.answer_offset_fetch({"t-1": 9})
    assert h.consumer.positions_at(h.now) == {tps("t-0")[0]: 7, tps("t-1")[0]: 9}


def _fetch_gaps(h: Harness, failures: int, fail) -> list[int]:
    """Fail the pending OffsetFetch ``failures`` times with ``fail(h)``; the gaps (ms) between
    each failure and the OffsetFetch that follows it."""
    from coordinator.protocol import OffsetFetchRequest

    gaps = []
    for _ in range(failures):
        failed_at = h.now
        sent = h.count(OffsetFetchRequest)
        fail(h)
        while h.count(OffsetFetchRequest) == sent:
            h.answer_find_coordinator()
            h.advance(h.now + 1)
        gaps.append(h.now - failed_at)
    return gaps


def _backoff_windows(count: int) -> list[tuple[int, int]]:
    """ExponentialBackoff(100 ms, x2, 1 s, 20 % jitter): the range of attempt n's backoff (the
    exponent stops where the term reaches the maximum, and the jittered value is capped)."""
    terms = [min(100 * 2**n, 1000) for n in range(count)]
    return [(int(term * 0.8), min(int(term * 1.2), 1000)) for term in terms]


def test_offset_fetch_retries_back_off_exponentially() -> None:
    """ConsumerCoordinator.fetchCommittedOffsets sleeps retryBackoff.backoff(attempts++), an
    ExponentialBackoff (KIP-580: retry.backoff.ms doubling up to retry.backoff.max.ms, +-20 %),
    between its attempts: UNSTABLE_OFFSET_COMMIT answers are retried after ~100, 200, 400, 800,
    then 1000 ms."""
    cfg = ConsumerConfig(
        group_id="g", partition_assignment_strategy=("range",), enable_auto_commit=False
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    gaps = _fetch_gaps(
        h, 6, lambda h: h.answer_offset_fetch(errors={"t-0": Errors.UNSTABLE_OFFSET_COMMIT})
    )
    for gap, (low, high) in zip(gaps, _backoff_windows(6), strict=True):
        assert low <= gap <= high, gaps
    h.answer_offset_fetch({"t-0": 5})
    assert h.consumer.positions_at(h.now) == {tps("t-0")[0]: 5}


def test_a_disconnected_offset_fetch_is_retried_after_the_backoff() -> None:
    """A disconnect fails the OffsetFetch with a retriable DisconnectException: fetchCommitted
    Offsets sleeps the backoff before it tries again (the coordinator, found again meanwhile,
    does not bring the retry forward), and consecutive failures back off further."""
    from coordinator.protocol import OffsetFetchRequest

    cfg = ConsumerConfig(
        group_id="g", partition_assignment_strategy=("range",), enable_auto_commit=False
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    gaps = _fetch_gaps(h, 3, lambda h: h.disconnect(h.pending(OffsetFetchRequest)[0]))
    for gap, (low, high) in zip(gaps, _backoff_windows(3), strict=True):
        assert low <= gap <= high, gaps


def test_a_successful_offset_fetch_resets_the_backoff() -> None:
    """The attempts count belongs to one lookup: after a success, the next lookup's first retry
    waits the first backoff again."""
    cfg = ConsumerConfig(
        group_id="g", partition_assignment_strategy=("range",), enable_auto_commit=False
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    unstable = lambda h: h.answer_offset_fetch(errors={"t-0": Errors.UNSTABLE_OFFSET_COMMIT})  # noqa: E731
    _fetch_gaps(h, 3, unstable)
    h.answer_offset_fetch({"t-0": 5})
    h.rejoin()
    h.join_and_sync(tps("t-0", "t-1"), member_id="m1", generation_id=2)
    (gap,) = _fetch_gaps(h, 1, unstable)
    low, high = _backoff_windows(1)[0]
    assert low <= gap <= high


def test_an_offset_fetch_retry_waits_out_its_backoff_whatever_wakes_the_application() -> None:
    """The application sleeps in fetchCommittedOffsets during the backoff: an auto-commit falling
    due meanwhile (the application wakes for it) does not send the OffsetFetch early."""
    from coordinator.protocol import OffsetFetchRequest

    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        auto_commit_interval_ms=5_000,
        retry_backoff_ms=1_000,
        retry_backoff_max_ms=10_000,
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    joined = h.now
    unstable = lambda h: h.answer_offset_fetch(errors={"t-0": Errors.UNSTABLE_OFFSET_COMMIT})  # noqa: E731
    unstable(h)
    h.advance(joined + 4_500)  # the retry (after ~1 s) is out, unanswered until now
    assert h.count(OffsetFetchRequest) == 2
    failed_at = h.now
    unstable(h)  # the second failure: a backoff of 2 s +- 20 %
    assert h.timers[f"poll:{h.consumer.incarnation}"] == joined + 5_000  # the auto-commit
    h.advance(failed_at + 1_599)
    assert h.count(OffsetFetchRequest) == 2
    h.advance(failed_at + 2_400)
    assert h.count(OffsetFetchRequest) == 3


def test_processing_model_slow_batches_overrun_max_poll_interval() -> None:
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        enable_auto_commit=False,
        max_poll_interval_ms=10_000,
        session_timeout_ms=10_000,
        max_poll_records=100,
        processing_time_per_record_ms=120.0,  # a full batch takes 12 s
    )
    h = Harness(cfg)
    h.connect()
    h.join_and_sync(tps("t-0"), member_id="m1")
    t_sync = h.now
    h.advance(t_sync + 100)  # a poll: the committed offset is looked up, nothing to fetch yet
    h.answer_offset_fetch()
    t_batch = h.now + 100
    h.advance(t_batch)  # this poll returns 100 records: busy for 12 s
    for _ in range(4):
        h.advance(h.now + 3000)
        for hb in h.pending(HeartbeatRequest):
            h.respond(hb, HeartbeatResponse(Errors.NONE))
    assert (
        h.last(LeaveGroupRequest).message.members[0].reason == "consumer poll timeout has expired."
    )
    assert h.log.named("poll_timeout")[0]["t_ms"] == t_batch + 10_000


def test_join_prepare_stops_waiting_for_its_commit_at_the_rebalance_timeout() -> None:
    """ConsumerCoordinator.onJoinPrepare waits for its auto-commit at most until joinPrepareTimer
    (the rebalance timeout) expires; the polling application then joins without an answer, and a
    retry backoff after a retriable failure never reaches past that deadline."""
    cfg = ConsumerConfig(
        group_id="g",
        partition_assignment_strategy=("range",),
        max_poll_interval_ms=20_000,
        session_timeout_ms=60_000,
    )
    h = Harness(cfg)
    stable(h, "t-0")
    h.rejoin()
    began = h.now
    prepare = h.last(OffsetCommitRequest)
    h.advance(began + 20_000 - 50)
    h.respond(prepare, commit_response(prepare, Errors.COORDINATOR_LOAD_IN_PROGRESS))
    h.advance(began + 20_000 - 1)
    assert h.pending(JoinGroupRequest) == []
    assert h.count(OffsetCommitRequest) == 1  # retry.backoff.ms would end past the deadline
    h.advance(began + 20_000)
    assert len(h.pending(JoinGroupRequest)) == 1
    assert h.log.named("join_prepare_commit_timeout")[0]["t_ms"] == began + 20_000
