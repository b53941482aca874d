"""``run_until_stable`` / ``is_stable``: when the runner calls a group settled."""

from __future__ import annotations

import pytest

from scenarios.simulation import Simulation
from tests.sim.helpers import FAST, FAST_BROKER


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
def test_many_groups_settle_whatever_the_log_level(level: str) -> None:
    """With the log muted (warning) no group event is recorded, so the runner cannot rely on
    the log to know which groups changed: it must still see both groups settle."""
    sim = Simulation(topics={"t": 4}, seed=1, log_level=level, coordinator_config=FAST_BROKER)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, **FAST)
    sim.add_consumers(2, prefix="D", group_id="h", topics=["t"], start=True, **FAST)
    assert sim.run_until_stable(["g", "h"], timeout_ms=60_000)
    assert sim.now < 10_000
    assert sim.is_stable("g") and sim.is_stable("h")
    if level == "warning":
        assert sim.events == []


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_a_finished_join_counts_only_once_the_consumer_applied_it(strategy: str) -> None:
    """C1 stalls while its SyncGroup answer is on the way: the answer makes it STABLE with no
    rejoin needed, but the assignment reaches onJoinComplete only at its next poll() (Kafka's
    joinFuture is still set), 5 s later. The group is not settled before that."""
    sim = Simulation(topics={"t": 4}, seed=1, coordinator_config=FAST_BROKER)
    sim.add_consumers(
        2, group_id="g", topics=["t"], start=True, partition_assignment_strategy=[strategy], **FAST
    )
    assert sim.run_until(lambda: sim.group_state("g") == "CompletingRebalance")
    stalled_at = sim.now
    sim.stall("C1", 5_000)
    assert sim.run_until_stable("g", timeout_ms=60_000)
    assert sim.now >= stalled_at + 5_000
    assert sorted(len(parts) for parts in sim.assignments("g").values()) == [2, 2]
    assert not sim.consumer("C1").rejoin_pending


def test_a_consumer_subscribed_to_nothing_takes_no_part_in_the_group() -> None:
    """Kafka's consumer joins no group while it subscribes to nothing (rejoinNeededOrPending is
    false without auto-assigned partitions): the group settles around it, also when a member
    unsubscribes (a dynamic member leaves with LeaveGroup)."""
    sim = Simulation(topics={"t": 4}, seed=1, coordinator_config=FAST_BROKER, check_invariants=True)
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, **FAST)
    sim.add_consumer("E", group_id="g", topics=[], start=True, **FAST)
    assert sim.run_until_stable("g", timeout_ms=30_000)
    assert sim.run_until_stable(["g"], timeout_ms=1)
    assert sorted(sim.members("g")) == ["C1", "C2"] and sim.client_state("E") == "UNJOINED"
    sim.subscribe("C2", [])
    assert sim.run_until_stable("g", timeout_ms=30_000)
    assert sim.members("g") == ["C1"] and len(sim.assignment("C1")) == 4
    assert sim.assignment("C2") == [] and sim.violations == []
