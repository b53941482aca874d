"""Ports of Kafka's GroupCoordinatorServiceTest and GroupCoordinatorShardTest (classic parts).

GroupCoordinatorService is the broker-side front of the group coordinator: it checks a request
before any shard sees it, routes it to the coordinator of the group's ``__consumer_offsets``
partition and turns a failed operation into the response's error. GroupCoordinatorShard routes
requests and records to the group and offset managers, and runs the cleanup job. In groupsim the
service is ``GroupCoordinatorService`` (service.py, behind ``KafkaCluster`` and ``KafkaApis``,
with the request checks of validation.py and the error mapping of log.py), the shard is
``GroupCoordinatorShard`` (shard.py, composing the managers and the loader). Kafka's tests
mock the runtime and the managers and check what the service does with their answers; the ports
produce the same situations with real requests, broker failures and injected append failures
(``fail_next_append``), and check the responses. A few checks KafkaApis makes before the
coordinator (the OffsetCommit topic check, DeleteGroups' duplicate names, SyncGroup v5's protocol
fields) are ported with them.

Not ported (the reason for each):

* The coordinator service not started or shut down (COORDINATOR_NOT_AVAILABLE for everything; not
  modelled, docs/coordinator.md): testStartupShutdown, testJoinGroupWhenNotStarted,
  testSyncGroupWhenNotStarted, testHeartbeatWhenNotStarted, testListGroupsWhenNotStarted,
  testDescribeGroupsWhenNotStarted, testFetchOffsetsWhenNotStarted, testLeaveGroupWhenNotStarted,
  testDeleteGroupsWhenNotStarted, testOnPartitionsDeletedWhenServiceIsNotStarted.
* KIP-848 consumer groups (not modelled): testConsumerGroupHeartbeatWhenNotStarted,
  testConsumerGroupHeartbeat, testConsumerGroupHeartbeatWithException (its error table is ported
  with DeleteGroups, below), testConsumerGroupDescribe, testConsumerGroupDescribeInvalidGroupId,
  testConsumerGroupDescribeCoordinatorLoadInProgress, testConsumerGroupDescribeCoordinatorNotActive;
  shard: testConsumerGroupHeartbeat, testReplayConsumerGroupMetadata,
  testReplayConsumerGroupMetadataWithNullValue, testReplayConsumerGroupPartitionMetadata,
  testReplayConsumerGroupPartitionMetadataWithNullValue, testReplayConsumerGroupMemberMetadata,
  testReplayConsumerGroupMemberMetadataWithNullValue,
  testReplayConsumerGroupTargetAssignmentMetadata,
  testReplayConsumerGroupTargetAssignmentMetadataWithNullValue,
  testReplayConsumerGroupTargetAssignmentMember,
  testReplayConsumerGroupTargetAssignmentMemberKeyWithNullValue,
  testReplayConsumerGroupCurrentMemberAssignment,
  testReplayConsumerGroupCurrentMemberAssignmentWithNullValue.
* Share groups (not modelled): testShareGroupHeartbeatWhenNotStarted, testShareGroupHeartbeat,
  testShareGroupHeartbeatWithException, testShareGroupDescribe,
  testShareGroupDescribeInvalidGroupId, testShareGroupDescribeCoordinatorLoadInProgress,
  testShareGroupDescribeCoordinatorNotActive; shard: testShareGroupHeartbeat,
  testReplayShareGroupMetadata, testReplayShareGroupMetadataWithNullValue,
  testReplayShareGroupMemberMetadata, testReplayShareGroupMemberMetadataWithNullValue.
* Transactions (TxnOffsetCommit, markers; not modelled): testCommitTransactionalOffsetsWhenNotStarted,
  testCommitTransactionalOffsetsWithInvalidGroupId, testCommitTransactionalOffsets,
  testCommitTransactionalOffsetsWithWrappedError, testCompleteTransaction,
  testCompleteTransactionWhenNotCoordinatorServiceStarted,
  testCompleteTransactionWithUnexpectedPartition; shard: testCommitTransactionalOffset,
  testReplayTransactionalOffsetCommit, testReplayEndTransactionMarker.
* The OffsetDelete API (not modelled): testDeleteOffsets, testDeleteOffsetsInvalidGroupId,
  testDeleteOffsetsWithException, testDeleteOffsetsWhenNotStarted.
* Metrics: shard testScheduleClassicGroupSizeCounter (a gauge refresh timer).
* Things groupsim has no counterpart for: testGroupMetadataTopicConfigs (the offsets topic's
  cleanup policy, compression and segment size); testOnResignationWithEmptyLeaderEpoch (leader
  epochs); testSyncGroupWithException (a mocked IllegalStateException inside SyncGroup: no
  SyncGroup path of Kafka's manager throws one, and the leader's failed write is ported in
  test_kafka_ports_classic.py); testFetchOffsetsWithWrappedError (a stable OffsetFetch is an
  empty write that fails only when the high watermark does not reach it in time; groupsim
  replicates at once); shard testReplayKeyCannotBeNull and testReplayWithUnsupportedVersion
  (records without a key or of an unknown type, which groupsim's typed log cannot hold).
* Already ported with the same check: shard testOnPartitionsDeleted is
  OffsetMetadataManagerTest.testOnPartitionsDeleted (test_kafka_offsets.py), which the shard
  only forwards to.

Null group ids: Kafka's DescribeGroups and DeleteGroups tests also pass a null id (answered
INVALID_GROUP_ID); the wire format cannot carry one (the ids are non-nullable strings), so only
the empty id is ported. ListGroups: groupsim sorts the groups by id; Kafka lists them in the order
of its runtime's map of coordinators and of each coordinator's groups, which the ports do not
check.
"""

from __future__ import annotations

import attrs
import pytest

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DescribedGroup,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
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
    SyncGroupRequest,
    SyncGroupResponse,
)
from coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
)
from coordinator.state_machine import DEAD

from .harness import Driver, protocols

# GroupCoordinatorServiceTest.createConfig: GroupCoordinatorConfigTest.createGroupCoordinatorConfig
# (4096, 600000, 24): group.min/max.session.timeout.ms 120 / 50000, retention 24 minutes.
SERVICE_CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=120,
    group_max_session_timeout_ms=10 * 5 * 1000,
    offset_metadata_max_bytes=4096,
    offsets_retention_check_interval_ms=600000,
    offsets_retention_minutes=24,
    load_time_ms=0,
)
LOAD_TIME = 500


def config(**changes) -> CoordinatorConfig:
    return attrs.evolve(SERVICE_CONFIG, **changes)


def group_in(d: Driver, partition: int, prefix: str = "group") -> str:
    """A group id whose offsets live in ``__consumer_offsets`` partition ``partition``."""
    return next(
        f"{prefix}-{i}"
        for i in range(10000)
        if d.cluster.partition_for(f"{prefix}-{i}") == partition
    )


def ask(d: Driver, request, dst: str) -> object:
    """Send ``request`` to ``dst``; its one immediate response."""
    _corr, got = d.send("X", request, dst=dst)
    (response,) = got
    return response


def commit(d: Driver, group_id: str, offsets: dict[tuple[str, int], int]) -> OffsetCommitResponse:
    """A simple (generation -1, no member) OffsetCommit to the group's coordinator."""
    topics: dict[str, list[OffsetCommitRequestPartition]] = {}
    for (topic, p), offset in offsets.items():
        topics.setdefault(topic, []).append(OffsetCommitRequestPartition(p, offset))
    request = OffsetCommitRequest(
        group_id, -1, "", tuple(OffsetCommitRequestTopic(t, ps) for t, ps in topics.items())
    )
    _corr, (response,) = d.send("X", request)
    return response


def committed(d: Driver, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
    response = commit(d, group_id, offsets)
    assert {p.error_code for t in response.topics for p in t.partitions} == {Errors.NONE}


def delete(d: Driver, dst: str, *group_ids: str) -> tuple[DeletableGroupResult, ...]:
    return ask(d, DeleteGroupsRequest(group_ids), dst).results


def two_brokers_with_a_loading_partition(**cluster_args) -> Driver:
    """Two brokers, three offsets partitions: broker-0 leads p0 and p2 (loaded) and has just
    become the leader of p1 (broker-1 failed), which it is still loading."""
    d = Driver(
        config(offsets_topic_num_partitions=3, load_time_ms=LOAD_TIME),
        num_brokers=2,
        replication_factor=2,
        **cluster_args,
    )
    assert [d.cluster.offsets_partition_leader(p) for p in range(3)] == [
        "broker-0",
        "broker-1",
        "broker-0",
    ]
    return d


def fail_broker_1(d: Driver) -> None:
    d.apply(d.cluster.fail_broker("broker-1", d.now))
    assert d.cluster.offsets_partition_leader(1) == "broker-0"
    assert d.cluster.service.shards[1].loading


# =================================================================================================
# partitionFor, onElection, onResignation
# =================================================================================================


def test_partition_for():
    """Port of GroupCoordinatorServiceTest.testPartitionFor: a group's coordinator is partition
    Utils.abs(groupId.hashCode()) % numPartitions of ``__consumer_offsets``, and FindCoordinator
    names that partition's leader. ("foo".hashCode() is 101574.)"""
    d = Driver(config(offsets_topic_num_partitions=10), num_brokers=3)
    assert d.cluster.partition_for("foo") == 101574 % 10 == 4
    found = ask(d, FindCoordinatorRequest("foo"), "broker-0")
    assert found.error_code == Errors.NONE
    assert f"broker-{found.node_id}" == d.cluster.offsets_partition_leader(4) == "broker-1"


def test_on_election_loads_the_partition():
    """Port of GroupCoordinatorServiceTest.testOnElection: a broker elected leader of an offsets
    partition loads it (scheduleLoadOperation); until the load completes its groups' requests get
    COORDINATOR_LOAD_IN_PROGRESS, then they are served from the replayed state."""
    d = Driver(config(load_time_ms=LOAD_TIME), topics={"foo": 1})
    committed(d, "foo-group", {("foo", 0): 5})
    old = d.coordinator("foo-group")
    d.apply(d.cluster.fail_broker(old, d.now))
    new = d.coordinator("foo-group")
    assert new != old and d.shard("foo-group").loading
    fetch = OffsetFetchRequest("foo-group")
    assert ask(d, fetch, new) == OffsetFetchResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    d.advance(d.now + LOAD_TIME)
    assert ask(d, fetch, new) == OffsetFetchResponse(
        Errors.NONE,
        (OffsetFetchResponseTopic("foo", (OffsetFetchResponsePartition(0, 5),)),),
    )


def test_on_resignation_unloads_the_partition():
    """Port of GroupCoordinatorServiceTest.testOnResignation: a broker that stops leading an
    offsets partition (here by a preferred leader election, the broker staying alive) unloads its
    coordinator (scheduleUnloadOperation): its groups become Dead, its timers go, and it answers
    NOT_COORDINATOR for the partition's groups from then on."""
    d = Driver(config(load_time_ms=0), topics={"foo": 1})
    ids, gen = d.stable_group(("A",))
    p = d.cluster.partition_for("g")
    preferred = d.coordinator("g")
    d.apply(d.cluster.fail_broker(preferred, d.now))
    d.apply(d.cluster.restart_broker(preferred, d.now))
    follower = d.coordinator("g")
    moved = d.shard("g")
    assert follower != preferred and moved.group_manager.groups["g"].state == "Stable"
    d.apply(d.cluster.elect_preferred_leaders(d.now))
    assert d.coordinator("g") == preferred
    assert moved.group_manager.groups["g"].state == DEAD and moved.timer.timers == {}
    assert moved.loading  # the old coordinator serves nothing any more
    assert d.cluster.offsets_partition_leader(p) == preferred
    hb = HeartbeatRequest("g", gen, ids["A"])
    assert ask(d, hb, follower) == HeartbeatResponse(Errors.NOT_COORDINATOR)
    assert ask(d, hb, preferred) == HeartbeatResponse(Errors.NONE)


# =================================================================================================
# JoinGroup / SyncGroup / Heartbeat / LeaveGroup
# =================================================================================================


def test_join_group():
    """Port of GroupCoordinatorServiceTest.testJoinGroup: a JoinGroup goes to the coordinator of
    the group's partition, which holds the response until the join phase completes (the future
    is not done when the write returns)."""
    d = Driver(SERVICE_CONFIG)
    member_id = d.response("A", d.join("A", "foo", session=1000)).member_id
    corr = d.join("A", "foo", member_id, session=1000)
    assert d.response("A", corr) is None
    d.complete_join("foo")
    response = d.response("A", corr)
    assert response.error_code == Errors.NONE and response.member_id == member_id


def test_join_group_with_exception():
    """Port of GroupCoordinatorServiceTest.testJoinGroupWithException: an unexpected exception in
    the coordinator's JoinGroup (here Kafka's IllegalStateException for a pending member id that
    comes back with a group instance id) fails the write, and the service answers
    UNKNOWN_SERVER_ERROR in an otherwise default response: no member id."""
    d = Driver(SERVICE_CONFIG)
    pending = d.response("A", d.join("A", "foo", session=1000)).member_id
    response = d.response("A", d.join("A", "foo", pending, session=1000, instance_id="i"))
    assert response == JoinGroupResponse(Errors.UNKNOWN_SERVER_ERROR)


def test_join_group_failed_by_routing_has_no_member_id():
    """Around the port of testJoinGroupWithException: a JoinGroup that reaches a broker that does
    not coordinate the group, or one still loading it, fails as an operation (the runtime's
    NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS); the service answers with the error alone,
    not echoing the member id as its own checks do."""
    d = Driver(config(load_time_ms=LOAD_TIME))
    request = JoinGroupRequest("foo", 1000, 1000, "member", "consumer", protocols("range"))
    node = d.coordinator("foo")
    wrong = next(n for n in d.cluster.broker_nodes if n != node)
    assert ask(d, request, wrong) == JoinGroupResponse(Errors.NOT_COORDINATOR)
    d.apply(d.cluster.fail_broker(node, d.now))
    assert ask(d, request, d.coordinator("foo")) == JoinGroupResponse(
        Errors.COORDINATOR_LOAD_IN_PROGRESS
    )


def test_join_group_invalid_group_id():
    """Port of GroupCoordinatorServiceTest.testJoinGroupInvalidGroupId: a JoinGroup without a
    group id gets INVALID_GROUP_ID with its own member id, before any routing (a broker that
    coordinates nothing for it answers the same)."""
    d = Driver(SERVICE_CONFIG)
    request = JoinGroupRequest("", 1000, 1000, "member", "consumer", protocols("range"))
    for node in d.cluster.broker_nodes:
        assert ask(d, request, node) == JoinGroupResponse(
            Errors.INVALID_GROUP_ID, member_id="member"
        )


@pytest.mark.parametrize("session_timeout_ms", [120 - 1, 10 * 5 * 1000 + 1])
def test_join_group_invalid_session_timeout(session_timeout_ms):
    """Port of GroupCoordinatorServiceTest.testJoinGroupInvalidSessionTimeout: a session timeout
    below group.min.session.timeout.ms or above group.max.session.timeout.ms gets
    INVALID_SESSION_TIMEOUT, and no group is created; the bounds themselves are accepted."""
    d = Driver(SERVICE_CONFIG)
    request = JoinGroupRequest(
        "group-id", session_timeout_ms, 1000, "", "consumer", protocols("range")
    )
    assert ask(d, request, d.coordinator("group-id")) == JoinGroupResponse(
        Errors.INVALID_SESSION_TIMEOUT
    )
    assert d.cluster.group("group-id") is None
    for bound in (120, 10 * 5 * 1000):
        response = d.response("A", d.join("A", "group-id", session=bound))
        assert response.error_code == Errors.MEMBER_ID_REQUIRED


def test_sync_group():
    """Port of GroupCoordinatorServiceTest.testSyncGroup: a SyncGroup goes to the group's
    coordinator, which holds a follower's response until the leader's assignment is written."""
    d = Driver(SERVICE_CONFIG)
    ids = {}
    corrs = {}
    for c in ("A", "B"):
        ids[c], corrs[c] = d.join_dynamic(c, "foo", session=1000)
    d.complete_join("foo")
    gen = d.response("A", corrs["A"]).generation_id
    leader = d.cluster.group("foo").leader_id
    follower = next(c for c in ids if ids[c] != leader)
    corr = d.sync(follower, ids[follower], gen, "foo")
    assert d.response(follower, corr) is None
    assert d.state("foo") == "CompletingRebalance"


def test_sync_group_invalid_group_id():
    """Port of GroupCoordinatorServiceTest.testSyncGroupInvalidGroupId: a SyncGroup without a
    group id gets INVALID_GROUP_ID, whatever broker it reaches."""
    d = Driver(SERVICE_CONFIG)
    request = SyncGroupRequest("", 1, "", protocol_type="consumer", protocol_name="range")
    for node in d.cluster.broker_nodes:
        assert ask(d, request, node) == SyncGroupResponse(Errors.INVALID_GROUP_ID)


def test_sync_group_v5_needs_protocol_type_and_name():
    """KafkaApis.handleSyncGroupRequest, checked before the coordinator: from version 5 a
    SyncGroup must carry the protocol type and name (INCONSISTENT_GROUP_PROTOCOL, even from a
    broker that does not coordinate the group); version 4 may leave them out."""
    d = Driver(SERVICE_CONFIG)
    ids, gen = d.stable_group(("A",), group_id="foo", session=1000)
    node = d.coordinator("foo")
    other = next(n for n in d.cluster.broker_nodes if n != node)
    for protocol_type, protocol_name in ((None, "range"), ("consumer", None), (None, None)):
        request = SyncGroupRequest(
            "foo", gen, ids["A"], protocol_type=protocol_type, protocol_name=protocol_name
        )
        for dst in (node, other):
            assert ask(d, request, dst) == SyncGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL)
    v4 = SyncGroupRequest("foo", gen, ids["A"], api_version=4)
    assert ask(d, v4, node).error_code == Errors.NONE


def test_heartbeat():
    """Port of GroupCoordinatorServiceTest.testHeartbeat: a heartbeat is answered at once with
    the coordinator's answer."""
    d = Driver(SERVICE_CONFIG)
    ids, gen = d.stable_group(("A",), group_id="foo", session=1000)
    request = HeartbeatRequest("foo", gen, ids["A"])
    assert ask(d, request, d.coordinator("foo")) == HeartbeatResponse(Errors.NONE)


def test_heartbeat_while_loading_is_answered_none():
    """Port of GroupCoordinatorServiceTest.testHeartbeatCoordinatorNotAvailableException: a
    heartbeat that reaches a coordinator still loading the group is answered NONE ("respond
    blindly"), not COORDINATOR_LOAD_IN_PROGRESS; the routing error NOT_COORDINATOR is not
    masked."""
    d = Driver(config(load_time_ms=LOAD_TIME))
    ids, gen = d.stable_group(("A",), group_id="foo", session=1000)
    old = d.coordinator("foo")
    d.apply(d.cluster.fail_broker(old, d.now))
    new = d.coordinator("foo")
    assert d.shard("foo").loading
    request = HeartbeatRequest("foo", gen, ids["A"])
    assert ask(d, request, new) == HeartbeatResponse(Errors.NONE)
    other = next(n for n in d.cluster.broker_nodes if n not in (old, new))
    assert ask(d, request, other) == HeartbeatResponse(Errors.NOT_COORDINATOR)


def test_heartbeat_coordinator_error_passes_through():
    """Port of GroupCoordinatorServiceTest.testHeartbeatCoordinatorException: an error of the
    coordinator's heartbeat other than a loading one reaches the member as it is
    (REBALANCE_IN_PROGRESS while the group rebalances)."""
    d = Driver(SERVICE_CONFIG)
    ids, gen = d.stable_group(("A",), group_id="foo", session=1000)
    d.join_dynamic("B", "foo", session=1000)
    assert d.state("foo") == "PreparingRebalance"
    request = HeartbeatRequest("foo", gen, ids["A"])
    assert ask(d, request, d.coordinator("foo")) == HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS)


def test_leave_group():
    """Port of GroupCoordinatorServiceTest.testLeaveGroup: a LeaveGroup is answered at once with
    the coordinator's answer."""
    d = Driver(SERVICE_CONFIG)
    ids, _gen = d.stable_group(("A",), group_id="foo", session=1000)
    request = LeaveGroupRequest("foo", (MemberIdentity(ids["A"]),))
    assert ask(d, request, d.coordinator("foo")) == LeaveGroupResponse(
        Errors.NONE, (LeaveGroupResponseMember(ids["A"], None, Errors.NONE),)
    )
    assert d.state("foo") == "Empty"


def test_leave_group_of_an_unknown_group():
    """Port of GroupCoordinatorServiceTest.testLeaveGroupThrowsUnknownMemberIdException: a
    LeaveGroup for a group the coordinator does not know (Kafka's manager throws
    UnknownMemberIdException) is answered NONE at the top with UNKNOWN_MEMBER_ID for every
    member, each with its member and instance id."""
    d = Driver(SERVICE_CONFIG)
    request = LeaveGroupRequest(
        "foo", (MemberIdentity("member-1", "instance-1"), MemberIdentity("member-2", "instance-2"))
    )
    assert ask(d, request, d.coordinator("foo")) == LeaveGroupResponse(
        Errors.NONE,
        (
            LeaveGroupResponseMember("member-1", "instance-1", Errors.UNKNOWN_MEMBER_ID),
            LeaveGroupResponseMember("member-2", "instance-2", Errors.UNKNOWN_MEMBER_ID),
        ),
    )


# =================================================================================================
# ListGroups / DescribeGroups
# =================================================================================================


def test_list_groups():
    """Port of GroupCoordinatorServiceTest.testListGroups: ListGroups reads every coordinator
    the broker runs and returns their groups together, each with its protocol type and state."""
    d = Driver(config(offsets_topic_num_partitions=3), num_brokers=1, topics={"foo": 1})
    stable, empty, simple = (group_in(d, p) for p in range(3))
    d.stable_group(("A",), group_id=stable, session=50000)
    ids, _gen = d.stable_group(("B",), group_id=empty, session=50000)
    d.leave("B", MemberIdentity(ids["B"]), group_id=empty)
    committed(d, simple, {("foo", 0): 1})
    response = ask(d, ListGroupsRequest(), "broker-0")
    assert response.error_code == Errors.NONE
    # coordinators by partition (each one's groups in its map's order: one group each here)
    assert response.groups == (
        ListedGroup(stable, "consumer", "Stable"),
        ListedGroup(empty, "consumer", "Empty"),
        ListedGroup(simple, "", "Empty"),
    )


def test_list_groups_leaves_out_partitions_the_broker_does_not_coordinate():
    """Port of GroupCoordinatorServiceTest.testListGroupsFailedWithNotCoordinatorException: the
    groups of a partition the broker no longer coordinates (NOT_COORDINATOR for that read) are
    left out, without an error."""
    d = two_brokers_with_a_loading_partition(topics={"foo": 1})
    fail_broker_1(d)
    d.advance(d.now + LOAD_TIME)  # broker-0 leads all three partitions, loaded
    groups = [group_in(d, p) for p in range(3)]
    for g in groups:
        committed(d, g, {("foo", 0): 1})
    d.apply(d.cluster.restart_broker("broker-1", d.now))
    d.apply(d.cluster.elect_preferred_leaders(d.now))  # p1 goes back to broker-1
    assert ask(d, ListGroupsRequest(), "broker-0") == ListGroupsResponse(
        Errors.NONE, tuple(ListedGroup(groups[p], "", "Empty") for p in (0, 2))
    )


def test_list_groups_with_a_loading_partition():
    """Port of GroupCoordinatorServiceTest.testListGroupsWithFailure: if one coordinator of the
    broker is still loading, the whole ListGroups fails with COORDINATOR_LOAD_IN_PROGRESS, and the
    response carries no groups, not even those of the loaded coordinators."""
    d = two_brokers_with_a_loading_partition(topics={"foo": 1})
    for p in (0, 2):
        committed(d, group_in(d, p), {("foo", 0): 1})
    fail_broker_1(d)
    assert ask(d, ListGroupsRequest(), "broker-0") == ListGroupsResponse(
        Errors.COORDINATOR_LOAD_IN_PROGRESS
    )
    d.advance(d.now + LOAD_TIME)
    assert len(ask(d, ListGroupsRequest(), "broker-0").groups) == 2


def test_list_groups_with_no_partitions():
    """Port of GroupCoordinatorServiceTest.testListGroupsWithEmptyTopicPartitions: a broker that
    coordinates no partition answers an empty list without an error."""
    d = Driver(config(offsets_topic_num_partitions=1), num_brokers=3)
    d.stable_group(("A",), group_id="foo", session=1000)
    assert d.coordinator("foo") == "broker-0"
    assert ask(d, ListGroupsRequest(), "broker-1") == ListGroupsResponse(Errors.NONE)


def test_describe_groups():
    """Port of GroupCoordinatorServiceTest.testDescribeGroups: the groups of a DescribeGroups are
    described by the coordinator of each one's partition and answered together, partition by
    partition in the order of the service's HashMap of partitions (here partition 0 first,
    although the request names the group of partition 1 first)."""
    d = Driver(config(offsets_topic_num_partitions=2), num_brokers=1)
    assert [d.cluster.partition_for(g) for g in ("group-id-1", "group-id-2")] == [1, 0]
    d.stable_group(("A",), group_id="group-id-1", session=1000)
    response = ask(d, DescribeGroupsRequest(("group-id-1", "group-id-2")), "broker-0")
    assert [(g.group_id, g.error_code, g.group_state) for g in response.groups] == [
        ("group-id-2", Errors.NONE, "Dead"),
        ("group-id-1", Errors.NONE, "Stable"),
    ]


def test_describe_groups_of_the_empty_group_id():
    """Port of GroupCoordinatorServiceTest.testDescribeGroupsInvalidGroupId (its empty group id;
    null cannot be sent): for backward compatibility the empty group id is described like any
    other (an unknown group: Dead)."""
    d = Driver(SERVICE_CONFIG)
    response = ask(d, DescribeGroupsRequest(("",)), d.coordinator(""))
    assert response.groups == (DescribedGroup(Errors.NONE, "", group_state="Dead"),)


def test_describe_group_coordinator_load_in_progress():
    """Port of GroupCoordinatorServiceTest.testDescribeGroupCoordinatorLoadInProgress: a group
    whose coordinator is loading is described with COORDINATOR_LOAD_IN_PROGRESS alone."""
    d = Driver(config(load_time_ms=LOAD_TIME))
    old = d.coordinator("group-id")
    d.apply(d.cluster.fail_broker(old, d.now))
    response = ask(d, DescribeGroupsRequest(("group-id",)), d.coordinator("group-id"))
    assert response.groups == (DescribedGroup(Errors.COORDINATOR_LOAD_IN_PROGRESS, "group-id"),)


# =================================================================================================
# OffsetFetch / OffsetCommit
# =================================================================================================


@pytest.mark.parametrize("fetch_all", [False, True])
@pytest.mark.parametrize("require_stable", [False, True])
def test_fetch_offsets(fetch_all, require_stable):
    """Port of GroupCoordinatorServiceTest.testFetchOffsets: OffsetFetch for given partitions or
    for all of them, with or without requireStable (a write or a read operation in Kafka), returns
    the committed offset."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})
    committed(d, "group", {("foo", 0): 100})
    topics = None if fetch_all else (OffsetFetchRequestTopic("foo", (0,)),)
    request = OffsetFetchRequest("group", topics, require_stable=require_stable)
    assert ask(d, request, d.coordinator("group")) == OffsetFetchResponse(
        Errors.NONE, (OffsetFetchResponseTopic("foo", (OffsetFetchResponsePartition(0, 100),)),)
    )


def test_commit_offset():
    """Port of GroupCoordinatorShardTest.testCommitOffset: an OffsetCommit is handled by the offset
    manager of the group's shard: its answer is the response and its records (one OffsetCommit
    record per partition) are written."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 2})
    since = len(d.records("group"))
    assert commit(d, "group", {("foo", 0): 10, ("foo", 1): 11}) == OffsetCommitResponse(
        (
            OffsetCommitResponseTopic(
                "foo",
                (
                    OffsetCommitResponsePartition(0, Errors.NONE),
                    OffsetCommitResponsePartition(1, Errors.NONE),
                ),
            ),
        )
    )
    written = [(r.key, r.value.offset) for r in d.records("group")[since:]]
    assert written == [
        (OffsetCommitKey("group", "foo", 0), 10),
        (OffsetCommitKey("group", "foo", 1), 11),
    ]


def test_offset_commit_of_unknown_topics_and_partitions():
    """KafkaApis.handleOffsetCommitRequest, before the coordinator: partitions of a topic the
    broker does not know, or beyond its partition count, get UNKNOWN_TOPIC_OR_PARTITION and are
    not committed; the coordinator's answer for the rest is merged in after them
    (OffsetCommitResponse.Builder)."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 2})
    request = OffsetCommitRequest(
        "group",
        -1,
        "",
        (
            OffsetCommitRequestTopic(
                "foo",
                (
                    OffsetCommitRequestPartition(0, 10),
                    OffsetCommitRequestPartition(5, 15),
                    OffsetCommitRequestPartition(1, 11),
                ),
            ),
            OffsetCommitRequestTopic("bar", (OffsetCommitRequestPartition(0, 20),)),
        ),
    )
    assert ask(d, request, d.coordinator("group")) == OffsetCommitResponse(
        (
            OffsetCommitResponseTopic(
                "foo",
                (
                    OffsetCommitResponsePartition(5, Errors.UNKNOWN_TOPIC_OR_PARTITION),
                    OffsetCommitResponsePartition(0, Errors.NONE),
                    OffsetCommitResponsePartition(1, Errors.NONE),
                ),
            ),
            OffsetCommitResponseTopic(
                "bar", (OffsetCommitResponsePartition(0, Errors.UNKNOWN_TOPIC_OR_PARTITION),)
            ),
        )
    )
    assert d.cluster.committed_offsets("group") == {("foo", 0): 10, ("foo", 1): 11}


def test_offset_commit_of_unknown_topics_only_never_reaches_the_coordinator():
    """KafkaApis.handleOffsetCommitRequest: when no partition of the request exists, the broker
    answers at once, whichever broker it is; no group is created."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})
    request = OffsetCommitRequest(
        "group", -1, "", (OffsetCommitRequestTopic("bar", (OffsetCommitRequestPartition(0, 1),)),)
    )
    expected = OffsetCommitResponse(
        (
            OffsetCommitResponseTopic(
                "bar", (OffsetCommitResponsePartition(0, Errors.UNKNOWN_TOPIC_OR_PARTITION),)
            ),
        )
    )
    for node in d.cluster.broker_nodes:
        assert ask(d, request, node) == expected
    assert d.cluster.group("group") is None and d.records("group") == ()


def test_offset_commit_version_0_is_unsupported():
    """KafkaApis.handleOffsetCommitRequest: version 0 commits went to ZooKeeper, which a KRaft
    broker (the only kind running this coordinator) refuses: every partition of the request gets
    UNSUPPORTED_VERSION, unknown ones included, and nothing is committed. If no partition of it
    exists, the topic check answers first. Version 1 reaches the coordinator."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})

    def request(version: int, *topics: str) -> OffsetCommitRequest:
        return OffsetCommitRequest(
            "group",
            -1,
            "",
            tuple(
                OffsetCommitRequestTopic(t, (OffsetCommitRequestPartition(0, 1),)) for t in topics
            ),
            api_version=version,
        )

    def errors(response: OffsetCommitResponse) -> list[tuple[str, Errors]]:
        return [(t.name, p.error_code) for t in response.topics for p in t.partitions]

    node = d.coordinator("group")
    assert errors(ask(d, request(0, "foo", "bar"), node)) == [
        ("foo", Errors.UNSUPPORTED_VERSION),
        ("bar", Errors.UNSUPPORTED_VERSION),
    ]
    assert d.cluster.group("group") is None
    assert errors(ask(d, request(0, "bar"), node)) == [("bar", Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert errors(ask(d, request(1, "foo"), node)) == [("foo", Errors.NONE)]


def test_offset_commit_to_a_deleted_topic_is_refused():
    """KafkaApis.handleOffsetCommitRequest after a topic deletion: the deleted topic's offsets are
    tombstoned (onPartitionsDeleted), and a consumer committing its old position of that topic
    gets UNKNOWN_TOPIC_OR_PARTITION instead of bringing the offset back."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1, "bar": 1})
    committed(d, "group", {("foo", 0): 7, ("bar", 0): 8})
    d.apply(d.cluster.delete_topic("foo", d.now))
    response = commit(d, "group", {("foo", 0): 9, ("bar", 0): 10})
    assert {(t.name, p.error_code) for t in response.topics for p in t.partitions} == {
        ("foo", Errors.UNKNOWN_TOPIC_OR_PARTITION),
        ("bar", Errors.NONE),
    }
    assert d.cluster.committed_offsets("group") == {("bar", 0): 10}


# =================================================================================================
# DeleteGroups
# =================================================================================================


def test_delete_groups():
    """Port of GroupCoordinatorServiceTest.testDeleteGroups: the groups are deleted by the
    coordinator of each one's partition; a partition still loading answers
    COORDINATOR_LOAD_IN_PROGRESS for its groups; the results come partition by partition in the
    service's HashMap order (0, 1, 2 here), not in the order of the request."""
    d = two_brokers_with_a_loading_partition(topics={"foo": 1})
    assert [d.cluster.partition_for(f"group-id-{i}") for i in (1, 2, 3)] == [2, 0, 1]
    for g in ("group-id-1", "group-id-2"):
        committed(d, g, {("foo", 0): 1})
    fail_broker_1(d)
    assert delete(d, "broker-0", "group-id-1", "group-id-2", "group-id-3") == (
        DeletableGroupResult("group-id-2", Errors.NONE),
        DeletableGroupResult("group-id-3", Errors.COORDINATOR_LOAD_IN_PROGRESS),
        DeletableGroupResult("group-id-1", Errors.NONE),
    )
    assert d.cluster.group("group-id-1") is None and d.cluster.group("group-id-2") is None


def test_delete_groups_names_each_group_once():
    """KafkaApis.handleDeleteGroupsRequest deletes the distinct group names: a group named twice
    is deleted and answered once."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})
    committed(d, "group-id", {("foo", 0): 1})
    assert delete(d, d.coordinator("group-id"), "group-id", "group-id") == (
        DeletableGroupResult("group-id", Errors.NONE),
    )


# GroupCoordinatorServiceTest.testGroupHeartbeatWithExceptionSource, by Kafka error code: the error
# a failed write of the coordinator becomes (CoordinatorOperationExceptionHelper).
OPERATION_ERRORS = [
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.REQUEST_TIMED_OUT, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    (Errors.KAFKA_STORAGE_ERROR, Errors.NOT_COORDINATOR),
    (Errors.MESSAGE_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.RECORD_LIST_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.INVALID_FETCH_SIZE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.INVALID_REQUEST, Errors.INVALID_REQUEST),
    # Not in Kafka's table, but in the helper it exercises:
    (Errors.NETWORK_EXCEPTION, Errors.COORDINATOR_LOAD_IN_PROGRESS),
]


@pytest.mark.parametrize(("append_error", "expected"), OPERATION_ERRORS)
def test_delete_groups_with_exception(append_error, expected):
    """Port of GroupCoordinatorServiceTest.testDeleteGroupsWithException: when the coordinator's
    write of the tombstones fails, the group's result carries the failure as the service maps it;
    the group is not deleted."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})
    committed(d, "group-id", {("foo", 0): 1})
    d.cluster.fail_next_append(append_error)
    assert delete(d, d.coordinator("group-id"), "group-id") == (
        DeletableGroupResult("group-id", expected),
    )
    assert d.cluster.committed_offsets("group-id") == {("foo", 0): 1}


@pytest.mark.parametrize(("append_error", "expected"), OPERATION_ERRORS)
def test_offset_commit_with_exception(append_error, expected):
    """The same mapping for OffsetCommit (GroupCoordinatorService.commitOffsets): a failed write
    of the offsets is answered with the mapped error for every partition."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 2})
    d.cluster.fail_next_append(append_error)
    response = commit(d, "group-id", {("foo", 0): 1, ("foo", 1): 2})
    assert [p.error_code for t in response.topics for p in t.partitions] == [expected, expected]
    assert d.cluster.committed_offsets("group-id") == {}


def same_partition_groups(d: Driver, n: int) -> list[str]:
    """``n`` group ids sharing one ``__consumer_offsets`` partition (one shard)."""
    p = d.cluster.partition_for("group-id-0")
    return [
        f"group-id-{i}" for i in range(100000) if d.cluster.partition_for(f"group-id-{i}") == p
    ][:n]


def test_shard_delete_groups():
    """Port of GroupCoordinatorShardTest.testDeleteGroups: a shard deletes its groups with one
    write: each group's offset tombstones, then its group tombstone, group after group; every
    group's result is NONE. The write is one batch: when it fails, no group is deleted and each
    gets the error."""
    d = Driver(SERVICE_CONFIG, topics={"topic-name": 1})
    first, second = same_partition_groups(d, 2)
    for g in (first, second):
        committed(d, g, {("topic-name", 0): 1})
    node = d.coordinator(first)
    d.cluster.fail_next_append(Errors.NOT_ENOUGH_REPLICAS)
    assert delete(d, node, first, second) == (
        DeletableGroupResult(first, Errors.COORDINATOR_NOT_AVAILABLE),
        DeletableGroupResult(second, Errors.COORDINATOR_NOT_AVAILABLE),
    )
    assert d.cluster.group(first) is not None and d.cluster.group(second) is not None
    since = len(d.records(first))
    assert delete(d, node, first, second) == (
        DeletableGroupResult(first, Errors.NONE),
        DeletableGroupResult(second, Errors.NONE),
    )
    assert [(r.key, r.value) for r in d.records(first)[since:]] == [
        (OffsetCommitKey(first, "topic-name", 0), None),
        (GroupMetadataKey(first), None),
        (OffsetCommitKey(second, "topic-name", 0), None),
        (GroupMetadataKey(second), None),
    ]
    assert d.cluster.group(first) is None and d.cluster.group(second) is None


def test_shard_delete_groups_invalid_group_id():
    """Port of GroupCoordinatorShardTest.testDeleteGroupsInvalidGroupId: a group that may not be
    deleted gets its own error and writes nothing; the others of the shard are deleted."""
    d = Driver(SERVICE_CONFIG, topics={"topic-name": 1})
    first, busy, third = same_partition_groups(d, 3)
    for g in (first, third):
        committed(d, g, {("topic-name", 0): 1})
    d.stable_group(("A",), group_id=busy, session=1000)
    since = len(d.records(first))
    assert delete(d, d.coordinator(first), first, busy, third) == (
        DeletableGroupResult(first, Errors.NONE),
        DeletableGroupResult(busy, Errors.NON_EMPTY_GROUP),
        DeletableGroupResult(third, Errors.NONE),
    )
    assert [(r.key, r.value) for r in d.records(first)[since:]] == [
        (OffsetCommitKey(first, "topic-name", 0), None),
        (GroupMetadataKey(first), None),
        (OffsetCommitKey(third, "topic-name", 0), None),
        (GroupMetadataKey(third), None),
    ]
    assert d.state(busy) == "Stable"


# =================================================================================================
# onPartitionsDeleted
# =================================================================================================


def test_on_partitions_deleted():
    """Port of GroupCoordinatorServiceTest.testOnPartitionsDeleted: a topic deletion is written by
    every coordinator the brokers run; the one still loading fails (COORDINATOR_LOAD_IN_PROGRESS),
    which is swallowed: the others delete their groups' offsets of the topic all the same."""
    d = two_brokers_with_a_loading_partition(topics={"foo": 1, "bar": 1})
    groups = [group_in(d, p) for p in range(3)]
    for g in groups:
        committed(d, g, {("foo", 0): 1, ("bar", 0): 2})
    fail_broker_1(d)
    d.apply(d.cluster.delete_topic("foo", d.now))
    d.advance(d.now + LOAD_TIME)
    assert [d.cluster.committed_offsets(g) for g in groups] == [
        {("bar", 0): 2},
        {("foo", 0): 1, ("bar", 0): 2},  # still loading: kept, as Kafka's write to it fails
        {("bar", 0): 2},
    ]


# =================================================================================================
# The shard: replay, loading, unloading, the cleanup job
# =================================================================================================


def append(d: Driver, group_id: str, key, value) -> None:
    """Write one record into the group's partition, as another coordinator wrote it."""
    d.cluster.offsets_log.append(d.cluster.partition_for(group_id), [(key, value)], d.now)


def test_replay_offset_commit():
    """Port of GroupCoordinatorShardTest.testReplayOffsetCommit: an OffsetCommit record is replayed
    into the offset manager when the partition is loaded."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 1})
    append(d, "group", OffsetCommitKey("group", "foo", 0), OffsetCommitValue(42, 3, "m", 7))
    d.reload("group")
    assert d.shard("group").offset_manager.offsets["group"] == {
        ("foo", 0): OffsetCommitValue(42, 3, "m", 7)
    }


def test_replay_offset_commit_with_null_value():
    """Port of GroupCoordinatorShardTest.testReplayOffsetCommitWithNullValue: a tombstone for an
    offset is replayed as its removal."""
    d = Driver(SERVICE_CONFIG, topics={"foo": 2})
    committed(d, "group", {("foo", 0): 1, ("foo", 1): 2})
    append(d, "group", OffsetCommitKey("group", "foo", 0), None)
    d.reload("group")
    assert d.cluster.committed_offsets("group") == {("foo", 1): 2}


def test_replay_group_metadata():
    """Port of GroupCoordinatorShardTest.testReplayGroupMetadata: a GroupMetadata record is
    replayed into the group manager (a group without members comes back Empty)."""
    d = Driver(SERVICE_CONFIG)
    append(d, "group", GroupMetadataKey("group"), GroupMetadataValue("consumer", 4, None, None, 0))
    d.reload("group")
    view = d.cluster.group("group")
    assert (view.state, view.generation_id, view.protocol_type) == ("Empty", 4, "consumer")


def test_replay_group_metadata_with_null_value():
    """Port of GroupCoordinatorShardTest.testReplayGroupMetadataWithNullValue: a group tombstone is
    replayed as the group's removal."""
    d = Driver(SERVICE_CONFIG)
    d.stable_group(("A",), group_id="group", session=1000)
    append(d, "group", GroupMetadataKey("group"), None)
    d.reload("group")
    assert d.cluster.group("group") is None


def test_on_loaded():
    """Port of GroupCoordinatorShardTest.testOnLoaded: once the partition is loaded the group
    manager's onLoaded runs (every member gets a session timer from the load time) and the
    cleanup job is scheduled."""
    d = Driver(config(load_time_ms=LOAD_TIME))
    ids, _gen = d.stable_group(("A",), group_id="group", session=1000)
    d.now = 1000
    d.reload("group")  # fails the coordinator and waits for the load
    node = d.coordinator("group")
    p = d.cluster.partition_for("group")
    assert d.deadline(f"{node}/heartbeat-group-{ids['A']}") == d.now + 1000
    assert d.deadline(f"{node}/expire-offsets-{p}") == d.now + 600000


def test_schedule_cleanup_group_metadata():
    """Port of GroupCoordinatorShardTest.testScheduleCleanupGroupMetadata: the cleanup job runs
    every offsets.retention.check.interval.ms from the load, is scheduled again after each run,
    and is cancelled when the partition is unloaded. (groupsim runs it only while the shard holds
    groups, docs/coordinator.md; this shard holds one.)"""
    d = Driver(config(offsets_retention_check_interval_ms=1000, load_time_ms=LOAD_TIME))
    d.stable_group(("A",), group_id="group", session=50000)
    d.reload("group")
    node = d.coordinator("group")
    key = f"{node}/expire-offsets-{d.cluster.partition_for('group')}"
    assert d.deadline(key) == d.now + 1000
    d.advance(d.now + 1000)
    assert d.deadline(key) == d.now + 1000
    d.apply(d.cluster.fail_broker(node, d.now))
    assert d.deadline(key) is None


def test_cleanup_group_metadata():
    """Port of GroupCoordinatorShardTest.testCleanupGroupMetadata: the cleanup job writes the
    tombstones of the expired offsets and of the groups they leave empty in one batch; a group with
    nothing expired is left alone."""
    d = Driver(config(offsets_retention_check_interval_ms=1000), topics={"topic": 1})
    group_id, other = same_partition_groups(d, 2)
    committed(d, group_id, {("topic", 0): 1})
    d.now = 24 * 60_000 - 1000
    committed(d, other, {("topic", 0): 2})
    since = len(d.records(group_id))
    d.advance(24 * 60_000)
    assert [(r.key, r.value) for r in d.records(group_id)[since:]] == [
        (OffsetCommitKey(group_id, "topic", 0), None),
        (GroupMetadataKey(group_id), None),
    ]
    assert d.cluster.group(group_id) is None
    assert d.cluster.committed_offsets(other) == {("topic", 0): 2}


def test_cleanup_group_metadata_is_one_write():
    """Around the port of testCleanupGroupMetadata: the cleanup of a shard is one
    CoordinatorResult, so one failed write loses the whole run (no group's offsets expire) and the
    next run writes everything."""
    d = Driver(config(offsets_retention_check_interval_ms=1000), topics={"topic": 1})
    groups = same_partition_groups(d, 2)
    for g in groups:
        committed(d, g, {("topic", 0): 1})
    d.advance(24 * 60_000 - 1)
    d.cluster.fail_next_append(Errors.NOT_ENOUGH_REPLICAS)
    d.advance(24 * 60_000)
    assert [d.cluster.committed_offsets(g) for g in groups] == [{("topic", 0): 1}] * 2
    d.advance(24 * 60_000 + 1000)
    assert [d.cluster.group(g) for g in groups] == [None, None]


def test_on_unloaded():
    """Port of GroupCoordinatorShardTest.testOnUnloaded: unloading cancels every timer of the shard
    (the cleanup job included) and runs the group manager's onUnloaded (the groups become Dead)."""
    d = Driver(SERVICE_CONFIG)
    d.stable_group(("A",), group_id="group", session=1000)
    shard = d.shard("group")
    assert shard.timer.timers
    d.apply(d.cluster.fail_broker(d.coordinator("group"), d.now))
    assert shard.timer.timers == {} and shard.group_manager.groups["group"].state == DEAD
    assert not [key for key in d.timers if str(key).startswith(f"{shard.node}/")]
