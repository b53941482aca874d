"""Kafka's ConsumerGroupTest (group-coordinator, modern/consumer, at 1eb7644), ported to
:class:`coordinator.consumer_group.ConsumerGroup` and the offset validation of
``coordinator.offset_metadata_manager``.

Each test names its original. Left out (and why): testStateTransitionMetrics (no Kafka
metrics); testGroupTypeFromString (Group.GroupType.parse: groupsim's group types are classes, not
a parsed enum); testOffsetExpirationCondition (ported through the expiry job in
test_kafka_offsets.py); testAsDescribedGroup / testAsListedGroup (covered through
KafkaCluster in test_kafka_consumer_group_heartbeat.py); testUpdateSubscriptionMetadata and
testMetadataRefreshDeadline (covered through KafkaCluster: metadata refresh after partitions are
added). testValidateTransactionalOffsetCommit is ported through TxnOffsetCommit requests in
test_kafka_txn_offsets.py.
"""

from __future__ import annotations

import pytest

from assignors.api import Subscription, TopicPartition
from coordinator.assignor.api import SubscriptionType
from coordinator.cluster import KafkaCluster
from coordinator.consumer_group import (
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
    MemberState,
    OwnershipError,
)
from coordinator.errors import ApiError, Errors
from coordinator.group import ClassicGroup, Member
from coordinator.group_conversion import consumer_group_tombstones, from_classic_group
from coordinator.kafka_uuid import topic_id_for
from coordinator.offset_metadata_manager import (
    _validate_consumer_group_commit,
    _validate_consumer_group_fetch,
)
from coordinator.protocol import OffsetCommitRequest, OffsetFetchRequest
from coordinator.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
)
from coordinator.state_machine import STABLE
from members.consumer_protocol import encode_assignment, encode_subscription

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


# --- classic members in a consumer group (KIP-848 migration) -------------------------------------


def classic(*names: str, session_timeout_ms: int = 0) -> ClassicMemberMetadata:
    return ClassicMemberMetadata(session_timeout_ms, tuple(ClassicProtocol(n, b"") for n in names))


def test_classic_members_supported_protocols():
    """ConsumerGroupTest.testClassicMembersSupportedProtocols: the per-protocol counts follow
    every update of a classic member; supportsClassicProtocols needs one protocol all classic
    members support."""
    group = ConsumerGroup("foo")
    member1 = ConsumerGroupMember("member-1", classic_member_metadata=classic("range"))
    group.update_member(member1)
    member2 = ConsumerGroupMember(
        "member-2", classic_member_metadata=classic("roundrobin", "range")
    )
    group.update_member(member2)
    assert group.classic_protocols["range"] == 2 and group.classic_protocols["roundrobin"] == 1
    assert group.supports_classic_protocols("consumer", {"range", "sticky"})
    assert not group.supports_classic_protocols("consumer", {"sticky", "roundrobin"})

    group.update_member(member2.with_(classic_member_metadata=classic("range")))
    assert group.classic_protocols["range"] == 2 and "roundrobin" not in group.classic_protocols

    group.update_member(member1.with_(classic_member_metadata=classic("roundrobin", "range")))
    group.update_member(member2.with_(classic_member_metadata=classic("roundrobin", "range")))
    assert group.classic_protocols["range"] == 2 and group.classic_protocols["roundrobin"] == 2
    assert group.supports_classic_protocols("consumer", {"sticky", "roundrobin"})


def test_num_classic_protocol_members():
    """ConsumerGroupTest.testNumClassicProtocolMembers, with allMembersUseClassicProtocolExcept."""
    group = ConsumerGroup("foo")
    member1 = ConsumerGroupMember("member-1", classic_member_metadata=classic("range"))
    group.update_member(member1)
    assert group.num_classic_protocol_members == 1

    group.update_member(ConsumerGroupMember("member-2"))
    assert group.num_classic_protocol_members == 1
    assert not group.all_members_use_classic_protocol_except("member-1")
    assert group.all_members_use_classic_protocol_except("member-2")

    group.remove_member("member-1")
    group.update_member(ConsumerGroupMember("member-3"))
    assert group.num_classic_protocol_members == 0
    assert not group.all_members_use_classic_protocol_except("member-2")

    group.remove_member("member-2")
    group.update_member(ConsumerGroupMember("member-2", classic_member_metadata=classic("range")))
    assert group.num_classic_protocol_members == 1


def test_from_classic_group():
    """ConsumerGroupTest.testFromClassicGroup: a Stable classic group at generation 10 with one
    member becomes a consumer group at epoch 10 whose member is STABLE at 10, with its classic
    assignment, its subscription's topics, its timeouts and protocols as classic metadata."""
    cluster = KafkaCluster(num_brokers=1, topics={"foo": 1, "bar": 1})
    foo, bar = cluster.topology.topic_ids["foo"], cluster.topology.topic_ids["bar"]
    subscription = encode_subscription(
        Subscription(
            ("foo", "bar"), owned_partitions=(TopicPartition("foo", 0), TopicPartition("bar", 0))
        )
    )
    assignment = encode_assignment([TopicPartition("foo", 0), TopicPartition("bar", 0)])
    classic_group = ClassicGroup(
        "group-id",
        created_ms=0,
        generation_id=10,
        protocol_type="consumer",
        protocol_name="range",
        initial_state=STABLE,
    )
    classic_group.add(
        Member(
            "member-id",
            None,
            "client-id",
            "client-host",
            5000,
            500,
            "consumer",
            (("range", subscription),),
            assignment,
        )
    )
    group = from_classic_group(classic_group, cluster.topology)
    assert (group.group_id, group.group_epoch, group.state) == (
        "group-id",
        10,
        ConsumerGroupState.STABLE,
    )
    assert group.compute_preferred_server_assignor(None, None) is None  # preferredServerAssignor
    assert group.members == {
        "member-id": ConsumerGroupMember(
            "member-id",
            member_epoch=10,
            previous_member_epoch=10,
            state=MemberState.STABLE,
            rebalance_timeout_ms=5000,
            client_id="client-id",
            client_host="client-host",
            subscribed_topic_names=frozenset({"foo", "bar"}),
            assigned_partitions={foo: frozenset({0}), bar: frozenset({0})},
            classic_member_metadata=ClassicMemberMetadata(
                500, (ClassicProtocol("range", subscription),)
            ),
        )
    }


def test_create_group_tombstone_records_with_replaced_member():
    """ConsumerGroupTest.testCreateGroupTombstoneRecordsWithReplacedMember: the replaced member's
    tombstones carry its replacement's id; per record type the members in any order, then the
    target epoch, subscription metadata and group epoch tombstones."""
    group = ConsumerGroup("group")
    group.update_member(ConsumerGroupMember("member-1", classic_member_metadata=classic("range")))
    group.update_member(ConsumerGroupMember("member-2", instance_id="instance-id-2"))
    records = consumer_group_tombstones(group, {"member-2": "new-member-2"})
    assert all(value is None for _key, value in records)
    keys = [key for key, _value in records]
    members = {"member-1", "new-member-2"}
    assert len(keys) == 9
    assert {type(k) for k in keys[0:2]} == {ConsumerGroupCurrentMemberAssignmentKey}
    assert {k.member_id for k in keys[0:2]} == members
    assert {type(k) for k in keys[2:4]} == {ConsumerGroupTargetAssignmentMemberKey}
    assert {k.member_id for k in keys[2:4]} == members
    assert keys[4] == ConsumerGroupTargetAssignmentMetadataKey("group")
    assert {type(k) for k in keys[5:7]} == {ConsumerGroupMemberMetadataKey}
    assert {k.member_id for k in keys[5:7]} == members
    assert keys[7:] == [
        ConsumerGroupPartitionMetadataKey("group"),
        ConsumerGroupMetadataKey("group"),
    ]


def test_waiting_on_unreleased_partition():
    """ConsumerGroupTest.testWaitingOnUnreleasedPartition: an UNRELEASED_PARTITIONS member waits
    only once a partition of its target is held (pending revocation) by another member."""
    group = ConsumerGroup("foo")
    group.update_target_assignment("member-1", {**p(FOO, 1, 2, 3), **p(ZAR, 7, 8, 9)})
    member1 = ConsumerGroupMember(
        "member-1",
        member_epoch=10,
        state=MemberState.UNRELEASED_PARTITIONS,
        assigned_partitions=p(FOO, 1, 2, 3),
        partitions_pending_revocation=p(BAR, 4, 5, 6),
    )
    group.update_member(member1)
    assert not group.waiting_on_unreleased_partition(member1)
    group.update_member(
        ConsumerGroupMember("member-2", member_epoch=10, partitions_pending_revocation=p(ZAR, 7))
    )
    assert group.waiting_on_unreleased_partition(member1)


def test_preferred_server_assignor():
    """ConsumerGroupTest.testPreferredServerAssignor: the most asked-for assignor of the members
    (preferredServerAssignor is computePreferredServerAssignor with no change), with a member's
    change applied before the group has it. On the 1-1 tie after member 1 drops its assignor
    Kafka's test accepts either (the tie rule is held to the JDK by
    test_preferred_server_assignor_ties_follow_java_hashmap_compute)."""
    group = ConsumerGroup("foo")

    def preferred():
        return group.compute_preferred_server_assignor(None, None)

    member1 = ConsumerGroupMember("member1", server_assignor_name="range")
    member2 = ConsumerGroupMember("member2", server_assignor_name="range")
    member3 = ConsumerGroupMember("member3", server_assignor_name="uniform")
    assert preferred() is None
    assert group.compute_preferred_server_assignor(None, member1) == "range"
    group.update_member(member1)
    assert preferred() == "range"
    assert group.compute_preferred_server_assignor(member1, None) is None
    assert group.compute_preferred_server_assignor(None, member2) == "range"
    group.update_member(member2)
    assert preferred() == "range"
    group.update_member(member3)
    assert preferred() == "range"

    updated1, updated2, updated3 = (
        m.with_(server_assignor_name=None) for m in (member1, member2, member3)
    )
    assert group.compute_preferred_server_assignor(member1, updated1) in ("range", "uniform")
    group.update_member(updated1)
    assert group.compute_preferred_server_assignor(member2, updated2) == "uniform"
    group.update_member(updated2)
    assert preferred() == "uniform"
    assert group.compute_preferred_server_assignor(member3, updated3) is None
    group.update_member(updated3)
    assert preferred() is None
