"""KIP-848 end to end: simulated ``group.protocol=consumer`` consumers (members.consumer_membership)
against the simulated coordinator's ConsumerGroupHeartbeat (coordinator.consumer_group_manager),
through the network and the runner, as the consumer-protocol runs of Kafka's integration tests
(PlaintextConsumer*Test with groupProtocol=consumer) exercise them."""

from __future__ import annotations

from members.config import ConsumerConfig
from scenarios.simulation import Simulation

TOPIC = "orders"


def config(**kwargs) -> ConsumerConfig:
    return ConsumerConfig(group_id="g", group_protocol="consumer", **kwargs)


def build(n: int, partitions: int = 6, **kwargs) -> tuple[Simulation, list]:
    sim = Simulation(brokers=3, topics={TOPIC: partitions}, seed=5)
    cs = [sim.add_consumer(f"C{i}", config(**kwargs), topics=[TOPIC]) for i in range(n)]
    return sim, cs


def owned(cs) -> list[str]:
    return sorted(str(tp) for c in cs for tp in c.assignment)


def test_members_join_reconcile_and_acknowledge() -> None:
    sim, cs = build(3)
    sim.start()
    sim.run(20_000)
    view = sim.cluster.consumer_group("g")
    assert view.state == "Stable" and view.group_epoch == 3
    assert [c.state for c in cs] == ["STABLE"] * 3
    assert [c.generation_id for c in cs] == [3, 3, 3]
    assert owned(cs) == [f"{TOPIC}-{p}" for p in range(6)]
    assert sorted(len(c.assignment) for c in cs) == [2, 2, 2]
    # the client's view of each member is the coordinator's
    by_id = {m.member_id: m for m in view.members}
    for c in cs:
        member = by_id[c.member_id]
        assert member.member_epoch == c.generation_id
        assert sorted(p for _, ps in member.assigned for p in ps) == sorted(
            tp.partition for tp in c.assignment
        )


def test_a_crashed_member_is_fenced_by_the_session_timeout_and_its_partitions_move() -> None:
    sim, cs = build(3)
    sim.start()
    sim.run(20_000)
    sim.crash("C0")
    sim.run(20_000 + 39_000)
    assert len(sim.cluster.consumer_group("g").members) == 3  # group.consumer.session.timeout.ms
    sim.run(20_000 + 70_000)
    view = sim.cluster.consumer_group("g")
    assert len(view.members) == 2 and view.group_epoch == 4
    assert owned(cs[1:]) == [f"{TOPIC}-{p}" for p in range(6)]


def test_close_leaves_with_epoch_minus_one_and_static_with_minus_two() -> None:
    """A dynamic member's leave (-1) frees its partitions at once; a static member's (-2) keeps
    them assigned to its instance id until the session timeout (KIP-848's temporary leave)."""
    sim, cs = build(2)
    static = sim.add_consumer("S", config(group_instance_id="s-1"), topics=[TOPIC])
    sim.start()
    sim.run(20_000)
    held = [str(tp) for tp in static.assignment]
    assert len(held) == 2
    sim.close("C0")
    sim.close("S")
    sim.run(40_000)
    leaves = {
        e["node"]: e["generation_id"]
        for e in sim.events
        if e["event"] == "request_sent"
        and e["api"] == "ConsumerGroupHeartbeat"
        and e.get("generation_id", 0) < 0
    }
    assert leaves == {"C0": -1, "S": -2}
    assert static.status.value == "CLOSED" and cs[0].status.value == "CLOSED"
    # the departed static member is still in the target assignment (it may take even more of
    # it: C0's partitions are spread over both), so those partitions stay unowned meanwhile
    view = sim.cluster.consumer_group("g")
    (gone,) = [m for m in view.members if m.instance_id == "s-1"]
    assert gone.member_epoch == -2
    kept = {f"{TOPIC}-{p}" for _, ps in gone.target for p in ps}
    assert set(held) <= kept
    assert owned([cs[1]]) == sorted({f"{TOPIC}-{p}" for p in range(6)} - kept)
    sim.run(20_000 + 70_000)  # the static member's session timed out: its partitions move
    assert owned([cs[1]]) == sorted(f"{TOPIC}-{p}" for p in range(6))


def test_a_poll_timeout_makes_the_member_stale_then_it_rejoins() -> None:
    sim, cs = build(2, max_poll_interval_ms=30_000)
    sim.start()
    sim.run(20_000)
    sim.stall("C0", 60_000)
    sim.run(20_000 + 31_000)
    assert cs[0].state == "STALE"
    assert owned([cs[1]]) == [f"{TOPIC}-{p}" for p in range(6)]
    sim.run(20_000 + 90_000)
    assert cs[0].state == "STABLE" and cs[0].assignment
    callbacks = [e["callback"] for e in sim.events_named("rebalance_callback", node="C0")]
    assert "lost" in callbacks


def test_a_duplicate_group_instance_id_is_refused_with_unreleased_instance_id() -> None:
    sim = Simulation(brokers=3, topics={TOPIC: 4}, seed=5)
    first = sim.add_consumer("A", config(group_instance_id="dup"), topics=[TOPIC])
    second = sim.add_consumer("B", config(group_instance_id="dup"), topics=[TOPIC])
    sim.start("A")
    sim.run(10_000)
    sim.start("B")
    sim.run(20_000)
    assert first.state == "STABLE" and len(first.assignment) == 4
    assert second.failed and second.fatal_error == "UNRELEASED_INSTANCE_ID"
