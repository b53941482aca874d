"""Kafka's ``RangeAssignorTest``, ported with its exact expectations.

Kafka runs most of these under three rack configurations (no broker racks, no consumer racks,
both) with ``preferRackAwareLogic = true`` and the same expectations: when every partition is on
every rack, the rack-aware code path must give the plain result.
"""

from __future__ import annotations

import pytest

from assignors.api import ClusterMetadata, Subscription, TopicPartition
from assignors.range import RangeAssignor
from tests.assignors.kafka_rack_helpers import (
    ALL_RACKS,
    cluster_with_racks,
    kafka_broker_racks,
    null_racks,
    racks,
    verify_rack_assignment,
)

T1, T2 = "topic1", "topic2"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"
I1, I2, I3 = "instance1", "instance2", "instance3"

RACK_CONFIGS = ["NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK"]


def tp(topic: str, p: int) -> TopicPartition:
    return TopicPartition(topic, p)


class Fixture:
    """The per-test state of RangeAssignorTest: racks of brokers and consumers."""

    def __init__(self, rack_config: str, max_consumers: int = 3) -> None:
        self.replication_factor = max_consumers
        self.num_broker_racks = max_consumers if rack_config != "NO_BROKER_RACK" else 0
        self.has_consumer_rack = rack_config != "NO_CONSUMER_RACK"
        self.assignor = RangeAssignor(prefer_rack_aware_logic=True)

    def cluster(self, counts: dict[str, int]) -> ClusterMetadata:
        # RangeAssignorTest builds each topic with nextNodeIndex 0 (unlike verifyRackAssignment).
        brokers = kafka_broker_racks(self.replication_factor, self.num_broker_racks)
        racks_per_topic = {
            t: cluster_with_racks({t: n}, self.replication_factor, brokers).partition_racks[t]
            for t, n in counts.items()
        }
        return ClusterMetadata(counts, racks_per_topic)

    def subscription(
        self, topics: list[str], index: int, instance: str | None = None
    ) -> Subscription:
        n_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[index % n_racks] if self.has_consumer_rack else None
        return Subscription(topics, group_instance_id=instance, rack_id=rack)


def as_sets(assignment):
    return {m: set(ps) for m, ps in assignment.items()}


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_no_topic(has_consumer_rack):
    f = Fixture("BROKER_AND_CONSUMER_RACK" if has_consumer_rack else "NO_CONSUMER_RACK")
    result = f.assignor.assign(f.cluster({}), {C1: f.subscription([], 0)})
    assert result == {C1: []}


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_nonexistent_topic(has_consumer_rack):
    f = Fixture("BROKER_AND_CONSUMER_RACK" if has_consumer_rack else "NO_CONSUMER_RACK")
    result = f.assignor.assign(f.cluster({}), {C1: f.subscription([T1], 0)})
    assert result == {C1: []}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_consumer_one_topic(rack_config):
    f = Fixture(rack_config)
    result = f.assignor.assign(f.cluster({T1: 3}), {C1: f.subscription([T1], 0)})
    assert as_sets(result) == {C1: {tp(T1, 0), tp(T1, 1), tp(T1, 2)}}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_only_assigns_partitions_from_subscribed_topics(rack_config):
    f = Fixture(rack_config)
    result = f.assignor.assign(f.cluster({T1: 3, "other": 3}), {C1: f.subscription([T1], 0)})
    assert as_sets(result) == {C1: {tp(T1, 0), tp(T1, 1), tp(T1, 2)}}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_consumer_multiple_topics(rack_config):
    f = Fixture(rack_config)
    result = f.assignor.assign(f.cluster({T1: 1, T2: 2}), {C1: f.subscription([T1, T2], 0)})
    assert as_sets(result) == {C1: {tp(T1, 0), tp(T2, 0), tp(T2, 1)}}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_one_topic_one_partition(rack_config):
    f = Fixture(rack_config)
    subs = {C1: f.subscription([T1], 0), C2: f.subscription([T1], 1)}
    result = f.assignor.assign(f.cluster({T1: 1}), subs)
    assert as_sets(result) == {C1: {tp(T1, 0)}, C2: set()}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_one_topic_two_partitions(rack_config):
    f = Fixture(rack_config)
    subs = {C1: f.subscription([T1], 0), C2: f.subscription([T1], 1)}
    result = f.assignor.assign(f.cluster({T1: 2}), subs)
    assert as_sets(result) == {C1: {tp(T1, 0)}, C2: {tp(T1, 1)}}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_multiple_consumers_mixed_topics(rack_config):
    f = Fixture(rack_config)
    subs = {
        C1: f.subscription([T1], 0),
        C2: f.subscription([T1, T2], 1),
        C3: f.subscription([T1], 2),
    }
    result = f.assignor.assign(f.cluster({T1: 3, T2: 2}), subs)
    assert as_sets(result) == {
        C1: {tp(T1, 0)},
        C2: {tp(T1, 1), tp(T2, 0), tp(T2, 1)},
        C3: {tp(T1, 2)},
    }


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_consumers_two_topics_six_partitions(rack_config):
    f = Fixture(rack_config)
    subs = {C1: f.subscription([T1, T2], 0), C2: f.subscription([T1, T2], 1)}
    result = f.assignor.assign(f.cluster({T1: 3, T2: 3}), subs)
    assert as_sets(result) == {
        C1: {tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)},
        C2: {tp(T1, 2), tp(T2, 2)},
    }


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_two_static_consumers_two_topics_six_partitions(rack_config):
    # consumer-a sorts before consumer-b, but instance ids decide between static members.
    f = Fixture(rack_config)
    low, high = "consumer-b", "consumer-a"
    subs = {
        low: f.subscription([T1, T2], 0, instance=I1),
        high: f.subscription([T1, T2], 1, instance=I2),
    }
    result = f.assignor.assign(f.cluster({T1: 3, T2: 3}), subs)
    assert as_sets(result) == {
        low: {tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)},
        high: {tp(T1, 2), tp(T2, 2)},
    }


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_one_static_consumer_and_one_dynamic_consumer(rack_config):
    f = Fixture(rack_config)
    low, high = "consumer-b", "consumer-a"
    subs = {low: f.subscription([T1, T2], 0, instance=I1), high: f.subscription([T1, T2], 1)}
    result = f.assignor.assign(f.cluster({T1: 3, T2: 3}), subs)
    assert as_sets(result) == {
        low: {tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)},
        high: {tp(T1, 2), tp(T2, 2)},
    }


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_static_member_range_assignment_persistent(rack_config):
    f = Fixture(rack_config, max_consumers=5)
    cluster = f.cluster({T1: 5, T2: 4})
    subs = {
        C1: f.subscription([T1, T2], 0, instance=I1),
        C2: f.subscription([T1, T2], 1, instance=I2),
        C3: f.subscription([T1, T2], 2, instance=I3),
        "consumer4": f.subscription([T1, T2], 3),
    }
    expected = {
        C1: [tp(T1, 0), tp(T1, 1), tp(T2, 0)],
        C2: [tp(T1, 2), tp(T2, 1)],
        C3: [tp(T1, 3), tp(T2, 2)],
        "consumer4": [tp(T1, 4), tp(T2, 3)],
    }
    # Kafka compares the lists exactly here (assertEquals on the maps).
    assert f.assignor.assign(cluster, subs) == expected

    del subs["consumer4"]
    subs["consumer5"] = f.subscription([T1, T2], 4)
    del expected["consumer4"]
    expected["consumer5"] = [tp(T1, 4), tp(T2, 3)]
    assert f.assignor.assign(cluster, subs) == expected


def by_instance(result, subs):
    return {s.group_instance_id: result[m] for m, s in subs.items() if s.group_instance_id}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_static_member_assignment_persistent_after_member_id_changes(rack_config):
    f = Fixture(rack_config)
    cluster = f.cluster({T1: 5, T2: 5})
    subs = {
        C1: f.subscription([T1, T2], 0, instance=I1),
        C2: f.subscription([T1, T2], 1, instance=I2),
        C3: f.subscription([T1, T2], 2, instance=I3),
    }
    first = by_instance(f.assignor.assign(cluster, subs), subs)
    assert first == {
        I1: [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)],
        I2: [tp(T1, 2), tp(T1, 3), tp(T2, 2), tp(T2, 3)],
        I3: [tp(T1, 4), tp(T2, 4)],
    }
    subs["consumer4"] = subs.pop(C3)
    subs["consumer5"] = subs.pop(C2)
    assert by_instance(f.assignor.assign(cluster, subs), subs) == first


def test_rack_aware_static_member_assignment_persistent_after_member_id_changes():
    f = Fixture("BROKER_AND_CONSUMER_RACK")
    brokers = kafka_broker_racks(2, 3)
    counts = {T1: 5, T2: 5}
    partition_racks = {
        t: cluster_with_racks({t: n}, 2, brokers).partition_racks[t] for t, n in counts.items()
    }
    cluster = ClusterMetadata(counts, partition_racks)
    subs = {
        C1: f.subscription([T1, T2], 0, instance=I1),
        C2: f.subscription([T1, T2], 1, instance=I2),
        C3: f.subscription([T1, T2], 2, instance=I3),
    }
    first = by_instance(f.assignor.assign(cluster, subs), subs)
    assert first == {
        I1: [tp(T1, 0), tp(T1, 2), tp(T2, 0), tp(T2, 2)],
        I2: [tp(T1, 1), tp(T1, 3), tp(T2, 1), tp(T2, 3)],
        I3: [tp(T1, 4), tp(T2, 4)],
    }
    subs["consumer4"] = subs.pop(C3)
    subs["consumer5"] = subs.pop(C2)
    assert by_instance(f.assignor.assign(cluster, subs), subs) == first


def verify_non_rack_aware(counts, consumer_topics, expected):
    """RangeAssignorTest.verifyNonRackAwareAssignment: racks that give no information."""
    plain = RangeAssignor()
    verify_rack_assignment(plain, counts, 3, null_racks(3), racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(plain, counts, 3, racks(3), null_racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(plain, counts, 3, racks(3), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(plain, counts, 4, racks(4), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(
        plain, counts, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1
    )
    verify_rack_assignment(
        plain, counts, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1
    )
    prefer = RangeAssignor(prefer_rack_aware_logic=True)
    verify_rack_assignment(prefer, counts, 3, racks(3), racks(3), consumer_topics, expected, 0)


def test_rack_aware_assignment_with_uniform_subscription():
    counts = {"t1": 6, "t2": 7, "t3": 2}
    topics = ["t1", "t2", "t3"]
    ct = [topics, topics, topics]
    verify_non_rack_aware(
        counts,
        ct,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
    )
    a = RangeAssignor()
    verify_rack_assignment(
        a, counts, 1, racks(3), racks(3), ct,
        ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"], 0,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 2, racks(3), racks(3), ct,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"], 1,
    )  # fmt: skip
    # One consumer on a rack with no partitions.
    verify_rack_assignment(
        a, counts, 3, racks(2), racks(3), ct,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"], 4,
    )  # fmt: skip


def test_rack_aware_assignment_with_non_equal_subscription():
    counts = {"t1": 6, "t2": 7, "t3": 2}
    topics = ["t1", "t2", "t3"]
    ct = [topics, topics, ["t1", "t3"]]
    verify_non_rack_aware(
        counts,
        ct,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
    )
    a = RangeAssignor()
    verify_rack_assignment(
        a, counts, 1, racks(3), racks(3), ct,
        ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"], 2,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 2, racks(3), racks(3), ct,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"], 0,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 3, racks(2), racks(3), ct,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"], 2,
    )  # fmt: skip


def test_rack_aware_assignment_with_uniform_partitions():
    counts = {"t1": 5, "t2": 5, "t3": 5}
    topics = ["t1", "t2", "t3"]
    ct = [topics, topics, topics]
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
        "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
        "t1-4, t2-4, t3-4",
    ]
    verify_non_rack_aware(counts, ct, plain)
    # Co-partitioning is prioritised over rack alignment.
    a = RangeAssignor()
    verify_rack_assignment(a, counts, 1, racks(3), racks(3), ct, plain, 10)
    verify_rack_assignment(a, counts, 2, racks(3), racks(3), ct, plain, 5)
    verify_rack_assignment(a, counts, 3, racks(2), racks(3), ct, plain, 3)


def test_rack_aware_assignment_with_uniform_partitions_non_equal_subscription():
    counts = {"t1": 5, "t2": 5, "t3": 5}
    topics = ["t1", "t2", "t3"]
    ct = [topics, topics, ["t1", "t3"]]
    verify_non_rack_aware(
        counts,
        ct,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
    )
    a = RangeAssignor()
    verify_rack_assignment(
        a, counts, 1, racks(3), racks(3), ct,
        ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 2, racks(3), racks(3), ct,
        ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 3, racks(2), racks(3), ct,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"], 2,
    )  # fmt: skip


def test_rack_aware_assignment_with_co_partitioning():
    counts = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    ct = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    cr = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[1], ALL_RACKS[0]]
    plain = [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
        "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
    a = RangeAssignor()
    verify_rack_assignment(a, counts, 3, racks(2), cr, ct, plain, -1)
    verify_rack_assignment(a, counts, 2, racks(2), cr, ct, plain, 0)
    verify_rack_assignment(
        a, counts, 1, racks(2), cr, ct,
        ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"], 0,
    )  # fmt: skip

    all_topics = ["t1", "t2", "t3", "t4"]
    ct = [all_topics] * 4
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
        "t1-4, t2-4",
        "t1-5, t2-5",
    ]
    verify_rack_assignment(a, counts, 3, racks(2), cr, ct, plain, -1)
    verify_rack_assignment(a, counts, 2, racks(2), cr, ct, plain, 0)
    verify_rack_assignment(
        a, counts, 1, racks(2), cr, ct,
        ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"], 0,
    )  # fmt: skip
    verify_rack_assignment(
        a, counts, 1, racks(3), cr, ct,
        ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"], 6,
    )  # fmt: skip


def test_co_partitioned_assignment_with_same_subscription():
    counts = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    topic_list = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
    ct = [topic_list] * 3
    cr = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[2]]
    plain = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
    ]
    verify_rack_assignment(RangeAssignor(), counts, 3, null_racks(3), cr, ct, plain, -1)
    prefer = RangeAssignor(prefer_rack_aware_logic=True)
    verify_rack_assignment(prefer, counts, 3, racks(3), cr, ct, plain, 0)
    rack_aware = [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
    ]
    verify_rack_assignment(prefer, counts, 2, racks(3), cr, ct, rack_aware, 0)


# AbstractPartitionAssignorTest: MemberInfo order and useRackAwareAssignment.


def test_member_info_sorting():
    from assignors.common import member_info_order

    def order(pairs):
        return member_info_order({m: Subscription([], group_instance_id=g) for m, g in pairs})

    assert order([("a", None), ("b", None), ("c", None)]) == ["a", "b", "c"]
    assert order([("a", "y"), ("b", "z"), ("c", "x")]) == ["c", "a", "b"]
    assert order([("a", None), ("b", "y"), ("c", "x")]) == ["c", "b", "a"]


def test_merge_sort_many_member_info():
    import random

    from assignors.common import member_info_order

    rng = random.Random(7)
    members = [(str(i + 100), rng.random() < 0.5) for i in range(100)]
    expected = [m for m, static in members if static] + [m for m, static in members if not static]
    rng.shuffle(members)
    subs = {m: Subscription([], group_instance_id=m if static else None) for m, static in members}
    assert member_info_order(subs) == expected


def test_use_rack_aware_assignment():
    from assignors.range import _use_rack_aware

    all_racks = {"a", "b", "c"}
    two = {"a", "b"}
    on_all = [frozenset(all_racks)] * 10
    on_subset = [frozenset({"abc"[i % 3]}) for i in range(10)]
    for prefer in (False, True):
        assert not _use_rack_aware(set(), set(), on_all, prefer)
        assert not _use_rack_aware(set(), all_racks, on_all, prefer)
        assert not _use_rack_aware(all_racks, set(), [], prefer)
        assert not _use_rack_aware({"d"}, all_racks, on_all, prefer)
        assert _use_rack_aware(all_racks, all_racks, on_subset, prefer)
        assert _use_rack_aware(two, all_racks, on_subset, prefer)
    assert not _use_rack_aware(all_racks, all_racks, on_all, False)
    assert not _use_rack_aware(two, all_racks, on_all, False)
    assert not _use_rack_aware({"a", "d"}, all_racks, on_all, False)
    assert _use_rack_aware({"a", "d"}, all_racks, on_subset, False)
    assert _use_rack_aware(all_racks, all_racks, on_all, True)
    assert _use_rack_aware(two, all_racks, on_all, True)
