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

TopicPartition = tuple[str, int]


@frozen
class PendingOffset:
    """OffsetAndMetadata of a transactional record: its value and its offset in the log."""

    value: OffsetCommitValue
    record_offset: int


class PendingTransactionalOffsets:
    """{producer id: {group: {(topic, partition): PendingOffset}}} and the open producers of
    each group, in the order they were first seen."""

    __slots__ = ("by_producer", "open_by_group")

    def __init__(self) -> None:
        self.by_producer: dict[int, dict[str, dict[TopicPartition, PendingOffset]]] = {}
        self.open_by_group: dict[str, dict[int, None]] = {}

    def put(
        self, producer_id: int, group_id: str, tp: TopicPartition, pending: PendingOffset
    ) -> None:
        """replay of a transactional OffsetCommit record."""
        self.by_producer.setdefault(producer_id, {}).setdefault(group_id, {})[tp] = pending
        self.open_by_group.setdefault(group_id, {})[producer_id] = None

    def remove_partition(self, group_id: str, tp: TopicPartition) -> None:
        """A tombstone of (group, tp) removes the pending offsets of every open transaction."""
        for producer_id in self.open_by_group.get(group_id, ()):
            groups = self.by_producer.get(producer_id)
            if groups is None:
                continue
            offsets = groups.get(group_id)
            if offsets is not None and offsets.pop(tp, None) is not None and not offsets:
                del groups[group_id]

    def end(self, producer_id: int) -> dict[str, dict[TopicPartition, PendingOffset]]:
        """replayEndTransactionMarker's first half: the producer's pending offsets, by group,
        removed with the producer's open transactions ({} when it has none)."""
        groups = self.by_producer.pop(producer_id, None)
        if groups is None:
            return {}
        for group_id in groups:
            producers = self.open_by_group.get(group_id)
            if producers is not None:
                producers.pop(producer_id, None)
                if not producers:
                    del self.open_by_group[group_id]
        return groups

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
        for producer_id in self.open_by_group.get(group_id, ()):
            yield from self.by_producer.get(producer_id, {}).get(group_id, {})

    def get(self, producer_id: int, group_id: str, tp: TopicPartition) -> PendingOffset | None:
        """pendingTransactionalOffset (for tests and views)."""
        return self.by_producer.get(producer_id, {}).get(group_id, {}).get(tp)
