"""JoinGroup (classicGroupJoin): KIP-394, initial delay, completion, leader, protocols, size."""

import pytest

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import JoinGroupRequest, MemberIdentity

from .harness import TEST_CONFIG, Driver, protocols


def test_unknown_member_of_unknown_group_creates_nothing():
    d = Driver()
    corr = d.join("A", member_id="ghost")
    r = d.response("A", corr)
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.member_id == "ghost"
    assert d.cluster.group("g") is None
    # static members too
    corr = d.join("A", member_id="ghost", instance_id="i1")
    assert d.response("A", corr).error_code == Errors.UNKNOWN_MEMBER_ID
    assert d.cluster.group("g") is None


def test_member_id_required_adds_a_pending_member_and_writes_the_empty_group_record():
    d = Driver()
    corr = d.join("A")
    r = d.response("A", corr)
    assert r.error_code == Errors.MEMBER_ID_REQUIRED
    assert r.member_id.startswith("A-") and len(r.member_id) == 2 + 36
    view = d.cluster.group("g")
    assert view.state == "Empty" and view.members == () and view.pending_members == (r.member_id,)
    p = d.cluster.partition_for("g")
    (record,) = d.cluster.offsets_log.partition(p)
    assert record.value.generation == 0 and record.value.protocol_type == ""
    assert record.value.members == () and record.value.leader is None
    # the pending id expires after the request's session timeout
    assert d.deadline("heartbeat-g-" + r.member_id) == 10000


def test_member_ids_are_reproducible_with_the_same_seed():
    ids = []
    for _ in range(2):
        d = Driver(seed=7)
        ids.append(d.response("A", d.join("A")).member_id)
    assert ids[0] == ids[1]
    d = Driver(seed=8)
    assert d.response("A", d.join("A")).member_id != ids[0]


def test_old_versions_join_in_one_step():
    d = Driver()
    corr = d.join("A", version=3)
    assert d.response("A", corr) is None  # parked
    assert d.state() == "PreparingRebalance"
    d.advance(3000)
    r = d.response("A", corr)
    assert r.error_code == Errors.NONE and r.generation_id == 1 and r.leader == r.member_id


def test_static_member_never_gets_member_id_required():
    d = Driver()
    corr = d.join("A", instance_id="inst-a")
    assert d.response("A", corr) is None
    view = d.cluster.group("g")
    assert view.members[0].member_id.startswith("inst-a-")
    assert view.members[0].group_instance_id == "inst-a"


def test_first_member_added_is_leader_not_first_to_ask():
    d = Driver()
    a1 = d.response("A", d.join("A")).member_id
    b1 = d.response("B", d.join("B")).member_id
    d.join("B", member_id=b1)  # B comes back first
    d.join("A", member_id=a1)
    assert d.cluster.group("g").leader_id == b1


# --- the initial delay chain (tryCompleteInitialRebalanceElseSchedule) ------------------------


def completion_time(d: Driver, corr_of: tuple[str, int]) -> int | None:
    for e in d.named("group_state_changed"):
        if e["state_to"] == "CompletingRebalance":
            return e["t_ms"]
    return None


def test_initial_delay_one_member_r_below_d_completes_at_d():
    d = Driver()
    _, corr = d.join_dynamic("A", rebalance=500)
    d.advance(2999)
    assert d.response("A", corr) is None
    d.advance(3000)
    assert d.response("A", corr).generation_id == 1
    assert completion_time(d, ("A", corr)) == 3000


def test_initial_delay_extended_by_a_late_member():
    d = Driver()
    d.join_dynamic("A", rebalance=9000)
    d.advance(2999)
    d.join_dynamic("B", rebalance=9000)
    d.advance(5999)
    assert d.state() == "PreparingRebalance"
    d.advance(6000)
    assert completion_time(d, None) == 6000


def test_initial_delay_remaining_runs_out():
    d = Driver()
    d.join_dynamic("A", rebalance=6000)
    d.join_dynamic("B", rebalance=6000)
    d.advance(3001)
    _, c_corr = d.join_dynamic("C", rebalance=6000)
    d.advance(6000)
    assert completion_time(d, None) == 6000
    assert d.response("C", c_corr).error_code == Errors.NONE  # C joined window 2 and is in


def test_initial_delay_new_member_every_window_is_capped_by_r():
    d = Driver()
    d.join_dynamic("A", rebalance=10000)
    for i, t in enumerate([1000, 4000, 7000]):
        d.advance(t)
        d.join_dynamic(f"M{i}", rebalance=10000)
    d.advance(9999)
    assert d.state() == "PreparingRebalance"
    d.advance(10000)
    assert completion_time(d, None) == 10000


def test_initial_delay_three_members_at_zero():
    d = Driver()
    for c in "ABC":
        d.join_dynamic(c, rebalance=5000)
    d.advance(4999)
    assert d.state() == "PreparingRebalance"
    d.advance(5000)
    assert completion_time(d, None) == 5000


def test_initial_rebalance_is_not_ended_early_by_everyone_joining():
    d = Driver()
    _, corr = d.join_dynamic("A")
    assert d.cluster.group("g").members[0].awaiting_join
    d.advance(100)
    assert d.response("A", corr) is None


def test_everyone_leaving_during_initial_rebalance_ends_empty_generation_1():
    d = Driver()
    a, _ = d.join_dynamic("A")
    r = d.leave("A", MemberIdentity(a))
    assert r.members[0].error_code == Errors.NONE
    assert d.state() == "PreparingRebalance"
    d.advance(3000)
    view = d.cluster.group("g")
    assert view.state == "Empty" and view.generation_id == 1 and view.protocol_name is None
    record = d.cluster.offsets_log.partition(d.cluster.partition_for("g"))[-1]
    assert record.value.generation == 1 and record.value.members == ()
    assert record.value.protocol is None and record.value.leader is None


def test_pending_member_does_not_hold_back_initial_completion():
    d = Driver()
    _, corr = d.join_dynamic("A")
    d.join("B")  # B got an id and never came back
    d.advance(3000)
    assert d.response("A", corr).generation_id == 1


def test_session_expiry_of_pending_member_ends_initial_rebalance_early():
    # The Java coordinator quirk (removePendingMemberAndUpdateClassicGroup): pending-member expiry
    # checks "all joined" directly.
    d = Driver()
    _, corr = d.join_dynamic("A")
    d.join("B", session=1000)
    d.advance(999)
    assert d.response("A", corr) is None
    d.advance(1000)
    assert d.response("A", corr).generation_id == 1


# --- join completion (completeClassicGroupJoin) ------------------------------------------------


def test_rebalance_completes_when_all_rejoin_and_removes_laggards():
    d = Driver()
    ids, gen = d.stable_group(("A", "B", "C"), session=120000)
    d.now = 5000
    corr_a = d.join("A", member_id=ids["A"], session=120000)  # the leader forces a rebalance
    assert d.state() == "PreparingRebalance"
    corr_b = d.join("B", member_id=ids["B"], session=120000)
    assert d.response("A", corr_a) is None
    # C never rejoins; the join timer (R = 60000) ends the phase
    d.heartbeat("C", ids["C"], gen)  # keeps C alive meanwhile
    assert d.deadline("join-g") == 5000 + 60000
    d.advance(65000)
    ra, rb = d.response("A", corr_a), d.response("B", corr_b)
    assert ra.generation_id == rb.generation_id == gen + 1
    assert {m.member_id for m in ra.members} == {ids["A"], ids["B"]}
    assert rb.members == ()
    assert ids["C"] not in d.cluster.group("g").member_ids
    assert any(
        e["member_id"] == ids["C"] and "rejoin" in e["reason"] for e in d.named("member_removed")
    )


def test_non_initial_rebalance_completes_immediately_when_everyone_rejoined():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"))
    d.now = 4000
    corr_b = d.join("B", member_id=ids["B"], names=("range", "roundrobin"))  # metadata change
    assert d.state() == "PreparingRebalance"
    corr_a = d.join("A", member_id=ids["A"])
    assert d.response("A", corr_a).generation_id == gen + 1
    assert d.response("B", corr_b).generation_id == gen + 1
    assert d.state() == "CompletingRebalance"


def test_pending_member_blocks_early_completion_of_non_initial_rebalance():
    d = Driver()
    ids, _gen = d.stable_group(("A",))
    d.now = 4000
    d.join("B")  # pending
    corr_a = d.join("A", member_id=ids["A"])
    assert d.response("A", corr_a) is None
    assert d.state() == "PreparingRebalance"


def test_leader_that_does_not_rejoin_is_replaced_by_a_joined_member():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"))
    leader = d.cluster.group("g").leader_id
    follower = "B" if ids["A"] == leader else "A"
    d.now = 4000
    corr = d.join(follower, member_id=ids[follower], names=("range", "roundrobin"))
    d.advance(4000 + 60000)
    r = d.response(follower, corr)
    assert r.leader == ids[follower] and len(r.members) == 1


def test_static_member_that_did_not_rejoin_stays_and_is_listed():
    d = Driver()
    ca = d.join("A", instance_id="ia", session=120000)
    cb = d.join("B", instance_id="ib", session=120000)
    d.complete_join()
    ra, rb = d.response("A", ca), d.response("B", cb)
    gen = ra.generation_id
    leader = ra if ra.members else rb
    d.sync("A", ra.member_id, gen, assignments={ra.member_id: b"x", rb.member_id: b"y"})
    d.sync("B", rb.member_id, gen, assignments={ra.member_id: b"x", rb.member_id: b"y"})
    assert d.state() == "Stable"
    d.now = 5000
    corr = d.join(
        "L", member_id=leader.member_id, instance_id="ia" if leader is ra else "ib", session=120000
    )  # the leader rejoins
    d.heartbeat(
        "X",
        rb.member_id if leader is ra else ra.member_id,
        gen,
        instance_id="ib" if leader is ra else "ia",
    )
    d.advance(5000 + 60000)
    r = d.response("L", corr)
    assert r.error_code == Errors.NONE and len(r.members) == 2  # the static laggard is listed


def test_join_phase_stuck_when_nobody_rejoins_but_static_members_remain():
    d = Driver()
    ca = d.join("A", instance_id="ia", session=100000)
    d.advance(3000)
    ra = d.response("A", ca)
    d.sync("A", ra.member_id, 1, assignments={ra.member_id: b"x"})
    # a new dynamic member joins and then leaves via expiry of its parked join (300000 ms)
    d.now = 4000
    _b, _ = d.join_dynamic("B")
    # A never rejoins; at 64000 the join timer finds nobody from the old set... but B is awaiting
    d.advance(64000)
    assert d.cluster.group("g").generation_id == 2


def test_second_parked_join_drops_the_first():
    d = Driver()
    a, corr1 = d.join_dynamic("A")
    corr2 = d.join("A", member_id=a)
    d.advance(3000)
    assert d.response("A", corr1) is None  # never answered
    assert d.response("A", corr2).error_code == Errors.NONE
    assert d.named("join_dropped")[0]["correlation_id"] == corr1


def test_completing_rebalance_rejoin_with_same_metadata_gets_current_generation():
    d = Driver()
    _a, _corr = d.join_dynamic("A")
    b, _corr_b = d.join_dynamic("B")
    d.complete_join()
    leader = d.cluster.group("g").leader_id
    assert d.state() == "CompletingRebalance"
    again = d.join("B", member_id=b)
    r = d.response("B", again)
    assert r.generation_id == 1 and d.state() == "CompletingRebalance"
    assert (len(r.members) == 2) == (b == leader)
    changed = d.join("B", member_id=b, names=("range", "sticky"))
    assert d.response("B", changed) is None
    assert d.state() == "PreparingRebalance"


def test_stable_follower_rejoin_with_same_metadata_does_not_rebalance():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"))
    leader = d.cluster.group("g").leader_id
    follower = next(c for c, m in ids.items() if m != leader)
    r = d.response(follower, d.join(follower, member_id=ids[follower]))
    assert r.error_code == Errors.NONE and r.generation_id == gen and r.members == ()
    assert d.state() == "Stable"


def test_stable_leader_rejoin_always_rebalances():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B"))
    leader_client = next(c for c, m in ids.items() if m == d.cluster.group("g").leader_id)
    d.join(leader_client, member_id=ids[leader_client])
    assert d.state() == "PreparingRebalance"


def test_empty_group_rejoin_with_stale_id():
    d = Driver()
    ids, _gen = d.stable_group(("A",))
    d.leave("A", MemberIdentity(ids["A"]))
    assert d.state() == "Empty"
    r = d.response("A", d.join("A", member_id=ids["A"]))
    assert r.error_code == Errors.UNKNOWN_MEMBER_ID and r.generation_id == -1


def test_pending_member_joining_with_instance_id_is_rejected():
    d = Driver()
    pending = d.response("A", d.join("A")).member_id
    r = d.response("A", d.join("A", member_id=pending, instance_id="x"))
    assert r.error_code == Errors.UNKNOWN_SERVER_ERROR


# --- protocols (supportsProtocols, selectProtocol) ---------------------------------------------


@pytest.mark.parametrize(("protocol_type", "names"), [("", ("range",)), ("consumer", ())])
def test_empty_protocol_type_or_list_is_inconsistent_even_for_a_new_group(protocol_type, names):
    d = Driver()
    _corr, got = d.send(
        "A",
        JoinGroupRequest("g", 10000, 60000, "", protocol_type, protocols(*names)),
    )
    assert got[0].error_code == Errors.INCONSISTENT_GROUP_PROTOCOL and got[0].member_id == ""


def test_protocol_type_must_match_a_non_empty_group():
    d = Driver()
    d.stable_group(("A",))
    r = d.response("B", d.join("B", protocol_type="connect"))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_new_member_must_share_a_protocol_with_every_member():
    d = Driver()
    d.stable_group(("A",))
    r = d.response("B", d.join("B", names=("roundrobin",)))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL
    r = d.response("B", d.join("B", names=("roundrobin", "range")))
    assert r.error_code == Errors.MEMBER_ID_REQUIRED


def test_sole_member_cannot_switch_to_a_new_protocol_set():
    d = Driver()
    ids, _ = d.stable_group(("A",))
    r = d.response("A", d.join("A", member_id=ids["A"], names=("sticky",)))
    assert r.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL and r.member_id == ids["A"]
    assert d.state() == "Stable"


@pytest.mark.parametrize(
    ("lists", "expected"),
    [
        ([("range", "roundrobin"), ("roundrobin", "range")], "range"),  # Java tie rule
        ([("range", "roundrobin"), ("roundrobin", "range"), ("roundrobin", "range")], "roundrobin"),
        ([("range", "roundrobin"), ("roundrobin", "foo")], "roundrobin"),
        ([("range", "sticky"), ("sticky", "range")], "sticky"),
        ([("range", "cooperative-sticky"), ("cooperative-sticky", "range")], "range"),
    ],
)
def test_protocol_vote(lists, expected):
    d = Driver()
    corrs = []
    for i, names in enumerate(lists):
        _, corr = d.join_dynamic(f"M{i}", names=names)
        corrs.append(corr)
    d.complete_join()
    assert d.cluster.group("g").protocol_name == expected
    assert d.named("protocol_selected")[-1]["protocol_name"] == expected


def test_fourth_member_with_only_cooperative_sticky_moves_the_vote():
    d = Driver()
    ids, _ = d.stable_group(("A", "B", "C"), names=("range", "cooperative-sticky"))
    assert d.cluster.group("g").protocol_name == "range"
    d.now = 4000
    d_id = d.response("D", d.join("D", names=("cooperative-sticky",))).member_id  # pending
    leader = d.cluster.group("g").leader_id
    for c in sorted(ids, key=lambda c: ids[c] != leader):
        d.join(c, member_id=ids[c], names=("range", "cooperative-sticky"))
    assert d.state() == "PreparingRebalance"  # the pending id holds the phase open
    d.join("D", member_id=d_id, names=("cooperative-sticky",))
    assert d.state() == "CompletingRebalance"
    assert d.cluster.group("g").protocol_name == "cooperative-sticky"


# --- group.max.size (acceptJoiningMember) -------------------------------------------------------


def small_group_driver(max_size: int) -> Driver:
    return Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10,
            group_max_session_timeout_ms=600000,
            group_max_size=max_size,
            load_time_ms=0,
        )
    )


def test_max_size_in_empty_state_hands_out_every_id_then_rejects_at_second_join():
    d = small_group_driver(2)
    pending = [d.response(c, d.join(c)).member_id for c in "ABC"]
    assert all(pending)
    corrs = [d.join(c, member_id=m) for c, m in zip("ABC", pending, strict=True)]
    assert d.response("C", corrs[2]).error_code == Errors.GROUP_MAX_SIZE_REACHED
    assert d.response("C", corrs[2]).member_id == ""
    assert pending[2] not in d.cluster.group("g").pending_members
    d.complete_join()
    assert d.cluster.group("g").generation_id == 1
    assert len(d.cluster.group("g").members) == 2


def test_last_rejoining_members_are_kicked_out_when_the_limit_shrank():
    d = Driver(TEST_CONFIG)
    ids, _gen = d.stable_group(("A", "B", "C"))
    # emulate a reduced group.max.size by swapping the shard's config
    shard = d.cluster.service.shards[d.cluster.partition_for("g")]
    shard.group_manager.config = CoordinatorConfig(
        group_min_session_timeout_ms=10, group_max_session_timeout_ms=600000, group_max_size=2
    )
    d.now = 5000
    leader = d.cluster.group("g").leader_id
    order = sorted(ids, key=lambda c: ids[c] != leader)  # leader first: triggers the rebalance
    corrs = {c: d.join(c, member_id=ids[c]) for c in order}
    last = order[-1]
    assert d.response(last, corrs[last]).error_code == Errors.GROUP_MAX_SIZE_REACHED
    assert ids[last] not in d.cluster.group("g").member_ids


# --- leader re-election in Java HashMap order (ClassicGroup.remove) ---------------------------


def hashmap_first(keys_in_insertion_order, candidates):
    """Independent reference: bucket (h ^ h>>>16) & 15, then insertion order (< 13 keys)."""

    def java_hash(s: str) -> int:
        data = s.encode("utf-16-be")
        h = 0
        for i in range(0, len(data), 2):
            h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
        return h

    order = sorted(
        range(len(keys_in_insertion_order)),
        key=lambda i: (
            (java_hash(keys_in_insertion_order[i]) ^ (java_hash(keys_in_insertion_order[i]) >> 16))
            & 15,
            i,
        ),
    )
    for i in order:
        if keys_in_insertion_order[i] in candidates:
            return keys_in_insertion_order[i]
    return None


def test_removed_leader_is_replaced_by_the_first_member_in_hashmap_order():
    d = Driver()
    ids, _gen = d.stable_group(("A", "B", "C", "D", "E"))
    view = d.cluster.group("g")
    added = [e["member_id"] for e in d.named("member_added")]
    leader = view.leader_id
    assert leader == added[0]  # the first member added leads
    leader_client = next(c for c in ids if ids[c] == leader)
    d.leave(leader_client, MemberIdentity(leader))
    remaining = [m for m in added if m != leader]
    assert d.cluster.group("g").leader_id == hashmap_first(remaining, set(remaining))
    elected = d.named("leader_elected")[-1]
    assert elected["previous_leader"] == leader and elected["reason"] == "leader removed"


def test_leader_not_rejoining_is_replaced_by_first_joined_member_in_hashmap_order():
    d = Driver()
    ids, gen = d.stable_group(("A", "B", "C", "D"), session=120000)
    leader = d.cluster.group("g").leader_id
    added = [e["member_id"] for e in d.named("member_added")]
    followers = [c for c in ids if ids[c] != leader]
    d.now = 1000
    # a follower changes its metadata; the others (not the leader) rejoin
    for c in followers:
        d.join(c, member_id=ids[c], names=("range", "sticky"), session=120000)
    d.heartbeat("L", leader, gen)
    d.advance(1000 + 60000)
    joined = {ids[c] for c in followers}
    assert d.cluster.group("g").leader_id == hashmap_first(added, joined)
