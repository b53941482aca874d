"""Every range / round-robin table and example of the seed articles, reproduced exactly.

The seeds (Chinese blog posts) are paraphrased here, not copied: seed 000 (iteblog, the ZooKeeper
consumer's range and roundrobin over threads), seed 001 (RangeAssignor example), seed 003
(RangeAssignor, RoundRobinAssignor and StickyAssignor tables), seed 004 (Range and "hash-sorted"
RoundRobin). Sticky tables belong to the sticky assignor's tests.

Two seed examples rest on a made-up hash order ("suppose the sorted order is ..."). For those the
tests show the real ``String.hashCode`` order, and that the seed's table is what the real dealing
gives when the seed's assumed order is injected.
"""

from __future__ import annotations

import pytest

from assignors import Subscription, TopicPartition, get_assignor
from assignors.legacy import LegacyAssignmentError, LegacyRoundRobinAssignor
from coordinator.java import java_string_hashcode


def parts(spec: str) -> list[TopicPartition]:
    """``"t0p0 t0p1"`` (the seeds' notation) or ``"T1-5 T1-2"`` -> TopicPartitions."""
    out = []
    for item in spec.split():
        if "-" in item:
            out.append(TopicPartition.parse(item))
        else:
            topic, _, p = item.rpartition("p")
            out.append(TopicPartition(topic, int(p)))
    return out


def numbers(tps) -> list[int]:
    return [tp.partition for tp in tps]


# --- seed 000: the ZooKeeper consumer (threads) ------------------------------------------------

SEED000_THREADS = {
    "C1": Subscription(["T1"], num_streams=1),
    "C2": Subscription(["T1"], num_streams=2),
}


def test_seed000_range_ten_partitions_three_threads():
    result = get_assignor("legacy-range").assign({"T1": 10}, SEED000_THREADS)
    assert {t: numbers(ps) for t, ps in result.items()} == {
        "C1-0": [0, 1, 2, 3],
        "C2-0": [4, 5, 6],
        "C2-1": [7, 8, 9],
    }


def test_seed000_range_eleven_partitions():
    result = get_assignor("legacy-range").assign({"T1": 11}, SEED000_THREADS)
    assert {t: numbers(ps) for t, ps in result.items()} == {
        "C1-0": [0, 1, 2, 3],
        "C2-0": [4, 5, 6, 7],
        "C2-1": [8, 9, 10],
    }


def test_seed000_range_two_topics_c1_0_gets_two_more():
    subs = {
        m: Subscription(["T1", "T2"], num_streams=s.num_streams) for m, s in SEED000_THREADS.items()
    }
    result = get_assignor("legacy-range").assign({"T1": 10, "T2": 10}, subs)
    assert result == {
        "C1-0": parts("T1-0 T1-1 T1-2 T1-3 T2-0 T2-1 T2-2 T2-3"),
        "C2-0": parts("T1-4 T1-5 T1-6 T2-4 T2-5 T2-6"),
        "C2-1": parts("T1-7 T1-8 T1-9 T2-7 T2-8 T2-9"),
    }
    assert len(result["C1-0"]) - len(result["C2-0"]) == 2


def test_seed000_scaladoc_two_consumers_two_streams_five_partitions():
    subs = {"C1": Subscription(["T"], num_streams=2), "C2": Subscription(["T"], num_streams=2)}
    result = get_assignor("legacy-range").assign({"T": 5}, subs)
    assert {t: numbers(ps) for t, ps in result.items()} == {
        "C1-0": [0, 1],
        "C1-1": [2],
        "C2-0": [3],
        "C2-1": [4],
    }


SEED000_RR = {"C1": Subscription(["T1"], num_streams=2), "C2": Subscription(["T1"], num_streams=2)}


def test_seed000_roundrobin_with_the_seeds_assumed_hash_order():
    assumed = parts("T1-5 T1-3 T1-0 T1-8 T1-2 T1-1 T1-4 T1-7 T1-6 T1-9")
    result = LegacyRoundRobinAssignor().assign_in_order(assumed, SEED000_RR)
    assert result == {
        "C1-0": parts("T1-5 T1-2 T1-6"),
        "C1-1": parts("T1-3 T1-1 T1-9"),
        "C2-0": parts("T1-0 T1-4"),
        "C2-1": parts("T1-8 T1-7"),
    }


@pytest.mark.parametrize("fmt", ["[t,p]", "t-p"])
def test_seed000_roundrobin_real_hash_order_is_increasing(fmt):
    """The seed's order is hypothetical: the real hashes of T1's partitions increase in both eras."""
    assignor = LegacyRoundRobinAssignor(string_format=fmt)
    hashes = [
        java_string_hashcode(assignor.partition_string(TopicPartition("T1", p))) for p in range(10)
    ]
    expected_first = {"[t,p]": -1610635167, "t-p": 2550976}[fmt]
    assert hashes[0] == expected_first
    assert hashes == sorted(hashes)
    assert hashes[-1] - hashes[0] == {"[t,p]": 9 * 31, "t-p": 9}[fmt]
    result = assignor.assign({"T1": 10}, SEED000_RR)
    assert {t: numbers(ps) for t, ps in result.items()} == {
        "C1-0": [0, 4, 8],
        "C1-1": [1, 5, 9],
        "C2-0": [2, 6],
        "C2-1": [3, 7],
    }


def test_seed000_roundrobin_prerequisite_applies_before_0_10_2_only():
    """The seed's 'same topics' prerequisite: enforced only with the pre-0.10.2 option."""
    subs = {
        "C1": Subscription(["T1", "T2"], num_streams=2),
        "C2": Subscription(["T1"], num_streams=2),
    }
    old = LegacyRoundRobinAssignor(require_identical_subscriptions=True)
    with pytest.raises(LegacyAssignmentError, match="same topics"):
        old.assign({"T1": 4, "T2": 2}, subs)
    result = LegacyRoundRobinAssignor().assign({"T1": 4, "T2": 2}, subs)
    assert result == {
        "C1-0": parts("T1-0 T2-0"),
        "C1-1": parts("T1-1 T2-1"),
        "C2-0": parts("T1-2"),
        "C2-1": parts("T1-3"),
    }


# --- seed 001 and kafka's own javadoc: RangeAssignor ------------------------------------------


def test_seed001_range_two_consumers_two_topics_three_partitions():
    subs = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    result = get_assignor("range").assign({"t0": 3, "t1": 3}, subs)
    assert result == {"C0": parts("t0p0 t0p1 t1p0 t1p1"), "C1": parts("t0p2 t1p2")}


# --- seed 003: RangeAssignor, RoundRobinAssignor ------------------------------------------------

TWO = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}


def test_seed003_range_two_topics_four_partitions():
    result = get_assignor("range").assign({"t0": 4, "t1": 4}, TWO)
    assert result == {"C0": parts("t0p0 t0p1 t1p0 t1p1"), "C1": parts("t0p2 t0p3 t1p2 t1p3")}


def test_seed003_range_two_topics_three_partitions_is_uneven():
    result = get_assignor("range").assign({"t0": 3, "t1": 3}, TWO)
    assert result == {"C0": parts("t0p0 t0p1 t1p0 t1p1"), "C1": parts("t0p2 t1p2")}


def test_seed003_roundrobin_two_topics_three_partitions():
    result = get_assignor("roundrobin").assign({"t0": 3, "t1": 3}, TWO)
    assert result == {"C0": parts("t0p0 t0p2 t1p1"), "C1": parts("t0p1 t1p0 t1p2")}


UNEQUAL = {
    "C0": Subscription(["t0"]),
    "C1": Subscription(["t0", "t1"]),
    "C2": Subscription(["t0", "t1", "t2"]),
}
UNEQUAL_COUNTS = {"t0": 1, "t1": 2, "t2": 3}


def test_seed003_roundrobin_unequal_subscriptions():
    result = get_assignor("roundrobin").assign(UNEQUAL_COUNTS, UNEQUAL)
    assert result == {"C0": parts("t0p0"), "C1": parts("t1p0"), "C2": parts("t1p1 t2p0 t2p1 t2p2")}


def test_seed003_roundrobin_unequal_after_c0_leaves():
    subs = {m: s for m, s in UNEQUAL.items() if m != "C0"}
    result = get_assignor("roundrobin").assign(UNEQUAL_COUNTS, subs)
    assert result == {"C1": parts("t0p0 t1p1"), "C2": parts("t1p0 t2p0 t2p1 t2p2")}


FOUR_TOPICS = {f"t{i}": 2 for i in range(4)}
THREE = {m: Subscription(list(FOUR_TOPICS)) for m in ("C0", "C1", "C2")}


def test_seed003_sticky_example_initial_table_is_the_roundrobin_result():
    result = get_assignor("roundrobin").assign(FOUR_TOPICS, THREE)
    assert result == {
        "C0": parts("t0p0 t1p1 t3p0"),
        "C1": parts("t0p1 t2p0 t3p1"),
        "C2": parts("t1p0 t2p1"),
    }


def test_seed003_roundrobin_after_c1_leaves():
    subs = {m: s for m, s in THREE.items() if m != "C1"}
    result = get_assignor("roundrobin").assign(FOUR_TOPICS, subs)
    assert result == {"C0": parts("t0p0 t1p0 t2p0 t3p0"), "C2": parts("t0p1 t1p1 t2p1 t3p1")}


# --- seed 004 ----------------------------------------------------------------------------------

CONSUMERS = {"Consumer0": Subscription(["T"]), "Consumer1": Subscription(["T"])}


def test_seed004_range_four_and_five_partitions():
    r = get_assignor("range")
    assert r.assign({"T": 4}, CONSUMERS) == {
        "Consumer0": parts("T-0 T-1"),
        "Consumer1": parts("T-2 T-3"),
    }
    assert r.assign({"T": 5}, CONSUMERS) == {
        "Consumer0": parts("T-0 T-1 T-2"),
        "Consumer1": parts("T-3 T-4"),
    }


def test_seed004_roundrobin_with_the_seeds_assumed_hash_order():
    result = LegacyRoundRobinAssignor().assign_in_order(parts("T-3 T-1 T-2 T-0"), CONSUMERS)
    assert result == {"Consumer0-0": parts("T-3 T-2"), "Consumer1-0": parts("T-1 T-0")}


@pytest.mark.parametrize(("fmt", "first"), [("[t,p]", 86586720), ("t-p", 82167)])
def test_seed004_real_orders(fmt, first):
    assignor = LegacyRoundRobinAssignor(string_format=fmt)
    hashes = [
        java_string_hashcode(assignor.partition_string(TopicPartition("T", p))) for p in range(4)
    ]
    assert hashes[0] == first and hashes == sorted(hashes)
    legacy = assignor.assign({"T": 4}, CONSUMERS)
    assert legacy == {"Consumer0-0": parts("T-0 T-2"), "Consumer1-0": parts("T-1 T-3")}
    # The new Java RoundRobinAssignor does not hash at all, and agrees here.
    modern = get_assignor("roundrobin").assign({"T": 4}, CONSUMERS)
    assert modern == {"Consumer0": parts("T-0 T-2"), "Consumer1": parts("T-1 T-3")}
