"""Integer ids for the partitions of one ``assign`` call: the sticky assignors' working representation.

Every partition of the subscribed, existing topics gets an id ("pid") in Kafka's sorted order:
topics in Java ``String`` order, partitions ascending. The builders work on numpy arrays and Python
lists of these ints (cheap to hash, compare and copy) and only turn them back into the shared
:class:`~assignors.api.TopicPartition` tuples (via ``partitions_of``) for the result
(:meth:`PartitionIndex.partition_lists`: strided slices where the ids step evenly). For a
1,000,000-partition group this avoids building, hashing and sorting a million tuples per call.

The index for a given set of topics and counts is cached (two entries): it is pure metadata, like
Kafka's ``Cluster`` object, and a coordinator calls ``assign`` again and again on the same topics.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any

import numpy as np

from assignors.api import TopicPartition, partitions_of
from coordinator.java import java_sorted

_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.flags.writeable = False

#: up to this many partitions, an index keeps a TopicPartition -> pid dict for owned lists
_LOOKUP_LIMIT = 200_000

#: from this many assigned partitions on, ``partition_lists`` looks for strided slices (below,
#: its numpy passes cost more than the one lookup they could save)
_STRIDED_MIN = 50_000


class PartitionIndex:
    """Topics (Java-sorted), their partition counts and offsets, and pid <-> TopicPartition."""

    def __init__(self, counts: tuple[tuple[str, int], ...]) -> None:
        self.topics: list[str] = [t for t, _ in counts]
        self.topic_pos: dict[str, int] = {t: i for i, t in enumerate(self.topics)}
        # user data names topics in UTF-8; a name with a lone surrogate gets bytes no user data
        # holds (Java writes its surrogate as "?", which decodes to another name)
        self.topic_pos_bytes: dict[bytes, int] = {
            t.encode("utf-8", "surrogatepass"): i for i, t in enumerate(self.topics)
        }
        self.counts = np.array([c for _, c in counts], dtype=np.int64)
        self.offsets = np.zeros(len(self.topics) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=self.offsets[1:])
        self.count_list: list[int] = self.counts.tolist()
        self.offset_list: list[int] = self.offsets.tolist()
        self.n = int(self.offsets[-1])
        self._flat: np.ndarray | None = None
        self._topic_of: np.ndarray | None = None
        self._names_by_length: dict[int, tuple[np.ndarray, np.ndarray] | None] = {}
        self._part_of: np.ndarray | None = None
        self._partition_topic_key: np.ndarray | None = None
        self._pid_of: dict[TopicPartition, int] | None = None
        self._by_identity: tuple[np.ndarray, np.ndarray] | None = None
        self._flat_list: list[TopicPartition] | None = None

    @property
    def flat(self) -> np.ndarray:
        """Object array: pid -> the shared TopicPartition tuple."""
        if self._flat is None:
            chain = itertools.chain.from_iterable(
                partitions_of(t, int(c)) for t, c in zip(self.topics, self.counts, strict=True)
            )
            self._flat = np.fromiter(chain, dtype=object, count=self.n)
        return self._flat

    @property
    def flat_list(self) -> list[TopicPartition]:
        """:attr:`flat` as a list, for strided slicing (a C-level loop per member's list)."""
        if self._flat_list is None:
            self._flat_list = self.flat.tolist()
        return self._flat_list

    def names_of_length(self, length: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Topic names of ``length`` UTF-8 bytes as a sorted ``S`` array, with their positions.

        ``None`` if there are none, or if a name contains a NUL byte (numpy's ``S`` type would
        strip it, so such names take the general path).
        """
        cache = self._names_by_length
        if length not in cache:
            names = [(t.encode("utf-8", "surrogatepass"), i) for i, t in enumerate(self.topics)]
            chosen = sorted((b, i) for b, i in names if len(b) == length)
            if not chosen or any(b"\x00" in b for b, _ in chosen):
                cache[length] = None
            else:
                cache[length] = (
                    np.array([b for b, _ in chosen], dtype=f"S{length}"),
                    np.array([i for _, i in chosen], dtype=np.int64),
                )
        return cache[length]

    @property
    def topic_of(self) -> np.ndarray:
        """pid -> topic position (int64)."""
        if self._topic_of is None:
            self._topic_of = np.repeat(np.arange(len(self.topics), dtype=np.int64), self.counts)
        return self._topic_of

    @property
    def part_of(self) -> np.ndarray:
        """pid -> partition number (int64)."""
        if self._part_of is None:
            self._part_of = np.arange(self.n, dtype=np.int64) - self.offsets[self.topic_of]
        return self._part_of

    @property
    def partition_topic_key(self) -> np.ndarray:
        """pid -> its rank in (partition, topic position) order: the order of the constrained
        builder's owned lists (KAFKA-16277)."""
        if self._partition_topic_key is None:
            self._partition_topic_key = self.part_of * max(1, len(self.topics)) + self.topic_of
        return self._partition_topic_key

    def pids(self, partitions: Sequence[TopicPartition]) -> np.ndarray:
        """Ids of ``partitions``, in order, dropping any outside the index (vanished topics,
        partition numbers beyond the topic's count).

        Transposing the tuples (``zip``) and looking topics up in the small per-topic dict is
        several times faster than hashing a million partition tuples into a million-entry dict.
        """
        if not partitions or not self.topics:
            return _EMPTY
        topics, numbers = zip(*partitions, strict=True)
        n = len(topics)
        pos = np.fromiter(map(self.topic_pos.get, topics, repeat(-1)), dtype=np.int64, count=n)
        part = np.fromiter(numbers, dtype=np.int64, count=n)
        known = pos >= 0
        safe = np.where(known, pos, 0)
        ok = known & (part >= 0) & (part < self.counts[safe])
        pids = self.offsets[safe] + part
        return pids if ok.all() else pids[ok]

    def pids_of_many(self, lists: Sequence[Sequence[TopicPartition]]) -> list[np.ndarray]:
        """:meth:`pids` of every list, converted in one pass over all of them."""
        batch = self.pids_flat(lists)
        if batch is None:  # long lists: numpy's per-call cost is amortised
            return [self.pids(x) for x in lists]
        return cut_by_sizes(*batch)

    def pids_flat(
        self, lists: Sequence[Sequence[TopicPartition]]
    ) -> tuple[np.ndarray, list[int]] | None:
        """:meth:`pids_of_many`'s ids concatenated, and each list's count of them (items
        outside the index dropped), without an array per list; ``None`` for long lists (64 and
        more items per list on average), which :meth:`pids` converts one by one."""
        sizes = list(map(len, lists))
        total = sum(sizes)
        if not total or not self.topics:
            return _EMPTY, [0] * len(lists)
        if total >= 64 * len(lists):
            return None
        if self.n <= _LOOKUP_LIMIT:
            found = self._pids_by_identity(lists, total)
            if found is None:
                found = self._pids_by_lookup(lists, total)
            if found is not None:
                return found, sizes
        topics, numbers = zip(*itertools.chain.from_iterable(lists), strict=True)
        pos = np.fromiter(map(self.topic_pos.get, topics, repeat(-1)), dtype=np.int64, count=total)
        part = np.fromiter(numbers, dtype=np.int64, count=total)
        known = pos >= 0
        safe = np.where(known, pos, 0)
        ok = known & (part >= 0) & (part < self.counts[safe])
        pids = self.offsets[safe] + part
        if not ok.all():
            owner = np.repeat(np.arange(len(lists), dtype=np.int64), sizes)
            pids = pids[ok]
            sizes = np.bincount(owner[ok], minlength=len(lists)).tolist()
        return pids, sizes

    def _pids_by_identity(
        self, lists: Sequence[Sequence[TopicPartition]], total: int
    ) -> np.ndarray | None:
        """:meth:`pids_flat` when every item is one of this index's own partition objects
        (:attr:`flat`): a member owns what an earlier call in this process handed out, the
        shared tuples of ``partitions_of``. Such an item is found by its ``id``: the index
        keeps its objects alive, so an item with one of their ids is that very object, and a
        sorted array of the ids answers all items in one ``searchsorted``, where hashing a
        ``(topic, partition)`` tuple per item costs several times more. ``None`` when some item
        is another object (equal or not): :meth:`_pids_by_lookup` decides."""
        if self._by_identity is None:
            # CPython's ids are addresses, below 2**63; any other id fails the check below
            ids = np.array(list(map(id, self.flat_list)), dtype=np.uint64).view(np.int64)
            order = np.argsort(ids)
            self._by_identity = (ids[order], order)
        keys, pid_at = self._by_identity
        items = itertools.chain.from_iterable(lists)
        first = id(next(items))
        at = int(np.searchsorted(keys, first)) if first < 2**63 else self.n
        if at == self.n or int(keys[at]) != first:
            return None  # the first item is not one of ours: the others usually are not either
        try:
            ids = np.array([first, *map(id, items)], dtype=np.int64)
        except OverflowError:
            return None
        found = np.searchsorted(keys, ids)
        np.minimum(found, self.n - 1, out=found)
        if not np.array_equal(keys[found], ids):
            return None
        return pid_at[found]

    def _pids_by_lookup(
        self, lists: Sequence[Sequence[TopicPartition]], total: int
    ) -> np.ndarray | None:
        """:meth:`pids_flat` by one dict lookup per partition (the partitions hash as
        tuples); ``None`` when some item is not a partition of the index (outside it, or
        malformed), so that the transposing path decides what to drop or reject."""
        if self._pid_of is None:
            self._pid_of = {tp: pid for pid, tp in enumerate(self.flat.tolist())}
        try:
            pids = np.fromiter(
                map(self._pid_of.get, itertools.chain.from_iterable(lists), repeat(-1)),
                dtype=np.int64,
                count=total,
            )
        except TypeError:  # an unhashable item
            return None
        if total and int(pids.min()) < 0:
            return None
        return pids

    def partition_lists(
        self,
        flat: np.ndarray,
        sizes: np.ndarray,
        runs: tuple[np.ndarray, np.ndarray] | None = None,
        order: np.ndarray | None = None,
    ) -> list[list[TopicPartition]]:
        """``flat`` (pids, member after member) cut by ``sizes`` into lists of partitions;
        ``runs``, if given, is :func:`arithmetic_runs`' answer, known to the caller; ``order``,
        if given, the members whose lists to return, in that order (the caller's member order:
        callers usually keep it in id order, the fresh deal's order of first pids, so the
        strided slices then touch neighbouring partition objects, see below).

        A member whose pids step evenly forwards through the index (round robin over sorted
        partitions: in a fresh uniform group the member at position ``j`` gets ``j, j+M,
        j+2M, ...``) gets one strided slice of :attr:`flat_list`, a C loop that touches only its
        own partitions. These slices are taken in order of their first pid, so that consecutive
        slices (and the garbage collector's pass over the new lists) touch neighbouring
        partition objects in memory: in the members' own (hash) order each list would reach 500
        cold cache lines, and the whole conversion took twice as long. The other members share
        one lookup of their pids, as do all members of a small result (``_STRIDED_MIN``).
        Either way a member's list holds the same shared TopicPartition objects in the same
        order.
        """
        if runs is not None and flat.size < _STRIDED_MIN and bool(runs[1].all()):
            # every member's ids step evenly (a fresh deal): one strided slice each, straight
            # from the shared partitions, in C-level maps
            first, step = runs
            if order is not None:
                first, step, sizes = first[order], step[order], sizes[order]
            dealt = self._dealt_lists(first, step, sizes)
            if dealt is not None:
                return dealt
            stop = np.maximum(first + (sizes - 1) * step + 1, first)  # an empty member: empty
            return list(
                map(
                    self.flat_list.__getitem__,
                    map(slice, first.tolist(), stop.tolist(), step.tolist()),
                )
            )
        m = sizes.size
        if m and flat.size < _STRIDED_MIN and flat.size == m * int(sizes[0]) and flat.size:
            k = flat.size // m
            if bool((sizes == k).all()):
                # every member holds k partitions: the lists are the rows of one (m, k) table,
                # put in the caller's order and turned into lists by numpy in C
                table = flat.reshape(m, k)
                return self.flat[table if order is None else table[order]].tolist()
        lists = self._partition_lists(flat, sizes, runs)
        return lists if order is None else list(map(lists.__getitem__, order.tolist()))

    def _dealt_lists(
        self, first: np.ndarray, step: np.ndarray, sizes: np.ndarray
    ) -> list[list[TopicPartition]] | None:
        """The lists of a whole round-robin deal, or ``None`` if the progressions are not one.

        When the ``M`` members' ids are ``j, j + M, j + 2M, ...`` for the positions ``j`` of all
        members, covering every partition once (a fresh group: ``q`` each, one more for the
        first ``n mod M`` positions), the lists are the columns of the index's partitions laid
        out ``M`` to a row: one ``reshape(q, M).T.tolist()`` in C instead of a slice per member,
        then the last, partial row appended to the first members' lists."""
        m = sizes.size
        if not m or int(sizes.sum()) != self.n or not bool((step == m).all()):
            return None
        q, r = divmod(self.n, m)
        if not (
            np.array_equal(sizes, q + (first < r))
            and np.array_equal(np.sort(first), np.arange(m, dtype=np.int64))
        ):
            return None
        rows: list[list[TopicPartition]] = self.flat[: q * m].reshape(q, m).T.tolist()
        if r:
            rest = self.flat_list
            for j in range(r):
                rows[j].append(rest[q * m + j])
        if np.array_equal(first, np.arange(m, dtype=np.int64)):
            return rows  # the members are in deal (id) order, as callers usually keep them
        return list(map(rows.__getitem__, first.tolist()))

    def _partition_lists(
        self,
        flat: np.ndarray,
        sizes: np.ndarray,
        runs: tuple[np.ndarray, np.ndarray] | None,
    ) -> list[list[TopicPartition]]:
        size_list = sizes.tolist()
        if flat.size < _STRIDED_MIN:
            parts = self.flat[flat].tolist() if flat.size else []
            ends = list(itertools.accumulate(size_list))
            return list(map(parts.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        first, step = runs if runs is not None else arithmetic_runs(flat, sizes)
        # placeholders, not empty lists: replacing a list would free one container per new
        # list, so the collector's pass over the new lists would be put off until after the
        # call (it must be paid here, as any caller building 2000 lists pays it)
        out: list[Any] = [None] * len(size_list)
        irregular = step == 0
        if irregular.any():
            rest = self.flat[flat[np.repeat(irregular, sizes)]].tolist()
            at = 0
            for m in np.flatnonzero(irregular).tolist():
                out[m] = rest[at : at + size_list[m]]
                at += size_list[m]
        parts = self.flat_list
        first_list = first.tolist()
        step_list = step.tolist()
        for m in np.argsort(first, kind="stable").tolist():
            s = step_list[m]
            if s:
                f = first_list[m]
                out[m] = parts[f : f + (size_list[m] - 1) * s + 1 : s]
        return out

    def to_partitions(self, pids: Iterable[int] | np.ndarray) -> list[TopicPartition]:
        if isinstance(pids, list) and len(pids) < 64:
            flat: Any = self.flat  # an object array of TopicPartition
            return [flat[p] for p in pids]  # numpy's per-call cost dominates short lists
        arr = np.asarray(pids, dtype=np.int64) if not isinstance(pids, np.ndarray) else pids
        if arr.size == 0:
            return []
        return self.flat[arr].tolist()


def cut_by_sizes(flat: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """``flat`` cut into consecutive pieces of ``sizes`` (views; the shared empty array for an
    empty piece), by C-level maps rather than a Python loop: this runs for every member."""
    ends = list(itertools.accumulate(sizes))
    pieces = list(map(flat.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    m = -1
    try:
        while True:  # C-level searches: empty members are usually few
            m = sizes.index(0, m + 1)
            pieces[m] = _EMPTY
    except ValueError:
        return pieces


def arithmetic_runs(flat: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per member (``flat`` cut by ``sizes``): its first pid and the step if its pids are
    ``first, first + step, first + 2 * step, ...`` with ``step >= 1``, else step 0. An empty
    member gets (0, 1): the empty slice. Three passes over ``flat``, no per-member loop."""
    n = sizes.size
    ends = np.cumsum(sizes)
    starts = ends - sizes
    first = np.zeros(n, dtype=np.int64)
    step = np.ones(n, dtype=np.int64)
    nonempty = sizes > 0
    first[nonempty] = flat[starts[nonempty]]
    two = np.flatnonzero(sizes >= 2)
    if not two.size:
        return first, step
    diff = np.diff(flat)
    step[two] = diff[starts[two]]
    three = np.flatnonzero(sizes >= 3)
    if three.size:
        # a member's diffs diff[start .. end - 2] are all equal when no j in start + 1 .. end - 2
        # has diff[j] != diff[j - 1]; such j ("changes") are few unless the ids are irregular
        changes = np.flatnonzero(diff[1:] != diff[:-1]) + 1
        lo = np.searchsorted(changes, starts[three] + 1)
        hi = np.searchsorted(changes, ends[three] - 1)
        step[three[hi > lo]] = 0
    step[step < 0] = 0
    return first, step


@lru_cache(maxsize=2)
def _cached_index(counts: tuple[tuple[str, int], ...]) -> PartitionIndex:
    return PartitionIndex(counts)


def partition_index(partition_counts: dict[str, int]) -> PartitionIndex:
    """The (cached) index of ``{topic: count}``; topics are put in Java String order."""
    ordered = tuple((t, partition_counts[t]) for t in java_sorted(partition_counts))
    return _cached_index(ordered)
