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
subscribed keeps its map without a walk: the summaries are read and compared with the quotas in
a few C-level and numpy passes over all members, and only the few members that give partitions
up are walked in Python. A topic's unassigned partitions are the difference of a cached
``{0..n-1}`` with its owners (empty when every partition is owned), one ``map`` over the topics;
the subscription's topic order is computed once per subscription (:func:`subscription_of`).
A first assignment (every member's map ``EMPTY_PARTITIONS``, no owners) skips the summaries and
the differences.

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
import operator
from collections import deque
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from itertools import repeat
from types import MappingProxyType
from typing import NamedTuple, NoReturn

import numpy as np

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    PartitionAssignorException,
    SubscribedTopicDescriber,
    TopicPartitions,
)
from coordinator.assignor.bulk import (
    SMALL_BATCH,
    build_fresh_maps,
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
from coordinator.assignor.spec import (
    EMPTY_PARTITIONS,
    GroupSpecImpl,
    MemberAssignmentImpl,
    SubscribedTopicDescriberImpl,
)
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


class _Subscription(NamedTuple):
    """The first member's subscribed topic ids as the builder uses them: the ids in the order
    they were read (to recognise the same subscription), as a frozenset, and in the iteration
    order of ``new HashSet<>(ids)``."""

    ids: list[Uuid]
    subscribed: frozenset[Uuid]
    order: list[Uuid]


#: subscriptions seen lately, by the identity of the ids object (held, so the id stays its own)
#: and then by content; a hit is checked against the ids read now, so it never changes a result
_SEEN_BY_ID: dict[int, tuple[AbstractSet[Uuid], _Subscription]] = {}
_SEEN: dict[tuple[Uuid, ...], _Subscription] = {}
_SEEN_LIMIT = 64


def subscription_of(first: AbstractSet[Uuid]) -> _Subscription:
    """The :class:`_Subscription` of ``first``, computed once per subscription: the topic order
    sorts every topic id by its Java bucket, which a group pays on each build otherwise (the
    group's members share one ids object, see ``coordinator.target_assignment.TopicIds``)."""
    ids = list(first)
    seen = _SEEN_BY_ID.get(id(first))
    if seen is not None and seen[0] is first and seen[1].ids == ids:
        return seen[1]
    key = tuple(ids)
    made = _SEEN.get(key)
    if made is None or made.ids != ids:
        if len(_SEEN) >= _SEEN_LIMIT:
            _SEEN.clear()
        made = _SEEN[key] = _Subscription(
            ids, frozenset(ids), uuid_order(ids, copy_capacity(len(ids)))
        )
    if len(_SEEN_BY_ID) >= _SEEN_LIMIT:
        _SEEN_BY_ID.clear()
    _SEEN_BY_ID[id(first)] = (first, made)
    return made


def _unassigned(
    group_spec: GroupSpec, describer: SubscribedTopicDescriber, topic_order: list[Uuid]
) -> tuple[Runs, int]:
    """(The partitions no member owns, topic by topic in ``topic_order``, each ascending, as
    runs; the partition count of the topics). Kafka's ``!isPartitionAssigned`` per partition;
    with Kafka's own ``GroupSpecImpl`` and ``SubscribedTopicDescriberImpl`` one C-level pass
    per step over the topics (a set difference per topic), else through the interfaces.
    A group without owners (a first assignment) takes every topic whole without a difference,
    and none when the topics have no partition."""
    if not (
        isinstance(group_spec, GroupSpecImpl)
        and isinstance(describer, SubscribedTopicDescriberImpl)
    ):
        unassigned: Runs = []
        total = 0
        for topic_id in topic_order:
            count = describer.num_partitions(topic_id)
            if count == -1:
                _missing_topic(topic_id)
            unassigned.extend(unassigned_runs(topic_id, count, group_spec))
            total += count
        return unassigned, total
    metadata = list(map(describer.topic_metadata.get, topic_order))
    if not all(metadata):
        _missing_topic(topic_order[metadata.index(None)])
    counts = list(map(_num_partitions_of, metadata))
    total = sum(counts)
    if not total:  # every topic empty: nothing to hand out
        return [], 0
    inverted = group_spec.inverted_member_assignment
    if not inverted:  # nobody owns anything (a first assignment): every topic whole
        # (a topic without partitions adds no run: compress drops it)
        whole = zip(topic_order, map(range, counts), strict=True)
        return list(itertools.compress(whole, counts)), total
    owned = list(map(inverted.get, topic_order, repeat(_NOBODY)))
    missing = list(map(frozenset.difference, map(all_partitions, counts), owned))
    unassigned = []
    for i in itertools.compress(range(len(topic_order)), missing):
        topic_id = topic_order[i]
        free = missing[i]
        if len(free) == counts[i]:
            unassigned.append((topic_id, range(counts[i])))
            continue
        for p in sorted(free):
            if unassigned and unassigned[-1][1].stop == p and unassigned[-1][0] is topic_id:
                unassigned[-1] = (topic_id, range(unassigned[-1][1].start, p + 1))
            else:
                unassigned.append((topic_id, range(p, p + 1)))
    return unassigned, total


def _missing_topic(topic_id: Uuid) -> NoReturn:
    raise PartitionAssignorException(
        f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
    )


_NOBODY: Mapping[int, str] = MappingProxyType({})
_num_partitions_of = operator.attrgetter("num_partitions")
_partitions_of = operator.attrgetter("partitions")
_summary_size = operator.itemgetter(0)
_summary_topics = operator.itemgetter(1)
#: the size a map without a summary is taken to have: too big for any quota, so it is walked
_TOO_BIG = 1 << 62


def build_homogeneous(
    group_spec: GroupSpec, describer: SubscribedTopicDescriber
) -> GroupAssignment:
    member_ids = list(group_spec.member_ids())
    first = group_spec.member_subscription(member_ids[0]).subscribed_topic_ids
    if not first:
        return GroupAssignment({})
    subscription = subscription_of(first)
    subscribed = subscription.subscribed
    unassigned, total = _unassigned(group_spec, describer, subscription.order)

    min_quota, extra = divmod(total, len(member_ids))
    count = len(member_ids)

    # maybeRevokePartitions. Every member takes one of the `extra` partitions in turn, so
    # member i's quota is min_quota + (i < extra); members without a current assignment keep
    # their whole quota and are not visited.
    if isinstance(group_spec, GroupSpecImpl):
        specs = group_spec.members
        olds = list(map(_partitions_of, specs.values()))  # member_ids is specs' key order
    else:
        olds = [group_spec.member_assignment(m).partitions for m in member_ids]
    quota_array = np.full(count, min_quota, dtype=np.int64)
    quota_array[:extra] += 1
    targets: list[Mapping[Uuid, AbstractSet[int]]] = list(olds)
    changed_ids: list[int] = []
    if all(map(operator.is_, olds, repeat(EMPTY_PARTITIONS))):
        # A first assignment: nobody keeps anything; every member takes its whole quota.
        left = quota_array
        remaining = [min_quota + 1] * extra + [min_quota] * (count - extra)
    else:
        # A map this builder returned knows its size and topics (``summary``): when it fits the
        # quota and every topic is still subscribed, the walk below would keep it whole, so those
        # members are settled in a few array passes and only the others are walked.
        # (A map without one is taken as too big for any quota, with the subscribed topics: one
        # topic-set object for the whole list, usually, checked once.)
        no_summary = (_TOO_BIG, subscribed)
        summaries = list(map(getattr, olds, repeat("summary"), repeat(no_summary)))
        try:
            sizes = np.fromiter(map(_summary_size, summaries), np.int64, count)
        except TypeError:  # a TopicMap or DeferredTopicMap whose summary is None
            summaries = [no_summary if s is None else s for s in summaries]
            sizes = np.fromiter(map(_summary_size, summaries), np.int64, count)
        fits = sizes <= quota_array
        topics_of = list(map(_summary_topics, summaries))
        common = topics_of[0]
        # list.count compares by ==: a topic set equal to `common` is inside iff `common` is
        if topics_of.count(common) != count or not common <= subscribed:
            distinct = dict(zip(map(id, topics_of), topics_of, strict=True))
            outside = {key for key, topics in distinct.items() if not topics <= subscribed}
            if outside:
                fits &= ~np.fromiter(map(outside.__contains__, map(id, topics_of)), bool, count)
        left = quota_array - np.where(fits, sizes, 0)
        remaining = left.tolist()
        walk = np.flatnonzero(~fits).tolist()
        walked = list(itertools.compress(walk, map(bool, map(olds.__getitem__, walk))))
        for index in walked:
            old = olds[index]
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
                changed_ids.append(index)
        if walked:
            left[walked] = list(map(remaining.__getitem__, walked))
    changed = np.zeros(count, dtype=bool)
    changed[changed_ids] = True

    # assignRemainingPartitions: unfilled members take consecutive stretches of the unassigned
    # list, in member order; member i's stretch starts at the sum of the earlier quotas left.
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(left, out=offsets[1:])
    available = sum(len(run) for _, run in unassigned)
    if int(offsets[-1]) < available:
        raise PartitionAssignorException("Partitions were left unassigned")
    starts = [0, *itertools.accumulate(len(r) for _, r in unassigned)]

    def make_map(i: int) -> TopicPartitions:
        """Member i's map: its revoke-phase map, deep-copied if still the caller's, plus one
        recorded computeIfAbsent/add step per piece of its stretch of the unassigned list."""
        target = targets[i]
        want = remaining[i]
        quota = min_quota + (i < extra)
        if changed[i]:
            assert isinstance(target, DeferredTopicMap)
            target.summary = (quota - want, subscribed)
        if want > 0:
            begin = int(offsets[i])
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
                    return single
            deferred = target if changed[i] else DeferredTopicMap(target)
            assert isinstance(deferred, DeferredTopicMap)
            taken = max(end - begin, 0)
            while begin < end:
                topic_id, run = unassigned[position]
                offset = begin - starts[position]
                take = min(end - begin, len(run) - offset)
                deferred.add(topic_id, 16, [run[offset : offset + take]], take)
                begin += take
                position += 1
            # kept + taken; every topic is subscribed: the revoke walk removed the others
            deferred.summary = (quota - want + taken, subscribed)
            target = deferred
        return target

    def make_maps() -> list[TopicPartitions]:
        """Every member's map: the members whose map starts empty and only takes a stretch of
        the unassigned list (a first assignment's members) in one
        :func:`~coordinator.assignor.bulk.build_fresh_maps` batch, the members that keep their
        map as it is, and :func:`make_map` for the others (a joining member or two, the members
        whose map the revoke phase changed)."""
        maps: list[TopicPartitions] = list(targets)
        takers = left > 0
        fresh_members = np.flatnonzero(takers & ~changed)
        if len(fresh_members) >= SMALL_BATCH:  # below: make_map() is cheaper
            # only maps that start empty (a changed map is not asked: that would build it)
            empty = list(map(operator.not_, map(targets.__getitem__, fresh_members.tolist())))
            fresh_members = fresh_members[np.array(empty, dtype=bool)]
        else:
            fresh_members = fresh_members[:0]
        done = np.zeros(count, dtype=bool)
        pieces = _fresh_pieces(fresh_members, left, offsets, available, unassigned, starts)
        if pieces is not None:
            built_members, built, sizes = pieces
            # one summary tuple per distinct size, set on every map by C-level calls
            summary_of = {size: (size, subscribed) for size in set(sizes)}
            deque(map(setattr, built, repeat("summary"), map(summary_of.__getitem__, sizes)), 0)
            if len(built_members) == count:  # members ascending: every map is a fresh one
                maps[:] = built
            else:
                deque(map(maps.__setitem__, built_members.tolist(), built), 0)
            done[built_members] = True
        for i in np.flatnonzero(~done & (takers | changed)).tolist():
            maps[i] = make_map(i)
        return maps

    return GroupAssignment(
        LazyMembers(member_ids, lambda i: MemberAssignmentImpl(make_map(i)), make_maps=make_maps)
    )


def _fresh_pieces(
    members: np.ndarray,
    want: np.ndarray,
    offsets: np.ndarray,
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
        begin = offsets[members]
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
        step if total else None,
    )
    return members, maps, (end - begin).tolist()
