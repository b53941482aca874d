"""When the assignors' Java collections may get a tree bin, and their exact order then.

The fast orders of :mod:`coordinator.assignor.sets` and :mod:`coordinator.assignor.bulk` (bucket,
then position in the bucket's list) are Java's as long as no bucket's list reaches
``TREEIFY_THRESHOLD`` nodes: at that point ``HashMap`` either doubles a table of fewer than 64
buckets early or turns the bucket into a red-black tree, and both change the order
(:mod:`coordinator.java_hashmap`). Kafka's own JMH grid reaches it: a joining member's
``HashSet<Integer>`` of 50 revoked partitions, 19 of them equal modulo 128
(``uniform-homo-incremental-m1000-r50-t10``), or its ``HashMap<Uuid, Set<Integer>>`` of
hundreds of topics (``uniform-homo-incremental-m100-r50-t1000``).

The detectors here are cheap and conservative: they follow the table through its sizes (the
keys a table of ``c`` buckets holds are the ones inserted before the insertion that takes the
size above ``0.75 c``) and report whether some bucket of some size may hold 8 keys (``put``
treeifies at 9, ``computeIfAbsent`` at 8). Only then is the collection replayed through the
exact model, :class:`~coordinator.java_hashmap.JavaHashMap`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

from coordinator.java import spread
from coordinator.java_hashmap import JavaHashMap

#: A bucket reaching this many keys may change the order (computeIfAbsent's threshold; put's
#: is one more).
TREE_RISK = 8


def _threshold(capacity: int) -> int:
    """``(int) (capacity * 0.75f)``: the size a table holds before it doubles."""
    return (capacity * 3) >> 2


def inserts_may_treeify(hashes: Sequence[int], table: int) -> bool:
    """Whether distinct keys with these spread hashes, inserted in this order (``put`` or
    ``computeIfAbsent``, no removal) into a table of ``table`` buckets, may fill a bucket of
    some table size with :data:`TREE_RISK` keys."""
    n = len(hashes)
    if n < TREE_RISK:
        return False
    capacity = max(table, 1)
    while True:
        held = min(n, _threshold(capacity) + 1)  # the keys this size of table holds
        if held >= TREE_RISK:
            counts = Counter(map((capacity - 1).__and__, hashes[:held]))
            if max(counts.values()) >= TREE_RISK:
                return True
        if n <= _threshold(capacity):
            return False
        capacity <<= 1


def history_may_treeify(history: Sequence[tuple[bool, int]], table: int) -> bool:
    """:func:`inserts_may_treeify` for a history of insertions (``True``, spread hash of a new
    key) and removals (``False``, hash of a present key): a bucket count per table size,
    following the size (a table doubles when its size goes above the threshold)."""
    capacity = max(table, 1)
    mask = capacity - 1
    present: Counter[int] = Counter()
    counts: Counter[int] = Counter()
    size = 0
    for added, h in history:
        if added:
            size += 1
            present[h] += 1
            counts[h & mask] += 1
            if counts[h & mask] >= TREE_RISK:
                return True
            if size > _threshold(capacity):
                while size > _threshold(capacity):
                    capacity <<= 1
                mask = capacity - 1
                counts = Counter()
                for key_hash, times in present.items():
                    counts[key_hash & mask] += times
        else:
            size -= 1
            present[h] -= 1
            counts[h & mask] -= 1
    return False


def int_spread_hashes(values: Sequence[int]) -> Sequence[int]:
    """``HashMap.hash`` of ``Integer`` keys (the value itself below 2**16)."""
    if not values or (min(values) >= 0 and max(values) < 1 << 16):
        return values
    return list(map(spread, values))


def replay(model: JavaHashMap, ops: Sequence[tuple[str, Hashable | None]]) -> list:
    """The keys of ``model`` after ``ops``: ``("p", key)`` put, ``("c", key)``
    computeIfAbsent, ``("t", None)`` a computeIfAbsent of a present key (its resize check
    only), ``("r", key)`` remove."""
    for kind, key in ops:
        if kind == "p":
            model.put(key)
        elif kind == "c":
            model.compute_if_absent(key)
        elif kind == "t":
            model.touch()
        else:
            model.remove(key)
    return model.keys()


def grouped_inserts_may_treeify(
    sizes: np.ndarray, hashes: np.ndarray, tables: np.ndarray
) -> np.ndarray:
    """:func:`inserts_may_treeify` of many collections at once: collection ``g`` gets
    ``sizes[g]`` distinct keys whose spread hashes are the next ``sizes[g]`` values of
    ``hashes`` (collections one after the other), into a table of ``tables[g]`` buckets.
    One bool per collection; numpy passes per table size, none when every collection is
    smaller than :data:`TREE_RISK`."""
    sizes = np.asarray(sizes, dtype=np.int64)
    risky = np.zeros(len(sizes), dtype=bool)
    live = sizes >= TREE_RISK
    if not live.any():
        return risky
    keep = np.repeat(live, sizes)
    group = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)[keep]
    rank = (
        np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    )[keep]
    h = np.asarray(hashes, dtype=np.int64)[keep]
    capacity = np.maximum(np.asarray(tables, dtype=np.int64), 1)
    while live.any():
        threshold = (capacity * 3) >> 2
        held = np.minimum(sizes, threshold + 1)
        counted = live & (held >= TREE_RISK)  # fewer keys cannot fill a bucket
        if counted.any():
            risky |= _full_buckets(group, rank, h, held, capacity, counted)
        live &= ~risky & (sizes > threshold)
        capacity = np.where(live, capacity << 1, capacity)
    return risky


def _full_buckets(
    group: np.ndarray,
    rank: np.ndarray,
    h: np.ndarray,
    held: np.ndarray,
    capacity: np.ndarray,
    counted: np.ndarray,
) -> np.ndarray:
    """Which collections (of ``counted``) have a bucket of ``TREE_RISK`` keys among their
    ``held`` first keys, in tables of ``capacity`` buckets."""
    risky = np.zeros(len(held), dtype=bool)
    inside = counted[group] & (rank < held[group])
    g = group[inside]
    sizes = capacity[counted]
    table = int(sizes[0])
    if (sizes == table).all() and len(held) * table <= 1 << 22:
        # one table size for all (tables that started equal): count (group, bucket) directly
        per_bucket = np.bincount(g * table + (h[inside] & (table - 1)), minlength=0)
        full = np.flatnonzero(per_bucket >= TREE_RISK) // table
        risky[full] = True
        return risky
    key = (g << 32) | (h[inside] & (capacity - 1)[g])
    key.sort()
    # a bucket with TREE_RISK keys: equal keys TREE_RISK - 1 places apart in the sorted keys
    full = key[TREE_RISK - 1 :][key[TREE_RISK - 1 :] == key[: len(key) - TREE_RISK + 1]]
    risky[full >> 32] = True
    return risky


def arithmetic_sets_may_treeify(
    counts: np.ndarray, firsts: np.ndarray, steps: np.ndarray, tables: np.ndarray
) -> np.ndarray:
    """For sets each filled by ``add`` of ``first + k * step`` (``k`` below ``count``) into a
    table of ``table`` buckets: whether the set may get a tree bin, without a pass over the
    partitions. Values in ``[0, 2**16)`` are their own spread hash, and ``first + k * step``
    then falls in ``c / gcd(step, c)`` buckets of a ``c``-bucket table in turn, so the fullest
    bucket holds ``ceil(held / (c / gcd))`` of the ``held`` first values (an odd step never
    collides). Sets outside that range count as risky (the caller checks them fully)."""
    risky = np.zeros(len(counts), dtype=bool)
    if not len(counts) or counts.max() < TREE_RISK:
        return risky
    last = firsts + (counts - 1) * steps
    if (
        min(firsts.min(), last.min()) >= 0
        and max(firsts.max(), last.max()) < 1 << 16
        and ((steps & 15).astype(bool) | (counts < TREE_RISK)).all()
    ):
        return risky  # the usual case: no step a multiple of 16, every value its own hash
    big = np.flatnonzero(counts >= TREE_RISK)
    n = counts[big]
    first = firsts[big]
    step = np.abs(steps[big])
    low = np.minimum(first, last[big])
    high = np.maximum(first, last[big])
    outside = (low < 0) | (high >= 1 << 16)
    risky[big[outside]] = True
    capacity = np.maximum(np.asarray(tables, dtype=np.int64)[big], 1)
    live = ~outside & (step % 16 == 0)  # gcd(step, c) >= 16 is needed for 8 in a bucket
    while live.any():
        threshold = (capacity * 3) >> 2
        held = np.minimum(n, threshold + 1)
        period = capacity // np.gcd(step, capacity)
        hit = live & (-(-held // period) >= TREE_RISK)
        risky[big[hit]] = True
        live &= ~hit & (n > threshold)
        capacity = np.where(live, capacity << 1, capacity)
    return risky
