"""Ports of OffsetMetadataManagerTest's transactional cases (TxnOffsetCommit, pending offsets,
transaction markers, require_stable), through KafkaCluster; each test names its original.

Kafka's tests replay records into the manager by hand (``verifyTransactionalReplay``,
``replayEndTransactionMarker``); here the records are written by real TxnOffsetCommit and
OffsetCommit requests and the markers by ``KafkaCluster.complete_transaction``, and the replay
ports read the state after a failover (the next replica replays the partition). The KIP-848
consumer-group variants (testConsumerGroupTransactionalOffsetCommit*, and ConsumerGroupTest's
testValidateTransactionalOffsetCommit) build their consumer group with real
ConsumerGroupHeartbeats.
"""

from __future__ import annotations

import attrs
import pytest

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponsePartition,
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)
from coordinator.records import ControlRecordKey, OffsetCommitKey, OffsetCommitValue
from tests.coordinator.harness import TEST_CONFIG, Driver


def txn_commit(
    d: Driver,
    offsets: dict[tuple[str, int], int],
    *,
    group_id: str = "foo",
    producer_id: int = 10,
    member_id: str = "",
    generation: int = -1,
    instance_id: str | None = None,
    version: int = 4,
    epoch: int = -1,
    metadata: str | None = "metadata",
) -> dict[tuple[str, int], Errors]:
    topics: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
    for (topic, p), off in offsets.items():
        topics.setdefault(topic, []).append(
            TxnOffsetCommitRequestPartition(p, off, epoch, metadata)
        )
    req = TxnOffsetCommitRequest(
        "txn",
        group_id,
        producer_id,
        0,
        tuple(TxnOffsetCommitRequestTopic(t, tuple(ps)) for t, ps in topics.items()),
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance_id,
        api_version=version,
    )
    _corr, got = d.send("producer", req)
    (response,) = got
    assert isinstance(response, TxnOffsetCommitResponse)
    return {
        (t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions
    }


def end_txn(d: Driver, producer_id: int, commit: bool, group_id: str = "foo") -> Errors:
    error, result = d.cluster.complete_transaction(
        d.cluster.partition_for(group_id), producer_id, commit, d.now
    )
    d.apply(result)
    return error


def fetch(d: Driver, topics=None, *, group_id: str = "foo", stable: bool = True):
    request_topics = (
        None if topics is None else tuple(OffsetFetchRequestTopic(t, ps) for t, ps in topics)
    )
    _corr, got = d.send("client", OffsetFetchRequest(group_id, request_topics, stable))
    return {(t.name, p.partition_index): p for t in got[0].topics for p in t.partitions}


UNSTABLE = Errors.UNSTABLE_OFFSET_COMMIT


def test_generic_group_transactional_offset_commit():
    """testGenericGroupTransactionalOffsetCommit: a member of generation 1 commits; the record is
    written with the producer id and nothing is visible until the marker."""
    d = Driver()
    ids, gen = d.stable_group(("A",), group_id="foo")
    assert gen == 1
    d.now = 5
    errors = txn_commit(d, {("bar", 0): 100}, member_id=ids["A"], generation=1, epoch=10)
    assert errors == {("bar", 0): Errors.NONE}
    record = d.records("foo")[-1]
    assert record.producer_id == 10
    assert record.key == OffsetCommitKey("foo", "bar", 0)
    assert record.value == OffsetCommitValue(100, 10, "metadata", 5)
    assert d.cluster.committed_offsets("foo") == {}
    assert fetch(d, [("bar", [0])], stable=False)[("bar", 0)].committed_offset == -1


def test_generic_group_transactional_offset_commit_with_unknown_group_id():
    """testGenericGroupTransactionalOffsetCommitWithUnknownGroupId and
    testConsumerGroupTransactionalOffsetCommitWithUnknownGroupId (the same request: no group
    exists, so it has no type): ILLEGAL_GENERATION at every version (OffsetCommit v9 would say
    GROUP_ID_NOT_FOUND)."""
    d = Driver()
    errors = txn_commit(d, {("bar", 0): 100}, member_id="member", generation=10)
    assert errors == {("bar", 0): Errors.ILLEGAL_GENERATION}
    assert d.state("foo") is None


def test_generic_group_transactional_offset_commit_with_unknown_member_id():
    """testGenericGroupTransactionalOffsetCommitWithUnknownMemberId."""
    d = Driver()
    d.create_group("foo")
    errors = txn_commit(d, {("bar", 0): 100}, member_id="member", generation=10)
    assert errors == {("bar", 0): Errors.UNKNOWN_MEMBER_ID}


def test_generic_group_transactional_offset_commit_with_illegal_generation_id():
    """testGenericGroupTransactionalOffsetCommitWithIllegalGenerationId."""
    d = Driver()
    ids, _gen = d.stable_group(("A",), group_id="foo")
    errors = txn_commit(d, {("bar", 0): 100}, member_id=ids["A"], generation=100)
    assert errors == {("bar", 0): Errors.ILLEGAL_GENERATION}


def test_transactional_commit_is_accepted_while_completing_rebalance():
    """ClassicGroup.validateOffsetCommit(isTransactional=true): the group's state is not
    enforced, where a plain OffsetCommit gets REBALANCE_IN_PROGRESS."""
    d = Driver()
    a, _ = d.join_dynamic("A", "foo")
    d.complete_join("foo")
    assert d.state("foo") == "CompletingRebalance"
    assert txn_commit(d, {("bar", 0): 1}, member_id=a, generation=1) == {("bar", 0): Errors.NONE}
    assert d.commit("A", a, 1, {("bar", 0): 1}, group_id="foo") == {
        ("bar", 0): Errors.REBALANCE_IN_PROGRESS
    }


def test_transactional_commit_without_member_to_a_non_empty_group():
    """An old producer (no member id, generation -1) may commit for a non-empty group; a plain
    OffsetCommit without them gets UNKNOWN_MEMBER_ID."""
    d = Driver()
    d.stable_group(("A",), group_id="foo")
    assert txn_commit(d, {("bar", 0): 1}, version=2) == {("bar", 0): Errors.NONE}
    assert d.commit("A", "", -1, {("bar", 0): 1}, group_id="foo") == {
        ("bar", 0): Errors.UNKNOWN_MEMBER_ID
    }


def test_simple_group_created_by_transactional_commit_and_rolled_back_on_failed_write():
    """validateTransactionalOffsetCommit creates a simple group for generation -1; a failed
    write takes it back (the snapshot revert) and is answered with the mapped error."""
    d = Driver()
    d.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    assert txn_commit(d, {("bar", 0): 1}) == {("bar", 0): Errors.NOT_COORDINATOR}
    assert d.state("foo") is None
    assert txn_commit(d, {("bar", 0): 1}) == {("bar", 0): Errors.NONE}
    assert d.state("foo") == "Empty"


def test_fetch_offsets_with_pending_transactional_offsets():
    """testFetchOffsetsWithPendingTransactionalOffsets (for a classic group): require_stable
    answers UNSTABLE_OFFSET_COMMIT for a partition with a pending offset, committed or not;
    without it the committed offsets are read."""
    d = Driver()
    d.create_group("group")
    d.commit("c", "", -1, {("foo", 0): 100, ("foo", 1): 110, ("bar", 0): 200}, group_id="group")
    txn_commit(d, {("foo", 1): 111, ("bar", 0): 201, ("bar", 1): 211}, group_id="group")
    request = [("foo", [0, 1]), ("bar", [0, 1])]
    stable = fetch(d, request, group_id="group")
    assert stable[("foo", 0)] == OffsetFetchResponsePartition(0, 100, -1, "")
    for tp in (("foo", 1), ("bar", 0), ("bar", 1)):
        assert stable[tp] == OffsetFetchResponsePartition(tp[1], error_code=UNSTABLE)
    relaxed = fetch(d, request, group_id="group", stable=False)
    assert [p.committed_offset for p in relaxed.values()] == [100, 110, 200, -1]
    assert end_txn(d, 10, commit=True, group_id="group") == Errors.NONE
    stable = fetch(d, request, group_id="group")
    assert [p.committed_offset for p in stable.values()] == [100, 111, 201, 211]
    assert all(p.error_code == Errors.NONE for p in stable.values())


def test_fetch_all_offsets_with_pending_transactional_offsets():
    """testFetchAllOffsetsWithPendingTransactionalOffsets: a fetch of all offsets lists only
    committed partitions; those with a pending offset are UNSTABLE_OFFSET_COMMIT."""
    d = Driver()
    d.create_group("group")
    d.commit("c", "", -1, {("foo", 0): 100, ("foo", 1): 110, ("bar", 0): 200}, group_id="group")
    txn_commit(d, {("foo", 1): 111, ("bar", 0): 201, ("bar", 1): 211}, group_id="group")
    got = fetch(d, group_id="group")
    assert set(got) == {("foo", 0), ("foo", 1), ("bar", 0)}
    assert got[("foo", 0)].committed_offset == 100
    assert got[("foo", 1)].error_code == UNSTABLE and got[("bar", 0)].error_code == UNSTABLE
    end_txn(d, 10, commit=False, group_id="group")
    got = fetch(d, group_id="group")
    assert {tp: p.committed_offset for tp, p in got.items()} == {
        ("foo", 0): 100,
        ("foo", 1): 110,
        ("bar", 0): 200,
    }


def test_delete_group_all_offsets_with_pending_transactional_offsets():
    """testDeleteGroupAllOffsetsWithPendingTransactionalOffsets: DeleteGroups tombstones every
    committed offset, then each partition only a pending offset holds (once), and the marker
    finds nothing left to commit."""
    d = Driver(topics={"bar-0": 2, "bar-1": 1, "bar-2": 1})
    d.create_group("foo")
    d.commit("c", "", -1, {("bar-0", 0): 100, ("bar-0", 1): 100, ("bar-1", 0): 100}, group_id="foo")
    txn_commit(d, {("bar-1", 0): 101, ("bar-2", 0): 100})
    start = len(d.records("foo"))
    d.send("admin", DeleteGroupsRequest(("foo",)), dst=d.coordinator("foo"))
    tombstones = d.records("foo")[start:]
    offsets = [
        (r.key.topic, r.key.partition) for r in tombstones if isinstance(r.key, OffsetCommitKey)
    ]
    assert sorted(offsets) == [("bar-0", 0), ("bar-0", 1), ("bar-1", 0), ("bar-2", 0)]
    assert all(r.value is None for r in tombstones)
    assert end_txn(d, 10, commit=True) == Errors.NONE
    assert d.cluster.committed_offsets("foo") == {}


def test_cleanup_expired_offsets_with_pending_transactional_offsets():
    """testCleanupExpiredOffsetsWithPendingTransactionalOffsets: an expired offset with a
    pending transactional offset is kept, and so is its (Empty) group."""
    d = Driver(config=attrs.evolve(TEST_CONFIG, offsets_retention_minutes=1))
    d.create_group("group-id")
    d.commit("c", "", -1, {("foo", 0): 100}, group_id="group-id")
    d.now = 500
    txn_commit(d, {("foo", 0): 101}, group_id="group-id")
    interval = d.cluster.config.offsets_retention_check_interval_ms
    d.advance(interval * (60_000 // interval + 2))
    assert d.cluster.committed_offsets("group-id") == {("foo", 0): 100}
    assert d.state("group-id") == "Empty"
    assert end_txn(d, 10, commit=True, group_id="group-id") == Errors.NONE
    assert d.cluster.committed_offsets("group-id") == {("foo", 0): 101}


def test_transactional_replay():
    """testTransactionalReplay: pending offsets survive a failover as pending (per producer),
    and their marker then commits them on the new coordinator."""
    d = Driver()
    txn_commit(d, {("bar", 0): 100}, producer_id=5)
    txn_commit(d, {("bar", 1): 101}, producer_id=5)
    txn_commit(d, {("bar", 0): 200}, producer_id=6)
    d.reload("foo")
    pending = d.shard("foo").offset_manager.pending
    assert pending.get(5, "foo", ("bar", 0)).value.offset == 100
    assert pending.get(5, "foo", ("bar", 1)).value.offset == 101
    assert pending.get(6, "foo", ("bar", 0)).value.offset == 200
    assert d.cluster.committed_offsets("foo") == {}
    assert d.state("foo") == "Empty"  # the replay made the simple group
    end_txn(d, 5, commit=True)
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 100, ("bar", 1): 101}
    end_txn(d, 6, commit=True)
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 200, ("bar", 1): 101}


def test_replay_with_tombstone_and_pending_transactional_offsets():
    """testReplayWithTombstoneAndPendingTransactionalOffsets: a tombstone removes the committed
    and the pending offsets of its partition (here: the deleted topic's tombstones, replayed
    after a failover too)."""
    d = Driver()
    d.create_group("foo")
    d.commit("c", "", -1, {("bar", 0): 100}, group_id="foo")
    txn_commit(d, {("bar", 0): 100, ("bar", 1): 100})
    d.apply(d.cluster.delete_topic("bar", d.now))
    manager = d.shard("foo").offset_manager
    assert not manager.pending.has_pending("foo", ("bar", 0))
    assert not manager.pending.has_pending("foo", ("bar", 1))
    assert d.cluster.committed_offsets("foo") == {}
    d.reload("foo")
    manager = d.shard("foo").offset_manager
    assert not manager.pending.has_pending("foo", ("bar", 0))
    assert not manager.pending.has_pending("foo", ("bar", 1))
    end_txn(d, 10, commit=True)
    assert d.cluster.committed_offsets("foo") == {}


@pytest.mark.parametrize("failover", [False, True])
def test_replay_transaction_end_marker_with_commit(failover):
    """testReplayTransactionEndMarkerWithCommit: an unknown producer's marker is ignored;
    COMMIT moves the pending offset into the committed ones, ABORT drops it."""
    d = Driver()
    d.create_group("foo")
    d.commit("c", "", -1, {("bar", 0): 99}, group_id="foo")
    txn_commit(d, {("bar", 0): 100}, producer_id=5)
    txn_commit(d, {("bar", 1): 200}, producer_id=6)
    assert end_txn(d, 1, commit=True) == Errors.NONE
    assert end_txn(d, 5, commit=True) == Errors.NONE
    if failover:
        d.reload("foo")
    manager = d.shard("foo").offset_manager
    assert manager.pending.get(5, "foo", ("bar", 0)) is None
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 100}
    assert end_txn(d, 6, commit=False) == Errors.NONE
    if failover:
        d.reload("foo")
    assert d.shard("foo").offset_manager.pending.get(6, "foo", ("bar", 1)) is None
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 100}
    markers = [r for r in d.records("foo") if isinstance(r.key, ControlRecordKey)]
    assert [(r.producer_id, r.key.type) for r in markers] == [
        (1, "COMMIT"),
        (5, "COMMIT"),
        (6, "ABORT"),
    ]
    completed = [
        (e["producer_id"], e["result"], e["count"]) for e in d.named("txn_offsets_completed")
    ]
    assert completed == [(5, "COMMIT", 1), (6, "ABORT", 1)]


@pytest.mark.parametrize("failover", [False, True])
def test_replay_transaction_end_marker_keeps_the_most_recent_committed_offset(failover):
    """testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset: a plain commit written
    after the transactional one wins over it when the marker commits."""
    d = Driver()
    d.create_group("foo")
    txn_commit(d, {("bar", 0): 100}, producer_id=5)
    d.commit("c", "", -1, {("bar", 0): 101}, group_id="foo")
    if failover:
        d.reload("foo")
    end_txn(d, 5, commit=True)
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 101}
    if failover is False:
        d.reload("foo")
        assert d.cluster.committed_offsets("foo") == {("bar", 0): 101}


def test_broker_checks_unknown_partitions_and_old_versions():
    """KafkaApis.handleTxnOffsetCommitRequest: unknown topics and partitions are answered by
    the broker and merged before the coordinator's answer; below v2 a loading coordinator is
    COORDINATOR_NOT_AVAILABLE, and the leader epoch is not on the wire."""
    d = Driver(config=attrs.evolve(TEST_CONFIG, load_time_ms=1000))
    got = txn_commit(d, {("bar", 0): 1, ("bar", 99): 1, ("nope", 0): 1}, epoch=7)
    assert got == {
        ("bar", 99): Errors.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
        ("bar", 0): Errors.NONE,
    }
    txn_commit(d, {("bar", 1): 1}, epoch=7, version=1)
    assert d.records("foo")[-1].value.leader_epoch == -1
    d.apply(d.cluster.fail_broker(d.coordinator("foo"), d.now))
    assert txn_commit(d, {("bar", 0): 1}, version=1) == {
        ("bar", 0): Errors.COORDINATOR_NOT_AVAILABLE
    }
    assert txn_commit(d, {("bar", 0): 1}, version=2) == {
        ("bar", 0): Errors.COORDINATOR_LOAD_IN_PROGRESS
    }
    assert txn_commit(d, {("bar", 0): 1}, group_id="") == {("bar", 0): Errors.INVALID_GROUP_ID}
    assert end_txn(d, 10, commit=True) == Errors.COORDINATOR_LOAD_IN_PROGRESS


def test_member_fields_below_v3_are_invalid():
    """Generation, member and instance ids exist from v3; a v2 request setting them cannot be
    sent (Kafka's serializer refuses a non-default value): INVALID_REQUEST."""
    d = Driver()
    assert txn_commit(d, {("bar", 0): 1}, member_id="m", version=2) == {
        ("bar", 0): Errors.INVALID_REQUEST
    }


# --- KIP-848 consumer groups ---------------------------------------------------------------------


def consumer_member(d: Driver, group_id: str = "foo") -> tuple[str, int]:
    """A consumer-protocol member joins ``group_id`` (Kafka's ``group.updateMember``): its id
    and epoch."""
    request = ConsumerGroupHeartbeatRequest(
        group_id,
        "",
        0,
        rebalance_timeout_ms=5000,
        subscribed_topic_names=("bar",),
        topic_partitions=(),
    )
    _corr, (response,) = d.send("M", request)
    assert response.error_code == Errors.NONE
    return response.member_id, response.member_epoch


def test_consumer_group_transactional_offset_commit():
    """testConsumerGroupTransactionalOffsetCommit: the member commits inside a transaction at
    its epoch: NONE, one record with the producer id, the leader epoch, the metadata; nothing
    visible before the marker, the offset after it."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    d.now = 5
    errors = txn_commit(d, {("bar", 0): 100}, member_id=member_id, generation=epoch, epoch=10)
    assert errors == {("bar", 0): Errors.NONE}
    record = d.records("foo")[-1]
    assert record.producer_id == 10
    assert record.key == OffsetCommitKey("foo", "bar", 0)
    assert record.value == OffsetCommitValue(100, 10, "metadata", 5)
    assert d.cluster.committed_offsets("foo") == {}
    assert end_txn(d, 10, commit=True) == Errors.NONE
    assert d.cluster.committed_offsets("foo") == {("bar", 0): 100}


def test_consumer_group_transactional_offset_commit_with_unknown_member_id():
    """testConsumerGroupTransactionalOffsetCommitWithUnknownMemberId: an Empty consumer group
    does not know the member: UNKNOWN_MEMBER_ID."""
    d = Driver()
    member_id, _epoch = consumer_member(d)
    _corr, (left,) = d.send("M", ConsumerGroupHeartbeatRequest("foo", member_id, -1))
    assert left.error_code == Errors.NONE
    since = len(d.records("foo"))
    errors = txn_commit(d, {("bar", 0): 100}, member_id="member", generation=10)
    assert errors == {("bar", 0): Errors.UNKNOWN_MEMBER_ID}
    assert d.records("foo")[since:] == ()


def test_consumer_group_transactional_offset_commit_with_stale_member_epoch():
    """testConsumerGroupTransactionalOffsetCommitWithStaleMemberEpoch: a wrong epoch from a
    consumer-protocol member is ILLEGAL_GENERATION in a TxnOffsetCommit
    (OffsetMetadataManager.validateTransactionalOffsetCommit maps STALE_MEMBER_EPOCH, which the
    OffsetCommit answers, since transactional producers only know ILLEGAL_GENERATION)."""
    d = Driver()
    member_id, epoch = consumer_member(d)
    errors = txn_commit(d, {("bar", 0): 100}, member_id=member_id, generation=epoch + 99)
    assert errors == {("bar", 0): Errors.ILLEGAL_GENERATION}


def test_validate_transactional_offset_commit():
    """ConsumerGroupTest.testValidateTransactionalOffsetCommit (through TxnOffsetCommit at every
    version that carries a member: 3 and 4): a commit without member id and generation is
    accepted only while the consumer group is empty; an unknown member is UNKNOWN_MEMBER_ID; a
    wrong epoch is refused (ILLEGAL_GENERATION: the manager's mapping of the group's
    STALE_MEMBER_EPOCH); the member's own epoch is accepted. TxnOffsetCommit has no minimum
    version for consumer-protocol members (OffsetCommit has 9)."""
    for version in (3, 4):
        d = Driver()
        member_id, epoch = consumer_member(d)
        _corr, (left,) = d.send("M", ConsumerGroupHeartbeatRequest("foo", member_id, -1))
        assert left.error_code == Errors.NONE
        ok = {("bar", 0): Errors.NONE}
        assert txn_commit(d, {("bar", 0): 1}, version=version) == ok
        # the commit goes to the consumer group: no simple classic group beside it
        assert "foo" not in d.shard("foo").group_manager.groups
        assert txn_commit(
            d, {("bar", 0): 1}, member_id="member-id", generation=0, version=version
        ) == {("bar", 0): Errors.UNKNOWN_MEMBER_ID}
        member_id, epoch = consumer_member(d)
        assert txn_commit(d, {("bar", 0): 1}, version=version) == {
            ("bar", 0): Errors.UNKNOWN_MEMBER_ID
        }
        assert txn_commit(
            d, {("bar", 0): 1}, member_id=member_id, generation=epoch + 10, version=version
        ) == {("bar", 0): Errors.ILLEGAL_GENERATION}
        assert (
            txn_commit(d, {("bar", 0): 1}, member_id=member_id, generation=epoch, version=version)
            == ok
        )


# Recorded from Kafka's coordinator at 1eb7644 (a copy of the built migration oracle, docs/oracle.md,
# whose driver has cgh, txn_commit and delete) on ORACLE_SCRIPT: each write as
# (time, [(record type, topic, partition, member, tombstone)]); the answers' errors are asserted
# in test_consumer_group_offsets_delete_and_expiry_agree_with_kafka.
ORACLE_SCRIPT = """\
{"op":"config","configs":{"offsets.retention.minutes":"1","offsets.retention.check.interval.ms":"500"}}
{"op":"topic","id":"RszA3eSf2vkNIl7eFM4zBw","name":"foo","partitions":2}
{"op":"topic","id":"kPZN0CjO8ZaNHyCu2Nrvdw","name":"bar","partitions":2}
{"op":"cgh","group":"g","member":"m","epoch":0,"rebalance":5000,"topics":["bar"],"owned":[]}
{"op":"commit","group":"g","member":"m","generation":1,"version":9,"topics":[["foo",[[0,5]]],["bar",[[0,7]]]]}
{"op":"txn_commit","group":"g","producer":10,"member":"m","generation":1,"version":4,"topics":[["foo",[[1,9]]]]}
{"op":"txn_commit","group":"g","producer":11,"member":"m","generation":99,"version":4,"topics":[["foo",[[1,9]]]]}
{"op":"txn_commit","group":"g","producer":12,"member":"x","generation":1,"version":3,"topics":[["foo",[[1,9]]]]}
{"op":"end_txn","producer":10,"commit":true}
{"op":"delete","groups":["g"]}
{"op":"advance","by":30000}
{"op":"cgh","group":"g","member":"m","epoch":1}
{"op":"advance","by":31000}
{"op":"cgh","group":"g","member":"m","epoch":-1}
{"op":"txn_commit","group":"g","producer":13,"version":4,"topics":[["foo",[[0,3]]]]}
{"op":"end_txn","producer":13,"commit":true}
{"op":"advance","by":61000}
{"op":"cgh","group":"h","member":"n","epoch":0,"rebalance":5000,"topics":["bar"],"owned":[]}
{"op":"cgh","group":"h","member":"n","epoch":-1}
{"op":"delete","groups":["h"]}
"""
ORACLE_WRITES = [
    (
        0,
        [
            ("ConsumerGroupMemberMetadata", None, None, "m", False),
            ("ConsumerGroupPartitionMetadata", None, None, None, False),
            ("ConsumerGroupMetadata", None, None, None, False),
            ("ConsumerGroupTargetAssignmentMember", None, None, "m", False),
            ("ConsumerGroupTargetAssignmentMetadata", None, None, None, False),
            ("ConsumerGroupCurrentMemberAssignment", None, None, "m", False),
        ],
    ),
    (0, [("OffsetCommit", "foo", 0, None, False), ("OffsetCommit", "bar", 0, None, False)]),
    (0, [("OffsetCommit", "foo", 1, None, False)]),
    (0, [("EndTransactionMarker", None, None, None, False)]),
    (60000, [("OffsetCommit", "foo", 0, None, True), ("OffsetCommit", "foo", 1, None, True)]),
    (
        61000,
        [
            ("ConsumerGroupCurrentMemberAssignment", None, None, "m", True),
            ("ConsumerGroupTargetAssignmentMember", None, None, "m", True),
            ("ConsumerGroupMemberMetadata", None, None, "m", True),
            ("ConsumerGroupPartitionMetadata", None, None, None, False),
            ("ConsumerGroupMetadata", None, None, None, False),
        ],
    ),
    (61000, [("OffsetCommit", "foo", 0, None, False)]),
    (61000, [("EndTransactionMarker", None, None, None, False)]),
    (61500, [("OffsetCommit", "bar", 0, None, True)]),
    (
        121000,
        [
            ("OffsetCommit", "foo", 0, None, True),
            ("ConsumerGroupTargetAssignmentMetadata", None, None, None, True),
            ("ConsumerGroupPartitionMetadata", None, None, None, True),
            ("ConsumerGroupMetadata", None, None, None, True),
        ],
    ),
    (
        122000,
        [
            ("ConsumerGroupMemberMetadata", None, None, "n", False),
            ("ConsumerGroupPartitionMetadata", None, None, None, False),
            ("ConsumerGroupMetadata", None, None, None, False),
            ("ConsumerGroupTargetAssignmentMember", None, None, "n", False),
            ("ConsumerGroupTargetAssignmentMetadata", None, None, None, False),
            ("ConsumerGroupCurrentMemberAssignment", None, None, "n", False),
        ],
    ),
    (
        122000,
        [
            ("ConsumerGroupCurrentMemberAssignment", None, None, "n", True),
            ("ConsumerGroupTargetAssignmentMember", None, None, "n", True),
            ("ConsumerGroupMemberMetadata", None, None, "n", True),
            ("ConsumerGroupPartitionMetadata", None, None, None, False),
            ("ConsumerGroupMetadata", None, None, None, False),
        ],
    ),
    (
        122000,
        [
            ("ConsumerGroupTargetAssignmentMetadata", None, None, None, True),
            ("ConsumerGroupPartitionMetadata", None, None, None, True),
            ("ConsumerGroupMetadata", None, None, None, True),
        ],
    ),
]


def test_consumer_group_offsets_delete_and_expiry_agree_with_kafka():
    """A script run through Kafka's own coordinator (the oracle) and through groupsim, its writes
    compared batch by batch (ORACLE_WRITES): a consumer-protocol member commits (OffsetCommit and
    TxnOffsetCommit at its epoch; a wrong epoch is ILLEGAL_GENERATION, an unknown member
    UNKNOWN_MEMBER_ID), DeleteGroups of the non-empty group is NON_EMPTY_GROUP; the expiry job
    (retention 1 minute, every 500 ms) expires the unsubscribed topic's offsets from their commit
    time, then, once the member left, the rest; an admin's transactional commit to the Empty
    group is accepted; the group is deleted with its last offset. A second group, Empty, is
    deleted by DeleteGroups. Found the three divergences fixed with it (TxnOffsetCommit, DeleteGroups
    and the expiry job ignored KIP-848 groups)."""
    d = Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10,
            offsets_retention_minutes=1,
            offsets_retention_check_interval_ms=500,
            load_time_ms=0,
        ),
        topics={"foo": 2, "bar": 2},
    )
    writes: list[tuple[int, list]] = []
    seen: dict[str, int] = {}

    def collect(group: str) -> None:
        """The group's new records, one batch per append time (each call follows one op or one
        advance, whose expiry runs are at distinct times)."""
        log = d.records(group)
        for record in log[seen.get(group, 0) :]:
            kind = type(record.key).__name__.removesuffix("Key")
            entry = (
                "EndTransactionMarker" if kind == "ControlRecord" else kind,
                getattr(record.key, "topic", None),
                getattr(record.key, "partition", None),
                getattr(record.key, "member_id", None),
                record.value is None,
            )
            if writes and writes[-1][0] == record.append_time_ms and not fresh[0]:
                writes[-1][1].append(entry)
            else:
                writes.append((record.append_time_ms, [entry]))
                fresh[0] = False
        seen[group] = len(log)
        fresh[0] = True

    fresh = [True]

    def cgh(group: str, member: str, epoch: int):
        fields = {}
        if epoch == 0:
            fields = dict(
                rebalance_timeout_ms=5000, topic_partitions=(), subscribed_topic_names=("bar",)
            )
        request = ConsumerGroupHeartbeatRequest(group, member, epoch, **fields)
        _corr, (response,) = d.send("C", request)
        collect(group)
        return response

    def delete(group: str) -> Errors:
        _corr, (response,) = d.send("X", DeleteGroupsRequest((group,)), d.coordinator(group))
        collect(group)
        return response.results[0].error_code

    ok = Errors.NONE
    assert cgh("g", "m", 0).member_epoch == 1
    commits = d.commit("C", "m", 1, {("foo", 0): 5, ("bar", 0): 7}, "g")
    assert commits == {("foo", 0): ok, ("bar", 0): ok}
    collect("g")
    assert txn_commit(d, {("foo", 1): 9}, group_id="g", member_id="m", generation=1) == {
        ("foo", 1): ok
    }
    collect("g")
    stale = txn_commit(
        d, {("foo", 1): 9}, group_id="g", producer_id=11, member_id="m", generation=99
    )
    assert stale == {("foo", 1): Errors.ILLEGAL_GENERATION}
    unknown = txn_commit(
        d, {("foo", 1): 9}, group_id="g", producer_id=12, member_id="x", generation=1, version=3
    )
    assert unknown == {("foo", 1): Errors.UNKNOWN_MEMBER_ID}
    assert end_txn(d, 10, commit=True, group_id="g") == ok
    collect("g")
    assert delete("g") == Errors.NON_EMPTY_GROUP
    d.advance(30000)
    collect("g")
    assert cgh("g", "m", 1).error_code == ok
    d.advance(61000)
    collect("g")
    assert cgh("g", "m", -1).member_epoch == -1
    assert txn_commit(d, {("foo", 0): 3}, group_id="g", producer_id=13) == {("foo", 0): ok}
    collect("g")
    assert end_txn(d, 13, commit=True, group_id="g") == ok
    collect("g")
    d.advance(122000)
    collect("g")
    assert d.shard("g").consumer_group_manager.groups.get("g") is None
    assert "g" not in d.shard("g").group_manager.groups
    assert cgh("h", "n", 0).member_epoch == 1
    assert cgh("h", "n", -1).member_epoch == -1
    assert delete("h") == ok
    assert d.shard("h").consumer_group_manager.groups.get("h") is None
    assert writes == ORACLE_WRITES
