"""The invariant checker catches what it promises to catch, and reports each violation once."""

from __future__ import annotations

from typing import Any

import pytest

from assignors.api import TopicPartition
from coordinator.views import GroupView, MemberView
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

    def start(self, now: int) -> list[Any]:
        return []


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
