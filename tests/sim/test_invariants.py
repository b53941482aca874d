"""The invariant checker catches what it promises to catch, and reports each violation once."""

from __future__ import annotations

from typing import Any

import pytest

from assignors.api import TopicPartition
from coordinator.views import GroupView, MemberView
from members.result import NO_RESULT, ConsumerResult
from scenarios.invariants import InvariantViolation
from scenarios.simulation import Simulation
from tests.sim.helpers import FAST, FAST_BROKER, consumer_settings


def settled(**kwargs: Any) -> Simulation:
    sim = Simulation(topics={"orders": 4}, coordinator_config=FAST_BROKER, seed=2, **kwargs)
    sim.add_consumers(2, group_id="g", topics=["orders"], **consumer_settings("eager"))
    sim.start()
    assert sim.run_until_stable("g")
    return sim


def test_a_partition_owned_twice_is_reported_once() -> None:
    sim = settled(check_invariants=True)
    assert sim.violations == []
    stolen = sim.assignment("C1")[0]
    sim.consumer("C2").fetch.owned.append(stolen)  # corrupt one consumer's owned set by hand
    sim.run_for(3_000)
    [violation] = sim.violations
    assert violation["invariant"] == "exclusive_ownership"
    assert violation["partition"] == str(stolen)
    assert sorted(violation["owners"]) == ["C1", "C2"]
    [event] = sim.events_named("invariant_violated")
    assert event["detail"] == violation["detail"]


def test_raise_on_violation_stops_the_run() -> None:
    sim = settled(check_invariants=True, raise_on_violation=True)
    sim.consumer("C2").fetch.owned.append(sim.assignment("C1")[0])
    with pytest.raises(InvariantViolation, match="owned by C1 and C2"):
        sim.run_for(3_000)


def test_checks_are_off_unless_asked_for() -> None:
    sim = settled()
    sim.consumer("C2").fetch.owned.append(sim.assignment("C1")[0])
    sim.run_for(3_000)
    assert sim.violations == []


class ScriptedCluster:
    """A cluster whose group view is whatever the test says (for the group-level checks)."""

    def __init__(self, *, num_brokers: int, **_: Any) -> None:
        self.broker_nodes = tuple(f"broker-{i}" for i in range(num_brokers))
        self.view: GroupView | None = None
        self.coordinator = "broker-0"

    def is_alive(self, node: str) -> bool:
        return True

    def group(self, group_id: str) -> GroupView | None:
        return self.view

    def coordinator_for(self, group_id: str) -> str:
        return self.coordinator


class Idle:
    def __init__(self, node: str, config: Any, **_: Any) -> None:
        self.config = config
        self.member_id = ""
        self.owned: list[TopicPartition] = []

    def start(self, now: int) -> ConsumerResult:
        return NO_RESULT


class GroupConfig:
    group_id = "g"


def view(generation: int, leader: str | None, members: tuple[str, ...]) -> GroupView:
    return GroupView(
        "g",
        "Stable",
        generation,
        "consumer",
        "range",
        leader,
        [
            MemberView(m, None, "c", "/h", b"", False, False, False, 10_000, 30_000, ())
            for m in members
        ],
        (),
    )


def test_generation_going_back_and_a_foreign_leader_are_caught() -> None:
    sim = Simulation(
        brokers=2,
        cluster_factory=ScriptedCluster,
        consumer_factory=Idle,
        check_invariants=True,
    )
    sim.add_consumer("C1", GroupConfig(), start=True)
    cluster = sim.cluster
    cluster.view = view(5, "m1", ("m1",))
    sim.at(10, lambda: None)
    sim.run()
    assert sim.violations == []
    cluster.view = view(4, "m1", ("m1",))
    sim.at(20, lambda: None)
    sim.run()
    assert [v["invariant"] for v in sim.violations] == ["generation_monotonic"]
    # after a coordinator failover the group may come back at its last persisted generation
    cluster.coordinator = "broker-1"
    cluster.view = view(3, "m1", ("m1",))
    sim.at(30, lambda: None)
    sim.run()
    assert len(sim.violations) == 1
    cluster.view = view(3, "m9", ("m1",))
    sim.at(40, lambda: None)
    sim.run()
    assert [v["invariant"] for v in sim.violations][-1] == "leader_is_member"


def test_a_reload_on_the_same_coordinator_may_go_back_to_the_persisted_generation() -> None:
    """One broker: the group reached generation 2 in memory (CompletingRebalance, nothing
    written yet) when its only broker died; restarted, the broker reloads it at generation 1, the
    last one persisted, as Kafka does. Same coordinator, but the group was gone in between."""
    sim = Simulation(
        brokers=1,
        topics={"t": 4},
        seed=1,
        coordinator_config=FAST_BROKER,
        check_invariants=True,
        raise_on_violation=True,
    )
    sim.add_consumers(2, group_id="g", topics=["t"], start=True, **FAST)
    assert sim.run_until_stable("g")
    sim.add_consumer("C3", group_id="g", topics=["t"], start=True, **FAST)
    assert sim.run_until(lambda: sim.group_state("g") == "CompletingRebalance")
    assert sim.generation("g") == 2
    sim.fail_broker("broker-0")
    assert sim.group("g") is None
    sim.run_for(100)
    sim.restart_broker("broker-0")
    assert sim.run_until(lambda: sim.group("g") is not None)
    assert sim.generation("g") == 1 and sim.coordinator("g") == "broker-0"
    # all three rejoin in one round (generation 2 again, a number the lost group had used)
    assert sim.run_until_stable("g") and sim.generation("g") == 2
    assert sim.violations == []


def test_the_generation_baseline_restarts_only_when_the_group_is_gone() -> None:
    sim = Simulation(
        brokers=2, cluster_factory=ScriptedCluster, consumer_factory=Idle, check_invariants=True
    )
    sim.add_consumer("C1", GroupConfig(), start=True)
    cluster = sim.cluster
    for t, shown in ((10, view(5, "m1", ("m1",))), (20, None), (30, view(4, "m1", ("m1",)))):
        cluster.view = shown
        sim.at(t, lambda: None)
        sim.run()
    assert sim.violations == []  # unloaded, then reloaded lower under the same coordinator
    cluster.view = view(3, "m1", ("m1",))  # but going back while loaded is still caught
    sim.at(40, lambda: None)
    sim.run()
    assert [v["generation_to"] for v in sim.violations] == [3]


def test_ownership_is_still_checked_while_no_coordinator_holds_the_group() -> None:
    """Its only broker down, nobody holds the group; the member table last seen still binds."""
    sim = Simulation(
        brokers=1, topics={"orders": 4}, coordinator_config=FAST_BROKER, seed=2,
        check_invariants=True,
    )  # fmt: skip
    sim.add_consumers(2, group_id="g", topics=["orders"], **consumer_settings("eager"))
    sim.start()
    assert sim.run_until_stable("g")
    sim.fail_broker("broker-0")
    assert sim.cluster.group("g") is None
    sim.consumer("C2").fetch.owned.append(sim.assignment("C1")[0])
    sim.run_for(2_000)
    assert sim.cluster.group("g") is None  # still down: the check ran without a coordinator
    [violation] = sim.violations
    assert violation["invariant"] == "exclusive_ownership"
    assert sorted(violation["owners"]) == ["C1", "C2"]


def late_static_laggard() -> Simulation:
    """Static C1 learns of a rebalance 3 s late (its next heartbeat), then its onJoinPrepare
    commit is cut off by a network split: the coordinator's rebalance timer (20 s from the start)
    expires before C1's joinPrepareTimer (20 s from C1's start), the join completes without it,
    and the static member keeps its slot while C2 is given one of C1's old partitions."""
    sim = Simulation(
        topics={"orders": 6}, coordinator_config=FAST_BROKER, seed=1, check_invariants=True
    )
    settings = consumer_settings(
        "eager",
        session_timeout_ms=45_000,
        heartbeat_interval_ms=3_000,
        max_poll_interval_ms=20_000,
        group_instance_id="inst-{}",
    )
    sim.add_consumers(2, group_id="g", topics=["orders"], **settings)
    sim.start()
    assert sim.run_until_stable("g")
    sim.add_consumers(1, first=3, group_id="g", topics=["orders"], start=True, **settings)
    laggard = sim.consumer("C1")
    while laggard._prepare_commit is None:  # C1 is in onJoinPrepare, its commit sent
        assert sim.step()
    assert (
        sim.now
        >= sim.events_named("group_state_changed", state_to="PreparingRebalance")[-1]["t_ms"]
        + 2_900
    )
    sim.partition_network([["C1"]], 25_000)  # the commit's answer is lost
    return sim


def test_static_laggard_blocked_in_join_prepare_is_an_anomaly_not_a_violation() -> None:
    sim = late_static_laggard()
    laggard = sim.consumer("C1")
    held = list(laggard.fetch.owned)

    def overlap() -> bool:
        return any(tp in held for tp in sim.assignment("C2") + sim.assignment("C3"))

    assert sim.run_until(overlap, timeout_ms=30_000)
    # Kafka's picture at this instant: the coordinator completed generation 2 without C1's
    # JoinGroup but kept the static member (completeClassicGroupJoin removes only dynamic
    # laggards), and C1 still holds its generation-1 partitions, marked pending revocation
    # (maybeMarkPartitionsPendingRevocation: nothing fetched) while it waits in poll()
    assert sim.generation("g") == 2 and laggard.member_id in sim.group("g").member_ids
    assert laggard.fetch.owned == held and laggard.fetch.pending_revocation
    assert sim.violations == []
    [anomaly] = sim.anomalies
    assert anomaly["anomaly"] == "owned_pending_revocation" and anomaly["holder"] == "C1"
    assert anomaly["invariant"] == "exclusive_ownership" and anomaly["generation_id"] == 2
    [event] = sim.events_named("invariant_anomaly")
    assert event["partition"] == anomaly["partition"] and "C1" in event["owners"]
    # then joinPrepareTimer expires, C1 revokes and rejoins: the overlap ends, no violation
    sim.run_for(40_000)
    assert sim.events_named("join_prepare_commit_timeout", node="C1")
    assert sim.run_until_stable("g")
    assert sim.violations == [] and len(sim.anomalies) == 1


def test_the_same_overlap_without_pending_revocation_is_a_violation() -> None:
    sim = late_static_laggard()
    sim.consumer("C1").fetch.pending_revocation = False  # as if C1 were still fetching them
    sim.run_for(21_000)
    assert [v["invariant"] for v in sim.violations] == ["exclusive_ownership"]
    assert sim.anomalies == []
