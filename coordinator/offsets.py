"""OffsetCommit / OffsetFetch, offset expiry and DeleteGroups (§7.1, §7.2, §7.5), mixed into GroupShard."""

from __future__ import annotations

import struct

from coordinator.effects import Effect
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
from coordinator.log import operation_error_to_response_error
from coordinator.placement import java_string_length
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
from coordinator.records import GroupMetadataKey, OffsetCommitKey, OffsetCommitValue
from coordinator.timeline_order import capacity_for, iteration_order


def parse_subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """Topics of a ConsumerProtocolSubscription (the version-0 prefix: int16 version, topics).

    Kafka parses this only to know which offsets of a Stable consumer group may expire; a parse
    failure just disables that (None).
    """
    try:
        (version,) = struct.unpack_from(">h", metadata, 0)
        if version < 0:
            return None
        (count,) = struct.unpack_from(">i", metadata, 2)
        if count < 0 or count > len(metadata):
            return None
        pos = 6
        topics = []
        for _ in range(count):
            (n,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if n < 0 or pos + n > len(metadata):
                return None
            topics.append(metadata[pos : pos + n].decode("utf-8"))
            pos += n
        return frozenset(topics)
    except (struct.error, UnicodeDecodeError):
        return None


class OffsetsMixin:
    """OffsetMetadataManager for classic groups, plus the expiry job and DeleteGroups."""

    # --- OffsetCommit / OffsetFetch (§7.1, §7.2) --------------------------------------------------

    def _commit_error(self, req: OffsetCommitRequest) -> Errors | None:
        """OffsetMetadataManager.validateOffsetCommit + ClassicGroup.validateOffsetCommit."""
        group = self.groups.get(req.group_id)
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
            error = self._validate_member(group, req.member_id, req.group_instance_id)
            if error != Errors.NONE:
                return error
            if req.generation_id != group.generation_id:
                return Errors.ILLEGAL_GENERATION
        elif state != EMPTY:
            return Errors.UNKNOWN_MEMBER_ID
        if state == COMPLETING_REBALANCE:
            return Errors.REBALANCE_IN_PROGRESS
        return None

    def _commit(self, waiter: Parked, req: OffsetCommitRequest) -> None:
        error = self._commit_error(req)
        per_partition: dict[tuple[str, int], Errors] = {}
        if error is not None:
            for topic in req.topics:
                for part in topic.partitions:
                    per_partition[(topic.name, part.partition_index)] = error
        else:
            group = self.groups.get(req.group_id)
            created = group is None
            if group is None:
                group = self._create_group(req.group_id, "OffsetCommit to an unknown group")
            elif group.is_in(STABLE, PREPARING_REBALANCE):
                member = group.members[req.member_id]
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
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
                                commit_timestamp=self._now,
                            ),
                        )
                    )
            append_error = self._append(entries, req.group_id) if entries else Errors.NONE
            if append_error != Errors.NONE:
                # The whole request fails (GroupCoordinatorService.commitOffsets): every partition.
                mapped = operation_error_to_response_error(append_error)
                for key in per_partition:
                    per_partition[key] = mapped
                if created:
                    self._drop_group(group, "offset commit could not be written")
            else:
                stored = self.offsets.setdefault(req.group_id, {})
                for key, value in entries:
                    tp = (key.topic, key.partition)
                    stored.pop(tp, None)  # a re-committed partition moves to the end
                    stored[tp] = value
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
        self._reply(
            waiter, OffsetCommitResponse(topics), req.group_id, req.member_id, req.generation_id
        )

    def _fetch(self, waiter: Parked, req: OffsetFetchRequest) -> None:
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
                    value = stored.get((t.name, i))
                    partitions.append(
                        OffsetFetchResponsePartition(i)
                        if value is None
                        else OffsetFetchResponsePartition(
                            i, value.offset, value.leader_epoch, value.metadata
                        )
                    )
                topics.append(OffsetFetchResponseTopic(t.name, partitions))
        self._reply(waiter, OffsetFetchResponse(Errors.NONE, topics), req.group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return {k: v.offset for k, v in self.offsets.get(group_id, {}).items()}

    def delete_offsets_of_topic(self, topic: str, now_ms: int) -> list[Effect]:
        """OffsetMetadataManager.onPartitionsDeleted for every partition of a deleted topic.

        Every group's committed offsets of ``topic`` get tombstones, written as one batch (the
        shard's one CoordinatorResult). A shard still loading is skipped, as Kafka's write to an
        inactive coordinator fails: its offsets come back from the log.
        """
        self._begin(now_ms)
        if self.loading:
            return self._end()
        doomed = [
            (group_id, tp)
            for group_id in sorted(self.offsets)
            for tp in self.offsets[group_id]
            if tp[0] == topic
        ]
        if not doomed:
            return self._end()
        entries = [(OffsetCommitKey(group_id, t, p), None) for group_id, (t, p) in doomed]
        if self._append(entries, doomed[0][0]) == Errors.NONE:
            counts: dict[str, int] = {}
            for group_id, tp in doomed:
                del self.offsets[group_id][tp]
                counts[group_id] = counts.get(group_id, 0) + 1
            for group_id, count in counts.items():
                self.log.info(
                    "offsets_deleted",
                    t_ms=now_ms,
                    node=self.node,
                    group_id=group_id,
                    topic=topic,
                    count=count,
                )
        return self._end()

    # --- expiry and deletion (§7.5) ---------------------------------------------------------------

    def _ensure_expiry_timer(self) -> None:
        """GroupCoordinatorShard.scheduleGroupMetadataExpiration, in Kafka's phase.

        Kafka schedules the job when the shard is loaded (onLoaded) and every
        ``offsets.retention.check.interval.ms`` after each run, so it runs at load time + k x
        interval. Here it is armed only while the shard holds groups (a run over no groups
        writes nothing), for the next of those times after now.
        """
        key = self._key("expire-offsets", str(self.partition))
        if key not in self.timers and self.groups and not self.loading:
            interval = self.config.offsets_retention_check_interval_ms
            since_load = self._now - self.loaded_ms
            self._set_timer(key, interval - since_load % interval, ("expire-offsets",))

    def _expire_offsets(self) -> None:
        """GroupCoordinatorShard.cleanupGroupMetadata: the expired offsets' tombstones, and those
        of the groups left Empty without offsets, go out as one batch (one CoordinatorResult for
        the whole shard); if it fails, nothing expires in this run."""
        retention = self.config.offsets_retention_ms
        entries: list[tuple] = []
        expired_by_group: list[tuple[str, list[tuple[str, int]]]] = []
        doomed: list[ClassicGroup] = []
        # cleanupGroupMetadata visits groupIds() in the TimelineHashMap's order
        capacity = capacity_for(self.groups_high_water)
        for group_id in iteration_order(self.groups, capacity):
            group = self.groups[group_id]
            stored = self.offsets.get(group_id, {})
            expired = []
            for (topic, partition), value in stored.items():
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
                if self._now - base >= retention:
                    expired.append((topic, partition))
            if expired:
                entries.extend((OffsetCommitKey(group_id, t, p), None) for t, p in expired)
                expired_by_group.append((group_id, expired))
            if group.is_in(EMPTY) and len(expired) == len(stored):
                entries.append((GroupMetadataKey(group_id), None))
                doomed.append(group)
        if entries and self._append(entries, entries[0][0].group) == Errors.NONE:
            for group_id, expired in expired_by_group:
                stored = self.offsets[group_id]
                for tp in expired:
                    del stored[tp]
                self.log.info(
                    "offsets_expired",
                    t_ms=self._now,
                    node=self.node,
                    group_id=group_id,
                    count=len(expired),
                )
            for group in doomed:
                self._drop_group(group, "empty group with no offsets left")
        self._ensure_expiry_timer()

    def delete_groups(self, group_ids: list[str], now_ms: int) -> tuple[list[Errors], list[Effect]]:
        """GroupCoordinatorShard.deleteGroups: the result of each group, in order, and the effects.

        Each group is validated (ClassicGroup.validateDeleteGroup); the tombstones of the valid
        ones (each group's offsets, then the group) go out as ONE write, the shard's one
        CoordinatorResult. If that write fails, GroupCoordinatorService answers every group of
        the shard with the mapped error, the ones that failed validation included.
        """
        self._begin(now_ms)
        results: list[Errors] = []
        doomed: list[ClassicGroup] = []
        entries: list[tuple] = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None or group.is_in(DEAD):
                results.append(Errors.GROUP_ID_NOT_FOUND)
            elif not group.is_in(EMPTY):
                results.append(Errors.NON_EMPTY_GROUP)
            else:
                results.append(Errors.NONE)
                doomed.append(group)
                entries.extend(
                    (OffsetCommitKey(group_id, t, p), None)
                    for (t, p) in self.offsets.get(group_id, {})
                )
                entries.append((GroupMetadataKey(group_id), None))
        if entries:
            error = self._append(entries, doomed[0].group_id)
            if error != Errors.NONE:
                return [operation_error_to_response_error(error)] * len(group_ids), self._end()
        for group in doomed:
            self._drop_group(group, "DeleteGroups")
        return results, self._end()
