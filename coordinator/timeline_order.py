"""Iteration order of Kafka's ``TimelineHashMap<String, V>`` (server-common's BaseHashTable), emulated.

GroupMetadataManager keeps its groups in a TimelineHashMap, and the expiry job
(GroupCoordinatorShard.cleanupGroupMetadata) visits them in that map's order, which is the order
of the tombstones it writes. BaseHashTable puts a key in slot ``(hashCode * -7046029254386353131L)
>>> (65 - log2(capacity))`` (Fibonacci hashing, the top bits of a 64-bit product); a slot holding
several keys keeps them in an array in insertion order, and the iterator walks the slots upwards,
each slot's array from its LAST element. The capacity starts at 2 and doubles when an insertion
would take the size above 0.75 x capacity; it never shrinks. Growth keeps each slot's keys in
order (a new slot's keys all come from one old slot). Not emulated: the order a snapshot revert
(a failed write) leaves behind in a shared slot.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.java import java_string_hashcode

MIN_CAPACITY = 2
_FIBONACCI = -7046029254386353131
_MASK64 = (1 << 64) - 1


def capacity_for(max_size: int) -> int:
    """The table's capacity once it has held ``max_size`` keys (BaseHashTable.baseAddOrReplace)."""
    capacity = MIN_CAPACITY
    while max_size * 0.75 > capacity:
        capacity *= 2
    return capacity


def slot_of(key: str, capacity: int) -> int:
    """BaseHashTable.findSlot."""
    product = (java_string_hashcode(key) * _FIBONACCI) & _MASK64
    return product >> (65 - capacity.bit_length())


def iteration_order(keys_in_insertion_order: Iterable[str], capacity: int) -> list[str]:
    """The keys as the map's iterator returns them: by slot, each slot newest first."""
    keyed = [(slot_of(key, capacity), -i, key) for i, key in enumerate(keys_in_insertion_order)]
    return [key for _, _, key in sorted(keyed)]
