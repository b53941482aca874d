"""The KIP-848 consumer groups of one ``__consumer_offsets`` partition: the consumer-group part of
Kafka's GroupMetadataManager at 1eb7644 (consumerGroupHeartbeat and its helpers, the session and
rebalance timeouts, the replay of the ConsumerGroup* records, consumerGroupDescribe).

As in Kafka, a handler only *reads* the group and returns records with its response; the state
changes when the records are replayed (:meth:`ConsumerGroupManager.replay`), which is also what a
new leader does when it loads the partition. A handler's records are appended as one batch: if
the append fails, nothing changes and the member gets the mapped error
(``CoordinatorOperationExceptionHelper.handleOperationException``).

Classic members inside consumer groups and online migration (Kafka 4.0's KIP-848 migration):
a ConsumerGroupHeartbeat upgrades a non-empty classic group (getOrMaybeCreateConsumerGroup,
validateOnlineUpgrade, convertToConsumerGroup); JoinGroup, SyncGroup, Heartbeat and LeaveGroup of
classic members are answered inside the consumer group (classicGroupJoinToConsumerGroup and its
siblings), with their own session timeouts and join/sync timers; the last consumer-protocol
member leaving downgrades the group (validateOnlineDowngrade*, convertToClassicGroup), all under
``group.consumer.migration.policy`` and the two group size limits (group_conversion.py holds
the conversions themselves).

Not simulated here (see docs/coordinator.md): regular-expression subscriptions (Kafka 4.0 refuses them: "SubscribedTopicRegex is not
supported yet."), per-group configs (GroupConfigManager), the periodic metadata refresh
(``group.consumer.metadata.refresh.interval.ms`` is Integer.MAX_VALUE in 4.0: only topic
changes refresh a group's metadata).
"""

from __future__ import annotations

import random
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

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
    ReplayedPartitions,
    TopicMetadata,
    merge_counts,
    subscription_type,
)
from coordinator.consumer_protocol import SchemaError, read_subscription
from coordinator.current_assignment import compute_current_assignment
from coordinator.errors import ApiError, Errors
from coordinator.group import EMPTY as CLASSIC_EMPTY
from coordinator.group import ClassicGroup, Parked
from coordinator.group_conversion import (
    assignment_bytes,
    classic_metadata,
    consumer_group_tombstones,
    from_classic_group,
    from_consumer_group,
    members_in_order,
)
from coordinator.group_metadata_manager import GroupMetadataManager
from coordinator.kafka_uuid import RESERVED_UUIDS, Uuid
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
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponseMember,
    ListedGroup,
    SyncGroupRequest,
    SyncGroupResponse,
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
from coordinator.target_assignment import MemberSpecs, build_target_assignment
from coordinator.timeline_order import capacity_for, iteration_order
from coordinator.timers import (
    ConsumerGroupJoinKey,
    ConsumerGroupRebalanceKey,
    ConsumerGroupSessionKey,
    ConsumerGroupSyncKey,
    CoordinatorTimer,
    ExpireConsumerGroupJoin,
    ExpireConsumerGroupRebalance,
    ExpireConsumerGroupSession,
    ExpireConsumerGroupSync,
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
#: ConsumerGroupMigrationPolicy: (upgrade enabled, downgrade enabled); parse() of anything
#: else is DISABLED (the config refuses other names)
MIGRATION_POLICIES = {
    "bidirectional": (True, True),
    "upgrade": (True, False),
    "downgrade": (False, True),
    "disabled": (False, False),
}


@attrs.frozen
class Downgrade:
    """convertToClassicGroup, decided by a handler: the classic group that replaces the consumer
    group once the records are written (Kafka updates its state directly instead of replaying
    them), and whether the change came from a member leaving (a rebalance follows) or from a
    joining static member replacing the last consumer-protocol one."""

    group: ConsumerGroup
    classic: ClassicGroup
    leaving_member_id: str
    joined: bool


@attrs.define
class Batch:
    """A handler's records, and the downgrade that replaces their replay (if any)."""

    records: list[Entry] = attrs.field(factory=list)
    downgrade: Downgrade | None = None


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
        classic: GroupMetadataManager,
    ) -> None:
        self.node = node
        self.partition = partition
        self.config = config
        self.rng = rng
        self.timer = timer
        self.writer = writer
        self.topology = topology
        self.classic = classic
        self.assignors = ConsumerGroupAssignors(config.group_consumer_assignors)
        self.groups: dict[str, ConsumerGroup] = {}
        # each group's member specs, reused between its target-assignment builds (a cache that
        # never changes a result; it goes with the group object)
        self.member_specs: weakref.WeakKeyDictionary[ConsumerGroup, MemberSpecs] = (
            weakref.WeakKeyDictionary()
        )

    # --- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def heartbeat(self, out: Step, waiter: Parked, request: ConsumerGroupHeartbeatRequest) -> None:
        """consumerGroupHeartbeat: validate, then leave or heartbeat; write; answer."""
        try:
            self._validate(request)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                batch, response = self._leave(out, request)
            else:
                batch, response = self._heartbeat(out, request)
        except ApiError as error:
            batch = Batch()
            response = ConsumerGroupHeartbeatResponse(error.error, error_message=error.message)
        error_code = self._commit(out, request.group_id, batch)
        if error_code != Errors.NONE:
            # handleOperationException maps a failed write's error without a message
            response = ConsumerGroupHeartbeatResponse(operation_error_to_response_error(error_code))
        respond(out, self.node, waiter, response, request.group_id, request.member_id)

    def _commit(self, out: Step, group_id: str, batch: Batch) -> Errors:
        """Write a handler's records; once written, replay them (a classic group's tombstone
        removes the classic group first), or run the downgrade that replaces their replay."""
        records = batch.records
        if not records:
            return Errors.NONE
        before = self._snapshot(group_id)
        error_code = self.writer.append(out, records, group_id)
        if error_code != Errors.NONE:
            return error_code
        if batch.downgrade is not None:
            self._install_classic_group(out, batch.downgrade, before)
            return Errors.NONE
        for key, value in records:
            if isinstance(key, GroupMetadataKey) and value is None:
                # the replay of a classic group's tombstone removes it (an upgrade, or an
                # empty classic group giving way to a new consumer group)
                classic = self.classic.groups.get(key.group)
                if classic is not None:
                    upgraded = not classic.is_in(CLASSIC_EMPTY)
                    if upgraded:
                        out.event(
                            "group_upgraded",
                            t_ms=out.now,
                            node=self.node,
                            group_id=key.group,
                            generation_id=classic.generation_id,
                            members=len(classic.members),
                        )
                    reason = (
                        "upgraded to a consumer group"
                        if upgraded
                        else "replaced by a consumer group"
                    )
                    self.classic.delete_group(out, classic, reason)
        self.replay_all(records)
        self._note_changes(out, group_id, before, records)
        return Errors.NONE

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

    def _group_or_new(
        self, out: Step, group_id: str, create: bool, records: list[Entry]
    ) -> ConsumerGroup:
        """getOrMaybeCreateConsumerGroup (a new group is not registered: its records create it).
        An empty classic group of that id (e.g. the simple group of an admin's offset commit)
        gives way when a member joins: maybeDeleteEmptyClassicGroup writes its tombstone. A
        non-empty classic group is upgraded if validateOnlineUpgrade allows it."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.classic.groups.get(group_id)
        if classic is None and not create:
            raise ApiError(Errors.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if classic is None:
            return ConsumerGroup(group_id)
        if create and classic.is_in(CLASSIC_EMPTY):
            records.append((GroupMetadataKey(group_id), None))
            return ConsumerGroup(group_id)
        if create and self._validate_online_upgrade(classic):
            return self._convert_to_consumer_group(out, classic, records)
        raise ApiError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group")

    def _policy(self) -> tuple[bool, bool]:
        """ConsumerGroupMigrationPolicy.parse: (upgrade enabled, downgrade enabled)."""
        return MIGRATION_POLICIES.get(
            self.config.group_consumer_migration_policy.lower(), (False, False)
        )

    def _validate_online_upgrade(self, classic: ClassicGroup) -> bool:
        """validateOnlineUpgrade: the policy, the consumer embedded protocol, the size limit."""
        return (
            self._policy()[0]
            and classic.protocol_type == CONSUMER_PROTOCOL_TYPE
            and len(classic.members) <= self.config.group_consumer_max_size
        )

    def _convert_to_consumer_group(
        self, out: Step, classic: ClassicGroup, records: list[Entry]
    ) -> ConsumerGroup:
        """convertToConsumerGroup: parked JoinGroups and SyncGroups are told to rejoin, the
        classic group's tombstone and the new group's records are written, and each member gets
        a session timeout of its own classic session timeout. The group is not registered: the
        replay of the records creates it."""
        for member in classic.iter_members():
            if member.join_waiter is not None:
                waiter, member.join_waiter = member.join_waiter, None
                response: object = JoinGroupResponse(
                    Errors.REBALANCE_IN_PROGRESS, member_id=member.member_id
                )
                respond(out, self.node, waiter, response, classic.group_id, member.member_id)
        for member in classic.iter_members():
            if member.sync_waiter is not None:
                waiter, member.sync_waiter = member.sync_waiter, None
                response = SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS)
                respond(out, self.node, waiter, response, classic.group_id, member.member_id)
        records.append((GroupMetadataKey(classic.group_id), None))
        try:
            group = from_classic_group(classic, self.topology)
        except SchemaError:
            raise ApiError(
                Errors.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade the classic group {classic.group_id} to consumer group because "
                "the embedded consumer protocol is malformed.",
            ) from None
        # createConsumerGroupRecords
        members = members_in_order(group)
        gid = group.group_id
        records.extend(self._member_record(gid, m) for m in members)
        records.append(
            (ConsumerGroupMetadataKey(gid), ConsumerGroupMetadataValue(group.group_epoch))
        )
        records.extend(
            self._target_record(gid, m.member_id, group.target_assignment.get(m.member_id, EMPTY))
            for m in members
        )
        records.append(
            (
                ConsumerGroupTargetAssignmentMetadataKey(gid),
                ConsumerGroupTargetAssignmentMetadataValue(group.group_epoch),
            )
        )
        records.extend(self._current_record(gid, m) for m in members)
        for m in members:
            self._schedule_session(out, gid, m.member_id, m.classic_protocol_session_timeout)
        return group

    def remove_empty_group(self, out: Step, group_id: str) -> ConsumerGroup:
        """maybeDeleteEmptyConsumerGroup's removeGroup: a classic JoinGroup takes over the id of
        an empty consumer group (the caller writes its tombstones)."""
        before = self._snapshot(group_id)
        group = self.groups.pop(group_id)
        self._note_changes(out, group_id, before, [])
        return group

    def delete_written(
        self, out: Step, group_id: str, tombstones: Sequence[Entry], reason: str
    ) -> None:
        """An empty group's tombstones landed (DeleteGroups, the cleanup job): their replay
        removes the group (its epoch's tombstone), and its end is logged."""
        before = self._snapshot(group_id)
        self.replay_all(tombstones)
        self._note_changes(out, group_id, before, tombstones)
        out.event("group_deleted", t_ms=out.now, node=self.node, group_id=group_id, reason=reason)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            if group_id in self.classic.groups:
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

    def _throw_if_full(self, group: ConsumerGroup, member_id: str) -> None:
        """throwIfConsumerGroupIsFull."""
        if group.num_members() >= self.config.group_consumer_max_size and (
            member_id == "" or not group.has_member(member_id)
        ):
            raise ApiError(
                Errors.GROUP_MAX_SIZE_REACHED,
                "The consumer group has reached its maximum capacity of "
                f"{self.config.group_consumer_max_size} members.",
            )

    def _heartbeat(
        self, out: Step, request: ConsumerGroupHeartbeatRequest
    ) -> tuple[Batch, ConsumerGroupHeartbeatResponse]:
        """The regular heartbeat (consumerGroupHeartbeat's private overload)."""
        records: list[Entry] = []
        group_id = request.group_id
        member_epoch = request.member_epoch
        create = member_epoch == 0
        group = self._group_or_new(out, group_id, create, records)
        member_id = request.member_id
        self._throw_if_full(group, member_id)
        if member_id == "":
            member_id = self._new_member_id()
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
            classic_member_metadata=None,
        )
        updated = self._update_and_reconcile(out, group, member, updated, owned, records)
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
        return Batch(records), response

    def _update_and_reconcile(
        self,
        out: Step,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None,
        records: list[Entry],
    ) -> ConsumerGroupMember:
        """Steps 1-3 of consumerGroupHeartbeat and classicGroupJoinToConsumerGroup: the member's
        record and the group epoch bump if its subscription changed (or the metadata expired),
        the new target assignment if the epoch moved, then the member's reconciliation."""
        group_id = group.group_id
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

        return self._maybe_reconcile(out, group, updated, target_epoch, target, owned, records)

    def _new_member_id(self) -> str:
        """Uuid.randomUuid().toString(), from the shard's seeded random: a java.util.UUID v4
        (UUID.randomUUID) taken as a Kafka Uuid, drawn again if reserved or if its string
        starts with '-'."""
        while True:
            raw = uuid.UUID(int=self.rng.getrandbits(128), version=4).bytes
            candidate = Uuid(
                int.from_bytes(raw[:8], "big", signed=True),
                int.from_bytes(raw[8:], "big", signed=True),
            )
            text = str(candidate)
            if candidate not in RESERVED_UUIDS and not text.startswith("-"):
                return text

    def _static_member(
        self,
        group: ConsumerGroup,
        member_id: str,
        member_epoch: int,
        instance_id: str,
        owned: Sequence[ConsumerGroupHeartbeatTopicPartitions] | None,
        create: bool,
        records: list[Entry],
        use_classic_protocol: bool = False,
    ) -> ConsumerGroupMember:
        """getOrMaybeSubscribeStaticConsumerGroupMember (KIP-848 static membership); a classic
        member's JoinGroup replaces the instance whatever its epoch and skips the epoch check."""
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                return group.get_or_maybe_create_member(member_id, True)
            if (
                not use_classic_protocol
                and not existing.use_classic_protocol
                and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH
            ):
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
        if not use_classic_protocol:
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
            # of TargetAssignmentBuilder's HashMap of member specs (the order kept per group)
            specs = self.member_specs.setdefault(group, MemberSpecs())
            capacity = capacity_for(group.members_high_water)
            result = build_target_assignment(
                assignor=assignor,
                members=specs.in_timeline_order(group.members, capacity),
                static_members=group.static_members,
                subscription_metadata=metadata,
                subscription_type=sub_type,
                target_assignment=group.target_assignment,
                inverted_target_assignment=group.inverted_target_assignment,
                topic_ids=self.topology.topic_ids,
                updated_members=changed,
                specs=specs,
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
            if updated.use_classic_protocol:
                # a classic member has join and sync timers instead of a rebalance timeout
                return updated
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

    # --- classic members in consumer groups (classicGroup*ToConsumerGroup) -------------------------

    def _join_key(self, group_id: str, member_id: str) -> ConsumerGroupJoinKey:
        return ConsumerGroupJoinKey(self.node, self.partition, group_id, member_id)

    def _sync_key(self, group_id: str, member_id: str) -> ConsumerGroupSyncKey:
        return ConsumerGroupSyncKey(self.node, self.partition, group_id, member_id)

    def _schedule_join_timeout_if_absent(
        self, out: Step, group_id: str, member_id: str, rebalance_timeout_ms: int
    ) -> None:
        """scheduleConsumerGroupJoinTimeoutIfAbsent: the classic member must rejoin in time."""
        key = self._join_key(group_id, member_id)
        if not self.timer.is_scheduled(key):
            operation = ExpireConsumerGroupJoin(group_id, member_id)
            self.timer.schedule(out, key, rebalance_timeout_ms, operation)

    def classic_join(self, out: Step, waiter: Parked, request: JoinGroupRequest) -> None:
        """classicGroupJoinToConsumerGroup: a classic member joins a non-empty consumer group.
        It is a consumer-group member with classic metadata; its JoinGroup is answered once the
        records are written, with its member epoch as the generation and no leader."""
        group_id = request.group_id
        member_id = request.member_id
        try:
            group = self.consumer_group(group_id)
            unknown = member_id == ""
            if unknown:
                member_id = self._new_member_id()
            self._throw_if_full(group, member_id)
            if not group.supports_classic_protocols(
                request.protocol_type, [p.name for p in request.protocols]
            ):
                raise ApiError(
                    Errors.INCONSISTENT_GROUP_PROTOCOL,
                    f"Member {member_id}'s protocols are not supported.",
                )
            if unknown and request.group_instance_id is None and request.api_version >= 4:
                # JoinGroupRequest.requiresKnownMemberId: come back with this id
                response = JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=member_id)
                respond(out, self.node, waiter, response, group_id, member_id)
                return
            batch, updated = self._classic_join(out, group, request, member_id, unknown)
        except ApiError as error:
            respond(out, self.node, waiter, JoinGroupResponse(error.error), group_id, member_id)
            return
        error_code = self._commit(out, group_id, batch)
        if error_code != Errors.NONE:
            response = JoinGroupResponse(operation_error_to_response_error(error_code))
            respond(out, self.node, waiter, response, group_id, updated.member_id)
            return
        self.timer.cancel(out, self._join_key(group_id, updated.member_id))
        if batch.downgrade is None:
            # still a consumer group: the member's session, and SyncGroup within its timeout
            self._schedule_session(out, group_id, updated.member_id, request.session_timeout_ms)
            self.timer.schedule(
                out,
                self._sync_key(group_id, updated.member_id),
                request.rebalance_timeout_ms,
                ExpireConsumerGroupSync(group_id, updated.member_id),
            )
        protocols = updated.supported_classic_protocols or ()
        response = JoinGroupResponse(
            Errors.NONE,
            generation_id=updated.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=protocols[0].name if protocols else None,
            member_id=updated.member_id,
        )
        respond(out, self.node, waiter, response, group_id, updated.member_id)

    def _classic_join(
        self,
        out: Step,
        group: ConsumerGroup,
        request: JoinGroupRequest,
        member_id: str,
        unknown: bool,
    ) -> tuple[Batch, ConsumerGroupMember]:
        records: list[Entry] = []
        instance_id = request.group_instance_id
        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, True)
        else:
            member = self._static_member(
                group, member_id, -1, instance_id, (), unknown, records, use_classic_protocol=True
            )
        try:
            subscription = read_subscription(request.protocols[0].metadata)
        except (SchemaError, IndexError):
            # deserializeSubscription's IllegalStateException
            raise ApiError(
                Errors.UNKNOWN_SERVER_ERROR,
                "Malformed embedded consumer protocol in subscription deserialization.",
            ) from None
        protocols = tuple([(p.name, p.metadata) for p in request.protocols])
        updated = member.with_(
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=subscription.rack_id if subscription.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            subscribed_topic_names=frozenset(subscription.topics),
            client_id=request.client_id,
            client_host=request.client_host,
            classic_member_metadata=classic_metadata(request.session_timeout_ms, protocols),
        )
        owned = self._owned_from_subscription(subscription.owned_partitions)
        updated = self._update_and_reconcile(out, group, member, updated, owned, records)
        # 4. the last consumer-protocol static member replaced by this classic one: downgrade
        existing = group.static_member_id(instance_id)
        if existing is not None and self._validate_online_downgrade(group, existing, fenced=False):
            return (
                self._convert_to_classic_group(group, existing, updated, records, out.now),
                updated,
            )
        return Batch(records), updated

    def _owned_from_subscription(
        self, owned: Sequence[tuple[str, int]]
    ) -> list[ConsumerGroupHeartbeatTopicPartitions]:
        """Utils.toTopicPartitions: the subscription's owned partitions by topic id (topics the
        metadata does not know are left out)."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in owned:
            by_topic.setdefault(topic, []).append(partition)
        ids = self.topology.topic_ids
        return [
            ConsumerGroupHeartbeatTopicPartitions(ids[topic], tuple(partitions))
            for topic, partitions in by_topic.items()
            if topic in ids
        ]

    def _classic_member(
        self, group: ConsumerGroup, member_id: str, instance_id: str | None
    ) -> ConsumerGroupMember:
        """validateConsumerGroupMember, then throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            member = group.get_or_maybe_create_member(member_id, False)
        else:
            static = group.static_member(instance_id)
            if static is None:
                raise ApiError(
                    Errors.UNKNOWN_MEMBER_ID,
                    f"Member with instance id {instance_id} is not a member of group "
                    f"{group.group_id}.",
                )
            if static.member_id != member_id:
                raise ApiError(
                    Errors.FENCED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} was fenced by "
                    f"member {static.member_id}.",
                )
            member = static
        if not member.use_classic_protocol:
            raise ApiError(
                Errors.UNKNOWN_MEMBER_ID,
                f"Member {member.member_id} does not use the classic protocol.",
            )
        return member

    @staticmethod
    def _check_generation(member: ConsumerGroupMember, generation_id: int, member_id: str) -> None:
        """throwIfGenerationIdUnmatched."""
        if member.member_epoch != generation_id:
            raise ApiError(
                Errors.ILLEGAL_GENERATION,
                f"The request generation id {generation_id} is not equal to the member epoch "
                f"{member.member_epoch} of member {member_id}.",
            )

    def classic_sync(self, out: Step, waiter: Parked, request: SyncGroupRequest) -> None:
        """classicGroupSyncToConsumerGroup: the member's current assignment, in the version of
        its subscription; the sync timer gives way to its session timer."""
        group_id, member_id = request.group_id, request.member_id
        response: SyncGroupResponse
        try:
            group = self.consumer_group(group_id)
            if group.is_empty():
                raise ApiError(Errors.UNKNOWN_MEMBER_ID)
            member = self._classic_member(group, member_id, request.group_instance_id)
            self._check_generation(member, request.generation_id, member.member_id)
            protocols = member.supported_classic_protocols or ()
            name = protocols[0].name if protocols else None
            if request.protocol_type is not None and request.protocol_type != "consumer":
                raise ApiError(Errors.INCONSISTENT_GROUP_PROTOCOL)
            if request.protocol_name is not None and request.protocol_name != name:
                raise ApiError(Errors.INCONSISTENT_GROUP_PROTOCOL)
            if (
                group.group_epoch > member.member_epoch
                and member.state != MemberState.UNREVOKED_PARTITIONS
            ):
                # throwIfRebalanceInProgress: rejoin to catch up
                self._schedule_join_timeout_if_absent(
                    out, group_id, member.member_id, member.rebalance_timeout_ms
                )
                raise ApiError(Errors.REBALANCE_IN_PROGRESS)
            assignment = assignment_bytes(
                member.assigned_partitions, protocols[0].metadata, self.topology
            )
        except ApiError as error:
            response = SyncGroupResponse(error.error)
        else:
            self.timer.cancel(out, self._sync_key(group_id, member_id))
            self._schedule_session(
                out, group_id, member_id, member.classic_protocol_session_timeout
            )
            response = SyncGroupResponse(
                Errors.NONE, request.protocol_type, request.protocol_name, assignment
            )
        respond(out, self.node, waiter, response, group_id, member_id, request.generation_id)

    def classic_heartbeat(self, out: Step, waiter: Parked, request: HeartbeatRequest) -> None:
        """classicGroupHeartbeatToConsumerGroup: keeps the session; REBALANCE_IN_PROGRESS (and a
        join timer) when the member must rejoin to catch up, revoke, or take freed partitions."""
        group_id, member_id = request.group_id, request.member_id
        error = Errors.NONE
        try:
            group = self.consumer_group(group_id)
            member = self._classic_member(group, member_id, request.group_instance_id)
            self._check_generation(member, request.generation_id, member_id)
            self._schedule_session(
                out, group_id, member_id, member.classic_protocol_session_timeout
            )
            if (
                member.member_epoch < group.group_epoch
                or member.state == MemberState.UNREVOKED_PARTITIONS
                or (
                    member.state == MemberState.UNRELEASED_PARTITIONS
                    and not group.waiting_on_unreleased_partition(member)
                )
            ):
                error = Errors.REBALANCE_IN_PROGRESS
                self._schedule_join_timeout_if_absent(
                    out, group_id, member_id, member.rebalance_timeout_ms
                )
        except ApiError as exc:
            error = exc.error
        response = HeartbeatResponse(error)
        respond(out, self.node, waiter, response, group_id, member_id, request.generation_id)

    def classic_leave(self, out: Step, waiter: Parked, request: LeaveGroupRequest) -> None:
        """classicGroupLeaveToConsumerGroup: each classic member named leaves (tombstones, timers
        cancelled); one epoch bump for them all. A leave never downgrades the group."""
        group = self.consumer_group(request.group_id)
        group_id = group.group_id
        results: list[LeaveGroupResponseMember] = []
        leaving: list[ConsumerGroupMember] = []
        records: list[Entry] = []
        for identity in request.members:
            member_id, instance_id = identity.member_id, identity.group_instance_id
            try:
                if instance_id is None:
                    member = group.get_or_maybe_create_member(member_id, False)
                else:
                    static = group.static_member(instance_id)
                    if static is None:
                        raise ApiError(
                            Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown."
                        )
                    if member_id != "" and static.member_id != member_id:
                        raise ApiError(Errors.FENCED_INSTANCE_ID)
                    member = static
                    member_id = member.member_id
                if not member.use_classic_protocol:
                    raise ApiError(Errors.UNKNOWN_MEMBER_ID)
            except ApiError as error:
                results.append(LeaveGroupResponseMember(member_id, instance_id, error.error))
                continue
            records.extend(self._member_tombstones(group_id, member_id))
            self._cancel_timers(out, group_id, member_id)
            out.event(
                "consumer_group_member_removed",
                t_ms=out.now,
                node=self.node,
                group_id=group_id,
                member_id=member_id,
                member_epoch=member.member_epoch,
                reason=f"LeaveGroup ({identity.reason or 'not provided'})",
            )
            results.append(LeaveGroupResponseMember(member_id, instance_id, Errors.NONE))
            leaving.append(member)
        if records:
            names = dict(group.subscribed_topic_names)
            for member in leaving:
                names = merge_counts(names, member.subscribed_topic_names, None)
            metadata = self._subscription_metadata(names)
            if metadata != group.subscription_metadata:
                records.append(self._metadata_record(group_id, metadata))
            records.append(
                (
                    ConsumerGroupMetadataKey(group_id),
                    ConsumerGroupMetadataValue(group.group_epoch + 1),
                )
            )
        error_code = self._commit(out, group_id, Batch(records))
        if error_code != Errors.NONE:
            mapped = operation_error_to_response_error(error_code)
            self.classic.leave_reply(out, waiter, request, mapped, ())
            return
        self.classic.leave_reply(out, waiter, request, Errors.NONE, tuple(results))

    # --- leaving and fencing ----------------------------------------------------------------------

    def _leave(
        self, out: Step, request: ConsumerGroupHeartbeatRequest
    ) -> tuple[Batch, ConsumerGroupHeartbeatResponse]:
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
            return Batch(
                [self._current_record(group.group_id, leaving)]
            ), ConsumerGroupHeartbeatResponse(
                Errors.NONE,
                member_id=static.member_id,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
            )
        return self._fence(out, group, static, "the static member left"), response

    def _fence(
        self, out: Step, group: ConsumerGroup, member: ConsumerGroupMember, reason: str
    ) -> Batch:
        """consumerGroupFenceMember: the member's tombstones, the new subscription metadata,
        the group epoch bumped; its timers cancelled. Or, if it is the last member using the
        consumer protocol and validateOnlineDowngradeWithFencedMember allows it, the downgrade
        to a classic group (convertToClassicGroup)."""
        if self._validate_online_downgrade(group, member.member_id, fenced=True):
            out.event(
                "consumer_group_member_removed",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=member.member_id,
                member_epoch=member.member_epoch,
                reason=reason,
            )
            return self._convert_to_classic_group(group, member.member_id, None, [], out.now)
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
        return Batch(records)

    def _validate_online_downgrade(
        self, group: ConsumerGroup, member_id: str, *, fenced: bool
    ) -> bool:
        """validateOnlineDowngradeWithFencedMember (``fenced``: the member leaves, so the group
        keeps one member fewer and must keep one at least) or
        validateOnlineDowngradeWithReplacedMemberId (a classic static member replaces it)."""
        if not group.all_members_use_classic_protocol_except(member_id):
            return False
        size = group.num_members() - 1 if fenced else group.num_members()
        if fenced and group.num_members() <= 1:
            return False  # it would be empty: no downgrade
        if not self._policy()[1]:
            return False  # the online downgrade is disabled
        return size <= self.config.group_max_size

    def _convert_to_classic_group(
        self,
        group: ConsumerGroup,
        leaving_member_id: str,
        joining: ConsumerGroupMember | None,
        records: list[Entry],
        now_ms: int,
    ) -> Batch:
        """convertToClassicGroup's records (the consumer group's tombstones, the classic group's
        record); the state change itself waits for the write (_install_classic_group)."""
        if joining is None:
            records.extend(consumer_group_tombstones(group))
        else:
            records.extend(consumer_group_tombstones(group, {leaving_member_id: joining.member_id}))
        try:
            classic = from_consumer_group(group, leaving_member_id, joining, self.topology, now_ms)
        except SchemaError as exc:
            raise ApiError(
                Errors.GROUP_ID_NOT_FOUND,
                f"Cannot downgrade the classic group {group.group_id}: {exc}.",
            ) from None
        assignments = {m.member_id: m.assignment for m in classic.iter_members()}
        records.append(self.classic.group_record(classic, assignments))
        downgrade = Downgrade(group, classic, leaving_member_id, joining is not None)
        return Batch(records, downgrade)

    def _install_classic_group(
        self, out: Step, downgrade: Downgrade, before: tuple[str | None, frozenset[str]]
    ) -> None:
        """convertToClassicGroup's direct state change: the consumer group is removed, the
        classic group takes its place, every member's classic session timer starts again, and
        a rebalance starts if a member left. The consumer group's own timers are left to fire
        and find no consumer group, as in Kafka."""
        group, classic = downgrade.group, downgrade.classic
        self.groups.pop(group.group_id, None)
        out.event(
            "group_downgraded",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            generation_id=classic.generation_id,
            members=len(classic.members),
        )
        self._note_changes(out, group.group_id, before, [])
        self.classic.adopt_group(out, classic)
        for member in classic.iter_members():
            self.classic.schedule_heartbeat(
                out, classic, member.member_id, member.session_timeout_ms
            )
        if not downgrade.joined:
            self.classic.prepare_rebalance(
                out, classic, f"Downgrade group {classic.group_id} from consumer to classic."
            )

    def _schedule_session(
        self, out: Step, group_id: str, member_id: str, timeout_ms: int | None = None
    ) -> None:
        """scheduleConsumerGroupSessionTimeout (a classic member's own session timeout, else the
        group's)."""
        key = ConsumerGroupSessionKey(self.node, self.partition, group_id, member_id)
        self.timer.schedule(
            out,
            key,
            self.config.group_consumer_session_timeout_ms if timeout_ms is None else timeout_ms,
            ExpireConsumerGroupSession(group_id, member_id),
        )

    def _cancel_timers(self, out: Step, group_id: str, member_id: str) -> None:
        """cancelTimers: session, rebalance, join and sync."""
        node, partition = self.node, self.partition
        self.timer.cancel(out, ConsumerGroupSessionKey(node, partition, group_id, member_id))
        self.timer.cancel(out, ConsumerGroupRebalanceKey(node, partition, group_id, member_id))
        self.timer.cancel(out, ConsumerGroupJoinKey(node, partition, group_id, member_id))
        self.timer.cancel(out, ConsumerGroupSyncKey(node, partition, group_id, member_id))

    def _write_fence(
        self, out: Step, group: ConsumerGroup, member: ConsumerGroupMember, reason: str
    ) -> None:
        """A timer's fencing (consumerGroupFenceMemberOperation): write, then replay."""
        self._commit(out, group.group_id, self._fence(out, group, member, reason))

    def on_session_expired(self, out: Step, operation: ExpireConsumerGroupSession) -> None:
        group = self.groups.get(operation.group_id)
        member = None if group is None else group.members.get(operation.member_id)
        if group is None or member is None:
            return
        self._write_fence(out, group, member, "the member session expired.")

    def on_join_timeout(self, out: Step, operation: ExpireConsumerGroupJoin) -> None:
        group = self.groups.get(operation.group_id)
        member = None if group is None else group.members.get(operation.member_id)
        if group is None or member is None:
            return
        reason = "the classic member failed to join within the rebalance timeout."
        self._write_fence(out, group, member, reason)

    def on_sync_timeout(self, out: Step, operation: ExpireConsumerGroupSync) -> None:
        group = self.groups.get(operation.group_id)
        member = None if group is None else group.members.get(operation.member_id)
        if group is None or member is None:
            return
        self._write_fence(out, group, member, "the member failed to sync within timeout.")

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
                classic_member_metadata=m.classic_member_metadata,
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
                        key.member_id, {t: ReplayedPartitions(ps) for t, ps in ordered.items()}
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
                    classic_member_metadata=value.classic_member_metadata,
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
                # a new ConsumerGroup starts Empty (its constructor), then its records replay
                state_from=before if before is not None else "Empty",
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
