"""One ``__consumer_offsets`` partition's group coordinator on the partition's leader: Kafka's
GroupCoordinatorShard.

The shard composes what Kafka's does: a GroupMetadataManager (the classic groups), an
OffsetMetadataManager (their committed offsets), the CoordinatorTimer they share, the
PartitionWriter they write through and the CoordinatorLoader that replays the partition. It
routes each request and each fired timer to its manager through a table, and runs the jobs that
span both managers: loading and unloading, the periodic cleanup (cleanupGroupMetadata), deleting
groups and a deleted topic's offsets.

Every entry point takes the simulated time and returns a CoordinatorResult (effects and events);
inside a call, everything that emits writes into that call's ``Step``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import ConsumerGroup
from coordinator.consumer_group_manager import ConsumerGroupManager
from coordinator.errors import NO_ERROR, Errors
from coordinator.group import DEAD, EMPTY, ClassicGroup, Parked
from coordinator.group_conversion import consumer_group_tombstones
from coordinator.group_metadata_manager import GroupMetadataManager
from coordinator.loading import CoordinatorLoader
from coordinator.log import OffsetsLog, operation_error_to_response_error
from coordinator.offset_metadata_manager import OffsetMetadataManager
from coordinator.protocol import (
    ConsumerGroupDescribedGroup,
    ConsumerGroupHeartbeatRequest,
    DescribedGroup,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListedGroup,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
    request_type,
)
from coordinator.records import GroupMetadataKey, OffsetCommitKey, RecordKey, RecordValue
from coordinator.result import NO_RESULT, CoordinatorResult, Step
from coordinator.runtime import PartitionWriter
from coordinator.timeline_order import capacity_for, iteration_order
from coordinator.timers import (
    CompleteInitialJoin,
    CompleteJoin,
    CoordinatorTimer,
    ExpireConsumerGroupJoin,
    ExpireConsumerGroupRebalance,
    ExpireConsumerGroupSession,
    ExpireConsumerGroupSync,
    ExpireHeartbeat,
    ExpireOffsets,
    ExpireOffsetsKey,
    ExpirePendingSync,
    FinishLoad,
    LoadKey,
    ShardTimerKey,
)
from coordinator.topology import Topology
from coordinator.views import ConsumerGroupView, GroupView

_CLASSIC_GROUP_APIS = frozenset(
    (JoinGroupRequest, SyncGroupRequest, HeartbeatRequest, LeaveGroupRequest)
)


class GroupCoordinatorShard:
    """The coordinator of the groups of one offsets partition, on the broker leading it."""

    def __init__(
        self,
        *,
        partition: int,
        node: str,
        config: CoordinatorConfig,
        log: OffsetsLog,
        rng: random.Random,
        topology: Topology,
    ) -> None:
        self.partition = partition
        self.node = node
        self.config = config
        self.loading = True
        self.loaded_ms = 0
        # empty consumer groups removed by a classic JoinGroup, not yet carried by a write
        self._unwritten_removals: dict[
            str, ConsumerGroup
        ] = {}  # when the load completed: the cleanup job's phase (onLoaded)
        self.timer = CoordinatorTimer(node, partition)
        self.writer = PartitionWriter(log, node, partition)
        self.loader = CoordinatorLoader(log, partition)
        self.group_manager = GroupMetadataManager(
            node=node,
            partition=partition,
            config=config,
            rng=rng,
            timer=self.timer,
            writer=self.writer,
            on_group_created=self._ensure_cleanup_timer,
        )
        self.consumer_group_manager = ConsumerGroupManager(
            node=node,
            partition=partition,
            config=config,
            rng=rng,
            timer=self.timer,
            writer=self.writer,
            topology=topology,
            classic=self.group_manager,
        )
        self.offset_manager = OffsetMetadataManager(
            node=node,
            config=config,
            writer=self.writer,
            group_manager=self.group_manager,
            consumer_groups=self.consumer_group_manager.groups,
        )
        groups, offsets = self.group_manager, self.offset_manager
        consumer_groups = self.consumer_group_manager
        # The group APIs, by request type (a subclass of a request type is handled as that type).
        self._handlers: dict[type, Callable[[Step, Parked, Any], None]] = {
            JoinGroupRequest: groups.classic_group_join,
            SyncGroupRequest: groups.classic_group_sync,
            HeartbeatRequest: groups.classic_group_heartbeat,
            LeaveGroupRequest: groups.classic_group_leave,
            OffsetCommitRequest: offsets.commit_offset,
            OffsetFetchRequest: offsets.fetch_offsets,
            TxnOffsetCommitRequest: offsets.commit_transactional_offset,
            ConsumerGroupHeartbeatRequest: consumer_groups.heartbeat,
        }
        # What each timer operation runs (coordinator/timers.py).
        self._timer_operations: dict[type, Callable[[Step, Any], None]] = {
            ExpireHeartbeat: groups.on_heartbeat_expired,
            CompleteInitialJoin: groups.on_initial_join_delay,
            CompleteJoin: groups.on_join_timeout,
            ExpirePendingSync: groups.on_sync_timeout,
            FinishLoad: self._on_load_finished,
            ExpireOffsets: self._on_cleanup,
            ExpireConsumerGroupSession: consumer_groups.on_session_expired,
            ExpireConsumerGroupRebalance: consumer_groups.on_rebalance_timeout,
            ExpireConsumerGroupJoin: consumer_groups.on_join_timeout,
            ExpireConsumerGroupSync: consumer_groups.on_sync_timeout,
        }

    # --- requests and timers ----------------------------------------------------------------------

    def handle(
        self, src: str, correlation_id: int, request: object, now_ms: int
    ) -> CoordinatorResult:
        """A group API request the service routed here (this shard is loaded)."""
        out = Step(now_ms)
        self.handle_into(out, src, correlation_id, request)
        return out.result()

    def handle_into(
        self,
        out: Step,
        src: str,
        correlation_id: int,
        request: object,
        kind: type | None = None,
    ) -> None:
        """``handle`` into the caller's step (the broker's: one step per request, no nested
        result to copy). ``out`` has appended nothing yet: its append counters are this call's.
        ``kind``: the request's ``request_type``, if the caller has it."""
        version = getattr(request, "api_version", 0)
        waiter = Parked(src, correlation_id, version if isinstance(version, int) else 0)
        if kind is None:
            kind = request_type(request)
        if kind in _CLASSIC_GROUP_APIS and (
            request.group_id in self.consumer_group_manager.groups  # type: ignore[attr-defined]
        ):
            self._classic_request_to_consumer_group(out, waiter, request)  # type: ignore[arg-type]
        else:
            handler = self._handlers.get(kind)  # type: ignore[arg-type]
            if handler is None:  # pragma: no cover - the cluster routes only group APIs here
                raise TypeError(type(request).__name__)
            handler(out, waiter, request)
        if self._unwritten_removals:
            self._settle_unwritten(out)
        if self.consumer_group_manager.groups:  # a KIP-848 group may have been created
            self._ensure_cleanup_timer(out)

    def _classic_request_to_consumer_group(
        self,
        out: Step,
        waiter: Parked,
        request: JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest,
    ) -> None:
        """A classic request for a KIP-848 consumer group (classicGroupJoin, classicGroupSync,
        classicGroupHeartbeat, classicGroupLeave): a JoinGroup to a non-empty consumer group and
        every other request go to the consumer group's classic-member handlers; a JoinGroup to
        an empty consumer group replaces it with a classic group (maybeDeleteEmptyConsumerGroup:
        its tombstones go out with the new classic group's first record)."""
        consumer_groups = self.consumer_group_manager
        if isinstance(request, SyncGroupRequest):
            consumer_groups.classic_sync(out, waiter, request)
        elif isinstance(request, HeartbeatRequest):
            consumer_groups.classic_heartbeat(out, waiter, request)
        elif isinstance(request, LeaveGroupRequest):
            consumer_groups.classic_leave(out, waiter, request)
        elif not consumer_groups.groups[request.group_id].is_empty():
            consumer_groups.classic_join(out, waiter, request)
        else:
            group_id = request.group_id
            empty = consumer_groups.remove_empty_group(out, group_id)
            # Kafka removes it from its timeline map at once; the removal is undone by the next
            # failed write (revertToSnapshot) until a write succeeds: _settle_unwritten
            self._unwritten_removals[group_id] = empty
            self.group_manager.classic_group_join(
                out, waiter, request, prefix=consumer_group_tombstones(empty)
            )

    def _settle_unwritten(self, out: Step) -> None:
        """CoordinatorRuntime's snapshots for the empty consumer groups a classic JoinGroup
        removed (maybeDeleteEmptyConsumerGroup): a removal no record has carried yet is undone by
        a failed write (the runtime reverts to the last written offset), and kept for good once
        a write succeeds (a new snapshot)."""
        if not self._unwritten_removals:
            return
        if out.append_error != NO_ERROR:
            groups = self.consumer_group_manager.groups
            for group_id, group in self._unwritten_removals.items():
                if group_id not in groups and group_id not in self.group_manager.groups:
                    groups[group_id] = group
            self._unwritten_removals.clear()
        elif out.appends:
            self._unwritten_removals.clear()

    def fire_timer(self, key: ShardTimerKey, now_ms: int) -> CoordinatorResult:
        """Run the operation of ``key`` if it is still live (a replaced key runs the newest)."""
        operation = self.timer.pop(key)
        if operation is None:
            return NO_RESULT
        out = Step(now_ms)
        out.event("timer_fired", t_ms=now_ms, node=self.node, key=str(key))
        self._timer_operations[type(operation)](out, operation)
        self._settle_unwritten(out)
        return out.result()

    # --- entry points Kafka's GroupMetadataManagerTest calls directly -------------------------

    def create_classic_group(self, group_id: str, now_ms: int) -> CoordinatorResult:
        """GroupMetadataManager.getOrMaybeCreateClassicGroup(groupId, true) for a new group: an
        Empty group, nothing written (Kafka's tests create groups this way)."""
        out = Step(now_ms)
        if group_id not in self.group_manager.groups:
            self.group_manager.create_group(out, group_id, "test")
        return out.result()

    def prepare_rebalance(self, group_id: str, reason: str, now_ms: int) -> CoordinatorResult:
        """GroupMetadataManager.prepareRebalance(group, reason) on an existing classic group:
        Kafka's tests call it to start a rebalance without a JoinGroup."""
        out = Step(now_ms)
        group = self.group_manager.groups.get(group_id)
        if group is None:
            raise KeyError(f"no classic group {group_id!r} on partition {self.partition}")
        self.group_manager.prepare_rebalance(out, group, reason)
        return out.result()

    # --- loading and unloading (onLoaded, onUnloaded) ---------------------------------------------

    def begin_load(self, now_ms: int) -> CoordinatorResult:
        """This broker just became leader: replay the partition for ``load_time_ms``."""
        out = Step(now_ms)
        out.event("partition_loading", t_ms=now_ms, node=self.node, partition=self.partition)
        if self.config.load_time_ms == 0:
            self._load(out)
        else:
            key = LoadKey(self.node, self.partition)
            self.timer.schedule(out, key, self.config.load_time_ms, FinishLoad())
        return out.result()

    def finish_load(self, now_ms: int, *, quiet: bool = False) -> CoordinatorResult:
        """Load at once (``quiet``: the cluster's start, where there is nothing to replay)."""
        out = Step(now_ms)
        self._load(out, quiet=quiet)
        return out.result()

    def _on_load_finished(self, out: Step, _operation: FinishLoad) -> None:
        self._load(out)

    def _load(self, out: Step, *, quiet: bool = False) -> None:
        records = self.loader.replay(
            self.group_manager, self.offset_manager, self.consumer_group_manager, out.now
        )
        self.loading = False
        self.loaded_ms = out.now
        self._unwritten_removals.clear()  # the log's replay is the state now
        manager = self.group_manager
        manager.groups_high_water = max(manager.groups_high_water, len(manager.groups))
        if not quiet:
            out.event(
                "partition_loaded",
                t_ms=out.now,
                node=self.node,
                partition=self.partition,
                groups=len(self.group_manager.groups) + len(self.consumer_group_manager.groups),
                records=records,
            )
        self.group_manager.on_loaded(out)
        self.consumer_group_manager.on_loaded(out)
        self._ensure_cleanup_timer(out)

    def unload(self, now_ms: int) -> CoordinatorResult:
        """Leadership moved away: every group goes Dead, parked requests get NOT_COORDINATOR.

        When this broker is dead it cannot answer anyone: the cluster drops the answers (the
        clients see their connection fail) and keeps only the cancelled timers.
        """
        out = Step(now_ms)
        self.timer.cancel_all(out)
        self.group_manager.on_unloaded(out)
        out.event("partition_unloaded", t_ms=now_ms, node=self.node, partition=self.partition)
        self.loading = True
        return out.result()

    # --- jobs over both managers (GroupCoordinatorShard) ------------------------------------------

    def _ensure_cleanup_timer(self, out: Step) -> None:
        """GroupCoordinatorShard.scheduleGroupMetadataExpiration, in Kafka's phase.

        Kafka schedules the job when the shard is loaded (onLoaded) and every
        ``offsets.retention.check.interval.ms`` after each run, so it runs at load time + k x
        interval. Here it is armed only while the shard holds groups (a documented choice: a run
        over no groups writes nothing), for the next of those times after now.
        """
        key = ExpireOffsetsKey(self.node, self.partition)
        holds_groups = self.group_manager.groups or self.consumer_group_manager.groups
        if not self.timer.is_scheduled(key) and holds_groups and not self.loading:
            interval = self.config.offsets_retention_check_interval_ms
            since_load = out.now - self.loaded_ms
            self.timer.schedule(out, key, interval - since_load % interval, ExpireOffsets())

    def _on_cleanup(self, out: Step, _operation: ExpireOffsets) -> None:
        """cleanupGroupMetadata: the expired offsets' tombstones, and those of the groups left
        Empty without offsets, go out as one batch (one CoordinatorResult for the whole shard);
        if it fails, nothing expires in this run."""
        groups, offsets = self.group_manager.groups, self.offset_manager
        consumer_groups = self.consumer_group_manager.groups
        entries: list[tuple[RecordKey, RecordValue]] = []
        expired_by_group: list[tuple[str, list[tuple[str, int]]]] = []
        doomed: list[ClassicGroup] = []
        doomed_consumer: list[tuple[str, list[tuple[RecordKey, RecordValue]]]] = []
        # cleanupGroupMetadata visits groupIds(): Kafka's one TimelineHashMap holds both types;
        # groupsim's two maps are visited in the emulated order of one map that took the
        # classic groups, then the consumer groups (exact unless a shard holds both types and
        # two of their ids share a slot: the interleaving of their insertions is not kept)
        ids = [*groups, *consumer_groups]
        capacity = capacity_for(max(self.group_manager.groups_high_water, len(ids)))
        for group_id in iteration_order(ids, capacity):
            group = groups.get(group_id)
            if group is None:
                # ConsumerGroup.offsetExpirationCondition counts from each offset's commit time,
                # the offsets of subscribed topics never expire, and an Empty group left without
                # offsets is deleted (maybeDeleteGroup: createGroupTombstoneRecords)
                consumer_group = consumer_groups[group_id]
                expired = offsets.expired_consumer_group_offsets(consumer_group, out.now)
                if expired:
                    entries.extend((OffsetCommitKey(group_id, t, p), None) for t, p in expired)
                    expired_by_group.append((group_id, expired))
                if consumer_group.is_empty() and offsets.all_offsets_expired(group_id, expired):
                    tombstones = consumer_group_tombstones(consumer_group)
                    entries.extend(tombstones)
                    doomed_consumer.append((group_id, tombstones))
                continue
            expired = offsets.expired_offsets(group, out.now)
            if expired:
                entries.extend((OffsetCommitKey(group_id, t, p), None) for t, p in expired)
                expired_by_group.append((group_id, expired))
            if group.is_in(EMPTY) and offsets.all_offsets_expired(group_id, expired):
                entries.append((GroupMetadataKey(group_id), None))
                doomed.append(group)
        if entries and self.writer.append(out, entries, entries[0][0].group) == NO_ERROR:
            for group_id, expired in expired_by_group:
                offsets.delete_offsets(group_id, expired)
                out.event(
                    "offsets_expired",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group_id,
                    count=len(expired),
                )
            for group in doomed:
                offsets.delete_all_offsets(group.group_id, pending=False)
                self.group_manager.delete_group(out, group, "empty group with no offsets left")
            for group_id, tombstones in doomed_consumer:
                offsets.delete_all_offsets(group_id, pending=False)
                self.consumer_group_manager.delete_written(
                    out, group_id, tombstones, "empty group with no offsets left"
                )
        self._ensure_cleanup_timer(out)

    def delete_groups(
        self, group_ids: list[str], now_ms: int
    ) -> tuple[list[Errors], CoordinatorResult]:
        """GroupCoordinatorShard.deleteGroups: the result of each group, in order, and the output.

        Each group is validated (ClassicGroup.validateDeleteGroup, or
        ConsumerGroup.validateDeleteGroup: a KIP-848 group must be Empty); the tombstones of the
        valid ones (each group's offsets, then the group's: createGroupTombstoneRecords) go out
        as ONE write, the shard's one CoordinatorResult. If that write fails,
        GroupCoordinatorService answers every group of the shard with the mapped error, the ones
        that failed validation included.
        """
        out = Step(now_ms)
        groups = self.group_manager.groups
        consumer_groups = self.consumer_group_manager.groups
        results: list[Errors] = []
        doomed: list[ClassicGroup] = []
        doomed_consumer: list[tuple[str, list[tuple[RecordKey, RecordValue]]]] = []
        entries: list[tuple[RecordKey, RecordValue]] = []
        for group_id in group_ids:
            group = groups.get(group_id)
            consumer_group = consumer_groups.get(group_id)
            if consumer_group is not None:
                if not consumer_group.is_empty():
                    results.append(Errors.NON_EMPTY_GROUP)
                else:
                    results.append(NO_ERROR)
                    tombstones = consumer_group_tombstones(consumer_group)
                    doomed_consumer.append((group_id, tombstones))
                    entries.extend(self.offset_manager.all_offsets_tombstones(group_id))
                    entries.extend(tombstones)
            elif group is None or group.is_in(DEAD):
                results.append(Errors.GROUP_ID_NOT_FOUND)
            elif not group.is_in(EMPTY):
                results.append(Errors.NON_EMPTY_GROUP)
            else:
                results.append(NO_ERROR)
                doomed.append(group)
                entries.extend(self.offset_manager.all_offsets_tombstones(group_id))
                entries.append((GroupMetadataKey(group_id), None))
        if entries:
            error = self.writer.append(out, entries, entries[0][0].group)
            if error != NO_ERROR:
                return [operation_error_to_response_error(error)] * len(group_ids), out.result()
        for group in doomed:
            self.offset_manager.delete_all_offsets(group.group_id)
            self.group_manager.delete_group(out, group, "DeleteGroups")
        for group_id, tombstones in doomed_consumer:
            self.offset_manager.delete_all_offsets(group_id)
            self.consumer_group_manager.delete_written(out, group_id, tombstones, "DeleteGroups")
        return results, out.result()

    def delete_offsets_of_topic(self, topic: str, now_ms: int) -> CoordinatorResult:
        """onPartitionsDeleted: tombstones for every group's offsets of a deleted topic.

        A shard still loading is skipped, as Kafka's write to an inactive coordinator fails: its
        offsets come back from the log.
        """
        if self.loading:
            return NO_RESULT
        out = Step(now_ms)
        self.offset_manager.on_partitions_deleted(out, topic)
        return out.result()

    def complete_transaction(
        self, producer_id: int, commit: bool, now_ms: int
    ) -> tuple[Errors, CoordinatorResult]:
        """CoordinatorRuntime.completeTransaction (GroupCoordinatorService.completeTransaction):
        the marker is written, then replayed (replayEndTransactionMarker). If the write fails
        nothing changes, and the operation fails with the append error itself (the transaction
        coordinator retries)."""
        out = Step(now_ms)
        error = self.writer.append_end_transaction_marker(out, producer_id, commit)
        if error != NO_ERROR:
            return error, out.result()
        self.offset_manager.replay_end_transaction_marker(out, producer_id, commit)
        return NO_ERROR, out.result()

    # --- queries ----------------------------------------------------------------------------------

    def view(self, group_id: str) -> GroupView | None:
        group = self.group_manager.groups.get(group_id)
        if group is None:
            return None
        return group.view(self.partition, None if self.loading else self.node)

    def consumer_group_view(self, group_id: str) -> ConsumerGroupView | None:
        coordinator = None if self.loading else self.node
        return self.consumer_group_manager.view(group_id, self.partition, coordinator)

    def views(self) -> list[GroupView]:
        groups = self.group_manager.groups
        coordinator = None if self.loading else self.node
        return [groups[gid].view(self.partition, coordinator) for gid in sorted(groups)]

    def list_groups(self, states_filter: tuple[str, ...]) -> list[ListedGroup]:
        listed = self.group_manager.list_groups(states_filter)
        if self.consumer_group_manager.groups:
            listed.extend(self.consumer_group_manager.list_groups(states_filter))
        return listed

    def consumer_group_describe(self, group_ids: list[str]) -> list[ConsumerGroupDescribedGroup]:
        return self.consumer_group_manager.describe(group_ids)

    def describe_group(self, group_id: str) -> DescribedGroup:
        return self.group_manager.describe_group(group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return self.offset_manager.committed_offsets(group_id)
