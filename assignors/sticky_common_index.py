"""Integer ids for the partitions of one ``assign`` call: the sticky assignors' working representation.

Every partition of the subscribed, existing topics gets an id ("pid") in Kafka's sorted order:
topics in Java ``String`` order, partitions ascending. The builders work on numpy arrays and Python
lists of these ints (cheap to hash, compare and copy) and only turn them back into the shared
:class:`~assignors.api.TopicPartition` tuples (via ``partitions_of``) for the result. For a
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
        self._pid_of: dict[TopicPartition, int] | None = None

    @property
    def flat(self) -> np.ndarray:
        """Object array: pid -> the shared TopicPartition tuple."""
        if self._flat is None:
            chain = itertools.chain.from_iterable(
                partitions_of(t, int(c)) for t, c in zip(self.topics, self.counts, strict=True)
            )
            self._flat = np.fromiter(chain, dtype=object, count=self.n)
        return self._flat

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
        sizes = [len(x) for x in lists]
        total = sum(sizes)
        if not total or not self.topics:
            return [_EMPTY] * len(lists)
        if total >= 64 * len(lists):  # long lists: numpy's per-call cost is amortised
            return [self.pids(x) for x in lists]
        if self.n <= _LOOKUP_LIMIT:
            found = self._pids_by_lookup(lists, sizes, total)
            if found is not None:
                return found
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
        out: list[np.ndarray] = []
        start = 0
        for size in sizes:
            out.append(pids[start : start + size] if size else _EMPTY)
            start += size
        return out

    def _pids_by_lookup(
        self, lists: Sequence[Sequence[TopicPartition]], sizes: list[int], total: int
    ) -> list[np.ndarray] | None:
        """:meth:`pids_of_many` by one dict lookup per partition (the partitions hash as
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
        out: list[np.ndarray] = []
        start = 0
        for size in sizes:
            out.append(pids[start : start + size] if size else _EMPTY)
            start += size
        return out

    def to_partitions(self, pids: Iterable[int] | np.ndarray) -> list[TopicPartition]:
        if isinstance(pids, list) and len(pids) < 64:
            flat: Any = self.flat  # an object array of TopicPartition
            return [flat[p] for p in pids]  # numpy's per-call cost dominates short lists
        arr = np.asarray(pids, dtype=np.int64) if not isinstance(pids, np.ndarray) else pids
        if arr.size == 0:
            return []
        return self.flat[arr].tolist()


@lru_cache(maxsize=2)
def _cached_index(counts: tuple[tuple[str, int], ...]) -> PartitionIndex:
    return PartitionIndex(counts)


def partition_index(partition_counts: dict[str, int]) -> PartitionIndex:
    """The (cached) index of ``{topic: count}``; topics are put in Java String order."""
    ordered = tuple((t, partition_counts[t]) for t in java_sorted(partition_counts))
    return _cached_index(ordered)
