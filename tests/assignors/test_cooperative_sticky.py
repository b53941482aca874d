"""Ports of Kafka's CooperativeStickyAssignorTest, plus KIP-429's two-round behaviour."""

from __future__ import annotations

import pytest

from assignors.api import ClusterMetadata, RebalanceProtocol, Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky_user_data import decode_cooperative_user_data, encode_cooperative_user_data
from tests.assignors.sticky_support import (
    DEFAULT_GENERATION,
    GENERATION_ID,
    KafkaStickyEnv,
    RackConfig,
    cooperative_revocations,
    is_fully_balanced,
    tp,
)

T, T1, T2 = "topic", "topic1", "topic2"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"


@pytest.fixture(params=list(RackConfig), ids=lambda r: r.value)
def env(request: pytest.FixtureRequest) -> KafkaStickyEnv:
    e = KafkaStickyEnv("cooperative-sticky")
    e.initialize_racks(request.param)
    return e


def test_protocols_and_name() -> None:
    a = CooperativeStickyAssignor()
    assert a.name == "cooperative-sticky"
    assert a.supported_protocols == (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)


def test_encode_and_decode_generation() -> None:
    a = CooperativeStickyAssignor()
    sub = Subscription([T], a.subscription_user_data([T]))
    assert a.member_data(sub).generation == DEFAULT_GENERATION
    a.on_assignment([], 10)
    sub = Subscription([T], a.subscription_user_data([T]))
    assert a.member_data(sub).generation == 10
    assert a.subscription_user_data([T]) == b"\x00\x00\x00\x0a"


def test_decode_generation_absent_without_user_data() -> None:
    assert CooperativeStickyAssignor().member_data(Subscription([T])).generation is None


def test_corrupt_user_data_means_default_generation() -> None:
    assert decode_cooperative_user_data(b"\x01") == DEFAULT_GENERATION
    assert decode_cooperative_user_data(encode_cooperative_user_data(-7)) == -7


@pytest.mark.parametrize("unequal_size", [False, True])
def test_claimed_by_multiple_consumers_in_same_generation_is_withheld(
    env: KafkaStickyEnv, unequal_size: bool
) -> None:
    env.add_topic(T, 4 if unequal_size else 3)
    subs = {
        C1: env.v2([T], [tp(T, 0), tp(T, 1)], GENERATION_ID, 0),
        C2: env.v2([T], [tp(T, 0), tp(T, 2)], GENERATION_ID, 1),
        C3: env.v2([T], [], GENERATION_ID, 2),
    }
    a = env.assign(subs)
    assert a[C1] == ([tp(T, 1), tp(T, 3)] if unequal_size else [tp(T, 1)])
    assert a[C2] == [tp(T, 2)]
    assert a[C3] == []  # topic-0 must be revoked by both claimants first
    env.verify(subs, a)
    assert is_fully_balanced(a)


def test_member_data_with_inconsistent_data() -> None:
    a = CooperativeStickyAssignor()
    a.on_assignment([tp(T, 1)], GENERATION_ID)
    sub = Subscription([T], a.subscription_user_data([T]), [tp(T, 0)])
    member = a.member_data(sub)
    assert list(member.partitions) == [tp(T, 0)]
    assert member.generation == GENERATION_ID


@pytest.mark.parametrize("user_data_generation", [GENERATION_ID, GENERATION_ID - 1])
def test_member_data_with_empty_partitions_prefers_protocol_generation(
    user_data_generation: int,
) -> None:
    a = CooperativeStickyAssignor()
    a.on_assignment([tp(T1, 0), tp(T2, 1)], user_data_generation)
    sub = Subscription([T], a.subscription_user_data([T]), [], GENERATION_ID)
    member = a.member_data(sub)
    assert list(member.partitions) == []
    assert member.generation == GENERATION_ID


def test_assignor_with_old_version_subscriptions() -> None:
    env = KafkaStickyEnv("cooperative-sticky")
    env.add_topic(T1, 3)
    subs = {
        C1: env.v1([T1], [tp(T1, 0)], GENERATION_ID, 0),
        C2: env.v1([T1], [tp(T1, 1)], GENERATION_ID, 1),
        C3: env.v2([T1], [], GENERATION_ID, 2),
    }
    a = env.assign(subs)
    assert a == {C1: [tp(T1, 0)], C2: [tp(T1, 1)], C3: [tp(T1, 2)]}
    env.verify(subs, a)


def test_uniform_subscription_transfer_ownership_list_is_right() -> None:
    env = KafkaStickyEnv("cooperative-sticky")
    env.replication_factor = 1
    env.num_broker_racks = 2
    env.has_consumer_rack = True
    env.add_topic(T1, 4)
    subs = {
        "c0": env.v2([T1], [tp(T1, 0), tp(T1, 1)], GENERATION_ID, 0),
        "c1": env.v2([T1], [tp(T1, 2), tp(T1, 3)], GENERATION_ID, 1),
    }
    env.assign(subs)
    assert len(env.assignor.partitions_transferring_ownership) == 2


def test_new_member_gets_partitions_only_after_revocation() -> None:
    """KIP-429 on the seed-003 group: round 1 withholds, round 2 completes and balances."""
    a = CooperativeStickyAssignor()
    cluster = {f"t{i}": 2 for i in range(4)}
    topics = list(cluster)
    r1 = a.assign(cluster, {"C0": Subscription(topics), "C1": Subscription(topics)})
    subs = {m: Subscription(topics, owned_partitions=r1[m], generation_id=1) for m in r1}
    subs["C2"] = Subscription(topics)
    r2 = a.assign(cluster, subs)
    assert r2["C2"] == []
    assert sum(map(len, r2.values())) == 6  # two partitions revoked, not yet handed over
    assert cooperative_revocations(subs, r2)
    subs = {m: Subscription(topics, owned_partitions=r2[m], generation_id=2) for m in r2}
    r3 = a.assign(cluster, subs)
    assert not cooperative_revocations(subs, r3)
    assert sorted(map(len, r3.values())) == [2, 3, 3]
    assert set(r2["C0"]) <= set(r3["C0"]) and set(r2["C1"]) <= set(r3["C1"])


def test_general_path_withholds_by_diff() -> None:
    """General builder: moved partitions are found by diffing owned vs assigned."""
    a = CooperativeStickyAssignor()
    cluster = {"t0": 1, "t1": 2, "t2": 3}
    subs = {
        "C1": Subscription(
            ["t0", "t1"], owned_partitions=[tp("t1", 0), tp("t1", 1)], generation_id=1
        ),
        "C2": Subscription(
            ["t0", "t1", "t2"],
            owned_partitions=[tp("t0", 0), *(tp("t2", i) for i in range(3))],
            generation_id=1,
        ),
    }
    r = a.assign(cluster, subs)
    assert a.partitions_transferring_ownership is None
    # the sticky result moves t0-0 to C1 (C2 has 4, C1 2); C2 must revoke it first
    assert r == {"C1": [tp("t1", 0), tp("t1", 1)], "C2": [tp("t2", 0), tp("t2", 1), tp("t2", 2)]}
    follow = {m: Subscription(subs[m].topics, owned_partitions=r[m], generation_id=2) for m in r}
    r2 = a.assign(cluster, follow)
    assert r2["C1"] == [tp("t1", 0), tp("t1", 1), tp("t0", 0)]


def test_rack_metadata_object_accepted() -> None:
    cluster = ClusterMetadata({"t": 2}, {"t": [["a"], ["b"]]})
    subs = {"x": Subscription(["t"], rack_id="b"), "y": Subscription(["t"], rack_id="a")}
    r = CooperativeStickyAssignor().assign(cluster, subs)
    assert r == {"x": [tp("t", 1)], "y": [tp("t", 0)]}


def test_malformed_ownership_is_a_clear_error() -> None:
    from assignors.common import AssignmentInputError

    bad = {"x": Subscription(["t"], owned_partitions=[("t", "zero")], generation_id=1)}
    with pytest.raises(AssignmentInputError, match="'x'"):
        CooperativeStickyAssignor().assign({"t": 2}, bad)


def test_empty_group_gets_empty_assignment() -> None:
    assert CooperativeStickyAssignor().assign({"t": 3}, {}) == {}
