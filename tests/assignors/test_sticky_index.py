"""Owned partitions -> partition ids: the identity and dict-lookup paths equal the transposing path.

``PartitionIndex.pids_of_many`` finds the index's own partition objects by identity, looks other
owned partitions up in a ``TopicPartition -> id`` dict when the index is small, and falls back to
transposing the tuples (``pids``' way) when something is not a partition of the index. All must
give the same ids in the same order, drop the same items and reject the same malformed input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import sticky_common_index
from assignors.api import TopicPartition
from assignors.sticky_common_index import PartitionIndex

COUNTS = (("a", 3), ("b", 1), ("c", 5))

#: partitions of the index, ones outside it (unknown topic, number out of range) and other
#: shapes the transposing path accepts or rejects
ITEMS = st.one_of(
    st.builds(TopicPartition, st.sampled_from(["a", "b", "c"]), st.integers(0, 4)),
    st.builds(TopicPartition, st.sampled_from(["a", "ghost"]), st.integers(-2, 7)),
    st.tuples(st.just("c"), st.sampled_from([2, True, 2.0, np.int64(1)])),
    st.sampled_from([("a", 1, 2), "a-1", ["a", 1]]),
)


def _by_transposing(index: PartitionIndex, lists: list[list[Any]]) -> object:
    try:
        return [list(index.pids(x)) for x in lists]
    except (TypeError, ValueError) as exc:
        return type(exc)


def _by_many(index: PartitionIndex, lists: list[list[Any]]) -> object:
    try:
        return [list(a) for a in index.pids_of_many(lists)]
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.lists(ITEMS, max_size=4), min_size=1, max_size=6))
def test_lookup_path_equals_transposing_path(lists: list[list[Any]]) -> None:
    index = PartitionIndex(COUNTS)
    assert _by_many(index, lists) == _by_transposing(index, lists)


def test_lookup_path_runs_and_the_limit_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = [[TopicPartition("c", 4), TopicPartition("a", 0)], [], [TopicPartition("b", 0)]]
    index = PartitionIndex(COUNTS)
    assert [list(a) for a in index.pids_of_many(lists)] == [[8, 0], [], [3]]
    assert index._pid_of is not None  # the dict path answered
    monkeypatch.setattr(sticky_common_index, "_LOOKUP_LIMIT", 0)
    index = PartitionIndex(COUNTS)
    assert [list(a) for a in index.pids_of_many(lists)] == [[8, 0], [], [3]]
    assert index._pid_of is None


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    st.lists(st.lists(st.tuples(st.integers(0, 8), st.booleans()), max_size=4), max_size=6),
)
def test_identity_path_equals_transposing_path(lists: list[list[tuple[int, bool]]]) -> None:
    """Owned partitions that are the index's own objects (what an earlier call handed out) are
    found by identity; equal copies, alone or mixed in, take the other paths: the same ids."""
    index = PartitionIndex(COUNTS)
    ours = index.flat_list
    items = [[ours[p] if own else TopicPartition(*ours[p]) for p, own in x] for x in lists]
    assert _by_many(index, items) == _by_transposing(index, items)
    flat = [it for x in lists for it in x]
    answered = index._by_identity is not None and index._pid_of is None
    assert answered == (bool(flat) and all(own for _, own in flat))


def test_identity_path_answers_the_index_own_partitions() -> None:
    index = PartitionIndex(COUNTS)
    ours = index.flat_list
    lists = [[ours[8], ours[0]], [], [ours[3], ours[4]]]
    assert [list(a) for a in index.pids_of_many(lists)] == [[8, 0], [], [3, 4]]
    assert index._pid_of is None  # no dict needed
    copies = [[TopicPartition(*tp) for tp in x] for x in lists]
    assert [list(a) for a in index.pids_of_many(copies)] == [[8, 0], [], [3, 4]]
    assert index._pid_of is not None  # the copies were looked up by value


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(1, 7), min_size=1, max_size=4),
    st.integers(1, 12),
    st.randoms(use_true_random=False),
    st.sampled_from(["deal", "short", "shifted"]),
)
def test_a_whole_deal_is_cut_as_one_table(counts: list[int], m: int, rnd: Any, kind: str) -> None:
    """A fresh group's round robin (member ``j`` of ``M`` gets ``j, j + M, ...``, all partitions
    dealt) is cut as one table (``_dealt_lists``); the lists, in any caller order, are the ones
    cut member by member. Progressions that are not a whole deal (a member short of its share,
    or shifted ones) take the slices."""
    index = PartitionIndex(tuple((f"t{i}", c) for i, c in enumerate(counts)))
    n = index.n
    first = np.arange(m, dtype=np.int64)
    sizes = (n // m + (first < n % m)).astype(np.int64)
    if kind == "short":
        sizes[int(np.argmax(sizes))] -= 1
    if kind == "shifted":
        first = first + 1
    runs = (first, np.full(m, m, dtype=np.int64))
    order = np.array(rnd.sample(range(m), m), dtype=np.int64)
    dealt = index._dealt_lists(first[order], runs[1][order], sizes[order])
    assert (dealt is not None) == (kind == "deal")
    if kind == "shifted":
        return  # ids beyond the index: only the table check above applies
    stop = first + sizes * m
    flat = np.concatenate(
        [np.arange(f, s, m, dtype=np.int64) for f, s in zip(first, stop, strict=True)]
    )
    expected = [index.flat[np.arange(f, s, m)].tolist() for f, s in zip(first, stop, strict=True)]
    got = index.partition_lists(flat, sizes, runs, order)
    assert got == [expected[i] for i in order.tolist()]
