"""Ports of Kafka's OptimizedUniformAssignmentBuilderTest (the UniformHomogeneousAssignmentBuilder
suite at 1eb7644, group-coordinator/src/test/.../assignor), every test.

Kafka fixes the topic ids with ``Uuid.fromString`` here, and the expected assignments depend on
them through ``HashSet<Uuid>`` order: the ports use the same ids, so they check groupsim's model
of that order too. Members are in a TreeMap (sorted), as in Kafka.
testValidityAndBalanceForLargeSampleSet draws random topic ids; the port derives them.
"""

from __future__ import annotations

import pytest

from coordinator.assignor import PartitionAssignorException
from coordinator.assignor.uniform import UniformAssignor
from coordinator.kafka_uuid import Uuid, topic_id_for

from .helpers import (
    HOMOGENEOUS,
    check_validity_and_balance,
    describer,
    expect,
    member,
    member_ordered,
    mk_ordered,
    plain,
    spec,
)

T1 = Uuid.from_string("T1-A4s3VTwiI5CTbEp6POw")
T2 = Uuid.from_string("T2-B4s3VTwiI5YHbPp6YUe")
T3 = Uuid.from_string("T3-CU8fVTLCz5YMkLoDQsa")
ASSIGNOR = UniformAssignor()


def assign(members, partitions):
    return ASSIGNOR.assign(spec(dict(sorted(members.items())), HOMOGENEOUS), describer(partitions))


def test_one_member_no_topic_subscription():
    """OptimizedUniformAssignmentBuilderTest.testOneMemberNoTopicSubscription"""
    assert plain(assign({"A": member([])}, {T1: 3})) == {}


def test_one_member_subscribed_to_nonexistent_topic():
    """OptimizedUniformAssignmentBuilderTest.testOneMemberSubscribedToNonexistentTopic"""
    with pytest.raises(PartitionAssignorException, match="doesn't exist in the topic metadata"):
        assign({"A": member([T2])}, {T1: 3})


def test_first_assignment_two_members_two_topics_no_member_racks():
    """OptimizedUniformAssignmentBuilderTest.testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks"""
    members = {"A": member([T1, T3]), "B": member([T1, T3])}
    result = assign(members, {T1: 3, T3: 2})
    assert plain(result) == expect(A={T1: [0], T3: [0, 1]}, B={T1: [1, 2]})
    check_validity_and_balance(members, result)


def test_first_assignment_num_members_greater_than_total_num_partitions():
    """OptimizedUniformAssignmentBuilderTest.testFirstAssignmentNumMembersGreaterThanTotalNumPartitions"""
    members = {m: member([T3]) for m in "ABC"}
    result = assign(members, {T3: 2})
    assert plain(result) == expect(A={T3: [0]}, B={T3: [1]}, C={})
    check_validity_and_balance(members, result)


def test_validity_and_balance_for_large_sample_set():
    """OptimizedUniformAssignmentBuilderTest.testValidityAndBalanceForLargeSampleSet"""
    topics = {topic_id_for(f"topic-{i}"): 3 for i in range(1, 100)}
    members = {f"member{i}": member(topics) for i in range(1, 50)}
    result = assign(members, topics)
    check_validity_and_balance(members, result)
    assert sum(len(ps) for a in result.members.values() for ps in a.partitions.values()) == 297


def test_reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment():
    """OptimizedUniformAssignmentBuilderTest.testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment"""
    members = {
        "A": member_ordered([T1, T2], mk_ordered((T1, [0, 1]), (T2, [0, 1]))),
        "B": member_ordered([T1, T2], mk_ordered((T1, [2]), (T2, [2]))),
    }
    result = assign(members, {T1: 3, T2: 3})
    assert plain(result) == expect(A={T1: [0, 1], T2: [0]}, B={T1: [2], T2: [1, 2]})
    check_validity_and_balance(members, result)


def test_reassignment_when_partitions_are_added_for_two_members_two_topics():
    """OptimizedUniformAssignmentBuilderTest.testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics"""
    members = {
        "A": member_ordered([T1, T2], mk_ordered((T1, [0, 2]), (T2, [0]))),
        "B": member_ordered([T1, T2], mk_ordered((T1, [1]), (T2, [1, 2]))),
    }
    result = assign(members, {T1: 6, T2: 5})
    assert plain(result) == expect(A={T1: [0, 2, 3], T2: [0, 3, 4]}, B={T1: [1, 4, 5], T2: [1, 2]})
    check_validity_and_balance(members, result)


def test_reassignment_when_one_member_added_after_initial_assignment():
    """OptimizedUniformAssignmentBuilderTest.testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {
        "A": member_ordered([T1, T2], mk_ordered((T1, [0, 2]), (T2, [0]))),
        "B": member_ordered([T1, T2], mk_ordered((T1, [1]), (T2, [1, 2]))),
        "C": member([T1, T2]),
    }
    result = assign(members, {T1: 3, T2: 3})
    assert plain(result) == expect(A={T1: [0, 2]}, B={T1: [1], T2: [1]}, C={T2: [0, 2]})
    check_validity_and_balance(members, result)


def test_reassignment_when_one_member_removed_after_initial_assignment():
    """OptimizedUniformAssignmentBuilderTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics"""
    members = {
        "A": member([T1, T2], {T1: [0], T2: [0]}),
        "B": member([T1, T2], {T1: [1], T2: [1]}),
    }
    result = assign(members, {T1: 3, T2: 3})
    assert plain(result) == expect(A={T1: [0], T2: [0, 2]}, B={T1: [1, 2], T2: [1]})
    check_validity_and_balance(members, result)


def test_reassignment_when_one_subscription_removed_after_initial_assignment():
    """OptimizedUniformAssignmentBuilderTest.testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics"""
    members = {
        "A": member([T2], {T1: [0], T2: [0]}),
        "B": member([T2], {T1: [1], T2: [1]}),
    }
    result = assign(members, {T1: 2, T2: 2})
    assert plain(result) == expect(A={T2: [0]}, B={T2: [1]})
    check_validity_and_balance(members, result)
