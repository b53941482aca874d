"""The sticky assignors' two fast paths give exactly what the general code gives.

* ``PartitionIndex.partition_lists`` turns a member's pids that step evenly forwards through
  the index into one strided slice of the index's partition list, and members holding equally
  many partitions into the rows of one table; any other member's pids are looked up one by one. Both must give the same partitions in the same order as a plain lookup.
* ``build_constrained`` deals a fresh group (nothing owned, no racks) as a table
  (``_deal_fresh``) instead of running Kafka's steps; the result, transfer map included, must be
  the steps' result, and groups with ownership or racks must still take the steps.
"""

from __future__ import annotations

import random
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignors import sticky_common_constrained, sticky_common_index
from assignors.api import Subscription
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_common_index import PartitionIndex, arithmetic_runs
from assignors.sticky_user_data import encode_sticky_user_data
from tests.assignors.sticky_reference import ReferenceSticky, cooperative_claims, sticky_claims

INDEX = PartitionIndex((("a", 7), ("b", 1), ("c", 12), ("d", 5)))  # 25 partitions


def _plain(index: PartitionIndex, flat: np.ndarray, sizes: list[int]) -> list[list[object]]:
    parts = index.flat[flat].tolist()
    out, at = [], 0
    for size in sizes:
        out.append(parts[at : at + size])
        at += size
    return out


def _is_progression(pids: list[int]) -> bool:
    if len(pids) < 2:
        return True
    step = pids[1] - pids[0]
    return step >= 1 and all(b - a == step for a, b in pairwise(pids))


@st.composite
def member_pids(draw: st.DrawFn) -> list[int]:
    """One member's pids: an even forward progression, or any distinct pids."""
    n = INDEX.n
    if draw(st.booleans()):
        first = draw(st.integers(0, n - 1))
        step = draw(st.integers(1, n))
        size = draw(st.integers(0, (n - 1 - first) // step + 1))
        return list(range(first, first + step * size, step))[:size]
    return draw(st.lists(st.integers(0, n - 1), max_size=8, unique=True))


@pytest.fixture
def strided_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Look for strided slices however small the result (normally from 50,000 partitions)."""
    monkeypatch.setattr(sticky_common_index, "_STRIDED_MIN", 0)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(member_pids(), max_size=8))
@pytest.mark.usefixtures("strided_always")
def test_partition_lists_equal_plain_lookup(members: list[list[int]]) -> None:
    sizes = [len(p) for p in members]
    flat = np.array([p for ps in members for p in ps], dtype=np.int64)
    size_arr = np.array(sizes, dtype=np.int64)
    got = INDEX.partition_lists(flat, size_arr)
    assert got == _plain(INDEX, flat, sizes)
    assert all(type(x) is list for x in got)
    first, step = arithmetic_runs(flat, size_arr)
    # the strided slice is used exactly for the members whose pids are a forward progression
    assert [s > 0 for s in step.tolist()] == [_is_progression(p) for p in members]
    for ps, f, s in zip(members, first.tolist(), step.tolist(), strict=True):
        if s and ps:
            assert ps == list(range(f, f + s * len(ps), s))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(member_pids(), max_size=8))
def test_partition_lists_from_runs_equal_plain_lookup(members: list[list[int]]) -> None:
    """A small result whose runs the builder knows (a fresh deal) is cut into strided slices
    without the lookup: the same lists, each a list of its own."""
    sizes = [len(p) for p in members]
    flat = np.array([p for ps in members for p in ps], dtype=np.int64)
    size_arr = np.array(sizes, dtype=np.int64)
    first, step = arithmetic_runs(flat, size_arr)
    step[size_arr == 0] = 7  # an empty member's run says nothing: any step, still empty
    got = INDEX.partition_lists(flat, size_arr, (first, step))
    plain = _plain(INDEX, flat, sizes)
    assert got == plain
    assert all(type(x) is list for x in got)
    assert len({id(x) for x in got}) == len(got)
    # in a given member order (the caller's), by the runs or by the lookup
    order = np.arange(len(members), dtype=np.int64)[::-1].copy()
    assert INDEX.partition_lists(flat, size_arr, (first, step), order) == plain[::-1]
    assert INDEX.partition_lists(flat, size_arr, None, order) == plain[::-1]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(1, 6), st.integers(1, 4), st.randoms(use_true_random=False))
def test_equal_sized_lists_are_cut_as_one_table(m: int, k: int, rnd) -> None:
    """Every member holding ``k`` partitions (any ids, any caller order): the rows of one table,
    the same lists as the plain lookup, each a list of its own."""
    flat = np.array(rnd.sample(range(INDEX.n), m * k), dtype=np.int64)
    sizes = np.full(m, k, dtype=np.int64)
    order = np.array(rnd.sample(range(m), m), dtype=np.int64)
    plain = _plain(INDEX, flat, sizes.tolist())
    got = INDEX.partition_lists(flat, sizes, None, order)
    assert got == [plain[i] for i in order.tolist()]
    assert all(type(x) is list for x in got)
    assert len({id(x) for x in got}) == m
    assert INDEX.partition_lists(flat, sizes) == plain


@pytest.mark.parametrize(
    ("members", "regular"),
    [
        ([[0, 3, 6, 9], [1, 2, 3], [4]], [True, True, True]),
        ([[0, 3, 7], [], [9, 5, 1]], [False, True, False]),  # uneven; descending
        ([[2, 4, 6, 9, 11]], [False]),  # breaks only at the end
        ([[5, 6, 8, 10]], [False]),  # breaks only at the start
        ([[1, 3], [5, 7, 9], [10, 11, 12]], [True, True, True]),  # member boundaries ignored
    ],
)
def test_irregular_members_take_the_lookup(
    monkeypatch: pytest.MonkeyPatch, members: list[list[int]], regular: list[bool]
) -> None:
    flat = np.array([p for ps in members for p in ps], dtype=np.int64)
    sizes = np.array([len(p) for p in members], dtype=np.int64)
    _, step = arithmetic_runs(flat, sizes)
    assert [s > 0 for s in step.tolist()] == regular
    expected = _plain(INDEX, flat, sizes.tolist())
    index = PartitionIndex(tuple(zip(INDEX.topics, INDEX.count_list, strict=True)))
    assert index.partition_lists(flat, sizes) == expected
    assert index._flat_list is None  # a small result: one lookup, no strided slices
    monkeypatch.setattr(sticky_common_index, "_STRIDED_MIN", 0)
    assert index.partition_lists(flat, sizes) == expected
    assert index._flat_list is not None


def test_large_fresh_group_uses_strided_slices() -> None:
    """120,000 partitions in a fresh group: every member's list is a strided slice, and the
    result is the plain lookup's."""
    counts = {f"t{i:02d}": 1000 for i in range(120)}
    subs = {f"c{i:03d}": Subscription(list(counts)) for i in range(300)}
    assignor = StickyAssignor()
    ctx, result = assignor._assign_ids(counts, subs)
    assert ctx is not None
    _, step = arithmetic_runs(result.flat, result.sizes)
    assert step.tolist() == [300] * 300
    got = assignor.assign(counts, subs)
    assert ctx.index._flat_list is not None  # the slices came from the cached partition list
    plain = _plain(ctx.index, result.flat, result.sizes.tolist())
    assert got == dict(zip(ctx.members, plain, strict=True))
    assert got["c001"][:2] == [("t00", 1), ("t00", 301)]


# -- the fresh constrained deal ----------------------------------------------------------------

#: (partition counts, member count): even and uneven quotas, more members than partitions,
#: no partitions at all
SHAPES = [
    ({"t0": 6, "t1": 6}, 4),
    ({"t0": 7, "t1": 3, "t2": 5}, 4),
    ({"t0": 2}, 5),
    ({"a": 3, "b": 0, "c": 9}, 1),
    ({"t0": 0}, 3),
    ({f"t{i:02d}": 13 for i in range(11)}, 17),
]


def _member_ids(n: int, seed: int) -> list[str]:
    """Ids whose insertion, Java HashMap and sorted orders all differ (one needs UTF-16 order)."""
    rnd = random.Random(seed)
    ids = [f"consumer-{rnd.randrange(10**6)}-{i}" for i in range(n)]
    if n > 2:
        ids[1] = "consumer-\U0001f600"  # sorts differently in UTF-16 than by code point
        ids[2] = "consumer-\uff61"
    return ids


def _both(
    monkeypatch: pytest.MonkeyPatch, make, counts: dict[str, int], subs: dict[str, Subscription]
):
    """(assignment, transfers) with the fast deal, then with Kafka's steps."""
    fast = make()
    got = fast.assign(counts, subs)
    with monkeypatch.context() as m:
        m.setattr(sticky_common_constrained, "_is_fresh", lambda *_: False)
        slow = make()
        expected = slow.assign(counts, subs)
    return (got, fast.partitions_transferring_ownership), (
        expected,
        slow.partitions_transferring_ownership,
    )


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = sticky_common_constrained._deal_fresh
    monkeypatch.setattr(
        sticky_common_constrained, "_deal_fresh", lambda *a: calls.append(1) or real(*a)
    )
    return calls


@pytest.mark.parametrize("make", [StickyAssignor, CooperativeStickyAssignor])
@pytest.mark.parametrize(("counts", "n_members"), SHAPES)
@pytest.mark.parametrize(("seed", "strided"), [(1, True), (2, False)])
def test_fresh_deal_equals_kafkas_steps(
    monkeypatch: pytest.MonkeyPatch,
    make,
    counts: dict[str, int],
    n_members: int,
    seed: int,
    strided: bool,
) -> None:
    """Same lists and transfers as Kafka's steps, with the result made by strided slices from
    the deal's own ``runs`` (``strided``) or by the lookup of small results."""
    if strided:
        monkeypatch.setattr(sticky_common_index, "_STRIDED_MIN", 0)
    topics = [*counts, "ghost"]  # a topic that does not exist counts for uniformity only
    subs = {m: Subscription(topics) for m in _member_ids(n_members, seed)}
    ctx, built = make()._assign_ids(counts, subs)
    assert ctx is not None and built.runs is not None
    first, step = arithmetic_runs(built.flat, built.sizes)
    held = built.sizes > 0
    assert np.array_equal(built.runs[0][held], first[held])
    assert np.array_equal(built.runs[1][built.sizes > 1], step[built.sizes > 1])
    calls = _spy(monkeypatch)
    fast, slow = _both(monkeypatch, make, counts, subs)
    assert calls == [1]  # the fast deal ran (and only for the first assignment)
    assert fast == slow
    assert list(fast[0]) == list(subs)
    claims = sticky_claims if make is StickyAssignor else cooperative_claims
    assert fast[0] == ReferenceSticky(claims).assign(counts, subs)


def test_ownership_takes_kafkas_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"t0": 7, "t1": 5}
    first = StickyAssignor().assign(counts, {f"c{i}": Subscription(["t0", "t1"]) for i in range(3)})
    calls = _spy(monkeypatch)
    subs = {
        m: Subscription(["t0", "t1"], encode_sticky_user_data(first[m], 1), generation_id=1)
        for m in first
    }
    subs["c3"] = Subscription(["t0", "t1"])
    got = StickyAssignor().assign(counts, subs)
    assert calls == []
    assert got == ReferenceSticky(sticky_claims).assign(counts, subs)
    assert got["c3"]  # the newcomer was dealt partitions trimmed from the owners


def test_racks_take_kafkas_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Members with racks (none on the partitions, so not rack-aware): Kafka still orders the
    unassigned partitions by how many members share their racks, so the steps run."""
    calls = _spy(monkeypatch)
    subs = {f"c{i}": Subscription(["t0"], rack_id=f"r{i % 2}") for i in range(3)}
    got = StickyAssignor().assign({"t0": 7}, subs)
    assert calls == []
    assert got == ReferenceSticky(sticky_claims).assign({"t0": 7}, subs)
