"""Ports of Kafka's UniformHeterogeneousAssignmentBuilderTest (1eb7644,
group-coordinator/src/test/.../assignor), every test.

Kafka's TestGroupSpecImpl returns the member ids sorted; here the member map is built sorted,
which :class:`GroupSpecImpl` iterates in that order. Topic ids are Kafka's ``Uuid.fromString``
values; rack-aware cases do not exist at this commit (the builders ignore racks).
"""

from __future__ import annotations

import pytest

from coordinator.assignor import PartitionAssignorException
from coordinator.assignor.uniform import UniformAssignor
from coordinator.kafka_uuid import Uuid

from .helpers import HETEROGENEOUS, describer, expect, member, plain, spec

T1 = Uuid.from_string("T1-A4s3VTwiI5CTbEp6POw")
T2 = Uuid.from_string("T2-B4s3VTwiI5YHbPp6YUe")
T3 = Uuid.from_string("T3-CU8fVTLCz5YMkLoDQsa")
T4 = Uuid.from_string("T4-Tw9fVTLCz5HbPp6YQsa")
ASSIGNOR = UniformAssignor()


def assign(members, partitions):
    return ASSIGNOR.assign(
        spec(dict(sorted(members.items())), HETEROGENEOUS), describer(partitions)
    )


def test_two_members_no_topic_subscription():
    """UniformHeterogeneousAssignmentBuilderTest.testTwoMembersNoTopicSubscription"""
    assert plain(assign({"A": member([]), "B": member([])}, {T1: 3})) == {}


def test_two_members_subscribed_to_nonexistent_topics():
    """UniformHeterogeneousAssignmentBuilderTest.testTwoMembersSubscribedToNonexistentTopics"""
    with pytest.raises(PartitionAssignorException, match=f"topic {T3} which doesn't exist"):
        assign({"A": member([T3]), "B": member([T2])}, {T1: 3})


def test_first_assignment_two_members_two_topics():
    """UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopics"""
    result = assign({"A": member([T1, T3]), "B": member([T3])}, {T1: 3, T3: 6})
    assert plain(result) == expect(A={T1: [0, 1, 2], T3: [4]}, B={T3: [0, 1, 2, 3, 5]})


def test_first_assignment_num_members_greater_than_total_num_partitions():
    """UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentNumMembersGreaterThanTotalNumPartitions"""
    members = {"A": member([T3]), "B": member([T3]), "C": member([T1])}
    result = assign(members, {T3: 1, T1: 2})
    assert plain(result) == expect(A={T3: [0]}, B={}, C={T1: [0, 1]})


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment"""
    members = {
        "A": member([T1], {T1: [0, 1, 2]}),
        "B": member([T1, T2], {T1: [3], T2: [0]}),
        "C": member([T1, T2, T3], {T1: [4, 5], T2: [1, 2, 3], T3: [0, 1, 2, 3]}),
    }
    result = assign(members, {T1: 6, T2: 4, T3: 4})
    assert plain(result) == expect(
        A={T1: [0, 1, 2, 5]}, B={T1: [3], T2: [0, 1, 2, 3]}, C={T1: [4], T3: [0, 1, 2, 3]}
    )


def test_reassignment_when_partitions_are_added_for_two_members():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenPartitionsAreAddedForTwoMembers"""
    members = {
        "A": member([T1, T3], {T1: [0, 1, 2, 3], T3: [0, 1]}),
        "B": member([T1, T2, T3, T4], {T2: [0, 1, 2], T4: [0, 1, 2]}),
    }
    result = assign(members, {T1: 6, T2: 5, T3: 3, T4: 3})
    assert plain(result) == expect(
        A={T1: [0, 1, 2, 3, 4, 5], T3: [0, 1, 2]}, B={T2: [0, 1, 2, 3, 4], T4: [0, 1, 2]}
    )


def test_reassignment_when_one_member_added_and_partitions_added():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics"""
    members = {
        "A": member([T1], {T1: [0, 2], T2: [0]}),
        "B": member([T1, T2], {T1: [1], T2: [1, 2]}),
        "C": member([T1, T2]),
    }
    result = assign(members, {T1: 6, T2: 7})
    assert plain(result) == expect(
        A={T1: [0, 2, 3, 4, 5]}, B={T1: [1], T2: [1, 2, 6]}, C={T2: [0, 3, 4, 5]}
    )


def test_reassignment_when_one_member_removed():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics"""
    members = {
        "A": member([T1, T3], {T1: [0, 1, 2], T3: [0, 1]}),
        "B": member([T2], {T2: [3, 4, 5, 6]}),
    }
    result = assign(members, {T1: 3, T2: 8, T3: 3})
    assert plain(result) == expect(A={T1: [0, 1, 2], T3: [0, 1, 2]}, B={T2: list(range(8))})


def test_reassignment_when_one_subscription_removed():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {
        "A": member([T1], {T1: [0, 2], T2: [1, 3]}),
        "B": member([T1, T2], {T1: [1], T2: [0, 2, 4]}),
    }
    result = assign(members, {T1: 3, T2: 5})
    assert plain(result) == expect(A={T1: [0, 1, 2]}, B={T2: [0, 1, 2, 3, 4]})


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions():
    """UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions"""
    members = {
        "A": member([T1, T2, T3], {T1: [0, 1], T2: [0, 1], T3: [0, 1]}),
        "B": member([T1, T2, T3]),
    }
    result = assign(members, {T1: 2, T2: 2, T3: 2})
    assert plain(result) == expect(A={T2: [0], T3: [0, 1]}, B={T1: [0, 1], T2: [1]})


def test_first_assignment_with_two_members_including_one_without_subscriptions():
    """UniformHeterogeneousAssignmentBuilderTest.testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions"""
    result = assign({"A": member([T1]), "B": member([])}, {T1: 3})
    assert plain(result) == expect(A={T1: [0, 1, 2]}, B={})
