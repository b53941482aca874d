"""Replaying an ``__consumer_offsets`` partition into its coordinator: Kafka's
CoordinatorLoader.

A broker that becomes leader of the partition replays it (for ``load_time_ms``, a timer of the
shard) and rebuilds every group from its last GroupMetadata record (GroupMetadataManager.replay):
Stable with one-protocol members if it has members, else Empty; offsets without group metadata
make an Empty "simple" group (OffsetMetadataManager.replay). Offsets are replayed in log order
with the transaction markers (pending transactional offsets, replayEndTransactionMarker). What happens once the groups are
back (fresh sessions, over-size groups rebalancing) is the managers' ``on_loaded``; losing the
partition is their ``on_unloaded``.
"""

from __future__ import annotations

from collections.abc import Container

from coordinator.consumer_group_manager import ConsumerGroupManager
from coordinator.group_metadata_manager import GroupMetadataManager
from coordinator.log import OffsetsLog
from coordinator.offset_metadata_manager import OffsetMetadataManager
from coordinator.pending_offsets import PendingOffset, PendingTransactionalOffsets
from coordinator.records import (
    CONSUMER_GROUP_KEYS,
    NO_PRODUCER_ID,
    ControlRecordKey,
    EndTransactionMarkerValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
)


class CoordinatorLoader:
    """Reads one partition's compacted records and replays them into the managers."""

    __slots__ = ("log", "partition")

    def __init__(self, log: OffsetsLog, partition: int) -> None:
        self.log = log
        self.partition = partition

    def replay(
        self,
        groups: GroupMetadataManager,
        offsets: OffsetMetadataManager,
        consumer_groups: ConsumerGroupManager,
        now_ms: int,
    ) -> int:
        """Rebuild the groups, then their offsets; returns how many records the partition has.

        The KIP-848 consumer groups replay their records in log order, as Kafka's loader does
        (their replay asserts the order: a member's tombstones follow its epoch -1)."""
        records = self.log.partition(self.partition)
        for record in records:
            value = record.value
            # a consumer-group key never carries a transaction marker's value
            if isinstance(record.key, CONSUMER_GROUP_KEYS) and not isinstance(
                value, EndTransactionMarkerValue
            ):
                consumer_groups.replay(record.key, value)
            elif isinstance(record.key, GroupMetadataKey):
                # GroupMetadataManager.replay(GroupMetadataKey, ...): a classic group's record
                # takes the id (groups.put) and its tombstone removes the group (removeGroup),
                # whatever its type: a consumer group of that id written before is gone
                consumer_groups.groups.pop(record.key.group, None)
        latest = self.log.latest(self.partition)
        for key, value in latest.items():
            # A key's value is of its kind or None (a tombstone): isinstance is the None check.
            if isinstance(key, GroupMetadataKey) and isinstance(value, GroupMetadataValue):
                groups.replay_group(key.group, value)
        committed, _pending, txn_groups = offsets_in_log_order(records)
        for key, (_value, _record_offset, plain) in committed.items():
            # a marker's offsets make no group: their records did, if still alive; a
            # KIP-848 group's offsets belong to the consumer group replayed above
            if plain and key.group not in consumer_groups.groups:
                groups.replay_simple_group(key.group, now_ms)
        for group_id in txn_groups:  # replay makes a group of every transactional offset's
            if group_id not in consumer_groups.groups:
                groups.replay_simple_group(group_id, now_ms)
        offsets.replay_log(records, now_ms)
        _in_replay_order(groups, records, consumer_groups.groups)
        return len(records)


def _in_replay_order(
    groups: GroupMetadataManager, records: tuple[Record, ...], consumer_groups: Container[str]
) -> None:
    """Put the replayed classic groups in the order of Kafka's map after the replay, and
    record the most it held: the order of ListGroups and of the expiry job's tombstones."""
    order, high_water = classic_groups_in_replay_order(records, consumer_groups)
    replayed = dict(groups.groups)
    groups.groups.clear()
    for group_id in order:
        if group_id in replayed:
            groups.groups[group_id] = replayed.pop(group_id)
    groups.groups.update(replayed)
    groups.groups_high_water = max(groups.groups_high_water, high_water)


def classic_groups_in_replay_order(
    records: tuple[Record, ...], consumer_groups: Container[str] = ()
) -> tuple[list[str], int]:
    """The classic groups of Kafka's ``TimelineHashMap`` of groups after the loader replayed
    ``records`` (GroupMetadataManager.replay, OffsetMetadataManager.replay), in insertion
    order, and the largest size its table grew for (``BaseHashTable`` grows for size + 1 on
    every put, a replacement included: ``timeline_order.capacity_for``).

    A GroupMetadata record puts its group (a replacement keeps the key's place), a tombstone
    removes it, and an offset (plain or transactional) of an unknown group puts a simple
    group (``getOrMaybeCreateClassicGroup``) unless a consumer group has the id. groupsim
    builds the groups from the compacted view, which has neither this order nor this size.
    """
    live: dict[str, None] = {}
    high_water = 0
    for record in records:
        key, value = record.key, record.value
        if isinstance(key, GroupMetadataKey):
            if value is None:
                live.pop(key.group, None)
                continue
        elif not (
            isinstance(key, OffsetCommitKey)
            and isinstance(value, OffsetCommitValue)
            and key.group not in live
            and key.group not in consumer_groups
        ):
            continue
        high_water = max(high_water, len(live) + 1)
        live.setdefault(key.group, None)
    return list(live), high_water


def offsets_in_log_order(
    records: tuple[Record, ...],
) -> tuple[
    dict[OffsetCommitKey, tuple[OffsetCommitValue, int, bool]],
    PendingTransactionalOffsets,
    dict[str, None],
]:
    """OffsetMetadataManager.replay and replayEndTransactionMarker over the whole partition: the
    committed offsets (value, record offset, and whether a plain record of the partition
    committed it, in the order of their last write, as the compacted view has them), the
    transactions still open, and the groups of the transactional offset records (replay creates
    their simple groups whatever the marker said; a later group tombstone deletes them).

    A plain record commits its offset; a transactional one waits for its producer's marker,
    whose COMMIT keeps it only over an older committed offset; a tombstone removes the committed
    and every pending offset of its partition.
    """
    committed: dict[OffsetCommitKey, tuple[OffsetCommitValue, int, bool]] = {}
    pending = PendingTransactionalOffsets()
    txn_groups: dict[str, None] = {}
    for record in records:
        key, value = record.key, record.value
        if isinstance(key, ControlRecordKey):
            for group_id, by_tp in pending.end(record.producer_id).items():
                if key.type != "COMMIT":
                    continue
                for (topic, partition), offset in by_tp.items():
                    okey = OffsetCommitKey(group_id, topic, partition)
                    existing = committed.get(okey)
                    if existing is None or offset.record_offset > existing[1]:
                        plain = existing is not None and existing[2]
                        committed[okey] = (offset.value, offset.record_offset, plain)
        elif isinstance(key, GroupMetadataKey):
            if value is None:  # the group's tombstone deletes the group replay made
                txn_groups.pop(key.group, None)
        elif isinstance(key, OffsetCommitKey):
            tp = (key.topic, key.partition)
            if not isinstance(value, OffsetCommitValue):  # a tombstone
                committed.pop(key, None)
                pending.remove_partition(key.group, tp)
            elif record.producer_id == NO_PRODUCER_ID:
                committed.pop(key, None)
                committed[key] = (value, record.offset, True)
            else:
                pending.put(record.producer_id, key.group, tp, PendingOffset(value, record.offset))
                txn_groups[key.group] = None
    return committed, pending, txn_groups
