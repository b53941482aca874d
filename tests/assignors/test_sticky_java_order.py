"""Where Java's HashMap order decides the sticky result, we reproduce Kafka's outcome."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.api import Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_common import member_order
from coordinator.java import java_hashmap_order, java_sorted
from tests.assignors.sticky_support import tp


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_empty_first_subscription_bug_is_mirrored(cls) -> None:
    """Kafka seeds its "common topics" set from the first *visited* member; when that member
    subscribes to nothing the set is seeded from the next one, the group counts as uniform, and
    the constrained builder hands partitions to the member that subscribes to nothing.
    "a" hashes to bucket 1 and "b" to bucket 2, so "a" is visited first whatever the input order."""
    for subs in (
        {"a": Subscription([]), "b": Subscription(["t"])},
        {"b": Subscription(["t"]), "a": Subscription([])},
    ):
        result = cls().assign({"t": 4}, subs)
        assert result == {"a": [tp("t", 0), tp("t", 2)], "b": [tp("t", 1), tp("t", 3)]}


def test_empty_subscription_visited_later_is_handled_correctly() -> None:
    """ "z" lands in bucket 10, after "b": the size check fails, the general builder runs."""
    a = StickyAssignor()
    result = a.assign({"t": 4}, {"z": Subscription([]), "b": Subscription(["t"])})
    assert result == {"z": [], "b": [tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 3)]}
    assert a.last_builder == "general"


def test_owned_keeping_pass_follows_hashmap_order_not_input_order() -> None:
    """consumer1/2/3 sit in buckets 12/11/10: Kafka visits consumer3, consumer2, consumer1, so
    consumer2 (visited before consumer1) keeps the one max-quota slot."""
    topics = ["topic1", "topic2"]
    subs = {
        "consumer1": Subscription(
            topics, owned_partitions=[tp("topic1", 0), tp("topic2", 0)], generation_id=1
        ),
        "consumer2": Subscription(
            topics, owned_partitions=[tp("topic1", 1), tp("topic2", 1)], generation_id=1
        ),
        "consumer3": Subscription(topics, generation_id=1),
    }
    for order in (["consumer1", "consumer2", "consumer3"], ["consumer3", "consumer1", "consumer2"]):
        a = CooperativeStickyAssignor()
        a.assign({"topic1": 2, "topic2": 2}, {m: subs[m] for m in order})
        assert a.partitions_transferring_ownership == {tp("topic2", 0): "consumer3"}


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(["a", "b", "c", "0", "9", "\uffff", "😀"]), max_size=4),
        unique=True,
        max_size=150,
    ),
    st.booleans(),
)
def test_member_order_is_java_hashmap_order_with_string_ranks(ids, presorted) -> None:
    """The sticky assignors' member order (both sides of the 64-member threshold, input in id
    order or not, ids outside the BMP): Java HashMap iteration order, each input position's
    place in it, and each member's rank in Java ``String`` order."""
    if presorted:
        ids = java_sorted(ids)
    members, position, rank = member_order(ids)
    assert members == java_hashmap_order(ids)
    assert [members[p] for p in position] == ids
    assert [members[i] for i in sorted(range(len(ids)), key=rank.__getitem__)] == java_sorted(ids)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 1000])
@pytest.mark.parametrize("shuffled", [False, True])
def test_member_order_at_group_sizes(n: int, shuffled: bool) -> None:
    ids = [f"consumer-{i:04d}" for i in range(n)]
    if shuffled:
        random.Random(n).shuffle(ids)
    members, position, rank = member_order(ids)
    assert members == java_hashmap_order(ids)
    assert [members[p] for p in position] == ids
    assert [members[i] for i in sorted(range(n), key=rank.__getitem__)] == sorted(ids)
