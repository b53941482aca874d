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


def int_iteration_order(keys_in_insertion_order: Iterable[int], capacity: int) -> list[int]:
    """The same for ``TimelineHashMap<Integer, V>`` (Integer.hashCode is the value)."""
    shift = 65 - capacity.bit_length()
    keyed = [
        (((key * _FIBONACCI) & _MASK64) >> shift, -i, key)
        for i, key in enumerate(keys_in_insertion_order)
    ]
    return [key for _, _, key in sorted(keyed)]


class GroupOffsetsOrder:
    """The shape of one group's offsets in Kafka's ``TimelineHashMap<String topic,
    TimelineHashMap<Integer partition, OffsetAndMetadata>>`` (OffsetMetadataManager.Offsets):
    the topics in insertion order with their live partition counts, and the most each map has
    held (its capacity). A topic's map goes when its last partition does, and the group's map
    with its last topic (the caller drops this object then), so a re-created map starts small.
    """

    __slots__ = ("partition_high_water", "topic_high_water", "topics")

    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.topic_high_water = 0
        self.partition_high_water: dict[str, int] = {}

    def added(self, topic: str) -> None:
        """A partition of ``topic`` that had no offset got one."""
        count = self.topics.get(topic, 0) + 1
        self.topics[topic] = count
        self.topic_high_water = max(self.topic_high_water, len(self.topics))
        self.partition_high_water[topic] = max(self.partition_high_water.get(topic, 0), count)

    def replaced(self, topic: str) -> None:
        """A partition of ``topic`` got a new offset: BaseHashTable.baseAddOrReplace grows the
        table for ``size + 1`` before it finds that the key is already there."""
        high = self.topics[topic] + 1
        if high > self.partition_high_water[topic]:
            self.partition_high_water[topic] = high

    def removed(self, topic: str) -> bool:
        """A partition of ``topic`` lost its offset; True when the group has none left."""
        count = self.topics[topic] - 1
        if count:
            self.topics[topic] = count
        else:
            del self.topics[topic]
            del self.partition_high_water[topic]
        return not self.topics

    def order(self, partitions: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
        """``partitions`` (the group's, each topic's in insertion order) as Kafka iterates them."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        out: list[tuple[str, int]] = []
        for topic in iteration_order(self.topics, capacity_for(self.topic_high_water)):
            capacity = capacity_for(self.partition_high_water[topic])
            out.extend((topic, p) for p in int_iteration_order(by_topic[topic], capacity))
        return out
