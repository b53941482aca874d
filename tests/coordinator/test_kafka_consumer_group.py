"""Kafka's ConsumerGroupTest (group-coordinator, modern/consumer, at 1eb7644), ported to
:class:`coordinator.consumer_group.ConsumerGroup` and the offset validation of
``coordinator.offset_metadata_manager``.

Each test names its original. Left out: the metrics tests (testStateTransitionMetrics), the
classic-member and migration tests (testClassicMembersSupportedProtocols,
testNumClassicProtocolMembers, testFromClassicGroup, testCreateGroupTombstoneRecordsWithReplacedMember:
mixed groups are not simulated), testValidateTransactionalOffsetCommit (no transactions),
testWaitingOnUnreleasedPartition (a method Kafka uses only for its metrics), testGroupTypeFromString,
testOffsetExpirationCondition, testAsDescribedGroup / testAsListedGroup (covered through
KafkaCluster in test_kafka_consumer_group_heartbeat.py), testUpdateSubscriptionMetadata and
testMetadataRefreshDeadline (covered through KafkaCluster: metadata refresh after partitions are
added).
"""

from __future__ import annotations

import pytest

from coordinator.assignor.api import SubscriptionType
from coordinator.consumer_group import (
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
    MemberState,
    OwnershipError,
)
from coordinator.errors import ApiError, Errors
from coordinator.kafka_uuid import topic_id_for
from coordinator.offset_metadata_manager import (
    _validate_consumer_group_commit,
    _validate_consumer_group_fetch,
)
from coordinator.protocol import OffsetCommitRequest, OffsetFetchRequest

FOO, BAR, ZAR = topic_id_for("foo"), topic_id_for("bar"), topic_id_for("zar")


def p(topic, *partitions):
    return {topic: frozenset(partitions)}


def test_get_or_create_member():
    """ConsumerGroupTest.testGetOrCreateMember"""
    group = ConsumerGroup("foo")
    member = group.get_or_maybe_create_member("member-id", True)
    group.update_member(member)
    assert group.get_or_maybe_create_member("member-id", False).member_id == "member-id"
    with pytest.raises(ApiError) as unknown:
        group.get_or_maybe_create_member("does-not-exist", False)
    assert unknown.value.error == Errors.UNKNOWN_MEMBER_ID


def test_update_member_and_static_members():
    """ConsumerGroupTest.testUpdateMember, testNoStaticMember, testGetStaticMemberByInstanceId,
    testRemoveMember and testRemoveStaticMember"""
    group = ConsumerGroup("foo")
    assert group.static_member("instance") is None
    member = ConsumerGroupMember(
        "member", subscribed_topic_names=frozenset({"foo", "bar"}), instance_id="instance"
    )
    group.update_member(member)
    assert group.get_or_maybe_create_member("member", False) == member
    assert group.static_member("instance") == member
    assert group.static_member_id("instance") == "member"
    group.remove_member("member")
    assert not group.has_member("member")
    assert group.static_member("instance") is None and group.static_member_id("instance") is None


def test_updating_member_updates_partition_epoch():
    """ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpoch"""
    group = ConsumerGroup("foo")
    member = ConsumerGroupMember(
        "member",
        member_epoch=10,
        assigned_partitions=p(FOO, 1, 2, 3),
        partitions_pending_revocation=p(BAR, 4, 5, 6),
    )
    group.update_member(member)
    assert [group.partition_epoch(FOO, i) for i in (1, 2, 3)] == [10, 10, 10]
    assert [group.partition_epoch(BAR, i) for i in (4, 5, 6)] == [10, 10, 10]
    assert [group.partition_epoch(ZAR, i) for i in (7, 8, 9)] == [-1, -1, -1]
    member = member.with_(
        member_epoch=11,
        assigned_partitions=p(BAR, 1, 2, 3),
        partitions_pending_revocation=p(ZAR, 4, 5, 6),
    )
    group.update_member(member)
    assert [group.partition_epoch(BAR, i) for i in (1, 2, 3)] == [11, 11, 11]
    assert [group.partition_epoch(ZAR, i) for i in (4, 5, 6)] == [11, 11, 11]
    assert [group.partition_epoch(FOO, i) for i in (1, 2, 3)] == [-1, -1, -1]


def test_partition_reassigned_before_being_revoked():
    """ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsReassignedBeforeBeingRevoked"""
    group = ConsumerGroup("foo")
    member = ConsumerGroupMember("member", member_epoch=10, partitions_pending_revocation=p(FOO, 1))
    group.update_member(member)
    assert group.partition_epoch(FOO, 1) == 10
    group.update_member(
        member.with_(
            member_epoch=11, assigned_partitions=p(FOO, 1), partitions_pending_revocation={}
        )
    )
    assert group.partition_epoch(FOO, 1) == 11


def test_partition_not_released():
    """ConsumerGroupTest.testUpdatingMemberUpdatesPartitionEpochWhenPartitionIsNotReleased"""
    group = ConsumerGroup("foo")
    group.update_member(ConsumerGroupMember("m1", member_epoch=10, assigned_partitions=p(FOO, 1)))
    with pytest.raises(OwnershipError):
        group.update_member(
            ConsumerGroupMember("m2", member_epoch=10, assigned_partitions=p(FOO, 1))
        )


def test_remove_and_add_partition_epochs():
    """ConsumerGroupTest.testRemovePartitionEpochs and testAddPartitionEpochs"""
    group = ConsumerGroup("foo")
    with pytest.raises(OwnershipError, match="does not have any epoch"):
        group._remove_partition_epochs(p(FOO, 1), 10)
    group.update_member(ConsumerGroupMember("m1", member_epoch=10, assigned_partitions=p(FOO, 1)))
    with pytest.raises(OwnershipError, match="still owned at a different epoch 10"):
        group._remove_partition_epochs(p(FOO, 1), 11)
    other = ConsumerGroup("bar")
    other._add_partition_epochs(p(FOO, 1), 10)
    with pytest.raises(OwnershipError, match="still owned at epoch 10"):
        other._add_partition_epochs(p(FOO, 1), 11)


def test_deleting_member_removes_partition_epoch():
    """ConsumerGroupTest.testDeletingMemberRemovesPartitionEpoch"""
    group = ConsumerGroup("foo")
    group.update_member(
        ConsumerGroupMember(
            "member",
            member_epoch=10,
            assigned_partitions=p(FOO, 1, 2, 3),
            partitions_pending_revocation=p(BAR, 4, 5, 6),
        )
    )
    group.remove_member("member")
    assert group.current_partition_epoch == {}


def test_group_state():
    """ConsumerGroupTest.testGroupState"""
    group = ConsumerGroup("foo")
    assert group.state == ConsumerGroupState.EMPTY
    m1 = ConsumerGroupMember("member1", member_epoch=1, previous_member_epoch=0)
    group.update_member(m1)
    group.set_group_epoch(1)
    assert group.state == ConsumerGroupState.ASSIGNING
    m2 = ConsumerGroupMember("member2", member_epoch=1, previous_member_epoch=0)
    group.update_member(m2)
    group.set_group_epoch(2)
    assert group.state == ConsumerGroupState.ASSIGNING
    group.set_target_assignment_epoch(2)
    assert group.state == ConsumerGroupState.RECONCILING
    group.update_member(m1.with_(member_epoch=2, previous_member_epoch=1))
    assert group.state == ConsumerGroupState.RECONCILING
    m2 = m2.with_(state=MemberState.UNREVOKED_PARTITIONS, member_epoch=2, previous_member_epoch=1)
    group.update_member(m2)
    assert group.state == ConsumerGroupState.RECONCILING
    group.update_member(m2.with_(state=MemberState.STABLE))
    assert group.state == ConsumerGroupState.STABLE
    group.remove_member("member1")
    group.remove_member("member2")
    assert group.state == ConsumerGroupState.EMPTY


def test_update_subscribed_topic_names_and_subscription_type():
    """ConsumerGroupTest.testUpdateSubscribedTopicNamesAndSubscriptionType"""
    group = ConsumerGroup("foo")
    m1 = ConsumerGroupMember("m1", subscribed_topic_names=frozenset({"foo"}))
    m2 = ConsumerGroupMember("m2", subscribed_topic_names=frozenset({"bar", "foo"}))
    m3 = ConsumerGroupMember("m3", subscribed_topic_names=frozenset({"bar", "foo"}))
    group.update_member(m1)
    assert group.subscribed_topic_names == {"foo": 1}
    assert group.subscription_type_ == SubscriptionType.HOMOGENEOUS
    group.update_member(m2)
    assert group.subscribed_topic_names == {"foo": 2, "bar": 1}
    assert group.subscription_type_ == SubscriptionType.HETEROGENEOUS
    group.update_member(m3)
    group.remove_member("m1")
    assert group.subscribed_topic_names == {"foo": 2, "bar": 2}
    assert group.subscription_type_ == SubscriptionType.HOMOGENEOUS


def test_update_inverted_assignment():
    """ConsumerGroupTest.testUpdateInvertedAssignment: a partition moved from A to B is not taken
    out of the inverted map when A's older target is replaced after B's."""
    group = ConsumerGroup("foo")
    group.update_target_assignment("A", p(FOO, 0, 1))
    group.update_target_assignment("B", p(FOO, 2))
    assert group.inverted_target_assignment == {FOO: {0: "A", 1: "A", 2: "B"}}
    group.update_target_assignment("B", p(FOO, 1, 2))  # 1 moves to B before A lets it go
    group.update_target_assignment("A", p(FOO, 0))
    assert group.inverted_target_assignment == {FOO: {0: "A", 1: "B", 2: "B"}}
    group.remove_target_assignment("A")
    group.remove_target_assignment("B")
    assert group.inverted_target_assignment == {}


def test_validate_offset_commit():
    """ConsumerGroupTest.testValidateOffsetCommit"""
    group = ConsumerGroup("group-foo")

    def commit(member_id, epoch, version=9):
        return _validate_consumer_group_commit(
            group, OffsetCommitRequest("group-foo", epoch, member_id, (), api_version=version)
        )

    assert commit("", -1) is None  # the admin client, on an empty group
    group.update_member(ConsumerGroupMember("member-id", member_epoch=10))
    assert commit("", -1) == Errors.UNKNOWN_MEMBER_ID
    assert commit("member-id", 9) == Errors.STALE_MEMBER_EPOCH
    assert commit("member-id", 11) == Errors.STALE_MEMBER_EPOCH
    assert commit("member-id", 10, version=8) == Errors.UNSUPPORTED_VERSION
    assert commit("member-id", 10) is None


def test_validate_offset_fetch():
    """ConsumerGroupTest.testValidateOffsetFetch"""
    group = ConsumerGroup("group-foo")

    def fetch(member_id, epoch):
        return _validate_consumer_group_fetch(
            group, OffsetFetchRequest("group-foo", member_id=member_id, member_epoch=epoch)
        )

    assert fetch(None, -1) is None
    assert fetch("member-id", 0) == Errors.UNKNOWN_MEMBER_ID
    group.update_member(ConsumerGroupMember("member-id", member_epoch=0))
    assert fetch("member-id", 0) is None
    assert fetch("member-id", 1) == Errors.STALE_MEMBER_EPOCH
