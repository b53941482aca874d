"""Where Java's HashMap order decides the sticky result, we reproduce Kafka's outcome."""

from __future__ import annotations

import pytest

from assignors.api import Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
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
