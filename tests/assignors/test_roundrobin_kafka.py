"""Kafka's ``RoundRobinAssignorTest``, ported with its exact expectations (lists compared exactly,
as Kafka's ``assertEquals`` does: round-robin lists come out sorted)."""

from __future__ import annotations

from assignors.api import Subscription, TopicPartition
from assignors.roundrobin import RoundRobinAssignor

T, T1, T2 = "topic", "topic1", "topic2"


def tp(topic: str, p: int) -> TopicPartition:
    return TopicPartition(topic, p)


def assign(counts, subs):
    return RoundRobinAssignor().assign(counts, subs)


def test_one_consumer_no_topic():
    assert assign({}, {"consumer": Subscription([])}) == {"consumer": []}


def test_one_consumer_nonexistent_topic():
    assert assign({}, {"consumer": Subscription([T])}) == {"consumer": []}


def test_one_consumer_one_topic():
    assert assign({T: 3}, {"consumer": Subscription([T])}) == {
        "consumer": [tp(T, 0), tp(T, 1), tp(T, 2)]
    }


def test_only_assigns_partitions_from_subscribed_topics():
    result = assign({T: 3, "other": 3}, {"consumer": Subscription([T])})
    assert result == {"consumer": [tp(T, 0), tp(T, 1), tp(T, 2)]}


def test_one_consumer_multiple_topics():
    result = assign({T1: 1, T2: 2}, {"consumer": Subscription([T1, T2])})
    assert result == {"consumer": [tp(T1, 0), tp(T2, 0), tp(T2, 1)]}


def test_two_consumers_one_topic_one_partition():
    result = assign({T: 1}, {"consumer1": Subscription([T]), "consumer2": Subscription([T])})
    assert result == {"consumer1": [tp(T, 0)], "consumer2": []}


def test_two_consumers_one_topic_two_partitions():
    result = assign({T: 2}, {"consumer1": Subscription([T]), "consumer2": Subscription([T])})
    assert result == {"consumer1": [tp(T, 0)], "consumer2": [tp(T, 1)]}


def test_multiple_consumers_mixed_topics():
    subs = {
        "consumer1": Subscription([T1]),
        "consumer2": Subscription([T1, T2]),
        "consumer3": Subscription([T1]),
    }
    assert assign({T1: 3, T2: 2}, subs) == {
        "consumer1": [tp(T1, 0)],
        "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 1)],
        "consumer3": [tp(T1, 2)],
    }


def test_two_dynamic_consumers_two_topics_six_partitions():
    subs = {"consumer1": Subscription([T1, T2]), "consumer2": Subscription([T1, T2])}
    assert assign({T1: 3, T2: 3}, subs) == {
        "consumer1": [tp(T1, 0), tp(T1, 2), tp(T2, 1)],
        "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 2)],
    }


def test_two_static_consumers_two_topics_six_partitions():
    subs = {
        "consumer-b": Subscription([T1, T2], group_instance_id="instance1"),
        "consumer-a": Subscription([T1, T2], group_instance_id="instance2"),
    }
    assert assign({T1: 3, T2: 3}, subs) == {
        "consumer-b": [tp(T1, 0), tp(T1, 2), tp(T2, 1)],
        "consumer-a": [tp(T1, 1), tp(T2, 0), tp(T2, 2)],
    }


def test_one_static_consumer_and_one_dynamic_consumer():
    subs = {
        "consumer-b": Subscription([T1, T2], group_instance_id="instance1"),
        "consumer-a": Subscription([T1, T2]),
    }
    assert assign({T1: 3, T2: 3}, subs) == {
        "consumer-b": [tp(T1, 0), tp(T1, 2), tp(T2, 1)],
        "consumer-a": [tp(T1, 1), tp(T2, 0), tp(T2, 2)],
    }


def test_static_member_round_robin_assignment_persistent():
    subs = {
        f"consumer{i}": Subscription([T1, T2], group_instance_id=f"instance{i}") for i in (1, 2, 3)
    }
    subs["consumer4"] = Subscription([T1, T2])
    expected = {
        "consumer1": [tp(T1, 0), tp(T2, 1)],
        "consumer2": [tp(T1, 1), tp(T2, 2)],
        "consumer3": [tp(T1, 2)],
        "consumer4": [tp(T2, 0)],
    }
    assert assign({T1: 3, T2: 3}, subs) == expected
    del subs["consumer4"], expected["consumer4"]
    subs["consumer5"] = Subscription([T1, T2])
    expected["consumer5"] = [tp(T2, 0)]
    assert assign({T1: 3, T2: 3}, subs) == expected


def test_static_member_assignment_persistent_after_member_id_changes():
    subs = {
        f"consumer{i}": Subscription([T1, T2], group_instance_id=f"instance{i}") for i in (1, 2, 3)
    }

    def by_instance():
        result = assign({T1: 5, T2: 5}, subs)
        return {s.group_instance_id: result[m] for m, s in subs.items()}

    first = by_instance()
    assert first == {
        "instance1": [tp(T1, 0), tp(T1, 3), tp(T2, 1), tp(T2, 4)],
        "instance2": [tp(T1, 1), tp(T1, 4), tp(T2, 2)],
        "instance3": [tp(T1, 2), tp(T2, 0), tp(T2, 3)],
    }
    subs["consumer4"] = subs.pop("consumer3")
    subs["consumer5"] = subs.pop("consumer2")
    assert by_instance() == first
