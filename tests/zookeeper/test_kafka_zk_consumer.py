"""Parity: Kafka's tests of the 0.8 high-level consumer, ported where they apply (the parent of
commit cc4dce94af8, KAFKA-2983: ``core/src/test/scala/unit/kafka/consumer/``).

``ZookeeperConsumerConnectorTest``: the partition-ownership halves of ``testBasic`` and
``testConsumerRebalanceListener`` are ported, and ``testBasic``'s commit-then-hand-over check
(what consumer1 committed is where consumer2 starts: nothing read twice or lost), in the
simulation's endless-log model; the rest of the message halves (produce, consume, compression,
decoders, consumer timeout) and ``testLeaderSelectionForPartition`` need brokers that store
messages, which groupsim does not simulate.

``PartitionAssignorTest``: the original mocks ZooKeeper and calls the assignor; here the
consumers really register in the simulated ZooKeeper and rebalance, and the same properties are
checked on the owner znodes they wrote. ``testRoundRobinPartitionAssignorUnbalancedStaticSubscriptions``
does not apply: it tests the 0.10.2 round-robin (KAFKA-2434), and this consumer is 0.8.2's, which
refuses unequal subscriptions (tests/assignors/test_legacy.py covers both rules).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from coordinator import events as ev
from members.zk_consumer import ZkConsumerConfig
from scenarios.zk_simulation import ZkSimulation

GROUP, TOPIC = "group1", "topic1"


def _connector(sim: ZkSimulation, name: str, topics: tuple[str, ...] = (TOPIC,), **cfg: object):
    sim.add_consumer(
        name,
        ZkConsumerConfig(group_id=GROUP, consumer_id=name, topics=topics, **cfg),  # type: ignore[arg-type]
    )
    sim.start(name)
    sim.run(until=sim.now + 10_000)


def _owners(sim: ZkSimulation) -> list[tuple[str, str]]:
    """``getZKChildrenValues(dirs.consumerOwnerDir)``: (partition, owner thread), sorted."""
    return sorted((k.rsplit("-", 1)[1], v) for k, v in sim.owners(GROUP).items())


def test_basic_partition_ownership():
    """ZookeeperConsumerConnectorTest.testBasic (ownership and commit parts)."""
    sim = ZkSimulation(topics={TOPIC: 2})
    _connector(sim, "consumer1")
    assert _owners(sim) == [("0", "group1_consumer1-0"), ("1", "group1_consumer1-0")]
    sim.commit("consumer1")  # zkConsumerConnector1.commitOffsets(true)
    assert set(sim.offsets(GROUP)) == {f"{TOPIC}-0", f"{TOPIC}-1"}
    _connector(sim, "consumer2", rebalance_backoff_ms=1000)
    expected_2 = [("0", "group1_consumer1-0"), ("1", "group1_consumer2-0")]
    assert _owners(sim) == expected_2
    _connector(sim, "consumer3", topics=())  # "create a consumer with empty map"
    assert _owners(sim) == expected_2
    for name in ("consumer1", "consumer2", "consumer3"):
        sim.close(name)


def test_consumer_rebalance_listener():
    """ZookeeperConsumerConnectorTest.testConsumerRebalanceListener: beforeReleasingPartitions
    sees nothing on the first rebalance and {0, 1} on the second (our zk_partitions_released),
    beforeStartingFetchers the same global ownership on both consumers (zk_assignment_computed)."""
    sim = ZkSimulation(topics={TOPIC: 2})
    _connector(sim, "consumer1")
    released = [e for e in sim.events if e["event"] == ev.ZK_PARTITIONS_RELEASED]
    assert released == []
    assert _owners(sim) == [("0", "group1_consumer1-0"), ("1", "group1_consumer1-0")]
    _connector(sim, "consumer2")
    released = [
        (e["node"], e["partitions"]) for e in sim.events if e["event"] == ev.ZK_PARTITIONS_RELEASED
    ]
    assert released == [("consumer1", ["topic1-0", "topic1-1"])]
    assert _owners(sim) == [("0", "group1_consumer1-0"), ("1", "group1_consumer2-0")]
    last = {
        e["node"]: e["assignment"] for e in sim.events if e["event"] == ev.ZK_ASSIGNMENT_COMPUTED
    }
    assert (
        last["consumer1"]
        == last["consumer2"]
        == {
            "group1_consumer1-0": ["topic1-0"],
            "group1_consumer2-0": ["topic1-1"],
        }
    )


def _random_group(rng: random.Random, strategy: str, same_streams: bool):
    topics = {f"topic{t}": rng.randint(1, 10) for t in range(rng.randint(1, 4))}
    sim = ZkSimulation(topics=topics)
    streams = rng.randint(1, 3)
    names = [f"g{c}" for c in range(rng.randint(1, 6))]
    for name in names:
        sim.add_consumer(
            name,
            ZkConsumerConfig(
                group_id=GROUP,
                consumer_id=name,
                topics=tuple(topics),
                num_streams=streams if same_streams else rng.randint(1, 3),
                partition_assignment_strategy=strategy,
            ),
        )
        sim.start(name)
    sim.run(until=60_000)
    return sim, topics


def _per_thread(sim: ZkSimulation) -> Counter[str]:
    return Counter(sim.owners(GROUP).values())


@pytest.mark.parametrize("seed", range(4))
def test_round_robin_partition_assignor_static_subscriptions(seed):
    """PartitionAssignorTest.testRoundRobinPartitionAssignor(StaticSubscriptions): every
    partition owned once, per-thread counts within one of each other (identical subscriptions)."""
    sim, topics = _random_group(random.Random(seed), "roundrobin", same_streams=False)
    owners = sim.owners(GROUP)
    assert sorted(owners) == sorted(f"{t}-{p}" for t, n in topics.items() for p in range(n))
    threads = [
        f"{GROUP}_{cid}-{i}"
        for cid, c in sim.consumers.items()
        for i in range(c.config.num_streams)
    ]
    counts = [_per_thread(sim).get(t, 0) for t in threads]
    assert max(counts) - min(counts) <= 1
    assert not [e for e in sim.events if e["event"] == ev.ZK_REBALANCE_FAILED]


@pytest.mark.parametrize("seed", range(4))
def test_range_partition_assignor(seed):
    """PartitionAssignorTest.testRangePartitionAssignor: per topic, every partition owned once
    and the topic's threads hold counts within one of each other."""
    sim, topics = _random_group(random.Random(100 + seed), "range", same_streams=False)
    owners = sim.owners(GROUP)
    assert sorted(owners) == sorted(f"{t}-{p}" for t, n in topics.items() for p in range(n))
    threads = [
        f"{GROUP}_{cid}-{i}"
        for cid, c in sim.consumers.items()
        for i in range(c.config.num_streams)
    ]
    for topic in topics:
        per = Counter(v for k, v in owners.items() if k.rsplit("-", 1)[0] == topic)
        counts = [per.get(t, 0) for t in threads]
        assert max(counts) - min(counts) <= 1, topic


def test_basic_committed_offsets_hand_over_without_gap_or_duplicate():
    """ZookeeperConsumerConnectorTest.testBasic, the message half made portable by the commit
    step: consumer1 reads both partitions and commits (``commitOffsets(true)``); when
    consumer2 joins, consumer1's rebalance commits again before letting go (``closeFetchers``),
    so consumer2 starts partition 1 exactly where consumer1 stopped: ``sentMessages2`` equals
    ``receivedMessages2``, nothing read twice, nothing skipped."""
    sim = ZkSimulation(topics={TOPIC: 2})
    _connector(sim, "consumer1", auto_commit_enable=True, records_per_second=50)
    sim.commit("consumer1")
    first = sim.offsets(GROUP)
    c1 = sim.consumers["consumer1"]
    assert first == {str(tp): c1.position(tp, sim.now) for tp in c1.owned}
    assert min(first.values()) > 400  # about 10 s at 50 records a second
    sim.run(until=sim.now + 5_000)  # consumer1 reads on past its commit
    _connector(sim, "consumer2", rebalance_backoff_ms=1000, records_per_second=50)
    assert _owners(sim) == [("0", "group1_consumer1-0"), ("1", "group1_consumer2-0")]
    handed_over = [
        e["offsets"][f"{TOPIC}-1"]
        for e in sim.events
        if e["event"] == ev.ZK_OFFSETS_COMMITTED
        and e["node"] == "consumer1"
        and f"{TOPIC}-1" in e["offsets"]
    ][-1]
    (tp,) = sim.consumers["consumer2"].owned
    assert sim.consumers["consumer2"].owned[tp] == handed_over > first[f"{TOPIC}-1"]
