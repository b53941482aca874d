"""OffsetCommit / OffsetFetch, records (GroupCoordinatorRecordHelpers), expiry and DeleteGroups."""

import pytest

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    DeleteGroupsRequest,
    MemberIdentity,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
)
from coordinator.records import GroupMetadataKey, OffsetCommitKey

from .harness import Driver


def fetch(d: Driver, group_id="g", topics=None):
    _, got = d.send("X", OffsetFetchRequest(group_id, topics))
    return got[0]


def test_simple_group_commit_creates_an_empty_group_without_a_type():
    d = Driver()
    assert d.commit("ADMIN", "", -1, {("t", 0): 5, ("t", 1): 7}) == {
        ("t", 0): Errors.NONE,
        ("t", 1): Errors.NONE,
    }
    view = d.cluster.group("g")
    assert view.state == "Empty" and view.protocol_type is None
    records = d.cluster.offsets_log.partition(d.cluster.partition_for("g"))
    assert [type(r.key) for r in records] == [OffsetCommitKey, OffsetCommitKey]
    r = fetch(d)
    assert [(p.partition_index, p.committed_offset) for p in r.topics[0].partitions] == [
        (0, 5),
        (1, 7),
    ]


@pytest.mark.parametrize(
    ("version", "error"), [(9, Errors.GROUP_ID_NOT_FOUND), (8, Errors.ILLEGAL_GENERATION)]
)
def test_commit_with_a_generation_to_an_unknown_group(version, error):
    d = Driver()
    assert d.commit("A", "m", 3, {("t", 0): 1}, version=version) == {("t", 0): error}
    assert d.cluster.group("g") is None


def test_commit_rules_by_state():
    d = Driver()
    ids, gen = d.stable_group(("A", "B"))
    assert d.commit("A", ids["A"], gen, {("t", 0): 1})[("t", 0)] == Errors.NONE  # Stable
    assert d.commit("A", ids["A"], gen + 1, {("t", 0): 1})[("t", 0)] == Errors.ILLEGAL_GENERATION
    assert d.commit("A", "bogus", gen, {("t", 0): 1})[("t", 0)] == Errors.UNKNOWN_MEMBER_ID
    assert d.commit("A", "", -1, {("t", 0): 1})[("t", 0)] == Errors.UNKNOWN_MEMBER_ID
    leader = next(c for c in ids if ids[c] == d.cluster.group("g").leader_id)
    other = next(c for c in ids if c != leader)
    corr = d.join(leader, member_id=ids[leader])
    assert d.state() == "PreparingRebalance"
    # the old generation is still current: the eager "commit before revoking"
    assert d.commit(other, ids[other], gen, {("t", 0): 2})[("t", 0)] == Errors.NONE
    d.join(other, member_id=ids[other])
    assert d.state() == "CompletingRebalance"
    new_gen = d.response(leader, corr).generation_id
    assert d.commit(other, ids[other], new_gen, {("t", 0): 3})[("t", 0)] == (
        Errors.REBALANCE_IN_PROGRESS
    )
    assert d.commit(other, ids[other], gen, {("t", 0): 3})[("t", 0)] == Errors.ILLEGAL_GENERATION


def test_commit_refreshes_the_session_in_stable():
    d = Driver()
    ids, gen = d.stable_group(("A",))
    d.now = 7000
    d.commit("A", ids["A"], gen, {("t", 0): 1})
    assert d.deadline("heartbeat-g-" + ids["A"]) == 17000


def test_empty_group_accepts_only_generation_minus_one():
    d = Driver()
    ids, gen = d.stable_group(("A",))
    d.leave("A", MemberIdentity(ids["A"]))
    assert d.commit("A", ids["A"], gen, {("t", 0): 1})[("t", 0)] == Errors.UNKNOWN_MEMBER_ID
    assert d.commit("A", "whatever", -1, {("t", 0): 1})[("t", 0)] == Errors.NONE


def test_metadata_too_large_fails_that_partition_only():
    d = Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10, offset_metadata_max_bytes=4, load_time_ms=0
        )
    )
    res = d.commit("A", "", -1, {("t", 0): 1}, metadata="12345")
    assert res == {("t", 0): Errors.OFFSET_METADATA_TOO_LARGE}
    res = d.commit("A", "", -1, {("t", 0): 1}, metadata="1234")
    assert res == {("t", 0): Errors.NONE}


def test_commit_append_failure_maps_the_error_and_rolls_back_a_new_group():
    d = Driver()
    d.cluster.fail_next_append(Errors.REQUEST_TIMED_OUT)
    assert d.commit("A", "", -1, {("t", 0): 1}) == {("t", 0): Errors.COORDINATOR_NOT_AVAILABLE}
    assert d.cluster.group("g") is None
    assert d.cluster.committed_offsets("g") == {}


def test_fetch_unknown_partitions_and_groups():
    d = Driver()
    d.commit("A", "", -1, {("t", 0): 5})
    r = fetch(d, topics=(OffsetFetchRequestTopic("t", (0, 3)), OffsetFetchRequestTopic("u", (1,))))
    parts = [
        (t.name, p.partition_index, p.committed_offset) for t in r.topics for p in t.partitions
    ]
    assert parts == [("t", 0, 5), ("t", 3, -1), ("u", 1, -1)]
    r = fetch(d, group_id="nope")
    assert r.error_code == Errors.NONE and r.topics == ()
    r = fetch(d, group_id="", topics=(OffsetFetchRequestTopic("t", (0,)),))
    assert r.topics[0].partitions[0].committed_offset == -1  # "" is a valid id here


def test_later_commit_wins():
    d = Driver()
    d.commit("A", "", -1, {("t", 0): 5})
    d.commit("A", "", -1, {("t", 0): 9})
    assert d.cluster.committed_offsets("g") == {("t", 0): 9}


# --- deletion and expiry ------------------------------------------------------------------------


def test_delete_groups():
    d = Driver()
    _ids, _gen = d.stable_group(("A",), group_id="busy")
    d.commit("X", "", -1, {("t", 0): 1}, group_id="idle")
    node = d.coordinator("idle")
    _, got = d.send("X", DeleteGroupsRequest(("idle",)), dst=node)
    assert got[0].results[0].error_code == Errors.NONE
    assert d.cluster.group("idle") is None
    tail = d.cluster.offsets_log.partition(d.cluster.partition_for("idle"))[-2:]
    assert all(r.value is None for r in tail)
    assert {type(r.key) for r in tail} == {OffsetCommitKey, GroupMetadataKey}
    _, got = d.send("X", DeleteGroupsRequest(("busy",)), dst=d.coordinator("busy"))
    assert got[0].results[0].error_code == Errors.NON_EMPTY_GROUP
    _, got = d.send("X", DeleteGroupsRequest(("idle",)), dst=node)
    assert got[0].results[0].error_code == Errors.GROUP_ID_NOT_FOUND


def test_delete_group_on_the_wrong_broker():
    d = Driver()
    d.commit("X", "", -1, {("t", 0): 1})
    wrong = next(n for n in d.cluster.broker_nodes if n != d.coordinator("g"))
    _, got = d.send("X", DeleteGroupsRequest(("g",)), dst=wrong)
    assert got[0].results[0].error_code == Errors.NOT_COORDINATOR


def expiry_driver() -> Driver:
    return Driver(
        CoordinatorConfig(
            group_min_session_timeout_ms=10,
            offsets_retention_minutes=1,
            offsets_retention_check_interval_ms=10000,
            load_time_ms=0,
        ),
        topics={"t": 2, "old": 1},
    )


def test_simple_group_offsets_expire_one_by_one_then_the_group_goes():
    d = expiry_driver()
    d.commit("X", "", -1, {("t", 0): 1})
    d.now = 30000
    d.commit("X", "", -1, {("t", 1): 1})
    d.advance(60000)
    assert d.cluster.committed_offsets("g") == {("t", 1): 1}
    d.advance(90000)
    assert d.cluster.group("g") is None
    assert d.named("group_deleted")[-1]["group_id"] == "g"


def test_empty_consumer_group_offsets_expire_together_from_when_it_became_empty():
    d = expiry_driver()
    ids, gen = d.stable_group(("A",))
    d.commit("A", ids["A"], gen, {("t", 0): 1})
    d.now = 20000
    d.leave("A", MemberIdentity(ids["A"]))
    d.commit("X", "", -1, {("t", 1): 1})  # committed after the group became Empty
    d.advance(79000)
    assert len(d.cluster.committed_offsets("g")) == 2
    d.advance(80000)
    assert d.cluster.group("g") is None


def test_stable_group_offsets_do_not_expire_without_known_subscriptions():
    d = expiry_driver()
    ids, gen = d.stable_group(("A",), session=60000)
    d.commit("A", ids["A"], gen, {("t", 0): 1})
    for t in range(10000, 200001, 10000):
        d.advance(t)
        d.heartbeat("A", ids["A"], gen)
    assert d.cluster.committed_offsets("g") == {("t", 0): 1}


def consumer_subscription(*topics: str) -> bytes:
    out = (0).to_bytes(2, "big") + len(topics).to_bytes(4, "big")
    for t in topics:
        out += len(t).to_bytes(2, "big") + t.encode()
    return out + (-1).to_bytes(4, "big", signed=True)


def test_stable_group_expires_only_offsets_of_unsubscribed_topics():
    d = expiry_driver()
    ids, gen = d.stable_group(("A",), session=60000, metadata=consumer_subscription("t"))
    d.commit("A", ids["A"], gen, {("t", 0): 1, ("old", 0): 2})
    for t in range(10000, 100001, 10000):
        d.advance(t)
        d.heartbeat("A", ids["A"], gen)
    assert d.cluster.committed_offsets("g") == {("t", 0): 1}


def test_a_refused_commit_is_logged_with_its_partition_error():
    """An OffsetCommit answer has codes per partition only; its response_sent event names the
    first failed partition's error, as the client's response_received does (it said NONE)."""
    d = Driver()
    ids, gen = d.stable_group(("A",))
    d.commit("A", ids["A"], gen, {("t", 0): 1})
    d.commit("A", ids["A"], gen + 1, {("t", 0): 1})
    sent = [e for e in d.named("response_sent") if e["api"] == "OffsetCommit"]
    assert [e["error"] for e in sent] == ["NONE", "ILLEGAL_GENERATION"]
