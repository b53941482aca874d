"""The iteration orders of the Java collections the server-side assignors walk.

Kafka's uniform assignor iterates ``HashMap``/``HashSet`` collections keyed by member id (String),
topic id (``Uuid``) and partition (``Integer``), so which partition goes where depends on Java's
bucket order. These helpers give that order for the ways Kafka builds the collections; the rules
(bucket ``spread(hash) & (capacity - 1)`` ascending, insertion order within a bucket, resizes that
keep it) are those of :mod:`coordinator.java`.

* ``Uuid.hashCode`` = ``(int)(xor >> 32) ^ (int) xor`` with ``xor = msb ^ lsb``.
* ``Integer.hashCode`` is the value.
* ``new HashSet<>(c)`` / ``new HashMap<>(n)`` start at ``tableSizeFor(max(n / 0.75f + 1, 16))``
  buckets (the copy constructor) or ``tableSizeFor(n)`` (``new HashMap<>(n)``); a table grows
  (doubles) after an insertion that makes the size exceed 0.75 x capacity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from types import MappingProxyType
from typing import Any

from coordinator.assignor.sets import IntHashSet, uuid_hashcode
from coordinator.assignor.treeify import TREE_RISK, inserts_may_treeify
from coordinator.java import copy_capacity, java_hashmap_capacity, spread
from coordinator.java_hashmap import uuid_hashmap
from coordinator.kafka_uuid import Uuid


def int_order(values: Iterable[int], capacity: int) -> list[int]:
    """Iteration order of distinct ints inserted in this order into a table of ``capacity``
    buckets (the final capacity). Ascending when every value is below the capacity."""
    items = list(values)
    mask = capacity - 1
    if not items:
        return items
    if max(items) <= mask and min(items) >= 0:
        return sorted(items)
    index = {p: i for i, p in enumerate(items)}
    return sorted(items, key=lambda p: (spread(p) & mask, index[p]))


def hashset_of_ints(values: Iterable[int]) -> IntHashSet:
    """``new HashSet<>(values)`` (values in their iteration order, duplicates dropped)."""
    items = list(dict.fromkeys(values))
    result = IntHashSet(copy_capacity(len(items)))
    for p in items:
        result.add(p)
    return result


def uuid_order(keys: Iterable[Uuid], capacity: int | None = None) -> list[Uuid]:
    """Iteration order of distinct topic ids put in this order into a ``HashMap``/``HashSet``:
    ``capacity`` buckets, or a default table grown by the puts when ``None``. Exact with tree
    bins too (:mod:`coordinator.assignor.treeify`)."""
    items = list(dict.fromkeys(keys))
    table = 16 if capacity is None else capacity
    mask = java_hashmap_capacity(len(items), table) - 1
    hashes = list(map(spread, map(uuid_hashcode, items)))
    if len(items) >= TREE_RISK and inserts_may_treeify(hashes, table):
        model = uuid_hashmap(capacity)  # a bucket may become a tree bin: the exact model
        for k in items:
            model.put(k)
        return model.keys()
    buckets = list(map(mask.__and__, hashes))
    return [items[i] for i in sorted(range(len(items)), key=buckets.__getitem__)]


def assignment_from_record(
    topic_partitions: Iterable[tuple[Uuid, Iterable[int]]],
) -> Mapping[Uuid, AbstractSet[int]]:
    """``Assignment.fromRecord``: ``Collectors.toMap`` (a default ``HashMap``, put in record
    order) of ``new HashSet<>(partitions)``, read-only."""
    pairs: dict[Uuid, Any] = {}
    for topic_id, partitions in topic_partitions:
        if topic_id in pairs:
            raise ValueError(
                f"Duplicate key {topic_id}"
            )  # Collectors.toMap's IllegalStateException
        pairs[topic_id] = hashset_of_ints(partitions)
    return MappingProxyType({t: pairs[t] for t in uuid_order(pairs)})
