"""End to end, eager and cooperative: failures in the middle of a rebalance.

The leader crashes mid-rebalance; a member never sends SyncGroup; the coordinator's broker fails
mid-rebalance; a slow consumer overruns max.poll.interval.ms; offset commits race a generation
bump; a network partition isolates a member. Invariants are checked after every step.
"""

from __future__ import annotations

from typing import Any

import attrs

from assignors.api import Subscription
from coordinator.errors import Errors
from coordinator.protocol import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from members.consumer_protocol import encode_subscription
from tests.sim.helpers import PROTOCOLS, consumer_settings, owners

ALL = {f"orders-{p}" for p in range(6)}


def join_fourth_member(sim: Any, protocol: str) -> None:
    sim.add_consumer("C4", group_id="g", topics=["orders"], **consumer_settings(protocol))
    sim.start("C4")
    assert sim.run_until(lambda: sim.group_state("g") == "PreparingRebalance", timeout_ms=1_000)


def test_leader_crashes_mid_rebalance(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3)
    join_fourth_member(sim, protocol)
    leader = sim.leader("g")
    crashed_at = sim.now
    sim.crash(leader)
    assert sim.run_until_stable("g")
    # the join phase waited for the dead leader until its session expired, then elected another
    new_leader = sim.leader("g")
    assert new_leader not in (None, leader)
    assert sim.leader_member_id("g") in sim.group("g").member_ids
    assert sim.now >= crashed_at + 9_000
    assert sim.events_named("leader_elected", group_id="g")
    assert set(owners(sim)) == ALL
    assert leader not in sim.assignments("g")
    assert sim.violations == []


def test_a_member_that_never_sends_syncgroup_is_removed(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3)
    coordinator = sim.coordinator("g")
    join = JoinGroupRequest(
        group_id="g",
        session_timeout_ms=45_000,  # longer than the rebalance timeout: the sync deadline acts
        rebalance_timeout_ms=15_000,
        member_id="",
        protocol_type="consumer",
        protocols=[
            JoinGroupRequestProtocol(
                PROTOCOLS[protocol][0], encode_subscription(Subscription(["orders"]))
            )
        ],
    )
    first = sim.send_raw(join, coordinator, from_node="rogue")
    sim.run_for(10)
    # KIP-394: a JoinGroup without a member id gets one back with MEMBER_ID_REQUIRED
    assert first.response.error_code == Errors.MEMBER_ID_REQUIRED
    member_id = first.response.member_id
    assert member_id
    second = sim.send_raw(attrs.evolve(join, member_id=member_id), coordinator, from_node="rogue")
    assert sim.run_until(lambda: second.done, timeout_ms=60_000)
    assert second.response.error_code == Errors.NONE
    generation = second.response.generation_id
    assert generation == sim.generation("g")
    completed_at = sim.now
    # the rogue member got partitions but never asks for them; the coordinator removes it R
    # (the largest rebalance timeout, the consumers' 30 s) after the join phase completed
    assert sim.run_until(lambda: member_id not in sim.group("g").member_ids, timeout_ms=60_000)
    assert 29_000 <= sim.now - completed_at <= 31_000
    assert sim.run_until_stable("g")
    # one round even when cooperative: the rogue's partitions were never owned, nothing revokes
    assert sim.generation("g") == generation + 1
    assert set(owners(sim)) == ALL and len(sim.assignments("g")) == 3
    [removed] = sim.events_named("member_removed", group_id="g", member_id=member_id)
    if protocol == "eager":
        assert "SyncGroup" in removed["reason"]
    else:
        # cooperative: the follow-up round started first, and the rogue never rejoined it
        assert "rejoin" in removed["reason"]


def test_coordinator_broker_fails_mid_rebalance(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3)
    join_fourth_member(sim, protocol)
    old = sim.coordinator("g")
    sim.fail_broker(old)
    assert sim.run_until_stable("g")
    new = sim.coordinator("g")
    assert new not in (None, old)
    assert sim.group("g").coordinator in (None, new)
    assert set(owners(sim)) == ALL and len(sim.assignments("g")) == 4
    assert all(sim.consumer(c).coordinator == new for c in sim.consumer_ids)
    # the members learned of the failure through disconnects, then rediscovered the coordinator
    assert sim.events_named("sim_disconnected")
    record = sim.rebalances("g")[-1]
    assert record.coordinator_failovers == 1 and record.outcome == "Stable"
    # the broker comes back as a follower; the group stays where it is
    sim.restart_broker(old)
    sim.run_for(5_000)
    assert sim.coordinator("g") == new and sim.group_state("g") == "Stable"


def test_slow_consumer_exceeding_max_poll_interval_leaves_and_comes_back(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3)
    stalled_at = sim.now
    sim.stall("C2", 40_000)  # max.poll.interval.ms is 30 s
    assert sim.run_until(lambda: "C2" not in sim.members("g"), timeout_ms=35_000)
    assert sim.consumer("C2").member_id == ""  # it reset its generation and member id
    # the heartbeat thread noticed the poll timeout (30 s after the last poll) and sent LeaveGroup
    assert 29_000 <= sim.now - stalled_at <= 31_000
    [timeout] = sim.events_named("poll_timeout", node="C2")
    assert sim.events_named("request_sent", node="C2", api="LeaveGroup")
    assert timeout["t_ms"] >= stalled_at + 29_000
    assert sim.run_until(lambda: sim.is_stable("g", exact_members=False), timeout_ms=5_000)
    assert set(sim.members("g")) == {"C1", "C3"}
    assert {p for c in ("C1", "C3") for p in map(str, sim.assignment(c))} == ALL
    # when the application returns to poll() it rejoins as a new member
    assert sim.run_until_stable("g", timeout_ms=30_000)
    assert set(sim.members("g")) == {"C1", "C2", "C3"}
    assert set(owners(sim)) == ALL
    assert sim.violations == []


def test_commit_before_the_generation_bump_is_accepted(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3, enable_auto_commit=False)
    sim.run_for(2_000)
    join_fourth_member(sim, protocol)
    # C1 has not heard of the rebalance yet: still STABLE at the old generation
    assert sim.client_state("C1") == "STABLE" and sim.consumer("C1").generation_id == 1
    sim.commit("C1")
    sim.run_for(10)
    result = sim.consumer("C1").commits[-1]
    assert result.done and result.error is None and result.generation_id == 1
    committed = sim.committed_offsets("g")
    assert all(committed[(tp.topic, tp.partition)] == off for tp, off in result.offsets.items())


def test_commit_after_the_generation_moved_on_fails(stable_group: Any, protocol: str) -> None:
    """Kafka's CommitFailedException: the group rebalanced while the application was busy."""
    sim = stable_group(3, enable_auto_commit=False)
    sim.run_for(2_000)  # C2 has consumed something to commit
    stalled_at = sim.now
    sim.stall("C2", 40_000)
    before = dict(sim.committed_offsets("g"))
    sim.at(stalled_at + 39_999, lambda: sim.commit("C2"))  # processing done, commitSync()
    sim.run(until=stalled_at + 40_000)
    result = sim.consumer("C2").commits[-1]
    assert result.error == "COMMIT_FAILED"
    assert sim.generation("g") >= 2
    assert sim.committed_offsets("g") == before
    assert sim.run_until_stable("g")


def test_a_commit_delayed_past_the_generation_bump_is_fenced(
    stable_group: Any, protocol: str
) -> None:
    """The coordinator's half of the race: OffsetCommit carrying a generation that has ended."""
    sim = stable_group(3)
    c1 = sim.consumer("C1")
    old_generation, member_id = c1.generation_id, c1.member_id
    join_fourth_member(sim, protocol)
    assert sim.run_until_stable("g")
    assert sim.generation("g") > old_generation and c1.member_id == member_id

    def commit(generation: int) -> Any:
        request = OffsetCommitRequest(
            group_id="g",
            generation_id=generation,
            member_id=member_id,
            topics=[OffsetCommitRequestTopic("orders", [OffsetCommitRequestPartition(0, 99)])],
        )
        call = sim.send_raw(request, sim.coordinator("g"), from_node="late-commit")
        assert sim.run_until(lambda: call.done, timeout_ms=1_000)
        return call.response.topics[0].partitions[0].error_code

    assert commit(old_generation) == Errors.ILLEGAL_GENERATION
    assert commit(sim.generation("g")) == Errors.NONE
    assert sim.committed_offsets("g")[("orders", 0)] == 99


def test_isolated_member_is_expired_and_rejoins_after_the_partition_heals(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3)
    sim.partition_network([["C1"]], duration_ms=15_000)
    assert sim.run_until(lambda: "C1" not in sim.members("g"), timeout_ms=12_000)
    assert sim.events_named("sim_message_lost", node="C1", reason="network partition")
    assert sim.run_until_stable("g", timeout_ms=60_000)
    assert set(sim.members("g")) == {"C1", "C2", "C3"}
    assert set(owners(sim)) == ALL
    assert sim.violations == []  # the zombie C1 never counted as a second owner
