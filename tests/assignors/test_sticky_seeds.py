"""The sticky examples of seed article 003 (and the StickyAssignor javadoc), checked exactly.

Example 1 after C1 leaves: the seed's table (C0 keeps t0p0, t1p1, t3p0 and gains t2p0; C2 gains
t0p1 and t3p1) is what Kafka's *general* builder produces (the pre-2.6 algorithm). Current Kafka
runs the constrained builder for a uniform group and deals the orphans over the members sorted by
id: C0 gains t0p1, C2 gains t2p0 and t3p1. Both are balanced (4/4) and keep every surviving
ownership; we assert current Kafka's output and show the seed table comes from the general path.
"""

from __future__ import annotations

from assignors.api import Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_user_data import encode_sticky_user_data
from tests.assignors.sticky_support import tp

TOPICS = ["t0", "t1", "t2", "t3"]
CLUSTER = {t: 2 for t in TOPICS}


def _p(text: str) -> set:
    return {tp(f"t{s[1]}", int(s[3])) for s in text.split()}


def test_example1_initial_table() -> None:
    for assignor in (StickyAssignor(), CooperativeStickyAssignor()):
        r = assignor.assign(CLUSTER, {c: Subscription(TOPICS) for c in ("C0", "C1", "C2")})
        assert r == {
            "C0": [tp("t0", 0), tp("t1", 1), tp("t3", 0)],
            "C1": [tp("t0", 1), tp("t2", 0), tp("t3", 1)],
            "C2": [tp("t1", 0), tp("t2", 1)],
        }


def _after_c1_leaves(assignor: StickyAssignor, topics_c2: list[str]) -> dict:
    before = {
        "C0": [tp("t0", 0), tp("t1", 1), tp("t3", 0)],
        "C2": [tp("t1", 0), tp("t2", 1)],
    }
    subs = {
        "C0": Subscription(TOPICS, encode_sticky_user_data(before["C0"], 1)),
        "C2": Subscription(topics_c2, encode_sticky_user_data(before["C2"], 1)),
    }
    return assignor.assign(CLUSTER, subs)


def test_example1_after_c1_leaves_current_kafka() -> None:
    r = _after_c1_leaves(StickyAssignor(), TOPICS)
    assert r == {
        "C0": [tp("t0", 0), tp("t3", 0), tp("t1", 1), tp("t0", 1)],
        "C2": [tp("t1", 0), tp("t2", 1), tp("t2", 0), tp("t3", 1)],
    }
    seed = {"C0": _p("t0p0 t1p1 t3p0 t2p0"), "C2": _p("t1p0 t2p1 t0p1 t3p1")}
    for ours, theirs in ((r["C0"], seed["C0"]), (r["C2"], seed["C2"])):
        assert len(ours) == len(theirs) == 4
    kept = {"C0": _p("t0p0 t1p1 t3p0"), "C2": _p("t1p0 t2p1")}
    assert kept["C0"] <= set(r["C0"]) and kept["C2"] <= set(r["C2"])
    assert kept["C0"] <= seed["C0"] and kept["C2"] <= seed["C2"]


def test_example1_seed_table_is_the_general_builder() -> None:
    """A subscription to a topic that does not exist still counts in Kafka's uniformity test, so
    it sends the same group to the general builder, which reproduces the seed's table exactly."""
    r = _after_c1_leaves(StickyAssignor(), [*TOPICS, "ghost"])
    assert r == {  # the seed table, row order included
        "C0": [tp("t0", 0), tp("t1", 1), tp("t3", 0), tp("t2", 0)],
        "C2": [tp("t1", 0), tp("t2", 1), tp("t0", 1), tp("t3", 1)],
    }


def test_example2_both_tables() -> None:
    cluster = {"t0": 1, "t1": 2, "t2": 3}
    topics = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    a = StickyAssignor()
    r = a.assign(cluster, {m: Subscription(t) for m, t in topics.items()})
    assert r == {
        "C0": [tp("t0", 0)],
        "C1": [tp("t1", 0), tp("t1", 1)],
        "C2": [tp("t2", 0), tp("t2", 1), tp("t2", 2)],
    }
    subs = {m: Subscription(topics[m], encode_sticky_user_data(r[m], 1)) for m in ("C1", "C2")}
    r2 = a.assign(cluster, subs)
    assert r2 == {
        "C1": [tp("t1", 0), tp("t1", 1), tp("t0", 0)],
        "C2": [tp("t2", 0), tp("t2", 1), tp("t2", 2)],
    }
    assert a.is_sticky()
