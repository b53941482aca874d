"""Hypothesis properties of range and roundrobin: exact agreement with a literal port of Kafka's
loops, validity and completeness, and the balance Kafka promises for each."""

from __future__ import annotations

from hypothesis import given, settings

from assignors import metrics
from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor
from coordinator.java import java_hashmap_order
from tests.assignors.literal_ports import literal_range, literal_roundrobin
from tests.assignors.strategies import groups

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


@SETTINGS
@given(groups())
def test_range_equals_literal_port_list_order_included(group):
    counts, subs = group
    assignor = RangeAssignor(topic_order="sorted")
    assert assignor.assign(counts, subs) == literal_range(counts, subs, sorted(counts))
    # Kafka's topic loop order, spelled out: members in HashMap order, their topics into a HashSet,
    # the existing ones into the HashMap partitionsPerTopic.
    members = java_hashmap_order(list(subs))
    topic_set = java_hashmap_order([t for m in members for t in subs[m].topics])
    order = java_hashmap_order([t for t in topic_set if counts.get(t, 0) > 0])
    assert RangeAssignor().assign(counts, subs) == literal_range(counts, subs, order)


@SETTINGS
@given(groups())
def test_roundrobin_equals_literal_port_list_order_included(group):
    counts, subs = group
    assert RoundRobinAssignor().assign(counts, subs) == literal_roundrobin(counts, subs)


@SETTINGS
@given(groups())
def test_range_and_roundrobin_are_valid_and_complete(group):
    counts, subs = group
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        report = metrics.validity(counts, subs, assignor.assign(counts, subs))
        assert report.complete, report.problems()


@SETTINGS
@given(groups())
def test_range_is_balanced_per_topic(group):
    """Range promises per-topic balance: each topic's subscribers differ by at most one."""
    counts, subs = group
    result = RangeAssignor().assign(counts, subs)
    existing = {t: n for t, n in counts.items() if n > 0}
    skew = metrics.per_topic_skew(subs, result)
    assert all(skew[t] <= 1 for t in skew if t in existing)


@SETTINGS
@given(groups(uniform=True))
def test_roundrobin_is_fully_balanced_with_identical_subscriptions(group):
    counts, subs = group
    assert metrics.is_fully_balanced(RoundRobinAssignor().assign(counts, subs))


@SETTINGS
@given(groups())
def test_input_order_does_not_change_the_sets(group):
    counts, subs = group
    reversed_subs = dict(reversed(list(subs.items())))
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        a = assignor.assign(counts, subs)
        b = assignor.assign(counts, reversed_subs)
        assert {m: set(p) for m, p in a.items()} == {m: set(p) for m, p in b.items()}
