"""Ports of Kafka's rack-aware sticky tests (KIP-881): testRackAwareAssignmentWith*Subscription.

``verify_rack_assignment`` mirrors Kafka's ``AbstractPartitionAssignorTest.verifyRackAssignment``:
brokers ``0..n-1`` on the given racks, partition ``i`` of the k-th topic on brokers
``(i + j + offset) % n`` for ``j < replicationFactor``, members ``consumer0..`` with the given
racks and owned partitions (no user data, no generation), and results compared as sorted strings.
The eager assignor ignores ``owned_partitions`` (it only reads user data), as in Kafka.
"""

from __future__ import annotations

import pytest

from assignors.api import ClusterMetadata, Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_common import AbstractStickyAssignor
from tests.assignors.sticky_support import parse_tps

ALL = ("a", "b", "c", "d", "e", "f")
TOPICS = {"t1": 6, "t2": 7, "t3": 2}


def racks(n: int) -> list[str | None]:
    return [ALL[i % len(ALL)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def verify_rack_assignment(
    assignor: AbstractStickyAssignor,
    topics: dict[str, int],
    rf: int,
    broker_racks: list[str | None],
    consumer_racks: list[str | None],
    consumer_topics: list[list[str]],
    owned: list[str] | None,
    expected: list[str],
    mismatches: int,
) -> None:
    n_brokers = len(broker_racks)
    partition_racks: dict[str, list[list[str]]] = {}
    offset = 0
    for topic, count in topics.items():
        partition_racks[topic] = [
            [r for r in (broker_racks[(p + j + offset) % n_brokers] for j in range(rf)) if r]
            for p in range(count)
        ]
        offset += count
    cluster = ClusterMetadata(dict(topics), partition_racks)
    subs = {}
    for i, (rack, ts) in enumerate(zip(consumer_racks, consumer_topics, strict=True)):
        mine = parse_tps(owned[i]) if owned and i < len(owned) else []
        subs[f"consumer{i}"] = Subscription(ts, None, mine, -1, rack_id=rack)
    result = assignor.assign(cluster, subs)
    actual = {m: ", ".join(sorted(str(p) for p in parts)) for m, parts in result.items()}
    assert actual == {f"consumer{i}": e for i, e in enumerate(expected)}
    if mismatches >= 0:
        bad = [
            p
            for i, rack in enumerate(consumer_racks)
            if rack is not None
            for p in result[f"consumer{i}"]
            if rack not in partition_racks[p.topic][p.partition]
        ]
        assert len(bad) == mismatches, bad


@pytest.fixture(params=["sticky", "cooperative-sticky"])
def assignor(request: pytest.FixtureRequest) -> AbstractStickyAssignor:
    return StickyAssignor() if request.param == "sticky" else CooperativeStickyAssignor()


def _both(assignor, rf, brokers, consumers, ctopics, expected, mismatches) -> None:
    """verifyUniformSubscription / verifyNonEqualSubscription: fresh, then owning the result."""
    verify_rack_assignment(
        assignor, TOPICS, rf, brokers, consumers, ctopics, None, expected, mismatches
    )
    verify_rack_assignment(
        assignor, TOPICS, rf, brokers, consumers, ctopics, expected, expected, mismatches
    )


def test_rack_aware_assignment_with_uniform_subscription(assignor: AbstractStickyAssignor) -> None:
    all_topics = ["t1", "t2", "t3"]
    ct = [all_topics, all_topics, all_topics]
    plain = [
        "t1-0, t1-3, t2-0, t2-3, t2-6",
        "t1-1, t1-4, t2-1, t2-4, t3-0",
        "t1-2, t1-5, t2-2, t2-5, t3-1",
    ]
    _both(assignor, 3, null_racks(3), racks(3), ct, plain, -1)
    _both(assignor, 3, racks(3), null_racks(3), ct, plain, -1)
    assignor.prefer_rack_aware_logic = True
    _both(assignor, 3, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 4, racks(4), racks(3), ct, plain, 0)
    assignor.prefer_rack_aware_logic = False
    _both(assignor, 3, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 3, racks(3), ["d", "e", "f"], ct, plain, -1)
    _both(assignor, 3, racks(3), [None, "e", "f"], ct, plain, -1)
    _both(assignor, 1, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 2, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 3, racks(2), racks(3), ct, plain, 5)
    owned = [
        "t1-0, t1-1, t1-2, t1-3, t1-4",
        "t1-5, t2-0, t2-1, t2-2, t2-3",
        "t2-4, t2-5, t2-6, t3-0, t3-1",
    ]
    if isinstance(assignor, CooperativeStickyAssignor):
        verify_rack_assignment(
            assignor,
            TOPICS,
            1,
            racks(3),
            racks(3),
            ct,
            owned,
            ["t1-0, t1-3", "t2-1", "t2-5, t3-1"],
            0,
        )
        assignor.prefer_rack_aware_logic = True
        verify_rack_assignment(assignor, TOPICS, 3, racks(3), racks(3), ct, plain, plain, 0)
    else:
        verify_rack_assignment(assignor, TOPICS, 1, racks(3), racks(3), ct, owned, plain, 0)
        assignor.prefer_rack_aware_logic = True
        verify_rack_assignment(assignor, TOPICS, 3, racks(3), racks(3), ct, plain, plain, 0)


def test_rack_aware_assignment_with_non_equal_subscription(
    assignor: AbstractStickyAssignor,
) -> None:
    all_topics = ["t1", "t2", "t3"]
    ct = [all_topics, all_topics, ["t1", "t3"]]
    plain = [
        "t1-5, t2-0, t2-2, t2-4, t2-6",
        "t1-3, t2-1, t2-3, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-4, t3-1",
    ]
    _both(assignor, 3, null_racks(3), racks(3), ct, plain, -1)
    _both(assignor, 3, racks(3), null_racks(3), ct, plain, -1)
    assignor.prefer_rack_aware_logic = True
    _both(assignor, 3, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 4, racks(4), racks(3), ct, plain, 0)
    assignor.prefer_rack_aware_logic = False
    _both(assignor, 3, racks(3), racks(3), ct, plain, 0)
    _both(assignor, 3, racks(3), ["d", "e", "f"], ct, plain, -1)
    _both(assignor, 3, racks(3), [None, "e", "f"], ct, plain, -1)
    rf1 = [
        "t1-3, t2-0, t2-2, t2-3, t2-6",
        "t1-4, t2-1, t2-4, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-5, t3-1",
    ]
    _both(assignor, 1, racks(3), racks(3), ct, rf1, 4)
    rf2 = [
        "t1-3, t2-0, t2-2, t2-5, t2-6",
        "t1-0, t2-1, t2-3, t2-4, t3-0",
        "t1-1, t1-2, t1-4, t1-5, t3-1",
    ]
    _both(assignor, 2, racks(3), racks(3), ct, rf2, 0)
    _both(assignor, 3, racks(2), racks(3), ct, plain, 5)
    owned = [
        "t1-0, t1-1, t1-2, t1-3, t1-4",
        "t1-5, t2-0, t2-1, t2-2, t2-3",
        "t2-4, t2-5, t2-6, t3-0, t3-1",
    ]
    if isinstance(assignor, StickyAssignor):
        verify_rack_assignment(assignor, TOPICS, 1, racks(3), racks(3), ct, owned, rf1, 4)
    else:
        intermediate = ["t1-3", "t2-1", "t3-1"]
        verify_rack_assignment(assignor, TOPICS, 1, racks(3), racks(3), ct, owned, intermediate, 0)
        verify_rack_assignment(assignor, TOPICS, 1, racks(3), racks(3), ct, intermediate, rf1, 4)
    if isinstance(assignor, StickyAssignor):
        sticky_final = [
            "t1-5, t2-0, t2-2, t2-4, t2-6",
            "t1-3, t2-1, t2-3, t2-5, t3-0",
            "t1-0, t1-1, t1-2, t1-4, t3-1",
        ]
        for prefer in (False, True):
            assignor.prefer_rack_aware_logic = prefer
            verify_rack_assignment(
                assignor, TOPICS, 3, racks(3), racks(3), ct, owned, sticky_final, 0
            )
    else:
        final = [
            "t1-2, t1-3, t1-4, t2-4, t2-5",
            "t2-0, t2-1, t2-2, t2-3, t2-6",
            "t1-0, t1-1, t1-5, t3-0, t3-1",
        ]
        intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        for prefer in (False, True):
            assignor.prefer_rack_aware_logic = prefer
            verify_rack_assignment(
                assignor, TOPICS, 3, racks(3), racks(3), ct, owned, intermediate, 0
            )
            verify_rack_assignment(
                assignor, TOPICS, 3, racks(3), racks(3), ct, intermediate, final, 0
            )
