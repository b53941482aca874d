"""The consumer's parts tested alone: typed timer keys, Kafka's Heartbeat."""

from __future__ import annotations

import random

from coordinator.effects import CancelTimer, SetTimer
from members.backoff import ExponentialBackoff
from members.heartbeat import Heartbeat
from members.timers import (
    TIMER_KINDS,
    TIMER_NAMES,
    CloseTimer,
    ConsumerTimers,
    HeartbeatTimer,
    PollTimer,
    RequestTimeout,
)

# --- timers -------------------------------------------------------------------------------


def test_timer_keys_render_as_the_runner_and_the_log_know_them() -> None:
    assert HeartbeatTimer(2).render() == "heartbeat:2"
    assert RequestTimeout(17).render() == "request-17"
    assert TIMER_NAMES == (
        "poll",
        "heartbeat",
        "drive",
        "join-retry",
        "find-coordinator",
        "metadata",
        "commit-retry",
        "join-prepare",
        "close",
    )
    assert HeartbeatTimer(2) == HeartbeatTimer(2) != PollTimer(2)  # the type is part of the key


def test_parse_gives_back_this_incarnation_s_keys_only() -> None:
    timers = ConsumerTimers(3)
    assert timers.parse("poll:3") == PollTimer(3)
    assert timers.parse("close:3") == CloseTimer(3)
    assert timers.parse("request-42") == RequestTimeout(42)
    assert timers.parse("poll:2") is None  # an earlier incarnation's
    assert timers.parse("request-x") is None
    assert timers.parse("nonsense") is None


def test_the_table_remembers_deadlines_and_returns_the_effects() -> None:
    timers = ConsumerTimers(0)
    assert timers.deadline(PollTimer) is None
    assert timers.set(PollTimer, 500) == SetTimer("poll:0", 500)
    assert timers.deadline(PollTimer) == 500
    assert timers.set(PollTimer, 700) == SetTimer("poll:0", 700)  # moved
    assert timers.deadline(PollTimer) == 700
    timers.forget(PollTimer)
    assert timers.deadline(PollTimer) is None
    timers.set(HeartbeatTimer, 10)
    assert timers.cancel(HeartbeatTimer) == CancelTimer("heartbeat:0")
    assert timers.deadline(HeartbeatTimer) is None
    assert timers.cancel_all() == [CancelTimer(f"{k.name}:0") for k in TIMER_KINDS]


# --- heartbeat ------------------------------------------------------------------------------


def _heartbeat(seed: int = 1) -> Heartbeat:
    return Heartbeat(
        session_timeout_ms=45000,
        heartbeat_interval_ms=3000,
        max_poll_interval_ms=300000,
        backoff=ExponentialBackoff(100, 1000, random.Random(seed)),
    )


def test_reset_timeouts_starts_all_three_deadlines() -> None:
    hb = _heartbeat()
    hb.reset_timeouts(1000)
    assert (hb.next_heartbeat_ms, hb.session_deadline_ms, hb.poll_deadline_ms) == (
        4000,
        46000,
        301000,
    )
    assert not hb.should_heartbeat(3999) and hb.should_heartbeat(4000)
    assert not hb.session_timeout_expired(45999) and hb.session_timeout_expired(46000)
    assert not hb.poll_timeout_expired(300999) and hb.poll_timeout_expired(301000)
    assert hb.next_deadline(poll_timeout_possible=False) == 4000
    hb.sent_heartbeat(4000)
    assert hb.next_heartbeat_ms == 7000
    hb.poll(2000)
    assert hb.poll_deadline_ms == 302000


def test_failed_heartbeats_back_off_exponentially_and_a_success_resets() -> None:
    hb = _heartbeat(seed=7)
    hb.reset_timeouts(0)
    delays = []
    for _ in range(6):
        hb.fail_heartbeat(10_000)
        delays.append(hb.next_heartbeat_ms - 10_000)
    assert hb.attempts == 6
    expected = ExponentialBackoff(100, 1000, random.Random(7))  # the same draws, in order
    assert delays == [expected.backoff(n) for n in range(6)]
    assert 80 <= delays[0] <= 120 and delays[-1] <= 1000
    hb.receive_heartbeat(20_000)
    assert hb.attempts == 0 and hb.session_deadline_ms == 65_000


def test_next_deadline_counts_the_poll_timer_only_when_it_can_expire() -> None:
    hb = _heartbeat()
    hb.reset_timeouts(0)
    hb.next_heartbeat_ms = hb.session_deadline_ms = 10**9
    hb.poll_deadline_ms = 5000
    assert hb.next_deadline(poll_timeout_possible=True) == 5000
    assert hb.next_deadline(poll_timeout_possible=False) == 10**9


# --- network client -------------------------------------------------------------------------


def test_network_client_numbers_requests_and_times_them_out() -> None:
    from coordinator.effects import Send
    from coordinator.protocol import (
        FindCoordinatorRequest,
        HeartbeatRequest,
        JoinGroupRequest,
    )
    from members.network import ConsumerNetworkClient
    from members.state import Generation

    net = ConsumerNetworkClient("C1", request_timeout_ms=30000, join_request_timeout_ms=305000)
    gen = Generation(3, "m-1", "range")
    find = FindCoordinatorRequest(key="g")
    effects: list = []
    corr, entry = net.send(effects, "broker-0", find, 100, gen)
    assert corr == 1 and entry.api == "FindCoordinator" and not entry.to_coordinator
    assert effects == [Send("C1", "broker-0", 1, find), SetTimer("request-1", 30100)]
    join = JoinGroupRequest(
        group_id="g",
        session_timeout_ms=45000,
        rebalance_timeout_ms=300000,
        member_id="",
        protocol_type="consumer",
        protocols=(),
    )
    effects = []
    corr, entry = net.send(effects, "broker-1", join, 200, gen)
    assert corr == 2 and entry.sent_generation == gen
    assert effects[1] == SetTimer("request-2", 305200)  # the JoinGroup's longer timeout
    hb = HeartbeatRequest(group_id="g", generation_id=3, member_id="m-1")
    net.send(effects, "broker-1", hb, 300, gen)
    assert net.pending_request_count("broker-1") == 2
    assert net.pending_request_count("broker-0") == 0  # FindCoordinator is no group request
    assert [c for c, _ in net.coordinator_requests("broker-1")] == [2, 3]
    assert net.complete(2) is not None and net.complete(2) is None  # answered once
    assert net.pending_request_count("broker-1") == 1
    net.reset()  # a new incarnation: nothing in flight, the numbering goes on
    assert net.pending_request_count("broker-1") == 0 and net.complete(3) is None
    assert net.send([], "broker-0", find, 400, gen)[0] == 4


# --- the JoinGroup / SyncGroup error table --------------------------------------------------


def test_join_error_table_retries_as_join_group_if_needed_does() -> None:
    """joinGroupIfNeeded loops at once on UnknownMemberId / IllegalGeneration /
    RebalanceInProgress / MemberIdRequired, backs off on retriable exceptions, and throws
    every other one."""
    from coordinator.errors import Errors
    from members.membership import JOIN_ERRORS, Retry

    immediate = {
        Errors.UNKNOWN_MEMBER_ID,
        Errors.ILLEGAL_GENERATION,
        Errors.REBALANCE_IN_PROGRESS,
        Errors.MEMBER_ID_REQUIRED,
    }
    for (api, error), reaction in JOIN_ERRORS.items():
        if error in immediate:
            assert reaction.retry is Retry.IMMEDIATE, (api, error)
        elif error.retriable:
            assert reaction.retry is Retry.BACKOFF, (api, error)
        else:
            assert reaction.retry is Retry.THROW, (api, error)
        assert reaction.exception is None  # a branch of its own: the error's own exception


def test_join_error_table_rows() -> None:
    from coordinator.errors import Errors
    from members.membership import (
        JOIN_GROUP,
        SYNC_GROUP,
        UNEXPECTED,
        Action,
        Retry,
        join_reaction,
    )

    assert join_reaction(JOIN_GROUP, Errors.MEMBER_ID_REQUIRED).action is Action.ADOPT_MEMBER_ID
    assert (
        join_reaction(JOIN_GROUP, Errors.UNKNOWN_MEMBER_ID).action
        is Action.RESET_GENERATION_AND_MEMBER_ID
    )
    # ILLEGAL_GENERATION keeps the member id after a SyncGroup, and is unexpected (thrown as a
    # KafkaException) after a JoinGroup
    assert join_reaction(SYNC_GROUP, Errors.ILLEGAL_GENERATION).action is Action.RESET_GENERATION
    assert join_reaction(JOIN_GROUP, Errors.ILLEGAL_GENERATION) is UNEXPECTED
    assert UNEXPECTED.retry is Retry.THROW and UNEXPECTED.exception == "KafkaException"
    for api in (JOIN_GROUP, SYNC_GROUP):
        for error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            assert join_reaction(api, error).action is Action.MARK_COORDINATOR_UNKNOWN
    # COORDINATOR_LOAD_IN_PROGRESS has a branch in JoinGroupResponseHandler only
    assert join_reaction(JOIN_GROUP, Errors.COORDINATOR_LOAD_IN_PROGRESS).retry is Retry.BACKOFF
    assert join_reaction(SYNC_GROUP, Errors.COORDINATOR_LOAD_IN_PROGRESS) is UNEXPECTED


# --- coordinator lookup ---------------------------------------------------------------------


def test_coordinator_lookup_backs_off_then_awaits_metadata_and_rotates_brokers() -> None:
    from members.coordinator_lookup import CoordinatorLookup

    lookup = CoordinatorLookup(
        ["broker-0", "broker-1"], ExponentialBackoff(100, 1000, random.Random(3))
    )
    assert lookup.pick_node() == "broker-0" and lookup.coordinator is None
    expected = ExponentialBackoff(100, 1000, random.Random(3))
    delays = [lookup.failed() for _ in range(3)]
    assert delays == [expected.backoff(n) for n in range(3)]
    assert lookup.attempts == 3 and lookup.after_metadata
    lookup.rotate_node()
    assert lookup.pick_node() == "broker-1"
    lookup.update_nodes(["broker-1", "broker-2"])  # the picked broker is kept when still known
    assert lookup.pick_node() == "broker-1"
    lookup.update_nodes(["broker-2"])  # gone: start from the first
    assert lookup.pick_node() == "broker-2"
    lookup.update_nodes([])  # an answer without brokers changes nothing
    assert lookup.known_nodes == ["broker-2"]
    lookup.found("broker-2")
    assert lookup.coordinator == "broker-2" and lookup.attempts == 0 and not lookup.after_metadata
    assert lookup.mark_unknown() == "broker-2" and lookup.coordinator is None
    assert lookup.mark_unknown() is None


# --- positions ------------------------------------------------------------------------------


def test_positions_accrue_one_batch_per_poll_interval_over_fetchable_partitions() -> None:
    from assignors.api import TopicPartition
    from members.positions import FetchPositions

    t0, t1, t2 = (TopicPartition("t", p) for p in range(3))
    fetch = FetchPositions(max_poll_records=500, poll_interval_ms=100, continuous=True)
    fetch.set_owned([t2, t0, t1], 0)
    assert fetch.owned == [t0, t1, t2] and fetch.missing() == [t0, t1, t2]
    assert not fetch.fetching()  # no positions yet
    fetch.seek_committed([(t0, 10), (t1, -1), (TopicPartition("other", 0), 7)], 1000)
    assert fetch.positions == {t0: 10, t1: 0}  # -1: no commit, earliest; not owned: ignored
    assert fetch.ready() == [t0, t1] and fetch.missing() == [t2]
    assert fetch.consumed(1250) == {t0: 10 + 2 * 250, t1: 0 + 2 * 250}  # two whole batches
    assert fetch.accrue_from == 1200
    fetch.pending_revocation = True  # EAGER onJoinPrepare commit out: nothing is fetched
    assert fetch.consumed(5000) == {t0: 510, t1: 500} and fetch.accrue_from == 5000
    fetch.pending_revocation = False
    fetch.seek_committed([(t2, 3)], 5000)
    assert fetch.consumed(5100) == {t0: 510 + 167, t1: 500 + 167, t2: 3 + 166}  # remainder first
    fetch.set_owned([t1], 5100)  # positions of partitions still owned are kept
    assert fetch.positions == {t1: 667}


def test_processing_model_consumes_one_batch_per_poll() -> None:
    from assignors.api import TopicPartition
    from members.positions import FetchPositions

    tp = TopicPartition("t", 0)
    fetch = FetchPositions(max_poll_records=50, poll_interval_ms=100, continuous=False)
    fetch.set_owned([tp], 0)
    assert fetch.consume_batch() == 0  # no position yet
    fetch.seek_committed([(tp, 5)], 0)
    fetch.materialize(10_000)  # nothing accrues with time in the processing model
    assert fetch.positions == {tp: 5}
    assert fetch.consume_batch() == 50 and fetch.positions == {tp: 55}


# --- offsets --------------------------------------------------------------------------------


def test_sync_commits_share_one_wakeup_and_back_off_within_their_deadline() -> None:
    from members.offsets import CommitResult, SyncCommits

    syncs = SyncCommits(ExponentialBackoff(100, 1000, random.Random(5)))
    assert syncs.next_wakeup() is None and not syncs
    a = CommitResult(0, "manual", {}, 1)
    b = CommitResult(0, "close", {}, 1)
    syncs.add(a, 60_000)
    syncs.add(b, 250)
    assert syncs.next_wakeup() == 250  # nothing backing off: the deadlines
    sync_a = syncs.of(a)
    assert sync_a is not None and syncs.of(CommitResult(0, "auto", {}, 1)) is None
    expected = ExponentialBackoff(100, 1000, random.Random(5))
    retry_at = syncs.back_off(sync_a, 100)
    assert retry_at == 100 + expected.backoff(0) and sync_a.attempts == 1
    assert syncs.next_wakeup() == min(retry_at, 250)
    sync_b = syncs.of(b)
    assert sync_b is not None
    assert syncs.back_off(sync_b, 240) == 250  # never past the deadline
    syncs.finish(sync_b)
    assert [s.op for s in syncs] == [a] and syncs.next_wakeup() == retry_at


def test_committed_offsets_lookup_backs_off_until_a_new_lookup() -> None:
    from members.offsets import CommittedOffsetsLookup

    lookup = CommittedOffsetsLookup(ExponentialBackoff(100, 1000, random.Random(9)))
    expected = ExponentialBackoff(100, 1000, random.Random(9))
    lookup.failed(1000)
    lookup.failed(2000)
    assert lookup.attempts == 2
    expected.backoff(0)
    assert lookup.retry_at == 2000 + expected.backoff(1)
    lookup.restart()
    assert lookup.attempts == 0 and lookup.retry_at is None


# --- rebalance rules ------------------------------------------------------------------------


def test_rebalance_rules_for_eager_and_cooperative() -> None:
    from assignors.api import RebalanceProtocol, TopicPartition
    from members import rebalance
    from members.state import Generation, MemberState

    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    gen = Generation(4, "m-1", "range")
    eager, coop = RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE
    # onJoinPrepare
    assert rebalance.on_join_prepare(eager, gen, [], ["a"]) == rebalance.Revocation(
        "revoked", [], []
    )  # EAGER calls onPartitionsRevoked even with nothing owned
    assert rebalance.on_join_prepare(coop, gen, [a0, b0], ["a", "b"]) is rebalance.NOTHING
    assert rebalance.on_join_prepare(coop, gen, [a0, b0], ["a"]) == rebalance.Revocation(
        "revoked", [b0], [a0]
    )
    reset = Generation(-1, "m-1", None)
    assert rebalance.on_join_prepare(coop, reset, [a0], ["a"]) == rebalance.Revocation(
        "lost", [a0], []
    )
    assert rebalance.on_join_prepare(eager, reset, [], ["a"]) is rebalance.NOTHING
    # onJoinComplete
    assert rebalance.on_join_complete(coop, [a0, b0], [a0, a1]) == ([b0], [a1])
    assert rebalance.on_join_complete(eager, [], [a0, a1]) == ([], [a0, a1])
    # onLeavePrepare
    assert rebalance.on_leave_prepare(gen, MemberState.STABLE, [a0]) == "revoked"
    assert rebalance.on_leave_prepare(gen, MemberState.COMPLETING_REBALANCE, [a0]) == "lost"
    assert rebalance.on_leave_prepare(reset, MemberState.STABLE, [a0]) == "lost"
    assert rebalance.on_leave_prepare(gen, MemberState.STABLE, []) is None


def test_assignment_checks() -> None:
    import re

    from assignors.api import Subscription, TopicPartition
    from members import rebalance

    a0, b0 = TopicPartition("a", 0), TopicPartition("b", 0)
    assert rebalance.assignment_matches_subscription([a0], None, ["a"])
    assert not rebalance.assignment_matches_subscription([a0, b0], None, ["a"])
    assert rebalance.assignment_matches_subscription([a0, b0], re.compile("[ab]"), [])
    subs = {
        "m1": Subscription(topics=["a"], owned_partitions=[a0]),
        "m2": Subscription(topics=["a"], owned_partitions=[]),
    }
    assert rebalance.cooperative_violations(subs, {"m1": [], "m2": [a0]}) == [a0]
    assert rebalance.cooperative_violations(subs, {"m1": [a0], "m2": []}) == []
    assert rebalance.cooperative_violations(subs, {"m1": [], "m2": []}) == []  # revoked only


# --- the application loop -------------------------------------------------------------------


def test_application_loop_models() -> None:
    from members.application import ApplicationLoop

    app = ApplicationLoop(
        poll_interval_ms=100, processing_time_ms=0, processing_time_per_record_ms=0
    )
    assert app.continuous and app.in_poll(0)
    assert app.stall(500, 1000) == 1500 and not app.in_poll(1499) and app.in_poll(1500)
    assert app.stall(100, 1200) == 1500  # a shorter stall inside a longer one changes nothing
    assert app.poll_timeout_possible(1200, poll_deadline_ms=1400)
    assert not app.poll_timeout_possible(1200, poll_deadline_ms=1600)  # back in poll() first
    assert not app.poll_timeout_possible(1600, poll_deadline_ms=1400)  # inside poll()
    assert app.next_wakeup(2000, []) is None
    assert app.next_wakeup(2000, [1000, 2500]) == 2001  # overdue: at once, but not at now
    assert app.next_wakeup(2000, [2600, 2500]) == 2500

    busy = ApplicationLoop(
        poll_interval_ms=100, processing_time_ms=30, processing_time_per_record_ms=0.5
    )
    assert not busy.continuous
    assert busy.processed(500, 1000) == 1000 + 280 and busy.busy_until == 1280
    assert busy.processed(0, 2000) == 2100 and busy.busy_until == 2030  # poll_interval_ms apart
