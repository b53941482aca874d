"""Transactional offsets not yet committed: OffsetMetadataManager's ``pendingTransactionalOffsets``
(by producer id) and ``openTransactionsByGroup``.

A TxnOffsetCommit's offsets are written with the transaction's producer id and wait here until
the transaction's marker: COMMIT moves them to the committed offsets (each only if its record is
newer than the committed one), ABORT drops them. Meanwhile an OffsetFetch with ``require_stable``
gets UNSTABLE_OFFSET_COMMIT for their partitions, they keep the committed offset of their
partition from expiring, and a group with an open transaction is not deleted by the cleanup.
Kafka keeps a producer in ``openTransactionsByGroup`` until the marker even when a tombstone
removed all of its offsets of the group; so does this class.
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import frozen

from coordinator.records import OffsetCommitValue
from coordinator.timeline_order import GroupOffsetsOrder, capacity_for, int_iteration_order

TopicPartition = tuple[str, int]


@frozen
class PendingOffset:
    """OffsetAndMetadata of a transactional record: its value and its offset in the log."""

    value: OffsetCommitValue
    record_offset: int


class PendingTransactionalOffsets:
    """{producer id: {group: {(topic, partition): PendingOffset}}} and the open producers of
    each group, in insertion order, with what Kafka's iteration order needs (the shape of each
    producer's offsets maps, the most producers each group's open set has held)."""

    __slots__ = ("by_producer", "open_by_group", "open_high_water", "order")

    def __init__(self) -> None:
        self.by_producer: dict[int, dict[str, dict[TopicPartition, PendingOffset]]] = {}
        self.order: dict[tuple[int, str], GroupOffsetsOrder] = {}
        self.open_by_group: dict[str, dict[int, None]] = {}
        self.open_high_water: dict[str, int] = {}

    def put(
        self, producer_id: int, group_id: str, tp: TopicPartition, pending: PendingOffset
    ) -> None:
        """replay of a transactional OffsetCommit record."""
        offsets = self.by_producer.setdefault(producer_id, {}).setdefault(group_id, {})
        order = self.order.get((producer_id, group_id))
        if order is None:
            order = self.order[(producer_id, group_id)] = GroupOffsetsOrder()
        if tp in offsets:
            order.replaced(tp[0])
        else:
            order.added(tp[0])
        offsets[tp] = pending
        # TimelineHashSet.add grows the table for size + 1 even when the producer is known
        producers = self.open_by_group.setdefault(group_id, {})
        high = len(producers) + 1
        producers[producer_id] = None
        if high > self.open_high_water.get(group_id, 0):
            self.open_high_water[group_id] = high

    def open_producers(self, group_id: str) -> list[int]:
        """The group's open producers in Kafka's TimelineHashSet<Long> order."""
        producers = self.open_by_group.get(group_id)
        if not producers:
            return []
        return int_iteration_order(producers, capacity_for(self.open_high_water[group_id]))

    def remove_partition(self, group_id: str, tp: TopicPartition) -> None:
        """A tombstone of (group, tp) removes the pending offsets of every open transaction."""
        for producer_id in self.open_by_group.get(group_id, ()):
            groups = self.by_producer.get(producer_id)
            if groups is None:
                continue
            offsets = groups.get(group_id)
            if offsets is not None and offsets.pop(tp, None) is not None:
                if self.order[(producer_id, group_id)].removed(tp[0]):
                    del self.order[(producer_id, group_id)]
                if not offsets:
                    del groups[group_id]

    def end(self, producer_id: int) -> dict[str, dict[TopicPartition, PendingOffset]]:
        """replayEndTransactionMarker's first half: the producer's pending offsets, by group
        (each group's in Kafka's order, in which the marker materializes them), removed with
        the producer's open transactions ({} when it has none)."""
        groups = self.by_producer.pop(producer_id, None)
        if groups is None:
            return {}
        ordered = {}
        for group_id, offsets in groups.items():
            producers = self.open_by_group.get(group_id)
            if producers is not None:
                producers.pop(producer_id, None)
                if not producers:
                    del self.open_by_group[group_id]
                    del self.open_high_water[group_id]
            order = self.order.pop((producer_id, group_id))
            ordered[group_id] = {tp: offsets[tp] for tp in order.order(offsets)}
        return ordered

    def has_pending(self, group_id: str, tp: TopicPartition) -> bool:
        """hasPendingTransactionalOffsets."""
        for producer_id in self.open_by_group.get(group_id, ()):
            groups = self.by_producer.get(producer_id)
            if groups is not None and tp in groups.get(group_id, {}):
                return True
        return False

    def has_open_transactions(self, group_id: str) -> bool:
        """openTransactionsByGroup.containsKey(group)."""
        return group_id in self.open_by_group

    def partitions(self, group_id: str) -> Iterator[TopicPartition]:
        """The group's partitions with a pending offset, by open producer then as written: a
        partition pending in two transactions comes twice (deleteAllOffsets writes a tombstone
        for each)."""
        for producer_id in self.open_producers(group_id):
            offsets = self.by_producer.get(producer_id, {}).get(group_id)
            if offsets:
                yield from self.order[(producer_id, group_id)].order(offsets)

    def get(self, producer_id: int, group_id: str, tp: TopicPartition) -> PendingOffset | None:
        """pendingTransactionalOffset (for tests and views)."""
        return self.by_producer.get(producer_id, {}).get(group_id, {}).get(tp)
