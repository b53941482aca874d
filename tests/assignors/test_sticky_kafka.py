"""Ports of Kafka's AbstractStickyAssignorTest, run for both sticky assignors and all rack configs.

Expectations are Kafka's, exactly (lists compared in order where Kafka compares lists). Tests
whose expectations differ between the two assignors branch on ``env.cooperative`` as Kafka's
subclasses do. The big performance tests live in ``bench/assignors.py``; here they run scaled down.
"""

from __future__ import annotations

import random

import pytest

from assignors.api import Subscription
from tests.assignors.sticky_support import (
    DEFAULT_GENERATION,
    GENERATION_ID,
    KafkaStickyEnv,
    RackConfig,
    is_fully_balanced,
    tp,
    transferring,
)

KINDS = ["sticky", "cooperative-sticky"]
T, T1, T2, T3 = "topic", "topic1", "topic2", "topic3"
C1, C2, C3, C4 = "consumer1", "consumer2", "consumer3", "consumer4"


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=list(RackConfig), ids=lambda r: r.value)
def env(kind: str, request: pytest.FixtureRequest) -> KafkaStickyEnv:
    e = KafkaStickyEnv(kind)
    e.initialize_racks(request.param)
    return e


def _name(prefix: str, i: int, max_num: int) -> str:
    return prefix + str(i).zfill(len(str(max_num)))


def test_member_data(kind: str) -> None:
    env = KafkaStickyEnv(kind)
    owned = [tp(T1, 0), tp(T2, 1)]
    for sub in (
        env.v0([T], owned, GENERATION_ID, 0),
        env.v1([T], owned, GENERATION_ID, 1),
        env.v2([T], owned, GENERATION_ID, 2),
    ):
        if sub is None:
            continue
        data = env.assignor.member_data(sub)
        assert list(data.partitions) == owned
        assert data.generation == GENERATION_ID


@pytest.mark.parametrize("consumer_rack", [False, True])
def test_one_consumer_no_topic(kind: str, consumer_rack: bool) -> None:
    env = KafkaStickyEnv(kind)
    env.initialize_racks(
        RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack else RackConfig.NO_CONSUMER_RACK
    )
    subs = {"consumer": env.subscription([], 0)}
    assignment = env.assign(subs)
    assert assignment == {"consumer": []}
    assert transferring(env) == {}


@pytest.mark.parametrize("consumer_rack", [False, True])
def test_one_consumer_nonexistent_topic(kind: str, consumer_rack: bool) -> None:
    env = KafkaStickyEnv(kind)
    env.initialize_racks(
        RackConfig.BROKER_AND_CONSUMER_RACK if consumer_rack else RackConfig.NO_CONSUMER_RACK
    )
    env.add_topic(T, 0)
    subs = {"consumer": env.subscription([T], 0)}
    assignment = env.assign(subs)
    assert assignment == {"consumer": []}
    assert transferring(env) == {}


def test_one_consumer_one_topic(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    subs = {"consumer": env.subscription([T], 0)}
    assignment = env.assign(subs)
    assert assignment["consumer"] == [tp(T, 0), tp(T, 1), tp(T, 2)]
    assert transferring(env) == {}
    env.verify(subs, assignment)
    assert is_fully_balanced(assignment)


def test_only_assigns_partitions_from_subscribed_topics(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 2)
    owned = [tp(T, 0), tp(T, 1), tp("other", 0), tp("other", 1)]
    subs = {"consumer": env.v2([T], owned, GENERATION_ID, 0)}
    assignment = env.assign(subs)
    assert assignment["consumer"] == [tp(T, 0), tp(T, 1)]
    assert transferring(env) == {}
    env.verify(subs, assignment)


def test_one_consumer_multiple_topics(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 1)
    env.add_topic(T2, 2)
    subs = {"consumer": env.subscription([T1, T2], 0)}
    assignment = env.assign(subs)
    assert assignment["consumer"] == [tp(T1, 0), tp(T2, 0), tp(T2, 1)]
    assert transferring(env) == {}


def test_two_consumers_one_topic_one_partition(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 1)
    subs = {C1: env.subscription([T], 0), C2: env.subscription([T], 1)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    assert is_fully_balanced(assignment)


def test_two_consumers_one_topic_two_partitions(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 2)
    subs = {C1: env.subscription([T], 0), C2: env.subscription([T], 1)}
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T, 0)]
    assert assignment[C2] == [tp(T, 1)]
    assert transferring(env) == {}


def test_multiple_consumers_mixed_topic_subscriptions(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 3)
    env.add_topic(T2, 2)
    subs = {
        C1: env.subscription([T1], 0),
        C2: env.subscription([T1, T2], 1),
        C3: env.subscription([T1], 2),
    }
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T1, 0), tp(T1, 2)]
    assert assignment[C2] == [tp(T2, 0), tp(T2, 1)]
    assert assignment[C3] == [tp(T1, 1)]
    assert transferring(env) is None
    env.verify(subs, assignment)
    assert is_fully_balanced(assignment)


def test_two_consumers_two_topics_six_partitions(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 3)
    env.add_topic(T2, 3)
    subs = {C1: env.subscription([T1, T2], 0), C2: env.subscription([T1, T2], 1)}
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T1, 0), tp(T1, 2), tp(T2, 1)]
    assert assignment[C2] == [tp(T1, 1), tp(T2, 0), tp(T2, 2)]
    assert transferring(env) == {}


def test_consumer_owning_min_quota_expected_max_quota(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 2)
    env.add_topic(T2, 3)
    topics = [T1, T2]
    subs = {
        C1: env.v2(topics, [tp(T1, 0), tp(T2, 1)], GENERATION_ID, 0),
        C2: env.v2(topics, [tp(T1, 1), tp(T2, 2)], GENERATION_ID, 1),
    }
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T1, 0), tp(T2, 1), tp(T2, 0)]
    assert assignment[C2] == [tp(T1, 1), tp(T2, 2)]
    assert transferring(env) == {}
    env.verify(subs, assignment)
    assert is_fully_balanced(assignment)


def test_max_quota_consumer_more_than_num_expected_max_capacity_members(
    env: KafkaStickyEnv,
) -> None:
    """Java HashMap order (consumer3, consumer2, consumer1) decides who keeps the max slot."""
    env.add_topic(T1, 2)
    env.add_topic(T2, 2)
    topics = [T1, T2]
    subs = {
        C1: env.v2(topics, [tp(T1, 0), tp(T2, 0)], GENERATION_ID, 0),
        C2: env.v2(topics, [tp(T1, 1), tp(T2, 1)], GENERATION_ID, 1),
        C3: env.v2(topics, [], GENERATION_ID, 2),
    }
    assignment = env.assign(subs)
    assert transferring(env) == {tp(T2, 0): C3}
    env.verify(subs, assignment)
    assert assignment[C1] == [tp(T1, 0)]
    assert assignment[C2] == [tp(T1, 1), tp(T2, 1)]
    assert assignment[C3] == [tp(T2, 0)]
    assert is_fully_balanced(assignment)


def test_all_consumers_are_under_min_quota(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 2)
    env.add_topic(T2, 3)
    topics = [T1, T2]
    subs = {
        C1: env.v2(topics, [tp(T1, 0)], GENERATION_ID, 0),
        C2: env.v2(topics, [tp(T1, 1)], GENERATION_ID, 1),
        C3: env.v2(topics, [], GENERATION_ID, 2),
    }
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    assert assignment[C1] == [tp(T1, 0), tp(T2, 1)]
    assert assignment[C2] == [tp(T1, 1), tp(T2, 2)]
    assert assignment[C3] == [tp(T2, 0)]


def test_add_remove_consumer_one_topic(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    subs = {C1: env.subscription([T], 0)}
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T, 0), tp(T, 1), tp(T, 2)]
    env.verify(subs, assignment)

    subs[C1] = env.v2([T], assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2([T], [], GENERATION_ID, 1)
    assignment = env.assign(subs)
    assert transferring(env) == {tp(T, 2): C2}
    env.verify(subs, assignment)
    assert assignment[C1] == [tp(T, 0), tp(T, 1)]
    assert assignment[C2] == [tp(T, 2)]

    del subs[C1]
    subs[C2] = env.v2([T], assignment[C2], GENERATION_ID, 1)
    assignment = env.assign(subs)
    assert set(assignment[C2]) == {tp(T, 0), tp(T, 1), tp(T, 2)}
    assert transferring(env) == {}
    env.verify(subs, assignment)


def test_topic_balance_after_reassignment(env: KafkaStickyEnv) -> None:
    topics = [T1, T2]
    env.add_topic(T1, 12)
    env.add_topic(T2, 12)
    subs = {C1: env.subscription(topics, 0)}

    def per_topic(assignment: dict, expected: int) -> None:
        for parts in assignment.values():
            assert sum(p.topic == T1 for p in parts) == expected
            assert sum(p.topic == T2 for p in parts) == expected

    assignment = env.assign(subs)
    env.verify(subs, assignment)
    per_topic(assignment, 12)
    subs[C1] = env.v2(topics, assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2(topics, [], GENERATION_ID, 1)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    per_topic(assignment, 6)
    subs[C1] = env.v2(topics, assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2(topics, assignment[C2], GENERATION_ID, 1)
    subs[C3] = env.v2(topics, [], GENERATION_ID, 2)
    subs[C4] = env.v2(topics, [], GENERATION_ID, 3)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    per_topic(assignment, 3)
    del subs[C1], subs[C2]
    subs[C3] = env.v2(topics, assignment[C3], GENERATION_ID, 2)
    subs[C4] = env.v2(topics, assignment[C4], GENERATION_ID, 3)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    per_topic(assignment, 6)
    assert transferring(env) == {}


def test_add_remove_two_consumers_two_topics(env: KafkaStickyEnv) -> None:
    topics = [T1, T2]
    env.add_topic(T1, 3)
    env.add_topic(T2, 4)
    subs = {C1: env.subscription(topics, 0), C2: env.subscription(topics, 1)}
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T1, 0), tp(T1, 2), tp(T2, 1), tp(T2, 3)]
    assert assignment[C2] == [tp(T1, 1), tp(T2, 0), tp(T2, 2)]
    assert transferring(env) == {}
    env.verify(subs, assignment)

    subs[C1] = env.v2(topics, assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2(topics, assignment[C2], GENERATION_ID, 1)
    subs[C3] = env.v2(topics, [], GENERATION_ID, 2)
    subs[C4] = env.v2(topics, [], GENERATION_ID, 3)
    assignment = env.assign(subs)
    assert transferring(env) == {tp(T1, 2): C3, tp(T2, 3): C3, tp(T2, 2): C4}
    env.verify(subs, assignment)
    assert assignment[C1] == [tp(T1, 0), tp(T2, 1)]
    assert assignment[C2] == [tp(T2, 0), tp(T1, 1)]
    assert assignment[C3] == [tp(T1, 2), tp(T2, 3)]
    assert assignment[C4] == [tp(T2, 2)]

    del subs[C1], subs[C2]
    subs[C3] = env.v2(topics, assignment[C3], GENERATION_ID, 2)
    subs[C4] = env.v2(topics, assignment[C4], GENERATION_ID, 3)
    assignment = env.assign(subs)
    assert assignment[C3] == [tp(T1, 2), tp(T2, 3), tp(T1, 0), tp(T2, 1)]
    assert assignment[C4] == [tp(T2, 2), tp(T1, 1), tp(T2, 0)]
    assert transferring(env) == {}
    env.verify(subs, assignment)


def test_poor_round_robin_assignment_scenario(env: KafkaStickyEnv) -> None:
    for i in range(1, 6):
        env.add_topic(f"topic{i}", (i % 2) + 1)
    all5 = ["topic1", "topic2", "topic3", "topic4", "topic5"]
    odd = ["topic1", "topic3", "topic5"]
    subs = {
        C1: env.subscription(all5, 0),
        C2: env.subscription(odd, 1),
        C3: env.subscription(odd, 2),
        C4: env.subscription(all5, 3),
    }
    assignment = env.assign(subs)
    env.verify(subs, assignment)


def test_add_remove_topic_two_consumers(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    subs = {C1: env.subscription([T], 0), C2: env.subscription([T], 1)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    first1, first2 = assignment[C1], assignment[C2]
    assert sorted([len(first1), len(first2)]) == [1, 2]

    env.add_topic(T2, 3)
    subs[C1] = env.v2([T, T2], assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2([T, T2], assignment[C2], GENERATION_ID, 1)
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    second1, second2 = assignment[C1], assignment[C2]
    assert len(second1) == 3 and len(second2) == 3
    assert set(first1) <= set(second1) and set(first2) <= set(second2)

    env.remove_topic(T)
    subs[C1] = env.v2([T2], assignment[C1], GENERATION_ID, 0)
    subs[C2] = env.v2([T2], assignment[C2], GENERATION_ID, 1)
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    assert sorted([len(assignment[C1]), len(assignment[C2])]) == [1, 2]
    assert set(assignment[C1]) <= set(second1) and set(assignment[C2]) <= set(second2)


def test_reassignment_after_one_consumer_leaves(env: KafkaStickyEnv) -> None:
    for i in range(1, 20):
        env.add_topic(_name("t", i, 20), i)
    subs = {}
    for i in range(1, 20):
        subs[_name("c", i, 20)] = env.subscription([_name("t", j, 20) for j in range(1, i + 1)], i)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    for i in range(1, 20):
        c = _name("c", i, 20)
        subs[c] = env.v2(list(subs[c].topics), assignment[c], GENERATION_ID, i)
    subs.pop("consumer10", None)  # Kafka's test removes a name that does not exist
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    assert env.assignor.is_sticky()


def test_reassignment_after_one_consumer_added(env: KafkaStickyEnv) -> None:
    env.add_topic("topic", 20)
    subs = {_name("c", i, 10): env.subscription(["topic"], i) for i in range(1, 10)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    subs[_name("c", 10, 10)] = env.subscription(["topic"], 10)
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)


def test_same_subscriptions(env: KafkaStickyEnv) -> None:
    for i in range(1, 15):
        env.add_topic(_name("t", i, 15), i)
    topics = [_name("t", j, 15) for j in range(1, 15)]
    subs = {_name("c", i, 9): env.subscription(topics, i) for i in range(1, 9)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    for i in range(1, 9):
        c = _name("c", i, 9)
        subs[c] = env.v2(list(subs[c].topics), assignment[c], GENERATION_ID, i)
    del subs[_name("c", 5, 9)]
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)


@pytest.mark.parametrize("workload", ["uniform", "non-equal", "halves"])
def test_large_workloads_scaled_down(kind: str, workload: str) -> None:
    """Kafka's performance tests, shape for shape, at a size fit for a unit test."""
    env = KafkaStickyEnv(kind)
    env.initialize_racks(RackConfig.NO_CONSUMER_RACK)
    n_topics, n_parts, n_consumers = (20, 50, 40) if workload != "halves" else (10, 20, 50)
    topics = [_name("t", i, n_topics) for i in range(n_topics)]
    for t in topics:
        env.add_topic(t, n_parts)

    def topics_of(i: int) -> list[str]:
        if workload == "non-equal" and i == n_consumers - 1:
            return topics[:1]
        if workload == "halves":
            return topics[: n_topics // 2] if i % 4 == 0 else topics[n_topics // 2 :]
        return topics

    subs = {
        _name("c", i, n_consumers): env.subscription(topics_of(i), i) for i in range(n_consumers)
    }
    assignment = env.assign(subs)
    assert sum(map(len, assignment.values())) == n_topics * n_parts
    for i in range(1, n_consumers):
        c = _name("c", i, n_consumers)
        subs[c] = env.v2(topics_of(i), assignment[c], GENERATION_ID, i)
    second = env.assign(subs)
    env.verify(subs, second)


def test_subscription_not_equal_and_assign_same_partition_with_3_generation(kind: str) -> None:
    env = KafkaStickyEnv(kind)
    env.add_topic(T, 6)
    env.add_topic(T1, 1)
    for g1, g2, g3 in [(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)]:
        subs = {
            C1: env.v2([T], [tp(T, 0), tp(T, 2)], g1, 0),
            C2: env.v2([T], [tp(T, 1), tp(T, 2), tp(T, 3)], g2, 1),
            C3: env.v2([T], [tp(T, 2), tp(T, 4), tp(T, 5)], g3, 2),
            C4: env.v2([T1], [tp(T1, 0)], 2, 3),
        }
        assignment = env.assign(subs)
        flat = [p for parts in assignment.values() for p in parts]
        assert len(flat) == len(set(flat))
        assert all(1 <= len(parts) <= 2 for parts in assignment.values())


@pytest.mark.parametrize("seed", [0, 1])
def test_large_assignment_with_multiple_consumers_leaving_and_random_subscription(
    kind: str, seed: int
) -> None:
    rnd = random.Random(seed)
    env = KafkaStickyEnv(kind)
    env.initialize_racks(RackConfig.NO_CONSUMER_RACK)
    n_topics, n_consumers = 40, 200
    for i in range(n_topics):
        env.add_topic(_name("t", i, n_topics), rnd.randrange(10) + 1)
    subs = {}
    for i in range(n_consumers):
        topics = []
        j = 0
        while j < rnd.randrange(20):  # Kafka re-draws the bound on every iteration
            topics.append(_name("t", rnd.randrange(n_topics), n_topics))
            j += 1
        subs[_name("c", i, n_consumers)] = env.subscription(topics, i)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    for i in range(1, n_consumers):
        c = _name("c", i, n_consumers)
        subs[c] = env.v2(list(subs[c].topics), assignment[c], GENERATION_ID, i)
    for _ in range(50):
        subs.pop(_name("c", rnd.randrange(n_consumers), n_consumers), None)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    assert env.assignor.is_sticky()


def test_new_subscription(env: KafkaStickyEnv) -> None:
    for i in range(1, 5):
        env.add_topic(_name("t", i, 5), 1)
    subs = {}
    for i in range(3):
        subs[_name("c", i, 3)] = env.subscription(
            [_name("t", j, 5) for j in range(i, 3 * i - 1)], i
        )
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    old = subs[_name("c", 0, 3)]
    subs[_name("c", 0, 3)] = Subscription([*old.topics, _name("t", 1, 5)], rack_id=old.rack_id)
    assignment = env.assign(subs)
    env.verify(subs, assignment)
    assert env.assignor.is_sticky()


def test_move_existing_assignments(env: KafkaStickyEnv) -> None:
    for i in range(1, 7):
        env.add_topic(f"topic{i}", 1)
    subs = {
        C1: env.v2([T1, T2], [tp(T1, 0)], GENERATION_ID, 0),
        C2: env.v2([T1, T2, T3, "topic4"], [tp(T2, 0), tp(T3, 0)], GENERATION_ID, 1),
        C3: env.v2(
            [T2, T3, "topic4", "topic5", "topic6"],
            [tp("topic4", 0), tp("topic5", 0), tp("topic6", 0)],
            GENERATION_ID,
            2,
        ),
    }
    assignment = env.assign(subs)
    assert transferring(env) is None
    env.verify(subs, assignment)


def test_stickiness(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 3)
    subs = {c: env.subscription([T1], i) for i, c in enumerate([C1, C2, C3, C4])}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    before = {}
    for c, parts in assignment.items():
        assert len(parts) <= 1
        if parts:
            before[c] = parts[0]
    del subs[C1]
    for i, c in enumerate([C2, C3, C4], start=1):
        subs[c] = env.v2([T1], assignment[c], GENERATION_ID, i)
    assignment = env.assign(subs)
    assert transferring(env) == {}
    env.verify(subs, assignment)
    for c, parts in assignment.items():
        assert len(parts) == 1
        assert c not in before or before[c] in parts


def test_assignment_updated_for_deleted_topic(env: KafkaStickyEnv) -> None:
    env.add_topic(T1, 1)
    env.add_topic(T3, 100)
    subs = {"consumer": env.subscription([T1, T2, T3], 0)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    assert sum(map(len, assignment.values())) == 101
    assert set(assignment) == {"consumer"}


def test_no_exception_thrown_when_only_subscribed_topic_deleted(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    subs = {"consumer": env.subscription([T], 0)}
    assignment = env.assign(subs)
    assert transferring(env) == {}
    subs["consumer"] = env.v2([T], assignment["consumer"], GENERATION_ID, 0)
    assignment = env.assignor.assign({}, subs)
    assert transferring(env) == {}
    assert assignment == {"consumer": []}


def test_reassignment_with_random_subscriptions_and_changes(env: KafkaStickyEnv) -> None:
    rnd = random.Random(7)

    def sublist(items: list[str]) -> list[str]:
        chosen = list(items)
        for _ in range(rnd.randrange(len(items))):
            chosen.pop(rnd.randrange(len(chosen)))
        return sorted(chosen)

    for _round in range(6):
        env.counts.clear()
        env.racks.clear()
        n_topics = 10 + rnd.randrange(10)
        topics = [_name("t", i, 20) for i in range(n_topics)]
        for i, t in enumerate(topics):
            env.add_topic(t, i + 1)
        n_consumers = 20 + rnd.randrange(20)
        subs = {_name("c", i, 40): env.subscription(sublist(topics), i) for i in range(n_consumers)}
        env.assignor = env.create_assignor()
        env.assignor.prefer_rack_aware_logic = True
        assignment = env.assign(subs)
        env.verify(subs, assignment)
        subs = {
            _name("c", i, 40): env.v2(
                sublist(topics), assignment[_name("c", i, 40)], GENERATION_ID, i
            )
            for i in range(n_consumers)
        }
        assignment = env.assign(subs)
        env.verify(subs, assignment)
        assert env.assignor.is_sticky()


def test_all_consumers_reach_expected_quota_and_are_considered_filled(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 4)
    subs = {
        C1: env.v2([T], [tp(T, 0), tp(T, 1)], GENERATION_ID, 0),
        C2: env.v2([T], [tp(T, 2)], GENERATION_ID, 1),
        C3: env.v2([T], [], GENERATION_ID, 2),
    }
    assignment = env.assign(subs)
    assert assignment[C1] == [tp(T, 0), tp(T, 1)]
    assert assignment[C2] == [tp(T, 2)]
    assert assignment[C3] == [tp(T, 3)]
    assert transferring(env) == {}


def test_owned_partitions_invalidated_for_stale_generation(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    env.add_topic(T2, 3)
    owned = [tp(T, 0), tp(T, 2), tp(T2, 1)]
    subs = {
        C1: env.v2([T, T2], owned, 10, 0),
        C2: env.v2([T, T2], owned, 9, 1),
    }
    assignment = env.assign(subs)
    assert set(assignment[C1]) == set(owned)
    assert set(assignment[C2]) == {tp(T, 1), tp(T2, 0), tp(T2, 2)}
    assert transferring(env) == {}


def test_owned_partitions_invalidated_for_no_generation(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    env.add_topic(T2, 3)
    owned = [tp(T, 0), tp(T, 2), tp(T2, 1)]
    subs = {
        C1: env.v2([T, T2], owned, 10, 0),
        C2: env.v2([T, T2], owned, DEFAULT_GENERATION, 1),
    }
    assignment = env.assign(subs)
    assert set(assignment[C1]) == set(owned)
    assert set(assignment[C2]) == {tp(T, 1), tp(T2, 0), tp(T2, 2)}
    assert transferring(env) == {}


def test_transferring_includes_partition_claimed_by_multiple_consumers_in_same_generation(
    env: KafkaStickyEnv,
) -> None:
    env.add_topic(T, 3)
    subs = {
        C1: env.v2([T], [tp(T, 0), tp(T, 1)], GENERATION_ID, 0),
        C2: env.v2([T], [tp(T, 0), tp(T, 2)], GENERATION_ID, 1),
        C3: env.v2([T], [], GENERATION_ID, 2),
    }
    assignment = env.assign(subs)
    assert transferring(env) == {tp(T, 0): C3}
    env.verify(subs, assignment)
    assert assignment[C1] == [tp(T, 1)]
    assert assignment[C2] == [tp(T, 2)]
    assert assignment[C3] == [tp(T, 0)]


def test_ensure_partitions_assigned_to_highest_generation(env: KafkaStickyEnv) -> None:
    for t in (T, T2, T3):
        env.add_topic(t, 3)
    topics = [T, T2, T3]
    subs = {
        C1: env.v2(topics, [tp(T, 0), tp(T2, 0), tp(T3, 0)], 10, 0),
        C2: env.v2(topics, [tp(T, 1), tp(T2, 1), tp(T3, 1)], 9, 1),
        C3: env.v2(topics, [tp(T2, 1), tp(T3, 0), tp(T3, 2)], 8, 1),
    }
    assignment = env.assign(subs)
    assert set(assignment[C1]) == {tp(T, 0), tp(T2, 0), tp(T3, 0)}
    assert set(assignment[C2]) == {tp(T, 1), tp(T2, 1), tp(T3, 1)}
    assert set(assignment[C3]) == {tp(T, 2), tp(T2, 2), tp(T3, 2)}
    assert transferring(env) == {}


def test_no_reassignment_on_current_members(env: KafkaStickyEnv) -> None:
    for t in (T, T1, T2, T3):
        env.add_topic(t, 3)
    topics = [T, T2, T3, T1]
    subs = {
        C1: env.v2(topics, [], DEFAULT_GENERATION, 0),
        C2: env.v2(topics, [tp(T, 0), tp(T2, 0), tp(T1, 0)], 9, 1),
        C3: env.v2(topics, [tp(T3, 2), tp(T2, 2), tp(T1, 1)], 8, 2),
        C4: env.v2(topics, [tp(T3, 1), tp(T, 1), tp(T, 2)], 7, 3),
    }
    assignment = env.assign(subs)
    assert set(assignment[C1]) == {tp(T1, 2), tp(T2, 1), tp(T3, 0)}
    assert transferring(env) == {}


def test_owned_partitions_invalidated_for_multiple_generation(env: KafkaStickyEnv) -> None:
    env.add_topic(T, 3)
    env.add_topic(T2, 3)
    subs = {
        C1: env.v2([T, T2], [tp(T, 0), tp(T2, 1), tp(T, 1)], 10, 0),
        C2: env.v2([T, T2], [tp(T, 0), tp(T2, 1), tp(T2, 2)], 8, 1),
    }
    assignment = env.assign(subs)
    assert set(assignment[C1]) == {tp(T, 0), tp(T2, 1), tp(T, 1)}
    assert set(assignment[C2]) == {tp(T, 2), tp(T2, 2), tp(T2, 0)}
    assert transferring(env) == {}
