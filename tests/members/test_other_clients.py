"""The opt-in behaviours of other clients (docs/members.md, "Other clients' behaviour"): each one
against the Java default it replaces, on small simulations. The incident lessons
(scenarios/library/incident-*.yaml) show them at work; these tests pin each one down alone."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from coordinator.config import CoordinatorConfig
from members.application import ApplicationLoop
from members.config import ConfigError, ConsumerConfig
from members.state import MemberState
from scenarios.simulation import Simulation

FAST = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def _sim(seed: int = 1) -> Simulation:
    return Simulation(brokers=1, topics={"T": 4}, seed=seed, coordinator_config=FAST)


def _sent(sim: Simulation, node: str, api: str) -> list[dict[str, Any]]:
    return sim.events_named("request_sent", node=node, api=api)


def _stable_pair(sim: Simulation, **config: Any) -> None:
    common: dict[str, Any] = {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "heartbeat_interval_ms": 1_000,
        "partition_assignment_strategy": ["range"],
    }
    common.update(config)
    static = common.pop("static", False)
    for cid in ("C1", "C2"):
        sim.add_consumer(cid, topics=["T"], group_instance_id=cid if static else None, **common)
    sim.start()
    assert sim.run_until_stable("g")


# --- static_leave_group_on_close ------------------------------------------------------------


@pytest.mark.parametrize("leaves", [False, True])
def test_a_static_member_leaves_on_close_only_when_told(leaves: bool) -> None:
    sim = _sim()
    _stable_pair(sim, static=True, static_leave_group_on_close=leaves)
    generation = sim.generation("g")
    sim.close("C1")
    sim.run_for(2_000)
    leave = _sent(sim, "C1", "LeaveGroup")
    if leaves:
        # the request names the static member: the coordinator removes it at once
        assert len(leave) == 1
        assert sim.events_named("leave_group", node="C1", sent=True, group_instance_id="C1")
        assert sim.members("g") == ["C2"]
        assert sim.generation("g") == generation + 1
    else:
        # KIP-345: the slot and the generation stay until session.timeout.ms
        assert leave == []
        assert sim.members("g") == ["C1", "C2"]
        assert sim.generation("g") == generation


def test_a_dynamic_members_leave_group_is_unchanged_by_the_setting() -> None:
    for leaves in (False, True):
        sim = _sim()
        _stable_pair(sim, static_leave_group_on_close=leaves)
        sim.close("C1")
        sim.run_for(1_000)
        [leave] = sim.events_named("leave_group", node="C1")
        assert leave["sent"] is True and leave["group_instance_id"] is None


# --- heartbeat_thread / poll_timer ------------------------------------------------------------


def _heartbeats_between(sim: Simulation, node: str, start: int, end: int) -> list[int]:
    return [e["t_ms"] for e in _sent(sim, node, "Heartbeat") if start <= e["t_ms"] < end]


@pytest.mark.parametrize("thread", [True, False])
def test_without_a_heartbeat_thread_a_stall_sends_no_heartbeat(thread: bool) -> None:
    sim = _sim()
    _stable_pair(sim, heartbeat_thread=thread, max_poll_interval_ms=60_000)
    start = sim.now
    sim.stall("C1", 8_000)  # shorter than the 10 s session
    sim.run_for(8_000)
    beats = _heartbeats_between(sim, "C1", start + 1, start + 8_000)
    if thread:
        assert len(beats) >= 6  # the thread beats every second
    else:
        assert beats == []
    sim.run_for(2_000)
    # the stall ends inside the session: the loop's first heartbeat keeps the member in
    assert _heartbeats_between(sim, "C1", start + 8_000, start + 10_000)
    assert sim.members("g") == ["C1", "C2"]


def test_a_stall_longer_than_the_session_expires_a_loop_heartbeating_member() -> None:
    sim = _sim()
    _stable_pair(sim, heartbeat_thread=False, poll_timer=False)
    sim.stall("C1", 15_000)
    sim.run_for(12_000)
    [removed] = sim.events_named("member_removed", reason="session timeout expired")
    assert removed["member_id"].startswith("C1-")
    assert sim.members("g") == ["C2"]


def test_the_loop_heartbeats_between_records_of_a_long_batch() -> None:
    # 50 records of 1 s: a 50 s batch, five times the session, and yet the member stays
    sim = _sim()
    _stable_pair(
        sim,
        heartbeat_thread=False,
        poll_timer=False,
        max_poll_records=50,
        processing_time_per_record_ms=1000.0,
    )
    consumer = sim.consumer("C1")
    start = sim.now
    sim.run_for(60_000)
    beats = _heartbeats_between(sim, "C1", start, start + 60_000)
    # a heartbeat every second, late by at most the record in progress when it fell due
    assert len(beats) >= 40
    gaps = [b - a for a, b in itertools.pairwise(beats)]
    assert min(gaps) >= 1_000 and max(gaps) <= 2_000
    assert consumer.app.processing_time_per_record_ms == 1000.0
    assert sim.members("g") == ["C1", "C2"]
    assert not sim.events_named("member_removed")


@pytest.mark.parametrize("timer", [True, False])
def test_without_a_poll_timer_a_late_poll_does_not_leave(timer: bool) -> None:
    sim = _sim()
    _stable_pair(sim, poll_timer=timer, max_poll_interval_ms=20_000)
    sim.stall("C1", 30_000)
    sim.run_for(35_000)
    timeouts = sim.events_named("poll_timeout", node="C1")
    if timer:
        assert len(timeouts) == 1
        assert _sent(sim, "C1", "LeaveGroup")
    else:
        assert timeouts == [] and _sent(sim, "C1", "LeaveGroup") == []
        assert sim.members("g") == ["C1", "C2"]  # the heartbeat thread kept the session


def test_next_break_is_a_record_boundary_inside_a_batch() -> None:
    app = ApplicationLoop(
        poll_interval_ms=100, processing_time_ms=500, processing_time_per_record_ms=1.5
    )
    app.processed(10, 1_000)  # busy 1000 .. 1515: 500 ms fixed, then 10 records of 1.5 ms
    assert app.busy_until == 1_515
    assert app.next_break(1_200) == 1_500  # the fixed part has no break: the first record starts
    assert app.next_break(1_501) == 1_502  # 1500 + 1.5 = 1501.5, rounded up to the ms
    assert app.next_break(1_514) == 1_515  # past the last boundary: the batch's end
    assert app.next_break(1_600) == 1_600
    # a stall has no break at all
    app.stall(1_000, 2_000)
    assert app.next_break(2_500) == 3_000


# --- revocation_time_ms -----------------------------------------------------------------------


@pytest.mark.parametrize("duration", [0, 7_000])
def test_a_slow_revocation_holds_the_join_group_back(duration: int) -> None:
    sim = _sim()
    _stable_pair(sim, revocation_time_ms=duration, max_poll_interval_ms=60_000)
    sim.add_consumer(
        "C3",
        topics=["T"],
        group_id="g",
        session_timeout_ms=10_000,
        heartbeat_interval_ms=1_000,
        partition_assignment_strategy=["range"],
        start=True,
    )
    assert sim.run_until_stable("g")
    revoked = sim.events_named("rebalance_callback", node="C1", callback="revoked")
    assert revoked
    joins = [e["t_ms"] for e in _sent(sim, "C1", "JoinGroup") if e["t_ms"] >= revoked[0]["t_ms"]]
    assert joins[0] - revoked[0]["t_ms"] == duration
    stalls = sim.events_named("app_stalled", node="C1")
    assert len(stalls) == (1 if duration else 0)
    assert sorted(sim.members("g")) == ["C1", "C2", "C3"]


def test_an_empty_revocation_does_not_block() -> None:
    sim = _sim()
    sim.add_consumer(
        "C1", topics=["T"], group_id="g", revocation_time_ms=5_000, start=True
    )  # EAGER range: the first JoinGroup revokes nothing
    assert sim.run_until_stable("g")
    assert not sim.events_named("app_stalled", node="C1")


# --- commit_during_rebalance ------------------------------------------------------------------


@pytest.mark.parametrize("during", [False, True])
def test_a_commit_during_a_rebalance_goes_out_only_when_told(during: bool) -> None:
    sim = _sim()
    _stable_pair(
        sim,
        commit_during_rebalance=during,
        enable_auto_commit=False,
        partition_assignment_strategy=["cooperative-sticky"],
    )
    consumer = sim.consumer("C1")
    sim.add_consumer(
        "C3",
        topics=["T"],
        group_id="g",
        enable_auto_commit=False,
        partition_assignment_strategy=["cooperative-sticky"],
        start=True,
    )
    assert sim.run_until(
        lambda: consumer.membership.member_state is MemberState.PREPARING_REBALANCE
    )
    before = len(_sent(sim, "C1", "OffsetCommit"))
    generation = consumer.generation_id
    sim.commit("C1")
    sent = _sent(sim, "C1", "OffsetCommit")[before:]
    if during:
        assert [e["generation_id"] for e in sent] == [generation]
    else:
        assert sent == []
        assert consumer.commits[-1].error == "REBALANCE_IN_PROGRESS"


# --- join_group_timeout_ms --------------------------------------------------------------------


def test_the_join_group_timeout_replaces_kafkas() -> None:
    java = ConsumerConfig(group_id="g", max_poll_interval_ms=60_000)
    assert java.join_request_timeout_ms == 65_000  # max(request.timeout.ms, rebalance + 5 s)
    sarama = ConsumerConfig(group_id="g", max_poll_interval_ms=60_000, join_group_timeout_ms=30_000)
    assert sarama.join_request_timeout_ms == 30_000
    with pytest.raises(ConfigError, match=r"join\.group\.timeout\.ms"):
        ConsumerConfig(group_id="g", join_group_timeout_ms=0)
    with pytest.raises(ConfigError, match="revocation_time_ms"):
        ConsumerConfig(group_id="g", revocation_time_ms=-1)


def test_a_parked_join_group_times_out_client_side() -> None:
    # C1 holds the rebalance in its revocation callback; C2's JoinGroup waits at the coordinator
    sim = _sim()
    sim.add_consumer(
        "C1",
        topics=["T"],
        group_id="g",
        revocation_time_ms=40_000,
        poll_timer=False,
        max_poll_interval_ms=60_000,
        start=True,
    )
    assert sim.run_until_stable("g")
    sim.add_consumer(
        "C2",
        topics=["T"],
        group_id="g",
        join_group_timeout_ms=20_000,
        max_poll_interval_ms=60_000,
        start=True,
    )
    sim.run_for(30_000)
    timeouts = sim.events_named("request_timeout", node="C2", api="JoinGroup")
    assert len(timeouts) == 1
    join = next(
        e
        for e in _sent(sim, "C2", "JoinGroup")
        if e["correlation_id"] == timeouts[0]["correlation_id"]
    )
    assert timeouts[0]["t_ms"] - join["t_ms"] == 20_000


# --- pause_pending_revocation -----------------------------------------------------------------


@pytest.mark.parametrize("pause", [None, True, False])
def test_fetching_while_the_pre_revocation_commit_is_out(pause: bool | None) -> None:
    sim = _sim()
    _stable_pair(sim, pause_pending_revocation=pause)
    consumer = sim.consumer("C1")
    # C1's onJoinPrepare auto-commit is out once a third member arrives
    sim.add_consumer(
        "C3",
        topics=["T"],
        group_id="g",
        session_timeout_ms=10_000,
        partition_assignment_strategy=["range"],
        start=True,
    )
    assert sim.run_until(lambda: consumer._prepare_commit is not None)
    paused = pause is not False  # None: Kafka's behaviour since KAFKA-14196
    assert consumer.fetch.pending_revocation is paused
    assert consumer.fetch.fetching() is not paused


@pytest.mark.parametrize("pause", [None, True, False])
def test_what_a_revocation_leaves_uncommitted_is_logged_when_asked(pause: bool | None) -> None:
    # a slow network: the pre-revocation commit is out for 200 ms, two batches of the poll loop
    from scenarios.network import NetworkConfig

    sim = Simulation(
        brokers=1,
        topics={"T": 4},
        seed=3,
        coordinator_config=FAST,
        network=NetworkConfig(latency_ms=100),
    )
    _stable_pair(sim, pause_pending_revocation=pause)
    sim.add_consumer(
        "C3", topics=["T"], group_id="g", partition_assignment_strategy=["range"], start=True
    )
    assert sim.run_until_stable("g")
    logged = sim.events_named("revoked_uncommitted", node="C1")
    if pause is None:
        assert logged == []  # the default logs nothing new
        return
    assert len(logged) == 1
    [prepare] = sim.events_named("commit_completed", node="C1", purpose="join-prepare")
    records = logged[0]["records"]
    if pause:
        assert records == {}
    else:
        # every partition C1 owned ran on past the commit's offsets, by whole batches
        assert sorted(records) == sorted(prepare["offsets"])
        assert all(n > 0 and n % 250 == 0 for n in records.values())


# --- keep_member_id_when_leave_suppressed / delay_request --------------------------------------


def _poll_timeout_rejoin(keep: bool, delay_ms: int | None) -> Simulation:
    """C2 (static) misses its poll deadline; its next JoinGroup may be held at the broker."""
    sim = _sim()
    _stable_pair(
        sim,
        static=True,
        session_timeout_ms=30_000,  # the old member outlives the whole exchange
        max_poll_interval_ms=3_000,
        request_timeout_ms=6_000,
        keep_member_id_when_leave_suppressed=keep,
    )
    if delay_ms is not None:
        sim.delay_request("C2", "JoinGroup", delay_ms)
    sim.stall("C2", 5_000)
    sim.run_for(30_000)
    return sim


@pytest.mark.parametrize("keep", [False, True])
def test_a_static_poll_timeout_keeps_the_member_id_only_when_told(keep: bool) -> None:
    sim = _poll_timeout_rejoin(keep, None)
    [leave] = sim.events_named("leave_group", node="C2")
    assert leave["sent"] is False  # static: maybeLeaveGroup sends nothing either way
    [reset] = sim.events_named("generation_reset", node="C2")
    assert reset["reset_member_id"] is (not keep)
    [join] = [
        e for e in sim.events_named("request_received", api="JoinGroup", src="C2") if e["t_ms"] > 0
    ][-1:]
    replaced = sim.events_named("member_replaced", group_id="g")
    if keep:
        assert join["member_id"] != ""  # it rejoins as the member it is
        assert replaced == []
    else:
        assert join["member_id"] == ""  # UNKNOWN_MEMBER_ID: the coordinator replaces it
        assert len(replaced) == 1
    # alone, either way ends well: one process, one slot, no rebalance
    assert sim.client_state("C2") == MemberState.STABLE
    assert sim.generation("g") == 1


@pytest.mark.parametrize("keep", [False, True])
def test_an_abandoned_blind_join_handled_last_fences_the_live_member(keep: bool) -> None:
    sim = _poll_timeout_rejoin(keep, 12_000)
    [held] = sim.events_named("sim_request_delayed", node="C2")
    assert held["api"] == "JoinGroup" and held["delay_ms"] == 12_000
    # the client gave it up after max(request.timeout.ms, max.poll.interval.ms + 5 s) = 8 s
    [timeout] = sim.events_named("request_timeout", node="C2", api="JoinGroup")
    assert timeout["t_ms"] - held["t_ms"] == 8_000
    assert timeout["correlation_id"] == held["correlation_id"]
    handled = [
        e
        for e in sim.events_named("request_received", api="JoinGroup", src="C2")
        if e["correlation_id"] == held["correlation_id"]
    ]
    assert [e["t_ms"] for e in handled] == [held["handled_at_ms"]]
    if keep:
        assert sim.events_named("member_replaced", group_id="g") == []
        assert sim.client_state("C2") == MemberState.STABLE
        assert sim.events_named("consumer_fatal", node="C2") == []
    else:
        # the resend replaced C2's member first, the held join replaced it again
        assert len(sim.events_named("member_replaced", group_id="g")) == 2
        [fatal] = sim.events_named("consumer_fatal", node="C2")
        assert fatal["error"] == "FENCED_INSTANCE_ID"
        assert fatal["t_ms"] > held["handled_at_ms"]


def test_a_delay_applies_to_the_next_matching_request_only() -> None:
    sim = _sim()
    _stable_pair(sim)
    sim.delay_request("C1", "OffsetCommit", 700)
    sim.run_for(1_000)  # positions to commit
    sim.commit("C1")
    sim.run_for(2_000)
    sim.commit("C1")
    sim.run_for(2_000)
    [held] = sim.events_named("sim_request_delayed")
    commits = sim.events_named("request_received", api="OffsetCommit", src="C1")
    assert [e["correlation_id"] for e in commits][:1] == [held["correlation_id"]]
    assert commits[0]["t_ms"] == held["handled_at_ms"]
    # the next commit is not held: handled one network hop after it was sent
    [sent] = [e for e in sim.events_named("request_sent", node="C1", api="OffsetCommit")][1:2]
    [later] = [e for e in commits if e["correlation_id"] == sent["correlation_id"]]
    assert later["t_ms"] - sent["t_ms"] <= 1
    with pytest.raises(Exception, match="must be > 0"):
        sim.delay_request("C1", "JoinGroup", 0)


# --- commit_error_handling (franz-go#137) -------------------------------------------------------


def _commit_race(handling: str) -> Simulation:
    """The race of incident-commit-races-cooperative-round: C1 commits with generation 2 just
    after round 2's join phase ended, before its JoinGroup answer arrives."""
    from scenarios.network import NetworkConfig

    sim = Simulation(
        brokers=1,
        topics={"T": 4},
        seed=2,
        coordinator_config=FAST,
        network=NetworkConfig(latency_ms=50),
    )
    config: dict[str, Any] = {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "heartbeat_interval_ms": 1_000,
        "partition_assignment_strategy": ["cooperative-sticky"],
        "enable_auto_commit": False,
        "commit_during_rebalance": True,
        "commit_error_handling": handling,
    }
    for cid in ("C1", "C2", "C3"):
        sim.add_consumer(cid, topics=["T"], **config)
    sim.start(["C1", "C2"])
    assert sim.run_until_stable("g")
    sim.run_for(2_000)
    sim.start("C3")
    # commit as soon as the coordinator has ended round 2's join phase (generation 3)
    assert sim.run_until(lambda: sim.generation("g") == 3, timeout_ms=30_000)
    sim.run_for(10)
    sim.commit("C1")
    sim.run_for(20_000)
    return sim


@pytest.mark.parametrize("handling", ["java", "franz-go-1.3", "franz-go-1.4"])
def test_a_commit_spanning_the_second_round_is_handled_per_client(handling: str) -> None:
    sim = _commit_race(handling)
    [answer] = [
        e
        for e in sim.events_named("response_received", node="C1", api="OffsetCommit")
        if e["error"] == "ILLEGAL_GENERATION"
    ]
    retried = sim.events_named("commit_retried", node="C1")
    resets = [
        e for e in sim.events_named("generation_reset", node="C1") if e["t_ms"] >= answer["t_ms"]
    ]
    if handling == "java":
        # OffsetCommitResponseHandler: reset the generation and rejoin, a third round
        assert resets and retried == []
        assert sim.generation("g") == 4
    elif handling == "franz-go-1.3":
        # the error goes to the caller; nothing else happens
        assert resets == [] and retried == []
        [failed] = sim.events_named("commit_failed", node="C1", error="ILLEGAL_GENERATION")
        assert failed["t_ms"] == answer["t_ms"]
        assert sim.generation("g") == 3
    else:
        # commitAcrossRebalance: sent again with generation 3, accepted, no third round
        assert resets == []
        [retry] = retried
        assert (retry["generation_id"], retry["retry_generation_id"], retry["tries"]) == (2, 3, 2)
        assert sim.events_named("commit_completed", node="C1", generation_id=3)
        assert sim.events_named("commit_failed", node="C1") == []
        assert sim.generation("g") == 3
    assert sim.client_state("C1") == MemberState.STABLE


def test_franz_go_1_4_retries_at_most_twice_and_only_what_it_still_owns() -> None:
    """commitAcrossRebalance (franz-go 1.4): a cooperative member sends a commit that failed
    with ILLEGAL_GENERATION / REBALANCE_IN_PROGRESS again, at most twice (the third failure
    goes to the caller), only while it still owns every committed partition; other group
    errors are reported and leave the membership alone. Driven through the consumer's public
    calls: commit(), and the coordinator's answers delivered with handle_response."""
    from assignors.api import TopicPartition
    from coordinator.errors import Errors
    from coordinator.protocol import JoinGroupRequest, OffsetCommitRequest
    from tests.members.harness import Harness

    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    h = Harness(
        ConsumerConfig(
            group_id="g",
            partition_assignment_strategy=("cooperative-sticky",),
            enable_auto_commit=False,
            commit_during_rebalance=True,
            commit_error_handling="franz-go-1.4",
        )
    )
    h.connect()
    h.join_and_sync([t0, t1])
    h.answer_offset_fetch({"t-0": 5, "t-1": 5})

    def commit():
        h.call("commit")
        (request,) = h.pending(OffsetCommitRequest)
        return h.consumer.commits[-1], request

    def answer(error: Errors) -> None:
        (request,) = h.pending(OffsetCommitRequest)
        h.answer_commit(request, error)

    op, _ = commit()
    assert op.offsets == {t0: 5, t1: 5}
    answer(Errors.ILLEGAL_GENERATION)
    answer(Errors.REBALANCE_IN_PROGRESS)
    assert op.tries == 3 and not op.done and len(h.pending(OffsetCommitRequest)) == 1
    answer(Errors.ILLEGAL_GENERATION)  # the third failure goes to the caller
    assert op.done and op.error == "ILLEGAL_GENERATION" and h.pending(OffsetCommitRequest) == []
    assert [e["tries"] for e in h.log.named("commit_retried")] == [2, 3]

    other, _ = commit()
    answer(Errors.UNKNOWN_MEMBER_ID)  # not a generation error: reported, kept in the group
    assert other.done and other.error == "UNKNOWN_MEMBER_ID" and other.tries == 1
    assert h.consumer.state == "STABLE" and h.consumer.generation.generation_id == 1

    gone, request = commit()
    # while it is in flight, a cooperative rebalance takes t-1 away
    h.rejoin()
    h.join_and_sync([t0], generation_id=2)
    assert h.consumer.assignment == [t0]
    h.answer_commit(request, Errors.ILLEGAL_GENERATION)  # no longer owns everything it commits
    assert gone.done and gone.tries == 1 and gone.error == "ILLEGAL_GENERATION"
    assert h.pending(OffsetCommitRequest) == [] and len(h.log.named("commit_retried")) == 2
    # the membership is left alone: the revocation's rejoin goes on
    (join,) = h.pending(JoinGroupRequest)
    assert join.message.member_id == "m1"


def test_commit_error_handling_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"commit\.error\.handling must be one of"):
        ConsumerConfig(group_id="g", commit_error_handling="franz")


# --- sticky_assignor_ignores_owned (confluent-kafka-go#622, librdkafka 168a88ca5) ---------------


def test_librdkafkas_cooperative_step_withholds_moves_between_owners() -> None:
    from assignors.api import Subscription, TopicPartition
    from members import librdkafka_assignor

    def tps(*ps: int) -> list[TopicPartition]:
        return [TopicPartition("t", p) for p in ps]

    subs = {
        "a": Subscription(["t"], owned_partitions=tps(0, 2, 4)),
        "b": Subscription(["t"], owned_partitions=tps(1, 3, 5)),
        "c": Subscription(["t"]),
    }
    assert all(s.owned_partitions == () for s in librdkafka_assignor.without_owned(subs).values())
    raw = {"a": tps(0, 3), "b": tps(1, 4), "c": tps(2, 6)}  # 5 assigned to nobody
    adjusted = librdkafka_assignor.cooperative_adjust(subs, raw)
    # kept where the owner did not change, new partitions assigned, moves withheld, and an
    # owned partition nobody was given goes back to its owner
    assert adjusted == {"a": tps(0), "b": tps(1, 5), "c": tps(6)}
    assert librdkafka_assignor.withheld(raw, adjusted) == tps(2, 3, 4)


@pytest.mark.parametrize("ignores", [False, True])
def test_a_librdkafka_1_6_leader_moves_more_than_the_minimum(ignores: bool) -> None:
    sim = Simulation(brokers=1, topics={"T": 6}, seed=1, coordinator_config=FAST)
    for cid in ("C1", "C2", "C3"):
        sim.add_consumer(
            cid,
            topics=["T"],
            group_id="g",
            session_timeout_ms=10_000,
            heartbeat_interval_ms=1_000,
            partition_assignment_strategy=["cooperative-sticky"],
            sticky_assignor_ignores_owned=ignores,
        )
    sim.start(["C1", "C2"])
    assert sim.run_until_stable("g")
    before = {c: set(sim.assignment(c)) for c in ("C1", "C2")}
    sim.start("C3")
    sim.run_for(1_000)
    assert sim.run_until_stable("g")
    after = {c: set(sim.assignment(c)) for c in ("C1", "C2", "C3")}
    moved = sum(len(after[c] - before[c]) for c in ("C1", "C2")) + len(after["C3"])
    assert sorted(len(a) for a in after.values()) == [2, 2, 2]
    ignored = sim.events_named("sticky_owned_ignored")
    if ignores:
        # a fresh round-robin each time: the old members swap partitions too
        assert moved > 2 and ignored
        assert all(e["node"] == sim.leader("g") for e in ignored)
    else:
        assert moved == 2 and ignored == []  # the minimum: two partitions, both to C3
