"""End to end, eager and cooperative: every rebalance trigger of the seed articles.

A member joins, a member leaves, a member crashes, partitions are added; plus a static member
restarted within its session timeout (no rebalance) and a rolling restart (how many rebalances).
Each test runs the real coordinator and consumers through the simulation with invariants on.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.helpers import consumer_settings, owners

ALL = {f"orders-{p}" for p in range(6)}


def test_first_join_settles_into_one_generation(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3)
    assert sim.group_state("g") == "Stable"
    assert sim.generation("g") == 1
    assert sim.protocol("g") == ("range" if protocol == "eager" else "cooperative-sticky")
    assert sim.leader("g") in {"C1", "C2", "C3"}
    assert sim.leader_member_id("g") == sim.consumer(sim.leader("g")).member_id
    assert set(owners(sim)) == ALL
    assert all(len(parts) == 2 for parts in sim.assignments("g").values())
    [first] = sim.rebalances("g")
    assert first.generation_id == 1 and first.trigger == "member_joined"
    assert sim.violations == []


def test_a_member_joining_rebalances_eager_all_cooperative_only_what_moves(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(2)
    before = owners(sim)
    sim.add_consumer("C3", group_id="g", topics=["orders"], **consumer_settings(protocol))
    sim.start("C3")
    assert sim.run_until_stable("g")
    after = owners(sim)
    assert set(after) == ALL
    assert sorted(len(p) for p in sim.assignments("g").values()) == [2, 2, 2]
    moved = {p for p in ALL if before[p] != after[p]}
    record = sim.rebalances("g")[-1]
    assert record.trigger == "member_joined"
    assert record.partitions_moved == len(moved) >= 2
    if protocol == "eager":
        assert record.rounds == 1 and sim.generation("g") == 2
        assert record.partitions_revoked == 6  # every member gave up everything
    else:
        assert record.rounds == 2 and sim.generation("g") == 3  # KIP-429's follow-up round
        assert record.partitions_revoked == len(moved)  # only what moved was revoked
        # the partitions that stayed were never revoked: no callback mentions them
        revoked = {
            p
            for e in sim.events_named("rebalance_callback", callback="revoked")
            for p in e["partitions"]
        }
        assert revoked == moved


def test_a_member_leaving_rebalances_at_once(stable_group: Any, protocol: str) -> None:
    sim = stable_group(3)
    closed_at = sim.now
    sim.close("C2")
    assert sim.run_until_stable("g")
    record = sim.rebalances("g")[-1]
    assert record.trigger == "member_left"
    assert record.start_ms - closed_at < 100  # LeaveGroup, not the session timeout
    assert set(owners(sim)) == ALL and set(sim.assignments("g")) == {"C1", "C3"}
    assert sim.events_named("request_sent", node="C2", api="LeaveGroup")


def test_a_crashed_member_is_noticed_only_by_its_session_timeout(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3)
    crashed_at = sim.now
    sim.crash("C2")
    assert sim.status("C2") == "CRASHED" and not sim.is_running("C2")
    assert sim.assignment("C2") == []  # a dead process consumes nothing
    sim.run(until=crashed_at + 9_000)  # session.timeout.ms is 10 s
    assert sim.generation("g") == 1 and sim.group_state("g") == "Stable"
    assert sim.run_until_stable("g")
    record = sim.rebalances("g")[-1]
    assert record.trigger == "member_session_expired"
    assert crashed_at + 9_000 < record.start_ms <= crashed_at + 10_000
    assert set(owners(sim)) == ALL and set(sim.assignments("g")) == {"C1", "C3"}


def test_added_partitions_are_noticed_by_the_leader_and_assigned(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3, metadata_max_age_ms=5_000)
    sim.add_partitions("orders", 9)
    assert sim.run_until(lambda: sim.generation("g") > 1, timeout_ms=10_000)
    assert sim.run_until_stable("g")
    assert set(owners(sim)) == {f"orders-{p}" for p in range(9)}
    assert sorted(len(p) for p in sim.assignments("g").values()) == [3, 3, 3]
    leader = sim.leader("g")
    assert sim.events_named("rejoin_requested", node=leader)


def test_static_member_restarted_within_its_session_timeout_causes_no_rebalance(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3, group_instance_id="instance-{}")
    before = owners(sim)
    old_member_id = sim.consumer("C2").member_id
    sim.crash("C2")
    sim.run_for(3_000)
    sim.restart("C2")
    assert sim.run_until_stable("g")
    sim.run_for(20_000)  # well past the old session timeout: still nothing
    assert sim.generation("g") == 1
    assert len(sim.rebalances("g")) == 1
    assert owners(sim) == before
    assert sim.consumer("C2").member_id != old_member_id  # replaced under the same instance id
    assert sim.events_named("member_replaced", group_id="g")


def test_static_member_closed_and_started_again_extends_no_rebalance(
    stable_group: Any, protocol: str
) -> None:
    sim = stable_group(3, group_instance_id="instance-{}")
    [first] = sim.rebalances("g")
    sim.close("C2")  # a static member sends no LeaveGroup
    sim.run_for(2_000)
    sim.start("C2")
    assert sim.run_until_stable("g")
    sim.run_for(5_000)
    assert sim.generation("g") == 1
    # C2 is handed generation 1's assignment again; that delivery is not part of the first
    # rebalance, whose record must end where it ended
    [record] = sim.rebalances("g")
    assert record.end_ms == first.end_ms
    assert record.start_ms == first.start_ms


@pytest.mark.parametrize("membership", ["dynamic", "static"])
def test_rolling_restart_rebalance_counts(
    stable_group: Any, protocol: str, membership: str
) -> None:
    n = 4
    static = {"group_instance_id": "instance-{}"} if membership == "static" else {}
    sim = stable_group(n, **static)
    for cid in sim.consumer_ids:
        sim.close(cid)
        sim.run_for(2_000)  # the restart takes 2 s, far below the 10 s session timeout
        sim.start(cid)
        assert sim.run_until_stable("g", timeout_ms=60_000)
    records = sim.rebalances("g")[1:]
    if membership == "static":
        # a static member sends no LeaveGroup and comes back in time: nothing happens at all
        assert records == [] and sim.generation("g") == 1
    elif protocol == "eager":
        # every restart costs two rebalances: the LeaveGroup, then the new member's JoinGroup
        assert len(records) == 2 * n and sim.generation("g") == 1 + 2 * n
        assert all(r.rounds == 1 for r in records)
    else:
        # as many rebalances, but each join takes KIP-429's two rounds (revoke, then assign)
        assert len(records) == 2 * n
        assert [r.rounds for r in records] == [1, 2] * n
        assert sim.generation("g") == 1 + 3 * n
    assert set(owners(sim)) == ALL


def test_run_until_stable_waits_for_every_group_of_a_list(groupsim: Any, protocol: str) -> None:
    from tests.sim.helpers import FAST_BROKER

    sim = groupsim(topics={"orders": 4, "payments": 4}, seed=4, coordinator_config=FAST_BROKER)
    for group_id, topic in (("g1", "orders"), ("g2", "payments")):
        sim.add_consumers(
            2,
            prefix=f"{group_id}-c",
            group_id=group_id,
            topics=[topic],
            **consumer_settings(protocol),
        )
    sim.start()
    assert sim.run_until_stable(["g1", "g2"], timeout_ms=30_000)
    assert sim.is_stable("g1") and sim.is_stable("g2")
    sim.crash("g2-c1")  # g2 cannot settle before the session timeout (10 s) removes it
    assert not sim.run_until_stable(["g1", "g2"], timeout_ms=5_000)
    assert sim.is_stable("g1") and not sim.is_stable("g2")
    assert sim.run_until_stable(["g1", "g2"], timeout_ms=30_000)
    assert sim.members("g2") == ["g2-c2"]
