"""The classic groups of one ``__consumer_offsets`` partition: Kafka's GroupMetadataManager
(its classic-group part) on the partition's leader.

JoinGroup (KIP-394 member ids, KIP-345 static membership, the initial-delay chain), SyncGroup,
Heartbeat, LeaveGroup, session and pending-sync expiry, the rebalance machinery, replaying a
group's record and the groups' answers on load and unload, ListGroups and DescribeGroups. Every
method that emits takes the call's ``out: Step``; the shard (GroupCoordinatorShard) creates it
and returns it as the call's CoordinatorResult. docs/coordinator.md describes the behaviour.

What each request does in each group state is tabled in ``coordinator/state_machine.py``
(``REQUEST_BEHAVIOUR``); the methods here are that table's code, in Kafka's order of checks.

Log appends are synchronous (``PartitionWriter``): an append either succeeds at once (the
responses that wait for it go out in the same call) or fails with the injected error, mapped to
the client error Kafka returns (``append_error_to_response_error``).
"""

from __future__ import annotations

import random
import struct
import uuid
from collections.abc import Callable, Sequence

from coordinator.config import CoordinatorConfig
from coordinator.errors import NO_ERROR, Errors
from coordinator.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
    Member,
    Parked,
)
from coordinator.log import append_error_to_response_error, operation_error_to_response_error
from coordinator.memo import Memo
from coordinator.protocol import (
    DescribedGroup,
    DescribedGroupMember,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    ListedGroup,
    SyncGroupRequest,
    SyncGroupResponse,
)
from coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadataValue,
    RecordKey,
    RecordValue,
)
from coordinator.result import Step
from coordinator.runtime import PartitionWriter, respond
from coordinator.state_machine import detach
from coordinator.timeline_order import capacity_for, iteration_order
from coordinator.timers import (
    CompleteInitialJoin,
    CompleteJoin,
    CoordinatorTimer,
    ExpireHeartbeat,
    ExpirePendingSync,
    HeartbeatKey,
)

CONSUMER_PROTOCOL_TYPE = "consumer"

#: How many members' heartbeat keys a manager keeps built (one entry per member it has seen).
_HEARTBEAT_TIMERS_KEPT = 65_536

# The characters Java's String.trim removes from both ends: every code point up to U+0020.
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))


# parse_subscribed_topics' memo (a pure parse of immutable bytes: a member's subscription mostly
# repeats from one rebalance to the next)
_SUBSCRIBED_TOPICS: Memo[bytes, frozenset[str] | None] = Memo()


def parse_subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """Topics of a ConsumerProtocolSubscription (the version-0 prefix: int16 version, topics).

    Kafka parses this only to know which offsets of a Stable consumer group may expire; a parse
    failure just disables that (None).
    """
    if type(metadata) is not bytes:
        return _parse_subscribed_topics(metadata)
    answers = _SUBSCRIBED_TOPICS.answers
    if metadata in answers:  # None (not parseable) is an answer too
        return answers[metadata]
    return _SUBSCRIBED_TOPICS.keep(metadata, _parse_subscribed_topics(metadata), len(metadata))


def _parse_subscribed_topics(metadata: bytes) -> frozenset[str] | None:
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


class GroupMetadataManager:
    """The classic groups of one shard: their requests, timers, records and answers."""

    def __init__(
        self,
        *,
        node: str,
        partition: int,
        config: CoordinatorConfig,
        rng: random.Random,
        timer: CoordinatorTimer,
        writer: PartitionWriter,
        on_group_created: Callable[[Step], None],
    ) -> None:
        self.node = node
        self.partition = partition
        self.config = config
        self.rng = rng
        self.timer = timer
        self.writer = writer
        # the shard's hook: its periodic cleanup runs while it holds groups
        self._on_group_created = on_group_created
        self.groups: dict[str, ClassicGroup] = {}
        # (group, member) -> its heartbeat key, the key rendered, its operation: values that
        # cannot change, built once instead of on every heartbeat (a memo: dropped when full)
        self._heartbeat_timers: dict[
            tuple[str, str], tuple[HeartbeatKey, str, ExpireHeartbeat]
        ] = {}
        # the most groups held at once: the capacity of Kafka's TimelineHashMap of groups, whose
        # iteration order the cleanup job follows (timeline_order.capacity_for)
        self.groups_high_water = 0

    def schedule_heartbeat(
        self, out: Step, group: ClassicGroup, member_id: str, timeout_ms: int
    ) -> None:
        group_id = group.group_id
        timer = self._heartbeat_timers.get((group_id, member_id))
        if timer is None:
            if len(self._heartbeat_timers) >= _HEARTBEAT_TIMERS_KEPT:
                self._heartbeat_timers.clear()
            key = HeartbeatKey(self.node, self.partition, group_id, member_id)
            timer = (key, str(key), ExpireHeartbeat(group_id, member_id))
            self._heartbeat_timers[(group_id, member_id)] = timer
        self.timer.schedule(out, timer[0], timeout_ms, timer[2], timer[1])

    def _transition(self, out: Step, group: ClassicGroup, target: str, reason: str) -> None:
        before = group.model.transition_to(target)
        group.state_timestamp_ms = out.now
        out.event(
            "group_state_changed",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            state_from=before,
            state_to=target,
            generation_id=group.generation_id,
            reason=reason,
        )

    def _note_leader(self, out: Step, group: ClassicGroup, before: str | None, reason: str) -> None:
        if group.leader_id != before:
            out.event(
                "leader_elected",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=group.leader_id,
                previous_leader=before,
                generation_id=group.generation_id,
                reason=reason,
            )

    def _group_record(
        self, group: ClassicGroup, assignment: dict[str, bytes] | None
    ) -> tuple[GroupMetadataKey, GroupMetadataValue]:
        """GroupCoordinatorRecordHelpers.newGroupMetadataRecord (``assignment`` None = no members)."""
        members: tuple[MemberMetadataValue, ...] = ()
        if assignment is not None:
            members = tuple(
                [
                    MemberMetadataValue(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        rebalance_timeout=m.rebalance_timeout_ms,
                        session_timeout=m.session_timeout_ms,
                        subscription=m.metadata_for(group.protocol_name),
                        assignment=assignment.get(m.member_id, b""),
                    )
                    for m in group.iter_members()
                ]
            )
        value = GroupMetadataValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            current_state_timestamp=group.state_timestamp_ms,
            members=members,
        )
        return GroupMetadataKey(group.group_id), value

    def group_record(
        self, group: ClassicGroup, assignment: dict[str, bytes]
    ) -> tuple[GroupMetadataKey, GroupMetadataValue]:
        """createClassicGroupRecords: the group's record with every member's assignment (the
        downgrade of a consumer group writes it)."""
        return self._group_record(group, assignment)

    def adopt_group(self, out: Step, group: ClassicGroup) -> None:
        """A classic group made from a downgraded consumer group takes its id (groups.put)."""
        group.subscribed_topics = self.subscribed_topics(group)
        self.groups[group.group_id] = group
        self.groups_high_water = max(self.groups_high_water, len(self.groups))
        self._on_group_created(out)

    def _empty_group_record(
        self, group: ClassicGroup
    ) -> tuple[GroupMetadataKey, GroupMetadataValue]:
        """newEmptyGroupMetadataRecord: generation 0, no type, protocol, leader or members."""
        value = GroupMetadataValue(
            protocol_type="",
            generation=0,
            protocol=None,
            leader=None,
            current_state_timestamp=group.state_timestamp_ms,
        )
        return GroupMetadataKey(group.group_id), value

    def create_group(self, out: Step, group_id: str, reason: str) -> ClassicGroup:
        group = ClassicGroup(group_id=group_id, created_ms=out.now)
        self.groups[group_id] = group
        self.groups_high_water = max(self.groups_high_water, len(self.groups))
        out.event("group_created", t_ms=out.now, node=self.node, group_id=group_id, reason=reason)
        self._on_group_created(out)
        return group

    def delete_group(self, out: Step, group: ClassicGroup, reason: str) -> None:
        self.groups.pop(group.group_id, None)
        for member_id in list(group.members) + list(group.pending_members):
            self.timer.cancel(out, self.timer.heartbeat_key(group.group_id, member_id))
        self.timer.cancel(out, self.timer.join_key(group.group_id))
        self.timer.cancel(out, self.timer.sync_key(group.group_id))
        detach(group.model)
        out.event(
            "group_deleted", t_ms=out.now, node=self.node, group_id=group.group_id, reason=reason
        )

    def _generate_member_id(self, client_id: str, instance_id: str | None) -> str:
        """ClassicGroup.generateMemberId: ``<instance id or client id>-<UUID>``, seeded."""
        u = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        return f"{instance_id if instance_id is not None else client_id}-{u}"

    def on_heartbeat_expired(self, out: Step, op: ExpireHeartbeat) -> None:
        group = self.groups.get(op.group_id)
        if group is not None:
            self._expire_heartbeat(out, group, op.member_id)

    def on_initial_join_delay(self, out: Step, op: CompleteInitialJoin) -> None:
        group = self.groups.get(op.group_id)
        if group is not None:
            self._try_complete_initial_rebalance(out, group, op.delay_ms, op.remaining_ms)

    def on_join_timeout(self, out: Step, op: CompleteJoin) -> None:
        group = self.groups.get(op.group_id)
        if group is not None:
            self._complete_join(out, group)

    def on_sync_timeout(self, out: Step, op: ExpirePendingSync) -> None:
        group = self.groups.get(op.group_id)
        if group is not None:
            self._expire_pending_sync(out, group, op.generation_id)

    # --- JoinGroup (GroupMetadataManager.classicGroupJoin) ----------------------------------------

    def _join_error(
        self, out: Step, waiter: Parked, req: JoinGroupRequest, error: Errors, member_id: str
    ) -> None:
        respond(
            out,
            self.node,
            waiter,
            JoinGroupResponse(error, member_id=member_id),
            req.group_id,
            member_id,
        )

    def classic_group_join(
        self,
        out: Step,
        waiter: Parked,
        req: JoinGroupRequest,
        prefix: Sequence[tuple[RecordKey, RecordValue]] = (),
    ) -> None:
        """classicGroupJoinToClassicGroup; ``prefix``: the tombstones of the empty consumer group
        this group replaces, written with the new group's first record if nothing else writes
        (Kafka drops them otherwise)."""
        group = self.groups.get(req.group_id)
        is_new_group = group is None
        if group is None:
            if req.member_id != "":
                # No group is created for a claimed member id (static members too).
                self._join_error(out, waiter, req, Errors.UNKNOWN_MEMBER_ID, req.member_id)
                return
            group = self.create_group(out, req.group_id, "JoinGroup from a new member")
        if not self._accept_joining_member(group, req.member_id):
            before = group.leader_id
            removed = group.remove(req.member_id)
            group.remove_pending(req.member_id)
            if removed is not None:
                self._member_removed(out, group, removed.member_id, "group.max.size reached")
            self._note_leader(out, group, before, "member rejected by group.max.size")
            self._join_error(out, waiter, req, Errors.GROUP_MAX_SIZE_REACHED, "")
        elif req.member_id == "":
            self._join_new_member(out, waiter, req, group)
        else:
            self._join_existing_member(out, waiter, req, group)
        if is_new_group and out.appends == 0:
            # A group that wrote nothing is committed with an "empty group" record; if that fails
            # the creation is rolled back (Kafka reverts its timeline snapshot).
            entries = [*prefix, self._empty_group_record(group)]
            error = self.writer.append(out, entries, group.group_id)
            if error != NO_ERROR:
                for member in group.iter_members():
                    if member.join_waiter is waiter:
                        member.join_waiter = None
                        self._join_error(
                            out, waiter, req, append_error_to_response_error(error), ""
                        )
                self.delete_group(out, group, "empty group record could not be written")

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        """GroupMetadataManager.acceptJoiningMember: group.max.size."""
        limit = self.config.group_max_size
        state = group.model.state  # not group.state: one property call less per join
        if state in (EMPTY, DEAD):
            return True
        if state == PREPARING_REBALANCE:
            member = group.members.get(member_id)
            # fewer members than the limit means fewer waiting ones too (no need to count them)
            return (
                (member is not None and member.awaiting_join)
                or len(group.members) < limit
                or group.num_awaiting_join() < limit
            )
        return member_id in group.members or len(group.members) < limit

    def _protocols(self, req: JoinGroupRequest) -> tuple[tuple[str, bytes], ...]:
        return tuple([(p.name, p.metadata) for p in req.protocols])  # a list: no generator

    def _rebalance_timeout(self, req: JoinGroupRequest) -> int:
        # JoinGroup v0 has no rebalance timeout: the session timeout stands in (KafkaApis).
        return req.session_timeout_ms if req.api_version == 0 else req.rebalance_timeout_ms

    def _join_new_member(
        self, out: Step, waiter: Parked, req: JoinGroupRequest, group: ClassicGroup
    ) -> None:
        protocols = self._protocols(req)
        if group.is_in(DEAD):
            self._join_error(out, waiter, req, Errors.COORDINATOR_NOT_AVAILABLE, "")
            return
        if not group.supports_protocols(req.protocol_type, [n for n, _ in protocols]):
            self._join_error(out, waiter, req, Errors.INCONSISTENT_GROUP_PROTOCOL, "")
            return
        new_id = self._generate_member_id(req.client_id, req.group_instance_id)
        if req.group_instance_id is not None:
            old_id = group.static_members.get(req.group_instance_id)
            if old_id is not None:
                self._replace_static_member(out, waiter, req, group, old_id, new_id)
            else:
                self._add_member(out, waiter, req, group, new_id)
        elif req.api_version >= 4:
            # KIP-394: hand out an id and ask the member to come back with it.
            group.pending_members[new_id] = None
            out.event(
                "pending_member_added",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=new_id,
            )
            self.schedule_heartbeat(out, group, new_id, req.session_timeout_ms)
            self._join_error(out, waiter, req, Errors.MEMBER_ID_REQUIRED, new_id)
        else:
            self._add_member(out, waiter, req, group, new_id)

    def _join_existing_member(
        self, out: Step, waiter: Parked, req: JoinGroupRequest, group: ClassicGroup
    ) -> None:
        member_id = req.member_id
        protocols = self._protocols(req)
        state = group.model.state  # nothing below changes it before the branch on it
        if state == DEAD:
            self._join_error(out, waiter, req, Errors.COORDINATOR_NOT_AVAILABLE, member_id)
            return
        if not group.supports_protocols(req.protocol_type, [n for n, _ in protocols]):
            self._join_error(out, waiter, req, Errors.INCONSISTENT_GROUP_PROTOCOL, member_id)
            return
        if member_id in group.pending_members:
            if req.group_instance_id is not None:
                # Kafka throws IllegalStateException here (a pending id is never static); the
                # failed operation is answered UNKNOWN_SERVER_ERROR without a member id
                # (GroupCoordinatorService.joinGroup).
                response = JoinGroupResponse(Errors.UNKNOWN_SERVER_ERROR)
                respond(out, self.node, waiter, response, req.group_id, member_id)
                return
            self._add_member(out, waiter, req, group, member_id)
            return
        error = self.validate_member(group, member_id, req.group_instance_id)
        if error != NO_ERROR:
            self._join_error(out, waiter, req, error, member_id)
            return
        member = group.members[member_id]
        if state == PREPARING_REBALANCE:
            self._update_member(out, group, member, req, waiter, protocols)
            self._maybe_prepare_rebalance_or_complete_join(
                out, group, f"member {member_id} rejoined"
            )
        elif state == COMPLETING_REBALANCE:
            if member.matches(protocols):
                members = self._members_list(group) if group.is_leader(member_id) else ()
                self._answer_current_generation(out, waiter, group, member_id, members)
            else:
                self._update_member(out, group, member, req, waiter, protocols)
                self._maybe_prepare_rebalance_or_complete_join(
                    out, group, f"member {member_id} changed its metadata"
                )
        elif state == STABLE:
            if group.is_leader(member_id) or not member.matches(protocols):
                why = "the leader rejoined" if group.is_leader(member_id) else "metadata changed"
                self._update_member(out, group, member, req, waiter, protocols)
                self._maybe_prepare_rebalance_or_complete_join(out, group, f"{member_id}: {why}")
            else:
                self._answer_current_generation(out, waiter, group, member_id, ())
        else:  # Empty: a stale member id
            self._join_error(out, waiter, req, Errors.UNKNOWN_MEMBER_ID, member_id)

    def _answer_current_generation(
        self,
        out: Step,
        waiter: Parked,
        group: ClassicGroup,
        member_id: str,
        members: tuple[JoinGroupResponseMember, ...],
        assignment: bytes | None = None,
    ) -> None:
        """A successful JoinGroup answer for the group's current generation (``members`` only for
        the leader), as completeClassicGroupJoin and the Stable/CompletingRebalance rejoin send.
        With ``assignment`` (seed 004's design 2) it names no leader and carries the member's
        partitions."""
        respond(
            out,
            self.node,
            waiter,
            JoinGroupResponse(
                NO_ERROR,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=(group.leader_id or "") if assignment is None else "",
                member_id=member_id,
                members=members,
                assignment=assignment,
            ),
            group.group_id,
            member_id,
        )

    def _members_list(self, group: ClassicGroup) -> tuple[JoinGroupResponseMember, ...]:
        """ClassicGroup.currentClassicGroupMembers, in HashMap order."""
        protocol = group.protocol_name
        return tuple(
            [
                JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata_for(protocol))
                for m in group.iter_members()
            ]
        )

    def validate_member(
        self, group: ClassicGroup, member_id: str, instance_id: str | None
    ) -> Errors:
        """ClassicGroup.validateMember: fencing by instance id, then membership."""
        if instance_id is not None:
            current = group.static_members.get(instance_id)
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            if current != member_id:
                return Errors.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return Errors.UNKNOWN_MEMBER_ID
        return NO_ERROR

    def _update_member(
        self,
        out: Step,
        group: ClassicGroup,
        member: Member,
        req: JoinGroupRequest,
        waiter: Parked | None,
        protocols: tuple[tuple[str, bytes], ...] | None = None,
    ) -> None:
        """ClassicGroup.updateMember: new protocols/timeouts; a previous parked join is dropped.
        ``protocols``: the request's, if the caller has them already."""
        if protocols is None:
            protocols = self._protocols(req)
        group.update_protocols(member, protocols)
        member.rebalance_timeout_ms = self._rebalance_timeout(req)
        member.session_timeout_ms = req.session_timeout_ms
        if member.join_waiter is not None and waiter is not None:
            out.event(
                "join_dropped",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=member.member_id,
                correlation_id=member.join_waiter.correlation_id,
                reason="superseded by a newer JoinGroup",
            )
        member.join_waiter = waiter

    def _add_member(
        self, out: Step, waiter: Parked, req: JoinGroupRequest, group: ClassicGroup, member_id: str
    ) -> None:
        """GroupMetadataManager.addMemberThenRebalanceOrCompleteJoin."""
        member = Member(
            member_id=member_id,
            group_instance_id=req.group_instance_id,
            client_id=req.client_id,
            client_host=req.client_host,
            rebalance_timeout_ms=self._rebalance_timeout(req),
            session_timeout_ms=req.session_timeout_ms,
            protocol_type=req.protocol_type,
            protocols=self._protocols(req),
            join_waiter=waiter,
            is_new=True,
        )
        if group.is_in(PREPARING_REBALANCE) and group.previous_state == EMPTY:
            group.new_member_added = True
        before = group.leader_id
        group.add(member)
        out.event(
            "member_added",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            member_id=member_id,
            group_instance_id=req.group_instance_id,
            generation_id=group.generation_id,
            reason="JoinGroup",
            client_reason=req.reason,
        )
        self._note_leader(out, group, before, "first member added")
        self.schedule_heartbeat(out, group, member_id, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(out, group, f"new member {member_id} joined")

    def _replace_static_member(
        self,
        out: Step,
        waiter: Parked,
        req: JoinGroupRequest,
        group: ClassicGroup,
        old_id: str,
        new_id: str,
    ) -> None:
        """GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin (KIP-345)."""
        instance_id = req.group_instance_id
        assert instance_id is not None
        old = group.members[old_id]
        current_leader = group.leader_id
        if old.join_waiter is not None:
            w, old.join_waiter = old.join_waiter, None
            respond(
                out,
                self.node,
                w,
                JoinGroupResponse(Errors.FENCED_INSTANCE_ID, member_id=old_id),
                group.group_id,
                old_id,
            )
        if old.sync_waiter is not None:
            w, old.sync_waiter = old.sync_waiter, None
            respond(
                out,
                self.node,
                w,
                SyncGroupResponse(Errors.FENCED_INSTANCE_ID),
                group.group_id,
                old_id,
            )
        new = group.replace_static_member(instance_id, old_id, new_id)
        out.event(
            "member_replaced",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            member_id=new_id,
            previous_member_id=old_id,
            group_instance_id=instance_id,
            generation_id=group.generation_id,
            reason="static member rejoined with an unknown member id",
        )
        self._note_leader(out, group, current_leader, "static leader replaced")
        self.schedule_heartbeat(out, group, new_id, new.session_timeout_ms)
        old_protocols = new.protocols
        old_rebalance, old_session = new.rebalance_timeout_ms, new.session_timeout_ms
        self._update_member(out, group, new, req, waiter)
        if group.is_in(STABLE):
            if (group.protocol_name or "") == group.select_protocol():
                assignment = {m.member_id: m.assignment for m in group.members.values()}
                error = self.writer.append(
                    out, [self._group_record(group, assignment)], group.group_id
                )
                if error != NO_ERROR:
                    # Revert: the old incarnation comes back with its old protocols and timeouts.
                    group.update_protocols(new, old_protocols)
                    new.rebalance_timeout_ms, new.session_timeout_ms = old_rebalance, old_session
                    new.join_waiter = None
                    restored = group.replace_static_member(instance_id, new_id, old_id)
                    self.schedule_heartbeat(out, group, old_id, restored.session_timeout_ms)
                    respond(
                        out,
                        self.node,
                        waiter,
                        JoinGroupResponse(
                            append_error_to_response_error(error),
                            generation_id=group.generation_id,
                            protocol_type=group.protocol_type,
                            protocol_name=group.protocol_name,
                            leader=current_leader or "",
                            member_id="",
                        ),
                        group.group_id,
                        new_id,
                    )
                    return
                new.join_waiter = None
                if req.api_version >= 9:
                    is_leader = group.is_leader(new_id)
                    response = JoinGroupResponse(
                        NO_ERROR,
                        generation_id=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol_name=group.protocol_name,
                        leader=group.leader_id or "",
                        skip_assignment=is_leader,
                        member_id=new_id,
                        members=self._members_list(group) if is_leader else (),
                    )
                else:
                    response = JoinGroupResponse(
                        NO_ERROR,
                        generation_id=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol_name=group.protocol_name,
                        leader=current_leader or "",
                        member_id=new_id,
                    )
                respond(out, self.node, waiter, response, group.group_id, new_id)
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    out, group, f"static member {instance_id} replaced; the protocol would change"
                )
        elif group.is_in(COMPLETING_REBALANCE):
            self.prepare_rebalance(out, group, f"static member {instance_id} replaced")
        elif group.is_in(PREPARING_REBALANCE):
            self._maybe_complete_join_phase(out, group)
        else:
            # Empty with static members cannot happen; Kafka throws IllegalStateException, which
            # its runtime answers UNKNOWN_SERVER_ERROR (without a member id).
            new.join_waiter = None
            respond(
                out,
                self.node,
                waiter,
                JoinGroupResponse(Errors.UNKNOWN_SERVER_ERROR),
                req.group_id,
                new_id,
            )

    # --- rebalance machinery (prepareRebalance, maybeCompleteJoinPhase, initial delay) ------------

    def _maybe_prepare_rebalance_or_complete_join(
        self, out: Step, group: ClassicGroup, reason: str
    ) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(out, group, reason)
        else:
            self._maybe_complete_join_phase(out, group)

    def _maybe_complete_join_phase(self, out: Step, group: ClassicGroup) -> None:
        model = group.model  # its fields, not the group's properties: every rejoin asks
        if model.state != PREPARING_REBALANCE:
            return
        if model.previous_state == EMPTY:
            return  # an initial rebalance only ends by its delay chain
        if group.has_all_members_joined():
            self._complete_join(out, group)

    def prepare_rebalance(self, out: Step, group: ClassicGroup, reason: str) -> None:
        if group.is_in(COMPLETING_REBALANCE):
            self._reset_and_propagate(out, group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(out, group)
        initial = group.is_in(EMPTY)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self.timer.schedule(
                out,
                self.timer.join_key(group.group_id),
                delay,
                CompleteInitialJoin(group.group_id, delay, remaining),
            )
        self._transition(out, group, PREPARING_REBALANCE, reason)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(out, group)
            else:
                self.timer.schedule(
                    out,
                    self.timer.join_key(group.group_id),
                    group.rebalance_timeout_ms(),
                    CompleteJoin(group.group_id),
                )

    def _try_complete_initial_rebalance(
        self, out: Step, group: ClassicGroup, delay: int, remaining: int
    ) -> None:
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            self.timer.schedule(
                out,
                self.timer.join_key(group.group_id),
                new_delay,
                CompleteInitialJoin(group.group_id, new_delay, new_remaining),
            )
        else:
            self._complete_join(out, group)

    def _complete_join(self, out: Step, group: ClassicGroup) -> None:
        """GroupMetadataManager.completeClassicGroupJoin."""
        self.timer.cancel(out, self.timer.join_key(group.group_id))
        for member in group.iter_members():
            # not awaiting_join and not is_static (their fields: one property call less each)
            if member.join_waiter is None and member.group_instance_id is None:
                before = group.leader_id
                group.remove(member.member_id)
                self.timer.cancel(out, self.timer.heartbeat_key(group.group_id, member.member_id))
                self._member_removed(
                    out, group, member.member_id, "did not rejoin before the join phase ended"
                )
                self._note_leader(out, group, before, "leader removed")
        if group.is_in(DEAD):
            return
        before = group.leader_id
        elected = group.maybe_elect_new_joined_leader()
        self._note_leader(out, group, before, "the leader did not rejoin")
        if not elected and group.members:
            self.timer.schedule(
                out,
                self.timer.join_key(group.group_id),
                group.rebalance_timeout_ms(),
                CompleteJoin(group.group_id),
            )
            return
        group.generation_id += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            group.subscribed_topics = self.subscribed_topics(group)
            out.event(
                "protocol_selected",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                generation_id=group.generation_id,
                protocol_name=group.protocol_name,
            )
            self._transition(out, group, COMPLETING_REBALANCE, "join phase completed")
            group.pending_sync.clear()
            if (
                self.config.server_assignor is not None
                and group.protocol_type == CONSUMER_PROTOCOL_TYPE
            ):
                self._assign_on_the_server(out, group)
                return
            members = self._members_list(group)
            for member in group.iter_members():
                is_leader = group.is_leader(member.member_id)
                if member.join_waiter is not None:
                    waiter, member.join_waiter = member.join_waiter, None
                    self._answer_current_generation(
                        out, waiter, group, member.member_id, members if is_leader else ()
                    )
                self.schedule_heartbeat(out, group, member.member_id, member.session_timeout_ms)
                member.is_new = False
                group.pending_sync[member.member_id] = None
            self.timer.schedule(
                out,
                self.timer.sync_key(group.group_id),
                group.rebalance_timeout_ms(),
                ExpirePendingSync(group.group_id, group.generation_id),
            )
        else:
            group.protocol_name = None
            group.subscribed_topics = None
            self._transition(out, group, EMPTY, "join phase completed with no members")
            group.pending_sync.clear()
            self.writer.append(out, [self._group_record(group, {})], group.group_id)

    def _assign_on_the_server(self, out: Step, group: ClassicGroup) -> None:
        """Seed 004's design 2, the 0.9 rewrite's first proposal (never in Kafka): the coordinator
        runs the broker's strategy on every member's subscription as the join phase completes,
        stores the result as the SyncGroup path would (the group record), answers each parked
        JoinGroup with its member's partitions and goes Stable: no leader assignment, no
        SyncGroup. A failed write answers the joins with the error and rebalances again, as
        the leader's SyncGroup does on a failed write."""
        assignor = self.config.server_assignor
        assert assignor is not None
        protocol = group.protocol_name
        subscriptions = {m.member_id: m.metadata_for(protocol) for m in group.iter_members()}
        computed = assignor(group.group_id, subscriptions)
        full = {mid: computed.get(mid, b"") for mid in subscriptions}
        out.event(
            "server_assignment_computed",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            generation_id=group.generation_id,
            members=len(full),
        )
        error = self.writer.append(out, [self._group_record(group, full)], group.group_id)
        if error != NO_ERROR:
            mapped = append_error_to_response_error(error)
            for member in group.iter_members():
                if member.join_waiter is not None:
                    waiter, member.join_waiter = member.join_waiter, None
                    respond(
                        out,
                        self.node,
                        waiter,
                        JoinGroupResponse(mapped, member_id=member.member_id),
                        group.group_id,
                        member.member_id,
                    )
            self._maybe_prepare_rebalance_or_complete_join(
                out, group, f"error {mapped.name} storing the assignment"
            )
            return
        for member in group.iter_members():
            member.assignment = full[member.member_id]
            if member.join_waiter is not None:
                waiter, member.join_waiter = member.join_waiter, None
                self._answer_current_generation(
                    out, waiter, group, member.member_id, (), member.assignment
                )
            self.schedule_heartbeat(out, group, member.member_id, member.session_timeout_ms)
            member.is_new = False
        self._transition(out, group, STABLE, "the coordinator computed the assignment")

    def subscribed_topics(self, group: ClassicGroup) -> frozenset[str] | None:
        if group.protocol_type != CONSUMER_PROTOCOL_TYPE or not group.members:
            return None
        topics: set[str] = set()
        for member in group.members.values():
            parsed = parse_subscribed_topics(member.metadata_for(group.protocol_name))
            if parsed is None:
                return None
            topics |= parsed
        return frozenset(topics)

    def _remove_sync_expiration(self, out: Step, group: ClassicGroup) -> None:
        group.pending_sync.clear()
        self.timer.cancel(out, self.timer.sync_key(group.group_id))

    def _reset_and_propagate(self, out: Step, group: ClassicGroup, error: Errors) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate(out, group, error)

    def _propagate(self, out: Step, group: ClassicGroup, error: Errors) -> None:
        """propagateAssignment: answer every parked SyncGroup, re-arm the sessions answered."""
        for member in group.iter_members():
            if member.sync_waiter is None:
                continue
            waiter, member.sync_waiter = member.sync_waiter, None
            if error == NO_ERROR:
                response = SyncGroupResponse(
                    NO_ERROR, group.protocol_type, group.protocol_name, member.assignment
                )
            else:
                response = SyncGroupResponse(error)
            respond(
                out,
                self.node,
                waiter,
                response,
                group.group_id,
                member.member_id,
                group.generation_id,
            )
            self.schedule_heartbeat(out, group, member.member_id, member.session_timeout_ms)

    def _member_removed(self, out: Step, group: ClassicGroup, member_id: str, reason: str) -> None:
        out.event(
            "member_removed",
            t_ms=out.now,
            node=self.node,
            group_id=group.group_id,
            member_id=member_id,
            generation_id=group.generation_id,
            reason=reason,
        )

    def _remove_member(self, out: Step, group: ClassicGroup, member: Member, reason: str) -> None:
        """Answer a parked JoinGroup UNKNOWN_MEMBER_ID, then remove (leader re-picked)."""
        if member.join_waiter is not None:
            waiter, member.join_waiter = member.join_waiter, None
            respond(
                out,
                self.node,
                waiter,
                JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=""),
                group.group_id,
                member.member_id,
            )
        if member.sync_waiter is not None:
            # Kafka drops the parked SyncGroup of a removed member: it is never answered.
            out.event(
                "sync_dropped",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=member.member_id,
                correlation_id=member.sync_waiter.correlation_id,
                reason=reason,
            )
            member.sync_waiter = None
        before = group.leader_id
        group.remove(member.member_id)
        self._member_removed(out, group, member.member_id, reason)
        self._note_leader(out, group, before, "leader removed")

    # --- expireClassicGroupMemberHeartbeat / expirePendingSync ------------------------------------

    def _expire_heartbeat(self, out: Step, group: ClassicGroup, member_id: str) -> None:
        if group.is_in(DEAD):
            return
        if member_id in group.pending_members:
            group.remove_pending(member_id)
            out.event(
                "pending_member_expired",
                t_ms=out.now,
                node=self.node,
                group_id=group.group_id,
                member_id=member_id,
            )
            if group.is_in(PREPARING_REBALANCE) and group.has_all_members_joined():
                self._complete_join(out, group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        self._remove_member(out, group, member, "session timeout expired")
        if group.is_in(STABLE, COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(
                out, group, f"member {member_id} expired"
            )
        elif group.is_in(PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join(out, group)

    def _expire_pending_sync(self, out: Step, group: ClassicGroup, generation_id: int) -> None:
        if generation_id != group.generation_id or not group.is_in(COMPLETING_REBALANCE, STABLE):
            return
        if not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            member = group.members.get(member_id)
            if member is not None:
                self._remove_member(out, group, member, "no SyncGroup before the rebalance timeout")
            self.timer.cancel(out, self.timer.heartbeat_key(group.group_id, member_id))
        group.pending_sync.clear()
        self.prepare_rebalance(out, group, "members expired waiting for SyncGroup")

    # --- SyncGroup (classicGroupSync) -------------------------------------------------------------

    def classic_group_sync(self, out: Step, waiter: Parked, req: SyncGroupRequest) -> None:
        group = self.groups.get(req.group_id)

        def fail(error: Errors) -> None:
            respond(
                out,
                self.node,
                waiter,
                SyncGroupResponse(error),
                req.group_id,
                req.member_id,
                req.generation_id,
            )

        if group is None:
            return fail(Errors.UNKNOWN_MEMBER_ID)
        state = group.model.state  # nothing below changes it before the branch on it
        if state == EMPTY:
            return fail(Errors.UNKNOWN_MEMBER_ID)
        if state == DEAD:
            return fail(Errors.COORDINATOR_NOT_AVAILABLE)
        error = self.validate_member(group, req.member_id, req.group_instance_id)
        if error != NO_ERROR:
            return fail(error)
        if req.generation_id != group.generation_id:
            return fail(Errors.ILLEGAL_GENERATION)
        if _protocol_inconsistent(req.protocol_type, group.protocol_type):
            return fail(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if _protocol_inconsistent(req.protocol_name, group.protocol_name):
            return fail(Errors.INCONSISTENT_GROUP_PROTOCOL)
        if state == PREPARING_REBALANCE:
            return fail(Errors.REBALANCE_IN_PROGRESS)
        member = group.members[req.member_id]
        if state == COMPLETING_REBALANCE:
            if member.sync_waiter is not None:
                # ClassicGroupMember.setAwaitingSyncFuture overwrites: the first is never answered.
                out.event(
                    "sync_dropped",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group.group_id,
                    member_id=member.member_id,
                    correlation_id=member.sync_waiter.correlation_id,
                    reason="superseded by a newer SyncGroup",
                )
            member.sync_waiter = waiter
            self._remove_pending_sync(out, group, req.member_id)
            if group.is_leader(req.member_id):
                assignment = {a.member_id: a.assignment for a in req.assignments}
                full = {
                    m.member_id: assignment.get(m.member_id, b"") for m in group.members.values()
                }
                missing = [mid for mid in full if mid not in assignment]
                if missing:
                    out.event(
                        "assignment_missing",
                        t_ms=out.now,
                        node=self.node,
                        group_id=group.group_id,
                        generation_id=group.generation_id,
                        member_ids=sorted(missing),
                    )
                error = self.writer.append(out, [self._group_record(group, full)], group.group_id)
                if error != NO_ERROR:
                    mapped = append_error_to_response_error(error)
                    self._reset_and_propagate(out, group, mapped)
                    self._maybe_prepare_rebalance_or_complete_join(
                        out, group, f"error {mapped.name} storing the assignment"
                    )
                else:
                    for m in group.members.values():
                        m.assignment = full[m.member_id]
                    self._propagate(out, group, NO_ERROR)
                    self._transition(out, group, STABLE, "the leader's assignment was persisted")
        else:  # Stable: hand out the stored assignment
            self._remove_pending_sync(out, group, req.member_id)
            respond(
                out,
                self.node,
                waiter,
                SyncGroupResponse(
                    NO_ERROR, group.protocol_type, group.protocol_name, member.assignment
                ),
                req.group_id,
                req.member_id,
                req.generation_id,
            )

    def _remove_pending_sync(self, out: Step, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync.pop(member_id, None)
        if not group.pending_sync:
            self.timer.cancel(out, self.timer.sync_key(group.group_id))

    # --- Heartbeat (classicGroupHeartbeat) --------------------------------------------------------

    def classic_group_heartbeat(self, out: Step, waiter: Parked, req: HeartbeatRequest) -> None:
        group = self.groups.get(req.group_id)
        error = NO_ERROR
        if group is None:
            error = Errors.UNKNOWN_MEMBER_ID
        elif (state := group.model.state) == DEAD:
            error = Errors.COORDINATOR_NOT_AVAILABLE
        else:
            error = self.validate_member(group, req.member_id, req.group_instance_id)
            if error == NO_ERROR and req.generation_id != group.generation_id:
                error = Errors.ILLEGAL_GENERATION
            if error == NO_ERROR:
                if state == EMPTY:
                    error = Errors.UNKNOWN_MEMBER_ID
                else:
                    member = group.members[req.member_id]
                    self.schedule_heartbeat(out, group, member.member_id, member.session_timeout_ms)
                    if state == PREPARING_REBALANCE:
                        error = Errors.REBALANCE_IN_PROGRESS
        respond(
            out,
            self.node,
            waiter,
            HeartbeatResponse(error),
            req.group_id,
            req.member_id,
            req.generation_id,
        )

    # --- LeaveGroup (classicGroupLeave) -----------------------------------------------------------

    def classic_group_leave(self, out: Step, waiter: Parked, req: LeaveGroupRequest) -> None:
        group = self.groups.get(req.group_id)
        if group is None:
            unknown = tuple(
                LeaveGroupResponseMember(m.member_id, m.group_instance_id, Errors.UNKNOWN_MEMBER_ID)
                for m in req.members
            )
            return self.leave_reply(out, waiter, req, NO_ERROR, unknown)
        if group.is_in(DEAD):
            return self.leave_reply(out, waiter, req, Errors.COORDINATOR_NOT_AVAILABLE, ())
        results: list[LeaveGroupResponseMember] = []
        left = []
        for identity in req.members:
            error = NO_ERROR
            if identity.member_id == "":
                target = (
                    group.static_members.get(identity.group_instance_id)
                    if identity.group_instance_id is not None
                    else None
                )
                if target is None:
                    error = Errors.UNKNOWN_MEMBER_ID
                else:
                    self._leave_member(out, group, target, identity.reason)
            elif identity.member_id in group.pending_members:
                group.remove_pending(identity.member_id)
                self.timer.cancel(out, self.timer.heartbeat_key(group.group_id, identity.member_id))
                out.event(
                    "pending_member_left",
                    t_ms=out.now,
                    node=self.node,
                    group_id=group.group_id,
                    member_id=identity.member_id,
                )
            else:
                error = self.validate_member(group, identity.member_id, identity.group_instance_id)
                if error == NO_ERROR:
                    self._leave_member(out, group, identity.member_id, identity.reason)
            if error == NO_ERROR:
                left.append(identity.member_id)
            results.append(
                LeaveGroupResponseMember(identity.member_id, identity.group_instance_id, error)
            )
        if left:
            reason = f"LeaveGroup for {left}"
            if group.is_in(STABLE, COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join(out, group, reason)
            elif group.is_in(PREPARING_REBALANCE):
                self._maybe_complete_join_phase(out, group)
        if out.append_error != NO_ERROR:
            # The leave's write failed, so the operation fails as a whole: the service answers
            # with the mapped error and no member list (GroupCoordinatorService.leaveGroup,
            # handleOperationException). The in-memory changes stay, as in Kafka's ClassicGroup.
            error = operation_error_to_response_error(out.append_error)
            return self.leave_reply(out, waiter, req, error, ())
        self.leave_reply(out, waiter, req, NO_ERROR, tuple(results))

    def _leave_member(
        self, out: Step, group: ClassicGroup, member_id: str, reason: str | None
    ) -> None:
        member = group.members[member_id]
        self._remove_member(out, group, member, f"LeaveGroup ({reason or 'not provided'})")
        self.timer.cancel(out, self.timer.heartbeat_key(group.group_id, member_id))

    def leave_reply(
        self,
        out: Step,
        waiter: Parked,
        req: LeaveGroupRequest,
        error: Errors,
        results: tuple[LeaveGroupResponseMember, ...],
    ) -> None:
        if req.api_version < 3 and error == NO_ERROR:
            # v0-2 carry one member; its error is lifted to the top level, no member list.
            error = results[0].error_code if results else NO_ERROR
            results = ()
        member_id = req.members[0].member_id if len(req.members) == 1 else None
        respond(out, self.node, waiter, LeaveGroupResponse(error, results), req.group_id, member_id)

    def list_groups(self, states_filter: tuple[str, ...]) -> list[ListedGroup]:
        """GroupMetadataManager.listGroups: each state name is lower-cased and trimmed first;
        the groups in the order of Kafka's TimelineHashMap of groups (timeline_order)."""
        wanted = {s.lower().strip(_JAVA_TRIMMED) for s in states_filter}
        out = []
        for gid in iteration_order(self.groups, capacity_for(self.groups_high_water)):
            group = self.groups[gid]
            if wanted and group.state.lower() not in wanted:
                continue
            out.append(ListedGroup(gid, group.protocol_type or "", group.state))
        return out

    def describe_group(self, group_id: str) -> DescribedGroup:
        """GroupMetadataManager.describeGroups for one group.

        Member metadata and the protocol are only shown in Stable; each member's current
        assignment is shown in every state (ClassicGroupMember.describeNoMetadata sets it too).
        """
        group = self.groups.get(group_id)
        if group is None:
            return DescribedGroup(NO_ERROR, group_id, group_state=DEAD)
        stable = group.is_in(STABLE)
        members = tuple(
            DescribedGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata_for(group.protocol_name) if stable else b"",
                member_assignment=m.assignment,
            )
            for m in group.iter_members()
        )
        return DescribedGroup(
            NO_ERROR,
            group_id,
            group_state=group.state,
            protocol_type=group.protocol_type or "",
            protocol_data=(group.protocol_name or "") if stable else "",
            members=members,
        )

    # --- load and unload (GroupMetadataManager.replay / onLoaded / onUnloaded) -------------------

    def replay_group(self, group_id: str, value: GroupMetadataValue) -> None:
        state = STABLE if value.members else EMPTY
        group = ClassicGroup(
            group_id=group_id,
            created_ms=value.current_state_timestamp,
            initial_state=state,
            generation_id=value.generation,
            protocol_type=value.protocol_type or None,
            protocol_name=value.protocol,
        )
        for m in value.members:
            group.add(
                Member(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    # GroupMetadataManager.replay: exactly -1 (a record written before rebalance
                    # timeouts existed) means the session timeout; any other value loads as is.
                    rebalance_timeout_ms=m.session_timeout
                    if m.rebalance_timeout == -1
                    else m.rebalance_timeout,
                    session_timeout_ms=m.session_timeout,
                    protocol_type=value.protocol_type,
                    protocols=((value.protocol or "", m.subscription),),
                    assignment=m.assignment,
                )
            )
        group.protocol_type = value.protocol_type or None
        group.leader_id = value.leader
        group.state_timestamp_ms = value.current_state_timestamp
        group.subscribed_topics = self.subscribed_topics(group)
        old = self.groups.get(group_id)
        if old is not None:
            detach(old.model)
        self.groups[group_id] = group

    def replay_simple_group(self, group_id: str, now_ms: int) -> None:
        """Offsets without group metadata: an Empty "simple" group (no event: it is a replay)."""
        if group_id not in self.groups:
            self.groups[group_id] = ClassicGroup(group_id=group_id, created_ms=now_ms)

    def on_loaded(self, out: Step) -> None:
        """onLoaded: fresh session timers for every member; over-capacity groups rebalance."""
        for group_id in sorted(self.groups):
            group = self.groups[group_id]
            for member in group.iter_members():
                self.schedule_heartbeat(out, group, member.member_id, member.session_timeout_ms)
            if len(group.members) > self.config.group_max_size:
                self.prepare_rebalance(out, group, "loaded group is over group.max.size")

    def on_unloaded(self, out: Step) -> None:
        """onUnloaded: every group goes Dead; parked JoinGroups (PreparingRebalance) and
        SyncGroups (CompletingRebalance, Stable) are answered NOT_COORDINATOR."""
        for group_id in sorted(self.groups):
            group = self.groups[group_id]
            before = group.state
            self._transition(out, group, DEAD, "partition unloaded")
            for member in group.iter_members():
                if before == PREPARING_REBALANCE and member.join_waiter is not None:
                    waiter, member.join_waiter = member.join_waiter, None
                    respond(
                        out,
                        self.node,
                        waiter,
                        JoinGroupResponse(Errors.NOT_COORDINATOR, member_id=member.member_id),
                        group_id,
                        member.member_id,
                    )
                if before in (COMPLETING_REBALANCE, STABLE) and member.sync_waiter is not None:
                    waiter, member.sync_waiter = member.sync_waiter, None
                    respond(
                        out,
                        self.node,
                        waiter,
                        SyncGroupResponse(Errors.NOT_COORDINATOR),
                        group_id,
                        member.member_id,
                    )
            detach(group.model)


def _protocol_inconsistent(requested: str | None, current: str | None) -> bool:
    """GroupMetadataManager.isProtocolInconsistent: only when both are set and differ, so a
    SyncGroup naming a protocol before the group has one (generation 0) is consistent."""
    return requested is not None and current is not None and requested != current
