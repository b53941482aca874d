"""Ports of Kafka's server-side RangeAssignorTest (group-coordinator/src/test/.../assignor at
1eb7644), every test; members are built in a sorted map as Kafka's TreeMap does.

All thirteen tests are ported. Kafka's topic ids are random; the outcomes do not depend on them.
"""

from __future__ import annotations

import pytest

from coordinator.assignor import PartitionAssignorException
from coordinator.assignor.range import RangeAssignor
from coordinator.assignor.sets import RangeSet

from .helpers import (
    HETEROGENEOUS,
    HOMOGENEOUS,
    TOPIC1,
    TOPIC2,
    TOPIC3,
    describer,
    expect,
    member,
    plain,
    spec,
)

ASSIGNOR = RangeAssignor()


def assign(members, partitions, subscription_type=HOMOGENEOUS):
    return ASSIGNOR.assign(spec(members, subscription_type), describer(partitions))


def test_one_member_no_topic():
    """RangeAssignorTest.testOneMemberNoTopic"""
    result = assign({"A": member([])}, {TOPIC1: 3})
    assert plain(result) == {"A": {}}


def test_one_member_subscribed_to_non_existent_topic():
    """RangeAssignorTest.testOneMemberSubscribedToNonExistentTopic"""
    with pytest.raises(PartitionAssignorException, match="non-existent topic"):
        assign({"A": member([TOPIC2])}, {TOPIC1: 3})


def test_first_assignment_two_members_two_topics_same_subscriptions():
    """RangeAssignorTest.testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions"""
    members = {"A": member([TOPIC1, TOPIC3]), "B": member([TOPIC1, TOPIC3])}
    result = assign(members, {TOPIC1: 3, TOPIC3: 2})
    assert plain(result) == expect(
        A={TOPIC1: [0, 1], TOPIC3: [0]},
        B={TOPIC1: [2], TOPIC3: [1]},
    )


def test_first_assignment_three_members_three_topics_different_subscriptions():
    """RangeAssignorTest.testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions"""
    members = {
        "A": member([TOPIC1, TOPIC2]),
        "B": member([TOPIC3]),
        "C": member([TOPIC2, TOPIC3]),
    }
    result = assign(members, {TOPIC1: 3, TOPIC2: 3, TOPIC3: 2}, HETEROGENEOUS)
    assert plain(result) == expect(
        A={TOPIC1: [0, 1, 2], TOPIC2: [0, 1]},
        B={TOPIC3: [0]},
        C={TOPIC2: [2], TOPIC3: [1]},
    )


def test_first_assignment_num_members_greater_than_num_partitions():
    """RangeAssignorTest.testFirstAssignmentNumMembersGreaterThanNumPartitions"""
    members = {m: member([TOPIC1, TOPIC3]) for m in "ABC"}
    result = assign(members, {TOPIC1: 3, TOPIC3: 2})
    assert plain(result) == expect(
        A={TOPIC1: [0], TOPIC3: [0]},
        B={TOPIC1: [1], TOPIC3: [1]},
        C={TOPIC1: [2]},
    )


def test_static_membership():
    """RangeAssignorTest.testStaticMembership"""
    members = {
        "A": member([TOPIC1], instance="instanceA"),
        "B": member([TOPIC1], instance="instanceB"),
    }
    initial = assign(members, {TOPIC1: 3})
    del members["A"]
    members["memberA1"] = member([TOPIC1], instance="instanceA")
    again = assign(dict(sorted(members.items())), {TOPIC1: 3})
    assert initial.members["A"].partitions == again.members["memberA1"].partitions
    assert initial.members["B"].partitions == again.members["B"].partitions


def test_mixed_static_membership():
    """RangeAssignorTest.testMixedStaticMembership"""
    members = {
        "A": member([TOPIC1], instance="instanceA"),
        "B": member([TOPIC1]),
        "C": member([TOPIC1], instance="instanceC"),
    }
    initial = assign(members, {TOPIC1: 5})
    del members["A"]
    members["memberA1"] = member([TOPIC1], instance="instanceA")
    again = assign(dict(sorted(members.items())), {TOPIC1: 5})
    assert initial.members["A"].partitions == again.members["memberA1"].partitions
    assert initial.members["B"].partitions == again.members["B"].partitions
    assert initial.members["C"].partitions == again.members["C"].partitions
    # Static members first (by instance id), then B: A1 gets 0-1, C 2-3, B 4.
    assert plain(again)["B"] == {TOPIC1: {4}}


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added():
    """RangeAssignorTest.testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded"""
    members = {
        "A": member([TOPIC1, TOPIC2], {TOPIC1: [0], TOPIC2: [0]}),
        "B": member([TOPIC1, TOPIC2], {TOPIC1: [1], TOPIC2: [1]}),
        "C": member([TOPIC1, TOPIC2]),
    }
    result = assign(members, {TOPIC1: 2, TOPIC2: 2})
    assert plain(result) == expect(A={TOPIC1: [0], TOPIC2: [0]}, B={TOPIC1: [1], TOPIC2: [1]}, C={})


def test_reassignment_when_one_partition_added_for_two_members_two_topics():
    """RangeAssignorTest.testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics"""
    members = {
        "A": member([TOPIC1, TOPIC2], {TOPIC1: [0, 1], TOPIC2: [0, 1]}),
        "B": member([TOPIC1, TOPIC2], {TOPIC1: [2], TOPIC2: [2]}),
    }
    result = assign(members, {TOPIC1: 4, TOPIC2: 4})
    assert plain(result) == expect(
        A={TOPIC1: [0, 1], TOPIC2: [0, 1]}, B={TOPIC1: [2, 3], TOPIC2: [2, 3]}
    )


def test_reassignment_when_one_member_added_after_initial_assignment():
    """RangeAssignorTest.testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {
        "A": member([TOPIC1, TOPIC2], {TOPIC1: [0, 1], TOPIC2: [0, 1]}),
        "B": member([TOPIC1, TOPIC2], {TOPIC1: [2], TOPIC2: [2]}),
        "C": member([TOPIC1, TOPIC2]),
    }
    result = assign(members, {TOPIC1: 3, TOPIC2: 3})
    assert plain(result) == expect(
        A={TOPIC1: [0], TOPIC2: [0]}, B={TOPIC1: [1], TOPIC2: [1]}, C={TOPIC1: [2], TOPIC2: [2]}
    )


def test_reassignment_when_one_member_added_and_one_partition_after_initial_assignment():
    """RangeAssignorTest.testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {
        "A": member([TOPIC1, TOPIC2], {TOPIC1: [0, 1], TOPIC2: [0, 1]}),
        "B": member([TOPIC1, TOPIC2], {TOPIC1: [2], TOPIC2: [2]}),
        "C": member([TOPIC1]),
    }
    result = assign(members, {TOPIC1: 4, TOPIC2: 3}, HETEROGENEOUS)
    assert plain(result) == expect(
        A={TOPIC1: [0, 1], TOPIC2: [0, 1]}, B={TOPIC1: [2], TOPIC2: [2]}, C={TOPIC1: [3]}
    )


def test_reassignment_when_one_member_removed_after_initial_assignment():
    """RangeAssignorTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {"B": member([TOPIC1, TOPIC2], {TOPIC1: [2], TOPIC2: [2]})}
    result = assign(members, {TOPIC1: 3, TOPIC2: 3})
    assert plain(result) == expect(B={TOPIC1: [0, 1, 2], TOPIC2: [0, 1, 2]})


def test_reassignment_when_multiple_subscriptions_removed_after_initial_assignment():
    """RangeAssignorTest.testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics"""
    members = {
        "A": member([TOPIC1], {TOPIC1: [0, 1, 2], TOPIC2: [0]}),
        "B": member([TOPIC1, TOPIC2, TOPIC3], {TOPIC2: [1]}),
        "C": member([TOPIC2], {TOPIC2: [2], TOPIC3: [0, 1]}),
    }
    result = assign(members, {TOPIC1: 3, TOPIC2: 3, TOPIC3: 2}, HETEROGENEOUS)
    assert plain(result) == expect(
        A={TOPIC1: [0, 1]},
        B={TOPIC1: [2], TOPIC2: [0, 1], TOPIC3: [0, 1]},
        C={TOPIC2: [2]},
    )


def test_ranges_are_kafkas_range_sets_in_ascending_order():
    """Kafka's RangeAssignor hands out RangeSet views that iterate ascending (RangeSetTest's
    testIterator); member order of the sorted member list."""
    members = {f"m{i}": member([TOPIC1]) for i in (3, 1, 2)}
    result = assign(members, {TOPIC1: 7})
    sets = [result.members[m].partitions[TOPIC1] for m in ("m1", "m2", "m3")]
    assert all(isinstance(s, RangeSet) for s in sets)
    assert [list(s) for s in sets] == [[0, 1, 2], [3, 4], [5, 6]]
    assert sets[0] == {0, 1, 2} and {0, 1, 2} == sets[0] and sets[0] != RangeSet(0, 2)
    assert 2 in sets[0] and 3 not in sets[0] and "2" not in sets[0]
