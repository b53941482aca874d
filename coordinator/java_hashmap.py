"""Iteration order of a ``java.util.HashMap<String, V>``, emulated.

Kafka's classic coordinator keeps members in a HashMap and picks "the first member" (leader
re-election, ClassicGroup.remove / maybeElectNewJoinedLeader) and the winning protocol of a tied
vote (ClassicGroup.selectProtocol: ``Stream.max`` keeps the first of equal entries) by that map's
iteration order. Java iterates bucket by bucket, bucket ``(h ^ (h >>> 16)) & (capacity - 1)`` with
``h = String.hashCode``; within a bucket, entries keep insertion order (``put`` appends to the
bucket's tail and resizes split a bucket without reordering it; ``merge``/``compute`` would
prepend, but Kafka's member map and vote counts use ``put``). Checked against OpenJDK 17 in
tests/coordinator/data. The capacity starts at 16 and doubles whenever the size exceeds 0.75 x
capacity; removals never shrink it. Not emulated: treeification of a bucket holding 8+ colliding
keys (needs 8 member ids in one bucket of a >= 64-bucket table; the order inside such a bucket
is then by hash, and this module keeps insertion order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from coordinator.placement import java_string_hashcode

DEFAULT_CAPACITY = 16
LOAD_FACTOR = 0.75


def spread(h: int) -> int:
    """HashMap.hash: ``h ^ (h >>> 16)`` on the unsigned 32-bit value."""
    u = h & 0xFFFFFFFF
    return u ^ (u >> 16)


def bucket_of(key: str, capacity: int) -> int:
    return spread(java_string_hashcode(key)) & (capacity - 1)


class JavaHashMapOrder:
    """Tracks the keys of one HashMap (insertions, removals, growth) to give its iteration order."""

    __slots__ = ("_cache", "_next", "_seq", "capacity")

    def __init__(self) -> None:
        self._seq: dict[str, int] = {}
        self._next = 0
        self.capacity = DEFAULT_CAPACITY
        self._cache: list[str] | None = None

    def __len__(self) -> int:
        return len(self._seq)

    def __contains__(self, key: str) -> bool:
        return key in self._seq

    def put(self, key: str) -> None:
        """HashMap.put: a new key goes to the end of its bucket; an existing key keeps its place."""
        if key in self._seq:
            return
        self._seq[key] = self._next
        self._next += 1
        while len(self._seq) > self.capacity * LOAD_FACTOR:
            self.capacity *= 2
        self._cache = None

    def remove(self, key: str) -> None:
        if self._seq.pop(key, None) is not None:
            self._cache = None

    def clear(self) -> None:
        """HashMap.clear keeps the table's capacity."""
        self._seq.clear()
        self._cache = None

    def order(self) -> list[str]:
        if self._cache is None:
            cap = self.capacity
            self._cache = sorted(self._seq, key=lambda k: (bucket_of(k, cap), self._seq[k]))
        return list(self._cache)

    def first(self, where: Callable[[str], bool] | None = None) -> str | None:
        for key in self.order():
            if where is None or where(key):
                return key
        return None


def iteration_order(keys_in_insertion_order: Iterable[str]) -> list[str]:
    """The iteration order of a fresh HashMap after putting ``keys`` in this order."""
    m = JavaHashMapOrder()
    for key in keys_in_insertion_order:
        m.put(key)
    return m.order()


def iteration_order_by_hash(hashes_in_insertion_order: Sequence[int]) -> list[int]:
    """Positions of distinct keys, given by their ``hashCode()`` in insertion order, in the
    iteration order of a fresh HashMap after putting them in this order (for keys that are not
    strings, e.g. Kafka's TopicPartition)."""
    capacity = DEFAULT_CAPACITY
    while len(hashes_in_insertion_order) > capacity * LOAD_FACTOR:
        capacity *= 2
    mask = capacity - 1
    return sorted(
        range(len(hashes_in_insertion_order)),
        key=lambda i: (spread(hashes_in_insertion_order[i]) & mask, i),
    )


def first_max_by_count(counts_in_insertion_order: Iterable[tuple[str, int]]) -> str:
    """``map.entrySet().stream().max(comparingByValue())``: the first maximal entry in map order.

    ``BinaryOperator.maxBy`` keeps the earlier element when the comparator says equal, so among
    tied counts the key met first in HashMap iteration order wins.
    """
    counts = dict(counts_in_insertion_order)
    if not counts:
        raise ValueError("no entries")
    best: str | None = None
    for key in iteration_order(counts):
        if best is None or counts[key] > counts[best]:
            best = key
    assert best is not None
    return best
