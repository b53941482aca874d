"""The KIP-848 consumer groups of one ``__consumer_offsets`` partition: the consumer-group part of
Kafka's GroupMetadataManager at 1eb7644 (consumerGroupHeartbeat and its helpers, the session and
rebalance timeouts, the replay of the ConsumerGroup* records, consumerGroupDescribe).

As in Kafka, a handler only *reads* the group and returns records with its response; the state
changes when the records are replayed (:meth:`ConsumerGroupManager.replay`), which is also what a
new leader does when it loads the partition. A handler's records are appended as one batch: if
the append fails, nothing changes and the member gets the mapped error
(``CoordinatorOperationExceptionHelper.handleOperationException``).

Not simulated here (see docs/coordinator.md): classic members inside consumer groups and online
migration, regular-expression subscriptions (Kafka 4.0 refuses them: "SubscribedTopicRegex is not
supported yet."), per-group configs (GroupConfigManager), the periodic metadata refresh
(``group.consumer.metadata.refresh.interval.ms`` is Integer.MAX_VALUE in 4.0: only topic
changes refresh a group's metadata).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from coordinator.assignor.api import PartitionAssignorException
from coordinator.assignor.ordering import assignment_from_record, uuid_order
from coordinator.assignor.registry import ConsumerGroupAssignors
from coordinator.config import CoordinatorConfig
from coordinator.consumer_group import (
    EMPTY,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    Partitions,
    TopicMetadata,
    subscription_type,
)
from coordinator.current_assignment import compute_current_assignment
from coordinator.errors import ApiError, Errors
from coordinator.group import Parked
from coordinator.kafka_uuid import Uuid
from coordinator.log import operation_error_to_response_error
from coordinator.protocol import (
    ConsumerGroupDescribeAssignment,
    ConsumerGroupDescribedGroup,
    ConsumerGroupDescribeMember,
    ConsumerGroupDescribeTopicPartitions,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseAssignment,
    ConsumerGroupHeartbeatTopicPartitions,
    ListedGroup,
)
from coordinator.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    GroupMetadataKey,
    RecordKey,
    RecordValue,
    TopicMetadataRecord,
    TopicPartitionsRecord,
)
from coordinator.result import Step
from coordinator.runtime import PartitionWriter, respond
from coordinator.target_assignment import build_target_assignment
from coordinator.timeline_order import capacity_for, iteration_order
from coordinator.timers import (
    ConsumerGroupRebalanceKey,
    ConsumerGroupSessionKey,
    CoordinatorTimer,
    ExpireConsumerGroupRebalance,
    ExpireConsumerGroupSession,
)
from coordinator.topology import Topology
from coordinator.views import (
    ConsumerGroupMemberView,
    ConsumerGroupView,
    NamedPartitions,
)

CONSUMER_PROTOCOL_TYPE = "consumer"
#: GroupMetadataManager's consumerGroupMetadataRefreshIntervalMs default (Integer.MAX_VALUE)
METADATA_REFRESH_INTERVAL_MS = 2147483647
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))

Entry = tuple[RecordKey, RecordValue]


def _blank(value: str | None) -> bool:
    """``value != null && value.trim().isEmpty()`` (Java's trim: code points up to U+0020)."""
    return value is not None and value.strip(_JAVA_TRIMMED) == ""


def _topic_partitions(assignment: Partitions) -> list[TopicPartitionsRecord]:
    """An assignment as the records and responses list it: topics in the order of Kafka's
    ``HashMap<Uuid, ...>``, each topic's partitions ascending (a documented simplification of
    ``HashSet<Integer>`` order, which is ascending while partitions are below its capacity)."""
    return [TopicPartitionsRecord(t, tuple(sorted(assignment[t]))) for t in uuid_order(assignment)]


def _from_record(topic_partitions: Iterable[TopicPartitionsRecord]) -> Partitions:
    return {t.topic_id: frozenset(t.partitions) for t in topic_partitions if t.partitions}


class ConsumerGroupManager:
    """The consumer groups of one shard: ConsumerGroupHeartbeat, timeouts, records, answers."""

    def __init__(
        self,
        *,
        node: str,
        partition: int,
        config: CoordinatorConfig,
        rng: random.Random,
        timer: CoordinatorTimer,
        writer: PartitionWriter,
        topology: Topology,
        classic_group_exists: Callable[[str], bool],
        classic_group_is_empty: Callable[[str], bool] = lambda _group_id: False,
        delete_classic_group: Callable[[Step, str], None] = lambda _out, _group_id: None,
    ) -> None:
        self.node = node
        self.partition = partition
        self.config = config
        self.rng = rng
        self.timer = timer
        self.writer = writer
        self.topology = topology
        self._classic_group_exists = classic_group_exists
        self._classic_group_is_empty = classic_group_is_empty
        self._delete_classic_group = delete_classic_group
        self.assignors = ConsumerGroupAssignors(config.group_consumer_assignors)
        self.groups: dict[str, ConsumerGroup] = {}

    # --- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def heartbeat(self, out: Step, waiter: Parked, request: ConsumerGroupHeartbeatRequest) -> None:
        """consumerGroupHeartbeat: validate, then leave or heartbeat; write; answer."""
        try:
            self._validate(request)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                records, response = self._leave(out, request)
            else:
                records, response = self._heartbeat(out, request)
        except ApiError as error:
            records = []
            response = ConsumerGroupHeartbeatResponse(error.error, error_message=error.message)
        if records:
            before = self._snapshot(request.group_id)
            error_code = self.writer.append(out, records, request.group_id)
            if error_code != Errors.NONE:
                # handleOperationException maps a failed write's error without a message
                response = ConsumerGroupHeartbeatResponse(
                    operation_error_to_response_error(error_code)
                )
            else:
                for key, value in records:
                    if isinstance(key, GroupMetadataKey) and value is None:
                        # the replay of an empty classic group's tombstone removes it
                        self._delete_classic_group(out, key.group)
                self.replay_all(records)
                self._note_changes(out, request.group_id, before, records)
        respond(out, self.node, waiter, response, request.group_id, request.member_id)

    def _validate(self, request: ConsumerGroupHeartbeatRequest) -> None:
        """throwIfConsumerGroupHeartbeatRequestIsInvalid, with Kafka's messages."""
        if _blank(request.group_id):
            raise ApiError(Errors.INVALID_REQUEST, "GroupId can't be empty.")
        if _blank(request.instance_id):
            raise ApiError(Errors.INVALID_REQUEST, "InstanceId can't be empty.")
        if _blank(request.rack_id):
            raise ApiError(Errors.INVALID_REQUEST, "RackId can't be empty.")
        if request.subscribed_topic_regex is not None:
            raise ApiError(Errors.INVALID_REQUEST, "SubscribedTopicRegex is not supported yet.")
        epoch = request.member_epoch
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if _blank(request.member_id):
                raise ApiError(Errors.INVALID_REQUEST, "MemberId can't be empty.")
        elif epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise ApiError(
                    Errors.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."
                )
            if request.topic_partitions is None or request.topic_partitions:
                raise ApiError(
                    Errors.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."
                )
            if not request.subscribed_topic_names:
                raise ApiError(
                    Errors.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
                )
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if _blank(request.member_id):
                raise ApiError(Errors.INVALID_REQUEST, "MemberId can't be empty.")
            if request.instance_id is None:
                raise ApiError(Errors.INVALID_REQUEST, "InstanceId can't be null.")
        else:
            raise ApiError(Errors.INVALID_REQUEST, "MemberEpoch is invalid.")
        if request.server_assignor is not None and not self.assignors.supports(
            request.server_assignor
        ):
            raise ApiError(
                Errors.UNSUPPORTED_ASSIGNOR,
                self.assignors.unsupported_message(request.server_assignor),
            )

    def _group_or_new(self, group_id: str, create: bool, records: list[Entry]) -> ConsumerGroup:
        """getOrMaybeCreateConsumerGroup (a new group is not registered: its records create it).
        An empty classic group of that id (e.g. the simple group of an admin's offset commit)
        gives way when a member joins: maybeDeleteEmptyClassicGroup writes its tombstone."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if create and self._classic_group_is_empty(group_id):
            records.append((GroupMetadataKey(group_id), None))
            return ConsumerGroup(group_id)
        if self._classic_group_exists(group_id):
            # A classic group of that id: online migration is not simulated (docs/coordinator.md)
            raise ApiError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group")
        if not create:
            raise ApiError(Errors.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        return ConsumerGroup(group_id)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            if self._classic_group_exists(group_id):
                raise ApiError(
                    Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group"
                )
            raise ApiError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        return group

    def _check_epoch(
        self,
        member: ConsumerGroupMember,
        received: int,
        owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None,
    ) -> None:
        """throwIfConsumerGroupMemberEpochIsInvalid."""
        if received > member.member_epoch:
            raise ApiError(
                Errors.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a greater member epoch ({received}) than the "
                f"one known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin.",
            )
        if received < member.member_epoch and (
            received != member.previous_member_epoch
            or not _is_subset(owned, member.assigned_partitions)
        ):
            raise ApiError(
                Errors.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({received}) than the "
                f"one known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin.",
            )

    def _heartbeat(
        self, out: Step, request: ConsumerGroupHeartbeatRequest
    ) -> tuple[list[Entry], ConsumerGroupHeartbeatResponse]:
        """The regular heartbeat (consumerGroupHeartbeat's private overload)."""
        records: list[Entry] = []
        group_id = request.group_id
        member_epoch = request.member_epoch
        create = member_epoch == 0
        group = self._group_or_new(group_id, create, records)
        member_id = request.member_id
        if group.num_members() >= self.config.group_consumer_max_size and (
            member_id == "" or not group.has_member(member_id)
        ):
            raise ApiError(
                Errors.GROUP_MAX_SIZE_REACHED,
                "The consumer group has reached its maximum capacity of "
                f"{self.config.group_consumer_max_size} members.",
            )
        if member_id == "":
            member_id = str(Uuid(self._signed64(), self._signed64()))
        owned = request.topic_partitions
        instance_id = request.instance_id
        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, create)
            self._check_epoch(member, member_epoch, owned)
        else:
            member = self._static_member(
                group, member_id, member_epoch, instance_id, owned, create, records
            )

        updated = member.with_(
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor_name=request.server_assignor
            if request.server_assignor is not None
            else member.server_assignor_name,
            subscribed_topic_names=frozenset(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names,
            client_id=request.client_id,
            client_host=request.client_host,
        )
        bump = False
        if updated != member:
            records.append(self._member_record(group_id, updated))
            bump = updated.subscribed_topic_names != member.subscribed_topic_names or (
                updated.subscribed_topic_regex != member.subscribed_topic_regex
            )
        group_epoch = group.group_epoch
        metadata = group.subscription_metadata
        sub_type = group.subscription_type_
        if bump or group.has_metadata_expired(out.now):
            names = group.compute_subscribed_topic_names(member, updated)
            metadata = self._subscription_metadata(names)
            num_members = group.num_members()
            if not group.has_member(updated.member_id) and not group.has_static_member(
                updated.instance_id
            ):
                num_members += 1
            sub_type = subscription_type(names, num_members)
            if metadata != group.subscription_metadata:
                bump = True
                records.append(self._metadata_record(group_id, metadata))
            if bump:
                group_epoch += 1
                records.append(
                    (ConsumerGroupMetadataKey(group_id), ConsumerGroupMetadataValue(group_epoch))
                )
            # the refresh deadline is soft state, set even if the write fails (as in Kafka)
            group.metadata_refresh_deadline = (out.now + METADATA_REFRESH_INTERVAL_MS, group_epoch)

        if group_epoch > group.target_assignment_epoch:
            target = self._update_target_assignment(
                out, group, group_epoch, member, updated, metadata, sub_type, records
            )
            target_epoch = group_epoch
        else:
            target_epoch = group.target_assignment_epoch
            target = group.target_assignment_of(updated.member_id, updated.instance_id)

        updated = self._maybe_reconcile(out, group, updated, target_epoch, target, owned, records)
        self._schedule_session(out, group_id, updated.member_id)
        full = member_epoch == 0 or (
            request.rebalance_timeout_ms != -1
            and request.subscribed_topic_names is not None
            and owned is not None
        )
        assignment = None
        if full or updated.assigned_partitions != member.assigned_partitions:
            assignment = ConsumerGroupHeartbeatResponseAssignment(
                [
                    ConsumerGroupHeartbeatTopicPartitions(t.topic_id, t.partitions)
                    for t in _topic_partitions(updated.assigned_partitions)
                ]
            )
        response = ConsumerGroupHeartbeatResponse(
            Errors.NONE,
            member_id=updated.member_id,
            member_epoch=updated.member_epoch,
            heartbeat_interval_ms=self.config.group_consumer_heartbeat_interval_ms,
            assignment=assignment,
        )
        return records, response

    def _signed64(self) -> int:
        value = self.rng.getrandbits(64)
        return value - (1 << 64) if value >= 1 << 63 else value

    def _static_member(
        self,
        group: ConsumerGroup,
        member_id: str,
        member_epoch: int,
        instance_id: str,
        owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None,
        create: bool,
        records: list[Entry],
    ) -> ConsumerGroupMember:
        """getOrMaybeSubscribeStaticConsumerGroupMember (KIP-848 static membership)."""
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                return group.get_or_maybe_create_member(member_id, True)
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise ApiError(
                    Errors.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the "
                    f"group because the instance id is owned by {existing.member_id} member.",
                )
            new = existing.with_(member_id=member_id, member_epoch=0, previous_member_epoch=0)
            # replaceMember: the old member's tombstones, then the new one with its assignment
            records.extend(self._member_tombstones(group.group_id, existing.member_id))
            records.append(self._member_record(group.group_id, new))
            records.append(
                self._target_record(
                    group.group_id, member_id, group.target_assignment_of(existing.member_id)
                )
            )
            records.append(self._current_record(group.group_id, new))
            return new
        if existing is None:
            raise ApiError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise ApiError(
                Errors.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{existing.member_id}.",
            )
        self._check_epoch(existing, member_epoch, owned)
        return existing

    def _subscription_metadata(self, names: Mapping[str, int]) -> dict[str, TopicMetadata]:
        """computeSubscriptionMetadata: the subscribed topics that exist, with id and size."""
        topics, ids = self.topology.topics, self.topology.topic_ids
        return {
            name: TopicMetadata(ids[name], name, topics[name]) for name in names if name in topics
        }

    def _update_target_assignment(
        self,
        out: Step,
        group: ConsumerGroup,
        group_epoch: int,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        metadata: Mapping[str, TopicMetadata],
        sub_type: Any,
        records: list[Entry],
    ) -> Partitions:
        """updateTargetAssignment: the preferred assignor over the group with ``updated``."""
        preferred = group.compute_preferred_server_assignor(member, updated)
        assignor = self.assignors.by_name[preferred or self.assignors.default.name]
        changed: dict[str, ConsumerGroupMember | None] = {updated.member_id: updated}
        previous = group.static_member_id(updated.instance_id)
        if previous is not None and previous != updated.member_id:
            changed[previous] = None
        try:
            # group.members() is a TimelineHashMap: its iteration order is the insertion order
            # of TargetAssignmentBuilder's HashMap of member specs
            order = iteration_order(group.members, capacity_for(group.members_high_water))
            result = build_target_assignment(
                assignor=assignor,
                members={m: group.members[m] for m in order},
                static_members=group.static_members,
                subscription_metadata=metadata,
                subscription_type=sub_type,
                target_assignment=group.target_assignment,
                inverted_target_assignment=group.inverted_target_assignment,
                topic_ids=self.topology.topic_ids,
                updated_members=changed,
            )
        except PartitionAssignorException as exc:
            raise ApiError(
                Errors.UNKNOWN_SERVER_ERROR,
                f"Failed to compute a new target assignment for epoch {group_epoch}: {exc}",
            ) from None
        for member_id in result.changed_members:
            records.append(
                self._target_record(
                    group.group_id, member_id, result.target_assignment.get(member_id, {})
                )
            )
        records.append(
            (
                ConsumerGroupTargetAssignmentMetadataKey(group.group_id),
                ConsumerGroupTargetAssignmentMetadataValue(group_epoch),
            )
        )
        out.event(
            "consumer_group_target_assignment_computed",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            assignment_epoch=group_epoch,
            assignor=assignor.name,
            members_changed=len(result.changed_members),
        )
        return result.target_assignment.get(updated.member_id, {})

    def _maybe_reconcile(
        self,
        out: Step,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        target_epoch: int,
        target: Partitions,
        owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None,
        records: list[Entry],
    ) -> ConsumerGroupMember:
        """maybeReconcile: CurrentAssignmentBuilder, its record, the rebalance timeout."""
        if member.is_reconciled_to(target_epoch):
            return member
        updated = compute_current_assignment(
            member,
            target_epoch,
            target,
            group.partition_epoch,
            None if owned is None else [(t.topic_id, t.partitions) for t in owned],
        )
        if updated != member:
            records.append(self._current_record(group.group_id, updated))
            key = ConsumerGroupRebalanceKey(
                self.node, self.partition, group.group_id, updated.member_id
            )
            if updated.state == MemberState.UNREVOKED_PARTITIONS:
                self.timer.schedule(
                    out,
                    key,
                    updated.rebalance_timeout_ms,
                    ExpireConsumerGroupRebalance(
                        group.group_id,
                        updated.member_id,
                        updated.member_epoch,
                        updated.rebalance_timeout_ms,
                    ),
                )
            else:
                self.timer.cancel(out, key)
        return updated

    # --- leaving and fencing ----------------------------------------------------------------------

    def _leave(
        self, out: Step, request: ConsumerGroupHeartbeatRequest
    ) -> tuple[list[Entry], ConsumerGroupHeartbeatResponse]:
        """consumerGroupLeave: -1 removes the member; -2 (static) keeps it, at epoch -2."""
        group = self.consumer_group(request.group_id)
        response = ConsumerGroupHeartbeatResponse(
            Errors.NONE, member_id=request.member_id, member_epoch=request.member_epoch
        )
        if request.instance_id is None:
            member = group.get_or_maybe_create_member(request.member_id, False)
            return self._fence(out, group, member, "the member left"), response
        static = group.static_member(request.instance_id)
        if static is None:
            raise ApiError(
                Errors.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown."
            )
        if static.member_id != request.member_id:
            raise ApiError(
                Errors.FENCED_INSTANCE_ID,
                f"Static member {request.member_id} with instance id {request.instance_id} was "
                f"fenced by member {static.member_id}.",
            )
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            leaving = static.with_(
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitions_pending_revocation={}
            )
            return [self._current_record(group.group_id, leaving)], ConsumerGroupHeartbeatResponse(
                Errors.NONE,
                member_id=static.member_id,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
            )
        return self._fence(out, group, static, "the static member left"), response

    def _fence(
        self, out: Step, group: ConsumerGroup, member: ConsumerGroupMember, reason: str
    ) -> list[Entry]:
        """consumerGroupFenceMember: the member's tombstones, the new subscription metadata,
        the group epoch bumped; its timers cancelled."""
        records = list(self._member_tombstones(group.group_id, member.member_id))
        metadata = self._subscription_metadata(group.compute_subscribed_topic_names(member, None))
        if metadata != group.subscription_metadata:
            records.append(self._metadata_record(group.group_id, metadata))
        records.append(
            (
                ConsumerGroupMetadataKey(group.group_id),
                ConsumerGroupMetadataValue(group.group_epoch + 1),
            )
        )
        self._cancel_timers(out, group.group_id, member.member_id)
        out.event(
            "consumer_group_member_removed",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            reason=reason,
        )
        return records

    def _schedule_session(self, out: Step, group_id: str, member_id: str) -> None:
        key = ConsumerGroupSessionKey(self.node, self.partition, group_id, member_id)
        self.timer.schedule(
            out,
            key,
            self.config.group_consumer_session_timeout_ms,
            ExpireConsumerGroupSession(group_id, member_id),
        )

    def _cancel_timers(self, out: Step, group_id: str, member_id: str) -> None:
        self.timer.cancel(
            out, ConsumerGroupSessionKey(self.node, self.partition, group_id, member_id)
        )
        self.timer.cancel(
            out, ConsumerGroupRebalanceKey(self.node, self.partition, group_id, member_id)
        )

    def _write_fence(
        self, out: Step, group: ConsumerGroup, member: ConsumerGroupMember, reason: str
    ) -> None:
        """A timer's fencing (consumerGroupFenceMemberOperation): write, then replay."""
        records = self._fence(out, group, member, reason)
        before = self._snapshot(group.group_id)
        if self.writer.append(out, records, group.group_id) == Errors.NONE:
            self.replay_all(records)
            self._note_changes(out, group.group_id, before, records)

    def on_session_expired(self, out: Step, operation: ExpireConsumerGroupSession) -> None:
        group = self.groups.get(operation.group_id)
        member = None if group is None else group.members.get(operation.member_id)
        if group is None or member is None:
            return
        self._write_fence(out, group, member, "the member session expired.")

    def on_rebalance_timeout(self, out: Step, operation: ExpireConsumerGroupRebalance) -> None:
        group = self.groups.get(operation.group_id)
        member = None if group is None else group.members.get(operation.member_id)
        if group is None or member is None or member.member_epoch != operation.member_epoch:
            return
        self._write_fence(
            out,
            group,
            member,
            f"it failed to transition from epoch {operation.member_epoch} within "
            f"{operation.rebalance_timeout_ms}ms.",
        )

    # --- records ------------------------------------------------------------------------------------

    def _member_record(self, group_id: str, m: ConsumerGroupMember) -> Entry:
        """newConsumerGroupMemberSubscriptionRecord."""
        return (
            ConsumerGroupMemberMetadataKey(group_id, m.member_id),
            ConsumerGroupMemberMetadataValue(
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
                subscribed_topic_regex=m.subscribed_topic_regex,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                server_assignor=m.server_assignor_name,
            ),
        )

    def _target_record(self, group_id: str, member_id: str, assignment: Partitions) -> Entry:
        return (
            ConsumerGroupTargetAssignmentMemberKey(group_id, member_id),
            ConsumerGroupTargetAssignmentMemberValue(_topic_partitions(assignment)),
        )

    def _current_record(self, group_id: str, m: ConsumerGroupMember) -> Entry:
        """newConsumerGroupCurrentAssignmentRecord."""
        return (
            ConsumerGroupCurrentMemberAssignmentKey(group_id, m.member_id),
            ConsumerGroupCurrentMemberAssignmentValue(
                member_epoch=m.member_epoch,
                previous_member_epoch=m.previous_member_epoch,
                state=m.state.value,
                assigned_partitions=_topic_partitions(m.assigned_partitions),
                partitions_pending_revocation=_topic_partitions(m.partitions_pending_revocation),
            ),
        )

    def _metadata_record(self, group_id: str, metadata: Mapping[str, TopicMetadata]) -> Entry:
        """newConsumerGroupSubscriptionMetadataRecord (no racks: KRaft's image has none here)."""
        return (
            ConsumerGroupPartitionMetadataKey(group_id),
            ConsumerGroupPartitionMetadataValue(
                [
                    TopicMetadataRecord(t.id, t.name, t.num_partitions)
                    for t in (metadata[n] for n in sorted(metadata))
                ]
            ),
        )

    @staticmethod
    def _member_tombstones(group_id: str, member_id: str) -> list[Entry]:
        """removeMember: current assignment, target assignment, member metadata (in this order)."""
        return [
            (ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id), None),
            (ConsumerGroupTargetAssignmentMemberKey(group_id, member_id), None),
            (ConsumerGroupMemberMetadataKey(group_id, member_id), None),
        ]

    # --- replay (GroupMetadataManager.replay for the ConsumerGroup* records) -----------------------

    def replay_all(self, records: Iterable[Entry]) -> None:
        for key, value in records:
            self.replay(key, value)

    def _persisted(self, group_id: str, create: bool) -> ConsumerGroup | None:
        """getOrMaybeCreatePersistedConsumerGroup (None where Kafka throws GroupIdNotFound)."""
        group = self.groups.get(group_id)
        if group is None and create:
            group = self.groups[group_id] = ConsumerGroup(group_id)
        return group

    def replay(self, key: RecordKey, value: RecordValue) -> None:
        if isinstance(key, ConsumerGroupMetadataKey):
            if isinstance(value, ConsumerGroupMetadataValue):
                group = self._persisted(key.group, True)
                assert group is not None
                group.set_group_epoch(value.epoch)
            else:
                group = self._persisted(key.group, False)
                if group is not None:
                    if group.members or group.target_assignment:
                        raise AssertionError(
                            f"Received a tombstone record to delete group {key.group} but the "
                            "group still has members or a target assignment."
                        )
                    del self.groups[key.group]
        elif isinstance(key, ConsumerGroupPartitionMetadataKey):
            group = self._persisted(key.group, value is not None)
            if group is not None:
                if isinstance(value, ConsumerGroupPartitionMetadataValue):
                    group.set_subscription_metadata(
                        {
                            t.topic_name: TopicMetadata(t.topic_id, t.topic_name, t.num_partitions)
                            for t in value.topics
                        }
                    )
                else:
                    group.set_subscription_metadata({})
        elif isinstance(key, ConsumerGroupMemberMetadataKey):
            self._replay_member(key, value)
        elif isinstance(key, ConsumerGroupTargetAssignmentMemberKey):
            group = self._persisted(key.group, value is not None)
            if group is not None:
                if isinstance(value, ConsumerGroupTargetAssignmentMemberValue):
                    # Assignment.fromRecord: Kafka's HashMap/HashSet order, which the assignor reads
                    ordered = assignment_from_record(
                        (t.topic_id, t.partitions) for t in value.topic_partitions
                    )
                    group.update_target_assignment(
                        key.member_id, {t: frozenset(ps) for t, ps in ordered.items()}
                    )
                else:
                    group.remove_target_assignment(key.member_id)
        elif isinstance(key, ConsumerGroupTargetAssignmentMetadataKey):
            group = self._persisted(key.group, value is not None)
            if group is not None:
                if isinstance(value, ConsumerGroupTargetAssignmentMetadataValue):
                    group.set_target_assignment_epoch(value.assignment_epoch)
                else:
                    group.set_target_assignment_epoch(-1)
        elif isinstance(key, ConsumerGroupCurrentMemberAssignmentKey):
            group = self._persisted(key.group, value is not None)
            if group is None:
                return
            if isinstance(value, ConsumerGroupCurrentMemberAssignmentValue):
                old = group.get_or_maybe_create_member(key.member_id, True)
                group.update_member(
                    old.with_(
                        member_epoch=value.member_epoch,
                        previous_member_epoch=value.previous_member_epoch,
                        state=MemberState.from_value(value.state),
                        assigned_partitions=_from_record(value.assigned_partitions),
                        partitions_pending_revocation=_from_record(
                            value.partitions_pending_revocation
                        ),
                    )
                )
            else:
                existing = group.members.get(key.member_id)
                if existing is not None:
                    group.update_member(
                        existing.with_(
                            member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                            assigned_partitions={},
                            partitions_pending_revocation={},
                        )
                    )

    def _replay_member(self, key: ConsumerGroupMemberMetadataKey, value: RecordValue) -> None:
        group = self._persisted(key.group, value is not None)
        if group is None:
            return
        if isinstance(value, ConsumerGroupMemberMetadataValue):
            old = group.get_or_maybe_create_member(key.member_id, True)
            group.update_member(
                old.with_(
                    instance_id=value.instance_id,
                    rack_id=value.rack_id,
                    client_id=value.client_id,
                    client_host=value.client_host,
                    subscribed_topic_names=frozenset(value.subscribed_topic_names),
                    subscribed_topic_regex=value.subscribed_topic_regex,
                    rebalance_timeout_ms=value.rebalance_timeout_ms,
                    server_assignor_name=value.server_assignor,
                )
            )
            return
        leaving = group.members.get(key.member_id)
        if leaving is None:
            return
        old = leaving
        if old.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
            raise AssertionError(
                f"Received a tombstone record to delete member {key.member_id} with invalid "
                f"leave epoch {old.member_epoch}."
            )
        if old.assigned_partitions:
            raise AssertionError(
                f"Received a tombstone record to delete member {key.member_id} but it still "
                "has assigned partitions."
            )
        group.remove_member(key.member_id)

    # --- load, events, answers --------------------------------------------------------------------

    def on_loaded(self, out: Step) -> None:
        """onLoaded: a session timeout for every member, a rebalance timeout for the revoking."""
        for group_id, group in self.groups.items():
            # consumerGroup.members().forEach: the TimelineHashMap's order, which is the order
            # of timers due at the same time
            order = iteration_order(group.members, capacity_for(group.members_high_water))
            for member in (group.members[m] for m in order):
                self._schedule_session(out, group_id, member.member_id)
                if member.state == MemberState.UNREVOKED_PARTITIONS:
                    self.timer.schedule(
                        out,
                        ConsumerGroupRebalanceKey(
                            self.node, self.partition, group_id, member.member_id
                        ),
                        member.rebalance_timeout_ms,
                        ExpireConsumerGroupRebalance(
                            group_id,
                            member.member_id,
                            member.member_epoch,
                            member.rebalance_timeout_ms,
                        ),
                    )

    def on_topics_changed(self, topic: str) -> None:
        """onNewMetadataImage: groups subscribed to a changed topic refresh their metadata on
        their next heartbeat."""
        for group in self.groups.values():
            if topic in group.subscribed_topic_names:
                group.request_metadata_refresh()

    def _snapshot(self, group_id: str) -> tuple[str | None, frozenset[str]]:
        group = self.groups.get(group_id)
        if group is None:
            return None, frozenset()
        return str(group.state), frozenset(group.members)

    def _note_changes(
        self,
        out: Step,
        group_id: str,
        snapshot: tuple[str | None, frozenset[str]],
        records: Sequence[Entry],
    ) -> None:
        """The events of a batch that landed: members joining, members' new epochs and states,
        the group epoch, the group's state."""
        before, members_before = snapshot
        group = self.groups.get(group_id)
        for key, value in records:
            if (
                isinstance(key, ConsumerGroupMemberMetadataKey)
                and isinstance(value, ConsumerGroupMemberMetadataValue)
                and key.member_id not in members_before
            ):
                out.event(
                    "consumer_group_member_joined",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group_id,
                    member_id=key.member_id,
                    group_instance_id=value.instance_id,
                )
            if isinstance(key, ConsumerGroupMetadataKey) and isinstance(
                value, ConsumerGroupMetadataValue
            ):
                out.event(
                    "consumer_group_epoch_bumped",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group_id,
                    group_epoch=value.epoch,
                )
            elif isinstance(key, ConsumerGroupCurrentMemberAssignmentKey) and isinstance(
                value, ConsumerGroupCurrentMemberAssignmentValue
            ):
                out.event(
                    "consumer_group_member_updated",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group_id,
                    member_id=key.member_id,
                    member_epoch=value.member_epoch,
                    previous_member_epoch=value.previous_member_epoch,
                    member_state=MemberState.from_value(value.state).name,
                    assigned=sum(len(t.partitions) for t in value.assigned_partitions),
                    pending_revocation=sum(
                        len(t.partitions) for t in value.partitions_pending_revocation
                    ),
                )
        after = None if group is None else str(group.state)
        if after != before:
            out.event(
                "consumer_group_state_changed",
                t_ms=out.now,
                node=self.node,
                group_id=group_id,
                state_from=before if before is not None else "Dead",
                state_to=after if after is not None else "Dead",
                group_epoch=None if group is None else group.group_epoch,
                assignment_epoch=None if group is None else group.target_assignment_epoch,
            )

    def describe(self, group_ids: Iterable[str]) -> list[ConsumerGroupDescribedGroup]:
        """consumerGroupDescribe."""
        described = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None:
                # consumerGroupDescribe: the error code only, no message
                described.append(ConsumerGroupDescribedGroup(Errors.GROUP_ID_NOT_FOUND, group_id))
                continue
            # ConsumerGroup.asDescribedGroup: the preferred assignor, else the default one
            preferred = (
                group.compute_preferred_server_assignor(None, None) or self.assignors.default.name
            )
            described.append(
                ConsumerGroupDescribedGroup(
                    Errors.NONE,
                    group_id,
                    group_state=str(group.state),
                    group_epoch=group.group_epoch,
                    assignment_epoch=group.target_assignment_epoch,
                    assignor_name=preferred,
                    # asDescribedGroup walks the members' TimelineHashMap
                    members=[
                        self._describe_member(m, group.target_assignment.get(m.member_id))
                        for m in (
                            group.members[member_id]
                            for member_id in iteration_order(
                                group.members, capacity_for(group.members_high_water)
                            )
                        )
                    ],
                )
            )
        return described

    def _describe_member(
        self, m: ConsumerGroupMember, target: Partitions | None
    ) -> ConsumerGroupDescribeMember:
        return ConsumerGroupDescribeMember(
            member_id=m.member_id,
            instance_id=m.instance_id,
            rack_id=m.rack_id,
            member_epoch=m.member_epoch,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex,
            assignment=self._describe_assignment(m.assigned_partitions),
            target_assignment=self._describe_assignment(target or EMPTY),
        )

    def _describe_assignment(self, assignment: Partitions) -> ConsumerGroupDescribeAssignment:
        """topicPartitionsFromMap: topics the metadata no longer has are left out."""
        topics = []
        for t in _topic_partitions(assignment):
            name = self.topology.topic_name(t.topic_id)
            if name is not None:
                topics.append(ConsumerGroupDescribeTopicPartitions(t.topic_id, name, t.partitions))
        return ConsumerGroupDescribeAssignment(topics)

    def view(
        self, group_id: str, partition: int, coordinator: str | None
    ) -> ConsumerGroupView | None:
        """A frozen snapshot of the group (topics by name; a deleted topic's id as its string)."""
        group = self.groups.get(group_id)
        if group is None:
            return None

        def named(assignment: Partitions) -> NamedPartitions:
            return tuple(
                sorted(
                    (self.topology.topic_name(t) or str(t), tuple(sorted(ps)))
                    for t, ps in assignment.items()
                )
            )

        members = [
            ConsumerGroupMemberView(
                member_id=m.member_id,
                instance_id=m.instance_id,
                member_epoch=m.member_epoch,
                previous_member_epoch=m.previous_member_epoch,
                state=m.state.name,
                subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
                assigned=named(m.assigned_partitions),
                pending_revocation=named(m.partitions_pending_revocation),
                target=named(group.target_assignment.get(m.member_id, EMPTY)),
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                client_id=m.client_id,
            )
            for m in group.members.values()
        ]
        return ConsumerGroupView(
            group_id,
            str(group.state),
            group.group_epoch,
            group.target_assignment_epoch,
            members,
            partition,
            coordinator,
        )

    def list_groups(self, states_filter: tuple[str, ...]) -> list[ListedGroup]:
        """asListedGroup for the consumer groups (the filter in lower case, as Kafka compares)."""
        wanted = {s.lower() for s in states_filter}
        return [
            ListedGroup(group_id, CONSUMER_PROTOCOL_TYPE, str(group.state), "consumer")
            for group_id, group in self.groups.items()
            if not wanted or str(group.state).lower() in wanted
        ]


def _is_subset(
    owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None, target: Partitions
) -> bool:
    """isSubset: the member owns only partitions of ``target`` (None: it did not say)."""
    if owned is None:
        return False
    for topic in owned:
        partitions = target.get(topic.topic_id)
        if partitions is None:
            return False
        if any(p not in partitions for p in topic.partitions):
            return False
    return True
