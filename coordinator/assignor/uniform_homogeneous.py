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

The result's member maps are built on first read (:class:`~coordinator.assignor.lazy.LazyMembers`): assigning costs a pass over the
members that have a current assignment, and each unfilled member's share is a stretch of the
unassigned list found from the running sum of the quotas left.

A map this builder returned carries ``DeferredTopicMap.summary`` (its size and a superset of its
topics); next round a member whose summary fits its quota and whose topics are all still
subscribed keeps its map without a walk, so an incremental round costs one attribute read per
member plus a walk of the few that give partitions up. A topic's unassigned partitions are the
difference of a cached ``{0..n-1}`` with its owners (empty when every partition is owned).

Partitions move as runs (``range`` slices of the unassigned list), never one by one; a changed
member map is a :class:`~coordinator.assignor.sets.DeferredTopicMap` (Kafka's deep copy and its
``computeIfAbsent``/``add`` calls, replayed on first read), an unchanged one is the input map
itself, as in Kafka; sets keep Java's order (see ``sets``). A read of the whole result builds
the members whose map starts empty (a first assignment, a joining member) in one batch
(:func:`~coordinator.assignor.bulk.build_fresh_maps`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import numpy as np

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
)
from coordinator.assignor.bulk import (
    SMALL_BATCH,
    build_fresh_maps,
    empty_maps,
    uuid_spread_hashes,
)
from coordinator.assignor.lazy import LazyMembers
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import (
    AssignmentMap,
    DeferredTopicMap,
    IntHashSet,
    TopicMap,
    copy_capacity,
    java_runs,
)
from coordinator.assignor.spec import GroupSpecImpl, MemberAssignmentImpl, member_assignments
from coordinator.kafka_uuid import Uuid

Runs = list[tuple[Uuid, range]]


@functools.lru_cache(maxsize=64)
def all_partitions(num_partitions: int) -> frozenset[int]:
    """``{0, ..., num_partitions - 1}``, built once per partition count."""
    return frozenset(range(num_partitions))


def unassigned_runs(
    topic_id: Uuid, num_partitions: int, group_spec: GroupSpec
) -> list[tuple[Uuid, range]]:
    """The topic's partitions no member owns (``!isPartitionAssigned``), ascending, as runs."""
    if isinstance(group_spec, GroupSpecImpl):
        owned = group_spec.inverted_member_assignment.get(topic_id)
        if not owned:
            return [(topic_id, range(num_partitions))] if num_partitions else []
        missing = all_partitions(num_partitions).difference(owned)  # set algebra in C
        if not missing:
            return []
        free = sorted(missing)
    else:
        free = [
            p for p in range(num_partitions) if not group_spec.is_partition_assigned(topic_id, p)
        ]
    runs: list[tuple[Uuid, range]] = []
    for p in free:
        if runs and runs[-1][1].stop == p:
            runs[-1] = (topic_id, range(runs[-1][1].start, p + 1))
        else:
            runs.append((topic_id, range(p, p + 1)))
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
    count = len(member_ids)

    # maybeRevokePartitions. Every member takes one of the `extra` partitions in turn, so
    # member i's quota is min_quota + (i < extra); members without a current assignment keep
    # their whole quota and are not visited.
    if isinstance(group_spec, GroupSpecImpl):
        specs = group_spec.members
        olds = [spec.partitions for spec in specs.values()]  # member_ids is specs' key order
    else:
        olds = [group_spec.member_assignment(m).partitions for m in member_ids]
    remaining = [min_quota + 1] * extra + [min_quota] * (count - extra)
    quotas = list(remaining)
    targets: list[Mapping[Uuid, AbstractSet[int]]] = list(olds)
    changed = [False] * count
    last_topics: frozenset[Uuid] | None = None  # summaries share a few topic sets: check once
    inside = False
    for index, old in enumerate(olds):
        # A map this builder returned knows its size and topics (DeferredTopicMap.summary): when
        # it fits the quota and every topic is still subscribed, the walk below would keep it
        # whole, so skip the walk.
        summary = getattr(old, "summary", None)
        if summary is not None:
            size, topics = summary
            if topics is not last_topics:
                last_topics = topics
                inside = topics <= subscribed
            if inside and size <= remaining[index]:
                remaining[index] -= size
                continue
        if not old:
            continue
        quota = remaining[index]
        new: DeferredTopicMap | None = None
        for topic_id, partitions in old.items():
            if topic_id in subscribed:
                size = len(partitions)
                if size <= quota:
                    quota -= size
                    continue
                if new is None:
                    new = DeferredTopicMap(old)
                kept, revoked = split_runs(java_runs(partitions), quota)
                quota = 0
                if kept:
                    # the deep copy's set (capacity of the whole set) minus the revoked tail
                    new.put_new(topic_id, copy_capacity(size), kept)
                else:
                    new.remove_topic(topic_id)
                unassigned.extend((topic_id, run) for run in revoked)
            else:
                if new is None:
                    new = DeferredTopicMap(old)
                new.remove_topic(topic_id)
        remaining[index] = quota
        if new is not None:
            targets[index] = new
            changed[index] = True

    # assignRemainingPartitions: unfilled members take consecutive stretches of the unassigned
    # list, in member order; member i's stretch starts at the sum of the earlier quotas left.
    handed = sum(remaining)
    available = sum(len(run) for _, run in unassigned)
    if handed < available:
        raise PartitionAssignorException("Partitions were left unassigned")
    starts = [0, *itertools.accumulate(len(r) for _, r in unassigned)]
    offsets: list[int] = []

    def make(i: int) -> MemberAssignment:
        """Member i's map: its revoke-phase map, deep-copied if still the caller's, plus one
        recorded computeIfAbsent/add step per piece of its stretch of the unassigned list."""
        target = targets[i]
        want = remaining[i]
        if changed[i]:
            assert isinstance(target, DeferredTopicMap)
            target.summary = (quotas[i] - want, subscribed)
        if want > 0:
            if not offsets:
                offsets.extend(itertools.accumulate(remaining, initial=0))
            begin = offsets[i]
            end = min(begin + want, available)
            position = bisect.bisect_right(starts, begin) - 1
            if not changed[i] and begin < end and not target:
                # A first assignment's usual member: one piece of one topic into an empty map,
                # built directly (TopicMap.single: the same map the replayed steps give).
                topic_id, run = unassigned[position]
                offset = begin - starts[position]
                take = end - begin
                if take <= len(run) - offset and run.step == 1 and run.stop <= 1 << 16:
                    single = TopicMap.single(
                        topic_id, IntHashSet.filled(16, run[offset : offset + take]), take
                    )
                    single.summary = (take, subscribed)
                    return MemberAssignmentImpl(single)
            deferred = target if changed[i] else DeferredTopicMap(target)
            assert isinstance(deferred, DeferredTopicMap)
            while begin < end:
                topic_id, run = unassigned[position]
                offset = begin - starts[position]
                take = min(end - begin, len(run) - offset)
                deferred.add(topic_id, 16, [run[offset : offset + take]], take)
                begin += take
                position += 1
            # kept + taken; every topic is subscribed: the revoke walk removed the others
            deferred.summary = (
                quotas[i] - want + min(want, max(available - offsets[i], 0)),
                subscribed,
            )
            target = deferred
        return MemberAssignmentImpl(target)

    def make_all() -> list[MemberAssignment]:
        """Every member's assignment: the members whose map starts empty and only takes a
        stretch of the unassigned list (a first assignment's members, a joining member) in one
        :func:`~coordinator.assignor.bulk.build_fresh_maps` batch, the members that keep their
        map as it is, and :func:`make` for the others (the revoke phase changed their map)."""
        result = member_assignments(targets)
        want = np.array(remaining, dtype=np.int64)
        fresh = (want > 0) & ~np.array(changed, dtype=bool)
        if fresh.any():
            fresh &= empty_maps(targets, changed)
        if not offsets:
            offsets.extend(itertools.accumulate(remaining, initial=0))
        fresh_members = np.flatnonzero(fresh)
        if len(fresh_members) < SMALL_BATCH:
            fresh_members = fresh_members[:0]  # a joining member or two: make() is cheaper
        pieces = _fresh_pieces(fresh_members, want, offsets, available, unassigned, starts)
        if pieces is not None:
            fresh_members, maps, sizes = pieces
            if len(maps):
                for built, size in zip(maps, sizes, strict=True):
                    built.summary = (size, subscribed)
                for i, assignment in zip(
                    fresh_members.tolist(), member_assignments(maps), strict=True
                ):
                    result[i] = assignment
        done = np.zeros(count, dtype=bool)
        done[fresh_members] = True
        others = np.flatnonzero(~done & ((want > 0) | np.array(changed, dtype=bool)))
        for i in others.tolist():
            result[i] = make(i)  # type: ignore[call-overload]
        return result  # type: ignore[return-value]

    return GroupAssignment(LazyMembers(member_ids, make, make_all))


def _fresh_pieces(
    members: np.ndarray,
    want: np.ndarray,
    offsets: list[int],
    available: int,
    unassigned: Runs,
    starts: list[int],
) -> tuple[np.ndarray, list[AssignmentMap], list[int]] | None:
    """The maps of ``members`` (empty maps, each taking its stretch ``[offsets[i], offsets[i] +
    want[i])`` of the unassigned list, cut at ``available``), built in one batch: (the members
    built, their maps, their sizes). A member whose stretch holds one topic twice (a topic's
    revoked partitions after its free ones) is left out, for :func:`make`."""
    if not len(members):
        return None
    topic_number: dict[int, int] = {}
    topic_ids: list[Uuid] = []
    run_topic = []
    for topic_id, _ in unassigned:
        t = topic_number.get(id(topic_id))
        if t is None:
            t = topic_number[id(topic_id)] = len(topic_ids)
            topic_ids.append(topic_id)
        run_topic.append(t)
    run_topics = np.array(run_topic, dtype=np.int64)
    run_first = np.array([r.start for _, r in unassigned], dtype=np.int64)
    run_step = np.array([r.step for _, r in unassigned], dtype=np.int64)
    run_starts = np.array(starts, dtype=np.int64)
    while True:
        begin = np.array(offsets, dtype=np.int64)[members]
        end = np.minimum(begin + want[members], available)
        end = np.maximum(end, begin)
        first_run = np.searchsorted(run_starts, begin, side="right") - 1
        last_run = np.searchsorted(run_starts, end - 1, side="right") - 1
        n_pieces = np.where(end > begin, last_run - first_run + 1, 0)
        total = int(n_pieces.sum())
        piece_member = np.repeat(np.arange(len(members), dtype=np.int64), n_pieces)
        piece_base = np.repeat(np.cumsum(n_pieces) - n_pieces, n_pieces)
        piece_run = np.repeat(first_run, n_pieces) + np.arange(total, dtype=np.int64) - piece_base
        piece_topic = run_topics[piece_run] if total else np.zeros(0, dtype=np.int64)
        if total > 1:
            same_member = piece_member[1:] == piece_member[:-1]
            if same_member.any():
                keys = np.sort(piece_member * len(topic_ids) + piece_topic)
                twice = np.unique(keys[1:][keys[1:] == keys[:-1]] // len(topic_ids))
                if len(twice):
                    keep = np.ones(len(members), dtype=bool)
                    keep[twice] = False
                    members = members[keep]
                    continue
        break
    if total:
        lo = np.maximum(np.repeat(begin, n_pieces), run_starts[piece_run])
        hi = np.minimum(np.repeat(end, n_pieces), run_starts[piece_run + 1])
        counts = hi - lo
        step = run_step[piece_run]
        first = run_first[piece_run] + (lo - run_starts[piece_run]) * step
        at = np.repeat(np.cumsum(counts) - counts, counts)
        partitions = np.repeat(first, counts) + (
            np.arange(int(counts.sum()), dtype=np.int64) - at
        ) * np.repeat(step, counts)
    else:
        counts = partitions = np.zeros(0, dtype=np.int64)
    maps = build_fresh_maps(
        piece_member,
        piece_topic,
        np.full(total, 16, dtype=np.int64),
        counts,
        partitions,
        len(members),
        topic_ids,
        uuid_spread_hashes(topic_ids),
    )
    return members, maps, (end - begin).tolist()
