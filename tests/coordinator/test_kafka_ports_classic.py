"""Ports of Kafka's GroupMetadataManagerTest (its classic-group tests), in the harness's terms.

Kafka's tests call GroupMetadataManager directly, with the defaults of its test context
(GroupMetadataManagerTestContext): JoinGroup v3 unless the test asks for a required member id (v4)
or for skipping the assignment (the latest version, 9), session and rebalance timeouts of 500 ms,
an initial rebalance delay of 3000 ms, and protocols named "range" (and "roundrobin"). ``kjoin``
and the helpers below keep those defaults, so each port reads like its original.

* Timers: Kafka's MockCoordinatorTimer runs every timer due during a ``sleep`` at the *end* of
  the sleep; the harness fires each timer at its own deadline. Where the two differ, a port
  advances to the real deadline and says so.
* Groups: Kafka's test context creates a group directly, without a record. Here the first
  JoinGroup creates it and writes its "empty group" record (as Kafka's JoinGroup does for a new
  group), so record checks look at the records written after a given point.
* States: where a Kafka test forces a state with ClassicGroup.transitionTo, the port does the
  same with the group's state model (``force``).
* Errors Kafka's manager throws (UnknownMemberIdException, ...) are the response's error here,
  as GroupCoordinatorService turns them into one.
"""

from __future__ import annotations

import attrs
import pytest

from assignors.api import Subscription
from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.group import ClassicGroup, Member
from coordinator.log import append_error_to_response_error
from coordinator.protocol import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    ListedGroup,
    ListGroupsRequest,
    MemberIdentity,
)
from coordinator.records import GroupMetadataKey, GroupMetadataValue, MemberMetadataValue
from coordinator.state_machine import DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from members.consumer_protocol import encode_subscription

from .harness import TEST_CONFIG, Driver

GROUP = "g"
V_KNOWN = 4  # JoinGroupRequest.requiresKnownMemberId: a new dynamic member gets an id first
V_LATEST = 9  # JoinGroupRequest.supportsSkippingAssignment
SUPERSET = ("range", "roundrobin")  # JoinGroupRequestBuilder.withProtocolSuperset
LEADER_INSTANCE = "leader-instance-id"
FOLLOWER_INSTANCE = "follower-instance-id"


def config(**changes) -> CoordinatorConfig:
    """The test context's configuration with some values changed."""
    return attrs.evolve(TEST_CONFIG, **changes)


def kjoin(
    d: Driver,
    client: str,
    member_id: str = "",
    *,
    version: int = 3,
    session: int = 500,
    rebalance: int = 500,
    names: tuple[str, ...] = ("range",),
    instance_id: str | None = None,
    protocol_type: str = "consumer",
) -> int:
    """A JoinGroup with the defaults of Kafka's JoinGroupRequestBuilder; returns its correlation."""
    return d.join(
        client,
        GROUP,
        member_id,
        names=names,
        session=session,
        rebalance=rebalance,
        instance_id=instance_id,
        version=version,
        protocol_type=protocol_type,
    )


def group(d: Driver) -> ClassicGroup:
    """The coordinator's live group object (Kafka's tests read the ClassicGroup directly)."""
    return d.shard(GROUP).group_manager.groups[GROUP]


def create_group(d: Driver) -> ClassicGroup:
    """GroupMetadataManagerTestContext.createClassicGroup: an Empty group, no record written."""
    d.create_group(GROUP)
    return group(d)


def force(d: Driver, *states: str) -> None:
    """ClassicGroup.transitionTo, as Kafka's tests call it: no side effect but the state."""
    for state in states:
        group(d).model.transition_to(state)


def group_records(d: Driver, since: int = 0) -> list[GroupMetadataValue | None]:
    """The values of the GroupMetadata records of GROUP written at or after log offset ``since``."""
    return [
        r.value
        for r in d.records(GROUP)[since:]
        if isinstance(r.key, GroupMetadataKey) and r.key.group == GROUP
    ]


def write_group_record(d: Driver, value: GroupMetadataValue | None) -> None:
    """Put a GroupMetadata record for GROUP in its partition (replayed by the next load)."""
    p = d.cluster.partition_for(GROUP)
    d.cluster.offsets_log.append(p, [(GroupMetadataKey(GROUP), value)], d.now)


def members_list(d: Driver) -> tuple[JoinGroupResponseMember, ...]:
    """ClassicGroup.currentClassicGroupMembers, as the test's toJoinResponseMembers builds it."""
    view = d.cluster.group(GROUP)
    return tuple(
        JoinGroupResponseMember(
            m.member_id, m.group_instance_id, dict(m.protocols)[view.protocol_name]
        )
        for m in view.members
    )


def join_dynamic_and_complete_join(
    d: Driver,
    client: str,
    *,
    session: int = 500,
    rebalance: int = 500,
    names: tuple[str, ...] = ("range",),
):
    """GroupMetadataManagerTestContext.joinClassicGroupAsDynamicMemberAndCompleteJoin.

    The two-step (v4) join of a first dynamic member, then the initial delay: generation 1.
    """
    _member_id, corr = d.join_dynamic(
        client, GROUP, names=names, session=session, rebalance=rebalance, version=V_KNOWN
    )
    assert d.response(client, corr) is None
    d.advance(d.now + 3000)
    r = d.response(client, corr)
    assert r is not None and r.error_code == Errors.NONE, r
    return r


def join_and_complete_rebalance(d: Driver, client: str = "L"):
    """joinClassicGroupAsDynamicMemberAndCompleteRebalance: one dynamic member, Stable, gen 1."""
    r = join_dynamic_and_complete_join(d, client, session=5000, rebalance=10000)
    assert r.generation_id == 1 and d.state() == "CompletingRebalance"
    since = len(d.records())
    s = d.response(client, d.sync(client, r.member_id, 1))
    assert s.error_code == Errors.NONE and d.state() == "Stable"
    (record,) = group_records(d, since)
    assert [m.member_id for m in record.members] == [r.member_id]
    return r


def join_static_and_complete_join(
    d: Driver,
    client: str,
    instance_id: str,
    *,
    version: int = 3,
    session: int = 500,
    rebalance: int = 500,
    names: tuple[str, ...] = ("range",),
):
    """joinClassicGroupAndCompleteJoin for a static member: one join, then the join phase ends."""
    corr = kjoin(
        d,
        client,
        version=version,
        session=session,
        rebalance=rebalance,
        names=names,
        instance_id=instance_id,
    )
    d.complete_join()
    r = d.response(client, corr)
    assert r is not None and r.error_code == Errors.NONE, r
    return r


@attrs.frozen
class Rebalanced:
    """GroupMetadataManagerTestContext.RebalanceResult."""

    generation_id: int
    leader_id: str
    leader_assignment: bytes
    follower_id: str
    follower_assignment: bytes


def static_members_join_and_rebalance(
    d: Driver, rebalance: int = 10000, session: int = 5000
) -> Rebalanced:
    """GroupMetadataManagerTestContext.staticMembersJoinAndRebalance.

    Two static members ("leader-instance-id" first) join with range and roundrobin, the join phase
    ends (the initial delay is extended once by the second member), the leader syncs an assignment
    (one record), the follower syncs (no record): Stable, generation 1.
    """
    corrs = {
        c: kjoin(d, c, names=SUPERSET, instance_id=i, rebalance=rebalance, session=session)
        for c, i in (("L", LEADER_INSTANCE), ("F", FOLLOWER_INSTANCE))
    }
    assert all(d.response(c, corr) is None for c, corr in corrs.items())
    d.complete_join()
    rl, rf = d.response("L", corrs["L"]), d.response("F", corrs["F"])
    assert rl.error_code == rf.error_code == Errors.NONE
    assert rl.generation_id == rf.generation_id == 1
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and len(view.members) == 2
    leader, follower = rl.member_id, rf.member_id
    assert view.leader_id == leader
    since = len(d.records())
    ls = d.response(
        "L",
        d.sync(
            "L",
            leader,
            1,
            assignments={leader: b"\x01", follower: b"\x02"},
            instance_id=LEADER_INSTANCE,
        ),
    )
    (record,) = group_records(d, since)
    assert {m.member_id: m.assignment for m in record.members} == {
        leader: b"\x01",
        follower: b"\x02",
    }
    assert ls.error_code == Errors.NONE and d.state() == "Stable"
    fs = d.response("F", d.sync("F", follower, 1, instance_id=FOLLOWER_INSTANCE))
    assert fs.error_code == Errors.NONE and len(d.records()) == since + 1
    view = d.cluster.group(GROUP)
    assert view.state == "Stable" and len(view.members) == 2 and view.generation_id == 1
    return Rebalanced(1, leader, ls.assignment, follower, fs.assignment)


def join_with_n_members(
    d: Driver, n: int, rebalance: int, session: int
) -> list[tuple[str, object]]:
    """GroupMetadataManagerTestContext.joinWithNMembers: n dynamic members in CompletingRebalance.

    Returns (client, JoinGroup response) in join order; the first client is the leader.
    """
    clients = [f"M{i}" for i in range(n)]
    kw = {"version": V_KNOWN, "rebalance": rebalance, "session": session}
    ids = {}
    for c in clients:
        first = d.response(c, kjoin(d, c, **kw))
        assert first.error_code == Errors.MEMBER_ID_REQUIRED
        ids[c] = first.member_id
    corrs = {c: kjoin(d, c, ids[c], **kw) for c in clients}
    d.advance(d.now + 3000)  # the initial delay, extended: members joined during it
    assert all(d.response(c, corrs[c]) is None for c in clients)
    d.complete_join()
    out = [(c, d.response(c, corrs[c])) for c in clients]
    assert all(r.error_code == Errors.NONE for _, r in out)
    view = d.cluster.group(GROUP)
    assert len(view.members) == n and view.state == "CompletingRebalance"
    return out


@attrs.frozen
class PendingGroup:
    """GroupMetadataManagerTestContext.PendingMemberGroupResult (plus the parked joins)."""

    leader_id: str
    follower_id: str
    pending_id: str
    leader_join: int
    follower_join: int


def setup_group_with_pending_member(d: Driver) -> PendingGroup:
    """GroupMetadataManagerTestContext.setupGroupWithPendingMember.

    A leader and a follower (dynamic, v3, rebalance 10000, session 5000) in a Stable generation 2;
    the leader rejoins (PreparingRebalance), a new member gets a pending id (session 2500), the
    follower rejoins: two members waiting to join, one pending id.
    """
    kw = {"rebalance": 10000, "session": 5000}
    leader = join_dynamic_and_complete_join(d, "L", **kw).member_id
    since = len(d.records())
    s = d.response("L", d.sync("L", leader, 1, assignments={leader: b""}))
    assert s.error_code == Errors.NONE and len(group_records(d, since)) == 1
    cf = kjoin(d, "F", **kw)
    assert d.response("F", cf) is None
    cl = kjoin(d, "L", leader, **kw)
    rl, rf = d.response("L", cl), d.response("F", cf)
    assert rl.error_code == rf.error_code == Errors.NONE
    assert rl.generation_id == rf.generation_id and rl.leader == rf.leader == leader
    assert d.state() == "CompletingRebalance"
    follower = rf.member_id
    since = len(d.records())
    s = d.response("L", d.sync("L", leader, rl.generation_id, assignments={leader: b""}))
    assert s.error_code == Errors.NONE and len(group_records(d, since)) == 1
    assert d.state() == "Stable"
    leader_join = kjoin(d, "L", leader, **kw)
    assert d.response("L", leader_join) is None and d.state() == "PreparingRebalance"
    pending = d.response("P", kjoin(d, "P", version=V_KNOWN, rebalance=10000, session=2500))
    assert pending.error_code == Errors.MEMBER_ID_REQUIRED
    follower_join = kjoin(d, "F", follower, **kw)
    assert d.response("F", follower_join) is None
    view = d.cluster.group(GROUP)
    assert view.state == "PreparingRebalance" and len(view.members) == 2
    assert view.pending_members == (pending.member_id,)
    return PendingGroup(leader, follower, pending.member_id, leader_join, follower_join)


# =================================================================================================
# records, replay and loading
# =================================================================================================


def test_generate_records_on_new_classic_group():
    """Port of GroupMetadataManagerTest.testGenerateRecordsOnNewClassicGroup: a JoinGroup that
    creates a group and changes nothing else commits the group with an "empty group" record."""
    d = Driver()
    r = d.response("A", kjoin(d, "A", version=V_KNOWN))
    assert r.error_code == Errors.MEMBER_ID_REQUIRED
    (record,) = d.records()
    assert record.key == GroupMetadataKey(GROUP)
    assert record.value == GroupMetadataValue(
        protocol_type="", generation=0, protocol=None, leader=None, current_state_timestamp=0
    )


def test_generate_records_on_new_classic_group_failure_transforms_error():
    """Port of
    GroupMetadataManagerTest.testGenerateRecordsOnNewClassicGroupFailureTransformsError: when
    the new group's record cannot be written, the join gets the mapped error
    (NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR) and the group is rolled back."""
    d = Driver()
    d.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    r = d.response("A", kjoin(d, "A", version=V_KNOWN, instance_id="group-instance-id"))
    assert r.error_code == Errors.NOT_COORDINATOR
    assert d.cluster.group(GROUP) is None and d.records() == ()
    assert d.deadline(f"join-{GROUP}") is None and d.deadline(f"heartbeat-{GROUP}-") is None


@pytest.mark.parametrize("use_default_rebalance_timeout", [True, False])
def test_replay_group_metadata_records(use_default_rebalance_timeout):
    """Port of GroupMetadataManagerTest.testReplayGroupMetadataRecords: a GroupMetadata record
    with members loads as a Stable group with one-protocol members; a rebalance timeout of -1
    (an old record) falls back to the session timeout."""
    d = Driver()
    subscription = encode_subscription(Subscription(["foo"]))
    members = tuple(
        MemberMetadataValue(
            member_id=f"member-{i}",
            group_instance_id=f"group-instance-id-{i}",
            client_id=f"client-{i}",
            client_host=f"host-{i}",
            rebalance_timeout=-1 if use_default_rebalance_timeout else 9000,
            session_timeout=4000,
            subscription=subscription,
            assignment=b"\x02",
        )
        for i in range(2)
    )
    d.now = 1234
    write_group_record(d, GroupMetadataValue("consumer", 1, "range", "member-0", 1234, members))
    d.reload()
    view = d.cluster.group(GROUP)
    assert view.state == "Stable" and view.generation_id == 1
    assert view.protocol_type == "consumer" and view.protocol_name == "range"
    assert view.leader_id == "member-0" and group(d).state_timestamp_ms == 1234
    assert sorted(view.member_ids) == ["member-0", "member-1"]
    for i in range(2):
        m = view.member(f"member-{i}")
        assert m.group_instance_id == f"group-instance-id-{i}"
        assert (m.client_id, m.client_host) == (f"client-{i}", f"host-{i}")
        assert m.rebalance_timeout_ms == (4000 if use_default_rebalance_timeout else 9000)
        assert m.session_timeout_ms == 4000
        assert m.protocols == (("range", subscription),) and m.assignment == b"\x02"
    assert group(d).subscribed_topics == frozenset({"foo"})


def test_on_classic_group_state_transition_on_loading():
    """Port of GroupMetadataManagerTest.testOnClassicGroupStateTransitionOnLoading (its
    behaviour; the Java test checks a metrics gauge): whatever number of records came before,
    the last record of a group decides, so a final tombstone loads no group."""
    d = Driver()
    for _ in range(5):
        write_group_record(d, GroupMetadataValue("", 0, None, None, 0))
    for _ in range(4):
        write_group_record(d, None)
    d.reload()
    assert d.cluster.group(GROUP) is None


# =================================================================================================
# JoinGroup: group.max.size
# =================================================================================================


def test_join_group_should_receive_error_if_group_over_max_size():
    """Port of GroupMetadataManagerTest.testJoinGroupShouldReceiveErrorIfGroupOverMaxSize: with
    group.max.size 10, ten new members are parked and the eleventh is turned away at once."""
    d = Driver(config(group_max_size=10))
    corrs = [kjoin(d, f"C{i}") for i in range(10)]
    assert all(d.response(f"C{i}", c) is None for i, c in enumerate(corrs))
    r = d.response("C10", kjoin(d, "C10"))
    assert r.error_code == Errors.GROUP_MAX_SIZE_REACHED and r.member_id == ""
    assert len(d.records()) == 1  # only the new group's record


def successes(d: Driver, answered: list[tuple[str, int]], failure: Errors) -> list:
    """verifyClassicGroupJoinResponses: every join is answered, NONE or ``failure``."""
    out = []
    for client, corr in answered:
        r = d.response(client, corr)
        assert r is not None, f"{client} not answered"
        assert r.error_code in (Errors.NONE, failure), r
        out.append(r)
    return out


def test_dynamic_members_join_group_with_max_size_and_required_known_member():
    """Port of
    GroupMetadataManagerTest.testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember:
    eleven v4 members all get ids (pending ids do not count); of their second joins ten are
    accepted and one is rejected; in CompletingRebalance the ten may rejoin, the other is
    rejected again."""
    d = Driver(config(group_max_size=10, group_initial_rebalance_delay_ms=50))
    clients = [f"C{i}" for i in range(11)]
    first = successes(
        d, [(c, kjoin(d, c, version=V_KNOWN)) for c in clients], Errors.MEMBER_ID_REQUIRED
    )
    assert all(r.error_code == Errors.MEMBER_ID_REQUIRED for r in first)
    ids = [r.member_id for r in first]
    view = d.cluster.group(GROUP)
    assert view.state == "Empty" and view.members == () and len(view.pending_members) == 11
    second = [(c, kjoin(d, c, ids[i], version=V_KNOWN)) for i, c in enumerate(clients)]
    d.advance(d.now + 50)  # the initial delay, extended: members joined during it
    assert d.state() == "PreparingRebalance"
    d.advance(d.now + 50)
    answered = successes(d, second, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.pending_members == ()
    assert view.state == "CompletingRebalance"
    third = [(c, kjoin(d, c, ids[i], version=V_KNOWN)) for i, c in enumerate(clients)]
    answered = successes(d, third, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10


def test_dynamic_members_join_group_with_max_size_and_not_required_known_member():
    """Port of
    GroupMetadataManagerTest.testDynamicMembersJoinGroupWithMaxSizeAndNotRequiredKnownMember:
    eleven v3 members join at once; the eleventh is rejected (ten are waiting); after the join
    phase the ten rejoin in CompletingRebalance and are answered at once."""
    d = Driver(config(group_max_size=10, group_initial_rebalance_delay_ms=50))
    clients = [f"C{i}" for i in range(11)]
    first = [(c, kjoin(d, c)) for c in clients]
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "PreparingRebalance"
    assert sum(m.awaiting_join for m in view.members) == 10
    d.advance(d.now + 50)
    d.advance(d.now + 50)
    answered = successes(d, first, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    ids = [r.member_id for r in answered]
    second = [(c, kjoin(d, c, ids[i])) for i, c in enumerate(clients)]
    answered = successes(d, second, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "CompletingRebalance"
    assert not any(m.awaiting_join for m in view.members)


def test_static_members_join_group_with_max_size_of_ten():
    """Port of GroupMetadataManagerTest.testStaticMembersJoinGroupWithMaxSize (Kafka's sizes; a
    smaller variant is in test_kafka_ports): eleven static members join, the eleventh is
    rejected; after the join phase the ten rejoin with their ids and the eleventh, still without
    an id, is rejected again."""
    d = Driver(config(group_max_size=10, group_initial_rebalance_delay_ms=50))
    clients = [f"S{i}" for i in range(11)]
    first = [(c, kjoin(d, c, instance_id=f"instance-id-{i}")) for i, c in enumerate(clients)]
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "PreparingRebalance"
    d.advance(d.now + 50)
    d.advance(d.now + 50)
    answered = successes(d, first, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    second = [
        (c, kjoin(d, c, answered[i].member_id, instance_id=f"instance-id-{i}"))
        for i, c in enumerate(clients)
    ]
    answered = successes(d, second, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "CompletingRebalance"
    assert not any(m.awaiting_join for m in view.members)


def test_dynamic_members_can_rejoin_group_with_max_size_while_rebalancing_of_ten():
    """Port of
    GroupMetadataManagerTest.testDynamicMembersCanRejoinGroupWithMaxSizeWhileRebalancing
    (Kafka's sizes; a smaller variant is in test_kafka_ports): in PreparingRebalance members
    already waiting may send JoinGroup again; the one over the limit is still rejected."""
    d = Driver(config(group_max_size=10, group_initial_rebalance_delay_ms=50))
    clients = [f"C{i}" for i in range(11)]
    first = [d.response(c, kjoin(d, c, version=V_KNOWN)) for c in clients]
    assert all(r.error_code == Errors.MEMBER_ID_REQUIRED for r in first)
    view = d.cluster.group(GROUP)
    assert view.members == () and len(view.pending_members) == 11 and view.state == "Empty"
    ids = [r.member_id for r in first]
    records = len(d.records())
    for i, c in enumerate(clients):
        kjoin(d, c, ids[i], version=V_KNOWN)
    assert len(d.records()) == records
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "PreparingRebalance"
    assert sum(m.awaiting_join for m in view.members) == 10
    third = [(c, kjoin(d, c, ids[i], version=V_KNOWN)) for i, c in enumerate(clients)]
    d.advance(d.now + 50)
    d.advance(d.now + 50)
    answered = successes(d, third, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "CompletingRebalance"
    assert not any(m.awaiting_join for m in view.members)


def test_last_joining_members_are_kicked_out_when_rejoining_group_with_max_size():
    """Port of
    GroupMetadataManagerTest.testLastJoiningMembersAreKickedOutWhenRejoiningGroupWithMaxSize: a
    group already over the limit (twelve members, limit ten) rebalances; the first ten to rejoin
    stay, the last two are rejected and removed."""
    d = Driver(config(group_max_size=10, group_initial_rebalance_delay_ms=50))
    create_group(d)
    ids = [f"client-id-{i}" for i in range(12)]

    # ClassicGroup.add, as Kafka's test adds members straight to the group, then prepareRebalance
    g = group(d)
    for member_id in ids:
        g.add(
            Member(
                member_id=member_id,
                group_instance_id=None,
                client_id="client-id",
                client_host="client-host",
                rebalance_timeout_ms=10000,
                session_timeout_ms=5000,
                protocol_type="consumer",
                protocols=(("range", b"range"),),
            )
        )
    d.prepare_rebalance("test", GROUP)
    corrs = [
        (f"C{i}", kjoin(d, f"C{i}", member_id, rebalance=10000)) for i, member_id in enumerate(ids)
    ]
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "PreparingRebalance"
    assert sum(m.awaiting_join for m in view.members) == 10
    d.complete_join()
    answered = successes(d, corrs, Errors.GROUP_MAX_SIZE_REACHED)
    assert sum(r.error_code == Errors.NONE for r in answered) == 10
    view = d.cluster.group(GROUP)
    assert len(view.members) == 10 and view.state == "CompletingRebalance"
    assert set(view.member_ids) == set(ids[:10])


# =================================================================================================
# JoinGroup: new and unknown members, protocol checks
# =================================================================================================


def test_join_group_unknown_member_new_group():
    """Port of GroupMetadataManagerTest.testJoinGroupUnknownMemberNewGroup: a JoinGroup that
    claims a member id for a group that does not exist gets UNKNOWN_MEMBER_ID, static or not,
    and creates nothing."""
    d = Driver()
    assert d.response("A", kjoin(d, "A", "member-id")).error_code == Errors.UNKNOWN_MEMBER_ID
    r = d.response("A", kjoin(d, "A", "member-id", instance_id="group-instance-id"))
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.records() == () and d.cluster.group(GROUP) is None


def test_classic_group_join_inconsistent_protocol_type():
    """Port of GroupMetadataManagerTest.testClassicGroupJoinInconsistentProtocolType: once the
    group has a member of type "consumer", a new member of type "connect" is refused."""
    d = Driver()
    join_dynamic_and_complete_join(d, "A")
    records = len(d.records())
    r = d.response("B", kjoin(d, "B", protocol_type="connect"))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL and r.member_id == ""
    assert len(d.records()) == records


def test_join_group_with_empty_protocol_type():
    """Port of GroupMetadataManagerTest.testJoinGroupWithEmptyProtocolType: an empty protocol
    type is refused (dynamic v3 or static at the latest version)."""
    d = Driver()
    create_group(d)
    r = d.response("A", kjoin(d, "A", protocol_type=""))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    r = d.response(
        "A", kjoin(d, "A", protocol_type="", instance_id="group-instance-id", version=V_LATEST)
    )
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert d.records() == ()


def test_join_group_with_empty_group_protocol():
    """Port of GroupMetadataManagerTest.testJoinGroupWithEmptyGroupProtocol: a JoinGroup that
    names no protocol is refused."""
    d = Driver()
    create_group(d)
    r = d.response("A", kjoin(d, "A", names=()))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL and d.records() == ()


def test_new_member_join_expiration():
    """Port of GroupMetadataManagerTest.testNewMemberJoinExpiration: during a long rebalance a
    new member's parked JoinGroup expires after the new-member join timeout (300 s), whatever
    its session timeout: it gets UNKNOWN_MEMBER_ID and is removed."""
    d = Driver()
    new_member_timeout = d.cluster.config.new_member_join_timeout_ms
    first = join_dynamic_and_complete_join(
        d, "A", session=5000 + new_member_timeout, rebalance=2 * new_member_timeout
    )
    assert first.leader == first.member_id
    assert not any(m.is_new for m in d.cluster.group(GROUP).members)
    corr = kjoin(d, "B", session=5000, rebalance=5000)
    assert d.response("B", corr) is None
    view = d.cluster.group(GROUP)
    assert len(view.members) == 2
    (new,) = [m for m in view.members if m.is_new]
    assert new.member_id != first.member_id
    d.advance(d.now + new_member_timeout)
    assert d.response("B", corr).error_code == Errors.UNKNOWN_MEMBER_ID
    view = d.cluster.group(GROUP)
    assert view.member_ids == (first.member_id,) and not view.members[0].is_new


def test_join_group_inconsistent_group_protocol():
    """Port of GroupMetadataManagerTest.testJoinGroupInconsistentGroupProtocol: while the first
    member (range) waits, a member that only knows roundrobin is refused at once; the first
    completes after the initial delay."""
    d = Driver()
    create_group(d)
    corr = kjoin(d, "A")
    assert d.response("A", corr) is None
    other = d.response("B", kjoin(d, "B", names=("roundrobin",)))
    assert other.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    d.advance(d.now + 3000)
    assert d.response("A", corr).error_code == Errors.NONE


def test_join_group_second_join_inconsistent_protocol():
    """Port of GroupMetadataManagerTest.testJoinGroupSecondJoinInconsistentProtocol: a pending
    member's second JoinGroup without a protocol is refused, and its id stays usable: the next
    JoinGroup with a protocol is accepted."""
    d = Driver()
    create_group(d)
    first = d.response("A", kjoin(d, "A", version=V_KNOWN))
    assert first.error_code == Errors.MEMBER_ID_REQUIRED
    r = d.response("A", kjoin(d, "A", first.member_id, version=V_KNOWN, names=()))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    corr = kjoin(d, "A", first.member_id, version=V_KNOWN)
    assert d.response("A", corr) is None
    d.advance(d.now + 3000)
    assert d.response("A", corr).error_code == Errors.NONE
    assert d.records() == ()  # the group existed before; nothing to write yet


def test_static_member_join_as_first_member():
    """Port of GroupMetadataManagerTest.testStaticMemberJoinAsFirstMember: a static member can
    start a group (no MEMBER_ID_REQUIRED round) and completes the join phase."""
    d = Driver()
    create_group(d)
    r = join_static_and_complete_join(d, "A", "group-instance-id", version=V_LATEST)
    assert r.generation_id == 1 and r.leader == r.member_id


def test_static_member_rejoin_with_explicit_unknown_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinWithExplicitUnknownMemberId: a
    static member's JoinGroup with a member id that is not the one the instance id maps to is
    fenced (FENCED_INSTANCE_ID)."""
    d = Driver()
    create_group(d)
    join_static_and_complete_join(
        d, "A", "group-instance-id", version=V_LATEST, session=5000, rebalance=5000
    )
    r = d.response(
        "A",
        kjoin(
            d,
            "A",
            "unknown-member-id",
            instance_id="group-instance-id",
            session=5000,
            rebalance=5000,
        ),
    )
    assert r.error_code == Errors.FENCED_INSTANCE_ID


def test_join_group_unknown_consumer_existing_group():
    """Port of GroupMetadataManagerTest.testJoinGroupUnknownConsumerExistingGroup: a dynamic
    JoinGroup with a member id the group does not know gets UNKNOWN_MEMBER_ID."""
    d = Driver()
    create_group(d)
    join_dynamic_and_complete_join(d, "A", session=5000, rebalance=5000)
    records = len(d.records())
    r = d.response("B", kjoin(d, "B", "other-member-id", session=5000, rebalance=5000))
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and len(d.records()) == records


def test_join_group_unknown_consumer_new_dead_group():
    """Port of GroupMetadataManagerTest.testJoinGroupUnknownConsumerNewDeadGroup: a new member's
    JoinGroup to a Dead group gets COORDINATOR_NOT_AVAILABLE."""
    d = Driver()
    create_group(d)
    force(d, DEAD)
    r = d.response("A", kjoin(d, "A"))
    assert r.error_code == Errors.COORDINATOR_NOT_AVAILABLE and d.records() == ()


def test_join_group_protocol_type_is_not_provided_when_an_error_occurs():
    """Port of GroupMetadataManagerTest.testJoinGroupProtocolTypeIsNotProvidedWhenAnErrorOccurs:
    an error JoinGroup response carries no protocol type."""
    d = Driver()
    r = d.response("A", kjoin(d, "A", "member-id"))
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.protocol_type is None
    assert d.records() == ()


def test_join_group_returns_the_protocol_type():
    """Port of GroupMetadataManagerTest.testJoinGroupReturnsTheProtocolType: the JoinGroup
    responses of a completed join phase carry the group's protocol type."""
    d = Driver()
    create_group(d)
    leader, member = kjoin(d, "A"), kjoin(d, "B")
    assert d.response("A", leader) is None and d.response("B", member) is None
    d.advance(d.now + 3000)
    for client, corr in (("A", leader), ("B", member)):
        r = d.response(client, corr)
        assert r.error_code == Errors.NONE and r.protocol_type == "consumer"


# =================================================================================================
# JoinGroup: the initial rebalance delay
# =================================================================================================


def test_delay_initial_rebalance_by_group_initial_rebalance_delay_on_empty_group():
    """Port of
    GroupMetadataManagerTest.testDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup:
    the first rebalance of an Empty group waits group.initial.rebalance.delay.ms."""
    d = Driver()
    create_group(d)
    corr = kjoin(d, "A")
    assert d.response("A", corr) is None
    d.advance(d.now + 1500)
    assert d.response("A", corr) is None
    d.advance(d.now + 1501)
    assert d.response("A", corr).error_code == Errors.NONE


def test_reset_rebalance_delay_when_new_member_joins_group_during_initial_rebalance():
    """Port of
    GroupMetadataManagerTest.testResetRebalanceDelayWhenNewMemberJoinsGroupDuringInitialRebalance:
    a member joining within the initial delay extends it by another delay."""
    d = Driver()
    create_group(d)
    first = kjoin(d, "A", rebalance=9000)
    d.advance(2999)
    second = kjoin(d, "B", rebalance=9000)
    assert d.response("B", second) is None
    d.advance(3001)
    d.advance(4502)  # past the first delay: still waiting
    assert d.response("A", first) is None and d.response("B", second) is None
    d.advance(6002)  # past the extended delay
    assert d.response("A", first).error_code == Errors.NONE
    assert d.response("B", second).error_code == Errors.NONE


def test_delay_rebalance_upto_rebalance_timeout():
    """Port of GroupMetadataManagerTest.testDelayRebalanceUptoRebalanceTimeout: the extensions
    of the initial delay stop at the rebalance timeout (6000 ms here), even though a member
    joined in the last window. Kafka's mock timer fires the extended window at 6001 (the end of
    its sleep plus 3000); the harness fires it at its deadline, 6000."""
    d = Driver()
    create_group(d)
    first, second = kjoin(d, "A", rebalance=6000), kjoin(d, "B", rebalance=6000)
    d.advance(3001)
    third = kjoin(d, "C", rebalance=6000)
    assert d.response("C", third) is None
    d.advance(5999)
    assert all(
        d.response(c, corr) is None for c, corr in zip("ABC", (first, second, third), strict=True)
    )
    d.advance(6000)
    for c, corr in zip("ABC", (first, second, third), strict=True):
        assert d.response(c, corr).error_code == Errors.NONE


def test_join_group_replace_static_member():
    """Port of GroupMetadataManagerTest.testJoinGroupReplaceStaticMember: a second JoinGroup
    from the same instance id while the first waits replaces the member: the first is fenced at
    once, the replacement waits and completes the join phase."""
    d = Driver()
    create_group(d)
    old = kjoin(d, "A", instance_id="group-instance-id", session=5000)
    assert d.response("A", old) is None
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.members[0].awaiting_join
    old_id = view.members[0].member_id
    new = kjoin(d, "A2", instance_id="group-instance-id", session=5000)
    assert d.response("A2", new) is None
    fenced = d.response("A", old)
    assert fenced.error_code == Errors.FENCED_INSTANCE_ID and fenced.member_id == old_id
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.members[0].awaiting_join
    d.advance(d.now + 3000)
    assert d.response("A2", new).error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and not view.members[0].awaiting_join


# =================================================================================================
# JoinGroup: expiry of pending and new members
# =================================================================================================


def test_heartbeat_expiration_should_remove_pending_member():
    """Port of GroupMetadataManagerTest.testHeartbeatExpirationShouldRemovePendingMember: a
    pending member id that is not used within the session timeout is dropped."""
    d = Driver()
    create_group(d)
    r = d.response("A", kjoin(d, "A", version=V_KNOWN, session=1000))
    assert r.error_code == Errors.MEMBER_ID_REQUIRED
    view = d.cluster.group(GROUP)
    assert view.members == () and view.pending_members == (r.member_id,)
    d.advance(d.now + 1000)
    assert d.cluster.group(GROUP).pending_members == ()


def test_heartbeat_expiration_should_remove_member():
    """Port of GroupMetadataManagerTest.testHeartbeatExpirationShouldRemoveMember: during a long
    initial delay a new member expires after the new-member join timeout: its JoinGroup gets
    UNKNOWN_MEMBER_ID and the join phase completes with nobody, writing an empty generation."""
    d = Driver(config(group_initial_rebalance_delay_ms=600000))
    create_group(d)
    corr = kjoin(d, "A")
    assert d.response("A", corr) is None and len(d.cluster.group(GROUP).members) == 1
    since = len(d.records())
    d.advance(d.now + d.cluster.config.new_member_join_timeout_ms)
    assert d.response("A", corr).error_code == Errors.UNKNOWN_MEMBER_ID
    view = d.cluster.group(GROUP)
    assert view.members == () and view.state == "Empty" and view.generation_id == 1
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", 1, None, None, d.now)


def test_existing_member_join_dead_group():
    """Port of GroupMetadataManagerTest.testExistingMemberJoinDeadGroup: a JoinGroup to a group
    that went Dead gets COORDINATOR_NOT_AVAILABLE."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    assert r.member_id in d.cluster.group(GROUP).member_ids
    force(d, DEAD)
    records = len(d.records())
    r = d.response("A", kjoin(d, "A"))
    assert r.error_code == Errors.COORDINATOR_NOT_AVAILABLE and len(d.records()) == records


def test_join_group_existing_pending_member_with_group_instance_id():
    """Port of
    GroupMetadataManagerTest.testJoinGroupExistingPendingMemberWithGroupInstanceIdThrowsException:
    a pending (dynamic) member id joining with an instance id makes Kafka throw
    IllegalStateException, which its runtime answers UNKNOWN_SERVER_ERROR."""
    d = Driver()
    create_group(d)
    first = d.response("A", kjoin(d, "A", version=V_KNOWN))
    assert first.error_code == Errors.MEMBER_ID_REQUIRED
    r = d.response("A", kjoin(d, "A", first.member_id, instance_id="group-instance-id"))
    assert r.error_code == Errors.UNKNOWN_SERVER_ERROR


# =================================================================================================
# JoinGroup: existing members by state
# =================================================================================================


def test_join_group_existing_member_updated_metadata_triggers_rebalance():
    """Port of
    GroupMetadataManagerTest.testJoinGroupExistingMemberUpdatedMetadataTriggersRebalance: in
    CompletingRebalance a JoinGroup with new protocols starts a rebalance, which ends at once as
    the only member has joined: generation 2, the member's protocols updated."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    assert d.cluster.group(GROUP).member(r.member_id).protocols == (("range", b"range"),)
    assert d.state() == "CompletingRebalance" and r.generation_id == 1
    again = d.response("A", kjoin(d, "A", r.member_id, names=SUPERSET))
    assert again.error_code == Errors.NONE and again.generation_id == 2
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and view.generation_id == 2
    assert [name for name, _ in view.member(r.member_id).protocols] == list(SUPERSET)


def test_join_group_as_existing_leader_triggers_rebalance_in_stable_state():
    """Port of
    GroupMetadataManagerTest.testJoinGroupAsExistingLeaderTriggersRebalanceInStableState: the
    leader's JoinGroup in Stable rebalances even with unchanged protocols."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    assert d.cluster.group(GROUP).leader_id == r.member_id
    force(d, STABLE)
    again = d.response("A", kjoin(d, "A", r.member_id))
    assert again.error_code == Errors.NONE and again.generation_id == 2
    assert d.state() == "CompletingRebalance"


def two_member_group(d: Driver):
    """The common start of two Kafka tests: a leader, then a member joining; generation 2."""
    create_group(d)
    leader = join_dynamic_and_complete_join(d, "A")
    assert leader.generation_id == 1
    member = kjoin(d, "B")
    assert d.response("B", member) is None
    rejoin = d.response("A", kjoin(d, "A", leader.leader))
    m = d.response("B", member)
    assert rejoin.error_code == m.error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and len(view.members) == 2
    assert view.generation_id == 2
    return leader.leader, m.member_id


def test_join_group_as_existing_member_with_updated_metadata_triggers_rebalance_in_stable():
    """Port of
    GroupMetadataManagerTest.testJoinGroupAsExistingMemberWithUpdatedMetadataTriggersRebalanceInStableState:
    a follower's JoinGroup with new protocols in Stable starts a rebalance that waits for the
    leader."""
    d = Driver()
    leader, member = two_member_group(d)
    force(d, STABLE)
    corr = kjoin(d, "B", member, names=SUPERSET)
    assert d.response("B", corr) is None
    assert d.response("A", kjoin(d, "A", leader)).error_code == Errors.NONE
    assert d.response("B", corr).error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and view.generation_id == 3
    assert len(view.members) == 2


def test_join_group_existing_member_does_not_trigger_rebalance_in_stable_state():
    """Port of
    GroupMetadataManagerTest.testJoinGroupExistingMemberDoesNotTriggerRebalanceInStableState: a
    follower's JoinGroup with unchanged protocols in Stable is answered with the current
    generation, without a rebalance."""
    d = Driver()
    _leader, member = two_member_group(d)
    force(d, STABLE)
    r = d.response("B", kjoin(d, "B", member))
    assert r.error_code == Errors.NONE and r.generation_id == 2
    assert d.state() == "Stable"


def test_join_group_existing_member_in_empty_state():
    """Port of GroupMetadataManagerTest.testJoinGroupExistingMemberInEmptyState: a member id
    rejoining a group that is (unexpectedly) Empty gets UNKNOWN_MEMBER_ID and generation -1."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    force(d, PREPARING_REBALANCE, EMPTY)
    again = d.response("A", kjoin(d, "A", r.member_id))
    assert again.error_code == Errors.UNKNOWN_MEMBER_ID and again.generation_id == -1


# =================================================================================================
# completing the join phase
# =================================================================================================


def test_complete_join_remove_not_yet_rejoined_dynamic_members():
    """Port of GroupMetadataManagerTest.testCompleteJoinRemoveNotYetRejoinedDynamicMembers: a
    dynamic member that does not rejoin (here: neither rejoins nor heartbeats) is dropped and
    the join phase completes with the new member alone, generation 2."""
    d = Driver()
    create_group(d)
    leader = join_dynamic_and_complete_join(d, "A", session=1000, rebalance=1000)
    assert leader.generation_id == 1
    corr = kjoin(d, "B", session=1000, rebalance=1000)
    assert d.response("B", corr) is None
    view = d.cluster.group(GROUP)
    assert len(view.members) == 2 and view.state == "PreparingRebalance"
    d.advance(d.now + 1000)
    r = d.response("B", corr)
    assert r.error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert view.member_ids == (r.member_id,) and view.generation_id == 2


def test_complete_join_phase_in_empty_state_skips_rebalance():
    """Port of GroupMetadataManagerTest.testCompleteJoinPhaseInEmptyStateSkipsRebalance: when
    the initial delay ends on a group that went Dead meanwhile, no generation is made."""
    d = Driver()
    create_group(d)
    kjoin(d, "A", session=1000, rebalance=1000)
    view = d.cluster.group(GROUP)
    assert view.generation_id == 0 and view.state == "PreparingRebalance"
    force(d, DEAD)
    d.advance(d.now + 3000)
    view = d.cluster.group(GROUP)
    assert view.generation_id == 0 and view.state == "Dead"


def test_complete_join_phase_no_members_rejoined_extends_join_phase():
    """Port of GroupMetadataManagerTest.testCompleteJoinPhaseNoMembersRejoinedExtendsJoinPhase:
    when the rebalance timeout ends and no (static) member has rejoined, the join phase is
    extended by another rebalance timeout, again and again, until the members rejoin."""
    d = Driver()
    create_group(d)
    kw = {"session": 30000, "rebalance": 10000}
    first = join_static_and_complete_join(d, "A", "first-instance-id", version=V_LATEST, **kw)
    second = kjoin(d, "B", instance_id="second-instance-id", **kw)
    assert d.response("B", second) is None
    again = kjoin(d, "A", first.member_id, instance_id="first-instance-id", **kw)
    ra, rb = d.response("A", again), d.response("B", second)
    assert ra.error_code == rb.error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert len(view.members) == 2 and view.generation_id == 2
    d.prepare_rebalance("trigger rebalance", GROUP)
    view = d.cluster.group(GROUP)
    assert len(view.members) == 2 and view.state == "PreparingRebalance"
    assert not any(m.awaiting_join for m in view.members)
    for _ in range(2):
        d.advance(d.now + 10000)
        assert d.deadline(f"/join-{GROUP}") == d.now + 10000
    view = d.cluster.group(GROUP)
    assert view.state == "PreparingRebalance" and len(view.members) == 2
    assert view.generation_id == 2
    a = kjoin(d, "A", first.member_id, instance_id="first-instance-id", **kw)
    assert d.response("A", a) is None and d.state() == "PreparingRebalance"
    b = kjoin(d, "B", rb.member_id, instance_id="second-instance-id", **kw)
    assert d.response("A", a).error_code == d.response("B", b).error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and len(view.members) == 2
    assert view.generation_id == 3


# =================================================================================================
# static members replaced in Stable / CompletingRebalance
# =================================================================================================


def stable_single_static_member(d: Driver, version: int, **kw):
    """A group of one static member ("group-instance-id"), its join phase done, forced Stable
    (Kafka's "simulate successful sync group phase")."""
    create_group(d)
    r = join_static_and_complete_join(d, "A", "group-instance-id", version=version, **kw)
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.generation_id == 1
    assert view.state == "CompletingRebalance"
    force(d, STABLE)
    return r


@pytest.mark.parametrize("skip_assignment", [True, False])
def test_replace_static_member_in_stable_state_no_error(skip_assignment):
    """Port of GroupMetadataManagerTest.testReplaceStaticMemberInStableStateNoError: a static
    member rejoining in Stable with an unknown member id, new protocols that keep the selected
    protocol, and new timeouts, is replaced without a rebalance: the new member id is written to
    the log and the JoinGroup is answered with the current generation (v9: as leader, with the
    members list and skip_assignment; older: the old leader id and no members)."""
    d = Driver()
    version = V_LATEST if skip_assignment else V_KNOWN
    old = stable_single_static_member(d, version).member_id
    since = len(d.records())
    corr = kjoin(
        d,
        "A",
        version=version,
        names=SUPERSET,
        rebalance=7000,
        session=4500,
        instance_id="group-instance-id",
    )
    new_id = group(d).static_members["group-instance-id"]
    assert new_id != old
    (record,) = group_records(d, since)
    assert record.generation == 1 and record.leader == new_id and record.protocol == "range"
    (m,) = record.members
    assert (m.member_id, m.rebalance_timeout, m.session_timeout) == (new_id, 7000, 4500)
    assert m.subscription == b"range"
    r = d.response("A", corr)
    expected_members = (
        (JoinGroupResponseMember(new_id, "group-instance-id", b"range"),) if skip_assignment else ()
    )
    assert r.error_code == Errors.NONE and r.member_id == new_id and r.generation_id == 1
    assert (r.protocol_type, r.protocol_name) == ("consumer", "range")
    assert r.leader == (new_id if skip_assignment else old)
    assert r.skip_assignment == skip_assignment and r.members == expected_members
    view = d.cluster.group(GROUP)
    (member,) = view.members
    assert member.member_id == new_id and member.group_instance_id == "group-instance-id"
    assert (member.rebalance_timeout_ms, member.session_timeout_ms) == (7000, 4500)
    assert [name for name, _ in member.protocols] == list(SUPERSET)
    assert view.generation_id == 1 and view.state == "Stable"


def test_replace_static_member_in_stable_state_with_updated_protocol_triggers_rebalance():
    """Port of
    GroupMetadataManagerTest.testReplaceStaticMemberInStableStateWithUpdatedProtocolTriggersRebalance:
    a static member replaced in Stable with protocols that change the selected protocol
    rebalances instead (here it ends at once: generation 2)."""
    d = Driver()
    stable_single_static_member(d, V_LATEST, names=SUPERSET)
    records = len(d.records())
    r = d.response("A", kjoin(d, "A", names=("roundrobin",), instance_id="group-instance-id"))
    assert r.error_code == Errors.NONE and len(d.records()) == records
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.generation_id == 2
    assert view.state == "CompletingRebalance" and view.protocol_name == "roundrobin"


def test_replace_static_member_in_stable_state_errors():
    """Port of GroupMetadataManagerTest.testReplaceStaticMemberInStableStateErrors: when the
    record of a static replacement cannot be written, the replacement is undone (old member id,
    protocols and timeouts) and the JoinGroup gets the mapped error with an empty member id."""
    d = Driver()
    old = stable_single_static_member(d, 3, rebalance=4000, session=3000).member_id
    d.cluster.fail_next_append(Errors.UNKNOWN_TOPIC_OR_PARTITION)
    records = len(d.records())
    r = d.response(
        "A",
        kjoin(
            d, "A", names=SUPERSET, rebalance=7000, session=6000, instance_id="group-instance-id"
        ),
    )
    assert len(d.records()) == records
    assert r.error_code == Errors.COORDINATOR_NOT_AVAILABLE and r.member_id == ""
    assert (r.generation_id, r.leader, r.skip_assignment, r.members) == (1, old, False, ())
    assert (r.protocol_type, r.protocol_name) == ("consumer", "range")
    view = d.cluster.group(GROUP)
    (member,) = view.members
    assert member.member_id == old and member.group_instance_id == "group-instance-id"
    assert (member.rebalance_timeout_ms, member.session_timeout_ms) == (4000, 3000)
    assert member.protocols == (("range", b"range"),)
    assert view.generation_id == 1 and view.state == "Stable"
    assert d.deadline(f"heartbeat-{GROUP}-{old}") == d.now + 3000


@pytest.mark.parametrize("skip_assignment", [True, False])
def test_replace_static_member_in_stable_state_succeeds(skip_assignment):
    """Port of GroupMetadataManagerTest.testReplaceStaticMemberInStableStateSucceeds: once the
    record of a static replacement is written, the group holds the new member (new id, new
    protocols and timeouts) in the same Stable generation."""
    d = Driver()
    version = V_LATEST if skip_assignment else V_KNOWN
    old = stable_single_static_member(d, version).member_id
    since = len(d.records())
    r = d.response(
        "A",
        kjoin(
            d,
            "A",
            version=version,
            names=SUPERSET,
            rebalance=7000,
            session=6000,
            instance_id="group-instance-id",
        ),
    )
    (record,) = group_records(d, since)
    assert [m.member_id for m in record.members] == [r.member_id]
    assert r.error_code == Errors.NONE and r.member_id != old and r.generation_id == 1
    assert r.skip_assignment == skip_assignment
    assert r.members == (members_list(d) if skip_assignment else ())
    assert r.leader == (r.member_id if skip_assignment else old)
    view = d.cluster.group(GROUP)
    (member,) = view.members
    assert member.member_id == r.member_id == group(d).static_members["group-instance-id"]
    assert (member.rebalance_timeout_ms, member.session_timeout_ms) == (7000, 6000)
    assert [name for name, _ in member.protocols] == list(SUPERSET)
    assert view.generation_id == 1 and view.state == "Stable"


def test_replace_static_member_in_completing_rebalance_state_triggers_rebalance():
    """Port of
    GroupMetadataManagerTest.testReplaceStaticMemberInCompletingRebalanceStateTriggersRebalance:
    a static member replaced in CompletingRebalance always rebalances (the leader may already be
    assigning to the old member id)."""
    d = Driver()
    create_group(d)
    join_static_and_complete_join(d, "A", "group-instance-id", version=V_LATEST)
    records = len(d.records())
    r = d.response("A", kjoin(d, "A", instance_id="group-instance-id"))
    assert r.error_code == Errors.NONE and len(d.records()) == records
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.generation_id == 2
    assert view.state == "CompletingRebalance"


def test_join_group_append_error_conversion():
    """Port of GroupMetadataManagerTest.testJoinGroupAppendErrorConversion: the mapping of log
    append errors to the errors a client sees (appendGroupMetadataErrorToResponseError)."""
    expected = {
        Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
        Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
        Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
        Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
        Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
        Errors.NETWORK_EXCEPTION: Errors.NETWORK_EXCEPTION,  # anything else passes through
    }
    for append_error, response_error in expected.items():
        assert append_error_to_response_error(append_error) == response_error


# =================================================================================================
# new members after the join phase
# =================================================================================================


def test_new_member_timeout_completion():
    """Port of GroupMetadataManagerTest.testNewMemberTimeoutCompletion: once its join phase is
    over, a new member is no longer subject to the new-member join timeout; it expires by its
    own session timeout, and the group goes Empty (generation 2) with a record."""
    d = Driver()
    create_group(d)
    session = d.cluster.config.new_member_join_timeout_ms + 5000
    corr = kjoin(d, "A", session=session)
    assert d.response("A", corr) is None
    d.advance(d.now + 3000)
    r = d.response("A", corr)
    assert r.error_code == Errors.NONE and r.generation_id == 1
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and not any(m.is_new for m in view.members)
    assert d.response("A", d.sync("A", r.member_id, 1)).error_code == Errors.NONE
    d.advance(d.now + d.cluster.config.new_member_join_timeout_ms)
    assert len(d.cluster.group(GROUP).members) == 1
    since = len(d.records())
    d.advance(d.now + 5000)
    view = d.cluster.group(GROUP)
    assert view.members == () and view.state == "Empty"
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", 2, None, None, d.now)


def test_new_member_failure_after_join_group_completion():
    """Port of GroupMetadataManagerTest.testNewMemberFailureAfterJoinGroupCompletion: a member
    that joined as new follows the normal session expiry after the join phase; when both members
    stop heartbeating the group goes Empty, and only the last removal writes a record."""
    d = Driver()
    create_group(d)
    first = kjoin(d, "A", session=5000, rebalance=10000)
    d.advance(d.now + 3000)
    r = d.response("A", first)
    assert r.error_code == Errors.NONE and r.leader == r.member_id and r.generation_id == 1
    assert d.response("A", d.sync("A", r.member_id, 1)).error_code == Errors.NONE
    assert d.state() == "Stable"
    other = kjoin(d, "B", session=5000, rebalance=10000)
    again = kjoin(d, "A", r.member_id, session=5000, rebalance=10000)
    assert d.response("A", again).error_code == d.response("B", other).error_code == Errors.NONE
    since = len(d.records())
    d.advance(d.now + 5000)  # GroupMetadataManagerTestContext.verifySessionExpiration
    view = d.cluster.group(GROUP)
    assert view.members == () and view.state == "Empty"
    expired = [e["member_id"] for e in d.named("member_removed")]
    assert sorted(expired[-2:]) == sorted([r.member_id, d.response("B", other).member_id])
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", view.generation_id, None, None, d.now)


# =================================================================================================
# static members: fencing duplicates
# =================================================================================================


def test_static_member_fence_duplicate_rejoined_follower():
    """Port of GroupMetadataManagerTest.testStaticMemberFenceDuplicateRejoinedFollower: while
    the old follower's JoinGroup waits, a duplicate with the same instance id and no member id
    replaces it; the old one is answered FENCED_INSTANCE_ID at once."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    kjoin(d, "N")  # a third member: rebalance
    assert d.state() == "PreparingRebalance"
    old = kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE)
    assert d.response("F", old) is None
    kjoin(d, "F2", instance_id=FOLLOWER_INSTANCE)
    assert d.response("F", old) == JoinGroupResponse(
        Errors.FENCED_INSTANCE_ID, member_id=rb.follower_id
    )
    assert d.state() == "PreparingRebalance"


def test_static_member_fence_duplicate_syncing_follower_after_member_id_changed():
    """Port of
    GroupMetadataManagerTest.testStaticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged:
    the old follower rejoined and waits in SyncGroup; a duplicate with its instance id replaces
    it (rebalance), the parked SyncGroup is fenced; the leader, which does not rejoin, expires
    and the duplicate ends up alone, as leader, in generation 3. Kafka sleeps the rebalance
    timeout and fires every timer at its end; what ends the join phase is the leader's session
    (500 ms since its rejoin), so the port advances to that deadline: going further would also
    expire the duplicate, which never syncs."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    kw = {"names": SUPERSET, "rebalance": 10000}
    leader = kjoin(d, "L", rb.leader_id, instance_id=LEADER_INSTANCE, **kw)
    assert d.response("L", leader) is None and d.state() == "PreparingRebalance"
    old = kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE, **kw)
    rl, rf = d.response("L", leader), d.response("F", old)
    assert rl.error_code == rf.error_code == Errors.NONE
    assert (rl.generation_id, rl.member_id, rl.leader) == (2, rb.leader_id, rb.leader_id)
    assert (rl.protocol_type, rl.protocol_name) == ("consumer", "range")
    assert rl.members == members_list(d)
    assert {m.group_instance_id for m in rl.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert (rf.generation_id, rf.member_id, rf.leader, rf.members) == (
        2,
        rb.follower_id,
        rb.leader_id,
        (),
    )
    assert d.state() == "CompletingRebalance"
    sync = d.sync("F", rb.follower_id, 2, instance_id=FOLLOWER_INSTANCE)
    assert d.response("F", sync) is None
    duplicate = kjoin(d, "F2", instance_id=FOLLOWER_INSTANCE, **kw)
    assert d.state() == "PreparingRebalance" and d.response("F2", duplicate) is None
    assert d.response("F", sync).error_code == Errors.FENCED_INSTANCE_ID
    d.advance(d.deadline(f"heartbeat-{GROUP}-{rb.leader_id}"))
    r = d.response("F2", duplicate)
    assert r.error_code == Errors.NONE and r.leader == r.member_id
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and view.generation_id == 3
    assert view.member_ids == (r.member_id,)


def test_static_member_fence_duplicate_rejoining_follower_after_member_id_changed():
    """Port of
    GroupMetadataManagerTest.testStaticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged:
    a duplicate follower replaces the old one while the leader waits to rejoin, which completes
    the join phase; the old follower's JoinGroup with its old id is fenced."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    leader = kjoin(d, "L", rb.leader_id, instance_id=LEADER_INSTANCE, rebalance=10000)
    assert d.response("L", leader) is None and d.state() == "PreparingRebalance"
    duplicate = kjoin(d, "F2", instance_id=FOLLOWER_INSTANCE, rebalance=10000)
    rd = d.response("F2", duplicate)
    assert rd is not None
    old = d.response(
        "F", kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE, rebalance=10000)
    )
    rl = d.response("L", leader)
    assert rl.error_code == Errors.NONE and rl.members == members_list(d)
    assert (rl.generation_id, rl.member_id, rl.leader, rl.protocol_name) == (
        2,
        rb.leader_id,
        rb.leader_id,
        "range",
    )
    assert {m.group_instance_id for m in rl.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert rd.error_code == Errors.NONE and rd.member_id != rb.follower_id
    assert (rd.generation_id, rd.leader, rd.protocol_type, rd.members) == (
        2,
        rb.leader_id,
        "consumer",
        (),
    )
    assert old == JoinGroupResponse(Errors.FENCED_INSTANCE_ID, member_id=rb.follower_id)
    assert d.state() == "CompletingRebalance"


# =================================================================================================
# static members rejoining as leader or follower
# =================================================================================================


def test_static_member_rejoin_with_known_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinWithKnownMemberId: in
    CompletingRebalance a static member rejoining with its id and the same protocols gets the
    current generation at once, then syncs to Stable."""
    d = Driver()
    create_group(d)
    r = join_static_and_complete_join(d, "A", "group-instance-id")
    records = len(d.records())
    again = d.response("A", kjoin(d, "A", r.member_id, instance_id="group-instance-id"))
    assert again.error_code == Errors.NONE and len(d.records()) == records
    assert d.state() == "CompletingRebalance"
    s = d.response("A", d.sync("A", r.member_id, r.generation_id, instance_id="group-instance-id"))
    assert s.error_code == Errors.NONE and d.state() == "Stable"


@pytest.mark.parametrize("skip_assignment", [True, False])
def test_static_member_rejoin_with_leader_id_and_unknown_member_id(skip_assignment):
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinWithLeaderIdAndUnknownMemberId:
    the static leader rejoining without its member id is replaced in Stable without a rebalance
    (a record is written); its old id is then fenced in JoinGroup and SyncGroup, and without the
    instance id the old id is simply unknown."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    version = V_LATEST if skip_assignment else V_KNOWN
    since = len(d.records())
    r = d.response("L", kjoin(d, "L", version=version, names=SUPERSET, instance_id=LEADER_INSTANCE))
    (record,) = group_records(d, since)
    assert record.leader == r.member_id
    assert {m.member_id: m.assignment for m in record.members} == {
        r.member_id: rb.leader_assignment,
        rb.follower_id: rb.follower_assignment,
    }
    assert r.error_code == Errors.NONE and r.generation_id == rb.generation_id
    assert r.member_id != rb.leader_id
    assert r.leader == (r.member_id if skip_assignment else rb.leader_id)
    assert (r.protocol_type, r.protocol_name) == ("consumer", "range")
    assert r.skip_assignment == skip_assignment
    assert r.members == (members_list(d) if skip_assignment else ())
    if skip_assignment:
        assert {m.group_instance_id for m in r.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert d.state() == "Stable"
    records = len(d.records())
    old = d.response(
        "L",
        kjoin(d, "L", rb.leader_id, version=version, names=SUPERSET, instance_id=LEADER_INSTANCE),
    )
    assert old.error_code == Errors.FENCED_INSTANCE_ID
    s = d.response("L", d.sync("L", rb.leader_id, 1, instance_id=LEADER_INSTANCE))
    assert s.error_code == Errors.FENCED_INSTANCE_ID
    s = d.response("L", d.sync("L", rb.leader_id, 1))
    assert s.error_code == Errors.UNKNOWN_MEMBER_ID
    assert len(d.records()) == records


def test_static_member_rejoin_with_leader_id_and_known_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinWithLeaderIdAndKnownMemberId: the
    static leader rejoining with its id rebalances; the follower, which neither rejoins nor
    heartbeats, expires after its session timeout (5000 ms, Kafka's sleep covers it), which ends
    the join phase with the leader alone. The port advances to that expiry only: the leader's
    session is 500 ms after its rejoin."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    expiry = d.deadline(f"heartbeat-{GROUP}-{rb.follower_id}")
    corr = kjoin(
        d, "L", rb.leader_id, version=V_LATEST, instance_id=LEADER_INSTANCE, rebalance=10000
    )
    d.advance(expiry)
    r = d.response("L", corr)
    assert rb.follower_id not in d.cluster.group(GROUP).member_ids
    assert r.error_code == Errors.NONE and r.generation_id == 2
    assert (r.member_id, r.leader, r.protocol_name) == (rb.leader_id, rb.leader_id, "range")
    assert r.members == members_list(d)
    assert {m.group_instance_id for m in r.members} == {LEADER_INSTANCE}
    assert d.state() == "CompletingRebalance"


def test_static_member_rejoin_with_leader_id_and_unexpected_dead_group():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithLeaderIdAndUnexpectedDeadGroup: a static
    member rejoining a Dead group gets COORDINATOR_NOT_AVAILABLE."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    force(d, DEAD)
    r = d.response("L", kjoin(d, "L", rb.leader_id, version=V_LATEST, instance_id=LEADER_INSTANCE))
    assert r.error_code == Errors.COORDINATOR_NOT_AVAILABLE


def test_static_member_rejoin_with_follower_id_and_change_of_protocol():
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinWithFollowerIdAndChangeOfProtocol:
    the static follower rejoins with only roundrobin; the static leader does not rejoin before
    the rebalance timeout, stays a member but loses the leadership; roundrobin is selected."""
    d = Driver()
    rb = static_members_join_and_rebalance(d, rebalance=10000, session=15000)
    corr = kjoin(
        d,
        "F",
        rb.follower_id,
        names=("roundrobin",),
        instance_id=FOLLOWER_INSTANCE,
        rebalance=10000,
        session=15000,
    )
    assert d.response("F", corr) is None
    d.advance(d.now + 10000)
    r = d.response("F", corr)
    assert r.error_code == Errors.NONE
    assert LEADER_INSTANCE in group(d).static_members
    assert d.cluster.group(GROUP).leader_id == rb.follower_id
    assert (r.generation_id, r.member_id, r.leader) == (2, rb.follower_id, rb.follower_id)
    assert (r.protocol_type, r.protocol_name) == ("consumer", "roundrobin")
    assert r.members == members_list(d)
    assert {m.group_instance_id for m in r.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert d.state() == "CompletingRebalance"


def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_selected_changed():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged:
    a static follower replaced in Stable with a protocol that changes the group's selection
    rebalances (no record); the new member id leads the next generation, with roundrobin."""
    d = Driver()
    rb = static_members_join_and_rebalance(d, rebalance=10000, session=15000)
    assert group(d).select_protocol() != "roundrobin"
    records = len(d.records())
    corr = kjoin(
        d,
        "F",
        names=("roundrobin",),
        instance_id=FOLLOWER_INSTANCE,
        rebalance=10000,
        session=15000,
    )
    assert d.response("F", corr) is None and len(d.records()) == records
    assert group(d).select_protocol() == "roundrobin"
    d.advance(d.now + 10000)
    r = d.response("F", corr)
    assert r.error_code == Errors.NONE and r.member_id != rb.follower_id
    assert LEADER_INSTANCE in group(d).static_members
    assert d.cluster.group(GROUP).leader_id == r.member_id == r.leader
    assert (r.generation_id, r.protocol_name) == (2, "roundrobin")
    assert r.members == members_list(d)
    assert {m.group_instance_id for m in r.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert d.state() == "CompletingRebalance"


def test_static_member_rejoin_with_unknown_member_id_change_of_protocol_persistence_failure():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure:
    the follower's replacement cannot be written (MESSAGE_TOO_LARGE -> UNKNOWN_SERVER_ERROR) and
    is undone, so the old member id keeps working: its JoinGroup (new protocols) and the
    leader's rebalance the group, and its SyncGroup succeeds."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    selected = group(d).select_protocol()
    d.cluster.fail_next_append(Errors.MESSAGE_TOO_LARGE)
    r = d.response(
        "F", kjoin(d, "F", version=V_LATEST, names=(selected,), instance_id=FOLLOWER_INSTANCE)
    )
    assert r == JoinGroupResponse(
        Errors.UNKNOWN_SERVER_ERROR,
        generation_id=rb.generation_id,
        protocol_type="consumer",
        protocol_name="range",
        leader=rb.leader_id,
        member_id="",
    )
    assert d.state() == "Stable"
    records = len(d.records())
    follower = kjoin(d, "F", rb.follower_id, names=(selected,), instance_id=FOLLOWER_INSTANCE)
    assert len(d.records()) == records
    leader = kjoin(d, "L", rb.leader_id, names=(selected,), instance_id=LEADER_INSTANCE)
    assert len(d.records()) == records
    assert d.response("L", leader).error_code == Errors.NONE
    assert d.response("F", follower).error_code == Errors.NONE
    s = d.response("L", d.sync("L", rb.leader_id, 2, instance_id=LEADER_INSTANCE))
    (record,) = group_records(d, records)
    assert {m.member_id: m.assignment for m in record.members} == {
        rb.leader_id: b"",
        rb.follower_id: b"",
    }
    assert s.error_code == Errors.NONE and d.state() == "Stable"
    s = d.response("F", d.sync("F", rb.follower_id, 2, instance_id=FOLLOWER_INSTANCE))
    assert s.error_code == Errors.NONE and d.state() == "Stable"


def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_selected_unchanged():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged:
    a static follower replaced in Stable with a subset of its protocols that keeps the selection
    is written to the log without a rebalance; the old id is then fenced (JoinGroup and
    SyncGroup) and the new one gets the follower's assignment."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    selected = group(d).select_protocol()
    since = len(d.records())
    r = d.response(
        "F", kjoin(d, "F", version=V_LATEST, names=(selected,), instance_id=FOLLOWER_INSTANCE)
    )
    (record,) = group_records(d, since)
    assert {m.member_id for m in record.members} == {rb.leader_id, r.member_id}
    assert r.error_code == Errors.NONE and r.member_id != rb.follower_id
    assert (r.generation_id, r.leader, r.protocol_name, r.protocol_type) == (
        rb.generation_id,
        rb.leader_id,
        "range",
        "consumer",
    )
    assert not r.skip_assignment and r.members == () and d.state() == "Stable"
    old = d.response(
        "F", kjoin(d, "F", rb.follower_id, names=(selected,), instance_id=FOLLOWER_INSTANCE)
    )
    assert old.error_code == Errors.FENCED_INSTANCE_ID
    s = d.response("F", d.sync("F", rb.follower_id, 1, instance_id=FOLLOWER_INSTANCE))
    assert s.error_code == Errors.FENCED_INSTANCE_ID
    s = d.response("F", d.sync("F", r.member_id, 1, instance_id=FOLLOWER_INSTANCE))
    assert s.error_code == Errors.NONE and s.assignment == rb.follower_assignment


def test_static_member_rejoin_with_known_leader_id_then_follower_with_change_of_protocol():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeofProtocol:
    the known leader's rejoin rebalances and the follower's rejoin completes it (generation 2);
    the follower then rejoins with fewer protocols (rebalance), the leader does not rejoin and
    expires at its session timeout, and the follower leads generation 3 alone."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    kw = {"version": V_LATEST, "names": SUPERSET, "rebalance": 10000, "session": 5000}
    leader = kjoin(d, "L", rb.leader_id, instance_id=LEADER_INSTANCE, **kw)
    assert d.response("L", leader) is None
    follower = kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE, **kw)
    rl, rf = d.response("L", leader), d.response("F", follower)
    assert d.state() == "CompletingRebalance" and d.cluster.group(GROUP).generation_id == 2
    assert rl.error_code == Errors.NONE and rl.members == members_list(d)
    assert (rl.generation_id, rl.member_id, rl.leader, rl.protocol_name) == (
        2,
        rb.leader_id,
        rb.leader_id,
        "range",
    )
    assert {m.group_instance_id for m in rl.members} == {LEADER_INSTANCE, FOLLOWER_INSTANCE}
    assert rf.error_code == Errors.NONE and rf.members == () and not rf.skip_assignment
    assert (rf.generation_id, rf.member_id, rf.leader) == (2, rb.follower_id, rb.leader_id)
    kw["names"] = ("range",)
    follower = kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE, **kw)
    assert d.response("F", follower) is None and d.state() == "PreparingRebalance"
    d.advance(d.now + 5000)
    r = d.response("F", follower)
    assert r.error_code == Errors.NONE
    assert (r.generation_id, r.member_id, r.leader, r.protocol_name) == (
        3,
        rb.follower_id,
        rb.follower_id,
        "range",
    )
    assert r.members == members_list(d)
    assert {m.group_instance_id for m in r.members} == {FOLLOWER_INSTANCE}
    assert d.state() == "CompletingRebalance"


def test_static_member_rejoin_as_follower_with_unknown_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinAsFollowerWithUnknownMemberId: a
    static follower rejoining in Stable without its id and with the same protocols is replaced
    without a rebalance (one record); the new id syncs and gets the follower's assignment."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    since = len(d.records())
    r = d.response(
        "F", kjoin(d, "F", version=V_LATEST, names=SUPERSET, instance_id=FOLLOWER_INSTANCE)
    )
    assert len(group_records(d, since)) == 1
    assert LEADER_INSTANCE in group(d).static_members
    assert r.error_code == Errors.NONE and r.member_id != rb.follower_id
    assert (r.generation_id, r.leader, r.protocol_name, r.members) == (1, rb.leader_id, "range", ())
    assert not r.skip_assignment and d.state() == "Stable"
    records = len(d.records())
    s = d.response("F", d.sync("F", r.member_id, 1, instance_id=FOLLOWER_INSTANCE))
    assert s.error_code == Errors.NONE and s.assignment == rb.follower_assignment
    assert len(d.records()) == records


def test_static_member_rejoin_as_follower_with_known_member_id_and_no_protocol_change():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinAsFollowerWithKnownMemberIdAndNoProtocolChange:
    a static follower rejoining in Stable with its id and unchanged protocols gets the current
    generation; nothing is written and nothing rebalances."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    records = len(d.records())
    r = d.response(
        "F",
        kjoin(
            d, "F", rb.follower_id, version=V_LATEST, names=SUPERSET, instance_id=FOLLOWER_INSTANCE
        ),
    )
    assert len(d.records()) == records
    assert LEADER_INSTANCE in group(d).static_members
    assert r == JoinGroupResponse(
        Errors.NONE,
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader=rb.leader_id,
        member_id=rb.follower_id,
    )
    assert d.state() == "Stable"


@pytest.mark.parametrize(
    ("instance_id", "whose_id"),
    [(LEADER_INSTANCE, "follower"), (FOLLOWER_INSTANCE, "leader")],
)
def test_static_member_rejoin_with_mismatched_instance_id(instance_id, whose_id):
    """Port of GroupMetadataManagerTest.testStaticMemberRejoinAsFollowerWithMismatchedInstanceId
    and testStaticMemberRejoinAsLeaderWithMismatchedInstanceId: a JoinGroup pairing one static
    member's instance id with the other's member id is fenced."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    member_id = rb.follower_id if whose_id == "follower" else rb.leader_id
    records = len(d.records())
    r = d.response(
        "X", kjoin(d, "X", member_id, version=V_LATEST, names=SUPERSET, instance_id=instance_id)
    )
    assert r.error_code == Errors.FENCED_INSTANCE_ID and len(d.records()) == records


def test_static_member_sync_as_leader_with_invalid_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberSyncAsLeaderWithInvalidMemberId: a
    SyncGroup with a known instance id and another member id is fenced (checked before the
    generation)."""
    d = Driver()
    static_members_join_and_rebalance(d)
    s = d.response("X", d.sync("X", "invalid-member-id", 0, instance_id=FOLLOWER_INSTANCE))
    assert s.error_code == Errors.FENCED_INSTANCE_ID


def test_get_different_static_member_id_after_each_rejoin():
    """Port of GroupMetadataManagerTest.testGetDifferentStaticMemberIdAfterEachRejoin: each
    rejoin of a static member without its id gives it a new member id, and writes it."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    last = rb.leader_id
    for _ in range(5):
        since = len(d.records())
        r = d.response(
            "L", kjoin(d, "L", version=V_LATEST, names=SUPERSET, instance_id=LEADER_INSTANCE)
        )
        assert len(group_records(d, since)) == 1
        assert r.error_code == Errors.NONE
        assert r.member_id == group(d).static_members[LEADER_INSTANCE] != last
        last = r.member_id


def test_static_member_join_with_unknown_instance_id_and_known_member_id():
    """Port of
    GroupMetadataManagerTest.testStaticMemberJoinWithUnknownInstanceIdAndKnownMemberId: a known
    member id with an instance id the group does not know is UNKNOWN_MEMBER_ID."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    r = d.response(
        "X",
        kjoin(
            d,
            "X",
            rb.leader_id,
            version=V_LATEST,
            names=SUPERSET,
            instance_id="unknown-instance-id",
        ),
    )
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("rejoining", ["leader", "follower"])
def test_static_member_fail_to_rejoin_before_rebalance_timeout(rejoining):
    """Port of
    GroupMetadataManagerTest.testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout and
    testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout: a new static member joins; one of
    the two old ones rejoins, the other does not before the rebalance timeout. The absent static
    member stays in the group; if it was the leader, a member that rejoined leads."""
    d = Driver()
    rb = static_members_join_and_rebalance(d, rebalance=10000, session=15000)
    kw = {"version": V_LATEST, "names": SUPERSET}
    new = kjoin(d, "N", instance_id="new-member-instance-id", **kw)
    assert d.response("N", new) is None and d.state() == "PreparingRebalance"
    if rejoining == "leader":
        client, old = "L", kjoin(d, "L", rb.leader_id, instance_id=LEADER_INSTANCE, **kw)
    else:
        client, old = "F", kjoin(d, "F", rb.follower_id, instance_id=FOLLOWER_INSTANCE, **kw)
    assert d.response(client, old) is None
    d.advance(d.now + 10000)
    responses = [d.response(client, old), d.response("N", new)]
    assert all(r.error_code == Errors.NONE and r.generation_id == 2 for r in responses)
    (leader,) = [r for r in responses if r.leader == r.member_id]
    (follower,) = [r for r in responses if r is not leader]
    if rejoining == "leader":
        assert leader.member_id == rb.leader_id
    assert follower.leader == leader.member_id and follower.members == ()
    assert leader.members == members_list(d)
    assert {m.group_instance_id for m in leader.members} == {
        LEADER_INSTANCE,
        FOLLOWER_INSTANCE,
        "new-member-instance-id",
    }
    assert d.state() == "CompletingRebalance"


# =================================================================================================
# SyncGroup
# =================================================================================================


@pytest.mark.parametrize(
    ("protocol_type", "protocol_name", "error"),
    [
        ("protocolType", None, Errors.INCONSISTENT_GROUP_PROTOCOL),
        (None, "protocolName", Errors.INCONSISTENT_GROUP_PROTOCOL),
        (None, None, Errors.NONE),
        ("consumer", "range", Errors.NONE),
    ],
)
def test_sync_group_protocol_type_and_name(protocol_type, protocol_name, error):
    """Port of
    GroupMetadataManagerTest.testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent,
    testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent,
    testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided and
    testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent
    (testSyncGroupProtocolTypeAndNameWith): a SyncGroup whose protocol type or name differs from
    the group's is refused; absent ones are not checked; a successful SyncGroup answers with the
    group's type and name. (A SyncGroup without them is sent as v4: from v5 KafkaApis refuses it
    before the coordinator sees it.)"""
    d = Driver()
    create_group(d)
    leader_join = kjoin(d, "L", names=SUPERSET, instance_id=LEADER_INSTANCE)
    follower_join = kjoin(d, "F", names=SUPERSET, instance_id=FOLLOWER_INSTANCE)
    d.complete_join()
    rl, rf = d.response("L", leader_join), d.response("F", follower_join)
    assert rl.error_code == rf.error_code == Errors.NONE
    version = 5 if protocol_type is not None and protocol_name is not None else 4
    expected = ("consumer", "range") if error == Errors.NONE else (None, None)
    for client, member_id in (("L", rl.member_id), ("F", rf.member_id)):
        s = d.response(
            client,
            d.sync(
                client,
                member_id,
                rl.generation_id,
                assignments={rl.member_id: b""},
                protocol_type=protocol_type,
                protocol_name=protocol_name,
                version=version,
            ),
        )
        assert s.error_code == error and (s.protocol_type, s.protocol_name) == expected


def test_sync_group_from_unknown_group():
    """Port of GroupMetadataManagerTest.testSyncGroupFromUnknownGroup: SyncGroup to a group that
    does not exist gets UNKNOWN_MEMBER_ID and creates nothing."""
    d = Driver()
    s = d.response("A", d.sync("A", "member-id", 1))
    assert s.error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.cluster.group(GROUP) is None and d.records() == ()


def test_sync_group_from_unknown_member():
    """Port of GroupMetadataManagerTest.testSyncGroupFromUnknownMember: after a successful sync,
    a SyncGroup from a member id the group does not know gets UNKNOWN_MEMBER_ID and an empty
    assignment."""
    d = Driver()
    create_group(d)
    r = join_static_and_complete_join(d, "A", LEADER_INSTANCE, version=V_LATEST)
    s = d.response("A", d.sync("A", r.member_id, r.generation_id, assignments={r.member_id: b""}))
    assert s.error_code == Errors.NONE and s.assignment == b""
    records = len(d.records())
    s = d.response("X", d.sync("X", "unknown-member-id", r.generation_id))
    assert s.error_code == Errors.UNKNOWN_MEMBER_ID and s.assignment == b""
    assert len(d.records()) == records


def test_sync_group_from_illegal_generation():
    """Port of GroupMetadataManagerTest.testSyncGroupFromIllegalGeneration: a SyncGroup for
    another generation gets ILLEGAL_GENERATION and writes nothing."""
    d = Driver()
    create_group(d)
    r = join_static_and_complete_join(d, "A", LEADER_INSTANCE, version=V_LATEST)
    s = d.response("A", d.sync("A", r.member_id, r.generation_id + 1))
    assert s.error_code == Errors.ILLEGAL_GENERATION and d.records() == ()


def test_sync_group_as_leader_append_failure_transforms_error():
    """Port of GroupMetadataManagerTest.testSyncGroupAsLeaderAppendFailureTransformsError: when
    the leader's assignment cannot be written, its SyncGroup gets the mapped error
    (NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR)."""
    d = Driver()
    create_group(d)
    r = join_static_and_complete_join(d, "A", LEADER_INSTANCE, version=V_LATEST)
    d.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    s = d.response("A", d.sync("A", r.member_id, 1))
    assert s.error_code == Errors.NOT_COORDINATOR


def leader_and_new_follower(d: Driver, **kw):
    """The common start of Kafka's SyncGroup tests: a Stable leader, then a follower joins and
    the leader rejoins, which completes the join phase of generation 2."""
    leader = join_and_complete_rebalance(d, "L").member_id
    follower = kjoin(d, "F", **kw)
    assert d.response("F", follower) is None
    rejoin = d.response("L", kjoin(d, "L", leader, **kw))
    rf = d.response("F", follower)
    assert rejoin.error_code == rf.error_code == Errors.NONE
    assert rejoin.generation_id == rf.generation_id and rejoin.leader == rf.leader == leader
    assert d.state() == "CompletingRebalance"
    return leader, rf.member_id, rejoin.generation_id


def test_join_group_from_unchanged_follower_does_not_rebalance():
    """Port of GroupMetadataManagerTest.testJoinGroupFromUnchangedFollowerDoesNotRebalance: in
    CompletingRebalance a follower's JoinGroup with unchanged protocols gets the current
    generation back and does not rebalance."""
    d = Driver()
    _leader, follower, generation = leader_and_new_follower(d)
    records = len(d.records())
    r = d.response("F", kjoin(d, "F", follower))
    assert r.error_code == Errors.NONE and r.generation_id == generation
    assert len(d.records()) == records and d.state() == "CompletingRebalance"


def test_leader_failure_in_sync_group():
    """Port of GroupMetadataManagerTest.testLeaderFailureInSyncGroup: the leader never syncs and
    its session expires; the follower's parked SyncGroup gets REBALANCE_IN_PROGRESS (a parked
    SyncGroup keeps its own session alive) and the group rebalances with the follower. The port
    advances by the session timeout, the leader's expiry, as Kafka's comment says; its mock
    timer runs that expiry at the end of a longer sleep."""
    d = Driver()
    _leader, follower, generation = leader_and_new_follower(d, rebalance=10000, session=5000)
    sync = d.sync("F", follower, generation)
    assert d.response("F", sync) is None
    records = len(d.records())
    d.advance(d.now + 5000)
    assert d.response("F", sync).error_code == Errors.REBALANCE_IN_PROGRESS
    view = d.cluster.group(GROUP)
    assert view.member_ids == (follower,) and view.state == "PreparingRebalance"
    assert len(d.records()) == records


def test_sync_group_follower_after_leader():
    """Port of GroupMetadataManagerTest.testSyncGroupFollowerAfterLeader: the leader's SyncGroup
    stores the assignment and makes the group Stable; the follower's later SyncGroup gets its
    part at once, writing nothing."""
    d = Driver()
    leader, follower, generation = leader_and_new_follower(d, rebalance=10000, session=5000)
    assignments = {leader: b"\x00", follower: b"\x01"}
    s = d.response("L", d.sync("L", leader, generation, assignments=assignments))
    assert s.error_code == Errors.NONE and s.assignment == b"\x00"
    records = len(d.records())
    s = d.response("F", d.sync("F", follower, generation, assignments=assignments))
    assert s.error_code == Errors.NONE and s.assignment == b"\x01"
    assert len(d.records()) == records and d.state() == "Stable"


def test_sync_group_leader_after_follower():
    """Port of GroupMetadataManagerTest.testSyncGroupLeaderAfterFollower: the follower's
    SyncGroup waits for the leader's; the leader's writes the assignment (one record) and both
    are answered with their parts."""
    d = Driver()
    leader, follower, generation = leader_and_new_follower(d, rebalance=10000, session=5000)
    follower_sync = d.sync("F", follower, generation)
    assert d.response("F", follower_sync) is None
    since = len(d.records())
    assignments = {leader: b"\x00", follower: b"\x01"}
    s = d.response("L", d.sync("L", leader, generation, assignments=assignments))
    (record,) = group_records(d, since)
    assert {m.member_id: m.assignment for m in record.members} == assignments
    assert record.generation == generation and record.leader == leader
    assert s.error_code == Errors.NONE and s.assignment == b"\x00"
    f = d.response("F", follower_sync)
    assert f.error_code == Errors.NONE and f.assignment == b"\x01"
    assert d.state() == "Stable"


@pytest.mark.parametrize(
    "kafka_test",
    ["testJoinGroupFromUnchangedLeaderShouldRebalance", "testGenerationIdIncrementsOnRebalance"],
)
def test_join_group_from_unchanged_leader_should_rebalance(kafka_test):
    """Port of GroupMetadataManagerTest.testJoinGroupFromUnchangedLeaderShouldRebalance and
    testGenerationIdIncrementsOnRebalance: the leader's JoinGroup in Stable, with unchanged
    protocols, rebalances (so a leader can push a new assignment): generation 2."""
    d = Driver()
    leader = join_and_complete_rebalance(d, "L")
    records = len(d.records())
    r = d.response("L", kjoin(d, "L", leader.member_id))
    assert r.error_code == Errors.NONE and r.generation_id == leader.generation_id + 1 == 2
    assert len(d.records()) == records


def test_join_group_completion_when_pending_member_joins():
    """Port of GroupMetadataManagerTest.testJoinGroupCompletionWhenPendingMemberJoins: a pending
    member id holds the join phase open; its JoinGroup completes it with three members."""
    d = Driver()
    create_group(d)
    pg = setup_group_with_pending_member(d)
    records = len(d.records())
    r = d.response("P", kjoin(d, "P", pg.pending_id))
    assert r.error_code == Errors.NONE and len(d.records()) == records
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and len(view.members) == 3
    assert view.pending_members == ()


# =================================================================================================
# Heartbeat
# =================================================================================================


def test_static_member_heartbeat_leader_with_invalid_member_id():
    """Port of GroupMetadataManagerTest.testStaticMemberHeartbeatLeaderWithInvalidMemberId: in
    Stable the leader's SyncGroup is answered again; a heartbeat with its id is fine, one with
    its instance id and another member id is fenced."""
    d = Driver()
    rb = static_members_join_and_rebalance(d)
    records = len(d.records())
    s = d.response("L", d.sync("L", rb.leader_id, 1, instance_id=LEADER_INSTANCE))
    assert s.error_code == Errors.NONE and len(d.records()) == records
    assert d.heartbeat("L", rb.leader_id, 1) == Errors.NONE
    assert (
        d.heartbeat("L", "invalid-member-id", 1, instance_id=LEADER_INSTANCE)
        == Errors.FENCED_INSTANCE_ID
    )


def test_heartbeat_unknown_group():
    """Port of GroupMetadataManagerTest.testHeartbeatUnknownGroup: UNKNOWN_MEMBER_ID."""
    d = Driver()
    assert d.heartbeat("A", "member-id", -1) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_dead_group():
    """Port of GroupMetadataManagerTest.testHeartbeatDeadGroup: COORDINATOR_NOT_AVAILABLE."""
    d = Driver()
    create_group(d)
    force(d, DEAD)
    assert d.heartbeat("A", "member-id", -1) == Errors.COORDINATOR_NOT_AVAILABLE


def test_heartbeat_empty_group():
    """Port of GroupMetadataManagerTest.testHeartbeatEmptyGroup: a heartbeat that passes the
    member and generation checks in an Empty group still gets UNKNOWN_MEMBER_ID."""
    d = Driver()
    g = create_group(d)
    g.add(
        Member(
            member_id="member-id",
            group_instance_id=None,
            client_id="client-id",
            client_host="client-host",
            rebalance_timeout_ms=10000,
            session_timeout_ms=5000,
            protocol_type="consumer",
            protocols=(("range", b"range"),),
        )
    )
    assert d.heartbeat("A", "member-id", 0) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_unknown_member_existing_group():
    """Port of GroupMetadataManagerTest.testHeartbeatUnknownMemberExistingGroup."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    assert d.heartbeat("X", "unknown-member-id", r.generation_id) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_during_preparing_rebalance():
    """Port of GroupMetadataManagerTest.testHeartbeatDuringPreparingRebalance: a member's
    heartbeat while the group prepares a rebalance gets REBALANCE_IN_PROGRESS."""
    d = Driver()
    create_group(d)
    first = d.response("A", kjoin(d, "A", version=V_KNOWN))
    assert first.error_code == Errors.MEMBER_ID_REQUIRED
    kjoin(d, "A", first.member_id)
    assert d.state() == "PreparingRebalance"
    assert d.heartbeat("A", first.member_id, 0) == Errors.REBALANCE_IN_PROGRESS


def test_heartbeat_during_completing_rebalance():
    """Port of GroupMetadataManagerTest.testHeartbeatDuringCompletingRebalance: heartbeats after
    the JoinGroup response, before SyncGroup, are normal heartbeats (NONE)."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    assert r.generation_id == 1 and d.state() == "CompletingRebalance"
    assert d.heartbeat("A", r.member_id, 1) == Errors.NONE


def test_heartbeat_illegal_generation():
    """Port of GroupMetadataManagerTest.testHeartbeatIllegalGeneration."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    assert d.heartbeat("L", r.member_id, r.generation_id + 1) == Errors.ILLEGAL_GENERATION


@pytest.mark.parametrize("kafka_test", ["testValidHeartbeat", "testSyncGroupEmptyAssignment"])
def test_valid_heartbeat(kafka_test):
    """Port of GroupMetadataManagerTest.testValidHeartbeat and testSyncGroupEmptyAssignment: a
    member of a Stable group (its leader synced no assignment: it holds an empty one) heartbeats
    with NONE."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    assert d.cluster.group(GROUP).member(r.member_id).assignment == b""
    assert d.heartbeat("L", r.member_id, r.generation_id) == Errors.NONE


def test_classic_group_member_session_timeout():
    """Port of GroupMetadataManagerTest.testClassicGroupMemberSessionTimeout: a member that does
    not heartbeat is removed after its session timeout; the group goes Empty (one record) and
    the member's heartbeats are then UNKNOWN_MEMBER_ID."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    since = len(d.records())
    d.advance(d.now + 5000)
    view = d.cluster.group(GROUP)
    assert view.state == "Empty" and view.members == ()
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", view.generation_id, None, None, d.now)
    assert d.heartbeat("L", r.member_id, r.generation_id) == Errors.UNKNOWN_MEMBER_ID


def test_classic_group_member_heartbeat_maintains_session():
    """Port of GroupMetadataManagerTest.testClassicGroupMemberHeartbeatMaintainsSession."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    for _ in range(2):
        d.advance(d.now + 2500)
        assert d.heartbeat("L", r.member_id, r.generation_id) == Errors.NONE


def test_classic_group_member_session_timeout_during_rebalance():
    """Port of GroupMetadataManagerTest.testClassicGroupMemberSessionTimeoutDuringRebalance: a
    member that gets REBALANCE_IN_PROGRESS and does not rejoin expires at its session timeout;
    the join phase then completes with the new member (generation 2)."""
    d = Driver()
    r = join_and_complete_rebalance(d)
    other = kjoin(d, "B", rebalance=10000, session=5000)
    assert d.response("B", other) is None and d.state() == "PreparingRebalance"
    d.advance(d.now + 2500)
    assert d.heartbeat("L", r.member_id, r.generation_id) == Errors.REBALANCE_IN_PROGRESS
    d.advance(d.now + 5000)
    assert d.heartbeat("L", r.member_id, r.generation_id) == Errors.UNKNOWN_MEMBER_ID
    d.advance(d.now + 2500)
    assert d.response("B", other).error_code == Errors.NONE
    view = d.cluster.group(GROUP)
    assert len(view.members) == 1 and view.generation_id == 2
    assert view.state == "CompletingRebalance"


def test_heartbeat_during_rebalance_causes_rebalance_in_progress():
    """Port of GroupMetadataManagerTest.testHeartbeatDuringRebalanceCausesRebalanceInProgress."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A", rebalance=10000, session=5000)
    assert r.generation_id == 1 and d.state() == "CompletingRebalance"
    assert d.response("B", kjoin(d, "B", rebalance=10000, session=5000)) is None
    assert d.heartbeat("A", r.member_id, 1) == Errors.REBALANCE_IN_PROGRESS


# =================================================================================================
# pending sync: members that do not send SyncGroup in time
# =================================================================================================


def test_rebalance_times_out_when_sync_request_is_not_received():
    """Port of GroupMetadataManagerTest.testRebalanceTimesOutWhenSyncRequestIsNotReceived:
    nobody syncs within the rebalance timeout (heartbeats do not help): every member is removed
    and the group goes Empty with a record."""
    d = Driver()
    joined = join_with_n_members(d, 3, rebalance=5000, session=5000)
    start = d.now
    d.advance(start + 2500)
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.NONE for c, r in joined)
    since = len(d.records())
    d.advance(start + 5000)
    view = d.cluster.group(GROUP)
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", view.generation_id, None, None, d.now)
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.UNKNOWN_MEMBER_ID for c, r in joined)
    assert view.state == "Empty"


def test_rebalance_times_out_when_sync_request_is_not_received_from_followers():
    """Port of
    GroupMetadataManagerTest.testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers: the
    leader syncs (Stable), the followers do not: at the rebalance timeout they are removed and
    the group rebalances, without a record."""
    d = Driver()
    joined = join_with_n_members(d, 3, rebalance=5000, session=5000)
    (leader_client, leader), *followers = joined
    start = d.now
    d.advance(start + 2500)
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.NONE for c, r in joined)
    s = d.response(leader_client, d.sync(leader_client, leader.member_id, 1))
    assert s.error_code == Errors.NONE and d.state() == "Stable"
    assert d.heartbeat(leader_client, leader.member_id, 1) == Errors.NONE
    records = len(d.records())
    d.advance(start + 5000)
    assert len(d.records()) == records
    assert d.heartbeat(leader_client, leader.member_id, 1) == Errors.REBALANCE_IN_PROGRESS
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.UNKNOWN_MEMBER_ID for c, r in followers)
    assert d.state() == "PreparingRebalance"


def test_rebalance_times_out_when_sync_request_is_not_received_from_leaders():
    """Port of
    GroupMetadataManagerTest.testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders: the
    followers sync and wait, the leader does not: at the rebalance timeout the leader is
    removed, the followers' SyncGroups get REBALANCE_IN_PROGRESS, no record."""
    d = Driver()
    joined = join_with_n_members(d, 3, rebalance=5000, session=5000)
    (leader_client, leader), *followers = joined
    start = d.now
    d.advance(start + 2500)
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.NONE for c, r in joined)
    records = len(d.records())
    syncs = [(c, d.sync(c, r.member_id, 1)) for c, r in followers]
    assert all(d.response(c, corr) is None for c, corr in syncs)
    d.advance(start + 5000)
    assert len(d.records()) == records
    assert all(d.response(c, corr).error_code == Errors.REBALANCE_IN_PROGRESS for c, corr in syncs)
    assert d.heartbeat(leader_client, leader.member_id, 1) == Errors.UNKNOWN_MEMBER_ID
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.REBALANCE_IN_PROGRESS for c, r in followers)
    assert d.state() == "PreparingRebalance"


def test_rebalance_does_not_time_out_when_all_sync_are_received():
    """Port of GroupMetadataManagerTest.testRebalanceDoesNotTimeOutWhenAllSyncAreReceived: when
    every member syncs, the pending-sync deadline is cancelled and nobody is removed."""
    d = Driver()
    joined = join_with_n_members(d, 3, rebalance=5000, session=5000)
    leader_id = joined[0][1].member_id
    start = d.now
    d.advance(start + 2500)
    assert all(d.heartbeat(c, r.member_id, 1) == Errors.NONE for c, r in joined)
    for c, r in joined:
        since = len(d.records())
        s = d.response(c, d.sync(c, r.member_id, 1))
        assert s.error_code == Errors.NONE
        assert len(group_records(d, since)) == (1 if r.member_id == leader_id else 0)
    assert d.deadline(f"/sync-{GROUP}") is None
    for step in (5000, 7500):
        d.advance(start + step)
        assert all(d.heartbeat(c, r.member_id, 1) == Errors.NONE for c, r in joined)
    assert d.state() == "Stable"


# =================================================================================================
# DescribeGroups / ListGroups
# =================================================================================================


def describe(d: Driver, group_id: str = GROUP) -> DescribedGroup:
    _corr, (response,) = d.send("X", DescribeGroupsRequest((group_id,)), d.coordinator(group_id))
    (described,) = response.groups
    return described


def one_member_record(d: Driver) -> None:
    """The group of Kafka's DescribeGroups tests: one member, written and loaded."""
    member = MemberMetadataValue(
        member_id="member-id",
        group_instance_id="group-instance-id",
        client_id="client-id",
        client_host="client-host",
        rebalance_timeout=10000,
        session_timeout=10000,
        subscription=b"\x00\x01\x02",
        assignment=b"\x00",
    )
    write_group_record(d, GroupMetadataValue("consumer", 0, "range", None, d.now, (member,)))
    d.reload()


def test_describe_group_stable():
    """Port of GroupMetadataManagerTest.testDescribeGroupStable: a Stable group is described
    with its protocol and each member's metadata and assignment. (Kafka first checks that an
    uncommitted record is not visible yet; appends are committed at once here.)"""
    d = Driver()
    one_member_record(d)
    assert describe(d) == DescribedGroup(
        Errors.NONE,
        GROUP,
        group_state="Stable",
        protocol_type="consumer",
        protocol_data="range",
        members=(
            DescribedGroupMember(
                "member-id",
                "group-instance-id",
                "client-id",
                "client-host",
                b"\x00\x01\x02",
                b"\x00",
            ),
        ),
    )


def test_describe_group_rebalancing():
    """Port of GroupMetadataManagerTest.testDescribeGroupRebalancing: a group that is not Stable
    is described without protocol and member metadata, but with each member's assignment
    (ClassicGroupMember.describeNoMetadata)."""
    d = Driver()
    one_member_record(d)
    d.prepare_rebalance("trigger rebalance", GROUP)
    assert describe(d) == DescribedGroup(
        Errors.NONE,
        GROUP,
        group_state="PreparingRebalance",
        protocol_type="consumer",
        protocol_data="",
        members=(
            DescribedGroupMember(
                "member-id", "group-instance-id", "client-id", "client-host", b"", b"\x00"
            ),
        ),
    )


def test_describe_groups_group_id_not_found():
    """Port of GroupMetadataManagerTest.testDescribeGroupsGroupIdNotFoundException: an unknown
    group is described as Dead, without error."""
    d = Driver()
    assert describe(d) == DescribedGroup(Errors.NONE, GROUP, group_state="Dead")


def test_list_groups():
    """Port of GroupMetadataManagerTest.testListGroups (its classic group; groupsim has no
    consumer or share groups, nor a group type filter): a loaded Empty group is listed with its
    protocol type; the state filter is case-insensitive and an unknown state matches nothing."""
    d = Driver()
    write_group_record(d, GroupMetadataValue("classic", 2, "range", None, d.now))
    d.reload()
    listed = ListedGroup(GROUP, "classic", "Empty")

    def list_groups(*states: str) -> tuple[ListedGroup, ...]:
        _corr, (r,) = d.send("X", ListGroupsRequest(states), d.coordinator(GROUP))
        assert r.error_code == Errors.NONE
        return r.groups

    assert list_groups() == (listed,)
    assert list_groups("empty") == (listed,)
    assert list_groups("Empty") == (listed,)
    assert list_groups("empty", "Assigning") == (listed,)
    assert list_groups("Invalid") == ()


# =================================================================================================
# LeaveGroup
# =================================================================================================


def leave(d: Driver, *identities: MemberIdentity, group_id: str = GROUP) -> LeaveGroupResponse:
    _corr, (r,) = d.send("X", LeaveGroupRequest(group_id, identities))
    return r


def ok(member_id: str = "", instance_id: str | None = None) -> LeaveGroupResponseMember:
    return LeaveGroupResponseMember(member_id, instance_id, Errors.NONE)


def failed(error: Errors, member_id: str = "", instance_id: str | None = None):
    return LeaveGroupResponseMember(member_id, instance_id, error)


def test_pending_members_leave_group():
    """Port of GroupMetadataManagerTest.testPendingMembersLeaveGroup: a pending member id can
    leave; as it was the last thing the join phase waited for, the phase completes."""
    d = Driver()
    create_group(d)
    pg = setup_group_with_pending_member(d)
    records = len(d.records())
    r = leave(d, MemberIdentity(pg.pending_id))
    assert r == LeaveGroupResponse(Errors.NONE, (ok(pg.pending_id),))
    assert len(d.records()) == records
    view = d.cluster.group(GROUP)
    assert view.state == "CompletingRebalance" and len(view.members) == 2
    assert not any(m.group_instance_id for m in view.members) and view.pending_members == ()


def test_leave_group_invalid_group():
    """Port of GroupMetadataManagerTest.testLeaveGroupInvalidGroup: a LeaveGroup (no members)
    for a group that does not exist: no member results, no error."""
    d = Driver()
    create_group(d)
    assert leave(d, group_id="invalid-group-id") == LeaveGroupResponse(Errors.NONE, ())


def test_leave_group_unknown_group():
    """Port of GroupMetadataManagerTest.testLeaveGroupUnknownGroup: each member leaving a group
    that does not exist gets UNKNOWN_MEMBER_ID."""
    d = Driver()
    r = leave(d, MemberIdentity("member-id"), group_id="unknown-group-id")
    assert r == LeaveGroupResponse(Errors.NONE, (failed(Errors.UNKNOWN_MEMBER_ID, "member-id"),))


def test_leave_group_unknown_member_id_existing_group():
    """Port of GroupMetadataManagerTest.testLeaveGroupUnknownMemberIdExistingGroup."""
    d = Driver()
    create_group(d)
    join_dynamic_and_complete_join(d, "A")
    records = len(d.records())
    r = leave(d, MemberIdentity("unknown-member-id"))
    assert r == LeaveGroupResponse(
        Errors.NONE, (failed(Errors.UNKNOWN_MEMBER_ID, "unknown-member-id"),)
    )
    assert len(d.records()) == records


def test_leave_dead_group():
    """Port of GroupMetadataManagerTest.testLeaveDeadGroup: COORDINATOR_NOT_AVAILABLE at the top
    level, no member results."""
    d = Driver()
    create_group(d)
    force(d, DEAD)
    r = leave(d, MemberIdentity("member-id"))
    assert r == LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE, ())
    assert d.records() == ()


def test_valid_leave_group():
    """Port of GroupMetadataManagerTest.testValidLeaveGroup: the only member leaves: the group
    completes an empty generation (2) and writes it."""
    d = Driver()
    create_group(d)
    r = join_dynamic_and_complete_join(d, "A")
    since = len(d.records())
    assert leave(d, MemberIdentity(r.member_id)) == LeaveGroupResponse(
        Errors.NONE, (ok(r.member_id),)
    )
    (record,) = group_records(d, since)
    assert record == GroupMetadataValue("consumer", 2, None, None, d.now)
    view = d.cluster.group(GROUP)
    assert view.state == "Empty" and view.generation_id == 2


def test_leave_group_with_fenced_instance_id():
    """Port of GroupMetadataManagerTest.testLeaveGroupWithFencedInstanceId: a known instance id
    with another member id is fenced."""
    d = Driver()
    create_group(d)
    join_static_and_complete_join(d, "A", "group-instance-id", version=V_LATEST)
    records = len(d.records())
    r = leave(d, MemberIdentity("other-member-id", "group-instance-id"))
    assert r == LeaveGroupResponse(
        Errors.NONE,
        (failed(Errors.FENCED_INSTANCE_ID, "other-member-id", "group-instance-id"),),
    )
    assert len(d.records()) == records


def test_leave_group_static_member_with_unknown_member_id():
    """Port of GroupMetadataManagerTest.testLeaveGroupStaticMemberWithUnknownMemberId: a static
    member can be removed by its instance id alone (administrative removal)."""
    d = Driver()
    create_group(d)
    join_static_and_complete_join(d, "A", "group-instance-id", version=V_LATEST)
    r = leave(d, MemberIdentity("", "group-instance-id"))
    assert r == LeaveGroupResponse(Errors.NONE, (ok("", "group-instance-id"),))
    assert d.cluster.group(GROUP).members == ()


def test_static_members_valid_batch_leave_group():
    """Port of GroupMetadataManagerTest.testStaticMembersValidBatchLeaveGroup."""
    d = Driver()
    static_members_join_and_rebalance(d)
    r = leave(d, MemberIdentity("", LEADER_INSTANCE), MemberIdentity("", FOLLOWER_INSTANCE))
    assert r == LeaveGroupResponse(
        Errors.NONE, (ok("", LEADER_INSTANCE), ok("", FOLLOWER_INSTANCE))
    )


def test_static_members_leave_unknown_group():
    """Port of GroupMetadataManagerTest.testStaticMembersLeaveUnknownGroup."""
    d = Driver()
    static_members_join_and_rebalance(d)
    r = leave(
        d,
        MemberIdentity("", LEADER_INSTANCE),
        MemberIdentity("", FOLLOWER_INSTANCE),
        group_id="invalid-group-id",
    )
    assert r == LeaveGroupResponse(
        Errors.NONE,
        (
            failed(Errors.UNKNOWN_MEMBER_ID, "", LEADER_INSTANCE),
            failed(Errors.UNKNOWN_MEMBER_ID, "", FOLLOWER_INSTANCE),
        ),
    )


def test_static_members_fenced_instance_batch_leave_group():
    """Port of GroupMetadataManagerTest.testStaticMembersFencedInstanceBatchLeaveGroup: in a
    batch, one fenced identity does not stop the others."""
    d = Driver()
    static_members_join_and_rebalance(d)
    r = leave(
        d,
        MemberIdentity("", LEADER_INSTANCE),
        MemberIdentity("invalid-member-id", FOLLOWER_INSTANCE),
    )
    assert r == LeaveGroupResponse(
        Errors.NONE,
        (
            ok("", LEADER_INSTANCE),
            failed(Errors.FENCED_INSTANCE_ID, "invalid-member-id", FOLLOWER_INSTANCE),
        ),
    )


def test_static_members_unknown_instance_batch_leave_group():
    """Port of GroupMetadataManagerTest.testStaticMembersUnknownInstanceBatchLeaveGroup: an
    unknown instance id fails alone; the follower leaves, the group rebalances (no record)."""
    d = Driver()
    static_members_join_and_rebalance(d)
    records = len(d.records())
    r = leave(d, MemberIdentity("", "unknown-instance-id"), MemberIdentity("", FOLLOWER_INSTANCE))
    assert r == LeaveGroupResponse(
        Errors.NONE,
        (failed(Errors.UNKNOWN_MEMBER_ID, "", "unknown-instance-id"), ok("", FOLLOWER_INSTANCE)),
    )
    assert len(d.records()) == records and d.state() == "PreparingRebalance"


def test_pending_member_batch_leave_group():
    """Port of GroupMetadataManagerTest.testPendingMemberBatchLeaveGroup."""
    d = Driver()
    create_group(d)
    pg = setup_group_with_pending_member(d)
    r = leave(d, MemberIdentity("", "unknown-instance-id"), MemberIdentity(pg.pending_id))
    assert r == LeaveGroupResponse(
        Errors.NONE,
        (failed(Errors.UNKNOWN_MEMBER_ID, "", "unknown-instance-id"), ok(pg.pending_id)),
    )


@pytest.mark.parametrize("with_unknown_member", [False, True])
def test_joined_member_pending_member_batch_leave_group(with_unknown_member):
    """Port of GroupMetadataManagerTest.testJoinedMemberPendingMemberBatchLeaveGroup and
    testJoinedMemberPendingMemberBatchLeaveGroupWithUnknownMember: members waiting to rejoin and
    a pending member leave in one batch (an unknown member id in it fails alone); their parked
    JoinGroups get UNKNOWN_MEMBER_ID."""
    d = Driver()
    create_group(d)
    pg = setup_group_with_pending_member(d)
    ids = [pg.leader_id, pg.follower_id, pg.pending_id]
    expected = [ok(m) for m in ids]
    if with_unknown_member:
        ids.append("unknown-member-id")
        expected.append(failed(Errors.UNKNOWN_MEMBER_ID, "unknown-member-id"))
    r = leave(d, *(MemberIdentity(m) for m in ids))
    assert r == LeaveGroupResponse(Errors.NONE, tuple(expected))
    assert d.response("L", pg.leader_join).error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.response("F", pg.follower_join).error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.cluster.group(GROUP).state == "Empty"


# =================================================================================================
# deletion and unloading
# =================================================================================================


def test_classic_group_delete():
    """Port of GroupMetadataManagerTest.testClassicGroupDelete: deleting an Empty group writes
    its tombstone."""
    d = Driver()
    create_group(d)
    _corr, (r,) = d.send("X", DeleteGroupsRequest((GROUP,)), d.coordinator(GROUP))
    assert r.results == (DeletableGroupResult(GROUP, Errors.NONE),)
    assert group_records(d) == [None]
    assert d.cluster.group(GROUP) is None


def test_classic_group_maybe_delete():
    """Port of GroupMetadataManagerTest.testClassicGroupMaybeDelete (GroupMetadataManager.
    maybeDeleteGroup, which the periodic offset expiry calls): an Empty group with no offsets is
    deleted with a tombstone; a group that is not Empty is kept, and writes nothing."""
    d = Driver()
    create_group(d)
    d.advance(d.deadline(f"/expire-offsets-{d.cluster.partition_for(GROUP)}"))
    assert group_records(d) == [None] and d.cluster.group(GROUP) is None

    d = Driver()
    create_group(d)
    force(d, PREPARING_REBALANCE)
    d.advance(d.deadline(f"/expire-offsets-{d.cluster.partition_for(GROUP)}"))
    assert group_records(d) == [] and d.state() == "PreparingRebalance"


def same_partition_group(d: Driver, group_id: str, prefix: str) -> str:
    """A group id that lives in the same ``__consumer_offsets`` partition as ``group_id``."""
    p = d.cluster.partition_for(group_id)
    return next(
        f"{prefix}-{i}" for i in range(10000) if d.cluster.partition_for(f"{prefix}-{i}") == p
    )


def test_classic_group_on_unloaded_empty_and_preparing_rebalance():
    """Port of GroupMetadataManagerTest.testClassicGroupOnUnloadedEmptyAndPreparingRebalance:
    when the partition moves away from a live broker, its groups go Dead and the JoinGroups
    parked in PreparingRebalance are answered NOT_COORDINATOR."""
    d = Driver()
    other = same_partition_group(d, GROUP, "preparing-group")
    p = d.cluster.partition_for(GROUP)
    preferred, _second = d.cluster.replicas_of("__consumer_offsets", p)[:2]
    d.apply(d.cluster.fail_broker(preferred, 0))
    d.apply(d.cluster.restart_broker(preferred, 0))
    create_group(d)
    assert d.state() == "Empty"
    corrs = [d.join(c, other, names=("range",), version=3) for c in ("A", "B")]
    view = d.cluster.group(other)
    assert view.state == "PreparingRebalance" and len(view.members) == 2
    members = {c: view.members[i].member_id for i, c in enumerate(("A", "B"))}
    assert all(d.response(c, corr) is None for c, corr in zip("AB", corrs, strict=True))
    d.apply(d.cluster.elect_preferred_leaders(d.now))
    dead = {e["group_id"] for e in d.named("group_state_changed") if e["state_to"] == "Dead"}
    assert dead == {GROUP, other}
    for c, corr in zip("AB", corrs, strict=True):
        assert d.response(c, corr) == JoinGroupResponse(
            Errors.NOT_COORDINATOR, member_id=members[c]
        )
