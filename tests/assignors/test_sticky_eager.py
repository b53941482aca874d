"""Ports of Kafka's StickyAssignorTest (the eager assignor's own tests) and its user-data memory."""

from __future__ import annotations

import pytest

from assignors.api import RebalanceProtocol, Subscription
from assignors.sticky import StickyAssignor
from assignors.sticky_user_data import decode_sticky_user_data, encode_sticky_user_data
from tests.assignors.sticky_support import (
    GENERATION_ID,
    KafkaStickyEnv,
    RackConfig,
    is_fully_balanced,
    tp,
)

T, T1, T2, T3 = "topic", "topic1", "topic2", "topic3"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"


@pytest.fixture(params=list(RackConfig), ids=lambda r: r.value)
def env(request: pytest.FixtureRequest) -> KafkaStickyEnv:
    e = KafkaStickyEnv("sticky")
    e.initialize_racks(request.param)
    return e


def test_protocols_and_name() -> None:
    a = StickyAssignor()
    assert a.name == "sticky"
    assert a.supported_protocols == (RebalanceProtocol.EAGER,)


@pytest.mark.parametrize("unequal_size", [False, True])
def test_claimed_by_multiple_consumers_in_same_generation(
    env: KafkaStickyEnv, unequal_size: bool
) -> None:
    env.add_topic(T, 4 if unequal_size else 3)
    subs = {
        C1: env.v2([T], [tp(T, 0), tp(T, 1)], GENERATION_ID, 0),
        C2: env.v2([T], [tp(T, 0), tp(T, 2)], GENERATION_ID, 1),
        C3: env.v2([T], [], GENERATION_ID, 2),
    }
    assignment = env.assign(subs)
    assert assignment[C1] == ([tp(T, 1), tp(T, 3)] if unequal_size else [tp(T, 1)])
    assert assignment[C2] == [tp(T, 2)]
    assert assignment[C3] == [tp(T, 0)]
    env.verify(subs, assignment)
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize("all_equal", [True, False])
def test_assignment_with_multiple_generations_1(env: KafkaStickyEnv, all_equal: bool) -> None:
    all_topics = [T, T2]
    c2_topics = all_topics if all_equal else [T]
    env.add_topic(T, 6)
    env.add_topic(T2, 6)
    subs = {
        C1: env.subscription(all_topics, 0),
        C2: env.subscription(c2_topics, 1),
        C3: env.subscription(all_topics, 2),
    }
    a = env.assign(subs)
    r1 = dict(a)
    assert [len(r1[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    env.verify(subs, a)
    subs[C1] = env.v2(all_topics, r1[C1], GENERATION_ID, 0)
    subs[C2] = env.v2(c2_topics, r1[C2], GENERATION_ID, 1)
    del subs[C3]
    r2 = env.assign(subs)
    assert len(r2[C1]) == 6 and len(r2[C2]) == 6
    if all_equal:
        assert set(r1[C1]) <= set(r2[C1])
    assert set(r1[C2]) <= set(r2[C2])
    env.verify(subs, r2)
    assert set(r2[C2]) & set(r1[C3])
    del subs[C1]
    subs[C2] = env.v2(c2_topics, r2[C2], 2, 1)
    subs[C3] = env.v2(all_topics, r1[C3], 1, 2)
    r3 = env.assign(subs)
    assert len(r3[C2]) == 6 and len(r3[C3]) == 6
    assert not set(r3[C2]) & set(r3[C3])
    env.verify(subs, r3)
    assert is_fully_balanced(r3)


@pytest.mark.parametrize("all_equal", [True, False])
def test_assignment_with_multiple_generations_2(env: KafkaStickyEnv, all_equal: bool) -> None:
    all_topics = [T, T2, T3]
    c1_topics = all_topics if all_equal else [T]
    c3_topics = all_topics if all_equal else [T, T2]
    for t in all_topics:
        env.add_topic(t, 4)
    subs = {
        C1: env.subscription(c1_topics, 0),
        C2: env.subscription(all_topics, 1),
        C3: env.subscription(c3_topics, 2),
    }
    r1 = env.assign(subs)
    assert [len(r1[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    del subs[C1], subs[C3]
    subs[C2] = env.v2(all_topics, r1[C2], 1, 1)
    r2 = env.assign(subs)
    assert len(r2[C2]) == 12 and set(r1[C2]) <= set(r2[C2])
    subs[C1] = env.v2(c1_topics, r1[C1], 1, 0)
    subs[C2] = env.v2(all_topics, r2[C2], 2, 1)
    subs[C3] = env.v2(c3_topics, r1[C3], 1, 2)
    r3 = env.assign(subs)
    assert [len(r3[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    env.verify(subs, r3)


@pytest.mark.parametrize("all_equal", [True, False])
def test_assignment_with_conflicting_previous_generations(
    env: KafkaStickyEnv, all_equal: bool
) -> None:
    for t in (T, T2, T3):
        env.add_topic(t, 4)
    all_topics = [T, T2, T3]
    c1_topics = all_topics if all_equal else [T]
    c2_topics = all_topics if all_equal else [T, T2]
    c1_0 = (
        [tp(T, 0), tp(T, 1), tp(T, 2), tp(T2, 2), tp(T2, 3), tp(T3, 0)]
        if all_equal
        else [tp(T, i) for i in range(4)]
    )
    c2_0 = [tp(T, 0), tp(T, 1), tp(T2, 0), tp(T2, 1), tp(T2, 2), tp(T2, 3)]
    c3_0 = [tp(T, 2), tp(T, 3), tp(T3, 0), tp(T3, 1), tp(T3, 2), tp(T3, 3)]
    subs = {
        C1: env.v2(c1_topics, c1_0, 1, 0),
        C2: env.v2(c2_topics, c2_0, 2, 1),
        C3: env.v2(all_topics, c3_0, 2, 2),
    }
    a = env.assign(subs)
    assert [len(a[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    assert set(a[C2]) <= set(c2_0)
    assert set(a[C3]) <= set(c3_0)
    env.verify(subs, a)


def test_schema_backward_compatibility(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    subs = {
        C1: env.v2([T], [tp(T, 0), tp(T, 2)], 1, 0),
        C2: Subscription([T], encode_sticky_user_data([tp(T, 1)]), rack_id=env.consumer_rack(1)),
        C3: env.subscription([T], 2),
    }
    a = env.assign(subs)
    assert [len(a[c]) for c in (C1, C2, C3)] == [1, 1, 1]
    assert set(a[C1]) <= {tp(T, 0), tp(T, 2)}
    assert a[C2] == [tp(T, 1)]
    env.verify(subs, a)


def test_member_data_with_inconsistent_data() -> None:
    a = StickyAssignor()
    a.on_assignment([tp(T, 1)], GENERATION_ID)
    data = a.subscription_user_data([T])
    member = a.member_data(Subscription([T], data, [tp(T, 0)]))
    assert list(member.partitions) == [tp(T, 1)]
    assert member.generation == GENERATION_ID


def test_member_data_will_honor_user_data() -> None:
    owned = [tp(T1, 0), tp(T2, 1)]
    sub = Subscription([T], encode_sticky_user_data(owned, GENERATION_ID - 1), [], GENERATION_ID)
    member = StickyAssignor().member_data(sub)
    assert list(member.partitions) == owned
    assert member.generation == GENERATION_ID - 1


def test_assignor_with_old_version_subscriptions() -> None:
    env = KafkaStickyEnv("sticky")
    env.add_topic(T1, 3)
    subs = {
        C1: env.v0([T1], [tp(T1, 0)], GENERATION_ID, 0),
        C2: env.v1([T1], [tp(T1, 1)], GENERATION_ID, 1),
        C3: env.v2([T1], [], GENERATION_ID, 2),
    }
    a = env.assign(subs)
    assert a == {C1: [tp(T1, 0)], C2: [tp(T1, 1)], C3: [tp(T1, 2)]}


def test_owned_partitions_are_ignored_without_user_data() -> None:
    """Eager members have revoked everything before rejoining: only user data counts."""
    subs = {
        "a": Subscription(["t"], owned_partitions=[tp("t", 2), tp("t", 3)], generation_id=5),
        "b": Subscription(["t"]),
    }
    assert StickyAssignor().assign({"t": 4}, subs) == {
        "a": [tp("t", 0), tp("t", 2)],
        "b": [tp("t", 1), tp("t", 3)],
    }


def test_on_assignment_round_trip_keeps_memory() -> None:
    a = StickyAssignor()
    assert a.subscription_user_data(["t"]) is None
    a.on_assignment([tp("t", 3), tp("u", 1)], 7)
    parts, gen = decode_sticky_user_data(a.subscription_user_data(["t", "u"]))
    assert sorted(parts) == [tp("t", 3), tp("u", 1)] and gen == 7


def test_max_generation_persists_across_calls() -> None:
    """Kafka keeps maxGeneration on the instance and never resets it; so do we."""
    a = StickyAssignor()
    a.assign({"t": 2}, {"x": Subscription(["t"], encode_sticky_user_data([tp("t", 0)], 9))})
    assert a.max_generation == 9
    a.assign({"t": 2}, {"x": Subscription(["t"])})
    assert a.max_generation == 9


def test_claim_conflicts_are_reported_and_logged() -> None:
    events: list[tuple[str, dict]] = []

    class _Log:
        def info(self, event: str, **fields) -> None:
            events.append((event, fields))

        warning = info

    a = StickyAssignor(logger=_Log())
    subs = {
        "a": Subscription(["t"], encode_sticky_user_data([tp("t", 0)], 2), generation_id=2),
        "b": Subscription(
            ["t"], encode_sticky_user_data([tp("t", 0), tp("t", 1)], 2), generation_id=2
        ),
    }
    a.assign({"t": 2}, subs)
    assert a.last_builder == "constrained"
    assert [(c.partition, c.resolution) for c in a.last_conflicts] == [
        (tp("t", 0), "revoked_from_both")
    ]
    names = [e for e, _ in events]
    assert names == ["sticky_claim_conflict", "sticky_assignment_built"]
    assert events[1][1]["claim_conflicts"] == 1 and events[1][1]["builder"] == "constrained"
