"""assignors.metrics on hand-made assignments where the right answer is known."""

from __future__ import annotations

from assignors import Subscription, TopicPartition, metrics


def tps(spec: str) -> list[TopicPartition]:
    return [TopicPartition.parse(s) for s in spec.split()]


SUBS = {"a": Subscription(["t"]), "b": Subscription(["t", "u"])}
COUNTS = {"t": 3, "u": 2}


def test_a_correct_assignment_is_valid_and_complete():
    report = metrics.validity(COUNTS, SUBS, {"a": tps("t-0 t-1"), "b": tps("t-2 u-0 u-1")})
    assert report.valid and report.complete and report.problems() == []


def test_each_kind_of_problem_is_reported():
    bad = {"a": tps("t-0 u-0 t-7"), "b": tps("t-0"), "ghost": []}
    report = metrics.validity(COUNTS, {**SUBS, "c": Subscription(["t"])}, bad)
    assert not report.valid and not report.complete
    assert report.missing_members == ("c",)
    assert report.unknown_members == ("ghost",)
    assert report.nonexistent == (("a", TopicPartition("t", 7)),)
    assert report.unsubscribed == (("a", TopicPartition("u", 0)),)
    assert report.duplicated == ((TopicPartition("t", 0), ("a", "b")),)
    assert report.unassigned == tuple(tps("t-1 t-2 u-1"))
    assert len(report.problems()) == 8


def test_incomplete_but_valid():
    report = metrics.validity(COUNTS, SUBS, {"a": tps("t-0"), "b": []})
    assert report.valid and not report.complete


def test_fully_balanced_counts_members_with_nothing():
    assert metrics.is_fully_balanced({"a": tps("t-0"), "b": []})
    assert not metrics.is_fully_balanced({"a": tps("t-0 t-1"), "b": []})
    assert metrics.is_fully_balanced({})


def test_pairwise_rule_only_cares_about_shared_topics():
    # a has 3 of t, b has 1 of u: counts differ by 2 but no topic in common -> accepted.
    assert metrics.is_pairwise_balanced({"a": tps("t-0 t-1 t-2"), "b": tps("u-0")})
    # 3 vs 1 again, now both hold t partitions: one could have moved, so the pair fails.
    assert not metrics.is_pairwise_balanced({"a": tps("t-0 t-1 u-1"), "b": tps("t-2")})


def test_pairwise_balance_violations_lists_pairs():
    assignment = {"a": tps("t-0 t-1 t-2"), "b": [], "c": tps("t-3")}
    # (a, b) passes although 3 vs 0: b holds no topic at all. (a, c) share t with 3 vs 1.
    assert metrics.pairwise_balance_violations(assignment) == [("a", "c")]
    assignment = {"a": tps("t-0 t-1 t-2"), "b": tps("t-3"), "c": tps("t-4 t-5")}
    assert metrics.pairwise_balance_violations(assignment) == [("a", "b")]


def test_is_balanced_uses_subscriptions():
    subs = {"a": Subscription(["t"]), "b": Subscription(["u"])}
    # b cannot take t partitions, so 3 vs 0 is as balanced as it gets.
    assert metrics.is_balanced(subs, {"a": tps("t-0 t-1 t-2"), "b": []})
    subs = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    assert not metrics.is_balanced(subs, {"a": tps("t-0 t-1 t-2"), "b": []})
    assert metrics.is_balanced(subs, {"a": tps("t-0 t-1"), "b": tps("t-2")})


def test_per_topic_skew():
    subs = {"a": Subscription(["t", "u"]), "b": Subscription(["t", "u"]), "c": Subscription(["u"])}
    assignment = {"a": tps("t-0 t-1 t-2 u-0"), "b": tps("u-1"), "c": []}
    assert metrics.per_topic_skew(subs, assignment) == {"t": 3, "u": 1}


def test_moves_and_swaps():
    before = {"a": tps("t-0 t-1 u-0"), "b": tps("t-2 t-3"), "c": tps("u-1")}
    after = {"a": tps("t-0 t-2 u-0"), "b": tps("t-1 t-3"), "c": []}
    assert metrics.moved_partitions(before, after) == {
        TopicPartition("t", 1): ("a", "b"),
        TopicPartition("t", 2): ("b", "a"),
        TopicPartition("u", 1): ("c", None),
    }
    assert metrics.partitions_moved(before, after) == 3
    assert metrics.swap_moves(before, after) == {"t": [("a", "b")]}
    assert not metrics.no_swap_moves(before, after)
    assert metrics.no_swap_moves(before, before) and metrics.partitions_moved(before, before) == 0


def test_counts_and_owners():
    assignment = {"a": tps("t-0 t-1"), "b": []}
    assert metrics.counts(assignment) == {"a": 2, "b": 0}
    assert metrics.owners(assignment) == {TopicPartition("t", 0): "a", TopicPartition("t", 1): "a"}
