"""Ports of Kafka's ClassicGroupTest and ClassicGroupMemberTest, in groupsim's terms.

Kafka's tests drive a ClassicGroup (and ClassicGroupMember) object directly. groupsim splits that
class in two: ``coordinator.group.ClassicGroup`` / ``Member`` hold the state and the pure rules
(transitions, the protocol vote, leader election, member bookkeeping), and
``coordinator.shard.GroupShard`` does what the Java group does with futures and generations
(completing joins and syncs, initNextGeneration, replaceStaticMember's fencing). So a port calls
the group object where Kafka's check is about that state, and sends requests through the harness
where Kafka's check is about what the coordinator answers.

* A parked request stands for a Java future: ``Member.join_waiter`` / ``sync_waiter`` is set while
  the request is parked, and "the future completed with X" is "the client got response X".
* Exceptions a Java method throws are the response's error where a request reaches the method.
* Where a Kafka test forces a state with ClassicGroup.transitionTo, the port does the same with
  the group's state model (``Driver.force``).

Not ported (the reason for each):

* testCannotAddPendingMemberIfStable, testCannotAddPendingSyncOfUnknownMember,
  testCannotRemovePendingSyncOfUnknownMember: IllegalStateException guards against the
  coordinator misusing the group object. No request reaches them: pending ids are fresh UUIDs, and
  only validated members are added to or removed from the pending-sync set.
* testValidateOffsetDelete: the OffsetDelete API is not modelled (docs/coordinator.md).
* testCompleteAllJoinFutures, testCompleteAllSyncFutures: Kafka only calls these when a classic
  group is converted to a consumer group (online migration, KIP-848), which is not modelled.
* testFromConsumerGroupWithJoiningMember, testFromConsumerGroupWithoutJoiningMember: conversion of
  a KIP-848 consumer group back to a classic group; not modelled.
* ClassicGroupMemberTest.testMetadataRaisesOnUnsupportedProtocol: groupsim's
  ``Member.metadata_for`` returns ``b""`` for a protocol the member does not support. The
  coordinator only asks for the group's selected protocol, which every member supports (it is a
  candidate of the vote), so the guard has no observable counterpart.
* ClassicGroupMemberTest.testPlainProtocolSet: a Java helper turning the protocol collection into
  a set of names; groupsim passes the names directly.
"""

from __future__ import annotations

import pytest

from assignors.api import Subscription
from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.group import ClassicGroup, Member, Parked
from coordinator.protocol import (
    DeleteGroupsRequest,
    DescribedGroupMember,
    DescribeGroupsRequest,
    JoinGroupResponse,
    ListGroupsRequest,
    MemberIdentity,
    SyncGroupResponse,
)
from coordinator.state_machine import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    STATES,
    IllegalStateTransition,
)
from members.consumer_protocol import encode_subscription

from .harness import Driver

GROUP = "g"
INSTANCE = "groupInstanceId"


# =================================================================================================
# helpers
# =================================================================================================


def subscription(*topics: str) -> bytes:
    """A consumer's JoinGroup metadata (ConsumerProtocol.serializeSubscription) for ``topics``."""
    return encode_subscription(Subscription(topics))


def new_group() -> ClassicGroup:
    """The group of ClassicGroupTest.initialize: a new Empty group."""
    return ClassicGroup(group_id="groupId", created_ms=0)


def member(
    member_id: str,
    *protocols: str | tuple[str, bytes],
    instance_id: str | None = None,
    protocol_type: str = "consumer",
    joining: bool = False,
) -> Member:
    """A ClassicGroupMember as the Java tests build it (``joining``: added with a join future)."""
    return Member(
        member_id=member_id,
        group_instance_id=instance_id,
        client_id="clientId",
        client_host="clientHost",
        rebalance_timeout_ms=60000,
        session_timeout_ms=10000,
        protocol_type=protocol_type,
        protocols=tuple(p if isinstance(p, tuple) else (p, b"") for p in protocols),
        join_waiter=Parked("client", 1, 9) if joining else None,
    )


def assert_state(group: ClassicGroup, target: str) -> None:
    """ClassicGroupTest.assertState: in ``target`` and in none of the other states."""
    assert group.state == target
    assert group.is_in(target)
    assert not any(group.is_in(other) for other in STATES if other != target)


def shard_group(d: Driver, group_id: str = GROUP) -> ClassicGroup:
    """The coordinator's live group object."""
    return d.shard(group_id).group_manager.groups[group_id]


def sends_to(d: Driver, client: str, since: int) -> list[object]:
    """The messages the coordinator sent to ``client`` since ``len(d.sent) == since``."""
    return [s.message for s in d.sent[since:] if s.dst == client]


def stable_static_pair(d: Driver, names=("range",)) -> tuple[str, str]:
    """A static leader L ("leader") and a static follower F ("follower"), Stable, generation 1.

    Rebalance timeouts of 10 s, sessions of 30 s: a member that does not rejoin is still there
    when the next join phase ends."""
    kw = {"names": names, "rebalance": 10000, "session": 30000}
    cl = d.join("L", instance_id="leader", **kw)
    cf = d.join("F", instance_id="follower", **kw)
    d.complete_join()
    rl, rf = d.response("L", cl), d.response("F", cf)
    assert rl.error_code == rf.error_code == Errors.NONE and rl.leader == rl.member_id
    leader, follower = rl.member_id, rf.member_id
    d.sync("L", leader, 1, assignments={leader: b"l", follower: b"f"}, instance_id="leader")
    d.sync("F", follower, 1, instance_id="follower")
    assert d.state() == STABLE
    return leader, follower


# =================================================================================================
# ClassicGroupTest: canRebalance and the state machine
# =================================================================================================


def test_can_rebalance_when_empty():
    """Port of ClassicGroupTest.testCanRebalanceWhenStable (the group it builds is Empty): a
    rebalance may start from Empty."""
    assert new_group().can_rebalance()


def test_can_rebalance_when_completing_rebalance():
    """Port of ClassicGroupTest.testCanRebalanceWhenCompletingRebalance: a rebalance may restart
    from CompletingRebalance."""
    group = new_group()
    group.model.transition_to(PREPARING_REBALANCE)
    group.model.transition_to(COMPLETING_REBALANCE)
    assert group.can_rebalance()


def test_cannot_rebalance_when_preparing_rebalance():
    """Port of ClassicGroupTest.testCannotRebalanceWhenPreparingRebalance: a group already
    preparing a rebalance cannot start another."""
    group = new_group()
    group.model.transition_to(PREPARING_REBALANCE)
    assert not group.can_rebalance()


def test_cannot_rebalance_when_dead():
    """Port of ClassicGroupTest.testCannotRebalanceWhenDead: a Dead group never rebalances."""
    group = new_group()
    for state in (PREPARING_REBALANCE, EMPTY, DEAD):
        group.model.transition_to(state)
    assert not group.can_rebalance()


P, C, S, E, D = PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, EMPTY, DEAD

# (Kafka test, transitions made from a new Empty group, the transition that must fail or None)
TRANSITIONS = [
    ("testStableToPreparingRebalanceTransition", [P], None),
    ("testStableToDeadTransition", [D], None),
    ("testAwaitingRebalanceToPreparingRebalanceTransition", [P, C, P], None),
    ("testPreparingRebalanceToDeadTransition", [P, D], None),
    ("testPreparingRebalanceToEmptyTransition", [P, E], None),
    ("testEmptyToDeadTransition", [P, E, D], None),
    ("testAwaitingRebalanceToStableTransition", [P, C, S], None),
    ("testDeadToDeadIllegalTransition", [P, D, D], None),  # Dead -> Dead is allowed
    ("testEmptyToStableIllegalTransition", [], S),
    ("testStableToStableIllegalTransition", [P, C, S], S),
    ("testEmptyToAwaitingRebalanceIllegalTransition", [], C),
    ("testPreparingRebalanceToPreparingRebalanceIllegalTransition", [P], P),
    ("testPreparingRebalanceToStableIllegalTransition", [P], S),
    ("testAwaitingRebalanceToAwaitingRebalanceIllegalTransition", [P, C], C),
    ("testDeadToStableIllegalTransition", [P, D], S),
    ("testDeadToPreparingRebalanceIllegalTransition", [P, D], P),
    ("testDeadToAwaitingRebalanceIllegalTransition", [P, D], C),
]


@pytest.mark.parametrize(
    ("path", "illegal"), [t[1:] for t in TRANSITIONS], ids=[t[0] for t in TRANSITIONS]
)
def test_state_transitions(path, illegal):
    """Port of the 17 transition tests of ClassicGroupTest (the parameter ids are their names):
    every transition of Kafka's ClassicGroupState table is allowed and leaves the group in exactly
    its target state (and remembers the state it left); every other one raises and changes
    nothing."""
    group = new_group()
    before = EMPTY
    for state in path:
        group.model.transition_to(state)
        assert_state(group, state)
        assert group.previous_state == before
        before = state
    if illegal is not None:
        with pytest.raises(IllegalStateTransition):
            group.model.transition_to(illegal)
        assert_state(group, before)


# =================================================================================================
# ClassicGroupTest: the protocol vote and protocol checks
# =================================================================================================


def test_select_protocol():
    """Port of ClassicGroupTest.testSelectProtocol: each member votes for its most preferred
    protocol that every member supports, and the most votes win. Kafka's test accepts either
    protocol on a 1-1 tie; groupsim gives Kafka's deterministic answer there (the first of the tied
    names in Java HashMap order, as Stream.max keeps the first maximum), which is range."""
    group = new_group()
    group.add(member("memberId", "range", "roundrobin"))
    group.add(member("member2", "roundrobin", "range"))
    assert group.select_protocol() in ("range", "roundrobin")
    assert group.select_protocol() == "range"
    group.add(member("member3", "roundrobin", "range"))
    assert group.select_protocol() == "roundrobin"


def test_select_protocol_raises_if_no_members():
    """Port of ClassicGroupTest.testSelectProtocolRaisesIfNoMembers: a group without members has
    no protocol to select (the coordinator never asks: an empty join phase ends Empty)."""
    with pytest.raises(ValueError):
        new_group().select_protocol()


def test_select_protocol_chooses_compatible_protocol():
    """Port of ClassicGroupTest.testSelectProtocolChoosesCompatibleProtocol: a protocol only one
    member supports is never chosen, even as that member's first choice."""
    group = new_group()
    group.add(member("memberId", "range", "roundrobin"))
    group.add(member("member2", "roundrobin", "foo"))
    assert group.select_protocol() == "roundrobin"


def test_supports_protocols():
    """Port of ClassicGroupTest.testSupportsProtocols: an Empty group accepts any protocols; once
    it has members, a joining member must share its protocol type and at least one protocol that
    every member supports."""
    group = new_group()
    assert group.supports_protocols("consumer", ["range", "roundrobin"])
    group.add(member("memberId", "range", "roundrobin"))
    group.model.transition_to(PREPARING_REBALANCE)
    assert group.supports_protocols("consumer", ["roundrobin", "foo"])
    assert group.supports_protocols("consumer", ["range", "bar"])
    assert not group.supports_protocols("consumer", ["foo", "bar"])


def join_and_complete(d: Driver, client: str, **kw) -> tuple[str, JoinGroupResponse]:
    """A new dynamic member's two-step join, then the initial delay: its JoinGroup response."""
    member_id, corr = d.join_dynamic(client, GROUP, **kw)
    d.complete_join()
    response = d.response(client, corr)
    assert response is not None and response.error_code == Errors.NONE, response
    return member_id, response


def test_subscribed_topics():
    """Port of ClassicGroupTest.testSubscribedTopics: a consumer group's subscribed topics are
    read from its members' subscriptions (the ConsumerProtocol v0 prefix of the selected
    protocol's metadata) at each new generation; a group without members is subscribed to
    nothing; metadata that does not parse leaves them unknown.

    Kafka keeps an empty set for a group without members where groupsim keeps None: only a Stable
    group's subscriptions are ever consulted (offset expiry), so the two mean the same."""
    d = Driver()
    first, _ = join_and_complete(d, "A", names=("range",), metadata=subscription("foo"))
    assert shard_group(d).subscribed_topics == {"foo"}

    d.leave("A", MemberIdentity(first))  # the join phase ends with no member: Empty
    assert d.state() == EMPTY and not shard_group(d).subscribed_topics

    join_and_complete(d, "B", names=("range",), metadata=b"\x00")  # cannot be parsed
    assert d.state() == COMPLETING_REBALANCE
    assert shard_group(d).subscribed_topics is None


def test_subscribed_topics_non_consumer_group():
    """Port of ClassicGroupTest.testSubscribedTopicsNonConsumerGroup: a group whose protocol type
    is not "consumer" has no known subscriptions, whatever its members' metadata."""
    d = Driver()
    join_and_complete(d, "A", protocol_type="My Protocol", metadata=subscription("foo"))
    assert shard_group(d).protocol_type == "My Protocol"
    assert shard_group(d).subscribed_topics is None


def test_init_next_generation():
    """Port of ClassicGroupTest.testInitNextGeneration: ending the join phase bumps the
    generation and selects the protocol (none before)."""
    d = Driver()
    _member_id, corr = d.join_dynamic("A", GROUP, names=("roundrobin",))
    view = d.cluster.group(GROUP)
    assert view.state == PREPARING_REBALANCE
    assert view.generation_id == 0 and view.protocol_name is None
    d.complete_join()
    view = d.cluster.group(GROUP)
    assert view.state == COMPLETING_REBALANCE
    assert view.generation_id == 1 and view.protocol_name == "roundrobin"
    assert d.response("A", corr).protocol_name == "roundrobin"


def test_init_next_generation_empty_group():
    """Port of ClassicGroupTest.testInitNextGenerationEmptyGroup: a join phase that ends without
    members still bumps the generation; the group is Empty with no protocol."""
    d = Driver()
    member_id, _corr = d.join_dynamic("A", GROUP)
    view = d.cluster.group(GROUP)
    assert view.state == PREPARING_REBALANCE and view.generation_id == 0
    d.leave("A", MemberIdentity(member_id))  # the initial rebalance waits for its delay
    assert d.state() == PREPARING_REBALANCE
    d.complete_join()
    view = d.cluster.group(GROUP)
    assert view.state == EMPTY and view.generation_id == 1 and view.protocol_name is None


def test_update_member():
    """Port of ClassicGroupTest.testUpdateMember: a member's JoinGroup replaces its protocols, its
    session timeout and its rebalance timeout, and the group's rebalance timeout follows."""
    d = Driver()
    ids, _gen = d.stable_group(("A",), names=("roundrobin",), session=10000, rebalance=60000)
    assert shard_group(d).rebalance_timeout_ms() == 60000
    d.join("A", member_id=ids["A"], names=("range", "roundrobin"), session=20000, rebalance=120000)
    view = d.cluster.group(GROUP).member(ids["A"])
    assert view.session_timeout_ms == 20000 and view.rebalance_timeout_ms == 120000
    assert view.protocols == (("range", b"range"), ("roundrobin", b"roundrobin"))
    assert shard_group(d).rebalance_timeout_ms() == 120000


# =================================================================================================
# ClassicGroupTest: static members, parked joins and syncs, pending members
# =================================================================================================


def test_replace_group_instance_with_non_existing_member():
    """Port of ClassicGroupTest.testReplaceGroupInstanceWithNonExistingMember: replacing a member
    id the group does not hold fails instead of inventing a member."""
    group = new_group()
    with pytest.raises(KeyError):
        group.replace_static_member(INSTANCE, "memberId", "newMemberId")
    assert group.members == {} and group.static_members == {}


def test_replace_group_instance():
    """Port of ClassicGroupTest.testReplaceGroupInstance: when a static member is replaced by a
    new member id, the old id's parked JoinGroup and SyncGroup are answered FENCED_INSTANCE_ID,
    the old id is no longer awaiting anything, the instance id maps to the new id, and leadership
    moves with it. A member never has both parked at once, so each is checked on its own."""
    # A parked JoinGroup: the static leader rejoins (the follower has not, so it waits).
    d = Driver()
    leader, _follower = stable_static_pair(d)
    old_join = d.join("L", member_id=leader, instance_id="leader")
    assert d.response("L", old_join) is None
    assert d.cluster.group(GROUP).member(leader).awaiting_join
    new_join = d.join("L2", instance_id="leader")  # a new process with the same instance id
    assert d.response("L", old_join) == JoinGroupResponse(
        Errors.FENCED_INSTANCE_ID, member_id=leader
    )
    view = d.cluster.group(GROUP)
    new_leader = next(m for m in view.members if m.group_instance_id == "leader")
    assert view.member(leader) is None and new_leader.member_id != leader
    assert view.leader_id == new_leader.member_id
    assert shard_group(d).static_members["leader"] == new_leader.member_id
    assert new_leader.awaiting_join and d.response("L2", new_join) is None

    # A parked SyncGroup: the follower synced before the leader did.
    d = Driver()
    cl = d.join("L", instance_id="leader")
    cf = d.join("F", instance_id="follower")
    d.complete_join()
    follower = d.response("F", cf).member_id
    assert d.response("L", cl).leader != follower
    old_sync = d.sync("F", follower, 1, instance_id="follower")
    assert d.response("F", old_sync) is None
    assert d.cluster.group(GROUP).member(follower).awaiting_sync
    d.join("F2", instance_id="follower")
    assert d.response("F", old_sync) == SyncGroupResponse(Errors.FENCED_INSTANCE_ID)
    view = d.cluster.group(GROUP)
    assert view.member(follower) is None
    assert shard_group(d).static_members["follower"] != follower


def test_replaced_static_member_that_never_synced_is_still_pending_sync():
    """Found while porting ClassicGroupTest.testReplaceGroupInstance: ClassicGroup.
    replaceStaticMember moves the member, the leadership and the instance id to the new member id,
    but not the pending-sync entry. A static follower replaced in Stable before it sent its
    SyncGroup therefore stays pending under its old id, and when the pending-sync deadline
    (GroupMetadataManager.expirePendingSync) comes the group rebalances, although the new member
    synced."""
    d = Driver()
    timeouts = {"rebalance": 20000, "session": 30000}  # sessions outlive the sync deadline
    cl = d.join("L", instance_id="leader", **timeouts)
    cf = d.join("F", instance_id="follower", **timeouts)
    d.complete_join()
    leader, follower = d.response("L", cl).member_id, d.response("F", cf).member_id
    deadline = d.deadline("/sync-g")
    d.sync("L", leader, 1, assignments={leader: b"l", follower: b"f"}, instance_id="leader")
    assert d.state() == STABLE and set(shard_group(d).pending_sync) == {follower}
    # The follower's process restarts before its SyncGroup: replaced in place, no rebalance.
    r = d.response("F2", d.join("F2", instance_id="follower", **timeouts))
    assert r.error_code == Errors.NONE and r.generation_id == 1 and d.state() == STABLE
    s = d.response("F2", d.sync("F2", r.member_id, 1, instance_id="follower"))
    assert s.error_code == Errors.NONE and s.assignment == b"f"
    assert set(shard_group(d).pending_sync) == {follower}
    d.advance(deadline)
    view = d.cluster.group(GROUP)
    assert view.state == PREPARING_REBALANCE
    assert set(view.member_ids) == {leader, r.member_id}  # nobody left: the old id was gone


def test_complete_join_future():
    """Port of ClassicGroupTest.testCompleteJoinFuture: with every member's JoinGroup parked the
    group has all members joined; ending the join phase answers the parked request (with the
    member's id) once, and the member no longer awaits a join."""
    d = Driver()
    member_id, corr = d.join_dynamic("A", GROUP)
    group = shard_group(d)
    assert group.has_all_members_joined() and group.num_awaiting_join() == 1
    d.complete_join()
    response = d.response("A", corr)  # asserts a single answer
    assert response.error_code == Errors.NONE and response.member_id == member_id
    assert not d.cluster.group(GROUP).member(member_id).awaiting_join
    assert group.num_awaiting_join() == 0


def test_not_complete_join_future():
    """Port of ClassicGroupTest.testNotCompleteJoinFuture: a member without a parked JoinGroup is
    sent nothing when the join phase ends (here a static member that did not rejoin: it stays,
    not awaiting a join)."""
    d = Driver()
    leader, follower = stable_static_pair(d)
    # the leader's rejoin starts a rebalance
    d.join("L", member_id=leader, instance_id="leader", rebalance=10000, session=30000)
    assert d.state() == PREPARING_REBALANCE
    since = len(d.sent)
    d.complete_join()  # the rebalance timeout: the follower never rejoined
    assert d.state() == COMPLETING_REBALANCE
    assert sends_to(d, "F", since) == []
    view = d.cluster.group(GROUP).member(follower)
    assert view is not None and not view.awaiting_join


def test_complete_sync_future():
    """Port of ClassicGroupTest.testCompleteSyncFuture: a parked SyncGroup is answered once the
    assignment is known, and its member no longer awaits a sync."""
    d = Driver()
    ids, corrs = {}, {}
    for c in ("A", "B"):
        ids[c], corrs[c] = d.join_dynamic(c, GROUP)
    d.complete_join()
    leader = d.response("A", corrs["A"]).leader
    other = next(c for c in ids if ids[c] != leader)
    first = next(c for c in ids if ids[c] == leader)
    corr = d.sync(other, ids[other], 1)
    assert d.response(other, corr) is None
    assert d.cluster.group(GROUP).member(ids[other]).awaiting_sync
    d.sync(first, leader, 1, assignments={ids[other]: b"x", leader: b"y"})
    response = d.response(other, corr)
    assert response.error_code == Errors.NONE and response.assignment == b"x"
    assert not d.cluster.group(GROUP).member(ids[other]).awaiting_sync
    assert shard_group(d).num_awaiting_join() == 0


def test_not_complete_sync_future():
    """Port of ClassicGroupTest.testNotCompleteSyncFuture: a member that has not sent its
    SyncGroup is sent nothing when the leader's assignment arrives."""
    d = Driver()
    ids, corrs = {}, {}
    for c in ("A", "B"):
        ids[c], corrs[c] = d.join_dynamic(c, GROUP)
    d.complete_join()
    leader = d.response("A", corrs["A"]).leader
    other = next(c for c in ids if ids[c] != leader)
    first = next(c for c in ids if ids[c] == leader)
    since = len(d.sent)
    d.sync(first, leader, 1, assignments={ids[other]: b"x", leader: b"y"})
    assert d.state() == STABLE
    assert sends_to(d, other, since) == []
    assert not d.cluster.group(GROUP).member(ids[other]).awaiting_sync


def test_removal_from_pending_after_member_is_stable():
    """Port of ClassicGroupTest.testRemovalFromPendingAfterMemberIsStable: a member id handed out
    with MEMBER_ID_REQUIRED is pending, not a member; when it joins with that id it is a member
    and no longer pending."""
    d = Driver()
    first = d.response("A", d.join("A"))
    assert first.error_code == Errors.MEMBER_ID_REQUIRED
    view = d.cluster.group(GROUP)
    assert view.pending_members == (first.member_id,) and view.member(first.member_id) is None
    d.join("A", member_id=first.member_id)
    view = d.cluster.group(GROUP)
    assert view.pending_members == () and view.member(first.member_id) is not None


def test_removal_from_pending_when_member_is_removed():
    """Port of ClassicGroupTest.testRemovalFromPendingWhenMemberIsRemoved: removing a pending
    member id (here: its session runs out before it joins with it) leaves it neither pending nor
    a member."""
    d = Driver()
    first = d.response("A", d.join("A", session=5000))
    assert d.cluster.group(GROUP).pending_members == (first.member_id,)
    d.advance(d.now + 5000)
    view = d.cluster.group(GROUP)
    assert view.pending_members == () and view.member(first.member_id) is None


def test_cannot_add_static_member_if_already_present():
    """Port of ClassicGroupTest.testCannotAddStaticMemberIfAlreadyPresent: a group never holds two
    members with one instance id. Kafka's add() refuses a second one; at the request level a
    JoinGroup with a known instance id replaces the member instead of adding one."""
    d = Driver()
    corr = d.join("S", instance_id=INSTANCE)
    d.complete_join()
    old = d.response("S", corr).member_id
    assert shard_group(d).static_members == {INSTANCE: old}
    d.join("S2", instance_id=INSTANCE)
    view = d.cluster.group(GROUP)
    assert [m.group_instance_id for m in view.members] == [INSTANCE]
    assert view.member(old) is None
    assert shard_group(d).static_members == {INSTANCE: view.members[0].member_id}


def test_can_add_and_remove_pending_sync_member():
    """Port of ClassicGroupTest.testCanAddAndRemovePendingSyncMember: the end of the join phase
    makes every member pending sync; its SyncGroup removes it (and, the last one, the deadline)."""
    d = Driver()
    member_id, _corr = d.join_dynamic("A", GROUP)
    d.complete_join()
    assert set(shard_group(d).pending_sync) == {member_id}
    assert d.deadline("/sync-g") is not None
    d.sync("A", member_id, 1, assignments={member_id: b""})
    assert set(shard_group(d).pending_sync) == set()
    assert d.deadline("/sync-g") is None


def test_removal_from_pending_sync_when_member_is_removed():
    """Port of ClassicGroupTest.testRemovalFromPendingSyncWhenMemberIsRemoved: a removed member
    is no longer pending sync. (Every request that removes a member also starts a rebalance,
    which clears the whole set, so the group object is checked directly.)"""
    group = new_group()
    group.add(member("memberId", "roundrobin", instance_id=INSTANCE))
    group.pending_sync["memberId"] = None
    group.remove("memberId")
    assert "memberId" not in group.pending_sync and group.static_members == {}


def test_new_generation_clears_pending_sync_members():
    """Port of ClassicGroupTest.testNewGenerationClearsPendingSyncMembers: a new generation
    starts from a clear pending-sync set (then every member of the new generation is added)."""
    d = Driver()
    member_id, _corr = d.join_dynamic("A", GROUP)
    assert d.state() == PREPARING_REBALANCE
    shard_group(d).pending_sync["stale-member"] = None  # as Kafka's test adds one here
    d.complete_join()
    assert set(shard_group(d).pending_sync) == {member_id}


def test_elect_new_joined_leader():
    """Port of ClassicGroupTest.testElectNewJoinedLeader: a leader that did not rejoin is replaced
    by a member that did."""
    group = new_group()
    group.add(member("memberId", "roundrobin"))
    assert group.is_leader("memberId") and not group.members["memberId"].awaiting_join
    group.add(member("new-leader", "roundrobin", joining=True))
    group.add(member("new-member", "roundrobin"))
    assert group.maybe_elect_new_joined_leader()
    assert group.is_leader("new-leader")


def test_maybe_elect_new_joined_leader_choose_existing():
    """Port of ClassicGroupTest.testMaybeElectNewJoinedLeaderChooseExisting: a leader that
    rejoined stays the leader."""
    group = new_group()
    group.add(member("memberId", "roundrobin", joining=True))
    assert group.is_leader("memberId") and group.members["memberId"].awaiting_join
    group.add(member("new-member", "roundrobin"))
    assert group.maybe_elect_new_joined_leader()
    assert group.is_leader("memberId")


# =================================================================================================
# ClassicGroupTest: offsets, deletion and listing
# =================================================================================================


@pytest.mark.parametrize("version", range(1, 10))
def test_validate_offset_commit(version):
    """Port of ClassicGroupTest.testValidateOffsetCommit (every OffsetCommit version that reaches
    the coordinator: a KRaft broker refuses version 0 itself, see test_kafka_service.py): a commit
    without member, instance or generation passes while the group is Empty and fails with
    UNKNOWN_MEMBER_ID once it has members; an unknown member or instance id is UNKNOWN_MEMBER_ID;
    a wrong generation is ILLEGAL_GENERATION; during CompletingRebalance it is
    REBALANCE_IN_PROGRESS; a replaced static member's old id is FENCED_INSTANCE_ID; a Dead group
    is COORDINATOR_NOT_AVAILABLE. (Kafka's transactional case is not modelled.)"""
    d = Driver()
    tp = ("t", 0)

    def commit(member_id: str, instance_id: str | None, generation: int) -> Errors:
        return d.commit(
            "X", member_id, generation, {tp: 1}, instance_id=instance_id, version=version
        )[tp]

    assert commit("", None, -1) == Errors.NONE  # creates the group: Empty, no protocol type
    assert commit("", None, -1) == Errors.NONE  # and again, now that it exists
    corr = d.join("C", instance_id="instance-id", names=("roundrobin",))
    d.complete_join()
    member_id = d.response("C", corr).member_id
    assert d.cluster.group(GROUP).generation_id == 1 and d.state() == COMPLETING_REBALANCE

    assert commit("", None, -1) == Errors.UNKNOWN_MEMBER_ID
    assert commit("unknown", "unknown", -1) == Errors.UNKNOWN_MEMBER_ID
    assert commit(member_id, "unknown", -1) == Errors.UNKNOWN_MEMBER_ID
    assert commit(member_id, "instance-id", 0) == Errors.ILLEGAL_GENERATION
    assert commit(member_id, "instance-id", 1) == Errors.REBALANCE_IN_PROGRESS

    d.sync(
        "C",
        member_id,
        1,
        assignments={member_id: b""},
        protocol_name="roundrobin",
        instance_id="instance-id",
    )
    assert d.state() == STABLE
    assert commit(member_id, "instance-id", 1) == Errors.NONE

    r = d.response("C2", d.join("C2", instance_id="instance-id", names=("roundrobin",)))
    assert r.error_code == Errors.NONE and r.member_id != member_id  # replaced in place
    assert commit(member_id, "instance-id", 1) == Errors.FENCED_INSTANCE_ID

    d.force(DEAD, group_id=GROUP)
    assert commit(member_id, "new-instance-id", 1) == Errors.COORDINATOR_NOT_AVAILABLE


def delete_group(d: Driver) -> Errors:
    _corr, (response,) = d.send("X", DeleteGroupsRequest((GROUP,)), d.coordinator(GROUP))
    (result,) = response.results
    return result.error_code


def test_validate_delete_group():
    """Port of ClassicGroupTest.testValidateDeleteGroup: only an Empty group can be deleted; a
    group in any rebalance state or Stable is NON_EMPTY_GROUP, a Dead one GROUP_ID_NOT_FOUND."""
    d = Driver()
    member_id, _corr = d.join_dynamic("A", GROUP)
    assert d.state() == PREPARING_REBALANCE and delete_group(d) == Errors.NON_EMPTY_GROUP
    d.complete_join()
    assert d.state() == COMPLETING_REBALANCE and delete_group(d) == Errors.NON_EMPTY_GROUP
    d.sync("A", member_id, 1, assignments={member_id: b""})
    assert d.state() == STABLE and delete_group(d) == Errors.NON_EMPTY_GROUP
    d.leave("A", MemberIdentity(member_id))
    assert d.state() == EMPTY and delete_group(d) == Errors.NONE
    assert d.cluster.group(GROUP) is None

    d.commit("X", "", -1, {("t", 0): 1})  # a new (Empty) group
    d.force(DEAD, group_id=GROUP)
    assert delete_group(d) == Errors.GROUP_ID_NOT_FOUND


RETENTION_MS = 60000
CHECK_MS = 10000


def expiry_driver() -> Driver:
    """offsets.retention.minutes=1, checked every 10 s (from the first group's creation, t=0)."""
    return Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10,
            offsets_retention_minutes=1,
            offsets_retention_check_interval_ms=CHECK_MS,
            load_time_ms=0,
        ),
        topics={"t": 2, "topic": 1, "other": 1},
    )


def stable(
    d: Driver,
    clients: tuple[str, ...],
    protocol_type: str = "consumer",
    metadata: bytes = b"",
) -> tuple[dict[str, str], int]:
    """Dynamic members join with ``protocol_type``; the join phase ends; everyone syncs: Stable.

    Sessions last 60 s; ``keep_alive`` heartbeats for them."""
    ids, corrs = {}, {}
    kw = {"protocol_type": protocol_type, "metadata": metadata, "session": 60000}
    for c in clients:
        ids[c], corrs[c] = d.join_dynamic(c, GROUP, **kw)
    d.complete_join()
    first = d.response(clients[0], corrs[clients[0]])
    for c in clients:
        d.sync(
            c,
            ids[c],
            first.generation_id,
            assignments={m: b"" for m in ids.values()} if ids[c] == first.leader else None,
            protocol_type=protocol_type,
            protocol_name=first.protocol_name,
        )
    assert d.state() == STABLE
    return ids, first.generation_id


def keep_alive(d: Driver, until: int, *members: tuple[str, str, int]) -> None:
    """Advance to ``until`` in expiry-check steps, each (client, member id, generation) beating."""
    t = d.now
    while t < until:
        t = min(until, (t // CHECK_MS + 1) * CHECK_MS)
        d.advance(t)
        for client, member_id, generation in members:
            d.heartbeat(client, member_id, generation)


def test_offset_expiration_condition():
    """Port of ClassicGroupTest.testOffsetExpirationCondition, through the periodic expiry:
    1. a simple group (no protocol type): each offset expires retention after its commit;
    2. an Empty group with a protocol type: every offset expires retention after the group became
       Empty, whenever it was committed;
    3. a non-consumer group that is not Empty: nothing expires;
    4. a Stable consumer group that knows its subscriptions: offsets of topics it does not
       subscribe to expire retention after their commit;
    5. the same group while it rebalances: nothing expires."""
    # 1.
    d = expiry_driver()
    d.commit("X", "", -1, {("t", 0): 1})
    d.now = 5000
    d.commit("X", "", -1, {("t", 1): 1})
    d.advance(RETENTION_MS)
    assert d.cluster.committed_offsets(GROUP) == {("t", 1): 1}
    d.advance(RETENTION_MS + CHECK_MS)
    assert d.cluster.group(GROUP) is None  # no offsets left in an Empty group: deleted

    # 2.
    d = expiry_driver()
    ids, gen = stable(d, ("A",), protocol_type="My Protocol")
    assert d.commit("A", ids["A"], gen, {("t", 0): 1}) == {("t", 0): Errors.NONE}
    keep_alive(d, 20000, ("A", ids["A"], gen))
    d.leave("A", MemberIdentity(ids["A"]))
    assert d.state() == EMPTY and d.cluster.group(GROUP).protocol_type == "My Protocol"
    d.advance(30000)
    d.commit("X", "", -1, {("t", 1): 1})  # committed after the group became Empty
    d.advance(20000 + RETENTION_MS - 1)
    assert len(d.cluster.committed_offsets(GROUP)) == 2
    d.advance(20000 + RETENTION_MS)
    assert d.cluster.committed_offsets(GROUP) == {} and d.cluster.group(GROUP) is None

    # 3.
    d = expiry_driver()
    ids, gen = stable(d, ("A", "B"), protocol_type="My Protocol")
    d.commit("A", ids["A"], gen, {("t", 0): 1})
    d.join("A", member_id=ids["A"], protocol_type="My Protocol", session=60000, rebalance=600000)
    assert d.state() == PREPARING_REBALANCE
    keep_alive(d, 3 * RETENTION_MS, ("B", ids["B"], gen))
    assert d.state() == PREPARING_REBALANCE
    assert d.cluster.committed_offsets(GROUP) == {("t", 0): 1}

    # 4.
    d = expiry_driver()
    ids, gen = stable(d, ("A",), metadata=subscription("topic"))
    d.commit("A", ids["A"], gen, {("topic", 0): 1})
    keep_alive(d, 12000, ("A", ids["A"], gen))
    d.commit("A", ids["A"], gen, {("other", 0): 1})
    keep_alive(d, 12000 + RETENTION_MS - 1, ("A", ids["A"], gen))
    assert len(d.cluster.committed_offsets(GROUP)) == 2
    keep_alive(d, 12000 + RETENTION_MS + CHECK_MS, ("A", ids["A"], gen))
    assert d.cluster.committed_offsets(GROUP) == {("topic", 0): 1}

    # 5.
    d = expiry_driver()
    ids, gen = stable(d, ("A", "B"), metadata=subscription("topic"))
    d.commit("A", ids["A"], gen, {("other", 0): 1})
    d.join("A", member_id=ids["A"], metadata=subscription("topic"), session=60000, rebalance=600000)
    assert d.state() == PREPARING_REBALANCE
    keep_alive(d, 3 * RETENTION_MS, ("B", ids["B"], gen))
    assert d.state() == PREPARING_REBALANCE
    assert d.cluster.committed_offsets(GROUP) == {("other", 0): 1}


def test_is_subscribed_to_topic():
    """Port of ClassicGroupTest.testIsSubscribedToTopic: a group knows which topics it subscribes
    to only when it uses the consumer protocol: a simple group and a non-consumer group subscribe
    to nothing known, a consumer group without members to nothing, a consumer group to the topics
    of its members' subscriptions."""
    d = Driver()
    d.commit("X", "", -1, {("topic", 0): 1})  # a simple group: no protocol type
    group = shard_group(d)
    assert group.protocol_type is None and group.subscribed_topics is None

    member_id, _ = join_and_complete(
        d, "A", protocol_type="My Protocol", metadata=subscription("topic")
    )
    assert d.state() == COMPLETING_REBALANCE and group.subscribed_topics is None

    d.leave("A", MemberIdentity(member_id))
    member_id, _corr = d.join_dynamic("B", GROUP, metadata=subscription("topic"))
    d.leave("B", MemberIdentity(member_id))
    d.complete_join()
    assert d.state() == EMPTY and group.protocol_type == "consumer"
    assert not group.subscribed_topics

    join_and_complete(d, "C", metadata=subscription("topic"))
    assert d.state() == COMPLETING_REBALANCE and group.subscribed_topics == {"topic"}


def listed(d: Driver, *states: str) -> list[str]:
    """ListGroups with a state filter: the listed group ids."""
    _corr, (response,) = d.send("X", ListGroupsRequest(states), d.coordinator(GROUP))
    assert response.error_code == Errors.NONE
    return [g.group_id for g in response.groups]


def test_is_in_states():
    """Port of ClassicGroupTest.testIsInStates, through ListGroups: a group matches the state
    filter that names its state in lower case; the coordinator lower-cases (and trims) the filter
    first (GroupMetadataManager.listGroups), so any spelling of the state matches, and other
    states do not."""
    d = Driver()
    d.commit("X", "", -1, {("t", 0): 1})
    assert listed(d, "empty") == [GROUP]
    member_id, _corr = d.join_dynamic("A", GROUP)
    assert listed(d, "preparingrebalance") == [GROUP]
    assert listed(d, "PreparingRebalance") == [GROUP]
    assert listed(d, "empty") == []
    d.complete_join()
    assert listed(d, "completingrebalance") == [GROUP]
    d.sync("A", member_id, 1, assignments={member_id: b""})
    assert listed(d, "stable") == [GROUP]
    assert listed(d, "empty") == []
    assert listed(d, " Stable ") == [GROUP]
    d.force(DEAD, group_id=GROUP)
    assert listed(d, "dead", " ") == [GROUP]


# =================================================================================================
# ClassicGroupMemberTest
# =================================================================================================


def kafka_member(*protocols: tuple[str, bytes]) -> Member:
    """The member of ClassicGroupMemberTest (static, protocol type "generic")."""
    return Member(
        member_id="member",
        group_instance_id="group-instance-id",
        client_id="client-id",
        client_host="client-host",
        rebalance_timeout_ms=10,
        session_timeout_ms=4500,
        protocol_type="generic",
        protocols=protocols,
    )


def test_matches_supported_protocols():
    """Port of ClassicGroupMemberTest.testMatchesSupportedProtocols: a JoinGroup matches a
    member's protocols only with the same names, in the same order, with byte-identical
    metadata."""
    m = kafka_member(("range", b"\x00"))
    assert m.matches((("range", b"\x00"),))
    assert not m.matches((("range", b"\x01"),))
    assert not m.matches((("range", b""),))
    assert not m.matches((("range", b""), ("roundrobin", b"")))
    assert m.matches(m.protocols)


def test_vote_for_preferred_protocol():
    """Port of ClassicGroupMemberTest.testVoteForPreferredProtocol: a member votes for the first
    protocol of its own list among the candidates."""
    m = kafka_member(("range", b""), ("roundrobin", b""))
    assert m.vote({"range", "roundrobin"}) == "range"
    assert m.vote({"unknown", "roundrobin"}) == "roundrobin"


def test_metadata():
    """Port of ClassicGroupMemberTest.testMetadata: a member's metadata for each protocol."""
    m = kafka_member(("range", b"\x00"), ("roundrobin", b"\x01"))
    assert m.metadata_for("range") == b"\x00"
    assert m.metadata_for("roundrobin") == b"\x01"


def test_vote_raises_on_no_supported_protocols():
    """Port of ClassicGroupMemberTest.testVoteRaisesOnNoSupportedProtocols: a member cannot vote
    when it supports none of the candidates."""
    m = kafka_member(("range", b"\x00"), ("roundrobin", b"\x01"))
    with pytest.raises(RuntimeError):
        m.vote({"unknown"})


def test_has_valid_group_instance_id():
    """Port of ClassicGroupMemberTest.testHasValidGroupInstanceId: a member with an instance id is
    static."""
    m = kafka_member()
    assert m.is_static and m.group_instance_id == "group-instance-id"


def test_has_heartbeat_satisfied():
    """Port of ClassicGroupMemberTest.testHasHeartbeatSatisfied: a member's parked JoinGroup or
    SyncGroup stands in for its heartbeats, unless it is new (the new-member join timeout)."""
    m = kafka_member()
    assert not m.has_satisfied_heartbeat()
    m.is_new = True
    assert not m.has_satisfied_heartbeat()
    m.is_new = False
    m.join_waiter = Parked("client", 1, 9)
    assert m.has_satisfied_heartbeat()
    m.join_waiter = None
    m.sync_waiter = Parked("client", 2, 5)
    assert m.has_satisfied_heartbeat()


def describe_member(d: Driver, member_id: str) -> DescribedGroupMember:
    _corr, (response,) = d.send("X", DescribeGroupsRequest((GROUP,)), d.coordinator(GROUP))
    (group,) = response.groups
    return next(m for m in group.members if m.member_id == member_id)


def test_describe_no_metadata():
    """Port of ClassicGroupMemberTest.testDescribeNoMetadata: outside Stable a member is described
    with its ids, client and current assignment, without metadata."""
    d = Driver()
    leader, follower = stable_static_pair(d)
    d.join("L", member_id=leader, instance_id="leader", rebalance=10000, session=30000)
    d.complete_join()
    assert d.state() == COMPLETING_REBALANCE
    assert describe_member(d, follower) == DescribedGroupMember(
        follower, "follower", "F", "/127.0.0.1", b"", b"f"
    )


def test_describe():
    """Port of ClassicGroupMemberTest.testDescribe: in Stable a member is also described with its
    metadata for the group's protocol."""
    d = Driver()
    _leader, follower = stable_static_pair(d, names=("range", "roundrobin"))
    assert describe_member(d, follower) == DescribedGroupMember(
        follower, "follower", "F", "/127.0.0.1", b"range", b"f"
    )
