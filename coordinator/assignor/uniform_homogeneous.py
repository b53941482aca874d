"""Kafka's UniformHomogeneousAssignmentBuilder (1eb7644): every member subscribes to the same
topics. Balance first (sizes differ by at most one), then stickiness.

1. Topics in the order of ``new HashSet<>(first member's topic ids)``; their partitions that no
   member currently owns (``GroupSpec.isPartitionAssigned``) become the unassigned list, topic
   by topic, ascending.
2. Members in ``GroupSpec.memberIds()`` order get quota ``total / members``, the first
   ``total % members`` of them one more. Each keeps its current partitions in its map's order
   until the quota is reached; the rest (and unsubscribed topics) are revoked, revoked partitions
   appended to the unassigned list in the order they are met.
3. Members still below quota take the next unassigned partitions, in the order they were met.

Partitions move as runs (``range`` slices of the unassigned list), never one by one, and maps are
copied only when changed, as Kafka does; sets keep Java's order (see ``sets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
)
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import IntHashSet, TopicMap, copy_capacity, java_runs
from coordinator.assignor.spec import GroupSpecImpl, MemberAssignmentImpl
from coordinator.kafka_uuid import Uuid

Runs = list[tuple[Uuid, range]]


def unassigned_runs(
    topic_id: Uuid, num_partitions: int, group_spec: GroupSpec
) -> list[tuple[Uuid, range]]:
    """The topic's partitions no member owns, ascending, as runs."""
    if isinstance(group_spec, GroupSpecImpl):
        owned = group_spec.inverted_member_assignment.get(topic_id)
        taken = sorted(p for p in owned if 0 <= p < num_partitions) if owned else []
    else:
        taken = [p for p in range(num_partitions) if group_spec.is_partition_assigned(topic_id, p)]
    runs = []
    start = 0
    for p in taken:
        if p > start:
            runs.append((topic_id, range(start, p)))
        start = p + 1
    if start < num_partitions:
        runs.append((topic_id, range(start, num_partitions)))
    return runs


def split_runs(runs: list[range], keep: int) -> tuple[list[range], list[range]]:
    """The first ``keep`` elements of ``runs`` and the rest, as runs."""
    kept: list[range] = []
    rest: list[range] = []
    for run in runs:
        n = len(run)
        if keep >= n:
            kept.append(run)
            keep -= n
        elif keep > 0:
            kept.append(run[:keep])
            rest.append(run[keep:])
            keep = 0
        else:
            rest.append(run)
    return kept, rest


def build_homogeneous(
    group_spec: GroupSpec, describer: SubscribedTopicDescriber
) -> GroupAssignment:
    member_ids = list(group_spec.member_ids())
    first = group_spec.member_subscription(member_ids[0]).subscribed_topic_ids
    if not first:
        return GroupAssignment({})
    subscribed = frozenset(first)
    topic_order = uuid_order(first, copy_capacity(len(first)))

    unassigned: Runs = []
    total = 0
    for topic_id in topic_order:
        count = describer.num_partitions(topic_id)
        if count == -1:
            raise PartitionAssignorException(
                f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
            )
        unassigned.extend(unassigned_runs(topic_id, count, group_spec))
        total += count

    min_quota, extra = divmod(total, len(member_ids))

    # maybeRevokePartitions
    targets: dict[str, Mapping[Uuid, AbstractSet[int]]] = {}
    copied: set[str] = set()
    unfilled: list[tuple[str, int]] = []
    for member_id in member_ids:
        old = group_spec.member_assignment(member_id).partitions
        quota = min_quota
        if extra > 0:
            quota += 1
            extra -= 1
        new: TopicMap | None = None
        for topic_id, partitions in old.items():
            if topic_id in subscribed:
                size = len(partitions)
                if size <= quota:
                    quota -= size
                    continue
                if new is None:
                    new = TopicMap.deep_copy(old)
                kept, revoked = split_runs(java_runs(partitions), quota)
                quota = 0
                if kept:
                    trimmed = IntHashSet(copy_capacity(size))
                    trimmed.add_runs(kept)
                    new.put(topic_id, trimmed)
                else:
                    new.remove(topic_id)
                unassigned.extend((topic_id, run) for run in revoked)
            else:
                if new is None:
                    new = TopicMap.deep_copy(old)
                new.remove(topic_id)
        if quota > 0:
            unfilled.append((member_id, quota))
        if new is None:
            targets[member_id] = old
        else:
            targets[member_id] = new
            copied.add(member_id)

    # assignRemainingPartitions
    position = 0  # index into `unassigned`
    offset = 0  # partitions of unassigned[position] already handed out
    for member_id, remaining in unfilled:
        target = targets[member_id]
        if member_id in copied:
            assert isinstance(target, TopicMap)
            topic_map = target
        else:
            topic_map = targets[member_id] = TopicMap.deep_copy(target)
        while remaining > 0 and position < len(unassigned):
            topic_id, run = unassigned[position]
            take = min(remaining, len(run) - offset)
            chunk = run[offset : offset + take]
            topic_map.compute_if_absent(topic_id, 16).add_run(chunk)
            if take > 1:
                topic_map.touch()  # the next computeIfAbsent call's resize check
            remaining -= take
            offset += take
            if offset == len(run):
                position += 1
                offset = 0
    if position < len(unassigned):
        raise PartitionAssignorException("Partitions were left unassigned")

    members: dict[str, MemberAssignment] = {m: MemberAssignmentImpl(targets[m]) for m in member_ids}
    return GroupAssignment(members)
