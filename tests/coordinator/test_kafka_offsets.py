"""Ports of Kafka's OffsetMetadataManagerTest (its classic- and consumer-group parts), in the
harness's terms.

Kafka's tests call OffsetMetadataManager directly and look at the records it returns; here the
requests go through the harness and the records are read from the ``__consumer_offsets``
partition. Errors Kafka's manager throws are the response's error (GroupCoordinatorService turns
them into one). Kafka's tests put members into a group and move it between states by hand
(ClassicGroup.add, transitionTo, initNextGeneration); the ports get the same group by real
JoinGroup/SyncGroup requests, except where a state cannot be reached by requests (Dead), which is
forced on the group's state model as Kafka does.

Kafka orders the tombstones of a deletion or an expiry by its offsets map's hash order (a
TimelineHashMap), as groupsim does (coordinator/timeline_order.py, held to Kafka by the oracle
traces); the ports compare those records as sets, as Kafka's tests list them by hand.

The KIP-848 consumer-group cases are at the end of this file (the consumer group built by real
ConsumerGroupHeartbeats), except the two whose member speaks the classic protocol
(testConsumerGroupOffsetCommitWithIllegalGenerationId, ...FetchWithIllegalGenerationId), which
are in test_kafka_migration.py where mixed groups are built. The transactional cases, with their
KIP-848 variants, are in test_kafka_txn_offsets.py.

Not ported (the reason for each):

* The OffsetDelete API (not modelled): testGenericGroupOffsetDelete,
  testGenericGroupOffsetDeleteWithErrors, testGenericGroupOffsetDeleteWithPendingTransactionalOffsets,
  testConsumerGroupOffsetDelete, testConsumerGroupOffsetDeleteWithErrors,
  testConsumerGroupOffsetDeleteWithPendingTransactionalOffsets.
* The offset commit's retention time / expire timestamp (not modelled):
  testGenericGroupOffsetCommitWithRetentionTime.
* Metrics and sensors: testOffsetCommitsNumberMetricWithTransactionalOffsets,
  testOffsetCommitsSensor, testOffsetsExpiredSensor, testOffsetDeletionsSensor.
* testCleanupExpiredOffsetsGroupDoesNotExist: a mocked GroupMetadataManager that loses a group
  whose offsets it holds; in groupsim offsets always belong to a group (a simple group is created
  for them on commit and on load).
* testFetchOffsetsAtDifferentCommittedOffset, testFetchAllOffsetsAtDifferentCommittedOffset: reads
  at older committed offsets of Kafka's timeline data structures; groupsim's appends are committed
  at once, so only their final read (everything committed) is ported.
"""

from __future__ import annotations

import pytest

from assignors.api import Subscription
from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)
from coordinator.records import GroupMetadataKey, OffsetCommitKey, OffsetCommitValue
from coordinator.state_machine import COMPLETING_REBALANCE, DEAD, EMPTY, STABLE
from members.consumer_protocol import encode_subscription

from .harness import TEST_CONFIG, Driver

GROUP = "foo"


# =================================================================================================
# helpers
# =================================================================================================


def subscription(*topics: str) -> bytes:
    """A consumer's JoinGroup metadata (ConsumerProtocol.serializeSubscription) for ``topics``."""
    return encode_subscription(Subscription(topics))


def commit(
    d: Driver,
    partitions: list[tuple[str, int, int]] | list[OffsetCommitRequestPartition] | None = None,
    *,
    group_id: str = GROUP,
    member_id: str = "",
    generation: int = -1,
    instance_id: str | None = None,
    version: int = 9,
) -> OffsetCommitResponse:
    """An OffsetCommit (default: bar-0 at offset 100, as Kafka's tests); its response."""
    by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
    for p in partitions or [("bar", 0, 100)]:
        if isinstance(p, tuple):
            topic, index, offset = p
            p = OffsetCommitRequestPartition(index, offset)
            by_topic.setdefault(topic, []).append(p)
        else:
            by_topic.setdefault("bar", []).append(p)
    request = OffsetCommitRequest(
        group_id,
        generation,
        member_id,
        tuple(OffsetCommitRequestTopic(t, tuple(ps)) for t, ps in by_topic.items()),
        group_instance_id=instance_id,
        api_version=version,
    )
    _corr, (response,) = d.send("X", request)
    return response


def one_error(response: OffsetCommitResponse) -> Errors:
    """The error of a single-partition commit."""
    ((partition,),) = [t.partitions for t in response.topics]
    return partition.error_code


def bar0(error: Errors) -> OffsetCommitResponse:
    """The response to a commit of bar-0 alone."""
    return OffsetCommitResponse(
        (OffsetCommitResponseTopic("bar", (OffsetCommitResponsePartition(0, error),)),)
    )


def records_since(d: Driver, since: int, group_id: str = GROUP) -> list[tuple[object, object]]:
    """(key, value) of the records of ``group_id`` written at or after log offset ``since``."""
    return [(r.key, r.value) for r in d.records(group_id)[since:] if r.key.group == group_id]


def fetch(d: Driver, topics, group_id: str = GROUP) -> OffsetFetchResponse:
    """OffsetFetch of {topic: partitions} (None: every committed offset)."""
    request_topics = (
        None
        if topics is None
        else tuple(OffsetFetchRequestTopic(t, tuple(ps)) for t, ps in topics.items())
    )
    _corr, (response,) = d.send("X", OffsetFetchRequest(group_id, request_topics))
    assert response.error_code == Errors.NONE
    return response


def invalid(partition: int) -> OffsetFetchResponsePartition:
    """OffsetMetadataManagerTest.mkInvalidOffsetPartitionResponse: no committed offset."""
    return OffsetFetchResponsePartition(partition, -1, -1, "")


def member_in_completing_rebalance(d: Driver, instance_id: str | None) -> str:
    """mkGenericMember joined and initNextGeneration: one member (session and rebalance timeouts
    of 5 s, protocol range), generation 1, CompletingRebalance. Returns its member id."""
    kw = {"session": 5000, "rebalance": 5000, "instance_id": instance_id}
    if instance_id is None:
        _member_id, corr = d.join_dynamic("M", GROUP, **kw)
    else:
        corr = d.join("M", GROUP, **kw)
    d.complete_join(GROUP)
    response = d.response("M", corr)
    assert response.error_code == Errors.NONE and response.generation_id == 1
    assert d.state(GROUP) == COMPLETING_REBALANCE
    return response.member_id


# =================================================================================================
# OffsetCommit
# =================================================================================================


@pytest.mark.parametrize("version", range(1, 10))
def test_offset_commit_with_unknown_group(version):
    """Port of OffsetMetadataManagerTest.testOffsetCommitWithUnknownGroup (every version that
    reaches the coordinator: a KRaft broker refuses version 0 itself, see test_kafka_service.py): a
    commit with a generation to a group that does not exist is GROUP_ID_NOT_FOUND from version 9,
    ILLEGAL_GENERATION before; nothing is created or written."""
    d = Driver()
    expected = Errors.GROUP_ID_NOT_FOUND if version >= 9 else Errors.ILLEGAL_GENERATION
    response = commit(d, member_id="member", generation=10, version=version)
    assert response == bar0(expected)
    assert d.cluster.group(GROUP) is None and d.records(GROUP) == ()


def test_generic_group_offset_commit_with_dead_group():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithDeadGroup: a commit to a
    Dead group is COORDINATOR_NOT_AVAILABLE."""
    d = Driver()
    d.create_group(GROUP)
    d.force(DEAD, group_id=GROUP)
    assert commit(d, member_id="member", generation=10) == bar0(Errors.COORDINATOR_NOT_AVAILABLE)
    assert d.records(GROUP) == ()


def test_generic_group_offset_commit_with_unknown_member_id():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithUnknownMemberId: a
    member id the (Empty) group does not know is UNKNOWN_MEMBER_ID."""
    d = Driver()
    d.create_group(GROUP)
    assert commit(d, member_id="member", generation=10) == bar0(Errors.UNKNOWN_MEMBER_ID)


def test_generic_group_offset_commit_with_illegal_generation():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithIllegalGeneration: a
    member of generation 1 committing with generation 10 is ILLEGAL_GENERATION."""
    d = Driver()
    member_id = member_in_completing_rebalance(d, "new-instance-id")
    assert commit(d, member_id=member_id, generation=10) == bar0(Errors.ILLEGAL_GENERATION)


def test_generic_group_offset_commit_with_unknown_instance_id():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithUnknownInstanceId: a
    dynamic member committing with an instance id is UNKNOWN_MEMBER_ID (no static member has it),
    before its generation is looked at."""
    d = Driver()
    member_id = member_in_completing_rebalance(d, None)
    response = commit(d, member_id=member_id, instance_id="instanceid", generation=10)
    assert response == bar0(Errors.UNKNOWN_MEMBER_ID)


def test_generic_group_offset_commit_with_fenced_instance_id():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithFencedInstanceId: a
    static member committing with an instance id the group does not know (not its own) is
    UNKNOWN_MEMBER_ID."""
    d = Driver()
    member_id = member_in_completing_rebalance(d, "new-instance-id")
    response = commit(d, member_id=member_id, instance_id="old-instance-id", generation=10)
    assert response == bar0(Errors.UNKNOWN_MEMBER_ID)


def test_generic_group_offset_commit_while_in_completing_rebalance_state():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWhileInCompletingRebalanceState:
    a valid member and generation still cannot commit before the assignment is known:
    REBALANCE_IN_PROGRESS."""
    d = Driver()
    member_id = member_in_completing_rebalance(d, "new-instance-id")
    assert commit(d, member_id=member_id, generation=1) == bar0(Errors.REBALANCE_IN_PROGRESS)


def test_generic_group_offset_commit_without_member_id_and_generation():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithoutMemberIdAndGeneration:
    a commit without member id and generation (an admin's, or OffsetCommit v0) is refused with
    UNKNOWN_MEMBER_ID once the group has members."""
    d = Driver()
    member_in_completing_rebalance(d, "new-instance-id")
    assert commit(d) == bar0(Errors.UNKNOWN_MEMBER_ID)


def test_generic_group_offset_commit_maintains_session():
    """Port of OffsetMetadataManagerTest.testGenericGroupOffsetCommitMaintainsSession: a commit
    from a member of a Stable group restarts its session timeout, like a heartbeat."""
    d = Driver()
    member_id = member_in_completing_rebalance(d, None)
    d.sync("M", member_id, 1, group_id=GROUP, assignments={member_id: b""})
    assert d.state(GROUP) == STABLE
    t0 = d.now  # the session (5 s) restarts with the SyncGroup
    d.advance(t0 + 2500)
    assert commit(d, member_id=member_id, generation=1) == bar0(Errors.NONE)
    d.advance(t0 + 5000)
    assert d.cluster.group(GROUP).member(member_id) is not None
    d.advance(t0 + 7500)
    assert d.cluster.group(GROUP).member(member_id) is None


@pytest.mark.parametrize("instance_id", [None, "instance-id"])
def test_simple_group_offset_commit(instance_id):
    """Port of OffsetMetadataManagerTest.testSimpleGroupOffsetCommit and
    testSimpleGroupOffsetCommitWithInstanceId: a commit without generation to an unknown group
    creates a simple group (Empty, no protocol type) and writes one OffsetCommit record with the
    offset, no leader epoch, empty metadata and the commit time; an instance id is ignored."""
    d = Driver()
    d.now = 1234
    assert commit(d, instance_id=instance_id) == bar0(Errors.NONE)
    assert records_since(d, 0) == [
        (OffsetCommitKey(GROUP, "bar", 0), OffsetCommitValue(100, -1, "", 1234))
    ]
    view = d.cluster.group(GROUP)
    assert view.state == EMPTY and view.protocol_type is None


def test_offset_commit_with_offset_metadata_too_large():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommitWithOffsetMetadataTooLarge,
    for a classic group's member (the check does not depend on the group type): a partition whose
    metadata is longer than offset.metadata.max.bytes fails with OFFSET_METADATA_TOO_LARGE and is
    not written; the other partitions of the request are committed."""
    d = Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10, offset_metadata_max_bytes=5, load_time_ms=0
        )
    )
    member_id = member_in_completing_rebalance(d, None)
    d.sync("M", member_id, 1, group_id=GROUP, assignments={member_id: b""})
    since = len(d.records(GROUP))
    response = commit(
        d,
        [
            OffsetCommitRequestPartition(0, 100, 10, "toolarge"),
            OffsetCommitRequestPartition(1, 100, 10, "small"),
        ],
        member_id=member_id,
        generation=1,
    )
    assert response == OffsetCommitResponse(
        (
            OffsetCommitResponseTopic(
                "bar",
                (
                    OffsetCommitResponsePartition(0, Errors.OFFSET_METADATA_TOO_LARGE),
                    OffsetCommitResponsePartition(1, Errors.NONE),
                ),
            ),
        )
    )
    assert records_since(d, since) == [
        (OffsetCommitKey(GROUP, "bar", 1), OffsetCommitValue(100, 10, "small", d.now))
    ]


def test_offset_metadata_length_is_counted_in_java_chars():
    """Found while porting testConsumerGroupOffsetCommitWithOffsetMetadataTooLarge:
    OffsetMetadataManager.isMetadataInvalid compares the metadata's String.length() (UTF-16 code
    units) with offset.metadata.max.bytes, not its size in bytes. Five accented letters fit a
    limit of 5 (ten bytes in UTF-8); three characters outside the BMP do not (six units)."""
    d = Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10, offset_metadata_max_bytes=5, load_time_ms=0
        )
    )
    cases = {0: "\u00e9" * 5, 1: "\u00e9" * 6, 2: "\U0001d11e" * 2, 3: "\U0001d11e" * 3}
    response = commit(d, [OffsetCommitRequestPartition(p, 100, -1, m) for p, m in cases.items()])
    assert [p.error_code for p in response.topics[0].partitions] == [
        Errors.NONE,
        Errors.OFFSET_METADATA_TOO_LARGE,
        Errors.NONE,
        Errors.OFFSET_METADATA_TOO_LARGE,
    ]
    assert d.cluster.committed_offsets(GROUP) == {("bar", 0): 100, ("bar", 2): 100}


# =================================================================================================
# OffsetFetch
# =================================================================================================

FOO_BAR = {"foo": (0, 1), "bar": (0,)}
FOO_BAR_INVALID = (
    OffsetFetchResponseTopic("foo", (invalid(0), invalid(1))),
    OffsetFetchResponseTopic("bar", (invalid(0),)),
)


def test_generic_group_fetch_offsets_with_dead_group():
    """Port of OffsetMetadataManagerTest.testGenericGroupFetchOffsetsWithDeadGroup: fetching from
    a Dead group answers every partition with no committed offset, without error."""
    d = Driver()
    d.create_group("group")
    d.force(DEAD, group_id="group")
    assert fetch(d, FOO_BAR, "group").topics == FOO_BAR_INVALID


def test_fetch_offsets_with_unknown_group():
    """Port of OffsetMetadataManagerTest.testFetchOffsetsWithUnknownGroup: fetching from an
    unknown group answers every partition with no committed offset, without error."""
    d = Driver()
    assert fetch(d, FOO_BAR, "group").topics == FOO_BAR_INVALID


def commit_five(d: Driver) -> None:
    """The commits of Kafka's "at different committed offset" tests, in their order."""
    for topic, partition, offset, epoch in (
        ("foo", 0, 100, 1),
        ("foo", 1, 110, 1),
        ("bar", 0, 200, 1),
        ("foo", 1, 111, 2),
        ("bar", 1, 210, 2),
    ):
        request = OffsetCommitRequest(
            "group",
            -1,
            "",
            (
                OffsetCommitRequestTopic(
                    topic, (OffsetCommitRequestPartition(partition, offset, epoch, "metadata"),)
                ),
            ),
        )
        _corr, (response,) = d.send("X", request)
        assert one_error(response) == Errors.NONE


def test_fetch_offsets_at_latest_committed_offset():
    """Port of OffsetMetadataManagerTest.testFetchOffsetsAtDifferentCommittedOffset (its final
    read, everything committed): each asked partition comes back with its latest offset, leader
    epoch and metadata, in the order asked; partitions never committed come back empty."""
    d = Driver()
    commit_five(d)
    assert fetch(d, {"foo": (0, 1), "bar": (0, 1)}, "group").topics == (
        OffsetFetchResponseTopic(
            "foo",
            (
                OffsetFetchResponsePartition(0, 100, 1, "metadata"),
                OffsetFetchResponsePartition(1, 111, 2, "metadata"),
            ),
        ),
        OffsetFetchResponseTopic(
            "bar",
            (
                OffsetFetchResponsePartition(0, 200, 1, "metadata"),
                OffsetFetchResponsePartition(1, 210, 2, "metadata"),
            ),
        ),
    )
    assert fetch(d, {"foo": (0, 2)}, "group").topics == (
        OffsetFetchResponseTopic(
            "foo", (OffsetFetchResponsePartition(0, 100, 1, "metadata"), invalid(2))
        ),
    )


def test_generic_group_fetch_all_offsets_with_dead_group():
    """Port of OffsetMetadataManagerTest.testGenericGroupFetchAllOffsetsWithDeadGroup: fetching
    all offsets of a Dead group answers no topic."""
    d = Driver()
    d.create_group("group")
    d.force(DEAD, group_id="group")
    assert fetch(d, None, "group").topics == ()


def test_fetch_all_offsets_with_unknown_group():
    """Port of OffsetMetadataManagerTest.testFetchAllOffsetsWithUnknownGroup: fetching all
    offsets of an unknown group answers no topic."""
    d = Driver()
    assert fetch(d, None, "group").topics == ()


def test_fetch_all_offsets_at_latest_committed_offset():
    """Port of OffsetMetadataManagerTest.testFetchAllOffsetsAtDifferentCommittedOffset (its final
    read): every committed partition comes back once, with its latest offset, epoch and
    metadata. (Kafka lists topics in its map's hash order, groupsim sorted; for these names the
    two agree.)"""
    d = Driver()
    commit_five(d)
    assert fetch(d, None, "group").topics == (
        OffsetFetchResponseTopic(
            "bar",
            (
                OffsetFetchResponsePartition(0, 200, 1, "metadata"),
                OffsetFetchResponsePartition(1, 210, 2, "metadata"),
            ),
        ),
        OffsetFetchResponseTopic(
            "foo",
            (
                OffsetFetchResponsePartition(0, 100, 1, "metadata"),
                OffsetFetchResponsePartition(1, 111, 2, "metadata"),
            ),
        ),
    )


# =================================================================================================
# deletion, expiry and replay
# =================================================================================================


def test_delete_group_all_offsets():
    """Port of OffsetMetadataManagerTest.testDeleteGroupAllOffsets (its classic group): deleting
    a group writes a tombstone for each of its committed offsets (then one for the group)."""
    d = Driver(topics={"bar-0": 2, "bar-1": 1})
    d.create_group(GROUP)
    for topic, partition in (("bar-0", 0), ("bar-0", 1), ("bar-1", 0)):
        assert one_error(commit(d, [(topic, partition, 100)])) == Errors.NONE
    since = len(d.records(GROUP))
    _corr, (response,) = d.send("X", DeleteGroupsRequest((GROUP,)), d.coordinator(GROUP))
    assert response.results[0].error_code == Errors.NONE
    written = records_since(d, since)
    assert len(written) == 4 and written[-1] == (GroupMetadataKey(GROUP), None)
    assert set(written[:-1]) == {
        (OffsetCommitKey(GROUP, "bar-1", 0), None),
        (OffsetCommitKey(GROUP, "bar-0", 0), None),
        (OffsetCommitKey(GROUP, "bar-0", 1), None),
    }
    assert d.cluster.committed_offsets(GROUP) == {}


RETENTION_MS = 60000


def expiry_driver(check_interval_ms: int = 10000) -> Driver:
    """offsets.retention.minutes=1 (Kafka's withOffsetsRetentionMinutes(1)), checked every
    ``check_interval_ms`` from the first group's creation."""
    return Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10,
            offsets_retention_minutes=1,
            offsets_retention_check_interval_ms=check_interval_ms,
            load_time_ms=0,
        ),
        topics={"bar": 4, "foo": 4, "topic": 1, "firstTopic": 2, "secondTopic": 2},
    )


def stable_member(
    d: Driver, protocol_type: str = "consumer", metadata: bytes = b"", session: int = 300000
) -> str:
    """One dynamic member joins, the join phase ends, it syncs: Stable, generation 1."""
    member_id, corr = d.join_dynamic(
        "M", GROUP, protocol_type=protocol_type, metadata=metadata, session=session
    )
    d.complete_join(GROUP)
    r = d.response("M", corr)
    d.sync(
        "M",
        member_id,
        1,
        group_id=GROUP,
        assignments={member_id: b""},
        protocol_type=protocol_type,
        protocol_name=r.protocol_name,
    )
    assert d.state(GROUP) == STABLE
    return member_id


def test_cleanup_expired_offsets_group_has_no_offsets():
    """Port of OffsetMetadataManagerTest.testCleanupExpiredOffsetsGroupHasNoOffsets: a group
    without offsets has "all its offsets expired" at once: the expiry writes no offset tombstone,
    and an Empty group is then deleted (its tombstone alone)."""
    d = expiry_driver()
    member_id = stable_member(d)
    d.leave("M", MemberIdentity(member_id), group_id=GROUP)
    assert d.state(GROUP) == EMPTY
    since = len(d.records(GROUP))
    d.advance(10000)
    assert records_since(d, since) == [(GroupMetadataKey(GROUP), None)]
    assert d.cluster.group(GROUP) is None


def test_cleanup_expired_offsets_empty_offset_expiration_condition():
    """Port of OffsetMetadataManagerTest.testCleanupExpiredOffsetsEmptyOffsetExpirationCondition:
    a group with no expiration condition (here a Stable group of a non-consumer protocol) keeps its
    offsets however old they are, and is not deleted."""
    d = expiry_driver()
    member_id = stable_member(d, protocol_type="My Protocol")
    assert one_error(commit(d, [("topic", 0, 100)], member_id=member_id, generation=1)) == (
        Errors.NONE
    )
    since = len(d.records(GROUP))
    d.advance(3 * RETENTION_MS)
    assert records_since(d, since) == []
    assert d.cluster.committed_offsets(GROUP) == {("topic", 0): 100}
    assert d.state(GROUP) == STABLE


def test_cleanup_expired_offsets():
    """Port of OffsetMetadataManagerTest.testCleanupExpiredOffsets, with a Stable consumer group
    in the place of Kafka's mocked group: offsets of a topic the group subscribes to never
    expire; offsets of other topics expire retention after their commit, each on its own; once
    the group no longer subscribes to a topic its offsets expire too. The group is not Empty, so
    it stays."""
    d = expiry_driver(check_interval_ms=500)
    member_id = stable_member(d, metadata=subscription("firstTopic"))
    t0 = d.now
    assert t0 % 500 == 0  # the checks run every 500 ms from t=0

    def commit_at(t: int, *partitions: tuple[str, int]) -> None:
        d.advance(t)
        response = commit(
            d, [(tp, p, 100) for tp, p in partitions], member_id=member_id, generation=generation
        )
        assert all(p.error_code == Errors.NONE for tp in response.topics for p in tp.partitions)

    def tombstones(since: int) -> set[tuple[str, int]]:
        written = records_since(d, since)
        assert all(value is None for _key, value in written)
        return {(key.topic, key.partition) for key, _value in written}

    generation = 1
    commit_at(t0, ("firstTopic", 0), ("secondTopic", 0))
    commit_at(t0 + 500, ("secondTopic", 1))

    since = len(d.records(GROUP))
    d.advance(t0 + RETENTION_MS)
    assert tombstones(since) == {("secondTopic", 0)}

    since = len(d.records(GROUP))
    d.advance(t0 + RETENTION_MS + 500)
    assert tombstones(since) == {("secondTopic", 1)}

    t1 = d.now
    commit_at(t1, ("firstTopic", 1), ("secondTopic", 0))
    # Just before the check that expires them, the member stops subscribing to firstTopic.
    d.advance(t1 + RETENTION_MS - 100)
    corr = d.join("M", GROUP, member_id, metadata=subscription("otherTopic"), session=300000)
    generation = d.response("M", corr).generation_id
    d.sync("M", member_id, generation, group_id=GROUP, assignments={member_id: b""})
    assert d.state(GROUP) == STABLE and generation == 2
    since = len(d.records(GROUP))
    d.advance(t1 + RETENTION_MS)
    assert tombstones(since) == {("firstTopic", 0), ("firstTopic", 1), ("secondTopic", 0)}
    assert d.cluster.committed_offsets(GROUP) == {} and d.state(GROUP) == STABLE


def test_replay():
    """Port of OffsetMetadataManagerTest.testReplay: the coordinator that loads the partition
    after a failover holds each partition's latest committed offset, leader epoch, metadata and
    commit time, as written. (Kafka's last case, an expire timestamp, is not modelled.)"""
    d = Driver(TEST_CONFIG)
    written = {}
    for t, partition, offset, epoch in (
        (10, 0, 100, -1),
        (20, 0, 200, 10),
        (30, 1, 200, 10),
        (40, 1, 300, 10),
    ):
        d.now = t
        response = commit(d, [OffsetCommitRequestPartition(partition, offset, epoch, "small")])
        assert one_error(response) == Errors.NONE
        value = OffsetCommitValue(offset, epoch, "small", t)
        assert d.shard(GROUP).offset_manager.offsets[GROUP][("bar", partition)] == value
        written[("bar", partition)] = value
    before = d.coordinator(GROUP)
    d.reload(GROUP)
    assert d.coordinator(GROUP) != before
    assert d.shard(GROUP).offset_manager.offsets[GROUP] == written
    assert fetch(d, {"bar": (0, 1)}).topics == (
        OffsetFetchResponseTopic(
            "bar",
            (
                OffsetFetchResponsePartition(0, 200, 10, "small"),
                OffsetFetchResponsePartition(1, 300, 10, "small"),
            ),
        ),
    )


def test_on_partitions_deleted():
    """Port of OffsetMetadataManagerTest.testOnPartitionsDeleted: when a topic is deleted, every
    group's committed offsets of its partitions get tombstones and are gone; other topics' offsets
    stay. (Kafka's test deletes single partitions; groupsim deletes whole topics. Its third group
    holds transactional offsets, not modelled.)"""
    d = Driver(topics={"foo": 4, "bar": 4})
    for group_id, topic in (("grp-0", "foo"), ("grp-1", "bar")):
        response = commit(d, [(topic, p, 100 * p) for p in (1, 2, 3)], group_id=group_id)
        assert all(p.error_code == Errors.NONE for p in response.topics[0].partitions)
    since = {g: len(d.records(g)) for g in ("grp-0", "grp-1")}

    assert d.apply(d.cluster.delete_topic("foo", d.now)) == []
    assert set(records_since(d, since["grp-0"], "grp-0")) == {
        (OffsetCommitKey("grp-0", "foo", p), None) for p in (1, 2, 3)
    }
    assert records_since(d, since["grp-1"], "grp-1") == []
    assert d.cluster.committed_offsets("grp-0") == {}
    assert d.cluster.committed_offsets("grp-1") == {("bar", p): 100 * p for p in (1, 2, 3)}

    d.apply(d.cluster.delete_topic("bar", d.now))
    assert d.cluster.committed_offsets("grp-1") == {}
    assert [(e["group_id"], e["topic"], e["count"]) for e in d.named("offsets_deleted")] == [
        ("grp-0", "foo", 3),
        ("grp-1", "bar", 3),
    ]


def same_partition_group(d: Driver, group_id: str) -> str:
    """Another group id whose offsets live in the same ``__consumer_offsets`` partition."""
    p = d.cluster.partition_for(group_id)
    return next(f"other-{i}" for i in range(10000) if d.cluster.partition_for(f"other-{i}") == p)


def test_topic_deletion_writes_one_batch_per_coordinator_and_skips_a_loading_one():
    """Around the port of testOnPartitionsDeleted: the tombstones of all the groups a coordinator
    holds go out in one batch (GroupCoordinatorShard.onPartitionsDeleted's one result), each
    record logged under its own group; a coordinator that is still loading writes nothing, and
    the offsets come back with its load."""
    d = Driver(topics={"foo": 2})
    other = same_partition_group(d, GROUP)
    for group_id in (GROUP, other):
        assert one_error(commit(d, [("foo", 0, 7)], group_id=group_id)) == Errors.NONE
    since = len(d.records(GROUP))
    d.cluster.fail_next_append(Errors.NOT_ENOUGH_REPLICAS)  # the whole batch fails
    d.apply(d.cluster.delete_topic("foo", d.now))
    assert len(d.records(GROUP)) == since and d.cluster.committed_offsets(other) == {("foo", 0): 7}

    d.cluster.create_topic("foo", 2)
    d.apply(d.cluster.delete_topic("foo", d.now))
    appended = [e["group_id"] for e in d.named("record_appended")][-2:]
    assert sorted(appended) == sorted([GROUP, other])
    assert d.cluster.committed_offsets(GROUP) == d.cluster.committed_offsets(other) == {}

    d = Driver(
        CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=500), topics={"foo": 2}
    )
    commit(d, [("foo", 0, 7)])
    d.apply(d.cluster.fail_broker(d.coordinator(GROUP), d.now))  # the next replica loads
    d.apply(d.cluster.delete_topic("foo", d.now))
    d.advance(d.now + 500)
    assert d.cluster.committed_offsets(GROUP) == {("foo", 0): 7}


# =================================================================================================
# KIP-848 consumer groups (ConsumerGroup.validateOffsetCommit / validateOffsetFetch)
# =================================================================================================


def consumer_member(d: Driver, group_id: str = GROUP, client: str = "M") -> tuple[str, int]:
    """A consumer-protocol member joins ``group_id`` (a ConsumerGroupHeartbeat subscribed to
    bar): Kafka's ``group.updateMember(... "member" ...)``. Returns (member id, member epoch)."""
    request = ConsumerGroupHeartbeatRequest(
        group_id,
        "",
        0,
        rebalance_timeout_ms=5000,
        subscribed_topic_names=("bar",),
        topic_partitions=(),
    )
    _corr, (response,) = d.send(client, request)
    assert response.error_code == Errors.NONE and response.member_epoch > 0
    return response.member_id, response.member_epoch


def empty_consumer_group(d: Driver, group_id: str = GROUP) -> None:
    """getOrMaybeCreatePersistedConsumerGroup(id, true): an Empty consumer group (a member
    joins and leaves; the group stays)."""
    member_id, _epoch = consumer_member(d, group_id)
    _corr, (left,) = d.send("M", ConsumerGroupHeartbeatRequest(group_id, member_id, -1))
    assert left.error_code == Errors.NONE
    group = d.shard(group_id).consumer_group_manager.groups[group_id]
    assert group.is_empty()


def fetch_as(d: Driver, member_id: str | None, epoch: int, topics=None) -> OffsetFetchResponse:
    """OffsetFetch v9 with a member id and epoch ({topic: partitions}, None: every offset)."""
    request_topics = (
        None
        if topics is None
        else tuple(OffsetFetchRequestTopic(t, tuple(ps)) for t, ps in topics.items())
    )
    request = OffsetFetchRequest(GROUP, request_topics, member_id=member_id, member_epoch=epoch)
    _corr, (response,) = d.send("X", request)
    return response


def test_consumer_group_offset_commit_with_unknown_member_id():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommitWithUnknownMemberId: an
    Empty consumer group does not know the member: UNKNOWN_MEMBER_ID, nothing written."""
    d = Driver()
    empty_consumer_group(d)
    since = len(d.records(GROUP))
    assert commit(d, member_id="member", generation=10) == bar0(Errors.UNKNOWN_MEMBER_ID)
    assert records_since(d, since) == []


def test_consumer_group_offset_commit_with_stale_member_epoch():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommitWithStaleMemberEpoch: a
    consumer-protocol member's epoch below or above its own is STALE_MEMBER_EPOCH."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    since = len(d.records(GROUP))
    for wrong in (epoch - 1, epoch + 1):
        response = commit(d, member_id=member_id, generation=wrong)
        assert response == bar0(Errors.STALE_MEMBER_EPOCH)
    assert records_since(d, since) == []


def test_consumer_group_offset_commit_from_admin_client():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommitFromAdminClient: no member
    id, generation -1, to an Empty consumer group: accepted; the record has no leader epoch, no
    metadata, the commit time. A generation-less commit to a consumer group *with* members is
    refused (ConsumerGroup.validateOffsetCommit looks the member "" up): UNKNOWN_MEMBER_ID."""
    d = Driver()
    empty_consumer_group(d)
    d.now = 1234
    since = len(d.records(GROUP))
    assert commit(d) == bar0(Errors.NONE)
    assert records_since(d, since) == [
        (OffsetCommitKey(GROUP, "bar", 0), OffsetCommitValue(100, -1, "", 1234))
    ]
    consumer_member(d)
    since = len(d.records(GROUP))
    assert commit(d) == bar0(Errors.UNKNOWN_MEMBER_ID)
    assert records_since(d, since) == []


def test_consumer_group_offset_commit():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommit: the member commits at
    its epoch: NONE, one record with the leader epoch, the metadata and the commit time."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    d.now = 777
    since = len(d.records(GROUP))
    response = commit(
        d,
        [OffsetCommitRequestPartition(0, 100, 10, "metadata")],
        member_id=member_id,
        generation=epoch,
    )
    assert response == bar0(Errors.NONE)
    assert records_since(d, since) == [
        (OffsetCommitKey(GROUP, "bar", 0), OffsetCommitValue(100, 10, "metadata", 777))
    ]


def test_consumer_group_offset_commit_with_offset_metadata_too_large():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetCommitWithOffsetMetadataTooLarge
    (the consumer-group original; test_offset_commit_with_offset_metadata_too_large runs it for a
    classic member): the too-large partition fails alone."""
    d = Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10, offset_metadata_max_bytes=5, load_time_ms=0
        )
    )
    member_id, epoch = consumer_member(d)
    since = len(d.records(GROUP))
    response = commit(
        d,
        [
            OffsetCommitRequestPartition(0, 100, 10, "toolarge"),
            OffsetCommitRequestPartition(1, 100, 10, "small"),
        ],
        member_id=member_id,
        generation=epoch,
    )
    assert response == OffsetCommitResponse(
        (
            OffsetCommitResponseTopic(
                "bar",
                (
                    OffsetCommitResponsePartition(0, Errors.OFFSET_METADATA_TOO_LARGE),
                    OffsetCommitResponsePartition(1, Errors.NONE),
                ),
            ),
        )
    )
    assert records_since(d, since) == [
        (OffsetCommitKey(GROUP, "bar", 1), OffsetCommitValue(100, 10, "small", d.now))
    ]


def test_consumer_group_offset_fetch_with_member_id_and_epoch():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetFetchWithMemberIdAndEpoch: the
    member fetches at its epoch, the named partitions and all of them."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    commit(
        d,
        [OffsetCommitRequestPartition(0, 100, 1, "metadata")],
        member_id=member_id,
        generation=epoch,
    )
    expected = (
        OffsetFetchResponseTopic("bar", (OffsetFetchResponsePartition(0, 100, 1, "metadata"),)),
    )
    for topics in ({"bar": (0,)}, None):
        response = fetch_as(d, member_id, epoch, topics)
        assert (response.error_code, response.topics) == (Errors.NONE, expected)


def test_consumer_group_offset_fetch_from_admin_client():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetFetchFromAdminClient: no member
    id, epoch -1: accepted although the group has a member."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    commit(
        d,
        [OffsetCommitRequestPartition(0, 100, 1, "metadata")],
        member_id=member_id,
        generation=epoch,
    )
    expected = (
        OffsetFetchResponseTopic("bar", (OffsetFetchResponsePartition(0, 100, 1, "metadata"),)),
    )
    for topics in ({"bar": (0,)}, None):
        response = fetch_as(d, None, -1, topics)
        assert (response.error_code, response.topics) == (Errors.NONE, expected)


def test_consumer_group_offset_fetch_with_unknown_member_id():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetFetchWithUnknownMemberId: a
    member id (even "") with epoch 0 in an Empty consumer group: UNKNOWN_MEMBER_ID, for named
    partitions and for all."""
    d = Driver()
    empty_consumer_group(d)
    for member_id in ("", "member"):
        for topics in ({"bar": (0,)}, None):
            assert fetch_as(d, member_id, 0, topics).error_code == Errors.UNKNOWN_MEMBER_ID


def test_consumer_group_offset_fetch_with_stale_member_epoch():
    """Port of OffsetMetadataManagerTest.testConsumerGroupOffsetFetchWithStaleMemberEpoch: an
    epoch the member does not have: STALE_MEMBER_EPOCH, for named partitions and for all."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    for topics in ({"bar": (0,)}, None):
        response = fetch_as(d, member_id, epoch + 9, topics)
        assert response.error_code == Errors.STALE_MEMBER_EPOCH


def test_consumer_group_offset_expiration_condition():
    """ConsumerGroupTest.testOffsetExpirationCondition, through the expiry job
    (GroupCoordinatorShard.cleanupGroupMetadata over a KIP-848 group): an offset expires
    retention after its commit time (offsets of a topic the group subscribes to never do), each
    on its own; the group stays while it has a member."""
    d = expiry_driver(check_interval_ms=500)
    member_id, epoch = consumer_member(d)  # subscribed to bar
    commit(d, [("foo", 0, 15000), ("bar", 0, 1)], member_id=member_id, generation=epoch)
    committed_at = d.now
    since = len(d.records(GROUP))

    def offset_records() -> list:
        return [(k, v) for k, v in records_since(d, since) if isinstance(k, OffsetCommitKey)]

    def advance_alive(to_ms: int) -> None:  # the member heartbeats every 10 s meanwhile
        while d.now < to_ms:
            d.advance(min(to_ms, d.now + 10_000))
            _corr, (beat,) = d.send("M", ConsumerGroupHeartbeatRequest(GROUP, member_id, epoch))
            assert beat.error_code == Errors.NONE

    advance_alive(committed_at + RETENTION_MS - 1)
    assert offset_records() == []
    advance_alive(committed_at + RETENTION_MS + 500)
    assert offset_records() == [(OffsetCommitKey(GROUP, "foo", 0), None)]
    assert d.cluster.committed_offsets(GROUP) == {("bar", 0): 1}
    assert d.shard(GROUP).consumer_group_manager.groups.get(GROUP) is not None


def test_consumer_group_maybe_delete_by_the_expiry_job():
    """GroupMetadataManagerTest.testConsumerGroupMaybeDelete (through the expiry job:
    cleanupGroupMetadata calls maybeDeleteGroup once all of a group's offsets expired): an Empty
    consumer group whose offsets all expired is deleted in the same batch (its offsets'
    tombstones, then target assignment epoch, subscription metadata and group epoch ones)."""
    d = expiry_driver(check_interval_ms=500)
    member_id, epoch = consumer_member(d)
    commit(d, [("bar", 0, 1)], member_id=member_id, generation=epoch)
    _corr, (left,) = d.send("M", ConsumerGroupHeartbeatRequest(GROUP, member_id, -1))
    assert left.error_code == Errors.NONE
    since = len(d.records(GROUP))
    d.advance(d.now + RETENTION_MS + 500)
    assert [(type(k).__name__, v) for k, v in records_since(d, since)] == [
        ("OffsetCommitKey", None),
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
    ]
    assert d.shard(GROUP).consumer_group_manager.groups.get(GROUP) is None
    assert d.cluster.committed_offsets(GROUP) == {}
