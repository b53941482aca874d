"""Mixed groups and online migration through KafkaCluster: ports of the classic/consumer migration
tests of Kafka's GroupMetadataManagerTest (and ConsumerGroupTest's classic-member checks) at
1eb7644. Each test names its Kafka original.

Kafka's tests build groups by replaying hand-made records and use a mock assignor; these drive
real JoinGroup/SyncGroup/Heartbeat/LeaveGroup and ConsumerGroupHeartbeat requests (with real
ConsumerProtocol bytes) through the cluster and the real ``range`` assignor, and assert what the
originals assert: errors, records (by type and order), epochs, member states, timers, the group's
type after the request.

Where an original prepares its target assignment with Kafka's MockPartitionAssignor, the port
registers one (``mock_assignor``: the same prepared assignment, keyed by the member ids the
cluster generated) under the name ``range``.

Left out (and why): the metrics assertions (no Kafka metrics); the snapshot-rollback halves
(``context.rollback()``: a failed write here never changes state, tested by
testJoiningConsumerGroupFailingToPersistRecords).
"""

from __future__ import annotations

from assignors.api import Subscription, TopicPartition
from coordinator.assignor.api import GroupSpec
from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import ConsumerGroupState, MemberState
from coordinator.consumer_protocol import decode_version
from coordinator.errors import Errors
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
    MemberIdentity,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
)
from coordinator.records import (
    TopicPartitionsRecord,
)
from members.consumer_protocol import decode_assignment, encode_assignment, encode_subscription
from tests.coordinator.harness import Driver
from tests.coordinator.mock_assignor import MockPartitionAssignor

G = "group-id"


def config(**kw) -> CoordinatorConfig:
    kw.setdefault("group_initial_rebalance_delay_ms", 0)
    kw.setdefault("group_min_session_timeout_ms", 10)
    kw.setdefault("load_time_ms", 0)
    kw.setdefault("group_consumer_assignors", ("range",))
    return CoordinatorConfig(**kw)


def sub(*topics: str, owned: tuple[TopicPartition, ...] = (), version: int = 3) -> bytes:
    return encode_subscription(Subscription(topics, owned_partitions=owned), version)


def asg(*partitions: tuple[str, int], version: int = 3) -> bytes:
    return encode_assignment([TopicPartition(t, p) for t, p in partitions], version=version)


class Mixed(Driver):
    """The classic Driver plus ConsumerGroupHeartbeat and the two group types' insides."""

    def __init__(self, topics: dict[str, int] | None = None, **kw) -> None:
        super().__init__(config(**kw), topics=topics or {"foo": 2, "bar": 2})

    def cgh(
        self,
        client: str,
        member_id: str = "",
        epoch: int = 0,
        topics: tuple[str, ...] | None = ("foo", "bar"),
        **fields,
    ) -> ConsumerGroupHeartbeatResponse:
        if epoch == 0:
            fields.setdefault("rebalance_timeout_ms", 5000)
            fields.setdefault("topic_partitions", ())
        request = ConsumerGroupHeartbeatRequest(
            G, member_id, epoch, subscribed_topic_names=topics, **fields
        )
        _corr, got = self.send(client, request)
        assert len(got) == 1
        return got[0]

    def consumer(self):
        return self.shard(G).consumer_group_manager.groups.get(G)

    def classic(self):
        return self.shard(G).group_manager.groups.get(G)

    def record_types(self, since: int = 0) -> list[tuple[str, bool]]:
        return [
            (e["record_type"], e["tombstone"])
            for e in self.named("record_appended")[since:]
            if e["group_id"] == G
        ]

    def stable_classic(
        self, assignment: dict[str, tuple[tuple[str, int], ...]], topics=("foo", "bar"), **kw
    ) -> tuple[dict[str, str], int]:
        """A Stable classic group: each client joins with ``topics``, the leader syncs
        ``assignment`` (client -> its partitions) as ConsumerProtocol bytes."""
        ids, corrs = {}, {}
        for c in assignment:
            ids[c], corrs[c] = self.join_dynamic(c, G, metadata=sub(*topics), **kw)
        self.complete_join(G)
        first = self.response(next(iter(assignment)), corrs[next(iter(assignment))])
        gen = first.generation_id
        leader = self.cluster.group(G).leader_id
        for c in assignment:
            plan = {ids[k]: asg(*v) for k, v in assignment.items()} if ids[c] == leader else None
            self.sync(c, ids[c], gen, G, assignments=plan, protocol_name="range")
        assert self.state(G) == "Stable"
        return ids, gen

    def mixed(self, **kw) -> tuple[dict[str, str], str, int]:
        """A consumer group of two classic members (upgraded from a Stable classic group) and
        one consumer-protocol member; returns (classic ids, consumer member id, its epoch)."""
        ids, _ = self.stable_classic(
            {"A": (("foo", 0), ("bar", 0)), "B": (("foo", 1), ("bar", 1))}, **kw
        )
        response = self.cgh("C")
        assert response.error_code == Errors.NONE
        return ids, response.member_id, response.member_epoch

    def classic_rejoin(self, client: str, member_id: str, topics=("foo", "bar"), owned=(), **kw):
        corr = self.join(client, G, member_id, metadata=sub(*topics, owned=owned), **kw)
        return self.response(client, corr)

    def tid(self, topic: str):
        return self.cluster.topology.topic_ids[topic]

    def parts(self, **partitions: tuple[int, ...]) -> dict:
        """``mkAssignment(mkTopicAssignment(...))``: topic id -> partitions."""
        return {self.tid(t): frozenset(ps) for t, ps in partitions.items()}

    def written(self, since: int) -> list[tuple[str, str | None, object]]:
        """The group's records from log position ``since``: (key type, member id, value)."""
        return [
            (type(r.key).__name__, getattr(r.key, "member_id", None), r.value)
            for r in self.records(G)[since:]
        ]

    def static_classic(
        self,
        client: str,
        instance_id: str,
        owned: tuple[tuple[str, int], ...],
        topics=("foo",),
        **kw,
    ) -> tuple[str, int]:
        """A Stable classic group of one static member that owns ``owned``."""
        tps = tuple(TopicPartition(t, p) for t, p in owned)
        corr = self.join(client, G, metadata=sub(*topics, owned=tps), instance_id=instance_id, **kw)
        self.complete_join(G)
        joined = self.response(client, corr)
        assert joined.error_code == Errors.NONE, joined
        member_id, gen = joined.member_id, joined.generation_id
        self.sync(client, member_id, gen, G, assignments={member_id: asg(*owned)})
        assert self.state(G) == "Stable"
        return member_id, gen


def partitions_record(h: Mixed, **partitions: tuple[int, ...]) -> set[TopicPartitionsRecord]:
    return {TopicPartitionsRecord(h.tid(t), ps) for t, ps in partitions.items()}


def test_consumer_group_heartbeat_with_non_empty_classic_group():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatWithNonEmptyClassicGroup: a classic
    group that does not use the consumer embedded protocol is not upgraded."""
    h = Mixed()
    h.join_dynamic("A", G, protocol_type="connect")
    response = h.cgh("C")
    assert (response.error_code, response.error_message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Group {G} is not a consumer group",
    )
    assert h.consumer() is None and h.classic() is not None


def test_classic_group_join_with_empty_consumer_group():
    """GroupMetadataManagerTest.testClassicGroupJoinWithEmptyConsumerGroup: the empty consumer
    group gives way; its tombstones go out with the new classic group's first record."""
    h = Mixed()
    member_id = h.cgh("C").member_id
    h.cgh("C", member_id, -1)
    assert h.consumer() is not None and h.consumer().is_empty()
    before = len(h.named("record_appended"))
    corr = h.join("A", G, metadata=sub("foo"))
    assert h.response("A", corr).error_code == Errors.MEMBER_ID_REQUIRED
    assert h.record_types(before) == [
        ("ConsumerGroupTargetAssignmentMetadata", True),
        ("ConsumerGroupPartitionMetadata", True),
        ("ConsumerGroupMetadata", True),
        ("GroupMetadata", False),
    ]
    assert h.consumer() is None and h.classic() is not None


def test_consumer_group_heartbeat_with_stable_classic_group():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatWithStableClassicGroup: the classic
    group's tombstone, the converted group's records (members at the generation, their classic
    assignment as target and current), then the joining member's records; the classic members
    keep their own session timeouts."""
    h = Mixed()
    ids, gen = h.stable_classic(
        {"A": (("foo", 0), ("bar", 0)), "B": (("foo", 1), ("bar", 1))}, session=5000
    )
    before = len(h.named("record_appended"))
    response = h.cgh("C")
    assert response.error_code == Errors.NONE
    assert response.member_epoch == gen + 1
    types = h.record_types(before)
    assert types[:9] == [
        ("GroupMetadata", True),
        ("ConsumerGroupMemberMetadata", False),
        ("ConsumerGroupMemberMetadata", False),
        ("ConsumerGroupMetadata", False),
        ("ConsumerGroupTargetAssignmentMember", False),
        ("ConsumerGroupTargetAssignmentMember", False),
        ("ConsumerGroupTargetAssignmentMetadata", False),
        ("ConsumerGroupCurrentMemberAssignment", False),
        ("ConsumerGroupCurrentMemberAssignment", False),
    ]
    assert types[9:12] == [
        ("ConsumerGroupMemberMetadata", False),
        ("ConsumerGroupPartitionMetadata", False),
        ("ConsumerGroupMetadata", False),
    ]
    group = h.consumer()
    assert h.classic() is None and group is not None
    assert (group.group_epoch, group.target_assignment_epoch) == (gen + 1, gen + 1)
    a = group.members[ids["A"]]
    assert a.use_classic_protocol and a.classic_protocol_session_timeout == 5000
    assert (a.member_epoch, a.state) == (gen, MemberState.STABLE)
    foo, bar = h.cluster.topology.topic_ids["foo"], h.cluster.topology.topic_ids["bar"]
    assert a.assigned_partitions == {foo: frozenset({0}), bar: frozenset({0})}
    c = group.members[response.member_id]
    assert not c.use_classic_protocol and c.member_epoch == gen + 1
    assert h.deadline(f"session-timeout-{G}-{ids['A']}") == h.now + 5000
    assert h.deadline(f"session-timeout-{G}-{response.member_id}") == h.now + 45000
    assert h.named("group_upgraded")[0]["members"] == 2


def test_consumer_group_heartbeat_with_preparing_rebalance_classic_group():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatWithPreparingRebalanceClassicGroup:
    the parked JoinGroups are answered REBALANCE_IN_PROGRESS by the upgrade."""
    h = Mixed()
    ids, _gen = h.stable_classic({"A": (("foo", 0), ("bar", 0)), "B": (("foo", 1), ("bar", 1))})
    corr = h.join("A", G, ids["A"], metadata=sub("foo", "bar"))  # A rejoins: PreparingRebalance
    assert h.state(G) == "PreparingRebalance" and h.response("A", corr) is None
    assert h.cgh("C").error_code == Errors.NONE
    assert h.response("A", corr).error_code == Errors.REBALANCE_IN_PROGRESS
    assert h.consumer() is not None and h.classic() is None


def test_consumer_group_heartbeat_with_completing_rebalance_classic_group():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatWithCompletingRebalanceClassicGroup:
    a parked SyncGroup is answered REBALANCE_IN_PROGRESS by the upgrade."""
    h = Mixed()
    ids, _ = h.stable_classic({"A": (("foo", 0), ("bar", 0)), "B": (("foo", 1), ("bar", 1))})
    corrs = {c: h.join(c, G, ids[c], metadata=sub("foo", "bar")) for c in ("A", "B")}
    gen = h.response("A", corrs["A"]).generation_id
    follower = "A" if h.cluster.group(G).leader_id != ids["A"] else "B"
    corr = h.sync(follower, ids[follower], gen, G)
    assert h.state(G) == "CompletingRebalance" and h.response(follower, corr) is None
    assert h.cgh("C").error_code == Errors.NONE
    assert h.response(follower, corr).error_code == Errors.REBALANCE_IN_PROGRESS


def test_first_generation_without_assignment_cannot_be_upgraded():
    """convertToConsumerGroup's SchemaException: a classic group still in its first
    CompletingRebalance has no assignment bytes to convert (an empty buffer does not parse as a
    ConsumerProtocolAssignment), so the ConsumerGroupHeartbeat gets GROUP_ID_NOT_FOUND."""
    h = Mixed()
    for c in ("A", "B"):
        h.join_dynamic(c, G, metadata=sub("foo", "bar"))
    h.complete_join(G)
    assert h.state(G) == "CompletingRebalance"
    response = h.cgh("C")
    assert (response.error_code, response.error_message) == (
        Errors.GROUP_ID_NOT_FOUND,
        f"Cannot upgrade the classic group {G} to consumer group because the embedded consumer "
        "protocol is malformed.",
    )
    assert h.classic() is not None


def test_no_conversion_when_size_exceeds_consumer_max_size():
    """GroupMetadataManagerTest.testNoConversionWhenSizeExceedsClassicMaxGroupSize (the upgrade
    half, validateOnlineUpgrade): a classic group larger than group.consumer.max.size stays."""
    h = Mixed(group_consumer_max_size=1)
    h.stable_classic({"A": (("foo", 0),), "B": (("foo", 1),)}, topics=("foo",))
    response = h.cgh("C")
    assert response.error_code == Errors.GROUP_ID_NOT_FOUND
    assert h.classic() is not None and h.consumer() is None


def test_upgrade_disabled_by_the_migration_policy():
    """validateOnlineUpgrade with ConsumerGroupMigrationPolicy DISABLED / DOWNGRADE (Kafka's
    tests run the upgrade with UPGRADE or BIDIRECTIONAL): no upgrade, GROUP_ID_NOT_FOUND."""
    for policy in ("disabled", "downgrade"):
        h = Mixed(group_consumer_migration_policy=policy)
        h.stable_classic({"A": (("foo", 0),)}, topics=("foo",))
        response = h.cgh("C")
        assert (response.error_code, response.error_message) == (
            Errors.GROUP_ID_NOT_FOUND,
            f"Group {G} is not a consumer group",
        )
        assert h.classic() is not None


def test_classic_member_heartbeat_asks_to_rejoin_after_upgrade():
    """GroupMetadataManagerTest.testClassicGroupHeartbeatToConsumerGroupRebalanceInProgress: a
    classic member behind the group epoch is told to rejoin, and gets a join timer."""
    h = Mixed()
    ids, _c, _ = h.mixed()
    group = h.consumer()
    a = group.members[ids["A"]]
    assert h.heartbeat("A", ids["A"], a.member_epoch, G) == Errors.REBALANCE_IN_PROGRESS
    assert h.deadline(f"join-{G}-{ids['A']}") == h.now + a.rebalance_timeout_ms


def test_classic_group_heartbeat_to_consumer_group_maintains_session():
    """GroupMetadataManagerTest.testClassicGroupHeartbeatToConsumerGroupMaintainsSession."""
    h = Mixed()
    ids, gen = h.stable_classic({"A": (("foo", 0), ("bar", 0))}, session=5000)
    h.cgh("C")
    h.advance(h.now + 4000)
    h.heartbeat("A", ids["A"], gen, G)
    assert h.deadline(f"session-timeout-{G}-{ids['A']}") == h.now + 5000


def test_classic_group_heartbeat_errors():
    """GroupMetadataManagerTest.testClassicGroupHeartbeatToConsumerWithUnknownMember,
    testClassicGroupHeartbeatToConsumerWithFencedInstanceId,
    testClassicGroupHeartbeatToConsumerWithIllegalGenerationId,
    testClassicGroupHeartbeatToConsumerWithMemberNotUsingClassicProtocol."""
    h = Mixed()
    ids, c, c_epoch = h.mixed()
    gen = h.consumer().members[ids["A"]].member_epoch
    assert h.heartbeat("X", "unknown", gen, G) == Errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat("A", ids["A"], gen + 7, G) == Errors.ILLEGAL_GENERATION
    assert h.heartbeat("C", c, c_epoch, G) == Errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat("A", ids["A"], gen, G, instance_id="nope") == Errors.UNKNOWN_MEMBER_ID


def test_joining_consumer_group_throws_exception_if_protocol_is_not_supported():
    """GroupMetadataManagerTest.testJoiningConsumerGroupThrowsExceptionIfProtocolIsNotSupported."""
    h = Mixed()
    h.mixed()
    corr = h.join("D", G, metadata=sub("foo"), names=("roundrobin",))
    assert h.response("D", corr).error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    corr = h.join("D", G, metadata=sub("foo"), protocol_type="connect")
    assert h.response("D", corr).error_code == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_joining_consumer_group_with_new_dynamic_member():
    """GroupMetadataManagerTest.testJoiningConsumerGroupWithNewDynamicMember: MEMBER_ID_REQUIRED,
    then the member's records (subscription with classic metadata, epoch bump, target), the
    answer after the write (member epoch as generation, no leader), session and sync timers."""
    h = Mixed()
    h.mixed()
    first = h.response("D", h.join("D", G, metadata=sub("foo", "bar"), session=7000))
    assert first.error_code == Errors.MEMBER_ID_REQUIRED
    before = len(h.named("record_appended"))
    epoch_before = h.consumer().group_epoch
    answer = h.classic_rejoin("D", first.member_id, session=7000, rebalance=9000)
    assert answer.error_code == Errors.NONE
    assert (answer.generation_id, answer.protocol_type, answer.protocol_name, answer.leader) == (
        epoch_before + 1,
        "consumer",
        "range",
        "",
    )
    assert h.record_types(before)[:2] == [
        ("ConsumerGroupMemberMetadata", False),
        ("ConsumerGroupMetadata", False),
    ]
    member = h.consumer().members[first.member_id]
    assert member.use_classic_protocol and member.classic_protocol_session_timeout == 7000
    assert h.deadline(f"session-timeout-{G}-{first.member_id}") == h.now + 7000
    assert h.deadline(f"sync-{G}-{first.member_id}") == h.now + 9000


def test_joining_consumer_group_failing_to_persist_records():
    """GroupMetadataManagerTest.testJoiningConsumerGroupFailingToPersistRecords: the JoinGroup
    gets the mapped write error and the group is unchanged."""
    h = Mixed()
    h.mixed()
    first = h.response("D", h.join("D", G, metadata=sub("foo")))
    epoch = h.consumer().group_epoch
    h.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    answer = h.classic_rejoin("D", first.member_id, topics=("foo",))
    assert answer.error_code == Errors.NOT_COORDINATOR
    assert first.member_id not in h.consumer().members
    assert h.consumer().group_epoch == epoch


def test_reconciliation_in_joining_consumer_group_with_eager_protocol():
    """GroupMetadataManagerTest.testReconciliationInJoiningConsumerGroupWithEagerProtocol (its
    shape): an eager classic member rejoins owning nothing, so its revocations complete at
    once; it syncs and gets its new assignment in its subscription's version."""
    h = Mixed()
    ids, _c, _ = h.mixed()
    group = h.consumer()
    answer = h.classic_rejoin("A", ids["A"])
    assert answer.error_code == Errors.NONE
    a = h.consumer().members[ids["A"]]
    assert a.member_epoch == group.group_epoch and answer.generation_id == a.member_epoch
    corr = h.sync("A", ids["A"], a.member_epoch, G)
    synced = h.response("A", corr)
    assert synced.error_code == Errors.NONE
    got = {(tp.topic, tp.partition) for tp in decode_assignment(synced.assignment)[0]}
    foo, bar = h.cluster.topology.topic_ids["foo"], h.cluster.topology.topic_ids["bar"]
    ids_to_name = {foo: "foo", bar: "bar"}
    expected = {(ids_to_name[t], p) for t, ps in a.assigned_partitions.items() for p in ps}
    assert got == expected
    assert h.deadline(f"sync-{G}-{ids['A']}") is None


def test_classic_group_sync_to_consumer_group_errors():
    """GroupMetadataManagerTest.testClassicGroupSyncToConsumerGroupWithUnknownMemberId,
    testClassicGroupSyncToConsumerGroupWithFencedInstanceId,
    testClassicGroupSyncToConsumerGroupWithInconsistentGroupProtocol,
    testClassicGroupSyncToConsumerGroupWithIllegalGeneration and
    testClassicGroupSyncToConsumerGroupRebalanceInProgress."""
    h = Mixed()
    ids, c, c_epoch = h.mixed()
    a = h.consumer().members[ids["A"]]

    def sync(member_id, gen, **kw):
        return h.response("A", h.sync("A", member_id, gen, G, **kw)).error_code

    assert sync("unknown", a.member_epoch) == Errors.UNKNOWN_MEMBER_ID
    assert sync(c, c_epoch) == Errors.UNKNOWN_MEMBER_ID  # does not use the classic protocol
    assert sync(ids["A"], a.member_epoch + 3) == Errors.ILLEGAL_GENERATION
    assert sync(ids["A"], a.member_epoch, protocol_type="connect") == (
        Errors.INCONSISTENT_GROUP_PROTOCOL
    )
    assert sync(ids["A"], a.member_epoch, protocol_name="roundrobin") == (
        Errors.INCONSISTENT_GROUP_PROTOCOL
    )
    assert sync(ids["A"], a.member_epoch, instance_id="i") == Errors.UNKNOWN_MEMBER_ID
    # the group epoch moved past A: rejoin first
    assert sync(ids["A"], a.member_epoch) == Errors.REBALANCE_IN_PROGRESS
    assert h.deadline(f"join-{G}-{ids['A']}") is not None


def test_consumer_group_member_using_classic_protocol_fenced_when_session_timeout():
    """GroupMetadataManagerTest
    .testConsumerGroupMemberUsingClassicProtocolFencedWhenSessionTimeout: its own session timeout fences it (tombstones, epoch bump)."""
    h = Mixed()
    ids, gen = h.stable_classic({"A": (("foo", 0),), "B": (("foo", 1),)}, topics=("foo",))
    c = h.cgh("C", topics=("foo",))
    # keep B and C alive; A goes silent
    session = h.consumer().members[ids["A"]].classic_protocol_session_timeout
    h.advance(h.now + session - 1)
    h.cgh("C", c.member_id, c.member_epoch, topics=None)
    h.heartbeat("B", ids["B"], gen, G)
    h.advance(h.now + 1)
    removed = h.named("consumer_group_member_removed")
    assert [e["member_id"] for e in removed] == [ids["A"]]
    assert removed[0]["reason"] == "the member session expired."
    assert ids["A"] not in h.consumer().members


def test_consumer_group_member_using_classic_protocol_fenced_when_join_timeout():
    """GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolFencedWhenJoinTimeout."""
    h = Mixed()
    ids, _c, _ = h.mixed(rebalance=3000)
    a = h.consumer().members[ids["A"]]
    h.heartbeat("A", ids["A"], a.member_epoch, G)  # REBALANCE_IN_PROGRESS: the join timer starts
    h.advance(h.now + a.rebalance_timeout_ms)
    reasons = {e["member_id"]: e["reason"] for e in h.named("consumer_group_member_removed")}
    assert reasons[ids["A"]] == "the classic member failed to join within the rebalance timeout."


def test_consumer_group_member_using_classic_protocol_batch_leave_group():
    """GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolBatchLeaveGroup and
    testClassicGroupLeaveToConsumerGroupWithoutValidLeaveGroupMember: each classic member
    leaves (the consumer-protocol one cannot use LeaveGroup); one epoch bump for all."""
    h = Mixed()
    ids, c, _ = h.mixed()
    epoch = h.consumer().group_epoch
    answer = h.leave(
        "A",
        MemberIdentity(ids["A"]),
        MemberIdentity(ids["B"]),
        MemberIdentity(c),
        MemberIdentity("unknown"),
        group_id=G,
    )
    assert [m.error_code for m in answer.members] == [
        Errors.NONE,
        Errors.NONE,
        Errors.UNKNOWN_MEMBER_ID,
        Errors.UNKNOWN_MEMBER_ID,
    ]
    group = h.consumer()
    assert set(group.members) == {c} and group.group_epoch == epoch + 1
    nothing = h.leave("A", MemberIdentity("unknown"), group_id=G)
    assert [m.error_code for m in nothing.members] == [Errors.UNKNOWN_MEMBER_ID]
    assert h.consumer().group_epoch == epoch + 1  # no valid member: nothing written


def test_last_consumer_protocol_member_leaving_consumer_group():
    """GroupMetadataManagerTest.testLastConsumerProtocolMemberLeavingConsumerGroup: the group's
    tombstones and a classic group record at the group epoch; the classic group (Stable with
    every classic member and its target assignment) starts a rebalance; sessions restart."""
    h = Mixed()
    ids, c, _c_epoch = h.mixed()
    group = h.consumer()
    epoch = group.group_epoch
    before = len(h.named("record_appended"))
    answer = h.cgh("C", c, -1, topics=None)
    assert (answer.error_code, answer.member_epoch) == (Errors.NONE, -1)
    types = h.record_types(before)
    assert types[-1] == ("GroupMetadata", False)
    assert types[-3:-1] == [
        ("ConsumerGroupPartitionMetadata", True),
        ("ConsumerGroupMetadata", True),
    ]
    assert all(tombstone for _t, tombstone in types[:-1])
    assert h.consumer() is None
    classic = h.classic()
    assert classic is not None and classic.state == "PreparingRebalance"
    assert classic.generation_id == epoch and classic.protocol_type == "consumer"
    assert set(classic.members) == set(ids.values())
    record = h.records(G)[-1].value
    assert {m.member_id for m in record.members} == set(ids.values())
    for member_id in ids.values():
        assert h.deadline(f"heartbeat-{G}-{member_id}") is not None
    assert h.named("group_downgraded")[0]["members"] == 2


def test_last_consumer_protocol_member_session_timeout_in_consumer_group():
    """GroupMetadataManagerTest.testLastConsumerProtocolMemberSessionTimeoutInConsumerGroup."""
    h = Mixed()
    ids, _c, _ = h.mixed(session=60_000, rebalance=90_000)
    h.advance(h.now + 44_999)
    for c in ("A", "B"):  # the classic members keep their sessions (their own timeouts)
        h.heartbeat(c, ids[c], h.consumer().members[ids[c]].member_epoch, G)
    h.advance(h.now + 1)
    assert h.consumer() is None and h.classic() is not None
    assert h.named("group_downgraded")


def test_downgrade_disabled_by_the_migration_policy():
    """validateOnlineDowngradeWithFencedMember with the downgrade disabled (UPGRADE): the last
    consumer-protocol member leaves, the group stays a consumer group of classic members."""
    h = Mixed(group_consumer_migration_policy="upgrade")
    ids, c, _ = h.mixed()
    h.cgh("C", c, -1, topics=None)
    group = h.consumer()
    assert group is not None and set(group.members) == set(ids.values())
    assert group.num_classic_protocol_members == 2 and h.classic() is None


def test_no_conversion_when_size_exceeds_classic_max_group_size():
    """GroupMetadataManagerTest.testNoConversionWhenSizeExceedsClassicMaxGroupSize: the classic
    members left would exceed group.max.size: no downgrade."""
    h = Mixed(group_max_size=1)
    c = h.cgh("C").member_id
    for client in ("A", "B"):  # classic members join the consumer group (no classic size limit)
        first = h.response(client, h.join(client, G, metadata=sub("foo", "bar")))
        assert h.classic_rejoin(client, first.member_id).error_code == Errors.NONE
    assert h.consumer().num_classic_protocol_members == 2
    h.cgh("C", c, -1, topics=None)
    assert h.consumer() is not None and h.classic() is None


def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member():
    """GroupMetadataManagerTest
    .testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember: a classic JoinGroup with the instance id of the last consumer-protocol (static)
    member replaces it and downgrades the group at once (no rebalance); the joining member is
    answered with its epoch and takes the replaced member's assignment."""
    h = Mixed()
    _ids, _ = h.stable_classic({"A": (("foo", 0), ("bar", 0)), "B": (("foo", 1), ("bar", 1))})
    c = h.cgh("C", instance_id="instance-c")
    assert c.error_code == Errors.NONE
    corr = h.join("C2", G, "", metadata=sub("foo", "bar"), instance_id="instance-c")
    answer = h.response("C2", corr)
    assert answer.error_code == Errors.NONE, answer
    classic = h.classic()
    assert h.consumer() is None and classic is not None
    assert classic.state == "Stable"
    assert answer.member_id in classic.members and c.member_id not in classic.members
    assert classic.static_members["instance-c"] == answer.member_id


def test_classic_member_offset_commit_in_consumer_group():
    """ConsumerGroupTest.testValidateOffsetCommit (the classic-member half): a classic member
    commits with its generation (its member epoch); any other gets ILLEGAL_GENERATION, not
    STALE_MEMBER_EPOCH, and old OffsetCommit versions are accepted from it."""
    h = Mixed()
    ids, c, c_epoch = h.mixed()
    a = h.consumer().members[ids["A"]]
    assert h.commit("A", ids["A"], a.member_epoch, {("foo", 0): 5}, G, version=8) == {
        ("foo", 0): Errors.NONE
    }
    assert h.commit("A", ids["A"], a.member_epoch + 1, {("foo", 0): 5}, G) == {
        ("foo", 0): Errors.ILLEGAL_GENERATION
    }
    assert h.commit("C", c, c_epoch + 1, {("foo", 0): 5}, G) == {
        ("foo", 0): Errors.STALE_MEMBER_EPOCH
    }


def test_a_mixed_group_survives_failover():
    """The records of a mixed group (classic member metadata) replay on the next coordinator:
    the same members, protocols and session timeouts."""
    h = Mixed()
    _ids, _c, _ = h.mixed()
    before = {m.member_id: m for m in h.consumer().members.values()}
    h.reload(G)
    after = h.consumer()
    assert after is not None and after.state in (
        ConsumerGroupState.ASSIGNING,
        ConsumerGroupState.RECONCILING,
        ConsumerGroupState.STABLE,
    )
    for member_id, member in before.items():
        assert after.members[member_id].classic_member_metadata == member.classic_member_metadata


def test_consumer_group_heartbeat_to_classic_group_from_existing_static_member():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatToClassicGroupFromExistingStaticMember:
    a classic group's only (static) member comes back with a ConsumerGroupHeartbeat and its
    instance id. The classic group's tombstone; the converted group (the classic member at the
    generation); the replacement (the old member's tombstones, the new member copied from it at
    epoch 0 with its target); then the heartbeat (its own subscription, partition metadata, an
    epoch bump, the target) and the new member takes its predecessor's partitions at once.
    Kafka's hand-made classic group is at generation 0; this one, built by a real rebalance, is
    at ``gen``, so every epoch here is Kafka's plus ``gen``."""
    h = Mixed(topics={"foo": 1}, group_consumer_migration_policy="upgrade")
    old, gen = h.static_classic("A", "instance-id", (("foo", 0),), session=5000, rebalance=10000)
    since = len(h.records(G))
    response = h.cgh("C", instance_id="instance-id", topics=("foo",), server_assignor="range")
    assert response.error_code == Errors.NONE
    new = response.member_id
    assert new != old and response.member_epoch == gen + 1
    written = h.written(since)
    assert [(kind, member) for kind, member, _ in written] == [
        ("GroupMetadataKey", None),
        ("ConsumerGroupMemberMetadataKey", old),
        ("ConsumerGroupMetadataKey", None),
        ("ConsumerGroupTargetAssignmentMemberKey", old),
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupCurrentMemberAssignmentKey", old),
        ("ConsumerGroupCurrentMemberAssignmentKey", old),
        ("ConsumerGroupTargetAssignmentMemberKey", old),
        ("ConsumerGroupMemberMetadataKey", old),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupTargetAssignmentMemberKey", new),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
        ("ConsumerGroupTargetAssignmentMemberKey", new),
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
    ]
    values = [value for _, _, value in written]
    assert values[0] is None and values[6] is values[7] is values[8] is None
    classic_member = values[1]
    assert (classic_member.instance_id, classic_member.rebalance_timeout_ms) == (
        "instance-id",
        10000,
    )
    assert classic_member.server_assignor is None
    assert classic_member.classic_member_metadata.session_timeout_ms == 5000
    assert (values[2].epoch, values[4].assignment_epoch) == (gen, gen)
    foo0 = partitions_record(h, foo=(0,))
    assert set(values[3].topic_partitions) == foo0
    assert (values[5].member_epoch, values[5].previous_member_epoch) == (gen, gen)
    # the replacing member: the classic member's fields under the new id, epoch 0, STABLE
    replacing = values[9]
    assert replacing == classic_member
    assert set(values[10].topic_partitions) == foo0
    current = values[11]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (0, 0, 0)
    assert set(current.assigned_partitions) == foo0
    # the heartbeat: its rebalance timeout and assignor, no classic metadata any more
    final = values[12]
    assert (final.instance_id, final.rebalance_timeout_ms, final.server_assignor) == (
        "instance-id",
        5000,
        "range",
    )
    assert final.classic_member_metadata is None
    assert [(t.topic_name, t.num_partitions) for t in values[13].topics] == [("foo", 1)]
    assert (values[14].epoch, values[16].assignment_epoch) == (gen + 1, gen + 1)
    assert set(values[15].topic_partitions) == foo0
    last = values[17]
    assert (last.member_epoch, last.previous_member_epoch, last.state) == (gen + 1, 0, 0)
    assert set(last.assigned_partitions) == foo0
    assert h.deadline(f"session-timeout-{G}-{new}") == h.now + 45000


def test_consumer_group_heartbeat_from_existing_classic_static_member():
    """GroupMetadataManagerTest.testConsumerGroupHeartbeatFromExistingClassicStaticMember: in a
    consumer group of two static members (one classic, one consumer-protocol, both Stable at the
    group epoch), the classic one comes back with a ConsumerGroupHeartbeat: its tombstones, the
    replacement copied from it at epoch 0, then its new subscription (no epoch bump: the topics
    are the same) and its partitions at the group epoch, previous epoch 0."""
    h = Mixed(topics={"foo": 6, "bar": 3}, group_consumer_migration_policy="upgrade")
    owned = (("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1))
    old, _ = h.static_classic(
        "A", "instance-id-1", owned, topics=("foo", "bar"), session=5000, rebalance=45000
    )
    c = h.cgh("C", instance_id="instance-id-2", server_assignor="range")
    h.cgh("C", c.member_id, c.member_epoch, topics=None)
    # the classic member catches up with the group epoch (same subscription, same partitions)
    tps = tuple(TopicPartition(t, p) for t, p in owned)
    joined = h.classic_rejoin(
        "A", old, owned=tps, instance_id="instance-id-1", session=5000, rebalance=45000
    )
    h.sync("A", old, joined.generation_id, G, instance_id="instance-id-1")
    group = h.consumer()
    epoch = group.group_epoch
    assert {m.member_epoch for m in group.members.values()} == {epoch}
    assert {m.state for m in group.members.values()} == {MemberState.STABLE}
    member1 = group.members[old]
    since = len(h.records(G))
    response = h.cgh(
        "A", instance_id="instance-id-1", topics=("foo", "bar"), server_assignor="range"
    )
    assert (response.error_code, response.member_epoch) == (Errors.NONE, epoch)
    new = response.member_id
    written = h.written(since)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupCurrentMemberAssignmentKey", old),
        ("ConsumerGroupTargetAssignmentMemberKey", old),
        ("ConsumerGroupMemberMetadataKey", old),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupTargetAssignmentMemberKey", new),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
    ]
    values = [value for _, _, value in written]
    assert values[:3] == [None, None, None]
    assigned = partitions_record(h, foo=(0, 1, 2), bar=(0, 1))
    replacing = values[3]
    assert (replacing.instance_id, replacing.client_id, replacing.rebalance_timeout_ms) == (
        "instance-id-1",
        member1.client_id,
        45000,
    )
    assert replacing.classic_member_metadata == member1.classic_member_metadata
    assert set(values[4].topic_partitions) == assigned
    assert (values[5].member_epoch, values[5].previous_member_epoch, values[5].state) == (0, 0, 0)
    assert set(values[5].assigned_partitions) == assigned
    final = values[6]
    assert (final.rebalance_timeout_ms, final.classic_member_metadata) == (5000, None)
    assert (values[7].member_epoch, values[7].previous_member_epoch, values[7].state) == (
        epoch,
        0,
        0,
    )
    assert set(values[7].assigned_partitions) == assigned
    assert h.consumer().group_epoch == epoch
    assert old not in h.consumer().members
    assert h.deadline(f"session-timeout-{G}-{new}") == h.now + 45000


def mock_group(h: Mixed, mock: MockPartitionAssignor, instance_id: str | None = None):
    """Kafka's hand-built group of these tests, by real requests: classic member A (foo-0,
    bar-0) and consumer-protocol member C (foo-1), both Stable at the group epoch; returns
    (A's id, C's id, the group epoch)."""
    owned = (("foo", 0), ("bar", 0))
    if instance_id is None:
        ids, _ = h.stable_classic({"A": owned}, session=500, rebalance=500)
        a = ids["A"]
    else:
        a, _ = h.static_classic(
            "A", instance_id, owned, topics=("foo", "bar"), session=500, rebalance=500
        )
    mock.prepared = lambda spec: {
        m: h.parts(foo=(0,), bar=(0,)) if m == a else h.parts(foo=(1,)) for m in spec.member_ids()
    }
    c = h.cgh("C")
    h.cgh("C", c.member_id, c.member_epoch, topics=None)
    tps = tuple(TopicPartition(t, p) for t, p in owned)
    joined = h.classic_rejoin("A", a, owned=tps, session=500, rebalance=500)
    h.sync("A", a, joined.generation_id, G)
    group = h.consumer()
    epoch = group.group_epoch
    assert {m.member_epoch for m in group.members.values()} == {epoch}
    assert {m.state for m in group.members.values()} == {MemberState.STABLE}
    assert group.members[a].assigned_partitions == h.parts(foo=(0,), bar=(0,))
    return a, c.member_id, epoch


def test_joining_consumer_group_with_existing_static_member_and_new_subscription(mock_assignor):
    """GroupMetadataManagerTest.testJoiningConsumerGroupWithExistingStaticMemberAndNewSubscription:
    a classic static member rejoins (by member id) with a new subscription owning nothing: an
    epoch bump, the new target (both members, any order), and it is Stable at the new epoch at
    once with its new partitions; answered with that epoch, ``range``, no leader; session and
    sync timers from the request. Kafka's hand-built group already had zar in its subscription
    metadata; this one gains it here, so a ConsumerGroupPartitionMetadata record comes between
    the subscription and the epoch bump (as in the cooperative test below)."""
    h = Mixed(topics={"foo": 2, "bar": 1, "zar": 1}, group_consumer_assignors=("mock-range",))
    a, c, epoch = mock_group(h, mock_assignor, instance_id="instance-id")
    mock_assignor.prepared = lambda spec: {
        a: h.parts(foo=(0,), zar=(0,)),
        c: h.parts(bar=(0,), foo=(1,)),
    }
    since = len(h.records(G))
    answer = h.classic_rejoin("A", a, topics=("foo", "bar", "zar"), session=500, rebalance=500)
    assert (answer.error_code, answer.member_id, answer.generation_id) == (
        Errors.NONE,
        a,
        epoch + 1,
    )
    assert (answer.protocol_type, answer.protocol_name, answer.leader) == ("consumer", "range", "")
    written = h.written(since)
    kinds = [(kind, member) for kind, member, _ in written]
    assert kinds[:3] == [
        ("ConsumerGroupMemberMetadataKey", a),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
    ]
    assert sorted(kinds[3:5]) == sorted(
        [
            ("ConsumerGroupTargetAssignmentMemberKey", a),
            ("ConsumerGroupTargetAssignmentMemberKey", c),
        ]
    )
    assert kinds[5:] == [
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupCurrentMemberAssignmentKey", a),
    ]
    subscription = written[0][2]
    assert subscription.instance_id == "instance-id"
    assert subscription.subscribed_topic_names == ("bar", "foo", "zar")
    assert subscription.classic_member_metadata.session_timeout_ms == 500
    assert written[2][2].epoch == epoch + 1
    targets = {m: set(v.topic_partitions) for _k, m, v in written[3:5]}
    assert targets == {
        a: partitions_record(h, foo=(0,), zar=(0,)),
        c: partitions_record(h, bar=(0,), foo=(1,)),
    }
    assert written[5][2].assignment_epoch == epoch + 1
    current = written[6][2]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        epoch + 1,
        epoch,
        MemberState.STABLE.value,
    )
    assert set(current.assigned_partitions) == partitions_record(h, foo=(0,), zar=(0,))
    assert current.partitions_pending_revocation == ()
    assert h.deadline(f"session-timeout-{G}-{a}") == h.now + 500
    assert h.deadline(f"sync-{G}-{a}") == h.now + 500


def test_static_member_joining_consumer_group_with_unknown_instance_id():
    """GroupMetadataManagerTest.testStaticMemberJoiningConsumerGroupWithUnknownInstanceId: a
    (dynamic) classic member of a consumer group rejoins with its member id and an instance id
    no member has: UNKNOWN_MEMBER_ID, nothing written."""
    h = Mixed()
    ids, _c, _ = h.mixed()
    since = len(h.records(G))
    answer = h.classic_rejoin(
        "A",
        ids["A"],
        owned=(TopicPartition("foo", 0), TopicPartition("foo", 1)),
        instance_id="instance-id",
    )
    assert answer.error_code == Errors.UNKNOWN_MEMBER_ID
    assert h.written(since) == []
    assert h.consumer().static_member("instance-id") is None


def test_static_member_joining_consumer_group_with_unmatched_member_id():
    """GroupMetadataManagerTest.testStaticMemberJoiningConsumerGroupWithUnmatchedMemberId: a
    JoinGroup with a static member's instance id and another (known-format) member id:
    FENCED_INSTANCE_ID, nothing written; the static member stays."""
    h = Mixed()
    static, _ = h.static_classic(
        "A", "instance-id", (("foo", 0), ("foo", 1)), topics=("foo", "bar")
    )
    assert h.cgh("C").error_code == Errors.NONE
    since = len(h.records(G))
    answer = h.classic_rejoin(
        "X",
        "not-" + static,
        owned=(TopicPartition("foo", 0), TopicPartition("foo", 1)),
        instance_id="instance-id",
    )
    assert answer.error_code == Errors.FENCED_INSTANCE_ID
    assert h.written(since) == []
    assert h.consumer().static_member("instance-id").member_id == static


def test_reconciliation_in_joining_consumer_group_with_cooperative_protocol(mock_assignor):
    """GroupMetadataManagerTest.testReconciliationInJoiningConsumerGroupWithCooperativeProtocol:
    a cooperative classic member goes STABLE -> UNREVOKED_PARTITIONS (its new subscription moves
    bar-0 away: it keeps foo-0 at its old epoch) -> UNRELEASED_PARTITIONS (it rejoins without
    bar-0: the new epoch, zar-0, foo-1 still held by the other member) -> STABLE (the other
    member released foo-1). Each rejoin: the records, the answer (epoch as generation), the
    session and sync timers, no join timer; each heartbeat in between is REBALANCE_IN_PROGRESS
    with a join timer of the member's rebalance timeout; each SyncGroup answers the member's
    assigned partitions."""
    h = Mixed(topics={"foo": 2, "bar": 1, "zar": 1}, group_consumer_assignors=("mock-range",))
    a, c, epoch = mock_group(h, mock_assignor)
    mock_assignor.prepared = lambda spec: {a: h.parts(foo=(0, 1), zar=(0,)), c: h.parts(bar=(0,))}
    topics = ("foo", "bar", "zar")
    tp = TopicPartition

    def synced(generation: int) -> set[tuple[str, int]]:
        answer = h.response("A", h.sync("A", a, generation, G))
        assert answer.error_code == Errors.NONE
        return {(p.topic, p.partition) for p in decode_assignment(answer.assignment)[0]}

    def rejoin(owned: tuple[TopicPartition, ...], generation: int) -> list:
        since = len(h.records(G))
        answer = h.classic_rejoin("A", a, topics=topics, owned=owned, session=5000, rebalance=500)
        assert (answer.error_code, answer.member_id, answer.generation_id) == (
            Errors.NONE,
            a,
            generation,
        )
        assert (answer.protocol_type, answer.protocol_name) == ("consumer", "range")
        assert h.deadline(f"session-timeout-{G}-{a}") == h.now + 5000
        assert h.deadline(f"sync-{G}-{a}") == h.now + 500
        assert h.deadline(f"join-{G}-{a}") is None
        return h.written(since)

    def told_to_rejoin(generation: int) -> None:
        assert h.heartbeat("A", a, generation, G) == Errors.REBALANCE_IN_PROGRESS
        assert h.deadline(f"join-{G}-{a}") == h.now + 500

    # 1. STABLE -> UNREVOKED_PARTITIONS
    written = rejoin((tp("foo", 0), tp("bar", 0)), epoch)
    kinds = [(kind, member) for kind, member, _ in written]
    assert kinds[:3] == [
        ("ConsumerGroupMemberMetadataKey", a),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
    ]
    assert sorted(kinds[3:5]) == sorted(
        [
            ("ConsumerGroupTargetAssignmentMemberKey", a),
            ("ConsumerGroupTargetAssignmentMemberKey", c),
        ]
    )
    assert kinds[5:] == [
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupCurrentMemberAssignmentKey", a),
    ]
    assert [(t.topic_name, t.num_partitions) for t in written[1][2].topics] == [
        ("bar", 1),
        ("foo", 2),
        ("zar", 1),
    ]
    assert (written[2][2].epoch, written[5][2].assignment_epoch) == (epoch + 1, epoch + 1)
    assert {m: set(v.topic_partitions) for _k, m, v in written[3:5]} == {
        a: partitions_record(h, foo=(0, 1), zar=(0,)),
        c: partitions_record(h, bar=(0,)),
    }
    current = written[6][2]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        epoch,
        epoch,
        MemberState.UNREVOKED_PARTITIONS.value,
    )
    assert set(current.assigned_partitions) == partitions_record(h, foo=(0,))
    assert set(current.partitions_pending_revocation) == partitions_record(h, bar=(0,))
    assert h.consumer().members[a].state == MemberState.UNREVOKED_PARTITIONS
    assert synced(epoch) == {("foo", 0)}
    told_to_rejoin(epoch)

    # 2. UNREVOKED_PARTITIONS -> UNRELEASED_PARTITIONS
    written = rejoin((tp("foo", 0),), epoch + 1)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupMemberMetadataKey", a),
        ("ConsumerGroupCurrentMemberAssignmentKey", a),
    ]
    current = written[1][2]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        epoch + 1,
        epoch,
        MemberState.UNRELEASED_PARTITIONS.value,
    )
    assert set(current.assigned_partitions) == partitions_record(h, foo=(0,), zar=(0,))
    assert current.partitions_pending_revocation == ()
    assert synced(epoch + 1) == {("foo", 0), ("zar", 0)}

    # the other member revokes foo-1
    response = h.cgh("C", c, epoch, topics=None, topic_partitions=())
    assert response.error_code == Errors.NONE
    told_to_rejoin(epoch + 1)

    # 3. UNRELEASED_PARTITIONS -> STABLE
    written = rejoin((tp("foo", 0), tp("zar", 0)), epoch + 1)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupMemberMetadataKey", a),
        ("ConsumerGroupCurrentMemberAssignmentKey", a),
    ]
    current = written[1][2]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        epoch + 1,
        epoch + 1,
        MemberState.STABLE.value,
    )
    assert set(current.assigned_partitions) == partitions_record(h, foo=(0, 1), zar=(0,))
    assert synced(epoch + 1) == {("foo", 0), ("foo", 1), ("zar", 0)}


def test_consumer_group_offset_commit_and_fetch_with_illegal_generation_id():
    """OffsetMetadataManagerTest.testConsumerGroupOffsetCommitWithIllegalGenerationId and
    testConsumerGroupOffsetFetchWithIllegalGenerationId: a classic member of a consumer group
    commits or fetches (named partitions and all) at an epoch below or above its own:
    ILLEGAL_GENERATION (a consumer-protocol member would get STALE_MEMBER_EPOCH)."""
    h = Mixed()
    ids, _c, _ = h.mixed()
    epoch = h.consumer().members[ids["A"]].member_epoch
    since = len(h.records(G))
    for wrong in (epoch - 1, epoch + 1):
        assert h.commit("A", ids["A"], wrong, {("bar", 0): 100}, G) == {
            ("bar", 0): Errors.ILLEGAL_GENERATION
        }
        for topics in ((OffsetFetchRequestTopic("foo", (0,)),), None):
            request = OffsetFetchRequest(G, topics, member_id=ids["A"], member_epoch=wrong)
            _corr, (response,) = h.send("A", request)
            assert response.error_code == Errors.ILLEGAL_GENERATION
    assert h.records(G)[since:] == ()


def noop(spec: GroupSpec) -> dict:
    """NoOpPartitionAssignor: every member keeps its current target."""
    return {m: dict(spec.member_assignment(m).partitions) for m in spec.member_ids()}


def consumer_member_owning_foo(h: Mixed, **fields) -> tuple[str, int]:
    """A consumer-protocol member Stable with foo-0 and foo-1 (Kafka's ConsumerGroupBuilder
    member); returns its id and epoch."""
    c = h.cgh("C", topics=("foo",), **fields)
    assert c.error_code == Errors.NONE
    c = h.cgh("C", c.member_id, c.member_epoch, topics=None, topic_partitions=())
    group = h.consumer()
    member = group.members[c.member_id]
    assert member.assigned_partitions == h.parts(foo=(0, 1)) and member.state == MemberState.STABLE
    return c.member_id, group.group_epoch


def test_joining_consumer_group_with_new_static_member(mock_assignor):
    """GroupMetadataManagerTest.testJoiningConsumerGroupWithNewStaticMember: a classic static
    member joins (no MEMBER_ID_REQUIRED round for a static member): its subscription (with
    classic metadata), the new subscription metadata (foo and bar), an epoch bump, its (empty,
    NoOp assignor) target and target epoch, its assignment at the new epoch; the answer carries
    a generated id and the epoch; session and sync timers from the request."""
    h = Mixed(topics={"foo": 2, "bar": 1}, group_consumer_assignors=("mock-range",))
    _c, epoch = consumer_member_owning_foo(h)
    mock_assignor.prepared = noop
    since = len(h.records(G))
    corr = h.join(
        "S", G, metadata=sub("foo", "bar"), instance_id="instance-id", session=500, rebalance=500
    )
    answer = h.response("S", corr)
    assert answer.error_code == Errors.NONE and answer.member_id != ""
    new = answer.member_id
    assert (answer.generation_id, answer.protocol_type, answer.protocol_name) == (
        epoch + 1,
        "consumer",
        "range",
    )
    written = h.written(since)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
        ("ConsumerGroupTargetAssignmentMemberKey", new),
        ("ConsumerGroupTargetAssignmentMetadataKey", None),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
    ]
    subscription = written[0][2]
    assert (subscription.instance_id, subscription.rebalance_timeout_ms) == ("instance-id", 500)
    assert subscription.classic_member_metadata.session_timeout_ms == 500
    assert [(t.topic_name, t.num_partitions) for t in written[1][2].topics] == [
        ("bar", 1),
        ("foo", 2),
    ]
    assert written[2][2].epoch == epoch + 1 and written[4][2].assignment_epoch == epoch + 1
    assert written[3][2].topic_partitions == ()
    current = written[5][2]
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        epoch + 1,
        0,
        MemberState.STABLE.value,
    )
    assert current.assigned_partitions == ()
    assert h.deadline(f"session-timeout-{G}-{new}") == h.now + 500
    assert h.deadline(f"sync-{G}-{new}") == h.now + 500


def test_joining_consumer_group_replacing_existing_static_member(mock_assignor):
    """GroupMetadataManagerTest.testJoiningConsumerGroupReplacingExistingStaticMember: a classic
    JoinGroup with a consumer-protocol static member's instance id (and no member id) replaces
    it: its tombstones, the copy under the new id (epoch 0, its partitions and target), then the
    joining member's subscription (classic metadata) and its assignment at the group epoch (no
    bump: same topics). Kafka's test context disables migration (the last consumer-protocol
    member is replaced, which would otherwise downgrade the group)."""
    h = Mixed(
        topics={"foo": 2},
        group_consumer_assignors=("mock-range",),
        group_consumer_migration_policy="disabled",
    )
    old, epoch = consumer_member_owning_foo(h, instance_id="instance-id")
    mock_assignor.prepared = noop
    since = len(h.records(G))
    corr = h.join(
        "S", G, metadata=sub("foo"), instance_id="instance-id", session=500, rebalance=500
    )
    answer = h.response("S", corr)
    assert answer.error_code == Errors.NONE
    new = answer.member_id
    assert new not in ("", old)
    assert (answer.generation_id, answer.protocol_type, answer.protocol_name) == (
        epoch,
        "consumer",
        "range",
    )
    written = h.written(since)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupCurrentMemberAssignmentKey", old),
        ("ConsumerGroupTargetAssignmentMemberKey", old),
        ("ConsumerGroupMemberMetadataKey", old),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupTargetAssignmentMemberKey", new),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
        ("ConsumerGroupMemberMetadataKey", new),
        ("ConsumerGroupCurrentMemberAssignmentKey", new),
    ]
    values = [value for _, _, value in written]
    assert values[:3] == [None, None, None]
    copied, joined = values[3], values[6]
    assert copied.instance_id == "instance-id" and copied.classic_member_metadata is None
    assert joined.classic_member_metadata.session_timeout_ms == 500
    foo01 = partitions_record(h, foo=(0, 1))
    assert set(values[4].topic_partitions) == foo01
    assert (values[5].member_epoch, values[5].previous_member_epoch) == (0, 0)
    assert (values[7].member_epoch, values[7].previous_member_epoch, values[7].state) == (
        epoch,
        0,
        MemberState.STABLE.value,
    )
    assert set(values[7].assigned_partitions) == foo01
    assert h.consumer() is not None and h.consumer().group_epoch == epoch
    assert h.deadline(f"session-timeout-{G}-{new}") == h.now + 500
    assert h.deadline(f"sync-{G}-{new}") == h.now + 500


def test_joining_consumer_group_throws_exception_if_group_over_max_size():
    """GroupMetadataManagerTest.testJoiningConsumerGroupThrowsExceptionIfGroupOverMaxSize: a
    classic JoinGroup to a full consumer group (group.consumer.max.size 1) is
    GROUP_MAX_SIZE_REACHED, before the MEMBER_ID_REQUIRED round."""
    h = Mixed(group_consumer_max_size=1)
    assert h.cgh("C").error_code == Errors.NONE
    since = len(h.records(G))
    answer = h.response("D", h.join("D", G, metadata=sub("foo")))
    assert answer.error_code == Errors.GROUP_MAX_SIZE_REACHED
    assert h.written(since) == []


def test_last_consumer_protocol_member_rebalance_timeout_in_consumer_group(mock_assignor):
    """GroupMetadataManagerTest.testLastConsumerProtocolMemberRebalanceTimeoutInConsumerGroup:
    the last consumer-protocol member fails to revoke within its rebalance timeout and is fenced,
    which downgrades the group (Kafka's policy is DOWNGRADE; bidirectional here, as the group is
    built by an upgrade): per record type the members' tombstones (any order), then the target
    epoch, subscription metadata and epoch tombstones, then the classic group's record at the
    group epoch with the classic member (its last assignment, as the leader); the classic member
    gets a heartbeat timer, the new rebalance a join timer."""
    h = Mixed(
        topics={"foo": 6, "bar": 3, "zar": 1},
        group_consumer_assignors=("mock-range",),
        group_consumer_migration_policy="bidirectional",  # the upgrade builds the group
    )
    owned = (("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1))
    ids, _gen = h.stable_classic({"A": owned}, session=60_000, rebalance=30_000)
    a = ids["A"]
    mock_assignor.prepared = lambda spec: {
        m: h.parts(foo=(0, 1, 2), bar=(0, 1)) if m == a else h.parts(foo=(3, 4, 5), bar=(2,))
        for m in spec.member_ids()
    }
    c = h.cgh("C", topics=("foo", "bar", "zar"), rebalance_timeout_ms=30_000)
    c = h.cgh("C", c.member_id, c.member_epoch, topics=None, topic_partitions=())
    c_id, epoch = c.member_id, c.member_epoch
    # C drops zar; the new target moves bar-2 away from it: it must revoke
    mock_assignor.prepared = lambda spec: {
        a: h.parts(foo=(0, 1, 2), bar=(0, 1)),
        c_id: h.parts(foo=(3, 4, 5)),
    }
    h.cgh(
        "C",
        c_id,
        epoch,
        topics=("foo", "bar"),
        topic_partitions=(
            ConsumerGroupHeartbeatTopicPartitions(h.tid("foo"), (3, 4, 5)),
            ConsumerGroupHeartbeatTopicPartitions(h.tid("bar"), (2,)),
        ),
    )
    group = h.consumer()
    group_epoch = group.group_epoch
    assert group.members[c_id].state == MemberState.UNREVOKED_PARTITIONS
    assert h.deadline(f"rebalance-timeout-{G}-{c_id}") == h.now + 30_000
    since = len(h.records(G))
    h.advance(h.now + 30_000 + 1)
    written = h.written(since)
    kinds = [(kind, member) for kind, member, _ in written]
    members = {a, c_id}
    assert {k for k, _ in kinds[0:2]} == {"ConsumerGroupCurrentMemberAssignmentKey"}
    assert {m for _, m in kinds[0:2]} == members
    assert {k for k, _ in kinds[2:4]} == {"ConsumerGroupTargetAssignmentMemberKey"}
    assert {m for _, m in kinds[2:4]} == members
    assert kinds[4] == ("ConsumerGroupTargetAssignmentMetadataKey", None)
    assert {k for k, _ in kinds[5:7]} == {"ConsumerGroupMemberMetadataKey"}
    assert {m for _, m in kinds[5:7]} == members
    assert kinds[7:] == [
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
        ("GroupMetadataKey", None),
    ]
    assert all(value is None for _, _, value in written[:9])
    record = written[9][2]
    assert (record.generation, record.protocol_type, record.protocol, record.leader) == (
        group_epoch,
        "consumer",
        "range",
        a,
    )
    (member,) = record.members
    assert (member.member_id, member.session_timeout, member.rebalance_timeout) == (
        a,
        60_000,
        30_000,
    )
    assert {(tp.topic, tp.partition) for tp in decode_assignment(member.assignment)[0]} == set(
        owned
    )
    assert h.consumer() is None
    classic = h.classic()
    assert classic is not None and classic.state == "PreparingRebalance"
    assert h.deadline(f"heartbeat-{G}-{a}") is not None
    assert h.deadline(f"/join-{G}") is not None


def test_classic_group_sync_to_consumer_group_with_all_consumer_protocol_versions():
    """GroupMetadataManagerTest.testClassicGroupSyncToConsumerGroupWithAllConsumerProtocolVersions:
    for every ConsumerProtocol subscription version a classic member joins with, its SyncGroup
    answer is its assigned partitions serialized as a ConsumerProtocolAssignment of that
    version."""
    for version in range(4):
        h = Mixed(topics={"foo": 6, "bar": 6})
        ids, _c, _ = h.mixed()
        corr = h.join("A", G, ids["A"], metadata=sub("foo", "bar", version=version))
        joined = h.response("A", corr)
        assert joined.error_code == Errors.NONE
        synced = h.response("A", h.sync("A", ids["A"], joined.generation_id, G))
        assert synced.error_code == Errors.NONE
        assert decode_version(synced.assignment) == version
        member = h.consumer().members[ids["A"]]
        names = {h.tid("foo"): "foo", h.tid("bar"): "bar"}
        expected = {(names[t], p) for t, ps in member.assigned_partitions.items() for p in ps}
        got = {(tp.topic, tp.partition) for tp in decode_assignment(synced.assignment)[0]}
        assert got == expected and got


def test_consumer_group_member_using_classic_protocol_batch_leave_group_updating_metadata():
    """GroupMetadataManagerTest
    .testConsumerGroupMemberUsingClassicProtocolBatchLeaveGroupUpdatingSubscriptionMetadata: the
    classic member that alone subscribed to bar leaves with
    LeaveGroup: its tombstones, the subscription metadata without bar, one epoch bump."""
    h = Mixed()
    ids, _gen = h.stable_classic({"A": (("foo", 0), ("bar", 0), ("bar", 1))}, topics=("foo", "bar"))
    c = h.cgh("C", topics=("foo",))
    assert c.error_code == Errors.NONE
    epoch = h.consumer().group_epoch
    since = len(h.records(G))
    answer = h.leave("A", MemberIdentity(ids["A"]), group_id=G)
    assert [m.error_code for m in answer.members] == [Errors.NONE]
    written = h.written(since)
    assert [(kind, member) for kind, member, _ in written] == [
        ("ConsumerGroupCurrentMemberAssignmentKey", ids["A"]),
        ("ConsumerGroupTargetAssignmentMemberKey", ids["A"]),
        ("ConsumerGroupMemberMetadataKey", ids["A"]),
        ("ConsumerGroupPartitionMetadataKey", None),
        ("ConsumerGroupMetadataKey", None),
    ]
    assert [(t.topic_name, t.num_partitions) for t in written[3][2].topics] == [("foo", 2)]
    assert written[4][2].epoch == epoch + 1
