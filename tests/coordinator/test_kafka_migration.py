"""Mixed groups and online migration through KafkaCluster: ports of the classic/consumer migration
tests of Kafka's GroupMetadataManagerTest (and ConsumerGroupTest's classic-member checks) at
1eb7644. Each test names its Kafka original.

Kafka's tests build groups by replaying hand-made records and use a mock assignor; these drive
real JoinGroup/SyncGroup/Heartbeat/LeaveGroup and ConsumerGroupHeartbeat requests (with real
ConsumerProtocol bytes) through the cluster and the real ``range`` assignor, and assert what the
originals assert: errors, records (by type and order), epochs, member states, timers, the group's
type after the request.

Left out (and why): testConsumerGroupHeartbeatToClassicGroupFromExistingStaticMember and
testConsumerGroupHeartbeatFromExistingClassicStaticMember (static members switching protocol by
instance id: the rules are the generic static-member paths already covered, not ported one by
one); testJoiningConsumerGroupWithExistingStaticMemberAndNewSubscription,
testStaticMemberJoiningConsumerGroupWithUnknownInstanceId / WithUnmatchedMemberId (the
static-member checks are the ConsumerGroupHeartbeat ones, tested in
test_kafka_consumer_group_heartbeat.py); testReconciliationInJoiningConsumerGroupWithCooperative-
Protocol (its eager sibling is ported; the reconciliation itself is CurrentAssignmentBuilder's,
tested in test_kafka_current_assignment_builder.py); the metrics assertions (no Kafka metrics);
the snapshot-rollback halves (``context.rollback()``: a failed write here never changes state,
tested by testJoiningConsumerGroupFailingToPersistRecords).
"""

from __future__ import annotations

from assignors.api import Subscription, TopicPartition
from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import ConsumerGroupState, MemberState
from coordinator.errors import Errors
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    MemberIdentity,
)
from members.consumer_protocol import decode_assignment, encode_assignment, encode_subscription
from tests.coordinator.harness import Driver

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
    ...WithFencedInstanceId, ...WithIllegalGenerationId, ...WithMemberNotUsingClassicProtocol."""
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
    ...WithFencedInstanceId, ...WithInconsistentGroupProtocol, ...WithIllegalGeneration and
    ...RebalanceInProgress."""
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
    """GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolFencedWhenSession-
    Timeout: its own session timeout fences it (tombstones, epoch bump)."""
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
    """GroupMetadataManagerTest.testLastStaticConsumerProtocolMemberReplacedByClassicProtocol-
    Member: a classic JoinGroup with the instance id of the last consumer-protocol (static)
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
