"""Ports of Kafka's GroupSpecImplTest, SubscribedTopicMetadataTest and TopicMetadataTest (1eb7644,
group-coordinator/src/test/.../assignor and .../modern), plus the Java orders of
``coordinator.assignor.ordering``.

Not ported: SubscribedTopicMetadataTest.testRacksForPartition's rack map (Kafka's describer at
1eb7644 answers an empty set whatever it holds; the port checks exactly that) and the
``fromRecord`` tests of TopicMetadataTest for share groups (not modelled).
"""

from __future__ import annotations

import pytest

from coordinator.assignor import (
    GroupSpecImpl,
    MemberSubscriptionAndAssignmentImpl,
    SubscribedTopicDescriberImpl,
    SubscriptionType,
    TopicMetadata,
)
from coordinator.assignor.ordering import (
    assignment_from_record,
    hashset_of_ints,
    uuid_hashcode,
    uuid_order,
)
from coordinator.java import java_hashmap_order
from coordinator.kafka_uuid import ZERO_UUID, Uuid, topic_id_for

TEST_MEMBER = "test-member"
TOPIC = topic_id_for("t")


def group_spec(**members: MemberSubscriptionAndAssignmentImpl) -> GroupSpecImpl:
    return GroupSpecImpl(members, subscription_type=SubscriptionType.HOMOGENEOUS)


def member(partitions: dict[Uuid, frozenset[int]] | None = None):
    return MemberSubscriptionAndAssignmentImpl(None, None, frozenset({TOPIC}), partitions or {})


def test_member_ids():
    """GroupSpecImplTest.testMemberIds"""
    spec = group_spec(**{TEST_MEMBER: member()})
    assert set(spec.member_ids()) == {TEST_MEMBER}


def test_subscription_type():
    """GroupSpecImplTest.testSubscriptionType"""
    assert group_spec().subscription_type() is SubscriptionType.HOMOGENEOUS


def test_is_partition_assigned():
    """GroupSpecImplTest.testIsPartitionAssigned"""
    spec = GroupSpecImpl(
        {TEST_MEMBER: member()},
        subscription_type=SubscriptionType.HOMOGENEOUS,
        inverted_member_assignment={TOPIC: {1: TEST_MEMBER}},
    )
    assert spec.is_partition_assigned(TOPIC, 1)
    assert not spec.is_partition_assigned(TOPIC, 2)
    assert not spec.is_partition_assigned(topic_id_for("other"), 2)


def test_member_subscription():
    """GroupSpecImplTest.testMemberSubscription"""
    m = member()
    spec = group_spec(**{TEST_MEMBER: m})
    assert spec.member_subscription(TEST_MEMBER) == m
    with pytest.raises(ValueError, match="Member Id unknown-member not found"):
        spec.member_subscription("unknown-member")


def test_member_assignment():
    """GroupSpecImplTest.testMemberAssignment"""
    partitions = {TOPIC: frozenset({0, 1})}
    spec = group_spec(**{TEST_MEMBER: member(partitions)})
    assert spec.member_assignment(TEST_MEMBER).partitions == partitions
    assert dict(spec.member_assignment("unknown-member").partitions) == {}


def test_topic_metadata_validation():
    """TopicMetadataTest.testTopicIdAndNameCannotBeNull / testEquals / testTopicNameCannotBeEmpty"""
    assert TopicMetadata(TOPIC, "foo", 15) == TopicMetadata(TOPIC, "foo", 15)
    assert TopicMetadata(TOPIC, "foo", 15) != TopicMetadata(TOPIC, "foo", 5)
    with pytest.raises(ValueError, match="ZERO_UUID"):
        TopicMetadata(ZERO_UUID, "foo", 15)
    with pytest.raises(ValueError, match="empty"):
        TopicMetadata(TOPIC, "", 15)
    with pytest.raises(ValueError, match="negative"):
        TopicMetadata(TOPIC, "foo", -1)


def test_describer():
    """SubscribedTopicMetadataTest.testNumberOfPartitions / testRacksForPartition / testEquals"""
    metadata = {TOPIC: TopicMetadata(TOPIC, "t", 15)}
    describer = SubscribedTopicDescriberImpl(metadata)
    assert describer.num_partitions(TOPIC) == 15
    assert describer.num_partitions(topic_id_for("missing")) == -1
    assert describer.racks_for_partition(TOPIC, 0) == frozenset()
    assert describer == SubscribedTopicDescriberImpl(dict(metadata))


def test_uuid_hashcode_is_javas():
    """Uuid.hashCode: (int)(xor >> 32) ^ (int) xor, xor = msb ^ lsb (value worked by hand)."""
    u = Uuid(0x0000000100000002, 0x0000000000000004)  # xor = 0x0000000100000006
    assert uuid_hashcode(u) == 0x1 ^ 0x6
    neg = Uuid(-1, 0)  # xor = all ones: high 0xFFFFFFFF ^ low 0xFFFFFFFF = 0
    assert uuid_hashcode(neg) == 0


def test_hashset_of_ints_orders_by_bucket_then_insertion():
    """new HashSet<>(List.of(3, 1, 2, 40, 17)) iterates 1, 17, 2, 3, 40 (16 buckets: 17 and 1
    share bucket 1, 40 is in bucket 8), as OpenJDK 17 prints it."""
    assert list(hashset_of_ints([3, 1, 2, 40, 17])) == [1, 17, 2, 3, 40]
    assert list(hashset_of_ints([17, 1])) == [17, 1]
    assert hashset_of_ints([1, 2]) == {1, 2}


def test_a_presized_hashmap_iterates_as_a_grown_one_of_the_same_capacity():
    """``new HashMap<>(n)`` (TargetAssignmentBuilder's copy of the members) starts with more
    buckets: 11 ids in 64 buckets iterate as they do inside a default map grown to 64 by 40
    puts, not as in the default 16 buckets."""
    ids = [f"member{i}" for i in range(40)]
    few = ids[:11]
    assert java_hashmap_order(few, 64) == [m for m in java_hashmap_order(ids) if m in few]
    assert java_hashmap_order(few, 64) != java_hashmap_order(few)


def test_assignment_from_record_orders_topics_by_uuid_bucket():
    topics = [topic_id_for(f"t{i}") for i in range(20)]
    assignment = assignment_from_record((t, [0]) for t in topics)
    assert list(assignment) == uuid_order(topics)
    assert sorted(assignment, key=str) == sorted(topics, key=str)
    with pytest.raises(ValueError, match="Duplicate key"):
        assignment_from_record([(TOPIC, [0]), (TOPIC, [1])])
