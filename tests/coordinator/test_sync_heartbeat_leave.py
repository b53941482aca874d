"""SyncGroup, Heartbeat and session expiry, LeaveGroup, pending sync (expirePendingSync)."""

from coordinator.errors import Errors
from coordinator.protocol import MemberIdentity, SyncGroupRequest

from .harness import Driver


def completing(d: Driver, clients=("A", "B"), **kw):
    ids, corrs = {}, {}
    for c in clients:
        ids[c], corrs[c] = d.join_dynamic(c, **kw)
    d.complete_join()
    resp = {c: d.response(c, corrs[c]) for c in clients}
    leader = next(c for c in clients if resp[c].members)
    return ids, resp[clients[0]].generation_id, leader


# --- SyncGroup ----------------------------------------------------------------------------------


def test_followers_wait_for_the_leader_and_get_their_assignment():
    d = Driver()
    ids, gen, leader = completing(d, ("A", "B", "C"))
    followers = [c for c in ids if c != leader]
    corr_f = d.sync(followers[0], ids[followers[0]], gen)
    assert d.response(followers[0], corr_f) is None
    # the leader leaves followers[1] out of the assignment
    corr_l = d.sync(
        leader,
        ids[leader],
        gen,
        assignments={ids[leader]: b"L", ids[followers[0]]: b"F", "stranger": b"?"},
    )
    assert d.response(leader, corr_l).assignment == b"L"
    rf = d.response(followers[0], corr_f)
    assert rf.error_code == Errors.NONE and rf.assignment == b"F"
    assert rf.protocol_type == "consumer" and rf.protocol_name == "range"
    assert d.state() == "Stable"
    # the member left out gets an empty assignment from the Stable group
    r = d.response(followers[1], d.sync(followers[1], ids[followers[1]], gen))
    assert r.error_code == Errors.NONE and r.assignment == b""
    record = d.cluster.offsets_log.partition(d.cluster.partition_for("g"))[-1]
    assert {m.member_id: m.assignment for m in record.value.members} == {
        ids[leader]: b"L",
        ids[followers[0]]: b"F",
        ids[followers[1]]: b"",
    }
    assert record.value.generation == gen and record.value.leader == ids[leader]


def test_stable_sync_ignores_the_leaders_new_assignments():
    d = Driver()
    ids, gen = d.stable_group(("A",))
    r = d.response("A", d.sync("A", ids["A"], gen, assignments={ids["A"]: b"new"}))
    assert r.assignment == f"asg-{ids['A']}".encode()


def test_sync_checks_in_order():
    d = Driver()
    ids, gen, leader = completing(d)
    m = ids[leader]
    assert (
        d.response("X", d.sync("X", m, gen, group_id="nope")).error_code == Errors.UNKNOWN_MEMBER_ID
    )
    assert d.response("X", d.sync("X", "bogus", gen)).error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.response("X", d.sync("X", m, gen + 1)).error_code == Errors.ILLEGAL_GENERATION
    r = d.response("X", d.sync("X", m, gen, protocol_type="connect"))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    r = d.response("X", d.sync("X", m, gen, protocol_name="roundrobin"))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert r.assignment == b"" and r.protocol_name is None


def test_sync_v5_requires_protocol_fields_but_older_versions_do_not():
    d = Driver()
    ids, gen, _leader = completing(d, ("A",))
    _, got = d.send("A", SyncGroupRequest("g", gen, ids["A"], api_version=5))
    assert got[0].error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    _, got = d.send("A", SyncGroupRequest("g", gen, ids["A"], api_version=4))
    assert got[0].error_code == Errors.NONE


def test_sync_in_preparing_rebalance_and_empty():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"))
    d.join("A", member_id=ids["A"], names=("range", "x"))
    assert d.state() == "PreparingRebalance"
    assert d.response("B", d.sync("B", ids["B"], gen)).error_code == Errors.REBALANCE_IN_PROGRESS
    d2 = Driver()
    ids, gen = d2.stable_group(("A",))
    d2.leave("A", MemberIdentity(ids["A"]))
    assert d2.response("A", d2.sync("A", ids["A"], gen)).error_code == Errors.UNKNOWN_MEMBER_ID


def test_a_new_member_during_completing_rebalance_sends_parked_syncs_back():
    d = Driver()
    ids, gen, leader = completing(d)
    follower = next(c for c in ids if c != leader)
    corr = d.sync(follower, ids[follower], gen)
    d.join_dynamic("C")
    r = d.response(follower, corr)
    assert r.error_code == Errors.REBALANCE_IN_PROGRESS and r.assignment == b""
    assert d.state() == "PreparingRebalance"


def test_failed_assignment_append_answers_with_the_mapped_error_and_rebalances():
    d = Driver()
    ids, gen, leader = completing(d)
    follower = next(c for c in ids if c != leader)
    corr_f = d.sync(follower, ids[follower], gen)
    d.cluster.fail_next_append(Errors.NOT_LEADER_OR_FOLLOWER)
    corr_l = d.sync(leader, ids[leader], gen, assignments={ids[leader]: b"x"})
    assert d.response(leader, corr_l).error_code == Errors.NOT_COORDINATOR
    assert d.response(follower, corr_f).error_code == Errors.NOT_COORDINATOR
    assert d.state() == "PreparingRebalance"
    assert all(m.assignment == b"" for m in d.cluster.group("g").members)


# --- Heartbeat ----------------------------------------------------------------------------------


def test_heartbeat_answers_by_state():
    d = Driver()
    assert d.heartbeat("A", "m", 0, group_id="nope") == Errors.UNKNOWN_MEMBER_ID
    ids, gen, leader = completing(d)
    assert d.heartbeat("A", ids["A"], gen) == Errors.NONE  # CompletingRebalance
    assert d.heartbeat("A", ids["A"], gen - 1) == Errors.ILLEGAL_GENERATION
    assert d.heartbeat("A", "bogus", gen) == Errors.UNKNOWN_MEMBER_ID
    for c in ids:
        d.sync(c, ids[c], gen, assignments={ids[c]: b"x"} if c == leader else None)
    assert d.heartbeat("A", ids["A"], gen) == Errors.NONE  # Stable
    d.join_dynamic("C")
    assert d.state() == "PreparingRebalance"
    assert d.heartbeat("A", ids["A"], gen) == Errors.REBALANCE_IN_PROGRESS
    pending = d.response("D", d.join("D")).member_id
    assert d.heartbeat("D", pending, gen) == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_refreshes_the_session_but_not_on_illegal_generation():
    d = Driver()
    ids, gen = d.stable_group(("A",))
    d.now = 5000
    d.heartbeat("A", ids["A"], gen)
    key = "heartbeat-g-" + ids["A"]
    assert d.deadline(key) == 15000
    d.now = 6000
    d.heartbeat("A", ids["A"], gen + 5)
    assert d.deadline(key) == 15000


def test_session_expiry_in_stable_rebalances_and_rejoin_completes():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"))
    t = d.now
    for step in range(1, 4):
        d.advance(t + step * 4000)
        d.heartbeat("A", ids["A"], gen)
    assert d.state() == "PreparingRebalance"  # B expired at t + 10000
    removed = d.named("member_removed")
    assert removed[-1]["member_id"] == ids["B"] and "session" in removed[-1]["reason"]
    assert d.heartbeat("A", ids["A"], gen) == Errors.REBALANCE_IN_PROGRESS
    corr = d.join("A", member_id=ids["A"])
    assert d.response("A", corr).generation_id == gen + 1


def test_new_member_parked_join_is_not_protected_but_uses_the_join_timeout():
    d = Driver()
    _ids, _gen = d.stable_group(("A",))
    d.now = 100
    b, _corr = d.join_dynamic("B")
    assert d.deadline("heartbeat-g-" + b) == 100 + 300000


def test_parked_members_need_no_heartbeats():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"), session=10000, rebalance=100000)
    d.now = 1000
    corr_a = d.join("A", member_id=ids["A"], session=10000, rebalance=100000)
    # B does not rejoin but heartbeats; A is parked and silent for 50 s
    for t in range(5000, 60000, 5000):
        d.advance(t)
        d.heartbeat("B", ids["B"], gen)
    assert ids["A"] in d.cluster.group("g").member_ids
    assert d.response("A", corr_a) is None


def test_new_member_whose_parked_join_outlives_the_join_timeout_is_removed():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"), session=120000, rebalance=400000)
    leader = next(c for c in ids if ids[c] == d.cluster.group("g").leader_id)
    other = next(c for c in ids if c != leader)
    d.now = 1000
    d.join(leader, member_id=ids[leader], session=120000, rebalance=400000)
    c, corr_c = d.join_dynamic("C", rebalance=400000)  # the phase lasts R = 400000
    for t in range(60000, 301001, 60000):
        d.advance(t)
        d.heartbeat(other, ids[other], gen)
    d.advance(1000 + 300000)
    r = d.response("C", corr_c)
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.member_id == ""
    assert c not in d.cluster.group("g").member_ids
    assert d.state() == "PreparingRebalance"


# --- LeaveGroup ---------------------------------------------------------------------------------


def test_leave_batch_each_identity_independently():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B", "C"))
    pending = d.response("P", d.join("P")).member_id
    r = d.leave(
        "ADMIN",
        MemberIdentity(ids["A"]),
        MemberIdentity("bogus"),
        MemberIdentity(pending),
        MemberIdentity(""),
    )
    assert r.error_code == Errors.NONE
    assert [m.error_code for m in r.members] == [
        Errors.NONE,
        Errors.UNKNOWN_MEMBER_ID,
        Errors.NONE,
        Errors.UNKNOWN_MEMBER_ID,
    ]
    assert [m.member_id for m in r.members] == [ids["A"], "bogus", pending, ""]
    view = d.cluster.group("g")
    assert ids["A"] not in view.member_ids and pending not in view.pending_members
    assert view.state == "PreparingRebalance"


def test_leave_of_last_member_goes_empty_with_generation_bump_and_record():
    d = Driver()
    ids, gen = d.stable_group(("A",))
    d.leave("A", MemberIdentity(ids["A"]))
    view = d.cluster.group("g")
    assert view.state == "Empty" and view.generation_id == gen + 1
    record = d.cluster.offsets_log.partition(d.cluster.partition_for("g"))[-1]
    assert record.value.generation == gen + 1 and record.value.members == ()
    assert record.value.protocol_type == "consumer"


def test_leave_answers_a_parked_join_unknown_member_id():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"))
    corr = d.join("A", member_id=ids["A"], names=("range", "other"))
    d.leave("A", MemberIdentity(ids["A"]))
    r = d.response("A", corr)
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.member_id == ""


def test_leave_unknown_group_and_old_versions():
    d = Driver()
    r = d.leave("A", MemberIdentity("m1"), MemberIdentity("m2"), group_id="nope")
    assert r.error_code == Errors.NONE
    assert [m.error_code for m in r.members] == [Errors.UNKNOWN_MEMBER_ID] * 2
    _ids, _gen = d.stable_group(("A",))
    r = d.leave("A", MemberIdentity("bogus"), version=2)
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.members == ()


# --- pending sync (expirePendingSync) -----------------------------------------------------------


def test_leader_that_never_syncs_is_removed_at_join_completion_plus_r():
    d = Driver()
    ids, gen, leader = completing(d, ("A", "B"), session=120000, rebalance=20000)
    t0 = d.now
    follower = next(c for c in ids if c != leader)
    corr = d.sync(follower, ids[follower], gen)
    d.advance(t0 + 20000)
    assert ids[leader] not in d.cluster.group("g").member_ids
    assert d.response(follower, corr).error_code == Errors.REBALANCE_IN_PROGRESS
    assert d.state() == "PreparingRebalance"


def test_silent_follower_is_removed_even_after_stable():
    d = Driver()
    ids, gen, leader = completing(d, ("A", "B"), session=120000, rebalance=20000)
    t0 = d.now
    d.sync(leader, ids[leader], gen, assignments={ids[leader]: b"x"})
    assert d.state() == "Stable"
    d.advance(t0 + 20000)
    follower = next(c for c in ids if c != leader)
    assert ids[follower] not in d.cluster.group("g").member_ids
    assert d.state() in ("PreparingRebalance", "CompletingRebalance")


def test_everyone_syncing_cancels_the_deadline():
    d = Driver()
    ids, gen, leader = completing(d, ("A", "B"))
    assert d.deadline("sync-g") is not None
    for c in ids:
        d.sync(c, ids[c], gen, assignments={ids[leader]: b"x"} if c == leader else None)
    assert d.deadline("sync-g") is None


def test_nobody_syncs_goes_empty():
    d = Driver()
    _ids, gen, _leader = completing(d, ("A",), session=120000, rebalance=20000)
    d.advance(d.now + 20000)
    view = d.cluster.group("g")
    # removed, prepare rebalance (no members, not initial): completes at once -> Empty
    assert view.state == "Empty" and view.generation_id == gen + 1


def test_second_parked_sync_drops_the_first():
    d = Driver()
    ids, gen, leader = completing(d)
    follower = next(c for c in ids if c != leader)
    first = d.sync(follower, ids[follower], gen)
    second = d.sync(follower, ids[follower], gen)
    d.sync(leader, ids[leader], gen, assignments={ids[follower]: b"f"})
    assert d.response(follower, first) is None
    assert d.response(follower, second).assignment == b"f"
    assert d.named("sync_dropped")[-1]["correlation_id"] == first
