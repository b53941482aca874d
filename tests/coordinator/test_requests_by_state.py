"""Every request type against a group in every state (a follower "B" asking, where relevant)."""

import pytest

from coordinator.errors import Errors
from coordinator.protocol import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetFetchRequest,
)
from coordinator.state_machine import DEAD

from .harness import Driver

STATES = ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]
PARKED = "parked"


def group_in(state: str) -> tuple[Driver, str, int]:
    """A driver whose group "g" is in ``state``; returns (driver, B's member id, B's generation)."""
    d = Driver()
    if state == "CompletingRebalance":
        d.join_dynamic("A")
        b, corr = d.join_dynamic("B")
        d.complete_join()
        return d, b, d.response("B", corr).generation_id
    ids, gen = d.stable_group(("A", "B"), session=60000)
    leader = d.cluster.group("g").leader_id
    # make sure "B" is the follower
    if ids["B"] == leader:
        ids = {"A": ids["B"], "B": ids["A"]}
        d.inbox["A"], d.inbox["B"] = d.inbox["B"], d.inbox["A"]
    if state == "PreparingRebalance":
        d.join("P")  # a pending id holds the phase open even once A and B are back
        d.join("A", member_id=ids["A"], session=60000)
    elif state == "Empty":
        d.leave("A", MemberIdentity(ids["A"]), MemberIdentity(ids["B"]))
    elif state == "Dead":
        shard = d.cluster._shards[d.cluster.partition_for("g")]
        shard.group_manager.groups["g"].model.transition_to(
            DEAD
        )  # the transient state before removal
    assert d.state() == state
    return d, ids["B"], gen


def outcome(d: Driver, client: str, corr: int):
    r = d.response(client, corr)
    return PARKED if r is None else r.error_code


EXPECTED = {
    #                       Empty   PreparingRebalance  CompletingRebalance  Stable   Dead
    "join_existing": [
        Errors.UNKNOWN_MEMBER_ID, PARKED, Errors.NONE, Errors.NONE,
        Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "join_new": [
        Errors.MEMBER_ID_REQUIRED, Errors.MEMBER_ID_REQUIRED, Errors.MEMBER_ID_REQUIRED,
        Errors.MEMBER_ID_REQUIRED, Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "sync": [
        Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS, PARKED, Errors.NONE,
        Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "heartbeat": [
        Errors.UNKNOWN_MEMBER_ID, Errors.REBALANCE_IN_PROGRESS, Errors.NONE, Errors.NONE,
        Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "leave": [
        Errors.UNKNOWN_MEMBER_ID, Errors.NONE, Errors.NONE, Errors.NONE,
        Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "commit": [
        Errors.UNKNOWN_MEMBER_ID, Errors.NONE, Errors.REBALANCE_IN_PROGRESS, Errors.NONE,
        Errors.COORDINATOR_NOT_AVAILABLE,
    ],
    "fetch": [Errors.NONE] * 5,
    "describe": [Errors.NONE] * 5,
    "list": [Errors.NONE] * 5,
    "delete": [
        Errors.NONE, Errors.NON_EMPTY_GROUP, Errors.NON_EMPTY_GROUP, Errors.NON_EMPTY_GROUP,
        Errors.GROUP_ID_NOT_FOUND,
    ],
}  # fmt: skip


def run(api: str, d: Driver, b: str, gen: int):
    node = d.coordinator("g")
    if api == "join_existing":
        return outcome(d, "B", d.join("B", member_id=b, session=60000))
    if api == "join_new":
        return outcome(d, "N", d.join("N"))
    if api == "sync":
        return outcome(d, "B", d.sync("B", b, gen))
    if api == "heartbeat":
        return d.heartbeat("B", b, gen)
    if api == "leave":
        r = d.leave("B", MemberIdentity(b))
        return r.members[0].error_code if r.members else r.error_code
    if api == "commit":
        return d.commit("B", b, gen, {("t", 0): 1})[("t", 0)]
    if api == "fetch":
        _, got = d.send("B", OffsetFetchRequest("g"), dst=node)
        return got[0].error_code
    if api == "describe":
        _, got = d.send("B", DescribeGroupsRequest(("g",)), dst=node)
        assert got[0].groups[0].group_state == d.state()
        return got[0].groups[0].error_code
    if api == "list":
        _, got = d.send("B", ListGroupsRequest(), dst=node)
        assert [(g.group_id, g.group_state) for g in got[0].groups] == [("g", d.state())]
        return got[0].error_code
    if api == "delete":
        _, got = d.send("B", DeleteGroupsRequest(("g",)), dst=node)
        return got[0].results[0].error_code
    raise AssertionError(api)


@pytest.mark.parametrize("state_index", range(len(STATES)), ids=STATES)
@pytest.mark.parametrize("api", sorted(EXPECTED))
def test_request_in_state(api, state_index):
    d, b, gen = group_in(STATES[state_index])
    before = d.state()
    assert run(api, d, b, gen) == EXPECTED[api][state_index]
    if api in ("fetch", "describe", "list", "heartbeat"):
        assert d.state() == before  # queries and heartbeats never change state
