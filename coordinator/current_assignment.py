"""A member's next assignment on the way to its target: Kafka's
``modern/consumer/CurrentAssignmentBuilder`` at 1eb7644, as one pure function.

Per topic: assigned = current ∩ target; pending revocation = current − assigned; pending
assignment = target − assigned − the partitions another member still owns (unreleased: their
partition epoch is not -1). A member that still owns partitions to revoke stays at its epoch in
UNREVOKED_PARTITIONS; otherwise it moves to the target epoch with what it may take now, STABLE or
UNRELEASED_PARTITIONS (waiting for partitions another member has not released yet).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from coordinator.consumer_group import ConsumerGroupMember, MemberState, Partitions
from coordinator.errors import ApiError, Errors
from coordinator.kafka_uuid import Uuid

#: (topic id, partitions) the member says it owns (ConsumerGroupHeartbeat's TopicPartitions), or
#: None when the request did not carry them.
OwnedPartitions = Iterable[tuple[Uuid, Iterable[int]]] | None


def compute_current_assignment(
    member: ConsumerGroupMember,
    target_assignment_epoch: int,
    target_assignment: Partitions,
    current_partition_epoch: Callable[[Uuid, int], int],
    owned_topic_partitions: OwnedPartitions,
) -> ConsumerGroupMember:
    """CurrentAssignmentBuilder.build."""
    owned = None if owned_topic_partitions is None else list(owned_topic_partitions)
    state = member.state
    if state == MemberState.STABLE:
        if member.member_epoch != target_assignment_epoch:
            return _next(
                member,
                member.member_epoch,
                target_assignment_epoch,
                target_assignment,
                current_partition_epoch,
                owned,
            )
        return member
    if state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_revoked(owned, member.partitions_pending_revocation):
            return member
        return _next(
            member,
            member.member_epoch + 1,
            target_assignment_epoch,
            target_assignment,
            current_partition_epoch,
            owned,
        )
    if state == MemberState.UNRELEASED_PARTITIONS:
        return _next(
            member,
            member.member_epoch,
            target_assignment_epoch,
            target_assignment,
            current_partition_epoch,
            owned,
        )
    # UNKNOWN: a state a newer coordinator wrote; fence unless the member owns nothing
    if owned is None or owned:
        raise ApiError(
            Errors.FENCED_MEMBER_EPOCH,
            "The consumer group member is in a unknown state. "
            "The member must abandon all its partitions and rejoin.",
        )
    return _next(
        member,
        target_assignment_epoch,
        target_assignment_epoch,
        target_assignment,
        current_partition_epoch,
        owned,
    )


def _owns_revoked(
    owned: list[tuple[Uuid, Iterable[int]]] | None, pending: Mapping[Uuid, frozenset[int]]
) -> bool:
    """ownsRevokedPartitions: without owned partitions in the request, assume it still does."""
    if owned is None:
        return True
    for topic_id, partitions in owned:
        revoking = pending.get(topic_id)
        if revoking and any(p in revoking for p in partitions):
            return True
    return False


def _next(
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: Partitions,
    current_partition_epoch: Callable[[Uuid, int], int],
    owned: list[tuple[Uuid, Iterable[int]]] | None,
) -> ConsumerGroupMember:
    """computeNextAssignment."""
    current = member.assigned_partitions
    has_unreleased = False
    assigned: dict[Uuid, frozenset[int]] = {}
    revoking: dict[Uuid, frozenset[int]] = {}
    pending: dict[Uuid, frozenset[int]] = {}
    for topic_id in {*target, *current}:
        wanted = target.get(topic_id, frozenset())
        held = current.get(topic_id, frozenset())
        keep = held & wanted
        revoke = held - keep
        to_assign = wanted - keep
        free = frozenset(p for p in to_assign if current_partition_epoch(topic_id, p) == -1)
        if len(free) != len(to_assign):
            has_unreleased = True
        if keep:
            assigned[topic_id] = frozenset(keep)
        if revoke:
            revoking[topic_id] = frozenset(revoke)
        if free:
            pending[topic_id] = free
    if revoking and _owns_revoked(owned, revoking):
        return member.update_member_epoch(
            member_epoch,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=assigned,
            partitions_pending_revocation=revoking,
        )
    if pending:
        for topic_id, partitions in pending.items():
            assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
        return member.update_member_epoch(
            target_epoch,
            state=MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE,
            assigned_partitions=assigned,
            partitions_pending_revocation={},
        )
    return member.update_member_epoch(
        target_epoch,
        state=MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE,
        assigned_partitions=assigned,
        partitions_pending_revocation={},
    )
