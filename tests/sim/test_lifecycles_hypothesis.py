"""Random member lifecycles with the invariants checked after every step (Hypothesis, bounded).

Each example starts a group of four consumers, then plays a random sequence of starts, closes,
crashes, restarts, stalls, commits, partition additions, broker failures, network partitions
isolating one consumer, and pauses, for eager and
for cooperative rebalancing and for dynamic and static members. Safety: no invariant violation
ever (a partition owned twice, a leader outside the group, a generation going back). Liveness:
once the faults stop, the group settles with every running consumer in it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scenarios.simulation import Simulation
from tests.sim.helpers import FAST_BROKER, consumer_settings

IDS = ["C1", "C2", "C3", "C4"]

operations = st.one_of(
    st.tuples(st.just("start"), st.sampled_from(IDS)),
    st.tuples(st.just("close"), st.sampled_from(IDS)),
    st.tuples(st.just("close"), st.sampled_from(IDS), st.sampled_from([0, 2_000])),  # a timeout
    st.tuples(st.just("crash"), st.sampled_from(IDS)),
    st.tuples(st.just("restart"), st.sampled_from(IDS)),
    st.tuples(st.just("stall"), st.sampled_from(IDS), st.sampled_from([500, 5_000, 35_000])),
    st.tuples(st.just("commit"), st.sampled_from(IDS)),
    st.tuples(st.just("add_partitions")),
    st.tuples(st.just("fail_broker"), st.integers(0, 2)),
    st.tuples(st.just("wait"), st.sampled_from([10, 300, 1_500, 6_000, 12_000])),
    st.tuples(st.just("isolate"), st.sampled_from(IDS), st.sampled_from([2_000, 15_000])),
)


@settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    protocol=st.sampled_from(["eager", "cooperative"]),
    static=st.booleans(),
    seed=st.integers(0, 1_000),
    ops=st.lists(operations, min_size=1, max_size=16),
)
# a start while the close's final commit is outstanding (start() refuses a CLOSING consumer)
@example(
    protocol="eager", static=False, seed=1, ops=[("wait", 6_000), ("close", "C1"), ("start", "C1")]
)
def test_random_lifecycles_keep_the_invariants(
    protocol: str, static: bool, seed: int, ops: list[tuple]
) -> None:
    sim = Simulation(
        brokers=3,
        topics={"orders": 6},
        seed=seed,
        coordinator_config=FAST_BROKER,
        check_invariants=True,
        raise_on_violation=True,
    )
    extra = {"group_instance_id": "instance-{}"} if static else {}
    sim.add_consumers(
        4,
        group_id="g",
        topics=["orders"],
        **consumer_settings(protocol, metadata_max_age_ms=5_000),
        **extra,
    )
    sim.start(["C1", "C2"])
    partitions = 6
    for op in ops:
        kind = op[0]
        if kind == "start":
            # a consumer still closing (final commit outstanding) cannot be started yet
            if not sim.is_running(op[1]) and sim.status(op[1]) != "CLOSING":
                sim.start(op[1])
        elif kind == "close" and sim.is_running(op[1]):
            sim.close(op[1], *op[2:])
        elif kind == "crash" and sim.is_running(op[1]):
            sim.crash(op[1])
        elif kind == "restart":
            sim.restart(op[1])
        elif kind == "stall" and sim.is_running(op[1]):
            sim.stall(op[1], op[2])
        elif kind == "commit" and sim.is_running(op[1]):
            sim.commit(op[1])
        elif kind == "add_partitions" and partitions < 12:
            partitions += 2
            sim.add_partitions("orders", partitions)
        elif kind == "fail_broker":
            broker = f"broker-{op[1]}"
            alive = [b for b in sim.cluster.broker_nodes if sim.cluster.is_alive(b)]
            if sim.cluster.is_alive(broker) and len(alive) > 1:
                sim.fail_broker(broker)
        elif kind == "wait":
            sim.run_for(op[1])
        elif kind == "isolate" and not sim.network.partitioned:
            sim.partition_network([[op[1]]], duration_ms=op[2])
    if sim.network.partitioned:
        sim.heal_network()
    for broker in sim.cluster.broker_nodes:
        if not sim.cluster.is_alive(broker):
            sim.restart_broker(broker)
    running = [c for c in IDS if sim.is_running(c)]
    assert sim.violations == []
    sim.run_for(6_000)  # a metadata refresh (5 s) so the leader has seen any new partitions
    if running:
        # liveness: with the faults over, every running consumer ends up in one stable group
        assert sim.run_until_stable("g", timeout_ms=180_000), sim.events[-20:]
        assert set(sim.members("g")) == set(running)
        owned = [str(tp) for c in running for tp in sim.assignment(c)]
        assert sorted(owned) == sorted(f"orders-{p}" for p in range(partitions))
