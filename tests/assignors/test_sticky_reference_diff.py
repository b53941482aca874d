"""The fast sticky builders against a literal port of Kafka's code: same lists, same order.

``sticky_reference.py`` keeps Kafka's loops (TreeSet walks, ``isBalanced()`` in the loop, list
``remove``); the production code replaces them with closed forms (dealing as a reshape,
water-filling placement, cached balance checks). Random groups with random ownership, generations
and conflicting claims must give identical assignments, transfer maps and ``isSticky``.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from assignors.api import Subscription, TopicPartition, partitions_of
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_common_general import _waterfill
from assignors.sticky_user_data import encode_sticky_user_data
from coordinator.java import java_hashmap_order, java_hashmap_order_vectorised
from tests.assignors.sticky_reference import ReferenceSticky, cooperative_claims, sticky_claims

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


@st.composite
def groups_with_history(draw: st.DrawFn):
    n_topics = draw(st.integers(1, 5))
    topics = [f"t{i}" for i in range(n_topics)]
    counts = {t: draw(st.integers(0, 9)) for t in topics}
    n_members = draw(st.integers(1, 8))
    uniform = draw(st.booleans())
    common = draw(st.lists(st.sampled_from([*topics, "ghost"]), min_size=0, max_size=4))
    all_parts = [TopicPartition(t, p) for t in topics for p in range(counts[t])]
    members = {}
    for i in range(n_members):
        subs = (
            common if uniform else draw(st.lists(st.sampled_from([*topics, "ghost"]), max_size=4))
        )
        owned = (
            draw(st.lists(st.sampled_from(all_parts), max_size=6, unique=True))
            if all_parts and draw(st.booleans())
            else []
        )
        gen = draw(st.sampled_from([None, -1, 1, 1, 2, 3]))
        members[f"c{draw(st.integers(0, 30))}x{i}"] = (subs, owned, gen)
    return counts, members


def _eager_subs(members):
    return {
        m: Subscription(
            t,
            encode_sticky_user_data(o, g) if (o or g is not None) else None,
            generation_id=g if g is not None else -1,
        )
        for m, (t, o, g) in members.items()
    }


def _coop_subs(members, counts=None):
    """``counts`` given: owned partitions as the shared objects of ``partitions_of`` (those an
    earlier call handed out, found by identity), not equal copies."""

    def owned(o):
        return (
            o
            if counts is None
            else [partitions_of(tp.topic, counts[tp.topic])[tp.partition] for tp in o]
        )

    return {
        m: Subscription(t, owned_partitions=owned(o), generation_id=g if g is not None else -1)
        for m, (t, o, g) in members.items()
    }


@SETTINGS
@given(groups_with_history(), st.booleans(), st.booleans())
def test_fast_builders_equal_literal_port(scenario, cooperative: bool, shared: bool) -> None:
    counts, members = scenario
    if cooperative:
        subs, ours, ref = (
            _coop_subs(members, counts if shared else None),
            CooperativeStickyAssignor(),
            ReferenceSticky(cooperative_claims),
        )
        # compare the sticky core: bypass the cooperative adjustment by reading the eager result
        ctx, result = ours._assign_ids(counts, subs)
        got = ours._to_assignment(ctx, result.lists, subs)
    else:
        subs, ours, ref = _eager_subs(members), StickyAssignor(), ReferenceSticky(sticky_claims)
        got = ours.assign(counts, subs)
    expected = ref.assign(counts, subs)
    assert got == {m: expected[m] for m in subs}
    assert ours.partitions_transferring_ownership == ref.transferring
    assert ours.max_generation == ref.max_generation
    if ref.transferring is None:
        assert ours.is_sticky() == all(
            (b, a) not in pairs for pairs in ref.movements.by_topic.values() for a, b in pairs
        )


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=8),
    st.integers(1, 30),
    st.randoms(use_true_random=False),
)
def test_waterfill_equals_repeated_argmin(counts, k, rnd) -> None:
    import numpy as np

    ranks = list(range(len(counts)))
    rnd.shuffle(ranks)
    c = np.array(counts, dtype=np.int64)
    r = np.array(ranks, dtype=np.int64)
    expected = []
    live = list(counts)
    for _ in range(k):
        j = min(range(len(live)), key=lambda i: (live[i], ranks[i]))
        expected.append(j)
        live[j] += 1
    assert _waterfill(c, r, k).tolist() == expected


def test_vectorised_hashmap_order_matches_java_order() -> None:
    rnd = random.Random(5)
    for n in (1, 63, 64, 65, 700, 3000):
        keys = list(dict.fromkeys(f"consumer-{rnd.randrange(10**6)}-{i}" for i in range(n)))
        assert java_hashmap_order_vectorised(keys) == java_hashmap_order(keys)


def test_member_holding_more_than_it_subscribes_still_counts_for_balance() -> None:
    """Regression found by the differential sweep: Kafka's prevAssignment rule can give a partition
    back to a lower-generation owner that no longer subscribes to its topic, so a member may hold
    more than its maximum. ``isBalanced()`` skips only members at *exactly* their maximum."""
    tp = TopicPartition
    counts = {"t0": 1, "t1": 3, "t2": 6, "t3": 12, "t4": 11}
    members = {
        "m35_0": (
            ["t2"],
            [tp("t2", 1), tp("t4", 1), tp("t1", 2), tp("t3", 1), tp("t3", 8), tp("t3", 6)],
            2,
        ),
        "m49_1": (
            ["t1"],
            [
                tp("t2", 2),
                tp("t2", 3),
                tp("t4", 9),
                tp("t3", 0),
                tp("t2", 0),
                tp("t3", 10),
                tp("t1", 2),
            ],
            2,
        ),
        "m25_2": (["t4"], [tp("t3", 7), tp("t3", 0), tp("t2", 3), tp("t3", 5), tp("t2", 0)], None),
        "m13_3": (["t0"], [tp("t4", 0), tp("t3", 7), tp("t3", 3), tp("t4", 10), tp("t2", 3)], 3),
        "m33_4": (["t4", "t0", "t3", "ghost"], [], -1),
        "m39_5": (["ghost", "t3", "t1", "t2", "t4"], [tp("t2", 2)], -1),
    }
    subs = _eager_subs(members)
    got = StickyAssignor().assign(counts, subs)
    expected = ReferenceSticky(sticky_claims).assign(counts, subs)
    assert got == {m: expected[m] for m in subs}
    assert tp("t4", 9) in got["m49_1"]  # Kafka hands it to m49_1, which subscribes only to t1
