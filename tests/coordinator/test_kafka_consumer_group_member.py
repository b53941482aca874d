"""Kafka's ConsumerGroupMemberTest (group-coordinator, modern/consumer, at 1eb7644), ported.

The Builder's ``updateWith(record)`` is groupsim's replay of the member records
(``ConsumerGroupManager.replay``), and ``asConsumerGroupDescribeMember`` its ConsumerGroupDescribe
answer. Every test of the Java class is ported (the classic-member metadata checks with them).
"""

from __future__ import annotations

import pytest

from coordinator.cluster import KafkaCluster
from coordinator.consumer_group import ConsumerGroupMember, MemberState
from coordinator.errors import ApiError, Errors
from coordinator.group_conversion import classic_metadata
from coordinator.kafka_uuid import topic_id_for
from coordinator.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    TopicPartitionsRecord,
)

# toClassicProtocolCollection("range"): one protocol, metadata {1, 2, 3}
RANGE_CLASSIC = ClassicMemberMetadata(0, (ClassicProtocol("range", bytes([1, 2, 3])),))


def manager(topics: dict[str, int] | None = None):
    cluster = KafkaCluster(num_brokers=1, topics=topics or {})
    shard = cluster.service.shard_for("g")
    assert shard is not None
    return cluster, shard.consumer_group_manager


def test_new_member_defaults():
    """ConsumerGroupMemberTest.testNewMember (the Builder's defaults)"""
    member = ConsumerGroupMember("member-id")
    assert (member.member_epoch, member.previous_member_epoch, member.state) == (
        0,
        -1,
        MemberState.STABLE,
    )
    assert (member.rebalance_timeout_ms, member.subscribed_topic_regex) == (-1, "")
    assert member.assigned_partitions == {} and member.partitions_pending_revocation == {}


def test_equals():
    """ConsumerGroupMemberTest.testEquals: equal by content (assignments as Java's Map.equals)"""
    t1 = topic_id_for("t1")
    a = ConsumerGroupMember("m", member_epoch=10, assigned_partitions={t1: frozenset({1, 2})})
    b = ConsumerGroupMember("m", member_epoch=10, assigned_partitions={t1: frozenset({2, 1})})
    assert a == b and a != b.with_(member_epoch=11)


def test_update_member_keeps_what_the_heartbeat_did_not_send():
    """ConsumerGroupMemberTest.testUpdateMember: the maybeUpdate* calls change only the fields a
    heartbeat carries (through KafkaCluster: a heartbeat without them writes no member record)."""
    from tests.coordinator.kip848 import Kip848

    h = Kip848(topics={"foo": 2})
    h.heartbeat("m", subscribed_topic_names=("foo",), rack_id="rack-id", server_assignor="range")
    before = h.group().members["m"]
    h.events.clear()
    h.heartbeat("m", 1)
    assert h.group().members["m"] == before
    assert not [f for n, f in h.events if n == "record_appended"]
    h.heartbeat("m", 1, rack_id="new-rack-id", server_assignor="uniform")
    after = h.group().members["m"]
    assert (after.rack_id, after.server_assignor_name) == ("new-rack-id", "uniform")
    assert after.subscribed_topic_names == frozenset({"foo"})


def test_update_with_member_metadata_value():
    """ConsumerGroupMemberTest.testUpdateWithConsumerGroupMemberMetadataValue"""
    _, cgm = manager()
    cgm.replay(
        ConsumerGroupMemberMetadataKey("g", "member-id"),
        ConsumerGroupMemberMetadataValue(
            instance_id="instance-id",
            rack_id="rack-id",
            client_id="client-id",
            client_host="host-id",
            subscribed_topic_names=("foo", "bar"),
            subscribed_topic_regex="regex",
            rebalance_timeout_ms=1000,
            server_assignor="range",
            classic_member_metadata=RANGE_CLASSIC,
        ),
    )
    member = cgm.groups["g"].members["member-id"]
    assert (member.instance_id, member.rack_id, member.client_id, member.client_host) == (
        "instance-id",
        "rack-id",
        "client-id",
        "host-id",
    )
    assert member.subscribed_topic_names == frozenset({"bar", "foo"})
    assert (member.subscribed_topic_regex, member.server_assignor_name) == ("regex", "range")
    assert member.rebalance_timeout_ms == 1000
    assert member.classic_member_metadata == RANGE_CLASSIC
    assert member.use_classic_protocol


def test_update_with_current_member_assignment_value():
    """ConsumerGroupMemberTest.testUpdateWithConsumerGroupCurrentMemberAssignmentValue"""
    _, cgm = manager()
    t1, t2 = topic_id_for("t1"), topic_id_for("t2")
    cgm.replay(
        ConsumerGroupCurrentMemberAssignmentKey("g", "member-id"),
        ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=10,
            previous_member_epoch=9,
            state=1,
            assigned_partitions=(TopicPartitionsRecord(t1, (0, 1, 2)),),
            partitions_pending_revocation=(TopicPartitionsRecord(t2, (3, 4, 5)),),
        ),
    )
    member = cgm.groups["g"].members["member-id"]
    assert (member.member_epoch, member.previous_member_epoch) == (10, 9)
    assert member.state == MemberState.UNREVOKED_PARTITIONS
    assert member.assigned_partitions == {t1: frozenset({0, 1, 2})}
    assert member.partitions_pending_revocation == {t2: frozenset({3, 4, 5})}


def test_as_consumer_group_describe_member():
    """ConsumerGroupMemberTest.testAsConsumerGroupDescribeMember,
    testAsConsumerGroupDescribeWithTargetAssignmentNull and
    testAsConsumerGroupDescribeWithTopicNameNotFound: assignment and target by topic id and
    name; a topic the metadata no longer has is left out; no target is an empty one."""
    cluster, cgm = manager({"foo": 3})
    foo, gone = cluster.topology.topic_ids["foo"], topic_id_for("gone")
    cgm.replay(
        ConsumerGroupMemberMetadataKey("g", "m"),
        ConsumerGroupMemberMetadataValue(
            instance_id="i",
            rack_id="r",
            client_id="c",
            client_host="h",
            subscribed_topic_names=("foo",),
            subscribed_topic_regex="",
            rebalance_timeout_ms=5000,
            server_assignor=None,
        ),
    )
    cgm.replay(
        ConsumerGroupCurrentMemberAssignmentKey("g", "m"),
        ConsumerGroupCurrentMemberAssignmentValue(
            7, 6, 0, (TopicPartitionsRecord(foo, (0, 1)), TopicPartitionsRecord(gone, (0,))), ()
        ),
    )
    (described,) = cgm.describe(["g"])
    (member,) = described.members
    assert (member.member_id, member.instance_id, member.rack_id, member.member_epoch) == (
        "m",
        "i",
        "r",
        7,
    )
    assert [(t.topic_name, t.partitions) for t in member.assignment.topic_partitions] == [
        ("foo", (0, 1))
    ]
    assert member.target_assignment.topic_partitions == ()
    cgm.replay(
        ConsumerGroupTargetAssignmentMemberKey("g", "m"),
        ConsumerGroupTargetAssignmentMemberValue((TopicPartitionsRecord(foo, (2,)),)),
    )
    (member,) = cgm.describe(["g"])[0].members
    assert [(t.topic_id, t.partitions) for t in member.target_assignment.topic_partitions] == [
        (foo, (2,))
    ]


def test_classic_member_metadata():
    """ConsumerGroupMemberTest.testNewMember (its classic-member half): a member with classic
    metadata uses the classic protocol and supports its protocols; one without does neither."""
    member = ConsumerGroupMember("member-id", classic_member_metadata=RANGE_CLASSIC)
    assert member.use_classic_protocol
    assert member.classic_member_metadata == RANGE_CLASSIC
    assert member.supported_classic_protocols == RANGE_CLASSIC.supported_protocols
    plain = ConsumerGroupMember("member-id")
    assert not plain.use_classic_protocol and plain.supported_classic_protocols is None


def test_classic_protocol_list_from_join_request_protocol_collection():
    """ConsumerGroupMemberTest.testClassicProtocolListFromJoinRequestProtocolCollection: a
    JoinGroup's protocols become the member's classic protocols, names and metadata kept (the
    session timeout rides along in ClassicMemberMetadata)."""
    assert classic_metadata(0, (("range", bytes([1, 2, 3])),)) == RANGE_CLASSIC
    two = classic_metadata(5000, (("roundrobin", b"a"), ("range", b"b")))
    assert two.session_timeout_ms == 5000
    assert two.supported_protocols == (
        ClassicProtocol("roundrobin", b"a"),
        ClassicProtocol("range", b"b"),
    )


def test_replay_tombstones_of_missing_groups_and_members():
    """GroupMetadataManagerTest.testReplayConsumerGroupMemberMetadataTombstone,
    testReplayConsumerGroupCurrentMemberAssignmentTombstone,
    testReplayConsumerGroupTargetAssignmentMemberTombstone,
    testReplayConsumerGroupTargetAssignmentMetadataTombstone,
    testReplayConsumerGroupPartitionMetadataTombstone and
    testReplayConsumerGroupMetadataTombstone: a tombstone for a member already gone, or for a
    group that does not exist, replays as a no-op (no group is created)."""
    member_keys = (
        ConsumerGroupMemberMetadataKey,
        ConsumerGroupCurrentMemberAssignmentKey,
        ConsumerGroupTargetAssignmentMemberKey,
    )
    for key_type in member_keys:
        _, cgm = manager()
        cgm.replay(ConsumerGroupMetadataKey("foo"), ConsumerGroupMetadataValue(10))
        cgm.replay(key_type("foo", "m1"), None)
        assert cgm.groups["foo"].members == {} and cgm.groups["foo"].group_epoch == 10
        with pytest.raises(ApiError) as unknown:
            cgm.groups["foo"].get_or_maybe_create_member("m1", False)
        assert unknown.value.error == Errors.UNKNOWN_MEMBER_ID
        cgm.replay(key_type("bar", "m1"), None)
        assert "bar" not in cgm.groups
    for group_key in (
        ConsumerGroupTargetAssignmentMetadataKey,
        ConsumerGroupPartitionMetadataKey,
        ConsumerGroupMetadataKey,
    ):
        _, cgm = manager()
        cgm.replay(group_key("foo"), None)
        assert "foo" not in cgm.groups
