"""Java orderings used by range (and reused by the sticky assignors): String order, HashMap order.

The HashMap expectations below were produced by running ``new HashMap<>()`` + ``put`` + iteration
on Java 17 with the same keys in the same insertion order.
"""

from __future__ import annotations

import pytest

from assignors import Subscription, TopicPartition
from assignors.common import member_info_order
from assignors.range import RangeAssignor
from coordinator.java import (
    java_hashmap_capacity,
    java_hashmap_order,
    java_sorted,
    java_spread_hash,
    java_string_key,
    needs_utf16_order,
)

JAVA17_HASHMAP_ORDERS = [
    ("consumer1 consumer2 consumer3", "consumer3 consumer2 consumer1"),
    (
        "t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13",
        "t4 t5 t6 t7 t8 t9 t10 t12 t11 t13 t0 t1 t2 t3",
    ),
    ("Aa BB C1 c2 zz", "Aa BB zz C1 c2"),  # "Aa" and "BB" share a hash: insertion order
    ("BB Aa zz", "BB Aa zz"),
    ("topic1 topic2 other orders payments", "topic1 topic2 other payments orders"),
]


@pytest.mark.parametrize(("inserted", "iterated"), JAVA17_HASHMAP_ORDERS)
def test_hashmap_order_matches_java(inserted, iterated):
    assert java_hashmap_order(inserted.split()) == iterated.split()


def test_hashmap_order_keeps_first_position_of_repeated_keys():
    assert java_hashmap_order(["BB", "Aa", "BB"]) == ["BB", "Aa"]


def test_hashmap_capacity_doubles_past_three_quarters():
    assert [java_hashmap_capacity(n) for n in (0, 12, 13, 24, 25, 48, 49)] == [
        16,
        16,
        32,
        32,
        64,
        64,
        128,
    ]


def test_spread_hash_mixes_high_bits():
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE: 0x80000000 ^ 0x8000 = 0x80008000
    assert java_spread_hash("polygenelubricants") == 0x80008000


def test_java_string_order_differs_from_python_outside_the_bmp():
    emoji, private_use = "\U0001f600", "\ue000"
    assert sorted([emoji, private_use]) == [private_use, emoji]  # Python: code points
    assert java_sorted([emoji, private_use]) == [emoji, private_use]  # Java: surrogate 0xD83D first
    assert java_string_key("ab") < java_string_key("abc") < java_string_key("b")
    assert needs_utf16_order(["x", emoji]) and not needs_utf16_order(["x", "é", private_use])


def test_member_order_uses_java_string_order_and_static_first():
    subs = {
        "consumer10": Subscription([]),
        "consumer2": Subscription([]),
        "z-static": Subscription([], group_instance_id="\U0001f600"),
        "a-static": Subscription([], group_instance_id="\ue000"),
    }
    # Not natural order: consumer10 < consumer2. Static members first, by instance id in UTF-16.
    assert member_info_order(subs) == ["z-static", "a-static", "consumer10", "consumer2"]


def test_range_member_order_outside_the_bmp():
    subs = {"\ue000": Subscription(["t"]), "\U0001f600": Subscription(["t"])}
    result = RangeAssignor().assign({"t": 3}, subs)
    assert result["\U0001f600"] == [TopicPartition("t", 0), TopicPartition("t", 1)]


def test_range_lists_follow_java_hashmap_topic_order_by_default():
    topics = ["topic1", "topic2", "other", "orders", "payments"]
    subs = {"c": Subscription(topics)}
    counts = dict.fromkeys(topics, 1)
    java = RangeAssignor().assign(counts, subs)["c"]
    assert [tp.topic for tp in java] == ["topic1", "topic2", "other", "payments", "orders"]
    by_name = RangeAssignor(topic_order="sorted").assign(counts, subs)["c"]
    assert [tp.topic for tp in by_name] == sorted(topics)
    assert set(java) == set(by_name)


def test_range_java_topic_order_ignores_missing_topics_like_kafka():
    # "ghost" is in the subscribed-topics HashSet but never reaches partitionsPerTopic.
    subs = {"c": Subscription(["t13", "ghost", "t0", "t4"])}
    result = RangeAssignor().assign({"t0": 1, "t4": 1, "t13": 1}, subs)["c"]
    assert (
        [tp.topic for tp in result]
        == java_hashmap_order(["t13", "t0", "t4"])
        == ["t4", "t13", "t0"]
    )


def test_topic_order_option_is_checked():
    with pytest.raises(ValueError, match="topic_order"):
        RangeAssignor(topic_order="random")
