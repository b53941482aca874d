"""Static membership (KIP-345): replacement, fencing, skipAssignment, failed persistence."""

from coordinator.errors import Errors
from coordinator.protocol import MemberIdentity

from .harness import Driver


def static_stable(d: Driver, instances=("ia", "ib"), names=("range",)):
    corrs = {i: d.join(i.upper(), instance_id=i, names=names, session=120000) for i in instances}
    d.complete_join()
    resp = {i: d.response(i.upper(), c) for i, c in corrs.items()}
    ids = {i: r.member_id for i, r in resp.items()}
    gen = next(iter(resp.values())).generation_id
    assignment = {m: f"asg-{i}".encode() for i, m in ids.items()}
    for i in instances:
        d.sync(
            i.upper(), ids[i], gen, assignments=assignment, instance_id=i, protocol_name=names[0]
        )
    assert d.state() == "Stable"
    return ids, gen


def test_replacement_in_stable_keeps_generation_and_assignment():
    d = Driver()
    ids, gen = static_stable(d)
    leader = d.cluster.group("g").leader_id
    follower_inst = next(i for i, m in ids.items() if m != leader)
    d.now = 1000
    before_records = len(d.cluster.offsets_log)
    r = d.response("NEW", d.join("NEW", instance_id=follower_inst, session=120000))
    assert r.error_code == Errors.NONE and r.generation_id == gen
    assert r.member_id != ids[follower_inst] and r.member_id.startswith(follower_inst + "-")
    assert r.leader == leader and r.members == () and not r.skip_assignment
    view = d.cluster.group("g")
    assert view.state == "Stable"
    assert view.member(r.member_id).assignment == f"asg-{follower_inst}".encode()
    assert len(d.cluster.offsets_log) == before_records + 1  # record #4
    record = d.cluster.offsets_log.partition(d.cluster.partition_for("g"))[-1]
    assert r.member_id in {m.member_id for m in record.value.members}
    # the old incarnation is fenced everywhere
    assert d.heartbeat("OLD", ids[follower_inst], gen, instance_id=follower_inst) == (
        Errors.FENCED_INSTANCE_ID
    )
    assert d.heartbeat("NEW", r.member_id, gen, instance_id=follower_inst) == Errors.NONE


def test_replaced_static_leader_v9_gets_skip_assignment_and_members():
    d = Driver()
    ids, _gen = static_stable(d)
    leader_inst = next(i for i, m in ids.items() if m == d.cluster.group("g").leader_id)
    r = d.response("NEW", d.join("NEW", instance_id=leader_inst, session=120000))
    assert r.error_code == Errors.NONE and r.skip_assignment
    assert r.leader == r.member_id and len(r.members) == 2
    assert d.cluster.group("g").leader_id == r.member_id


def test_replaced_static_leader_before_v9_is_told_the_old_leader_id():
    d = Driver()
    ids, _gen = static_stable(d)
    leader_inst = next(i for i, m in ids.items() if m == d.cluster.group("g").leader_id)
    r = d.response("NEW", d.join("NEW", instance_id=leader_inst, session=120000, version=8))
    assert r.error_code == Errors.NONE and not r.skip_assignment
    assert r.leader == ids[leader_inst] and r.members == ()


def test_replacement_with_a_protocol_change_rebalances():
    d = Driver()
    static_stable(d, names=("range", "roundrobin"))
    d.join("NEW", instance_id="ia", names=("roundrobin", "range"), session=120000)
    # ia votes roundrobin, ib range: 1-1 tie, range wins in HashMap order -> unchanged!
    assert d.state() == "Stable"
    d2 = Driver()
    _ids, gen = static_stable(d2, instances=("ia",), names=("range", "roundrobin"))
    corr = d2.join("NEW", instance_id="ia", names=("roundrobin", "range"), session=120000)
    # the sole member rejoined, so the rebalance it triggered completes at once
    r = d2.response("NEW", corr)
    assert r.generation_id == gen + 1 and r.protocol_name == "roundrobin"
    assert [e["state_to"] for e in d2.named("group_state_changed")][-2:] == [
        "PreparingRebalance",
        "CompletingRebalance",
    ]


def test_replacement_fences_a_parked_join_of_the_old_incarnation():
    d = Driver()
    old_corr = d.join("OLD", instance_id="ia")
    d.join("NEW", instance_id="ia")
    r = d.response("OLD", old_corr)
    assert r.error_code == Errors.FENCED_INSTANCE_ID
    assert r.generation_id == -1 and r.leader == "" and r.members == ()


def test_replacement_fences_a_parked_sync_and_rebalances_in_completing_rebalance():
    d = Driver()
    ca = d.join("A", instance_id="ia", session=120000)
    cb = d.join("B", instance_id="ib", session=120000)
    d.complete_join()
    ra, rb = d.response("A", ca), d.response("B", cb)
    follower = rb if ra.members else ra
    finst, fclient = ("ib", "B") if follower is rb else ("ia", "A")
    sync_corr = d.sync(fclient, follower.member_id, follower.generation_id, instance_id=finst)
    assert d.response(fclient, sync_corr) is None
    d.join("NEW", instance_id=finst, session=120000)
    assert d.response(fclient, sync_corr).error_code == Errors.FENCED_INSTANCE_ID
    assert d.state() == "PreparingRebalance"


def test_failed_persistence_reverts_the_replacement():
    d = Driver()
    ids, gen = static_stable(d)
    leader = d.cluster.group("g").leader_id
    d.cluster.fail_next_append(Errors.NOT_ENOUGH_REPLICAS)
    r = d.response("NEW", d.join("NEW", instance_id="ia", session=120000))
    assert r.error_code == Errors.COORDINATOR_NOT_AVAILABLE
    assert r.member_id == "" and r.generation_id == gen and r.leader == leader
    view = d.cluster.group("g")
    assert ids["ia"] in view.member_ids and view.leader_id == leader
    assert d.heartbeat("A", ids["ia"], gen, instance_id="ia") == Errors.NONE


def test_static_member_fencing_on_every_api():
    d = Driver()
    ids, gen = static_stable(d)
    assert d.heartbeat("X", "bogus", gen, instance_id="ia") == Errors.FENCED_INSTANCE_ID
    assert d.heartbeat("X", ids["ia"], gen, instance_id="unknown") == Errors.UNKNOWN_MEMBER_ID
    r = d.response("X", d.sync("X", "bogus", gen, instance_id="ia"))
    assert r.error_code == Errors.FENCED_INSTANCE_ID
    res = d.commit("X", "bogus", gen, {("t", 0): 1}, instance_id="ia")
    assert res[("t", 0)] == Errors.FENCED_INSTANCE_ID
    r = d.leave("X", MemberIdentity("bogus", "ia"))
    assert r.members[0].error_code == Errors.FENCED_INSTANCE_ID
    r = d.response("X", d.join("X", member_id="bogus", instance_id="ia"))
    assert r.error_code == Errors.FENCED_INSTANCE_ID


def test_admin_removal_by_instance_id():
    d = Driver()
    ids, _gen = static_stable(d)
    r = d.leave("ADMIN", MemberIdentity("", "ia"), MemberIdentity("", "nobody"))
    assert [m.error_code for m in r.members] == [Errors.NONE, Errors.UNKNOWN_MEMBER_ID]
    assert ids["ia"] not in d.cluster.group("g").member_ids
    assert d.state() == "PreparingRebalance"


def test_static_members_leave_at_the_pending_sync_deadline_if_they_never_learn_the_generation():
    d = Driver()
    ids, _gen = static_stable(d)
    leader = d.cluster.group("g").leader_id
    leader_inst = next(i for i, m in ids.items() if m == leader)
    other = next(i for i in ids if i != leader_inst)
    d.now = 1000
    corr = d.join(leader_inst.upper(), member_id=leader, instance_id=leader_inst, session=120000)
    d.advance(1000 + 60000)  # join timer: the static laggard stays
    r = d.response(leader_inst.upper(), corr)
    assert ids[other] in {m.member_id for m in r.members}
    d.sync(
        leader_inst.upper(),
        leader,
        r.generation_id,
        instance_id=leader_inst,
        assignments={leader: b"a"},
    )
    assert d.state() == "Stable"
    d.advance(1000 + 60000 + 60000)  # pending-sync deadline
    assert ids[other] not in d.cluster.group("g").member_ids
    assert d.state() == "PreparingRebalance"
