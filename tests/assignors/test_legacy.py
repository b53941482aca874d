"""The ZooKeeper-era assignors: thread naming and order, hash order per era, skipping, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import Subscription, TopicPartition, get_assignor, metrics
from assignors.common import AssignmentInputError
from assignors.legacy import (
    LegacyRangeAssignor,
    LegacyRoundRobinAssignor,
    thread_ids,
    threads_by_member,
)
from coordinator.java import java_string_hashcode


def test_threads_sort_as_strings_so_c1_10_precedes_c1_2():
    subs = {"C1": Subscription(["t"], num_streams=12)}
    result = LegacyRangeAssignor().assign({"t": 12}, subs)
    order = list(result)
    assert order[:4] == ["C1-0", "C1-1", "C1-10", "C1-11"]
    assert order[4] == "C1-2"
    # Ranges follow that order: thread C1-10 gets partition 2, C1-2 gets partition 4.
    assert result["C1-10"] == [TopicPartition("t", 2)]
    assert result["C1-2"] == [TopicPartition("t", 4)]


def test_thread_string_order_puts_plus_before_dash():
    subs = {"C1": Subscription(["t"]), "C1+": Subscription(["t"])}
    result = LegacyRangeAssignor().assign({"t": 2}, subs)
    assert result == {"C1+-0": [TopicPartition("t", 0)], "C1-0": [TopicPartition("t", 1)]}


def test_every_thread_gets_an_entry():
    subs = {"a": Subscription(["t"], num_streams=3), "b": Subscription(["ghost"], num_streams=2)}
    for assignor in (LegacyRangeAssignor(), LegacyRoundRobinAssignor()):
        result = assignor.assign({"t": 2}, subs)
        assert set(result) == {"a-0", "a-1", "a-2", "b-0", "b-1"}
        assert result["b-0"] == [] and result["b-1"] == []


def test_threads_by_member_folds_threads_in_numeric_order():
    subs = {"C1": Subscription(["t"], num_streams=11)}
    result = LegacyRangeAssignor().assign({"t": 11}, subs)
    # String order C1-0, C1-1, C1-10, C1-2, ... took partitions 0, 1, 2, 3, ...; numeric folding
    # therefore lists C1-10's partition 2 last.
    expected = [0, 1, *range(3, 11), 2]
    assert threads_by_member(result, subs) == {"C1": [TopicPartition("t", p) for p in expected]}
    assert thread_ids("C1", 3) == ["C1-0", "C1-1", "C1-2"]


def test_hash_overflow_orders_two_digit_partitions_first_in_1_0():
    """'test-10'/'test-11' overflow below 'test-0'..'test-9' (the 1.0/1.1 string format)."""
    assignor = LegacyRoundRobinAssignor(string_format="t-p")
    ordered = assignor.hash_order([TopicPartition("test", p) for p in range(12)])
    assert [tp.partition for tp in ordered] == [10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert java_string_hashcode("test-10") < java_string_hashcode("test-0")


def test_bracket_format_wraps_foo_below_bar():
    """In the '[t,p]' era, '[foo,*]' wraps to about -2.11e9 while '[bar,*]' stays near +2.06e9."""
    assert java_string_hashcode("[foo,0]") < -2_000_000_000
    assert java_string_hashcode("[bar,0]") > 2_000_000_000
    subs = {"a": Subscription(["bar", "foo"], num_streams=2)}
    result = LegacyRoundRobinAssignor(string_format="[t,p]").assign({"bar": 1, "foo": 1}, subs)
    assert result == {"a-0": [TopicPartition("foo", 0)], "a-1": [TopicPartition("bar", 0)]}
    result = LegacyRoundRobinAssignor(string_format="t-p").assign({"bar": 1, "foo": 1}, subs)
    assert result == {"a-0": [TopicPartition("bar", 0)], "a-1": [TopicPartition("foo", 0)]}


def test_roundrobin_skips_threads_of_non_subscribers():
    subs = {"a": Subscription(["x"], num_streams=1), "b": Subscription(["x", "y"], num_streams=1)}
    result = LegacyRoundRobinAssignor().assign({"x": 2, "y": 2}, subs)
    assert result["a-0"] and all(tp.topic == "x" for tp in result["a-0"])
    assert {tp for tp in result["b-0"] if tp.topic == "y"} == {
        TopicPartition("y", 0),
        TopicPartition("y", 1),
    }


def test_bad_inputs_get_clear_errors():
    with pytest.raises(AssignmentInputError, match="num_streams"):
        LegacyRangeAssignor().assign({"t": 1}, {"a": Subscription(["t"], num_streams=0)})
    with pytest.raises(ValueError, match="string_format"):
        LegacyRoundRobinAssignor(string_format="{t}:{p}")
    with pytest.raises(AssignmentInputError, match="nobody subscribes"):
        LegacyRoundRobinAssignor().assign_in_order(
            [TopicPartition("z", 0)], {"a": Subscription(["t"])}
        )


def test_registry_names_and_options():
    assert isinstance(get_assignor("legacy-range"), LegacyRangeAssignor)
    rr = get_assignor("legacy-roundrobin", string_format="t-p")
    assert isinstance(rr, LegacyRoundRobinAssignor) and rr.string_format == "t-p"
    assert isinstance(get_assignor("kafka.consumer.RoundRobinAssignor"), LegacyRoundRobinAssignor)


@st.composite
def thread_groups(draw):
    topics = ["a", "bb", "c1"]
    counts = {t: draw(st.integers(0, 9)) for t in topics}
    members = draw(
        st.lists(st.sampled_from(["C1", "C2", "C10", "x"]), min_size=1, max_size=4, unique=True)
    )
    subs = {
        m: Subscription(
            draw(st.lists(st.sampled_from(topics), min_size=1, max_size=3, unique=True)),
            num_streams=draw(st.integers(1, 11)),
        )
        for m in members
    }
    return counts, subs


@settings(max_examples=40, deadline=None, derandomize=True)
@given(thread_groups(), st.sampled_from(["[t,p]", "t-p"]))
def test_legacy_assignments_are_valid_and_complete_per_member(group, fmt):
    counts, subs = group
    for assignor in (LegacyRangeAssignor(), LegacyRoundRobinAssignor(string_format=fmt)):
        per_member = threads_by_member(assignor.assign(counts, subs), subs)
        report = metrics.validity(counts, subs, per_member)
        assert report.complete, report.problems()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(thread_groups())
def test_legacy_range_equals_new_range_with_one_stream_each(group):
    """With one thread per member, legacy range is the new range whenever thread order equals
    member order (no member id is a prefix-plus-dash of another here)."""
    counts, subs = group
    one = {m: Subscription(s.topics) for m, s in subs.items()}
    legacy = threads_by_member(LegacyRangeAssignor().assign(counts, one), one)
    modern = get_assignor("range").assign(counts, one)
    assert {m: set(p) for m, p in legacy.items()} == {m: set(p) for m, p in modern.items()}
