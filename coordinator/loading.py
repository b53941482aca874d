"""Replaying an ``__consumer_offsets`` partition into its coordinator: Kafka's
CoordinatorLoader.

A broker that becomes leader of the partition replays it (for ``load_time_ms``, a timer of the
shard) and rebuilds every group from its last GroupMetadata record (GroupMetadataManager.replay):
Stable with one-protocol members if it has members, else Empty; offsets without group metadata
make an Empty "simple" group (OffsetMetadataManager.replay). What happens once the groups are
back (fresh sessions, over-size groups rebalancing) is the managers' ``on_loaded``; losing the
partition is their ``on_unloaded``.
"""

from __future__ import annotations

from coordinator.consumer_group_manager import ConsumerGroupManager
from coordinator.group_metadata_manager import GroupMetadataManager
from coordinator.log import OffsetsLog
from coordinator.offset_metadata_manager import OffsetMetadataManager
from coordinator.records import (
    CONSUMER_GROUP_KEYS,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
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
            if isinstance(record.key, CONSUMER_GROUP_KEYS):
                consumer_groups.replay(record.key, record.value)
        latest = self.log.latest(self.partition)
        for key, value in latest.items():
            # A key's value is of its kind or None (a tombstone): isinstance is the None check.
            if isinstance(key, GroupMetadataKey) and isinstance(value, GroupMetadataValue):
                groups.replay_group(key.group, value)
        for key, value in latest.items():
            if isinstance(key, OffsetCommitKey) and isinstance(value, OffsetCommitValue):
                if key.group not in consumer_groups.groups:
                    groups.replay_simple_group(key.group, now_ms)
                offsets.replay(key, value)
        return len(records)
