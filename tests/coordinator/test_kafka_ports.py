"""Ports of Kafka's own coordinator tests (GroupMetadataManagerTest), in the harness's terms.

Kafka's MockCoordinatorTimer runs every timer due during a ``sleep`` at the *end* of the sleep;
the harness fires each timer at its own deadline, so the times below are the real deadlines.

Left out: the classic-group metrics tests testClassicGroupCompletedRebalanceSensor and
testUpdateClassicGroupSizeCounter (no Kafka metrics here). The consumer-group tests of
GroupMetadataManagerTest are in test_kafka_consumer_group_heartbeat.py and
test_kafka_migration.py.
"""

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import MemberIdentity
from coordinator.state_machine import EMPTY, PREPARING_REBALANCE

from .harness import TEST_CONFIG, Driver


def static_pair(d: Driver, rebalance=10000, session=5000):
    """GroupMetadataManagerTestContext.staticMembersJoinAndRebalance."""
    cl = d.join("L", instance_id="leader-instance-id", rebalance=rebalance, session=session)
    cf = d.join("F", instance_id="follower-instance-id", rebalance=rebalance, session=session)
    d.complete_join()
    rl, rf = d.response("L", cl), d.response("F", cf)
    assert rl.generation_id == rf.generation_id == 1
    leader, follower = rl.member_id, rf.member_id
    assert d.cluster.group("g").leader_id == leader
    d.sync(
        "L",
        leader,
        1,
        assignments={leader: b"\x01", follower: b"\x02"},
        instance_id="leader-instance-id",
    )
    r = d.response("F", d.sync("F", follower, 1, instance_id="follower-instance-id"))
    assert r.assignment == b"\x02" and d.state() == "Stable"
    return leader, follower


def shard(d: Driver):
    return d.cluster.service.shards[d.cluster.partition_for("g")]


def test_group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member():
    """Port of
    GroupMetadataManagerTest.testGroupStuckInRebalanceTimeoutDueToNonjoinedStaticMember: a
    static member that never rejoins is kept at the end of the join phase, so with no other
    member left the group stays in PreparingRebalance, the join phase re-armed for the rebalance
    timeout."""
    d = Driver()
    leader, follower = static_pair(d, rebalance=5000, session=10000)
    t0 = d.now
    corr = d.join("N", version=3, session=10000, rebalance=5000)  # a new dynamic member
    d.advance(t0 + 5000)
    r = d.response("N", corr)
    assert r.error_code == Errors.NONE and r.leader == r.member_id  # the joined member leads
    assert len(r.members) == 3 and r.generation_id == 2
    assert d.state() == "CompletingRebalance"
    left = d.leave("F", MemberIdentity(follower, "follower-instance-id"))
    assert left.members[0].error_code == Errors.NONE
    assert d.state() == "PreparingRebalance"
    d.advance(d.now + 5000)
    view = d.cluster.group("g")
    # only the static leader is kept, and the group is stuck in PreparingRebalance
    assert view.member_ids == (leader,) and view.generation_id == 2
    assert view.state == "PreparingRebalance"
    assert d.deadline("join-g") == d.now + 5000  # re-armed for R


def test_static_member_rejoin_with_leader_id_and_unexpected_empty_group():
    """Port of
    GroupMetadataManagerTest.testStaticMemberRejoinWithLeaderIdAndUnexpectedEmptyGroup: a known
    static member rejoining a group that is (unexpectedly) Empty gets UNKNOWN_MEMBER_ID."""
    d = Driver()
    leader, _ = static_pair(d)
    group = shard(d).group_manager.groups["g"]
    group.model.transition_to(PREPARING_REBALANCE)
    group.model.transition_to(EMPTY)
    r = d.response("L", d.join("L", member_id=leader, instance_id="leader-instance-id"))
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID


def test_static_member_rejoin_with_illegal_state_as_unknown_member():
    """Port of GroupMetadataManagerTest.testStaticMemberReJoinWithIllegalStateAsUnknownMember: a
    static member replaced while the group is (unexpectedly) Empty makes Kafka throw
    IllegalStateException, answered UNKNOWN_SERVER_ERROR."""
    d = Driver()
    static_pair(d)
    group = shard(d).group_manager.groups["g"]
    group.model.transition_to(PREPARING_REBALANCE)
    group.model.transition_to(EMPTY)
    r = d.response("F", d.join("F", instance_id="follower-instance-id"))
    assert r.error_code == Errors.UNKNOWN_SERVER_ERROR  # Kafka: IllegalStateException


def test_join_group_completion_when_pending_member_times_out():
    """Port of GroupMetadataManagerTest.testJoinGroupCompletionWhenPendingMemberTimesOut: the
    expiry of the pending id that held the join phase open completes it."""
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"), session=5000)
    t0 = d.now
    pending = d.response("P", d.join("P", session=2500)).member_id
    for c in ("A", "B"):
        d.join(c, member_id=ids[c], session=5000)
    assert d.state() == "PreparingRebalance"  # held open by the pending id
    d.advance(t0 + 2500)
    view = d.cluster.group("g")
    assert view.state == "CompletingRebalance" and len(view.members) == 2
    assert pending not in view.pending_members and view.pending_members == ()


def test_second_member_partially_joins_and_times_out():
    """Port of GroupMetadataManagerTest.testSecondMemberPartiallyJoinAndTimeout: a member that
    got MEMBER_ID_REQUIRED and never came back expires without disturbing the Stable group."""
    d = Driver()
    c = d.join("L", instance_id="leader-instance-id", rebalance=10000, session=5000)
    d.complete_join()
    first = d.response("L", c)
    d.sync(
        "L",
        first.member_id,
        1,
        assignments={first.member_id: b"a"},
        instance_id="leader-instance-id",
    )
    t0 = d.now
    assert d.response("N", d.join("N", session=5000)).error_code == Errors.MEMBER_ID_REQUIRED
    for i in (1, 2):
        d.advance(t0 + 2500 * i)
        assert d.heartbeat("L", first.member_id, 1) == Errors.NONE
    view = d.cluster.group("g")
    assert view.member_ids == (first.member_id,) and view.generation_id == 1
    assert view.state == "Stable" and view.pending_members == ()


def test_rebalance_completes_before_member_joins():
    """Port of GroupMetadataManagerTest.testRebalanceCompletesBeforeMemberJoins: an unjoined
    static member is kept when the join phase ends, and later expires by its session timeout,
    which rebalances the group again."""
    d = Driver()
    c = d.join("L", instance_id="leader-instance-id", rebalance=10000, session=5000)
    d.complete_join()
    first = d.response("L", c)
    d.sync(
        "L",
        first.member_id,
        1,
        assignments={first.member_id: b"a"},
        instance_id="leader-instance-id",
    )
    t0 = d.now
    corr = d.join("N", version=3, rebalance=10000, session=2500)
    assert d.state() == "PreparingRebalance"
    for i in (1, 2):
        d.advance(t0 + 2500 * i)
        assert d.heartbeat("L", first.member_id, 1) == Errors.REBALANCE_IN_PROGRESS
    d.advance(t0 + 10000)
    r = d.response("N", corr)
    assert r.error_code == Errors.NONE and r.generation_id == 2 and r.leader == r.member_id
    assert len(d.cluster.group("g").members) == 2  # the static member was not kicked out
    d.sync("N", r.member_id, 2, assignments={r.member_id: b"n"})
    assert d.state() == "Stable"
    assert d.heartbeat("L", first.member_id, 1) == Errors.ILLEGAL_GENERATION
    # the unjoined static member's session (re-armed at completion, 5000) runs out at +15000
    expected = [Errors.NONE, Errors.NONE, Errors.REBALANCE_IN_PROGRESS]
    for i, error in enumerate(expected, start=1):
        d.advance(t0 + 10000 + 2000 * i)
        assert d.heartbeat("N", r.member_id, 2) == error
    assert d.cluster.group("g").member_ids == (r.member_id,)
    again = d.response("N", d.join("N", member_id=r.member_id, version=3, session=2500))
    assert again.generation_id == 3 and d.state() == "CompletingRebalance"


def test_on_loaded_exceeding_group_max_size_triggers_rebalance():
    """Port of GroupMetadataManagerTest.testOnLoadedExceedGroupMaxSizeTriggersRebalance: a group
    loaded with more members than group.max.size rebalances."""
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    _ids, _gen = d.stable_group(("A", "B", "C"))
    d.cluster.config = CoordinatorConfig(
        group_min_session_timeout_ms=10, load_time_ms=0, group_max_size=2
    )
    node = d.coordinator("g")
    d.apply(d.cluster.fail_broker(node, d.now))
    view = d.cluster.group("g")
    assert view.state == "PreparingRebalance" and len(view.members) == 3


def test_on_loaded_schedules_member_heartbeats():
    """Port of GroupMetadataManagerTest.testOnLoadedSchedulesClassicGroupMemberHeartbeats:
    loading gives every member a fresh session timer, and nothing else."""
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, load_time_ms=0))
    ids, _gen = d.stable_group(("A", "B"), session=7000)
    d.now = 1234
    node = d.coordinator("g")
    d.apply(d.cluster.fail_broker(node, d.now))
    new = d.coordinator("g")
    for m in ids.values():
        assert d.deadline(f"{new}/heartbeat-g-{m}") == 1234 + 7000
    assert d.deadline(f"{new}/join-g") is None and d.deadline(f"{new}/sync-g") is None


def test_dynamic_members_can_rejoin_group_with_max_size_while_rebalancing():
    """Port of
    GroupMetadataManagerTest.testDynamicMembersCanRejoinGroupWithMaxSizeWhileRebalancing
    (smaller sizes): members may rejoin while the group is full, a new one is turned away."""
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, group_max_size=3, load_time_ms=0))
    ids, _gen = d.stable_group(("A", "B", "C"))
    leader = d.cluster.group("g").leader_id
    order = sorted(ids, key=lambda c: ids[c] != leader)
    corrs = {c: d.join(c, member_id=ids[c]) for c in order}
    assert all(d.response(c, corrs[c]).error_code == Errors.NONE for c in order)
    # a fourth member is turned away once the group is full
    new = d.response("D", d.join("D")).member_id
    r = d.response("D", d.join("D", member_id=new))
    assert r.error_code == Errors.GROUP_MAX_SIZE_REACHED


def test_static_members_join_group_with_max_size():
    """Port of GroupMetadataManagerTest.testStaticMembersJoinGroupWithMaxSize (smaller sizes):
    static members beyond group.max.size are rejected."""
    d = Driver(CoordinatorConfig(group_min_session_timeout_ms=10, group_max_size=2, load_time_ms=0))
    corrs = [d.join(f"S{i}", instance_id=f"s{i}") for i in range(3)]
    # in Empty every request is accepted; the third arrives in PreparingRebalance
    assert d.response("S2", corrs[2]).error_code == Errors.GROUP_MAX_SIZE_REACHED
    d.complete_join()
    assert len(d.cluster.group("g").members) == 2


def test_classic_group_on_unloaded_completing_rebalance():
    """Port of GroupMetadataManagerTest.testClassicGroupOnUnloadedCompletingRebalance: when the
    partition moves away from a live broker, the group goes Dead and parked SyncGroups are
    answered NOT_COORDINATOR."""
    d = Driver(TEST_CONFIG)
    p = d.cluster.partition_for("g")
    preferred, other = d.cluster.replicas_of("__consumer_offsets", p)[:2]
    # leadership leaves the preferred replica and that broker comes back alive as a follower
    d.apply(d.cluster.fail_broker(preferred, 0))
    d.apply(d.cluster.restart_broker(preferred, 0))
    assert d.coordinator("g") == other
    x, _cx = d.join_dynamic("X")
    y, _cy = d.join_dynamic("Y")
    d.complete_join()
    leader = d.cluster.group("g").leader_id
    client, member = ("Y", y) if leader == x else ("X", x)
    corr = d.sync(client, member, 1)
    assert d.response(client, corr) is None
    d.apply(d.cluster.elect_preferred_leaders(d.now))  # `other` unloads while alive
    r = d.response(client, corr)
    assert r.error_code == Errors.NOT_COORDINATOR
    unloaded = [e for e in d.named("group_state_changed") if e["state_to"] == "Dead"]
    assert unloaded[-1]["state_from"] == "CompletingRebalance"
    # the group comes back on the preferred broker from its last record: the empty group
    assert d.coordinator("g") == preferred
    assert d.cluster.group("g").state == "Empty"
