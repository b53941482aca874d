"""Committed offsets of one ``__consumer_offsets`` partition's groups: Kafka's
OffsetMetadataManager (classic groups) on the partition's leader.

OffsetCommit and OffsetFetch (commitOffset, fetchOffsets), TxnOffsetCommit
(commitTransactionalOffset) and the transaction markers that settle its pending offsets
(replayEndTransactionMarker), the tombstones of a deleted topic's offsets (onPartitionsDeleted),
the offsets that expire (cleanupExpiredOffsets) and replay. It asks the GroupMetadataManager about
the groups it validates a commit against, as Kafka's does.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import ConsumerGroup, ConsumerGroupMember
from coordinator.errors import NO_ERROR, Errors
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
from coordinator.pending_offsets import PendingOffset, PendingTransactionalOffsets
from coordinator.protocol import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from coordinator.records import (
    NO_PRODUCER_ID,
    ControlRecordKey,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    RecordKey,
    RecordValue,
)
from coordinator.result import Step
from coordinator.runtime import PartitionWriter, respond
from coordinator.timeline_order import GroupOffsetsOrder


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
        # {group: {(topic, partition): value}}, each group's in insertion order (a re-commit
        # keeps its place); ``order`` gives Kafka's iteration order (kafka_order)
        self.offsets: dict[str, dict[tuple[str, int], OffsetCommitValue]] = {}
        self.order: dict[str, GroupOffsetsOrder] = {}
        # OffsetAndMetadata.recordOffset of each committed offset (a marker materializes a
        # pending offset only over an older one); entries of deleted offsets are never read.
        self.record_offsets: dict[str, dict[tuple[str, int], int]] = {}
        self.pending = PendingTransactionalOffsets()

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
        state = group.model.state  # not group.state: one property call less per commit
        if state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if req.generation_id < 0 and state == EMPTY:
            return None
        if req.generation_id >= 0 or req.member_id != "" or req.group_instance_id is not None:
            error = self.group_manager.validate_member(group, req.member_id, req.group_instance_id)
            if error != NO_ERROR:
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
            if append_error != NO_ERROR and created:
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

    def _commit_entries(
        self,
        out: Step,
        req: OffsetCommitRequest | TxnOffsetCommitRequest,
        per_partition: dict[tuple[str, int], Errors],
        *,
        keep_leader_epoch: bool,
    ) -> list[tuple[OffsetCommitKey, OffsetCommitValue]]:
        """The offset records a commit writes (OffsetCommit and TxnOffsetCommit alike); each
        partition's verdict goes in ``per_partition``: OFFSET_METADATA_TOO_LARGE, or NONE for one
        that gets a record."""
        entries: list[tuple[OffsetCommitKey, OffsetCommitValue]] = []
        for topic in req.topics:
            for part in topic.partitions:
                metadata = part.committed_metadata or ""
                key = (topic.name, part.partition_index)
                # OffsetMetadataManager.isMetadataInvalid compares String.length(), in
                # UTF-16 code units, not bytes, whatever the config's name says; a string of n
                # characters has at most 2n of them, so a short one needs no count.
                limit = self.config.offset_metadata_max_bytes
                if 2 * len(metadata) > limit and java_string_length(metadata) > limit:
                    per_partition[key] = Errors.OFFSET_METADATA_TOO_LARGE
                    continue
                per_partition[key] = NO_ERROR
                entries.append(
                    (
                        OffsetCommitKey(req.group_id, topic.name, part.partition_index),
                        OffsetCommitValue(
                            offset=part.committed_offset,
                            leader_epoch=part.committed_leader_epoch if keep_leader_epoch else -1,
                            metadata=metadata,
                            commit_timestamp=out.now,
                        ),
                    )
                )
        return entries

    def _write_commit(
        self, out: Step, req: OffsetCommitRequest, per_partition: dict[tuple[str, int], Errors]
    ) -> Errors:
        """The commit's records as one batch, then the offsets they set; the append's error
        (every partition gets it mapped, as GroupCoordinatorService.commitOffsets answers)."""
        entries = self._commit_entries(out, req, per_partition, keep_leader_epoch=True)
        append_error, records = (
            self.writer.append_records(out, entries, req.group_id) if entries else (NO_ERROR, ())
        )
        if append_error != NO_ERROR:
            mapped = operation_error_to_response_error(append_error)
            for key in per_partition:
                per_partition[key] = mapped
        else:
            for (record_key, value), record in zip(entries, records, strict=True):
                self._put(
                    req.group_id, (record_key.topic, record_key.partition), value, record.offset
                )
        return append_error

    def fetch_offsets(self, out: Step, waiter: Parked, req: OffsetFetchRequest) -> None:
        """fetchOffsets / fetchAllOffsets. With ``require_stable`` a partition that has a pending
        transactional offset is answered UNSTABLE_OFFSET_COMMIT (the client retries); an
        unknown group (validateOffsetFetch) has no offsets to show."""
        consumer_group = self.consumer_groups.get(req.group_id)
        if consumer_group is not None:
            error = _validate_consumer_group_fetch(consumer_group, req)
            if error is not None:
                respond(out, self.node, waiter, OffsetFetchResponse(error), req.group_id)
                return
        group_id = req.group_id
        known = group_id in self.group_manager.groups or consumer_group is not None
        stored = self.offsets.get(group_id, {}) if known else {}
        unstable = req.require_stable and self.pending.has_open_transactions(group_id)
        if req.topics is None:
            by_topic: dict[str, list[OffsetFetchResponsePartition]] = {}
            for topic, partition in self.kafka_order(group_id) if stored else ():
                value = stored[(topic, partition)]
                by_topic.setdefault(topic, []).append(
                    _unstable(partition)
                    if unstable and self.pending.has_pending(group_id, (topic, partition))
                    else OffsetFetchResponsePartition(
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
                    if unstable and self.pending.has_pending(group_id, (t.name, i)):
                        partitions.append(_unstable(i))
                    elif found is None:
                        partitions.append(OffsetFetchResponsePartition(i))
                    else:
                        partitions.append(
                            OffsetFetchResponsePartition(
                                i, found.offset, found.leader_epoch, found.metadata
                            )
                        )
                topics.append(OffsetFetchResponseTopic(t.name, partitions))
        respond(out, self.node, waiter, OffsetFetchResponse(NO_ERROR, topics), req.group_id)

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
        # then the pending transactional offsets of the topic (a tombstone each, as Kafka's)
        doomed.extend(
            (group_id, tp)
            for by_group in self.pending.by_producer.values()
            for group_id, tps in by_group.items()
            for tp in tps
            if tp[0] == topic
        )
        if not doomed:
            return
        entries = [(OffsetCommitKey(group_id, t, p), None) for group_id, (t, p) in doomed]
        if self.writer.append(out, entries, doomed[0][0]) == NO_ERROR:
            counts: dict[str, int] = {}
            for group_id, tp in doomed:
                self._replay_tombstone(group_id, tp)
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
        stored = self.offsets.get(group.group_id, {})
        for topic, partition in self.kafka_order(group.group_id) if stored else ():
            value = stored[(topic, partition)]
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
            if now_ms - base >= retention and not (
                self.pending.open_by_group
                and self.pending.has_pending(group.group_id, (topic, partition))
            ):
                expired.append((topic, partition))
        return expired

    def expired_consumer_group_offsets(
        self, group: ConsumerGroup, now_ms: int
    ) -> list[tuple[str, int]]:
        """cleanupExpiredOffsets for a KIP-848 group (ConsumerGroup.offsetExpirationCondition:
        from the commit time; isSubscribedToTopic: a topic a member subscribes to keeps its
        offsets)."""
        retention = self.config.offsets_retention_ms
        stored = self.offsets.get(group.group_id, {})
        expired = []
        for topic, partition in self.kafka_order(group.group_id) if stored else ():
            if topic in group.subscribed_topic_names:
                continue
            if now_ms - stored[(topic, partition)].commit_timestamp >= retention and not (
                self.pending.open_by_group
                and self.pending.has_pending(group.group_id, (topic, partition))
            ):
                expired.append((topic, partition))
        return expired

    def all_offsets_expired(self, group_id: str, expired: list[tuple[str, int]]) -> bool:
        """cleanupExpiredOffsets' answer: whether the group may be deleted. True for a group
        without committed offsets; else when all expired and no transaction of the group is
        open (a pending offset may still become committed)."""
        count = self.offset_count(group_id)
        if count == 0:
            return True
        return len(expired) == count and not self.pending.has_open_transactions(group_id)

    def offset_count(self, group_id: str) -> int:
        return len(self.offsets.get(group_id, {}))

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> None:
        """Forget offsets whose tombstones were written."""
        for tp in partitions:
            self._replay_tombstone(group_id, tp)

    def all_offsets_tombstones(self, group_id: str) -> list[tuple[RecordKey, RecordValue]]:
        """deleteAllOffsets' records: a tombstone per committed offset, then one per partition
        that only a pending transactional offset holds."""
        stored = self.offsets.get(group_id, {})
        entries: list[tuple[RecordKey, RecordValue]] = [
            (OffsetCommitKey(group_id, t, p), None)
            for (t, p) in (self.kafka_order(group_id) if stored else ())
        ]
        entries.extend(
            (OffsetCommitKey(group_id, t, p), None)
            for (t, p) in self.pending.partitions(group_id)
            if (t, p) not in stored
        )
        return entries

    def delete_all_offsets(self, group_id: str, *, pending: bool = True) -> None:
        """deleteAllOffsets, once the tombstones are written (the group is being deleted);
        ``pending``: its pending transactional offsets got tombstones too (DeleteGroups; the
        cleanup deletes a group without writing any for them)."""
        self.offsets.pop(group_id, None)
        self.order.pop(group_id, None)
        self.record_offsets.pop(group_id, None)
        if pending and self.pending.has_open_transactions(group_id):
            for tp in list(self.pending.partitions(group_id)):
                self.pending.remove_partition(group_id, tp)

    def replay(
        self, key: OffsetCommitKey, value: OffsetCommitValue, record_offset: int = -1
    ) -> None:
        self._put(key.group, (key.topic, key.partition), value, record_offset)

    def replay_log(self, records: tuple[Record, ...], now_ms: int) -> None:
        """The load: every offset record and transaction marker of the partition, in log order
        (OffsetMetadataManager.replay, replayEndTransactionMarker), so that the offsets, the
        open transactions and Kafka's map order are what they were on the old leader."""
        scratch = Step(now_ms)  # a replay logs nothing
        for record in records:
            key, value = record.key, record.value
            if isinstance(key, ControlRecordKey):
                self.replay_end_transaction_marker(
                    scratch, record.producer_id, key.type == "COMMIT"
                )
            elif isinstance(key, OffsetCommitKey):
                tp = (key.topic, key.partition)
                if not isinstance(value, OffsetCommitValue):
                    self._replay_tombstone(key.group, tp)
                elif record.producer_id == NO_PRODUCER_ID:
                    self._put(key.group, tp, value, record.offset)
                else:
                    self.pending.put(
                        record.producer_id, key.group, tp, PendingOffset(value, record.offset)
                    )

    def kafka_order(self, group_id: str) -> list[tuple[str, int]]:
        """The group's committed partitions in the order of Kafka's offsets map (by topic, then
        partition, each a TimelineHashMap: coordinator/timeline_order.py)."""
        order = self.order.get(group_id)
        return order.order(self.offsets[group_id]) if order is not None else []

    def _put(
        self, group_id: str, tp: tuple[str, int], value: OffsetCommitValue, record_offset: int
    ) -> None:
        """Offsets.put: a new partition joins the maps, a known one is replaced in place."""
        stored = self.offsets.setdefault(group_id, {})
        if tp in stored:
            self.order[group_id].replaced(tp[0])
        else:
            order = self.order.get(group_id)
            if order is None:
                order = self.order[group_id] = GroupOffsetsOrder()
            order.added(tp[0])
        stored[tp] = value
        self.record_offsets.setdefault(group_id, {})[tp] = record_offset

    def _replay_tombstone(self, group_id: str, tp: tuple[str, int]) -> None:
        """replay of an offset tombstone: the committed offset and every pending one go."""
        stored = self.offsets.get(group_id)
        if (
            stored is not None
            and stored.pop(tp, None) is not None
            and self.order[group_id].removed(tp[0])
        ):
            del self.order[group_id]
        if self.pending.open_by_group:
            self.pending.remove_partition(group_id, tp)

    # --- transactional offsets (commitTransactionalOffset, replayEndTransactionMarker) -----------

    def validate_transactional_offset_commit(self, req: TxnOffsetCommitRequest) -> Errors | None:
        """OffsetMetadataManager.validateTransactionalOffsetCommit + ClassicGroup.validateOffsetCommit
        with ``isTransactional``: no REBALANCE_IN_PROGRESS while CompletingRebalance and no
        UNKNOWN_MEMBER_ID for a request without member and generation (the older versions carry
        neither); an unknown group is ILLEGAL_GENERATION at every version. A KIP-848 group
        validates as ConsumerGroup.validateOffsetCommit with ``isTransactional`` (no OffsetCommit
        version floor), its STALE_MEMBER_EPOCH answered as ILLEGAL_GENERATION."""
        consumer_group = self.consumer_groups.get(req.group_id)
        if consumer_group is not None:
            return _validate_consumer_group_txn_commit(consumer_group, req)
        group = self.group_manager.groups.get(req.group_id)
        if group is None:
            return None if req.generation_id < 0 else Errors.ILLEGAL_GENERATION
        if group.state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if req.generation_id < 0 and group.state == EMPTY:
            return None
        if req.generation_id >= 0 or req.member_id != "" or req.group_instance_id is not None:
            error = self.group_manager.validate_member(group, req.member_id, req.group_instance_id)
            if error != NO_ERROR:
                return error
            if req.generation_id != group.generation_id:
                return Errors.ILLEGAL_GENERATION
        return None

    def commit_transactional_offset(
        self, out: Step, waiter: Parked, req: TxnOffsetCommitRequest
    ) -> None:
        """commitTransactionalOffset: the offsets are written with the producer id and stay
        pending (invisible to OffsetFetch) until the transaction's marker. Unlike OffsetCommit,
        it does not keep the member's session alive."""
        error = self.validate_transactional_offset_commit(req)
        per_partition: dict[tuple[str, int], Errors] = {}
        if error is not None:
            for topic in req.topics:
                for part in topic.partitions:
                    per_partition[(topic.name, part.partition_index)] = error
        else:
            # a simple classic group for an unknown group id (never beside a consumer group)
            created = None
            if (
                req.group_id not in self.consumer_groups
                and req.group_id not in self.group_manager.groups
            ):
                created = self.group_manager.create_group(
                    out, req.group_id, "TxnOffsetCommit to an unknown group"
                )
            # an ignorable field: the leader epoch is not on the wire below v2
            entries = self._commit_entries(
                out, req, per_partition, keep_leader_epoch=req.api_version >= 2
            )
            append_error, records = (
                self.writer.append_records(out, entries, req.group_id, req.producer_id)
                if entries
                else (NO_ERROR, ())
            )
            if append_error != NO_ERROR:
                mapped = operation_error_to_response_error(append_error)
                for key in per_partition:
                    per_partition[key] = mapped
                if created is not None:
                    self.group_manager.delete_group(
                        out, created, "offset commit could not be written"
                    )
            else:
                for record in records:
                    record_key, value = record.key, record.value
                    assert isinstance(record_key, OffsetCommitKey)
                    assert isinstance(value, OffsetCommitValue)
                    self.pending.put(
                        req.producer_id,
                        req.group_id,
                        (record_key.topic, record_key.partition),
                        PendingOffset(value, record.offset),
                    )
        topics = [
            TxnOffsetCommitResponseTopic(
                topic.name,
                [
                    TxnOffsetCommitResponsePartition(
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
            TxnOffsetCommitResponse(topics),
            req.group_id,
            req.member_id,
            req.generation_id,
        )

    def replay_end_transaction_marker(self, out: Step, producer_id: int, commit: bool) -> None:
        """replayEndTransactionMarker: the producer's pending offsets become committed (COMMIT;
        each only if its record is newer than the committed offset's, so that a later plain
        commit wins) or are dropped (ABORT)."""
        result = "COMMIT" if commit else "ABORT"
        for group_id, pending in self.pending.end(producer_id).items():
            count = 0
            if commit:
                stored = self.offsets.get(group_id, {})
                record_offsets = self.record_offsets.get(group_id, {})
                for tp, offset in pending.items():
                    if tp not in stored or offset.record_offset > record_offsets.get(tp, -1):
                        self._put(group_id, tp, offset.value, offset.record_offset)
                        count += 1
            else:
                count = len(pending)
            out.event(
                "txn_offsets_completed",
                t_ms=out.now,
                node=self.node,
                group_id=group_id,
                producer_id=producer_id,
                result=result,
                count=count,
            )


def _unstable(partition: int) -> OffsetFetchResponsePartition:
    """The answer for a partition with a pending transactional offset under require_stable."""
    return OffsetFetchResponsePartition(partition, error_code=Errors.UNSTABLE_OFFSET_COMMIT)


def _validate_consumer_group_commit(
    group: ConsumerGroup, req: OffsetCommitRequest
) -> Errors | None:
    """ConsumerGroup.validateOffsetCommit: -1 with no members is the admin's (or a group-less
    consumer's) commit; otherwise the member must exist, use OffsetCommit v9+ unless it speaks
    the classic protocol, and commit at its current epoch (validateMemberEpoch: a classic member
    gets ILLEGAL_GENERATION, a consumer-protocol one STALE_MEMBER_EPOCH)."""
    if req.generation_id < 0 and not group.members:
        return None
    member = group.members.get(req.member_id)
    if member is None:
        return Errors.UNKNOWN_MEMBER_ID
    if not member.use_classic_protocol and req.api_version < 9:
        return Errors.UNSUPPORTED_VERSION
    return _validate_member_epoch(member, req.generation_id)


def _validate_consumer_group_txn_commit(
    group: ConsumerGroup, req: TxnOffsetCommitRequest
) -> Errors | None:
    """ConsumerGroup.validateOffsetCommit with ``isTransactional`` (the manager's
    validateTransactionalOffsetCommit turns StaleMemberEpochException into ILLEGAL_GENERATION:
    a transactional producer knows only generations)."""
    if req.generation_id < 0 and not group.members:
        return None
    member = group.members.get(req.member_id)
    if member is None:
        return Errors.UNKNOWN_MEMBER_ID
    error = _validate_member_epoch(member, req.generation_id)
    return Errors.ILLEGAL_GENERATION if error is Errors.STALE_MEMBER_EPOCH else error


def _validate_member_epoch(member: ConsumerGroupMember, received: int) -> Errors | None:
    """ConsumerGroup.validateMemberEpoch."""
    if received == member.member_epoch:
        return None
    return Errors.ILLEGAL_GENERATION if member.use_classic_protocol else Errors.STALE_MEMBER_EPOCH


def _validate_consumer_group_fetch(group: ConsumerGroup, req: OffsetFetchRequest) -> Errors | None:
    """ConsumerGroup.validateOffsetFetch: a fetch without member id and epoch is accepted."""
    if req.member_id is None and req.member_epoch < 0:
        return None
    member = group.members.get(req.member_id or "")
    if member is None:
        return Errors.UNKNOWN_MEMBER_ID
    return _validate_member_epoch(member, req.member_epoch)
