"""rebalances_from_events over hand-written logs: the rules of scenarios/history.py, one by one."""

from __future__ import annotations

from typing import Any

from scenarios.history import classify_trigger, rebalances_from_events


def transition(t: int, state_from: str, state_to: str, generation: int = -1, **kw: Any) -> dict:
    return {
        "event": "group_state_changed",
        "t_ms": t,
        "node": "broker-0",
        "group_id": "g",
        "state_from": state_from,
        "state_to": state_to,
        "generation_id": generation,
        **kw,
    }


def callback(t: int, node: str, kind: str, *parts: str, generation: int = -1) -> dict:
    return {
        "event": "rebalance_callback",
        "t_ms": t,
        "node": node,
        "group_id": "g",
        "callback": kind,
        "partitions": list(parts),
        "generation_id": generation,
    }


def first_join() -> list[dict]:
    """C1 and C2 join an empty group; C1 gets t-0 and t-1, C2 gets t-2 and t-3."""
    return [
        transition(0, "Empty", "PreparingRebalance", reason="Adding new member C1"),
        transition(3000, "PreparingRebalance", "CompletingRebalance", 1, protocol_name="range"),
        transition(3002, "CompletingRebalance", "Stable", 1),
        callback(3003, "C1", "assigned", "t-0", "t-1", generation=1),
        callback(3004, "C2", "assigned", "t-2", "t-3", generation=1),
    ]


def test_first_join_is_one_rebalance_with_the_initial_delay() -> None:
    [record] = rebalances_from_events(first_join())
    assert (record.start_ms, record.end_ms, record.duration_ms) == (0, 3004, 3004)
    assert record.generation_id == 1 and record.rounds == 1 and record.outcome == "Stable"
    assert record.partitions_moved == 0 and record.partitions_revoked == 0
    # nothing was being consumed before, so nothing is paused: only owned partitions can pause
    assert record.paused_partition_ms == 0
    assert record.imbalance_after == 0 and record.members_after == 2
    assert record.protocol == "range" and record.trigger == "member_joined"


def test_eager_rebalance_pauses_everything_and_counts_only_real_moves() -> None:
    events = [
        *first_join(),
        # C3 joins at 10000: C1 and C2 revoke everything, then t-1 and t-3 move to C3
        transition(10000, "Stable", "PreparingRebalance", 1, reason="Adding new member C3"),
        callback(10001, "C1", "revoked", "t-0", "t-1", generation=1),
        callback(10001, "C2", "revoked", "t-2", "t-3", generation=1),
        transition(10002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(10003, "CompletingRebalance", "Stable", 2),
        callback(10004, "C1", "assigned", "t-0", generation=2),
        callback(10004, "C2", "assigned", "t-2", generation=2),
        callback(10004, "C3", "assigned", "t-1", "t-3", generation=2),
    ]
    first, second = rebalances_from_events(events)
    assert first.generation_id == 1
    assert (second.start_ms, second.end_ms, second.rounds) == (10000, 10004, 1)
    assert second.partitions_revoked == 4
    assert second.partitions_moved == 2
    assert second.paused_partition_ms == 4 * 3  # every partition, from 10001 to 10004
    assert second.imbalance_after == 1 and second.members_after == 3


def test_cooperative_move_is_one_rebalance_of_two_rounds() -> None:
    events = [
        *first_join(),
        transition(10000, "Stable", "PreparingRebalance", 1, reason="Adding new member C3"),
        transition(10002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(10003, "CompletingRebalance", "Stable", 2),
        # round 1: C1 gives up t-1 (revoked then assigned at one instant), nobody gets it yet
        callback(10004, "C1", "revoked", "t-1", generation=2),
        callback(10004, "C1", "assigned", generation=2),
        callback(10004, "C2", "assigned", generation=2),
        callback(10004, "C3", "assigned", generation=2),
        # round 2: the follow-up gives t-1 to C3
        transition(10005, "Stable", "PreparingRebalance", 2, reason="Updating metadata for C1"),
        transition(10007, "PreparingRebalance", "CompletingRebalance", 3),
        transition(10008, "CompletingRebalance", "Stable", 3),
        callback(10009, "C1", "assigned", generation=3),
        callback(10009, "C2", "assigned", generation=3),
        callback(10009, "C3", "assigned", "t-1", generation=3),
    ]
    _first, second = rebalances_from_events(events)
    assert second.rounds == 2 and second.generations == (2, 3)
    assert (second.start_ms, second.end_ms, second.generation_id) == (10000, 10009, 3)
    assert second.partitions_revoked == 1 and second.partitions_moved == 1
    assert second.paused_partition_ms == 5  # only t-1, from 10004 to 10009
    assert second.imbalance_after == 1


def test_pre_join_revocation_belongs_to_the_next_rebalance_and_starts_it() -> None:
    events = [
        *first_join(),
        callback(9990, "C1", "revoked", "t-0", "t-1", generation=1),  # C1 closes
        transition(
            10000, "Stable", "PreparingRebalance", 1, reason="Removing member C1 on LeaveGroup"
        ),
        callback(10001, "C2", "revoked", "t-2", "t-3", generation=1),
        transition(10002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(10003, "CompletingRebalance", "Stable", 2),
        callback(10004, "C2", "assigned", "t-0", "t-1", "t-2", "t-3", generation=2),
    ]
    first, second = rebalances_from_events(events)
    assert first.partitions_revoked == 0 and first.end_ms == 3004
    assert second.start_ms == 9990 and second.rounds == 1
    assert second.partitions_revoked == 4 and second.partitions_moved == 2
    assert second.paused_partition_ms == 2 * 14 + 2 * 3
    assert second.trigger == "member_left"


def test_crash_releases_partitions_and_a_group_that_empties_ends_the_record() -> None:
    events = [
        *first_join(),
        {"event": "sim_consumer_crashed", "t_ms": 5000, "node": "C1"},
        {"event": "sim_consumer_crashed", "t_ms": 5000, "node": "C2"},
        transition(50000, "Stable", "PreparingRebalance", 1, reason="member C1 session expired"),
        transition(50000, "PreparingRebalance", "Empty", 2),
    ]
    _first, second = rebalances_from_events(events)
    assert second.outcome == "Empty" and second.generation_id == 2
    assert second.partitions_moved == 4
    assert second.paused_partition_ms == 0  # the window is the instant at 50000
    assert second.trigger == "member_session_expired"


def test_unfinished_rebalance_is_reported_as_such() -> None:
    events = [*first_join(), transition(7000, "Stable", "PreparingRebalance", 1, reason="x")]
    assert rebalances_from_events(events)[-1].outcome == "unfinished"


def test_records_round_trip_to_plain_dicts() -> None:
    [record] = rebalances_from_events(first_join())
    data = record.to_dict()
    assert data["duration_ms"] == 3004 and data["generations"] == [1]
    assert data["paused_partition_seconds"] == record.paused_partition_ms / 1000


def test_trigger_classification() -> None:
    assert classify_trigger(None) == "unknown"
    assert classify_trigger("Adding new member C1 with group instance id null") == "member_joined"
    assert classify_trigger("Removing member x on LeaveGroup") == "member_left"
    assert classify_trigger("members expired waiting for SyncGroup") == "member_sync_timeout"
    assert classify_trigger("something else entirely") == "other"


def test_coordinator_failover_mid_rebalance_keeps_one_record() -> None:
    events = [
        *first_join(),
        transition(10000, "Stable", "PreparingRebalance", 1, reason="new member C3 joined"),
        transition(10001, "PreparingRebalance", "Dead", 1, reason="partition unloaded"),
        # reloaded Stable on another broker (no transition event), then the join starts again
        transition(10300, "Stable", "PreparingRebalance", 1, reason="new member C3 joined"),
        transition(10302, "PreparingRebalance", "CompletingRebalance", 2),
        transition(10303, "CompletingRebalance", "Stable", 2),
        callback(10304, "C3", "assigned", "t-3", generation=2),
        transition(20000, "Stable", "PreparingRebalance", 2, reason="new member C4 joined"),
    ]
    _first, second, third = rebalances_from_events(events)
    assert (second.start_ms, second.end_ms, second.outcome) == (10000, 10304, "Stable")
    assert second.coordinator_failovers == 1 and second.rounds == 1
    assert third.start_ms == 20000 and third.coordinator_failovers == 0


def test_a_failover_after_the_group_settled_is_no_part_of_any_rebalance() -> None:
    """The group is reloaded Stable elsewhere (no transition event): the settled rebalance keeps
    its end, and the next PreparingRebalance opens a new record instead of resuming the old."""
    events = [
        *first_join(),
        transition(8000, "Stable", "Dead", 1, reason="partition unloaded"),
        transition(20000, "Stable", "PreparingRebalance", 1, reason="new member C3 joined"),
        transition(20002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(20003, "CompletingRebalance", "Stable", 2),
        callback(20004, "C3", "assigned", "t-3", generation=2),
    ]
    first, second = rebalances_from_events(events)
    assert (first.start_ms, first.end_ms, first.outcome) == (0, 3004, "Stable")
    assert first.coordinator_failovers == 0 and first.generations == (1,)
    assert (second.start_ms, second.end_ms, second.generation_id) == (20000, 20004, 2)
    assert second.coordinator_failovers == 0 and second.trigger == "member_joined"


def test_a_failover_after_the_group_settled_in_a_real_run() -> None:
    from scenarios.simulation import Simulation
    from tests.sim.helpers import FAST, FAST_BROKER

    sim = Simulation(brokers=3, topics={"t": 4}, seed=1, coordinator_config=FAST_BROKER)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, **FAST)
    assert sim.run_until_stable("g")
    settled_at = sim.now
    sim.run_for(5_000)
    sim.fail_broker(sim.coordinator("g") or "broker-0")
    sim.run_for(5_000)
    assert sim.run_until_stable("g")
    joined_at = sim.now
    sim.add_consumer("C3", group_id="g", topics=["t"], start=True, **FAST)
    assert sim.run_until_stable("g")
    first, second = sim.rebalances("g")
    assert first.end_ms <= settled_at and first.coordinator_failovers == 0
    assert second.start_ms >= joined_at and second.generations == (2,)


def test_a_static_member_taken_over_by_a_new_process_is_no_rebalance() -> None:
    """KIP-345: N1 joins with C1's group.instance.id while the group is Stable; the coordinator
    swaps the member in place at the same generation and N1 gets C1's partitions. The settled
    rebalance keeps its end and its member count; N1 simply stands in for C1."""
    events = [
        transition(0, "Empty", "PreparingRebalance", reason="new member s-1-a joined"),
        transition(3000, "PreparingRebalance", "CompletingRebalance", 1),
        transition(3002, "CompletingRebalance", "Stable", 1),
        {**callback(3003, "C1", "assigned", "t-0", "t-1", generation=1), "member_id": "s-1-a"},
        {**callback(3004, "C2", "assigned", "t-2", "t-3", generation=1), "member_id": "s-2-a"},
        {
            "event": "member_replaced",
            "t_ms": 9000,
            "node": "broker-0",
            "group_id": "g",
            "member_id": "s-1-b",
            "previous_member_id": "s-1-a",
            "group_instance_id": "s-1",
            "generation_id": 1,
        },
        {**callback(9003, "N1", "assigned", "t-0", "t-1", generation=1), "member_id": "s-1-b"},
        transition(20000, "Stable", "PreparingRebalance", 1, reason="new member s-3-a joined"),
        transition(20002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(20003, "CompletingRebalance", "Stable", 2),
        {**callback(20004, "N1", "assigned", "t-0", "t-1", generation=2), "member_id": "s-1-b"},
        {**callback(20004, "C2", "assigned", "t-2", generation=2), "member_id": "s-2-a"},
        {**callback(20005, "C3", "assigned", "t-3", generation=2), "member_id": "s-3-a"},
    ]
    first, second = rebalances_from_events(events)
    assert (first.end_ms, first.members_after, first.imbalance_after) == (3004, 2, 0)
    assert (second.start_ms, second.end_ms, second.members_after) == (20000, 20005, 3)
    assert second.partitions_moved == 1  # t-3 only: t-0 and t-1 stayed with instance s-1


def test_a_static_takeover_in_a_real_run() -> None:
    from scenarios.simulation import Simulation
    from tests.sim.helpers import FAST, FAST_BROKER

    sim = Simulation(topics={"t": 6}, seed=1, coordinator_config=FAST_BROKER)
    sim.add_consumers(3, group_id="g", topics=["t"], start=True, group_instance_id="s-{}", **FAST)
    assert sim.run_until_stable("g")
    settled_at = sim.now
    sim.run_for(3_000)
    sim.add_consumer("N1", group_id="g", topics=["t"], start=True, group_instance_id="s-1", **FAST)
    sim.run_for(20_000)
    assert sim.status("C1") == "FAILED" and sorted(sim.members("g")) == ["C2", "C3", "N1"]
    (record,) = sim.rebalances("g")
    assert record.end_ms <= settled_at and record.members_after == 3
    assert record.imbalance_after == 0


def test_a_static_members_close_revocation_starts_no_rebalance() -> None:
    """A static member's close revokes its partitions but sends no LeaveGroup: no rebalance
    starts then (it may come back within its session, as here). Its revocation must not be held
    over to pull the start of a much later rebalance back to the close."""
    events = [
        *first_join(),
        callback(5000, "C1", "revoked", "t-0", "t-1", generation=1),
        {"event": "leave_group", "t_ms": 5000, "node": "C1", "group_id": "g", "sent": False},
        callback(7000, "C1", "assigned", "t-0", "t-1", generation=1),  # back, same generation
        transition(40000, "Stable", "PreparingRebalance", 1, reason="new member C3 joined"),
        transition(40002, "PreparingRebalance", "CompletingRebalance", 2),
        transition(40003, "CompletingRebalance", "Stable", 2),
        callback(40004, "C3", "assigned", "t-3", generation=2),
    ]
    first, second = rebalances_from_events(events)
    assert (first.end_ms, first.paused_partition_ms, first.partitions_revoked) == (3004, 0, 0)
    assert (second.start_ms, second.end_ms, second.partitions_revoked) == (40000, 40004, 0)


def test_a_static_close_and_reopen_in_a_real_run() -> None:
    from scenarios.simulation import Simulation
    from tests.sim.helpers import FAST, FAST_BROKER

    sim = Simulation(topics={"t": 6}, seed=1, coordinator_config=FAST_BROKER)
    sim.add_consumers(3, group_id="g", topics=["t"], start=True, group_instance_id="s-{}", **FAST)
    assert sim.run_until_stable("g")
    sim.run_for(3_000)
    sim.close("C1")
    assert sim.run_until(lambda: sim.status("C1") == "CLOSED")
    sim.run_for(2_000)
    sim.start("C1")  # back within its session: no rebalance
    assert sim.run_until_stable("g")
    sim.run_for(30_000)
    joined_at = sim.now
    sim.add_consumer("C4", group_id="g", topics=["t"], start=True, group_instance_id="s-4", **FAST)
    assert sim.run_until_stable("g")
    first, second = sim.rebalances("g")
    assert first.paused_partition_ms == 0
    assert second.start_ms >= joined_at and second.duration_ms < 5_000


def test_triggers_come_from_the_reason_templates_not_from_the_ids_in_them() -> None:
    """Member and instance ids are user text (client.id, group.instance.id): a client.id such as
    "session-leader" or an instance id "leaver" must not decide the trigger."""
    cases = {
        "new member session-leader-1bd2 joined": "member_joined",
        "new member leaver-50ce joined": "member_joined",
        "member metadata-app-1 rejoined": "member_joined",
        "member leaver-1 changed its metadata": "member_metadata_changed",
        "static-leader-1: the leader rejoined": "leader_rejoined",
        "joiner-1: metadata changed": "member_metadata_changed",
        "static member joined-expired replaced": "static_member_replaced",
        "static member x replaced; the protocol would change": "static_member_replaced",
        "member new-joiner-1 expired": "member_session_expired",
        "members expired waiting for SyncGroup": "member_sync_timeout",
        "LeaveGroup for ['session-joiner-1']": "member_left",
        # Kafka's own wording (GroupMetadataManager), for logs of real brokers
        "Adding new member leaver-1 with group instance id null; client reason: x": "member_joined",
        "removing member session-1 on heartbeat expiration.": "member_session_expired",
        "explicit `LeaveGroup` request for (joiner-1) members.": "member_left",
        "Leader metadata-1 re-joining group during Stable; client reason: x": "leader_rejoined",
        "Updating metadata for member leader-1 during Stable; client reason: x": (
            "member_metadata_changed"
        ),
        "Removing [leader-1] on pending sync request expiration": "member_sync_timeout",
    }
    assert {reason: classify_trigger(reason) for reason in cases} == cases


def test_triggers_in_a_real_run_with_misleading_ids() -> None:
    from scenarios.simulation import Simulation
    from tests.sim.helpers import FAST, FAST_BROKER

    sim = Simulation(topics={"t": 4}, seed=1, coordinator_config=FAST_BROKER)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, client_id="session-leader", **FAST)
    assert sim.run_until_stable("g")
    sim.add_consumer(
        "S1", group_id="g", topics=["t"], start=True, group_instance_id="leaver", **FAST
    )
    assert sim.run_until_stable("g")
    sim.close("C1")
    assert sim.run_until_stable("g")
    assert [r.trigger for r in sim.rebalances("g")] == [
        "member_joined",
        "member_joined",
        "member_left",
    ]
