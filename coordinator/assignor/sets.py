"""Partition sets that iterate in Java's order, cheaply.

Kafka's assignors return ``Set<Integer>`` values whose iteration order feeds the next rebalance
(the target-assignment record lists them in that order and the next round walks them). Two kinds:

* :class:`RangeSet` is Kafka's ``assignor.RangeSet``: ``[start, stop)`` without storing it,
  iterating in ascending order as Kafka's does.
* :class:`IntHashSet` is a ``java.util.HashSet<Integer>`` as the uniform assignor builds it: it
  records its capacity and insertion order (as runs of consecutive partitions) and computes Java's
  iteration order only when someone iterates. Order = bucket ``spread(p) & (capacity - 1)``
  ascending, insertion order within a bucket (resizes keep it); a table doubles after an insertion
  that takes the size above 0.75 x capacity; removals never shrink it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet

from coordinator.java import spread


class RangeSet(AbstractSet[int]):
    """Kafka's RangeSet: the partitions ``[start, stop)``, ascending."""

    __slots__ = ("start", "stop")

    def __init__(self, start: int, stop: int) -> None:
        self.start = start
        self.stop = stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.start <= value < self.stop

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.stop))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RangeSet):
            return self.start == other.start and self.stop == other.stop
        return AbstractSet.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]  # equal to sets of any kind, like Java's

    def runs(self) -> list[range]:
        return [range(self.start, self.stop)] if self.stop > self.start else []

    def __repr__(self) -> str:
        return f"RangeSet({self.start}, {self.stop})"


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (1 for 0 or 1)."""
    return 1 if cap <= 1 else 1 << (cap - 1).bit_length()


def sized_capacity(expected: int) -> int:
    """Buckets of ``new HashSet<>((int) (expected / 0.75f + 1))``, Kafka's pre-sizing idiom."""
    return table_size_for(int(expected / 0.75) + 1)


def copy_capacity(size: int) -> int:
    """Buckets of ``new HashSet<>(collection)`` for a collection of ``size`` elements."""
    return table_size_for(max(int(size / 0.75) + 1, 16))


class IntHashSet(AbstractSet[int]):
    """A ``HashSet<Integer>`` whose iteration order is Java's (see the module docstring).

    Contents are kept as insertion-ordered runs ``range(a, b)`` (an element's insertion rank is
    its position in their concatenation); a removal marks the element in ``_removed``. The
    assignors mutate it while building and treat it as read-only once returned.
    """

    __slots__ = ("_order", "_removed", "_runs", "_set", "_size", "capacity")

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self._runs: list[range] = []
        self._removed: set[int] | None = None
        self._size = 0
        self._order: list[range] | None = None
        self._set: frozenset[int] | None = None

    @classmethod
    def copy_of(cls, source: AbstractSet[int]) -> IntHashSet:
        """``new HashSet<>(source)``: inserted in ``source``'s iteration order."""
        copy = cls(copy_capacity(len(source)))
        copy.add_runs(java_runs(source))
        return copy

    def _grow(self) -> None:
        cap = self.capacity
        while self._size > 0.75 * cap:
            cap <<= 1
        self.capacity = cap

    def add_run(self, run: range) -> None:
        """Add ``run`` (partitions known to be absent), in ascending order."""
        if not run:
            return
        runs = self._runs
        if runs and runs[-1].stop == run.start:
            runs[-1] = range(runs[-1].start, run.stop)
        else:
            runs.append(run)
        self._size += len(run)
        if self._size > 0.75 * self.capacity:
            self._grow()
        self._order = self._set = None

    def add_runs(self, runs: Iterable[range]) -> None:
        for run in runs:
            self.add_run(run)

    def add(self, partition: int) -> None:
        """``HashSet.add`` of a partition known to be absent."""
        if self._removed is not None and partition in self._removed:
            # Re-inserted after a removal: it goes to the end of its bucket like a new element.
            self._removed.discard(partition)
            self._compact()
        self.add_run(range(partition, partition + 1))

    def remove(self, partition: int) -> None:
        """``HashSet.remove`` of a present partition."""
        if self._removed is None:
            self._removed = set()
        self._removed.add(partition)
        self._size -= 1
        self._order = self._set = None

    def _compact(self) -> None:
        """Drop removed elements from the runs (their insertion ranks stay relative)."""
        removed = self._removed
        if not removed:
            return
        runs: list[range] = []
        for run in self._runs:
            start = run.start
            for p in run:
                if p in removed:
                    if p > start:
                        runs.append(range(start, p))
                    start = p + 1
            if start < run.stop:
                runs.append(range(start, run.stop))
        self._runs = runs
        self._removed = None

    def __len__(self) -> int:
        return self._size

    def runs(self) -> list[range]:
        """Java's iteration order, as ascending runs."""
        if self._order is None:
            self._compact()
            runs = self._runs
            cap = self.capacity
            limit = min(cap, 1 << 16)  # below both, spread(p) & mask == p: one per bucket
            if all(r.start >= 0 and r.stop <= limit for r in runs):
                ordered = sorted(runs, key=lambda r: r.start)
                merged: list[range] = []
                for r in ordered:
                    if merged and merged[-1].stop == r.start:
                        merged[-1] = range(merged[-1].start, r.stop)
                    else:
                        merged.append(r)
                self._order = merged
            else:
                mask = cap - 1
                items = [p for r in runs for p in r]
                rank = {p: i for i, p in enumerate(items)}
                items.sort(key=lambda p: (spread(p) & mask, rank[p]))
                self._order = _to_runs(items)
        return self._order

    def __iter__(self) -> Iterator[int]:
        for run in self.runs():
            yield from run

    def __contains__(self, value: object) -> bool:
        if self._set is None:
            self._compact()
            self._set = frozenset(p for r in self._runs for p in r)
        return value in self._set

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IntHashSet({list(self)})"


def _to_runs(items: Iterable[int]) -> list[range]:
    runs: list[range] = []
    start = stop = None
    for p in items:
        if stop is not None and p == stop:
            stop += 1
            continue
        if start is not None and stop is not None:
            runs.append(range(start, stop))
        start, stop = p, p + 1
    if start is not None and stop is not None:
        runs.append(range(start, stop))
    return runs


def java_runs(partitions: AbstractSet[int]) -> list[range]:
    """The set's iteration order as runs of consecutive partitions."""
    runs = getattr(partitions, "runs", None)
    if runs is not None:
        result: list[range] = runs()
        return result
    return _to_runs(partitions)
