"""Bad input to range and roundrobin gets a clear AssignmentInputError, never a bare traceback;
odd but legal input (empty group, duplicate topics, zero-partition topics) behaves like Kafka."""

from __future__ import annotations

import pytest

from assignors import ClusterMetadata, Subscription, TopicPartition
from assignors.common import AssignmentInputError
from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor

ASSIGNORS = [RangeAssignor(), RoundRobinAssignor()]


@pytest.mark.parametrize("assignor", ASSIGNORS, ids=lambda a: a.name)
@pytest.mark.parametrize(
    ("counts", "subs", "message"),
    [
        ({"t": 1}, {"a": ["t"]}, "expected a Subscription"),
        ({"t": 1}, {1: Subscription(["t"])}, "member ids must be strings"),
        ({"t": -1}, {"a": Subscription(["t"])}, "non-negative integer"),
        ({"t": "3"}, {"a": Subscription(["t"])}, "non-negative integer"),
        ({"t": 1}, {"a": Subscription(["t", 5])}, "topic names must be strings"),
        ({"t": 1}, {"a": Subscription([["t"]])}, "topic names must be strings"),
        ({"t": 1}, [("a", Subscription(["t"]))], "must map member id"),
    ],
)
def test_bad_input_is_named(assignor, counts, subs, message):
    with pytest.raises(AssignmentInputError, match=message):
        assignor.assign(counts, subs)


@pytest.mark.parametrize("assignor", ASSIGNORS, ids=lambda a: a.name)
def test_empty_group_and_zero_partition_topics(assignor):
    assert assignor.assign({"t": 3}, {}) == {}
    assert assignor.assign({"t": 0}, {"a": Subscription(["t"])}) == {"a": []}
    # A member listing a topic twice is still one subscriber.
    subs = {"a": Subscription(["t", "t"]), "b": Subscription(["t"])}
    result = assignor.assign({"t": 2}, subs)
    assert sorted(len(p) for p in result.values()) == [1, 1]


def test_cluster_metadata_is_accepted_in_place_of_counts():
    cluster = ClusterMetadata({"t": 2})
    assert RoundRobinAssignor().assign(cluster, {"a": Subscription(["t"])}) == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 1)]
    }
