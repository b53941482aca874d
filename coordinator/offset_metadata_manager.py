"""Committed offsets of one ``__consumer_offsets`` partition's groups: Kafka's
OffsetMetadataManager (classic groups) on the partition's leader.

OffsetCommit and OffsetFetch (commitOffset, fetchOffsets), the tombstones of a deleted topic's
offsets (onPartitionsDeleted), the offsets that expire (cleanupExpiredOffsets) and replay. It asks
the GroupMetadataManager about the groups it validates a commit against, as Kafka's does.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import ConsumerGroup
from coordinator.errors import Errors
from coordinator.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    Parked,
)
from coordinator.group_metadata_manager import GroupMetadataManager
from coordinator.java import java_string_length
from coordinator.log import operation_error_to_response_error
from coordinator.protocol import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)
from coordinator.records import OffsetCommitKey, OffsetCommitValue
from coordinator.result import Step
from coordinator.runtime import PartitionWriter, respond


class OffsetMetadataManager:
    """The committed offsets of one shard's groups (group id -> {(topic, partition): value})."""

    def __init__(
        self,
        *,
        node: str,
        config: CoordinatorConfig,
        writer: PartitionWriter,
        group_manager: GroupMetadataManager,
        consumer_groups: Mapping[str, ConsumerGroup] | None = None,
    ) -> None:
        self.node = node
        # the shard's KIP-848 consumer groups (ConsumerGroup.validateOffsetCommit/Fetch)
        self.consumer_groups: Mapping[str, ConsumerGroup] = (
            consumer_groups if consumer_groups is not None else {}
        )
        self.config = config
        self.writer = writer
        self.group_manager = group_manager
        self.offsets: dict[str, dict[tuple[str, int], OffsetCommitValue]] = {}

    # --- OffsetCommit / OffsetFetch (commitOffset, fetchOffsets) ----------------------------------
    def validate_offset_commit(self, req: OffsetCommitRequest) -> Errors | None:
        """OffsetMetadataManager.validateOffsetCommit + ClassicGroup.validateOffsetCommit (or
        ConsumerGroup.validateOffsetCommit for a KIP-848 group)."""
        consumer_group = self.consumer_groups.get(req.group_id)
        if consumer_group is not None:
            return _validate_consumer_group_commit(consumer_group, req)
        group = self.group_manager.groups.get(req.group_id)
        if group is None:
            if req.generation_id < 0:
                return None
            return Errors.GROUP_ID_NOT_FOUND if req.api_version >= 9 else Errors.ILLEGAL_GENERATION
        state = group.state
        if state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if req.generation_id < 0 and state == EMPTY:
            return None
        if req.generation_id >= 0 or req.member_id != "" or req.group_instance_id is not None:
            error = self.group_manager.validate_member(group, req.member_id, req.group_instance_id)
            if error != Errors.NONE:
                return error
            if req.generation_id != group.generation_id:
                return Errors.ILLEGAL_GENERATION
        elif state != EMPTY:
            return Errors.UNKNOWN_MEMBER_ID
        if state == COMPLETING_REBALANCE:
            return Errors.REBALANCE_IN_PROGRESS
        return None

    def commit_offset(self, out: Step, waiter: Parked, req: OffsetCommitRequest) -> None:
        error = self.validate_offset_commit(req)
        per_partition: dict[tuple[str, int], Errors] = {}
        if error is not None:
            for topic in req.topics:
                for part in topic.partitions:
                    per_partition[(topic.name, part.partition_index)] = error
        elif req.group_id in self.consumer_groups:
            self._write_commit(out, req, per_partition)
        else:
            group = self.group_manager.groups.get(req.group_id)
            created = group is None
            if group is None:
                group = self.group_manager.create_group(
                    out, req.group_id, "OffsetCommit to an unknown group"
                )
            elif group.is_in(STABLE, PREPARING_REBALANCE):
                member = group.members[req.member_id]
                self.group_manager.schedule_heartbeat(
                    out, group, member.member_id, member.session_timeout_ms
                )
            append_error = self._write_commit(out, req, per_partition)
            if append_error != Errors.NONE and created:
                self.group_manager.delete_group(out, group, "offset commit could not be written")
        # Lists, not generators: the response classes convert them to tuples anyway.
        topics = [
            OffsetCommitResponseTopic(
                topic.name,
                [
                    OffsetCommitResponsePartition(
                        p.partition_index, per_partition[(topic.name, p.partition_index)]
                    )
                    for p in topic.partitions
                ],
            )
            for topic in req.topics
        ]
        respond(
            out,
            self.node,
            waiter,
            OffsetCommitResponse(topics),
            req.group_id,
            req.member_id,
            req.generation_id,
        )

    def _write_commit(
        self, out: Step, req: OffsetCommitRequest, per_partition: dict[tuple[str, int], Errors]
    ) -> Errors:
        """The commit's records as one batch, then the offsets they set; the append's error
        (every partition gets it mapped, as GroupCoordinatorService.commitOffsets answers)."""
        entries = []
        for topic in req.topics:
            for part in topic.partitions:
                metadata = part.committed_metadata or ""
                key = (topic.name, part.partition_index)
                # OffsetMetadataManager.isMetadataInvalid compares String.length(), in
                # UTF-16 code units, not bytes, whatever the config's name says.
                if java_string_length(metadata) > self.config.offset_metadata_max_bytes:
                    per_partition[key] = Errors.OFFSET_METADATA_TOO_LARGE
                    continue
                per_partition[key] = Errors.NONE
                entries.append(
                    (
                        OffsetCommitKey(req.group_id, topic.name, part.partition_index),
                        OffsetCommitValue(
                            offset=part.committed_offset,
                            leader_epoch=part.committed_leader_epoch,
                            metadata=metadata,
                            commit_timestamp=out.now,
                        ),
                    )
                )
        append_error = self.writer.append(out, entries, req.group_id) if entries else Errors.NONE
        if append_error != Errors.NONE:
            mapped = operation_error_to_response_error(append_error)
            for key in per_partition:
                per_partition[key] = mapped
        else:
            stored = self.offsets.setdefault(req.group_id, {})
            for record_key, value in entries:
                tp = (record_key.topic, record_key.partition)
                stored.pop(tp, None)  # a re-committed partition moves to the end
                stored[tp] = value
        return append_error

    def fetch_offsets(self, out: Step, waiter: Parked, req: OffsetFetchRequest) -> None:
        consumer_group = self.consumer_groups.get(req.group_id)
        if consumer_group is not None:
            error = _validate_consumer_group_fetch(consumer_group, req)
            if error is not None:
                respond(out, self.node, waiter, OffsetFetchResponse(error), req.group_id)
                return
        stored = self.offsets.get(req.group_id, {})
        if req.topics is None:
            by_topic: dict[str, list[OffsetFetchResponsePartition]] = {}
            for (topic, partition), value in sorted(stored.items()):
                by_topic.setdefault(topic, []).append(
                    OffsetFetchResponsePartition(
                        partition, value.offset, value.leader_epoch, value.metadata
                    )
                )
            topics = [OffsetFetchResponseTopic(t, ps) for t, ps in by_topic.items()]
        else:
            topics = []
            for t in req.topics:
                partitions = []
                for i in t.partition_indexes:
                    found = stored.get((t.name, i))
                    partitions.append(
                        OffsetFetchResponsePartition(i)
                        if found is None
                        else OffsetFetchResponsePartition(
                            i, found.offset, found.leader_epoch, found.metadata
                        )
                    )
                topics.append(OffsetFetchResponseTopic(t.name, partitions))
        respond(out, self.node, waiter, OffsetFetchResponse(Errors.NONE, topics), req.group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return {k: v.offset for k, v in self.offsets.get(group_id, {}).items()}

    # --- deletion, expiry and replay (cleanupExpiredOffsets, replay) ------------------------------

    def on_partitions_deleted(self, out: Step, topic: str) -> None:
        """OffsetMetadataManager.onPartitionsDeleted for every partition of a deleted topic.

        Every group's committed offsets of ``topic`` get tombstones, written as one batch (the
        shard's one CoordinatorResult).
        """
        doomed = [
            (group_id, tp)
            for group_id in sorted(self.offsets)
            for tp in self.offsets[group_id]
            if tp[0] == topic
        ]
        if not doomed:
            return
        entries = [(OffsetCommitKey(group_id, t, p), None) for group_id, (t, p) in doomed]
        if self.writer.append(out, entries, doomed[0][0]) == Errors.NONE:
            counts: dict[str, int] = {}
            for group_id, tp in doomed:
                del self.offsets[group_id][tp]
                counts[group_id] = counts.get(group_id, 0) + 1
            for group_id, count in counts.items():
                out.event(
                    "offsets_deleted",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group_id,
                    topic=topic,
                    count=count,
                )

    def expired_offsets(self, group: ClassicGroup, now_ms: int) -> list[tuple[str, int]]:
        """cleanupExpiredOffsets for one group: the partitions whose offsets expired by now.

        An Empty group with a protocol type expires all its offsets together, counted from when
        it became Empty; a simple group each offset from its commit time; a Stable consumer group
        with known subscriptions only the offsets of topics no member subscribes to.
        """
        retention = self.config.offsets_retention_ms
        expired = []
        for (topic, partition), value in self.offsets.get(group.group_id, {}).items():
            if group.is_in(EMPTY) and group.protocol_type:
                base = group.state_timestamp_ms
            elif group.is_in(EMPTY):
                base = value.commit_timestamp
            elif group.is_in(STABLE) and group.subscribed_topics is not None:
                if topic in group.subscribed_topics:
                    continue
                base = value.commit_timestamp
            else:
                continue
            if now_ms - base >= retention:
                expired.append((topic, partition))
        return expired

    def offset_count(self, group_id: str) -> int:
        return len(self.offsets.get(group_id, {}))

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> None:
        """Forget offsets whose tombstones were written."""
        stored = self.offsets[group_id]
        for tp in partitions:
            del stored[tp]

    def delete_all_offsets(self, group_id: str) -> None:
        """deleteAllOffsets, once the tombstones are written (the group is being deleted)."""
        self.offsets.pop(group_id, None)

    def replay(self, key: OffsetCommitKey, value: OffsetCommitValue) -> None:
        self.offsets.setdefault(key.group, {})[(key.topic, key.partition)] = value


def _validate_consumer_group_commit(
    group: ConsumerGroup, req: OffsetCommitRequest
) -> Errors | None:
    """ConsumerGroup.validateOffsetCommit: -1 with no members is the admin's (or a group-less
    consumer's) commit; otherwise the member must exist, use OffsetCommit v9+, and commit at its
    current epoch (STALE_MEMBER_EPOCH otherwise)."""
    if req.generation_id < 0 and not group.members:
        return None
    member = group.members.get(req.member_id)
    if member is None:
        return Errors.UNKNOWN_MEMBER_ID
    if req.api_version < 9:
        return Errors.UNSUPPORTED_VERSION
    if req.generation_id != member.member_epoch:
        return Errors.STALE_MEMBER_EPOCH
    return None


def _validate_consumer_group_fetch(group: ConsumerGroup, req: OffsetFetchRequest) -> Errors | None:
    """ConsumerGroup.validateOffsetFetch: a fetch without member id and epoch is accepted."""
    if req.member_id is None and req.member_epoch < 0:
        return None
    member = group.members.get(req.member_id or "")
    if member is None:
        return Errors.UNKNOWN_MEMBER_ID
    if req.member_epoch != member.member_epoch:
        return Errors.STALE_MEMBER_EPOCH
    return None
